// SPDX-License-Identifier: GPL-2.0-only
//! Sweeps: every combination of profiles × workloads × platforms × seeds from a sweep
//! file, run on all cores, printed as JSON Lines (one object per run) or a table.
//!
//! A sweep file is TOML (`.toml`) or JSON (`.json`, read as leniently as rt-app files);
//! paths are relative to the sweep file:
//!
//! ```toml
//! profiles = ["mainline", "ou-lone-task"]      # required: profile names
//! platforms = ["../platforms/m1pro-8c.toml"]   # required: platform files
//! workloads = ["busy-plus-4x5pct.toml"]        # required: rt-app JSON or periodic TOML
//! seeds = [0, 1, 2, 3]                         # optional (default [0]); or
//! # seeds = { from = 0, count = 1000 }         #   `count` seeds from `from` on
//! duration_s = 10                              # optional: else each workload's, else 10
//! hz = 250                                     # optional (default 250)
//! ```
//!
//! Run `r` is combination number `r` with platforms outermost, then workloads, profiles
//! and seeds innermost; every output line carries its index, so the output order is the
//! index order whatever thread finished first, and `--jobs 1` prints the same bytes.
//! `--shard I/N` (0-based, `0 <= I < N`: a Slurm array's `$SLURM_ARRAY_TASK_ID` or a
//! Kubernetes Indexed Job's `$JOB_COMPLETION_INDEX` as is) runs the runs `r` with
//! `r % N == I` (round-robin, so every shard gets a similar mix of combinations), and
//! `sweep merge` interleaves the shards' lines back by index: byte for byte what the
//! unsharded sweep prints. Everything is loaded and checked before the first run; a
//! sweep over [`MAX_SWEEP_RUNS`] runs is refused.

use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::platform::Platform;
use crate::sim::{Metrics, SimConfig, SimError};
use crate::study::{cell, simulate_named};
use crate::text::Table;
use crate::workload::json::loc_of_offset;
use crate::workload::Workload;

/// The most runs one sweep may have (all shards together): a million 10 s runs of a
/// small workload are days of CPU time; past it a typo in `seeds.count` is likelier.
pub const MAX_SWEEP_RUNS: u64 = 1_000_000;

/// Runs in flight between two writes: bounds memory, keeps every core busy.
const CHUNK: usize = 1024;

/// The table's columns when `--columns` is not given.
pub const DEFAULT_COLUMNS: &[&str] =
    &["ou_pct", "ou_triggers", "wakeup_latency_us.p99", "energy_j"];

/// Why a sweep cannot run or its parts cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A file cannot be read or written.
    #[error("{file}: {msg}")]
    Io {
        /// The file.
        file: String,
        /// What went wrong.
        msg: String,
    },
    /// Not a sweep file, or a value that does not fit its field (`file:line: field: msg`).
    #[error("{file}:{line}: {field}: {msg}")]
    Invalid {
        /// The sweep file.
        file: String,
        /// 1-based line of the field (0: unknown, e.g. a syntax error without position).
        line: u32,
        /// The field, e.g. `platforms[1]`.
        field: String,
        /// What is wrong.
        msg: String,
    },
    /// A run failed.
    #[error("{file}: run {run} ({what}): {source}")]
    Run {
        /// The sweep file.
        file: String,
        /// The run's index.
        run: u64,
        /// Its combination.
        what: String,
        /// The simulator's error.
        source: Box<SimError>,
    },
    /// A shard output that does not belong with the others.
    #[error("{file}:{line}: {msg}")]
    Merge {
        /// The part file.
        file: String,
        /// 1-based line (0: the file as a whole).
        line: u64,
        /// What is wrong.
        msg: String,
    },
}

/// `--shard I/N`: the `I`-th (0-based) of `N` round-robin slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, `0..count`.
    pub index: u64,
    /// How many slices.
    pub count: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not I/N (e.g. 0/4: the first of 4 shards)"))?;
        let num = |t: &str, what: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}`: {what} `{t}` is not a whole number"))
        };
        let (index, count) = (num(i, "I")?, num(n, "N")?);
        if count == 0 {
            return Err(format!("`{s}`: N must be at least 1"));
        }
        if index >= count {
            return Err(format!(
                "`{s}`: shards are numbered from 0, so I must be below N (0..={})",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

/// `schedmath sweep`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    /// Join shard outputs.
    #[command(subcommand)]
    pub cmd: Option<SweepCmd>,
    /// The sweep file (`.toml` or `.json`).
    #[arg(required = true, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Run only the I-th of N round-robin slices (0-based: I in 0..N).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Worker threads (default: every core); the output does not depend on it.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub table: TableArgs,
}

/// `--table` and `--columns`.
#[derive(Debug, Clone, clap::Args)]
pub struct TableArgs {
    /// Print a table instead of JSON Lines.
    #[arg(long)]
    pub table: bool,
    /// The table's metric columns: dotted paths into the metrics (as in study files;
    /// default ou_pct,ou_triggers,wakeup_latency_us.p99,energy_j).
    #[arg(long, value_name = "PATHS", value_delimiter = ',')]
    pub columns: Vec<String>,
}

/// `schedmath sweep merge`.
#[derive(Debug, clap::Subcommand)]
pub enum SweepCmd {
    /// Join the JSON Lines of `--shard` runs into what the unsharded sweep prints.
    ///
    /// Every run of the sweep must be in exactly one part; parts of another sweep file
    /// are refused.
    ///
    /// Example: schedmath sweep merge part-*.jsonl > sweep.jsonl
    Merge {
        /// The shards' outputs, in any order.
        #[arg(required = true, value_name = "PARTS")]
        parts: Vec<PathBuf>,
        #[command(flatten)]
        table: TableArgs,
    },
}

/// `schedmath sweep` and `schedmath sweep merge`.
pub fn run(args: &SweepArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    match (&args.cmd, &args.file) {
        (Some(SweepCmd::Merge { parts, table }), _) => merge(parts, table, out)?,
        (None, Some(file)) => {
            let sweep = Sweep::load(file)?;
            let shard = args.shard.unwrap_or(Shard { index: 0, count: 1 });
            let mut sink = Sink::new(&args.table, out);
            let pool = match args.jobs {
                Some(n) => rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build()?,
                None => rayon::ThreadPoolBuilder::new().build()?,
            };
            sweep.run(shard, &pool, &mut sink)?;
            sink.finish()?;
        }
        (None, None) => anyhow::bail!("sweep: a sweep file or `merge PARTS...` is needed"),
    }
    Ok(true)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    profiles: Vec<String>,
    platforms: Vec<PathBuf>,
    workloads: Vec<PathBuf>,
    #[serde(default)]
    seeds: Option<Seeds>,
    duration_s: Option<u32>,
    #[serde(default = "default_hz")]
    hz: u32,
}

fn default_hz() -> u32 {
    250
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Seeds {
    List(Vec<u64>),
    Range(SeedRange),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedRange {
    from: u64,
    count: u64,
}

/// A loaded, checked sweep.
pub struct Sweep {
    file: String,
    /// FNV-1a of the file's bytes: the `sweep` key of every line, so `merge` refuses
    /// parts of another sweep.
    id: String,
    platforms: Vec<(String, Platform)>,
    workloads: Vec<(String, Workload)>,
    profiles: Vec<String>,
    seeds: Vec<u64>,
    duration_s: Option<u32>,
    hz: u32,
}

/// One output line; field order is the JSON key order.
#[derive(Serialize)]
struct Line<'a> {
    run: u64,
    runs: u64,
    sweep: &'a str,
    platform: &'a str,
    workload: &'a str,
    profile: &'a str,
    seed: u64,
    metrics: &'a Metrics,
}

/// What `merge` reads of a line (the rest is copied as is).
#[derive(Deserialize)]
struct Head {
    run: u64,
    runs: u64,
    sweep: String,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The 1-based line of every top-level key (`seeds`) and array element (`platforms[1]`).
fn field_lines(text: &str, json: bool) -> BTreeMap<String, u32> {
    use crate::workload::json::{parse, Value as J};
    let mut lines = BTreeMap::new();
    if json {
        if let Ok(root) = parse(text) {
            if let J::Object(members) = root.value {
                for m in members {
                    lines.insert(m.key.clone(), m.at.line);
                    if let J::Array(items) = &m.value.value {
                        for (i, n) in items.iter().enumerate() {
                            lines.insert(format!("{}[{i}]", m.key), n.at.line);
                        }
                    }
                }
            }
        }
    } else if let Ok(root) = toml::de::DeTable::parse(text) {
        for (k, v) in root.get_ref() {
            let key = k.get_ref().to_string();
            lines.insert(key.clone(), loc_of_offset(text, k.span().start).line);
            if let toml::de::DeValue::Array(items) = v.get_ref() {
                for (i, n) in items.iter().enumerate() {
                    let at = loc_of_offset(text, n.span().start).line;
                    lines.insert(format!("{key}[{i}]"), at);
                }
            }
        }
    }
    lines
}

impl Sweep {
    /// Reads `file`, loads every platform and workload, checks every profile name and
    /// every (workload, platform) pair, and the run budget — before anything runs.
    pub fn load(file: &Path) -> Result<Sweep, SweepError> {
        let fname = file.display().to_string();
        let bytes = std::fs::read(file).map_err(|e| SweepError::Io {
            file: fname.clone(),
            msg: e.to_string(),
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let json = file.extension().is_some_and(|e| e == "json");
        let invalid = |line: u32, field: &str, msg: String| SweepError::Invalid {
            file: fname.clone(),
            line,
            field: field.to_string(),
            msg,
        };
        let spec: SweepFile = if json {
            let root = crate::workload::json::parse(&text)
                .map_err(|e| invalid(e.at.line, "(syntax)", e.msg))?;
            serde_json::from_value(to_serde(&root.value))
                .map_err(|e| invalid(0, "(file)", e.to_string()))?
        } else {
            toml::from_str(&text).map_err(|e| {
                let line = e.span().map_or(0, |s| loc_of_offset(&text, s.start).line);
                invalid(line, "(file)", e.message().trim().to_string())
            })?
        };
        let lines = field_lines(&text, json);
        let at = |field: &str| lines.get(field).copied().unwrap_or(0);
        let bad = |field: String, msg: String| invalid(at(&field), &field, msg);
        let dir = file.parent().unwrap_or(Path::new("."));
        for (key, n) in [
            ("profiles", spec.profiles.len()),
            ("platforms", spec.platforms.len()),
            ("workloads", spec.workloads.len()),
        ] {
            if n == 0 {
                return Err(bad(key.into(), "needs at least one entry".into()));
            }
        }
        for (i, p) in spec.profiles.iter().enumerate() {
            schedmath::Profile::from_name(p)
                .map_err(|e| bad(format!("profiles[{i}]"), format!("`{p}`: {e}")))?;
        }
        let seeds: Vec<u64> = match &spec.seeds {
            None => vec![0],
            Some(Seeds::List(l)) if l.is_empty() => {
                return Err(bad("seeds".into(), "needs at least one seed".into()))
            }
            Some(Seeds::List(l)) => l.clone(),
            Some(Seeds::Range(r)) => {
                if r.count == 0 || r.from.checked_add(r.count - 1).is_none() {
                    return Err(bad(
                        "seeds".into(),
                        "`count` must be at least 1 and `from + count - 1` a u64".into(),
                    ));
                }
                budget(&spec, r.count).map_err(|m| bad("seeds".into(), m))?;
                (r.from..r.from + r.count).collect()
            }
        };
        budget(&spec, seeds.len() as u64).map_err(|m| bad("(file)".into(), m))?;
        if spec.duration_s == Some(0) {
            return Err(bad("duration_s".into(), "must be > 0".into()));
        }
        if spec.hz == 0 {
            return Err(bad("hz".into(), "must be > 0".into()));
        }
        let mut platforms = Vec::new();
        for (i, p) in spec.platforms.iter().enumerate() {
            let loaded = Platform::load(&dir.join(p))
                .map_err(|e| bad(format!("platforms[{i}]"), e.to_string()))?;
            platforms.push((p.display().to_string(), loaded));
        }
        let mut workloads = Vec::new();
        for (i, w) in spec.workloads.iter().enumerate() {
            let field = format!("workloads[{i}]");
            let loaded =
                Workload::load(&dir.join(w)).map_err(|e| bad(field.clone(), e.to_string()))?;
            for (name, p) in &platforms {
                loaded
                    .validate(p.nr_cpus())
                    .map_err(|e| bad(field.clone(), format!("on platform `{name}`: {e}")))?;
            }
            crate::sim::tasks_from_workload(&loaded)
                .map_err(|e| bad(field.clone(), e.to_string()))?;
            for line in crate::workload::show::warning_lines(&loaded) {
                eprintln!("{line}");
            }
            workloads.push((w.display().to_string(), loaded));
        }
        Ok(Sweep {
            file: fname,
            id: format!("{:016x}", fnv1a(&bytes)),
            platforms,
            workloads,
            profiles: spec.profiles,
            seeds,
            duration_s: spec.duration_s,
            hz: spec.hz,
        })
    }

    /// Number of runs (all shards).
    pub fn runs(&self) -> u64 {
        // Within MAX_SWEEP_RUNS: checked at load.
        [
            self.platforms.len(),
            self.workloads.len(),
            self.profiles.len(),
            self.seeds.len(),
        ]
        .iter()
        .map(|&n| n as u64)
        .product()
    }

    /// Run `r`'s (platform, workload, profile, seed) indexes: seeds vary fastest.
    fn combination(&self, r: u64) -> (usize, usize, usize, usize) {
        let split = |r: u64, n: usize| ((r % n as u64) as usize, r / n as u64);
        let (s, r) = split(r, self.seeds.len());
        let (p, r) = split(r, self.profiles.len());
        let (w, r) = split(r, self.workloads.len());
        (r as usize, w, p, s)
    }

    /// Simulates run `r`; returns its JSON line (with the newline).
    fn run_one(&self, r: u64) -> Result<String, SweepError> {
        let (pi, wi, prof, si) = self.combination(r);
        let (pname, platform) = &self.platforms[pi];
        let (wname, w) = &self.workloads[wi];
        let profile = &self.profiles[prof];
        let seed = self.seeds[si];
        let cfg = SimConfig::for_workload(w, self.duration_s, self.hz, seed);
        let m = simulate_named(platform, w, profile, &cfg).map_err(|e| SweepError::Run {
            file: self.file.clone(),
            run: r,
            what: format!("{pname} {wname} {profile} seed {seed}"),
            source: Box::new(e),
        })?;
        let line = Line {
            run: r,
            runs: self.runs(),
            sweep: &self.id,
            platform: pname,
            workload: wname,
            profile,
            seed,
            metrics: &m,
        };
        let mut s = serde_json::to_string(&line).map_err(|e| SweepError::Io {
            file: self.file.clone(),
            msg: e.to_string(),
        })?;
        s.push('\n');
        Ok(s)
    }

    /// Runs this shard's runs on `pool`, in chunks, writing each chunk's lines in
    /// index order; the first failing run (by index) stops the sweep.
    fn run(
        &self,
        shard: Shard,
        pool: &rayon::ThreadPool,
        sink: &mut Sink<'_>,
    ) -> Result<(), SweepError> {
        let runs = self.runs();
        let step = usize::try_from(shard.count).unwrap_or(usize::MAX);
        let mine: Vec<u64> = (shard.index..runs).step_by(step).collect();
        let bar = crate::text::progress_bar(mine.len() as u64, "runs", &self.file);
        for chunk in mine.chunks(CHUNK) {
            let lines: Vec<Result<String, SweepError>> = pool.install(|| {
                chunk
                    .par_iter()
                    .map(|&r| {
                        let l = self.run_one(r);
                        bar.inc(1);
                        l
                    })
                    .collect()
            });
            for l in lines {
                sink.line(&l?).map_err(|e| SweepError::Io {
                    file: "(stdout)".into(),
                    msg: e.to_string(),
                })?;
            }
        }
        bar.finish_and_clear();
        Ok(())
    }
}

/// Refuses a sweep of more than [`MAX_SWEEP_RUNS`] runs (`seeds` seeds).
fn budget(spec: &SweepFile, seeds: u64) -> Result<(), String> {
    let runs = [
        spec.platforms.len() as u64,
        spec.workloads.len() as u64,
        spec.profiles.len() as u64,
        seeds,
    ]
    .iter()
    .try_fold(1u64, |a, &n| a.checked_mul(n));
    match runs {
        Some(n) if n <= MAX_SWEEP_RUNS => Ok(()),
        _ => Err(format!(
            "{} platforms × {} workloads × {} profiles × {seeds} seeds is over the limit of \
             {MAX_SWEEP_RUNS} runs (MAX_SWEEP_RUNS); split it into several sweep files",
            spec.platforms.len(),
            spec.workloads.len(),
            spec.profiles.len(),
        )),
    }
}

/// The lenient reader's tree as a `serde_json` value (numbers as written).
fn to_serde(v: &crate::workload::json::Value) -> Value {
    use crate::workload::json::Value as J;
    match v {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        J::Str(s) => Value::String(s.clone()),
        J::Array(a) => Value::Array(a.iter().map(|n| to_serde(&n.value)).collect()),
        J::Object(m) => Value::Object(
            m.iter()
                .map(|m| (m.key.clone(), to_serde(&m.value.value)))
                .collect(),
        ),
    }
}

/// Where lines go: straight out (JSON Lines) or into the table's rows.
struct Sink<'o> {
    out: &'o mut dyn Write,
    columns: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
}

impl<'o> Sink<'o> {
    fn new(t: &TableArgs, out: &'o mut dyn Write) -> Self {
        let columns = t.table.then(|| {
            if t.columns.is_empty() {
                DEFAULT_COLUMNS.iter().map(|c| (*c).to_string()).collect()
            } else {
                t.columns.clone()
            }
        });
        Sink {
            out,
            columns,
            rows: Vec::new(),
        }
    }

    fn line(&mut self, line: &str) -> std::io::Result<()> {
        let Some(cols) = &self.columns else {
            return self.out.write_all(line.as_bytes());
        };
        let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        let text = |k: &str| match &v[k] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let stem = |k: &str| {
            let t = text(k);
            Path::new(&t)
                .file_stem()
                .map_or(t.clone(), |s| s.to_string_lossy().into_owned())
        };
        let mut row = vec![
            text("run"),
            stem("platform"),
            stem("workload"),
            text("profile"),
            text("seed"),
        ];
        row.extend(
            cols.iter()
                .map(|c| cell(crate::study::lookup(&v["metrics"], c).as_ref())),
        );
        self.rows.push(row);
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        let Some(cols) = self.columns else {
            return self.out.flush();
        };
        let mut head = vec!["run", "platform", "workload", "profile", "seed"];
        head.extend(cols.iter().map(String::as_str));
        let width = |k: usize| {
            self.rows
                .iter()
                .map(|r| r[k].chars().count())
                .chain([head[k].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let mut t = Table::new("  ").right(width(0));
        for k in 1..4 {
            t = t.left(width(k));
        }
        for k in 4..head.len() {
            t = t.right(width(k));
        }
        let mut o = String::new();
        t.line(&mut o, &head);
        for r in &self.rows {
            let _ = writeln!(o, "{}", t.row(r).trim_end());
        }
        self.out.write_all(o.as_bytes())?;
        self.out.flush()
    }
}

/// One part being merged: its reader and its next line.
struct Part {
    name: String,
    lines: std::io::Lines<std::io::BufReader<std::fs::File>>,
    lineno: u64,
}

impl Part {
    fn open(path: &Path) -> Result<Part, SweepError> {
        let name = path.display().to_string();
        let f = std::fs::File::open(path).map_err(|e| SweepError::Io {
            file: name.clone(),
            msg: e.to_string(),
        })?;
        Ok(Part {
            name,
            lines: std::io::BufReader::new(f).lines(),
            lineno: 0,
        })
    }

    /// The next non-empty line and its head.
    fn next(&mut self) -> Result<Option<(Head, String)>, SweepError> {
        for l in self.lines.by_ref() {
            self.lineno += 1;
            let l = l.map_err(|e| SweepError::Io {
                file: self.name.clone(),
                msg: e.to_string(),
            })?;
            if l.trim().is_empty() {
                continue;
            }
            let head: Head = serde_json::from_str(&l).map_err(|e| SweepError::Merge {
                file: self.name.clone(),
                line: self.lineno,
                msg: format!("not a sweep output line: {e}"),
            })?;
            return Ok(Some((head, l)));
        }
        Ok(None)
    }

    fn err(&self, msg: String) -> SweepError {
        SweepError::Merge {
            file: self.name.clone(),
            line: self.lineno,
            msg,
        }
    }
}

/// `sweep merge`: a first pass checks that the parts are one sweep's runs, each once and
/// none missing; the second interleaves them by run index (each part is in index order),
/// holding one line per part.
fn merge(parts: &[PathBuf], table: &TableArgs, out: &mut dyn Write) -> Result<(), SweepError> {
    let mut seen: Vec<bool> = Vec::new();
    let mut id: Option<(String, u64)> = None;
    for p in parts {
        let mut part = Part::open(p)?;
        let mut last: Option<u64> = None;
        while let Some((h, _)) = part.next()? {
            match &id {
                None => {
                    if h.runs > MAX_SWEEP_RUNS {
                        return Err(part.err(format!("{} runs is over MAX_SWEEP_RUNS", h.runs)));
                    }
                    seen = vec![false; h.runs as usize];
                    id = Some((h.sweep.clone(), h.runs));
                }
                Some((s, n)) if *s != h.sweep || *n != h.runs => {
                    return Err(part.err(format!(
                        "from sweep {} ({} runs), the first part's is {s} ({n} runs)",
                        h.sweep, h.runs
                    )))
                }
                Some(_) => {}
            }
            if last.is_some_and(|l| h.run <= l) {
                return Err(part.err(format!(
                    "run {} after run {last:?}: not a shard output",
                    h.run
                )));
            }
            last = Some(h.run);
            match seen.get_mut(h.run as usize) {
                None => return Err(part.err(format!("run {} of {} runs", h.run, h.runs))),
                Some(true) => return Err(part.err(format!("run {} is in another part too", h.run))),
                Some(s) => *s = true,
            }
        }
    }
    let missing: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| !**s)
        .map(|(i, _)| i)
        .collect();
    if let Some(first) = missing.first() {
        return Err(SweepError::Merge {
            file: "(parts)".into(),
            line: 0,
            msg: format!(
                "{} run(s) missing, the first run {first}: a shard's output is not among the parts",
                missing.len()
            ),
        });
    }
    let mut open = parts
        .iter()
        .map(|p| Part::open(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut heap = BinaryHeap::new();
    let mut pending: Vec<Option<String>> = vec![None; open.len()];
    for (i, part) in open.iter_mut().enumerate() {
        if let Some((h, l)) = part.next()? {
            heap.push(std::cmp::Reverse((h.run, i)));
            pending[i] = Some(l);
        }
    }
    let mut sink = Sink::new(table, out);
    let io = |e: std::io::Error| SweepError::Io {
        file: "(stdout)".into(),
        msg: e.to_string(),
    };
    while let Some(std::cmp::Reverse((_, i))) = heap.pop() {
        if let Some(mut l) = pending[i].take() {
            l.push('\n');
            sink.line(&l).map_err(io)?;
        }
        if let Some((h, l)) = open[i].next()? {
            heap.push(std::cmp::Reverse((h.run, i)));
            pending[i] = Some(l);
        }
    }
    sink.finish().map_err(io)
}
