// SPDX-License-Identifier: GPL-2.0-only
//! `replay_json`: `schedmath replay TRACE --json` (host/src/replay) as JSON text, plus
//! the mode, profile and what-if flag of the report.

use std::path::PathBuf;

use pyo3::prelude::*;
use schedmath_host::replay::{run, ReplayArgs};

use crate::to_py;

fn report(args: &ReplayArgs) -> anyhow::Result<String> {
    let r = run(args)?;
    let mut v = r.to_json();
    v["mode"] = serde_json::json!(r.mode);
    v["profile"] = serde_json::json!(r.profile.to_string());
    v["what_if"] = serde_json::json!(r.what_if);
    Ok(v.to_string())
}

/// See the module doc. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (trace, profile, kernel, infer))]
pub fn replay_json(
    py: Python<'_>,
    trace: PathBuf,
    profile: Option<String>,
    kernel: Option<String>,
    infer: bool,
) -> PyResult<String> {
    let args = ReplayArgs {
        trace,
        profile,
        kernel,
        infer,
        json: true,
    };
    py.detach(|| report(&args)).map_err(to_py)
}
