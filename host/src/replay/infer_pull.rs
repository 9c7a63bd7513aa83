// SPDX-License-Identifier: GPL-2.0-only
//! v6.12: a load balance's detach of a grouped task, placed by the records of its dequeue
//! (kernel/sched/fair.c detach_task() → dequeue_task_fair() → dequeue_entities()).
//!
//! The balancing CPU writes the moved task's dequeue records before its
//! `sched_migrate_task` (set_task_cpu() comes after deactivate_task()). A task of a group
//! is updated on its group's cfs_rq, then the group's entity on the root; the detach
//! (DO_DETACH, task_on_rq_migrating()) is propagated to the root right after that root
//! update. When the group's entity is then delayed (its cfs_rq emptied: DEQUEUE_SLEEP
//! above the task's level, and it is not eligible), dequeue_entities()' second loop
//! updates it on the root again, already with the detach propagated (6.12
//! `cgroup-weight`, cpu0 at 17.0285 s: root util 841 → 561 before cpu1's pull of `bgp`
//! is written). So the replay detaches such a task right after the root record that
//! follows its own record, when the look-ahead shows the writer's next event is its move.

use std::collections::HashMap;

use super::ahead::Next;
use super::InferReplay;
use crate::replay::EntityKey;
use crate::trace::event::PeltCall;

/// The last task record per cfs_rq CPU (a root record right after it is that task's
/// update's).
#[derive(Default)]
pub(super) struct Pulls {
    last_task: HashMap<u32, i32>,
}

impl InferReplay {
    /// After the answer-key record `c` written by `writer` at trace time `ts`: the move of
    /// a grouped task whose dequeue this root record ends, done now.
    pub(super) fn pull_record(&mut self, ts: u64, writer: u32, c: &PeltCall<'_>) {
        if self.eevdf.is_none() {
            return;
        }
        let x = match EntityKey::of_call(c) {
            EntityKey::Task(pid) => {
                self.pulls.last_task.insert(c.cpu, pid);
                return;
            }
            EntityKey::CfsRq(x, p) if p == "/" => x,
            _ => return,
        };
        let Some(pid) = self.pulls.last_task.remove(&x) else {
            return;
        };
        let movable = self
            .tasks
            .get(&pid)
            .is_some_and(|t| t.cpu == x && t.on_rq && !t.detached && !t.running && !t.delayed);
        if !movable || self.groups.path(pid).is_none() {
            return;
        }
        let Some((_, Next::Migrate(p, from, to))) = self.ahead_next_on(ts, writer) else {
            return;
        };
        if p != pid || from != x || to == x {
            return;
        }
        self.migrate_group_entity(pid, (from, to), ts);
        self.migrate(ts, pid, from, to, false);
    }
}
