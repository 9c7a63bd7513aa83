// SPDX-License-Identifier: GPL-2.0-only
//! Study `ou-lone-task` (VARIANTS.md §1): the patch keeps a lone busy task on a
//! max-capacity CPU from marking the root domain overutilized; with more busy tasks than
//! max-capacity CPUs both sides are overutilized alike.

use std::path::{Path, PathBuf};

use schedmath_host::study::{self, StudyResult};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn result() -> StudyResult {
    study::run(&root().join("fixtures/scenarios/ou-lone-task.toml")).unwrap()
}

/// (base, patch) OU % of a case.
fn ou(r: &StudyResult, case: &str) -> (f64, f64) {
    let m = |p| r.metrics(case, p).unwrap().ou_pct;
    (m("mainline"), m("ou-lone-task"))
}

#[test]
fn lone_tasks_on_big_cpus_no_longer_overutilize_and_more_tasks_do() {
    let r = result();
    // (board, max-capacity CPUs, CPUs)
    for (board, bigs, cpus) in [("rk3399", 2, 6), ("m1pro", 6, 8), ("orion-o6", 2, 12)] {
        for n in 1..=cpus + 1 {
            let (base, patch) = ou(&r, &format!("{board} {n}x busy"));
            assert!(base > 98.0, "{board} {n}x: base {base}");
            if n <= bigs {
                assert_eq!(patch, 0.0, "{board} {n}x busy: patch {patch}");
            } else {
                // Equal but for the first ticks before the extra task lands.
                assert!(
                    (base - patch).abs() < 1.0,
                    "{board} {n}x: {base} vs {patch}"
                );
            }
        }
    }
}

#[test]
fn a_capacity_reduction_lets_the_lone_task_trigger_as_before() {
    // 3 % of SCHED_FIFO work on the busy task's big CPU: capacity_of < original.
    let (base, patch) = ou(&result(), "rk3399 1x busy + rt 3%");
    assert_eq!((base, patch), (99.4, 99.4));
}

#[test]
fn functional_small_tasks_stay_little_and_ou_ratio_drops() {
    let r = result();
    let (base, patch) = ou(&r, "m1pro functional");
    assert_eq!((base, patch), (99.44, 0.0));
    // The busy task runs on a big CPU (2..=7) either way.
    // CPUs 0-1 are the 485-capacity E cores, 2-7 the P cores.
    let bigs = |m: &schedmath_host::sim::Metrics, t: &str| -> f64 {
        m.task_cpu_residency_s[t][2..].iter().sum()
    };
    let base = r.metrics("m1pro functional", "mainline").unwrap();
    let patch = r.metrics("m1pro functional", "ou-lone-task").unwrap();
    for m in [base, patch] {
        assert!(
            bigs(m, "busy-0") > 9.9,
            "busy on bigs {}",
            bigs(m, "busy-0")
        );
    }
    // Base: with EAS off, two of the small tasks spread to idle P cores (2.5 s each);
    // patch: EAS keeps all four on the E cores (about 0.1 s of their 40 s elsewhere,
    // at start-up: 0.1015 s under EEVDF).
    let small = ["small-0", "small-1", "small-2", "small-3"];
    let on_bigs = |m| small.iter().map(|t| bigs(m, t)).sum::<f64>();
    assert!(
        on_bigs(base) > 4.9,
        "base small tasks on P cores {}",
        on_bigs(base)
    );
    assert!(
        on_bigs(patch) < 0.15,
        "patch small tasks on P cores {}",
        on_bigs(patch)
    );
    assert!(patch.energy_j < base.energy_j);
}

#[test]
fn table_and_json() {
    let r = result();
    insta::assert_snapshot!("ou_lone_task_table", r.render());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["study"], "ou-lone-task");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * (7 + 9 + 13 + 1 + 1));
    assert_eq!(runs[0]["case"], "rk3399 1x busy");
    assert_eq!(runs[0]["profile"], "mainline");
    assert!(runs[0]["metrics"]["ou_pct"].is_f64());
}
