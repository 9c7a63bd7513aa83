// SPDX-License-Identifier: GPL-2.0-only
//! Moves into a cgroup that the trace records (`cgroup:cgroup_attach_task`).
//!
//! A write of a pid into `cgroup.procs` runs the cpu controller's attach callback
//! (kernel/sched/core.c cpu_cgroup_attach() → sched_move_task()) before
//! cgroup_migrate_execute() (kernel/cgroup/cgroup.c) writes `cgroup_attach_task`: the
//! rq clock is read, the task is dequeued (DEQUEUE_SAVE | DEQUEUE_MOVE; its update_curr()
//! writes `sched_stat_runtime` when it is the running task) and put back if it runs, then
//! task_change_group_fair() (fair.c) detaches it from its old cfs_rq (detach_task_cfs_rq():
//! an update, then the removal), zeroes its `last_update_time` (6.1 and 6.12 alike) and
//! attaches it to the new group's cfs_rq (attach_task_cfs_rq(): that cfs_rq's update, the
//! addition, its group entity's update up the hierarchy), and the task is enqueued and
//! set as next again on the same clock.
//!
//! So the event comes after every update of the move. A task that moves itself (a shell
//! writing `$$` before exec'ing the workload) is the running task: its
//! `sched_stat_runtime` followed on its CPU by the attach event (the look-ahead,
//! [`super::ahead`]) is the move's dequeue; the move reads the clock there
//! ([`ClockPoint::Dequeue`]: update_rq_clock() then update_curr(), as a sleeper's
//! dequeue) and detaches once its root cfs_rq updates before the detach have been
//! recorded (the dequeue's and detach_entity_cfs_rq()'s: [`InferReplay::move_detach_updates`]),
//! as [`super::Deferred`] steps wait for theirs. Any other move (not seen ahead) is done
//! at the event. A trace without the event keeps the older rule (the task's first
//! answer-key record naming its new group: [`super::group`]).

use std::collections::BTreeMap;

use super::{ClockPoint, InferReplay};
use crate::trace::event::Event;

/// A move seen ahead, waiting for its root cfs_rq updates on its CPU.
pub(super) struct Pending {
    pid: i32,
    /// The destination group (`/` = the root group).
    path: String,
    /// The trace time of the move's clock read.
    ts: u64,
    /// The detach is done: the attach is next.
    detached: bool,
    /// Root cfs_rq updates still to be recorded before the next step.
    after: u32,
}

/// The moves seen ahead, per CPU.
#[derive(Default)]
pub(super) struct CgroupMoves {
    pending: BTreeMap<u32, Pending>,
}

/// Root cfs_rq updates between the detach and the attach: attach_entity_cfs_rq()'s
/// (the new group's entity, or the task itself on the root, updated on the root before
/// the attach propagates there).
const ATTACH_UPDATES: u32 = 1;

impl InferReplay {
    /// After each event on `cpu` at `ts`: the running task's `sched_stat_runtime` that its
    /// CPU follows with its own `cgroup_attach_task` starts the move; the event itself
    /// finishes a move not done yet.
    pub(super) fn cgroup_after_event(&mut self, ts: u64, cpu: u32, ev: &Event<'_>) {
        match *ev {
            Event::StatRuntime { pid, .. } => {
                let curr = self.cpus.get(&cpu).and_then(|c| c.curr);
                if curr != Some(pid) || pid == 0 {
                    return;
                }
                let Some((p, path)) = self.ahead_attach_next_on(ts, cpu) else {
                    return;
                };
                if p != pid {
                    return;
                }
                let at = self.at(ClockPoint::Dequeue, ts);
                let after = self.move_detach_updates(at, pid, cpu);
                let m = Pending {
                    pid,
                    path,
                    ts: at,
                    detached: false,
                    after,
                };
                if let Some(old) = self.cgroups.pending.insert(cpu, m) {
                    self.cgroup_finish(cpu, old);
                }
            }
            Event::CgroupAttach { pid, path, .. } => {
                if let Some(m) = self.cgroups.pending.remove(&cpu) {
                    self.cgroup_finish(cpu, m);
                }
                let first = self.tasks.get(&pid).is_none_or(|t| t.avg.is_none());
                // Not seen ahead: done at the event (nothing if the move was done).
                self.follow_group(ts, pid, path, first);
            }
            _ => {}
        }
    }

    /// A root cfs_rq update of `cpu` recorded in the answer key: the pending move's next
    /// step runs after the last update before it.
    pub(super) fn cgroup_record(&mut self, cpu: u32) {
        let Some(m) = self.cgroups.pending.get_mut(&cpu) else {
            return;
        };
        m.after = m.after.saturating_sub(1);
        if m.after > 0 {
            return;
        }
        if m.detached {
            if let Some(m) = self.cgroups.pending.remove(&cpu) {
                self.cgroup_attach(cpu, &m);
            }
            return;
        }
        m.detached = true;
        m.after = ATTACH_UPDATES;
        let (pid, ts, into) = (m.pid, m.ts, m.path != "/");
        self.cgroup_detach(cpu, pid, ts, into);
    }

    /// The steps of `m` not done yet.
    fn cgroup_finish(&mut self, cpu: u32, m: Pending) {
        if !m.detached {
            self.cgroup_detach(cpu, m.pid, m.ts, m.path != "/");
        }
        self.cgroup_attach(cpu, &m);
    }

    /// detach_task_cfs_rq() at the move's clock (the delayed-dequeue model: the task's
    /// entity leaves the root cfs_rq when it moves `into` a group).
    fn cgroup_detach(&mut self, cpu: u32, pid: i32, ts: u64, into: bool) {
        self.eevdf_follow_group(ts, pid, into);
        self.detach(pid, cpu, ts);
    }

    /// set_task_rq() and attach_task_cfs_rq() at the move's clock, then update_cfs_group().
    fn cgroup_attach(&mut self, cpu: u32, m: &Pending) {
        self.groups.set(m.pid, &m.path);
        self.attach_detached(m.pid, cpu, m.ts);
        self.settle_groups();
        self.eevdf_enqueue_group();
    }
}
