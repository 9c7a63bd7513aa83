// SPDX-License-Identifier: GPL-2.0-only
//! The schedutil cpufreq governor — kernel/sched/cpufreq_schedutil.c and
//! include/linux/sched/cpufreq.h.
//!
//! schedutil turns a CPU's utilization into a performance level with 25 % headroom, bounded
//! by the floor and ceiling `effective_cpu_util()` reports.

/// `map_util_perf()`: add the 25 % DVFS headroom, `util + util / 4` (64-bit, wrapping).
#[inline]
pub fn map_util_perf(util: u64) -> u64 {
    util.wrapping_add(util >> 2)
}

/// `sugov_effective_cpu_perf()`: headroom-added utilization, capped at `max`, but never
/// below `min`.
///
/// Trap: `min` wins over `max`, so the result exceeds `max` whenever `min > max`.
#[inline]
pub fn sugov_effective_cpu_perf(actual: u64, min: u64, max: u64) -> u64 {
    let actual = map_util_perf(actual);
    let max = if actual < max { actual } else { max };
    core::cmp::max(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_util_perf_wraps_near_u64_max() {
        assert_eq!(map_util_perf(800), 1000);
        assert_eq!(
            map_util_perf(u64::MAX),
            u64::MAX.wrapping_add(u64::MAX >> 2)
        );
    }

    #[test]
    fn sugov_effective_cpu_perf_min_wins_over_max() {
        assert_eq!(sugov_effective_cpu_perf(400, 0, 1024), 500);
        assert_eq!(sugov_effective_cpu_perf(1000, 0, 1024), 1024);
        assert_eq!(sugov_effective_cpu_perf(100, 700, 300), 700);
    }
}
