// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask lab compare WORKLOAD --kernel K`: the committed capture
//! `fixtures/lab/<kernel>/<WORKLOAD>/` beside the simulator (`schedmath versus`, README
//! "Simulator vs kernel"). `K` is a series (`6.1`, `6.12`) or a full `uname -r`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The capture folder of `workload` on the kernel named `kernel`.
pub fn capture_dir(root: &Path, workload: &str, kernel: &str) -> anyhow::Result<PathBuf> {
    let lab = root.join("fixtures/lab");
    let mut kernels: Vec<String> = std::fs::read_dir(&lab)
        .with_context(|| lab.display().to_string())?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "workloads")
        .collect();
    kernels.sort();
    // `6.1` must not pick `6.12...`: the series is followed by `.`, `-` or `+`.
    let matches = |n: &str| {
        n == kernel
            || n.strip_prefix(kernel)
                .is_some_and(|rest| rest.starts_with(['.', '-', '+']))
    };
    let k = kernels.iter().find(|n| matches(n)).with_context(|| {
        format!(
            "no capture of kernel `{kernel}` in {} (have: {kernels:?})",
            lab.display()
        )
    })?;
    let dir = lab.join(k).join(workload);
    anyhow::ensure!(dir.is_dir(), "no capture {}", dir.display());
    Ok(dir)
}

/// Prints the simulator-vs-kernel table of one capture.
pub fn compare(
    root: &Path,
    workload: &str,
    kernel: &str,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let dir = capture_dir(root, workload, kernel)?;
    let (cap, k, m) = schedmath_host::versus::run(&dir, None)?;
    out.write_all(schedmath_host::versus::render(&cap, &k, &m).as_bytes())?;
    Ok(true)
}
