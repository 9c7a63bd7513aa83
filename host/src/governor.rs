// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath governor`: replay a utilization trace through schedutil.
//!
//! The trace is one CPU's runqueue signals over time (CSV, see [`Trace::parse`]); each row
//! is one call of the single-CPU update hook (`sugov_update_single_freq`, the path with the
//! busy filter) on a fast-switch policy, and the report shows what the governor decided:
//! raw frequency, table frequency, whether the busy filter held it, whether the rate limit
//! swallowed the update, and the frequency the CPU ran at until the next row. Two profiles
//! can be replayed side by side (`--compare`), e.g. `mainline` against
//! `sugov-busy-without-uclamp`.
//!
//! The policy comes from a [`GovernorPolicy`]: its frequency table, cpuinfo limits, rate
//! limit and the CPU's capacity, filled from a platform file's frequency domain
//! ([`GovernorPolicy::from_platform`]) or given directly.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use schedmath::math::SCHED_CAPACITY_SCALE;
use schedmath::schedutil::{
    get_capacity_ref_freq, map_util_freq, sugov_update_single_freq, SugovCpu, SugovEnv, SugovRq,
    SCHED_CPUFREQ_IOWAIT,
};
use schedmath::Profile;

use crate::limits::MAX_CSV_LINE;
pub use crate::platform::policy::{GovernorPolicy, PolicyError};
use crate::platform::{Platform, PlatformError};
use crate::text::{csv_rows, CsvRow, Table};

/// Policy `n` (frequency domain `n`, from 0) of the platform file at `path`, with its
/// default rate limit.
pub fn platform_policy(path: &Path, n: usize) -> Result<GovernorPolicy, GovernorError> {
    let platform = Platform::load(path)?;
    Ok(GovernorPolicy::from_platform(&platform, n)?)
}

/// Errors of the replay; CSV errors name file, line and column.
#[derive(Debug, thiserror::Error)]
pub enum GovernorError {
    /// The trace file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A row of the trace is unusable.
    #[error("{path}:{line}: {msg}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the column.
        msg: String,
    },
    /// Not a file that can be streamed.
    #[error(transparent)]
    Input(#[from] crate::limits::InputError),
    /// The platform file is unusable.
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// The policy cannot be driven.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

/// The CSV columns, in order; the first two are required.
pub const COLUMNS: [&str; 7] = [
    "time_ns",
    "util_cfs",
    "util_rt",
    "uclamp_min",
    "uclamp_max",
    "idle_calls",
    "iowait",
];

/// One trace row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// 1-based line in the file.
    pub line: usize,
    /// Time of the update (ns).
    pub time_ns: u64,
    /// CFS utilization (also used as the boosted value).
    pub util_cfs: u64,
    /// RT utilization (default 0).
    pub util_rt: u64,
    /// rq uclamp_min (default 0).
    pub uclamp_min: u64,
    /// rq uclamp_max (default 1024).
    pub uclamp_max: u64,
    /// Idle-entry counter; unchanged between rows = the CPU stayed busy. Without the
    /// column it advances every row (the CPU idled between updates).
    pub idle_calls: u64,
    /// The update comes from a task waking after IO (`SCHED_CPUFREQ_IOWAIT`).
    pub iowait: bool,
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Where it came from (for messages).
    pub path: PathBuf,
    /// How many columns the file has (2..=7).
    pub columns: usize,
    /// The rows, in time order.
    pub samples: Vec<Sample>,
}

impl Trace {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Trace, GovernorError> {
        let text = crate::limits::read_text(path)?;
        Self::parse(path, &text)
    }

    /// Parses CSV text: `time_ns,util_cfs[,util_rt,uclamp_min,uclamp_max,idle_calls,iowait]`.
    ///
    /// Blank lines and lines starting with `#` are skipped; a first line starting with
    /// `time_ns` is a header naming the columns (in the order above). Every row has the
    /// same number of columns as the header (or as the first row). Time must not go
    /// backwards. `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Trace, GovernorError> {
        let mut rows = RowParser::new(path);
        let mut samples: Vec<Sample> = Vec::new();
        for CsvRow { line, fields } in csv_rows(text) {
            if let Some(s) = rows.row(line, &fields)? {
                samples.push(s);
            }
        }
        rows.finish(text.lines().count())?;
        Ok(Trace {
            path: path.to_path_buf(),
            columns: rows.columns.unwrap_or(2),
            samples,
        })
    }

    /// Does the trace set uclamp values (so `uclamp_is_used()` is true)?
    fn uclamp_used(&self) -> bool {
        self.columns > 3
    }
}

/// The row rules of [`Trace::parse`], one row at a time (shared by the whole-file parse
/// and the streaming replay of [`run_stream`]).
struct RowParser {
    path: PathBuf,
    /// Columns of the header or the first row.
    columns: Option<usize>,
    /// (time_ns, line) of the previous row.
    prev: Option<(u64, usize)>,
    /// Data rows so far.
    rows: u64,
}

impl RowParser {
    fn new(path: &Path) -> Self {
        RowParser {
            path: path.to_path_buf(),
            columns: None,
            prev: None,
            rows: 0,
        }
    }

    fn err(&self, line: usize, msg: String) -> GovernorError {
        GovernorError::Csv {
            path: self.path.clone(),
            line,
            msg,
        }
    }

    /// One non-blank, non-comment line: `None` for the header.
    fn row(&mut self, line: usize, fields: &[&str]) -> Result<Option<Sample>, GovernorError> {
        let first = fields.first().copied().unwrap_or_default();
        if self.columns.is_none() && self.rows == 0 && first == COLUMNS[0] {
            for (c, (got, want)) in fields.iter().zip(COLUMNS).enumerate() {
                if *got != want {
                    return Err(self.err(
                        line,
                        format!("header column {}: `{got}`, expected `{want}`", c + 1),
                    ));
                }
            }
            if fields.len() < 2 || fields.len() > COLUMNS.len() {
                return Err(self.err(
                    line,
                    format!("header has {} columns, expected 2 to 7", fields.len()),
                ));
            }
            self.columns = Some(fields.len());
            return Ok(None);
        }
        let n = *self
            .columns
            .get_or_insert(fields.len().clamp(2, COLUMNS.len()));
        if fields.len() < n {
            return Err(self.err(
                line,
                format!(
                    "column {} (`{}`) is missing: {} columns, expected {n}",
                    fields.len() + 1,
                    COLUMNS[fields.len()],
                    fields.len()
                ),
            ));
        }
        if fields.len() > n {
            return Err(self.err(line, format!("{} columns, expected {n}", fields.len())));
        }
        let num = |c: usize| -> Result<u64, GovernorError> {
            let text = fields[c];
            text.parse::<u64>().map_err(|_| {
                self.err(
                    line,
                    format!(
                        "column {} (`{}`): `{text}` is not a non-negative integer",
                        c + 1,
                        COLUMNS[c]
                    ),
                )
            })
        };
        let opt = |c: usize, default: u64| if c < n { num(c) } else { Ok(default) };
        let time_ns = num(0)?;
        if let Some((prev, prev_line)) = self.prev {
            if time_ns < prev {
                return Err(self.err(
                    line,
                    format!(
                        "column 1 (`time_ns`): {time_ns} is before the previous row's {prev} (line {prev_line})"
                    ),
                ));
            }
        }
        let iowait = opt(6, 0)?;
        if iowait > 1 {
            return Err(self.err(
                line,
                format!("column 7 (`iowait`): `{iowait}` is not 0 or 1"),
            ));
        }
        let sample = Sample {
            line,
            time_ns,
            util_cfs: num(1)?,
            util_rt: opt(2, 0)?,
            uclamp_min: opt(3, 0)?,
            uclamp_max: opt(4, SCHED_CAPACITY_SCALE)?,
            idle_calls: opt(5, self.rows)?,
            iowait: iowait == 1,
        };
        self.prev = Some((time_ns, line));
        self.rows += 1;
        Ok(Some(sample))
    }

    /// After the last line (`lines` in the file): a trace without rows is an error.
    fn finish(&self, lines: usize) -> Result<(), GovernorError> {
        if self.rows == 0 {
            return Err(self.err(
                lines.max(1),
                "no rows: a utilization trace needs at least one `time_ns,util_cfs` row".into(),
            ));
        }
        Ok(())
    }

    /// Does the trace set uclamp values (so `uclamp_is_used()` is true)?
    fn uclamp_used(&self) -> bool {
        self.columns.unwrap_or(2) > 3
    }
}

/// What the governor did at one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Time of the update (ns).
    pub time_ns: u64,
    /// The row's CFS utilization.
    pub util_cfs: u64,
    /// The rate limit stopped the update (nothing below was computed).
    pub rate_limited: bool,
    /// The performance request `sg_cpu->util` (headroom, clamps and boost included);
    /// a rate-limited row leaves the previous value (the table prints `-`).
    pub perf: u64,
    /// `freq * util / capacity` truncated to 32 bits (kHz); 0 when rate limited.
    pub raw_khz: u32,
    /// The table frequency `get_next_freq()` chose; 0 when rate limited.
    pub resolved_khz: u32,
    /// The busy filter kept the previous, higher frequency.
    pub held: bool,
    /// A new frequency was committed to the driver.
    pub committed: bool,
    /// The frequency the CPU runs at after the row.
    pub cur_khz: u32,
}

/// Time spent at one frequency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Residency {
    /// Frequency (kHz).
    pub khz: u32,
    /// Time at it (ns), from each row to the next.
    pub time_ns: u64,
}

/// A replay of a trace under one profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replay {
    /// The profile's canonical name.
    pub profile: String,
    /// One decision per row.
    pub decisions: Vec<Decision>,
    /// Frequency residency, by frequency ascending (only frequencies that were used).
    pub residency: Vec<Residency>,
}

/// The governor of one policy under one profile, fed one row at a time: memory does not
/// grow with the trace (the residency has one entry per table frequency).
pub struct Replayer<'a> {
    policy: &'a GovernorPolicy,
    profile: Profile,
    sg: schedmath::schedutil::SugovPolicy,
    sg_cpu: SugovCpu,
    env: SugovEnv,
    res: BTreeMap<u32, u64>,
    /// (time_ns, cur_khz) after the previous row.
    last: Option<(u64, u32)>,
}

impl<'a> Replayer<'a> {
    /// A governor just started (`sugov_start()`) on `policy`.
    pub fn new(
        policy: &'a GovernorPolicy,
        profile: &Profile,
        uclamp_used: bool,
    ) -> Result<Self, GovernorError> {
        Ok(Replayer {
            policy,
            profile: *profile,
            sg: policy.sugov()?,
            sg_cpu: SugovCpu::default(),
            env: SugovEnv {
                uclamp_used,
                ..SugovEnv::default()
            },
            res: BTreeMap::new(),
            last: None,
        })
    }

    /// One governor update.
    pub fn step(&mut self, s: &Sample) -> Result<Decision, GovernorError> {
        let policy = self.policy;
        let rq = SugovRq {
            capacity: policy.capacity,
            util_cfs: s.util_cfs,
            util_cfs_boost: s.util_cfs,
            util_rt: s.util_rt,
            uclamp_min: s.uclamp_min,
            uclamp_max: s.uclamp_max,
            idle_calls: s.idle_calls,
            ..SugovRq::default()
        };
        let flags = if s.iowait { SCHED_CPUFREQ_IOWAIT } else { 0 };
        let t = sugov_update_single_freq(
            &mut self.sg,
            &mut self.sg_cpu,
            &rq,
            &self.env,
            &self.profile,
            s.time_ns,
            flags,
        )
        .ok_or_else(|| PolicyError {
            policy: policy.name.clone(),
            msg: "capacity 0".into(),
        })?;
        let raw_khz = if t.should_update {
            let reference = get_capacity_ref_freq(&self.sg.policy, &self.env);
            map_util_freq(self.sg_cpu.util, reference, policy.capacity).unwrap_or(0) as u32
        // as the kernel stores it
        } else {
            0
        };
        let d = Decision {
            time_ns: s.time_ns,
            util_cfs: s.util_cfs,
            rate_limited: !t.should_update,
            perf: self.sg_cpu.util,
            raw_khz,
            resolved_khz: t.next_f_resolved,
            held: t.next_f != t.next_f_resolved,
            committed: t.committed,
            cur_khz: self.sg.policy.cur,
        };
        if let Some((time, khz)) = self.last {
            *self.res.entry(khz).or_default() += d.time_ns.saturating_sub(time);
        }
        self.last = Some((d.time_ns, d.cur_khz));
        Ok(d)
    }

    /// Frequency residency so far, by frequency ascending.
    pub fn residency(&self) -> Vec<Residency> {
        self.res
            .iter()
            .map(|(&khz, &time_ns)| Residency { khz, time_ns })
            .collect()
    }

    /// The profile's canonical name.
    pub fn profile_name(&self) -> String {
        self.profile.to_string()
    }
}

/// Replays `trace` on `policy` under `profile` (HZ=250, frequency invariant).
pub fn replay(
    policy: &GovernorPolicy,
    trace: &Trace,
    profile: &Profile,
) -> Result<Replay, GovernorError> {
    let mut r = Replayer::new(policy, profile, trace.uclamp_used())?;
    let decisions = trace
        .samples
        .iter()
        .map(|s| r.step(s))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Replay {
        profile: r.profile_name(),
        decisions,
        residency: r.residency(),
    })
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "-"
    }
}

fn khz(f: u32) -> String {
    if f == 0 {
        "-".into()
    } else {
        f.to_string()
    }
}

/// Residency rows of several replays over the union of their frequencies:
/// (kHz, [(ms, %)] per replay).
fn residency_rows(replays: &[&[Residency]]) -> Vec<(u32, Vec<String>)> {
    let freqs: std::collections::BTreeSet<u32> = replays
        .iter()
        .flat_map(|r| r.iter().map(|x| x.khz))
        .collect();
    freqs
        .into_iter()
        .map(|f| {
            let cells = replays
                .iter()
                .map(|r| {
                    let total: u128 = r.iter().map(|x| u128::from(x.time_ns)).sum();
                    let t = r.iter().find(|x| x.khz == f).map_or(0, |x| x.time_ns);
                    // Per-mille in integers (rounded), printed as a percentage with one
                    // decimal.
                    let pm = (u128::from(t) * 1000 + total / 2)
                        .checked_div(total)
                        .unwrap_or(0);
                    format!(
                        "{:>9}.{:03} ms {:>3}.{}%",
                        t / 1_000_000,
                        (t % 1_000_000) / 1000,
                        pm / 10,
                        pm % 10
                    )
                })
                .collect();
            (f, cells)
        })
        .collect()
}

/// The report's first line: which policy.
fn policy_line(policy: &GovernorPolicy) -> String {
    format!(
        "policy {}: capacity {}, {} frequencies {}..{} kHz, rate limit {} us\n",
        policy.name,
        policy.capacity,
        policy.freqs_khz.len(),
        policy.cpuinfo_min_freq,
        policy.cpuinfo_max_freq,
        policy.rate_limit_us
    )
}

/// The single-profile table layout.
fn single_table() -> Table {
    Table::new(" ")
        .right(14)
        .rights(2, 5)
        .rights(2, 10)
        .right(5)
        .right(12)
        .right(9)
        .right(10)
}

/// The lines above the single-profile table's rows.
fn single_head(policy: &GovernorPolicy, profile: &str) -> String {
    let mut out = policy_line(policy);
    let _ = writeln!(out, "profile {profile}");
    single_table().line(
        &mut out,
        &[
            "time_ns",
            "util",
            "perf",
            "raw_khz",
            "resolved",
            "held",
            "rate_limited",
            "committed",
            "cur_khz",
        ],
    );
    out
}

/// One row of the single-profile table.
fn single_row(table: &Table, d: &Decision, out: &mut String) {
    let cells = [
        d.time_ns.to_string(),
        d.util_cfs.to_string(),
        if d.rate_limited {
            "-".into()
        } else {
            d.perf.to_string()
        },
        khz(d.raw_khz),
        khz(d.resolved_khz),
        yes(d.held).into(),
        yes(d.rate_limited).into(),
        yes(d.committed).into(),
        d.cur_khz.to_string(),
    ];
    table.line(out, &cells);
}

/// The residency summary closing a report (`sep` between the replays' cells).
fn residency_tail(title: &str, replays: &[&[Residency]], sep: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    for (f, cells) in residency_rows(replays) {
        let _ = writeln!(out, "{f:>10} kHz {}", cells.join(sep));
    }
    out
}

/// The table a person reads: one line per row, then the residency summary.
pub fn render(policy: &GovernorPolicy, replay: &Replay) -> String {
    let mut out = single_head(policy, &replay.profile);
    let table = single_table();
    for d in &replay.decisions {
        single_row(&table, d, &mut out);
    }
    out.push_str(&residency_tail(
        "frequency residency:",
        &[&replay.residency],
        "  ",
    ));
    out
}

/// The side-by-side table layout.
fn compare_table() -> Table {
    // time util | resolved held rl cur (A) | the same (B)
    let side = |t: Table| t.right(10).right(5).right(4).right(10);
    side(side(Table::new(" ").right(14).right(5).then(" | ")).then(" | "))
}

/// The lines above the side-by-side table's rows.
fn compare_head(policy: &GovernorPolicy, a: &str, b: &str) -> String {
    let mut out = policy_line(policy);
    let _ = writeln!(out, "A = {a}  |  B = {b}");
    compare_table().line(
        &mut out,
        &[
            "time_ns",
            "util",
            "A resolved",
            "held",
            "rl",
            "A cur_khz",
            "B resolved",
            "held",
            "rl",
            "B cur_khz",
        ],
    );
    out
}

/// One row of the side-by-side table.
fn compare_row(table: &Table, da: &Decision, db: &Decision, out: &mut String) {
    let side = |d: &Decision| {
        [
            khz(d.resolved_khz),
            yes(d.held).into(),
            yes(d.rate_limited).into(),
            d.cur_khz.to_string(),
        ]
    };
    let cells = [
        &[da.time_ns.to_string(), da.util_cfs.to_string()][..],
        &side(da),
        &side(db),
    ]
    .concat();
    table.line(out, &cells);
}

/// Two replays of the same trace side by side, then both residency summaries.
pub fn render_compare(policy: &GovernorPolicy, a: &Replay, b: &Replay) -> String {
    let mut out = compare_head(policy, &a.profile, &b.profile);
    let table = compare_table();
    for (da, db) in a.decisions.iter().zip(&b.decisions) {
        compare_row(&table, da, db, &mut out);
    }
    out.push_str(&residency_tail(
        "frequency residency (A | B):",
        &[&a.residency, &b.residency],
        "  |  ",
    ));
    out
}

/// Reads a CSV trace one line at a time (at most [`MAX_CSV_LINE`] bytes each), so a
/// trace of any length is replayed in constant memory.
struct CsvStream {
    reader: std::io::BufReader<std::fs::File>,
    rows: RowParser,
    line: usize,
    buf: Vec<u8>,
}

impl CsvStream {
    fn open(path: &Path) -> Result<Self, GovernorError> {
        Ok(CsvStream {
            reader: std::io::BufReader::with_capacity(1 << 16, crate::limits::open_regular(path)?),
            rows: RowParser::new(path),
            line: 0,
            buf: Vec::new(),
        })
    }

    /// The next data row; `None` at the end (an error when there was none).
    fn next(&mut self) -> Result<Option<Sample>, GovernorError> {
        use std::io::{BufRead, Read};
        loop {
            self.buf.clear();
            let n = (&mut self.reader)
                .take(MAX_CSV_LINE as u64 + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(|source| GovernorError::Io {
                    path: self.rows.path.clone(),
                    source,
                })?;
            if n == 0 {
                self.rows.finish(self.line)?;
                return Ok(None);
            }
            self.line += 1;
            if self.buf.len() > MAX_CSV_LINE && self.buf.last() != Some(&b'\n') {
                return Err(self.rows.err(
                    self.line,
                    crate::limits::beyond(
                        "the line's length",
                        "MAX_CSV_LINE",
                        format!("{MAX_CSV_LINE} bytes"),
                    ),
                ));
            }
            let text = std::str::from_utf8(&self.buf).map_err(|e| {
                self.rows.err(
                    self.line,
                    format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
                )
            })?;
            let l = text.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            if let Some(s) = self.rows.row(self.line, &fields)? {
                return Ok(Some(s));
            }
        }
    }
}

/// `schedmath governor`: replays the CSV at `path` under each of `profiles` (one or two)
/// and writes the table or the JSON (`{"policy", "replays"}`) as it goes — the same
/// bytes as [`render`] / [`render_compare`] / the JSON of [`replay`], in memory that does
/// not grow with the trace.
pub fn run_stream(
    policy: &GovernorPolicy,
    path: &Path,
    profiles: &[Profile],
    json: bool,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    if json {
        return json_stream(policy, path, profiles, out);
    }
    let mut csv = CsvStream::open(path)?;
    let mut reps: Vec<Replayer<'_>> = Vec::new();
    let (single, pair) = (single_table(), compare_table());
    let mut line = String::new();
    while let Some(s) = csv.next()? {
        if reps.is_empty() {
            for p in profiles {
                reps.push(Replayer::new(policy, p, csv.rows.uclamp_used())?);
            }
            let names: Vec<String> = reps.iter().map(Replayer::profile_name).collect();
            let head = match names.as_slice() {
                [a] => single_head(policy, a),
                [a, b] => compare_head(policy, a, b),
                _ => anyhow::bail!("one or two profiles"),
            };
            out.write_all(head.as_bytes())?;
        }
        let d: Vec<Decision> = reps
            .iter_mut()
            .map(|r| r.step(&s))
            .collect::<Result<_, _>>()?;
        line.clear();
        match d.as_slice() {
            [a] => single_row(&single, a, &mut line),
            [a, b] => compare_row(&pair, a, b, &mut line),
            _ => {}
        }
        out.write_all(line.as_bytes())?;
    }
    let res: Vec<Vec<Residency>> = reps.iter().map(Replayer::residency).collect();
    let res: Vec<&[Residency]> = res.iter().map(Vec::as_slice).collect();
    let tail = if res.len() == 1 {
        residency_tail("frequency residency:", &res, "  ")
    } else {
        residency_tail("frequency residency (A | B):", &res, "  |  ")
    };
    out.write_all(tail.as_bytes())?;
    Ok(())
}

/// `value` as the `json!` macro's pretty JSON (keys sorted, as `serde_json::Map` keeps
/// them), every line after the first indented by `indent`.
fn pretty_at(value: &impl Serialize, indent: &str) -> anyhow::Result<String> {
    let v = serde_json::to_value(value)?;
    Ok(serde_json::to_string_pretty(&v)?.replace('\n', &format!("\n{indent}")))
}

/// The `--json` object written as `serde_json::to_writer_pretty(json!({"policy",
/// "replays"}))` would (keys sorted), one pass over the file per profile.
fn json_stream(
    policy: &GovernorPolicy,
    path: &Path,
    profiles: &[Profile],
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    write!(
        out,
        "{{\n  \"policy\": {},\n  \"replays\": [",
        serde_json::to_string(&policy.name)?
    )?;
    for (i, p) in profiles.iter().enumerate() {
        let mut csv = CsvStream::open(path)?;
        let mut rep: Option<Replayer<'_>> = None;
        write!(
            out,
            "{}\n    {{\n      \"decisions\": [",
            if i > 0 { "," } else { "" }
        )?;
        while let Some(s) = csv.next()? {
            let first = rep.is_none();
            let r = match &mut rep {
                Some(r) => r,
                None => rep.insert(Replayer::new(policy, p, csv.rows.uclamp_used())?),
            };
            let d = r.step(&s)?;
            write!(
                out,
                "{}\n        {}",
                if first { "" } else { "," },
                pretty_at(&d, "        ")?
            )?;
        }
        let res = rep.as_ref().map(Replayer::residency).unwrap_or_default();
        write!(
            out,
            "\n      ],\n      \"profile\": {},\n      \"residency\": {}\n    }}",
            serde_json::to_string(&p.to_string())?,
            pretty_at(&res, "      ")?
        )?;
    }
    write!(out, "\n  ]\n}}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Trace, GovernorError> {
        Trace::parse(Path::new("t.csv"), text)
    }

    fn msg(text: &str) -> String {
        match parse(text) {
            Err(e) => e.to_string(),
            Ok(t) => panic!("parsed: {t:?}"),
        }
    }

    #[test]
    fn missing_column_names_file_line_and_column() {
        assert_eq!(
            msg("time_ns,util_cfs,util_rt\n0,100,0\n4000000,200\n"),
            "t.csv:3: column 3 (`util_rt`) is missing: 2 columns, expected 3"
        );
        assert_eq!(
            msg("# trace\n0\n"),
            "t.csv:2: column 2 (`util_cfs`) is missing: 1 columns, expected 2"
        );
    }

    #[test]
    fn non_number_names_the_column() {
        assert_eq!(
            msg("0,100\n4000000,lots\n"),
            "t.csv:2: column 2 (`util_cfs`): `lots` is not a non-negative integer"
        );
        assert_eq!(
            msg("0,100,0,0,400,1,2\n"),
            "t.csv:1: column 7 (`iowait`): `2` is not 0 or 1"
        );
    }

    #[test]
    fn time_going_backwards_is_an_error_naming_both_lines() {
        assert_eq!(
            msg("0,100\n\n8000000,100\n4000000,100\n"),
            "t.csv:4: column 1 (`time_ns`): 4000000 is before the previous row's 8000000 (line 3)"
        );
    }

    #[test]
    fn short_rows_take_defaults_and_idle_calls_advances() {
        let t = parse("0,100\n4000000,200\n").unwrap();
        assert_eq!(t.samples[1].uclamp_max, 1024);
        assert_eq!((t.samples[0].idle_calls, t.samples[1].idle_calls), (0, 1));
        assert!(!t.uclamp_used());
    }

    /// A72-like policy, rate limit 1 ms, capacity 1024.
    fn a72() -> GovernorPolicy {
        GovernorPolicy::from_table(
            "a72",
            &[
                408000, 600000, 816000, 1008000, 1200000, 1416000, 1608000, 1800000,
            ],
            1000,
            1024,
        )
    }

    #[test]
    fn capped_busy_task_settles_at_the_cap_on_mainline_and_stays_high_before_the_fix() {
        // Busy at util 1024 (the CPU never idles: idle_calls constant), capped at 400 from
        // 20 ms on.
        let mut csv = String::from("time_ns,util_cfs,util_rt,uclamp_min,uclamp_max,idle_calls\n");
        for i in 0..10u64 {
            let cap = if i < 5 { 1024 } else { 400 };
            let _ = writeln!(csv, "{},1024,0,0,{cap},5", i * 4_000_000);
        }
        let t = parse(&csv).unwrap();
        let main = replay(&a72(), &t, &Profile::MAINLINE).unwrap();
        let old = replay(
            &a72(),
            &t,
            &Profile::from_name("sugov-busy-without-uclamp").unwrap(),
        )
        .unwrap();
        // The cap bounds the request after the headroom: perf 400 -> 1800000 * 400 / 1024
        // = 703125 -> 816000 (the row at time 0 is rate limited: sugov_start() zeroes
        // last_freq_update_time).
        assert!(main.decisions[0].rate_limited);
        assert_eq!(main.decisions[9].cur_khz, 816000);
        assert_eq!(
            (main.decisions[5].perf, main.decisions[5].raw_khz),
            (400, 703125)
        );
        assert_eq!(old.decisions[9].cur_khz, 1800000);
        assert!(old.decisions[5].held);
        assert_eq!(
            main.residency,
            vec![
                Residency {
                    khz: 408000,
                    time_ns: 4_000_000
                },
                Residency {
                    khz: 816000,
                    time_ns: 16_000_000
                },
                Residency {
                    khz: 1800000,
                    time_ns: 16_000_000
                }
            ]
        );
    }

    #[test]
    fn rate_limited_rows_are_reported_as_such() {
        // Time 0 is within 1 ms of sugov_start()'s last_freq_update_time = 0.
        let t = parse("0,100\n1000000,100\n1500000,900\n2000000,900\n").unwrap();
        let r = replay(&a72(), &t, &Profile::MAINLINE).unwrap();
        let limited: Vec<bool> = r.decisions.iter().map(|d| d.rate_limited).collect();
        assert_eq!(limited, [true, false, true, false]);
        assert_eq!(r.decisions[2].resolved_khz, 0);
        assert_eq!(r.decisions[2].cur_khz, 408000);
        assert_eq!(r.decisions[3].cur_khz, 1800000);
    }

    #[test]
    fn the_stream_writes_the_bytes_of_the_in_memory_replay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.csv");
        let mut csv = String::from("time_ns,util_cfs,util_rt,uclamp_min,uclamp_max,idle_calls\n");
        for i in 0..40u64 {
            let _ = writeln!(
                csv,
                "{},{},0,0,{},{}",
                i * 1_500_000,
                (i * 97) % 1024,
                400 + i,
                i / 3
            );
        }
        std::fs::write(&path, &csv).unwrap();
        let t = Trace::parse(&path, &csv).unwrap();
        let (a, b) = (
            Profile::MAINLINE,
            Profile::from_name("sugov-busy-without-uclamp").unwrap(),
        );
        let (ra, rb) = (
            replay(&a72(), &t, &a).unwrap(),
            replay(&a72(), &t, &b).unwrap(),
        );
        let stream = |profiles: &[Profile], json: bool| {
            let mut out = Vec::new();
            run_stream(&a72(), &path, profiles, json, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(stream(&[a], false), render(&a72(), &ra));
        assert_eq!(stream(&[a, b], false), render_compare(&a72(), &ra, &rb));
        let json = |r: &[&Replay]| {
            serde_json::to_string_pretty(&serde_json::json!({ "policy": "a72", "replays": r }))
                .unwrap()
        };
        assert_eq!(stream(&[a], true), json(&[&ra]));
        assert_eq!(stream(&[a, b], true), json(&[&ra, &rb]));
    }

    #[test]
    fn an_empty_trace_is_an_error() {
        assert_eq!(
            msg("# nothing\n\n"),
            "t.csv:2: no rows: a utilization trace needs at least one `time_ns,util_cfs` row"
        );
        assert_eq!(
            msg("time_ns,util_cfs\n"),
            "t.csv:1: no rows: a utilization trace needs at least one `time_ns,util_cfs` row"
        );
    }
}
