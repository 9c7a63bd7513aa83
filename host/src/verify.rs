// SPDX-License-Identifier: GPL-2.0-only
//! `verify`: run every kernel fixture suite found under some directories and report.
//!
//! Prints one row per suite file (suite, variant, cases, passed, failed), then the first
//! divergence of each failing case as
//! `mismatch: SUITE  CASE-ID  op N  FIELD  expected E  got G`, errors as
//! `error: FILE:LINE: ...`, and closes with `verify: N passed, M failed`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context};
use serde_json::Value;

use crate::fixtures::compare::Divergence;
use crate::fixtures::suite::SuiteFile;
use crate::fixtures::{first_divergence, runners};
use crate::text::Table;

/// Options of `cargo xtask verify` / `schedmath verify`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct VerifyArgs {
    /// A directory searched recursively for `*.jsonl` suites, or one suite file;
    /// repeatable. Default: the workspace's `fixtures/kernel/`.
    #[arg(long = "fixtures", value_name = "DIR")]
    pub fixtures: Vec<PathBuf>,
    /// Only suites whose name or file path contains PATTERN (`*` matches any run).
    #[arg(long, value_name = "PATTERN")]
    pub suite: Option<String>,
    /// At most this many mismatch/error lines per suite.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub max_report: usize,
}

/// Why a case did not pass.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The runner's output differs from the kernel's.
    Mismatch {
        /// Case id.
        id: String,
        /// Where and how.
        divergence: Divergence,
    },
    /// A case that failed on an embedded target (op index for sequences).
    Target {
        /// Case id.
        id: String,
        /// Failing op of a sequence.
        op: Option<usize>,
        /// `mismatch` or the target's error.
        what: String,
    },
    /// The case could not be run (unreadable line, unknown `fn`, bad input).
    Error {
        /// 1-based line.
        line: usize,
        /// Message (names the case and field where known).
        msg: String,
    },
}

/// The result of one suite file.
#[derive(Debug, Clone)]
pub struct SuiteResult {
    /// The file.
    pub path: PathBuf,
    /// Header `suite`.
    pub suite: String,
    /// Header `variant`.
    pub variant: String,
    /// Case lines (readable or not).
    pub cases: usize,
    /// Cases whose every output field matched.
    pub passed: usize,
    /// Failures in file order.
    pub failures: Vec<Failure>,
}

/// Runs every case of a suite through its runner and compares.
pub fn run_suite(file: &SuiteFile) -> SuiteResult {
    let module = file.header.module();
    let mut failures: Vec<(usize, Failure)> = file
        .bad_lines
        .iter()
        .map(|b| {
            let msg = b.msg.clone();
            (b.line, Failure::Error { line: b.line, msg })
        })
        .collect();
    let mut passed = 0;
    for case in &file.cases {
        let Some(run) = runners::lookup(module, &case.fn_name) else {
            let msg = format!(
                "case {}: unknown fn `{}` in module `{module}`",
                case.id, case.fn_name
            );
            failures.push((
                case.line,
                Failure::Error {
                    line: case.line,
                    msg,
                },
            ));
            continue;
        };
        match run.run(&file.header, &case.input) {
            Err(e) => {
                let msg = format!("case {}: {e}", case.id);
                failures.push((
                    case.line,
                    Failure::Error {
                        line: case.line,
                        msg,
                    },
                ));
            }
            Ok(got) => match first_divergence(&case.out, &got) {
                None => passed += 1,
                Some(divergence) => failures.push((
                    case.line,
                    Failure::Mismatch {
                        id: case.id.clone(),
                        divergence,
                    },
                )),
            },
        }
    }
    failures.sort_by_key(|(line, _)| *line);
    SuiteResult {
        path: file.path.clone(),
        suite: file.header.suite.clone(),
        variant: file.header.variant.clone(),
        cases: file.cases.len() + file.bad_lines.len(),
        passed,
        failures: failures.into_iter().map(|(_, f)| f).collect(),
    }
}

/// Every `.jsonl` below `dir` (or `dir` itself when it is a file). Symbolic links to
/// directories are not followed (a link back up the tree would recurse forever); links
/// to files are read.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read directory", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("{}: cannot list", dir.display()))?;
        let path = entry.path();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if path.is_dir() {
            if !is_link {
                collect(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

/// `*`-glob match of `pattern` anywhere in `text` (without `*`: a substring test).
fn matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (format!("*{pattern}*").into_bytes(), text.as_bytes());
    // Classic two-pointer glob with backtracking to the last `*`.
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

fn value_text(v: Option<&Value>) -> String {
    match v {
        None => "(missing)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.len() > 120 {
                format!("{}…", &s[..120])
            } else {
                s
            }
        }
    }
}

/// Writes a suite's failure lines (at most `max`).
pub fn write_failures(r: &SuiteResult, max: usize, w: &mut impl Write) -> std::io::Result<()> {
    for f in r.failures.iter().take(max) {
        match f {
            Failure::Mismatch { id, divergence: d } => {
                let op = d.op().map_or("-".to_string(), |i| format!("op {i}"));
                writeln!(
                    w,
                    "mismatch: {}  {id}  {op}  {}  expected {}  got {}",
                    r.suite,
                    d.field(),
                    value_text(Some(&d.expected)),
                    value_text(d.got.as_ref())
                )?;
            }
            Failure::Target { id, op, what } => {
                let op = op.map_or("-".to_string(), |i| format!("op {i}"));
                writeln!(w, "{what}: {}  {id}  {op}  (on target)", r.suite)?;
            }
            Failure::Error { line, msg } => {
                writeln!(w, "error: {}:{line}: {msg}", r.path.display())?;
            }
        }
    }
    if r.failures.len() > max {
        writeln!(
            w,
            "  ... and {} more in {}",
            r.failures.len() - max,
            r.suite
        )?;
    }
    Ok(())
}

/// The suites `args` selects: every `*.jsonl` under each `--fixtures` (default
/// `default_dir`), filtered by `--suite`. None found is an error, never a silent pass.
pub fn select_suites(args: &VerifyArgs, default_dir: &Path) -> anyhow::Result<Vec<SuiteFile>> {
    let dirs = if args.fixtures.is_empty() {
        vec![default_dir.to_path_buf()]
    } else {
        args.fixtures.clone()
    };
    // (file, its path below the directory given), so `--suite` never matches the
    // directories above the fixtures (a checkout named after a module, say).
    let mut files = Vec::new();
    for d in &dirs {
        if !d.exists() {
            bail!("{}: no such file or directory", d.display());
        }
        let mut found = Vec::new();
        collect(d, &mut found)?;
        files.extend(found.into_iter().map(|f| {
            let rel = f
                .strip_prefix(d)
                .unwrap_or(&f)
                .to_string_lossy()
                .into_owned();
            (f, rel)
        }));
    }
    files.sort();
    let mut suites = Vec::new();
    for (f, rel) in files {
        let s = SuiteFile::read(&f)?;
        let keep = args
            .suite
            .as_deref()
            .is_none_or(|p| matches(p, &s.header.suite) || matches(p, &rel));
        if keep {
            suites.push(s);
        }
    }
    if suites.is_empty() {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        bail!("no fixture suites found under {}", dirs.join(", "));
    }
    Ok(suites)
}

/// Prints the suite table, the failure lines and the closing `verify: N passed, M failed`;
/// returns whether every case passed.
pub fn write_report(
    results: &[SuiteResult],
    max_report: usize,
    w: &mut impl Write,
) -> anyhow::Result<bool> {
    let width = results
        .iter()
        .map(|r| r.suite.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let vwidth = results
        .iter()
        .map(|r| r.variant.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let table = Table::new("  ").left(width).left(vwidth).rights(3, 6);
    writeln!(
        w,
        "{}",
        table.row(&["suite", "variant", "cases", "passed", "failed"])
    )?;
    for r in results {
        let (cases, passed, failed) = (r.cases, r.passed, r.cases - r.passed);
        let cells: [&dyn std::fmt::Display; 5] = [&r.suite, &r.variant, &cases, &passed, &failed];
        writeln!(w, "{}", table.row(&cells))?;
    }
    for r in results {
        write_failures(r, max_report, w)?;
    }
    let passed: usize = results.iter().map(|r| r.passed).sum();
    let failed: usize = results.iter().map(|r| r.cases - r.passed).sum();
    writeln!(w, "verify: {passed} passed, {failed} failed")?;
    Ok(failed == 0)
}

/// Runs `verify` on the host; `default_dir` is used when no `--fixtures` is given.
/// Returns whether every case passed.
pub fn run(args: &VerifyArgs, default_dir: &Path, w: &mut impl Write) -> anyhow::Result<bool> {
    let suites = select_suites(args, default_dir)?;
    let results = run_parallel(&suites);
    let ok = write_report(&results, args.max_report, w)?;
    // A case that cannot be read or run is an input error (exit 2), not a mismatch.
    let errors = results
        .iter()
        .flat_map(|r| &r.failures)
        .filter(|f| matches!(f, Failure::Error { .. }))
        .count();
    if errors > 0 {
        bail!("{errors} case(s) could not be read or run (listed above as `error:`)");
    }
    Ok(ok)
}

/// Runs suites on all cores; results come back in input order (also the Python
/// binding's `schedmath.verify`).
pub fn run_parallel(suites: &[SuiteFile]) -> Vec<SuiteResult> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(suites.len()));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers.min(suites.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(suite) = suites.get(i) else { break };
                let r = run_suite(suite);
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_patterns_glob_and_substring() {
        assert!(matches("se_seq", "pelt/se_sequence"));
        assert!(matches("pelt/*_sequence", "pelt/se_sequence"));
        assert!(!matches("capacity", "pelt/se_sequence"));
    }
}
