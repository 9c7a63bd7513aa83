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
    Affinity, Event, EventSpec, Format, Global, Loops, Phase, Policy, Sched, TaskSpec, TimerMode,
    Uclamp, Workload,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    duration_s: Option<u32>,
    #[serde(default)]
    task: Vec<toml::Spanned<TaskSpecToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskSpecToml {
    name: String,
    duty_cycle_pct: u32,
    period_us: u32,
    duration_us: u64,
    #[serde(default = "one")]
    count: u32,
    cpus: Option<Vec<usize>>,
    #[serde(default)]
    nice: i32,
    policy: Option<String>,
    util_min: Option<u32>,
    util_max: Option<u32>,
    #[serde(default)]
    delay_us: u32,
}

fn one() -> u32 {
    1
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
    let invalid = |at: Loc, path: String, msg: String| WorkloadError::Invalid {
        origin: origin.to_string(),
        at,
        path,
        msg,
    };
    if file.task.is_empty() {
        return Err(invalid(
            Loc { line: 1, column: 1 },
            "task".into(),
            "no [[task]]: a workload needs at least one".into(),
        ));
    }
    if file.duration_s == Some(0) {
        return Err(invalid(
            Loc { line: 1, column: 1 },
            "duration_s".into(),
            "0 s: leave it out to run until every task ends".into(),
        ));
    }
    let mut names = BTreeSet::new();
    let mut tasks = Vec::with_capacity(file.task.len());
    for (i, spanned) in file.task.iter().enumerate() {
        let at = loc_of_offset(text, spanned.span().start);
        let t = spanned.get_ref();
        let path = |key: &str| format!("task[{i}].{key}");
        if !names.insert(t.name.as_str()) {
            return Err(invalid(
                at,
                path("name"),
                format!("duplicate task name \"{}\"", t.name),
            ));
        }
        if t.duty_cycle_pct > 100 {
            return Err(invalid(
                at,
                path("duty_cycle_pct"),
                format!("{} % is above 100 %", t.duty_cycle_pct),
            ));
        }
        if t.period_us == 0 {
            return Err(invalid(at, path("period_us"), "the period is 0".into()));
        }
        let period_us = u64::from(t.period_us);
        if t.duration_us == 0 || !t.duration_us.is_multiple_of(period_us) {
            return Err(invalid(
                at,
                path("duration_us"),
                format!(
                    "{} µs is not a whole, non-zero number of periods ({period_us} µs)",
                    t.duration_us
                ),
            ));
        }
        let loops = u32::try_from(t.duration_us / period_us)
            .map_err(|_| invalid(at, path("duration_us"), "more than 2^32 - 1 periods".into()))?;
        let policy = match t.policy.as_deref() {
            None | Some("SCHED_OTHER") => Policy::Other,
            Some("SCHED_IDLE") => Policy::Idle,
            Some(p) => {
                return Err(invalid(
                    at,
                    path("policy"),
                    format!(
                        "unknown policy \"{p}\" (the periodic form has SCHED_OTHER, SCHED_IDLE)"
                    ),
                ))
            }
        };
        if !(-20..=19).contains(&t.nice) {
            return Err(invalid(
                at,
                path("nice"),
                format!("nice {} out of -20..=19", t.nice),
            ));
        }
        for (key, v) in [("util_min", t.util_min), ("util_max", t.util_max)] {
            if let Some(v) = v.filter(|&v| v > 1024) {
                return Err(invalid(at, path(key), format!("{key} {v} out of 0..=1024")));
            }
        }
        if let (Some(min), Some(max)) = (t.util_min, t.util_max) {
            if min > max {
                return Err(invalid(
                    at,
                    path("util_min"),
                    format!("util_min {min} above util_max {max} (the kernel rejects it)"),
                ));
            }
        }
        let cpus = match &t.cpus {
            None => None,
            Some(c) if c.is_empty() => {
                return Err(invalid(at, path("cpus"), "empty CPU list".into()));
            }
            Some(c) => {
                let mut cpus = c.clone();
                cpus.sort_unstable();
                cpus.dedup();
                Some(Affinity { cpus, at })
            }
        };
        // period_us < 2^32 and pct <= 100: the products fit u64 exactly.
        let period_ns = period_us * 1000;
        let run_ns = period_us * 10 * u64::from(t.duty_cycle_pct);
        let mut events = Vec::with_capacity(2);
        if run_ns > 0 {
            events.push(EventSpec {
                key: "run".into(),
                at,
                event: Event::Run { work_ns: run_ns },
            });
        }
        events.push(EventSpec {
            key: "timer".into(),
            at,
            event: Event::Timer {
                name: "unique".into(),
                per_thread: true,
                period_ns,
                mode: TimerMode::Relative,
            },
        });
        tasks.push(TaskSpec {
            name: t.name.clone(),
            at,
            instances: (0..t.count).map(|k| format!("{}-{k}", t.name)).collect(),
            sched: Sched {
                policy,
                priority: t.nice,
            },
            cpus,
            uclamp: Uclamp {
                min: t.util_min,
                max: t.util_max,
            },
            group: "/".into(),
            delay_ns: u64::from(t.delay_us) * 1000,
            loops: Loops::Count(1),
            phases: vec![Phase {
                name: None,
                at,
                loops: Loops::Count(loops),
                sched: None,
                cpus: None,
                uclamp: Uclamp::default(),
                group: None,
                events,
            }],
        });
    }
    let w = Workload {
        origin: origin.to_string(),
        format: Format::Periodic,
        global: Global {
            duration_ns: file.duration_s.map(|s| u64::from(s) * 1_000_000_000),
            default_policy: Policy::Other,
        },
        tasks,
        groups: Vec::new(),
        ignored: Vec::new(),
    };
    w.check()?;
    Ok(w)
}
