// SPDX-License-Identifier: GPL-2.0-only
//! Typed scheduler events from [`Record`]s.
//!
//! Known events: the sched tracepoints (`sched_switch`, `sched_waking`, `sched_wakeup`,
//! `sched_wakeup_new`, `sched_migrate_task`, `sched_process_fork`, `sched_process_exit`,
//! `sched_process_exec`), `cgroup_attach_task`,
//! `sched_stat_runtime`, `cpu_idle`, `cpu_frequency`, the tick's `hrtimer_expire_entry`,
//! `softirq_entry`/`softirq_exit`,
//! LISA's events
//! (`lisa__sched_pelt_se`, `lisa__sched_pelt_cfs`, `lisa__sched_util_est_se`,
//! `lisa__sched_util_est_cfs`, `lisa__sched_overutilized`, `lisa__sched_cpu_capacity`; the
//! `sched_` names without the `lisa__` prefix too) and the lab probe's per-call PELT events
//! ([`PeltCall`]). Anything else is [`Event::Other`], which the user counts as a skip.
//!
//! sched_switch and sched_wakeup come in two text forms: the kernel's print format
//! (`prev_comm=a prev_pid=1 ... ==> next_comm=b next_pid=2 ...`) and trace-cmd's sched
//! plugin (`a:1 [120] S ==> b:2 [120]`, `b:2 [120] success=1 CPU:001`); both are read.

use schedmath::pelt::{PeltTables, SchedAvg};
use schedmath::profile::Halflife;
use schedmath::util_est::UtilEst;

use super::report::{fields, Record};

/// `sched_switch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch<'a> {
    /// The task leaving the CPU.
    pub prev_comm: &'a str,
    /// Its pid.
    pub prev_pid: i32,
    /// Its priority (100..139 = SCHED_OTHER nice -20..19), if printed.
    pub prev_prio: Option<i32>,
    /// Its state letter(s): `R`/`R+` = preempted (still runnable), else it sleeps.
    pub prev_state: &'a str,
    /// The task entering.
    pub next_comm: &'a str,
    /// Its pid.
    pub next_pid: i32,
    /// Its priority, if printed.
    pub next_prio: Option<i32>,
}

impl Switch<'_> {
    /// Whether `prev` stays runnable (preempted) rather than going to sleep.
    pub fn prev_runnable(&self) -> bool {
        self.prev_state.starts_with('R')
    }
}

/// A task's util_est as LISA's `sched_util_est_se` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilEstValue {
    /// v6.9+: `util_est` (the flag masked off).
    Mainline(u32),
    /// Before v6.9: `enqueued` and `ewma`.
    PreV6_9 {
        /// `util_est.enqueued`.
        enqueued: u32,
        /// `util_est.ewma`.
        ewma: u32,
    },
}

/// Which PELT function the probe saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeltCallKind {
    /// `__update_load_avg_se`.
    Se,
    /// `__update_load_avg_blocked_se`.
    BlockedSe,
    /// `__update_load_avg_cfs_rq`.
    CfsRq,
}

/// `struct sched_avg` as the probe prints it (before or after the call): the core's
/// [`SchedAvg`] for the PELT fields and the util_est words as printed (the layout they
/// are read in is the replay's profile's, see `replay::probe::to_avg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeltState {
    /// The PELT sums and averages (`util_est` left at its default: see below).
    pub avg: SchedAvg,
    /// The raw util_est word with its flag (mainline) or `util_est.enqueued` (pre-v6.9).
    pub util_est: Option<u32>,
    /// `util_est.ewma` (pre-v6.9 only).
    pub util_est_ewma: Option<u32>,
}

/// What a probe record's entity is (`kind=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeltEntity {
    /// A task's sched_entity.
    Task,
    /// A task group's sched_entity on one CPU.
    Group,
    /// A cfs_rq.
    CfsRq,
}

/// One call of a PELT update function, recorded by the lab probe's
/// `schedmath__pelt_update` event (fields: fixtures/lab/README.md): the arguments and the
/// entity's `sched_avg` before (`b_*`) and after (`a_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeltCall<'a> {
    /// Which function (`fn=`).
    pub kind: PeltCallKind,
    /// Which entity (`kind=`).
    pub entity: PeltEntity,
    /// The CPU of the cfs_rq.
    pub cpu: u32,
    /// The task's pid (`kind=task`), else `None`.
    pub pid: Option<i32>,
    /// The task's comm (`kind=task`).
    pub comm: Option<&'a str>,
    /// The cgroup path (`/` = root).
    pub path: &'a str,
    /// `now` (rq_clock_pelt, ns).
    pub now: u64,
    /// `lw`: `se->load.weight` / `cfs_rq->load.weight`, scaled (nice 0 = 1048576).
    pub lw: u64,
    /// `load`: `___update_load_sum`'s load argument.
    pub load: u64,
    /// `runnable`: its runnable argument (se_runnable(), h_nr_runnable / h_nr_running).
    pub runnable: u64,
    /// `running`: its running argument.
    pub running: bool,
    /// `delayed`: `se->sched_delayed` (6.12; `None` for a cfs_rq).
    pub sched_delayed: Option<bool>,
    /// `ret`: the function's return value.
    pub ret: i32,
    /// The state before the call.
    pub before: PeltState,
    /// The state after.
    pub after: PeltState,
}

/// A typed event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// `sched_switch`.
    Switch(Switch<'a>),
    /// `sched_waking` (`new` false) or `sched_wakeup` / `sched_wakeup_new`.
    Wakeup {
        /// The woken task's comm.
        comm: &'a str,
        /// Its pid.
        pid: i32,
        /// Its priority, if printed.
        prio: Option<i32>,
        /// The CPU it was queued on, if printed.
        target_cpu: Option<u32>,
        /// `sched_waking` (the waker's side, before the task is queued).
        waking: bool,
        /// `sched_wakeup_new` (a forked task's first wake-up).
        new: bool,
    },
    /// `sched_migrate_task`.
    Migrate {
        /// The task's comm.
        comm: &'a str,
        /// Its pid.
        pid: i32,
        /// From.
        orig_cpu: u32,
        /// To.
        dest_cpu: u32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The parent's pid.
        parent_pid: i32,
        /// The child's comm.
        child_comm: &'a str,
        /// The child's pid.
        child_pid: i32,
    },
    /// `sched_process_exec` (fs/exec.c, after the new image is loaded; sched_exec()'s
    /// balance ran before it, at the start of the exec).
    Exec {
        /// The task's pid.
        pid: i32,
        /// Its pid before the exec (another thread's when a non-leader execs).
        old_pid: i32,
        /// The file executed.
        filename: &'a str,
    },
    /// `cgroup_attach_task` (kernel/cgroup/cgroup.c): a task moved into the cgroup
    /// `path` after the controllers' attach callbacks ran (the cpu controller's
    /// sched_move_task()).
    CgroupAttach {
        /// The task's pid.
        pid: i32,
        /// Its comm at the move.
        comm: &'a str,
        /// The destination cgroup's path (`/fg`).
        path: &'a str,
    },
    /// `sched_process_exit`.
    Exit {
        /// The task's comm.
        comm: &'a str,
        /// Its pid.
        pid: i32,
    },
    /// `sched_stat_runtime`: update_curr() charged `runtime` ns of the rq's task clock to
    /// the running task (kernel/sched/fair.c; written only when the delta is positive).
    StatRuntime {
        /// The task's pid.
        pid: i32,
        /// The delta of `rq_clock_task()` since the task's `exec_start` (ns).
        runtime: u64,
        /// Its vruntime after the update (v6.1; v6.8 dropped the field).
        vruntime: Option<u64>,
    },
    /// `cpu_idle`: `state` is the idle state entered, `u32::MAX` on exit.
    CpuIdle {
        /// The state (4294967295 = leaving idle).
        state: u64,
        /// The CPU.
        cpu: u32,
    },
    /// `cpu_frequency` (kHz).
    CpuFrequency {
        /// The frequency (kHz).
        state: u64,
        /// The CPU.
        cpu: u32,
    },
    /// `hrtimer_expire_entry` (the tick is `function=tick_sched_timer`).
    HrtimerExpire {
        /// The callback's name.
        function: &'a str,
        /// The timer base's `now` (ns), if printed.
        now: Option<u64>,
    },
    /// `hrtimer_expire_exit`: a timer callback returned (its interrupt's work is done).
    HrtimerExit,
    /// `softirq_entry` / `softirq_exit` (kernel/softirq.c): the handler of softirq vector
    /// `vec` starts / returns on the CPU that wrote it.
    Softirq {
        /// The vector ([`SCHED_SOFTIRQ`]: the load balance the tick raises).
        vec: u32,
        /// `softirq_exit` rather than `softirq_entry`.
        exit: bool,
    },
    /// `lisa__sched_pelt_se`.
    PeltSe {
        /// The CPU.
        cpu: u32,
        /// The task's pid (-1 for a group entity).
        pid: i32,
        /// The comm.
        comm: &'a str,
        /// `load_avg`.
        load: u64,
        /// `runnable_avg` (absent before v5.7).
        runnable: Option<u64>,
        /// `util_avg`.
        util: u64,
        /// `last_update_time`.
        update_time: u64,
    },
    /// `lisa__sched_pelt_cfs`.
    PeltCfs {
        /// The CPU.
        cpu: u32,
        /// The cgroup path (`/` = root).
        path: &'a str,
        /// `load_avg`.
        load: u64,
        /// `runnable_avg`.
        runnable: Option<u64>,
        /// `util_avg`.
        util: u64,
        /// `last_update_time`.
        update_time: u64,
    },
    /// `lisa__sched_util_est_se`.
    UtilEstSe {
        /// The CPU.
        cpu: u32,
        /// The task's pid.
        pid: i32,
        /// `util_avg`.
        util: u64,
        /// The estimate.
        value: UtilEstValue,
    },
    /// `lisa__sched_util_est_cfs`.
    UtilEstCfs {
        /// The CPU.
        cpu: u32,
        /// The cgroup path.
        path: &'a str,
        /// `util_avg`.
        util: u64,
        /// The enqueued sum (`util_est` or `enqueued`).
        util_est: u32,
    },
    /// `lisa__sched_overutilized`.
    Overutilized {
        /// The root domain's new status.
        overutilized: bool,
    },
    /// `lisa__sched_cpu_capacity`.
    CpuCapacity {
        /// The CPU.
        cpu: u32,
        /// `rq->cpu_capacity`.
        capacity: u64,
        /// The original capacity, if printed.
        capacity_orig: Option<u64>,
    },
    /// A probe record of one PELT update call.
    PeltCall(PeltCall<'a>),
    /// A known event replay does not need ([`IGNORED`]).
    Ignored,
    /// An event this module does not know.
    Other,
}

/// Events a scheduler trace commonly carries that replay has no use for: typed as
/// [`Event::Ignored`], not counted as unknown.
pub const IGNORED: &[&str] = &[
    "hrtimer_start",
    "hrtimer_cancel",
    "hrtimer_init",
    "sched_process_free",
    "sched_process_wait",
    "sched_wake_idle_without_ipi",
];

/// The softirq vector of the scheduler's load balance (`SCHED_SOFTIRQ`,
/// include/linux/interrupt.h; the same number on 6.1 and 6.12).
pub const SCHED_SOFTIRQ: u32 = 7;

/// Why a known event's fields did not parse: the missing or bad field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadField(pub String);

/// A record's body with its fields split once: a probe record has about forty, and
/// looking each one up by scanning the text again made parsing quadratic in them.
struct Body<'a> {
    text: &'a str,
    fields: Vec<(&'a str, &'a str)>,
}

impl<'a> Body<'a> {
    fn new(text: &'a str) -> Self {
        Body {
            text,
            fields: fields(text).collect(),
        }
    }
}

/// The value of the first field named `key` (as `fields(body).find(..)` would give).
fn get<'a>(body: &Body<'a>, key: &str) -> Option<&'a str> {
    body.fields.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
}

fn num<T: std::str::FromStr>(body: &Body, key: &str) -> Result<T, BadField> {
    let v = get(body, key).ok_or_else(|| BadField(format!("missing field `{key}`")))?;
    parse_num(v).ok_or_else(|| BadField(format!("field `{key}`: `{v}` is not a number")))
}

/// The largest PELT divider of any halflife (`LOAD_AVG_MAX` of the 32 ms tables).
const MAX_DIVIDER: u64 = PeltTables::of(Halflife::Hl32).load_avg_max() as u64;

/// A printed PELT average. The kernel derives it from a sum of at most `avg * divider`
/// held in `sum_max` (`util_sum` is a u32, `load_sum`/`runnable_sum` u64), so a larger
/// value cannot come from a kernel and would overflow the sums a replay rebuilds.
fn avg(body: &Body, key: &str, sum_max: u64) -> Result<u64, BadField> {
    let v: u64 = num(body, key)?;
    if v > sum_max / MAX_DIVIDER {
        return Err(BadField(format!(
            "field `{key}`: {v} is beyond the kernel's range (at most {})",
            sum_max / MAX_DIVIDER
        )));
    }
    Ok(v)
}

fn opt_avg(body: &Body, key: &str, sum_max: u64) -> Result<Option<u64>, BadField> {
    get(body, key).map(|_| avg(body, key, sum_max)).transpose()
}

/// A kernel clock reading (ns). The rq clock is a u64, but a replay measures offsets
/// between it and the trace clock as i64: readings past `i64::MAX` (292 years of uptime)
/// are refused rather than wrapped.
fn clock(body: &Body, key: &str) -> Result<u64, BadField> {
    let v: u64 = num(body, key)?;
    if v > i64::MAX as u64 {
        return Err(BadField(format!(
            "field `{key}`: {v} ns is beyond the kernel's clock range"
        )));
    }
    Ok(v)
}

fn opt_num<T: std::str::FromStr>(body: &Body, key: &str) -> Result<Option<T>, BadField> {
    match get(body, key) {
        None => Ok(None),
        Some(v) => parse_num(v)
            .map(Some)
            .ok_or_else(|| BadField(format!("field `{key}`: `{v}` is not a number"))),
    }
}

/// A `%Lu [ns]` field of the sched_stat_* events: the number before its unit.
fn ns(body: &Body, key: &str) -> Result<Option<u64>, BadField> {
    let Some(v) = get(body, key) else {
        return Ok(None);
    };
    let n = v.strip_suffix("[ns]").unwrap_or(v).trim_end();
    parse_num(n)
        .map(Some)
        .ok_or_else(|| BadField(format!("field `{key}`: `{v}` is not a number of ns")))
}

/// `vec=7 [action=SCHED]`: the number before the action's name.
fn softirq_vec(body: &Body) -> Result<u32, BadField> {
    let v = get(body, "vec").ok_or_else(|| BadField("missing field `vec`".into()))?;
    let n = v.split_whitespace().next().unwrap_or(v);
    parse_num(n).ok_or_else(|| BadField(format!("field `vec`: `{v}` is not a number")))
}

/// Decimal, or hex with `0x`.
fn parse_num<T: std::str::FromStr>(v: &str) -> Option<T> {
    if let Some(h) = v.strip_prefix("0x") {
        let n = u64::from_str_radix(h, 16).ok()?;
        return n.to_string().parse().ok();
    }
    v.parse().ok()
}

/// `comm:pid [prio]` (trace-cmd's sched plugin) → (comm, pid).
fn comm_pid(s: &str) -> Option<(&str, i32, Option<i32>)> {
    let s = s.trim();
    let (s, prio) = match s.rfind(" [") {
        Some(i) if s.ends_with(']') => (s[..i].trim_end(), s[i + 2..s.len() - 1].parse().ok()),
        _ => (s, None),
    };
    let (comm, pid) = s.rsplit_once(':')?;
    Some((comm, pid.parse().ok()?, prio))
}

fn switch<'a>(body: &Body<'a>) -> Result<Switch<'a>, BadField> {
    if get(body, "prev_pid").is_some() {
        return Ok(Switch {
            prev_comm: get(body, "prev_comm").unwrap_or(""),
            prev_pid: num(body, "prev_pid")?,
            prev_prio: opt_num(body, "prev_prio")?,
            prev_state: get(body, "prev_state").unwrap_or("R"),
            next_comm: get(body, "next_comm").unwrap_or(""),
            next_pid: num(body, "next_pid")?,
            next_prio: opt_num(body, "next_prio")?,
        });
    }
    // Plugin form: `prev:pid [prio] STATE ==> next:pid [prio]`.
    let body = body.text;
    let bad = || BadField(format!("sched_switch body `{body}`"));
    let (l, r) = body.split_once(" ==> ").ok_or_else(bad)?;
    let (l, state) = l.trim_end().rsplit_once(' ').ok_or_else(bad)?;
    let (prev_comm, prev_pid, prev_prio) = comm_pid(l).ok_or_else(bad)?;
    let (next_comm, next_pid, next_prio) = comm_pid(r).ok_or_else(bad)?;
    Ok(Switch {
        prev_comm,
        prev_pid,
        prev_prio,
        prev_state: state,
        next_comm,
        next_pid,
        next_prio,
    })
}

fn wakeup<'a>(body: &Body<'a>, waking: bool, new: bool) -> Result<Event<'a>, BadField> {
    if get(body, "pid").is_some() {
        return Ok(Event::Wakeup {
            comm: get(body, "comm").unwrap_or(""),
            pid: num(body, "pid")?,
            prio: opt_num(body, "prio")?,
            target_cpu: opt_num(body, "target_cpu")?,
            waking,
            new,
        });
    }
    // Plugin form: `comm:pid [prio] [success=1] CPU:003`.
    let body = body.text;
    let bad = || BadField(format!("wakeup body `{body}`"));
    let (head, cpu) = match body.rsplit_once(" CPU:") {
        Some((h, c)) => (h, Some(c.trim().parse().map_err(|_| bad())?)),
        None => (body, None),
    };
    let head = head.split(" success=").next().unwrap_or(head);
    let (comm, pid, prio) = comm_pid(head).ok_or_else(bad)?;
    Ok(Event::Wakeup {
        comm,
        pid,
        prio,
        target_cpu: cpu,
        waking,
        new,
    })
}

/// The field names of one side of a probe record (`b_*` before the call, `a_*` after),
/// spelled out: formatting them per record cost a tenth of a replay.
struct StateKeys {
    lut: &'static str,
    load_sum: &'static str,
    runnable_sum: &'static str,
    util_sum: &'static str,
    period_contrib: &'static str,
    load_avg: &'static str,
    runnable_avg: &'static str,
    util_avg: &'static str,
    ue: &'static str,
    ue_enq: &'static str,
    ue_ewma: &'static str,
}

macro_rules! state_keys {
    ($p:literal) => {
        StateKeys {
            lut: concat!($p, "_lut"),
            load_sum: concat!($p, "_load_sum"),
            runnable_sum: concat!($p, "_runnable_sum"),
            util_sum: concat!($p, "_util_sum"),
            period_contrib: concat!($p, "_period_contrib"),
            load_avg: concat!($p, "_load_avg"),
            runnable_avg: concat!($p, "_runnable_avg"),
            util_avg: concat!($p, "_util_avg"),
            ue: concat!($p, "_ue"),
            ue_enq: concat!($p, "_ue_enq"),
            ue_ewma: concat!($p, "_ue_ewma"),
        }
    };
}

const BEFORE: StateKeys = state_keys!("b");
const AFTER: StateKeys = state_keys!("a");

/// `struct sched_avg` from the probe's fields of one side (`b_*` before, `a_*` after).
fn state(body: &Body, k: &StateKeys) -> Result<PeltState, BadField> {
    // 6.12 prints the one-word util_est as `P_ue`, 6.1 `P_ue_enq` and `P_ue_ewma`.
    let (util_est, util_est_ewma) = match opt_num::<u32>(body, k.ue)? {
        Some(v) => (Some(v), None),
        None => (opt_num(body, k.ue_enq)?, opt_num(body, k.ue_ewma)?),
    };
    Ok(PeltState {
        avg: SchedAvg {
            last_update_time: clock(body, k.lut)?,
            load_sum: num(body, k.load_sum)?,
            runnable_sum: num(body, k.runnable_sum)?,
            util_sum: num(body, k.util_sum)?,
            period_contrib: num(body, k.period_contrib)?,
            load_avg: num(body, k.load_avg)?,
            runnable_avg: num(body, k.runnable_avg)?,
            util_avg: num(body, k.util_avg)?,
            util_est: UtilEst::default(),
        },
        util_est,
        util_est_ewma,
    })
}

fn pelt_call<'a>(body: &Body<'a>) -> Result<PeltCall<'a>, BadField> {
    let kind = match get(body, "fn") {
        Some("se") => PeltCallKind::Se,
        Some("blocked_se") => PeltCallKind::BlockedSe,
        Some("cfs") => PeltCallKind::CfsRq,
        other => return Err(BadField(format!("field `fn`: {other:?}"))),
    };
    let entity = match get(body, "kind") {
        Some("task") => PeltEntity::Task,
        Some("group") => PeltEntity::Group,
        Some("cfs_rq") => PeltEntity::CfsRq,
        other => return Err(BadField(format!("field `kind`: {other:?}"))),
    };
    let pid: i32 = num(body, "pid")?;
    let delayed: i32 = num(body, "delayed")?;
    Ok(PeltCall {
        kind,
        entity,
        cpu: num(body, "cpu")?,
        pid: (entity == PeltEntity::Task).then_some(pid),
        comm: (entity == PeltEntity::Task).then(|| get(body, "comm").unwrap_or("")),
        path: get(body, "path").unwrap_or("/"),
        now: clock(body, "now")?,
        lw: num(body, "lw")?,
        load: num(body, "load")?,
        runnable: num(body, "runnable")?,
        running: num::<i32>(body, "running")? != 0,
        sched_delayed: (delayed >= 0).then_some(delayed != 0),
        ret: num(body, "ret")?,
        before: state(body, &BEFORE)?,
        after: state(body, &AFTER)?,
    })
}

/// The signals LISA's `sched_pelt_se` and `sched_pelt_cfs` share: (load, runnable (absent
/// before v5.7), util, update_time).
type PeltSignals = (u64, Option<u64>, u64, u64);

fn pelt_signals(b: &Body) -> Result<PeltSignals, BadField> {
    Ok((
        avg(b, "load", u64::MAX)?,
        opt_avg(b, "runnable", u64::MAX)?,
        avg(b, "util", u32::MAX.into())?,
        clock(b, "update_time")?,
    ))
}

/// LISA's events (`lisa__sched_pelt_*`, `_util_est_*`, `_overutilized`,
/// `_cpu_capacity`): the kernel's values, an inferred replay's answer key beside the
/// probe's records ([`Event::PeltCall`]).
pub fn is_answer_key(ev: &Event<'_>) -> bool {
    matches!(
        ev,
        Event::PeltSe { .. }
            | Event::PeltCfs { .. }
            | Event::UtilEstSe { .. }
            | Event::UtilEstCfs { .. }
            | Event::Overutilized { .. }
            | Event::CpuCapacity { .. }
    )
}

/// The tick's hrtimer callback: tick_sched_timer (6.1), tick_nohz_handler (6.12).
pub fn is_tick(function: &str) -> bool {
    function.starts_with("tick_sched_timer") || function.starts_with("tick_nohz_handler")
}

/// The rq clock an answer-key record read (`now` of a probe record, LISA's
/// `update_time`), or `None` for any other event, which is not parsed (the clock-offset
/// passes read every line of a trace for these alone).
pub fn answer_clock(r: &Record<'_>) -> Option<u64> {
    let name = r.event.strip_prefix("lisa__").unwrap_or(r.event);
    if !matches!(
        name,
        "schedmath__pelt_update" | "sched_pelt_se" | "sched_pelt_cfs"
    ) {
        return None;
    }
    match Event::parse(r) {
        Ok(Event::PeltCall(c)) => Some(c.now),
        Ok(Event::PeltSe { update_time, .. } | Event::PeltCfs { update_time, .. }) => {
            Some(update_time)
        }
        _ => None,
    }
}

impl<'a> Event<'a> {
    /// Types a record; `Err` names the field that is missing or bad.
    pub fn parse(r: &Record<'a>) -> Result<Event<'a>, BadField> {
        let b = &Body::new(r.body);
        // LISA's events are `lisa__sched_*`; older modules used plain `sched_*`.
        let name = r.event.strip_prefix("lisa__").unwrap_or(r.event);
        Ok(match name {
            "schedmath__pelt_update" => Event::PeltCall(pelt_call(b)?),
            "sched_switch" => Event::Switch(switch(b)?),
            "sched_waking" => wakeup(b, true, false)?,
            "sched_wakeup" => wakeup(b, false, false)?,
            "sched_wakeup_new" => wakeup(b, false, true)?,
            "sched_migrate_task" => Event::Migrate {
                comm: get(b, "comm").unwrap_or(""),
                pid: num(b, "pid")?,
                orig_cpu: num(b, "orig_cpu")?,
                dest_cpu: num(b, "dest_cpu")?,
            },
            "sched_process_fork" => Event::Fork {
                parent_pid: num(b, "pid").or_else(|_| num(b, "parent_pid"))?,
                child_comm: get(b, "child_comm").unwrap_or(""),
                child_pid: num(b, "child_pid")?,
            },
            "sched_process_exit" => Event::Exit {
                comm: get(b, "comm").unwrap_or(""),
                pid: num(b, "pid")?,
            },
            "sched_process_exec" => Event::Exec {
                pid: num(b, "pid")?,
                old_pid: num(b, "old_pid")?,
                filename: get(b, "filename").unwrap_or(""),
            },
            "cgroup_attach_task" => Event::CgroupAttach {
                pid: num(b, "pid")?,
                comm: get(b, "comm").unwrap_or(""),
                path: get(b, "dst_path")
                    .ok_or_else(|| BadField("missing field `dst_path`".into()))?,
            },
            "sched_stat_runtime" => Event::StatRuntime {
                pid: num(b, "pid")?,
                runtime: ns(b, "runtime")?
                    .ok_or_else(|| BadField("missing field `runtime`".into()))?,
                vruntime: ns(b, "vruntime")?,
            },
            "cpu_idle" | "cpu_frequency" => {
                // power.h's `cpu` class: one layout, two events.
                let (state, cpu) = (num(b, "state")?, num(b, "cpu_id")?);
                match name {
                    "cpu_idle" => Event::CpuIdle { state, cpu },
                    _ => Event::CpuFrequency { state, cpu },
                }
            }
            "hrtimer_expire_entry" => Event::HrtimerExpire {
                function: get(b, "function").unwrap_or(""),
                now: opt_num(b, "now")?,
            },
            "hrtimer_expire_exit" => Event::HrtimerExit,
            "softirq_entry" | "softirq_exit" => Event::Softirq {
                vec: softirq_vec(b)?,
                exit: name == "softirq_exit",
            },
            "sched_pelt_se" => {
                // Fields in the order the errors name them: cpu, pid, then the signals.
                let (cpu, pid) = (num(b, "cpu")?, num(b, "pid")?);
                let (load, runnable, util, update_time) = pelt_signals(b)?;
                Event::PeltSe {
                    cpu,
                    pid,
                    comm: get(b, "comm").unwrap_or(""),
                    load,
                    runnable,
                    util,
                    update_time,
                }
            }
            "sched_pelt_cfs" => {
                let cpu = num(b, "cpu")?;
                let (load, runnable, util, update_time) = pelt_signals(b)?;
                Event::PeltCfs {
                    cpu,
                    path: get(b, "path").unwrap_or("/"),
                    load,
                    runnable,
                    util,
                    update_time,
                }
            }
            "sched_util_est_se" => Event::UtilEstSe {
                cpu: num(b, "cpu")?,
                pid: num(b, "pid")?,
                util: num(b, "util")?,
                value: match opt_num(b, "util_est")? {
                    Some(v) => UtilEstValue::Mainline(v),
                    None => UtilEstValue::PreV6_9 {
                        enqueued: num(b, "enqueued")?,
                        ewma: num(b, "ewma")?,
                    },
                },
            },
            "sched_util_est_cfs" => Event::UtilEstCfs {
                cpu: num(b, "cpu")?,
                path: get(b, "path").unwrap_or("/"),
                util: num(b, "util")?,
                util_est: match opt_num(b, "util_est")? {
                    Some(v) => v,
                    None => num(b, "enqueued")?,
                },
            },
            "sched_overutilized" => Event::Overutilized {
                overutilized: num::<u64>(b, "overutilized")? != 0,
            },
            "sched_cpu_capacity" => Event::CpuCapacity {
                cpu: num(b, "cpu")?,
                capacity: num(b, "capacity")?,
                capacity_orig: opt_num(b, "capacity_orig")?,
            },
            _ if IGNORED.contains(&name) => Event::Ignored,
            _ => Event::Other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &'static str) -> Result<Event<'static>, BadField> {
        let rec = crate::trace::report::split_line(line, 1).unwrap();
        Event::parse(&rec)
    }

    #[test]
    fn exec_and_cgroup_attach() {
        // lines of a 6.12 capture (`cargo xtask lab run`, `cgroup-weight`)
        let exec = one("rt-app-181 [000] 17.019271513: sched_process_exec: filename=/usr/bin/rt-app pid=181 old_pid=181").unwrap();
        assert_eq!(
            exec,
            Event::Exec {
                pid: 181,
                old_pid: 181,
                filename: "/usr/bin/rt-app"
            }
        );
        let attach = one("rt-app-181 [000] 17.016016826: cgroup_attach_task: dst_root=0 dst_id=51 dst_level=1 dst_path=/bg pid=181 comm=sh").unwrap();
        assert_eq!(
            attach,
            Event::CgroupAttach {
                pid: 181,
                comm: "sh",
                path: "/bg"
            }
        );
        let bad = one("sh-1 [000] 1.0: cgroup_attach_task: dst_root=0 pid=1 comm=sh");
        assert_eq!(bad, Err(BadField("missing field `dst_path`".into())));
    }

    #[test]
    fn switch_in_both_forms() {
        let plugin = one(
            "rt-app-153 [001] 1.000000: sched_switch: rt app:153 [120] S ==> swapper/1:0 [120]",
        )
        .unwrap();
        let raw = one("rt-app-153 [001] 1.000000: sched_switch: prev_comm=rt app prev_pid=153 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120").unwrap();
        let want = Event::Switch(Switch {
            prev_comm: "rt app",
            prev_pid: 153,
            prev_prio: Some(120),
            prev_state: "S",
            next_comm: "swapper/1",
            next_pid: 0,
            next_prio: Some(120),
        });
        assert_eq!(plugin, want);
        assert_eq!(raw, want);
    }

    #[test]
    fn wakeup_in_both_forms() {
        let plugin =
            one("a-1 [000] 1.000000: sched_wakeup: rt-app:153 [120] success=1 CPU:002").unwrap();
        let raw =
            one("a-1 [000] 1.000000: sched_waking: comm=rt-app pid=153 prio=120 target_cpu=002")
                .unwrap();
        assert_eq!(
            plugin,
            Event::Wakeup {
                comm: "rt-app",
                pid: 153,
                prio: Some(120),
                target_cpu: Some(2),
                waking: false,
                new: false
            }
        );
        assert_eq!(
            raw,
            Event::Wakeup {
                comm: "rt-app",
                pid: 153,
                prio: Some(120),
                target_cpu: Some(2),
                waking: true,
                new: false
            }
        );
    }

    #[test]
    fn stat_runtime_with_and_without_vruntime() {
        // v6.1 and v6.12 print formats (`trace-cmd report -t`: ns stamps).
        let v61 = one("rt-app-153 [001] 40.135791123: sched_stat_runtime: comm=rt-app pid=153 runtime=182240 [ns] vruntime=9217561 [ns]").unwrap();
        assert_eq!(
            v61,
            Event::StatRuntime {
                pid: 153,
                runtime: 182240,
                vruntime: Some(9217561)
            }
        );
        let v612 = one(
            "rt app-153 [001] 40.135791: sched_stat_runtime: comm=rt app pid=153 runtime=7 [ns]",
        )
        .unwrap();
        assert_eq!(
            v612,
            Event::StatRuntime {
                pid: 153,
                runtime: 7,
                vruntime: None
            }
        );
        let bad =
            one("a-1 [000] 1.0: sched_stat_runtime: comm=a pid=1 runtime=x [ns]").unwrap_err();
        assert_eq!(
            bad,
            BadField("field `runtime`: `x [ns]` is not a number of ns".into())
        );
    }

    #[test]
    fn softirq_entry_and_exit() {
        // trace-cmd report's line on 6.1 and 6.12 (`TP_printk("vec=%u [action=%s]")`).
        let e = one("rt-app-153 [000] 17.601234567: softirq_entry: vec=7 [action=SCHED]").unwrap();
        assert_eq!(
            e,
            Event::Softirq {
                vec: SCHED_SOFTIRQ,
                exit: false
            }
        );
        let x = one("<idle>-0 [001] 17.6013: softirq_exit: vec=1 [action=TIMER]").unwrap();
        assert_eq!(x, Event::Softirq { vec: 1, exit: true });
        let bad = one("a-1 [000] 1.0: softirq_entry: vec=x [action=SCHED]").unwrap_err();
        assert_eq!(
            bad,
            BadField("field `vec`: `x [action=SCHED]` is not a number".into())
        );
        let missing = one("a-1 [000] 1.0: softirq_exit: [action=SCHED]").unwrap_err();
        assert_eq!(missing, BadField("missing field `vec`".into()));
    }

    #[test]
    fn lisa_pelt_se_and_missing_field() {
        let e = one("a-1 [000] 1.000000: lisa__sched_pelt_se: cpu=1 path=(null) comm=rt-app pid=153 load=12 util=10 update_time=3950176256 runnable=11").unwrap();
        assert_eq!(
            e,
            Event::PeltSe {
                cpu: 1,
                pid: 153,
                comm: "rt-app",
                load: 12,
                runnable: Some(11),
                util: 10,
                update_time: 3950176256
            }
        );
        let bad = one(
            "a-1 [000] 1.000000: lisa__sched_pelt_cfs: cpu=1 path=/ load=x util=1 update_time=1",
        )
        .unwrap_err();
        assert_eq!(bad, BadField("field `load`: `x` is not a number".into()));
    }
}
