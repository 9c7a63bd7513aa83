// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath idle` on rk3399's idle states (fixtures/platforms/rk3399.toml): snapshots of
//! the per-state tables for every teo version and menu (VARIANTS.md §4), and the errors of
//! bad patterns and options.

use clap::Parser;
use schedmath_host::idle::{run, IdleArgs};

/// rk3399 (device tree): WFI 1/1 µs, cpu-sleep 370/900 µs, cluster-sleep 900/2000 µs
/// (exit latency = entry + exit latency, target residency = min-residency), inline.
const RK3399: &str = "WFI:1us/1us,cpu-sleep:370us/900us,cluster-sleep:900us/2000us";

/// The platform file with the same states.
const RK3399_TOML: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../fixtures/platforms/rk3399.toml"
);

const GOVERNORS: [&str; 5] = ["teo-v6.6", "teo-v6.10", "teo-v6.12", "teo-mainline", "menu"];

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: IdleArgs,
}

fn idle(args: &[&str]) -> anyhow::Result<String> {
    let cli = Cli::try_parse_from(std::iter::once("idle").chain(args.iter().copied()))?;
    let mut out = Vec::new();
    run(&cli.args, &mut out)?;
    Ok(String::from_utf8(out)?)
}

/// The table of `pattern` for every governor, one after the other.
fn every_governor(pattern: &str) -> String {
    GOVERNORS
        .iter()
        .map(|g| {
            idle(&[
                "--platform",
                RK3399_TOML,
                "--cpu",
                "0",
                "--pattern",
                pattern,
                "--util",
                "100",
                "--profile",
                g,
            ])
            .unwrap()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn timer_50ms_on_a_utilized_cpu() {
    // CPU 0 (A53, capacity 381): util 100 > 381 >> 6 = 5, so v6.6/v6.10 step down to
    // cpu-sleep and miss below every time;
    // v6.12, mainline and menu sit in cluster-sleep.
    insta::assert_snapshot!(every_governor("timer:50ms"));
}

#[test]
fn io_then_timer_on_a_utilized_cpu() {
    insta::assert_snapshot!(every_governor("io:50us-500us*200;timer:50ms*50"));
}

#[test]
fn compare_teo_v6_10_with_v6_12() {
    let out = idle(&[
        "--platform",
        RK3399_TOML,
        "--cpu",
        "4",
        "--pattern",
        "timer:50ms",
        "--util",
        "100",
        "--compare",
        "teo-v6.10",
        "teo-v6.12",
    ])
    .unwrap();
    insta::assert_snapshot!(out);
}

#[test]
fn json_report_has_per_state_counters() {
    let out = idle(&[
        "--states",
        RK3399,
        "--pattern",
        "timer:50ms",
        "--count",
        "10",
        "--governor",
        "menu",
        "--json",
    ])
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["governor"], "menu");
    assert_eq!(v["periods"], 10);
    assert_eq!(v["states"][2]["name"], "cluster-sleep");
    assert_eq!(v["states"][2]["usage"], 10);
}

fn err(args: &[&str]) -> String {
    format!("{:#}", idle(args).unwrap_err())
}

#[test]
fn bad_patterns_are_clear_errors() {
    assert_eq!(
        err(&["--states", RK3399, "--pattern", "sawtooth:5ms"]),
        "pattern `sawtooth:5ms`: unknown generator `sawtooth` (timer, io, mixed, or a CSV file)"
    );
    assert_eq!(
        err(&["--states", RK3399, "--pattern", "timer:-50ms"]),
        "pattern `timer:-50ms`: negative duration `-50ms`"
    );
    let dir = std::env::temp_dir().join(format!("schedmath-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("bad.csv");
    std::fs::write(
        &csv,
        "sleep_length_ns,measured_ns,timer_wakeup\n50000000,50000000,1\n50000000,-3,0\n",
    )
    .unwrap();
    let path = csv.to_str().unwrap();
    assert_eq!(
        err(&["--states", RK3399, "--pattern", path]),
        format!("{path}:3: field `measured_ns`: negative duration `-3`")
    );
    std::fs::write(&csv, "50000000,50000000\n").unwrap();
    assert_eq!(
        err(&["--states", RK3399, "--pattern", path]),
        format!("{path}:1: 2 columns; expected sleep_length_ns,measured_ns,timer_wakeup[,util]")
    );
    let missing = dir.join("missing.csv");
    let missing = missing.to_str().unwrap();
    assert!(err(&["--states", RK3399, "--pattern", missing]).starts_with(&format!("{missing}: ")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_options_are_clear_errors() {
    assert_eq!(
        err(&[
            "--states",
            RK3399,
            "--pattern",
            "timer:1ms",
            "--governor",
            "menu",
            "--profile",
            "teo-v6.10"
        ]),
        "--governor menu conflicts with --profile teo-v6.10"
    );
    assert!(err(&[
        "--states",
        RK3399,
        "--pattern",
        "timer:1ms",
        "--profile",
        "teo-v9"
    ])
    .starts_with("--profile: unknown profile `teo-v9`"));
    assert_eq!(
        err(&["--states", "WFI:1us", "--pattern", "timer:1ms"]),
        "--states: idle state `WFI:1us`: expected EXIT_LATENCY/TARGET_RESIDENCY"
    );
}

#[test]
fn util_threshold_is_the_platform_capacity_shifted_by_six() {
    // CPU 0 has capacity 381: util 5 is not above 381 >> 6 = 5, util 6 is.
    let cluster_sleep_usage = |util: &str| {
        let out = idle(&[
            "--platform",
            RK3399_TOML,
            "--pattern",
            "timer:50ms",
            "--count",
            "10",
            "--util",
            util,
            "--profile",
            "teo-v6.10",
            "--json",
        ])
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["states"][2]["usage"].as_u64().unwrap()
    };
    assert_eq!(cluster_sleep_usage("5"), 10);
    assert_eq!(cluster_sleep_usage("6"), 0);
}

#[test]
fn platform_errors_name_the_file() {
    assert_eq!(
        err(&[
            "--platform",
            RK3399_TOML,
            "--cpu",
            "6",
            "--pattern",
            "timer:1ms"
        ]),
        format!("{RK3399_TOML}: --cpu 6 but the platform has 6 CPUs")
    );
    assert!(
        err(&["--platform", "/nonexistent.toml", "--pattern", "timer:1ms"])
            .starts_with("/nonexistent.toml: ")
    );
}
