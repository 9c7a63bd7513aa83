// SPDX-License-Identifier: GPL-2.0-only
//! The `schedmath.io_latency_us` workload extension: every `iorun` waits a device latency
//! drawn uniformly from `[min, max]` µs by the task's seeded generator. Accepted and
//! rejected forms (errors name file:line:column and the key path), and the seed's effect
//! on the IOPS of a simulation.

use std::path::Path;

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate, tasks_from_workload, Metrics, SimConfig};
use schedmath_host::workload::Workload;

/// A one-task psync-like loop (20 µs of work, then a read) with `ext` as the extension's
/// `io_latency_us` value.
fn fio(ext: &str) -> String {
    format!(
        "{{\n \"tasks\" : {{ \"fio\" : {{ \"cpus\" : [1], \"run\" : 20, \"iorun\" : 4096 }} }},\n \"schedmath\" : {{ \"io_latency_us\" : {ext} }}\n}}"
    )
}

fn load(text: &str) -> Result<Workload, String> {
    Workload::from_str_with_ext(text, "w.json", Some("json")).map_err(|e| e.to_string())
}

#[test]
fn io_latency_range_is_read_in_ns() {
    let w = load(&fio("[50, 500]")).unwrap();
    assert_eq!(w.global.io_latency_ns, Some((50_000, 500_000)));
    let w = load(&fio("[300, 300]")).unwrap();
    assert_eq!(w.global.io_latency_ns, Some((300_000, 300_000)));
    let w = load("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"iorun\" : 10 } } }").unwrap();
    assert_eq!(w.global.io_latency_ns, None);
}

#[test]
fn bad_io_latency_ranges_name_line_column_and_key() {
    for v in ["[500, 50]", "[0, 5]", "\"x\"", "[1]"] {
        assert_eq!(
            load(&fio(v)).unwrap_err(),
            "w.json:3:36: schedmath.io_latency_us: expected [min, max] in µs with 1 <= min <= max",
            "{v}"
        );
    }
    assert_eq!(
        load(&fio("[1.5, 2]")).unwrap_err(),
        "w.json:3:37: schedmath.io_latency_us: expected an integer, found a non-integer number"
    );
    assert_eq!(
        load("{ \"tasks\" : { \"t\" : { \"run\" : 1 } }, \"schedmath\" : { \"io_latency\" : [1, 2] } }")
            .unwrap_err(),
        "w.json:1:54: schedmath.io_latency: unknown key (the schedmath extension has taskgroups, io_latency_us, irq_pct)"
    );
}

fn iops(seed: u64) -> Metrics {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let p = Platform::load(&root.join("fixtures/platforms/rk3399.toml")).unwrap();
    let w = load(&fio("[50, 500]")).unwrap();
    let cfg = SimConfig {
        duration_ns: 200_000_000,
        hz: 250,
        seed,
    };
    let prof = Profile::from_name("teo-v6.12").unwrap();
    simulate(&p, &tasks_from_workload(&w).unwrap(), &prof, &cfg).unwrap()
}

#[test]
fn the_seed_draws_the_io_latencies() {
    let (a, b) = (iops(0), iops(1));
    // Mean latency 275 µs; each seed draws its own sequence.
    assert_eq!((a.iops, b.iops), (2920.0, 2950.0));
    assert_eq!(iops(0), a);
}
