// SPDX-License-Identifier: GPL-2.0-only
//! What the simulator runs: tasks as programs of phases × loops × steps, built from the
//! workload model ([`crate::workload::Workload`], rt-app JSON or the periodic TOML form)
//! by [`tasks_from_workload`].
//!
//! Simulated events: `run` (capacity- and frequency-invariant work), `runtime` (wall
//! time), `sleep`, `timer` (relative or absolute), `mem` (work at [`MEM_BYTES_PER_SEC`]),
//! `iorun` (an IO-wait sleep at [`IO_BYTES_PER_SEC`], or of a device latency drawn from
//! the workload's `schedmath.io_latency_us` range, whose wake-up carries
//! `SCHED_CPUFREQ_IOWAIT`), `yield`, `suspend`/`resume`, `lock`/`unlock`,
//! `wait`/`signal`/`broad`, `sync` (signal, then wait with the held mutex) and `barrier` (resources
//! by interned id), `fork` (a new thread of a task object, from a [`SimTask::fork_template`]
//! that [`tasks_from_workload`] appends for each forked object). A phase's policy, affinity, clamps
//! and task group are applied each time it starts (a group move is rt-app writing the
//! task into the cgroup; the task carries its group's chain of [`SimGroup`]s with their
//! shares and idle flag, see [`super::group`]); a timer shared by several threads is
//! simulated per thread.

use std::collections::BTreeMap;

pub use super::group::SimGroup;
use super::SimError;
use crate::workload::model::DEFAULT_SHARES;
use crate::workload::{Event, Loops, Policy, Sched, TaskGroup, TimerMode, Workload};

/// rt-app `mem` rate: bytes written per second at capacity 1024 and the reference
/// frequency (a memset-bound store stream of 8 GB/s); `mem` is work like `run`.
pub const MEM_BYTES_PER_SEC: u64 = 8_000_000_000;
/// rt-app `iorun` rate: bytes per second of the IO device (100 MB/s, a flash or disk
/// write); `iorun` is an IO-wait sleep of `bytes / rate`.
pub const IO_BYTES_PER_SEC: u64 = 100_000_000;

/// ns for `bytes` at `rate` bytes/s (rounded up, saturating).
fn bytes_ns(bytes: u64, rate: u64) -> u64 {
    let ns = (u128::from(bytes) * 1_000_000_000).div_ceil(u128::from(rate));
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// The id of `name` in `index` (a new one, in order of first use, when unseen).
fn intern(index: &mut BTreeMap<String, u32>, name: &str) -> u32 {
    let next = index.len() as u32; // far fewer names than 2^32
    *index.entry(name.to_string()).or_insert(next)
}

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
    /// rt-app `runtime`: busy for a wall time whatever the CPU; the clock starts when the
    /// step first runs and counts preempted time too (rt-app spins on the wall clock).
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
    /// rt-app `iorun`: an IO-wait sleep of `min_ns..=max_ns` (drawn uniformly by the task's
    /// seeded generator when they differ); the wake-up sets `SCHED_CPUFREQ_IOWAIT`.
    IoWait {
        /// Shortest wait (ns).
        min_ns: u64,
        /// Longest wait (ns).
        max_ns: u64,
    },
    /// `sched_yield()`: re-queued behind its equals.
    Yield,
    /// Take mutex n (blocks, FIFO, while another task holds it).
    Lock(u32),
    /// Release mutex n (hands it to its first waiter).
    Unlock(u32),
    /// `pthread_cond_wait()`: release the mutex, block until signalled, re-acquire.
    Wait {
        /// Condition id.
        cond: u32,
        /// Mutex id.
        mutex: u32,
    },
    /// `pthread_cond_signal()`: wake the first waiter.
    Signal(u32),
    /// `pthread_cond_broadcast()`: wake every waiter.
    Broadcast(u32),
    /// Block until every thread using barrier n reaches it.
    Barrier(u32),
    /// Block until someone resumes name n.
    Suspend(u32),
    /// Wake every task suspended on name n (none: lost, as a condvar broadcast).
    Resume(u32),
    /// rt-app `fork`: start a new thread from fork template n (the n-th [`SimTask`] with
    /// [`SimTask::fork_template`] set, in order).
    Fork(u32),
}

impl Step {
    /// Synchronisation steps (the engine resolves them against other tasks).
    pub fn is_sync(self) -> bool {
        !matches!(
            self,
            Step::Run(_)
                | Step::Runtime(_)
                | Step::Sleep(_)
                | Step::Timer { .. }
                | Step::IoWait { .. }
        )
    }
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
    /// New task group (its chain, top-level group first; empty: the root).
    pub group: Option<Vec<SimGroup>>,
    /// `sched_attr.sched_runtime` of a fair policy: the EEVDF custom slice (ns, clamped
    /// to 0.1..=100 ms by the kernel; 0: back to the base slice).
    pub slice_ns: Option<u64>,
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
    /// Not started: a template that [`Step::Fork`] copies into a new thread (the task
    /// object's key as name; each copy is named `name-IND-NNNN` as rt-app names forks).
    pub fork_template: bool,
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
    /// Task group at start: its chain, top-level group first (empty: the root group).
    pub group: Vec<SimGroup>,
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
            fork_template: false,
            policy: SchedPolicy::Normal,
            nice: 0,
            cpus: None,
            uclamp_min: None,
            uclamp_max: None,
            group: Vec::new(),
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

/// The chain of groups from the top-level one down to `path` (empty for the root), with
/// the attributes `groups` gives them (kernel defaults for a group it lacks).
fn group_chain(groups: &[TaskGroup], path: &str) -> Vec<SimGroup> {
    let mut chain = Vec::new();
    let mut p = path;
    while p != "/" && !p.is_empty() {
        let g = groups.iter().find(|g| g.path == p);
        chain.push(SimGroup {
            path: p.to_string(),
            shares: g.map_or(DEFAULT_SHARES, |g| g.shares),
            idle: g.is_some_and(|g| g.idle),
        });
        p = match (g, p.rfind('/')) {
            (Some(g), _) => &g.parent,
            (None, Some(0) | None) => "/",
            (None, Some(i)) => &p[..i],
        };
    }
    chain.reverse();
    chain
}

/// The simulator's tasks for every thread of `w` (instances in order). Mutex, condition,
/// barrier and suspend names become ids (one numbering per kind, in order of first use).
pub fn tasks_from_workload(w: &Workload) -> Result<Vec<SimTask>, SimError> {
    let mut out = Vec::new();
    // Forked task objects in order of first `fork`: the index of a Step::Fork.
    let mut forked: Vec<String> = Vec::new();
    let mut templates: Vec<(String, SimTask)> = Vec::new();
    let mut idx: [BTreeMap<String, u32>; 4] = Default::default();
    for t in &w.tasks {
        let mut phases = Vec::with_capacity(t.phases.len());
        for ph in &t.phases {
            let mut steps = Vec::with_capacity(ph.events.len());
            for e in &ph.events {
                let [im, ic, ib, is] = &mut idx;
                let mut m = |n: &str| intern(im, n);
                let mutex_steps: Option<[Step; 2]> = match &e.event {
                    Event::Sync { cond, mutex } => {
                        let (mx, cv) = (m(mutex), intern(ic, cond));
                        Some([
                            Step::Signal(cv),
                            Step::Wait {
                                cond: cv,
                                mutex: mx,
                            },
                        ])
                    }
                    _ => None,
                };
                if let Some(s) = mutex_steps {
                    steps.extend(s);
                    continue;
                }
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
                    Event::IoRun { bytes } => {
                        let (min_ns, max_ns) = w.global.io_latency_ns.unwrap_or_else(|| {
                            let ns = bytes_ns(*bytes, IO_BYTES_PER_SEC);
                            (ns, ns)
                        });
                        Step::IoWait { min_ns, max_ns }
                    }
                    Event::Mem { bytes } => Step::Run(bytes_ns(*bytes, MEM_BYTES_PER_SEC)),
                    Event::Yield => Step::Yield,
                    Event::Lock { mutex } => Step::Lock(m(mutex)),
                    Event::Unlock { mutex } => Step::Unlock(m(mutex)),
                    Event::Wait { cond, mutex } => Step::Wait {
                        cond: intern(ic, cond),
                        mutex: m(mutex),
                    },
                    Event::Signal { cond } => Step::Signal(intern(ic, cond)),
                    Event::Broadcast { cond } => Step::Broadcast(intern(ic, cond)),
                    Event::Barrier { name } => Step::Barrier(intern(ib, name)),
                    Event::Suspend { name } => Step::Suspend(intern(is, name)),
                    Event::Resume { name } => Step::Resume(intern(is, name)),
                    Event::Sync { .. } => continue, // expanded above
                    Event::Fork { task } => {
                        let k = forked
                            .iter()
                            .position(|f| f == task)
                            .unwrap_or(forked.len());
                        if k == forked.len() {
                            forked.push(task.clone());
                        }
                        Step::Fork(k as u32) // far fewer task objects than 2^32
                    }
                });
            }
            phases.push(SimPhase {
                attrs: PhaseAttrs {
                    policy: ph.sched.map(policy_of),
                    nice: ph.sched.filter(|s| s.policy.is_fair()).map(|s| s.priority),
                    cpus: ph.cpus.as_ref().map(|a| a.cpus.clone()),
                    uclamp_min: ph.uclamp.min,
                    uclamp_max: ph.uclamp.max,
                    group: ph.group.as_deref().map(|g| group_chain(&w.groups, g)),
                    // The task-level slice is set with the first phase's attributes.
                    slice_ns: ph.custom_slice_ns.or(if phases.is_empty() {
                        t.custom_slice_ns
                    } else {
                        None
                    }),
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
        let group = group_chain(
            &w.groups,
            first.and_then(|p| p.group.as_deref()).unwrap_or(&t.group),
        );
        let names = t.instances.iter().map(|n| (n.as_str(), false));
        for (name, fork_template) in names.chain(std::iter::once((t.name.as_str(), true))) {
            let task = SimTask {
                name: name.to_string(),
                fork_template,
                policy,
                nice: if sched.policy.is_fair() {
                    sched.priority
                } else {
                    0
                },
                cpus: cpus.clone(),
                uclamp_min: uc_min,
                uclamp_max: uc_max,
                group: group.clone(),
                delay_ns: t.delay_ns,
                loops: loops(t.loops),
                phases: phases.clone(),
            };
            if fork_template {
                templates.push((t.name.clone(), task));
            } else {
                out.push(task);
            }
        }
    }
    for f in &forked {
        if let Some((_, tpl)) = templates.iter().find(|(n, _)| n == f) {
            out.push(tpl.clone());
        } else {
            return Err(SimError::Config(format!(
                "fork of unknown task object `{f}`"
            )));
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
