// SPDX-License-Identifier: GPL-2.0-only
//! Runqueue operations: enqueue, dequeue, migration, `__schedule()` (put_prev/set_next,
//! idle entry); the newly-idle balance is in `balance`.

use super::*;
use crate::sim::group::Ent;

impl Engine<'_> {
    /// What `enqueue_task()` (kernel/sched/core.c) does for every class before the
    /// class's own enqueue: account CPU `c` up to now, update the rq clock and curr, and
    /// add task `t`'s clamps to the rq (`uclamp_rq_inc()`). A delayed-dequeue requeue
    /// starts the same way.
    pub(super) fn enqueue_task_start(&mut self, c: usize, t: usize) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        let ucfg = self.ucfg;
        let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
        uclamp_rq_inc(&mut r.uclamp, &mut task.uclamp, false, &ucfg);
        r.inputs_written();
    }

    pub(super) fn enqueue(&mut self, c: usize, t: usize) {
        self.enqueue_task_start(c, t);
        if self.tasks[t].is_fair() {
            util_est_enqueue(&mut self.rqs[c].cfs, &self.tasks[t].avg);
            self.rqs[c].inputs_written();
            self.tr_util_est_cfs(c);
            if std::mem::take(&mut self.tasks[t].in_iowait) {
                self.cpufreq_update_flags(c, SCHED_CPUFREQ_IOWAIT);
            }
            let attach = self.tasks[t].avg.last_update_time == 0;
            let has_curr = self.curr_is_fair(c);
            let mut decayed = self.update_load_avg(c, Some((t, false, false)), has_curr);
            if attach {
                let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
                if task.state == TState::New {
                    task.started_at = Some(self.now);
                    init_entity_runnable_average(&mut task.avg, task.weight);
                    post_init_entity_util_avg(&mut task.avg, &r.cfs, r.capacity_orig, task.weight);
                    if task.forked {
                        task.fork_start = Some(crate::sim::task::ForkStart {
                            at_ns: self.now,
                            cpu: c,
                            util_avg: task.avg.util_avg,
                        });
                    }
                }
                attach_entity_load_avg(&mut r.cfs, &mut task.avg, task.weight, self.tables);
                r.inputs_written();
                decayed = true;
            }
            let idle = self.task_counts_idle(t);
            let initial = self.tasks[t].state == TState::New;
            let level = self.tasks[t].group;
            self.place_fair_entity(c, Ent::Task(t), level, initial);
            let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
            r.cfs_load_weight += scale_load(task.weight);
            r.nr_fair += 1;
            r.h_nr_idle += u32::from(idle);
            // Queued before the walk: the parents' views find the task's group entities.
            r.queue.push(t);
            self.walk_groups(c, t, 1);
            if decayed {
                self.cpufreq_update(c);
            }
            self.check_ou(c);
        } else {
            let running = self.curr_is_rt(c);
            self.update_rt(c, running);
            self.rqs[c].nr_rt += 1;
            self.rqs[c].inputs_written();
            self.cpufreq_update(c);
        }
        self.rec.enqueue(t, &self.tasks[t], c);
        self.tasks[t].cpu = c;
        self.tasks[t].state = TState::Runnable;
        if !self.rqs[c].queue.contains(&t) {
            self.rqs[c].queue.push(t);
        }
    }

    /// `t` counts in `h_nr_idle`: SCHED_IDLE, or under an idle group.
    pub(super) fn task_counts_idle(&self, t: usize) -> bool {
        let task = &self.tasks[t];
        task.policy == SchedPolicy::Idle || self.groups.idle_on_path(task.group)
    }

    /// Takes `t` off `c` (a sleep when `sleep`, else a migration). The caller reschedules
    /// when `t` was running.
    pub(super) fn dequeue(&mut self, c: usize, t: usize, sleep: bool) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        let is_curr = self.rqs[c].curr == Some(t);
        if self.tasks[t].is_fair() {
            util_est_dequeue(&mut self.rqs[c].cfs, &self.tasks[t].avg);
            self.rqs[c].inputs_written();
            self.tr_util_est_cfs(c);
            let cpu = UtilEstCpu {
                capacity_orig: self.rqs[c].capacity_orig,
                util_est_fastup: true,
            };
            util_est_update(&mut self.tasks[t].avg, sleep, &cpu);
            if sleep {
                self.tr_util_est_se(c, t);
            }
            let has_curr = self.curr_is_fair(c);
            let decayed = self.update_load_avg(c, Some((t, true, is_curr)), has_curr);
            if sleep && self.tasks[t].decay_ns.is_none() && self.tasks[t].avg.util_avg >= RAMP_UTIL
            {
                let task = &self.tasks[t];
                let now = rq_clock_pelt(&self.rqs[c].clock);
                let w = scale_load(task.weight);
                let lshift = self.profile.pelt_lshift;
                let d = util_decay_ns(&task.avg, now, w, lshift, self.tables);
                self.tasks[t].decay_ns = d;
            }
            let done = self.dequeue_fair_task(c, t, sleep);
            if done {
                self.walk_groups(c, t, -1);
            }
            let idle = self.task_counts_idle(t);
            let (r, task) = (&mut self.rqs[c], &self.tasks[t]);
            if done {
                r.cfs_load_weight -= scale_load(task.weight);
            } else {
                // Delayed: still queued (its weight stays), no longer runnable.
                r.delayed.push(t);
            }
            r.nr_fair -= 1;
            r.h_nr_idle -= u32::from(idle);
            if decayed {
                self.cpufreq_update(c);
            }
        } else {
            self.update_rt(c, is_curr);
            self.rqs[c].nr_rt -= 1;
            self.rqs[c].inputs_written();
        }
        if is_curr {
            let ran = self.now.saturating_sub(self.tasks[t].slice_start);
            self.rec.run_stretch(ran);
        }
        let ucfg = self.ucfg;
        let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
        uclamp_rq_dec(&mut r.uclamp, &mut task.uclamp, &ucfg);
        r.inputs_written();
        if is_curr {
            r.curr = None;
            r.gen += 1;
        } else {
            r.queue.retain(|&q| q != t);
        }
    }

    /// Moves a queued or running task from `src` to `dst` (not rescheduling either).
    pub(super) fn migrate(&mut self, t: usize, src: usize, dst: usize) {
        self.tr_migrate(t, src, dst);
        self.dequeue(src, t, false);
        if self.tasks[t].is_fair() {
            let (r, task) = (&mut self.rqs[src], &mut self.tasks[t]);
            detach_entity_load_avg(&mut r.cfs, &task.avg, task.weight, self.tables);
            r.inputs_written();
            task.avg.last_update_time = 0;
        }
        self.enqueue(dst, t);
    }

    pub(super) fn schedule(&mut self, c: usize) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        self.rqs[c].gen += 1;
        self.rqs[c].need_resched = false;
        let prev = self.rqs[c].curr;
        if let Some(p) = self.rqs[c].curr.take() {
            if self.tasks[p].is_fair() {
                self.rqs[c].curr = Some(p);
                self.update_load_avg(c, Some((p, true, true)), true);
                self.walk_groups(c, p, 0);
                self.rqs[c].curr = None;
            } else {
                self.update_rt(c, true);
            }
            self.rqs[c].queue.push(p);
        }
        let mut pulled = false;
        loop {
            if let Some(pos) = self.pick(c, prev) {
                let n = self.rqs[c].queue.remove(pos);
                if self.tasks[n].is_fair() {
                    self.set_next_fair(c, n, prev);
                }
                let mut exit_lat = 0;
                if let Some(st) = self.rqs[c].idle.take() {
                    let since = self.unfold_ticks(c, &st);
                    if let Some(ci) = self.idle[c].as_mut() {
                        let miss = ci.exit(st.idx, since, self.now, false, self.tick_nsec as i64);
                        exit_lat = ci.exit_latency_ns(st.idx);
                        self.tr_idle_exit(c, st.idx, miss);
                    }
                    self.rqs[c].tick_stopped = false;
                }
                if self.tasks[n].is_fair() {
                    self.update_load_avg(c, Some((n, true, false)), false);
                    self.walk_groups(c, n, 0);
                } else {
                    self.update_rt(c, false);
                }
                if prev != Some(n) {
                    if let Some(p) = prev {
                        let ran = self.now.saturating_sub(self.tasks[p].slice_start);
                        self.rec.run_stretch(ran);
                    }
                    self.tasks[n].slice_start = self.now;
                }
                let task = &mut self.tasks[n];
                task.exec_start = self.now;
                if let Some(w) = task.woke_at.take() {
                    self.rec.latency(self.now + exit_lat - w);
                }
                self.rec.switch_in(n, prev);
                self.rqs[c].curr = Some(n);
                self.rqs[c].seg_start = self.now + exit_lat;
                self.arm_done(c);
                self.tr_switch(c);
                return;
            }
            if pulled || !self.sched_balance_newidle(c) {
                break;
            }
            pulled = true;
        }
        if self.rqs[c].idle.is_none() {
            let r = &mut self.rqs[c];
            update_idle_rq_clock_pelt(&mut r.clock, r.cfs.util_sum, r.rt.util_sum, 0, self.tables);
            r.idle_calls += 1;
            r.inputs_written();
            r.idle_stamp = r.clock.clock;
            self.tr_switch(c);
            self.idle_enter(c);
        }
        self.tr_switch(c);
    }

    /// The next task of `c` after `prev`: the highest RT priority (earliest queued
    /// first), else the fair class's pick; its position in the queue.
    pub(super) fn pick(&mut self, c: usize, prev: Option<usize>) -> Option<usize> {
        let mut best_rt: Option<(usize, u32)> = None;
        for (pos, &t) in self.rqs[c].queue.iter().enumerate() {
            if let Some(p) = self.tasks[t].policy.rt_prio() {
                if best_rt.is_none_or(|(_, b)| p > b) {
                    best_rt = Some((pos, p));
                }
            }
        }
        if let Some((pos, _)) = best_rt {
            return Some(pos);
        }
        let prev = prev.filter(|&p| self.tasks[p].is_fair());
        let t = self.pick_fair(c, prev)?;
        self.rqs[c].queue.iter().position(|&q| q == t)
    }

    /// The idle loop's select on `c` (which has nothing to run). The sleep length is the
    /// next timer (`tick_nohz_get_sleep_length()`): a task's sleep, timer or start delay;
    /// an `iorun` ends by the device's interrupt, which no timer announces.
    pub(super) fn idle_enter(&mut self, c: usize) {
        let now = self.now;
        if self.idle[c].as_ref().is_some_and(|ci| ci.skip_governor) {
            // One state under teo: state 0, the tick kept (see `CpuIdle::new`).
            self.rqs[c].idle = Some(IdleStay::new(0, now));
            return;
        }
        let traced = self.trace.is_some();
        let next_timer = self
            .tasks
            .iter()
            .filter(|t| t.cpu == c && matches!(t.state, TState::Sleeping | TState::New))
            .filter(|t| !t.in_iowait)
            .filter_map(|t| t.wake_at)
            .min();
        let sleep_length = next_timer.map_or(KTIME_MAX, |w| {
            i64::try_from(w.saturating_sub(now)).unwrap_or(KTIME_MAX)
        });
        let next_tick = (now / self.tick_nsec + 1) * self.tick_nsec;
        let to_tick = i64::try_from(next_tick - now).unwrap_or(KTIME_MAX);
        let util = sched_cpu_util(&self.util_rq(c), &self.pressure(c));
        let r = &mut self.rqs[c];
        let Some(ci) = self.idle[c].as_mut() else {
            r.tick_stopped = true;
            return;
        };
        let env = SelectEnv {
            tick_nsec: self.tick_nsec as i64,
            latency_req_ns: schedmath::cpuidle::PM_QOS_CPU_LATENCY_DEFAULT_NS,
            tick_stopped: r.tick_stopped,
            sleep_length_ns: sleep_length,
            delta_tick_ns: sleep_length.min(to_tick),
            now_ns: now,
            cpu_util: util,
        };
        let before = traced.then(|| ci.gov.clone());
        let sel = ci.select(&env);
        r.idle = Some(IdleStay::new(sel.idx, now));
        r.tick_stopped = r.tick_stopped || sel.stop_tick;
        self.tr_idle_select(c, &env, &sel, before);
    }
}
