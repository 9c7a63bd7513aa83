// SPDX-License-Identifier: GPL-2.0-only
//! Every committed kernel-lab capture (fixtures/lab/<kernel>/<workload>/) is complete and
//! its report is `trace-cmd report` text carrying the probe's events with every field
//! fixtures/lab/README.md documents.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

fn lab() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/lab")
}

/// Capture folders: fixtures/lab/<kernel>/<workload>/ (every dir but workloads/).
fn captures() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for k in std::fs::read_dir(lab()).unwrap().flatten() {
        let p = k.path();
        if !p.is_dir() || k.file_name() == "workloads" {
            continue;
        }
        for w in std::fs::read_dir(&p).unwrap().flatten() {
            if w.path().is_dir() {
                v.push(w.path());
            }
        }
    }
    v.sort();
    v
}

fn report_text(dir: &Path) -> String {
    let gz = dir.join("report.txt.gz");
    if gz.is_file() {
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
            .read_to_string(&mut s)
            .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
        s
    } else {
        std::fs::read_to_string(dir.join("report.txt"))
            .unwrap_or_else(|e| panic!("{}: no report.txt(.gz): {e}", dir.display()))
    }
}

/// One `trace-cmd report` event line: (comm, pid, cpu, timestamp ns, event, fields); the
/// stamp in µs (trace-cmd's default) or ns (`report -t`, the captures since
/// `sched_stat_runtime`).
fn parse_line(l: &str) -> Option<(&str, u32, u32, u64, &str, &str)> {
    let (head, rest) = l.split_once(']')?;
    let (task, cpu) = head.rsplit_once('[')?;
    let task = task.trim();
    let (comm, pid) = task.rsplit_once('-')?;
    let cpu: u32 = cpu.parse().ok()?;
    let (ts, rest) = rest.trim_start().split_once(": ")?;
    let (s, frac) = ts.split_once('.')?;
    let scale = match frac.len() {
        6 => 1_000,
        9 => 1,
        _ => return None,
    };
    let ts = s.parse::<u64>().ok()? * 1_000_000_000 + frac.parse::<u64>().ok()? * scale;
    let (ev, fields) = rest.split_once(':')?;
    Some((comm, pid.parse().ok()?, cpu, ts, ev.trim(), fields.trim()))
}

fn keys(fields: &str) -> Vec<&str> {
    fields
        .split_whitespace()
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
        .collect()
}

const PELT_KEYS: &[&str] = &[
    "fn",
    "kind",
    "cpu",
    "pid",
    "comm",
    "path",
    "now",
    "lw",
    "weight",
    "load",
    "runnable",
    "running",
    "on_rq",
    "delayed",
    "nr_queued",
    "nr_runnable",
    "ret",
];
const AVG_KEYS: &[&str] = &[
    "lut",
    "load_sum",
    "runnable_sum",
    "util_sum",
    "period_contrib",
    "load_avg",
    "runnable_avg",
    "util_avg",
];

#[test]
fn every_capture_is_complete_and_parses() {
    let caps = captures();
    assert!(!caps.is_empty(), "no captures under {}", lab().display());
    let readme = std::fs::read_to_string(lab().join("README.md")).unwrap();
    for dir in caps {
        // `<workload>/`, or `<workload>-N/` for a later capture of the same workload
        let folder = dir.file_name().unwrap().to_str().unwrap().to_string();
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let workload = meta["workload"].as_str().unwrap_or_default().to_string();
        let take = folder.strip_prefix(workload.as_str()).unwrap_or("?");
        assert!(
            take.is_empty()
                || take
                    .strip_prefix('-')
                    .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n >= 2)),
            "{}: folder {folder} is not meta.json's workload `{workload}` (or `{workload}-N`)",
            dir.display()
        );
        let kernel = dir
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let here = dir.display();

        // rt-app file, README line, meta.json, probe stats
        let json = std::fs::read_to_string(dir.join(format!("{workload}.json")))
            .unwrap_or_else(|e| panic!("{here}: no {workload}.json: {e}"));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(
            v.get("tasks").is_some(),
            "{here}: rt-app file without tasks"
        );
        let source = lab().join(format!("workloads/{workload}.json"));
        assert_eq!(
            std::fs::read_to_string(&source).ok().as_deref(),
            Some(json.as_str()),
            "{here}: {workload}.json differs from {} (re-record the capture)",
            source.display()
        );
        assert!(
            readme.contains(&format!("| {kernel} | {folder} |")),
            "{here}: no `| {kernel} | {folder} |` line in fixtures/lab/README.md"
        );
        assert_eq!(meta["kernel"], kernel.as_str(), "{here}: meta.json kernel");
        let stats = std::fs::read_to_string(dir.join("probe-stats.txt")).unwrap();
        for f in ["se=", "blocked_se=", "cfs="] {
            let v = stats
                .split_whitespace()
                .find_map(|t| t.strip_prefix(f))
                .unwrap_or_else(|| panic!("{here}: probe-stats.txt has no {f}"));
            assert!(v.ends_with("/0"), "{here}: kretprobe misses: {f}{v}");
        }

        // the report: trace-cmd text, timestamps per CPU never going back
        let text = report_text(&dir);
        let mut lines = text.lines();
        let cpus = lines
            .next()
            .and_then(|l| l.strip_prefix("cpus="))
            .unwrap_or_else(|| panic!("{here}: report does not start with cpus=N"));
        assert_eq!(cpus, meta["cpus"].to_string(), "{here}: cpus");
        let one_word_ue = !kernel.starts_with("6.1.");
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        let mut last_ts: BTreeMap<u32, u64> = BTreeMap::new();
        for (n, l) in lines.enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let (_, _, cpu, ts, ev, fields) = parse_line(l).unwrap_or_else(|| {
                panic!("{here}: report line {}: not trace-cmd text: {l}", n + 2)
            });
            let prev = last_ts.insert(cpu, ts).unwrap_or(0);
            assert!(
                ts >= prev,
                "{here}: line {}: CPU {cpu} time goes back",
                n + 2
            );
            *counts.entry(ev).or_insert(0) += 1;
            if ev == "schedmath__pelt_update" {
                let k = keys(fields);
                let mut want: Vec<String> = PELT_KEYS.iter().map(|s| s.to_string()).collect();
                for p in ["b", "a"] {
                    want.extend(AVG_KEYS.iter().map(|s| format!("{p}_{s}")));
                    if one_word_ue {
                        want.push(format!("{p}_ue"));
                    } else {
                        want.push(format!("{p}_ue_enq"));
                        want.push(format!("{p}_ue_ewma"));
                    }
                }
                assert_eq!(
                    k,
                    want,
                    "{here}: line {}: schedmath__pelt_update fields",
                    n + 2
                );
            }
            if ev.starts_with("softirq_") {
                // recorded with trace-cmd's filter `vec==7` (SCHED_SOFTIRQ) only
                assert_eq!(
                    fields,
                    "vec=7 [action=SCHED]",
                    "{here}: line {}: {ev} outside the filter",
                    n + 2
                );
            }
        }
        for ev in [
            "schedmath__pelt_update",
            "lisa__sched_pelt_se",
            "lisa__sched_pelt_cfs",
            "lisa__sched_util_est_se",
            "lisa__sched_cpu_capacity",
            "sched_switch",
            "sched_wakeup",
            "hrtimer_expire_entry",
            "cpu_idle",
        ] {
            assert!(
                counts.get(ev).copied().unwrap_or(0) > 0,
                "{here}: no {ev} event"
            );
        }
        for ev in ["schedmath__pelt_update", "softirq_entry", "softirq_exit"] {
            assert_eq!(
                meta["events"][ev].as_u64(),
                counts.get(ev).copied(),
                "{here}: meta.json events: {ev}"
            );
        }
    }
}

#[test]
fn trace_cmd_lines_parse() {
    let l = "          <idle>-0     [001]    41.199899: sched_switch:         swapper/1:0 [120] R ==> p25:7 [120]";
    let (comm, pid, cpu, ts, ev, _) = parse_line(l).unwrap();
    assert_eq!(
        (comm, pid, cpu, ts, ev),
        ("<idle>", 0, 1, 41_199_899_000, "sched_switch")
    );
    let l = "       trace-cmd-121   [001]    12.582909707: sched_stat_runtime:   comm=trace-cmd pid=121 runtime=1929454 [ns] vruntime=2564569994 [ns]";
    assert_eq!(parse_line(l).unwrap().3, 12_582_909_707);
    assert!(parse_line("a-1 [000] 1.1234567: x: y").is_none());
    let l =
        "     kworker/u4:1-12    [000]     1.000001: schedmath__pelt_update: fn=se kind=task cpu=0";
    assert_eq!(parse_line(l).unwrap().0, "kworker/u4:1");
    assert_eq!(keys("fn=se kind=task cpu=0"), vec!["fn", "kind", "cpu"]);
}
