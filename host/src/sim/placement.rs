// SPDX-License-Identifier: GPL-2.0-only
//! Wake-up CPU selection — the ideas of `select_task_rq_fair()` (kernel/sched/fair.c).
//!
//! * Not overutilized, EAS on: [`find_energy_efficient_cpu`]: per performance domain the
//!   allowed CPU with the most spare capacity that fits the task (and the previous CPU),
//!   each estimated with `compute_energy()` (the core's `effective_cpu_util`,
//!   `sugov_effective_cpu_perf` and `em_cpu_energy`); the lowest energy delta wins, the
//!   previous CPU on ties.
//! * Otherwise [`select_idle_cpu`] (the fast path, `select_idle_sibling()`): the
//!   previous CPU when idle and fitting; on asymmetric capacities `select_idle_capacity()`
//!   (first idle CPU that fits from the previous one, else the idle CPU with the largest
//!   capacity); on symmetric ones the first idle CPU from the previous one; else the
//!   previous CPU. "Idle" is `available_idle_cpu() || sched_idle_cpu()` under every
//!   profile: a CPU running only SCHED_IDLE work is as good as an idle one.
//! * First activation (fork, `SD_BALANCE_FORK`): [`sched_balance_find_dst_cpu`], the
//!   slow path, walking the platform's sched domains ([`super::domains`]) from the top:
//!   per level [`sched_balance_find_dst_group`] (group type from
//!   [`update_sg_wakeup_stats`], then idle CPUs / utilization or load, with the local
//!   group's imbalance margins) and [`sched_balance_find_dst_group_cpu`] in that group,
//!   then down into the chosen CPU's next level. The group CPU scan is the one point where
//!   the `sched_idle_select` profiles differ (VARIANTS.md §3): base returns the first CPU
//!   running only SCHED_IDLE work at once; `sis-idle-first` drops that special case, so
//!   a truly idle CPU (shallowest idle state, most recently idle on ties) wins and a
//!   SCHED_IDLE-only CPU competes only by its `cpu_load()` with the busy ones. The scan
//!   runs only in groups of more than one CPU (a single-CPU group is returned as is), and
//!   the group step counts a SCHED_IDLE-only CPU as busy (`nr_running` > 0, not in
//!   `idle_cpus`): on a platform whose only level has single-CPU groups (orion-o6) the
//!   profiles place forks alike.
//!
//! Simplifications: no sync wake-ups, no wake_affine, one LLC for the fast path; the fork
//! walk's group capacities (`sgc->capacity`, `max_capacity`) are the current
//! `capacity_of()` sums rather than the last load balance's, and no group is ever
//! `group_imbalanced` (no affinity-driven balancing state); the task's clamps are
//! applied only on the destination CPU's estimate. Mainline since v7.0
//! (commit fd54d81c2c0e, "sched/fair: Skip SCHED_IDLE rq for SCHED_IDLE task") no longer
//! takes a SCHED_IDLE-only CPU for a task that is itself SCHED_IDLE; the model keeps the
//! earlier rule for every task.

use super::domains::{SchedDomain, SchedDomains};
use schedmath::capacity::{
    cpu_util, effective_cpu_util, get_actual_cpu_capacity, util_fits_cpu, CpuCapacity, CpuUtilRq,
    EffectiveUtilInput, TaskUtil,
};
use schedmath::energy::{em_cpu_energy, EmPerfDomain};
use schedmath::fair::lb::{self, GroupType, SgLbStats};
use schedmath::pelt::SchedAvg;
use schedmath::profile::{Profile, SchedIdleSelect};
use schedmath::schedutil::sugov_effective_cpu_perf;
use schedmath::util_est::{task_util_est, UtilEst};

/// What selection reads about one CPU.
#[derive(Debug, Clone, Copy)]
pub struct CpuView {
    /// cpu_util() inputs.
    pub util: CpuUtilRq,
    /// Capacities.
    pub capacity: CpuCapacity,
    /// `cpu_util_rt()`.
    pub util_rt: u64,
    /// `cpu_util_irq()`.
    pub util_irq: u64,
    /// `rq->uclamp[MIN/MAX].value`.
    pub uclamp_min: u64,
    /// See `uclamp_min`.
    pub uclamp_max: u64,
    /// `available_idle_cpu()`: nothing runnable.
    pub idle: bool,
    /// `sched_idle_cpu()`: only SCHED_IDLE tasks runnable.
    pub sched_idle: bool,
    /// `idle_get_state(rq)->exit_latency` (ns) while the CPU sits in a cpuidle state.
    pub exit_latency: Option<u64>,
    /// `rq->idle_stamp`: when the CPU last went idle (ns).
    pub idle_stamp: u64,
    /// `cpu_load()`: `rq->cfs.avg.load_avg`.
    pub load: u64,
    /// `rq->nr_running` (every class).
    pub nr_running: u32,
}

/// The task being placed.
#[derive(Debug, Clone, Copy)]
pub struct TaskView<'a> {
    /// Its signals and CPU.
    pub util: TaskUtil,
    /// `uclamp_eff_value(p, MIN/MAX)`.
    pub uclamp_min: u64,
    /// See `uclamp_min`.
    pub uclamp_max: u64,
    /// Allowed CPUs (sorted).
    pub allowed: &'a [usize],
}

impl TaskView<'_> {
    fn util_est(&self) -> u64 {
        // The engine passes `_task_util_est()` of the task's layout as a mainline estimate.
        task_util_est(&SchedAvg {
            util_avg: self.util.util_avg,
            util_est: UtilEst::Mainline(self.util.util_est),
            ..SchedAvg::default()
        })
    }
}

/// One EM performance domain.
#[derive(Debug, Clone, Copy)]
pub struct PerfDomain<'a> {
    /// Its CPUs.
    pub cpus: &'a [usize],
    /// Its EM table.
    pub em: &'a EmPerfDomain,
}

/// `compute_energy()` of `pd` with the task on `dst` (`None`: nowhere, the base):
/// `em_cpu_energy(pd, max_util, busy_time, cpu_cap)` where busy_time sums the
/// effective utilizations without the task (plus the task's when `dst` is in the domain)
/// and max_util is the largest performance request with the task placed.
pub fn compute_energy(
    cpus: &[CpuView],
    pd: &PerfDomain,
    p: &TaskView,
    dst: Option<usize>,
    uclamp_used: bool,
) -> u64 {
    let dst_i = dst.map_or(-1, |d| d as i32);
    let mut busy_time = 0u64;
    let mut max_util = 0u64;
    let mut pd_cap = 0u64;
    for &c in pd.cpus {
        let Some(v) = cpus.get(c) else { continue };
        let cap = v.capacity.capacity_orig;
        pd_cap += cap;
        let eff = |util_cfs: u64, clamp_task: bool| {
            let (mut umin, mut umax) = (v.uclamp_min, v.uclamp_max);
            if clamp_task {
                umin = umin.max(p.uclamp_min);
                umax = umax.max(p.uclamp_max);
            }
            effective_cpu_util(&EffectiveUtilInput {
                capacity: cap,
                util_cfs,
                util_rt: v.util_rt,
                util_irq: v.util_irq,
                uclamp_used,
                uclamp_min: umin,
                uclamp_max: umax,
                ..Default::default()
            })
        };
        busy_time += eff(cpu_util(&v.util, Some(&p.util), -1, false), false).ret;
        let e = eff(
            cpu_util(&v.util, Some(&p.util), dst_i, true),
            uclamp_used && dst == Some(c),
        );
        max_util = max_util.max(sugov_effective_cpu_perf(e.ret, e.min, e.max));
    }
    if dst.is_some_and(|d| pd.cpus.contains(&d)) {
        busy_time = (busy_time + p.util_est()).min(pd_cap);
    } else {
        busy_time = busy_time.min(pd_cap);
    }
    let cpu_cap = pd
        .cpus
        .first()
        .and_then(|&c| cpus.get(c))
        .map_or(0, |v| get_actual_cpu_capacity(&v.capacity));
    em_cpu_energy(pd.em, max_util.min(cpu_cap), busy_time, cpu_cap).energy
}

/// `find_energy_efficient_cpu()`; `None` when the task has no utilization (the kernel
/// falls back to the idle search) or nothing fits.
pub fn find_energy_efficient_cpu(
    cpus: &[CpuView],
    pds: &[PerfDomain],
    p: &TaskView,
    prev: usize,
    uclamp_used: bool,
) -> Option<usize> {
    if p.util_est() == 0 && p.uclamp_min == 0 {
        return None;
    }
    let mut best: Option<(u64, usize)> = None;
    let mut prev_delta: Option<u64> = None;
    for pd in pds {
        let mut max_spare: Option<(u64, usize)> = None;
        let mut prev_fits = false;
        for &c in pd.cpus.iter().filter(|c| p.allowed.contains(c)) {
            let Some(v) = cpus.get(c) else { continue };
            let util = cpu_util(&v.util, Some(&p.util), c as i32, false);
            let (umin, umax) = if uclamp_used {
                (
                    v.uclamp_min.max(p.uclamp_min),
                    v.uclamp_max.max(p.uclamp_max),
                )
            } else {
                (0, 1024)
            };
            if util_fits_cpu(util, umin, umax, uclamp_used, &v.capacity) == 0 {
                continue;
            }
            let spare = v.capacity.cpu_capacity.saturating_sub(util);
            if c == prev {
                prev_fits = true;
            } else if max_spare.is_none_or(|(s, _)| spare > s) {
                max_spare = Some((spare, c));
            }
        }
        if max_spare.is_none() && !prev_fits {
            continue;
        }
        let base = compute_energy(cpus, pd, p, None, uclamp_used);
        if prev_fits {
            let e = compute_energy(cpus, pd, p, Some(prev), uclamp_used);
            prev_delta = Some(e.saturating_sub(base));
        }
        if let Some((_, c)) = max_spare {
            let delta = compute_energy(cpus, pd, p, Some(c), uclamp_used).saturating_sub(base);
            if best.is_none_or(|(d, _)| delta < d) {
                best = Some((delta, c));
            }
        }
    }
    match (best, prev_delta) {
        (Some((d, c)), Some(pd)) if d < pd => Some(c),
        (_, Some(_)) => Some(prev),
        (Some((_, c)), None) => Some(c),
        (None, None) => None,
    }
}

/// Allowed CPUs starting at `from`, wrapping (`for_each_cpu_wrap`).
fn wrap_from<'a>(allowed: &'a [usize], from: usize) -> impl Iterator<Item = usize> + 'a {
    let split = allowed.partition_point(|&c| c < from);
    allowed[split..].iter().chain(&allowed[..split]).copied()
}

/// The fast path: previous CPU if idle and fitting, else `select_idle_capacity()` (asym)
/// or the first idle CPU, else the previous CPU (or the first allowed one). A CPU running
/// only SCHED_IDLE tasks counts as idle (`available_idle_cpu() || sched_idle_cpu()`).
pub fn select_idle_cpu(
    cpus: &[CpuView],
    p: &TaskView,
    prev: usize,
    asym: bool,
    uclamp_used: bool,
) -> usize {
    let fallback = if p.allowed.contains(&prev) {
        prev
    } else {
        p.allowed.first().copied().unwrap_or(prev)
    };
    search_idle_cpu(cpus, p, prev, asym, uclamp_used, &|v| {
        v.idle || v.sched_idle
    })
    .unwrap_or(fallback)
}

/// One idle search with `idle` as the idle test: `None` when no allowed CPU passes it.
fn search_idle_cpu(
    cpus: &[CpuView],
    p: &TaskView,
    prev: usize,
    asym: bool,
    uclamp_used: bool,
    idle: &dyn Fn(&CpuView) -> bool,
) -> Option<usize> {
    let util = p.util_est();
    let fits = |c: usize| {
        cpus.get(c).map_or(0, |v| {
            util_fits_cpu(util, p.uclamp_min, p.uclamp_max, uclamp_used, &v.capacity)
        })
    };
    let idle = |c: usize| cpus.get(c).is_some_and(idle);
    if p.allowed.contains(&prev) && idle(prev) && (!asym || fits(prev) > 0) {
        return Some(prev);
    }
    if asym {
        let mut best: Option<(u64, usize)> = None;
        for c in wrap_from(p.allowed, prev).filter(|&c| idle(c)) {
            let f = fits(c);
            if f > 0 {
                return Some(c);
            }
            let Some(v) = cpus.get(c) else { continue };
            let cap = if f < 0 {
                get_actual_cpu_capacity(&v.capacity)
            } else {
                v.capacity.cpu_capacity
            };
            if best.is_none_or(|(b, _)| cap > b) {
                best = Some((cap, c));
            }
        }
        return best.map(|(_, c)| c);
    }
    wrap_from(p.allowed, prev).find(|&c| idle(c))
}

/// `sched_balance_find_dst_group_cpu()` (was `find_idlest_group_cpu()`) in `group`: a
/// single-CPU group is returned as is; otherwise, over its allowed CPUs, base returns the
/// first SCHED_IDLE-only CPU at once; then the idle CPU in the shallowest idle state (the
/// most recently idle among equals, and a CPU outside any cpuidle state only on a later
/// idle stamp), else the least loaded CPU by `cpu_load()` (first on ties), else
/// `this_cpu`.
///
/// Trap: `rq->idle_stamp` must be strictly later to replace a candidate, so of CPUs idle
/// since the same instant in the same state the first in scan order wins.
pub fn sched_balance_find_dst_group_cpu(
    cpus: &[CpuView],
    group: &[usize],
    allowed: &[usize],
    this_cpu: usize,
    sel: SchedIdleSelect,
) -> usize {
    if let [only] = group {
        return *only;
    }
    // v6.x mainline returns a SCHED_IDLE-only CPU before looking at idle ones; the
    // sis-idle-first patch takes that line out of the slow path.
    let sched_idle_first = match sel {
        SchedIdleSelect::SchedIdleAsIdle => true,
        SchedIdleSelect::IdleFirst => false,
    };
    let (mut min_load, mut least_loaded_cpu) = (u64::MAX, this_cpu);
    let (mut min_exit_latency, mut latest_idle_timestamp) = (u64::MAX, 0u64);
    let mut shallowest_idle_cpu: Option<usize> = None;
    for &i in group.iter().filter(|i| allowed.contains(i)) {
        let Some(v) = cpus.get(i) else { continue };
        if sched_idle_first && v.sched_idle {
            return i;
        }
        if v.idle {
            match v.exit_latency {
                Some(lat) if lat < min_exit_latency => {
                    min_exit_latency = lat;
                    latest_idle_timestamp = v.idle_stamp;
                    shallowest_idle_cpu = Some(i);
                }
                lat if (lat.is_none() || lat == Some(min_exit_latency))
                    && v.idle_stamp > latest_idle_timestamp =>
                {
                    latest_idle_timestamp = v.idle_stamp;
                    shallowest_idle_cpu = Some(i);
                }
                _ => {}
            }
        } else if shallowest_idle_cpu.is_none() && v.load < min_load {
            min_load = v.load;
            least_loaded_cpu = i;
        }
    }
    shallowest_idle_cpu.unwrap_or(least_loaded_cpu)
}

/// `update_sg_wakeup_stats()`'s result: the core's `struct sg_lb_stats` (only the fields
/// the wake-up path fills) and the group's `sgc->max_capacity`, which the misfit
/// comparisons read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SgWakeupStats {
    /// `group_load` = Σ `cpu_load_without()`, `group_util` = Σ `cpu_util_without()`,
    /// `group_runnable` = Σ `cpu_runnable_without()`, `sum_nr_running` = Σ
    /// `rq->nr_running` (every class), `idle_cpus` (nothing runnable), `group_capacity` =
    /// Σ `capacity_of()`, `group_weight`, `group_misfit_task_load` (1 when the task fits
    /// no CPU of an asymmetric domain's group), `group_type`, and `avg_load` for fully
    /// busy and overloaded groups only.
    pub sgs: SgLbStats,
    /// `sgc->max_capacity`: max `capacity_of()`.
    pub max_capacity: u64,
}

/// `group_classify()` as the wake-up path calls it: no `sg_imbalanced()` and the asym
/// packing and SMT balance flags clear, so the profile's fair class makes no difference.
fn group_classify(imbalance_pct: u32, sgs: &SgLbStats) -> GroupType {
    lb::group_classify(imbalance_pct, false, sgs, &Profile::MAINLINE)
}

/// `update_sg_wakeup_stats()` for a task not yet on any runqueue (fork: the `_without`
/// helpers leave every CPU as is): sums over every CPU of `group`, allowed or not, and
/// on an asymmetric domain marks the group misfit unless the task fits one of its CPUs
/// (`task_fits_cpu()`).
pub fn update_sg_wakeup_stats(
    cpus: &[CpuView],
    sd: &SchedDomain,
    group: &[usize],
    p: &TaskView,
    uclamp_used: bool,
) -> SgWakeupStats {
    let mut sgs = SgLbStats {
        group_weight: u32::try_from(group.len()).unwrap_or(u32::MAX),
        group_misfit_task_load: u64::from(sd.asym_cpucapacity),
        ..SgLbStats::default()
    };
    let mut max_capacity = 0;
    let util = p.util_est();
    for &i in group {
        let Some(v) = cpus.get(i) else { continue };
        sgs.group_load = sgs.group_load.wrapping_add(v.load);
        sgs.group_util = sgs
            .group_util
            .wrapping_add(cpu_util(&v.util, None, -1, false));
        sgs.group_runnable = sgs.group_runnable.wrapping_add(v.util.cfs.runnable_avg);
        sgs.sum_nr_running = sgs.sum_nr_running.wrapping_add(v.nr_running);
        if v.nr_running == 0 {
            sgs.idle_cpus += 1;
        }
        if sd.asym_cpucapacity
            && sgs.group_misfit_task_load != 0
            && util_fits_cpu(util, p.uclamp_min, p.uclamp_max, uclamp_used, &v.capacity) > 0
        {
            sgs.group_misfit_task_load = 0;
        }
        sgs.group_capacity = sgs.group_capacity.wrapping_add(v.capacity.cpu_capacity);
        max_capacity = max_capacity.max(v.capacity.cpu_capacity);
    }
    sgs.group_type = group_classify(sd.imbalance_pct, &sgs);
    if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
        // A zero capacity cannot happen (capacity_of() is at least 1).
        sgs.avg_load = lb::sg_avg_load(sgs.group_load, sgs.group_capacity).unwrap_or(u64::MAX);
    }
    SgWakeupStats { sgs, max_capacity }
}

/// `update_pick_idlest()` (the core's) on two groups' stats.
fn update_pick_idlest(idlest: &SgWakeupStats, sgs: &SgWakeupStats) -> bool {
    lb::update_pick_idlest(&idlest.sgs, idlest.max_capacity, &sgs.sgs, sgs.max_capacity)
}

/// `sched_balance_find_dst_group()` (was `find_idlest_group()`): the idlest non-local
/// group of `sd` with an allowed CPU, or `None` to stay in the local group (the one
/// holding `this_cpu`) when the core's [`lb::find_dst_group_stays_local`] says so.
pub fn sched_balance_find_dst_group<'a>(
    cpus: &[CpuView],
    sd: &'a SchedDomain,
    p: &TaskView,
    this_cpu: usize,
    uclamp_used: bool,
) -> Option<&'a [usize]> {
    let mut idlest: Option<&[usize]> = None;
    let mut idlest_sgs = SgWakeupStats {
        sgs: SgLbStats {
            group_type: GroupType::Overloaded,
            avg_load: u64::from(u32::MAX),
            ..SgLbStats::default()
        },
        max_capacity: 0,
    };
    let mut local_sgs = None;
    for group in &sd.groups {
        if !group.iter().any(|c| p.allowed.contains(c)) {
            continue;
        }
        let sgs = update_sg_wakeup_stats(cpus, sd, group, p, uclamp_used);
        if group.contains(&this_cpu) {
            local_sgs = Some(sgs);
        } else if update_pick_idlest(&idlest_sgs, &sgs) {
            idlest = Some(group);
            idlest_sgs = sgs;
        }
    }
    let idlest = idlest?;
    let Some(local) = local_sgs else {
        return Some(idlest);
    };
    let stay = lb::find_dst_group_stays_local(
        sd.imbalance_pct,
        &local.sgs,
        local.max_capacity,
        &idlest_sgs.sgs,
        idlest_sgs.max_capacity,
    );
    (!stay).then_some(idlest)
}

/// `sched_balance_find_dst_cpu()` (was `find_idlest_cpu()`) for fork balancing: from
/// `this_cpu`'s top domain down, pick the idlest group and its idlest CPU; when that CPU
/// is another one, continue in its domain just below the level searched, else in the
/// level below on the same CPU. Every level has `SD_BALANCE_FORK`.
pub fn sched_balance_find_dst_cpu(
    cpus: &[CpuView],
    domains: &SchedDomains,
    p: &TaskView,
    this_cpu: usize,
    sel: SchedIdleSelect,
    uclamp_used: bool,
) -> usize {
    let mut cpu = this_cpu;
    let mut new_cpu = cpu;
    let mut level = domains.of_cpu(cpu).len().checked_sub(1);
    while let Some(l) = level {
        let Some(sd) = domains.of_cpu(cpu).get(l) else {
            break;
        };
        let Some(group) = sched_balance_find_dst_group(cpus, sd, p, cpu, uclamp_used) else {
            level = l.checked_sub(1);
            continue;
        };
        new_cpu = sched_balance_find_dst_group_cpu(cpus, group, p.allowed, cpu, sel);
        if new_cpu == cpu {
            level = l.checked_sub(1);
            continue;
        }
        cpu = new_cpu;
        let weight = sd.span.len();
        level = domains
            .of_cpu(cpu)
            .iter()
            .take_while(|d| d.span.len() < weight)
            .count()
            .checked_sub(1);
    }
    new_cpu
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(idle: bool, sched_idle: bool, load: u64) -> CpuView {
        let cap = CpuCapacity {
            capacity_orig: 1024,
            cpu_capacity: 1024,
            ..Default::default()
        };
        CpuView {
            util: CpuUtilRq::default(),
            capacity: cap,
            util_rt: 0,
            util_irq: 0,
            uclamp_min: 0,
            uclamp_max: 1024,
            idle,
            sched_idle,
            exit_latency: None,
            idle_stamp: 0,
            load,
            nr_running: u32::from(!idle),
        }
    }

    fn idle_in(exit_latency: u64, idle_stamp: u64) -> CpuView {
        CpuView {
            exit_latency: Some(exit_latency),
            idle_stamp,
            ..view(true, false, 0)
        }
    }

    /// A task with no utilization and no clamps, allowed on `allowed`.
    fn task(allowed: &[usize]) -> TaskView<'_> {
        TaskView {
            util: TaskUtil::default(),
            uclamp_min: 0,
            uclamp_max: 1024,
            allowed,
        }
    }

    const BASE: SchedIdleSelect = SchedIdleSelect::SchedIdleAsIdle;
    const PATCH: SchedIdleSelect = SchedIdleSelect::IdleFirst;

    #[test]
    fn fast_path_takes_sched_idle_prev_under_both_profiles() {
        // CPU 1 (prev) runs only SCHED_IDLE tasks, CPU 2 is idle, CPUs 0 and 3 are busy.
        let cpus = [
            view(false, false, 1024),
            view(false, true, 3),
            view(true, false, 0),
            view(false, false, 2048),
        ];
        let allowed = [0, 1, 2, 3];
        let p = task(&allowed);
        for asym in [false, true] {
            assert_eq!(select_idle_cpu(&cpus, &p, 1, asym, false), 1, "asym {asym}");
        }
        // From busy prev 3 the scan wraps to 0 (busy), then 1 (SCHED_IDLE only).
        assert_eq!(select_idle_cpu(&cpus, &p, 3, false, false), 1);
        // Nothing idle of either kind: the previous CPU.
        let busy = [cpus[0], cpus[0], cpus[0], cpus[3]];
        assert_eq!(select_idle_cpu(&busy, &p, 3, false, false), 3);
    }

    #[test]
    fn slow_path_sched_idle_cpu_returned_by_base_skipped_by_patch() {
        // CPU 0 busy, CPU 1 only SCHED_IDLE (load 3), CPU 2 truly idle.
        let cpus = [
            view(false, false, 1024),
            view(false, true, 3),
            idle_in(1, 5),
        ];
        let all = [0, 1, 2];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &all, 0, BASE),
            1
        );
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &all, 0, PATCH),
            2
        );
        // No idle CPU: the patch takes the least loaded, the SCHED_IDLE one by its load.
        let no_idle = [cpus[0], view(false, false, 700), cpus[1]];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&no_idle, &all, &all, 0, PATCH),
            2
        );
        // Only allowed CPUs count.
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &[0, 2], 0, BASE),
            2
        );
    }

    #[test]
    fn slow_path_shallowest_state_then_latest_idle_stamp() {
        // Deeper state (exit 200) vs shallow (exit 1): shallow wins wherever it sits.
        let cpus = [
            idle_in(1, 10),
            idle_in(200, 50),
            idle_in(1, 30),
            idle_in(1, 30),
        ];
        let all = [0, 1, 2, 3];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &all, 0, PATCH),
            2
        );
        // Same state and same stamp: the first in scan order stays (strictly later only).
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &[3, 2], &[2, 3], 0, PATCH),
            3
        );
        // Idle CPUs win over any busy one however light; the busy one is never counted
        // once an idle CPU was seen.
        let mixed = [view(false, false, 1), idle_in(200, 1)];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&mixed, &[0, 1], &[0, 1], 0, BASE),
            1
        );
    }

    #[test]
    fn slow_path_idle_stamp_must_be_strictly_later() {
        // Outside any cpuidle state (no exit latency), a zero stamp never beats the start
        // value: nothing is "shallowest" and the least loaded (none busy) is this_cpu.
        let cpus = [view(true, false, 0), view(true, false, 0)];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &[0, 1], &[0, 1], 1, BASE),
            1
        );
        let stamped = [
            view(true, false, 0),
            CpuView {
                idle_stamp: 7,
                ..cpus[1]
            },
        ];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&stamped, &[0, 1], &[0, 1], 0, BASE),
            1
        );
    }

    /// Two clusters {0,1} and {2,3} under a PKG domain of CPU 0, single CPUs below.
    fn two_clusters() -> SchedDomains {
        let dom = |name, span: Vec<usize>, groups: Vec<Vec<usize>>| SchedDomain {
            name,
            span,
            groups,
            imbalance_pct: 117,
            asym_cpucapacity: false,
        };
        let mc = |c: usize, o: usize| dom("MC", vec![c.min(o), c.max(o)], vec![vec![c], vec![o]]);
        let pkg =
            |own: Vec<usize>, other: Vec<usize>| dom("PKG", vec![0, 1, 2, 3], vec![own, other]);
        SchedDomains {
            per_cpu: vec![
                vec![mc(0, 1), pkg(vec![0, 1], vec![2, 3])],
                vec![mc(1, 0), pkg(vec![0, 1], vec![2, 3])],
                vec![mc(2, 3), pkg(vec![2, 3], vec![0, 1])],
                vec![mc(3, 2), pkg(vec![2, 3], vec![0, 1])],
            ],
        }
    }

    fn busy(util: u64, load: u64) -> CpuView {
        let mut v = view(false, false, load);
        v.util.cfs.util_avg = util;
        v.util.capacity_orig = 1024;
        v
    }

    #[test]
    fn find_dst_group_local_rules() {
        let d = two_clusters();
        let allowed = [0, 1, 2, 3];
        let p = task(&allowed);
        let pkg = &d.per_cpu[0][1];
        // One idle CPU on each side: the local group stays (idle_cpus not fewer).
        let cpus = [
            busy(500, 500),
            view(true, false, 0),
            busy(100, 100),
            view(true, false, 0),
        ];
        assert_eq!(sched_balance_find_dst_group(&cpus, pkg, &p, 0, false), None);
        // Remote has two idle CPUs: go there.
        let cpus = [
            busy(500, 500),
            view(true, false, 0),
            view(true, false, 0),
            view(true, false, 0),
        ];
        assert_eq!(
            sched_balance_find_dst_group(&cpus, pkg, &p, 0, false),
            Some(&[2usize, 3][..])
        );
        // Both fully busy: avg_load = load * 1024 / 2048; imbalance 1024 * 17 / 100 = 174.
        // Local 2000 (avg 1000), remote 1652 (avg 826): 826 < 1174 and 100000 > 117 * 826.
        let fb = |l0, l1| [busy(1000, l0), busy(1000, l1)];
        let [a, b] = fb(1000, 1000);
        let [c, e] = fb(826, 826);
        let cpus = [a, b, c, e];
        assert_eq!(
            sched_balance_find_dst_group(&cpus, pkg, &p, 0, false),
            Some(&[2usize, 3][..])
        );
        // Remote avg 855: 100000 <= 117 * 855 = 100035, within the margin: stay.
        let [c, e] = fb(855, 855);
        let cpus = [a, b, c, e];
        assert_eq!(sched_balance_find_dst_group(&cpus, pkg, &p, 0, false), None);
        // Local group not allowed: the idlest remote group, whatever the local one is.
        let only_remote = TaskView {
            allowed: &[2, 3],
            ..p
        };
        assert_eq!(
            sched_balance_find_dst_group(&cpus, pkg, &only_remote, 0, false),
            Some(&[2usize, 3][..])
        );
    }

    #[test]
    fn fork_walk_counts_sched_idle_cpus_as_busy_at_group_level() {
        // CPU 0 busy, CPU 1 only SCHED_IDLE, CPU 2 busy, CPU 3 idle. The PKG step sees
        // idle_cpus 0 locally and 1 remotely, so both profiles go to {2,3} and take CPU 3;
        // the SCHED_IDLE shortcut never sees CPU 1.
        let d = two_clusters();
        let allowed = [0, 1, 2, 3];
        let p = task(&allowed);
        let cpus = [
            busy(1024, 1024),
            view(false, true, 3),
            busy(1024, 1024),
            idle_in(1, 5),
        ];
        for sel in [BASE, PATCH] {
            assert_eq!(sched_balance_find_dst_cpu(&cpus, &d, &p, 0, sel, false), 3);
        }
        // With CPU 3 busy too, {2,3} is fully busy (2048 * 100 <= 2048 * 117) and the local
        // {0,1} has spare (util 1027): stay. CPU 0's MC step: CPU 0 alone is fully busy,
        // CPU 1 (util 3) has spare: CPU 1, a single-CPU group, under both profiles.
        let mut cpus2 = cpus;
        cpus2[3] = busy(1024, 1024);
        cpus2[1].util.cfs.util_avg = 3;
        cpus2[1].util.capacity_orig = 1024;
        for sel in [BASE, PATCH] {
            assert_eq!(sched_balance_find_dst_cpu(&cpus2, &d, &p, 0, sel, false), 1);
        }
    }

    #[test]
    fn fork_walk_profile_switch_inside_a_multi_cpu_group() {
        // One domain {0,1,2} whose only groups are CPU 0 and the pair {1,2}: in the pair,
        // base takes SCHED_IDLE-only CPU 1, the patch the truly idle CPU 2.
        let d = SchedDomains {
            per_cpu: vec![vec![SchedDomain {
                name: "MC",
                span: vec![0, 1, 2],
                groups: vec![vec![0], vec![1, 2]],
                imbalance_pct: 117,
                asym_cpucapacity: false,
            }]],
        };
        let allowed = [0, 1, 2];
        let p = task(&allowed);
        let cpus = [busy(1024, 1024), view(false, true, 3), idle_in(1, 5)];
        assert_eq!(sched_balance_find_dst_cpu(&cpus, &d, &p, 0, BASE, false), 1);
        assert_eq!(
            sched_balance_find_dst_cpu(&cpus, &d, &p, 0, PATCH, false),
            2
        );
    }

    #[test]
    fn wrap_starts_at_prev() {
        let a = [0, 1, 2, 3];
        assert_eq!(wrap_from(&a, 2).collect::<Vec<_>>(), vec![2, 3, 0, 1]);
        assert_eq!(wrap_from(&a, 9).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }
}
