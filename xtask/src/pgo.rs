// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask pgo-bench`: the simulator benchmark built with profile-guided optimisation.
//!
//! The simulator's wall time is front-end bound, not memory bound (cachegrind of the
//! 10 s run: D1 miss rate 0.2 %, but about 0.8 % I1 misses and a branch every 7
//! instructions — BENCHMARKS.md), which is what PGO's block layout, hot/cold splitting and
//! inlining decisions address. Steps, all with stock tools:
//!
//! 1. the benchmark built with the `sim-bench` profile and `-Cprofile-generate` into
//!    `target/pgo/gen` (`cargo bench --no-run`, which also builds the CLI against the
//!    same `schedmath-host` library: a plain `cargo build` of the CLI resolves the
//!    dependencies' features without the benchmark's dev-dependencies, which gives the
//!    library another symbol hash, and the profile would then match none of the
//!    benchmark's functions);
//! 2. that CLI runs [`TRAINING`] (several platforms, workloads and profiles, not only the
//!    benchmark's scenario), writing `.profraw` files to `target/pgo/raw`;
//! 3. `llvm-profdata merge` (rustup's `llvm-tools` component, installed when missing)
//!    into `target/pgo/sim.profdata`;
//! 4. `cargo bench -p schedmath-host --bench sim_functional --profile sim-bench` with
//!    `-Cprofile-use` into `target/pgo/use`, with the arguments after `--` (criterion's
//!    filter and options, or `--no-run`).
//!
//! Only this benchmark's build uses the profile: `release`, `bench` and `sim-bench`
//! themselves do not change, and the results of a PGO build are those of any other build
//! (the optimiser may not change what the code computes).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use crate::embedded::cargo;

/// What the instrumented CLI runs: (platform, workload, profile, simulated seconds).
/// The benchmark's scenario plus the other platforms, workload kinds (rt-app JSON, task
/// groups, synchronisation, phases) and profiles (CFS, teo/menu, PELT variants), so the
/// profile is the simulator's, not one scenario's.
pub const TRAINING: &[(&str, &str, &str, u32)] = &[
    (
        "m1pro-8c",
        "scenarios/busy-plus-4x5pct.toml",
        "mainline",
        20,
    ),
    ("m1pro-8c", "scenarios/busy-plus-4x5pct.toml", "fair-cfs", 5),
    (
        "laptop-2c4t",
        "scenarios/busy-plus-4x5pct.toml",
        "mainline",
        5,
    ),
    ("pixel6", "scenarios/teo-fixes/hackbench.json", "menu", 5),
    ("pixel6", "scenarios/teo-fixes/timer.json", "teo-v6.6", 5),
    (
        "pixel6",
        "scenarios/pelt-halflife/ui60.json",
        "pelt-hl16",
        5,
    ),
    (
        "rk3399",
        "scenarios/sched-idle-select/t2-g8.json",
        "mainline",
        5,
    ),
    ("orion-o6", "workloads/idle-group.json", "mainline", 5),
    ("m1pro-10c", "workloads/sync.json", "mainline", 5),
    (
        "m1pro-8c",
        "workloads/phases.json",
        "ou-lone-task+pelt-mult4",
        5,
    ),
    (
        "pixel6",
        "workloads/small-and-busy.json",
        "util-est-pre-v6.9",
        5,
    ),
];

#[derive(clap::Args, Debug, Clone)]
pub struct PgoArgs {
    /// Passed to `cargo bench` after `--` (e.g. `'10s$' --measurement-time 20`), or
    /// `--no-run` first to build only.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub bench_args: Vec<String>,
}

/// `rustc --print sysroot` and the host triple.
fn rustc_sysroot_and_host() -> anyhow::Result<(PathBuf, String)> {
    let out = |args: &[&str]| -> anyhow::Result<String> {
        let o = Command::new("rustc")
            .args(args)
            .output()
            .context("running rustc")?;
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let sysroot = PathBuf::from(out(&["--print", "sysroot"])?.trim());
    let vv = out(&["-vV"])?;
    let host = vv
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .context("`rustc -vV` names no host")?;
    Ok((sysroot, host.to_string()))
}

/// rustup's `llvm-profdata` (the one matching rustc's LLVM), installed when missing.
fn llvm_profdata(w: &mut dyn Write) -> anyhow::Result<PathBuf> {
    let (sysroot, host) = rustc_sysroot_and_host()?;
    let tool = sysroot.join(format!("lib/rustlib/{host}/bin/llvm-profdata"));
    if !tool.exists() {
        writeln!(w, "pgo: installing rustup's llvm-tools component")?;
        let ok = Command::new("rustup")
            .args(["component", "add", "llvm-tools-preview"])
            .status()
            .context("running rustup")?
            .success();
        if !ok || !tool.exists() {
            bail!(
                "{} not found: `rustup component add llvm-tools-preview` did not provide it",
                tool.display()
            );
        }
    }
    Ok(tool)
}

fn run(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    if !cmd
        .status()
        .with_context(|| format!("running {what}"))?
        .success()
    {
        bail!("{what} failed");
    }
    Ok(())
}

/// The four steps of the module doc; `Ok(false)` never (a failed step is an error).
pub fn pgo_bench(root: &Path, args: &PgoArgs, w: &mut dyn Write) -> anyhow::Result<bool> {
    let profdata_tool = llvm_profdata(w)?;
    let dir = root.join("target/pgo");
    let raw = dir.join("raw");
    let merged = dir.join("sim.profdata");
    if raw.exists() {
        std::fs::remove_dir_all(&raw).with_context(|| format!("removing {}", raw.display()))?;
    }
    writeln!(w, "pgo: 1/4 instrumented build (target/pgo/gen)")?;
    run(
        cargo()
            .current_dir(root)
            .env("CARGO_TARGET_DIR", dir.join("gen"))
            .env("RUSTFLAGS", format!("-Cprofile-generate={}", raw.display()))
            .args([
                "bench",
                "--no-run",
                "--profile",
                "sim-bench",
                "-p",
                "schedmath-host",
            ])
            .args(["--bench", "sim_functional"]),
        "the instrumented build",
    )?;
    writeln!(w, "pgo: 2/4 training runs ({})", TRAINING.len())?;
    let cli = dir.join("gen/sim-bench/schedmath");
    for (platform, workload, profile, secs) in TRAINING {
        let fx = root.join("fixtures");
        let status = Command::new(&cli)
            .arg("simulate")
            .arg("--platform")
            .arg(fx.join(format!("platforms/{platform}.toml")))
            .arg("--workload")
            .arg(fx.join(workload))
            .args([
                "--profile",
                profile,
                "--duration",
                &secs.to_string(),
                "--json",
            ])
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {}", cli.display()))?;
        if !status.success() {
            bail!("training run {platform} {workload} {profile} failed");
        }
    }
    writeln!(w, "pgo: 3/4 llvm-profdata merge -> target/pgo/sim.profdata")?;
    run(
        Command::new(&profdata_tool)
            .arg("merge")
            .arg("-o")
            .arg(&merged)
            .arg(&raw),
        "llvm-profdata merge",
    )?;
    writeln!(w, "pgo: 4/4 cargo bench with the profile (target/pgo/use)")?;
    let use_flags = format!(
        "-Cprofile-use={} -Cllvm-args=-no-pgo-warn-mismatch",
        merged.display()
    );
    let (cargo_args, bench_args): (Vec<&String>, Vec<&String>) =
        args.bench_args.iter().partition(|a| *a == "--no-run");
    run(
        cargo()
            .current_dir(root.join("host"))
            .env("CARGO_TARGET_DIR", dir.join("use"))
            .env("RUSTFLAGS", use_flags)
            .args(["bench", "-p", "schedmath-host", "--bench", "sim_functional"])
            .args(["--profile", "sim-bench"])
            .args(cargo_args)
            .arg("--")
            .args(bench_args),
        "the PGO benchmark",
    )?;
    Ok(true)
}
