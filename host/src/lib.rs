// SPDX-License-Identifier: GPL-2.0-only
//! schedmath-host: drives the `schedmath` core from kernel fixtures, platform files and
//! workloads, and reports what the kernel would compute.

pub mod docs;
pub mod fixtures;
pub mod governor;
pub mod idle;
pub mod platform;
pub mod replay;
pub mod rng;
pub mod see;
pub mod sim;
pub mod study;
pub mod text;
pub mod trace;
pub mod verify;
pub mod versus;
pub mod workload;

/// The exit code of a command that reports success (`Ok(true)`), a failed check
/// (`Ok(false)`: 1) or an error (printed to stderr: 2). Shared by `schedmath` and xtask.
pub fn exit_code(result: anyhow::Result<bool>) -> std::process::ExitCode {
    match result {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
