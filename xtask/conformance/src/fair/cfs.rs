// SPDX-License-Identifier: GPL-2.0-only
//! cfs_v6_1.jsonl: the pre-EEVDF CFS of Linux 6.1 (`fair-cfs`). Its `update_sysctl`,
//! `__calc_delta`, `update_min_vruntime` and `place_entity` cases share the drivers of
//! the mainline suites ([`super::weight`], [`super::eevdf`]).

use schedmath::fair::cfs::{
    self, CfsCurr, CfsFeatures, SliceEnv, SliceLevel, TickPath, CFS_MAX_LEVELS,
};
use schedmath::fair::sysctl::{update_sysctl, FairSysctl, TunableScaling};
use schedmath::fair::weight::calc_delta_fair;
use schedmath::fair::LoadWeight;
use schedmath::profile::{FairClass, Profile};
use serde::{Deserialize, Serialize};

use super::lw;
use crate::capacity::{Flag, Ret};
use crate::{Case, CaseError};

/// Most hierarchy levels a case may give.
pub const MAX_LEVELS: usize = CFS_MAX_LEVELS;

/// 6.1's tunables for `nr_cpus` (log scaling, the default).
pub fn sysctl_61(nr_cpus: u32) -> FairSysctl {
    let profile = Profile {
        fair: FairClass::CfsV6_1,
        ..Profile::MAINLINE
    };
    update_sysctl(nr_cpus, TunableScaling::Log, &profile)
}

/// One level of `levels`: an entity and its cfs_rq's load (`se_inv_weight` on the task's
/// level only).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct LevelJson {
    /// `se->load.weight`.
    pub se_weight: u64,
    /// `se->on_rq`.
    pub se_on_rq: Flag,
    /// `cfs_rq_of(se)->load.weight`.
    pub cfs_weight: u64,
    /// The task's stored inverse weight (level 0).
    #[serde(default)]
    pub se_inv_weight: Option<u32>,
}

/// The core's levels and the task's own load (level 0, with its stored inverse).
pub fn levels_and_task(
    levels: &[LevelJson],
) -> Result<(heapless::Vec<SliceLevel, MAX_LEVELS>, LoadWeight), CaseError> {
    let first = levels.first().ok_or(CaseError::Missing("levels"))?;
    let task = lw(first.se_weight, first.se_inv_weight.unwrap_or(0));
    let core = crate::capacity::bounded(
        levels.iter().map(|l| SliceLevel {
            se_weight: l.se_weight,
            se_on_rq: l.se_on_rq.0,
            cfs_weight: l.cfs_weight,
        }),
        crate::limit::CFS_MAX_LEVELS,
    )?;
    Ok((core, task))
}

/// `__sched_period` {nr_cpus, nr_running}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SchedPeriod {
    /// Online CPUs.
    pub nr_cpus: u32,
    /// Tasks.
    pub nr_running: u64,
}

impl Case for SchedPeriod {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: cfs::__sched_period(self.nr_running, &sysctl_61(self.nr_cpus)),
        })
    }
}

/// `features` of `sched_slice`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[allow(non_snake_case)]
pub struct SliceFeatures {
    /// `ALT_PERIOD`.
    pub ALT_PERIOD: Flag,
    /// `BASE_SLICE`.
    pub BASE_SLICE: Flag,
}

/// `sched_slice` {nr_cpus, levels, cfs_nr_running, cfs_idle_nr_running, rq_h_nr_running,
/// se_idle, features}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SchedSlice {
    /// Online CPUs.
    pub nr_cpus: u32,
    /// The hierarchy, task first.
    pub levels: heapless::Vec<LevelJson, MAX_LEVELS>,
    /// `cfs_rq->nr_running`.
    pub cfs_nr_running: u32,
    /// `cfs_rq->idle_nr_running`.
    pub cfs_idle_nr_running: u32,
    /// `rq->cfs.h_nr_running`.
    pub rq_h_nr_running: u32,
    /// `se_is_idle()`.
    pub se_idle: Flag,
    /// Feature switches.
    pub features: SliceFeatures,
}

/// `{ret, vslice}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedSliceOut {
    /// `sched_slice()`.
    pub ret: u64,
    /// `calc_delta_fair()` of it for the task.
    pub vslice: u64,
}

impl Case for SchedSlice {
    type Out = SchedSliceOut;
    fn run(&self, _: &str) -> Result<SchedSliceOut, CaseError> {
        let (levels, mut task) = levels_and_task(&self.levels)?;
        let env = SliceEnv {
            cfs_nr_running: self.cfs_nr_running,
            cfs_idle_nr_running: self.cfs_idle_nr_running,
            rq_h_nr_running: self.rq_h_nr_running,
            se_idle: self.se_idle.0,
        };
        let features = CfsFeatures {
            alt_period: self.features.ALT_PERIOD.0,
            base_slice: self.features.BASE_SLICE.0,
            ..CfsFeatures::default()
        };
        let ret = cfs::sched_slice(&levels, &env, &features, &sysctl_61(self.nr_cpus))
            .ok_or(CaseError::TooLong(crate::limit::CFS_MAX_LEVELS))?;
        Ok(SchedSliceOut {
            ret,
            vslice: calc_delta_fair(ret, &mut task),
        })
    }
}

/// `check_preempt_tick` {nr_cpus, levels, cfs_nr_running, rq_h_nr_running, curr,
/// leftmost_vruntime}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckPreemptTick {
    /// Online CPUs.
    pub nr_cpus: u32,
    /// curr's hierarchy.
    pub levels: heapless::Vec<LevelJson, MAX_LEVELS>,
    /// `cfs_rq->nr_running`.
    pub cfs_nr_running: u32,
    /// `rq->cfs.h_nr_running`.
    pub rq_h_nr_running: u32,
    /// curr's counters.
    pub curr: CfsCurrJson,
    /// `__pick_first_entity()->vruntime`.
    pub leftmost_vruntime: u64,
}

/// curr's counters.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct CfsCurrJson {
    /// `vruntime`.
    pub vruntime: u64,
    /// `sum_exec_runtime`.
    pub sum_exec_runtime: u64,
    /// `prev_sum_exec_runtime`.
    pub prev_sum_exec_runtime: u64,
}

/// `{resched, ideal_runtime, path}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckPreemptTickOut {
    /// `resched_curr()` called.
    pub resched: Flag,
    /// `sched_slice()`.
    pub ideal_runtime: u64,
    /// Which return (1-4).
    pub path: u8,
}

impl Case for CheckPreemptTick {
    type Out = CheckPreemptTickOut;
    fn run(&self, _: &str) -> Result<CheckPreemptTickOut, CaseError> {
        let (levels, _) = levels_and_task(&self.levels)?;
        let env = SliceEnv {
            cfs_nr_running: self.cfs_nr_running,
            cfs_idle_nr_running: 0,
            rq_h_nr_running: self.rq_h_nr_running,
            se_idle: false,
        };
        let c = CfsCurr {
            vruntime: self.curr.vruntime,
            sum_exec_runtime: self.curr.sum_exec_runtime,
            prev_sum_exec_runtime: self.curr.prev_sum_exec_runtime,
        };
        let t = cfs::check_preempt_tick(
            &c,
            self.leftmost_vruntime,
            &levels,
            &env,
            &sysctl_61(self.nr_cpus),
        )
        .ok_or(CaseError::TooLong(crate::limit::CFS_MAX_LEVELS))?;
        let path = match t.path {
            TickPath::RanSlice => 1,
            TickPath::BelowMinGranularity => 2,
            TickPath::BehindLeftmost => 3,
            TickPath::ComparedGap => 4,
        };
        Ok(CheckPreemptTickOut {
            resched: Flag(t.resched),
            ideal_runtime: t.ideal_runtime,
            path,
        })
    }
}

/// The waking entity.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct WakingSe {
    /// `vruntime`.
    pub vruntime: u64,
    /// `load.weight`.
    pub weight: u64,
    /// `load.inv_weight`.
    pub inv_weight: u32,
}

/// `wakeup_preempt_entity` {nr_cpus, curr_vruntime, se}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WakeupPreemptEntity {
    /// Online CPUs.
    pub nr_cpus: u32,
    /// `curr->vruntime`.
    pub curr_vruntime: u64,
    /// The waking entity.
    pub se: WakingSe,
}

/// `{ret, wakeup_gran}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WakeupPreemptEntityOut {
    /// -1, 0 or 1.
    pub ret: i32,
    /// `wakeup_gran()` of the waking entity.
    pub wakeup_gran: u64,
}

impl Case for WakeupPreemptEntity {
    type Out = WakeupPreemptEntityOut;
    fn run(&self, _: &str) -> Result<WakeupPreemptEntityOut, CaseError> {
        let sysctl = sysctl_61(self.nr_cpus);
        let mut se = lw(self.se.weight, self.se.inv_weight);
        let mut gran_se = se;
        let ret =
            cfs::wakeup_preempt_entity(self.curr_vruntime, self.se.vruntime, &mut se, &sysctl);
        Ok(WakeupPreemptEntityOut {
            ret,
            wakeup_gran: cfs::wakeup_gran(&mut gran_se, &sysctl),
        })
    }
}
