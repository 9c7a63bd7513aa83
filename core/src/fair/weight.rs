// SPDX-License-Identifier: GPL-2.0-only
//! Load weights and the inverse-weight fixed point — kernel/sched/core.c
//! (`sched_prio_to_weight[]`, `sched_prio_to_wmult[]`, `set_load_weight()`) and
//! kernel/sched/fair.c (`__update_inv_weight()`, `__calc_delta()`, `calc_delta_fair()`).
//!
//! `delta * weight / lw.weight` is computed without a division: `lw.inv_weight` holds
//! `2^32 / lw.weight` (scaled-down weight), the product `weight * inv_weight` is reduced
//! to 32 bits by shifting, and the final shift applies what is left of the 2^32. Tasks
//! carry the table inverse (`sched_prio_to_wmult`, mostly rounded), group entities and
//! runqueue loads the lazily computed one (`(2^32 - 1) / w`, truncated): the two differ
//! by one for most nice levels, and the results differ with them.

use crate::math::{mul_u64_u32_shr, scale_load, scale_load_down};

/// `NICE_0_LOAD` on a 64-bit kernel: the scaled weight of a nice-0 task (`1024 << 10`).
pub const NICE_0_LOAD: u64 = 1 << 20;
/// `WMULT_CONST`: the inverse weights' numerator, `2^32 - 1`.
pub const WMULT_CONST: u32 = u32::MAX;
/// `WMULT_SHIFT`.
pub const WMULT_SHIFT: i32 = 32;
/// `WEIGHT_IDLEPRIO`: the (unscaled) weight of a SCHED_IDLE task.
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// `WMULT_IDLEPRIO`: the inverse weight stored for a SCHED_IDLE task.
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;
/// `MIN_NICE`.
pub const MIN_NICE: i32 = -20;
/// `MAX_NICE`.
pub const MAX_NICE: i32 = 19;

/// `sched_prio_to_weight[]`: nice -20..=19 → unscaled weight (nice 0 = 1024, ~1.25x per
/// level).
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]`: `2^32 / sched_prio_to_weight[]`, as the kernel tabulates it.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// `struct load_weight`: a scaled weight and its inverse (0 = not computed yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LoadWeight {
    /// `weight` (scaled, nice 0 = `NICE_0_LOAD`).
    pub weight: u64,
    /// `inv_weight`: `2^32 / scale_load_down(weight)`, 0 until computed.
    pub inv_weight: u32,
}

impl LoadWeight {
    /// `update_load_set()`: a new weight whose inverse is computed on next use.
    pub const fn new(weight: u64) -> Self {
        LoadWeight {
            weight,
            inv_weight: 0,
        }
    }
}

/// `update_load_add()`: the weight grows (wrapping) and the inverse is invalidated.
pub fn update_load_add(lw: &mut LoadWeight, inc: u64) {
    lw.weight = lw.weight.wrapping_add(inc);
    lw.inv_weight = 0;
}

/// `update_load_sub()`: the weight shrinks (wrapping) and the inverse is invalidated.
pub fn update_load_sub(lw: &mut LoadWeight, dec: u64) {
    lw.weight = lw.weight.wrapping_sub(dec);
    lw.inv_weight = 0;
}

/// A task's scheduling policy as far as its weight goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FairPolicy {
    /// SCHED_NORMAL or SCHED_BATCH: weight from the nice table.
    #[default]
    Normal,
    /// SCHED_IDLE: `WEIGHT_IDLEPRIO` whatever the nice level.
    Idle,
}

/// `set_load_weight()` (core.c): a task's `se.load` for its nice level and policy, with
/// the table inverse. `None` for a nice level outside -20..=19.
pub fn set_load_weight(nice: i32, policy: FairPolicy) -> Option<LoadWeight> {
    let prio = usize::try_from(nice.checked_sub(MIN_NICE)?).ok()?;
    let (weight, inv_weight) = match policy {
        FairPolicy::Idle => (WEIGHT_IDLEPRIO, WMULT_IDLEPRIO),
        FairPolicy::Normal => (
            *SCHED_PRIO_TO_WEIGHT.get(prio)?,
            *SCHED_PRIO_TO_WMULT.get(prio)?,
        ),
    };
    if policy == FairPolicy::Idle && prio >= SCHED_PRIO_TO_WEIGHT.len() {
        return None;
    }
    Some(LoadWeight {
        weight: scale_load(weight),
        inv_weight,
    })
}

/// `__update_inv_weight()`: computes `lw.inv_weight` if it is 0.
///
/// Trap: the lazy inverse is `(2^32 - 1) / scale_load_down(w)` truncated, one less than
/// the table's `2^32 / w` for most weights; a scaled-down weight of `2^32 - 1` or more
/// saturates the inverse at 1, and a zero weight gives `2^32 - 1`.
pub fn __update_inv_weight(lw: &mut LoadWeight) {
    if lw.inv_weight != 0 {
        return;
    }
    let w = scale_load_down(lw.weight);
    lw.inv_weight = if w >= u64::from(WMULT_CONST) {
        1
    } else {
        // A zero weight takes WMULT_CONST; otherwise w >= 2 and the quotient fits 32 bits.
        u64::from(WMULT_CONST)
            .checked_div(w)
            .map_or(WMULT_CONST, |q| q as u32)
    };
}

/// What `__calc_delta()` computed, with its final multiplier and shift (debug aids the
/// fixtures report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalcDelta {
    /// The scaled delta.
    pub ret: u64,
    /// The 32-bit multiplier after both reductions.
    pub fact: u32,
    /// The final right shift (32 minus the bits dropped by the reductions).
    pub shift: i32,
}

/// `fls()`: 1-based index of the highest set bit, 0 for 0.
#[inline]
fn fls(x: u32) -> i32 {
    (32 - x.leading_zeros()) as i32 // at most 32
}

/// `__calc_delta()`: `delta_exec * weight / lw.weight` in the inverse-weight fixed point;
/// computes `lw.inv_weight` first if it is 0.
///
/// Traps: `__calc_delta(d, w, {w})` is not `d` (nice 0 over nice 0 turns 1000000 into
/// 999999, the lazy inverse being truncated); a weight above `lw.weight` makes the result
/// exceed `delta_exec`. When both reductions fire the kernel's shift goes negative
/// (undefined in C, never reached by its callers, whose `weight <= lw.weight` or whose
/// `lw` carries a table inverse): here the 128-bit product is then shifted left by the
/// excess and truncated to 64 bits.
pub fn __calc_delta(delta_exec: u64, weight: u64, lw: &mut LoadWeight) -> CalcDelta {
    let mut fact = scale_load_down(weight);
    let mut shift = WMULT_SHIFT;
    __update_inv_weight(lw);
    let fact_hi = (fact >> 32) as u32; // the kernel's (u32) cast of the high word
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift -= fs;
        fact >>= fs;
    }
    // mul_u32_u32(): the low 32 bits of fact times the inverse, exact in 64 bits.
    fact = u64::from(fact as u32) * u64::from(lw.inv_weight);
    let fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift -= fs;
        fact >>= fs;
    }
    let fact = fact as u32; // mul_u64_u32_shr() takes a u32 multiplier; it fits now
    let ret = match u32::try_from(shift) {
        Ok(s) => mul_u64_u32_shr(delta_exec, fact, s),
        Err(_) => {
            let prod = u128::from(delta_exec) * u128::from(fact);
            (prod << shift.unsigned_abs()) as u64 // |shift| <= 32: no overflow of the shift
        }
    };
    CalcDelta { ret, fact, shift }
}

/// `calc_delta_fair()`: real time to virtual time for an entity, `delta * NICE_0_LOAD /
/// se.weight`; a nice-0 entity's delta is returned unchanged (and its inverse untouched).
pub fn calc_delta_fair(delta: u64, load: &mut LoadWeight) -> u64 {
    if load.weight != NICE_0_LOAD {
        __calc_delta(delta, NICE_0_LOAD, load).ret
    } else {
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calc_delta_nice0_over_nice0_loses_one_ns() {
        let mut lw = LoadWeight::new(NICE_0_LOAD);
        let r = __calc_delta(1_000_000, NICE_0_LOAD, &mut lw);
        assert_eq!((r.ret, lw.inv_weight), (999_999, 4_194_303));
        // calc_delta_fair() hides it for nice 0 by skipping the call.
        let mut se = LoadWeight::new(NICE_0_LOAD);
        assert_eq!(calc_delta_fair(1_000_000, &mut se), 1_000_000);
        assert_eq!(se.inv_weight, 0);
    }

    #[test]
    fn calc_delta_table_and_lazy_inverse_differ() {
        // nice 1: table 5237765, lazy (2^32-1)/820 = 5237765 (equal); nice 5: 335.
        let mut table = set_load_weight(5, FairPolicy::Normal).unwrap();
        let mut lazy = LoadWeight::new(table.weight);
        __update_inv_weight(&mut lazy);
        assert_eq!(
            (table.inv_weight, lazy.inv_weight),
            (12_820_798, 12_820_797)
        );
        assert_eq!(calc_delta_fair(4_000_000, &mut table), 12_226_865);
        assert_eq!(calc_delta_fair(4_000_000, &mut lazy), 12_226_864);
    }

    #[test]
    fn scale_load_down_counts_weights_below_2048_as_two() {
        // weight 1 and weight 2047 both scale down to 2 (max(2, w >> 10)).
        for w in [1, 1023, 2047] {
            let mut lw = LoadWeight::new(w);
            __update_inv_weight(&mut lw);
            assert_eq!(lw.inv_weight, 2_147_483_647, "{w}");
        }
    }

    #[test]
    fn inverse_weight_saturates_at_one_and_result_exceeds_delta() {
        let mut lw = LoadWeight::new(((1u64 << 32) - 1) << 10);
        __update_inv_weight(&mut lw);
        assert_eq!(lw.inv_weight, 1);
        let mut zero = LoadWeight::new(0);
        __update_inv_weight(&mut zero);
        assert_eq!(zero.inv_weight, u32::MAX);
        // Weight 2^42 (scaled down: 2^32) over a lazily inverted 2^42: inverse 1, fact
        // 2^32 >> 1 = 2^31, shift 31: 1 ns -> 1 ns; a heavier weight doubles it.
        let mut big = LoadWeight::new(1 << 42);
        let r = __calc_delta(1000, 1 << 43, &mut big);
        assert_eq!((r.ret, r.fact, r.shift), (2000, 1 << 31, 30));
    }

    #[test]
    fn set_load_weight_idle_and_range() {
        assert_eq!(
            set_load_weight(0, FairPolicy::Idle),
            Some(LoadWeight {
                weight: 3 << 10,
                inv_weight: WMULT_IDLEPRIO
            })
        );
        assert_eq!(
            set_load_weight(-20, FairPolicy::Normal).unwrap().weight,
            88761 << 10
        );
        assert_eq!(set_load_weight(20, FairPolicy::Normal), None);
        assert_eq!(set_load_weight(-21, FairPolicy::Idle), None);
    }
}
