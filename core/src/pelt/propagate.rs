// SPDX-License-Identifier: GPL-2.0-only
//! Task-group PELT (kernel/sched/fair.c, CONFIG_FAIR_GROUP_SCHED; the same in v6.1 and
//! v6.12): a group's sched_entity on its parent cfs_rq, the propagation of its group
//! cfs_rq's attach/detach/removed changes up the hierarchy (`add_tg_cfs_propagate()`,
//! `propagate_entity_load_avg()` with `update_tg_cfs_util/runnable/load()`) and the load
//! side of `reweight_entity()`.
//!
//! Why propagate: a task attached to a group cfs_rq changes that cfs_rq at once, but the
//! group's entity (and so the root) would only see it through PELT's slow ramp. The kernel
//! copies util and runnable down to the entity and estimates its load from the runnable
//! sum the group gained or lost.

use super::{
    at_least_min_divider, get_pelt_divider, sub_positive, CfsRqRemoved, PeltTables, SchedAvg,
};
use crate::math::{div_u64, scale_load_down, SCHED_CAPACITY_SHIFT};

/// `cfs_rq->propagate` and `cfs_rq->prop_runnable_sum` of a group cfs_rq.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Propagate {
    /// Something changed below: the group entity must be refreshed at its next update.
    pub propagate: bool,
    /// Runnable sum gained (or lost, negative) since the last propagation (C `long`).
    pub prop_runnable_sum: i64,
}

/// `add_tg_cfs_propagate()`.
pub fn add_tg_cfs_propagate(p: &mut Propagate, runnable_sum: i64) {
    p.propagate = true;
    p.prop_runnable_sum = p.prop_runnable_sum.wrapping_add(runnable_sum);
}

/// The runnable sum `update_cfs_rq_load_avg()` propagates when it folds `removed` into
/// `sa` (call before folding): `-(long)(removed_runnable * divider) >> SCHED_CAPACITY_SHIFT`
/// (an arithmetic shift: rounds toward minus infinity), `None` when nothing was removed.
pub fn removed_prop_runnable_sum(
    removed: &CfsRqRemoved,
    sa: &SchedAvg,
    t: &PeltTables,
) -> Option<i64> {
    if removed.nr == 0 {
        return None;
    }
    let divider = u64::from(get_pelt_divider(sa, t));
    let r = removed.runnable_avg.wrapping_mul(divider) as i64; // (long)(unsigned long)
    Some(r.wrapping_neg() >> SCHED_CAPACITY_SHIFT)
}

/// `add_positive()` on an `unsigned long`: `var + val`, 0 if a negative `val` wrapped.
fn add_positive_u64(var: u64, val: i64) -> u64 {
    let res = var.wrapping_add(val as u64);
    if val < 0 && res > var {
        0
    } else {
        res
    }
}

/// `add_positive()` on a `u32`: the sum is computed in `long`, stored truncated.
fn add_positive_u32(var: u32, val: i64) -> u32 {
    let res = i64::from(var).wrapping_add(val) as u32;
    if val < 0 && res > var {
        0
    } else {
        res
    }
}

/// `update_tg_cfs_util()`: the group entity takes its group cfs_rq's `util_avg` (its sum
/// rebuilt with the parent's divider) and the parent cfs_rq gains the difference.
pub fn update_tg_cfs_util(cfs: &mut SchedAvg, se: &mut SchedAvg, gcfs: &SchedAvg, t: &PeltTables) {
    let delta_avg = gcfs.util_avg.wrapping_sub(se.util_avg) as i64; // long
    if delta_avg == 0 {
        return;
    }
    let divider = get_pelt_divider(cfs, t);
    se.util_avg = gcfs.util_avg;
    let new_sum = (se.util_avg as u32).wrapping_mul(divider); // stored in a u32
    let delta_sum = i64::from(new_sum) - i64::from(se.util_sum);
    se.util_sum = new_sum;
    cfs.util_avg = add_positive_u64(cfs.util_avg, delta_avg);
    cfs.util_sum = add_positive_u32(cfs.util_sum, delta_sum);
    cfs.util_sum = at_least_min_divider(u64::from(cfs.util_sum), cfs.util_avg, t) as u32;
}

/// `update_tg_cfs_runnable()`: as [`update_tg_cfs_util`] for `runnable_avg`.
pub fn update_tg_cfs_runnable(
    cfs: &mut SchedAvg,
    se: &mut SchedAvg,
    gcfs: &SchedAvg,
    t: &PeltTables,
) {
    let delta_avg = gcfs.runnable_avg.wrapping_sub(se.runnable_avg) as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = get_pelt_divider(cfs, t);
    se.runnable_avg = gcfs.runnable_avg;
    let new_sum = (se.runnable_avg as u32).wrapping_mul(divider); // u32 new_sum
    let delta_sum = i64::from(new_sum).wrapping_sub(se.runnable_sum as i64);
    se.runnable_sum = u64::from(new_sum);
    cfs.runnable_avg = add_positive_u64(cfs.runnable_avg, delta_avg);
    cfs.runnable_sum = add_positive_u64(cfs.runnable_sum, delta_sum);
    cfs.runnable_sum = at_least_min_divider(cfs.runnable_sum, cfs.runnable_avg, t);
}

/// `update_tg_cfs_load()`: the group entity's load from the runnable sum its group cfs_rq
/// gained (added to the entity's, at most a full period) or lost (the group's load per
/// unit of weight, at most the entity's), never below its running sum; the parent gains the
/// difference. `se_weight` is `se_weight(se)` (unscaled), `gcfs_load_weight` the group
/// cfs_rq's scaled `load.weight`.
pub fn update_tg_cfs_load(
    cfs: &mut SchedAvg,
    se: &mut SchedAvg,
    se_weight: u64,
    gcfs: &SchedAvg,
    gcfs_load_weight: u64,
    gprop: &mut Propagate,
    t: &PeltTables,
) {
    let mut runnable_sum = gprop.prop_runnable_sum;
    if runnable_sum == 0 {
        return;
    }
    gprop.prop_runnable_sum = 0;
    let divider = get_pelt_divider(cfs, t);
    if runnable_sum >= 0 {
        runnable_sum = runnable_sum.wrapping_add(se.load_sum as i64);
        runnable_sum = runnable_sum.min(i64::from(divider));
    } else {
        let w = scale_load_down(gcfs_load_weight);
        let load_sum = if w != 0 {
            div_u64(gcfs.load_sum, w as u32).unwrap_or(0)
        } else {
            0
        };
        runnable_sum = se.load_sum.min(load_sum) as i64;
    }
    let running_sum = i64::from(se.util_sum >> SCHED_CAPACITY_SHIFT);
    runnable_sum = runnable_sum.max(running_sum);
    let load_sum = se_weight.wrapping_mul(runnable_sum as u64);
    let load_avg = div_u64(load_sum, divider).unwrap_or(0);
    let delta_avg = load_avg.wrapping_sub(se.load_avg) as i64;
    if delta_avg == 0 {
        return;
    }
    let delta_sum = (load_sum as i64).wrapping_sub(se_weight.wrapping_mul(se.load_sum) as i64);
    se.load_sum = runnable_sum as u64;
    se.load_avg = load_avg;
    cfs.load_avg = add_positive_u64(cfs.load_avg, delta_avg);
    cfs.load_sum = add_positive_u64(cfs.load_sum, delta_sum);
    cfs.load_sum = at_least_min_divider(cfs.load_sum, cfs.load_avg, t);
}

/// `propagate_entity_load_avg()` for a group entity: if its group cfs_rq has something to
/// propagate, passes the runnable sum on to the parent (`prop`) and refreshes the entity
/// and the parent from the group cfs_rq. Returns whether it did.
#[allow(clippy::too_many_arguments)]
pub fn propagate_entity_load_avg(
    cfs: &mut SchedAvg,
    prop: &mut Propagate,
    se: &mut SchedAvg,
    se_weight: u64,
    gcfs: &SchedAvg,
    gcfs_load_weight: u64,
    gprop: &mut Propagate,
    t: &PeltTables,
) -> bool {
    if !gprop.propagate {
        return false;
    }
    gprop.propagate = false;
    add_tg_cfs_propagate(prop, gprop.prop_runnable_sum);
    update_tg_cfs_util(cfs, se, gcfs, t);
    update_tg_cfs_runnable(cfs, se, gcfs, t);
    update_tg_cfs_load(cfs, se, se_weight, gcfs, gcfs_load_weight, gprop, t);
    true
}

/// The PELT side of `reweight_entity()`: `dequeue_load_avg()` with the old weight, the
/// entity's `load_avg` recomputed from its `load_sum` with the new one (and its own
/// divider), `enqueue_load_avg()`. Weights are scaled (`se->load.weight`).
pub fn reweight_entity_load_avg(
    cfs: &mut SchedAvg,
    se: &mut SchedAvg,
    old_weight: u64,
    new_weight: u64,
    t: &PeltTables,
) {
    let old = scale_load_down(old_weight);
    cfs.load_avg = sub_positive(cfs.load_avg, se.load_avg);
    cfs.load_sum = sub_positive(cfs.load_sum, old.wrapping_mul(se.load_sum));
    cfs.load_sum = at_least_min_divider(cfs.load_sum, cfs.load_avg, t);
    let new = scale_load_down(new_weight);
    let divider = get_pelt_divider(se, t);
    se.load_avg = div_u64(new.wrapping_mul(se.load_sum), divider).unwrap_or(se.load_avg);
    cfs.load_avg = cfs.load_avg.wrapping_add(se.load_avg);
    cfs.load_sum = cfs.load_sum.wrapping_add(new.wrapping_mul(se.load_sum));
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &PeltTables = &PeltTables::HL32;

    #[test]
    fn removed_runnable_propagates_rounded_down() {
        let r = CfsRqRemoved {
            nr: 1,
            runnable_avg: 1,
            ..CfsRqRemoved::default()
        };
        let sa = SchedAvg::default();
        // -(1 * 46718) >> 10 = -45.6… rounded toward minus infinity.
        assert_eq!(removed_prop_runnable_sum(&r, &sa, T), Some(-46));
        assert_eq!(
            removed_prop_runnable_sum(&CfsRqRemoved::default(), &sa, T),
            None
        );
    }

    #[test]
    fn util_and_runnable_are_copied_down_and_the_parent_gains_the_difference() {
        let mut cfs = SchedAvg {
            util_avg: 300,
            util_sum: 300 * 47000,
            runnable_avg: 300,
            runnable_sum: 300 * 47000,
            ..SchedAvg::default()
        };
        let mut se = SchedAvg {
            util_avg: 100,
            util_sum: 100 * 47000,
            runnable_avg: 100,
            runnable_sum: 100 * 47000,
            ..SchedAvg::default()
        };
        let g = SchedAvg {
            util_avg: 250,
            runnable_avg: 250,
            ..SchedAvg::default()
        };
        update_tg_cfs_util(&mut cfs, &mut se, &g, T);
        update_tg_cfs_runnable(&mut cfs, &mut se, &g, T);
        // Divider 46718 (period_contrib 0): 250 * 46718 = 11 679 500; the parent's sum
        // 14 100 000 + (11 679 500 - 4 700 000), above 450 * 46718 = 21 023 100.
        assert_eq!((se.util_avg, se.util_sum), (250, 11_679_500));
        assert_eq!((se.runnable_avg, se.runnable_sum), (250, 11_679_500));
        assert_eq!((cfs.util_avg, cfs.util_sum), (450, 21_079_500));
        assert_eq!((cfs.runnable_avg, cfs.runnable_sum), (450, 21_079_500));
        // No difference: nothing moves.
        let before = (cfs, se);
        update_tg_cfs_runnable(&mut cfs, &mut se, &g, T);
        assert_eq!((cfs, se), before);
        // A loss larger than the parent's stops at 0.
        let g0 = SchedAvg::default();
        let mut small = SchedAvg {
            util_avg: 10,
            ..SchedAvg::default()
        };
        update_tg_cfs_util(&mut small, &mut se, &g0, T);
        assert_eq!((small.util_avg, se.util_avg), (0, 0));
    }

    #[test]
    fn propagation_runs_once_and_hands_the_runnable_sum_up() {
        let mut cfs = SchedAvg::default();
        let mut prop = Propagate::default();
        let mut se = SchedAvg::default();
        let g = SchedAvg {
            util_avg: 200,
            runnable_avg: 300,
            ..SchedAvg::default()
        };
        let mut gp = Propagate::default();
        let run =
            |cfs: &mut SchedAvg, prop: &mut Propagate, se: &mut SchedAvg, gp: &mut Propagate| {
                propagate_entity_load_avg(cfs, prop, se, 1024, &g, 1 << 20, gp, T)
            };
        // Nothing flagged below: nothing to do.
        assert!(!run(&mut cfs, &mut prop, &mut se, &mut gp));
        assert_eq!((cfs, se, prop), Default::default());
        add_tg_cfs_propagate(&mut gp, 1 << 30);
        assert!(run(&mut cfs, &mut prop, &mut se, &mut gp));
        assert_eq!(gp, Propagate::default());
        assert_eq!(
            prop,
            Propagate {
                propagate: true,
                prop_runnable_sum: 1 << 30
            }
        );
        // util and runnable copied; load clipped to a full period: load_avg = weight.
        assert_eq!(
            (se.util_avg, se.runnable_avg, se.load_avg),
            (200, 300, 1024)
        );
        assert_eq!(
            (cfs.util_avg, cfs.runnable_avg, cfs.load_avg),
            (200, 300, 1024)
        );
        // Cleared: a second call does nothing.
        assert!(!run(&mut cfs, &mut prop, &mut se, &mut gp));
    }

    #[test]
    fn a_gained_runnable_sum_loads_the_entity_at_most_fully() {
        let mut cfs = SchedAvg::default();
        let mut se = SchedAvg::default();
        let g = SchedAvg::default();
        let mut gp = Propagate::default();
        add_tg_cfs_propagate(&mut gp, 1 << 30);
        update_tg_cfs_load(&mut cfs, &mut se, 1024, &g, 1 << 20, &mut gp, T);
        // Clipped to the divider: load_avg = weight.
        assert_eq!(se.load_sum, u64::from(T.pelt_min_divider()));
        assert_eq!(se.load_avg, 1024);
        assert_eq!(cfs.load_avg, 1024);
        assert_eq!(gp.prop_runnable_sum, 0);
    }

    #[test]
    fn reweight_rescales_load_avg_from_load_sum() {
        let div = u64::from(T.pelt_min_divider());
        let mut se = SchedAvg {
            load_sum: div / 2,
            load_avg: 512,
            ..SchedAvg::default()
        };
        let mut cfs = SchedAvg {
            load_avg: 512,
            load_sum: 1024 * (div / 2),
            ..SchedAvg::default()
        };
        reweight_entity_load_avg(&mut cfs, &mut se, 1024 << 10, 2048 << 10, T);
        assert_eq!(se.load_avg, 2048 * (div / 2) / div);
        assert_eq!(cfs.load_avg, se.load_avg);
        assert_eq!(cfs.load_sum, 2048 * (div / 2));
    }
}
