// SPDX-License-Identifier: GPL-2.0-only
//! Whether a SCHED softirq's periodic balance runs load_balance() (kernel/sched/fair.c,
//! rebalance_domains()), and so rewrites the root domain's overload flag
//! (update_sd_lb_stats()) that decides the next newly-idle balance ([`super::newidle`]).
//!
//! rebalance_domains() balances a domain only once `jiffies` reaches its `last_balance`
//! plus get_sd_balance_interval(): `balance_interval` (the lab's 2-CPU MC domain: 2 ms,
//! doubled up to 4 ms while balanced) times `busy_factor` (16) on a CPU that is not idle,
//! less one jiffy; at least one jiffy on an idle CPU. The tick raises the softirq once
//! `rq->next_balance` is due, and newidle_balance() pulls `next_balance` to the idle
//! interval, so a CPU busy again by its next tick runs the softirq without balancing
//! (6.1 `mixed-sleep-timer-2`, cpu1 at 12.6729 s: `frame` pulled by a newly-idle
//! balance that saw cpu0 overloaded; the softirq on the busy cpu1 after it left the
//! flag set, and cpu1's next idle entry at 12.6754 s walked the blocked averages).

use std::collections::BTreeMap;

use super::InferReplay;

/// The shortest busy interval in jiffies: 2 ms × 16 = 32 ms, 8 jiffies at HZ 250, less
/// one.
const BUSY_JIFFIES: u64 = 7;

/// Per CPU, the trace time of its last periodic load_balance() (`sd->last_balance`), and
/// the tick length (ns; 0 until meta.json gives HZ: [`crate::replay::DEFAULT_HZ`]'s).
#[derive(Default)]
pub(super) struct Rebalance {
    last: BTreeMap<u32, u64>,
    pub(super) tick: u64,
}

/// TICK_NSEC at [`crate::replay::DEFAULT_HZ`].
const DEFAULT_TICK: u64 = 1_000_000_000 / crate::replay::DEFAULT_HZ as u64;

impl InferReplay {
    /// The SCHED softirq on `cpu` at trace time `ts`: whether its rebalance_domains()
    /// runs load_balance() (an idle CPU's always; a busy CPU's once its busy interval
    /// since its last one has passed).
    pub(super) fn periodic_balance(&mut self, cpu: u32, ts: u64) -> bool {
        let idle = self.cpus.get(&cpu).and_then(|c| c.curr) == Some(0);
        let tick = match self.rebalance.tick {
            0 => DEFAULT_TICK,
            t => t,
        };
        let due = match self.rebalance.last.get(&cpu) {
            Some(&last) if !idle => (ts.saturating_sub(last) + tick / 2) / tick >= BUSY_JIFFIES,
            _ => true,
        };
        if due {
            self.rebalance.last.insert(cpu, ts);
        }
        due
    }
}
