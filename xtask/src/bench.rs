// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask bench`: the core's hot paths (`core/benches/hot_paths.rs`) measured two
//! ways, side by side.
//!
//! * Instructions per op, deterministic: each path runs `--ops` ops under valgrind's
//!   callgrind with `--toggle-collect='*bench_op_PATH*'`, so only instructions inside the
//!   path's `bench_op_*` function count (op generation and setup stay outside it).
//!   These are the regression signal: `--check` fails when one rises more than
//!   [`TOLERANCE_PCT`] % over `xtask/bench-baseline.json`.
//! * Nanoseconds per op from criterion (noisy on a shared machine; never checked).
//!
//! The per-op callgrind profiles stay in `target/bench/callgrind.out.PATH`, ready for
//! `callgrind_annotate --auto=yes`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::embedded::cargo;
use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};

/// How far a count may rise over the baseline before `--check` fails.
pub const TOLERANCE_PCT: f64 = 5.0;

/// The baseline file, relative to the workspace root.
pub const BASELINE: &str = "xtask/bench-baseline.json";

/// Instruction counts of the kernel's own C for the same op sequences, where measured
/// (gcc 12.2 -O2, x86_64, callgrind with the same toggle-collect; BENCHMARKS.md says how).
/// Measured over the first 200 000 ops, the default `--ops`.
const KERNEL: &[(&str, f64)] = &[
    ("pelt_se", 131.71),
    ("pelt_cfs_rq", 110.14),
    ("util_est_update", 16.79),
    ("util_fits_cpu", 29.68),
    ("em_cpu_energy", 47.54),
];

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Fail (exit 1) when a path's instructions/op rise more than 5 % over
    /// xtask/bench-baseline.json (counts only, no criterion run).
    #[arg(long)]
    pub check: bool,
    /// Skip criterion (instruction counts only).
    #[arg(long)]
    pub no_time: bool,
    /// Write the measured counts to xtask/bench-baseline.json.
    #[arg(long)]
    pub write_baseline: bool,
    /// Ops per path under callgrind (default: the baseline's).
    #[arg(long)]
    pub ops: Option<usize>,
    /// Only this path (see `--list` of the bench binary).
    #[arg(long)]
    pub path: Option<String>,
}

/// `xtask/bench-baseline.json`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Baseline {
    /// What the numbers are and how to refresh them.
    pub what: String,
    /// Ops per path the counts were measured over.
    pub ops: usize,
    /// Path → callgrind instructions per op (x86_64, release).
    pub instructions_per_op: BTreeMap<String, f64>,
}

/// One measured path.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Measured {
    pub path: String,
    pub ops: usize,
    pub instructions_per_op: f64,
    pub checksum: String,
    pub baseline: Option<f64>,
    pub kernel: Option<f64>,
    pub ns_per_op: Option<f64>,
}

/// A count over the baseline by more than the tolerance, or a path without a baseline.
pub fn regressions(measured: &[Measured]) -> Vec<String> {
    let mut out = Vec::new();
    for m in measured {
        match m.baseline {
            None => out.push(format!(
                "{}: no baseline count (run `cargo xtask bench --write-baseline`)",
                m.path
            )),
            Some(b) if m.instructions_per_op > b * (1.0 + TOLERANCE_PCT / 100.0) => {
                out.push(format!(
                    "{}: {:.2} instructions/op, {:+.1} % over the baseline {:.2} (limit +{TOLERANCE_PCT} %)",
                    m.path,
                    m.instructions_per_op,
                    pct(m.instructions_per_op, b),
                    b
                ))
            }
            Some(_) => {}
        }
    }
    out
}

fn pct(v: f64, base: f64) -> f64 {
    (v / base - 1.0) * 100.0
}

/// valgrind present, or installed with apt-get when we are root; else a clear error.
fn ensure_valgrind(w: &mut impl Write) -> anyhow::Result<()> {
    let present = || {
        Command::new("valgrind")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if present() {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        writeln!(
            w,
            "valgrind is missing: installing it (apt-get install valgrind)"
        )?;
        let ok = Command::new("sh")
            .args([
                "-c",
                "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind",
            ])
            .status()
            .is_ok_and(|s| s.success());
        if ok && present() {
            return Ok(());
        }
    }
    bail!("cargo xtask bench needs valgrind (callgrind): install it, e.g. `sudo apt-get install valgrind`")
}

/// Builds the bench binary (bench profile) and returns its path.
fn build(root: &Path) -> anyhow::Result<PathBuf> {
    let out = cargo()
        .current_dir(root)
        .args([
            "bench",
            "-p",
            "schedmath",
            "--bench",
            "hot_paths",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running cargo bench --no-run")?;
    if !out.status.success() {
        bail!("building core/benches/hot_paths.rs failed");
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["reason"] == "compiler-artifact" && v["target"]["name"] == "hot_paths" {
            if let Some(exe) = v["executable"].as_str() {
                return Ok(PathBuf::from(exe));
            }
        }
    }
    bail!("cargo did not report the hot_paths executable")
}

/// The `Collected : N` line of callgrind's summary.
fn collected(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok())
}

/// Runs one path under callgrind: (instructions inside `bench_op_PATH`, checksum line).
fn callgrind(exe: &Path, dir: &Path, path: &str, ops: usize) -> anyhow::Result<(u64, String)> {
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--toggle-collect=*bench_op_{path}*"))
        .arg(format!(
            "--callgrind-out-file={}",
            dir.join(format!("callgrind.out.{path}")).display()
        ))
        .arg(exe)
        .args(["--callgrind", path, &ops.to_string()])
        .output()
        .context("running valgrind")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("{path} under callgrind failed: {}", stderr.trim());
    }
    let n = collected(&stderr)
        .ok_or_else(|| anyhow!("{path}: no `Collected :` line from callgrind: {stderr}"))?;
    if n == 0 {
        bail!("{path}: callgrind counted nothing (is bench_op_{path} inlined away?)");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let checksum = stdout
        .split("checksum ")
        .nth(1)
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Ok((n, checksum))
}

/// criterion's estimate (ns per op) for each path, from its saved estimates.
fn criterion(exe: &Path, dir: &Path, paths: &[String]) -> anyhow::Result<BTreeMap<String, f64>> {
    let home = dir.join("criterion");
    let mut out = BTreeMap::new();
    for path in paths {
        let run = Command::new(exe)
            .env("CRITERION_HOME", &home)
            .args(["--bench", &format!("^hot_paths/{path}$")])
            .output()
            .context("running the criterion benchmarks")?;
        if !run.status.success() {
            bail!(
                "criterion run of {path} failed: {}",
                String::from_utf8_lossy(&run.stderr).trim()
            );
        }
        let file = home.join("hot_paths").join(path).join("new/estimates.json");
        let text = std::fs::read_to_string(&file).with_context(|| file.display().to_string())?;
        let v: serde_json::Value = serde_json::from_str(&text)?;
        let est = v["slope"]["point_estimate"]
            .as_f64()
            .or_else(|| v["mean"]["point_estimate"].as_f64())
            .ok_or_else(|| anyhow!("{}: no estimate", file.display()))?;
        out.insert(path.clone(), est);
    }
    Ok(out)
}

fn read_baseline(root: &Path) -> anyhow::Result<Option<Baseline>> {
    let file = root.join(BASELINE);
    match std::fs::read_to_string(&file) {
        Ok(text) => Ok(Some(
            serde_json::from_str(&text).with_context(|| file.display().to_string())?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| file.display().to_string()),
    }
}

/// Measures every path (or `args.path`); returns the rows, baseline and kernel filled in.
pub fn measure(
    root: &Path,
    args: &BenchArgs,
    w: &mut impl Write,
) -> anyhow::Result<(Vec<Measured>, Option<Baseline>)> {
    ensure_valgrind(w)?;
    let baseline = read_baseline(root)?;
    let ops = args
        .ops
        .or(baseline.as_ref().map(|b| b.ops))
        .unwrap_or(200_000);
    let exe = build(root)?;
    let list = Command::new(&exe).arg("--list").output()?;
    let mut paths: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    if let Some(p) = &args.path {
        if !paths.contains(p) {
            bail!("unknown path `{p}` (known: {})", paths.join(", "));
        }
        paths.retain(|x| x == p);
    }
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    let mut rows = Vec::new();
    for path in &paths {
        let (n, checksum) = callgrind(&exe, &dir, path, ops)?;
        rows.push(Measured {
            path: path.clone(),
            ops,
            instructions_per_op: (n as f64 / ops as f64 * 100.0).round() / 100.0,
            checksum,
            baseline: baseline
                .as_ref()
                .filter(|b| b.ops == ops)
                .and_then(|b| b.instructions_per_op.get(path).copied()),
            kernel: KERNEL.iter().find(|(p, _)| p == path).map(|(_, k)| *k),
            ns_per_op: None,
        });
    }
    if !args.no_time && !args.check {
        let ns = criterion(&exe, &dir, &paths)?;
        for r in &mut rows {
            r.ns_per_op = ns.get(&r.path).copied();
        }
    }
    Ok((rows, baseline))
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

/// The table.
pub fn write_table(rows: &[Measured], w: &mut impl Write) -> anyhow::Result<()> {
    writeln!(
        w,
        "{:22} {:>12} {:>10} {:>8} {:>10} {:>9} {:>10}",
        "path", "instr/op", "baseline", "Δ %", "kernel C", "× kernel", "ns/op"
    )?;
    for r in rows {
        writeln!(
            w,
            "{:22} {:>12.2} {:>10} {:>8} {:>10} {:>9} {:>10}",
            r.path,
            r.instructions_per_op,
            opt(r.baseline, 2),
            r.baseline.map_or_else(
                || "-".into(),
                |b| format!("{:+.1}", pct(r.instructions_per_op, b))
            ),
            opt(r.kernel, 2),
            r.kernel.map_or_else(
                || "-".into(),
                |k| format!("{:.2}", r.instructions_per_op / k)
            ),
            opt(r.ns_per_op, 2),
        )?;
    }
    if let Some(r) = rows.first() {
        writeln!(
            w,
            "instr/op: callgrind, {} ops per path, x86_64 bench profile, only instructions inside bench_op_PATH (profiles in target/bench/); ns/op: criterion",
            r.ops
        )?;
    }
    Ok(())
}

/// `cargo xtask bench`.
pub fn run(root: &Path, args: &BenchArgs, w: &mut impl Write) -> anyhow::Result<bool> {
    let (rows, _) = measure(root, args, w)?;
    if args.json {
        writeln!(w, "{}", serde_json::to_string_pretty(&rows)?)?;
    } else {
        write_table(&rows, w)?;
    }
    if args.write_baseline {
        let b = Baseline {
            what: "callgrind instructions per op of core/benches/hot_paths.rs (x86_64, bench profile); refresh with `cargo xtask bench --write-baseline`, checked by `cargo xtask bench --check` (+5 % fails)".into(),
            ops: rows.first().map_or(200_000, |r| r.ops),
            instructions_per_op: rows
                .iter()
                .map(|r| (r.path.clone(), r.instructions_per_op))
                .collect(),
        };
        std::fs::write(
            root.join(BASELINE),
            serde_json::to_string_pretty(&b)? + "\n",
        )?;
        writeln!(w, "wrote {BASELINE}")?;
    }
    if args.check {
        let bad = regressions(&rows);
        for b in &bad {
            writeln!(w, "REGRESSION: {b}")?;
        }
        if bad.is_empty() {
            writeln!(
                w,
                "bench --check: every count within +{TOLERANCE_PCT} % of {BASELINE}"
            )?;
        }
        return Ok(bad.is_empty());
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, v: f64, baseline: Option<f64>) -> Measured {
        Measured {
            path: path.into(),
            ops: 10,
            instructions_per_op: v,
            checksum: String::new(),
            baseline,
            kernel: None,
            ns_per_op: None,
        }
    }

    #[test]
    fn a_rise_over_five_percent_is_a_regression() {
        let rows = [
            row("a", 105.0, Some(100.0)),
            row("b", 105.01, Some(100.0)),
            row("c", 50.0, Some(100.0)),
            row("d", 1.0, None),
        ];
        let bad = regressions(&rows);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].starts_with("b: 105.01 instructions/op, +5.0 %"));
        assert!(bad[1].starts_with("d: no baseline"));
    }

    #[test]
    fn callgrind_summary_is_parsed() {
        let s = "==1== Events    : Ir\n==1== Collected : 263347282\n==1==\n==1== I   refs:      263,347,282\n";
        assert_eq!(collected(s), Some(263_347_282));
        assert_eq!(collected("nothing"), None);
    }

    #[test]
    fn committed_baseline_covers_every_path_with_counts_only() {
        let root = crate::workspace_root();
        let b = read_baseline(&root)
            .unwrap()
            .expect("xtask/bench-baseline.json");
        let src = std::fs::read_to_string(root.join("core/benches/hot_paths.rs")).unwrap();
        for path in b.instructions_per_op.keys() {
            assert!(src.contains(&format!("fn bench_op_{path}(")), "{path}");
        }
        assert!(b.instructions_per_op.values().all(|v| *v > 0.0));
        assert!(b.instructions_per_op.contains_key("pelt_se"));
    }

    /// The real check (valgrind needed; `.ci/run` runs `cargo xtask bench --check`).
    #[test]
    #[ignore = "needs valgrind and a release build; .ci/run runs `cargo xtask bench --check`"]
    fn counts_within_five_percent_of_the_baseline() {
        let args = BenchArgs {
            json: false,
            check: true,
            no_time: true,
            write_baseline: false,
            ops: None,
            path: None,
        };
        let mut out = Vec::new();
        let ok = run(&crate::workspace_root(), &args, &mut out).unwrap();
        assert!(ok, "{}", String::from_utf8_lossy(&out));
    }
}
