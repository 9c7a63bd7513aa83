// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath`: what would the kernel compute? (see `schedmath --help`)

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "schedmath",
    version,
    about = "The Linux scheduler's arithmetic, bit for bit, off-target"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run kernel fixture suites and compare every output field.
    ///
    /// Example: schedmath verify --fixtures fixtures/kernel --suite 'pelt/*'
    Verify(schedmath_host::verify::VerifyArgs),
    /// Replay idle periods through a cpuidle governor: per-state usage, residency and
    /// idle misses (above: too deep, below: too shallow).
    ///
    /// Example: schedmath idle --platform fixtures/platforms/rk3399.toml --cpu 0
    ///   --pattern timer:50ms --util 100 --compare teo-v6.10 teo-v6.12
    Idle(schedmath_host::idle::IdleArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Verify(args) => schedmath_host::verify::run(
            &args,
            &PathBuf::from("fixtures/kernel"),
            &mut std::io::stdout().lock(),
        ),
        Cmd::Idle(args) => {
            schedmath_host::idle::run(&args, &mut std::io::stdout().lock()).map(|()| true)
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
