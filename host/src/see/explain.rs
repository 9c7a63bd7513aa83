// SPDX-License-Identifier: GPL-2.0-only
//! `explain`: the arithmetic behind one CPU's decisions at one instant of a recorded run —
//! its frequency (the last schedutil update of its domain), the last wake-up placed on
//! it, its last idle-state selection and the overutilized flag. Every number printed is a
//! field of a recorded event (the `schedmath__*` decision records and the kernel events
//! beside them), taken as the simulator passed it.

use std::fmt::Write;

use schedmath::cpuidle::IdleRule;

use crate::text::Table;
use crate::trace::record::{
    IdleSelectRec, Kind, OuRec, OuTest, PlacementRec, Rec, SugovCpuRec, SugovRec, Trace, IDLE_PID,
    PWR_EVENT_EXIT,
};

/// Why there is nothing to explain.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// `--at` past the end of the run.
    #[error("--at {at}: outside the run (0 to {end} s)")]
    OutsideRun {
        /// The instant asked (s).
        at: String,
        /// The run's end (s).
        end: String,
    },
    /// `--cpu` past the platform.
    #[error("--cpu {cpu}: the platform has {nr} CPUs (0 to {last})")]
    NoCpu {
        /// Asked.
        cpu: u32,
        /// CPUs.
        nr: usize,
        /// The last.
        last: usize,
    },
}

/// The records that decided CPU `cpu`'s state at `at_ns`.
#[derive(Debug, Default)]
pub struct Explained<'t> {
    /// The instant (ns).
    pub at_ns: u64,
    /// The CPU.
    pub cpu: u32,
    /// The last `sched_switch` on the CPU.
    pub switch: Option<&'t Rec>,
    /// The frequency from the last `cpu_frequency` of the CPU (kHz) and when.
    pub frequency: Option<(u64, u32)>,
    /// The last schedutil update of the CPU's domain.
    pub sugov: Option<(u64, &'t SugovRec)>,
    /// The last placement onto the CPU.
    pub placement: Option<(u64, &'t PlacementRec)>,
    /// The last `cpu_idle` of the CPU: (when, state).
    pub idle: Option<(u64, u32)>,
    /// The last idle selection on the CPU.
    pub idle_select: Option<(u64, &'t IdleSelectRec)>,
    /// The last change of the overutilized flag.
    pub ou: Option<(u64, &'t OuRec)>,
}

/// Parses an instant: seconds (`1.5`) or with a unit (`1500ms`, `1500000us`, `2s`,
/// `1500000000ns`), to ns.
pub fn parse_time(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(u, k)| s.strip_suffix(u).map(|n| (n, *k)))
        .unwrap_or((s, 1e9));
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * scale).round() as u64)
}

/// The records behind `cpu`'s decisions at `at_ns`.
pub fn explain(t: &Trace, at_ns: u64, cpu: u32) -> Result<Explained<'_>, ExplainError> {
    if at_ns > t.duration_ns {
        return Err(ExplainError::OutsideRun {
            at: format!("{:.6}", at_ns as f64 / 1e9),
            end: format!("{:.6}", t.duration_ns as f64 / 1e9),
        });
    }
    if cpu as usize >= t.nr_cpus {
        return Err(ExplainError::NoCpu {
            cpu,
            nr: t.nr_cpus,
            last: t.nr_cpus.saturating_sub(1),
        });
    }
    let mut e = Explained {
        at_ns,
        cpu,
        ..Explained::default()
    };
    for r in t.events.iter().take_while(|r| r.ts <= at_ns) {
        match &r.kind {
            Kind::Switch { .. } if r.cpu == cpu => e.switch = Some(r),
            Kind::Frequency { state, cpu_id } if *cpu_id == cpu => {
                e.frequency = Some((r.ts, *state));
            }
            Kind::Sugov(s) if s.cpus.iter().any(|c| c.cpu == cpu) => {
                e.sugov = Some((r.ts, s));
            }
            Kind::Placement(p) if p.dst_cpu == cpu => e.placement = Some((r.ts, p)),
            Kind::Idle { state, cpu_id } if *cpu_id == cpu => e.idle = Some((r.ts, *state)),
            Kind::IdleSelect(s) if s.cpu == cpu => e.idle_select = Some((r.ts, s)),
            Kind::OuChange(o) => e.ou = Some((r.ts, o)),
            _ => {}
        }
    }
    Ok(e)
}

fn s(ns: u64) -> String {
    format!("{:.6}", ns as f64 / 1e9)
}

/// What an idle-governor rule means, for a person.
fn idle_rule_text(r: IdleRule) -> &'static str {
    match r {
        IdleRule::None => "no selection",
        IdleRule::NoChoice => "fewer than two states usable: state 0",
        IdleRule::OneEnabled => "only one state enabled",
        IdleRule::UtilizedTwoStates => "teo: CPU utilized, two states: the shallow non-polling one",
        IdleRule::Hits => {
            "teo: intercepts are not the majority: the deepest state the timer allows"
        }
        IdleRule::Intercepts => {
            "teo: intercepts are the majority: the state most early wake-ups reached"
        }
        IdleRule::RecentIntercepts => "teo v6.10: recent intercepts pull to a shallower state",
        IdleRule::InterceptsChoseZero => {
            "teo v6.12: intercepts chose state 0; sleep length learned, tick kept"
        }
        IdleRule::LatencyLimit => "the PM QoS latency limit caps the depth",
        IdleRule::ShortIdles => "teo: short idles dominate: a shallow state, tick kept",
        IdleRule::Utilized => "teo: CPU utilized: the closest shallower non-polling state",
        IdleRule::ShortResidency => {
            "teo: state 0 polls and the candidate's residency is short: tick kept"
        }
        IdleRule::SleepLength => "the next timer comes before the candidate's target residency",
        IdleRule::TickFit => "the tick stays: the state fitted to the time to the tick",
        IdleRule::TimerOrLatencyState0 => {
            "menu: next timer or latency limit below state 1: state 0"
        }
        IdleRule::Predicted => "menu: the deepest state the predicted idle duration fits",
        IdleRule::AvoidPolling => "menu: a physical state rather than polling",
        IdleRule::KeepTickShallow => "menu: prediction past the tick, tick running: shallower",
        IdleRule::TickStopped => "menu: tick stopped: the deeper state if it fits",
    }
}

/// Column widths of the schedutil table, one per [`SugovCpuRec::FIELDS`] entry.
const SUGOV_WIDTHS: [usize; SugovCpuRec::FIELDS.len()] = [6, 6, 6, 6, 10, 10, 22, 7, 7];

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

impl Explained<'_> {
    /// The text `schedmath explain` prints.
    pub fn render(&self, t: &Trace) -> String {
        let mut o = String::new();
        let _ = self.write(t, &mut o);
        o
    }

    fn write(&self, t: &Trace, o: &mut String) -> std::fmt::Result {
        let cpu = self.cpu;
        writeln!(
            o,
            "cpu{cpu} at {} s (run: {} s, {} CPUs)",
            s(self.at_ns),
            s(t.duration_ns),
            t.nr_cpus
        )?;
        match self.switch {
            Some(Rec {
                ts,
                kind: Kind::Switch { next_pid, .. },
                ..
            }) if *next_pid != IDLE_PID => writeln!(
                o,
                "running: {}-{next_pid} since {} s",
                t.comm(*next_pid),
                s(*ts)
            )?,
            _ => match self.idle {
                Some((ts, st)) if st != PWR_EVENT_EXIT => {
                    writeln!(o, "running: nothing, in idle state {st} since {} s", s(ts))?
                }
                _ => writeln!(o, "running: nothing")?,
            },
        }

        writeln!(o, "\nfrequency")?;
        match self.frequency {
            Some((ts, f)) => writeln!(o, "  cpu_frequency: {f} kHz (set at {} s)", s(ts))?,
            None => writeln!(o, "  cpu_frequency: none recorded yet")?,
        }
        if let Some((ts, r)) = self.sugov {
            writeln!(
                o,
                "  last schedutil update of domain {} at {} s, asked by cpu{} (flags {:#x}):",
                r.domain,
                s(ts),
                r.cpu,
                r.flags
            )?;
            let table = SUGOV_WIDTHS
                .iter()
                .fold(Table::new(" ").then("    ").right(5), |t, &w| t.right(w));
            let mut head = vec!["cpu"];
            head.extend(SugovCpuRec::FIELDS.map(|(_, heading)| heading));
            table.line(o, &head);
            for c in &r.cpus {
                let mut cells = vec![format!("cpu{}", c.cpu)];
                cells.extend(c.values().map(|v| v.to_string()));
                table.line(o, &cells);
            }
            writeln!(
                o,
                "    rate limit (sugov_should_update_freq): {}",
                if r.should_update {
                    "passed"
                } else {
                    "held back: no new frequency"
                }
            )?;
            writeln!(o, "    raw frequency (cached_raw_freq): {} kHz", r.raw_freq)?;
            writeln!(o, "    resolved to an OPP: {} kHz", r.resolved_freq)?;
            writeln!(
                o,
                "    busy filter (sugov_hold_freq): {}",
                match r.hold {
                    None => "not evaluated",
                    Some(true) => "held the frequency",
                    Some(false) => "no hold",
                }
            )?;
            writeln!(
                o,
                "    next frequency: {} kHz, committed: {}, {} -> {} kHz",
                r.next_freq,
                yes(r.committed),
                r.old_freq,
                r.cur_freq
            )?;
        }

        writeln!(o, "\nlast wake-up placed on cpu{cpu}")?;
        match self.placement {
            None => writeln!(o, "  none yet")?,
            Some((ts, p)) => {
                writeln!(
                    o,
                    "  {}-{} at {} s from cpu{} by rule `{}` ({}): util_avg {}, util_est {}, uclamp {}..{}",
                    t.comm(p.pid),
                    p.pid,
                    s(ts),
                    p.prev_cpu,
                    p.rule.name(),
                    p.why,
                    p.util_avg,
                    p.util_est,
                    p.uclamp_min,
                    p.uclamp_max
                )?;
                writeln!(
                    o,
                    "    {:>5} {:>7} {:>5} {:>5} {:>6} {:>6} {:>8}",
                    "cpu", "allowed", "idle", "fits", "spare", "util", "capacity"
                )?;
                for c in &p.candidates {
                    writeln!(
                        o,
                        "    {:>5} {:>7} {:>5} {:>5} {:>6} {:>6} {:>8}{}",
                        format!("cpu{}", c.cpu),
                        yes(c.allowed),
                        yes(c.idle),
                        match c.fits {
                            1 => "yes",
                            -1 => "min",
                            _ => "no",
                        },
                        c.spare,
                        c.util,
                        c.capacity,
                        if c.cpu == p.dst_cpu {
                            "  <- chosen"
                        } else {
                            ""
                        }
                    )?;
                }
                if p.pd_energy.is_empty() {
                    writeln!(o, "    energy per perf domain: not computed by this rule")?;
                } else {
                    writeln!(
                        o,
                        "    energy per perf domain (compute_energy(); fits `min`: uclamp_min not met):"
                    )?;
                    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
                    for d in &p.pd_energy {
                        write!(
                            o,
                            "    perf domain of cpu{}: base {}, with the task on prev {}",
                            d.first_cpu,
                            d.base,
                            opt(d.with_prev)
                        )?;
                        match d.max_spare_cpu {
                            Some(c) => {
                                writeln!(o, ", on max-spare cpu{c} {}", opt(d.with_max_spare))?
                            }
                            None => writeln!(o)?,
                        }
                    }
                }
            }
        }

        writeln!(o, "\nidle state")?;
        match self.idle_select {
            None => writeln!(o, "  no selection yet")?,
            Some((ts, r)) => {
                writeln!(
                    o,
                    "  last selection at {} s by {}: state {} (tick {})",
                    s(ts),
                    if r.governor.is_empty() {
                        "-"
                    } else {
                        &r.governor
                    },
                    r.idx,
                    if r.stop_tick { "stopped" } else { "kept" }
                )?;
                let sl = if r.sleep_length_ns == i64::MAX {
                    format!("{} ns (KTIME_MAX: no timer)", r.sleep_length_ns)
                } else {
                    format!("{} ns", r.sleep_length_ns)
                };
                writeln!(
                    o,
                    "    sleep length {sl}, next tick in {} ns, cpu util {}",
                    r.delta_tick_ns, r.cpu_util
                )?;
                writeln!(
                    o,
                    "    rule: {} ({})",
                    r.rule.name(),
                    idle_rule_text(r.rule)
                )?;
                if let Some(u) = r.utilized {
                    writeln!(o, "    teo_cpu_is_utilized: {}", yes(u))?;
                }
                for part in r.stats.split(';').filter(|p| !p.is_empty()) {
                    writeln!(o, "    {}", part.replace('|', " | "))?;
                }
            }
        }
        match self.idle {
            Some((ts, st)) if st != PWR_EVENT_EXIT => {
                writeln!(o, "  in state {st} since {} s", s(ts))?
            }
            Some((ts, _)) => writeln!(o, "  not idle (left idle at {} s)", s(ts))?,
            None => writeln!(o, "  not idle")?,
        }

        writeln!(o, "\noverutilized")?;
        match self.ou {
            None => writeln!(o, "  no: never set so far")?,
            Some((ts, r)) => {
                writeln!(
                    o,
                    "  {} since {} s, set by {} on {}",
                    yes(r.overutilized),
                    s(ts),
                    match r.test {
                        OuTest::CheckUpdate => "check_update_overutilized_status()",
                        OuTest::LoadBalance => "the load-balance pass",
                    },
                    if r.cpu < 0 {
                        "no CPU".to_string()
                    } else {
                        format!("cpu{}", r.cpu)
                    }
                )?;
                writeln!(
                    o,
                    "    that CPU: util_avg {}, util_est {}, capacity {}, rq uclamp {}..{}",
                    r.util_avg, r.util_est, r.capacity, r.uclamp_min, r.uclamp_max
                )?;
            }
        }
        Ok(())
    }
}
