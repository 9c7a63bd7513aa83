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
        "fixtures/platforms/laptop-2c4t.toml",
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
