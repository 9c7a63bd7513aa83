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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Verify(args) => schedmath_host::verify::run(
            &args,
            &PathBuf::from("fixtures/kernel"),
            &mut std::io::stdout().lock(),
        ),
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
