// SPDX-License-Identifier: GPL-2.0-only
//! eevdf.jsonl: EEVDF arithmetic on an explicit cfs_rq (and `update_min_vruntime` /
//! `place_entity` of cfs_v6_1.jsonl, which share their `fn` names).

use schedmath::fair::cfs::{self, CfsFeatures, CfsPlaceEntity};
use schedmath::fair::eevdf::{
    avg_vruntime, avg_vruntime_add, avg_vruntime_sub, entity_eligible, place_entity,
    update_deadline, update_entity_lag, update_min_vruntime, vruntime_eligible, CfsRq, Curr,
    EevdfFeatures, SchedEntity,
};
use schedmath::fair::LoadWeight;
use serde::{Deserialize, Serialize};

use super::cfs::{levels_and_task, sysctl_61, LevelJson, MAX_LEVELS};
use super::{is_cfs, lw, need, profile_of, trap};
use crate::capacity::{bounded, Flag, Ret};
use crate::flat::Flat;
use crate::{Case, CaseError};

/// Most queued entities an `avg_vruntime_entities` case may list.
pub const MAX_QUEUED: usize = 32;

/// `curr` of the explicit cfs_rq (`null` = no curr).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct CurrJson {
    /// `vruntime`.
    pub vruntime: u64,
    /// `load.weight` (absent in 6.1's update_min_vruntime, which does not read it).
    #[serde(default)]
    pub weight: u64,
    /// `on_rq`.
    pub on_rq: Flag,
}

impl CurrJson {
    fn core(&self) -> Curr {
        Curr {
            vruntime: self.vruntime,
            weight: self.weight,
            on_rq: self.on_rq.0,
        }
    }
}

fn curr(c: &Option<CurrJson>) -> Option<Curr> {
    c.as_ref().map(CurrJson::core)
}

fn cfs_rq(min_vruntime: u64, avg_vruntime: i64, avg_load: u64, nr_queued: u32) -> CfsRq {
    CfsRq {
        min_vruntime,
        avg_vruntime,
        avg_load,
        nr_queued,
        load: LoadWeight::default(),
    }
}

/// `{vruntime, weight}` of an entity joining or leaving the sums.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct KeyWeight {
    /// `vruntime`.
    pub vruntime: u64,
    /// `load.weight` (scaled).
    pub weight: u64,
}

impl KeyWeight {
    fn se(&self) -> SchedEntity {
        SchedEntity {
            load: LoadWeight::new(self.weight),
            vruntime: self.vruntime,
            ..SchedEntity::default()
        }
    }
}

/// `avg_vruntime_entities` {min_vruntime, queued, curr}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AvgVruntimeEntities {
    /// `min_vruntime`.
    pub min_vruntime: u64,
    /// Entities added one by one.
    pub queued: heapless::Vec<KeyWeight, MAX_QUEUED>,
    /// `curr`.
    #[serde(default)]
    pub curr: Option<CurrJson>,
}

/// `{avg_vruntime, avg_load, V, eligible, curr_eligible}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)] // the fixture's `V`
pub struct AvgVruntimeEntitiesOut {
    /// Sum after the adds.
    pub avg_vruntime: i64,
    /// Load after the adds.
    pub avg_load: u64,
    /// `avg_vruntime()`.
    pub V: u64,
    /// `entity_eligible()` of each queued entity.
    pub eligible: heapless::Vec<Flag, MAX_QUEUED>,
    /// Of curr, when there is one.
    #[serde(default)]
    pub curr_eligible: Option<Flag>,
}

impl Case for AvgVruntimeEntities {
    type Out = AvgVruntimeEntitiesOut;
    fn run(&self, _: &str) -> Result<AvgVruntimeEntitiesOut, CaseError> {
        let mut c = cfs_rq(self.min_vruntime, 0, 0, 0);
        for q in &self.queued {
            avg_vruntime_add(&mut c, &q.se());
        }
        let cu = curr(&self.curr);
        let eligible = bounded(
            self.queued
                .iter()
                .map(|q| Flag(entity_eligible(&c, cu, &q.se()))),
            crate::limit::EEVDF_MAX_QUEUED,
        )?;
        Ok(AvgVruntimeEntitiesOut {
            avg_vruntime: c.avg_vruntime,
            avg_load: c.avg_load,
            V: avg_vruntime(&c, cu).map_err(trap)?,
            eligible,
            curr_eligible: cu.map(|x| Flag(vruntime_eligible(&c, cu, x.vruntime))),
        })
    }
}

/// A case on the explicit cfs_rq: its fields `{min_vruntime, avg_vruntime, avg_load,
/// nr_queued, curr}` (flat in the fixture, and postcard cannot `flatten`) plus the case's
/// own, and the core's [`CfsRq`] built from them.
macro_rules! cfs_case {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $f:ident: $t:ty,)* }) => {
        $(#[$m])*
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub struct $name {
            /// `min_vruntime`.
            pub min_vruntime: u64,
            /// `avg_vruntime`.
            pub avg_vruntime: i64,
            /// `avg_load`.
            pub avg_load: u64,
            /// `nr_queued`.
            pub nr_queued: u32,
            /// `curr`.
            #[serde(default)]
            pub curr: Option<CurrJson>,
            $($(#[$fm])* pub $f: $t,)*
        }

        impl $name {
            fn cfs(&self) -> CfsRq {
                cfs_rq(self.min_vruntime, self.avg_vruntime, self.avg_load, self.nr_queued)
            }
        }
    };
}

cfs_case!(
    /// `avg_vruntime` {cfs fields}.
    AvgVruntime {}
);

impl Case for AvgVruntime {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: avg_vruntime(&self.cfs(), curr(&self.curr)).map_err(trap)?,
        })
    }
}

cfs_case!(
    /// `vruntime_eligible` {cfs fields, vruntime}.
    VruntimeEligible {
        /// The vruntime tested.
        vruntime: u64,
    }
);

impl Case for VruntimeEligible {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        Ok(Ret {
            ret: Flag(vruntime_eligible(
                &self.cfs(),
                curr(&self.curr),
                self.vruntime,
            )),
        })
    }
}

/// `avg_vruntime_add` / `avg_vruntime_sub` {min_vruntime, avg_vruntime, avg_load, se}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AvgVruntimeAddSub {
    /// `min_vruntime`.
    pub min_vruntime: u64,
    /// `avg_vruntime`.
    pub avg_vruntime: i64,
    /// `avg_load`.
    pub avg_load: u64,
    /// The entity.
    pub se: KeyWeight,
}

/// `{avg_vruntime, avg_load}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SumsOut {
    /// `avg_vruntime`.
    pub avg_vruntime: i64,
    /// `avg_load`.
    pub avg_load: u64,
}

/// `avg_vruntime_add`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AvgVruntimeAdd(pub AvgVruntimeAddSub);

/// `avg_vruntime_sub`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AvgVruntimeSub(pub AvgVruntimeAddSub);

fn add_sub(a: &AvgVruntimeAddSub, add: bool) -> SumsOut {
    let mut c = cfs_rq(a.min_vruntime, a.avg_vruntime, a.avg_load, 0);
    if add {
        avg_vruntime_add(&mut c, &a.se.se());
    } else {
        avg_vruntime_sub(&mut c, &a.se.se());
    }
    SumsOut {
        avg_vruntime: c.avg_vruntime,
        avg_load: c.avg_load,
    }
}

impl Case for AvgVruntimeAdd {
    type Out = SumsOut;
    fn run(&self, _: &str) -> Result<SumsOut, CaseError> {
        Ok(add_sub(&self.0, true))
    }
}

impl Case for AvgVruntimeSub {
    type Out = SumsOut;
    fn run(&self, _: &str) -> Result<SumsOut, CaseError> {
        Ok(add_sub(&self.0, false))
    }
}

/// The entity of `update_entity_lag`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct LagSe {
    /// `vruntime`.
    pub vruntime: u64,
    /// `load.weight`.
    pub weight: u64,
    /// `load.inv_weight`.
    pub inv_weight: u32,
    /// `slice`.
    pub slice: u64,
}

cfs_case!(
    /// `update_entity_lag` {cfs fields, se, tick_nsec}.
    UpdateEntityLag {
        /// The entity.
        se: LagSe,
        /// `TICK_NSEC`.
        tick_nsec: u64,
    }
);

/// `{vlag, limit, V, inv_weight}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct UpdateEntityLagOut {
    /// `se->vlag`.
    pub vlag: i64,
    /// The clamp bound.
    pub limit: i64,
    /// `avg_vruntime()`.
    pub V: u64,
    /// The entity's inverse weight after the call.
    pub inv_weight: u32,
}

impl Case for UpdateEntityLag {
    type Out = UpdateEntityLagOut;
    fn run(&self, _: &str) -> Result<UpdateEntityLagOut, CaseError> {
        let c = self.cfs();
        let mut se = SchedEntity {
            load: lw(self.se.weight, self.se.inv_weight),
            vruntime: self.se.vruntime,
            slice: self.se.slice,
            on_rq: true,
            ..SchedEntity::default()
        };
        let lag = update_entity_lag(&c, curr(&self.curr), &mut se, self.tick_nsec).map_err(trap)?;
        Ok(UpdateEntityLagOut {
            vlag: se.vlag,
            limit: lag.limit,
            V: lag.v,
            inv_weight: se.load.inv_weight,
        })
    }
}

/// The entity of `place_entity` (EEVDF fields, or 6.1's `vruntime, exec_start, idle`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct PlaceSe {
    /// EEVDF `vlag`.
    #[serde(default)]
    pub vlag: Option<i64>,
    /// EEVDF `load.weight`.
    #[serde(default)]
    pub weight: Option<u64>,
    /// EEVDF `load.inv_weight`.
    #[serde(default)]
    pub inv_weight: Option<u32>,
    /// EEVDF `slice`.
    #[serde(default)]
    pub slice: Option<u64>,
    /// EEVDF `custom_slice`.
    #[serde(default)]
    pub custom_slice: Option<Flag>,
    /// EEVDF `rel_deadline`.
    #[serde(default)]
    pub rel_deadline: Option<Flag>,
    /// EEVDF `deadline`.
    #[serde(default)]
    pub deadline: Option<u64>,
    /// 6.1 `vruntime`.
    #[serde(default)]
    pub vruntime: Option<u64>,
    /// 6.1 `exec_start`.
    #[serde(default)]
    pub exec_start: Option<u64>,
    /// 6.1 `se_is_idle()`.
    #[serde(default)]
    pub idle: Option<Flag>,
}

/// `flags` of EEVDF's `place_entity`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct PlaceFlags {
    /// `ENQUEUE_INITIAL`.
    #[serde(rename = "ENQUEUE_INITIAL")]
    pub enqueue_initial: Flag,
}

/// `features` of either `place_entity`.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[allow(non_snake_case)] // sched_feat names
pub struct PlaceFeatures {
    /// EEVDF.
    #[serde(default)]
    pub PLACE_LAG: Option<Flag>,
    /// EEVDF.
    #[serde(default)]
    pub PLACE_DEADLINE_INITIAL: Option<Flag>,
    /// 6.1.
    #[serde(default)]
    pub GENTLE_FAIR_SLEEPERS: Option<Flag>,
    /// 6.1.
    #[serde(default)]
    pub START_DEBIT: Option<Flag>,
}

/// The explicit cfs_rq of `place_entity` and `update_min_vruntime`: EEVDF reads all of
/// it, 6.1 only `min_vruntime` (and `update_min_vruntime` its `curr`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct CfsRqJson {
    /// `cfs_rq->min_vruntime`.
    pub min_vruntime: u64,
    /// EEVDF `avg_vruntime`.
    #[serde(default)]
    pub avg_vruntime: Option<i64>,
    /// EEVDF `avg_load`.
    #[serde(default)]
    pub avg_load: Option<u64>,
    /// EEVDF `nr_queued`.
    #[serde(default)]
    pub nr_queued: Option<u32>,
    /// `curr`.
    #[serde(default)]
    pub curr: Option<CurrJson>,
}

impl CfsRqJson {
    /// The EEVDF cfs_rq (its sums required).
    fn eevdf(&self) -> Result<CfsRq, CaseError> {
        Ok(cfs_rq(
            self.min_vruntime,
            need(self.avg_vruntime, "avg_vruntime")?,
            need(self.avg_load, "avg_load")?,
            need(self.nr_queued, "nr_queued")?,
        ))
    }
}

/// `place_entity`'s fields beside its cfs_rq.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlaceArgs {
    /// The entity.
    pub se: PlaceSe,
    /// EEVDF enqueue flags.
    #[serde(default)]
    pub flags: Option<PlaceFlags>,
    /// Feature switches.
    #[serde(default)]
    pub features: PlaceFeatures,
    /// EEVDF `sysctl_sched_base_slice`.
    #[serde(default)]
    pub sysctl_sched_base_slice: Option<u64>,
    /// 6.1 online CPUs.
    #[serde(default)]
    pub nr_cpus: Option<u32>,
    /// 6.1 `initial`.
    #[serde(default)]
    pub initial: Option<Flag>,
    /// 6.1 `rq_clock_task()`.
    #[serde(default)]
    pub rq_clock_task: Option<u64>,
    /// 6.1 hierarchy for the START_DEBIT vslice.
    #[serde(default)]
    pub levels: Option<heapless::Vec<LevelJson, MAX_LEVELS>>,
    /// 6.1 `cfs_rq->nr_running`.
    #[serde(default)]
    pub cfs_nr_running: Option<u32>,
    /// 6.1 `rq->cfs.h_nr_running`.
    #[serde(default)]
    pub rq_h_nr_running: Option<u32>,
}

/// `place_entity`: EEVDF (eevdf.jsonl) or 6.1 (cfs_v6_1.jsonl) by the header variant.
pub type PlaceEntity = Flat<CfsRqJson, PlaceArgs>;

/// Either `place_entity`'s output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct PlaceEntityOut {
    /// New `vruntime`.
    pub vruntime: u64,
    /// EEVDF `deadline`.
    #[serde(default)]
    pub deadline: Option<u64>,
    /// EEVDF `slice`.
    #[serde(default)]
    pub slice: Option<u64>,
    /// EEVDF `rel_deadline`.
    #[serde(default)]
    pub rel_deadline: Option<Flag>,
    /// EEVDF lag subtracted.
    #[serde(default)]
    pub lag: Option<i64>,
    /// EEVDF virtual slice.
    #[serde(default)]
    pub vslice: Option<u64>,
    /// EEVDF `V`.
    #[serde(default)]
    pub V: Option<u64>,
    /// EEVDF inverse weight after the call.
    #[serde(default)]
    pub inv_weight: Option<u32>,
    /// 6.1 base.
    #[serde(default)]
    pub base: Option<u64>,
    /// 6.1 long-sleeper rule taken.
    #[serde(default)]
    pub long_sleeper: Option<Flag>,
}

/// EEVDF's `place_entity()`.
fn place_eevdf(rq: &CfsRqJson, a: &PlaceArgs) -> Result<PlaceEntityOut, CaseError> {
    let c = rq.eevdf()?;
    let s = &a.se;
    let mut se = SchedEntity {
        load: lw(
            need(s.weight, "se.weight")?,
            need(s.inv_weight, "se.inv_weight")?,
        ),
        deadline: need(s.deadline, "se.deadline")?,
        vlag: need(s.vlag, "se.vlag")?,
        slice: need(s.slice, "se.slice")?,
        custom_slice: need(s.custom_slice, "se.custom_slice")?.0,
        rel_deadline: need(s.rel_deadline, "se.rel_deadline")?.0,
        ..SchedEntity::default()
    };
    let f = &a.features;
    let features = EevdfFeatures {
        place_lag: need(f.PLACE_LAG, "features.PLACE_LAG")?.0,
        place_deadline_initial: need(f.PLACE_DEADLINE_INITIAL, "features.PLACE_DEADLINE_INITIAL")?
            .0,
        ..EevdfFeatures::default()
    };
    let initial = need(a.flags, "flags")?.enqueue_initial.0;
    let base = need(a.sysctl_sched_base_slice, "sysctl_sched_base_slice")?;
    let p = place_entity(&c, curr(&rq.curr), &mut se, initial, &features, base).map_err(trap)?;
    Ok(PlaceEntityOut {
        vruntime: se.vruntime,
        deadline: Some(se.deadline),
        slice: Some(se.slice),
        rel_deadline: Some(Flag(se.rel_deadline)),
        lag: Some(p.lag),
        vslice: Some(p.vslice),
        V: Some(p.v),
        inv_weight: Some(se.load.inv_weight),
        base: None,
        long_sleeper: None,
    })
}

/// 6.1's `place_entity()`.
fn place_cfs(rq: &CfsRqJson, a: &PlaceArgs) -> Result<PlaceEntityOut, CaseError> {
    let sysctl = sysctl_61(need(a.nr_cpus, "nr_cpus")?);
    let levels = need(a.levels.as_ref(), "levels")?;
    let f = &a.features;
    let features = CfsFeatures {
        gentle_fair_sleepers: need(f.GENTLE_FAIR_SLEEPERS, "features.GENTLE_FAIR_SLEEPERS")?.0,
        start_debit: need(f.START_DEBIT, "features.START_DEBIT")?.0,
        ..CfsFeatures::default()
    };
    let idle = need(a.se.idle, "se.idle")?.0;
    let env = cfs::SliceEnv {
        cfs_nr_running: need(a.cfs_nr_running, "cfs_nr_running")?,
        cfs_idle_nr_running: 0,
        rq_h_nr_running: need(a.rq_h_nr_running, "rq_h_nr_running")?,
        se_idle: idle,
    };
    let (levels, task) = levels_and_task(levels)?;
    let mut se = CfsPlaceEntity {
        vruntime: need(a.se.vruntime, "se.vruntime")?,
        exec_start: need(a.se.exec_start, "se.exec_start")?,
        idle,
        load: task,
    };
    let p = cfs::place_entity(
        rq.min_vruntime,
        &mut se,
        need(a.initial, "initial")?.0,
        need(a.rq_clock_task, "rq_clock_task")?,
        &levels,
        &env,
        &features,
        &sysctl,
    )
    .ok_or(CaseError::TooLong(crate::limit::CFS_MAX_LEVELS))?;
    Ok(PlaceEntityOut {
        vruntime: p.vruntime,
        deadline: None,
        slice: None,
        rel_deadline: None,
        lag: None,
        vslice: None,
        V: None,
        inv_weight: None,
        base: Some(p.base),
        long_sleeper: Some(Flag(p.long_sleeper)),
    })
}

impl Case for PlaceEntity {
    type Out = PlaceEntityOut;
    fn run(&self, variant: &str) -> Result<PlaceEntityOut, CaseError> {
        let Flat(rq, args) = self;
        if is_cfs(variant)? {
            place_cfs(rq, args)
        } else {
            place_eevdf(rq, args)
        }
    }
}

/// The entity of `update_deadline`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct DeadlineSe {
    /// `vruntime`.
    pub vruntime: u64,
    /// `deadline`.
    pub deadline: u64,
    /// `slice`.
    pub slice: u64,
    /// `custom_slice`.
    pub custom_slice: Flag,
    /// `load.weight`.
    pub weight: u64,
    /// `load.inv_weight`.
    pub inv_weight: u32,
}

/// `update_deadline` {se, sysctl_sched_base_slice}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UpdateDeadline {
    /// The entity.
    pub se: DeadlineSe,
    /// `sysctl_sched_base_slice`.
    pub sysctl_sched_base_slice: u64,
}

/// `{ret, slice, deadline, inv_weight}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateDeadlineOut {
    /// A new request was made.
    pub ret: Flag,
    /// `slice`.
    pub slice: u64,
    /// `deadline`.
    pub deadline: u64,
    /// Inverse weight after the call.
    pub inv_weight: u32,
}

impl Case for UpdateDeadline {
    type Out = UpdateDeadlineOut;
    fn run(&self, _: &str) -> Result<UpdateDeadlineOut, CaseError> {
        let s = &self.se;
        let mut se = SchedEntity {
            load: lw(s.weight, s.inv_weight),
            vruntime: s.vruntime,
            deadline: s.deadline,
            slice: s.slice,
            custom_slice: s.custom_slice.0,
            ..SchedEntity::default()
        };
        let ret = update_deadline(&mut se, self.sysctl_sched_base_slice);
        Ok(UpdateDeadlineOut {
            ret: Flag(ret),
            slice: se.slice,
            deadline: se.deadline,
            inv_weight: se.load.inv_weight,
        })
    }
}

/// `update_min_vruntime`'s field beside its cfs_rq.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct MinVruntimeArgs {
    /// The tree's smallest vruntime (EEVDF: the augmented root's; 6.1: the leftmost's).
    #[serde(default, alias = "leftmost_vruntime")]
    pub root_min_vruntime: Option<u64>,
}

/// `update_min_vruntime`: EEVDF (with the sums) or 6.1 (`leftmost_vruntime`).
pub type UpdateMinVruntime = Flat<CfsRqJson, MinVruntimeArgs>;

/// `{min_vruntime, avg_vruntime}` (no sums under 6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateMinVruntimeOut {
    /// `min_vruntime`.
    pub min_vruntime: u64,
    /// EEVDF `avg_vruntime`.
    #[serde(default)]
    pub avg_vruntime: Option<i64>,
}

impl Case for UpdateMinVruntime {
    type Out = UpdateMinVruntimeOut;
    fn run(&self, variant: &str) -> Result<UpdateMinVruntimeOut, CaseError> {
        let Flat(rq, args) = self;
        let profile = profile_of(variant)?;
        let cfs61 = is_cfs(variant)?;
        let mut c = if cfs61 {
            cfs_rq(rq.min_vruntime, 0, 0, 0)
        } else {
            rq.eevdf()?
        };
        update_min_vruntime(&mut c, curr(&rq.curr), args.root_min_vruntime, &profile);
        Ok(UpdateMinVruntimeOut {
            min_vruntime: c.min_vruntime,
            avg_vruntime: (!cfs61).then_some(c.avg_vruntime),
        })
    }
}
