// SPDX-License-Identifier: GPL-2.0-only
//! What the simulator runs: tasks as programs of phases × loops × steps, built from the
//! workload model ([`crate::workload::Workload`], rt-app JSON or the periodic TOML form)
//! by [`tasks_from_workload`].
//!
//! Simulated events: `run` (capacity- and frequency-invariant work), `runtime` (wall
//! time), `sleep`, `timer` (relative or absolute). Refused, naming task and event key,
//! because the engine has no model for them yet: `iorun`, `mem`, `yield`,
//! suspend/resume, locks, condition variables and barriers. A phase's policy, affinity
//! and clamps are applied each time it starts; task groups are flattened (every task in
//! the root cfs_rq, group moves have no effect); a timer shared by several threads is
//! simulated per thread.

use super::SimError;
use crate::workload::{Event, Loops, Policy, Sched, TimerMode, Workload};

/// Scheduling class and policy of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    /// SCHED_OTHER (fair).
    Normal,
    /// SCHED_IDLE (fair, weight 3).
    Idle,
    /// SCHED_FIFO with a priority 1..=99.
    Fifo(u32),
    /// SCHED_RR with a priority 1..=99 (the RR time slice is not modelled: FIFO order).
    Rr(u32),
}

impl SchedPolicy {
    /// An RT policy's priority (higher runs first); `None` for fair policies.
    pub fn rt_prio(self) -> Option<u32> {
        match self {
            SchedPolicy::Fifo(p) | SchedPolicy::Rr(p) => Some(p),
            SchedPolicy::Normal | SchedPolicy::Idle => None,
        }
    }
}

/// One step of a task's program; durations in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// rt-app `run`: work in ns at capacity 1024 and the reference frequency; it takes
    /// `work × 1024 / capacity × f_ref / f` wall ns on a CPU.
    Run(u64),
    /// rt-app `runtime`: busy for a wall time whatever the CPU.
    Runtime(u64),
    /// rt-app `sleep`.
    Sleep(u64),
    /// rt-app `timer`: sleep until the next expiry, previous expiry + period (the first
    /// counts from the task's first activation). When the expiry has already passed
    /// (strictly) a deadline miss is counted and there is no sleep; a relative timer then
    /// re-bases on now, an absolute one keeps its grid.
    Timer {
        /// Period (ns, > 0).
        period_ns: u64,
        /// Absolute mode.
        absolute: bool,
    },
}

/// Attributes a phase sets when it starts (`None`: unchanged), as `sched_setattr()` and
/// `sched_setaffinity()` calls of rt-app.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseAttrs {
    /// New policy (and, for RT, priority).
    pub policy: Option<SchedPolicy>,
    /// New nice (fair policies).
    pub nice: Option<i32>,
    /// New affinity.
    pub cpus: Option<Vec<usize>>,
    /// New uclamp min.
    pub uclamp_min: Option<u32>,
    /// New uclamp max.
    pub uclamp_max: Option<u32>,
}

impl PhaseAttrs {
    /// Nothing changes.
    pub fn is_empty(&self) -> bool {
        *self == PhaseAttrs::default()
    }
}

/// One phase: its steps repeated `loops` times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimPhase {
    /// Set when the phase starts.
    pub attrs: PhaseAttrs,
    /// Repetitions (≥ 1).
    pub loops: u64,
    /// The steps (at least one).
    pub steps: Vec<Step>,
}

/// One task (thread) of the simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimTask {
    /// Unique name (reports key on it).
    pub name: String,
    /// Policy.
    pub policy: SchedPolicy,
    /// Nice value -20..=19 (fair tasks).
    pub nice: i32,
    /// Allowed CPUs; `None`: all.
    pub cpus: Option<Vec<usize>>,
    /// Requested uclamp min (`None`: not set).
    pub uclamp_min: Option<u32>,
    /// Requested uclamp max.
    pub uclamp_max: Option<u32>,
    /// First activation (ns).
    pub delay_ns: u64,
    /// How many times the phases run; `None`: forever.
    pub loops: Option<u64>,
    /// The program.
    pub phases: Vec<SimPhase>,
}

impl SimTask {
    /// A periodic task: `run(period × duty_pct / 100)` then a relative `timer(period)`,
    /// `loops` times (`None`: forever).
    pub fn periodic(name: &str, duty_pct: u32, period_ns: u64, loops: Option<u64>) -> Self {
        SimTask {
            name: name.to_string(),
            policy: SchedPolicy::Normal,
            nice: 0,
            cpus: None,
            uclamp_min: None,
            uclamp_max: None,
            delay_ns: 0,
            loops,
            phases: vec![SimPhase {
                attrs: PhaseAttrs::default(),
                loops: 1,
                steps: vec![
                    Step::Run(period_ns * u64::from(duty_pct) / 100),
                    Step::Timer {
                        period_ns,
                        absolute: false,
                    },
                ],
            }],
        }
    }
}

fn loops(l: Loops) -> Option<u64> {
    match l {
        Loops::Forever => None,
        Loops::Count(n) => Some(u64::from(n)),
    }
}

fn policy_of(sched: Sched) -> SchedPolicy {
    let rt_prio = sched.priority.clamp(1, 99) as u32; // validated 1..=99 for rt
    match sched.policy {
        Policy::Other => SchedPolicy::Normal,
        Policy::Idle => SchedPolicy::Idle,
        Policy::Fifo => SchedPolicy::Fifo(rt_prio),
        Policy::Rr => SchedPolicy::Rr(rt_prio),
    }
}

/// The simulator's tasks for every thread of `w` (instances in order).
pub fn tasks_from_workload(w: &Workload) -> Result<Vec<SimTask>, SimError> {
    let mut out = Vec::new();
    for t in &w.tasks {
        let refuse = |what: String| {
            SimError::Config(format!(
                "{}:{}: task `{}`: {what} is not simulated",
                w.origin, t.at.line, t.name
            ))
        };
        let mut phases = Vec::with_capacity(t.phases.len());
        for ph in &t.phases {
            let mut steps = Vec::with_capacity(ph.events.len());
            for e in &ph.events {
                steps.push(match &e.event {
                    Event::Run { work_ns } => Step::Run(*work_ns),
                    Event::Runtime { wall_ns } => Step::Runtime(*wall_ns),
                    Event::Sleep { ns } => Step::Sleep(*ns),
                    Event::Timer {
                        period_ns, mode, ..
                    } => Step::Timer {
                        period_ns: *period_ns,
                        absolute: *mode == TimerMode::Absolute,
                    },
                    _ => return Err(refuse(format!("event `{}` (line {})", e.key, e.at.line))),
                });
            }
            phases.push(SimPhase {
                attrs: PhaseAttrs {
                    policy: ph.sched.map(policy_of),
                    nice: ph.sched.filter(|s| s.policy.is_fair()).map(|s| s.priority),
                    cpus: ph.cpus.as_ref().map(|a| a.cpus.clone()),
                    uclamp_min: ph.uclamp.min,
                    uclamp_max: ph.uclamp.max,
                },
                loops: loops(ph.loops).unwrap_or(u64::MAX),
                steps,
            });
        }
        let first = t.phases.first();
        let sched = first.and_then(|p| p.sched).unwrap_or(t.sched);
        let policy = policy_of(sched);
        let cpus = first
            .and_then(|p| p.cpus.as_ref())
            .or(t.cpus.as_ref())
            .map(|a| a.cpus.clone());
        let uc_min = first.and_then(|p| p.uclamp.min).or(t.uclamp.min);
        let uc_max = first.and_then(|p| p.uclamp.max).or(t.uclamp.max);
        for name in &t.instances {
            out.push(SimTask {
                name: name.clone(),
                policy,
                nice: if sched.policy.is_fair() {
                    sched.priority
                } else {
                    0
                },
                cpus: cpus.clone(),
                uclamp_min: uc_min,
                uclamp_max: uc_max,
                delay_ns: t.delay_ns,
                loops: loops(t.loops),
                phases: phases.clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periodic_form_maps_to_run_and_relative_timer() {
        let w = crate::workload::Workload::from_str_with_ext(
            "duration_s = 1\n[[task]]\nname = \"s\"\nduty_cycle_pct = 5\nperiod_us = 16000\nduration_us = 32000\ncount = 2\nutil_max = 512\n",
            "w.toml",
            Some("toml"),
        )
        .unwrap();
        let t = tasks_from_workload(&w).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].uclamp_max, Some(512));
        let steps: Vec<Step> = t[0].phases.iter().flat_map(|p| p.steps.clone()).collect();
        assert_eq!(steps[0], Step::Run(800_000));
        assert_eq!(
            steps[1],
            Step::Timer {
                period_ns: 16_000_000,
                absolute: false
            }
        );
        let total: u64 =
            t[0].phases.iter().map(|p| p.loops).product::<u64>() * t[0].loops.unwrap_or(1);
        assert_eq!(total, 2);
    }
}
