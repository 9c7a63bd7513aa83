// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath`: what would the kernel compute? (see `schedmath --help`)

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "schedmath",
    version,
    about = "The Linux scheduler's arithmetic, bit for bit, off-target",
    after_long_help = schedmath_host::docs::profile_help()
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run kernel fixture suites and compare every output field.
    ///
    /// Example: schedmath verify --fixtures fixtures/kernel --suite 'pelt/*'
    Verify(schedmath_host::verify::VerifyArgs),
    /// Replay a utilization trace through schedutil and show each frequency decision.
    ///
    /// The CSV has one row per governor update of one CPU:
    /// `time_ns,util_cfs[,util_rt,uclamp_min,uclamp_max,idle_calls,iowait]` (an optional
    /// header line names the columns). Each row prints the raw and resolved frequency,
    /// whether the busy filter held the frequency and whether the rate limit swallowed the
    /// update; a frequency-residency summary closes the report.
    ///
    /// Example: schedmath governor --platform fixtures/platforms/laptop-2c4t.toml
    /// --policy 0 --util busy.csv --compare mainline sugov-busy-without-uclamp
    #[command(after_long_help = schedmath_host::docs::profile_help())]
    Governor(GovernorArgs),
    /// Replay idle periods through a cpuidle governor: per-state usage, residency and
    /// idle misses (above: too deep, below: too shallow).
    ///
    /// Example: schedmath idle --platform fixtures/platforms/rk3399.toml --cpu 0
    ///   --pattern timer:50ms --util 100 --compare teo-v6.10 teo-v6.12
    #[command(after_long_help = schedmath_host::docs::profile_help())]
    Idle(schedmath_host::idle::IdleArgs),
    /// Simulate a workload on a platform: overutilized time, residencies, frequencies,
    /// idle states, wake-up latency, deadline misses and frame times, ramp-up and decay
    /// times, IO rate, work and energy.
    ///
    /// The workload is rt-app JSON or the compact periodic TOML form (see
    /// fixtures/workloads/README.md); every rt-app event is simulated with rt-app's
    /// semantics, task groups included; a key or event rt-app does not know is refused
    /// with the file, line and key named.
    ///
    /// Example: schedmath simulate --platform fixtures/platforms/m1pro-8c.toml
    ///   --workload fixtures/scenarios/busy-plus-4x5pct.toml --duration 2 --json
    #[command(after_long_help = schedmath_host::docs::profile_help())]
    Simulate(SimulateArgs),
    /// Simulate one workload under two profiles and show them side by side with the
    /// change in %.
    ///
    /// Example: schedmath compare --platform fixtures/platforms/m1pro-8c.toml
    ///   --workload fixtures/scenarios/busy-plus-4x5pct.toml --base mainline
    ///   --patch ou-lone-task
    #[command(after_long_help = schedmath_host::docs::profile_help())]
    Compare(CompareArgs),
    /// The arithmetic behind one CPU's decisions at one instant of a simulated run: its
    /// frequency (schedutil's inputs, headroom, raw and resolved frequency, rate limit,
    /// busy filter), the last wake-up placed on it (each candidate CPU), its idle state
    /// (the governor's statistics) and the overutilized flag; every number as the
    /// simulator recorded it.
    ///
    /// Example: schedmath explain --platform fixtures/platforms/m1pro-8c.toml
    ///   --workload fixtures/scenarios/busy-plus-4x5pct.toml --duration 2 --at 1.5 --cpu 0
    Explain(ExplainArgs),
    /// Run a study: a base-vs-patch measurement from VARIANTS.md reproduced on the
    /// simulator, every case under every profile, as a table (or `--json`:
    /// `{"study", "runs": [{"case", "profile", "metrics"}]}`).
    ///
    /// NAME is a study file in the scenarios directory (`fixtures/scenarios/NAME.toml`);
    /// a path to a study file works too. Study files: fixtures/scenarios/README.md.
    ///
    /// Example: schedmath study ou-lone-task
    Study(StudyArgs),
    /// Run every combination of a sweep file's profiles × workloads × platforms × seeds
    /// on all cores: one JSON line per run (`run`, `runs`, `sweep`, `platform`,
    /// `workload`, `profile`, `seed`, `metrics`), in run order, or `--table`.
    ///
    /// `--shard I/N` (0-based) runs every N-th run from the I-th; `sweep merge` joins the
    /// shards' outputs into what the unsharded sweep prints, byte for byte (README
    /// "Sweeps": Slurm arrays, GNU parallel). Sweep files: `schedmath_host::sweep` docs
    /// and README "Sweeps".
    ///
    /// Example: schedmath sweep fixtures/sweeps/example.toml --table
    ///
    /// Example: schedmath sweep big.toml --shard 3/100 > part-3.jsonl
    Sweep(schedmath_host::sweep::SweepArgs),
    /// Replay a real trace (`trace-cmd report` text, or `.gz`) through the core's PELT and
    /// util_est and compare with the kernel's own values, update by update.
    ///
    /// With the lab probe's per-call records the kernel's update points are replayed
    /// exactly; otherwise (or with `--infer`) they are rebuilt from sched events and ticks
    /// and the kernel's values are only the answer key. `--profile pelt-hl8` (any profile)
    /// shows what that kernel would have computed on the same timeline. `--json` prints
    /// `{"trace", "kernel", "entities": [{"entity", "updates", "exact", "max_abs_err",
    /// "mean_abs_err"}], "totals": {"updates", "exact"}}`.
    ///
    /// Example: schedmath replay fixtures/lab/6.12.95+deb12-amd64/periodic-25pct-16ms/report.txt.gz --json
    Replay(schedmath_host::replay::ReplayArgs),
    /// Simulator vs kernel: a lab capture (fixtures/lab/<kernel>/<workload>/) beside the
    /// same rt-app file simulated on the lab guest's platform file (default
    /// fixtures/platforms/lab-qemu-<N>c.toml): CPU time, util_avg, busy %, wake-up
    /// latency, migrations, context switches. `cargo xtask lab compare` prints the same.
    ///
    /// Example: schedmath versus fixtures/lab/6.12.95+deb12-amd64/periodic-25pct-16ms
    Versus {
        /// The capture folder (meta.json, <workload>.json, report.txt(.gz)).
        capture: PathBuf,
        /// The platform file describing the guest.
        #[arg(long, value_name = "FILE")]
        platform: Option<PathBuf>,
    },
    /// Platform files: CPUs, frequency domains, OPPs, Energy Model, idle states.
    #[command(subcommand)]
    Platform(PlatformCmd),
    /// Workload files: rt-app JSON or the compact periodic TOML form.
    #[command(subcommand)]
    Workload(WorkloadCmd),
}

#[derive(Subcommand)]
enum WorkloadCmd {
    /// Parse and validate a workload; print its tasks, phases and events.
    ///
    /// `.json` files are read as rt-app reads them (comments, trailing commas, a
    /// repeated key collapsed as json-c does); `.toml` files are the periodic form.
    /// Every duration is shown exactly (integer ns underneath). A key rt-app ignores, a
    /// duplicate key or a setting schedmath only approximates is a warning (listed in
    /// the summary; an error with --strict); what rt-app refuses, or schedmath cannot
    /// model, is an error naming file:line:column and the key path (exit code 2).
    ///
    /// Example: schedmath workload check fixtures/workloads/phases.json --nr-cpus 6
    ///
    /// Example: schedmath workload check --verbose --json fixtures/workloads/periodic.toml
    ///
    /// Example: schedmath workload check --strict fixtures/workloads/sync.json
    Check {
        /// The workload file (`.json`: rt-app; `.toml`: periodic form).
        file: PathBuf,
        /// Also check CPU affinities against a platform with this many CPUs.
        #[arg(long, value_name = "N")]
        nr_cpus: Option<usize>,
        /// Also list the keys accepted but without scheduling effect (logging, ...).
        #[arg(long)]
        verbose: bool,
        /// Print the parsed model as JSON instead of the summary.
        #[arg(long)]
        json: bool,
        /// Treat warnings (keys rt-app ignores, duplicate keys, approximations) as
        /// errors: print them on stderr and exit with code 2.
        #[arg(long)]
        strict: bool,
    },
}

#[derive(Subcommand)]
enum PlatformCmd {
    /// Validate a platform file; print its capacities, EM tables and idle states.
    ///
    /// Prints the normalised CPU capacities (computed by the core), each domain's OPPs
    /// with its Energy Model (performance, cost, inefficient states) and the idle states;
    /// a broken file is an error naming the file and the key (exit code 2).
    ///
    /// Example: schedmath platform show fixtures/platforms/rk3399.toml
    ///
    /// Example: schedmath platform show --json fixtures/platforms/pixel6.toml
    Show {
        /// The platform file (TOML; schema in fixtures/platforms/README.md).
        file: PathBuf,
        /// Print the validated platform as JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
}

/// `schedmath replay`.
fn replay_cmd(args: &schedmath_host::replay::ReplayArgs) -> anyhow::Result<bool> {
    let r = schedmath_host::replay::run(args)?;
    // A trace in which no PELT update could be replayed proves nothing: say why. (One
    // without the kernel's values prints what the replay computed.)
    if r.totals().0 == 0 && !r.computed.iter().any(|c| c.task && c.signal.ran) {
        let skipped: Vec<String> = r
            .render()
            .lines()
            .filter(|l| l.starts_with("skipped"))
            .map(str::to_string)
            .collect();
        anyhow::bail!(
            "{}: no PELT update could be replayed from {} event(s) (no task was switched in and updated){}{}",
            args.trace.display(),
            r.events,
            if skipped.is_empty() { "" } else { "; " },
            skipped.join("; ")
        );
    }
    let text = if args.json {
        let mut t = serde_json::to_string_pretty(&r.to_json())?;
        t.push('\n');
        t
    } else {
        r.render()
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(true)
}

/// `schedmath platform show`.
fn platform_show(file: &std::path::Path, json: bool) -> anyhow::Result<bool> {
    let p = schedmath_host::platform::Platform::load(file)?;
    let text = if json {
        let mut t = serde_json::to_string_pretty(&p)?;
        t.push('\n');
        t
    } else {
        schedmath_host::platform::show::render(&p)
    };
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(true)
}

#[derive(clap::Args)]
struct GovernorArgs {
    /// Platform file (TOML) with the frequency domains.
    #[arg(long, value_name = "FILE")]
    platform: PathBuf,
    /// Which cpufreq policy (frequency domain) of the platform, from 0.
    #[arg(long, value_name = "N", default_value_t = 0)]
    policy: usize,
    /// The utilization trace (CSV).
    #[arg(long, value_name = "CSV")]
    util: PathBuf,
    /// schedutil's rate_limit_us instead of the platform's default.
    #[arg(long, value_name = "US")]
    rate_limit_us: Option<u32>,
    /// Behaviour profile (e.g. `mainline`, `sugov-busy-without-uclamp`).
    #[arg(
        long,
        value_name = "P",
        default_value = "mainline",
        conflicts_with = "compare"
    )]
    profile: String,
    /// Replay under two profiles and print them side by side.
    #[arg(long, num_args = 2, value_names = ["P1", "P2"])]
    compare: Option<Vec<String>>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

fn profile(name: &str) -> anyhow::Result<schedmath::Profile> {
    schedmath::Profile::from_name(name).map_err(|e| anyhow::anyhow!("--profile: {e}"))
}

fn governor(args: &GovernorArgs) -> anyhow::Result<bool> {
    let mut policy = schedmath_host::governor::platform_policy(&args.platform, args.policy)?;
    if let Some(us) = args.rate_limit_us {
        policy.rate_limit_us = us;
    }
    let names: Vec<&str> = match &args.compare {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => vec![args.profile.as_str()],
    };
    if names.len() > 2 {
        anyhow::bail!("--compare needs two profiles");
    }
    let profiles = names
        .iter()
        .map(|n| profile(n))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Streamed: a trace of any length is replayed in constant memory.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    schedmath_host::governor::run_stream(&policy, &args.util, &profiles, args.json, &mut out)?;
    if args.json {
        writeln!(out)?;
    }
    out.flush()?;
    Ok(true)
}

#[derive(clap::Args)]
struct SimCommon {
    /// Platform file (TOML).
    #[arg(long, value_name = "FILE")]
    platform: PathBuf,
    /// Workload file: rt-app JSON (`.json`) or the periodic form (`.toml`).
    #[arg(long, value_name = "FILE")]
    workload: PathBuf,
    /// Simulated seconds (default: the workload's duration_s, else 10).
    #[arg(long, value_name = "S")]
    duration: Option<u32>,
    /// Tick rate.
    #[arg(long, value_name = "HZ", default_value_t = 250)]
    hz: u32,
    /// Seeds the tasks' random streams (drawn only by workload ranges such as
    /// `schedmath.io_latency_us`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Record the run's events to FILE, format by extension: `.txt` (`trace-cmd report`
    /// text), `.dat` (trace-cmd data), `.pftrace` (Perfetto), `.csv`. `compare` writes
    /// FILE.base.EXT and FILE.patch.EXT.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Treat the workload's warnings (deadlocks, zero-progress loops, keys rt-app
    /// ignores, approximations) as errors: exit with code 2.
    #[arg(long)]
    strict: bool,
}

#[derive(clap::Args)]
struct SimulateArgs {
    #[command(flatten)]
    common: SimCommon,
    /// Behaviour profile (e.g. `mainline`, `ou-lone-task+pelt-hl8`).
    #[arg(long, value_name = "P", default_value = "mainline")]
    profile: String,
    /// Draw the run to FILE.svg: CPU lanes (task, idle state), frequencies, per-task
    /// util_avg / util_est, overutilized spans.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

#[derive(clap::Args)]
struct ExplainArgs {
    #[command(flatten)]
    common: SimCommon,
    /// Behaviour profile.
    #[arg(long, value_name = "P", default_value = "mainline")]
    profile: String,
    /// The instant: seconds (`1.5`) or with a unit (`1500ms`, `1500000us`, `ns`).
    #[arg(long, value_name = "TIME")]
    at: String,
    /// The CPU.
    #[arg(long, value_name = "N")]
    cpu: u32,
}

#[derive(clap::Args)]
struct CompareArgs {
    #[command(flatten)]
    common: SimCommon,
    /// The base profile.
    #[arg(long, value_name = "P")]
    base: String,
    /// The patch profile.
    #[arg(long, value_name = "P")]
    patch: String,
    /// Draw both runs to FILE.svg (base solid, patch dashed).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Write a self-contained HTML report (inputs, tables, plot) to FILE.html.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
}

fn explain_cmd(a: &ExplainArgs) -> anyhow::Result<bool> {
    use schedmath_host::see::explain::{explain, parse_time};
    let at = parse_time(&a.at).ok_or_else(|| {
        anyhow::anyhow!(
            "--at {}: not a time (seconds, or a number with ns/us/ms/s)",
            a.at
        )
    })?;
    if let Some(d) = a.common.duration {
        if at > u64::from(d) * 1_000_000_000 {
            anyhow::bail!("--at {}: outside the run (0 to {d} s)", a.at);
        }
    }
    let runs = sim_run(&a.common, &[&a.profile], &[""], true)?;
    let Some((_, Some(t))) = runs.first() else {
        anyhow::bail!("explain: no recording");
    };
    let e = explain(t, at, a.cpu)?;
    std::io::stdout().lock().write_all(e.render(t).as_bytes())?;
    Ok(true)
}

#[derive(clap::Args)]
struct StudyArgs {
    /// A study name (`ou-lone-task`, ...) or a study file.
    name: String,
    /// Where study names are looked up.
    #[arg(long, value_name = "DIR", default_value = "fixtures/scenarios")]
    scenarios: PathBuf,
    /// Record each run's events: FILE.CASE.PROFILE.EXT per run (format by extension:
    /// `.txt`, `.dat`, `.pftrace`, `.csv`; see `simulate --trace`).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write a self-contained HTML report (the study file, the command line, the table
    /// and each run's timeline plot inline) to FILE.html.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Draw each run's timeline (as `simulate --plot`): into directory DIR as
    /// CASE.PROFILE.svg (created if missing), or, for a name ending in `.svg`, as
    /// NAME.CASE.PROFILE.svg beside it.
    #[arg(long, value_name = "DIR_or_FILE.svg")]
    plot: Option<PathBuf>,
}

fn study_cmd(a: &StudyArgs) -> anyhow::Result<bool> {
    use schedmath_host::see::{report, Out};
    use schedmath_host::study;
    let report_out = a
        .report
        .as_deref()
        .map(|p| Out::new(p, "--report", ".html"))
        .transpose()?;
    if let Some(p) = &a.plot {
        if p.extension().is_none_or(|e| e != "svg") {
            std::fs::create_dir_all(p)
                .map_err(|e| anyhow::anyhow!("{}: cannot write --plot: {e}", p.display()))?;
        }
        // Checks the directory takes files before any run.
        Out::new(
            &study::run_plot_path(p, "case", "profile"),
            "--plot",
            ".svg",
        )?;
    }
    let file = study::resolve(&a.name, &a.scenarios);
    let keep = a.plot.is_some() || report_out.is_some();
    let draw = |t: &schedmath_host::trace::record::Trace, title: &str| {
        let s = schedmath_host::see::signals::Signals::of(t);
        let run = schedmath_host::see::plot::Run {
            label: "",
            signals: &s,
        };
        schedmath_host::see::plot::svg(&[run], title).map_err(|e| e.to_string())
    };
    let draw: Option<&study::Draw> = if keep { Some(&draw) } else { None };
    let seen = study::run_seen(&file, a.trace.as_deref(), draw)?;
    let r = &seen.result;
    if let Some(p) = &a.plot {
        for (run, svg) in r.runs.iter().zip(&seen.plots) {
            let path = study::run_plot_path(p, &run.case, &run.profile);
            Out::new(&path, "--plot", ".svg")?.write(svg.as_bytes())?;
        }
    }
    if let Some(out) = &report_out {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        let inputs = [
            ("command line", command_line()),
            ("study file", format!("{}\n\n{text}", file.display())),
        ];
        let mut sections = vec![report::Section::Text("Results".into(), r.render())];
        for (run, svg) in r.runs.iter().zip(&seen.plots) {
            let h = format!("Timeline: {} ({})", run.case, run.profile);
            sections.push(report::Section::Svg(h, svg.clone()));
        }
        let title = format!("study {}", a.name);
        out.write(report::html(&title, &inputs, &sections).as_bytes())?;
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer(&mut out, r)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", r.render())?;
    }
    Ok(true)
}

/// One run's metrics and, when asked for (`keep`), its recording.
type RunOut = (
    schedmath_host::sim::Metrics,
    Option<schedmath_host::trace::record::Trace>,
);

fn sim_run(
    c: &SimCommon,
    names: &[&str],
    tags: &[&str],
    keep: bool,
) -> anyhow::Result<Vec<RunOut>> {
    use schedmath_host::sim::{
        simulate_traced, simulate_with_progress, tasks_from_workload, SimConfig,
    };
    use schedmath_host::trace::write::{check_path, tagged, write_file, Format};
    if let Some(p) = &c.trace {
        Format::of(p)?; // the extension as given, before any `.base` / `.patch`
    }
    // Each run's trace file, checked before any simulation starts.
    let traces: Vec<Option<PathBuf>> = tags
        .iter()
        .map(|tag| {
            c.trace.as_ref().map(|p| match *tag {
                "" => p.clone(),
                t => tagged(p, t),
            })
        })
        .collect();
    for p in traces.iter().flatten() {
        check_path(p)?;
    }
    let platform = schedmath_host::platform::Platform::load(&c.platform)?;
    let w = schedmath_host::workload::Workload::load(&c.workload)?;
    w.validate(platform.nr_cpus())?;
    let warnings = schedmath_host::workload::show::warning_lines(&w);
    for line in &warnings {
        eprintln!("{line}");
    }
    if c.strict && !warnings.is_empty() {
        anyhow::bail!(
            "{}: {} warning(s), refused by --strict",
            c.workload.display(),
            warnings.len()
        );
    }
    let tasks = tasks_from_workload(&w)?;
    let cfg = SimConfig::for_workload(&w, c.duration, c.hz, c.seed);
    names
        .iter()
        .zip(&traces)
        .map(|(n, file)| {
            let p = profile(n)?;
            let bar =
                schedmath_host::text::progress_bar(cfg.duration_ns / 1_000_000, "simulated ms", n);
            let mut tick = |now: u64| bar.set_position(now / 1_000_000);
            let irq = &w.global.irq_pct;
            let m = if file.is_some() || keep {
                let (m, t) = simulate_traced(&platform, &tasks, irq, &p, &cfg, &mut tick)?;
                if let Some(f) = file {
                    write_file(&t, f)?;
                }
                (m, keep.then_some(t))
            } else {
                let m = simulate_with_progress(&platform, &tasks, irq, &p, &cfg, &mut tick)?;
                (m, None)
            };
            bar.finish_and_clear();
            Ok(m)
        })
        .collect()
}

/// The command line as run (for reports and plot titles).
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn simulate_cmd(a: &SimulateArgs) -> anyhow::Result<bool> {
    use schedmath_host::see::{plot, signals::Signals, Out};
    let plot_out = a
        .plot
        .as_deref()
        .map(|p| Out::new(p, "--plot", ".svg"))
        .transpose()?;
    let runs = sim_run(&a.common, &[&a.profile], &[""], plot_out.is_some())?;
    if let (Some(out), Some((_, Some(t)))) = (&plot_out, runs.first()) {
        let s = Signals::of(t);
        let title = format!(
            "{} on {} ({})",
            a.common.workload.display(),
            a.common.platform.display(),
            a.profile
        );
        let svg = plot::svg(
            &[plot::Run {
                label: "",
                signals: &s,
            }],
            &title,
        )?;
        out.write(svg.as_bytes())?;
    }
    let mut out = std::io::stdout().lock();
    for (m, _) in &runs {
        if a.common.json {
            serde_json::to_writer(&mut out, m)?;
            writeln!(out)?;
        } else {
            write!(out, "{}", m.render())?;
        }
    }
    Ok(true)
}

fn compare_cmd(a: &CompareArgs) -> anyhow::Result<bool> {
    use schedmath_host::see::{plot, report, signals::Signals, Out};
    let plot_out = a
        .plot
        .as_deref()
        .map(|p| Out::new(p, "--plot", ".svg"))
        .transpose()?;
    let report_out = a
        .report
        .as_deref()
        .map(|p| Out::new(p, "--report", ".html"))
        .transpose()?;
    let keep = plot_out.is_some() || report_out.is_some();
    let runs = sim_run(&a.common, &[&a.base, &a.patch], &["base", "patch"], keep)?;
    let [(base, bt), (patch, pt)] = runs.as_slice() else {
        anyhow::bail!("compare needs two results");
    };
    if let (Some(bt), Some(pt)) = (bt, pt) {
        let (bs, ps) = (Signals::of(bt), Signals::of(pt));
        let title = format!(
            "{} on {}: base {} (solid) vs patch {} (dashed)",
            a.common.workload.display(),
            a.common.platform.display(),
            a.base,
            a.patch
        );
        let svg = plot::svg(
            &[
                plot::Run {
                    label: "base",
                    signals: &bs,
                },
                plot::Run {
                    label: "patch",
                    signals: &ps,
                },
            ],
            &title,
        )?;
        if let Some(out) = &plot_out {
            out.write(svg.as_bytes())?;
        }
        if let Some(out) = &report_out {
            let read = |p: &std::path::Path| {
                std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))
            };
            let inputs = [
                ("command line", command_line()),
                ("profiles", format!("base {}, patch {}", a.base, a.patch)),
                ("seed", a.common.seed.to_string()),
                (
                    "simulated",
                    format!("{:.3} s at HZ={}", bt.duration_ns as f64 / 1e9, a.common.hz),
                ),
                (
                    "platform",
                    format!(
                        "{}\n\n{}",
                        a.common.platform.display(),
                        read(&a.common.platform)?
                    ),
                ),
                (
                    "workload",
                    format!(
                        "{}\n\n{}",
                        a.common.workload.display(),
                        read(&a.common.workload)?
                    ),
                ),
            ];
            let sections = [
                report::Section::Text(
                    "Metrics: base vs patch".into(),
                    schedmath_host::sim::render_compare(base, patch),
                ),
                report::Section::Svg("Timeline".into(), svg),
            ];
            out.write(report::html(&title, &inputs, &sections).as_bytes())?;
        }
    }
    let mut out = std::io::stdout().lock();
    if a.common.json {
        serde_json::to_writer(
            &mut out,
            &serde_json::json!({ "base": base, "patch": patch }),
        )?;
        writeln!(out)?;
    } else {
        write!(out, "{}", schedmath_host::sim::render_compare(base, patch))?;
    }
    Ok(true)
}

/// `schedmath workload check`.
fn workload_check(
    file: &std::path::Path,
    nr_cpus: Option<usize>,
    verbose: bool,
    json: bool,
    strict: bool,
) -> anyhow::Result<bool> {
    use schedmath_host::workload::{show, Workload};
    let w = Workload::load(file)?;
    if let Some(n) = nr_cpus {
        w.validate(n)?;
    }
    let warnings = show::warning_lines(&w);
    if strict && !warnings.is_empty() {
        for line in &warnings {
            eprintln!("{line}");
        }
        anyhow::bail!(
            "{}: {} warning(s), refused by --strict",
            file.display(),
            warnings.len()
        );
    }
    let text = if json {
        let mut t = serde_json::to_string_pretty(&w)?;
        t.push('\n');
        t
    } else {
        show::render(&w, verbose)
    };
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Verify(args) => schedmath_host::verify::run(
            &args,
            &PathBuf::from("fixtures/kernel"),
            &mut std::io::stdout().lock(),
        ),
        Cmd::Governor(args) => governor(&args),
        Cmd::Idle(args) => {
            schedmath_host::idle::run(&args, &mut std::io::stdout().lock()).map(|()| true)
        }
        Cmd::Simulate(args) => simulate_cmd(&args),
        Cmd::Compare(args) => compare_cmd(&args),
        Cmd::Explain(args) => explain_cmd(&args),
        Cmd::Study(args) => study_cmd(&args),
        Cmd::Sweep(args) => schedmath_host::sweep::run(&args, &mut std::io::stdout().lock()),
        Cmd::Replay(args) => replay_cmd(&args),
        Cmd::Versus { capture, platform } => {
            schedmath_host::versus::run(&capture, platform.as_deref()).and_then(|(c, k, m)| {
                let t = schedmath_host::versus::render(&c, &k, &m);
                std::io::stdout().lock().write_all(t.as_bytes())?;
                Ok(true)
            })
        }
        Cmd::Platform(PlatformCmd::Show { file, json }) => platform_show(&file, json),
        Cmd::Workload(WorkloadCmd::Check {
            file,
            nr_cpus,
            verbose,
            json,
            strict,
        }) => workload_check(&file, nr_cpus, verbose, json, strict),
    };
    schedmath_host::exit_code(result)
}
