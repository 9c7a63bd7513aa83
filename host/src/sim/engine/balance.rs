// SPDX-License-Identifier: GPL-2.0-only
//! The fair load balancer: `rebalance_domains()` / `sched_balance_domains()` from the
//! tick for each CPU whose `next_balance` is due, `load_balance()` / `sched_balance_rq()`
//! per domain level, and `newidle_balance()` / `sched_balance_newidle()` when a CPU runs
//! out of work (kernel/sched/fair.c). The arithmetic is the core's
//! [`schedmath::fair::balance`]; here the walk over groups, runqueues and tasks.
//!
//! Simplifications: an idle CPU balances at the tick only when some CPU runs two tasks
//! (the kernel's NO_HZ idle balancer, kicked from that CPU's tick, balances for it; the
//! kick's other triggers are not modelled), whether or not the sim kept its tick;
//! `rd->overload` is "some CPU runs two tasks now"; the newly-idle balance is
//! not gated by `avg_idle` / `max_newidle_lb_cost`; `task_h_load()` is the task's own
//! `load_avg` (exact for tasks in the root group, not scaled by a group's `h_load`); the
//! `sgc->imbalance` of affinity-constrained child groups stays 0 and `LBF_DST_PINNED` /
//! all-pinned retries are not made; misfit tasks are left to the tick's misfit
//! migration (`rq->misfit_task_load` is 0 here); sched_delayed entities are not migrated.

use super::*;
use schedmath::capacity::check_cpu_capacity;
use schedmath::fair::balance::{
    busiest_stat_init, can_migrate_hot, detach_task_take, find_busiest_group,
    find_busiest_queue_step, get_sd_balance_interval, load_balance_failed, load_balance_finish,
    max_load_balance_interval, need_active_balance, task_hot, update_sd_pick_busiest,
    update_sg_lb_stats_cpu, update_sg_lb_stats_finish, CpuIdleType, FbqCandidate, FbqState, LbCpu,
    LbDomain, LbOutcome, SdLbStats, SgCapacity, SCHED_NR_MIGRATE_BREAK, SYSCTL_SCHED_NR_MIGRATE,
};
use schedmath::fair::lb::{smt_balance, SgLbStats};
use schedmath::util_est::task_util_est;

/// The balancer's per-CPU state: each domain's `struct sched_domain` fields and
/// `rq->next_balance` (jiffies).
pub(super) struct LbState {
    doms: Vec<Vec<LbDomain>>,
    next_balance: Vec<u64>,
    hz: u64,
    max_interval: u64,
    /// Scratch: the source's tasks in `cfs_tasks` order, tail first.
    cand: Vec<usize>,
    /// Scratch: what `update_sg_lb_stats()` reads of each CPU, taken at each balance.
    cpus: Vec<LbCpu>,
}

impl LbState {
    pub(super) fn new(sd: &SchedDomains, hz: u64) -> Self {
        let doms: Vec<Vec<LbDomain>> = sd
            .per_cpu
            .iter()
            .map(|levels| {
                levels
                    .iter()
                    .map(|d| {
                        let smt = d.name == "SMT";
                        let mut l = LbDomain::new(
                            d.span.len() as u64,
                            d.imbalance_pct,
                            smt,
                            smt || d.name == "MC",
                        );
                        l.asym_cpucapacity = d.asym_cpucapacity;
                        l
                    })
                    .collect()
            })
            .collect();
        LbState {
            next_balance: vec![0; doms.len()],
            max_interval: max_load_balance_interval(hz, doms.len() as u64),
            doms,
            hz,
            cand: Vec::new(),
            cpus: Vec::new(),
        }
    }
}

impl Engine<'_> {
    fn jiffies(&self) -> u64 {
        self.now / self.tick_nsec
    }

    /// `trigger_load_balance()` for every CPU: `rebalance_domains()` where due. An idle
    /// CPU balances only when `nohz_balancer_kick()` would kick the idle balancer for it:
    /// some CPU runs two tasks (NO_HZ idle, as every kernel the profiles describe; the
    /// kick's other triggers — two busy CPUs in an LLC, misfit, reduced capacity, asym
    /// packing — are not modelled).
    pub(super) fn trigger_load_balance(&mut self) {
        let j = self.jiffies();
        let mut kick = None;
        for c in 0..self.rqs.len() {
            if j < self.lb.next_balance[c] {
                continue;
            }
            if self.rqs[c].is_idle()
                && !*kick.get_or_insert_with(|| self.rqs.iter().any(|r| r.nr_running() >= 2))
            {
                continue;
            }
            self.rebalance_domains(c, j);
        }
    }

    fn cpu_idle_type(&self, c: usize) -> CpuIdleType {
        if self.rqs[c].is_idle() {
            CpuIdleType::Idle
        } else {
            CpuIdleType::NotIdle
        }
    }

    /// `rebalance_domains()`: each level whose interval passed balances; the CPU's next
    /// balance is the earliest level's next.
    fn rebalance_domains(&mut self, c: usize, j: u64) {
        let mut idle = self.cpu_idle_type(c);
        let mut busy = idle != CpuIdleType::Idle && !self.rqs[c].is_sched_idle();
        let (hz, maxj) = (self.lb.hz, self.lb.max_interval);
        let mut next = j + 60 * hz;
        for level in 0..self.lb.doms[c].len() {
            let mut interval = get_sd_balance_interval(&self.lb.doms[c][level], busy, hz, maxj);
            let sd = self.lb.doms[c][level];
            let mut stop = false;
            if j >= sd.last_balance.wrapping_add(interval) {
                let (moved, cont) = self.load_balance(c, level, idle);
                if moved {
                    idle = self.cpu_idle_type(c);
                    busy = idle != CpuIdleType::Idle && !self.rqs[c].is_sched_idle();
                }
                stop = !cont;
                self.lb.doms[c][level].last_balance = j;
                interval = get_sd_balance_interval(&self.lb.doms[c][level], busy, hz, maxj);
            }
            next = next.min(self.lb.doms[c][level].last_balance.wrapping_add(interval));
            if stop {
                break;
            }
        }
        self.lb.next_balance[c] = next;
    }

    /// `newidle_balance()` / `sched_balance_newidle()`: `c` found nothing to run; pull
    /// from the lowest level that has something. True when a task came.
    pub(super) fn sched_balance_newidle(&mut self, c: usize) -> bool {
        let j = self.jiffies();
        let (hz, maxj) = (self.lb.hz, self.lb.max_interval);
        let mut next = j + hz;
        let overload = self.rqs.iter().any(|r| r.nr_running() >= 2);
        let mut pulled = false;
        for level in 0..self.lb.doms[c].len() {
            let sd = &self.lb.doms[c][level];
            next = next.min(sd.last_balance + get_sd_balance_interval(sd, false, hz, maxj));
            if !overload {
                break; // update_next_balance() of the lowest domain only
            }
            pulled = self.load_balance(c, level, CpuIdleType::NewlyIdle).0;
            if pulled || self.rqs[c].nr_running() > 0 {
                break;
            }
        }
        if next < self.lb.next_balance[c] {
            self.lb.next_balance[c] = next;
        }
        pulled || self.rqs[c].nr_running() > 0
    }

    /// What `update_sg_lb_stats()` reads of CPU `i`.
    fn lb_cpu(&self, i: usize) -> LbCpu {
        let r = &self.rqs[i];
        LbCpu {
            load: r.cfs.load_avg,
            util: cpu_util_cfs(&self.util_rq(i)),
            runnable: r.cfs.runnable_avg,
            nr_running: r.nr_running(),
            h_nr_running: r.nr_fair,
            idle: r.is_idle(),
            misfit_task_load: 0,
            capacity: r.cpu_capacity,
        }
    }

    /// Fills the per-CPU snapshot (no allocation after the first).
    fn lb_cpus_refresh(&mut self) {
        let mut cpus = std::mem::take(&mut self.lb.cpus);
        cpus.clear();
        cpus.extend((0..self.rqs.len()).map(|i| self.lb_cpu(i)));
        self.lb.cpus = cpus;
    }

    /// `check_cpu_capacity()`: rt/irq pressure took more than `imbalance_pct` of `i`.
    fn reduced_capacity(&self, i: usize, sd: &LbDomain) -> bool {
        let r = &self.rqs[i];
        check_cpu_capacity(r.capacity_orig, r.cpu_capacity, sd.imbalance_pct)
    }

    /// `should_we_balance()`: a newly idle CPU with nothing queued, else the first idle
    /// CPU of the local group or, none idle, its first CPU.
    fn should_we_balance(&self, c: usize, level: usize, idle: CpuIdleType) -> bool {
        if idle == CpuIdleType::NewlyIdle {
            return self.rqs[c].nr_running() == 0;
        }
        let g = &self.sd.per_cpu[c][level].groups[0];
        match g.iter().copied().find(|&i| self.rqs[i].is_idle()) {
            Some(i) => i == c,
            None => g.iter().copied().min() == Some(c),
        }
    }

    /// SMT cores among `cpus` (`sg->cores`): a core counts once, at its lowest-numbered
    /// CPU (a CPU without siblings is a core).
    fn cores(&self, cpus: &[usize]) -> u32 {
        cpus.iter()
            .filter(|&&i| self.platform.cpus[i].smt_siblings.iter().all(|&s| s > i))
            .count() as u32
    }

    /// `update_sd_lb_stats()` for `c` at `level`: the local group, the busiest other
    /// group (its index) and the totals.
    fn update_sd_lb_stats(&self, c: usize, level: usize, idle: CpuIdleType) -> (SdLbStats, usize) {
        let dom = &self.sd.per_cpu[c][level];
        let sd = &self.lb.doms[c][level];
        let mut sds = SdLbStats {
            local: SgLbStats::default(),
            busiest: None,
            total_load: 0,
            total_capacity: 0,
            prefer_sibling: level > 0 && !dom.asym_cpucapacity,
            local_cores: 0,
            busiest_cores: 0,
        };
        let mut busiest = busiest_stat_init();
        let mut busiest_idx = 0;
        let dst_capacity = self.rqs[c].cpu_capacity;
        let siblings = &self.platform.cpus[c].smt_siblings;
        let dst_core_idle = siblings.iter().all(|&s| self.rqs[s].is_idle());
        let smt_groups = level > 0 && self.sd.per_cpu[c][level - 1].name == "SMT";
        for (gi, g) in dom.groups.iter().enumerate() {
            let local = gi == 0;
            let mut sgs = SgLbStats::default();
            let (mut cap, mut min_cap, mut max_cap) = (0u64, u64::MAX, 0u64);
            for &i in g {
                let cpu = self.lb.cpus[i];
                update_sg_lb_stats_cpu(&mut sgs, &cpu, local, sd.asym_cpucapacity);
                cap += cpu.capacity;
                min_cap = min_cap.min(cpu.capacity);
                max_cap = max_cap.max(cpu.capacity);
            }
            // `smt_balance()`: the groups are SMT cores (`sg->flags` are the child's).
            sgs.group_smt_balance =
                !local && smt_balance(idle.is_idle(), smt_groups, sgs.sum_h_nr_running);
            update_sg_lb_stats_finish(
                &mut sgs,
                cap,
                g.len() as u32,
                sd.imbalance_pct,
                false,
                &self.profile,
            );
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
            if local {
                sds.local = sgs;
                sds.local_cores = self.cores(g);
                continue;
            }
            let sgc = SgCapacity {
                min_capacity: min_cap,
                max_capacity: max_cap,
            };
            if update_sd_pick_busiest(
                sd,
                sds.local.group_type,
                &busiest,
                &sgs,
                sgc,
                dst_capacity,
                dst_core_idle,
                &self.profile,
            ) {
                busiest = sgs;
                busiest_idx = gi;
                sds.busiest = Some(sgs);
                sds.busiest_cores = self.cores(g);
            }
        }
        (sds, busiest_idx)
    }

    /// `load_balance()` / `sched_balance_rq()` of `c` (the destination) at `level`:
    /// (tasks moved, continue to the upper levels).
    fn load_balance(&mut self, c: usize, level: usize, idle: CpuIdleType) -> (bool, bool) {
        let profile = self.profile;
        if !self.should_we_balance(c, level, idle) {
            load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::Balanced);
            return (false, false);
        }
        let eas_balanced =
            self.keys.sched_energy_enabled && !self.pds.is_empty() && !self.rd.overutilized;
        if eas_balanced {
            // find_busiest_group() would only go past this for a misfit group, and
            // misfit_task_load is 0 here: skip the group statistics.
            load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::Balanced);
            return (false, true);
        }
        self.lb_cpus_refresh();
        let (mut sds, gi) = self.update_sd_lb_stats(c, level, idle);
        let sd = self.lb.doms[c][level];
        let Some(mut imb) = find_busiest_group(&sd, idle, &mut sds, eas_balanced, &profile) else {
            load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::Balanced);
            return (false, true);
        };
        let dst_capacity = self.rqs[c].cpu_capacity;
        let mut st = FbqState::default();
        let mut src = None;
        for &i in &self.sd.per_cpu[c][level].groups[gi] {
            let r = &self.lb.cpus[i];
            let cand = FbqCandidate {
                load: r.load,
                util: r.util,
                h_nr_running: r.h_nr_running,
                capacity: r.capacity,
                misfit_task_load: 0,
                reduced_capacity: self.reduced_capacity(i, &sd),
            };
            if find_busiest_queue_step(&sd, &imb, dst_capacity, &cand, &mut st) {
                src = Some(i);
            }
        }
        let Some(src) = src else {
            load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::Balanced);
            return (false, true);
        };
        let mut moved = 0u32;
        let mut all_pinned = true;
        if self.rqs[src].nr_running() > 1 {
            moved = self.detach_tasks(c, src, level, idle, &mut imb, &mut all_pinned);
            if all_pinned {
                let sd = &mut self.lb.doms[c][level];
                sd.nr_balance_failed = 0;
                if idle != CpuIdleType::NewlyIdle
                    && (sd.balance_interval < schedmath::fair::balance::MAX_PINNED_INTERVAL
                        || sd.balance_interval < sd.max_interval)
                {
                    sd.balance_interval *= 2;
                }
                return (false, true);
            }
        }
        if moved > 0 {
            load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::Moved);
            return (true, true);
        }
        load_balance_failed(&mut self.lb.doms[c][level], idle);
        let sd = self.lb.doms[c][level];
        let need = |e: &Self| {
            need_active_balance(
                &sd,
                idle,
                &imb,
                e.rqs[src].nr_fair,
                e.reduced_capacity(src, &sd),
                e.rqs[src].cpu_capacity,
                dst_capacity,
            )
        };
        let need_active = need(self);
        let mut active = false;
        if need_active {
            let Some(cur) = self.rqs[src].curr else {
                load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::OnePinned);
                return (false, true);
            };
            if !self.tasks[cur].allowed.contains(&c) {
                load_balance_finish(&mut self.lb.doms[c][level], idle, LbOutcome::OnePinned);
                return (false, true);
            }
            active = true;
            if self.active_load_balance(src, c, idle) {
                // active_load_balance_cpu_stop(): a push resets the failure count.
                self.lb.doms[c][level].nr_balance_failed = 0;
            }
        }
        let need_active = need_active && need(self);
        load_balance_finish(
            &mut self.lb.doms[c][level],
            idle,
            LbOutcome::Failed {
                active,
                need_active,
            },
        );
        (false, true)
    }

    /// `detach_tasks()` + `attach_tasks()`: walk `src`'s fair tasks from the least
    /// recently run (`cfs_tasks`' tail), moving those the imbalance takes to `dst`.
    fn detach_tasks(
        &mut self,
        dst: usize,
        src: usize,
        level: usize,
        idle: CpuIdleType,
        imb: &mut schedmath::fair::balance::Imbalance,
        all_pinned: &mut bool,
    ) -> u32 {
        if imb.imbalance <= 0 {
            return 0; // LBF_ALL_PINNED stays set, as in the kernel
        }
        let mut cand = std::mem::take(&mut self.lb.cand);
        cand.clear();
        cand.extend(
            self.rqs[src]
                .queue
                .iter()
                .copied()
                .filter(|&t| self.tasks[t].is_fair()),
        );
        if let Some(cur) = self.rqs[src].curr.filter(|&t| self.tasks[t].is_fair()) {
            cand.push(cur); // picked last: the list's head
        }
        let loop_max = SYSCTL_SCHED_NR_MIGRATE.min(self.rqs[src].nr_running()) as usize;
        let loop_max = loop_max.min(SCHED_NR_MIGRATE_BREAK as usize);
        let mut moved = 0;
        let clock_task_now = self.now;
        for &t in cand.iter().take(loop_max) {
            if idle.is_idle() && self.rqs[src].nr_running() <= 1 {
                break;
            }
            if !self.tasks[t].allowed.contains(&dst) {
                continue;
            }
            *all_pinned = false;
            if self.rqs[src].curr == Some(t) {
                continue; // task_on_cpu()
            }
            let sd = self.lb.doms[dst][level];
            let task = &self.tasks[t];
            let since = self.task_ns(src, task.exec_start, clock_task_now) as i64;
            let idle_policy = task.policy == SchedPolicy::Idle;
            let hot = task_hot(&sd, true, idle_policy, since);
            if !can_migrate_hot(&sd, false, hot) {
                continue;
            }
            let load = task.avg.load_avg;
            let util = task_util_est(&task.avg);
            if !detach_task_take(&sd, imb, load, util, true) {
                continue;
            }
            self.migrate(t, src, dst);
            moved += 1;
            // CONFIG_PREEMPTION: a newly idle CPU takes one task at a time.
            if idle == CpuIdleType::NewlyIdle || imb.imbalance <= 0 {
                break;
            }
        }
        self.lb.cand = cand;
        if moved > 0 && idle != CpuIdleType::NewlyIdle {
            self.attach_preempt(dst);
        }
        moved
    }

    /// `attach_task()`'s `wakeup_preempt()` on the destination (a newly idle one picks
    /// in its own `__schedule()`).
    fn attach_preempt(&mut self, dst: usize) {
        match self.rqs[dst].queue.last().copied() {
            Some(t) if self.rqs[dst].curr.is_some() => self.check_preempt(dst, t),
            _ => self.schedule(dst),
        }
    }

    /// `active_load_balance_cpu_stop()`: the stopper preempts `src`'s running task and
    /// moves the least recently run task that may go to `dst` (`detach_one_task()`).
    fn active_load_balance(&mut self, src: usize, dst: usize, idle: CpuIdleType) -> bool {
        if self.rqs[src].nr_running() <= 1 && self.rqs[src].curr.is_none() {
            return false;
        }
        let cur = self.rqs[src].curr;
        let t = self.rqs[src]
            .queue
            .iter()
            .copied()
            .find(|&q| self.tasks[q].is_fair() && self.tasks[q].allowed.contains(&dst))
            .or(cur.filter(|&q| self.tasks[q].is_fair()));
        let Some(t) = t else { return false };
        self.migrate(t, src, dst);
        self.schedule(src);
        if idle != CpuIdleType::NewlyIdle {
            self.attach_preempt(dst);
        }
        true
    }
}
