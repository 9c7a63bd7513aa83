// SPDX-License-Identifier: GPL-2.0-only
//! A recorded run as time series: what each CPU ran, its frequency and idle state, each
//! task's util_avg and util_est, and when the system was overutilized. Every point is a
//! recorded event's value (`sched_switch`, `cpu_frequency`, `cpu_idle`,
//! `lisa__sched_pelt_se`, `lisa__sched_util_est_se`, `lisa__sched_overutilized`), read
//! once here for the plots, the HTML report and Python's `.signals`.

use crate::trace::record::{Kind, Trace, IDLE_PID, PWR_EVENT_EXIT};

/// `value` held from `start` to `end` (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Start (ns).
    pub start: u64,
    /// End (ns).
    pub end: u64,
    /// A pid (running lanes) or an idle state index (idle lanes).
    pub value: u64,
}

/// One sample: (ns, value).
pub type Point = (u64, u64);

/// The run's series.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    /// Number of CPUs.
    pub nr_cpus: usize,
    /// Simulated time (ns).
    pub duration_ns: u64,
    /// Task names by pid − 1.
    pub comms: Vec<String>,
    /// Per CPU: the task running (pid), idle time left out.
    pub running: Vec<Vec<Span>>,
    /// Per CPU: the idle state entered (index).
    pub idle: Vec<Vec<Span>>,
    /// Per CPU: the frequency (kHz) from each `cpu_frequency`.
    pub freq: Vec<Vec<Point>>,
    /// Per task (pid − 1): util_avg after each update.
    pub util_avg: Vec<Vec<Point>>,
    /// Per task: util_est (`enqueued`) after each update.
    pub util_est: Vec<Vec<Point>>,
    /// Spans with the root domain overutilized.
    pub overutilized: Vec<Span>,
}

fn close(open: &mut Option<(u64, u64)>, spans: &mut Vec<Span>, end: u64) {
    if let Some((start, value)) = open.take() {
        if end > start {
            spans.push(Span { start, end, value });
        }
    }
}

impl Signals {
    /// The series of `t`.
    pub fn of(t: &Trace) -> Signals {
        let n = t.nr_cpus;
        let ntask = t.tasks.len();
        let mut s = Signals {
            nr_cpus: n,
            duration_ns: t.duration_ns,
            comms: t.tasks.iter().map(|k| k.comm.clone()).collect(),
            running: vec![Vec::new(); n],
            idle: vec![Vec::new(); n],
            freq: vec![Vec::new(); n],
            util_avg: vec![Vec::new(); ntask],
            util_est: vec![Vec::new(); ntask],
            overutilized: Vec::new(),
        };
        let mut run: Vec<Option<(u64, u64)>> = vec![None; n];
        let mut idle: Vec<Option<(u64, u64)>> = vec![None; n];
        let mut ou: Option<(u64, u64)> = None;
        let task = |pid: i32| usize::try_from(pid - 1).ok().filter(|&i| i < ntask);
        for r in &t.events {
            let c = r.cpu as usize;
            match &r.kind {
                Kind::Switch { next_pid, .. } if c < n => {
                    close(&mut run[c], &mut s.running[c], r.ts);
                    if *next_pid != IDLE_PID {
                        run[c] = Some((r.ts, *next_pid as u64));
                    }
                }
                Kind::Idle { state, cpu_id } if (*cpu_id as usize) < n => {
                    let c = *cpu_id as usize;
                    close(&mut idle[c], &mut s.idle[c], r.ts);
                    if *state != PWR_EVENT_EXIT {
                        idle[c] = Some((r.ts, u64::from(*state)));
                    }
                }
                Kind::Frequency { state, cpu_id } if (*cpu_id as usize) < n => {
                    let f = &mut s.freq[*cpu_id as usize];
                    match f.last_mut() {
                        Some(last) if last.0 == r.ts => last.1 = u64::from(*state),
                        _ => f.push((r.ts, u64::from(*state))),
                    }
                }
                Kind::PeltSe { pid, avg, .. } => {
                    if let Some(i) = task(*pid) {
                        s.util_avg[i].push((r.ts, avg.util));
                    }
                }
                Kind::UtilEstSe { pid, enqueued, .. } => {
                    if let Some(i) = task(*pid) {
                        s.util_est[i].push((r.ts, u64::from(*enqueued)));
                    }
                }
                Kind::Overutilized { overutilized, .. } => {
                    if *overutilized {
                        ou.get_or_insert((r.ts, 1));
                    } else {
                        close(&mut ou, &mut s.overutilized, r.ts);
                    }
                }
                _ => {}
            }
        }
        let end = t.duration_ns;
        for c in 0..n {
            close(&mut run[c], &mut s.running[c], end);
            close(&mut idle[c], &mut s.idle[c], end);
        }
        close(&mut ou, &mut s.overutilized, end);
        s
    }

    /// The highest frequency recorded (kHz), 0 with none.
    pub fn max_freq(&self) -> u64 {
        self.freq.iter().flatten().map(|p| p.1).max().unwrap_or(0)
    }

    /// The deepest idle state entered, `None` with none.
    pub fn max_idle(&self) -> Option<u64> {
        self.idle.iter().flatten().map(|s| s.value).max()
    }

    /// `COMM-PID` of a task index.
    pub fn task_name(&self, i: usize) -> String {
        format!(
            "{}-{}",
            self.comms.get(i).map_or("?", String::as_str),
            i + 1
        )
    }

    /// The long (tidy) rows: (time ns, entity, signal, value) — per task `util_avg`,
    /// `util_est`; per CPU `frequency` (kHz) and `idle_state` (index, −1 on leaving
    /// idle) — in time order.
    pub fn rows(&self) -> Vec<(u64, String, &'static str, i64)> {
        let mut out = Vec::new();
        let v = |x: u64| i64::try_from(x).unwrap_or(i64::MAX);
        for (i, (a, e)) in self.util_avg.iter().zip(&self.util_est).enumerate() {
            let name = self.task_name(i);
            out.extend(a.iter().map(|p| (p.0, name.clone(), "util_avg", v(p.1))));
            out.extend(e.iter().map(|p| (p.0, name.clone(), "util_est", v(p.1))));
        }
        for c in 0..self.nr_cpus {
            let name = format!("cpu{c}");
            out.extend(
                self.freq[c]
                    .iter()
                    .map(|p| (p.0, name.clone(), "frequency", v(p.1))),
            );
            for s in &self.idle[c] {
                out.push((s.start, name.clone(), "idle_state", v(s.value)));
                out.push((s.end, name.clone(), "idle_state", -1));
            }
        }
        out.sort_by_key(|r| r.0);
        out
    }
}
