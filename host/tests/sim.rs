// SPDX-License-Identifier: GPL-2.0-only
//! The simulator on tiny scenarios: determinism, one sanity check per metric with real
//! values, the CLI's tables and JSON as snapshots, and workload errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate, tasks_from_workload, Metrics, SimConfig, SimTask, Step};
use schedmath_host::workload::Workload;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn platform(name: &str) -> Platform {
    Platform::load(&root().join("fixtures/platforms").join(name)).unwrap()
}

fn run(p: &Platform, tasks: &[SimTask], profile: &str, secs: u64) -> Metrics {
    let cfg = SimConfig {
        duration_ns: secs * 1_000_000_000,
        hz: 250,
        seed: 0,
    };
    simulate(p, tasks, &Profile::from_name(profile).unwrap(), &cfg).unwrap()
}

fn busy(name: &str, cpus: Option<Vec<usize>>) -> SimTask {
    let mut t = SimTask::periodic(name, 100, 16_000_000, None);
    t.cpus = cpus;
    t
}

fn small(name: &str) -> SimTask {
    SimTask::periodic(name, 5, 16_000_000, None)
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

const M1: &str = "fixtures/platforms/m1pro-8c.toml";
const MIX: &str = "fixtures/scenarios/busy-plus-4x5pct.toml";

#[test]
fn same_command_twice_gives_identical_json() {
    let args = [
        "simulate",
        "--platform",
        M1,
        "--workload",
        MIX,
        "--duration",
        "1",
        "--json",
    ];
    let (a, b) = (cli(&args), cli(&args));
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout);
    let m: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    for key in [
        "ou_pct",
        "ou_triggers",
        "task_cpu_residency_s",
        "freq_residency_s",
        "idle_residency_s",
        "idle_miss_above",
        "idle_miss_below",
        "wakeup_latency_us",
        "deadline_misses",
        "work_done_ms",
        "energy_j",
        "eas_energy_estimate",
        "duration_s",
    ] {
        assert!(m.get(key).is_some(), "missing {key}");
    }
}

#[test]
fn a_busy_task_on_a_little_cpu_saturates_and_is_overutilized() {
    let m = run(
        &platform("m1pro-8c.toml"),
        &[busy("hog", Some(vec![0]))],
        "mainline",
        2,
    );
    // An always-running task reaches ~1024 whatever the CPU (invariant clock_pelt).
    let util = m.task_util_avg_end["hog"];
    assert!((1000..=1024).contains(&util), "util {util}");
    // It does not fit a 485 CPU: overutilized from the first ms of ramp-up on.
    assert!(m.ou_pct > 85.0, "{}", m.ou_pct);
    assert_eq!(m.ou_triggers, 1);
    assert_eq!(m.task_cpu_residency_s["hog"][0], 2.0);
    // Pinned at the top OPP of the E cluster (485 at 2064 MHz): 2 s of wall time is
    // just under 2 s × 485 / 1024 of reference work.
    let work = m.work_done_ms["hog"];
    assert!(work > 900.0 && work <= 2000.0 * 485.0 / 1024.0, "{work}");
    // Each 16 ms period takes ~34 ms on that CPU: every activation is late.
    let misses = m.deadline_misses["hog"];
    assert!((55..=60).contains(&misses), "{misses}");
}

#[test]
fn small_periodic_task_stays_on_an_e_core_without_overutilization() {
    let m = run(&platform("m1pro-8c.toml"), &[small("s")], "mainline", 2);
    let res = &m.task_cpu_residency_s["s"];
    let e: f64 = res[..2].iter().sum();
    let total: f64 = res.iter().sum();
    assert!(e > 0.95 * total, "{res:?}");
    assert!(m.ou_pct < 1.0, "{}", m.ou_pct);
    assert_eq!(m.deadline_misses["s"], 0);
    // 5 % of 16 ms: 0.8 ms of work per period, 125 periods.
    assert!(
        (m.work_done_ms["s"] - 100.0).abs() < 1.0,
        "{}",
        m.work_done_ms["s"]
    );
}

#[test]
fn lone_task_patch_removes_overutilization_of_one_big_task() {
    let p = platform("m1pro-8c.toml");
    let tasks = [
        busy("hog", None),
        small("a"),
        small("b"),
        small("c"),
        small("d"),
    ];
    let base = run(&p, &tasks, "mainline", 2);
    let patch = run(&p, &tasks, "ou-lone-task", 2);
    assert!(base.ou_pct > 80.0, "base {}", base.ou_pct);
    assert!(patch.ou_pct < 5.0, "patch {}", patch.ou_pct);
    // With EAS on, the patch keeps the small tasks on the E cores: the share of their
    // running time spent on cpu0-1, summed over the four tasks (4.0 = always).
    let e_share = |m: &Metrics| -> f64 {
        ["a", "b", "c", "d"]
            .iter()
            .map(|t| {
                let r = &m.task_cpu_residency_s[*t];
                r[..2].iter().sum::<f64>() / r.iter().sum::<f64>()
            })
            .sum()
    };
    let (b, p) = (e_share(&base), e_share(&patch));
    assert!(p > 3.5 && b < 2.5, "base {b} patch {p}");
}

#[test]
fn frequency_and_idle_residency_cover_the_run_and_energy_matches_the_opps() {
    let p = platform("m1pro-8c.toml");
    let m = run(&p, &[busy("hog", Some(vec![2]))], "mainline", 1);
    for (d, res) in &m.freq_residency_s {
        let sum: f64 = res.values().sum();
        assert!((sum - 1.0).abs() < 1e-5, "{d}: {sum}");
    }
    // Only cpu2 is busy and WFI has no power: energy is p0's OPP power × residency.
    let d = &p.domains[1];
    let expected: f64 = m.freq_residency_s["p0"]
        .iter()
        .map(|(khz, s)| {
            let opp = d.opps.iter().find(|o| o.khz == u64::from(*khz)).unwrap();
            opp.power_uw.unwrap() as f64 * 1e-6 * s
        })
        .sum();
    assert!(
        (m.energy_j - expected).abs() < 1e-3,
        "{} vs {expected}",
        m.energy_j
    );
    assert!(m.eas_energy_estimate > 0.0);
    // The other CPUs never leave WFI; cpu2 never enters it after the start.
    assert!(m.idle_residency_s[&3][0] > 0.999);
    assert!(m.idle_residency_s[&2][0] < 0.01);
    assert_eq!(m.idle_misses(), (0, 0));
}

#[test]
fn wakeup_latency_grows_when_tasks_share_a_cpu() {
    let p = platform("m1pro-8c.toml");
    let alone = run(&p, &[small("s")], "mainline", 1);
    // WFI exit latency is 1 us: an idle CPU wakes the task after exactly that.
    assert_eq!(alone.wakeup_latency_us.p50, 1.0);
    let mut hog = busy("hog", Some(vec![0]));
    hog.name = "hog".into();
    let mut s = small("s");
    s.cpus = Some(vec![0]);
    let shared = run(&p, &[hog, s], "mainline", 1);
    // The wakee either preempts at once (its vruntime lags) or waits for the tick:
    // the tail is up to one tick (4 ms at HZ=250).
    let l = shared.wakeup_latency_us;
    assert!(l.p99 >= 1000.0 && l.p99 <= 4000.0, "{l:?}");
}

#[test]
fn deep_idle_states_are_used_with_long_sleeps() {
    let p = platform("rk3399.toml");
    let mut t = SimTask::periodic("t", 1, 50_000_000, None);
    t.cpus = Some(vec![0]);
    let m = run(&p, &[t], "mainline", 2);
    // 50 ms idle periods: the deepest rk3399 state (2 ms target residency) dominates.
    let cpu0 = &m.idle_residency_s[&0];
    assert!(cpu0[2] > 1.5, "{cpu0:?}");
    assert!(m.idle_usage[&0][2] >= 39, "{:?}", m.idle_usage[&0]);
}

/// `schedmath CMD --platform P --workload W --duration 1 EXTRA...`, which must succeed;
/// its stdout.
fn sim_cli(cmd: &str, platform: &str, workload: &str, extra: &[&str]) -> String {
    let mut args = vec![
        cmd,
        "--platform",
        platform,
        "--workload",
        workload,
        "--duration",
        "1",
    ];
    args.extend_from_slice(extra);
    let out = cli(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn table_and_json_snapshots() {
    insta::assert_snapshot!(
        "simulate_m1pro_mix_table",
        sim_cli("simulate", M1, MIX, &[])
    );
    insta::assert_snapshot!(
        "compare_m1pro_mix_table",
        sim_cli(
            "compare",
            M1,
            MIX,
            &["--base", "mainline", "--patch", "ou-lone-task"]
        )
    );
    let rk = sim_cli(
        "simulate",
        "fixtures/platforms/rk3399.toml",
        "fixtures/scenarios/two-periodic.toml",
        &["--json"],
    );
    let v: serde_json::Value = serde_json::from_str(&rk).unwrap();
    insta::assert_snapshot!(
        "simulate_rk3399_two_periodic_json",
        serde_json::to_string_pretty(&v).unwrap()
    );
}

#[test]
fn workload_errors_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.toml");
    std::fs::write(
        &f,
        "[[task]]\nname = \"x\"\nduty_cycle_pct = 5\nperiod_us = 1000\nduration_us = 1500\n",
    )
    .unwrap();
    let e = Workload::load(&f).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("duration_us"), "{e}");
    let out = cli(&[
        "simulate",
        "--platform",
        M1,
        "--workload",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("duration_us"));
    // rt-app's synchronisation events are simulated: a lock becomes a Lock step.
    let j = dir.path().join("lock.json");
    std::fs::write(
        &j,
        r#"{"tasks": {"a": {"loop": 1, "lock": "m", "run": 1000, "unlock": "m"}}}"#,
    )
    .unwrap();
    let w = Workload::load(&j).unwrap();
    let steps = &tasks_from_workload(&w).unwrap()[0].phases[0].steps;
    assert_eq!(
        steps,
        &[Step::Lock(0), Step::Run(1_000_000), Step::Unlock(0)]
    );
    let mut t = small("s");
    t.cpus = Some(vec![8]);
    let cfg = SimConfig {
        duration_ns: 1,
        hz: 250,
        seed: 0,
    };
    let e = simulate(&platform("m1pro-8c.toml"), &[t], &Profile::MAINLINE, &cfg).unwrap_err();
    assert_eq!(
        e.to_string(),
        "task `s`: cpu 8 does not exist (the platform has 8 CPUs)"
    );
}

#[test]
fn teo_v6_10_stays_shallow_where_v6_12_sleeps_deep() {
    // VARIANTS.md §4 (a): 50 ms timer periods, utilization above capacity >> 6.
    let p = platform("rk3399.toml");
    let mut t = SimTask::periodic("t", 2, 50_000_000, None);
    t.cpus = Some(vec![0]);
    let old = run(&p, std::slice::from_ref(&t), "teo-v6.10", 5);
    let new = run(&p, &[t], "teo-v6.12", 5);
    // v6.10: every idle period in cpu-sleep (state 1), each a "below" miss.
    assert_eq!(old.idle_usage[&0], vec![1, 100, 0]);
    assert_eq!(old.idle_miss_below[&0], vec![0, 100, 0]);
    // v6.12: the deepest state, no miss; wake-ups pay its 900 us exit latency.
    assert_eq!(new.idle_miss_below[&0].iter().sum::<u64>(), 0);
    assert!(
        new.idle_residency_s[&0][2] > 4.0,
        "{:?}",
        new.idle_residency_s[&0]
    );
    assert_eq!(old.wakeup_latency_us.p50, 370.0);
    assert_eq!(new.wakeup_latency_us.p50, 900.0);
}

#[test]
fn a_phase_changing_affinity_moves_the_task() {
    use schedmath_host::sim::{PhaseAttrs, SimPhase, Step};
    let phase = |cpu: usize| SimPhase {
        attrs: PhaseAttrs {
            cpus: Some(vec![cpu]),
            ..PhaseAttrs::default()
        },
        loops: 10,
        steps: vec![Step::Run(2_000_000), Step::Sleep(8_000_000)],
    };
    let mut t = SimTask::periodic("p", 0, 1, Some(1));
    t.phases = vec![phase(0), phase(7)];
    let m = run(&platform("m1pro-8c.toml"), &[t], "mainline", 1);
    let r = &m.task_cpu_residency_s["p"];
    // 10 loops of 2 ms of work on each CPU: slower on the E core at first.
    assert!(r[0] >= 0.02 && r[7] >= 0.02, "{r:?}");
    assert_eq!(r[1..7].iter().sum::<f64>(), 0.0, "{r:?}");
    assert!(
        (m.work_done_ms["p"] - 40.0).abs() < 0.01,
        "{}",
        m.work_done_ms["p"]
    );
}

/// One CPU, its own cpufreq policy (the single-CPU schedutil path), 5 OPPs, no EM.
const ONE_CPU: &str = r#"
name = "one-cpu"
[[idle_state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
[[domain]]
name = "cpu0"
cpus = [0]
capacity_dmips_mhz = 1024
idle_states = ["WFI"]
opp = [ { khz = 400000 }, { khz = 800000 }, { khz = 1200000 }, { khz = 1600000 }, { khz = 2000000 } ]
"#;

/// An always-busy task that gets uclamp_max 400 after 1 s (`uclampset -M 400` on a
/// running hog: a second phase).
fn hog_capped_after_1s() -> SimTask {
    use schedmath_host::sim::{PhaseAttrs, SimPhase};
    let mut t = busy("hog", None);
    let body = t.phases[0].steps.clone();
    t.loops = Some(1);
    t.phases = vec![
        SimPhase {
            attrs: PhaseAttrs::default(),
            loops: 62,
            steps: body.clone(),
        },
        SimPhase {
            attrs: PhaseAttrs {
                uclamp_max: Some(400),
                ..PhaseAttrs::default()
            },
            loops: u64::MAX,
            steps: body,
        },
    ];
    t
}

/// kHz → s of the one-CPU platform's policy.
fn at(m: &Metrics, khz: u32) -> f64 {
    m.freq_residency_s["cpu0"].get(&khz).copied().unwrap_or(0.0)
}

#[test]
fn busy_filter_profile_decides_whether_uclamp_max_caps_the_frequency() {
    // VARIANTS.md §2 on a one-CPU policy.
    let p = Platform::from_toml_str(ONE_CPU, "one-cpu.toml").unwrap();
    let mut t = hog_capped_after_1s();
    t.uclamp_max = Some(1024); // uclamp in use from the start, as after a uclampset
    let fixed = run(&p, std::slice::from_ref(&t), "mainline", 3);
    let old = run(&p, &[t], "sugov-busy-without-uclamp", 3);
    // First second: both reach the top OPP.
    assert!(at(&fixed, 2_000_000) > 0.9, "{:?}", fixed.freq_residency_s);
    // Mainline: then the capped request (headroom first, then the cap, in
    // sugov_effective_cpu_perf): 400 / 1024 × 2 GHz = 781 MHz → the 800 MHz OPP.
    assert!(at(&fixed, 800_000) > 1.9, "{:?}", fixed.freq_residency_s);
    // Before the fix the busy filter keeps the top OPP: the CPU never idles.
    assert!(at(&old, 2_000_000) > 2.9, "{:?}", old.freq_residency_s);
    assert_eq!(at(&old, 800_000), 0.0, "{:?}", old.freq_residency_s);
}

#[test]
fn a_clamp_first_set_by_a_later_phase_switches_uclamp_on() {
    // The same hog without a clamp before its second phase: the kernel turns
    // `sched_uclamp_used` on at that first request, so the cap still applies.
    let p = Platform::from_toml_str(ONE_CPU, "one-cpu.toml").unwrap();
    let t = hog_capped_after_1s();
    assert_eq!(t.uclamp_max, None);
    let m = run(&p, &[t], "mainline", 3);
    assert!(at(&m, 2_000_000) > 0.9, "{:?}", m.freq_residency_s);
    assert!(at(&m, 800_000) > 1.9, "{:?}", m.freq_residency_s);
}

#[test]
fn shorter_pelt_halflife_ramps_a_new_busy_task_faster() {
    let p = Platform::from_toml_str(ONE_CPU, "one-cpu.toml").unwrap();
    let t = [busy("hog", None)];
    let cfg = SimConfig {
        duration_ns: 40_000_000,
        hz: 250,
        seed: 0,
    };
    let util = |name: &str| {
        let m = simulate(&p, &t, &Profile::from_name(name).unwrap(), &cfg).unwrap();
        m.task_util_avg_end["hog"]
    };
    let (hl32, hl8, mult4) = (util("mainline"), util("pelt-hl8"), util("pelt-mult4"));
    // 40 ms after fork (starting at 512): 32 ms halflife is still far from 1024, 8 ms
    // and the 4× clock are close to it.
    assert!(hl32 < 900, "{hl32}");
    assert!(hl8 > 990 && mult4 > 990, "{hl8} {mult4}");
}

// ------------------------------------------------------------ synchronisation events

/// Simulates an rt-app JSON text on rk3399 for `secs` s.
fn run_json(json: &str, secs: u64) -> Metrics {
    let w = Workload::from_str_with_ext(json, "sync-test.json", Some("json")).unwrap();
    run(
        &platform("rk3399.toml"),
        &tasks_from_workload(&w).unwrap(),
        "mainline",
        secs,
    )
}

/// Seconds `task` spent on a CPU.
fn on_cpu_s(m: &Metrics, task: &str) -> f64 {
    m.task_cpu_residency_s[task].iter().sum()
}

#[test]
fn lock_ping_pong_serialises_two_tasks_on_two_cpus() {
    // Two tasks on their own big CPU, each holding the mutex for 1 ms of wall time in a
    // loop. The unlock hands the mutex to the waiter (FIFO), so they alternate: each runs
    // half the time and waits the other half.
    let task = |cpu| format!(r#"{{"cpus": [{cpu}], "lock": "m", "run": 1000, "unlock": "m"}}"#);
    let locked = run_json(
        &format!(r#"{{"tasks": {{"a": {}, "b": {}}}}}"#, task(4), task(5)),
        1,
    );
    let free = run_json(
        r#"{"tasks": {"a": {"cpus": [4], "run": 1000}, "b": {"cpus": [5], "run": 1000}}}"#,
        1,
    );
    let got = |m: &Metrics, t: &str| {
        format!(
            "{:.3} s on CPU, {:.3} ms work",
            on_cpu_s(m, t),
            m.work_done_ms[t]
        )
    };
    // Each waits ~0.5 s of the 1 s for the mutex; a hand-over wakes the other task (224
    // wake-ups = 112 + 112 critical sections). Each CPU is half idle whatever its speed,
    // so frequency-invariant util stays low and the big cluster idles at its lowest OPP:
    // 1 ms of work takes ~4.5 ms of wall time there.
    assert_eq!(got(&locked, "a-0"), "0.502 s on CPU, 112.000 ms work");
    assert_eq!(got(&locked, "b-0"), "0.498 s on CPU, 111.615 ms work");
    assert_eq!(locked.wakeups, 224);
    // Without the mutex both run all the time.
    assert_eq!(got(&free, "a-0"), "1.000 s on CPU, 991.103 ms work");
}

#[test]
fn signal_wakes_the_waiter_once_per_period() {
    // The waiter blocks in wait (releasing the mutex); a periodic signaller wakes it
    // every 10 ms, and it then works 1 ms.
    let m = run_json(
        r#"{"tasks": {
            "waiter": {"cpus": [4], "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                       "unlock": "m", "run": 1000},
            "signaller": {"cpus": [5], "lock": "m", "signal": "c", "unlock": "m",
                          "timer": {"ref": "t", "period": 10000}}}}"#,
        1,
    );
    // 100 signals in 1 s: 100 ms of work (the last one cut by the end of the run).
    assert_eq!(format!("{:.3}", m.work_done_ms["waiter-0"]), "100.000");
}

#[test]
fn barrier_of_three_releases_them_together() {
    // 1, 2 and 3 ms of wall time then the barrier: every loop lasts 3 ms for all three,
    // so their CPU times are in the ratio 1:2:3.
    let m = run_json(
        r#"{"tasks": {
            "t1": {"cpus": [1], "run": 1000, "barrier": "b"},
            "t2": {"cpus": [2], "run": 2000, "barrier": "b"},
            "t3": {"cpus": [3], "run": 3000, "barrier": "b"}}}"#,
        1,
    );
    let s: Vec<String> = ["t1-0", "t2-0", "t3-0"]
        .iter()
        .map(|t| format!("{:.3}", m.work_done_ms[*t]))
        .collect();
    // 123 loops of 3 ms (plus wake-up exit latencies): work 1:2:3, the third loop
    // partial at the end.
    assert_eq!(s, ["123.697", "246.696", "370.031"]);
}

#[test]
fn iorun_raises_the_frequency_through_the_iowait_boost() {
    // 20 µs of work then 200 µs of IO (20 000 bytes at 100 MB/s) on a little CPU, against
    // the same work with a plain 200 µs sleep. The IO wake-ups come faster than a PELT
    // period, so schedutil's boost doubles up to 1024 and holds the top OPP; the sleeping
    // task stays at the lowest.
    let io = run_json(
        r#"{"tasks": {"t": {"cpus": [0], "run": 20, "iorun": 20000}}}"#,
        1,
    );
    let sleep = run_json(
        r#"{"tasks": {"t": {"cpus": [0], "run": 20, "sleep": 200}}}"#,
        1,
    );
    let at = |m: &Metrics, khz: u32| format!("{:.3}", m.freq_residency_s["a53"][&khz]);
    assert_eq!(
        (at(&io, 1_416_000), at(&io, 408_000)),
        ("0.725".into(), "0.000".into())
    );
    assert_eq!(
        (at(&sleep, 408_000), at(&sleep, 1_008_000)),
        ("0.900".into(), "0.011".into())
    );
    assert!(!sleep.freq_residency_s["a53"].contains_key(&1_416_000));
}

#[test]
fn an_io_completion_is_not_a_timer_the_idle_governor_sees() {
    // The same 20 µs of work and a 300 µs wait on CPU 1 under teo v6.10, as a timed
    // sleep and as an IO with a fixed 300 µs device latency. The sleep's timer is the
    // sleep length, so every idle is WFI (target residency 1 µs; cpu-sleep needs
    // 900 µs). The IO's interrupt is announced by no timer (sleep length: none, the tick
    // stays), so teo goes by its history and enters cpu-sleep too.
    let w = |json: &str| {
        let w = Workload::from_str_with_ext(json, "io-test.json", Some("json")).unwrap();
        run(
            &platform("rk3399.toml"),
            &tasks_from_workload(&w).unwrap(),
            "teo-v6.10",
            1,
        )
    };
    let sleep = w(r#"{"tasks": {"t": {"cpus": [1], "run": 20, "sleep": 300}}}"#);
    let io = w(r#"{"tasks": {"t": {"cpus": [1], "run": 20, "iorun": 4096}},
            "schedmath": {"io_latency_us": [300, 300]}}"#);
    // (Both also have one cluster-sleep stay outside the loop, an above miss.)
    assert_eq!(sleep.idle_usage[&1], [2235, 0, 1]);
    assert_eq!(sleep.idle_miss_above[&1], [0, 0, 1]);
    assert_eq!(io.idle_usage[&1], [586, 1181, 1]);
    assert_eq!(io.idle_miss_above[&1], [0, 1181, 1]);
}

#[test]
fn suspend_waits_for_resume_and_yield_alternates_equal_tasks() {
    // A task suspended on its own name runs 1 ms of work per resume; the resumer wakes
    // it every 10 ms: 100 resumes in 1 s.
    let m = run_json(
        r#"{"tasks": {
            "s": {"cpus": [4], "suspend": "s", "run": 1000},
            "r": {"cpus": [5], "resume": "s", "timer": {"ref": "t", "period": 10000}}}}"#,
        1,
    );
    assert_eq!(format!("{:.3}", m.work_done_ms["s-0"]), "100.000");
    // Two always-running tasks on one CPU yielding after every 100 µs of work share it
    // equally.
    let m = run_json(
        r#"{"tasks": {"y": {"instance": 2, "cpus": [0], "run": 100, "yield": ""}}}"#,
        1,
    );
    let (a, b) = (on_cpu_s(&m, "y-0"), on_cpu_s(&m, "y-1"));
    assert_eq!(
        (format!("{a:.3}"), format!("{b:.3}")),
        ("0.500".into(), "0.500".into())
    );
}

#[test]
fn sync_fixture_simulates() {
    // Producer/consumer through a condition, two workers at a barrier, a controller
    // suspended until the producer resumes it, IO and memory work.
    insta::assert_snapshot!(
        "simulate_rk3399_sync_table",
        sim_cli(
            "simulate",
            "fixtures/platforms/rk3399.toml",
            "fixtures/workloads/sync.json",
            &[]
        )
    );
}

#[test]
fn runtime_counts_preempted_wall_time_as_rt_app_does() {
    // Two 20 ms `runtime` steps sharing CPU 0 each end 20 ms after they first ran (a at
    // 0 → 20 ms, b at 4 → 24 ms, switching at the 4 ms ticks), each on the CPU 12 ms:
    // rt-app spins on the wall clock. Counting only on-CPU time would take 40 ms.
    let text = r#"{ "tasks": { "a": { "loop": 1, "cpus": [0], "runtime": 20000 },
                                "b": { "loop": 1, "cpus": [0], "runtime": 20000 } } }"#;
    let w = Workload::from_str_with_ext(text, "runtime.json", Some("json")).unwrap();
    let tasks = tasks_from_workload(&w).unwrap();
    let m = run(&platform("rk3399.toml"), &tasks, "mainline", 1);
    let on_cpu = |t: &str| m.task_cpu_residency_s[t][0];
    let (a, b) = (on_cpu("a-0"), on_cpu("b-0"));
    // Under EEVDF (mainline) a is on the CPU 12 ms of its 20 ms; b, started later, runs
    // alone once a's runtime ends: 20 ms on the CPU.
    assert_eq!((a, b), (0.012, 0.02));
}

#[test]
fn yield_gives_the_cpu_to_a_busy_peer() {
    // A task that yields after every 100 µs of work, beside an always-busy task on the
    // same CPU: the yield puts it behind its peer's vruntime, so the peer keeps the CPU
    // until its slice ends (the 4 ms tick); without the yield they split the CPU evenly.
    let text = |step: &str| {
        format!(
            r#"{{"tasks": {{"y": {{"cpus": [0], "run": 100, {step}}},
                          "b": {{"cpus": [0], "run": 1000000}}}}}}"#
        )
    };
    let shares = |step: &str| {
        let m = run_json(&text(step), 1);
        (on_cpu_s(&m, "y-0"), on_cpu_s(&m, "b-0"))
    };
    // EEVDF's yield_task_fair() only pushes the yielder's deadline one slice on: still
    // eligible, it is picked again once the peer's slice ends at a tick, so the two split
    // the CPU about evenly (the former CFS-like skip gave 6.8 / 93.2 %).
    assert_eq!(shares(r#""yield": """#), (0.499196, 0.500804));
    assert_eq!(shares(r#""sleep": 0"#), (0.5, 0.5));
}
