// SPDX-License-Identifier: GPL-2.0-only
//! The fair class on each cfs_rq (the root and every group's, per CPU), through the
//! core's arithmetic (`schedmath::fair`): EEVDF under `mainline` (`FairClass::Eevdf`:
//! `place_entity()` with lag, `update_deadline()`, `__pick_eevdf()` with RUN_TO_PARITY,
//! wake-up preemption by deadline with PREEMPT_SHORT, custom slices, delayed dequeue) and
//! the 6.1 CFS under `fair-cfs` (`FairClass::CfsV6_1`: the leftmost vruntime,
//! `check_preempt_tick()` against `sched_slice()`, `wakeup_preempt_entity()` with the
//! wake-up granularity, GENTLE_FAIR_SLEEPERS placement, vruntime made relative to
//! `min_vruntime` across migrations). One code path; `match self.fair.class` where the
//! kernels differ.
//!
//! A cfs_rq keeps only its `min_vruntime`; its EEVDF sums (`avg_vruntime`, `avg_load`),
//! `nr_queued` and `load` are rebuilt from its queued entities whenever read
//! ([`Engine::cfs_view`]): the kernel's incremental sums are the same wrapping sums, so
//! the values are identical. Tree order among equal keys is the runqueue's queue order.
//!
//! Simplifications: group entities are never delayed themselves (a group whose tasks are
//! all delayed keeps its entity queued until they are dequeued); no NEXT/LAST buddies
//! (6.1) and no NEXT_BUDDY (EEVDF, off by default); a delayed task's runnable PELT stays 0
//! until its final dequeue or wake-up and its group cfs_rqs keep counting it runnable.

use super::*;
use crate::sim::group::{Ent, ROOT};
use schedmath::fair::cfs::{
    self, check_preempt_tick, wakeup_preempt_entity, CfsCurr, CfsFeatures, CfsPlaceEntity,
    SliceEnv, SliceLevel,
};
use schedmath::fair::eevdf::{
    self, __pick_eevdf, avg_vruntime_add, cfs_rq_min_slice, place_entity, protect_slice,
    set_protect_slice, update_deadline, update_entity_lag, update_min_vruntime, CfsRq, Curr,
    EevdfFeatures, SchedEntity,
};
use schedmath::fair::rq::{dequeue_entity, requeue_delayed_entity, DequeueFlags, EevdfConfig};
use schedmath::fair::sysctl::{update_sysctl, FairSysctl, TunableScaling};
use schedmath::fair::weight::{calc_delta_fair, update_load_add};
use schedmath::profile::FairClass;

/// The fair class's tunables for a run.
#[derive(Debug, Clone, Copy)]
pub(super) struct FairParams {
    /// EEVDF or the 6.1 CFS.
    pub class: FairClass,
    /// `update_sysctl()` for the platform's CPU count (SCHED_TUNABLESCALING_LOG).
    pub sysctl: FairSysctl,
    /// EEVDF's base slice, tick and features.
    pub eevdf: EevdfConfig,
}

impl FairParams {
    /// The tunables of `profile` on `ncpus` CPUs with a `tick_nsec` tick.
    pub fn new(profile: &Profile, ncpus: usize, tick_nsec: u64) -> Self {
        let n = u32::try_from(ncpus).unwrap_or(u32::MAX);
        let sysctl = update_sysctl(n, TunableScaling::Log, profile);
        FairParams {
            class: profile.fair,
            sysctl,
            eevdf: EevdfConfig {
                base_slice: u64::from(sysctl.sysctl_sched_base_slice),
                normalized_base_slice: u64::from(
                    schedmath::fair::sysctl::NORMALIZED_SYSCTL_SCHED_BASE_SLICE,
                ),
                tick_nsec,
                features: EevdfFeatures::default(),
            },
        }
    }
}

/// One cfs_rq as the fair class reads it at an instant.
pub(super) struct CfsView {
    /// Its sums, `nr_queued`, `load` and `min_vruntime`.
    pub cfs: CfsRq,
    /// `cfs_rq->curr` when still queued.
    pub curr: Option<Ent>,
    /// The other queued entities (the tree), in queue order.
    pub tree: EntList,
}

/// Entities held inline before an [`EntList`] moves to the heap.
const ENT_INLINE: usize = 8;

/// The entities of a [`CfsView`]'s tree: up to [`ENT_INLINE`] inline, more on the heap.
/// Views are built at every `update_curr()`, pick and placement, and a cfs_rq rarely
/// holds more than a few entities: a heap `Vec` here cost one allocation per view.
pub(super) struct EntList {
    len: usize,
    inline: [Ent; ENT_INLINE],
    heap: Vec<Ent>,
}

impl EntList {
    fn new() -> Self {
        EntList {
            len: 0,
            inline: [Ent::Task(0); ENT_INLINE],
            heap: Vec::new(),
        }
    }

    fn push(&mut self, e: Ent) {
        if self.len < ENT_INLINE {
            self.inline[self.len] = e;
        } else {
            if self.len == ENT_INLINE {
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(e);
        }
        self.len += 1;
    }

    /// The entities, in push order.
    pub fn as_slice(&self) -> &[Ent] {
        if self.len <= ENT_INLINE {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Ent> {
        self.as_slice().iter()
    }
}

impl Engine<'_> {
    pub(super) fn se(&self, c: usize, e: Ent) -> &SchedEntity {
        match e {
            Ent::Task(t) => &self.tasks[t].se,
            Ent::Group(g) => &self.rqs[c].grq[g].se,
        }
    }

    pub(super) fn se_mut(&mut self, c: usize, e: Ent) -> &mut SchedEntity {
        match e {
            Ent::Task(t) => &mut self.tasks[t].se,
            Ent::Group(g) => &mut self.rqs[c].grq[g].se,
        }
    }

    fn curr_of(&self, c: usize, curr: Option<Ent>) -> Option<Curr> {
        curr.map(|e| self.se(c, e).as_curr())
    }

    /// Cfs_rq `level` of `c` with `curr_task`'s entity there as `cfs_rq->curr`: the
    /// queued group entities whose parent it is and the queued tasks of that group.
    pub(super) fn cfs_view(&self, c: usize, level: usize, curr_task: Option<usize>) -> CfsView {
        let mut tree = EntList::new();
        let (cfs, curr) = self.cfs_walk(c, level, curr_task, |e, _| tree.push(e));
        CfsView { cfs, curr, tree }
    }

    /// [`Self::cfs_view`]'s sums and curr only, for the readers that do not look at the
    /// tree (placement, dequeue, lag, reweight): no entity list is built or moved.
    pub(super) fn cfs_sums(
        &self,
        c: usize,
        level: usize,
        curr_task: Option<usize>,
    ) -> (CfsRq, Option<Ent>) {
        self.cfs_walk(c, level, curr_task, |_, _| {})
    }

    /// [`Self::cfs_view`] without keeping the tree: its sums and curr, with `f` called on
    /// each tree entity in tree order (the sums are wrapping, so their order is free).
    fn cfs_walk(
        &self,
        c: usize,
        level: usize,
        curr_task: Option<usize>,
        mut f: impl FnMut(Ent, &SchedEntity),
    ) -> (CfsRq, Option<Ent>) {
        let mut cfs = CfsRq {
            min_vruntime: self.cfs_min_vruntime(c, level),
            ..CfsRq::default()
        };
        let add = |cfs: &mut CfsRq, se: &SchedEntity| {
            update_load_add(&mut cfs.load, se.load.weight);
            cfs.nr_queued += 1;
        };
        let curr = self.cfs_tree(c, level, curr_task, |e, se| {
            avg_vruntime_add(&mut cfs, se);
            add(&mut cfs, se);
            f(e, se);
        });
        if let Some(e) = curr {
            add(&mut cfs, self.se(c, e));
        }
        (cfs, curr)
    }

    /// The entities of cfs_rq `level` of `c` with `curr_task`'s entity there as
    /// `cfs_rq->curr`: `f` on each tree entity in tree order; returns curr.
    fn cfs_tree(
        &self,
        c: usize,
        level: usize,
        curr_task: Option<usize>,
        mut f: impl FnMut(Ent, &SchedEntity),
    ) -> Option<Ent> {
        let r = &self.rqs[c];
        let curr = curr_task
            .filter(|&t| self.tasks[t].is_fair())
            .and_then(|t| self.entity_at(level, t))
            .filter(|&e| self.se(c, e).on_rq);
        // The queue, then the delayed list. `curr_task` itself needs no visit: queued
        // here it is this cfs_rq's curr (its own entity at its own level), so never in
        // the tree. A task listed twice counts once (the lists before it are scanned).
        let mut visit = |t: usize, before: &[usize], before2: &[usize]| {
            let task = &self.tasks[t];
            let e = Ent::Task(t);
            let queued = task.group == level && task.is_fair() && task.se.on_rq;
            if queued && Some(e) != curr && !before.iter().chain(before2).any(|&x| x == t) {
                f(e, &task.se);
            }
        };
        for (i, &t) in r.queue.iter().enumerate() {
            visit(t, &r.queue[..i], &[]);
        }
        for (i, &t) in r.delayed.iter().enumerate() {
            visit(t, &r.queue, &r.delayed[..i]);
        }
        for g in 1..r.grq.len() {
            let e = Ent::Group(g);
            if r.grq[g].se.on_rq && self.groups.tg(g).parent == level && Some(e) != curr {
                f(e, &r.grq[g].se);
            }
        }
        curr
    }

    /// `update_min_vruntime()` of cfs_rq `level` of `c` (rq curr as its curr); returns
    /// the cfs_rq's `nr_queued`. Only `min_vruntime` is kept, so the EEVDF sums the
    /// kernel corrects there are not built (`update_curr()` runs this at every tick).
    pub(super) fn update_min_vruntime_at(&mut self, c: usize, level: usize) -> u32 {
        let (mut root, mut nr_tree): (Option<u64>, u32) = (None, 0);
        let curr = self.cfs_tree(c, level, self.rqs[c].curr, |_, se| {
            nr_tree += 1;
            root = Some(root.map_or(se.vruntime, |m| {
                schedmath::fair::min_vruntime(m, se.vruntime)
            }));
        });
        let mut cfs = CfsRq {
            min_vruntime: self.cfs_min_vruntime(c, level),
            ..CfsRq::default()
        };
        let curr_se = curr.map(|e| self.se(c, e).as_curr());
        update_min_vruntime(&mut cfs, curr_se, root, &self.profile);
        self.set_cfs_min_vruntime(c, level, cfs.min_vruntime);
        nr_tree + u32::from(curr.is_some())
    }

    /// `update_curr()` on every cfs_rq of `c`'s running fair task `t`, which ran `delta`
    /// ns of task time: each entity on its path advances by `calc_delta_fair()`, EEVDF
    /// renews a passed deadline and asks for a reschedule when its cfs_rq holds another
    /// entity and the deadline passed or curr left its protected slice; `min_vruntime`
    /// follows.
    pub(super) fn update_curr_fair(&mut self, c: usize, t: usize, delta: u64) {
        if delta == 0 {
            return;
        }
        let base = self.fair.eevdf.base_slice;
        let eevdf = self.fair.class == FairClass::Eevdf;
        let (mut e, mut level) = (Ent::Task(t), self.tasks[t].group);
        loop {
            if let Ent::Group(g) = e {
                let gr = &mut self.rqs[c].grq[g];
                gr.sum_exec += delta;
            }
            let se = self.se_mut(c, e);
            se.vruntime = se
                .vruntime
                .wrapping_add(calc_delta_fair(delta, &mut se.load));
            let resched = eevdf && update_deadline(se, base);
            // `t` is the rq's curr: the view is the one `nr_queued` is read from.
            let nr = self.update_min_vruntime_at(c, level);
            if eevdf && nr > 1 && (resched || !protect_slice(self.se(c, e))) {
                self.rqs[c].need_resched = true;
            }
            if level == ROOT {
                break;
            }
            e = Ent::Group(level);
            level = self.groups.tg(level).parent;
        }
    }

    /// `sched_slice()`'s levels and environment for entity `e` of cfs_rq `level` (6.1).
    fn slice_levels(&self, c: usize, e: Ent, level: usize) -> (Vec<SliceLevel>, SliceEnv) {
        let curr = self.rqs[c].curr;
        let v = self.cfs_view(c, level, curr);
        let idle = v
            .tree
            .iter()
            .chain(v.curr.iter())
            .filter(|&&x| self.se_is_idle(x))
            .count();
        let env = SliceEnv {
            cfs_nr_running: v.cfs.nr_queued,
            cfs_idle_nr_running: idle as u32, // at most the queued entities
            rq_h_nr_running: self.rqs[c].nr_fair,
            se_idle: self.se_is_idle(e),
        };
        let (mut levels, mut e, mut level, mut load) = (Vec::new(), e, level, v.cfs.load.weight);
        loop {
            let se = self.se(c, e);
            levels.push(SliceLevel {
                se_weight: se.load.weight,
                se_on_rq: se.on_rq,
                cfs_weight: load,
            });
            if level == ROOT {
                break;
            }
            e = Ent::Group(level);
            level = self.groups.tg(level).parent;
            load = self.cfs_sums(c, level, curr).0.load.weight;
        }
        (levels, env)
    }

    /// `place_entity()` of entity `e` (not queued yet) on cfs_rq `level` of `c`, then
    /// queued; `initial`: a new task (ENQUEUE_INITIAL / 6.1's START_DEBIT).
    pub(super) fn place_fair_entity(&mut self, c: usize, e: Ent, level: usize, initial: bool) {
        let (cfs, vcurr) = self.cfs_sums(c, level, self.rqs[c].curr);
        match self.fair.class {
            FairClass::Eevdf => {
                let curr = self.curr_of(c, vcurr);
                let (f, base) = (self.fair.eevdf.features, self.fair.eevdf.base_slice);
                // A trap (division by zero) leaves the entity where the arithmetic got.
                let _ = place_entity(&cfs, curr, self.se_mut(c, e), initial, &f, base);
            }
            FairClass::CfsV6_1 => {
                let min = cfs.min_vruntime;
                if let Ent::Task(t) = e {
                    let task = &mut self.tasks[t];
                    if std::mem::take(&mut task.cfs_relative) {
                        task.se.vruntime = task.se.vruntime.wrapping_add(min);
                    } else if initial {
                        task.se.vruntime = min;
                    }
                }
                let (levels, env) = self.slice_levels(c, e, level);
                let idle = self.se_is_idle(e);
                let sysctl = self.fair.sysctl;
                let se = self.se_mut(c, e);
                let mut p = CfsPlaceEntity {
                    vruntime: se.vruntime,
                    exec_start: 0, // no sleep in a simulation reaches the long-sleeper bound
                    idle,
                    load: se.load,
                };
                let f = CfsFeatures::default();
                if cfs::place_entity(min, &mut p, initial, 0, &levels, &env, &f, &sysctl).is_some()
                {
                    se.vruntime = p.vruntime;
                }
            }
        }
        self.se_mut(c, e).on_rq = true;
    }

    /// `dequeue_entity()` of fair task `t` from its cfs_rq on `c`: false when EEVDF delays
    /// it (a sleeping task that is not eligible stays queued, `sched_delayed`).
    pub(super) fn dequeue_fair_task(&mut self, c: usize, t: usize, sleep: bool) -> bool {
        let level = self.tasks[t].group;
        let is_curr = self.rqs[c].curr == Some(t);
        match self.fair.class {
            FairClass::Eevdf => {
                let (mut cfs, vcurr) = self.cfs_sums(c, level, self.rqs[c].curr);
                let (curr, cfg) = (self.curr_of(c, vcurr), self.fair.eevdf);
                let flags = DequeueFlags {
                    sleep,
                    ..DequeueFlags::default()
                };
                let se = &mut self.tasks[t].se;
                // A trap leaves the entity as the arithmetic left it, dequeued.
                if !dequeue_entity(&mut cfs, curr, se, is_curr, flags, &cfg).unwrap_or(true) {
                    return false;
                }
                se.on_rq = false;
            }
            FairClass::CfsV6_1 => {
                let min = self.cfs_min_vruntime(c, level);
                let task = &mut self.tasks[t];
                if !sleep {
                    task.se.vruntime = task.se.vruntime.wrapping_sub(min);
                    task.cfs_relative = true;
                }
                task.se.on_rq = false;
            }
        }
        self.update_min_vruntime_at(c, level);
        true
    }

    /// The group entity of `g` on `c` in its parent `p`: queued (`on` and not `was`:
    /// placed), dequeued (its lag saved) or reweighted to `shares` while queued.
    pub(super) fn update_group_entity(
        &mut self,
        c: usize,
        g: usize,
        was: bool,
        on: bool,
        shares: u64,
    ) {
        let p = self.groups.tg(g).parent;
        let e = Ent::Group(g);
        let eevdf = self.fair.class == FairClass::Eevdf;
        let curr = self.rqs[c].curr;
        let is_curr =
            curr.is_some_and(|k| self.tasks[k].is_fair() && self.entity_at(p, k) == Some(e));
        if on && !was {
            self.rqs[c].grq[g].se.load = schedmath::fair::LoadWeight::new(shares);
            self.place_fair_entity(c, e, p, false);
        } else if was && !on {
            if eevdf {
                let (cfs, vcurr) = self.cfs_sums(c, p, curr);
                let (cv, tick) = (self.curr_of(c, vcurr), self.fair.eevdf.tick_nsec);
                let _ = update_entity_lag(&cfs, cv, &mut self.rqs[c].grq[g].se, tick);
            }
            self.rqs[c].grq[g].se.on_rq = false;
            self.update_min_vruntime_at(c, p);
        } else if was && on && self.rqs[c].grq[g].se.load.weight != shares && eevdf {
            let (mut cfs, vcurr) = self.cfs_sums(c, p, curr);
            let cv = self.curr_of(c, vcurr);
            let cfg = self.fair.eevdf;
            let se = &mut self.rqs[c].grq[g].se;
            let _ = eevdf::reweight_entity(
                &mut cfs,
                cv,
                se,
                is_curr,
                shares,
                &cfg.features,
                cfg.base_slice,
                cfg.tick_nsec,
            );
            self.update_min_vruntime_at(c, p);
        }
        self.rqs[c].grq[g].se.load = schedmath::fair::LoadWeight::new(shares);
    }

    /// The fair pick on `c` with `prev` (its previous task, still queued or not) as each
    /// cfs_rq's curr: from the root down, `__pick_eevdf()` (EEVDF) or the leftmost
    /// vruntime (6.1) until a task; a delayed task picked is dequeued for good and the
    /// pick starts over. Returns the task.
    pub(super) fn pick_fair(&mut self, c: usize, prev: Option<usize>) -> Option<usize> {
        'again: loop {
            let mut level = ROOT;
            loop {
                let v = self.cfs_view(c, level, prev);
                let picked = match self.fair.class {
                    FairClass::Eevdf => {
                        let curr = v.curr.map(|e| (e, self.se(c, e)));
                        let tree = v.tree.iter().map(|&e| (e, self.se(c, e)));
                        __pick_eevdf(&v.cfs, curr, tree, true)
                    }
                    FairClass::CfsV6_1 => {
                        let curr = v.curr.map(|e| (e, self.se(c, e).vruntime));
                        let tree = v.tree.iter().map(|&e| (e, self.se(c, e).vruntime));
                        cfs::pick_next_entity(curr, tree)
                    }
                }?;
                match picked {
                    Ent::Group(g) => level = g,
                    Ent::Task(t) if self.tasks[t].se.sched_delayed => {
                        self.finish_delayed(c, t);
                        continue 'again;
                    }
                    Ent::Task(t) => return Some(t),
                }
            }
        }
    }

    /// `set_next_entity()` for the entities on `next`'s path that were not on `prev`'s:
    /// EEVDF's protected slice (`set_protect_slice()` with the cfs_rq's smallest slice),
    /// 6.1's `prev_sum_exec_runtime`.
    pub(super) fn set_next_fair(&mut self, c: usize, next: usize, prev: Option<usize>) {
        let (mut e, mut level) = (Ent::Task(next), self.tasks[next].group);
        loop {
            let was_curr = prev
                .is_some_and(|p| self.tasks[p].is_fair() && self.entity_at(level, p) == Some(e));
            if was_curr {
                return; // the levels above are shared too
            }
            if let Ent::Group(g) = e {
                let gr = &mut self.rqs[c].grq[g];
                gr.prev_sum_exec = gr.sum_exec;
            }
            if self.fair.class == FairClass::Eevdf {
                // The tree's smallest slice (no curr here): a walk, no view.
                let mut min: Option<u64> = None;
                self.cfs_tree(c, level, None, |_, se| {
                    min = Some(min.map_or(se.slice, |m| m.min(se.slice)));
                });
                let min_slice = cfs_rq_min_slice(None, min);
                let (rtp, norm) = (
                    self.fair.eevdf.features.run_to_parity,
                    self.fair.eevdf.normalized_base_slice,
                );
                set_protect_slice(self.se_mut(c, e), min_slice, rtp, norm);
            }
            if level == ROOT {
                return;
            }
            e = Ent::Group(level);
            level = self.groups.tg(level).parent;
        }
    }

    /// 6.1 `entity_tick()`'s `check_preempt_tick()` on each cfs_rq of `c`'s running task
    /// `t` holding more than one entity: true when one says reschedule.
    pub(super) fn check_preempt_tick_fair(&self, c: usize, t: usize) -> bool {
        let (mut e, mut level) = (Ent::Task(t), self.tasks[t].group);
        loop {
            let v = self.cfs_view(c, level, Some(t));
            if v.cfs.nr_queued > 1 {
                let (sum, prev) = match e {
                    Ent::Task(t) => (self.task_ns(c, self.tasks[t].slice_start, self.now), 0),
                    Ent::Group(g) => {
                        let gr = &self.rqs[c].grq[g];
                        (gr.sum_exec, gr.prev_sum_exec)
                    }
                };
                let curr = CfsCurr {
                    vruntime: self.se(c, e).vruntime,
                    sum_exec_runtime: sum,
                    prev_sum_exec_runtime: prev,
                };
                let leftmost = v
                    .tree
                    .iter()
                    .map(|&x| self.se(c, x).vruntime)
                    .reduce(schedmath::fair::min_vruntime);
                if let Some(left) = leftmost {
                    let (levels, env) = self.slice_levels(c, e, level);
                    if check_preempt_tick(&curr, left, &levels, &env, &self.fair.sysctl)
                        .is_some_and(|p| p.resched)
                    {
                        return true;
                    }
                }
            }
            if level == ROOT {
                return false;
            }
            e = Ent::Group(level);
            level = self.groups.tg(level).parent;
        }
    }

    /// The class part of `check_preempt_wakeup_fair()` once curr's entity `se` and the
    /// woken entity `pse` share a cfs_rq: EEVDF's pick with PREEMPT_SHORT (which may
    /// change curr's protection), or 6.1's `wakeup_preempt_entity() == 1`.
    pub(super) fn wakeup_preempt_class(
        &mut self,
        c: usize,
        se: Ent,
        pse: Ent,
        level: usize,
    ) -> bool {
        match self.fair.class {
            FairClass::Eevdf => {
                let v = self.cfs_view(c, level, self.rqs[c].curr);
                if v.curr != Some(se) {
                    return false;
                }
                let min = v.tree.iter().map(|&x| self.se(c, x).slice).min();
                let min_slice = cfs_rq_min_slice(Some(self.se(c, se).slice), min);
                let f = self.fair.eevdf.features;
                let mut cur = *self.se(c, se);
                let p = *self.se(c, pse);
                let preempt = eevdf::check_preempt_wakeup_fair(
                    &v.cfs,
                    (se, &mut cur),
                    (pse, &p),
                    v.tree.iter().map(|&x| (x, self.se(c, x))),
                    min_slice,
                    &f,
                );
                *self.se_mut(c, se) = cur;
                preempt
            }
            FairClass::CfsV6_1 => {
                let (a, mut b) = (*self.se(c, se), *self.se(c, pse));
                wakeup_preempt_entity(a.vruntime, b.vruntime, &mut b.load, &self.fair.sysctl) == 1
            }
        }
    }

    /// Finishes the delayed dequeue of task `t` on `c` (picked, or about to change or end):
    /// its PELT sees it queued but not runnable, it leaves its cfs_rq (DELAY_ZERO cuts a
    /// positive lag), its groups and the root's load.
    pub(super) fn finish_delayed(&mut self, c: usize, t: usize) {
        let has_curr = self.curr_is_fair(c);
        self.update_load_avg(c, Some((t, true, false)), has_curr);
        let level = self.tasks[t].group;
        let (mut cfs, vcurr) = self.cfs_sums(c, level, self.rqs[c].curr);
        let (curr, cfg) = (self.curr_of(c, vcurr), self.fair.eevdf);
        let flags = DequeueFlags {
            sleep: true,
            delayed: true,
            ..DequeueFlags::default()
        };
        let se = &mut self.tasks[t].se;
        let _ = dequeue_entity(&mut cfs, curr, se, false, flags, &cfg);
        se.on_rq = false;
        se.sched_delayed = false;
        self.rqs[c].delayed.retain(|&q| q != t);
        self.update_min_vruntime_at(c, level);
        self.walk_groups(c, t, -1);
        let w = scale_load(self.tasks[t].weight);
        let r = &mut self.rqs[c];
        r.cfs_load_weight = r.cfs_load_weight.saturating_sub(w);
    }

    /// A delayed task wakes where it is queued (`ttwu_runnable()` → ENQUEUE_DELAYED):
    /// `requeue_delayed_entity()`, runnable again, then wake-up preemption.
    pub(super) fn requeue_delayed(&mut self, t: usize) {
        let c = self.tasks[t].cpu;
        self.enqueue_task_start(c, t);
        util_est_enqueue(&mut self.rqs[c].cfs, &self.tasks[t].avg);
        self.rqs[c].inputs_written();
        let level = self.tasks[t].group;
        let (mut cfs, vcurr) = self.cfs_sums(c, level, self.rqs[c].curr);
        let (curr, cfg) = (self.curr_of(c, vcurr), self.fair.eevdf);
        let _ = requeue_delayed_entity(&mut cfs, curr, &mut self.tasks[t].se, false, &cfg);
        let idle = self.task_counts_idle(t);
        let r = &mut self.rqs[c];
        r.delayed.retain(|&q| q != t);
        r.queue.push(t);
        r.nr_fair += 1;
        r.h_nr_idle += u32::from(idle);
        let task = &mut self.tasks[t];
        task.state = TState::Runnable;
        task.woke_at = Some(self.now);
        self.check_preempt(c, t);
    }

    /// `yield_task_fair()`: EEVDF pushes curr's deadline one slice further; 6.1 skips
    /// it (its vruntime goes behind its queued peers, standing for the skip buddy).
    pub(super) fn yield_fair(&mut self, c: usize, t: usize) {
        match self.fair.class {
            FairClass::Eevdf => {
                let nr = self.cfs_sums(c, self.tasks[t].group, Some(t)).0.nr_queued;
                if nr > 1 {
                    let se = &mut self.tasks[t].se;
                    let dv = calc_delta_fair(se.slice, &mut se.load);
                    se.deadline = se.deadline.wrapping_add(dv);
                }
            }
            FairClass::CfsV6_1 => {
                let last = self.rqs[c]
                    .queue
                    .iter()
                    .filter(|&&q| {
                        self.tasks[q].is_fair() && self.tasks[q].group == self.tasks[t].group
                    })
                    .map(|&q| self.tasks[q].se.vruntime)
                    .reduce(schedmath::fair::max_vruntime);
                if let Some(v) = last {
                    let se = &mut self.tasks[t].se;
                    se.vruntime = schedmath::fair::max_vruntime(se.vruntime, v);
                }
            }
        }
    }

    /// `migrate_task_rq_fair()` of a waking task leaving `prev`: the 6.1 CFS makes its
    /// vruntime relative to the cfs_rq it leaves (EEVDF carries the lag instead).
    pub(super) fn migrate_task_rq_fair(&mut self, t: usize, prev: usize) {
        if self.fair.class == FairClass::CfsV6_1 && !self.tasks[t].cfs_relative {
            let min = self.cfs_min_vruntime(prev, self.tasks[t].group);
            let task = &mut self.tasks[t];
            task.se.vruntime = task.se.vruntime.wrapping_sub(min);
            task.cfs_relative = true;
        }
    }
}
