// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath idle`: replay idle periods through a cpuidle governor on one CPU's idle
//! states and report per-state usage, residency and idle misses (above/below).
//!
//! Each cycle is the kernel's idle loop: the governor selects, the core accounts the entry
//! and the governor reflects ([`cpuidle_enter_and_reflect`]). The model around it:
//! * periods follow each other back to back on one clock; the tick fires at multiples of
//!   `TICK_NSEC` on that clock;
//! * when select keeps the tick and the tick comes before the wakeup, the CPU wakes on the
//!   tick (`got_tick`) and the loop selects again for the rest of the period; once select
//!   stops the tick, the CPU sleeps until the wakeup (`tick_stopped` for any later cycle);
//! * a polling state spins at most until the target residency of the first enabled deeper
//!   state (or one tick), then reports `poll_time_limit` and the loop selects again;
//! * the measured residency is the idle time of the cycle plus the state's exit latency;
//! * no latency constraint; the CPU utilization (teo v6.6/v6.10) is the period's or the
//!   caller's default.

pub mod pattern;

use std::fmt::Write as _;

use serde::Serialize;

use schedmath::cpuidle::{
    cpuidle_enter_and_reflect, CpuidleDevice, CpuidleDriver, CpuidleState, Governor, IdleExit,
    SelectEnv, CPUIDLE_STATE_MAX, PM_QOS_CPU_LATENCY_DEFAULT_NS,
};
use schedmath::profile::IdleGovernor;
use schedmath::schedutil::tick_nsec;

pub use crate::platform::idle::{platform_states, IdleStateSpec};
use crate::text::Table;
pub use pattern::{IdlePeriod, PatternError};

/// Everything besides the pattern that a replay needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayConfig {
    /// `TICK_NSEC` (4 ms for HZ=250).
    pub tick_nsec: i64,
    /// `arch_scale_cpu_capacity()` of the CPU (teo v6.6/v6.10 threshold: `>> 6`).
    pub capacity: u64,
    /// CPU utilization for periods that do not give one.
    pub util: u64,
}

/// Why a replay cannot run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReplayError {
    /// No idle states, or more than the kernel allows.
    #[error("{}", crate::limits::idle_state_count(*.0))]
    StateCount(usize),
    /// The replay needed more idle-loop cycles than [`crate::limits::MAX_IDLE_CYCLES`].
    #[error("stopped after {0} idle-loop cycles (MAX_IDLE_CYCLES): the pattern wakes the CPU too often for its length; shorten it or use fewer periods")]
    Budget(u64),
    /// TICK_NSEC must be positive.
    #[error("TICK_NSEC must be positive, got {0}")]
    Tick(i64),
}

/// Per-state results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateReport {
    /// State name.
    pub name: String,
    /// Entries (`usage`).
    pub usage: u64,
    /// Summed residency in ns (`time_ns`).
    pub time_ns: u64,
    /// Too-deep entries (`above`).
    pub above: u64,
    /// Too-shallow entries (`below`).
    pub below: u64,
}

/// The result of one replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdleReport {
    /// Governor / teo version (profile name).
    pub governor: String,
    /// Idle periods replayed.
    pub periods: u64,
    /// Periods ended by their timer.
    pub timer_wakeups: u64,
    /// Idle-loop cycles (select calls).
    pub cycles: u64,
    /// Cycles ended by the tick.
    pub tick_wakeups: u64,
    /// Cycles ended by the polling time limit.
    pub poll_limit_wakeups: u64,
    /// Per state, shallowest first.
    pub states: Vec<StateReport>,
}

/// How long `poll_idle()` spins in this model: the first enabled deeper state's target
/// residency, else one tick; at least 1 ns so the loop always advances.
fn poll_limit_ns(drv: &CpuidleDriver, dev: &CpuidleDevice, tick_nsec: i64) -> u64 {
    let limit = (1..drv.state_count())
        .find(|&i| !dev.is_disabled(i))
        .map_or(tick_nsec, |i| drv.target_residency_ns(i));
    u64::try_from(limit).unwrap_or(0).max(1)
}

/// Replays `periods` on `states` with governor `gov`.
pub fn replay(
    states: &[IdleStateSpec],
    gov: IdleGovernor,
    periods: &[IdlePeriod],
    cfg: &ReplayConfig,
) -> Result<IdleReport, ReplayError> {
    let table: Vec<CpuidleState> = states.iter().map(|s| s.state).collect();
    if states.len() > CPUIDLE_STATE_MAX {
        return Err(ReplayError::StateCount(states.len()));
    }
    let drv = CpuidleDriver::new(&table)
        .filter(|d| d.state_count() > 0)
        .ok_or(ReplayError::StateCount(states.len()))?;
    if cfg.tick_nsec <= 0 {
        return Err(ReplayError::Tick(cfg.tick_nsec));
    }
    let tick = cfg.tick_nsec as u64; // positive, checked above
    let mut dev = CpuidleDevice::default();
    let mut governor = Governor::enable(gov, cfg.capacity);
    let mut report = IdleReport {
        governor: gov.name().to_string(),
        periods: periods.len() as u64,
        timer_wakeups: 0,
        cycles: 0,
        tick_wakeups: 0,
        poll_limit_wakeups: 0,
        states: Vec::new(),
    };
    let mut now: u64 = 0;
    for p in periods {
        report.timer_wakeups += u64::from(p.timer_wakeup);
        let start = now;
        let timer_at = start.saturating_add(p.sleep_length_ns);
        let wake_at = start.saturating_add(p.measured_ns.min(p.sleep_length_ns));
        let util = p.util.unwrap_or(cfg.util);
        let mut tick_stopped = false;
        loop {
            let next_tick = (now / tick + 1).saturating_mul(tick);
            let sleep_length = timer_at.saturating_sub(now);
            let env = SelectEnv {
                tick_nsec: cfg.tick_nsec,
                latency_req_ns: PM_QOS_CPU_LATENCY_DEFAULT_NS,
                tick_stopped,
                sleep_length_ns: i64::try_from(sleep_length).unwrap_or(i64::MAX),
                delta_tick_ns: i64::try_from(sleep_length.min(next_tick - now)).unwrap_or(i64::MAX),
                now_ns: now,
                cpu_util: util,
            };
            let sel = governor.select(&drv, &mut dev, &env);
            let polling = drv.is_polling(sel.idx);
            let keeps_tick = !sel.stop_tick && !tick_stopped;
            let mut end = wake_at;
            let mut got_tick = false;
            let mut poll_time_limit = false;
            if keeps_tick && next_tick < end {
                end = next_tick;
                got_tick = true;
            }
            if polling {
                let limit = now.saturating_add(poll_limit_ns(&drv, &dev, cfg.tick_nsec));
                if limit < end {
                    end = limit;
                    got_tick = false;
                    poll_time_limit = true;
                }
            }
            let exit_latency = u64::try_from(drv.exit_latency_ns(sel.idx)).unwrap_or(0);
            let residency = (end - now).saturating_add(exit_latency);
            let exit = IdleExit {
                last_residency_ns: i64::try_from(residency).unwrap_or(i64::MAX),
                poll_time_limit,
                got_tick,
                reflect_now_ns: now.saturating_add(residency),
            };
            cpuidle_enter_and_reflect(&drv, &mut dev, &mut governor, sel.idx, cfg.tick_nsec, &exit);
            report.cycles += 1;
            if report.cycles > crate::limits::MAX_IDLE_CYCLES {
                return Err(ReplayError::Budget(crate::limits::MAX_IDLE_CYCLES));
            }
            report.tick_wakeups += u64::from(got_tick);
            report.poll_limit_wakeups += u64::from(poll_time_limit);
            tick_stopped = tick_stopped || sel.stop_tick;
            now = end;
            if now >= wake_at {
                break;
            }
        }
    }
    report.states = states
        .iter()
        .zip(dev.states_usage.iter())
        .map(|(s, u)| StateReport {
            name: s.name.clone(),
            usage: u.usage,
            time_ns: u.time_ns,
            above: u.above,
            below: u.below,
        })
        .collect();
    Ok(report)
}

/// `n` ns as milliseconds with three decimals.
fn ms(n: u64) -> String {
    format!("{}.{:03}", n / 1_000_000, (n / 1_000) % 1_000)
}

/// `part / whole` as a percentage with one decimal (128-bit: no total overflows).
fn pct(part: u64, whole: u128) -> String {
    if whole == 0 {
        return "0.0".into();
    }
    let tenths = (u128::from(part) * 1000 + whole / 2) / whole;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// The summed residency of every state, in 128 bits so it cannot wrap.
fn total_time(r: &IdleReport) -> u128 {
    r.states.iter().map(|s| u128::from(s.time_ns)).sum()
}

/// `n` ns (128-bit total) as milliseconds with three decimals.
fn ms_total(n: u128) -> String {
    format!("{}.{:03}", n / 1_000_000, (n / 1_000) % 1_000)
}

/// The table of one report, for people.
pub fn render(r: &IdleReport) -> String {
    let mut out = String::new();
    let total = total_time(r);
    let _ = writeln!(
        out,
        "governor {}: {} periods ({} timer, {} early), {} cycles ({} tick, {} poll-limit wakeups)",
        r.governor,
        r.periods,
        r.timer_wakeups,
        r.periods - r.timer_wakeups,
        r.cycles,
        r.tick_wakeups,
        r.poll_limit_wakeups
    );
    let table = Table::new(" ")
        .left(16)
        .right(8)
        .right(14)
        .right(7)
        .rights(2, 8);
    table.line(
        &mut out,
        &["state", "usage", "residency_ms", "res_%", "above", "below"],
    );
    for s in &r.states {
        let cells = [
            s.name.clone(),
            s.usage.to_string(),
            ms(s.time_ns),
            pct(s.time_ns, total),
            s.above.to_string(),
            s.below.to_string(),
        ];
        table.line(&mut out, &cells);
    }
    let (above, below) = r.states.iter().fold((0u128, 0u128), |(a, b), s| {
        (a + u128::from(s.above), b + u128::from(s.below))
    });
    let usage: u128 = r.states.iter().map(|s| u128::from(s.usage)).sum();
    let cells = [
        "total".to_string(),
        usage.to_string(),
        ms_total(total),
        "100.0".to_string(),
        above.to_string(),
        below.to_string(),
    ];
    table.line(&mut out, &cells);
    out
}

/// Two reports of the same pattern side by side (base | patch), for people.
pub fn render_compare(a: &IdleReport, b: &IdleReport) -> String {
    let mut out = String::new();
    let (ta, tb) = (total_time(a), total_time(b));
    // state | usage res_% above below (A) | the same (B)
    let side = |t: Table| t.right(8).right(7).rights(2, 8);
    let table = side(side(Table::new(" ").left(16).then(" | ")).then(" | "));
    Table::new(" | ")
        .left(16)
        .left(34)
        .left(0)
        .line(&mut out, &["", &a.governor, &b.governor]);
    let head = ["usage", "res_%", "above", "below"];
    table.line(&mut out, &[&["state"][..], &head, &head].concat());
    let cols =
        |u: u128, r: String, ab: u128, be: u128| [u.to_string(), r, ab.to_string(), be.to_string()];
    for (sa, sb) in a.states.iter().zip(&b.states) {
        let cells = [
            &[sa.name.clone()][..],
            &cols(
                sa.usage.into(),
                pct(sa.time_ns, ta),
                sa.above.into(),
                sa.below.into(),
            ),
            &cols(
                sb.usage.into(),
                pct(sb.time_ns, tb),
                sb.above.into(),
                sb.below.into(),
            ),
        ]
        .concat();
        table.line(&mut out, &cells);
    }
    let sum = |r: &IdleReport| {
        r.states.iter().fold((0u128, 0u128, 0u128), |(u, a, b), s| {
            (
                u + u128::from(s.usage),
                a + u128::from(s.above),
                b + u128::from(s.below),
            )
        })
    };
    let ((ua, aa, ba), (ub, ab, bb)) = (sum(a), sum(b));
    let cells = [
        &["total".to_string()][..],
        &cols(ua, "100.0".into(), aa, ba),
        &cols(ub, "100.0".into(), ab, bb),
    ]
    .concat();
    table.line(&mut out, &cells);
    let _ = writeln!(
        out,
        "cycles: {} ({} tick wakeups) | {} ({} tick wakeups)",
        a.cycles, a.tick_wakeups, b.cycles, b.tick_wakeups
    );
    out
}

/// rk3399's idle states as in its device tree (entry+exit latency, min-residency):
/// WFI 1/1 µs, cpu-sleep 370/900 µs, cluster-sleep 900/2000 µs (the same as
/// `fixtures/platforms/rk3399.toml`): the table of the unit tests, which need no file.
pub fn rk3399_states() -> Vec<IdleStateSpec> {
    let s = |name: &str, lat_us: i64, res_us: i64| IdleStateSpec {
        name: name.to_string(),
        state: CpuidleState {
            exit_latency_ns: lat_us * 1000,
            target_residency_ns: res_us * 1000,
            flags: 0,
        },
    };
    vec![
        s("WFI", 1, 1),
        s("cpu-sleep", 370, 900),
        s("cluster-sleep", 900, 2000),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(util: u64) -> ReplayConfig {
        ReplayConfig {
            tick_nsec: 4_000_000,
            capacity: 1024,
            util,
        }
    }

    #[test]
    fn timer_periods_count_every_entry() {
        let p = pattern::generate("timer:50ms", 20, 1).unwrap();
        let r = replay(&rk3399_states(), IdleGovernor::TeoMainline, &p, &cfg(0)).unwrap();
        assert_eq!(r.periods, 20);
        assert_eq!(r.timer_wakeups, 20);
        let usage: u64 = r.states.iter().map(|s| s.usage).sum();
        assert_eq!(usage, r.cycles);
        // Idle time is the pattern's plus one exit latency per cycle.
        let time: u64 = r.states.iter().map(|s| s.time_ns).sum();
        assert!(time >= 20 * 50_000_000);
    }

    #[test]
    fn bad_tables_are_errors() {
        let p = pattern::generate("timer:1ms", 1, 1).unwrap();
        assert_eq!(
            replay(&[], IdleGovernor::Menu, &p, &cfg(0)),
            Err(ReplayError::StateCount(0))
        );
        let mut c = cfg(0);
        c.tick_nsec = 0;
        assert_eq!(
            replay(&rk3399_states(), IdleGovernor::Menu, &p, &c),
            Err(ReplayError::Tick(0))
        );
    }

    #[test]
    fn percentages_round_to_one_decimal() {
        assert_eq!(pct(1, 3), "33.3");
        assert_eq!(pct(2, 3), "66.7");
        assert_eq!(pct(0, 0), "0.0");
        assert_eq!(ms(1_234_567), "1.234");
    }
}

/// Inline idle states: `NAME:EXIT_LATENCY/TARGET_RESIDENCY[:poll],...` with durations like
/// `370us` (e.g. `WFI:1us/1us,cpu-sleep:370us/900us,cluster-sleep:900us/2000us`).
pub fn parse_states(spec: &str) -> Result<Vec<IdleStateSpec>, String> {
    let n = spec.split(',').count();
    if n > CPUIDLE_STATE_MAX {
        return Err(crate::limits::idle_state_count(n));
    }
    let states: Vec<IdleStateSpec> = spec
        .split(',')
        .map(|part| {
            let part = part.trim();
            let err = |m: &str| format!("idle state `{part}`: {m}");
            let mut it = part.split(':');
            let name = it.next().unwrap_or_default();
            let times = it
                .next()
                .ok_or_else(|| err("expected NAME:EXIT_LATENCY/TARGET_RESIDENCY[:poll]"))?;
            let flags = match it.next() {
                None => 0,
                Some("poll") => schedmath::cpuidle::CPUIDLE_FLAG_POLLING,
                Some(f) => return Err(err(&format!("unknown flag `{f}` (poll)"))),
            };
            let (lat, res) = times
                .split_once('/')
                .ok_or_else(|| err("expected EXIT_LATENCY/TARGET_RESIDENCY"))?;
            let dur = |s: &str| {
                pattern::parse_duration(s)
                    .map_err(|m| err(&m))
                    .and_then(|v| i64::try_from(v).map_err(|_| err("duration too large")))
            };
            if name.is_empty() {
                return Err(err("empty name"));
            }
            let (exit_latency_ns, target_residency_ns) = (dur(lat)?, dur(res)?);
            if target_residency_ns < exit_latency_ns {
                return Err(err(
                    "the target residency is below the exit latency: entering the state could never pay off",
                ));
            }
            Ok(IdleStateSpec {
                name: name.to_string(),
                state: CpuidleState {
                    exit_latency_ns,
                    target_residency_ns,
                    flags,
                },
            })
        })
        .collect::<Result<_, _>>()?;
    for (i, s) in states.iter().enumerate() {
        if states[..i].iter().any(|o| o.name == s.name) {
            return Err(format!("idle state `{}`: duplicate name", s.name));
        }
    }
    Ok(states)
}

/// `--governor`: which governor family.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GovernorArg {
    /// teo (version from `--profile`, default teo-mainline).
    Teo,
    /// menu.
    Menu,
}

/// Options of `schedmath idle`.
#[derive(clap::Args, Debug, Clone)]
pub struct IdleArgs {
    /// Platform file (TOML) holding the CPU's idle states.
    #[arg(long, value_name = "FILE", required_unless_present = "states")]
    pub platform: Option<std::path::PathBuf>,
    /// The CPU of the platform whose idle states are replayed.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub cpu: usize,
    /// Idle states given inline instead of a platform:
    /// NAME:EXIT_LATENCY/TARGET_RESIDENCY[:poll],... (e.g. WFI:1us/1us,cpu-sleep:370us/900us).
    #[arg(long, value_name = "STATES", conflicts_with = "platform")]
    pub states: Option<String>,
    /// Idle periods: a CSV file (sleep_length_ns,measured_ns,timer_wakeup[,util]) or a
    /// generator: timer:50ms, io:50us-500us[@100ms], mixed:90%io:50us-500us,10%timer:50ms,
    /// phases A*N;B*M.
    #[arg(long, value_name = "SPEC")]
    pub pattern: String,
    /// Governor family (the teo version comes from --profile).
    #[arg(long, value_enum)]
    pub governor: Option<GovernorArg>,
    /// Behaviour profile (teo-v6.6, teo-v6.10, teo-v6.12, teo-mainline, menu, ...).
    #[arg(long, value_name = "P", conflicts_with = "compare")]
    pub profile: Option<String>,
    /// Replay the pattern under two profiles and print them side by side.
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "governor")]
    pub compare: Option<Vec<String>>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Periods per generator phase without `*N`.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub count: usize,
    /// CPU utilization at idle entry for periods that give none (teo v6.6/v6.10 compare it
    /// with capacity >> 6).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub util: u64,
    /// CPU capacity (arch_scale_cpu_capacity) for teo's util threshold; default: the
    /// platform's capacity of the CPU, or 1024 with --states.
    #[arg(long, value_name = "N")]
    pub capacity: Option<u64>,
    /// Kernel HZ (TICK_NSEC = 1 s / HZ, rounded).
    #[arg(long, default_value_t = 250)]
    pub hz: u32,
}

/// The idle governor chosen by `--governor` and `--profile`.
pub fn resolve_governor(
    governor: Option<GovernorArg>,
    profile: Option<&str>,
) -> anyhow::Result<IdleGovernor> {
    let from_profile = match profile {
        Some(p) => Some(
            schedmath::Profile::from_name(p)
                .map_err(|e| anyhow::anyhow!("--profile: {e}"))?
                .idle_governor,
        ),
        None => None,
    };
    Ok(match (governor, from_profile) {
        (None, Some(g)) => g,
        (None | Some(GovernorArg::Teo), None) => IdleGovernor::TeoMainline,
        (Some(GovernorArg::Menu), None | Some(IdleGovernor::Menu | IdleGovernor::TeoMainline)) => {
            IdleGovernor::Menu
        }
        (Some(GovernorArg::Teo), Some(IdleGovernor::Menu)) => {
            anyhow::bail!("--governor teo conflicts with --profile menu")
        }
        (Some(GovernorArg::Teo), Some(g)) => g,
        (Some(GovernorArg::Menu), Some(g)) => {
            anyhow::bail!("--governor menu conflicts with --profile {}", g.name())
        }
    })
}

/// Where the replayed CPU comes from, for the table's first line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// `platform rk3399, CPU 0` or `inline idle states`.
    pub label: String,
    /// `arch_scale_cpu_capacity()` of the CPU.
    pub capacity: u64,
}

/// Runs `schedmath idle` with the states already loaded; writes the table or JSON.
pub fn run_with_states(
    args: &IdleArgs,
    states: &[IdleStateSpec],
    setup: &Setup,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    if !crate::limits::HZ_RANGE.contains(&args.hz) {
        anyhow::bail!("--hz: {}", crate::limits::hz_message(args.hz));
    }
    if !(1..=crate::limits::SCHED_CAPACITY_SCALE).contains(&setup.capacity) {
        anyhow::bail!(
            "--capacity {}: a CPU capacity is 1..={} (SCHED_CAPACITY_SCALE)",
            setup.capacity,
            crate::limits::SCHED_CAPACITY_SCALE
        );
    }
    let periods = pattern::load(&args.pattern, args.count, args.seed)?;
    let cfg = ReplayConfig {
        tick_nsec: tick_nsec(args.hz).context(crate::limits::hz_message(args.hz))?,
        capacity: setup.capacity,
        util: args.util,
    };
    let text = match &args.compare {
        Some(names) => {
            let [a, b] = names.as_slice() else {
                anyhow::bail!("--compare takes two profiles");
            };
            let ra = replay(states, resolve_governor(None, Some(a))?, &periods, &cfg)?;
            let rb = replay(states, resolve_governor(None, Some(b))?, &periods, &cfg)?;
            if args.json {
                serde_json::to_string_pretty(&serde_json::json!({"a": ra, "b": rb}))?
            } else {
                render_compare(&ra, &rb)
            }
        }
        None => {
            let g = resolve_governor(args.governor, args.profile.as_deref())?;
            let r = replay(states, g, &periods, &cfg)?;
            if args.json {
                serde_json::to_string_pretty(&r)?
            } else {
                render(&r)
            }
        }
    };
    if !args.json {
        writeln!(
            out,
            "{} (capacity {}), HZ={}, util {} unless the pattern gives one",
            setup.label, setup.capacity, args.hz, args.util
        )?;
    }
    writeln!(out, "{}", text.trim_end())?;
    Ok(())
}

/// Runs `schedmath idle`.
pub fn run(args: &IdleArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let (states, setup) = match (&args.states, &args.platform) {
        (Some(spec), _) => (
            parse_states(spec).map_err(|e| anyhow::anyhow!("--states: {e}"))?,
            Setup {
                label: "inline idle states".into(),
                capacity: args.capacity.unwrap_or(1024),
            },
        ),
        (None, Some(path)) => {
            let p = crate::platform::Platform::load(path)?;
            let capacity = p.capacity_orig(args.cpu).ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: --cpu {} but the platform has {} CPUs",
                    path.display(),
                    args.cpu,
                    p.nr_cpus()
                )
            })?;
            let states = platform_states(&p, args.cpu);
            if states.is_empty() {
                anyhow::bail!("{}: CPU {} has no idle states", path.display(), args.cpu);
            }
            let label = format!("platform {}, CPU {}", p.name, args.cpu);
            let capacity = args.capacity.unwrap_or(capacity);
            (states, Setup { label, capacity })
        }
        (None, None) => anyhow::bail!("give --platform FILE or --states"),
    };
    run_with_states(args, &states, &setup, out)
}
