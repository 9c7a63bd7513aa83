// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath replay`: exact per-call replay of real kernels' PELT updates, the JSON
//! schema, and bad input (truncated lines, unknown events, backwards time, gzip).
//!
//! Until the lab's captures are committed, the real-kernel PELT captures of
//! fixtures/kernel/pelt/realkernel*_sequence.jsonl (every call of Linux 6.1.192 and
//! 6.12.117 on one CPU, state before and after) are written out as the lab probe's
//! `schedmath__pelt_update` lines (format: fixtures/lab/README.md) and replayed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use schedmath::profile::Profile;
use schedmath_host::replay::{kernel_profile, replay};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The committed lab captures' folders (`fixtures/lab/<kernel>/<workload>`), sorted.
fn lab_captures() -> Vec<PathBuf> {
    let mut caps: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/lab"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|k| k.is_dir() && !k.ends_with("workloads"))
        .flat_map(|k| std::fs::read_dir(k).unwrap().map(|e| e.unwrap().path()))
        .collect();
    caps.sort();
    caps
}

fn u(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// `b_*`/`a_*` fields of one state (6.12: one-word util_est; 6.1: enqueued/ewma).
fn state(p: &str, s: &Value, one_word: bool) -> String {
    let mut t = format!(
        " {p}_lut={} {p}_load_sum={} {p}_runnable_sum={} {p}_util_sum={} {p}_period_contrib={} {p}_load_avg={} {p}_runnable_avg={} {p}_util_avg={}",
        u(s, "last_update_time"),
        u(s, "load_sum"),
        u(s, "runnable_sum"),
        u(s, "util_sum"),
        u(s, "period_contrib"),
        u(s, "load_avg"),
        u(s, "runnable_avg"),
        u(s, "util_avg")
    );
    if one_word {
        t += &format!(" {p}_ue={}", u(s, "util_est"));
    } else {
        t += &format!(" {p}_ue_enq={} {p}_ue_ewma=0", u(s, "util_est"));
    }
    t
}

/// One fixture case as trace text; returns (text, ops).
fn case_trace(case: &Value, one_word: bool) -> (String, usize) {
    let init = &case["in"]["init"];
    let ops = case["in"]["ops"].as_array().unwrap();
    let after = case["out"]["after"].as_array().unwrap();
    let mut text = String::from("cpus=2\n");
    let mut before = init.clone();
    for (i, (op, a)) in ops.iter().zip(after).enumerate() {
        let name = op["op"].as_str().unwrap();
        let lw = u(op, "load_weight");
        let (f, kind, pid, comm, load, runnable, running, delayed) = match name {
            "__update_load_avg_se" => {
                let on_rq = u(op, "on_rq");
                let delayed = u(op, "sched_delayed");
                let runnable = if delayed != 0 { 0 } else { on_rq };
                (
                    "se",
                    "task",
                    153,
                    "rt-app",
                    on_rq,
                    runnable,
                    u(op, "is_curr"),
                    delayed as i64,
                )
            }
            "__update_load_avg_blocked_se" => ("blocked_se", "task", 153, "rt-app", 0, 0, 0, 0),
            _ => (
                "cfs",
                "cfs_rq",
                -1,
                "(null)",
                lw >> 10,
                u(op, "h_nr_runnable"),
                u(op, "has_curr"),
                -1,
            ),
        };
        let weight = if f == "cfs" { 1 } else { (lw >> 10).max(2) };
        text += &format!(
            "          rt-app-153   [001]  {}.{:06}: schedmath__pelt_update: fn={f} kind={kind} cpu=1 pid={pid} comm={comm} path=/ now={} lw={lw} weight={weight} load={load} runnable={runnable} running={running} on_rq={load} delayed={delayed} nr_queued=-1 nr_runnable=-1 ret={}{}{}\n",
            10 + i / 1_000_000,
            i % 1_000_000,
            u(op, "now"),
            u(a, "ret"),
            state("b", &before, one_word),
            state("a", a, one_word),
        );
        before = a.clone();
    }
    (text, ops.len())
}

/// Replays every case of one real-kernel suite; returns (ops, updates, exact).
fn replay_suite(file: &str, kernel: &str) -> (usize, u64, u64) {
    let text = std::fs::read_to_string(root().join("fixtures/kernel/pelt").join(file)).unwrap();
    let one_word = kernel.starts_with("6.12");
    let profile = kernel_profile(Some(kernel));
    let (mut ops, mut updates, mut exact) = (0, 0, 0);
    for line in text.lines().skip(1) {
        let case: Value = serde_json::from_str(line).unwrap();
        let (trace, n) = case_trace(&case, one_word);
        let r = replay(
            trace.as_bytes(),
            "case",
            Some(kernel.into()),
            profile,
            false,
            false,
        )
        .unwrap();
        assert_eq!(r.mode, "probe");
        assert!(r.skipped.is_empty(), "{}: {:?}", case["id"], r.skipped);
        let (u, x) = r.totals();
        ops += n;
        updates += u;
        exact += x;
    }
    (ops, updates, exact)
}

#[test]
fn linux_6_1_pelt_calls_replay_exactly() {
    assert_eq!(
        replay_suite("realkernel_se_sequence.jsonl", "6.1.0-57"),
        (2195, 2195, 2195)
    );
    assert_eq!(
        replay_suite("realkernel_cfs_rq_sequence.jsonl", "6.1.0-57"),
        (2727, 2727, 2727)
    );
}

#[test]
fn linux_6_12_pelt_calls_replay_exactly_with_delayed_dequeue_and_util_est() {
    assert_eq!(
        replay_suite("realkernel612_se_sequence.jsonl", "6.12.117"),
        (4838, 4838, 4838)
    );
    assert_eq!(
        replay_suite("realkernel612_cfs_rq_sequence.jsonl", "6.12.117"),
        (5561, 5561, 5561)
    );
}

#[test]
fn what_if_halflife_8_differs_from_the_kernel() {
    let text = std::fs::read_to_string(
        root().join("fixtures/kernel/pelt/realkernel612_se_sequence.jsonl"),
    )
    .unwrap();
    let case: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let (trace, n) = case_trace(&case, true);
    let hl8 = Profile::from_name("pelt-hl8").unwrap();
    let r = replay(
        trace.as_bytes(),
        "case",
        Some("6.12.117".into()),
        hl8,
        true,
        false,
    )
    .unwrap();
    assert_eq!(r.totals().0, n as u64);
    assert!(r.totals().1 < n as u64);
    assert!(r.entities[0].err[0].max > 0);
}

fn schedmath(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn first_case_trace() -> String {
    let text = std::fs::read_to_string(
        root().join("fixtures/kernel/pelt/realkernel612_cfs_rq_sequence.jsonl"),
    )
    .unwrap();
    let case: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    case_trace(&case, true).0
}

#[test]
fn json_has_the_issue_schema() {
    let dir = tempfile::tempdir().unwrap();
    let kdir = dir.path().join("6.12.117/one");
    std::fs::create_dir_all(&kdir).unwrap();
    let path = kdir.join("report.txt");
    std::fs::write(&path, first_case_trace()).unwrap();
    let (code, out, err) = schedmath(&["replay", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["entities", "kernel", "totals", "trace"]);
    assert_eq!(v["kernel"], "6.12.117");
    assert_eq!(v["trace"], path.to_str().unwrap());
    let e = &v["entities"][0];
    assert_eq!(e["entity"], "cpu1 /");
    assert_eq!(e["updates"], e["exact"]);
    assert_eq!(v["totals"]["updates"], e["updates"]);
    for k in ["max_abs_err", "mean_abs_err"] {
        let m = e[k].as_object().unwrap();
        let names: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(names, ["load", "runnable", "util", "util_est"]);
    }
    assert_eq!(e["max_abs_err"]["util"], 0);
    assert_eq!(e["max_abs_err"]["util_est"], Value::Null); // not compared for a cfs_rq
}

#[test]
fn gzip_input_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.txt.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(first_case_trace().as_bytes()).unwrap();
    gz.finish().unwrap();
    let (code, out, err) = schedmath(&["replay", path.to_str().unwrap(), "--kernel", "6.12.117"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("cpu1 /"), "{out}");
    assert!(out.contains("100.00%"), "{out}");
}

/// `replay` of a text trace named `r.txt`, no kernel named, mainline, no what-if.
fn replay_text(text: &str, force_infer: bool) -> anyhow::Result<schedmath_host::replay::Report> {
    replay(
        text.as_bytes(),
        "r.txt",
        None,
        Profile::MAINLINE,
        false,
        force_infer,
    )
}

#[test]
fn bad_lines_are_counted_with_their_location() {
    let mut t = first_case_trace();
    let mut lines: Vec<&str> = t.lines().collect();
    lines.insert(
        2,
        "    kworker/0:1-12    [000]    10.000001: workqueue_execute_start: work struct 0x1",
    );
    lines.insert(3, "this is not an event line");
    let cut = lines.last().unwrap().len() / 2;
    let last = lines.pop().unwrap();
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(&last[..cut]);
    t = text;
    let r = replay_text(&t, false).unwrap();
    let s: Vec<String> = r
        .skipped
        .iter()
        .map(|(k, n, f)| format!("{} {n} {}", k.name(), f.as_ref().unwrap().0))
        .collect();
    assert_eq!(
        s,
        [
            "truncated line 1 8",
            "malformed line 1 4",
            "unknown event 1 3"
        ]
    );
    assert!(r.render().contains("first at r.txt:8"));
}

#[test]
fn backwards_time_is_an_error_naming_the_line() {
    let text = "a-1 [000] 2.000000: sched_switch: a:1 [120] S ==> b:2 [120]\n\
                b-2 [000] 1.000000: sched_switch: b:2 [120] S ==> a:1 [120]\n";
    let e = replay_text(text, false).unwrap_err().to_string();
    assert_eq!(
        e,
        "r.txt:2: timestamp 1.000000000 goes backwards (previous event at 2.000000000)"
    );
}

#[test]
fn a_switch_from_a_pid_that_never_switched_in_is_counted() {
    let text = "a-1 [000] 1.000000: sched_switch: a:1 [120] S ==> b:2 [120]\n\
                c-3 [000] 2.000000: sched_switch: c:3 [120] S ==> a:1 [120]\n";
    let r = replay_text(text, false).unwrap();
    assert_eq!(r.skipped.len(), 1);
    let (k, n, f) = &r.skipped[0];
    assert_eq!((k.name(), *n), ("unplaced event", 1));
    assert_eq!(
        f.as_ref().unwrap(),
        &(
            2,
            "sched_switch from pid 3 on cpu0, but pid 2 was switched in there".to_string()
        )
    );
}

/// Every committed lab capture with probe records: 100 % of the kernel's PELT and
/// util_est updates reproduced exactly.
#[test]
fn every_lab_capture_with_probe_records_replays_exactly() {
    let mut seen = 0;
    for cap in lab_captures() {
        let report = ["report.txt", "report.txt.gz"]
            .iter()
            .map(|f| cap.join(f))
            .find(|p| p.exists())
            .unwrap();
        let args = schedmath_host::replay::ReplayArgs {
            trace: report.clone(),
            profile: None,
            kernel: None,
            infer: false,
            json: false,
        };
        let r = schedmath_host::replay::run(&args).unwrap();
        let (updates, exact) = r.totals();
        assert_eq!(r.mode, "probe", "{}", report.display());
        assert!(updates > 1000, "{}", report.display());
        assert_eq!(exact, updates, "{}\n{}", report.display(), r.render());
        assert!(
            r.skipped.is_empty(),
            "{}: {:?}",
            report.display(),
            r.skipped
        );
        seen += 1;
    }
    assert!(seen >= 1);
}

/// The re-captured lab reports are `trace-cmd report -t` (trace-cmd 3.1.6: ns stamps, no
/// flags column) with `sched_stat_runtime`, whose fields differ by kernel (v6.8 dropped
/// `vruntime`): the reader takes every line, the events parse.
#[test]
fn lab_reports_with_ns_stamps_and_sched_stat_runtime_parse() {
    use schedmath_host::trace::event::Event;
    use schedmath_host::trace::report::ReportReader;
    for (kernel, vruntime) in [("6.1.0-57-amd64", true), ("6.12.95+deb12-amd64", false)] {
        let path = root().join(format!("fixtures/lab/{kernel}/wakeup-storm/report.txt.gz"));
        let input = schedmath_host::replay::open(&path).unwrap();
        let mut r = ReportReader::new(input, path.display().to_string());
        let mut runtimes = 0u64;
        while let Some(rec) = r.next_record().unwrap() {
            match Event::parse(&rec) {
                Ok(Event::StatRuntime {
                    runtime,
                    vruntime: v,
                    ..
                }) => {
                    assert!(runtime > 0, "{rec}");
                    assert_eq!(v.is_some(), vruntime, "{rec}");
                    runtimes += 1;
                }
                Ok(Event::Other) | Err(_) => panic!("{}:{}: {rec}", path.display(), rec.line),
                Ok(_) => {}
            }
        }
        assert_eq!(r.timestamp_digits(), Some(9), "{kernel}");
        assert_eq!(
            r.skipped().map(|(_, s)| s.count).sum::<u64>(),
            0,
            "{kernel}"
        );
        assert!(runtimes > 4000, "{kernel}: {runtimes}");
    }
}

/// Values no kernel can print (an average whose sum overflows the kernel's field, a clock
/// past i64::MAX ns) are counted skips naming the field, not an overflow in the replay
/// (the trace fuzz target's first crash: `load=1066…` × the PELT divider).
#[test]
fn averages_and_clocks_beyond_the_kernels_range_are_skipped() {
    let text = "a-1 [000] 1.000000: lisa__sched_pelt_se: cpu=0 path=(null) comm=a pid=1 \
                load=10666666666666666666 util=363 update_time=19601871872 runnable=816\n\
                a-1 [000] 1.000001: lisa__sched_pelt_cfs: cpu=0 path=/ load=1 util=92000 \
                update_time=19601871872 runnable=1\n\
                a-1 [000] 1.000002: lisa__sched_pelt_cfs: cpu=0 path=/ load=1 util=1 \
                update_time=9223372036854775808 runnable=1\n";
    for force_infer in [false, true] {
        let r = replay_text(text, force_infer).unwrap();
        let s: Vec<String> = r
            .skipped
            .iter()
            .map(|(k, n, f)| format!("{} {n} {:?}", k.name(), f.as_ref().unwrap()))
            .collect();
        assert_eq!(
            s,
            [
                "bad fields 3 (1, \"lisa__sched_pelt_se: field `load`: 10666666666666666666 \
                 is beyond the kernel's range (at most 386383982106102)\")"
            ],
            "force_infer {force_infer}"
        );
    }
}

/// One README row of the inferred-replay table: rt-app threads, then root cfs_rqs
/// (updates, exact %, update-weighted mean / max |util error|).
fn infer_row(rel: &str, r: &schedmath_host::replay::Report) -> String {
    let agg = |pick: &dyn Fn(&str) -> bool| {
        let es: Vec<_> = r.entities.iter().filter(|e| pick(&e.entity)).collect();
        let n: u64 = es.iter().map(|e| e.updates).sum();
        let x: u64 = es.iter().map(|e| e.exact).sum();
        let sum: u128 = es.iter().map(|e| e.err[0].sum).sum();
        let max = es.iter().map(|e| e.err[0].max).max().unwrap_or(0);
        let d = n.max(1) as f64;
        format!(
            "{n} | {:.1} % | {:.2} / {max}",
            100.0 * x as f64 / d,
            sum as f64 / d
        )
    };
    format!(
        "| {rel} | {} | {} |",
        agg(&|e| e.starts_with("pid ") && e.ends_with(" rt-app")),
        agg(&|e| e.starts_with("cpu") && e.ends_with(" /"))
    )
}

/// README.md's inferred-replay table (`--infer`, probe records only as the answer key) is
/// what the replay measures on every committed capture.
#[test]
fn readme_inferred_replay_table_matches_the_replay() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let head = "| capture | rt-app threads: updates |";
    let table = &readme[readme.find(head).expect("inferred-replay table")..];
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let lab = root().join("fixtures/lab");
    let mut want = Vec::new();
    for cap in lab_captures() {
        let args = schedmath_host::replay::ReplayArgs {
            trace: cap.join("report.txt.gz"),
            profile: None,
            kernel: None,
            infer: true,
            json: false,
        };
        let r = schedmath_host::replay::run(&args).unwrap();
        assert_eq!(r.mode, "inferred");
        let rel = cap
            .strip_prefix(&lab)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        want.push(infer_row(&rel, &r));
    }
    assert_eq!(
        rows,
        want,
        "README inferred-replay table is stale:\n{}",
        want.join("\n")
    );
}

/// The inferred replay's largest util error on cpu0's root cfs_rq.
fn cpu0_root_max(trace: PathBuf) -> u64 {
    let args = schedmath_host::replay::ReplayArgs {
        trace,
        profile: None,
        kernel: None,
        infer: true,
        json: false,
    };
    let r = schedmath_host::replay::run(&args).unwrap();
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    let e = r.entities.iter().find(|e| e.entity == "cpu0 /").unwrap();
    e.err[0].max
}

/// cpu0's root max of capture `cap` (`<kernel>/<workload>` under fixtures/lab) as
/// committed and with the lines `drop` picks removed (in a copy beside its meta.json).
fn cpu0_root_max_with_and_without(cap: &str, drop: &dyn Fn(&str) -> bool) -> (u64, u64) {
    let cap = root().join("fixtures/lab").join(cap);
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join(cap.parent().unwrap().file_name().unwrap());
    std::fs::create_dir(&k).unwrap();
    std::fs::copy(cap.join("meta.json"), k.join("meta.json")).unwrap();
    let text =
        std::io::read_to_string(schedmath_host::replay::open(&cap.join("report.txt.gz")).unwrap())
            .unwrap();
    let without: String = text
        .lines()
        .filter(|l| !drop(l))
        .flat_map(|l| [l, "\n"])
        .collect();
    assert!(without.len() < text.len(), "no line dropped");
    std::fs::write(k.join("report.txt"), without).unwrap();
    (
        cpu0_root_max(cap.join("report.txt.gz")),
        cpu0_root_max(k.join("report.txt")),
    )
}

/// The SCHED softirq's blocked-average update (`softirq_entry`, `vec=7`) on a busy CPU:
/// on 6.1 `cgroup-weight`, cpu0's tick at 15.5218 s raises it and the kernel folds the
/// exited `fg`'s and `bg`'s removed load into the root (util 977 → 7). The same capture
/// without the softirq's lines keeps the idle-tick rule, which never updates a busy CPU.
#[test]
fn the_sched_softirq_updates_a_busy_cpus_blocked_averages() {
    let (with, without) = cpu0_root_max_with_and_without("6.1.0-57-amd64/cgroup-weight", &|l| {
        l.contains(" softirq_e")
    });
    assert!(without >= 900, "without the softirq: {without}");
    assert!(with < 700, "with it: {with}");
}

/// A fork enqueued on its parent's CPU reads the clock before the parent's
/// `sched_stat_runtime` (wake_up_new_task(): activate_task()'s update_curr()), not at
/// `sched_wakeup_new`, written after the attach: on 6.12 `periodic-5pct-16ms-2` that
/// tracepoint of `sh` 168 comes 110 µs after the clock read (16.9316 s). Without the
/// parent's `sched_stat_runtime` line the replay falls back to the stamp and cpu0's root
/// carries the late enqueue.
#[test]
fn a_fork_reads_its_clock_at_the_parents_update_curr() {
    let fork_runtime = "16.931614197: sched_stat_runtime:   comm=sh pid=167 runtime=265777";
    let (with, without) =
        cpu0_root_max_with_and_without("6.12.95+deb12-amd64/periodic-5pct-16ms-2", &|l| {
            l.contains(fork_runtime)
        });
    assert_eq!(
        (with, without),
        (1, 6),
        "with / without the fork's update_curr"
    );
}

/// A fork onto another CPU (6.12 `periodic-50pct-16ms-2`: `sh` 172 on cpu0 forks `sh` 173
/// onto idle cpu1 at 16.9423 s): the forking CPU reads cpu1's clock before activate_task()
/// and writes `sched_wakeup_new` after it, 18 µs later there (`ClockPoint::ForkRemote`,
/// calibrated per capture), and cpu1's switch to the child runs on that skipped read.
/// All 8 of the child's updates are exact (2 of 8 when the read was the event's stamp).
#[test]
fn a_fork_onto_another_cpu_reads_its_clock_before_sched_wakeup_new() {
    let args = schedmath_host::replay::ReplayArgs {
        trace: root().join("fixtures/lab/6.12.95+deb12-amd64/periodic-50pct-16ms-2/report.txt.gz"),
        profile: None,
        kernel: None,
        infer: true,
        json: false,
    };
    let r = schedmath_host::replay::run(&args).unwrap();
    let child = r
        .entities
        .iter()
        .find(|e| e.entity == "pid 173 sh")
        .unwrap();
    assert_eq!((child.exact, child.updates), (8, 8));
}

/// A board's trace has neither the lab's probe records nor LISA's `sched_pelt_*` events:
/// the replay then prints what it computes. On 6.1 `periodic-25pct-16ms` with the answer
/// key's lines removed, rt-app's thread (forked in the trace, so started where the kernel
/// starts it) ends at util 263 against the kernel's last recorded 261, and its mean over
/// the replay's updates is within 2 of the mean of the kernel's records; `--profile
/// pelt-hl8` prints the traced kernel's profile beside it.
#[test]
fn a_trace_without_kernel_values_reports_the_replays_own_signals() {
    let cap = root().join("fixtures/lab/6.1.0-57-amd64/periodic-25pct-16ms/report.txt.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&cap).unwrap()),
        &mut text,
    )
    .unwrap();
    let (mut kernel, mut board) = (Vec::new(), String::new());
    for l in text.lines() {
        if l.contains(": schedmath__pelt_update:") || l.contains(": lisa__") {
            if l.contains("fn=se kind=task") && l.contains(" pid=126 ") {
                let v = l.split(" a_util_avg=").nth(1).unwrap();
                kernel.push(v.split(' ').next().unwrap().parse::<u64>().unwrap());
            }
        } else {
            board += l;
            board.push('\n');
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("board.txt");
    std::fs::write(&trace, board).unwrap();
    let run = |profile: Option<&str>| {
        schedmath_host::replay::run(&schedmath_host::replay::ReplayArgs {
            trace: trace.clone(),
            profile: profile.map(str::to_string),
            kernel: Some("6.1.0-57-amd64".into()),
            infer: false,
            json: false,
        })
        .unwrap()
    };
    let r = run(None);
    assert_eq!((r.mode, r.totals()), ("inferred", (0, 0)));
    let json = r.to_json();
    let computed = json["computed"].as_array().unwrap();
    let p = computed
        .iter()
        .find(|c| c["entity"] == "pid 126 rt-app")
        .unwrap();
    assert_eq!(p["from_zero"], false);
    assert_eq!((u(p, "updates"), u(&p["end"], "util")), (758, 263));
    let (k_mean, k_end) = (
        kernel.iter().sum::<u64>() as f64 / kernel.len() as f64,
        *kernel.last().unwrap(),
    );
    assert_eq!(k_end, 261);
    assert!(u(&p["end"], "util").abs_diff(k_end) <= 2, "{p}");
    assert!(
        (p["util_mean"].as_f64().unwrap() - k_mean).abs() < 2.0,
        "{p}"
    );
    // A task that existed before the trace starts from zero, and says so.
    let cpu1 = computed.iter().find(|c| c["entity"] == "cpu1 /").unwrap();
    assert_eq!(cpu1["from_zero"], true);
    assert!(r.render().contains("cpu1 /*"));

    let w = run(Some("pelt-hl8"));
    assert!(w.what_if);
    let wj = w.to_json();
    let wp = wj["computed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["entity"] == "pid 126 rt-app")
        .unwrap();
    // The traced kernel's profile beside the what-if: the same numbers as the plain run.
    assert_eq!(wp["kernel"]["end"], p["end"]);
    assert_eq!(wp["kernel"]["util_mean"], p["util_mean"]);
    assert_ne!(wp["util_mean"], p["util_mean"]);
    assert!(w.render().contains("traced kernel's profile"));
}

/// README (the misses of the inferred replay): the SCHED softirqs of an idle CPU that come
/// after its own tick and after another CPU's busy tick — its own periodic balance, or
/// that CPU's nohz kick. Over the 40 captures 183 walk the CPU's blocked averages (its root
/// record) and 167 do not; 181 of the walks and none of the others carry the probe's
/// `lisa__sched_cpu_capacity` (update_cpu_capacity() of the balance), which the inferred
/// replay may not read (probe events are only the answer key).
#[test]
fn idle_softirqs_after_another_cpus_tick_walk_when_the_balance_runs() {
    use schedmath_host::trace::event::{
        is_answer_key, is_tick, Event, PeltCallKind, SCHED_SOFTIRQ,
    };
    use schedmath_host::trace::report::ReportReader;
    use std::collections::HashMap;
    // (walked, capacity) -> count
    let mut counts: HashMap<(bool, bool), u32> = HashMap::new();
    let caps: Vec<PathBuf> = lab_captures()
        .iter()
        .map(|c| c.join("report.txt.gz"))
        .collect();
    assert_eq!(caps.len(), 40);
    for cap in caps {
        let input = schedmath_host::replay::open(&cap).unwrap();
        let mut rd = ReportReader::new(input, cap.display().to_string());
        // Per CPU: its last event's stamp if that was a timer's exit; its last tick's exit
        // while a task ran; the tick under way (busy); the idle softirq under way
        // (after another CPU's busy tick, walked, capacity).
        let mut after_exit: HashMap<u32, Option<u64>> = HashMap::new();
        let mut busy_tick_exit: HashMap<u32, u64> = HashMap::new();
        let mut in_tick: HashMap<u32, bool> = HashMap::new();
        let mut open: HashMap<u32, (bool, bool, bool)> = HashMap::new();
        while let Some(rec) = rd.next_record().unwrap() {
            let cpu = rec.cpu;
            let ev = Event::parse(&rec);
            if matches!(&ev, Ok(e) if is_answer_key(e) || matches!(e, Event::PeltCall(_))) {
                match (ev, open.get_mut(&cpu)) {
                    (Ok(Event::PeltCall(c)), Some(o))
                        if c.kind == PeltCallKind::CfsRq && c.cpu == cpu && c.path == "/" =>
                    {
                        o.1 = true
                    }
                    (Ok(Event::CpuCapacity { .. }), Some(o)) => o.2 = true,
                    _ => {}
                }
                continue;
            }
            let mut exit = None;
            match ev {
                Ok(Event::HrtimerExpire { function, .. }) if is_tick(function) => {
                    in_tick.insert(cpu, rec.pid != 0);
                }
                Ok(Event::HrtimerExit) => {
                    if in_tick.remove(&cpu) == Some(true) {
                        busy_tick_exit.insert(cpu, rec.ts_ns);
                    }
                    exit = Some(rec.ts_ns);
                }
                Ok(Event::Softirq {
                    vec: SCHED_SOFTIRQ,
                    exit: false,
                }) if rec.pid == 0 => {
                    if let Some(Some(own)) = after_exit.get(&cpu) {
                        let other = busy_tick_exit.iter().any(|(&c, &t)| c != cpu && t > *own);
                        open.insert(cpu, (other, false, false));
                    }
                }
                Ok(Event::Softirq {
                    vec: SCHED_SOFTIRQ,
                    exit: true,
                }) => {
                    if let Some((true, walked, cap)) = open.remove(&cpu) {
                        *counts.entry((walked, cap)).or_default() += 1;
                    }
                }
                _ => {}
            }
            after_exit.insert(cpu, exit);
        }
    }
    let n = |w, c| counts.get(&(w, c)).copied().unwrap_or(0);
    assert_eq!((n(true, true), n(true, false)), (181, 2), "{counts:?}");
    assert_eq!((n(false, true), n(false, false)), (0, 167), "{counts:?}");
}
