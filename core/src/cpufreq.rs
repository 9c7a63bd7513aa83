// SPDX-License-Identifier: GPL-2.0-only
//! cpufreq frequency tables and policy limits — drivers/cpufreq/cpufreq.c,
//! drivers/cpufreq/freq_table.c and the table helpers of include/linux/cpufreq.h.
//!
//! A governor asks for a frequency in kHz; the core turns it into an index of the driver's
//! table by a *relation*: L (lowest at or above), H (highest at or below), C (closest), each
//! optionally with E (skip entries flagged inefficient). Sorted tables are searched by one
//! linear walk per direction; unsorted tables by a slower scan with its own tie rules. All
//! frequencies are `unsigned int` (u32) kHz as in the kernel, and every clamp is the
//! kernel's `clamp()`, which differs from `min(max())` when the bounds are inverted.
//!
//! This reflects `b79028039f44` ("cpufreq: Fix setting policy limits when frequency tables
//! are used"), which passes min/max explicitly, on top of `7491cdf46b5c` (one consistent
//! read of policy min/max in `cpufreq_driver_resolve_freq()`).

use heapless::Vec;

/// `CPUFREQ_ENTRY_INVALID`: a table slot that keeps its index but is never chosen.
pub const CPUFREQ_ENTRY_INVALID: u32 = !0;
/// `CPUFREQ_INEFFICIENT_FREQ`: entry flag; skipped by RELATION_E searches.
pub const CPUFREQ_INEFFICIENT_FREQ: u32 = 1 << 1;

/// `CPUFREQ_RELATION_L`: lowest frequency at or above the target.
pub const CPUFREQ_RELATION_L: u32 = 0;
/// `CPUFREQ_RELATION_H`: highest frequency at or below the target.
pub const CPUFREQ_RELATION_H: u32 = 1;
/// `CPUFREQ_RELATION_C`: closest frequency to the target.
pub const CPUFREQ_RELATION_C: u32 = 2;
/// `CPUFREQ_RELATION_E`: flag, prefer efficient frequencies.
pub const CPUFREQ_RELATION_E: u32 = 1 << 2;
/// `CPUFREQ_RELATION_LE`.
pub const CPUFREQ_RELATION_LE: u32 = CPUFREQ_RELATION_L | CPUFREQ_RELATION_E;
/// `CPUFREQ_RELATION_HE`.
pub const CPUFREQ_RELATION_HE: u32 = CPUFREQ_RELATION_H | CPUFREQ_RELATION_E;
/// `CPUFREQ_RELATION_CE`.
pub const CPUFREQ_RELATION_CE: u32 = CPUFREQ_RELATION_C | CPUFREQ_RELATION_E;

/// `EINVAL`.
pub const EINVAL: i32 = 22;

/// Capacity of a [`FreqTable`]: 64 entries. Real drivers' tables (OPP lists) have at most
/// a few dozen rows; the kernel has no fixed bound, so a longer table is refused when it
/// is built rather than truncated.
pub const CPUFREQ_TABLE_MAX: usize = 64;

/// One row of `struct cpufreq_frequency_table` (`driver_data` is the driver's business
/// and not modelled; the END marker is the end of the vector).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpufreqFrequencyTable {
    /// `flags`: `CPUFREQ_INEFFICIENT_FREQ` (other bits are ignored here).
    pub flags: u32,
    /// `frequency` in kHz, or `CPUFREQ_ENTRY_INVALID`.
    pub frequency: u32,
}

/// A policy's frequency table, at most [`CPUFREQ_TABLE_MAX`] rows.
pub type FreqTable = Vec<CpufreqFrequencyTable, CPUFREQ_TABLE_MAX>;

/// `policy->freq_table_sorted` (`CPUFREQ_TABLE_UNSORTED` / `_SORTED_ASCENDING` /
/// `_SORTED_DESCENDING`, 0/1/2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FreqTableSorted {
    /// 0: searched by `cpufreq_table_index_unsorted()`.
    #[default]
    Unsorted,
    /// 1: strictly ascending valid entries.
    Ascending,
    /// 2: strictly descending valid entries (also a table with fewer than two).
    Descending,
}

impl FreqTableSorted {
    /// The kernel's enum value.
    pub fn as_u32(self) -> u32 {
        match self {
            Self::Unsorted => 0,
            Self::Ascending => 1,
            Self::Descending => 2,
        }
    }

    /// From the kernel's enum value; other values are `None`.
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Unsorted),
            1 => Some(Self::Ascending),
            2 => Some(Self::Descending),
            _ => None,
        }
    }
}

/// The part of `struct cpufreq_policy` frequency selection reads and writes, plus the
/// driver facts the governor tests (`cpufreq_driver_test_flags()`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpufreqPolicy {
    /// `freq_table`; `None` for drivers without one (the clamped target is used as is).
    pub freq_table: Option<FreqTable>,
    /// `freq_table_sorted`.
    pub freq_table_sorted: FreqTableSorted,
    /// `efficiencies_available`: some entry is flagged inefficient.
    pub efficiencies_available: bool,
    /// `min`: lower limit in kHz.
    pub min: u32,
    /// `max`: upper limit in kHz.
    pub max: u32,
    /// `cur`: current frequency in kHz.
    pub cur: u32,
    /// `cpuinfo.min_freq`.
    pub cpuinfo_min_freq: u32,
    /// `cpuinfo.max_freq`.
    pub cpuinfo_max_freq: u32,
    /// `cached_target_freq`: the clamped target of the last table resolution.
    pub cached_target_freq: u32,
    /// `cached_resolved_idx`: the index the last table resolution chose.
    pub cached_resolved_idx: u32,
    /// `fast_switch_enabled`.
    pub fast_switch_enabled: bool,
    /// `cpufreq_driver_test_flags(CPUFREQ_NEED_UPDATE_LIMITS)`: the driver wants a call on
    /// every limits update even when the frequency does not change.
    pub driver_need_update_limits: bool,
}

/// The kernel's `clamp(val, lo, hi)`: `hi` if `val >= hi`, else `lo` if `val <= lo`, else
/// `val`.
///
/// Trap: with `lo > hi` this is `hi` for `val >= hi` and `lo` otherwise, which neither
/// `min(max(v, lo), hi)` nor `max(min(v, hi), lo)` reproduces.
#[inline]
pub fn clamp_val(val: u32, lo: u32, hi: u32) -> u32 {
    if val >= hi {
        hi
    } else if val <= lo {
        lo
    } else {
        val
    }
}

/// The frequency at table index `idx`; an index the kernel would read out of bounds
/// (only reachable with a table that has no valid entry) reads as INVALID.
#[inline]
pub fn table_frequency(table: &[CpufreqFrequencyTable], idx: i32) -> u32 {
    usize::try_from(idx)
        .ok()
        .and_then(|i| table.get(i))
        .map_or(CPUFREQ_ENTRY_INVALID, |e| e.frequency)
}

/// The valid entries (index, row) that a search with `efficiencies` looks at:
/// `cpufreq_for_each_efficient_entry_idx()`.
fn efficient_entries(
    table: &[CpufreqFrequencyTable],
    efficiencies: bool,
) -> impl Iterator<Item = (i32, u32)> + '_ {
    table
        .iter()
        .zip(0i32..)
        .filter(move |(e, _)| {
            e.frequency != CPUFREQ_ENTRY_INVALID
                && !(efficiencies && e.flags & CPUFREQ_INEFFICIENT_FREQ != 0)
        })
        .map(|(e, i)| (i, e.frequency))
}

/// `set_freq_table_sorted()`: classify the valid entries as ascending, descending or
/// unsorted; returns 0 or `-EINVAL`.
///
/// Traps: two *adjacent* valid entries with the same frequency (INVALID slots between
/// them do not separate them) fail with `-EINVAL` and leave the table unsorted; a table
/// with fewer than two valid entries counts as descending.
pub fn set_freq_table_sorted(policy: &mut CpufreqPolicy) -> i32 {
    policy.freq_table_sorted = FreqTableSorted::Unsorted;
    let Some(table) = policy.freq_table.as_ref() else {
        return 0;
    };
    let mut prev: Option<u32> = None;
    let mut ascending: i32 = 0;
    for (_, freq) in efficient_entries(table, false) {
        let Some(p) = prev else {
            prev = Some(freq);
            continue;
        };
        if freq == p {
            return -EINVAL;
        }
        if freq > p {
            if ascending < 0 {
                return 0;
            }
            ascending += 1;
        } else {
            if ascending > 0 {
                return 0;
            }
            ascending -= 1;
        }
        prev = Some(freq);
    }
    policy.freq_table_sorted = if ascending > 0 {
        FreqTableSorted::Ascending
    } else {
        FreqTableSorted::Descending
    };
    0
}

/// The walk of `al` and `dh`: the first entry that `reached` the target, else the last
/// entry seen (the nearest one on the other side), else -1.
fn first_reaching(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
    reached: fn(u32, u32) -> bool,
) -> i32 {
    let mut best = -1;
    for (idx, freq) in efficient_entries(table, efficiencies) {
        if reached(freq, target_freq) {
            return idx;
        }
        best = idx;
    }
    best
}

/// The walk of `dl`, `ah`, `ac` and `dc`: an exact entry wins; entries `before` the
/// target are remembered; at the first entry past it, return the remembered one (or
/// this one when there is none, or, with `closest`, this one when it is strictly
/// nearer than the remembered one).
fn last_before(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
    before: fn(u32, u32) -> bool,
    closest: bool,
) -> i32 {
    let mut best = -1;
    for (idx, freq) in efficient_entries(table, efficiencies) {
        if freq == target_freq {
            return idx;
        }
        if before(freq, target_freq) {
            best = idx;
            continue;
        }
        if best == -1 {
            return idx;
        }
        // The remembered entry lies on the other side of the target than `freq`, so
        // both distances are plain differences.
        let best_freq = table_frequency(table, best);
        if closest && best_freq.abs_diff(target_freq) > freq.abs_diff(target_freq) {
            return idx;
        }
        return best;
    }
    best
}

/// `cpufreq_table_find_index_al()`: lowest entry at or above `target_freq` in an
/// ascending table; the highest entry when none is (or -1 when nothing is valid).
pub fn cpufreq_table_find_index_al(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
) -> i32 {
    first_reaching(table, target_freq, efficiencies, |f, t| f >= t)
}

/// `cpufreq_table_find_index_dl()`: lowest entry at or above `target_freq` in a
/// descending table; the first (highest) entry below it when none is above.
pub fn cpufreq_table_find_index_dl(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
) -> i32 {
    last_before(table, target_freq, efficiencies, |f, t| f > t, false)
}

/// `cpufreq_table_find_index_ah()`: highest entry at or below `target_freq` in an
/// ascending table; the first (lowest) entry above it when none is below.
pub fn cpufreq_table_find_index_ah(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
) -> i32 {
    last_before(table, target_freq, efficiencies, |f, t| f < t, false)
}

/// `cpufreq_table_find_index_dh()`: highest entry at or below `target_freq` in a
/// descending table; the lowest entry when none is.
pub fn cpufreq_table_find_index_dh(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
) -> i32 {
    first_reaching(table, target_freq, efficiencies, |f, t| f <= t)
}

/// `cpufreq_table_find_index_ac()`: closest entry in an ascending table.
///
/// Trap: on a tie (`target - below == above - target`) the lower entry wins, because
/// only a strictly greater distance below moves the choice up.
pub fn cpufreq_table_find_index_ac(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
) -> i32 {
    last_before(table, target_freq, efficiencies, |f, t| f < t, true)
}

/// `cpufreq_table_find_index_dc()`: closest entry in a descending table.
///
/// Trap: on a tie the *higher* entry wins (the mirror of the ascending search), so the
/// same table gives different answers in the two orders.
pub fn cpufreq_table_find_index_dc(
    table: &[CpufreqFrequencyTable],
    target_freq: u32,
    efficiencies: bool,
) -> i32 {
    last_before(table, target_freq, efficiencies, |f, t| f > t, true)
}

/// The sorted-table walks of one relation, by table order.
fn find_index_sorted(
    policy: &CpufreqPolicy,
    table: &[CpufreqFrequencyTable],
    relation: u32,
    target_freq: u32,
    efficiencies: bool,
) -> Option<i32> {
    let asc = policy.freq_table_sorted == FreqTableSorted::Ascending;
    let f = match (relation, asc) {
        (CPUFREQ_RELATION_L, true) => cpufreq_table_find_index_al,
        (CPUFREQ_RELATION_L, false) => cpufreq_table_find_index_dl,
        (CPUFREQ_RELATION_H, true) => cpufreq_table_find_index_ah,
        (CPUFREQ_RELATION_H, false) => cpufreq_table_find_index_dh,
        (CPUFREQ_RELATION_C, true) => cpufreq_table_find_index_ac,
        (CPUFREQ_RELATION_C, false) => cpufreq_table_find_index_dc,
        _ => return None,
    };
    Some(f(table, target_freq, efficiencies))
}

/// `find_index_l()`: the target clamped to `[min, max]`, then the L walk for the table's
/// order. Only meaningful on sorted tables.
pub fn find_index_l(
    policy: &CpufreqPolicy,
    target_freq: u32,
    min: u32,
    max: u32,
    efficiencies: bool,
) -> i32 {
    find_index(
        policy,
        CPUFREQ_RELATION_L,
        target_freq,
        min,
        max,
        efficiencies,
    )
}

/// `find_index_h()`: like [`find_index_l`] with the H walks.
pub fn find_index_h(
    policy: &CpufreqPolicy,
    target_freq: u32,
    min: u32,
    max: u32,
    efficiencies: bool,
) -> i32 {
    find_index(
        policy,
        CPUFREQ_RELATION_H,
        target_freq,
        min,
        max,
        efficiencies,
    )
}

/// `find_index_c()`: like [`find_index_l`] with the C walks.
pub fn find_index_c(
    policy: &CpufreqPolicy,
    target_freq: u32,
    min: u32,
    max: u32,
    efficiencies: bool,
) -> i32 {
    find_index(
        policy,
        CPUFREQ_RELATION_C,
        target_freq,
        min,
        max,
        efficiencies,
    )
}

/// `cpufreq_table_find_index_l()`: [`find_index_l`] within the policy's own limits.
pub fn cpufreq_table_find_index_l(policy: &CpufreqPolicy, target: u32, eff: bool) -> i32 {
    find_index_l(policy, target, policy.min, policy.max, eff)
}

/// `cpufreq_table_find_index_h()`: [`find_index_h`] within the policy's own limits.
pub fn cpufreq_table_find_index_h(policy: &CpufreqPolicy, target: u32, eff: bool) -> i32 {
    find_index_h(policy, target, policy.min, policy.max, eff)
}

/// `cpufreq_table_find_index_c()`: [`find_index_c`] within the policy's own limits.
pub fn cpufreq_table_find_index_c(policy: &CpufreqPolicy, target: u32, eff: bool) -> i32 {
    find_index_c(policy, target, policy.min, policy.max, eff)
}

fn find_index(
    policy: &CpufreqPolicy,
    relation: u32,
    target_freq: u32,
    min: u32,
    max: u32,
    efficiencies: bool,
) -> i32 {
    let table = policy.freq_table.as_deref().unwrap_or(&[]);
    let target_freq = clamp_val(target_freq, min, max);
    find_index_sorted(policy, table, relation, target_freq, efficiencies).unwrap_or(-1)
}

/// `cpufreq_is_in_limits()`: does entry `idx` lie in `[min, max]` (kernel clamp)?
///
/// Trap: with `min > max` only an entry equal to `max` counts as in limits.
pub fn cpufreq_is_in_limits(policy: &CpufreqPolicy, min: u32, max: u32, idx: i32) -> bool {
    if idx < 0 {
        return false;
    }
    let freq = table_frequency(policy.freq_table.as_deref().unwrap_or(&[]), idx);
    freq == clamp_val(freq, min, max)
}

/// A table index chosen by [`cpufreq_frequency_table_target`], and whether the kernel
/// would have hit a `WARN` on the way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TableIndex {
    /// The returned index (kernel `int`; -1 only for a sorted table without any valid
    /// entry, which the kernel refuses at registration).
    pub idx: i32,
    /// A `WARN` was hit (invalid relation, or nothing usable in an unsorted table).
    pub warn: bool,
}

/// `cpufreq_table_index_unsorted()`: the slow scan for tables in no order.
///
/// Traps: the target is *not* clamped; entries outside `[min, max]` are skipped; an
/// entry equal to the target wins at once for any relation (even an invalid one); ties
/// are broken towards the later entry for L/H and towards the higher frequency for C; the
/// C distance is `abs()` of the wrapped 32-bit difference taken as an `int`, so a gap of
/// 2^31 or more measures `2^32 - gap`; when nothing qualifies the kernel WARNs and
/// returns index 0, even if slot 0 is INVALID or out of range.
pub fn cpufreq_table_index_unsorted(
    policy: &CpufreqPolicy,
    target_freq: u32,
    min: u32,
    max: u32,
    relation: u32,
) -> TableIndex {
    let table = policy.freq_table.as_deref().unwrap_or(&[]);
    // `optimal` / `suboptimal` with `driver_data` as the index, `!0` = none yet.
    let none = u32::MAX;
    let (mut opt_freq, mut opt_idx) = (0u32, none);
    let (mut sub_freq, mut sub_idx) = (0u32, none);
    match relation {
        CPUFREQ_RELATION_H => sub_freq = !0,
        CPUFREQ_RELATION_L | CPUFREQ_RELATION_C => opt_freq = !0,
        _ => {}
    }
    // `i` ends as the index the loop stopped at: the END slot, or the exact match.
    let mut i = table.len() as u32; // at most CPUFREQ_TABLE_MAX
    for (idx, e) in (0u32..).zip(table.iter()) {
        let freq = e.frequency;
        if freq == CPUFREQ_ENTRY_INVALID || freq < min || freq > max {
            continue;
        }
        if freq == target_freq {
            opt_idx = idx;
            i = idx;
            break;
        }
        match relation {
            CPUFREQ_RELATION_H => {
                if freq < target_freq {
                    if freq >= opt_freq {
                        (opt_freq, opt_idx) = (freq, idx);
                    }
                } else if freq <= sub_freq {
                    (sub_freq, sub_idx) = (freq, idx);
                }
            }
            CPUFREQ_RELATION_L => {
                if freq > target_freq {
                    if freq <= opt_freq {
                        (opt_freq, opt_idx) = (freq, idx);
                    }
                } else if freq >= sub_freq {
                    (sub_freq, sub_idx) = (freq, idx);
                }
            }
            CPUFREQ_RELATION_C => {
                // abs() of the difference as an int; -INT_MIN wraps to INT_MIN.
                let diff = (freq.wrapping_sub(target_freq) as i32).wrapping_abs() as u32;
                let best_freq = table
                    .get(opt_idx as usize)
                    .map_or(CPUFREQ_ENTRY_INVALID, |b| b.frequency);
                if diff < opt_freq || (diff == opt_freq && freq > best_freq) {
                    (opt_freq, opt_idx) = (diff, idx);
                }
            }
            _ => {}
        }
    }
    if opt_idx > i {
        if sub_idx > i {
            return TableIndex { idx: 0, warn: true };
        }
        TableIndex {
            idx: sub_idx as i32, // < table length
            warn: false,
        }
    } else {
        TableIndex {
            idx: opt_idx as i32, // < table length
            warn: false,
        }
    }
}

/// `cpufreq_frequency_table_target()`: the table index for `target_freq` under
/// `relation` within `[min, max]`.
///
/// Traps: E only counts when the policy has efficiencies; with E, an index outside the
/// limits makes the search run again without efficiencies; an invalid relation (3) on a
/// sorted table WARNs and returns 0 even when the target is an exact entry.
pub fn cpufreq_frequency_table_target(
    policy: &CpufreqPolicy,
    target_freq: u32,
    min: u32,
    max: u32,
    relation: u32,
) -> TableIndex {
    let mut efficiencies = policy.efficiencies_available && relation & CPUFREQ_RELATION_E != 0;
    let relation = relation & !CPUFREQ_RELATION_E;
    if policy.freq_table_sorted == FreqTableSorted::Unsorted {
        return cpufreq_table_index_unsorted(policy, target_freq, min, max, relation);
    }
    let table = policy.freq_table.as_deref().unwrap_or(&[]);
    loop {
        let Some(idx) = find_index_sorted(
            policy,
            table,
            relation,
            clamp_val(target_freq, min, max),
            efficiencies,
        ) else {
            return TableIndex { idx: 0, warn: true };
        };
        if !cpufreq_is_in_limits(policy, min, max, idx) && efficiencies {
            efficiencies = false;
            continue;
        }
        return TableIndex { idx, warn: false };
    }
}

/// `__resolve_freq()`: clamp the target to `[min, max]` and, with a table, pick the
/// entry `relation` chooses, remembering target and index in the policy cache.
///
/// Trap: without a table the clamped target is returned and the cache is not touched.
pub fn __resolve_freq(
    policy: &mut CpufreqPolicy,
    target_freq: u32,
    min: u32,
    max: u32,
    relation: u32,
) -> u32 {
    let target_freq = clamp_val(target_freq, min, max);
    if policy.freq_table.is_none() {
        return target_freq;
    }
    let idx = cpufreq_frequency_table_target(policy, target_freq, min, max, relation).idx;
    policy.cached_resolved_idx = idx as u32; // kernel stores the int in an unsigned int
    policy.cached_target_freq = target_freq;
    table_frequency(policy.freq_table.as_deref().unwrap_or(&[]), idx)
}

/// `cpufreq_driver_resolve_freq()`: the frequency a governor's target maps to, by
/// RELATION_LE within the policy limits read once.
///
/// Trap: an inconsistent `min > max` is resolved as `min = max` here, but the
/// fast-switch clamp later uses the raw fields.
pub fn cpufreq_driver_resolve_freq(policy: &mut CpufreqPolicy, target_freq: u32) -> u32 {
    let max = policy.max;
    let min = if policy.min > max { max } else { policy.min };
    __resolve_freq(policy, target_freq, min, max, CPUFREQ_RELATION_LE)
}

/// `__cpufreq_driver_target()` with an ideal driver: resolve within the policy limits
/// and, when the result differs from `cur` (or the driver wants every limits update),
/// the driver switches and `cur` becomes the result.
pub fn __cpufreq_driver_target(policy: &mut CpufreqPolicy, target_freq: u32, relation: u32) {
    let (min, max) = (policy.min, policy.max);
    let freq = __resolve_freq(policy, target_freq, min, max, relation);
    if freq == policy.cur && !policy.driver_need_update_limits {
        return;
    }
    policy.cur = freq;
}

/// `cpufreq_policy_apply_limits()`: move `cur` inside new limits (HE down to max, or LE up
/// to min); a `cur` already inside is left alone.
pub fn cpufreq_policy_apply_limits(policy: &mut CpufreqPolicy) {
    if policy.max < policy.cur {
        __cpufreq_driver_target(policy, policy.max, CPUFREQ_RELATION_HE);
    } else if policy.min > policy.cur {
        __cpufreq_driver_target(policy, policy.min, CPUFREQ_RELATION_LE);
    }
}

/// `cpufreq_driver_fast_switch()` with an ideal driver: the target clamped to the policy
/// fields (kernel clamp) is accepted as is; a non-zero result becomes `cur`.
///
/// Trap: the clamp uses the raw `min`/`max`, so with `min > max` `cur` can land on `min`,
/// above `max`.
pub fn cpufreq_driver_fast_switch(policy: &mut CpufreqPolicy, target_freq: u32) -> u32 {
    let freq = clamp_val(target_freq, policy.min, policy.max);
    if freq != 0 {
        policy.cur = freq;
    }
    freq
}

/// The limits part of `cpufreq_set_policy()`, after the driver's verify step: the new
/// max is resolved by RELATION_H and the new min by RELATION_L within the requested
/// range, and min is lowered to max if it ended above it. The governor's `limits` hook is
/// the caller's next step.
///
/// Trap: with no entry inside the range, H picks the highest entry below it (outside
/// the range) and L the lowest above it, so min is then lowered to that max.
pub fn cpufreq_set_policy(policy: &mut CpufreqPolicy, min: u32, max: u32) {
    policy.max = __resolve_freq(policy, max, min, max, CPUFREQ_RELATION_H);
    let new_min = __resolve_freq(policy, min, min, max, CPUFREQ_RELATION_L);
    policy.min = if new_min > policy.max {
        policy.max
    } else {
        new_min
    };
}

/// `cpufreq_policy_transition_delay_us()`: schedutil's default `rate_limit_us`.
///
/// The driver's `transition_delay_us` if set; else the hardware transition latency in
/// whole µs plus 50 % (`latency + latency/2`, since v6.10's "cpufreq: Remove
/// LATENCY_MULTIPLIER"); else 1000 µs. Trap: a latency below 1 µs truncates to 0 and
/// takes the 1 ms default, not a tiny rate limit.
pub fn cpufreq_policy_transition_delay_us(
    transition_delay_us: u32,
    transition_latency_ns: u32,
) -> u32 {
    const NSEC_PER_USEC: u32 = 1000;
    const USEC_PER_MSEC: u32 = 1000;
    if transition_delay_us != 0 {
        return transition_delay_us;
    }
    let latency = transition_latency_ns / NSEC_PER_USEC;
    if latency != 0 {
        return latency + (latency >> 1); // at most 4294967 * 1.5: no overflow
    }
    USEC_PER_MSEC
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(freqs: &[u32], flags: &[u32]) -> FreqTable {
        freqs
            .iter()
            .zip(flags.iter().chain(core::iter::repeat(&0)))
            .map(|(&frequency, &flags)| CpufreqFrequencyTable { flags, frequency })
            .collect()
    }

    fn policy(freqs: &[u32], flags: &[u32], min: u32, max: u32) -> CpufreqPolicy {
        let mut p = CpufreqPolicy {
            freq_table: Some(table(freqs, flags)),
            efficiencies_available: flags.iter().any(|f| f & CPUFREQ_INEFFICIENT_FREQ != 0),
            min,
            max,
            ..Default::default()
        };
        assert_eq!(set_freq_table_sorted(&mut p), 0);
        p
    }

    const A72: [u32; 8] = [
        408000, 600000, 816000, 1008000, 1200000, 1416000, 1608000, 1800000,
    ];

    /// 2000, 1500, 1000, 500 MHz in kHz, descending; `ineff`: 1500 MHz is inefficient.
    fn descending(ineff: bool) -> FreqTable {
        let flags = if ineff {
            [0, CPUFREQ_INEFFICIENT_FREQ]
        } else {
            [0, 0]
        };
        table(&[2000000, 1500000, 1000000, 500000], &flags)
    }

    #[test]
    fn descending_l_takes_the_lowest_at_or_above_else_the_highest() {
        let t = descending(false);
        assert_eq!(cpufreq_table_find_index_dl(&t, 1200000, false), 1);
        assert_eq!(cpufreq_table_find_index_dl(&t, 1000000, false), 2);
        // Above every entry: the first (highest); below every entry: the last.
        assert_eq!(cpufreq_table_find_index_dl(&t, 2500000, false), 0);
        assert_eq!(cpufreq_table_find_index_dl(&t, 100000, false), 3);
        // An inefficient entry is skipped only when efficiencies are asked for.
        let t = descending(true);
        assert_eq!(cpufreq_table_find_index_dl(&t, 1200000, false), 1);
        assert_eq!(cpufreq_table_find_index_dl(&t, 1200000, true), 0);
    }

    #[test]
    fn descending_h_takes_the_highest_at_or_below_else_the_lowest() {
        let t = descending(false);
        assert_eq!(cpufreq_table_find_index_dh(&t, 1200000, false), 2);
        assert_eq!(cpufreq_table_find_index_dh(&t, 1500000, false), 1);
        assert_eq!(cpufreq_table_find_index_dh(&t, 3000000, false), 0);
        assert_eq!(cpufreq_table_find_index_dh(&t, 100000, false), 3);
        assert_eq!(
            cpufreq_table_find_index_dh(&descending(true), 1700000, true),
            2
        );
    }

    #[test]
    fn closest_ties_go_lower_ascending_and_higher_descending() {
        let asc = table(&[500000, 1000000, 1500000, 2000000], &[]);
        assert_eq!(cpufreq_table_find_index_ac(&asc, 1250000, false), 1);
        assert_eq!(cpufreq_table_find_index_ac(&asc, 1300000, false), 2);
        assert_eq!(cpufreq_table_find_index_ac(&asc, 1200000, false), 1);
        assert_eq!(cpufreq_table_find_index_ac(&asc, 100000, false), 0);
        assert_eq!(cpufreq_table_find_index_ac(&asc, 9000000, false), 3);
        let desc = descending(false);
        assert_eq!(cpufreq_table_find_index_dc(&desc, 1250000, false), 1);
        assert_eq!(cpufreq_table_find_index_dc(&desc, 1200000, false), 2);
        assert_eq!(cpufreq_table_find_index_dc(&desc, 100000, false), 3);
        assert_eq!(cpufreq_table_find_index_dc(&desc, 9000000, false), 0);
    }

    #[test]
    fn find_index_clamps_the_target_to_the_given_limits_first() {
        let p = policy(&A72, &[], 408000, 1800000);
        assert_eq!(find_index_l(&p, 1000000, 408000, 1800000, false), 3);
        assert_eq!(find_index_l(&p, 1000000, 408000, 816000, false), 2);
        assert_eq!(find_index_h(&p, 1000000, 408000, 1800000, false), 2);
        assert_eq!(find_index_h(&p, 1000000, 1200000, 1800000, false), 4);
        // 1100000: 92000 above 1008000, 100000 below 1200000.
        assert_eq!(find_index_c(&p, 1100000, 408000, 1800000, false), 3);
        assert_eq!(find_index_c(&p, 1100000, 1416000, 1800000, false), 5);
    }

    #[test]
    fn cpufreq_table_find_index_uses_the_policy_limits() {
        let p = policy(&A72, &[], 600000, 1416000);
        assert_eq!(cpufreq_table_find_index_l(&p, 100000, false), 1);
        assert_eq!(cpufreq_table_find_index_l(&p, 1300000, false), 5);
        assert_eq!(cpufreq_table_find_index_h(&p, 2000000, false), 5);
        assert_eq!(cpufreq_table_find_index_h(&p, 1300000, false), 4);
        // 1300000: 100000 above 1200000, 116000 below 1416000.
        assert_eq!(cpufreq_table_find_index_c(&p, 1300000, false), 4);
        assert_eq!(cpufreq_table_find_index_c(&p, 100000, false), 1);
    }

    #[test]
    fn clamp_with_inverted_bounds_is_hi_at_or_above_hi_else_lo() {
        assert_eq!(clamp_val(5, 10, 20), 10);
        assert_eq!(clamp_val(25, 10, 20), 20);
        // lo > hi: anything below hi gives lo, anything at or above hi gives hi.
        assert_eq!(clamp_val(1800, 1900, 1850), 1900);
        assert_eq!(clamp_val(1900, 1900, 1850), 1850);
        assert_eq!(clamp_val(1850, 1900, 1850), 1850);
        assert_eq!(clamp_val(0, 1900, 1850), 1900);
    }

    #[test]
    fn relation_c_ties_go_lower_ascending_and_higher_descending() {
        // 708000 is exactly between 600000 and 816000.
        let asc = policy(&A72, &[], 408000, 1800000);
        let r = cpufreq_frequency_table_target(&asc, 708000, 408000, 1800000, CPUFREQ_RELATION_C);
        assert_eq!(
            r,
            TableIndex {
                idx: 1,
                warn: false
            }
        );
        let mut desc_freqs = A72;
        desc_freqs.reverse();
        let desc = policy(&desc_freqs, &[], 408000, 1800000);
        assert_eq!(desc.freq_table_sorted, FreqTableSorted::Descending);
        let r = cpufreq_frequency_table_target(&desc, 708000, 408000, 1800000, CPUFREQ_RELATION_C);
        assert_eq!(
            table_frequency(desc.freq_table.as_deref().unwrap(), r.idx),
            816000
        );
    }

    #[test]
    fn one_entry_table_is_descending_and_duplicates_are_einval() {
        let p = policy(&[408000], &[], 0, u32::MAX);
        assert_eq!(p.freq_table_sorted, FreqTableSorted::Descending);
        let mut d = CpufreqPolicy {
            freq_table: Some(table(&[600000, CPUFREQ_ENTRY_INVALID, 600000], &[])),
            freq_table_sorted: FreqTableSorted::Ascending,
            ..Default::default()
        };
        assert_eq!(set_freq_table_sorted(&mut d), -EINVAL);
        assert_eq!(d.freq_table_sorted, FreqTableSorted::Unsorted);
    }

    #[test]
    fn efficient_search_outside_limits_retries_without_efficiencies() {
        // 1008000 is inefficient: LE for 900000 would jump to 1200000, which is above max
        // 1100000, so the search is redone without efficiencies and finds 1008000.
        let mut p = policy(&A72, &[0, 0, 0, 2, 0, 0, 0, 2], 408000, 1100000);
        assert_eq!(cpufreq_driver_resolve_freq(&mut p, 900000), 1008000);
        assert_eq!((p.cached_target_freq, p.cached_resolved_idx), (900000, 3));
        // Within the limits the inefficient entry is skipped.
        p.max = 1800000;
        assert_eq!(cpufreq_driver_resolve_freq(&mut p, 900000), 1200000);
    }

    #[test]
    fn l_and_h_fall_back_to_the_nearest_entry_the_other_way() {
        let p = policy(&A72, &[], 408000, 1800000);
        let t = p.freq_table.as_deref().unwrap();
        assert_eq!(cpufreq_table_find_index_al(t, 2000000, false), 7);
        assert_eq!(cpufreq_table_find_index_ah(t, 100000, false), 0);
    }

    #[test]
    fn invalid_entries_keep_their_slot_but_are_skipped() {
        let p = policy(&[400000, CPUFREQ_ENTRY_INVALID, 800000], &[], 0, u32::MAX);
        assert_eq!(p.freq_table_sorted, FreqTableSorted::Ascending);
        let r = cpufreq_frequency_table_target(&p, 500000, 0, u32::MAX, CPUFREQ_RELATION_L);
        assert_eq!(r.idx, 2);
    }

    #[test]
    fn unsorted_c_distance_wraps_at_two_to_the_31() {
        // Target 0: 3000000000 is "2^32 - 3e9 = 1294967296" away, nearer than 1.5e9.
        let p = CpufreqPolicy {
            freq_table: Some(table(&[1500000000, 3000000000, 2000000000], &[])),
            ..Default::default()
        };
        let r = cpufreq_table_index_unsorted(&p, 0, 0, u32::MAX, CPUFREQ_RELATION_C);
        assert_eq!(
            r,
            TableIndex {
                idx: 1,
                warn: false
            }
        );
    }

    #[test]
    fn unsorted_c_tie_prefers_a_later_higher_entry_only() {
        let p = CpufreqPolicy {
            freq_table: Some(table(&[600000, 816000], &[])),
            ..Default::default()
        };
        let r = cpufreq_table_index_unsorted(&p, 708000, 0, u32::MAX, CPUFREQ_RELATION_C);
        assert_eq!(r.idx, 1);
        let p = CpufreqPolicy {
            freq_table: Some(table(&[816000, 600000], &[])),
            ..Default::default()
        };
        let r = cpufreq_table_index_unsorted(&p, 708000, 0, u32::MAX, CPUFREQ_RELATION_C);
        assert_eq!(r.idx, 0);
    }

    #[test]
    fn unsorted_nothing_in_range_warns_and_returns_slot_zero() {
        let p = CpufreqPolicy {
            freq_table: Some(table(&[CPUFREQ_ENTRY_INVALID, 600000], &[])),
            ..Default::default()
        };
        let r = cpufreq_table_index_unsorted(&p, 600000, 700000, 800000, CPUFREQ_RELATION_L);
        assert_eq!(r, TableIndex { idx: 0, warn: true });
        // Invalid relation 3 still takes an exact match, without a warning.
        let r = cpufreq_table_index_unsorted(&p, 600000, 0, u32::MAX, 3);
        assert_eq!(
            r,
            TableIndex {
                idx: 1,
                warn: false
            }
        );
    }

    #[test]
    fn sorted_invalid_relation_warns_even_on_an_exact_entry() {
        let p = policy(&A72, &[], 408000, 1800000);
        let r = cpufreq_frequency_table_target(&p, 816000, 408000, 1800000, 3);
        assert_eq!(r, TableIndex { idx: 0, warn: true });
    }

    #[test]
    fn limits_outside_every_entry_resolve_max_below_and_lower_min() {
        let mut p = policy(&A72, &[], 408000, 1800000);
        cpufreq_set_policy(&mut p, 1300000, 1350000);
        assert_eq!((p.min, p.max), (1200000, 1200000));
        cpufreq_set_policy(&mut p, 0, u32::MAX);
        assert_eq!((p.min, p.max), (408000, 1800000));
    }

    #[test]
    fn transition_delay_is_latency_plus_half_and_sub_microsecond_is_the_default() {
        assert_eq!(cpufreq_policy_transition_delay_us(500, 20000), 500);
        assert_eq!(cpufreq_policy_transition_delay_us(0, 20000), 30);
        assert_eq!(cpufreq_policy_transition_delay_us(0, 999), 1000);
        assert_eq!(cpufreq_policy_transition_delay_us(0, u32::MAX), 6442450);
    }

    #[test]
    fn fast_switch_clamp_uses_the_raw_inverted_limits() {
        let mut p = policy(&A72, &[], 1900000, 1850000);
        assert_eq!(cpufreq_driver_fast_switch(&mut p, 1608000), 1900000);
        assert_eq!(p.cur, 1900000);
    }
}
