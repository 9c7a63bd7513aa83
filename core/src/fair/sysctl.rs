// SPDX-License-Identifier: GPL-2.0-only
//! Tunables scaled by CPU count and the per-task slice — kernel/sched/fair.c
//! (`get_update_sysctl_factor()`, `update_sysctl()`, `__setparam_fair()`).
//!
//! The kernel multiplies its "normalized" tunables by a factor of the online CPU count
//! (capped at 8), logarithmic by default. EEVDF has one tunable, the base slice; the 6.1
//! CFS had the latency target, the minimum granularity and the wake-up granularity.

use crate::profile::{FairClass, Profile};

/// `normalized_sysctl_sched_base_slice` (EEVDF): 0.7 ms.
pub const NORMALIZED_SYSCTL_SCHED_BASE_SLICE: u32 = 700_000;
/// 6.1 `normalized_sysctl_sched_latency`: 6 ms.
pub const NORMALIZED_SYSCTL_SCHED_LATENCY: u32 = 6_000_000;
/// 6.1 `normalized_sysctl_sched_min_granularity`: 0.75 ms.
pub const NORMALIZED_SYSCTL_SCHED_MIN_GRANULARITY: u32 = 750_000;
/// 6.1 `normalized_sysctl_sched_wakeup_granularity`: 1 ms.
pub const NORMALIZED_SYSCTL_SCHED_WAKEUP_GRANULARITY: u32 = 1_000_000;
/// 6.1 `sysctl_sched_idle_min_granularity`: 0.75 ms, not scaled.
pub const SYSCTL_SCHED_IDLE_MIN_GRANULARITY: u32 = 750_000;
/// 6.1 `sched_nr_latency`: above this many tasks the period stretches.
pub const SCHED_NR_LATENCY: u32 = 8;
/// `__setparam_fair()`'s bounds on a custom slice: 0.1 ms (HZ=1000 / 10) ..
pub const SCHED_SLICE_MIN_NS: u64 = 100_000;
/// .. 100 ms (HZ=100 * 10).
pub const SCHED_SLICE_MAX_NS: u64 = 100_000_000;

/// `sysctl_sched_tunable_scaling`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TunableScaling {
    /// `SCHED_TUNABLESCALING_NONE` (0): factor 1.
    None,
    /// `SCHED_TUNABLESCALING_LOG` (1, the default): `1 + ilog2(cpus)`.
    #[default]
    Log,
    /// `SCHED_TUNABLESCALING_LINEAR` (2): `cpus`.
    Linear,
}

impl TunableScaling {
    /// The sysctl's integer value; anything but 0 and 2 takes the `default:` (log) branch.
    pub fn from_sysctl(v: u32) -> Self {
        match v {
            0 => TunableScaling::None,
            2 => TunableScaling::Linear,
            _ => TunableScaling::Log,
        }
    }
}

/// `get_update_sysctl_factor()`: `min(nr_cpus, 8)` scaled as configured.
///
/// Log scaling is `1 + ilog2(cpus)`; the kernel's `ilog2(0)` is `fls(0) - 1 = -1`, so 0
/// CPUs (never online in practice) give factor 0, as linear scaling does.
pub fn get_update_sysctl_factor(nr_cpus: u32, scaling: TunableScaling) -> u32 {
    let cpus = nr_cpus.min(8);
    match scaling {
        TunableScaling::None => 1,
        TunableScaling::Linear => cpus,
        TunableScaling::Log => 32 - cpus.leading_zeros(), // 1 + ilog2 = fls
    }
}

/// The scaled tunables `update_sysctl()` sets: EEVDF's base slice, or the 6.1 CFS set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FairSysctl {
    /// `get_update_sysctl_factor()`.
    pub factor: u32,
    /// EEVDF `sysctl_sched_base_slice` (0 under `fair-cfs`).
    pub sysctl_sched_base_slice: u32,
    /// 6.1 `sysctl_sched_latency` (0 under EEVDF).
    pub sysctl_sched_latency: u32,
    /// 6.1 `sysctl_sched_min_granularity` (0 under EEVDF).
    pub sysctl_sched_min_granularity: u32,
    /// 6.1 `sysctl_sched_wakeup_granularity` (0 under EEVDF).
    pub sysctl_sched_wakeup_granularity: u32,
}

/// `update_sysctl()`: each tunable is `factor * normalized` (unsigned int, wrapping);
/// which tunables exist depends on the fair class (EEVDF since v6.6 keeps only the base
/// slice).
pub fn update_sysctl(nr_cpus: u32, scaling: TunableScaling, profile: &Profile) -> FairSysctl {
    let factor = get_update_sysctl_factor(nr_cpus, scaling);
    let scaled = |normalized: u32| factor.wrapping_mul(normalized);
    let mut s = FairSysctl {
        factor,
        sysctl_sched_base_slice: 0,
        sysctl_sched_latency: 0,
        sysctl_sched_min_granularity: 0,
        sysctl_sched_wakeup_granularity: 0,
    };
    match profile.fair {
        FairClass::Eevdf => s.sysctl_sched_base_slice = scaled(NORMALIZED_SYSCTL_SCHED_BASE_SLICE),
        FairClass::CfsV6_1 => {
            s.sysctl_sched_latency = scaled(NORMALIZED_SYSCTL_SCHED_LATENCY);
            s.sysctl_sched_min_granularity = scaled(NORMALIZED_SYSCTL_SCHED_MIN_GRANULARITY);
            s.sysctl_sched_wakeup_granularity = scaled(NORMALIZED_SYSCTL_SCHED_WAKEUP_GRANULARITY);
        }
    }
    s
}

/// `__setparam_fair()`'s slice part: a nonzero `sched_runtime` (sched_setattr, rt-app's
/// `dl-runtime` on SCHED_OTHER) becomes a custom slice clamped to [0.1 ms, 100 ms]; 0
/// returns to the base slice. Returns `(slice, custom_slice)`.
pub fn __setparam_fair(sched_runtime: u64, sysctl_sched_base_slice: u64) -> (u64, bool) {
    if sched_runtime != 0 {
        (
            sched_runtime.clamp(SCHED_SLICE_MIN_NS, SCHED_SLICE_MAX_NS),
            true,
        )
    } else {
        (sysctl_sched_base_slice, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_sysctl_caps_cpus_at_8_and_scales_log() {
        let p = Profile::MAINLINE;
        let s = |n| update_sysctl(n, TunableScaling::Log, &p).sysctl_sched_base_slice;
        assert_eq!(
            (s(1), s(2), s(3), s(4), s(8), s(1024)),
            (700_000, 1_400_000, 1_400_000, 2_100_000, 2_800_000, 2_800_000)
        );
        let lin = update_sysctl(6, TunableScaling::Linear, &p);
        assert_eq!((lin.factor, lin.sysctl_sched_base_slice), (6, 4_200_000));
        assert_eq!(update_sysctl(0, TunableScaling::Log, &p).factor, 0);
        assert_eq!(TunableScaling::from_sysctl(7), TunableScaling::Log);
    }

    #[test]
    fn update_sysctl_cfs_scales_latency_and_granularities() {
        let p = Profile::from_name("fair-cfs").unwrap();
        let s = update_sysctl(4, TunableScaling::Log, &p);
        assert_eq!(
            (
                s.factor,
                s.sysctl_sched_latency,
                s.sysctl_sched_min_granularity,
                s.sysctl_sched_wakeup_granularity,
                s.sysctl_sched_base_slice
            ),
            (3, 18_000_000, 2_250_000, 3_000_000, 0)
        );
    }

    #[test]
    fn setparam_fair_clamps_a_custom_slice() {
        assert_eq!(__setparam_fair(0, 2_800_000), (2_800_000, false));
        assert_eq!(__setparam_fair(1, 2_800_000), (100_000, true));
        assert_eq!(__setparam_fair(u64::MAX, 2_800_000), (100_000_000, true));
        assert_eq!(__setparam_fair(300_000, 2_800_000), (300_000, true));
    }
}
