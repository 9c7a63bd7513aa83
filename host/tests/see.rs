// SPDX-License-Identifier: GPL-2.0-only
//! Seeing a run: `simulate --plot`, `compare --plot --report`, `explain`, their bad
//! inputs, and the report rendered by a real browser (Debian's `chromium`).
//!
//! The browser check: `chromium --headless --enable-logging=stderr --v=0 --screenshot`
//! logs every console message of the page (errors, uncaught exceptions, failed loads) as
//! a `:CONSOLE` line on stderr. The test first renders a probe page that throws and
//! requires its line to appear (so a chromium that logs differently fails the test
//! instead of passing it blind), then renders the report and requires none. Without
//! chromium the test fails, unless `SCHEDMATH_SKIP_CHROMIUM=1` is set (local runs only;
//! `.ci/run` installs chromium).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn out_dir(name: &str) -> PathBuf {
    let d = root().join("target/see-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const RUN: &[&str] = &[
    "--platform",
    "fixtures/platforms/m1pro-8c.toml",
    "--workload",
    "fixtures/scenarios/busy-plus-4x5pct.toml",
    "--duration",
    "2",
];

fn cli(cmd: &str, extra: &[&str]) -> (i32, String, String) {
    cli_run(cmd, RUN, extra)
}

/// Two light periodic tasks: the root domain stays below overutilized, so wake-ups go
/// through `find_energy_efficient_cpu()`.
const RUN_EAS: &[&str] = &[
    "--platform",
    "fixtures/platforms/m1pro-8c.toml",
    "--workload",
    "fixtures/scenarios/two-periodic.toml",
    "--duration",
    "1",
];

fn cli_run(cmd: &str, run: &[&str], extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .arg(cmd)
        .args(run)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The value of `key=` in a trace text line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

/// The seconds of a trace text line (`COMM-PID [CPU] SECONDS: EVENT: ...`).
fn ts_ns(line: &str) -> u64 {
    let secs = line
        .split(": ")
        .next()
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap();
    let (a, b) = secs.split_once('.').unwrap();
    a.parse::<u64>().unwrap() * 1_000_000_000 + b.parse::<u64>().unwrap() * 1000
}

/// The number after `prefix` in explain's output.
fn after<'a>(text: &'a str, prefix: &str) -> &'a str {
    let i = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no `{prefix}` in:\n{text}"))
        + prefix.len();
    text[i..]
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches(',')
}

/// The last line of `trace` at or before `at_ns` of `event` whose `key` is `val` (any,
/// without a key).
fn last_event<'a>(trace: &'a str, at_ns: u64, event: &str, key: Option<(&str, &str)>) -> &'a str {
    let tag = format!(" {event}: ");
    trace
        .lines()
        .skip(1)
        .filter(|l| ts_ns(l) <= at_ns && l.contains(&tag))
        .filter(|l| key.is_none_or(|(k, v)| field(l, k) == Some(v)))
        .last()
        .unwrap_or_else(|| panic!("no {event} {key:?}"))
}

#[test]
fn explain_prints_the_values_the_trace_recorded() {
    let d = out_dir("explain");
    let txt = d.join("run.txt");
    let (rc, _, err) = cli("simulate", &["--trace", s(&txt)]);
    assert_eq!(rc, 0, "{err}");
    let trace = std::fs::read_to_string(&txt).unwrap();
    let at_ns = 1_500_000_000u64;
    for cpu in [0u32, 2, 5] {
        let (rc, text, err) = cli("explain", &["--at", "1.5", "--cpu", &cpu.to_string()]);
        assert_eq!(rc, 0, "{err}");
        let before = || trace.lines().skip(1).filter(|l| ts_ns(l) <= at_ns);
        let c = cpu.to_string();
        // The frequency: the CPU's last cpu_frequency event.
        let freq = field(
            last_event(&trace, at_ns, "cpu_frequency", Some(("cpu_id", &c))),
            "state",
        )
        .unwrap();
        assert_eq!(after(&text, "cpu_frequency: "), freq, "cpu{cpu}:\n{text}");
        // schedutil: the last update of the CPU's domain (its `cpus` lists the CPU).
        let sugov = before()
            .filter(|l| {
                l.contains(" schedmath__sugov: ")
                    && field(l, "cpus")
                        .unwrap()
                        .split(',')
                        .any(|c| c.split(':').next() == Some(&cpu.to_string()))
            })
            .last()
            .unwrap();
        assert_eq!(
            after(&text, "raw frequency (cached_raw_freq): "),
            field(sugov, "raw_freq").unwrap()
        );
        assert_eq!(
            after(&text, "resolved to an OPP: "),
            field(sugov, "resolved_freq").unwrap()
        );
        assert_eq!(
            after(&text, "next frequency: "),
            field(sugov, "next_freq").unwrap()
        );
        // Each CPU's util with headroom and clamps, as recorded.
        for c in field(sugov, "cpus").unwrap().split(',') {
            let parts: Vec<&str> = c.split(':').collect();
            let util = parts.iter().find_map(|p| p.strip_prefix("util=")).unwrap();
            let cfs = parts.iter().find_map(|p| p.strip_prefix("cfs=")).unwrap();
            let row = text
                .lines()
                .find(|l| {
                    l.trim_start().starts_with(&format!("cpu{} ", parts[0]))
                        && l.split_whitespace().count() == 10
                })
                .unwrap();
            let cols: Vec<&str> = row.split_whitespace().collect();
            assert_eq!((cols[1], cols[7]), (cfs, util), "{row}");
        }
        // The idle selection: the CPU's last one, and the rule the governor returned.
        let idle = last_event(&trace, at_ns, "schedmath__idle_select", Some(("cpu", &c)));
        assert_eq!(after(&text, "rule: "), field(idle, "rule").unwrap());
        assert_eq!(
            after(&text, "sleep length "),
            field(idle, "sleep_length").unwrap()
        );
        assert_eq!(
            after(&text, ", cpu util "),
            field(idle, "cpu_util").unwrap()
        );
        // Overutilized: the last change.
        let ou = last_event(&trace, at_ns, "schedmath__overutilized", None);
        assert_eq!(
            after(&text, "that CPU: util_avg "),
            field(ou, "util_avg").unwrap()
        );
        assert_eq!(
            after(&text, "overutilized\n  "),
            if field(ou, "overutilized") == Some("1") {
                "yes"
            } else {
                "no"
            }
        );
    }
}

/// The explain row of CPU `cpu` in the placement's candidate table (7 words, 9 with the
/// chosen mark).
fn candidate_row<'a>(text: &'a str, cpu: &str) -> Vec<&'a str> {
    let after_header = text
        .split("allowed  idle  fits")
        .nth(1)
        .unwrap_or_else(|| panic!("no candidate table in:\n{text}"));
    after_header
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.first() == Some(&format!("cpu{cpu}").as_str()))
        .unwrap_or_else(|| panic!("no row for cpu{cpu} in:\n{text}"))
}

#[test]
fn explain_prints_what_find_energy_efficient_cpu_computed() {
    let d = out_dir("explain-eas");
    let txt = d.join("run.txt");
    let (rc, _, err) = cli_run("simulate", RUN_EAS, &["--trace", s(&txt)]);
    assert_eq!(rc, 0, "{err}");
    let trace = std::fs::read_to_string(&txt).unwrap();
    let placements: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains(" schedmath__placement: "))
        .collect();
    // The last EAS placement that priced a domain, with no later placement onto the same
    // CPU within its microsecond (explain shows the last one up to --at).
    let (_, eas) = placements
        .iter()
        .enumerate()
        .rev()
        .find(|(i, l)| {
            field(l, "rule") == Some("eas")
                && field(l, "pd_energy") != Some("-")
                && !placements[i + 1..]
                    .iter()
                    .any(|m| ts_ns(m) == ts_ns(l) && field(m, "dst_cpu") == field(l, "dst_cpu"))
        })
        .expect("an EAS placement that priced a performance domain");
    let cpu = field(eas, "dst_cpu").unwrap();
    let at = format!("{}ns", ts_ns(eas) + 999);
    let (rc, text, err) = cli_run("explain", RUN_EAS, &["--at", &at, "--cpu", cpu]);
    assert_eq!(rc, 0, "{err}");
    assert!(text.contains("by rule `eas` ("), "{text}");
    // Each domain's energies as the core returned them.
    for pd in field(eas, "pd_energy").unwrap().split(',') {
        let parts: Vec<&str> = pd.split(':').collect();
        let value = |key: &str| {
            parts
                .iter()
                .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
                .unwrap()
        };
        let mut line = format!(
            "perf domain of cpu{}: base {}, with the task on prev {}",
            parts[0],
            value("base"),
            value("prev")
        );
        if let Some(spare) = parts.iter().find(|p| p.starts_with("cpu")) {
            let (c, e) = spare.split_once('=').unwrap();
            line += &format!(", on max-spare {c} {e}");
        }
        assert!(
            text.contains(&format!("{line}\n")),
            "`{line}` not in:\n{text}"
        );
    }
    // Each CPU's fits and spare capacity as the core returned them.
    for c in field(eas, "cpus").unwrap().split(',') {
        let parts: Vec<&str> = c.split(':').collect();
        let value = |key: &str| {
            parts
                .iter()
                .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
                .unwrap()
        };
        let row = candidate_row(&text, parts[0]);
        let fits = match value("fits") {
            "1" => "yes",
            "-1" => "min",
            _ => "no",
        };
        assert_eq!((row[3], row[4]), (fits, value("spare")), "{row:?}");
    }
}

#[test]
fn explain_outside_the_run_is_exit_2() {
    for (at, cpu) in [("2.5", "0"), ("3000ms", "0"), ("soon", "0"), ("1", "8")] {
        let (rc, out, err) = cli("explain", &["--at", at, "--cpu", cpu]);
        assert_eq!(rc, 2, "{at} {cpu}: {out}{err}");
        assert!(err.contains("--at") || err.contains("--cpu 8"), "{err}");
    }
}

#[test]
fn plot_writes_an_svg_with_lanes_and_legends() {
    let d = out_dir("plot");
    let svg = d.join("run.svg");
    let (rc, _, err) = cli("simulate", &["--plot", s(&svg)]);
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..80]);
    for want in [
        "cpu0",
        "cpu7",
        "overutil.",
        "busy-0-1 util_avg",
        "small-3-5 util_est",
        "MHz",
    ] {
        assert!(text.contains(want), "no {want}");
    }
    // No font file, image or stylesheet is referenced.
    assert!(!text.contains("@font-face") && !text.contains("href") && !text.contains("url("));
    let (rc, _, err) = cli(
        "compare",
        &[
            "--base",
            "mainline",
            "--patch",
            "ou-lone-task",
            "--plot",
            s(&d.join("cmp.svg")),
        ],
    );
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(d.join("cmp.svg")).unwrap();
    assert!(
        text.contains("base cpu0")
            && text.contains("patch cpu0")
            && text.contains("patch busy-0-1")
    );
}

#[test]
fn bad_outputs_are_exit_2_and_leave_nothing() {
    let d = out_dir("bad");
    let cases: [(&str, Vec<String>, &str); 4] = [
        (
            "simulate",
            vec!["--plot".into(), s(&d.join("run.png")).into()],
            "--plot writes .svg files",
        ),
        (
            "compare",
            vec![
                "--base".into(),
                "mainline".into(),
                "--patch".into(),
                "ou-lone-task".into(),
                "--report".into(),
                s(&d.join("r.htm")).into(),
            ],
            "--report writes .html files",
        ),
        (
            "simulate",
            vec!["--plot".into(), s(&d.join("no/such/dir/run.svg")).into()],
            "cannot write --plot",
        ),
        (
            "compare",
            vec![
                "--base".into(),
                "mainline".into(),
                "--patch".into(),
                "ou-lone-task".into(),
                "--report".into(),
                s(&d.join("no/r.html")).into(),
            ],
            "cannot write --report",
        ),
    ];
    for (cmd, args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (rc, _, err) = cli(cmd, &args);
        assert_eq!(rc, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "{args:?} left a file"
        );
    }
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| Path::new(d).join(n))
                .find(|p| p.is_file())
        })
}

/// Renders `page` headless, screenshot to `png`; returns its console lines.
fn render(chromium: &Path, page: &Path, png: &Path) -> Vec<String> {
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,2400",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::metadata(png).unwrap().len() > 10_000,
        "screenshot too small"
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

#[test]
fn report_is_self_contained_and_renders_without_console_errors() {
    let d = out_dir("report");
    let html = d.join("cmp.html");
    let (rc, _, err) = cli(
        "compare",
        &[
            "--base",
            "mainline",
            "--patch",
            "ou-lone-task",
            "--report",
            s(&html),
        ],
    );
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(&html).unwrap();
    for want in [
        "<svg",
        "busy-plus-4x5pct.toml",
        "m1pro-8c",
        "ou_pct",
        "mainline",
        "seed",
        "compare --platform",
    ] {
        assert!(text.contains(want), "no {want}");
    }
    renders_cleanly(&d, &html, &text);
}

/// `html` (its `text`) references nothing outside and renders in chromium with no
/// console message (see the module doc).
fn renders_cleanly(d: &Path, html: &Path, text: &str) {
    for bad in ["<script", "<link", "src=", "href=", "url(", "@import"] {
        assert!(
            !text.contains(bad),
            "the report references something outside: {bad}"
        );
    }
    let Some(chromium) = chromium() else {
        if std::env::var_os("SCHEDMATH_SKIP_CHROMIUM").is_some_and(|v| v == "1") {
            eprintln!("skipped: no chromium and SCHEDMATH_SKIP_CHROMIUM=1");
            return;
        }
        panic!("chromium not found on PATH: install Debian's `chromium` (apt-get install -y chromium) or set SCHEDMATH_SKIP_CHROMIUM=1 to skip locally");
    };
    let probe = d.join("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><p>probe</p><script>throw new Error('probe-error')</script>",
    )
    .unwrap();
    let lines = render(&chromium, &probe, &d.join("probe.png"));
    assert!(
        lines.iter().any(|l| l.contains("probe-error")),
        "chromium did not log the probe's error: {lines:?}"
    );
    let lines = render(&chromium, html, &html.with_extension("png"));
    assert!(lines.is_empty(), "console messages: {lines:?}");
}

#[test]
fn study_report_holds_the_study_file_table_and_one_plot_per_run() {
    let d = out_dir("study");
    // Beside the scenarios' parent, so its relative paths resolve.
    let file = d.join("t.toml");
    std::fs::write(
        &file,
        "study = \"t\"\ndescription = \"test\"\nprofiles = [\"mainline\", \"ou-lone-task\"]\nduration_s = 1\ncolumns = [\"ou_pct\"]\n\n[[case]]\nlabel = \"c\"\nplatform = \"../../../fixtures/platforms/rk3399.toml\"\nworkload = \"../../../fixtures/scenarios/ou-lone-task/busy.toml\"\n",
    )
    .unwrap();
    let html = d.join("t.html");
    let plots = d.join("plots");
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(["study", s(&file), "--report", s(&html), "--plot", s(&plots)])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&html).unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ou-lone-task/busy.toml") && text.contains("ou_pct"));
    // The table as the CLI prints it, escaped.
    let first = table.lines().next().unwrap();
    assert!(text.contains(
        &first
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    ));
    // One run per profile: one timeline each, inline and as CASE.PROFILE.svg.
    assert_eq!(text.matches("<svg").count(), 2);
    for h in ["Timeline: c (mainline)", "Timeline: c (ou-lone-task)"] {
        assert!(text.contains(h), "no {h}");
    }
    for f in ["c.mainline.svg", "c.ou-lone-task.svg"] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("busy-0-1 util_avg"),
            "{f}"
        );
    }
    renders_cleanly(&d, &html, &text);
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(["study", s(&file), "--report", s(&d.join("t.svg"))])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.join("t.svg").exists());
}

/// `simulate` of `workload` on `platform` for `secs`, traced as text; the trace.
fn trace_text(d: &Path, platform: &str, workload: &str, secs: &str) -> String {
    let txt = d.join("run.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .current_dir(root())
        .args(["simulate", "--platform", platform, "--workload", workload])
        .args(["--duration", secs, "--trace", s(&txt)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::read_to_string(&txt).unwrap()
}

#[test]
fn uclamp_util_se_clamps_each_tasks_util_by_its_rq() {
    // Four hogs on the laptop; hog-1 gets uclamp_max 0 in its second phase.
    let d = out_dir("uclamp");
    let t = trace_text(
        &d,
        "fixtures/platforms/laptop-2c4t.toml",
        "fixtures/scenarios/uclamp-busy-filter/hogs-util-max-0.json",
        "1",
    );
    let ev: Vec<&str> = t
        .lines()
        .filter(|l| l.contains(" lisa__uclamp_util_se: "))
        .collect();
    assert!(ev.len() > 100, "{}", ev.len());
    // LISA's field order, and hog-1 capped to 0 while it runs flat out.
    assert!(t.contains(" 0.556000: lisa__uclamp_util_se: pid=2 comm=hog-1 cpu=1 util_avg=1022 uclamp_avg=0 uclamp_min=0 uclamp_max=0"));
    assert!(t.contains(" 0.204000: lisa__uclamp_util_se: pid=1 comm=hog-0 cpu=0 util_avg=1014 uclamp_avg=1014 uclamp_min=0 uclamp_max=1024"));
    // Every value is uclamp_rq_util_with(): util_avg clamped to [min, max] (min when the
    // clamps cross), and a pelt_se event of the same task stands beside it.
    for l in &ev {
        let n = |k: &str| field(l, k).unwrap().parse::<u64>().unwrap();
        let (u, lo, hi) = (n("util_avg"), n("uclamp_min"), n("uclamp_max"));
        let want = if lo >= hi { lo } else { u.clamp(lo, hi) };
        assert_eq!(n("uclamp_avg"), want, "{l}");
    }
    let se = t
        .lines()
        .filter(|l| l.contains(" lisa__sched_pelt_se: ") && l.contains("path=(null)"))
        .count();
    assert_eq!(se, ev.len());
}

#[test]
fn cgroup_workload_traces_group_entities_and_cfs_rqs_with_their_path() {
    // The lab's cgroup-weight workload: /fg and /bg groups.
    let d = out_dir("cgroup");
    let t = trace_text(
        &d,
        "fixtures/platforms/lab-qemu-2c.toml",
        "fixtures/lab/workloads/cgroup-weight.json",
        "1",
    );
    for path in ["/fg", "/bg"] {
        // As the lab's 6.12 capture prints a group entity: path, comm=(null), pid=-1.
        let se = format!("lisa__sched_pelt_se:  cpu=0 path={path} comm=(null) pid=-1 ");
        let cfs = format!("lisa__sched_pelt_cfs: cpu=0 path={path} ");
        let probe = format!("fn=se kind=group cpu=0 pid=-1 comm=(null) path={path} ");
        for want in [&se, &cfs, &probe] {
            assert!(t.contains(want.as_str()), "no `{want}`");
        }
    }
    assert!(t.contains(" 0.192000: lisa__sched_pelt_cfs: cpu=0 path=/fg load=1004 util=903 update_time=1191999488 runnable=1004"));
    // Tasks keep path=(null); the root cfs_rq keeps path=/.
    assert!(t.contains("lisa__sched_pelt_cfs: cpu=0 path=/ "));
}
