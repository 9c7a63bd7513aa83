// SPDX-License-Identifier: GPL-2.0-only
//! The drift of the rq clock against the trace clock, refitted to the update points.
//!
//! The first line (`drift_line`) is fitted through each 0.25 s window's largest
//! `now - timestamp`, one record per window: its slope carries that record's write
//! latency, which differs between windows. The update points' samples (an event's stamp
//! against the kernel's clock read of the update it starts: `point_samples`) are
//! thousands per window and each point's path is the same code, so their residuals about
//! the point's median trace what the first line missed. Measured on the dequeue point
//! (`sched_stat_runtime` to its PELT record) per 0.25 s window: 6.1 `wakeup-storm`, median
//! +146 ns in the first window, −175 ns in the last two seconds later (the line 170 ppb
//! off); 6.1 `wakeup-storm-2` −453 → +448 ns; 6.12 `wakeup-storm` −335 → +363 ns, each
//! window's own spread 30–60 ns (p10–p90). A dequeue's clock read 100–400 ns off moves its
//! update across a PELT period boundary (1024 ns) one time in three to ten.
//!
//! The refit: one least-squares slope of the residuals against their stamp, pooled over
//! the points (each about its own mean), from the samples within [`FIT_CLIP_NS`] of their
//! point's median (a late write or a vCPU pause lies µs to ms off). The timer wake-up's
//! point compares two clock reads, not a stamp: it has no drift and stays out.

use super::{ClockPoint, CLOCK_POINTS};

/// How far from its point's median a sample may lie and still count in the fit (ns): the
/// drift's error over a capture's seconds (≤ 1 µs), not a late write's µs.
const FIT_CLIP_NS: i64 = 2_000;

/// Samples needed before the refit replaces the first line's slope.
const FIT_MIN_SAMPLES: f64 = 100.0;

/// One point's sums of (stamp in s from `t0`, residual in ns).
#[derive(Clone, Copy, Default)]
struct Sums {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
}

/// The pooled least-squares fit of the points' residuals against their stamps.
pub(super) struct DriftFit {
    t0: u64,
    median: [Option<i64>; CLOCK_POINTS],
    sums: [Sums; CLOCK_POINTS],
}

impl DriftFit {
    /// A fit about the points' medians `median` (relative to the line to correct), stamps
    /// counted from `t0`.
    pub(super) fn new(t0: u64, median: [Option<i64>; CLOCK_POINTS]) -> Self {
        DriftFit {
            t0,
            median,
            sums: [Sums::default(); CLOCK_POINTS],
        }
    }

    /// One sample of point `p`: residual `d` (ns) of the event stamped `ts`.
    pub(super) fn add(&mut self, p: ClockPoint, d: i64, ts: u64) {
        if p == ClockPoint::TimerWaking {
            return;
        }
        let Some(m) = self.median[p as usize] else {
            return;
        };
        if d.abs_diff(m) > FIT_CLIP_NS as u64 {
            return;
        }
        let x = (i128::from(ts) - i128::from(self.t0)) as f64 / 1e9;
        let y = (d - m) as f64;
        let s = &mut self.sums[p as usize];
        s.n += 1.0;
        s.x += x;
        s.y += y;
        s.xx += x * x;
        s.xy += x * y;
    }

    /// The residuals' slope (ns per s of trace = ppb), `None` from too few samples.
    pub(super) fn slope_ppb(&self) -> Option<i64> {
        let (n, sxy, sxx) =
            self.sums
                .iter()
                .filter(|s| s.n > 0.0)
                .fold((0.0, 0.0, 0.0), |(n, sxy, sxx), s| {
                    (
                        n + s.n,
                        sxy + s.xy - s.x * s.y / s.n,
                        sxx + s.xx - s.x * s.x / s.n,
                    )
                });
        (n >= FIT_MIN_SAMPLES && sxx > 0.0).then(|| (sxy / sxx).round() as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two points, each on its own median, whose residuals grow 100 ns per second: the
    /// fit finds the 100 ppb whatever the medians, and leaves out a far sample and the
    /// timer's clock-to-clock point.
    #[test]
    fn the_refit_finds_the_residuals_slope() {
        let mut median = [None; CLOCK_POINTS];
        median[ClockPoint::Dequeue as usize] = Some(5_000);
        median[ClockPoint::Waking as usize] = Some(-300);
        median[ClockPoint::TimerWaking as usize] = Some(0);
        let mut f = DriftFit::new(1_000_000_000, median);
        for i in 0..100u64 {
            let ts = 1_000_000_000 + i * 20_000_000;
            let drift = (i * 20_000_000 / 10_000_000) as i64;
            f.add(ClockPoint::Dequeue, 5_000 + drift, ts);
            f.add(ClockPoint::Waking, -300 + drift, ts);
            f.add(ClockPoint::TimerWaking, -1_000 * i as i64, ts);
        }
        f.add(ClockPoint::Dequeue, 900_000, 3_000_000_000);
        assert_eq!(f.slope_ppb(), Some(100));
        assert_eq!(DriftFit::new(0, median).slope_ppb(), None);
    }
}
