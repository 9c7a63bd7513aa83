// SPDX-License-Identifier: GPL-2.0-only
//! The periodic tick: PELT, capacity, schedutil, overutilized, misfit migration and
//! slice preemption on busy CPUs; tick-kept idle exits and blocked-load decay on idle
//! ones; the root-domain load-balance pass and the EM estimate.

use super::*;
use schedmath::profile::FairClass;

impl Engine<'_> {
    pub(super) fn tick(&mut self) {
        let now = self.now;
        let estimate = self.eas_estimate();
        self.rec.eas_estimate(now, estimate);
        self.rec.util_sample(&self.tasks);
        for c in 0..self.rqs.len() {
            match self.rqs[c].curr {
                Some(t) => self.tick_busy(c, t),
                None => self.tick_idle(c),
            }
        }
        let before = self.rd.overutilized;
        let first = (0..self.rqs.len())
            .position(|c| cpu_overutilized(&self.profile, self.keys, &self.ou_cpu(c)));
        update_sd_lb_overutilized(self.keys, &mut self.rd, true, first.is_some());
        self.set_ou_from(before, first, OuTest::LoadBalance);
        self.trigger_load_balance();
        self.push(now + self.tick_nsec, Ev::Tick);
    }

    pub(super) fn tick_busy(&mut self, c: usize, t: usize) {
        self.acct(c);
        self.update_rq_clock(c);
        self.update_curr(c);
        let fair = self.tasks[t].is_fair();
        if fair {
            self.update_load_avg(c, Some((t, true, true)), true);
            self.walk_groups(c, t, 0);
            if !self.groups.is_empty()
                && self.now.saturating_sub(self.rqs[c].last_group_update) >= BLOCKED_UPDATE_NS
            {
                self.decay_groups(c);
            }
        } else {
            self.update_rt(c, true);
        }
        self.rqs[c].cpu_capacity = update_cpu_capacity(&self.capacity(c), &self.pressure(c));
        self.tr_capacity(c);
        self.cpufreq_update(c);
        if !fair {
            if self.rqs[c]
                .queue
                .iter()
                .any(|&q| self.tasks[q].policy.rt_prio() > self.tasks[t].policy.rt_prio())
            {
                self.resched_curr_from_tick(c);
            }
            return;
        }
        self.check_ou(c);
        if self.asym && self.misfit_migrate(c, t) {
            return;
        }
        // EEVDF: update_curr() asked for it; 6.1: check_preempt_tick() on each level.
        let resched = match self.fair.class {
            FairClass::Eevdf => self.rqs[c].need_resched,
            FairClass::CfsV6_1 => self.check_preempt_tick_fair(c, t),
        };
        if resched {
            self.resched_curr_from_tick(c);
        }
    }

    /// `resched_curr()` from the tick: the tick only flags the CPU; `__schedule()` runs
    /// on the interrupt's exit, after the softirqs (the load balance), the platform's
    /// `tick_resched_latency_ns` later by the rq clock, so put_prev's `update_curr()`
    /// and PELT and the next task's `exec_start` (its slice's start) are at that clock.
    /// A 6.1 slice one ns short of the tick then lasts two ticks, as on the lab's guest.
    fn resched_curr_from_tick(&mut self, c: usize) {
        if self.tick_resched_ns == 0 {
            return self.schedule(c);
        }
        self.rqs[c].need_resched = true;
        self.push(self.now + self.tick_resched_ns, Ev::TickResched(c));
    }

    /// The tick interrupt's exit on `c`: `__schedule()` unless something scheduled
    /// since (a sleep, a wake-up preemption: the flag is cleared).
    pub(super) fn tick_resched(&mut self, c: usize) {
        if self.rqs[c].need_resched {
            self.schedule(c);
        }
    }

    /// Misfit: the running task does not fit `c`; move it to the idle allowed CPU with
    /// the largest capacity noticeably above `c`'s.
    pub(super) fn misfit_migrate(&mut self, c: usize, t: usize) -> bool {
        let p = self.task_util(t);
        let (umin, umax) = (
            self.task_clamp(t, UclampId::Min),
            self.task_clamp(t, UclampId::Max),
        );
        if task_fits_cpu(
            p.util_avg,
            p.util_est,
            umin,
            umax,
            self.keys.uclamp_is_used,
            &self.capacity(c),
        ) {
            return false;
        }
        let cap = self.rqs[c].capacity_orig;
        let dst = self.tasks[t]
            .allowed
            .iter()
            .copied()
            .filter(|&d| d != c && self.rqs[d].is_idle())
            .filter(|&d| capacity_greater(self.rqs[d].capacity_orig, cap))
            .max_by_key(|&d| (self.rqs[d].capacity_orig, Reverse(d)));
        let Some(dst) = dst else { return false };
        self.migrate(t, c, dst);
        self.schedule(c);
        self.schedule(dst);
        true
    }

    pub(super) fn tick_idle(&mut self, c: usize) {
        if let Some(st) = self.rqs[c].idle {
            if !self.rqs[c].tick_stopped {
                if self.idle[c].as_ref().is_some_and(|ci| ci.skip_governor) {
                    self.fold_tick(c);
                } else {
                    self.acct(c);
                    if let Some(ci) = self.idle[c].as_mut() {
                        let miss = ci.exit(st.idx, st.since, self.now, true, self.tick_nsec as i64);
                        self.tr_idle_exit(c, st.idx, miss);
                    }
                    self.rqs[c].idle = None;
                    self.idle_enter(c);
                }
            }
        }
        if self.now.saturating_sub(self.rqs[c].last_blocked_update) >= BLOCKED_UPDATE_NS {
            self.rqs[c].last_blocked_update = self.now;
            self.update_rq_clock(c);
            // `__update_blocked_others()`: rt and irq; then `__update_blocked_fair()`.
            let mut decayed = self.update_rt(c, false);
            let r = &mut self.rqs[c];
            r.inputs_written();
            decayed |= update_irq_load_avg(
                r.clock.clock,
                &mut r.irq,
                0,
                r.freq_scale,
                r.capacity_orig,
                self.tables,
            ) != 0;
            decayed |= self.update_load_avg(c, None, false);
            self.decay_groups(c);
            if decayed {
                self.cpufreq_update(c);
            }
        }
    }

    /// The tick wakes `c` (idle, tick kept, no governor) and it goes back to the same state
    /// (`idle_enter()` would pick state 0 again): the exit and re-entry are folded into the
    /// stay, to be counted when it ends ([`Self::unfold_ticks`]). The energy of the stay is
    /// an exact integer sum however its interval is split, no governor reads the
    /// statistics meanwhile, and only a trace (which keeps the governor) records each exit.
    fn fold_tick(&mut self, c: usize) {
        let now = self.now;
        if let Some(st) = self.rqs[c].idle.as_mut() {
            if st.ticks == 0 {
                st.first_tick = now;
            }
            debug_assert_eq!(now, st.first_tick + st.ticks * self.tick_nsec);
            st.ticks += 1;
        }
    }

    /// The tick-time exits folded into stay `st` of `c`, counted as they happened: the
    /// first ends the part before it, each later one a whole tick period. Returns when the
    /// stay's last part began (its entry, or the last folded tick).
    pub(super) fn unfold_ticks(&mut self, c: usize, st: &IdleStay) -> u64 {
        if st.ticks == 0 {
            return st.since;
        }
        let period = self.tick_nsec;
        if let Some(ci) = self.idle[c].as_mut() {
            ci.exit(st.idx, st.since, st.first_tick, true, period as i64);
            ci.exit_repeated(st.idx, period, st.ticks - 1);
        }
        st.first_tick + (st.ticks - 1) * period
    }

    /// The EM's estimate of the platform's power now, in `cost × util` units summed over
    /// performance domains (`em_cpu_energy()` of each with its current utilizations).
    /// Each CPU's `effective_cpu_util()` input is schedutil's view of it (every field the
    /// same, its `cpu_util_cfs()` kept between ticks while the signals hold) without the
    /// two fields only schedutil has. A CPU whose inputs were not written since the last
    /// estimate (an idle CPU between its blocked-load updates) keeps its result.
    pub(super) fn eas_estimate(&mut self) -> u128 {
        let uclamp_used = self.keys.uclamp_is_used;
        let Engine {
            rqs,
            util_memo,
            em_util,
            platform,
            ..
        } = self;
        let mut total = 0u128;
        for d in &platform.domains {
            let Some(em) = d.em.as_ref() else { continue };
            let (mut sum, mut max) = (0u64, 0u64);
            for &c in &d.cpus {
                let r = &rqs[c];
                let util = |memo: &mut UtilMemo| {
                    let e = effective_cpu_util(&EffectiveUtilInput {
                        uclamp_used,
                        util_cfs_boost: 0,
                        idle_calls: 0,
                        ..sugov_rq(r, c, memo)
                    });
                    (e.ret, sugov_effective_cpu_perf(e.ret, e.min, e.max))
                };
                if r.em_stale {
                    em_util[c] = util(&mut util_memo[c]);
                    rqs[c].em_stale = false;
                } else {
                    // Every write of an input marks the CPU stale: the tests check it.
                    debug_assert_eq!(em_util[c], util(&mut { util_memo[c] }));
                }
                let (ret, perf) = em_util[c];
                sum += ret;
                max = max.max(perf);
            }
            total += u128::from(em_cpu_energy(em, max.min(d.capacity), sum, d.capacity).energy);
        }
        total
    }
}
