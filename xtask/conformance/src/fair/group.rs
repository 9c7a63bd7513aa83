// SPDX-License-Identifier: GPL-2.0-only
//! group_shares.jsonl (mainline) and group_shares_v6_1.jsonl (`fair-cfs`).

use schedmath::fair::group::{self, TgLoadContrib};
use serde::{Deserialize, Serialize};

use super::{is_cfs, need, profile_of, trap};
use crate::capacity::{Flag, Ret};
use crate::{Case, CaseError};

/// `calc_group_shares` {tg_shares, tg_load_avg, load_weight, load_avg,
/// tg_load_avg_contrib}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalcGroupShares {
    /// `tg->shares` (scaled).
    pub tg_shares: i64,
    /// `tg->load_avg`.
    pub tg_load_avg: i64,
    /// The group cfs_rq's `load.weight`.
    pub load_weight: u64,
    /// Its `avg.load_avg`.
    pub load_avg: u64,
    /// Its `tg_load_avg_contrib`.
    pub tg_load_avg_contrib: u64,
}

impl Case for CalcGroupShares {
    type Out = Ret<i64>;
    fn run(&self, _: &str) -> Result<Ret<i64>, CaseError> {
        let ret = group::calc_group_shares(
            self.tg_shares,
            self.load_weight,
            self.load_avg,
            self.tg_load_avg,
            self.tg_load_avg_contrib,
        )
        .map_err(trap)?;
        Ok(Ret { ret })
    }
}

/// `update_tg_load_avg` {is_root_tg, load_avg, tg_load_avg_contrib, tg_load_avg} plus, on
/// mainline, {cpu_active, now, last_update_tg_load_avg}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UpdateTgLoadAvg {
    /// The root task group.
    pub is_root_tg: Flag,
    /// `cfs_rq->avg.load_avg`.
    pub load_avg: u64,
    /// `cfs_rq->tg_load_avg_contrib`.
    pub tg_load_avg_contrib: u64,
    /// `tg->load_avg`.
    pub tg_load_avg: i64,
    /// Mainline: `cpu_active()`.
    #[serde(default)]
    pub cpu_active: Option<Flag>,
    /// Mainline: `sched_clock_cpu()`.
    #[serde(default)]
    pub now: Option<u64>,
    /// Mainline: `cfs_rq->last_update_tg_load_avg`.
    #[serde(default)]
    pub last_update_tg_load_avg: Option<u64>,
}

/// `{updated, tg_load_avg_contrib, tg_load_avg, last_update_tg_load_avg}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateTgLoadAvgOut {
    /// The contribution was published.
    pub updated: Flag,
    /// `tg_load_avg_contrib` after.
    pub tg_load_avg_contrib: u64,
    /// `tg->load_avg` after.
    pub tg_load_avg: i64,
    /// Mainline: the stamp after.
    #[serde(default)]
    pub last_update_tg_load_avg: Option<u64>,
}

impl Case for UpdateTgLoadAvg {
    type Out = UpdateTgLoadAvgOut;
    fn run(&self, variant: &str) -> Result<UpdateTgLoadAvgOut, CaseError> {
        let profile = profile_of(variant)?;
        let cfs61 = is_cfs(variant)?;
        let (cpu_active, now, last) = if cfs61 {
            (true, 0, 0)
        } else {
            (
                need(self.cpu_active, "cpu_active")?.0,
                need(self.now, "now")?,
                need(self.last_update_tg_load_avg, "last_update_tg_load_avg")?,
            )
        };
        let mut grq = TgLoadContrib {
            tg_load_avg_contrib: self.tg_load_avg_contrib,
            last_update_tg_load_avg: last,
        };
        let mut tg = self.tg_load_avg;
        let updated = group::update_tg_load_avg(
            self.is_root_tg.0,
            cpu_active,
            now,
            self.load_avg,
            &mut grq,
            &mut tg,
            &profile,
        );
        Ok(UpdateTgLoadAvgOut {
            updated: Flag(updated),
            tg_load_avg_contrib: grq.tg_load_avg_contrib,
            tg_load_avg: tg,
            last_update_tg_load_avg: (!cfs61).then_some(grq.last_update_tg_load_avg),
        })
    }
}

/// `clear_tg_load_avg` {is_root_tg, tg_load_avg_contrib, tg_load_avg, now}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClearTgLoadAvg {
    /// The root task group.
    pub is_root_tg: Flag,
    /// `cfs_rq->tg_load_avg_contrib`.
    pub tg_load_avg_contrib: u64,
    /// `tg->load_avg`.
    pub tg_load_avg: i64,
    /// `sched_clock_cpu()`.
    pub now: u64,
}

/// `{tg_load_avg_contrib, tg_load_avg, last_update_tg_load_avg}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClearTgLoadAvgOut {
    /// After.
    pub tg_load_avg_contrib: u64,
    /// After.
    pub tg_load_avg: i64,
    /// After (0 when untouched).
    pub last_update_tg_load_avg: u64,
}

impl Case for ClearTgLoadAvg {
    type Out = ClearTgLoadAvgOut;
    fn run(&self, _: &str) -> Result<ClearTgLoadAvgOut, CaseError> {
        let mut grq = TgLoadContrib {
            tg_load_avg_contrib: self.tg_load_avg_contrib,
            last_update_tg_load_avg: 0,
        };
        let mut tg = self.tg_load_avg;
        group::clear_tg_load_avg(self.is_root_tg.0, self.now, &mut grq, &mut tg);
        Ok(ClearTgLoadAvgOut {
            tg_load_avg_contrib: grq.tg_load_avg_contrib,
            tg_load_avg: tg,
            last_update_tg_load_avg: grq.last_update_tg_load_avg,
        })
    }
}
