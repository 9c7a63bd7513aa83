// SPDX-License-Identifier: GPL-2.0-only
//! v6.12's delayed dequeue in the inferred replay: each CPU's fair tasks on an EEVDF
//! cfs_rq of the core ([`EevdfRq`]), driven from the sched events, to decide which sleeps
//! the kernel delays and when those tasks really leave.
//!
//! kernel/sched/fair.c (6.12.95): dequeue_entity() of a sleeping task that is not
//! eligible (`entity_eligible()`: its vruntime after the average) updates its PELT signal
//! (update_load_avg() with the task still running) and marks it `sched_delayed` instead of
//! dequeuing it: its weight stays in the cfs_rq's load, its runnable leaves
//! (set_delayed(): `h_nr_runnable--`). It leaves for good (dequeue_entities() with
//! DEQUEUE_DELAYED: a PELT update with load 1, runnable 0, then the detach of its weight)
//! when pick_next_entity() picks it, or is requeued when it is woken
//! (ttwu_runnable() → requeue_delayed_entity(): a PELT update, then clear_delayed()); a
//! load balance moves it still delayed. TASK_DEAD is a special state (DEQUEUE_SPECIAL):
//! an exiting task's last sleep is never delayed.
//!
//! The trace does not say which sleeps are delayed: each task's vruntime is rebuilt here
//! from its run time between the replay's inferred clock instants (update_curr()), its
//! weight from its priority, its placement from its stored lag (place_entity()); a task
//! the trace shows first while running or queued starts at zero lag. The decision is then
//! the core's `dequeue_entity()`. A task asleep when the trace began has a lag the model
//! cannot know, and zero is only its least value: every sleep leaves `vlag >= 0` (an
//! eligible sleeper's `V - v`; a delayed one leaves when picked, eligible, and DELAY_ZERO
//! cuts that lag to 0: finish_delayed_dequeue_entity()), and place_entity() scales a
//! positive lag up on a busy cfs_rq. Such a task, first woken onto a busy cfs_rq, keeps its
//! sleeps undelayed (its lag kept `>= 0`) until a wake-up onto an empty cfs_rq, where
//! place_entity() drops the lag (`nr_running` 0), shows its place; one first seen running
//! or forked starts at zero lag as before. Task groups: each group's entity on a CPU's root
//! cfs_rq is an entity here (a negative key, its weight from update_cfs_group()), curr
//! while one of its tasks runs, dequeued with DEQUEUE_SLEEP (so possibly delayed) when its
//! last queued task there leaves (dequeue_entities() adds the flag above the task's level
//! and clears DEQUEUE_SPECIAL); the tasks inside a group are not: a grouped task is never
//! delayed here.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use schedmath::fair::eevdf::{EevdfFeatures, SchedEntity};
use schedmath::fair::rq::{
    DequeueFlags, EevdfConfig, EevdfRq, EnqueueFlags, RqEntity, EEVDF_RQ_MAX_ENTITIES,
};
use schedmath::fair::sysctl::{update_sysctl, TunableScaling, NORMALIZED_SYSCTL_SCHED_BASE_SLICE};
use schedmath::fair::LoadWeight;
use schedmath::math::scale_load;
use schedmath::profile::Profile;

/// The lab guest's kernel as `meta.json` next to the trace records it (`cpus`, `hz`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelMeta {
    /// Online CPUs (the base slice scales with them).
    pub cpus: Option<u32>,
    /// CONFIG_HZ (TICK_NSEC bounds a lag).
    pub hz: Option<u32>,
}

/// `cpus` and `hz` from the capture's `meta.json` next to the trace (none without one).
pub fn kernel_from_meta(trace: &Path) -> anyhow::Result<KernelMeta> {
    let Some((meta, v)) = crate::replay::read_meta(trace)? else {
        return Ok(KernelMeta::default());
    };
    let field = |k: &str| -> anyhow::Result<Option<u32>> {
        match v.get(k) {
            None => Ok(None),
            Some(x) => match x.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => anyhow::bail!("{}: {k}: not a positive integer", meta.display()),
            },
        }
    };
    Ok(KernelMeta {
        cpus: field("cpus")?,
        hz: field("hz")?,
    })
}

/// A fresh kernel cfs_rq's `min_vruntime`: `(u64)(-(1LL << 20))` (init_cfs_rq()).
const INIT_MIN_VRUNTIME: u64 = 0u64.wrapping_sub(1 << 20);

/// One CPU's cfs_rq: its entities by pid, and the clock of curr's last update_curr().
struct CpuRq {
    rq: EevdfRq<EEVDF_RQ_MAX_ENTITIES>,
    slot: HashMap<i32, usize>,
    /// Slots of tasks that left this CPU (off the runqueue, not curr): reused.
    free: Vec<usize>,
    /// Trace time of curr's last update_curr() (`exec_start`).
    exec_start: Option<u64>,
    /// Tasks a balance on this CPU pulled (their entity, unscaled weight), enqueued at the
    /// CPU's next sched event: a newly-idle balance pulls after `__schedule()` dequeued
    /// the sleeping task, so they must not weigh in its decision.
    incoming: Vec<(i32, SchedEntity, u64)>,
}

/// How the model's sleep decisions compare with the answer key (the probe records'
/// `delayed=` of each task's first update after its sleep).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decisions {
    /// Sleeps decided (non-special sleeps of modelled tasks).
    pub sleeps: u64,
    /// Of those, delayed by the model.
    pub delayed: u64,
    /// Sleeps whose next record told the kernel's decision.
    pub checked: u64,
    /// The model delayed, the kernel did not.
    pub false_delay: u64,
    /// The kernel delayed, the model did not.
    pub missed_delay: u64,
    /// Task records (root cfs_rq) whose `delayed=` the model's state was compared with.
    pub records: u64,
    /// Of those, where the kernel's flag was not the model's.
    pub records_differ: u64,
    /// A task the model kept delayed woke up on another CPU or from the target's wake list
    /// (ttwu_runnable() does neither: the model's delay had ended earlier or never was).
    pub woken_elsewhere: u64,
}

impl Decisions {
    /// One sleep's decision against the kernel's.
    pub fn check(&mut self, ours: bool, kernel: bool) {
        self.checked += 1;
        self.false_delay += u64::from(ours && !kernel);
        self.missed_delay += u64::from(!ours && kernel);
    }

    /// A task record's `delayed=` against the model's state when it is written.
    pub fn record(&mut self, ours: bool, kernel: bool) {
        self.records += 1;
        self.records_differ += u64::from(ours != kernel);
    }
}

impl CpuRq {
    /// Debug aid: `V` and each queued entity as pid:vruntime-V/deadline-V/weight, `*` =
    /// curr, `d` = delayed.
    fn describe(&self) -> String {
        let v = self.rq.avg_vruntime().unwrap_or(0);
        let mut s = format!(
            "nr_queued {} V-v0 {}",
            self.rq.cfs.nr_queued,
            v.wrapping_sub(self.rq.cfs.min_vruntime) as i64
        );
        for (&pid, &i) in &self.slot {
            let Ok(se) = self.rq.se(i) else { continue };
            if !se.on_rq {
                continue;
            }
            s += &format!(
                " {pid}{}{}:{}/{}/{}",
                if self.rq.curr == Some(i) { "*" } else { "" },
                if se.sched_delayed { "d" } else { "" },
                se.vruntime.wrapping_sub(v) as i64,
                se.deadline.wrapping_sub(v) as i64,
                se.load.weight >> 10
            );
        }
        s
    }
}

/// `SCHEDMATH_REPLAY_EXPLAIN=delayed`: print each sleep's cfs_rq and decision.
pub fn explain() -> bool {
    crate::replay::explains("delayed")
}

/// The EEVDF state of every CPU's cfs_rq.
pub struct Eevdf {
    config: EevdfConfig,
    profile: Profile,
    cpus: BTreeMap<u32, CpuRq>,
    /// The CPU holding each task's entity (its lag while it sleeps).
    home: HashMap<i32, u32>,
    /// The model's decisions against the answer key.
    pub decisions: Decisions,
    /// The key (a negative pid) of each group entity, per group path and CPU.
    group_keys: BTreeMap<String, BTreeMap<u32, i32>>,
    /// How many group keys were given.
    group_count: i32,
    /// Entities asleep when the trace began, woken onto a busy cfs_rq since, whose lag the
    /// model never saw reset: their sleeps are taken as eligible (see the module doc).
    lag_unknown: HashSet<i32>,
}

impl Eevdf {
    /// The cfs_rqs of a kernel with `nr_cpus` online CPUs (the base slice scales with
    /// them: update_sysctl(), SCHED_TUNABLESCALING_LOG) and `tick_nsec` (TICK_NSEC, the
    /// least lag limit).
    pub fn new(profile: Profile, nr_cpus: u32, tick_nsec: u64) -> Self {
        let sysctl = update_sysctl(nr_cpus.max(1), TunableScaling::Log, &profile);
        Eevdf {
            config: EevdfConfig {
                base_slice: u64::from(sysctl.sysctl_sched_base_slice),
                normalized_base_slice: u64::from(NORMALIZED_SYSCTL_SCHED_BASE_SLICE),
                tick_nsec,
                features: EevdfFeatures::default(),
            },
            profile,
            cpus: BTreeMap::new(),
            home: HashMap::new(),
            decisions: Decisions::default(),
            group_keys: BTreeMap::new(),
            group_count: 0,
            lag_unknown: HashSet::new(),
        }
    }

    fn cpu(&mut self, cpu: u32) -> &mut CpuRq {
        let (config, profile) = (self.config, self.profile);
        self.cpus.entry(cpu).or_insert_with(|| CpuRq {
            rq: EevdfRq::new(INIT_MIN_VRUNTIME, config, profile),
            slot: HashMap::new(),
            free: Vec::new(),
            exec_start: None,
            incoming: Vec::new(),
        })
    }

    /// update_curr() of `cpu`'s curr up to trace time `now`; true when it asks for a
    /// reschedule.
    fn advance(&mut self, cpu: u32, now: u64) -> bool {
        let c = self.cpu(cpu);
        let start = c.exec_start.get_or_insert(now);
        if now <= *start {
            return false;
        }
        let delta = (now - *start) as i64; // trace times are below i64::MAX
        *start = now;
        c.rq.update_curr(delta).unwrap_or(false)
    }

    /// The slot of `pid`'s entity on `cpu`, moving it there (off the runqueue, with its
    /// lag) from the CPU it was on, or a new entity of `weight` (unscaled).
    fn slot(&mut self, cpu: u32, pid: i32, weight: u64) -> Option<usize> {
        let lw = LoadWeight::new(scale_load(weight));
        let mut se = SchedEntity {
            load: lw,
            ..SchedEntity::default()
        };
        match self.home.get(&pid).copied() {
            Some(h) if h == cpu => {
                let c = self.cpu(cpu);
                let i = *c.slot.get(&pid)?;
                let e = c.rq.entities.get_mut(i)?;
                if e.se.load.weight != lw.weight && !e.se.on_rq {
                    e.se.load = lw; // a new priority while it slept: set_load_weight()
                }
                return Some(i);
            }
            Some(h) => {
                if let Some(old) = self.release(h, pid) {
                    se = SchedEntity {
                        on_rq: false,
                        load: lw,
                        ..old
                    };
                }
            }
            None => {}
        }
        let c = self.cpu(cpu);
        let entry = RqEntity { se, in_tree: false };
        let i = match c.free.pop() {
            Some(i) => {
                *c.rq.entities.get_mut(i)? = entry;
                i
            }
            None => c.rq.add_entity(se).ok()?,
        };
        c.slot.insert(pid, i);
        self.home.insert(pid, cpu);
        Some(i)
    }

    /// Takes `pid`'s entity off `cpu` (dequeued first if queued, as a migration does:
    /// relative deadline, delayed flag kept) and frees its slot.
    fn release(&mut self, cpu: u32, pid: i32) -> Option<SchedEntity> {
        let c = self.cpus.get_mut(&cpu)?;
        let i = c.slot.remove(&pid)?;
        self.home.remove(&pid);
        if c.rq.se(i).ok()?.on_rq {
            let _ = c.rq.dequeue_entity(i, DequeueFlags::default());
        }
        if c.rq.curr == Some(i) {
            c.rq.curr = None;
        }
        c.free.push(i);
        c.rq.se(i).ok().copied()
    }

    /// Whether `pid` is delayed on `cpu` in the model.
    #[cfg(test)]
    fn is_delayed(&self, cpu: u32, pid: i32) -> bool {
        let Some(c) = self.cpus.get(&cpu) else {
            return false;
        };
        c.slot
            .get(&pid)
            .and_then(|&i| c.rq.se(i).ok())
            .is_some_and(|se| se.sched_delayed)
    }

    /// `pid` is queued on `cpu` (the trace showed it running or switched in without a
    /// wake-up the model saw): queued at zero lag if it is not.
    fn ensure_queued(&mut self, cpu: u32, pid: i32, weight: u64) -> Option<usize> {
        let i = self.slot(cpu, pid, weight)?;
        let rq = &mut self.cpu(cpu).rq;
        if !rq.se(i).ok()?.on_rq {
            if let Some(e) = rq.entities.get_mut(i) {
                e.se.vlag = 0;
                e.se.rel_deadline = false;
            }
            rq.enqueue_entity(i, EnqueueFlags::default()).ok()?;
        }
        Some(i)
    }

    /// A wake-up of `pid` (weight unscaled) onto `cpu` at trace time `now`: a delayed
    /// entity is requeued (requeue_delayed_entity()), any other placed with its lag
    /// (`new`: a forked task's first enqueue, ENQUEUE_INITIAL).
    pub fn wake(&mut self, cpu: u32, pid: i32, weight: u64, new: bool, now: u64) {
        self.enqueue_incoming(cpu, now);
        let first = !self.home.contains_key(&pid);
        let Some(i) = self.slot(cpu, pid, weight) else {
            self.advance(cpu, now);
            return;
        };
        // enqueue_entity() starts with update_curr(); enqueue_task_fair() with
        // ENQUEUE_DELAYED goes straight to requeue_delayed_entity(), whose lag is taken
        // against curr's vruntime as it stands (the wake-up's preemption check updates
        // curr after it).
        if !self.cpu(cpu).rq.se(i).is_ok_and(|se| se.sched_delayed) {
            self.advance(cpu, now);
        }
        let rq = &mut self.cpu(cpu).rq;
        match rq.se(i) {
            Ok(se) if se.sched_delayed => {
                let _ = rq.requeue_delayed_entity(i);
            }
            Ok(se) if !se.on_rq => {
                // place_entity() applies no lag on an empty cfs_rq (`nr_running` 0).
                let empty = rq.cfs.nr_queued == 0;
                let _ = rq.enqueue_entity(i, EnqueueFlags { initial: new });
                if first && !new && !empty {
                    self.lag_unknown.insert(pid);
                } else if empty {
                    self.lag_unknown.remove(&pid);
                }
            }
            _ => {}
        }
    }

    /// A delayed `pid` leaves `cpu` at trace time `now` without a pick the model saw
    /// (it woke up elsewhere, so its delay ended before): dequeue_entities() with
    /// DEQUEUE_DELAYED.
    pub fn end_delay(&mut self, cpu: u32, pid: i32, now: u64) {
        self.advance(cpu, now);
        let c = self.cpu(cpu);
        if let Some(&i) = c.slot.get(&pid) {
            let _ = c.rq.dequeue_entity(i, delayed_flags());
        }
        self.decisions.woken_elsewhere += 1;
    }

    /// `__schedule()` on `cpu` at trace time `now`: `prev` (a fair task of that unscaled
    /// weight, if any) sleeps (`sleep`, `special`: a special state such as TASK_DEAD) or is
    /// preempted, then the picks finish the delayed dequeues they meet and `next` (a fair
    /// task, if any) becomes curr. Returns whether prev's sleep was delayed and the
    /// delayed tasks the picks dequeued.
    pub fn schedule(
        &mut self,
        cpu: u32,
        now: u64,
        prev: Option<(i32, u64)>,
        sleep: bool,
        special: bool,
        next: Option<(i32, u64)>,
    ) -> (bool, Vec<i32>) {
        let mut delayed = false;
        if let Some((pid, w)) = prev {
            let i = self.ensure_queued(cpu, pid, w);
            let rq = &mut self.cpu(cpu).rq;
            if rq.curr.is_none() {
                if let Some(i) = i {
                    let _ = rq.set_next_entity(i);
                }
            }
            self.advance(cpu, now);
            if let (Some(i), true) = (i, sleep) {
                let unknown = self.lag_unknown.contains(&pid);
                let flags = DequeueFlags {
                    sleep: true,
                    special: special || unknown,
                    ..DequeueFlags::default()
                };
                let c = self.cpu(cpu);
                if explain() {
                    let lag = if unknown { " (lag unknown)" } else { "" };
                    eprintln!("sleep {now} cpu{cpu} pid {pid}{lag}: {}", c.describe());
                }
                delayed = c.rq.dequeue_entity(i, flags) == Ok(false);
                if unknown {
                    // Eligible at the sleep: its lag (V - v) cannot be negative.
                    if let Some(e) = c.rq.entities.get_mut(i) {
                        e.se.vlag = e.se.vlag.max(0);
                    }
                }
                if explain() {
                    eprintln!("  -> delayed {delayed}");
                }
                if !special {
                    self.decisions.sleeps += 1;
                    self.decisions.delayed += u64::from(delayed);
                }
            }
        } else {
            self.advance(cpu, now);
        }
        self.enqueue_incoming(cpu, now);
        let picked = self.pick_delayed(cpu);
        let c = self.cpu(cpu);
        c.rq.put_prev_entity();
        c.exec_start = Some(now);
        if let Some((pid, w)) = next {
            if let Some(i) = self.ensure_queued(cpu, pid, w) {
                let rq = &mut self.cpu(cpu).rq;
                if rq.se(i).is_ok_and(|se| se.sched_delayed) {
                    // Picked to run: the kernel would have requeued it at a wake-up.
                    let _ = rq.requeue_delayed_entity(i);
                }
                let _ = rq.set_next_entity(i);
            }
        }
        (delayed, picked)
    }

    /// A tick's update_curr() on `cpu` at trace time `now` (entity_tick()): true when it
    /// asks for a reschedule, whose picks ([`Self::picks`]) the caller runs in the
    /// `__schedule()` that follows.
    pub fn tick_resched(&mut self, cpu: u32, now: u64) -> bool {
        self.enqueue_incoming(cpu, now);
        self.advance(cpu, now)
    }

    /// The picks of a `__schedule()` at trace time `now` that keeps curr running (no
    /// `sched_switch`): pick_task_fair()'s update_curr(), then the delayed tasks
    /// pick_next_entity() dequeues on the way (they finish their delayed dequeue even
    /// though curr keeps running). Returns their pids.
    pub fn picks(&mut self, cpu: u32, now: u64) -> Vec<i32> {
        self.enqueue_incoming(cpu, now);
        self.advance(cpu, now);
        self.pick_delayed(cpu)
    }

    /// pick_next_entity() until it picks a task that is not delayed: each delayed pick is
    /// dequeued (DEQUEUE_SLEEP | DEQUEUE_DELAYED). Returns their pids.
    fn pick_delayed(&mut self, cpu: u32) -> Vec<i32> {
        let rtp = self.config.features.run_to_parity;
        let c = self.cpu(cpu);
        let mut out = Vec::new();
        // Each turn dequeues one entity: at most as many turns as entities.
        for _ in 0..EEVDF_RQ_MAX_ENTITIES {
            let Some(i) = c.rq.pick_eevdf(rtp) else {
                break;
            };
            // A delayed curr (prev, just delayed) is picked only when it is alone.
            if !c.rq.se(i).is_ok_and(|se| se.sched_delayed) {
                break;
            }
            if c.rq.dequeue_entity(i, delayed_flags()) != Ok(true) {
                break;
            }
            if let Some((&pid, _)) = c.slot.iter().find(|(_, &s)| s == i) {
                out.push(pid);
            }
        }
        out
    }

    /// A queued task moved by a load balance (a delayed one stays delayed): off `from`
    /// now, onto `to` placed with its lag and relative deadline — at once when another CPU
    /// pushed it, at `to`'s next sched event when `to` pulled it (`pulled`). `delayed`: the
    /// move shows it delayed even if the model had ended its delay (or never delayed it).
    pub fn migrate_queued(
        &mut self,
        pid: i32,
        (from, to): (u32, u32),
        weight: u64,
        (pulled, delayed): (bool, bool),
        now: u64,
    ) {
        if self.home.get(&pid) != Some(&from) {
            return;
        }
        self.advance(from, now);
        let Some(mut old) = self.release(from, pid) else {
            return;
        };
        old.sched_delayed |= delayed;
        self.cpu(to).incoming.push((pid, old, weight));
        if !pulled {
            self.enqueue_incoming(to, now);
        }
    }

    /// Enqueues the tasks moved to `cpu` (attach_task(): enqueue_task() after
    /// update_curr()).
    fn enqueue_incoming(&mut self, cpu: u32, now: u64) {
        let moved = std::mem::take(&mut self.cpu(cpu).incoming);
        if moved.is_empty() {
            return;
        }
        self.advance(cpu, now);
        for (pid, old, weight) in moved {
            let Some(i) = self.slot(cpu, pid, weight) else {
                continue;
            };
            let rq = &mut self.cpu(cpu).rq;
            if let Some(e) = rq.entities.get_mut(i) {
                e.se = SchedEntity {
                    on_rq: false,
                    load: e.se.load,
                    ..old
                };
            }
            let _ = rq.enqueue_entity(i, EnqueueFlags::default());
            if let Some(e) = rq.entities.get_mut(i) {
                e.se.sched_delayed = old.sched_delayed;
            }
        }
    }

    /// The model's key of task group `path`'s entity on `cpu`'s root cfs_rq: a negative
    /// pid, one per CPU and group (each CPU has its own group sched_entity).
    pub fn group_key(&mut self, cpu: u32, path: &str) -> i32 {
        // Looked up by `&str` (no key built: it runs at every grouped switch).
        if let Some(&k) = self.group_keys.get(path).and_then(|m| m.get(&cpu)) {
            return k;
        }
        let key = -2 - self.group_count;
        self.group_count += 1;
        self.group_keys
            .entry(path.to_string())
            .or_default()
            .insert(cpu, key);
        key
    }

    /// A group entity (`key`, unscaled `weight`) whose cfs_rq empties on `cpu` at trace
    /// time `now` while its task runs and stays queued (do_exit()'s sched_move_task():
    /// dequeue_entities() adds DEQUEUE_SLEEP for the parent levels, so the group entity is
    /// delayed when it is not eligible; the enqueue right after requeues it,
    /// requeue_delayed_entity(), or enqueues it, and set_next_task() makes it curr again).
    /// Returns whether it was delayed.
    pub fn group_move(&mut self, cpu: u32, key: i32, weight: u64, now: u64) -> bool {
        self.enqueue_incoming(cpu, now);
        let Some(i) = self.ensure_queued(cpu, key, weight) else {
            return false;
        };
        if self.cpu(cpu).rq.curr.is_none() {
            let _ = self.cpu(cpu).rq.set_next_entity(i);
        }
        self.advance(cpu, now);
        let flags = sleep_flags();
        let c = self.cpu(cpu);
        if explain() {
            eprintln!("group move {now} cpu{cpu} key {key}: {}", c.describe());
        }
        let rq = &mut c.rq;
        let delayed = rq.dequeue_entity(i, flags) == Ok(false);
        if explain() {
            eprintln!("  -> delayed {delayed}");
        }
        rq.put_prev_entity();
        if delayed {
            let _ = rq.requeue_delayed_entity(i);
        } else {
            let _ = rq.enqueue_entity(i, EnqueueFlags::default());
        }
        let _ = rq.set_next_entity(i);
        delayed
    }

    /// A group entity (`key`) whose group's last queued task on `cpu` was moved away at
    /// trace time `now` (detach_task()): dequeue_entities() dequeues it with DEQUEUE_SLEEP
    /// all the same, so it is delayed when not eligible.
    pub fn group_leaves(&mut self, cpu: u32, key: i32, now: u64) {
        if self.home.get(&key) != Some(&cpu) {
            return;
        }
        self.advance(cpu, now);
        let flags = sleep_flags();
        let c = self.cpu(cpu);
        if let Some(&i) = c.slot.get(&key) {
            if c.rq.se(i).is_ok_and(|se| se.on_rq && !se.sched_delayed) {
                let _ = c.rq.dequeue_entity(i, flags);
            }
        }
    }

    /// update_cfs_group() gave group entity `key` on `cpu` a new scaled weight
    /// (reweight_entity()).
    pub fn reweight_group(&mut self, cpu: u32, key: i32, weight: u64) {
        if self.home.get(&key) != Some(&cpu) || weight == 0 {
            return;
        }
        let c = self.cpu(cpu);
        if let Some(&i) = c.slot.get(&key) {
            if c.rq.se(i).is_ok_and(|se| se.load.weight != weight) {
                let _ = c.rq.reweight_entity(i, weight);
            }
        }
    }

    /// A task is gone (task_dead_fair() after its last switch).
    pub fn exit(&mut self, pid: i32) {
        self.lag_unknown.remove(&pid);
        if let Some(cpu) = self.home.get(&pid).copied() {
            self.release(cpu, pid);
        }
    }
}

fn sleep_flags() -> DequeueFlags {
    DequeueFlags {
        sleep: true,
        ..DequeueFlags::default()
    }
}

fn delayed_flags() -> DequeueFlags {
    DequeueFlags {
        sleep: true,
        delayed: true,
        ..DequeueFlags::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nice-0 tasks on one CPU (base slice 1.4 ms for two CPUs): the one that ran
    /// ahead of the average and sleeps stays queued until a pick meets it.
    #[test]
    fn a_sleeper_ahead_of_the_average_is_delayed_until_picked() {
        let mut e = Eevdf::new(Profile::MAINLINE, 2, 4_000_000);
        assert_eq!(e.config.base_slice, 1_400_000);
        e.wake(0, 1, 1024, false, 0);
        e.wake(0, 2, 1024, false, 0);
        // 1 runs 2 ms while 2 waits: 1's vruntime is 1 ms past the average.
        assert_eq!(
            e.schedule(0, 0, None, false, false, Some((1, 1024))),
            (false, vec![])
        );
        let (delayed, picked) =
            e.schedule(0, 2_000_000, Some((1, 1024)), true, false, Some((2, 1024)));
        assert!(delayed && picked.is_empty());
        assert!(e.is_delayed(0, 1));
        // 2 runs 2 ms: 1 is eligible again and its deadline is earlier: the pick at the
        // next schedule dequeues it.
        let (delayed, picked) =
            e.schedule(0, 4_000_000, Some((2, 1024)), false, false, Some((2, 1024)));
        assert_eq!((delayed, picked), (false, vec![1]));
        assert!(!e.is_delayed(0, 1));
        assert_eq!(e.decisions.sleeps, 1);
        assert_eq!(e.decisions.delayed, 1);
    }

    /// A task first woken onto a busy cfs_rq (asleep when the trace began: its lag unknown)
    /// that runs past the average is taken as eligible at its sleep; once woken onto an
    /// empty cfs_rq its place is known and the same sleep is delayed.
    #[test]
    fn a_sleeper_of_unknown_lag_is_not_delayed_until_placed_alone() {
        let mut e = Eevdf::new(Profile::MAINLINE, 2, 4_000_000);
        e.wake(0, 1, 1024, false, 0);
        e.schedule(0, 0, None, false, false, Some((1, 1024)));
        e.wake(0, 2, 1024, false, 0);
        e.schedule(0, 0, Some((1, 1024)), false, false, Some((2, 1024)));
        let (delayed, _) = e.schedule(0, 2_000_000, Some((2, 1024)), true, false, Some((1, 1024)));
        assert!(!delayed && !e.is_delayed(0, 2));
        e.schedule(0, 3_000_000, Some((1, 1024)), true, false, None);
        e.wake(0, 2, 1024, false, 4_000_000);
        e.wake(0, 1, 1024, false, 4_000_000);
        e.schedule(0, 4_000_000, None, false, false, Some((2, 1024)));
        let (delayed, _) = e.schedule(0, 6_000_000, Some((2, 1024)), true, false, Some((1, 1024)));
        assert!(delayed && e.is_delayed(0, 2));
    }

    /// A lone task is eligible (V = its own vruntime): its sleep is never delayed; a
    /// special sleep (TASK_DEAD) never is either.
    #[test]
    fn a_lone_or_special_sleep_is_not_delayed() {
        let mut e = Eevdf::new(Profile::MAINLINE, 2, 4_000_000);
        e.wake(0, 1, 1024, false, 0);
        e.schedule(0, 0, None, false, false, Some((1, 1024)));
        assert_eq!(
            e.schedule(0, 3_000_000, Some((1, 1024)), true, false, None),
            (false, vec![])
        );
        e.wake(0, 1, 1024, false, 4_000_000);
        e.wake(0, 2, 1024, false, 4_000_000);
        e.schedule(0, 4_000_000, None, false, false, Some((1, 1024)));
        let r = e.schedule(0, 6_000_000, Some((1, 1024)), true, true, Some((2, 1024)));
        assert_eq!(r, (false, vec![]));
        e.exit(1);
        assert!(!e.is_delayed(0, 1));
    }

    /// do_exit()'s sched_move_task() of a group's only task: the group entity (weight 128)
    /// that ran ahead of a nice-0 task is delayed and requeued at once (still curr, not
    /// delayed); a lone group entity is eligible.
    #[test]
    fn a_group_entity_ahead_of_the_average_is_delayed_by_the_exit_move() {
        let mut e = Eevdf::new(Profile::MAINLINE, 2, 4_000_000);
        let g = e.group_key(0, "/bg");
        assert_eq!(e.group_key(0, "/bg"), g);
        assert_ne!(e.group_key(1, "/bg"), g);
        assert!(g < 0);
        assert!(!e.group_move(0, g, 128, 0));
        e.wake(0, 2, 1024, false, 0);
        e.schedule(0, 0, None, false, false, Some((g, 128)));
        // 1 ms at weight 128 is 8 ms of vruntime: past the average.
        assert!(e.group_move(0, g, 128, 1_000_000));
        assert!(!e.is_delayed(0, g));
        // Its group's last task sleeps: DEQUEUE_SLEEP, delayed.
        let (delayed, _) = e.schedule(0, 1_100_000, Some((g, 128)), true, false, Some((2, 1024)));
        assert!(delayed && e.is_delayed(0, g));
    }
}
