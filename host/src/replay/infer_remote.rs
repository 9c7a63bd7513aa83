// SPDX-License-Identifier: GPL-2.0-only
//! A wake-up onto another CPU in the inferred replay: where its enqueue read the target's
//! clock (kernel/sched/core.c, ttwu_do_activate(); kernel/sched/fair.c, enqueue_entity()
//! and check_preempt_wakeup() / check_preempt_wakeup_fair()).
//!
//! try_to_wake_up() writes `sched_waking`, then takes the target rq's lock and reads its
//! clock; the waker can wait for that lock (or its vCPU stall) for milliseconds before it
//! (6.1 `wakeup-storm`, `rcu_preempt` woken from cpu0 at 14.3210 s, enqueued on cpu1 at
//! 14.3224 s). The enqueue's update_curr() of the target's running task writes that
//! task's `sched_stat_runtime` on the waker's CPU right after the clock read: the
//! enqueue's instant when the trace shows it, else the `sched_waking`'s.

use std::collections::BTreeMap;

use super::{ClockPoint, InferReplay};

/// Per target CPU, the last `sched_stat_runtime` of its running task written on another
/// CPU: (pid, trace time).
#[derive(Default)]
pub(super) struct RemoteUpdateCurr(BTreeMap<u32, (i32, u64)>);

impl InferReplay {
    /// `sched_stat_runtime` of `pid` written on `cpu` at `ts`: if `pid` runs on another
    /// CPU, a remote enqueue there updated it.
    pub(super) fn note_remote_update_curr(&mut self, ts: u64, cpu: u32, pid: i32) {
        let running = self
            .cpus
            .iter()
            .find(|(&c, rq)| c != cpu && rq.curr == Some(pid))
            .map(|(&c, _)| c);
        if let Some(target) = running {
            self.remote.0.insert(target, (pid, ts));
        }
    }

    /// The trace time of the enqueue's clock read of a wake-up onto `target` written on
    /// `cpu` at `ts` whose `sched_waking` (on `cpu`) stands at `waking`.
    pub(super) fn remote_enqueue(&mut self, target: u32, cpu: u32, waking: u64, ts: u64) -> u64 {
        if target == cpu {
            return waking;
        }
        let curr = self.cpus.get(&target).and_then(|c| c.curr);
        match self.remote.0.remove(&target) {
            Some((pid, at)) if Some(pid) == curr && (waking..=ts).contains(&at) => {
                self.at(ClockPoint::Dequeue, at).max(waking)
            }
            _ => waking,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::Event;
    use schedmath::pelt::SchedAvg;
    use schedmath::profile::Profile;

    /// `rcu_preempt` (pid 15) woken from cpu0 onto cpu1, where pid 5 runs: `sched_waking`
    /// at 1 µs, then `between` on cpu0, `sched_wakeup` at 1.41 ms; the wake-up's clock
    /// (the instant the switch it preempts would run at).
    fn enqueue_clock(between: &[Event<'_>]) -> Option<u64> {
        let mut r = InferReplay::new(Profile::MAINLINE, None);
        for cpu in [0, 1] {
            let c = r.cpus.entry(cpu).or_default();
            c.offset = Some(0);
            c.cfs = Some(SchedAvg::default());
        }
        r.current(1, 5, "p50");
        let wake = |waking| Event::Wakeup {
            comm: "rcu_preempt",
            pid: 15,
            prio: Some(120),
            target_cpu: Some(1),
            waking,
            new: false,
        };
        r.event(1_000, 0, &wake(true)).unwrap();
        for ev in between {
            r.event(1_400_000, 0, ev).unwrap();
        }
        r.event(1_410_000, 0, &wake(false)).unwrap();
        r.cpus[&1].skip_clock.map(|(_, at)| at)
    }

    /// 6.1 `wakeup-storm`, 14.3210 s: the waker waited 1.5 ms between `sched_waking` and
    /// the enqueue; the enqueue's update_curr() of cpu1's running task, written on cpu0,
    /// shows its clock read.
    #[test]
    fn a_remote_enqueue_reads_the_clock_at_its_update_curr() {
        assert_eq!(enqueue_clock(&[]), Some(1_000));
        let rt = |pid| Event::StatRuntime {
            pid,
            runtime: 1,
            vruntime: None,
        };
        assert_eq!(enqueue_clock(&[rt(5)]), Some(1_400_000));
        // Another task's update_curr() (not cpu1's running task) says nothing of it.
        assert_eq!(enqueue_clock(&[rt(7)]), Some(1_000));
    }
}
