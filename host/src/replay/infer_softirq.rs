// SPDX-License-Identifier: GPL-2.0-only
//! The SCHED softirq in the inferred replay (kernel/sched/fair.c).
//!
//! The tick's trigger_load_balance() raises SCHED_SOFTIRQ once `rq->next_balance` is due
//! (every idle tick, every 15–16 ticks on a CPU that stays busy); its handler
//! (run_rebalance_domains() on 6.1, sched_balance_softirq() on 6.12) first updates the
//! CPU's blocked averages (update_blocked_averages() /
//! sched_balance_update_blocked_averages(): update_rq_clock(), then
//! __update_blocked_fair(): each group cfs_rq on the leaf list with update_tg_load_avg(),
//! its entity on the root with the propagation, then the root cfs_rq), which is how an
//! exited or sleeping task's removed load reaches its cfs_rq and the root when no event
//! follows. A trace that records `softirq_entry` (`vec=7`) shows where it ran; without it
//! an idle tick stands for it ([`ClockPoint::IdleTick`]) and a busy CPU's is not modelled.
//!
//! The walk takes the kernel tens of µs, one group after the other: with probe records as
//! the answer key, a group's step waits for that group cfs_rq's record (or the next other
//! event), so that the records in between are compared with the state the kernel had
//! there, not with the walk's end.

use std::collections::BTreeMap;

use super::{ClockPoint, InferReplay};
use crate::trace::event::{Event, PeltCall, PeltCallKind};

/// The blocked-average walks under way, per CPU.
#[derive(Default)]
pub(super) struct Walks(BTreeMap<u32, Walk>);

/// One CPU's walk: the clock's trace time, the groups whose step is still to come, and
/// the group whose propagation into the root waits for the root's record of its step
/// (`true`: that record has been compared).
pub(super) struct Walk {
    ts: u64,
    groups: Vec<String>,
    propagate: Option<(String, bool)>,
}

impl InferReplay {
    /// `softirq_entry` of SCHED_SOFTIRQ on `cpu` at trace time `ts`: its blocked-average
    /// update, on the clock read after the entry ([`ClockPoint::Softirq`]).
    pub(super) fn sched_softirq(&mut self, cpu: u32, ts: u64) {
        self.sched_softirq = true;
        self.finish_walks();
        let ts = self.at(ClockPoint::Softirq, ts);
        self.blocked_walk(cpu, ts);
    }

    /// update_blocked_averages() of `cpu` on the clock of trace time `ts`: with probe
    /// records, the root now and each group's step at its record ([`Walk`]).
    pub(super) fn blocked_walk(&mut self, cpu: u32, ts: u64) {
        if !self.probe_key {
            self.update_blocked_averages(cpu, ts);
            return;
        }
        self.update(None, cpu, ts);
        let groups = self.group_paths(cpu);
        let walk = Walk {
            ts,
            groups,
            propagate: None,
        };
        self.walks.0.insert(cpu, walk);
    }

    /// update_blocked_averages() of `cpu` at trace time `ts`: the root cfs_rq and every
    /// group cfs_rq with its entity (the running task itself is not updated).
    pub(super) fn update_blocked_averages(&mut self, cpu: u32, ts: u64) {
        self.update(None, cpu, ts);
        self.update_blocked_groups(cpu, ts);
    }

    /// A probe record, before it is compared: a group cfs_rq's record in a walk on its CPU
    /// is that group's step. The kernel's step is update_load_avg() of the group entity on
    /// the root: the root's update (its record) comes before the propagation, which the
    /// replay does after that record's comparison, at the next record.
    pub(super) fn walk_record(&mut self, c: &PeltCall<'_>) {
        let Some(w) = self.walks.0.get_mut(&c.cpu) else {
            return;
        };
        if c.kind != PeltCallKind::CfsRq {
            return;
        }
        if let Some((p, true)) = w.propagate.take_if(|(_, seen)| *seen) {
            self.group_propagate(c.cpu, &p);
        }
        let Some(w) = self.walks.0.get_mut(&c.cpu) else {
            return;
        };
        if c.path == "/" {
            if let Some((_, seen)) = w.propagate.as_mut() {
                *seen = true;
            }
            return;
        }
        let Some(i) = w.groups.iter().position(|p| p == c.path) else {
            return;
        };
        let (ts, path) = (w.ts, w.groups.remove(i));
        // A step without a root record (skip_blocked_update(): nothing to propagate).
        let before = w.propagate.replace((path.clone(), false));
        if let Some((p, _)) = before {
            self.group_propagate(c.cpu, &p);
        }
        self.update_blocked_group_levels(c.cpu, &path, ts);
    }

    /// Any other event written on `cpu`: the walks under way on the runqueues it takes
    /// are done (the walk holds its rq lock throughout): the writer's, and a wake-up's or
    /// a migration's other CPU. Another CPU's events can come in the middle of a walk in
    /// trace time (6.1 `cgroup-weight-2`, cpu1 at 16.0491 s: its walk's `/bg` record, a
    /// vCPU pause of 1.9 ms with cpu0's `sched_switch` in it, then the group entity's and
    /// the root's records, the root before the propagation).
    pub(super) fn finish_walks_for(&mut self, cpu: u32, ev: &Event<'_>) {
        let other = match *ev {
            Event::Wakeup { target_cpu, .. } => target_cpu,
            Event::Migrate {
                orig_cpu, dest_cpu, ..
            } => Some(if orig_cpu == cpu { dest_cpu } else { orig_cpu }),
            _ => None,
        };
        for c in [Some(cpu), other].into_iter().flatten() {
            if let Some(w) = self.walks.0.remove(&c) {
                self.finish_walk(c, w);
            }
        }
    }

    /// The rest of one CPU's walk.
    fn finish_walk(&mut self, cpu: u32, w: Walk) {
        if let Some((p, _)) = w.propagate {
            self.group_propagate(cpu, &p);
        }
        for p in w.groups {
            self.update_blocked_group(cpu, &p, w.ts);
        }
    }

    /// Any other event: the walks under way are done (the rq lock was held throughout).
    pub(super) fn finish_walks(&mut self) {
        for (cpu, w) in std::mem::take(&mut self.walks.0) {
            self.finish_walk(cpu, w);
        }
    }
}
