// SPDX-License-Identifier: GPL-2.0-only
//! lb_classify.jsonl (mainline) and lb_classify_v6_1.jsonl (`fair-cfs`).

use schedmath::fair::lb::{self, GroupType, SgLbStats};
use serde::{Deserialize, Serialize};

use super::{is_cfs, need, profile_of};
use crate::capacity::{ret_flag, Flag, Ret};
use crate::flat::Flat;
use crate::{Case, CaseError};

/// The six numeric `sg_lb_stats` inputs and `imbalance_pct`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capacity {
    /// `env->sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sum_nr_running`.
    pub sum_nr_running: u32,
    /// `group_weight`.
    pub group_weight: u32,
    /// `group_capacity`.
    pub group_capacity: u64,
    /// `group_util`.
    pub group_util: u64,
    /// `group_runnable`.
    pub group_runnable: u64,
}

impl Capacity {
    fn sgs(&self) -> SgLbStats {
        SgLbStats {
            sum_nr_running: self.sum_nr_running,
            group_weight: self.group_weight,
            group_capacity: self.group_capacity,
            group_util: self.group_util,
            group_runnable: self.group_runnable,
            ..SgLbStats::default()
        }
    }
}

/// A case that asks one `sg_lb_stats` predicate about [`Capacity`]: `$f(imbalance_pct,
/// &sgs)` → `{ret}`.
macro_rules! capacity_case {
    ($name:ident, $doc:literal, $f:path) => {
        #[doc = $doc]
        #[derive(Clone, Debug, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Capacity);

        impl Case for $name {
            type Out = Ret<Flag>;
            fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
                ret_flag($f(self.0.imbalance_pct, &self.0.sgs()))
            }
        }
    };
}

capacity_case!(
    GroupHasCapacity,
    "`group_has_capacity`.",
    lb::group_has_capacity
);
capacity_case!(
    GroupIsOverloaded,
    "`group_is_overloaded`.",
    lb::group_is_overloaded
);

/// `group_classify`'s inputs beside the six of [`Capacity`] (`group_smt_balance`:
/// mainline only).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClassifyArgs {
    /// `group_load`.
    pub group_load: u64,
    /// `group->sgc->imbalance`.
    pub sgc_imbalance: Flag,
    /// `group_asym_packing`.
    pub group_asym_packing: Flag,
    /// `group_misfit_task_load`.
    pub group_misfit_task_load: u64,
    /// Mainline `group_smt_balance`.
    #[serde(default)]
    pub group_smt_balance: Option<Flag>,
}

/// `group_classify` {the six, group_load, sgc_imbalance, group_asym_packing,
/// group_misfit_task_load, group_smt_balance (mainline)}.
pub type GroupClassify = Flat<Capacity, ClassifyArgs>;

/// `{group_type, avg_load}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupClassifyOut {
    /// The kernel's enum value.
    pub group_type: u32,
    /// `update_sg_lb_stats()`'s avg_load (overloaded groups only).
    pub avg_load: u64,
}

impl Case for GroupClassify {
    type Out = GroupClassifyOut;
    fn run(&self, variant: &str) -> Result<GroupClassifyOut, CaseError> {
        let Flat(c, a) = self;
        let profile = profile_of(variant)?;
        let smt = if is_cfs(variant)? {
            false
        } else {
            need(a.group_smt_balance, "group_smt_balance")?.0
        };
        let sgs = SgLbStats {
            group_load: a.group_load,
            group_misfit_task_load: a.group_misfit_task_load,
            group_asym_packing: a.group_asym_packing.0,
            group_smt_balance: smt,
            ..c.sgs()
        };
        let t = lb::group_classify(c.imbalance_pct, a.sgc_imbalance.0, &sgs, &profile);
        let avg_load = if t == GroupType::Overloaded {
            lb::sg_avg_load(a.group_load, c.group_capacity)
                .map_err(|_| CaseError::OutOfRange("group_capacity"))?
        } else {
            0
        };
        Ok(GroupClassifyOut {
            group_type: t.kernel_value(&profile).ok_or(CaseError::UnknownVariant)?,
            avg_load,
        })
    }
}

/// `smt_balance` {env_idle, sd_share_cpucapacity, sum_h_nr_running}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SmtBalance {
    /// `env->idle` (`enum cpu_idle_type`, 0 = CPU_NOT_IDLE).
    pub env_idle: u32,
    /// `group->flags & SD_SHARE_CPUCAPACITY`.
    pub sd_share_cpucapacity: Flag,
    /// `sgs->sum_h_nr_running`.
    pub sum_h_nr_running: u32,
}

impl Case for SmtBalance {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        ret_flag(lb::smt_balance(
            self.env_idle != 0,
            self.sd_share_cpucapacity.0,
            self.sum_h_nr_running,
        ))
    }
}
