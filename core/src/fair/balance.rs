// SPDX-License-Identifier: GPL-2.0-only
//! The periodic and newly-idle load balancer's decisions — kernel/sched/fair.c
//! (`update_sg_lb_stats()`, `update_sd_pick_busiest()`, `calculate_imbalance()`,
//! `find_busiest_group()` / `sched_balance_find_src_group()`, `find_busiest_queue()` /
//! `sched_balance_find_src_rq()`, `can_migrate_task()` with `task_hot()`, the per-task
//! test of `detach_tasks()`, `need_active_balance()`, the ending of `load_balance()` /
//! `sched_balance_rq()` and `get_sd_balance_interval()`), as in Linux 6.1 (`fair-cfs`)
//! and 6.12 (`mainline`); they differ only in `group_smt_balance`, `sibling_imbalance()`
//! and the fully-busy tie of `update_sd_pick_busiest()`.
//!
//! The caller walks groups and CPUs (it owns the runqueues); these functions are the
//! per-step arithmetic. `env->imbalance` is a C `long`, the products `unsigned long`.
//! Not modelled: `SD_ASYM_PACKING`, `SD_NUMA`, NUMA balancing, core scheduling, cache-hot
//! buddies (the simulator keeps no `next`/`last` buddy) and `LBF_DST_PINNED` retries.

use super::lb::{group_classify, sg_avg_load, GroupType, SgLbStats};
use crate::capacity::capacity_greater;
use crate::math::SCHED_CAPACITY_SCALE;
use crate::profile::{FairClass, Profile};

/// `sysctl_sched_migration_cost`: a task that ran this recently is cache hot (ns).
pub const SYSCTL_SCHED_MIGRATION_COST_NS: u64 = 500_000;
/// `sysctl_sched_nr_migrate`: tasks `detach_tasks()` looks at per pass (`loop_max`).
pub const SYSCTL_SCHED_NR_MIGRATE: u32 = 32;
/// `SCHED_NR_MIGRATE_BREAK`: tasks looked at before the lock is dropped (`loop_break`).
pub const SCHED_NR_MIGRATE_BREAK: u32 = 32;
/// `MAX_PINNED_INTERVAL`: the all-pinned back-off cap (ms).
pub const MAX_PINNED_INTERVAL: u64 = 512;
/// `sd->busy_factor` as `sd_init()` sets it.
pub const SD_BUSY_FACTOR: u64 = 16;

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CpuIdleType {
    /// `CPU_IDLE`: the balancing CPU is idle (periodic balance of an idle CPU).
    Idle,
    /// `CPU_NOT_IDLE`: it runs something.
    NotIdle,
    /// `CPU_NEWLY_IDLE`: it is about to go idle (`sched_balance_newidle()`).
    NewlyIdle,
}

impl CpuIdleType {
    /// `env->idle != CPU_NOT_IDLE` (mainline writes `env->idle`).
    pub fn is_idle(self) -> bool {
        self != CpuIdleType::NotIdle
    }
}

/// `enum migration_type`: what `env->imbalance` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MigrationType {
    /// `migrate_load`: `task_h_load()` units.
    Load,
    /// `migrate_util`: `task_util_est()` units.
    Util,
    /// `migrate_task`: tasks.
    Task,
    /// `migrate_misfit`: one misfit task.
    Misfit,
}

/// The `struct sched_domain` fields the balancer reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LbDomain {
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sd->cache_nice_tries`: 0 for SMT, 1 for MC and PKG (`sd_init()`).
    pub cache_nice_tries: u32,
    /// `SD_SHARE_CPUCAPACITY` (SMT).
    pub share_cpucapacity: bool,
    /// `SD_SHARE_PKG_RESOURCES` (6.1) / `SD_SHARE_LLC` (mainline): SMT and MC.
    pub share_llc: bool,
    /// `SD_ASYM_CPUCAPACITY`.
    pub asym_cpucapacity: bool,
    /// `sd->nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// `sd->balance_interval` (ms).
    pub balance_interval: u64,
    /// `sd->min_interval` (ms): the span's weight.
    pub min_interval: u64,
    /// `sd->max_interval` (ms): twice the span's weight.
    pub max_interval: u64,
    /// `sd->last_balance` (jiffies).
    pub last_balance: u64,
}

impl LbDomain {
    /// `sd_init()` for a domain of `weight` CPUs.
    pub fn new(weight: u64, imbalance_pct: u32, share_cpucapacity: bool, share_llc: bool) -> Self {
        LbDomain {
            imbalance_pct,
            cache_nice_tries: if share_cpucapacity { 0 } else { 1 },
            share_cpucapacity,
            share_llc,
            asym_cpucapacity: false,
            nr_balance_failed: 0,
            balance_interval: weight,
            min_interval: weight,
            max_interval: weight.saturating_mul(2),
            last_balance: 0,
        }
    }
}

/// What `update_sg_lb_stats()` reads of one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LbCpu {
    /// `cpu_load()`: the cfs_rq's `load_avg`.
    pub load: u64,
    /// `cpu_util_cfs()`.
    pub util: u64,
    /// `cpu_runnable()`: the cfs_rq's `runnable_avg`.
    pub runnable: u64,
    /// `rq->nr_running`.
    pub nr_running: u32,
    /// `rq->cfs.h_nr_running`.
    pub h_nr_running: u32,
    /// `idle_cpu()`.
    pub idle: bool,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: u64,
    /// `capacity_of()`.
    pub capacity: u64,
}

/// The loop body of `update_sg_lb_stats()` for CPU `cpu` of a group: sums, idle CPUs and
/// (outside the local group, under `SD_ASYM_CPUCAPACITY`) the largest misfit load. The
/// reduced-capacity misfit of symmetric domains is not modelled.
pub fn update_sg_lb_stats_cpu(sgs: &mut SgLbStats, cpu: &LbCpu, local_group: bool, asym: bool) {
    sgs.group_load = sgs.group_load.wrapping_add(cpu.load);
    sgs.group_util = sgs.group_util.wrapping_add(cpu.util);
    sgs.group_runnable = sgs.group_runnable.wrapping_add(cpu.runnable);
    sgs.sum_h_nr_running = sgs.sum_h_nr_running.wrapping_add(cpu.h_nr_running);
    sgs.sum_nr_running = sgs.sum_nr_running.wrapping_add(cpu.nr_running);
    if cpu.nr_running == 0 && cpu.idle {
        sgs.idle_cpus = sgs.idle_cpus.wrapping_add(1);
        return;
    }
    if !local_group && asym && sgs.group_misfit_task_load < cpu.misfit_task_load {
        sgs.group_misfit_task_load = cpu.misfit_task_load;
    }
}

/// The end of `update_sg_lb_stats()`: the group's capacity (`sgc->capacity`) and weight,
/// its type, and `avg_load` for an overloaded group (a zero capacity, which the kernel
/// never has, leaves it 0).
pub fn update_sg_lb_stats_finish(
    sgs: &mut SgLbStats,
    group_capacity: u64,
    group_weight: u32,
    imbalance_pct: u32,
    sg_imbalanced: bool,
    profile: &Profile,
) {
    sgs.group_capacity = group_capacity;
    sgs.group_weight = group_weight;
    sgs.group_type = group_classify(imbalance_pct, sg_imbalanced, sgs, profile);
    if sgs.group_type == GroupType::Overloaded {
        sgs.avg_load = avg_load(sgs.group_load, group_capacity);
    }
}

/// `init_sd_lb_stats()`'s `busiest_stat`: no group yet (`idle_cpus = UINT_MAX`).
pub fn busiest_stat_init() -> SgLbStats {
    SgLbStats {
        idle_cpus: u32::MAX,
        ..SgLbStats::default()
    }
}

/// A group's `sgc` capacities as `update_sd_pick_busiest()` reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SgCapacity {
    /// `sg->sgc->min_capacity`.
    pub min_capacity: u64,
    /// `sg->sgc->max_capacity`.
    pub max_capacity: u64,
}

/// `update_sd_pick_busiest()`: does group `sgs` replace `busiest` as the busiest so far?
/// `dst_capacity` is `capacity_of(env->dst_cpu)`, `dst_core_idle` `env->dst_core_idle`
/// (6.1; without SMT a destination is its own core), `local_type` the local group's type.
#[allow(clippy::too_many_arguments)]
pub fn update_sd_pick_busiest(
    sd: &LbDomain,
    local_type: GroupType,
    busiest: &SgLbStats,
    sgs: &SgLbStats,
    sgc: SgCapacity,
    dst_capacity: u64,
    dst_core_idle: bool,
    profile: &Profile,
) -> bool {
    if sgs.sum_h_nr_running == 0 {
        return false;
    }
    let core_idle = match profile.fair {
        FairClass::CfsV6_1 => dst_core_idle,
        FairClass::Eevdf => true, // mainline dropped the dst_core_idle test
    };
    if sd.asym_cpucapacity
        && sgs.group_type == GroupType::MisfitTask
        && (!core_idle
            || !capacity_greater(dst_capacity, sgc.max_capacity)
            || local_type != GroupType::HasSpare)
    {
        return false;
    }
    if sgs.group_type > busiest.group_type {
        return true;
    }
    if sgs.group_type < busiest.group_type {
        return false;
    }
    match sgs.group_type {
        GroupType::Overloaded => {
            if sgs.avg_load <= busiest.avg_load {
                return false;
            }
        }
        GroupType::Imbalanced | GroupType::AsymPacking => return false,
        GroupType::SmtBalance => {
            // Mainline falls through to the has-spare rule.
            if !has_spare_busier(sgs, busiest) {
                return false;
            }
        }
        GroupType::MisfitTask => {
            if sgs.group_misfit_task_load < busiest.group_misfit_task_load {
                return false;
            }
        }
        GroupType::FullyBusy => {
            let not_busier = match profile.fair {
                FairClass::CfsV6_1 => sgs.avg_load <= busiest.avg_load,
                // Mainline keeps an equal non-SMT group (a tie prefers the later one).
                FairClass::Eevdf => {
                    sgs.avg_load < busiest.avg_load
                        || (sgs.avg_load == busiest.avg_load && sd.share_cpucapacity)
                }
            };
            if not_busier {
                return false;
            }
        }
        GroupType::HasSpare => {
            if !has_spare_busier(sgs, busiest) {
                return false;
            }
        }
    }
    // Candidate groups of CPUs with more capacity than the destination are kept only
    // when they are overloaded (`sgc->min_capacity` test).
    !(sd.asym_cpucapacity
        && sgs.group_type <= GroupType::FullyBusy
        && capacity_greater(sgc.min_capacity, dst_capacity))
}

/// The has-spare rule: fewer idle CPUs, or as many and more tasks.
fn has_spare_busier(sgs: &SgLbStats, busiest: &SgLbStats) -> bool {
    sgs.idle_cpus < busiest.idle_cpus
        || (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running > busiest.sum_nr_running)
}

/// What `update_sd_lb_stats()` gathered: the local and busiest groups and the totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdLbStats {
    /// `sds->local_stat`.
    pub local: SgLbStats,
    /// `sds->busiest_stat`; `None`: no busiest group.
    pub busiest: Option<SgLbStats>,
    /// `sds->total_load`.
    pub total_load: u64,
    /// `sds->total_capacity`.
    pub total_capacity: u64,
    /// `sds->prefer_sibling`: the child domain has `SD_PREFER_SIBLING`.
    pub prefer_sibling: bool,
    /// `sds->local->cores` and `sds->busiest->cores` (mainline's `sibling_imbalance()`).
    pub local_cores: u32,
    /// See `local_cores`.
    pub busiest_cores: u32,
}

/// `env->migration_type` and `env->imbalance` as `calculate_imbalance()` leaves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Imbalance {
    /// `env->migration_type`.
    pub migration_type: MigrationType,
    /// `env->imbalance` (a C `long`).
    pub imbalance: i64,
}

/// `sibling_imbalance()` (mainline): the task-count difference between the busiest and
/// local groups, normalised by their core counts; 0 for a busy destination.
pub fn sibling_imbalance(idle: CpuIdleType, sds: &SdLbStats, busiest: &SgLbStats) -> i64 {
    let local = &sds.local;
    if !idle.is_idle() || busiest.sum_nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (i64::from(sds.busiest_cores), i64::from(sds.local_cores));
    let (bn, ln) = (
        i64::from(busiest.sum_nr_running),
        i64::from(local.sum_nr_running),
    );
    if nb == nl {
        return lsub_positive(bn, ln);
    }
    let imb = lsub_positive(nl.wrapping_mul(bn), nb.wrapping_mul(ln));
    let imb = imb
        .wrapping_mul(2)
        .wrapping_add(nl + nb)
        .checked_div(nl + nb)
        .unwrap_or(0);
    if imb <= 1 && ln == 0 && bn > 1 {
        2
    } else {
        imb
    }
}

/// `lsub_positive()` on a `long`: subtract, stopping at 0 (the kernel compares as
/// unsigned, the same for the non-negative counts here).
fn lsub_positive(v: i64, d: i64) -> i64 {
    v.wrapping_sub(v.min(d))
}

/// `avg_load` of a group as `calculate_imbalance()` and `find_busiest_group()` compute
/// it: [`sg_avg_load`], 0 for a zero capacity the kernel never has.
fn avg_load(load: u64, capacity: u64) -> u64 {
    sg_avg_load(load, capacity).unwrap_or(0)
}

/// `calculate_imbalance()`: how much to move and in which unit, from the local group
/// and `busiest`. Mutates the local group's `avg_load` as the kernel does.
pub fn calculate_imbalance(
    sd: &LbDomain,
    idle: CpuIdleType,
    sds: &mut SdLbStats,
    busiest: &SgLbStats,
    profile: &Profile,
) -> Imbalance {
    let task = |imbalance| Imbalance {
        migration_type: MigrationType::Task,
        imbalance,
    };
    match busiest.group_type {
        GroupType::MisfitTask => {
            return if sd.asym_cpucapacity {
                Imbalance {
                    migration_type: MigrationType::Misfit,
                    imbalance: 1,
                }
            } else {
                Imbalance {
                    migration_type: MigrationType::Load,
                    imbalance: busiest.group_misfit_task_load as i64,
                }
            };
        }
        GroupType::AsymPacking => return task(i64::from(busiest.sum_h_nr_running)),
        GroupType::SmtBalance | GroupType::Imbalanced => return task(1),
        _ => {}
    }
    let local = sds.local;
    if local.group_type == GroupType::HasSpare {
        if busiest.group_type > GroupType::FullyBusy && !sd.share_llc {
            // Fill the local group's spare capacity.
            let imbalance = local.group_capacity.max(local.group_util) - local.group_util;
            if idle.is_idle() && imbalance == 0 {
                return task(1);
            }
            return Imbalance {
                migration_type: MigrationType::Util,
                imbalance: imbalance as i64,
            };
        }
        let imbalance = if busiest.group_weight == 1 || sds.prefer_sibling {
            match profile.fair {
                FairClass::CfsV6_1 => {
                    // `nr_diff` is an unsigned int.
                    i64::from(
                        busiest.sum_nr_running - busiest.sum_nr_running.min(local.sum_nr_running),
                    )
                }
                FairClass::Eevdf => sibling_imbalance(idle, sds, busiest),
            }
        } else {
            // `local->idle_cpus - busiest->idle_cpus` in unsigned int, then max_t(long, 0, ..).
            i64::from(local.idle_cpus.wrapping_sub(busiest.idle_cpus))
        };
        return task(imbalance >> 1);
    }
    // find_busiest_group() already set sds->avg_load for an overloaded local group.
    let sd_avg = avg_load(sds.total_load, sds.total_capacity);
    if local.group_type < GroupType::Overloaded {
        sds.local.avg_load = avg_load(local.group_load, local.group_capacity);
        if sds.local.avg_load >= busiest.avg_load {
            return Imbalance {
                migration_type: MigrationType::Load,
                imbalance: 0,
            };
        }
        if sds.local.avg_load >= sd_avg {
            return Imbalance {
                migration_type: MigrationType::Load,
                imbalance: 0,
            };
        }
    }
    let a = busiest
        .avg_load
        .wrapping_sub(sd_avg)
        .wrapping_mul(busiest.group_capacity);
    let b = sd_avg
        .wrapping_sub(sds.local.avg_load)
        .wrapping_mul(sds.local.group_capacity);
    Imbalance {
        migration_type: MigrationType::Load,
        imbalance: (a.min(b) / SCHED_CAPACITY_SCALE) as i64,
    }
}

/// `find_busiest_group()` (6.1) / `sched_balance_find_src_group()` (mainline) after
/// `update_sd_lb_stats()`: `None` when balanced, else the imbalance to move from the
/// busiest group. `eas_balanced`: `sched_energy_enabled()` with a perf domain and the
/// root domain not overutilized — EAS places tasks, the balancer stays out.
pub fn find_busiest_group(
    sd: &LbDomain,
    idle: CpuIdleType,
    sds: &mut SdLbStats,
    eas_balanced: bool,
    profile: &Profile,
) -> Option<Imbalance> {
    let busiest = sds.busiest?;
    let force = |sds: &mut SdLbStats| {
        let imb = calculate_imbalance(sd, idle, sds, &busiest, profile);
        (imb.imbalance != 0).then_some(imb)
    };
    if busiest.group_type == GroupType::MisfitTask {
        return force(sds);
    }
    if eas_balanced {
        return None;
    }
    if matches!(
        busiest.group_type,
        GroupType::AsymPacking | GroupType::Imbalanced
    ) {
        return force(sds);
    }
    let local = sds.local;
    if local.group_type > busiest.group_type {
        return None;
    }
    if local.group_type == GroupType::Overloaded {
        if local.avg_load >= busiest.avg_load {
            return None;
        }
        let sd_avg = avg_load(sds.total_load, sds.total_capacity);
        if local.avg_load >= sd_avg {
            return None;
        }
        if busiest.avg_load.wrapping_mul(100)
            <= u64::from(sd.imbalance_pct).wrapping_mul(local.avg_load)
        {
            return None;
        }
    }
    if sds.prefer_sibling && local.group_type == GroupType::HasSpare {
        let spread = match profile.fair {
            FairClass::CfsV6_1 => busiest.sum_nr_running > local.sum_nr_running.saturating_add(1),
            FairClass::Eevdf => sibling_imbalance(idle, sds, &busiest) > 1,
        };
        if spread {
            return force(sds);
        }
    }
    if busiest.group_type != GroupType::Overloaded {
        if !idle.is_idle() {
            return None;
        }
        // Mainline's smt_vs_nonsmt_groups() force is not modelled (no SMT flags on groups).
        if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus.saturating_add(1) {
            return None;
        }
        if busiest.sum_h_nr_running == 1 {
            return None;
        }
    }
    force(sds)
}

/// One candidate runqueue of `find_busiest_queue()` (6.1) /
/// `sched_balance_find_src_rq()` (mainline).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FbqCandidate {
    /// `cpu_load()`.
    pub load: u64,
    /// `cpu_util_cfs()`.
    pub util: u64,
    /// `rq->cfs.h_nr_running`.
    pub h_nr_running: u32,
    /// `capacity_of()`.
    pub capacity: u64,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: u64,
    /// `check_cpu_capacity()`: irq/rt pressure took more than `imbalance_pct` of it.
    pub reduced_capacity: bool,
}

/// `find_busiest_queue()`'s running choice (`busiest_load`, `busiest_capacity`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FbqState {
    load: u64,
    capacity: u64,
    util: u64,
    nr: u32,
}

impl Default for FbqState {
    fn default() -> Self {
        FbqState {
            load: 0,
            capacity: 1,
            util: 0,
            nr: 0,
        }
    }
}

/// The loop body of `find_busiest_queue()`: is `rq` the busiest so far (updating
/// `st`)? Candidates go in CPU order; the first of equals wins.
pub fn find_busiest_queue_step(
    sd: &LbDomain,
    imb: &Imbalance,
    dst_capacity: u64,
    rq: &FbqCandidate,
    st: &mut FbqState,
) -> bool {
    let nr = rq.h_nr_running;
    if nr == 0 {
        return false;
    }
    if sd.asym_cpucapacity && !capacity_greater(dst_capacity, rq.capacity) && nr == 1 {
        return false;
    }
    match imb.migration_type {
        MigrationType::Load => {
            let imbalance = imb.imbalance as u64; // compared as unsigned long
            if nr == 1 && rq.load > imbalance && !rq.reduced_capacity {
                return false;
            }
            if rq.load.wrapping_mul(st.capacity) > st.load.wrapping_mul(rq.capacity) {
                st.load = rq.load;
                st.capacity = rq.capacity;
                return true;
            }
        }
        MigrationType::Util => {
            if nr > 1 && st.util < rq.util {
                st.util = rq.util;
                return true;
            }
        }
        MigrationType::Task => {
            if st.nr < nr {
                st.nr = nr;
                return true;
            }
        }
        MigrationType::Misfit => {
            if rq.misfit_task_load > st.load {
                st.load = rq.misfit_task_load;
                return true;
            }
        }
    }
    false
}

/// `task_hot()`: a fair, non-SCHED_IDLE task that ran within
/// `sysctl_sched_migration_cost` of the source's `rq_clock_task()` (`since_ran`: that
/// clock minus `se.exec_start`, signed), outside SMT domains.
pub fn task_hot(sd: &LbDomain, fair: bool, idle_policy: bool, since_ran: i64) -> bool {
    if !fair || idle_policy || sd.share_cpucapacity {
        return false;
    }
    since_ran < SYSCTL_SCHED_MIGRATION_COST_NS as i64
}

/// The tail of `can_migrate_task()` for an allowed task not running on the source: an
/// active balance takes any, otherwise a cache-hot one only after `cache_nice_tries`
/// failed balances.
pub fn can_migrate_hot(sd: &LbDomain, active: bool, hot: bool) -> bool {
    active || !hot || sd.nr_balance_failed > sd.cache_nice_tries
}

/// `shr_bound()`: a right shift that saturates at the type's width minus one.
pub fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(u64::BITS - 1)
}

/// The `switch (env->migration_type)` of `detach_tasks()` for one migratable task:
/// takes the task (reducing `imb.imbalance`) or skips it. `load` is `task_h_load()`,
/// `util` `task_util_est()`, `fits_src` `task_fits_cpu(p, env->src_cpu)`; `LB_MIN` is
/// off in both kernels.
pub fn detach_task_take(
    sd: &LbDomain,
    imb: &mut Imbalance,
    load: u64,
    util: u64,
    fits_src: bool,
) -> bool {
    let over = |v: u64, imbalance: i64| shr_bound(v, sd.nr_balance_failed) > imbalance as u64;
    match imb.migration_type {
        MigrationType::Load => {
            let load = load.max(1);
            if over(load, imb.imbalance) {
                return false;
            }
            imb.imbalance = imb.imbalance.wrapping_sub(load as i64);
        }
        MigrationType::Util => {
            if over(util, imb.imbalance) {
                return false;
            }
            imb.imbalance = imb.imbalance.wrapping_sub(util as i64);
        }
        MigrationType::Task => imb.imbalance = imb.imbalance.wrapping_sub(1),
        MigrationType::Misfit => {
            if fits_src {
                return false;
            }
            imb.imbalance = 0;
        }
    }
    true
}

/// `need_active_balance()`: push the source's running task when the balance kept
/// failing on a task-count imbalance, when an idle destination has clearly more capacity
/// than a source with one task whose capacity pressure shows, or for a misfit.
pub fn need_active_balance(
    sd: &LbDomain,
    idle: CpuIdleType,
    imb: &Imbalance,
    src_h_nr_running: u32,
    src_reduced_capacity: bool,
    src_capacity: u64,
    dst_capacity: u64,
) -> bool {
    if imb.migration_type == MigrationType::Task
        && sd.nr_balance_failed > sd.cache_nice_tries.saturating_add(2)
    {
        return true;
    }
    if idle.is_idle()
        && src_h_nr_running == 1
        && src_reduced_capacity
        && src_capacity.wrapping_mul(u64::from(sd.imbalance_pct)) < dst_capacity.wrapping_mul(100)
    {
        return true;
    }
    imb.migration_type == MigrationType::Misfit
}

/// How a `load_balance()` call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbOutcome {
    /// `out_balanced` / `out_all_pinned`: nothing to do.
    Balanced,
    /// Tasks moved (`ld_moved > 0`).
    Moved,
    /// Unbalanced but nothing moved; `active`: an active balance was started,
    /// `need_active`: `need_active_balance()` said so.
    Failed {
        /// An active balance was kicked.
        active: bool,
        /// `need_active_balance()` (re-evaluated at the end, after the failure count).
        need_active: bool,
    },
    /// `out_one_pinned`: the source's running task may not run on the destination.
    OnePinned,
}

/// The bookkeeping at the end of `load_balance()`: `nr_balance_failed` (counted only by
/// periodic balances, cleared by success or balance) and `balance_interval` (back to
/// `min_interval` after an imbalance, doubled up to `max_interval` when balanced).
pub fn load_balance_finish(sd: &mut LbDomain, idle: CpuIdleType, outcome: LbOutcome) {
    match outcome {
        LbOutcome::Moved => {
            sd.nr_balance_failed = 0;
            sd.balance_interval = sd.min_interval;
        }
        LbOutcome::Failed {
            active,
            need_active,
        } => {
            if !active || need_active {
                sd.balance_interval = sd.min_interval;
            }
        }
        LbOutcome::Balanced | LbOutcome::OnePinned => {
            if outcome == LbOutcome::Balanced {
                sd.nr_balance_failed = 0;
            }
            if idle != CpuIdleType::NewlyIdle && sd.balance_interval < sd.max_interval {
                sd.balance_interval = sd.balance_interval.wrapping_mul(2);
            }
        }
    }
}

/// The failure count `load_balance()` adds before asking `need_active_balance()`.
pub fn load_balance_failed(sd: &mut LbDomain, idle: CpuIdleType) {
    if idle != CpuIdleType::NewlyIdle {
        sd.nr_balance_failed = sd.nr_balance_failed.wrapping_add(1);
    }
}

/// `msecs_to_jiffies()` at `hz` (jiffies per second), rounding up as the kernel's
/// `_msecs_to_jiffies()` does (exact for HZ dividing or divided by 1000).
pub fn msecs_to_jiffies(m: u64, hz: u64) -> u64 {
    match 1000u64.checked_div(hz) {
        None => 0,
        Some(per) if per != 0 && per.wrapping_mul(hz) == 1000 => {
            m.saturating_add(per - 1).checked_div(per).unwrap_or(0)
        }
        _ if hz.is_multiple_of(1000) => m.saturating_mul(hz / 1000),
        _ => m.saturating_mul(hz).saturating_add(999) / 1000,
    }
}

/// `max_load_balance_interval`: `HZ * num_online_cpus() / 10` jiffies
/// (`init_sched_fair_class()`).
pub fn max_load_balance_interval(hz: u64, cpus: u64) -> u64 {
    hz.saturating_mul(cpus) / 10
}

/// `get_sd_balance_interval()`: the domain's interval in jiffies, `busy_factor` times
/// longer (less one jiffy) on a busy CPU, clamped to `[1, max_interval_jiffies]`.
pub fn get_sd_balance_interval(sd: &LbDomain, cpu_busy: bool, hz: u64, max_jiffies: u64) -> u64 {
    let mut interval = sd.balance_interval;
    if cpu_busy {
        interval = interval.wrapping_mul(SD_BUSY_FACTOR);
    }
    let mut j = msecs_to_jiffies(interval, hz);
    if cpu_busy {
        j = j.wrapping_sub(1);
    }
    j.max(1).min(max_jiffies.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mc() -> LbDomain {
        LbDomain::new(2, 117, false, true)
    }

    fn cpu(load: u64, nr: u32) -> LbCpu {
        LbCpu {
            load,
            util: if nr > 0 { 1020 } else { 0 },
            runnable: load,
            nr_running: nr,
            h_nr_running: nr,
            idle: nr == 0,
            misfit_task_load: 0,
            capacity: 1024,
        }
    }

    fn group(c: &LbCpu, local: bool, p: &Profile) -> SgLbStats {
        let mut s = SgLbStats::default();
        update_sg_lb_stats_cpu(&mut s, c, local, false);
        update_sg_lb_stats_finish(&mut s, c.capacity, 1, 117, false, p);
        s
    }

    /// 5 hogs on 2 CPUs (load_avg 1002 each): the 2-task CPU pulls one at the third try.
    #[test]
    fn oversubscribed_three_two_split_moves_one_hog_after_failures() {
        for p in [Profile::MAINLINE, Profile::from_name("fair-cfs").unwrap()] {
            let sd = mc();
            let local = group(&cpu(2004, 2), true, &p);
            let busiest = group(&cpu(3006, 3), false, &p);
            assert_eq!(local.group_type, GroupType::Overloaded);
            assert_eq!((local.avg_load, busiest.avg_load), (2004, 3006));
            let b0 = busiest_stat_init();
            let sgc = SgCapacity {
                min_capacity: 1024,
                max_capacity: 1024,
            };
            assert!(update_sd_pick_busiest(
                &sd,
                local.group_type,
                &b0,
                &busiest,
                sgc,
                1024,
                true,
                &p
            ));
            let mut sds = SdLbStats {
                local,
                busiest: Some(busiest),
                total_load: 5010,
                total_capacity: 2048,
                prefer_sibling: false,
                local_cores: 1,
                busiest_cores: 1,
            };
            // sds avg 5010 * 1024 / 2048 = 2505: min(501, 501) * 1024 / 1024 = 501.
            let imb = find_busiest_group(&sd, CpuIdleType::NotIdle, &mut sds, false, &p).unwrap();
            assert_eq!(
                imb,
                Imbalance {
                    migration_type: MigrationType::Load,
                    imbalance: 501
                }
            );
            // The busiest (3006 > 2004) is the source.
            let mut st = FbqState::default();
            let rq = FbqCandidate {
                load: 3006,
                h_nr_running: 3,
                capacity: 1024,
                ..Default::default()
            };
            assert!(find_busiest_queue_step(&sd, &imb, 1024, &rq, &mut st));
            // Failed 0: 1002 > 501 skips; failed 1: 501 > 501 does not: take.
            let mut sd1 = sd;
            let mut i = imb;
            assert!(!detach_task_take(&sd1, &mut i, 1002, 0, true));
            load_balance_failed(&mut sd1, CpuIdleType::NotIdle);
            assert!(detach_task_take(&sd1, &mut i, 1002, 0, true));
            assert_eq!(i.imbalance, -501);
            // A hot task waits until nr_balance_failed > cache_nice_tries (1).
            assert!(task_hot(&sd1, true, false, 499_999));
            assert!(!task_hot(&sd1, true, false, 500_000));
            assert!(!can_migrate_hot(&sd1, false, true));
            load_balance_failed(&mut sd1, CpuIdleType::NotIdle);
            assert!(can_migrate_hot(&sd1, false, true));
            // EAS without overutilization: balanced.
            assert_eq!(
                find_busiest_group(&sd, CpuIdleType::NotIdle, &mut sds, true, &p),
                None
            );
            // The busier CPU does not pull from the lighter one.
            let mut rev = SdLbStats {
                local: busiest,
                busiest: Some(local),
                ..sds
            };
            assert_eq!(
                find_busiest_group(&sd, CpuIdleType::NotIdle, &mut rev, false, &p),
                None
            );
        }
    }

    #[test]
    fn overloaded_within_imbalance_pct_is_balanced() {
        let p = Profile::MAINLINE;
        let sd = mc();
        // 100 * 2300 = 230000 <= 117 * 2000 = 234000.
        let mut l = SgLbStats {
            group_type: GroupType::Overloaded,
            avg_load: 2000,
            ..Default::default()
        };
        l.group_capacity = 1024;
        let b = SgLbStats {
            group_type: GroupType::Overloaded,
            avg_load: 2300,
            group_capacity: 1024,
            ..Default::default()
        };
        let mut sds = SdLbStats {
            local: l,
            busiest: Some(b),
            total_load: 4300,
            total_capacity: 2048,
            prefer_sibling: false,
            local_cores: 1,
            busiest_cores: 1,
        };
        assert_eq!(
            find_busiest_group(&sd, CpuIdleType::NotIdle, &mut sds, false, &p),
            None
        );
    }

    #[test]
    fn idle_destination_takes_half_the_task_difference() {
        let cfs = Profile::from_name("fair-cfs").unwrap();
        let m = Profile::MAINLINE;
        let sd = mc();
        let local = group(&cpu(0, 0), true, &m);
        let busiest = group(&cpu(2004, 2), false, &m);
        assert_eq!(local.group_type, GroupType::HasSpare);
        assert_eq!(local.idle_cpus, 1);
        let mut sds = SdLbStats {
            local,
            busiest: Some(busiest),
            total_load: 2004,
            total_capacity: 2048,
            prefer_sibling: false,
            local_cores: 1,
            busiest_cores: 1,
        };
        for p in [&cfs, &m] {
            let imb = find_busiest_group(&sd, CpuIdleType::NewlyIdle, &mut sds, false, p).unwrap();
            // Group weight 1: (2 - 0) >> 1 = 1 task.
            assert_eq!(
                imb,
                Imbalance {
                    migration_type: MigrationType::Task,
                    imbalance: 1
                }
            );
        }
        // Outside the LLC an overloaded busiest fills the local spare capacity.
        let pkg = LbDomain::new(4, 117, false, false);
        let imb = calculate_imbalance(&pkg, CpuIdleType::Idle, &mut sds, &busiest, &m);
        assert_eq!(
            imb,
            Imbalance {
                migration_type: MigrationType::Util,
                imbalance: 1024
            }
        );
        // Mainline's sibling_imbalance with 2 local cores and 1 busiest core:
        // (2*3 - 0) -> (2*6 + 3) / 3 = 5.
        let s = SdLbStats {
            local_cores: 2,
            busiest_cores: 1,
            ..sds
        };
        let b3 = SgLbStats {
            sum_nr_running: 3,
            ..busiest
        };
        assert_eq!(sibling_imbalance(CpuIdleType::Idle, &s, &b3), 5);
        assert_eq!(sibling_imbalance(CpuIdleType::NotIdle, &s, &b3), 0);
    }

    #[test]
    fn active_balance_after_cache_nice_tries_plus_two_task_failures() {
        let imb = |migration_type| Imbalance {
            migration_type,
            imbalance: 1,
        };
        let (t, l, m) = (
            imb(MigrationType::Task),
            imb(MigrationType::Load),
            imb(MigrationType::Misfit),
        );
        let busy = CpuIdleType::NotIdle;
        // (failures, idle, imbalance, src h_nr_running, reduced, src cap) -> need
        let cases = [
            (3, busy, t, 2, false, 1024, false),
            (4, busy, t, 2, false, 1024, true),
            (4, busy, l, 2, false, 1024, false),
            // Reduced source capacity: 800 * 117 = 93600 < 1024 * 100.
            (4, CpuIdleType::Idle, l, 1, true, 800, true),
            (4, CpuIdleType::Idle, l, 1, true, 900, false),
            (0, busy, m, 1, false, 1024, true),
        ];
        for (failed, idle, imb, nr, reduced, cap, need) in cases {
            let mut sd = mc();
            sd.nr_balance_failed = failed;
            assert_eq!(
                need_active_balance(&sd, idle, &imb, nr, reduced, cap, 1024),
                need,
                "{failed} {imb:?} {cap}"
            );
        }
    }

    #[test]
    fn balance_interval_backs_off_and_resets() {
        let mut sd = mc();
        assert_eq!((sd.balance_interval, sd.max_interval), (2, 4));
        // HZ 250: busy 2 ms * 16 = 32 ms = 8 jiffies, less one: 7; idle ceil(2/4) = 1.
        assert_eq!(get_sd_balance_interval(&sd, true, 250, 50), 7);
        assert_eq!(get_sd_balance_interval(&sd, false, 250, 50), 1);
        assert_eq!(get_sd_balance_interval(&sd, true, 1000, 200), 31);
        assert_eq!(get_sd_balance_interval(&sd, true, 1000, 20), 20);
        load_balance_finish(&mut sd, CpuIdleType::NotIdle, LbOutcome::Balanced);
        assert_eq!(sd.balance_interval, 4);
        load_balance_finish(&mut sd, CpuIdleType::NotIdle, LbOutcome::Balanced);
        assert_eq!(sd.balance_interval, 4);
        sd.nr_balance_failed = 2;
        load_balance_finish(
            &mut sd,
            CpuIdleType::NotIdle,
            LbOutcome::Failed {
                active: false,
                need_active: false,
            },
        );
        assert_eq!((sd.balance_interval, sd.nr_balance_failed), (2, 2));
        load_balance_finish(&mut sd, CpuIdleType::NotIdle, LbOutcome::Moved);
        assert_eq!(sd.nr_balance_failed, 0);
        // Newly idle never backs off nor counts failures.
        load_balance_finish(&mut sd, CpuIdleType::NewlyIdle, LbOutcome::Balanced);
        assert_eq!(sd.balance_interval, 2);
        load_balance_failed(&mut sd, CpuIdleType::NewlyIdle);
        assert_eq!(sd.nr_balance_failed, 0);
        assert_eq!(msecs_to_jiffies(1, 250), 1);
        assert_eq!(msecs_to_jiffies(5, 300), 2);
        assert_eq!(max_load_balance_interval(250, 2), 50);
        assert_eq!(shr_bound(1002, 70), 0);
    }
}
