// SPDX-License-Identifier: GPL-2.0-only
//! The summary `schedmath workload check` prints: what the simulator will run, so a
//! person can compare it with what they meant to write.

use std::fmt::Write;

use crate::text::{cpu_list, Table};

use super::model::{mode_name, Event, Format, Loops, Phase, Sched, TaskSpec, Uclamp, Workload};

/// A duration in ns, exact, in the largest unit that divides it (`16 ms`, `250 µs`).
pub fn fmt_ns(ns: u64) -> String {
    if ns == 0 {
        "0".into()
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{} s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{} ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{} µs", ns / 1_000)
    } else {
        format!("{ns} ns")
    }
}

fn fmt_loops(l: Loops) -> String {
    match l {
        Loops::Forever => "forever".into(),
        Loops::Count(n) => format!("×{n}"),
    }
}

fn fmt_sched(s: Sched) -> String {
    if s.policy.is_fair() {
        format!("{} nice {}", s.policy.name(), s.priority)
    } else {
        format!("{} prio {}", s.policy.name(), s.priority)
    }
}

fn fmt_uclamp(u: Uclamp) -> String {
    let one = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    format!("{}..{}", one(u.min), one(u.max))
}

/// One event as a person reads it.
pub fn fmt_event(e: &Event) -> String {
    match e {
        Event::Run { work_ns } => format!("run      {} of work at max capacity", fmt_ns(*work_ns)),
        Event::Runtime { wall_ns } => format!("runtime  {} wall time", fmt_ns(*wall_ns)),
        Event::Sleep { ns } => format!("sleep    {}", fmt_ns(*ns)),
        Event::Timer {
            name,
            per_thread,
            period_ns,
            mode,
        } => format!(
            "timer    \"{name}\"{} {} period {}",
            if *per_thread { " (per thread)" } else { "" },
            mode_name(*mode),
            fmt_ns(*period_ns)
        ),
        Event::IoRun { bytes } => format!("iorun    {bytes} bytes (iowait)"),
        Event::Mem { bytes } => format!("mem      {bytes} bytes"),
        Event::Yield => "yield".into(),
        Event::Suspend { name } => format!("suspend  \"{name}\""),
        Event::Resume { name } => format!("resume   \"{name}\""),
        Event::Lock { mutex } => format!("lock     \"{mutex}\""),
        Event::Unlock { mutex } => format!("unlock   \"{mutex}\""),
        Event::Wait { cond, mutex } => format!("wait     \"{cond}\" with \"{mutex}\""),
        Event::Signal { cond } => format!("signal   \"{cond}\""),
        Event::Broadcast { cond } => format!("broad    \"{cond}\""),
        Event::Sync { cond, mutex } => format!("sync     \"{cond}\" with \"{mutex}\""),
        Event::Barrier { name } => format!("barrier  \"{name}\""),
        Event::Fork { task } => format!("fork     a new thread of \"{task}\""),
    }
}

/// What a phase changes: persistent settings, then its own affinity.
fn phase_changes(p: &Phase) -> String {
    let mut c = Vec::new();
    if let Some(s) = p.sched {
        c.push(fmt_sched(s));
    }
    if p.uclamp != Uclamp::default() {
        c.push(format!("uclamp {}", fmt_uclamp(p.uclamp)));
    }
    if let Some(g) = &p.group {
        c.push(format!("group {g}"));
    }
    let mut out = String::new();
    if !c.is_empty() {
        let _ = write!(out, " · sets {}", c.join(", "));
    }
    if let Some(a) = &p.cpus {
        let _ = write!(out, " · on cpus {}", cpu_list(&a.cpus));
    }
    out
}

fn render_task(out: &mut String, t: &TaskSpec) {
    let names = if t.instances.is_empty() {
        "no thread (instance 0)".to_string()
    } else {
        t.instances.join(", ")
    };
    let _ = writeln!(out, "  {} (line {}): {names}", t.name, t.at.line);
    let cpus = t
        .cpus
        .as_ref()
        .map_or("all".to_string(), |a| cpu_list(&a.cpus));
    let _ = writeln!(
        out,
        "    {} · cpus {cpus} · uclamp {} · group {} · delay {} · loop {}",
        fmt_sched(t.sched),
        fmt_uclamp(t.uclamp),
        t.group,
        fmt_ns(t.delay_ns),
        fmt_loops(t.loops)
    );
    for p in &t.phases {
        let name = p.name.as_deref().unwrap_or("(task object)");
        let _ = writeln!(
            out,
            "    phase {name} {}{}",
            fmt_loops(p.loops),
            phase_changes(p)
        );
        let width = p
            .events
            .iter()
            .map(|e| e.key.chars().count())
            .max()
            .unwrap_or(0);
        let table = Table::new("  ").then("      ").left(width).left(0);
        for e in &p.events {
            table.line(out, &[e.key.clone(), fmt_event(&e.event)]);
        }
    }
}

/// The summary; with `verbose`, also the keys accepted but without scheduling effect.
pub fn render(w: &Workload, verbose: bool) -> String {
    let mut out = String::new();
    let kind = match w.format {
        Format::RtApp => "rt-app JSON",
        Format::Periodic => "periodic form",
    };
    let _ = writeln!(out, "workload {} ({kind})", w.origin);
    let _ = writeln!(
        out,
        "duration {} · default policy {} · {} tasks, {} threads",
        w.global
            .duration_ns
            .map_or("until every task ends".into(), fmt_ns),
        w.global.default_policy.name(),
        w.tasks.len(),
        w.nr_threads()
    );
    if !w.global.irq_pct.is_empty() {
        let cpus: Vec<String> = w
            .global
            .irq_pct
            .iter()
            .map(|s| format!("CPU {} {} %", s.cpu, s.pct))
            .collect();
        let _ = writeln!(out, "irq time: {}", cpus.join(", "));
    }
    if !w.groups.is_empty() {
        let _ = writeln!(out, "task groups:");
        for g in &w.groups {
            let _ = writeln!(
                out,
                "  {} · shares {}{}",
                g.path,
                g.shares,
                if g.idle { " · idle" } else { "" }
            );
        }
    }
    let _ = writeln!(out, "tasks:");
    for t in &w.tasks {
        render_task(&mut out, t);
    }
    let warnings = w.warnings();
    if !warnings.is_empty() {
        let _ = writeln!(out, "warnings ({}):", warnings.len());
        for k in warnings {
            let _ = writeln!(out, "  line {}: {}: {}", k.at.line, k.path, k.reason);
        }
    }
    if verbose {
        let ignored = w.ignored_keys();
        if ignored.is_empty() {
            let _ = writeln!(out, "ignored keys: none");
        } else {
            let _ = writeln!(out, "ignored keys (accepted, no scheduling effect):");
            for k in ignored {
                let _ = writeln!(out, "  line {}: {}: {}", k.at.line, k.path, k.reason);
            }
        }
    }
    out
}

/// The warnings as a compiler prints them, one a line:
/// `warning: FILE:LINE:COLUMN: PATH: MESSAGE`.
pub fn warning_lines(w: &Workload) -> Vec<String> {
    let hazards = super::hazards::hazards(w);
    w.warnings()
        .iter()
        .map(|k| format!("warning: {}:{}: {}: {}", w.origin, k.at, k.path, k.reason))
        .chain(
            hazards
                .iter()
                .map(|h| format!("warning: {}:{}: {}: {}", w.origin, h.at, h.path, h.msg)),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_exactly_in_the_largest_dividing_unit() {
        assert_eq!(fmt_ns(0), "0");
        assert_eq!(fmt_ns(16_000_000), "16 ms");
        assert_eq!(fmt_ns(800_000), "800 µs");
        assert_eq!(fmt_ns(1_500), "1500 ns");
        assert_eq!(fmt_ns(2_000_000_000), "2 s");
    }
}
