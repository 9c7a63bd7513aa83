// SPDX-License-Identifier: GPL-2.0-only
//! Task activations: wake-up CPU selection, the program walk at each step end, and
//! wake-up preemption.

use super::*;

impl Engine<'_> {
    pub(super) fn select_cpu(&mut self, t: usize) -> usize {
        // The placement reads the task's mask while the trace hooks need the engine
        // mutably: the mask is lent out for the call (a move, no allocation).
        // The paths that read every CPU build the views into a reused buffer, lent out
        // the same way; the fast path reads the CPUs it tests only ([`RqViews`]).
        let allowed = std::mem::take(&mut self.tasks[t].allowed);
        let mut views = std::mem::take(&mut self.cpu_view);
        views.clear();
        let c = self.select_cpu_allowed(t, &allowed, &mut views);
        self.tasks[t].allowed = allowed;
        self.cpu_view = views;
        c
    }

    /// `select_task_rq()` → `select_task_rq_fair()` as [`crate::sim::placement`]
    /// describes it, each decision a core call.
    fn select_cpu_allowed(
        &mut self,
        t: usize,
        allowed: &[usize],
        views: &mut Vec<CpuView>,
    ) -> usize {
        let uclamp_used = self.keys.uclamp_is_used;
        if self.tasks[t].state == TState::New {
            let views = self.all_views(views);
            // Fork balancing (SD_BALANCE_FORK) takes the slow path, EAS or not;
            // wake_up_new_task() first sets recent_used_cpu to the parent's CPU.
            let p = self.task_view(t, allowed);
            let sel = self.profile.sched_idle_select;
            let this_cpu = self.tasks[t].cpu;
            self.tasks[t].recent_used_cpu = Some(this_cpu);
            let c = sched_balance_find_dst_cpu(views, &self.sd, &p, this_cpu, sel, uclamp_used);
            let c = select_fallback_rq(c, allowed);
            self.tr_place(
                t,
                this_cpu,
                c,
                (PlacementRule::Fork, "idlest"),
                views,
                &p,
                None,
            );
            return c;
        }
        let prev = self.tasks[t].cpu;
        // sync_entity_load_avg(): decay the sleeping task to its old cfs_rq's clock.
        if self.tasks[t].is_fair() {
            let lut = self.rqs[prev].cfs.last_update_time;
            let task = &mut self.tasks[t];
            if task.avg.last_update_time != 0 {
                let before = task.avg;
                let ret = __update_load_avg_blocked_se(
                    lut,
                    &mut task.avg,
                    scale_load(task.weight),
                    self.tables,
                );
                self.tr_pelt_se(prev, t, lut, None, before, ret);
            }
        }
        let p = self.task_view(t, allowed);
        if !self.tasks[t].is_fair() {
            let sd = SisDomains {
                asym_active: false,
                asym_span: None,
                llc_span: Some(&self.llc_span),
            };
            let r = select_idle_sibling(&self.rq_views(), &p, prev, prev, None, &sd, uclamp_used);
            let c = select_fallback_rq(r.cpu, allowed);
            let views = self.traced_views(views);
            self.tr_place(
                t,
                prev,
                c,
                (PlacementRule::Rt, r.rule.name()),
                views,
                &p,
                None,
            );
            return c;
        }
        let asym_span = self.asym_spans.get(prev).and_then(Option::as_deref);
        if self.keys.sched_energy_enabled && !self.rd.overutilized {
            let views = self.all_views(views);
            // The platform reader refuses more than NR_CPUS CPUs, so the record fits.
            if let Ok(r) =
                find_energy_efficient_cpu(views, &self.pds, asym_span, &p, prev, uclamp_used)
            {
                if let Some(c) = r.target {
                    let c = select_fallback_rq(c, allowed);
                    let why = (PlacementRule::Eas, r.rule.name());
                    self.tr_place(t, prev, c, why, views, &p, Some(&r));
                    return c;
                }
            }
        }
        let sd = SisDomains {
            asym_active: self.asym,
            asym_span,
            llc_span: Some(&self.llc_span),
        };
        let recent = self.tasks[t].recent_used_cpu;
        let r = select_idle_sibling(&self.rq_views(), &p, prev, prev, recent, &sd, uclamp_used);
        self.tasks[t].recent_used_cpu = r.recent_used_cpu;
        let c = select_fallback_rq(r.cpu, allowed);
        let views = self.traced_views(views);
        self.tr_place(
            t,
            prev,
            c,
            (PlacementRule::Idle, r.rule.name()),
            views,
            &p,
            None,
        );
        c
    }

    /// The task as placement reads it.
    fn task_view<'a>(&self, t: usize, allowed: &'a [usize]) -> TaskView<'a> {
        TaskView {
            util: self.task_util(t),
            uclamp_min: self.task_clamp(t, UclampId::Min),
            uclamp_max: self.task_clamp(t, UclampId::Max),
            allowed,
        }
    }

    /// Every CPU's view, built into `views` by the first path of a placement that reads
    /// them all (the fork walk, EAS, a trace record): one pass over the runqueues and idle
    /// states side by side (no index, no bounds check per field).
    fn all_views<'v>(&self, views: &'v mut Vec<CpuView>) -> &'v [CpuView] {
        if views.is_empty() {
            let cpus = self.rqs.iter().zip(&self.idle).enumerate();
            views.extend(cpus.map(|(c, (r, ci))| cpu_view(c, r, ci.as_ref())));
        }
        views
    }

    /// [`Self::all_views`] for the placement record when the run is traced; none (the
    /// hook records nothing) when not.
    fn traced_views<'v>(&self, views: &'v mut Vec<CpuView>) -> &'v [CpuView] {
        if self.trace.is_some() {
            self.all_views(views)
        } else {
            &[]
        }
    }

    /// The runqueues as the fast path reads them: a CPU's view built when it is read.
    fn rq_views(&self) -> RqViews<'_> {
        RqViews {
            rqs: &self.rqs,
            idle: &self.idle,
        }
    }

    /// Runs the task's program from its current step until it must run, sleep or end,
    /// counting the timer expiries it finds passed as deadline misses.
    pub(super) fn start_step(&mut self, t: usize) -> StepOutcome {
        let (outcome, misses) = self.tasks[t].walk(self.now);
        for _ in 0..misses {
            self.rec.deadline_miss(t);
        }
        outcome
    }

    /// rt-app's `fork` event (`create_thread()` from the parent's thread): a new thread
    /// of template `k`, named `NAME-IND-NNNN` (IND: the thread's index, NNNN: this
    /// template's fork count, as `thread_data_set_unique_name()`). It is new: its first
    /// activation, now (or at its `delay` counted from the start of the use case, as
    /// rt-app's `t_zero + delay`), takes the fork path as every first activation does:
    /// `wake_up_new_task()` → `select_task_rq(SD_BALANCE_FORK)` →
    /// [`crate::sim::placement`]'s `sched_balance_find_dst_cpu()`, then
    /// `post_init_entity_util_avg()` on the chosen CPU at the enqueue. rt-app stops at
    /// `FORKS_LIMIT` (1024) forks of one template: further forks do nothing here.
    ///
    /// Simplification: the child starts with its own task object's policy, clamps,
    /// affinity and group (rt-app sets them first thing in the new thread), not the
    /// parent's that the kernel copies at `sched_fork()` for the fork placement.
    pub(super) fn fork(&mut self, k: u32) {
        const FORKS_LIMIT: u32 = 1024;
        let k = k as usize;
        let (Some(tpl), Some(&nf)) = (self.templates.get(k), self.nforks.get(k)) else {
            return;
        };
        if nf >= FORKS_LIMIT {
            return;
        }
        let n = self.platform.nr_cpus();
        let Ok(allowed) = allowed_cpus(tpl.cpus.as_deref(), n) else {
            return; // checked for every template by Engine::new
        };
        let ind = self.tasks.len();
        let mut spec = tpl.clone();
        spec.name = format!("{}-{ind}-{nf:04}", tpl.name);
        spec.fork_template = false;
        let first = spec.phases[0].attrs.clone();
        let chain = first.group.as_ref().unwrap_or(&spec.group).clone();
        let Ok(group) = self.groups.insert_chain(&chain) else {
            return; // inserted for every template by Engine::new
        };
        let at = self.now.max(spec.delay_ns);
        let name = spec.name.clone();
        let mut task = Task::new(spec, self.profile.util_est, allowed);
        task.rng = SplitMix64::stream(self.seed, ind as u64);
        task.apply(&first, n);
        task.group = group;
        task.forked = true;
        self.tasks.push(task);
        self.rec.add_task(&name, n);
        self.tr_fork(&name);
        self.nforks[k] = nf + 1;
        self.push(at, Ev::Wake(ind));
    }

    pub(super) fn sleep(&mut self, t: usize, until: u64) {
        let task = &mut self.tasks[t];
        task.state = TState::Sleeping;
        task.wake_at = Some(until);
        self.push(until, Ev::Wake(t));
    }

    pub(super) fn wake(&mut self, t: usize) {
        self.tasks[t].wake_at = None;
        if self.tasks[t].in_iowait {
            self.rec.io_completed();
        }
        if self.tasks[t].finish_after_sleep {
            self.tasks[t].state = TState::Finished;
            return;
        }
        match self.advance(t, false) {
            StepOutcome::Run => {}
            StepOutcome::Sleep(until) => return self.sleep(t, until),
            StepOutcome::Block | StepOutcome::Sync(_) => {
                // A task that blocks before its first enqueue stays new (fork-time PELT
                // init and placement happen when it first runs).
                if self.tasks[t].state != TState::New {
                    self.tasks[t].state = TState::Blocked;
                }
                return;
            }
            StepOutcome::Finished => {
                if self.tasks[t].se.sched_delayed {
                    let c = self.tasks[t].cpu;
                    self.finish_delayed(c, t);
                }
                self.tasks[t].state = TState::Finished;
                return;
            }
        }
        if self.tasks[t].se.sched_delayed {
            if !self.tasks[t].attrs_pending {
                return self.requeue_delayed(t);
            }
            // sched_setattr() on a delayed task dequeues it first.
            let c = self.tasks[t].cpu;
            self.acct(c);
            self.update_rq_clock(c);
            self.update_curr(c);
            self.finish_delayed(c, t);
        }
        self.apply_pending(t);
        let c = self.select_cpu(t);
        self.tr_waking(t, c);
        let prev = self.tasks[t].cpu;
        if self.tasks[t].state != TState::New && c != prev && self.tasks[t].is_fair() {
            self.migrate_task_rq_fair(t, prev);
            let (r, task) = (&mut self.rqs[prev], &mut self.tasks[t]);
            detach_entity_load_avg(&mut r.cfs, &task.avg, task.weight, self.tables);
            r.inputs_written();
            task.avg.last_update_time = 0;
        }
        self.tasks[t].woke_at = Some(self.now);
        let new = self.tasks[t].state == TState::New;
        self.enqueue(c, t);
        self.tr_wakeup(t, c, new);
        self.check_preempt(c, t);
    }

    /// Applies the current phase's attributes if a phase start left them pending (the
    /// task is off its runqueue).
    pub(super) fn apply_pending(&mut self, t: usize) {
        if !std::mem::take(&mut self.tasks[t].attrs_pending) {
            return;
        }
        let n = self.rqs.len();
        let task = &mut self.tasks[t];
        let attrs = task.spec.phases[task.phase].attrs.clone();
        task.apply(&attrs, n);
        if let Some(chain) = &attrs.group {
            self.tasks[t].group = self.group_id(chain);
        }
    }

    /// `wakeup_preempt()`.
    pub(super) fn check_preempt(&mut self, c: usize, t: usize) {
        let Some(cur) = self.rqs[c].curr else {
            return self.schedule(c);
        };
        self.update_curr(c);
        let (w, k) = (&self.tasks[t], &self.tasks[cur]);
        let preempt = match (w.policy.rt_prio(), k.policy.rt_prio()) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => self.wakeup_preempt_fair(c, cur, t),
        };
        if preempt || self.rqs[c].need_resched {
            self.schedule(c);
        }
    }

    pub(super) fn done(&mut self, c: usize, gen: u64) {
        if gen != self.rqs[c].gen {
            return;
        }
        let Some(t) = self.rqs[c].curr else { return };
        self.acct(c);
        self.tasks[t].remaining = 0;
        let more = self.tasks[t].next_step();
        let outcome = if more {
            self.advance(t, true)
        } else {
            StepOutcome::Finished
        };
        match outcome {
            StepOutcome::Run if self.tasks[t].attrs_pending => {
                // sched_setattr()/sched_setaffinity() on the running task: off the rq,
                // change, and back through wake-up placement.
                self.dequeue(c, t, false);
                if self.tasks[t].is_fair() {
                    let (r, task) = (&mut self.rqs[c], &mut self.tasks[t]);
                    detach_entity_load_avg(&mut r.cfs, &task.avg, task.weight, self.tables);
                    r.inputs_written();
                    task.avg.last_update_time = 0;
                }
                self.tasks[t].yielded = false;
                self.apply_pending(t);
                let dst = self.select_cpu(t);
                self.tr_migrate(t, c, dst);
                self.enqueue(dst, t);
                self.schedule(c);
                if dst != c {
                    self.check_preempt(dst, t);
                }
            }
            StepOutcome::Run if self.tasks[t].yielded => self.yield_curr(c),
            StepOutcome::Run => self.arm_done(c),
            StepOutcome::Block | StepOutcome::Sync(_) => {
                self.dequeue(c, t, true);
                self.tasks[t].state = TState::Blocked;
                self.schedule(c);
            }
            StepOutcome::Sleep(until) => {
                self.dequeue(c, t, true);
                self.sleep(t, until);
                self.schedule(c);
            }
            StepOutcome::Finished => {
                self.dequeue(c, t, true);
                if self.tasks[t].se.sched_delayed {
                    self.finish_delayed(c, t); // an exiting task is not kept queued
                }
                self.tasks[t].state = TState::Finished;
                self.schedule(c);
            }
        }
    }
}

/// What the placement reads about CPU `c` (runqueue `r`, idle states `ci`).
fn cpu_view(c: usize, r: &Rq, ci: Option<&CpuIdle>) -> CpuView {
    CpuView {
        util: util_rq_of(r, c),
        capacity: capacity_of(r),
        util_rt: r.rt.util_avg,
        util_irq: r.irq.util_avg,
        rt_runnable: r.nr_rt > 0,
        uclamp_min: rq_clamp_of(r, UclampId::Min),
        uclamp_max: rq_clamp_of(r, UclampId::Max),
        uclamp_idle: uclamp_rq_is_idle(&r.uclamp),
        idle: r.is_idle(),
        sched_idle: r.is_sched_idle(),
        exit_latency: match (r.idle, ci) {
            (Some(st), Some(ci)) => Some(ci.exit_latency_ns(st.idx)),
            _ => None,
        },
        idle_stamp: r.idle_stamp,
        load: r.cfs.load_avg,
        nr_running: r.nr_running(),
    }
}

/// The CPUs' views built when read ([`WakeCpus`]): `select_idle_sibling()` usually
/// returns after testing the previous CPU, so building all of them first (~90
/// instructions each) cost more than the search itself.
struct RqViews<'a> {
    rqs: &'a [Rq],
    idle: &'a [Option<CpuIdle>],
}

impl WakeCpus for RqViews<'_> {
    fn view(&self, cpu: usize) -> Option<CpuView> {
        let (r, ci) = (self.rqs.get(cpu)?, self.idle.get(cpu)?);
        Some(cpu_view(cpu, r, ci.as_ref()))
    }
}
