// SPDX-License-Identifier: GPL-2.0-only
//! The event loop: integer ns, a binary-heap event queue (time, then insertion order), no
//! fixed step. Events: a task's activation (wake-up, timer expiry, first start), the end
//! of the running task's current step (its completion time is recomputed whenever the
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
//!   set, misfit migration, slice preemption; the root-domain load-balance pass clears or
//!   sets overutilized; idle CPUs get their blocked averages decayed every 32 ms (nohz
//!   idle balance).
//!
//! Simplifications: no irq/steal time, no DL class, no thermal pressure, no EEVDF
//! delayed dequeue, no iowait boost (rt-app `iorun` is refused); the
//! load-balance pass runs every tick; newly idle CPUs pull the least urgent waiting task
//! of the busiest CPU (a crude `sched_balance_newidle`); a migrated task's load is detached
//! at once instead of through `removed`; the seed draws nothing (the model has no random
//! input), it is recorded for the report.

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
use schedmath::math::scale_load;
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
    post_init_entity_util_avg, update_rt_rq_load_avg, PeltTables, SchedAvg, SchedEntityPelt,
};
use schedmath::schedutil::{sugov_effective_cpu_perf, SugovRq};
use schedmath::uclamp::{
    uclamp_eff_value, uclamp_rq_dec, uclamp_rq_get, uclamp_rq_inc, uclamp_se_set, UclampConfig,
    UclampId, UclampTask,
};
use schedmath::util_est::{
    _task_util_est, util_est_dequeue, util_est_enqueue, util_est_update, UtilEst, UtilEstCpu,
};
use schedmath::Profile;

use super::governors::{CpuIdle, FreqDomainState};
use super::metrics::{Metrics, Recorder};
use super::placement::{
    find_energy_efficient_cpu, find_idlest_cpu, select_idle_cpu, CpuView, PerfDomain, TaskView,
};
use super::program::{PhaseAttrs, SchedPolicy, SimTask, Step};
use super::rq::{
    base_slice_ns, pick_next, IdleStay, PickKey, Rq, SCHED_PRIO_TO_WEIGHT, WEIGHT_IDLEPRIO,
};
use super::SimError;
use crate::idle::NO_LATENCY_CONSTRAINT_NS;
use crate::platform::Platform;

/// `CONFIG_UCLAMP_BUCKETS_COUNT` default.
const UCLAMP_BUCKETS: u32 = 5;
/// The rq clocks start here ("uptime" at simulated time 0): the kernel never sees a
/// zero clock, and a zero `last_update_time` means "not attached" to PELT.
pub const BOOT_CLOCK_NS: u64 = 1_000_000_000;
/// How often an idle CPU's blocked averages are decayed (`LOAD_AVG_PERIOD` ms).
const BLOCKED_UPDATE_NS: u64 = 32_000_000;

/// Run parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// Simulated time (ns).
    pub duration_ns: u64,
    /// Tick rate.
    pub hz: u32,
    /// Recorded in the report; the model draws no random numbers.
    pub seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Tick,
    Wake(usize),
    Done { cpu: usize, gen: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TState {
    New,
    Sleeping,
    Runnable,
    Finished,
}

enum StepOutcome {
    Run,
    Sleep(u64),
    Finished,
}

struct Task {
    spec: SimTask,
    policy: SchedPolicy,
    nice: i32,
    uc_min: Option<u32>,
    uc_max: Option<u32>,
    weight: u64,
    avg: SchedAvg,
    uclamp: UclampTask,
    allowed: Vec<usize>,
    attrs_pending: bool,
    cpu: usize,
    state: TState,
    vruntime: u64,
    exec_start: u64,
    slice_start: u64,
    phase: usize,
    phase_loops: u64,
    step: usize,
    loops_done: u64,
    remaining: u64,
    wall_step: bool,
    finish_after_sleep: bool,
    timer_next: u64,
    wake_at: Option<u64>,
    woke_at: Option<u64>,
}

impl Task {
    fn is_fair(&self) -> bool {
        self.policy.rt_prio().is_none()
    }

    /// Applies a phase's attributes (the task is off its runqueue) and recomputes the
    /// weight and the uclamp requests (RT tasks default to uclamp_min 1024).
    fn apply(&mut self, a: &PhaseAttrs, n: usize) {
        if let Some(p) = a.policy {
            self.policy = p;
        }
        if let Some(nice) = a.nice {
            self.nice = nice;
        }
        if let Some(c) = &a.cpus {
            // validated when the engine was built
            self.allowed = allowed_cpus(Some(c), n).unwrap_or_else(|_| (0..n).collect());
        }
        self.uc_min = a.uclamp_min.or(self.uc_min);
        self.uc_max = a.uclamp_max.or(self.uc_max);
        self.weight = match self.policy {
            SchedPolicy::Idle => WEIGHT_IDLEPRIO,
            _ => SCHED_PRIO_TO_WEIGHT[(self.nice.clamp(-20, 19) + 20) as usize], // clamped
        };
        let rt_default = if self.is_fair() { 0 } else { 1024 };
        self.uclamp.uclamp_req[UclampId::Min as usize] = uclamp_se_set(
            self.uc_min.unwrap_or(rt_default),
            self.uc_min.is_some(),
            UCLAMP_BUCKETS,
        );
        self.uclamp.uclamp_req[UclampId::Max as usize] = uclamp_se_set(
            self.uc_max.unwrap_or(1024),
            self.uc_max.is_some(),
            UCLAMP_BUCKETS,
        );
    }
}

/// The sorted, distinct allowed CPUs (`None`: all `n`).
fn allowed_cpus(cpus: Option<&[usize]>, n: usize) -> Result<Vec<usize>, String> {
    let Some(c) = cpus else {
        return Ok((0..n).collect());
    };
    let mut c = c.to_vec();
    c.sort_unstable();
    c.dedup();
    if let Some(bad) = c.iter().find(|&&x| x >= n) {
        return Err(format!(
            "cpu {bad} does not exist (the platform has {n} CPUs)"
        ));
    }
    if c.is_empty() {
        return Err("empty cpus".into());
    }
    Ok(c)
}

/// The simulator state.
pub struct Engine<'p> {
    platform: &'p Platform,
    profile: Profile,
    tables: &'static PeltTables,
    tick_nsec: u64,
    slice: u64,
    now: u64,
    end: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    rqs: Vec<Rq>,
    doms: Vec<FreqDomainState>,
    idle: Vec<Option<CpuIdle>>,
    tasks: Vec<Task>,
    keys: EasKeys,
    ucfg: UclampConfig,
    asym: bool,
    rd: RootDomain,
    rec: Recorder,
}

/// Runs `tasks` on `platform` under `profile`.
pub fn simulate(
    platform: &Platform,
    tasks: &[SimTask],
    profile: &Profile,
    cfg: &SimConfig,
) -> Result<Metrics, SimError> {
    let mut e = Engine::new(platform, tasks, profile, cfg)?;
    e.run();
    Ok(e.finish())
}

impl<'p> Engine<'p> {
    fn new(
        platform: &'p Platform,
        specs: &[SimTask],
        profile: &Profile,
        cfg: &SimConfig,
    ) -> Result<Self, SimError> {
        let tick = schedmath::schedutil::tick_nsec(cfg.hz)
            .filter(|&t| t > 0)
            .ok_or(SimError::Config(format!("HZ {} must be > 0", cfg.hz)))?;
        let n = platform.nr_cpus();
        let uclamp_used = specs
            .iter()
            .any(|t| t.uclamp_min.is_some() || t.uclamp_max.is_some());
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
        let mut rqs: Vec<Rq> = platform
            .cpus
            .iter()
            .map(|c| Rq::new(c.id, c.capacity_orig, c.domain, profile))
            .collect();
        for r in &mut rqs {
            let d = &doms[r.domain];
            r.freq_scale = topology_set_freq_scale(1024, u64::from(d.cur()), d.fref_khz, false);
        }
        let idle = platform
            .cpus
            .iter()
            .map(|c| CpuIdle::new(platform, c.id, c.capacity_orig, profile))
            .collect();
        let mut tasks = Vec::with_capacity(specs.len());
        for s in specs {
            if s.phases.is_empty() || s.phases.iter().any(|p| p.steps.is_empty() || p.loops == 0) {
                return Err(SimError::Config(format!(
                    "task `{}`: a phase without steps or loops",
                    s.name
                )));
            }
            let allowed = allowed_cpus(s.cpus.as_deref(), n)
                .map_err(|m| SimError::Config(format!("task `{}`: {m}", s.name)))?;
            for ph in &s.phases {
                if let Some(c) = &ph.attrs.cpus {
                    allowed_cpus(Some(c), n)
                        .map_err(|m| SimError::Config(format!("task `{}`: {m}", s.name)))?;
                }
            }
            let mut task = Task {
                spec: s.clone(),
                policy: s.policy,
                nice: s.nice,
                uc_min: s.uclamp_min,
                uc_max: s.uclamp_max,
                weight: 0,
                avg: SchedAvg {
                    util_est: UtilEst::new(profile.util_est),
                    ..SchedAvg::default()
                },
                uclamp: UclampTask {
                    uclamp_enabled: true,
                    tg_is_root_or_autogroup: true,
                    tg_uclamp: [0, 1024],
                    ..UclampTask::default()
                },
                allowed,
                attrs_pending: false,
                cpu: 0,
                state: TState::New,
                vruntime: 0,
                exec_start: 0,
                slice_start: 0,
                phase: 0,
                phase_loops: 0,
                step: 0,
                loops_done: 0,
                remaining: 0,
                wall_step: false,
                finish_after_sleep: false,
                timer_next: s.delay_ns,
                wake_at: Some(s.delay_ns),
                woke_at: None,
            };
            let first = s.phases[0].attrs.clone();
            task.apply(&first, n);
            tasks.push(task);
        }
        let names: Vec<String> = tasks.iter().map(|t| t.spec.name.clone()).collect();
        let mut rec = Recorder::new(platform, &names, cfg);
        rec.set_profile(&profile.to_string());
        let mut e = Engine {
            platform,
            profile: *profile,
            tables: PeltTables::of(profile.halflife),
            tick_nsec: tick as u64, // positive, checked above
            slice: base_slice_ns(n),
            now: 0,
            end: cfg.duration_ns,
            seq: 0,
            heap: BinaryHeap::new(),
            rqs,
            doms,
            idle,
            tasks,
            keys,
            ucfg,
            asym,
            rd: RootDomain::default(),
            rec,
        };
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
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    fn run(&mut self) {
        while let Some(Reverse((at, _, ev))) = self.heap.pop() {
            if at > self.end {
                break;
            }
            self.now = at;
            match ev {
                Ev::Tick => self.tick(),
                Ev::Wake(t) => self.wake(t),
                Ev::Done { cpu, gen } => self.done(cpu, gen),
            }
        }
        self.now = self.end;
    }

    fn finish(mut self) -> Metrics {
        for c in 0..self.rqs.len() {
            self.acct(c);
            if let (Some(st), Some(ci)) = (self.rqs[c].idle, self.idle[c].as_mut()) {
                ci.exit(st.idx, st.since, self.now, false, self.tick_nsec as i64);
            }
        }
        for d in &mut self.doms {
            d.finish(self.now);
        }
        self.rec.set_ou(self.now, self.rd.overutilized);
        let mut m = self.rec.finish(self.now, &self.doms, &self.idle);
        m.task_util_avg_end = self
            .tasks
            .iter()
            .map(|t| (t.spec.name.clone(), t.avg.util_avg))
            .collect();
        m
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

    /// Advances work, energy and residency of `c` to now.
    fn acct(&mut self, c: usize) {
        let now = self.now;
        let last = self.rqs[c].last_acct;
        if now <= last {
            return;
        }
        let dt = now - last;
        let d = self.rqs[c].domain;
        let f = self.doms[d].cur();
        if let Some(t) = self.rqs[c].curr {
            let power = self.doms[d].power_uw.get(&f).copied().unwrap_or(0);
            self.rec.energy(power, dt);
            self.rec.task_on_cpu(t, c, dt);
            let from = last.max(self.rqs[c].seg_start);
            if now > from {
                let span = now - from;
                let task = &self.tasks[t];
                let done = if task.wall_step {
                    span
                } else {
                    self.work_in(c, span)
                };
                let done = done.min(task.remaining);
                let work = self.work_in(c, span);
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
        let task = &self.tasks[t];
        let wall = if task.wall_step {
            task.remaining
        } else {
            self.wall_for(c, task.remaining)
        };
        let at = self.now.max(self.rqs[c].seg_start).saturating_add(wall);
        let gen = self.rqs[c].gen;
        self.push(at, Ev::Done { cpu: c, gen });
    }

    // ---------------------------------------------------------------- kernel state

    fn util_rq(&self, c: usize) -> CpuUtilRq {
        let r = &self.rqs[c];
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

    fn capacity(&self, c: usize) -> CpuCapacity {
        let r = &self.rqs[c];
        CpuCapacity {
            capacity_orig: r.capacity_orig,
            cpu_capacity: r.cpu_capacity,
            hw_load_avg: 0,
            cpufreq_pressure: 0,
        }
    }

    fn rq_clamp(&self, c: usize, id: UclampId) -> u64 {
        u64::from(uclamp_rq_get(&self.rqs[c].uclamp, id))
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

    fn set_ou_from(&mut self, before: bool) {
        if self.rd.overutilized != before {
            self.rec.set_ou(self.now, self.rd.overutilized);
        }
    }

    /// `check_update_overutilized_status()` for `c`.
    fn check_ou(&mut self, c: usize) {
        let before = self.rd.overutilized;
        let cpu = self.ou_cpu(c);
        check_update_overutilized_status(&self.profile, self.keys, &mut self.rd, &cpu);
        self.set_ou_from(before);
    }

    fn update_rq_clock(&mut self, c: usize) {
        let r = &mut self.rqs[c];
        let delta = (self.now + BOOT_CLOCK_NS).saturating_sub(r.clock.clock);
        let cpu = PeltClockCpu {
            curr_is_idle: r.curr.is_none(),
            cpu_capacity: r.capacity_orig,
            freq_capacity: r.freq_scale,
        };
        update_rq_clock_task(&mut r.clock, delta, 0, &cpu, &self.profile);
    }

    /// `update_curr()`: the running fair task's vruntime.
    fn update_curr(&mut self, c: usize) {
        let Some(t) = self.rqs[c].curr else { return };
        let task = &mut self.tasks[t];
        let delta = self.now.saturating_sub(task.exec_start);
        task.exec_start = self.now;
        if task.is_fair() {
            task.vruntime = task
                .vruntime
                .saturating_add(delta * 1024 / task.weight.max(1));
            let v = task.vruntime;
            let qmin = self.rqs[c]
                .queue
                .iter()
                .filter(|&&q| self.tasks[q].is_fair())
                .map(|&q| self.tasks[q].vruntime)
                .min()
                .unwrap_or(v);
            let r = &mut self.rqs[c];
            r.min_vruntime = r.min_vruntime.max(v.min(qmin));
        }
    }

    /// `update_load_avg()`: the task's entity (when given and attached) then the cfs_rq;
    /// returns whether the cfs_rq decayed.
    fn update_load_avg(
        &mut self,
        c: usize,
        se: Option<(usize, bool, bool)>,
        has_curr: bool,
    ) -> bool {
        let now = rq_clock_pelt(&self.rqs[c].clock);
        if let Some((t, on_rq, is_curr)) = se {
            let task = &mut self.tasks[t];
            if task.avg.last_update_time != 0 {
                let ent = SchedEntityPelt {
                    load_weight: scale_load(task.weight),
                    on_rq,
                    is_curr,
                    sched_delayed: false,
                    group_runnable_weight: None,
                };
                __update_load_avg_se(now, &mut task.avg, &ent, self.tables);
            }
        }
        let r = &mut self.rqs[c];
        __update_load_avg_cfs_rq(
            now,
            &mut r.cfs,
            r.cfs_load_weight,
            r.nr_fair,
            has_curr,
            self.tables,
        ) != 0
    }

    fn update_rt(&mut self, c: usize, running: bool) {
        let r = &mut self.rqs[c];
        let now = rq_clock_pelt(&r.clock);
        update_rt_rq_load_avg(now, &mut r.rt, i32::from(running), self.tables);
    }

    fn curr_is_rt(&self, c: usize) -> bool {
        self.rqs[c].curr.is_some_and(|t| !self.tasks[t].is_fair())
    }

    fn curr_is_fair(&self, c: usize) -> bool {
        self.rqs[c].curr.is_some_and(|t| self.tasks[t].is_fair())
    }

    fn sugov_rq(&self, c: usize) -> SugovRq {
        let u = self.util_rq(c);
        let r = &self.rqs[c];
        SugovRq {
            capacity: r.capacity_orig,
            util_cfs: cpu_util_cfs(&u),
            util_cfs_boost: cpu_util_cfs_boost(&u),
            util_rt: r.rt.util_avg,
            rt_runnable: r.nr_rt > 0,
            uclamp_min: self.rq_clamp(c, UclampId::Min),
            uclamp_max: self.rq_clamp(c, UclampId::Max),
            idle_calls: r.idle_calls,
            ..SugovRq::default()
        }
    }

    /// `cpufreq_update_util()` from `c`.
    fn cpufreq_update(&mut self, c: usize) {
        let d = self.rqs[c].domain;
        let cpus = self.doms[d].cpus.clone();
        for &cc in &cpus {
            self.acct(cc);
        }
        let view: Vec<SugovRq> = cpus.iter().map(|&cc| self.sugov_rq(cc)).collect();
        let pos = cpus.iter().position(|&cc| cc == c).unwrap_or(0);
        let profile = self.profile;
        if let Some(f) = self.doms[d].update(pos, &view, &profile, self.now) {
            let fref = self.doms[d].fref_khz;
            for &cc in &cpus {
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

    fn enqueue(&mut self, c: usize, t: usize) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        let ucfg = self.ucfg;
        {
            let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
            uclamp_rq_inc(&mut r.uclamp, &mut task.uclamp, false, &ucfg);
        }
        if self.tasks[t].is_fair() {
            util_est_enqueue(&mut self.rqs[c].cfs, &self.tasks[t].avg);
            let attach = self.tasks[t].avg.last_update_time == 0;
            let has_curr = self.curr_is_fair(c);
            let mut decayed = self.update_load_avg(c, Some((t, false, false)), has_curr);
            if attach {
                let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
                if task.state == TState::New {
                    init_entity_runnable_average(&mut task.avg, task.weight);
                    post_init_entity_util_avg(&mut task.avg, &r.cfs, r.capacity_orig, task.weight);
                }
                attach_entity_load_avg(&mut r.cfs, &mut task.avg, task.weight, self.tables);
                decayed = true;
            }
            let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
            r.cfs_load_weight += scale_load(task.weight);
            r.nr_fair += 1;
            if task.policy == SchedPolicy::Idle {
                r.nr_idle_policy += 1;
            }
            task.vruntime = task
                .vruntime
                .max(r.min_vruntime.saturating_sub(self.slice / 2));
            if decayed {
                self.cpufreq_update(c);
            }
            self.check_ou(c);
        } else {
            let running = self.curr_is_rt(c);
            self.update_rt(c, running);
            self.rqs[c].nr_rt += 1;
            self.cpufreq_update(c);
        }
        self.tasks[t].cpu = c;
        self.tasks[t].state = TState::Runnable;
        self.rqs[c].queue.push(t);
    }

    /// Takes `t` off `c` (a sleep when `sleep`, else a migration). The caller reschedules
    /// when `t` was running.
    fn dequeue(&mut self, c: usize, t: usize, sleep: bool) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        let is_curr = self.rqs[c].curr == Some(t);
        if self.tasks[t].is_fair() {
            util_est_dequeue(&mut self.rqs[c].cfs, &self.tasks[t].avg);
            let cpu = UtilEstCpu {
                capacity_orig: self.rqs[c].capacity_orig,
                util_est_fastup: true,
            };
            util_est_update(&mut self.tasks[t].avg, sleep, &cpu);
            let has_curr = self.curr_is_fair(c);
            let decayed = self.update_load_avg(c, Some((t, true, is_curr)), has_curr);
            let (r, task) = (&mut self.rqs[c], &self.tasks[t]);
            r.cfs_load_weight -= scale_load(task.weight);
            r.nr_fair -= 1;
            if task.policy == SchedPolicy::Idle {
                r.nr_idle_policy -= 1;
            }
            if decayed {
                self.cpufreq_update(c);
            }
        } else {
            self.update_rt(c, is_curr);
            self.rqs[c].nr_rt -= 1;
        }
        let ucfg = self.ucfg;
        let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
        uclamp_rq_dec(&mut r.uclamp, &mut task.uclamp, &ucfg);
        if is_curr {
            r.curr = None;
            r.gen += 1;
        } else {
            r.queue.retain(|&q| q != t);
        }
    }

    /// Moves a queued or running task from `src` to `dst` (not rescheduling either).
    fn migrate(&mut self, t: usize, src: usize, dst: usize) {
        self.dequeue(src, t, false);
        if self.tasks[t].is_fair() {
            let (r, task) = (&mut self.rqs[src], &mut self.tasks[t]);
            detach_entity_load_avg(&mut r.cfs, &task.avg, task.weight, self.tables);
            task.avg.last_update_time = 0;
        }
        self.enqueue(dst, t);
    }

    // ---------------------------------------------------------------- schedule / idle

    fn schedule(&mut self, c: usize) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        self.rqs[c].gen += 1;
        if let Some(p) = self.rqs[c].curr.take() {
            if self.tasks[p].is_fair() {
                self.rqs[c].curr = Some(p);
                self.update_load_avg(c, Some((p, true, true)), true);
                self.rqs[c].curr = None;
            } else {
                self.update_rt(c, true);
            }
            self.rqs[c].queue.push(p);
        }
        let mut pulled = false;
        loop {
            let tasks = &self.tasks;
            let pos = pick_next(&self.rqs[c].queue, |q| PickKey {
                rt_prio: tasks[q].policy.rt_prio(),
                vruntime: tasks[q].vruntime,
            });
            if let Some(pos) = pos {
                let n = self.rqs[c].queue.remove(pos);
                let mut exit_lat = 0;
                if let Some(st) = self.rqs[c].idle.take() {
                    if let Some(ci) = self.idle[c].as_mut() {
                        ci.exit(st.idx, st.since, self.now, false, self.tick_nsec as i64);
                        exit_lat = ci.exit_latency_ns(st.idx);
                    }
                    self.rqs[c].tick_stopped = false;
                }
                if self.tasks[n].is_fair() {
                    self.update_load_avg(c, Some((n, true, false)), false);
                } else {
                    self.update_rt(c, false);
                }
                let task = &mut self.tasks[n];
                task.exec_start = self.now;
                task.slice_start = self.now;
                if let Some(w) = task.woke_at.take() {
                    self.rec.latency(self.now + exit_lat - w);
                }
                self.rqs[c].curr = Some(n);
                self.rqs[c].seg_start = self.now + exit_lat;
                self.arm_done(c);
                return;
            }
            if pulled || !self.newidle_pull(c) {
                break;
            }
            pulled = true;
        }
        if self.rqs[c].idle.is_none() {
            let r = &mut self.rqs[c];
            update_idle_rq_clock_pelt(&mut r.clock, r.cfs.util_sum, r.rt.util_sum, 0, self.tables);
            r.idle_calls += 1;
            self.idle_enter(c);
        }
    }

    /// A crude `sched_balance_newidle()`: pull the queued fair task with the largest
    /// vruntime from the CPU with the most runnable tasks (at least 2).
    fn newidle_pull(&mut self, c: usize) -> bool {
        let mut best: Option<(u32, usize, usize)> = None;
        for (src, r) in self.rqs.iter().enumerate() {
            if src == c || r.nr_running() < 2 {
                continue;
            }
            let cand = r
                .queue
                .iter()
                .copied()
                .filter(|&q| self.tasks[q].is_fair() && self.tasks[q].allowed.contains(&c))
                .max_by_key(|&q| (self.tasks[q].vruntime, q));
            if let Some(q) = cand {
                if best.is_none_or(|(n, _, _)| r.nr_running() > n) {
                    best = Some((r.nr_running(), src, q));
                }
            }
        }
        let Some((_, src, t)) = best else {
            return false;
        };
        self.migrate(t, src, c);
        true
    }

    /// The idle loop's select on `c` (which has nothing to run).
    fn idle_enter(&mut self, c: usize) {
        let now = self.now;
        let next_timer = self
            .tasks
            .iter()
            .filter(|t| t.cpu == c && matches!(t.state, TState::Sleeping | TState::New))
            .filter_map(|t| t.wake_at)
            .min();
        let sleep_length = next_timer.map_or(KTIME_MAX, |w| {
            i64::try_from(w.saturating_sub(now)).unwrap_or(KTIME_MAX)
        });
        let next_tick = (now / self.tick_nsec + 1) * self.tick_nsec;
        let to_tick = i64::try_from(next_tick - now).unwrap_or(KTIME_MAX);
        let util = sched_cpu_util(
            &self.util_rq(c),
            &RqPressureUtil {
                rt_util_avg: self.rqs[c].rt.util_avg,
                ..RqPressureUtil::default()
            },
        );
        let r = &mut self.rqs[c];
        let Some(ci) = self.idle[c].as_mut() else {
            r.tick_stopped = true;
            return;
        };
        let env = SelectEnv {
            tick_nsec: self.tick_nsec as i64,
            latency_req_ns: NO_LATENCY_CONSTRAINT_NS,
            tick_stopped: r.tick_stopped,
            sleep_length_ns: sleep_length,
            delta_tick_ns: sleep_length.min(to_tick),
            now_ns: now,
            cpu_util: util,
        };
        let sel = ci.select(&env);
        r.idle = Some(IdleStay {
            idx: sel.idx,
            since: now,
        });
        r.tick_stopped = r.tick_stopped || sel.stop_tick;
    }

    // ---------------------------------------------------------------- events

    fn select_cpu(&mut self, t: usize) -> usize {
        let views = self.cpu_views();
        let allowed = self.tasks[t].allowed.clone();
        if self.tasks[t].state == TState::New {
            return find_idlest_cpu(&views, &allowed).unwrap_or(0);
        }
        let prev = self.tasks[t].cpu;
        // sync_entity_load_avg(): decay the sleeping task to its old cfs_rq's clock.
        if self.tasks[t].is_fair() {
            let lut = self.rqs[prev].cfs.last_update_time;
            let task = &mut self.tasks[t];
            if task.avg.last_update_time != 0 {
                __update_load_avg_blocked_se(
                    lut,
                    &mut task.avg,
                    scale_load(task.weight),
                    self.tables,
                );
            }
        }
        let p = TaskView {
            util: self.task_util(t),
            uclamp_min: self.task_clamp(t, UclampId::Min),
            uclamp_max: self.task_clamp(t, UclampId::Max),
            allowed: &allowed,
        };
        let uclamp_used = self.keys.uclamp_is_used;
        if !self.tasks[t].is_fair() {
            return select_idle_cpu(&views, &p, prev, false, uclamp_used);
        }
        if self.keys.sched_energy_enabled && !self.rd.overutilized {
            let pds: Vec<PerfDomain> = self
                .platform
                .domains
                .iter()
                .filter_map(|d| d.em.as_ref().map(|em| PerfDomain { cpus: &d.cpus, em }))
                .collect();
            if let Some(c) = find_energy_efficient_cpu(&views, &pds, &p, prev, uclamp_used) {
                return c;
            }
        }
        select_idle_cpu(&views, &p, prev, self.asym, uclamp_used)
    }

    fn cpu_views(&self) -> Vec<CpuView> {
        (0..self.rqs.len())
            .map(|c| {
                let r = &self.rqs[c];
                CpuView {
                    util: self.util_rq(c),
                    capacity: self.capacity(c),
                    util_rt: r.rt.util_avg,
                    uclamp_min: self.rq_clamp(c, UclampId::Min),
                    uclamp_max: self.rq_clamp(c, UclampId::Max),
                    idle: r.is_idle() || r.is_sched_idle(),
                    nr_running: r.nr_running(),
                }
            })
            .collect()
    }

    /// Runs the task's program from its current step until it must run, sleep or end.
    fn start_step(&mut self, t: usize) -> StepOutcome {
        let now = self.now;
        let len: usize = self.tasks[t]
            .spec
            .phases
            .iter()
            .map(|p| p.steps.len())
            .sum();
        for _ in 0..(2 * len + 2) {
            let task = &mut self.tasks[t];
            let step = task.spec.phases[task.phase].steps[task.step];
            let mut sleep_until = None;
            match step {
                Step::Run(w) | Step::Runtime(w) if w > 0 => {
                    task.remaining = w;
                    task.wall_step = matches!(step, Step::Runtime(_));
                    return StepOutcome::Run;
                }
                Step::Sleep(ns) if ns > 0 => sleep_until = Some(now.saturating_add(ns)),
                Step::Timer {
                    period_ns,
                    absolute,
                } => {
                    let next = task.timer_next.saturating_add(period_ns);
                    if next > now {
                        task.timer_next = next;
                        sleep_until = Some(next);
                    } else if next == now {
                        task.timer_next = next;
                    } else {
                        self.rec.deadline_miss(t);
                        self.tasks[t].timer_next = if absolute { next } else { now };
                    }
                }
                _ => {}
            }
            let task = &mut self.tasks[t];
            let more = Self::next_step(task);
            if let Some(until) = sleep_until {
                task.finish_after_sleep = !more;
                return StepOutcome::Sleep(until);
            }
            if !more {
                return StepOutcome::Finished;
            }
        }
        // Two whole passes took no time: the program cannot advance the clock.
        StepOutcome::Finished
    }

    /// Moves to the next step (phase loops, then task loops); false when the program ends.
    fn next_step(task: &mut Task) -> bool {
        task.step += 1;
        let phase = &task.spec.phases[task.phase];
        if task.step < phase.steps.len() {
            return true;
        }
        task.step = 0;
        task.phase_loops += 1;
        if task.phase_loops < phase.loops {
            return true;
        }
        task.phase_loops = 0;
        task.phase += 1;
        if task.phase >= task.spec.phases.len() {
            task.phase = 0;
            task.loops_done += 1;
            if task.spec.loops.is_some_and(|l| task.loops_done >= l) {
                return false;
            }
        }
        if task.spec.phases.len() > 1 {
            task.attrs_pending |= !task.spec.phases[task.phase].attrs.is_empty();
        }
        true
    }

    fn sleep(&mut self, t: usize, until: u64) {
        let task = &mut self.tasks[t];
        task.state = TState::Sleeping;
        task.wake_at = Some(until);
        self.push(until, Ev::Wake(t));
    }

    fn wake(&mut self, t: usize) {
        self.tasks[t].wake_at = None;
        if self.tasks[t].finish_after_sleep {
            self.tasks[t].state = TState::Finished;
            return;
        }
        match self.start_step(t) {
            StepOutcome::Run => {}
            StepOutcome::Sleep(until) => return self.sleep(t, until),
            StepOutcome::Finished => {
                self.tasks[t].state = TState::Finished;
                return;
            }
        }
        self.apply_pending(t);
        let c = self.select_cpu(t);
        let prev = self.tasks[t].cpu;
        if self.tasks[t].state != TState::New && c != prev && self.tasks[t].is_fair() {
            let (r, task) = (&mut self.rqs[prev], &mut self.tasks[t]);
            detach_entity_load_avg(&mut r.cfs, &task.avg, task.weight, self.tables);
            task.avg.last_update_time = 0;
        }
        self.tasks[t].woke_at = Some(self.now);
        self.enqueue(c, t);
        self.check_preempt(c, t);
    }

    /// Applies the current phase's attributes if a phase start left them pending (the
    /// task is off its runqueue).
    fn apply_pending(&mut self, t: usize) {
        if !std::mem::take(&mut self.tasks[t].attrs_pending) {
            return;
        }
        let n = self.rqs.len();
        let task = &mut self.tasks[t];
        let attrs = task.spec.phases[task.phase].attrs.clone();
        task.apply(&attrs, n);
    }

    /// `wakeup_preempt()`.
    fn check_preempt(&mut self, c: usize, t: usize) {
        let Some(cur) = self.rqs[c].curr else {
            return self.schedule(c);
        };
        self.update_curr(c);
        let (w, k) = (&self.tasks[t], &self.tasks[cur]);
        let preempt = match (w.policy.rt_prio(), k.policy.rt_prio()) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => {
                (k.policy == SchedPolicy::Idle && w.policy != SchedPolicy::Idle)
                    || w.vruntime.saturating_add(self.slice) < k.vruntime
            }
        };
        if preempt {
            self.schedule(c);
        }
    }

    fn done(&mut self, c: usize, gen: u64) {
        if gen != self.rqs[c].gen {
            return;
        }
        let Some(t) = self.rqs[c].curr else { return };
        self.acct(c);
        self.tasks[t].remaining = 0;
        let more = Self::next_step(&mut self.tasks[t]);
        let outcome = if more {
            self.start_step(t)
        } else {
            StepOutcome::Finished
        };
        match outcome {
            StepOutcome::Run if self.tasks[t].attrs_pending => {
                // sched_setattr()/sched_setaffinity() on the running task: off the rq,
                // change, and back through wake-up placement.
                self.dequeue(c, t, false);
                if self.tasks[t].is_fair() {
                    let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
                    detach_entity_load_avg(&mut r.cfs, &task.avg, task.weight, self.tables);
                    task.avg.last_update_time = 0;
                }
                self.apply_pending(t);
                let dst = self.select_cpu(t);
                self.enqueue(dst, t);
                self.schedule(c);
                if dst != c {
                    self.check_preempt(dst, t);
                }
            }
            StepOutcome::Run => self.arm_done(c),
            StepOutcome::Sleep(until) => {
                self.dequeue(c, t, true);
                self.sleep(t, until);
                self.schedule(c);
            }
            StepOutcome::Finished => {
                self.dequeue(c, t, true);
                self.tasks[t].state = TState::Finished;
                self.schedule(c);
            }
        }
    }

    fn tick(&mut self) {
        let now = self.now;
        self.rec.eas_estimate(now, self.eas_estimate());
        for c in 0..self.rqs.len() {
            match self.rqs[c].curr {
                Some(t) => self.tick_busy(c, t),
                None => self.tick_idle(c),
            }
        }
        let before = self.rd.overutilized;
        let any = (0..self.rqs.len())
            .any(|c| cpu_overutilized(&self.profile, self.keys, &self.ou_cpu(c)));
        update_sd_lb_overutilized(self.keys, &mut self.rd, true, any);
        self.set_ou_from(before);
        self.push(now + self.tick_nsec, Ev::Tick);
    }

    fn tick_busy(&mut self, c: usize, t: usize) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        let fair = self.tasks[t].is_fair();
        if fair {
            self.update_load_avg(c, Some((t, true, true)), true);
        } else {
            self.update_rt(c, true);
        }
        let rq_util = RqPressureUtil {
            rt_util_avg: self.rqs[c].rt.util_avg,
            ..RqPressureUtil::default()
        };
        self.rqs[c].cpu_capacity = update_cpu_capacity(&self.capacity(c), &rq_util);
        self.cpufreq_update(c);
        if !fair {
            if self.rqs[c]
                .queue
                .iter()
                .any(|&q| self.tasks[q].policy.rt_prio() > self.tasks[t].policy.rt_prio())
            {
                self.schedule(c);
            }
            return;
        }
        self.check_ou(c);
        if self.asym && self.misfit_migrate(c, t) {
            return;
        }
        let task = &self.tasks[t];
        let ran = self.now.saturating_sub(task.slice_start);
        let waiting = self.rqs[c].queue.iter().any(|&q| {
            let o = &self.tasks[q];
            !o.is_fair() || o.vruntime < task.vruntime
        });
        if ran >= self.slice && waiting {
            self.schedule(c);
        }
    }

    /// Misfit: the running task does not fit `c`; move it to the idle allowed CPU with
    /// the largest capacity noticeably above `c`'s.
    fn misfit_migrate(&mut self, c: usize, t: usize) -> bool {
        let p = self.task_util(t);
        let (umin, umax) = (
            self.task_clamp(t, UclampId::Min),
            self.task_clamp(t, UclampId::Max),
        );
        if task_fits_cpu(
            p.util_avg,
            p.util_est,
            umin,
            umax,
            self.keys.uclamp_is_used,
            &self.capacity(c),
        ) {
            return false;
        }
        let cap = self.rqs[c].capacity_orig;
        let dst = self.tasks[t]
            .allowed
            .iter()
            .copied()
            .filter(|&d| d != c && self.rqs[d].is_idle())
            .filter(|&d| capacity_greater(self.rqs[d].capacity_orig, cap))
            .max_by_key(|&d| (self.rqs[d].capacity_orig, Reverse(d)));
        let Some(dst) = dst else { return false };
        self.migrate(t, c, dst);
        self.schedule(c);
        self.schedule(dst);
        true
    }

    fn tick_idle(&mut self, c: usize) {
        if let Some(st) = self.rqs[c].idle {
            if !self.rqs[c].tick_stopped {
                self.acct(c);
                if let Some(ci) = self.idle[c].as_mut() {
                    ci.exit(st.idx, st.since, self.now, true, self.tick_nsec as i64);
                }
                self.rqs[c].idle = None;
                self.idle_enter(c);
            }
        }
        if self.now.saturating_sub(self.rqs[c].last_blocked_update) >= BLOCKED_UPDATE_NS {
            self.rqs[c].last_blocked_update = self.now;
            self.update_rq_clock(c);
            self.update_load_avg(c, None, false);
            self.update_rt(c, false);
        }
    }

    /// The EM's estimate of the platform's power now, in `cost × util` units summed over
    /// performance domains (`em_cpu_energy()` of each with its current utilizations).
    fn eas_estimate(&self) -> u128 {
        let mut total = 0u128;
        for d in &self.platform.domains {
            let Some(em) = d.em.as_ref() else { continue };
            let (mut sum, mut max) = (0u64, 0u64);
            for &c in &d.cpus {
                let r = &self.rqs[c];
                let e = effective_cpu_util(&EffectiveUtilInput {
                    capacity: r.capacity_orig,
                    util_cfs: cpu_util_cfs(&self.util_rq(c)),
                    util_rt: r.rt.util_avg,
                    rt_runnable: r.nr_rt > 0,
                    uclamp_used: self.keys.uclamp_is_used,
                    uclamp_min: self.rq_clamp(c, UclampId::Min),
                    uclamp_max: self.rq_clamp(c, UclampId::Max),
                    ..Default::default()
                });
                sum += e.ret;
                max = max.max(sugov_effective_cpu_perf(e.ret, e.min, e.max));
            }
            total += u128::from(em_cpu_energy(em, max.min(d.capacity), sum, d.capacity).energy);
        }
        total
    }
}
