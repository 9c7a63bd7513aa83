// SPDX-License-Identifier: GPL-2.0-only
//! cpufreq table resolution and the schedutil governor with arbitrary tables, limits and
//! runqueue inputs: no panic (overflow checks on), a resolved frequency is always one of
//! the table's entries, and a governor whose limits come from `cpufreq_set_policy()`
//! only ever commits and runs at table frequencies.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedmath::cpufreq::{
    self, CpufreqFrequencyTable, CpufreqPolicy, FreqTable, FreqTableSorted, CPUFREQ_ENTRY_INVALID,
    CPUFREQ_TABLE_MAX,
};
use schedmath::schedutil::{self, SugovCpu, SugovEnv, SugovPolicy, SugovRq};
use schedmath::Profile;

/// Any table: arbitrary entries and flags (INVALID slots included), any order.
fn table(u: &mut Unstructured) -> Result<FreqTable> {
    let n = u.int_in_range(0..=CPUFREQ_TABLE_MAX)?;
    let mut t = FreqTable::new();
    for _ in 0..n {
        let frequency = match u.int_in_range(0..=9u8)? {
            0 => CPUFREQ_ENTRY_INVALID,
            1 => u.arbitrary()?,
            _ => u.int_in_range(1..=40u32)? * 100_000,
        };
        let row = CpufreqFrequencyTable {
            flags: u.arbitrary::<u32>()? & 0b110,
            frequency,
        };
        if t.push(row).is_err() {
            break;
        }
    }
    Ok(t)
}

fn in_table(t: &[CpufreqFrequencyTable], f: u32) -> bool {
    t.iter().any(|r| r.frequency == f)
}

fn rq(u: &mut Unstructured) -> Result<SugovRq> {
    Ok(SugovRq {
        capacity: u.arbitrary()?,
        util_cfs: u.arbitrary()?,
        util_cfs_boost: u.arbitrary()?,
        util_rt: u.arbitrary()?,
        util_dl: u.arbitrary()?,
        util_irq: u.arbitrary()?,
        bw_dl: u.arbitrary()?,
        rt_runnable: u.arbitrary()?,
        uclamp_min: u.arbitrary()?,
        uclamp_max: u.arbitrary()?,
        idle_calls: u.arbitrary()?,
        ..Default::default()
    })
}

/// The table searches on any policy state (also min > max, unsorted, stale sort flag).
fn resolution(u: &mut Unstructured) -> Result<()> {
    let t = table(u)?;
    let mut p = CpufreqPolicy {
        freq_table: Some(t.clone()),
        freq_table_sorted: *u.choose(&[
            FreqTableSorted::Unsorted,
            FreqTableSorted::Ascending,
            FreqTableSorted::Descending,
        ])?,
        efficiencies_available: u.arbitrary()?,
        min: u.arbitrary()?,
        max: u.arbitrary()?,
        cur: u.arbitrary()?,
        cpuinfo_min_freq: u.arbitrary()?,
        cpuinfo_max_freq: u.arbitrary()?,
        ..Default::default()
    };
    // The kernel registers a table only after set_freq_table_sorted() accepted it; a
    // stale sort flag is only searched (no panic), its answers are not checked.
    let registered = u.arbitrary()? && cpufreq::set_freq_table_sorted(&mut p) == 0;
    let (target, lo, hi, rel): (u32, u32, u32, u32) = (
        u.arbitrary()?,
        u.arbitrary()?,
        u.arbitrary()?,
        u.int_in_range(0..=7)?,
    );
    let eff: bool = u.arbitrary()?;
    cpufreq::cpufreq_table_find_index_l(&p, target, eff);
    cpufreq::cpufreq_table_find_index_h(&p, target, eff);
    cpufreq::cpufreq_table_find_index_c(&p, target, eff);
    cpufreq::cpufreq_is_in_limits(&p, lo, hi, u.arbitrary()?);
    cpufreq::table_frequency(&t, u.arbitrary()?);
    let ti = cpufreq::cpufreq_frequency_table_target(&p, target, lo, hi, rel);
    let f = cpufreq::__resolve_freq(&mut p, target, lo, hi, rel);
    // A sorted table without a valid entry has no index to give (-1); otherwise the
    // kernel's answer is always a slot of the table, INVALID or not.
    if registered && !t.is_empty() && ti.idx >= 0 {
        assert!(
            (ti.idx as usize) < t.len(),
            "index {ti:?} beyond {} rows",
            t.len()
        );
        assert!(in_table(&t, f), "resolved {f} not in {t:?}");
    }
    let f = cpufreq::cpufreq_driver_resolve_freq(&mut p, target);
    if registered && !t.is_empty() && ti.idx >= 0 {
        assert!(
            in_table(&t, f) || t.iter().all(|r| r.frequency == CPUFREQ_ENTRY_INVALID),
            "driver_resolve {f} not in {t:?}"
        );
    }
    cpufreq::__cpufreq_driver_target(&mut p, target, rel);
    cpufreq::cpufreq_policy_apply_limits(&mut p);
    cpufreq::cpufreq_driver_fast_switch(&mut p, target);
    cpufreq::cpufreq_set_policy(&mut p, lo, hi);
    cpufreq::cpufreq_policy_transition_delay_us(u.arbitrary()?, u.arbitrary()?);
    Ok(())
}

/// The governor on a valid, sorted table whose limits come from `cpufreq_set_policy()`.
fn governor(u: &mut Unstructured) -> Result<()> {
    let mut freqs: Vec<u32> = Vec::new();
    for _ in 0..u.int_in_range(1..=CPUFREQ_TABLE_MAX)? {
        freqs.push(u.int_in_range(1..=5_000_000u32)?);
    }
    freqs.sort_unstable();
    freqs.dedup();
    if u.arbitrary()? {
        freqs.reverse();
    }
    let mut t = FreqTable::new();
    for &f in &freqs {
        let flags = u.arbitrary::<u32>()? & cpufreq::CPUFREQ_INEFFICIENT_FREQ;
        let _ = t.push(CpufreqFrequencyTable {
            flags,
            frequency: f,
        });
    }
    let (fmin, fmax) = (freqs.iter().min().copied(), freqs.iter().max().copied());
    let (Some(fmin), Some(fmax)) = (fmin, fmax) else {
        return Ok(());
    };
    let mut policy = CpufreqPolicy {
        freq_table: Some(t.clone()),
        efficiencies_available: u.arbitrary()?,
        min: fmin,
        max: fmax,
        cur: *u.choose(&freqs)?,
        cpuinfo_min_freq: fmin,
        cpuinfo_max_freq: fmax,
        fast_switch_enabled: u.arbitrary()?,
        driver_need_update_limits: u.arbitrary()?,
        ..Default::default()
    };
    if cpufreq::set_freq_table_sorted(&mut policy) != 0 {
        return Ok(());
    }
    let mut sg = SugovPolicy {
        policy,
        ..Default::default()
    };
    let env = SugovEnv {
        tick_nsec: u.arbitrary()?,
        uclamp_used: u.arbitrary()?,
        freq_invariant: u.arbitrary()?,
        arch_freq_ref: u.arbitrary()?,
    };
    let profile = match u.arbitrary()? {
        true => Profile::MAINLINE,
        false => Profile::from_name("sugov-busy-without-uclamp").unwrap_or(Profile::MAINLINE),
    };
    let ncpus = u.int_in_range(1..=4usize)?;
    let mut cpus = vec![SugovCpu::default(); ncpus];
    let mut rqs = vec![SugovRq::default(); ncpus];
    schedutil::sugov_start(&mut sg, u.arbitrary()?, &mut cpus);
    let mut time: u64 = u.arbitrary()?;
    while !u.is_empty() {
        time = match u.int_in_range(0..=7u8)? {
            0 => u.arbitrary()?,
            _ => time.wrapping_add(u64::from(u.arbitrary::<u32>()?)),
        };
        let flags: u32 = u.arbitrary()?;
        match u.int_in_range(0..=5u8)? {
            0 => {
                rqs[0] = rq(u)?;
                schedutil::sugov_update_single_freq(
                    &mut sg,
                    &mut cpus[0],
                    &rqs[0],
                    &env,
                    &profile,
                    time,
                    flags,
                );
            }
            1 => {
                let c = u.choose_index(ncpus)?;
                rqs[c] = rq(u)?;
                schedutil::sugov_update_shared(&mut sg, &mut cpus, &rqs, c, &env, time, flags);
            }
            2 => {
                let (lo, hi): (u32, u32) = (u.arbitrary()?, u.arbitrary()?);
                cpufreq::cpufreq_set_policy(&mut sg.policy, lo.min(hi), lo.max(hi));
                schedutil::sugov_limits(&mut sg);
            }
            3 => schedutil::sugov_work(&mut sg),
            4 => {
                let c = u.choose_index(ncpus)?;
                schedutil::sugov_iowait_boost(&mut cpus[c], &env, time, flags);
                schedutil::sugov_iowait_apply(&mut cpus[c], &env, time, u.arbitrary()?);
            }
            _ => {
                schedutil::get_next_freq(&mut sg, &env, u.arbitrary()?, u.arbitrary()?);
            }
        }
        assert!(
            sg.next_freq == 0 || in_table(&t, sg.next_freq),
            "next_freq {} not in {freqs:?}",
            sg.next_freq
        );
        assert!(
            in_table(&t, sg.policy.cur),
            "cur {} not in {freqs:?}",
            sg.policy.cur
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = match u.arbitrary::<bool>() {
        Ok(true) => governor(&mut u),
        _ => resolution(&mut u),
    };
    let _ = schedutil::tick_nsec(u.arbitrary().unwrap_or(0));
    let _ = schedutil::map_util_freq(
        u.arbitrary().unwrap_or(0),
        u.arbitrary().unwrap_or(0),
        u.arbitrary().unwrap_or(0),
    );
    let _ = schedutil::sugov_effective_cpu_perf(
        u.arbitrary().unwrap_or(0),
        u.arbitrary().unwrap_or(0),
        u.arbitrary().unwrap_or(0),
    );
});
