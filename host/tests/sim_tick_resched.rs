// SPDX-License-Identifier: GPL-2.0-only
//! The tick's reschedule is carried out on the interrupt's exit, the platform's
//! `tick_resched_latency_ns` after `scheduler_tick()`: the next task's slice starts there.

use std::path::Path;

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate, Metrics, SimConfig, SimError, SimTask};

/// The lab guest with `latency_ns` between the tick and its `__schedule()`.
fn lab_guest(latency_ns: u64) -> Platform {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/platforms/lab-qemu-2c.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .lines()
        .filter(|l| !l.starts_with("tick_resched_latency_ns"))
        .collect::<Vec<_>>()
        .join("\n")
        .replacen(
            "clusters =",
            &format!("tick_resched_latency_ns = {latency_ns}\nclusters ="),
            1,
        );
    Platform::from_toml_str(&text, "lab-qemu-2c (test)").unwrap()
}

/// Three nice-0 hogs pinned to CPU 0 for 1 s at HZ 250.
fn three_hogs(latency_ns: u64, profile: &str) -> Result<Metrics, SimError> {
    three_hogs_at(latency_ns, profile, 250)
}

fn three_hogs_at(latency_ns: u64, profile: &str, hz: u32) -> Result<Metrics, SimError> {
    let tasks: Vec<SimTask> = (0..3)
        .map(|i| SimTask {
            cpus: Some(vec![0]),
            ..SimTask::periodic(&format!("hog{i}"), 100, 16_000_000, None)
        })
        .collect();
    let cfg = SimConfig {
        duration_ns: 1_000_000_000,
        hz,
        seed: 0,
    };
    let profile = Profile::from_name(profile).unwrap();
    simulate(&lab_guest(latency_ns), &tasks, &profile, &cfg)
}

fn switch_ins(m: &Metrics) -> u64 {
    m.context_switches.values().sum()
}

#[test]
fn a_6_1_slice_one_ns_short_of_the_tick_lasts_two_ticks_when_the_switch_comes_later() {
    // Three nice-0 tasks: 6.1's sched_slice() is 3 999 999 ns. Switching at the tick's
    // own instant, the next tick sees 4 000 000 ns run and preempts: 4 ms stretches.
    let at_tick = three_hogs(0, "fair-cfs").unwrap();
    assert_eq!(at_tick.run_stretch_us.p50, 4000.0);
    // Switching 26.4 µs later (the lab guest's measured median), the next task has run
    // 3 973 600 ns at the next tick: it keeps the CPU for a second one (the kernel's 8 ms).
    let later = three_hogs(26_400, "fair-cfs").unwrap();
    assert_eq!(later.run_stretch_us.p50, 8000.0);
    assert!(
        switch_ins(&later) * 10 < switch_ins(&at_tick) * 6,
        "{} vs {}",
        switch_ins(&later),
        switch_ins(&at_tick)
    );
    // EEVDF's 4 ms stretches (a base slice well under the tick, rescheduled at the first
    // tick past it) do not depend on where in the tick the switch falls.
    for latency in [0, 26_400] {
        let m = three_hogs(latency, "mainline").unwrap();
        assert_eq!(m.run_stretch_us.p50, 4000.0, "{latency} ns");
    }
}

#[test]
fn a_latency_not_below_the_tick_is_refused() {
    // The file takes up to 1 ms; a run whose tick is not longer refuses it.
    assert!(three_hogs_at(999_999, "fair-cfs", 1000).is_ok());
    let e = three_hogs_at(1_000_000, "fair-cfs", 1000)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tick_resched_latency_ns 1000000 is not below the tick (1000000 ns at HZ 1000)"),
        "{e}"
    );
}
