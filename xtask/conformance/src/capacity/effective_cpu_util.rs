// SPDX-License-Identifier: GPL-2.0-only
//! `effective_cpu_util.jsonl`: a CPU's utilization with its performance bounds, the
//! schedutil request built from them, and `cpu_util()` with task migration.

use schedmath::capacity::{
    cpu_bw_dl, cpu_util, cpu_util_cfs, cpu_util_cfs_boost, cpu_util_without, effective_cpu_util,
    CfsRqUtil, CpuUtilRq, EffectiveUtilInput, TaskUtil,
};
use serde::{Deserialize, Serialize};

use super::Flag;
use crate::{Case, CaseError};

/// `effective_cpu_util` {util_cfs, capacity_orig, irq_util_avg, rt_util_avg, dl_util_avg,
/// dl_running_bw, rq_uclamp_min, rq_uclamp_max, uclamp_is_used, rt_queued, rt_nr_running,
/// want_min, want_max} → {ret, min, max}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EffectiveCpuUtil {
    /// The `util_cfs` argument.
    pub util_cfs: u64,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `rq->avg_irq.util_avg`.
    pub irq_util_avg: u64,
    /// `rq->avg_rt.util_avg`.
    pub rt_util_avg: u64,
    /// `rq->avg_dl.util_avg`.
    pub dl_util_avg: u64,
    /// `rq->dl.running_bw` (1 << 20 = one CPU).
    pub dl_running_bw: u64,
    /// `rq->uclamp[UCLAMP_MIN].value`.
    pub rq_uclamp_min: u64,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    pub rq_uclamp_max: u64,
    /// `sched_uclamp_used`.
    pub uclamp_is_used: Flag,
    /// `rq->rt.rt_queued`.
    pub rt_queued: Flag,
    /// `rq->rt.rt_nr_running`.
    pub rt_nr_running: u32,
    /// The `min` out-pointer is not NULL.
    pub want_min: Flag,
    /// The `max` out-pointer is not NULL.
    pub want_max: Flag,
}

/// `{ret, min, max}`; `min`/`max` are null when their pointer was NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectiveCpuUtilOut {
    /// The return value.
    pub ret: u64,
    /// `*min`.
    pub min: Option<u64>,
    /// `*max`.
    pub max: Option<u64>,
}

impl Case for EffectiveCpuUtil {
    type Out = EffectiveCpuUtilOut;
    fn run(&self, _: &str) -> Result<EffectiveCpuUtilOut, CaseError> {
        let r = effective_cpu_util(&EffectiveUtilInput {
            capacity: self.capacity_orig,
            util_cfs: self.util_cfs,
            util_rt: self.rt_util_avg,
            util_dl: self.dl_util_avg,
            util_irq: self.irq_util_avg,
            bw_dl: cpu_bw_dl(self.dl_running_bw),
            // rt_rq_is_runnable(): queued and at least one RT task.
            rt_runnable: self.rt_queued.0 && self.rt_nr_running != 0,
            uclamp_used: self.uclamp_is_used.0,
            uclamp_min: self.rq_uclamp_min,
            uclamp_max: self.rq_uclamp_max,
            ..Default::default()
        });
        Ok(EffectiveCpuUtilOut {
            ret: r.ret,
            min: self.want_min.0.then_some(r.min),
            max: self.want_max.0.then_some(r.max),
        })
    }
}

/// The task `p` of a `cpu_util` case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CpuUtilTask {
    /// `task_cpu(p)`.
    pub task_cpu: i32,
    /// `p->se.avg.util_avg`.
    pub util_avg: u64,
    /// `p->se.avg.util_est` (may carry UTIL_AVG_UNCHANGED).
    pub util_est: u32,
    /// `task_on_rq_queued(p)`.
    pub task_on_rq_queued: Flag,
    /// `p` is current.
    pub is_current: Flag,
    /// `p->se.avg.last_update_time`.
    pub last_update_time: u64,
}

/// `cpu_util` {cpu, dst_cpu, boost, sched_feat_UTIL_EST, capacity_orig, cfs_util_avg,
/// cfs_runnable_avg, cfs_util_est, p} → {ret, cpu_util_cfs, cpu_util_cfs_boost,
/// cpu_util_without}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CpuUtil {
    /// The CPU asked about.
    pub cpu: i32,
    /// Where `p` would go (-1: nowhere).
    pub dst_cpu: i32,
    /// Boost by runnable_avg.
    pub boost: Flag,
    /// `sched_feat(UTIL_EST)`.
    #[serde(rename = "sched_feat_UTIL_EST")]
    pub sched_feat_util_est: Flag,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `rq->cfs.avg.util_avg`.
    pub cfs_util_avg: u64,
    /// `rq->cfs.avg.runnable_avg`.
    pub cfs_runnable_avg: u64,
    /// `rq->cfs.avg.util_est`.
    pub cfs_util_est: u32,
    /// The task, or null.
    pub p: Option<CpuUtilTask>,
}

/// `{ret, cpu_util_cfs, cpu_util_cfs_boost, cpu_util_without}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuUtilOut {
    /// `cpu_util(cpu, p, dst_cpu, boost)`.
    pub ret: u64,
    /// `cpu_util_cfs(cpu)`.
    pub cpu_util_cfs: u64,
    /// `cpu_util_cfs_boost(cpu)`.
    pub cpu_util_cfs_boost: u64,
    /// `cpu_util_without(cpu, p)`; null without a task.
    pub cpu_util_without: Option<u64>,
}

impl Case for CpuUtil {
    type Out = CpuUtilOut;
    fn run(&self, _: &str) -> Result<CpuUtilOut, CaseError> {
        let rq = CpuUtilRq {
            cpu: self.cpu,
            capacity_orig: self.capacity_orig,
            cfs: CfsRqUtil {
                util_avg: self.cfs_util_avg,
                runnable_avg: self.cfs_runnable_avg,
                util_est: self.cfs_util_est,
            },
            util_est_feat: self.sched_feat_util_est.0,
        };
        let p = self.p.as_ref().map(|t| TaskUtil {
            task_cpu: t.task_cpu,
            util_avg: t.util_avg,
            util_est: t.util_est,
            on_rq_queued: t.task_on_rq_queued.0,
            is_current: t.is_current.0,
            last_update_time: t.last_update_time,
        });
        Ok(CpuUtilOut {
            ret: cpu_util(&rq, p.as_ref(), self.dst_cpu, self.boost.0),
            cpu_util_cfs: cpu_util_cfs(&rq),
            cpu_util_cfs_boost: cpu_util_cfs_boost(&rq),
            cpu_util_without: p.as_ref().map(|p| cpu_util_without(&rq, p)),
        })
    }
}
