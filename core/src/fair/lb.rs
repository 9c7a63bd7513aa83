// SPDX-License-Identifier: GPL-2.0-only
//! The load balancer's classification of a sched_group — kernel/sched/fair.c
//! (`enum group_type`, `group_has_capacity()`, `group_is_overloaded()`,
//! `group_classify()`, `smt_balance()`, `update_pick_idlest()`, the `avg_load` of
//! `update_sg_lb_stats()` / `update_sg_wakeup_stats()`, the local-or-idlest decision of
//! `sched_balance_find_dst_group()`), and the `imbalance_pct` a domain level gets from
//! `sd_init()` (kernel/sched/topology.c).
//!
//! A group is overloaded when it runs more tasks than CPUs and its utilization or
//! runnable pressure exceeds its capacity by `imbalance_pct`; it has spare capacity with
//! fewer tasks than CPUs or utilization clearly below capacity. All products are
//! `unsigned long` and wrap. The enum's numbering is part of the arithmetic (groups are
//! compared by it) and shifted when v6.6 inserted `group_smt_balance`.

use super::{DivideTrap, NICE_0_LOAD};
use crate::math::{scale_load_down, SCHED_CAPACITY_SCALE};
use crate::profile::{FairClass, Profile};

/// `enum group_type`, least to most busy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum GroupType {
    /// `group_has_spare`: capacity left for more tasks.
    #[default]
    HasSpare,
    /// `group_fully_busy`: no spare capacity, but no task waits.
    FullyBusy,
    /// `group_misfit_task`: a task does not fit its CPU.
    MisfitTask,
    /// `group_smt_balance` (v6.6+): a busy SMT group to spread.
    SmtBalance,
    /// `group_asym_packing`: a preferred CPU is idle.
    AsymPacking,
    /// `group_imbalanced`: affinity kept the balancer from fixing it below.
    Imbalanced,
    /// `group_overloaded`: tasks cannot all get the CPU they need.
    Overloaded,
}

impl GroupType {
    /// The kernel's enum value: mainline numbers 0..=6; 6.1 (`fair-cfs`) has no
    /// `group_smt_balance`, so the types above it are one lower (`group_overloaded` 5)
    /// and `SmtBalance` has no value (`None`).
    pub fn kernel_value(self, profile: &Profile) -> Option<u32> {
        let v = self as u32;
        match profile.fair {
            FairClass::Eevdf => Some(v),
            FairClass::CfsV6_1 => match self {
                GroupType::SmtBalance => None,
                t if t > GroupType::SmtBalance => Some(v - 1),
                _ => Some(v),
            },
        }
    }
}

/// `struct sg_lb_stats`: what the classification reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgLbStats {
    /// Σ `cpu_load()`.
    pub group_load: u64,
    /// Σ `capacity_of()`: `sgc->capacity`.
    pub group_capacity: u64,
    /// Σ `cpu_util_cfs()`.
    pub group_util: u64,
    /// Σ `cpu_runnable()`.
    pub group_runnable: u64,
    /// Σ `rq->nr_running`.
    pub sum_nr_running: u32,
    /// Σ `rq->cfs.h_nr_runnable`.
    pub sum_h_nr_running: u32,
    /// Idle CPUs.
    pub idle_cpus: u32,
    /// CPUs in the group.
    pub group_weight: u32,
    /// The biggest misfit load (0: none).
    pub group_misfit_task_load: u64,
    /// `group_asym_packing`.
    pub group_asym_packing: bool,
    /// `group_smt_balance` (v6.6+; always false under `fair-cfs`).
    pub group_smt_balance: bool,
    /// `group_classify()`'s result.
    pub group_type: GroupType,
    /// `avg_load` (see [`sg_avg_load`]).
    pub avg_load: u64,
}

/// `group_has_capacity()`: fewer tasks than CPUs, or runnable within capacity by
/// `imbalance_pct` and utilization clearly below it.
pub fn group_has_capacity(imbalance_pct: u32, sgs: &SgLbStats) -> bool {
    let pct = u64::from(imbalance_pct);
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity.wrapping_mul(pct) < sgs.group_runnable.wrapping_mul(100) {
        return false;
    }
    sgs.group_capacity.wrapping_mul(100) > sgs.group_util.wrapping_mul(pct)
}

/// `group_is_overloaded()`: more tasks than CPUs and utilization or runnable beyond the
/// capacity by `imbalance_pct`. Not the negation of [`group_has_capacity`]: a group with
/// exactly one task per CPU is neither.
pub fn group_is_overloaded(imbalance_pct: u32, sgs: &SgLbStats) -> bool {
    let pct = u64::from(imbalance_pct);
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    sgs.group_capacity.wrapping_mul(100) < sgs.group_util.wrapping_mul(pct)
        || sgs.group_capacity.wrapping_mul(pct) < sgs.group_runnable.wrapping_mul(100)
}

/// `group_classify()`: overloaded, imbalanced (`sg_imbalanced`: `sgc->imbalance`), asym
/// packing, SMT balance (mainline only), misfit, fully busy, has spare — first match wins.
pub fn group_classify(
    imbalance_pct: u32,
    sg_imbalanced: bool,
    sgs: &SgLbStats,
    profile: &Profile,
) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        return GroupType::Overloaded;
    }
    if sg_imbalanced {
        return GroupType::Imbalanced;
    }
    if sgs.group_asym_packing {
        return GroupType::AsymPacking;
    }
    let smt_balance = match profile.fair {
        FairClass::Eevdf => sgs.group_smt_balance,
        FairClass::CfsV6_1 => false, // 6.1 has no group_smt_balance
    };
    if smt_balance {
        return GroupType::SmtBalance;
    }
    if sgs.group_misfit_task_load != 0 {
        return GroupType::MisfitTask;
    }
    if !group_has_capacity(imbalance_pct, sgs) {
        return GroupType::FullyBusy;
    }
    GroupType::HasSpare
}

/// The `avg_load` `update_sg_lb_stats()` computes for an overloaded group (and
/// `update_sg_wakeup_stats()` for a fully busy one too): `group_load * 1024 /
/// group_capacity`, the product wrapping. [`DivideTrap`] for a zero capacity (the kernel
/// keeps every capacity at least 1).
pub fn sg_avg_load(group_load: u64, group_capacity: u64) -> Result<u64, DivideTrap> {
    group_load
        .wrapping_mul(SCHED_CAPACITY_SCALE)
        .checked_div(group_capacity)
        .ok_or(DivideTrap)
}

/// `smt_balance()`: an SMT group (`SD_SHARE_CPUCAPACITY`) running more than one task is
/// worth spreading to an idle destination (`env_idle`: not `CPU_NOT_IDLE`).
pub fn smt_balance(env_idle: bool, sd_share_cpucapacity: bool, sum_h_nr_running: u32) -> bool {
    env_idle && sd_share_cpucapacity && sum_h_nr_running > 1
}

/// The `imbalance_pct` `sd_init()` (kernel/sched/topology.c) gives a domain level: 117 by
/// default (MC/LLC and package levels, NUMA too), 110 where the CPUs share capacity (SMT,
/// `SD_SHARE_CPUCAPACITY`), so siblings are balanced sooner.
pub const fn sd_init_imbalance_pct(sd_share_cpucapacity: bool) -> u32 {
    if sd_share_cpucapacity {
        110
    } else {
        117
    }
}

/// `update_pick_idlest()`: does a group (`sgs`, its `sgc->max_capacity`) beat the idlest
/// so far (`idlest`, `idlest_max_capacity`) in the slow wake-up path? A lower type wins; on
/// equal types the lower `avg_load` (busy, overloaded), the higher max capacity (misfit),
/// or more idle CPUs then the lower utilization (has spare); ties keep the earlier group.
pub fn update_pick_idlest(
    idlest: &SgLbStats,
    idlest_max_capacity: u64,
    sgs: &SgLbStats,
    max_capacity: u64,
) -> bool {
    if sgs.group_type != idlest.group_type {
        return sgs.group_type < idlest.group_type;
    }
    match sgs.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > sgs.avg_load,
        GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => false,
        GroupType::MisfitTask => idlest_max_capacity < max_capacity,
        GroupType::HasSpare => {
            idlest.idle_cpus < sgs.idle_cpus
                || (idlest.idle_cpus == sgs.idle_cpus && idlest.group_util > sgs.group_util)
        }
    }
}

/// The end of `sched_balance_find_dst_group()` (was `find_idlest_group()`): does a
/// waking or forking task stay in the `local` group rather than go to the `idlest` one
/// [`update_pick_idlest`] chose? A lower local type stays, a higher one goes; on equal
/// types a busy or overloaded local group stays unless the idlest group's `avg_load` is
/// lower by both `scale_load_down(NICE_0_LOAD) * (imbalance_pct - 100) / 100` and
/// `imbalance_pct` percent, a misfit one stays with at least the idlest's
/// `sgc->max_capacity`, one with spare capacity with at least as many idle CPUs, and the
/// load balancer's own types always stay. `imbalance_pct - 100` is `unsigned int`
/// arithmetic (it wraps below 100), the rest `unsigned long`. The `SD_NUMA` rules are not
/// modelled: callers pass domains without that flag.
pub fn find_dst_group_stays_local(
    imbalance_pct: u32,
    local: &SgLbStats,
    local_max_capacity: u64,
    idlest: &SgLbStats,
    idlest_max_capacity: u64,
) -> bool {
    if local.group_type != idlest.group_type {
        return local.group_type < idlest.group_type;
    }
    match local.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let over = u64::from(imbalance_pct.wrapping_sub(100));
            let imbalance = scale_load_down(NICE_0_LOAD).wrapping_mul(over) / 100;
            idlest.avg_load >= local.avg_load.wrapping_add(imbalance)
                || local.avg_load.wrapping_mul(100)
                    <= u64::from(imbalance_pct).wrapping_mul(idlest.avg_load)
        }
        GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => true,
        GroupType::MisfitTask => local_max_capacity >= idlest_max_capacity,
        GroupType::HasSpare => local.idle_cpus >= idlest.idle_cpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sgs(nr: u32, weight: u32, cap: u64, util: u64, runnable: u64) -> SgLbStats {
        SgLbStats {
            sum_nr_running: nr,
            group_weight: weight,
            group_capacity: cap,
            group_util: util,
            group_runnable: runnable,
            ..SgLbStats::default()
        }
    }

    #[test]
    fn sd_init_imbalance_pct_is_110_for_smt_and_117_elsewhere() {
        assert_eq!(sd_init_imbalance_pct(true), 110);
        assert_eq!(sd_init_imbalance_pct(false), 117);
    }

    #[test]
    fn group_type_enum_shifts_between_mainline_and_6_1() {
        let cfs = Profile::from_name("fair-cfs").unwrap();
        let m = Profile::MAINLINE;
        assert_eq!(GroupType::Overloaded.kernel_value(&m), Some(6));
        assert_eq!(GroupType::Overloaded.kernel_value(&cfs), Some(5));
        assert_eq!(GroupType::AsymPacking.kernel_value(&cfs), Some(3));
        assert_eq!(GroupType::MisfitTask.kernel_value(&cfs), Some(2));
        assert_eq!(GroupType::SmtBalance.kernel_value(&cfs), None);
        // 6.1 ignores the smt flag.
        let mut s = sgs(1, 2, 2048, 0, 0);
        s.group_smt_balance = true;
        assert_eq!(group_classify(117, false, &s, &m), GroupType::SmtBalance);
        assert_eq!(group_classify(117, false, &s, &cfs), GroupType::HasSpare);
    }

    #[test]
    fn group_classify_order_and_thresholds() {
        let m = Profile::MAINLINE;
        // 3 tasks on 2 CPUs, util 1900 * 117 > 2048 * 100: overloaded.
        let s = sgs(3, 2, 2048, 1900, 1900);
        assert!(group_is_overloaded(117, &s));
        assert_eq!(group_classify(117, true, &s, &m), GroupType::Overloaded);
        assert_eq!(sg_avg_load(1500, 2048), Ok(750));
        assert_eq!(sg_avg_load(1, 0), Err(DivideTrap));
        // One task per CPU is neither overloaded nor with capacity when busy.
        let s = sgs(2, 2, 2048, 1800, 1800);
        assert!(!group_is_overloaded(117, &s));
        assert!(!group_has_capacity(117, &s));
        assert_eq!(group_classify(117, false, &s, &m), GroupType::FullyBusy);
        assert_eq!(group_classify(117, true, &s, &m), GroupType::Imbalanced);
        // Products wrap: a capacity of 2^62 times 100 wraps below util * pct.
        let s = sgs(3, 2, 1 << 62, 2, 0);
        assert!(group_is_overloaded(110, &s));
    }

    #[test]
    fn smt_balance_needs_idle_dst_smt_group_and_two_tasks() {
        assert!(smt_balance(true, true, 2));
        assert!(!smt_balance(false, true, 2));
        assert!(!smt_balance(true, false, 2));
        assert!(!smt_balance(true, true, 1));
    }

    #[test]
    fn update_pick_idlest_prefers_lower_type_then_type_rule() {
        let mut a = sgs(1, 2, 2048, 100, 100);
        let mut b = a;
        a.group_type = GroupType::FullyBusy;
        b.group_type = GroupType::HasSpare;
        assert!(update_pick_idlest(&a, 1024, &b, 1024));
        assert!(!update_pick_idlest(&b, 1024, &a, 1024));
        // Has spare: more idle CPUs, then lower util; a tie keeps the earlier group.
        a.group_type = GroupType::HasSpare;
        b.idle_cpus = 1;
        assert!(update_pick_idlest(&a, 1024, &b, 1024));
        a.idle_cpus = 1;
        assert!(!update_pick_idlest(&a, 1024, &b, 1024));
        b.group_util = 50;
        assert!(update_pick_idlest(&a, 1024, &b, 1024));
        a.group_type = GroupType::MisfitTask;
        b.group_type = GroupType::MisfitTask;
        assert!(update_pick_idlest(&a, 512, &b, 1024));
        assert!(!update_pick_idlest(&a, 1024, &b, 1024));
        // Busy and overloaded groups: strictly lower avg_load.
        a.group_type = GroupType::FullyBusy;
        b.group_type = GroupType::FullyBusy;
        a.avg_load = 10;
        b.avg_load = 10;
        assert!(!update_pick_idlest(&a, 1024, &b, 1024));
        b.avg_load = 9;
        assert!(update_pick_idlest(&a, 1024, &b, 1024));
    }

    #[test]
    fn find_dst_group_stays_local_margins() {
        let busy = |avg_load| SgLbStats {
            group_type: GroupType::FullyBusy,
            avg_load,
            ..SgLbStats::default()
        };
        let stays =
            |pct, local, idlest| find_dst_group_stays_local(pct, &busy(local), 0, &busy(idlest), 0);
        // Margin 1024 * 17 / 100 = 174: local 1000 vs idlest 826 leaves (826 < 1174 and
        // 100000 > 117 * 826 = 96642); idlest 855 stays (100000 <= 117 * 855 = 100035).
        assert!(!stays(117, 1000, 826));
        assert!(stays(117, 1000, 855));
        // Idlest within the absolute margin: stay.
        assert!(stays(117, 1000, 900));
        // imbalance_pct below 100 wraps as unsigned int: a margin of (2^32 - 1) * 1024 /
        // 100 that no avg_load reaches, and 100 * 1000 > 99 * 1: leave.
        assert!(!stays(99, 1000, 1));
        // Types: a lower local type stays, a higher one goes.
        let spare = SgLbStats::default();
        assert!(find_dst_group_stays_local(117, &spare, 0, &busy(0), 0));
        assert!(!find_dst_group_stays_local(117, &busy(0), 0, &spare, 0));
        // Has spare: at least as many idle CPUs stays.
        let idle = |n| SgLbStats {
            idle_cpus: n,
            ..SgLbStats::default()
        };
        assert!(find_dst_group_stays_local(117, &idle(1), 0, &idle(1), 0));
        assert!(!find_dst_group_stays_local(117, &idle(1), 0, &idle(2), 0));
        // Misfit: at least the idlest's max capacity stays.
        let misfit = SgLbStats {
            group_type: GroupType::MisfitTask,
            ..SgLbStats::default()
        };
        assert!(find_dst_group_stays_local(
            117, &misfit, 1024, &misfit, 1024
        ));
        assert!(!find_dst_group_stays_local(
            117, &misfit, 512, &misfit, 1024
        ));
        let imb = SgLbStats {
            group_type: GroupType::Imbalanced,
            ..SgLbStats::default()
        };
        assert!(find_dst_group_stays_local(117, &imb, 0, &imb, 0));
    }
}
