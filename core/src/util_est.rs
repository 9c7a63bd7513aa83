// SPDX-License-Identifier: GPL-2.0-only
//! Estimated utilization (util_est) — kernel/sched/fair.c.
//!
//! PELT's util_avg decays while a task sleeps, so a periodic task looks smaller at each
//! wake-up than it is. util_est keeps, per task, the utilization seen when the task last went
//! to sleep, smoothed downwards by an EWMA with weight 1/4 (`UTIL_EST_WEIGHT_SHIFT`), and sums
//! the estimates of the queued tasks in the root cfs_rq. A flag bit (`UTIL_AVG_UNCHANGED`)
//! marks an estimate taken when util_avg has not moved since, so the next dequeue skips it.
//!
//! Two kernel shapes exist, with different state layouts ([`UtilEst`]):
//! * mainline (after "sched/fair: Remove SCHED_FEAT(UTIL_EST_FASTUP, true)" and
//!   "sched/fair: Simplify util_est"): one `unsigned int` per task, the flag in bit 31, and
//!   the runnable check of "sched/pelt: Avoid underestimation of task utilization" that
//!   skips the update when the task did not get all the CPU time it wanted;
//! * pre-v6.9 (the v6.6-era tree of the fixtures): `struct util_est { enqueued, ewma }`, the
//!   flag in `enqueued`, the `UTIL_EST_FASTUP` feature, the signed `within_margin()` tests
//!   and the capacity check; no runnable check.
//!
//! The layout is chosen once from [`Profile::util_est`](crate::profile::Profile) with
//! [`UtilEst::new`]; every function below matches on it where the kernels differ. All
//! arithmetic is on `unsigned int` as in the kernel (the EWMA shift wraps).

use crate::math::SCHED_CAPACITY_SCALE;
use crate::pelt::SchedAvg;
use crate::profile::UtilEstVersion;

/// `UTIL_AVG_UNCHANGED`: bit 31 of the (enqueued) estimate; set when the estimate was
/// taken, cleared by the next PELT update of the task that crosses a period.
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// `UTIL_EST_WEIGHT_SHIFT`: the EWMA gives new samples a weight of `1 >> 2 = 1/4`.
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// `UTIL_EST_MARGIN`: `SCHED_CAPACITY_SCALE / 100` (a `long` in the kernel), ~1 %.
pub const UTIL_EST_MARGIN: u64 = SCHED_CAPACITY_SCALE / 100;

/// The `util_est` member of `struct sched_avg`, in the layout of one kernel version.
///
/// For a task it is the estimate (with the flag); for a cfs_rq only the enqueued sum is
/// used (mainline: the whole `unsigned int`; pre-v6.9: `util_est.enqueued`, `ewma` unused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum UtilEst {
    /// Since v6.9: `unsigned int util_est`, the EWMA with `UTIL_AVG_UNCHANGED` in bit 31.
    Mainline(u32),
    /// Before v6.9: `struct util_est`.
    PreV6_9 {
        /// `enqueued`: util_avg at the last dequeue, with `UTIL_AVG_UNCHANGED` in bit 31
        /// (for a cfs_rq: the sum of its queued tasks' estimates).
        enqueued: u32,
        /// `ewma`: the moving average of `enqueued` samples.
        ewma: u32,
    },
}

impl Default for UtilEst {
    fn default() -> Self {
        UtilEst::Mainline(0)
    }
}

impl UtilEst {
    /// A zeroed estimate in the layout of `version` (from `Profile::util_est`).
    pub const fn new(version: UtilEstVersion) -> Self {
        match version {
            UtilEstVersion::Mainline => UtilEst::Mainline(0),
            UtilEstVersion::PreV6_9 => UtilEst::PreV6_9 {
                enqueued: 0,
                ewma: 0,
            },
        }
    }

    /// The kernel version whose layout this is.
    pub const fn version(&self) -> UtilEstVersion {
        match self {
            UtilEst::Mainline(_) => UtilEstVersion::Mainline,
            UtilEst::PreV6_9 { .. } => UtilEstVersion::PreV6_9,
        }
    }

    /// The word that carries `UTIL_AVG_UNCHANGED` and, for a cfs_rq, the enqueued sum:
    /// `util_est` (mainline) or `util_est.enqueued` (pre-v6.9).
    pub const fn enqueued(&self) -> u32 {
        match *self {
            UtilEst::Mainline(v) => v,
            UtilEst::PreV6_9 { enqueued, .. } => enqueued,
        }
    }

    fn enqueued_mut(&mut self) -> &mut u32 {
        match self {
            UtilEst::Mainline(v) => v,
            UtilEst::PreV6_9 { enqueued, .. } => enqueued,
        }
    }

    /// `cfs_se_util_change()` (kernel/sched/pelt.h): a PELT update that crossed a period
    /// clears `UTIL_AVG_UNCHANGED` (mainline: in `util_est`; pre-v6.9: in `enqueued`).
    pub fn clear_unchanged_flag(&mut self) {
        *self.enqueued_mut() &= !UTIL_AVG_UNCHANGED;
    }
}

/// `task_util()`: the task's `util_avg`.
pub const fn task_util(p: &SchedAvg) -> u64 {
    p.util_avg
}

/// `task_runnable()`: the task's `runnable_avg`.
pub const fn task_runnable(p: &SchedAvg) -> u64 {
    p.runnable_avg
}

/// `_task_util_est()`: the task's estimate without the flag.
///
/// Mainline: `util_est & ~UTIL_AVG_UNCHANGED`. Pre-v6.9: `max(ewma, enqueued & ~flag)`.
pub const fn _task_util_est(p: &SchedAvg) -> u64 {
    match p.util_est {
        UtilEst::Mainline(v) => (v & !UTIL_AVG_UNCHANGED) as u64, // widened to unsigned long
        UtilEst::PreV6_9 { enqueued, ewma } => {
            let enq = enqueued & !UTIL_AVG_UNCHANGED;
            (if ewma > enq { ewma } else { enq }) as u64 // widened to unsigned long
        }
    }
}

/// `task_util_est()`: `max(task_util(p), _task_util_est(p))`.
pub const fn task_util_est(p: &SchedAvg) -> u64 {
    let est = _task_util_est(p);
    if p.util_avg > est {
        p.util_avg
    } else {
        est
    }
}

/// `util_est_enqueue()`: adds the task's estimate to the root cfs_rq's enqueued sum.
///
/// Trap: the sum is an `unsigned int`; the (flag-free) estimate is added with u32 wrap.
pub fn util_est_enqueue(cfs_rq: &mut SchedAvg, p: &SchedAvg) {
    let enqueued = cfs_rq.util_est.enqueued_mut();
    *enqueued = enqueued.wrapping_add(_task_util_est(p) as u32); // stored in an unsigned int
}

/// `util_est_dequeue()`: removes the task's estimate from the root cfs_rq's sum, saturating
/// at 0 (`enqueued -= min(enqueued, _task_util_est(p))`, both as `unsigned int`).
pub fn util_est_dequeue(cfs_rq: &mut SchedAvg, p: &SchedAvg) {
    let enqueued = cfs_rq.util_est.enqueued_mut();
    let task = _task_util_est(p) as u32; // min_t(unsigned int, ...)
    *enqueued -= core::cmp::min(*enqueued, task);
}

/// What pre-v6.9 `util_est_update()` reads besides the task (mainline ignores both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UtilEstCpu {
    /// `capacity_orig_of(cpu)`: the task's CPU's original capacity.
    pub capacity_orig: u64,
    /// `sched_feat(UTIL_EST_FASTUP)` (default on).
    pub util_est_fastup: bool,
}

impl Default for UtilEstCpu {
    fn default() -> Self {
        UtilEstCpu {
            capacity_orig: SCHED_CAPACITY_SCALE,
            util_est_fastup: true,
        }
    }
}

/// `within_margin()` (pre-v6.9): `abs(value) < margin` as
/// `(unsigned int)(value + margin - 1) < 2 * margin - 1`.
///
/// Trap: `value` arrives as an `int` narrowed from a `long` (u32 differences become negative
/// above 2^31), and the addition is done as the compiled kernel does it, wrapping.
pub const fn within_margin(value: i32, margin: i32) -> bool {
    (value.wrapping_add(margin).wrapping_sub(1) as u32)
        < (margin.wrapping_mul(2).wrapping_sub(1) as u32)
}

/// `util_est_update()`: at a dequeue for sleep, fold the task's current util_avg into its
/// estimate and re-arm `UTIL_AVG_UNCHANGED`.
///
/// Both versions skip when `!task_sleep` or when the flag is still set (util_avg has not
/// changed since the last estimate). Then, at the point where the kernels differ:
/// * mainline: `dequeued = (u32)util_avg`; `ewma <= dequeued` takes `dequeued`; a difference
///   under `UTIL_EST_MARGIN`, or `dequeued + 10 < runnable_avg` (the task did not get the CPU
///   time it wanted; computed in `long`, no wrap), keeps the old ewma; otherwise
///   `ewma = ((ewma << 2) - diff) >> 2` in u32 (the shift wraps for ewma >= 2^30). Every
///   path past the two skips writes the ewma back with the flag set.
/// * pre-v6.9: `enqueued = (u32)util_avg`; with `UTIL_EST_FASTUP` a strict `ewma < enqueued`
///   jumps the ewma up; if the ewma difference is within the margin the update ends there —
///   written (flag set) only when the enqueued value moved by at least the margin, else
///   nothing is written at all; a strict `util_avg > capacity_orig` returns without writing;
///   otherwise `ewma = ((ewma << 2) + (enqueued - ewma)) >> 2` in u32.
pub fn util_est_update(p: &mut SchedAvg, task_sleep: bool, cpu: &UtilEstCpu) {
    if !task_sleep {
        return;
    }
    if p.util_est.enqueued() & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let util = task_util(p) as u32; // the kernel stores it in an unsigned int
    let runnable = task_runnable(p);
    match p.util_est {
        UtilEst::Mainline(ref mut slot) => {
            let ewma = *slot;
            let ewma = 'done: {
                if ewma <= util {
                    break 'done util;
                }
                let last_ewma_diff = ewma - util;
                if u64::from(last_ewma_diff) < UTIL_EST_MARGIN {
                    break 'done ewma;
                }
                if u64::from(util) + UTIL_EST_MARGIN < runnable {
                    break 'done ewma;
                }
                (ewma << UTIL_EST_WEIGHT_SHIFT).wrapping_sub(last_ewma_diff)
                    >> UTIL_EST_WEIGHT_SHIFT
            };
            // Written in place: the variant stays, only its value changes.
            *slot = ewma | UTIL_AVG_UNCHANGED;
        }
        UtilEst::PreV6_9 { enqueued, ewma } => {
            // `long` differences: the ewma one is a u32 subtraction widened, the enqueued
            // one is exact.
            let last_enqueued_diff = i64::from(enqueued) - i64::from(util);
            let ewma = 'done: {
                if cpu.util_est_fastup && ewma < util {
                    break 'done util;
                }
                let last_ewma_diff = util.wrapping_sub(ewma);
                let margin = UTIL_EST_MARGIN as i32; // 10
                                                     // within_margin() takes ints: both longs are narrowed (wrapping) here.
                if within_margin(last_ewma_diff as i32, margin) {
                    if !within_margin(last_enqueued_diff as i32, margin) {
                        break 'done ewma;
                    }
                    return;
                }
                if task_util(p) > cpu.capacity_orig {
                    return;
                }
                (ewma << UTIL_EST_WEIGHT_SHIFT).wrapping_add(last_ewma_diff)
                    >> UTIL_EST_WEIGHT_SHIFT
            };
            p.util_est = UtilEst::PreV6_9 {
                enqueued: util | UTIL_AVG_UNCHANGED,
                ewma,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(util_est: UtilEst, util_avg: u64, runnable_avg: u64) -> SchedAvg {
        SchedAvg {
            util_est,
            util_avg,
            runnable_avg,
            ..SchedAvg::default()
        }
    }

    fn old(enqueued: u32, ewma: u32) -> UtilEst {
        UtilEst::PreV6_9 { enqueued, ewma }
    }

    #[test]
    fn mainline_flag_is_masked_when_summing_into_the_cfs_rq() {
        let p = task(UtilEst::Mainline(UTIL_AVG_UNCHANGED | 300), 100, 100);
        let mut rq = SchedAvg::default();
        util_est_enqueue(&mut rq, &p);
        assert_eq!(rq.util_est, UtilEst::Mainline(300));
        assert_eq!(_task_util_est(&p), 300);
        assert_eq!(task_util_est(&p), 300);
        util_est_dequeue(&mut rq, &p);
        util_est_dequeue(&mut rq, &p);
        assert_eq!(rq.util_est, UtilEst::Mainline(0));
    }

    #[test]
    fn cfs_rq_enqueued_sum_wraps_in_u32() {
        let p = task(UtilEst::Mainline(0x7fff_ffff), 0, 0);
        let mut rq = task(UtilEst::Mainline(0xffff_fff0), 0, 0);
        util_est_enqueue(&mut rq, &p);
        assert_eq!(rq.util_est, UtilEst::Mainline(0x7fff_ffef));
    }

    #[test]
    fn mainline_update_skips_without_sleep_or_with_flag() {
        let mut p = task(UtilEst::Mainline(300), 100, 100);
        util_est_update(&mut p, false, &UtilEstCpu::default());
        assert_eq!(p.util_est, UtilEst::Mainline(300));
        p.util_est = UtilEst::Mainline(300 | UTIL_AVG_UNCHANGED);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        assert_eq!(p.util_est, UtilEst::Mainline(300 | UTIL_AVG_UNCHANGED));
    }

    #[test]
    fn mainline_ewma_steps_a_quarter_and_rearms_the_flag() {
        let mut p = task(UtilEst::Mainline(300), 100, 100);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        // ((300 << 2) - 200) >> 2 = 250
        assert_eq!(p.util_est, UtilEst::Mainline(250 | UTIL_AVG_UNCHANGED));
    }

    #[test]
    fn mainline_margin_and_runnable_checks_keep_the_ewma_but_rearm() {
        let mut p = task(UtilEst::Mainline(409), 400, 400);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        assert_eq!(p.util_est, UtilEst::Mainline(409 | UTIL_AVG_UNCHANGED));
        // 400 + 10 < 411: the task waited, keep the ewma.
        let mut p = task(UtilEst::Mainline(500), 400, 411);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        assert_eq!(p.util_est, UtilEst::Mainline(500 | UTIL_AVG_UNCHANGED));
        // 400 + 10 == 410 is not below: the ewma moves ((2000 - 100) >> 2 = 475).
        let mut p = task(UtilEst::Mainline(500), 400, 410);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        assert_eq!(p.util_est, UtilEst::Mainline(475 | UTIL_AVG_UNCHANGED));
    }

    #[test]
    fn mainline_util_is_narrowed_to_u32() {
        // util_avg 2^32 + 5 is seen as 5.
        let mut p = task(UtilEst::Mainline(100), (1 << 32) + 5, 0);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        // ((100 << 2) - 95) >> 2 = 76
        assert_eq!(p.util_est, UtilEst::Mainline(76 | UTIL_AVG_UNCHANGED));
    }

    #[test]
    fn util_est_ewma_shl_wrap() {
        // ewma = 2^30 + 100: ewma << 2 wraps to 400; 400 - (ewma - 0) wraps again.
        let ewma = (1u32 << 30) + 100;
        let mut p = task(UtilEst::Mainline(ewma), 0, 0);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        let expect = 400u32.wrapping_sub(ewma) >> 2;
        assert_eq!(expect, 0x3000_0000 + 75);
        assert_eq!(p.util_est, UtilEst::Mainline(expect | UTIL_AVG_UNCHANGED));
        // pre-v6.9: (ewma << 2) + (util - ewma) in u32.
        let mut p = task(old(0, ewma), 0, 0);
        util_est_update(&mut p, true, &UtilEstCpu::default());
        let expect = 400u32.wrapping_add(0u32.wrapping_sub(ewma)) >> 2;
        assert_eq!(p.util_est, old(UTIL_AVG_UNCHANGED, expect));
    }

    #[test]
    fn pre_v6_9_fastup_is_strict() {
        let cpu = UtilEstCpu::default();
        let mut p = task(old(100, 100), 500, 0);
        util_est_update(&mut p, true, &cpu);
        assert_eq!(p.util_est, old(500 | UTIL_AVG_UNCHANGED, 500));
        // ewma == util: no fast-up; both differences within the margin -> nothing written.
        let mut p = task(old(405, 400), 400, 0);
        util_est_update(&mut p, true, &cpu);
        assert_eq!(p.util_est, old(405, 400));
        // enqueued moved by 30: written with the flag, ewma unchanged.
        let mut p = task(old(430, 400), 400, 0);
        util_est_update(&mut p, true, &cpu);
        assert_eq!(p.util_est, old(400 | UTIL_AVG_UNCHANGED, 400));
    }

    #[test]
    fn pre_v6_9_without_fastup_averages_increases_too() {
        let cpu = UtilEstCpu {
            util_est_fastup: false,
            ..UtilEstCpu::default()
        };
        let mut p = task(old(100, 100), 500, 0);
        util_est_update(&mut p, true, &cpu);
        // (400 + 400) >> 2 = 200
        assert_eq!(p.util_est, old(500 | UTIL_AVG_UNCHANGED, 200));
    }

    #[test]
    fn pre_v6_9_capacity_check_is_strict() {
        let cpu = UtilEstCpu {
            capacity_orig: 446,
            util_est_fastup: true,
        };
        let mut p = task(old(600, 500), 446, 0);
        util_est_update(&mut p, true, &cpu);
        // util == capacity: the EWMA runs: (2000 + (446 - 500)) >> 2 = 486
        assert_eq!(p.util_est, old(446 | UTIL_AVG_UNCHANGED, 486));
        let mut p = task(old(600, 500), 447, 0);
        util_est_update(&mut p, true, &cpu);
        assert_eq!(p.util_est, old(600, 500));
    }

    #[test]
    fn pre_v6_9_flag_lives_in_enqueued_and_task_util_est_takes_the_max() {
        let mut p = task(old(300 | UTIL_AVG_UNCHANGED, 280), 100, 0);
        assert_eq!(_task_util_est(&p), 300);
        assert_eq!(task_util_est(&p), 300);
        p.util_est.clear_unchanged_flag();
        assert_eq!(p.util_est, old(300, 280));
        let mut rq = SchedAvg {
            util_est: UtilEst::new(UtilEstVersion::PreV6_9),
            ..SchedAvg::default()
        };
        util_est_enqueue(&mut rq, &p);
        assert_eq!(rq.util_est.enqueued(), 300);
        assert_eq!(rq.util_est.version(), UtilEstVersion::PreV6_9);
    }

    #[test]
    fn within_margin_is_the_signed_abs_test() {
        assert!(within_margin(9, 10));
        assert!(within_margin(-9, 10));
        assert!(!within_margin(10, 10));
        assert!(!within_margin(-10, 10));
        // A u32 difference above 2^31 becomes negative as an int.
        assert!(within_margin(0xffff_fffb_u32 as i32, 10));
    }
}
