// SPDX-License-Identifier: GPL-2.0-only
//! README.md's "Simulator vs kernel" tables are what `schedmath versus CAPTURE` prints:
//! every ```` ```text ```` block starting with `$ schedmath versus DIR` must equal the
//! command's output, and every committed lab capture must have one.

use std::path::{Path, PathBuf};

use schedmath_host::{docs, versus};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn readme_versus_tables_match_the_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let blocks = docs::versus_blocks(&readme);
    let lab = root().join("fixtures/lab");
    let mut captures = Vec::new();
    for k in std::fs::read_dir(&lab).unwrap().map(|e| e.unwrap().path()) {
        if k.is_dir() && !k.ends_with("workloads") {
            for c in std::fs::read_dir(&k).unwrap().map(|e| e.unwrap().path()) {
                // one table per workload and kernel: the first capture (`<workload>/`); a
                // later one (`<workload>-2/`, fixtures/lab/README.md) has none
                if is_later_take(&c) {
                    continue;
                }
                let rel = c
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                captures.push(rel);
            }
        }
    }
    captures.sort();
    let mut named: Vec<String> = blocks.iter().map(|(d, _)| d.clone()).collect();
    named.sort();
    assert_eq!(
        named, captures,
        "README versus tables vs committed captures (first of each workload)"
    );
    for (dir, range) in &blocks {
        let (cap, k, m) = versus::run(&root().join(dir), None).unwrap();
        assert_eq!(
            &readme[range.clone()],
            versus::render(&cap, &k, &m),
            "README table of `{dir}` is stale: run `cargo xtask bless`"
        );
    }
}

/// A folder `<workload>-N` (N ≥ 2) beside `<workload>`: a later capture of the same workload.
fn is_later_take(dir: &Path) -> bool {
    let name = dir.file_name().unwrap().to_string_lossy();
    name.rsplit_once('-').is_some_and(|(w, n)| {
        n.parse::<u32>().is_ok_and(|n| n >= 2) && dir.with_file_name(w).is_dir()
    })
}

const KERNELS: [&str; 2] = ["6.1.0-57-amd64", "6.12.95+deb12-amd64"];

fn versus_of(kernel: &str, workload: &str) -> (versus::KernelRun, schedmath_host::sim::Metrics) {
    let dir = root().join("fixtures/lab").join(kernel).join(workload);
    let (_, k, m) = versus::run(&dir, None).unwrap();
    (k, m)
}

fn within_pct(kernel: f64, sim: f64, pct: f64) -> bool {
    (kernel - sim).abs() <= sim.abs() * pct / 100.0
}

/// The workload's switch-ins on both sides agree within `pct` % of the simulator's.
fn assert_switch_ins_within(
    kernel: &str,
    k: &versus::KernelRun,
    m: &schedmath_host::sim::Metrics,
    pct: f64,
) {
    let sim_switches = m.context_switches.values().sum::<u64>() as f64;
    assert!(
        within_pct(k.switches as f64, sim_switches, pct),
        "{kernel}: {} vs {sim_switches}",
        k.switches
    );
}

/// Issue 15's acceptance and the README's tolerance table for two competing hogs (nice 0
/// and nice 5 pinned to one CPU), on both kernels under their profiles: shares within 0.5
/// point of each other (the issue asks 1) and 0.2 point of the weights' 1024 / 1359 over
/// the same 3 s window; switch-ins within 2 %; run stretch p99 within 1 %.
#[test]
fn hogs_nice_agrees_within_the_readme_tolerances() {
    for kernel in KERNELS {
        let (k, m) = versus_of(kernel, "hogs-nice");
        assert!(
            (k.window_s - 3.0).abs() < 1e-9,
            "{kernel}: window {}",
            k.window_s
        );
        let shares = versus::shares(&k, &m);
        assert_eq!(shares.len(), 2, "{kernel}: {shares:?}");
        for (task, kernel_share, sim_share) in shares {
            let kernel_share = kernel_share.unwrap();
            let weight = if task.starts_with("hog0") {
                1024.0
            } else {
                335.0
            };
            let expected = 100.0 * weight / 1359.0;
            assert!(
                (kernel_share - sim_share).abs() < 0.5,
                "{kernel} {task}: kernel {kernel_share:.2} % vs sim {sim_share:.2} %"
            );
            assert!(
                (kernel_share - expected).abs() < 0.2,
                "{kernel} {task}: {kernel_share:.2}"
            );
            assert!(
                (sim_share - expected).abs() < 0.1,
                "{kernel} {task}: {sim_share:.2}"
            );
        }
        assert_switch_ins_within(kernel, &k, &m, 2.0);
        assert!(
            within_pct(k.stretch_us.1, m.run_stretch_us.p99, 1.0),
            "{kernel}: {:?}",
            k.stretch_us
        );
    }
}

/// The README's tolerance table: identical threads (`wakeup-storm`) within 0.5 point; a
/// lone periodic task's switch-ins within 5 %, its CPU time and run stretch p50 at most
/// 15 % above the simulator's (the guest's tick and probe inside its run), never below.
#[test]
fn identical_threads_and_lone_periodic_tasks_agree_within_the_readme_tolerances() {
    for kernel in KERNELS {
        let (k, m) = versus_of(kernel, "wakeup-storm");
        for (task, kernel_share, sim_share) in versus::shares(&k, &m) {
            let kernel_share = kernel_share.unwrap();
            assert!(
                (kernel_share - sim_share).abs() <= 0.5,
                "{kernel} {task}: {kernel_share:.2} vs {sim_share:.2}"
            );
        }
        for w in [
            "periodic-5pct-16ms",
            "periodic-25pct-16ms",
            "periodic-50pct-16ms",
            "periodic-90pct-16ms",
        ] {
            let (k, m) = versus_of(kernel, w);
            let sim_switches = m.context_switches.values().sum::<u64>() as f64;
            assert!(
                within_pct(k.switches as f64, sim_switches, 5.0),
                "{kernel} {w}: {} vs {sim_switches}",
                k.switches
            );
            let kernel_cpu: f64 = k.cpu_s.values().sum();
            let sim_cpu: f64 = m.task_cpu_residency_s.values().flatten().sum();
            for (what, kv, sv) in [
                ("CPU time", kernel_cpu, sim_cpu),
                ("stretch p50", k.stretch_us.0, m.run_stretch_us.p50),
            ] {
                assert!(
                    kv >= sv && kv <= sv * 1.15,
                    "{kernel} {w} {what}: {kv} vs {sv}"
                );
            }
        }
    }
}

/// The README's tolerance table: five always-runnable threads on two CPUs
/// (`oversubscribed`): both sides' periodic load balance rotates them, so each thread
/// (the hog, and each `busy` instance against the kernel's evenly split sum) gets a fifth
/// of the CPU time within 1 point and the migrations agree within 15 %; with the tick's
/// switch on the interrupt's exit (`tick_resched_latency_ns`) the switch-ins agree within
/// 2 % and the run stretch p50 within 1 % (6.1: 8 ms, two ticks of a slice 1 ns short of
/// one; 6.12: 4 ms).
#[test]
fn oversubscribed_shares_switches_and_migrations_agree_within_the_readme_tolerances() {
    for kernel in KERNELS {
        let (k, m) = versus_of(kernel, "oversubscribed");
        let shares = versus::shares(&k, &m);
        assert_eq!(shares.len(), 5, "{kernel}: {shares:?}");
        for (task, kernel_share, sim_share) in shares {
            let kernel_share = kernel_share.unwrap();
            assert!(
                (kernel_share - sim_share).abs() <= 1.0,
                "{kernel} {task}: {kernel_share:.2} vs {sim_share:.2}"
            );
        }
        let sim_migrations = m.migrations.values().sum::<u64>() as f64;
        assert!(
            within_pct(k.migrations as f64, sim_migrations, 15.0),
            "{kernel}: {} vs {sim_migrations}",
            k.migrations
        );
        assert_switch_ins_within(kernel, &k, &m, 2.0);
        assert!(
            within_pct(k.stretch_us.0, m.run_stretch_us.p50, 1.0),
            "{kernel}: {:?} vs {}",
            k.stretch_us,
            m.run_stretch_us.p50
        );
    }
}
