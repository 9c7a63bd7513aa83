// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask fuzz --seconds N [--only TARGET]`: every cargo-fuzz target in `fuzz/`,
//! one after the other, each for N seconds.
//!
//! Installs what it needs (`cargo install cargo-fuzz`, the nightly toolchain through
//! rustup), seeds each target's corpus from `fixtures/` (workloads, platforms, kernel
//! suites cut into small files), and runs libFuzzer with overflow checks on and no
//! sanitizer (the code under test has no `unsafe`; overflow checks are what catch a
//! non-wrapping kernel computation). A crash fails the job and leaves its input in
//! `fuzz/artifacts/TARGET/`; the executions per target are printed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The targets, in the order they run (names of `fuzz/Cargo.toml`'s `[[bin]]`s).
pub const TARGETS: &[&str] = &[
    "core_pelt",
    "core_capacity",
    "core_schedutil",
    "core_cpuidle",
    "core_fair",
    "rtapp",
    "platform",
    "fixture",
    "trace",
];

/// Largest seed file (libFuzzer's default `-max_len` is derived from the corpus).
const MAX_SEED: usize = 4096;

fn ensure_cargo_fuzz(out: &mut impl Write) -> Result<()> {
    let have = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if have {
        return Ok(());
    }
    writeln!(out, "fuzz: installing the nightly toolchain and cargo-fuzz")?;
    let status = Command::new("rustup")
        .args(["toolchain", "install", "nightly", "--profile", "minimal"])
        .status()
        .context("running rustup")?;
    if !status.success() {
        bail!("rustup could not install the nightly toolchain");
    }
    let status = Command::new("cargo")
        .args(["install", "cargo-fuzz", "--locked"])
        .status()
        .context("running cargo install cargo-fuzz")?;
    if !status.success() {
        bail!("cargo install cargo-fuzz failed");
    }
    Ok(())
}

/// The seed files for `target` from the project's fixtures.
fn seeds(root: &Path, target: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let fixtures = root.join("fixtures");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut add_dir = |dir: &Path, ext: &str| -> Result<()> {
        for e in fs::read_dir(dir).with_context(|| dir.display().to_string())? {
            let p = e?.path();
            if p.extension().is_some_and(|x| x == ext) {
                files.push(p);
            }
        }
        Ok(())
    };
    match target {
        "rtapp" => {
            add_dir(&fixtures.join("workloads"), "json")?;
            add_dir(&fixtures.join("workloads"), "toml")?;
        }
        "platform" => add_dir(&fixtures.join("platforms"), "toml")?,
        "trace" => {
            for e in fs::read_dir(fixtures.join("lab"))? {
                let kernel = e?.path();
                if kernel.is_dir() {
                    for w in fs::read_dir(&kernel)? {
                        let report = w?.path().join("report.txt.gz");
                        if report.is_file() {
                            files.push(report);
                        }
                    }
                }
            }
        }
        _ => {
            for e in fs::read_dir(fixtures.join("kernel"))? {
                let dir = e?.path();
                if dir.is_dir() {
                    add_dir(&dir, "jsonl")?;
                }
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let mut text = fs::read(&f).with_context(|| f.display().to_string())?;
        if target == "trace" {
            // The head of a lab capture, decompressed by the replay's own opener.
            let mut head = Vec::new();
            let r = schedmath_host::replay::open(&f)?;
            std::io::Read::read_to_end(&mut std::io::Read::take(r, MAX_SEED as u64), &mut head)
                .with_context(|| f.display().to_string())?;
            text = head;
        }
        let name = if target == "trace" {
            // kernel/workload: every capture's report has the same file name.
            let p = f.strip_prefix(fixtures.join("lab")).unwrap_or(&f);
            p.parent().map_or_else(String::new, |d| {
                d.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "_")
            })
        } else {
            f.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        };
        if matches!(target, "rtapp" | "platform" | "trace") {
            out.push((name, text));
            continue;
        }
        // A kernel suite: its header plus a few short cases per seed (the fixture target
        // reads them as suites; the core targets take the bytes as raw input).
        let text = String::from_utf8_lossy(&text);
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default();
        for (i, case) in lines
            .filter(|l| l.len() + header.len() < MAX_SEED)
            .step_by(97)
            .take(8)
            .enumerate()
        {
            out.push((
                format!("{name}.{i}"),
                format!("{header}\n{case}\n").into_bytes(),
            ));
        }
    }
    Ok(out)
}

/// libFuzzer's last `stat::number_of_executed_units` or `#N DONE` count.
fn executions(log: &str) -> Option<u64> {
    log.lines().rev().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("stat::number_of_executed_units:")?;
        rest.trim().parse().ok()
    })
}

/// Runs every target (or `only`) for `seconds` each; `Ok(false)` when one crashed.
pub fn run(root: &Path, seconds: u64, only: Option<&str>, out: &mut impl Write) -> Result<bool> {
    ensure_cargo_fuzz(out)?;
    let fuzz = root.join("fuzz");
    let mut ok = true;
    let mut rows = Vec::new();
    for &target in TARGETS.iter().filter(|t| only.is_none_or(|o| o == **t)) {
        let corpus = fuzz.join("corpus").join(target);
        fs::create_dir_all(&corpus)?;
        for (name, bytes) in seeds(root, target)? {
            let p = corpus.join(format!("seed-{name}"));
            if !p.exists() {
                fs::write(&p, bytes)?;
            }
        }
        writeln!(out, "fuzz: {target} for {seconds} s")?;
        let output = Command::new("cargo")
            .current_dir(&fuzz)
            .args([
                "+nightly",
                "fuzz",
                "run",
                "--sanitizer",
                "none",
                "--debug-assertions",
            ])
            .arg(target)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .args(["-timeout=10", "-rss_limit_mb=1024", "-print_final_stats=1"])
            .output()
            .with_context(|| format!("running cargo fuzz run {target}"))?;
        let log = String::from_utf8_lossy(&output.stderr);
        let execs = executions(&log);
        if !output.status.success() {
            ok = false;
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            for l in tail.iter().rev() {
                writeln!(out, "  {l}")?;
            }
        }
        rows.push((target, execs, output.status.success()));
    }
    writeln!(out, "{:<16} {:>14} {:>8}", "target", "executions", "result")?;
    for (t, execs, success) in rows {
        let execs = execs.map_or_else(|| "?".into(), |e| e.to_string());
        let result = if success { "ok" } else { "CRASH" };
        writeln!(out, "{t:<16} {execs:>14} {result:>8}")?;
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_are_read_from_the_final_stats() {
        let log =
            "#1024 pulse\nstat::number_of_executed_units: 123456\nstat::average_exec_per_sec: 9\n";
        assert_eq!(executions(log), Some(123_456));
        assert_eq!(executions("no stats"), None);
    }

    #[test]
    fn every_target_is_a_fuzz_bin() {
        let manifest = include_str!("../../fuzz/Cargo.toml");
        for t in TARGETS {
            assert!(manifest.contains(&format!("name = \"{t}\"")), "{t}");
        }
    }
}
