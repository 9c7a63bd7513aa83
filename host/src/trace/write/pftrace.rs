// SPDX-License-Identifier: GPL-2.0-only
//! A Perfetto protobuf trace (`.pftrace`): the messages below are declared here with
//! Perfetto's field numbers (protos/perfetto/trace/trace.proto, trace_packet.proto,
//! ftrace/ftrace_event_bundle.proto, ftrace/ftrace_event.proto, ftrace/sched.proto,
//! ftrace/power.proto, ftrace/generic.proto, track_event/track_descriptor.proto,
//! track_event/counter_descriptor.proto, track_event/track_event.proto), only the
//! fields we write.
//!
//! Scheduling goes in as ftrace event bundles, one per CPU and chunk of events
//! (`sched_switch`, `sched_waking`, `sched_wakeup`, `sched_wakeup_new`, `cpu_frequency`,
//! `cpu_idle` typed, so Perfetto draws CPU tracks, thread states and frequency / idle
//! counters), LISA's events, `sched_migrate_task` and `cpu_idle_miss` as generic ftrace
//! events (name and fields). The PELT signals are counter tracks named as
//! sched-analyzer names them: `CPU%d util_avg`, `CPU%d util_est.enqueued`, and per task
//! `COMM-PID util_avg`, `COMM-PID util_est.enqueued`, `COMM-PID util_est.ewma`. The
//! `schedmath__` records stay in the `.txt` / `.dat` traces.

use std::collections::BTreeMap;
use std::io::{self, Write};

use prost::Message;

use crate::trace::record::{Kind, Rec, Trace, Val};

/// `Trace`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbTrace {
    /// `packet = 1`.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `TracePacket`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// `timestamp = 8` (ns, the trace clock).
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// `trusted_packet_sequence_id = 10`.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// `sequence_flags = 13` (1: incremental state cleared).
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// The `data` oneof.
    #[prost(oneof = "packet::Data", tags = "1, 11, 60")]
    pub data: Option<packet::Data>,
}

/// `TracePacket`'s oneof.
pub mod packet {
    /// `data`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Data {
        /// `ftrace_events = 1`.
        #[prost(message, tag = "1")]
        FtraceEvents(super::FtraceEventBundle),
        /// `track_event = 11`.
        #[prost(message, tag = "11")]
        TrackEvent(super::TrackEvent),
        /// `track_descriptor = 60`.
        #[prost(message, tag = "60")]
        TrackDescriptor(super::TrackDescriptor),
    }
}

/// `FtraceEventBundle`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEventBundle {
    /// `cpu = 1`.
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    /// `event = 2`.
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

/// `FtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEvent {
    /// `timestamp = 1`.
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// `pid = 2` (the current task).
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    /// The `event` oneof.
    #[prost(oneof = "ftrace::Event", tags = "4, 11, 13, 17, 20, 114, 327")]
    pub event: Option<ftrace::Event>,
}

/// `FtraceEvent`'s payloads.
pub mod ftrace {
    /// `event`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Event {
        /// `sched_switch = 4`.
        #[prost(message, tag = "4")]
        SchedSwitch(super::SchedSwitch),
        /// `cpu_frequency = 11`.
        #[prost(message, tag = "11")]
        CpuFrequency(super::CpuState),
        /// `cpu_idle = 13`.
        #[prost(message, tag = "13")]
        CpuIdle(super::CpuState),
        /// `sched_wakeup = 17`.
        #[prost(message, tag = "17")]
        SchedWakeup(super::SchedWakeup),
        /// `sched_waking = 20`.
        #[prost(message, tag = "20")]
        SchedWaking(super::SchedWakeup),
        /// `sched_wakeup_new = 114`.
        #[prost(message, tag = "114")]
        SchedWakeupNew(super::SchedWakeup),
        /// `generic = 327`.
        #[prost(message, tag = "327")]
        Generic(super::GenericFtraceEvent),
    }
}

/// `SchedSwitchFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedSwitch {
    /// `prev_comm = 1`.
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    /// `prev_pid = 2`.
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    /// `prev_prio = 3`.
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    /// `prev_state = 4`.
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    /// `next_comm = 5`.
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    /// `next_pid = 6`.
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    /// `next_prio = 7`.
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `SchedWakeupFtraceEvent` (and `SchedWaking…`, `SchedWakeupNew…`: same fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakeup {
    /// `comm = 1`.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// `pid = 2`.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// `prio = 3`.
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    /// `success = 4`.
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    /// `target_cpu = 5`.
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// `CpuFrequencyFtraceEvent` / `CpuIdleFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CpuState {
    /// `state = 1`.
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    /// `cpu_id = 2`.
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

/// `GenericFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericFtraceEvent {
    /// `event_name = 1`.
    #[prost(string, optional, tag = "1")]
    pub event_name: Option<String>,
    /// `field = 2`.
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<GenericField>,
}

/// `GenericFtraceEvent.Field`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericField {
    /// `name = 1`.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// The value.
    #[prost(oneof = "generic::Value", tags = "3, 4, 5")]
    pub value: Option<generic::Value>,
}

/// `GenericFtraceEvent.Field`'s value.
pub mod generic {
    /// `value`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// `str_value = 3`.
        #[prost(string, tag = "3")]
        Str(String),
        /// `int_value = 4`.
        #[prost(int64, tag = "4")]
        Int(i64),
        /// `uint_value = 5`.
        #[prost(uint64, tag = "5")]
        Uint(u64),
    }
}

/// `TrackDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// `uuid = 1`.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// `name = 2`.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// `counter = 8`: a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `CounterDescriptor` (all defaults: a plain counter).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {}

/// `TrackEvent` (counters only).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// `type = 9` (4: `TYPE_COUNTER`).
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// `track_uuid = 11`.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// `counter_value = 30`.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

/// Events per ftrace bundle.
const BUNDLE: usize = 4096;
/// The sequence of the counter packets.
const SEQ: u32 = 1;
const TYPE_COUNTER: i32 = 4;

/// The counter values an event sets: (track name, value).
fn counters(t: &Trace, r: &Rec) -> Vec<(String, i64)> {
    let task = |pid: i32| format!("{}-{pid}", t.comm(pid));
    let v = |x: u64| i64::try_from(x).unwrap_or(i64::MAX);
    match &r.kind {
        Kind::PeltCfs { cpu, path, avg } if path == "/" => {
            vec![(format!("CPU{cpu} util_avg"), v(avg.util))]
        }
        Kind::UtilEstCfs { cpu, enqueued, .. } => {
            vec![(format!("CPU{cpu} util_est.enqueued"), i64::from(*enqueued))]
        }
        Kind::PeltSe { pid, avg, .. } if *pid > 0 => {
            vec![(format!("{} util_avg", task(*pid)), v(avg.util))]
        }
        Kind::UtilEstSe {
            pid,
            enqueued,
            ewma,
            ..
        } => vec![
            (
                format!("{} util_est.enqueued", task(*pid)),
                i64::from(*enqueued),
            ),
            (format!("{} util_est.ewma", task(*pid)), i64::from(*ewma)),
        ],
        _ => Vec::new(),
    }
}

/// The ftrace event of a record (`None`: not exported).
fn ftrace_event(t: &Trace, r: &Rec) -> Option<ftrace::Event> {
    let comm = |pid: i32| Some(t.comm(pid).to_string());
    let wake = |pid: i32, prio: i32, target_cpu: u32| SchedWakeup {
        comm: comm(pid),
        pid: Some(pid),
        prio: Some(prio),
        success: Some(1),
        target_cpu: Some(target_cpu as i32),
    };
    Some(match &r.kind {
        Kind::Switch {
            prev_pid,
            prev_prio,
            prev_state,
            next_pid,
            next_prio,
        } => ftrace::Event::SchedSwitch(SchedSwitch {
            prev_comm: Some(t.switch_comm(*prev_pid, r.cpu).into_owned()),
            prev_pid: Some(*prev_pid),
            prev_prio: Some(*prev_prio),
            prev_state: Some(prev_state.bits() as i64),
            next_comm: Some(t.switch_comm(*next_pid, r.cpu).into_owned()),
            next_pid: Some(*next_pid),
            next_prio: Some(*next_prio),
        }),
        Kind::Wakeup {
            which,
            pid,
            prio,
            target_cpu,
        } => {
            let w = wake(*pid, *prio, *target_cpu);
            match which {
                0 => ftrace::Event::SchedWaking(w),
                1 => ftrace::Event::SchedWakeup(w),
                _ => ftrace::Event::SchedWakeupNew(w),
            }
        }
        Kind::Frequency { state, cpu_id } => ftrace::Event::CpuFrequency(CpuState {
            state: Some(*state),
            cpu_id: Some(*cpu_id),
        }),
        Kind::Idle { state, cpu_id } => ftrace::Event::CpuIdle(CpuState {
            state: Some(*state),
            cpu_id: Some(*cpu_id),
        }),
        Kind::PeltCall(_)
        | Kind::Sugov(_)
        | Kind::Placement(_)
        | Kind::IdleSelect(_)
        | Kind::OuChange(_) => return None,
        k => {
            let def = k.event_def();
            let field = def
                .fields
                .iter()
                .zip(k.values(t, r.cpu))
                .map(|(f, v)| GenericField {
                    name: Some(f.key.to_string()),
                    value: Some(match v {
                        Val::U(x) => generic::Value::Uint(x),
                        Val::I(x) => generic::Value::Int(x),
                        Val::S(s) => generic::Value::Str(s.into_owned()),
                    }),
                })
                .collect();
            ftrace::Event::Generic(GenericFtraceEvent {
                event_name: Some(def.name.to_string()),
                field,
            })
        }
    })
}

/// The whole trace as messages.
pub fn build(t: &Trace) -> PbTrace {
    let mut packet = Vec::new();
    // Ftrace bundles: per CPU, in chunks, each in time order.
    let mut per_cpu: Vec<Vec<FtraceEvent>> = vec![Vec::new(); t.nr_cpus];
    let flush = |cpu: usize, evs: &mut Vec<FtraceEvent>, packet: &mut Vec<TracePacket>| {
        if evs.is_empty() {
            return;
        }
        packet.push(TracePacket {
            timestamp: evs.first().and_then(|e| e.timestamp),
            trusted_packet_sequence_id: Some(2 + cpu as u32),
            sequence_flags: None,
            data: Some(packet::Data::FtraceEvents(FtraceEventBundle {
                cpu: Some(cpu as u32),
                event: std::mem::take(evs),
            })),
        });
    };
    // Counter tracks, by name: uuid.
    let mut tracks: BTreeMap<String, u64> = BTreeMap::new();
    let mut counter_packets = Vec::new();
    for r in &t.events {
        let cpu = r.cpu as usize;
        if let (Some(ev), Some(buf)) = (ftrace_event(t, r), per_cpu.get_mut(cpu)) {
            buf.push(FtraceEvent {
                timestamp: Some(r.ts),
                pid: Some(r.pid as u32),
                event: Some(ev),
            });
            if buf.len() >= BUNDLE {
                flush(cpu, buf, &mut packet);
            }
        }
        for (name, value) in counters(t, r) {
            let next = tracks.len() as u64 + 1;
            let uuid = *tracks.entry(name).or_insert(next);
            counter_packets.push(TracePacket {
                timestamp: Some(r.ts),
                trusted_packet_sequence_id: Some(SEQ),
                sequence_flags: None,
                data: Some(packet::Data::TrackEvent(TrackEvent {
                    r#type: Some(TYPE_COUNTER),
                    track_uuid: Some(uuid),
                    counter_value: Some(value),
                })),
            });
        }
    }
    for (cpu, buf) in per_cpu.iter_mut().enumerate() {
        flush(cpu, buf, &mut packet);
    }
    // The track descriptors first on the counters' sequence, then their values.
    let mut first = true;
    let mut by_uuid: Vec<(u64, String)> = tracks.into_iter().map(|(n, u)| (u, n)).collect();
    by_uuid.sort();
    for (uuid, name) in by_uuid {
        packet.push(TracePacket {
            timestamp: Some(0),
            trusted_packet_sequence_id: Some(SEQ),
            sequence_flags: std::mem::take(&mut first).then_some(1),
            data: Some(packet::Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(uuid),
                name: Some(name),
                counter: Some(CounterDescriptor {}),
            })),
        });
    }
    packet.extend(counter_packets);
    PbTrace { packet }
}

/// Writes the `.pftrace`.
pub fn write(t: &Trace, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&build(t).encode_to_vec())
}
