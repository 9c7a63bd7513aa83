// SPDX-License-Identifier: GPL-2.0-only
//! The fair scheduling class's integer arithmetic — kernel/sched/fair.c (with the helpers
//! it takes from kernel/sched/core.c, sched.h, include/linux/math64.h and minmax.h).
//!
//! Virtual time is fixed point: a weight `w` runs `delta * NICE_0_LOAD / w` virtual ns per
//! real ns, computed through a 32-bit inverse weight ([`weight`]). EEVDF keeps a
//! load-weighted sum of vruntimes relative to `min_vruntime` to find the average `V`,
//! eligibility, lag and deadlines ([`eevdf`]); [`rq`] drives one cfs_rq through
//! enqueue/dequeue/pick/tick as the kernel does. [`cfs`] is the pre-EEVDF class of Linux
//! 6.1 (profile `fair-cfs`), [`group`] the task-group shares, [`lb`] the load
//! balancer's group classification and [`balance`] its periodic and newly-idle
//! decisions. Wake-up placement: [`wake`] the fast path
//! (`select_idle_sibling()`), [`idlest`] the fork slow path
//! (`sched_balance_find_dst_cpu()`), [`eas`] energy-aware placement
//! (`find_energy_efficient_cpu()`).
//!
//! Widths as on a 64-bit kernel built with `-fno-strict-overflow`: `long` is `i64`,
//! `unsigned long` `u64`, products and sums wrap. Where the kernel would fault (a division
//! by zero or `i64::MIN / -1` in `div_s64()` or a C `long` division) the function returns
//! [`DivideTrap`] instead.

pub mod balance;
pub mod cfs;
pub mod eas;
pub mod eevdf;
pub mod group;
pub mod idlest;
pub mod lb;
pub mod rq;
pub mod sysctl;
pub mod wake;
pub mod weight;

pub use weight::{LoadWeight, NICE_0_LOAD};

/// The kernel would fault here (x86 `#DE`): a zero divisor, or `i64::MIN / -1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DivideTrap;

impl core::fmt::Display for DivideTrap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("division the kernel would fault on (zero divisor or i64::MIN / -1)")
    }
}

/// `div_s64()` (include/linux/math64.h): signed 64-by-32 division, truncating toward 0.
///
/// Trap: the divisor is an `s32`, so callers passing a 64-bit `long` lose its high half
/// first — `div_s64(x, 1 << 32)` divides by zero. Here the caller truncates (`as i32`) so
/// the loss is visible at the call site.
#[inline]
pub fn div_s64(dividend: i64, divisor: i32) -> Result<i64, DivideTrap> {
    dividend.checked_div(i64::from(divisor)).ok_or(DivideTrap)
}

/// `max_vruntime()`: the later of two vruntimes, compared by their signed difference.
#[inline]
pub fn max_vruntime(max_vruntime: u64, vruntime: u64) -> u64 {
    if (vruntime.wrapping_sub(max_vruntime) as i64) > 0 {
        vruntime
    } else {
        max_vruntime
    }
}

/// `min_vruntime()`: the earlier of two vruntimes, compared by their signed difference
/// (so both may sit on either side of the 2^64 wrap).
#[inline]
pub fn min_vruntime(min_vruntime: u64, vruntime: u64) -> u64 {
    if (vruntime.wrapping_sub(min_vruntime) as i64) < 0 {
        vruntime
    } else {
        min_vruntime
    }
}

/// minmax.h `__clamp()`: `val >= hi ? hi : (val <= lo ? lo : val)`.
///
/// Trap: with `lo > hi` (a negative `limit` in `update_entity_lag()`) the upper bound is
/// tested first, so a value below `hi` comes out as `lo` — not `min(max(val, lo), hi)`.
#[inline]
pub fn clamp_i64(val: i64, lo: i64, hi: i64) -> i64 {
    if val >= hi {
        hi
    } else if val <= lo {
        lo
    } else {
        val
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn div_s64_truncates_the_divisor_to_s32() {
        // A load of 2^32 + 3 divides by 3: the kernel passes the low 32 bits.
        let load: i64 = (1 << 32) + 3;
        assert_eq!(div_s64(300, load as i32), Ok(100));
        assert_eq!(div_s64(-7, 2), Ok(-3));
        assert_eq!(div_s64(1, (1i64 << 32) as i32), Err(DivideTrap));
        assert_eq!(div_s64(i64::MIN, -1), Err(DivideTrap));
        // A divisor with bit 31 set is negative.
        assert_eq!(div_s64(10, 0x8000_0002u32 as i32), Ok(0));
        assert_eq!(div_s64(-(1 << 40), 0xffff_fffeu32 as i32), Ok(1 << 39));
    }

    #[test]
    fn vruntime_comparisons_wrap_through_2_pow_64() {
        let before_wrap = u64::MAX - 10;
        assert_eq!(max_vruntime(before_wrap, 5), 5);
        assert_eq!(min_vruntime(5, before_wrap), before_wrap);
        assert_eq!(max_vruntime(7, 7), 7);
    }

    #[test]
    fn clamp_with_lo_above_hi_gives_lo_below_hi() {
        assert_eq!(clamp_i64(0, 10, -10), -10);
        assert_eq!(clamp_i64(-20, 10, -10), 10);
        assert_eq!(clamp_i64(-5, 10, -10), -10);
        assert_eq!(clamp_i64(5, -3, 3), 3);
    }
}
