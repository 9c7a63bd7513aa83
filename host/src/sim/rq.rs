// SPDX-License-Identifier: GPL-2.0-only
//! One CPU's runqueue: the kernel state the simulator keeps per CPU (clocks, cfs and rt
//! PELT signals, uclamp buckets, load weight) and the class/pick model.
//!
//! Simplifications (documented, deliberate):
//! * RT above fair; among RT tasks the highest priority, FIFO order within a priority
//!   (no RR slice, no RT throttling). No deadline class.
//! * Fair sharing is a CFS-like vruntime model, not EEVDF's eligibility/deadline: a
//!   task's `vruntime` advances by `delta_exec × 1024 / weight` (`sched_prio_to_weight`,
//!   SCHED_IDLE weight 3); the queued task with the smallest vruntime runs. At the tick
//!   the current task yields once it ran a base slice and a queued task has a smaller
//!   vruntime; a waking fair task preempts when its vruntime is a base slice below the
//!   current one, and always preempts a SCHED_IDLE task. A waking or migrating task is
//!   placed at `max(vruntime, min_vruntime - slice / 2)` (sleeper credit).
//! * One flat root cfs_rq per CPU (no task groups, no delayed dequeue).

use schedmath::pelt::clock::RqClock;
use schedmath::pelt::SchedAvg;
use schedmath::uclamp::{init_uclamp_rq, RqUclamp};
use schedmath::util_est::UtilEst;
use schedmath::Profile;

use super::engine::BOOT_CLOCK_NS;

/// `sched_prio_to_weight[]` (kernel/sched/core.c), nice -20..=19.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `WEIGHT_IDLEPRIO`: the weight of a SCHED_IDLE task.
pub const WEIGHT_IDLEPRIO: u64 = 3;

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
    /// `rq->cfs.load.weight` (scaled, `<< 10`).
    pub cfs_load_weight: u64,
    /// `rq->cfs.h_nr_runnable`.
    pub nr_fair: u32,
    /// RT tasks queued or running.
    pub nr_rt: u32,
    /// SCHED_IDLE tasks queued or running (`sched_idle_rq()` when all are).
    pub nr_idle_policy: u32,
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
    /// Last blocked-load update of an idle CPU (ns).
    pub last_blocked_update: u64,
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
            cfs_load_weight: 0,
            nr_fair: 0,
            nr_rt: 0,
            nr_idle_policy: 0,
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
            last_blocked_update: 0,
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

    /// `sched_idle_cpu()`: only SCHED_IDLE tasks are runnable.
    pub fn is_sched_idle(&self) -> bool {
        self.nr_running() > 0 && self.nr_idle_policy == self.nr_running()
    }
}

/// What the pick reads about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickKey {
    /// RT priority (higher first), `None` for fair.
    pub rt_prio: Option<u32>,
    /// vruntime (fair).
    pub vruntime: u64,
}

/// The queued task to run next: highest RT priority (earliest queued first), else the
/// smallest vruntime (lowest position first). Returns its position in `queue`.
pub fn pick_next(queue: &[usize], key: impl Fn(usize) -> PickKey) -> Option<usize> {
    let mut best: Option<(usize, PickKey)> = None;
    for (pos, &t) in queue.iter().enumerate() {
        let k = key(t);
        let better = match &best {
            None => true,
            Some((_, b)) => match (k.rt_prio, b.rt_prio) {
                (Some(a), Some(b)) => a > b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => k.vruntime < b.vruntime,
            },
        };
        if better {
            best = Some((pos, k));
        }
    }
    best.map(|(pos, _)| pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_beats_fair_and_min_vruntime_wins() {
        let keys = [
            PickKey {
                rt_prio: None,
                vruntime: 10,
            },
            PickKey {
                rt_prio: None,
                vruntime: 5,
            },
            PickKey {
                rt_prio: Some(1),
                vruntime: 99,
            },
        ];
        assert_eq!(pick_next(&[0, 1], |t| keys[t]), Some(1));
        assert_eq!(pick_next(&[0, 1, 2], |t| keys[t]), Some(2));
        assert_eq!(pick_next(&[], |t| keys[t]), None);
    }

    #[test]
    fn base_slice_scales_with_log_cpus() {
        assert_eq!(base_slice_ns(1), 750_000);
        assert_eq!(base_slice_ns(8), 3_000_000);
        assert_eq!(base_slice_ns(12), 3_000_000);
    }
}
