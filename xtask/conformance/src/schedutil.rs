// SPDX-License-Identifier: GPL-2.0-only
//! Cases of `fixtures/kernel/schedutil/` (see that folder's README for every field).
//!
//! The pure helpers of `map.jsonl` and the table searches of `resolve_freq.jsonl` are
//! [`Case`]s here; the governor sequences (`next_freq`, `iowait`, `single_freq` and
//! `shared_freq`) are in [`governor`].
//!
//! Wire shapes: a frequency table is `table` (kHz) plus an optional parallel `flags`, each
//! a `heapless::Vec` of the core's [`CPUFREQ_TABLE_MAX`] entries, so a longer table is
//! refused when the case is read. Inputs that several functions share (the table fields,
//! a core struct such as [`SugovRq`]) are one struct paired with each case's own fields
//! by [`Flat`] (postcard cannot read `flatten`) and turned into core types by one helper.

use schedmath::capacity::{effective_cpu_util, EffectiveUtilInput};
use schedmath::cpufreq::{
    cpufreq_driver_resolve_freq, cpufreq_frequency_table_target, set_freq_table_sorted,
    table_frequency, CpufreqFrequencyTable, CpufreqPolicy, FreqTable, FreqTableSorted,
    CPUFREQ_TABLE_MAX,
};
use schedmath::schedutil::{
    get_capacity_ref_freq, map_util_freq, map_util_perf, sugov_effective_cpu_perf, sugov_get_util,
    SugovCpu, SugovEnv, SugovRq,
};
use schedmath::uclamp::uclamp_rq_is_capped;
use serde::{Deserialize, Serialize};

use crate::capacity::Ret;
use crate::flat::Flat;
use crate::{Case, CaseError};

pub mod governor;

/// A fixture's `table` or `flags` list, at most [`CPUFREQ_TABLE_MAX`] entries.
pub type TableList = heapless::Vec<u32, CPUFREQ_TABLE_MAX>;

/// `table` + `flags` as a core table; absent `flags` are all 0.
pub fn freq_table(table: &[u32], flags: Option<&[u32]>) -> Result<FreqTable, CaseError> {
    if flags.is_some_and(|f| f.len() != table.len()) {
        return Err(CaseError::OutOfRange("flags"));
    }
    let mut out = FreqTable::new();
    for (i, &frequency) in table.iter().enumerate() {
        let flags = flags.and_then(|f| f.get(i).copied()).unwrap_or(0);
        out.push(CpufreqFrequencyTable { flags, frequency })
            .map_err(|_| CaseError::TooLong(crate::limit::CPUFREQ_TABLE_MAX))?;
    }
    Ok(out)
}

/// The table fields every table-using input carries, read once and paired with the
/// case's own fields by [`Flat`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableIn {
    /// Frequencies (kHz); `None` for a driver without a table.
    #[serde(default, deserialize_with = "crate::limit::cpufreq_table::opt_list")]
    pub table: Option<TableList>,
    /// Entry flags, parallel to `table`.
    #[serde(default, deserialize_with = "crate::limit::cpufreq_table::opt_list")]
    pub flags: Option<TableList>,
    /// `freq_table_sorted` (0, 1 or 2).
    pub freq_table_sorted: u32,
    /// `efficiencies_available`.
    pub efficiencies_available: bool,
}

impl TableIn {
    /// A policy with this table and the given limits (other fields zero).
    pub fn policy(&self, min: u32, max: u32) -> Result<CpufreqPolicy, CaseError> {
        let freq_table = match &self.table {
            Some(t) => Some(freq_table(t, self.flags.as_ref().map(|f| f.as_slice()))?),
            None => None,
        };
        let freq_table_sorted = FreqTableSorted::from_u32(self.freq_table_sorted)
            .ok_or(CaseError::OutOfRange("freq_table_sorted"))?;
        Ok(CpufreqPolicy {
            freq_table,
            freq_table_sorted,
            efficiencies_available: self.efficiencies_available,
            min,
            max,
            ..Default::default()
        })
    }
}

// ---------------------------------------------------------------------------------------
// map.jsonl

/// `map_util_perf` {util} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MapUtilPerf {
    /// Utilization.
    pub util: u64,
}

impl Case for MapUtilPerf {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: map_util_perf(self.util),
        })
    }
}

/// `map_util_freq` {util, freq, cap} → {ret}; `cap` 0 (the kernel's divide fault) is
/// refused.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MapUtilFreq {
    /// Utilization.
    pub util: u64,
    /// Reference frequency (kHz).
    pub freq: u64,
    /// Capacity.
    pub cap: u64,
}

impl Case for MapUtilFreq {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        let ret =
            map_util_freq(self.util, self.freq, self.cap).ok_or(CaseError::OutOfRange("cap"))?;
        Ok(Ret { ret })
    }
}

/// `sugov_effective_cpu_perf` {actual, min, max} → {ret} (the kernel's `cpu` argument is
/// unused, so the input's `cpu` is not read).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SugovEffectiveCpuPerf {
    /// Utilization before the headroom.
    pub actual: u64,
    /// Floor.
    pub min: u64,
    /// Ceiling.
    pub max: u64,
}

impl Case for SugovEffectiveCpuPerf {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: sugov_effective_cpu_perf(self.actual, self.min, self.max),
        })
    }
}

/// `get_capacity_ref_freq` {arch_freq_ref, freq_invariant, cur, cpuinfo_max_freq} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GetCapacityRefFreq {
    /// `arch_scale_freq_ref()` (0 = none).
    pub arch_freq_ref: u64,
    /// `arch_scale_freq_invariant()`.
    pub freq_invariant: bool,
    /// `policy->cur`.
    pub cur: u32,
    /// `policy->cpuinfo.max_freq`.
    pub cpuinfo_max_freq: u32,
}

impl Case for GetCapacityRefFreq {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        let policy = CpufreqPolicy {
            cur: self.cur,
            cpuinfo_max_freq: self.cpuinfo_max_freq,
            ..Default::default()
        };
        let env = SugovEnv {
            freq_invariant: self.freq_invariant,
            arch_freq_ref: self.arch_freq_ref,
            ..Default::default()
        };
        Ok(Ret {
            ret: get_capacity_ref_freq(&policy, &env),
        })
    }
}

/// `effective_cpu_util`'s return value and both out-params.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectiveCpuUtilOut {
    /// Return value.
    pub ret: u64,
    /// `*min`.
    pub min: u64,
    /// `*max`.
    pub max: u64,
}

/// `schedutil/effective_cpu_util`: the fixture's `in` is the core's input as is.
impl Case for EffectiveUtilInput {
    type Out = EffectiveCpuUtilOut;
    fn run(&self, _: &str) -> Result<EffectiveCpuUtilOut, CaseError> {
        let r = effective_cpu_util(self);
        Ok(EffectiveCpuUtilOut {
            ret: r.ret,
            min: r.min,
            max: r.max,
        })
    }
}

/// `uclamp_rq_is_capped` {uclamp_used, util_cfs, util_rt, uclamp_max} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UclampRqIsCapped {
    /// `uclamp_is_used()`.
    pub uclamp_used: bool,
    /// `cpu_util_cfs()`.
    pub util_cfs: u64,
    /// `cpu_util_rt()`.
    pub util_rt: u64,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    pub uclamp_max: u64,
}

impl Case for UclampRqIsCapped {
    type Out = Ret<bool>;
    fn run(&self, _: &str) -> Result<Ret<bool>, CaseError> {
        Ok(Ret {
            ret: uclamp_rq_is_capped(
                self.uclamp_used,
                self.util_cfs,
                self.util_rt,
                self.uclamp_max,
            ),
        })
    }
}

/// `sugov_get_util`'s field beside its rq inputs.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct GetUtilArgs {
    /// The iowait boost in capacity units.
    pub boost: u64,
}

/// `sugov_get_util` {rq inputs ([`SugovRq`], flat, `uclamp_used` among them), boost} →
/// {util, bw_min}.
pub type SugovGetUtil = Flat<SugovRq, GetUtilArgs>;

/// `sg_cpu->util` and `sg_cpu->bw_min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SugovGetUtilOut {
    /// `sg_cpu->util`.
    pub util: u64,
    /// `sg_cpu->bw_min`.
    pub bw_min: u64,
}

impl Case for SugovGetUtil {
    type Out = SugovGetUtilOut;
    fn run(&self, _: &str) -> Result<SugovGetUtilOut, CaseError> {
        let Flat(rq, args) = self;
        let env = SugovEnv {
            uclamp_used: rq.uclamp_used,
            ..Default::default()
        };
        let mut sg_cpu = SugovCpu::default();
        sugov_get_util(&mut sg_cpu, rq, &env, args.boost);
        Ok(SugovGetUtilOut {
            util: sg_cpu.util,
            bw_min: sg_cpu.bw_min,
        })
    }
}

// ---------------------------------------------------------------------------------------
// resolve_freq.jsonl

/// `set_freq_table_sorted` {table} → {ret, freq_table_sorted}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetFreqTableSorted {
    /// Frequencies (kHz).
    #[serde(deserialize_with = "crate::limit::cpufreq_table::list")]
    pub table: TableList,
}

/// The return value and the classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetFreqTableSortedOut {
    /// 0 or `-EINVAL`.
    pub ret: i32,
    /// `policy->freq_table_sorted` (0, 1 or 2).
    pub freq_table_sorted: u32,
}

impl Case for SetFreqTableSorted {
    type Out = SetFreqTableSortedOut;
    fn run(&self, _: &str) -> Result<SetFreqTableSortedOut, CaseError> {
        let mut policy = CpufreqPolicy {
            freq_table: Some(freq_table(&self.table, None)?),
            ..Default::default()
        };
        let ret = set_freq_table_sorted(&mut policy);
        Ok(SetFreqTableSortedOut {
            ret,
            freq_table_sorted: policy.freq_table_sorted.as_u32(),
        })
    }
}

/// `cpufreq_frequency_table_target`'s fields beside the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableTargetArgs {
    /// Target (kHz).
    pub target_freq: u32,
    /// Lower limit passed in.
    pub min: u32,
    /// Upper limit passed in.
    pub max: u32,
    /// `CPUFREQ_RELATION_*`, optionally with E.
    pub relation: u32,
}

/// `cpufreq_frequency_table_target` {table fields, target_freq, min, max, relation} →
/// {ret, frequency, warn}.
pub type CpufreqFrequencyTableTarget = Flat<TableIn, TableTargetArgs>;

/// The index, its frequency and the WARN count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableTargetOut {
    /// The index.
    pub ret: i32,
    /// `table[ret].frequency` (INVALID when out of the table).
    pub frequency: u32,
    /// WARNs hit.
    pub warn: u32,
}

impl Case for CpufreqFrequencyTableTarget {
    type Out = TableTargetOut;
    fn run(&self, _: &str) -> Result<TableTargetOut, CaseError> {
        let Flat(table, a) = self;
        let policy = table.policy(a.min, a.max)?;
        let r = cpufreq_frequency_table_target(&policy, a.target_freq, a.min, a.max, a.relation);
        Ok(TableTargetOut {
            ret: r.idx,
            frequency: table_frequency(policy.freq_table.as_deref().unwrap_or(&[]), r.idx),
            warn: u32::from(r.warn),
        })
    }
}

/// `cpufreq_driver_resolve_freq`'s fields beside the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResolveFreqArgs {
    /// `policy->min`.
    pub policy_min: u32,
    /// `policy->max`.
    pub policy_max: u32,
    /// Target (kHz).
    pub target_freq: u32,
}

/// `cpufreq_driver_resolve_freq` {table fields, policy_min, policy_max, target_freq} →
/// {ret, cached_target_freq, cached_resolved_idx}.
pub type CpufreqDriverResolveFreq = Flat<TableIn, ResolveFreqArgs>;

/// The resolved frequency and the policy's cache after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveFreqOut {
    /// Resolved frequency.
    pub ret: u32,
    /// `policy->cached_target_freq`.
    pub cached_target_freq: u32,
    /// `policy->cached_resolved_idx`.
    pub cached_resolved_idx: u32,
}

impl Case for CpufreqDriverResolveFreq {
    type Out = ResolveFreqOut;
    fn run(&self, _: &str) -> Result<ResolveFreqOut, CaseError> {
        let Flat(table, a) = self;
        let mut policy = table.policy(a.policy_min, a.policy_max)?;
        let ret = cpufreq_driver_resolve_freq(&mut policy, a.target_freq);
        Ok(ResolveFreqOut {
            ret,
            cached_target_freq: policy.cached_target_freq,
            cached_resolved_idx: policy.cached_resolved_idx,
        })
    }
}
