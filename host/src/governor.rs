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
        let text = std::fs::read_to_string(path).map_err(|source| GovernorError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses CSV text: `time_ns,util_cfs[,util_rt,uclamp_min,uclamp_max,idle_calls,iowait]`.
    ///
    /// Blank lines and lines starting with `#` are skipped; a first line starting with
    /// `time_ns` is a header naming the columns (in the order above). Every row has the
    /// same number of columns as the header (or as the first row). Time must not go
    /// backwards. `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Trace, GovernorError> {
        let err = |line: usize, msg: String| GovernorError::Csv {
            path: path.to_path_buf(),
            line,
            msg,
        };
        let mut columns: Option<usize> = None;
        let mut samples: Vec<Sample> = Vec::new();
        for CsvRow { line, fields } in csv_rows(text) {
            if columns.is_none() && samples.is_empty() && fields[0] == COLUMNS[0] {
                for (c, (got, want)) in fields.iter().zip(COLUMNS).enumerate() {
                    if *got != want {
                        return Err(err(
                            line,
                            format!("header column {}: `{got}`, expected `{want}`", c + 1),
                        ));
                    }
                }
                if fields.len() < 2 || fields.len() > COLUMNS.len() {
                    return Err(err(
                        line,
                        format!("header has {} columns, expected 2 to 7", fields.len()),
                    ));
                }
                columns = Some(fields.len());
                continue;
            }
            let n = *columns.get_or_insert(fields.len().clamp(2, COLUMNS.len()));
            if fields.len() < n {
                return Err(err(
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
                return Err(err(line, format!("{} columns, expected {n}", fields.len())));
            }
            let num = |c: usize| -> Result<u64, GovernorError> {
                let text = fields[c];
                text.parse::<u64>().map_err(|_| {
                    err(
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
            if let Some(prev) = samples.last() {
                if time_ns < prev.time_ns {
                    return Err(err(
                        line,
                        format!(
                            "column 1 (`time_ns`): {time_ns} is before the previous row's {} (line {})",
                            prev.time_ns, prev.line
                        ),
                    ));
                }
            }
            let iowait = opt(6, 0)?;
            if iowait > 1 {
                return Err(err(
                    line,
                    format!("column 7 (`iowait`): `{iowait}` is not 0 or 1"),
                ));
            }
            samples.push(Sample {
                line,
                time_ns,
                util_cfs: num(1)?,
                util_rt: opt(2, 0)?,
                uclamp_min: opt(3, 0)?,
                uclamp_max: opt(4, SCHED_CAPACITY_SCALE)?,
                idle_calls: opt(5, samples.len() as u64)?,
                iowait: iowait == 1,
            });
        }
        Ok(Trace {
            path: path.to_path_buf(),
            columns: columns.unwrap_or(2),
            samples,
        })
    }

    /// Does the trace set uclamp values (so `uclamp_is_used()` is true)?
    fn uclamp_used(&self) -> bool {
        self.columns > 3
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

/// Replays `trace` on `policy` under `profile` (HZ=250, frequency invariant).
pub fn replay(
    policy: &GovernorPolicy,
    trace: &Trace,
    profile: &Profile,
) -> Result<Replay, GovernorError> {
    let mut sg = policy.sugov()?;
    let mut sg_cpu = SugovCpu::default();
    let env = SugovEnv {
        uclamp_used: trace.uclamp_used(),
        ..SugovEnv::default()
    };
    let mut decisions = Vec::with_capacity(trace.samples.len());
    for s in &trace.samples {
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
        let t =
            sugov_update_single_freq(&mut sg, &mut sg_cpu, &rq, &env, profile, s.time_ns, flags)
                .ok_or_else(|| PolicyError {
                    policy: policy.name.clone(),
                    msg: "capacity 0".into(),
                })?;
        let raw_khz = if t.should_update {
            let reference = get_capacity_ref_freq(&sg.policy, &env);
            map_util_freq(sg_cpu.util, reference, policy.capacity).unwrap_or(0) as u32
        // as the kernel stores it
        } else {
            0
        };
        decisions.push(Decision {
            time_ns: s.time_ns,
            util_cfs: s.util_cfs,
            rate_limited: !t.should_update,
            perf: sg_cpu.util,
            raw_khz,
            resolved_khz: t.next_f_resolved,
            held: t.next_f != t.next_f_resolved,
            committed: t.committed,
            cur_khz: sg.policy.cur,
        });
    }
    let mut res: BTreeMap<u32, u64> = BTreeMap::new();
    for w in decisions.windows(2) {
        *res.entry(w[0].cur_khz).or_default() += w[1].time_ns.saturating_sub(w[0].time_ns);
    }
    Ok(Replay {
        profile: profile.to_string(),
        decisions,
        residency: res
            .into_iter()
            .map(|(khz, time_ns)| Residency { khz, time_ns })
            .collect(),
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
fn residency_rows(replays: &[&Replay]) -> Vec<(u32, Vec<String>)> {
    let freqs: std::collections::BTreeSet<u32> = replays
        .iter()
        .flat_map(|r| r.residency.iter().map(|x| x.khz))
        .collect();
    freqs
        .into_iter()
        .map(|f| {
            let cells = replays
                .iter()
                .map(|r| {
                    let total: u64 = r.residency.iter().map(|x| x.time_ns).sum();
                    let t = r
                        .residency
                        .iter()
                        .find(|x| x.khz == f)
                        .map_or(0, |x| x.time_ns);
                    // Per-mille in integers (rounded), printed as a percentage with one
                    // decimal.
                    let pm = (u128::from(t) * 1000 + u128::from(total) / 2)
                        .checked_div(u128::from(total))
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

/// The table a person reads: one line per row, then the residency summary.
pub fn render(policy: &GovernorPolicy, replay: &Replay) -> String {
    let mut out = policy_line(policy);
    let _ = writeln!(out, "profile {}", replay.profile);
    let table = Table::new(" ")
        .right(14)
        .rights(2, 5)
        .rights(2, 10)
        .right(5)
        .right(12)
        .right(9)
        .right(10);
    table.line(
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
    for d in &replay.decisions {
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
        table.line(&mut out, &cells);
    }
    let _ = writeln!(out, "frequency residency:");
    for (f, cells) in residency_rows(&[replay]) {
        let _ = writeln!(out, "{f:>10} kHz {}", cells.join("  "));
    }
    out
}

/// Two replays of the same trace side by side, then both residency summaries.
pub fn render_compare(policy: &GovernorPolicy, a: &Replay, b: &Replay) -> String {
    let mut out = policy_line(policy);
    let _ = writeln!(out, "A = {}  |  B = {}", a.profile, b.profile);
    // time util | resolved held rl cur (A) | the same (B)
    let side = |t: Table| t.right(10).right(5).right(4).right(10);
    let table = side(side(Table::new(" ").right(14).right(5).then(" | ")).then(" | "));
    table.line(
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
    let side = |d: &Decision| {
        [
            khz(d.resolved_khz),
            yes(d.held).into(),
            yes(d.rate_limited).into(),
            d.cur_khz.to_string(),
        ]
    };
    for (da, db) in a.decisions.iter().zip(&b.decisions) {
        let cells = [
            &[da.time_ns.to_string(), da.util_cfs.to_string()][..],
            &side(da),
            &side(db),
        ]
        .concat();
        table.line(&mut out, &cells);
    }
    let _ = writeln!(out, "frequency residency (A | B):");
    for (f, cells) in residency_rows(&[a, b]) {
        let _ = writeln!(out, "{f:>10} kHz {}", cells.join("  |  "));
    }
    out
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
}
