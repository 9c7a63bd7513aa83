// SPDX-License-Identifier: GPL-2.0-only
//! A platform's idle states as the cpuidle core sees them: the `schedmath idle` replay
//! and the simulator's per-CPU governors both take their tables from here.

use schedmath::cpuidle::{CpuidleState, CPUIDLE_FLAG_POLLING, CPUIDLE_FLAG_TIMER_STOP};

use super::Platform;

/// One idle state of a CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleStateSpec {
    /// Display name (`WFI`, `cpu-sleep`, ...).
    pub name: String,
    /// Exit latency, target residency and flags.
    pub state: CpuidleState,
}

/// The idle states of `cpu` on a loaded platform (µs → ns as the cpuidle core does).
pub fn platform_states(p: &Platform, cpu: usize) -> Vec<IdleStateSpec> {
    p.idle_states_of(cpu)
        .into_iter()
        .map(|s| IdleStateSpec {
            name: s.name.clone(),
            state: CpuidleState {
                exit_latency_ns: i64::from(s.exit_latency_us) * 1000,
                target_residency_ns: i64::from(s.target_residency_us) * 1000,
                flags: if s.flags.polling {
                    CPUIDLE_FLAG_POLLING
                } else {
                    0
                } | if s.flags.timer_stop {
                    CPUIDLE_FLAG_TIMER_STOP
                } else {
                    0
                },
            },
        })
        .collect()
}
