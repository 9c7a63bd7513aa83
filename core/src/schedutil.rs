// SPDX-License-Identifier: GPL-2.0-only
//! The schedutil cpufreq governor — kernel/sched/cpufreq_schedutil.c and
//! include/linux/sched/cpufreq.h.
//!
//! schedutil turns a CPU's utilization into a performance level with 25 % headroom, bounded
//! by the floor and ceiling `effective_cpu_util()` reports, maps it linearly onto the
//! reference frequency (`freq * util / capacity`, truncated to the `unsigned int` a
//! frequency is stored in) and lets cpufreq pick a table entry. Around that sit the
//! governor's state machines: the rate limit (a *signed* time difference), the iowait
//! boost (doubling per request, halving per update without one), the busy "hold" filter
//! of single-CPU policies and the `need_freq_update` / `limits_changed` handshake with
//! cpufreq. Everything the kernel reads from runqueues and arch hooks is an explicit
//! [`SugovRq`] / [`SugovEnv`] input; the cpufreq policy is [`crate::cpufreq`].
//!
//! Reflects mainline with `75da043d8f88` ("cpufreq/sched: Set need_freq_update in
//! ignore_dl_rate_limit()"): a DL bandwidth rise and any pending `need_freq_update`
//! bypass the rate limit.

use crate::capacity::{effective_cpu_util, EffectiveUtilInput};
use crate::cpufreq::{
    __cpufreq_driver_target, cpufreq_driver_fast_switch, cpufreq_driver_resolve_freq,
    cpufreq_policy_apply_limits, CpufreqPolicy, CPUFREQ_RELATION_L,
};
use crate::math::{SCHED_CAPACITY_SCALE, SCHED_CAPACITY_SHIFT};
use crate::profile::{BusyFilter, Profile};
use crate::uclamp::uclamp_rq_is_capped;

/// `IOWAIT_BOOST_MIN`: the first iowait boost, 1/8 of the capacity scale.
pub const IOWAIT_BOOST_MIN: u32 = (SCHED_CAPACITY_SCALE / 8) as u32; // 128
/// `SCHED_CPUFREQ_IOWAIT`: the only update flag the reflected kernel defines.
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1 << 0;
/// `NSEC_PER_USEC`.
pub const NSEC_PER_USEC: i64 = 1000;

/// `TICK_NSEC` for a given `HZ`: `(NSEC_PER_SEC + HZ/2) / HZ`, a signed long
/// (250 → 4000000, 1000 → 1000000, 300 → 3333333). `None` for `HZ == 0`.
pub fn tick_nsec(hz: u32) -> Option<i64> {
    const NSEC_PER_SEC: i64 = 1_000_000_000;
    let hz = i64::from(hz);
    (NSEC_PER_SEC + hz / 2).checked_div(hz)
}

/// What the governor reads from one CPU's runqueue and arch hooks at an update: the
/// runqueue inputs `effective_cpu_util()` reads, one struct for both (see
/// [`EffectiveUtilInput`]). The governor passes `util_cfs_boost` as `effective_cpu_util()`'s
/// `util_cfs` and takes `uclamp_is_used()` from [`SugovEnv`], not from the struct.
pub type SugovRq = EffectiveUtilInput;

/// System-wide facts the governor reads (static keys, arch hooks, `HZ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SugovEnv {
    /// `TICK_NSEC` (a signed long), see [`tick_nsec`].
    pub tick_nsec: i64,
    /// `uclamp_is_used()`.
    pub uclamp_used: bool,
    /// `arch_scale_freq_invariant()`.
    pub freq_invariant: bool,
    /// `arch_scale_freq_ref(policy->cpu)` in kHz (an `unsigned long`), 0 = none.
    pub arch_freq_ref: u64,
}

impl Default for SugovEnv {
    /// HZ=250, no uclamp, frequency invariant, no arch reference frequency.
    fn default() -> Self {
        Self {
            tick_nsec: 4_000_000,
            uclamp_used: false,
            freq_invariant: true,
            arch_freq_ref: 0,
        }
    }
}

/// `struct sugov_policy`: the governor's per-policy state (locks, irq_work and the
/// kthread are not modelled; slow switching is the `work_in_progress` flag plus
/// [`sugov_work`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SugovPolicy {
    /// `policy`: the cpufreq policy this governor drives.
    pub policy: CpufreqPolicy,
    /// `last_freq_update_time` (ns).
    pub last_freq_update_time: u64,
    /// `freq_update_delay_ns`: the rate limit, `rate_limit_us * NSEC_PER_USEC` (s64).
    pub freq_update_delay_ns: i64,
    /// `next_freq`: the last committed frequency (kHz).
    pub next_freq: u32,
    /// `cached_raw_freq`: the last raw (unresolved) frequency.
    pub cached_raw_freq: u32,
    /// `work_in_progress`: a slow-switch update is queued.
    pub work_in_progress: bool,
    /// `limits_changed`: set by `sugov_limits()`, consumed by the next update.
    pub limits_changed: bool,
    /// `need_freq_update`: bypass the rate limit, the raw-freq cache and the hold filter.
    pub need_freq_update: bool,
}

/// `struct sugov_cpu`: the governor's per-CPU state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SugovCpu {
    /// `iowait_boost_pending`: a doubling was requested since the last apply.
    pub iowait_boost_pending: bool,
    /// `iowait_boost`: 0 or 128..=1024 (capacity scale).
    pub iowait_boost: u32,
    /// `last_update` (ns).
    pub last_update: u64,
    /// `util`: the last performance request (capacity units, headroom included).
    pub util: u64,
    /// `bw_min`: the last performance floor from `effective_cpu_util()`.
    pub bw_min: u64,
    /// `saved_idle_calls`: idle-entry count seen by the last hold test.
    pub saved_idle_calls: u64,
}

/// What one update did (for traces and tests; the kernel keeps none of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SugovUpdate {
    /// `sugov_should_update_freq()` returned true.
    pub should_update: bool,
    /// What `get_next_freq()` returned (0 when no frequency update ran).
    pub next_f_resolved: u32,
    /// `sugov_hold_freq()` result; `None` when it was not called (shared path, or no
    /// frequency update).
    pub hold: Option<bool>,
    /// The frequency after the hold filter (0 when no frequency update ran).
    pub next_f: u32,
    /// `sugov_update_next_freq()` returned true: a new frequency was committed.
    pub committed: bool,
}

/// `map_util_perf()`: add the 25 % DVFS headroom, `util + util / 4` (64-bit, wrapping).
#[inline]
pub fn map_util_perf(util: u64) -> u64 {
    util.wrapping_add(util >> 2)
}

/// `sugov_effective_cpu_perf()`: headroom-added utilization, capped at `max`, but never
/// below `min`.
///
/// Trap: `min` wins over `max`, so the result exceeds `max` whenever `min > max`.
#[inline]
pub fn sugov_effective_cpu_perf(actual: u64, min: u64, max: u64) -> u64 {
    let actual = map_util_perf(actual);
    let max = if actual < max { actual } else { max };
    core::cmp::max(min, max)
}

/// `map_util_freq()`: `freq * util / cap`, 64-bit multiply then truncating division (no
/// headroom here in current mainline; it comes from [`map_util_perf`]).
///
/// Trap: the product wraps at 2^64; `cap == 0` is a kernel divide fault, `None` here.
#[inline]
pub fn map_util_freq(util: u64, freq: u64, cap: u64) -> Option<u64> {
    freq.wrapping_mul(util).checked_div(cap)
}

/// `get_capacity_ref_freq()`: the frequency that corresponds to full capacity.
///
/// `arch_freq_ref` if set, else `cpuinfo.max_freq` on a frequency-invariant system, else
/// `cur + cur/4`. Traps: that last sum is `unsigned int` arithmetic and wraps for
/// `cur >= 3435973837`; the arch reference is read into an `unsigned int`, so only its
/// low 32 bits count (and a value whose low 32 bits are 0 counts as none).
#[inline]
pub fn get_capacity_ref_freq(policy: &CpufreqPolicy, env: &SugovEnv) -> u64 {
    let freq = env.arch_freq_ref as u32; // kernel: unsigned int freq = arch_scale_freq_ref()
    if freq != 0 {
        return u64::from(freq);
    }
    if env.freq_invariant {
        return u64::from(policy.cpuinfo_max_freq);
    }
    u64::from(policy.cur.wrapping_add(policy.cur >> 2))
}

/// `get_next_freq()`: the table frequency for `util` out of `max`, with the raw-frequency
/// cache.
///
/// Traps: the raw frequency is stored in an `unsigned int`, so only its low 32 bits are
/// compared and resolved; an unchanged raw frequency returns the old `next_freq` without
/// resolving, unless `need_freq_update` is pending (which this function does not clear).
/// `None` when `max == 0` (the kernel's divide fault).
pub fn get_next_freq(
    sg_policy: &mut SugovPolicy,
    env: &SugovEnv,
    util: u64,
    max: u64,
) -> Option<u32> {
    let freq = get_capacity_ref_freq(&sg_policy.policy, env);
    let freq = map_util_freq(util, freq, max)? as u32; // kernel stores an unsigned int
    if freq == sg_policy.cached_raw_freq && !sg_policy.need_freq_update {
        return Some(sg_policy.next_freq);
    }
    sg_policy.cached_raw_freq = freq;
    Some(cpufreq_driver_resolve_freq(&mut sg_policy.policy, freq))
}

/// `sugov_get_util()`: the CPU's performance request (`util`) and floor (`bw_min`) from
/// its runqueue, with `boost` (the iowait boost in capacity units) as a floor on the
/// utilization *before* the headroom is added.
pub fn sugov_get_util(sg_cpu: &mut SugovCpu, rq: &SugovRq, env: &SugovEnv, boost: u64) {
    let eff = effective_cpu_util(&EffectiveUtilInput {
        util_cfs: rq.util_cfs_boost,
        uclamp_used: env.uclamp_used,
        ..*rq
    });
    let util = core::cmp::max(eff.ret, boost);
    sg_cpu.bw_min = eff.min;
    sg_cpu.util = sugov_effective_cpu_perf(util, eff.min, eff.max);
}

/// `sugov_iowait_reset()`: drop (or restart at the minimum, when `set_iowait_boost`) a
/// boost that has not been refreshed for more than a tick.
///
/// Trap: the elapsed time is a *signed* 64-bit difference compared `<= TICK_NSEC`, so time
/// going backwards never resets.
pub fn sugov_iowait_reset(
    sg_cpu: &mut SugovCpu,
    env: &SugovEnv,
    time: u64,
    set_iowait_boost: bool,
) -> bool {
    let delta_ns = time.wrapping_sub(sg_cpu.last_update) as i64; // kernel s64
    if delta_ns <= env.tick_nsec {
        return false;
    }
    sg_cpu.iowait_boost = if set_iowait_boost {
        IOWAIT_BOOST_MIN
    } else {
        0
    };
    sg_cpu.iowait_boost_pending = set_iowait_boost;
    true
}

/// `sugov_iowait_boost()`: record an update's iowait request: start at
/// `IOWAIT_BOOST_MIN`, double (up to 1024) once per apply.
///
/// Traps: only bit 0 of `flags` (`SCHED_CPUFREQ_IOWAIT`) means anything; a stale boost is
/// reset first; `iowait_boost_pending` allows only one doubling until the next apply.
pub fn sugov_iowait_boost(sg_cpu: &mut SugovCpu, env: &SugovEnv, time: u64, flags: u32) {
    let set_iowait_boost = flags & SCHED_CPUFREQ_IOWAIT != 0;
    if sg_cpu.iowait_boost != 0 && sugov_iowait_reset(sg_cpu, env, time, set_iowait_boost) {
        return;
    }
    if !set_iowait_boost || sg_cpu.iowait_boost_pending {
        return;
    }
    sg_cpu.iowait_boost_pending = true;
    if sg_cpu.iowait_boost != 0 {
        let doubled = sg_cpu.iowait_boost.wrapping_shl(1); // unsigned int shift
        sg_cpu.iowait_boost = core::cmp::min(doubled, SCHED_CAPACITY_SCALE as u32);
        return;
    }
    sg_cpu.iowait_boost = IOWAIT_BOOST_MIN;
}

/// `sugov_iowait_apply()`: the boost in capacity units for this update, `(boost *
/// max_cap) >> 10`; halves the boost when no new request is pending and drops it below
/// `IOWAIT_BOOST_MIN`.
pub fn sugov_iowait_apply(sg_cpu: &mut SugovCpu, env: &SugovEnv, time: u64, max_cap: u64) -> u64 {
    if sg_cpu.iowait_boost == 0 {
        return 0;
    }
    if sugov_iowait_reset(sg_cpu, env, time, false) {
        return 0;
    }
    if !sg_cpu.iowait_boost_pending {
        sg_cpu.iowait_boost >>= 1;
        if sg_cpu.iowait_boost < IOWAIT_BOOST_MIN {
            sg_cpu.iowait_boost = 0;
            return 0;
        }
    }
    sg_cpu.iowait_boost_pending = false;
    u64::from(sg_cpu.iowait_boost).wrapping_mul(max_cap) >> SCHED_CAPACITY_SHIFT
}

/// `sugov_should_update_freq()`: may a new frequency be computed now?
///
/// Traps: a limits change is consumed here (it turns into `need_freq_update`); any
/// pending `need_freq_update` returns true before the rate limit; the rate limit compares
/// the *signed* 64-bit time difference, so time going backwards means "not yet".
pub fn sugov_should_update_freq(sg_policy: &mut SugovPolicy, time: u64) -> bool {
    if sg_policy.limits_changed {
        sg_policy.limits_changed = false;
        sg_policy.need_freq_update = true;
        return true;
    } else if sg_policy.need_freq_update {
        return true;
    }
    let delta_ns = time.wrapping_sub(sg_policy.last_freq_update_time) as i64; // kernel s64
    delta_ns >= sg_policy.freq_update_delay_ns
}

/// `sugov_update_next_freq()`: commit `next_freq` (and the update time) if it changed.
///
/// Trap: a pending `need_freq_update` is cleared here (not in `get_next_freq()`); with
/// it, an unchanged frequency is still committed when the driver has
/// `CPUFREQ_NEED_UPDATE_LIMITS`.
pub fn sugov_update_next_freq(sg_policy: &mut SugovPolicy, time: u64, next_freq: u32) -> bool {
    if sg_policy.need_freq_update {
        sg_policy.need_freq_update = false;
        if sg_policy.next_freq == next_freq && !sg_policy.policy.driver_need_update_limits {
            return false;
        }
    } else if sg_policy.next_freq == next_freq {
        return false;
    }
    sg_policy.next_freq = next_freq;
    sg_policy.last_freq_update_time = time;
    true
}

/// `sugov_deferred_update()`: queue the slow-switch work unless it is already queued.
pub fn sugov_deferred_update(sg_policy: &mut SugovPolicy) {
    sg_policy.work_in_progress = true;
}

/// `sugov_hold_freq()`: the busy filter. True when the CPU has not entered idle since the
/// last test (`idle_calls` unchanged), i.e. a lower frequency would be premature.
///
/// Traps: it records `idle_calls` in `saved_idle_calls` on every call that reaches the
/// test, held or not. Mainline first returns false when the rq is capped by uclamp_max
/// (commit "sched/sugov: Ignore 'busy' filter when rq is capped by uclamp_max", 2021),
/// *without* recording `idle_calls`, so the next uncapped call compares with an older
/// value; the `WithoutUclampException` profile is the behaviour before that commit.
pub fn sugov_hold_freq(
    sg_cpu: &mut SugovCpu,
    rq: &SugovRq,
    env: &SugovEnv,
    profile: &Profile,
) -> bool {
    match profile.busy_filter {
        BusyFilter::UclampException => {
            if uclamp_rq_is_capped(env.uclamp_used, rq.util_cfs, rq.util_rt, rq.uclamp_max) {
                return false;
            }
        }
        BusyFilter::WithoutUclampException => {}
    }
    let idle_calls = rq.idle_calls;
    let ret = idle_calls == sg_cpu.saved_idle_calls;
    sg_cpu.saved_idle_calls = idle_calls;
    ret
}

/// `ignore_dl_rate_limit()`: a DL bandwidth above the CPU's last floor sets
/// `need_freq_update`, so the coming update skips the rate limit.
///
/// Trap: it compares against `bw_min` (irq + bw_dl, or uclamp_min, or the capacity for
/// RT without uclamp) stored by the *last* util computation, not against the last bw_dl.
pub fn ignore_dl_rate_limit(sg_policy: &mut SugovPolicy, sg_cpu: &SugovCpu, rq: &SugovRq) {
    if rq.bw_dl > sg_cpu.bw_min {
        sg_policy.need_freq_update = true;
    }
}

/// `sugov_update_single_common()`: the iowait bookkeeping, then (if the rate limit
/// allows) the boost and the CPU's utilization. Returns whether a frequency update runs.
///
/// Trap: the iowait request is recorded and `last_update` moved *before* the rate-limit
/// test, so a rate-limited call still starts or doubles the boost.
pub fn sugov_update_single_common(
    sg_policy: &mut SugovPolicy,
    sg_cpu: &mut SugovCpu,
    rq: &SugovRq,
    env: &SugovEnv,
    time: u64,
    flags: u32,
) -> bool {
    sugov_iowait_boost(sg_cpu, env, time, flags);
    sg_cpu.last_update = time;
    ignore_dl_rate_limit(sg_policy, sg_cpu, rq);
    if !sugov_should_update_freq(sg_policy, time) {
        return false;
    }
    let boost = sugov_iowait_apply(sg_cpu, env, time, rq.capacity);
    sugov_get_util(sg_cpu, rq, env, boost);
    true
}

/// Hand a committed frequency to the driver: fast switch now, or queue the slow work.
fn sugov_commit(sg_policy: &mut SugovPolicy, next_f: u32) {
    if sg_policy.policy.fast_switch_enabled {
        cpufreq_driver_fast_switch(&mut sg_policy.policy, next_f);
    } else {
        sugov_deferred_update(sg_policy);
    }
}

/// `sugov_update_single_freq()`: the update hook of a one-CPU policy.
///
/// Traps: `sugov_hold_freq()` is evaluated first in its `&&` chain, so it runs (and
/// records idle_calls) even when the frequency does not go down or `need_freq_update` is
/// pending; when it holds, `cached_raw_freq` is restored to its value at entry.
/// `None` when the CPU capacity is 0 (the kernel's divide fault).
pub fn sugov_update_single_freq(
    sg_policy: &mut SugovPolicy,
    sg_cpu: &mut SugovCpu,
    rq: &SugovRq,
    env: &SugovEnv,
    profile: &Profile,
    time: u64,
    flags: u32,
) -> Option<SugovUpdate> {
    let cached_freq = sg_policy.cached_raw_freq;
    let max_cap = rq.capacity;
    if !sugov_update_single_common(sg_policy, sg_cpu, rq, env, time, flags) {
        return Some(SugovUpdate::default());
    }
    let resolved = get_next_freq(sg_policy, env, sg_cpu.util, max_cap)?;
    let mut next_f = resolved;
    let hold = sugov_hold_freq(sg_cpu, rq, env, profile);
    if hold && next_f < sg_policy.next_freq && !sg_policy.need_freq_update {
        next_f = sg_policy.next_freq;
        sg_policy.cached_raw_freq = cached_freq;
    }
    let committed = sugov_update_next_freq(sg_policy, time, next_f);
    if committed {
        sugov_commit(sg_policy, next_f);
    }
    Some(SugovUpdate {
        should_update: true,
        next_f_resolved: resolved,
        hold: Some(hold),
        next_f,
        committed,
    })
}

/// `sugov_next_freq_shared()`: the policy frequency from the busiest CPU.
///
/// Traps: every CPU's boost is applied (and may decay or reset) and every CPU's
/// util/bw_min is recomputed, with the *triggering* CPU's time and capacity. `sg_cpus`
/// and `rqs` are the policy's CPUs in order; `None` when they differ in length or the
/// capacity is 0.
pub fn sugov_next_freq_shared(
    sg_policy: &mut SugovPolicy,
    sg_cpus: &mut [SugovCpu],
    rqs: &[SugovRq],
    env: &SugovEnv,
    max_cap: u64,
    time: u64,
) -> Option<u32> {
    let mut get_util = plain_get_util(env);
    sugov_next_freq_shared_with(sg_policy, (sg_cpus, rqs), env, max_cap, time, &mut get_util)
}

/// The `get_util` of the `_with` functions that always calls [`sugov_get_util`].
fn plain_get_util(env: &SugovEnv) -> impl FnMut(usize, &mut SugovCpu, &SugovRq, u64) + '_ {
    move |_, sg_cpu, rq, boost| sugov_get_util(sg_cpu, rq, env, boost)
}

/// [`sugov_next_freq_shared`] of the policy's `(sg_cpus, rqs)` with each CPU's
/// [`sugov_get_util`] done by `get_util(j, sg_cpu, rq, boost)` (`j`: the CPU's position
/// in the policy), which must set `sg_cpu.util` and `sg_cpu.bw_min` as [`sugov_get_util`]
/// with `env` would. They are a function of `(rq, boost)` and `env.uclamp_used` only, so
/// a caller that knows a CPU's `rq` and `boost` unchanged since its last call may give
/// back that call's result.
pub fn sugov_next_freq_shared_with(
    sg_policy: &mut SugovPolicy,
    (sg_cpus, rqs): (&mut [SugovCpu], &[SugovRq]),
    env: &SugovEnv,
    max_cap: u64,
    time: u64,
    get_util: &mut impl FnMut(usize, &mut SugovCpu, &SugovRq, u64),
) -> Option<u32> {
    if sg_cpus.len() != rqs.len() {
        return None;
    }
    let mut util = 0;
    for (j, (j_sg_cpu, rq)) in sg_cpus.iter_mut().zip(rqs).enumerate() {
        let boost = sugov_iowait_apply(j_sg_cpu, env, time, max_cap);
        get_util(j, j_sg_cpu, rq, boost);
        util = core::cmp::max(j_sg_cpu.util, util);
    }
    get_next_freq(sg_policy, env, util, max_cap)
}

/// `sugov_update_shared()`: the update hook of a multi-CPU policy, triggered by CPU
/// `cpu` (its position in `sg_cpus`/`rqs`).
///
/// Traps: no busy filter; only the triggering CPU records its iowait request, moves
/// `last_update` and is checked for a DL bandwidth rise. `None` for an index outside the
/// policy, mismatched slices or a zero capacity.
pub fn sugov_update_shared(
    sg_policy: &mut SugovPolicy,
    sg_cpus: &mut [SugovCpu],
    rqs: &[SugovRq],
    cpu: usize,
    env: &SugovEnv,
    time: u64,
    flags: u32,
) -> Option<SugovUpdate> {
    let mut get_util = plain_get_util(env);
    let cpus = (sg_cpus, rqs, cpu);
    sugov_update_shared_with(sg_policy, cpus, env, time, flags, &mut get_util)
}

/// [`sugov_update_shared`] of the policy's `(sg_cpus, rqs, cpu)` with each CPU's
/// [`sugov_get_util`] done by `get_util` (see [`sugov_next_freq_shared_with`]).
pub fn sugov_update_shared_with(
    sg_policy: &mut SugovPolicy,
    (sg_cpus, rqs, cpu): (&mut [SugovCpu], &[SugovRq], usize),
    env: &SugovEnv,
    time: u64,
    flags: u32,
    get_util: &mut impl FnMut(usize, &mut SugovCpu, &SugovRq, u64),
) -> Option<SugovUpdate> {
    let rq = *rqs.get(cpu)?;
    let sg_cpu = sg_cpus.get_mut(cpu)?;
    sugov_iowait_boost(sg_cpu, env, time, flags);
    sg_cpu.last_update = time;
    ignore_dl_rate_limit(sg_policy, sg_cpu, &rq);
    if !sugov_should_update_freq(sg_policy, time) {
        return Some(SugovUpdate::default());
    }
    let next_f =
        sugov_next_freq_shared_with(sg_policy, (sg_cpus, rqs), env, rq.capacity, time, get_util)?;
    let committed = sugov_update_next_freq(sg_policy, time, next_f);
    if committed {
        sugov_commit(sg_policy, next_f);
    }
    Some(SugovUpdate {
        should_update: true,
        next_f_resolved: next_f,
        hold: None,
        next_f,
        committed,
    })
}

/// `sugov_work()`: the slow-switch kthread body: clear `work_in_progress` and ask the
/// driver for `next_freq` by plain RELATION_L.
///
/// Trap: no E flag here, so an inefficient `next_freq` inside the limits is kept.
pub fn sugov_work(sg_policy: &mut SugovPolicy) {
    let freq = sg_policy.next_freq;
    sg_policy.work_in_progress = false;
    __cpufreq_driver_target(&mut sg_policy.policy, freq, CPUFREQ_RELATION_L);
}

/// `sugov_limits()`: the governor's limits hook, after cpufreq changed min/max. A
/// slow-switch policy moves `cur` inside the limits at once; both kinds flag
/// `limits_changed` for the next update.
pub fn sugov_limits(sg_policy: &mut SugovPolicy) {
    if !sg_policy.policy.fast_switch_enabled {
        cpufreq_policy_apply_limits(&mut sg_policy.policy);
    }
    sg_policy.limits_changed = true;
}

/// `sugov_start()`: reset the governor state of a policy and its CPUs; a driver with
/// `CPUFREQ_NEED_UPDATE_LIMITS` starts with `need_freq_update` pending.
pub fn sugov_start(sg_policy: &mut SugovPolicy, rate_limit_us: u32, sg_cpus: &mut [SugovCpu]) {
    sg_policy.freq_update_delay_ns = i64::from(rate_limit_us) * NSEC_PER_USEC;
    sg_policy.last_freq_update_time = 0;
    sg_policy.next_freq = 0;
    sg_policy.work_in_progress = false;
    sg_policy.limits_changed = false;
    sg_policy.cached_raw_freq = 0;
    sg_policy.need_freq_update = sg_policy.policy.driver_need_update_limits;
    for c in sg_cpus {
        *c = SugovCpu::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sugov_start_resets_the_policy_and_every_cpu() {
        let mut sg = SugovPolicy {
            last_freq_update_time: 77,
            freq_update_delay_ns: 1,
            next_freq: 1800000,
            cached_raw_freq: 1700000,
            work_in_progress: true,
            limits_changed: true,
            need_freq_update: false,
            ..Default::default()
        };
        sg.policy.driver_need_update_limits = true;
        let busy = SugovCpu {
            iowait_boost_pending: true,
            iowait_boost: 512,
            last_update: 9,
            util: 300,
            bw_min: 20,
            saved_idle_calls: 4,
        };
        let mut cpus = [busy; 2];
        sugov_start(&mut sg, 1000, &mut cpus);
        // rate_limit_us 1000 → 1 ms in ns.
        assert_eq!(sg.freq_update_delay_ns, 1_000_000);
        assert_eq!(
            (sg.last_freq_update_time, sg.next_freq, sg.cached_raw_freq),
            (0, 0, 0)
        );
        assert!(!sg.work_in_progress && !sg.limits_changed);
        // need_freq_update follows the driver's CPUFREQ_NEED_UPDATE_LIMITS.
        assert!(sg.need_freq_update);
        assert_eq!(cpus, [SugovCpu::default(); 2]);
        sg.policy.driver_need_update_limits = false;
        sugov_start(&mut sg, 0, &mut []);
        assert!(!sg.need_freq_update);
        assert_eq!(sg.freq_update_delay_ns, 0);
    }

    #[test]
    fn map_util_perf_wraps_near_u64_max() {
        assert_eq!(map_util_perf(800), 1000);
        assert_eq!(
            map_util_perf(u64::MAX),
            u64::MAX.wrapping_add(u64::MAX >> 2)
        );
    }

    #[test]
    fn sugov_effective_cpu_perf_min_wins_over_max() {
        assert_eq!(sugov_effective_cpu_perf(400, 0, 1024), 500);
        assert_eq!(sugov_effective_cpu_perf(1000, 0, 1024), 1024);
        assert_eq!(sugov_effective_cpu_perf(100, 700, 300), 700);
    }

    // --- The fixture README's "points a reimplementation is likely to get wrong". ---

    use crate::cpufreq::{set_freq_table_sorted, CpufreqFrequencyTable};

    const A72: [u32; 8] = [
        408000, 600000, 816000, 1008000, 1200000, 1416000, 1608000, 1800000,
    ];

    /// A fast-switch A72 policy (408..1800 MHz) with a 1 ms rate limit.
    fn a72() -> SugovPolicy {
        let mut policy = CpufreqPolicy {
            freq_table: Some(
                A72.iter()
                    .map(|&frequency| CpufreqFrequencyTable {
                        flags: 0,
                        frequency,
                    })
                    .collect(),
            ),
            min: 408000,
            max: 1800000,
            cur: 408000,
            cpuinfo_min_freq: 408000,
            cpuinfo_max_freq: 1800000,
            fast_switch_enabled: true,
            ..Default::default()
        };
        assert_eq!(set_freq_table_sorted(&mut policy), 0);
        SugovPolicy {
            policy,
            freq_update_delay_ns: 1_000_000,
            ..Default::default()
        }
    }

    fn rq(util: u64, idle_calls: u64) -> SugovRq {
        SugovRq {
            capacity: 1024,
            util_cfs: util,
            util_cfs_boost: util,
            uclamp_max: 1024,
            idle_calls,
            ..Default::default()
        }
    }

    fn env() -> SugovEnv {
        SugovEnv {
            uclamp_used: true,
            ..Default::default()
        }
    }

    #[test]
    fn rate_limit_is_a_signed_comparison_so_time_going_backwards_does_not_update() {
        let mut sg = a72();
        sg.last_freq_update_time = 10_000_000;
        // 1 ns earlier: as u64 the delta would be huge; as s64 it is -1.
        assert!(!sugov_should_update_freq(&mut sg, 9_999_999));
        assert!(!sugov_should_update_freq(&mut sg, 10_999_999));
        assert!(sugov_should_update_freq(&mut sg, 11_000_000));
    }

    #[test]
    fn iowait_reset_is_signed_so_going_backwards_never_resets() {
        let mut c = SugovCpu {
            iowait_boost: 512,
            last_update: 100_000_000,
            ..Default::default()
        };
        assert!(!sugov_iowait_reset(&mut c, &env(), 1_000, false));
        assert_eq!(c.iowait_boost, 512);
        // More than TICK_NSEC (4 ms) forward resets.
        assert!(sugov_iowait_reset(&mut c, &env(), 104_000_001, true));
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (128, true));
    }

    #[test]
    fn iowait_boost_runs_before_the_rate_limit_and_moves_last_update_backwards() {
        let (mut sg, mut c) = (a72(), SugovCpu::default());
        let p = Profile::MAINLINE;
        let t = sugov_update_single_freq(&mut sg, &mut c, &rq(300, 1), &env(), &p, 10_000_000, 1);
        assert!(t.is_some_and(|t| t.should_update));
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (128, false));
        // Rate-limited (0.5 ms later) and then backwards in time: no frequency update, but
        // the boost doubles once and last_update follows the caller's clock.
        let t = sugov_update_single_freq(&mut sg, &mut c, &rq(300, 2), &env(), &p, 10_500_000, 1);
        assert_eq!(t, Some(SugovUpdate::default()));
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (256, true));
        sugov_update_single_freq(&mut sg, &mut c, &rq(300, 3), &env(), &p, 9_000_000, 1);
        assert_eq!((c.iowait_boost, c.last_update), (256, 9_000_000));
    }

    #[test]
    fn iowait_pending_allows_one_doubling_per_apply_and_apply_halves_then_drops_below_128() {
        let e = env();
        let mut c = SugovCpu::default();
        sugov_iowait_boost(&mut c, &e, 1_000_000, SCHED_CPUFREQ_IOWAIT);
        sugov_iowait_boost(&mut c, &e, 1_100_000, SCHED_CPUFREQ_IOWAIT);
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (128, true));
        // Pending: no halving; the boost is scaled to the CPU's capacity, (128*446)>>10.
        assert_eq!(sugov_iowait_apply(&mut c, &e, 1_200_000, 446), 55);
        sugov_iowait_boost(&mut c, &e, 1_300_000, SCHED_CPUFREQ_IOWAIT);
        assert_eq!(c.iowait_boost, 256);
        assert_eq!(sugov_iowait_apply(&mut c, &e, 1_400_000, 1024), 256);
        // Nothing pending: 256 -> 128 (kept), then 128 -> 64 < 128 -> 0.
        assert_eq!(sugov_iowait_apply(&mut c, &e, 1_500_000, 1024), 128);
        assert_eq!(sugov_iowait_apply(&mut c, &e, 1_600_000, 1024), 0);
        assert_eq!(c.iowait_boost, 0);
    }

    #[test]
    fn iowait_boost_is_a_floor_before_the_headroom() {
        let mut c = SugovCpu::default();
        // util 100, boost 512: max(100, 512) = 512, then +25 % = 640.
        sugov_get_util(&mut c, &rq(100, 0), &env(), 512);
        assert_eq!(c.util, 640);
    }

    #[test]
    fn hold_filter_records_idle_calls_even_when_its_result_is_unused() {
        let (mut sg, mut c) = (a72(), SugovCpu::default());
        let p = Profile::MAINLINE;
        // First update goes *up* (hold is not needed) yet saved_idle_calls is recorded.
        let t = sugov_update_single_freq(&mut sg, &mut c, &rq(600, 7), &env(), &p, 10_000_000, 0)
            .unwrap_or_default();
        assert_eq!((t.hold, c.saved_idle_calls), (Some(false), 7));
        assert_eq!(sg.next_freq, 1416000); // 1800000*750/1024 = 1318359 -> L 1416000
                                           // Busy (idle_calls unchanged) and lower: held, cached_raw_freq restored.
        let cached = sg.cached_raw_freq;
        let t = sugov_update_single_freq(&mut sg, &mut c, &rq(200, 7), &env(), &p, 12_000_000, 0)
            .unwrap_or_default();
        assert_eq!(
            (t.hold, t.next_f_resolved, t.next_f),
            (Some(true), 600000, 1416000)
        );
        assert_eq!((sg.cached_raw_freq, t.committed), (cached, false));
    }

    #[test]
    fn capped_rq_returns_before_recording_idle_calls_on_mainline_only() {
        let mut capped = rq(500, 9);
        capped.uclamp_max = 400;
        let mut c = SugovCpu {
            saved_idle_calls: 3,
            ..Default::default()
        };
        assert!(!sugov_hold_freq(
            &mut c,
            &capped,
            &env(),
            &Profile::MAINLINE
        ));
        assert_eq!(c.saved_idle_calls, 3);
        let old = Profile::from_name("sugov-busy-without-uclamp").unwrap_or_default();
        assert!(!sugov_hold_freq(&mut c, &capped, &env(), &old));
        assert_eq!(c.saved_idle_calls, 9);
        assert!(sugov_hold_freq(&mut c, &capped, &env(), &old));
    }

    #[test]
    fn uclamp_exception_reads_plain_util_cfs_not_the_boosted_value() {
        // util_cfs 399 < uclamp_max 400 although util_cfs_boost is 450: not capped, so
        // the busy filter applies and holds.
        let r = SugovRq {
            util_cfs: 399,
            util_cfs_boost: 450,
            uclamp_max: 400,
            ..rq(0, 5)
        };
        let mut c = SugovCpu {
            saved_idle_calls: 5,
            ..Default::default()
        };
        assert!(sugov_hold_freq(&mut c, &r, &env(), &Profile::MAINLINE));
        // rq util == uclamp_max (cfs 300 + rt 100) is capped: no hold.
        let r = SugovRq {
            util_cfs: 300,
            util_rt: 100,
            ..r
        };
        assert!(!sugov_hold_freq(&mut c, &r, &env(), &Profile::MAINLINE));
    }

    #[test]
    fn need_freq_update_is_cleared_by_update_next_freq_not_by_get_next_freq() {
        let mut sg = a72();
        sg.need_freq_update = true;
        let f = get_next_freq(&mut sg, &env(), 512, 1024);
        assert_eq!((f, sg.need_freq_update), (Some(1008000), true));
        // Same frequency as before: not committed, but the flag is consumed.
        sg.next_freq = 1008000;
        assert!(!sugov_update_next_freq(&mut sg, 5, 1008000));
        assert!(!sg.need_freq_update);
        assert_eq!(sg.last_freq_update_time, 0);
        // A NEED_UPDATE_LIMITS driver gets the unchanged frequency committed.
        sg.need_freq_update = true;
        sg.policy.driver_need_update_limits = true;
        assert!(sugov_update_next_freq(&mut sg, 6, 1008000));
        assert_eq!(sg.last_freq_update_time, 6);
    }

    #[test]
    fn dl_bandwidth_above_bw_min_bypasses_the_rate_limit() {
        let mut sg = a72();
        sg.last_freq_update_time = 10_000_000;
        // bw_min = max(irq + bw_dl, uclamp_min) = max(10 + 50, 100) = 100.
        let mut c = SugovCpu::default();
        let mut r = SugovRq {
            util_irq: 10,
            bw_dl: 50,
            uclamp_min: 100,
            ..rq(200, 0)
        };
        sugov_get_util(&mut c, &r, &env(), 0);
        assert_eq!(c.bw_min, 100);
        r.bw_dl = 100; // not above bw_min: still rate limited
        ignore_dl_rate_limit(&mut sg, &c, &r);
        assert!(!sugov_should_update_freq(&mut sg, 10_100_000));
        r.bw_dl = 101;
        ignore_dl_rate_limit(&mut sg, &c, &r);
        assert!(sg.need_freq_update && !sg.limits_changed);
        assert!(sugov_should_update_freq(&mut sg, 10_100_000));
    }

    #[test]
    fn raw_frequency_is_truncated_to_32_bits_before_resolution() {
        let mut sg = a72();
        // 1800000 * 2443360 / 1024 = 4294968750 = 2^32 + 1454.
        assert_eq!(map_util_freq(2443360, 1800000, 1024), Some(4294968750));
        assert_eq!(get_next_freq(&mut sg, &env(), 2443360, 1024), Some(408000));
        assert_eq!(sg.cached_raw_freq, 1454);
    }

    #[test]
    fn non_invariant_reference_cur_plus_quarter_wraps_in_32_bits() {
        let e = SugovEnv {
            freq_invariant: false,
            ..env()
        };
        let mut p = CpufreqPolicy {
            cur: 1_000_000,
            ..Default::default()
        };
        assert_eq!(get_capacity_ref_freq(&p, &e), 1_250_000);
        p.cur = 3_435_973_837; // + 858993459 = 2^32 exactly -> 0
        assert_eq!(get_capacity_ref_freq(&p, &e), 0);
    }

    #[test]
    fn tick_nsec_is_rounded_per_hz_and_hz_zero_is_none() {
        assert_eq!(tick_nsec(250), Some(4_000_000));
        assert_eq!(tick_nsec(1000), Some(1_000_000));
        assert_eq!(tick_nsec(100), Some(10_000_000));
        assert_eq!(tick_nsec(300), Some(3_333_333));
        assert_eq!(tick_nsec(0), None);
    }

    #[test]
    fn arch_reference_frequency_is_read_into_32_bits() {
        let p = CpufreqPolicy {
            cpuinfo_max_freq: 1_800_000,
            ..Default::default()
        };
        let e = |arch_freq_ref| SugovEnv {
            arch_freq_ref,
            ..env()
        };
        assert_eq!(get_capacity_ref_freq(&p, &e(3_200_000)), 3_200_000);
        assert_eq!(get_capacity_ref_freq(&p, &e((1 << 32) + 5)), 5);
        // Low 32 bits zero: no reference, the invariant cpuinfo.max_freq is used.
        assert_eq!(get_capacity_ref_freq(&p, &e(1 << 32)), 1_800_000);
    }

    #[test]
    fn only_flag_bit_0_is_iowait_other_bits_are_ignored() {
        let mut c = SugovCpu::default();
        sugov_iowait_boost(&mut c, &env(), 1_000_000, 2);
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (0, false));
        sugov_iowait_boost(&mut c, &env(), 1_000_000, 3);
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (128, true));
    }

    #[test]
    fn limits_change_sets_need_freq_update_and_skips_rate_limit_and_hold() {
        let (mut sg, mut c) = (a72(), SugovCpu::default());
        let p = Profile::MAINLINE;
        sugov_update_single_freq(&mut sg, &mut c, &rq(600, 7), &env(), &p, 10_000_000, 0);
        assert_eq!(sg.next_freq, 1416000);
        sugov_limits(&mut sg);
        // 0.1 ms later (inside the rate limit), busy and lower: the limits change forces
        // the update and the hold does not apply.
        let t = sugov_update_single_freq(&mut sg, &mut c, &rq(200, 7), &env(), &p, 10_100_000, 0)
            .unwrap_or_default();
        assert_eq!((t.hold, t.next_f, t.committed), (Some(true), 600000, true));
        assert_eq!(sg.policy.cur, 600000);
    }

    /// A two-CPU A72 policy, both CPUs at util 100, CPU 1 with a 256 iowait boost (not
    /// pending) last updated at 1 ms.
    fn boosted_pair() -> (SugovPolicy, [SugovCpu; 2], [SugovRq; 2]) {
        let boosted = SugovCpu {
            iowait_boost: 256,
            last_update: 1_000_000,
            ..Default::default()
        };
        (
            a72(),
            [SugovCpu::default(), boosted],
            [rq(100, 0), rq(100, 0)],
        )
    }

    #[test]
    fn shared_update_with_takes_each_cpus_util_from_get_util() {
        let (mut sg, mut cpus, rqs) = boosted_pair();
        let mut calls = [None; 2];
        // Every CPU asks for util 512 of 1024: 1_800_000 * 512 / 1024 = 900_000 kHz raw,
        // the A72's lowest frequency at or above it is 1_008_000.
        let mut get_util = |j: usize, sg_cpu: &mut SugovCpu, rq: &SugovRq, boost: u64| {
            calls[j] = Some((rq.util_cfs_boost, boost));
            (sg_cpu.util, sg_cpu.bw_min) = (512, 7);
        };
        let t = sugov_update_shared_with(
            &mut sg,
            (&mut cpus, &rqs, 0),
            &env(),
            2_000_000,
            0,
            &mut get_util,
        );
        // CPU 1's boost (not pending) halves to 128 first: (128 * 1024) >> 10 = 128.
        assert_eq!(calls, [Some((100, 0)), Some((100, 128))]);
        assert_eq!(t.map(|t| t.next_f), Some(1_008_000));
        assert_eq!((cpus[1].util, cpus[1].bw_min), (512, 7));
        let mut sg2 = a72();
        let mut cpus2 = [SugovCpu::default(); 2];
        let mut none = |_: usize, _: &mut SugovCpu, _: &SugovRq, _: u64| {};
        let max = sugov_next_freq_shared_with(
            &mut sg2,
            (&mut cpus2, &rqs[..1]),
            &env(),
            1024,
            0,
            &mut none,
        );
        assert_eq!(max, None, "slices of different lengths");
        // The plain one: CPU 0's 512 plus the 25 % headroom is 640 of 1024, so
        // 1_800_000 * 640 / 1024 = 1_125_000 kHz raw, resolved up to 1_200_000.
        let rqs = [rq(512, 0), rq(100, 0)];
        let f = sugov_next_freq_shared(&mut sg2, &mut cpus2, &rqs, &env(), 1024, 0);
        assert_eq!(f, Some(1_200_000));
        assert_eq!((cpus2[0].util, cpus2[1].util), (640, 125));
    }

    #[test]
    fn shared_policy_applies_every_cpus_boost_with_the_triggers_time() {
        let (mut sg, mut cpus, rqs) = boosted_pair();
        let t = sugov_update_shared(&mut sg, &mut cpus, &rqs, 0, &env(), 2_000_000, 0);
        // CPU 1's boost (not pending) halves to 128 and floors its util: 128 * 1.25 = 160.
        assert_eq!((cpus[1].iowait_boost, cpus[1].util), (128, 160));
        assert_eq!(cpus[1].last_update, 1_000_000);
        assert_eq!(t.map(|t| t.next_f), Some(408000));
        assert_eq!(
            sugov_update_shared(&mut sg, &mut cpus, &rqs, 2, &env(), 0, 0),
            None
        );
    }
}
