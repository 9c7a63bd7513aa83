// SPDX-License-Identifier: GPL-2.0-only
//! The SCHED softirq of an idle CPU woken by the nohz idle-balance kick (kernel/sched/
//! fair.c kick_ilb() -> core.c nohz_csd_func() raises SCHED_SOFTIRQ;
//! sched_balance_softirq() (6.1: run_rebalance_domains()) -> nohz_idle_balance()).
//!
//! A busy CPU's tick kicks a tickless idle CPU by IPI when `nohz.next_balance` is due
//! (NOHZ_BALANCE_KICK) or `nohz.next_blocked` (NOHZ_STATS_KICK, every LOAD_AVG_PERIOD).
//! The kicked CPU runs the softirq on the IPI's exit from inside its idle state (its last
//! event the `cpu_idle` entry, no tick's `hrtimer_expire_*` since; the `cpu_idle` exit
//! comes after the softirq), and the softirq runs
//! nohz_idle_balance(), which returns true: the softirq skips its own
//! sched_balance_update_blocked_averages(); only a stats kick updates blocked averages
//! (update_nohz_stats() of the idle CPUs). On the `-2` captures 6.12 `periodic-50pct-16ms-2`
//! has 186 such softirqs without a root record of their CPU and 4 with one (a softirq
//! after the CPU's own tick: 220 of 220 with one).

use std::collections::BTreeSet;

use super::InferReplay;
use crate::trace::event::Event;

/// The idle CPUs whose last event is their `cpu_idle` entry.
#[derive(Default)]
pub(super) struct Kicked(BTreeSet<u32>);

impl InferReplay {
    /// After event `ev` written on `cpu` (not an answer-key line).
    pub(super) fn kick_event(&mut self, cpu: u32, ev: &Event<'_>) {
        let idle = self.cpus.get(&cpu).and_then(|c| c.curr) == Some(0);
        match *ev {
            Event::CpuIdle { state, .. } if state != u64::from(u32::MAX) && idle => {
                self.kicked.0.insert(cpu);
            }
            _ => {
                self.kicked.0.remove(&cpu);
            }
        }
    }

    /// Whether the SCHED softirq now entered on `cpu` is a kicked idle balance's.
    pub(super) fn kicked_softirq(&self, cpu: u32) -> bool {
        self.kicked.0.contains(&cpu)
    }
}
