// SPDX-License-Identifier: GPL-2.0-only
//! CPU capacity, fitness and utilization — kernel/sched/fair.c (effective_cpu_util moved
//! there from syscalls.c after v6.17); the arch_topology.c side (capacity normalisation,
//! frequency scale, pressure) is in [`topology`].
//!
//! A CPU's capacity is what is left of its original capacity (`cpu_scale`, 1024 for the
//! biggest CPU at its highest frequency) once hardware/cpufreq pressure and RT/DL/IRQ time
//! are taken out; "fits" compares a utilization with it through a ~20 % margin, and uclamp
//! can force a fit (uclamp_max) or ask for more than the CPU has (uclamp_min, the -1
//! result). A CPU's utilization is the sum of its CFS, RT and DL signals, squeezed into
//! the part of its capacity that interrupts leave over; uclamp and DL bandwidth give the
//! floor and ceiling schedutil and EAS work between. All arithmetic is the 64-bit kernel's
//! `unsigned long` (u64), wrapping where C wraps.

use crate::math::SCHED_CAPACITY_SCALE;
use crate::pelt::SchedAvg;
use crate::util_est::UtilEst;

pub mod topology;

pub use crate::util_est::UTIL_AVG_UNCHANGED;

/// `BW_SHIFT`: fraction bits of DL bandwidth (1 << 20 = one full CPU).
pub const BW_SHIFT: u32 = 20;

/// `fits_capacity(cap, max)`: does `cap` fit in `max` with a ~20 % margin,
/// `cap * 1280 < max * 1024`?
///
/// Trap: both products are 64-bit and wrap, so huge values can "fit" (u64::MAX * 1280
/// wraps to a small number).
#[inline]
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap.wrapping_mul(1280) < max.wrapping_mul(1024)
}

/// `capacity_greater(cap1, cap2)`: is `cap1` noticeably (~5 %) greater than `cap2`,
/// `cap1 * 1024 > cap2 * 1078`? Both products wrap like [`fits_capacity`].
#[inline]
pub fn capacity_greater(cap1: u64, cap2: u64) -> bool {
    cap1.wrapping_mul(1024) > cap2.wrapping_mul(1078)
}

/// The per-CPU capacity state the fair class reads, as explicit inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpuCapacity {
    /// `arch_scale_cpu_capacity(cpu)`: per-CPU `cpu_scale`.
    pub capacity_orig: u64,
    /// `rq->cpu_capacity`, i.e. `capacity_of(cpu)`.
    pub cpu_capacity: u64,
    /// `hw_load_avg(rq)`: PELT-averaged hardware (thermal) pressure.
    pub hw_load_avg: u64,
    /// `cpufreq_get_pressure(cpu)`: capacity lost to the cpufreq policy's max.
    pub cpufreq_pressure: u64,
}

/// `get_actual_cpu_capacity()`: original capacity minus the larger of the hardware and
/// cpufreq pressures.
///
/// Traps: the pressures are not summed, the larger one wins; the subtraction is unsigned,
/// so a pressure above the capacity wraps to a huge "capacity".
#[inline]
pub fn get_actual_cpu_capacity(cpu: &CpuCapacity) -> u64 {
    cpu.capacity_orig
        .wrapping_sub(core::cmp::max(cpu.hw_load_avg, cpu.cpufreq_pressure))
}

/// The RT/DL/IRQ utilization `scale_rt_capacity()` takes out of a CPU's capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RqPressureUtil {
    /// `cpu_util_rt(rq)`: `rq->avg_rt.util_avg`.
    pub rt_util_avg: u64,
    /// `cpu_util_dl(rq)`: `rq->avg_dl.util_avg`.
    pub dl_util_avg: u64,
    /// `cpu_util_irq(rq)`: `rq->avg_irq.util_avg`.
    pub irq_util_avg: u64,
}

/// `scale_rt_capacity()`: the capacity left to CFS, `(max - used) * (max - irq) / max`
/// where `max` is [`get_actual_cpu_capacity`] and `used` is RT + DL utilization.
///
/// Traps: saturation returns 1, not 0 — when IRQ alone reaches `max`, and when RT + DL
/// reach it; `max == 0` always takes the first of those, so nothing divides by zero.
pub fn scale_rt_capacity(cpu: &CpuCapacity, rq: &RqPressureUtil) -> u64 {
    let max = get_actual_cpu_capacity(cpu);
    let irq = rq.irq_util_avg;
    if irq >= max {
        return 1;
    }
    let used = rq.rt_util_avg.wrapping_add(rq.dl_util_avg);
    if used >= max {
        return 1;
    }
    scale_irq_capacity(max - used, irq, max)
}

/// `update_cpu_capacity()`: the value stored in `rq->cpu_capacity` (and the sched
/// group's capacities): [`scale_rt_capacity`], with 0 raised to 1 so no capacity is ever
/// zero.
#[inline]
pub fn update_cpu_capacity(cpu: &CpuCapacity, rq: &RqPressureUtil) -> u64 {
    match scale_rt_capacity(cpu, rq) {
        0 => 1,
        c => c,
    }
}

/// `check_cpu_capacity()`: has RT/DL/IRQ/pressure taken a noticeable part of the CPU,
/// `cpu_capacity * imbalance_pct < capacity_orig * 100`? (64-bit, wrapping.)
#[inline]
pub fn check_cpu_capacity(capacity_orig: u64, cpu_capacity: u64, imbalance_pct: u32) -> bool {
    cpu_capacity.wrapping_mul(u64::from(imbalance_pct)) < capacity_orig.wrapping_mul(100)
}

/// `util_fits_cpu()`: does `util` fit the CPU, given the uclamp hints? 1 = fits,
/// 0 = does not, -1 = fits but uclamp_min asks for more than the CPU can give now.
///
/// Traps: -1 is "true" to C callers that test the int (cpu_overutilized treats it as
/// fitting) while task_fits_cpu only accepts a strict 1; with uclamp unused the hints are
/// ignored entirely; the uclamp_max forced fit does not apply to a 1024 CPU with a 1024
/// cap (no cap at all); uclamp_min is lowered to uclamp_max before the -1 test; the
/// margin test uses capacity_of but the -1 test the pressure-only actual capacity.
#[inline] // static inline in kernel/sched/fair.c
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    uclamp_used: bool,
    cpu: &CpuCapacity,
) -> i32 {
    let fits = fits_capacity(util, cpu.cpu_capacity);
    if !uclamp_used {
        return i32::from(fits);
    }
    let capacity_orig = cpu.capacity_orig;
    let no_cap = capacity_orig == SCHED_CAPACITY_SCALE && uclamp_max == SCHED_CAPACITY_SCALE;
    let uclamp_max_fits = !no_cap && uclamp_max <= capacity_orig;
    let fits = fits || uclamp_max_fits;
    let uclamp_min = core::cmp::min(uclamp_min, uclamp_max);
    if fits && util < uclamp_min && uclamp_min > get_actual_cpu_capacity(cpu) {
        return -1;
    }
    i32::from(fits)
}

/// `task_util_est(p)` of a task given by its `util_avg` and its estimate in the mainline
/// layout (an `unsigned int` carrying [`UTIL_AVG_UNCHANGED`]); a pre-v6.9 caller passes
/// its `_task_util_est()`. The arithmetic is [`crate::util_est::task_util_est`]'s.
fn task_util_est(util_avg: u64, util_est: u32) -> u64 {
    crate::util_est::task_util_est(&SchedAvg {
        util_avg,
        util_est: UtilEst::Mainline(util_est),
        ..SchedAvg::default()
    })
}

/// `task_fits_cpu()`: does the task fit the CPU fully, utilization and uclamp hints?
///
/// `uclamp_min`/`uclamp_max` are `uclamp_eff_value(p, ...)` (see `crate::uclamp`).
/// Trap: only a strict 1 from [`util_fits_cpu`] counts; its -1 ("fits, but the boost is
/// not met") is a misfit here.
pub fn task_fits_cpu(
    util_avg: u64,
    util_est: u32,
    uclamp_min: u64,
    uclamp_max: u64,
    uclamp_used: bool,
    cpu: &CpuCapacity,
) -> bool {
    let util = task_util_est(util_avg, util_est);
    util_fits_cpu(util, uclamp_min, uclamp_max, uclamp_used, cpu) > 0
}

/// A CFS runqueue's utilization signals (`rq->cfs.avg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfsRqUtil {
    /// `cfs_rq->avg.util_avg`.
    pub util_avg: u64,
    /// `cfs_rq->avg.runnable_avg`.
    pub runnable_avg: u64,
    /// `cfs_rq->avg.util_est` (an unsigned int; used as is, no flag masking).
    pub util_est: u32,
}

/// The task `cpu_util()` moves in or out of the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TaskUtil {
    /// `task_cpu(p)`.
    pub task_cpu: i32,
    /// `p->se.avg.util_avg`.
    pub util_avg: u64,
    /// `p->se.avg.util_est`, possibly carrying [`UTIL_AVG_UNCHANGED`].
    pub util_est: u32,
    /// `task_on_rq_queued(p)`.
    pub on_rq_queued: bool,
    /// `current == p` on the CPU running the computation.
    pub is_current: bool,
    /// `p->se.avg.last_update_time` (0 = new task, never attached).
    pub last_update_time: u64,
}

/// Everything `cpu_util()` reads about one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpuUtilRq {
    /// The CPU's number.
    pub cpu: i32,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `rq->cfs.avg`.
    pub cfs: CfsRqUtil,
    /// `sched_feat(UTIL_EST)` (on by default).
    pub util_est_feat: bool,
}

/// `lsub_positive()`: `*v -= min(*v, d)`, an unsigned subtraction that stops at 0.
#[inline]
fn lsub_positive(v: u64, d: u64) -> u64 {
    v - core::cmp::min(v, d)
}

/// `cpu_util()`: the CFS utilization of `rq.cpu` if task `p` moved to `dst_cpu` (-1: away
/// from everywhere), boosted by runnable_avg when `boost`, at most the CPU's capacity.
///
/// Traps: util_avg and util_est are adjusted separately and only then max-ed; removal
/// stops at zero (`lsub_positive`), addition wraps; the task's util_est is added when
/// `dst_cpu == cpu` even if the task already runs there, and removed only while it is
/// queued or current; the task's flag bit is masked, the rq's util_est is used as is.
/// With no task and `dst_cpu == cpu` the kernel would dereference NULL; here nothing is
/// added.
pub fn cpu_util(rq: &CpuUtilRq, p: Option<&TaskUtil>, dst_cpu: i32, boost: bool) -> u64 {
    let cpu = rq.cpu;
    let mut util = rq.cfs.util_avg;
    if boost {
        util = core::cmp::max(util, rq.cfs.runnable_avg);
    }
    if let Some(p) = p {
        if p.task_cpu == cpu && dst_cpu != cpu {
            util = lsub_positive(util, p.util_avg);
        } else if p.task_cpu != cpu && dst_cpu == cpu {
            util = util.wrapping_add(p.util_avg);
        }
    }
    if rq.util_est_feat {
        let mut util_est = u64::from(rq.cfs.util_est);
        let task_est = p.map_or(0, |p| u64::from(p.util_est & !UTIL_AVG_UNCHANGED));
        if dst_cpu == cpu {
            util_est = util_est.wrapping_add(task_est);
        } else if p.is_some_and(|p| p.on_rq_queued || p.is_current) {
            util_est = lsub_positive(util_est, task_est);
        }
        util = core::cmp::max(util, util_est);
    }
    core::cmp::min(util, rq.capacity_orig)
}

/// `cpu_util_cfs()`: [`cpu_util`] with no task, no destination, no boost.
#[inline]
pub fn cpu_util_cfs(rq: &CpuUtilRq) -> u64 {
    cpu_util(rq, None, -1, false)
}

/// `cpu_util_cfs_boost()`: [`cpu_util_cfs`] boosted by the runnable average.
#[inline]
pub fn cpu_util_cfs_boost(rq: &CpuUtilRq) -> u64 {
    cpu_util(rq, None, -1, true)
}

/// `cpu_util_without()`: the CPU's utilization without task `p`'s contribution.
///
/// Trap: a task on another CPU, or a new one (`last_update_time == 0`), is ignored, so
/// the result is plain [`cpu_util_cfs`].
pub fn cpu_util_without(rq: &CpuUtilRq, p: &TaskUtil) -> u64 {
    let p = (rq.cpu == p.task_cpu && p.last_update_time != 0).then_some(p);
    cpu_util(rq, p, -1, false)
}

/// `cpu_bw_dl()`: DL running bandwidth in capacity units, `(running_bw * 1024) >> 20`
/// (the product wraps).
#[inline]
pub fn cpu_bw_dl(running_bw: u64) -> u64 {
    running_bw.wrapping_mul(SCHED_CAPACITY_SCALE) >> BW_SHIFT
}

/// `sched_cpu_util()`: [`effective_cpu_util`] of the CPU's CFS utilization plus its RT,
/// DL and IRQ signals, without the min/max outputs — so neither the rq clamps nor the DL
/// bandwidth matter, only the return value.
pub fn sched_cpu_util(rq: &CpuUtilRq, other: &RqPressureUtil) -> u64 {
    effective_cpu_util(&EffectiveUtilInput {
        capacity: rq.capacity_orig,
        util_cfs: cpu_util_cfs(rq),
        util_rt: other.rt_util_avg,
        util_dl: other.dl_util_avg,
        util_irq: other.irq_util_avg,
        uclamp_max: SCHED_CAPACITY_SCALE,
        ..Default::default()
    })
    .ret
}

/// The runqueue state `effective_cpu_util()` and schedutil read, as explicit inputs
/// (capacity units unless said otherwise). Read with serde every field is required but
/// five a fixture may leave out (then 0): `capacity` and `uclamp_used`, which the
/// governor suites give once in `in.init` / the env rather than per rq, `util_cfs_boost`
/// and `idle_calls`, which only schedutil reads (the `effective_cpu_util` cases omit
/// them), and `util_cfs`, which `sugov_get_util` does not read (its cases omit it). Schedutil knows it as
/// [`crate::schedutil::SugovRq`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EffectiveUtilInput {
    /// `arch_scale_cpu_capacity(cpu)`: the CPU's original capacity.
    #[cfg_attr(feature = "serde", serde(default))]
    pub capacity: u64,
    /// The `util_cfs` argument of `effective_cpu_util()` (the caller's CFS utilization);
    /// for schedutil `cpu_util_cfs(cpu)`, which only `uclamp_rq_is_capped()` reads.
    #[cfg_attr(feature = "serde", serde(default))]
    pub util_cfs: u64,
    /// `cpu_util_cfs_boost(cpu)`: the CFS utilization schedutil's frequency follows (its
    /// `util_cfs` argument to `effective_cpu_util()`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub util_cfs_boost: u64,
    /// `cpu_util_rt(rq)`.
    pub util_rt: u64,
    /// `cpu_util_dl(rq)`.
    pub util_dl: u64,
    /// `cpu_util_irq(rq)`.
    pub util_irq: u64,
    /// `cpu_bw_dl(rq)`: DL running bandwidth in capacity units.
    pub bw_dl: u64,
    /// `rt_rq_is_runnable(&rq->rt)`.
    pub rt_runnable: bool,
    /// `uclamp_is_used()` (static key); schedutil reads its `SugovEnv` copy instead.
    #[cfg_attr(feature = "serde", serde(default))]
    pub uclamp_used: bool,
    /// `rq->uclamp[UCLAMP_MIN].value`.
    pub uclamp_min: u64,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    pub uclamp_max: u64,
    /// `tick_nohz_get_idle_calls_cpu(cpu)`: grows each time the CPU enters idle (read
    /// by schedutil's busy filter).
    #[cfg_attr(feature = "serde", serde(default))]
    pub idle_calls: u64,
}

/// Result of `effective_cpu_util()`: the return value and both out-parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EffectiveUtil {
    /// The return value: utilization the CPU needs, at most its capacity.
    pub ret: u64,
    /// `*min`: the performance floor (irq + DL bandwidth, uclamp_min, RT without uclamp).
    pub min: u64,
    /// `*max`: the performance ceiling (capacity, lowered by uclamp_max).
    pub max: u64,
}

/// `scale_irq_capacity()`: `util * (max - irq) / max`, multiply first, truncating.
///
/// Callers guarantee `irq < max` (so `max != 0`); outside that the result is what the
/// wrapping C arithmetic gives, and `max == 0` yields 0 instead of trapping.
#[inline]
pub fn scale_irq_capacity(util: u64, irq: u64, max: u64) -> u64 {
    util.wrapping_mul(max.wrapping_sub(irq))
        .checked_div(max)
        .unwrap_or(0)
}

/// `effective_cpu_util()`: utilization of a CPU with its min/max performance bounds.
///
/// Traps: when irq alone reaches the capacity, all three are the capacity; `max` is set
/// before the saturation test, so it is valid on the early return too; `uclamp_min` enters
/// `min` whether or not uclamp is in use (the static key only gates the RT raise).
pub fn effective_cpu_util(i: &EffectiveUtilInput) -> EffectiveUtil {
    let scale = i.capacity;
    let irq = i.util_irq;
    if irq >= scale {
        return EffectiveUtil {
            ret: scale,
            min: scale,
            max: scale,
        };
    }
    let mut min = core::cmp::max(irq.wrapping_add(i.bw_dl), i.uclamp_min);
    if !i.uclamp_used && i.rt_runnable {
        min = core::cmp::max(min, scale);
    }
    let util = i.util_cfs.wrapping_add(i.util_rt).wrapping_add(i.util_dl);
    let max = core::cmp::min(scale, i.uclamp_max);
    if util >= scale {
        return EffectiveUtil {
            ret: scale,
            min,
            max,
        };
    }
    let util = scale_irq_capacity(util, irq, scale).wrapping_add(irq);
    EffectiveUtil {
        ret: core::cmp::min(scale, util),
        min,
        max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> EffectiveUtilInput {
        EffectiveUtilInput {
            capacity: 1024,
            uclamp_max: 1024,
            ..Default::default()
        }
    }

    fn cpu(capacity_orig: u64, cpu_capacity: u64, hw: u64, cpufreq: u64) -> CpuCapacity {
        CpuCapacity {
            capacity_orig,
            cpu_capacity,
            hw_load_avg: hw,
            cpufreq_pressure: cpufreq,
        }
    }

    fn rq(rt: u64, dl: u64, irq: u64) -> RqPressureUtil {
        RqPressureUtil {
            rt_util_avg: rt,
            dl_util_avg: dl,
            irq_util_avg: irq,
        }
    }

    #[test]
    fn fits_capacity_margin_819_fits_820_does_not() {
        assert!(fits_capacity(819, 1024));
        assert!(!fits_capacity(820, 1024));
        assert!(!fits_capacity(0, 0));
    }

    #[test]
    fn fits_capacity_products_wrap() {
        // 2^54 * 1024 wraps to 0, so nothing fits it; 2^56 * 1280 wraps to 0, so it fits 1.
        assert!(!fits_capacity(0, 1 << 54));
        assert!(fits_capacity(1 << 56, 1));
    }

    #[test]
    fn capacity_greater_needs_about_five_percent() {
        assert!(!capacity_greater(1078, 1024));
        assert!(capacity_greater(1079, 1024));
        // 2^54 * 1024 wraps to 0: a huge capacity is "not greater" than 1.
        assert!(!capacity_greater(1 << 54, 1));
    }

    #[test]
    fn get_actual_cpu_capacity_takes_max_not_sum_of_pressures() {
        assert_eq!(get_actual_cpu_capacity(&cpu(1024, 1024, 100, 150)), 874);
        assert_eq!(get_actual_cpu_capacity(&cpu(1024, 1024, 150, 100)), 874);
    }

    #[test]
    fn get_actual_cpu_capacity_pressure_above_capacity_wraps() {
        assert_eq!(
            get_actual_cpu_capacity(&cpu(381, 381, 400, 0)),
            381u64.wrapping_sub(400)
        );
    }

    #[test]
    fn scale_rt_capacity_saturation_returns_one() {
        // irq alone reaches max
        assert_eq!(scale_rt_capacity(&cpu(1024, 0, 0, 0), &rq(0, 0, 1024)), 1);
        // rt + dl reach max (max 924 after 100 of pressure)
        assert_eq!(
            scale_rt_capacity(&cpu(1024, 0, 100, 0), &rq(500, 424, 0)),
            1
        );
        // max 0: irq 0 >= 0 takes the first exit, no division
        assert_eq!(scale_rt_capacity(&cpu(0, 0, 0, 0), &rq(0, 0, 0)), 1);
    }

    #[test]
    fn scale_rt_capacity_scales_free_by_irq_share() {
        // max 1024, free 1024 - 300 = 724, * (1024 - 100) / 1024 = 653 (truncated)
        assert_eq!(
            scale_rt_capacity(&cpu(1024, 0, 0, 0), &rq(200, 100, 100)),
            653
        );
    }

    #[test]
    fn update_cpu_capacity_turns_zero_into_one() {
        // free 1 * (1000 - 998) / 1000 = 0 -> 1
        let (c, r) = (cpu(1000, 0, 0, 0), rq(999, 0, 998));
        assert_eq!(scale_rt_capacity(&c, &r), 0);
        assert_eq!(update_cpu_capacity(&c, &r), 1);
    }

    #[test]
    fn check_cpu_capacity_compares_with_imbalance_pct() {
        // 1024 * 100 = 102400; 880 * 117 = 102960 is not below, 875 * 117 = 102375 is.
        assert!(!check_cpu_capacity(1024, 880, 117));
        assert!(check_cpu_capacity(1024, 875, 117));
    }

    #[test]
    fn util_fits_cpu_ignores_clamps_when_uclamp_unused() {
        let c = cpu(1024, 1024, 0, 0);
        assert_eq!(util_fits_cpu(900, 1024, 0, false, &c), 0);
        assert_eq!(util_fits_cpu(500, 1024, 0, false, &c), 1);
    }

    #[test]
    fn util_fits_cpu_uclamp_max_forces_fit() {
        // 900 does not fit 1024 by margin, but a cap of 512 <= 1024 forces the fit.
        assert_eq!(util_fits_cpu(900, 0, 512, true, &cpu(1024, 1024, 0, 0)), 1);
        // On a 446 CPU a cap of 446 forces it too.
        assert_eq!(util_fits_cpu(446, 0, 446, true, &cpu(446, 446, 0, 0)), 1);
        assert_eq!(util_fits_cpu(446, 0, 447, true, &cpu(446, 446, 0, 0)), 0);
    }

    #[test]
    fn util_fits_cpu_no_forced_fit_for_1024_cap_on_1024_cpu() {
        assert_eq!(util_fits_cpu(900, 0, 1024, true, &cpu(1024, 1024, 0, 0)), 0);
    }

    #[test]
    fn util_fits_cpu_returns_minus_one_when_boost_exceeds_actual_capacity() {
        // fits (100 < 381 with margin), util < uclamp_min 400 > actual 381 - 0.
        assert_eq!(
            util_fits_cpu(100, 400, 1024, true, &cpu(381, 381, 0, 0)),
            -1
        );
        // uclamp_min 381 is not above the actual capacity: plain fit.
        assert_eq!(util_fits_cpu(100, 381, 1024, true, &cpu(381, 381, 0, 0)), 1);
        // Pressure lowers the actual capacity (max of the two): 381 - 50 = 331 < 381.
        assert_eq!(
            util_fits_cpu(100, 381, 1024, true, &cpu(381, 381, 50, 20)),
            -1
        );
    }

    #[test]
    fn util_fits_cpu_lowers_uclamp_min_to_uclamp_max() {
        // uclamp_min 1024 is lowered to uclamp_max 300, which the CPU can give: 1, not -1.
        assert_eq!(util_fits_cpu(100, 1024, 300, true, &cpu(381, 381, 0, 0)), 1);
    }

    #[test]
    fn util_fits_cpu_minus_one_uses_unsigned_actual_capacity() {
        // Pressure above capacity wraps the actual capacity to a huge value: no -1.
        assert_eq!(
            util_fits_cpu(1, 1000, 1024, true, &cpu(381, 381, 400, 0)),
            1
        );
    }

    #[test]
    fn task_fits_cpu_minus_one_is_a_misfit() {
        let c = cpu(381, 381, 0, 0);
        assert_eq!(util_fits_cpu(100, 400, 1024, true, &c), -1);
        assert!(!task_fits_cpu(100, 0, 400, 1024, true, &c));
        assert!(task_fits_cpu(100, 0, 0, 1024, true, &c));
    }

    #[test]
    fn task_util_est_masks_the_unchanged_flag() {
        assert_eq!(task_util_est(10, UTIL_AVG_UNCHANGED | 300), 300);
        assert_eq!(task_util_est(400, UTIL_AVG_UNCHANGED), 400);
    }

    fn util_rq(util_avg: u64, runnable_avg: u64, util_est: u32) -> CpuUtilRq {
        CpuUtilRq {
            cpu: 0,
            capacity_orig: 1024,
            cfs: CfsRqUtil {
                util_avg,
                runnable_avg,
                util_est,
            },
            util_est_feat: true,
        }
    }

    fn task(task_cpu: i32, util_avg: u64, util_est: u32) -> TaskUtil {
        TaskUtil {
            task_cpu,
            util_avg,
            util_est,
            on_rq_queued: true,
            is_current: false,
            last_update_time: 1,
        }
    }

    #[test]
    fn cpu_util_boost_takes_runnable_and_caps_at_capacity() {
        let r = util_rq(300, 2000, 0);
        assert_eq!(cpu_util_cfs(&r), 300);
        assert_eq!(cpu_util_cfs_boost(&r), 1024);
    }

    #[test]
    fn cpu_util_removal_stops_at_zero_addition_adds() {
        let r = util_rq(100, 0, 0);
        // Leaving CPU 0: 100 - min(100, 300) = 0.
        assert_eq!(cpu_util(&r, Some(&task(0, 300, 0)), 1, false), 0);
        // Arriving at CPU 0 from CPU 1.
        assert_eq!(cpu_util(&r, Some(&task(1, 300, 0)), 0, false), 400);
    }

    #[test]
    fn cpu_util_task_util_est_flag_masked_rq_util_est_as_is() {
        let r = util_rq(0, 0, 200);
        let p = task(1, 0, UTIL_AVG_UNCHANGED | 100);
        assert_eq!(cpu_util(&r, Some(&p), 0, false), 300);
        // Queued task on this CPU, dst -1: its util_est is removed from the rq's.
        let p = task(0, 0, UTIL_AVG_UNCHANGED | 50);
        assert_eq!(cpu_util(&r, Some(&p), -1, false), 150);
        // Neither queued nor current: the rq's util_est stays.
        let p = TaskUtil {
            on_rq_queued: false,
            ..task(0, 0, 50)
        };
        assert_eq!(cpu_util(&r, Some(&p), -1, false), 200);
    }

    #[test]
    fn cpu_util_without_ignores_new_or_foreign_tasks() {
        let r = util_rq(500, 0, 0);
        assert_eq!(cpu_util_without(&r, &task(0, 200, 0)), 300);
        assert_eq!(cpu_util_without(&r, &task(1, 200, 0)), 500);
        let new = TaskUtil {
            last_update_time: 0,
            ..task(0, 200, 0)
        };
        assert_eq!(cpu_util_without(&r, &new), 500);
    }

    #[test]
    fn cpu_bw_dl_shifts_by_20_and_wraps() {
        assert_eq!(cpu_bw_dl(1 << 20), 1024);
        assert_eq!(cpu_bw_dl(1 << 19), 512);
        assert_eq!(cpu_bw_dl(1 << 60), 0); // (2^60 * 2^10) wraps to 0
    }

    #[test]
    fn effective_cpu_util_uclamp_min_enters_min_without_uclamp() {
        let r = effective_cpu_util(&EffectiveUtilInput {
            uclamp_min: 300,
            uclamp_used: false,
            ..input()
        });
        assert_eq!(r.min, 300);
    }

    #[test]
    fn sched_cpu_util_ignores_rq_clamps() {
        assert_eq!(sched_cpu_util(&util_rq(700, 0, 800), &rq(0, 0, 0)), 800);
        // 800 + 100 rt = 900, * (1024 - 64) / 1024 = 843, + 64 irq = 907.
        assert_eq!(sched_cpu_util(&util_rq(700, 0, 800), &rq(100, 0, 64)), 907);
    }

    #[test]
    fn effective_cpu_util_irq_at_capacity_returns_capacity_everywhere() {
        let r = effective_cpu_util(&EffectiveUtilInput {
            util_irq: 1024,
            uclamp_max: 200,
            ..input()
        });
        assert_eq!(
            r,
            EffectiveUtil {
                ret: 1024,
                min: 1024,
                max: 1024
            }
        );
    }

    #[test]
    fn effective_cpu_util_scales_by_the_capacity_irq_leaves() {
        // 400 * (1024 - 100) / 1024 = 360 (truncated), + 100 irq
        let r = effective_cpu_util(&EffectiveUtilInput {
            util_cfs: 400,
            util_irq: 100,
            ..input()
        });
        assert_eq!(
            r,
            EffectiveUtil {
                ret: 460,
                min: 100,
                max: 1024
            }
        );
    }

    #[test]
    fn effective_cpu_util_rt_without_uclamp_raises_min_to_capacity() {
        let r = effective_cpu_util(&EffectiveUtilInput {
            capacity: 446,
            rt_runnable: true,
            uclamp_max: 1024,
            ..Default::default()
        });
        assert_eq!((r.min, r.max), (446, 446));
    }
}
