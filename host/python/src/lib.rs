// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath._schedmath`: the native half of the `schedmath` Python package.
//!
//! Thin PyO3 glue over the core (`schedmath`) and the host library (`schedmath-host`):
//! no scheduler arithmetic lives here. Arrays cross the boundary as little-endian `u64`
//! byte strings (numpy's `tobytes()` / `frombuffer()`), so a 10 000-row series costs two
//! copies instead of 10 000 Python objects. Errors become `schedmath.SchedmathError`
//! with the text the CLI prints after `error: ` (anyhow's `{:#}` chain: file, line, field).

mod pelt;
mod replay;
mod sim;
mod verify;

use pyo3::prelude::*;

pyo3::create_exception!(
    _schedmath,
    SchedmathError,
    pyo3::exceptions::PyException,
    "An input the host library refused (bad file, line or field), with the CLI's message."
);

/// anyhow error → `SchedmathError` with the CLI's `{:#}` text.
pub(crate) fn to_py(e: anyhow::Error) -> PyErr {
    SchedmathError::new_err(format!("{e:#}"))
}

#[pymodule]
fn _schedmath(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SchedmathError", m.py().get_type::<SchedmathError>())?;
    m.add_function(wrap_pyfunction!(pelt::pelt_series, m)?)?;
    m.add_function(wrap_pyfunction!(sim::simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(verify::verify_suites, m)?)?;
    m.add_function(wrap_pyfunction!(replay::replay_json, m)?)?;
    Ok(())
}
