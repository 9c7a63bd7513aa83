// SPDX-License-Identifier: GPL-2.0-only
//! Task groups in the inferred replay (kernel/sched/fair.c, CONFIG_FAIR_GROUP_SCHED, one
//! level of cgroups under the root).
//!
//! A task of a group sits on its group's cfs_rq on its CPU; the group's sched_entity sits
//! on the root cfs_rq with the weight calc_group_shares() gives it (the group's shares ×
//! this CPU's part of `tg->load_avg`). Every update of a grouped task walks up as
//! update_load_avg() does for each level (for_each_sched_entity): the task, its group
//! cfs_rq (update_tg_load_avg() when it decayed), the group entity, the root cfs_rq, then
//! propagate_entity_load_avg() of the group entity into the root. Attach, detach and
//! removed load on a group cfs_rq queue their runnable sum for that propagation
//! (add_tg_cfs_propagate()). After the event's enqueue/dequeue/tick the group entity is
//! reweighted (update_cfs_group(): v6.1 always calls reweight_entity(), v6.12 only when
//! the shares changed and never for an empty group).
//!
//! Which group: a forked task inherits its parent's; a task moved by a write to
//! `cgroup.procs` moves where `cgroup_attach_task` places it ([`super::cgroup`]), or,
//! in a trace without that event, at its first answer-key record that
//! names the new group (the move: detach from the old cfs_rq, attach to the new one, as
//! sched_move_task() does). The groups' shares are their `cpu.weight` from the capture's
//! `meta.json` (`cgroups`), else the default 100.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use schedmath::fair::group::{
    calc_group_shares, sched_weight_from_cgroup, update_tg_load_avg, TgLoadContrib,
    CGROUP_WEIGHT_DFL, CGROUP_WEIGHT_MAX, CGROUP_WEIGHT_MIN,
};
use schedmath::math::scale_load;
use schedmath::pelt::propagate::{
    add_tg_cfs_propagate, propagate_entity_load_avg, removed_prop_runnable_sum,
    reweight_entity_load_avg, Propagate,
};
use schedmath::pelt::{
    __update_load_avg_se, update_cfs_rq_load_avg, CfsRqRemoved, SchedAvg, SchedEntityPelt,
};
use schedmath::profile::{FairClass, Profile};

use super::{compare, explain, Cpu, InferReplay};
use crate::replay::stats::EntityStats;
use crate::replay::EntityKey;
use crate::trace::event::PeltCall;

/// Group entities and cfs_rqs kept (one per group and CPU).
const MAX_GROUP_RQS: usize = 4096;

/// One group's cfs_rq and entity on one CPU.
#[derive(Default)]
pub(super) struct GroupRq {
    pub cfs: Option<SchedAvg>,
    pub removed: CfsRqRemoved,
    prop: Propagate,
    contrib: TgLoadContrib,
    se: Option<SchedAvg>,
    /// The entity's scaled `load.weight`.
    se_weight: u64,
    cfs_stats: EntityStats,
    se_stats: EntityStats,
}

impl GroupRq {
    /// update_tg_load_avg() of this group cfs_rq at `now`: the change of `tg->load_avg`.
    fn update_tg_load(&mut self, now: u64, profile: &Profile) -> i64 {
        let Some(cfs) = self.cfs else {
            return 0;
        };
        let mut tg = 0i64;
        update_tg_load_avg(
            false,
            true,
            now,
            cfs.load_avg,
            &mut self.contrib,
            &mut tg,
            profile,
        );
        tg
    }
}

/// The task groups of the replay.
#[derive(Default)]
pub(super) struct Groups {
    /// Scaled `tg->shares` per group path.
    shares: BTreeMap<String, u64>,
    /// `tg->load_avg` per group path.
    tg_load: BTreeMap<String, i64>,
    pub rqs: BTreeMap<(u32, String), GroupRq>,
    /// The group of each grouped task (a task not here is in the root group).
    of_task: HashMap<i32, String>,
    /// update_tg_load_avg()'s variant (v6.1: no rate limit).
    profile: Profile,
    /// v6.1's update_cfs_group() reweights even when the shares did not change, and an
    /// empty group too.
    always_reweight: bool,
    /// Group rqs whose entity update_cfs_group() reweights after the current event.
    pending: BTreeSet<(u32, String)>,
    /// Whether the updates of the current step are an enqueue/dequeue/tick (which call
    /// update_cfs_group()) rather than a put_prev/set_next.
    pub reweight: bool,
    /// A queued task moved into a group whose group entity the delayed-dequeue model
    /// still has to enqueue: (pid, CPU, trace time).
    eevdf_pending: Option<(i32, u32, u64)>,
}

/// `cpu.weight` per group path from the capture's `meta.json` (`{"cgroups": {"/fg":
/// {"cpu.weight": 200, ...}}}`), next to the trace. Empty when there is none.
pub fn shares_from_meta(trace: &Path) -> anyhow::Result<BTreeMap<String, u64>> {
    let Some((meta, v)) = crate::replay::read_meta(trace)? else {
        return Ok(BTreeMap::new());
    };
    let mut out = BTreeMap::new();
    if let Some(groups) = v.get("cgroups").and_then(|g| g.as_object()) {
        for (path, g) in groups {
            let w = g
                .get("cpu.weight")
                .map_or(Some(CGROUP_WEIGHT_DFL), |w| w.as_u64());
            let Some(w) = w.filter(|w| (CGROUP_WEIGHT_MIN..=CGROUP_WEIGHT_MAX).contains(w)) else {
                anyhow::bail!(
                    "{}: cgroups.{path}.cpu.weight: not a weight in {CGROUP_WEIGHT_MIN}..={CGROUP_WEIGHT_MAX}",
                    meta.display()
                );
            };
            out.insert(path.clone(), w);
        }
    }
    Ok(out)
}

impl Groups {
    /// Groups with `cpu.weight` per path.
    pub fn new(weights: &BTreeMap<String, u64>) -> Self {
        let mut g = Groups {
            reweight: true,
            ..Groups::default()
        };
        g.set_weights(weights);
        g
    }

    /// The groups' `cpu.weight` per path.
    pub fn set_weights(&mut self, weights: &BTreeMap<String, u64>) {
        self.shares = weights
            .iter()
            .map(|(p, &w)| (p.clone(), scale_load(sched_weight_from_cgroup(w))))
            .collect();
    }

    /// The traced kernel's variants.
    pub fn set_kernel(&mut self, major_minor: Option<(u32, u32)>) {
        let old = major_minor.is_some_and(|v| v < (6, 6));
        self.always_reweight = old;
        self.profile.fair = if old {
            FairClass::CfsV6_1
        } else {
            FairClass::Eevdf
        };
    }

    /// The group of `pid`, `None` for the root group.
    pub fn path(&self, pid: i32) -> Option<String> {
        self.of_task.get(&pid).cloned()
    }

    /// sched_process_fork: the child starts in its parent's group.
    pub fn fork(&mut self, parent: i32, child: i32) {
        match self.of_task.get(&parent).cloned() {
            Some(p) => self.of_task.insert(child, p),
            None => self.of_task.remove(&child),
        };
    }

    /// `pid` is now in group `path` (`/`: the root group).
    pub(super) fn set(&mut self, pid: i32, path: &str) {
        match path {
            "/" => self.of_task.remove(&pid),
            p => self.of_task.insert(pid, p.to_string()),
        };
    }

    fn tg_shares(&self, path: &str) -> u64 {
        self.shares
            .get(path)
            .copied()
            .unwrap_or(scale_load(sched_weight_from_cgroup(CGROUP_WEIGHT_DFL)))
    }

    fn rq(&mut self, cpu: u32, path: &str) -> Option<&mut GroupRq> {
        let key = (cpu, path.to_string());
        if !self.rqs.contains_key(&key) && self.rqs.len() >= MAX_GROUP_RQS {
            return None;
        }
        Some(self.rqs.entry(key).or_default())
    }
}

/// The cfs_rq a task of group `path` (`None`: root) sits on on `cpu`: its average and its
/// removed load.
pub(super) fn rq_of<'a>(
    cpus: &'a mut BTreeMap<u32, Cpu>,
    groups: &'a mut Groups,
    cpu: u32,
    path: Option<&str>,
) -> Option<(&'a mut Option<SchedAvg>, &'a mut CfsRqRemoved)> {
    match path {
        None => cpus.get_mut(&cpu).map(|c| (&mut c.cfs, &mut c.removed)),
        Some(p) => groups.rq(cpu, p).map(|g| (&mut g.cfs, &mut g.removed)),
    }
}

impl InferReplay {
    /// A group's cfs_rq inputs on `cpu`: (scaled weight sum, queued tasks, one of them
    /// runs).
    fn group_inputs(&self, cpu: u32, path: &str) -> (u64, u32, bool) {
        let curr = self.cpus.get(&cpu).and_then(|c| c.curr).unwrap_or(0);
        let mut w = 0u64;
        let mut n = 0u32;
        let mut running = false;
        for (pid, t) in &self.tasks {
            let queued = t.cpu == cpu && t.on_rq && !t.detached && t.weight.is_some();
            if queued && self.groups.of_task.get(pid).map(String::as_str) == Some(path) {
                w += scale_load(t.weight_or_nice0());
                n += 1;
                running |= *pid == curr;
            }
        }
        (w, n, running)
    }

    /// The root cfs_rq's weight correction on `cpu`: (weights of the queued group
    /// entities, weights of the grouped tasks counted as if they sat on the root).
    pub(super) fn root_group_weight(&self, cpu: u32) -> (u64, u64) {
        let mut tasks = 0u64;
        let mut queued: BTreeSet<&str> = BTreeSet::new();
        for (pid, t) in &self.tasks {
            if t.cpu == cpu && t.on_rq && !t.detached && t.weight.is_some() {
                if let Some(p) = self.groups.of_task.get(pid) {
                    tasks += scale_load(t.weight_or_nice0());
                    queued.insert(p);
                }
            }
        }
        let ses = queued
            .iter()
            .filter_map(|p| self.groups.rqs.get(&(cpu, p.to_string())))
            .map(|g| g.se_weight)
            .sum();
        (ses, tasks)
    }

    fn group_se_pelt(&self, cpu: u32, path: &str, weight: u64) -> SchedEntityPelt {
        let (_, n, running) = self.group_inputs(cpu, path);
        SchedEntityPelt {
            load_weight: weight,
            on_rq: n > 0,
            is_curr: running,
            sched_delayed: false,
            group_runnable_weight: Some(u64::from(n)),
        }
    }

    /// update_load_avg() of the levels below the root for a task of group `path` at rq
    /// clock `now`: the group cfs_rq (folding removed load, update_tg_load_avg() when it
    /// decayed), then the group entity on the root. The root's own update and the
    /// propagation ([`InferReplay::group_propagate`]) follow.
    pub(super) fn group_levels(&mut self, cpu: u32, path: &str, now: u64) {
        let t = self.tables;
        let (w, n, running) = self.group_inputs(cpu, path);
        let se_in = self.group_se_pelt(cpu, path, 0);
        let profile = self.groups.profile;
        let Some(g) = self.groups.rq(cpu, path) else {
            return;
        };
        let se = SchedEntityPelt {
            load_weight: g.se_weight,
            ..se_in
        };
        let mut decayed = false;
        if let Some(cfs) = g.cfs.as_mut().filter(|c| now >= c.last_update_time) {
            if let Some(r) = removed_prop_runnable_sum(&g.removed, cfs, t) {
                add_tg_cfs_propagate(&mut g.prop, r);
            }
            decayed = update_cfs_rq_load_avg(now, cfs, &mut g.removed, w, n, running, t);
        }
        let tg_delta = if decayed {
            g.update_tg_load(now, &profile)
        } else {
            0
        };
        if let Some(s) = g.se.as_mut().filter(|s| now >= s.last_update_time) {
            __update_load_avg_se(now, s, &se, t);
        }
        *self.groups.tg_load.entry(path.to_string()).or_default() += tg_delta;
        if self.groups.reweight {
            self.groups.pending.insert((cpu, path.to_string()));
        }
    }

    /// v6.12's delayed-dequeue model ([`super::eevdf`]): the key and unscaled weight of the
    /// entity of `pid`'s task group on `cpu`'s root cfs_rq, and whether another task of
    /// that group is queued there (the group entity then stays queued when `pid` leaves).
    /// `None` for a task of the root group or without the model.
    pub(super) fn eevdf_group(&mut self, cpu: u32, pid: i32) -> Option<(i32, u64, bool)> {
        let path = self.groups.of_task.get(&pid)?;
        let others = self.group_others(cpu, pid);
        let w = self
            .groups
            .rqs
            .get(&(cpu, path.clone()))
            .map_or(0, |g| schedmath::math::scale_load_down(g.se_weight));
        let w = if w == 0 { 1024 } else { w.max(2) };
        let key = self.eevdf.as_mut()?.group_key(cpu, path);
        Some((key, w, others))
    }

    /// v6.12: a queued grouped `pid` moved by a load balance at trace time `ts`: its
    /// group's entity leaves `from` when the group empties there (group_leaves()) and is
    /// enqueued (or requeued) on `to`.
    pub(super) fn migrate_group_entity(&mut self, pid: i32, (from, to): (u32, u32), ts: u64) {
        let Some((key, _, others)) = self.eevdf_group(from, pid) else {
            return;
        };
        let Some((to_key, w, _)) = self.eevdf_group(to, pid) else {
            return;
        };
        if let Some(e) = self.eevdf.as_mut() {
            if !others {
                e.group_leaves(from, key, ts);
            }
            e.wake(to, to_key, w, false, ts);
        }
    }

    /// v6.12: `pid` moves into a task group (`into`) from the root group: its own entity
    /// leaves the root cfs_rq of the delayed-dequeue model (sched_move_task() dequeues it
    /// there and enqueues it on its group's cfs_rq, whose entity is queued on the root
    /// instead). Only the root group's tasks have their own entity there.
    pub(super) fn eevdf_follow_group(&mut self, ts: u64, pid: i32, into: bool) {
        let was_root = !self.groups.of_task.contains_key(&pid);
        if !into || !was_root {
            return;
        }
        let Some(e) = self.eevdf.as_mut() else {
            return;
        };
        e.exit(pid);
        let Some((cpu, true)) = self
            .tasks
            .get(&pid)
            .map(|t| (t.cpu, t.on_rq && !t.detached))
        else {
            return;
        };
        // The group's entity is looked up once the task is in the group.
        self.groups.eevdf_pending = Some((pid, cpu, ts));
    }

    /// Root cfs_rq updates sched_move_task() makes before its detach of the running `pid`
    /// on `cpu` at trace time `ts` (kernel/sched/core.c; fair.c dequeue_entities(),
    /// put_prev_entity(), detach_entity_cfs_rq()): a task of the root group: the dequeue's
    /// and the detach's (2); a grouped task whose group empties: the group entity's
    /// dequeue and the detach's propagation (2), but on v6.12 a group entity not eligible
    /// is delayed (DEQUEUE_SLEEP above the task's level): the delay's update, the second
    /// loop's, put_prev_entity()'s of the still queued entity, then the detach's (4); a
    /// grouped task with others queued in its group: the second loop's, put_prev_entity()'s
    /// and the detach's (3).
    pub(super) fn move_detach_updates(&mut self, ts: u64, pid: i32, cpu: u32) -> u32 {
        if !self.groups.of_task.contains_key(&pid) {
            return 2;
        }
        match self.eevdf_group(cpu, pid) {
            Some((_, _, true)) => 3,
            Some((key, w, false)) => {
                let delayed = self
                    .eevdf
                    .as_mut()
                    .is_some_and(|e| e.group_move(cpu, key, w, ts));
                if delayed {
                    4
                } else {
                    2
                }
            }
            None if self.group_others(cpu, pid) => 3,
            None => 2,
        }
    }

    /// Whether another task of `pid`'s group is queued on `cpu`.
    fn group_others(&self, cpu: u32, pid: i32) -> bool {
        let path = self.groups.of_task.get(&pid);
        self.tasks.iter().any(|(&p, t)| {
            p != pid
                && t.cpu == cpu
                && t.on_rq
                && !t.detached
                && self.groups.of_task.get(&p) == path
        })
    }

    /// update_blocked_averages() of the load-balance softirq (__update_blocked_fair()): each group cfs_rq of `cpu` decays (update_tg_load_avg()
    /// when it did) and its entity is updated on the root with the propagation; no
    /// update_cfs_group(). The blocked load of a group's sleeping tasks reaches
    /// `tg->load_avg`, and so the other CPUs' shares, only this way.
    pub(super) fn update_blocked_groups(&mut self, cpu: u32, ts: u64) {
        for p in self.group_paths(cpu) {
            self.update_blocked_group(cpu, &p, ts);
        }
    }

    /// The groups with a cfs_rq on `cpu`.
    pub(super) fn group_paths(&self, cpu: u32) -> Vec<String> {
        self.groups
            .rqs
            .keys()
            .filter(|(c, _)| *c == cpu)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// One group's step of [`InferReplay::update_blocked_groups`] at trace time `ts`.
    pub(super) fn update_blocked_group(&mut self, cpu: u32, path: &str, ts: u64) {
        self.update_blocked_group_levels(cpu, path, ts);
        self.group_propagate(cpu, path);
    }

    /// [`InferReplay::update_blocked_group`] up to the propagation into the root: the
    /// group cfs_rq and its entity, no update_cfs_group().
    pub(super) fn update_blocked_group_levels(&mut self, cpu: u32, path: &str, ts: u64) {
        let Some(now) = self.clock(cpu, ts) else {
            return;
        };
        let reweight = std::mem::replace(&mut self.groups.reweight, false);
        self.group_levels(cpu, path, now);
        self.groups.reweight = reweight;
    }

    /// propagate_entity_load_avg() of group `path`'s entity into the root cfs_rq of `cpu`.
    pub(super) fn group_propagate(&mut self, cpu: u32, path: &str) {
        let t = self.tables;
        let (w, _, _) = self.group_inputs(cpu, path);
        let (Some(c), Some(g)) = (
            self.cpus.get_mut(&cpu),
            self.groups.rqs.get_mut(&(cpu, path.to_string())),
        ) else {
            return;
        };
        let (Some(root), Some(se), Some(gcfs)) = (c.cfs.as_mut(), g.se.as_mut(), g.cfs) else {
            return;
        };
        let mut root_prop = Propagate::default(); // the root has no parent to tell
        let sw = schedmath::math::scale_load_down(g.se_weight);
        propagate_entity_load_avg(root, &mut root_prop, se, sw, &gcfs, w, &mut g.prop, t);
    }

    /// After an attach (`load_sum` > 0) or detach (< 0) of a task on group `path`'s cfs_rq:
    /// add_tg_cfs_propagate(), update_tg_load_avg(), and the propagation up to the root
    /// (the next level's update_load_avg() in the same enqueue/dequeue, at the same clock).
    pub(super) fn group_changed(&mut self, cpu: u32, path: &str, load_sum: i64) {
        let profile = self.groups.profile;
        let Some(g) = self.groups.rq(cpu, path) else {
            return;
        };
        add_tg_cfs_propagate(&mut g.prop, load_sum);
        let now = g.cfs.map_or(0, |c| c.last_update_time);
        let tg = g.update_tg_load(now, &profile);
        *self.groups.tg_load.entry(path.to_string()).or_default() += tg;
        self.group_propagate(cpu, path);
        if self.groups.reweight {
            self.groups.pending.insert((cpu, path.to_string()));
        }
    }

    /// update_cfs_group() of every group entity an update of this event touched, with the
    /// event's enqueues and dequeues done (kernel/sched/fair.c: calc_group_shares(),
    /// reweight_entity()).
    pub(super) fn settle_groups(&mut self) {
        let t = self.tables;
        for (cpu, path) in std::mem::take(&mut self.groups.pending) {
            let (w, _, _) = self.group_inputs(cpu, &path);
            if w == 0 && !self.groups.always_reweight {
                continue; // v6.12: an empty group keeps its weight (delayed dequeue)
            }
            let tg_shares = self.groups.tg_shares(&path) as i64;
            let tg_load = self.groups.tg_load.get(&path).copied().unwrap_or(0);
            let always = self.groups.always_reweight;
            let (Some(c), Some(g)) = (
                self.cpus.get_mut(&cpu),
                self.groups.rqs.get_mut(&(cpu, path.clone())),
            ) else {
                continue;
            };
            let (Some(gcfs), Some(se)) = (g.cfs, g.se.as_mut()) else {
                continue;
            };
            let Ok(shares) = calc_group_shares(
                tg_shares,
                w,
                gcfs.load_avg,
                tg_load,
                g.contrib.tg_load_avg_contrib,
            ) else {
                continue;
            };
            let shares = shares as u64; // clamped to [MIN_SHARES, tg_shares]
            if !always && shares == g.se_weight {
                continue;
            }
            let mut scratch = SchedAvg::default();
            let root = c.cfs.as_mut().unwrap_or(&mut scratch);
            reweight_entity_load_avg(root, se, g.se_weight, shares, t);
            g.se_weight = shares;
            if let Some(e) = self.eevdf.as_mut() {
                let key = e.group_key(cpu, &path);
                let w = scale_load(schedmath::math::scale_load_down(shares).max(2));
                e.reweight_group(cpu, key, w);
            }
        }
    }

    /// A task's answer-key record names group `path` (`/` = root): if the model has it
    /// elsewhere, the task was moved (sched_move_task(): detach from the old cfs_rq,
    /// attach to the new one at the current clock).
    pub(super) fn follow_group(&mut self, ts: u64, pid: i32, path: &str, first: bool) {
        let new = (path != "/").then(|| path.to_string());
        if self.groups.of_task.get(&pid) == new.as_ref() {
            return;
        }
        self.eevdf_follow_group(ts, pid, new.is_some());
        let movable = self
            .tasks
            .get(&pid)
            .is_some_and(|t| !first && !t.detached && t.avg.is_some() && t.weight.is_some());
        if !movable {
            // First sight: the task was there when the trace started.
            match new {
                Some(p) => self.groups.of_task.insert(pid, p),
                None => self.groups.of_task.remove(&pid),
            };
            self.eevdf_enqueue_group();
            return;
        }
        let cpu = self.tasks.get(&pid).map_or(0, |t| t.cpu);
        self.detach(pid, cpu, ts);
        match new {
            Some(p) => self.groups.of_task.insert(pid, p),
            None => self.groups.of_task.remove(&pid),
        };
        self.attach_detached(pid, cpu, ts);
        self.settle_groups();
        self.eevdf_enqueue_group();
    }

    /// The group entity of a queued task just moved into its group is enqueued on the
    /// root cfs_rq of the delayed-dequeue model ([`Self::eevdf_follow_group`]).
    pub(super) fn eevdf_enqueue_group(&mut self) {
        let Some((pid, cpu, ts)) = self.groups.eevdf_pending.take() else {
            return;
        };
        if let Some((key, w, _)) = self.eevdf_group(cpu, pid) {
            if let Some(e) = self.eevdf.as_mut() {
                e.wake(cpu, key, w, false, ts);
            }
        }
    }

    /// A group cfs_rq's or group entity's answer-key record: the first one sets its state
    /// (it existed when the trace started), the others are compared with the model brought
    /// to the kernel's instant on a copy.
    pub(super) fn answer_group(
        &mut self,
        ts: u64,
        c: &PeltCall<'_>,
        key: &EntityKey,
        kb: &SchedAvg,
        ka: &SchedAvg,
    ) {
        let t = self.tables;
        let (cpu, path, is_se) = match key {
            EntityKey::CfsRq(cpu, p) => (*cpu, p.as_str(), false),
            EntityKey::GroupSe(cpu, p) => (*cpu, p.as_str(), true),
            EntityKey::Task(_) => return,
        };
        let (w, n, running) = self.group_inputs(cpu, path);
        let se_in = self.group_se_pelt(cpu, path, 0);
        let name = key.name(None);
        let Some(g) = self.groups.rq(cpu, path) else {
            return;
        };
        if is_se {
            let Some(ours) = g.se else {
                g.se = Some(*ka);
                g.se_weight = c.lw;
                return;
            };
            let mut p = ours;
            let se = SchedEntityPelt {
                load_weight: g.se_weight,
                ..se_in
            };
            __update_load_avg_se(c.now, &mut p, &se, t);
            let inputs = (g.se_weight, u64::from(n), running);
            explain(&name, ts, c, &ours, &p, kb, ka, inputs, t);
            g.se_stats.entity = name;
            compare(&mut g.se_stats, &p, ka, false);
        } else {
            let Some(ours) = g.cfs else {
                g.cfs = Some(*ka);
                // A group cfs_rq created in the trace has published nothing yet.
                let contrib = if kb.last_update_time == 0 {
                    0
                } else {
                    ka.load_avg
                };
                g.contrib.tg_load_avg_contrib = contrib;
                *self.groups.tg_load.entry(path.to_string()).or_default() += contrib as i64;
                return;
            };
            let mut p = ours;
            let mut removed = g.removed;
            update_cfs_rq_load_avg(c.now, &mut p, &mut removed, w, n, running, t);
            explain(
                &name,
                ts,
                c,
                &ours,
                &p,
                kb,
                ka,
                (w, u64::from(n), running),
                t,
            );
            g.cfs_stats.entity = name;
            compare(&mut g.cfs_stats, &p, ka, false);
        }
    }

    /// The group entities' and cfs_rqs' counters, by CPU then path.
    pub(super) fn group_stats(&self) -> Vec<EntityStats> {
        let mut out = Vec::new();
        for g in self.groups.rqs.values() {
            for s in [&g.cfs_stats, &g.se_stats] {
                if s.updates > 0 {
                    out.push(s.clone());
                }
            }
        }
        out
    }
}
