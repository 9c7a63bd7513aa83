// SPDX-License-Identifier: GPL-2.0-only
//! Energy-aware wake-up — `find_energy_efficient_cpu()`, `compute_energy()` and the
//! `energy_env` helpers `eenv_task_busy_time()`, `eenv_pd_busy_time()`,
//! `eenv_pd_max_util()` (kernel/sched/fair.c), over the Energy Model of
//! [`crate::energy`].
//!
//! Per performance domain: the allowed CPU with the most spare capacity that the task fits
//! (a full fit beats one that misses only its uclamp_min), and the previous CPU always;
//! each is priced as the domain's energy with the task placed there minus the energy
//! without it. The lowest delta wins, the previous CPU on ties; when no candidate fits
//! the boost, the biggest capacity. There is no "6 % of the previous energy" margin: that
//! rule went with the v5.x rework that introduced `energy_env`, and the commit the fair
//! fixtures name has none. All CPUs are online; the result's record (every CPU tested,
//! every domain priced, the rule that decided) is what the caller shows, never
//! recomputed.

use super::wake::{cpumask_test_cpu, WakeCpu, WakeTask};
use crate::capacity::topology::NR_CPUS;
use crate::capacity::{
    cpu_util, effective_cpu_util, get_actual_cpu_capacity, scale_irq_capacity, util_fits_cpu,
    EffectiveUtilInput,
};
use crate::energy::{em_cpu_energy, EmPerfDomain};
use crate::math::SCHED_CAPACITY_SCALE;
use crate::schedutil::sugov_effective_cpu_perf;

/// One performance domain (`struct perf_domain`): its CPUs (sorted) and EM table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfDomain<'a> {
    /// `perf_domain_span(pd)`.
    pub cpus: &'a [usize],
    /// `pd->em_pd`.
    pub em: &'a EmPerfDomain,
}

/// `struct energy_env`: the utilization landscape of one domain's estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EnergyEnv {
    /// The task's contribution ([`eenv_task_busy_time`]).
    pub task_busy_time: u64,
    /// The domain's utilization without the task ([`eenv_pd_busy_time`]).
    pub pd_busy_time: u64,
    /// `get_actual_cpu_capacity()` of the domain's first CPU.
    pub cpu_cap: u64,
    /// `nr_cpus * cpu_cap`.
    pub pd_cap: u64,
}

/// `effective_cpu_util(cpu, util_cfs, &min, &max)` of one CPU as EAS calls it.
fn effective_util(v: &WakeCpu, util_cfs: u64, uclamp_used: bool) -> crate::capacity::EffectiveUtil {
    effective_cpu_util(&EffectiveUtilInput {
        capacity: v.util.capacity_orig,
        util_cfs,
        util_rt: v.util_rt,
        util_irq: v.util_irq,
        rt_runnable: v.rt_runnable,
        uclamp_used,
        uclamp_min: v.uclamp_min,
        uclamp_max: v.uclamp_max,
        ..EffectiveUtilInput::default()
    })
}

/// `eenv_task_busy_time()`: `task_util_est(p)` scaled by `prev`'s IRQ pressure
/// (`scale_irq_capacity()` against its `arch_scale_cpu_capacity()`), or that whole
/// capacity when IRQ saturates it.
pub fn eenv_task_busy_time(cpus: &[WakeCpu], p: &WakeTask, prev: usize) -> u64 {
    let Some(v) = cpus.get(prev) else { return 0 };
    let (max_cap, irq) = (v.util.capacity_orig, v.util_irq);
    if irq >= max_cap {
        max_cap
    } else {
        scale_irq_capacity(p.task_util_est(), irq, max_cap)
    }
}

/// `eenv_pd_busy_time()`: Σ `effective_cpu_util()` of the domain's CPUs without the task,
/// at most `pd_cap` (the sum wraps).
pub fn eenv_pd_busy_time(
    eenv: &EnergyEnv,
    cpus: &[WakeCpu],
    pd_cpus: &[usize],
    p: &WakeTask,
    uclamp_used: bool,
) -> u64 {
    let mut busy_time = 0u64;
    for v in pd_cpus.iter().filter_map(|&c| cpus.get(c)) {
        let util = cpu_util(&v.util, Some(&p.util), -1, false);
        busy_time = busy_time.wrapping_add(effective_util(v, util, uclamp_used).ret);
    }
    core::cmp::min(eenv.pd_cap, busy_time)
}

/// `eenv_pd_max_util()`: the largest performance request of the domain's CPUs with the
/// task on `dst` (`None`: nowhere), boosted utilization through `effective_cpu_util()`
/// and `sugov_effective_cpu_perf()`, at most `cpu_cap`. On `dst`, with uclamp in use, the
/// task's clamps join the rq's: its min by max, its max replaces an idle rq's stale max,
/// else by max.
pub fn eenv_pd_max_util(
    eenv: &EnergyEnv,
    cpus: &[WakeCpu],
    pd_cpus: &[usize],
    p: &WakeTask,
    dst: Option<usize>,
    uclamp_used: bool,
) -> u64 {
    let dst_cpu = dst.and_then(|d| i32::try_from(d).ok()).unwrap_or(-1);
    let mut max_util = 0u64;
    for &c in pd_cpus {
        let Some(v) = cpus.get(c) else { continue };
        let util = cpu_util(&v.util, Some(&p.util), dst_cpu, true);
        let e = effective_util(v, util, uclamp_used);
        let (mut min, mut max) = (e.min, e.max);
        if dst == Some(c) && uclamp_used {
            min = core::cmp::max(min, p.uclamp_min);
            max = if v.uclamp_idle {
                p.uclamp_max
            } else {
                core::cmp::max(max, p.uclamp_max)
            };
        }
        max_util = core::cmp::max(max_util, sugov_effective_cpu_perf(e.ret, min, max));
    }
    core::cmp::min(max_util, eenv.cpu_cap)
}

/// `compute_energy()`: `em_cpu_energy()` of the domain at [`eenv_pd_max_util`] with the
/// task on `dst`, its busy time plus the task's when placed (at most `pd_cap`).
pub fn compute_energy(
    eenv: &EnergyEnv,
    cpus: &[WakeCpu],
    pd: &PerfDomain,
    p: &WakeTask,
    dst: Option<usize>,
    uclamp_used: bool,
) -> u64 {
    let max_util = eenv_pd_max_util(eenv, cpus, pd.cpus, p, dst, uclamp_used);
    let mut busy_time = eenv.pd_busy_time;
    if dst.is_some() {
        busy_time = core::cmp::min(eenv.pd_cap, busy_time.wrapping_add(eenv.task_busy_time));
    }
    em_cpu_energy(pd.em, max_util, busy_time, eenv.cpu_cap).energy
}

/// One CPU [`find_energy_efficient_cpu`] tested (in the EAS domain, allowed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FeecCpu {
    /// The CPU.
    pub cpu: usize,
    /// `cpu_util(cpu, p, cpu, 0)`: its utilization with the task.
    pub util: u64,
    /// `util_fits_cpu()` with the max-aggregated clamps: 1 fits, -1 fits but misses
    /// uclamp_min, 0 skipped.
    pub fits: i32,
    /// `capacity_of() - util`, stopping at 0 (meaningful when it fits).
    pub spare: u64,
}

/// One performance domain [`find_energy_efficient_cpu`] priced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FeecPd {
    /// Its first CPU (names the domain).
    pub first_cpu: usize,
    /// `compute_energy()` without the task.
    pub base_energy: u64,
    /// With the task on the previous CPU (when it is in the domain and fits).
    pub prev_energy: Option<u64>,
    /// The domain's max-spare-capacity CPU (other than prev), if one fits.
    pub max_spare_cap_cpu: Option<usize>,
    /// With the task there, when it was priced (its spare beat prev's and its fit and
    /// capacity could still win).
    pub max_spare_energy: Option<u64>,
}

/// Why [`find_energy_efficient_cpu`] returned what it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FeecRule {
    /// No performance domain (EAS off): -1, the caller takes the idle path.
    NoPerfDomain,
    /// No `SD_ASYM_CPUCAPACITY` domain spans the previous CPU: -1.
    NoAsymDomain,
    /// The task has no utilization and no uclamp_min: stays on prev.
    NoUtil,
    /// An energy with the task came out below the base (utilization changed under the
    /// estimate): stays on prev.
    UtilChanged,
    /// The best candidate beats prev (fits better, lower delta, or more capacity).
    BestEnergy,
    /// Nothing beat prev.
    Prev,
}

impl FeecRule {
    /// Its name in records.
    pub fn name(self) -> &'static str {
        match self {
            FeecRule::NoPerfDomain => "no-perf-domain",
            FeecRule::NoAsymDomain => "no-asym-domain",
            FeecRule::NoUtil => "no-util",
            FeecRule::UtilChanged => "util-changed",
            FeecRule::BestEnergy => "best-energy",
            FeecRule::Prev => "prev",
        }
    }
}

/// What [`find_energy_efficient_cpu`] computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeecResult {
    /// The kernel's return value (`None`: -1).
    pub target: Option<usize>,
    /// Why.
    pub rule: FeecRule,
    /// Every CPU tested, in domain order.
    pub cpus: heapless::Vec<FeecCpu, NR_CPUS>,
    /// Every domain priced.
    pub pds: heapless::Vec<FeecPd, NR_CPUS>,
    /// `prev_delta` (`u64::MAX`: prev not priced).
    pub prev_delta: u64,
    /// `best_delta` (`u64::MAX`: none).
    pub best_delta: u64,
}

/// More CPUs or domains than [`NR_CPUS`]: the record cannot hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TooManyCpus;

/// `find_energy_efficient_cpu()`: the task's most energy-efficient CPU from `prev`.
/// `asym_span` is the `sd_asym_cpucapacity` domain above the waking CPU that spans
/// `prev` (`None`: no such domain); `pds` the root domain's performance domains.
///
/// Traps: `util_min`/`util_max` are reset per domain, not per CPU, so once a CPU with
/// active clamps max-aggregated them the next CPUs of the domain test with those; prev is
/// priced whenever it fits, the max-spare CPU only when its spare beats prev's; the first
/// priced candidate always becomes best (`best_fits` starts at -1); `pd_cap` counts the
/// first CPU's actual capacity once per CPU.
pub fn find_energy_efficient_cpu(
    cpus: &[WakeCpu],
    pds: &[PerfDomain],
    asym_span: Option<&[usize]>,
    p: &WakeTask,
    prev: usize,
    uclamp_used: bool,
) -> Result<FeecResult, TooManyCpus> {
    let mut r = FeecResult {
        target: None,
        rule: FeecRule::NoPerfDomain,
        cpus: heapless::Vec::new(),
        pds: heapless::Vec::new(),
        prev_delta: u64::MAX,
        best_delta: u64::MAX,
    };
    if cpus.len() > NR_CPUS || pds.len() > NR_CPUS {
        return Err(TooManyCpus);
    }
    if pds.is_empty() {
        return Ok(r);
    }
    let Some(sd) = asym_span.filter(|s| cpumask_test_cpu(prev, s)) else {
        r.rule = FeecRule::NoAsymDomain;
        return Ok(r);
    };
    r.target = Some(prev);
    let (p_util_min, p_util_max) = if uclamp_used {
        (p.uclamp_min, p.uclamp_max)
    } else {
        (0, SCHED_CAPACITY_SCALE)
    };
    if p.task_util_est() == 0 && p_util_min == 0 {
        r.rule = FeecRule::NoUtil;
        return Ok(r);
    }
    let mut eenv = EnergyEnv {
        task_busy_time: eenv_task_busy_time(cpus, p, prev),
        ..EnergyEnv::default()
    };
    let (mut prev_fits, mut best_fits) = (-1i32, -1i32);
    let (mut prev_actual_cap, mut best_actual_cap) = (0u64, 0u64);
    let mut best_energy_cpu = None;
    for pd in pds {
        let (mut util_min, mut util_max) = (p_util_min, p_util_max);
        let (mut prev_spare_cap, mut max_spare_cap) = (-1i64, -1i64);
        let mut max_spare_cap_cpu = None;
        let mut max_fits = -1i32;
        let Some(first) = pd.cpus.first() else {
            continue;
        };
        let cpu_actual_cap = cpus
            .get(*first)
            .map_or(0, |v| get_actual_cpu_capacity(&v.capacity));
        eenv.cpu_cap = cpu_actual_cap;
        eenv.pd_cap = 0;
        for &cpu in pd.cpus {
            eenv.pd_cap = eenv.pd_cap.wrapping_add(cpu_actual_cap);
            if !cpumask_test_cpu(cpu, sd) || !p.allowed_on(cpu) {
                continue;
            }
            let Some(v) = cpus.get(cpu) else { continue };
            let util = cpu_util(
                &v.util,
                Some(&p.util),
                i32::try_from(cpu).unwrap_or(-1),
                false,
            );
            if uclamp_used && !v.uclamp_idle {
                util_min = core::cmp::max(v.uclamp_min, p_util_min);
                util_max = core::cmp::max(v.uclamp_max, p_util_max);
            }
            let fits = util_fits_cpu(util, util_min, util_max, uclamp_used, &v.capacity);
            let spare = v.capacity.cpu_capacity.saturating_sub(util);
            r.cpus
                .push(FeecCpu {
                    cpu,
                    util,
                    fits,
                    spare,
                })
                .map_err(|_| TooManyCpus)?;
            if fits == 0 {
                continue;
            }
            // `long` comparisons of capacities (at most 2^63 here by construction).
            let spare_l = spare as i64;
            if cpu == prev {
                prev_spare_cap = spare_l;
                prev_fits = fits;
            } else if fits > max_fits || (fits == max_fits && spare_l > max_spare_cap) {
                max_spare_cap = spare_l;
                max_spare_cap_cpu = Some(cpu);
                max_fits = fits;
            }
        }
        if max_spare_cap_cpu.is_none() && prev_spare_cap < 0 {
            continue;
        }
        eenv.pd_busy_time = eenv_pd_busy_time(&eenv, cpus, pd.cpus, p, uclamp_used);
        let base_energy = compute_energy(&eenv, cpus, pd, p, None, uclamp_used);
        let mut rec = FeecPd {
            first_cpu: *first,
            base_energy,
            max_spare_cap_cpu,
            ..FeecPd::default()
        };
        if prev_spare_cap > -1 {
            let e = compute_energy(&eenv, cpus, pd, p, Some(prev), uclamp_used);
            rec.prev_energy = Some(e);
            if e < base_energy {
                r.pds.push(rec).map_err(|_| TooManyCpus)?;
                r.rule = FeecRule::UtilChanged;
                return Ok(r);
            }
            r.prev_delta = e - base_energy;
            prev_actual_cap = cpu_actual_cap;
            r.best_delta = core::cmp::min(r.best_delta, r.prev_delta);
        }
        if let Some(c) = max_spare_cap_cpu.filter(|_| max_spare_cap > prev_spare_cap) {
            let could_win =
                max_fits >= best_fits && !(max_fits < 0 && cpu_actual_cap <= best_actual_cap);
            if could_win {
                let e = compute_energy(&eenv, cpus, pd, p, Some(c), uclamp_used);
                rec.max_spare_energy = Some(e);
                if e < base_energy {
                    r.pds.push(rec).map_err(|_| TooManyCpus)?;
                    r.rule = FeecRule::UtilChanged;
                    return Ok(r);
                }
                let cur_delta = e - base_energy;
                if !(max_fits > 0 && best_fits > 0 && cur_delta >= r.best_delta) {
                    r.best_delta = cur_delta;
                    best_energy_cpu = Some(c);
                    best_fits = max_fits;
                    best_actual_cap = cpu_actual_cap;
                }
            }
        }
        r.pds.push(rec).map_err(|_| TooManyCpus)?;
    }
    let better = best_fits > prev_fits
        || (best_fits > 0 && r.best_delta < r.prev_delta)
        || (best_fits < 0 && best_actual_cap > prev_actual_cap);
    match best_energy_cpu.filter(|_| better) {
        Some(c) => {
            r.target = Some(c);
            r.rule = FeecRule::BestEnergy;
        }
        None => r.rule = FeecRule::Prev,
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::super::wake::test_views::{number, sized, task};
    use super::*;
    use crate::energy::{em_create_perf_table, EmPerfState, EM_PERF_DOMAIN_MICROWATTS};

    /// An EM domain of CPUs of capacity `cap` with `(kHz, µW)` states.
    fn em(cap: u64, states: &[(u64, u64)]) -> EmPerfDomain {
        let mut table: crate::energy::EmTable = states
            .iter()
            .map(|&(frequency, power)| EmPerfState {
                frequency,
                power,
                ..EmPerfState::default()
            })
            .collect();
        em_create_perf_table(&mut table, cap).unwrap();
        EmPerfDomain {
            max_perf_state: table.len() - 1,
            table,
            flags: EM_PERF_DOMAIN_MICROWATTS,
            min_perf_state: 0,
        }
    }

    fn with_util(mut v: WakeCpu, util: u64) -> WakeCpu {
        v.util.cfs.util_avg = util;
        v.idle = util == 0;
        v
    }

    const ALL: [usize; 4] = [0, 1, 2, 3];

    /// Little {0,1} capacity 512 at 1 GHz (perf 256/512, cost 10*100/256 = 3, 10*400/512
    /// = 7); big {2,3} capacity 1024 (perf 512/1024, costs 10*300/512 = 5, 10*1200/1024
    /// = 11).
    fn platform() -> (EmPerfDomain, EmPerfDomain) {
        (
            em(512, &[(500_000, 100), (1_000_000, 400)]),
            em(1024, &[(1_000_000, 300), (2_000_000, 1200)]),
        )
    }

    /// The littles {0,1} and the bigs {2,3} as performance domains.
    fn domains<'a>(little: &'a EmPerfDomain, big: &'a EmPerfDomain) -> [PerfDomain<'a>; 2] {
        [
            PerfDomain {
                cpus: &[0, 1],
                em: little,
            },
            PerfDomain {
                cpus: &[2, 3],
                em: big,
            },
        ]
    }

    #[test]
    fn little_cpu_with_most_spare_wins_on_energy() {
        let (little, big) = platform();
        let pds = domains(&little, &big);
        // prev = 2 (big, idle). CPU 0 util 100, CPU 1 util 50.
        // The task's blocked utilization is still in CPU 2's.
        let mut blocked = with_util(sized(1024, true), 100);
        blocked.idle = true;
        let cpus = [
            with_util(sized(512, false), 100),
            with_util(sized(512, false), 50),
            blocked,
            sized(1024, true),
        ];
        let cpus = number(cpus);
        let mut p = task(100, &ALL);
        p.util.task_cpu = 2;
        let r = find_energy_efficient_cpu(&cpus, &pds, Some(&ALL), &p, 2, false).unwrap();
        // Little: pd_cap 1024, busy without the task 150. With the task CPU 0 has util
        // 200 (spare 312), CPU 1 150 (spare 362): CPU 1. Base: max_util 100 * 1.25 = 125
        // -> state 0 (perf 256, cost 3), 3 * 150 = 450; task on 1: 150 * 1.25 = 187 ->
        // state 0, 3 * 250 = 750: delta 300. Big: busy without the task 0, base 0; prev 2
        // (util 100, spare 924) with the task: 125 -> state 0 (cost 5), 5 * 100 = 500:
        // delta 500. CPU 3's spare 924 is not above prev's: not priced.
        assert_eq!(r.target, Some(1));
        assert_eq!(r.rule, FeecRule::BestEnergy);
        assert_eq!((r.prev_delta, r.best_delta), (500, 300));
        assert_eq!(
            r.pds.as_slice(),
            &[
                FeecPd {
                    first_cpu: 0,
                    base_energy: 450,
                    prev_energy: None,
                    max_spare_cap_cpu: Some(1),
                    max_spare_energy: Some(750),
                },
                FeecPd {
                    first_cpu: 2,
                    base_energy: 0,
                    prev_energy: Some(500),
                    max_spare_cap_cpu: Some(3),
                    max_spare_energy: None,
                },
            ]
        );
        let fits: heapless::Vec<(usize, i32, u64), 4> =
            r.cpus.iter().map(|c| (c.cpu, c.fits, c.spare)).collect();
        assert_eq!(
            fits.as_slice(),
            &[(0, 1, 312), (1, 1, 362), (2, 1, 924), (3, 1, 924)]
        );
    }

    #[test]
    fn prev_kept_on_ties_and_without_utilization() {
        let (little, big) = platform();
        let pds = [
            PerfDomain {
                cpus: &[2, 3],
                em: &big,
            },
            PerfDomain {
                cpus: &[0, 1],
                em: &little,
            },
        ];
        let cpus = number([
            sized(512, true),
            sized(512, true),
            sized(1024, true),
            sized(1024, true),
        ]);
        // Allowed only on the bigs: prev 2 and CPU 3 cost the same, prev stays.
        let bigs = [2usize, 3];
        let mut p = task(100, &bigs);
        p.util.task_cpu = 2;
        let r = find_energy_efficient_cpu(&cpus, &pds, Some(&ALL), &p, 2, false).unwrap();
        assert_eq!((r.target, r.rule), (Some(2), FeecRule::Prev));
        // No utilization and no boost: prev, nothing priced.
        let idle_task = task(0, &ALL);
        let r = find_energy_efficient_cpu(&cpus, &pds, Some(&ALL), &idle_task, 3, false).unwrap();
        assert_eq!(
            (r.target, r.rule, r.pds.len()),
            (Some(3), FeecRule::NoUtil, 0)
        );
        // No asym domain over prev: -1; no domains: -1.
        let r = find_energy_efficient_cpu(&cpus, &pds, Some(&[0, 1]), &p, 2, false).unwrap();
        assert_eq!((r.target, r.rule), (None, FeecRule::NoAsymDomain));
        let r = find_energy_efficient_cpu(&cpus, &[], Some(&ALL), &p, 2, false).unwrap();
        assert_eq!((r.target, r.rule), (None, FeecRule::NoPerfDomain));
        assert_eq!(FeecRule::NoPerfDomain.name(), "no-perf-domain");
    }

    #[test]
    fn too_big_for_the_littles_goes_big() {
        let (little, big) = platform();
        let pds = domains(&little, &big);
        let mut blocked = with_util(sized(512, true), 420);
        blocked.idle = true;
        let cpus = number([
            blocked,
            sized(512, true),
            with_util(sized(1024, false), 300),
            sized(1024, true),
        ]);
        // util 420 (blocked on prev 0): 420 * 1280 = 537600 >= 512 * 1024 on the littles
        // (fits 0, skipped).
        let mut p = task(420, &ALL);
        p.util.task_cpu = 0;
        let r = find_energy_efficient_cpu(&cpus, &pds, Some(&ALL), &p, 0, false).unwrap();
        assert_eq!((r.target, r.rule), (Some(3), FeecRule::BestEnergy));
        assert_eq!(r.cpus[0].fits, 0);
        // Big: pd_cap 2048, busy 300; base max 300 * 1.25 = 375 -> state 0, 5 * 300 =
        // 1500; task on 3: max(375, 525) = 525 -> state 1 (1024), 11 * 720 = 7920.
        assert_eq!(r.pds.as_slice()[0].first_cpu, 2);
        assert_eq!(r.pds[0].base_energy, 1500);
        assert_eq!(r.pds[0].max_spare_energy, Some(7920));
        assert_eq!(r.best_delta, 6420);
        assert_eq!(eenv_task_busy_time(&cpus, &p, 0), 420);
    }

    #[test]
    fn task_clamps_join_on_the_destination_only() {
        let (_, big) = platform();
        let pd = PerfDomain {
            cpus: &[2, 3],
            em: &big,
        };
        let mut cpus = number([
            sized(512, true),
            sized(512, true),
            sized(1024, true),
            sized(1024, true),
        ]);
        let mut p = task(100, &ALL);
        p.uclamp_min = 700;
        let eenv = EnergyEnv {
            task_busy_time: 100,
            pd_busy_time: 0,
            cpu_cap: 1024,
            pd_cap: 2048,
        };
        // On 3 with uclamp: min 700 wins over 125.
        assert_eq!(
            eenv_pd_max_util(&eenv, &cpus, pd.cpus, &p, Some(3), true),
            700
        );
        assert_eq!(
            eenv_pd_max_util(&eenv, &cpus, pd.cpus, &p, Some(3), false),
            125
        );
        // An idle rq's stale max (200) is replaced by the task's (1024); a busy one's
        // would be max-aggregated.
        cpus[3].uclamp_max = 200;
        cpus[3].uclamp_idle = true;
        assert_eq!(
            eenv_pd_max_util(&eenv, &cpus, pd.cpus, &p, Some(3), true),
            700
        );
        p.uclamp_min = 0;
        p.uclamp_max = 100;
        assert_eq!(
            eenv_pd_max_util(&eenv, &cpus, pd.cpus, &p, Some(3), true),
            100
        );
        cpus[3].uclamp_idle = false;
        assert_eq!(
            eenv_pd_max_util(&eenv, &cpus, pd.cpus, &p, Some(3), true),
            125
        );
        // Base energy with the task nowhere: 0 busy time, no state looked up.
        let eenv0 = EnergyEnv {
            pd_busy_time: 0,
            ..eenv
        };
        assert_eq!(compute_energy(&eenv0, &cpus, &pd, &p, None, true), 0);
    }
}
