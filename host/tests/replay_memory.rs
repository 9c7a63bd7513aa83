// SPDX-License-Identifier: GPL-2.0-only
//! Replay memory does not grow with the trace's length: the same timeline, 10× longer,
//! read from a generated `Read` (nothing written to disk), peaks at the same heap size.
//! The heap is counted by this test binary's own global allocator (one test in the
//! binary, so no other test allocates meanwhile). BENCHMARKS.md ("Replay of a 1 GB
//! trace") has the peak RSS of `schedmath replay` on a 1 GB file made by the same
//! generator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use schedmath::profile::Profile;
use schedmath_host::replay::replay;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counters are only added to.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        System.dealloc(p, l)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A `trace-cmd report` text of `cycles` × 3 lines, made on the fly: on each of two CPUs
/// four tasks take turns (a `sched_wakeup`, the `sched_switch` to it, a tick), 1 µs apart.
pub struct Generated {
    cycles: u64,
    i: u64,
    line: Vec<u8>,
    pos: usize,
}

impl Generated {
    pub fn new(cycles: u64) -> Self {
        Generated {
            cycles,
            i: 0,
            line: b"cpus=2\n".to_vec(),
            pos: 0,
        }
    }

    fn next_lines(&mut self) {
        use std::io::Write;
        let (i, cpu) = (self.i, self.i % 2);
        let k = i / 2;
        let base = 100 + 10 * cpu;
        let (prev, next) = (base + k % 4, base + (k + 1) % 4);
        let ts = |n: u64| (3 * i + n + 1_000_000, cpu);
        self.line.clear();
        let (t0, _) = ts(0);
        let (t1, _) = ts(1);
        let (t2, _) = ts(2);
        let _ = write!(
            self.line,
            "          t{prev}-{prev}   [{cpu:03}]  {}.{:06}: sched_wakeup:         t{next}:{next} [120] CPU:{cpu:03}\n\
             \x20         t{prev}-{prev}   [{cpu:03}]  {}.{:06}: sched_switch:         t{prev}:{prev} [120] R ==> t{next}:{next} [120]\n\
             \x20         t{next}-{next}   [{cpu:03}]  {}.{:06}: hrtimer_expire_entry: hrtimer=0xff3f97583d226418 now={} function=tick_sched_timer/0x0\n",
            t0 / 1_000_000,
            t0 % 1_000_000,
            t1 / 1_000_000,
            t1 % 1_000_000,
            t2 / 1_000_000,
            t2 % 1_000_000,
            t2 * 1000,
        );
        self.pos = 0;
        self.i += 1;
    }
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.line.len() {
            if self.i == self.cycles {
                return Ok(0);
            }
            self.next_lines();
        }
        let n = buf.len().min(self.line.len() - self.pos);
        buf[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// (peak heap bytes above the start, events read, entities) of a replay of `cycles`.
fn peak_of(cycles: u64) -> (usize, u64, usize) {
    let start = LIVE.load(Relaxed);
    PEAK.store(start, Relaxed);
    let r = replay(
        Generated::new(cycles),
        "generated",
        None,
        Profile::MAINLINE,
        false,
        true,
    )
    .unwrap();
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    let peak = PEAK.load(Relaxed) - start;
    (peak, r.events, r.entities.len())
}

#[test]
fn replay_memory_does_not_grow_with_trace_length() {
    // Warm-up: one-time allocations (lazy tables, thread-locals) are not the replay's.
    let _ = peak_of(1000);
    let (small, ev_small, ent_small) = peak_of(20_000);
    let (big, ev_big, ent_big) = peak_of(200_000);
    assert_eq!((ev_small, ev_big), (60_000, 600_000));
    assert_eq!(ent_small, ent_big);
    assert_eq!(
        big, small,
        "peak heap: {small} B for 60k lines, {big} B for 600k"
    );
}

/// Writes the generator's text to `$SCHEDMATH_TRACE_OUT` (`$SCHEDMATH_TRACE_CYCLES`
/// cycles, default 3 300 000: 1.03 GB, 311 bytes a cycle) for the peak-RSS measurement in BENCHMARKS.md.
#[test]
#[ignore = "writes a large file; run by hand for BENCHMARKS.md"]
fn write_generated_trace() {
    let out = std::env::var("SCHEDMATH_TRACE_OUT").expect("SCHEDMATH_TRACE_OUT=PATH");
    let cycles = std::env::var("SCHEDMATH_TRACE_CYCLES").map_or(3_300_000, |v| {
        v.parse().expect("SCHEDMATH_TRACE_CYCLES: a number")
    });
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).unwrap());
    std::io::copy(&mut Generated::new(cycles), &mut f).unwrap();
}
