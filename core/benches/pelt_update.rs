// SPDX-License-Identifier: GPL-2.0-only
//! Cost of one `__update_load_avg_se()` over a realistic run/sleep sequence
//! (`schedmath::pelt::bench_support`): `cargo bench -p schedmath --bench pelt_update`.
//!
//! One criterion iteration is one update, so criterion's `time` is ns per update. The ops
//! are generated before timing and replayed in blocks of `OPS` from a zeroed state, so
//! only the PELT arithmetic is measured. Afterwards the full 20 M-op sequence runs once
//! and its checksum is asserted (the same figure the unit test pins).

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use schedmath::pelt::bench_support::{apply, checksum, UpdateOps};
use schedmath::pelt::{PeltTables, SchedAvg};

/// Length of one replayed block of the sequence.
const OPS: usize = 100_000;
/// Length of the full sequence whose checksum is pinned.
const FULL: usize = 20_000_000;

fn pelt_update(c: &mut Criterion) {
    let ops: Vec<(u64, bool)> = UpdateOps::new().take(OPS).collect();
    let t = &PeltTables::HL32;
    c.bench_function("pelt_update/__update_load_avg_se", |b| {
        b.iter_custom(|iters| {
            let mut left = iters;
            let mut sum = 0u64;
            let start = Instant::now();
            while left > 0 {
                let n = left.min(OPS as u64) as usize;
                let mut sa = SchedAvg::default();
                for &(now, running) in black_box(&ops[..n]) {
                    sum = sum.wrapping_add(apply(&mut sa, now, running, t) as u64);
                }
                black_box(&sa);
                left -= n as u64;
            }
            let elapsed = start.elapsed();
            black_box(sum);
            elapsed
        })
    });

    let start = Instant::now();
    let (sum, sa) = checksum(FULL);
    let ns = start.elapsed().as_nanos() as f64 / FULL as f64;
    assert_eq!((sum, sa.util_avg), (6_160_728_732, 356), "checksum changed");
    println!(
        "full sequence: {FULL} updates, checksum {sum}, final util_avg {}, {ns:.2} ns/update (including op generation)",
        sa.util_avg
    );
}

criterion_group!(benches, pelt_update);
criterion_main!(benches);
