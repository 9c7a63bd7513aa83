// SPDX-License-Identifier: GPL-2.0-only
//! What a simulation measures, and its readable forms.
//!
//! Everything is accumulated in integers (ns, µW·ns) and converted to seconds, joules and
//! percentages only in [`Metrics`]. Definitions:
//! * `ou_pct`: time the root domain's `overutilized` flag was set / simulated time;
//!   `ou_triggers`: its 0 → 1 transitions (always 0 when EAS is off: the flag is unused);
//! * `task_cpu_residency_s`: per task, running time on each CPU;
//! * `freq_residency_s`: per frequency domain, time at each frequency (kHz);
//! * `idle_residency_s`, `idle_usage`, `idle_miss_above`, `idle_miss_below`: per CPU and
//!   idle state, cpuidle's own statistics (residency includes the exit latency, as
//!   `cpuidle_enter_state()` counts it; a stay still open at the end is closed there);
//! * `wakeup_latency_us`: activation (enqueue) to first run, including the idle state's
//!   exit latency; nearest-rank percentiles;
//! * `run_stretch_us`: percentiles of how long a task ran once switched in (the slices
//!   the fair class gave it; a stretch still running at the end is not counted);
//! * `deadline_misses`: per task, timer activations reached after their expiry (the
//!   period's work was not done before the next activation);
//! * `work_done_ms`: per task, work in ms at capacity 1024 and the reference frequency;
//! * `task_util_avg_end`: per task, its PELT `util_avg` when the simulation ends;
//!   `task_util_avg_mean`: the mean of its `util_avg` as last updated, sampled at every
//!   tick from its first enqueue on (the value held between updates, as a trace of the
//!   kernel's PELT events gives it);
//! * `migrations`: per task, enqueues on another CPU than the last one it ran or queued
//!   on (wake-up placement and load balance: the kernel's `sched_migrate_task`), the
//!   first enqueue excluded; `context_switches`: per task, times it was switched in by
//!   a pick that replaced another task or the idle task (the kernel's `sched_switch`
//!   with it as `next`);
//! * `irq_util_avg_end`, `cpu_capacity_end`: per CPU with irq time
//!   (`schedmath.irq_pct`), its irq PELT `util_avg` (`rq->avg_irq`, what
//!   `cpu_util_irq()` reads) and its `capacity_of()` when the simulation ends; both keys
//!   are absent from the JSON of a workload without irq time;
//! * `util_ramp_ms`: per task, time from its first enqueue until its `util_avg` first
//!   reached 819 (80 % of 1024) at a PELT update (null: never); updates happen at
//!   enqueue, dequeue, switch and tick, so the resolution is a tick at worst;
//! * `util_decay_ms`: per task, at its first sleep with `util_avg` ≥ 819: the time PELT
//!   takes to decay it below 205 (20 %) if the task and its CPU stayed idle (the kernel's
//!   blocked-entity update in 1 ms steps; the multiplier's faster clock included; null:
//!   never that high);
//! * `frame_time_ms`: per task with a `timer` loop, each period's time from its
//!   activation (the expiry it slept to, or the task start) to reaching the next timer
//!   (frames, mean, max); a frame longer than the period is a deadline miss;
//! * `iops`: `iorun` waits completed per simulated second (all tasks);
//! * `energy_j`: busy CPUs at their OPP's power, idle CPUs at their idle state's power
//!   (0 where the platform gives none);
//! * `eas_energy_estimate`: the Energy Model's view: at each tick, `em_cpu_energy()` of
//!   every performance domain with its current utilization (cost × sum_util, i.e.
//!   10 × µW) held until the next tick, in J.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::governors::{CpuIdle, FreqDomainState};
use super::task::{ForkStart, TState, Task};
use super::SimConfig;
use crate::platform::Platform;
use crate::text::Table;

/// Wake-up latency percentiles (µs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
}

/// Frame times of one periodic task (ms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FrameTime {
    /// Periods completed.
    pub frames: u64,
    /// Mean time from activation to the end of the period's work.
    pub mean: f64,
    /// Longest.
    pub max: f64,
}

/// The result of one simulation (the `--json` object).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Platform name.
    pub platform: String,
    /// Profile name.
    pub profile: String,
    /// Recorded seed.
    pub seed: u64,
    /// Percentage of time overutilized.
    pub ou_pct: f64,
    /// 0 → 1 transitions of overutilized.
    pub ou_triggers: u64,
    /// {task: [s per cpu]}.
    pub task_cpu_residency_s: BTreeMap<String, Vec<f64>>,
    /// {domain: {khz: s}}.
    pub freq_residency_s: BTreeMap<String, BTreeMap<u32, f64>>,
    /// {cpu: [s per state]}.
    pub idle_residency_s: BTreeMap<usize, Vec<f64>>,
    /// {cpu: [entries per state]}.
    pub idle_usage: BTreeMap<usize, Vec<u64>>,
    /// {cpu: [too-deep entries per state]}.
    pub idle_miss_above: BTreeMap<usize, Vec<u64>>,
    /// {cpu: [too-shallow entries per state]}.
    pub idle_miss_below: BTreeMap<usize, Vec<u64>>,
    /// Number of wake-ups measured.
    pub wakeups: u64,
    /// Percentiles (µs).
    pub wakeup_latency_us: Latency,
    /// Run stretches (switch-in to switch-out of a task: the slices it got), µs.
    pub run_stretch_us: Latency,
    /// {task: misses}.
    pub deadline_misses: BTreeMap<String, u64>,
    /// {task: ms}.
    pub work_done_ms: BTreeMap<String, f64>,
    /// {task: `util_avg` at the end}.
    pub task_util_avg_end: BTreeMap<String, u64>,
    /// {task: mean `util_avg`, sampled at each tick after its first enqueue}.
    pub task_util_avg_mean: BTreeMap<String, f64>,
    /// {task: enqueues on another CPU}.
    pub migrations: BTreeMap<String, u64>,
    /// {task: switch-ins}.
    pub context_switches: BTreeMap<String, u64>,
    /// {cpu: `rq->avg_irq.util_avg` at the end}, CPUs with irq time only.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub irq_util_avg_end: BTreeMap<usize, u64>,
    /// {cpu: `capacity_of()` at the end}, CPUs with irq time only.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub cpu_capacity_end: BTreeMap<usize, u64>,
    /// {task: ms to reach util_avg 819, or null}.
    pub util_ramp_ms: BTreeMap<String, Option<f64>>,
    /// {task: ms from ≥ 819 to < 205 while blocked, or null}.
    pub util_decay_ms: BTreeMap<String, Option<f64>>,
    /// {task: frame times} for tasks with a timer loop.
    pub frame_time_ms: BTreeMap<String, FrameTime>,
    /// {task: its first enqueue} for threads created by `fork` during the run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub forks: BTreeMap<String, ForkStart>,
    /// IO waits completed per second.
    pub iops: f64,
    /// Platform energy (J).
    pub energy_j: f64,
    /// EM estimate (J).
    pub eas_energy_estimate: f64,
    /// Simulated time (s).
    pub duration_s: f64,
}

/// Integer accumulators the engine feeds.
#[derive(Debug, Clone)]
pub struct Recorder {
    platform: String,
    profile: String,
    seed: u64,
    names: Vec<String>,
    residency: Vec<Vec<u64>>,
    work: Vec<u64>,
    misses: Vec<u64>,
    latencies: LatencyHistogram,
    stretches: LatencyHistogram,
    energy_uw_ns: u128,
    est_acc: u128,
    est_last: (u64, u128),
    ou_since: Option<u64>,
    ou_ns: u64,
    ou_triggers: u64,
    io_completed: u64,
    migrations: Vec<u64>,
    switches: Vec<u64>,
    /// Per task: (sum of util_avg samples, samples).
    util_samples: Vec<(u64, u64)>,
}

/// How many distinct wake-up latencies are kept exactly. Past it, the histogram halves
/// its resolution (values grouped by `ns >> shift`, reported at the group's lower bound)
/// until it fits again, so memory stays bounded however long the simulation runs.
/// Every shipped scenario stays far below it (exact nanoseconds).
pub const LATENCY_EXACT_VALUES: usize = 1 << 16;

/// Wake-up latencies and run stretches as a histogram (value → count): the nearest-rank percentiles of
/// every sample, exact while at most [`LATENCY_EXACT_VALUES`] distinct values were seen,
/// in O(distinct values) memory instead of one entry per wake-up.
#[derive(Debug, Clone, Default)]
struct LatencyHistogram {
    counts: BTreeMap<u64, u64>,
    /// Values are grouped by `ns >> shift` (0: exact).
    shift: u32,
    /// Samples recorded.
    count: u64,
}

impl LatencyHistogram {
    fn record(&mut self, ns: u64) {
        *self.counts.entry(ns >> self.shift).or_default() += 1;
        self.count += 1;
        while self.counts.len() > LATENCY_EXACT_VALUES && self.shift < u64::BITS - 1 {
            self.shift += 1;
            let old = std::mem::take(&mut self.counts);
            for (k, c) in old {
                *self.counts.entry(k >> 1).or_default() += c;
            }
        }
    }

    /// The nearest-rank `p`/1000 percentile (ns): the value of rank ceil(p/1000 × n);
    /// 0 without samples.
    fn per_mille(&self, p: u64) -> u64 {
        let rank = (u128::from(p) * u128::from(self.count))
            .div_ceil(1000)
            .max(1);
        let mut seen: u128 = 0;
        for (&k, &c) in &self.counts {
            seen += u128::from(c);
            if seen >= rank {
                return k << self.shift;
            }
        }
        0
    }
}

fn s(ns: u64) -> f64 {
    round6(ns as f64 / 1e9)
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl Recorder {
    /// Empty accumulators for `names` tasks on `platform`.
    pub fn new(platform: &Platform, names: &[String], cfg: &SimConfig) -> Self {
        Recorder {
            platform: platform.name.clone(),
            profile: String::new(),
            seed: cfg.seed,
            names: names.to_vec(),
            residency: vec![vec![0; platform.nr_cpus()]; names.len()],
            work: vec![0; names.len()],
            misses: vec![0; names.len()],
            latencies: LatencyHistogram::default(),
            stretches: LatencyHistogram::default(),
            energy_uw_ns: 0,
            est_acc: 0,
            est_last: (0, 0),
            ou_since: None,
            ou_ns: 0,
            ou_triggers: 0,
            io_completed: 0,
            migrations: vec![0; names.len()],
            switches: vec![0; names.len()],
            util_samples: vec![(0, 0); names.len()],
        }
    }

    /// Accumulators for one more task (a thread forked while the simulation runs), on a
    /// platform of `nr_cpus` CPUs.
    pub fn add_task(&mut self, name: &str, nr_cpus: usize) {
        self.names.push(name.to_string());
        self.residency.push(vec![0; nr_cpus]);
        self.work.push(0);
        self.misses.push(0);
        self.migrations.push(0);
        self.switches.push(0);
        self.util_samples.push((0, 0));
    }

    /// Names the profile in the report.
    pub fn set_profile(&mut self, name: &str) {
        self.profile = name.to_string();
    }

    /// `power_uw` drawn for `dt` ns.
    pub fn energy(&mut self, power_uw: u64, dt: u64) {
        self.energy_uw_ns += u128::from(power_uw) * u128::from(dt);
    }

    /// Task `t` ran `dt` ns on `cpu`.
    pub fn task_on_cpu(&mut self, t: usize, cpu: usize, dt: u64) {
        if let Some(v) = self.residency.get_mut(t).and_then(|r| r.get_mut(cpu)) {
            *v += dt;
        }
    }

    /// Task `t` did `work` ns of reference work.
    pub fn work(&mut self, t: usize, work: u64) {
        if let Some(w) = self.work.get_mut(t) {
            *w += work;
        }
    }

    /// Task `t` missed a deadline.
    pub fn deadline_miss(&mut self, t: usize) {
        if let Some(m) = self.misses.get_mut(t) {
            *m += 1;
        }
    }

    /// Task `t` (`task`, before the enqueue) is enqueued on `cpu`: a migration when it
    /// was on another CPU before (not at its first enqueue).
    pub fn enqueue(&mut self, t: usize, task: &Task, cpu: usize) {
        if task.cpu != cpu && task.state != TState::New {
            if let Some(m) = self.migrations.get_mut(t) {
                *m += 1;
            }
        }
    }

    /// Task `t` is switched in, replacing `prev` (`None`: the idle task).
    pub fn switch_in(&mut self, t: usize, prev: Option<usize>) {
        if prev != Some(t) {
            if let Some(n) = self.switches.get_mut(t) {
                *n += 1;
            }
        }
    }

    /// One tick's sample of every started task's `util_avg`.
    pub fn util_sample(&mut self, tasks: &[Task]) {
        for (acc, t) in self.util_samples.iter_mut().zip(tasks) {
            if t.started_at.is_some() {
                acc.0 += t.avg.util_avg;
                acc.1 += 1;
            }
        }
    }

    /// One wake-up latency (ns).
    pub fn latency(&mut self, ns: u64) {
        self.latencies.record(ns);
    }

    /// A task stopped running after `ns` on the CPU (preempted, asleep or moved).
    pub fn run_stretch(&mut self, ns: u64) {
        self.stretches.record(ns);
    }

    /// The overutilized flag at `now`.
    pub fn set_ou(&mut self, now: u64, on: bool) {
        match (self.ou_since, on) {
            (None, true) => {
                self.ou_since = Some(now);
                self.ou_triggers += 1;
            }
            (Some(since), false) => {
                self.ou_ns += now - since;
                self.ou_since = None;
            }
            _ => {}
        }
    }

    /// The EM estimate (cost × util) from `now` on.
    pub fn eas_estimate(&mut self, now: u64, units: u128) {
        let (last, prev) = self.est_last;
        self.est_acc += prev * u128::from(now - last);
        self.est_last = (now, units);
    }

    /// An `iorun` wait completed.
    pub fn io_completed(&mut self) {
        self.io_completed += 1;
    }

    /// The report at `now` (the end).
    pub fn finish(
        mut self,
        now: u64,
        doms: &[FreqDomainState],
        idle: &[Option<CpuIdle>],
    ) -> Metrics {
        self.eas_estimate(now, 0);
        let on = self.ou_since.is_some();
        self.set_ou(now, false);
        if on {
            // Closing the interval is not a transition.
            self.ou_since = None;
        }
        let (lat, st) = (&self.latencies, &self.stretches);
        let pct = |p: u64| -> f64 { round6(lat.per_mille(p) as f64 / 1e3) };
        let spct = |p: u64| -> f64 { round6(st.per_mille(p) as f64 / 1e3) };
        let per_state = |f: &dyn Fn(&CpuIdle, usize) -> u64| -> BTreeMap<usize, Vec<u64>> {
            idle.iter()
                .enumerate()
                .filter_map(|(c, ci)| {
                    ci.as_ref()
                        .map(|ci| (c, (0..ci.drv.state_count()).map(|i| f(ci, i)).collect()))
                })
                .collect()
        };
        let usage = |ci: &CpuIdle, i: usize| ci.dev.states_usage[i].usage;
        let above = |ci: &CpuIdle, i: usize| ci.dev.states_usage[i].above;
        let below = |ci: &CpuIdle, i: usize| ci.dev.states_usage[i].below;
        let time = |ci: &CpuIdle, i: usize| ci.dev.states_usage[i].time_ns;
        Metrics {
            platform: self.platform,
            profile: self.profile,
            seed: self.seed,
            ou_pct: if now == 0 {
                0.0
            } else {
                round6(self.ou_ns as f64 * 100.0 / now as f64)
            },
            ou_triggers: self.ou_triggers,
            task_cpu_residency_s: self
                .names
                .iter()
                .zip(&self.residency)
                .map(|(n, r)| (n.clone(), r.iter().map(|&ns| s(ns)).collect()))
                .collect(),
            freq_residency_s: doms
                .iter()
                .map(|d| {
                    (
                        d.name.clone(),
                        d.residency
                            .iter()
                            .filter(|(_, &ns)| ns > 0)
                            .map(|(&k, &ns)| (k, s(ns)))
                            .collect(),
                    )
                })
                .collect(),
            idle_residency_s: per_state(&time)
                .into_iter()
                .map(|(c, v)| (c, v.into_iter().map(s).collect()))
                .collect(),
            idle_usage: per_state(&usage),
            idle_miss_above: per_state(&above),
            idle_miss_below: per_state(&below),
            wakeups: lat.count,
            wakeup_latency_us: Latency {
                p50: pct(500),
                p90: pct(900),
                p99: pct(990),
                p999: pct(999),
            },
            run_stretch_us: Latency {
                p50: spct(500),
                p90: spct(900),
                p99: spct(990),
                p999: spct(999),
            },
            deadline_misses: self.names.iter().cloned().zip(self.misses).collect(),
            work_done_ms: self
                .names
                .iter()
                .cloned()
                .zip(self.work.iter().map(|&w| round6(w as f64 / 1e6)))
                .collect(),
            task_util_avg_end: BTreeMap::new(),
            task_util_avg_mean: self
                .names
                .iter()
                .zip(&self.util_samples)
                .filter(|(_, &(_, n))| n > 0)
                .map(|(name, &(sum, n))| (name.clone(), round6(sum as f64 / n as f64)))
                .collect(),
            migrations: self.names.iter().cloned().zip(self.migrations).collect(),
            context_switches: self.names.iter().cloned().zip(self.switches).collect(),
            irq_util_avg_end: BTreeMap::new(),
            cpu_capacity_end: BTreeMap::new(),
            util_ramp_ms: BTreeMap::new(),
            util_decay_ms: BTreeMap::new(),
            frame_time_ms: BTreeMap::new(),
            forks: BTreeMap::new(),
            iops: if now == 0 {
                0.0
            } else {
                round6(self.io_completed as f64 * 1e9 / now as f64)
            },
            energy_j: round6(self.energy_uw_ns as f64 / 1e15),
            eas_energy_estimate: round6(self.est_acc as f64 / 10.0 / 1e15),
            duration_s: s(now),
        }
    }
}

impl Metrics {
    /// Fills the per-task figures kept in the tasks themselves.
    pub fn set_task_figures(&mut self, tasks: &[Task]) {
        let ms = |ns: u64| round6(ns as f64 / 1e6);
        for t in tasks {
            let name = &t.spec.name;
            self.task_util_avg_end.insert(name.clone(), t.avg.util_avg);
            self.util_ramp_ms.insert(name.clone(), t.ramp_ns.map(ms));
            self.util_decay_ms.insert(name.clone(), t.decay_ns.map(ms));
            if let Some(f) = t.fork_start {
                self.forks.insert(name.clone(), f);
            }
            let f = t.frames;
            if f.count > 0 {
                let ft = FrameTime {
                    frames: f.count,
                    mean: round6(f.sum_ns as f64 / f.count as f64 / 1e6),
                    max: ms(f.max_ns),
                };
                self.frame_time_ms.insert(name.clone(), ft);
            }
        }
    }

    /// Total idle misses (above, below).
    pub fn idle_misses(&self) -> (u64, u64) {
        let sum = |m: &BTreeMap<usize, Vec<u64>>| m.values().flatten().sum::<u64>();
        (sum(&self.idle_miss_above), sum(&self.idle_miss_below))
    }

    /// The readable report.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "platform {}  profile {}  duration {} s  seed {}",
            self.platform, self.profile, self.duration_s, self.seed
        );
        let _ = writeln!(
            o,
            "overutilized {:.2} % of the time, {} triggers",
            self.ou_pct, self.ou_triggers
        );
        let _ = writeln!(
            o,
            "energy {:.6} J (EM estimate {:.6} J)",
            self.energy_j, self.eas_energy_estimate
        );
        let l = &self.wakeup_latency_us;
        let _ = writeln!(
            o,
            "wake-up latency ({} wake-ups) us: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}",
            self.wakeups, l.p50, l.p90, l.p99, l.p999
        );
        let ncpu = self
            .task_cpu_residency_s
            .values()
            .next()
            .map_or(0, Vec::len);
        if self.iops > 0.0 {
            let _ = writeln!(o, "io waits completed: {:.1} per s", self.iops);
        }
        let table = Table::new(" ")
            .left(16)
            .right(12)
            .right(7)
            .right(9)
            .rights(ncpu, 8);
        let mut head: Vec<String> = ["task", "work_ms", "misses", "ramp_ms"]
            .map(String::from)
            .to_vec();
        head.extend((0..ncpu).map(|c| format!("cpu{c}_s")));
        o.push('\n');
        table.line(&mut o, &head);
        for (name, res) in &self.task_cpu_residency_s {
            let mut cells = vec![
                name.clone(),
                format!("{:.3}", self.work_done_ms.get(name).copied().unwrap_or(0.0)),
                self.deadline_misses
                    .get(name)
                    .copied()
                    .unwrap_or(0)
                    .to_string(),
                self.util_ramp_ms
                    .get(name)
                    .copied()
                    .flatten()
                    .map_or("-".to_string(), |v| format!("{v:.1}")),
            ];
            cells.extend(res.iter().map(|r| format!("{r:.3}")));
            table.line(&mut o, &cells);
        }
        if !self.frame_time_ms.is_empty() {
            let _ = writeln!(o, "\nframe time (ms): frames / mean / max");
            for (name, f) in &self.frame_time_ms {
                let _ = writeln!(o, "  {name}: {} / {:.3} / {:.3}", f.frames, f.mean, f.max);
            }
        }
        let _ = writeln!(o, "\nfrequency residency (s)");
        for (d, res) in &self.freq_residency_s {
            let cells: Vec<String> = res.iter().map(|(k, v)| format!("{k} kHz {v:.3}")).collect();
            let _ = writeln!(o, "  {d}: {}", cells.join(", "));
        }
        if !self.idle_residency_s.is_empty() {
            let _ = writeln!(
                o,
                "\nidle states per cpu: residency s / usage / above / below"
            );
            for (c, res) in &self.idle_residency_s {
                let cells: Vec<String> = res
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let g = |m: &BTreeMap<usize, Vec<u64>>| {
                            m.get(c).and_then(|v| v.get(i)).copied().unwrap_or(0)
                        };
                        format!(
                            "[{i}] {r:.3}/{}/{}/{}",
                            g(&self.idle_usage),
                            g(&self.idle_miss_above),
                            g(&self.idle_miss_below)
                        )
                    })
                    .collect();
                let _ = writeln!(o, "  cpu{c}: {}", cells.join("  "));
            }
        }
        o
    }
}

fn change(a: f64, b: f64) -> String {
    if a == 0.0 {
        if b == 0.0 {
            "0.0%".into()
        } else {
            "n/a".into()
        }
    } else {
        format!("{:+.1}%", (b - a) * 100.0 / a)
    }
}

/// Base and patch side by side with the change in %.
pub fn render_compare(base: &Metrics, patch: &Metrics) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "platform {}  duration {} s",
        base.platform, base.duration_s
    );
    let table = Table::new(" ").left(28).rights(2, 14).right(9);
    table.line(&mut o, &["metric", &base.profile, &patch.profile, "change"]);
    let mut row = |name: &str, a: f64, b: f64| {
        let cells = [
            name.to_string(),
            format!("{a:.3}"),
            format!("{b:.3}"),
            change(a, b),
        ];
        table.line(&mut o, &cells);
    };
    row("ou_pct", base.ou_pct, patch.ou_pct);
    row(
        "ou_triggers",
        base.ou_triggers as f64,
        patch.ou_triggers as f64,
    );
    row("energy_j", base.energy_j, patch.energy_j);
    row(
        "eas_energy_estimate_j",
        base.eas_energy_estimate,
        patch.eas_energy_estimate,
    );
    let (la, lb) = (&base.wakeup_latency_us, &patch.wakeup_latency_us);
    row("wakeup_latency_p50_us", la.p50, lb.p50);
    row("wakeup_latency_p90_us", la.p90, lb.p90);
    row("wakeup_latency_p99_us", la.p99, lb.p99);
    row("wakeup_latency_p99.9_us", la.p999, lb.p999);
    let ((aa, ab), (ba, bb)) = (base.idle_misses(), patch.idle_misses());
    row("iops", base.iops, patch.iops);
    row("idle_miss_above", aa as f64, ba as f64);
    row("idle_miss_below", ab as f64, bb as f64);
    for (name, &a) in &base.deadline_misses {
        let b = patch.deadline_misses.get(name).copied().unwrap_or(0);
        row(&format!("{name} misses"), a as f64, b as f64);
    }
    for (name, &a) in &base.work_done_ms {
        let b = patch.work_done_ms.get(name).copied().unwrap_or(0.0);
        row(&format!("{name} work_ms"), a, b);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest rank over the sorted samples, as the percentiles were computed before
    /// the histogram.
    fn nearest_rank(v: &[u64], p: u64) -> u64 {
        let mut v = v.to_vec();
        v.sort_unstable();
        let rank = (p * v.len() as u64).div_ceil(1000).max(1) - 1;
        v[rank as usize]
    }

    #[test]
    fn histogram_percentiles_equal_the_sorted_samples() {
        let samples: Vec<u64> = (0..5000u64)
            .map(|i| (i * 7919) % 1013 * 1000 + i % 3)
            .collect();
        let mut h = LatencyHistogram::default();
        for &x in &samples {
            h.record(x);
        }
        assert_eq!(h.count, 5000);
        for p in [1, 500, 900, 990, 999, 1000] {
            assert_eq!(h.per_mille(p), nearest_rank(&samples, p), "p{p}");
        }
        assert_eq!(LatencyHistogram::default().per_mille(500), 0);
    }

    #[test]
    fn histogram_memory_is_bounded_by_distinct_values() {
        let mut h = LatencyHistogram::default();
        let n = 3 * LATENCY_EXACT_VALUES as u64;
        for x in 0..n {
            h.record(x);
        }
        assert!(h.counts.len() <= LATENCY_EXACT_VALUES);
        assert_eq!(h.shift, 2);
        // The median of 0..n at the resolution reached (4 ns groups, lower bound).
        assert_eq!(h.per_mille(500), (n / 2 - 1) & !3);
    }
}
