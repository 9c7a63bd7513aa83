// SPDX-License-Identifier: GPL-2.0-only
//! calc_delta.jsonl and prio_tables.jsonl: the inverse-weight fixed point, the nice
//! tables, tunable scaling and `__setparam_fair()`.

use schedmath::fair::sysctl::{self, TunableScaling};
use schedmath::fair::weight::{
    __calc_delta, __update_inv_weight, calc_delta_fair, set_load_weight, FairPolicy,
    SCHED_PRIO_TO_WEIGHT, SCHED_PRIO_TO_WMULT,
};
use schedmath::fair::LoadWeight;
use serde::{Deserialize, Serialize};

use super::{is_cfs, lw, profile_of, InvWeightOut};
use crate::capacity::{bounded, Flag};
use crate::{Case, CaseError};

/// Nice levels of the kernel's prio tables (-20..19).
pub const NICE_LEVELS: usize = SCHED_PRIO_TO_WEIGHT.len();

/// `__calc_delta` {delta_exec, weight, lw_weight, lw_inv_weight}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalcDelta {
    /// `delta_exec` (ns).
    pub delta_exec: u64,
    /// `weight` (scaled).
    pub weight: u64,
    /// `lw->weight`.
    pub lw_weight: u64,
    /// `lw->inv_weight` (0: compute lazily).
    pub lw_inv_weight: u32,
}

/// `__calc_delta`'s output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalcDeltaOut {
    /// Result.
    pub ret: u64,
    /// `lw->inv_weight` after the call.
    pub inv_weight: u32,
    /// Final multiplier.
    pub fact: u32,
    /// Final shift.
    pub shift: i32,
}

impl Case for CalcDelta {
    type Out = CalcDeltaOut;
    fn run(&self, _: &str) -> Result<CalcDeltaOut, CaseError> {
        let mut l = lw(self.lw_weight, self.lw_inv_weight);
        let r = __calc_delta(self.delta_exec, self.weight, &mut l);
        Ok(CalcDeltaOut {
            ret: r.ret,
            inv_weight: l.inv_weight,
            fact: r.fact,
            shift: r.shift,
        })
    }
}

/// `calc_delta_fair` {delta, se_weight, se_inv_weight}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalcDeltaFair {
    /// Real time (ns).
    pub delta: u64,
    /// `se->load.weight`.
    pub se_weight: u64,
    /// `se->load.inv_weight`.
    pub se_inv_weight: u32,
}

/// `{ret, inv_weight}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetInvWeight {
    /// Result.
    pub ret: u64,
    /// The entity's inverse weight after the call.
    pub inv_weight: u32,
}

impl Case for CalcDeltaFair {
    type Out = RetInvWeight;
    fn run(&self, _: &str) -> Result<RetInvWeight, CaseError> {
        let mut l = lw(self.se_weight, self.se_inv_weight);
        let ret = calc_delta_fair(self.delta, &mut l);
        Ok(RetInvWeight {
            ret,
            inv_weight: l.inv_weight,
        })
    }
}

/// `__update_inv_weight` {weight, inv_weight}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UpdateInvWeight {
    /// `lw->weight`.
    pub weight: u64,
    /// `lw->inv_weight`.
    pub inv_weight: u32,
}

impl Case for UpdateInvWeight {
    type Out = InvWeightOut;
    fn run(&self, _: &str) -> Result<InvWeightOut, CaseError> {
        let mut l = lw(self.weight, self.inv_weight);
        __update_inv_weight(&mut l);
        Ok(InvWeightOut {
            inv_weight: l.inv_weight,
        })
    }
}

/// `sched_prio_to_weight` {} → {table}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SchedPrioToWeight {}

/// `{table}` of 40 entries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table<T> {
    /// Index 0 = nice -20.
    pub table: heapless::Vec<T, NICE_LEVELS>,
}

impl Case for SchedPrioToWeight {
    type Out = Table<u64>;
    fn run(&self, _: &str) -> Result<Table<u64>, CaseError> {
        Ok(Table {
            table: bounded(SCHED_PRIO_TO_WEIGHT, crate::limit::NICE_LEVELS)?,
        })
    }
}

/// `sched_prio_to_wmult` {} → {table}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SchedPrioToWmult {}

impl Case for SchedPrioToWmult {
    type Out = Table<u32>;
    fn run(&self, _: &str) -> Result<Table<u32>, CaseError> {
        Ok(Table {
            table: bounded(SCHED_PRIO_TO_WMULT, crate::limit::NICE_LEVELS)?,
        })
    }
}

/// A task policy as the fixtures spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyJson {
    /// SCHED_NORMAL.
    Normal,
    /// SCHED_BATCH (same weights as normal).
    Batch,
    /// SCHED_IDLE.
    Idle,
}

impl From<PolicyJson> for FairPolicy {
    fn from(p: PolicyJson) -> Self {
        match p {
            PolicyJson::Normal | PolicyJson::Batch => FairPolicy::Normal,
            PolicyJson::Idle => FairPolicy::Idle,
        }
    }
}

/// `prio_load_weight` {nice, policy}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrioLoadWeight {
    /// Nice level.
    pub nice: i32,
    /// Policy.
    pub policy: PolicyJson,
}

/// `{weight, inv_weight, lazy_inv_weight}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrioLoadWeightOut {
    /// `se.load.weight`.
    pub weight: u64,
    /// The table inverse tasks carry.
    pub inv_weight: u32,
    /// What `__update_inv_weight()` would compute for the weight.
    pub lazy_inv_weight: u32,
}

impl Case for PrioLoadWeight {
    type Out = PrioLoadWeightOut;
    fn run(&self, _: &str) -> Result<PrioLoadWeightOut, CaseError> {
        let l =
            set_load_weight(self.nice, self.policy.into()).ok_or(CaseError::OutOfRange("nice"))?;
        let mut lazy = LoadWeight::new(l.weight);
        __update_inv_weight(&mut lazy);
        Ok(PrioLoadWeightOut {
            weight: l.weight,
            inv_weight: l.inv_weight,
            lazy_inv_weight: lazy.inv_weight,
        })
    }
}

/// `update_sysctl` {nr_cpus, tunable_scaling}: mainline's base slice or 6.1's set.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UpdateSysctl {
    /// Online CPUs.
    pub nr_cpus: u32,
    /// `sysctl_sched_tunable_scaling`.
    pub tunable_scaling: u32,
}

/// The tunables of either kernel (each variant fills its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateSysctlOut {
    /// Scaling factor.
    pub factor: u32,
    /// Mainline `sysctl_sched_base_slice`.
    #[serde(default)]
    pub sysctl_sched_base_slice: Option<u32>,
    /// Mainline `normalized_sysctl_sched_base_slice`.
    #[serde(default)]
    pub normalized_sysctl_sched_base_slice: Option<u32>,
    /// 6.1 `sysctl_sched_latency`.
    #[serde(default)]
    pub sysctl_sched_latency: Option<u32>,
    /// 6.1 `sysctl_sched_min_granularity`.
    #[serde(default)]
    pub sysctl_sched_min_granularity: Option<u32>,
    /// 6.1 `sysctl_sched_wakeup_granularity`.
    #[serde(default)]
    pub sysctl_sched_wakeup_granularity: Option<u32>,
    /// 6.1 `sysctl_sched_idle_min_granularity`.
    #[serde(default)]
    pub sysctl_sched_idle_min_granularity: Option<u32>,
    /// 6.1 `sched_nr_latency`.
    #[serde(default)]
    pub sched_nr_latency: Option<u32>,
}

impl Case for UpdateSysctl {
    type Out = UpdateSysctlOut;
    fn run(&self, variant: &str) -> Result<UpdateSysctlOut, CaseError> {
        let s = sysctl::update_sysctl(
            self.nr_cpus,
            TunableScaling::from_sysctl(self.tunable_scaling),
            &profile_of(variant)?,
        );
        let mut out = UpdateSysctlOut {
            factor: s.factor,
            sysctl_sched_base_slice: None,
            normalized_sysctl_sched_base_slice: None,
            sysctl_sched_latency: None,
            sysctl_sched_min_granularity: None,
            sysctl_sched_wakeup_granularity: None,
            sysctl_sched_idle_min_granularity: None,
            sched_nr_latency: None,
        };
        if is_cfs(variant)? {
            // cfs_v6_1.jsonl reports the default (log) scaling's factor whatever
            // `tunable_scaling` the tunables were scaled with (its sysctl-4: 2 CPUs, no
            // scaling: factor 2, latency 6 ms); mainline's prio_tables.jsonl reports the
            // factor used.
            out.factor = sysctl::get_update_sysctl_factor(self.nr_cpus, TunableScaling::Log);
            out.sysctl_sched_latency = Some(s.sysctl_sched_latency);
            out.sysctl_sched_min_granularity = Some(s.sysctl_sched_min_granularity);
            out.sysctl_sched_wakeup_granularity = Some(s.sysctl_sched_wakeup_granularity);
            out.sysctl_sched_idle_min_granularity = Some(sysctl::SYSCTL_SCHED_IDLE_MIN_GRANULARITY);
            out.sched_nr_latency = Some(sysctl::SCHED_NR_LATENCY);
        } else {
            out.sysctl_sched_base_slice = Some(s.sysctl_sched_base_slice);
            out.normalized_sysctl_sched_base_slice =
                Some(sysctl::NORMALIZED_SYSCTL_SCHED_BASE_SLICE);
        }
        Ok(out)
    }
}

/// `__setparam_fair` {sched_runtime, sysctl_sched_base_slice}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetparamFair {
    /// `attr->sched_runtime` (ns).
    pub sched_runtime: u64,
    /// `sysctl_sched_base_slice`.
    pub sysctl_sched_base_slice: u64,
}

/// `{slice, custom_slice}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetparamFairOut {
    /// `se->slice`.
    pub slice: u64,
    /// `se->custom_slice`.
    pub custom_slice: Flag,
}

impl Case for SetparamFair {
    type Out = SetparamFairOut;
    fn run(&self, _: &str) -> Result<SetparamFairOut, CaseError> {
        let (slice, custom) =
            sysctl::__setparam_fair(self.sched_runtime, self.sysctl_sched_base_slice);
        Ok(SetparamFairOut {
            slice,
            custom_slice: Flag(custom),
        })
    }
}
