// SPDX-License-Identifier: GPL-2.0-only
//! The EAS "overutilized" state — kernel/sched/fair.c.
//!
//! Energy-aware placement is only trusted while every CPU has spare capacity. A CPU is
//! overutilized when its CFS utilization does not fit its capacity (`util_fits_cpu()` with
//! the rq's uclamp values); one such CPU marks the root domain overutilized, which turns
//! EAS wake-up placement off until a load-balance pass over the whole root domain finds
//! no overutilized CPU. With EAS off the root domain always reads as overutilized.

use crate::capacity::{cpu_util_cfs, util_fits_cpu, CfsRqUtil, CpuCapacity, CpuUtilRq};
use crate::math::SCHED_CAPACITY_SCALE;
use crate::profile::{OverutilizedPolicy, Profile};

/// Static keys both functions read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EasKeys {
    /// `sched_energy_enabled()`: the `sched_energy_present` static key.
    pub sched_energy_enabled: bool,
    /// `uclamp_is_used()`: the `sched_uclamp_used` static key.
    pub uclamp_is_used: bool,
}

/// Everything `cpu_overutilized()` reads about one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct OverutilizedCpu {
    /// Original capacity, `capacity_of()` and the two pressures.
    pub capacity: CpuCapacity,
    /// `rq->cfs.avg.util_avg`.
    pub cfs_util_avg: u64,
    /// `rq->cfs.avg.util_est`.
    pub cfs_util_est: u32,
    /// `uclamp_rq_get(rq, UCLAMP_MIN)`.
    pub rq_uclamp_min: u64,
    /// `uclamp_rq_get(rq, UCLAMP_MAX)`.
    pub rq_uclamp_max: u64,
    /// `rq->nr_running`; read only by [`OverutilizedPolicy::IgnoreLoneTask`].
    pub nr_running: u32,
}

impl OverutilizedCpu {
    /// The `cpu_util()` view of this CPU, with the UTIL_EST feature on (the default).
    pub fn util_rq(&self) -> CpuUtilRq {
        CpuUtilRq {
            cpu: 0,
            capacity_orig: self.capacity.capacity_orig,
            cfs: CfsRqUtil {
                util_avg: self.cfs_util_avg,
                runnable_avg: 0,
                util_est: self.cfs_util_est,
            },
            util_est_feat: true,
        }
    }
}

/// `cpu_overutilized()`: does the CPU's CFS utilization not fit its capacity?
///
/// Traps: always false with EAS off; a -1 from `util_fits_cpu()` is true in C, so "fits
/// but the boost is not met" is *not* overutilized; the rq clamps are always passed (and
/// ignored by util_fits_cpu when uclamp is unused).
///
/// Profile: [`OverutilizedPolicy::IgnoreLoneTask`] (VARIANTS.md §1) also says "not
/// overutilized" for a maximum-capacity CPU (`capacity_orig == 1024`, the normalised
/// biggest CPU) running exactly one task whose capacity is not reduced
/// (`capacity_of == capacity_orig`).
pub fn cpu_overutilized(profile: &Profile, keys: EasKeys, cpu: &OverutilizedCpu) -> bool {
    if !keys.sched_energy_enabled {
        return false;
    }
    match profile.overutilized {
        OverutilizedPolicy::Mainline => {}
        // The patch's only change: a lone task on an unreduced biggest CPU cannot be
        // helped by migration, so it does not disable EAS.
        OverutilizedPolicy::IgnoreLoneTask => {
            let c = &cpu.capacity;
            if c.capacity_orig == SCHED_CAPACITY_SCALE
                && cpu.nr_running == 1
                && c.cpu_capacity == c.capacity_orig
            {
                return false;
            }
        }
    }
    let util = cpu_util_cfs(&cpu.util_rq());
    util_fits_cpu(
        util,
        cpu.rq_uclamp_min,
        cpu.rq_uclamp_max,
        keys.uclamp_is_used,
        &cpu.capacity,
    ) == 0
}

/// The root domain's `overutilized` flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RootDomain {
    /// `rd->overutilized`.
    pub overutilized: bool,
}

/// `is_rd_overutilized()`: `!sched_energy_enabled() || rd->overutilized`.
#[inline]
pub fn is_rd_overutilized(keys: EasKeys, rd: &RootDomain) -> bool {
    !keys.sched_energy_enabled || rd.overutilized
}

/// `set_rd_overutilized()`: store the flag — only when EAS is on.
///
/// Trap: with EAS off the stored flag never changes, whatever its value.
#[inline]
pub fn set_rd_overutilized(keys: EasKeys, rd: &mut RootDomain, flag: bool) {
    if keys.sched_energy_enabled {
        rd.overutilized = flag;
    }
}

/// `check_update_overutilized_status()` (enqueue of a non-new task, tick): set the flag
/// when it reads clear and this CPU is overutilized. It never clears the flag.
pub fn check_update_overutilized_status(
    profile: &Profile,
    keys: EasKeys,
    rd: &mut RootDomain,
    cpu: &OverutilizedCpu,
) {
    if !is_rd_overutilized(keys, rd) && cpu_overutilized(profile, keys, cpu) {
        set_rd_overutilized(keys, rd, true);
    }
}

/// The overutilized part of `update_sd_lb_stats()`: after a load-balance pass over a
/// domain's CPUs, `sg_overutilized` says whether any was overutilized. At the root domain
/// (no parent) the flag is set to it, which can clear it; in a child domain it is only
/// ever set.
pub fn update_sd_lb_overutilized(
    keys: EasKeys,
    rd: &mut RootDomain,
    is_root_domain: bool,
    sg_overutilized: bool,
) {
    if is_root_domain || sg_overutilized {
        set_rd_overutilized(keys, rd, sg_overutilized);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EAS: EasKeys = EasKeys {
        sched_energy_enabled: true,
        uclamp_is_used: true,
    };

    fn big_busy(nr_running: u32) -> OverutilizedCpu {
        OverutilizedCpu {
            capacity: CpuCapacity {
                capacity_orig: 1024,
                cpu_capacity: 1024,
                hw_load_avg: 0,
                cpufreq_pressure: 0,
            },
            cfs_util_avg: 1000,
            cfs_util_est: 0,
            rq_uclamp_min: 0,
            rq_uclamp_max: 1024,
            nr_running,
        }
    }

    fn lone() -> Profile {
        Profile {
            overutilized: OverutilizedPolicy::IgnoreLoneTask,
            ..Profile::MAINLINE
        }
    }

    #[test]
    fn cpu_overutilized_margin_819_fits_820_does_not() {
        let mut c = big_busy(1);
        c.cfs_util_avg = 819;
        assert!(!cpu_overutilized(&Profile::MAINLINE, EAS, &c));
        c.cfs_util_avg = 820;
        assert!(cpu_overutilized(&Profile::MAINLINE, EAS, &c));
    }

    #[test]
    fn cpu_overutilized_minus_one_counts_as_fitting() {
        // util 100 fits 381 but uclamp_min 500 exceeds the CPU: util_fits_cpu = -1.
        let c = OverutilizedCpu {
            capacity: CpuCapacity {
                capacity_orig: 381,
                cpu_capacity: 381,
                ..Default::default()
            },
            cfs_util_avg: 100,
            rq_uclamp_min: 500,
            rq_uclamp_max: 1024,
            ..Default::default()
        };
        assert_eq!(util_fits_cpu(100, 500, 1024, true, &c.capacity), -1);
        assert!(!cpu_overutilized(&Profile::MAINLINE, EAS, &c));
    }

    #[test]
    fn cpu_overutilized_is_false_with_eas_off() {
        let keys = EasKeys {
            sched_energy_enabled: false,
            uclamp_is_used: true,
        };
        assert!(!cpu_overutilized(&Profile::MAINLINE, keys, &big_busy(2)));
    }

    #[test]
    fn mainline_ignores_nr_running() {
        for n in [0, 1, 2] {
            assert!(cpu_overutilized(&Profile::MAINLINE, EAS, &big_busy(n)));
        }
    }

    #[test]
    fn lone_task_on_unreduced_max_cpu_is_not_overutilized() {
        assert!(!cpu_overutilized(&lone(), EAS, &big_busy(1)));
    }

    #[test]
    fn lone_task_patch_two_tasks_still_overutilized() {
        assert!(cpu_overutilized(&lone(), EAS, &big_busy(2)));
    }

    #[test]
    fn lone_task_patch_reduced_capacity_still_overutilized() {
        let mut c = big_busy(1);
        c.capacity.cpu_capacity = 1000;
        assert!(cpu_overutilized(&lone(), EAS, &c));
    }

    #[test]
    fn lone_task_patch_non_max_cpu_still_overutilized() {
        let mut c = big_busy(1);
        c.capacity.capacity_orig = 984;
        c.capacity.cpu_capacity = 984;
        assert!(cpu_overutilized(&lone(), EAS, &c));
    }

    #[test]
    fn lone_task_patch_keeps_eas_off_false() {
        let keys = EasKeys {
            sched_energy_enabled: false,
            uclamp_is_used: false,
        };
        assert!(!cpu_overutilized(&lone(), keys, &big_busy(2)));
    }

    #[test]
    fn check_update_sets_but_never_clears() {
        let mut rd = RootDomain::default();
        let mut c = big_busy(2);
        check_update_overutilized_status(&Profile::MAINLINE, EAS, &mut rd, &c);
        assert!(rd.overutilized);
        c.cfs_util_avg = 10;
        check_update_overutilized_status(&Profile::MAINLINE, EAS, &mut rd, &c);
        assert!(rd.overutilized);
    }

    #[test]
    fn child_domain_balance_never_clears_root_does() {
        let mut rd = RootDomain { overutilized: true };
        update_sd_lb_overutilized(EAS, &mut rd, false, false);
        assert!(rd.overutilized);
        update_sd_lb_overutilized(EAS, &mut rd, true, false);
        assert!(!rd.overutilized);
        update_sd_lb_overutilized(EAS, &mut rd, false, true);
        assert!(rd.overutilized);
    }

    #[test]
    fn eas_off_never_writes_the_flag_but_reads_overutilized() {
        let keys = EasKeys::default();
        let mut rd = RootDomain {
            overutilized: false,
        };
        update_sd_lb_overutilized(keys, &mut rd, false, true);
        assert!(!rd.overutilized);
        assert!(is_rd_overutilized(keys, &rd));
    }
}
