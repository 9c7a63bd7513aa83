// SPDX-License-Identifier: GPL-2.0-only
//! The simulator's observer: when a run is traced, the engine hands it the values of each
//! kernel point it models (sched_switch, wake-ups, migrations, frequency and idle
//! changes, every PELT update call, util_est, overutilized, capacity) and of each
//! decision (schedutil, placement, idle selection, overutilized), and it keeps them as
//! plain [`crate::trace::record`] records: one buffer, the single source of every trace
//! file, plot and `explain`.
//!
//! Off by default: the engine holds an `Option<Box<TraceBuf>>` and each hook is one
//! `if let Some(..)` (no allocation, no buffering when `None`); BENCHMARKS.md measures
//! the difference.
//!
//! Tasks are pids `1..`: task `i` of the run is pid `i + 1` (forked threads get the next
//! pids in fork order); pid 0 is the idle task.

use schedmath::pelt::SchedAvg;

use crate::trace::record::{comm_of, Kind, PrevState, Rec, TaskRec, Trace, UeLayout, IDLE_PID};

/// Most events one trace holds (about 2 GB at the largest records): a longer run is
/// refused with an error naming the limit rather than filling memory.
pub const TRACE_EVENTS_MAX: usize = 8_000_000;

/// The pid of task index `t`.
pub fn pid_of(t: usize) -> i32 {
    i32::try_from(t + 1).unwrap_or(i32::MAX)
}

/// The trace being recorded.
#[derive(Debug, Clone)]
pub struct TraceBuf {
    /// What has been recorded.
    pub trace: Trace,
    /// The pid that `sched_switch` last put on each CPU.
    pub running: Vec<i32>,
    /// Its prio then.
    pub running_prio: Vec<i32>,
    /// The util_est layout of the probe records (the profile's).
    pub ue: UeLayout,
    /// uclamp is in use: `lisa__uclamp_util_se` is recorded.
    pub uclamp: bool,
    /// Events dropped past [`TRACE_EVENTS_MAX`].
    pub dropped: u64,
    /// Per CPU, per task group: the group entity's PELT (see `tr_pelt_group_se`).
    pub group_se: Vec<Vec<GroupSe>>,
}

/// A group entity's PELT state, kept by the trace alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupSe {
    /// `se->avg`.
    pub avg: SchedAvg,
    /// `se->runnable_weight` (its cfs_rq's `h_nr_runnable` at the last update).
    pub runnable_weight: u64,
}

impl TraceBuf {
    /// An empty trace of `nr_cpus` CPUs and the tasks `names` (pids 1..).
    pub fn new(nr_cpus: usize, names: &[String], duration_ns: u64, ue: UeLayout) -> Self {
        let tasks = names
            .iter()
            .enumerate()
            .map(|(i, n)| TaskRec {
                pid: pid_of(i),
                comm: comm_of(n),
            })
            .collect();
        TraceBuf {
            trace: Trace {
                nr_cpus,
                duration_ns,
                tasks,
                events: Vec::with_capacity(1 << 16),
            },
            running: vec![IDLE_PID; nr_cpus],
            running_prio: vec![120; nr_cpus],
            ue,
            uclamp: false,
            dropped: 0,
            group_se: vec![Vec::new(); nr_cpus],
        }
    }

    /// Group `g`'s entity state on `cpu` (created zeroed at first use).
    pub fn group_se(&mut self, cpu: usize, g: usize) -> &mut GroupSe {
        if self.group_se.len() <= cpu {
            self.group_se.resize(cpu + 1, Vec::new());
        }
        let per_cpu = &mut self.group_se[cpu];
        if per_cpu.len() <= g {
            per_cpu.resize(g + 1, GroupSe::default());
        }
        &mut per_cpu[g]
    }

    /// A forked task (the next pid).
    pub fn add_task(&mut self, name: &str) {
        let pid = pid_of(self.trace.tasks.len());
        self.trace.tasks.push(TaskRec {
            pid,
            comm: comm_of(name),
        });
    }

    /// Records `kind` at `ts` on `cpu` (the current task there: the last switched in).
    pub fn push(&mut self, ts: u64, cpu: usize, kind: Kind) {
        let pid = self.running.get(cpu).copied().unwrap_or(IDLE_PID);
        if self.trace.events.len() >= TRACE_EVENTS_MAX {
            self.dropped += 1;
            return;
        }
        self.trace.events.push(Rec {
            ts,
            cpu: cpu as u32, // CPU numbers are small
            pid,
            kind,
        });
    }

    /// `sched_switch` on `cpu` to `next` (with its prio) unless it is already current;
    /// the task leaving is in `prev_state`.
    pub fn switch(
        &mut self,
        ts: u64,
        cpu: usize,
        next: i32,
        next_prio: i32,
        prev_state: PrevState,
    ) {
        let (prev, prev_prio) = (self.running[cpu], self.running_prio[cpu]);
        if prev == next {
            return;
        }
        self.push(
            ts,
            cpu,
            Kind::Switch {
                prev_pid: prev,
                prev_prio,
                prev_state: if prev == IDLE_PID {
                    PrevState::Running
                } else {
                    prev_state
                },
                next_pid: next,
                next_prio,
            },
        );
        self.running[cpu] = next;
        self.running_prio[cpu] = next_prio;
    }

    /// The recorded trace, or the error of one past [`TRACE_EVENTS_MAX`].
    pub fn finish(self) -> Result<Trace, String> {
        if self.dropped > 0 {
            return Err(format!(
                "the trace would hold {} events, more than the {TRACE_EVENTS_MAX} one trace \
                 may hold: trace a shorter run (--duration)",
                self.trace.events.len() as u64 + self.dropped
            ));
        }
        Ok(self.trace)
    }
}
