// SPDX-License-Identifier: GPL-2.0-only
//! A fork whose enqueue's update is its CPU's first answer-key record of the root cfs_rq
//! (kernel/sched/core.c wake_up_new_task(): post_init_entity_util_avg(), then
//! activate_task() whose update_load_avg() writes that record).
//!
//! The replay starts each cfs_rq that exists when the trace starts from the state after
//! its first record. When that record is the enqueue of a forked task (written by the
//! forking CPU before `sched_wakeup_new`), post_init_entity_util_avg() (fair.c) shares
//! the cfs_rq's util as it was before that update, its last update possibly long ago
//! (6.12 `wakeup-storm-2`, cpu1 at 16.932140 s: its root last updated 24 ms before, util
//! 756 there and 449 after the decay; `sh` 169 starts at the cap (1024 − 756) / 2 = 134,
//! the replay gave it 283 from the decayed state).

use std::collections::HashMap;

use schedmath::pelt::SchedAvg;

use super::InferReplay;

/// Per CPU, the root cfs_rq as the replay started it from its first record (after the
/// record's update) and the record's state before that update.
#[derive(Default)]
pub(super) struct FirstRecords(HashMap<u32, (SchedAvg, SchedAvg)>);

impl InferReplay {
    /// The root cfs_rq of `cpu` starts from its first record: `after` (as the replay holds
    /// it) and `before` (the record's state before its update).
    pub(super) fn first_root_record(&mut self, cpu: u32, after: SchedAvg, before: SchedAvg) {
        self.first_records.0.insert(cpu, (after, before));
    }

    /// The cfs_rq a fork's post_init_entity_util_avg() on `cpu` reads: `cfs`, or, while the
    /// root is still as its first record left it, the state before that record's update.
    pub(super) fn post_init_cfs(&mut self, cpu: u32, root: bool, cfs: SchedAvg) -> SchedAvg {
        match self.first_records.0.remove(&cpu) {
            Some((after, before)) if root && after == cfs => before,
            _ => cfs,
        }
    }
}
