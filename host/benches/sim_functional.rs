// SPDX-License-Identifier: GPL-2.0-only
//! Simulator throughput: simulated seconds per wall second.
//!
//! Scenario: fixtures/platforms/m1pro-8c.toml, one always-busy task plus four 5 % / 16 ms
//! periodic tasks (VARIANTS.md §1), mainline profile, HZ=250. Three runs: 10 s and 100 s
//! of simulated time, and 10 s with sleeps 10× longer (5 % / 160 ms tasks). Criterion's
//! `time` is the wall time of one whole simulation.
//!
//! Before the timing, each case runs once under a counting global allocator and prints
//! its events (heap pops the loop handled), allocations and bytes allocated per event:
//! deterministic figures, unlike the time.
//! `10s_traced` is the 10 s run recording
//! its events (`simulate_traced`, the `--trace` path, without writing a file): the cost of
//! a trace when asked for; `10s` is the default path, which records nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use criterion::{criterion_group, criterion_main, Criterion};

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{
    simulate, simulate_counting_events, simulate_traced, SimConfig, SimTask,
};

/// The system allocator, counting allocations and bytes (reallocations count their new
/// size).
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to `System` unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(l.size() as u64, Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new as u64, Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
        let (a0, b0) = (ALLOCS.load(Relaxed), BYTES.load(Relaxed));
        let (_, events) =
            simulate_counting_events(&platform, &t, &Profile::MAINLINE, &cfg).expect("simulates");
        let (allocs, bytes) = (ALLOCS.load(Relaxed) - a0, BYTES.load(Relaxed) - b0);
        println!(
            "sim_functional/{name}: {events} events, {allocs} allocations ({:.3}/event), \
             {bytes} bytes allocated ({:.1}/event)",
            allocs as f64 / events as f64,
            bytes as f64 / events as f64
        );
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
