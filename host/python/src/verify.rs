// SPDX-License-Identifier: GPL-2.0-only
//! `verify_suites`: `schedmath verify --fixtures DIR [--suite P]` as rows, one per suite
//! file, with the failure lines the CLI prints for it.

use std::path::PathBuf;

use pyo3::prelude::*;
use schedmath_host::verify::{run_parallel, select_suites, write_failures, VerifyArgs};

use crate::to_py;

/// One suite: (path, suite, variant, cases, passed, failure lines).
type Row = (String, String, String, usize, usize, Vec<String>);

fn run(args: &VerifyArgs) -> anyhow::Result<Vec<Row>> {
    // The CLI's default directory is only used without `--fixtures`; the binding always
    // passes one, so this placeholder is never read.
    let suites = select_suites(args, &PathBuf::from("fixtures/kernel"))?;
    let mut rows = Vec::with_capacity(suites.len());
    for r in run_parallel(&suites) {
        let mut text = Vec::new();
        write_failures(&r, args.max_report, &mut text)?;
        let lines = String::from_utf8_lossy(&text)
            .lines()
            .map(str::to_string)
            .collect();
        rows.push((
            r.path.display().to_string(),
            r.suite,
            r.variant,
            r.cases,
            r.passed,
            lines,
        ));
    }
    Ok(rows)
}

/// See the module doc. Runs without the GIL, on all cores.
#[pyfunction]
#[pyo3(signature = (fixtures, suite, max_report))]
pub fn verify_suites(
    py: Python<'_>,
    fixtures: Vec<PathBuf>,
    suite: Option<String>,
    max_report: usize,
) -> PyResult<Vec<Row>> {
    let args = VerifyArgs {
        fixtures,
        suite,
        max_report,
    };
    py.detach(|| run(&args)).map_err(to_py)
}
