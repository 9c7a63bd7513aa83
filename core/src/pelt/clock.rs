// SPDX-License-Identifier: GPL-2.0-only
//! The PELT clock of a runqueue — kernel/sched/pelt.h (and the tail of
//! `update_rq_clock_task()` in kernel/sched/core.c).
//!
//! `clock_pelt` advances with the task clock scaled by the CPU's capacity and then its
//! current frequency (each step `cap_scale`, truncating), so a signal ramps as fast as the
//! work actually done. When the rq goes idle it syncs back to the task clock; if the rq was
//! fully busy (the util sums reached their maximum) the idle time that scaling "stole" is
//! counted as lost instead (`lost_idle_time`), and `rq_clock_pelt = clock_pelt -
//! lost_idle_time`.
//!
//! The PELT multiplier patch (LKML, "sched/pelt: Introduce PELT multiplier", never merged)
//! inserts `clock_task_mult` between `clock_task` and `clock_pelt`: the task-clock delta is
//! shifted left by `Profile::pelt_lshift` before it feeds the PELT clock, and the idle sync
//! uses `clock_task_mult`. With `pelt_lshift == 0` and `clock_task_mult == clock_task` (what
//! [`RqClock::new`] sets up) this is mainline exactly, so both run the same code.

use crate::math::cap_scale;
use crate::pelt::PeltTables;
use crate::profile::Profile;

/// The clocks of `struct rq` (kernel/sched/sched.h) that PELT reads and writes, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RqClock {
    /// `rq->clock`.
    pub clock: u64,
    /// `rq->clock_task`: `clock` minus irq and steal time.
    pub clock_task: u64,
    /// `rq->clock_task_mult` (multiplier patch): the task clock advanced `1 << lshift`
    /// times faster; equal to `clock_task` in mainline.
    pub clock_task_mult: u64,
    /// `rq->clock_pelt`: the capacity- and frequency-scaled task clock.
    pub clock_pelt: u64,
    /// `rq->lost_idle_time` (unsigned long).
    pub lost_idle_time: u64,
    /// `rq->clock_pelt_idle`: `rq_clock_pelt()` at the last idle sync.
    pub clock_pelt_idle: u64,
    /// `rq->clock_idle`: `rq->clock` at the last idle sync.
    pub clock_idle: u64,
}

impl RqClock {
    /// A runqueue clock as mainline keeps it (`clock_task_mult == clock_task`), no lost
    /// idle time, never idle-synced.
    pub const fn new(clock: u64, clock_task: u64, clock_pelt: u64) -> Self {
        RqClock {
            clock,
            clock_task,
            clock_task_mult: clock_task,
            clock_pelt,
            lost_idle_time: 0,
            clock_pelt_idle: 0,
            clock_idle: 0,
        }
    }
}

/// What `update_rq_clock_pelt()` reads about the CPU besides the clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PeltClockCpu {
    /// `is_idle_task(rq->curr)`.
    pub curr_is_idle: bool,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub cpu_capacity: u64,
    /// `arch_scale_freq_capacity(cpu)`.
    pub freq_capacity: u64,
}

/// `rq_clock_pelt()`: `clock_pelt - lost_idle_time` (u64, wraps).
#[inline]
pub fn rq_clock_pelt(rq: &RqClock) -> u64 {
    rq.clock_pelt.wrapping_sub(rq.lost_idle_time)
}

/// `_update_idle_rq_clock_pelt()`: the rq is idle, sync `clock_pelt` to the task clock
/// (`clock_task_mult` under the multiplier patch, i.e. `clock_task` in mainline) and record
/// `clock_idle = rq->clock` and `clock_pelt_idle = rq_clock_pelt()` *after* the sync.
#[inline]
pub fn _update_idle_rq_clock_pelt(rq: &mut RqClock) {
    rq.clock_pelt = rq.clock_task_mult;
    rq.clock_idle = rq.clock;
    rq.clock_pelt_idle = rq_clock_pelt(rq);
}

/// `update_rq_clock_pelt()`: advances `clock_pelt` by `delta` scaled by
/// `cap_scale(cpu_capacity)` then `cap_scale(freq_capacity)` (64-bit products, each
/// truncating); when the current task is the idle task it does the idle sync instead and
/// ignores both capacities.
///
/// Trap: the order (capacity, then frequency) is the reverse of `update_irq_load_avg`'s.
#[inline]
pub fn update_rq_clock_pelt(rq: &mut RqClock, delta: u64, cpu: &PeltClockCpu) {
    if cpu.curr_is_idle {
        _update_idle_rq_clock_pelt(rq);
        return;
    }
    let delta = cap_scale(delta, cpu.cpu_capacity);
    let delta = cap_scale(delta, cpu.freq_capacity);
    rq.clock_pelt = rq.clock_pelt.wrapping_add(delta);
}

/// `update_rq_clock_task_mult()` (multiplier patch): `delta <<= pelt_lshift`, added to
/// `clock_task_mult`, and that shifted delta feeds [`update_rq_clock_pelt`]. With
/// `pelt_lshift == 0` it is mainline's plain `update_rq_clock_pelt(rq, delta)` plus keeping
/// `clock_task_mult` equal to `clock_task`.
#[inline]
pub fn update_rq_clock_task_mult(
    rq: &mut RqClock,
    delta: u64,
    cpu: &PeltClockCpu,
    profile: &Profile,
) {
    let delta = delta.wrapping_shl(u32::from(profile.pelt_lshift));
    rq.clock_task_mult = rq.clock_task_mult.wrapping_add(delta);
    update_rq_clock_pelt(rq, delta, cpu);
}

/// The tail of `update_rq_clock()` / `update_rq_clock_task()` as far as PELT is concerned:
/// `clock += delta`, `clock_task += delta - irq_delta`, then the PELT clock advances by the
/// task-clock delta ([`update_rq_clock_task_mult`], which is mainline when
/// `profile.pelt_lshift == 0`).
///
/// `irq_delta` is the irq + steal time of the interval, already clamped to `delta` as the
/// kernel does; the caller feeds it to `update_irq_load_avg` separately.
pub fn update_rq_clock_task(
    rq: &mut RqClock,
    delta: u64,
    irq_delta: u64,
    cpu: &PeltClockCpu,
    profile: &Profile,
) {
    rq.clock = rq.clock.wrapping_add(delta);
    let task_delta = delta.wrapping_sub(irq_delta);
    rq.clock_task = rq.clock_task.wrapping_add(task_delta);
    update_rq_clock_task_mult(rq, task_delta, cpu, profile);
}

/// `update_idle_rq_clock_pelt()`: the rq enters idle. If the cfs, rt and dl util sums
/// together (a u32 sum, wrapping) reach `((LOAD_AVG_MAX - 1024) << 10) - LOAD_AVG_MAX`, the
/// rq was fully busy and `lost_idle_time += clock_task - clock_pelt` (a plain u64
/// difference: it wraps when clock_pelt is ahead, it is not clamped); then the idle sync.
pub fn update_idle_rq_clock_pelt(
    rq: &mut RqClock,
    cfs_util_sum: u32,
    rt_util_sum: u32,
    dl_util_sum: u32,
    t: &PeltTables,
) {
    let util_sum = cfs_util_sum
        .wrapping_add(rt_util_sum)
        .wrapping_add(dl_util_sum);
    if util_sum >= t.idle_util_sum_threshold() {
        let lost = rq.clock_task_mult.wrapping_sub(rq.clock_pelt);
        rq.lost_idle_time = rq.lost_idle_time.wrapping_add(lost);
    }
    _update_idle_rq_clock_pelt(rq);
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUSY_FULL: PeltClockCpu = PeltClockCpu {
        curr_is_idle: false,
        cpu_capacity: 1024,
        freq_capacity: 1024,
    };

    #[test]
    fn clock_pelt_scales_by_capacity_then_frequency_truncating_each_step() {
        let mut rq = RqClock::new(0, 0, 0);
        let cpu = PeltClockCpu {
            curr_is_idle: false,
            cpu_capacity: 446,
            freq_capacity: 700,
        };
        update_rq_clock_task(&mut rq, 1000, 0, &cpu, &Profile::MAINLINE);
        // 1000*446>>10 = 435; 435*700>>10 = 297 (freq first would give 683 -> 297 too)
        assert_eq!(rq.clock_pelt, 297);
        let mut rq = RqClock::new(0, 0, 0);
        update_rq_clock_task(&mut rq, 1, 0, &cpu, &Profile::MAINLINE);
        assert_eq!(rq.clock_pelt, 0);
        assert_eq!((rq.clock, rq.clock_task, rq.clock_task_mult), (1, 1, 1));
    }

    #[test]
    fn idle_sync_uses_clock_after_the_update_and_ignores_capacities() {
        let mut rq = RqClock::new(1000, 900, 500);
        rq.lost_idle_time = 50;
        let idle = PeltClockCpu {
            curr_is_idle: true,
            cpu_capacity: 1,
            freq_capacity: 1,
        };
        update_rq_clock_task(&mut rq, 100, 10, &idle, &Profile::MAINLINE);
        assert_eq!(rq.clock, 1100);
        assert_eq!(rq.clock_task, 990);
        assert_eq!(rq.clock_pelt, 990);
        assert_eq!(rq.clock_idle, 1100);
        assert_eq!(rq.clock_pelt_idle, 940);
        assert_eq!(rq_clock_pelt(&rq), 940);
    }

    #[test]
    fn idle_threshold_uses_a_u32_sum_of_three_util_sums() {
        let t = &PeltTables::HL32;
        let mut rq = RqClock::new(10_000, 10_000, 4_000);
        // 0xffffffff + 47791491 wraps to 47791490 == threshold: lost idle time counted.
        update_idle_rq_clock_pelt(&mut rq, u32::MAX, 47_791_491, 0, t);
        assert_eq!(rq.lost_idle_time, 6_000);
        assert_eq!(rq.clock_pelt, 10_000);
        assert_eq!(rq_clock_pelt(&rq), 4_000);
        // One below the threshold: only the sync.
        let mut rq = RqClock::new(10_000, 10_000, 4_000);
        update_idle_rq_clock_pelt(&mut rq, 47_791_489, 0, 0, t);
        assert_eq!(rq.lost_idle_time, 0);
    }

    #[test]
    fn lost_idle_time_wraps_when_clock_pelt_is_ahead() {
        let t = &PeltTables::HL32;
        let mut rq = RqClock::new(10_000, 10_000, 10_100);
        update_idle_rq_clock_pelt(&mut rq, 47_791_490, 0, 0, t);
        assert_eq!(rq.lost_idle_time, 100u64.wrapping_neg());
        assert_eq!(rq_clock_pelt(&rq), 10_100);
    }

    #[test]
    fn multiplier_shifts_the_task_clock_delta_before_pelt_scaling() {
        let mut rq = RqClock::new(0, 0, 0);
        let mult4 = Profile::from_name("pelt-mult4").unwrap_or_default();
        let half = PeltClockCpu {
            cpu_capacity: 512,
            ..BUSY_FULL
        };
        update_rq_clock_task(&mut rq, 1000, 100, &half, &mult4);
        assert_eq!(rq.clock_task, 900);
        assert_eq!(rq.clock_task_mult, 3600);
        assert_eq!(rq.clock_pelt, 1800);
        // Idle sync goes to clock_task_mult, not clock_task.
        update_idle_rq_clock_pelt(&mut rq, 0, 0, 0, &PeltTables::HL32);
        assert_eq!(rq.clock_pelt, 3600);
    }
}
