// SPDX-License-Identifier: GPL-2.0-only
//! Replay from sched events and ticks: the update points are inferred.
//!
//! Per task: on_rq from `sched_wakeup(_new)` (enqueue) until a `sched_switch` that leaves
//! it sleeping (dequeue, then util_est_update), running between `sched_switch` in and out,
//! its CPU from the wake-up target and `sched_migrate_task` (detach from the old cfs_rq,
//! attach to the new one), its weight from the printed priority (nice = prio - 120). Per
//! CPU: the root cfs_rq with the summed weights of its queued tasks, their count
//! (`h_nr_running` / `h_nr_runnable`) and whether a fair task runs. Signals are updated
//! with the core's functions where the kernel updates them: at every enqueue, dequeue,
//! switch and tick (`hrtimer_expire_entry` of `tick_sched_timer`), in the PELT clock of
//! that CPU. The lab guest has no frequency or capacity invariance, so clock_pelt is
//! clock_task and no idle time is lost.
//!
//! The kernel's values are only the answer key: at each recorded update (a probe record
//! or LISA's `sched_pelt_se`/`sched_pelt_cfs`) the model's signal is brought to the
//! kernel's instant on a copy and compared. Two things are taken from the answer key and
//! nothing else: the initial state of an entity that exists when the trace starts (its
//! first record: a trace starts with every signal already running; a task forked in the
//! trace starts from post_init_entity_util_avg() at `sched_wakeup_new`) and the offset
//! between the trace clock and the rq clock ([`clock_offset`]). What runs on a CPU before
//! its first `sched_switch` comes from the `COMM-PID` column; a dead or migrated task's
//! load leaves as the kernel's removed load (kernel/sched/fair.c:
//! remove_entity_load_avg(), folded at the cfs_rq's next update_cfs_rq_load_avg());
//! attaches and detaches the events do not show wait for their cfs_rq update's record
//! ([`Deferred`]); util_est_update() runs after the dequeue's PELT update before v6.12
//! and before it from v6.12 on.
//!
//! Not visible in sched events, hence errors: which of 6.12's sleeps are delayed (a task
//! that sleeps with negative lag stays queued, its load still counted, until picked;
//! decided from a model of each CPU's EEVDF state: [`eevdf`]), a task's move
//! into a cgroup where the trace does not record `cgroup_attach_task` ([`cgroup`]; taken
//! from its first answer-key record in the new group: [`group`]),
//! the exact rq clock reads (estimated per update
//! point from the answer key; a dequeue can come long before its `sched_switch` when a
//! newly-idle balance runs in between, which `sched_stat_runtime` shows when the trace
//! has it: `ScheduleMark`), cfs_rq updates of the load-balance softirq where the trace
//! does not record `softirq_entry` ([`softirq`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

#[path = "infer_ahead.rs"]
mod ahead;
#[path = "infer_cgroup.rs"]
mod cgroup;
#[path = "infer_clock.rs"]
mod clock;
#[path = "infer_dead.rs"]
mod dead;
#[path = "infer_drift.rs"]
mod drift;
#[path = "infer_eevdf.rs"]
mod eevdf;
#[path = "infer_fork.rs"]
mod fork;
#[path = "infer_group.rs"]
mod group;
#[path = "infer_kick.rs"]
mod kick;
#[path = "infer_lock.rs"]
mod lock;
#[path = "infer_newidle.rs"]
mod newidle;
#[path = "infer_pull.rs"]
mod pull;
#[path = "infer_rebalance.rs"]
mod rebalance;
#[path = "infer_remote.rs"]
mod remote;
#[path = "infer_softirq.rs"]
mod softirq;
#[path = "infer_stopper.rs"]
mod stopper;
#[path = "infer_timer.rs"]
mod timer;

use super::computed;
pub use eevdf::{kernel_from_meta, Decisions, KernelMeta};
pub use group::shares_from_meta;

use schedmath::pelt::propagate::reweight_entity_load_avg;
use schedmath::pelt::{
    __update_load_avg_blocked_se, __update_load_avg_se, attach_entity_load_avg,
    detach_entity_load_avg, init_entity_runnable_average, load_avg_is_decayed,
    post_init_entity_util_avg, remove_entity_load_avg, update_cfs_rq_load_avg, CfsRqRemoved,
    PeltTables, SchedAvg, SchedEntityPelt,
};
use schedmath::profile::{Profile, UtilEstVersion};
use schedmath::schedutil::sugov_effective_cpu_perf;
use schedmath::util_est::{util_est_update, UtilEst, UtilEstCpu, UTIL_AVG_UNCHANGED};

use super::probe::to_avg;
use super::stats::EntityStats;
use super::EntityKey;
use crate::trace::event::{
    is_answer_key, is_tick, Event, PeltCall, PeltCallKind, Switch, UtilEstValue, SCHED_SOFTIRQ,
};
use schedmath::fair::weight::SCHED_PRIO_TO_WEIGHT;
use schedmath::math::scale_load;

/// Attaches kept for a cfs_rq not seen yet: a trace starts with at most a few.
const MAX_ATTACH_ON_SIGHT: usize = 64;

/// Deferred steps kept per CPU (a load balance moves a few tasks at once).
const MAX_DEFERRED: usize = 64;

/// A detach or attach the kernel does right after an update of the cfs_rq that the event
/// stream does not show: done after that update's answer-key record when the trace has
/// one (the record shows the state before the step), else at the next sched event.
#[derive(Clone, Copy, Debug)]
struct Deferred {
    pid: i32,
    /// The event's trace time (the update's clock).
    ts: u64,
    step: Step,
    /// cfs_rq updates before the step, counted from the previous step.
    after: u32,
    /// `after` as the step was queued (a resumed or held move counts afresh).
    updates: u32,
    /// The step runs in `pid`'s own context (do_exit()'s sched_move_task()): while `pid`
    /// is switched out on this CPU, neither its updates nor the sched events are the step's.
    own: bool,
    /// Counts no update until the CPU's next event ([`InferReplay::hold_deferred`]).
    held: bool,
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Detach,
    Attach,
}

impl Step {
    /// cfs_rq updates of sched_move_task() before this step, counted from the previous
    /// one: the dequeue's and detach_entity_cfs_rq()'s, then attach_entity_cfs_rq()'s.
    fn move_updates(self) -> u32 {
        match self {
            Step::Detach => 2,
            Step::Attach => 1,
        }
    }
}

/// A `sched_stat_runtime` whose clock read its `runtime=` places this much (ns) before
/// the one its timestamp gives was written late ([`InferReplay::exec_chain`]): the
/// chain's own error ([`SKIP_SLACK`]); a vCPU pause between update_curr()'s clock read
/// and the write is tens of µs to ms (6.1 `periodic-25pct-16ms`, cpu0 at 12.5586 s:
/// `rcu_preempt`'s sleep read 66 µs before its stamp's instant).
const LATE_WRITE: u64 = 20_000;

/// How far past the rq clock's last update (ns) the chained clock of a preempted task's
/// `sched_stat_runtime` shows a fresh clock read ([`InferReplay::skipped_clock`]): above
/// the chain's own error (µs), below the ms a non-preempting wake-up leaves.
const SKIP_SLACK: u64 = 20_000;

/// `NICE_0_LOAD` unscaled.
const NICE_0_WEIGHT: u64 = 1024;

/// The unscaled weight of a SCHED_OTHER priority (100..=139), `None` for RT/DL.
fn prio_weight(prio: Option<i32>) -> Option<u64> {
    match prio {
        None => Some(NICE_0_WEIGHT),
        Some(p) if (100..140).contains(&p) => SCHED_PRIO_TO_WEIGHT.get((p - 100) as usize).copied(),
        Some(_) => None,
    }
}

#[derive(Default)]
struct Task {
    comm: String,
    cpu: u32,
    on_rq: bool,
    running: bool,
    /// Unscaled weight; `None` = not a fair task.
    weight: Option<u64>,
    avg: Option<SchedAvg>,
    /// `sched_process_exit` seen: its load leaves at its last switch-out (the one that
    /// does not leave it runnable: a preempted exiting task comes back to finish do_exit()).
    exiting: bool,
    /// Trace time of its pending `sched_waking` (as a clock-read instant) and the CPU that
    /// wrote it: try_to_wake_up() reads the target rq's clock for the enqueue right after
    /// it, unless it queues the wake-up to another CPU's wake list.
    waking: Option<(u64, u32)>,
    /// Migrated while asleep: detached from its old cfs_rq (`last_update_time` = 0 in
    /// the kernel), attached at the enqueue on the new one.
    detached: bool,
    /// A v6.12 record not compared yet: (ours, the kernel's) after the call.
    pending: Option<(SchedAvg, SchedAvg)>,
    /// v6.12: slept while not eligible, still queued (`sched_delayed`, [`eevdf`]).
    delayed: bool,
    /// v6.12: the model's decision at its last sleep, until a record tells the kernel's.
    sleep_decision: Option<bool>,
    /// v6.12: dequeued before a newly-idle balance's pull, its util_est updated; its
    /// `sched_switch` does not update it again.
    dequeued: bool,
    /// Debug aid: our updates since its last answer-key record, at most
    /// [`MAX_TRAIL`] (clock, state before, on_rq, running), printed by `explain`.
    trail: Vec<(u64, SchedAvg, bool, bool)>,
    stats: EntityStats,
    /// `sched_wakeup_new` seen: its signal starts from post_init_entity_util_avg().
    forked: bool,
    /// Without an answer key: what the replay computed ([`computed`]).
    computed: computed::Signal,
    /// A wake-up migration's state after remove_entity_load_avg()'s sync, kept while
    /// migrate_se_pelt_lag() has moved it on: the kernel records both updates.
    synced: Option<SchedAvg>,
}

/// Updates kept per task between two answer-key records for `explain`.
const MAX_TRAIL: usize = 4;

impl Task {
    /// The weight a fair entity is given (nice 0 when the trace did not say).
    fn weight_or_nice0(&self) -> u64 {
        self.weight.unwrap_or(NICE_0_WEIGHT)
    }

    /// Compares a pending record as it is (the task did not sleep right after it).
    fn settle(&mut self) {
        if let Some((o, k)) = self.pending.take() {
            compare(&mut self.stats, &o, &k, true);
        }
    }
}

#[derive(Default)]
struct Cpu {
    /// The running task's pid (0 = idle), once a sched_switch on this CPU was seen.
    curr: Option<i32>,
    offset: Option<i64>,
    cfs: Option<SchedAvg>,
    /// Load of tasks that died or woke up elsewhere, folded in at the next update.
    removed: CfsRqRemoved,
    /// Tasks attached before this cfs_rq's first answer-key record (at most
    /// [`MAX_ATTACH_ON_SIGHT`]).
    attach_on_sight: Vec<i32>,
    /// Steps the kernel takes right after a sched event, each after its own update of this
    /// cfs_rq (at most [`MAX_DEFERRED`]).
    deferred: VecDeque<Deferred>,
    stats: EntityStats,
    /// (sum of the kernel's perf requests, ours, count) at the cfs_rq's answer-key points.
    perf: (f64, f64, u64),
    /// A wake-up onto this CPU set need_resched on its current task: the next
    /// `__schedule()` skips update_rq_clock() (`rq_clock_skip_update()` in
    /// wakeup_preempt()) and runs on that wake-up's clock, or the rq clock's last update
    /// after it ([`Cpu::clock_read`]). (wakee pid, trace time)
    skip_clock: Option<(i32, u64)>,
    /// Trace time of the replay's last update of this CPU (an update_rq_clock() in the
    /// kernel: a tick's, or another CPU's load balance pulling from here).
    clock_read: Option<u64>,
    /// The clock this CPU read to run its wake list (queued wake-ups in a row share it).
    wakelist_clock: Option<u64>,
    /// Where `__schedule()` updated the running task, once it switches out.
    schedule: ScheduleMark,
    /// A busy tick's `hrtimer_expire_entry` whose update waits for its
    /// `sched_stat_runtime` (trace time; [`ClockPoint::TickRuntime`]).
    tick: Option<u64>,
    /// The running task's `exec_start` as the replay places it: (pid, rq clock of its
    /// switch-in or of its last update_curr()), for [`InferReplay::exec_chain`].
    exec: Option<(i32, u64)>,
    /// The running task's last update_curr() clock as its `runtime=` chains it from
    /// [`Cpu::exec`]: (pid, rq clock).
    chained: Option<(i32, u64)>,
    /// Without an answer key: what the replay computed ([`computed`]).
    computed: computed::Signal,
    /// v6.12: a tick asked for a reschedule (resched_curr() in update_deadline()), at this
    /// trace time. Its `__schedule()` runs when the task next leaves the kernel, which can
    /// be well after the tick (6.12 `periodic-100ms`, `p90` at 19.2440 s: 0.5 ms): when the
    /// CPU's next event is the running task's `sched_stat_runtime`, that is the
    /// pick_task_fair() of a `__schedule()` that kept the task, and its picks finish the
    /// delayed dequeues they meet on that clock; any other event first: on the tick's.
    resched: Option<u64>,
}

/// The inferred replay's state.
pub struct InferReplay {
    profile: Profile,
    /// The trace has no answer key ([`InferReplay::set_unkeyed`]).
    unkeyed: bool,
    tables: &'static PeltTables,
    ue_cpu: UtilEstCpu,
    tasks: HashMap<i32, Task>,
    cpus: BTreeMap<u32, Cpu>,
    /// Answer-key kind in use: probe records win over LISA events.
    probe_key: bool,
    lisa_stats: (HashMap<i32, EntityStats>, BTreeMap<u32, EntityStats>),
    /// One offset for every CPU (the guest's sched_clock is stable), if estimated.
    offsets: Option<ClockOffsets>,
    /// util_est_update() runs before the dequeue's PELT update (v6.12's
    /// `dequeue_task_fair()`), not after it (v6.1).
    util_est_before_dequeue: bool,
    /// post_init_entity_util_avg() shares the cfs_rq's util by `se->load.weight` (scaled:
    /// v6.1), not by `se_weight()` (v6.12).
    post_init_scaled_weight: bool,
    /// Task groups: their cfs_rqs and entities per CPU ([`group`]).
    groups: group::Groups,
    /// The trace has `sched_stat_runtime`: a busy tick's update waits for it.
    stat_runtime: bool,
    /// CPUs with a [`Cpu::tick`] waiting.
    ticks_waiting: usize,
    /// v6.12's delayed dequeue: the EEVDF state it is decided from (`None` before v6.12).
    eevdf: Option<eevdf::Eevdf>,
    /// The trace records the SCHED softirq: its entries run the blocked-average updates
    /// ([`softirq`]), not the idle ticks.
    sched_softirq: bool,
    /// The SCHED softirq's blocked-average walks under way.
    walks: softirq::Walks,
    /// The newly-idle balance's overload flag ([`newidle`]).
    newidle: newidle::Newidle,
    /// v6.12: balance pulls placed by their dequeue's records ([`pull`]).
    pulls: pull::Pulls,
    /// Exiting tasks switched out whose task_dead_fair() is still to come.
    dying: dead::Dying,
    /// Running tasks' `sched_stat_runtime` written by a remote enqueue ([`remote`]).
    remote: remote::RemoteUpdateCurr,
    /// Each CPU's stopper while it runs ([`stopper`]).
    stoppers: stopper::Stoppers,
    /// Each CPU's last periodic balance ([`rebalance`]).
    rebalance: rebalance::Rebalance,
    /// The `hrtimer_wakeup` callbacks under way ([`timer`]).
    timers: timer::TimerWake,
    /// Queued moves onto a CPU inside its own wake-up ([`lock`]).
    locks: lock::LockWaits,
    /// The root cfs_rqs as their first records left them ([`fork`]).
    first_records: fork::FirstRecords,
    /// Moves into a cgroup the trace records ([`cgroup`]).
    cgroups: cgroup::CgroupMoves,
    /// Idle CPUs woken without a tick ([`kick`]).
    kicked: kick::Kicked,
}

/// Where the kernel reads the rq clock relative to the event the replay sees: the
/// update points whose clock read is not at the event itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockPoint {
    /// try_to_wake_up() reads the target rq's clock for the enqueue just after writing
    /// `sched_waking`.
    Waking,
    /// `__schedule()` reads it before dequeuing a task that sleeps, well before
    /// `sched_switch` is written.
    SleepSwitch,
    /// sched_tick() reads it inside the tick's handler, after `hrtimer_expire_entry`.
    Tick,
    /// A wake-up queued to another CPU's wake list (`sched_waking` on the waker's CPU,
    /// `sched_wakeup` on the target's): the target reads its clock when it runs the list
    /// (sched_ttwu_pending()), before it writes `sched_wakeup`.
    QueuedWakeup,
    /// A tick on an idle CPU updates nothing itself; the load-balance softirq it raises
    /// updates the blocked averages (update_blocked_averages()) on a clock read after it.
    IdleTick,
    /// A sleeping task's dequeue at its own `sched_stat_runtime`: dequeue_entity() calls
    /// update_curr() right before its PELT update.
    Dequeue,
    /// A preempted task's put_prev_entity() (or pick_next_task_fair()'s update of it) at
    /// its `sched_stat_runtime`, right before its PELT update.
    PutPrev,
    /// A busy CPU's tick at the running task's `sched_stat_runtime` (sched_tick() →
    /// entity_tick(): update_curr() right before the PELT update), which follows the clock
    /// read more closely than `hrtimer_expire_entry`.
    TickRuntime,
    /// The SCHED softirq's update_blocked_averages() reads the clock after its
    /// `softirq_entry` (`vec=7`).
    Softirq,
    /// The newly-idle balance's update_blocked_averages() reads the clock before the
    /// `sched_switch` to idle ([`newidle`]).
    Newidle,
    /// A balance's attach_tasks() reads the clock, then each attach's enqueue runs
    /// update_curr() of the running task (`sched_stat_runtime`), whose put_prev in a
    /// `__schedule()` that skips its clock update runs on that read
    /// ([`ScheduleMark::attach_clock`]).
    Attach,
    /// try_to_wake_up() from an hrtimer's `hrtimer_wakeup` callback: its rq clock read
    /// relative to the timer base's `now` of `hrtimer_expire_entry` (not to a stamp;
    /// [`timer`]).
    TimerWaking,
    /// wake_up_new_task() on the forking CPU reads the clock, then activate_task()'s
    /// enqueue_entity() calls update_curr() of the running parent (`sched_stat_runtime`
    /// after `sched_process_fork`) right before the cfs_rq's update; `sched_wakeup_new`
    /// is written only after the attach.
    ForkRuntime,
    /// wake_up_new_task() onto another CPU: the forking CPU reads the target rq's clock
    /// after select_task_rq(), activate_task() updates the target's cfs_rq on it, and
    /// `sched_wakeup_new` (written on the forking CPU, naming the target) comes after the
    /// attach. The target's next `__schedule()` skips its clock update and runs on that
    /// read too (6.12 `periodic-50pct-16ms-2`, `sh` 173 forked onto idle cpu1 at
    /// 16.9423 s: its clock read 18 µs before `sched_wakeup_new`).
    ForkRemote,
}

const CLOCK_POINTS: usize = 14;

/// Where `__schedule()` updated the task it switches out, from `sched_stat_runtime`: it
/// dequeues a task that sleeps (dequeue_entity(): update_curr(), which writes the event
/// when the task ran since its last one, then its PELT update) before a newly-idle balance
/// that can take hundreds of µs, so its `sched_switch` comes late; a preempted task is
/// updated the same way by put_prev_entity(). Follows the events one CPU wrote.
/// The mark is the task's last update_curr() before its switch, not its first: a
/// `__schedule()` that picks the running task again (a tick's resched on 6.12) and
/// updates no event shows (a dequeue and enqueue of the running task) write one earlier.
#[derive(Clone, Copy, Debug, Default)]
struct ScheduleMark {
    /// The last `sched_stat_runtime` of the CPU's running task since the CPU's last sched
    /// event or timer exit: (pid, timestamp). The tick's and a local wake-up's own
    /// update_curr() come after their events' start and before their end.
    last: Option<(i32, u64)>,
    /// A task was moved to this CPU since: the next update_curr() of the running task is
    /// that task's enqueue (attach_task(), on a newly-idle balance after the dequeue or in
    /// the balance softirq), not a dequeue.
    attach: bool,
    /// The running task's update_curr() in such an enqueue (pid, timestamp) with no later
    /// one: a `__schedule()` after it that read no clock (no `sched_stat_runtime`) ran on
    /// that enqueue's clock (check_preempt_curr() / wakeup_preempt(), core.c: an enqueue
    /// while curr has need_resched set calls rq_clock_skip_update()).
    attached: Option<(i32, u64)>,
}

impl ScheduleMark {
    /// One event written on `cpu` at `ts` while `curr` ran there; true when it moved the
    /// mark.
    fn event(&mut self, ts: u64, cpu: u32, curr: i32, ev: &Event<'_>) -> bool {
        match *ev {
            Event::StatRuntime { pid, .. } if pid == curr => {
                if std::mem::take(&mut self.attach) {
                    self.attached = Some((pid, ts));
                    return false;
                }
                self.attached = None;
                self.last = Some((pid, ts));
                true
            }
            Event::Migrate { dest_cpu, .. } => {
                self.attach |= dest_cpu == cpu;
                false
            }
            Event::HrtimerExit | Event::Fork { .. } => {
                *self = ScheduleMark::default();
                false
            }
            ref e if is_sched_event(e) => {
                *self = ScheduleMark::default();
                false
            }
            _ => false,
        }
    }

    /// The stamp of the running task `curr`'s last update_curr() since the CPU's last
    /// sched event, its own or an attach's.
    fn running_update(&self, curr: i32) -> Option<u64> {
        [self.last, self.attached]
            .into_iter()
            .flatten()
            .filter(|&(p, _)| p == curr)
            .map(|(_, ts)| ts)
            .max()
    }

    /// The stamp of `prev`'s update_curr() in `__schedule()`, at its `sched_switch`.
    fn update_curr(&self, prev: i32) -> Option<u64> {
        self.last.filter(|&(p, _)| p == prev).map(|(_, ts)| ts)
    }

    /// If `prev` wrote no update_curr() of its own ([`Self::update_curr`]) since a
    /// balance's attach on this CPU, the stamp of that attach's: its `sched_switch` ran on
    /// that clock (6.12 `oversubscribed`, `busy` at 17.3846 s: preempted on the clock of a
    /// pull 53 µs before its switch).
    fn attach_clock(&self, prev: i32) -> Option<u64> {
        let (p, ts) = self.attached?;
        (p == prev && self.update_curr(prev).is_none()).then_some(ts)
    }

    /// A balance pulled a task onto this CPU while the idle task ran (the SCHED softirq on
    /// an idle CPU): attach_task()'s check_preempt_curr() (core.c) reschedules the idle
    /// task, which is queued (init_idle() sets its `on_rq`), so it asks for
    /// rq_clock_skip_update(): the `__schedule()` that follows reads no clock and picks
    /// the pulled task on the attach's (6.1 `periodic-100ms`, cpu0 at 14.3449 s: `p50`
    /// set_next_entity() on the pull's `now`, its `sched_switch` 42 µs later).
    fn idle_pull(&self, prev: i32) -> bool {
        prev == 0 && self.attach
    }
}

/// The trace-clock → rq-clock offsets (ns) of the inferred replay, estimated over the whole
/// trace from the answer key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockOffsets {
    /// rq clock minus trace clock at trace time `t0` (ns): the envelope of the answer
    /// key's `now - timestamp` (the kernel reads its clock before it writes the event, so
    /// every difference is at most the true offset).
    pub global: i64,
    /// The trace time `global` holds at.
    pub t0: u64,
    /// How fast the offset drifts, ns per second of trace: the guest's rq clock and its
    /// trace clock need not run at one rate (6.1 under QEMU: about -11 µs/s; re-measure
    /// with the largest `now - timestamp` per 0.25 s), refitted to the update points'
    /// residuals ([`drift`]).
    pub drift_ppb: i64,
    /// Per [`ClockPoint`]: the median of the kernel's `now` at the first update after
    /// that event (before the switch, for [`ClockPoint::SleepSwitch`]) minus the event's
    /// timestamp, relative to [`ClockOffsets::global_at`]; `None` when the trace has no
    /// such pair.
    pub point: [Option<i64>; CLOCK_POINTS],
}

impl ClockOffsets {
    /// The global offset at trace time `ts`.
    pub fn global_at(&self, ts: u64) -> i64 {
        let dt = i128::from(ts) - i128::from(self.t0);
        self.global + (dt * i128::from(self.drift_ppb) / 1_000_000_000) as i64
    }

    /// The rq-clock instant of an update whose clock read belongs to event `p` written at
    /// `ts`, as a trace time (to which [`ClockOffsets::global_at`] is then added).
    pub fn at(&self, p: ClockPoint, ts: u64) -> u64 {
        match self.point[p as usize] {
            Some(o) => ts.wrapping_add_signed(o),
            None => ts,
        }
    }
}

/// A fixed-size histogram of ns differences (1 µs bins, ±32 ms around a base): the
/// estimates take one pass and constant memory, whatever the trace's length.
struct Hist {
    bins: Vec<u32>,
    n: u64,
}

impl Hist {
    const BINS: usize = 1 << 16;

    fn new() -> Self {
        Hist {
            bins: vec![0; Self::BINS],
            n: 0,
        }
    }

    fn add(&mut self, base: i64, d: i64) {
        // Clocks and stamps are at most i64::MAX (the readers refuse larger ones), so
        // only a difference of differences can overflow: out of range either way.
        let bin = d.checked_sub(base).map_or(-1, |x| x / 1000);
        if (0..Self::BINS as i64).contains(&bin) {
            self.bins[bin as usize] += 1;
            self.n += 1;
        }
    }

    /// The median's bin, to be read to the ns by a [`FineBin`] fed the same samples.
    fn median_bin(&self, base: i64) -> Option<FineBin> {
        let want = self.n.div_ceil(2).max(1);
        let mut seen = 0u64;
        for (i, &h) in self.bins.iter().enumerate() {
            if seen + u64::from(h) >= want {
                return Some(FineBin {
                    lo: base.saturating_add(i as i64 * 1000),
                    want: want - seen,
                    counts: vec![0; 1000],
                });
            }
            seen += u64::from(h);
        }
        None
    }

    /// The value at `pct` % of the samples (bin centre).
    fn percentile(&self, base: i64, pct: f64) -> Option<i64> {
        if self.n == 0 {
            return None;
        }
        let want = ((pct / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &h) in self.bins.iter().enumerate() {
            seen += u64::from(h);
            if seen >= want {
                return Some(base.saturating_add(i as i64 * 1000 + 500));
            }
        }
        None
    }
}

/// One 1 µs bin of a [`Hist`] in 1 ns bins: the sample of rank `want` in it is the median.
struct FineBin {
    lo: i64,
    want: u64,
    counts: Vec<u32>,
}

impl FineBin {
    fn add(&mut self, d: i64) {
        if let Some(i) = d.checked_sub(self.lo).filter(|i| (0..1000).contains(i)) {
            self.counts[i as usize] += 1;
        }
    }

    fn value(&self) -> Option<i64> {
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= self.want {
                return Some(self.lo + i as i64);
            }
        }
        None
    }
}

/// The width of the windows whose largest `now - timestamp` traces the rq clock's drift
/// against the trace clock (ns).
const DRIFT_WINDOW_NS: u64 = 250_000_000;

/// Windows kept for the drift fit (a window per 0.25 s: 69 hours of trace).
const MAX_DRIFT_WINDOWS: usize = 1 << 20;

/// Per window of [`DRIFT_WINDOW_NS`]: the largest `now - timestamp` of the answer key's
/// records and their count.
type DriftWindows = BTreeMap<u64, (i64, u32)>;

fn drift_windows<R: std::io::Read>(input: R, name: &str) -> anyhow::Result<DriftWindows> {
    let mut r = crate::trace::report::ReportReader::new(
        std::io::BufReader::with_capacity(1 << 16, input),
        name,
    );
    let mut win = DriftWindows::new();
    while let Some(rec) = r.next_record()? {
        let Some(clock) = crate::trace::event::answer_clock(&rec) else {
            continue;
        };
        let d = clock as i64 - rec.ts_ns as i64;
        let k = rec.ts_ns / DRIFT_WINDOW_NS;
        if win.len() >= MAX_DRIFT_WINDOWS && !win.contains_key(&k) {
            continue;
        }
        let e = win.entry(k).or_insert((d, 0));
        e.0 = e.0.max(d);
        e.1 += 1;
    }
    Ok(win)
}

/// The line under every window's largest `now - timestamp` (the kernel reads its clock
/// before it writes the record, so the largest difference is the closest to the true
/// offset): the least-squares slope through the windows' maxima, raised to touch the
/// highest of them ([`envelope`]). `None` without records.
fn drift_line(win: &DriftWindows) -> Option<(i64, u64, i64)> {
    let (&k0, _) = win.iter().next()?;
    let t0 = k0 * DRIFT_WINDOW_NS;
    // Windows with enough records for their maximum to sit on the envelope.
    let pts: Vec<(f64, f64)> = win
        .iter()
        .filter(|(_, &(_, n))| n >= 8)
        .map(|(&k, &(m, _))| {
            (
                ((k * DRIFT_WINDOW_NS + DRIFT_WINDOW_NS / 2) - t0) as f64,
                m as f64,
            )
        })
        .collect();
    let slope = if pts.len() >= 2 {
        let n = pts.len() as f64;
        let (mx, my) = pts
            .iter()
            .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
        let (sxy, sxx) = pts.iter().fold((0.0, 0.0), |(a, b), &(x, y)| {
            (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
        });
        if sxx > 0.0 {
            sxy / sxx
        } else {
            0.0
        }
    } else {
        0.0
    };
    let ppb = (slope * 1e9).round() as i64;
    Some((envelope(win, t0, ppb), t0, ppb))
}

/// The offset at `t0` of the line of slope `ppb` raised to touch the highest window
/// maximum.
fn envelope(win: &DriftWindows, t0: u64, ppb: i64) -> i64 {
    let line = |k: u64| ((k * DRIFT_WINDOW_NS - t0) as i128 * ppb as i128 / 1_000_000_000) as i64;
    win.iter()
        .map(|(&k, &(m, _))| m - line(k))
        .max()
        .unwrap_or(0)
}

/// The clock offsets of the inferred replay ([`ClockOffsets`]), from the answer key, in
/// four passes over the trace, five with ns stamps (`open` gives it afresh): the drifting
/// global offset ([`drift_line`]), then, per CPU, the pairs of an update point's event and the kernel's
/// update that read the clock there, relative to that line; the line's slope refitted to
/// those pairs ([`drift`]) and their medians taken again.
pub fn clock_offset<R: std::io::Read>(
    mut open: impl FnMut() -> anyhow::Result<R>,
    name: &str,
) -> anyhow::Result<Option<ClockOffsets>> {
    let win = drift_windows(open()?, name)?;
    let Some((global, t0, drift_ppb)) = drift_line(&win) else {
        return Ok(None);
    };
    let mut o = ClockOffsets {
        global,
        t0,
        drift_ppb,
        point: [None; CLOCK_POINTS],
    };
    // The points' residuals about their medians still drift: refit the slope to them
    // (with ns stamps in the medians' second look, else in a pass of its own).
    let fit = match point_medians(&mut open, name, &mut o, true)? {
        Some(fit) => fit,
        None => {
            let mut fit = drift::DriftFit::new(t0, o.point);
            point_samples(open()?, name, &o, |p, d, ts| fit.add(p, d, ts))?;
            fit
        }
    };
    if let Some(ppb) = fit.slope_ppb() {
        o.drift_ppb += ppb;
        o.global = envelope(&win, t0, o.drift_ppb);
        point_medians(&mut open, name, &mut o, false)?;
    }
    Ok(Some(o))
}

/// Each update point's median offset in `o` ([`ClockOffsets::point`]), relative to `o`'s
/// drifting global offset; with ns stamps and `refit`, the drift fit about the 1 µs
/// medians taken in the same pass ([`drift`]).
fn point_medians<R: std::io::Read>(
    open: &mut impl FnMut() -> anyhow::Result<R>,
    name: &str,
    o: &mut ClockOffsets,
    refit: bool,
) -> anyhow::Result<Option<drift::DriftFit>> {
    let b = -(Hist::BINS as i64 / 2) * 1000;
    let mut points: [Hist; CLOCK_POINTS] = std::array::from_fn(|_| Hist::new());
    let digits = point_samples(open()?, name, o, |p, d, _| points[p as usize].add(b, d))?;
    for (i, h) in points.iter().enumerate() {
        o.point[i] = h.percentile(b, 50.0);
    }
    if digits == Some(9) {
        // ns stamps: the median to the ns, from a second look inside each median's bin.
        let mut fine: [Option<FineBin>; CLOCK_POINTS] =
            std::array::from_fn(|i| points[i].median_bin(b));
        let mut fit = refit.then(|| drift::DriftFit::new(o.t0, o.point));
        point_samples(open()?, name, o, |p, d, ts| {
            if let Some(f) = fine[p as usize].as_mut() {
                f.add(d);
            }
            if let Some(f) = fit.as_mut() {
                f.add(p, d, ts);
            }
        })?;
        for (i, f) in fine.iter().enumerate() {
            if let Some(m) = f.as_ref().and_then(FineBin::value) {
                o.point[i] = Some(m);
            }
        }
        return Ok(fit);
    }
    Ok(None)
}

/// Calls `sample` with every pair of an update point's event and the kernel's update that
/// read the clock there, as (point, clock read − event timestamp − `o`'s global offset);
/// returns the stamps' fraction digits (6 = µs, 9 = ns).
fn point_samples<R: std::io::Read>(
    input: R,
    name: &str,
    o: &ClockOffsets,
    mut sample: impl FnMut(ClockPoint, i64, u64),
) -> anyhow::Result<Option<usize>> {
    let mut r = crate::trace::report::ReportReader::new(
        std::io::BufReader::with_capacity(1 << 16, input),
        name,
    );
    // The CPU each task's pending `sched_waking` was written on (one entry per task).
    let mut waking_cpu: HashMap<i32, u32> = HashMap::new();
    // per CPU: (pending update point and its timestamp, `now` of the last update since
    // the last sched event, the schedule mark and `now` of the first update after it)
    type PerCpu = (
        Option<(ClockPoint, u64)>,
        Option<u64>,
        ScheduleMark,
        Option<u64>,
    );
    let mut state: BTreeMap<u32, PerCpu> = BTreeMap::new();
    let mut idle_reads: BTreeMap<u32, newidle::IdleEntryReads> = BTreeMap::new();
    let mut timers = timer::TimerWake::default();
    // CPUs whose running task forked since their last sched event.
    let mut forked: BTreeSet<u32> = BTreeSet::new();
    // Per CPU, since its last sched event: the last cfs_rq update of another CPU it wrote
    // (that CPU, its `now`): a fork's enqueue onto that CPU.
    let mut remote_reads: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
    // A clock read minus an event's timestamp, relative to the drifting global offset.
    let rel = |now: u64, ts: u64| now as i64 - ts as i64 - o.global_at(ts);
    while let Some(rec) = r.next_record()? {
        let ev = Event::parse(&rec);
        let reads = idle_reads.entry(rec.cpu).or_default();
        match &ev {
            Ok(Event::PeltCall(c)) if c.kind == PeltCallKind::CfsRq && c.cpu == rec.cpu => {
                reads.record(c.now)
            }
            Ok(Event::Switch(s)) if s.prev_pid != 0 && s.next_pid == 0 && !s.prev_runnable() => {
                if let Some(now) = reads.newidle() {
                    sample(ClockPoint::Newidle, rel(now, rec.ts_ns), rec.ts_ns);
                }
            }
            _ => {}
        }
        if let Ok(e) = &ev {
            reads.event(e, rec.pid);
            if let Some(d) = timers.sample(rec.cpu, e) {
                sample(ClockPoint::TimerWaking, d, rec.ts_ns);
            }
        }
        let remote_read = if ev.as_ref().is_ok_and(is_sched_event) {
            forked.remove(&rec.cpu);
            remote_reads.remove(&rec.cpu)
        } else {
            None
        };
        let st = state.entry(rec.cpu).or_default();
        let mark = st.2;
        if let Ok(e) = &ev {
            if st.2.event(rec.ts_ns, rec.cpu, rec.pid, e) {
                st.3 = None;
            }
        }
        match ev {
            Ok(Event::PeltCall(ref c)) => {
                if c.kind == PeltCallKind::CfsRq && c.cpu != rec.cpu {
                    remote_reads.insert(rec.cpu, (c.cpu, c.now));
                }
                st.1 = Some(c.now);
                if st.2.last.is_some() {
                    st.3.get_or_insert(c.now);
                }
                if let Some((p, ts)) = st.0.take() {
                    sample(p, rel(c.now, ts), ts);
                }
            }
            Ok(Event::Switch(ref s)) => {
                let at = mark.update_curr(s.prev_pid).zip(st.3);
                match (st.1, s.prev_runnable(), at) {
                    _ if s.prev_pid == 0 => {}
                    (Some(_), false, Some((at, now))) => {
                        sample(ClockPoint::Dequeue, rel(now, at), at);
                    }
                    (Some(now), false, None) => {
                        sample(ClockPoint::SleepSwitch, rel(now, rec.ts_ns), rec.ts_ns);
                    }
                    (_, true, Some((at, now))) => sample(ClockPoint::PutPrev, rel(now, at), at),
                    _ => {}
                }
                *st = Default::default();
            }
            Ok(Event::Wakeup {
                waking: true, pid, ..
            }) => {
                waking_cpu.insert(pid, rec.cpu);
                (st.0, st.1) = (Some((ClockPoint::Waking, rec.ts_ns)), None);
            }
            Ok(Event::Wakeup {
                waking: false,
                pid,
                new,
                target_cpu,
                ..
            }) => {
                if let Some((_, now)) = remote_read.filter(|&(c, _)| new && target_cpu == Some(c)) {
                    sample(ClockPoint::ForkRemote, rel(now, rec.ts_ns), rec.ts_ns);
                }
                let queued = waking_cpu.remove(&pid).is_some_and(|c| c != rec.cpu);
                if let (true, Some(now)) = (queued, st.1) {
                    sample(ClockPoint::QueuedWakeup, rel(now, rec.ts_ns), rec.ts_ns);
                }
                st.1 = None;
            }
            Ok(Event::HrtimerExpire { function, .. }) if is_tick(function) => {
                let p = if rec.pid == 0 {
                    ClockPoint::IdleTick
                } else {
                    ClockPoint::Tick
                };
                (st.0, st.1) = (Some((p, rec.ts_ns)), None);
            }
            Ok(Event::Fork { .. }) => {
                forked.insert(rec.cpu);
            }
            Ok(Event::StatRuntime { pid, .. }) if pid == rec.pid => {
                if let Some((ClockPoint::Tick, _)) = st.0 {
                    st.0 = Some((ClockPoint::TickRuntime, rec.ts_ns));
                } else if forked.remove(&rec.cpu) {
                    st.0 = Some((ClockPoint::ForkRuntime, rec.ts_ns));
                } else if mark.attach && !st.2.attach {
                    // The attach's enqueue updates the cfs_rq next, on its clock read.
                    st.0 = Some((ClockPoint::Attach, rec.ts_ns));
                }
            }
            Ok(Event::Softirq {
                vec: SCHED_SOFTIRQ,
                exit: false,
            }) => (st.0, st.1) = (Some((ClockPoint::Softirq, rec.ts_ns)), None),
            Ok(Event::Exit { .. }) => st.1 = None,
            _ => {}
        }
    }
    Ok(r.timestamp_digits())
}

/// The events the timeline is rebuilt from.
fn is_sched_event(ev: &Event<'_>) -> bool {
    matches!(
        ev,
        Event::Switch(_)
            | Event::Wakeup { .. }
            | Event::Migrate { .. }
            | Event::HrtimerExpire { .. }
            | Event::Exit { .. }
    )
}

fn se_pelt(t: &Task) -> SchedEntityPelt {
    SchedEntityPelt {
        load_weight: scale_load(t.weight_or_nice0()),
        on_rq: t.on_rq,
        is_curr: t.running,
        sched_delayed: t.delayed,
        group_runnable_weight: None,
    }
}

impl InferReplay {
    /// A replay under `profile`.
    pub fn new(profile: Profile, offsets: Option<ClockOffsets>) -> Self {
        InferReplay {
            offsets,
            profile,
            unkeyed: false,
            tables: PeltTables::of(profile.halflife),
            ue_cpu: UtilEstCpu::default(),
            tasks: HashMap::new(),
            cpus: BTreeMap::new(),
            probe_key: false,
            lisa_stats: Default::default(),
            util_est_before_dequeue: false,
            post_init_scaled_weight: false,
            groups: group::Groups::new(&BTreeMap::new()),
            stat_runtime: false,
            ticks_waiting: 0,
            eevdf: None,
            // Known before the first event when the offsets pass met one; else from the
            // first `softirq_entry` on.
            sched_softirq: offsets.is_some_and(|o| o.point[ClockPoint::Softirq as usize].is_some()),
            walks: softirq::Walks::default(),
            newidle: newidle::Newidle::default(),
            pulls: pull::Pulls::default(),
            dying: dead::Dying::default(),
            remote: remote::RemoteUpdateCurr::default(),
            stoppers: stopper::Stoppers::default(),
            rebalance: rebalance::Rebalance::default(),
            timers: timer::TimerWake::default(),
            locks: lock::LockWaits::default(),
            first_records: fork::FirstRecords::default(),
            cgroups: cgroup::CgroupMoves::default(),
            kicked: kick::Kicked::default(),
        }
    }

    /// A trace without the kernel's values (no probe records, no LISA events): the rq clock
    /// is the trace clock (trace-cmd's default `local` clock is the CPU's sched_clock(),
    /// which the rq clock reads), each cfs_rq and each task not forked in the trace starts
    /// from zero where the replay first updates it, and every update is kept
    /// ([`Self::computed`]).
    pub fn set_unkeyed(&mut self) {
        self.unkeyed = true;
        self.offsets = Some(ClockOffsets::default());
    }

    /// An unkeyed replay's first update of `cpu`'s cfs_rq starts it from zero at `now`.
    fn unkeyed_cfs(&mut self, cpu: u32, now: u64) {
        if self.unkeyed {
            let c = self.cpus.entry(cpu).or_default();
            if c.cfs.is_none() {
                c.cfs = Some(SchedAvg {
                    last_update_time: now,
                    ..SchedAvg::default()
                });
                c.computed.from_zero = true;
            }
        }
    }

    /// What an unkeyed replay computed: the CPUs' cfs_rqs, then the tasks by pid.
    pub fn computed(&self) -> Vec<computed::Computed> {
        let cpus = self.cpus.iter().map(|(cpu, c)| computed::Computed {
            entity: format!("cpu{cpu} /"),
            task: false,
            signal: c.computed.clone(),
            kernel: None,
        });
        let mut tasks: Vec<_> = self.tasks.iter().collect();
        tasks.sort_by_key(|(pid, _)| **pid);
        let tasks = tasks.into_iter().map(|(pid, t)| computed::Computed {
            entity: format!("pid {pid} {}", t.comm),
            task: true,
            signal: t.computed.clone(),
            kernel: None,
        });
        cpus.chain(tasks).filter(|c| c.signal.updates > 0).collect()
    }

    /// v6.12's delayed dequeue is modelled ([`eevdf`]) on a kernel of `nr_cpus` online
    /// CPUs (its base slice) and `hz` (TICK_NSEC); called after [`Self::set_kernel`].
    pub fn set_eevdf(&mut self, nr_cpus: u32, hz: u32) {
        // TICK_NSEC bounds a lag and counts the balance's jiffies ([`rebalance`]); HZ 0
        // is refused where meta.json is read.
        let tick = schedmath::schedutil::tick_nsec(hz.max(1)).unwrap_or(0) as u64;
        self.rebalance.tick = tick;
        if self.util_est_before_dequeue {
            self.eevdf = Some(eevdf::Eevdf::new(self.profile, nr_cpus, tick));
        }
    }

    /// The delayed-dequeue decisions against the answer key (v6.12).
    pub fn decisions(&self) -> Option<Decisions> {
        self.eevdf.as_ref().map(|e| e.decisions)
    }

    /// The groups' `cpu.weight` per path (see [`shares_from_meta`]).
    pub fn set_group_weights(&mut self, weights: &BTreeMap<String, u64>) {
        self.groups.set_weights(weights);
    }

    /// The traced kernel's order of util_est_update() and the dequeue's PELT update:
    /// v6.12 (delayed dequeue) updates util_est first, from the signal of the last update.
    pub fn set_kernel(&mut self, major_minor: Option<(u32, u32)>) {
        self.util_est_before_dequeue = major_minor.is_some_and(|v| v >= (6, 12));
        self.post_init_scaled_weight = major_minor.is_some_and(|v| v < (6, 12));
        self.groups.set_kernel(major_minor);
    }

    /// The cfs_rq's inputs on `cpu`: (scaled weight sum, queued count, a fair task runs).
    fn cfs_inputs(&self, cpu: u32) -> (u64, u32, bool) {
        let curr = self.cpus.get(&cpu).and_then(|c| c.curr).unwrap_or(0);
        let mut w = 0u64;
        let mut n = 0u32;
        for t in self.tasks.values() {
            if t.cpu == cpu && t.on_rq && !t.detached {
                if let Some(tw) = t.weight {
                    w += scale_load(tw);
                    // set_delayed(): h_nr_runnable-- (its weight stays queued).
                    n += u32::from(!t.delayed);
                }
            }
        }
        let has_curr = curr != 0
            && self
                .tasks
                .get(&curr)
                .is_some_and(|t| t.weight.is_some() && t.running);
        // A grouped task weighs on the root through its group's entity.
        let (ses, grouped) = self.root_group_weight(cpu);
        (w.saturating_sub(grouped) + ses, n, has_curr)
    }

    /// The trace time standing for the clock read of update point `p` whose event was
    /// written at `ts`.
    fn at(&self, p: ClockPoint, ts: u64) -> u64 {
        self.offsets.map_or(ts, |o| o.at(p, ts))
    }

    /// The rq clock of `cpu` at trace time `ts`, once calibrated.
    fn clock(&self, cpu: u32, ts: u64) -> Option<u64> {
        let off = match self.offsets {
            Some(o) => o.global_at(ts),
            None => self.cpus.get(&cpu)?.offset?,
        };
        Some(ts.wrapping_add_signed(off))
    }

    /// Brings `pid`'s signal and its CPU's cfs_rq up to `ts` with the current flags.
    fn update(&mut self, pid: Option<i32>, cpu: u32, ts: u64) {
        let Some(now) = self.clock(cpu, ts) else {
            return;
        };
        let t = self.tables;
        self.unkeyed_cfs(cpu, now);
        let (unkeyed, ue) = (self.unkeyed, self.profile.util_est);
        // An inferred instant can fall before the entity's last update (a wake-up's
        // clock is read before `sched_migrate_task` is written): nothing to add then; the
        // kernel's clock never goes back, so its phase must not be reset either.
        if let Some(pid) = pid {
            if let Some(task) = self.tasks.get_mut(&pid).filter(|t| !t.detached) {
                let se = se_pelt(task);
                if unkeyed && task.avg.is_none() && !task.forked {
                    task.avg = Some(SchedAvg {
                        last_update_time: now,
                        util_est: UtilEst::new(ue),
                        ..SchedAvg::default()
                    });
                    task.computed.from_zero = true;
                }
                if let (Some(avg), Some(_)) = (task.avg.as_mut(), task.weight) {
                    if now >= avg.last_update_time {
                        if task.trail.len() < MAX_TRAIL && super::explaining() {
                            task.trail.push((now, *avg, se.on_rq, se.is_curr));
                        }
                        __update_load_avg_se(now, avg, &se, t);
                        if unkeyed {
                            task.computed.add(avg);
                        }
                    }
                }
            }
        }
        let path = pid.and_then(|p| self.groups.path(p));
        if let Some(p) = &path {
            self.group_levels(cpu, p, now);
        }
        let (w, n, curr) = self.cfs_inputs(cpu);
        if let Some(c) = self.cpus.get_mut(&cpu) {
            c.clock_read = Some(c.clock_read.map_or(ts, |r| r.max(ts)));
            if let Some(cfs) = c.cfs.as_mut().filter(|c| now >= c.last_update_time) {
                update_cfs_rq_load_avg(now, cfs, &mut c.removed, w, n, curr, t);
                if unkeyed {
                    c.computed.add(cfs);
                }
            }
        }
        if let Some(p) = &path {
            self.group_propagate(cpu, p);
        }
    }

    fn task(&mut self, pid: i32, comm: &str) -> &mut Task {
        let t = self.tasks.entry(pid).or_insert_with(|| Task {
            weight: Some(NICE_0_WEIGHT),
            ..Task::default()
        });
        if t.comm.is_empty() {
            t.comm = comm.to_string();
        }
        t
    }

    /// `update_curr`: the stamp of prev's update_curr() in this `__schedule()` (its
    /// dequeue or put_prev), when the trace shows it, else of a balance's attach whose
    /// clock it ran on ([`ScheduleMark`]).
    fn switch(
        &mut self,
        ts: u64,
        cpu: u32,
        s: &Switch<'_>,
        (update_curr, attach): (Option<u64>, Option<u64>),
        idle_pull: bool,
    ) -> Result<(), String> {
        let stamp = ts;
        let known = self.cpus.get(&cpu).and_then(|c| c.curr);
        if let Some(curr) = known.filter(|&c| c != s.prev_pid) {
            // The timeline of this CPU is broken (lost events?): follow the trace.
            self.cpus.entry(cpu).or_default().curr = Some(s.next_pid);
            return Err(format!(
                "sched_switch from pid {} on cpu{cpu}, but pid {curr} was switched in there",
                s.prev_pid
            ));
        }
        let prev = (s.prev_pid != 0).then_some(s.prev_pid);
        let written = ts;
        let ue_cpu = self.ue_cpu;
        // The wake-up that preempted the idle task (or the task it preempts) left the rq
        // clock as it read it: this switch's updates happen at that instant. The skip
        // holds whichever task the pick then runs (wakeup_preempt() asks for it from
        // need_resched alone; 6.12 `wakeup-storm`, cpu1 at 16.9170 s: `sh` 169 preempted
        // by a remote wake-up of `trace-cmd` 166, `sh` 168 picked, all on the wake-up's
        // clock).
        let skip = self.cpus.get_mut(&cpu).and_then(|c| c.skip_clock.take());
        let ts = match skip {
            Some((_, at)) if at <= ts && (prev.is_none() || s.prev_runnable()) => {
                match self.skipped_clock(cpu, s.prev_pid, update_curr, (at, ts)) {
                    Some(read) => read,
                    None => update_curr.map_or(ts, |m| self.at(ClockPoint::PutPrev, m)),
                }
            }
            _ if s.prev_pid != 0 && !s.prev_runnable() => match update_curr {
                Some(at) => self.at(ClockPoint::Dequeue, at),
                None => self.at(ClockPoint::SleepSwitch, ts),
            },
            _ => match (update_curr, attach) {
                (Some(at), _) if s.prev_pid != 0 => self.at(ClockPoint::PutPrev, at),
                (None, Some(at)) => self.at(ClockPoint::Attach, at),
                // The pull's clock: the rq clock's last update ([`Cpu::clock_read`]).
                _ if idle_pull => self
                    .cpus
                    .get(&cpu)
                    .and_then(|c| c.clock_read)
                    .map_or(ts, |r| r.min(ts)),
                _ => ts,
            },
        };
        let sleeping = !s.prev_runnable();
        if let Some(p) = prev.filter(|_| sleeping) {
            self.util_est_before_dequeue(p);
        }
        if let Some(t) = prev.and_then(|p| self.tasks.get_mut(&p)) {
            t.settle();
        }
        if let Some(t) = self.tasks.get_mut(&s.next_pid) {
            t.settle();
        }
        // Everything up to now ran with the old flags.
        if s.next_pid != 0 {
            self.attach_detached(s.next_pid, cpu, ts);
        }
        // Only a sleeping prev's dequeue calls update_cfs_group(), not put_prev/set_next.
        // (A dequeue the look-ahead ran before the newly-idle walk called it already.)
        let early = prev.is_some_and(|p| self.dequeued_before_newidle(cpu, p));
        self.groups.reweight = sleeping && !early;
        // Between two tasks of no fair class (idle, RT, stop) no fair entity is put or
        // set (put_prev_task() / set_next_task() of those classes): no cfs_rq update.
        let fair = |pid: i32, prio| pid != 0 && prio_weight(prio).is_some();
        let cfs = fair(s.prev_pid, s.prev_prio) || fair(s.next_pid, s.next_prio);
        if cfs {
            self.update(prev, cpu, ts);
        } else {
            self.rq_clock_only(cpu, ts);
        }
        self.groups.reweight = false;
        let pick = self.pick_clock(cpu, ts);
        if s.next_pid != 0 && cfs {
            self.update(Some(s.next_pid), cpu, pick);
        }
        self.groups.reweight = true;
        let (decision, picked) = self.schedule_eevdf(cpu, ts, s, sleeping);
        let newidle = match (prev, s.next_pid, sleeping) {
            (Some(p), 0, true) => Some(p),
            _ => None,
        };
        if let Some(p) = newidle.filter(|_| self.eevdf.is_none()) {
            self.newidle_balance(cpu, p, ts, stamp);
        }
        let before = self.util_est_before_dequeue;
        if let Some(pid) = prev {
            let weight = prio_weight(s.prev_prio);
            let p = self.task(pid, s.prev_comm);
            p.running = false;
            p.cpu = cpu;
            p.weight = weight;
            if sleeping {
                // v6.12: a delayed sleeper stays queued (dequeue_entity() returns false).
                p.delayed = decision == Some(true);
                p.on_rq = p.delayed;
                p.sleep_decision = decision;
                // v6.1's dequeue_task_fair(): util_est_update() after the PELT update.
                if let Some(avg) = p.avg.as_mut().filter(|_| !before) {
                    util_est_update(avg, true, &ue_cpu);
                }
            }
            if p.exiting && sleeping {
                // task_dead_fair() after the last switch: its load leaves the cfs_rq.
                self.switched_out_dead(cpu, pid, written);
            }
        }
        self.finish_delayed(cpu, ts, picked);
        if s.next_pid == 0 {
            self.idle_ends_delays(cpu, ts);
        }
        // v6.12: pick_next_task_fair() goes idle only once its picks dequeued every
        // delayed entity, so sched_balance_newidle() runs after them.
        if let Some(p) = newidle.filter(|_| self.eevdf.is_some()) {
            self.newidle_balance(cpu, p, ts, stamp);
        }
        let clock = self.clock(cpu, pick);
        let c = self.cpus.entry(cpu).or_default();
        c.curr = Some(s.next_pid);
        // set_next_entity(): exec_start.
        c.exec = clock.map(|at| (s.next_pid, at));
        if s.next_pid != 0 {
            let weight = prio_weight(s.next_prio);
            let n = self.task(s.next_pid, s.next_comm);
            n.running = true;
            n.on_rq = true;
            n.cpu = cpu;
            n.weight = weight;
        }
        Ok(())
    }

    /// The clock of a `__schedule()` after a wake-up at `at` that asked it to skip its
    /// clock update, as a trace time in `at..=ts`: the rq clock's last update (the
    /// wake-up's, or a later tick's, softirq's or remote balance's: [`Cpu::clock_read`];
    /// 6.1 `periodic-100ms`, `p90` at 15.4626 s, on the clock a pull from cpu1 left 1.7 ms
    /// before), unless prev's update_curr() there (`update_curr`) shows a clock read after
    /// that: its `runtime=` chains it more than [`SKIP_SLACK`] past it (the wake-up did not
    /// preempt after all: 6.12 `oversubscribed`, `busy` switched out 2.3 ms after one at
    /// 20.0165 s; `None`). A `sched_stat_runtime` on the skipped clock itself is written
    /// when the wake-up's own update_curr() did not reach prev (an RT wakee, a wakee in
    /// another group: 6.12 `cgroup-weight`, `fg` at 17.0192 s).
    fn skipped_clock(
        &self,
        cpu: u32,
        prev: i32,
        update_curr: Option<u64>,
        (at, ts): (u64, u64),
    ) -> Option<u64> {
        let c = self.cpus.get(&cpu)?;
        let read = c.clock_read.map_or(at, |r| r.max(at).min(ts));
        let chained = c.chained.filter(|&(p, _)| p == prev).map(|(_, ch)| ch);
        match (update_curr, chained, self.clock(cpu, read)) {
            (Some(_), Some(ch), Some(clock)) if ch > clock + SKIP_SLACK => None,
            _ => Some(read),
        }
    }

    /// The unscaled weight of `pid` if the delayed-dequeue model follows it: a fair task
    /// outside any task group ([`eevdf`] models the root cfs_rq only).
    fn eevdf_weight(&self, pid: i32, prio: Option<i32>) -> Option<(i32, u64)> {
        let w = prio_weight(prio).filter(|_| pid != 0 && self.groups.path(pid).is_none())?;
        Some((pid, w))
    }

    /// v6.12: `__schedule()` on the EEVDF model ([`eevdf`]): whether prev's sleep is
    /// delayed (`None`: the model does not decide it) and the delayed tasks the picks
    /// dequeued.
    fn schedule_eevdf(
        &mut self,
        cpu: u32,
        ts: u64,
        s: &Switch<'_>,
        sleeping: bool,
    ) -> (Option<bool>, Vec<i32>) {
        if self.eevdf.is_none() {
            return (None, Vec::new());
        }
        let mut prev = self.eevdf_weight(s.prev_pid, s.prev_prio);
        let mut next = self.eevdf_weight(s.next_pid, s.next_prio);
        // TASK_DEAD is a special state: DEQUEUE_SPECIAL, never delayed.
        let mut special = self.tasks.get(&s.prev_pid).is_some_and(|t| t.exiting);
        let decided = prev.is_some() && sleeping && !special;
        let mut sleeps = sleeping;
        // A grouped task stands for its group's entity on the root: it leaves (with
        // DEQUEUE_SLEEP, never special: dequeue_entities()) when the group empties.
        let fair = |prio| prio_weight(prio).is_some();
        if prev.is_none() && s.prev_pid != 0 && fair(s.prev_prio) {
            if let Some((key, w, others)) = self.eevdf_group(cpu, s.prev_pid) {
                prev = Some((key, w));
                sleeps = sleeping && !others;
                special = false;
            }
        }
        if next.is_none() && s.next_pid != 0 && fair(s.next_prio) {
            next = self
                .eevdf_group(cpu, s.next_pid)
                .map(|(key, w, _)| (key, w));
        }
        let Some(e) = self.eevdf.as_mut() else {
            return (None, Vec::new());
        };
        let (delayed, picked) = e.schedule(cpu, ts, prev, sleeps, special, next);
        (decided.then_some(delayed), picked)
    }

    /// dequeue_entities() with DEQUEUE_DELAYED of delayed tasks a pick met on `cpu`: their
    /// last update while queued (load 1, runnable 0), then they leave.
    fn finish_delayed(&mut self, cpu: u32, ts: u64, picked: Vec<i32>) {
        for pid in picked {
            if !self
                .tasks
                .get(&pid)
                .is_some_and(|t| t.delayed && t.cpu == cpu)
            {
                continue;
            }
            if eevdf::explain() {
                eprintln!("picked delayed {ts} cpu{cpu} pid {pid}");
            }
            self.leave_delayed(pid, cpu, ts);
        }
    }

    /// A `sched_stat_runtime` of `pid` running on `cpu` (at trace time `ts`) that neither a
    /// tick nor a switch explains, where the look-ahead shows `pid` switched out later
    /// with another prio than its weight's: a nice change of the running task
    /// (set_user_nice() / __sched_setscheduler(), core.c) dequeued it in place
    /// (DEQUEUE_SAVE: update_curr(), the one that wrote the event, then its PELT update),
    /// reweighted it and queued it back on the same clock `at` (6.1 `hogs-nice`, `hog5`
    /// at 12.5377 s: its nice-5 setattr's update crossed a PELT period, util 217 where
    /// the replay, updating it only later, had 220).
    fn renice_requeue(&mut self, ts: u64, cpu: u32, pid: i32, at: u64) {
        let Some(weight) = self.prio_next(ts, pid).and_then(|p| prio_weight(Some(p))) else {
            return;
        };
        if !self
            .tasks
            .get(&pid)
            .is_some_and(|t| t.avg.is_some() && t.weight_or_nice0() != weight)
        {
            return;
        }
        self.update(Some(pid), cpu, at);
        // reweight_entity(): its load_avg on its cfs_rq follows the new weight.
        let t = self.tables;
        let path = self.groups.path(pid);
        let Some(task) = self.tasks.get_mut(&pid) else {
            return;
        };
        let old = scale_load(task.weight_or_nice0());
        task.weight = Some(weight);
        let Some((cfs, _)) = group::rq_of(&mut self.cpus, &mut self.groups, cpu, path.as_deref())
        else {
            return;
        };
        if let (Some(se), Some(cfs)) = (task.avg.as_mut(), cfs.as_mut()) {
            reweight_entity_load_avg(cfs, se, old, scale_load(weight), t);
        }
    }

    /// sched_exec() (kernel/sched/core.c): an exec()ing task's select_task_rq() with
    /// WF_EXEC takes the slow path (sched_balance_find_dst_cpu() / find_idlest_cpu()),
    /// which syncs the running task's averages to its cfs_rq's last update as if it had
    /// been blocked since its own (sync_entity_load_avg(): no clock read, no running
    /// time). The trace shows it only when the exec moves the task: it wakes its CPU's
    /// stopper (stop_one_cpu(migration_cpu_stop)), and it is switched out with a new comm
    /// afterwards (6.12 `periodic-50pct-16ms`, `sh` → `cat` at 16.9332 s: its 0.7 ms of
    /// running since its last update were lost, util 347 → 333). A stopper woken for a
    /// sched_setaffinity() (affine_move_task()) keeps the comm and syncs nothing.
    fn exec_sync(&mut self, ts: u64, cpu: u32) {
        let t = self.tables;
        let Some(pid) = self.cpus.get(&cpu).and_then(|c| c.curr).filter(|&p| p != 0) else {
            return;
        };
        let known = self.tasks.get(&pid).is_some_and(|t| t.avg.is_some());
        if !known || !self.execs(ts, pid) {
            return;
        }
        let path = self.groups.path(pid);
        let Some(task) = self.tasks.get_mut(&pid) else {
            return;
        };
        let w = scale_load(task.weight_or_nice0());
        let Some((cfs, _)) = group::rq_of(&mut self.cpus, &mut self.groups, cpu, path.as_deref())
        else {
            return;
        };
        if let (Some(se), Some(cfs)) = (task.avg.as_mut(), *cfs) {
            __update_load_avg_blocked_se(cfs.last_update_time, se, w, t);
        }
    }

    /// v6.12: `cpu` switches to idle: pick_task_fair() returns no task only once its cfs_rq
    /// is empty, each delayed entity it met dequeued (DEQUEUE_DELAYED), so none of this
    /// CPU's tasks is delayed any more, whatever the model's picks found.
    fn idle_ends_delays(&mut self, cpu: u32, ts: u64) {
        let mut left: Vec<i32> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.delayed && t.on_rq && t.cpu == cpu)
            .map(|(&p, _)| p)
            .collect();
        left.sort_unstable();
        for pid in left {
            self.end_delay(pid, ts);
        }
    }

    /// A delayed task leaves its cfs_rq for good (dequeue_entities() with
    /// DEQUEUE_DELAYED): its last update with load still counted, then off the runqueue.
    fn leave_delayed(&mut self, pid: i32, cpu: u32, ts: u64) {
        self.update(Some(pid), cpu, ts);
        if let Some(t) = self.tasks.get_mut(&pid) {
            t.on_rq = false;
            t.delayed = false;
        }
    }

    /// v6.12: a tick's update_curr() on the EEVDF model; when it asks for a reschedule,
    /// the picks wait for the `__schedule()` that follows ([`Cpu::resched`]).
    fn tick_eevdf(&mut self, cpu: u32, ts: u64) {
        if let Some(e) = self.eevdf.as_mut() {
            if e.tick_resched(cpu, ts) {
                self.cpus.entry(cpu).or_default().resched = Some(ts);
            }
        }
    }

    /// The picks of the tick's reschedule on `cpu` ([`Cpu::resched`]) at trace time `ts`.
    fn resched_picks(&mut self, cpu: u32, ts: u64) {
        let picked = self.eevdf.as_mut().map(|e| e.picks(cpu, ts));
        self.finish_delayed(cpu, ts, picked.unwrap_or_default());
    }

    /// A tick's reschedule whose `__schedule()` wrote no `sched_stat_runtime` before this
    /// event of its CPU: its picks on the tick's clock.
    fn resched_before(&mut self, cpu: u32, ev: &Event<'_>) {
        let Some(c) = self.cpus.get_mut(&cpu) else {
            return;
        };
        let curr = c.curr;
        match *ev {
            Event::PeltCall(_) | Event::HrtimerExit => return,
            Event::StatRuntime { pid, .. } if Some(pid) == curr => return,
            ref e if is_answer_key(e) => return,
            _ => {}
        }
        if let Some(at) = c.resched.take() {
            self.resched_picks(cpu, at);
        }
    }

    /// A task the model keeps delayed on its CPU shows it was not (a wake-up elsewhere or
    /// from a wake list, which ttwu_runnable() never does): its delay ends now on that CPU.
    fn end_delay(&mut self, pid: i32, ts: u64) {
        let Some(cpu) = self.tasks.get(&pid).filter(|t| t.delayed).map(|t| t.cpu) else {
            return;
        };
        self.leave_delayed(pid, cpu, ts);
        if let Some(e) = self.eevdf.as_mut() {
            e.end_delay(cpu, pid, ts);
        }
    }

    /// A wake-up shows the model's delay of `pid` never was (a delayed task is requeued
    /// where it is queued, by ttwu_runnable() on the waker's CPU: try_to_wake_up()): the
    /// kernel dequeued it at its sleep, so its averages stay at that dequeue's update
    /// (6.12 `mixed-sleep-timer`, `tick` at 17.1188 s: synced to cpu1's last update, not
    /// aged to the wake-up) and it leaves the model's queue without an update.
    fn undo_delay(&mut self, pid: i32, ts: u64) {
        let Some(t) = self.tasks.get_mut(&pid).filter(|t| t.delayed) else {
            return;
        };
        let cpu = t.cpu;
        t.on_rq = false;
        t.delayed = false;
        if let Some(e) = self.eevdf.as_mut() {
            e.end_delay(cpu, pid, ts);
        }
    }

    /// v6.12: a load balance moves `pid` (no `sched_waking`) while the replay holds it
    /// asleep: only queued tasks are moved, so its sleep was delayed (or its delay had not
    /// ended yet) — the kernel detaches it still delayed and attaches it to the new CPU at
    /// once (detach_task() / attach_task(), fair.c), where a pick ends its delay. Returns
    /// whether the replay took it as delayed here.
    fn delayed_by_move(&mut self, pid: i32) -> bool {
        if self.eevdf.is_none() {
            return false;
        }
        let Some(t) = self.tasks.get_mut(&pid) else {
            return false;
        };
        if t.waking.is_some() || t.detached || t.running || t.avg.is_none() {
            return false;
        }
        if !t.on_rq {
            t.on_rq = true;
            t.delayed = true;
        }
        t.delayed
    }

    /// task_dead_fair() after the last switch (kernel/sched/fair.c):
    /// remove_entity_load_avg() syncs the dead task to its cfs_rq's last update and queues
    /// its averages as removed load, folded in at that cfs_rq's next update.
    fn exit(&mut self, pid: i32) {
        let t = self.tables;
        let Some(mut task) = self.tasks.remove(&pid) else {
            return;
        };
        task.settle();
        if let Some(e) = self.eevdf.as_mut() {
            e.exit(pid);
        }
        let w = scale_load(task.weight_or_nice0());
        let path = self.groups.path(pid);
        if let (Some(mut se), Some((Some(cfs), removed)), false) = (
            task.avg,
            group::rq_of(&mut self.cpus, &mut self.groups, task.cpu, path.as_deref()),
            task.detached,
        ) {
            remove_entity_load_avg(cfs.last_update_time, &mut se, w, removed, t);
        }
        // Keep the counters: re-insert a dead shell.
        self.tasks.insert(
            pid,
            Task {
                stats: task.stats,
                computed: task.computed,
                comm: task.comm,
                cpu: u32::MAX,
                ..Task::default()
            },
        );
    }

    /// do_exit()'s sched_autogroup_exit_task() → sched_move_task() (kernel/sched/core.c),
    /// right after `sched_process_exit`, even without autogroups: the task is dequeued
    /// (an update at a fresh clock), task_change_group_fair() detaches it and attaches it
    /// again (its sums rebuilt from its averages with the cfs_rq's divider), and it is
    /// enqueued again at the same clock.
    fn sched_move_task(&mut self, ts: u64, pid: i32) {
        let Some(cpu) = self
            .tasks
            .get(&pid)
            .filter(|t| t.on_rq && !t.detached && t.avg.is_some() && t.weight.is_some())
            .map(|t| t.cpu)
        else {
            return;
        };
        // The cfs_rq's updates: the dequeue's, detach_entity_cfs_rq()'s (then the detach),
        // attach_entity_cfs_rq()'s (then the attach), the enqueue's, set_next_entity()'s.
        let detach = match self.cpus.get(&cpu) {
            Some(c) if c.deferred.len() + 2 > MAX_DEFERRED => return,
            _ => self.move_detach_updates(ts, pid, cpu),
        };
        let q = &mut self.cpus.entry(cpu).or_default().deferred;
        q.push_back(Deferred {
            pid,
            ts,
            step: Step::Detach,
            after: detach,
            updates: detach,
            own: true,
            held: false,
        });
        q.push_back(Deferred {
            pid,
            ts,
            step: Step::Attach,
            after: Step::Attach.move_updates(),
            updates: Step::Attach.move_updates(),
            own: true,
            held: false,
        });
    }

    /// Runs the first deferred step of `cpu` if its cfs_rq update has been recorded
    /// (`record`: one was), or every step (`record` false: a sched event came first) but
    /// the own steps of `preempted` (switched out runnable by that event: not moved yet).
    fn run_deferred(&mut self, cpu: u32, record: bool, preempted: Option<i32>) {
        loop {
            let front = self.cpus.get(&cpu).and_then(|c| c.deferred.front());
            let Some(&Deferred { pid, own, .. }) = front else {
                return;
            };
            if own && (self.switched_out(pid, cpu) || preempted == Some(pid)) {
                return;
            }
            let Some(q) = self.cpus.get_mut(&cpu).map(|c| &mut c.deferred) else {
                return;
            };
            let Some(d) = q.front_mut() else { return };
            if record && d.held {
                return;
            }
            if record {
                d.after = d.after.saturating_sub(1);
                if d.after > 0 {
                    return;
                }
            }
            let Some(d) = q.pop_front() else { return };
            match d.step {
                Step::Detach => self.detach(d.pid, cpu, d.ts),
                Step::Attach => self.attach_detached(d.pid, cpu, d.ts),
            }
            if record {
                return;
            }
        }
    }

    /// Whether `pid` is queued on `cpu` but not running there: a task preempted between
    /// `sched_process_exit` and its sched_move_task() (exit_files() can wake its parent
    /// first) does the move only once it runs again.
    fn switched_out(&self, pid: i32, cpu: u32) -> bool {
        let on_cpu = self.tasks.get(&pid).is_some_and(|t| t.cpu == cpu);
        on_cpu && self.cpus.get(&cpu).and_then(|c| c.curr) != Some(pid)
    }

    /// A task switched back in on `cpu` at `ts`: its own deferred steps read the clock
    /// from then on, and the updates they wait for are still all to come.
    fn resume_deferred(&mut self, pid: i32, cpu: u32, ts: u64) {
        if let Some(c) = self.cpus.get_mut(&cpu) {
            for d in c.deferred.iter_mut().filter(|d| d.own && d.pid == pid) {
                d.ts = d.ts.max(ts);
                d.after = d.updates;
            }
        }
    }

    /// A wake-up written on `cpu` at `ts` by its running task, whose own steps are pending:
    /// an exiting task wakes others before its move (exit_files() closing a pipe), so the
    /// move is still to come. Its steps wait for the CPU's next event (the cfs_rq updates
    /// until then are the wake-up's, or those of the `__schedule()` it causes) and count
    /// their updates afresh from there. Returns the waker.
    fn hold_deferred(&mut self, cpu: u32, ts: u64) -> Option<i32> {
        let c = self.cpus.get_mut(&cpu)?;
        let curr = c.curr.filter(|&p| p != 0)?;
        for d in c.deferred.iter_mut().filter(|d| d.own && d.pid == curr) {
            d.held = true;
            d.ts = d.ts.max(ts);
            d.after = d.updates;
        }
        Some(curr)
    }

    /// An event on `cpu` ends a hold ([`Self::hold_deferred`]).
    fn release_deferred(&mut self, cpu: u32) {
        if let Some(c) = self.cpus.get_mut(&cpu) {
            for d in c.deferred.iter_mut() {
                d.held = false;
            }
        }
    }

    /// The CPU whose deferred steps the kernel has surely done when `ev` is written: its
    /// own switch, tick or exit, a wake-up queued on it. Not a `sched_waking` (the waker
    /// may be in the middle of do_exit()) nor a migration (a load balance writes every
    /// move before its attaches).
    fn settles(ev: &Event<'_>, cpu: u32) -> Option<u32> {
        match *ev {
            Event::Switch(_) | Event::HrtimerExpire { .. } | Event::Exit { .. } => Some(cpu),
            Event::Wakeup {
                waking: false,
                target_cpu,
                ..
            } => Some(target_cpu.unwrap_or(cpu)),
            _ => None,
        }
    }

    /// An update of `pid` and its cfs_rq, then detach_entity_load_avg().
    fn detach(&mut self, pid: i32, cpu: u32, ts: u64) {
        if !self
            .tasks
            .get(&pid)
            .is_some_and(|t| !t.detached && t.cpu == cpu)
        {
            return;
        }
        self.update(Some(pid), cpu, ts);
        let t = self.tables;
        let path = self.groups.path(pid);
        let (Some(task), Some((cfs, _))) = (
            self.tasks.get_mut(&pid),
            group::rq_of(&mut self.cpus, &mut self.groups, cpu, path.as_deref()),
        ) else {
            return;
        };
        let w = task.weight_or_nice0();
        let mut load_sum = 0;
        if let (Some(se), Some(cfs)) = (task.avg.as_mut(), cfs.as_mut()) {
            detach_entity_load_avg(cfs, se, w, t);
            load_sum = se.load_sum as i64;
        }
        task.detached = true;
        if let Some(p) = path {
            self.group_changed(cpu, &p, -load_sum);
        }
    }

    /// wake_up_new_task(): a forked task's signal starts from
    /// post_init_entity_util_avg() on the cfs_rq of its first CPU (as that cfs_rq was at
    /// its last update) and is attached at the enqueue, after the cfs_rq's update.
    fn wake_up_new(&mut self, ts: u64, pid: i32, cpu: u32, weight: u64) {
        if let Some(now) = self.clock(cpu, ts) {
            self.unkeyed_cfs(cpu, now);
        }
        let path = self.groups.path(pid);
        let Some(cfs) = group::rq_of(&mut self.cpus, &mut self.groups, cpu, path.as_deref())
            .and_then(|(c, _)| *c)
        else {
            return;
        };
        let mut se = SchedAvg {
            util_est: UtilEst::new(self.profile.util_est),
            ..SchedAvg::default()
        };
        init_entity_runnable_average(&mut se, weight);
        let share = if self.post_init_scaled_weight {
            scale_load(weight)
        } else {
            weight
        };
        // The cfs_rq as it is before the enqueue's update (removed load not folded yet).
        let cfs = self.post_init_cfs(cpu, path.is_none(), cfs);
        post_init_entity_util_avg(&mut se, &cfs, 1024, share);
        // The task has no signal yet: only its cfs_rqs are updated.
        self.update(Some(pid), cpu, ts);
        let t = self.tables;
        if let Some(cfs) = group::rq_of(&mut self.cpus, &mut self.groups, cpu, path.as_deref())
            .and_then(|(c, _)| c.as_mut())
        {
            attach_entity_load_avg(cfs, &mut se, weight, t);
            if let Some(task) = self.tasks.get_mut(&pid) {
                task.avg = Some(se);
            }
            if let Some(p) = path {
                self.group_changed(cpu, &p, se.load_sum as i64);
            }
        }
    }

    /// v6.12's dequeue_task_fair(): util_est_update() before the dequeue's PELT update
    /// (once per sleep: the dequeue can come before a newly-idle balance's pull).
    fn util_est_before_dequeue(&mut self, pid: i32) {
        let ue_cpu = self.ue_cpu;
        if !self.util_est_before_dequeue {
            return;
        }
        let Some(t) = self.tasks.get_mut(&pid) else {
            return;
        };
        if std::mem::take(&mut t.dequeued) {
            return;
        }
        if let Some(avg) = t.avg.as_mut() {
            util_est_update(avg, true, &ue_cpu);
        }
        // The dequeue's record: its util_est is the one just updated.
        if let (Some((mut o, k)), Some(avg)) = (t.pending.take(), t.avg) {
            o.util_est = avg.util_est;
            compare(&mut t.stats, &o, &k, true);
        }
    }

    /// A CPU pulls a task while its running task has a `sched_stat_runtime` since its last
    /// sched event or timer exit: a newly-idle balance (pick_next_task_fair() finds no
    /// runnable fair task), which runs after that task's dequeue in `__schedule()`, before
    /// its `sched_switch`. The dequeue's update at that mark, and the task is off the
    /// cfs_rq for the attach's update (its `sched_switch` does the rest; the newly-idle
    /// balance can take milliseconds: 6.1 `mixed-sleep-timer`, cpu0 at 13.522 s).
    fn dequeue_before_pull(&mut self, cpu: u32, curr: i32, update_curr: u64) {
        if curr == 0 || !self.tasks.get(&curr).is_some_and(|t| t.running) {
            return;
        }
        // The look-ahead ran it before the newly-idle walk ([`newidle`]).
        if self.dequeued_before_newidle(cpu, curr) {
            return;
        }
        let ts = self.at(ClockPoint::Dequeue, update_curr);
        self.util_est_before_dequeue(curr);
        self.update(Some(curr), cpu, ts);
        if let Some(t) = self.tasks.get_mut(&curr) {
            t.running = false;
            t.on_rq = false;
            t.dequeued = self.util_est_before_dequeue;
        }
    }

    /// A queued task moved by another CPU (a stopper's move_queued_task() for sched_exec()
    /// or a balance's attach_task()) onto `to` while `to` runs its idle task: the
    /// activate's wakeup_preempt() sets need_resched on the idle task and asks for the
    /// skip of the next clock update (rq_clock_skip_update()), as a wake-up does, so the
    /// switch to the moved task runs on the clock the move read (6.12 `periodic-50pct-16ms`,
    /// `sh` 171 moved from cpu1 to idle cpu0 at 16.9333 s: its run starts at that attach,
    /// not at the switch written 0.2 ms later).
    fn moved_onto_idle(&mut self, pid: i32, to: u32, ts: u64) {
        if let Some(c) = self.cpus.get_mut(&to).filter(|c| c.curr == Some(0)) {
            c.skip_clock = Some((pid, ts));
        }
    }

    /// `pid` moves from `from` to `to`; `waking`: in its try_to_wake_up() (the only path
    /// that moves a sleeping task).
    fn migrate(&mut self, ts: u64, pid: i32, from: u32, to: u32, waking: bool) {
        let t = self.tables;
        if let Some(task) = self.tasks.get_mut(&pid).filter(|t| t.detached) {
            // Moved again before its attach: only the destination changes.
            task.cpu = to;
            return;
        }
        if waking
            && self
                .tasks
                .get(&pid)
                .is_some_and(|t| !t.on_rq && !t.detached)
        {
            // A sleeping task (wake-up migration, migrate_task_rq_fair()):
            // remove_entity_load_avg() syncs it to the old cfs_rq's last update (no clock
            // read) and queues it as removed load there; migrate_se_pelt_lag() then decays
            // it to the old CPU's clock now if that CPU is idle (its clock is stale); it is
            // attached at the enqueue on the new CPU (update_load_avg() with DO_ATTACH),
            // after that cfs_rq's update.
            let lag_now = self.clock(from, ts);
            let Some(c) = self.cpus.get(&from) else {
                return;
            };
            let idle = c.curr == Some(0);
            let path = self.groups.path(pid);
            let Some(task) = self.tasks.get_mut(&pid) else {
                return;
            };
            task.cpu = to;
            task.detached = true;
            let w = scale_load(task.weight_or_nice0());
            let Some((cfs, removed)) =
                group::rq_of(&mut self.cpus, &mut self.groups, from, path.as_deref())
            else {
                return;
            };
            let (Some(se), Some(cfs)) = (task.avg.as_mut(), *cfs) else {
                return;
            };
            let lut = cfs.last_update_time;
            remove_entity_load_avg(lut, se, w, removed, t);
            let mut synced = None;
            if let Some(now) = lag_now.filter(|_| idle) {
                if !load_avg_is_decayed(se) {
                    // clock_pelt_idle + (sched_clock_cpu() - clock_idle): without
                    // invariance the two idle clocks are one. Every clock read of an idle
                    // rq moves both (update_rq_clock_pelt() -> _update_idle_rq_clock_pelt()),
                    // the read that set the cfs_rq's last update too: the estimate is the
                    // old CPU's clock now, never before that update.
                    let now = now.max(lut);
                    synced = Some(*se);
                    __update_load_avg_blocked_se(now, se, w, t);
                }
            }
            task.synced = synced.filter(|s| s.last_update_time < se.last_update_time);
            return;
        }
        // A queued task (task_on_rq_migrating()): dequeue_entity() updated and detached it
        // (DO_DETACH) on the old CPU just before the event.
        let read = self.stopper_dequeue(pid, from, ts);
        self.update(
            Some(pid),
            from,
            read.unwrap_or_else(|| self.pull_dequeue(from, ts)),
        );
        let path = self.groups.path(pid);
        let Some(task) = self.tasks.get_mut(&pid) else {
            return;
        };
        task.cpu = to;
        task.on_rq = true;
        let w = task.weight_or_nice0();
        let Some(se) = task.avg.as_mut() else {
            return;
        };
        if let Some(cfs) = group::rq_of(&mut self.cpus, &mut self.groups, from, path.as_deref())
            .and_then(|(c, _)| c.as_mut())
        {
            detach_entity_load_avg(cfs, se, w, t);
        }
        let load_sum = se.load_sum as i64;
        task.detached = true;
        if let Some(p) = &path {
            self.group_changed(from, p, -load_sum);
        }
        // attach_task() on the destination: its enqueue reads that rq's clock and updates
        // the cfs_rq, then attaches (update_load_avg() with DO_ATTACH).
        let q = &mut self.cpus.entry(to).or_default().deferred;
        if q.len() < MAX_DEFERRED {
            q.push_back(Deferred {
                pid,
                ts,
                step: Step::Attach,
                after: 1,
                updates: 1,
                own: false,
                held: false,
            });
        } else {
            self.attach_detached(pid, to, ts);
        }
    }

    /// enqueue_entity() of a task migrated while asleep: the cfs_rq's update, then
    /// attach_entity_load_avg() (the task takes the cfs_rq's last_update_time).
    fn attach_detached(&mut self, pid: i32, cpu: u32, ts: u64) {
        if !self.tasks.get(&pid).is_some_and(|t| t.detached) {
            return;
        }
        // The task is detached: only its cfs_rqs are updated.
        self.update(Some(pid), cpu, ts);
        let t = self.tables;
        let Some(task) = self.tasks.get_mut(&pid) else {
            return;
        };
        task.detached = false;
        let w = task.weight_or_nice0();
        if let Some(p) = self.groups.path(pid) {
            let mut load_sum = 0;
            if let (Some(se), Some((Some(cfs), _))) = (
                task.avg.as_mut(),
                group::rq_of(&mut self.cpus, &mut self.groups, cpu, Some(&p)),
            ) {
                attach_entity_load_avg(cfs, se, w, t);
                load_sum = se.load_sum as i64;
            }
            self.group_changed(cpu, &p, load_sum);
            return;
        }
        let c = self.cpus.entry(cpu).or_default();
        match (task.avg.as_mut(), c.cfs.as_mut()) {
            (Some(se), Some(cfs)) => attach_entity_load_avg(cfs, se, w, t),
            // The cfs_rq's first record will be this attach's own update (the kernel
            // updates the cfs_rq before attaching): attach right after it.
            (Some(_), None) if c.attach_on_sight.len() < MAX_ATTACH_ON_SIGHT => {
                c.attach_on_sight.push(pid)
            }
            _ => {}
        }
    }

    /// The task current on `cpu` when an event was written (the `COMM-PID` column): before
    /// the first `sched_switch` on a CPU, the only sign of what ran there when the trace
    /// started.
    pub fn current(&mut self, cpu: u32, pid: i32, comm: &str) {
        let c = self.cpus.entry(cpu).or_default();
        if c.curr.is_some() {
            return;
        }
        c.curr = Some(pid);
        if pid != 0 {
            let t = self.task(pid, comm);
            t.running = true;
            t.on_rq = true;
            t.cpu = cpu;
        }
    }

    /// The trace time of `pid`'s last update_curr() clock read on `cpu` as its `runtime=`
    /// chains it ([`Cpu::chained`]), `read` being the trace time of the same clock read as
    /// its stamp places it.
    fn chained_read(&self, cpu: u32, pid: i32, read: u64) -> Option<u64> {
        let (_, chained) = self.cpus.get(&cpu)?.chained.filter(|&(p, _)| p == pid)?;
        let now = self.clock(cpu, read)?;
        Some(if chained <= now {
            read.saturating_sub(now - chained)
        } else {
            read.saturating_add(chained - now)
        })
    }

    /// update_curr() charges `runtime` = its clock minus the task's `exec_start` (its
    /// switch-in or its last update_curr()), so a `sched_stat_runtime` written late (the
    /// guest stalled between the clock read and the write: 6.1 `cgroup-weight`, 12.9752 s,
    /// a dequeue written 1.66 ms after its clock read) is placed at most `runtime` after
    /// that: the trace time standing for its clock read, moved back by the excess.
    fn exec_chain(&mut self, ts: u64, pid: i32, runtime: u64) -> u64 {
        let Some(cpu) = self
            .cpus
            .iter()
            .find(|(_, c)| c.curr == Some(pid))
            .map(|(&cpu, _)| cpu)
        else {
            return ts;
        };
        let Some(now) = self.clock(cpu, self.at(ClockPoint::Dequeue, ts)) else {
            return ts;
        };
        let Some(c) = self.cpus.get_mut(&cpu) else {
            return ts;
        };
        let chained = c
            .exec
            .filter(|&(p, _)| p == pid)
            .map(|(_, start)| start.saturating_add(runtime));
        // Only a write late by more than the update points' own spread (µs): the chain
        // carries the error of its start.
        let clock = chained.filter(|&ch| ch + LATE_WRITE < now).unwrap_or(now);
        c.exec = Some((pid, clock));
        c.chained = chained.map(|ch| (pid, ch));
        ts.saturating_sub(now - clock)
    }

    /// One trace event (`cpu`: the buffer it came from).
    pub fn event(&mut self, ts: u64, cpu: u32, ev: &Event<'_>) -> Result<(), String> {
        self.lock_event(ts, cpu, ev);
        match ev {
            Event::PeltCall(c) => {
                self.task_dead_before_record(ts, cpu, c);
                self.walk_record(c)
            }
            e if is_answer_key(e) => {}
            _ => {
                self.finish_walks_for(cpu, ev);
                self.task_dead_before(ts, cpu, ev);
            }
        }
        let ts = match *ev {
            Event::StatRuntime { pid, runtime, .. } => self.exec_chain(ts, pid, runtime),
            _ => ts,
        };
        if !is_answer_key(ev) && !matches!(ev, Event::PeltCall(_)) {
            self.release_deferred(cpu);
        }
        let sched = is_sched_event(ev);
        if sched && !matches!(ev, Event::Wakeup { waking: false, .. }) {
            if let Some(c) = self.cpus.get_mut(&cpu) {
                c.wakelist_clock = None;
            }
        }
        if let Some(c) = Self::settles(ev, cpu) {
            let preempted = match ev {
                Event::Switch(s) if s.prev_runnable() => Some(s.prev_pid),
                // The waker's own steps: an exiting task wakes others before its move.
                Event::Wakeup { .. } => self.hold_deferred(cpu, ts),
                _ => None,
            };
            self.run_deferred(c, false, preempted);
        }
        self.resched_before(cpu, ev);
        self.timers.event(cpu, ev);
        let r = self.event_inner(ts, cpu, ev);
        self.cgroup_after_event(ts, cpu, ev);
        self.kick_event(cpu, ev);
        self.newidle_after_event(ts, cpu, ev);
        // update_cfs_group() after the event's enqueues/dequeues.
        self.settle_groups();
        r
    }

    fn event_inner(&mut self, ts: u64, cpu: u32, ev: &Event<'_>) -> Result<(), String> {
        let c = self.cpus.entry(cpu).or_default();
        let mark = c.schedule;
        let curr = c.curr.unwrap_or(0);
        c.schedule.event(ts, cpu, curr, ev);
        match *ev {
            Event::StatRuntime { pid, .. } if pid == curr && c.tick.is_some() => {}
            _ => self.ticks_at_entry(),
        }
        match *ev {
            Event::Fork {
                parent_pid,
                child_pid,
                ..
            } => self.groups.fork(parent_pid, child_pid),
            Event::Switch(ref s) => {
                let clock = (mark.update_curr(s.prev_pid), mark.attach_clock(s.prev_pid));
                self.note_stopper(ts, cpu, s.next_comm);
                self.switch(ts, cpu, s, clock, mark.idle_pull(s.prev_pid))?;
                self.resume_deferred(s.next_pid, cpu, ts);
                if let Some(t) = self.tasks.get_mut(&s.next_pid).filter(|_| self.unkeyed) {
                    t.computed.ran = true;
                }
            }
            Event::Wakeup {
                comm,
                pid,
                prio,
                target_cpu,
                waking: false,
                new,
            } => {
                let target = target_cpu.unwrap_or(cpu);
                let weight = prio_weight(prio);
                // The enqueue's clock: read just after `sched_waking` (a new task has none),
                // or when this CPU runs its wake list.
                let waking = self.tasks.get_mut(&pid).and_then(|t| t.waking.take());
                let ts = match waking {
                    Some((w, wcpu)) if wcpu != cpu => {
                        // The median read before `sched_wakeup`, unless the wakee's first
                        // `sched_stat_runtime` chains the read (after its `sched_waking`).
                        let median = self.at(ClockPoint::QueuedWakeup, ts);
                        let at = match self.wakelist_chain(ts, cpu, pid) {
                            Some(ch) if ch >= w && ch + SKIP_SLACK < median => ch,
                            _ => median,
                        };
                        *self
                            .cpus
                            .entry(cpu)
                            .or_default()
                            .wakelist_clock
                            .get_or_insert(at)
                    }
                    Some((w, _)) if w <= ts => {
                        let local = mark.running_update(curr);
                        self.remote_enqueue(target, cpu, (w, ts), local)
                    }
                    // A fork enqueued on the forking CPU: the parent's `sched_stat_runtime`
                    // since `sched_process_fork` places the clock read (6.12
                    // `periodic-5pct-16ms-2`, `sh` 168 at 16.9316 s: `sched_wakeup_new`
                    // written 110 µs after it).
                    None if new && target == cpu => mark
                        .update_curr(curr)
                        .map_or(ts, |at| self.at(ClockPoint::ForkRuntime, at)),
                    None if new => self.at(ClockPoint::ForkRemote, ts),
                    _ => ts,
                };
                if let Some(c) = self.cpus.get_mut(&target) {
                    c.skip_clock = Some((pid, ts));
                }
                if new {
                    let t = self.task(pid, comm);
                    t.cpu = target;
                    t.weight = weight;
                    t.forked = true;
                    if let Some(w) = weight {
                        self.wake_up_new(ts, pid, target, w);
                    }
                } else {
                    let from = self.tasks.get(&pid).map(|t| t.cpu);
                    // A delayed task is woken by ttwu_runnable() on the waker's CPU, never
                    // through the target's wake list: one queued there was not delayed.
                    let queued = waking.is_some_and(|(_, wcpu)| wcpu != cpu);
                    if queued || from.is_some_and(|f| f != target) {
                        self.undo_delay(pid, ts);
                    }
                    if let Some(from) = from.filter(|&f| f != target) {
                        self.migrate(ts, pid, from, target, true);
                    }
                    self.attach_detached(pid, target, ts);
                    if weight.is_some() {
                        // A delayed task's requeue_delayed_entity(): updated still delayed.
                        self.update(Some(pid), target, ts);
                    } else {
                        self.rq_clock_only(target, ts);
                    }
                }
                if let Some((p, w)) = self.eevdf_weight(pid, prio) {
                    if let Some(e) = self.eevdf.as_mut() {
                        e.wake(target, p, w, new, ts);
                    }
                } else if prio_weight(prio).is_some() {
                    // A grouped wakee: its group's entity is enqueued (or requeued when
                    // delayed: enqueue_task_fair()'s requeue_delayed_entity()).
                    if let Some((key, w, _)) = self.eevdf_group(target, pid) {
                        if let Some(e) = self.eevdf.as_mut() {
                            e.wake(target, key, w, false, ts);
                        }
                    }
                }
                let t = self.task(pid, comm);
                t.on_rq = true;
                t.delayed = false;
                t.cpu = target;
                t.weight = weight;
            }
            Event::Wakeup {
                comm,
                pid,
                target_cpu,
                waking: true,
                ..
            } => {
                // The CPU's stopper.
                if stopper::is_stopper(comm) && target_cpu.is_none_or(|t| t == cpu) {
                    self.exec_sync(ts, cpu);
                }
                // Not before the read an `hrtimer_wakeup` callback's path allows.
                let median = self.at(ClockPoint::Waking, ts);
                let ts = self.timer_waking(cpu, ts).map_or(median, |t| t.max(median));
                self.task(pid, comm).waking = Some((ts, cpu));
            }
            Event::Migrate {
                pid,
                orig_cpu,
                dest_cpu,
                ..
            } => {
                // A task the model kept delayed but the kernel moves at its wake-up was
                // not delayed (a delayed task wakes where it is queued).
                if self.tasks.get(&pid).is_some_and(|t| t.waking.is_some()) {
                    self.undo_delay(pid, ts);
                }
                let delayed = self.delayed_by_move(pid);
                let queued = self.tasks.get(&pid).filter(|t| t.on_rq && !t.detached);
                let w = queued.and_then(|t| self.eevdf_weight(pid, None).and(t.weight));
                if let (Some(w), Some(e)) = (w, self.eevdf.as_mut()) {
                    // Written on the destination: a balance there pulled it.
                    let (cpus, pulled) = ((orig_cpu, dest_cpu), cpu == dest_cpu);
                    e.migrate_queued(pid, cpus, w, (pulled, delayed), ts);
                } else if queued.is_some() && orig_cpu != dest_cpu {
                    self.migrate_group_entity(pid, (orig_cpu, dest_cpu), ts);
                }
                if dest_cpu == cpu {
                    if let Some(at) = mark.update_curr(curr) {
                        self.dequeue_before_pull(cpu, curr, at);
                    }
                }
                // A sleeping task is detached and attached at once (the kernel folds its
                // removed load into the old cfs_rq at that CPU's next update). Only
                // try_to_wake_up() moves a sleeping task, right after its `sched_waking`: one
                // moved without it was queued (a balance), even one the trace has not shown
                // running or waking yet.
                let waking = self.tasks.get(&pid).is_some_and(|t| t.waking.is_some());
                self.migrate(ts, pid, orig_cpu, dest_cpu, waking);
                if !waking && dest_cpu != cpu {
                    self.moved_onto_idle(pid, dest_cpu, ts);
                    self.lock_move(cpu, pid, dest_cpu);
                }
            }
            Event::HrtimerExpire { function, .. } if is_tick(function) => {
                let idle = self.cpus.get(&cpu).and_then(|c| c.curr) == Some(0);
                let p = if idle {
                    ClockPoint::IdleTick
                } else {
                    ClockPoint::Tick
                };
                let c = self.cpus.entry(cpu).or_default();
                let curr = c.curr.unwrap_or(0);
                if self.stat_runtime && !idle {
                    c.tick = Some(ts);
                    self.ticks_waiting += 1;
                } else {
                    let ts = self.at(p, ts);
                    if curr != 0 {
                        self.update(Some(curr), cpu, ts);
                    } else if !self.sched_softirq {
                        self.update_blocked_averages(cpu, ts);
                    }
                    self.tick_eevdf(cpu, ts);
                }
            }
            Event::Softirq {
                vec: SCHED_SOFTIRQ,
                exit: false,
            } => {
                if self.periodic_balance(cpu, ts) {
                    self.newidle_softirq(ts);
                }
                if self.kicked_softirq(cpu) || self.kick_before_tick(cpu, ts) {
                    self.sched_softirq = true;
                } else {
                    self.sched_softirq(cpu, ts)
                }
            }
            Event::StatRuntime { pid, .. } => {
                self.stat_runtime = true;
                if self.cpus.get(&cpu).and_then(|c| c.curr) != Some(pid) {
                    self.note_remote_update_curr(ts, cpu, pid);
                }
                // An exiting task's sched_move_task() still to come: its dequeue_entity()
                // calls update_curr() right before its update, on the clock the move read
                // after `sched_process_exit` (6.1 `wakeup-storm`, `storm` at 14.3208 s:
                // 8 µs after it).
                let mut at = self.at(ClockPoint::Dequeue, ts);
                // Its `runtime=` chained from the last update_curr() places the clock read
                // (6.12 `periodic-5pct-16ms`, `p5` at 19.9946 s: written 0.1 ms after it).
                if let Some(ch) = self.chained_read(cpu, pid, at) {
                    at = at.min(ch);
                }
                if let Some(c) = self.cpus.get_mut(&cpu).filter(|c| c.curr == Some(pid)) {
                    for d in c.deferred.iter_mut().filter(|d| d.own && d.pid == pid) {
                        d.ts = d.ts.max(at);
                    }
                }
                let c = self.cpus.entry(cpu).or_default();
                if c.curr == Some(pid) && c.tick.take().is_some() {
                    self.ticks_waiting = self.ticks_waiting.saturating_sub(1);
                    let ts = self.at(ClockPoint::TickRuntime, ts);
                    self.update(Some(pid), cpu, ts);
                    self.tick_eevdf(cpu, ts);
                } else if c.curr == Some(pid) && c.resched.take().is_some() {
                    // The tick's __schedule() kept the task: its picks on this clock.
                    let ts = self.at(ClockPoint::PutPrev, ts);
                    self.resched_picks(cpu, ts);
                } else if c.curr == Some(pid) {
                    self.renice_requeue(ts, cpu, pid, at);
                }
            }
            Event::Exit { pid, .. } => {
                // do_exit(): the task still runs until its last sched_switch.
                if let Some(t) = self.tasks.get_mut(&pid) {
                    t.exiting = true;
                }
                self.sched_move_task(ts, pid);
            }
            Event::PeltCall(ref c) => {
                self.probe_key = true;
                self.answer_call(ts, c);
                self.pull_record(ts, cpu, c);
            }
            Event::PeltSe {
                pid,
                comm,
                load,
                runnable,
                util,
                update_time,
                cpu: ecpu,
            } if !self.probe_key => {
                self.answer_lisa(
                    ts,
                    ecpu,
                    Some((pid, comm)),
                    load,
                    runnable,
                    util,
                    update_time,
                );
            }
            Event::PeltCfs {
                cpu: ecpu,
                path,
                load,
                runnable,
                util,
                update_time,
            } if !self.probe_key && path == "/" => {
                self.answer_lisa(ts, ecpu, None, load, runnable, util, update_time);
            }
            Event::UtilEstSe { pid, value, .. } if !self.probe_key => {
                let Some(task) = self.tasks.get_mut(&pid) else {
                    return Ok(());
                };
                if let Some(avg) = task.avg {
                    // The event precedes the sched_switch that dequeues: apply now.
                    let mut a = avg;
                    util_est_update(&mut a, true, &self.ue_cpu);
                    // LISA prints `enqueued` (the estimate on one-word kernels).
                    let k = match value {
                        UtilEstValue::Mainline(v) => v,
                        UtilEstValue::PreV6_9 { enqueued, .. } => enqueued,
                    };
                    let s = self.lisa_stats.0.entry(pid).or_default();
                    s.updates += 1;
                    let o = u64::from(a.util_est.enqueued() & !UTIL_AVG_UNCHANGED);
                    s.err[3].add(o, u64::from(k));
                    s.exact += u64::from(o == u64::from(k));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The busy ticks whose `sched_stat_runtime` did not come before another event (the
    /// running task had not run since its last update_curr(), or is not a fair task):
    /// their updates at [`ClockPoint::Tick`] after their `hrtimer_expire_entry`.
    fn ticks_at_entry(&mut self) {
        if self.ticks_waiting == 0 {
            return;
        }
        self.ticks_waiting = 0;
        let waiting: Vec<(u32, u64, i32)> = self
            .cpus
            .iter_mut()
            .filter_map(|(&cpu, c)| Some((cpu, c.tick.take()?, c.curr.unwrap_or(0))))
            .collect();
        for (cpu, ts, curr) in waiting {
            let ts = self.at(ClockPoint::Tick, ts);
            self.update((curr != 0).then_some(curr), cpu, ts);
            self.tick_eevdf(cpu, ts);
        }
    }

    /// A probe record as the answer key: initialise or compare.
    fn answer_call(&mut self, ts: u64, c: &PeltCall<'_>) {
        let version = self.profile.util_est;
        let t = self.tables;
        let defer_ue = self.util_est_before_dequeue;
        let kbefore = to_avg(&c.before, version);
        let kafter = to_avg(&c.after, version);
        let has_ue = c.after.util_est.is_some();
        let cpu = self.cpus.entry(c.cpu).or_default();
        if cpu.offset.is_none() {
            cpu.offset = Some(c.now as i64 - ts as i64);
        }
        match EntityKey::of_call(c) {
            EntityKey::CfsRq(ncpu, p) if p == "/" => {
                let (w, n, curr) = self.cfs_inputs(ncpu);
                let cpu = self.cpus.entry(ncpu).or_default();
                let Some(ours) = cpu.cfs else {
                    let mut cfs = kafter;
                    for pid in std::mem::take(&mut cpu.attach_on_sight) {
                        if let Some(task) = self.tasks.get_mut(&pid).filter(|t| t.cpu == ncpu) {
                            let w = task.weight_or_nice0();
                            if let Some(se) = task.avg.as_mut() {
                                attach_entity_load_avg(&mut cfs, se, w, t);
                            }
                        }
                    }
                    self.cpus.entry(ncpu).or_default().cfs = Some(cfs);
                    self.first_root_record(ncpu, cfs, kbefore);
                    self.run_deferred(ncpu, true, None);
                    return;
                };
                let mut p = ours;
                let mut removed = cpu.removed;
                update_cfs_rq_load_avg(c.now, &mut p, &mut removed, w, n, curr, t);
                if super::explaining() {
                    explain(
                        &format!("cpu{ncpu} /"),
                        ts,
                        c,
                        &ours,
                        &p,
                        &kbefore,
                        &kafter,
                        (w, u64::from(n), curr),
                        t,
                    );
                }
                compare(&mut cpu.stats, &p, &kafter, false);
                cpu.stats.entity = format!("cpu{ncpu} /");
                let perf = |u: u64| sugov_effective_cpu_perf(u, 0, 1024) as f64 * 100.0 / 1024.0;
                cpu.perf.0 += perf(kafter.util_avg);
                cpu.perf.1 += perf(p.util_avg);
                cpu.perf.2 += 1;
                self.cgroup_record(ncpu);
                self.run_deferred(ncpu, true, None);
            }
            EntityKey::Task(pid) => {
                let comm = c.comm.unwrap_or("");
                let first = self.task(pid, comm).avg.is_none();
                self.follow_group(ts, pid, c.path, first);
                let task = self.task(pid, comm);
                let moved_unseen = first && task.detached && task.cpu != c.cpu;
                if task.cpu != c.cpu && first && !task.detached {
                    task.cpu = c.cpu;
                }
                let (decision, ours) = (task.sleep_decision.take(), task.delayed);
                if let (Some(e), Some(k)) = (self.eevdf.as_mut(), c.sched_delayed) {
                    if let Some(d) = decision {
                        e.decisions.check(d, k);
                        if eevdf::explain() {
                            let x = if d == k { " " } else { "X" };
                            eprintln!("{x} pid {pid} cpu{} at {ts}: ours {d} kernel {k}", c.cpu);
                        }
                    }
                    if c.path == "/" {
                        e.decisions.record(ours, k);
                    }
                }
                let task = self.task(pid, comm);
                let Some(ours) = task.avg else {
                    // First sight: the kernel's state after this call, and its weight
                    // as printed by the sched events (or nice 0).
                    let mut a = kafter;
                    if version == UtilEstVersion::Mainline && !has_ue {
                        a.util_est = UtilEst::Mainline(0);
                    }
                    task.avg = Some(a);
                    if moved_unseen {
                        // Its first record is remove_entity_load_avg()'s sync on the CPU
                        // it left before we knew its signal: that removal still counts.
                        let r = &mut self.cpus.entry(c.cpu).or_default().removed;
                        r.nr += 1;
                        r.util_avg += a.util_avg;
                        r.load_avg += a.load_avg;
                        r.runnable_avg += a.runnable_avg;
                    }
                    return;
                };
                let mut p = ours;
                // migrate_task_rq_fair(): the sync's own record, before the lag's update
                // (our task is at the lag's instant already): compared with the synced state.
                if let Some(s) = task.synced.take() {
                    if c.kind == PeltCallKind::BlockedSe && c.now < ours.last_update_time {
                        p = s;
                    }
                }
                let se = se_pelt(task);
                if c.kind == PeltCallKind::BlockedSe {
                    let mut blocked = se;
                    blocked.on_rq = false;
                    blocked.is_curr = false;
                    __update_load_avg_se(c.now, &mut p, &blocked, t);
                } else {
                    __update_load_avg_se(c.now, &mut p, &se, t);
                }
                let name = format!("pid {pid} {}", task.comm);
                if super::explaining() {
                    explain(
                        &format!("pid {pid}"),
                        ts,
                        c,
                        &ours,
                        &p,
                        &kbefore,
                        &kafter,
                        (se.load_weight, u64::from(se.on_rq), se.is_curr),
                        t,
                    );
                }
                let trail = std::mem::take(&mut task.trail);
                if super::explaining() {
                    explain_trail(&format!("pid {pid}"), &trail);
                }
                task.stats.entity = name;
                task.settle();
                if defer_ue && has_ue {
                    // v6.12's dequeue updates util_est before its PELT update, so this
                    // record already shows it if the task sleeps next: compared at the
                    // next sched_switch that tells (Task::pending).
                    task.pending = Some((p, kafter));
                } else {
                    compare(&mut task.stats, &p, &kafter, has_ue);
                }
                let _ = kbefore;
            }
            key => self.answer_group(ts, c, &key, &kbefore, &kafter),
        }
    }

    /// A LISA `sched_pelt_*` event as the answer key (no probe records in the trace).
    #[allow(clippy::too_many_arguments)]
    fn answer_lisa(
        &mut self,
        ts: u64,
        cpu: u32,
        task: Option<(i32, &str)>,
        load: u64,
        runnable: Option<u64>,
        util: u64,
        update_time: u64,
    ) {
        let t = self.tables;
        let c = self.cpus.entry(cpu).or_default();
        // The event is written right after the update: its lut is the rq clock rounded
        // down to 1024 ns (the best offset sched events alone do not give).
        if c.offset.is_none() {
            c.offset = Some(update_time as i64 - ts as i64);
        }
        let divider = u64::from(t.pelt_min_divider());
        let init = SchedAvg {
            last_update_time: update_time,
            load_sum: load * divider,
            runnable_sum: runnable.unwrap_or(0) * divider,
            util_sum: (util * divider) as u32, // util <= 1024: fits
            period_contrib: 0,
            load_avg: load,
            runnable_avg: runnable.unwrap_or(0),
            util_avg: util,
            util_est: UtilEst::new(self.profile.util_est),
        };
        let Some(now) = self.clock(cpu, ts) else {
            return;
        };
        match task {
            Some((pid, comm)) => {
                let tk = self.task(pid, comm);
                let Some(ours) = tk.avg else {
                    // A task's load_sum is not weighted (load_avg = weight * sum / divider).
                    let w = tk.weight_or_nice0().max(1);
                    tk.avg = Some(SchedAvg {
                        load_sum: init.load_sum / w,
                        ..init
                    });
                    return;
                };
                let mut p = ours;
                __update_load_avg_se(now, &mut p, &se_pelt(tk), t);
                let name = format!("pid {pid} {}", tk.comm);
                let s = self.lisa_stats.0.entry(pid).or_default();
                s.entity = name;
                compare_avgs(s, &p, load, runnable, util);
            }
            None => {
                let (w, n, curr) = self.cfs_inputs(cpu);
                let c = self.cpus.entry(cpu).or_default();
                let Some(ours) = c.cfs else {
                    c.cfs = Some(init);
                    return;
                };
                let mut p = ours;
                let mut removed = c.removed;
                update_cfs_rq_load_avg(now, &mut p, &mut removed, w, n, curr, t);
                let s = self.lisa_stats.1.entry(cpu).or_default();
                s.entity = format!("cpu{cpu} /");
                compare_avgs(s, &p, load, runnable, util);
            }
        }
    }

    /// The per-entity counters (CPUs first, then tasks by pid) and per-CPU frequency
    /// requests (kernel's signal, ours).
    pub fn finish(self) -> (Vec<EntityStats>, Vec<(u32, f64, f64)>) {
        self.newidle_summary();
        let mut out = Vec::new();
        let mut perf = Vec::new();
        if self.probe_key {
            for (cpu, c) in &self.cpus {
                if c.stats.updates > 0 {
                    out.push(c.stats.clone());
                    let n = c.perf.2.max(1) as f64;
                    perf.push((*cpu, c.perf.0 / n, c.perf.1 / n));
                }
            }
            out.extend(self.group_stats());
            let mut tasks: Vec<_> = self
                .tasks
                .into_iter()
                .map(|(pid, mut t)| {
                    t.settle();
                    (pid, t)
                })
                .filter(|(_, t)| t.stats.updates > 0)
                .collect();
            tasks.sort_by_key(|(pid, _)| *pid);
            out.extend(tasks.into_iter().map(|(_, t)| t.stats));
        } else {
            out.extend(self.lisa_stats.1.into_values());
            let mut tasks: Vec<_> = self.lisa_stats.0.into_iter().collect();
            tasks.sort_by_key(|(pid, _)| *pid);
            out.extend(tasks.into_iter().map(|(_, s)| s));
        }
        (out, perf)
    }
}

/// Debug aid: `SCHEDMATH_REPLAY_EXPLAIN="cpu0 /"` (or `pid N`) prints each answer-key
/// comparison of that entity to stderr.
#[allow(clippy::too_many_arguments)]
fn explain(
    name: &str,
    ts: u64,
    c: &PeltCall<'_>,
    ours: &SchedAvg,
    p: &SchedAvg,
    kb: &SchedAvg,
    ka: &SchedAvg,
    inputs: (u64, u64, bool),
    t: &PeltTables,
) {
    if !super::explains(name) {
        return;
    }
    // A list explains several entities, each line then named.
    let many = super::explain_names().len() > 1;
    let _ = t;
    if many {
        eprint!("[{name}] ");
    }
    // `*`: our last update was not at the kernel's (a missed or extra update point).
    let diverged_before = ours.last_update_time != kb.last_update_time;
    let ok =
        p.util_avg == ka.util_avg && p.load_avg == ka.load_avg && p.runnable_avg == ka.runnable_avg;
    eprintln!(
        "{}{:>6}.{:06} {:?} now={} k_blut={} our_lut={}{} k_in=lw{} l{} r{} run{} our_in=w{} n{} run{} | k_b u/l/r={}/{}/{} pc{} | k_a={}/{}/{} pc{} ours_a={}/{}/{} pc{} ours_prev={}/{}/{} ue k={:?} ours={:?} | sums l/r/u k_b={} k_a={} ours_prev={} ours_a={}",
        if ok { "  " } else { "X " },
        ts / 1_000_000_000,
        ts % 1_000_000_000 / 1000,
        c.kind,
        c.now,
        kb.last_update_time,
        ours.last_update_time,
        if diverged_before { "*" } else { "" },
        c.lw,
        c.load,
        c.runnable,
        u8::from(c.running),
        inputs.0,
        inputs.1,
        u8::from(inputs.2),
        kb.util_avg,
        kb.load_avg,
        kb.runnable_avg,
        kb.period_contrib,
        ka.util_avg,
        ka.load_avg,
        ka.runnable_avg,
        ka.period_contrib,
        p.util_avg,
        p.load_avg,
        p.runnable_avg,
        p.period_contrib,
        ours.util_avg,
        ours.load_avg,
        ours.runnable_avg,
        ka.util_est,
        p.util_est,
        sums(kb),
        sums(ka),
        sums(ours),
        sums(p),
    );
}

/// Debug aid: with `explain`, our updates of a task since its previous record.
fn explain_trail(name: &str, trail: &[(u64, SchedAvg, bool, bool)]) {
    if !super::explains(name) {
        return;
    }
    for (now, pre, on_rq, running) in trail {
        eprintln!(
            "[{name}]   ours at now={now} pre_lut={} pre_sums={} pc{} n{} run{}",
            pre.last_update_time,
            sums(pre),
            pre.period_contrib,
            u8::from(*on_rq),
            u8::from(*running),
        );
    }
}

fn sums(a: &SchedAvg) -> String {
    format!("{}/{}/{}", a.load_sum, a.runnable_sum, a.util_sum)
}

fn compare(s: &mut EntityStats, ours: &SchedAvg, k: &SchedAvg, util_est: bool) {
    s.updates += 1;
    s.err[0].add(ours.util_avg, k.util_avg);
    s.err[1].add(ours.load_avg, k.load_avg);
    s.err[2].add(ours.runnable_avg, k.runnable_avg);
    let ue = |a: &SchedAvg| u64::from(a.util_est.enqueued() & !UTIL_AVG_UNCHANGED);
    if util_est {
        s.err[3].add(ue(ours), ue(k));
    }
    let same = ours.util_avg == k.util_avg
        && ours.load_avg == k.load_avg
        && ours.runnable_avg == k.runnable_avg
        && (!util_est || ue(ours) == ue(k));
    s.exact += u64::from(same);
}

fn compare_avgs(s: &mut EntityStats, ours: &SchedAvg, load: u64, runnable: Option<u64>, util: u64) {
    s.updates += 1;
    s.err[0].add(ours.util_avg, util);
    s.err[1].add(ours.load_avg, load);
    if let Some(r) = runnable {
        s.err[2].add(ours.runnable_avg, r);
    }
    let same = ours.util_avg == util
        && ours.load_avg == load
        && runnable.is_none_or(|r| r == ours.runnable_avg);
    s.exact += u64::from(same);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn migrate(comm: &str, pid: i32, orig_cpu: u32, dest_cpu: u32) -> Event<'_> {
        Event::Migrate {
            comm,
            pid,
            orig_cpu,
            dest_cpu,
        }
    }

    /// `sched_stat_runtime` of `pid` (update_curr()), for the tests here and in the
    /// submodules.
    pub(super) fn rt(pid: i32) -> Event<'static> {
        Event::StatRuntime {
            pid,
            runtime: 1,
            vruntime: None,
        }
    }

    /// A replay whose `cpus` have a cfs_rq at zero and the trace clock as rq clock (also
    /// for the submodules' tests).
    pub(super) fn on_cpus(cpus: &[u32]) -> InferReplay {
        let mut r = InferReplay::new(Profile::MAINLINE, None);
        for &cpu in cpus {
            let c = r.cpus.entry(cpu).or_default();
            c.offset = Some(0);
            c.cfs = Some(SchedAvg::default());
        }
        r
    }

    /// The dequeue's (or put_prev's) `sched_stat_runtime` is the running task's last since
    /// the CPU's last sched event or timer exit, not the tick's, a remote CPU's or an
    /// attach's.
    #[test]
    fn a_dequeue_is_the_last_update_curr_after_the_last_event() {
        let tick = Event::HrtimerExpire {
            function: "tick_sched_timer",
            now: None,
        };
        let pull = migrate("b", 8, 1, 0);
        let mut m = ScheduleMark::default();
        // A tick's own update_curr(), then, after its exit, the dequeue's.
        for (ts, ev) in [(1, tick), (2, rt(7)), (3, Event::HrtimerExit), (4, rt(7))] {
            m.event(ts, 0, 7, &ev);
        }
        assert_eq!(m.update_curr(7), Some(4));
        assert_eq!(m.update_curr(8), None);
        // A newly-idle balance pulls a task after the dequeue: its enqueue's update_curr()
        // of the (dequeued) running task is not the dequeue.
        for (ts, ev) in [(5, pull), (6, rt(7)), (7, rt(9))] {
            m.event(ts, 0, 7, &ev);
        }
        assert_eq!(m.update_curr(7), Some(4));
        // The balance softirq's attach, then the dequeue; a sched event forgets both.
        let mut m = ScheduleMark::default();
        for (ts, ev) in [(1, pull), (2, rt(7)), (3, rt(7))] {
            m.event(ts, 0, 7, &ev);
        }
        assert_eq!(m.update_curr(7), Some(3));
        m.event(4, 0, 7, &tick);
        assert_eq!(m.update_curr(7), None);
        // After the tick: a `__schedule()` that kept the task (6.12 hogs-nice, 27.8236 s),
        // an update no event shows (27.8252 s), then the put_prev before the switch.
        let mut m = ScheduleMark::default();
        for (ts, ev) in [(1, Event::HrtimerExit), (2, rt(7)), (3, rt(7)), (4, rt(7))] {
            m.event(ts, 0, 7, &ev);
        }
        assert_eq!(m.update_curr(7), Some(4));
    }

    /// A preempted task that wrote no `sched_stat_runtime` after a balance's attach on its
    /// CPU is switched out on that attach's clock (rq_clock_skip_update()); one that wrote
    /// its own put_prev's is switched out on that.
    #[test]
    fn a_switch_without_update_curr_after_an_attach_runs_on_its_clock() {
        let pull = migrate("b", 8, 1, 0);
        let mut m = ScheduleMark::default();
        for (ts, ev) in [(1, Event::HrtimerExit), (2, pull), (3, rt(7))] {
            m.event(ts, 0, 7, &ev);
        }
        assert_eq!(m.update_curr(7), None);
        assert_eq!(m.attach_clock(7), Some(3));
        assert_eq!(m.attach_clock(9), None);
        m.event(4, 0, 7, &rt(7));
        assert_eq!((m.update_curr(7), m.attach_clock(7)), (Some(4), None));
    }

    /// A pull onto an idle CPU (the SCHED softirq's balance) makes its next switch from
    /// the idle task run on the pull's clock; a sched event in between ends that.
    #[test]
    fn a_switch_from_idle_after_a_pull_runs_on_its_clock() {
        let mut m = ScheduleMark::default();
        for (ts, ev) in [(1, Event::HrtimerExit), (2, migrate("p50", 8, 1, 0))] {
            m.event(ts, 0, 0, &ev);
        }
        assert!(m.idle_pull(0));
        assert!(!m.idle_pull(7));
        // A pull from this CPU is not one onto it.
        let mut n = ScheduleMark::default();
        n.event(2, 0, 0, &migrate("p50", 8, 0, 1));
        assert!(!n.idle_pull(0));
    }

    /// do_exit() can wake another task and be preempted between `sched_process_exit` and
    /// its sched_move_task(): the task is not dead at that switch-out, and the move waits
    /// until it runs again (its clock from that switch-in); it dies at its `X` switch.
    #[test]
    fn an_exiting_task_preempted_before_its_move_finishes_its_exit_later() {
        let sw = |prev_pid, prev_state, next_pid| {
            Event::Switch(Switch {
                prev_comm: "p",
                prev_pid,
                prev_prio: Some(120),
                prev_state,
                next_comm: "n",
                next_pid,
                next_prio: Some(120),
            })
        };
        let mut r = InferReplay::new(Profile::MAINLINE, None);
        r.current(0, 10, "cut");
        let c = r.cpus.entry(0).or_default();
        c.offset = Some(0);
        c.cfs = Some(SchedAvg::default());
        if let Some(t) = r.tasks.get_mut(&10) {
            t.avg = Some(SchedAvg::default());
        }
        let steps = |r: &InferReplay| -> Vec<(u64, bool)> {
            r.cpus[&0].deferred.iter().map(|d| (d.ts, d.own)).collect()
        };
        r.event(
            1_000,
            0,
            &Event::Exit {
                comm: "cut",
                pid: 10,
            },
        )
        .unwrap();
        assert_eq!(steps(&r), [(1_000, true), (1_000, true)]);
        // It wakes its shell (exit_files()): the wake-up does not settle its move.
        let wakeup = Event::Wakeup {
            comm: "sh",
            pid: 11,
            prio: Some(120),
            target_cpu: Some(0),
            waking: false,
            new: false,
        };
        r.event(1_500, 0, &wakeup).unwrap();
        assert_eq!(steps(&r), [(1_500, true), (1_500, true)]);
        // Preempted by the task it woke: still alive on cpu0, the move still pending.
        r.event(2_000, 0, &sw(10, "R", 11)).unwrap();
        assert_eq!(r.tasks[&10].cpu, 0);
        assert_eq!(steps(&r), [(1_500, true), (1_500, true)]);
        // That task sleeps, the exiting one runs again: the move reads the clock from now.
        r.event(3_000, 0, &sw(11, "S", 10)).unwrap();
        assert_eq!(steps(&r), [(3_000, true), (3_000, true)]);
        // Its last switch: the move is done first, then task_dead_fair() (by the CPU's
        // next event).
        r.event(4_000, 0, &sw(10, "X", 0)).unwrap();
        assert!(steps(&r).is_empty());
        r.event(5_000, 0, &Event::CpuIdle { state: 1, cpu: 0 })
            .unwrap();
        assert_eq!(r.tasks[&10].cpu, u32::MAX);
    }

    /// A task moved without its `sched_waking` was queued (a newly-idle balance pulled it:
    /// 6.12 `periodic-90pct-16ms`, 16.9018 s, a task the trace had not shown yet): it is
    /// detached from the old cfs_rq at once and attached after the new one's update, not
    /// left as removed load there until it runs.
    #[test]
    fn a_task_moved_without_its_waking_was_queued() {
        let mut r = on_cpus(&[0, 1]);
        let util = |r: &InferReplay, cpu| r.cpus[&cpu].cfs.map(|c| c.util_avg);
        let se = SchedAvg {
            util_avg: 502,
            util_sum: 502 * 47_742,
            ..SchedAvg::default()
        };
        let cfs = |r: &mut InferReplay, cpu, util_avg: u32| {
            if let Some(c) = r.cpus.get_mut(&cpu).and_then(|c| c.cfs.as_mut()) {
                c.util_avg = u64::from(util_avg);
                c.util_sum = util_avg * 47_742;
            }
        };
        cfs(&mut r, 0, 662);
        r.task(166, "trace-cmd").avg = Some(se);
        let pull = migrate("trace-cmd", 166, 0, 1);
        r.event(1_000, 1, &pull).unwrap();
        assert_eq!(util(&r, 0), Some(160), "detached from cpu0 at once");
        assert!(r.tasks[&166].on_rq && r.tasks[&166].detached);
        // The same move in a wake-up (its `sched_waking` first): removed load on cpu0.
        let mut w = on_cpus(&[0, 1]);
        cfs(&mut w, 0, 662);
        w.task(166, "trace-cmd").avg = Some(se);
        let waking = Event::Wakeup {
            comm: "trace-cmd",
            pid: 166,
            prio: Some(120),
            target_cpu: Some(1),
            waking: true,
            new: false,
        };
        w.event(900, 1, &waking).unwrap();
        w.event(1_000, 1, &pull).unwrap();
        assert_eq!(util(&w, 0), Some(662), "removed load, folded in later");
        assert!(!w.tasks[&166].on_rq);
    }

    /// v6.12: a balance moves a task the replay holds asleep (the model had ended its delay
    /// at a pick the kernel did not make: 6.12 `wakeup-storm`, rt-app's main thread,
    /// 16.9599 s): it was delayed, so it is queued on the new CPU without its runnable,
    /// attached there, and the new CPU's next pick dequeues it.
    #[test]
    fn a_sleeper_moved_by_a_balance_was_delayed() {
        let mut r = on_cpus(&[0, 1]);
        r.set_kernel(Some((6, 12)));
        r.set_eevdf(2, 250);
        r.task(170, "rt-app").avg = Some(SchedAvg {
            util_avg: 311,
            util_sum: 311 * 47_742,
            ..SchedAvg::default()
        });
        let sleep = |prev_pid, prev_comm| {
            Event::Switch(Switch {
                prev_comm,
                prev_pid,
                prev_prio: Some(120),
                prev_state: "S",
                next_comm: "swapper",
                next_pid: 0,
                next_prio: Some(120),
            })
        };
        // Alone on cpu1, its sleep is not delayed in the model.
        r.current(1, 170, "rt-app");
        r.event(500, 1, &sleep(170, "rt-app")).unwrap();
        assert!(!r.tasks[&170].on_rq);
        r.current(0, 172, "storm");
        r.event(1_000, 0, &migrate("rt-app", 170, 1, 0)).unwrap();
        let t = &r.tasks[&170];
        assert!(t.on_rq && t.delayed && t.cpu == 0);
        assert_eq!(
            r.cfs_inputs(0).1,
            1,
            "queued without its runnable: storm's only"
        );
        // cpu0 goes idle: the pick meets the delayed task and dequeues it.
        r.event(2_000, 0, &sleep(172, "storm")).unwrap();
        let t = &r.tasks[&170];
        assert_eq!((t.on_rq, t.delayed, t.detached), (false, false, false));
    }

    /// v6.12: a tick's reschedule picks in the `__schedule()` that follows: at the running
    /// task's next `sched_stat_runtime` when that is its CPU's next event (6.12
    /// `periodic-100ms`, 19.2440 s), else (another event of that CPU first) on the tick's
    /// clock; the tick's own exit and other CPUs' events leave it pending.
    #[test]
    fn a_tick_reschedule_picks_in_its_schedule() {
        let mut r = on_cpus(&[0, 1]);
        r.set_kernel(Some((6, 12)));
        r.set_eevdf(2, 250);
        r.current(0, 7, "a");
        r.current(1, 8, "b");
        let waking = Event::Wakeup {
            comm: "c",
            pid: 9,
            prio: Some(120),
            target_cpu: Some(0),
            waking: true,
            new: false,
        };
        r.cpus.get_mut(&0).unwrap().resched = Some(100);
        for (ts, cpu, ev) in [(150, 0, Event::HrtimerExit), (160, 1, rt(8))] {
            r.event(ts, cpu, &ev).unwrap();
            assert_eq!(r.cpus[&0].resched, Some(100));
        }
        r.event(200, 0, &rt(7)).unwrap();
        assert_eq!(r.cpus[&0].resched, None);
        r.cpus.get_mut(&0).unwrap().resched = Some(300);
        r.event(400, 0, &waking).unwrap();
        assert_eq!(r.cpus[&0].resched, None);
    }

    /// v6.12: a wake-up run from the target's wake list (`sched_wakeup` written on another
    /// CPU than its `sched_waking`) was not of a delayed task (ttwu_runnable() requeues
    /// those from the waker's CPU): a delay the model kept ends there.
    #[test]
    fn a_wake_list_wake_up_ends_a_delay() {
        let mut r = on_cpus(&[0, 1]);
        r.set_kernel(Some((6, 12)));
        r.set_eevdf(2, 250);
        r.task(170, "rt-app").avg = Some(SchedAvg::default());
        if let Some(t) = r.tasks.get_mut(&170) {
            (t.cpu, t.on_rq, t.delayed) = (0, true, true);
        }
        let wake = |waking| Event::Wakeup {
            comm: "rt-app",
            pid: 170,
            prio: Some(120),
            target_cpu: Some(0),
            waking,
            new: false,
        };
        r.event(1_000, 1, &wake(true)).unwrap();
        r.event(1_100, 0, &wake(false)).unwrap();
        assert_eq!(r.decisions().map(|d| d.woken_elsewhere), Some(1));
        let t = &r.tasks[&170];
        assert!(t.on_rq && !t.delayed);
    }

    /// A pull written on a CPU whose running task wrote `sched_stat_runtime` since the last
    /// sched event is a newly-idle balance: that task was dequeued at its mark (6.1
    /// `mixed-sleep-timer`, cpu0, 13.522 s: 2 ms before its `sched_switch`), so the
    /// pulled task's attach sees the cfs_rq without it.
    #[test]
    fn a_newly_idle_pull_comes_after_the_dequeue() {
        let mut r = on_cpus(&[0, 1]);
        r.current(0, 7, "frame");
        r.tasks.get_mut(&7).unwrap().avg = Some(SchedAvg::default());
        let rt = Event::StatRuntime {
            pid: 7,
            runtime: 1,
            vruntime: None,
        };
        let pull = migrate("tick", 8, 1, 0);
        r.event(1_000_000, 0, &rt).unwrap();
        r.event(3_000_000, 0, &pull).unwrap();
        let t = &r.tasks[&7];
        assert!(!t.running && !t.on_rq);
        // (last_update_time is kept on a 1024 ns boundary)
        assert_eq!(
            t.avg.map(|a| a.last_update_time),
            Some(1_000_000 / 1024 * 1024)
        );
        assert_eq!(r.cfs_inputs(0), (0, 0, false));
        // After a tick's exit the same pull is the balance softirq's: the task runs on.
        let mut r = InferReplay::new(Profile::MAINLINE, None);
        r.current(0, 7, "frame");
        r.cpus.entry(0).or_default().offset = Some(0);
        r.event(1_000_000, 0, &rt).unwrap();
        r.event(2_000_000, 0, &Event::HrtimerExit).unwrap();
        r.event(3_000_000, 0, &pull).unwrap();
        assert!(r.tasks[&7].running && r.tasks[&7].on_rq);
    }

    /// A `sched_stat_runtime` written long after its clock read (6.1 `cgroup-weight`,
    /// 12.9752 s: `runtime=326432` after the tick's update, written 1.66 ms later) stands
    /// at its task's `exec_start` + runtime; one within [`LATE_WRITE`] keeps its stamp.
    #[test]
    fn a_late_stat_runtime_is_placed_by_its_runtime() {
        let mut r = on_cpus(&[1]);
        r.current(1, 140, "bgp");
        if let Some(c) = r.cpus.get_mut(&1) {
            c.exec = Some((140, 1_000_000));
        }
        assert_eq!(r.exec_chain(3_000_000, 140, 326_432), 1_326_432);
        // The chain goes on from there: 15 µs late is within the points' spread.
        assert_eq!(r.exec_chain(1_500_000, 140, 158_568), 1_500_000);
        assert_eq!(r.cpus[&1].exec, Some((140, 1_500_000)));
        // 50 µs late is not (a vCPU paused between the read and the write).
        assert_eq!(r.exec_chain(2_000_000, 140, 450_000), 1_950_000);
        // Another task's update_curr() (not running anywhere) is left alone.
        assert_eq!(r.exec_chain(9_000_000, 7, 1), 9_000_000);
    }

    #[test]
    fn an_update_point_takes_its_own_offset() {
        let o = ClockOffsets {
            global: 1_000,
            t0: 0,
            drift_ppb: 0,
            point: {
                let mut p = [None; CLOCK_POINTS];
                p[ClockPoint::Waking as usize] = Some(7);
                p[ClockPoint::SleepSwitch as usize] = Some(-29_000);
                p
            },
        };
        // The rq clock is `at() + global`: the point's own offset from its event.
        assert_eq!(
            o.at(ClockPoint::Waking, 5_000) as i64 + o.global,
            5_000 + 1_007
        );
        assert_eq!(
            o.at(ClockPoint::SleepSwitch, 50_000) as i64 + o.global,
            50_000 - 28_000
        );
        assert_eq!(o.at(ClockPoint::Tick, 5_000), 5_000);
        // A drifting offset: -11 µs per second of trace from t0.
        let d = ClockOffsets {
            t0: 10_000_000_000,
            drift_ppb: -11_000,
            ..o
        };
        assert_eq!(d.global_at(10_000_000_000), 1_000);
        assert_eq!(d.global_at(12_000_000_000), 1_000 - 22_000);
        assert_eq!(d.global_at(9_000_000_000), 1_000 + 11_000);
    }

    /// A wake-up on cpu0 at 1 µs that preempts pid 1 (pid 2 the wakee), then `between`,
    /// then the switch 1 → 2 at 2 ms: where the replay puts that `__schedule()`'s clock
    /// (the wakee's `exec_start`).
    fn switch_after_preempting_wakeup(between: &[(u64, Event<'_>)]) -> Option<(i32, u64)> {
        let mut r = on_cpus(&[0]);
        r.current(0, 1, "p90");
        if let Some(t) = r.tasks.get_mut(&1) {
            t.avg = Some(SchedAvg::default());
        }
        r.cpus.entry(0).or_default().exec = Some((1, 0));
        let wake = |waking| Event::Wakeup {
            comm: "rt-app",
            pid: 2,
            prio: Some(120),
            target_cpu: Some(0),
            waking,
            new: false,
        };
        r.event(1_000, 0, &wake(true)).unwrap();
        r.event(1_500, 0, &wake(false)).unwrap();
        for (ts, ev) in between {
            r.event(*ts, 0, ev).unwrap();
        }
        let sw = Event::Switch(Switch {
            prev_comm: "p90",
            prev_pid: 1,
            prev_prio: Some(120),
            prev_state: "R",
            next_comm: "rt-app",
            next_pid: 2,
            next_prio: Some(120),
        });
        r.event(2_000_000, 0, &sw).unwrap();
        r.cpus[&0].exec
    }

    /// `__schedule()` after a preempting wake-up skips its clock update: it runs on the rq
    /// clock's last update, the wake-up's or a later tick's (6.1 `periodic-100ms`, `p90`
    /// at 15.4626 s on the clock of a pull 1.7 ms before), unless prev's update_curr()
    /// there charged time past that (a fresh read: the wake-up did not preempt).
    #[test]
    fn a_skipped_clock_update_runs_on_the_last_one() {
        assert_eq!(switch_after_preempting_wakeup(&[]), Some((2, 1_000)));
        let tick = Event::HrtimerExpire {
            function: "tick_sched_timer",
            now: None,
        };
        let tick_then_exit = [(100_000, tick), (101_000, Event::HrtimerExit)];
        assert_eq!(
            switch_after_preempting_wakeup(&tick_then_exit),
            Some((2, 100_000))
        );
        // prev's update_curr() 1.9 ms after its exec_start: a fresh clock read.
        let rt = |runtime| Event::StatRuntime {
            pid: 1,
            runtime,
            vruntime: None,
        };
        let fresh = [(1_900_000, rt(1_900_000))];
        assert_eq!(switch_after_preempting_wakeup(&fresh), Some((2, 1_900_000)));
        // One whose runtime chains it to the wake-up's clock is on the skipped update.
        let skipped = [(1_900_000, rt(1_000))];
        assert_eq!(switch_after_preempting_wakeup(&skipped), Some((2, 1_000)));
    }
}
