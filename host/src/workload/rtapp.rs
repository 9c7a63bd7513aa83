// SPDX-License-Identifier: GPL-2.0-only
//! rt-app JSON → [`Workload`].
//!
//! Follows rt-app's own reader (`src/rt-app_parse_config.c`) and its documentation
//! (`doc/tutorial.txt`):
//! * an object member is an event when its key *starts with* an event name (`run`,
//!   `run1`, `sleep_long`, ...), tested in rt-app's order, so `runtime2` is a `runtime`
//!   event and `membind_nodes` is (as in rt-app) a badly typed `mem` event;
//! * durations are C `int`s of µs (`run`, `runtime`, `sleep`, timer `period`, `delay`);
//!   `global.duration` is in seconds, `-1` for "until every task ends";
//! * a task without `phases` is its own single phase: its `loop` repeats that phase
//!   and the task then ends; without `loop` it repeats forever. With `phases`, a phase
//!   runs once by default and the task repeats its phases forever by default;
//! * phase-level `policy`/`priority`/`util_min`/`util_max`/`taskgroup` apply when the
//!   phase starts and persist; a phase `cpus` holds for that phase only. `priority` is
//!   the nice value for `SCHED_OTHER`/`SCHED_IDLE` (default 0) and the rt priority for
//!   FIFO/RR (default 10); a phase `priority` without `policy` keeps the policy in
//!   effect when the phase is first reached (rt-app fixes it then, in `set_thread_param`).
//!
//! Stricter than rt-app, on purpose: rt-app ignores keys it does not read and exits on
//! the first bad value without saying where. Here a key rt-app does not know, or one
//! schedmath does not model (`SCHED_DEADLINE` and its `dl-*` parameters, `fork`), is an
//! error naming file, line and path; keys rt-app reads that do not change scheduling
//! (logging, calibration, NUMA binding, ...) are accepted and listed in
//! [`Workload::ignored_keys`].
//!
//! What rt-app has no syntax for comes from a top-level extension object that rt-app
//! never reads (so the file still runs under rt-app):
//! `"schedmath": { "taskgroups": { "/bg": { "shares": 1024, "idle": true } },
//! "io_latency_us": [50, 500], "irq_pct": { "4": 10 } }` — task-group attributes, the
//! device latency of every `iorun`, and per-CPU irq time (% of wall time).

use std::collections::BTreeMap;

use super::error::WorkloadError;
use super::json::{self, Loc, Member, Node, Value};
use super::model::{
    instance_names, Affinity, Event, EventSpec, Format, Global, IgnoredKey, IrqShare, Loops, Phase,
    Policy, Sched, TaskGroup, TaskSpec, TimerMode, Uclamp, Workload, DEFAULT_SHARES, IRQ_PCT_RANGE,
    MAX_INSTANCES,
};

/// rt-app's default rt priority (`DEFAULT_THREAD_PRIORITY`).
const DEFAULT_RT_PRIORITY: i32 = 10;
/// Kernel `MIN_SHARES` and `MAX_SHARES` (`1 << 18`).
const SHARES_RANGE: std::ops::RangeInclusive<i64> = 2..=262_144;
/// `SCHED_CAPACITY_SCALE`: the top of a utilisation clamp.
const UCLAMP_MAX: i32 = 1024;

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
    };
    let top = cx.object(&root, "(root)")?;
    cx.no_duplicates(top, "")?;
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
            k => {
                return Err(cx.err(
                    m.at,
                    k,
                    "unknown top-level key (rt-app knows global, tasks, resources; schedmath adds schedmath)",
                ))
            }
        }
    }
    let mut global = match global {
        Some(m) => cx.global(m)?,
        None => Global::default(),
    };
    let mut group_cfg = BTreeMap::new();
    if let Some(m) = ext {
        cx.extension(m, &mut group_cfg, &mut global)?;
    }
    let Some(tasks_m) = tasks else {
        return Err(cx.err(
            root.at,
            "tasks",
            "missing: a workload needs a \"tasks\" object",
        ));
    };
    let members = cx.object(&tasks_m.value, "tasks")?;
    if members.is_empty() {
        return Err(cx.err(tasks_m.at, "tasks", "no tasks"));
    }
    cx.no_duplicates(members, "tasks")?;
    let mut specs = Vec::with_capacity(members.len());
    for m in members {
        specs.push(cx.task(m, global.default_policy)?);
    }
    let groups = build_groups(&specs, &group_cfg);
    cx.ignored.sort_by_key(|k| k.at);
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
}

/// The event a key names, tested in the order rt-app's parser tests them.
fn event_kind(key: &str) -> Option<Kind> {
    const ORDER: [(&str, Kind); 17] = [
        ("sleep", Kind::Sleep),
        ("runtime", Kind::Runtime),
        ("run", Kind::Run),
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
    ];
    ORDER
        .iter()
        .find(|(prefix, _)| key.starts_with(prefix))
        .map(|&(_, k)| k)
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
}

struct Ctx<'a> {
    origin: &'a str,
    ignored: Vec<IgnoredKey>,
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

    fn ignore(&mut self, m: &Member, path: &str, reason: &'static str) {
        self.ignored.push(IgnoredKey {
            path: path.to_string(),
            at: m.at,
            reason,
        });
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

    /// Repeated keys are kept for events only; a repeated attribute is an error
    /// (json-c would silently keep the last one).
    fn no_duplicates(&self, members: &[Member], path: &str) -> Result<(), WorkloadError> {
        self.no_duplicates_but_events(members, path, false)
    }

    fn no_duplicates_but_events(
        &self,
        members: &[Member],
        path: &str,
        events_repeat: bool,
    ) -> Result<(), WorkloadError> {
        for (i, m) in members.iter().enumerate() {
            if events_repeat && event_kind(&m.key).is_some() {
                continue;
            }
            if let Some(first) = members[..i].iter().find(|f| f.key == m.key) {
                return Err(self.err(
                    m.at,
                    &join(path, &m.key),
                    format!("duplicate key (first at line {})", first.at.line),
                ));
            }
        }
        Ok(())
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

    fn global(&mut self, m: &Member) -> Result<Global, WorkloadError> {
        let members = self.object(&m.value, "global")?;
        self.no_duplicates(members, "global")?;
        let mut g = Global::default();
        for m in members {
            let path = join("global", &m.key);
            match m.key.as_str() {
                "duration" => {
                    g.duration_ns = match self.int(&m.value, &path)? {
                        -1 => None,
                        s if s > 0 => Some(u64::from(s.unsigned_abs()) * 1_000_000_000),
                        s => {
                            return Err(self.err(
                                m.value.at,
                                &path,
                                format!("duration {s}: -1 (until every task ends) or a positive number of seconds"),
                            ))
                        }
                    }
                }
                "default_policy" => g.default_policy = self.policy(&m.value, &path)?,
                "calibration" => self.ignore(
                    m,
                    &path,
                    "rt-app's busy-loop calibration; `run` here is already work at max capacity and frequency",
                ),
                "gnuplot" | "logdir" | "log_basename" | "log_size" | "ftrace" => {
                    self.ignore(m, &path, "logging and tracing only")
                }
                "lock_pages" => self.ignore(m, &path, "memory locking; no scheduling effect"),
                "pi_enabled" => self.ignore(
                    m,
                    &path,
                    "priority inheritance on rt-app mutexes is not modelled",
                ),
                "io_device" | "mem_buffer_size" => self.ignore(
                    m,
                    &path,
                    "target of iorun/mem; the simulator chooses the device and memory rates",
                ),
                "cumulative_slack" => self.ignore(m, &path, "changes rt-app's slack log only"),
                _ => {
                    return Err(self.err(
                        m.at,
                        &path,
                        "unknown global key (rt-app knows duration, calibration, default_policy, pi_enabled, lock_pages, logdir, log_basename, log_size, ftrace, gnuplot, io_device, mem_buffer_size, cumulative_slack)",
                    ))
                }
            }
        }
        Ok(g)
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
        self.no_duplicates(members, "schedmath")?;
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
            self.no_duplicates(groups, "schedmath.taskgroups")?;
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
                self.no_duplicates(attrs, &path)?;
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
        self.no_duplicates(members, path)?;
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

    fn policy(&self, n: &Node, path: &str) -> Result<Policy, WorkloadError> {
        match self.string(n, path)? {
            "SCHED_OTHER" => Ok(Policy::Other),
            "SCHED_IDLE" => Ok(Policy::Idle),
            "SCHED_FIFO" => Ok(Policy::Fifo),
            "SCHED_RR" => Ok(Policy::Rr),
            "SCHED_DEADLINE" => Err(self.err(
                n.at,
                path,
                "SCHED_DEADLINE is not modelled by schedmath (the simulator has no deadline class)",
            )),
            p => Err(self.err(
                n.at,
                path,
                format!("unknown policy \"{p}\" (rt-app knows SCHED_OTHER, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"),
            )),
        }
    }

    /// Splits a task or phase object into attributes and events.
    fn split<'n>(
        &mut self,
        members: &'n [Member],
        path: &str,
        level: Level,
    ) -> Result<(Attrs<'n>, Vec<EventMember<'n>>), WorkloadError> {
        self.no_duplicates_but_events(members, path, true)?;
        let mut a = Attrs::default();
        let mut events = Vec::new();
        for m in members {
            let kpath = join(path, &m.key);
            if let Some(kind) = event_kind(&m.key) {
                if kind == Kind::Fork {
                    return Err(self.err(
                        m.at,
                        &kpath,
                        "fork events are not modelled by schedmath (give the task instances instead)",
                    ));
                }
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
                ("nodes_membind", _) => {
                    self.ignore(m, &kpath, "NUMA memory binding; no CPU scheduling effect");
                    continue;
                }
                ("dl-runtime" | "dl-period" | "dl-deadline", _)
                | ("period" | "deadline", Level::Task) => {
                    return Err(self.err(
                        m.at,
                        &kpath,
                        "SCHED_DEADLINE parameters (and the EEVDF custom slice that dl-runtime sets on SCHED_OTHER) are not modelled by schedmath",
                    ))
                }
                (k, Level::Task) => {
                    return Err(self.err(
                        m.at,
                        &kpath,
                        format!("unknown task key \"{k}\" (not an rt-app event or task attribute)"),
                    ))
                }
                (k, Level::Phase) => {
                    return Err(self.err(
                        m.at,
                        &kpath,
                        format!("unknown phase key \"{k}\" (not an rt-app event or phase attribute)"),
                    ))
                }
            };
            *slot = Some(m);
        }
        Ok((a, events))
    }

    fn loops(&self, m: &Member, path: &str) -> Result<Loops, WorkloadError> {
        match self.int(&m.value, path)? {
            -1 => Ok(Loops::Forever),
            n if n >= 1 => Ok(Loops::Count(n.unsigned_abs())),
            n => Err(self.err(
                m.value.at,
                path,
                format!("loop {n}: -1 (forever) or at least 1"),
            )),
        }
    }

    fn priority(&self, m: &Member, policy: Policy, path: &str) -> Result<i32, WorkloadError> {
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

    /// `policy`/`priority` of an object, applied over `current` (`None`: neither key).
    fn sched(
        &self,
        a: &Attrs<'_>,
        current: Sched,
        path: &str,
    ) -> Result<Option<Sched>, WorkloadError> {
        if a.policy.is_none() && a.priority.is_none() {
            return Ok(None);
        }
        let policy = match a.policy {
            Some(m) => self.policy(&m.value, &join(path, "policy"))?,
            None => current.policy,
        };
        let priority = match (a.priority, a.policy) {
            (Some(m), _) => self.priority(m, policy, &join(path, "priority"))?,
            (None, Some(_)) => default_priority(policy),
            (None, None) => current.priority,
        };
        Ok(Some(Sched { policy, priority }))
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
        Ok(Some(s.to_string()))
    }

    fn taskgroup(&self, m: Option<&Member>, path: &str) -> Result<Option<String>, WorkloadError> {
        let Some(m) = m else { return Ok(None) };
        let p = join(path, "taskgroup");
        let s = self.string(&m.value, &p)?;
        self.group_path(s, m.value.at, &p)
    }

    fn task(&mut self, m: &Member, default_policy: Policy) -> Result<TaskSpec, WorkloadError> {
        let path = join("tasks", &m.key);
        let members = self.object(&m.value, &path)?;
        let (a, events) = self.split(members, &path, Level::Task)?;
        let initial = Sched {
            policy: default_policy,
            priority: default_priority(default_policy),
        };
        let sched = self.sched(&a, initial, &path)?.unwrap_or(initial);
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
            Some(d) => self.us(&d.value, &join(&path, "delay"))?,
        };
        let mut state = State {
            sched,
            uclamp,
            group: group.clone(),
        };
        self.check_state(&state, m.at, &path)?;
        let (loops, phases) = match a.phases {
            Some(pm) => {
                if let Some((_, e)) = events.first() {
                    return Err(self.err(
                        e.at,
                        &join(&path, &e.key),
                        "events beside \"phases\" are ignored by rt-app; move them into a phase",
                    ));
                }
                let ppath = join(&path, "phases");
                let list = self.object(&pm.value, &ppath)?;
                if list.is_empty() {
                    return Err(self.err(pm.at, &ppath, "no phases: a task needs at least one"));
                }
                self.no_duplicates(list, &ppath)?;
                let mut phases = Vec::with_capacity(list.len());
                for p in list {
                    phases.push(self.phase(p, &m.key, &join(&ppath, &p.key), &mut state)?);
                }
                let loops = match a.loops {
                    Some(l) => self.loops(l, &join(&path, "loop"))?,
                    None => Loops::Forever,
                };
                (loops, phases)
            }
            None => {
                let phase_loops = match a.loops {
                    Some(l) => self.loops(l, &join(&path, "loop"))?,
                    None => Loops::Count(1),
                };
                let events = self.events(&events, &m.key, &path, m.at)?;
                let phase = Phase {
                    name: None,
                    at: m.value.at,
                    loops: phase_loops,
                    sched: None,
                    cpus: None,
                    uclamp: Uclamp::default(),
                    group: None,
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
    ) -> Result<Phase, WorkloadError> {
        let members = self.object(&m.value, path)?;
        let (a, events) = self.split(members, path, Level::Phase)?;
        let loops = match a.loops {
            Some(l) => self.loops(l, &join(path, "loop"))?,
            None => Loops::Count(1),
        };
        let sched = self.sched(&a, state.sched, path)?;
        let cpus = a
            .cpus
            .map(|c| self.cpus(c, &join(path, "cpus")))
            .transpose()?;
        let uclamp = self.uclamp(&a, path)?;
        let group = self.taskgroup(a.taskgroup, path)?;
        if let Some(s) = sched {
            state.sched = s;
        }
        state.uclamp.min = uclamp.min.or(state.uclamp.min);
        state.uclamp.max = uclamp.max.or(state.uclamp.max);
        if let Some(g) = &group {
            state.group.clone_from(g);
        }
        self.check_state(state, m.at, path)?;
        let events = self.events(&events, task, path, m.at)?;
        Ok(Phase {
            name: Some(m.key.clone()),
            at: m.at,
            loops,
            sched,
            cpus,
            uclamp,
            group,
            events,
        })
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
        if s.group != "/" && !s.sched.policy.is_fair() {
            return Err(self.err(
                at,
                path,
                format!(
                    "taskgroup \"{}\" with {}: rt-app supports taskgroups for SCHED_OTHER and SCHED_IDLE only",
                    s.group,
                    s.sched.policy.name()
                ),
            ));
        }
        Ok(())
    }

    fn events(
        &self,
        members: &[EventMember<'_>],
        task: &str,
        path: &str,
        at: Loc,
    ) -> Result<Vec<EventSpec>, WorkloadError> {
        if members.is_empty() {
            return Err(self.err(
                at,
                path,
                "no events (rt-app: a task must have events or it is useless)",
            ));
        }
        members
            .iter()
            .map(|&(kind, m)| {
                Ok(EventSpec {
                    key: m.key.clone(),
                    at: m.at,
                    event: self.event(kind, m, task, &join(path, &m.key))?,
                })
            })
            .collect()
    }

    fn event(
        &self,
        kind: Kind,
        m: &Member,
        task: &str,
        path: &str,
    ) -> Result<Event, WorkloadError> {
        let v = &m.value;
        let name = || -> Result<String, WorkloadError> { Ok(self.string(v, path)?.to_string()) };
        let bytes = || -> Result<u64, WorkloadError> {
            let b = self.int(v, path)?;
            u64::try_from(b).map_err(|_| self.err(v.at, path, format!("negative size: {b} bytes")))
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
            Kind::Mem => Event::Mem { bytes: bytes()? },
            Kind::IoRun => Event::IoRun { bytes: bytes()? },
            Kind::Lock => Event::Lock { mutex: name()? },
            Kind::Unlock => Event::Unlock { mutex: name()? },
            Kind::Signal => Event::Signal { cond: name()? },
            Kind::Broad => Event::Broadcast { cond: name()? },
            Kind::Barrier => Event::Barrier { name: name()? },
            Kind::Resume => Event::Resume { name: name()? },
            Kind::Suspend => {
                // workgen fills an empty suspend with the thread's own name.
                let n = name()?;
                Event::Suspend {
                    name: if n.is_empty() { task.to_string() } else { n },
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
                        "timer period is 0 or missing (a timer needs a period > 0 µs)",
                    ));
                }
                let mode = match fields.get("mode") {
                    None => TimerMode::Relative,
                    Some(p) => match self.string(&p.value, &join(path, "mode"))? {
                        "relative" => TimerMode::Relative,
                        "absolute" => TimerMode::Absolute,
                        s => {
                            return Err(self.err(
                                p.value.at,
                                &join(path, "mode"),
                                format!("unknown timer mode \"{s}\" (relative or absolute)"),
                            ))
                        }
                    },
                };
                Event::Timer {
                    per_thread: name.starts_with("unique"),
                    name,
                    period_ns,
                    mode,
                }
            }
            Kind::Fork => {
                return Err(self.err(m.at, path, "fork events are not modelled by schedmath"))
            }
        })
    }

    /// The members of an event object, restricted to `allowed` keys.
    fn fields<'n>(
        &self,
        v: &'n Node,
        path: &str,
        allowed: &[&str],
    ) -> Result<BTreeMap<&'n str, &'n Member>, WorkloadError> {
        let members = self.object(v, path)?;
        self.no_duplicates(members, path)?;
        let mut out = BTreeMap::new();
        for m in members {
            if !allowed.contains(&m.key.as_str()) {
                return Err(self.err(
                    m.at,
                    &join(path, &m.key),
                    format!("unknown key (this event has {})", allowed.join(", ")),
                ));
            }
            out.insert(m.key.as_str(), m);
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
}

/// The attributes in effect while walking a task's phases in order.
struct State {
    sched: Sched,
    uclamp: Uclamp,
    group: String,
}

/// rt-app's default `priority` for a policy.
fn default_priority(p: Policy) -> i32 {
    if p.is_fair() {
        0
    } else {
        DEFAULT_RT_PRIORITY
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
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
