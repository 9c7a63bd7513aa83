// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask verify --target T`: the fixture suites on a Cortex-M under QEMU.
//!
//! 1. The selected JSON suites are turned into the binary case stream
//!    (`schedmath_conformance::record`), `target/embedded/<T>/cases.bin`.
//! 2. `xtask/target-runner` is built for T (release, LTO) and started in
//!    `qemu-system-arm` with semihosting; it reads the stream from the host a frame at a
//!    time and runs every case on the core.
//! 3. Its defmt output (semihosting stdout) is decoded with the ELF's defmt table and
//!    printed as the same table and closing line as the host verifier.
//!
//! Suites with a `fn` that has no typed driver yet cannot run on the target; each is named
//! on a `SKIPPED:` line, never dropped silently.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context};
use schedmath_conformance::record::Record;
use schedmath_conformance::registry::{self, json};
use schedmath_conformance::Encoded;
use schedmath_host::fixtures::SuiteFile;
use schedmath_host::verify::{self, Failure, SuiteResult, VerifyArgs};

/// A QEMU machine for a Rust target.
struct Machine {
    target: &'static str,
    cpu: &'static str,
    machine: &'static str,
}

const MACHINES: &[Machine] = &[
    Machine {
        target: "thumbv7m-none-eabi",
        cpu: "cortex-m3",
        machine: "lm3s6965evb",
    },
    Machine {
        target: "thumbv7em-none-eabihf",
        cpu: "cortex-m4",
        machine: "mps2-an386",
    },
];

fn frame(out: &mut Vec<u8>, r: &Record<'_>) -> anyhow::Result<()> {
    let bytes = postcard::to_stdvec(r)?;
    if bytes.len() > schedmath_conformance::record::MAX_FRAME {
        bail!(
            "a record of {} bytes exceeds the target's frame size",
            bytes.len()
        );
    }
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&bytes);
    Ok(())
}

/// What `encode` produced.
struct Stream<'a> {
    /// The framed records.
    bytes: Vec<u8>,
    /// The suites it carries, in order.
    run: Vec<&'a SuiteFile>,
    /// Suites left out, with the `fn`s that have no typed driver.
    skipped: Vec<(String, Vec<String>)>,
    /// Why a line went out as `Broken`: (index in `run`, line) → message.
    broken: BTreeMap<(usize, usize), String>,
}

/// Encodes the suites whose every `fn` has a typed driver; returns the stream and the
/// suites left out with the `fn`s they lack.
fn encode(suites: &[SuiteFile]) -> anyhow::Result<Stream<'_>> {
    let mut out = Vec::new();
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    let mut broken = BTreeMap::new();
    for s in suites {
        let module = s.header.module();
        let mut missing: Vec<String> = s
            .cases
            .iter()
            .filter(|c| registry::kind_of(module, &c.fn_name).is_none())
            .map(|c| c.fn_name.clone())
            .collect();
        if !missing.is_empty() {
            missing.sort();
            missing.dedup();
            skipped.push((
                format!("{} ({})", s.header.suite, s.path.display()),
                missing,
            ));
            continue;
        }
        run.push(s);
        frame(
            &mut out,
            &Record::Suite {
                suite: &s.header.suite,
                variant: &s.header.variant,
            },
        )?;
        let mut lines: Vec<(usize, Option<&schedmath_host::fixtures::Case>)> =
            s.cases.iter().map(|c| (c.line, Some(c))).collect();
        lines.extend(s.bad_lines.iter().map(|b| (b.line, None)));
        lines.sort_by_key(|(l, _)| *l);
        for (line, case) in lines {
            let suite_idx = run.len() - 1;
            let Some(case) = case else {
                let msg = s
                    .bad_lines
                    .iter()
                    .find(|b| b.line == line)
                    .map(|b| b.msg.clone());
                broken.insert((suite_idx, line), msg.unwrap_or_default());
                frame(&mut out, &Record::Broken { line: line as u32 })?;
                continue;
            };
            let kind =
                registry::kind_of(module, &case.fn_name).ok_or_else(|| anyhow!("unreachable"))?;
            let loc = || format!("{}:{}: case {}", s.path.display(), line, case.id);
            let encoded = match json::encode(kind, &case.input, &case.out) {
                Ok(e) => e,
                // As on the host: a case that cannot be read fails alone, the run goes on.
                Err(e) => {
                    broken.insert((suite_idx, line), format!("case {}: {e}", case.id));
                    frame(&mut out, &Record::Broken { line: line as u32 })?;
                    continue;
                }
            };
            match encoded {
                Encoded::Case(input, expected) => {
                    let registry::Kind::Case(kind) = kind else {
                        bail!("{}: kind mix-up", loc())
                    };
                    frame(
                        &mut out,
                        &Record::Case {
                            kind,
                            id: &case.id,
                            input: &input,
                            expected: &expected,
                        },
                    )?;
                }
                Encoded::Seq(init, ops) => {
                    let registry::Kind::Seq(kind) = kind else {
                        bail!("{}: kind mix-up", loc())
                    };
                    frame(
                        &mut out,
                        &Record::SeqStart {
                            kind,
                            id: &case.id,
                            init: &init,
                        },
                    )?;
                    for (op, expected) in &ops {
                        frame(&mut out, &Record::SeqOp { op, expected })?;
                    }
                    frame(&mut out, &Record::SeqEnd)?;
                }
            }
        }
        frame(&mut out, &Record::SuiteEnd)?;
    }
    frame(&mut out, &Record::End)?;
    Ok(Stream {
        bytes: out,
        run,
        skipped,
        broken,
    })
}

fn build_runner(root: &Path, m: &Machine) -> anyhow::Result<PathBuf> {
    let dir = root.join("xtask/target-runner");
    let target_dir = root.join("target/target-runner");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&dir)
        .args([
            "build",
            "--release",
            "--quiet",
            "--target",
            m.target,
            "--target-dir",
        ])
        .arg(&target_dir)
        .status()
        .context("running cargo build for the target runner")?;
    if !status.success() {
        bail!("building xtask/target-runner for {} failed (is the target installed? `rustup target add {}`)", m.target, m.target);
    }
    Ok(target_dir
        .join(m.target)
        .join("release/schedmath-target-runner"))
}

/// Decodes the runner's defmt frames into message lines.
pub(crate) fn decode(elf: &Path, bytes: &[u8]) -> anyhow::Result<Vec<String>> {
    let elf_bytes = std::fs::read(elf).with_context(|| format!("{}", elf.display()))?;
    let table = defmt_decoder::Table::parse(&elf_bytes)
        .map_err(|e| anyhow!("{}: defmt table: {e}", elf.display()))?
        .ok_or_else(|| anyhow!("{}: no defmt data", elf.display()))?;
    let mut decoder = table.new_stream_decoder();
    decoder.received(bytes);
    let mut lines = Vec::new();
    loop {
        match decoder.decode() {
            Ok(frame) => lines.push(frame.display_message().to_string()),
            Err(defmt_decoder::DecodeError::UnexpectedEof) => break,
            Err(defmt_decoder::DecodeError::Malformed) => {
                bail!("malformed defmt frame from the target")
            }
        }
    }
    Ok(lines)
}

/// Runs `verify` on an embedded target; returns whether every run case passed.
pub fn run(
    args: &VerifyArgs,
    target: &str,
    root: &Path,
    w: &mut impl Write,
) -> anyhow::Result<bool> {
    let m = MACHINES
        .iter()
        .find(|m| m.target == target)
        .ok_or_else(|| anyhow!("unsupported target {target} (supported: thumbv7m-none-eabi, thumbv7em-none-eabihf)"))?;
    let suites = verify::select_suites(args, &root.join("fixtures/kernel"))?;
    let stream = encode(&suites)?;
    let work = root.join("target/embedded").join(m.target);
    std::fs::create_dir_all(&work)?;
    std::fs::write(work.join("cases.bin"), &stream.bytes)?;
    let elf = build_runner(root, m)?;
    let out = Command::new("qemu-system-arm")
        .current_dir(&work)
        .args([
            "-cpu", m.cpu, "-machine", m.machine, "-display", "none", "-monitor", "none",
            "-serial", "none",
        ])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(&elf)
        .output()
        .context("running qemu-system-arm (apt-get install -y qemu-system-arm)")?;
    let lines = decode(&elf, &out.stdout)?;
    let mut results: Vec<SuiteResult> = Vec::new();
    let mut pending: Vec<Failure> = Vec::new();
    let mut done = false;
    let mut stacks = Vec::new();
    for line in &lines {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["mismatch", _, id, op] | ["error", _, id, op] => pending.push(Failure::Target {
                id: id.to_string(),
                op: op.parse::<usize>().ok(),
                what: f[0].to_string(),
            }),
            ["error", _, id, rest @ ..] => pending.push(Failure::Target {
                id: id.to_string(),
                op: None,
                what: format!("error {}", rest.join(" ")),
            }),
            ["broken", _, l] => {
                let line = l.parse().unwrap_or(0);
                let msg = stream.broken.get(&(results.len(), line)).cloned();
                pending.push(Failure::Error {
                    line,
                    msg: msg.unwrap_or_else(|| "unreadable case line".into()),
                });
            }
            ["row", suite, variant, cases, passed, stack] => {
                stacks.push(format!(
                    "stack: {suite}  {stack} bytes below the runner loop (measured, painted stack)"
                ));
                let path = stream
                    .run
                    .get(results.len())
                    .map(|s| s.path.clone())
                    .unwrap_or_default();
                results.push(SuiteResult {
                    path,
                    suite: suite.to_string(),
                    variant: variant.to_string(),
                    cases: cases.parse()?,
                    passed: passed.parse()?,
                    failures: std::mem::take(&mut pending),
                });
            }
            ["done", ..] => done = true,
            _ => writeln!(w, "target: {line}")?,
        }
    }
    if !done || !out.status.success() {
        bail!(
            "the target run did not finish (qemu exit {:?}); last target lines: {:?}; stderr: {}",
            out.status.code(),
            lines.iter().rev().take(3).collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    writeln!(
        w,
        "target {} on qemu {} ({} bytes of cases streamed by semihosting)",
        m.target,
        m.machine,
        stream.bytes.len()
    )?;
    for line in &stacks {
        writeln!(w, "{line}")?;
    }
    for (suite, fns) in &stream.skipped {
        writeln!(
            w,
            "SKIPPED: {suite}: no target driver yet for fn {}",
            fns.join(", ")
        )?;
    }
    verify::write_report(&results, args.max_report, w)
}
