// SPDX-License-Identifier: GPL-2.0-only
//! The menu governor — drivers/cpuidle/governors/menu.c (v6.16/v6.17 era: no iowait or
//! performance multiplier, six buckets, `menu_update_intervals()`, two-sided outlier
//! trimming in `get_typical_interval()`).
//!
//! menu predicts the idle duration twice and takes the smaller: the sleep length scaled by
//! a per-magnitude correction factor (fixed point, unity = `RESOLUTION * DECAY` = 8192,
//! a running average of measured/expected), and the average of the last eight measured
//! intervals (µs, `unsigned int`) when their spread is small. All of it is C arithmetic:
//! u64 products wrap, quotients are truncated into `unsigned int`.

use super::{
    unsigned, CpuidleDevice, CpuidleDriver, IdleRule, ReflectEnv, SelectEnv, Selection, KTIME_MAX,
    NSEC_PER_USEC, RESIDENCY_THRESHOLD_NS,
};

/// `BUCKETS`: correction factors by order of magnitude of the sleep length.
pub const BUCKETS: usize = 6;
/// `INTERVAL_SHIFT`.
pub const INTERVAL_SHIFT: u32 = 3;
/// `INTERVALS`: remembered idle intervals.
pub const INTERVALS: usize = 1 << INTERVAL_SHIFT;
/// `RESOLUTION`: fixed-point unit of a correction factor's increment.
pub const RESOLUTION: u64 = 1024;
/// `DECAY`: each update keeps 7/8 of the factor.
pub const DECAY: u32 = 8;
/// `MAX_INTERESTING`: 50 ms; longer measured sleeps count as a perfect prediction.
pub const MAX_INTERESTING: u64 = 50_000 * NSEC_PER_USEC as u64;
/// `UINT_MAX`: "no information" in `intervals` and from `get_typical_interval()`.
pub const UINT_MAX: u32 = u32::MAX;

/// `struct menu_device`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MenuDevice {
    /// `needs_update` (int): reflect ran, so the next select runs `menu_update()`.
    pub needs_update: i32,
    /// `tick_wakeup` (int): the tick ended the last idle period.
    pub tick_wakeup: i32,
    /// `next_timer_ns` (u64): the sleep length, `KTIME_MAX` when not queried.
    pub next_timer_ns: u64,
    /// `bucket` (unsigned int, 0..BUCKETS).
    pub bucket: u32,
    /// `correction_factor[BUCKETS]` (unity = 8192).
    pub correction_factor: [u32; BUCKETS],
    /// `intervals[INTERVALS]` in µs.
    pub intervals: [u32; INTERVALS],
    /// `interval_ptr` (int).
    pub interval_ptr: i32,
}

/// `menu_enable_device()`: zeroed data with every correction factor at unity.
pub fn menu_enable_device() -> MenuDevice {
    MenuDevice {
        needs_update: 0,
        tick_wakeup: 0,
        next_timer_ns: 0,
        bucket: 0,
        correction_factor: [RESOLUTION as u32 * DECAY; BUCKETS],
        intervals: [0; INTERVALS],
        interval_ptr: 0,
    }
}

/// `which_bucket()`: 0 below 10 µs, then one bucket per decade up to 5 (≥ 100 ms).
pub fn which_bucket(duration_ns: u64) -> u32 {
    match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

/// `menu_update_intervals()`: store `interval_us` in the ring of the last eight.
pub fn menu_update_intervals(data: &mut MenuDevice, interval_us: u32) {
    let ptr = data.interval_ptr;
    if let Some(slot) = usize::try_from(ptr)
        .ok()
        .and_then(|p| data.intervals.get_mut(p))
    {
        *slot = interval_us;
    }
    data.interval_ptr = ptr.wrapping_add(1);
    if data.interval_ptr >= INTERVALS as i32 {
        data.interval_ptr = 0;
    }
}

/// `get_typical_interval()`: the average of the remembered intervals when their spread is
/// small (variance ≤ 400 µs², or average > 6 standard deviations with at least 6 samples
/// left), trimming the farther outlier side and retrying; `UINT_MAX` when there is none.
///
/// Traps: the thresholds are s64 (initially -1 and `UINT_MAX`, exclusive, so `UINT_MAX`
/// samples from aborted entries never count); sums of values and squares are u64 and
/// wrap; `variance -= avg²` wraps too; `avg - min` and `max - avg` are u64.
pub fn get_typical_interval(data: &MenuDevice) -> u32 {
    let (mut min_thresh, mut max_thresh) = (-1i64, i64::from(UINT_MAX));
    loop {
        let (mut max, mut min) = (0u32, UINT_MAX);
        let (mut avg, mut variance, mut divisor) = (0u64, 0u64, 0u32);
        for &v in &data.intervals {
            let value = i64::from(v);
            if value <= min_thresh || value >= max_thresh {
                continue;
            }
            divisor += 1;
            avg = avg.wrapping_add(unsigned(value));
            variance = variance.wrapping_add(unsigned(value).wrapping_mul(unsigned(value)));
            max = max.max(v);
            min = min.min(v);
        }
        if max == 0 {
            return UINT_MAX;
        }
        if divisor == INTERVALS as u32 {
            avg >>= INTERVAL_SHIFT;
            variance >>= INTERVAL_SHIFT;
        } else {
            // do_div(); divisor > 0 because some sample passed (max != 0).
            avg = avg.checked_div(u64::from(divisor)).unwrap_or(0);
            variance = variance.checked_div(u64::from(divisor)).unwrap_or(0);
        }
        let avg_sq = avg.wrapping_mul(avg);
        variance = variance.wrapping_sub(avg_sq);
        if variance <= u64::MAX / 36
            && ((avg_sq > variance * 36 && divisor * 4 >= INTERVALS as u32 * 3) || variance <= 400)
        {
            return avg as u32; // unsigned int return; avg < UINT_MAX here
        }
        if divisor * 4 <= INTERVALS as u32 * 3 {
            // Most samples left after trimming: the next one likely stays below the max.
            return if divisor >= INTERVALS as u32 / 2 {
                max
            } else {
                UINT_MAX
            };
        }
        if avg.wrapping_sub(u64::from(min)) > u64::from(max).wrapping_sub(avg) {
            min_thresh = i64::from(min);
        } else {
            max_thresh = i64::from(max);
        }
    }
}

/// `menu_select()`: the state to enter and whether to stop the tick.
///
/// Traps: a negative sleep length is clamped to 0 (and `delta_tick` with it);
/// `next_timer_ns * correction_factor` is a wrapping u64 product, so `KTIME_MAX` with
/// factor 8192 gives `timer_us` 0; the quotient is truncated to `unsigned int`
/// (`timer_us`); with no `menu_update()` pending, a zero `last_residency_ns` (the first
/// select, or after an aborted entry) pushes `UINT_MAX` into `intervals`. Comparisons of
/// the u64 prediction/timer with s64 residencies are unsigned.
pub fn menu_select(
    drv: &CpuidleDriver,
    dev: &CpuidleDevice,
    data: &mut MenuDevice,
    env: &SelectEnv,
) -> Selection {
    let mut sel = Selection {
        stop_tick: true,
        ..Selection::default()
    };
    let latency_req = env.latency_req_ns;
    let tick = env.tick_nsec;
    if data.needs_update != 0 {
        menu_update(drv, dev, data, tick);
        data.needs_update = 0;
    } else if dev.last_residency_ns == 0 {
        // The previous entry was rejected or aborted: poison the history.
        menu_update_intervals(data, UINT_MAX);
    }

    let mut predicted_ns = u64::from(get_typical_interval(data)) * NSEC_PER_USEC as u64;
    let delta_tick;
    if predicted_ns > unsigned(RESIDENCY_THRESHOLD_NS) {
        sel.sleep_length_queried = true;
        let (delta, dt) = if env.sleep_length_ns < 0 {
            (0, 0)
        } else {
            (env.sleep_length_ns, env.delta_tick_ns)
        };
        delta_tick = dt;
        data.next_timer_ns = unsigned(delta);
        data.bucket = which_bucket(data.next_timer_ns);
        let factor = correction_factor(data);
        // Round up half microseconds; u64 wraps, the quotient is stored in an unsigned int.
        let unit = RESOLUTION * u64::from(DECAY) * NSEC_PER_USEC as u64;
        let timer_us = ((unit / 2).wrapping_add(data.next_timer_ns.wrapping_mul(u64::from(factor)))
            / unit) as u32;
        predicted_ns = predicted_ns.min(u64::from(timer_us) * NSEC_PER_USEC as u64);
    } else {
        // No sleep length: assume a distant timer and the tick half a period away.
        data.next_timer_ns = unsigned(KTIME_MAX);
        delta_tick = tick / 2;
        data.bucket = BUCKETS as u32 - 1;
    }

    let tr = |i: usize| drv.target_residency_ns(i);
    if drv.state_count() <= 1
        || latency_req == 0
        || ((data.next_timer_ns < unsigned(tr(1)) || latency_req < drv.exit_latency_ns(1))
            && !dev.is_disabled(0))
    {
        // State 0 whatever: keep the tick only if it polls.
        sel.stop_tick = !drv.is_polling(0);
        sel.rule = if drv.state_count() <= 1 {
            IdleRule::NoChoice
        } else {
            IdleRule::TimerOrLatencyState0
        };
        return sel;
    }

    if env.tick_stopped && predicted_ns < unsigned(tick) {
        // A misprediction would cost a long shallow stay: trust the timer.
        predicted_ns = data.next_timer_ns;
    }

    let mut idx: Option<usize> = None;
    sel.rule = IdleRule::Predicted;
    for i in 0..drv.state_count() {
        if dev.is_disabled(i) {
            continue;
        }
        let cur = *idx.get_or_insert(i);
        if drv.exit_latency_ns(i) > latency_req {
            sel.rule = IdleRule::LatencyLimit;
            break;
        }
        if unsigned(tr(i)) > predicted_ns {
            if drv.is_polling(cur) && unsigned(tr(i)) <= data.next_timer_ns {
                // Prefer a physical state to polling when a timer is not imminent.
                predicted_ns = unsigned(tr(i));
                idx = Some(i);
                sel.rule = IdleRule::AvoidPolling;
                break;
            }
            if predicted_ns < unsigned(tick) {
                break;
            }
            if !env.tick_stopped {
                // Shallow enough: keep the tick and let the governor run again.
                predicted_ns = unsigned(tr(cur));
                sel.rule = IdleRule::KeepTickShallow;
                break;
            }
            // Tick stopped: take this state if it fits before the next event.
            sel.idx = if tr(cur) < tick && tr(i) <= delta_tick {
                i
            } else {
                cur
            };
            sel.rule = IdleRule::TickStopped;
            return sel;
        }
        idx = Some(i);
    }
    let mut idx = idx.unwrap_or(0);

    if (drv.is_polling(idx) || predicted_ns < unsigned(tick)) && !env.tick_stopped {
        sel.stop_tick = false;
        if idx > 0 && tr(idx) > delta_tick {
            // The tick stays: fit the state to the next event including the tick.
            for i in (0..idx).rev() {
                if dev.is_disabled(i) {
                    continue;
                }
                idx = i;
                sel.rule = IdleRule::TickFit;
                if tr(i) <= delta_tick {
                    break;
                }
            }
        }
    }
    sel.idx = idx;
    sel
}

/// `data->correction_factor[data->bucket]`; a bucket outside the array reads as unity.
fn correction_factor(data: &MenuDevice) -> u32 {
    usize::try_from(data.bucket)
        .ok()
        .and_then(|b| data.correction_factor.get(b))
        .copied()
        .unwrap_or(RESOLUTION as u32 * DECAY)
}

/// `menu_reflect()`: note the entered state; the next select updates the statistics.
pub fn menu_reflect(
    dev: &mut CpuidleDevice,
    data: &mut MenuDevice,
    index: usize,
    env: &ReflectEnv,
) {
    dev.last_state_idx = index as i32; // index < CPUIDLE_STATE_MAX
    data.needs_update = 1;
    data.tick_wakeup = i32::from(env.got_tick);
}

/// `menu_update()`: fold the last measured idle duration into the correction factor and
/// the interval history.
///
/// Traps: the tick-wakeup test `next_timer_ns > TICK_NSEC` is unsigned; a negative
/// `last_residency_ns` becomes a huge u64; `RESOLUTION * measured_ns` wraps in u64 and the
/// quotient is added into an `unsigned int`; `ktime_to_us()` divides the s64 value
/// truncating toward zero and the `unsigned int` slot keeps the low 32 bits (no clamp).
/// `poll_time_limit` is read here but never cleared by menu.
pub fn menu_update(
    drv: &CpuidleDriver,
    dev: &CpuidleDevice,
    data: &mut MenuDevice,
    tick_nsec: i64,
) {
    let last_idx = usize::try_from(dev.last_state_idx).unwrap_or(usize::MAX);
    let exit_latency_ns = drv.exit_latency_ns(last_idx);
    let mut measured_ns = if data.tick_wakeup != 0 && data.next_timer_ns > unsigned(tick_nsec) {
        // The tick woke a CPU the predictor thought would sleep long: assume it could have.
        9 * MAX_INTERESTING / 10
    } else if drv.is_polling(last_idx) && dev.poll_time_limit {
        // Polling hit its time limit: assume the timer would have woken the CPU.
        data.next_timer_ns
    } else {
        let measured = unsigned(dev.last_residency_ns); // s64 into u64
        if measured > unsigned(exit_latency_ns.wrapping_mul(2)) {
            measured.wrapping_sub(unsigned(exit_latency_ns))
        } else {
            measured / 2
        }
    };
    if measured_ns > data.next_timer_ns {
        measured_ns = data.next_timer_ns;
    }
    let mut new_factor = correction_factor(data);
    new_factor -= new_factor / DECAY;
    let add = match RESOLUTION
        .wrapping_mul(measured_ns)
        .checked_div(data.next_timer_ns)
    {
        Some(ratio) if measured_ns < MAX_INTERESTING => ratio,
        _ => RESOLUTION, // idle so long (or no timer) that it counts as a perfect prediction
    };
    new_factor = new_factor.wrapping_add(add as u32); // added into an unsigned int
    if let Some(f) = usize::try_from(data.bucket)
        .ok()
        .and_then(|b| data.correction_factor.get_mut(b))
    {
        *f = new_factor;
    }
    menu_update_intervals(data, ktime_to_us(measured_ns as i64) as u32); // low 32 bits
}

/// `ktime_to_us()`: s64 nanoseconds to microseconds, truncating toward zero.
pub fn ktime_to_us(kt: i64) -> i64 {
    kt / NSEC_PER_USEC
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::tests::{dev_after, env, rk3399, TICK};
    use crate::cpuidle::{cpuidle_idle_call, Governor, IdleExit};
    use crate::profile::IdleGovernor;

    #[test]
    fn menu_timer_us_wraps_to_zero_on_ktime_max() {
        // KTIME_MAX * 8192 wraps to 2^64 - 8192, + 4096000 wraps again to 4087808,
        // / 8192000 = 0: the prediction is 0 ns and state 0 is taken with the tick kept.
        let drv = rk3399();
        let mut dev = CpuidleDevice::default();
        let mut data = menu_enable_device();
        let sel = menu_select(&drv, &dev, &mut data, &env(KTIME_MAX));
        assert_eq!(
            (sel.idx, sel.stop_tick, sel.sleep_length_queried),
            (0, false, true)
        );
        assert_eq!((data.next_timer_ns, data.bucket), (KTIME_MAX as u64, 5));
        // A 50 ms sleep length in the same state of the history picks the deepest state.
        dev.last_residency_ns = 1;
        let sel = menu_select(&drv, &dev, &mut data, &env(50_000_000));
        assert_eq!((sel.idx, sel.stop_tick), (2, true));
    }

    #[test]
    fn menu_timer_us_is_truncated_to_unsigned_int() {
        // 4294967301000 ns (about 71.6 minutes) is 4294967301 µs,
        // stored as 5 µs: state 0, tick kept. 4294967295000 ns fits: state 2.
        let drv = rk3399();
        let dev = dev_after(1);
        let mut data = menu_enable_device();
        let sel = menu_select(&drv, &dev, &mut data, &env(4_294_967_301_000));
        assert_eq!((sel.idx, sel.stop_tick), (0, false));
        let mut data = menu_enable_device();
        let sel = menu_select(&drv, &dev, &mut data, &env(4_294_967_295_000));
        assert_eq!((sel.idx, sel.stop_tick), (2, true));
    }

    #[test]
    fn menu_interval_keeps_the_low_32_bits_of_ktime_to_us() {
        // 5e12 ns minus WFI's 1 µs exit latency = 4999999999 µs → 705032703 in the
        // unsigned int slot.
        let drv = rk3399();
        let dev = dev_after(5_000_000_000_000);
        let mut data = menu_enable_device();
        data.next_timer_ns = 10_000_000_000_000;
        data.bucket = 5;
        menu_update(&drv, &dev, &mut data, TICK);
        assert_eq!(data.intervals[0], 705_032_703);
        assert_eq!(data.interval_ptr, 1);
        // ktime_to_us() truncates toward zero.
        assert_eq!(ktime_to_us(-1_999), -1);
        assert_eq!(ktime_to_us(1_999), 1);
    }

    #[test]
    fn menu_negative_residency_is_a_huge_unsigned_measured_duration() {
        // -5 µs as u64 exceeds everything: clamped to next_timer_ns (a perfect
        // prediction: factor 8192 - 1024 + 1024) and stored as 50000 µs.
        let drv = rk3399();
        let dev = dev_after(-5_000);
        let mut data = menu_enable_device();
        data.next_timer_ns = 50_000_000;
        data.bucket = 4;
        menu_update(&drv, &dev, &mut data, TICK);
        assert_eq!(data.correction_factor[4], 8192);
        assert_eq!(data.intervals[0], 50_000);
    }

    #[test]
    fn menu_typical_interval_variance_400_returns_the_average() {
        let mut data = menu_enable_device();
        // 4 x 80 and 4 x 120 µs: average 100, variance exactly 400.
        data.intervals = [80, 120, 80, 120, 80, 120, 80, 120];
        assert_eq!(get_typical_interval(&data), 100);
        // 79/121: variance 441; the max side is trimmed, the four 79s remain.
        data.intervals = [79, 121, 79, 121, 79, 121, 79, 121];
        assert_eq!(get_typical_interval(&data), 79);
        // UINT_MAX samples never count (the threshold is exclusive).
        data.intervals = [UINT_MAX; INTERVALS];
        assert_eq!(get_typical_interval(&data), UINT_MAX);
    }

    #[test]
    fn menu_first_select_and_aborted_entries_push_uint_max() {
        let drv = rk3399();
        let mut dev = CpuidleDevice::default();
        let mut gov = Governor::enable(IdleGovernor::Menu, 1024);
        let e = env(50_000_000);
        let exit = IdleExit {
            last_residency_ns: 10_001_000,
            poll_time_limit: false,
            got_tick: false,
            reflect_now_ns: 0,
        };
        cpuidle_idle_call(&drv, &mut dev, &mut gov, &e, Some(&exit)); // first: UINT_MAX
                                                                      // update: state 2 was entered, 10.001 ms - 900 µs exit latency = 9101 µs
        cpuidle_idle_call(&drv, &mut dev, &mut gov, &e, None);
        cpuidle_idle_call(&drv, &mut dev, &mut gov, &e, None); // after the abort: UINT_MAX
        let Governor::Menu(data) = gov else {
            panic!("menu")
        };
        assert_eq!(&data.intervals[..3], &[UINT_MAX, 9_101, UINT_MAX]);
        assert_eq!(data.interval_ptr, 3);
        assert_eq!(dev.last_residency_ns, 0);
    }

    #[test]
    fn menu_clamps_a_negative_sleep_length_to_zero() {
        let drv = rk3399();
        let dev = dev_after(1);
        let mut data = menu_enable_device();
        let sel = menu_select(&drv, &dev, &mut data, &env(-5));
        assert_eq!((data.next_timer_ns, data.bucket), (0, 0));
        assert_eq!((sel.idx, sel.stop_tick), (0, true));
        assert_eq!(sel.rule, IdleRule::TimerOrLatencyState0);
    }

    #[test]
    fn menu_tick_wakeup_needs_a_timer_beyond_the_tick() {
        // tick_wakeup with next_timer_ns == TICK_NSEC uses the measured value (3 ms in
        // WFI: 2999 µs); with TICK_NSEC + 1 it assumes 9/10 of MAX_INTERESTING, clamped
        // to the timer: 4000 µs.
        let drv = rk3399();
        let dev = dev_after(3_000_000);
        for (timer, interval) in [(TICK as u64, 2_999), (TICK as u64 + 1, 4_000)] {
            let mut data = menu_enable_device();
            data.tick_wakeup = 1;
            data.next_timer_ns = timer;
            data.bucket = 3;
            menu_update(&drv, &dev, &mut data, TICK);
            assert_eq!(data.intervals[0], interval);
        }
    }
}
