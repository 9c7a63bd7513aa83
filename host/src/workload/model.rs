// SPDX-License-Identifier: GPL-2.0-only
//! The typed workload: what the simulator runs.
//!
//! Both readers (rt-app JSON, the compact periodic form) produce this model, so the
//! simulator never sees file syntax. All times are integer nanoseconds (`u64`); rt-app's
//! µs values are multiplied by 1000 exactly. Every task, phase, event and affinity keeps
//! the [`Loc`] it came from, so checks made later (e.g. [`Workload::validate`] against a
//! platform's CPU count) still name the file line.
//!
//! Semantics follow rt-app (`src/rt-app.c`, `src/rt-app_parse_config.c`):
//! * a task runs `loops` times over its phases; each phase runs `loops` times over its
//!   events, in file order;
//! * phase-level `sched`, `uclamp` and `group` are applied when the phase starts and
//!   persist until changed (rt-app treats them as events); `cpus` does not persist: a
//!   phase runs on its own mask, else the task's, else every CPU (rt-app's
//!   `set_thread_affinity()` order);
//! * `run` is work: µs at the highest capacity and frequency, so it stretches on a
//!   smaller CPU or a lower OPP; `runtime` is wall time whatever the CPU;
//! * a timer fires `period` after its previous expiry (not after the sleep starts), so
//!   it absorbs run-time jitter; `absolute` timers keep the first start as reference.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::error::WorkloadError;
use super::json::Loc;

/// Where a workload came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// rt-app JSON.
    #[serde(rename = "rt-app")]
    RtApp,
    /// The compact periodic TOML form.
    Periodic,
}

/// A parsed, consistent workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Workload {
    /// The file (or label) it came from; every error names it.
    pub origin: String,
    /// Its format.
    pub format: Format,
    /// Use-case wide settings.
    pub global: Global,
    /// Tasks in file order.
    pub tasks: Vec<TaskSpec>,
    /// Task groups (cgroups), parents before children; the root `/` is implied.
    pub groups: Vec<TaskGroup>,
    /// Keys rt-app accepts that do not change scheduling (see [`Workload::ignored_keys`])
    /// and warnings (see [`Workload::warnings`]), in file order.
    pub ignored: Vec<IgnoredKey>,
}

/// The `global` object, as far as it changes scheduling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Global {
    /// How long the use case runs; `None`: until every task has finished (rt-app `-1`).
    pub duration_ns: Option<u64>,
    /// `default_policy`: the policy of tasks that do not name one.
    pub default_policy: Policy,
    /// `schedmath.io_latency_us`: every `iorun` waits a device latency drawn uniformly
    /// from `[min, max]` ns by the seeded generator instead of `bytes / rate`.
    pub io_latency_ns: Option<(u64, u64)>,
    /// `schedmath.irq_pct`: CPUs that spend a share of their wall time in hard/soft irq,
    /// by CPU number (no two entries for one CPU).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub irq_pct: Vec<IrqShare>,
}

impl Default for Global {
    /// rt-app's defaults: run until every task ends, `SCHED_OTHER`, no extension.
    fn default() -> Self {
        Global {
            duration_ns: None,
            default_policy: Policy::Other,
            io_latency_ns: None,
            irq_pct: Vec::new(),
        }
    }
}

/// One entry of `schedmath.irq_pct`: `pct` % of `cpu`'s wall time, busy or idle, goes to
/// hard/soft irq (the kernel's irq time accounting), uniformly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IrqShare {
    /// The CPU.
    pub cpu: usize,
    /// Percentage of wall time, in [`IRQ_PCT_RANGE`].
    pub pct: u32,
    /// Where its key is.
    pub at: Loc,
}

/// What `schedmath.irq_pct` accepts: 0 % is no entry at all (omit the CPU), and above
/// 90 % a task would need more than ten times its wall time (at 100 % it would never
/// progress), a machine the kernel's irq signal saturates anyway (`scale_rt_capacity()`
/// gives 1 once irq util reaches the capacity).
pub const IRQ_PCT_RANGE: std::ops::RangeInclusive<u32> = 1..=90;

/// A key accepted but without effect on the model (logging, calibration, NUMA, ...), or
/// a warning: something rt-app accepts that the file probably does not mean (a key rt-app
/// ignores, a duplicate key json-c collapses) or that schedmath only approximates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredKey {
    /// JSON path of the key.
    pub path: String,
    /// Where it is.
    pub at: Loc,
    /// Why it does not matter here, or what the warning is.
    pub reason: String,
    /// A warning (printed by `workload check` and `simulate`, an error with `--strict`)
    /// rather than a key without scheduling effect (listed by `--verbose`).
    pub warning: bool,
}

/// A scheduling policy schedmath models (`SCHED_DEADLINE` is rejected by the readers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Policy {
    /// `SCHED_OTHER` (fair class).
    #[serde(rename = "SCHED_OTHER")]
    Other,
    /// `SCHED_IDLE` (fair class, minimal weight, the idle-CPU rule of the profile).
    #[serde(rename = "SCHED_IDLE")]
    Idle,
    /// `SCHED_FIFO` (rt class).
    #[serde(rename = "SCHED_FIFO")]
    Fifo,
    /// `SCHED_RR` (rt class).
    #[serde(rename = "SCHED_RR")]
    Rr,
}

impl Policy {
    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
        }
    }

    /// Fair class (nice) rather than rt class (rt priority).
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Idle)
    }
}

/// A policy with its parameter: nice for the fair class, rt priority for the rt class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sched {
    /// The policy.
    pub policy: Policy,
    /// Nice (-20..=19) for `SCHED_OTHER`/`SCHED_IDLE`; rt priority (1..=99) otherwise.
    pub priority: i32,
}

/// How many times something repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Loops {
    /// Until the use case's `duration` ends (rt-app `-1`).
    Forever,
    /// This many times (at least 1).
    Count(u32),
}

/// A CPU affinity mask, as CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Affinity {
    /// CPU numbers, ascending, distinct, non-empty.
    pub cpus: Vec<usize>,
    /// Where the `cpus` key is.
    pub at: Loc,
}

/// Utilisation clamps (`sched_attr.sched_util_min/max`); `None`: not set by the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Uclamp {
    /// `util_min`, 0..=1024.
    pub min: Option<u32>,
    /// `util_max`, 0..=1024.
    pub max: Option<u32>,
}

/// A task group (cgroup v2 `cpu` controller), identified by its path.
///
/// rt-app only places tasks in groups; it has no syntax for group attributes. The
/// weight and idle flag come from the `schedmath.taskgroups` extension object (which
/// rt-app itself never reads, so the file still runs under rt-app); groups not listed
/// there have the kernel defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskGroup {
    /// Absolute path, e.g. `/tg1/tg2` (never `/`, the root).
    pub path: String,
    /// The parent's path (`/` for a top-level group).
    pub parent: String,
    /// `cpu.shares` (cgroup v1 semantics, 2..=262144; default 1024): the group entity's
    /// weight against its siblings.
    pub shares: u32,
    /// `cpu.idle`: the group entity is SCHED_IDLE-like against its siblings.
    pub idle: bool,
}

pub use crate::limits::MAX_INSTANCES;

/// `cpu.shares` of a group the file does not configure (kernel `ROOT_TASK_GROUP_LOAD`).
pub const DEFAULT_SHARES: u32 = 1024;

/// The thread names of task object `name` with `n` instances: `name-0`, `name-1`, ...
/// (one naming for rt-app files, the periodic form and study sweeps).
pub fn instance_names(name: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{name}-{i}")).collect()
}

/// One task object: `instances` identical threads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskSpec {
    /// The task object's key.
    pub name: String,
    /// Where the task object's key is.
    pub at: Loc,
    /// Thread names, one per instance (`name-0`, `name-1`, ...; empty for `instance: 0`).
    pub instances: Vec<String>,
    /// Scheduling policy and nice/priority at start.
    pub sched: Sched,
    /// CPU affinity at start; `None`: every CPU.
    pub cpus: Option<Affinity>,
    /// Utilisation clamps at start.
    pub uclamp: Uclamp,
    /// Task group path at start (`/`: the root group).
    pub group: String,
    /// Delay before the first phase (rt-app `delay`).
    pub delay_ns: u64,
    /// EEVDF custom slice requested at start (`sched_attr.sched_runtime` of a
    /// `SCHED_OTHER`/`SCHED_BATCH` task, Linux 6.12+), in ns as written; the kernel
    /// clamps it to 0.1..=100 ms. `None`: the default slice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_slice_ns: Option<u64>,
    /// How many times the phases run.
    pub loops: Loops,
    /// The phases, in file order (at least one).
    pub phases: Vec<Phase>,
}

/// One phase: events repeated `loops` times, with optional attribute changes at start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// The phase's key; `None` when the task object itself is the only phase.
    pub name: Option<String>,
    /// Where the phase starts.
    pub at: Loc,
    /// How many times the events run.
    pub loops: Loops,
    /// Set at phase start; `None`: unchanged.
    pub sched: Option<Sched>,
    /// Affinity during this phase; `None`: the task's [`TaskSpec::cpus`] (not the
    /// previous phase's mask).
    pub cpus: Option<Affinity>,
    /// Clamps set at phase start (each `None`: unchanged).
    pub uclamp: Uclamp,
    /// Group the task moves to at phase start; `None`: unchanged.
    pub group: Option<String>,
    /// Custom slice set at phase start (see [`TaskSpec::custom_slice_ns`]); `None`:
    /// unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_slice_ns: Option<u64>,
    /// The events, in file order (at least one).
    pub events: Vec<EventSpec>,
}

/// One event with its key (e.g. `run1`) and position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventSpec {
    /// The key as written (`run`, `run1`, `sleep_a`, ...).
    pub key: String,
    /// Where the key is.
    pub at: Loc,
    /// What it does.
    pub event: Event,
}

/// Timer reference mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerMode {
    /// Next expiry = previous expiry + period, re-based at each phase end if missed.
    Relative,
    /// Next expiry = first start + n × period, whatever happened (misses cascade).
    Absolute,
}

/// What an event does. Durations are integer ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Capacity- and frequency-invariant work: ns at the highest capacity and OPP.
    Run {
        /// Work in ns at capacity 1024 and the highest frequency.
        work_ns: u64,
    },
    /// Busy for a wall-clock time, whatever the CPU.
    Runtime {
        /// Wall time in ns.
        wall_ns: u64,
    },
    /// Sleep for a time.
    Sleep {
        /// Sleep in ns.
        ns: u64,
    },
    /// Sleep until the timer's next expiry.
    Timer {
        /// Timer name (rt-app `ref`).
        name: String,
        /// A `unique*` name: one timer per thread instead of one shared by all.
        per_thread: bool,
        /// Period in ns (> 0).
        period_ns: u64,
        /// Reference mode.
        mode: TimerMode,
    },
    /// rt-app `iorun`: write `bytes` to the IO device. Modelled as IO wait: the task
    /// sleeps with the iowait flag set (schedutil's iowait boost sees it); the simulator
    /// chooses the device rate.
    IoRun {
        /// Bytes written.
        bytes: u64,
    },
    /// rt-app `mem`: write `bytes` into a per-thread buffer. CPU work like `run`; the
    /// simulator chooses the memory rate.
    Mem {
        /// Bytes written.
        bytes: u64,
    },
    /// `sched_yield()`.
    Yield,
    /// Block until another task resumes `name`.
    Suspend {
        /// The wake-up name (the task's own name when the file leaves it empty).
        name: String,
    },
    /// Wake the task(s) suspended on `name`.
    Resume {
        /// The wake-up name.
        name: String,
    },
    /// Take a mutex (blocks while another thread holds it).
    Lock {
        /// Mutex name.
        mutex: String,
    },
    /// Release a mutex.
    Unlock {
        /// Mutex name.
        mutex: String,
    },
    /// `pthread_cond_wait(cond, mutex)`: the mutex must be held.
    Wait {
        /// Condition name.
        cond: String,
        /// Mutex name.
        mutex: String,
    },
    /// `pthread_cond_signal(cond)`: wakes one waiter (none waiting: no effect).
    Signal {
        /// Condition name.
        cond: String,
    },
    /// `pthread_cond_broadcast(cond)`: wakes every waiter.
    Broadcast {
        /// Condition name.
        cond: String,
    },
    /// rt-app `sync`: signal `cond`, then wait on `cond` with `mutex`, which the task must
    /// hold (rt-app's `pthread_cond_signal` + `pthread_cond_wait`; it locks nothing).
    Sync {
        /// Condition name.
        cond: String,
        /// Mutex name.
        mutex: String,
    },
    /// Wait until every thread using this barrier reaches it.
    Barrier {
        /// Barrier name.
        name: String,
    },
    /// rt-app `fork`: start a new thread of task object `task` (usually declared with
    /// `instance: 0`) now; the parent goes on at once.
    Fork {
        /// The task object's key.
        task: String,
    },
}

impl Loops {
    /// The count, `None` for [`Loops::Forever`].
    pub fn count(self) -> Option<u64> {
        match self {
            Loops::Forever => None,
            Loops::Count(n) => Some(u64::from(n)),
        }
    }
}

impl Event {
    /// The time the event asks for, in ns: `run` work, `runtime`, `sleep`, a timer's
    /// period; 0 for the others (their time depends on other tasks or devices).
    pub fn nominal_ns(&self) -> u64 {
        match *self {
            Event::Run { work_ns: ns }
            | Event::Runtime { wall_ns: ns }
            | Event::Sleep { ns }
            | Event::Timer { period_ns: ns, .. } => ns,
            _ => 0,
        }
    }
}

impl TaskSpec {
    /// `delay` plus every loop of every phase of [`Event::nominal_ns`]: `Some(None)` when
    /// the task loops forever, `None` when the sum does not fit a u64 of ns (584 years).
    pub fn nominal_ns(&self) -> Option<Option<u64>> {
        let mut program = 0u64;
        for p in &self.phases {
            let once = p
                .events
                .iter()
                .try_fold(0u64, |acc, e| acc.checked_add(e.event.nominal_ns()))?;
            let Some(n) = p.loops.count() else {
                return Some(None);
            };
            program = program.checked_add(once.checked_mul(n)?)?;
        }
        let Some(n) = self.loops.count() else {
            return Some(None);
        };
        Some(Some(self.delay_ns.checked_add(program.checked_mul(n)?)?))
    }
}

/// The error for a CPU number the platform lacks.
fn no_such_cpu(cpu: usize, nr_cpus: usize) -> String {
    format!(
        "CPU {cpu} does not exist: the platform has {nr_cpus} CPUs (0..={})",
        nr_cpus.saturating_sub(1)
    )
}

impl Workload {
    /// Keys the file sets that rt-app accepts but that do not change scheduling
    /// (for `--verbose`).
    pub fn ignored_keys(&self) -> Vec<&IgnoredKey> {
        self.ignored.iter().filter(|k| !k.warning).collect()
    }

    /// What the reader warns about, in file order: keys rt-app ignores, duplicate keys
    /// json-c collapses, settings the simulator only approximates.
    pub fn warnings(&self) -> Vec<&IgnoredKey> {
        self.ignored.iter().filter(|k| k.warning).collect()
    }

    /// The number of threads (sum of instances).
    pub fn nr_threads(&self) -> usize {
        self.tasks.iter().map(|t| t.instances.len()).sum()
    }

    /// Gives task object `task` `n` instances (`task-0` ..), as a study sweep does;
    /// `None` when the workload has no such task.
    pub fn set_instances(&mut self, task: &str, n: usize) -> Option<()> {
        let t = self.tasks.iter_mut().find(|t| t.name == task)?;
        t.instances = instance_names(task, n);
        Some(())
    }

    fn invalid(&self, at: Loc, path: String, msg: String) -> WorkloadError {
        WorkloadError::Invalid {
            origin: self.origin.clone(),
            at,
            path,
            msg,
        }
    }

    /// Checks the workload against a platform with `nr_cpus` CPUs (what the simulator
    /// calls before running), after [`Workload::check`].
    pub fn validate(&self, nr_cpus: usize) -> Result<(), WorkloadError> {
        self.check()?;
        if let Some(s) = self.global.irq_pct.iter().find(|s| s.cpu >= nr_cpus) {
            return Err(self.invalid(
                s.at,
                format!("schedmath.irq_pct.{}", s.cpu),
                no_such_cpu(s.cpu, nr_cpus),
            ));
        }
        for t in &self.tasks {
            let task_path = format!("tasks.{}", t.name);
            let masks = std::iter::once((task_path.clone(), t.cpus.as_ref())).chain(
                t.phases.iter().map(|p| {
                    let path = match &p.name {
                        Some(n) => format!("{task_path}.phases.{n}"),
                        None => task_path.clone(),
                    };
                    (path, p.cpus.as_ref())
                }),
            );
            for (path, mask) in masks {
                let Some(mask) = mask else { continue };
                if let Some(&cpu) = mask.cpus.iter().find(|&&c| c >= nr_cpus) {
                    return Err(self.invalid(
                        mask.at,
                        format!("{path}.cpus"),
                        no_such_cpu(cpu, nr_cpus),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks what the readers cannot see one key at a time: references between tasks
    /// (mutexes, conditions, barriers, suspend/resume) and timer modes.
    ///
    /// Rules (rt-app creates resources by name, so a typo silently creates a new one):
    /// * an `unlock` needs a `lock` of the same mutex in the task, and vice versa;
    /// * a `wait` needs its mutex locked by the same task and its condition signalled,
    ///   broadcast or synced by some task (a `signal` nobody waits for is harmless, as
    ///   in rt-app);
    /// * a `barrier` needs at least two threads (instances count);
    /// * a timer name is `relative` or `absolute`, never both (rt-app would make it
    ///   absolute for every user);
    /// * a finite task's nominal length ([`TaskSpec::nominal_ns`]) fits a u64 of ns, so
    ///   the simulator's clock cannot wrap.
    pub fn check(&self) -> Result<(), WorkloadError> {
        // Threads of every task together: the same limit as one task's `instance`.
        let mut threads: u64 = 0;
        for t in &self.tasks {
            threads += t.instances.len() as u64;
            if threads > u64::from(MAX_INSTANCES) {
                return Err(self.invalid(
                    t.at,
                    format!("tasks.{}", t.name),
                    crate::limits::beyond(
                        format!("{threads} threads in all tasks up to this one"),
                        "MAX_INSTANCES",
                        MAX_INSTANCES,
                    ),
                ));
            }
        }
        for t in &self.tasks {
            if t.nominal_ns().is_none() {
                return Err(self.invalid(
                    t.at,
                    format!("tasks.{}", t.name),
                    "delay + loops × durations overflows 2^64 ns (584 years)".into(),
                ));
            }
        }
        let mut usage = Usage::default();
        for t in &self.tasks {
            self.check_task(t, &mut usage)?;
        }
        self.check_usage(&usage)
    }

    /// One task's events: records what other tasks must match in `usage`, refuses a timer
    /// used in two modes, then checks the task's own mutex pairing.
    fn check_task<'a>(&self, t: &'a TaskSpec, usage: &mut Usage<'a>) -> Result<(), WorkloadError> {
        let mut mutexes = TaskMutexes::default();
        let mut task_barriers: BTreeSet<&str> = BTreeSet::new();
        for p in &t.phases {
            for e in &p.events {
                let path = event_path(t, p, e);
                match &e.event {
                    Event::Lock { mutex } => {
                        mutexes.locks.entry(mutex).or_insert((e.at, path));
                    }
                    Event::Unlock { mutex } => {
                        mutexes.unlocks.entry(mutex).or_insert((e.at, path));
                    }
                    Event::Wait { cond, mutex } => {
                        mutexes.waits.push((mutex, e.at, path.clone()));
                        usage.waits.push((cond, e.at, path));
                    }
                    Event::Sync { cond, mutex } => {
                        // rt-app's sync waits with the mutex the task holds.
                        usage.wakers.insert(cond);
                        mutexes.waits.push((mutex, e.at, path.clone()));
                        usage.waits.push((cond, e.at, path));
                    }
                    Event::Signal { cond } | Event::Broadcast { cond } => {
                        usage.wakers.insert(cond);
                    }
                    Event::Barrier { name } => {
                        let b = usage.barriers.entry(name).or_insert((0, e.at, path));
                        if task_barriers.insert(name) {
                            b.0 += t.instances.len();
                        }
                    }
                    Event::Timer {
                        name,
                        per_thread,
                        mode,
                        ..
                    } => {
                        let key = if *per_thread {
                            format!("{}\0{name}", t.name)
                        } else {
                            name.clone()
                        };
                        let (first, first_at) = *usage.timers.entry(key).or_insert((*mode, e.at));
                        if first != *mode {
                            return Err(self.invalid(
                                e.at,
                                path,
                                format!(
                                    "timer \"{name}\" is {} here but {} at line {} (rt-app keeps one mode per timer)",
                                    mode_name(*mode),
                                    mode_name(first),
                                    first_at.line
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
        self.check_mutexes(&mutexes)
    }

    /// Within one task: every unlock has a lock, every lock an unlock, every wait's mutex
    /// is locked.
    fn check_mutexes(&self, m: &TaskMutexes<'_>) -> Result<(), WorkloadError> {
        for (mutex, (at, path)) in &m.unlocks {
            if !m.locks.contains_key(mutex) {
                return Err(self.invalid(
                    *at,
                    path.clone(),
                    format!("unlock of mutex \"{mutex}\" that this task never locks"),
                ));
            }
        }
        for (mutex, (at, path)) in &m.locks {
            if !m.unlocks.contains_key(mutex) {
                return Err(self.invalid(
                    *at,
                    path.clone(),
                    format!("mutex \"{mutex}\" is locked but never unlocked by this task"),
                ));
            }
        }
        for (mutex, at, path) in &m.waits {
            if !m.locks.contains_key(mutex) {
                return Err(self.invalid(
                    *at,
                    path.clone(),
                    format!(
                        "wait with mutex \"{mutex}\" that this task never locks (pthread_cond_wait needs it held)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Across tasks: waits are woken, barriers shared.
    fn check_usage(&self, u: &Usage<'_>) -> Result<(), WorkloadError> {
        for (cond, at, path) in &u.waits {
            if !u.wakers.contains(cond) {
                return Err(self.invalid(
                    *at,
                    path.clone(),
                    format!("waits on \"{cond}\" but no task signals, broadcasts or syncs it"),
                ));
            }
        }
        for (name, (users, at, path)) in &u.barriers {
            if *users < 2 {
                return Err(self.invalid(
                    *at,
                    path.clone(),
                    format!(
                        "barrier \"{name}\" has {users} thread(s); a barrier synchronises at least 2"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// What [`Workload::check`] collects across tasks (name → first place used).
#[derive(Default)]
struct Usage<'a> {
    wakers: BTreeSet<&'a str>,
    /// Threads per barrier.
    barriers: BTreeMap<&'a str, (usize, Loc, String)>,
    timers: BTreeMap<String, (TimerMode, Loc)>,
    waits: Vec<(&'a str, Loc, String)>,
}

/// One task's mutex use (mutex → first place).
#[derive(Default)]
struct TaskMutexes<'a> {
    locks: BTreeMap<&'a str, (Loc, String)>,
    unlocks: BTreeMap<&'a str, (Loc, String)>,
    /// The mutex of each wait / sync.
    waits: Vec<(&'a str, Loc, String)>,
}

/// `relative` / `absolute`.
pub fn mode_name(m: TimerMode) -> &'static str {
    match m {
        TimerMode::Relative => "relative",
        TimerMode::Absolute => "absolute",
    }
}

/// JSON path of an event, e.g. `tasks.t.phases.p1.run1` (or `tasks.t.run1`).
pub(super) fn event_path(t: &TaskSpec, p: &Phase, e: &EventSpec) -> String {
    match &p.name {
        Some(n) => format!("tasks.{}.phases.{n}.{}", t.name, e.key),
        None => format!("tasks.{}.{}", t.name, e.key),
    }
}
