// SPDX-License-Identifier: GPL-2.0-only
//! A platform's frequency domain as a cpufreq policy under schedutil: its frequency table,
//! cpuinfo limits, rate limit and capacity. The `governor` replay and the simulator both
//! start their schedutil policies here, so they agree.

use schedmath::cpufreq::{
    cpufreq_policy_transition_delay_us, set_freq_table_sorted, CpufreqFrequencyTable,
    CpufreqPolicy, FreqTable, CPUFREQ_TABLE_MAX,
};
use schedmath::schedutil::{sugov_start, SugovPolicy};

use super::Platform;

/// A policy that cannot be driven.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("policy {policy}: {msg}")]
pub struct PolicyError {
    /// Its name.
    pub policy: String,
    /// What is wrong.
    pub msg: String,
}

/// One cpufreq policy as the replay needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GovernorPolicy {
    /// What to call it in reports (e.g. `policy0 (cpu0-3)`).
    pub name: String,
    /// The frequency table in kHz, in the driver's order (OPPs).
    pub freqs_khz: Vec<u32>,
    /// `cpuinfo.min_freq` in kHz (the policy's initial `min`).
    pub cpuinfo_min_freq: u32,
    /// `cpuinfo.max_freq` in kHz: the reference frequency of a frequency-invariant system.
    pub cpuinfo_max_freq: u32,
    /// schedutil's `rate_limit_us`.
    pub rate_limit_us: u32,
    /// `arch_scale_cpu_capacity()` of the policy's CPUs.
    pub capacity: u64,
}

impl GovernorPolicy {
    /// A policy over `freqs_khz` with cpuinfo limits from the table's extremes.
    pub fn from_table(name: &str, freqs_khz: &[u32], rate_limit_us: u32, capacity: u64) -> Self {
        Self {
            name: name.to_string(),
            freqs_khz: freqs_khz.to_vec(),
            cpuinfo_min_freq: freqs_khz.iter().copied().min().unwrap_or(0),
            cpuinfo_max_freq: freqs_khz.iter().copied().max().unwrap_or(0),
            rate_limit_us,
            capacity,
        }
    }

    /// Frequency domain `n` of `platform` as a cpufreq policy: its OPPs, capacity and
    /// the rate limit `cpufreq_policy_transition_delay_us()` derives from its transition
    /// latency (1 ms when the file gives none).
    pub fn from_platform(platform: &Platform, n: usize) -> Result<Self, PolicyError> {
        let d = platform.domains.get(n).ok_or_else(|| PolicyError {
            policy: n.to_string(),
            msg: format!(
                "{} has {} frequency domains (policies 0..{})",
                platform.origin,
                platform.domains.len(),
                platform.domains.len().saturating_sub(1)
            ),
        })?;
        let name = format!("{n} `{}` of {}", d.name, platform.name);
        let freqs_khz = d
            .opps
            .iter()
            .map(|o| {
                u32::try_from(o.khz).map_err(|_| PolicyError {
                    policy: name.clone(),
                    msg: format!("OPP {} kHz does not fit cpufreq's unsigned int", o.khz),
                })
            })
            .collect::<Result<Vec<u32>, _>>()?;
        let rate_limit_us =
            cpufreq_policy_transition_delay_us(0, d.transition_latency_ns.unwrap_or(0));
        Ok(Self::from_table(
            &name,
            &freqs_khz,
            rate_limit_us,
            d.capacity,
        ))
    }

    /// The cpufreq policy (fast switch) and started governor state.
    pub fn sugov(&self) -> Result<SugovPolicy, PolicyError> {
        let bad = |msg: String| PolicyError {
            policy: self.name.clone(),
            msg,
        };
        if self.freqs_khz.is_empty() {
            return Err(bad("empty frequency table".into()));
        }
        if self.capacity == 0 {
            return Err(bad("capacity 0".into()));
        }
        let mut table = FreqTable::new();
        for &frequency in &self.freqs_khz {
            table
                .push(CpufreqFrequencyTable {
                    flags: 0,
                    frequency,
                })
                .map_err(|_| {
                    bad(format!(
                        "{} frequencies, at most {CPUFREQ_TABLE_MAX}",
                        self.freqs_khz.len()
                    ))
                })?;
        }
        let mut policy = CpufreqPolicy {
            freq_table: Some(table),
            min: self.cpuinfo_min_freq,
            max: self.cpuinfo_max_freq,
            cur: self.cpuinfo_min_freq,
            cpuinfo_min_freq: self.cpuinfo_min_freq,
            cpuinfo_max_freq: self.cpuinfo_max_freq,
            fast_switch_enabled: true,
            ..Default::default()
        };
        if set_freq_table_sorted(&mut policy) != 0 {
            return Err(bad("duplicate frequencies in the table".into()));
        }
        let mut sg = SugovPolicy {
            policy,
            ..Default::default()
        };
        sugov_start(&mut sg, self.rate_limit_us, &mut []);
        Ok(sg)
    }
}
