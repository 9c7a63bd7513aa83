// SPDX-License-Identifier: GPL-2.0-only
//! Wake-up CPU selection — the ideas of `select_task_rq_fair()` (kernel/sched/fair.c).
//!
//! * Not overutilized, EAS on: [`find_energy_efficient_cpu`]: per performance domain the
//!   allowed CPU with the most spare capacity that fits the task (and the previous CPU),
//!   each estimated with `compute_energy()` (the core's `effective_cpu_util`,
//!   `sugov_effective_cpu_perf` and `em_cpu_energy`); the lowest energy delta wins, the
//!   previous CPU on ties.
//! * Otherwise [`select_idle_cpu`]: the previous CPU when idle and fitting; on asymmetric
//!   capacities `select_idle_capacity()` (first idle CPU that fits from the previous one,
//!   else the idle CPU with the largest capacity); on symmetric ones the first idle CPU
//!   from the previous one; else the previous CPU. What "idle" means is the one point
//!   where the `sched_idle_select` profiles differ (VARIANTS.md §3): base takes a CPU
//!   running only SCHED_IDLE tasks (`sched_idle_cpu()`) as good as an idle one; the
//!   `sis-idle-first` patch searches truly idle CPUs first and falls back to SCHED_IDLE
//!   CPUs only when none is idle.
//! * First activation (fork): [`find_idlest_cpu`], the allowed CPU with the fewest
//!   runnable tasks (lowest number on ties), as the slow path does without EAS.
//!
//! Simplifications: no sync wake-ups, no wake_affine, no LLC domains (all CPUs share one),
//! the task's clamps are applied only on the destination CPU's estimate; the patch's
//! "least loaded" preference among SCHED_IDLE CPUs is the first one in scan order (they
//! all run only weight-3 tasks a waking fair task preempts).

use schedmath::capacity::{
    cpu_util, effective_cpu_util, get_actual_cpu_capacity, task_util_est, util_fits_cpu,
    CpuCapacity, CpuUtilRq, EffectiveUtilInput, TaskUtil,
};
use schedmath::energy::{em_cpu_energy, EmPerfDomain};
use schedmath::profile::SchedIdleSelect;
use schedmath::schedutil::sugov_effective_cpu_perf;

/// What selection reads about one CPU.
#[derive(Debug, Clone, Copy)]
pub struct CpuView {
    /// cpu_util() inputs.
    pub util: CpuUtilRq,
    /// Capacities.
    pub capacity: CpuCapacity,
    /// `cpu_util_rt()`.
    pub util_rt: u64,
    /// `rq->uclamp[MIN/MAX].value`.
    pub uclamp_min: u64,
    /// See `uclamp_min`.
    pub uclamp_max: u64,
    /// `available_idle_cpu()`: nothing runnable.
    pub idle: bool,
    /// `sched_idle_cpu()`: only SCHED_IDLE tasks runnable.
    pub sched_idle: bool,
    /// `nr_running`.
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
        task_util_est(self.util.util_avg, self.util.util_est)
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
/// or the first idle CPU, else the previous CPU (or the first allowed one). `sel` says
/// whether a SCHED_IDLE-only CPU counts as idle (base) or only after every truly idle
/// one (`sis-idle-first`).
pub fn select_idle_cpu(
    cpus: &[CpuView],
    p: &TaskView,
    prev: usize,
    asym: bool,
    uclamp_used: bool,
    sel: SchedIdleSelect,
) -> usize {
    let fallback = if p.allowed.contains(&prev) {
        prev
    } else {
        p.allowed.first().copied().unwrap_or(prev)
    };
    let search =
        |pred: &dyn Fn(&CpuView) -> bool| search_idle_cpu(cpus, p, prev, asym, uclamp_used, pred);
    let found = match sel {
        SchedIdleSelect::SchedIdleAsIdle => search(&|v| v.idle || v.sched_idle),
        SchedIdleSelect::IdleFirst => search(&|v| v.idle).or_else(|| search(&|v| v.sched_idle)),
    };
    found.unwrap_or(fallback)
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

/// The fork path: fewest runnable tasks, lowest CPU number on ties.
pub fn find_idlest_cpu(cpus: &[CpuView], allowed: &[usize]) -> Option<usize> {
    allowed
        .iter()
        .copied()
        .filter(|&c| c < cpus.len())
        .min_by_key(|&c| (cpus[c].nr_running, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(idle: bool, sched_idle: bool, nr_running: u32) -> CpuView {
        let cap = CpuCapacity {
            capacity_orig: 1024,
            cpu_capacity: 1024,
            ..Default::default()
        };
        CpuView {
            util: CpuUtilRq::default(),
            capacity: cap,
            util_rt: 0,
            uclamp_min: 0,
            uclamp_max: 1024,
            idle,
            sched_idle,
            nr_running,
        }
    }

    #[test]
    fn sched_idle_prev_kept_by_base_left_by_idle_first() {
        // CPU 1 (prev) runs only SCHED_IDLE tasks, CPU 2 is idle, CPUs 0 and 3 are busy.
        let cpus = [
            view(false, false, 1),
            view(false, true, 1),
            view(true, false, 0),
            view(false, false, 2),
        ];
        let allowed = [0, 1, 2, 3];
        let p = TaskView {
            util: TaskUtil::default(),
            uclamp_min: 0,
            uclamp_max: 1024,
            allowed: &allowed,
        };
        for asym in [false, true] {
            let base = select_idle_cpu(&cpus, &p, 1, asym, false, SchedIdleSelect::SchedIdleAsIdle);
            let patch = select_idle_cpu(&cpus, &p, 1, asym, false, SchedIdleSelect::IdleFirst);
            assert_eq!((base, patch), (1, 2), "asym {asym}");
        }
        // No idle CPU: the patch falls back to the SCHED_IDLE one, scanning from prev 3.
        let no_idle = [cpus[0], cpus[1], view(false, false, 1), cpus[3]];
        let patch = select_idle_cpu(&no_idle, &p, 3, false, false, SchedIdleSelect::IdleFirst);
        assert_eq!(patch, 1);
        // Nothing idle of either kind: the previous CPU.
        let busy = [cpus[0], cpus[0], cpus[0], cpus[3]];
        for sel in [SchedIdleSelect::SchedIdleAsIdle, SchedIdleSelect::IdleFirst] {
            assert_eq!(select_idle_cpu(&busy, &p, 3, false, false, sel), 3);
        }
    }

    #[test]
    fn wrap_starts_at_prev() {
        let a = [0, 1, 2, 3];
        assert_eq!(wrap_from(&a, 2).collect::<Vec<_>>(), vec![2, 3, 0, 1]);
        assert_eq!(wrap_from(&a, 9).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }
}
