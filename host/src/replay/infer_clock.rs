// SPDX-License-Identifier: GPL-2.0-only
//! The rq clock a `__schedule()` picks its next task on (kernel/sched/core.c,
//! `__schedule()`; kernel/sched/fair.c, set_next_entity() and sched_balance_newidle() /
//! newidle_balance()).
//!
//! `__schedule()` reads the clock once, before prev's dequeue, but a newly-idle balance
//! between the dequeue and the pick drops the rq lock and updates the clock again
//! (attach_tasks() of a pulled task): set_next_entity() then starts the next task's
//! `exec_start` and updates its signal on that later clock. The two reads are µs apart
//! unless the vCPU is paused in between (under `-icount` QEMU runs one vCPU at a time):
//! 6.1 `mixed-sleep-timer`, cpu1 at 13.8740 s, `frame`'s dequeue, a 1.47 ms pause, then
//! the pull of `tick` whose `sched_stat_runtime` 0.59 ms later chains from the pull's
//! clock, not the dequeue's.

use super::InferReplay;

impl InferReplay {
    /// The trace time of the rq clock a switch on `cpu` whose prev was updated at `ts`
    /// picks its next task on: the replay's last update of that CPU if later (a pull's
    /// attach in the newly-idle balance; [`super::Cpu::clock_read`]).
    pub(super) fn pick_clock(&self, cpu: u32, ts: u64) -> u64 {
        self.cpus
            .get(&cpu)
            .and_then(|c| c.clock_read)
            .map_or(ts, |r| r.max(ts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::{Event, Switch};
    use schedmath::pelt::SchedAvg;

    /// `frame` (pid 7) sleeps on cpu0: its dequeue's update_curr() at 1 ms, then (after a
    /// vCPU pause) a newly-idle pull of `tick` (pid 8) from cpu1 at 2.5 ms, the switch at
    /// 2.51 ms: `tick` starts on the pull's clock, not on the dequeue's.
    #[test]
    fn the_next_task_starts_on_the_pulls_clock() {
        let mut r = crate::replay::infer::tests::on_cpus(&[0, 1]);
        r.current(0, 7, "frame");
        r.current(1, 9, "batch");
        for pid in [7, 8] {
            r.task(pid, "t").avg = Some(SchedAvg::default());
        }
        r.tasks.get_mut(&8).unwrap().on_rq = true;
        r.tasks.get_mut(&8).unwrap().cpu = 1;
        let rt = crate::replay::infer::tests::rt(7);
        let pull = Event::Migrate {
            comm: "tick",
            pid: 8,
            orig_cpu: 1,
            dest_cpu: 0,
        };
        let sw = Event::Switch(Switch {
            prev_comm: "frame",
            prev_pid: 7,
            prev_prio: Some(120),
            prev_state: "S",
            next_comm: "tick",
            next_pid: 8,
            next_prio: Some(120),
        });
        r.event(1_000_000, 0, &rt).unwrap();
        r.event(2_500_000, 0, &pull).unwrap();
        r.event(2_510_000, 0, &sw).unwrap();
        // frame's dequeue stays at its update_curr().
        let lut = |r: &InferReplay, pid| r.tasks[&pid].avg.map(|a| a.last_update_time);
        assert_eq!(lut(&r, 7), Some(1_000_000 / 1024 * 1024));
        assert_eq!(r.cpus[&0].exec, Some((8, 2_500_000)));
        assert_eq!(r.pick_clock(0, 1_000_000), 2_500_000);
        // Without a later read the pick is at prev's update (cpu1's last: the detach).
        assert_eq!(r.pick_clock(1, 3_000_000), 3_000_000);
    }
}
