// SPDX-License-Identifier: GPL-2.0-only
//! `lab run`: one workload on one kernel under QEMU, traced; see fixtures/lab/README.md
//! for what lands in `--out`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use super::fetch::{self, Kernel};
use super::{cmd, initramfs, lab_dir, probe, workload, Accel, RunArgs};

/// Events recorded besides the probe's (`schedmath:*`, `lisa:*`).
pub const KERNEL_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_wakeup_new",
    "sched:sched_migrate_task",
    "sched:sched_process_fork",
    "sched:sched_process_exit",
    // exec's sched_exec() balance, whose find_idlest_cpu() syncs the running task's PELT
    // even when it stays (fair.c); the exec also renames the task
    "sched:sched_process_exec",
    // update_curr()'s: the exact instant of each dequeue's, tick's and put_prev's
    // runtime accounting, which no other recorded event marks (fair.c)
    "sched:sched_stat_runtime",
    "power:cpu_idle",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    // a cgroup.procs write: cpu_cgroup_attach()'s sched_move_task() detaches the task's
    // load from one cfs_rq and attaches it to another (core.c), with no sched event
    "cgroup:cgroup_attach_task",
];

/// Events recorded only where a trace-cmd filter (`-f`) holds: the SCHED softirq's
/// entry and exit (vector 7, SCHED_SOFTIRQ): where the tick's load balance ran
/// (run_rebalance_domains() / sched_balance_softirq(), fair.c, which update the blocked
/// averages first); the other vectors would only add lines.
pub const FILTERED_EVENTS: &[(&str, &str)] = &[
    ("irq:softirq_entry", "vec==7"),
    ("irq:softirq_exit", "vec==7"),
];

/// Modules the results disk needs (virtio PCI transport and block driver); built-in ones
/// are skipped.
const GUEST_MODULES: &[&str] = &["virtio_pci", "virtio_blk"];

/// Results disk size (sparse): room for trace.dat of a few seconds of every event.
const DISK_BYTES: u64 = 4 << 30;

/// How long a KVM guest may take to print its first line before the lab calls KVM
/// broken here and uses TCG.
const KVM_BOOT_LIMIT: Duration = Duration::from_secs(40);

fn config_value(config: &str, key: &str) -> Option<String> {
    config
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(|v| v.trim_matches('"').to_string())
}

/// What the host saw on the guest console.
#[derive(Default, Debug)]
struct Console {
    booted: Option<f64>,
    run_start: Option<f64>,
    run_end: Option<f64>,
    done: bool,
    errors: Vec<String>,
    kvm_failure: bool,
    calibration_ns: Option<u64>,
}

fn scan_console(text: &str, t: f64, c: &mut Console) {
    if text.contains("emulation failure") || text.contains("KVM internal error") {
        c.kvm_failure = true;
    }
    for l in text.lines() {
        let Some(i) = l.find("lab: ") else { continue };
        let m = &l[i + 5..];
        if m.starts_with("booted") {
            c.booted.get_or_insert(t);
        } else if m.starts_with("run start") {
            c.run_start.get_or_insert(t);
        } else if m.starts_with("run end") {
            c.run_end.get_or_insert(t);
        } else if let Some(n) = m.strip_prefix("calibration ns=") {
            c.calibration_ns = n.trim().parse().ok();
        } else if m.starts_with("done") {
            c.done = true;
        } else if let Some(e) = m.strip_prefix("error: ") {
            if !c.errors.iter().any(|x| x == e) {
                c.errors.push(e.to_string());
            }
        }
    }
}

/// Boot the guest once; `Ok(None)` when KVM was tried and failed early (caller retries
/// with TCG).
fn boot(
    work: &Path,
    k: &Kernel,
    args: &RunArgs,
    kvm: bool,
    timeout: Duration,
) -> anyhow::Result<Option<(Console, f64)>> {
    let disk = work.join("results.img");
    let f = std::fs::File::create(&disk)?;
    f.set_len(DISK_BYTES)?;
    drop(f);
    let console = work.join("console.txt");
    let mut c = Command::new("qemu-system-x86_64");
    if kvm {
        c.args(["-accel", "kvm", "-cpu", "host"]);
    } else {
        c.args(["-accel", "tcg", "-cpu", "max"]);
        if let Some(s) = args.icount {
            c.args(["-icount", &format!("shift={s},sleep=off")]);
        }
    }
    c.arg("-smp")
        .arg(args.cpus.to_string())
        .arg("-m")
        .arg(args.mem_mb.to_string())
        .arg("-kernel")
        .arg(k.vmlinuz())
        .arg("-initrd")
        .arg(work.join("initrd.cpio"))
        .args([
            "-append",
            "console=ttyS0 panic=-1 noautogroup quiet",
            "-display",
            "none",
            "-monitor",
            "none",
            "-no-reboot",
            "-serial",
        ])
        .arg(format!("file:{}", console.display()))
        .arg("-drive")
        .arg(format!("file={},format=raw,if=virtio", disk.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(work.join("qemu.log"))?)
        .stderr(std::fs::File::create(work.join("qemu.err"))?);
    let start = Instant::now();
    let mut child = c.spawn().context("starting qemu-system-x86_64")?;
    let mut con = Console::default();
    let status = loop {
        let t = start.elapsed().as_secs_f64();
        let text = std::fs::read(&console).unwrap_or_default();
        scan_console(&String::from_utf8_lossy(&text), t, &mut con);
        if kvm {
            // qemu reports a KVM failure on its stderr and then stalls
            let err = std::fs::read(work.join("qemu.err")).unwrap_or_default();
            scan_console(&String::from_utf8_lossy(&err), t, &mut con);
        }
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if kvm && con.booted.is_none() && (con.kvm_failure || start.elapsed() > KVM_BOOT_LIMIT) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "the guest did not finish in {} s (last console lines in {}: {})",
                timeout.as_secs(),
                console.display(),
                tail(&String::from_utf8_lossy(&text), 3)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = std::fs::read(&console).unwrap_or_default();
    scan_console(
        &String::from_utf8_lossy(&text),
        start.elapsed().as_secs_f64(),
        &mut con,
    );
    if kvm && con.booted.is_none() {
        return Ok(None);
    }
    if !con.errors.is_empty() && !con.done {
        bail!(
            "the guest reported: {} (console: {})",
            con.errors.join("; "),
            console.display()
        );
    }
    if !status.success() || !con.done {
        let err = std::fs::read_to_string(work.join("qemu.err")).unwrap_or_default();
        bail!(
            "qemu ended ({status}) before the guest finished: {}{}",
            tail(&err, 3),
            tail(&String::from_utf8_lossy(&text), 5)
        );
    }
    Ok(Some((con, start.elapsed().as_secs_f64())))
}

fn tail(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    v[v.len().saturating_sub(n)..].join(" | ")
}

/// `trace-cmd report -t` of `dat` into `report` (the host's trace-cmd): `-t` prints the
/// stamps in full ns instead of rounding them to µs.
pub fn report(dat: &Path, report: &Path) -> anyhow::Result<()> {
    let mut c = Command::new("trace-cmd");
    c.arg("report").arg("-t").arg("-i").arg(dat);
    let o = cmd::run(c, Duration::from_secs(600), "trace-cmd report")?;
    std::fs::write(report, o.stdout)?;
    Ok(())
}

/// Keep the committed part of a capture: the rt-app file, meta.json, probe-stats.txt and
/// the report, gzipped (`gzip -9n`: no name or time stamp, so reruns compare).
fn store_fixture(raw: &Path, dst: &Path, name: &str) -> anyhow::Result<()> {
    if dst.exists() {
        std::fs::remove_dir_all(dst)?;
    }
    std::fs::create_dir_all(dst)?;
    for f in [
        format!("{name}.json"),
        "meta.json".into(),
        "probe-stats.txt".into(),
    ] {
        std::fs::copy(raw.join(&f), dst.join(&f)).with_context(|| format!("copying {f}"))?;
    }
    let mut c = Command::new("gzip");
    c.args(["-9nc"]).arg(raw.join("report.txt"));
    let o = cmd::run(c, Duration::from_secs(300), "gzip report.txt")?;
    std::fs::write(dst.join("report.txt.gz"), o.stdout)?;
    Ok(())
}

/// Events per name in a `trace-cmd report` text.
pub fn count_events(report: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for l in report.lines() {
        // "comm-pid [cpu] ts: event: fields"
        let Some(b) = l.find("]") else { continue };
        let rest = &l[b + 1..];
        let mut parts = rest.splitn(3, ": ");
        let _ts = parts.next();
        if let Some(ev) = parts.next() {
            let ev = ev.trim();
            if !ev.is_empty() && !ev.contains(' ') {
                *m.entry(ev.to_string()).or_insert(0) += 1;
            }
        }
    }
    m
}

pub fn run(root: &Path, args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    if !(1..=64).contains(&args.cpus) {
        bail!("--cpus {}: 1 to 64", args.cpus);
    }
    if args.icount.is_some() && args.accel == Accel::Kvm {
        bail!("--icount needs TCG (--accel tcg or auto)");
    }
    if args.icount.is_some_and(|s| s > 10) {
        bail!("--icount shift: 0 to 10");
    }
    let wl_path = &args.workload;
    let text = std::fs::read_to_string(wl_path)
        .with_context(|| format!("reading {}", wl_path.display()))?;
    let name = wl_path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| anyhow!("{}: no file name", wl_path.display()))?
        .to_string();
    let split = workload::split(&text, &wl_path.display().to_string(), args.duration)?;

    let lab = lab_dir(root);
    let (kernel, user) = fetch::fetch_all(&lab, args.kernel, false, out)?;
    let ko = probe::build(root, &lab, &kernel)?;
    cmd::ensure_tools(&[("trace-cmd", "trace-cmd"), ("tar", "tar")])?;
    // bookworm's qemu 7.2 conflicts with newer qemu-utils; backports' does not
    if !cmd::have("qemu-system-x86_64") {
        fetch::ensure_apt(out)?;
        cmd::ensure_tools_from(
            &[("qemu-system-x86_64", "qemu-system-x86")],
            Some("bookworm-backports"),
        )?;
    }

    // boot: KVM when asked or when it is known to work here, else TCG
    let kvm_verdict = lab.join("kvm-verdict");
    let timeout = Duration::from_secs(
        args.timeout
            .unwrap_or(120 + 40 * u64::from(split.duration_s)),
    );
    let try_kvm = match args.accel {
        Accel::Kvm => true,
        Accel::Tcg => false,
        Accel::Auto => {
            args.icount.is_none()
                && std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/kvm")
                    .is_ok()
                && std::fs::read_to_string(&kvm_verdict).map_or(true, |v| v.starts_with("works"))
        }
    };
    // initramfs
    let mut a = initramfs::Archive::default();
    for d in ["proc", "sys", "dev", "tmp", "out", "lib/modules"] {
        a.dir(d);
    }
    a.chardev("dev/console", 5, 1);
    let init = std::fs::read(root.join("xtask/lab/init.sh"))?;
    a.file("init", init, 0o755);
    a.copy("bin/busybox", &user.root.join("bin/busybox"))?;
    a.copy("usr/bin/rt-app", &user.root.join("usr/bin/rt-app"))?;
    a.copy("usr/bin/trace-cmd", &user.root.join("usr/bin/trace-cmd"))?;
    a.copy_tree(
        "lib/x86_64-linux-gnu",
        &user.root.join("lib/x86_64-linux-gnu"),
        &[],
    )?;
    a.copy_tree(
        "usr/lib/x86_64-linux-gnu",
        &user.root.join("usr/lib/x86_64-linux-gnu"),
        &["gconv", "audit"],
    )?;
    a.copy_tree("lib64", &user.root.join("lib64"), &[])?;
    let mods = initramfs::modules(&kernel.modules(), GUEST_MODULES)?;
    let mut names = Vec::new();
    for (n, bytes) in mods {
        a.file(&format!("lib/modules/{n}"), bytes, 0o644);
        names.push(n);
    }
    a.copy("lab/schedmath_probe.ko", &ko)?;
    let mut events: Vec<String> = KERNEL_EVENTS.iter().map(|e| format!("-e {e}")).collect();
    // init.sh splits $EVENTS on blanks: a filter must hold none
    events.extend(
        FILTERED_EVENTS
            .iter()
            .map(|(e, f)| format!("-e {e} -f {f}")),
    );
    events.push("-e schedmath".into());
    events.push("-e lisa".into());
    // rt-app's ns per loop, measured once per accelerator and icount shift (guest ns
    // per instruction is 2^shift, so the ns per loop scales with it) and kept
    let tcg_key = |kvm: bool| match (kvm, args.icount) {
        (true, _) => "kvm".to_string(),
        (false, None) => "tcg".to_string(),
        (false, Some(s)) => format!("tcg-icount{s}"),
    };
    let calib_path = |accel: &str| lab.join(format!("rtapp-calibration-{accel}"));
    let calib_for = |accel: &str| {
        std::fs::read_to_string(calib_path(accel))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    a.file(
        "lab/config.sh",
        format!(
            "MODULES=\"{}\"\nEVENTS=\"{}\"\nBUFFER_KB={}\nCALIBRATION={}\n",
            names.join(" "),
            events.join(" "),
            args.buffer_kb,
            calib_for(&tcg_key(try_kvm)).map_or(String::new(), |n| n.to_string())
        )
        .into_bytes(),
        0o644,
    );
    let mut groups = String::new();
    for (i, g) in split.groups.iter().enumerate() {
        groups.push_str(&format!("{i}\n"));
        a.file(
            &format!("lab/group-{i}.json"),
            g.json.clone().into_bytes(),
            0o644,
        );
        a.file(
            &format!("lab/group-{i}.cg"),
            format!("{} {} {}\n", g.path, g.weight, u8::from(g.idle)).into_bytes(),
            0o644,
        );
    }
    a.file("lab/groups", groups.into_bytes(), 0o644);
    let work = lab.join(format!("run-{}", std::process::id()));
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let mut cpio = std::io::BufWriter::new(std::fs::File::create(work.join("initrd.cpio"))?);
    a.write(&mut cpio)?;
    cpio.flush()?;
    drop(cpio);

    writeln!(
        out,
        "lab run: {} on {} ({} CPUs, {}), {} s",
        name,
        kernel.release,
        args.cpus,
        if try_kvm { "KVM" } else { "TCG" },
        split.duration_s
    )?;
    let mut accel = if try_kvm { "kvm" } else { "tcg" };
    let mut result = boot(&work, &kernel, args, try_kvm, timeout)?;
    if try_kvm {
        let verdict = if result.is_some() {
            "works\n".to_string()
        } else {
            "broken: no guest output within the limit or a KVM emulation failure\n".to_string()
        };
        std::fs::write(&kvm_verdict, &verdict)?;
        if result.is_none() {
            if args.accel == Accel::Kvm {
                bail!("KVM: {verdict}(see {})", work.join("qemu.err").display());
            }
            writeln!(
                out,
                "lab run: KVM does not boot this kernel here ({}); using TCG",
                verdict.trim()
            )?;
            accel = "tcg";
            result = boot(&work, &kernel, args, false, timeout)?;
        }
    }
    let (con, total_s) = result.ok_or_else(|| anyhow!("the guest did not boot"))?;
    if args.icount.is_some() && accel == "tcg" {
        accel = "tcg-icount";
    }
    let calib_key = tcg_key(accel == "kvm");
    if let (Some(n), None) = (con.calibration_ns, calib_for(&calib_key)) {
        std::fs::write(calib_path(&calib_key), format!("{n}\n"))?;
    }

    // results
    let out_dir = match (&args.out, args.fixture) {
        (Some(o), _) => o.clone(),
        (None, _) => root.join("fixtures/lab").join(&kernel.release).join(&name),
    };
    let raw_dir = if args.fixture {
        work.join("results")
    } else {
        out_dir.clone()
    };
    std::fs::create_dir_all(&raw_dir)?;
    let mut c = Command::new("tar");
    c.arg("-xf")
        .arg(work.join("results.img"))
        .arg("-C")
        .arg(&raw_dir);
    cmd::run(c, Duration::from_secs(300), "tar: reading the results disk")?;
    if !con.errors.is_empty() {
        bail!("the guest reported: {}", con.errors.join("; "));
    }
    let dat = raw_dir.join("trace.dat");
    let report_path = raw_dir.join("report.txt");
    report(&dat, &report_path)?;
    let report_text = std::fs::read_to_string(&report_path)?;
    let counts = count_events(&report_text);
    std::fs::write(raw_dir.join(format!("{name}.json")), &text)?;

    let guest = std::fs::read_to_string(raw_dir.join("guest.txt")).unwrap_or_default();
    let gv = |k: &str| config_value(&guest, k);
    let config = std::fs::read_to_string(kernel.headers().join(".config")).unwrap_or_default();
    let preempt = gv("preempt").and_then(|p| {
        let i = p.find('(')?;
        let j = p[i..].find(')')?;
        Some(p[i + 1..i + j].to_string())
    });
    let mut packages: BTreeMap<String, String> = kernel.packages.iter().cloned().collect();
    packages.extend(
        user.packages
            .iter()
            .filter(|(n, _)| {
                ["busybox-static", "rt-app", "trace-cmd"].contains(&n.as_str())
                    || n.starts_with("libtrace")
            })
            .cloned(),
    );
    let cgroups: BTreeMap<String, Value> = split
        .groups
        .iter()
        .filter(|g| g.path != "/")
        .map(|g| {
            (
                g.path.clone(),
                json!({"cpu.weight": g.weight, "cpu.idle": u8::from(g.idle), "tasks": g.tasks}),
            )
        })
        .collect();
    let round = |x: f64| (x * 10.0).round() / 10.0;
    let meta = json!({
        "kernel": kernel.release,
        "packages": packages,
        "workload": name,
        "cpus": args.cpus,
        "accel": accel,
        "icount_shift": if accel == "tcg-icount" { args.icount } else { None },
        "duration_s": split.duration_s,
        "hz": config_value(&config, "CONFIG_HZ").and_then(|v| v.parse::<u32>().ok()),
        "preempt": preempt,
        "cpuidle_driver": gv("cpuidle_driver"),
        "clocksource": gv("clocksource"),
        "kallsyms": {
            "__update_load_avg_se": gv("kallsyms___update_load_avg_se") == Some("1".into()),
            "__update_load_avg_blocked_se": gv("kallsyms___update_load_avg_blocked_se") == Some("1".into()),
            "__update_load_avg_cfs_rq": gv("kallsyms___update_load_avg_cfs_rq") == Some("1".into()),
        },
        "cgroups": cgroups,
        "rtapp_calibration_ns": con.calibration_ns,
        "boot_s": con.booted.map(round),
        "to_run_start_s": con.run_start.map(round),
        "run_s": con.run_start.zip(con.run_end).map(|(a, b)| round(b - a)),
        "total_s": round(total_s),
        "events": counts,
    });
    std::fs::write(
        raw_dir.join("meta.json"),
        serde_json::to_string_pretty(&meta)? + "\n",
    )?;
    if args.fixture {
        store_fixture(&raw_dir, &out_dir, &name)?;
    }
    let _ = std::fs::remove_dir_all(&work);
    let probe_events = counts.get("schedmath__pelt_update").copied().unwrap_or(0);
    writeln!(
        out,
        "lab run: {} events ({probe_events} schedmath__pelt_update), boot {:.1} s, run {:.1} s, total {:.1} s; {}",
        counts.values().sum::<u64>(),
        con.booted.unwrap_or(0.0),
        con.run_start.zip(con.run_end).map_or(0.0, |(a, b)| b - a),
        total_s,
        out_dir.display()
    )?;
    if probe_events == 0 {
        bail!(
            "{}: no schedmath__pelt_update events",
            report_path.display()
        );
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_report_events() {
        let r = "cpus=2\n          <idle>-0     [000]    41.199899: sched_switch:         swapper/0:0 [120] R ==> x:1 [120]\n\
                 p25-172   [001]    40.135791: schedmath__pelt_update: fn=se kind=task\n";
        let c = count_events(r);
        assert_eq!(c["sched_switch"], 1);
        assert_eq!(c["schedmath__pelt_update"], 1);
    }

    #[test]
    fn console_markers() {
        let mut c = Console::default();
        scan_console(
            "x\nlab: booted 6.1 uptime=3\nlab: error: boom\n",
            1.5,
            &mut c,
        );
        assert_eq!(c.booted, Some(1.5));
        assert_eq!(c.errors, vec!["boom".to_string()]);
        assert!(!c.done);
    }
}
