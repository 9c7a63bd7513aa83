// SPDX-License-Identifier: GPL-2.0-only
//! The timer events oriented (teo) governor — drivers/cpuidle/governors/teo.c.
//!
//! teo keeps, per idle state, a "bin" spanning from that state's target residency to the
//! next one's, and two decaying metrics per bin: *hits* (the wakeup landed in the bin of
//! the sleep length, i.e. on the timer) and *intercepts* (it came earlier, in a shallower
//! bin). Every metric decays by `x - (x >> 3)` and grows by `PULSE` (1024), in `unsigned
//! int`, so the sums wrap like the kernel's. `select` starts from the deepest enabled
//! state and walks down while intercepts dominate; then the sleep length may push it
//! shallower still.
//!
//! One module serves every version, selected by [`IdleGovernor`]; each difference is a
//! `match` where the kernels differ:
//! * `TeoV6_6` / `TeoV6_10`: util-awareness (`capacity >> 6`), `recent` intercepts of the
//!   last `NR_RECENT` wakeups, `time_span_ns`, the extra `tick_hits` bin and a `total`
//!   rebuilt from the bins. v6.10 accepts the state found for a short sleep length only
//!   when `teo_state_ok()` allows it; 6.6.y (since the early-2026 stable fix) does not ask.
//! * `TeoV6_12`: v6.11-rc1 reverted util-awareness, removed `recent` and queries the sleep
//!   length when the intercepts pick state 0 ("Don't count non-existent intercepts").
//! * `TeoMainline` (torvalds a7bee4e7): `total` decays on its own, `tick_intercepts`,
//!   `short_idles` and `artificial_wakeup` replace `tick_hits` and `time_span_ns`.
//!
//! `Menu` is not a teo version; passed here it runs the mainline code.

use crate::profile::IdleGovernor;

use super::{
    unsigned, CpuidleDevice, CpuidleDriver, IdleRule, ReflectEnv, SelectEnv, Selection,
    CPUIDLE_STATE_MAX, KTIME_MAX, RESIDENCY_THRESHOLD_NS,
};

/// `PULSE`: what a metric grows by.
pub const PULSE: u32 = 1024;
/// `DECAY_SHIFT`: every update removes 1/8 of a metric (truncating).
pub const DECAY_SHIFT: u32 = 3;
/// `NR_RECENT` (v6.6/v6.10): how many recent wakeups `recent` remembers.
pub const NR_RECENT: usize = 9;
/// `UTIL_THRESHOLD_SHIFT` (v6.6/v6.10): a CPU is "utilized" above `capacity >> 6`.
pub const UTIL_THRESHOLD_SHIFT: u32 = 6;
/// `LATENCY_THRESHOLD_NS` (mainline): a latency limit below 7.5 µs skips the sleep length.
pub const LATENCY_THRESHOLD_NS: i64 = RESIDENCY_THRESHOLD_NS / 2;

/// `struct teo_bin`: the metrics of one state's bin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TeoBin {
    /// `intercepts`.
    pub intercepts: u32,
    /// `hits`.
    pub hits: u32,
    /// `recent` (v6.6/v6.10): intercepts among the last `NR_RECENT` wakeups.
    pub recent: u32,
}

/// `struct teo_cpu`: the union of every version's fields (each version uses its own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TeoCpu {
    /// `time_span_ns` (not mainline): `local_clock()` at select, then the select-to-reflect
    /// time (or the sleep length after a safety-net wakeup).
    pub time_span_ns: i64,
    /// `sleep_length_ns`: `KTIME_MAX` unless select queried it.
    pub sleep_length_ns: i64,
    /// `state_bins[CPUIDLE_STATE_MAX]`.
    pub state_bins: [TeoBin; CPUIDLE_STATE_MAX],
    /// `total`: grand total of the metrics.
    pub total: u32,
    /// `next_recent_idx` (v6.6/v6.10).
    pub next_recent_idx: i32,
    /// `recent_idx[NR_RECENT]` (v6.6/v6.10): bin of each recent intercept, -1 = none.
    pub recent_idx: [i32; NR_RECENT],
    /// `tick_hits` (not mainline): hits-only bin past the tick.
    pub tick_hits: u32,
    /// `util_threshold` (v6.6/v6.10, unsigned long).
    pub util_threshold: u64,
    /// `tick_intercepts` (mainline): intercepts of at least one tick.
    pub tick_intercepts: u32,
    /// `short_idles` (mainline): wakeups after less than `RESIDENCY_THRESHOLD_NS`.
    pub short_idles: u32,
    /// `artificial_wakeup` (mainline): the last wakeup came from a safety net.
    pub artificial_wakeup: bool,
}

/// Whether `version` has util-awareness and `recent` intercepts (v6.6..v6.10 design).
fn util_aware(version: IdleGovernor) -> bool {
    matches!(version, IdleGovernor::TeoV6_6 | IdleGovernor::TeoV6_10)
}

/// Whether `version` is the 2025-rework design (no `time_span_ns`, no `tick_hits`).
fn reworked(version: IdleGovernor) -> bool {
    matches!(version, IdleGovernor::TeoMainline | IdleGovernor::Menu)
}

/// `x - (x >> DECAY_SHIFT)`: one decay step of a metric.
fn decay(x: u32) -> u32 {
    x - (x >> DECAY_SHIFT)
}

/// `teo_enable_device()`: zeroed data; v6.6/v6.10 also set `util_threshold =
/// capacity >> 6` and mark every `recent_idx` slot empty (-1).
pub fn teo_enable_device(version: IdleGovernor, capacity: u64) -> TeoCpu {
    let mut cpu = TeoCpu::default();
    if util_aware(version) {
        cpu.util_threshold = capacity >> UTIL_THRESHOLD_SHIFT;
        cpu.recent_idx = [-1; NR_RECENT];
    }
    cpu
}

/// `teo_update()`: classify the last wakeup and update the bins.
///
/// Traps: `measured_ns` is u64, so a negative `last_residency_ns` becomes huge and counts
/// as a long sleep; `target_residency_ns <= measured_ns` and `TICK_NSEC <= measured_ns`
/// compare unsigned, while comparisons with `sleep_length_ns` are signed. In v6.6/v6.10 a
/// wakeup that lands in the tick bin jumps over the `recent_idx[i]` rewrite, so the slot
/// keeps its old bin and that bin's `recent` is decremented again nine updates later: it
/// wraps to 4294967295 (a real kernel bug the fixtures reproduce).
pub fn teo_update(
    drv: &CpuidleDriver,
    dev: &CpuidleDevice,
    cpu: &mut TeoCpu,
    version: IdleGovernor,
    tick_nsec: i64,
) {
    let state_count = drv.state_count();
    let mut idx_timer = 0usize;
    let mut idx_duration = 0usize;
    let last = usize::try_from(dev.last_state_idx).unwrap_or(usize::MAX);

    let safety_net = if reworked(version) {
        cpu.short_idles = decay(cpu.short_idles);
        cpu.artificial_wakeup
    } else {
        cpu.time_span_ns >= cpu.sleep_length_ns
    };
    let measured_ns: u64 = if safety_net {
        u64::MAX
    } else {
        let lat_ns = unsigned(drv.exit_latency_ns(last)); // kernel: u64 lat_ns = s64 field
        let residency = unsigned(dev.last_residency_ns); // s64 stored into u64
                                                         // Half the exit latency approximates the average wakeup delay.
        let (measured, short) = if residency >= lat_ns {
            let m = residency - lat_ns / 2;
            (m, m < unsigned(RESIDENCY_THRESHOLD_NS))
        } else {
            (residency / 2, true)
        };
        if reworked(version) && short {
            cpu.short_idles = cpu.short_idles.wrapping_add(PULSE);
        }
        measured
    };

    if !reworked(version) {
        cpu.total = 0;
    }
    let mut target_residency_ns = 0i64;
    for (i, bin) in cpu.state_bins.iter_mut().enumerate().take(state_count) {
        bin.hits = decay(bin.hits);
        bin.intercepts = decay(bin.intercepts);
        if !reworked(version) {
            cpu.total = cpu
                .total
                .wrapping_add(bin.hits.wrapping_add(bin.intercepts));
        }
        target_residency_ns = drv.target_residency_ns(i);
        if target_residency_ns <= cpu.sleep_length_ns {
            idx_timer = i;
            if unsigned(target_residency_ns) <= measured_ns {
                idx_duration = i;
            }
        }
    }

    // v6.6/v6.10: the slot of the oldest recent wakeup is recycled.
    let mut recent_slot = None;
    if util_aware(version) {
        let i = cpu.next_recent_idx;
        cpu.next_recent_idx = i.wrapping_add(1);
        if cpu.next_recent_idx >= NR_RECENT as i32 {
            cpu.next_recent_idx = 0;
        }
        if let Some(&old) = usize::try_from(i).ok().and_then(|i| cpu.recent_idx.get(i)) {
            if let Some(bin) = usize::try_from(old)
                .ok()
                .and_then(|b| cpu.state_bins.get_mut(b))
            {
                bin.recent = bin.recent.wrapping_sub(1);
            }
        }
        recent_slot = usize::try_from(i).ok();
    }

    if reworked(version) {
        cpu.tick_intercepts = decay(cpu.tick_intercepts);
    } else if target_residency_ns < tick_nsec {
        // The deepest state ends before the tick: an extra hits-only bin past the tick.
        cpu.tick_hits = decay(cpu.tick_hits);
        cpu.total = cpu.total.wrapping_add(cpu.tick_hits);
        if tick_nsec <= cpu.sleep_length_ns {
            idx_timer = state_count;
            if unsigned(tick_nsec) <= measured_ns {
                cpu.tick_hits = cpu.tick_hits.wrapping_add(PULSE);
                cpu.total = cpu.total.wrapping_add(PULSE);
                return;
            }
        }
    }

    let slot = recent_slot.and_then(|s| cpu.recent_idx.get_mut(s));
    if idx_timer == idx_duration {
        if let Some(bin) = cpu.state_bins.get_mut(idx_timer) {
            bin.hits = bin.hits.wrapping_add(PULSE);
        }
        if let Some(slot) = slot {
            *slot = -1;
        }
    } else {
        if let Some(bin) = cpu.state_bins.get_mut(idx_duration) {
            bin.intercepts = bin.intercepts.wrapping_add(PULSE);
            if util_aware(version) {
                bin.recent = bin.recent.wrapping_add(1);
            }
        }
        if let Some(slot) = slot {
            *slot = idx_duration as i32; // idx_duration < CPUIDLE_STATE_MAX
        }
        if reworked(version) && unsigned(tick_nsec) <= measured_ns {
            cpu.tick_intercepts = cpu.tick_intercepts.wrapping_add(PULSE);
        }
    }

    if reworked(version) {
        cpu.total = decay(cpu.total);
    }
    cpu.total = cpu.total.wrapping_add(PULSE);
}

/// `teo_state_ok()`: with the tick already stopped, only a state whose target residency
/// reaches `TICK_NSEC` is acceptable (signed comparison).
pub fn teo_state_ok(drv: &CpuidleDriver, i: usize, env: &SelectEnv) -> bool {
    !env.tick_stopped || drv.target_residency_ns(i) >= env.tick_nsec
}

/// `teo_find_shallower_state()`: walking down from `state_idx`, the first enabled state
/// (skipping polling ones when `no_poll`) whose target residency fits `duration_ns`, or
/// the shallowest enabled one visited.
///
/// Trap: the comparison is signed, so a negative `duration_ns` matches nothing and the
/// walk ends on the shallowest enabled state.
pub fn teo_find_shallower_state(
    drv: &CpuidleDriver,
    dev: &CpuidleDevice,
    mut state_idx: usize,
    duration_ns: i64,
    no_poll: bool,
) -> usize {
    for i in (0..state_idx).rev() {
        if dev.is_disabled(i) || (no_poll && drv.is_polling(i)) {
            continue;
        }
        state_idx = i;
        if drv.target_residency_ns(i) <= duration_ns {
            break;
        }
    }
    state_idx
}

/// How `teo_select()` leaves its main body: the C labels.
enum Exit {
    /// `out_tick`: keep the tick.
    OutTick(usize),
    /// `end`: decide the tick from the expected idle duration; (idx, duration_ns, idx0).
    End(usize, i64, usize),
}

/// `teo_select()`: the state to enter and whether to stop the tick.
///
/// Traps: the intercept test `2 * idx_intercept_sum > total - idx_hit_sum` is u32 and
/// wraps (in mainline `total` decays apart from the bins, so the hits below the candidate
/// can exceed it and the search is skipped); the sleep length is not clamped, so a
/// negative one walks to the shallowest state; the first select runs `teo_update()` on the
/// zeroed data (`last_state_idx` starts at 0).
pub fn teo_select(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    cpu: &mut TeoCpu,
    version: IdleGovernor,
    env: &SelectEnv,
) -> Selection {
    if dev.last_state_idx >= 0 {
        teo_update(drv, dev, cpu, version, env.tick_nsec);
        dev.last_state_idx = -1;
    }
    if !reworked(version) {
        cpu.time_span_ns = env.now_ns as i64; // u64 clock stored into s64
    }
    cpu.sleep_length_ns = KTIME_MAX;

    let mut sel = Selection {
        stop_tick: true,
        ..Selection::default()
    };
    let mut delta_tick = env.tick_nsec / 2;
    let exit = teo_select_body(drv, dev, cpu, version, env, &mut sel, &mut delta_tick);
    let (idx, duration_ns, idx0) = match exit {
        Exit::OutTick(idx) => {
            sel.idx = idx;
            sel.stop_tick = false;
            return sel;
        }
        Exit::End(idx, d, idx0) => (idx, d, idx0),
    };
    // end: the tick may be stopped unless the state polls or the idle is shorter than it.
    if (!drv.is_polling(idx) && duration_ns >= env.tick_nsec) || env.tick_stopped {
        sel.idx = idx;
        return sel;
    }
    // The tick stays: the state must fit the time to the next event including the tick.
    sel.idx = if idx > idx0 && drv.target_residency_ns(idx) > delta_tick {
        teo_find_shallower_state(drv, dev, idx, delta_tick, false)
    } else {
        idx
    };
    if sel.idx != idx {
        sel.rule = IdleRule::TickFit;
    }
    sel.stop_tick = false;
    sel
}

/// `tick_nohz_get_sleep_length()` as teo calls it: records the query and the sleep length.
fn query_sleep_length(
    cpu: &mut TeoCpu,
    env: &SelectEnv,
    sel: &mut Selection,
    delta_tick: &mut i64,
) -> i64 {
    sel.sleep_length_queried = true;
    *delta_tick = env.delta_tick_ns;
    cpu.sleep_length_ns = env.sleep_length_ns;
    env.sleep_length_ns
}

/// The body of `teo_select()` from the "any choice?" test to the tick-intercepts test.
#[allow(clippy::too_many_arguments)]
fn teo_select_body(
    drv: &CpuidleDriver,
    dev: &CpuidleDevice,
    cpu: &mut TeoCpu,
    version: IdleGovernor,
    env: &SelectEnv,
    sel: &mut Selection,
    delta_tick: &mut i64,
) -> Exit {
    let state_count = drv.state_count();
    sel.rule = IdleRule::NoChoice;
    if state_count < 2 {
        return Exit::OutTick(0);
    }
    let state_ok = |i: usize| teo_state_ok(drv, i, env);
    let mut idx: Option<usize> = (!dev.is_disabled(0)).then_some(0);

    // v6.6/v6.10 util-awareness (reverted in v6.11-rc1).
    let cpu_utilized = util_aware(version) && {
        sel.util_queried = true;
        sel.cpu_utilized = env.cpu_util > cpu.util_threshold;
        sel.cpu_utilized
    };
    if cpu_utilized && state_count < 3 {
        // Two states: the shallow non-polling one, unless the tick is stopped already.
        sel.rule = IdleRule::UtilizedTwoStates;
        if (idx == Some(0) && !drv.is_polling(0) && state_ok(0)) || dev.is_disabled(1) {
            return Exit::OutTick(0);
        }
        return Exit::End(1, drv.target_residency_ns(1), 0);
    }

    let mut idx0 = 0usize;
    let mut constraint_idx = 0usize;
    let (mut intercept_sum, mut hit_sum, mut recent_sum) = (0u32, 0u32, 0u32);
    let (mut idx_intercept_sum, mut idx_hit_sum, mut idx_recent_sum) = (0u32, 0u32, 0u32);
    for i in 1..state_count {
        let prev_bin = cpu.state_bins.get(i - 1).copied().unwrap_or_default();
        intercept_sum = intercept_sum.wrapping_add(prev_bin.intercepts);
        hit_sum = hit_sum.wrapping_add(prev_bin.hits);
        recent_sum = recent_sum.wrapping_add(prev_bin.recent);
        if dev.is_disabled(i) {
            continue;
        }
        if idx.is_none() {
            idx0 = i;
        }
        idx = Some(i);
        if drv.exit_latency_ns(i) <= env.latency_req_ns {
            constraint_idx = i;
        }
        idx_intercept_sum = intercept_sum;
        idx_hit_sum = hit_sum;
        idx_recent_sum = recent_sum;
    }
    let Some(mut idx) = idx else {
        return Exit::OutTick(0); // no state enabled: state 0 anyway
    };
    if idx == idx0 {
        // One enabled state: use it; the tick stays if it is shallow.
        sel.rule = IdleRule::OneEnabled;
        return Exit::End(idx, drv.target_residency_ns(idx), idx0);
    }

    // Intercepts before the tick: all bins (older) or the mainline counter.
    let last_bin = cpu.state_bins.get(state_count - 1).copied();
    let tick_intercept_sum = if reworked(version) {
        cpu.tick_intercepts
    } else {
        intercept_sum.wrapping_add(last_bin.unwrap_or_default().intercepts)
    };

    let prev_intercept_idx = idx;
    sel.rule = IdleRule::Hits;
    let alt_intercepts = idx_intercept_sum.wrapping_mul(2) > cpu.total.wrapping_sub(idx_hit_sum);
    let alt_recent = util_aware(version) && idx_recent_sum > (NR_RECENT / 2) as u32;
    if alt_recent || alt_intercepts {
        // The deepest state whose target residency the idle duration reached in over half
        // of the relevant past cases, respecting a stopped tick.
        let mut first_suitable_idx = idx;
        let (mut intercept_sum, mut recent_sum) = (0u32, 0u32);
        for i in (0..idx).rev() {
            let bin = cpu.state_bins.get(i).copied().unwrap_or_default();
            intercept_sum = intercept_sum.wrapping_add(bin.intercepts);
            recent_sum = recent_sum.wrapping_add(bin.recent);
            if (!alt_recent || recent_sum.wrapping_mul(2) > idx_recent_sum)
                && (!alt_intercepts || intercept_sum.wrapping_mul(2) > idx_intercept_sum)
            {
                idx = if state_ok(i) && !dev.is_disabled(i) {
                    i
                } else {
                    first_suitable_idx
                };
                break;
            }
            if dev.is_disabled(i) {
                continue;
            }
            if !state_ok(i) {
                // Too shallow: give up unless a deeper suitable state was found already.
                if first_suitable_idx != idx {
                    continue;
                }
                break;
            }
            first_suitable_idx = i;
        }
        if idx != prev_intercept_idx {
            // Both tests may hold; recent intercepts (v6.10) are the stricter one.
            sel.rule = if alt_recent {
                IdleRule::RecentIntercepts
            } else {
                IdleRule::Intercepts
            };
        }
    }

    // v6.11-rc1 "Don't count non-existent intercepts": learn the sleep length when the
    // intercepts chose state 0, and skip the latency clamp.
    if version == IdleGovernor::TeoV6_12 && idx == 0 && prev_intercept_idx != 0 {
        sel.rule = IdleRule::InterceptsChoseZero;
        query_sleep_length(cpu, env, sel, delta_tick);
        return Exit::OutTick(0);
    }

    if idx > constraint_idx {
        idx = constraint_idx;
        sel.rule = IdleRule::LatencyLimit;
    }

    let duration_ns = if reworked(version) {
        // Short candidates skip the sleep length when short idles dominate or the
        // latency limit forces shallow states anyway.
        if (idx == 0 || drv.target_residency_ns(idx) < RESIDENCY_THRESHOLD_NS)
            && (cpu.short_idles.wrapping_mul(2) >= cpu.total
                || env.latency_req_ns < LATENCY_THRESHOLD_NS)
        {
            sel.rule = IdleRule::ShortIdles;
            return Exit::OutTick(idx);
        }
        let d = query_sleep_length(cpu, env, sel, delta_tick);
        if idx == 0 {
            return Exit::OutTick(0);
        }
        d
    } else {
        if cpu_utilized {
            // Utilized CPU: the closest shallower non-polling state (v6.6/v6.10).
            let i = teo_find_shallower_state(drv, dev, idx, KTIME_MAX, true);
            if state_ok(i) && i != idx {
                idx = i;
                sel.rule = IdleRule::Utilized;
            }
        }
        if idx == 0 {
            return Exit::OutTick(0);
        }
        if drv.is_polling(0) && drv.target_residency_ns(idx) < RESIDENCY_THRESHOLD_NS {
            sel.rule = IdleRule::ShortResidency;
            return Exit::OutTick(idx);
        }
        query_sleep_length(cpu, env, sel, delta_tick)
    };

    if drv.target_residency_ns(idx) > duration_ns {
        let i = teo_find_shallower_state(drv, dev, idx, duration_ns, false);
        // 6.6.y dropped the teo_state_ok() check here (mainline a03b2011808a, backported
        // Jan 2026); v6.10, v6.12 and the a7bee4e7 mainline still have it.
        if (version == IdleGovernor::TeoV6_6 || state_ok(i)) && i != idx {
            idx = i;
            sel.rule = IdleRule::SleepLength;
        }
    }

    // Intercepts before the tick dominate: keep the tick for a shallow state.
    let total = cpu.total;
    let duration_ns = if drv.target_residency_ns(idx) < env.tick_nsec
        && tick_intercept_sum > total / 2 + total / 8
    {
        env.tick_nsec / 2
    } else {
        duration_ns
    };
    Exit::End(idx, duration_ns, idx0)
}

/// `teo_reflect()`: note the entered state and whether the wakeup was genuine.
///
/// A polling time limit, or a tick while the sleep length exceeded `TICK_NSEC` (signed),
/// is a safety-net wakeup: `poll_time_limit` is cleared and the wakeup is treated as if
/// the CPU could have slept until the timer (`artificial_wakeup` in mainline,
/// `time_span_ns = sleep_length_ns` before). Otherwise `time_span_ns` becomes the u64
/// clock delta since select, stored back into s64 (wrapping).
pub fn teo_reflect(
    dev: &mut CpuidleDevice,
    cpu: &mut TeoCpu,
    version: IdleGovernor,
    state: usize,
    env: &ReflectEnv,
) {
    dev.last_state_idx = state as i32; // state < CPUIDLE_STATE_MAX
    let artificial = dev.poll_time_limit || (env.got_tick && cpu.sleep_length_ns > env.tick_nsec);
    if artificial {
        dev.poll_time_limit = false;
    }
    if reworked(version) {
        cpu.artificial_wakeup = artificial;
    } else if artificial {
        cpu.time_span_ns = cpu.sleep_length_ns;
    } else {
        // u64 clock minus the s64 stamp, stored back into the s64 field.
        cpu.time_span_ns = env.now_ns.wrapping_sub(unsigned(cpu.time_span_ns)) as i64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::tests::{dev_after, env, rk3399, TICK};
    use crate::cpuidle::CpuidleState;

    /// WFI 1/1 µs and a 200 µs state: the deepest target residency is below the tick, so
    /// v6.6..v6.12 keep the extra `tick_hits` bin.
    fn shallow() -> CpuidleDriver {
        let s = |lat: i64, res: i64| CpuidleState {
            exit_latency_ns: lat,
            target_residency_ns: res,
            flags: 0,
        };
        CpuidleDriver::new(&[s(1_000, 1_000), s(100_000, 200_000)]).unwrap()
    }

    /// One `teo_update()` after a wakeup `residency_ns` into a `sleep_length_ns` sleep.
    fn update(
        drv: &CpuidleDriver,
        cpu: &mut TeoCpu,
        version: IdleGovernor,
        sleep_length_ns: i64,
        residency_ns: i64,
    ) {
        let dev = dev_after(residency_ns);
        cpu.sleep_length_ns = sleep_length_ns;
        cpu.time_span_ns = 0; // below the sleep length: a genuine wakeup
        teo_update(drv, &dev, cpu, version, TICK);
    }

    #[test]
    fn teo_v6_10_recent_counter_wraps_after_tick_bin_hits() {
        let drv = shallow();
        let v = IdleGovernor::TeoV6_10;
        let mut cpu = teo_enable_device(v, 1024);
        // An intercept in bin 0: slot 0 remembers bin 0.
        update(&drv, &mut cpu, v, 10_000_000, 50_000);
        assert_eq!(cpu.state_bins[0].recent, 1);
        assert_eq!(cpu.recent_idx[0], 0);
        // Tick-bin hits jump past the slot rewrite; the 9th one recycles slot 0 (recent
        // 1 → 0) but leaves it pointing at bin 0.
        for _ in 0..9 {
            update(&drv, &mut cpu, v, 10_000_000, 5_000_000);
        }
        assert_eq!(cpu.state_bins[0].recent, 0);
        assert_eq!(cpu.recent_idx[0], 0);
        // Nine more: slot 0 is recycled again and bin 0's counter wraps.
        for _ in 0..9 {
            update(&drv, &mut cpu, v, 10_000_000, 5_000_000);
        }
        assert_eq!(cpu.state_bins[0].recent, 4_294_967_295);
        assert_eq!(cpu.next_recent_idx, 1);
    }

    #[test]
    fn teo_negative_residency_is_a_huge_unsigned_measured_duration() {
        // v6.12, rk3399 (deepest target residency 2 ms < TICK_NSEC: tick bin in use): a
        // 50 ms sleep length and a residency of -5 µs. As u64 the residency passes the
        // tick, so it is a tick-bin hit (signed, it would be an intercept in bin 0).
        let drv = rk3399();
        let v = IdleGovernor::TeoV6_12;
        let mut cpu = teo_enable_device(v, 0);
        update(&drv, &mut cpu, v, 50_000_000, -5_000);
        assert_eq!(cpu.tick_hits, 1024);
        assert_eq!(cpu.state_bins[0].intercepts, 0);
        assert_eq!(cpu.total, 1024);
    }

    #[test]
    fn teo_mainline_tick_intercepts_need_a_tick_of_measured_idle() {
        // Mainline counts an intercept as a tick intercept when TICK_NSEC <= measured_ns
        // (a signed long against a u64).
        let drv = rk3399();
        let v = IdleGovernor::TeoMainline;
        let mut cpu = teo_enable_device(v, 0);
        let dev = dev_after(3_000_000);
        cpu.sleep_length_ns = 50_000_000;
        teo_update(&drv, &dev, &mut cpu, v, TICK);
        // 3 ms lands in bin 2 as does the 50 ms timer: a hit, no tick intercept.
        assert_eq!((cpu.state_bins[2].hits, cpu.tick_intercepts), (1024, 0));
        // 1.2 ms into a 50 ms sleep: an intercept in bin 1.
        let dev = dev_after(1_200_000);
        cpu.sleep_length_ns = 50_000_000;
        teo_update(&drv, &dev, &mut cpu, v, TICK);
        assert_eq!(cpu.state_bins[1].intercepts, 1024);
        assert_eq!(cpu.tick_intercepts, 0); // 1.1995 ms < 4 ms
                                            // With HZ=1000 (TICK_NSEC 1 ms) the same wakeup is a tick intercept.
        teo_update(&drv, &dev, &mut cpu, v, 1_000_000);
        assert_eq!(cpu.tick_intercepts, 1024);
        assert_eq!(cpu.state_bins[1].intercepts, 1024 - 128 + 1024);
    }

    #[test]
    fn teo_negative_sleep_length_is_not_clamped() {
        // v6.10, rk3399, no history: candidate 2, the sleep length -1 µs is below every
        // target residency (signed), so the walk ends on state 0 and the raw value is kept.
        let drv = rk3399();
        let v = IdleGovernor::TeoV6_10;
        let mut cpu = teo_enable_device(v, 1024);
        let mut dev = CpuidleDevice {
            last_state_idx: -1,
            ..CpuidleDevice::default()
        };
        let sel = teo_select(&drv, &mut dev, &mut cpu, v, &env(-1_000));
        assert_eq!(
            (sel.idx, sel.stop_tick, sel.sleep_length_queried),
            (0, false, true)
        );
        assert_eq!(cpu.sleep_length_ns, -1_000);
    }

    #[test]
    fn teo_mainline_hit_sum_exceeding_total_wraps_and_skips_the_search() {
        let drv = rk3399();
        let v = IdleGovernor::TeoMainline;
        let mut cpu = teo_enable_device(v, 0);
        cpu.state_bins[0] = TeoBin {
            intercepts: 600,
            hits: 1010,
            recent: 0,
        };
        let mut dev = CpuidleDevice {
            last_state_idx: -1,
            ..CpuidleDevice::default()
        };
        // total 1000 < idx_hit_sum 1010: 1000 - 1010 wraps to 4294967286 and
        // 2 * 600 is not above it, so the deepest state stays.
        cpu.total = 1000;
        let sel = teo_select(&drv, &mut dev, &mut cpu, v, &env(50_000_000));
        assert_eq!((sel.idx, sel.stop_tick), (2, true));
        // total 1100: 1100 - 1010 = 90 < 1200, the intercepts pull it to state 0.
        cpu.total = 1100;
        let sel = teo_select(&drv, &mut dev, &mut cpu, v, &env(50_000_000));
        assert_eq!((sel.idx, sel.stop_tick), (0, false));
    }

    #[test]
    fn teo_first_select_updates_zeroed_data() {
        // last_state_idx starts at 0, so the first select classifies a wakeup that never
        // happened: v6.10 sees time_span 0 >= sleep_length 0 (U64_MAX measured), mainline
        // a zero residency below WFI's exit latency (a short idle).
        let drv = rk3399();
        for (v, short_idles) in [
            (IdleGovernor::TeoV6_10, 0),
            (IdleGovernor::TeoMainline, 1024),
        ] {
            let mut cpu = teo_enable_device(v, 1024);
            let mut dev = CpuidleDevice::default();
            teo_select(&drv, &mut dev, &mut cpu, v, &env(50_000_000));
            assert_eq!(cpu.state_bins[0].hits, 1024, "{v:?}");
            assert_eq!(cpu.total, 1024, "{v:?}");
            assert_eq!(cpu.short_idles, short_idles, "{v:?}");
            assert_eq!(dev.last_state_idx, -1, "{v:?}");
        }
    }

    #[test]
    fn teo_v6_6_takes_the_shallower_state_with_the_tick_stopped() {
        // rk3399, tick stopped, sleep length 600 µs: 6.6.y takes state 0, v6.10 refuses
        // it (target residency below TICK_NSEC) and keeps state 2.
        let drv = rk3399();
        let mut e = env(600_000);
        e.tick_stopped = true;
        for (v, want, rule) in [
            (IdleGovernor::TeoV6_6, 0, IdleRule::SleepLength),
            (IdleGovernor::TeoV6_10, 2, IdleRule::Hits),
        ] {
            let mut cpu = teo_enable_device(v, 1024);
            let mut dev = CpuidleDevice {
                last_state_idx: -1,
                ..CpuidleDevice::default()
            };
            let sel = teo_select(&drv, &mut dev, &mut cpu, v, &e);
            assert_eq!((sel.idx, sel.stop_tick), (want, true), "{v:?}");
            assert_eq!(sel.rule, rule, "{v:?}");
        }
    }

    #[test]
    fn teo_v6_10_utilized_cpu_takes_the_shallower_non_polling_state() {
        // util 17 > 1024 >> 6 = 16: one step shallower than the deepest state.
        let drv = rk3399();
        let v = IdleGovernor::TeoV6_10;
        let mut cpu = teo_enable_device(v, 1024);
        let mut dev = CpuidleDevice {
            last_state_idx: -1,
            ..CpuidleDevice::default()
        };
        let mut e = env(50_000_000);
        e.cpu_util = 17;
        let sel = teo_select(&drv, &mut dev, &mut cpu, v, &e);
        assert_eq!((sel.idx, sel.cpu_utilized), (1, true));
        assert_eq!(sel.rule, IdleRule::Utilized);
        e.cpu_util = 16;
        let sel = teo_select(&drv, &mut dev, &mut cpu, v, &e);
        assert_eq!((sel.idx, sel.cpu_utilized), (2, false));
        assert_eq!(sel.rule, IdleRule::Hits);
    }

    #[test]
    fn teo_intercepts_majority_picks_the_shallow_state_and_names_the_rule() {
        // 800 of 1000 recent idles were intercepted in WFI: 2 * 800 > 1000 - 0, so the
        // deepest shallower state most intercepts reached, state 0, wins over the 50 ms
        // timer. v6.12 then learns the sleep length and keeps the tick.
        let drv = rk3399();
        for (v, rule, stop_tick) in [
            (IdleGovernor::TeoMainline, IdleRule::Intercepts, false),
            (IdleGovernor::TeoV6_12, IdleRule::InterceptsChoseZero, false),
        ] {
            let mut cpu = teo_enable_device(v, 1024);
            cpu.state_bins[0].intercepts = 800;
            cpu.state_bins[2].hits = 200;
            cpu.total = 1000;
            let mut dev = CpuidleDevice {
                last_state_idx: -1,
                ..CpuidleDevice::default()
            };
            let sel = teo_select(&drv, &mut dev, &mut cpu, v, &env(50_000_000));
            assert_eq!(
                (sel.idx, sel.stop_tick, sel.rule),
                (0, stop_tick, rule),
                "{v:?}"
            );
        }
    }

    #[test]
    fn teo_reflect_tick_wakeup_needs_a_sleep_length_beyond_the_tick() {
        // got_tick with sleep_length == TICK_NSEC is genuine (the test is `>`);
        // one nanosecond more makes it a safety-net wakeup.
        for (sleep, artificial) in [(TICK, false), (TICK + 1, true)] {
            let mut dev = CpuidleDevice::default();
            let mut cpu = TeoCpu {
                sleep_length_ns: sleep,
                ..TeoCpu::default()
            };
            let env = ReflectEnv {
                tick_nsec: TICK,
                got_tick: true,
                now_ns: 7_000,
            };
            teo_reflect(&mut dev, &mut cpu, IdleGovernor::TeoMainline, 1, &env);
            assert_eq!(cpu.artificial_wakeup, artificial);
            cpu.time_span_ns = 2_000;
            teo_reflect(&mut dev, &mut cpu, IdleGovernor::TeoV6_12, 1, &env);
            assert_eq!(cpu.time_span_ns, if artificial { sleep } else { 5_000 });
            assert_eq!(dev.last_state_idx, 1);
        }
    }
}
