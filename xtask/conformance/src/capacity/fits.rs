// SPDX-License-Identifier: GPL-2.0-only
//! `fits.jsonl`: capacity margins and the uclamp-aware fitness checks.

use schedmath::capacity::{capacity_greater, fits_capacity, task_fits_cpu, util_fits_cpu};
use serde::{Deserialize, Serialize};

use super::{cpu_capacity, ret_flag, Flag, Ret};
use crate::{Case, CaseError};

/// `fits_capacity` {cap, max} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FitsCapacity {
    /// Utilization.
    pub cap: u64,
    /// Capacity.
    pub max: u64,
}

impl Case for FitsCapacity {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        ret_flag(fits_capacity(self.cap, self.max))
    }
}

/// `capacity_greater` {cap1, cap2} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CapacityGreater {
    /// First capacity.
    pub cap1: u64,
    /// Second capacity.
    pub cap2: u64,
}

impl Case for CapacityGreater {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        ret_flag(capacity_greater(self.cap1, self.cap2))
    }
}

/// `util_fits_cpu` {util, uclamp_min, uclamp_max, uclamp_is_used, capacity_orig,
/// cpu_capacity, hw_load_avg, cpufreq_pressure} → {ret} (1, 0 or -1).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UtilFitsCpu {
    /// Utilization.
    pub util: u64,
    /// uclamp_min hint.
    pub uclamp_min: u64,
    /// uclamp_max hint.
    pub uclamp_max: u64,
    /// `sched_uclamp_used`.
    pub uclamp_is_used: Flag,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `capacity_of(cpu)`.
    pub cpu_capacity: u64,
    /// `hw_load_avg(rq)`.
    pub hw_load_avg: u64,
    /// `cpufreq_get_pressure(cpu)`.
    pub cpufreq_pressure: u64,
}

impl Case for UtilFitsCpu {
    type Out = Ret<i32>;
    fn run(&self, _: &str) -> Result<Ret<i32>, CaseError> {
        let cpu = cpu_capacity(
            self.capacity_orig,
            self.cpu_capacity,
            self.hw_load_avg,
            self.cpufreq_pressure,
        );
        Ok(Ret {
            ret: util_fits_cpu(
                self.util,
                self.uclamp_min,
                self.uclamp_max,
                self.uclamp_is_used.0,
                &cpu,
            ),
        })
    }
}

/// `task_fits_cpu` {util_avg, util_est, uclamp_eff_min, uclamp_eff_max, uclamp_is_used,
/// capacity_orig, cpu_capacity, hw_load_avg, cpufreq_pressure} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskFitsCpu {
    /// `p->se.avg.util_avg`.
    pub util_avg: u64,
    /// `p->se.avg.util_est` (may carry UTIL_AVG_UNCHANGED).
    pub util_est: u32,
    /// `uclamp_eff_value(p, UCLAMP_MIN)`.
    pub uclamp_eff_min: u64,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub uclamp_eff_max: u64,
    /// `sched_uclamp_used`.
    pub uclamp_is_used: Flag,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `capacity_of(cpu)`.
    pub cpu_capacity: u64,
    /// `hw_load_avg(rq)`.
    pub hw_load_avg: u64,
    /// `cpufreq_get_pressure(cpu)`.
    pub cpufreq_pressure: u64,
}

impl Case for TaskFitsCpu {
    type Out = Ret<Flag>;
    fn run(&self, _: &str) -> Result<Ret<Flag>, CaseError> {
        let cpu = cpu_capacity(
            self.capacity_orig,
            self.cpu_capacity,
            self.hw_load_avg,
            self.cpufreq_pressure,
        );
        ret_flag(task_fits_cpu(
            self.util_avg,
            self.util_est,
            self.uclamp_eff_min,
            self.uclamp_eff_max,
            self.uclamp_is_used.0,
            &cpu,
        ))
    }
}
