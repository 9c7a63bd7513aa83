// SPDX-License-Identifier: GPL-2.0-only
//! `normalize.jsonl`: per-CPU capacity from the device tree and the frequency scale
//! (drivers/base/arch_topology.c).

use heapless::Vec;
use schedmath::capacity::topology::{
    topology_normalize_cpu_scale, topology_set_freq_scale, TopologyError, NR_CPUS,
};
use serde::{Deserialize, Serialize};

use super::Flag;
use crate::{Case, CaseError};

/// `topology_normalize_cpu_scale` {nr_cpus, capacity_dmips_mhz[], capacity_freq_ref[]}
/// → {cpu_scale[]}; at most [`NR_CPUS`] CPUs (the core's table size).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopologyNormalizeCpuScale {
    /// Number of CPUs; both lists have one entry per CPU.
    pub nr_cpus: u32,
    /// DT `capacity-dmips-mhz` per CPU.
    #[serde(deserialize_with = "crate::limit::nr_cpus::list")]
    pub capacity_dmips_mhz: Vec<u32, NR_CPUS>,
    /// Reference (max) frequency per CPU, kHz.
    #[serde(deserialize_with = "crate::limit::nr_cpus::list")]
    pub capacity_freq_ref: Vec<u64, NR_CPUS>,
}

/// `{cpu_scale[]}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuScale {
    /// Normalised capacity per CPU.
    pub cpu_scale: Vec<u64, NR_CPUS>,
}

impl Case for TopologyNormalizeCpuScale {
    type Out = CpuScale;
    fn run(&self, _: &str) -> Result<CpuScale, CaseError> {
        let n = self.nr_cpus as usize;
        if self.capacity_dmips_mhz.len() != n {
            return Err(CaseError::OutOfRange("capacity_dmips_mhz"));
        }
        if self.capacity_freq_ref.len() != n {
            return Err(CaseError::OutOfRange("capacity_freq_ref"));
        }
        topology_normalize_cpu_scale(&self.capacity_dmips_mhz, &self.capacity_freq_ref)
            .map(|cpu_scale| CpuScale { cpu_scale })
            .map_err(|e| match e {
                TopologyError::TooManyCpus => CaseError::TooLong(crate::limit::NR_CPUS),
                TopologyError::LengthMismatch => CaseError::OutOfRange("capacity_freq_ref"),
            })
    }
}

/// `topology_set_freq_scale` {prev_freq_scale, cur_freq, max_freq, scale_freq_counters}
/// → {freq_scale}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopologySetFreqScale {
    /// `arch_freq_scale` before the call.
    pub prev_freq_scale: u64,
    /// Current frequency, kHz.
    pub cur_freq: u64,
    /// Max frequency, kHz.
    pub max_freq: u64,
    /// Frequency-invariance counters are in charge.
    pub scale_freq_counters: Flag,
}

/// `{freq_scale}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreqScale {
    /// The new `arch_freq_scale`.
    pub freq_scale: u64,
}

impl Case for TopologySetFreqScale {
    type Out = FreqScale;
    fn run(&self, _: &str) -> Result<FreqScale, CaseError> {
        Ok(FreqScale {
            freq_scale: topology_set_freq_scale(
                self.prev_freq_scale,
                self.cur_freq,
                self.max_freq,
                self.scale_freq_counters.0,
            ),
        })
    }
}
