// SPDX-License-Identifier: GPL-2.0-only
//! Task groups in the simulator: CPU time split by group shares, idle groups, nested
//! groups and the idle-entity wake-up preemption rule, on rt-app workloads pinned to one
//! CPU of the rk3399 (measured values, asserted with tight bounds).

use std::path::{Path, PathBuf};

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate, tasks_from_workload, Metrics, SimConfig};
use schedmath_host::workload::Workload;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run_json(json: &str, secs: u64) -> Metrics {
    let p = Platform::load(&root().join("fixtures/platforms/rk3399.toml")).unwrap();
    let w = Workload::from_str_with_ext(json, "groups.json", Some("json")).unwrap();
    let cfg = SimConfig {
        duration_ns: secs * 1_000_000_000,
        hz: 250,
        seed: 0,
    };
    simulate(
        &p,
        &tasks_from_workload(&w).unwrap(),
        &Profile::MAINLINE,
        &cfg,
    )
    .unwrap()
}

/// Share of CPU 0's busy time that `task` got.
fn share(m: &Metrics, task: &str) -> f64 {
    let busy: f64 = m.task_cpu_residency_s.values().map(|v| v[0]).sum();
    m.task_cpu_residency_s[task][0] / busy
}

/// A busy task (100 ms runs forever) pinned to CPU 0 in `group`.
fn busy(group: &str, extra: &str) -> String {
    format!(r#"{{ "taskgroup": "{group}", "cpus": [0], "run": 100000 {extra} }}"#)
}

fn assert_share(m: &Metrics, task: &str, lo: f64, hi: f64) {
    let s = share(m, task);
    assert!(lo <= s && s <= hi, "{task}: {s} not in [{lo}, {hi}]");
}

#[test]
fn shares_2048_vs_1024_split_the_cpu_two_to_one() {
    let json = format!(
        r#"{{ "tasks": {{ "a": {}, "b": {} }},
             "schedmath": {{ "taskgroups": {{ "/a": {{ "shares": 2048 }}, "/b": {{ "shares": 1024 }} }} }} }}"#,
        busy("/a", ""),
        busy("/b", "")
    );
    // Measured: 0.6664 / 0.3336 (group entities weigh 2048 and 1024 on their CPU).
    let m = run_json(&json, 5);
    assert_share(&m, "a-0", 0.666, 0.667);
    assert_share(&m, "b-0", 0.333, 0.334);
}

#[test]
fn one_task_in_a_group_gets_as_much_as_three_in_another() {
    let json = format!(
        r#"{{ "tasks": {{ "a": {}, "b": {} }} }}"#,
        busy("/A", ""),
        busy("/B", r#", "instance": 3"#)
    );
    // Measured: 0.5000 for A; 0.1664, 0.1672, 0.1664 for B's three.
    let m = run_json(&json, 5);
    assert_share(&m, "a-0", 0.4995, 0.5005);
    for b in ["b-0", "b-1", "b-2"] {
        assert_share(&m, b, 0.166, 0.168);
    }
}

/// Two tasks (in this order), with `/bg` an idle group.
fn idle_bg(first: (&str, String), second: (&str, String)) -> String {
    format!(
        r#"{{ "tasks": {{ "{}": {}, "{}": {} }},
             "schedmath": {{ "taskgroups": {{ "/bg": {{ "idle": true }} }} }} }}"#,
        first.0, first.1, second.0, second.1
    )
}

#[test]
fn an_idle_group_gets_what_weight_3_gets() {
    let json = idle_bg(("bg", busy("/bg", "")), ("fg", busy("/", "")));
    // Measured: 0.9968 / 0.0032 (weight 1024 against WEIGHT_IDLEPRIO 3: 3/1027 = 0.0029).
    let m = run_json(&json, 5);
    assert_share(&m, "fg-0", 0.996, 0.998);
    assert_share(&m, "bg-0", 0.002, 0.004);
}

/// A periodic task (1 ms every 10 ms) on CPU 0 in `group`.
fn periodic(group: &str) -> String {
    format!(
        r#"{{ "taskgroup": "{group}", "cpus": [0], "run": 1000, "timer": {{ "ref": "t", "period": 10000 }} }}"#
    )
}

#[test]
fn a_waking_task_preempts_an_idle_group_task_at_once() {
    let json = idle_bg(("bg", busy("/bg", "")), ("fg", periodic("/")));
    // Measured: every activation of fg runs at once (p99 0 µs; p99.9 is the first start
    // out of idle, 1 µs).
    let m = run_json(&json, 5);
    let l = m.wakeup_latency_us;
    assert_eq!((l.p50, l.p90, l.p99), (0.0, 0.0, 0.0));
    let json = idle_bg(("fg", busy("/", "")), ("bg", periodic("/bg")));
    // The idle-group task waking beside a busy normal task does not preempt it: it waits
    // for the tick (measured p50 4000 µs) and gets the weight-3 share (0.35 %), far too
    // little for its 1 ms period work, so later wake-ups wait much longer.
    let m = run_json(&json, 5);
    assert_eq!(m.wakeup_latency_us.p50, 4000.0);
    assert!(m.wakeup_latency_us.p90 > 100_000.0);
    assert_share(&m, "bg-0", 0.003, 0.004);
}

#[test]
fn nested_groups_split_level_by_level() {
    let json = format!(
        r#"{{ "tasks": {{ "ab": {}, "a": {}, "c": {} }} }}"#,
        busy("/a/b", ""),
        busy("/a", ""),
        busy("/c", "")
    );
    // Root: /a and /c equal; inside /a: task a and the /a/b entity equal.
    // Measured: ab 0.2504, a 0.2496, c 0.5000.
    let m = run_json(&json, 5);
    assert_share(&m, "ab-0", 0.249, 0.251);
    assert_share(&m, "a-0", 0.249, 0.251);
    assert_share(&m, "c-0", 0.4995, 0.5005);
}

#[test]
fn a_phase_moves_the_task_into_an_idle_group() {
    // mover: 200 ms of work in the root (half the CPU beside fg), then into /bg (idle).
    let json = format!(
        r#"{{ "tasks": {{ "fg": {}, "mover": {{ "cpus": [0], "loop": 1, "phases": {{
                "p1": {{ "run": 200000 }},
                "p2": {{ "taskgroup": "/bg", "loop": -1, "run": 100000 }} }} }} }},
             "schedmath": {{ "taskgroups": {{ "/bg": {{ "idle": true }} }} }} }}"#,
        busy("/", "")
    );
    // Measured: mover 0.552 s of CPU (about 0.54 s for p1 while sharing half the CPU,
    // then weight 3 against 1024), fg 4.448 s. Left in the root it would get half.
    let m = run_json(&json, 5);
    let on = |t: &str| m.task_cpu_residency_s[t][0];
    assert!((0.545..0.56).contains(&on("mover-0")), "{}", on("mover-0"));
    assert!((4.44..4.455).contains(&on("fg-0")), "{}", on("fg-0"));
}

#[test]
fn the_idle_group_fixture_simulates() {
    let path = root().join("fixtures/workloads/idle-group.json");
    let w = Workload::load(&path).unwrap();
    let p = Platform::load(&root().join("fixtures/platforms/rk3399.toml")).unwrap();
    let cfg = SimConfig {
        duration_ns: 3_000_000_000,
        hz: 250,
        seed: 0,
    };
    // The UI frames (3 ms each 16.667 ms, 60 a cycle, then 100 ms asleep) are never held
    // up: 169 frames = 507 ms (two cycles, then 49 frames in the 0.8 s left), measured
    // 507.0 ms. The batch forks first, onto CPU 0. The UI task's fork walk stays in the
    // little cluster at PKG level (3 idle CPUs against 2) and at MC level counts CPU 0
    // as busy (nr_running 1, idle_cpus 0), so it lands on idle CPU 1 and never shares a
    // CPU with the batch (2959.3 ms of batch work, measured; before the sched-domain walk
    // the one-group scan returned SCHED_IDLE-only CPU 0 at once: 2177.6 ms).
    let m = simulate(
        &p,
        &tasks_from_workload(&w).unwrap(),
        &Profile::MAINLINE,
        &cfg,
    )
    .unwrap();
    assert!((506.5..507.5).contains(&m.work_done_ms["ui-0"]));
    assert!((2959.0..2960.0).contains(&m.work_done_ms["batch-0"]));
}
