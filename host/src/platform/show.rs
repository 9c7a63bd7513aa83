// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath platform show`: a platform as a person reads it.
//!
//! Per CPU the normalised capacity (computed by the core), per domain the OPPs with the EM
//! table (performance, cost, inefficient states), then the idle states and the list of
//! estimated values.

use std::fmt::Write;

use schedmath::energy::{EM_PERF_DOMAIN_SKIP_INEFFICIENCIES, EM_PERF_STATE_INEFFICIENT};

use super::Platform;

/// Compresses a sorted CPU list: `[0, 1, 2, 3, 5]` → `0-3,5`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while let Some(&start) = cpus.get(i) {
        let mut end = start;
        while cpus.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if end == start {
            let _ = write!(out, "{start}");
        } else {
            let _ = write!(out, "{start}-{end}");
        }
        i += 1;
    }
    out
}

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
    let _ = writeln!(s);
    let _ = writeln!(s, "cpu  domain        capacity  dmips  freq_ref_khz  smt");
    for c in &p.cpus {
        let d = p.domain_of(c.id);
        let _ = writeln!(
            s,
            "{:<4} {:<13} {:>8}  {:>5}  {:>12}  {}",
            c.id,
            d.map_or("-", |d| d.name.as_str()),
            c.capacity_orig,
            opt(d.and_then(|d| d.capacity_dmips_mhz)),
            d.map_or(0, |d| d.capacity_freq_ref_khz),
            if c.smt_siblings.is_empty() {
                "-".to_string()
            } else {
                cpu_list(&c.smt_siblings)
            }
        );
    }
    for d in &p.domains {
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
        let _ = writeln!(
            s,
            "  {:>3}  {:>9}  {:>8}  {:>9}  {:>11}  {:>6}  flags",
            "#", "khz", "uv", "power_uw", "performance", "cost"
        );
        for (i, o) in d.opps.iter().enumerate() {
            let ps = d.em.as_ref().and_then(|em| em.table.get(i));
            let flag = match ps {
                Some(ps) if ps.flags & EM_PERF_STATE_INEFFICIENT != 0 => "inefficient",
                Some(_) => "-",
                None => "",
            };
            let _ = writeln!(
                s,
                "  {:>3}  {:>9}  {:>8}  {:>9}  {:>11}  {:>6}  {}",
                i,
                o.khz,
                opt(o.uv),
                opt(o.power_uw),
                opt(ps.map(|p| p.performance)),
                opt(ps.map(|p| p.cost)),
                flag
            );
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
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "idle state        exit_latency_us  target_residency_us  entry_latency_us  power_uw  flags"
    );
    for st in &p.idle_states {
        let _ = writeln!(
            s,
            "{:<17} {:>15}  {:>19}  {:>16}  {:>8}  {}",
            st.name,
            st.exit_latency_us,
            st.target_residency_us,
            opt(st.entry_latency_us),
            opt(st.power_uw),
            st.flags
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list_compresses_runs() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(cpu_list(&[4]), "4");
        assert_eq!(cpu_list(&[]), "");
    }
}
