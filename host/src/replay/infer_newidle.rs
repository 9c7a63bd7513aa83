// SPDX-License-Identifier: GPL-2.0-only
//! The newly-idle balance's blocked averages in the inferred replay (kernel/sched/fair.c).
//!
//! A CPU about to go idle (pick_next_task_fair() finds no fair task) runs newidle_balance()
//! (6.12: sched_balance_newidle()) after the sleeper's dequeue and before its
//! `sched_switch` to the idle task. When the root domain is overloaded (`rd->overload`,
//! 6.12 `rd->overloaded`) and `avg_idle` is not below the domain's `max_newidle_lb_cost`,
//! it runs update_blocked_averages() (6.12: sched_balance_update_blocked_averages()) on
//! a fresh clock, then load_balance() of the CPU's one domain (the lab's 2-CPU guest has
//! one level: MC over both CPUs, no parent), whose update_sd_lb_stats() rewrites the
//! overload flag from the CPUs' `nr_running`. The flag is set by add_nr_running() when a
//! CPU's `nr_running` (every class: the trace shows every task's wake-up and switch)
//! reaches 2, and rewritten by the SCHED softirq's periodic balance too.
//!
//! Not modelled: `avg_idle` against `max_newidle_lb_cost` (the balance's measured cost,
//! in no event). Against the answer key, a cost anywhere in 0–100 µs predicts the same
//! updates on the captures (their idle periods are long: `avg_idle` sits near its
//! 1 ms cap), so the condition is taken as met. 6.12.95's NI_RANDOM skips the
//! load_balance() (not the blocked update) at random: the flag is then not rewritten.
//!
//! The kernel's records of that walk come before the `sched_switch` that tells the replay
//! the CPU goes idle. With a look-ahead ([`super::ahead`]), a `sched_stat_runtime` of the
//! running task whose CPU writes its switch to idle next (no other event between) is the
//! dequeue's update_curr(): the dequeue then runs after its own root record (the last of
//! its update_load_avg() records) and the walk after that, step by step with the kernel's
//! records ([`super::softirq`]); without a look-ahead both wait for the switch.
//!
//! On 6.12 `nr_running` counts delayed tasks, but a CPU goes idle only once
//! pick_next_task_fair()'s picks dequeued every delayed entity of its cfs_rq (each picked
//! one leaves with DEQUEUE_DELAYED), so sched_balance_newidle() comes after those picks:
//! the replay runs it after those (`finish_delayed()`), at the switch. The look-ahead
//! runs it early on 6.12 only for a sleeper alone on its CPU (never delayed then: the
//! average is its own vruntime); otherwise the picks' records come between the dequeue's
//! and the walk's (with the look-ahead for every sleeper, root cfs_rqs 4.31 → 7.61 sum).
//! Earlier, run before those picks, the model's delayed tasks kept the flag set: on 6.12
//! `wakeup-storm` it invented 2 180 walks (root cfs_rqs 0.55 → 9.91 mean then).
//! `SCHEDMATH_REPLAY_EXPLAIN=newidle` prints each switch to idle with the model's decision
//! and the answer key's (a second clock read of the CPU's cfs_rqs between the dequeue and
//! the switch), then the counts.

use std::collections::BTreeMap;
use std::io::BufRead;

use super::ahead::{Lookahead, Next};
use super::{ClockPoint, InferReplay};
use crate::trace::event::{Event, PeltCallKind};

/// The answer key's reads of one CPU's cfs_rq clock since its last sched event, timer or
/// softirq exit or update_curr() of its running task: the dequeue's, then a newly-idle
/// balance's blocked update (a second, later clock).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IdleEntryReads {
    first: Option<u64>,
    second: Option<u64>,
}

impl IdleEntryReads {
    /// A probe record of a cfs_rq on its own CPU read the clock `now`.
    pub fn record(&mut self, now: u64) {
        match self.first {
            None => self.first = Some(now),
            Some(f) if f != now && self.second.is_none() => self.second = Some(now),
            _ => {}
        }
    }

    /// The clock of the newly-idle blocked update, if the key shows one.
    pub fn newidle(&self) -> Option<u64> {
        self.second
    }

    /// Follows one event written on the CPU while `curr` ran there.
    pub fn event(&mut self, ev: &Event<'_>, curr: i32) {
        let ends = match *ev {
            Event::PeltCall(_) => false,
            Event::StatRuntime { pid, .. } => pid == curr,
            Event::HrtimerExit | Event::Softirq { .. } => true,
            ref e => super::is_sched_event(e),
        };
        if ends {
            *self = IdleEntryReads::default();
        }
    }
}

/// A sleeper's dequeue whose switch to idle the look-ahead showed.
#[derive(Clone, Copy)]
struct Armed {
    prev: i32,
    /// The stamps of its dequeue's `sched_stat_runtime` and of its `sched_switch`.
    mark: u64,
    switch: u64,
    /// Once its dequeue ran: whether the walk did too (the overload flag then).
    walked: Option<bool>,
}

/// The newly-idle balance's state: the overload flag, and the counts against the key.
#[derive(Default)]
pub(super) struct Newidle {
    /// `rd->overload` as the model has it.
    overload: bool,
    /// The trace time a balance last cleared it.
    cleared: Option<u64>,
    /// The look-ahead, if the trace could be read twice, and the replay's current line.
    ahead: Option<Lookahead>,
    line: u64,
    /// Per CPU: the dequeue the look-ahead places before a switch to idle.
    armed: BTreeMap<u32, Armed>,
    /// The answer key's clock reads per CPU (only for the explain mode).
    reads: BTreeMap<u32, IdleEntryReads>,
    /// Switches to idle: (both, the model's only, the key's only, neither).
    counts: [u64; 4],
}

/// How many events after its switch-in [`InferReplay::wakelist_chain`] looks through
/// for the wakee's first `sched_stat_runtime`.
const MAX_CHAIN_EVENTS: usize = 16;

/// How many events after a sleeper's dequeue [`pulled_switch`] looks through.
const MAX_PULL_EVENTS: usize = 8;

/// A newly-idle balance that pulls a task (newidle_balance() from pick_next_task_fair()
/// with no fair task left, fair.c): after the sleeper `pid`'s dequeue on `cpu` (its
/// `sched_stat_runtime` at `ts`), the walk's records, then the pull: detach_task()'s
/// update_curr() of the source's running task (written here), `sched_migrate_task`, the
/// attach's enqueue_entity() → update_curr() of the sleeper (put_prev_task() comes after
/// the balance: it is still the cfs_rq's curr), then the sleeper's switch to a task. The
/// stamp of the first event after the dequeue (the walk's clock read is just before it);
/// `None` for any other sequence. 6.1 `mixed-sleep-timer`, cpu1 at 13.8755 s: `frame`'s
/// dequeue on now=14126367212, the vCPU paused 1.43 ms, the walk on now=14127821824
/// while the replay still had `frame` queued (root util 31 high), then the pull of `tick`.
fn pulled_switch(ahead: &mut Lookahead, line: u64, ts: u64, cpu: u32, pid: i32) -> Option<u64> {
    let (mut first, mut attach) = (None, false);
    for n in 0..MAX_PULL_EVENTS {
        let (stamp, next) = ahead.nth_on(line, ts, cpu, n)?;
        first.get_or_insert(stamp);
        match next {
            // The detach's, first.
            Next::Runtime(p, _) if n == 0 && p != pid => {}
            _ if n == 0 => return None,
            Next::Runtime(p, _) if p == pid => attach = true,
            Next::Other | Next::SchedSoftirq | Next::Migrate(..) if !attach => {}
            Next::SleepToTask(p, _) if p == pid && attach => return first,
            _ => return None,
        }
    }
    None
}

/// `SCHEDMATH_REPLAY_EXPLAIN=newidle`.
fn explain() -> bool {
    crate::replay::explains("newidle")
}

impl InferReplay {
    /// `nr_running` of `cpu`: its queued tasks of every class (6.12's delayed ones too).
    fn nr_running(&self, cpu: u32) -> usize {
        self.tasks
            .values()
            .filter(|t| t.cpu == cpu && t.on_rq)
            .count()
    }

    /// update_sd_lb_stats() of the top domain: overloaded while a CPU runs more than one.
    fn overloaded(&self) -> bool {
        self.cpus.keys().any(|&c| self.nr_running(c) > 1)
    }

    /// v6.12: whether a task other than `pid` is queued on `cpu` (a delayed one too): the
    /// picks before the CPU goes idle would dequeue it (DEQUEUE_DELAYED), their records
    /// between the sleeper's and the walk's. A sleeper alone on its cfs_rq is eligible
    /// (the average is its own vruntime), so its sleep is not delayed.
    fn shares_cpu(&self, cpu: u32, pid: i32) -> bool {
        self.tasks
            .iter()
            .any(|(&p, t)| p != pid && t.cpu == cpu && t.on_rq && t.weight.is_some())
    }

    /// Reads `input` (the same trace) ahead of the replay: see the module's comment.
    pub fn set_lookahead(&mut self, input: Box<dyn BufRead>, name: &str) {
        self.newidle.ahead = Some(Lookahead::new(input, name));
    }

    /// The line of the record the next [`InferReplay::event`] comes from.
    pub fn at_line(&mut self, line: u64) {
        self.newidle.line = line;
    }

    /// What `cpu` writes next after the current line (at trace time `ts`), if the trace
    /// has a look-ahead ([`Lookahead::next_on`]).
    pub(super) fn ahead_next_on(&mut self, ts: u64, cpu: u32) -> Option<(u64, Next)> {
        let line = self.newidle.line;
        self.newidle.ahead.as_mut()?.next_on(line, ts, cpu)
    }

    /// The `n`-th event (from 0) `cpu` writes after the current line (at trace time `ts`)
    /// ([`Lookahead::nth_on`]).
    pub(super) fn ahead_nth_on(&mut self, ts: u64, cpu: u32, n: usize) -> Option<(u64, Next)> {
        let line = self.newidle.line;
        self.newidle.ahead.as_mut()?.nth_on(line, ts, cpu, n)
    }

    /// If `cpu` writes a `cgroup_attach_task` next after the current line (at trace time
    /// `ts`): its (pid, destination path) ([`Lookahead::attach_next_on`]).
    pub(super) fn ahead_attach_next_on(&mut self, ts: u64, cpu: u32) -> Option<(i32, String)> {
        let line = self.newidle.line;
        let ahead = self.newidle.ahead.as_mut()?;
        let (pid, path) = ahead.attach_next_on(line, ts, cpu)?;
        Some((pid, path.to_string()))
    }

    /// After each event: add_nr_running() sets the flag when a CPU reaches two tasks
    /// (kernel/sched/sched.h); the flag is only cleared by a balance, which sees the same.
    pub(super) fn newidle_after_event(&mut self, ts: u64, cpu: u32, ev: &Event<'_>) {
        if !self.newidle.overload && self.overloaded() {
            self.newidle.overload = true;
        }
        let curr = self.cpus.get(&cpu).and_then(|c| c.curr);
        match ev {
            Event::StatRuntime { pid, .. } if curr == Some(*pid) => self.arm(ts, cpu, *pid),
            Event::PeltCall(c) if c.kind == PeltCallKind::CfsRq && c.cpu == cpu => {
                if c.path == "/" {
                    self.dequeue_before_newidle(cpu);
                }
            }
            Event::PeltCall(_) | Event::Other => {}
            e if super::is_answer_key(e) => {}
            _ => {
                self.newidle.armed.remove(&cpu);
            }
        }
        if explain() {
            let curr = self.cpus.get(&cpu).and_then(|c| c.curr).unwrap_or(0);
            let reads = self.newidle.reads.entry(cpu).or_default();
            match ev {
                Event::PeltCall(c) if c.kind == PeltCallKind::CfsRq && c.cpu == cpu => {
                    reads.record(c.now)
                }
                // The switch to idle was judged against the reads before it.
                _ => reads.event(ev, curr),
            }
        }
    }

    /// The prio `pid` prints at its next switch-out (the look-ahead's), if within its
    /// window.
    pub(super) fn prio_next(&mut self, ts: u64, pid: i32) -> Option<i32> {
        let line = self.newidle.line;
        let ahead = self.newidle.ahead.as_mut()?;
        ahead.prio_at_switch_out(line, ts, pid)
    }

    /// Whether the look-ahead shows `pid` calling exec() (a new comm at a later switch-out
    /// within its window).
    pub(super) fn execs(&mut self, ts: u64, pid: i32) -> bool {
        let line = self.newidle.line;
        self.newidle
            .ahead
            .as_mut()
            .is_some_and(|a| a.renamed(line, ts, pid))
    }

    /// The trace time of the clock an idle `cpu` read to run its wake list for `pid`
    /// (sched_ttwu_pending(), core.c), from what it writes next: the switch from the idle
    /// task to `pid` runs on that clock (the wake-up asked to skip the next clock update:
    /// check_preempt_curr() / wakeup_preempt()), so set_next_entity() starts `pid`'s
    /// `exec_start` there, and `pid`'s first `sched_stat_runtime` (update_curr(), fair.c)
    /// gives that clock back as its own read minus `runtime=`. A vCPU paused between the
    /// read and its events moves the read far from the `sched_wakeup` (6.1 `hogs-nice`,
    /// cpu1 at 12.5357 s: `khugepaged` woken on a clock read 260 µs before its
    /// `sched_wakeup`, `runtime=313839` 54 µs after its switch). `None` unless the CPU
    /// writes that switch next.
    pub(super) fn wakelist_chain(&mut self, ts: u64, cpu: u32, pid: i32) -> Option<u64> {
        if self.cpus.get(&cpu).and_then(|c| c.curr) != Some(0) {
            return None;
        }
        let line = self.newidle.line;
        let ahead = self.newidle.ahead.as_mut()?;
        // The idle exit, then the switch.
        let mut n = 0;
        while ahead.nth_on(line, ts, cpu, n)?.1 == Next::Idle {
            n += 1;
        }
        if ahead.nth_on(line, ts, cpu, n)?.1 != Next::Switch(0, pid) {
            return None;
        }
        // Its first update_curr() on this CPU (each writes the event); another CPU's
        // task's (a remote wake-up's enqueue) or any other event in between does not move
        // `exec_start`; a switch does.
        for n in n + 1..n + MAX_CHAIN_EVENTS {
            match ahead.nth_on(line, ts, cpu, n)? {
                (stamp, Next::Runtime(p, runtime)) if p == pid => {
                    // update_curr() reads the clock right before it writes the event
                    // (a dequeue's, a tick's, a local wake-up's); not a put_prev's, whose
                    // read is __schedule()'s, 29 µs earlier at the median.
                    return self.at(ClockPoint::Dequeue, stamp).checked_sub(runtime);
                }
                (_, Next::Switch(..) | Next::SleepToIdle(_) | Next::SleepToTask(..)) => {
                    return None
                }
                _ => {}
            }
        }
        None
    }

    /// `pid`'s `sched_stat_runtime` on `cpu` at `ts`: its dequeue's, if the CPU writes
    /// its switch to idle next (with the probe records, whose order it follows).
    fn arm(&mut self, ts: u64, cpu: u32, pid: i32) {
        self.newidle.armed.remove(&cpu);
        let fair = self.tasks.get(&pid).is_some_and(|t| t.weight.is_some());
        if !fair || !self.probe_key || (self.eevdf.is_some() && self.shares_cpu(cpu, pid)) {
            return;
        }
        let line = self.newidle.line;
        let Some(ahead) = self.newidle.ahead.as_mut() else {
            return;
        };
        let next = ahead.next_on(line, ts, cpu);
        let next = match next {
            Some((_, Next::SleepToIdle(_))) => next,
            _ => pulled_switch(ahead, line, ts, cpu, pid).map(|at| (at, Next::SleepToIdle(pid))),
        };
        if let Some((switch, Next::SleepToIdle(p))) = next {
            if p == pid {
                let a = Armed {
                    prev: pid,
                    mark: ts,
                    switch,
                    walked: None,
                };
                self.newidle.armed.insert(cpu, a);
            }
        }
    }

    /// After the armed dequeue's root record on `cpu`: the dequeue, then the newly-idle
    /// walk if the flag is set, as [`InferReplay::newidle_balance`] does at the switch.
    fn dequeue_before_newidle(&mut self, cpu: u32) {
        // A CPU checks the flag right after its dequeue's clock read: a balance that
        // cleared it later in trace time (the vCPU paused in between) came after the check.
        let mark = self.newidle.armed.get(&cpu).map(|a| a.mark);
        let overload =
            self.newidle.overload || self.newidle.cleared.zip(mark).is_some_and(|(c, m)| c > m);
        let Some(a) = self
            .newidle
            .armed
            .get_mut(&cpu)
            .filter(|a| a.walked.is_none())
        else {
            return;
        };
        a.walked = Some(overload);
        let a = *a;
        if !overload {
            return;
        }
        let dequeue = self.at(ClockPoint::Dequeue, a.mark);
        // v6.12: util_est_update() before the dequeue's PELT update (not again at the
        // switch).
        self.util_est_before_dequeue(a.prev);
        let reweight = std::mem::replace(&mut self.groups.reweight, true);
        self.update(Some(a.prev), cpu, dequeue);
        self.groups.reweight = reweight;
        // Dequeued, but still the cfs_rq's `curr` until put_prev_task().
        let before = self.util_est_before_dequeue;
        if let Some(t) = self.tasks.get_mut(&a.prev) {
            t.on_rq = false;
            t.dequeued = before;
        }
        self.settle_groups();
        let at = self.at(ClockPoint::Newidle, a.switch).max(dequeue);
        self.blocked_walk(cpu, at);
        self.set_overload(self.overloaded(), a.switch);
    }

    /// `prev`'s switch on `cpu` finds its dequeue and walk done.
    pub(super) fn dequeued_before_newidle(&self, cpu: u32, prev: i32) -> bool {
        self.early_walk(cpu, prev) == Some(true)
    }

    /// Whether the armed dequeue of `prev` on `cpu` ran, and with the walk.
    fn early_walk(&self, cpu: u32, prev: i32) -> Option<bool> {
        self.newidle
            .armed
            .get(&cpu)
            .filter(|a| a.prev == prev)
            .and_then(|a| a.walked)
    }

    /// A balance's update_sd_lb_stats() writes the flag at trace time `ts`.
    fn set_overload(&mut self, v: bool, ts: u64) {
        if self.newidle.overload && !v {
            self.newidle.cleared = Some(ts);
        }
        self.newidle.overload = v;
    }

    /// The SCHED softirq's periodic load_balance() rewrites the flag.
    pub(super) fn newidle_softirq(&mut self, ts: u64) {
        self.set_overload(self.overloaded(), ts);
    }

    /// `cpu` switches from the sleeping `prev` to idle at trace time `ts` (the switch's
    /// stamp); `dequeue`: the trace time of prev's dequeue. prev is dequeued but still
    /// the cfs_rq's `curr` during the balance (put_prev_task() comes after it).
    pub(super) fn newidle_balance(&mut self, cpu: u32, prev: i32, dequeue: u64, ts: u64) {
        let early = self.early_walk(cpu, prev);
        let ours = early.unwrap_or(self.newidle.overload);
        let key = self
            .newidle
            .reads
            .get(&cpu)
            .and_then(IdleEntryReads::newidle);
        if explain() {
            let i = match (ours, key.is_some()) {
                (true, true) => 0,
                (true, false) => 1,
                (false, true) => 2,
                (false, false) => 3,
            };
            self.newidle.counts[i] += 1;
            let mark = if ours == key.is_some() { " " } else { "X" };
            let k = key.map_or("-".to_string(), |n| n.to_string());
            eprintln!(
                "{mark} newidle cpu{cpu} {}.{:06} prev {prev}: ours {ours} kernel {} (now {k})",
                ts / 1_000_000_000,
                ts % 1_000_000_000 / 1000,
                key.is_some()
            );
        }
        if !ours || early.is_some() {
            return;
        }
        let at = self.at(ClockPoint::Newidle, ts).max(dequeue);
        let queued = self.tasks.get(&prev).map(|t| t.on_rq);
        if let Some(t) = self.tasks.get_mut(&prev) {
            t.on_rq = false;
        }
        // The dequeue's update_cfs_group() came before the balance.
        self.settle_groups();
        self.update_blocked_averages(cpu, at);
        // load_balance(): update_sd_lb_stats() with prev off this CPU.
        self.set_overload(self.overloaded(), ts);
        if let (Some(t), Some(q)) = (self.tasks.get_mut(&prev), queued) {
            t.on_rq = q;
        }
    }

    /// The counts of `SCHEDMATH_REPLAY_EXPLAIN=newidle`, printed at the end.
    pub(super) fn newidle_summary(&self) {
        if explain() {
            let [both, ours, key, neither] = self.newidle.counts;
            eprintln!(
                "newidle blocked updates at idle entry: predicted {both}, missed {key}, invented {ours}, neither {neither}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::{Switch, SCHED_SOFTIRQ};

    fn wakeup(pid: i32, cpu: u32) -> Event<'static> {
        Event::Wakeup {
            comm: "t",
            pid,
            prio: Some(120),
            target_cpu: Some(cpu),
            waking: false,
            new: false,
        }
    }

    fn sleep(prev_pid: i32, next_pid: i32) -> Event<'static> {
        Event::Switch(Switch {
            prev_comm: "t",
            prev_pid,
            prev_prio: Some(120),
            prev_state: "S",
            next_comm: "t",
            next_pid,
            next_prio: Some(120),
        })
    }

    /// add_nr_running() sets the flag when a CPU reaches two tasks; only a balance's
    /// update_sd_lb_stats() rewrites it: the newly-idle one a switch to idle runs while it
    /// is set, and the SCHED softirq's.
    #[test]
    fn the_overload_flag_follows_nr_running_and_the_balances() {
        let mut r = crate::replay::infer::tests::on_cpus(&[0, 1]);
        r.current(0, 7, "t");
        r.current(1, 9, "t");
        let softirq = Event::Softirq {
            vec: SCHED_SOFTIRQ,
            exit: false,
        };
        let mut at = 0;
        let mut ev = |r: &mut InferReplay, cpu, e: &Event<'_>| {
            at += 1_000;
            r.event(at, cpu, e).unwrap();
            r.newidle.overload
        };
        assert!(ev(&mut r, 1, &wakeup(8, 1)), "cpu1 runs 9 with 8 queued");
        assert!(ev(&mut r, 1, &sleep(9, 8)), "set until a balance");
        assert!(!ev(&mut r, 0, &sleep(7, 0)), "cpu0's newly-idle balance");
        assert!(ev(&mut r, 1, &wakeup(7, 1)));
        assert!(ev(&mut r, 1, &softirq), "cpu1 still has two");
        assert!(ev(&mut r, 1, &sleep(8, 7)));
        assert!(!ev(&mut r, 0, &softirq), "the periodic balance");
    }
}
