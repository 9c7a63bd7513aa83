// SPDX-License-Identifier: GPL-2.0-only
//! The group hierarchy on each CPU: `min_vruntime` per cfs_rq, the enqueue/dequeue/tick walk that keeps each
//! group cfs_rq's counts, load weight and PELT signal and reweights its entity
//! (`update_load_avg()` → `update_tg_load_avg()` → `update_cfs_group()`), the periodic
//! decay of group cfs_rqs (`update_blocked_averages()`) and the wake-up preemption rule (`find_matching_se()`, `se_is_idle()`). A workload without
//! groups only ever meets the root cfs_rq here.

use super::*;
use schedmath::fair::group::{calc_group_shares, update_tg_load_avg, MIN_SHARES};

use crate::sim::group::{Ent, SimGroup, ROOT};

impl Engine<'_> {
    /// The id of the group a chain ends in.
    pub(super) fn group_id(&self, chain: &[SimGroup]) -> usize {
        chain
            .last()
            .and_then(|g| self.groups.id(&g.path))
            .unwrap_or(ROOT)
    }

    /// The entity that stands for task `t` in cfs_rq `level`, if `t` is below it.
    pub(super) fn entity_at(&self, level: usize, t: usize) -> Option<Ent> {
        let g = self.tasks[t].group;
        if g == level {
            return Some(Ent::Task(t));
        }
        self.groups.child_towards(level, g).map(Ent::Group)
    }

    /// `cfs_rq->min_vruntime` of group `g`'s cfs_rq on `c` (the root's is the rq's).
    pub(super) fn cfs_min_vruntime(&self, c: usize, g: usize) -> u64 {
        match g {
            ROOT => self.rqs[c].min_vruntime,
            _ => self.rqs[c].grq.get(g).map_or(0, |gr| gr.min_vruntime),
        }
    }

    pub(super) fn set_cfs_min_vruntime(&mut self, c: usize, g: usize, v: u64) {
        let r = &mut self.rqs[c];
        let m = match g {
            ROOT => &mut r.min_vruntime,
            _ => match r.grq.get_mut(g) {
                Some(gr) => &mut gr.min_vruntime,
                None => return,
            },
        };
        *m = v; // update_min_vruntime() keeps it monotonic
    }

    /// `__update_load_avg_cfs_rq()` of group `g`'s cfs_rq on `c`; true when it decayed.
    fn update_grq_pelt(&mut self, c: usize, g: usize) -> bool {
        let now = rq_clock_pelt(&self.rqs[c].clock);
        let has_curr = self.rqs[c].curr.is_some_and(|t| {
            self.tasks[t].is_fair() && self.groups.is_under(self.tasks[t].group, g)
        });
        let Some(gr) = self.rqs[c].grq.get_mut(g) else {
            return false;
        };
        let before = gr.avg;
        let ret = __update_load_avg_cfs_rq(
            now,
            &mut gr.avg,
            gr.load_weight,
            gr.h_nr_running,
            has_curr,
            self.tables,
        );
        self.tr_pelt_grq(c, g, now, before, has_curr, ret);
        ret != 0
    }

    /// `update_tg_load_avg()` of group `g`'s cfs_rq on `c`.
    fn update_tg_load(&mut self, c: usize, g: usize) {
        let clock = self.rqs[c].clock.clock;
        if let (Some(tg_load), Some(gr)) = (self.groups.load_avg_mut(g), self.rqs[c].grq.get_mut(g))
        {
            // Not the root group (walk_groups stops below it); every simulated CPU is active.
            let load_avg = gr.avg.load_avg;
            update_tg_load_avg(
                false,
                true,
                clock,
                load_avg,
                &mut gr.tg,
                tg_load,
                &self.profile,
            );
        }
    }

    /// Fair task `t` is enqueued on `c` (`delta` 1), dequeued (-1) or updated as it runs
    /// or is switched (0): from its group up to the root, each group cfs_rq's PELT is
    /// updated before its counts and weight change, `tg->load_avg` follows, and the group
    /// entity is reweighted to `calc_group_shares()` in its parent and queued there (placed
    /// by the fair class) or taken off when its
    /// cfs_rq empties.
    ///
    /// The test for a task outside any group is inline at the call sites (every tick,
    /// enqueue, dequeue and switch-in calls this, and most tasks are in no group).
    #[inline(always)]
    pub(super) fn walk_groups(&mut self, c: usize, t: usize, delta: i32) {
        let leaf = self.tasks[t].group;
        if leaf != ROOT && leaf < self.rqs[c].grq.len() {
            self.walk_groups_from(c, t, leaf, delta);
        }
    }

    /// [`Self::walk_groups`] for task `t` of group `leaf` (not the root, one of `c`'s).
    #[inline(never)]
    fn walk_groups_from(&mut self, c: usize, t: usize, leaf: usize, delta: i32) {
        let w = scale_load(self.tasks[t].weight);
        self.update_grq_pelt(c, leaf);
        let gr = &mut self.rqs[c].grq[leaf];
        match delta.signum() {
            1 => {
                gr.load_weight += w;
                gr.nr_running += 1;
            }
            -1 => {
                gr.load_weight = gr.load_weight.saturating_sub(w);
                gr.nr_running = gr.nr_running.saturating_sub(1);
            }
            _ => {}
        }
        let mut g = leaf;
        loop {
            let gr = &mut self.rqs[c].grq[g];
            gr.h_nr_running = gr.h_nr_running.saturating_add_signed(delta);
            let p = self.groups.tg(g).parent;
            if p != ROOT {
                self.update_grq_pelt(c, p);
            }
            self.update_tg_load(c, g);
            self.tr_pelt_group_se(c, g, false);
            let tg = self.groups.tg(g);
            let gr = &self.rqs[c].grq[g];
            let shares = calc_group_shares(
                tg.shares,
                gr.load_weight,
                gr.avg.load_avg,
                tg.load_avg,
                gr.tg.tg_load_avg_contrib,
            )
            // The kernel would trap on LONG_MIN / -1; no real load gets there.
            .unwrap_or(MIN_SHARES)
            .max(1) as u64; // at least MIN_SHARES
            let (was, on, old) = (gr.se_on_rq, gr.nr_running > 0, gr.se_weight);
            self.update_group_entity(c, g, was, on, shares);
            let gr = &mut self.rqs[c].grq[g];
            gr.se_weight = shares;
            gr.se_on_rq = on;
            if p == ROOT {
                break;
            }
            let pr = &mut self.rqs[c].grq[p];
            if was {
                pr.load_weight = pr.load_weight.saturating_sub(old);
                pr.nr_running = pr.nr_running.saturating_sub(1);
            }
            if on {
                pr.load_weight += shares;
                pr.nr_running += 1;
            }
            g = p;
        }
    }

    /// `update_blocked_averages()` for the group cfs_rqs of `c`: decay each and publish
    /// its load to `tg->load_avg`.
    pub(super) fn decay_groups(&mut self, c: usize) {
        self.rqs[c].last_group_update = self.now;
        for g in 1..self.groups.len() {
            self.update_grq_pelt(c, g);
            self.update_tg_load(c, g);
            self.tr_pelt_group_se(c, g, true);
        }
    }

    fn ent_depth(&self, e: Ent) -> u32 {
        match e {
            Ent::Task(t) => self.groups.tg(self.tasks[t].group).depth,
            Ent::Group(g) => self.groups.tg(g).depth.saturating_sub(1),
        }
    }

    fn cfs_rq_of(&self, e: Ent) -> usize {
        match e {
            Ent::Task(t) => self.tasks[t].group,
            Ent::Group(g) => self.groups.tg(g).parent,
        }
    }

    /// `se_is_idle()`: a SCHED_IDLE task, or an idle group's entity.
    pub(super) fn se_is_idle(&self, e: Ent) -> bool {
        match e {
            Ent::Task(t) => self.tasks[t].policy == SchedPolicy::Idle,
            Ent::Group(g) => self.groups.tg(g).idle,
        }
    }

    /// `find_matching_se()`: walks both entities up to the same depth, then further up
    /// until they are queued in the same cfs_rq.
    fn find_matching_se(&self, se: &mut Ent, pse: &mut Ent) {
        let parent = |e: Ent| Ent::Group(self.cfs_rq_of(e));
        let (mut d, mut pd) = (self.ent_depth(*se), self.ent_depth(*pse));
        while d > pd {
            d -= 1;
            *se = parent(*se);
        }
        while pd > d {
            pd -= 1;
            *pse = parent(*pse);
        }
        while self.cfs_rq_of(*se) != self.cfs_rq_of(*pse) && d > 0 {
            d -= 1;
            *se = parent(*se);
            *pse = parent(*pse);
        }
    }

    /// `check_preempt_wakeup_fair()` (v6.11+ order) of waking fair task `t` against
    /// running fair task `cur` on `c`, at the level where their entities share a cfs_rq:
    /// an idle entity yields to a non-idle one and never preempts one, a waking
    /// SCHED_IDLE task never preempts, otherwise the class's rule (`fair`).
    pub(super) fn wakeup_preempt_fair(&mut self, c: usize, cur: usize, t: usize) -> bool {
        let (mut se, mut pse) = (Ent::Task(cur), Ent::Task(t));
        self.find_matching_se(&mut se, &mut pse);
        let (cse_is_idle, pse_is_idle) = (self.se_is_idle(se), self.se_is_idle(pse));
        if cse_is_idle && !pse_is_idle {
            return true;
        }
        if cse_is_idle != pse_is_idle || self.tasks[t].policy != SchedPolicy::Normal {
            return false;
        }
        let level = self.cfs_rq_of(se);
        self.wakeup_preempt_class(c, se, pse, level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::program::SimTask;

    fn grp(path: &str, idle: bool) -> SimGroup {
        SimGroup {
            path: path.to_string(),
            shares: 1024,
            idle,
        }
    }

    fn busy(name: &str, cpu: usize, group: Vec<SimGroup>, policy: SchedPolicy) -> SimTask {
        let mut t = SimTask::periodic(name, 100, 16_000_000, None);
        t.cpus = Some(vec![cpu]);
        t.group = group;
        t.policy = policy;
        t
    }

    #[test]
    fn sched_idle_cpu_counts_tasks_under_idle_groups() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/platforms/rk3399.toml"
        );
        let p = Platform::load(std::path::Path::new(path)).unwrap();
        let n = SchedPolicy::Normal;
        let specs = [
            // CPU 0: a normal task inside a non-idle child of an idle group.
            busy(
                "in-idle",
                0,
                vec![grp("/bg2", true), grp("/bg2/x", false)],
                n,
            ),
            // CPU 1: a normal task in a normal group.
            busy("normal", 1, vec![grp("/fg", false)], n),
            // CPU 2: a SCHED_IDLE task in the root.
            busy("idle-policy", 2, vec![], SchedPolicy::Idle),
            // CPU 3: an idle-group task beside a normal root task.
            busy("bg", 3, vec![grp("/bg", true)], n),
            busy("fg", 3, vec![], n),
        ];
        let cfg = SimConfig {
            duration_ns: 100_000_000,
            hz: 250,
            seed: 0,
        };
        let mut e = Engine::new(&p, &specs, &[], &Profile::MAINLINE, &cfg, false).unwrap();
        e.run(&mut |_| {});
        let state: Vec<(bool, u32)> = (0..4)
            .map(|c| (e.rqs[c].is_sched_idle(), e.rqs[c].h_nr_idle))
            .collect();
        assert_eq!(state, vec![(true, 1), (false, 0), (true, 1), (false, 1)]);
        // Each group lives on one CPU, so its entity there takes all of tg->shares:
        // scale_load(WEIGHT_IDLEPRIO) for the idle /bg and /bg2, 1024 for /bg2/x.
        let id = |p: &str| e.groups.id(p).unwrap();
        assert_eq!(e.rqs[3].grq[id("/bg")].se_weight, 3 << 10);
        assert_eq!(e.rqs[0].grq[id("/bg2")].se_weight, 3 << 10);
        assert_eq!(e.rqs[0].grq[id("/bg2/x")].se_weight, 1024 << 10);
        assert_eq!(e.rqs[1].grq[id("/fg")].se_weight, 1024 << 10);
    }
}
