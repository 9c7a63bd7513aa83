// SPDX-License-Identifier: GPL-2.0-only
//! Study `teo-fixes` (VARIANTS.md §4) on rk3399, whose idle states are the row's 3-state
//! platform (WFI, cpu-sleep, cluster-sleep: target residencies 1, 900, 2000 µs; exit
//! latencies 1, 370, 900 µs). The timer and fio tasks are pinned to CPU 1 (capacity 381,
//! "utilized" for v6.6/v6.10 above 381 >> 6 = 5).

use std::path::{Path, PathBuf};

use schedmath_host::sim::Metrics;
use schedmath_host::study::{self, StudyResult};

const TEO_OLD: [&str; 2] = ["teo-v6.6", "teo-v6.10"];
const TEO_FIXED: [&str; 2] = ["teo-v6.12", "teo-mainline"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn result() -> StudyResult {
    study::run(&root().join("fixtures/scenarios/teo-fixes.toml")).unwrap()
}

fn m<'r>(r: &'r StudyResult, case: &str, profile: &str) -> &'r Metrics {
    r.metrics(case, profile).unwrap()
}

fn sum(v: &std::collections::BTreeMap<usize, Vec<u64>>) -> u64 {
    v.values().flatten().sum()
}

/// Equal but for the profile's name.
fn same(a: &Metrics, b: &Metrics) {
    let mut b = b.clone();
    b.profile.clone_from(&a.profile);
    assert_eq!(a, &b);
}

#[test]
fn timer_fixed_teo_sleeps_deep_and_v6_10_stays_shallow_with_below_misses() {
    let r = result();
    let case = "rk3399 timer";
    // 40 periods of 50 ms in 2 s; the task's utilization stays above the threshold.
    for p in TEO_OLD.iter().chain(&TEO_FIXED).chain(&["menu"]) {
        let t = m(&r, case, p);
        assert_eq!(t.wakeups, 41, "{p}");
        assert!(t.task_util_avg_end["timer-0"] > 381 >> 6, "{p}");
    }
    // (Besides the 40 periods, one WFI stay and one cluster-sleep stay, both misses.)
    for p in TEO_OLD {
        let t = m(&r, case, p);
        assert_eq!(t.idle_usage[&1], [1, 40, 1], "{p}");
        assert_eq!(t.idle_residency_s[&1], [0.00148, 1.646452, 0.0009], "{p}");
        assert_eq!(t.idle_miss_below[&1], [1, 40, 0], "{p}");
        assert_eq!(t.idle_miss_above[&1], [0, 0, 1], "{p}");
    }
    for p in TEO_FIXED {
        let t = m(&r, case, p);
        assert_eq!(t.idle_usage[&1], [1, 0, 41], "{p}");
        assert_eq!(t.idle_residency_s[&1], [0.00148, 0.0, 1.647882], "{p}");
        assert_eq!(t.idle_miss_below[&1], [1, 0, 0], "{p}");
        assert_eq!(t.idle_miss_above[&1], [0, 0, 1], "{p}");
    }
    let menu = m(&r, case, "menu");
    assert_eq!(menu.idle_usage[&1], [1, 0, 40]);
    assert_eq!(
        (
            sum(&menu.idle_miss_above),
            menu.idle_miss_below[&1].iter().sum::<u64>()
        ),
        (0, 0)
    );
}

#[test]
fn fio_a_deeper_state_delays_the_next_io_and_lowers_iops() {
    let r = result();
    let case = "rk3399 fio";
    let (old, fixed) = (m(&r, case, "teo-v6.10"), m(&r, case, "teo-v6.12"));
    same(m(&r, case, "teo-v6.6"), old);
    same(m(&r, case, "teo-mainline"), fixed);
    // v6.10 enters cpu-sleep on most IO waits, each an above miss whose 370 µs exit
    // latency delays the next submission; v6.12 (and menu) stay in WFI.
    assert_eq!(old.idle_usage[&1], [668, 1194, 1]);
    assert_eq!(old.idle_miss_above[&1], [0, 1194, 1]);
    assert_eq!(old.wakeup_latency_us.p50, 370.0);
    assert_eq!(fixed.idle_usage[&1], [3188, 0, 1]);
    assert_eq!(fixed.wakeup_latency_us.p50, 1.0);
    let menu = m(&r, case, "menu");
    assert_eq!(menu.idle_usage[&1], [3181, 0, 0]);
    assert_eq!((old.iops, fixed.iops, menu.iops), (1665.0, 2979.0, 2983.0));
    // The mechanism accounts for the whole gap: the extra time per IO is the cpu-sleep
    // entries per IO times the exit latency added (370 - 1 µs), within 2 %.
    let per_io_us = |iops: f64| 1e6 / iops;
    let gap = per_io_us(old.iops) - per_io_us(fixed.iops);
    let exits = old.idle_usage[&1][1] as f64 / old.iops * 369.0;
    assert!(
        (gap - exits).abs() < 0.02 * gap,
        "gap {gap} µs, exits {exits} µs"
    );
}

#[test]
fn hackbench_residency_and_misses() {
    let r = result();
    let case = "rk3399 hackbench";
    let (old, fixed, menu) = (
        m(&r, case, "teo-v6.10"),
        m(&r, case, "teo-v6.12"),
        m(&r, case, "menu"),
    );
    let state_s = |x: &Metrics, i: usize| -> f64 {
        let s: f64 = x.idle_residency_s.values().map(|v| v[i]).sum();
        (s * 1000.0).round() / 1000.0
    };
    let work = |x: &Metrics| x.work_done_ms.values().sum::<f64>().round();
    // v6.10 enters cpu-sleep between hand-offs (above misses, 370 µs wake-ups) and
    // passes a third fewer messages; v6.12 stays in WFI.
    assert_eq!((state_s(old, 0), state_s(old, 1)), (0.533, 2.967));
    assert_eq!(
        (sum(&old.idle_miss_above), sum(&old.idle_miss_below)),
        (3952, 0)
    );
    assert_eq!((state_s(fixed, 0), state_s(fixed, 1)), (2.065, 0.0));
    assert_eq!(
        (sum(&fixed.idle_miss_above), sum(&fixed.idle_miss_below)),
        (6, 0)
    );
    assert_eq!((work(old), work(fixed)), (901.0, 1332.0));
    // menu: stays go to cluster-sleep (all above misses, 900 µs wake-ups); since the
    // kernel's load balance spreads the pairs, on two CPUs, and fewer messages pass.
    assert_eq!(state_s(menu, 2), 1.802);
    assert_eq!(menu.idle_miss_above[&0], [0, 0, 1001]);
    assert_eq!(menu.idle_miss_above[&1], [0, 0, 1001]);
    assert_eq!(sum(&menu.idle_miss_above), 2002);
    assert_eq!(work(menu), 676.0);
}

#[test]
fn table_and_json() {
    let r = result();
    insta::assert_snapshot!("teo_fixes_table", r.render());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["study"], "teo-fixes");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3 * 5);
    assert_eq!(runs[0]["case"], "rk3399 timer");
    assert_eq!(runs[0]["profile"], "teo-v6.6");
    assert_eq!(runs[14]["case"], "rk3399 hackbench");
    assert_eq!(runs[14]["profile"], "menu");
    assert!(runs[5]["metrics"]["iops"].is_f64());
    assert!(runs[0]["metrics"]["idle_residency_s"]["1"].is_array());
}
