// SPDX-License-Identifier: GPL-2.0-only
//! What the simulator runs: tasks as programs of steps (run, runtime, sleep, timer),
//! repeated a number of loops — the shape of an rt-app task with one phase, so the
//! workload model (`Workload { tasks: [TaskSpec { phases × loops × events }] }`) maps onto
//! it event for event.
//!
//! Until the rt-app parser is merged, workloads come from the compact periodic TOML form
//! (the schema of the workload module's periodic form, so the same files keep working):
//!
//! ```toml
//! duration_s = 2                # optional: default simulation length
//!
//! [[task]]
//! name = "small"                # required, unique
//! duty_cycle_pct = 5            # required, 0..=100
//! period_us = 16000             # required, > 0
//! duration_us = 1000000         # required, a whole number of periods
//! count = 2                     # optional: instances, named small-0, small-1 (default 1)
//! cpus = [0, 1]                 # optional: affinity (default every CPU)
//! nice = 0                      # optional: -20..=19
//! policy = "SCHED_OTHER"        # optional: SCHED_OTHER, SCHED_IDLE, SCHED_FIFO, SCHED_RR
//! priority = 10                 # optional: RT priority 1..=99 (FIFO/RR only)
//! util_min = 0                  # optional: uclamp min 0..=1024
//! util_max = 512                # optional: uclamp max 0..=1024
//! delay_us = 0                  # optional: first activation
//! ```
//!
//! Each task is `run(period × duty %)` then a relative `timer(period)`, repeated
//! `duration_us / period_us` times. All values are integers; errors name file and line.

use std::path::Path;

use serde::Deserialize;

/// Scheduling class and policy of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    /// SCHED_OTHER (fair).
    Normal,
    /// SCHED_IDLE (fair, weight 3).
    Idle,
    /// SCHED_FIFO with a priority 1..=99.
    Fifo(u32),
    /// SCHED_RR with a priority 1..=99 (the RR time slice is not modelled: FIFO order).
    Rr(u32),
}

impl SchedPolicy {
    /// An RT policy's priority (higher runs first); `None` for fair policies.
    pub fn rt_prio(self) -> Option<u32> {
        match self {
            SchedPolicy::Fifo(p) | SchedPolicy::Rr(p) => Some(p),
            SchedPolicy::Normal | SchedPolicy::Idle => None,
        }
    }
}

/// One step of a task's program; durations in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// rt-app `run`: work in ns at capacity 1024 and the highest frequency; it takes
    /// `work × 1024 / capacity × f_ref / f` wall ns on a CPU.
    Run(u64),
    /// rt-app `runtime`: busy for a wall time whatever the CPU.
    Runtime(u64),
    /// rt-app `sleep`.
    Sleep(u64),
    /// rt-app `timer` (relative mode, per thread): sleep until the next expiry, previous
    /// expiry + period; when it has already passed (strictly), a deadline miss is counted,
    /// no sleep, and the timer re-bases on now.
    Timer(u64),
}

/// One task of the simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimTask {
    /// Unique name (reports key on it).
    pub name: String,
    /// Policy.
    pub policy: SchedPolicy,
    /// Nice value -20..=19 (fair tasks).
    pub nice: i32,
    /// Allowed CPUs; `None`: all.
    pub cpus: Option<Vec<usize>>,
    /// Requested uclamp min / max (`None`: not set).
    pub uclamp_min: Option<u32>,
    /// Requested uclamp max.
    pub uclamp_max: Option<u32>,
    /// First activation (ns).
    pub delay_ns: u64,
    /// How many times the steps run; `None`: forever.
    pub loops: Option<u64>,
    /// The program (at least one step).
    pub steps: Vec<Step>,
}

impl SimTask {
    /// A periodic task: `run(period × duty_pct / 100)` then `timer(period)`, `loops` times
    /// (`None`: forever).
    pub fn periodic(name: &str, duty_pct: u32, period_ns: u64, loops: Option<u64>) -> Self {
        SimTask {
            name: name.to_string(),
            policy: SchedPolicy::Normal,
            nice: 0,
            cpus: None,
            uclamp_min: None,
            uclamp_max: None,
            delay_ns: 0,
            loops,
            steps: vec![
                Step::Run(period_ns * u64::from(duty_pct) / 100),
                Step::Timer(period_ns),
            ],
        }
    }
}

/// A parsed workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimWorkload {
    /// Where it came from.
    pub origin: String,
    /// Default simulated time (ns), if the file gives one.
    pub duration_ns: Option<u64>,
    /// The tasks, in file order.
    pub tasks: Vec<SimTask>,
}

/// A workload file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// Unreadable file.
    #[error("{origin}: {msg}")]
    Io {
        /// The file.
        origin: String,
        /// OS error.
        msg: String,
    },
    /// Bad TOML, unknown key, missing or mistyped value.
    #[error("{origin}:{line}: {msg}")]
    Parse {
        /// The file.
        origin: String,
        /// 1-based line (0 when unknown).
        line: usize,
        /// What is wrong (names the key).
        msg: String,
    },
    /// A value out of range.
    #[error("{origin}:{line}: task `{task}`: {key}: {msg}")]
    Invalid {
        /// The file.
        origin: String,
        /// 1-based line of the task table.
        line: usize,
        /// The task.
        task: String,
        /// The key.
        key: &'static str,
        /// What is wrong.
        msg: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    duration_s: Option<u32>,
    #[serde(default)]
    task: Vec<toml::Spanned<TaskToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskToml {
    name: String,
    duty_cycle_pct: u32,
    period_us: u32,
    duration_us: u64,
    count: Option<u32>,
    cpus: Option<Vec<usize>>,
    #[serde(default)]
    nice: i32,
    policy: Option<String>,
    priority: Option<u32>,
    util_min: Option<u32>,
    util_max: Option<u32>,
    #[serde(default)]
    delay_us: u64,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |s| s.lines().count().max(1))
}

impl SimWorkload {
    /// Reads and parses a periodic TOML workload.
    pub fn load(path: &Path) -> Result<SimWorkload, WorkloadError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Io {
            origin: origin.clone(),
            msg: e.to_string(),
        })?;
        Self::parse(&text, &origin)
    }

    /// Parses periodic TOML `text`; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<SimWorkload, WorkloadError> {
        let spec: FileSpec = toml::from_str(text).map_err(|e| WorkloadError::Parse {
            origin: origin.to_string(),
            line: e.span().map_or(0, |s| line_of(text, s.start + 1)),
            msg: e.message().to_string(),
        })?;
        let mut tasks: Vec<SimTask> = Vec::new();
        for t in &spec.task {
            let line = line_of(text, t.span().start + 1);
            let t = t.get_ref();
            let bad = |key: &'static str, msg: String| WorkloadError::Invalid {
                origin: origin.to_string(),
                line,
                task: t.name.clone(),
                key,
                msg,
            };
            if t.name.is_empty() {
                return Err(bad("name", "empty".into()));
            }
            if t.duty_cycle_pct > 100 {
                return Err(bad("duty_cycle_pct", format!("{} > 100", t.duty_cycle_pct)));
            }
            if t.period_us == 0 {
                return Err(bad("period_us", "must be > 0".into()));
            }
            if t.duration_us % u64::from(t.period_us) != 0 {
                return Err(bad(
                    "duration_us",
                    format!(
                        "{} is not a whole number of periods of {} us",
                        t.duration_us, t.period_us
                    ),
                ));
            }
            if !(-20..=19).contains(&t.nice) {
                return Err(bad("nice", format!("{} not in -20..=19", t.nice)));
            }
            for (key, v) in [("util_min", t.util_min), ("util_max", t.util_max)] {
                if v.is_some_and(|v| v > 1024) {
                    return Err(bad(key, format!("{} > 1024", v.unwrap_or(0))));
                }
            }
            let prio = || {
                let p = t.priority.unwrap_or(1);
                if (1..=99).contains(&p) {
                    Ok(p)
                } else {
                    Err(bad("priority", format!("{p} not in 1..=99")))
                }
            };
            let policy = match t.policy.as_deref() {
                None | Some("SCHED_OTHER") => SchedPolicy::Normal,
                Some("SCHED_IDLE") => SchedPolicy::Idle,
                Some("SCHED_FIFO") => SchedPolicy::Fifo(prio()?),
                Some("SCHED_RR") => SchedPolicy::Rr(prio()?),
                Some(p) => {
                    return Err(bad(
                        "policy",
                        format!("`{p}` (SCHED_OTHER, SCHED_IDLE, SCHED_FIFO, SCHED_RR)"),
                    ))
                }
            };
            if t.priority.is_some() && policy.rt_prio().is_none() {
                return Err(bad("priority", "only for SCHED_FIFO/SCHED_RR".into()));
            }
            let period_ns = u64::from(t.period_us) * 1000;
            let count = t.count.unwrap_or(1);
            if count == 0 {
                return Err(bad("count", "must be > 0".into()));
            }
            for i in 0..count {
                let name = if count == 1 {
                    t.name.clone()
                } else {
                    format!("{}-{i}", t.name)
                };
                if tasks.iter().any(|o| o.name == name) {
                    return Err(bad("name", format!("`{name}` is used twice")));
                }
                let mut task = SimTask::periodic(
                    &name,
                    t.duty_cycle_pct,
                    period_ns,
                    Some(t.duration_us / u64::from(t.period_us)),
                );
                task.policy = policy;
                task.nice = t.nice;
                task.cpus = t.cpus.clone();
                task.uclamp_min = t.util_min;
                task.uclamp_max = t.util_max;
                task.delay_ns = t.delay_us.saturating_mul(1000);
                tasks.push(task);
            }
        }
        Ok(SimWorkload {
            origin: origin.to_string(),
            duration_ns: spec.duration_s.map(|s| u64::from(s) * 1_000_000_000),
            tasks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periodic_task_expands_to_run_and_timer() {
        let w = SimWorkload::parse(
            "duration_s = 1\n[[task]]\nname = \"s\"\nduty_cycle_pct = 5\nperiod_us = 16000\nduration_us = 32000\ncount = 2\n",
            "w.toml",
        )
        .unwrap();
        assert_eq!(w.duration_ns, Some(1_000_000_000));
        assert_eq!(w.tasks.len(), 2);
        assert_eq!(w.tasks[1].name, "s-1");
        assert_eq!(w.tasks[0].loops, Some(2));
        assert_eq!(
            w.tasks[0].steps,
            vec![Step::Run(800_000), Step::Timer(16_000_000)]
        );
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = SimWorkload::parse(
            "[[task]]\nname = \"a\"\nduty_cycle_pct = 101\nperiod_us = 1000\nduration_us = 1000\n",
            "w.toml",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "w.toml:1: task `a`: duty_cycle_pct: 101 > 100"
        );
        let e = SimWorkload::parse("[[task]]\nname = \"a\"\nbogus = 1\n", "w.toml").unwrap_err();
        assert!(
            e.to_string().starts_with("w.toml:3: unknown field `bogus`"),
            "{e}"
        );
    }
}
