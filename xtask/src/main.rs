// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask <job>`: the project's jobs (alias in .cargo/config.toml).
//!
//! * `verify [--fixtures DIR]... [--suite PATTERN]`: every kernel fixture suite on the host.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "schedmath project jobs")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every kernel fixture suite (default: fixtures/kernel/) and compare bit for bit.
    ///
    /// Example: cargo xtask verify --fixtures /tmp/more-pelt-cases --suite se_sequence
    Verify(schedmath_host::verify::VerifyArgs),
}

/// The workspace root (xtask lives one level below it).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Verify(args) => schedmath_host::verify::run(
            &args,
            &workspace_root().join("fixtures/kernel"),
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
