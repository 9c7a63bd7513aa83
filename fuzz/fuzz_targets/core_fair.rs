// SPDX-License-Identifier: GPL-2.0-only
//! The fair class (kernel/sched/fair.c) with arbitrary inputs: EEVDF runqueue operation
//! sequences (enqueue, dequeue with and without delay, pick, update_curr, reweight, yield,
//! custom slices), the 6.1 CFS slice/placement/preemption arithmetic, group shares and
//! load-balance classification, and wake-up placement (find_energy_efficient_cpu,
//! select_idle_sibling, the fork slow path) on arbitrary CPUs, masks, Energy Models and
//! domains. No panic (overflow checks on); a picked entity is curr or one in the tree;
//! group shares stay within [MIN_SHARES, tg_shares] for positive shares; a fallback CPU
//! is allowed whenever the mask is not empty.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedmath::capacity::{CfsRqUtil, CpuCapacity, CpuUtilRq, TaskUtil};
use schedmath::energy::{self, EmPerfDomain, EmPerfState, EmTable, EM_MAX_PERF_STATES};
use schedmath::fair::cfs::{self, CfsCurr, CfsFeatures, CfsPlaceEntity, SliceEnv, SliceLevel};
use schedmath::fair::eas::{self, PerfDomain};
use schedmath::fair::eevdf::{self, EevdfFeatures, SchedEntity};
use schedmath::fair::group::{self, TgLoadContrib};
use schedmath::fair::idlest::{self, SchedDomainTopology};
use schedmath::fair::lb::{self, SgLbStats};
use schedmath::fair::rq::{DequeueFlags, EevdfConfig, EevdfRq, EnqueueFlags};
use schedmath::fair::sysctl::{self, TunableScaling};
use schedmath::fair::wake::{self, SisDomains, WakeCpu, WakeTask};
use schedmath::fair::weight::{self, FairPolicy, LoadWeight};
use schedmath::profile::SchedIdleSelect;
use schedmath::Profile;

const N: usize = 8;

fn profile(u: &mut Unstructured) -> Result<Profile> {
    let vs = Profile::VARIANTS;
    Ok(vs[u.choose_index(vs.len())?].profile)
}

fn lw(u: &mut Unstructured) -> Result<LoadWeight> {
    Ok(LoadWeight {
        weight: u.arbitrary()?,
        inv_weight: u.arbitrary()?,
    })
}

fn entity(u: &mut Unstructured) -> Result<SchedEntity> {
    Ok(SchedEntity {
        load: lw(u)?,
        vruntime: u.arbitrary()?,
        deadline: u.arbitrary()?,
        vlag: u.arbitrary()?,
        slice: u.arbitrary()?,
        custom_slice: u.arbitrary()?,
        rel_deadline: u.arbitrary()?,
        on_rq: u.arbitrary()?,
        sched_delayed: u.arbitrary()?,
    })
}

fn features(u: &mut Unstructured) -> Result<EevdfFeatures> {
    Ok(EevdfFeatures {
        place_lag: u.arbitrary()?,
        place_deadline_initial: u.arbitrary()?,
        place_rel_deadline: u.arbitrary()?,
        run_to_parity: u.arbitrary()?,
        delay_dequeue: u.arbitrary()?,
        delay_zero: u.arbitrary()?,
    })
}

/// A runqueue driven by a sequence of the kernel's operations.
fn eevdf_rq(u: &mut Unstructured) -> Result<()> {
    let config = EevdfConfig {
        base_slice: u.arbitrary()?,
        normalized_base_slice: u.arbitrary()?,
        tick_nsec: u.arbitrary()?,
        features: features(u)?,
    };
    let mut rq: EevdfRq<N> = EevdfRq::new(u.arbitrary()?, config, profile(u)?);
    for _ in 0..u.int_in_range(0..=64)? {
        let i = u.int_in_range(0..=N)?; // N: one past the end, refused
        match u.int_in_range(0..=10)? {
            0 => {
                let _ = rq.add_entity(entity(u)?);
            }
            1 => {
                let _ = rq.enqueue_entity(
                    i,
                    EnqueueFlags {
                        initial: u.arbitrary()?,
                    },
                );
            }
            2 => {
                let flags = DequeueFlags {
                    sleep: u.arbitrary()?,
                    special: u.arbitrary()?,
                    delayed: u.arbitrary()?,
                    save: u.arbitrary()?,
                    r#move: u.arbitrary()?,
                };
                let _ = rq.dequeue_entity(i, flags);
            }
            3 => {
                let _ = rq.requeue_delayed_entity(i);
            }
            4 => {
                let _ = rq.set_next_entity(i);
            }
            5 => rq.put_prev_entity(),
            6 => {
                let _ = rq.update_curr(u.arbitrary()?);
            }
            7 => {
                let _ = rq.reweight_entity(i, u.arbitrary()?);
            }
            8 => {
                let nice = u.int_in_range(-21..=20)?;
                let policy = if u.arbitrary()? {
                    FairPolicy::Idle
                } else {
                    FairPolicy::Normal
                };
                let _ = rq.reweight_task(i, nice, policy);
            }
            9 => {
                let _ = rq.yield_task_fair();
            }
            _ => {
                let _ = rq.set_slice(i, u.arbitrary()?);
            }
        }
        let _ = rq.avg_vruntime();
        let _ = rq.entity_eligible(i);
        let _ = rq.cfs_rq_min_slice();
        let _ = (rq.root_min_vruntime(), rq.root_min_slice());
        let protect = u.arbitrary()?;
        if let Some(k) = rq.pick_eevdf(protect) {
            assert!(
                rq.curr == Some(k) || rq.entities[k].in_tree,
                "picked {k}: neither curr nor in the tree"
            );
        }
    }
    Ok(())
}

/// The EEVDF helpers on a free-standing cfs_rq.
fn eevdf_helpers(u: &mut Unstructured) -> Result<()> {
    let mut cfs = eevdf::CfsRq {
        min_vruntime: u.arbitrary()?,
        avg_vruntime: u.arbitrary()?,
        avg_load: u.arbitrary()?,
        nr_queued: u.arbitrary()?,
        load: lw(u)?,
    };
    let mut se = entity(u)?;
    let pse = entity(u)?;
    let curr = if u.arbitrary()? {
        Some(entity(u)?.as_curr())
    } else {
        None
    };
    let f = features(u)?;
    let _ = eevdf::entity_key(&cfs, se.vruntime);
    eevdf::avg_vruntime_add(&mut cfs, &se);
    eevdf::avg_vruntime_sub(&mut cfs, &pse);
    eevdf::avg_vruntime_update(&mut cfs, u.arbitrary()?);
    let _ = eevdf::avg_vruntime(&cfs, curr);
    let _ = eevdf::entity_eligible(&cfs, curr, &se);
    let _ = eevdf::update_entity_lag(&cfs, curr, &mut se, u.arbitrary()?);
    let _ = eevdf::place_entity(&cfs, curr, &mut se, u.arbitrary()?, &f, u.arbitrary()?);
    let _ = eevdf::update_deadline(&mut se, u.arbitrary()?);
    let _ = eevdf::cfs_rq_min_slice(u.arbitrary()?, u.arbitrary()?);
    eevdf::set_protect_slice(&mut se, u.arbitrary()?, f.run_to_parity, u.arbitrary()?);
    let _ = eevdf::protect_slice(&se);
    let tree = [(1u8, &pse)];
    let _ = eevdf::check_preempt_wakeup_fair(
        &cfs,
        (0u8, &mut se),
        (1u8, &pse),
        tree.iter().copied(),
        u.arbitrary()?,
        &f,
    );
    Ok(())
}

/// 6.1's CFS arithmetic, sysctls, weights, group shares and load-balance classification.
fn cfs_group_lb(u: &mut Unstructured) -> Result<()> {
    let p = profile(u)?;
    let scaling = match u.int_in_range(0..=2)? {
        0 => TunableScaling::None,
        1 => TunableScaling::Log,
        _ => TunableScaling::Linear,
    };
    let sys = sysctl::update_sysctl(u.arbitrary()?, scaling, &p);
    let _ = sysctl::__setparam_fair(u.arbitrary()?, u.arbitrary()?);
    let mut levels = [SliceLevel::default(); cfs::CFS_MAX_LEVELS + 1];
    let n = u.int_in_range(0..=levels.len())?;
    for l in &mut levels[..n] {
        *l = SliceLevel {
            se_weight: u.arbitrary()?,
            se_on_rq: u.arbitrary()?,
            cfs_weight: u.arbitrary()?,
        };
    }
    let env = SliceEnv {
        cfs_nr_running: u.arbitrary()?,
        cfs_idle_nr_running: u.arbitrary()?,
        rq_h_nr_running: u.arbitrary()?,
        se_idle: u.arbitrary()?,
    };
    let feat = CfsFeatures {
        gentle_fair_sleepers: u.arbitrary()?,
        start_debit: u.arbitrary()?,
        alt_period: u.arbitrary()?,
        base_slice: u.arbitrary()?,
    };
    let _ = cfs::__sched_period(u.arbitrary()?, &sys);
    let _ = cfs::sched_slice(&levels[..n], &env, &feat, &sys);
    let _ = cfs::sched_vslice(&levels[..n], &env, &feat, &sys, &mut lw(u)?);
    let mut pe = CfsPlaceEntity {
        vruntime: u.arbitrary()?,
        exec_start: u.arbitrary()?,
        idle: u.arbitrary()?,
        load: lw(u)?,
    };
    let _ = cfs::place_entity(
        u.arbitrary()?,
        &mut pe,
        u.arbitrary()?,
        u.arbitrary()?,
        &levels[..n],
        &env,
        &feat,
        &sys,
    );
    let curr = CfsCurr {
        vruntime: u.arbitrary()?,
        sum_exec_runtime: u.arbitrary()?,
        prev_sum_exec_runtime: u.arbitrary()?,
    };
    let _ = cfs::check_preempt_tick(&curr, u.arbitrary()?, &levels[..n], &env, &sys);
    let _ = cfs::wakeup_preempt_entity(u.arbitrary()?, u.arbitrary()?, &mut lw(u)?, &sys);
    let vs: [(u8, u64); 3] = u.arbitrary()?;
    let _ = cfs::pick_next_entity(u.arbitrary::<Option<(u8, u64)>>()?, vs.iter().copied());

    let _ = weight::set_load_weight(u.arbitrary()?, FairPolicy::Normal);
    let mut w = lw(u)?;
    weight::__update_inv_weight(&mut w);
    let _ = weight::__calc_delta(u.arbitrary()?, u.arbitrary()?, &mut w);
    let _ = weight::calc_delta_fair(u.arbitrary()?, &mut lw(u)?);

    let tg_shares: i64 = u.arbitrary()?;
    if let Ok(s) = group::calc_group_shares(
        tg_shares,
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
    ) {
        if tg_shares >= group::MIN_SHARES {
            assert!((group::MIN_SHARES..=tg_shares).contains(&s), "shares {s}");
        }
    }
    let mut grq = TgLoadContrib {
        tg_load_avg_contrib: u.arbitrary()?,
        last_update_tg_load_avg: u.arbitrary()?,
    };
    let mut tg_load_avg: i64 = u.arbitrary()?;
    let _ = group::update_tg_load_avg(
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        &mut grq,
        &mut tg_load_avg,
        &p,
    );
    group::clear_tg_load_avg(u.arbitrary()?, u.arbitrary()?, &mut grq, &mut tg_load_avg);

    let sgs = |u: &mut Unstructured| -> Result<SgLbStats> {
        let mut s = SgLbStats {
            group_load: u.arbitrary()?,
            group_capacity: u.arbitrary()?,
            group_util: u.arbitrary()?,
            group_runnable: u.arbitrary()?,
            sum_nr_running: u.arbitrary()?,
            sum_h_nr_running: u.arbitrary()?,
            idle_cpus: u.arbitrary()?,
            group_weight: u.arbitrary()?,
            group_misfit_task_load: u.arbitrary()?,
            group_asym_packing: u.arbitrary()?,
            group_smt_balance: u.arbitrary()?,
            ..SgLbStats::default()
        };
        let pct = u.arbitrary()?;
        s.group_type = lb::group_classify(pct, u.arbitrary()?, &s, &p);
        if let Ok(a) = lb::sg_avg_load(s.group_load, s.group_capacity) {
            s.avg_load = a;
        }
        let _ = lb::group_has_capacity(pct, &s);
        Ok(s)
    };
    let (a, b) = (sgs(u)?, sgs(u)?);
    let _ = lb::smt_balance(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    let _ = lb::update_pick_idlest(&a, u.arbitrary()?, &b, u.arbitrary()?);
    let _ = lb::find_dst_group_stays_local(u.arbitrary()?, &a, u.arbitrary()?, &b, u.arbitrary()?);
    Ok(())
}

fn wake_cpu(u: &mut Unstructured) -> Result<WakeCpu> {
    Ok(WakeCpu {
        util: CpuUtilRq {
            cpu: u.arbitrary()?,
            capacity_orig: u.arbitrary()?,
            cfs: CfsRqUtil {
                util_avg: u.arbitrary()?,
                runnable_avg: u.arbitrary()?,
                util_est: u.arbitrary()?,
            },
            util_est_feat: u.arbitrary()?,
        },
        capacity: CpuCapacity {
            capacity_orig: u.arbitrary()?,
            cpu_capacity: u.arbitrary()?,
            hw_load_avg: u.arbitrary()?,
            cpufreq_pressure: u.arbitrary()?,
        },
        util_rt: u.arbitrary()?,
        util_irq: u.arbitrary()?,
        rt_runnable: u.arbitrary()?,
        uclamp_min: u.arbitrary()?,
        uclamp_max: u.arbitrary()?,
        uclamp_idle: u.arbitrary()?,
        idle: u.arbitrary()?,
        sched_idle: u.arbitrary()?,
        exit_latency: u.arbitrary()?,
        idle_stamp: u.arbitrary()?,
        load: u.arbitrary()?,
        nr_running: u.arbitrary()?,
    })
}

/// A CPU list: indices up to one past the CPUs (an absent CPU must not panic).
fn mask(u: &mut Unstructured, n: usize) -> Result<Vec<usize>> {
    let mut m: Vec<usize> = (0..u.int_in_range(0..=n + 1)?)
        .map(|_| u.int_in_range(0..=n))
        .collect::<Result<_>>()?;
    if u.arbitrary()? {
        m.sort_unstable();
        m.dedup();
    }
    Ok(m)
}

fn em(u: &mut Unstructured) -> Result<EmPerfDomain> {
    let mut table = EmTable::new();
    for _ in 0..u.int_in_range(0..=6)? {
        let s = EmPerfState {
            frequency: u.arbitrary()?,
            power: u.arbitrary()?,
            flags: u.arbitrary()?,
            ..Default::default()
        };
        if table.push(s).is_err() {
            break;
        }
    }
    let _ = energy::em_create_perf_table(&mut table, u.arbitrary()?);
    Ok(EmPerfDomain {
        table,
        flags: u.arbitrary()?,
        min_perf_state: u.int_in_range(0..=EM_MAX_PERF_STATES + 1)?,
        max_perf_state: u.int_in_range(0..=EM_MAX_PERF_STATES + 1)?,
    })
}

/// Domains per CPU: (span, groups, imbalance_pct, asym) per level.
struct Topo(Vec<Vec<(Vec<usize>, Vec<Vec<usize>>, u32, bool)>>);

impl SchedDomainTopology for Topo {
    fn nr_levels(&self, cpu: usize) -> usize {
        self.0.get(cpu).map_or(0, Vec::len)
    }
    fn span(&self, cpu: usize, level: usize) -> &[usize] {
        self.0
            .get(cpu)
            .and_then(|l| l.get(level))
            .map_or(&[], |d| d.0.as_slice())
    }
    fn group(&self, cpu: usize, level: usize, i: usize) -> Option<&[usize]> {
        Some(self.0.get(cpu)?.get(level)?.1.get(i)?.as_slice())
    }
    fn imbalance_pct(&self, cpu: usize, level: usize) -> u32 {
        self.0
            .get(cpu)
            .and_then(|l| l.get(level))
            .map_or(0, |d| d.2)
    }
    fn asym_cpucapacity(&self, cpu: usize, level: usize) -> bool {
        self.0
            .get(cpu)
            .and_then(|l| l.get(level))
            .is_some_and(|d| d.3)
    }
}

/// Wake-up placement on arbitrary CPUs: EAS, the fast path, the fork slow path.
fn placement(u: &mut Unstructured) -> Result<()> {
    let n = u.int_in_range(0..=8)?;
    let cpus: Vec<WakeCpu> = (0..n).map(|_| wake_cpu(u)).collect::<Result<_>>()?;
    let allowed = mask(u, n)?;
    let p = WakeTask {
        util: TaskUtil {
            task_cpu: u.arbitrary()?,
            util_avg: u.arbitrary()?,
            util_est: u.arbitrary()?,
            on_rq_queued: u.arbitrary()?,
            is_current: u.arbitrary()?,
            last_update_time: u.arbitrary()?,
        },
        uclamp_min: u.arbitrary()?,
        uclamp_max: u.arbitrary()?,
        allowed: &allowed,
    };
    let prev = u.int_in_range(0..=n)?;
    let uclamp_used = u.arbitrary()?;
    let ems: Vec<EmPerfDomain> = (0..u.int_in_range(0..=3)?)
        .map(|_| em(u))
        .collect::<Result<_>>()?;
    let spans: Vec<Vec<usize>> = (0..ems.len()).map(|_| mask(u, n)).collect::<Result<_>>()?;
    let pds: Vec<PerfDomain> = ems
        .iter()
        .zip(&spans)
        .map(|(em, cpus)| PerfDomain { cpus, em })
        .collect();
    let asym = mask(u, n)?;
    let asym_span = if u.arbitrary()? {
        Some(asym.as_slice())
    } else {
        None
    };
    let _ = eas::find_energy_efficient_cpu(&cpus, &pds, asym_span, &p, prev, uclamp_used);
    let llc = mask(u, n)?;
    let sd = SisDomains {
        asym_active: u.arbitrary()?,
        asym_span,
        llc_span: if u.arbitrary()? {
            Some(llc.as_slice())
        } else {
            None
        },
    };
    let target = u.int_in_range(0..=n)?;
    let recent = if u.arbitrary()? {
        Some(u.int_in_range(0..=n)?)
    } else {
        None
    };
    let r = wake::select_idle_sibling(cpus.as_slice(), &p, prev, target, recent, &sd, uclamp_used);
    let c = wake::select_fallback_rq(r.cpu, &allowed);
    if !allowed.is_empty() {
        assert!(allowed.contains(&c), "fallback {c} outside {allowed:?}");
    }
    let levels = |u: &mut Unstructured| -> Result<Vec<(Vec<usize>, Vec<Vec<usize>>, u32, bool)>> {
        (0..u.int_in_range(0..=3)?)
            .map(|_| {
                let groups = (0..u.int_in_range(0..=3)?)
                    .map(|_| mask(u, n))
                    .collect::<Result<_>>()?;
                Ok((mask(u, n)?, groups, u.arbitrary()?, u.arbitrary()?))
            })
            .collect()
    };
    let topo = Topo((0..n + 1).map(|_| levels(u)).collect::<Result<_>>()?);
    let sel = if u.arbitrary()? {
        SchedIdleSelect::IdleFirst
    } else {
        SchedIdleSelect::SchedIdleAsIdle
    };
    let _ = idlest::sched_balance_find_dst_cpu(&cpus, &topo, &p, prev, sel, uclamp_used);
    let group = mask(u, n)?;
    let _ = idlest::sched_balance_find_dst_group_cpu(&cpus, &group, &allowed, prev, sel);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = match u.int_in_range(0..=3u8) {
        Ok(0) => eevdf_rq(&mut u),
        Ok(1) => eevdf_helpers(&mut u),
        Ok(2) => placement(&mut u),
        _ => cfs_group_lb(&mut u),
    };
});
