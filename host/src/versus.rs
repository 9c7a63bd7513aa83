// SPDX-License-Identifier: GPL-2.0-only
//! Simulator vs kernel: one lab capture (`fixtures/lab/<kernel>/<workload>/`) beside the
//! same rt-app file simulated on the platform file of the lab guest.
//!
//! Kernel side, from the capture's sched events (window: the first switch-in of a workload
//! task to the last switch-out, cut at rt-app's `duration` after that first switch-in:
//! rt-app lets each thread finish its current event after the duration, which the
//! simulator, stopping at the duration, does not run): per task, CPU time (sched_switch in → out),
//! util_avg (time-weighted mean and last value of its `lisa__sched_pelt_se` events),
//! wake-up latency (`sched_wakeup` → its next switch-in), migrations
//! (`sched_migrate_task`), context switches (switch-ins), run stretches (switch-in to
//! switch-out); per CPU, busy % (any task but the idle task on it, trace-cmd and kworkers
//! included). Simulator side: the same from `Metrics`, under the profile of the kernel's
//! fair class ([`profile_of`]) (util_avg mean: sampled at each tick, the value of the
//! last update).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::platform::Platform;
use crate::sim::{simulate_workload, Metrics, SimConfig};
use crate::trace::event::Event;
use crate::trace::report::ReportReader;
use crate::workload::Workload;
use schedmath::profile::Profile;

/// What the kernel did in one capture.
#[derive(Debug, Default, Clone)]
pub struct KernelRun {
    /// Per task comm: CPU time (s).
    pub cpu_s: BTreeMap<String, f64>,
    /// Per task comm: time-weighted mean util_avg and last util_avg.
    pub util: BTreeMap<String, (f64, u64)>,
    /// Per CPU: busy % of the window.
    pub busy_pct: BTreeMap<u32, f64>,
    /// Wake-up latency of the workload's tasks (µs): p50, p99; count.
    pub latency_us: (f64, f64, usize),
    /// Migrations of the workload's tasks.
    pub migrations: u64,
    /// Switch-ins of the workload's tasks.
    pub switches: u64,
    /// Run stretches of the workload's tasks (switch-in to switch-out, µs): p50, p99.
    pub stretch_us: (f64, f64),
    /// The window (s).
    pub window_s: f64,
}

/// A task name as a comm (TASK_COMM_LEN - 1 bytes).
fn comm_of(name: &str) -> String {
    name.chars().take(15).collect()
}

/// The simulator names instances `task-N`; rt-app 1.0 names a single instance's thread
/// after the task alone.
fn base_comm(name: &str) -> String {
    match name.rsplit_once('-') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => comm_of(base),
        _ => comm_of(name),
    }
}

/// The kernel-side value of a simulator task: by its full name, else its base name.
fn lookup<'a, T>(m: &'a BTreeMap<String, T>, task: &str) -> Option<&'a T> {
    m.get(&comm_of(task)).or_else(|| m.get(&base_comm(task)))
}

/// `p`-th percentile (nearest rank) of sorted samples.
fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

/// Reads the kernel side of a capture over at most `duration_ns` from the workload's first
/// switch-in; `names` are the workload's task names (a comm is a task of the workload when
/// it equals a name cut to 15 bytes, TASK_COMM_LEN - 1).
pub fn kernel_run(report: &Path, names: &[String], duration_ns: u64) -> anyhow::Result<KernelRun> {
    let input = crate::replay::open(report)?;
    let mut r = ReportReader::new(input, report.display().to_string());
    let comms: Vec<String> = names
        .iter()
        .flat_map(|n| [comm_of(n), base_comm(n)])
        .collect();
    let ours = |c: &str| comms.iter().any(|n| n == c);
    let mut k = KernelRun::default();
    let mut pid_comm: HashMap<i32, String> = HashMap::new();
    let mut curr: HashMap<u32, (i32, u64)> = HashMap::new(); // cpu -> (pid, since)
    let mut busy: BTreeMap<u32, u64> = BTreeMap::new();
    let mut busy_at_last: BTreeMap<u32, u64> = BTreeMap::new();
    let mut woken: HashMap<i32, u64> = HashMap::new();
    let mut lat: Vec<u64> = Vec::new();
    let mut stretches: Vec<u64> = Vec::new();
    let mut util: HashMap<String, (u64, u64, u128, u64)> = HashMap::new(); // last ts, last util, integral, first ts
    let (mut first, mut last) = (None::<u64>, 0u64);
    let mut cpu_ns: BTreeMap<String, u64> = BTreeMap::new();
    while let Some(rec) = r.next_record()? {
        let (ts, cpu) = (rec.ts_ns, rec.cpu);
        if let Some(f) = first.filter(|f| ts >= f.saturating_add(duration_ns)) {
            // The window's end: what runs there is switched out at it (its stretch, cut,
            // is not one, as in the simulator's metrics).
            let end = f.saturating_add(duration_ns);
            for (c, (pid, since)) in &curr {
                if *pid != 0 {
                    let ran = end.saturating_sub((*since).max(f));
                    *busy.entry(*c).or_default() += ran;
                    if let Some(comm) = pid_comm.get(pid).filter(|c| ours(c)) {
                        *cpu_ns.entry(comm.clone()).or_default() += ran;
                        last = end;
                    }
                }
            }
            if last == end {
                busy_at_last = busy.clone();
            }
            break;
        }
        let Ok(ev) = Event::parse(&rec) else { continue };
        match ev {
            Event::Switch(s) => {
                if let (Some((pid, since)), Some(f)) = (curr.get(&cpu).copied(), first) {
                    let since = since.max(f);
                    if pid != 0 {
                        *busy.entry(cpu).or_default() += ts.saturating_sub(since);
                        if let Some(c) = pid_comm.get(&pid).filter(|c| ours(c)) {
                            *cpu_ns.entry(c.clone()).or_default() += ts.saturating_sub(since);
                            if pid != s.next_pid {
                                stretches.push(ts.saturating_sub(since) / 1000);
                            }
                            last = ts;
                            // Busy time up to the window's end (running tasks included).
                            busy_at_last = busy.clone();
                            for (c2, (p2, s2)) in &curr {
                                if *p2 != 0 && *c2 != cpu {
                                    *busy_at_last.entry(*c2).or_default() +=
                                        ts.saturating_sub((*s2).max(f));
                                }
                            }
                        }
                    }
                }
                busy.entry(cpu).or_default();
                pid_comm.insert(s.next_pid, s.next_comm.to_string());
                pid_comm.insert(s.prev_pid, s.prev_comm.to_string());
                curr.insert(cpu, (s.next_pid, ts));
                if ours(s.next_comm) {
                    first.get_or_insert(ts);
                    k.switches += 1;
                    if let Some(w) = woken.remove(&s.next_pid) {
                        lat.push(ts.saturating_sub(w) / 1000);
                    }
                }
            }
            Event::Wakeup {
                comm,
                pid,
                waking: false,
                ..
            } if ours(comm) => {
                woken.insert(pid, ts);
            }
            Event::Migrate { comm, .. } if ours(comm) && first.is_some() => k.migrations += 1,
            Event::PeltSe { comm, util: u, .. } if ours(comm) => {
                let e = util.entry(comm.to_string()).or_insert((ts, u, 0, ts));
                e.2 += u128::from(e.1) * u128::from(ts - e.0);
                e.0 = ts;
                e.1 = u;
            }
            _ => {}
        }
    }
    let start = first.unwrap_or(0);
    let window = last.saturating_sub(start).max(1);
    k.window_s = window as f64 / 1e9;
    for (c, ns) in cpu_ns {
        k.cpu_s.insert(c, ns as f64 / 1e9);
    }
    for (c, (lts, lu, integral, fts)) in util {
        let span = lts.saturating_sub(fts);
        let mean = if span == 0 {
            lu as f64
        } else {
            integral as f64 / span as f64
        };
        k.util.insert(c, (mean, lu));
    }
    for cpu in busy.keys() {
        let ns = busy_at_last.get(cpu).copied().unwrap_or(0);
        k.busy_pct.insert(*cpu, 100.0 * ns as f64 / window as f64);
    }
    lat.sort_unstable();
    k.latency_us = (percentile(&lat, 50.0), percentile(&lat, 99.0), lat.len());
    stretches.sort_unstable();
    k.stretch_us = (percentile(&stretches, 50.0), percentile(&stretches, 99.0));
    Ok(k)
}

/// A capture folder's files.
pub struct Capture {
    /// `<workload>.json`.
    pub workload: PathBuf,
    /// `report.txt(.gz)`.
    pub report: PathBuf,
    /// The kernel (folder name).
    pub kernel: String,
    /// vCPUs (meta.json `cpus`).
    pub cpus: usize,
    /// rt-app duration (meta.json `duration_s`).
    pub duration_s: u64,
}

/// Reads a capture folder (fixtures/lab/README.md layout).
pub fn capture(dir: &Path) -> anyhow::Result<Capture> {
    let meta: serde_json::Value =
        serde_json::from_str(&crate::limits::read_text(&dir.join("meta.json"))?)
            .with_context(|| format!("{}", dir.join("meta.json").display()))?;
    let field = |k: &str| {
        meta.get(k)
            .and_then(serde_json::Value::as_u64)
            .with_context(|| format!("{}: field `{k}`", dir.join("meta.json").display()))
    };
    let name = meta
        .get("workload")
        .and_then(serde_json::Value::as_str)
        .context("meta.json: field `workload`")?;
    let report = ["report.txt", "report.txt.gz"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .with_context(|| format!("{}: no report.txt(.gz)", dir.display()))?;
    Ok(Capture {
        workload: dir.join(format!("{name}.json")),
        report,
        kernel: meta
            .get("kernel")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?")
            .to_string(),
        cpus: usize::try_from(field("cpus")?)?,
        duration_s: field("duration_s")?,
    })
}

/// The capture beside the simulator on `platform` (default
/// `fixtures/platforms/lab-qemu-<N>c.toml`): (kernel, simulator).
pub fn run(dir: &Path, platform: Option<&Path>) -> anyhow::Result<(Capture, KernelRun, Metrics)> {
    let cap = capture(dir)?;
    let pfile = match platform {
        Some(p) => p.to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/platforms")
            .join(format!("lab-qemu-{}c.toml", cap.cpus)),
    };
    let plat = Platform::load(&pfile)?;
    let w = Workload::load(&cap.workload)?;
    w.validate(plat.nr_cpus())?;
    let cfg = SimConfig {
        duration_ns: cap.duration_s * 1_000_000_000,
        hz: 250,
        seed: 0,
    };
    let m = simulate_workload(&plat, &w, &profile_of(&cap.kernel), &cfg)?;
    let names: Vec<String> = m.task_cpu_residency_s.keys().cloned().collect();
    let k = kernel_run(&cap.report, &names, cfg.duration_ns)?;
    Ok((cap, k, m))
}

/// The profile whose fair class the captured kernel runs: the 6.1 CFS (`fair-cfs`)
/// before 6.6, EEVDF with delayed dequeue (`mainline`) from 6.12 on (6.6-6.11, EEVDF
/// without delayed dequeue, have no profile of their own: `mainline`).
pub fn profile_of(kernel: &str) -> Profile {
    let mut v = kernel
        .split(|ch: char| !ch.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
    if (major, minor) < (6, 6) {
        Profile::from_name("fair-cfs").unwrap_or(Profile::MAINLINE)
    } else {
        Profile::MAINLINE
    }
}

/// Per simulated task: its share (%) of the workload's CPU time in the kernel (None when
/// the kernel has no such comm) and in the simulator. Instances of one rt-app task share a
/// comm: the kernel side is their sum, shared out evenly.
pub fn shares(k: &KernelRun, m: &Metrics) -> Vec<(String, Option<f64>, f64)> {
    let key = |t: &str| {
        if k.cpu_s.contains_key(&comm_of(t)) {
            comm_of(t)
        } else {
            base_comm(t)
        }
    };
    let mut sharing: BTreeMap<String, usize> = BTreeMap::new();
    for t in m.task_cpu_residency_s.keys() {
        *sharing.entry(key(t)).or_default() += 1;
    }
    let k_total: f64 = sharing.keys().filter_map(|c| k.cpu_s.get(c)).sum();
    let sim_total: f64 = m.task_cpu_residency_s.values().flatten().sum();
    let pct = |v: f64, total: f64| 100.0 * v / total.max(f64::MIN_POSITIVE);
    m.task_cpu_residency_s
        .iter()
        .map(|(task, per_cpu)| {
            let c = key(task);
            let n = sharing.get(&c).copied().unwrap_or(1) as f64;
            let kernel = k.cpu_s.get(&c).map(|v| pct(v / n, k_total));
            (task.clone(), kernel, pct(per_cpu.iter().sum(), sim_total))
        })
        .collect()
}

/// The side-by-side table.
pub fn render(cap: &Capture, k: &KernelRun, m: &Metrics) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:34} {:>16} {:>16}",
        "metric",
        format!("kernel {}", cap.kernel.split('+').next().unwrap_or("")),
        format!("sim {}", m.profile)
    );
    let row = |s: &mut String, name: &str, a: String, b: String| {
        let _ = writeln!(s, "{name:34} {a:>16} {b:>16}");
    };
    let shares: BTreeMap<String, (Option<f64>, f64)> = shares(k, m)
        .into_iter()
        .map(|(t, a, b)| (t, (a, b)))
        .collect();
    for (task, per_cpu) in &m.task_cpu_residency_s {
        let sim_cpu: f64 = per_cpu.iter().sum();
        let (k_share, sim_share) = shares.get(task).copied().unwrap_or((None, 0.0));
        row(
            &mut s,
            &format!("{task} CPU share %"),
            k_share.map_or("-".into(), |v| format!("{v:.1}")),
            format!("{sim_share:.1}"),
        );
        row(
            &mut s,
            &format!("{task} CPU time (s)"),
            lookup(&k.cpu_s, task).map_or("-".into(), |v| format!("{v:.3}")),
            format!("{sim_cpu:.3}"),
        );
        row(
            &mut s,
            &format!("{task} util_avg mean / end"),
            lookup(&k.util, task).map_or("-".into(), |(mean, end)| format!("{mean:.0} / {end}")),
            format!(
                "{} / {}",
                m.task_util_avg_mean
                    .get(task)
                    .map_or("-".into(), |v| format!("{v:.0}")),
                m.task_util_avg_end
                    .get(task)
                    .map_or("-".into(), |v| v.to_string())
            ),
        );
    }
    for (cpu, idle) in &m.idle_residency_s {
        let idle: f64 = idle.iter().sum();
        let sim_busy = (100.0 * (1.0 - idle / m.duration_s.max(f64::MIN_POSITIVE))).max(0.0);
        row(
            &mut s,
            &format!("cpu{cpu} busy %"),
            k.busy_pct
                .get(&(*cpu as u32))
                .map_or("-".into(), |v| format!("{v:.1}")),
            format!("{sim_busy:.1}"),
        );
    }
    row(
        &mut s,
        "wake-up latency p50 / p99 (us)",
        format!("{:.0} / {:.0}", k.latency_us.0, k.latency_us.1),
        format!(
            "{:.0} / {:.0}",
            m.wakeup_latency_us.p50, m.wakeup_latency_us.p99
        ),
    );
    row(
        &mut s,
        "wake-ups",
        k.latency_us.2.to_string(),
        m.wakeups.to_string(),
    );
    row(
        &mut s,
        "migrations",
        k.migrations.to_string(),
        m.migrations.values().sum::<u64>().to_string(),
    );
    row(
        &mut s,
        "context switches (switch-ins)",
        k.switches.to_string(),
        m.context_switches.values().sum::<u64>().to_string(),
    );
    row(
        &mut s,
        "run stretch p50 / p99 (us)",
        format!("{:.0} / {:.0}", k.stretch_us.0, k.stretch_us.1),
        format!("{:.0} / {:.0}", m.run_stretch_us.p50, m.run_stretch_us.p99),
    );
    let _ = writeln!(
        s,
        "kernel window {:.3} s, simulated {:.3} s",
        k.window_s, m.duration_s
    );
    s
}
