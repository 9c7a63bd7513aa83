// SPDX-License-Identifier: GPL-2.0-only
//! Capacity, topology, uclamp, overutilized and the Energy Model with arbitrary inputs: no
//! panic (overflow checks on), and `effective_cpu_util()` never returns more than the
//! CPU's capacity; a chosen EM state lies in the domain's limits.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedmath::capacity::{
    self, topology, CfsRqUtil, CpuCapacity, CpuUtilRq, EffectiveUtilInput, RqPressureUtil, TaskUtil,
};
use schedmath::energy::{self, EmPerfDomain, EmPerfState, EmTable, EM_MAX_PERF_STATES};
use schedmath::overutilized::{self, EasKeys, OverutilizedCpu, RootDomain};
use schedmath::uclamp::{self, UclampConfig, UclampId, UclampTask, UCLAMP_BUCKETS_MAX};
use schedmath::Profile;

fn cpu(u: &mut Unstructured) -> Result<CpuCapacity> {
    Ok(CpuCapacity {
        capacity_orig: u.arbitrary()?,
        cpu_capacity: u.arbitrary()?,
        hw_load_avg: u.arbitrary()?,
        cpufreq_pressure: u.arbitrary()?,
    })
}

fn pressure(u: &mut Unstructured) -> Result<RqPressureUtil> {
    Ok(RqPressureUtil {
        rt_util_avg: u.arbitrary()?,
        dl_util_avg: u.arbitrary()?,
        irq_util_avg: u.arbitrary()?,
    })
}

fn util_rq(u: &mut Unstructured) -> Result<CpuUtilRq> {
    Ok(CpuUtilRq {
        cpu: u.arbitrary()?,
        capacity_orig: u.arbitrary()?,
        cfs: CfsRqUtil {
            util_avg: u.arbitrary()?,
            runnable_avg: u.arbitrary()?,
            util_est: u.arbitrary()?,
        },
        util_est_feat: u.arbitrary()?,
    })
}

fn capacity_calls(u: &mut Unstructured) -> Result<()> {
    let (a, b): (u64, u64) = (u.arbitrary()?, u.arbitrary()?);
    let c = cpu(u)?;
    let other = pressure(u)?;
    capacity::fits_capacity(a, b);
    capacity::capacity_greater(a, b);
    capacity::get_actual_cpu_capacity(&c);
    capacity::scale_rt_capacity(&c, &other);
    capacity::update_cpu_capacity(&c, &other);
    capacity::check_cpu_capacity(a, b, u.arbitrary()?);
    capacity::util_fits_cpu(a, b, u.arbitrary()?, u.arbitrary()?, &c);
    capacity::task_fits_cpu(a, u.arbitrary()?, b, u.arbitrary()?, u.arbitrary()?, &c);
    let rq = util_rq(u)?;
    let p = TaskUtil {
        task_cpu: u.arbitrary()?,
        util_avg: u.arbitrary()?,
        util_est: u.arbitrary()?,
        on_rq_queued: u.arbitrary()?,
        is_current: u.arbitrary()?,
        last_update_time: u.arbitrary()?,
    };
    let with_task: bool = u.arbitrary()?;
    capacity::cpu_util(&rq, with_task.then_some(&p), u.arbitrary()?, u.arbitrary()?);
    capacity::cpu_util_cfs(&rq);
    capacity::cpu_util_cfs_boost(&rq);
    capacity::cpu_util_without(&rq, &p);
    capacity::cpu_bw_dl(a);
    capacity::sched_cpu_util(&rq, &other);
    capacity::scale_irq_capacity(a, b, u.arbitrary()?);
    let i = EffectiveUtilInput {
        capacity: u.arbitrary()?,
        util_cfs: u.arbitrary()?,
        util_rt: u.arbitrary()?,
        util_dl: u.arbitrary()?,
        util_irq: u.arbitrary()?,
        bw_dl: u.arbitrary()?,
        rt_runnable: u.arbitrary()?,
        uclamp_used: u.arbitrary()?,
        uclamp_min: u.arbitrary()?,
        uclamp_max: u.arbitrary()?,
        ..Default::default()
    };
    let r = capacity::effective_cpu_util(&i);
    assert!(
        r.ret <= i.capacity,
        "effective_cpu_util {r:?} above capacity {i:?}"
    );
    Ok(())
}

fn topology_calls(u: &mut Unstructured) -> Result<()> {
    let n = u.int_in_range(0..=topology::NR_CPUS + 1)?;
    let mut dmips = Vec::with_capacity(n);
    let mut freq = Vec::with_capacity(n);
    for _ in 0..n {
        dmips.push(u.arbitrary::<u32>()?);
        freq.push(u.arbitrary::<u64>()?);
    }
    let _ = topology::topology_normalize_cpu_scale(&dmips, &freq);
    let (a, b, c): (u64, u64, u64) = (u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    topology::topology_set_freq_scale(a, b, c, u.arbitrary()?);
    topology::mult_frac(a, b, c);
    topology::topology_update_hw_pressure(a, b, c);
    topology::cpufreq_update_pressure(a, b, u.arbitrary()?);
    Ok(())
}

fn uclamp_calls(u: &mut Unstructured) -> Result<()> {
    let buckets: u32 = u.int_in_range(0..=UCLAMP_BUCKETS_MAX as u32 + 2)?;
    let cfg = UclampConfig {
        buckets,
        used: u.arbitrary()?,
        default: [
            uclamp::uclamp_se_set(u.arbitrary()?, false, buckets),
            uclamp::uclamp_se_set(u.arbitrary()?, false, buckets),
        ],
    };
    uclamp::uclamp_bucket_delta(buckets);
    uclamp::uclamp_bucket_id(u.arbitrary()?, buckets);
    uclamp::uclamp_rq_is_capped(
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
    );
    let mut tasks = [UclampTask::default(); 4];
    for p in &mut tasks {
        *p = UclampTask {
            uclamp_req: [
                uclamp::uclamp_se_set(u.arbitrary()?, u.arbitrary()?, buckets),
                uclamp::uclamp_se_set(u.arbitrary()?, u.arbitrary()?, buckets),
            ],
            uclamp_enabled: u.arbitrary()?,
            sched_delayed: u.arbitrary()?,
            tg_is_root_or_autogroup: u.arbitrary()?,
            tg_uclamp: [u.arbitrary()?, u.arbitrary()?],
            ..Default::default()
        };
    }
    let mut rq = uclamp::init_uclamp_rq();
    while !u.is_empty() {
        let p = u.choose_index(tasks.len())?;
        let id = UclampId::from_index(u.int_in_range(0..=1)?).unwrap_or(UclampId::Min);
        let p = &mut tasks[p];
        match u.int_in_range(0..=8u8)? {
            0 => uclamp::uclamp_rq_inc(&mut rq, p, u.arbitrary()?, &cfg),
            1 => uclamp::uclamp_rq_dec(&mut rq, p, &cfg),
            2 => uclamp::uclamp_rq_inc_id(&mut rq, p, id, &cfg),
            3 => uclamp::uclamp_rq_dec_id(&mut rq, p, id, buckets),
            4 => uclamp::uclamp_rq_reinc_id(&mut rq, p, id, &cfg),
            5 => p.sched_delayed = u.arbitrary()?,
            6 => p.uclamp_req[id as usize] = uclamp::uclamp_se_set(u.arbitrary()?, true, buckets),
            7 => {
                uclamp::uclamp_eff_value(p, id, &cfg);
                uclamp::uclamp_tg_restrict(p, id, buckets);
            }
            _ => {
                uclamp::uclamp_rq_get(&rq, id);
                uclamp::uclamp_rq_is_idle(&rq);
                let util: u64 = u.arbitrary()?;
                let task = if u.arbitrary()? { Some(&*p) } else { None };
                let v = uclamp::uclamp_rq_util_with(&rq, util, task, &cfg);
                // Without clamps in use the util passes through unchanged.
                if !cfg.used {
                    assert_eq!(v, util);
                }
            }
        }
    }
    Ok(())
}

fn overutilized_calls(u: &mut Unstructured) -> Result<()> {
    let name = *u.choose(&["mainline", "ou-lone-task", "sis-idle-first"])?;
    let profile = Profile::from_name(name).unwrap_or(Profile::MAINLINE);
    let keys = EasKeys {
        sched_energy_enabled: u.arbitrary()?,
        uclamp_is_used: u.arbitrary()?,
    };
    let c = OverutilizedCpu {
        capacity: cpu(u)?,
        cfs_util_avg: u.arbitrary()?,
        cfs_util_est: u.arbitrary()?,
        rq_uclamp_min: u.arbitrary()?,
        rq_uclamp_max: u.arbitrary()?,
        nr_running: u.arbitrary()?,
    };
    let mut rd = RootDomain {
        overutilized: u.arbitrary()?,
    };
    overutilized::cpu_overutilized(&profile, keys, &c);
    overutilized::check_update_overutilized_status(&profile, keys, &mut rd, &c);
    overutilized::update_sd_lb_overutilized(keys, &mut rd, u.arbitrary()?, u.arbitrary()?);
    overutilized::is_rd_overutilized(keys, &rd);
    Ok(())
}

fn energy_calls(u: &mut Unstructured) -> Result<()> {
    let n = u.int_in_range(0..=EM_MAX_PERF_STATES)?;
    let mut table = EmTable::new();
    for _ in 0..n {
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
    let cap: u64 = u.arbitrary()?;
    if u.arbitrary()? {
        let _ = energy::em_create_perf_table(&mut table, cap);
    } else {
        energy::em_init_performance(&mut table, cap);
        let _ = energy::em_compute_costs(&mut table);
    }
    let mut pd = EmPerfDomain {
        table,
        flags: u.arbitrary()?,
        min_perf_state: u.int_in_range(0..=EM_MAX_PERF_STATES + 1)?,
        max_perf_state: u.int_in_range(0..=EM_MAX_PERF_STATES + 1)?,
    };
    let _ = energy::em_update_performance_limits(&mut pd, u.arbitrary()?, u.arbitrary()?);
    let i = energy::em_pd_get_efficient_state(&pd, u.arbitrary()?);
    if pd.min_perf_state <= pd.max_perf_state {
        assert!(
            (pd.min_perf_state..=pd.max_perf_state).contains(&i),
            "state {i} outside [{}, {}]",
            pd.min_perf_state,
            pd.max_perf_state
        );
    }
    energy::em_cpu_energy(&pd, u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = match u.int_in_range(0..=4u8) {
        Ok(0) => capacity_calls(&mut u),
        Ok(1) => topology_calls(&mut u),
        Ok(2) => uclamp_calls(&mut u),
        Ok(3) => overutilized_calls(&mut u),
        _ => energy_calls(&mut u),
    };
});
