// SPDX-License-Identifier: GPL-2.0-only
//! rt-app JSON → [`Workload`].
//!
//! Follows rt-app's own reader at its current head (`src/rt-app_parse_config.c`, the
//! thread loop of `src/rt-app.c`) and its documentation (`doc/tutorial.txt`):
//! * json-c builds the objects: a repeated key keeps the first member's place and takes
//!   the last value (`json_object_object_add()` replaces in place), so two `"run"` keys
//!   in one phase are one event. Here that is the same, with a warning;
//! * rt-app reads the keys it knows and ignores the others: an unknown top-level,
//!   global, task or phase key is a warning naming file, line and key, never an error.
//!   An object member whose key *starts with* an event name (`run1`, `sleep_long`, ...,
//!   tested in rt-app's order, so `runtime2` is a `runtime` and `memrun` is not a `mem`)
//!   is an event, and an event rt-app cannot read (wrong value type) is an error, as
//!   rt-app exits on it;
//! * durations are C `int`s of µs (`run`, `runtime`, `sleep`, timer `period`, `delay`);
//!   `global.duration` is in seconds, ≤ 0 for "until every task ends";
//! * a task without `phases` is its own single phase: its `loop` repeats that phase
//!   and the task then ends; without `loop` it repeats forever. With `phases`, a phase
//!   runs once by default and the task repeats its phases forever by default. rt-app
//!   counts a phase's loops up to `loop` *after* running it once, so a phase `loop` of 0
//!   or below -1 repeats forever too; a task `loop` of 0 runs no phase (refused);
//! * phase-level `policy`/`priority`/`util_min`/`util_max`/`taskgroup` apply when the
//!   phase starts and persist; a phase `cpus` holds for that phase only. `priority` is
//!   the nice value for `SCHED_OTHER`/`SCHED_BATCH`/`SCHED_IDLE` (default 0) and the rt
//!   priority for FIFO/RR (default 10); a phase `priority` without `policy` keeps the
//!   policy in effect when the phase is first reached;
//! * a value of `null` is the key's default (json-c stores no object for it);
//! * `dl-runtime` (and at task level the legacy `runtime`, which is also an event key)
//!   is `sched_attr.sched_runtime`: the `SCHED_DEADLINE` budget, or since Linux 6.12 the
//!   EEVDF custom slice of a `SCHED_OTHER`/`SCHED_BATCH` task;
//! * `fork` starts a new thread of another task object (usually one with `instance: 0`).
//!
//! What schedmath cannot model is refused with the reason (`memrun`, `sem_post`,
//! `sem_wait`, `fork` until the simulator creates threads), or simulated approximately
//! with a warning (`SCHED_DEADLINE` as the highest `SCHED_FIFO` priority, `SCHED_BATCH`
//! as `SCHED_OTHER`, a custom slice the fair class does not apply yet). Keys rt-app reads
//! that do not change scheduling (logging, calibration, NUMA binding, ...) are type-checked
//! as rt-app checks them and listed in [`Workload::ignored_keys`].
//!
//! What rt-app has no syntax for comes from a top-level extension object that rt-app
//! never reads (so the file still runs under rt-app):
//! `"schedmath": { "taskgroups": { "/bg": { "shares": 1024, "idle": true } },
//! "io_latency_us": [50, 500], "irq_pct": { "4": 10 } }` — task-group attributes, the
//! device latency of every `iorun`, and per-CPU irq time (% of wall time). Being
//! schedmath's own grammar, an unknown key in it is an error.

use std::collections::{BTreeMap, HashMap};

use super::error::WorkloadError;
use super::json::{self, Loc, Member, Node, Value};
use super::model::{
    instance_names, Affinity, Event, EventSpec, Format, Global, IgnoredKey, IrqShare, Loops, Phase,
    Policy, Sched, TaskGroup, TaskSpec, TimerMode, Uclamp, Workload, DEFAULT_SHARES, IRQ_PCT_RANGE,
    MAX_INSTANCES,
};

/// rt-app's default rt priority (`DEFAULT_THREAD_PRIORITY`).
const DEFAULT_RT_PRIORITY: i32 = 10;
/// The rt priority a `SCHED_DEADLINE` task is simulated at: above every other rt task,
/// as the deadline class is above the rt class.
const DEADLINE_AS_FIFO: i32 = 99;
/// Kernel `MIN_SHARES` and `MAX_SHARES` (`1 << 18`).
const SHARES_RANGE: std::ops::RangeInclusive<i64> = 2..=262_144;
/// `SCHED_CAPACITY_SCALE`: the top of a utilisation clamp.
const UCLAMP_MAX: i32 = 1024;

/// Longest key kept whole in a JSON path (longer ones end in `…`).
const MAX_KEY_IN_PATH: usize = 200;
/// Longest task or phase name: far above any real one (the kernel keeps 15 characters of
/// a thread name), low enough that the paths built per event stay small.
const MAX_NAME: usize = 256;
/// Most notes (warnings and keys without effect) kept per file; the rest are counted in
/// a last warning, so a file of a million duplicate keys stays small in memory.
const MAX_NOTES: usize = 1000;

/// Parses rt-app JSON text; `origin` names the file in errors.
pub fn parse_str(text: &str, origin: &str) -> Result<Workload, WorkloadError> {
    let root = json::parse(text).map_err(|e| WorkloadError::Syntax {
        origin: origin.to_string(),
        at: e.at,
        msg: e.msg,
    })?;
    let mut cx = Ctx {
        origin,
        ignored: Vec::new(),
        dropped: 0,
    };
    let root = cx.json_c(root, "");
    let top = cx.object(&root, "(root)")?;
    let mut global = None;
    let mut tasks = None;
    let mut ext = None;
    for m in top {
        match m.key.as_str() {
            "global" => global = Some(m),
            "tasks" => tasks = Some(m),
            "schedmath" => ext = Some(m),
            "resources" => cx.ignore(
                m,
                "resources",
                "legacy declaration: rt-app creates resources from the events that name them",
            ),
            k => cx.warn(
                m.at,
                k,
                "unknown top-level key: rt-app reads global, tasks and resources only and ignores it",
            ),
        }
    }
    let mut global = match global {
        Some(m) if m.value.value != Value::Null => cx.global(m)?,
        _ => (Global::default(), RtPolicy::Other),
    };
    let mut group_cfg = BTreeMap::new();
    if let Some(m) = ext {
        cx.extension(m, &mut group_cfg, &mut global.0)?;
    }
    let Some(tasks_m) = tasks else {
        let fragment = if top
            .iter()
            .any(|m| m.key == "global" || m.key == "resources")
        {
            " (a file with only global or resources is a fragment for rt-app's doc/merge.py, not a use case rt-app runs)"
        } else {
            ""
        };
        return Err(cx.err(
            root.at,
            "tasks",
            format!("missing: a workload needs a \"tasks\" object{fragment}"),
        ));
    };
    let members = cx.object(&tasks_m.value, "tasks")?;
    if members.is_empty() {
        return Err(cx.err(tasks_m.at, "tasks", "no tasks"));
    }
    let (mut global, default_policy) = global;
    global.default_policy = default_policy.model().0;
    let names: Vec<&str> = members.iter().map(|m| m.key.as_str()).collect();
    let mut specs = Vec::with_capacity(members.len());
    for m in members {
        specs.push(cx.task(m, default_policy, &names)?);
    }
    cx.check_forks(&specs)?;
    cx.unpaired_suspends(&specs);
    let groups = build_groups(&specs, &group_cfg);
    cx.ignored.sort_by_key(|k| k.at);
    if cx.dropped > 0 {
        let last = cx.ignored.last().map_or(root.at, |k| k.at);
        cx.ignored.push(IgnoredKey {
            path: "(file)".to_string(),
            at: last,
            reason: format!(
                "{} more warnings or ignored keys are not listed (at most {MAX_NOTES} are kept)",
                cx.dropped
            ),
            warning: true,
        });
    }
    let w = Workload {
        origin: origin.to_string(),
        format: Format::RtApp,
        global,
        tasks: specs,
        groups,
        ignored: cx.ignored,
    };
    w.check()?;
    Ok(w)
}

/// The kinds of event rt-app recognises, by key prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Run,
    Runtime,
    Sleep,
    MemRun,
    Mem,
    IoRun,
    Lock,
    Unlock,
    Signal,
    Broad,
    Wait,
    Sync,
    Barrier,
    Timer,
    Resume,
    Suspend,
    Yield,
    Fork,
    SemPost,
    SemWait,
}

/// The event a key names: the first prefix that matches, in the order rt-app's
/// `parse_task_event_data()` tests them (`sleep`, `runtime` and `run` first, `memrun`
/// before `mem`; no two other names are prefixes of each other).
fn event_kind(key: &str) -> Option<Kind> {
    event_prefix(key).map(|(_, k)| k)
}

/// The event name a key starts with, and its kind (see [`event_kind`]).
fn event_prefix(key: &str) -> Option<(&'static str, Kind)> {
    const ORDER: [(&str, Kind); 20] = [
        ("sleep", Kind::Sleep),
        ("runtime", Kind::Runtime),
        ("run", Kind::Run),
        ("memrun", Kind::MemRun),
        ("mem", Kind::Mem),
        ("iorun", Kind::IoRun),
        ("lock", Kind::Lock),
        ("unlock", Kind::Unlock),
        ("signal", Kind::Signal),
        ("broad", Kind::Broad),
        ("wait", Kind::Wait),
        ("sync", Kind::Sync),
        ("barrier", Kind::Barrier),
        ("timer", Kind::Timer),
        ("resume", Kind::Resume),
        ("suspend", Kind::Suspend),
        ("yield", Kind::Yield),
        ("fork", Kind::Fork),
        ("sem_post", Kind::SemPost),
        ("sem_wait", Kind::SemWait),
    ];
    ORDER
        .iter()
        .find(|(prefix, _)| key.starts_with(prefix))
        .copied()
}

/// A policy rt-app knows (`string_to_policy()`); schedmath's model has four of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RtPolicy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl RtPolicy {
    fn name(self) -> &'static str {
        match self {
            RtPolicy::Other => "SCHED_OTHER",
            RtPolicy::Batch => "SCHED_BATCH",
            RtPolicy::Idle => "SCHED_IDLE",
            RtPolicy::Fifo => "SCHED_FIFO",
            RtPolicy::Rr => "SCHED_RR",
            RtPolicy::Deadline => "SCHED_DEADLINE",
        }
    }

    /// Nice-valued (fair class) rather than rt-priority-valued.
    fn is_fair(self) -> bool {
        matches!(self, RtPolicy::Other | RtPolicy::Batch | RtPolicy::Idle)
    }

    /// The model's policy and default priority: `SCHED_BATCH` is simulated as
    /// `SCHED_OTHER`, `SCHED_DEADLINE` as `SCHED_FIFO` [`DEADLINE_AS_FIFO`].
    fn model(self) -> (Policy, i32) {
        match self {
            RtPolicy::Other | RtPolicy::Batch => (Policy::Other, 0),
            RtPolicy::Idle => (Policy::Idle, 0),
            RtPolicy::Fifo => (Policy::Fifo, DEFAULT_RT_PRIORITY),
            RtPolicy::Rr => (Policy::Rr, DEFAULT_RT_PRIORITY),
            RtPolicy::Deadline => (Policy::Fifo, DEADLINE_AS_FIFO),
        }
    }
}

/// An event member of a task or phase object, with its kind.
type EventMember<'n> = (Kind, &'n Member);

/// Task or phase: which attribute keys the object may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Task,
    Phase,
}

/// The attribute members of a task or phase object (events are kept apart).
#[derive(Default)]
struct Attrs<'n> {
    instance: Option<&'n Member>,
    delay: Option<&'n Member>,
    phases: Option<&'n Member>,
    loops: Option<&'n Member>,
    policy: Option<&'n Member>,
    priority: Option<&'n Member>,
    cpus: Option<&'n Member>,
    util_min: Option<&'n Member>,
    util_max: Option<&'n Member>,
    taskgroup: Option<&'n Member>,
    dl_runtime: Option<&'n Member>,
    dl_period: Option<&'n Member>,
    dl_deadline: Option<&'n Member>,
    /// Task level only: rt-app's legacy `runtime`/`period`/`deadline` (`runtime` is
    /// also an event key, so it is read twice, as rt-app does).
    legacy_runtime: Option<&'n Member>,
    legacy_period: Option<&'n Member>,
    legacy_deadline: Option<&'n Member>,
}

struct Ctx<'a> {
    origin: &'a str,
    ignored: Vec<IgnoredKey>,
    /// Notes past [`MAX_NOTES`], not kept.
    dropped: usize,
}

impl Ctx<'_> {
    fn err(&self, at: Loc, path: &str, msg: impl Into<String>) -> WorkloadError {
        WorkloadError::Invalid {
            origin: self.origin.to_string(),
            at,
            path: path.to_string(),
            msg: msg.into(),
        }
    }

    /// A key accepted without scheduling effect.
    fn ignore(&mut self, m: &Member, path: &str, reason: impl Into<String>) {
        self.note(m.at, path, reason.into(), false);
    }

    /// Something rt-app accepts that the file probably does not mean, or that schedmath
    /// only approximates.
    fn warn(&mut self, at: Loc, path: &str, msg: impl Into<String>) {
        self.note(at, path, msg.into(), true);
    }

    fn note(&mut self, at: Loc, path: &str, reason: String, warning: bool) {
        if self.ignored.len() >= MAX_NOTES {
            self.dropped += 1;
            return;
        }
        self.ignored.push(IgnoredKey {
            path: path.to_string(),
            at,
            reason,
            warning,
        });
    }

    /// json-c's objects: a repeated key keeps the first member's place and takes the
    /// last value (`json_object_object_add()` replaces the value of an existing key).
    /// Each replaced member is a warning. Recursion is bounded by [`json::MAX_DEPTH`].
    fn json_c(&mut self, n: Node, path: &str) -> Node {
        let value = match n.value {
            Value::Object(members) => {
                let mut out: Vec<Member> = Vec::with_capacity(members.len());
                let mut index: HashMap<String, usize> = HashMap::with_capacity(members.len());
                for m in members {
                    let nested = matches!(m.value.value, Value::Object(_) | Value::Array(_));
                    let value = if nested {
                        self.json_c(m.value, &join(path, &m.key))
                    } else {
                        m.value
                    };
                    if let Some(&i) = index.get(&m.key) {
                        let kpath = join(path, &m.key);
                        let hint = if event_kind(&m.key).is_some() {
                            format!("; rt-app runs this event once (name repeated events apart: {0}0, {0}1, ...)", short(&m.key))
                        } else {
                            String::new()
                        };
                        let msg = format!(
                            "duplicate key: json-c keeps one \"{}\", at the first one's place (line {}), with this last value (line {}){hint}",
                            short(&m.key), out[i].at.line, value.at.line
                        );
                        self.warn(m.at, &kpath, msg);
                        out[i].value = value;
                    } else {
                        index.insert(m.key.clone(), out.len());
                        out.push(Member {
                            key: m.key,
                            at: m.at,
                            value,
                        });
                    }
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| match x.value {
                        Value::Object(_) | Value::Array(_) => {
                            self.json_c(x, &format!("{path}[{i}]"))
                        }
                        _ => x,
                    })
                    .collect(),
            ),
            v => v,
        };
        Node { at: n.at, value }
    }

    fn object<'n>(&self, n: &'n Node, path: &str) -> Result<&'n [Member], WorkloadError> {
        match &n.value {
            Value::Object(m) => Ok(m),
            v => Err(self.err(
                n.at,
                path,
                format!("expected an object, found {}", v.kind()),
            )),
        }
    }

    fn int(&self, n: &Node, path: &str) -> Result<i32, WorkloadError> {
        match &n.value {
            Value::Number(t) if !t.contains(['.', 'e', 'E']) => t.parse::<i32>().map_err(|_| {
                self.err(
                    n.at,
                    path,
                    format!("{t} does not fit rt-app's C int (-2147483648..=2147483647)"),
                )
            }),
            v => Err(self.err(
                n.at,
                path,
                format!("expected an integer, found {}", v.kind()),
            )),
        }
    }

    /// A non-negative integer count of µs, as ns.
    fn us(&self, n: &Node, path: &str) -> Result<u64, WorkloadError> {
        let v = self.int(n, path)?;
        let v = u64::try_from(v)
            .map_err(|_| self.err(n.at, path, format!("negative duration: {v} µs")))?;
        Ok(v * 1000) // at most 2^31 µs: never overflows
    }

    fn string<'n>(&self, n: &'n Node, path: &str) -> Result<&'n str, WorkloadError> {
        match &n.value {
            Value::Str(s) => Ok(s),
            v => Err(self.err(n.at, path, format!("expected a string, found {}", v.kind()))),
        }
    }

    fn boolean(&self, n: &Node, path: &str) -> Result<bool, WorkloadError> {
        match n.value {
            Value::Bool(b) => Ok(b),
            ref v => Err(self.err(
                n.at,
                path,
                format!("expected a boolean, found {}", v.kind()),
            )),
        }
    }

    /// rt-app reads a `null` attribute as absent (json-c has no object for it): noted,
    /// and `true` when the member is to be skipped.
    fn null_is_default(&mut self, m: &Member, path: &str) -> bool {
        if m.value.value == Value::Null {
            self.ignore(m, path, "null: rt-app uses the default");
            return true;
        }
        false
    }

    fn global(&mut self, m: &Member) -> Result<(Global, RtPolicy), WorkloadError> {
        let members = self.object(&m.value, "global")?;
        let mut g = Global::default();
        let mut policy = RtPolicy::Other;
        for m in members {
            let path = join("global", &m.key);
            let known = matches!(
                m.key.as_str(),
                "duration"
                    | "default_policy"
                    | "calibration"
                    | "gnuplot"
                    | "logdir"
                    | "log_basename"
                    | "log_size"
                    | "ftrace"
                    | "lock_pages"
                    | "pi_enabled"
                    | "io_device"
                    | "mem_buffer_size"
                    | "cumulative_slack"
            );
            if known && self.null_is_default(m, &path) {
                continue;
            }
            let v = &m.value;
            match m.key.as_str() {
                "duration" => {
                    let s = self.int(v, &path)?;
                    if u64::from(s.unsigned_abs()) > crate::limits::MAX_SIM_SECONDS && s > 0 {
                        return Err(self.err(
                            v.at,
                            &path,
                            crate::limits::beyond(
                                format!("duration {s} s"),
                                "MAX_SIM_SECONDS",
                                format!("{} s", crate::limits::MAX_SIM_SECONDS),
                            ),
                        ));
                    }
                    g.duration_ns = if s > 0 {
                        Some(u64::from(s.unsigned_abs()) * 1_000_000_000)
                    } else {
                        if s != -1 {
                            self.warn(
                                v.at,
                                &path,
                                format!("duration {s}: rt-app runs until every task ends (as with -1) when it is not positive"),
                            );
                        }
                        None
                    };
                }
                "default_policy" => policy = self.policy(v, &path)?,
                "calibration" => {
                    let ok = match &v.value {
                        Value::Str(s) => s
                            .strip_prefix("CPU")
                            .is_some_and(|n| n.trim_start().parse::<i64>().is_ok()),
                        _ => self.int(v, &path).is_ok(),
                    };
                    if !ok {
                        return Err(self.err(
                            v.at,
                            &path,
                            "expected ns per loop (an integer) or \"CPU<n>\" (rt-app exits on anything else)",
                        ));
                    }
                    self.ignore(
                        m,
                        &path,
                        "rt-app's busy-loop calibration; `run` here is already work at max capacity and frequency",
                    );
                }
                "log_size" | "ftrace" => {
                    let ok = matches!(v.value, Value::Str(_))
                        || (m.key == "ftrace" && matches!(v.value, Value::Bool(_)))
                        || (m.key == "log_size" && self.int(v, &path).is_ok());
                    if !ok {
                        let what = if m.key == "ftrace" {
                            "a string of categories or a boolean"
                        } else {
                            "an integer (MB) or a string"
                        };
                        return Err(self.err(
                            v.at,
                            &path,
                            format!("expected {what}, found {}", v.value.kind()),
                        ));
                    }
                    self.ignore(m, &path, "logging and tracing only");
                }
                "gnuplot" | "cumulative_slack" => {
                    self.boolean(v, &path)?;
                    self.ignore(m, &path, "logging only");
                }
                "logdir" | "log_basename" => {
                    self.string(v, &path)?;
                    self.ignore(m, &path, "logging only");
                }
                "lock_pages" => {
                    self.boolean(v, &path)?;
                    self.ignore(m, &path, "memory locking; no scheduling effect");
                }
                "pi_enabled" => {
                    self.boolean(v, &path)?;
                    self.ignore(
                        m,
                        &path,
                        "priority inheritance on rt-app mutexes is not modelled",
                    );
                }
                "io_device" | "mem_buffer_size" => {
                    if m.key == "io_device" {
                        self.string(v, &path)?;
                    } else {
                        self.int(v, &path)?;
                    }
                    self.ignore(
                        m,
                        &path,
                        "target of iorun/mem; the simulator chooses the device and memory rates",
                    );
                }
                _ => self.warn(
                    m.at,
                    &path,
                    "unknown global key: rt-app ignores it (it reads duration, calibration, default_policy, pi_enabled, lock_pages, logdir, log_basename, log_size, ftrace, gnuplot, io_device, mem_buffer_size, cumulative_slack)",
                ),
            }
        }
        Ok((g, policy))
    }

    /// The `schedmath` extension: `taskgroups` (per-group `shares` and `idle`, into
    /// `cfg`), `io_latency_us` and `irq_pct` (into `global`).
    fn extension(
        &mut self,
        m: &Member,
        cfg: &mut BTreeMap<String, (u32, bool)>,
        global: &mut Global,
    ) -> Result<(), WorkloadError> {
        let members = self.object(&m.value, "schedmath")?;
        for m in members {
            match m.key.as_str() {
                "io_latency_us" => {
                    global.io_latency_ns = Some(self.io_latency(&m.value)?);
                    continue;
                }
                "irq_pct" => {
                    global.irq_pct = self.irq_pct(&m.value)?;
                    continue;
                }
                "taskgroups" => {}
                _ => return Err(self.err(
                    m.at,
                    &join("schedmath", &m.key),
                    "unknown key (the schedmath extension has taskgroups, io_latency_us, irq_pct)",
                )),
            }
            let groups = self.object(&m.value, "schedmath.taskgroups")?;
            for g in groups {
                let path = join("schedmath.taskgroups", &g.key);
                let Some(name) = self.group_path(&g.key, g.at, &path)? else {
                    return Err(self.err(g.at, &path, "a taskgroup path is not empty"));
                };
                if name == "/" {
                    return Err(self.err(
                        g.at,
                        &path,
                        "the root group's weight and idle flag cannot be set",
                    ));
                }
                let attrs = self.object(&g.value, &path)?;
                let (mut shares, mut idle) = (DEFAULT_SHARES, false);
                for a in attrs {
                    let apath = join(&path, &a.key);
                    match a.key.as_str() {
                        "shares" => {
                            let v = i64::from(self.int(&a.value, &apath)?);
                            shares = u32::try_from(v)
                                .ok()
                                .filter(|_| SHARES_RANGE.contains(&v))
                                .ok_or_else(|| {
                                    self.err(
                                        a.value.at,
                                        &apath,
                                        format!("shares {v} out of the kernel's 2..=262144"),
                                    )
                                })?;
                        }
                        "idle" => match a.value.value {
                            Value::Bool(b) => idle = b,
                            ref v => {
                                return Err(self.err(
                                    a.value.at,
                                    &apath,
                                    format!("expected a boolean, found {}", v.kind()),
                                ))
                            }
                        },
                        _ => {
                            return Err(self.err(
                                a.at,
                                &apath,
                                "unknown taskgroup key (shares, idle)",
                            ))
                        }
                    }
                }
                cfg.insert(name, (shares, idle));
            }
        }
        Ok(())
    }

    /// `schedmath.irq_pct`: `{"cpu": pct}`, a CPU number in decimal (as the platform
    /// numbers them, checked against it by [`Workload::validate`]) to a percentage in
    /// [`IRQ_PCT_RANGE`]; sorted by CPU.
    fn irq_pct(&self, n: &Node) -> Result<Vec<IrqShare>, WorkloadError> {
        let path = "schedmath.irq_pct";
        let members = self.object(n, path)?;
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            let kpath = join(path, &m.key);
            let cpu = m
                .key
                .parse::<usize>()
                .ok()
                .filter(|c| c.to_string() == m.key)
                .ok_or_else(|| {
                    self.err(m.at, &kpath, "expected a CPU number (0, 1, ...) as the key")
                })?;
            let v = self.int(&m.value, &kpath)?;
            let pct = u32::try_from(v)
                .ok()
                .filter(|p| IRQ_PCT_RANGE.contains(p))
                .ok_or_else(|| {
                    self.err(
                        m.value.at,
                        &kpath,
                        format!(
                            "irq share {v} % out of {}..={} % of wall time",
                            IRQ_PCT_RANGE.start(),
                            IRQ_PCT_RANGE.end()
                        ),
                    )
                })?;
            out.push(IrqShare { cpu, pct, at: m.at });
        }
        out.sort_by_key(|s| s.cpu);
        Ok(out)
    }

    /// `schedmath.io_latency_us`: `[min, max]` µs, 1 ≤ min ≤ max.
    fn io_latency(&self, n: &Node) -> Result<(u64, u64), WorkloadError> {
        let path = "schedmath.io_latency_us";
        let bad = || self.err(n.at, path, "expected [min, max] in µs with 1 <= min <= max");
        let Value::Array(items) = &n.value else {
            return Err(bad());
        };
        let [lo, hi] = items.as_slice() else {
            return Err(bad());
        };
        let (lo, hi) = (self.int(lo, path)?, self.int(hi, path)?);
        if lo < 1 || hi < lo {
            return Err(bad());
        }
        Ok((lo as u64 * 1000, hi as u64 * 1000))
    }

    fn policy(&self, n: &Node, path: &str) -> Result<RtPolicy, WorkloadError> {
        match self.string(n, path)? {
            "SCHED_OTHER" => Ok(RtPolicy::Other),
            "SCHED_BATCH" => Ok(RtPolicy::Batch),
            "SCHED_IDLE" => Ok(RtPolicy::Idle),
            "SCHED_FIFO" => Ok(RtPolicy::Fifo),
            "SCHED_RR" => Ok(RtPolicy::Rr),
            "SCHED_DEADLINE" => Ok(RtPolicy::Deadline),
            p => Err(self.err(
                n.at,
                path,
                format!("unknown policy \"{p}\" (rt-app knows SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"),
            )),
        }
    }

    /// Splits a task or phase object into attributes and events; unknown keys are
    /// warnings, as rt-app ignores them.
    fn split<'n>(
        &mut self,
        members: &'n [Member],
        path: &str,
        level: Level,
    ) -> Result<(Attrs<'n>, Vec<EventMember<'n>>), WorkloadError> {
        let mut a = Attrs::default();
        let mut events = Vec::new();
        for m in members {
            let kpath = join(path, &m.key);
            if level == Level::Task {
                let legacy = match m.key.as_str() {
                    "runtime" => Some(&mut a.legacy_runtime),
                    "period" => Some(&mut a.legacy_period),
                    "deadline" => Some(&mut a.legacy_deadline),
                    _ => None,
                };
                if let Some(slot) = legacy {
                    *slot = Some(m);
                    if m.key != "runtime" {
                        continue;
                    }
                }
            }
            if let Some(kind) = event_kind(&m.key) {
                events.push((kind, m));
                continue;
            }
            let slot = match (m.key.as_str(), level) {
                ("instance", Level::Task) => &mut a.instance,
                ("delay", Level::Task) => &mut a.delay,
                ("phases", Level::Task) => &mut a.phases,
                ("loop", _) => &mut a.loops,
                ("policy", _) => &mut a.policy,
                ("priority", _) => &mut a.priority,
                ("cpus", _) => &mut a.cpus,
                ("util_min", _) => &mut a.util_min,
                ("util_max", _) => &mut a.util_max,
                ("taskgroup", _) => &mut a.taskgroup,
                ("dl-runtime", _) => &mut a.dl_runtime,
                ("dl-period", _) => &mut a.dl_period,
                ("dl-deadline", _) => &mut a.dl_deadline,
                ("nodes_membind", _) => {
                    if !self.null_is_default(m, &kpath) {
                        if !matches!(m.value.value, Value::Array(_)) {
                            return Err(self.err(
                                m.value.at,
                                &kpath,
                                format!(
                                    "expected an array of NUMA nodes, found {}",
                                    m.value.value.kind()
                                ),
                            ));
                        }
                        self.ignore(m, &kpath, "NUMA memory binding; no CPU scheduling effect");
                    }
                    continue;
                }
                ("instance" | "delay" | "phases", Level::Phase) => {
                    self.warn(
                        m.at,
                        &kpath,
                        format!(
                            "\"{}\" is a task key: rt-app ignores it in a phase",
                            short(&m.key)
                        ),
                    );
                    continue;
                }
                (_, Level::Task) => {
                    self.warn(
                        m.at,
                        &kpath,
                        "unknown task key: rt-app ignores it (not an event, not a task attribute)",
                    );
                    continue;
                }
                (_, Level::Phase) => {
                    self.warn(
                        m.at,
                        &kpath,
                        "unknown phase key: rt-app ignores it (not an event, not a phase attribute)",
                    );
                    continue;
                }
            };
            if !self.null_is_default(m, &kpath) {
                *slot = Some(m);
            }
        }
        Ok((a, events))
    }

    /// A phase's `loop` (or a task's without `phases`): rt-app stops repeating the phase
    /// when its counter, incremented after each run, equals `loop`, so 0 and every
    /// negative value repeat forever.
    fn phase_loops(&mut self, m: &Member, path: &str) -> Result<Loops, WorkloadError> {
        match self.int(&m.value, path)? {
            -1 => Ok(Loops::Forever),
            n if n >= 1 => Ok(Loops::Count(n.unsigned_abs())),
            n => {
                self.warn(
                    m.value.at,
                    path,
                    format!("loop {n}: rt-app counts a phase's runs from 1, never reaches {n}, and repeats the phase forever (as with -1)"),
                );
                Ok(Loops::Forever)
            }
        }
    }

    /// A task's `loop` over its `phases`: negative repeats forever, 0 runs nothing.
    fn task_loops(&mut self, m: &Member, path: &str) -> Result<Loops, WorkloadError> {
        match self.int(&m.value, path)? {
            -1 => Ok(Loops::Forever),
            n if n >= 1 => Ok(Loops::Count(n.unsigned_abs())),
            0 => Err(self.err(
                m.value.at,
                path,
                "loop 0: rt-app starts the thread but runs none of its phases; give the task \"instance\": 0 instead",
            )),
            n => {
                self.warn(
                    m.value.at,
                    path,
                    format!("loop {n}: rt-app repeats the phases forever for any negative loop (as with -1)"),
                );
                Ok(Loops::Forever)
            }
        }
    }

    fn priority(&self, m: &Member, policy: RtPolicy, path: &str) -> Result<i32, WorkloadError> {
        let v = self.int(&m.value, path)?;
        let (range, what) = if policy.is_fair() {
            (-20..=19, "nice")
        } else {
            (1..=99, "rt priority")
        };
        if !range.contains(&v) {
            return Err(self.err(
                m.value.at,
                path,
                format!(
                    "{what} {v} out of {}..={} for {}",
                    range.start(),
                    range.end(),
                    policy.name()
                ),
            ));
        }
        Ok(v)
    }

    /// An optional non-negative µs attribute.
    fn opt_us(&self, m: Option<&Member>, path: &str) -> Result<Option<u64>, WorkloadError> {
        m.map(|m| self.us(&m.value, &join(path, &m.key)))
            .transpose()
    }

    /// `policy`/`priority` and the `dl-*` parameters of an object, applied over
    /// `current` (`None`: rt-app changes nothing at this point). Mirrors
    /// `parse_sched_data()` and `set_thread_param()`: at task level the legacy
    /// `runtime`/`period`/`deadline` stand in for missing `dl-*` values; a phase
    /// changes nothing without `policy`, `priority`, `dl-*` or clamps.
    fn sched(
        &mut self,
        a: &Attrs<'_>,
        current: RtPolicy,
        current_sched: Sched,
        at: Loc,
        path: &str,
        level: Level,
    ) -> Result<Option<(RtPolicy, Sched, Option<u64>)>, WorkloadError> {
        let policy = match a.policy {
            Some(m) => self.policy(&m.value, &join(path, "policy"))?,
            None => current,
        };
        let mut runtime = self.opt_us(a.dl_runtime, path)?.unwrap_or(0);
        let mut period = self.opt_us(a.dl_period, path)?.unwrap_or(0);
        let mut deadline = self.opt_us(a.dl_deadline, path)?.unwrap_or(0);
        let mut slice_key = a.dl_runtime;
        if level == Level::Task {
            if runtime == 0 {
                if let Some(v) = self.opt_us(a.legacy_runtime, path)? {
                    runtime = v;
                    slice_key = a.legacy_runtime;
                }
            }
            if period == 0 {
                period = self.opt_us(a.legacy_period, path)?.unwrap_or(0);
            }
            if deadline == 0 {
                deadline = self.opt_us(a.legacy_deadline, path)?.unwrap_or(0);
            }
        }
        if period == 0 {
            period = runtime;
        }
        if deadline == 0 {
            deadline = period;
        }
        // rt-app changes a fair or rt task's parameters only when the object gives a
        // policy or a priority (`THREAD_PRIORITY_UNCHANGED` otherwise).
        let changes = level == Level::Task || a.policy.is_some() || a.priority.is_some();
        if !changes {
            if let Some(m) = a.dl_runtime.or(a.dl_period).or(a.dl_deadline) {
                self.ignore(
                    m,
                    &join(path, &m.key),
                    "rt-app applies a phase's dl-* parameters only with a policy or priority",
                );
            }
            return Ok(None);
        }
        let priority = match (a.priority, a.policy) {
            (Some(m), _) if policy != RtPolicy::Deadline => {
                self.priority(m, policy, &join(path, "priority"))?
            }
            (None, None) => current_sched.priority,
            _ => policy.model().1,
        };
        match policy {
            RtPolicy::Deadline => {
                self.deadline(runtime, deadline, period, at, path)?;
            }
            // The EEVDF custom slice (sched_attr.sched_runtime): carried to the simulator,
            // which clamps it as __setparam_fair() does.
            RtPolicy::Other | RtPolicy::Batch if runtime > 0 => {}
            _ => {
                if let Some(m) = slice_key.filter(|_| runtime > 0) {
                    self.ignore(
                        m,
                        &join(path, &m.key),
                        "sched_runtime has no effect for this policy (rt-app passes it for SCHED_OTHER, SCHED_BATCH and SCHED_DEADLINE only)",
                    );
                }
            }
        }
        if policy == RtPolicy::Batch {
            self.warn(
                a.policy.map_or(at, |m| m.at),
                &join(path, "policy"),
                "SCHED_BATCH is simulated as SCHED_OTHER: the kernel's batch rule (a waking SCHED_BATCH task never preempts) is not modelled",
            );
        }
        let slice = matches!(policy, RtPolicy::Other | RtPolicy::Batch)
            .then_some(runtime)
            .filter(|&r| r > 0);
        let model = policy.model().0;
        let priority = if policy == RtPolicy::Deadline {
            DEADLINE_AS_FIFO
        } else {
            priority
        };
        Ok(Some((
            policy,
            Sched {
                policy: model,
                priority,
            },
            slice,
        )))
    }

    /// `SCHED_DEADLINE` parameters as the kernel's `__checkparam_dl()` takes them (a
    /// file the kernel refuses is refused); the task is then simulated as the highest
    /// `SCHED_FIFO` priority, with a warning.
    fn deadline(
        &mut self,
        runtime: u64,
        deadline: u64,
        period: u64,
        at: Loc,
        path: &str,
    ) -> Result<(), WorkloadError> {
        if runtime == 0 {
            return Err(self.err(
                at,
                path,
                "SCHED_DEADLINE without dl-runtime: the kernel refuses a zero runtime (sched_setattr EINVAL), so rt-app exits",
            ));
        }
        if runtime > deadline || deadline > period {
            return Err(self.err(
                at,
                path,
                format!(
                    "SCHED_DEADLINE needs runtime <= deadline <= period (the kernel's __checkparam_dl): {} µs, {} µs, {} µs",
                    runtime / 1000,
                    deadline / 1000,
                    period / 1000
                ),
            ));
        }
        self.warn(
            at,
            path,
            format!(
                "SCHED_DEADLINE (runtime {} µs, deadline {} µs, period {} µs: {} % bandwidth) is simulated as SCHED_FIFO priority {DEADLINE_AS_FIFO}: schedmath has no deadline class (no CBS throttling, EDF order or bandwidth-based frequency request)",
                runtime / 1000,
                deadline / 1000,
                period / 1000,
                runtime * 100 / period
            ),
        );
        Ok(())
    }

    fn cpus(&self, m: &Member, path: &str) -> Result<Affinity, WorkloadError> {
        let Value::Array(items) = &m.value.value else {
            return Err(self.err(
                m.value.at,
                path,
                format!(
                    "expected an array of CPU numbers, found {}",
                    m.value.value.kind()
                ),
            ));
        };
        let mut cpus = Vec::with_capacity(items.len());
        for n in items {
            let c = self.int(n, path)?;
            cpus.push(
                usize::try_from(c)
                    .map_err(|_| self.err(n.at, path, format!("negative CPU number {c}")))?,
            );
        }
        if cpus.is_empty() {
            return Err(self.err(
                m.value.at,
                path,
                "empty CPU list (the kernel rejects an empty affinity mask)",
            ));
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Affinity { cpus, at: m.at })
    }

    /// `util_min`/`util_max` of an object (each `None`: key absent or `-1`).
    fn uclamp(&self, a: &Attrs<'_>, path: &str) -> Result<Uclamp, WorkloadError> {
        let one = |m: Option<&Member>, key: &str| -> Result<Option<u32>, WorkloadError> {
            let Some(m) = m else { return Ok(None) };
            let p = join(path, key);
            match self.int(&m.value, &p)? {
                -1 => Ok(None),
                v if (0..=UCLAMP_MAX).contains(&v) => Ok(Some(v.unsigned_abs())),
                v => Err(self.err(
                    m.value.at,
                    &p,
                    format!("{key} {v}: -1 (unchanged) or 0..=1024"),
                )),
            }
        };
        Ok(Uclamp {
            min: one(a.util_min, "util_min")?,
            max: one(a.util_max, "util_max")?,
        })
    }

    /// A taskgroup path, normalised; `None` for `""` (no taskgroup data in rt-app).
    fn group_path(&self, s: &str, at: Loc, path: &str) -> Result<Option<String>, WorkloadError> {
        if s.is_empty() {
            return Ok(None);
        }
        if s == "/" {
            return Ok(Some(s.to_string()));
        }
        let Some(rest) = s.strip_prefix('/') else {
            return Err(self.err(at, path, format!("taskgroup \"{s}\" has to start with /")));
        };
        if rest.split('/').any(str::is_empty) {
            return Err(self.err(
                at,
                path,
                format!("taskgroup \"{s}\" has an empty path component"),
            ));
        }
        if rest.split('/').any(|c| c == "." || c == "..") {
            return Err(self.err(
                at,
                path,
                format!(
                    "taskgroup \"{}\" has a `.` or `..` component: a cgroup path names directories below the root",
                    crate::limits::printable(s)
                ),
            ));
        }
        if let Some(c) = s.chars().find(|c| c.is_control()) {
            return Err(self.err(
                at,
                path,
                crate::limits::control_char_message("taskgroup", c),
            ));
        }
        Ok(Some(s.to_string()))
    }

    fn taskgroup(&self, m: Option<&Member>, path: &str) -> Result<Option<String>, WorkloadError> {
        let Some(m) = m else { return Ok(None) };
        let p = join(path, "taskgroup");
        let s = self.string(&m.value, &p)?;
        self.group_path(s, m.value.at, &p)
    }

    fn task(
        &mut self,
        m: &Member,
        default_policy: RtPolicy,
        names: &[&str],
    ) -> Result<TaskSpec, WorkloadError> {
        let path = join("tasks", &m.key);
        self.name_fits(m, &path)?;
        let members = self.object(&m.value, &path)?;
        let (a, events) = self.split(members, &path, Level::Task)?;
        let (policy, prio) = default_policy.model();
        let initial = Sched {
            policy,
            priority: prio,
        };
        let (rt, sched, custom_slice_ns) = self
            .sched(&a, default_policy, initial, m.at, &path, Level::Task)?
            .unwrap_or((default_policy, initial, None));
        let cpus = a
            .cpus
            .map(|c| self.cpus(c, &join(&path, "cpus")))
            .transpose()?;
        let uclamp = self.uclamp(&a, &path)?;
        let group = self
            .taskgroup(a.taskgroup, &path)?
            .unwrap_or_else(|| "/".to_string());
        let instances = match a.instance {
            None => 1,
            Some(i) => {
                let p = join(&path, "instance");
                let n = self.int(&i.value, &p)?;
                u32::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_INSTANCES)
                    .ok_or_else(|| {
                        self.err(i.value.at, &p, format!("instance {n}: 0..={MAX_INSTANCES}"))
                    })?
            }
        };
        let delay_ns = match a.delay {
            None => 0,
            Some(d) => {
                let p = join(&path, "delay");
                let v = self.int(&d.value, &p)?;
                if v < 0 {
                    self.warn(
                        d.value.at,
                        &p,
                        format!(
                            "delay {v}: rt-app waits only for a positive delay and starts at once"
                        ),
                    );
                }
                u64::from(v.max(0).unsigned_abs()) * 1000
            }
        };
        let mut state = State {
            rt,
            sched,
            uclamp,
            group: group.clone(),
        };
        self.check_state(&state, m.at, &path)?;
        let (loops, phases) = match a.phases {
            Some(pm) => {
                for (_, e) in &events {
                    let epath = join(&path, &e.key);
                    let legacy = if e.key == "runtime" {
                        " (its value is still read as the legacy dl-runtime)"
                    } else {
                        ""
                    };
                    self.warn(
                        e.at,
                        &epath,
                        format!("event beside \"phases\": rt-app ignores it{legacy}; move it into a phase"),
                    );
                }
                let ppath = join(&path, "phases");
                let list = self.object(&pm.value, &ppath)?;
                if list.is_empty() {
                    return Err(self.err(pm.at, &ppath, "no phases: a task needs at least one"));
                }
                let mut phases = Vec::with_capacity(list.len());
                for p in list {
                    phases.push(self.phase(p, &m.key, &join(&ppath, &p.key), &mut state, names)?);
                }
                let loops = match a.loops {
                    Some(l) => self.task_loops(l, &join(&path, "loop"))?,
                    None => Loops::Forever,
                };
                (loops, phases)
            }
            None => {
                let phase_loops = match a.loops {
                    Some(l) => self.phase_loops(l, &join(&path, "loop"))?,
                    None => Loops::Count(1),
                };
                let events = self.events(&events, &m.key, &path, m.at, names)?;
                let phase = Phase {
                    name: None,
                    at: m.value.at,
                    loops: phase_loops,
                    sched: None,
                    cpus: None,
                    uclamp: Uclamp::default(),
                    group: None,
                    custom_slice_ns: None,
                    events,
                };
                let loops = if a.loops.is_some() {
                    Loops::Count(1)
                } else {
                    Loops::Forever
                };
                (loops, vec![phase])
            }
        };
        Ok(TaskSpec {
            name: m.key.clone(),
            at: m.at,
            instances: instance_names(&m.key, instances as usize),
            sched,
            cpus,
            uclamp,
            group,
            delay_ns,
            custom_slice_ns,
            loops,
            phases,
        })
    }

    fn phase(
        &mut self,
        m: &Member,
        task: &str,
        path: &str,
        state: &mut State,
        names: &[&str],
    ) -> Result<Phase, WorkloadError> {
        self.name_fits(m, path)?;
        let members = self.object(&m.value, path)?;
        let (a, events) = self.split(members, path, Level::Phase)?;
        let loops = match a.loops {
            Some(l) => self.phase_loops(l, &join(path, "loop"))?,
            None => Loops::Count(1),
        };
        let sched = self.sched(&a, state.rt, state.sched, m.at, path, Level::Phase)?;
        let cpus = a
            .cpus
            .map(|c| self.cpus(c, &join(path, "cpus")))
            .transpose()?;
        let uclamp = self.uclamp(&a, path)?;
        let group = self.taskgroup(a.taskgroup, path)?;
        if let Some((rt, s, _)) = sched {
            state.rt = rt;
            state.sched = s;
        }
        state.uclamp.min = uclamp.min.or(state.uclamp.min);
        state.uclamp.max = uclamp.max.or(state.uclamp.max);
        if let Some(g) = &group {
            state.group.clone_from(g);
        }
        self.check_state(state, m.at, path)?;
        let events = self.events(&events, task, path, m.at, names)?;
        Ok(Phase {
            name: Some(m.key.clone()),
            at: m.at,
            loops,
            sched: sched.map(|(_, s, _)| s),
            cpus,
            uclamp,
            group,
            custom_slice_ns: sched.and_then(|(_, _, slice)| slice),
            events,
        })
    }

    /// A task or phase name of at most [`MAX_NAME`] characters.
    fn name_fits(&self, m: &Member, path: &str) -> Result<(), WorkloadError> {
        if m.key.chars().nth(MAX_NAME).is_some() {
            return Err(self.err(
                m.at,
                path,
                format!("name longer than {MAX_NAME} characters"),
            ));
        }
        if let Some(c) = m.key.chars().find(|c| c.is_control()) {
            return Err(self.err(m.at, path, crate::limits::control_char_message("name", c)));
        }
        Ok(())
    }

    /// What rt-app and the kernel refuse about the attributes in effect.
    fn check_state(&self, s: &State, at: Loc, path: &str) -> Result<(), WorkloadError> {
        if let (Some(min), Some(max)) = (s.uclamp.min, s.uclamp.max) {
            if min > max {
                return Err(self.err(
                    at,
                    path,
                    format!("util_min {min} above util_max {max} (the kernel rejects it)"),
                ));
            }
        }
        if s.group != "/" && !s.rt.is_fair() {
            return Err(self.err(
                at,
                path,
                format!(
                    "taskgroup \"{}\" with {}: rt-app supports taskgroups for SCHED_OTHER, SCHED_BATCH and SCHED_IDLE only",
                    s.group,
                    s.rt.name()
                ),
            ));
        }
        Ok(())
    }

    fn events(
        &mut self,
        members: &[EventMember<'_>],
        task: &str,
        path: &str,
        at: Loc,
        names: &[&str],
    ) -> Result<Vec<EventSpec>, WorkloadError> {
        if members.is_empty() {
            let legacy = if path.contains(".phases.") {
                ""
            } else {
                " (exec, lock_order and resources in a task are rt-app's legacy grammar, input of doc/merge.py; rt-app itself does not read them)"
            };
            return Err(self.err(
                at,
                path,
                format!("no events (rt-app: a task must have events or it is useless){legacy}"),
            ));
        }
        let mut out = Vec::with_capacity(members.len());
        for &(kind, m) in members {
            let event = self
                .event(kind, m, task, &join(path, &m.key), names)
                .map_err(|e| mismatched(e, &m.key))?;
            out.push(EventSpec {
                key: m.key.clone(),
                at: m.at,
                event,
            });
        }
        Ok(out)
    }

    fn event(
        &mut self,
        kind: Kind,
        m: &Member,
        task: &str,
        path: &str,
        names: &[&str],
    ) -> Result<Event, WorkloadError> {
        let v = &m.value;
        let name =
            |cx: &Self| -> Result<String, WorkloadError> { Ok(cx.string(v, path)?.to_string()) };
        let bytes = |cx: &Self| -> Result<u64, WorkloadError> {
            let b = cx.int(v, path)?;
            u64::try_from(b).map_err(|_| cx.err(v.at, path, format!("negative size: {b} bytes")))
        };
        Ok(match kind {
            Kind::Run => Event::Run {
                work_ns: self.us(v, path)?,
            },
            Kind::Runtime => Event::Runtime {
                wall_ns: self.us(v, path)?,
            },
            Kind::Sleep => Event::Sleep {
                ns: self.us(v, path)?,
            },
            Kind::Mem => Event::Mem { bytes: bytes(self)? },
            Kind::IoRun => Event::IoRun { bytes: bytes(self)? },
            Kind::Lock => Event::Lock { mutex: name(self)? },
            Kind::Unlock => Event::Unlock { mutex: name(self)? },
            Kind::Signal => Event::Signal { cond: name(self)? },
            Kind::Broad => Event::Broadcast { cond: name(self)? },
            Kind::Barrier => Event::Barrier { name: name(self)? },
            Kind::Resume => Event::Resume { name: name(self)? },
            Kind::Suspend => {
                // rt-app (since it stopped reading the value) suspends every thread of
                // the task object on the object's own name.
                if let Value::Str(s) = &v.value {
                    if !s.is_empty() && s != task {
                        self.warn(
                            v.at,
                            path,
                            format!("rt-app ignores suspend's value \"{}\": the thread suspends on its task object's name \"{}\"", short(s), short(task)),
                        );
                    }
                }
                Event::Suspend {
                    name: task.to_string(),
                }
            }
            Kind::Yield => Event::Yield,
            Kind::Wait | Kind::Sync => {
                let fields = self.fields(v, path, &["ref", "mutex"])?;
                let cond = self.field_str(&fields, "ref", path)?;
                let mutex = self.field_str(&fields, "mutex", path)?;
                if kind == Kind::Wait {
                    Event::Wait { cond, mutex }
                } else {
                    Event::Sync { cond, mutex }
                }
            }
            Kind::Timer => {
                let fields = self.fields(v, path, &["ref", "period", "mode"])?;
                let name = self.field_str(&fields, "ref", path)?;
                let period_ns = match fields.get("period") {
                    Some(p) => self.us(&p.value, &join(path, "period"))?,
                    None => 0,
                };
                if period_ns == 0 {
                    return Err(self.err(
                        v.at,
                        path,
                        "timer period is 0 or missing (rt-app would never sleep; a timer needs a period > 0 µs)",
                    ));
                }
                let mode = match fields.get("mode") {
                    None => TimerMode::Relative,
                    Some(p) => {
                        let mpath = join(path, "mode");
                        let s = self.string(&p.value, &mpath)?;
                        // rt-app: absolute when the value starts with "absolute".
                        let mode = if s.starts_with("absolute") {
                            TimerMode::Absolute
                        } else {
                            TimerMode::Relative
                        };
                        if s != "absolute" && s != "relative" {
                            let is = super::model::mode_name(mode);
                            self.warn(
                                p.value.at,
                                &mpath,
                                format!("timer mode \"{}\": rt-app reads it as {is} (absolute when it starts with \"absolute\", else relative)", short(s)),
                            );
                        }
                        mode
                    }
                };
                Event::Timer {
                    per_thread: name.starts_with("unique"),
                    name,
                    period_ns,
                    mode,
                }
            }
            Kind::Fork => {
                let target = name(self)?;
                if !names.contains(&target.as_str()) {
                    return Err(self.err(
                        v.at,
                        path,
                        format!("fork of \"{target}\": no task object has that name (rt-app exits: \"Can't fork unknown task\")"),
                    ));
                }
                Event::Fork { task: target }
            }
            Kind::MemRun => {
                return Err(self.err(
                    m.at,
                    path,
                    "memrun is not modelled: its time depends on the cache and memory hierarchy (read/write/chase over a buffer), which schedmath does not simulate; use mem or run",
                ))
            }
            Kind::SemPost | Kind::SemWait => {
                name(self)?;
                return Err(self.err(
                    m.at,
                    path,
                    "POSIX semaphores (sem_post/sem_wait) are not simulated yet",
                ));
            }
        })
    }

    /// The members of an event object; keys other than `allowed` are warnings (rt-app
    /// reads the ones it knows).
    fn fields<'n>(
        &mut self,
        v: &'n Node,
        path: &str,
        allowed: &[&str],
    ) -> Result<BTreeMap<&'n str, &'n Member>, WorkloadError> {
        let members = self.object(v, path)?;
        let mut out = BTreeMap::new();
        for m in members {
            let kpath = join(path, &m.key);
            if !allowed.contains(&m.key.as_str()) {
                self.warn(
                    m.at,
                    &kpath,
                    format!(
                        "unknown key: rt-app ignores it (this event reads {})",
                        allowed.join(", ")
                    ),
                );
                continue;
            }
            if !self.null_is_default(m, &kpath) {
                out.insert(m.key.as_str(), m);
            }
        }
        Ok(out)
    }

    /// A string field of an event object; rt-app's default for a missing one is
    /// `"unknown"`.
    fn field_str(
        &self,
        fields: &BTreeMap<&str, &Member>,
        key: &str,
        path: &str,
    ) -> Result<String, WorkloadError> {
        match fields.get(key) {
            Some(m) => Ok(self.string(&m.value, &join(path, key))?.to_string()),
            None => Ok("unknown".to_string()),
        }
    }

    /// A `suspend` nobody resumes blocks its thread for the rest of the use case, and a
    /// `resume` of a name nobody suspends on is lost (`pthread_cond_broadcast()` with no
    /// waiter): rt-app runs both, so both are warnings. rt-app suspends each thread on
    /// its task object's name, so a file written for the older reader (which suspended
    /// on the event's value) lands here.
    fn unpaired_suspends(&mut self, tasks: &[TaskSpec]) {
        let mut suspends: BTreeMap<&str, (Loc, String)> = BTreeMap::new();
        let mut resumes: BTreeMap<&str, (Loc, String)> = BTreeMap::new();
        for t in tasks {
            for p in &t.phases {
                for e in &p.events {
                    let path = || super::model::event_path(t, p, e);
                    match &e.event {
                        Event::Suspend { name } => {
                            suspends.entry(name).or_insert_with(|| (e.at, path()));
                        }
                        Event::Resume { name } => {
                            resumes.entry(name).or_insert_with(|| (e.at, path()));
                        }
                        _ => {}
                    }
                }
            }
        }
        for (name, (at, path)) in &suspends {
            if !resumes.contains_key(name) {
                self.warn(
                    *at,
                    path,
                    format!("suspends on \"{}\" but no task resumes it: the thread blocks there until the use case ends", short(name)),
                );
            }
        }
        for (name, (at, path)) in &resumes {
            if !suspends.contains_key(name) {
                self.warn(
                    *at,
                    path,
                    format!("resumes \"{}\" but no thread suspends on it (rt-app suspends each thread on its task object's name): the wake-up is lost", short(name)),
                );
            }
        }
    }

    /// A forked task object may not use a barrier: rt-app counts a barrier's users
    /// when it parses the file (`instance` of each user), so a forked thread would
    /// never be counted ("barrier can't be used with fork event", doc/tutorial.txt).
    fn check_forks(&self, tasks: &[TaskSpec]) -> Result<(), WorkloadError> {
        let forked: Vec<&str> = tasks
            .iter()
            .flat_map(|t| t.phases.iter().flat_map(|p| p.events.iter()))
            .filter_map(|e| match &e.event {
                Event::Fork { task } => Some(task.as_str()),
                _ => None,
            })
            .collect();
        for t in tasks.iter().filter(|t| forked.contains(&t.name.as_str())) {
            for p in &t.phases {
                if let Some(e) = p
                    .events
                    .iter()
                    .find(|e| matches!(e.event, Event::Barrier { .. }))
                {
                    return Err(self.err(
                        e.at,
                        &join(&join("tasks", &t.name), &e.key),
                        format!("\"{}\" is forked and uses a barrier: rt-app counts a barrier's threads at start, so a forked thread is never counted (the tutorial: barrier can't be used with fork)", short(&t.name)),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A badly typed event value is an "unknown or mismatch" event for rt-app, which exits:
/// the error says which event the key names.
fn mismatched(e: WorkloadError, key: &str) -> WorkloadError {
    match e {
        WorkloadError::Invalid {
            origin,
            at,
            path,
            msg,
        } if msg.starts_with("expected ") => {
            let prefix = event_prefix(key).map_or("", |(p, _)| p);
            WorkloadError::Invalid {
                origin,
                at,
                path,
                msg: format!("{msg}: \"{key}\" is a {prefix} event (the key starts with \"{prefix}\"), and rt-app exits on a mismatched event"),
            }
        }
        e => e,
    }
}

/// The attributes in effect while walking a task's phases in order.
struct State {
    rt: RtPolicy,
    sched: Sched,
    uclamp: Uclamp,
    group: String,
}

/// `key` cut to [`MAX_KEY_IN_PATH`] characters (longer ones end in `…`), for messages.
fn short(key: &str) -> std::borrow::Cow<'_, str> {
    match key.char_indices().nth(MAX_KEY_IN_PATH) {
        Some((cut, _)) => format!("{}…", &key[..cut]).into(),
        None => key.into(),
    }
}

/// `path.key`, the key cut to [`MAX_KEY_IN_PATH`] characters: paths are built per
/// member and copied into every warning, so a hostile megabyte-long key must not make
/// them quadratic.
fn join(path: &str, key: &str) -> String {
    let key = short(key);
    if path.is_empty() {
        key.into_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Every group a task uses or the extension configures, with all their ancestors.
fn build_groups(tasks: &[TaskSpec], cfg: &BTreeMap<String, (u32, bool)>) -> Vec<TaskGroup> {
    let used = tasks.iter().flat_map(|t| {
        std::iter::once(t.group.as_str()).chain(t.phases.iter().filter_map(|p| p.group.as_deref()))
    });
    let mut all: BTreeMap<String, String> = BTreeMap::new();
    for path in used.chain(cfg.keys().map(String::as_str)) {
        let mut p = path;
        while p != "/" {
            let parent = match p.rfind('/') {
                Some(0) | None => "/",
                Some(i) => &p[..i],
            };
            all.insert(p.to_string(), parent.to_string());
            p = parent;
        }
    }
    all.into_iter()
        .map(|(path, parent)| {
            let (shares, idle) = cfg.get(&path).copied().unwrap_or((DEFAULT_SHARES, false));
            TaskGroup {
                path,
                parent,
                shares,
                idle,
            }
        })
        .collect()
}
