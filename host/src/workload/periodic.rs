// SPDX-License-Identifier: GPL-2.0-only
//! The compact periodic form (TOML) → [`Workload`].
//!
//! Most scheduler studies need "N tasks at X % of a period P for D", the shape of
//! LISA's `PeriodicWload`; writing that as rt-app JSON is noise. Each `[[task]]` becomes
//! an rt-app-like task with one phase of `run` + per-thread relative `timer`, repeated
//! `duration_us / period_us` times, then the task ends. Integers only: the run part is
//! `period_us × duty_cycle_pct × 10` ns, exact.
//!
//! ```toml
//! duration_s = 2                # optional: stop the use case after this (default: when tasks end)
//!
//! [[task]]
//! name = "small"                # required, unique
//! duty_cycle_pct = 5            # required, 0..=100 (integer %)
//! period_us = 16000             # required, > 0
//! duration_us = 1000000         # required, a whole number of periods
//! count = 2                     # optional: instances (default 1)
//! cpus = [0, 1]                 # optional: affinity (default every CPU)
//! nice = 0                      # optional: -20..=19 (default 0)
//! policy = "SCHED_OTHER"        # optional: SCHED_OTHER or SCHED_IDLE
//! util_min = 0                  # optional: 0..=1024
//! util_max = 512                # optional: 0..=1024
//! delay_us = 0                  # optional: start delay
//! ```
//!
//! Unknown keys are errors naming the line.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::error::WorkloadError;
use super::json::{loc_of_offset, Loc};
use super::model::{
    instance_names, Affinity, Event, EventSpec, Format, Global, Loops, Phase, Policy, Sched,
    TaskSpec, TimerMode, Uclamp, Workload, MAX_INSTANCES,
};

/// A value and the byte range it came from, for line numbers in errors.
type Sp<T> = toml::Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    duration_s: Option<Sp<u32>>,
    #[serde(default)]
    task: Vec<Sp<TaskSpecToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskSpecToml {
    name: Sp<String>,
    duty_cycle_pct: Sp<u32>,
    period_us: Sp<u32>,
    duration_us: Sp<u64>,
    count: Option<Sp<u32>>,
    cpus: Option<Sp<Vec<usize>>>,
    nice: Option<Sp<i32>>,
    policy: Option<Sp<String>>,
    util_min: Option<Sp<u32>>,
    util_max: Option<Sp<u32>>,
    delay_us: Option<u32>,
}

/// Where a value came from, for errors: the text (for line numbers) and the file name.
struct Cx<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Cx<'_> {
    fn at(&self, s: std::ops::Range<usize>) -> Loc {
        loc_of_offset(self.text, s.start)
    }

    fn invalid(&self, at: Loc, path: String, msg: String) -> WorkloadError {
        WorkloadError::Invalid {
            origin: self.origin.to_string(),
            at,
            path,
            msg,
        }
    }

    /// An error at the value `v` of key `path`.
    fn bad<T>(&self, v: &Sp<T>, path: String, msg: String) -> WorkloadError {
        self.invalid(self.at(v.span()), path, msg)
    }
}

/// Parses the periodic TOML form; `origin` names the file in errors.
pub fn parse_str(text: &str, origin: &str) -> Result<Workload, WorkloadError> {
    let file: FileSpec = toml::from_str(text).map_err(|e| WorkloadError::Syntax {
        origin: origin.to_string(),
        at: e
            .span()
            .map_or(Loc::default(), |s| loc_of_offset(text, s.start)),
        msg: e.message().to_string(),
    })?;
    let cx = Cx { text, origin };
    if file.task.is_empty() {
        return Err(cx.invalid(
            Loc { line: 1, column: 1 },
            "task".into(),
            "no [[task]]: a workload needs at least one".into(),
        ));
    }
    if let Some(d) = file.duration_s.as_ref().filter(|d| *d.get_ref() == 0) {
        return Err(cx.bad(
            d,
            "duration_s".into(),
            "0 s: leave it out to run until every task ends".into(),
        ));
    }
    if let Some(d) = file
        .duration_s
        .as_ref()
        .filter(|d| u64::from(*d.get_ref()) > crate::limits::MAX_SIM_SECONDS)
    {
        return Err(cx.bad(
            d,
            "duration_s".into(),
            crate::limits::beyond(
                format!("{} s", d.get_ref()),
                "MAX_SIM_SECONDS",
                format!("{} s", crate::limits::MAX_SIM_SECONDS),
            ),
        ));
    }
    let mut names = BTreeSet::new();
    let mut tasks = Vec::with_capacity(file.task.len());
    for (i, spanned) in file.task.iter().enumerate() {
        let t = spanned.get_ref();
        let name = t.name.get_ref();
        if let Some(c) = name.chars().find(|c| c.is_control()) {
            return Err(cx.bad(
                &t.name,
                format!("task[{i}].name"),
                crate::limits::control_char_message("name", c),
            ));
        }
        if !names.insert(name.as_str()) {
            return Err(cx.bad(
                &t.name,
                format!("task[{i}].name"),
                format!("duplicate task name \"{name}\""),
            ));
        }
        tasks.push(task(&cx, i, spanned)?);
    }
    let w = Workload {
        origin: origin.to_string(),
        format: Format::Periodic,
        global: Global {
            duration_ns: file
                .duration_s
                .map(|s| u64::from(*s.get_ref()) * 1_000_000_000),
            ..Global::default()
        },
        tasks,
        groups: Vec::new(),
        ignored: Vec::new(),
    };
    w.check()?;
    Ok(w)
}

/// One `[[task]]`: a task with one phase of `run` + `timer`, repeated for its duration.
fn task(cx: &Cx, i: usize, spanned: &Sp<TaskSpecToml>) -> Result<TaskSpec, WorkloadError> {
    let task_at = cx.at(spanned.span());
    let t = spanned.get_ref();
    let path = |key: &str| format!("task[{i}].{key}");
    // Checked in the order of the keys' documentation: timing, scheduling, clamps, count,
    // CPUs (the first error wins).
    let (pct, period_us, loops) = timing(cx, t, &path)?;
    let sched = sched(cx, t, &path)?;
    let uclamp = uclamp(cx, t, &path)?;
    let count = match &t.count {
        None => 1,
        Some(c) if *c.get_ref() <= MAX_INSTANCES => *c.get_ref(),
        Some(c) => {
            return Err(cx.bad(
                c,
                path("count"),
                format!("count {}: 0..={MAX_INSTANCES}", c.get_ref()),
            ))
        }
    };
    let cpus = match &t.cpus {
        None => None,
        Some(c) if c.get_ref().is_empty() => {
            return Err(cx.bad(c, path("cpus"), "empty CPU list".into()));
        }
        Some(c) => {
            let mut cpus = c.get_ref().clone();
            cpus.sort_unstable();
            cpus.dedup();
            Some(Affinity {
                cpus,
                at: cx.at(c.span()),
            })
        }
    };
    Ok(TaskSpec {
        name: t.name.get_ref().clone(),
        at: task_at,
        instances: instance_names(t.name.get_ref(), count as usize),
        sched,
        cpus,
        uclamp,
        group: "/".into(),
        delay_ns: u64::from(t.delay_us.unwrap_or(0)) * 1000,
        custom_slice_ns: None,
        loops: Loops::Count(1),
        phases: vec![Phase {
            name: None,
            at: task_at,
            loops: Loops::Count(loops),
            sched: None,
            cpus: None,
            uclamp: Uclamp::default(),
            group: None,
            custom_slice_ns: None,
            events: events(cx, t, pct, period_us),
        }],
    })
}

/// Duty cycle (%), period (µs) and the number of periods in the duration.
fn timing(
    cx: &Cx,
    t: &TaskSpecToml,
    path: &dyn Fn(&str) -> String,
) -> Result<(u32, u64, u32), WorkloadError> {
    let pct = *t.duty_cycle_pct.get_ref();
    if pct > 100 {
        return Err(cx.bad(
            &t.duty_cycle_pct,
            path("duty_cycle_pct"),
            format!("{pct} % is above 100 %"),
        ));
    }
    let period_us = u64::from(*t.period_us.get_ref());
    if period_us == 0 {
        return Err(cx.bad(&t.period_us, path("period_us"), "the period is 0".into()));
    }
    let duration_us = *t.duration_us.get_ref();
    if duration_us == 0 || !duration_us.is_multiple_of(period_us) {
        return Err(cx.bad(
            &t.duration_us,
            path("duration_us"),
            format!("{duration_us} µs is not a whole, non-zero number of periods ({period_us} µs)"),
        ));
    }
    let loops = u32::try_from(duration_us / period_us).map_err(|_| {
        cx.bad(
            &t.duration_us,
            path("duration_us"),
            "more than 2^32 - 1 periods".into(),
        )
    })?;
    Ok((pct, period_us, loops))
}

/// Policy and nice.
fn sched(cx: &Cx, t: &TaskSpecToml, path: &dyn Fn(&str) -> String) -> Result<Sched, WorkloadError> {
    let policy = match &t.policy {
        None => Policy::Other,
        Some(p) => match p.get_ref().as_str() {
            "SCHED_OTHER" => Policy::Other,
            "SCHED_IDLE" => Policy::Idle,
            other => {
                return Err(cx.bad(
                    p,
                    path("policy"),
                    format!(
                    "unknown policy \"{other}\" (the periodic form has SCHED_OTHER, SCHED_IDLE)"
                ),
                ))
            }
        },
    };
    let nice = match &t.nice {
        None => 0,
        Some(n) if (-20..=19).contains(n.get_ref()) => *n.get_ref(),
        Some(n) => {
            return Err(cx.bad(
                n,
                path("nice"),
                format!("nice {} out of -20..=19", n.get_ref()),
            ))
        }
    };
    Ok(Sched {
        policy,
        priority: nice,
    })
}

/// util_min / util_max, each in 0..=1024 and min ≤ max.
fn uclamp(
    cx: &Cx,
    t: &TaskSpecToml,
    path: &dyn Fn(&str) -> String,
) -> Result<Uclamp, WorkloadError> {
    for (key, v) in [("util_min", &t.util_min), ("util_max", &t.util_max)] {
        if let Some(v) = v.as_ref().filter(|v| *v.get_ref() > 1024) {
            return Err(cx.bad(
                v,
                path(key),
                format!("{key} {} out of 0..=1024", v.get_ref()),
            ));
        }
    }
    let uclamp = Uclamp {
        min: t.util_min.as_ref().map(|v| *v.get_ref()),
        max: t.util_max.as_ref().map(|v| *v.get_ref()),
    };
    if let (Some(min), Some(max), Some(m)) = (uclamp.min, uclamp.max, &t.util_min) {
        if min > max {
            return Err(cx.bad(
                m,
                path("util_min"),
                format!("util_min {min} above util_max {max} (the kernel rejects it)"),
            ));
        }
    }
    Ok(uclamp)
}

/// The phase's events: `run` for the duty cycle (none at 0 %), then the period `timer`.
fn events(cx: &Cx, t: &TaskSpecToml, pct: u32, period_us: u64) -> Vec<EventSpec> {
    // period_us < 2^32 and pct <= 100: the products fit u64 exactly.
    let period_ns = period_us * 1000;
    let run_ns = period_us * 10 * u64::from(pct);
    let mut events = Vec::with_capacity(2);
    if run_ns > 0 {
        events.push(EventSpec {
            key: "run".into(),
            at: cx.at(t.duty_cycle_pct.span()),
            event: Event::Run { work_ns: run_ns },
        });
    }
    events.push(EventSpec {
        key: "timer".into(),
        at: cx.at(t.period_us.span()),
        event: Event::Timer {
            name: "unique".into(),
            per_thread: true,
            period_ns,
            mode: TimerMode::Relative,
        },
    });
    events
}
