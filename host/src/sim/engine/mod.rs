// SPDX-License-Identifier: GPL-2.0-only
//! The event loop: integer ns, a binary-heap event queue (time, then insertion order; the
//! one pending tick waits beside the heap in the same order), no fixed step. Events: a
//! task's activation (wake-up, timer expiry, first start), the end of the running task's
//! current step (its completion time is recomputed whenever the
//! CPU's frequency or the running task changes), and the tick (every `TICK_NSEC`, all
//! CPUs at once).
//!
//! Kernel points modelled, in the kernel's order:
//! * enqueue: rq clock → uclamp_rq_inc → util_est_enqueue → `__update_load_avg_se` (or
//!   attach after a migration / `post_init_entity_util_avg` at fork) →
//!   `__update_load_avg_cfs_rq` → schedutil when the cfs_rq decayed or attached →
//!   overutilized check;
//! * dequeue: util_est_dequeue → util_est_update (sleep) → se/cfs_rq PELT → uclamp_rq_dec
//!   (the v6.13+ `dequeue_task_fair()` order: the estimate sees util_avg before the final
//!   PELT update);
//! * put_prev / set_next: se and cfs_rq PELT (running then not), rt PELT;
//! * idle entry: `update_idle_rq_clock_pelt`, cpuidle select with the real sleep length
//!   (next timer of the tasks sleeping on that CPU) and the tick; exit on wake-up or on the
//!   tick when the governor kept it, then enter statistics and reflect;
//! * tick: PELT of the running task and rq, `capacity_of` refresh, schedutil, overutilized
//!   set, misfit migration, slice preemption (the switch itself on the interrupt's exit, the
//!   platform's `tick_resched_latency_ns` later); the root-domain load-balance pass clears or
//!   sets overutilized; idle CPUs get their blocked averages decayed every 32 ms (nohz
//!   idle balance).
//! * load balance (submodule `balance`, the core's `schedmath::fair::balance`): after
//!   the tick every CPU whose `next_balance` is due runs `rebalance_domains()` — per
//!   domain level whose `get_sd_balance_interval()` passed, `load_balance()` (local and
//!   busiest group, imbalance, busiest runqueue, `detach_tasks()` with `task_hot()` and
//!   the `nr_balance_failed` back-off, active balance, `balance_interval` doubling); a
//!   CPU that runs out of work runs `sched_balance_newidle()` before going idle. Under
//!   EAS it stays out while the root domain is not overutilized;
//!
//! * the fair class (submodule `fair`): EEVDF (`mainline`) or the 6.1 CFS (`fair-cfs`)
//!   on every cfs_rq through the core's `schedmath::fair`: placement at enqueue, lag
//!   kept at dequeue (EEVDF's delayed dequeue of an ineligible sleeper, finished when it
//!   is picked or requeued when it wakes), `update_curr()` with the reschedule it asks
//!   for, the pick, the tick's slice check and wake-up preemption;
//! * task groups: every enqueue, dequeue, switch and tick of a grouped task walks its
//!   group cfs_rqs up to the root (PELT, `update_tg_load_avg()`, the group entity's
//!   `calc_group_shares()` weight), `update_curr()` advances each group entity's
//!   vruntime, group cfs_rqs decay every 32 ms, the pick and wake-up preemption work on
//!   the hierarchy (submodule `groups`, [`crate::sim::group`]);
//! * iowait: a task waking from an `iorun` asks schedutil for the iowait boost
//!   (`cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT)` first thing in its fair enqueue);
//! * synchronisation (mutexes, conditions, barriers, suspend/resume, yield) and rt-app's
//!   `fork` (a new thread at that instant, first activated through the fork path): [`sync`];
//! * irq time (`schedmath.irq_pct`): a CPU spends that share of its wall time in irq,
//!   busy or idle, uniformly: `⌊rq->clock × pct / 100⌋` ns by rq clock, so every rq
//!   clock update takes the interval's irq ns off `clock_task` (hence `clock_pelt`: the
//!   running task's PELT, vruntime and slice see task time only) and, when nonzero,
//!   feeds `rq->avg_irq` through `update_irq_load_avg()` at the new `rq->clock`, as
//!   `update_rq_clock_task()` does (IRQ_TIME_ACCOUNTING, NONTASK_CAPACITY); the idle
//!   blocked-load decay decays it too (`__update_blocked_others()`). `cpu_util_irq()`
//!   enters `capacity_of()` at the tick (`scale_rt_capacity()`, which overutilized reads),
//!   schedutil's and EAS's `effective_cpu_util()`, the EM estimate and the idle
//!   governor's `sched_cpu_util()`. A `run` step progresses only in task time (its wall
//!   time stretches by `100 / (100 − pct)`); a `runtime` step still ends at its wall
//!   deadline (irq time counts as wall time, like preemption); the CPU's power is its
//!   OPP's whether in task or irq context, so energy does not change.
//!
//! Simplifications: no steal time; irq time is a uniform rate, not interrupts: it never
//! wakes an idle CPU, ends an idle state or counts as a wake-up in the governor's
//! statistics (an idle CPU's irq time is accounted at its next rq clock update), and
//! `capacity_of()` is refreshed only at a busy CPU's tick, as before; no DL class, no thermal pressure; the overutilized pass runs every tick; the blocked-load decay of idle
//! CPUs asks schedutil for a new frequency when a signal decayed, as
//! `sched_balance_update_blocked_averages()` does, always accepted (in the kernel the
//! idle-balance CPU that runs it may be outside the policy, and
//! `cpufreq_this_cpu_can_update()` may then refuse); the load balancer's own
//! simplifications are listed in `balance` (no NO_HZ idle-balance kick, newly-idle balance
//! not gated by `avg_idle`, `task_h_load()` without group scaling); a migrated task's load is detached
//! at once instead of through `removed`. The seed feeds each task's own generator
//! ([`SplitMix64`], seed × task index), drawn only by workload ranges (the IO latency of
//! `schedmath.io_latency_us`); a workload without ranges gives the same result for every
//! seed.

mod balance;
mod fair;
mod groups;
mod observe;
mod sched;
mod sync;
mod tick;
mod wakeup;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use schedmath::capacity::topology::topology_set_freq_scale;
use schedmath::capacity::{
    capacity_greater, cpu_util_cfs, cpu_util_cfs_boost, effective_cpu_util, sched_cpu_util,
    task_fits_cpu, update_cpu_capacity, CfsRqUtil, CpuCapacity, CpuUtilRq, EffectiveUtilInput,
    RqPressureUtil, TaskUtil,
};
use schedmath::cpuidle::{SelectEnv, KTIME_MAX};
use schedmath::energy::em_cpu_energy;
use schedmath::math::{scale_load, scale_load_down};
use schedmath::overutilized::{
    check_update_overutilized_status, cpu_overutilized, update_sd_lb_overutilized, EasKeys,
    OverutilizedCpu, RootDomain,
};
use schedmath::pelt::clock::{
    rq_clock_pelt, update_idle_rq_clock_pelt, update_rq_clock_task, PeltClockCpu,
};
use schedmath::pelt::{
    __update_load_avg_blocked_se, __update_load_avg_cfs_rq, __update_load_avg_se,
    attach_entity_load_avg, detach_entity_load_avg, init_entity_runnable_average,
    post_init_entity_util_avg, update_irq_load_avg, update_rt_rq_load_avg, PeltTables,
    SchedEntityPelt,
};
use schedmath::schedutil::{sugov_effective_cpu_perf, SugovRq, SCHED_CPUFREQ_IOWAIT};
use schedmath::uclamp::{
    uclamp_eff_value, uclamp_rq_dec, uclamp_rq_get, uclamp_rq_inc, uclamp_rq_is_idle,
    uclamp_se_set, UclampConfig, UclampId,
};
use schedmath::util_est::{
    _task_util_est, util_est_dequeue, util_est_enqueue, util_est_update, UtilEstCpu,
};
use schedmath::Profile;

use super::domains::SchedDomains;
use super::governors::{CpuIdle, FreqDomainState};
use super::group::{GroupRq, TaskGroups};
use super::metrics::{Metrics, Recorder};
use super::placement::{sd_asym_cpucapacity, CpuView, PerfDomain, TaskView};
use super::program::{tasks_from_workload, SchedPolicy, SimTask};
use super::rq::{IdleStay, Rq};
use super::task::{
    allowed_cpus, util_decay_ns, StepOutcome, TState, Task, RAMP_UTIL, UCLAMP_BUCKETS,
};
use super::{SimConfig, SimError, BOOT_CLOCK_NS};
use crate::platform::Platform;
use crate::rng::SplitMix64;
use crate::trace::record::{OuTest, PlacementRule, Trace};
use crate::workload::{IrqShare, Workload};
use schedmath::fair::eas::find_energy_efficient_cpu;
use schedmath::fair::idlest::sched_balance_find_dst_cpu;
use schedmath::fair::wake::{select_fallback_rq, select_idle_sibling, SisDomains, WakeCpus};

/// Simulated time between two calls of a run's progress callback (100 ms): a progress bar
/// needs no more, and updating one at every tick cost the CLI 1 % of a run.
const PROGRESS_NS: u64 = 100_000_000;

/// How often an idle CPU's blocked averages are decayed (`LOAD_AVG_PERIOD` ms).
const BLOCKED_UPDATE_NS: u64 = 32_000_000;

/// Irq ns between rq clocks `a` and `b` of a CPU spending `pct` % of its time in irq:
/// irq time accrues as `⌊clock × pct / 100⌋`, so any split of an interval sums to the
/// same total (no drift).
fn irq_between(pct: u64, a: u64, b: u64) -> u64 {
    let at = |t: u64| (u128::from(t) * u128::from(pct) / 100) as u64; // at most t
    if pct == 0 || b <= a {
        return 0;
    }
    at(b) - at(a)
}

/// Wall ns from rq clock `a` until `task` ns of task time (wall minus irq) have passed on
/// a CPU with `pct` % irq time (`pct < 100`): the first `t` with `T(t) − T(a) ≥ task`,
/// where `T(t) = t − ⌊t·pct/100⌋ = ⌈t·(100 − pct)/100⌉`, so `T(t) ≥ x` exactly when
/// `t·(100 − pct) > 100·(x − 1)`. Exact: [`irq_between`] over the result gives back
/// `task` or (rounding to whole ns) one more.
fn wall_for_task_time(pct: u64, a: u64, task: u64) -> u64 {
    if pct == 0 || task == 0 {
        return task;
    }
    let keep = u128::from(100 - pct.min(99));
    let (a, pct) = (u128::from(a), u128::from(pct));
    let target = a - a * pct / 100 + u128::from(task);
    let t = 100 * (target - 1) / keep + 1;
    u64::try_from(t - a).unwrap_or(u64::MAX)
}

/// `(util_avg, runnable_avg, util_est)` of a CPU's cfs_rq and the `(cpu_util_cfs,
/// cpu_util_cfs_boost)` computed from them ([`sugov_rq`]); `None`: not yet.
type UtilMemo = (Option<(u64, u64, u32)>, (u64, u64));

/// Runqueue `r` of CPU `c` as `cpu_util()` reads it.
fn util_rq_of(r: &Rq, c: usize) -> CpuUtilRq {
    CpuUtilRq {
        cpu: c as i32, // CPU numbers are small
        capacity_orig: r.capacity_orig,
        cfs: CfsRqUtil {
            util_avg: r.cfs.util_avg,
            runnable_avg: r.cfs.runnable_avg,
            util_est: r.cfs.util_est.enqueued(),
        },
        util_est_feat: true,
    }
}

/// Runqueue `r`'s capacities as `capacity_of()` and the fit tests read them.
fn capacity_of(r: &Rq) -> CpuCapacity {
    CpuCapacity {
        capacity_orig: r.capacity_orig,
        cpu_capacity: r.cpu_capacity,
        hw_load_avg: 0,
        cpufreq_pressure: 0,
    }
}

/// `uclamp_rq_get()` of runqueue `r`.
fn rq_clamp_of(r: &Rq, id: UclampId) -> u64 {
    u64::from(uclamp_rq_get(&r.uclamp, id))
}

/// schedutil's view of CPU `c` (runqueue `r`). `cpu_util_cfs()` and
/// `cpu_util_cfs_boost()` are kept in `memo` with the three signals they are computed
/// from (the CPU's capacity is fixed) and recomputed only when one changed: most updates
/// of a policy find its other CPUs' signals as the last update left them.
fn sugov_rq(r: &Rq, c: usize, memo: &mut UtilMemo) -> SugovRq {
    let key = (
        r.cfs.util_avg,
        r.cfs.runnable_avg,
        r.cfs.util_est.enqueued(),
    );
    let (util_cfs, util_cfs_boost) = match *memo {
        (k, util) if k == Some(key) => util,
        _ => {
            let u = util_rq_of(r, c);
            let util = (cpu_util_cfs(&u), cpu_util_cfs_boost(&u));
            *memo = (Some(key), util);
            util
        }
    };
    SugovRq {
        capacity: r.capacity_orig,
        util_cfs,
        util_cfs_boost,
        util_rt: r.rt.util_avg,
        util_irq: r.irq.util_avg,
        rt_runnable: r.nr_rt > 0,
        uclamp_min: rq_clamp_of(r, UclampId::Min),
        uclamp_max: rq_clamp_of(r, UclampId::Max),
        idle_calls: r.idle_calls,
        ..SugovRq::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Tick,
    Wake(usize),
    Done {
        /// A CPU number (small: 32 bits keep the event, and the heap's entries, small).
        cpu: u32,
        gen: u64,
    },
    /// The tick interrupt's exit on a CPU whose tick asked for a reschedule.
    TickResched(usize),
}

/// A pending event in the heap. Ordered by (time, insertion number) alone — unique per
/// event, so the event itself never decides —, reversed: the max-heap pops the earliest.
#[derive(Debug, Clone, Copy)]
struct Pending {
    at: u64,
    seq: u64,
    ev: Ev,
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Pending {}

/// The simulator state.
pub struct Engine<'p> {
    platform: &'p Platform,
    profile: Profile,
    tables: &'static PeltTables,
    tick_nsec: u64,
    /// The platform's `tick_resched_latency_ns` (below `tick_nsec`).
    tick_resched_ns: u64,
    /// The fair class's tunables.
    fair: fair::FairParams,
    now: u64,
    end: u64,
    seq: u64,
    heap: BinaryHeap<Pending>,
    /// The pending tick (time, insertion number), kept out of the heap.
    next_tick: Option<(u64, u64)>,
    rqs: Vec<Rq>,
    doms: Vec<FreqDomainState>,
    idle: Vec<Option<CpuIdle>>,
    tasks: Vec<Task>,
    groups: TaskGroups,
    keys: EasKeys,
    ucfg: UclampConfig,
    asym: bool,
    sd: SchedDomains,
    /// The load balancer's domain state ([`balance`]).
    lb: balance::LbState,
    rd: RootDomain,
    rec: Recorder,
    sync: sync::SyncState,
    /// Fork templates ([`SimTask::fork_template`]), the index of a [`Step::Fork`].
    templates: Vec<SimTask>,
    /// Threads forked from each template so far (rt-app's per-fork counter).
    nforks: Vec<u32>,
    /// The run's seed (a forked thread's random stream).
    seed: u64,
    /// The performance domains with an Energy Model (EAS's `rd->pd`), built once.
    pds: Vec<PerfDomain<'p>>,
    /// Per frequency domain: scratch for the schedutil views of its CPUs (one entry per
    /// CPU, no allocation per update).
    sugov_views: Vec<Vec<SugovRq>>,
    /// Scratch for the placement's views of every CPU (no allocation per wake-up).
    cpu_view: Vec<CpuView>,
    /// Per CPU: see [`UtilMemo`].
    util_memo: Vec<UtilMemo>,
    /// Per CPU: the EM estimate's `effective_cpu_util()` and its performance request,
    /// kept while [`Rq::em_stale`] is clear.
    em_util: Vec<(u64, u64)>,
    /// Per CPU: its position in its frequency domain's CPU list (schedutil's `cpu`).
    sugov_pos: Vec<usize>,
    /// The fast path's LLC span: every CPU (see [`crate::sim::placement`]).
    llc_span: Vec<usize>,
    /// Each CPU's [`sd_asym_cpucapacity`] span: topology only, built once.
    asym_spans: Vec<Option<Vec<usize>>>,
    /// The trace being recorded (`None`: not traced, no hook records anything).
    trace: Option<Box<super::observe::TraceBuf>>,
}

/// Runs `tasks` on `platform` under `profile`.
/// No CPU spends time in irq.
pub fn simulate(
    platform: &Platform,
    tasks: &[SimTask],
    profile: &Profile,
    cfg: &SimConfig,
) -> Result<Metrics, SimError> {
    simulate_with_progress(platform, tasks, &[], profile, cfg, &mut |_| {})
}

/// [`simulate`], also returning how many events the loop handled (ticks, activations,
/// step ends, stale ones included): the benchmark's events per second.
pub fn simulate_counting_events(
    platform: &Platform,
    tasks: &[SimTask],
    profile: &Profile,
    cfg: &SimConfig,
) -> Result<(Metrics, u64), SimError> {
    let mut e = Engine::new(platform, tasks, &[], profile, cfg, false)?;
    let events = e.run(&mut |_| {});
    Ok((e.finish().0, events))
}

/// Runs workload `w` (its tasks and its `schedmath.irq_pct` irq time) on `platform`
/// under `profile`.
pub fn simulate_workload(
    platform: &Platform,
    w: &Workload,
    profile: &Profile,
    cfg: &SimConfig,
) -> Result<Metrics, SimError> {
    let tasks = tasks_from_workload(w)?;
    simulate_with_progress(
        platform,
        &tasks,
        &w.global.irq_pct,
        profile,
        cfg,
        &mut |_| {},
    )
}

/// [`simulate`] with `irq` time on some CPUs, calling `progress` with the simulated time
/// (ns) at the first tick of every 100 ms of simulated time (the CLI's progress bar; the
/// callback cannot change the run).
pub fn simulate_with_progress(
    platform: &Platform,
    tasks: &[SimTask],
    irq: &[IrqShare],
    profile: &Profile,
    cfg: &SimConfig,
    progress: &mut dyn FnMut(u64),
) -> Result<Metrics, SimError> {
    let mut e = Engine::new(platform, tasks, irq, profile, cfg, false)?;
    e.run(progress);
    Ok(e.finish().0)
}

/// [`simulate_with_progress`] recording the run's events ([`crate::sim::observe`]).
pub fn simulate_traced(
    platform: &Platform,
    tasks: &[SimTask],
    irq: &[IrqShare],
    profile: &Profile,
    cfg: &SimConfig,
    progress: &mut dyn FnMut(u64),
) -> Result<(Metrics, Trace), SimError> {
    let mut e = Engine::new(platform, tasks, irq, profile, cfg, true)?;
    e.run(progress);
    let (m, t) = e.finish();
    let t = t.unwrap_or_else(|| Ok(Trace::default()));
    Ok((m, t.map_err(SimError::Config)?))
}

/// `sched_uclamp_used` is switched on by the first clamp request, so a clamp first set by
/// a later phase counts too (before it every clamp is the default).
fn uclamp_used(specs: &[SimTask]) -> bool {
    specs.iter().any(|t| {
        t.uclamp_min.is_some()
            || t.uclamp_max.is_some()
            || t.phases
                .iter()
                .any(|p| p.attrs.uclamp_min.is_some() || p.attrs.uclamp_max.is_some())
    })
}

/// One runqueue per CPU at its domain's starting frequency, with its share of irq time.
fn runqueues(
    platform: &Platform,
    doms: &[FreqDomainState],
    irq: &[IrqShare],
    profile: &Profile,
) -> Result<Vec<Rq>, SimError> {
    let mut rqs: Vec<Rq> = platform
        .cpus
        .iter()
        .map(|c| Rq::new(c.id, c.capacity_orig, c.domain, profile))
        .collect();
    for r in &mut rqs {
        let d = &doms[r.domain];
        r.freq_scale = topology_set_freq_scale(1024, u64::from(d.cur()), d.fref_khz, false);
    }
    for s in irq {
        let r = rqs
            .get_mut(s.cpu)
            .ok_or_else(|| SimError::Config(format!("irq time on CPU {}: no such CPU", s.cpu)))?;
        if s.pct >= 100 {
            return Err(SimError::Config(format!(
                "irq time on CPU {}: {} % leaves no time to run tasks",
                s.cpu, s.pct
            )));
        }
        r.irq_pct = u64::from(s.pct);
    }
    Ok(rqs)
}

/// Task number `i` of `n`-CPU run: its affinity and groups checked (every phase's), its
/// random stream seeded, its first phase applied.
fn new_task(
    s: &SimTask,
    i: usize,
    n: usize,
    profile: &Profile,
    cfg: &SimConfig,
    groups: &mut TaskGroups,
) -> Result<Task, SimError> {
    let bad = |m: String| SimError::Config(format!("task `{}`: {m}", s.name));
    if s.phases.is_empty() || s.phases.iter().any(|p| p.steps.is_empty() || p.loops == 0) {
        return Err(bad("a phase without steps or loops".into()));
    }
    let allowed = allowed_cpus(s.cpus.as_deref(), n).map_err(bad)?;
    for ph in &s.phases {
        if let Some(c) = &ph.attrs.cpus {
            allowed_cpus(Some(c), n).map_err(bad)?;
        }
    }
    for ph in &s.phases {
        if let Some(chain) = &ph.attrs.group {
            groups.insert_chain(chain).map_err(bad)?;
        }
    }
    let mut task = Task::new(s.clone(), profile.util_est, allowed);
    task.rng = SplitMix64::stream(cfg.seed, i as u64);
    let first = s.phases[0].attrs.clone();
    task.apply(&first, n);
    let chain = first.group.as_ref().unwrap_or(&s.group);
    task.group = groups.insert_chain(chain).map_err(bad)?;
    Ok(task)
}

impl<'p> Engine<'p> {
    fn new(
        platform: &'p Platform,
        specs: &[SimTask],
        irq: &[IrqShare],
        profile: &Profile,
        cfg: &SimConfig,
        traced: bool,
    ) -> Result<Self, SimError> {
        crate::limits::check_sim(cfg.hz, cfg.duration_ns).map_err(SimError::Config)?;
        let tick = schedmath::schedutil::tick_nsec(cfg.hz)
            .filter(|&t| t > 0)
            .ok_or(SimError::Config(crate::limits::hz_message(cfg.hz)))?;
        if platform.tick_resched_latency_ns >= tick as u64 {
            return Err(SimError::Config(format!(
                "{}: tick_resched_latency_ns {} is not below the tick ({tick} ns at HZ {})",
                platform.origin, platform.tick_resched_latency_ns, cfg.hz
            )));
        }
        let n = platform.nr_cpus();
        let uclamp_used = uclamp_used(specs);
        let caps: Vec<u64> = platform.cpus.iter().map(|c| c.capacity_orig).collect();
        let asym = caps.iter().any(|&c| c != caps[0]);
        let keys = EasKeys {
            sched_energy_enabled: platform.eas
                && asym
                && platform.domains.iter().all(|d| d.em.is_some()),
            uclamp_is_used: uclamp_used,
        };
        let ucfg = UclampConfig {
            buckets: UCLAMP_BUCKETS,
            used: uclamp_used,
            default: [
                uclamp_se_set(0, false, UCLAMP_BUCKETS),
                uclamp_se_set(1024, false, UCLAMP_BUCKETS),
            ],
        };
        let doms = (0..platform.domains.len())
            .map(|d| FreqDomainState::new(platform, d, tick, uclamp_used))
            .collect::<Result<Vec<_>, _>>()?;
        let mut rqs = runqueues(platform, &doms, irq, profile)?;
        let idle = platform
            .cpus
            .iter()
            .map(|c| CpuIdle::new(platform, c.id, c.capacity_orig, profile, traced))
            .collect();
        let mut groups = TaskGroups::new();
        let mut tasks = Vec::with_capacity(specs.len());
        let mut templates = Vec::new();
        for s in specs {
            // A fork template is checked like any task; only a `fork` step starts one.
            let task = new_task(s, tasks.len(), n, profile, cfg, &mut groups)?;
            if s.fork_template {
                templates.push(s.clone());
            } else {
                tasks.push(task);
            }
        }
        for r in &mut rqs {
            r.grq = vec![GroupRq::default(); groups.len()];
        }
        let names: Vec<String> = tasks.iter().map(|t| t.spec.name.clone()).collect();
        let sd = SchedDomains::of(platform);
        let asym_spans = (0..n)
            .map(|c| sd_asym_cpucapacity(&sd, &caps, c).map(<[usize]>::to_vec))
            .collect();
        let mut rec = Recorder::new(platform, &names, cfg);
        rec.set_profile(&profile.to_string());
        let mut e = Engine {
            platform,
            profile: *profile,
            tables: PeltTables::of(profile.halflife),
            tick_nsec: tick as u64, // positive, checked above
            tick_resched_ns: platform.tick_resched_latency_ns,
            fair: fair::FairParams::new(profile, n, tick as u64), // positive, checked above
            now: 0,
            end: cfg.duration_ns,
            seq: 0,
            heap: BinaryHeap::new(),
            next_tick: None,
            rqs,
            doms,
            idle,
            tasks,
            groups,
            keys,
            ucfg,
            asym,
            lb: balance::LbState::new(&sd, u64::from(cfg.hz)),
            sd,
            rd: RootDomain::default(),
            rec,
            sync: sync::SyncState::new(specs),
            nforks: vec![0; templates.len()],
            templates,
            seed: cfg.seed,
            sugov_views: platform
                .domains
                .iter()
                .map(|d| vec![SugovRq::default(); d.cpus.len()])
                .collect(),
            cpu_view: Vec::new(),
            util_memo: vec![(None, (0, 0)); n],
            em_util: vec![(0, 0); n],
            sugov_pos: platform
                .cpus
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let cpus = platform.domains.get(c.domain).map(|d| d.cpus.as_slice());
                    cpus.and_then(|cpus| cpus.iter().position(|&cc| cc == i))
                        .unwrap_or(0)
                })
                .collect(),
            llc_span: (0..n).collect(),
            asym_spans,
            pds: platform
                .domains
                .iter()
                .filter_map(|d| d.em.as_ref().map(|em| PerfDomain { cpus: &d.cpus, em }))
                .collect(),
            trace: None,
        };
        if traced {
            e.tr_begin(&names);
        }
        for t in 0..e.tasks.len() {
            let at = e.tasks[t].spec.delay_ns;
            e.push(at, Ev::Wake(t));
        }
        e.push(e.tick_nsec, Ev::Tick);
        for c in 0..n {
            e.idle_enter(c);
        }
        Ok(e)
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        match ev {
            // One tick is pending at any time: it waits beside the heap, not in it.
            Ev::Tick => self.next_tick = Some((at, self.seq)),
            _ => self.heap.push(Pending {
                at,
                seq: self.seq,
                ev,
            }),
        }
    }

    /// The next event in (time, insertion) order: the pending tick or the heap's first.
    fn pop(&mut self) -> Option<(u64, Ev)> {
        let heap_first = self.heap.peek().map(|p| (p.at, p.seq));
        match (self.next_tick, heap_first) {
            (Some(tick), h) if h.is_none_or(|h| tick < h) => {
                self.next_tick = None;
                Some((tick.0, Ev::Tick))
            }
            _ => self.heap.pop().map(|p| (p.at, p.ev)),
        }
    }

    /// The event loop; returns how many events it handled.
    fn run(&mut self, progress: &mut dyn FnMut(u64)) -> u64 {
        let mut events = 0;
        let mut next_progress = 0;
        while let Some((at, ev)) = self.pop() {
            if at > self.end {
                break;
            }
            events += 1;
            self.now = at;
            match ev {
                Ev::Tick => {
                    if at >= next_progress {
                        progress(at);
                        next_progress = at + PROGRESS_NS;
                    }
                    self.tick();
                }
                Ev::Wake(t) => self.wake(t),
                Ev::Done { cpu, gen } => self.done(cpu as usize, gen),
                Ev::TickResched(c) => self.tick_resched(c),
            }
        }
        self.now = self.end;
        events
    }

    fn finish(mut self) -> (Metrics, Option<Result<Trace, String>>) {
        for c in 0..self.rqs.len() {
            self.acct(c);
            if let Some(st) = self.rqs[c].idle {
                let since = self.unfold_ticks(c, &st);
                if let Some(ci) = self.idle[c].as_mut() {
                    ci.exit(st.idx, since, self.now, false, self.tick_nsec as i64);
                }
            }
        }
        for d in &mut self.doms {
            d.finish(self.now);
        }
        self.rec.set_ou(self.now, self.rd.overutilized);
        let mut m = self.rec.finish(self.now, &self.doms, &self.idle);
        m.set_task_figures(&self.tasks);
        for r in self.rqs.iter().filter(|r| r.irq_pct > 0) {
            m.irq_util_avg_end.insert(r.cpu, r.irq.util_avg);
            m.cpu_capacity_end.insert(r.cpu, r.cpu_capacity);
        }
        (m, self.trace.map(|b| b.finish()))
    }

    // ---------------------------------------------------------------- physical model

    /// Work (ns at 1024 and f_ref) done in `dt` wall ns on `c` at its current frequency.
    fn work_in(&self, c: usize, dt: u64) -> u64 {
        let r = &self.rqs[c];
        let d = &self.doms[r.domain];
        let num = u128::from(dt) * u128::from(r.capacity_orig) * u128::from(d.cur());
        let den = 1024 * u128::from(d.fref_khz.max(1));
        u64::try_from(num / den).unwrap_or(u64::MAX)
    }

    /// Wall ns `c` needs for `work` at its current frequency (rounded up).
    fn wall_for(&self, c: usize, work: u64) -> u64 {
        let r = &self.rqs[c];
        let d = &self.doms[r.domain];
        let num = u128::from(work) * 1024 * u128::from(d.fref_khz.max(1));
        let den = (u128::from(r.capacity_orig) * u128::from(d.cur())).max(1);
        u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX)
    }

    /// Task time (the `clock_task` advance: wall time minus irq time) of `c` between wall
    /// times `from` and `to`.
    fn task_ns(&self, c: usize, from: u64, to: u64) -> u64 {
        let span = to.saturating_sub(from);
        let irq = irq_between(
            self.rqs[c].irq_pct,
            from + BOOT_CLOCK_NS,
            to + BOOT_CLOCK_NS,
        );
        span - irq
    }

    /// Advances work, energy and residency of `c` to now. Inlined: most calls find `c`
    /// already accounted at this instant.
    #[inline]
    fn acct(&mut self, c: usize) {
        if self.now > self.rqs[c].last_acct {
            self.acct_since_last(c);
        }
    }

    /// [`Self::acct`] of `c`, last accounted before now.
    fn acct_since_last(&mut self, c: usize) {
        let now = self.now;
        let last = self.rqs[c].last_acct;
        let dt = now - last;
        let d = self.rqs[c].domain;
        if let Some(t) = self.rqs[c].curr {
            let power = self.doms[d].cur_power_uw();
            self.rec.energy(power, dt);
            self.rec.task_on_cpu(t, c, dt);
            let from = last.max(self.rqs[c].seg_start);
            if now > from {
                let span = now - from;
                let work = self.work_in(c, self.task_ns(c, from, now));
                let task = &self.tasks[t];
                let done = if task.wall_step { span } else { work };
                let done = done.min(task.remaining);
                self.tasks[t].remaining -= done;
                self.rec.work(t, work);
            }
        } else if let (Some(st), Some(ci)) = (self.rqs[c].idle, self.idle[c].as_ref()) {
            self.rec
                .energy(ci.power_uw.get(st.idx).copied().unwrap_or(0), dt);
        }
        self.rqs[c].last_acct = now;
    }

    /// (Re)arms the completion event of `c`'s running step.
    fn arm_done(&mut self, c: usize) {
        self.rqs[c].gen += 1;
        let Some(t) = self.rqs[c].curr else { return };
        let start = self.now.max(self.rqs[c].seg_start);
        let at = if self.tasks[t].wall_step {
            let task = &mut self.tasks[t];
            *task
                .wall_until
                .get_or_insert(start.saturating_add(task.remaining))
        } else {
            let run = self.wall_for(c, self.tasks[t].remaining);
            let pct = self.rqs[c].irq_pct;
            start.saturating_add(wall_for_task_time(pct, start + BOOT_CLOCK_NS, run))
        }
        .max(start);
        let gen = self.rqs[c].gen;
        let cpu = c as u32; // CPU numbers are small
        self.push(at, Ev::Done { cpu, gen });
    }

    // ---------------------------------------------------------------- kernel state

    fn util_rq(&self, c: usize) -> CpuUtilRq {
        util_rq_of(&self.rqs[c], c)
    }

    /// What `scale_rt_capacity()` and `sched_cpu_util()` take off `c`: `cpu_util_rt()`
    /// and `cpu_util_irq()`.
    fn pressure(&self, c: usize) -> RqPressureUtil {
        let r = &self.rqs[c];
        RqPressureUtil {
            rt_util_avg: r.rt.util_avg,
            irq_util_avg: r.irq.util_avg,
            ..RqPressureUtil::default()
        }
    }

    fn capacity(&self, c: usize) -> CpuCapacity {
        capacity_of(&self.rqs[c])
    }

    fn rq_clamp(&self, c: usize, id: UclampId) -> u64 {
        rq_clamp_of(&self.rqs[c], id)
    }

    fn ou_cpu(&self, c: usize) -> OverutilizedCpu {
        let r = &self.rqs[c];
        OverutilizedCpu {
            capacity: self.capacity(c),
            cfs_util_avg: r.cfs.util_avg,
            cfs_util_est: r.cfs.util_est.enqueued(),
            rq_uclamp_min: self.rq_clamp(c, UclampId::Min),
            rq_uclamp_max: self.rq_clamp(c, UclampId::Max),
            nr_running: r.nr_running(),
        }
    }

    /// The root domain's overutilized flag may have changed from `before`: recorded
    /// when it did (the test inline: it runs at every busy tick and wake-up).
    #[inline(always)]
    fn set_ou_from(&mut self, before: bool, cpu: Option<usize>, test: OuTest) {
        if self.rd.overutilized != before {
            self.ou_changed(cpu, test);
        }
    }

    #[inline(never)]
    fn ou_changed(&mut self, cpu: Option<usize>, test: OuTest) {
        self.rec.set_ou(self.now, self.rd.overutilized);
        self.tr_ou(cpu, test);
    }

    /// `check_update_overutilized_status()` for `c`.
    #[inline(always)]
    fn check_ou(&mut self, c: usize) {
        let before = self.rd.overutilized;
        let cpu = self.ou_cpu(c);
        check_update_overutilized_status(&self.profile, self.keys, &mut self.rd, &cpu);
        self.set_ou_from(before, Some(c), OuTest::CheckUpdate);
    }

    /// `update_rq_clock()`: the clocks advance to now; the irq time of the interval
    /// comes off the task clock and, when there is some, feeds `rq->avg_irq` at the new
    /// `rq->clock` (`update_rq_clock_task()` with NONTASK_CAPACITY).
    ///
    /// Inline at its ~10 call sites (196 841 calls per 100 s run; the call's own
    /// register saves were a fifth of its cost).
    #[inline(always)]
    fn update_rq_clock(&mut self, c: usize) {
        let r = &mut self.rqs[c];
        let now = self.now + BOOT_CLOCK_NS;
        let delta = now.saturating_sub(r.clock.clock);
        let irq_delta = irq_between(r.irq_pct, r.clock.clock, now);
        let cpu = PeltClockCpu {
            curr_is_idle: r.curr.is_none(),
            cpu_capacity: r.capacity_orig,
            freq_capacity: r.freq_scale,
        };
        update_rq_clock_task(&mut r.clock, delta, irq_delta, &cpu, &self.profile);
        if irq_delta != 0 {
            r.inputs_written();
            update_irq_load_avg(
                r.clock.clock,
                &mut r.irq,
                irq_delta,
                r.freq_scale,
                r.capacity_orig,
                self.tables,
            );
        }
    }

    /// `update_curr()`: the running fair task's entity and its group entities advance,
    /// each cfs_rq's `min_vruntime` follows (see `fair`).
    ///
    /// The idle-CPU test is inline at the call sites (most `update_curr()`s of a
    /// wake-up, enqueue and switch find no running task).
    #[inline(always)]
    fn update_curr(&mut self, c: usize) {
        if let Some(t) = self.rqs[c].curr {
            self.update_curr_running(c, t);
        }
    }

    #[inline(never)]
    fn update_curr_running(&mut self, c: usize, t: usize) {
        let delta = self.task_ns(c, self.tasks[t].exec_start, self.now);
        let task = &mut self.tasks[t];
        task.exec_start = self.now;
        if task.is_fair() {
            self.update_curr_fair(c, t, delta);
        }
    }

    /// `update_load_avg()`: the task's entity (when given and attached) then the cfs_rq;
    /// returns whether the cfs_rq decayed.
    ///
    /// Inline at its call sites (171 841 calls per 100 s run): each then passes its
    /// constant arguments (`se`, `has_curr`) through.
    #[inline(always)]
    fn update_load_avg(
        &mut self,
        c: usize,
        se: Option<(usize, bool, bool)>,
        has_curr: bool,
    ) -> bool {
        let now = rq_clock_pelt(&self.rqs[c].clock);
        // The states before the update are copied for the trace only.
        let traced = self.trace.is_some();
        if let Some((t, on_rq, is_curr)) = se {
            let task = &mut self.tasks[t];
            if task.avg.last_update_time != 0 {
                let ent = SchedEntityPelt {
                    load_weight: scale_load(task.weight),
                    on_rq,
                    is_curr,
                    sched_delayed: task.se.sched_delayed,
                    group_runnable_weight: None,
                };
                let before = traced.then_some(task.avg);
                let ret = __update_load_avg_se(now, &mut task.avg, &ent, self.tables);
                if let Some(before) = before {
                    self.tr_pelt_se(c, t, now, Some(&ent), before, ret);
                }
                let task = &mut self.tasks[t];
                if task.ramp_ns.is_none() && task.avg.util_avg >= RAMP_UTIL {
                    let since = task.started_at.unwrap_or(self.now);
                    task.ramp_ns = Some(self.now.saturating_sub(since));
                }
            }
        }
        let r = &mut self.rqs[c];
        r.inputs_written();
        let before = traced.then_some(r.cfs);
        let ret = __update_load_avg_cfs_rq(
            now,
            &mut r.cfs,
            r.cfs_load_weight,
            r.nr_fair,
            has_curr,
            self.tables,
        );
        if let Some(before) = before {
            self.tr_pelt_cfs(c, now, before, has_curr, ret);
        }
        ret != 0
    }

    /// `update_rt_rq_load_avg()`; returns whether the signal decayed.
    fn update_rt(&mut self, c: usize, running: bool) -> bool {
        let r = &mut self.rqs[c];
        r.inputs_written();
        let now = rq_clock_pelt(&r.clock);
        update_rt_rq_load_avg(now, &mut r.rt, i32::from(running), self.tables) != 0
    }

    fn curr_is_rt(&self, c: usize) -> bool {
        self.rqs[c].curr.is_some_and(|t| !self.tasks[t].is_fair())
    }

    fn curr_is_fair(&self, c: usize) -> bool {
        self.rqs[c].curr.is_some_and(|t| self.tasks[t].is_fair())
    }

    /// `cpufreq_update_util(rq, 0)` from `c`.
    fn cpufreq_update(&mut self, c: usize) {
        self.cpufreq_update_flags(c, 0);
    }

    /// `cpufreq_update_util(rq, flags)` from `c`.
    fn cpufreq_update_flags(&mut self, c: usize, flags: u32) {
        let d = self.rqs[c].domain;
        // The views are kept in the domain's own buffer (one entry per CPU of the policy,
        // sized once) and rebuilt in place for the CPUs whose inputs were written since
        // (most updates find the policy's other CPUs as the last one left them). The same
        // pass finds the busy CPUs whose work so far must be accounted at the old
        // frequency (bit `i`: the policy's CPU `i`); an idle CPU's energy does not depend
        // on it and is exact however its interval is split (an integer power × time
        // sum), so it waits for that CPU's next accounting.
        let (mut unaccounted, mut beyond_64) = (0u64, false);
        let Engine {
            rqs,
            util_memo,
            sugov_views,
            doms,
            now,
            ..
        } = self;
        let (view, dom) = (&mut sugov_views[d], &mut doms[d]);
        let memo = &mut dom.get_util_memo;
        let cpus = view.iter_mut().zip(&dom.cpus).zip(memo.iter_mut());
        for (i, ((v, &cc), m)) in cpus.enumerate() {
            let r = &mut rqs[cc];
            if r.curr.is_some() && *now > r.last_acct {
                match u32::try_from(i).ok().and_then(|i| 1u64.checked_shl(i)) {
                    Some(bit) => unaccounted |= bit,
                    None => beyond_64 = true,
                }
            }
            if r.sugov_stale {
                r.sugov_stale = false;
                *v = sugov_rq(r, cc, &mut util_memo[cc]);
                *m = None;
            } else {
                // Every write of an input marks the CPU stale: the tests check it.
                debug_assert_eq!(*v, sugov_rq(r, cc, &mut { util_memo[cc] }));
            }
        }
        while unaccounted != 0 {
            let i = unaccounted.trailing_zeros() as usize; // below 64
            unaccounted &= unaccounted - 1;
            self.acct(self.doms[d].cpus[i]);
        }
        let n = self.doms[d].cpus.len();
        if beyond_64 {
            for i in 64..n {
                let cc = self.doms[d].cpus[i];
                if self.rqs[cc].curr.is_some() {
                    self.acct(cc);
                }
            }
        }
        let (view, dom) = (&self.sugov_views[d], &mut self.doms[d]);
        let old = dom.cur();
        let switched = dom.update(self.sugov_pos[c], view, &self.profile, self.now, flags);
        self.tr_sugov(d, c, flags, old);
        if let Some(f) = switched {
            let fref = self.doms[d].fref_khz;
            for i in 0..n {
                let cc = self.doms[d].cpus[i];
                let r = &mut self.rqs[cc];
                r.freq_scale = topology_set_freq_scale(r.freq_scale, u64::from(f), fref, false);
                if r.curr.is_some() {
                    self.arm_done(cc);
                }
            }
        }
    }

    fn task_util(&self, t: usize) -> TaskUtil {
        let task = &self.tasks[t];
        TaskUtil {
            task_cpu: task.cpu as i32, // CPU numbers are small
            util_avg: task.avg.util_avg,
            util_est: _task_util_est(&task.avg) as u32, // an unsigned int estimate
            on_rq_queued: matches!(task.state, TState::Runnable),
            is_current: self.rqs[task.cpu].curr == Some(t),
            last_update_time: task.avg.last_update_time,
        }
    }

    fn task_clamp(&self, t: usize, id: UclampId) -> u64 {
        u64::from(uclamp_eff_value(&self.tasks[t].uclamp, id, &self.ucfg))
    }

    // ---------------------------------------------------------------- enqueue / dequeue

    // ---------------------------------------------------------------- schedule / idle

    // ---------------------------------------------------------------- events
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Task clock at rq clock `t`.
    fn task_clock(pct: u64, t: u64) -> u64 {
        t - irq_between(pct, 0, t)
    }

    #[test]
    fn irq_time_splits_without_drift() {
        // 10 % of 1 ms is 100 µs however the interval is cut.
        assert_eq!(irq_between(10, 0, 1_000_000), 100_000);
        let cuts = [0u64, 3, 17, 999, 4_001, 333_333, 1_000_000];
        let sum: u64 = cuts.windows(2).map(|w| irq_between(10, w[0], w[1])).sum();
        assert_eq!(sum, 100_000);
        assert_eq!(irq_between(7, 5, 19), 1); // ⌊19·0.07⌋ − ⌊5·0.07⌋
        assert_eq!(irq_between(0, 0, u64::MAX), 0);
        assert_eq!(irq_between(90, 10, 5), 0);
    }

    #[test]
    fn wall_for_task_time_is_the_first_wall_time_giving_that_much_task_time() {
        for pct in [1, 7, 10, 33, 90] {
            for a in [0u64, 1, 99, 1_000_000_007, BOOT_CLOCK_NS] {
                for task in [1u64, 2, 9, 10, 11, 12_345, 4_000_000] {
                    let w = wall_for_task_time(pct, a, task);
                    let got = |w: u64| task_clock(pct, a + w) - task_clock(pct, a);
                    assert!(got(w) >= task, "{pct} {a} {task}");
                    assert!(got(w - 1) < task, "{pct} {a} {task}");
                }
            }
        }
        // 4 ms of task time at 10 % irq: 4.444… ms of wall time.
        assert_eq!(wall_for_task_time(10, BOOT_CLOCK_NS, 4_000_000), 4_444_444);
        assert_eq!(wall_for_task_time(0, 5, 77), 77);
        assert_eq!(wall_for_task_time(50, 5, 0), 0);
    }
}
