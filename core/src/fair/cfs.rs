// SPDX-License-Identifier: GPL-2.0-only
//! The pre-EEVDF CFS of Linux 6.1 (profile `fair-cfs`) — kernel/sched/fair.c of 6.1.192
//! (`__sched_period()`, `sched_slice()`, `sched_vslice()`, `place_entity()`,
//! `entity_is_long_sleeper()`, `check_preempt_tick()`, `wakeup_gran()`,
//! `wakeup_preempt_entity()`).
//!
//! CFS had no deadlines: each entity gets a share of a latency period (6 ms scaled by CPU
//! count, stretched by 0.75 ms per task above 8) in proportion to its weight at every
//! level of the group hierarchy; the tick preempts curr once it ran its share, a waking
//! entity preempts when curr is ahead by more than the wake-up granularity, and a sleeper
//! is placed half a latency behind `min_vruntime` (GENTLE_FAIR_SLEEPERS). The helpers
//! both classes share (`__calc_delta()`, `update_min_vruntime()`, tunables) live in
//! [`super::weight`], [`super::eevdf`] and [`super::sysctl`].

use super::max_vruntime;
use super::sysctl::{FairSysctl, SCHED_NR_LATENCY, SYSCTL_SCHED_IDLE_MIN_GRANULARITY};
use super::weight::{__calc_delta, calc_delta_fair, LoadWeight, NICE_0_LOAD};
use crate::math::SCHED_FIXEDPOINT_SHIFT;

/// Deepest group hierarchy a [`sched_slice`] walk takes (the task's level plus nested
/// task groups). cgroup v2 allows any depth; 8 covers systemd's slices and containers
/// nested several times over. A deeper walk is refused (`None`).
pub const CFS_MAX_LEVELS: usize = 8;

/// 6.1 `sched_feat()` switches these functions read; all on by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfsFeatures {
    /// `GENTLE_FAIR_SLEEPERS`: halve the sleeper credit.
    pub gentle_fair_sleepers: bool,
    /// `START_DEBIT`: a new task starts one virtual slice behind.
    pub start_debit: bool,
    /// `ALT_PERIOD`: the period counts the whole rq's tasks (`h_nr_running`).
    pub alt_period: bool,
    /// `BASE_SLICE`: a slice is at least the minimum granularity.
    pub base_slice: bool,
}

impl Default for CfsFeatures {
    fn default() -> Self {
        CfsFeatures {
            gentle_fair_sleepers: true,
            start_debit: true,
            alt_period: true,
            base_slice: true,
        }
    }
}

/// One level of the walk up the hierarchy: an entity and the cfs_rq it is queued on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SliceLevel {
    /// The entity's `load.weight` (scaled).
    pub se_weight: u64,
    /// The entity is queued (else its weight is added to its cfs_rq's for the share).
    pub se_on_rq: bool,
    /// Its cfs_rq's `load.weight` (scaled; inverse computed lazily).
    pub cfs_weight: u64,
}

/// What [`sched_slice`] reads of the task's cfs_rq and rq.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SliceEnv {
    /// The task's `cfs_rq->nr_running`.
    pub cfs_nr_running: u32,
    /// The task's `cfs_rq->idle_nr_running` (SCHED_IDLE entities).
    pub cfs_idle_nr_running: u32,
    /// `rq->cfs.h_nr_running`: every fair task of the CPU.
    pub rq_h_nr_running: u32,
    /// `se_is_idle()` of the task.
    pub se_idle: bool,
}

/// `__sched_period()`: the latency target, or `nr_running * min_granularity` beyond
/// `sched_nr_latency` tasks (wrapping u64 product).
pub fn __sched_period(nr_running: u64, sysctl: &FairSysctl) -> u64 {
    if nr_running > u64::from(SCHED_NR_LATENCY) {
        nr_running.wrapping_mul(u64::from(sysctl.sysctl_sched_min_granularity))
    } else {
        u64::from(sysctl.sysctl_sched_latency)
    }
}

/// `sched_slice()`: the task's wall-clock share of the period. `levels[0]` is the task
/// and its cfs_rq, each next one the group entity a level up; `None` when `levels` is
/// empty or deeper than [`CFS_MAX_LEVELS`].
///
/// Traps: the period counts the task itself when it is not queued yet (`nr_running +
/// !on_rq`, unsigned int); every level's share uses the cfs_rq's lazily computed inverse,
/// so even a lone nice-0 task gets 5999998 ns of a 6 ms period; BASE_SLICE raises the
/// result to the minimum granularity — the unscaled 0.75 ms for a SCHED_IDLE task on a
/// cfs_rq that is not all idle.
pub fn sched_slice(
    levels: &[SliceLevel],
    env: &SliceEnv,
    features: &CfsFeatures,
    sysctl: &FairSysctl,
) -> Option<u64> {
    let first = levels.first()?;
    if levels.len() > CFS_MAX_LEVELS {
        return None;
    }
    let nr_running = if features.alt_period {
        env.rq_h_nr_running
    } else {
        env.cfs_nr_running
    };
    let nr = nr_running.wrapping_add(u32::from(!first.se_on_rq)); // unsigned int sum
    let mut slice = __sched_period(u64::from(nr), sysctl);
    for l in levels {
        let mut lw = LoadWeight::new(l.cfs_weight);
        if !l.se_on_rq {
            lw.weight = lw.weight.wrapping_add(l.se_weight); // update_load_add() on a copy
        }
        slice = __calc_delta(slice, l.se_weight, &mut lw).ret;
    }
    if features.base_slice {
        // sched_idle_cfs_rq(): every queued entity of the task's cfs_rq is idle.
        let idle_rq = env.cfs_nr_running != 0 && env.cfs_nr_running == env.cfs_idle_nr_running;
        let min_gran = if env.se_idle && !idle_rq {
            SYSCTL_SCHED_IDLE_MIN_GRANULARITY
        } else {
            sysctl.sysctl_sched_min_granularity
        };
        slice = slice.max(u64::from(min_gran));
    }
    Some(slice)
}

/// `sched_vslice()`: the slice in the task's virtual time (`se` is its own load, whose
/// inverse is computed if 0).
pub fn sched_vslice(
    levels: &[SliceLevel],
    env: &SliceEnv,
    features: &CfsFeatures,
    sysctl: &FairSysctl,
    se: &mut LoadWeight,
) -> Option<u64> {
    Some(calc_delta_fair(
        sched_slice(levels, env, features, sysctl)?,
        se,
    ))
}

/// 6.1.y's long-sleeper cut-off: `2^63 / scale_load_down(NICE_0_LOAD)` ns (~104 days),
/// beyond which a vruntime comparison with `min_vruntime` could overflow s64.
pub const LONG_SLEEPER_NS: u64 = (1 << 63) / (NICE_0_LOAD >> SCHED_FIXEDPOINT_SHIFT);

/// `entity_is_long_sleeper()`: the task slept longer than [`LONG_SLEEPER_NS`] (strictly),
/// by `rq_clock_task - exec_start`; a zero `exec_start` (never ran, or just migrated) or a
/// clock not ahead of it (clocks of two CPUs) is not a long sleep.
pub fn entity_is_long_sleeper(exec_start: u64, rq_clock_task: u64) -> bool {
    exec_start != 0 && rq_clock_task > exec_start && rq_clock_task - exec_start > LONG_SLEEPER_NS
}

/// The entity fields 6.1's `place_entity()` reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfsPlaceEntity {
    /// `vruntime`.
    pub vruntime: u64,
    /// `exec_start` (rq clock_task when it last ran, 0 after migration).
    pub exec_start: u64,
    /// `se_is_idle()`.
    pub idle: bool,
    /// The task's own `load` (for the START_DEBIT vslice).
    pub load: LoadWeight,
}

/// What 6.1's `place_entity()` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfsPlacement {
    /// The new vruntime.
    pub vruntime: u64,
    /// The base it was compared with.
    pub base: u64,
    /// The long-sleeper rule took `base` outright.
    pub long_sleeper: bool,
}

/// 6.1 `place_entity()`: a new task starts one vslice after `min_vruntime`
/// (START_DEBIT), a waking one at most a latency (halved under GENTLE_FAIR_SLEEPERS;
/// min_granularity for SCHED_IDLE) before it; the entity keeps its own vruntime if that is
/// later, unless it slept longer than [`LONG_SLEEPER_NS`] (the 6.1.y fix for s64
/// overflow). `None` when the slice walk is refused (see [`sched_slice`]).
#[allow(clippy::too_many_arguments)] // the kernel reads these from se, cfs_rq and rq
pub fn place_entity(
    min_vruntime: u64,
    se: &mut CfsPlaceEntity,
    initial: bool,
    rq_clock_task: u64,
    levels: &[SliceLevel],
    env: &SliceEnv,
    features: &CfsFeatures,
    sysctl: &FairSysctl,
) -> Option<CfsPlacement> {
    let mut base = min_vruntime;
    if initial && features.start_debit {
        let vslice = sched_vslice(levels, env, features, sysctl, &mut se.load)?;
        base = base.wrapping_add(vslice);
    }
    if !initial {
        let mut thresh = u64::from(if se.idle {
            sysctl.sysctl_sched_min_granularity
        } else {
            sysctl.sysctl_sched_latency
        });
        if features.gentle_fair_sleepers {
            thresh >>= 1;
        }
        base = base.wrapping_sub(thresh);
    }
    let long_sleeper = entity_is_long_sleeper(se.exec_start, rq_clock_task);
    se.vruntime = if long_sleeper {
        base
    } else {
        max_vruntime(se.vruntime, base)
    };
    Some(CfsPlacement {
        vruntime: se.vruntime,
        base,
        long_sleeper,
    })
}

/// Which return `check_preempt_tick()` took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TickPath {
    /// Ran longer than its slice: resched.
    RanSlice = 1,
    /// Ran less than the minimum granularity: keep running.
    BelowMinGranularity = 2,
    /// curr is behind the leftmost entity: keep running.
    BehindLeftmost = 3,
    /// Compared the vruntime gap with the slice (resched if larger).
    ComparedGap = 4,
}

/// What `check_preempt_tick()` decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickPreempt {
    /// `resched_curr()` was called.
    pub resched: bool,
    /// `sched_slice()` of curr.
    pub ideal_runtime: u64,
    /// The return taken.
    pub path: TickPath,
}

/// curr's runtime counters as `check_preempt_tick()` reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfsCurr {
    /// `vruntime`.
    pub vruntime: u64,
    /// `sum_exec_runtime`.
    pub sum_exec_runtime: u64,
    /// `prev_sum_exec_runtime` (at the pick).
    pub prev_sum_exec_runtime: u64,
}

/// 6.1 `check_preempt_tick()`: at a tick, preempt curr once it ran its `sched_slice()`,
/// or when it is ahead of the leftmost entity by more than that slice (after running at
/// least the minimum granularity). `None` when the slice walk is refused.
pub fn check_preempt_tick(
    curr: &CfsCurr,
    leftmost_vruntime: u64,
    levels: &[SliceLevel],
    env: &SliceEnv,
    sysctl: &FairSysctl,
) -> Option<TickPreempt> {
    let ideal_runtime = sched_slice(levels, env, &CfsFeatures::default(), sysctl)?;
    let out = |resched, path| {
        Some(TickPreempt {
            resched,
            ideal_runtime,
            path,
        })
    };
    let delta_exec = curr
        .sum_exec_runtime
        .wrapping_sub(curr.prev_sum_exec_runtime);
    if delta_exec > ideal_runtime {
        return out(true, TickPath::RanSlice);
    }
    if delta_exec < u64::from(sysctl.sysctl_sched_min_granularity) {
        return out(false, TickPath::BelowMinGranularity);
    }
    let delta = curr.vruntime.wrapping_sub(leftmost_vruntime) as i64;
    if delta < 0 {
        return out(false, TickPath::BehindLeftmost);
    }
    out(delta as u64 > ideal_runtime, TickPath::ComparedGap) // delta >= 0 here
}

/// `wakeup_gran()`: the wake-up granularity in the waking entity's virtual time.
pub fn wakeup_gran(se: &mut LoadWeight, sysctl: &FairSysctl) -> u64 {
    calc_delta_fair(u64::from(sysctl.sysctl_sched_wakeup_granularity), se)
}

/// 6.1 `wakeup_preempt_entity()`: -1 if curr is not ahead of the waking entity, 1 if it is
/// ahead by more than [`wakeup_gran`] (of the **waking** entity), else 0.
pub fn wakeup_preempt_entity(
    curr_vruntime: u64,
    se_vruntime: u64,
    se: &mut LoadWeight,
    sysctl: &FairSysctl,
) -> i32 {
    let vdiff = curr_vruntime.wrapping_sub(se_vruntime) as i64;
    if vdiff <= 0 {
        return -1;
    }
    let gran = wakeup_gran(se, sysctl) as i64; // s64 gran = the unsigned long's bits
    i32::from(vdiff > gran)
}

/// 6.1 `pick_next_entity()` without buddies: the leftmost entity of the tree (smallest
/// vruntime; `tree` in tree order, first inserted first among equals), or curr (still
/// queued, passed as `curr`) when its vruntime is strictly smaller.
///
/// The NEXT/LAST/SKIP buddies are not modelled: NEXT_BUDDY is off by default, LAST_BUDDY
/// only acts with `sched_nr_latency` (8) or more tasks running, and SKIP is `yield`.
pub fn pick_next_entity<K: Copy>(
    curr: Option<(K, u64)>,
    tree: impl Iterator<Item = (K, u64)>,
) -> Option<K> {
    let before = |a: u64, b: u64| (a.wrapping_sub(b) as i64) < 0; // entity_before()
    let mut left: Option<(K, u64)> = None;
    for (k, v) in tree {
        if left.is_none_or(|(_, l)| before(v, l)) {
            left = Some((k, v));
        }
    }
    match (left, curr) {
        (None, c) => c.map(|(k, _)| k),
        (Some((_, l)), Some((k, c))) if before(c, l) => Some(k),
        (Some((k, _)), _) => Some(k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fair::sysctl::{update_sysctl, TunableScaling};
    use crate::profile::Profile;

    fn sysctl(cpus: u32) -> FairSysctl {
        update_sysctl(
            cpus,
            TunableScaling::Log,
            &Profile::from_name("fair-cfs").unwrap(),
        )
    }

    fn lone() -> [SliceLevel; 1] {
        [SliceLevel {
            se_weight: NICE_0_LOAD,
            se_on_rq: true,
            cfs_weight: NICE_0_LOAD,
        }]
    }

    #[test]
    fn pick_next_entity_prefers_curr_only_when_strictly_before() {
        let tree = [(1, 50u64), (2, 40), (3, 40)];
        assert_eq!(pick_next_entity(None, tree.into_iter()), Some(2));
        assert_eq!(pick_next_entity(Some((9, 40)), tree.into_iter()), Some(2));
        assert_eq!(pick_next_entity(Some((9, 39)), tree.into_iter()), Some(9));
        assert_eq!(pick_next_entity(Some((9, 39)), [].into_iter()), Some(9));
        // vruntimes compare through the 2^64 wrap.
        let wrap = [(1, u64::MAX - 5), (2, 3)];
        assert_eq!(pick_next_entity::<i32>(None, wrap.into_iter()), Some(1));
    }

    #[test]
    fn sched_slice_of_a_lone_nice0_task_loses_two_ns() {
        let env = SliceEnv {
            cfs_nr_running: 1,
            rq_h_nr_running: 1,
            ..SliceEnv::default()
        };
        let s = sched_slice(&lone(), &env, &CfsFeatures::default(), &sysctl(1));
        assert_eq!(s, Some(5_999_998));
        assert_eq!(
            sched_slice(&[], &env, &CfsFeatures::default(), &sysctl(1)),
            None
        );
    }

    /// Three nice-0 hogs on a 2-CPU machine (12 ms period): the inverse weight of 3072
    /// makes the third 1 ns short of a 4 ms tick (HZ 250), so a tick exactly 4 ms after
    /// the switch preempts (README, `oversubscribed`).
    #[test]
    fn sched_slice_of_three_nice0_tasks_is_one_ns_short_of_a_tick() {
        let env = SliceEnv {
            cfs_nr_running: 3,
            rq_h_nr_running: 3,
            ..SliceEnv::default()
        };
        let three = [SliceLevel {
            se_weight: NICE_0_LOAD,
            se_on_rq: true,
            cfs_weight: 3 * NICE_0_LOAD,
        }];
        let s = sched_slice(&three, &env, &CfsFeatures::default(), &sysctl(2));
        assert_eq!(s, Some(3_999_999));
    }

    #[test]
    fn sched_period_stretches_beyond_8_tasks() {
        let s = sysctl(1);
        assert_eq!(__sched_period(8, &s), 6_000_000);
        assert_eq!(__sched_period(9, &s), 9 * 750_000);
        assert_eq!(__sched_period(0, &s), 6_000_000);
    }

    #[test]
    fn place_entity_gentle_sleeper_and_long_sleeper() {
        let s = sysctl(1);
        let env = SliceEnv::default();
        let f = CfsFeatures::default();
        let mut se = CfsPlaceEntity {
            vruntime: 1_000,
            exec_start: 5,
            ..CfsPlaceEntity::default()
        };
        let p = place_entity(10_000_000, &mut se, false, 6, &lone(), &env, &f, &s).unwrap();
        assert_eq!(
            (p.base, p.vruntime, p.long_sleeper),
            (7_000_000, 7_000_000, false)
        );
        // Its own later vruntime is kept...
        se.vruntime = 8_000_000;
        let p = place_entity(10_000_000, &mut se, false, 6, &lone(), &env, &f, &s).unwrap();
        assert_eq!(p.vruntime, 8_000_000);
        // ...unless it slept longer than 2^63 / 1024 ns.
        let now = 5 + LONG_SLEEPER_NS + 1;
        let p = place_entity(10_000_000, &mut se, false, now, &lone(), &env, &f, &s).unwrap();
        assert_eq!((p.vruntime, p.long_sleeper), (7_000_000, true));
        assert!(!entity_is_long_sleeper(5, 5 + LONG_SLEEPER_NS));
        assert!(!entity_is_long_sleeper(0, u64::MAX));
    }

    #[test]
    fn wakeup_preempt_uses_the_waking_entitys_weight() {
        let s = sysctl(1);
        let mut nice0 = LoadWeight::new(NICE_0_LOAD);
        assert_eq!(wakeup_preempt_entity(5, 5, &mut nice0, &s), -1);
        assert_eq!(wakeup_preempt_entity(1_000_001, 0, &mut nice0, &s), 1);
        assert_eq!(wakeup_preempt_entity(1_000_000, 0, &mut nice0, &s), 0);
        // A nice-19 waker (weight 15) needs curr 68 times further ahead.
        let mut nice19 = LoadWeight {
            weight: 15 << 10,
            inv_weight: 286_331_153,
        };
        assert_eq!(wakeup_gran(&mut nice19, &s), 68_266_666);
    }

    #[test]
    fn check_preempt_tick_paths() {
        let s = sysctl(1);
        let env = SliceEnv {
            cfs_nr_running: 1,
            rq_h_nr_running: 1,
            ..SliceEnv::default()
        };
        let run = |ran: u64, v: u64| {
            let c = CfsCurr {
                vruntime: v,
                sum_exec_runtime: ran,
                prev_sum_exec_runtime: 0,
            };
            check_preempt_tick(&c, 1_000, &lone(), &env, &s).map(|t| (t.resched, t.path))
        };
        assert_eq!(run(6_000_000, 0), Some((true, TickPath::RanSlice)));
        assert_eq!(run(100, 0), Some((false, TickPath::BelowMinGranularity)));
        assert_eq!(run(1_000_000, 0), Some((false, TickPath::BehindLeftmost)));
        assert_eq!(
            run(1_000_000, 1_000 + 5_999_999),
            Some((true, TickPath::ComparedGap))
        );
        assert_eq!(
            run(1_000_000, 1_000 + 5_999_998),
            Some((false, TickPath::ComparedGap))
        );
    }
}
