// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath replay TRACE`: a real (or our own) trace → the core's PELT and util_est at
//! the kernel's update points → error against the kernel's recorded values, or what-if
//! under another profile.
//!
//! Two ways to find the update points:
//! * [`probe`]: the lab probe recorded every call of the PELT update functions (arguments,
//!   `sched_avg` before and after): the core replays each call; this must be exact.
//! * [`infer`] (`--infer`, or when the trace has no probe records): the timeline is rebuilt
//!   from sched_switch / sched_wakeup / sched_migrate_task and the tick, and the signals are
//!   updated where the kernel would; the kernel's own values (probe records or LISA's
//!   `sched_pelt_*` events) are only the answer key.
//!
//! One pass over the trace, memory bounded by the number of tasks and CPUs.

pub mod computed;
pub mod infer;
pub mod probe;
pub mod stats;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::Context;
use schedmath::profile::{Profile, UtilEstVersion};

use crate::trace::event::{Event, PeltCall, PeltEntity};
use crate::trace::report::{ReportReader, SkipReason};
use stats::{round3, EntityStats, FIELDS};

/// Which signal an update belongs to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntityKey {
    /// A CPU's cfs_rq of one cgroup (`/` = the CPU's root cfs_rq).
    CfsRq(u32, String),
    /// A task group's sched_entity on a CPU (the group's path).
    GroupSe(u32, String),
    /// A task's sched_entity.
    Task(i32),
}

impl EntityKey {
    /// The entity a probe call updates.
    pub fn of_call(c: &PeltCall<'_>) -> EntityKey {
        match c.entity {
            PeltEntity::CfsRq => EntityKey::CfsRq(c.cpu, c.path.to_string()),
            PeltEntity::Group => EntityKey::GroupSe(c.cpu, c.path.to_string()),
            PeltEntity::Task => EntityKey::Task(c.pid.unwrap_or(-1)),
        }
    }

    /// `pid 1234 rt-app`, `cpu1 /`, `cpu1 se /lab/bg`.
    pub fn name(&self, comm: Option<&str>) -> String {
        match self {
            EntityKey::CfsRq(cpu, p) => format!("cpu{cpu} {p}"),
            EntityKey::GroupSe(cpu, p) => format!("cpu{cpu} se {p}"),
            EntityKey::Task(pid) => match comm {
                Some(c) if !c.is_empty() => format!("pid {pid} {c}"),
                _ => format!("pid {pid}"),
            },
        }
    }
}

/// `schedmath replay` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The `trace-cmd report` text (or `.gz` of it), or the project's own trace text.
    pub trace: PathBuf,
    /// What-if: replay the same timeline under this profile (e.g. `pelt-hl8`); the
    /// numbers are then the differences from the kernel's values. Default: the traced
    /// kernel's own behaviour (`util-est-pre-v6.9` before Linux 6.9).
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,
    /// The traced kernel's version (default: a `6.1.0-28`-like component of the path).
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// Rebuild the update points from sched events and ticks (probe records, if any, are
    /// only the answer key).
    #[arg(long)]
    pub infer: bool,
    /// Print `{"trace", "kernel", "entities": [...], "totals"}` instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Skipped lines of one reason: (reason, count, first (line, detail)).
pub type Skip = (SkipReason, u64, Option<(u64, String)>);

/// The result of a replay.
#[derive(Debug, Clone)]
pub struct Report {
    /// The trace's path as given.
    pub trace: String,
    /// The kernel version, if known.
    pub kernel: Option<String>,
    /// The profile replayed.
    pub profile: Profile,
    /// Whether the profile differs from the traced kernel's behaviour.
    pub what_if: bool,
    /// `probe` (per-call records) or `inferred`.
    pub mode: &'static str,
    /// Per entity.
    pub entities: Vec<EntityStats>,
    /// Skipped lines per reason: (reason, count, first location).
    pub skipped: Vec<Skip>,
    /// Events read.
    pub events: u64,
    /// Frequency requests (what-if and kernel): per CPU (cpu, kernel mean perf, ours).
    pub perf: Vec<(u32, f64, f64)>,
    /// A trace without the kernel's values: what the replay computed per entity (and,
    /// for a what-if, under the traced kernel's profile too); empty otherwise.
    pub computed: Vec<computed::Computed>,
}

/// The kernel version in a path component like `6.1.0-28` or `6.12.38` (the lab's
/// `fixtures/lab/<kernel>/` layout).
pub fn kernel_from_path(p: &Path) -> Option<String> {
    p.components().rev().find_map(|c| {
        let s = c.as_os_str().to_str()?;
        let mut it = s.split(['.', '-', '+']);
        let major: u32 = it.next()?.parse().ok()?;
        let minor: u32 = it.next()?.parse().ok()?;
        (major >= 2 && minor < 100 && s.contains('.')).then(|| s.to_string())
    })
}

/// (major, minor) of a version string.
fn major_minor(v: &str) -> Option<(u32, u32)> {
    let mut it = v.split(['.', '-', '+']);
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The traced kernel's own behaviour: util_est before v6.9 had the old layout.
pub fn kernel_profile(kernel: Option<&str>) -> Profile {
    let mut p = Profile::MAINLINE;
    if kernel.and_then(major_minor).is_some_and(|v| v < (6, 9)) {
        p.util_est = UtilEstVersion::PreV6_9;
    }
    p
}

/// Opens a trace, decompressing gzip (by its magic bytes).
pub fn open(path: &Path) -> anyhow::Result<Box<dyn BufRead>> {
    let f = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    let mut r = BufReader::with_capacity(1 << 16, f);
    let magic = r
        .fill_buf()
        .with_context(|| format!("{}", path.display()))?;
    if magic.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::bufread::MultiGzDecoder::new(r);
        return Ok(Box::new(BufReader::with_capacity(1 << 16, gz)));
    }
    Ok(Box::new(r))
}

/// The capture's `meta.json` next to the trace, parsed (its path for messages); `None`
/// when there is none. Bounded and refusing devices/FIFOs like every other input file.
pub fn read_meta(trace: &Path) -> anyhow::Result<Option<(PathBuf, serde_json::Value)>> {
    let Some(meta) = trace.parent().map(|d| d.join("meta.json")) else {
        return Ok(None);
    };
    if !meta.exists() {
        return Ok(None);
    }
    let text = crate::limits::read_text(&meta)?;
    let v = serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", meta.display()))?;
    Ok(Some((meta, v)))
}

/// Debug aid: the names `SCHEDMATH_REPLAY_EXPLAIN` lists, comma-separated (`cpu0 /`,
/// `pid N`, `cpu1 se /fg`, `delayed`, `newidle`), read once: the replay asks at every
/// answer-key record. Empty when unset.
pub(crate) fn explain_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        std::env::var("SCHEDMATH_REPLAY_EXPLAIN")
            .map(|v| v.split(',').map(|w| w.trim().to_string()).collect())
            .unwrap_or_default()
    })
}

/// Whether `SCHEDMATH_REPLAY_EXPLAIN` is set at all.
pub(crate) fn explaining() -> bool {
    !explain_names().is_empty()
}

/// Whether `SCHEDMATH_REPLAY_EXPLAIN` names `name`.
pub(crate) fn explains(name: &str) -> bool {
    explain_names().iter().any(|w| w == name)
}

/// CONFIG_HZ assumed when the trace has no `meta.json`: Debian's amd64 kernels' 250.
pub const DEFAULT_HZ: u32 = 250;

/// Replays a trace file.
pub fn run(args: &ReplayArgs) -> anyhow::Result<Report> {
    let kernel = args
        .kernel
        .clone()
        .or_else(|| kernel_from_path(&args.trace));
    let base = kernel_profile(kernel.as_deref());
    let profile = match &args.profile {
        Some(name) => Profile::from_name(name).map_err(|e| anyhow::anyhow!("--profile: {e}"))?,
        None => base,
    };
    let what_if = profile != base;
    let name = args.trace.display().to_string();
    // The inferred replay's clock offset needs a first pass over the whole trace.
    let offset = if args.infer {
        let o = infer::clock_offset(|| open(&args.trace), &name)?;
        if explaining() {
            eprintln!("clock offsets: {o:?}");
        }
        o
    } else {
        None
    };
    let groups = infer::shares_from_meta(&args.trace)?;
    let meta = infer::kernel_from_meta(&args.trace)?;
    let pass =
        |profile: Profile, what_if: bool, offset: Option<infer::ClockOffsets>, unkeyed: bool| {
            // The inferred replay reads the trace a second time a little ahead of itself.
            let ahead = if args.infer || unkeyed {
                Some(open(&args.trace)?)
            } else {
                None
            };
            let infer = args.infer || unkeyed;
            let (input, kernel) = (open(&args.trace)?, kernel.clone());
            let keys = Keys { offset, unkeyed };
            replay_with(
                input, &name, kernel, profile, what_if, infer, keys, &groups, meta, ahead,
            )
        };
    let r = pass(profile, what_if, offset, false)?;
    if r.totals().0 > 0 || r.mode != "inferred" {
        return Ok(r);
    }
    // Nothing to compare with: the numbers the replay computes are the answer (under the
    // traced kernel's profile beside a what-if one).
    let mut r = pass(profile, what_if, None, true)?;
    if what_if {
        let k = pass(base, false, None, true)?;
        r.computed = computed::pair(r.computed, k.computed);
    }
    Ok(r)
}

/// How the inferred replay finds the rq clock and the starting states.
#[derive(Clone, Copy, Debug, Default)]
pub struct Keys {
    /// The trace-clock → rq-clock offset (from [`infer::clock_offset`]; `None`: each
    /// CPU's first answer-key record).
    pub offset: Option<infer::ClockOffsets>,
    /// The trace has no answer key ([`infer::InferReplay::set_unkeyed`]).
    pub unkeyed: bool,
}

/// Replays a trace read from `input` (`name` for messages).
pub fn replay<R: Read>(
    input: R,
    name: &str,
    kernel: Option<String>,
    profile: Profile,
    what_if: bool,
    force_infer: bool,
) -> anyhow::Result<Report> {
    replay_with(
        input,
        name,
        kernel,
        profile,
        what_if,
        force_infer,
        Keys::default(),
        &Default::default(),
        infer::KernelMeta::default(),
        None,
    )
}

/// [`replay`] with the rq clock and starting states of the inferred replay ([`Keys`]) and the task
/// groups' `cpu.weight` (from [`infer::shares_from_meta`]) and the guest's CPU count and HZ
/// (from [`infer::kernel_from_meta`]; without them the header's `cpus=N` and
/// [`DEFAULT_HZ`]), and a second reader of the same trace for the look-ahead (`ahead`).
#[allow(clippy::too_many_arguments)]
pub fn replay_with<R: Read>(
    input: R,
    name: &str,
    kernel: Option<String>,
    profile: Profile,
    what_if: bool,
    force_infer: bool,
    keys: Keys,
    group_weights: &std::collections::BTreeMap<String, u64>,
    meta: infer::KernelMeta,
    ahead: Option<Box<dyn BufRead>>,
) -> anyhow::Result<Report> {
    let mut reader = ReportReader::new(BufReader::with_capacity(1 << 16, input), name);
    let mut pr = probe::ProbeReplay::new(profile, what_if, false);
    let mut inf = infer::InferReplay::new(profile, keys.offset);
    if keys.unkeyed {
        inf.set_unkeyed();
    }
    inf.set_kernel(kernel.as_deref().and_then(major_minor));
    inf.set_group_weights(group_weights);
    if let Some(a) = ahead {
        inf.set_lookahead(a, name);
    }
    let hz = meta.hz.unwrap_or(DEFAULT_HZ);
    let mut eevdf_set = false;
    if let Some(cpus) = meta.cpus {
        inf.set_eevdf(cpus, hz);
        eevdf_set = true;
    }
    let mut probe_calls = 0u64;
    let mut events = 0u64;
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(e.into()),
        };
        events += 1;
        let (line, ts, cpu) = (rec.line, rec.ts_ns, rec.cpu);
        inf.current(cpu, rec.pid, rec.comm);
        inf.at_line(line);
        let skip = match Event::parse(&rec) {
            Err(bad) => Some((SkipReason::BadFields, format!("{}: {}", rec.event, bad.0))),
            Ok(Event::Other) => Some((SkipReason::UnknownEvent, rec.event.to_string())),
            Ok(ev) => {
                let mut skip = None;
                match &ev {
                    Event::PeltCall(c) => {
                        probe_calls += 1;
                        if let Err(e) = pr.call(c) {
                            skip = Some((SkipReason::BadFields, e));
                        }
                    }
                    Event::UtilEstSe { pid, value, .. } => {
                        pr.set_util_est_events();
                        pr.util_est_event(*pid, *value);
                    }
                    _ => {}
                }
                if let Err(e) = inf.event(ts, cpu, &ev) {
                    skip = Some((SkipReason::Unplaced, e));
                }
                skip
            }
        };
        if let Some((reason, detail)) = skip {
            reader.skip(reason, line, detail);
        }
        if !eevdf_set {
            // The header was read with the first record.
            inf.set_eevdf(reader.cpus().unwrap_or(1), hz);
            eevdf_set = true;
        }
    }
    if let Some(d) = inf.decisions() {
        if explaining() {
            eprintln!("delayed dequeue decisions: {d:?}");
        }
    }
    let infer = force_infer || probe_calls == 0;
    let computed = if keys.unkeyed {
        inf.computed()
    } else {
        Vec::new()
    };
    let (entities, perf) = if infer {
        inf.finish()
    } else {
        (pr.into_stats(), Vec::new())
    };
    let skipped = reader
        .skipped()
        .filter(|(_, s)| s.count > 0)
        .map(|(k, s)| (k, s.count, s.examples.first().cloned()))
        .collect();
    Ok(Report {
        trace: name.to_string(),
        kernel,
        profile,
        what_if,
        mode: if infer { "inferred" } else { "probe" },
        entities,
        skipped,
        events,
        perf,
        computed,
    })
}

impl Report {
    /// (updates, exact) over all entities.
    pub fn totals(&self) -> (u64, u64) {
        self.entities
            .iter()
            .fold((0, 0), |(u, e), s| (u + s.updates, e + s.exact))
    }

    /// Issue 12's JSON: `{"trace", "kernel", "entities", "totals": {"updates", "exact"}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let (updates, exact) = self.totals();
        let mut v = serde_json::json!({
            "trace": self.trace,
            "kernel": self.kernel,
            "entities": self.entities.iter().map(|e| e.to_json()).collect::<Vec<_>>(),
            "totals": {"updates": updates, "exact": exact},
        });
        if !self.computed.is_empty() {
            v["computed"] = self.computed.iter().map(|c| c.to_json()).collect();
        }
        v
    }

    /// The table for people.
    pub fn render(&self) -> String {
        if !self.computed.is_empty() {
            return self.render_computed();
        }
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "replay {} (kernel {}, profile {}{}, {} update points, {} events)",
            self.trace,
            self.kernel.as_deref().unwrap_or("unknown"),
            self.profile,
            if self.what_if {
                ": what-if, errors are what-if minus kernel"
            } else {
                ""
            },
            self.mode,
            self.events
        );
        let w = self
            .entities
            .iter()
            .map(|e| e.entity.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            s,
            "{:w$}  {:>8} {:>8} {:>8}  max |err| util/load/runnable/util_est   mean |err| util/load/runnable/util_est",
            "entity", "updates", "exact", "exact %"
        );
        let cell = |e: &EntityStats, i: usize, mean: bool| {
            let f = &e.err[i];
            if f.n == 0 {
                "-".to_string()
            } else if mean {
                format!("{:.3}", round3(f.mean()))
            } else {
                f.max.to_string()
            }
        };
        for e in &self.entities {
            let pct = if e.updates == 0 {
                0.0
            } else {
                100.0 * e.exact as f64 / e.updates as f64
            };
            let maxes: Vec<String> = (0..FIELDS.len()).map(|i| cell(e, i, false)).collect();
            let means: Vec<String> = (0..FIELDS.len()).map(|i| cell(e, i, true)).collect();
            let _ = writeln!(
                s,
                "{:w$}  {:>8} {:>8} {:>7.2}%  {:<40} {}{}",
                e.entity,
                e.updates,
                e.exact,
                pct,
                maxes.join("/"),
                means.join("/"),
                if e.restarts > 0 {
                    format!("  ({} restarts)", e.restarts)
                } else {
                    String::new()
                }
            );
        }
        let (u, x) = self.totals();
        let _ = writeln!(
            s,
            "{:w$}  {:>8} {:>8} {:>7.2}%",
            "total",
            u,
            x,
            if u == 0 {
                0.0
            } else {
                100.0 * x as f64 / u as f64
            }
        );
        for (cpu, k, o) in &self.perf {
            let _ = writeln!(
                s,
                "cpu{cpu}: mean frequency request {k:.1} % of max (kernel's signals) vs {o:.1} % ({})",
                self.profile
            );
        }
        self.render_skipped(&mut s);
        s
    }

    /// The table of a trace without the kernel's values: what the replay computed.
    fn render_computed(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "replay {} (kernel {}, profile {}, inferred update points, {} events): the trace has no kernel values to compare with (no probe records, no LISA sched_pelt_* events), so these are the replay's own; `*` = state before the trace taken as zero",
            self.trace,
            self.kernel.as_deref().unwrap_or("unknown"),
            self.profile,
            self.events
        );
        let w = self
            .computed
            .iter()
            .map(|c| c.entity.len() + 1)
            .max()
            .unwrap_or(6)
            .max(6);
        let what_if = self.computed.iter().any(|c| c.kernel.is_some());
        let _ = write!(
            s,
            "{:w$}  {:>8} {:>9} {:>8}  end util/load/runnable/util_est",
            "entity", "updates", "util mean", "util max"
        );
        if what_if {
            let _ = write!(s, "   traced kernel's profile: util mean / max / end");
        }
        s.push('\n');
        for c in &self.computed {
            let g = &c.signal;
            let ue = if c.task {
                schedmath::util_est::_task_util_est(&g.end).to_string()
            } else {
                "-".to_string()
            };
            let name = format!("{}{}", c.entity, if g.from_zero { "*" } else { "" });
            let end = format!(
                "{}/{}/{}/{ue}",
                g.end.util_avg, g.end.load_avg, g.end.runnable_avg
            );
            let mut line = format!(
                "{name:w$}  {:>8} {:>9.1} {:>8}  {end:<32}",
                g.updates,
                g.util_mean(),
                g.util_max
            );
            if let Some(k) = &c.kernel {
                let _ = write!(
                    line,
                    "   {:.1} / {} / {}",
                    k.util_mean(),
                    k.util_max,
                    k.end.util_avg
                );
            }
            let _ = writeln!(s, "{}", line.trim_end());
        }
        self.render_skipped(&mut s);
        s
    }

    /// One line per skip reason: its count and first location.
    fn render_skipped(&self, s: &mut String) {
        use std::fmt::Write;
        for (reason, n, first) in &self.skipped {
            let at = first
                .as_ref()
                .map(|(l, d)| format!(", first at {}:{l} ({d})", self.trace))
                .unwrap_or_default();
            let _ = writeln!(s, "skipped {n} × {}{at}", reason.name());
        }
    }
}
