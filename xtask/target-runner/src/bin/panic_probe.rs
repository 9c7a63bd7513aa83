// SPDX-License-Identifier: GPL-2.0-only
//! Link-time proof that the schedmath core has no panic path.
//!
//! A firmware-like binary that calls every public entry point of the core with inputs the
//! optimizer cannot see (`black_box`), built in release for thumbv7m. Its panic handler
//! calls a symbol that exists nowhere, so the link fails if any call can reach a panic
//! (an index out of bounds, a division by zero, an `unwrap`, ...).
//! `cargo xtask panic-check` builds it; `cargo xtask panic-check --inject` builds it with
//! a deliberate panic path to show that the check catches one.
#![no_std]
#![no_main]

use core::hint::black_box as bb;

use cortex_m_rt::entry;
use schedmath::capacity::topology;
use schedmath::capacity::{CfsRqUtil, CpuCapacity, CpuUtilRq, RqPressureUtil, TaskUtil};
use schedmath::cpufreq::{self, CpufreqFrequencyTable, CpufreqPolicy, FreqTable, FreqTableSorted};
use schedmath::cpuidle::{
    self, menu, teo, CpuidleDevice, CpuidleDriver, CpuidleState, Governor, IdleExit, ReflectEnv,
    SelectEnv,
};
use schedmath::energy::{self, EmPerfDomain, EmPerfState, EmTable};
use schedmath::fair::{
    self, balance, cfs, eas, eevdf, group, idlest, lb, rq, sysctl, wake, weight, LoadWeight,
};
use schedmath::overutilized::{self, EasKeys, OverutilizedCpu, RootDomain};
use schedmath::pelt::clock::{self, PeltClockCpu, RqClock};
use schedmath::pelt::{self, bench_support, response, PeltTables, SchedAvg, SchedEntityPelt};
use schedmath::profile::{Halflife, IdleGovernor, UtilEstVersion};
use schedmath::schedutil::{SugovCpu, SugovEnv, SugovPolicy, SugovRq};
use schedmath::uclamp::{UclampConfig, UclampId, UclampTask};
use schedmath::util_est::{self, UtilEst, UtilEstCpu};
use schedmath::{capacity, math, profile::Profile, schedutil, uclamp};

/// Calls every public core entry point once with opaque inputs.
fn exercise() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    bb(math::mul_u64_u32_shr(a, bb(7), bb(32)));
    bb(math::div_u64(a, bb(0)));
    bb(math::cap_scale(a, b));
    bb(math::scale_load(a));
    bb(math::scale_load_down(a));

    bb(capacity::scale_irq_capacity(a, b, c));
    bb(capacity::effective_cpu_util(&bb(
        capacity::EffectiveUtilInput {
            capacity: a,
            util_cfs: b,
            util_rt: c,
            util_dl: a,
            util_irq: b,
            bw_dl: c,
            rt_runnable: bb(true),
            uclamp_used: bb(false),
            uclamp_min: a,
            uclamp_max: b,
            ..Default::default()
        },
    )));
    bb(uclamp::uclamp_rq_is_capped(bb(true), a, b, c));
    bb(schedutil::map_util_perf(a));
    bb(schedutil::sugov_effective_cpu_perf(a, b, c));
    bb(Profile::from_name(bb("ou-lone-task+pelt-hl8")).is_ok());
    exercise_capacity();
    exercise_topology();
    exercise_uclamp();
    exercise_overutilized();
    exercise_energy();
    exercise_pelt();
    exercise_clock();
    exercise_util_est();
    exercise_cpuidle();
    exercise_cpufreq();
    exercise_schedutil();
    exercise_fair();
}

/// A policy whose table length, entries, order and limits the optimizer cannot see.
fn opaque_policy() -> CpufreqPolicy {
    let mut table = FreqTable::new();
    for i in 0..bb(8u32) {
        let _ = table.push(CpufreqFrequencyTable {
            flags: bb(i & 2),
            frequency: bb(i.wrapping_mul(200_000)),
        });
    }
    bb(CpufreqPolicy {
        freq_table: bb(Some(table)),
        freq_table_sorted: bb(FreqTableSorted::Descending),
        efficiencies_available: bb(true),
        min: bb(1),
        max: bb(2),
        cur: bb(3),
        cpuinfo_min_freq: bb(4),
        cpuinfo_max_freq: bb(5),
        cached_target_freq: bb(6),
        cached_resolved_idx: bb(7),
        fast_switch_enabled: bb(false),
        driver_need_update_limits: bb(true),
    })
}

/// Every public cpufreq entry point (drivers/cpufreq/cpufreq.c, freq_table.c,
/// include/linux/cpufreq.h).
fn exercise_cpufreq() {
    let (f, lo, hi, rel, idx) = (bb(900_000u32), bb(1u32), bb(2u32), bb(6u32), bb(3i32));
    let eff = bb(true);
    let mut p = opaque_policy();
    let t: &[CpufreqFrequencyTable] = bb(p.freq_table.as_deref().unwrap_or(&[]));
    bb(FreqTableSorted::from_u32(rel).map(FreqTableSorted::as_u32));
    bb(cpufreq::clamp_val(f, lo, hi));
    bb(cpufreq::table_frequency(t, idx));
    bb(cpufreq::cpufreq_table_find_index_al(t, f, eff));
    bb(cpufreq::cpufreq_table_find_index_dl(t, f, eff));
    bb(cpufreq::cpufreq_table_find_index_ah(t, f, eff));
    bb(cpufreq::cpufreq_table_find_index_dh(t, f, eff));
    bb(cpufreq::cpufreq_table_find_index_ac(t, f, eff));
    bb(cpufreq::cpufreq_table_find_index_dc(t, f, eff));
    bb(cpufreq::find_index_l(&p, f, lo, hi, eff));
    bb(cpufreq::find_index_h(&p, f, lo, hi, eff));
    bb(cpufreq::find_index_c(&p, f, lo, hi, eff));
    bb(cpufreq::cpufreq_table_find_index_l(&p, f, eff));
    bb(cpufreq::cpufreq_table_find_index_h(&p, f, eff));
    bb(cpufreq::cpufreq_table_find_index_c(&p, f, eff));
    bb(cpufreq::cpufreq_is_in_limits(&p, lo, hi, idx));
    bb(cpufreq::cpufreq_table_index_unsorted(&p, f, lo, hi, rel));
    bb(cpufreq::cpufreq_frequency_table_target(&p, f, lo, hi, rel));
    bb(cpufreq::__resolve_freq(&mut p, f, lo, hi, rel));
    bb(cpufreq::cpufreq_driver_resolve_freq(&mut p, f));
    cpufreq::__cpufreq_driver_target(&mut p, f, rel);
    cpufreq::cpufreq_policy_apply_limits(&mut p);
    bb(cpufreq::cpufreq_driver_fast_switch(&mut p, f));
    cpufreq::cpufreq_set_policy(&mut p, lo, hi);
    bb(cpufreq::set_freq_table_sorted(&mut p));
    bb(cpufreq::cpufreq_policy_transition_delay_us(bb(0), bb(999)));
    bb(p);
}

/// Every public schedutil entry point (kernel/sched/cpufreq_schedutil.c,
/// include/linux/sched/cpufreq.h).
fn exercise_schedutil() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    let (time, flags) = (bb(4_000_000u64), bb(1u32));
    let mut sg: SugovPolicy = bb(SugovPolicy {
        policy: opaque_policy(),
        ..Default::default()
    });
    let env: SugovEnv = bb(SugovEnv::default());
    let profile: Profile = bb(Profile::MAINLINE);
    let rq: SugovRq = bb(SugovRq::default());
    let mut c0: SugovCpu = bb(SugovCpu::default());
    let mut cpus: [SugovCpu; 2] = bb([SugovCpu::default(); 2]);
    let rqs: [SugovRq; 2] = bb([rq; 2]);
    bb(schedutil::tick_nsec(bb(0)));
    bb(schedutil::map_util_freq(a, b, bb(0)));
    bb(schedutil::get_capacity_ref_freq(&sg.policy, &env));
    bb(schedutil::get_next_freq(&mut sg, &env, a, c));
    schedutil::sugov_get_util(&mut c0, &rq, &env, b);
    bb(schedutil::sugov_iowait_reset(&mut c0, &env, time, bb(true)));
    schedutil::sugov_iowait_boost(&mut c0, &env, time, flags);
    bb(schedutil::sugov_iowait_apply(&mut c0, &env, time, c));
    bb(schedutil::sugov_should_update_freq(&mut sg, time));
    bb(schedutil::sugov_update_next_freq(&mut sg, time, bb(5)));
    schedutil::sugov_deferred_update(&mut sg);
    bb(schedutil::sugov_hold_freq(&mut c0, &rq, &env, &profile));
    schedutil::ignore_dl_rate_limit(&mut sg, &c0, &rq);
    bb(schedutil::sugov_update_single_common(
        &mut sg, &mut c0, &rq, &env, time, flags,
    ));
    bb(schedutil::sugov_update_single_freq(
        &mut sg, &mut c0, &rq, &env, &profile, time, flags,
    ));
    bb(schedutil::sugov_next_freq_shared(
        &mut sg, &mut cpus, &rqs, &env, c, time,
    ));
    bb(schedutil::sugov_update_shared(
        &mut sg,
        &mut cpus,
        &rqs,
        bb(5usize),
        &env,
        time,
        flags,
    ));
    schedutil::sugov_work(&mut sg);
    schedutil::sugov_limits(&mut sg);
    schedutil::sugov_start(&mut sg, bb(1000), &mut cpus);
    bb((sg, c0, cpus));
}

fn cpu_capacity() -> CpuCapacity {
    bb(CpuCapacity {
        capacity_orig: bb(1024),
        cpu_capacity: bb(900),
        hw_load_avg: bb(10),
        cpufreq_pressure: bb(20),
    })
}

fn util_rq() -> CpuUtilRq {
    bb(CpuUtilRq {
        cpu: bb(0),
        capacity_orig: bb(1024),
        cfs: CfsRqUtil {
            util_avg: bb(300),
            runnable_avg: bb(400),
            util_est: bb(350),
        },
        util_est_feat: bb(true),
    })
}

/// Every public function of `schedmath::capacity`.
fn exercise_capacity() {
    let (a, b) = (bb(1u64), bb(2u64));
    let cpu = cpu_capacity();
    let other = bb(RqPressureUtil {
        rt_util_avg: a,
        dl_util_avg: b,
        irq_util_avg: a,
    });
    let rq = util_rq();
    let p = bb(TaskUtil {
        task_cpu: bb(0),
        util_avg: a,
        util_est: bb(0x8000_0010),
        on_rq_queued: bb(true),
        is_current: bb(false),
        last_update_time: b,
    });
    bb(capacity::fits_capacity(a, b));
    bb(capacity::capacity_greater(a, b));
    bb(capacity::get_actual_cpu_capacity(&cpu));
    bb(capacity::scale_rt_capacity(&cpu, &other));
    bb(capacity::update_cpu_capacity(&cpu, &other));
    bb(capacity::check_cpu_capacity(a, b, bb(117)));
    bb(capacity::util_fits_cpu(a, b, a, bb(true), &cpu));
    bb(capacity::task_fits_cpu(a, bb(7), a, b, bb(true), &cpu));
    bb(capacity::cpu_util(&rq, bb(Some(&p)), bb(-1), bb(true)));
    bb(capacity::cpu_util_cfs(&rq));
    bb(capacity::cpu_util_cfs_boost(&rq));
    bb(capacity::cpu_util_without(&rq, &p));
    bb(capacity::cpu_bw_dl(a));
    bb(capacity::sched_cpu_util(&rq, &other));
}

/// Every public function of `schedmath::capacity::topology`.
fn exercise_topology() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    let dmips = bb([485u32, 1024, 0]);
    let freq = bb([1_416_000u64, 1_800_000, 0]);
    let n = bb(3usize).min(3);
    bb(topology::topology_normalize_cpu_scale(&dmips[..n], &freq[..n]).is_ok());
    bb(topology::topology_set_freq_scale(a, b, c, bb(false)));
    bb(topology::mult_frac(a, b, c));
    bb(topology::topology_update_hw_pressure(a, b, c));
    bb(topology::cpufreq_update_pressure(a, b, bb(3u32)));
}

/// Every public function of `schedmath::uclamp`.
fn exercise_uclamp() {
    let buckets = bb(5u32);
    let cfg = bb(UclampConfig {
        buckets,
        used: bb(true),
        default: [
            uclamp::uclamp_se_set(bb(0), false, buckets),
            uclamp::uclamp_se_set(bb(1024), false, buckets),
        ],
    });
    let mut p = bb(UclampTask {
        uclamp_req: [
            uclamp::uclamp_se_set(bb(200), true, buckets),
            uclamp::uclamp_se_set(bb(800), true, buckets),
        ],
        uclamp_enabled: bb(true),
        tg_uclamp: [bb(100), bb(900)],
        ..Default::default()
    });
    let id = bb(UclampId::from_index(bb(1))).unwrap_or(UclampId::Min);
    let mut rq = uclamp::init_uclamp_rq();
    bb(uclamp::uclamp_none(id));
    bb(uclamp::uclamp_bucket_delta(buckets));
    bb(uclamp::uclamp_bucket_id(bb(512), buckets));
    bb(uclamp::uclamp_tg_restrict(&p, id, buckets));
    bb(uclamp::uclamp_eff_get(&p, id, &cfg));
    bb(uclamp::uclamp_eff_value(&p, id, &cfg));
    bb(uclamp::uclamp_rq_get(&rq, id));
    uclamp::uclamp_rq_inc_id(&mut rq, &mut p, id, &cfg);
    uclamp::uclamp_rq_dec_id(&mut rq, &mut p, id, buckets);
    uclamp::uclamp_rq_inc(&mut rq, &mut p, bb(false), &cfg);
    uclamp::uclamp_rq_reinc_id(&mut rq, &mut p, id, &cfg);
    uclamp::uclamp_rq_dec(&mut rq, &mut p, &cfg);
    bb(&rq);
    bb(&p);
}

/// Every public function of `schedmath::overutilized`.
fn exercise_overutilized() {
    let profile = Profile::from_name(bb("ou-lone-task")).unwrap_or(Profile::MAINLINE);
    let keys = bb(EasKeys {
        sched_energy_enabled: bb(true),
        uclamp_is_used: bb(true),
    });
    let cpu = bb(OverutilizedCpu {
        capacity: cpu_capacity(),
        cfs_util_avg: bb(800),
        cfs_util_est: bb(900),
        rq_uclamp_min: bb(0),
        rq_uclamp_max: bb(1024),
        nr_running: bb(1),
    });
    let mut rd = bb(RootDomain {
        overutilized: bb(false),
    });
    bb(cpu.util_rq());
    bb(overutilized::cpu_overutilized(&profile, keys, &cpu));
    bb(overutilized::is_rd_overutilized(keys, &rd));
    overutilized::set_rd_overutilized(keys, &mut rd, bb(true));
    overutilized::check_update_overutilized_status(&profile, keys, &mut rd, &cpu);
    overutilized::update_sd_lb_overutilized(keys, &mut rd, bb(false), bb(true));
    bb(&rd);
}

/// Every public function of `schedmath::energy`.
fn exercise_energy() {
    let mut table = EmTable::new();
    for (f, pw) in [
        (408_000u64, 27_769u64),
        (600_000, 40_837),
        (816_000, 58_956),
    ] {
        let _ = table.push(EmPerfState {
            frequency: bb(f),
            power: bb(pw),
            ..Default::default()
        });
    }
    let mut table = bb(table);
    energy::em_init_performance(&mut table, bb(381));
    bb(energy::em_compute_costs(&mut table).is_ok());
    bb(energy::em_create_perf_table(&mut table, bb(381)).is_ok());
    let mut pd = bb(EmPerfDomain {
        table,
        flags: bb(energy::EM_PERF_DOMAIN_SKIP_INEFFICIENCIES),
        min_perf_state: bb(0),
        max_perf_state: bb(7),
    });
    bb(energy::em_pd_get_efficient_state(&pd, bb(200)));
    bb(energy::em_cpu_energy(&pd, bb(200), bb(300), bb(381)));
    bb(energy::em_update_performance_limits(&mut pd, bb(408_000), bb(816_000)).is_ok());
    bb(&pd);
}

/// Every public PELT entry point (kernel/sched/pelt.c, sched-pelt.h and the drivers built
/// on them), with an opaque table, state and inputs.
fn exercise_pelt() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    let (d1, d3, run) = (bb(4u32), bb(5u32), bb(1i32));
    let t: &PeltTables = bb(PeltTables::of(bb(Halflife::Hl16)));
    let mut sa: SchedAvg = bb(SchedAvg::default());
    bb(t.runnable_avg_yn_inv());
    bb(t.load_avg_period());
    bb(t.load_avg_max());
    bb(t.load_avg_max_n());
    bb(t.pelt_min_divider());
    bb(t.idle_util_sum_threshold());
    bb(t.decay_load_zero_threshold_periods());
    bb(pelt::decay_load(a, b, t));
    bb(pelt::accumulate_pelt_segments(a, d1, d3, t));
    bb(pelt::accumulate_sum(a, &mut sa, b, c, run, t));
    bb(pelt::update_load_sum(a, &mut sa, b, c, run, t));
    bb(pelt::get_pelt_divider(&sa, t));
    pelt::sync_load_avg(&mut sa, a, t);
    let mut cfs: SchedAvg = bb(SchedAvg::default());
    pelt::init_entity_runnable_average(&mut sa, a);
    pelt::post_init_entity_util_avg(&mut sa, &cfs, b, c);
    pelt::attach_entity_load_avg(&mut cfs, &mut sa, a, t);
    pelt::detach_entity_load_avg(&mut cfs, &sa, a, t);
    bb(&cfs);
    let se: SchedEntityPelt = bb(SchedEntityPelt {
        load_weight: a,
        on_rq: bb(true),
        is_curr: bb(false),
        sched_delayed: bb(false),
        group_runnable_weight: bb(Some(c)),
    });
    bb(pelt::se_weight(&se));
    bb(pelt::se_runnable(&se));
    pelt::cfs_se_util_change(&mut sa);
    bb(pelt::__update_load_avg_blocked_se(a, &mut sa, b, t));
    bb(pelt::__update_load_avg_se(a, &mut sa, &se, t));
    bb(pelt::__update_load_avg_cfs_rq(
        a,
        &mut sa,
        b,
        d1,
        bb(true),
        t,
    ));
    bb(pelt::update_rt_rq_load_avg(a, &mut sa, run, t));
    bb(pelt::update_dl_rq_load_avg(a, &mut sa, run, t));
    bb(pelt::update_hw_load_avg(a, &mut sa, b, t));
    bb(pelt::update_irq_load_avg(a, &mut sa, b, c, a, t));
    bb(sa);

    let g = bb(pelt::sched_pelt_generator::<64>(bb(32)));
    if let Some(g) = g {
        bb(g.matches(t));
    }

    let profile: Profile = bb(Profile::MAINLINE);
    response::busy_then_idle(&profile, bb(8), bb(8), |s| {
        bb(s);
    });
    bb(response::ramp_decay_ms(&profile, a, b));
    bb(bench_support::apply(&mut sa, a, bb(true), t));
    bb(bench_support::checksum(bb(4)));
    bb(bench_support::UpdateOps::new().nth(bb(3)));
}

/// The rq clock side of PELT (kernel/sched/pelt.h, the multiplier patch).
fn exercise_clock() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    let t: &PeltTables = bb(PeltTables::of(bb(Halflife::Hl8)));
    let mut rq: RqClock = bb(RqClock::new(a, b, c));
    let cpu: PeltClockCpu = bb(PeltClockCpu {
        curr_is_idle: bb(false),
        cpu_capacity: a,
        freq_capacity: b,
    });
    let profile: Profile = bb(Profile::MAINLINE);
    bb(clock::rq_clock_pelt(&rq));
    clock::_update_idle_rq_clock_pelt(&mut rq);
    clock::update_rq_clock_pelt(&mut rq, a, &cpu);
    clock::update_rq_clock_task_mult(&mut rq, a, &cpu, &profile);
    clock::update_rq_clock_task(&mut rq, a, b, &cpu, &profile);
    clock::update_idle_rq_clock_pelt(&mut rq, bb(1), bb(2), bb(3), t);
    bb(rq);
}

/// util_est (kernel/sched/fair.c), both layouts.
fn exercise_util_est() {
    let mut p: SchedAvg = bb(SchedAvg::default());
    let mut cfs_rq: SchedAvg = bb(SchedAvg::default());
    let cpu: UtilEstCpu = bb(UtilEstCpu::default());
    let mut ue: UtilEst = bb(UtilEst::new(bb(UtilEstVersion::PreV6_9)));
    bb(ue.version());
    bb(ue.enqueued());
    ue.clear_unchanged_flag();
    p.util_est = ue;
    bb(util_est::task_util(&p));
    bb(util_est::task_runnable(&p));
    bb(util_est::_task_util_est(&p));
    bb(util_est::task_util_est(&p));
    util_est::util_est_enqueue(&mut cfs_rq, &p);
    util_est::util_est_dequeue(&mut cfs_rq, &p);
    bb(util_est::within_margin(bb(-7), bb(10)));
    util_est::util_est_update(&mut p, bb(true), &cpu);
    bb((p, cfs_rq));
}

/// Every public cpuidle entry point (drivers/cpuidle/cpuidle.c statistics, teo.c in each
/// version, menu.c), with a table, device and governor data the optimizer cannot see:
/// out-of-range indices (`last_state_idx` 7 on a 3-state table, `recent_idx` 77, bucket 9,
/// `interval_ptr` -3), negative times and a zero tick.
fn exercise_cpuidle() {
    let st = |i: i64| CpuidleState {
        exit_latency_ns: bb(i),
        target_residency_ns: bb(i * 2),
        flags: bb(1),
    };
    let table = [st(1), st(2), st(3), st(4)];
    let drv = CpuidleDriver::new(bb(table.get(..bb(3)).unwrap_or(&[]))).unwrap_or_default();
    bb(drv.state_count());
    bb(drv.state(bb(11)));
    bb(drv.target_residency_ns(bb(12)));
    bb(drv.exit_latency_ns(bb(13)));
    bb(drv.is_polling(bb(14)));
    let mut dev = bb(CpuidleDevice::default());
    dev.last_state_idx = bb(7);
    bb(dev.is_disabled(bb(15)));
    let env = SelectEnv {
        tick_nsec: bb(4),
        latency_req_ns: bb(5),
        tick_stopped: bb(true),
        sleep_length_ns: bb(-1),
        delta_tick_ns: bb(3),
        now_ns: bb(9),
        cpu_util: bb(2),
    };
    let exit = IdleExit {
        last_residency_ns: bb(-5),
        poll_time_limit: bb(true),
        got_tick: bb(true),
        reflect_now_ns: bb(3),
    };
    let reflect = ReflectEnv {
        tick_nsec: bb(0),
        got_tick: bb(true),
        now_ns: bb(1),
    };
    for g in [
        IdleGovernor::TeoV6_6,
        IdleGovernor::TeoV6_10,
        IdleGovernor::TeoV6_12,
        IdleGovernor::TeoMainline,
        IdleGovernor::Menu,
    ] {
        let mut gov = bb(Governor::enable(bb(g), bb(1024)));
        if let Governor::Teo { cpu, .. } = &mut gov {
            cpu.next_recent_idx = bb(40);
            cpu.recent_idx[0] = bb(77);
        }
        if let Governor::Menu(d) = &mut gov {
            d.bucket = bb(9);
            d.interval_ptr = bb(-3);
            d.intervals = bb([1, 2, 3, 4, 5, 6, 7, 8]);
        }
        bb(cpuidle::cpuidle_idle_call(
            &drv,
            &mut dev,
            &mut gov,
            &env,
            bb(Some(&exit)),
        ));
        bb(cpuidle::cpuidle_idle_call(
            &drv,
            &mut dev,
            &mut gov,
            &env,
            bb(None),
        ));
        bb(gov.select(&drv, &mut dev, &env));
        gov.reflect(&mut dev, bb(12), &reflect);
        bb(cpuidle::cpuidle_enter_and_reflect(
            &drv,
            &mut dev,
            &mut gov,
            bb(16),
            bb(0),
            &exit,
        ));
        bb(gov.kind());
        bb(&gov);
    }
    bb(cpuidle::cpuidle_enter_state(
        &drv,
        &mut dev,
        bb(17),
        bb(i64::MIN),
        bb(true),
    ));
    cpuidle::call_cpuidle_aborted(&mut dev);
    bb(cpuidle::unsigned(bb(-1)));

    let v = bb(IdleGovernor::TeoV6_10);
    let mut cpu = bb(teo::teo_enable_device(v, bb(u64::MAX)));
    cpu.next_recent_idx = bb(-2);
    teo::teo_update(&drv, &dev, &mut cpu, v, bb(i64::MIN));
    bb(teo::teo_state_ok(&drv, bb(18), &env));
    bb(teo::teo_find_shallower_state(
        &drv,
        &dev,
        bb(9),
        bb(3),
        bb(true),
    ));
    bb(teo::teo_select(&drv, &mut dev, &mut cpu, v, &env));
    teo::teo_reflect(&mut dev, &mut cpu, v, bb(19), &reflect);
    bb(cpu);

    let mut data = bb(menu::menu_enable_device());
    data.interval_ptr = bb(i32::MAX);
    menu::menu_update_intervals(&mut data, bb(u32::MAX));
    bb(menu::get_typical_interval(&data));
    bb(menu::menu_select(&drv, &dev, &mut data, &env));
    menu::menu_reflect(&mut dev, &mut data, bb(20), &reflect);
    menu::menu_update(&drv, &dev, &mut data, bb(i64::MIN));
    bb(menu::ktime_to_us(bb(i64::MIN)));
    bb(menu::which_bucket(bb(5)));
    bb((data, dev));
}

/// Every public fair-class entry point (kernel/sched/fair.c, core.c), with opaque weights,
/// sums, flags and an opaque op sequence on the runqueue model.
fn exercise_fair() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    let profile: Profile = bb(Profile::MAINLINE);
    let mut l: LoadWeight = bb(LoadWeight::new(a));
    bb(fair::div_s64(bb(-5), bb(0))).ok();
    bb(fair::max_vruntime(a, b));
    bb(fair::min_vruntime(a, b));
    bb(fair::clamp_i64(bb(5), bb(9), bb(-9)));
    weight::update_load_add(&mut l, b);
    weight::update_load_sub(&mut l, c);
    bb(weight::set_load_weight(
        bb(-30),
        bb(weight::FairPolicy::Idle),
    ));
    weight::__update_inv_weight(&mut l);
    bb(weight::__calc_delta(a, bb(u64::MAX), &mut l));
    bb(weight::calc_delta_fair(a, &mut l));

    let scaling = sysctl::TunableScaling::from_sysctl(bb(2));
    bb(sysctl::get_update_sysctl_factor(bb(0), scaling));
    let s = bb(sysctl::update_sysctl(bb(99), scaling, &profile));
    bb(sysctl::__setparam_fair(a, b));

    let mut c_rq: eevdf::CfsRq = bb(eevdf::CfsRq::default());
    let mut se: eevdf::SchedEntity = bb(eevdf::SchedEntity::default());
    let curr = bb(Some(se.as_curr()));
    bb(se.vprot());
    bb(eevdf::entity_key(&c_rq, a));
    eevdf::avg_vruntime_add(&mut c_rq, &se);
    eevdf::avg_vruntime_sub(&mut c_rq, &se);
    eevdf::avg_vruntime_update(&mut c_rq, bb(-7));
    bb(eevdf::avg_vruntime(&c_rq, curr)).ok();
    bb(eevdf::vruntime_eligible(&c_rq, curr, a));
    bb(eevdf::entity_eligible(&c_rq, curr, &se));
    bb(eevdf::update_entity_lag(&c_rq, curr, &mut se, c)).ok();
    let f = bb(eevdf::EevdfFeatures::default());
    bb(eevdf::place_entity(&c_rq, curr, &mut se, bb(true), &f, b)).ok();
    bb(eevdf::update_deadline(&mut se, c));
    eevdf::update_min_vruntime(&mut c_rq, curr, bb(Some(a)), &profile);
    bb(eevdf::cfs_rq_min_slice(bb(None), bb(Some(b))));
    eevdf::set_protect_slice(&mut se, a, bb(false), c);
    bb(eevdf::protect_slice(&se));
    bb((c_rq, se));

    let cfg = rq::EevdfConfig {
        base_slice: a,
        normalized_base_slice: b,
        tick_nsec: c,
        features: f,
    };
    let mut r: rq::EevdfRq<4> = rq::EevdfRq::new(a, bb(cfg), profile);
    for _ in 0..bb(5) {
        bb(r.add_entity(bb(eevdf::SchedEntity::default()))).ok();
    }
    let i = bb(1usize);
    bb(r.se(bb(7))).ok();
    bb(r.curr_view());
    bb(r.root_min_vruntime());
    bb(r.root_min_slice());
    bb(r.avg_vruntime()).ok();
    bb(r.entity_eligible(i)).ok();
    bb(r.cfs_rq_min_slice());
    bb(r.enqueue_entity(i, bb(rq::EnqueueFlags::default()))).ok();
    bb(r.set_next_entity(i)).ok();
    bb(r.update_curr(bb(5))).ok();
    bb(r.dequeue_entity(i, bb(rq::DequeueFlags::default()))).ok();
    bb(r.requeue_delayed_entity(i)).ok();
    r.put_prev_entity();
    bb(r.reweight_entity(i, a)).ok();
    bb(r.reweight_task(i, bb(3), weight::FairPolicy::Normal)).ok();
    bb(r.yield_task_fair()).ok();
    bb(r.set_slice(i, b)).ok();
    bb(&r);

    let levels = [bb(cfs::SliceLevel::default()); 2];
    let env: cfs::SliceEnv = bb(cfs::SliceEnv::default());
    let cf = bb(cfs::CfsFeatures::default());
    bb(cfs::__sched_period(a, &s));
    bb(cfs::sched_slice(&levels, &env, &cf, &s));
    bb(cfs::sched_vslice(&levels, &env, &cf, &s, &mut l));
    bb(cfs::entity_is_long_sleeper(a, b));
    let mut pe: cfs::CfsPlaceEntity = bb(cfs::CfsPlaceEntity::default());
    bb(cfs::place_entity(
        a,
        &mut pe,
        bb(true),
        b,
        &levels,
        &env,
        &cf,
        &s,
    ));
    let cc: cfs::CfsCurr = bb(cfs::CfsCurr::default());
    bb(cfs::check_preempt_tick(&cc, a, &levels, &env, &s));
    bb(cfs::wakeup_gran(&mut l, &s));
    bb(cfs::wakeup_preempt_entity(a, b, &mut l, &s));

    let mut grq: group::TgLoadContrib = bb(group::TgLoadContrib::default());
    let mut tg = bb(-4i64);
    bb(group::calc_group_shares(bb(i64::MIN), a, b, bb(-1), c)).ok();
    bb(group::update_tg_load_avg(
        bb(false),
        bb(true),
        a,
        b,
        &mut grq,
        &mut tg,
        &profile,
    ));
    group::clear_tg_load_avg(bb(false), a, &mut grq, &mut tg);
    bb((grq, tg));

    let sgs: lb::SgLbStats = bb(lb::SgLbStats::default());
    let t = bb(lb::group_classify(bb(117), bb(false), &sgs, &profile));
    bb(t.kernel_value(&profile));
    bb(lb::group_has_capacity(bb(110), &sgs));
    bb(lb::group_is_overloaded(bb(110), &sgs));
    bb(lb::sg_avg_load(a, bb(0))).ok();
    bb(lb::smt_balance(bb(true), bb(true), bb(2)));
    bb(lb::update_pick_idlest(&sgs, a, &sgs, b));
    bb(lb::find_dst_group_stays_local(bb(99), &sgs, a, &sgs, b));
    exercise_balance(&profile);
    exercise_placement(&profile);
}

fn exercise_balance(profile: &Profile) {
    use balance::{CpuIdleType, LbOutcome};
    let (a, b) = (bb(u64::MAX), bb(0u64));
    let idle: CpuIdleType = bb(CpuIdleType::NewlyIdle);
    let mut sd: balance::LbDomain = bb(balance::LbDomain::new(a, bb(117), bb(false), bb(true)));
    let mut sgs: lb::SgLbStats = bb(balance::busiest_stat_init());
    let cpu: balance::LbCpu = bb(balance::LbCpu::default());
    balance::update_sg_lb_stats_cpu(&mut sgs, &cpu, bb(false), bb(true));
    balance::update_sg_lb_stats_finish(&mut sgs, b, bb(0), bb(117), bb(false), profile);
    let sgc: balance::SgCapacity = bb(balance::SgCapacity::default());
    bb(balance::update_sd_pick_busiest(
        &sd,
        sgs.group_type,
        &sgs,
        &sgs,
        sgc,
        a,
        bb(true),
        profile,
    ));
    let mut sds: balance::SdLbStats = bb(balance::SdLbStats {
        local: sgs,
        busiest: Some(sgs),
        total_load: a,
        total_capacity: b,
        prefer_sibling: bb(true),
        local_cores: bb(0),
        busiest_cores: bb(0),
    });
    bb(balance::sibling_imbalance(idle, &sds, &sgs));
    let mut imb = bb(balance::calculate_imbalance(
        &sd, idle, &mut sds, &sgs, profile,
    ));
    bb(balance::find_busiest_group(
        &sd,
        idle,
        &mut sds,
        bb(false),
        profile,
    ));
    let mut st: balance::FbqState = bb(balance::FbqState::default());
    let cand: balance::FbqCandidate = bb(balance::FbqCandidate::default());
    bb(balance::find_busiest_queue_step(
        &sd, &imb, a, &cand, &mut st,
    ));
    bb(balance::task_hot(&sd, bb(true), bb(false), bb(i64::MIN)));
    bb(balance::can_migrate_hot(&sd, bb(false), bb(true)));
    bb(balance::shr_bound(a, bb(u32::MAX)));
    bb(balance::detach_task_take(&sd, &mut imb, a, a, bb(false)));
    bb(balance::need_active_balance(
        &sd,
        idle,
        &imb,
        bb(1),
        bb(true),
        a,
        a,
    ));
    balance::load_balance_failed(&mut sd, idle);
    balance::load_balance_finish(&mut sd, idle, bb(LbOutcome::Balanced));
    bb(balance::msecs_to_jiffies(a, bb(0)));
    bb(balance::max_load_balance_interval(a, a));
    bb(balance::get_sd_balance_interval(&sd, bb(true), bb(300), b));
    bb(idle.is_idle());
    bb(sd);
}

/// A fixed two-level topology for the fork walk: opaque spans and groups.
struct ProbeTopo([usize; 4]);

impl idlest::SchedDomainTopology for ProbeTopo {
    fn nr_levels(&self, cpu: usize) -> usize {
        bb(cpu % 3)
    }
    fn span(&self, _: usize, _: usize) -> &[usize] {
        &self.0
    }
    fn group(&self, _: usize, level: usize, i: usize) -> Option<&[usize]> {
        self.0.get(i..i + bb(1) + level)
    }
    fn imbalance_pct(&self, _: usize, _: usize) -> u32 {
        bb(117)
    }
    fn asym_cpucapacity(&self, _: usize, level: usize) -> bool {
        bb(level > 0)
    }
}

/// Wake-up placement: feec, the fast path and the fork walk on opaque views.
fn exercise_placement(profile: &Profile) {
    let cpus: [wake::WakeCpu; 4] = bb([wake::WakeCpu::default(); 4]);
    let allowed = bb([0usize, 1, 2, 9]);
    let p = wake::WakeTask {
        util: bb(TaskUtil::default()),
        uclamp_min: bb(0),
        uclamp_max: bb(1024),
        allowed: &allowed,
    };
    let (prev, uclamp_used) = (bb(7usize), bb(true));
    let em: EmPerfDomain = bb(EmPerfDomain::default());
    let span = bb([0usize, 1, 2, 3]);
    let pds = [eas::PerfDomain {
        cpus: &span,
        em: &em,
    }; 2];
    let r = bb(eas::find_energy_efficient_cpu(
        &cpus,
        &pds,
        Some(&span),
        &p,
        prev,
        uclamp_used,
    ));
    if let Ok(r) = r {
        bb(r.rule.name());
    }
    let eenv = bb(eas::EnergyEnv::default());
    bb(eas::eenv_task_busy_time(&cpus, &p, prev));
    bb(eas::eenv_pd_busy_time(&eenv, &cpus, &span, &p, uclamp_used));
    bb(eas::eenv_pd_max_util(
        &eenv,
        &cpus,
        &span,
        &p,
        Some(prev),
        uclamp_used,
    ));
    bb(eas::compute_energy(
        &eenv,
        &cpus,
        &pds[0],
        &p,
        None,
        uclamp_used,
    ));
    let sd = wake::SisDomains {
        asym_active: bb(true),
        asym_span: Some(&span),
        llc_span: Some(&span),
    };
    let sis = bb(wake::select_idle_sibling(
        &cpus,
        &p,
        prev,
        bb(3),
        bb(Some(2)),
        &sd,
        uclamp_used,
    ));
    bb(sis.rule.name());
    bb(wake::select_fallback_rq(sis.cpu, &allowed));
    bb(wake::select_idle_capacity(
        &cpus,
        &p,
        &span,
        prev,
        uclamp_used,
    ));
    bb(wake::select_idle_cpu(&cpus, &p, &span, prev));
    bb(wake::asym_fits_cpu(
        bb(5),
        bb(6),
        bb(7),
        uclamp_used,
        cpus.get(prev),
        bb(true),
    ));
    bb(wake::cpumask_test_cpu(prev, &allowed));
    bb(wake::for_each_cpu_wrap(&allowed, prev).count());
    bb(cpus[bb(0) % 4].idle_or_sched_idle());
    let topo = ProbeTopo(span);
    let sel = profile.sched_idle_select;
    bb(idlest::update_sg_wakeup_stats(
        &cpus,
        bb(117),
        bb(true),
        &span,
        &p,
        uclamp_used,
    ));
    bb(idlest::sched_balance_find_dst_group(
        &cpus,
        &topo,
        prev,
        bb(1),
        &p,
        uclamp_used,
    ));
    bb(idlest::sched_balance_find_dst_group_cpu(
        &cpus, &span, &allowed, prev, sel,
    ));
    bb(idlest::sched_balance_find_dst_cpu(
        &cpus,
        &topo,
        &p,
        prev,
        sel,
        uclamp_used,
    ));
    bb(uclamp::uclamp_rq_is_idle(&bb(uclamp::init_uclamp_rq())));
}

#[cfg(feature = "inject-panic")]
fn injected() {
    // An index the compiler cannot prove in bounds: a panic path on purpose.
    let table = [1u8, 2, 3];
    bb(table[bb(5usize)]);
}

#[cfg(not(feature = "inject-panic"))]
fn injected() {}

#[entry]
fn main() -> ! {
    exercise();
    injected();
    #[allow(clippy::empty_loop)]
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    extern "Rust" {
        // Deliberately defined nowhere: referencing it makes a reachable panic a link error.
        fn schedmath_core_has_a_panic_path() -> !;
    }
    // SAFETY: never runs; the program does not link if this call is reachable.
    unsafe { schedmath_core_has_a_panic_path() }
}
