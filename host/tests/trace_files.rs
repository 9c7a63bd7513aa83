// SPDX-License-Identifier: GPL-2.0-only
//! Trace files of a simulated run, checked with the real tools: Debian's `trace-cmd
//! report` reads the `.dat` without a warning and finds the `.txt`'s events; `protoc
//! --decode_raw` decodes the `.pftrace`; `schedmath replay` finds every PELT update of the
//! `.txt` exact; the `.txt` alone gives back the run's metrics; bad `--trace` paths fail
//! with exit 2 and leave no file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use schedmath::Profile;
use schedmath_host::platform::Platform;
use schedmath_host::sim::{simulate_traced, tasks_from_workload, Metrics, SimConfig};
use schedmath_host::trace::event::Event;
use schedmath_host::trace::record::Trace;
use schedmath_host::trace::report::ReportReader;
use schedmath_host::trace::write::write_file;
use schedmath_host::workload::Workload;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

const PLATFORM: &str = "fixtures/platforms/pixel6.toml";
const WORKLOAD: &str = "fixtures/workloads/small-and-busy.json";

/// A 2 s run of the mixed workload on the 4+2+2 platform.
fn run(profile: &str) -> (Platform, Metrics, Trace) {
    let p = Platform::load(&root().join(PLATFORM)).unwrap();
    let w = Workload::load(&root().join(WORKLOAD)).unwrap();
    let tasks = tasks_from_workload(&w).unwrap();
    let cfg = SimConfig {
        duration_ns: 2_000_000_000,
        hz: 250,
        seed: 0,
    };
    let profile = Profile::from_name(profile).unwrap();
    let (m, t) =
        simulate_traced(&p, &tasks, &w.global.irq_pct, &profile, &cfg, &mut |_| {}).unwrap();
    (p, m, t)
}

fn tool(name: &str) -> Command {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{name}` is not installed (Debian: apt-get install trace-cmd protobuf-compiler; .ci/run does)"
    );
    Command::new(name)
}

/// Event name → lines, from report text.
fn counts(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut r = ReportReader::new(text.as_bytes(), "report");
    while let Some(rec) = r.next_record().unwrap() {
        *out.entry(rec.event.to_string()).or_default() += 1;
    }
    out
}

#[test]
fn trace_cmd_reads_the_dat_without_warnings_and_finds_the_txt_events() {
    let (_, _, t) = run("mainline");
    let dir = tempfile::tempdir().unwrap();
    let (dat, txt) = (dir.path().join("run.dat"), dir.path().join("run.txt"));
    write_file(&t, &dat).unwrap();
    write_file(&t, &txt).unwrap();
    let out = tool("trace-cmd").arg("report").arg(&dat).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "trace-cmd report failed: {stderr}");
    assert_eq!(stderr, "", "trace-cmd report warned");
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.starts_with("cpus=8\n"));
    let ours = counts(&std::fs::read_to_string(&txt).unwrap());
    assert_eq!(counts(&report), ours);
    for e in [
        "sched_switch",
        "sched_waking",
        "sched_wakeup",
        "sched_wakeup_new",
        "cpu_frequency",
        "cpu_idle",
        "lisa__sched_pelt_se",
        "lisa__sched_pelt_cfs",
        "lisa__sched_util_est_se",
        "lisa__sched_util_est_cfs",
        "lisa__sched_cpu_capacity",
        "schedmath__pelt_update",
        "schedmath__sugov",
        "schedmath__placement",
        "schedmath__idle_select",
    ] {
        assert!(ours.get(e).copied().unwrap_or(0) > 0, "no {e} in the trace");
    }
    // Same timestamps, CPUs and order per CPU (trace-cmd prints its sched plugin's form
    // of sched_switch / wakeup, so the bodies differ there).
    let key = |text: &str| -> Vec<String> {
        let mut v: Vec<String> = text
            .lines()
            .skip(1)
            .map(|l| {
                let (head, _) = l.split_once(": ").unwrap();
                let name = l[head.len() + 2..].split(':').next().unwrap().trim();
                format!(
                    "{} {name}",
                    head.split_whitespace()
                        .skip(1)
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(key(&report), key(&std::fs::read_to_string(&txt).unwrap()));
}

#[test]
fn protoc_decodes_the_pftrace_with_bundles_and_counter_tracks() {
    let (_, _, t) = run("mainline");
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join("run.pftrace");
    write_file(&t, &pf).unwrap();
    let out = tool("protoc")
        .arg("--decode_raw")
        .stdin(std::fs::File::open(&pf).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // TracePacket.ftrace_events (1) → FtraceEventBundle.cpu (1) and events (2) holding
    // sched_switch (4), cpu_frequency (11), cpu_idle (13), sched_waking (20),
    // sched_wakeup_new (114) and generic (327) LISA events.
    assert!(
        text.starts_with("1 {\n  1 {\n    1: 0\n    2 {"),
        "{}",
        &text[..200]
    );
    for tag in ["4 {", "11 {", "13 {", "17 {", "20 {", "114 {", "327 {"] {
        assert!(
            text.contains(&format!("      {tag}\n")),
            "no ftrace event {tag}"
        );
    }
    assert!(text.contains("1: \"lisa__sched_pelt_se\""));
    for name in [
        "CPU0 util_avg",
        "CPU0 util_est.enqueued",
        "CPU7 util_avg",
        "small-0-1 util_avg",
        "small-0-1 util_est.enqueued",
        "small-0-1 util_est.ewma",
        "busy-0-2 util_avg",
    ] {
        assert!(
            text.contains(&format!("2: \"{name}\"")),
            "no counter track {name}"
        );
    }
}

#[test]
fn replay_finds_every_pelt_update_of_a_simulated_txt_exact() {
    for profile in ["mainline", "util-est-pre-v6.9"] {
        let (_, _, t) = run(profile);
        let mut txt = Vec::new();
        schedmath_host::trace::write::write_to(
            &t,
            schedmath_host::trace::write::Format::Txt,
            &mut txt,
        )
        .unwrap();
        let p = Profile::from_name(profile).unwrap();
        let r = schedmath_host::replay::replay(&txt[..], "sim.txt", None, p, false, false).unwrap();
        assert_eq!(r.mode, "probe");
        let (updates, exact) = r.totals();
        assert!(updates > 2000, "{profile}: {updates} updates");
        assert_eq!(exact, updates, "{profile}:\n{}", r.render());
    }
}

/// What the `.txt` says about the run: OU time, per task and CPU running time, per
/// domain and frequency time (ns), and the number of intervals each sums.
#[derive(Default)]
struct FromTrace {
    ou_ns: u64,
    task_cpu: BTreeMap<(String, u32), (u64, u64)>,
    freq: BTreeMap<(u32, u64), (u64, u64)>,
}

fn add<K: Ord>(m: &mut BTreeMap<K, (u64, u64)>, k: K, ns: u64) {
    let e = m.entry(k).or_insert((0, 0));
    e.0 += ns;
    e.1 += 1;
}

fn from_txt(text: &str, end: u64, first_cpus: &[u32]) -> FromTrace {
    let mut f = FromTrace::default();
    let mut ou_since: Option<u64> = None;
    let mut running: BTreeMap<u32, (String, u64)> = BTreeMap::new();
    let mut freq: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut r = ReportReader::new(text.as_bytes(), "run.txt");
    while let Some(rec) = r.next_record().unwrap() {
        let ts = rec.ts_ns;
        match Event::parse(&rec).unwrap() {
            Event::Overutilized { overutilized } => match (overutilized, ou_since) {
                (true, None) => ou_since = Some(ts),
                (false, Some(s)) => {
                    f.ou_ns += ts - s;
                    ou_since = None;
                }
                _ => {}
            },
            Event::Switch(s) => {
                if let Some((comm, since)) = running.remove(&rec.cpu) {
                    add(&mut f.task_cpu, (comm, rec.cpu), ts - since);
                }
                if s.next_pid != 0 {
                    running.insert(rec.cpu, (s.next_comm.to_string(), ts));
                }
            }
            Event::CpuFrequency { state, cpu } if first_cpus.contains(&cpu) => {
                if let Some((khz, since)) = freq.insert(cpu, (state, ts)) {
                    add(&mut f.freq, (cpu, khz), ts - since);
                }
            }
            _ => {}
        }
    }
    if let Some(s) = ou_since {
        f.ou_ns += end - s;
    }
    for (cpu, (comm, since)) in running {
        add(&mut f.task_cpu, (comm, cpu), end - since);
    }
    for (cpu, (khz, since)) in freq {
        add(&mut f.freq, (cpu, khz), end - since);
    }
    f
}

#[test]
fn the_txt_alone_gives_the_runs_ou_time_cpu_time_and_frequency_residency() {
    // ou-lone-task off: the busy task keeps the root domain overutilized for a while.
    let (p, m, t) = run("mainline");
    let mut txt = Vec::new();
    schedmath_host::trace::write::write_to(&t, schedmath_host::trace::write::Format::Txt, &mut txt)
        .unwrap();
    let text = String::from_utf8(txt).unwrap();
    let end = 2_000_000_000u64;
    let first: Vec<u32> = p.domains.iter().map(|d| d.cpus[0] as u32).collect();
    let f = from_txt(&text, end, &first);
    // Timestamps are printed in µs (rounded): each interval's ends are within 0.5 µs,
    // and the metrics are rounded to the µs too.
    let close = |got_ns: u64, want_s: f64, intervals: u64| {
        (got_ns as f64 / 1e9 - want_s).abs() <= (intervals as f64 + 1.0) * 1e-6
    };
    assert!(m.ou_pct > 0.0 && m.ou_pct < 100.0, "ou_pct {}", m.ou_pct);
    assert!(
        (f.ou_ns as f64 * 100.0 / end as f64 - m.ou_pct).abs() <= 1e-3,
        "OU: trace {} ns, metrics {} %",
        f.ou_ns,
        m.ou_pct
    );
    let mut checked = 0;
    for (task, per_cpu) in &m.task_cpu_residency_s {
        for (cpu, &want) in per_cpu.iter().enumerate() {
            let (got, n) = f
                .task_cpu
                .get(&(task.clone(), cpu as u32))
                .copied()
                .unwrap_or((0, 0));
            assert!(
                close(got, want, n),
                "{task} on CPU{cpu}: trace {got} ns, metrics {want} s"
            );
            checked += u32::from(want > 0.0);
        }
    }
    assert!(checked >= 2);
    for (d, dom) in p.domains.iter().enumerate() {
        let want = &m.freq_residency_s[&dom.name];
        let cpu = first[d];
        let got: BTreeMap<u64, (u64, u64)> = f
            .freq
            .iter()
            .filter(|((c, _), (ns, _))| *c == cpu && *ns > 0)
            .map(|((_, k), v)| (*k, *v))
            .collect();
        assert_eq!(
            got.keys().copied().collect::<Vec<_>>(),
            want.keys().map(|&k| u64::from(k)).collect::<Vec<_>>(),
            "{}",
            dom.name
        );
        for (khz, &s) in want {
            let (ns, n) = got[&u64::from(*khz)];
            assert!(
                close(ns, s, n),
                "{} at {khz} kHz: trace {ns} ns, metrics {s} s",
                dom.name
            );
        }
    }
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bad_trace_paths_fail_with_exit_2_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let cases = [
        (dir.path().join("run.svg"), "unknown trace format `.svg`"),
        (dir.path().join("run"), "unknown trace format `(none)`"),
        (file.join("run.txt"), "cannot write the trace"),
        (dir.path().join("missing/run.dat"), "cannot write the trace"),
    ];
    for (path, msg) in &cases {
        let p = path.to_str().unwrap();
        for cmd in [
            vec!["simulate", "--profile", "mainline"],
            vec!["compare", "--base", "mainline", "--patch", "pelt-hl8"],
        ] {
            let mut args = cmd.clone();
            args.extend([
                "--platform",
                PLATFORM,
                "--workload",
                WORKLOAD,
                "--duration",
                "1",
                "--trace",
                p,
            ]);
            let out = cli(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{p}: {stderr}");
            assert!(stderr.contains(msg), "{p}: {stderr}");
            assert!(stderr.contains(p) || cmd[0] == "compare", "{stderr}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("plain-file")]);
}

#[test]
fn compare_and_study_write_one_trace_per_run_with_predictable_names() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("cmp.csv");
    let out = cli(&[
        "compare",
        "--platform",
        PLATFORM,
        "--workload",
        WORKLOAD,
        "--duration",
        "1",
        "--base",
        "mainline",
        "--patch",
        "pelt-hl8",
        "--trace",
        t.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for side in ["base", "patch"] {
        let csv = std::fs::read_to_string(dir.path().join(format!("cmp.{side}.csv"))).unwrap();
        let head = csv.lines().next().unwrap();
        assert!(head.starts_with("time_ns,cpu,event,comm,pid,"), "{head}");
        assert!(csv.lines().any(|l| l.contains(",sched_switch,")));
    }
    let study = root().join("fixtures/scenarios/sched-idle-select.toml");
    let t = dir.path().join("st.txt");
    let r = schedmath_host::study::run_traced(&study, Some(&t)).unwrap();
    for run in &r.runs {
        let f = schedmath_host::study::run_trace_path(&t, &run.case, &run.profile);
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with("cpus="), "{}", f.display());
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2 + r.runs.len()
    );
}
