// SPDX-License-Identifier: GPL-2.0-only
//! VARIANTS.md §3 (`sis-idle-first`) in the simulator: where a forked latency-sensitive
//! task lands beside SCHED_IDLE busy noise. The profiles differ in the fork (slow) path
//! only, inside groups of more than one CPU; wake-ups (fast path) take a SCHED_IDLE-only
//! CPU as idle under both.

use std::path::Path;

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate, Metrics, SchedPolicy, SimConfig, SimTask};

fn run(profile: &str) -> Metrics {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let p = Platform::load(&root.join("fixtures/platforms/laptop-2c4t.toml")).unwrap();
    // SCHED_IDLE noise that never sleeps, pinned to CPUs 0 and 1; CPUs 2 and 3 stay truly
    // idle. The latency task (5 % of 4 ms) forks at 1 ms.
    let mut tasks: Vec<SimTask> = (0..2)
        .map(|c| {
            let mut t = SimTask::periodic(&format!("noise{c}"), 100, 10_000_000, None);
            t.policy = SchedPolicy::Idle;
            t.cpus = Some(vec![c]);
            t
        })
        .collect();
    let mut lat = SimTask::periodic("lat", 5, 4_000_000, None);
    lat.delay_ns = 1_000_000;
    tasks.push(lat);
    let cfg = SimConfig {
        duration_ns: 2_000_000_000,
        hz: 250,
        seed: 0,
    };
    simulate(&p, &tasks, &Profile::from_name(profile).unwrap(), &cfg).unwrap()
}

/// Measured: both profiles fork the latency task onto truly idle CPU 2 and give the same
/// numbers. The fork walk starts on CPU 0: at MC level the cores {0,2} and {1,3} each have
/// one idle CPU, so it stays on core {0,2}; at SMT level CPU 0 (SCHED_IDLE noise:
/// nr_running 1, fully busy) loses to idle CPU 2, a single-CPU group returned without the
/// CPU scan, so the SCHED_IDLE shortcut (the one point where the profiles differ) is
/// never reached. On CPU 2 every wake-up pays the idle state's exit latency, and its own
/// cpufreq policy, driven by this 5 % task alone, stays at low P-states (0.85 s of run
/// time). Before the sched-domain walk (one group of every CPU) base returned CPU 0 at
/// once: p50..p99 0 µs, 0.10 s of run time beside the noise at the top P-state.
#[test]
fn sis_idle_first_fork_placement_beside_sched_idle_noise() {
    let base = run("mainline");
    let patch = run("sis-idle-first");
    let l = |m: &Metrics| {
        let w = &m.wakeup_latency_us;
        [w.p50, w.p90, w.p99, w.p999]
    };
    assert_eq!((base.wakeups, patch.wakeups), (502, 502));
    assert_eq!(l(&base), [200.0, 200.0, 200.0, 890.0]);
    assert_eq!(l(&patch), [200.0, 200.0, 200.0, 890.0]);
    assert_eq!(base.task_cpu_residency_s["lat"], [0.0, 0.0, 0.847816, 0.0]);
    assert_eq!(patch.task_cpu_residency_s["lat"], [0.0, 0.0, 0.847816, 0.0]);
    for m in [&base, &patch] {
        assert_eq!(m.deadline_misses.get("lat"), Some(&0));
        assert_eq!(m.work_done_ms.get("lat"), Some(&100.0));
    }
}
