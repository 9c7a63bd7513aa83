// SPDX-License-Identifier: GPL-2.0-only
//! Platform files: CPUs, frequency domains, OPPs, Energy Model and idle states (TOML).
//!
//! A platform file describes a machine the way the kernel learns it from the device tree
//! (or ACPI): per frequency domain its CPUs, `capacity-dmips-mhz` (or direct capacities),
//! reference frequency, OPP table and `dynamic-power-coefficient`; and the cpuidle states.
//! Loading validates everything and computes what the kernel would: each CPU's
//! `cpu_scale` through the core's `topology_normalize_cpu_scale()`, OPP power through the
//! `of_dynamic_power()` arithmetic of drivers/opp/of.c, and each domain's EM table through
//! the core's `em_create_perf_table()`. Errors name the file and the key.
//!
//! # Schema
//!
//! ```toml
//! name = "rk3399"                        # required, non-empty
//! description = "Rockchip RK3399 ..."    # optional
//! sources = ["arch/arm64/boot/dts/..."]  # optional: where the numbers come from
//! estimated = ["idle_state.*.power_uw"]  # optional: keys whose values are estimates
//! eas = true                             # optional; default: every domain has an EM
//! smt_siblings = [[0, 2], [1, 3]]        # optional: hardware threads sharing a core
//! clusters = [[0, 1, 2, 3]]              # optional: CPUs sharing a cluster (the sched
//!                                        # domains' MC level); default: one per domain
//! tick_resched_latency_ns = 26400        # optional: rq clock from the tick's
//!                                        # scheduler_tick() to the __schedule() its
//!                                        # resched runs on the interrupt's exit; default 0
//!
//! [[idle_state]]                         # cpuidle states, shallow to deep
//! name = "cpu-sleep"
//! exit_latency_us = 370                  # cpuidle's exit latency (DT: entry + exit)
//! target_residency_us = 900              # DT min-residency-us
//! entry_latency_us = 120                 # optional, informative
//! power_uw = 0                           # optional
//! flags = ["timer-stop"]                 # optional: "timer-stop", "polling"
//!
//! [[domain]]                             # one cpufreq policy / EM performance domain
//! name = "little"
//! cpus = [0, 1, 2, 3]                    # every CPU 0..N-1 in exactly one domain
//! capacity_dmips_mhz = 485               # DT capacity-dmips-mhz ...
//! # capacity = 381                       # ... or the capacity itself (all domains alike)
//! capacity_freq_ref_khz = 1416000        # optional; default: highest OPP
//! dynamic_power_coefficient = 100        # optional: OPP power from voltage
//! transition_latency_ns = 40000          # optional: DT clock-latency-ns (max over OPPs)
//! idle_states = ["cpu-sleep"]            # names of [[idle_state]] entries, shallow first
//! opp = [ { khz = 408000, uv = 825000 }, # ascending, distinct, non-zero kHz;
//!         { khz = 600000, power_uw = 40837 } ]  # or power_mw; uv optional
//! ```
//!
//! Unknown keys are errors. A domain has an Energy Model when every OPP has a power
//! (explicit, or from `uv` and the domain's `dynamic_power_coefficient`); partial power
//! is an error, and so is `eas = true` with a domain lacking an EM.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use schedmath::capacity::topology::{topology_normalize_cpu_scale, NR_CPUS};
use schedmath::energy::{
    em_create_perf_table, EmError, EmPerfDomain, EmPerfState, EmTable, EM_PERF_DOMAIN_MICROWATTS,
    EM_PERF_DOMAIN_SKIP_INEFFICIENCIES, EM_PERF_STATE_INEFFICIENT,
};
use schedmath::math::SCHED_CAPACITY_SCALE;

pub mod idle;
pub mod policy;
pub mod show;

/// A platform file that cannot be used: where, which key, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// The file could not be read.
    #[error("{origin}: {msg}")]
    Io {
        /// The file.
        origin: String,
        /// The OS error.
        msg: String,
    },
    /// Unreadable, too large or not UTF-8 (names the limit or the position).
    #[error(transparent)]
    Input(#[from] crate::limits::InputError),
    /// Not valid TOML, an unknown key, a missing or mistyped value.
    #[error("{origin}:{line}:{column}: {msg}")]
    Parse {
        /// The file.
        origin: String,
        /// 1-based line of the offending text (0 when unknown).
        line: usize,
        /// 1-based column.
        column: usize,
        /// The TOML/serde message (names the key).
        msg: String,
    },
    /// Valid TOML that describes an impossible platform.
    #[error("{origin}: {key}: {msg}")]
    Invalid {
        /// The file.
        origin: String,
        /// The key path, e.g. `domain[1].opp[3].khz`.
        key: String,
        /// What is wrong.
        msg: String,
    },
}

// ---------------------------------------------------------------------------------------
// The file, as written.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    estimated: Vec<String>,
    eas: Option<bool>,
    #[serde(default)]
    smt_siblings: Vec<Vec<usize>>,
    clusters: Option<Vec<Vec<usize>>>,
    #[serde(default)]
    tick_resched_latency_ns: u64,
    #[serde(default)]
    idle_state: Vec<IdleStateSpec>,
    #[serde(default)]
    domain: Vec<DomainSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdleStateSpec {
    name: String,
    exit_latency_us: u32,
    target_residency_us: u32,
    entry_latency_us: Option<u32>,
    power_uw: Option<u64>,
    #[serde(default)]
    flags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainSpec {
    name: String,
    cpus: Vec<usize>,
    capacity_dmips_mhz: Option<u32>,
    capacity: Option<u64>,
    capacity_freq_ref_khz: Option<u64>,
    dynamic_power_coefficient: Option<u32>,
    transition_latency_ns: Option<u32>,
    #[serde(default)]
    idle_states: Vec<String>,
    #[serde(default)]
    opp: Vec<OppSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OppSpec {
    khz: u64,
    uv: Option<u64>,
    power_uw: Option<u64>,
    power_mw: Option<u64>,
}

// ---------------------------------------------------------------------------------------
// The platform, validated and computed.

/// Flags of an idle state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IdleFlags {
    /// `CPUIDLE_FLAG_TIMER_STOP` (DT `local-timer-stop`): the local timer stops.
    pub timer_stop: bool,
    /// `CPUIDLE_FLAG_POLLING`: a polling state (x86 POLL), no real idle.
    pub polling: bool,
}

/// One cpuidle state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleState {
    /// Name (DT node or `idle-state-name`, or the x86 C-state name).
    pub name: String,
    /// cpuidle `exit_latency` in µs (DT: entry-latency-us + exit-latency-us).
    pub exit_latency_us: u32,
    /// cpuidle `target_residency` in µs (DT: min-residency-us).
    pub target_residency_us: u32,
    /// DT entry-latency-us, when known.
    pub entry_latency_us: Option<u32>,
    /// Power while in the state (µW), when known.
    pub power_uw: Option<u64>,
    /// Flags.
    pub flags: IdleFlags,
}

/// One operating performance point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Opp {
    /// Frequency in kHz.
    pub khz: u64,
    /// Voltage in µV, when known.
    pub uv: Option<u64>,
    /// Power in µW: explicit, or from `uv` and the dynamic-power coefficient.
    pub power_uw: Option<u64>,
}

/// One frequency domain (cpufreq policy, EM performance domain).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FreqDomain {
    /// Name.
    pub name: String,
    /// Its CPUs, ascending.
    pub cpus: Vec<usize>,
    /// `cpu_scale` of its CPUs (normalised by the core).
    pub capacity: u64,
    /// DT `capacity-dmips-mhz`, when capacities are derived from it.
    pub capacity_dmips_mhz: Option<u32>,
    /// `capacity_freq_ref` in kHz (the reference the capacity is normalised at).
    pub capacity_freq_ref_khz: u64,
    /// DT `dynamic-power-coefficient`, when given.
    pub dynamic_power_coefficient: Option<u32>,
    /// cpufreq `transition_latency` in ns (DT `clock-latency-ns`, the largest over the
    /// OPPs), when known; schedutil derives its default rate limit from it.
    pub transition_latency_ns: Option<u32>,
    /// The OPP table, ascending frequency.
    pub opps: Vec<Opp>,
    /// The Energy Model, built by the core's `em_create_perf_table()`.
    pub em: Option<EmPerfDomain>,
    /// Indices into [`Platform::idle_states`], shallow to deep.
    pub idle_states: Vec<usize>,
}

impl FreqDomain {
    /// The highest OPP frequency (kHz); 0 for a domain without OPPs (never loaded).
    pub fn max_khz(&self) -> u64 {
        self.opps.last().map_or(0, |o| o.khz)
    }
}

/// One logical CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cpu {
    /// CPU number.
    pub id: usize,
    /// Index into [`Platform::domains`].
    pub domain: usize,
    /// `arch_scale_cpu_capacity()`: the normalised `cpu_scale`.
    pub capacity_orig: u64,
    /// Other hardware threads of the same core.
    pub smt_siblings: Vec<usize>,
    /// Index into [`Platform::clusters`].
    pub cluster: usize,
}

/// A validated platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Platform {
    /// Where it was loaded from (a path or a label).
    pub origin: String,
    /// Name.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// Where the numbers come from.
    pub sources: Vec<String>,
    /// Keys whose values are estimates, not published data.
    pub estimated: Vec<String>,
    /// Energy-aware scheduling expected (`sched_energy_present`).
    pub eas: bool,
    /// CPUs 0..N-1.
    pub cpus: Vec<Cpu>,
    /// Frequency domains in file order.
    pub domains: Vec<FreqDomain>,
    /// CPUs sharing a cluster (sorted, in file order; default: each frequency domain's
    /// CPUs): the MC level of the simulator's sched domains.
    pub clusters: Vec<Vec<usize>>,
    /// Every idle state the file declares.
    pub idle_states: Vec<IdleState>,
    /// Rq clock ns from the tick's `scheduler_tick()` to the `__schedule()` that carries
    /// out its `resched_curr()` on the interrupt's exit (0: at the tick's instant).
    #[serde(skip_serializing_if = "is_zero")]
    pub tick_resched_latency_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Platform {
    /// Loads and validates a platform file.
    pub fn load(path: &Path) -> Result<Platform, PlatformError> {
        let origin = path.display().to_string();
        let text = crate::limits::read_text(path)?;
        Self::from_toml_str(&text, &origin)
    }

    /// Parses and validates platform TOML; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Platform, PlatformError> {
        let spec: FileSpec = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((0, 0), |s| line_col(text, s.start));
            PlatformError::Parse {
                origin: origin.to_string(),
                line,
                column,
                msg: e.message().trim().to_string(),
            }
        })?;
        build(spec, origin)
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The frequency domain of `cpu`.
    pub fn domain_of(&self, cpu: usize) -> Option<&FreqDomain> {
        self.cpus.get(cpu).and_then(|c| self.domains.get(c.domain))
    }

    /// `arch_scale_cpu_capacity(cpu)`.
    pub fn capacity_orig(&self, cpu: usize) -> Option<u64> {
        self.cpus.get(cpu).map(|c| c.capacity_orig)
    }

    /// The idle states of `cpu`, shallow to deep.
    pub fn idle_states_of(&self, cpu: usize) -> Vec<&IdleState> {
        self.domain_of(cpu).map_or_else(Vec::new, |d| {
            d.idle_states
                .iter()
                .filter_map(|&i| self.idle_states.get(i))
                .collect()
        })
    }

    /// The largest CPU capacity (1024 on every valid platform).
    pub fn max_capacity(&self) -> u64 {
        self.cpus.iter().map(|c| c.capacity_orig).max().unwrap_or(0)
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// `of_dynamic_power()` (drivers/opp/of.c): `P = C * mV^2 * MHz / 10^6` µW with the
/// kernel's integer steps — `uv / 1000` and `Hz / 10^6` truncate before the product,
/// the product is 64-bit. `None` on overflow.
pub fn of_dynamic_power(dynamic_power_coefficient: u32, uv: u64, khz: u64) -> Option<u64> {
    let mv = uv / 1000;
    let mhz = khz.saturating_mul(1000) / 1_000_000;
    let p = u64::from(dynamic_power_coefficient)
        .checked_mul(mv)?
        .checked_mul(mv)?
        .checked_mul(mhz)?;
    Some(p / 1_000_000)
}

struct Ctx<'a> {
    origin: &'a str,
}

impl Ctx<'_> {
    fn err(&self, key: impl Into<String>, msg: impl Into<String>) -> PlatformError {
        PlatformError::Invalid {
            origin: self.origin.to_string(),
            key: key.into(),
            msg: msg.into(),
        }
    }
}

fn build(spec: FileSpec, origin: &str) -> Result<Platform, PlatformError> {
    let cx = Ctx { origin };
    if spec.name.trim().is_empty() {
        return Err(cx.err("name", "must not be empty"));
    }
    let idle_states = build_idle_states(&cx, &spec.idle_state)?;
    if spec.domain.is_empty() {
        return Err(cx.err("domain", "at least one [[domain]] is required"));
    }

    let (owner, nr_cpus) = cpu_owners(&cx, &spec.domain)?;

    // OPPs and capacity inputs per domain.
    let mut domains = Vec::with_capacity(spec.domain.len());
    for (d, dom) in spec.domain.iter().enumerate() {
        domains.push(build_domain(&cx, d, dom, &spec.idle_state)?);
    }
    let capacity_of_cpu = cpu_capacities(&cx, &spec.domain, &mut domains, &owner, nr_cpus)?;

    // Energy Model per domain, through the core.
    for (d, dom) in domains.iter_mut().enumerate() {
        dom.em = build_em(&cx, d, dom)?;
    }
    let eas = eas_flag(&cx, spec.eas, &domains)?;
    let max = crate::limits::MAX_TICK_RESCHED_LATENCY_NS;
    if spec.tick_resched_latency_ns > max {
        return Err(cx.err(
            "tick_resched_latency_ns",
            crate::limits::beyond(
                spec.tick_resched_latency_ns,
                "MAX_TICK_RESCHED_LATENCY_NS",
                max,
            ),
        ));
    }

    let siblings = smt_siblings(&cx, &spec.smt_siblings, nr_cpus)?;

    let clusters = build_clusters(&cx, spec.clusters, &domains, &spec.smt_siblings, nr_cpus)?;
    let mut cluster_of = vec![0; nr_cpus];
    for (k, cl) in clusters.iter().enumerate() {
        for &c in cl {
            if let Some(slot) = cluster_of.get_mut(c) {
                *slot = k;
            }
        }
    }

    let cpus = (0..nr_cpus)
        .map(|c| Cpu {
            id: c,
            domain: owner.get(&c).copied().unwrap_or(0),
            capacity_orig: capacity_of_cpu.get(c).copied().unwrap_or(0),
            smt_siblings: siblings.get(c).cloned().unwrap_or_default(),
            cluster: cluster_of.get(c).copied().unwrap_or(0),
        })
        .collect();
    Ok(Platform {
        origin: origin.to_string(),
        name: spec.name,
        description: spec.description,
        sources: spec.sources,
        estimated: spec.estimated,
        eas,
        cpus,
        domains,
        clusters,
        idle_states,
        tick_resched_latency_ns: spec.tick_resched_latency_ns,
    })
}

/// CPU → domain: every CPU in exactly one (named, unique) domain, numbered 0..N-1
/// without gaps; also N.
fn cpu_owners(
    cx: &Ctx<'_>,
    specs: &[DomainSpec],
) -> Result<(BTreeMap<usize, usize>, usize), PlatformError> {
    let mut owner: BTreeMap<usize, usize> = BTreeMap::new();
    for (d, dom) in specs.iter().enumerate() {
        let key = format!("domain[{d}].cpus");
        if dom.name.trim().is_empty() {
            return Err(cx.err(format!("domain[{d}].name"), "must not be empty"));
        }
        if let Some(e) = specs[..d].iter().position(|o| o.name == dom.name) {
            return Err(cx.err(
                format!("domain[{d}].name"),
                format!("`{}` is also the name of domain[{e}]", dom.name),
            ));
        }
        if dom.cpus.is_empty() {
            return Err(cx.err(key, "a domain needs at least one CPU"));
        }
        for &c in &dom.cpus {
            if c >= NR_CPUS {
                return Err(cx.err(key, format!("CPU {c} is beyond the {NR_CPUS}-CPU limit")));
            }
            if let Some(other) = owner.insert(c, d) {
                let msg = if other == d {
                    format!("CPU {c} is listed twice")
                } else {
                    format!(
                        "CPU {c} is also in domain[{other}] (`{}`)",
                        specs[other].name
                    )
                };
                return Err(cx.err(key, msg));
            }
        }
    }
    let nr_cpus = owner.keys().next_back().map_or(0, |&c| c + 1);
    if let Some(missing) = (0..nr_cpus).find(|c| !owner.contains_key(c)) {
        return Err(cx.err(
            "domain",
            format!(
                "CPU {missing} is in no domain (CPUs must be numbered 0..{nr_cpus} without gaps)"
            ),
        ));
    }
    Ok((owner, nr_cpus))
}

/// `cpu_scale` per CPU (direct capacities, or `topology_normalize_cpu_scale()` of the
/// dmips-MHz and reference frequencies through the core), stored in each domain too.
fn cpu_capacities(
    cx: &Ctx<'_>,
    specs: &[DomainSpec],
    domains: &mut [FreqDomain],
    owner: &BTreeMap<usize, usize>,
    nr_cpus: usize,
) -> Result<Vec<u64>, PlatformError> {
    let all_direct = specs.iter().all(|d| d.capacity.is_some());
    let any_direct = specs.iter().any(|d| d.capacity.is_some());
    if any_direct && !all_direct {
        let d = specs.iter().position(|d| d.capacity.is_none()).unwrap_or(0);
        return Err(cx.err(
            format!("domain[{d}]"),
            "mixes capacity_dmips_mhz and capacity: give `capacity` in every domain or none",
        ));
    }

    let capacity_of_cpu: Vec<u64> = if all_direct {
        let caps: Vec<u64> = (0..nr_cpus)
            .map(|c| owner.get(&c).map_or(0, |&d| domains[d].capacity))
            .collect();
        if caps.iter().max() != Some(&SCHED_CAPACITY_SCALE) {
            return Err(cx.err(
                "domain.capacity",
                "no domain has capacity 1024: capacities must be normalised so the biggest CPU is 1024",
            ));
        }
        caps
    } else {
        let mut dmips = Vec::with_capacity(nr_cpus);
        let mut freq_ref = Vec::with_capacity(nr_cpus);
        for c in 0..nr_cpus {
            let dom = owner.get(&c).map(|&d| &domains[d]);
            dmips.push(dom.and_then(|d| d.capacity_dmips_mhz).unwrap_or(0));
            freq_ref.push(dom.map_or(0, |d| d.capacity_freq_ref_khz));
        }
        let caps = topology_normalize_cpu_scale(&dmips, &freq_ref)
            .map_err(|e| cx.err("domain", format!("cannot normalise capacities: {e:?}")))?;
        caps.to_vec()
    };
    for dom in domains.iter_mut() {
        let cap = dom
            .cpus
            .first()
            .and_then(|&c| capacity_of_cpu.get(c))
            .copied()
            .unwrap_or(0);
        dom.capacity = cap;
    }
    // The biggest CPU (dmips x reference kHz) is 1024; the others scale against it.
    let biggest = domains
        .iter()
        .enumerate()
        .max_by_key(|(_, d)| {
            u128::from(d.capacity_dmips_mhz.unwrap_or(0)) * u128::from(d.capacity_freq_ref_khz)
        })
        .map_or(0, |(i, _)| i);
    for (d, dom) in domains.iter().enumerate() {
        if dom.capacity == 0 || dom.capacity > SCHED_CAPACITY_SCALE {
            return Err(cx.err(
                format!("domain[{d}].capacity_dmips_mhz"),
                format!(
                    "normalised capacity is {} (must be 1..=1024) against domain[{biggest}] (`{}`, capacity 1024): its capacity_dmips_mhz x reference frequency is too small next to that domain's",
                    dom.capacity,
                    domains.get(biggest).map_or("", |b| b.name.as_str())
                ),
            ));
        }
    }
    Ok(capacity_of_cpu)
}

/// EAS is on when asked and every domain has an Energy Model (default: when every
/// domain has one).
fn eas_flag(
    cx: &Ctx<'_>,
    eas: Option<bool>,
    domains: &[FreqDomain],
) -> Result<bool, PlatformError> {
    let all_em = domains.iter().all(|d| d.em.is_some());
    Ok(match eas {
        Some(true) if !all_em => {
            let d = domains.iter().position(|d| d.em.is_none()).unwrap_or(0);
            return Err(cx.err(
                "eas",
                format!("is true but domain[{d}] has no Energy Model (its OPPs have no power)"),
            ));
        }
        Some(e) => e,
        None => all_em,
    })
}

/// Each CPU's SMT siblings (the other hardware threads of its core).
fn smt_siblings(
    cx: &Ctx<'_>,
    groups: &[Vec<usize>],
    nr_cpus: usize,
) -> Result<Vec<Vec<usize>>, PlatformError> {
    let mut siblings: Vec<Vec<usize>> = vec![Vec::new(); nr_cpus];
    let mut in_group = vec![None; nr_cpus];
    for (g, group) in groups.iter().enumerate() {
        let key = format!("smt_siblings[{g}]");
        if group.len() < 2 {
            return Err(cx.err(key, "a sibling group needs at least two CPUs"));
        }
        for &c in group {
            let Some(slot) = in_group.get_mut(c) else {
                return Err(cx.err(key, format!("CPU {c} does not exist (0..{nr_cpus})")));
            };
            if let Some(other) = slot.replace(g) {
                return Err(cx.err(key, format!("CPU {c} is also in smt_siblings[{other}]")));
            }
            if let Some(s) = siblings.get_mut(c) {
                s.extend(group.iter().copied().filter(|&o| o != c));
            }
        }
    }
    Ok(siblings)
}

/// The `clusters` key, validated: every CPU in exactly one non-empty cluster, and the
/// hardware threads of a core in the same one (sched domains nest). Absent: one cluster
/// per frequency domain.
fn build_clusters(
    cx: &Ctx<'_>,
    spec: Option<Vec<Vec<usize>>>,
    domains: &[FreqDomain],
    smt: &[Vec<usize>],
    nr_cpus: usize,
) -> Result<Vec<Vec<usize>>, PlatformError> {
    let Some(spec) = spec else {
        return Ok(domains
            .iter()
            .map(|d| {
                let mut c = d.cpus.clone();
                c.sort_unstable();
                c
            })
            .collect());
    };
    let mut owner = vec![None; nr_cpus];
    for (k, cl) in spec.iter().enumerate() {
        let key = format!("clusters[{k}]");
        if cl.is_empty() {
            return Err(cx.err(key, "a cluster needs at least one CPU"));
        }
        for &c in cl {
            let Some(slot) = owner.get_mut(c) else {
                return Err(cx.err(key, format!("CPU {c} does not exist (0..{nr_cpus})")));
            };
            if let Some(other) = slot.replace(k) {
                return Err(cx.err(key, format!("CPU {c} is also in clusters[{other}]")));
            }
        }
    }
    if let Some(c) = owner.iter().position(Option::is_none) {
        return Err(cx.err("clusters", format!("CPU {c} is in no cluster")));
    }
    for (g, group) in smt.iter().enumerate() {
        let first = group.first().and_then(|&c| owner.get(c).copied().flatten());
        if group
            .iter()
            .any(|&c| owner.get(c).copied().flatten() != first)
        {
            return Err(cx.err(
                format!("smt_siblings[{g}]"),
                "hardware threads of one core must share a cluster",
            ));
        }
    }
    Ok(spec
        .into_iter()
        .map(|mut c| {
            c.sort_unstable();
            c
        })
        .collect())
}

fn build_idle_states(
    cx: &Ctx<'_>,
    specs: &[IdleStateSpec],
) -> Result<Vec<IdleState>, PlatformError> {
    // Every state may be listed by one domain, whose CPUs have at most
    // CPUIDLE_STATE_MAX; more declared states than CPUs could ever use is a mistake too.
    if specs.len() > crate::limits::CPUIDLE_STATE_MAX * crate::limits::NR_CPUS {
        return Err(cx.err("idle_state", crate::limits::idle_state_count(specs.len())));
    }
    let mut out = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        let key = |k: &str| format!("idle_state[{i}].{k}");
        if s.name.trim().is_empty() {
            return Err(cx.err(key("name"), "must not be empty"));
        }
        if let Some(e) = specs[..i].iter().position(|o| o.name == s.name) {
            return Err(cx.err(key("name"), format!("`{}` is also idle_state[{e}]", s.name)));
        }
        if s.target_residency_us < s.exit_latency_us {
            return Err(cx.err(
                key("target_residency_us"),
                format!(
                    "{} us is below the exit latency of {} us: entering the state could never pay off",
                    s.target_residency_us, s.exit_latency_us
                ),
            ));
        }
        let mut flags = IdleFlags::default();
        for f in &s.flags {
            match f.as_str() {
                "timer-stop" => flags.timer_stop = true,
                "polling" => flags.polling = true,
                other => {
                    return Err(cx.err(
                        key("flags"),
                        format!("unknown flag `{other}` (known: timer-stop, polling)"),
                    ))
                }
            }
        }
        out.push(IdleState {
            name: s.name.clone(),
            exit_latency_us: s.exit_latency_us,
            target_residency_us: s.target_residency_us,
            entry_latency_us: s.entry_latency_us,
            power_uw: s.power_uw,
            flags,
        });
    }
    Ok(out)
}

/// One `[[domain]]`: capacity keys, OPPs, reference frequency and idle states checked;
/// capacity and EM are filled in later, once every domain is known.
fn build_domain(
    cx: &Ctx<'_>,
    d: usize,
    dom: &DomainSpec,
    idle: &[IdleStateSpec],
) -> Result<FreqDomain, PlatformError> {
    let key = |k: &str| format!("domain[{d}].{k}");
    check_capacity_keys(cx, d, dom)?;
    let opps = build_opps(cx, d, dom)?;
    let max_khz = opps.last().map_or(0, |o| o.khz);
    let capacity_freq_ref_khz = match dom.capacity_freq_ref_khz {
        Some(0) => return Err(cx.err(key("capacity_freq_ref_khz"), "zero frequency")),
        Some(f) => f,
        None => max_khz,
    };
    if let Some(dmips) = dom.capacity_dmips_mhz {
        // The kernel's `(dmips * ref) << 10` must not wrap, or cpu_scale is garbage.
        let raw = u64::from(dmips).checked_mul(capacity_freq_ref_khz);
        if raw.is_none_or(|r| r.leading_zeros() < 10) {
            // Blame the key the reference frequency came from.
            let from = match dom.capacity_freq_ref_khz {
                Some(_) => key("capacity_freq_ref_khz"),
                None => key(&format!("opp[{}].khz", opps.len().saturating_sub(1))),
            };
            return Err(cx.err(
                from,
                format!("capacity_dmips_mhz {dmips} x reference frequency {capacity_freq_ref_khz} kHz overflows the kernel's 64-bit `<< 10`"),
            ));
        }
    }
    let idle_states = domain_idle_states(cx, d, dom, idle)?;
    let mut cpus = dom.cpus.clone();
    cpus.sort_unstable();
    Ok(FreqDomain {
        name: dom.name.clone(),
        cpus,
        capacity: dom.capacity.unwrap_or(0),
        capacity_dmips_mhz: dom.capacity_dmips_mhz,
        capacity_freq_ref_khz,
        dynamic_power_coefficient: dom.dynamic_power_coefficient,
        transition_latency_ns: dom.transition_latency_ns,
        opps,
        em: None,
        idle_states,
    })
}

/// `capacity_dmips_mhz` or `capacity`, exactly one, in range.
fn check_capacity_keys(cx: &Ctx<'_>, d: usize, dom: &DomainSpec) -> Result<(), PlatformError> {
    let key = |k: &str| format!("domain[{d}].{k}");
    match (dom.capacity_dmips_mhz, dom.capacity) {
        (Some(_), Some(_)) => {
            return Err(cx.err(
                key("capacity"),
                "give capacity_dmips_mhz or capacity, not both",
            ))
        }
        (None, None) => {
            return Err(cx.err(
                key("capacity_dmips_mhz"),
                "missing: give capacity_dmips_mhz (with a reference frequency) or capacity",
            ))
        }
        (Some(0), _) => return Err(cx.err(key("capacity_dmips_mhz"), "must not be 0")),
        (_, Some(c)) if c == 0 || c > SCHED_CAPACITY_SCALE => {
            return Err(cx.err(key("capacity"), format!("{c} is outside 1..=1024")))
        }
        _ => {}
    }
    Ok(())
}

/// The OPP table: ascending, distinct, non-zero kHz; each OPP's power given (µW or mW),
/// from `uv` and the domain's coefficient, or absent on every OPP.
fn build_opps(cx: &Ctx<'_>, d: usize, dom: &DomainSpec) -> Result<Vec<Opp>, PlatformError> {
    let key = |k: &str| format!("domain[{d}].{k}");
    if dom.opp.is_empty() {
        return Err(cx.err(key("opp"), "a domain needs at least one OPP"));
    }
    if dom.opp.len() > crate::limits::CPUFREQ_TABLE_MAX {
        return Err(cx.err(
            key("opp"),
            crate::limits::beyond(
                format!("{} OPPs", dom.opp.len()),
                "CPUFREQ_TABLE_MAX (the Energy Model's EM_MAX_PERF_STATES)",
                crate::limits::CPUFREQ_TABLE_MAX,
            ),
        ));
    }
    let mut opps: Vec<Opp> = Vec::with_capacity(dom.opp.len());
    for (i, o) in dom.opp.iter().enumerate() {
        let okey = |k: &str| format!("domain[{d}].opp[{i}].{k}");
        if o.khz == 0 {
            return Err(cx.err(okey("khz"), "zero frequency"));
        }
        if o.khz > u64::from(u32::MAX) {
            return Err(cx.err(
                okey("khz"),
                format!(
                    "{} kHz does not fit cpufreq's 32-bit kHz (at most {})",
                    o.khz,
                    u32::MAX
                ),
            ));
        }
        if let Some(prev) = opps.last() {
            if o.khz == prev.khz {
                return Err(cx.err(okey("khz"), format!("duplicate frequency {} kHz", o.khz)));
            }
            if o.khz < prev.khz {
                return Err(cx.err(
                    okey("khz"),
                    format!(
                        "OPP table not sorted: {} kHz after {} kHz (list OPPs by ascending frequency)",
                        o.khz, prev.khz
                    ),
                ));
            }
        }
        if o.uv == Some(0) {
            return Err(cx.err(okey("uv"), "zero voltage"));
        }
        let power_uw = match (o.power_uw, o.power_mw, o.uv, dom.dynamic_power_coefficient) {
            (Some(_), Some(_), _, _) => {
                return Err(cx.err(okey("power_mw"), "give power_uw or power_mw, not both"))
            }
            (Some(p), None, _, _) => Some(p),
            (None, Some(mw), _, _) => Some(
                mw.checked_mul(1000)
                    .ok_or_else(|| cx.err(okey("power_mw"), "too large"))?,
            ),
            (None, None, Some(uv), Some(c)) => Some(
                of_dynamic_power(c, uv, o.khz)
                    .ok_or_else(|| cx.err(okey("uv"), "power from uv overflows 64 bits"))?,
            ),
            (None, None, _, _) => None,
        };
        opps.push(Opp {
            khz: o.khz,
            uv: o.uv,
            power_uw,
        });
    }
    let with_power = opps.iter().filter(|o| o.power_uw.is_some()).count();
    if with_power != 0 && with_power != opps.len() {
        let i = opps.iter().position(|o| o.power_uw.is_none()).unwrap_or(0);
        return Err(cx.err(
            format!("domain[{d}].opp[{i}]"),
            "no power while other OPPs have one: give power_uw/power_mw, or uv with the domain's dynamic_power_coefficient",
        ));
    }
    Ok(opps)
}

/// The domain's idle states by index into the platform's list, shallow to deep.
fn domain_idle_states(
    cx: &Ctx<'_>,
    d: usize,
    dom: &DomainSpec,
    idle: &[IdleStateSpec],
) -> Result<Vec<usize>, PlatformError> {
    if dom.idle_states.len() > crate::limits::CPUIDLE_STATE_MAX {
        return Err(cx.err(
            format!("domain[{d}].idle_states"),
            crate::limits::idle_state_count(dom.idle_states.len()),
        ));
    }
    let mut idle_states = Vec::with_capacity(dom.idle_states.len());
    for (j, n) in dom.idle_states.iter().enumerate() {
        let Some(i) = idle.iter().position(|s| &s.name == n) else {
            return Err(cx.err(
                format!("domain[{d}].idle_states[{j}]"),
                format!("no [[idle_state]] named `{n}`"),
            ));
        };
        if let Some(&prev) = idle_states.last() {
            let prev: &IdleStateSpec = &idle[prev];
            if idle[i].target_residency_us < prev.target_residency_us {
                return Err(cx.err(
                    format!("domain[{d}].idle_states[{j}]"),
                    format!(
                        "`{n}` has a shorter target residency than `{}`: list states shallow to deep",
                        prev.name
                    ),
                ));
            }
        }
        idle_states.push(i);
    }
    Ok(idle_states)
}

/// The domain's EM table, as `em_dev_register_perf_domain()` would build it from the OPPs
/// (µW), with the skip-inefficiencies flag set when some state is inefficient (as
/// `em_cpufreq_update_efficiencies()` does for a cpufreq frequency table).
fn build_em(
    cx: &Ctx<'_>,
    d: usize,
    dom: &FreqDomain,
) -> Result<Option<EmPerfDomain>, PlatformError> {
    let mut table = EmTable::new();
    for (i, o) in dom.opps.iter().enumerate() {
        let Some(power) = o.power_uw else {
            return Ok(None);
        };
        table
            .push(EmPerfState {
                frequency: o.khz,
                power,
                ..Default::default()
            })
            .map_err(|_| {
                cx.err(
                    format!("domain[{d}].opp[{i}]"),
                    format!("more than {} OPPs", schedmath::energy::EM_MAX_PERF_STATES),
                )
            })?;
    }
    em_create_perf_table(&mut table, dom.capacity).map_err(|e| {
        let (i, msg) = match e {
            EmError::InvalidPower(i) => (
                i,
                format!(
                    "power {} uW is 0 or above the EM limit of 64 W",
                    table.get(i).map_or(0, |s| s.power)
                ),
            ),
            EmError::ZeroPerformance(i) => (i, "performance rounds to 0 at this frequency".into()),
            EmError::NonIncreasingFreq(i) => (i, "frequencies must increase".into()),
            EmError::Empty | EmError::InvalidLimits => (0, format!("{e:?}")),
        };
        cx.err(
            format!("domain[{d}].opp[{i}]"),
            format!("energy model: {msg}"),
        )
    })?;
    let mut flags = EM_PERF_DOMAIN_MICROWATTS;
    if table
        .iter()
        .any(|s| s.flags & EM_PERF_STATE_INEFFICIENT != 0)
    {
        flags |= EM_PERF_DOMAIN_SKIP_INEFFICIENCIES;
    }
    let max_perf_state = table.len().saturating_sub(1);
    Ok(Some(EmPerfDomain {
        table,
        flags,
        min_perf_state: 0,
        max_perf_state,
    }))
}

impl fmt::Display for IdleFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.timer_stop {
            parts.push("timer-stop");
        }
        if self.polling {
            parts.push("polling");
        }
        if parts.is_empty() {
            f.write_str("-")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

#[cfg(test)]
mod tests;
