// SPDX-License-Identifier: GPL-2.0-only
//! Loader tests: small inline platforms, valid and broken; every error names file and key.

use super::*;

const ORIGIN: &str = "fixtures/platforms/test.toml";

const GOOD: &str = r#"
name = "tiny"
[[idle_state]]
name = "wfi"
exit_latency_us = 1
target_residency_us = 1
[[idle_state]]
name = "cpu-sleep"
exit_latency_us = 370
target_residency_us = 900
flags = ["timer-stop"]
[[domain]]
name = "little"
cpus = [0, 1]
capacity_dmips_mhz = 485
dynamic_power_coefficient = 100
idle_states = ["wfi", "cpu-sleep"]
opp = [ { khz = 408000, uv = 825000 }, { khz = 1416000, uv = 1125000 } ]
[[domain]]
name = "big"
cpus = [2]
capacity_dmips_mhz = 1024
dynamic_power_coefficient = 436
idle_states = ["wfi"]
opp = [ { khz = 408000, uv = 825000 }, { khz = 1800000, uv = 1200000 } ]
"#;

fn load(text: &str) -> Result<Platform, PlatformError> {
    Platform::from_toml_str(text, ORIGIN)
}

/// The error's display, which must start with the file name.
fn err(text: &str) -> String {
    let e = load(text).unwrap_err().to_string();
    assert!(e.starts_with(ORIGIN), "{e}");
    e
}

#[test]
fn good_platform_normalises_through_the_core() {
    let p = load(GOOD).unwrap();
    assert_eq!(p.nr_cpus(), 3);
    let caps: Vec<u64> = p.cpus.iter().map(|c| c.capacity_orig).collect();
    assert_eq!(caps, [381, 381, 1024]);
    assert!(p.eas);
    let little = &p.domains[0];
    assert_eq!(little.capacity_freq_ref_khz, 1_416_000);
    // of_dynamic_power: 100 * 825^2 * 408 / 1e6 = 27769 uW (the rk3399 fixture's value).
    assert_eq!(little.opps[0].power_uw, Some(27_769));
    let em = little.em.as_ref().unwrap();
    assert_eq!(em.table[0].performance, 109);
    assert_eq!(em.table[1].performance, 381);
    assert_eq!(p.idle_states_of(0).len(), 2);
    assert_eq!(p.idle_states_of(2)[0].name, "wfi");
    assert!(p.idle_states[1].flags.timer_stop);
}

#[test]
fn of_dynamic_power_truncates_like_the_kernel() {
    // 436 * 1200^2 * 1800 / 1e6 = 1130112 (the rk3399 A72 top OPP).
    assert_eq!(of_dynamic_power(436, 1_200_000, 1_800_000), Some(1_130_112));
    // uV and Hz truncate to mV and MHz first: 825999 uV -> 825 mV, 408999 kHz -> 408 MHz.
    assert_eq!(of_dynamic_power(100, 825_999, 408_999), Some(27_769));
    assert_eq!(of_dynamic_power(u32::MAX, u64::MAX, 1), None);
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let text = GOOD.replace("name = \"big\"", "name = \"big\"\nfrequency = 3");
    let e = err(&text);
    assert!(e.contains("unknown field `frequency`"), "{e}");
    // toml points at the table holding the unknown key (the second [[domain]]).
    assert!(e.starts_with(&format!("{ORIGIN}:21:1: ")), "{e}");
}

#[test]
fn missing_key_is_named() {
    let e = err(&GOOD.replace("cpus = [2]\n", ""));
    assert!(e.contains("missing field `cpus`"), "{e}");
}

#[test]
fn invalid_toml_gives_line_and_column() {
    let e = err("name = \"x\"\n[[domain]\n");
    assert!(e.starts_with(&format!("{ORIGIN}:2:")), "{e}");
}

#[test]
fn unsorted_opp_table_is_refused() {
    let text = GOOD.replace(
        "{ khz = 408000, uv = 825000 }, { khz = 1800000",
        "{ khz = 1900000, uv = 825000 }, { khz = 1800000",
    );
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[1].opp[1].khz: OPP table not sorted: 1800000 kHz after 1900000 kHz (list OPPs by ascending frequency)")
    );
}

#[test]
fn duplicate_opp_is_refused() {
    let text = GOOD.replace("{ khz = 1416000", "{ khz = 408000");
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[0].opp[1].khz: duplicate frequency 408000 kHz")
    );
}

#[test]
fn zero_frequency_is_refused() {
    let text = GOOD.replace(
        "{ khz = 408000, uv = 825000 }, { khz = 1416000",
        "{ khz = 0, uv = 825000 }, { khz = 1416000",
    );
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[0].opp[0].khz: zero frequency")
    );
}

#[test]
fn cpu_in_two_domains_is_refused() {
    let text = GOOD.replace("cpus = [2]", "cpus = [1, 2]");
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[1].cpus: CPU 1 is also in domain[0] (`little`)")
    );
}

#[test]
fn cpu_in_no_domain_is_refused() {
    let text = GOOD.replace("cpus = [2]", "cpus = [3]");
    assert_eq!(
        err(&text),
        format!(
            "{ORIGIN}: domain: CPU 2 is in no domain (CPUs must be numbered 0..4 without gaps)"
        )
    );
}

#[test]
fn direct_capacity_above_1024_is_refused() {
    let text = GOOD
        .replace("capacity_dmips_mhz = 485", "capacity = 381")
        .replace("capacity_dmips_mhz = 1024", "capacity = 1025");
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[1].capacity: 1025 is outside 1..=1024")
    );
}

#[test]
fn direct_capacities_need_a_1024_cpu() {
    let text = GOOD
        .replace("capacity_dmips_mhz = 485", "capacity = 381")
        .replace("capacity_dmips_mhz = 1024", "capacity = 1000");
    let e = err(&text);
    assert!(
        e.contains("domain.capacity: no domain has capacity 1024"),
        "{e}"
    );
}

#[test]
fn direct_capacities_are_taken_as_is() {
    let text = GOOD
        .replace("capacity_dmips_mhz = 485", "capacity = 485")
        .replace("capacity_dmips_mhz = 1024", "capacity = 1024");
    let p = load(&text).unwrap();
    assert_eq!(p.capacity_orig(0), Some(485));
    assert_eq!(p.capacity_orig(2), Some(1024));
}

#[test]
fn mixed_capacity_modes_are_refused() {
    let text = GOOD.replace("capacity_dmips_mhz = 1024", "capacity = 1024");
    let e = err(&text);
    assert!(
        e.contains("domain[0]: mixes capacity_dmips_mhz and capacity"),
        "{e}"
    );
}

#[test]
fn shift_overflow_of_normalisation_is_refused() {
    let text = GOOD.replace(
        "capacity_dmips_mhz = 1024",
        "capacity_dmips_mhz = 4294967295\ncapacity_freq_ref_khz = 5000000",
    );
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[1].capacity_freq_ref_khz: capacity_dmips_mhz 4294967295 x reference frequency 5000000 kHz overflows the kernel's 64-bit `<< 10`")
    );
}

#[test]
fn capacity_rounding_to_zero_is_refused() {
    let text = GOOD.replace(
        "capacity_dmips_mhz = 485",
        "capacity_dmips_mhz = 1\ncapacity_freq_ref_khz = 1",
    );
    let e = err(&text);
    assert!(
        e.contains("domain[0].capacity_dmips_mhz: normalised capacity is 0"),
        "{e}"
    );
}

#[test]
fn partial_power_is_refused() {
    let text = GOOD.replace("{ khz = 1416000, uv = 1125000 }", "{ khz = 1416000 }");
    let e = err(&text);
    assert!(
        e.contains("domain[0].opp[1]: no power while other OPPs have one"),
        "{e}"
    );
}

#[test]
fn eas_without_energy_model_is_refused() {
    let text = GOOD
        .replace("dynamic_power_coefficient = 436\n", "")
        .replace("name = \"tiny\"", "name = \"tiny\"\neas = true");
    let e = err(&text);
    assert!(
        e.contains(": eas: is true but domain[1] has no Energy Model"),
        "{e}"
    );
    // Without `eas`, EAS is simply off.
    let p = load(&GOOD.replace("dynamic_power_coefficient = 436\n", "")).unwrap();
    assert!(!p.eas);
    assert!(p.domains[1].em.is_none());
}

#[test]
fn power_above_the_em_limit_is_refused() {
    let text = GOOD.replace(
        "{ khz = 1800000, uv = 1200000 }",
        "{ khz = 1800000, power_mw = 64001 }",
    );
    let e = err(&text);
    assert!(
        e.contains("domain[1].opp[1]: energy model: power 64001000 uW"),
        "{e}"
    );
}

#[test]
fn power_uw_and_mw_together_are_refused() {
    let text = GOOD.replace(
        "{ khz = 1800000, uv = 1200000 }",
        "{ khz = 1800000, power_uw = 1, power_mw = 1 }",
    );
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[1].opp[1].power_mw: give power_uw or power_mw, not both")
    );
}

#[test]
fn unknown_idle_state_reference_is_refused() {
    let text = GOOD.replace("idle_states = [\"wfi\"]", "idle_states = [\"c6\"]");
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: domain[1].idle_states[0]: no [[idle_state]] named `c6`")
    );
}

#[test]
fn idle_states_must_go_shallow_to_deep() {
    let text = GOOD.replace("[\"wfi\", \"cpu-sleep\"]", "[\"cpu-sleep\", \"wfi\"]");
    let e = err(&text);
    assert!(
        e.contains("domain[0].idle_states[1]: `wfi` has a shorter target residency"),
        "{e}"
    );
}

#[test]
fn unknown_idle_flag_is_refused() {
    let text = GOOD.replace("[\"timer-stop\"]", "[\"timer-stops\"]");
    assert_eq!(
        err(&text),
        format!("{ORIGIN}: idle_state[1].flags: unknown flag `timer-stops` (known: timer-stop, polling)")
    );
}

#[test]
fn smt_siblings_are_checked_and_recorded() {
    let p = load(&GOOD.replace(
        "name = \"tiny\"",
        "name = \"tiny\"\nsmt_siblings = [[0, 1]]",
    ))
    .unwrap();
    assert_eq!(p.cpus[0].smt_siblings, [1]);
    assert!(p.cpus[2].smt_siblings.is_empty());
    let e = err(&GOOD.replace(
        "name = \"tiny\"",
        "name = \"tiny\"\nsmt_siblings = [[0, 1], [1, 2]]",
    ));
    assert!(
        e.contains("smt_siblings[1]: CPU 1 is also in smt_siblings[0]"),
        "{e}"
    );
    let e = err(&GOOD.replace(
        "name = \"tiny\"",
        "name = \"tiny\"\nsmt_siblings = [[0, 9]]",
    ));
    assert!(e.contains("smt_siblings[0]: CPU 9 does not exist"), "{e}");
}

#[test]
fn clusters_default_to_domains_and_are_checked() {
    let p = load(GOOD).unwrap();
    let by_domain: Vec<Vec<usize>> = p.domains.iter().map(|d| d.cpus.clone()).collect();
    assert_eq!(p.clusters, by_domain);
    let with = |extra: &str| GOOD.replace("name = \"tiny\"", &format!("name = \"tiny\"\n{extra}"));
    let n = p.cpus.len();
    let all: Vec<String> = (0..n).map(|c| c.to_string()).collect();
    let p = load(&with(&format!("clusters = [[{}]]", all.join(", ")))).unwrap();
    assert_eq!(p.clusters, vec![(0..n).collect::<Vec<_>>()]);
    assert!(p.cpus.iter().all(|c| c.cluster == 0));
    let e = err(&with("clusters = [[0]]"));
    assert!(e.contains("clusters: CPU 1 is in no cluster"), "{e}");
    let e = err(&with("clusters = [[0, 1], [1]]"));
    assert!(
        e.contains("clusters[1]: CPU 1 is also in clusters[0]"),
        "{e}"
    );
    let e = err(&with(&format!(
        "smt_siblings = [[0, 1]]\nclusters = [[0], [{}]]",
        all[1..].join(", ")
    )));
    assert!(
        e.contains("smt_siblings[0]: hardware threads of one core must share a cluster"),
        "{e}"
    );
}

#[test]
fn missing_file_names_the_file() {
    let e = Platform::load(Path::new("/nonexistent/p.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/p.toml: "), "{e}");
}

#[test]
fn tick_resched_latency_defaults_to_zero_and_is_limited() {
    assert_eq!(load(GOOD).unwrap().tick_resched_latency_ns, 0);
    let with = |ns: &str| {
        GOOD.replace(
            "name = \"tiny\"",
            &format!("name = \"tiny\"\ntick_resched_latency_ns = {ns}"),
        )
    };
    assert_eq!(
        load(&with("26400")).unwrap().tick_resched_latency_ns,
        26_400
    );
    let e = err(&with("1000001"));
    assert!(
        e.contains(": tick_resched_latency_ns: 1000001 is beyond the limit MAX_TICK_RESCHED_LATENCY_NS = 1000000"),
        "{e}"
    );
    // A negative value: its line and column (the key's line).
    let e = err(&with("-1"));
    assert!(
        e.contains(":3:27: invalid value: integer `-1`, expected u64"),
        "{e}"
    );
}
