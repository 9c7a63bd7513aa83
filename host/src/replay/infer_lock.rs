// SPDX-License-Identifier: GPL-2.0-only
//! A queued move onto a CPU that holds its own rq lock: the attach waits for the mover
//! to run again (kernel/sched/core.c move_queued_task(), fair.c attach_tasks()).
//!
//! The mover writes `sched_migrate_task` in set_task_cpu(), then takes the destination's
//! rq lock, reads its clock and enqueues the task (update_load_avg() with DO_ATTACH).
//! When the destination is inside its own try_to_wake_up() (its `sched_waking` of a task
//! it wakes locally written, its `sched_wakeup` not yet), it holds that lock: the mover
//! spins. Under `-icount` QEMU runs one vCPU at a time and the guest's spinlocks on a
//! hypervisor without paravirt spinlocks are test-and-set (virt_spin_lock(),
//! arch/x86/include/asm/qspinlock.h): the destination keeps running — finishes the
//! wake-up, switches, runs — and the mover takes the lock only in its next slice, the
//! first event it writes again (6.12 `periodic-5pct-16ms-2`, cpu0's stopper moving the
//! exec'ing `sh` 168 to cpu1 at 16.933039 s while cpu1, paused after its clock read for
//! `trace-cmd` 166's wake-up, finishes it 20 µs later; the kernel attaches at 16.933143 s,
//! after cpu1's wake-up, switch and sleep: root util 859 there, 1145 with the attach at
//! the move).

use std::collections::HashMap;

use super::{Deferred, InferReplay, Step};
use crate::trace::event::Event;

/// Per CPU the task of its local wake-up under way, and the attaches held until their
/// mover runs again.
#[derive(Default)]
pub(super) struct LockWaits {
    waking: HashMap<u32, i32>,
    /// (mover, destination, step).
    held: Vec<(u32, u32, Deferred)>,
}

/// At most this many held attaches (one per mover and move in practice).
const MAX_HELD: usize = 16;

impl InferReplay {
    /// Any event written by `cpu` at `ts` (answer-key lines too: `cpu` runs again):
    /// releases the attaches it holds, then follows the CPUs' local wake-ups.
    pub(super) fn lock_event(&mut self, ts: u64, cpu: u32, ev: &Event<'_>) {
        if !self.locks.held.is_empty() {
            let held = std::mem::take(&mut self.locks.held);
            for (mover, to, mut d) in held {
                if mover == cpu {
                    d.ts = d.ts.max(ts);
                    self.cpus.entry(to).or_default().deferred.push_back(d);
                    // The enqueue's wakeup_preempt() of an idle destination: its switch
                    // runs on this clock.
                    self.moved_onto_idle(d.pid, to, d.ts);
                } else {
                    self.locks.held.push((mover, to, d));
                }
            }
        }
        match *ev {
            Event::Wakeup {
                waking: true,
                pid,
                target_cpu: Some(t),
                ..
            } if t == cpu => {
                self.locks.waking.insert(cpu, pid);
            }
            Event::Wakeup {
                waking: false, pid, ..
            } if self.locks.waking.get(&cpu) == Some(&pid) => {
                self.locks.waking.remove(&cpu);
            }
            Event::Switch(_) => {
                self.locks.waking.remove(&cpu);
            }
            _ => {}
        }
    }

    /// After the queued move of `pid` onto `to`, written by `cpu`: its attach is held
    /// while `to` is in its own wake-up.
    pub(super) fn lock_move(&mut self, cpu: u32, pid: i32, to: u32) {
        if cpu == to || !self.locks.waking.contains_key(&to) || self.locks.held.len() >= MAX_HELD {
            return;
        }
        let Some(q) = self.cpus.get_mut(&to).map(|c| &mut c.deferred) else {
            return;
        };
        if !q
            .back()
            .is_some_and(|d| d.pid == pid && matches!(d.step, Step::Attach))
        {
            return;
        }
        if let Some(d) = q.pop_back() {
            self.locks.held.push((cpu, to, d));
        }
    }
}
