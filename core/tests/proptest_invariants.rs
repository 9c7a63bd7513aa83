// SPDX-License-Identifier: GPL-2.0-only
//! Invariants of the kernel's arithmetic over random inputs (proptest): what pelt.c,
//! arch_topology.c, fair.c and cpufreq.c guarantee for every input, not just the fixture
//! cases. A failure prints the shrunk input.

use proptest::prelude::*;
use schedmath::capacity::topology::{topology_normalize_cpu_scale, topology_set_freq_scale};
use schedmath::capacity::{effective_cpu_util, scale_rt_capacity, update_cpu_capacity};
use schedmath::capacity::{CpuCapacity, EffectiveUtilInput, RqPressureUtil};
use schedmath::cpufreq::{
    cpufreq_driver_resolve_freq, cpufreq_set_policy, set_freq_table_sorted, CpufreqFrequencyTable,
    CpufreqPolicy, FreqTable,
};
use schedmath::pelt::SchedEntityPelt;
use schedmath::pelt::{self, decay_load, get_pelt_divider, PeltTables, SchedAvg};
use schedmath::profile::Halflife;
use schedmath::uclamp::{uclamp_bucket_id, UCLAMP_BUCKETS_MAX};

fn tables() -> impl Strategy<Value = &'static PeltTables> {
    prop_oneof![
        Just(Halflife::Hl32),
        Just(Halflife::Hl16),
        Just(Halflife::Hl8)
    ]
    .prop_map(PeltTables::of)
}

/// One PELT update of a sched_entity: (time step, weight, on_rq, is_curr).
fn se_ops() -> impl Strategy<Value = Vec<(u64, u64, bool, bool)>> {
    prop::collection::vec(
        (
            prop_oneof![
                0..2048u64,
                0..50_000_000u64,
                any::<u32>().prop_map(u64::from)
            ],
            prop_oneof![Just(1_048_576u64), 15_360..91_750_400u64, any::<u64>()],
            any::<bool>(),
            any::<bool>(),
        ),
        1..64,
    )
}

proptest! {
    /// `decay_load(x, n) <= x`: y^n < 1 and every step truncates.
    #[test]
    fn decay_load_never_grows(x in any::<u64>(), n in any::<u64>(), t in tables()) {
        prop_assert!(decay_load(x, n, t) <= x);
    }

    /// Monotone decay: more periods never give more, in the table's shift + multiply form
    /// too (across a LOAD_AVG_PERIOD boundary the shift takes over from the table).
    #[test]
    fn decay_load_is_monotone_in_periods(x in any::<u64>(), n in 0..3000u64, k in 0..100u64,
                                         t in tables()) {
        prop_assert!(decay_load(x, n + k, t) <= decay_load(x, n, t));
    }

    /// ... and in the value.
    #[test]
    fn decay_load_is_monotone_in_value(x in any::<u64>(), d in any::<u64>(), n in any::<u64>(),
                                       t in tables()) {
        let y = x.saturating_add(d);
        prop_assert!(decay_load(x, n, t) <= decay_load(y, n, t));
    }

    /// y^LOAD_AVG_PERIOD = 1/2: one more halflife is one more right shift, exactly.
    #[test]
    fn decay_load_halves_per_halflife(x in any::<u64>(), n in 0..2000u64, t in tables()) {
        let p = u64::from(t.load_avg_period());
        prop_assume!(n + p <= p * 63);
        prop_assert_eq!(decay_load(x, n + p, t), decay_load(x >> 1, n, t));
    }

    /// From a zeroed sched_avg, any sequence of updates keeps `period_contrib` in 0..1024,
    /// so the divider stays in [PELT_MIN_DIVIDER, LOAD_AVG_MAX); `util_avg <= 1024`; and
    /// an update that returned 1 left each average equal to its sum over the divider.
    #[test]
    fn se_signal_stays_in_bounds(ops in se_ops(), t in tables()) {
        let mut sa = SchedAvg::default();
        let mut now = 0u64;
        for (dt, w, on_rq, is_curr) in ops {
            now = now.wrapping_add(dt);
            let se = SchedEntityPelt { load_weight: w, on_rq, is_curr, ..Default::default() };
            let ret = pelt::__update_load_avg_se(now, &mut sa, &se, t);
            let div = get_pelt_divider(&sa, t);
            prop_assert!(sa.period_contrib < 1024);
            prop_assert!(div >= t.pelt_min_divider() && div < t.load_avg_max());
            prop_assert!(sa.util_avg <= 1024, "util_avg {}", sa.util_avg);
            if ret == 1 {
                prop_assert_eq!(sa.util_avg, u64::from(sa.util_sum / div));
                prop_assert_eq!(sa.runnable_avg, sa.runnable_sum / u64::from(div));
                let w = pelt::se_weight(&se);
                prop_assert_eq!(sa.load_avg, w.wrapping_mul(sa.load_sum) / u64::from(div));
            }
        }
    }

    /// Capacity normalisation: without the 64-bit shift overflow (products below 2^54),
    /// every CPU gets at most 1024 and the biggest exactly 1024 (or all 0 without dmips).
    #[test]
    fn normalized_capacity_is_bounded_by_1024(
        cpus in prop::collection::vec((0..=4096u32, 0..=10_000_000u64), 1..=64)
    ) {
        let dmips: Vec<u32> = cpus.iter().map(|c| c.0).collect();
        let freq: Vec<u64> = cpus.iter().map(|c| c.1).collect();
        let scale = topology_normalize_cpu_scale(&dmips, &freq).unwrap();
        prop_assert!(scale.iter().all(|&c| c <= 1024));
        let max = scale.iter().copied().max().unwrap_or(0);
        prop_assert!(max == 1024 || dmips.iter().all(|&d| d == 0), "max {max}");
    }

    /// Frequency scale: `cur <= max` gives at most 1024.
    #[test]
    fn freq_scale_at_or_below_max_is_at_most_1024(cur in 1..=u32::MAX as u64, d in 0..=u32::MAX as u64) {
        let max = cur + d;
        prop_assert!(topology_set_freq_scale(0, cur, max, false) <= 1024);
    }

    /// What is left to CFS never exceeds the CPU's capacity; `rq->cpu_capacity` is >= 1.
    #[test]
    fn cfs_capacity_is_within_the_cpu(cap in 0..=1024u64, rt in 0..=2048u64, dl in 0..=2048u64,
                                      irq in 0..=2048u64, hw in 0..=1024u64, cf in 0..=1024u64) {
        let cpu = CpuCapacity { capacity_orig: cap, cpu_capacity: cap, hw_load_avg: hw.min(cap),
                                cpufreq_pressure: cf.min(cap) };
        let rq = RqPressureUtil { rt_util_avg: rt, dl_util_avg: dl, irq_util_avg: irq };
        prop_assert!(scale_rt_capacity(&cpu, &rq) <= cap.max(1));
        prop_assert!(update_cpu_capacity(&cpu, &rq) >= 1);
    }

    /// `effective_cpu_util()` never asks for more than the CPU's capacity.
    #[test]
    fn effective_util_is_at_most_capacity(capacity in any::<u64>(), util_cfs in any::<u64>(),
                                          util_rt in 0..=4096u64, util_dl in 0..=4096u64,
                                          util_irq in any::<u64>(), bw_dl in any::<u64>(),
                                          rt_runnable in any::<bool>(), uclamp_used in any::<bool>(),
                                          uclamp_min in any::<u64>(), uclamp_max in any::<u64>()) {
        let i = EffectiveUtilInput { capacity, util_cfs, util_rt, util_dl, util_irq, bw_dl,
                                     rt_runnable, uclamp_used, uclamp_min, uclamp_max,
                                     ..Default::default() };
        prop_assert!(effective_cpu_util(&i).ret <= capacity);
    }

    /// A uclamp bucket id is a bucket.
    #[test]
    fn uclamp_bucket_id_is_in_range(v in any::<u32>(), b in 1..=UCLAMP_BUCKETS_MAX as u32) {
        prop_assert!(uclamp_bucket_id(v, b) < b);
    }

    /// A frequency resolved on a sorted table with limits set through
    /// `cpufreq_set_policy()` is one of the table's frequencies, within the limits.
    #[test]
    fn resolved_frequency_is_a_table_entry(
        mut freqs in prop::collection::vec(1..5_000_000u32, 1..=64),
        descending in any::<bool>(), lo in any::<u32>(), hi in any::<u32>(), target in any::<u32>()
    ) {
        freqs.sort_unstable();
        freqs.dedup();
        if descending { freqs.reverse(); }
        let table: FreqTable = freqs.iter()
            .map(|&frequency| CpufreqFrequencyTable { flags: 0, frequency })
            .collect();
        let (fmin, fmax) = (*freqs.iter().min().unwrap(), *freqs.iter().max().unwrap());
        let mut p = CpufreqPolicy { freq_table: Some(table), min: fmin, max: fmax,
                                    cpuinfo_min_freq: fmin, cpuinfo_max_freq: fmax,
                                    ..Default::default() };
        prop_assert_eq!(set_freq_table_sorted(&mut p), 0);
        cpufreq_set_policy(&mut p, lo.min(hi), lo.max(hi));
        let f = cpufreq_driver_resolve_freq(&mut p, target);
        prop_assert!(freqs.contains(&f), "{f} not in {freqs:?}");
        prop_assert!(p.min <= f && f <= p.max, "{f} outside [{}, {}]", p.min, p.max);
    }
}
