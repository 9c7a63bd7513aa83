// SPDX-License-Identifier: GPL-2.0-only
//! A wake-up from an hrtimer's `hrtimer_wakeup` callback (kernel/time/hrtimer.c: a
//! sleeper's nanosleep timer) reads its rq clock a code path after the timer interrupt's
//! own clock read, never sooner.
//!
//! hrtimer_interrupt() reads the base clock once (hrtimer_update_base()) and
//! __run_hrtimer() prints that read as `hrtimer_expire_entry`'s `now=` before it calls
//! the callback; hrtimer_wakeup() → try_to_wake_up() (core.c) then picks the CPU
//! (select_task_rq()), locks its rq and reads the rq clock (update_rq_clock()) for the
//! enqueue. Both clocks count the same counter, so the read is that `now` plus a constant
//! (the two bases' offset) plus the path, whose median the answer key gives once per
//! trace ([`super::ClockPoint::TimerWaking`]). The path is not always the same length
//! (6.1 `wakeup-storm`: modes 10760120 and 10760140 ns apart from the timer's `now` on
//! cpu0, one in five on cpu1 160 ns longer; the trace does not show which), so the timer
//! gives a floor, not the read: the `sched_waking` stamp's median point stands unless it
//! lies before `now` plus the median path less [`PATH_SPREAD_NS`]. 6.1 `wakeup-storm`,
//! cpu0 at 13.9590 s: `storm` (pid 128) enqueued on now=14211350601, the stamp's point
//! 106 ns earlier, across a PELT period boundary (14211350528): util 6 high for a
//! period; the floor from now=14222110736 is 14211350553.
//!
//! Only the interrupt's first callback: __hrtimer_run_queues() runs every expired timer
//! on the one `now`, so a wake-up after another callback (a tick's, 6.1 `wakeup-storm`
//! cpu0 at 12.4129 s: 11 µs of tick first) reads its clock later by that work.

use std::collections::BTreeMap;

use super::{ClockPoint, InferReplay};
use crate::trace::event::{Event, PeltCallKind};

/// How much shorter than the median the callback's path to the rq clock read can be
/// (ns): the spread of the common path's modes (6.1 `wakeup-storm`: 10760120 to
/// 10760160 ns between the timer's `now` and the read; 6.12: 10509480 to 10509500).
const PATH_SPREAD_NS: i64 = 40;

/// The `hrtimer_wakeup` callbacks under way, per CPU.
#[derive(Default)]
pub(super) struct TimerWake {
    /// The callback's `now=` while its wake-up has not read its clock yet, and whether
    /// that wake-up wrote its `sched_waking`.
    pending: BTreeMap<u32, (u64, bool)>,
    /// The `now=` of the CPU's last expiry (one interrupt's callbacks share it).
    last_now: BTreeMap<u32, u64>,
}

impl TimerWake {
    /// Follows the callbacks `cpu` runs: one starts at `hrtimer_expire_entry` of
    /// `hrtimer_wakeup` and ends at `hrtimer_expire_exit`. Only the interrupt's first
    /// callback (the module's notes).
    pub(super) fn event(&mut self, cpu: u32, ev: &Event<'_>) {
        match *ev {
            Event::HrtimerExpire { function, now } => {
                let first = now.is_some() && self.last_now.get(&cpu) != now.as_ref();
                if let Some(n) = now {
                    self.last_now.insert(cpu, n);
                }
                match now {
                    Some(n) if first && function.starts_with("hrtimer_wakeup") => {
                        self.pending.insert(cpu, (n, false));
                    }
                    _ => {
                        self.pending.remove(&cpu);
                    }
                }
            }
            Event::HrtimerExit => {
                self.pending.remove(&cpu);
            }
            _ => {}
        }
    }

    /// The offsets pass: the first update `cpu` writes after its callback's
    /// `sched_waking` gives its clock read minus the timer's `now`.
    pub(super) fn sample(&mut self, cpu: u32, ev: &Event<'_>) -> Option<i64> {
        match *ev {
            Event::Wakeup { waking: true, .. } => {
                if let Some(t) = self.pending.get_mut(&cpu) {
                    t.1 = true;
                }
                None
            }
            // A wake-up migration's sync (remove_entity_load_avg()) reads no clock.
            Event::PeltCall(ref c) if c.kind != PeltCallKind::BlockedSe => {
                let (now, woke) = *self.pending.get(&cpu)?;
                if !woke {
                    return None;
                }
                self.pending.remove(&cpu);
                Some(c.now as i64 - now as i64)
            }
            _ => {
                self.event(cpu, ev);
                None
            }
        }
    }

    /// The timer's `now` of `cpu`'s callback under way, once: its first wake-up's.
    fn take(&mut self, cpu: u32) -> Option<u64> {
        self.pending.remove(&cpu).map(|(now, _)| now)
    }
}

impl InferReplay {
    /// The earliest trace time the rq clock read of a wake-up whose `sched_waking` `cpu`
    /// wrote at `ts` inside an `hrtimer_wakeup` callback can stand for, from the timer's
    /// `now`.
    pub(super) fn timer_waking(&mut self, cpu: u32, ts: u64) -> Option<u64> {
        let now = self.timers.take(cpu)?;
        let o = self.offsets?;
        let k = o.point[ClockPoint::TimerWaking as usize]?;
        let read = now.checked_add_signed(k - PATH_SPREAD_NS)?;
        Some(read.wrapping_add_signed(-o.global_at(ts)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::infer::{ClockOffsets, CLOCK_POINTS};
    use schedmath::profile::Profile;

    fn expire(function: &str, now: u64) -> Event<'_> {
        Event::HrtimerExpire {
            function,
            now: Some(now),
        }
    }

    fn waking(pid: i32) -> Event<'static> {
        Event::Wakeup {
            comm: "storm",
            pid,
            prio: Some(120),
            target_cpu: Some(0),
            waking: true,
            new: false,
        }
    }

    /// A replay whose rq clock is the trace clock, the read `path` ns after the timer's
    /// `now` (the answer key's median).
    fn replay(path: i64) -> InferReplay {
        let mut point = [None; CLOCK_POINTS];
        point[ClockPoint::TimerWaking as usize] = Some(path);
        let o = ClockOffsets {
            point,
            ..ClockOffsets::default()
        };
        InferReplay::new(Profile::MAINLINE, Some(o))
    }

    /// The stamp's point stands unless it lies before the timer's floor.
    #[test]
    fn a_timer_wake_up_reads_its_clock_no_sooner_than_the_timers_path() {
        let mut r = replay(-500);
        r.event(8_000, 0, &expire("hrtimer_wakeup/0x0", 10_000))
            .unwrap();
        r.event(9_000, 0, &waking(7)).unwrap();
        assert_eq!(
            r.tasks[&7].waking,
            Some((10_000 - 500 - PATH_SPREAD_NS as u64, 0))
        );
        r.event(9_100, 0, &Event::HrtimerExit).unwrap();
        r.event(20_000, 0, &expire("hrtimer_wakeup/0x0", 20_000))
            .unwrap();
        r.event(21_000, 0, &waking(8)).unwrap();
        assert_eq!(r.tasks[&8].waking, Some((21_000, 0)));
    }

    /// A callback after another in the same interrupt (one `now`) gives no floor.
    #[test]
    fn only_the_interrupts_first_callback_gives_a_floor() {
        let mut t = TimerWake::default();
        t.event(0, &expire("tick_sched_timer/0x0", 10_000));
        t.event(0, &Event::HrtimerExit);
        t.event(0, &expire("hrtimer_wakeup/0x0", 10_000));
        assert_eq!(t.take(0), None);
        t.event(0, &expire("hrtimer_wakeup/0x0", 30_000));
        assert_eq!(t.take(0), Some(30_000));
        assert_eq!(t.take(0), None);
    }
}
