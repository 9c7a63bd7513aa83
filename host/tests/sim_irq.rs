// SPDX-License-Identifier: GPL-2.0-only
//! Irq time in the simulator (`schedmath.irq_pct`): the task clock loses it, `rq->avg_irq`
//! tracks it with the kernel's `update_irq_load_avg()`, and `capacity_of()` (so
//! overutilized) sees it. One always-busy task pinned to rk3399's big CPU 4.

use std::path::Path;

use schedmath::pelt::{update_irq_load_avg, PeltTables, SchedAvg};
use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate_workload, Metrics, SimConfig};
use schedmath_host::workload::Workload;

/// 2 s of `hog` (1 s `run` steps, forever) pinned to CPU 4 of rk3399, with `irq` as the
/// extension's members.
fn run(irq: &str, profile: &str) -> Metrics {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let p = Platform::load(&root.join("fixtures/platforms/rk3399.toml")).unwrap();
    let text = format!(
        "{{ \"tasks\" : {{ \"hog\" : {{ \"cpus\" : [4], \"run\" : 1000000 }} }}, \"schedmath\" : {{ {irq} }} }}"
    );
    let w = Workload::from_str_with_ext(&text, "w.json", Some("json")).unwrap();
    w.validate(p.nr_cpus()).unwrap();
    let cfg = SimConfig {
        duration_ns: 2_000_000_000,
        hz: 250,
        seed: 0,
    };
    simulate_workload(&p, &w, &Profile::from_name(profile).unwrap(), &cfg).unwrap()
}

const IRQ10: &str = "\"irq_pct\" : { \"4\" : 10 }";

#[test]
fn a_busy_task_does_ninety_percent_of_its_work_under_ten_percent_irq() {
    let (plain, irq) = (run("", "mainline"), run(IRQ10, "mainline"));
    let (w0, w1) = (plain.work_done_ms["hog-0"], irq.work_done_ms["hog-0"]);
    assert_eq!((w0, w1), (1990.249328, 1791.2244));
    // 90 % to the ns: the per-segment work truncations cost at most a few ns.
    assert!((w1 - w0 * 0.9).abs() < 1e-5, "{w1} vs {}", w0 * 0.9);
    // The CPU is busy in irq: same frequencies, same energy.
    assert_eq!(irq.energy_j, plain.energy_j);
    assert_eq!(irq.freq_residency_s, plain.freq_residency_s);
    // The irq keys only appear with irq time.
    assert!(plain.irq_util_avg_end.is_empty() && plain.cpu_capacity_end.is_empty());
    let json = serde_json::to_string(&plain).unwrap();
    assert!(!json.contains("irq_util_avg_end") && !json.contains("cpu_capacity_end"));
}

/// `rq->avg_irq` as the kernel computes it for this run: CPU 4 runs the hog from the
/// start, so its rq clock is updated at every tick (4 ms), each time with 400 µs of irq;
/// at 1.8 GHz (CPU 4's top OPP, where schedutil keeps it from the first 40 ms on) and
/// capacity 1024 `update_irq_load_avg()` scales nothing. 3.6 ms of decay then 0.4 ms of
/// irq per tick average 10 % of 1024 = 102.4, but the signal is read right after each
/// burst (the kernel's pessimistic "irq just before the update"), so above the mean.
fn kernel_irq_util(ticks: u64) -> u64 {
    let t = PeltTables::of(Profile::MAINLINE.halflife);
    let mut sa = SchedAvg::default();
    let boot = 1_000_000_000u64;
    for k in 1..=ticks {
        update_irq_load_avg(boot + k * 4_000_000, &mut sa, 400_000, 1024, 1024, t);
    }
    sa.util_avg
}

#[test]
fn irq_util_converges_to_the_kernels_value_and_takes_capacity() {
    let m = run(IRQ10, "mainline");
    let util = m.irq_util_avg_end[&4];
    // 2 s = 500 ticks; the first ticks at lower OPPs are forgotten 60 half-lives later.
    assert_eq!(kernel_irq_util(500), 106);
    assert_eq!(util, 106);
    assert!((102..=110).contains(&util));
    // scale_rt_capacity(): no RT, so (1024 − irq) × 1024 / 1024.
    assert_eq!(m.cpu_capacity_end[&4], 1024 - 106);
    assert!(m.cpu_capacity_end[&4] < 1024);
    // Only CPUs with irq time are reported.
    assert_eq!(m.irq_util_avg_end.keys().collect::<Vec<_>>(), [&4]);
}

#[test]
fn irq_time_defeats_the_lone_task_exception() {
    // Without irq the patch keeps the lone task from overutilizing; with irq on CPU 4 its
    // capacity_of() drops below capacity_orig, "capacity not reduced" fails, and the
    // patch overutilizes exactly as mainline.
    let ou = |irq: &str, p: &str| run(irq, p).ou_pct;
    assert_eq!(ou("", "mainline"), 97.2);
    assert_eq!(ou("", "ou-lone-task"), 0.0);
    assert_eq!(ou(IRQ10, "mainline"), 97.4);
    assert_eq!(ou(IRQ10, "ou-lone-task"), 97.4);
    // Even 1 % of irq is enough.
    let one = "\"irq_pct\" : { \"4\" : 1 }";
    assert_eq!(ou(one, "ou-lone-task"), ou(one, "mainline"));
}

#[test]
fn irq_on_other_cpus_changes_nothing_for_the_hog() {
    let plain = run("", "ou-lone-task");
    let other = run("\"irq_pct\" : { \"0\" : 20, \"5\" : 5 }", "ou-lone-task");
    assert_eq!(other.work_done_ms, plain.work_done_ms);
    assert_eq!(other.ou_pct, 0.0);
    assert_eq!(other.irq_util_avg_end.keys().collect::<Vec<_>>(), [&0, &5]);
}
