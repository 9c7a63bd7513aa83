// SPDX-License-Identifier: GPL-2.0-only
//! One CPU's runqueue: the kernel state the simulator keeps per CPU (clocks, cfs, rt and
//! irq PELT signals, uclamp buckets, load weight) and the class/pick model.
//!
//! Simplifications (documented, deliberate):
//! * RT above fair; among RT tasks the highest priority, FIFO order within a priority
//!   (no RR slice, no RT throttling). No deadline class.
//! * Fair sharing is a CFS-like vruntime model, not EEVDF's eligibility/deadline: an
//!   entity's `vruntime` advances by `delta_exec × 1024 / weight` (a task:
//!   `sched_prio_to_weight`, SCHED_IDLE weight 3; a group entity: its
//!   `calc_group_shares()` weight, see [`super::group`]). The pick is hierarchical: in
//!   the root cfs_rq the entity (task or group) with the smallest vruntime, then the same
//!   inside that group, down to a task. At the tick the current task yields once it ran
//!   a base slice and that pick would choose another task. Wake-up preemption is the
//!   kernel's rule at the level where the two tasks' entities share a cfs_rq
//!   (`find_matching_se()`): an idle entity (SCHED_IDLE task, idle group) is preempted by
//!   a non-idle one and never preempts one; two non-idle entities compare vruntimes (the
//!   waking one preempts when a base slice below); a waking SCHED_IDLE task does not
//!   preempt. A waking or migrating task (and a group entity becoming runnable) is placed
//!   at `max(vruntime, min_vruntime - slice / 2)` of its cfs_rq (sleeper credit).
//! * The root cfs_rq's PELT signals (what schedutil, EAS and overutilized read) are the
//!   flat sum of every fair task's contribution: its `load.weight` is the sum of task
//!   weights and tasks attach to it directly, grouped or not (the kernel propagates group
//!   entities' averages instead). No delayed dequeue.
//! * `irq` (`rq->avg_irq`) is fed from a uniform irq rate (`irq_pct`, from the
//!   workload's `schedmath.irq_pct`), not from interrupts; no steal time (see
//!   [`super::engine`]).

use schedmath::pelt::clock::RqClock;
use schedmath::pelt::SchedAvg;
use schedmath::uclamp::{init_uclamp_rq, RqUclamp};
use schedmath::util_est::UtilEst;
use schedmath::Profile;

use super::group::{GroupRq, TaskGroups, ROOT};
use super::BOOT_CLOCK_NS;

/// `sysctl_sched_base_slice` for `ncpus` CPUs: 0.75 ms × (1 + ilog2(min(ncpus, 8)))
/// (`SCHED_TUNABLESCALING_LOG`).
pub fn base_slice_ns(ncpus: usize) -> u64 {
    let n = ncpus.clamp(1, 8) as u64;
    750_000 * (1 + u64::from(n.ilog2()))
}

/// The idle-state stay a CPU is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleStay {
    /// Selected state.
    pub idx: usize,
    /// When the CPU entered it (ns).
    pub since: u64,
}

/// Per-CPU state.
#[derive(Debug, Clone)]
pub struct Rq {
    /// CPU number.
    pub cpu: usize,
    /// `arch_scale_cpu_capacity()`.
    pub capacity_orig: u64,
    /// `capacity_of()`: `rq->cpu_capacity`, refreshed at the tick.
    pub cpu_capacity: u64,
    /// Frequency domain index.
    pub domain: usize,
    /// `arch_scale_freq_capacity()`.
    pub freq_scale: u64,
    /// rq clocks (clock, clock_task, clock_pelt, lost idle time).
    pub clock: RqClock,
    /// `rq->cfs.avg`.
    pub cfs: SchedAvg,
    /// `rq->avg_rt`.
    pub rt: SchedAvg,
    /// `rq->avg_irq`: irq time (`update_irq_load_avg()`), read as `cpu_util_irq()`.
    pub irq: SchedAvg,
    /// Share of wall time this CPU spends in hard/soft irq, % (0: none; below 100).
    pub irq_pct: u64,
    /// `rq->cfs.load.weight` (scaled, `<< 10`).
    pub cfs_load_weight: u64,
    /// `rq->cfs.h_nr_runnable`.
    pub nr_fair: u32,
    /// RT tasks queued or running.
    pub nr_rt: u32,
    /// `rq->cfs.h_nr_idle`: fair tasks queued or running that are SCHED_IDLE or under an
    /// idle group (`sched_idle_rq()` when all runnable tasks are).
    pub h_nr_idle: u32,
    /// Runnable tasks that are not running (task ids).
    pub queue: Vec<usize>,
    /// Running task.
    pub curr: Option<usize>,
    /// `rq->uclamp[]`.
    pub uclamp: RqUclamp,
    /// Smallest vruntime seen (monotonic).
    pub min_vruntime: u64,
    /// Physical accounting: last time work/energy/residency were advanced.
    pub last_acct: u64,
    /// The running task makes progress from here (exit latency after idle).
    pub seg_start: u64,
    /// Generation of the pending completion event.
    pub gen: u64,
    /// Idle state stay, while idle.
    pub idle: Option<IdleStay>,
    /// The tick is stopped (nohz idle).
    pub tick_stopped: bool,
    /// `tick_nohz_get_idle_calls_cpu()`.
    pub idle_calls: u64,
    /// `rq->idle_stamp`: rq clock when the CPU last went idle (boot for a fresh rq).
    pub idle_stamp: u64,
    /// Last blocked-load update of an idle CPU (ns).
    pub last_blocked_update: u64,
    /// Per task group (by id; the root's slot is unused): its cfs_rq and entity here.
    pub grq: Vec<GroupRq>,
    /// Last decay of every group cfs_rq of this CPU (`update_blocked_averages()`, ns).
    pub last_group_update: u64,
}

impl Rq {
    /// A fresh runqueue at time 0.
    pub fn new(cpu: usize, capacity_orig: u64, domain: usize, profile: &Profile) -> Self {
        let avg = SchedAvg {
            util_est: UtilEst::new(profile.util_est),
            ..SchedAvg::default()
        };
        Rq {
            cpu,
            capacity_orig,
            cpu_capacity: capacity_orig,
            domain,
            freq_scale: 1024,
            clock: RqClock::new(BOOT_CLOCK_NS, BOOT_CLOCK_NS, BOOT_CLOCK_NS),
            cfs: avg,
            rt: avg,
            irq: SchedAvg::default(),
            irq_pct: 0,
            cfs_load_weight: 0,
            nr_fair: 0,
            nr_rt: 0,
            h_nr_idle: 0,
            queue: Vec::new(),
            curr: None,
            uclamp: init_uclamp_rq(),
            min_vruntime: 0,
            last_acct: 0,
            seg_start: 0,
            gen: 0,
            idle: None,
            tick_stopped: false,
            idle_calls: 0,
            idle_stamp: BOOT_CLOCK_NS,
            last_blocked_update: 0,
            grq: Vec::new(),
            last_group_update: 0,
        }
    }

    /// `nr_running`.
    pub fn nr_running(&self) -> u32 {
        self.nr_fair + self.nr_rt
    }

    /// `available_idle_cpu()`: nothing runnable.
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.queue.is_empty()
    }

    /// `sched_idle_cpu()`: every runnable task is SCHED_IDLE or under an idle group.
    pub fn is_sched_idle(&self) -> bool {
        self.nr_running() > 0 && self.h_nr_idle == self.nr_running()
    }
}

/// What the pick reads about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickKey {
    /// RT priority (higher first), `None` for fair.
    pub rt_prio: Option<u32>,
    /// vruntime (fair).
    pub vruntime: u64,
    /// Task group (fair).
    pub group: usize,
}

/// The queued task to run next: the highest RT priority (earliest queued first), else the
/// fair pick down the group hierarchy: at each cfs_rq, from the root, the entity with the
/// smallest vruntime (a task's own, or `gse_vruntime` of the child group leading to it;
/// lowest position first on ties), until that entity is a task. Returns its position in
/// `queue`.
pub fn pick_next(
    queue: &[usize],
    key: impl Fn(usize) -> PickKey,
    groups: &TaskGroups,
    gse_vruntime: impl Fn(usize) -> u64,
) -> Option<usize> {
    let mut best_rt: Option<(usize, u32)> = None;
    for (pos, &t) in queue.iter().enumerate() {
        if let Some(p) = key(t).rt_prio {
            if best_rt.is_none_or(|(_, b)| p > b) {
                best_rt = Some((pos, p));
            }
        }
    }
    if let Some((pos, _)) = best_rt {
        return Some(pos);
    }
    let mut level = ROOT;
    loop {
        let mut best: Option<(Result<usize, usize>, u64)> = None;
        for (pos, &t) in queue.iter().enumerate() {
            let k = key(t);
            let (ent, v) = if k.group == level {
                (Ok(pos), k.vruntime)
            } else {
                match groups.child_towards(level, k.group) {
                    Some(g) => (Err(g), gse_vruntime(g)),
                    None => continue,
                }
            };
            if best.is_none_or(|(_, b)| v < b) {
                best = Some((ent, v));
            }
        }
        match best?.0 {
            Ok(pos) => return Some(pos),
            Err(g) => level = g,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::group::SimGroup;

    fn key(rt_prio: Option<u32>, vruntime: u64, group: usize) -> PickKey {
        PickKey {
            rt_prio,
            vruntime,
            group,
        }
    }

    #[test]
    fn rt_beats_fair_and_min_vruntime_wins() {
        let keys = [
            key(None, 10, ROOT),
            key(None, 5, ROOT),
            key(Some(1), 99, ROOT),
        ];
        let flat = TaskGroups::new();
        let pick = |q: &[usize]| pick_next(q, |t| keys[t], &flat, |_| 0);
        assert_eq!(pick(&[0, 1]), Some(1));
        assert_eq!(pick(&[0, 1, 2]), Some(2));
        assert_eq!(pick(&[]), None);
    }

    #[test]
    fn the_pick_descends_into_the_group_with_the_smallest_entity_vruntime() {
        let mut groups = TaskGroups::new();
        let sg = |p: &str| SimGroup {
            path: p.to_string(),
            shares: 1024,
            idle: false,
        };
        let a = groups.insert_chain(&[sg("/a")]).unwrap();
        let ab = groups.insert_chain(&[sg("/a"), sg("/a/b")]).unwrap();
        // Task 0 in the root (vruntime 50); task 1 in /a (vruntime 900); task 2 in /a/b
        // (vruntime 7). Group entities: /a at 40, /a/b at 1000.
        let keys = [key(None, 50, ROOT), key(None, 900, a), key(None, 7, ab)];
        let gse = |g: usize| if g == a { 40 } else { 1000 };
        // Root: /a (40) beats task 0 (50); in /a, task 1 (900) beats /a/b (1000).
        assert_eq!(pick_next(&[0, 1, 2], |t| keys[t], &groups, gse), Some(1));
        // Without task 1, /a/b is the only entity in /a: task 2.
        assert_eq!(pick_next(&[0, 2], |t| keys[t], &groups, gse), Some(1));
    }

    #[test]
    fn base_slice_scales_with_log_cpus() {
        assert_eq!(base_slice_ns(1), 750_000);
        assert_eq!(base_slice_ns(8), 3_000_000);
        assert_eq!(base_slice_ns(12), 3_000_000);
    }
}
