// SPDX-License-Identifier: GPL-2.0-only
//! Synchronisation between tasks, as rt-app's pthread calls behave (`src/rt-app.c`,
//! `run_event()`): mutexes (`lock`/`unlock`, FIFO hand-over at unlock), condition
//! variables (`wait` releases its mutex and blocks; `signal` wakes the first waiter,
//! `broad` all; a woken waiter re-acquires the mutex, queueing behind its holder),
//! barriers (the last of the threads using one wakes the others), `suspend`/`resume` (a
//! condvar wait and broadcast: a resume nobody waits for is lost) and `yield`.
//!
//! A blocked task is dequeued as a sleep (`TState::Blocked`, no timer); waking it is an
//! ordinary activation at the current time, queued after the event being handled, so the
//! order stays (time, insertion). Simplifications: no priority inheritance (rt-app's
//! `pi_enabled`), no spinning before a futex sleep, and the woken task re-acquires its
//! mutex at the signal instead of when it runs (same FIFO order).

use std::collections::VecDeque;

use super::*;
use crate::sim::program::Step;

/// Every resource's state, indexed by the ids of [`Step`].
#[derive(Debug, Default)]
pub(super) struct SyncState {
    /// Mutex holder.
    owner: Vec<Option<usize>>,
    /// Tasks blocked in `lock`, FIFO.
    mutex_waiters: Vec<VecDeque<usize>>,
    /// Tasks blocked in `wait`, FIFO, with the mutex each must re-acquire.
    cond_waiters: Vec<VecDeque<(usize, u32)>>,
    /// Threads whose program uses each barrier.
    barrier_users: Vec<usize>,
    /// Threads blocked at each barrier.
    barrier_waiting: Vec<Vec<usize>>,
    /// Tasks blocked in `suspend` per name.
    suspended: Vec<Vec<usize>>,
}

fn grow<T: Default>(v: &mut Vec<T>, id: u32) {
    let need = id as usize + 1;
    if v.len() < need {
        v.resize_with(need, T::default);
    }
}

/// Empties the waiter list `id` (none when out of range), returning its tasks.
fn take_all<T: Default>(lists: &mut [T], id: u32) -> T {
    lists
        .get_mut(id as usize)
        .map(std::mem::take)
        .unwrap_or_default()
}

impl SyncState {
    /// The resources `tasks` refer to, with each barrier's thread count.
    pub(super) fn new(tasks: &[SimTask]) -> Self {
        let mut s = SyncState::default();
        for t in tasks {
            let mut barriers: Vec<u32> = Vec::new();
            for step in t.phases.iter().flat_map(|p| p.steps.iter()) {
                match *step {
                    Step::Lock(m) | Step::Unlock(m) => {
                        grow(&mut s.owner, m);
                        grow(&mut s.mutex_waiters, m);
                    }
                    Step::Wait { cond, mutex } => {
                        grow(&mut s.cond_waiters, cond);
                        grow(&mut s.owner, mutex);
                        grow(&mut s.mutex_waiters, mutex);
                    }
                    Step::Signal(c) | Step::Broadcast(c) => grow(&mut s.cond_waiters, c),
                    Step::Barrier(b) => {
                        grow(&mut s.barrier_users, b);
                        grow(&mut s.barrier_waiting, b);
                        if !barriers.contains(&b) {
                            barriers.push(b);
                            s.barrier_users[b as usize] += 1;
                        }
                    }
                    Step::Suspend(n) | Step::Resume(n) => grow(&mut s.suspended, n),
                    _ => {}
                }
            }
        }
        s
    }
}

impl Engine<'_> {
    /// Walks `t`'s program like [`Engine::start_step`], resolving synchronisation steps on
    /// the way; `running` says `t` is the current task of its CPU (a `yield` then counts).
    pub(super) fn advance(&mut self, t: usize, running: bool) -> StepOutcome {
        let len: usize = self.tasks[t]
            .spec
            .phases
            .iter()
            .map(|p| p.steps.len())
            .sum();
        for _ in 0..(2 * len + 2) {
            let step = match self.start_step(t) {
                StepOutcome::Sync(step) => step,
                other => return other,
            };
            let blocked = self.sync_step(t, step, running);
            let more = self.tasks[t].next_step();
            if blocked {
                self.tasks[t].finish_after_sleep = !more;
                return StepOutcome::Block;
            }
            if !more {
                return StepOutcome::Finished;
            }
        }
        // Two whole passes of steps that take no time: the program cannot advance.
        StepOutcome::Finished
    }

    /// Wakes a blocked task now (after the event being handled).
    fn unblock(&mut self, w: usize) {
        self.push(self.now, Ev::Wake(w));
    }

    /// Gives mutex `m` to its first waiter (woken) or frees it.
    fn hand_over(&mut self, m: u32) {
        let m = m as usize;
        let next = self
            .sync
            .mutex_waiters
            .get_mut(m)
            .and_then(VecDeque::pop_front);
        if let Some(o) = self.sync.owner.get_mut(m) {
            *o = next;
        }
        if let Some(w) = next {
            self.unblock(w);
        }
    }

    /// A task woken from a condition re-acquires `m`: at once when free, else it waits
    /// for it (still blocked).
    fn reacquire(&mut self, w: usize, m: u32) {
        let i = m as usize;
        match self.sync.owner.get_mut(i) {
            Some(o @ None) => {
                *o = Some(w);
                self.unblock(w);
            }
            Some(Some(_)) => {
                if let Some(q) = self.sync.mutex_waiters.get_mut(i) {
                    q.push_back(w);
                }
            }
            None => self.unblock(w),
        }
    }

    /// Applies `step` for `t`; true when `t` blocks.
    fn sync_step(&mut self, t: usize, step: Step, running: bool) -> bool {
        let s = &mut self.sync;
        match step {
            Step::Lock(m) => match s.owner.get_mut(m as usize) {
                Some(o @ None) => {
                    *o = Some(t);
                    false
                }
                Some(Some(_)) => {
                    if let Some(q) = s.mutex_waiters.get_mut(m as usize) {
                        q.push_back(t);
                    }
                    true
                }
                None => false,
            },
            Step::Unlock(m) => {
                if s.owner.get(m as usize) == Some(&Some(t)) {
                    self.hand_over(m);
                }
                false
            }
            Step::Wait { cond, mutex } => {
                if let Some(q) = s.cond_waiters.get_mut(cond as usize) {
                    q.push_back((t, mutex));
                }
                if self.sync.owner.get(mutex as usize) == Some(&Some(t)) {
                    self.hand_over(mutex);
                }
                true
            }
            Step::Signal(c) => {
                if let Some((w, m)) = s
                    .cond_waiters
                    .get_mut(c as usize)
                    .and_then(|q| q.pop_front())
                {
                    self.reacquire(w, m);
                }
                false
            }
            Step::Broadcast(c) => {
                for (w, m) in take_all(&mut s.cond_waiters, c) {
                    self.reacquire(w, m);
                }
                false
            }
            Step::Barrier(b) => {
                let users = s.barrier_users.get(b as usize).copied().unwrap_or(0);
                let Some(waiting) = s.barrier_waiting.get_mut(b as usize) else {
                    return false;
                };
                if waiting.len() + 1 >= users {
                    for w in std::mem::take(waiting) {
                        self.unblock(w);
                    }
                    false
                } else {
                    waiting.push(t);
                    true
                }
            }
            Step::Suspend(n) => {
                if let Some(q) = s.suspended.get_mut(n as usize) {
                    q.push(t);
                }
                true
            }
            Step::Resume(n) => {
                for w in take_all(&mut s.suspended, n) {
                    self.unblock(w);
                }
                false
            }
            Step::Yield => {
                self.tasks[t].yielded |= running;
                false
            }
            Step::Fork(k) => {
                self.fork(k);
                false
            }
            Step::Run(_)
            | Step::Runtime(_)
            | Step::Sleep(_)
            | Step::Timer { .. }
            | Step::IoWait { .. } => false,
        }
    }

    /// `sched_yield()` of `c`'s running task: the fair class's `yield_task_fair()` (an RT
    /// task goes behind its priority's queue as is), then
    /// `__schedule()` puts it back at the queue's end, behind its equals.
    pub(super) fn yield_curr(&mut self, c: usize) {
        let Some(t) = self.rqs[c].curr else { return };
        self.tasks[t].yielded = false;
        self.update_curr(c);
        if self.tasks[t].is_fair() {
            self.yield_fair(c, t);
        }
        self.schedule(c);
    }
}
