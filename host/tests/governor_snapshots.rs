// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath governor` reports for the VARIANTS.md §2 scenario: a CPU hog capped with
//! `uclampset -M 400`. Mainline drops to the capped frequency at once; before the 2021 fix
//! the busy filter keeps the maximum because the CPU never idles.

use std::path::{Path, PathBuf};

use schedmath::Profile;
use schedmath_host::governor::{render, render_compare, replay, GovernorPolicy, Trace};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The laptop platform's one CPU policy (400..3100 MHz, capacity 1024).
fn laptop_policy() -> GovernorPolicy {
    let path = root().join("fixtures/platforms/laptop-2c4t.toml");
    schedmath_host::governor::platform_policy(&path, 0).expect("the laptop platform loads")
}

fn trace() -> Trace {
    Trace::load(&root().join("fixtures/scenarios/governor/busy-uclamp-max-400.csv"))
        .expect("the scenario trace parses")
}

#[test]
fn busy_task_capped_at_400_mainline_vs_busy_filter_without_uclamp_exception() {
    let policy = laptop_policy();
    let t = trace();
    let main = replay(&policy, &t, &Profile::MAINLINE).expect("replay");
    let old = replay(
        &policy,
        &t,
        &Profile::from_name("sugov-busy-without-uclamp").expect("profile"),
    )
    .expect("replay");
    let last = |r: &schedmath_host::governor::Replay| r.decisions.last().map(|d| d.cur_khz);
    assert_eq!(last(&main), Some(1300000)); // 3100000 * 400 / 1024 = 1210937 -> 1300000
    assert_eq!(last(&old), Some(3100000));
    insta::assert_snapshot!(render_compare(&policy, &main, &old));
}

#[test]
fn busy_task_capped_at_400_mainline_report() {
    let policy = laptop_policy();
    let main = replay(&policy, &trace(), &Profile::MAINLINE).expect("replay");
    insta::assert_snapshot!(render(&policy, &main));
}
