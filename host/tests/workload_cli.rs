// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath workload check`, as a person reads it, and its failures.

use std::path::Path;
use std::process::Command;

/// Runs `schedmath workload check ARGS` from the workspace root.
fn check(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args(["workload", "check"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn workload_check_phases() {
    let (code, out, err) = check(&["--nr-cpus", "6", "fixtures/workloads/phases.json"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    insta::assert_snapshot!("workload_check_phases", out);
}

#[test]
fn workload_check_idle_group_verbose() {
    let (code, out, err) = check(&["--verbose", "fixtures/workloads/idle-group.json"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    insta::assert_snapshot!("workload_check_idle_group_verbose", out);
}

#[test]
fn json_output_is_the_model() {
    let (code, out, _) = check(&["--json", "fixtures/workloads/periodic.toml"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "periodic");
    assert_eq!(v["tasks"][0]["phases"][0]["loops"]["count"], 125);
    assert_eq!(
        v["tasks"][0]["phases"][0]["events"][0]["event"]["run"]["work_ns"],
        800_000
    );
}

#[test]
fn affinity_beyond_the_platform_fails_with_exit_code_2() {
    let (code, out, err) = check(&["--nr-cpus", "4", "fixtures/workloads/phases.json"]);
    assert_eq!(code, Some(2));
    assert_eq!(out, "");
    assert_eq!(
        err,
        "error: fixtures/workloads/phases.json:34:6: tasks.ramp.phases.heavy.cpus: CPU 4 does not exist: the platform has 4 CPUs (0..=3)\n"
    );
}

#[test]
fn missing_file_and_unknown_kind_fail_with_exit_code_2() {
    let (code, _, err) = check(&["fixtures/workloads/nope.json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("error: fixtures/workloads/nope.json: "),
        "{err}"
    );
    let (code, _, err) = check(&["Cargo.lock"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "error: Cargo.lock: unknown workload kind: use .json (rt-app) or .toml (periodic form)\n"
    );
}
