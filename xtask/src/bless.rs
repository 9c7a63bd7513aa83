// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask bless`: re-measure everything the docs and snapshots quote, in one
//! command (the shape of defmt's xtask: run the real thing, write what it printed).
//!
//! 1. README.md's generated parts ([`schedmath_host::docs::bless_readme`]): the profile
//!    list from the core's table, every study table from `schedmath study NAME` and every
//!    simulator-vs-kernel table from `schedmath versus DIR`.
//! 2. Every insta snapshot: the workspace tests run with `INSTA_UPDATE=always` and
//!    `INSTA_FORCE_PASS=1`, so each `.snap` is rewritten with what the code prints now.
//! 3. The workspace tests again, plainly: they must pass on what was written.
//!
//! Review the result with `git diff` before committing: a changed number is a changed
//! behaviour.

use std::io::Write;
use std::path::Path;
use std::process::Command;

fn cargo_test(root: &Path, bless: bool) -> anyhow::Result<bool> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["test", "--workspace", "--quiet"]);
    if bless {
        cmd.env("INSTA_UPDATE", "always")
            .env("INSTA_FORCE_PASS", "1");
    }
    Ok(cmd.status()?.success())
}

/// Runs the three steps; `Ok(false)` when the final test run fails.
pub fn run(root: &Path, out: &mut dyn Write) -> anyhow::Result<bool> {
    let path = root.join("README.md");
    let readme = std::fs::read_to_string(&path)?;
    let blessed = schedmath_host::docs::bless_readme(&readme, root)?;
    if blessed != readme {
        std::fs::write(&path, &blessed)?;
        writeln!(out, "bless: README.md rewritten")?;
    } else {
        writeln!(out, "bless: README.md unchanged")?;
    }
    writeln!(
        out,
        "bless: rewriting insta snapshots (cargo test --workspace)"
    )?;
    cargo_test(root, true)?;
    writeln!(out, "bless: checking (cargo test --workspace)")?;
    let ok = cargo_test(root, false)?;
    writeln!(
        out,
        "bless: {}; review with `git diff`",
        if ok { "tests pass" } else { "tests FAIL" }
    )?;
    Ok(ok)
}
