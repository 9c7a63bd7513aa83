// SPDX-License-Identifier: GPL-2.0-only
//! The fixed update sequence of the `pelt_update` benchmark, shared with the test that pins
//! its checksum (so the benchmark provably runs the intended arithmetic).
//!
//! A task alternates between running (0.2–8 ms, ticked every 4 ms) and sleeping
//! (0.1–20 ms); each op is one `__update_load_avg_se` at the next event. Durations come from
//! xorshift64 (`x ^= x << 13; x ^= x >> 7; x ^= x << 17`).

use crate::pelt::response::NICE_0_LOAD;
use crate::pelt::{__update_load_avg_se, PeltTables, SchedAvg, SchedEntityPelt};

/// The xorshift64 seed of the sequence.
pub const SEED: u64 = 88_172_645_463_325_252;

/// The op sequence: yields `(now, running)` for each update.
#[derive(Clone, Debug)]
pub struct UpdateOps {
    x: u64,
    t: u64,
    running: bool,
    until: u64,
}

impl Default for UpdateOps {
    fn default() -> Self {
        Self::new()
    }
}

impl UpdateOps {
    /// The sequence from its start (`t = 1 s`, sleeping, a phase change due at once).
    pub const fn new() -> Self {
        UpdateOps {
            x: SEED,
            t: 1_000_000_000,
            running: false,
            until: 1_000_000_000,
        }
    }

    fn next_x(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }
}

impl Iterator for UpdateOps {
    type Item = (u64, bool);

    fn next(&mut self) -> Option<(u64, bool)> {
        if self.t >= self.until {
            self.running = !self.running;
            let x = self.next_x();
            let len = if self.running {
                200_000 + x % 7_800_000
            } else {
                100_000 + x % 19_900_000
            };
            self.until = self.t.wrapping_add(len);
        }
        let left = self.until.wrapping_sub(self.t);
        let step = if self.running {
            core::cmp::min(4_000_000, left)
        } else {
            left
        };
        self.t = self.t.wrapping_add(if step == 0 { 1 } else { step });
        Some((self.t, self.running))
    }
}

/// One op: `__update_load_avg_se(now, on_rq = 1, curr = running, weight = NICE_0_LOAD)`.
#[inline]
pub fn apply(sa: &mut SchedAvg, now: u64, running: bool, t: &PeltTables) -> i32 {
    let se = SchedEntityPelt {
        load_weight: NICE_0_LOAD,
        on_rq: true,
        is_curr: running,
        ..SchedEntityPelt::default()
    };
    __update_load_avg_se(now, sa, &se, t)
}

/// Runs the first `ops` ops from a zeroed state with the 32 ms table; returns the checksum
/// (sum of every return value plus util_avg after each op, wrapping) and the final state.
pub fn checksum(ops: usize) -> (u64, SchedAvg) {
    let t = &PeltTables::HL32;
    let mut sa = SchedAvg::default();
    let mut sum = 0u64;
    for (now, running) in UpdateOps::new().take(ops) {
        let ret = apply(&mut sa, now, running, t);
        sum = sum
            .wrapping_add(ret as u64) // ret is 0 or 1
            .wrapping_add(sa.util_avg);
    }
    (sum, sa)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_follow_the_xorshift_schedule_with_4ms_ticks() {
        let first: heapless::Vec<(u64, bool), 5> = UpdateOps::new().take(5).collect();
        assert_eq!(
            first.as_slice(),
            &[
                (1_004_000_000, true),
                (1_004_358_512, true),
                (1_007_894_027, false),
                (1_010_933_339, true),
                (1_025_944_192, false),
            ]
        );
    }

    /// The whole benchmark sequence (20 M ops; ~0.5 s in the dev profile).
    #[test]
    fn full_sequence_checksum() {
        let (sum, sa) = checksum(20_000_000);
        assert_eq!((sum, sa.util_avg), (6_160_728_732, 356));
    }
}
