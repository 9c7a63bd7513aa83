// SPDX-License-Identifier: GPL-2.0-only
//! The slow wake-up path for fork balancing — `sched_balance_find_dst_cpu()`,
//! `sched_balance_find_dst_group()`, `sched_balance_find_dst_group_cpu()` (once
//! `find_idlest_cpu()`, `find_idlest_group()`, `find_idlest_group_cpu()`) and
//! `update_sg_wakeup_stats()` (kernel/sched/fair.c).
//!
//! From the highest domain of the forking CPU down: per level pick the idlest group (group
//! type, then idle CPUs / utilization / load with the local group's imbalance margins of
//! [`super::lb`]) and its idlest CPU, then continue in that CPU's next lower level. The
//! domains are read through [`SchedDomainTopology`], implemented by the caller. Every
//! level has `SD_BALANCE_FORK`; no `SD_NUMA`, no core scheduling cookies.
//!
//! Fork only: the task is on no runqueue, so the `_without()` helpers
//! (`cpu_load_without()`, `cpu_util_without()`, `cpu_runnable_without()`,
//! `task_running_on_cpu()`) leave every CPU as is. Group capacities are the callers'
//! current `capacity_of()` sums (the kernel's `sgc` values are the last load balance's),
//! and no group is `sg_imbalanced()`.

use super::lb::{self, GroupType, SgLbStats};
use super::wake::{cpumask_test_cpu, WakeCpu, WakeTask};
use crate::capacity::{cpu_util_cfs, util_fits_cpu};
use crate::profile::{Profile, SchedIdleSelect};

/// A CPU's sched domains, bottom-up (`for_each_domain()` order), as the slow path reads
/// them. Spans and groups are sorted CPU lists.
pub trait SchedDomainTopology {
    /// How many levels `cpu` has (0: none).
    fn nr_levels(&self, cpu: usize) -> usize;
    /// `sched_domain_span()` of `cpu`'s domain at `level` (empty past the top).
    fn span(&self, cpu: usize, level: usize) -> &[usize];
    /// The `i`-th group of that domain in `sd->groups` list order (the owner's first);
    /// `None` past the last.
    fn group(&self, cpu: usize, level: usize, i: usize) -> Option<&[usize]>;
    /// `sd->imbalance_pct`.
    fn imbalance_pct(&self, cpu: usize, level: usize) -> u32;
    /// `sd->flags & SD_ASYM_CPUCAPACITY`.
    fn asym_cpucapacity(&self, cpu: usize, level: usize) -> bool;
}

/// `update_sg_wakeup_stats()`'s result: `struct sg_lb_stats` (the fields the wake-up path
/// fills) and the group's `sgc->max_capacity`, which the misfit comparisons read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgWakeupStats {
    /// `group_load` = Σ `cpu_load()`, `group_util` = Σ `cpu_util_cfs()`, `group_runnable`
    /// = Σ `runnable_avg`, `sum_nr_running` = Σ `rq->nr_running`, `idle_cpus`,
    /// `group_capacity` = Σ `capacity_of()`, `group_weight`, `group_misfit_task_load`,
    /// `group_type`, and `avg_load` for fully busy and overloaded groups only.
    pub sgs: SgLbStats,
    /// `sgc->max_capacity`: max `capacity_of()`.
    pub max_capacity: u64,
}

/// `update_sg_wakeup_stats()` of `group` in a domain with `imbalance_pct` and
/// `asym_cpucapacity`: sums over every CPU of the group, allowed or not; on an asymmetric
/// domain the group is misfit (`group_misfit_task_load` 1) unless the task fits one of its
/// CPUs (`task_fits_cpu()`, strictly). Sums wrap; `avg_load` of a zero capacity (the
/// kernel keeps capacities at least 1) is `u64::MAX`.
pub fn update_sg_wakeup_stats(
    cpus: &[WakeCpu],
    imbalance_pct: u32,
    asym_cpucapacity: bool,
    group: &[usize],
    p: &WakeTask,
    uclamp_used: bool,
) -> SgWakeupStats {
    let mut sgs = SgLbStats {
        group_weight: u32::try_from(group.len()).unwrap_or(u32::MAX),
        group_misfit_task_load: u64::from(asym_cpucapacity),
        ..SgLbStats::default()
    };
    let mut max_capacity = 0;
    let util = p.task_util_est();
    for &i in group {
        let Some(v) = cpus.get(i) else { continue };
        sgs.group_load = sgs.group_load.wrapping_add(v.load);
        sgs.group_util = sgs.group_util.wrapping_add(cpu_util_cfs(&v.util));
        sgs.group_runnable = sgs.group_runnable.wrapping_add(v.util.cfs.runnable_avg);
        sgs.sum_nr_running = sgs.sum_nr_running.wrapping_add(v.nr_running);
        if v.nr_running == 0 {
            sgs.idle_cpus = sgs.idle_cpus.wrapping_add(1);
        }
        if asym_cpucapacity
            && sgs.group_misfit_task_load != 0
            && util_fits_cpu(util, p.uclamp_min, p.uclamp_max, uclamp_used, &v.capacity) > 0
        {
            sgs.group_misfit_task_load = 0;
        }
        sgs.group_capacity = sgs.group_capacity.wrapping_add(v.capacity.cpu_capacity);
        max_capacity = max_capacity.max(v.capacity.cpu_capacity);
    }
    // No sg_imbalanced() and no asym packing / SMT balance flags on this path, so the
    // profile's fair class makes no difference.
    sgs.group_type = lb::group_classify(imbalance_pct, false, &sgs, &Profile::MAINLINE);
    if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
        sgs.avg_load = lb::sg_avg_load(sgs.group_load, sgs.group_capacity).unwrap_or(u64::MAX);
    }
    SgWakeupStats { sgs, max_capacity }
}

/// `sched_balance_find_dst_group()`: the idlest group of `this_cpu`'s domain at `level`
/// that holds an allowed CPU, other than the local one (holding `this_cpu`); `None` when
/// there is none or the local group wins ([`lb::find_dst_group_stays_local`]).
pub fn sched_balance_find_dst_group<'t, T: SchedDomainTopology>(
    cpus: &[WakeCpu],
    topo: &'t T,
    this_cpu: usize,
    level: usize,
    p: &WakeTask,
    uclamp_used: bool,
) -> Option<&'t [usize]> {
    let imbalance_pct = topo.imbalance_pct(this_cpu, level);
    let asym = topo.asym_cpucapacity(this_cpu, level);
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
    let mut i = 0;
    while let Some(group) = topo.group(this_cpu, level, i) {
        i += 1;
        if !group.iter().any(|&c| p.allowed_on(c)) {
            continue;
        }
        let sgs = update_sg_wakeup_stats(cpus, imbalance_pct, asym, group, p, uclamp_used);
        if cpumask_test_cpu(this_cpu, group) {
            local_sgs = Some(sgs);
        } else if lb::update_pick_idlest(
            &idlest_sgs.sgs,
            idlest_sgs.max_capacity,
            &sgs.sgs,
            sgs.max_capacity,
        ) {
            idlest = Some(group);
            idlest_sgs = sgs;
        }
    }
    let idlest = idlest?;
    let Some(local) = local_sgs else {
        return Some(idlest);
    };
    let stay = lb::find_dst_group_stays_local(
        imbalance_pct,
        &local.sgs,
        local.max_capacity,
        &idlest_sgs.sgs,
        idlest_sgs.max_capacity,
    );
    (!stay).then_some(idlest)
}

/// `sched_balance_find_dst_group_cpu()`: a single-CPU group's CPU; otherwise, over the
/// group's allowed CPUs, a SCHED_IDLE-only CPU at once (profile `sched_idle_select` base;
/// `sis-idle-first` drops that line), then the idle CPU in the shallowest cpuidle state
/// (most recently idle among equals; one outside any state only on a later stamp), else
/// the least loaded busy CPU by `cpu_load()` (first on ties), else `this_cpu`.
///
/// Trap: `rq->idle_stamp` must be strictly later to replace a candidate, so of CPUs idle
/// since the same instant in the same state the first in scan order wins.
pub fn sched_balance_find_dst_group_cpu(
    cpus: &[WakeCpu],
    group: &[usize],
    allowed: &[usize],
    this_cpu: usize,
    sel: SchedIdleSelect,
) -> usize {
    if let [only] = group {
        return *only;
    }
    let sched_idle_first = match sel {
        SchedIdleSelect::SchedIdleAsIdle => true,
        SchedIdleSelect::IdleFirst => false,
    };
    let (mut min_load, mut least_loaded_cpu) = (u64::MAX, this_cpu);
    let (mut min_exit_latency, mut latest_idle_timestamp) = (u64::MAX, 0u64);
    let mut shallowest_idle_cpu: Option<usize> = None;
    for &i in group.iter().filter(|&&i| cpumask_test_cpu(i, allowed)) {
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

/// `sched_balance_find_dst_cpu()` for `SD_BALANCE_FORK` from `this_cpu` (= the new task's
/// `prev_cpu`): `prev_cpu` when the top domain holds no allowed CPU; otherwise from the
/// top level down, the idlest group and its idlest CPU; when that CPU is another one,
/// continue in its highest domain narrower than the level searched, else one level lower
/// on the same CPU. `this_cpu` with no domains.
pub fn sched_balance_find_dst_cpu<T: SchedDomainTopology>(
    cpus: &[WakeCpu],
    topo: &T,
    p: &WakeTask,
    this_cpu: usize,
    sel: SchedIdleSelect,
    uclamp_used: bool,
) -> usize {
    let mut cpu = this_cpu;
    let mut new_cpu = cpu;
    let mut level = topo.nr_levels(cpu).checked_sub(1);
    if let Some(top) = level {
        if !topo.span(cpu, top).iter().any(|&c| p.allowed_on(c)) {
            return this_cpu;
        }
    }
    while let Some(l) = level {
        let Some(group) = sched_balance_find_dst_group(cpus, topo, cpu, l, p, uclamp_used) else {
            level = l.checked_sub(1);
            continue;
        };
        new_cpu = sched_balance_find_dst_group_cpu(cpus, group, p.allowed, cpu, sel);
        if new_cpu == cpu {
            level = l.checked_sub(1);
            continue;
        }
        let weight = topo.span(cpu, l).len();
        cpu = new_cpu;
        level = (0..topo.nr_levels(cpu))
            .take_while(|&k| topo.span(cpu, k).len() < weight)
            .count()
            .checked_sub(1);
    }
    new_cpu
}

#[cfg(test)]
mod tests {
    use super::super::wake::test_views::{cpu, task};
    use super::*;

    const BASE: SchedIdleSelect = SchedIdleSelect::SchedIdleAsIdle;
    const PATCH: SchedIdleSelect = SchedIdleSelect::IdleFirst;

    fn idle_in(exit_latency: u64, idle_stamp: u64) -> WakeCpu {
        WakeCpu {
            exit_latency: Some(exit_latency),
            idle_stamp,
            ..cpu(true, false, 0)
        }
    }

    fn busy(util: u64, load: u64) -> WakeCpu {
        let mut v = cpu(false, false, load);
        v.util.cfs.util_avg = util;
        v
    }

    /// A fixed topology: per CPU, levels of (span, groups).
    /// One domain level: its span and groups.
    type Level<'a> = (&'a [usize], &'a [&'a [usize]]);

    struct Topo<'a>(&'a [&'a [Level<'a>]]);

    impl SchedDomainTopology for Topo<'_> {
        fn nr_levels(&self, cpu: usize) -> usize {
            self.0.get(cpu).map_or(0, |l| l.len())
        }
        fn span(&self, cpu: usize, level: usize) -> &[usize] {
            self.0
                .get(cpu)
                .and_then(|l| l.get(level))
                .map_or(&[], |d| d.0)
        }
        fn group(&self, cpu: usize, level: usize, i: usize) -> Option<&[usize]> {
            self.0.get(cpu)?.get(level)?.1.get(i).copied()
        }
        fn imbalance_pct(&self, _: usize, _: usize) -> u32 {
            117
        }
        fn asym_cpucapacity(&self, _: usize, _: usize) -> bool {
            false
        }
    }

    const ALL: [usize; 4] = [0, 1, 2, 3];
    /// Two clusters {0,1} and {2,3} under a PKG domain, single CPUs below.
    const TWO: Topo = Topo(&[
        &[(&[0, 1], &[&[0], &[1]]), (&ALL, &[&[0, 1], &[2, 3]])],
        &[(&[0, 1], &[&[1], &[0]]), (&ALL, &[&[0, 1], &[2, 3]])],
        &[(&[2, 3], &[&[2], &[3]]), (&ALL, &[&[2, 3], &[0, 1]])],
        &[(&[2, 3], &[&[3], &[2]]), (&ALL, &[&[2, 3], &[0, 1]])],
    ]);

    #[test]
    fn group_cpu_sched_idle_first_only_in_base() {
        // CPU 0 busy, CPU 1 only SCHED_IDLE (load 3), CPU 2 truly idle.
        let cpus = [busy(0, 1024), cpu(false, true, 3), idle_in(1, 5)];
        let all = [0, 1, 2];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &all, 0, BASE),
            1
        );
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &all, 0, PATCH),
            2
        );
        // No idle CPU: the least loaded, the SCHED_IDLE one by its load.
        let no_idle = [cpus[0], busy(0, 700), cpus[1]];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&no_idle, &all, &all, 0, PATCH),
            2
        );
        // Only allowed CPUs count; a single-CPU group is returned as is.
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &all, &[0, 2], 0, BASE),
            2
        );
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &[0], &[2], 1, BASE),
            0
        );
    }

    #[test]
    fn group_cpu_shallowest_state_then_strictly_later_stamp() {
        let cpus = [
            idle_in(1, 10),
            idle_in(200, 50),
            idle_in(1, 30),
            idle_in(1, 30),
        ];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &ALL, &ALL, 0, PATCH),
            2
        );
        assert_eq!(
            sched_balance_find_dst_group_cpu(&cpus, &[3, 2], &[2, 3], 0, PATCH),
            3
        );
        let mixed = [busy(0, 1), idle_in(200, 1)];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&mixed, &[0, 1], &[0, 1], 0, BASE),
            1
        );
        // Outside any state with stamp 0: never "shallowest"; none busy: this_cpu.
        let plain = [cpu(true, false, 0), cpu(true, false, 0)];
        assert_eq!(
            sched_balance_find_dst_group_cpu(&plain, &[0, 1], &[0, 1], 1, BASE),
            1
        );
    }

    #[test]
    fn wakeup_stats_misfit_and_avg_load() {
        let cpus = [busy(1000, 1000), busy(1000, 600)];
        let p = task(0, &ALL);
        let s = update_sg_wakeup_stats(&cpus, 117, false, &[0, 1], &p, false);
        // 2 tasks on 2 CPUs, util 2000 * 117 > 2048 * 100: no capacity left: fully busy,
        // avg_load 1600 * 1024 / 2048 = 800.
        assert_eq!(s.sgs.group_type, GroupType::FullyBusy);
        assert_eq!(
            (s.sgs.avg_load, s.sgs.group_util, s.max_capacity),
            (800, 2000, 1024)
        );
        // Asymmetric: a task of util 900 fits no 1024 CPU (900 * 1280 >= 1024 * 1024).
        let big = task(900, &ALL);
        let s = update_sg_wakeup_stats(&[cpu(true, false, 0)], 117, true, &[0], &big, false);
        assert_eq!(
            (s.sgs.group_misfit_task_load, s.sgs.group_type),
            (1, GroupType::MisfitTask)
        );
        let s = update_sg_wakeup_stats(&[cpu(true, false, 0)], 117, true, &[0], &p, false);
        assert_eq!((s.sgs.group_misfit_task_load, s.sgs.idle_cpus), (0, 1));
    }

    #[test]
    fn find_dst_group_local_rules() {
        let p = task(0, &ALL);
        let idle = cpu(true, false, 0);
        // One idle CPU on each side: stay local.
        let cpus = [busy(500, 500), idle, busy(100, 100), idle];
        assert_eq!(
            sched_balance_find_dst_group(&cpus, &TWO, 0, 1, &p, false),
            None
        );
        let cpus = [busy(500, 500), idle, idle, idle];
        assert_eq!(
            sched_balance_find_dst_group(&cpus, &TWO, 0, 1, &p, false),
            Some(&[2usize, 3][..])
        );
        // Both fully busy: local avg 1000, remote 826 leaves (826 < 1000 + 174 but
        // 100000 > 117 * 826); remote 855 stays (100000 <= 100035).
        let cpus = [
            busy(1000, 1000),
            busy(1000, 1000),
            busy(1000, 826),
            busy(1000, 826),
        ];
        assert!(sched_balance_find_dst_group(&cpus, &TWO, 0, 1, &p, false).is_some());
        let cpus = [
            busy(1000, 1000),
            busy(1000, 1000),
            busy(1000, 855),
            busy(1000, 855),
        ];
        assert_eq!(
            sched_balance_find_dst_group(&cpus, &TWO, 0, 1, &p, false),
            None
        );
        // Local group not allowed: the idlest remote one.
        let q = task(0, &[2, 3]);
        assert!(sched_balance_find_dst_group(&cpus, &TWO, 0, 1, &q, false).is_some());
    }

    #[test]
    fn fork_walk_descends_into_the_chosen_cpu() {
        let p = task(0, &ALL);
        // CPU 0 busy, 1 SCHED_IDLE only, 2 busy, 3 idle: PKG sees 0 vs 1 idle CPUs, goes
        // to {2,3}; CPU 3 under both profiles.
        let cpus = [
            busy(1024, 1024),
            cpu(false, true, 3),
            busy(1024, 1024),
            idle_in(1, 5),
        ];
        for sel in [BASE, PATCH] {
            assert_eq!(
                sched_balance_find_dst_cpu(&cpus, &TWO, &p, 0, sel, false),
                3
            );
        }
        // No domains: this_cpu. No allowed CPU in the top span: this_cpu.
        let none = Topo(&[]);
        assert_eq!(
            sched_balance_find_dst_cpu(&cpus, &none, &p, 2, BASE, false),
            2
        );
        let q = task(0, &[7]);
        assert_eq!(
            sched_balance_find_dst_cpu(&cpus, &TWO, &q, 1, BASE, false),
            1
        );
    }
}
