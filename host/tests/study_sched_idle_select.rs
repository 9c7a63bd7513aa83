// SPDX-License-Identifier: GPL-2.0-only
//! Study `sched-idle-select` (VARIANTS.md §3): schbench-like worker groups (a message
//! thread broadcasting to two workers every 4 ms) beside 12 always-busy tasks of an idle
//! cgroup, flat (t1) and nested (t2) hierarchies, on the SMT laptop and on the flat
//! 12-CPU board. The profiles differ only inside the fork walk's CPU scan of a multi-CPU
//! group (`sched_balance_find_dst_group_cpu()`): mainline returns a SCHED_IDLE-only CPU at
//! once, the patch takes a truly idle one.

use std::path::{Path, PathBuf};

use schedmath_host::study::{self, StudyResult};

const GROUPS: [u32; 6] = [1, 2, 4, 8, 16, 23];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn result() -> StudyResult {
    study::run(&root().join("fixtures/scenarios/sched-idle-select.toml")).unwrap()
}

/// (base, patch) wake-up latency [p50, p90, p99, p999] in µs.
fn lat(r: &StudyResult, case: &str) -> ([f64; 4], [f64; 4]) {
    let m = |p| {
        let w = &r.metrics(case, p).unwrap().wakeup_latency_us;
        [w.p50, w.p90, w.p99, w.p999]
    };
    (m("mainline"), m("sis-idle-first"))
}

#[test]
fn patch_never_lengthens_the_tail_below_saturation() {
    let r = result();
    for h in ["t1", "t2"] {
        for n in [1, 2, 4, 8, 16] {
            let (base, patch) = lat(&r, &format!("{h} groups={n}"));
            assert!(patch[2] <= base[2], "{h} groups={n}: {base:?} vs {patch:?}");
            assert!(patch[3] <= base[3], "{h} groups={n}: {base:?} vs {patch:?}");
        }
        // Measured: where the SCHED_IDLE shortcut stacked a fork on a noise CPU of a core
        // whose sibling was idle, the patch forks onto the idle sibling.
        let (base, patch) = lat(&r, &format!("{h} groups=2"));
        assert_eq!((base[3], patch[3]), (10320.0, 8000.0));
        let (base, patch) = lat(&r, &format!("{h} groups=4"));
        assert_eq!((base[2], patch[2]), (900.0, 300.0));
    }
}

#[test]
fn saturated_groups_give_about_the_same_tail() {
    let r = result();
    for h in ["t1", "t2"] {
        let (base, patch) = lat(&r, &format!("{h} groups=23"));
        // Measured: p90 equal, p99 +0.3 %, p999 +3.1 %.
        for i in 1..4 {
            assert!((base[i] - patch[i]).abs() < 0.05 * base[i], "{h}: {i}");
        }
    }
}

#[test]
fn a_flat_topology_never_reaches_the_shortcut() {
    // orion-o6 is one cluster of 12 single-CPU groups: the fork walk takes a one-CPU group
    // as is, and its group step already counts a SCHED_IDLE-only CPU as busy.
    let r = result();
    for n in [1, 8, 23] {
        let case = format!("orion-o6 t1 groups={n}");
        let (base, patch) = lat(&r, &case);
        assert_eq!(base, patch, "{case}");
        let m = |p| r.metrics(&case, p).unwrap().task_cpu_residency_s.clone();
        assert_eq!(m("mainline"), m("sis-idle-first"), "{case}");
    }
}

#[test]
fn flat_and_nested_hierarchies_measure_alike() {
    let r = result();
    for n in GROUPS {
        assert_eq!(
            lat(&r, &format!("t1 groups={n}")),
            lat(&r, &format!("t2 groups={n}")),
            "groups={n}"
        );
    }
}

#[test]
fn table_and_json() {
    let r = result();
    insta::assert_snapshot!("sched_idle_select_table", r.render());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["study"], "sched-idle-select");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * (2 * GROUPS.len() + 3));
    assert_eq!(runs[0]["case"], "t1 groups=1");
    assert_eq!(runs[0]["profile"], "mainline");
    assert_eq!(runs[1]["profile"], "sis-idle-first");
    assert!(runs[0]["metrics"]["wakeup_latency_us"]["p99"].is_f64());
}
