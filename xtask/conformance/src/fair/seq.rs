// SPDX-License-Identifier: GPL-2.0-only
//! eevdf_sequence.jsonl: one EEVDF cfs_rq (the core's [`EevdfRq`]) driven op by op.

use schedmath::fair::eevdf::{EevdfFeatures, SchedEntity};
use schedmath::fair::rq::{DequeueFlags, EevdfConfig, EevdfRq, EnqueueFlags, RqError};
use schedmath::fair::sysctl::{get_update_sysctl_factor, TunableScaling};
use schedmath::fair::weight::FairPolicy;
use serde::{Deserialize, Serialize};

use super::profile_of;
use super::weight::PolicyJson;
use crate::capacity::{bounded, Flag};
use crate::{CaseError, Sequence};

/// Entities a sequence may declare: the fixtures use 1-8; the target's state and the
/// two copies of an `after` (expected, computed) stay a few KiB at 16.
pub const SEQ_MAX_ENTITIES: usize = 16;

/// `features`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[allow(non_snake_case)]
pub struct SeqFeatures {
    /// `PLACE_LAG`.
    pub PLACE_LAG: Flag,
    /// `PLACE_DEADLINE_INITIAL`.
    pub PLACE_DEADLINE_INITIAL: Flag,
    /// `PLACE_REL_DEADLINE`.
    pub PLACE_REL_DEADLINE: Flag,
    /// `RUN_TO_PARITY`.
    pub RUN_TO_PARITY: Flag,
    /// `DELAY_DEQUEUE`.
    pub DELAY_DEQUEUE: Flag,
    /// `DELAY_ZERO`.
    pub DELAY_ZERO: Flag,
}

/// `init.cfs_rq`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct SeqCfsRq {
    /// `min_vruntime`.
    pub min_vruntime: u64,
}

/// An entity of `init.entities` (off the runqueue).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct EntityInit {
    /// `load.weight`.
    pub weight: u64,
    /// `load.inv_weight`.
    pub inv_weight: u32,
    /// `vruntime`.
    pub vruntime: u64,
    /// `deadline`.
    pub deadline: u64,
    /// `vlag`.
    pub vlag: i64,
    /// `slice`.
    pub slice: u64,
    /// `custom_slice`.
    pub custom_slice: Flag,
    /// `rel_deadline`.
    pub rel_deadline: Flag,
}

/// `in.init`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeqInit {
    /// Online CPUs (base slice = log factor * normalized).
    pub nr_cpus: u32,
    /// `normalized_sysctl_sched_base_slice`.
    pub normalized_sysctl_sched_base_slice: u64,
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
    /// Feature switches.
    pub features: SeqFeatures,
    /// The cfs_rq's start.
    pub cfs_rq: SeqCfsRq,
    /// The entities.
    pub entities: heapless::Vec<EntityInit, SEQ_MAX_ENTITIES>,
}

/// `in.init` wrapper: the fixtures nest it under `init`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeqIn {
    /// The initial state.
    pub init: SeqInit,
}

/// One op of `in.ops`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeqOp {
    /// `enqueue_entity()`.
    Enqueue {
        /// Entity.
        se: u32,
        /// `ENQUEUE_WAKEUP`.
        #[serde(default)]
        wakeup: Option<Flag>,
        /// `ENQUEUE_INITIAL`.
        #[serde(default)]
        initial: Option<Flag>,
        /// `ENQUEUE_RESTORE`.
        #[serde(default)]
        restore: Option<Flag>,
        /// `ENQUEUE_MOVE`.
        #[serde(default, rename = "move")]
        mov: Option<Flag>,
        /// `ENQUEUE_MIGRATED`.
        #[serde(default)]
        migrated: Option<Flag>,
    },
    /// `dequeue_entity()`.
    Dequeue {
        /// Entity.
        se: u32,
        /// `DEQUEUE_SLEEP`.
        #[serde(default)]
        sleep: Option<Flag>,
        /// `DEQUEUE_SPECIAL`.
        #[serde(default)]
        special: Option<Flag>,
        /// `DEQUEUE_DELAYED`.
        #[serde(default)]
        delayed: Option<Flag>,
        /// `DEQUEUE_SAVE`.
        #[serde(default)]
        save: Option<Flag>,
        /// `DEQUEUE_MOVE`.
        #[serde(default, rename = "move")]
        mov: Option<Flag>,
    },
    /// `requeue_delayed_entity()`.
    RequeueDelayed {
        /// Entity.
        se: u32,
    },
    /// `set_next_entity()`.
    SetNext {
        /// Entity.
        se: u32,
    },
    /// `put_prev_entity()`.
    PutPrev {},
    /// `update_curr()`.
    UpdateCurr {
        /// Run time since the last update (ns).
        delta_exec: i64,
    },
    /// `__setparam_fair()`'s slice.
    SetSlice {
        /// Entity.
        se: u32,
        /// `sched_runtime` (ns).
        sched_runtime: u64,
    },
    /// `reweight_entity()`.
    ReweightEntity {
        /// Entity.
        se: u32,
        /// New weight (scaled).
        weight: u64,
    },
    /// `reweight_task_fair()`.
    ReweightTask {
        /// Entity.
        se: u32,
        /// New nice level.
        nice: i32,
        /// Policy (normal when absent).
        #[serde(default)]
        policy: Option<PolicyJson>,
    },
    /// `yield_task_fair()`.
    Yield {},
}

/// An entity of `out.after[i].entities`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityAfter {
    /// `vruntime`.
    pub vruntime: u64,
    /// `deadline`.
    pub deadline: u64,
    /// `vlag` (or `vprot` while curr).
    pub vlag: i64,
    /// `slice`.
    pub slice: u64,
    /// `custom_slice`.
    pub custom_slice: Flag,
    /// `on_rq`.
    pub on_rq: Flag,
    /// `sched_delayed`.
    pub sched_delayed: Flag,
    /// `rel_deadline`.
    pub rel_deadline: Flag,
    /// `load.weight`.
    pub weight: u64,
    /// `load.inv_weight`.
    pub inv_weight: u32,
    /// `entity_eligible()` (`null` off the runqueue).
    pub eligible: Option<Flag>,
}

/// `out.after[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct SeqAfter {
    /// dequeue: 1 done / 0 delayed; update_curr: resched.
    #[serde(default)]
    pub ret: Option<i64>,
    /// `min_vruntime`.
    pub min_vruntime: u64,
    /// `avg_vruntime`.
    pub avg_vruntime: i64,
    /// `avg_load`.
    pub avg_load: u64,
    /// `nr_queued`.
    pub nr_queued: u32,
    /// `load.weight`.
    pub load_weight: u64,
    /// `curr` index.
    pub curr: Option<u32>,
    /// `avg_vruntime()`.
    pub V: u64,
    /// `cfs_rq_min_slice()`.
    pub min_slice: u64,
    /// Every entity.
    pub entities: heapless::Vec<EntityAfter, SEQ_MAX_ENTITIES>,
}

/// The sequence driver.
pub struct EevdfSequence;

fn rq_err(e: RqError) -> CaseError {
    match e {
        RqError::NoEntity(_) => CaseError::OutOfRange("se"),
        RqError::Full => CaseError::TooLong(crate::limit::SEQ_MAX_ENTITIES),
        RqError::Nice(_) => CaseError::OutOfRange("nice"),
        RqError::Trap(_) => CaseError::OutOfRange("divisor"),
    }
}

fn flag(f: Option<Flag>) -> bool {
    f.is_some_and(|f| f.0)
}

fn after(rq: &EevdfRq<SEQ_MAX_ENTITIES>, ret: Option<i64>) -> Result<SeqAfter, CaseError> {
    let mut entities = heapless::Vec::new();
    for (i, e) in rq.entities.iter().enumerate() {
        let se = &e.se;
        let eligible = if se.on_rq {
            Some(Flag(rq.entity_eligible(i).map_err(rq_err)?))
        } else {
            None
        };
        entities
            .push(EntityAfter {
                vruntime: se.vruntime,
                deadline: se.deadline,
                vlag: se.vlag,
                slice: se.slice,
                custom_slice: Flag(se.custom_slice),
                on_rq: Flag(se.on_rq),
                sched_delayed: Flag(se.sched_delayed),
                rel_deadline: Flag(se.rel_deadline),
                weight: se.load.weight,
                inv_weight: se.load.inv_weight,
                eligible,
            })
            .map_err(|_| CaseError::TooLong(crate::limit::SEQ_MAX_ENTITIES))?;
    }
    Ok(SeqAfter {
        ret,
        min_vruntime: rq.cfs.min_vruntime,
        avg_vruntime: rq.cfs.avg_vruntime,
        avg_load: rq.cfs.avg_load,
        nr_queued: rq.cfs.nr_queued,
        load_weight: rq.cfs.load.weight,
        curr: rq.curr.map(|c| c as u32), // c < SEQ_MAX_ENTITIES
        V: rq
            .avg_vruntime()
            .map_err(|_| CaseError::OutOfRange("divisor"))?,
        min_slice: rq.cfs_rq_min_slice(),
        entities,
    })
}

impl Sequence for EevdfSequence {
    type Init = SeqIn;
    type Op = SeqOp;
    type After = SeqAfter;
    type State = EevdfRq<SEQ_MAX_ENTITIES>;

    fn start(init: &SeqIn, variant: &str) -> Result<Self::State, CaseError> {
        let profile = profile_of(variant)?;
        let i = &init.init;
        let f = &i.features;
        let factor = get_update_sysctl_factor(i.nr_cpus, TunableScaling::Log);
        let config = EevdfConfig {
            base_slice: u64::from(factor).wrapping_mul(i.normalized_sysctl_sched_base_slice),
            normalized_base_slice: i.normalized_sysctl_sched_base_slice,
            tick_nsec: i.tick_nsec,
            features: EevdfFeatures {
                place_lag: f.PLACE_LAG.0,
                place_deadline_initial: f.PLACE_DEADLINE_INITIAL.0,
                place_rel_deadline: f.PLACE_REL_DEADLINE.0,
                run_to_parity: f.RUN_TO_PARITY.0,
                delay_dequeue: f.DELAY_DEQUEUE.0,
                delay_zero: f.DELAY_ZERO.0,
            },
        };
        let mut rq = EevdfRq::new(i.cfs_rq.min_vruntime, config, profile);
        let ents: heapless::Vec<SchedEntity, SEQ_MAX_ENTITIES> = bounded(
            i.entities.iter().map(|e| SchedEntity {
                load: schedmath::fair::LoadWeight {
                    weight: e.weight,
                    inv_weight: e.inv_weight,
                },
                vruntime: e.vruntime,
                deadline: e.deadline,
                vlag: e.vlag,
                slice: e.slice,
                custom_slice: e.custom_slice.0,
                rel_deadline: e.rel_deadline.0,
                on_rq: false,
                sched_delayed: false,
            }),
            crate::limit::SEQ_MAX_ENTITIES,
        )?;
        for se in ents {
            rq.add_entity(se).map_err(rq_err)?;
        }
        Ok(rq)
    }

    fn apply(rq: &mut Self::State, op: &SeqOp) -> Result<SeqAfter, CaseError> {
        let ret = match *op {
            SeqOp::Enqueue { se, initial, .. } => {
                let flags = EnqueueFlags {
                    initial: flag(initial),
                };
                rq.enqueue_entity(se as usize, flags).map_err(rq_err)?;
                None
            }
            SeqOp::Dequeue {
                se,
                sleep,
                special,
                delayed,
                save,
                mov,
            } => {
                let flags = DequeueFlags {
                    sleep: flag(sleep),
                    special: flag(special),
                    delayed: flag(delayed),
                    save: flag(save),
                    r#move: flag(mov),
                };
                let done = rq.dequeue_entity(se as usize, flags).map_err(rq_err)?;
                Some(i64::from(done))
            }
            SeqOp::RequeueDelayed { se } => {
                rq.requeue_delayed_entity(se as usize).map_err(rq_err)?;
                None
            }
            SeqOp::SetNext { se } => {
                rq.set_next_entity(se as usize).map_err(rq_err)?;
                None
            }
            SeqOp::PutPrev {} => {
                rq.put_prev_entity();
                None
            }
            SeqOp::UpdateCurr { delta_exec } => {
                Some(i64::from(rq.update_curr(delta_exec).map_err(rq_err)?))
            }
            SeqOp::SetSlice { se, sched_runtime } => {
                rq.set_slice(se as usize, sched_runtime).map_err(rq_err)?;
                None
            }
            SeqOp::ReweightEntity { se, weight } => {
                rq.reweight_entity(se as usize, weight).map_err(rq_err)?;
                None
            }
            SeqOp::ReweightTask { se, nice, policy } => {
                let p = policy.map_or(FairPolicy::Normal, FairPolicy::from);
                rq.reweight_task(se as usize, nice, p).map_err(rq_err)?;
                None
            }
            SeqOp::Yield {} => {
                rq.yield_task_fair().map_err(rq_err)?;
                None
            }
        };
        after(rq, ret)
    }
}
