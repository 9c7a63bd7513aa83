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
//!
//! A kick that reaches an idle CPU whose own tick is due: the tick's interrupt nests in
//! __do_softirq() between its local_irq_enable() and the first handler, so the trace
//! shows the tick, the kick's SCHED softirq (nohz_idle_balance() true, no walk of this
//! CPU but update_nohz_stats()'s), then a second SCHED softirq at once: the tick's raise
//! (trigger_load_balance()) restarts the loop, and with `rq->nohz_idle_balance` cleared
//! that one walks. 6.1 `wakeup-storm-2`, cpu1 at 12.6650 s: cpu0's busy tick at
//! 12.6648 s, cpu1's idle tick, a 4 µs softirq without a record, then one with the root's.

use std::collections::BTreeSet;

use super::ahead::Next;
use super::InferReplay;
use crate::trace::event::Event;

/// The idle CPUs whose last event is their `cpu_idle` entry.
#[derive(Default)]
pub(super) struct Kicked(BTreeSet<u32>);

impl InferReplay {
    /// After event `ev` written on `cpu` (not an answer-key line).
    pub(super) fn kick_event(&mut self, cpu: u32, ev: &Event<'_>) {
        if matches!(ev, Event::PeltCall(_)) || super::is_answer_key(ev) {
            return;
        }
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

    /// Whether the SCHED softirq now entered on the idle `cpu` (at trace time `ts`) is
    /// followed at once by another (its exit, then a SCHED `softirq_entry`): the first is
    /// a kick's (see the module's comment).
    pub(super) fn kick_before_tick(&mut self, cpu: u32, ts: u64) -> bool {
        let idle = self.cpus.get(&cpu).and_then(|c| c.curr) == Some(0);
        idle && matches!(self.ahead_nth_on(ts, cpu, 0), Some((_, Next::Other)))
            && matches!(self.ahead_nth_on(ts, cpu, 1), Some((_, Next::SchedSoftirq)))
    }
}
