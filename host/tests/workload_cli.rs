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

#[test]
fn warnings_are_listed_and_strict_makes_them_errors() {
    let f = "fixtures/workloads/rtapp/ignored-and-duplicate-keys.json";
    let (code, out, err) = check(&[f]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert!(
        out.contains("warnings (6):\n  line 6: global.frag: unknown global key: rt-app ignores it"),
        "{out}"
    );
    let (code, out, err) = check(&["--strict", f]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 7, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "warning: {f}:6:31: global.frag: unknown global key"
        )),
        "{err}"
    );
    assert_eq!(
        lines[6],
        format!("error: {f}: 6 warning(s), refused by --strict")
    );
    // No warning: --strict changes nothing.
    let (code, _, err) = check(&["--strict", "fixtures/workloads/sync.json"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
}

#[test]
fn simulate_prints_the_warnings_on_stderr() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args([
            "simulate",
            "--platform",
            "fixtures/platforms/orion-o6.toml",
            "--workload",
            "fixtures/workloads/rtapp/policies.json",
            "--duration",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("warning: fixtures/workloads/rtapp/policies.json:8:15: tasks.batch.policy: SCHED_BATCH is simulated as SCHED_OTHER"));
    assert!(lines[1].contains("tasks.dl: SCHED_DEADLINE (runtime 2000 µs"));
}
