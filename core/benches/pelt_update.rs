// SPDX-License-Identifier: GPL-2.0-only
//! Cost of one `__update_load_avg_se()` over a realistic run/sleep sequence
//! (`schedmath::pelt::bench_support`): `cargo bench -p schedmath --bench pelt_update`.
//!
//! Criterion reports the time of a batch of `OPS` updates; the per-update figure is that
//! divided by `OPS` (it is printed at the end too). The ops are generated before timing,
//! so only the PELT arithmetic is measured.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedmath::pelt::bench_support::{apply, checksum, UpdateOps};
use schedmath::pelt::{PeltTables, SchedAvg};

/// Updates per measured batch.
const OPS: usize = 100_000;
/// Length of the full sequence whose checksum is pinned.
const FULL: usize = 20_000_000;

fn pelt_update(c: &mut Criterion) {
    let ops: Vec<(u64, bool)> = UpdateOps::new().take(OPS).collect();
    let t = &PeltTables::HL32;
    let mut group = c.benchmark_group("pelt_update");
    group.throughput(Throughput::Elements(OPS as u64));
    group.bench_function("__update_load_avg_se", |b| {
        b.iter(|| {
            let mut sa = SchedAvg::default();
            let mut sum = 0u64;
            for &(now, running) in black_box(&ops) {
                sum = sum.wrapping_add(apply(&mut sa, now, running, t) as u64);
            }
            black_box((sum, sa))
        })
    });
    group.finish();

    // The full sequence once, checked against the pinned checksum, timed as a whole.
    let start = Instant::now();
    let (sum, sa) = checksum(FULL);
    let ns = start.elapsed().as_nanos() as f64 / FULL as f64;
    assert_eq!((sum, sa.util_avg), (6_160_728_732, 356), "checksum changed");
    println!("full sequence: {FULL} updates, checksum {sum}, final util_avg {}, {ns:.2} ns/update (including op generation)", sa.util_avg);
}

criterion_group!(benches, pelt_update);
criterion_main!(benches);
