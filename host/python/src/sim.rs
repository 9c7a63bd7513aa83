// SPDX-License-Identifier: GPL-2.0-only
//! `simulate_json`: the simulator on a platform file and a workload file, as
//! `schedmath simulate --json` runs it (same loading, validation and defaults), returning
//! the metrics object as JSON text.

use std::path::Path;

use pyo3::prelude::*;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate_with_progress, tasks_from_workload, SimConfig};
use schedmath_host::workload::Workload;

use crate::to_py;

/// The CLI's default simulated time when neither `duration` nor the workload gives one.
const DEFAULT_DURATION_NS: u64 = 10_000_000_000;

fn run(
    platform: &Path,
    workload: &Path,
    profile: &str,
    duration_ns: Option<u64>,
    seed: u64,
    hz: u32,
) -> anyhow::Result<String> {
    let platform = Platform::load(platform)?;
    let w = Workload::load(workload)?;
    w.validate(platform.nr_cpus())?;
    let tasks = tasks_from_workload(&w)?;
    let profile =
        schedmath::Profile::from_name(profile).map_err(|e| anyhow::anyhow!("--profile: {e}"))?;
    let cfg = SimConfig {
        duration_ns: duration_ns
            .or(w.global.duration_ns)
            .unwrap_or(DEFAULT_DURATION_NS),
        hz,
        seed,
    };
    let m = simulate_with_progress(
        &platform,
        &tasks,
        &w.global.irq_pct,
        &profile,
        &cfg,
        &mut |_| {},
    )?;
    Ok(serde_json::to_string(&m)?)
}

/// See the module doc. The simulation runs without the GIL.
#[pyfunction]
#[pyo3(signature = (platform, workload, profile, duration_ns, seed, hz))]
pub fn simulate_json(
    py: Python<'_>,
    platform: std::path::PathBuf,
    workload: std::path::PathBuf,
    profile: String,
    duration_ns: Option<u64>,
    seed: u64,
    hz: u32,
) -> PyResult<String> {
    py.detach(|| run(&platform, &workload, &profile, duration_ns, seed, hz))
        .map_err(to_py)
}
