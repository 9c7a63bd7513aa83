// SPDX-License-Identifier: GPL-2.0-only
//! A queued task moved by its CPU's stopper (kernel/stop_machine.c runs the stop work in
//! the `migration/N` thread): migration_cpu_stop() (core.c, for sched_setaffinity()'s
//! affine_move_task() and sched_exec()) and active_load_balance_cpu_stop() (fair.c) take
//! the rq lock and update its clock as they start, then dequeue the task
//! (move_queued_task() / detach_one_task(): deactivate_task() with DEQUEUE_NOCLOCK) before
//! set_task_cpu() writes `sched_migrate_task`. That read follows the stopper's switch-in,
//! not the event: the dequeue's records and any wait for the lock come between (6.1
//! `hogs-nice-2`, `hog5` moved from cpu1 at 12.4701 s: read 10 µs after the switch to
//! `migration/1`, 18 µs before the event, across a PELT period boundary the kernel's
//! dequeue had not reached).
//!
//! The stopper itself (like any RT task) is no fair entity: its wake-up and its switches
//! from and to the idle task update no cfs_rq ([`InferReplay::rq_clock_only`]; 6.1
//! `periodic-5pct-16ms-2`, cpu0 at 12.6483 s: the watchdog's wake-up of `migration/0`
//! on the idle CPU, where the replay's extra root update crossed a PELT period boundary
//! the kernel's next update reached from its own phase: util 633 vs 624).

use std::collections::BTreeMap;

use super::InferReplay;

/// Per CPU, the trace time its stopper was switched in, while it runs.
#[derive(Default)]
pub(super) struct Stoppers(BTreeMap<u32, u64>);

/// Whether `comm` is a CPU's stopper thread (kernel/stop_machine.c names it
/// `migration/N`).
pub(super) fn is_stopper(comm: &str) -> bool {
    comm.starts_with("migration/")
}

impl InferReplay {
    /// `sched_switch` on `cpu` at `ts` to `next_comm`.
    pub(super) fn note_stopper(&mut self, ts: u64, cpu: u32, next_comm: &str) {
        if is_stopper(next_comm) {
            self.stoppers.0.insert(cpu, ts);
        } else {
            self.stoppers.0.remove(&cpu);
        }
    }

    /// The trace time of the dequeue's clock read of a queued `pid` moved from `from`
    /// (`sched_migrate_task` at `ts`) while `from`'s stopper runs: its switch-in. Only
    /// for a task of the root group: a grouped task's move is left at the event (its
    /// group entity's propagation is placed there; this read moved the 6.1 and 6.12
    /// `cgroup-weight` roots' means 0.58 → 0.71 and 0.38 → 0.40 by shifting an earlier
    /// error's sums, not by a new one).
    pub(super) fn stopper_dequeue(&self, pid: i32, from: u32, ts: u64) -> Option<u64> {
        if self.groups.path(pid).is_some() {
            return None;
        }
        self.stoppers.0.get(&from).copied().filter(|&at| at <= ts)
    }
}

impl InferReplay {
    /// An update_rq_clock() of `cpu` at trace time `ts` that updates no fair entity: the
    /// enqueue of an RT or stop task (enqueue_task_rt() / enqueue_task_stop() touch no
    /// cfs_rq), which only moves the clock the next skipped update reuses.
    pub(super) fn rq_clock_only(&mut self, cpu: u32, ts: u64) {
        if let Some(c) = self.cpus.get_mut(&cpu) {
            c.clock_read = Some(c.clock_read.map_or(ts, |r| r.max(ts)));
        }
    }
}
