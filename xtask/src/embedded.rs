// SPDX-License-Identifier: GPL-2.0-only
//! Firmware-facing checks of the core: `cargo xtask panic-check` and `cargo xtask size`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context};
use object::{Object, ObjectSection, ObjectSymbol};

const PROBE_TARGET: &str = "thumbv7m-none-eabi";

/// `cargo` as the xtask was started (`$CARGO`), for the builds the jobs run.
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Builds `panic_probe` (release, thumbv7m); returns the ELF path, or the linker's words.
fn build_probe(root: &Path, inject: bool) -> anyhow::Result<Result<PathBuf, String>> {
    let target_dir = root.join("target/target-runner");
    let mut cmd = cargo();
    cmd.current_dir(root.join("xtask/target-runner"))
        .args([
            "build",
            "--release",
            "--bin",
            "panic_probe",
            "--target",
            PROBE_TARGET,
            "--target-dir",
        ])
        .arg(&target_dir);
    if inject {
        cmd.args(["--features", "inject-panic"]);
    }
    let out = cmd
        .output()
        .context("running cargo build for panic_probe")?;
    if out.status.success() {
        return Ok(Ok(target_dir
            .join(PROBE_TARGET)
            .join("release/panic_probe")));
    }
    Ok(Err(String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// `panic-check`: the probe links (no panic path) — or, with `inject`, must fail to link
/// on the deliberate one. Returns whether the expectation held.
pub fn panic_check(root: &Path, inject: bool, w: &mut impl Write) -> anyhow::Result<bool> {
    let built = build_probe(root, inject)?;
    let caught = matches!(&built, Err(e) if e.contains("schedmath_core_has_a_panic_path"));
    match (&built, inject) {
        (Ok(_), false) => writeln!(w, "panic-check: no panic path in the core (panic_probe links, {PROBE_TARGET}, release)")?,
        (Err(_), true) if caught => writeln!(w, "panic-check --inject: the deliberate panic path was caught (link failed on schedmath_core_has_a_panic_path)")?,
        (Ok(_), true) => writeln!(w, "panic-check --inject: FAILED: the deliberate panic path linked; the check proves nothing")?,
        (Err(e), _) if caught => writeln!(w, "panic-check: FAILED: a core entry point can panic:\n{}", tail(e))?,
        (Err(e), _) => bail!("panic_probe did not build for another reason:\n{}", tail(e)),
    }
    Ok(built.is_ok() != inject)
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// The module a (demangled) core symbol belongs to: `schedmath::pelt::x` → `pelt`.
fn module_of(name: &str) -> Option<String> {
    let rest = name.split("schedmath::").nth(1)?;
    let module = rest.split("::").next()?;
    let module = module.split(['<', '>', ' ']).next().unwrap_or(module);
    (!module.is_empty()).then(|| module.to_string())
}

fn section_kind(name: &str) -> Option<usize> {
    if name.starts_with(".text") {
        Some(0)
    } else if name.starts_with(".rodata") {
        Some(1)
    } else {
        None
    }
}

/// `size`: per-module `.text`/`.rodata` of the core compiled for thumbv7m (release), the
/// totals of the firmware-like panic_probe binary that calls every entry point, and those
/// of the example power-manager firmware.
pub fn size(root: &Path, w: &mut impl Write) -> anyhow::Result<()> {
    let target_dir = root.join("target/size");
    let status = cargo()
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "-p",
            "schedmath",
            "--release",
            "--no-default-features",
            "--target",
            PROBE_TARGET,
            "--target-dir",
        ])
        .arg(&target_dir)
        .status()?;
    if !status.success() {
        bail!("building the core for {PROBE_TARGET} failed");
    }
    let rlib = target_dir
        .join(PROBE_TARGET)
        .join("release/libschedmath.rlib");
    let data = std::fs::read(&rlib).with_context(|| rlib.display().to_string())?;
    let archive = object::read::archive::ArchiveFile::parse(&*data)?;
    let mut per_module: BTreeMap<String, [u64; 2]> = BTreeMap::new();
    for member in archive.members() {
        let member = member?;
        let name = String::from_utf8_lossy(member.name()).into_owned();
        if !name.ends_with(".o") {
            continue;
        }
        let file = object::File::parse(member.data(&*data)?)?;
        for sym in file.symbols() {
            let (Some(idx), Ok(raw)) = (sym.section_index(), sym.name()) else {
                continue;
            };
            let Ok(section) = file.section_by_index(idx) else {
                continue;
            };
            let Some(kind) = section_kind(section.name().unwrap_or_default()) else {
                continue;
            };
            let demangled = rustc_demangle::demangle(raw).to_string();
            let module = module_of(&demangled).unwrap_or_else(|| "(other)".into());
            per_module.entry(module).or_default()[kind] += sym.size();
        }
    }
    writeln!(w, "core (schedmath) for {PROBE_TARGET}, release, opt-level 3: code per module (symbols emitted in the rlib; #[inline] helpers count where they are used)")?;
    writeln!(w, "{:16} {:>8} {:>8}", "module", ".text", ".rodata")?;
    for (m, [text, ro]) in &per_module {
        writeln!(w, "{m:16} {text:>8} {ro:>8}")?;
    }
    let probe = build_probe(root, false)?.map_err(|e| anyhow!("panic_probe: {}", tail(&e)))?;
    let elf = std::fs::read(&probe)?;
    let file = object::File::parse(&*elf)?;
    let mut totals = [0u64; 2];
    for s in file.sections() {
        if let Some(kind) = section_kind(s.name().unwrap_or_default()) {
            totals[kind] += s.size();
        }
    }
    writeln!(
        w,
        "panic_probe (every entry point + cortex-m-rt, opt-level s, LTO): .text {} bytes, .rodata {} bytes",
        totals[0], totals[1]
    )?;
    let fw = crate::firmware::build(root)?;
    let (text, rodata) = crate::firmware::text_rodata(&fw)?;
    writeln!(
        w,
        "power_manager firmware ({}, PELT + util_est + schedutil + teo + defmt, opt-level s, LTO): .text {text} bytes, .rodata {rodata} bytes (goal: .text <= 24576)",
        crate::firmware::TARGET
    )?;
    Ok(())
}
