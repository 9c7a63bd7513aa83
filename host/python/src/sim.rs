// SPDX-License-Identifier: GPL-2.0-only
//! `simulate_json`: the simulator on a platform file and a workload file, as
//! `schedmath simulate --json` runs it (same loading, validation and defaults), returning
//! the metrics object as JSON text and, when recorded, the run's events (the `.csv`
//! trace text) and its signals (`schedmath_host::see::signals` rows as columns): both
//! read from the one recording the trace files and plots are written from.

use std::path::Path;

use pyo3::prelude::*;
use schedmath_host::platform::Platform;
use schedmath_host::see::signals::Signals;
use schedmath_host::sim::{
    simulate_traced, simulate_with_progress, tasks_from_workload, SimConfig,
};
use schedmath_host::trace::write::{write_to, Format};
use schedmath_host::workload::Workload;

use crate::to_py;

/// The CLI's default simulated time when neither `duration` nor the workload gives one.
const DEFAULT_DURATION_NS: u64 = 10_000_000_000;

/// The signals as columns: time (ns), entity, signal, value.
type SignalCols = (Vec<u64>, Vec<String>, Vec<&'static str>, Vec<i64>);

/// What a run returns: metrics JSON, and when recorded the events CSV and the signals.
type RunOut = (String, Option<(String, SignalCols)>);

fn run(
    platform: &Path,
    workload: &Path,
    profile: &str,
    duration_ns: Option<u64>,
    seed: u64,
    hz: u32,
    record: bool,
) -> anyhow::Result<RunOut> {
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
    let irq = &w.global.irq_pct;
    if !record {
        let m = simulate_with_progress(&platform, &tasks, irq, &profile, &cfg, &mut |_| {})?;
        return Ok((serde_json::to_string(&m)?, None));
    }
    let (m, t) = simulate_traced(&platform, &tasks, irq, &profile, &cfg, &mut |_| {})?;
    let mut csv = Vec::new();
    write_to(&t, Format::Csv, &mut csv)?;
    let mut cols: SignalCols = Default::default();
    for (ts, entity, signal, value) in Signals::of(&t).rows() {
        cols.0.push(ts);
        cols.1.push(entity);
        cols.2.push(signal);
        cols.3.push(value);
    }
    Ok((
        serde_json::to_string(&m)?,
        Some((String::from_utf8(csv)?, cols)),
    ))
}

/// See the module doc. The simulation runs without the GIL.
// The arguments are Python's keyword arguments, one for one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (platform, workload, profile, duration_ns, seed, hz, record=false))]
pub fn simulate_json(
    py: Python<'_>,
    platform: std::path::PathBuf,
    workload: std::path::PathBuf,
    profile: String,
    duration_ns: Option<u64>,
    seed: u64,
    hz: u32,
    record: bool,
) -> PyResult<RunOut> {
    py.detach(|| {
        run(
            &platform,
            &workload,
            &profile,
            duration_ns,
            seed,
            hz,
            record,
        )
    })
    .map_err(to_py)
}
