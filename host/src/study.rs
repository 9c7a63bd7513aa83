// SPDX-License-Identifier: GPL-2.0-only
//! Studies: a base-vs-patch measurement from a scheduler discussion, reproduced in the
//! simulator. A study file (TOML, `fixtures/scenarios/<name>.toml`) names the profiles,
//! the cases (platform + workload, optionally swept over a task's instance count) and
//! the columns of its table; `schedmath study NAME` runs every case under every profile
//! and prints one row per case and profile, each value beside its change against the
//! case's first profile.
//!
//! ```toml
//! study = "ou-lone-task"                 # required: the name (the file's stem)
//! description = "VARIANTS.md §1 ..."     # required: one line
//! profiles = ["mainline", "ou-lone-task"] # required: base first
//! duration_s = 10                        # required: simulated seconds per run
//! seed = 1                               # optional (default 0)
//! hz = 250                               # optional (default 250)
//! columns = ["ou_pct", "ou_triggers"]    # required: metric paths (see below)
//!
//! [[case]]
//! label = "rk3399 {n}x busy"             # required; {n} is the sweep value
//! platform = "../platforms/rk3399.toml"  # required: relative to the study file
//! workload = "ou-lone-task/busy.toml"    # required: relative to the study file
//! sweep = { task = "busy", values = [1, 2, 3] } # optional: instances of one task
//! duration_s = 20                        # optional: overrides the study's
//! profiles = ["..."]                     # optional: overrides the study's
//! columns = ["..."]                      # optional: overrides the study's
//! ```
//!
//! A column is a dotted path into the `simulate --json` object (`ou_pct`,
//! `wakeup_latency_us.p99`, `task_cpu_residency_s.busy-0`); a `*` segment sums every
//! child (`work_done_ms.*`, `idle_miss_below.*.*`). Numbers get a % change against the
//! first profile; other values are printed as compact JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::platform::Platform;
use crate::sim::{
    simulate_traced, simulate_workload, tasks_from_workload, Metrics, SimConfig, SimError,
};
use crate::text::Table;
use crate::workload::{Workload, WorkloadError};

/// Why a study cannot run. Every variant names the study file.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// The file cannot be read.
    #[error("{file}: {msg}")]
    Io {
        /// The study file.
        file: String,
        /// What went wrong.
        msg: String,
    },
    /// Not a study file (TOML syntax, unknown or missing key; the message has the line).
    #[error("{file}: {msg}")]
    Parse {
        /// The study file.
        file: String,
        /// The TOML reader's message (line, column, key).
        msg: String,
    },
    /// Well-formed but inconsistent.
    #[error("{file}: {key}: {msg}")]
    Invalid {
        /// The study file.
        file: String,
        /// The offending key, e.g. `case[2].sweep.task`.
        key: String,
        /// What is wrong.
        msg: String,
    },
    /// A workload file of a case.
    #[error("{file}: case `{case}`: {source}")]
    Workload {
        /// The study file.
        file: String,
        /// The case label.
        case: String,
        /// The workload error (names its own file and line).
        source: Box<WorkloadError>,
    },
    /// A run's trace file (`--trace`).
    #[error(transparent)]
    Trace(#[from] crate::trace::write::WriteError),
    /// A run's plot (`--plot`, `--report`).
    #[error("{file}: case `{case}`: plot: {msg}")]
    Plot {
        /// The study file.
        file: String,
        /// The case label.
        case: String,
        /// What the plotter said.
        msg: String,
    },
    /// A run failed (platform, workload or profile).
    #[error("{file}: case `{case}`: {source}")]
    Sim {
        /// The study file.
        file: String,
        /// The case label.
        case: String,
        /// The simulator's error.
        source: Box<SimError>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyFile {
    study: String,
    description: String,
    profiles: Vec<String>,
    duration_s: u32,
    #[serde(default)]
    seed: u64,
    #[serde(default = "default_hz")]
    hz: u32,
    columns: Vec<String>,
    #[serde(rename = "case")]
    cases: Vec<CaseFile>,
}

fn default_hz() -> u32 {
    250
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    label: String,
    platform: PathBuf,
    workload: PathBuf,
    sweep: Option<Sweep>,
    duration_s: Option<u32>,
    profiles: Option<Vec<String>>,
    columns: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sweep {
    task: String,
    values: Vec<u32>,
}

/// One simulation of a study: a case under a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// Case label (sweep value filled in).
    pub case: String,
    /// Profile name.
    pub profile: String,
    /// The `simulate --json` object.
    pub metrics: Metrics,
}

/// A study's result: the `--json` object is `{"study", "runs"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyResult {
    /// Study name.
    pub study: String,
    /// Every run, cases in file order (sweep values in order), profiles in order.
    pub runs: Vec<Run>,
    /// What the study reproduces.
    #[serde(skip)]
    pub description: String,
    /// Columns of each case (by label).
    #[serde(skip)]
    pub columns: Vec<(String, Vec<String>)>,
    /// Simulated seconds and seed, for the table's header.
    #[serde(skip)]
    pub seed: u64,
}

/// One case ready to run.
struct Job {
    label: String,
    platform: Platform,
    workload: Workload,
    profiles: Vec<String>,
    columns: Vec<String>,
    cfg: SimConfig,
}

/// The study file for `name_or_file`: a path to an existing file, else
/// `<scenarios>/<name>.toml`.
pub fn resolve(name_or_file: &str, scenarios: &Path) -> PathBuf {
    let p = PathBuf::from(name_or_file);
    if p.is_file() {
        p
    } else {
        scenarios.join(format!("{name_or_file}.toml"))
    }
}

/// Loads and runs the study in `file` (runs spread over the machine's cores by rayon;
/// the result does not depend on how many).
pub fn run(file: &Path) -> Result<StudyResult, StudyError> {
    run_traced(file, None)
}

/// `CASE.PROFILE` as a file name part (any character other than a letter, digit, `-` or
/// `_` becomes `_`).
fn run_tag(case: &str, profile: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}.{}", clean(case), clean(profile))
}

/// The trace file of one run: `trace` with `CASE.PROFILE` before its extension, e.g.
/// `study.txt` → `study.lone_task.mainline.txt`.
pub fn run_trace_path(trace: &Path, case: &str, profile: &str) -> PathBuf {
    crate::trace::write::tagged(trace, &run_tag(case, profile))
}

/// The plot file of one run for `study --plot PLOT`: a `PLOT` ending in `.svg` names the
/// files as [`run_trace_path`] does (`plots.svg` → `plots.lone_task.mainline.svg`);
/// any other `PLOT` is a directory that gets `CASE.PROFILE.svg`.
pub fn run_plot_path(plot: &Path, case: &str, profile: &str) -> PathBuf {
    if plot.extension().is_some_and(|e| e == "svg") {
        crate::trace::write::tagged(plot, &run_tag(case, profile))
    } else {
        plot.join(format!("{}.svg", run_tag(case, profile)))
    }
}

/// The runs of a study with, when asked for, each run's timeline plot (SVG), in
/// [`StudyResult::runs`] order.
pub struct Seen {
    /// The result.
    pub result: StudyResult,
    /// Each run's SVG (`plot` asked), else empty.
    pub plots: Vec<String>,
}

/// [`run`], recording each run's events to its [`run_trace_path`] when `trace` is given
/// (every path is checked before the first run).
pub fn run_traced(file: &Path, trace: Option<&Path>) -> Result<StudyResult, StudyError> {
    run_seen(file, trace, None).map(|s| s.result)
}

/// How a run's recording becomes its picture (`see::plot` at the CLI, a layer above):
/// (recording, title) → SVG or the plotter's message.
pub type Draw = dyn Fn(&crate::trace::record::Trace, &str) -> Result<String, String> + Sync;

/// [`run_traced`], also drawing each run's timeline with `plot` when given. Runs keep
/// only their SVG, not their recording.
pub fn run_seen(
    file: &Path,
    trace: Option<&Path>,
    plot: Option<&Draw>,
) -> Result<Seen, StudyError> {
    let (spec, jobs) = load(file)?;
    if let Some(t) = trace {
        crate::trace::write::Format::of(t)?;
        for job in &jobs {
            for p in &job.profiles {
                crate::trace::write::check_path(&run_trace_path(t, &job.label, p))?;
            }
        }
    }
    let fname = file.display().to_string();
    let work: Vec<(usize, &str)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(j, job)| job.profiles.iter().map(move |p| (j, p.as_str())))
        .collect();
    let results: Vec<Result<(Metrics, Option<String>), StudyError>> = work
        .par_iter()
        .map(|&(j, profile)| {
            let file = trace.map(|t| run_trace_path(t, &jobs[j].label, profile));
            run_one(&jobs[j], profile, file.as_deref(), plot, &fname)
        })
        .collect();
    let mut runs = Vec::with_capacity(work.len());
    let mut plots = Vec::new();
    for ((j, profile), r) in work.iter().zip(results) {
        let (metrics, svg) = r?;
        plots.extend(svg);
        runs.push(Run {
            case: jobs[*j].label.clone(),
            profile: (*profile).to_string(),
            metrics,
        });
    }
    check_columns(&fname, &jobs, &runs)?;
    let result = StudyResult {
        study: spec.study,
        runs,
        description: spec.description,
        columns: jobs.into_iter().map(|j| (j.label, j.columns)).collect(),
        seed: spec.seed,
    };
    Ok(Seen { result, plots })
}

/// Every column names a metric of at least one run of its case (a misspelt column would
/// otherwise print `-` in every row).
fn check_columns(file: &str, jobs: &[Job], runs: &[Run]) -> Result<(), StudyError> {
    for job in jobs {
        let json: Vec<Value> = runs
            .iter()
            .filter(|r| r.case == job.label)
            .map(|r| serde_json::to_value(&r.metrics).unwrap_or(Value::Null))
            .collect();
        for c in &job.columns {
            if json.iter().all(|j| lookup(j, c).is_none()) {
                let known: Vec<&str> = json
                    .first()
                    .and_then(Value::as_object)
                    .map(|m| m.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(StudyError::Invalid {
                    file: file.to_string(),
                    key: format!("columns (case `{}`)", job.label),
                    msg: format!(
                        "`{c}` is no metric of any run (metrics: {})",
                        known.join(", ")
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Simulates workload `w` on `platform` under the profile named `profile` (recorded in
/// the metrics by that name): one run of a study or a sweep.
pub fn simulate_named(
    platform: &Platform,
    w: &Workload,
    profile: &str,
    cfg: &SimConfig,
) -> Result<Metrics, SimError> {
    let p = schedmath::Profile::from_name(profile)
        .map_err(|e| SimError::Config(format!("profile `{profile}`: {e}")))?;
    let mut m = simulate_workload(platform, w, &p, cfg)?;
    m.profile = profile.to_string();
    Ok(m)
}

/// One run of a study: [`simulate_named`], or recorded when its events go to `trace` or
/// its timeline is drawn (`plot`).
fn run_one(
    job: &Job,
    profile: &str,
    trace: Option<&Path>,
    plot: Option<&Draw>,
    fname: &str,
) -> Result<(Metrics, Option<String>), StudyError> {
    let sim_err = |e: SimError| StudyError::Sim {
        file: fname.to_string(),
        case: job.label.clone(),
        source: Box::new(e),
    };
    if trace.is_none() && plot.is_none() {
        let m = simulate_named(&job.platform, &job.workload, profile, &job.cfg).map_err(sim_err)?;
        return Ok((m, None));
    }
    let p = schedmath::Profile::from_name(profile)
        .map_err(|e| sim_err(SimError::Config(format!("profile `{profile}`: {e}"))))?;
    let tasks = tasks_from_workload(&job.workload).map_err(sim_err)?;
    let irq = &job.workload.global.irq_pct;
    let (mut m, t) =
        simulate_traced(&job.platform, &tasks, irq, &p, &job.cfg, &mut |_| {}).map_err(sim_err)?;
    if let Some(file) = trace {
        crate::trace::write::write_file(&t, file)?;
    }
    m.profile = profile.to_string();
    let svg = plot
        .map(|draw| draw(&t, &format!("{} ({profile})", job.label)))
        .transpose()
        .map_err(|msg| StudyError::Plot {
            file: fname.to_string(),
            case: job.label.clone(),
            msg,
        })?;
    Ok((m, svg))
}

/// Parses `file` and prepares every case (sweeps expanded, files loaded and validated).
fn load(file: &Path) -> Result<(StudyFile, Vec<Job>), StudyError> {
    let fname = file.display().to_string();
    let text = crate::limits::read_text(file).map_err(|e| StudyError::Io {
        file: fname.clone(),
        msg: e.detail(),
    })?;
    let spec: StudyFile = toml::from_str(&text).map_err(|e| StudyError::Parse {
        file: fname.clone(),
        msg: e.to_string().trim_end().to_string(),
    })?;
    let invalid = |key: String, msg: &str| StudyError::Invalid {
        file: fname.clone(),
        key,
        msg: msg.to_string(),
    };
    if spec.cases.is_empty() {
        return Err(invalid(
            "case".into(),
            "a study needs at least one [[case]]",
        ));
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut jobs = Vec::new();
    for (i, c) in spec.cases.iter().enumerate() {
        let key = |k: &str| format!("case[{i}].{k}");
        let profiles = c.profiles.clone().unwrap_or_else(|| spec.profiles.clone());
        let columns = c.columns.clone().unwrap_or_else(|| spec.columns.clone());
        if profiles.is_empty() {
            return Err(invalid(key("profiles"), "no profiles"));
        }
        for p in &profiles {
            if let Err(e) = schedmath::Profile::from_name(p) {
                return Err(invalid(key("profiles"), &format!("`{p}`: {e}")));
            }
        }
        if columns.is_empty() {
            return Err(invalid(key("columns"), "no columns"));
        }
        let duration_s = c.duration_s.unwrap_or(spec.duration_s);
        if duration_s == 0 {
            return Err(invalid(key("duration_s"), "must be > 0"));
        }
        if !crate::limits::HZ_RANGE.contains(&spec.hz) {
            return Err(invalid("hz".into(), &crate::limits::hz_message(spec.hz)));
        }
        if u64::from(duration_s) > crate::limits::MAX_SIM_SECONDS {
            return Err(invalid(
                key("duration_s"),
                &crate::limits::beyond(
                    format!("{duration_s} s"),
                    "MAX_SIM_SECONDS",
                    format!("{} s", crate::limits::MAX_SIM_SECONDS),
                ),
            ));
        }
        let cfg = SimConfig {
            duration_ns: u64::from(duration_s) * 1_000_000_000,
            hz: spec.hz,
            seed: spec.seed,
        };
        let sim_err = |label: &str, source: SimError| StudyError::Sim {
            file: fname.clone(),
            case: label.to_string(),
            source: Box::new(source),
        };
        let platform =
            Platform::load(&dir.join(&c.platform)).map_err(|e| sim_err(&c.label, e.into()))?;
        let base = Workload::load(&dir.join(&c.workload)).map_err(|e| StudyError::Workload {
            file: fname.clone(),
            case: c.label.clone(),
            source: Box::new(e),
        })?;
        // What rt-app would ignore or schedmath approximates reaches the user, as with
        // `simulate`.
        for line in crate::workload::show::warning_lines(&base) {
            eprintln!("{line}");
        }
        let values: Vec<Option<u32>> = match &c.sweep {
            None => vec![None],
            Some(s) if s.values.is_empty() => {
                return Err(invalid(key("sweep.values"), "no values"));
            }
            Some(s) => s.values.iter().copied().map(Some).collect(),
        };
        for v in values {
            let mut w = base.clone();
            let mut label = c.label.clone();
            if let (Some(n), Some(s)) = (v, &c.sweep) {
                if n == 0 {
                    return Err(invalid(key("sweep.values"), "a count must be > 0"));
                }
                // The limit `workload check` applies to `instance`, before allocating.
                if n > crate::limits::MAX_INSTANCES {
                    return Err(invalid(
                        key("sweep.values"),
                        &crate::limits::beyond(
                            format!("instance count {n}"),
                            "MAX_INSTANCES",
                            crate::limits::MAX_INSTANCES,
                        ),
                    ));
                }
                w.set_instances(&s.task, n as usize).ok_or_else(|| {
                    invalid(
                        key("sweep.task"),
                        &format!("the workload has no task `{}`", s.task),
                    )
                })?;
                label = label.replace("{n}", &n.to_string());
            }
            w.validate(platform.nr_cpus())
                .map_err(|e| StudyError::Workload {
                    file: fname.clone(),
                    case: label.clone(),
                    source: Box::new(e),
                })?;
            jobs.push(Job {
                label,
                platform: platform.clone(),
                workload: w,
                profiles: profiles.clone(),
                columns: columns.clone(),
                cfg,
            });
        }
    }
    Ok((spec, jobs))
}

/// The value at a dotted `path` of `v`; `*` sums every child (numbers only).
pub fn lookup(v: &Value, path: &str) -> Option<Value> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let children: Vec<&Value> = match (head, v) {
        ("*", Value::Object(m)) => m.values().collect(),
        ("*", Value::Array(a)) => a.iter().collect(),
        (k, Value::Object(m)) => return m.get(k).and_then(|c| next(c, rest)),
        (k, Value::Array(a)) => {
            return k
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .and_then(|c| next(c, rest))
        }
        _ => return None,
    };
    // A child without the key counts 0 (a residency map lists only visited states);
    // no child with it at all is no value.
    let mut sum = None;
    for c in children {
        if let Some(v) = next(c, rest) {
            sum = Some(sum.unwrap_or(0.0) + v.as_f64()?);
        }
    }
    serde_json::Number::from_f64((sum? * 1e6).round() / 1e6).map(Value::Number)
}

fn next(v: &Value, rest: Option<&str>) -> Option<Value> {
    match rest {
        Some(r) => lookup(v, r),
        None => Some(v.clone()),
    }
}

/// A table cell: numbers with 3 decimals, number lists compact, `-` for no value.
pub fn cell(v: Option<&Value>) -> String {
    match v {
        None => "-".into(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.3}"),
            _ => n.to_string(),
        },
        // A per-CPU or per-state list: `[0.028 0 9.972]`, zeros short.
        Some(Value::Array(a)) if a.iter().all(Value::is_number) => {
            let items: Vec<String> = a
                .iter()
                .map(|x| match x.as_f64() {
                    Some(0.0) => "0".into(),
                    _ => cell(Some(x)),
                })
                .collect();
            format!("[{}]", items.join(" "))
        }
        Some(other) => other.to_string(),
    }
}

fn change(base: Option<&Value>, v: Option<&Value>) -> String {
    match (base.and_then(Value::as_f64), v.and_then(Value::as_f64)) {
        (Some(0.0), Some(0.0)) => "(=)".into(),
        (Some(0.0), Some(_)) => "(n/a)".into(),
        (Some(a), Some(b)) => format!("({:+.1}%)", (b - a) * 100.0 / a),
        _ => String::new(),
    }
}

impl StudyResult {
    /// The runs of case `label`, in profile order.
    pub fn case(&self, label: &str) -> Vec<&Run> {
        self.runs.iter().filter(|r| r.case == label).collect()
    }

    /// The metric of case `label` under `profile` (`None`: no such run).
    pub fn metrics(&self, label: &str, profile: &str) -> Option<&Metrics> {
        self.runs
            .iter()
            .find(|r| r.case == label && r.profile == profile)
            .map(|r| &r.metrics)
    }

    /// The readable table: per case, a header of its columns and one row per profile.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "study {}: {}", self.study, self.description);
        let _ = writeln!(
            o,
            "seed {}; change in parentheses against the case's first profile",
            self.seed
        );
        let mut last_cols: Option<&Vec<String>> = None;
        for (label, cols) in &self.columns {
            let runs = self.case(label);
            let rows: Vec<(String, Vec<String>)> = {
                let json: Vec<Value> = runs
                    .iter()
                    .map(|r| serde_json::to_value(&r.metrics).unwrap_or(Value::Null))
                    .collect();
                let base: Vec<Option<Value>> = json
                    .first()
                    .map(|b| cols.iter().map(|c| lookup(b, c)).collect())
                    .unwrap_or_default();
                runs.iter()
                    .zip(&json)
                    .enumerate()
                    .map(|(i, (r, j))| {
                        let cells = cols
                            .iter()
                            .enumerate()
                            .map(|(k, c)| {
                                let v = lookup(j, c);
                                let b = base.get(k).and_then(Option::as_ref);
                                if i == 0 {
                                    cell(v.as_ref())
                                } else {
                                    format!("{} {}", cell(v.as_ref()), change(b, v.as_ref()))
                                        .trim_end()
                                        .to_string()
                                }
                            })
                            .collect();
                        (r.profile.clone(), cells)
                    })
                    .collect()
            };
            let width = |k: usize| {
                rows.iter()
                    .map(|(_, c)| c[k].chars().count())
                    .chain([cols[k].chars().count()])
                    .max()
                    .unwrap_or(0)
            };
            let pw = rows
                .iter()
                .map(|(p, _)| p.chars().count())
                .chain(["profile".len()])
                .max()
                .unwrap_or(0);
            let table =
                (0..cols.len()).fold(Table::new("  ").left(24).left(pw), |t, k| t.right(width(k)));
            if last_cols != Some(cols) {
                let mut head = vec!["case", "profile"];
                head.extend(cols.iter().map(String::as_str));
                o.push('\n');
                table.line(&mut o, &head);
                last_cols = Some(cols);
            }
            for (i, (p, cells)) in rows.iter().enumerate() {
                let name = if i == 0 { label.as_str() } else { "" };
                let mut line = vec![name, p.as_str()];
                line.extend(cells.iter().map(String::as_str));
                table.line(&mut o, &line);
            }
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_paths_and_sums() {
        let v = serde_json::json!({"a": {"x": 1.5, "y": 2}, "b": [1, 2, 3], "c": {"k": [1, 4]}});
        assert_eq!(lookup(&v, "a.x"), Some(serde_json::json!(1.5)));
        assert_eq!(lookup(&v, "a.*").and_then(|v| v.as_f64()), Some(3.5));
        assert_eq!(lookup(&v, "b.1"), Some(serde_json::json!(2)));
        assert_eq!(lookup(&v, "c.*.*").and_then(|v| v.as_f64()), Some(5.0));
        assert_eq!(lookup(&v, "a.z"), None);
        // Under `*`, a child lacking the key adds 0; lacking everywhere gives nothing.
        let r = serde_json::json!({"d0": {"400": 1.0}, "d1": {"800": 2.0}});
        assert_eq!(lookup(&r, "*.400").and_then(|v| v.as_f64()), Some(1.0));
        assert_eq!(lookup(&r, "*.999"), None);
        assert_eq!(lookup(&v, "b.9"), None);
    }

    #[test]
    fn change_reads_like_the_compare_table() {
        let n = |x: f64| Some(serde_json::json!(x));
        assert_eq!(change(n(10.0).as_ref(), n(5.0).as_ref()), "(-50.0%)");
        assert_eq!(change(n(0.0).as_ref(), n(0.0).as_ref()), "(=)");
        assert_eq!(change(n(0.0).as_ref(), n(1.0).as_ref()), "(n/a)");
    }
}
