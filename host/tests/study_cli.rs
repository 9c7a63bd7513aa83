// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath study`: the JSON shape, and errors that name the file, line and key.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

/// Writes a study file beside the scenarios (so its relative paths resolve) and runs it.
fn run_text(name: &str, text: &str) -> (i32, String) {
    let dir = root().join("target/study-cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = cli(&["study", file.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    (out.status.code().unwrap(), err)
}

const HEAD: &str = r#"study = "t"
description = "test"
profiles = ["mainline", "ou-lone-task"]
duration_s = 1
columns = ["ou_pct"]
"#;

fn case(extra: &str) -> String {
    format!(
        "{HEAD}\n[[case]]\nlabel = \"c {{n}}\"\nplatform = \"../../fixtures/platforms/rk3399.toml\"\nworkload = \"../../fixtures/scenarios/ou-lone-task/busy.toml\"\n{extra}"
    )
}

#[test]
fn json_is_one_object_with_study_and_runs() {
    let (code, err) = run_text(
        "ok",
        &case("sweep = { task = \"busy\", values = [1, 3] }\n"),
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let file = root().join("target/study-cli-tests/ok.toml");
    let out = cli(&["study", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["study"], "t");
    let labels: Vec<(&str, &str)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["case"].as_str().unwrap(), r["profile"].as_str().unwrap()))
        .collect();
    assert_eq!(
        labels,
        [
            ("c 1", "mainline"),
            ("c 1", "ou-lone-task"),
            ("c 3", "mainline"),
            ("c 3", "ou-lone-task")
        ]
    );
    assert_eq!(v["runs"][0]["metrics"]["duration_s"], 1.0);
}

#[test]
fn bad_study_files_name_file_line_and_key() {
    let (code, err) = run_text("unknown-key", &format!("{HEAD}colour = 1\n"));
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown-key.toml") && err.contains("line 6"),
        "{err}"
    );
    assert!(err.contains("unknown field `colour`"), "{err}");

    let (code, err) = run_text(
        "no-task",
        &case("sweep = { task = \"nope\", values = [1] }\n"),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("case[0].sweep.task: the workload has no task `nope`"),
        "{err}"
    );

    let (code, err) = run_text(
        "bad-profile",
        &case("profiles = [\"mainline\", \"pelt-hl4\"]\n"),
    );
    assert_eq!(code, 2);
    assert!(err.contains("case[0].profiles: `pelt-hl4`"), "{err}");

    let (code, err) = run_text("no-cases", HEAD);
    assert_eq!(code, 2);
    assert!(
        err.contains("no-cases.toml") && err.contains("case"),
        "{err}"
    );

    let out = cli(&["study", "no-such-study"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("fixtures/scenarios/no-such-study.toml"),
        "{err}"
    );
}
