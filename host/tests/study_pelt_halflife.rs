// SPDX-License-Identifier: GPL-2.0-only
//! Study `pelt-halflife` (VARIANTS.md §5): a shorter PELT halflife (16, 8 ms) or the PELT
//! multiplier (clock_pelt 2x, 4x) ramps utilization up sooner, so a burst of heavy frames
//! after light ones gets a big CPU and a high OPP sooner: fewer deadline misses and
//! shorter frames, paid for in energy.

use std::path::{Path, PathBuf};

use schedmath_host::study::{self, StudyResult};

const BASE: &str = "mainline";
const PATCHES: [&str; 4] = ["pelt-hl16", "pelt-hl8", "pelt-mult2", "pelt-mult4"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn result() -> StudyResult {
    study::run(&root().join("fixtures/scenarios/pelt-halflife.toml")).unwrap()
}

/// `util_ramp_ms` of the newly busy task of `case` under `profile` (ms).
fn ramp(r: &StudyResult, case: &str, profile: &str) -> f64 {
    r.metrics(case, profile).unwrap().util_ramp_ms["busy-0"].unwrap()
}

#[test]
fn ramp_up_is_sooner_with_a_shorter_halflife_or_a_larger_multiplier() {
    let r = result();
    for case in ["pixel6 ramp", "pixel6 ramp x1-max"] {
        let v = |p| ramp(&r, case, p);
        assert!(v("pelt-hl8") < v("pelt-hl16"), "{case}");
        assert!(v("pelt-hl16") < v(BASE), "{case}");
        assert!(v("pelt-mult4") < v("pelt-mult2"), "{case}");
        assert!(v("pelt-mult2") < v(BASE), "{case}");
    }
    let case = |c| -> Vec<f64> {
        [BASE, "pelt-hl16", "pelt-hl8", "pelt-mult2", "pelt-mult4"]
            .iter()
            .map(|p| ramp(&r, c, p))
            .collect()
    };
    // Fork on an A55, misfit migration to an X1 whose OPP ramps with the task.
    assert_eq!(case("pixel6 ramp"), [144.0, 80.0, 44.0, 76.0, 40.0]);
    // At capacity 1024 and the top OPP: PELT alone, halved by each halving step.
    assert_eq!(case("pixel6 ramp x1-max"), [48.0, 24.0, 12.0, 24.0, 12.0]);
}

#[test]
fn faster_pelt_decays_sooner() {
    // After 300 ms at util 1024 the task sleeps: PELT from >= 819 to < 205 takes
    // y^k < 0.2 at k = 75 / 38 / 19 periods of 1.048576 ms (hl32 / hl16 / hl8; the
    // multiplier runs the hl32 periods 2× / 4× faster), seen at the next 1 ms step.
    let r = result();
    let decay: Vec<f64> = [BASE, "pelt-hl16", "pelt-hl8", "pelt-mult2", "pelt-mult4"]
        .iter()
        .map(|p| {
            let m = r.metrics("pixel6 ramp x1-max", p).unwrap();
            m.util_decay_ms["busy-0"].unwrap()
        })
        .collect();
    assert_eq!(decay, [78.0, 39.0, 21.0, 39.0, 20.0]);
}

/// PELT theory for the `x1-max` case: `post_init_entity_util_avg()` starts the task at
/// half the empty CPU's capacity (512), then util_avg = 1024 - 512 * y^n after n periods
/// of 1024 × 1024 ns with y^halflife = 1/2, reached 819 when y^n = 205/512; the task first
/// runs after the X1 idle state's 455 µs exit latency, and util_ramp_ms is read at the
/// next tick (4 ms at HZ 250; the fork is on a tick).
#[test]
fn x1_max_ramp_is_pelt_theory_rounded_up_to_the_tick() {
    let r = result();
    let period_ms = 1024.0 * 1024.0 / 1e6;
    for (profile, halflife_periods) in [
        (BASE, 32.0),
        ("pelt-hl16", 16.0),
        ("pelt-hl8", 8.0),
        ("pelt-mult2", 16.0),
        ("pelt-mult4", 8.0),
    ] {
        let n: f64 = halflife_periods * (512.0_f64 / 205.0).log2();
        let theory = n * period_ms + 0.455;
        let want = (theory / 4.0).ceil() * 4.0;
        let got = ramp(&r, "pixel6 ramp x1-max", profile);
        assert_eq!(got, want, "{profile}: theory {theory:.2} ms");
    }
}

#[test]
fn bursty_frames_miss_fewer_deadlines_and_finish_sooner_for_more_energy() {
    let r = result();
    let m = |p| r.metrics("pixel6 ui60", p).unwrap();
    let base = m(BASE);
    let bf = base.frame_time_ms["ui-0"];
    assert_eq!(base.deadline_misses["ui-0"], 12);
    for p in PATCHES {
        let pm = m(p);
        let f = pm.frame_time_ms["ui-0"];
        // One miss per heavy or medium burst instead of two.
        assert_eq!(pm.deadline_misses["ui-0"], 6, "{p}");
        assert!(f.max < bf.max, "{p}: max frame {} vs {}", f.max, bf.max);
        assert!(
            f.mean < bf.mean,
            "{p}: mean frame {} vs {}",
            f.mean,
            bf.mean
        );
        assert!(pm.energy_j > base.energy_j, "{p}: {} J", pm.energy_j);
    }
    // The faster variant of each approach gains more and costs more.
    for (slow, fast) in [("pelt-hl16", "pelt-hl8"), ("pelt-mult2", "pelt-mult4")] {
        assert!(m(fast).frame_time_ms["ui-0"].max < m(slow).frame_time_ms["ui-0"].max);
        assert!(m(fast).energy_j > m(slow).energy_j);
    }
    assert_eq!((bf.max, base.energy_j), (52.384879, 0.89309));
}

#[test]
fn table_and_json() {
    let r = result();
    insta::assert_snapshot!("pelt_halflife_table", r.render());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["study"], "pelt-halflife");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3 * 5);
    assert_eq!(runs[0]["case"], "pixel6 ui60");
    assert_eq!(runs[0]["profile"], "mainline");
    assert_eq!(runs[4]["profile"], "pelt-mult4");
    assert_eq!(runs[5]["case"], "pixel6 ramp");
    assert!(runs[0]["metrics"]["frame_time_ms"]["ui-0"]["max"].is_f64());
    assert!(runs[5]["metrics"]["util_ramp_ms"]["busy-0"].is_f64());
}
