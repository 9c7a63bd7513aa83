// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath platform show`: a platform as a person reads it.
//!
//! Per CPU the normalised capacity (computed by the core), per domain the OPPs with the EM
//! table (performance, cost, inefficient states), then the idle states and the list of
//! estimated values.

use std::fmt::Write;

use schedmath::energy::{EM_PERF_DOMAIN_SKIP_INEFFICIENCIES, EM_PERF_STATE_INEFFICIENT};

use super::{FreqDomain, Platform};
use crate::text::{cpu_list, Table};

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The text `platform show` prints.
pub fn render(p: &Platform) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "platform {}: {}", p.name, p.description);
    let _ = writeln!(
        s,
        "{} CPUs, {} frequency domains, EAS {}",
        p.nr_cpus(),
        p.domains.len(),
        if p.eas { "on" } else { "off" }
    );
    if p.tick_resched_latency_ns != 0 {
        let _ = writeln!(
            s,
            "tick resched latency {} ns (scheduler_tick() to __schedule() on the interrupt's exit)",
            p.tick_resched_latency_ns
        );
    }
    let _ = writeln!(s);
    cpu_table(p, &mut s);
    for d in &p.domains {
        domain_section(p, d, &mut s);
    }
    idle_state_table(p, &mut s);
    if !p.sources.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "sources:");
        for src in &p.sources {
            let _ = writeln!(s, "  {src}");
        }
    }
    if !p.estimated.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "estimated (not published data):");
        for e in &p.estimated {
            let _ = writeln!(s, "  {e}");
        }
    }
    s
}

/// One line per CPU: domain, capacity, dmips-MHz, reference frequency, SMT siblings.
fn cpu_table(p: &Platform, s: &mut String) {
    let cpus = Table::new(" ")
        .left(4)
        .left(13)
        .right(8)
        .then("  ")
        .right(5)
        .then("  ")
        .right(12)
        .then("  ")
        .left(0);
    cpus.line(
        s,
        &["cpu", "domain", "capacity", "dmips", "freq_ref_khz", "smt"],
    );
    for c in &p.cpus {
        let d = p.domain_of(c.id);
        let cells = [
            c.id.to_string(),
            d.map_or("-", |d| d.name.as_str()).to_string(),
            c.capacity_orig.to_string(),
            opt(d.and_then(|d| d.capacity_dmips_mhz)),
            d.map_or(0, |d| d.capacity_freq_ref_khz).to_string(),
            if c.smt_siblings.is_empty() {
                "-".to_string()
            } else {
                cpu_list(&c.smt_siblings)
            },
        ];
        cpus.line(s, &cells);
    }
}

/// A frequency domain: its parameters, its OPPs with the EM table, its idle states.
fn domain_section(p: &Platform, d: &FreqDomain, s: &mut String) {
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "domain {} (cpus {}, capacity {}, dynamic-power-coefficient {}, transition latency {} ns)",
        d.name,
        cpu_list(&d.cpus),
        d.capacity,
        opt(d.dynamic_power_coefficient),
        opt(d.transition_latency_ns)
    );
    match &d.em {
        Some(em) => {
            let _ = writeln!(
                s,
                "  energy model: {} states, skip inefficiencies {}",
                em.table.len(),
                if em.flags & EM_PERF_DOMAIN_SKIP_INEFFICIENCIES != 0 {
                    "yes"
                } else {
                    "no"
                }
            );
        }
        None => {
            let _ = writeln!(s, "  energy model: none");
        }
    }
    let opps = Table::new("  ")
        .then("  ")
        .right(3)
        .right(9)
        .right(8)
        .right(9)
        .right(11)
        .right(6)
        .left(0);
    opps.line(
        s,
        &["#", "khz", "uv", "power_uw", "performance", "cost", "flags"],
    );
    for (i, o) in d.opps.iter().enumerate() {
        let ps = d.em.as_ref().and_then(|em| em.table.get(i));
        let flag = match ps {
            Some(ps) if ps.flags & EM_PERF_STATE_INEFFICIENT != 0 => "inefficient",
            Some(_) => "-",
            None => "",
        };
        let cells = [
            i.to_string(),
            o.khz.to_string(),
            opt(o.uv),
            opt(o.power_uw),
            opt(ps.map(|p| p.performance)),
            opt(ps.map(|p| p.cost)),
            flag.to_string(),
        ];
        opps.line(s, &cells);
    }
    let names: Vec<&str> = d
        .idle_states
        .iter()
        .filter_map(|&i| p.idle_states.get(i).map(|s| s.name.as_str()))
        .collect();
    let _ = writeln!(
        s,
        "  idle states: {}",
        if names.is_empty() {
            "-".to_string()
        } else {
            names.join(", ")
        }
    );
}

/// The platform's idle states.
fn idle_state_table(p: &Platform, s: &mut String) {
    let _ = writeln!(s);
    let states = Table::new("  ")
        .left(17)
        .then(" ")
        .right(15)
        .right(19)
        .right(16)
        .right(8)
        .left(0);
    states.line(
        s,
        &[
            "idle state",
            "exit_latency_us",
            "target_residency_us",
            "entry_latency_us",
            "power_uw",
            "flags",
        ],
    );
    for st in &p.idle_states {
        let cells = [
            st.name.clone(),
            st.exit_latency_us.to_string(),
            st.target_residency_us.to_string(),
            opt(st.entry_latency_us),
            opt(st.power_uw),
            st.flags.to_string(),
        ];
        states.line(s, &cells);
    }
}
