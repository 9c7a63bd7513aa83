// SPDX-License-Identifier: GPL-2.0-only
//! The wake-up fast path — `select_idle_sibling()`, `select_idle_capacity()`,
//! `select_idle_cpu()` and `asym_fits_cpu()` (kernel/sched/fair.c), and the per-CPU and
//! per-task views every wake-up placement here reads ([`WakeCpu`], [`WakeTask`]).
//!
//! CPU masks are sorted slices of CPU numbers; a CPU number past the `cpus` slice is
//! skipped (not idle, no capacity). Not modelled: SMT idle-core search, the cluster
//! scan (`sched_cluster_active` off), `SIS_UTIL`'s scan depth (`nr_idle_scan`, which
//! load balancing computes: here every CPU of the LLC is scanned) and the per-CPU-kthread
//! stacking rule; `cpus_share_cache()` is given by the caller's LLC span.

use crate::capacity::{get_actual_cpu_capacity, util_fits_cpu, CpuCapacity, CpuUtilRq, TaskUtil};
use crate::pelt::SchedAvg;
use crate::util_est::UtilEst;

/// What a wake-up placement reads about one CPU (its runqueue at the call).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WakeCpu {
    /// `cpu_util()` inputs (`rq->cfs.avg`, `arch_scale_cpu_capacity()`).
    pub util: CpuUtilRq,
    /// `capacity_of()`, `get_actual_cpu_capacity()` inputs.
    pub capacity: CpuCapacity,
    /// `cpu_util_rt()`.
    pub util_rt: u64,
    /// `cpu_util_irq()`.
    pub util_irq: u64,
    /// `rt_rq_is_runnable(&rq->rt)`.
    pub rt_runnable: bool,
    /// `uclamp_rq_get(rq, UCLAMP_MIN)`.
    pub uclamp_min: u64,
    /// `uclamp_rq_get(rq, UCLAMP_MAX)`.
    pub uclamp_max: u64,
    /// `uclamp_rq_is_idle()`: no uclamp-counted task on the rq (its MAX is stale).
    pub uclamp_idle: bool,
    /// `available_idle_cpu()`: nothing runnable.
    pub idle: bool,
    /// `sched_idle_cpu()`: only SCHED_IDLE tasks runnable.
    pub sched_idle: bool,
    /// `idle_get_state(rq)->exit_latency` while in a cpuidle state (ns here; the kernel's
    /// µs scaled by 1000 orders the same).
    pub exit_latency: Option<u64>,
    /// `rq->idle_stamp`: when the CPU last went idle (ns).
    pub idle_stamp: u64,
    /// `cpu_load()`: `rq->cfs.avg.load_avg`.
    pub load: u64,
    /// `rq->nr_running` (every class).
    pub nr_running: u32,
}

impl WakeCpu {
    /// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`.
    #[inline]
    pub fn idle_or_sched_idle(&self) -> bool {
        self.idle || self.sched_idle
    }
}

/// Where the fast path reads CPU views: a slice of them, or views built on demand (the
/// simulator's: `select_idle_sibling()` mostly returns after reading one or two CPUs, so
/// building every CPU's view first would cost more than the search).
pub trait WakeCpus {
    /// CPU `cpu`'s view; `None` past the last CPU.
    fn view(&self, cpu: usize) -> Option<WakeCpu>;
}

impl WakeCpus for [WakeCpu] {
    #[inline]
    fn view(&self, cpu: usize) -> Option<WakeCpu> {
        self.get(cpu).copied()
    }
}

impl<const N: usize> WakeCpus for [WakeCpu; N] {
    #[inline]
    fn view(&self, cpu: usize) -> Option<WakeCpu> {
        self.get(cpu).copied()
    }
}

/// The task being placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WakeTask<'a> {
    /// Its signals and CPU (`task_cpu(p)`), as `cpu_util()` reads them.
    pub util: TaskUtil,
    /// `uclamp_eff_value(p, UCLAMP_MIN)`.
    pub uclamp_min: u64,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub uclamp_max: u64,
    /// `p->cpus_ptr`, sorted.
    pub allowed: &'a [usize],
}

impl WakeTask<'_> {
    /// `task_util_est(p)`: `max(util_avg, _task_util_est(p))` of the mainline layout.
    pub fn task_util_est(&self) -> u64 {
        crate::util_est::task_util_est(&SchedAvg {
            util_avg: self.util.util_avg,
            util_est: UtilEst::Mainline(self.util.util_est),
            ..SchedAvg::default()
        })
    }

    /// `cpumask_test_cpu(cpu, p->cpus_ptr)`.
    #[inline]
    pub fn allowed_on(&self, cpu: usize) -> bool {
        cpumask_test_cpu(cpu, self.allowed)
    }
}

/// `cpumask_test_cpu()` on a sorted mask.
#[inline]
pub fn cpumask_test_cpu(cpu: usize, mask: &[usize]) -> bool {
    mask.binary_search(&cpu).is_ok()
}

/// `for_each_cpu_wrap(cpu, mask, start)`: the CPUs of a sorted mask from the first at or
/// after `start`, wrapping round to the ones before it.
pub fn for_each_cpu_wrap(mask: &[usize], start: usize) -> impl Iterator<Item = usize> + '_ {
    let split = mask.partition_point(|&c| c < start);
    let after = mask.get(split..).unwrap_or(&[]);
    let before = mask.get(..split).unwrap_or(&[]);
    after.iter().chain(before).copied()
}

/// `asym_fits_cpu()`: on an asymmetric system (`asym`: `sched_asym_cpucap_active()`), does
/// the task fully fit `cpu` (utilization and both hints, [`util_fits_cpu`] strictly 1)?
/// Always true on a symmetric one.
pub fn asym_fits_cpu(
    util: u64,
    util_min: u64,
    util_max: u64,
    uclamp_used: bool,
    cpu: Option<&WakeCpu>,
    asym: bool,
) -> bool {
    if !asym {
        return true;
    }
    cpu.is_some_and(|v| util_fits_cpu(util, util_min, util_max, uclamp_used, &v.capacity) > 0)
}

/// `select_idle_capacity()`: over `sd_span` ∩ the task's CPUs from `target`, wrapping,
/// the first idle CPU the task fully fits; else, of the idle ones, the best `fits`
/// (-1, uclamp_min not met, beats 0) and at equal fits the largest capacity
/// (`capacity_of()`, or `get_actual_cpu_capacity()` for a -1). `None` when no idle CPU
/// has a capacity above 0.
pub fn select_idle_capacity(
    cpus: &(impl WakeCpus + ?Sized),
    p: &WakeTask,
    sd_span: &[usize],
    target: usize,
    uclamp_used: bool,
) -> Option<usize> {
    let task_util = p.task_util_est();
    let (mut best_cap, mut best_fits, mut best_cpu) = (0u64, 0i32, None);
    for cpu in for_each_cpu_wrap(sd_span, target).filter(|&c| p.allowed_on(c)) {
        let Some(v) = cpus.view(cpu) else { continue };
        if !v.idle_or_sched_idle() {
            continue;
        }
        let fits = util_fits_cpu(
            task_util,
            p.uclamp_min,
            p.uclamp_max,
            uclamp_used,
            &v.capacity,
        );
        if fits > 0 {
            return Some(cpu);
        }
        let cpu_cap = if fits < 0 {
            get_actual_cpu_capacity(&v.capacity)
        } else {
            v.capacity.cpu_capacity
        };
        if fits < best_fits || (fits == best_fits && cpu_cap > best_cap) {
            best_cap = cpu_cap;
            best_cpu = Some(cpu);
            best_fits = fits;
        }
    }
    best_cpu
}

/// `select_idle_cpu()` without an idle core (no SMT): the first idle CPU of `llc_span` ∩
/// the task's CPUs, scanning from `target + 1`, wrapping (`__select_idle_cpu()`: idle or
/// SCHED_IDLE-only).
pub fn select_idle_cpu(
    cpus: &(impl WakeCpus + ?Sized),
    p: &WakeTask,
    llc_span: &[usize],
    target: usize,
) -> Option<usize> {
    for_each_cpu_wrap(llc_span, target.saturating_add(1))
        .filter(|&c| p.allowed_on(c))
        .find(|&c| cpus.view(c).is_some_and(|v| v.idle_or_sched_idle()))
}

/// Where the wake-up domains are, for [`select_idle_sibling`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SisDomains<'a> {
    /// `sched_asym_cpucap_active()`.
    pub asym_active: bool,
    /// `per_cpu(sd_asym_cpucapacity, target)`'s span (`None`: no such domain, the
    /// symmetric path even on an asymmetric system).
    pub asym_span: Option<&'a [usize]>,
    /// `per_cpu(sd_llc, target)`'s span (`None`: no LLC domain, return `target`).
    pub llc_span: Option<&'a [usize]>,
}

/// Which test of [`select_idle_sibling`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SisRule {
    /// `target` is idle and fits.
    Target,
    /// `prev` (≠ target) is idle and fits.
    Prev,
    /// `p->recent_used_cpu` is idle, allowed and fits.
    RecentUsed,
    /// `select_idle_capacity()` (asymmetric) found one.
    IdleCapacity,
    /// `select_idle_cpu()` found one.
    IdleCpu,
    /// Nothing idle: `target`.
    Fallback,
}

impl SisRule {
    /// Its name in records.
    pub fn name(self) -> &'static str {
        match self {
            SisRule::Target => "target",
            SisRule::Prev => "prev",
            SisRule::RecentUsed => "recent-used",
            SisRule::IdleCapacity => "idle-capacity",
            SisRule::IdleCpu => "idle-cpu",
            SisRule::Fallback => "fallback",
        }
    }
}

/// `select_task_rq()`'s last step (kernel/sched/core.c): a `cpu` outside the task's
/// sorted mask `allowed` (`!is_cpu_allowed()`) is replaced by `select_fallback_rq()`'s
/// choice, the first allowed CPU of the node (one node, every CPU online and active).
/// An empty mask keeps `cpu`.
pub fn select_fallback_rq(cpu: usize, allowed: &[usize]) -> usize {
    if cpumask_test_cpu(cpu, allowed) {
        return cpu;
    }
    allowed.first().copied().unwrap_or(cpu)
}

/// What [`select_idle_sibling`] returns: the CPU, the rule, and the task's new
/// `recent_used_cpu` (the kernel writes `prev` there once past the first two tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SisResult {
    /// The CPU chosen.
    pub cpu: usize,
    /// Why.
    pub rule: SisRule,
    /// `p->recent_used_cpu` after the call.
    pub recent_used_cpu: Option<usize>,
}

/// `select_idle_sibling()`: `target` if idle and (asymmetric) fitting; `prev` likewise when
/// it shares `target`'s cache; the task's `recent_used_cpu` likewise when also allowed;
/// then on an asymmetric system with an asym domain [`select_idle_capacity`] (else
/// `target`), otherwise [`select_idle_cpu`] in the LLC, else `target`.
///
/// Traps: `target` is taken without testing the task's affinity (the caller's
/// `select_task_rq()` falls back if it is not allowed); `recent_used_cpu` is updated to
/// `prev` only when neither `target` nor `prev` was taken.
pub fn select_idle_sibling(
    cpus: &(impl WakeCpus + ?Sized),
    p: &WakeTask,
    prev: usize,
    target: usize,
    recent_used_cpu: Option<usize>,
    sd: &SisDomains,
    uclamp_used: bool,
) -> SisResult {
    let asym = sd.asym_active;
    let task_util = p.task_util_est();
    // Idle (or SCHED_IDLE-only) and, when asymmetric, fitting: one view read per CPU.
    let idle_fits = |c: usize| {
        cpus.view(c).is_some_and(|v| {
            v.idle_or_sched_idle()
                && asym_fits_cpu(
                    task_util,
                    p.uclamp_min,
                    p.uclamp_max,
                    uclamp_used,
                    Some(&v),
                    asym,
                )
        })
    };
    let done = |cpu, rule, recent_used_cpu| SisResult {
        cpu,
        rule,
        recent_used_cpu,
    };
    if idle_fits(target) {
        return done(target, SisRule::Target, recent_used_cpu);
    }
    let share_cache = |c: usize| {
        sd.llc_span
            .is_some_and(|s| cpumask_test_cpu(c, s) && cpumask_test_cpu(target, s))
    };
    if prev != target && share_cache(prev) && idle_fits(prev) {
        return done(prev, SisRule::Prev, recent_used_cpu);
    }
    let new_recent = Some(prev);
    if let Some(r) = recent_used_cpu {
        if r != prev && r != target && share_cache(r) && p.allowed_on(r) && idle_fits(r) {
            return done(r, SisRule::RecentUsed, new_recent);
        }
    }
    if asym {
        if let Some(span) = sd.asym_span {
            return match select_idle_capacity(cpus, p, span, target, uclamp_used) {
                Some(c) => done(c, SisRule::IdleCapacity, new_recent),
                None => done(target, SisRule::Fallback, new_recent),
            };
        }
    }
    let Some(llc) = sd.llc_span else {
        return done(target, SisRule::Fallback, new_recent);
    };
    match select_idle_cpu(cpus, p, llc, target) {
        Some(c) => done(c, SisRule::IdleCpu, new_recent),
        None => done(target, SisRule::Fallback, new_recent),
    }
}

#[cfg(test)]
pub(crate) mod test_views {
    //! CPU and task views the placement tests share.
    use super::*;

    /// A 1024-capacity CPU, idle or running `load`.
    pub(crate) fn cpu(idle: bool, sched_idle: bool, load: u64) -> WakeCpu {
        WakeCpu {
            util: CpuUtilRq {
                capacity_orig: 1024,
                util_est_feat: true,
                ..CpuUtilRq::default()
            },
            capacity: CpuCapacity {
                capacity_orig: 1024,
                cpu_capacity: 1024,
                ..CpuCapacity::default()
            },
            uclamp_max: 1024,
            idle,
            sched_idle,
            load,
            nr_running: u32::from(!idle),
            ..WakeCpu::default()
        }
    }

    /// A CPU of capacity `cap` (original and current), idle.
    pub(crate) fn sized(cap: u64, idle: bool) -> WakeCpu {
        let mut v = cpu(idle, false, 0);
        v.util.capacity_orig = cap;
        v.capacity.capacity_orig = cap;
        v.capacity.cpu_capacity = cap;
        v
    }

    /// Gives each CPU its number (`rq->cpu`, which `cpu_util()` compares with the task's).
    pub(crate) fn number<const N: usize>(mut cpus: [WakeCpu; N]) -> [WakeCpu; N] {
        for (i, v) in cpus.iter_mut().enumerate() {
            v.util.cpu = i32::try_from(i).unwrap_or(-1);
        }
        cpus
    }

    pub(crate) fn task(util: u64, allowed: &[usize]) -> WakeTask<'_> {
        WakeTask {
            util: TaskUtil {
                util_avg: util,
                ..TaskUtil::default()
            },
            uclamp_min: 0,
            uclamp_max: 1024,
            allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_views::*;
    use super::*;

    const ALL: [usize; 4] = [0, 1, 2, 3];

    fn sym() -> SisDomains<'static> {
        SisDomains {
            asym_active: false,
            asym_span: None,
            llc_span: Some(&ALL),
        }
    }

    #[test]
    fn fallback_only_outside_the_mask() {
        assert_eq!(select_fallback_rq(2, &[1, 2]), 2);
        assert_eq!(select_fallback_rq(0, &[1, 2]), 1);
        assert_eq!(select_fallback_rq(3, &[]), 3);
        assert_eq!(SisRule::RecentUsed.name(), "recent-used");
    }

    #[test]
    fn wrap_starts_at_start() {
        let mut it = for_each_cpu_wrap(&ALL, 2);
        assert_eq!(
            [it.next(), it.next(), it.next(), it.next(), it.next()],
            [Some(2), Some(3), Some(0), Some(1), None]
        );
        assert_eq!(for_each_cpu_wrap(&ALL, 9).next(), Some(0));
        assert!(cpumask_test_cpu(3, &ALL) && !cpumask_test_cpu(4, &ALL));
    }

    #[test]
    fn target_then_recent_used_then_scan_from_target_plus_one() {
        // CPU 0 busy (target = prev), 1 SCHED_IDLE only, 2 idle, 3 busy.
        let cpus = [
            cpu(false, false, 9),
            cpu(false, true, 3),
            cpu(true, false, 0),
            cpu(false, false, 9),
        ];
        let p = task(100, &ALL);
        let r = select_idle_sibling(&cpus, &p, 0, 0, None, &sym(), false);
        assert_eq!(
            (r.cpu, r.rule, r.recent_used_cpu),
            (1, SisRule::IdleCpu, Some(0))
        );
        // The recent CPU 2 is idle: taken before the scan.
        let r = select_idle_sibling(&cpus, &p, 0, 0, Some(2), &sym(), false);
        assert_eq!((r.cpu, r.rule), (2, SisRule::RecentUsed));
        // From target 3 the scan starts at 0 (busy), then 1.
        let r = select_idle_sibling(&cpus, &p, 3, 3, None, &sym(), false);
        assert_eq!(r.cpu, 1);
        // Idle target: taken, recent_used_cpu untouched.
        let r = select_idle_sibling(&cpus, &p, 2, 2, Some(1), &sym(), false);
        assert_eq!(
            (r.cpu, r.rule, r.recent_used_cpu),
            (2, SisRule::Target, Some(1))
        );
        // Nothing idle: target.
        let busy = [cpus[0]; 4];
        let r = select_idle_sibling(&busy, &p, 3, 3, None, &sym(), false);
        assert_eq!((r.cpu, r.rule), (3, SisRule::Fallback));
        // A recent CPU outside the affinity is skipped.
        let only = [0usize, 3];
        let q = task(100, &only);
        let r = select_idle_sibling(&cpus, &q, 0, 0, Some(2), &sym(), false);
        assert_eq!((r.cpu, r.rule), (0, SisRule::Fallback));
        // A slice reads the same views as the array; past the last CPU there is none.
        let r = select_idle_sibling(&cpus[..], &p, 0, 0, None, &sym(), false);
        assert_eq!((r.cpu, r.rule), (1, SisRule::IdleCpu));
        assert_eq!(cpus[..].view(2), Some(cpus[2]));
        assert_eq!((cpus[..].view(4), cpus.view(4)), (None, None));
    }

    #[test]
    fn asym_path_first_fitting_idle_else_biggest() {
        // Little 0,1 (446), big 2,3 (1024). Task util 400: 400 * 1280 = 512000 >= 446 * 1024
        // = 456704, so it does not fit a little CPU.
        let mut cpus = [
            sized(446, true),
            sized(446, true),
            sized(1024, false),
            sized(1024, true),
        ];
        let p = task(400, &ALL);
        let sd = SisDomains {
            asym_active: true,
            asym_span: Some(&ALL),
            llc_span: Some(&ALL),
        };
        // Target 0 idle but does not fit; scan from 0: 0, 1 no, 2 busy, 3 fits.
        let r = select_idle_sibling(&cpus, &p, 0, 0, None, &sd, false);
        assert_eq!((r.cpu, r.rule), (3, SisRule::IdleCapacity));
        // Big CPUs busy: the biggest idle one, the first of equals from target.
        cpus[3] = sized(1024, false);
        cpus[1] = sized(500, true);
        let r = select_idle_sibling(&cpus, &p, 0, 0, None, &sd, false);
        assert_eq!(r.cpu, 1);
        assert_eq!(select_idle_capacity(&cpus, &p, &ALL, 0, false), Some(1));
        // No idle CPU at all: target.
        let busy = [sized(1024, false); 4];
        let r = select_idle_sibling(&busy, &p, 1, 1, None, &sd, false);
        assert_eq!((r.cpu, r.rule), (1, SisRule::Fallback));
    }

    #[test]
    fn select_idle_capacity_prefers_uclamp_min_miss_over_misfit() {
        // Task util 100, uclamp_min 800: on a 446 CPU it fits by util but not its boost
        // (-1), on a 1024 one fully. CPU 0 (446) -1; CPU 1 (300, actual 300): util 100 *
        // 1280 = 128000 < 300 * 1024: fits, boost unmet, -1 too; bigger actual wins.
        let cpus = [sized(446, true), sized(300, true)];
        let both = [0usize, 1];
        let mut p = task(100, &both);
        p.uclamp_min = 800;
        assert_eq!(select_idle_capacity(&cpus, &p, &both, 1, true), Some(0));
        // A 0-fits CPU (util 900 > 446) loses against a -1 one even when bigger.
        let cpus = [sized(446, true), sized(600, true)];
        let mut q = task(420, &both);
        q.uclamp_min = 900;
        // CPU 0: 420 * 1280 = 537600 >= 456704: 0 (misfit); CPU 1: 537600 < 614400, fits,
        // 420 < 900 and 900 > 600: -1.
        assert_eq!(select_idle_capacity(&cpus, &q, &both, 0, true), Some(1));
        assert!(!asym_fits_cpu(420, 900, 1024, true, cpus.get(1), true));
        assert!(asym_fits_cpu(420, 900, 1024, true, None, false));
        assert_eq!(select_idle_cpu(&cpus, &q, &both, 0), Some(1));
    }
}
