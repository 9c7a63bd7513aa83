// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath governor`: bad trace files fail with file, line and column.

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .args(args)
        .output()
        .expect("the schedmath binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_csv_row_is_an_error_with_file_line_and_column() {
    let dir = std::env::temp_dir().join(format!("schedmath-governor-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "time_ns,util_cfs\n0,100\n4000000,12x\n").unwrap();
    let csv_arg = csv.to_string_lossy().into_owned();
    let (code, err) = run(&[
        "governor",
        "--platform",
        &repo("fixtures/platforms/laptop-2c4t.toml"),
        "--util",
        &csv_arg,
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err.trim_end(),
        format!("error: {csv_arg}:3: column 2 (`util_cfs`): `12x` is not a non-negative integer")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn repo(rel: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn compare_on_the_laptop_platform_prints_both_profiles() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .args([
            "governor",
            "--platform",
            &repo("fixtures/platforms/laptop-2c4t.toml"),
            "--util",
            &repo("fixtures/scenarios/governor/busy-uclamp-max-400.csv"),
            "--compare",
            "mainline",
            "sugov-busy-without-uclamp",
            "--json",
        ])
        .output()
        .expect("the schedmath binary runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let last_cur = |i: usize| v["replays"][i]["decisions"][49]["cur_khz"].as_u64();
    assert_eq!(v["replays"][1]["profile"], "sugov-busy-without-uclamp");
    assert_eq!((last_cur(0), last_cur(1)), (Some(1300000), Some(3100000)));
}

#[test]
fn policy_outside_the_platform_and_unknown_profile_are_errors() {
    let csv = repo("fixtures/scenarios/governor/busy-uclamp-max-400.csv");
    let platform = repo("fixtures/platforms/laptop-2c4t.toml");
    let (code, err) = run(&[
        "governor",
        "--platform",
        &platform,
        "--policy",
        "4",
        "--util",
        &csv,
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("policy 4: ") && err.contains("has 4 frequency domains (policies 0..3)"),
        "{err}"
    );
    let (code, err) = run(&[
        "governor",
        "--platform",
        &platform,
        "--util",
        &csv,
        "--profile",
        "sugov-old",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("error: --profile: unknown profile `sugov-old`"),
        "{err}"
    );
}
