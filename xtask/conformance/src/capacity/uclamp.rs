// SPDX-License-Identifier: GPL-2.0-only
//! `uclamp.jsonl`: bucket ids, effective clamps, the capped test and the runqueue
//! refcounting sequence (kernel/sched/core.c, sched.h).

use heapless::Vec;
use schedmath::capacity::cpu_util_cfs;
use schedmath::uclamp::{
    init_uclamp_rq, uclamp_bucket_delta, uclamp_bucket_id, uclamp_eff_get, uclamp_eff_value,
    uclamp_rq_dec, uclamp_rq_inc, uclamp_rq_is_capped, uclamp_rq_reinc_id, uclamp_se_set, RqUclamp,
    UclampBucket, UclampConfig, UclampId, UclampRq, UclampSe, UclampTask, UCLAMP_BUCKETS_MAX,
    UCLAMP_FLAG_IDLE,
};
use serde::{Deserialize, Serialize};

use super::{bounded, cfs_rq, ret_flag, Flag, Ret};
use crate::{Case, CaseError, Sequence};

/// Most tasks a `uclamp_rq_seq` case may declare (the suite uses at most 6); bounds the
/// runner's state and each `out.after` element.
///
/// Host (feature `json`): 512 (a runqueue holds as many tasks as the system runs; the
/// kernel has no limit). Target: 16, for the Cortex-M3's 64 KiB.
#[cfg(feature = "json")]
pub const UCLAMP_SEQ_TASKS: usize = 512;
/// See the `json` variant of this constant.
#[cfg(not(feature = "json"))]
pub const UCLAMP_SEQ_TASKS: usize = 16;

/// A fixture `clamp_id`: 0 = MIN, 1 = MAX.
fn clamp_id(n: u64) -> Result<UclampId, CaseError> {
    UclampId::from_index(n).ok_or(CaseError::OutOfRange("clamp_id"))
}

/// `uclamp_bucket_id` {clamp_value, UCLAMP_BUCKETS} → {ret, UCLAMP_BUCKET_DELTA}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampBucketId {
    /// The clamp value.
    pub clamp_value: u32,
    /// `CONFIG_UCLAMP_BUCKETS_COUNT`.
    #[serde(rename = "UCLAMP_BUCKETS")]
    pub uclamp_buckets: u32,
}

/// `{ret, UCLAMP_BUCKET_DELTA}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UclampBucketIdOut {
    /// `uclamp_bucket_id()`.
    pub ret: u32,
    /// `UCLAMP_BUCKET_DELTA`.
    #[serde(rename = "UCLAMP_BUCKET_DELTA")]
    pub uclamp_bucket_delta: u32,
}

impl Case for UclampBucketId {
    type Out = UclampBucketIdOut;
    fn run(&self, _: &str) -> Result<UclampBucketIdOut, CaseError> {
        let delta = uclamp_bucket_delta(self.uclamp_buckets)
            .ok_or(CaseError::OutOfRange("UCLAMP_BUCKETS"))?;
        Ok(UclampBucketIdOut {
            ret: uclamp_bucket_id(self.clamp_value, self.uclamp_buckets),
            uclamp_bucket_delta: delta,
        })
    }
}

/// `uclamp_eff_value` {UCLAMP_BUCKETS, uclamp_req_value, uclamp_active, uclamp_value,
/// tg_is_root_or_autogroup, tg_uclamp_min, tg_uclamp_max, uclamp_default_value, clamp_id}
/// → {ret, eff_value, eff_bucket_id}: one clamp id of one task.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampEffValue {
    /// `CONFIG_UCLAMP_BUCKETS_COUNT`.
    #[serde(rename = "UCLAMP_BUCKETS")]
    pub uclamp_buckets: u32,
    /// `p->uclamp_req[clamp_id].value` (user-defined).
    pub uclamp_req_value: u32,
    /// `p->uclamp[clamp_id].active`.
    pub uclamp_active: Flag,
    /// `p->uclamp[clamp_id].value`.
    pub uclamp_value: u32,
    /// The task's group is the root group or an autogroup.
    pub tg_is_root_or_autogroup: Flag,
    /// The group's effective MIN.
    pub tg_uclamp_min: u32,
    /// The group's effective MAX.
    pub tg_uclamp_max: u32,
    /// `uclamp_default[clamp_id].value`.
    pub uclamp_default_value: u32,
    /// 0 = MIN, 1 = MAX.
    pub clamp_id: u64,
}

/// `{ret, eff_value, eff_bucket_id}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UclampEffValueOut {
    /// `uclamp_eff_value()`.
    pub ret: u32,
    /// `uclamp_eff_get().value`.
    pub eff_value: u32,
    /// `uclamp_eff_get().bucket_id`.
    pub eff_bucket_id: u32,
}

impl Case for UclampEffValue {
    type Out = UclampEffValueOut;
    fn run(&self, _: &str) -> Result<UclampEffValueOut, CaseError> {
        let id = clamp_id(self.clamp_id)?;
        let k = id as usize;
        let buckets = self.uclamp_buckets;
        // The other clamp id keeps the kernel's defaults; it is not read.
        let mut cfg = UclampConfig {
            buckets,
            used: true,
            default: [
                uclamp_se_set(0, false, buckets),
                uclamp_se_set(1024, false, buckets),
            ],
        };
        let mut p = UclampTask {
            tg_is_root_or_autogroup: self.tg_is_root_or_autogroup.0,
            tg_uclamp: [self.tg_uclamp_min, self.tg_uclamp_max],
            uclamp_enabled: true,
            ..Default::default()
        };
        let (Some(default), Some(req), Some(uc)) = (
            cfg.default.get_mut(k),
            p.uclamp_req.get_mut(k),
            p.uclamp.get_mut(k),
        ) else {
            return Err(CaseError::OutOfRange("clamp_id"));
        };
        *default = uclamp_se_set(self.uclamp_default_value, false, buckets);
        *req = uclamp_se_set(self.uclamp_req_value, true, buckets);
        uc.value = self.uclamp_value;
        uc.active = self.uclamp_active.0;
        let eff = uclamp_eff_get(&p, id, &cfg);
        Ok(UclampEffValueOut {
            ret: uclamp_eff_value(&p, id, &cfg),
            eff_value: eff.value,
            eff_bucket_id: eff.bucket_id,
        })
    }
}

/// `uclamp_rq_is_capped` {uclamp_is_used, capacity_orig, cfs_util_avg, cfs_util_est,
/// rt_util_avg, rq_uclamp_max} → {ret}; the CFS part is `cpu_util_cfs()`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampRqIsCapped {
    /// `sched_uclamp_used`.
    pub uclamp_is_used: Flag,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `rq->cfs.avg.util_avg`.
    pub cfs_util_avg: u64,
    /// `rq->cfs.avg.util_est`.
    pub cfs_util_est: u32,
    /// `rq->avg_rt.util_avg`.
    pub rt_util_avg: u64,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    pub rq_uclamp_max: u64,
}

impl Case for UclampRqIsCapped {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        let util_cfs = cpu_util_cfs(&cfs_rq(
            self.capacity_orig,
            self.cfs_util_avg,
            self.cfs_util_est,
        ));
        ret_flag(uclamp_rq_is_capped(
            self.uclamp_is_used.0,
            util_cfs,
            self.rt_util_avg,
            self.rq_uclamp_max,
        ))
    }
}

/// `uclamp_rq_seq`: one runqueue, N tasks, enqueue/dequeue/update ops.
pub struct UclampRqSeq;

/// `in` of `uclamp_rq_seq` (its `ops` are read one by one).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampRqSeqIn {
    /// `in.init`.
    pub init: UclampRqSeqInit,
}

/// `in.init`: configuration and tasks (`initial_state` is not read).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampRqSeqInit {
    /// `CONFIG_UCLAMP_BUCKETS_COUNT`, 1..=[`UCLAMP_BUCKETS_MAX`].
    #[serde(rename = "UCLAMP_BUCKETS")]
    pub uclamp_buckets: u32,
    /// `sched_uclamp_used`.
    pub uclamp_is_used: Flag,
    /// `uclamp_default[UCLAMP_MIN]`.
    pub uclamp_default_min: u32,
    /// `uclamp_default[UCLAMP_MAX]`.
    pub uclamp_default_max: u32,
    /// The tasks, at most [`UCLAMP_SEQ_TASKS`].
    #[serde(deserialize_with = "crate::limit::uclamp_tasks::list")]
    pub tasks: Vec<UclampSeqTask, UCLAMP_SEQ_TASKS>,
}

/// One task of `in.init.tasks`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampSeqTask {
    /// `p->sched_class->uclamp_enabled`.
    pub uclamp_enabled: Flag,
    /// `p->uclamp_req[UCLAMP_MIN]` (user-defined).
    pub uclamp_req_min: u32,
    /// `p->uclamp_req[UCLAMP_MAX]` (user-defined).
    pub uclamp_req_max: u32,
    /// The group is the root group or an autogroup.
    pub tg_is_root_or_autogroup: Flag,
    /// The group's effective MIN.
    pub tg_uclamp_min: u32,
    /// The group's effective MAX.
    pub tg_uclamp_max: u32,
}

/// One op of `uclamp_rq_seq` (see the README for what each does).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum UclampRqOp {
    /// `uclamp_rq_inc(rq, p, flags)`.
    #[serde(rename = "enqueue")]
    Enqueue {
        /// Task index.
        task: u32,
        /// `ENQUEUE_DELAYED` in the flags.
        enqueue_delayed: Flag,
    },
    /// `uclamp_rq_dec(rq, p)`.
    #[serde(rename = "dequeue")]
    Dequeue {
        /// Task index.
        task: u32,
    },
    /// Sets `p->se.sched_delayed`.
    #[serde(rename = "set_sched_delayed")]
    SetSchedDelayed {
        /// Task index.
        task: u32,
        /// The new value.
        value: Flag,
    },
    /// Changes the task's (user-defined) request.
    #[serde(rename = "set_req")]
    SetReq {
        /// Task index.
        task: u32,
        /// 0 = MIN, 1 = MAX.
        clamp_id: u64,
        /// The requested value.
        value: u32,
    },
    /// `uclamp_rq_reinc_id()` for MIN then MAX.
    #[serde(rename = "update_active")]
    UpdateActive {
        /// Task index.
        task: u32,
    },
    /// Changes the task-group restriction.
    #[serde(rename = "set_tg")]
    SetTg {
        /// Task index.
        task: u32,
        /// Root group or autogroup.
        tg_is_root_or_autogroup: Flag,
        /// The group's effective MIN.
        tg_uclamp_min: u32,
        /// The group's effective MAX.
        tg_uclamp_max: u32,
    },
    /// Changes `uclamp_default[clamp_id]`.
    #[serde(rename = "set_default")]
    SetDefault {
        /// 0 = MIN, 1 = MAX.
        clamp_id: u64,
        /// The default value.
        value: u32,
    },
}

/// The running state: runqueue, tasks and system settings.
#[derive(Clone, Debug)]
pub struct UclampRqState {
    rq: RqUclamp,
    tasks: Vec<UclampTask, UCLAMP_SEQ_TASKS>,
    cfg: UclampConfig,
}

/// A task's `p->uclamp[id]` as the fixture shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UclampSeAfter {
    /// `value`.
    pub value: u32,
    /// `bucket_id`.
    pub bucket_id: u32,
    /// `active`.
    pub active: Flag,
}

impl From<&UclampSe> for UclampSeAfter {
    fn from(s: &UclampSe) -> Self {
        UclampSeAfter {
            value: s.value,
            bucket_id: s.bucket_id,
            active: Flag(s.active),
        }
    }
}

/// One task of an `out.after` element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UclampTaskAfter {
    /// `p->uclamp[UCLAMP_MIN]`.
    pub uclamp_min: UclampSeAfter,
    /// `p->uclamp[UCLAMP_MAX]`.
    pub uclamp_max: UclampSeAfter,
    /// `uclamp_eff_value(p, UCLAMP_MIN)`.
    pub uclamp_eff_value_min: u32,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub uclamp_eff_value_max: u32,
}

/// One element of `out.after`: the runqueue's clamps and buckets (the first
/// `UCLAMP_BUCKETS` of each side) and every task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UclampRqAfter {
    /// `rq->uclamp[UCLAMP_MIN].value`.
    pub uclamp_min_value: u32,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    pub uclamp_max_value: u32,
    /// `rq->uclamp_flags & UCLAMP_FLAG_IDLE`.
    pub uclamp_flag_idle: u32,
    /// MIN buckets' task counts.
    pub bucket_tasks_min: Vec<u32, UCLAMP_BUCKETS_MAX>,
    /// MIN buckets' values (stale once empty).
    pub bucket_value_min: Vec<u32, UCLAMP_BUCKETS_MAX>,
    /// MAX buckets' task counts.
    pub bucket_tasks_max: Vec<u32, UCLAMP_BUCKETS_MAX>,
    /// MAX buckets' values (stale once empty).
    pub bucket_value_max: Vec<u32, UCLAMP_BUCKETS_MAX>,
    /// Every task.
    pub tasks: Vec<UclampTaskAfter, UCLAMP_SEQ_TASKS>,
}

impl UclampRqState {
    /// The runqueue, task `i` and the settings, borrowed together.
    fn parts(
        &mut self,
        i: u32,
    ) -> Result<(&mut RqUclamp, &mut UclampTask, &UclampConfig), CaseError> {
        let p = self
            .tasks
            .get_mut(i as usize)
            .ok_or(CaseError::OutOfRange("task"))?;
        Ok((&mut self.rq, p, &self.cfg))
    }

    fn task(&mut self, i: u32) -> Result<&mut UclampTask, CaseError> {
        self.parts(i).map(|(_, p, _)| p)
    }

    fn after(&self) -> Result<UclampRqAfter, CaseError> {
        let n = self.cfg.buckets as usize;
        let [min, max] = &self.rq.uclamp;
        let column = |side: &UclampRq, f: fn(&UclampBucket) -> u32| {
            bounded(
                side.bucket.get(..n).unwrap_or(&[]).iter().map(f),
                crate::limit::UCLAMP_BUCKETS_MAX,
            )
        };
        let cfg = &self.cfg;
        Ok(UclampRqAfter {
            uclamp_min_value: min.value,
            uclamp_max_value: max.value,
            uclamp_flag_idle: self.rq.uclamp_flags & UCLAMP_FLAG_IDLE,
            bucket_tasks_min: column(min, |b| b.tasks)?,
            bucket_value_min: column(min, |b| b.value)?,
            bucket_tasks_max: column(max, |b| b.tasks)?,
            bucket_value_max: column(max, |b| b.value)?,
            tasks: bounded(
                self.tasks.iter().map(|p| {
                    let [umin, umax] = &p.uclamp;
                    UclampTaskAfter {
                        uclamp_min: umin.into(),
                        uclamp_max: umax.into(),
                        uclamp_eff_value_min: uclamp_eff_value(p, UclampId::Min, cfg),
                        uclamp_eff_value_max: uclamp_eff_value(p, UclampId::Max, cfg),
                    }
                }),
                crate::limit::UCLAMP_SEQ_TASKS,
            )?,
        })
    }
}

impl Sequence for UclampRqSeq {
    type Init = UclampRqSeqIn;
    type Op = UclampRqOp;
    type After = UclampRqAfter;
    type State = UclampRqState;

    fn start(init: &UclampRqSeqIn, _: &str) -> Result<UclampRqState, CaseError> {
        let init = &init.init;
        let buckets = init.uclamp_buckets;
        if !(1..=UCLAMP_BUCKETS_MAX as u32).contains(&buckets) {
            return Err(CaseError::OutOfRange("UCLAMP_BUCKETS"));
        }
        let cfg = UclampConfig {
            buckets,
            used: init.uclamp_is_used.0,
            default: [
                uclamp_se_set(init.uclamp_default_min, false, buckets),
                uclamp_se_set(init.uclamp_default_max, false, buckets),
            ],
        };
        let tasks = bounded(
            init.tasks.iter().map(|t| UclampTask {
                uclamp_req: [
                    uclamp_se_set(t.uclamp_req_min, true, buckets),
                    uclamp_se_set(t.uclamp_req_max, true, buckets),
                ],
                uclamp: Default::default(),
                uclamp_enabled: t.uclamp_enabled.0,
                sched_delayed: false,
                tg_is_root_or_autogroup: t.tg_is_root_or_autogroup.0,
                tg_uclamp: [t.tg_uclamp_min, t.tg_uclamp_max],
            }),
            crate::limit::UCLAMP_SEQ_TASKS,
        )?;
        Ok(UclampRqState {
            rq: init_uclamp_rq(),
            tasks,
            cfg,
        })
    }

    fn apply(s: &mut UclampRqState, op: &UclampRqOp) -> Result<UclampRqAfter, CaseError> {
        match *op {
            UclampRqOp::Enqueue {
                task,
                enqueue_delayed,
            } => {
                let (rq, p, cfg) = s.parts(task)?;
                uclamp_rq_inc(rq, p, enqueue_delayed.0, cfg);
            }
            UclampRqOp::Dequeue { task } => {
                let (rq, p, cfg) = s.parts(task)?;
                uclamp_rq_dec(rq, p, cfg);
            }
            UclampRqOp::SetSchedDelayed { task, value } => s.task(task)?.sched_delayed = value.0,
            UclampRqOp::SetReq {
                task,
                clamp_id: id,
                value,
            } => {
                let id = clamp_id(id)? as usize;
                let buckets = s.cfg.buckets;
                if let Some(req) = s.task(task)?.uclamp_req.get_mut(id) {
                    *req = uclamp_se_set(value, true, buckets);
                }
            }
            UclampRqOp::UpdateActive { task } => {
                let (rq, p, cfg) = s.parts(task)?;
                for id in UclampId::ALL {
                    uclamp_rq_reinc_id(rq, p, id, cfg);
                }
            }
            UclampRqOp::SetTg {
                task,
                tg_is_root_or_autogroup,
                tg_uclamp_min,
                tg_uclamp_max,
            } => {
                let p = s.task(task)?;
                p.tg_is_root_or_autogroup = tg_is_root_or_autogroup.0;
                p.tg_uclamp = [tg_uclamp_min, tg_uclamp_max];
            }
            UclampRqOp::SetDefault {
                clamp_id: id,
                value,
            } => {
                let id = clamp_id(id)? as usize;
                let buckets = s.cfg.buckets;
                if let Some(d) = s.cfg.default.get_mut(id) {
                    *d = uclamp_se_set(value, false, buckets);
                }
            }
        }
        s.after()
    }
}
