// SPDX-License-Identifier: GPL-2.0-only
//! `energy.jsonl`: the Energy Model's table creation, energy estimate and frequency
//! limits (kernel/power/energy_model.c, include/linux/energy_model.h). Tables hold at
//! most [`EM_MAX_PERF_STATES`] states (the core's `EmTable`).

use heapless::Vec;
use schedmath::energy::{
    em_cpu_energy, em_create_perf_table, em_update_performance_limits, EmError, EmPerfDomain,
    EmPerfState, EmTable, EM_MAX_PERF_STATES,
};
use serde::{Deserialize, Serialize};

use super::bounded;
use crate::{Case, CaseError};

/// One column of a table (one value per state).
pub type Column = Vec<u64, EM_MAX_PERF_STATES>;

/// A table from columns of equal length; `state(i)` builds state `i`.
fn table(
    columns: &[(&Column, &'static str)],
    state: impl Fn(usize) -> EmPerfState,
) -> Result<EmTable, CaseError> {
    let n = columns.first().map_or(0, |(c, _)| c.len());
    if let Some((_, name)) = columns.iter().find(|(c, _)| c.len() != n) {
        return Err(CaseError::OutOfRange(name));
    }
    bounded((0..n).map(state), crate::limit::EM_MAX_PERF_STATES)
}

/// Column `c`'s value for state `i` (in range once [`table`] checked the lengths).
fn at(c: &Column, i: usize) -> u64 {
    c.get(i).copied().unwrap_or(0)
}

/// A kernel return value: 0 or -EINVAL.
fn errno(r: Result<(), EmError>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(_) => EmError::EINVAL,
    }
}

/// `em_create_perf_table` {cpu_capacity, frequency[], power[], flags_in[]}
/// → {ret, performance[], cost[], flags[]}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmCreatePerfTable {
    /// The CPU's capacity.
    pub cpu_capacity: u64,
    /// Frequencies, kHz, ascending.
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub frequency: Column,
    /// Power, µW.
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub power: Column,
    /// Each state's prior flag word.
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub flags_in: Column,
}

/// `{ret, performance[], cost[], flags[]}`; the lists are absent (null) unless ret is 0.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmCreatePerfTableOut {
    /// 0 or -EINVAL.
    pub ret: i32,
    /// Each state's performance.
    pub performance: Option<Column>,
    /// Each state's cost.
    pub cost: Option<Column>,
    /// Each state's flag word.
    pub flags: Option<Column>,
}

impl Case for EmCreatePerfTable {
    type Out = EmCreatePerfTableOut;
    fn run(&self, _: &str) -> Result<EmCreatePerfTableOut, CaseError> {
        let (f, p, fl) = (&self.frequency, &self.power, &self.flags_in);
        let mut t = table(&[(f, "frequency"), (p, "power"), (fl, "flags_in")], |i| {
            EmPerfState {
                frequency: at(f, i),
                power: at(p, i),
                flags: at(fl, i),
                ..Default::default()
            }
        })?;
        let ret = errno(em_create_perf_table(&mut t, self.cpu_capacity));
        let column = |get: fn(&EmPerfState) -> u64| match ret {
            0 => bounded(t.iter().map(get), crate::limit::EM_MAX_PERF_STATES).map(Some),
            _ => Ok(None),
        };
        Ok(EmCreatePerfTableOut {
            ret,
            performance: column(|s| s.performance)?,
            cost: column(|s| s.cost)?,
            flags: column(|s| s.flags)?,
        })
    }
}

/// `em_cpu_energy` {performance[], cost[], flags[], pd_flags, min_perf_state,
/// max_perf_state, max_util, sum_util, allowed_cpu_cap} → {ret, perf_state}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmCpuEnergy {
    /// Each state's performance.
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub performance: Column,
    /// Each state's cost.
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub cost: Column,
    /// Each state's flag word.
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub flags: Column,
    /// The domain's flags.
    pub pd_flags: u64,
    /// Lowest allowed state.
    pub min_perf_state: usize,
    /// Highest allowed state.
    pub max_perf_state: usize,
    /// Busiest CPU's utilization (headroom applied).
    pub max_util: u64,
    /// Sum of the domain's utilization.
    pub sum_util: u64,
    /// Performance cap.
    pub allowed_cpu_cap: u64,
}

/// `{ret, perf_state}`; `perf_state` is null when no state was looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmCpuEnergyOut {
    /// The energy estimate.
    pub ret: u64,
    /// The chosen state.
    pub perf_state: Option<usize>,
}

impl Case for EmCpuEnergy {
    type Out = EmCpuEnergyOut;
    fn run(&self, _: &str) -> Result<EmCpuEnergyOut, CaseError> {
        let (p, c, fl) = (&self.performance, &self.cost, &self.flags);
        let pd = EmPerfDomain {
            table: table(&[(p, "performance"), (c, "cost"), (fl, "flags")], |i| {
                EmPerfState {
                    performance: at(p, i),
                    cost: at(c, i),
                    flags: at(fl, i),
                    ..Default::default()
                }
            })?,
            flags: self.pd_flags,
            min_perf_state: self.min_perf_state,
            max_perf_state: self.max_perf_state,
        };
        let e = em_cpu_energy(&pd, self.max_util, self.sum_util, self.allowed_cpu_cap);
        Ok(EmCpuEnergyOut {
            ret: e.energy,
            perf_state: e.perf_state,
        })
    }
}

/// `em_update_performance_limits` {frequency[], min_perf_state, max_perf_state,
/// freq_min_khz, freq_max_khz} → {ret, min_perf_state, max_perf_state}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmUpdatePerformanceLimits {
    /// Each state's frequency, kHz (repeats and any order allowed).
    #[serde(deserialize_with = "crate::limit::em_perf_states::list")]
    pub frequency: Column,
    /// Lowest allowed state before the call.
    pub min_perf_state: usize,
    /// Highest allowed state before the call.
    pub max_perf_state: usize,
    /// Lower frequency limit, kHz.
    pub freq_min_khz: u64,
    /// Upper frequency limit, kHz.
    pub freq_max_khz: u64,
}

/// `{ret, min_perf_state, max_perf_state}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmUpdatePerformanceLimitsOut {
    /// 0 or -EINVAL.
    pub ret: i32,
    /// Lowest allowed state after the call.
    pub min_perf_state: usize,
    /// Highest allowed state after the call.
    pub max_perf_state: usize,
}

impl Case for EmUpdatePerformanceLimits {
    type Out = EmUpdatePerformanceLimitsOut;
    fn run(&self, _: &str) -> Result<EmUpdatePerformanceLimitsOut, CaseError> {
        let f = &self.frequency;
        let mut pd = EmPerfDomain {
            table: table(&[(f, "frequency")], |i| EmPerfState {
                frequency: at(f, i),
                ..Default::default()
            })?,
            flags: 0,
            min_perf_state: self.min_perf_state,
            max_perf_state: self.max_perf_state,
        };
        let ret = errno(em_update_performance_limits(
            &mut pd,
            self.freq_min_khz,
            self.freq_max_khz,
        ));
        Ok(EmUpdatePerformanceLimitsOut {
            ret,
            min_perf_state: pd.min_perf_state,
            max_perf_state: pd.max_perf_state,
        })
    }
}
