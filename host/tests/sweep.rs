// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath sweep`: parallel output equals serial output, shards merge into the
//! unsharded output byte for byte, and bad shard specs or sweep files stop with exit
//! code 2 before any run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// (exit code, stdout, stderr).
fn fails(args: &[&str]) -> (i32, String, String) {
    let out = cli(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const SIXTY: &str = "fixtures/sweeps/sixty.toml";

/// A sweep file written beside the shipped ones (so its relative paths resolve).
fn sweep_file(name: &str, text: &str) -> String {
    let dir = root().join("target/sweep-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

#[test]
fn sixty_runs_parallel_equal_serial_in_run_order() {
    let serial = ok(&["sweep", SIXTY, "--jobs", "1"]);
    let parallel = ok(&["sweep", SIXTY, "--jobs", "4"]);
    assert!(
        serial == parallel,
        "--jobs 4 printed other bytes than --jobs 1"
    );
    let lines: Vec<serde_json::Value> = serial
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 60);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["run"], i);
        assert_eq!(l["runs"], 60);
    }
    // Seeds vary fastest, then profiles, workloads, platforms.
    let key = |l: &serde_json::Value| {
        (
            l["workload"].as_str().unwrap().to_string(),
            l["profile"].as_str().unwrap().to_string(),
            l["seed"].as_u64().unwrap(),
        )
    };
    assert_eq!(
        key(&lines[0]),
        (
            "../scenarios/busy-plus-4x5pct.toml".into(),
            "mainline".into(),
            0
        )
    );
    assert_eq!(
        key(&lines[5]),
        (
            "../scenarios/busy-plus-4x5pct.toml".into(),
            "ou-lone-task".into(),
            1
        )
    );
    assert_eq!(
        key(&lines[13]),
        (
            "../scenarios/teo-fixes/fio.json".into(),
            "mainline".into(),
            1
        )
    );
    // The metrics are `simulate --json`'s for that combination.
    let sim = ok(&[
        "simulate",
        "--platform",
        "fixtures/platforms/rk3399.toml",
        "--workload",
        "fixtures/scenarios/teo-fixes/fio.json",
        "--profile",
        "mainline",
        "--seed",
        "1",
        "--duration",
        "1",
        "--json",
    ]);
    let sim: serde_json::Value = serde_json::from_slice(&sim).unwrap();
    assert_eq!(lines[13]["metrics"], sim);
    // fio's IO latencies are drawn from the seed: seeds 0 and 1 differ.
    assert_ne!(lines[12]["metrics"]["iops"], lines[13]["metrics"]["iops"]);
}

#[test]
fn three_shards_merge_into_the_unsharded_output() {
    let whole = ok(&["sweep", SIXTY]);
    let dir = root().join("target/sweep-tests/shards");
    std::fs::create_dir_all(&dir).unwrap();
    let mut parts = Vec::new();
    for i in 0..3 {
        let out = ok(&["sweep", SIXTY, "--shard", &format!("{i}/3")]);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 20);
        let p = dir.join(format!("part-{i}.jsonl"));
        std::fs::write(&p, out).unwrap();
        parts.push(p.display().to_string());
    }
    // Any order of the parts.
    let mut args = vec!["sweep", "merge"];
    args.extend([&parts[2], &parts[0], &parts[1]].map(String::as_str));
    assert!(ok(&args) == whole, "merged shards differ from one run");
    // The table too.
    let mut t = args.clone();
    t.push("--table");
    assert_eq!(ok(&t), ok(&["sweep", SIXTY, "--table"]));
    // A missing part is an error, not a shorter output.
    let (code, out, err) = fails(&["sweep", "merge", &parts[0], &parts[1]]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("20 run(s) missing, the first run 2"), "{err}");
    // The same part twice too.
    let (code, _, err) = fails(&["sweep", "merge", &parts[0], &parts[0], &parts[1], &parts[2]]);
    assert_eq!(code, 2);
    assert!(err.contains("run 0 is in another part too"), "{err}");
}

#[test]
fn bad_shard_specs_exit_2_before_running() {
    for (spec, says) in [
        ("4/3", "I must be below N"),
        ("3/3", "I must be below N"),
        ("0/0", "N must be at least 1"),
        ("x/y", "is not a whole number"),
        ("3", "is not I/N"),
    ] {
        let (code, out, err) = fails(&["sweep", SIXTY, "--shard", spec]);
        assert_eq!((code, out.as_str()), (2, ""), "{spec}");
        assert!(err.contains(says), "{spec}: {err}");
    }
}

#[test]
fn a_missing_platform_names_file_line_and_field() {
    let file = sweep_file(
        "missing-platform.toml",
        "profiles = [\"mainline\"]\nplatforms = [\n  \"../../fixtures/platforms/rk3399.toml\",\n  \"../../fixtures/platforms/nope.toml\",\n]\nworkloads = [\"../../fixtures/workloads/periodic.toml\"]\n",
    );
    let (code, out, err) = fails(&["sweep", &file]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains(&format!("{file}:4: platforms[1]: ")) && err.contains("nope.toml"),
        "{err}"
    );
}

#[test]
fn bad_sweep_files_name_the_field() {
    let plat = "platforms = [\"../../fixtures/platforms/rk3399.toml\"]";
    let work = "workloads = [\"../../fixtures/workloads/periodic.toml\"]";
    for (name, text, says) in [
        (
            "profile.toml",
            format!("profiles = [\"mainline\", \"no-such\"]\n{plat}\n{work}\n"),
            ":1: profiles[1]: `no-such`",
        ),
        (
            "workload.toml",
            format!("profiles = [\"mainline\"]\n{plat}\nworkloads = [\"nope.json\"]\n"),
            ":3: workloads[0]: ",
        ),
        (
            "unknown-key.toml",
            format!("profiles = [\"mainline\"]\n{plat}\n{work}\nseed = 3\n"),
            ":4: (file): unknown field `seed`",
        ),
        (
            "budget.toml",
            format!("profiles = [\"mainline\"]\n{plat}\n{work}\nseeds = {{ from = 0, count = 2000000 }}\n"),
            ":4: seeds: 1 platforms × 1 workloads × 1 profiles × 2000000 seeds is over the limit of 1000000 runs (MAX_SWEEP_RUNS)",
        ),
        (
            "affinity.json",
            // small-and-busy.json pins a task to CPUs 4-5: rk3399 has 6, laptop-2c4t 4.
            "{\n  \"profiles\": [\"mainline\"],\n  \"platforms\": [\"../../fixtures/platforms/laptop-2c4t.toml\"],\n  \"workloads\": [\n    \"../../fixtures/workloads/small-and-busy.json\"\n  ]\n}\n".to_string(),
            ":5: workloads[0]: on platform `../../fixtures/platforms/laptop-2c4t.toml`: ",
        ),
    ] {
        let file = sweep_file(name, &text);
        let (code, out, err) = fails(&["sweep", &file]);
        assert_eq!((code, out.as_str()), (2, ""), "{name}");
        assert!(err.contains(&format!("{file}{says}")), "{name}: {err}");
    }
}
