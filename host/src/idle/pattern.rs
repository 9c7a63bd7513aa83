// SPDX-License-Identifier: GPL-2.0-only
//! Idle patterns for `schedmath idle`: a CSV file of idle periods or a generator spec.
//!
//! CSV (`#` comments and a header line allowed):
//! `sleep_length_ns,measured_ns,timer_wakeup[,util]` — the time to the next timer at idle
//! entry, the idle duration until the wakeup, whether the timer was the wakeup (`1`/`0`,
//! `true`/`false`) and optionally the CPU utilization seen at idle entry.
//!
//! Generators (durations are integers with `ns`, `us`, `ms` or `s`):
//! * `timer:50ms` — every period ends on a 50 ms timer;
//! * `io:50us-500us[@100ms]` — early wakeups uniform in [50 µs, 500 µs] before a far
//!   timer (default 100 ms);
//! * `mixed:90%io:50us-500us,10%timer:50ms` — each period from one part, by weight
//!   (equal weights when no `N%` is given);
//! * phases `A*200;B*50` — 200 periods of A then 50 of B (`*N` defaults to `--count`).
//!
//! Random choices come from a seeded SplitMix64, so a spec and a seed give one pattern.

use std::path::Path;

use crate::limits::{beyond, MAX_IDLE_PERIODS, MAX_IDLE_PERIOD_NS};
use crate::rng::SplitMix64;
use crate::text::{csv_rows, CsvRow};

/// One idle period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdlePeriod {
    /// Time to the next timer event at idle entry (ns).
    pub sleep_length_ns: u64,
    /// Idle duration until the wakeup (ns), at most `sleep_length_ns`.
    pub measured_ns: u64,
    /// The timer ended the period (informational: counts timer vs early wakeups).
    pub timer_wakeup: bool,
    /// CPU utilization at idle entry, when the pattern gives one.
    pub util: Option<u64>,
}

/// A pattern that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatternError {
    /// A bad generator spec.
    #[error("pattern `{spec}`: {msg}")]
    Spec {
        /// The spec (or the part of it that is wrong).
        spec: String,
        /// What is wrong.
        msg: String,
    },
    /// A bad CSV row.
    #[error("{path}:{line}: {msg}")]
    Csv {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong (names the field).
        msg: String,
    },
    /// Unreadable, too large or not UTF-8 (names the limit or the position).
    #[error(transparent)]
    Input(#[from] crate::limits::InputError),
    /// The CSV file could not be read.
    #[error("{path}: {msg}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        msg: String,
    },
}

/// A parsed duration `N{ns,us,ms,s}`.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err(if s.starts_with('-') {
            format!("negative duration `{s}`")
        } else {
            format!("`{s}` is not a duration (e.g. 50us, 50ms)")
        });
    }
    let mult = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" => return Err(format!("duration `{s}` needs a unit (ns, us, ms, s)")),
        u => return Err(format!("unknown unit `{u}` in `{s}` (ns, us, ms, s)")),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("duration `{s}` is too large"))
}

/// One generator: what a single period looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Gen {
    /// Periods ending on a timer of this length.
    Timer(u64),
    /// Early wakeups uniform in `lo..=hi` before a timer at `far`.
    Io { lo: u64, hi: u64, far: u64 },
    /// One part per period, by weight.
    Mixed(Vec<(u64, Gen)>),
}

/// Default far timer of `io:` periods.
const IO_FAR_TIMER_NS: u64 = 100_000_000;

fn spec_err(spec: &str, msg: impl Into<String>) -> PatternError {
    PatternError::Spec {
        spec: spec.to_string(),
        msg: msg.into(),
    }
}

fn parse_gen(spec: &str) -> Result<Gen, PatternError> {
    let spec = spec.trim();
    let (kind, arg) = spec
        .split_once(':')
        .ok_or_else(|| spec_err(spec, "expected KIND:ARGS (timer:, io:, mixed:)"))?;
    let period = |arg: &str| -> Result<u64, PatternError> {
        let ns = parse_duration(arg).map_err(|m| spec_err(spec, m))?;
        if ns == 0 {
            return Err(spec_err(spec, "a timer period must be > 0"));
        }
        if ns > MAX_IDLE_PERIOD_NS {
            return Err(spec_err(
                spec,
                beyond(
                    format!("period `{}`", arg.trim()),
                    "MAX_IDLE_PERIOD_NS",
                    format!("{MAX_IDLE_PERIOD_NS} ns (1 h)"),
                ),
            ));
        }
        Ok(ns)
    };
    match kind {
        "timer" => period(arg).map(Gen::Timer),
        "io" => {
            let (range, far) = match arg.split_once('@') {
                Some((r, f)) => (r, period(f)?),
                None => (arg, IO_FAR_TIMER_NS),
            };
            let (lo, hi) = match range.split_once('-') {
                Some(("", _)) => return Err(spec_err(spec, "negative duration")),
                Some((lo, hi)) => (lo, hi),
                None => (range, range),
            };
            let lo = parse_duration(lo).map_err(|m| spec_err(spec, m))?;
            let hi = parse_duration(hi).map_err(|m| spec_err(spec, m))?;
            if lo > hi {
                return Err(spec_err(spec, "range start is above its end"));
            }
            if hi > far {
                return Err(spec_err(spec, "wakeups must come before the far timer"));
            }
            Ok(Gen::Io { lo, hi, far })
        }
        "mixed" => {
            let mut parts = Vec::new();
            for part in arg.split(',') {
                let part = part.trim();
                let (weight, sub) = match part.split_once('%') {
                    Some((w, sub)) => (
                        w.parse::<u64>()
                            .map_err(|_| spec_err(part, "weight must be an integer percent"))?,
                        sub,
                    ),
                    None => (1, part),
                };
                let g = parse_gen(sub)?;
                if matches!(g, Gen::Mixed(_)) {
                    return Err(spec_err(part, "mixed parts cannot nest"));
                }
                parts.push((weight, g));
            }
            if parts.iter().all(|(w, _)| *w == 0) {
                return Err(spec_err(spec, "every weight is zero"));
            }
            Ok(Gen::Mixed(parts))
        }
        other => Err(spec_err(
            spec,
            format!("unknown generator `{other}` (timer, io, mixed, or a CSV file)"),
        )),
    }
}

fn sample(g: &Gen, rng: &mut SplitMix64) -> IdlePeriod {
    match g {
        Gen::Timer(t) => IdlePeriod {
            sleep_length_ns: *t,
            measured_ns: *t,
            timer_wakeup: true,
            util: None,
        },
        Gen::Io { lo, hi, far } => IdlePeriod {
            sleep_length_ns: *far,
            measured_ns: rng.range(*lo, *hi),
            timer_wakeup: false,
            util: None,
        },
        Gen::Mixed(parts) => {
            let total: u64 = parts.iter().map(|(w, _)| *w).sum();
            let mut pick = rng.range(0, total - 1);
            for (w, sub) in parts {
                if pick < *w {
                    return sample(sub, rng);
                }
                pick -= w;
            }
            // Unreachable (pick < total); a zero-length timer period keeps it total.
            sample(&Gen::Timer(0), rng)
        }
    }
}

/// Periods from a generator spec: phases `A*N;B*M`, each `*N` defaulting to `count`.
pub fn generate(spec: &str, count: usize, seed: u64) -> Result<Vec<IdlePeriod>, PatternError> {
    let mut rng = SplitMix64::new(seed);
    // Every phase is parsed and the total counted before anything is generated.
    let mut phases = Vec::new();
    let mut total: u64 = 0;
    for phase in spec.split(';') {
        let phase = phase.trim();
        let (g, n) = match phase.rsplit_once('*') {
            Some((g, n)) => (
                g,
                n.trim()
                    .parse::<u64>()
                    .map_err(|_| spec_err(phase, "`*N` needs a period count"))?,
            ),
            None => (phase, count as u64),
        };
        total = total.saturating_add(n);
        if total > MAX_IDLE_PERIODS {
            let what = if phase.contains('*') {
                format!("{total} periods in total")
            } else {
                format!("--count {count} ({total} periods in total)")
            };
            return Err(spec_err(
                phase,
                beyond(what, "MAX_IDLE_PERIODS", MAX_IDLE_PERIODS),
            ));
        }
        phases.push((parse_gen(g)?, n));
    }
    let mut out = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for (g, n) in phases {
        out.extend((0..n).map(|_| sample(&g, &mut rng)));
    }
    Ok(out)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    }
}

/// Periods from CSV text; `path` names the file in errors.
pub fn parse_csv(path: &str, text: &str) -> Result<Vec<IdlePeriod>, PatternError> {
    let mut out = Vec::new();
    for CsvRow { line, fields: cols } in csv_rows(text) {
        // A header line names the columns.
        if out.is_empty() && cols[0].starts_with("sleep") {
            continue;
        }
        let err = |msg: String| PatternError::Csv {
            path: path.to_string(),
            line,
            msg,
        };
        if !(3..=4).contains(&cols.len()) {
            return Err(err(format!(
                "{} columns; expected sleep_length_ns,measured_ns,timer_wakeup[,util]",
                cols.len()
            )));
        }
        let num = |idx: usize, name: &str| -> Result<u64, PatternError> {
            let s = cols.get(idx).copied().unwrap_or_default();
            if s.starts_with('-') {
                return Err(err(format!("field `{name}`: negative duration `{s}`")));
            }
            s.parse::<u64>().map_err(|_| {
                err(format!(
                    "field `{name}`: `{s}` is not a non-negative integer"
                ))
            })
        };
        let sleep_length_ns = num(0, "sleep_length_ns")?;
        let measured_ns = num(1, "measured_ns")?;
        let flag = cols.get(2).copied().unwrap_or_default();
        let timer_wakeup = parse_bool(flag).ok_or_else(|| {
            err(format!(
                "field `timer_wakeup`: `{flag}` is not 1/0/true/false"
            ))
        })?;
        let util = if cols.len() == 4 {
            Some(num(3, "util")?)
        } else {
            None
        };
        if sleep_length_ns > MAX_IDLE_PERIOD_NS {
            return Err(err(format!(
                "field `sleep_length_ns`: {}",
                beyond(sleep_length_ns, "MAX_IDLE_PERIOD_NS", MAX_IDLE_PERIOD_NS)
            )));
        }
        if out.len() as u64 >= MAX_IDLE_PERIODS {
            return Err(err(beyond(
                "the number of periods",
                "MAX_IDLE_PERIODS",
                MAX_IDLE_PERIODS,
            )));
        }
        if measured_ns > sleep_length_ns {
            return Err(err(format!(
                "field `measured_ns`: {measured_ns} is after the timer at {sleep_length_ns}"
            )));
        }
        out.push(IdlePeriod {
            sleep_length_ns,
            measured_ns,
            timer_wakeup,
            util,
        });
    }
    if out.is_empty() {
        return Err(PatternError::Csv {
            path: path.to_string(),
            line: 1,
            msg: "no idle periods".into(),
        });
    }
    Ok(out)
}

/// The periods of `--pattern`: a CSV file when `spec` names an existing file, else a
/// generator.
pub fn load(spec: &str, count: usize, seed: u64) -> Result<Vec<IdlePeriod>, PatternError> {
    let path = Path::new(spec);
    if spec.ends_with(".csv") || path.is_file() {
        let text = crate::limits::read_text(path)?;
        return parse_csv(spec, &text);
    }
    generate(spec, count, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_and_io_generators() {
        let p = generate("timer:50ms", 3, 1).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].sleep_length_ns, 50_000_000);
        assert!(p
            .iter()
            .all(|x| x.timer_wakeup && x.measured_ns == 50_000_000));
        let p = generate("io:50us-500us@20ms", 100, 7).unwrap();
        assert!(p.iter().all(
            |x| (50_000..=500_000).contains(&x.measured_ns) && x.sleep_length_ns == 20_000_000
        ));
        assert_eq!(p, generate("io:50us-500us@20ms", 100, 7).unwrap());
    }

    #[test]
    fn phases_and_mixed() {
        let p = generate("io:50us-500us*4;timer:50ms*2", 99, 1).unwrap();
        assert_eq!(p.len(), 6);
        assert!(!p[3].timer_wakeup && p[4].timer_wakeup);
        let p = generate("mixed:0%io:50us,100%timer:1ms", 5, 3).unwrap();
        assert!(p.iter().all(|x| x.timer_wakeup));
    }

    #[test]
    fn bad_specs_name_the_spec() {
        let e = generate("sine:50ms", 1, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pattern `sine:50ms`: unknown generator `sine` (timer, io, mixed, or a CSV file)"
        );
        let e = generate("timer:-5ms", 1, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pattern `timer:-5ms`: negative duration `-5ms`"
        );
        let e = generate("io:-50us-500us", 1, 0).unwrap_err();
        assert_eq!(e.to_string(), "pattern `io:-50us-500us`: negative duration");
        let e = generate("timer:50", 1, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pattern `timer:50`: duration `50` needs a unit (ns, us, ms, s)"
        );
        let e = generate("io:500us-50us", 1, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pattern `io:500us-50us`: range start is above its end"
        );
    }

    #[test]
    fn csv_rows_and_errors_name_file_line_field() {
        let text = "# comment\nsleep_length_ns,measured_ns,timer_wakeup,util\n50000000,50000000,1,100\n100000000,300000,false,20\n";
        let p = parse_csv("p.csv", text).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].measured_ns, 300_000);
        assert_eq!(p[1].util, Some(20));
        let e = parse_csv("p.csv", "1000,-5,0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:1: field `measured_ns`: negative duration `-5`"
        );
        let e = parse_csv("p.csv", "1000,5,0\n1000,5\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:2: 2 columns; expected sleep_length_ns,measured_ns,timer_wakeup[,util]"
        );
        let e = parse_csv("p.csv", "1000,5,maybe\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:1: field `timer_wakeup`: `maybe` is not 1/0/true/false"
        );
        let e = parse_csv("p.csv", "1000,2000,1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:1: field `measured_ns`: 2000 is after the timer at 1000"
        );
        let e = parse_csv("p.csv", "10ms,5,1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:1: field `sleep_length_ns`: `10ms` is not a non-negative integer"
        );
    }
}
