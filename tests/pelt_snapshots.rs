// SPDX-License-Identifier: GPL-2.0-only
//! Readable PELT step responses: a nice-0 task waking from a zeroed signal at t = 0, 100 %
//! busy for 400 ms on a max-capacity CPU at max frequency, then asleep for 400 ms, updated
//! every 1 ms (`schedmath::pelt::response`); and the ramp-up / decay times per profile.
use std::fmt::Write;

use schedmath::pelt::response::{busy_then_idle, ramp_decay_ms, ResponseSample};
use schedmath::pelt::PeltTables;
use schedmath::Profile;

const RUN_MS: u64 = 400;
const SLEEP_MS: u64 = 400;
/// 80 % and 20 % of SCHED_CAPACITY_SCALE.
const UP_UTIL: u64 = 819;
const DOWN_UTIL: u64 = 204;

fn columns(out: &mut String, cells: [&dyn std::fmt::Display; 5]) {
    let [ms, phase, util, load, runnable] = cells;
    write!(
        out,
        "{ms:>5}  {phase:<5}  {util:>8}  {load:>8}  {runnable:>12}"
    )
    .unwrap();
}

fn row(out: &mut String, s: &ResponseSample) {
    let phase = if s.running { "run" } else { "sleep" };
    let a = &s.avg;
    columns(
        out,
        [&s.ms, &phase, &a.util_avg, &a.load_avg, &a.runnable_avg],
    );
    out.push('\n');
}

fn header(out: &mut String, last: &str) {
    columns(
        out,
        [&"ms", &"phase", &"util_avg", &"load_avg", &"runnable_avg"],
    );
    writeln!(out, "{last}").unwrap();
}

fn trace(profile_name: &str) -> String {
    let profile = Profile::from_name(profile_name).unwrap();
    let t = PeltTables::of(profile.halflife);
    let mut samples = Vec::new();
    busy_then_idle(&profile, RUN_MS, SLEEP_MS, |s| samples.push(*s));

    let mut out = String::new();
    writeln!(
        out,
        "profile {profile}: LOAD_AVG_PERIOD {} LOAD_AVG_MAX {}; nice 0, run {RUN_MS} ms, sleep {SLEEP_MS} ms",
        t.load_avg_period(),
        t.load_avg_max()
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(out, "key instants").unwrap();
    header(&mut out, "  event");
    let ramp = samples
        .iter()
        .find(|s| s.running && s.avg.util_avg >= UP_UTIL);
    let decay = samples
        .iter()
        .find(|s| !s.running && s.avg.util_avg <= DOWN_UTIL);
    let keys = [
        (samples.first(), "first update"),
        (ramp, "util_avg >= 819 (80 %)"),
        (samples.get(RUN_MS as usize - 1), "last running ms"),
        (samples.get(RUN_MS as usize), "first sleeping ms"),
        (decay, "util_avg <= 204 (20 %)"),
        (samples.last(), "end"),
    ];
    for (s, what) in keys {
        let mut line = String::new();
        match s {
            Some(s) => row(&mut line, s),
            None => line.push_str("    -  never\n"),
        }
        writeln!(out, "{}  {what}", line.trim_end()).unwrap();
    }
    writeln!(out).unwrap();
    writeln!(out, "every 10 ms").unwrap();
    header(&mut out, "");
    for s in samples.iter().filter(|s| s.ms % 10 == 0) {
        row(&mut out, s);
    }
    out
}

#[test]
fn pelt_trace_hl32() {
    insta::assert_snapshot!(trace("mainline"));
}

#[test]
fn pelt_trace_hl16() {
    insta::assert_snapshot!(trace("pelt-hl16"));
}

#[test]
fn pelt_trace_hl8() {
    insta::assert_snapshot!(trace("pelt-hl8"));
}

#[test]
fn pelt_ramp_decay_times() {
    let mut out = String::new();
    writeln!(
        out,
        "nice-0 task alone on a 1024-capacity CPU at max frequency, 1 ms updates"
    )
    .unwrap();
    writeln!(
        out,
        "ramp-up: ms from waking (util_avg 0) to util_avg >= {UP_UTIL}; decay: ms from sleep start (saturated) to util_avg <= {DOWN_UTIL}"
    )
    .unwrap();
    writeln!(
        out,
        "halflife: LOAD_AVG_PERIOD of the table, divided by the multiplier for pelt-multN (clock_pelt runs N times faster)"
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "{:<10}  {:>9}  {:>8}  {:>10}  {:>8}",
        "profile", "halflife", "ramp_ms", "saturated", "decay_ms"
    )
    .unwrap();
    for name in [
        "mainline",
        "pelt-hl16",
        "pelt-hl8",
        "pelt-mult2",
        "pelt-mult4",
    ] {
        let p = Profile::from_name(name).unwrap();
        let r = ramp_decay_ms(&p, UP_UTIL, DOWN_UTIL);
        let ms = |v: Option<u64>| v.map_or_else(|| "never".to_string(), |v| v.to_string());
        writeln!(
            out,
            "{:<10}  {:>6} ms  {:>8}  {:>10}  {:>8}",
            name,
            PeltTables::of(p.halflife).load_avg_period() >> p.pelt_lshift,
            ms(r.ramp_up_ms),
            r.saturated_util_avg,
            ms(r.decay_ms)
        )
        .unwrap();
    }
    insta::assert_snapshot!(out);
}
