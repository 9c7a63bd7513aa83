// SPDX-License-Identifier: GPL-2.0-only
//! Task-group shares — kernel/sched/fair.c (`calc_group_shares()`,
//! `update_tg_load_avg()`, `clear_tg_load_avg()`), CONFIG_FAIR_GROUP_SCHED.
//!
//! A group's entity on one CPU weighs the group's shares times this CPU's part of the
//! group's load: `tg->shares * load / tg_weight`, with `tg->load_avg` (the sum of every
//! CPU's published `load_avg`) standing in for the global sum, corrected by this CPU's
//! current load. Each CPU publishes its `load_avg` into `tg->load_avg` only when it moved
//! by more than 1/64 — and since v6.7 at most once per millisecond.

use super::DivideTrap;
use crate::math::scale_load_down;
use crate::profile::{FairClass, Profile};

/// `MIN_SHARES`: the floor of a group entity's weight — **unscaled**, so an idle CPU's
/// group entity weighs 2 (scaled), not `2 << 10`.
pub const MIN_SHARES: i64 = 2;
/// `MAX_SHARES`: the largest `cpu.shares` (unscaled).
pub const MAX_SHARES: i64 = 1 << 18;
/// The rate limit of `update_tg_load_avg()` (v6.7+): 1 ms of `sched_clock_cpu()`.
pub const TG_LOAD_AVG_RATE_LIMIT_NS: u64 = 1_000_000;

/// `CGROUP_WEIGHT_DFL`: cgroup v2's default `cpu.weight`.
pub const CGROUP_WEIGHT_DFL: u64 = 100;
/// `CGROUP_WEIGHT_MIN` / `CGROUP_WEIGHT_MAX` (include/linux/cgroup.h): the range
/// `cpu.weight` accepts.
pub const CGROUP_WEIGHT_MIN: u64 = 1;
/// See [`CGROUP_WEIGHT_MIN`].
pub const CGROUP_WEIGHT_MAX: u64 = 10_000;

/// `sched_weight_from_cgroup()` (kernel/sched/sched.h; cpu_weight_write_u64() in v6.1):
/// cgroup v2 `cpu.weight` → unscaled shares, `DIV_ROUND_CLOSEST_ULL(w * 1024, 100)`
/// (100 → 1024, 200 → 2048, 25 → 256). The group's `tg->shares` is its `scale_load()`.
pub fn sched_weight_from_cgroup(cgrp_weight: u64) -> u64 {
    cgrp_weight
        .wrapping_mul(1024)
        .wrapping_add(CGROUP_WEIGHT_DFL / 2)
        / CGROUP_WEIGHT_DFL
}

/// `calc_group_shares()`: the weight of a group's entity on one CPU.
///
/// `load = max(scale_load_down(grq load.weight), grq avg.load_avg)`, `tg_weight =
/// tg_load_avg - tg_load_avg_contrib + load`, `shares = tg_shares * load / tg_weight`
/// (C `long`: wrapping product, division toward zero, skipped when `tg_weight` is 0),
/// clamped to `[MIN_SHARES, tg_shares]`. [`DivideTrap`] for `i64::MIN / -1`.
pub fn calc_group_shares(
    tg_shares: i64,
    load_weight: u64,
    load_avg: u64,
    tg_load_avg: i64,
    tg_load_avg_contrib: u64,
) -> Result<i64, DivideTrap> {
    // max() of two unsigned longs, then stored in a long.
    let load = scale_load_down(load_weight).max(load_avg) as i64;
    let tg_weight = tg_load_avg
        .wrapping_sub(tg_load_avg_contrib as i64)
        .wrapping_add(load);
    let mut shares = tg_shares.wrapping_mul(load);
    if tg_weight != 0 {
        shares = shares.checked_div(tg_weight).ok_or(DivideTrap)?;
    }
    Ok(super::clamp_i64(shares, MIN_SHARES, tg_shares))
}

/// A group cfs_rq's side of `tg->load_avg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TgLoadContrib {
    /// `cfs_rq->tg_load_avg_contrib`: what this CPU last published.
    pub tg_load_avg_contrib: u64,
    /// `cfs_rq->last_update_tg_load_avg` (v6.7+; ns of `sched_clock_cpu()`).
    pub last_update_tg_load_avg: u64,
}

/// `update_tg_load_avg()`: publishes this CPU's `load_avg` into `tg_load_avg` when it
/// moved by more than `contrib / 64`; returns whether it did.
///
/// Nothing for the root group. Mainline also skips an inactive CPU and rate-limits to
/// once per [`TG_LOAD_AVG_RATE_LIMIT_NS`] (`now - last_update`, unsigned: a clock behind
/// the stamp counts as far ahead); the 6.1 CFS (`fair-cfs`) has neither. Trap: the test
/// `abs(delta) > contrib / 64` compares a `long` with an `unsigned long`, so it is done
/// unsigned (`abs(LONG_MIN)` is 2^63).
pub fn update_tg_load_avg(
    is_root_tg: bool,
    cpu_active: bool,
    now: u64,
    load_avg: u64,
    grq: &mut TgLoadContrib,
    tg_load_avg: &mut i64,
    profile: &Profile,
) -> bool {
    if is_root_tg {
        return false;
    }
    match profile.fair {
        FairClass::Eevdf => {
            if !cpu_active
                || now.wrapping_sub(grq.last_update_tg_load_avg) < TG_LOAD_AVG_RATE_LIMIT_NS
            {
                return false;
            }
        }
        FairClass::CfsV6_1 => {}
    }
    let delta = load_avg.wrapping_sub(grq.tg_load_avg_contrib) as i64; // long delta
    if delta.wrapping_abs() as u64 > grq.tg_load_avg_contrib / 64 {
        *tg_load_avg = tg_load_avg.wrapping_add(delta);
        grq.tg_load_avg_contrib = load_avg;
        if profile.fair == FairClass::Eevdf {
            grq.last_update_tg_load_avg = now;
        }
        return true;
    }
    false
}

/// `clear_tg_load_avg()` (CPU going offline): withdraws this CPU's contribution and
/// stamps the time; nothing for the root group.
pub fn clear_tg_load_avg(
    is_root_tg: bool,
    now: u64,
    grq: &mut TgLoadContrib,
    tg_load_avg: &mut i64,
) {
    if is_root_tg {
        return;
    }
    *tg_load_avg = tg_load_avg.wrapping_sub(grq.tg_load_avg_contrib as i64);
    grq.tg_load_avg_contrib = 0;
    grq.last_update_tg_load_avg = now;
}

#[cfg(test)]
mod tests {
    use super::*;

    const NICE_0: u64 = 1024 << 10;

    #[test]
    fn cgroup_weights_become_shares() {
        assert_eq!(sched_weight_from_cgroup(100), 1024);
        assert_eq!(sched_weight_from_cgroup(200), 2048);
        assert_eq!(sched_weight_from_cgroup(25), 256);
        assert_eq!(sched_weight_from_cgroup(1), 10); // 10.24 rounds to 10
    }

    #[test]
    fn group_shares_floor_is_the_unscaled_two() {
        // An idle CPU of a busy group: load 0 → 0 shares → the floor 2, not 2048.
        assert_eq!(calc_group_shares(1 << 20, 0, 0, 3000, 0), Ok(2));
        // Alone on its CPU the group gets all its shares.
        assert_eq!(
            calc_group_shares(1 << 20, NICE_0, 1024, 1024, 1024),
            Ok(1 << 20)
        );
        // Two equally loaded CPUs: half each.
        assert_eq!(
            calc_group_shares(1 << 20, NICE_0, 1024, 2048, 1024),
            Ok(1 << 19)
        );
        // Zero tg_weight: no division, then clamped to tg_shares.
        assert_eq!(calc_group_shares(1 << 20, 0, 5, -5, 0), Ok(1 << 20));
        assert_eq!(calc_group_shares(i64::MIN, 0, 1, -2, 0), Err(DivideTrap));
    }

    #[test]
    fn group_shares_rate_limit_uses_unsigned_time() {
        let p = Profile::MAINLINE;
        let mut grq = TgLoadContrib {
            tg_load_avg_contrib: 640,
            last_update_tg_load_avg: 5_000_000,
        };
        let mut tg = 1000;
        // 0.5 ms later: rate-limited.
        assert!(!update_tg_load_avg(
            false, true, 5_500_000, 2000, &mut grq, &mut tg, &p
        ));
        // A clock behind the stamp wraps to a huge difference: not limited.
        assert!(update_tg_load_avg(
            false, true, 4_000_000, 2000, &mut grq, &mut tg, &p
        ));
        assert_eq!(
            (tg, grq.tg_load_avg_contrib, grq.last_update_tg_load_avg),
            (2360, 2000, 4_000_000)
        );
        // A move of 31 on 2000 (<= 2000/64) is filtered.
        assert!(!update_tg_load_avg(
            false, true, 9_000_000, 2031, &mut grq, &mut tg, &p
        ));
        // 6.1: no rate limit, no cpu_active test, no stamp.
        let cfs = Profile::from_name("fair-cfs").unwrap();
        assert!(update_tg_load_avg(
            false, false, 0, 3000, &mut grq, &mut tg, &cfs
        ));
        assert_eq!((tg, grq.last_update_tg_load_avg), (3360, 4_000_000));
    }

    #[test]
    fn group_shares_delta_compares_signed_as_unsigned() {
        // load_avg 0 against a contrib of 2^63 + 64: delta = -(2^63 + 64) wraps to
        // 2^63 - 64 as a long; contrib / 64 = 2^57 + 1: published.
        let mut grq = TgLoadContrib {
            tg_load_avg_contrib: (1 << 63) + 64,
            last_update_tg_load_avg: 0,
        };
        let mut tg = 0i64;
        let p = Profile::from_name("fair-cfs").unwrap();
        assert!(update_tg_load_avg(false, true, 0, 0, &mut grq, &mut tg, &p));
        assert_eq!(tg, i64::MAX - 63);
        clear_tg_load_avg(false, 77, &mut grq, &mut tg);
        assert_eq!(
            (grq.tg_load_avg_contrib, grq.last_update_tg_load_avg, tg),
            (0, 77, i64::MAX - 63)
        );
    }
}
