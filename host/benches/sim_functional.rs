// SPDX-License-Identifier: GPL-2.0-only
//! Simulator throughput: simulated seconds per wall second.
//!
//! Scenario: fixtures/platforms/m1pro-8c.toml, one always-busy task plus four 5 % / 16 ms
//! periodic tasks (VARIANTS.md §1), mainline profile, HZ=250. Three runs: 10 s and 100 s
//! of simulated time, and 10 s with sleeps 10× longer (5 % / 160 ms tasks). Criterion's
//! `time` is the wall time of one whole simulation. `10s_traced` is the 10 s run recording
//! its events (`simulate_traced`, the `--trace` path, without writing a file): the cost of
//! a trace when asked for; `10s` is the default path, which records nothing.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate, simulate_traced, SimConfig, SimTask};

fn tasks(small_period_ns: u64) -> Vec<SimTask> {
    let mut t = vec![SimTask::periodic("busy", 100, 16_000_000, None)];
    for i in 0..4 {
        t.push(SimTask::periodic(
            &format!("small-{i}"),
            5,
            small_period_ns,
            None,
        ));
    }
    t
}

fn bench(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/platforms/m1pro-8c.toml");
    let platform = Platform::load(&path).expect("m1pro-8c.toml loads");
    let mut g = c.benchmark_group("sim_functional");
    g.sample_size(10);
    for (name, secs, period) in [
        ("10s", 10u64, 16_000_000u64),
        ("100s", 100, 16_000_000),
        ("10s_sleep10x", 10, 160_000_000),
    ] {
        let cfg = SimConfig {
            duration_ns: secs * 1_000_000_000,
            hz: 250,
            seed: 0,
        };
        let t = tasks(period);
        g.bench_function(name, |b| {
            b.iter(|| simulate(&platform, &t, &Profile::MAINLINE, &cfg).expect("simulates"))
        });
    }
    let cfg = SimConfig {
        duration_ns: 10_000_000_000,
        hz: 250,
        seed: 0,
    };
    let t = tasks(16_000_000);
    g.bench_function("10s_traced", |b| {
        b.iter(|| {
            simulate_traced(&platform, &t, &[], &Profile::MAINLINE, &cfg, &mut |_| {})
                .expect("simulates")
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
