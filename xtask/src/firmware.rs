// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask firmware`: the example power-manager firmware
//! (`xtask/target-runner/src/bin/power_manager.rs`) built for thumbv7em-none-eabihf, run
//! under QEMU (mps2-an386, Cortex-M4F), its defmt log decoded and compared line for line
//! with `xtask/firmware-snapshot.txt` (`--bless` rewrites the snapshot).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use object::{Object, ObjectSection};

/// The firmware's target and QEMU machine.
pub const TARGET: &str = "thumbv7em-none-eabihf";
const CPU: &str = "cortex-m4";
const MACHINE: &str = "mps2-an386";
/// The committed log, relative to the workspace root.
pub const SNAPSHOT: &str = "xtask/firmware-snapshot.txt";

/// Builds the firmware (release: opt-level s, LTO); returns the ELF.
pub fn build(root: &Path) -> anyhow::Result<PathBuf> {
    let target_dir = root.join("target/target-runner");
    let status = crate::embedded::cargo()
        .current_dir(root.join("xtask/target-runner"))
        .args([
            "build",
            "--release",
            "--quiet",
            "--bin",
            "power_manager",
            "--target",
            TARGET,
            "--target-dir",
        ])
        .arg(&target_dir)
        .status()
        .context("running cargo build for the firmware")?;
    if !status.success() {
        bail!("building power_manager for {TARGET} failed (is the target installed? `rustup target add {TARGET}`)");
    }
    Ok(target_dir.join(TARGET).join("release/power_manager"))
}

/// `.text` and `.rodata` bytes of an ELF.
pub fn text_rodata(elf: &Path) -> anyhow::Result<(u64, u64)> {
    let data = std::fs::read(elf).with_context(|| elf.display().to_string())?;
    let file = object::File::parse(&*data)?;
    let size = |name: &str| file.section_by_name(name).map_or(0, |s| s.size());
    Ok((size(".text"), size(".rodata")))
}

/// Runs the firmware under QEMU; returns its decoded log lines.
pub fn run_log(root: &Path) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let elf = build(root)?;
    let out = Command::new("qemu-system-arm")
        .args([
            "-cpu", CPU, "-machine", MACHINE, "-display", "none", "-monitor", "none", "-serial",
            "none",
        ])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(&elf)
        .output()
        .context("running qemu-system-arm (apt-get install -y qemu-system-arm)")?;
    let lines = crate::target::decode(&elf, &out.stdout)?;
    if !out.status.success() || !lines.last().is_some_and(|l| l.starts_with("done ")) {
        bail!(
            "the firmware did not finish (qemu exit {:?}); last lines: {:?}; stderr: {}",
            out.status.code(),
            lines.iter().rev().take(3).collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok((elf, lines))
}

/// `cargo xtask firmware [--bless]`: returns whether the log equals the snapshot.
pub fn run(root: &Path, bless: bool, w: &mut impl Write) -> anyhow::Result<bool> {
    let (elf, lines) = run_log(root)?;
    let log = lines.join("\n") + "\n";
    let (text, rodata) = text_rodata(&elf)?;
    let snap = root.join(SNAPSHOT);
    if bless {
        std::fs::write(&snap, &log)?;
        writeln!(w, "wrote {SNAPSHOT} ({} lines)", lines.len())?;
    }
    let expected = std::fs::read_to_string(&snap).with_context(|| {
        format!(
            "{} (create it with `cargo xtask firmware --bless`)",
            snap.display()
        )
    })?;
    writeln!(
        w,
        "power_manager on qemu {MACHINE} ({TARGET}): {} log lines, .text {text} bytes, .rodata {rodata} bytes",
        lines.len()
    )?;
    if expected == log {
        writeln!(w, "firmware: log equals {SNAPSHOT}")?;
        return Ok(true);
    }
    let exp: Vec<&str> = expected.lines().collect();
    let mut shown = 0;
    for i in 0..exp.len().max(lines.len()) {
        let (e, g) = (exp.get(i).copied(), lines.get(i).map(String::as_str));
        if e != g && shown < 10 {
            writeln!(
                w,
                "line {}: expected {:?}, got {:?}",
                i + 1,
                e.unwrap_or("<none>"),
                g.unwrap_or("<none>")
            )?;
            shown += 1;
        }
    }
    writeln!(w, "FAILED: the firmware log differs from {SNAPSHOT} (`cargo xtask firmware --bless` if the change is intended)")?;
    Ok(false)
}
