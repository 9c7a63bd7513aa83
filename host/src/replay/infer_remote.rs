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
//!
//! A wake-up onto the waker's own CPU runs the same update_curr() there: the waker can
//! wait for the wakee to finish switching out on its old CPU (`p->on_cpu`) before it
//! locks the rq and reads the clock (6.1 `wakeup-storm`, cpu1 at 14.3207 s: `storm`'s
//! `sched_waking` of `rt-app`, its enqueue's `sched_stat_runtime` 92 µs later, whose
//! `runtime=` chains to the kernel's read to the ns; the waking's point lay 83 µs earlier:
//! `rt-app` util 3 low). Its `runtime=`, chained from the running task's `exec_start`,
//! gives that read wherever it lies between the `sched_waking` and the stat's own point
//! (6.12 `oversubscribed-2`, cpu0 at 20.0243 s: `rcu_preempt` woken from an interrupt on
//! `busy`, moved from cpu1, its enqueue's read 22 µs after the `sched_waking`, which the
//! chain gives to the ns; the waking's instant was 14 µs early and `busy`'s put_prev on
//! that skipped clock with it). Without a chain only a read well past the waking's
//! (`SKIP_SLACK`) moves it: the stat's point is calibrated on dequeues, whose path differs
//! (6.1 `mixed-sleep-timer-2`: 1.44 µs late on the wake-ups without a wait).
//!
//! Likewise a balance's pull: its dequeue of the moved task on the source CPU runs
//! update_curr() of the source's running task, written on the pulling CPU.

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
    /// `cpu` at `ts` whose `sched_waking` (on `cpu`) stands at `waking`; `local`: the
    /// stamp of the `sched_stat_runtime` `cpu`'s running task wrote there since the CPU's
    /// last sched event ([`super::ScheduleMark::running_update`]).
    pub(super) fn remote_enqueue(
        &mut self,
        target: u32,
        cpu: u32,
        (waking, ts): (u64, u64),
        local: Option<u64>,
    ) -> u64 {
        if target == cpu {
            // A wake-up onto the waker's own CPU: enqueue_entity()'s update_curr() of the
            // running task, written between `sched_waking` and `sched_wakeup`, follows the
            // clock read as closely (the waker can wait for the wakee's `on_cpu` first).
            return match local {
                Some(at) if (waking..=ts).contains(&at) => {
                    let read = self.at(ClockPoint::Dequeue, at);
                    let curr = self.cpus.get(&cpu).and_then(|c| c.curr);
                    if let Some(ch) = curr.and_then(|p| self.chained_read(cpu, p, read)) {
                        if (waking..=read).contains(&ch) {
                            return ch;
                        }
                    }
                    if read > waking + super::SKIP_SLACK {
                        read
                    } else {
                        waking
                    }
                }
                _ => waking,
            };
        }
        let curr = self.cpus.get(&target).and_then(|c| c.curr);
        match self.remote.0.remove(&target) {
            Some((pid, at)) if Some(pid) == curr && (waking..=ts).contains(&at) => {
                self.at(ClockPoint::Dequeue, at).max(waking)
            }
            _ => waking,
        }
    }

    /// The trace time of the dequeue's clock read of a queued task a balance on `to`
    /// moves from `from` (`sched_migrate_task` written on `to` at `ts`): load_balance()
    /// reads `from`'s clock once, then detach_task()'s dequeue runs update_curr() of
    /// `from`'s running task, written on `to` (6.12 `oversubscribed`, `busy` pulled at
    /// 17.3845 s: that `sched_stat_runtime` 24 µs before the event); else `ts`.
    pub(super) fn pull_dequeue(&self, from: u32, ts: u64) -> u64 {
        let curr = self.cpus.get(&from).and_then(|c| c.curr);
        match self.remote.0.get(&from) {
            Some(&(pid, at)) if Some(pid) == curr && at <= ts && ts - at <= PULL_WINDOW => {
                self.at(ClockPoint::Dequeue, at).min(ts)
            }
            _ => ts,
        }
    }
}

/// How long (ns) before a pull's `sched_migrate_task` the source's update_curr() can be
/// written and still be that pull's dequeue: a balance detaches its tasks within tens of
/// µs of its clock read.
const PULL_WINDOW: u64 = 100_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::infer::tests::rt;
    use crate::trace::event::Event;
    use schedmath::profile::Profile;

    /// `rcu_preempt` (pid 15) woken from cpu0 onto cpu1, where pid 5 runs: `sched_waking`
    /// at 1 µs, then `between` on cpu0, `sched_wakeup` at 1.41 ms; the wake-up's clock
    /// (the instant the switch it preempts would run at).
    fn enqueue_clock(between: &[Event<'_>]) -> Option<u64> {
        enqueue_clock_from(0, between)
    }

    /// [`enqueue_clock`] with the waker on `waker` (0, or 1 for a local wake-up).
    fn enqueue_clock_from(waker: u32, between: &[Event<'_>]) -> Option<u64> {
        enqueue_clock_with(waker, None, between)
    }

    /// [`enqueue_clock_from`] with pid 5's `exec_start` on cpu1 placed at `exec`.
    fn enqueue_clock_with(waker: u32, exec: Option<u64>, between: &[Event<'_>]) -> Option<u64> {
        let mut r = crate::replay::infer::tests::on_cpus(&[0, 1]);
        r.current(1, 5, "p50");
        if let Some(at) = exec {
            r.cpus.get_mut(&1)?.exec = Some((5, at));
        }
        let wake = |waking| Event::Wakeup {
            comm: "rcu_preempt",
            pid: 15,
            prio: Some(120),
            target_cpu: Some(1),
            waking,
            new: false,
        };
        r.event(1_000, waker, &wake(true)).unwrap();
        for ev in between {
            r.event(1_400_000, waker, ev).unwrap();
        }
        r.event(1_410_000, waker, &wake(false)).unwrap();
        r.cpus[&1].skip_clock.map(|(_, at)| at)
    }

    /// 6.1 `wakeup-storm`, 14.3210 s: the waker waited 1.5 ms between `sched_waking` and
    /// the enqueue; the enqueue's update_curr() of cpu1's running task, written on cpu0,
    /// shows its clock read.
    #[test]
    fn a_remote_enqueue_reads_the_clock_at_its_update_curr() {
        assert_eq!(enqueue_clock(&[]), Some(1_000));
        assert_eq!(enqueue_clock(&[rt(5)]), Some(1_400_000));
        // Another task's update_curr() (not cpu1's running task) says nothing of it.
        assert_eq!(enqueue_clock(&[rt(7)]), Some(1_000));
    }

    /// 6.1 `wakeup-storm`, cpu1 at 14.3207 s: `storm` wakes `rt-app` onto its own CPU,
    /// waits 92 µs (the wakee still switching out on cpu0), then the enqueue's update_curr()
    /// of `storm` shows the clock read.
    #[test]
    fn a_local_enqueue_after_a_wait_reads_the_clock_at_its_update_curr() {
        assert_eq!(enqueue_clock_from(1, &[]), Some(1_000));
        assert_eq!(enqueue_clock_from(1, &[rt(5)]), Some(1_400_000));
        assert_eq!(enqueue_clock_from(1, &[rt(7)]), Some(1_000));
    }

    /// The same local wake-up with the running task's switch-in at 0 and the enqueue's
    /// update_curr() written at 1.4 ms: its `runtime=` chains the read.
    #[test]
    fn a_local_enqueue_reads_the_clock_its_runtime_chains() {
        let chained = |runtime| {
            let stat = Event::StatRuntime {
                pid: 5,
                runtime,
                vruntime: None,
            };
            enqueue_clock_with(1, Some(0), &[stat])
        };
        assert_eq!(chained(1_390_000), Some(1_390_000));
        // A chain before the `sched_waking`: the stat stands there (written late), not
        // between the waking and the wake-up: the waking's instant.
        assert_eq!(chained(500), Some(1_000));
    }

    /// A balance on cpu1 pulls a queued task from cpu0, where pid 5 runs: its dequeue is
    /// at the update_curr() of pid 5 written on cpu1 before the event, if recent.
    #[test]
    fn a_pulled_task_is_dequeued_at_the_source_update_curr() {
        let mut r = InferReplay::new(Profile::MAINLINE, None);
        r.current(0, 5, "hog");
        assert_eq!(r.pull_dequeue(0, 25_000), 25_000);
        r.event(1_000, 1, &rt(5)).unwrap();
        assert_eq!(r.pull_dequeue(0, 25_000), 1_000);
        assert_eq!(
            r.pull_dequeue(0, 1_000 + PULL_WINDOW + 1),
            1_000 + PULL_WINDOW + 1
        );
        assert_eq!(r.pull_dequeue(1, 25_000), 25_000);
    }
}
