// SPDX-License-Identifier: GPL-2.0-only
//! `scale_rt_capacity.jsonl`: capacity left to CFS, pressures and the capacity check.

use schedmath::capacity::topology::{cpufreq_update_pressure, topology_update_hw_pressure};
use schedmath::capacity::{
    check_cpu_capacity, get_actual_cpu_capacity, scale_rt_capacity, update_cpu_capacity,
    RqPressureUtil,
};
use serde::{Deserialize, Serialize};

use super::{cpu_capacity, ret_flag, Flag, Ret};
use crate::{Case, CaseError};

/// `scale_rt_capacity` {capacity_orig, hw_load_avg, cpufreq_pressure, rt_util_avg,
/// dl_util_avg, irq_util_avg} → {get_actual_cpu_capacity, ret, cpu_capacity}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScaleRtCapacity {
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `hw_load_avg(rq)`.
    pub hw_load_avg: u64,
    /// `cpufreq_get_pressure(cpu)`.
    pub cpufreq_pressure: u64,
    /// `rq->avg_rt.util_avg`.
    pub rt_util_avg: u64,
    /// `rq->avg_dl.util_avg`.
    pub dl_util_avg: u64,
    /// `rq->avg_irq.util_avg`.
    pub irq_util_avg: u64,
}

/// `{get_actual_cpu_capacity, ret, cpu_capacity}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleRtCapacityOut {
    /// `get_actual_cpu_capacity()`.
    pub get_actual_cpu_capacity: u64,
    /// `scale_rt_capacity()`.
    pub ret: u64,
    /// What `update_cpu_capacity()` stores in `rq->cpu_capacity`.
    pub cpu_capacity: u64,
}

impl Case for ScaleRtCapacity {
    type Out = ScaleRtCapacityOut;
    fn run(&self, _: &str) -> Result<ScaleRtCapacityOut, CaseError> {
        // capacity_of() is not an input here; nothing below reads it.
        let cpu = cpu_capacity(
            self.capacity_orig,
            self.capacity_orig,
            self.hw_load_avg,
            self.cpufreq_pressure,
        );
        let rq = RqPressureUtil {
            rt_util_avg: self.rt_util_avg,
            dl_util_avg: self.dl_util_avg,
            irq_util_avg: self.irq_util_avg,
        };
        Ok(ScaleRtCapacityOut {
            get_actual_cpu_capacity: get_actual_cpu_capacity(&cpu),
            ret: scale_rt_capacity(&cpu, &rq),
            cpu_capacity: update_cpu_capacity(&cpu, &rq),
        })
    }
}

/// `topology_update_hw_pressure` {capacity_orig, capacity_freq_ref, capped_freq}
/// → {hw_pressure}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopologyUpdateHwPressure {
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// Reference frequency, kHz.
    pub capacity_freq_ref: u64,
    /// Capped frequency, kHz.
    pub capped_freq: u64,
}

/// `{hw_pressure}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwPressure {
    /// Capacity lost to the cap.
    pub hw_pressure: u64,
}

impl Case for TopologyUpdateHwPressure {
    type Out = HwPressure;
    fn run(&self, _: &str) -> Result<HwPressure, CaseError> {
        Ok(HwPressure {
            hw_pressure: topology_update_hw_pressure(
                self.capacity_orig,
                self.capacity_freq_ref,
                self.capped_freq,
            ),
        })
    }
}

/// `cpufreq_update_pressure` {capacity_orig, capacity_freq_ref, policy_max}
/// → {cpufreq_pressure}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CpufreqUpdatePressure {
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// Reference frequency, kHz.
    pub capacity_freq_ref: u64,
    /// `policy->max` (an unsigned int), kHz.
    pub policy_max: u32,
}

/// `{cpufreq_pressure}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpufreqPressure {
    /// Capacity lost to the policy max.
    pub cpufreq_pressure: u64,
}

impl Case for CpufreqUpdatePressure {
    type Out = CpufreqPressure;
    fn run(&self, _: &str) -> Result<CpufreqPressure, CaseError> {
        Ok(CpufreqPressure {
            cpufreq_pressure: cpufreq_update_pressure(
                self.capacity_orig,
                self.capacity_freq_ref,
                self.policy_max,
            ),
        })
    }
}

/// `check_cpu_capacity` {capacity_orig, cpu_capacity, imbalance_pct} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckCpuCapacity {
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `capacity_of(cpu)`.
    pub cpu_capacity: u64,
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
}

impl Case for CheckCpuCapacity {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        ret_flag(check_cpu_capacity(
            self.capacity_orig,
            self.cpu_capacity,
            self.imbalance_pct,
        ))
    }
}
