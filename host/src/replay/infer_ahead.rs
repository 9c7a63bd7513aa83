// SPDX-License-Identifier: GPL-2.0-only
//! Look-ahead in the trace for the inferred replay: a second reader of the same trace,
//! a bounded window ahead of the replay, that tells what a CPU writes next.
//!
//! The kernel writes some updates before the event that tells the replay why they happen:
//! the newly-idle balance's blocked walk ([`super::newidle`]) comes after a sleeper's
//! dequeue and before its `sched_switch` to idle. Only the trace's events are kept (not
//! the answer key), and only within [`WINDOW_NS`] of trace time past the replay's place,
//! so memory stays bounded whatever the trace's length.

use std::collections::VecDeque;
use std::io::BufRead;

use super::is_answer_key;
use crate::trace::event::Event;
use crate::trace::report::ReportReader;

/// How far ahead the reader goes (trace time): a dequeue's `sched_stat_runtime` can come
/// milliseconds before its `sched_switch` (6.1 `mixed-sleep-timer`, `tick` at 15.3749 s:
/// 2.0 ms, the guest's vCPU stalled between its clock read and its records).
pub const WINDOW_NS: u64 = 10_000_000;

/// What a CPU writes: the events the replay's timeline depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// `sched_switch` from `prev`, which sleeps (or exits), to the idle task.
    SleepToIdle(i32),
    /// Another `sched_switch`: (prev, next).
    Switch(i32, i32),
    /// `sched_switch` from `prev`, which sleeps (or exits), to another task: (prev, next).
    SleepToTask(i32, i32),
    /// `sched_stat_runtime` of this pid, with its `runtime=` (ns).
    Runtime(i32, u64),
    /// `cpu_idle` (entry or exit).
    Idle,
    /// `sched_migrate_task`: (pid, orig_cpu, dest_cpu).
    Migrate(i32, u32, u32),
    /// `softirq_entry` of SCHED_SOFTIRQ.
    SchedSoftirq,
    /// Any other sched event, timer or softirq event.
    Other,
}

/// One event ahead: (line, stamp, CPU that wrote it, what, for a `sched_switch` the pid
/// it switches out, a hash of the comm and the prio it prints).
type Ahead = (u64, u64, u32, Next, Option<(i32, u64, Option<i32>)>);

/// A comm's hash: the look-ahead keeps no strings.
fn comm_hash(comm: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    comm.hash(&mut h);
    h.finish()
}

/// The second reader and the events it read past the replay's place.
pub struct Lookahead {
    reader: ReportReader<Box<dyn BufRead>>,
    queue: VecDeque<Ahead>,
    /// The `cgroup_attach_task` events in [`Self::queue`] (there as [`Next::Other`]):
    /// (line, pid, destination path).
    attaches: VecDeque<(u64, i32, String)>,
    /// The stamp of the last record read (the window's edge).
    read_to: u64,
    end: bool,
}

impl Lookahead {
    /// A look-ahead over `input` (the same trace as the replay's).
    pub fn new(input: Box<dyn BufRead>, name: &str) -> Self {
        Lookahead {
            reader: ReportReader::new(input, name),
            queue: VecDeque::new(),
            attaches: VecDeque::new(),
            read_to: 0,
            end: false,
        }
    }

    /// What `cpu` writes next after line `line` (the replay's current record at `ts`),
    /// with its stamp, if within [`WINDOW_NS`].
    pub fn next_on(&mut self, line: u64, ts: u64, cpu: u32) -> Option<(u64, Next)> {
        self.nth_on(line, ts, cpu, 0)
    }

    /// The `n`-th event (from 0) `cpu` writes after line `line`, as [`Self::next_on`].
    pub fn nth_on(&mut self, line: u64, ts: u64, cpu: u32, n: usize) -> Option<(u64, Next)> {
        let horizon = self.from(line, ts);
        loop {
            if let Some(a) = self.queue.iter().filter(|a| a.2 == cpu).nth(n) {
                return (a.1 <= horizon).then_some((a.1, a.3));
            }
            if self.end || self.read_to > horizon {
                return None;
            }
            self.read_one(line);
        }
    }

    /// Whether `pid`, switched out next (after line `line`, at `ts`) with some comm, is
    /// switched out later within [`WINDOW_NS`] with another: it called exec() in between
    /// (begin_new_exec() sets the new comm).
    pub fn renamed(&mut self, line: u64, ts: u64, pid: i32) -> bool {
        let horizon = self.from(line, ts);
        while !self.end && self.read_to <= horizon {
            self.read_one(line);
        }
        let mut outs = self
            .queue
            .iter()
            .filter(|a| a.1 <= horizon)
            .filter_map(|a| a.4.filter(|&(p, ..)| p == pid).map(|(_, h, _)| h));
        let first = outs.next();
        first.is_some_and(|f| outs.any(|h| h != f))
    }

    /// The prio `pid` prints at its next switch-out after line `line` (at `ts`), within
    /// [`WINDOW_NS`].
    pub fn prio_at_switch_out(&mut self, line: u64, ts: u64, pid: i32) -> Option<i32> {
        let horizon = self.from(line, ts);
        loop {
            let out = self
                .queue
                .iter()
                .filter(|a| a.1 <= horizon)
                .find_map(|a| a.4.filter(|&(p, ..)| p == pid));
            if let Some((.., prio)) = out {
                return prio;
            }
            if self.end || self.read_to > horizon {
                return None;
            }
            self.read_one(line);
        }
    }

    /// If the next event `cpu` writes after line `line` (at `ts`), within [`WINDOW_NS`],
    /// is a `cgroup_attach_task`: its (pid, destination path).
    pub fn attach_next_on(&mut self, line: u64, ts: u64, cpu: u32) -> Option<(i32, &str)> {
        self.next_on(line, ts, cpu)?;
        if self.attaches.is_empty() {
            return None;
        }
        let next = self.queue.iter().find(|a| a.2 == cpu)?.0;
        let a = self.attaches.iter().find(|a| a.0 == next)?;
        Some((a.1, a.2.as_str()))
    }

    /// Drops what the replay has read (up to line `line`); returns the window's edge for
    /// the replay at `ts`.
    fn from(&mut self, line: u64, ts: u64) -> u64 {
        while self.queue.front().is_some_and(|a| a.0 <= line) {
            self.queue.pop_front();
        }
        while self.attaches.front().is_some_and(|a| a.0 <= line) {
            self.attaches.pop_front();
        }
        ts.saturating_add(WINDOW_NS)
    }

    /// Reads one record; a read error ends the look-ahead (the replay's reader reports it).
    fn read_one(&mut self, line: u64) {
        let rec = match self.reader.next_record() {
            Ok(Some(r)) => r,
            _ => {
                self.end = true;
                return;
            }
        };
        self.read_to = rec.ts_ns;
        if rec.line <= line {
            return;
        }
        let ev = Event::parse(&rec);
        let out = match ev {
            Ok(Event::Switch(ref s)) => Some((s.prev_pid, comm_hash(s.prev_comm), s.prev_prio)),
            _ => None,
        };
        let next = match ev {
            Ok(Event::Switch(s)) if !s.prev_runnable() && s.next_pid == 0 => {
                Next::SleepToIdle(s.prev_pid)
            }
            Ok(Event::Switch(s)) if !s.prev_runnable() && s.prev_pid != 0 => {
                Next::SleepToTask(s.prev_pid, s.next_pid)
            }
            Ok(Event::Switch(s)) => Next::Switch(s.prev_pid, s.next_pid),
            Ok(Event::CpuIdle { .. }) => Next::Idle,
            Ok(Event::StatRuntime { pid, runtime, .. }) => Next::Runtime(pid, runtime),
            Ok(Event::Migrate {
                pid,
                orig_cpu,
                dest_cpu,
                ..
            }) => Next::Migrate(pid, orig_cpu, dest_cpu),
            Ok(Event::Softirq {
                vec: crate::trace::event::SCHED_SOFTIRQ,
                exit: false,
            }) => Next::SchedSoftirq,
            Ok(Event::CgroupAttach { pid, path, .. }) => {
                self.attaches.push_back((rec.line, pid, path.to_string()));
                Next::Other
            }
            Ok(Event::Other | Event::PeltCall(_)) | Err(_) => return,
            Ok(ref e) if is_answer_key(e) => return,
            Ok(_) => Next::Other,
        };
        self.queue
            .push_back((rec.line, rec.ts_ns, rec.cpu, next, out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
cpus=2
             bgp-140   [001]    15.376009555: sched_stat_runtime:   comm=bgp pid=140 runtime=44500 [ns] vruntime=1869435083 [ns]
             cat-123   [000]    15.376010000: sched_stat_runtime:   comm=cat pid=123 runtime=1000 [ns] vruntime=1000 [ns]
             bgp-140   [001]    15.376037952: lisa__sched_pelt_cfs: cpu=1 path=/ load=112 util=730 update_time=15627552768 runnable=732
             bgp-140   [001]    15.376059464: sched_switch:         bgp:140 [120] S ==> swapper/1:0 [120]
             cat-123   [000]    15.376070000: sched_switch:         cat:123 [120] R ==> swapper/0:0 [120]
";

    fn ahead() -> Lookahead {
        Lookahead::new(Box::new(TRACE.as_bytes()), "t")
    }

    /// The next event a CPU writes, past the answer key and the other CPU's events.
    #[test]
    fn the_next_event_of_a_cpu_skips_the_answer_key_and_other_cpus() {
        let mut a = ahead();
        let sw = Some((15_376_059_464, Next::SleepToIdle(140)));
        assert_eq!(a.next_on(2, 15_376_009_555, 1), sw);
        assert_eq!(a.next_on(3, 15_376_010_000, 1), sw);
        // A preempted task's switch to idle is not a sleep.
        assert_eq!(
            a.next_on(3, 15_376_010_000, 0),
            Some((15_376_070_000, Next::Switch(123, 0)))
        );
        assert_eq!(
            a.next_on(1, 15_376_000_000, 0).map(|n| n.1),
            Some(Next::Switch(123, 0))
        );
        // The events after the next one.
        let mut b = ahead();
        let nth = |b: &mut Lookahead, n| b.nth_on(1, 15_376_000_000, 0, n).map(|n| n.1);
        assert_eq!(nth(&mut b, 0), Some(Next::Runtime(123, 1000)));
        assert_eq!(nth(&mut b, 1), Some(Next::Switch(123, 0)));
        assert_eq!(nth(&mut b, 2), None);
    }

    /// An exec() between two switch-outs: the second prints the new comm (6.12
    /// `periodic-50pct-16ms`, `sh` → `cat`, pid 171); a task that keeps its comm, or
    /// whose second switch-out is past the window, did not.
    #[test]
    fn a_new_comm_at_a_later_switch_out_is_an_exec() {
        const EXEC: &str = "\
cpus=2
             cat-171   [001]    16.933206588: sched_waking:         comm=migration/1 pid=26 prio=0 target_cpu=001
             cat-171   [001]    16.933242820: sched_switch:         sh:171 [120] R ==> migration/1:26 [0]
             hog-172   [000]    16.933300000: sched_switch:         hog:172 [120] R ==> sh:171 [120]
             cat-171   [000]    16.936000000: sched_switch:         cat:171 [120] S ==> hog:172 [120]
             hog-172   [000]    16.950000000: sched_switch:         hog2:172 [120] S ==> swapper/0:0 [120]
";
        let mut a = Lookahead::new(Box::new(EXEC.as_bytes()), "t");
        assert!(a.renamed(1, 16_933_206_588, 171));
        assert!(!a.renamed(1, 16_933_206_588, 172));
        assert!(!a.renamed(2, 16_933_242_820, 26));
    }

    /// The prio a task prints at its next switch-out: a nice change made while it ran
    /// (6.1 `hogs-nice`, `hog5` set to nice 5 before its first switch); none past the
    /// window.
    #[test]
    fn the_prio_of_the_next_switch_out() {
        const RENICE: &str = "\
cpus=2
            hog5-127   [000]    12.537712997: sched_stat_runtime:   comm=hog5 pid=127 runtime=642075 [ns] vruntime=4788603354 [ns]
            hog5-127   [000]    12.541059990: sched_switch:         hog5:127 [125] R ==> hog0:126 [120]
            hog0-126   [000]    12.560000000: sched_switch:         hog0:126 [120] R ==> hog5:127 [125]
";
        let mut a = Lookahead::new(Box::new(RENICE.as_bytes()), "t");
        assert_eq!(a.prio_at_switch_out(1, 12_537_712_997, 127), Some(125));
        assert_eq!(a.prio_at_switch_out(1, 12_537_712_997, 126), None);
        assert_eq!(a.prio_at_switch_out(2, 12_541_059_990, 126), None);
    }

    /// A move into a cgroup that the running task wrote itself: its `sched_stat_runtime`
    /// (the move's dequeue) is followed on its CPU by the attach event (6.1
    /// `cgroup-weight-2`, `sh` 137 into `/bg` at 12.9930 s); not by the attach of another
    /// CPU.
    #[test]
    fn the_next_event_is_a_cgroup_attach() {
        const MOVE: &str = "\
cpus=2
          rt-app-137   [000]    12.993036410: sched_stat_runtime:   comm=sh pid=137 runtime=38056 [ns] vruntime=8970603338 [ns]
          rt-app-135   [001]    12.993100000: sched_stat_runtime:   comm=sh pid=135 runtime=1000 [ns] vruntime=1000 [ns]
          rt-app-137   [000]    12.993181532: cgroup_attach_task:   dst_root=0 dst_id=45 dst_level=1 dst_path=/bg pid=137 comm=sh
          rt-app-137   [000]    12.993230728: sched_switch:         sh:137 [120] R ==> kworker/0:1:17 [120]
";
        let mut a = Lookahead::new(Box::new(MOVE.as_bytes()), "t");
        assert_eq!(a.attach_next_on(2, 12_993_036_410, 0), Some((137, "/bg")));
        assert_eq!(a.attach_next_on(2, 12_993_036_410, 1), None);
        assert_eq!(a.attach_next_on(4, 12_993_181_532, 0), None);
    }

    /// Nothing past the window or the end of the trace.
    #[test]
    fn nothing_past_the_window() {
        let mut a = ahead();
        assert_eq!(a.next_on(2, 15_376_059_464 - WINDOW_NS - 1, 1), None);
        assert_eq!(a.next_on(6, 15_376_070_000, 1), None);
    }
}
