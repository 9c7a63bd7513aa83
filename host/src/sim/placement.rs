// SPDX-License-Identifier: GPL-2.0-only
//! Wake-up CPU selection: what the simulator hands the core's `select_task_rq_fair()`
//! pieces (`schedmath::fair::{eas, wake, idlest}`), which hold all the arithmetic and
//! every decision. The engine (`engine/wakeup.rs`) composes them as the kernel does:
//!
//! * first activation (fork, `SD_BALANCE_FORK`): `sched_balance_find_dst_cpu()` over the
//!   platform's sched domains ([`super::domains`], read through
//!   [`SchedDomainTopology`]);
//! * a wake-up with EAS on and the root domain not overutilized:
//!   `find_energy_efficient_cpu()` over the performance domains, in the
//!   `sd_asym_cpucapacity` domain spanning the previous CPU ([`sd_asym_cpucapacity`]);
//!   a result of -1 falls through to the fast path with `new_cpu = prev_cpu`;
//! * otherwise `select_idle_sibling(p, prev, prev)` (no `wake_affine()`: the waker's CPU is
//!   not modelled, so `target` is the previous CPU), with the task's `recent_used_cpu`;
//! * then `select_task_rq()`'s affinity check: a CPU outside the task's mask is replaced by
//!   `select_fallback_rq()`.
//!
//! Simplifications (the views hold what the simulator has): one LLC spanning every CPU
//! for the fast path and no SMT; no sync wake-ups; the fork walk's group capacities are
//! the current `capacity_of()` sums; RT tasks take the symmetric fast path as a stand-in
//! for `find_lowest_rq()`. Mainline since v7.0 (commit fd54d81c2c0e, "sched/fair: Skip
//! SCHED_IDLE rq for SCHED_IDLE task") no longer takes a SCHED_IDLE-only CPU for a task
//! that is itself SCHED_IDLE; the model keeps the earlier rule for every task. The
//! `sched_idle_select` profiles differ in `sched_balance_find_dst_group_cpu()` only
//! (VARIANTS.md §3).

use super::domains::SchedDomains;
pub use schedmath::fair::eas::PerfDomain;
use schedmath::fair::idlest::SchedDomainTopology;
use schedmath::fair::wake::{WakeCpu, WakeTask};

/// What selection reads about one CPU.
pub type CpuView = WakeCpu;

/// The task being placed.
pub type TaskView<'a> = WakeTask<'a>;

impl SchedDomainTopology for SchedDomains {
    fn nr_levels(&self, cpu: usize) -> usize {
        self.of_cpu(cpu).len()
    }

    fn span(&self, cpu: usize, level: usize) -> &[usize] {
        self.of_cpu(cpu)
            .get(level)
            .map_or(&[], |d| d.span.as_slice())
    }

    fn group(&self, cpu: usize, level: usize, i: usize) -> Option<&[usize]> {
        self.of_cpu(cpu)
            .get(level)?
            .groups
            .get(i)
            .map(Vec::as_slice)
    }

    fn imbalance_pct(&self, cpu: usize, level: usize) -> u32 {
        self.of_cpu(cpu).get(level).map_or(100, |d| d.imbalance_pct)
    }

    fn asym_cpucapacity(&self, cpu: usize, level: usize) -> bool {
        self.of_cpu(cpu)
            .get(level)
            .is_some_and(|d| d.asym_cpucapacity)
    }
}

/// `per_cpu(sd_asym_cpucapacity, cpu)`'s span: `cpu`'s lowest domain flagged
/// `SD_ASYM_CPUCAPACITY_FULL`, i.e. whose span holds every CPU capacity of the platform
/// (`asym_cpu_capacity_classify()`); `None` without one. `caps` is each CPU's
/// `arch_scale_cpu_capacity()`. It depends on the topology only: the kernel sets it when
/// it builds the domains (`update_top_cache_domain()`), the engine once per run.
pub fn sd_asym_cpucapacity<'d>(
    domains: &'d SchedDomains,
    caps: &[u64],
    cpu: usize,
) -> Option<&'d [usize]> {
    let all: std::collections::BTreeSet<u64> = caps.iter().copied().collect();
    domains
        .of_cpu(cpu)
        .iter()
        .find(|d| {
            d.asym_cpucapacity
                && d.span
                    .iter()
                    .filter_map(|&c| caps.get(c).copied())
                    .collect::<std::collections::BTreeSet<_>>()
                    == all
        })
        .map(|d| d.span.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::domains::SchedDomain;
    use schedmath::fair::idlest::sched_balance_find_dst_cpu;
    use schedmath::profile::SchedIdleSelect;

    fn view(cap: u64, idle: bool) -> CpuView {
        let mut v = CpuView {
            idle,
            nr_running: u32::from(!idle),
            ..CpuView::default()
        };
        v.util.capacity_orig = cap;
        v.capacity.capacity_orig = cap;
        v.capacity.cpu_capacity = cap;
        v.load = if idle { 0 } else { 1024 };
        v
    }

    /// Littles {0,1} (MC) and bigs {2,3} (MC) under an asymmetric PKG.
    fn big_little() -> SchedDomains {
        let dom = |name, span: Vec<usize>, groups: Vec<Vec<usize>>, asym| SchedDomain {
            name,
            span,
            groups,
            imbalance_pct: 117,
            asym_cpucapacity: asym,
        };
        let mc = |c: usize, o: usize| {
            dom(
                "MC",
                vec![c.min(o), c.max(o)],
                vec![vec![c], vec![o]],
                false,
            )
        };
        let pkg = |own: Vec<usize>, other: Vec<usize>| {
            dom("PKG", vec![0, 1, 2, 3], vec![own, other], true)
        };
        SchedDomains {
            per_cpu: vec![
                vec![mc(0, 1), pkg(vec![0, 1], vec![2, 3])],
                vec![mc(1, 0), pkg(vec![0, 1], vec![2, 3])],
                vec![mc(2, 3), pkg(vec![2, 3], vec![0, 1])],
                vec![mc(3, 2), pkg(vec![2, 3], vec![0, 1])],
            ],
        }
    }

    #[test]
    fn topology_reads_the_platform_domains() {
        let d = big_little();
        assert_eq!(d.nr_levels(2), 2);
        assert_eq!(d.span(2, 1), &[0, 1, 2, 3]);
        assert_eq!(d.group(2, 1, 1), Some(&[0usize, 1][..]));
        assert_eq!(d.group(2, 1, 2), None);
        assert_eq!(d.span(9, 0), &[] as &[usize]);
        assert!(d.asym_cpucapacity(0, 1) && !d.asym_cpucapacity(0, 0));
        let cpus = [
            view(512, true),
            view(512, true),
            view(1024, true),
            view(1024, true),
        ];
        assert_eq!(
            sd_asym_cpucapacity(&d, &[512, 512, 1024, 1024], 1),
            Some(&[0usize, 1, 2, 3][..])
        );
        // Every CPU busy but 3: the fork from 0 goes to the big cluster's idle CPU.
        let mut cpus = cpus.map(|v| CpuView {
            idle: false,
            nr_running: 1,
            load: 1024,
            ..v
        });
        cpus[3] = CpuView {
            idle_stamp: 5, // a zero stamp never counts as the latest idle
            ..view(1024, true)
        };
        let all = [0, 1, 2, 3];
        let p = TaskView {
            util: Default::default(),
            uclamp_min: 0,
            uclamp_max: 1024,
            allowed: &all,
        };
        let c = sched_balance_find_dst_cpu(&cpus, &d, &p, 0, SchedIdleSelect::IdleFirst, false);
        assert_eq!(c, 3);
    }
}
