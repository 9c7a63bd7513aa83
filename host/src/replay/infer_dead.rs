// SPDX-License-Identifier: GPL-2.0-only
//! An exiting task's task_dead_fair() in the inferred replay (kernel/sched/core.c,
//! finish_task_switch(); kernel/sched/fair.c, task_dead_fair()).
//!
//! The task's last `__schedule()` switches away from it with interrupts off;
//! finish_task_switch() re-enables them (finish_lock_switch()) and only then calls the
//! class's `task_dead`, whose remove_entity_load_avg() queues the task's load as removed
//! load of its cfs_rq. A tick that expired during the switch runs in between: its update,
//! and that of the SCHED softirq it raises on irq exit, still see the dead task's load;
//! the cfs_rq's next update after them folds it. The trace shows such a tick as the CPU's
//! first event after the switch, written before task_dead_fair() would have run
//! ([`TASK_DEAD_AFTER_SWITCH`]); without it the task leaves at the CPU's next event.

use std::collections::BTreeMap;

use super::{is_tick, InferReplay};
use crate::trace::event::{Event, PeltCall, PeltCallKind};

/// How long after its last `sched_switch` is written an exiting task's task_dead_fair()
/// runs (ns): its remove_entity_load_avg() sync record comes a median 6.9 µs after the
/// switch (6.4–7.5 µs for most of the 132 exits of the 20 lab captures; re-measure: the
/// dead pid's first `fn=blocked_se` probe record after its `Z`/`X` switch). A tick whose
/// `hrtimer_expire_entry` comes sooner interrupted finish_task_switch() before it.
pub(super) const TASK_DEAD_AFTER_SWITCH: u64 = 7_000;

/// A task switched out dead whose task_dead_fair() has not run yet.
#[derive(Clone, Copy, Debug)]
struct Dead {
    pid: i32,
    /// Trace time of its last `sched_switch`.
    ts: u64,
    /// A tick interrupted finish_task_switch(): its interrupt (and softirq) runs first.
    in_irq: bool,
}

/// Per CPU, the dead task waiting for its task_dead_fair().
#[derive(Default)]
pub(super) struct Dying(BTreeMap<u32, Dead>);

impl InferReplay {
    /// `pid`'s last switch-out on `cpu` at trace time `ts` (it exits): its
    /// task_dead_fair() follows at the CPU's next event, or after a tick that was pending.
    pub(super) fn switched_out_dead(&mut self, cpu: u32, pid: i32, ts: u64) {
        if let Some(d) = self.dying.0.remove(&cpu) {
            self.exit(d.pid);
        }
        let d = Dead {
            pid,
            ts,
            in_irq: false,
        };
        self.dying.0.insert(cpu, d);
    }

    /// Before event `ev` written on `cpu` at `ts` (not an answer-key record): runs the
    /// task_dead_fair() that the kernel has done by then.
    pub(super) fn task_dead_before(&mut self, ts: u64, cpu: u32, ev: &Event<'_>) {
        if self.dying.0.is_empty() {
            return;
        }
        let cpus = &self.cpus;
        let due: Vec<u32> = self
            .dying
            .0
            .iter_mut()
            .filter_map(|(&dcpu, d)| {
                let dcurr = cpus.get(&dcpu).and_then(|c| c.curr).unwrap_or(0);
                (!still_dying(d, (dcpu, dcurr), ts, cpu, ev)).then_some(dcpu)
            })
            .collect();
        for dcpu in due {
            if let Some(d) = self.dying.0.remove(&dcpu) {
                self.exit(d.pid);
            }
        }
    }

    /// Before the answer-key record `c` written on `cpu` at trace time `ts`: a cfs_rq
    /// record of the dying task's CPU written after its task_dead_fair() would have run
    /// (no tick pending) comes after it. Such a record is a clock read no event shows
    /// (6.12 do_idle()'s nohz_run_idle_balance() of a NOHZ_NEWILB_KICK that
    /// sched_balance_newidle() set, before the `cpu_idle` event: 6.12
    /// `periodic-5pct-16ms-2`, cpu0 at 19.978416 s, 16 µs after the exiting `p5`'s last
    /// switch, root util 0 with its removed load folded, ours 74 without).
    pub(super) fn task_dead_before_record(&mut self, ts: u64, cpu: u32, c: &PeltCall<'_>) {
        if c.kind != PeltCallKind::CfsRq || c.cpu != cpu {
            return;
        }
        let Some(&d) = self.dying.0.get(&cpu) else {
            return;
        };
        if d.in_irq || ts <= d.ts + TASK_DEAD_AFTER_SWITCH {
            return;
        }
        self.dying.0.remove(&cpu);
        self.exit(d.pid);
    }
}

/// Whether `d`, dying on `dcpu` (running `dcurr` now), has still not reached
/// task_dead_fair() when `ev` is written on `cpu` at `ts`; notes a tick that interrupts
/// its finish_task_switch().
fn still_dying(d: &mut Dead, (dcpu, dcurr): (u32, i32), ts: u64, cpu: u32, ev: &Event<'_>) -> bool {
    if cpu != dcpu {
        // Another CPU's event: one that reads the dying task's cfs_rq (an enqueue there,
        // update_curr() of its running task, a move) comes after task_dead_fair(), and so
        // does any other once task_dead_fair() would have run without a tick.
        let touches = match *ev {
            Event::Wakeup {
                waking: false,
                target_cpu,
                ..
            } => target_cpu.unwrap_or(cpu) == dcpu,
            Event::Migrate {
                orig_cpu, dest_cpu, ..
            } => orig_cpu == dcpu || dest_cpu == dcpu,
            Event::StatRuntime { pid, .. } => pid == dcurr,
            _ => false,
        };
        return !touches && (d.in_irq || ts <= d.ts + TASK_DEAD_AFTER_SWITCH);
    }
    match *ev {
        Event::HrtimerExpire { function, .. }
            if !d.in_irq && is_tick(function) && ts <= d.ts + TASK_DEAD_AFTER_SWITCH =>
        {
            d.in_irq = true;
            true
        }
        // The tick's own update_curr(), its end, and the softirq on its irq exit.
        Event::StatRuntime { .. } | Event::HrtimerExit | Event::Softirq { .. } => d.in_irq,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::Switch;
    use schedmath::pelt::SchedAvg;
    use schedmath::profile::Profile;

    /// A replay where pid 10 has exited and just been switched out dead on cpu0 at 2 µs
    /// (trace clock = rq clock), its util 500 on the cfs_rq.
    fn dead_at_2us() -> InferReplay {
        let mut r = InferReplay::new(Profile::MAINLINE, None);
        r.current(0, 10, "p25");
        let avg = SchedAvg {
            util_avg: 500,
            util_sum: 500 * 47_742,
            ..SchedAvg::default()
        };
        let c = r.cpus.entry(0).or_default();
        c.offset = Some(0);
        c.cfs = Some(avg);
        if let Some(t) = r.tasks.get_mut(&10) {
            t.avg = Some(avg);
            t.exiting = true;
        }
        let last = Event::Switch(Switch {
            prev_comm: "p25",
            prev_pid: 10,
            prev_prio: Some(120),
            prev_state: "Z",
            next_comm: "p50",
            next_pid: 11,
            next_prio: Some(120),
        });
        r.event(2_000, 0, &last).unwrap();
        r
    }

    fn tick() -> Event<'static> {
        Event::HrtimerExpire {
            function: "tick_sched_timer",
            now: None,
        }
    }

    /// task_dead_fair() has run (a dead shell keeps the counters).
    fn dead(r: &InferReplay) -> bool {
        r.tasks[&10].cpu == u32::MAX
    }

    /// 6.1 `periodic-100ms`, cpu1 at 15.460953 s: the tick that expired during `p25`'s
    /// last switch runs 5.7 µs after it, its update and its softirq's before
    /// task_dead_fair() (whose record comes at 15.461008 s); the load leaves after them.
    #[test]
    fn a_tick_pending_at_the_last_switch_runs_before_task_dead() {
        let mut r = dead_at_2us();
        assert!(!dead(&r));
        let irq = [
            tick(),
            Event::StatRuntime {
                pid: 11,
                runtime: 1,
                vruntime: None,
            },
            Event::HrtimerExit,
            Event::Softirq {
                vec: 7,
                exit: false,
            },
            Event::Softirq { vec: 7, exit: true },
        ];
        for (i, ev) in irq.iter().enumerate() {
            r.event(7_700 + 10_000 * i as u64, 0, ev).unwrap();
            assert!(!dead(&r), "still queued at {ev:?}");
        }
        // Another CPU's event that does not read cpu0's cfs_rq leaves it so.
        r.event(60_000, 1, &Event::HrtimerExit).unwrap();
        assert!(!dead(&r));
        let wake = Event::Wakeup {
            comm: "rcu_preempt",
            pid: 15,
            prio: Some(120),
            target_cpu: Some(0),
            waking: false,
            new: false,
        };
        r.event(70_000, 1, &wake).unwrap();
        assert!(dead(&r), "an enqueue on cpu0 comes after task_dead_fair()");
    }

    /// A tick later than task_dead_fair() would run finds the load already removed.
    #[test]
    fn a_later_tick_comes_after_task_dead() {
        let mut r = dead_at_2us();
        r.event(2_000 + TASK_DEAD_AFTER_SWITCH + 1, 0, &tick())
            .unwrap();
        assert!(dead(&r));
        // Without a tick, any event after task_dead_fair()'s instant shows it done.
        let mut r = dead_at_2us();
        r.event(3_000, 1, &Event::HrtimerExit).unwrap();
        assert!(!dead(&r));
        r.event(2_000 + TASK_DEAD_AFTER_SWITCH + 1, 1, &Event::HrtimerExit)
            .unwrap();
        assert!(dead(&r));
    }
}
