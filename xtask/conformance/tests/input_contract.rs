// SPDX-License-Identifier: GPL-2.0-only
//! The kernel's input contract, one test per width, truncation or limit rule of a fixture
//! README (fixtures/kernel/*/README.md).
//!
//! JSON integers may be as large as 2^64 − 1; an input the kernel keeps in a narrower
//! variable is truncated as C truncates, never refused. Each width test takes a public
//! case, adds 2^32 (or 2^64 − 2^32, i.e. −2^32) to a field the README documents as an
//! `unsigned int`/`int`/u32, and asserts the case still gives the kernel's published
//! output: the kernel stored the same low 32 bits. The limit tests check that the core's
//! fixed tables cover real hardware and name their limit beyond it.

use std::path::PathBuf;

use schedmath_conformance::registry::{self, json::run};
use serde_json::{json, Value};

const TWO_32: u64 = 1 << 32;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/kernel")
}

/// `(fn, in, out)` of case `id` in `suite` (e.g. `capacity/scale_rt_capacity`), and the
/// file's header `variant`.
fn case(suite: &str, id: &str) -> (String, Value, Value, String) {
    let path = fixtures().join(format!("{suite}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let variant = header["variant"].as_str().unwrap().to_string();
    for l in lines {
        let c: Value = serde_json::from_str(l).unwrap();
        if c["id"] == id {
            let f = c["fn"].as_str().unwrap().to_string();
            return (f, c["in"].clone(), c["out"].clone(), variant);
        }
    }
    panic!("no case {id} in {suite}");
}

fn exec(module: &str, f: &str, input: &Value, variant: &str) -> Result<Value, String> {
    let kind = registry::kind_of(module, f).unwrap_or_else(|| panic!("no driver for {f}"));
    run(kind, input, variant)
}

/// Adds `delta` (mod 2^64) to the integer at `pointer` in `v`.
fn bump(v: &mut Value, pointer: &str, delta: u64) {
    let slot = v
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"));
    let old = slot
        .as_u64()
        .or_else(|| slot.as_i64().map(|i| i as u64))
        .unwrap_or_else(|| panic!("{pointer} is not an integer: {slot}"));
    *slot = json!(old.wrapping_add(delta));
}

/// `got` has every field of `expected` with its value (the host's comparison: a driver
/// may add fields the suite does not have, e.g. an absent `ret`, as null).
fn covers(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::Object(e), Value::Object(g)) => {
            e.iter()
                .all(|(k, v)| g.get(k).is_some_and(|gv| covers(v, gv)))
                && g.iter().all(|(k, v)| e.contains_key(k) || v.is_null())
        }
        (Value::Array(e), Value::Array(g)) => {
            e.len() == g.len() && e.iter().zip(g).all(|(a, b)| covers(a, b))
        }
        _ => expected == got,
    }
}

/// Case `id` with 2^32 added to each field at `pointers` gives the published output.
fn truncated_like_the_kernel(suite: &str, id: &str, pointers: &[&str]) {
    let module = suite.split('/').next().unwrap();
    let (f, mut input, out, variant) = case(suite, id);
    let got = exec(module, &f, &input, &variant).unwrap();
    assert!(covers(&out, &got), "{id} as published: {got}");
    for p in pointers {
        bump(&mut input, p, TWO_32);
    }
    let got = exec(module, &f, &input, &variant).unwrap();
    assert!(
        covers(&out, &got),
        "{id} with 2^32 added to {pointers:?}: {got}"
    );
}

// ---- capacity/README.md -----------------------------------------------------------------

/// "the reference frequency is read into a **u32** (values >= 2^32 are truncated)".
#[test]
fn capacity_reference_frequency_is_read_into_a_u32() {
    truncated_like_the_kernel(
        "capacity/scale_rt_capacity",
        "hwp-edge-0",
        &["/capacity_freq_ref"],
    );
    truncated_like_the_kernel(
        "capacity/scale_rt_capacity",
        "cfp-edge-0",
        &["/capacity_freq_ref"],
    );
    // 2^32 + 2 GHz truncates to 2 GHz: a 1.5 GHz cap leaves 768 of 1024, pressure 256.
    let input = json!({"capacity_orig": 1024, "capacity_freq_ref": TWO_32 + 2_000_000,
                       "capped_freq": 1_500_000});
    let got = exec(
        "capacity",
        "topology_update_hw_pressure",
        &input,
        "mainline",
    );
    assert_eq!(got, Ok(json!({"hw_pressure": 256})));
}

/// `cpufreq_update_pressure()` reads `policy->max`, an `unsigned int`.
#[test]
fn capacity_policy_max_is_an_unsigned_int() {
    truncated_like_the_kernel("capacity/scale_rt_capacity", "cfp-edge-0", &["/policy_max"]);
}

/// "`capacity_dmips_mhz` is the DT `capacity-dmips-mhz`, a u32".
#[test]
fn capacity_dmips_mhz_is_a_u32() {
    truncated_like_the_kernel(
        "capacity/normalize",
        "plat-rk3399",
        &["/capacity_dmips_mhz/0", "/capacity_dmips_mhz/5"],
    );
}

/// The task's and the rq's `util_est` are `unsigned int`s (the UTIL_AVG_UNCHANGED bit is
/// bit 31 of that word).
#[test]
fn capacity_util_est_is_an_unsigned_int() {
    truncated_like_the_kernel("capacity/fits", "tfc-0", &["/util_est"]);
    truncated_like_the_kernel("capacity/uclamp", "cap-0", &["/cfs_util_est"]);
}

/// "JSON integers may be as large as 2^64-1; treat them as u64": `cap_scale`'s product
/// wraps modulo 2^64 before the shift.
#[test]
fn capacity_cap_scale_takes_u64_max_and_wraps() {
    let got = exec(
        "capacity",
        "cap_scale",
        &json!({"v": u64::MAX, "s": 2}),
        "mainline",
    );
    assert_eq!(got, Ok(json!({"ret": u64::MAX.wrapping_mul(2) >> 10})));
}

/// `fits_capacity()`: `cap*1280 < max*1024` in 64 bits, both products may wrap.
#[test]
fn capacity_fits_capacity_products_wrap() {
    // 2^55 * 1280 wraps to 0 (2^63 * 5 * 2^... : 1280 = 5 * 2^8): 0 < max*1024 holds.
    let got = exec(
        "capacity",
        "fits_capacity",
        &json!({"cap": 1u64 << 56, "max": 1}),
        "x",
    );
    assert_eq!(got, Ok(json!({"ret": 1})));
}

/// An Energy Model with more than 32 performance states is valid for the kernel (it
/// allocates `nr_states` entries): 40 and 64 states load with the README's arithmetic,
/// `performance = cap * f / f_max` and `cost = power * 10 / performance`.
#[test]
fn energy_model_takes_more_than_32_states() {
    for n in [33u64, 40, 64] {
        let freq: Vec<u64> = (1..=n).map(|i| i * 50_000).collect();
        let power: Vec<u64> = (1..=n).map(|i| i * i * 1_000).collect();
        let input = json!({"cpu_capacity": 1024, "frequency": freq, "power": power,
                           "flags_in": vec![0; n as usize]});
        let out = exec("capacity", "em_create_perf_table", &input, "mainline").unwrap();
        assert_eq!(out["ret"], 0, "{n} states");
        let fmax = n * 50_000;
        for i in 0..n as usize {
            let perf = 1024 * freq[i] / fmax;
            assert_eq!(out["performance"][i], perf, "{n} states, state {i}");
            assert_eq!(
                out["cost"][i],
                power[i] * 10 / perf,
                "{n} states, state {i}"
            );
        }
        // Costs rise with the square of the frequency: every state is efficient.
        assert!(out["flags"].as_array().unwrap().iter().all(|f| f == 0));
        let input = json!({"performance": out["performance"], "cost": out["cost"],
                           "flags": out["flags"], "pd_flags": 0, "min_perf_state": 0,
                           "max_perf_state": n - 1, "max_util": 1024, "sum_util": 10,
                           "allowed_cpu_cap": 1024});
        let e = exec("capacity", "em_cpu_energy", &input, "mainline").unwrap();
        assert_eq!(e["perf_state"], n - 1);
        assert_eq!(e["ret"], out["cost"][n as usize - 1].as_u64().unwrap() * 10);
    }
}

/// Beyond the core's table the error names the limit, not a parse failure.
#[test]
fn energy_model_beyond_the_limit_names_it() {
    let n = schedmath::energy::EM_MAX_PERF_STATES as u64 + 1;
    let freq: Vec<u64> = (1..=n).map(|i| i * 50_000).collect();
    let input = json!({"cpu_capacity": 1024, "frequency": freq, "power": freq,
                       "flags_in": vec![0; n as usize]});
    let e = exec("capacity", "em_create_perf_table", &input, "mainline").unwrap_err();
    assert!(
        e.contains("65 entries, more than the core's EM_MAX_PERF_STATES = 64"),
        "{e}"
    );
}

/// The core's limits cover real hardware (the floor: 64 OPPs and perf states, 64
/// CPUs) and the kernel's own bounds (10 idle states, 20 uclamp buckets).
#[test]
fn core_limits_cover_real_hardware() {
    const { assert!(schedmath::energy::EM_MAX_PERF_STATES >= 64) };
    const { assert!(schedmath::cpufreq::CPUFREQ_TABLE_MAX >= 64) };
    const { assert!(schedmath::capacity::topology::NR_CPUS >= 64) };
    assert_eq!(schedmath::cpuidle::CPUIDLE_STATE_MAX, 10);
    assert_eq!(schedmath::uclamp::UCLAMP_BUCKETS_MAX, 20);
}

/// Too many CPUs, idle states or table rows: each error names its limit.
#[test]
fn every_list_limit_is_named() {
    let cpus = schedmath::capacity::topology::NR_CPUS + 1;
    let input = json!({"nr_cpus": cpus, "capacity_dmips_mhz": vec![1024; cpus],
                       "capacity_freq_ref": vec![1; cpus]});
    let e = exec(
        "capacity",
        "topology_normalize_cpu_scale",
        &input,
        "mainline",
    )
    .unwrap_err();
    assert!(e.contains("more than the core's NR_CPUS = 64"), "{e}");
    let rows = schedmath::cpufreq::CPUFREQ_TABLE_MAX + 1;
    let e = exec(
        "schedutil",
        "set_freq_table_sorted",
        &json!({"table": vec![1; rows]}),
        "x",
    )
    .unwrap_err();
    assert!(
        e.contains("more than the core's CPUFREQ_TABLE_MAX = 64"),
        "{e}"
    );
    let (f, mut input, _, variant) = case("cpuidle/teo_mainline", "edge_00_single_state");
    let state = input["init"]["states"][0].clone();
    input["init"]["states"] = json!(vec![state; 11]);
    let e = exec("cpuidle", &f, &input, &variant).unwrap_err();
    assert!(
        e.contains("11 entries, more than the core's CPUIDLE_STATE_MAX = 10"),
        "{e}"
    );
}

// ---- pelt/README.md ---------------------------------------------------------------------

/// `__accumulate_pelt_segments(u64 periods, u32 d1, u32 d3)`.
#[test]
fn pelt_segments_d1_d3_are_u32() {
    truncated_like_the_kernel("pelt/accumulate_segments", "accum-hl32-e0", &["/d1", "/d3"]);
}

/// `decay_load()`: the cutoff is tested on the full u64 `n`, then `n` is narrowed to 32
/// bits: n = 2^32 returns 0, not `val * y^0`.
#[test]
fn pelt_decay_load_cutoff_before_the_u32_narrowing() {
    let input = json!({"variant": "hl32", "val": 1024, "n": TWO_32});
    assert_eq!(
        exec("pelt", "decay_load", &input, "mainline"),
        Ok(json!({"ret": 0}))
    );
    let input = json!({"variant": "hl32", "val": 1024, "n": 0});
    assert_eq!(
        exec("pelt", "decay_load", &input, "mainline"),
        Ok(json!({"ret": 1023}))
    );
}

/// `struct sched_avg`: `util_sum` and `period_contrib` are u32.
#[test]
fn pelt_util_sum_and_period_contrib_are_u32() {
    truncated_like_the_kernel(
        "pelt/rt_sequence",
        "rt-hl32-edges",
        &["/init/util_sum", "/init/period_contrib"],
    );
}

/// `update_rt_rq_load_avg(u64 now, struct rq *rq, int running)`: `running` is an int.
#[test]
fn pelt_rt_running_is_an_int() {
    truncated_like_the_kernel("pelt/rt_sequence", "rt-hl32-edges", &["/ops/0/running"]);
}

/// `update_idle_rq_clock_pelt()`: the three util sums are u32.
#[test]
fn pelt_idle_util_sums_are_u32() {
    let (_, input, _, _) = case("pelt/clock_pelt", "clk-hl32-idle-sync");
    let ops = input["ops"].as_array().unwrap();
    let i = ops
        .iter()
        .position(|o| o["op"] == "update_idle_rq_clock_pelt")
        .expect("an idle op");
    let p = format!("/ops/{i}");
    truncated_like_the_kernel(
        "pelt/clock_pelt",
        "clk-hl32-idle-sync",
        &[
            &format!("{p}/cfs_util_sum"),
            &format!("{p}/rt_util_sum"),
            &format!("{p}/dl_util_sum"),
        ],
    );
}

/// The mainline `util_est` is an `unsigned int` (flag in bit 31).
#[test]
fn pelt_util_est_is_an_unsigned_int() {
    truncated_like_the_kernel(
        "pelt/util_est",
        "ue-flag-skips",
        &["/init/util_est", "/init/cfs_util_est"],
    );
}

// ---- schedutil/README.md ----------------------------------------------------------------

/// `policy->cur` and `cpuinfo.max_freq` are `unsigned int`s; `arch_scale_freq_ref()` is
/// read into an `unsigned int freq`.
#[test]
fn schedutil_policy_frequencies_are_unsigned_ints() {
    truncated_like_the_kernel(
        "schedutil/map",
        "map-00755",
        &["/cur", "/cpuinfo_max_freq", "/arch_freq_ref"],
    );
}

/// `get_capacity_ref_freq()` without invariance: `cur + (cur >> 2)` in 32 bits.
#[test]
fn schedutil_non_invariant_reference_wraps_in_32_bits() {
    let cur: u64 = 3_435_973_837; // the first value that wraps
    let input = json!({"arch_freq_ref": 0, "freq_invariant": false, "cur": cur,
                       "cpuinfo_max_freq": 0});
    let want = (cur as u32).wrapping_add(cur as u32 >> 2);
    assert_eq!(
        exec("schedutil", "get_capacity_ref_freq", &input, "mainline"),
        Ok(json!({"ret": want}))
    );
}

/// Table entries, targets and limits are `unsigned int` kHz.
#[test]
fn schedutil_table_frequencies_are_unsigned_ints() {
    truncated_like_the_kernel(
        "schedutil/resolve_freq",
        "resolve-00046",
        &["/target_freq", "/min", "/max", "/table/0", "/table/7"],
    );
    truncated_like_the_kernel(
        "schedutil/resolve_freq",
        "resolve-02001",
        &["/policy_min", "/policy_max", "/target_freq"],
    );
}

/// The governor's policy state (`cur`, `min`, `max`, `next_freq`, `cached_raw_freq`) is
/// `unsigned int`; the raw frequency keeps its low 32 bits (next_freq-00060).
#[test]
fn schedutil_governor_state_is_unsigned_int() {
    truncated_like_the_kernel(
        "schedutil/next_freq",
        "next_freq-00000",
        &[
            "/init/cur",
            "/init/min",
            "/init/max",
            "/init/cpuinfo_max_freq",
        ],
    );
    truncated_like_the_kernel("schedutil/next_freq", "next_freq-00060", &[]);
}

// ---- cpuidle/README.md ------------------------------------------------------------------

/// teo's `state_bins[]`, `total`, `tick_intercepts` and `short_idles` are u32.
#[test]
fn cpuidle_teo_counters_are_u32() {
    truncated_like_the_kernel(
        "cpuidle/teo_mainline",
        "edge_00_single_state",
        &[
            "/init/state0/gov/total",
            "/init/state0/gov/state_bins/0/hits",
            "/init/state0/gov/tick_intercepts",
        ],
    );
}

/// A negative s64 written as its u64 bit pattern is the same s64 (C conversion):
/// `last_residency_ns` 2^64 − 5 is −5.
#[test]
fn cpuidle_s64_inputs_take_u64_bit_patterns() {
    let (f, mut input, _, variant) = case("cpuidle/menu", "edge_00_single_state");
    let neg = exec(
        "cpuidle",
        &f,
        &{
            let mut v = input.clone();
            v["init"]["state0"]["dev"]["last_residency_ns"] = json!(-5);
            v
        },
        &variant,
    );
    input["init"]["state0"]["dev"]["last_residency_ns"] = json!(u64::MAX - 4);
    assert_eq!(exec("cpuidle", &f, &input, &variant), neg);
    assert!(neg.is_ok());
}
