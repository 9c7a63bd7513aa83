// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath verify` (the code behind `cargo xtask verify`) fails loudly and precisely:
//! a changed expected number names its case and field, a truncated line names file:line,
//! and neither panics.

use std::path::{Path, PathBuf};
use std::process::Command;

fn pelt_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernel/pelt")
}

fn copy_pelt(to: &Path) {
    for e in std::fs::read_dir(pelt_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

fn verify(dir: &Path) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .arg("verify")
        .arg("--fixtures")
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Replaces the first occurrence of `from` after the first line of `file`.
fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let (head, body) = text.split_once('\n').unwrap();
    assert!(body.contains(from), "{from} not in {}", file.display());
    std::fs::write(file, format!("{head}\n{}", body.replacen(from, to, 1))).unwrap();
}

#[test]
fn pristine_pelt_copy_passes() {
    let tmp = tempfile::tempdir().unwrap();
    copy_pelt(tmp.path());
    let (code, stdout, stderr) = verify(tmp.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains(" 0 failed"), "{stdout}");
}

#[test]
fn changed_expected_number_names_case_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    copy_pelt(tmp.path());
    // decay_load(1024, 0) is 1023 in the kernel (y^0 = 0xffffffff / 2^32); claim 1024.
    let file = tmp.path().join("decay_load.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("\"val\":1024,\"n\":0}") && l.contains("\"ret\":1023"))
        .expect("a decay_load(1024, 0) case")
        .to_string();
    let id = line.split('"').nth(3).unwrap().to_string();
    edit(&file, &line, &line.replace("\"ret\":1023", "\"ret\":1024"));

    let (code, stdout, _) = verify(tmp.path());
    assert_eq!(code, Some(1), "{stdout}");
    let mismatch = stdout
        .lines()
        .find(|l| l.starts_with("mismatch:"))
        .unwrap_or_else(|| panic!("no mismatch line in\n{stdout}"));
    assert_eq!(
        mismatch,
        format!("mismatch: pelt/decay_load  {id}  -  ret  expected 1024  got 1023")
    );
    assert!(
        stdout.ends_with("verify: 2557 passed, 1 failed\n"),
        "{stdout}"
    );
}

#[test]
fn changed_sequence_number_names_the_op() {
    let tmp = tempfile::tempdir().unwrap();
    copy_pelt(tmp.path());
    let file = tmp.path().join("se_sequence.jsonl");
    // The first case's second state (op 1): bump its util_avg by one.
    let text = std::fs::read_to_string(&file).unwrap();
    let case: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let id = case["id"].as_str().unwrap();
    let util = case["out"]["after"][1]["util_avg"].as_u64().unwrap();
    let mut changed = case.clone();
    changed["out"]["after"][1]["util_avg"] = (util + 1).into();
    let line = text.lines().nth(1).unwrap();
    edit(&file, line, &serde_json::to_string(&changed).unwrap());

    let (code, stdout, _) = verify(tmp.path());
    assert_eq!(code, Some(1), "{stdout}");
    let expect = format!(
        "mismatch: pelt/se_sequence  {id}  op 1  util_avg  expected {}  got {util}",
        util + 1
    );
    assert!(
        stdout.lines().any(|l| l == expect),
        "{expect}\nnot in\n{stdout}"
    );
}

#[test]
fn truncated_line_is_an_error_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    copy_pelt(tmp.path());
    let file = tmp.path().join("util_est.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let cut = &lines[4][..lines[4].len() / 2];
    lines[4] = cut;
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();

    let (code, stdout, stderr) = verify(tmp.path());
    // An unreadable case is an input error: exit 2, after the report.
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("1 case(s) could not be read or run"),
        "{stderr}"
    );
    let want = format!("error: {}:5: not valid JSON", file.display());
    assert!(
        stdout.lines().any(|l| l.starts_with(&want)),
        "{want}\nnot in\n{stdout}"
    );
}

#[test]
fn unknown_fn_and_missing_input_are_errors_not_skips() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("x.jsonl"),
        "{\"suite\":\"pelt/x\",\"schema\":1,\"variant\":\"mainline\"}\n\
         {\"id\":\"a\",\"fn\":\"no_such_fn\",\"in\":{},\"out\":{\"ret\":0}}\n\
         {\"id\":\"b\",\"fn\":\"decay_load\",\"in\":{\"variant\":\"hl32\",\"val\":5},\"out\":{\"ret\":0}}\n",
    )
    .unwrap();
    let (code, stdout, _) = verify(tmp.path());
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains(":2: case a: unknown fn `no_such_fn` in module `pelt`"),
        "{stdout}"
    );
    assert!(
        stdout.contains(":3: case b: ") && stdout.contains("`n`"),
        "{stdout}"
    );
    assert!(stdout.ends_with("verify: 0 passed, 2 failed\n"), "{stdout}");
}

#[test]
fn empty_selection_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = verify(tmp.path());
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no fixture suites found"), "{stderr}");
}
