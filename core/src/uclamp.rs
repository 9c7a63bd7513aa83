// SPDX-License-Identifier: GPL-2.0-only
//! Utilization clamping — kernel/sched/sched.h, kernel/sched/core.c.
//!
//! uclamp lets user space bound the utilization the scheduler and schedutil act on; a
//! runqueue's clamp is the max over its runnable tasks' effective clamps.

use crate::math::SCHED_CAPACITY_SCALE;

/// `uclamp_rq_is_capped()`: is the runqueue held down by its uclamp_max?
///
/// Traps: the plain `cpu_util_cfs()` (never the boosted value) plus RT is compared, and
/// equality counts as capped, so `uclamp_max == 0` with no utilization is capped; false
/// whenever uclamp is unused or the cap is 1024.
#[inline]
pub fn uclamp_rq_is_capped(
    uclamp_used: bool,
    util_cfs: u64,
    util_rt: u64,
    uclamp_max: u64,
) -> bool {
    if !uclamp_used {
        return false;
    }
    let rq_util = util_cfs.wrapping_add(util_rt);
    uclamp_max != SCHED_CAPACITY_SCALE && rq_util >= uclamp_max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uclamp_rq_is_capped_counts_equality_and_zero_cap() {
        assert!(uclamp_rq_is_capped(true, 0, 0, 0));
        assert!(uclamp_rq_is_capped(true, 300, 100, 400));
        assert!(!uclamp_rq_is_capped(true, 300, 99, 400));
        assert!(!uclamp_rq_is_capped(true, 2000, 0, 1024));
        assert!(!uclamp_rq_is_capped(false, 2000, 0, 0));
    }
}
