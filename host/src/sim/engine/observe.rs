// SPDX-License-Identifier: GPL-2.0-only
//! The engine's trace hooks ([`crate::sim::observe`]): each reads the values the kernel
//! point just used and records them. Every hook returns at once when the run is not
//! traced; the call sites are one line each.

use schedmath::cpuidle::{Governor, IdleMiss, Selection};
use schedmath::fair::eas::FeecResult;
use schedmath::pelt::{se_runnable, SchedAvg};
use schedmath::uclamp::{uclamp_rq_util_with, UclampId};
use schedmath::util_est::{UtilEst, UTIL_AVG_UNCHANGED};

use super::*;
use crate::sim::group::ROOT;
use crate::sim::observe::{pid_of, TraceBuf};
use crate::trace::record::{
    CandidateRec, IdleSelectRec, Kind, OuRec, OuTest, PdEnergyRec, PeltCallRec, PeltFn,
    PeltSignals, PlacementRec, PlacementRule, PrevState, SugovCpuRec, SugovRec, UeLayout, IDLE_PID,
    PWR_EVENT_EXIT,
};

/// (enqueued, ewma) as LISA's util_est events print them: the one-word estimate in
/// both for v6.9+ tasks, `enqueued`/`ewma` before; the flag masked off for a task.
fn ue_pair(u: &UtilEst, task: bool) -> (u32, u32) {
    let mask = if task { !UTIL_AVG_UNCHANGED } else { u32::MAX };
    match *u {
        UtilEst::Mainline(v) if task => (v & mask, v & mask),
        UtilEst::Mainline(v) => (v, 0),
        UtilEst::PreV6_9 { enqueued, ewma } => (enqueued & mask, ewma),
    }
}

/// Records the probe record `rec` of one PELT update call and, when it decayed (the
/// kernel fires its `pelt_*_tp` tracepoint only then), the LISA event `lisa` makes of the
/// CPU and the signals after the call.
fn push_pelt(
    buf: &mut TraceBuf,
    ts: u64,
    rec: PeltCallRec,
    lisa: impl FnOnce(u32, PeltSignals) -> Kind,
) {
    let (cpu, ret, avg) = (rec.cpu, rec.ret, PeltSignals::of(&rec.after));
    buf.push(ts, cpu as usize, Kind::PeltCall(Box::new(rec)));
    if ret != 0 {
        buf.push(ts, cpu as usize, lisa(cpu, avg));
    }
}

/// The probe record of an `__update_load_avg_se()` call (`ent`) or of
/// `__update_load_avg_blocked_se()` (`None`) on CPU `c`, the entity's identity, weight
/// and queue count left for the caller (task: none, group: its cfs_rq's).
fn se_call(
    c: usize,
    now: u64,
    ent: Option<&SchedEntityPelt>,
    ret: i32,
    ue: UeLayout,
    (before, after): (&SchedAvg, &SchedAvg),
) -> PeltCallRec {
    let (func, load, runnable, running, on_rq) = match ent {
        Some(e) => (
            PeltFn::Se,
            u64::from(e.on_rq),
            se_runnable(e),
            e.is_curr,
            i32::from(e.on_rq),
        ),
        None => (PeltFn::BlockedSe, 0, 0, false, 0),
    };
    PeltCallRec {
        func,
        cpu: c as u32,
        pid: -1,
        path: String::new(),
        group: false,
        now,
        lw: ent.map_or(0, |e| e.load_weight),
        weight: 0,
        load,
        runnable,
        running,
        on_rq,
        nr_queued: -1,
        ret,
        ue,
        before: *before,
        after: *after,
    }
}

impl Engine<'_> {
    /// Starts recording (before the first event).
    pub(super) fn tr_begin(&mut self, names: &[String]) {
        let ue = match self.profile.util_est {
            schedmath::profile::UtilEstVersion::Mainline => UeLayout::Mainline,
            schedmath::profile::UtilEstVersion::PreV6_9 => UeLayout::PreV6_9,
        };
        let mut buf = TraceBuf::new(self.rqs.len(), names, self.end, ue);
        buf.uclamp = self.keys.uclamp_is_used;
        // Each CPU's starting frequency, so the trace alone gives frequency residency.
        for (c, r) in self.rqs.iter().enumerate() {
            let state = self.doms[r.domain].cur();
            buf.push(
                0,
                c,
                Kind::Frequency {
                    state,
                    cpu_id: c as u32,
                },
            );
        }
        self.trace = Some(Box::new(buf));
    }

    /// The kernel prio of task `t` (`120 + nice`, `99 − rt_priority`).
    fn prio(&self, t: usize) -> i32 {
        let task = &self.tasks[t];
        match task.policy.rt_prio() {
            Some(p) => 99 - p as i32, // 1..=99
            None => 120 + task.nice,
        }
    }

    /// `sched_switch` on `c` if its current task changed since the last one recorded.
    pub(super) fn tr_switch(&mut self, c: usize) {
        let Some(buf) = self.trace.as_deref() else {
            return;
        };
        let prev = buf.running[c];
        let (next, prio) = match self.rqs[c].curr {
            Some(t) => (pid_of(t), self.prio(t)),
            None => (IDLE_PID, 120),
        };
        if prev == next {
            return;
        }
        let state = match usize::try_from(prev - 1).ok().map(|p| &self.tasks[p]) {
            None => PrevState::Running,
            Some(p) => match p.state {
                TState::Runnable | TState::New => PrevState::Running,
                TState::Finished => PrevState::Dead,
                _ if p.in_iowait => PrevState::Uninterruptible,
                _ => PrevState::Sleeping,
            },
        };
        let now = self.now;
        if let Some(buf) = self.trace.as_deref_mut() {
            buf.switch(now, c, next, prio, state);
        }
    }

    /// `cpu_idle` exit from state `idx` on `c`, and `cpu_idle_miss` if the stay missed.
    #[inline]
    pub(super) fn tr_idle_exit(&mut self, c: usize, idx: usize, miss: IdleMiss) {
        if self.trace.is_some() {
            self.record_idle_exit(c, idx, miss);
        }
    }

    /// [`Self::tr_idle_exit`] when traced: kept out of line, so an untraced run pays one test.
    #[inline(never)]
    fn record_idle_exit(&mut self, c: usize, idx: usize, miss: IdleMiss) {
        let now = self.now;
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let (cpu_id, state) = (c as u32, idx as u32);
        if miss.above || miss.below {
            let below = miss.below;
            buf.push(
                now,
                c,
                Kind::IdleMiss {
                    cpu_id,
                    state,
                    below,
                },
            );
        }
        buf.push(
            now,
            c,
            Kind::Idle {
                state: PWR_EVENT_EXIT,
                cpu_id,
            },
        );
    }

    /// The idle governor's selection on `c` and the `cpu_idle` entry.
    pub(super) fn tr_idle_select(
        &mut self,
        c: usize,
        env: &SelectEnv,
        sel: &Selection,
        before: Option<Governor>,
    ) {
        let now = self.now;
        let nstates = self.idle[c].as_ref().map_or(0, |ci| ci.drv.state_count());
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let (governor, stats) = match &before {
            Some(Governor::Teo { version, cpu }) => {
                let bins: Vec<String> = cpu.state_bins[..nstates]
                    .iter()
                    .map(|b| format!("{}/{}", b.intercepts, b.hits))
                    .collect();
                (
                    version.name().to_string(),
                    format!(
                        "total={};tick_hits={};intercepts/hits={}",
                        cpu.total,
                        cpu.tick_hits,
                        bins.join("|")
                    ),
                )
            }
            Some(Governor::Menu(m)) => {
                let cf: Vec<String> = m.correction_factor.iter().map(|v| v.to_string()).collect();
                let iv: Vec<String> = m.intervals.iter().map(|v| v.to_string()).collect();
                (
                    "menu".to_string(),
                    format!(
                        "bucket={};correction_factor={};intervals={}",
                        m.bucket,
                        cf.join("|"),
                        iv.join("|")
                    ),
                )
            }
            None => (String::new(), String::new()),
        };
        let rec = IdleSelectRec {
            cpu: c as u32,
            governor,
            sleep_length_ns: env.sleep_length_ns,
            delta_tick_ns: env.delta_tick_ns,
            cpu_util: env.cpu_util,
            idx: sel.idx as u32,
            stop_tick: sel.stop_tick,
            rule: sel.rule,
            utilized: sel.util_queried.then_some(sel.cpu_utilized),
            stats,
        };
        buf.push(now, c, Kind::IdleSelect(Box::new(rec)));
        let (state, cpu_id) = (sel.idx as u32, c as u32);
        buf.push(now, c, Kind::Idle { state, cpu_id });
    }

    /// A `__update_load_avg_se()` / `__update_load_avg_blocked_se()` call on task `t`
    /// (cfs_rq of CPU `c`) at PELT clock `now` that started from `before` and returned
    /// `ret`: the probe record and, when it decayed, `lisa__sched_pelt_se`.
    #[inline]
    pub(super) fn tr_pelt_se(
        &mut self,
        c: usize,
        t: usize,
        now: u64,
        ent: Option<&SchedEntityPelt>,
        before: SchedAvg,
        ret: i32,
    ) {
        if self.trace.is_some() {
            self.record_pelt_se(c, t, now, ent, before, ret);
        }
    }

    /// [`Self::tr_pelt_se`] when traced: kept out of line, so an untraced run pays one test.
    #[inline(never)]
    fn record_pelt_se(
        &mut self,
        c: usize,
        t: usize,
        now: u64,
        ent: Option<&SchedEntityPelt>,
        before: SchedAvg,
        ret: i32,
    ) {
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let task = &self.tasks[t];
        let pid = pid_of(t);
        let after = task.avg;
        let lw = scale_load(task.weight);
        let rec = PeltCallRec {
            pid,
            path: self.groups.tg(task.group).path.clone(),
            lw,
            weight: task.weight,
            nr_queued: -1,
            ..se_call(c, now, ent, ret, buf.ue, (&before, &after))
        };
        push_pelt(buf, self.now, rec, |cpu, avg| Kind::PeltSe {
            cpu,
            pid,
            path: String::new(),
            avg,
        });
        if ret != 0 && buf.uclamp {
            // LISA's uclamp_util_se hangs on the same pelt_se tracepoint, tasks only.
            let rq = &self.rqs[c].uclamp;
            let (cpu, now) = (c as u32, self.now);
            let kind = Kind::UclampUtilSe {
                pid,
                cpu,
                util_avg: after.util_avg,
                uclamp_avg: uclamp_rq_util_with(rq, after.util_avg, None, &self.ucfg),
                uclamp_min: u64::from(uclamp_rq_get(rq, UclampId::Min)),
                uclamp_max: u64::from(uclamp_rq_get(rq, UclampId::Max)),
            };
            buf.push(now, c, kind);
        }
    }

    /// A `__update_load_avg_cfs_rq()` call on group `g`'s cfs_rq on `c` (the root's:
    /// `ROOT`; `has_curr`: its running argument): the probe record and, when it decayed,
    /// `lisa__sched_pelt_cfs` with the group's path (`/` for the root).
    pub(super) fn tr_pelt_grq(
        &mut self,
        c: usize,
        g: usize,
        now: u64,
        before: SchedAvg,
        has_curr: bool,
        ret: i32,
    ) {
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let r = &self.rqs[c];
        let (lw, nr, after, path) = match g {
            ROOT => (r.cfs_load_weight, r.nr_fair, &r.cfs, "/".to_string()),
            _ => match r.grq.get(g) {
                Some(gr) => (
                    gr.load_weight,
                    gr.h_nr_running,
                    &gr.avg,
                    self.groups.tg(g).path.clone(),
                ),
                None => return,
            },
        };
        let rec = PeltCallRec {
            func: PeltFn::Cfs,
            cpu: c as u32,
            pid: -1,
            path: path.clone(),
            group: false,
            now,
            lw,
            weight: 1,
            load: scale_load_down(lw),
            runnable: u64::from(nr),
            running: has_curr,
            on_rq: -1,
            nr_queued: i64::from(nr),
            ret,
            ue: buf.ue,
            before,
            after: *after,
        };
        push_pelt(buf, self.now, rec, |cpu, avg| Kind::PeltCfs {
            cpu,
            path,
            avg,
        });
    }

    /// The PELT update of group `g`'s entity on `c` (`update_load_avg()` on `tg->se[cpu]`
    /// in the enqueue/dequeue/tick walk, or from `__update_blocked_fair()` when
    /// `blocked`): `lisa__sched_pelt_se` with the group's path and the probe record.
    ///
    /// The simulator keeps no group-entity PELT (its root cfs_rq sums the tasks
    /// directly, see `sim::rq`), so the trace keeps it: the core's
    /// `__update_load_avg_se()` on the entity's weight, queue state and runnable weight
    /// as they are at the call (the kernel's `se_update_runnable()` refreshes that weight
    /// after the update), attached at its first update. The kernel's propagation of
    /// attach/detach (`update_tg_cfs_util()` & co.) is not modelled: util tracks the
    /// group's running time as its cfs_rq's does.
    pub(super) fn tr_pelt_group_se(&mut self, c: usize, g: usize, blocked: bool) {
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let (Some(gr), true) = (self.rqs[c].grq.get(g), g != ROOT) else {
            return;
        };
        let parent = self.groups.tg(g).parent;
        let parent_lut = match parent {
            ROOT => self.rqs[c].cfs.last_update_time,
            p => self.rqs[c]
                .grq
                .get(p)
                .map_or(0, |pr| pr.avg.last_update_time),
        };
        let is_curr = self.rqs[c].curr.is_some_and(|t| {
            self.tasks[t].is_fair() && self.groups.is_under(self.tasks[t].group, g)
        });
        let se = buf.group_se(c, g);
        if se.avg.last_update_time == 0 {
            // attach_entity_load_avg(): the entity starts at its cfs_rq's clock.
            se.avg.last_update_time = parent_lut;
            se.runnable_weight = u64::from(gr.h_nr_running);
            return;
        }
        if blocked && se.avg.load_avg == 0 && se.avg.util_avg == 0 {
            return; // skip_blocked_update(): nothing left to decay
        }
        let ent = SchedEntityPelt {
            load_weight: gr.se_weight,
            on_rq: gr.se_on_rq,
            is_curr,
            sched_delayed: false,
            group_runnable_weight: Some(se.runnable_weight),
        };
        let now = rq_clock_pelt(&self.rqs[c].clock);
        let before = se.avg;
        let ret = __update_load_avg_se(now, &mut se.avg, &ent, self.tables);
        let after = se.avg;
        se.runnable_weight = u64::from(gr.h_nr_running); // se_update_runnable()
        let path = self.groups.tg(g).path.clone();
        let rec = PeltCallRec {
            path: path.clone(),
            group: true,
            lw: gr.se_weight,
            weight: scale_load_down(gr.se_weight),
            nr_queued: i64::from(gr.h_nr_running),
            ..se_call(c, now, Some(&ent), ret, buf.ue, (&before, &after))
        };
        push_pelt(buf, self.now, rec, |cpu, avg| Kind::PeltSe {
            cpu,
            pid: -1,
            path,
            avg,
        });
    }

    /// A `__update_load_avg_cfs_rq()` call on `c`'s root cfs_rq (`has_curr`: its
    /// running argument).
    pub(super) fn tr_pelt_cfs(
        &mut self,
        c: usize,
        now: u64,
        before: SchedAvg,
        has_curr: bool,
        ret: i32,
    ) {
        self.tr_pelt_grq(c, ROOT, now, before, has_curr, ret);
    }

    /// `lisa__sched_util_est_cfs` of `c` (after util_est_enqueue / dequeue).
    #[inline]
    pub(super) fn tr_util_est_cfs(&mut self, c: usize) {
        if self.trace.is_some() {
            self.record_util_est_cfs(c);
        }
    }

    /// [`Self::tr_util_est_cfs`] when traced: kept out of line, so an untraced run pays one test.
    #[inline(never)]
    fn record_util_est_cfs(&mut self, c: usize) {
        let now = self.now;
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let cfs = &self.rqs[c].cfs;
        let (enqueued, ewma) = ue_pair(&cfs.util_est, false);
        let kind = Kind::UtilEstCfs {
            cpu: c as u32,
            enqueued,
            ewma,
            util: cfs.util_avg,
        };
        buf.push(now, c, kind);
    }

    /// `lisa__sched_util_est_se` of task `t` on `c` (after util_est_update at a sleep).
    pub(super) fn tr_util_est_se(&mut self, c: usize, t: usize) {
        let now = self.now;
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let avg = &self.tasks[t].avg;
        let (enqueued, ewma) = ue_pair(&avg.util_est, true);
        let kind = Kind::UtilEstSe {
            cpu: c as u32,
            pid: pid_of(t),
            enqueued,
            ewma,
            util: avg.util_avg,
        };
        buf.push(now, c, kind);
    }

    /// `sched_waking` of `t` (on its previous CPU) and, when it moves, the
    /// `sched_migrate_task` of `set_task_cpu()`.
    pub(super) fn tr_waking(&mut self, t: usize, dst: usize) {
        if self.trace.is_none() {
            return;
        }
        let (pid, prio, prev) = (pid_of(t), self.prio(t), self.tasks[t].cpu);
        let new = self.tasks[t].state == TState::New;
        let now = self.now;
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let target_cpu = dst as u32;
        buf.push(
            now,
            prev,
            Kind::Wakeup {
                which: 0,
                pid,
                prio,
                target_cpu,
            },
        );
        if !new && dst != prev {
            let (orig_cpu, dest_cpu) = (prev as u32, dst as u32);
            buf.push(
                now,
                prev,
                Kind::Migrate {
                    pid,
                    prio,
                    orig_cpu,
                    dest_cpu,
                },
            );
        }
    }

    /// `sched_wakeup` / `sched_wakeup_new` of `t`, queued on `c`.
    pub(super) fn tr_wakeup(&mut self, t: usize, c: usize, new: bool) {
        if self.trace.is_none() {
            return;
        }
        let (pid, prio, now) = (pid_of(t), self.prio(t), self.now);
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let which = if new { 2 } else { 1 };
        let target_cpu = c as u32;
        buf.push(
            now,
            c,
            Kind::Wakeup {
                which,
                pid,
                prio,
                target_cpu,
            },
        );
    }

    /// `sched_migrate_task` of `t` from `src` to `dst` (load balance, misfit, affinity).
    pub(super) fn tr_migrate(&mut self, t: usize, src: usize, dst: usize) {
        if self.trace.is_none() || src == dst {
            return;
        }
        let (pid, prio, now) = (pid_of(t), self.prio(t), self.now);
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let (orig_cpu, dest_cpu) = (src as u32, dst as u32);
        buf.push(
            now,
            dst,
            Kind::Migrate {
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            },
        );
    }

    /// A schedutil update of domain `d` asked by `c` with the domain's rq views (policy
    /// order, as the update left them), the frequency before being `old`: the decision
    /// record and, on a change, `cpu_frequency` for each CPU of the policy.
    pub(super) fn tr_sugov(&mut self, d: usize, c: usize, flags: u32, old: u32) {
        let now = self.now;
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let (dom, view) = (&self.doms[d], &self.sugov_views[d]);
        let up = dom.last.unwrap_or_default();
        let cpus = dom
            .cpus
            .iter()
            .zip(view)
            .zip(&dom.sg_cpus)
            .map(|((&cc, v), s)| SugovCpuRec {
                cpu: cc as u32,
                util_cfs: v.util_cfs_boost,
                util_rt: v.util_rt,
                util_dl: v.util_dl,
                util_irq: v.util_irq,
                uclamp_min: v.uclamp_min,
                uclamp_max: v.uclamp_max,
                util: s.util,
                bw_min: s.bw_min,
                iowait_boost: s.iowait_boost,
            })
            .collect();
        let cur = dom.cur();
        let rec = SugovRec {
            domain: d as u32,
            cpu: c as u32,
            flags,
            cpus,
            should_update: up.should_update,
            raw_freq: dom.sg.cached_raw_freq,
            resolved_freq: up.next_f_resolved,
            hold: up.hold,
            next_freq: up.next_f,
            committed: up.committed,
            old_freq: old,
            cur_freq: cur,
        };
        buf.push(now, c, Kind::Sugov(Box::new(rec)));
        if cur != old {
            for &cc in &dom.cpus {
                buf.push(
                    now,
                    c,
                    Kind::Frequency {
                        state: cur,
                        cpu_id: cc as u32,
                    },
                );
            }
        }
    }

    /// A wake-up placement of `t` (previous CPU `prev`) to `dst` by `rule` (the path and
    /// the core's reason), with the CPU views and task view the placement read and, for
    /// EAS, what `find_energy_efficient_cpu()` computed.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn tr_place(
        &mut self,
        t: usize,
        prev: usize,
        dst: usize,
        why: (PlacementRule, &'static str),
        views: &[CpuView],
        p: &TaskView,
        feec: Option<&FeecResult>,
    ) {
        if self.trace.is_some() {
            self.record_place(t, prev, dst, why, views, p, feec);
        }
    }

    /// [`Self::tr_place`] when traced: kept out of line, so an untraced run pays one test.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn record_place(
        &mut self,
        t: usize,
        prev: usize,
        dst: usize,
        (rule, why): (PlacementRule, &'static str),
        views: &[CpuView],
        p: &TaskView,
        feec: Option<&FeecResult>,
    ) {
        let now = self.now;
        let uclamp_used = self.keys.uclamp_is_used;
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        let tested = |c: usize| feec.and_then(|r| r.cpus.iter().find(|f| f.cpu == c));
        let candidates = views
            .iter()
            .enumerate()
            .map(|(c, v)| {
                let util = cpu_util_cfs(&v.util);
                let capacity = v.capacity.cpu_capacity;
                let fits = task_fits_cpu(
                    p.util.util_avg,
                    p.util.util_est,
                    p.uclamp_min,
                    p.uclamp_max,
                    uclamp_used,
                    &v.capacity,
                );
                let (fits, spare) = match tested(c) {
                    Some(f) => (f.fits, f.spare),
                    None => (i32::from(fits), capacity.saturating_sub(util)),
                };
                CandidateRec {
                    cpu: c as u32,
                    allowed: p.allowed.contains(&c),
                    idle: v.idle || v.sched_idle,
                    fits,
                    spare,
                    util,
                    capacity,
                }
            })
            .collect();
        let pd_energy = feec.map_or_else(Vec::new, |r| {
            r.pds
                .iter()
                .map(|d| PdEnergyRec {
                    first_cpu: d.first_cpu as u32,
                    base: d.base_energy,
                    with_prev: d.prev_energy,
                    max_spare_cpu: d.max_spare_cap_cpu.map(|c| c as u32),
                    with_max_spare: d.max_spare_energy,
                })
                .collect()
        });
        let rec = PlacementRec {
            pid: pid_of(t),
            prev_cpu: prev as u32,
            dst_cpu: dst as u32,
            rule,
            why,
            util_avg: p.util.util_avg,
            util_est: u64::from(p.util.util_est),
            uclamp_min: p.uclamp_min,
            uclamp_max: p.uclamp_max,
            candidates,
            pd_energy,
        };
        buf.push(now, prev, Kind::Placement(Box::new(rec)));
    }

    /// The root domain's overutilized flag changed (`lisa__sched_overutilized` and the
    /// decision record: CPU `c`'s values under `test`).
    pub(super) fn tr_ou(&mut self, c: Option<usize>, test: OuTest) {
        if self.trace.is_none() {
            return;
        }
        let now = self.now;
        let on = self.rd.overutilized;
        let at = c.unwrap_or(0);
        let v = self.ou_cpu(at);
        let span = if self.rqs.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.rqs.len()) - 1
        };
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        buf.push(
            now,
            at,
            Kind::Overutilized {
                overutilized: on,
                span,
            },
        );
        let rec = OuRec {
            overutilized: on,
            cpu: c.map_or(-1, |c| c as i32),
            test,
            util_avg: v.cfs_util_avg,
            util_est: u64::from(v.cfs_util_est),
            capacity: v.capacity.cpu_capacity,
            uclamp_min: v.rq_uclamp_min,
            uclamp_max: v.rq_uclamp_max,
        };
        buf.push(now, at, Kind::OuChange(rec));
    }

    /// `lisa__sched_cpu_capacity` of `c` (after `update_cpu_capacity()`).
    pub(super) fn tr_capacity(&mut self, c: usize) {
        let (now, capacity) = (self.now, self.rqs[c].cpu_capacity);
        let Some(buf) = self.trace.as_deref_mut() else {
            return;
        };
        buf.push(
            now,
            c,
            Kind::CpuCapacity {
                cpu: c as u32,
                capacity,
            },
        );
    }

    /// A forked task's comm.
    pub(super) fn tr_fork(&mut self, name: &str) {
        if let Some(buf) = self.trace.as_deref_mut() {
            buf.add_task(name);
        }
    }
}
