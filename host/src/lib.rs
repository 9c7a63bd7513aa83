// SPDX-License-Identifier: GPL-2.0-only
//! schedmath-host: drives the `schedmath` core from kernel fixtures, platform files and
//! workloads, and reports what the kernel would compute.

pub mod docs;
pub mod fixtures;
pub mod governor;
pub mod idle;
pub mod limits;
pub mod platform;
pub mod replay;
pub mod rng;
pub mod see;
pub mod sim;
pub mod study;
pub mod sweep;
pub mod text;
pub mod trace;
pub mod verify;
pub mod versus;
pub mod workload;

/// An error and its causes, each cause once: a cause whose text the message already
/// holds (a `thiserror` variant that prints its `source`, an OS error already quoted) is
/// not repeated.
pub fn error_message(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

/// The exit code of a command that reports success (`Ok(true)`), a failed check
/// (`Ok(false)`: 1) or an error (printed to stderr: 2). Shared by `schedmath` and xtask.
pub fn exit_code(result: anyhow::Result<bool>) -> std::process::ExitCode {
    match result {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {}", error_message(&e));
            std::process::ExitCode::from(2)
        }
    }
}
