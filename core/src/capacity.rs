// SPDX-License-Identifier: GPL-2.0-only
//! CPU capacity and effective utilization — kernel/sched/fair.c (effective_cpu_util moved
//! there from syscalls.c after v6.17), drivers/base/arch_topology.c.
//!
//! A CPU's utilization is the sum of its CFS, RT and DL signals, squeezed into the part of
//! its capacity that interrupts leave over; uclamp and DL bandwidth give the floor and
//! ceiling schedutil and EAS work between.

/// The runqueue state `effective_cpu_util()` reads, as explicit inputs (capacity units
/// unless said otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EffectiveUtilInput {
    /// `arch_scale_cpu_capacity(cpu)`: the CPU's original capacity.
    pub capacity: u64,
    /// The `util_cfs` argument (the caller's CFS utilization).
    pub util_cfs: u64,
    /// `cpu_util_rt(rq)`.
    pub util_rt: u64,
    /// `cpu_util_dl(rq)`.
    pub util_dl: u64,
    /// `cpu_util_irq(rq)`.
    pub util_irq: u64,
    /// `cpu_bw_dl(rq)`: DL running bandwidth in capacity units.
    pub bw_dl: u64,
    /// `rt_rq_is_runnable(&rq->rt)`.
    pub rt_runnable: bool,
    /// `uclamp_is_used()` (static key).
    pub uclamp_used: bool,
    /// `rq->uclamp[UCLAMP_MIN].value`.
    pub uclamp_min: u64,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    pub uclamp_max: u64,
}

/// Result of `effective_cpu_util()`: the return value and both out-parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EffectiveUtil {
    /// The return value: utilization the CPU needs, at most its capacity.
    pub ret: u64,
    /// `*min`: the performance floor (irq + DL bandwidth, uclamp_min, RT without uclamp).
    pub min: u64,
    /// `*max`: the performance ceiling (capacity, lowered by uclamp_max).
    pub max: u64,
}

/// `scale_irq_capacity()`: `util * (max - irq) / max`, multiply first, truncating.
///
/// Callers guarantee `irq < max` (so `max != 0`); outside that the result is what the
/// wrapping C arithmetic gives, and `max == 0` yields 0 instead of trapping.
#[inline]
pub fn scale_irq_capacity(util: u64, irq: u64, max: u64) -> u64 {
    util.wrapping_mul(max.wrapping_sub(irq))
        .checked_div(max)
        .unwrap_or(0)
}

/// `effective_cpu_util()`: utilization of a CPU with its min/max performance bounds.
///
/// Traps: when irq alone reaches the capacity, all three are the capacity; `max` is set
/// before the saturation test, so it is valid on the early return too; `uclamp_min` enters
/// `min` whether or not uclamp is in use (the static key only gates the RT raise).
pub fn effective_cpu_util(i: &EffectiveUtilInput) -> EffectiveUtil {
    let scale = i.capacity;
    let irq = i.util_irq;
    if irq >= scale {
        return EffectiveUtil {
            ret: scale,
            min: scale,
            max: scale,
        };
    }
    let mut min = core::cmp::max(irq.wrapping_add(i.bw_dl), i.uclamp_min);
    if !i.uclamp_used && i.rt_runnable {
        min = core::cmp::max(min, scale);
    }
    let util = i.util_cfs.wrapping_add(i.util_rt).wrapping_add(i.util_dl);
    let max = core::cmp::min(scale, i.uclamp_max);
    if util >= scale {
        return EffectiveUtil {
            ret: scale,
            min,
            max,
        };
    }
    let util = scale_irq_capacity(util, irq, scale).wrapping_add(irq);
    EffectiveUtil {
        ret: core::cmp::min(scale, util),
        min,
        max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> EffectiveUtilInput {
        EffectiveUtilInput {
            capacity: 1024,
            uclamp_max: 1024,
            ..Default::default()
        }
    }

    #[test]
    fn effective_cpu_util_irq_at_capacity_returns_capacity_everywhere() {
        let r = effective_cpu_util(&EffectiveUtilInput {
            util_irq: 1024,
            uclamp_max: 200,
            ..input()
        });
        assert_eq!(
            r,
            EffectiveUtil {
                ret: 1024,
                min: 1024,
                max: 1024
            }
        );
    }

    #[test]
    fn effective_cpu_util_scales_by_the_capacity_irq_leaves() {
        // 400 * (1024 - 100) / 1024 = 360 (truncated), + 100 irq
        let r = effective_cpu_util(&EffectiveUtilInput {
            util_cfs: 400,
            util_irq: 100,
            ..input()
        });
        assert_eq!(
            r,
            EffectiveUtil {
                ret: 460,
                min: 100,
                max: 1024
            }
        );
    }

    #[test]
    fn effective_cpu_util_rt_without_uclamp_raises_min_to_capacity() {
        let r = effective_cpu_util(&EffectiveUtilInput {
            capacity: 446,
            rt_runnable: true,
            uclamp_max: 1024,
            ..Default::default()
        });
        assert_eq!((r.min, r.max), (446, 446));
    }
}
