// SPDX-License-Identifier: GPL-2.0-only
//! Sequences of `fixtures/kernel/cpuidle/` (see that folder's README for every field).
//!
//! `teo_sequence` and `menu_sequence` replay idle cycles on one CPU: each `idle` op is one
//! `cpuidle_idle_call()` (select, enter statistics, reflect) through
//! [`schedmath::cpuidle::cpuidle_idle_call`]; `disable` ops toggle a state. Both go
//! through one generic driver, [`IdleSeq`], parameterised by the [`IdleGov`] whose `gov`
//! object the fixtures carry. The suite header's `variant` picks the teo version.
//!
//! Wire shapes: one struct per object as the fixtures write it serves both
//! `in.init.state0` and `out.after[i]`. Fields that only some versions carry (v6.6/v6.10's
//! `recent`, `util_*` and `recent_idx`; mainline's `tick_intercepts`, ...) and the fields
//! only `idle` or only `disable` ops report are `Option`s that the driver fills exactly
//! where the fixtures have them, so the target compares every field there is.

use core::marker::PhantomData;

use schedmath::cpuidle::teo::NR_RECENT;
use schedmath::cpuidle::{
    cpuidle_idle_call, CpuidleDevice, CpuidleDriver, CpuidleState, Governor, IdleExit, MenuDevice,
    SelectEnv, TeoCpu, CPUIDLE_STATE_MAX,
};
use schedmath::profile::IdleGovernor;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{CaseError, Sequence};

/// The teo version a suite header's `variant` names (v6.6, v6.10, v6.12, mainline).
pub fn teo_version(variant: &str) -> Result<IdleGovernor, CaseError> {
    match variant {
        "v6.6" => Ok(IdleGovernor::TeoV6_6),
        "v6.10" => Ok(IdleGovernor::TeoV6_10),
        "v6.12" => Ok(IdleGovernor::TeoV6_12),
        "mainline" => Ok(IdleGovernor::TeoMainline),
        _ => Err(CaseError::UnknownVariant),
    }
}

/// The fixtures of `version` carry util-awareness: `capacity`, `cpu_util`, `util_queried`,
/// `cpu_utilized`, the bins' `recent`, `next_recent_idx`, `recent_idx`, `util_threshold`.
fn has_util(version: IdleGovernor) -> bool {
    matches!(version, IdleGovernor::TeoV6_6 | IdleGovernor::TeoV6_10)
}

/// The fixtures of `version` carry `local_clock()` values (`now_ns` is fed to select and
/// `reflect_now_ns` to reflect).
fn has_clock(version: IdleGovernor) -> bool {
    has_util(version) || version == IdleGovernor::TeoV6_12
}

/// An input field this version needs.
fn need<T>(v: Option<T>, name: &'static str) -> Result<T, CaseError> {
    v.ok_or(CaseError::Missing(name))
}

/// `dev` as the fixtures write it: `disable` only in `init.state0` and after `disable` ops.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevJson {
    /// `last_state_idx`.
    pub last_state_idx: i32,
    /// `last_residency_ns`.
    pub last_residency_ns: i64,
    /// `poll_time_limit`.
    pub poll_time_limit: bool,
    /// `states_usage[i].disable` for each state of the table.
    #[serde(default, deserialize_with = "crate::limit::cpuidle_states::opt_list")]
    pub disable: Option<heapless::Vec<u64, CPUIDLE_STATE_MAX>>,
}

impl DevJson {
    /// The device's fields, with the `disable` array of its `n` states when `with_disable`.
    fn of(dev: &CpuidleDevice, n: usize, with_disable: bool) -> Result<Self, CaseError> {
        let disable = if with_disable {
            let mut v = heapless::Vec::new();
            for u in dev.states_usage.iter().take(n) {
                v.push(u.disable)
                    .map_err(|_| CaseError::TooLong(crate::limit::CPUIDLE_STATE_MAX))?;
            }
            Some(v)
        } else {
            None
        };
        Ok(DevJson {
            last_state_idx: dev.last_state_idx,
            last_residency_ns: dev.last_residency_ns,
            poll_time_limit: dev.poll_time_limit,
            disable,
        })
    }
}

/// `init.state0`: the full state before the first op.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State0<G> {
    /// The device (with `disable`).
    pub dev: DevJson,
    /// The governor's data.
    pub gov: G,
}

/// `in.init` (`table` is descriptive; `capacity` is already in teo v6.6/v6.10's
/// `state0.gov.util_threshold`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InitJson<G> {
    /// `TICK_NSEC`.
    pub tick_nsec: i64,
    /// The driver's states, shallowest first (each row's `name` is descriptive and its
    /// `disable` repeats `state0.dev.disable`).
    #[serde(deserialize_with = "crate::limit::cpuidle_states::list")]
    pub states: heapless::Vec<CpuidleState, CPUIDLE_STATE_MAX>,
    /// The state before the first op.
    pub state0: State0<G>,
}

/// A cpuidle suite's `in` (besides `ops`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IdleInit<G> {
    /// Table and initial state.
    pub init: InitJson<G>,
}

/// Ops of the cpuidle suites.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum IdleOp {
    /// One pass of the idle loop; the exit keys are absent when `entered` is false.
    #[serde(rename = "idle")]
    Idle {
        /// `local_clock()` at select (teo v6.6, v6.10, v6.12).
        now_ns: u64,
        /// `cpuidle_governor_latency_req()` (ns).
        latency_req_ns: i64,
        /// `tick_nohz_tick_stopped()`.
        tick_stopped: bool,
        /// `tick_nohz_get_sleep_length()`.
        sleep_length_ns: i64,
        /// The `delta_next` it writes.
        delta_tick_ns: i64,
        /// `sched_cpu_util()` (teo v6.6, v6.10).
        #[serde(default)]
        cpu_util: Option<u64>,
        /// Entry was not aborted by `need_resched()`.
        entered: bool,
        /// Measured entry-to-exit time (entered only).
        #[serde(default)]
        last_residency_ns: Option<i64>,
        /// `tick_nohz_idle_got_tick()` (entered only).
        #[serde(default)]
        got_tick: Option<bool>,
        /// What `poll_idle()` reports (entered only).
        #[serde(default)]
        poll_time_limit: Option<bool>,
        /// `local_clock()` at reflect (entered only; teo v6.6, v6.10, v6.12).
        #[serde(default)]
        reflect_now_ns: Option<u64>,
    },
    /// `dev->states_usage[state].disable = disable`.
    #[serde(rename = "disable")]
    Disable {
        /// State index.
        state: usize,
        /// New `disable` value.
        disable: u64,
    },
}

/// `ret` of an `idle` op: what select returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetJson {
    /// The selected state.
    pub idx: usize,
    /// The final `*stop_tick`.
    pub stop_tick: bool,
}

/// `out.after[i]`. An `idle` op reports every field (`util_*` in teo v6.6/v6.10 only) and
/// `dev` without `disable`; a `disable` op reports `ret: null`, `dev` with `disable`, `gov`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleAfter<G> {
    /// What select returned (`null` after `disable`).
    pub ret: Option<RetJson>,
    /// `tick_nohz_get_sleep_length()` was called.
    #[serde(default)]
    pub sleep_length_queried: Option<bool>,
    /// teo v6.6/v6.10: `teo_cpu_is_utilized()` was evaluated.
    #[serde(default)]
    pub util_queried: Option<bool>,
    /// teo v6.6/v6.10: its result.
    #[serde(default)]
    pub cpu_utilized: Option<bool>,
    /// The entry was too deep (0 or 1).
    #[serde(default)]
    pub above: Option<u8>,
    /// A deeper state would have fitted (0 or 1).
    #[serde(default)]
    pub below: Option<u8>,
    /// The device.
    pub dev: DevJson,
    /// The governor's data.
    pub gov: G,
}

/// A governor as the fixtures carry it: its `gov` object and the version it runs.
pub trait IdleGov {
    /// The `gov` object of `state0` and `after`.
    type Gov: Serialize + DeserializeOwned + PartialEq + core::fmt::Debug;
    /// The governor (and version) the suite header's `variant` names.
    fn version(variant: &str) -> Result<IdleGovernor, CaseError>;
    /// The governor data from `init.state0.gov` for a table of `n` states.
    fn gov_in(version: IdleGovernor, gov: &Self::Gov, n: usize) -> Result<Governor, CaseError>;
    /// The `gov` object of the governor data (`n` states).
    fn gov_out(gov: &Governor, n: usize) -> Result<Self::Gov, CaseError>;
}

/// The running state of an [`IdleSeq`]: one CPU's driver, device and governor.
pub struct IdleState {
    drv: CpuidleDriver,
    dev: CpuidleDevice,
    gov: Governor,
    tick_nsec: i64,
}

/// The generic cpuidle sequence driver.
pub struct IdleSeq<G>(PhantomData<G>);

impl<G: IdleGov> Sequence for IdleSeq<G> {
    type Init = IdleInit<G::Gov>;
    type Op = IdleOp;
    type After = IdleAfter<G::Gov>;
    type State = IdleState;

    fn start(init: &Self::Init, variant: &str) -> Result<IdleState, CaseError> {
        let version = G::version(variant)?;
        let i = &init.init;
        let drv = CpuidleDriver {
            states: i.states.clone(),
        };
        let n = drv.state_count();
        let d = &i.state0.dev;
        let disable = d
            .disable
            .as_ref()
            .ok_or(CaseError::Missing("init.state0.dev.disable"))?;
        if disable.len() != n {
            return Err(CaseError::OutOfRange("init.state0.dev.disable"));
        }
        let mut dev = CpuidleDevice {
            last_state_idx: d.last_state_idx,
            last_residency_ns: d.last_residency_ns,
            poll_time_limit: d.poll_time_limit,
            ..CpuidleDevice::default()
        };
        for (u, &v) in dev.states_usage.iter_mut().zip(disable) {
            u.disable = v;
        }
        Ok(IdleState {
            gov: G::gov_in(version, &i.state0.gov, n)?,
            drv,
            dev,
            tick_nsec: i.tick_nsec,
        })
    }

    fn apply(s: &mut IdleState, op: &IdleOp) -> Result<Self::After, CaseError> {
        let n = s.drv.state_count();
        match *op {
            IdleOp::Idle {
                now_ns,
                latency_req_ns,
                tick_stopped,
                sleep_length_ns,
                delta_tick_ns,
                cpu_util,
                entered,
                last_residency_ns,
                got_tick,
                poll_time_limit,
                reflect_now_ns,
            } => {
                let version = s.gov.kind();
                let util = has_util(version);
                let cpu_util = if util { need(cpu_util, "cpu_util")? } else { 0 };
                let exit = if entered {
                    Some(IdleExit {
                        last_residency_ns: need(last_residency_ns, "last_residency_ns")?,
                        poll_time_limit: need(poll_time_limit, "poll_time_limit")?,
                        got_tick: need(got_tick, "got_tick")?,
                        reflect_now_ns: if has_clock(version) {
                            need(reflect_now_ns, "reflect_now_ns")?
                        } else {
                            0
                        },
                    })
                } else {
                    None
                };
                let env = SelectEnv {
                    tick_nsec: s.tick_nsec,
                    latency_req_ns,
                    tick_stopped,
                    sleep_length_ns,
                    delta_tick_ns,
                    now_ns,
                    cpu_util,
                };
                let cycle = cpuidle_idle_call(&s.drv, &mut s.dev, &mut s.gov, &env, exit.as_ref());
                let sel = cycle.selection;
                Ok(IdleAfter {
                    ret: Some(RetJson {
                        idx: sel.idx,
                        stop_tick: sel.stop_tick,
                    }),
                    sleep_length_queried: Some(sel.sleep_length_queried),
                    util_queried: util.then_some(sel.util_queried),
                    cpu_utilized: util.then_some(sel.cpu_utilized),
                    above: Some(u8::from(cycle.miss.above)),
                    below: Some(u8::from(cycle.miss.below)),
                    dev: DevJson::of(&s.dev, n, false)?,
                    gov: G::gov_out(&s.gov, n)?,
                })
            }
            IdleOp::Disable { state, disable } => {
                let usage = s.dev.states_usage.get_mut(state).filter(|_| state < n);
                usage.ok_or(CaseError::OutOfRange("state"))?.disable = disable;
                Ok(IdleAfter {
                    ret: None,
                    sleep_length_queried: None,
                    util_queried: None,
                    cpu_utilized: None,
                    above: None,
                    below: None,
                    dev: DevJson::of(&s.dev, n, true)?,
                    gov: G::gov_out(&s.gov, n)?,
                })
            }
        }
    }
}

/// `struct teo_bin` as the fixtures write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeoBinJson {
    /// `intercepts`.
    pub intercepts: u32,
    /// `hits`.
    pub hits: u32,
    /// `recent` (v6.6/v6.10).
    #[serde(default)]
    pub recent: Option<u32>,
}

/// `struct teo_cpu` as the fixtures write it: the fields of one version, one bin per state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeoCpuJson {
    /// `time_span_ns` (not mainline).
    #[serde(default)]
    pub time_span_ns: Option<i64>,
    /// `sleep_length_ns`.
    pub sleep_length_ns: i64,
    /// `state_bins[0..state_count]`.
    #[serde(deserialize_with = "crate::limit::cpuidle_states::list")]
    pub state_bins: heapless::Vec<TeoBinJson, CPUIDLE_STATE_MAX>,
    /// `total`.
    pub total: u32,
    /// `next_recent_idx` (v6.6/v6.10).
    #[serde(default)]
    pub next_recent_idx: Option<i32>,
    /// `recent_idx[NR_RECENT]` (v6.6/v6.10).
    #[serde(default)]
    pub recent_idx: Option<[i32; NR_RECENT]>,
    /// `tick_hits` (not mainline).
    #[serde(default)]
    pub tick_hits: Option<u32>,
    /// `util_threshold` (v6.6/v6.10).
    #[serde(default)]
    pub util_threshold: Option<u64>,
    /// `tick_intercepts` (mainline).
    #[serde(default)]
    pub tick_intercepts: Option<u32>,
    /// `short_idles` (mainline).
    #[serde(default)]
    pub short_idles: Option<u32>,
    /// `artificial_wakeup` (mainline).
    #[serde(default)]
    pub artificial_wakeup: Option<bool>,
}

/// teo, every version (`gov` = [`TeoCpuJson`]).
pub enum Teo {}

impl IdleGov for Teo {
    type Gov = TeoCpuJson;

    fn version(variant: &str) -> Result<IdleGovernor, CaseError> {
        teo_version(variant)
    }

    fn gov_in(version: IdleGovernor, g: &TeoCpuJson, n: usize) -> Result<Governor, CaseError> {
        if g.state_bins.len() != n {
            return Err(CaseError::OutOfRange("init.state0.gov.state_bins"));
        }
        let util = has_util(version);
        let mut cpu = TeoCpu {
            sleep_length_ns: g.sleep_length_ns,
            total: g.total,
            ..TeoCpu::default()
        };
        for (b, dst) in g.state_bins.iter().zip(cpu.state_bins.iter_mut()) {
            dst.intercepts = b.intercepts;
            dst.hits = b.hits;
            if util {
                dst.recent = need(b.recent, "init.state0.gov.state_bins[].recent")?;
            }
        }
        if version == IdleGovernor::TeoMainline {
            cpu.tick_intercepts = need(g.tick_intercepts, "init.state0.gov.tick_intercepts")?;
            cpu.short_idles = need(g.short_idles, "init.state0.gov.short_idles")?;
            cpu.artificial_wakeup = need(g.artificial_wakeup, "init.state0.gov.artificial_wakeup")?;
        } else {
            cpu.time_span_ns = need(g.time_span_ns, "init.state0.gov.time_span_ns")?;
            cpu.tick_hits = need(g.tick_hits, "init.state0.gov.tick_hits")?;
        }
        if util {
            cpu.next_recent_idx = need(g.next_recent_idx, "init.state0.gov.next_recent_idx")?;
            cpu.recent_idx = need(g.recent_idx, "init.state0.gov.recent_idx")?;
            cpu.util_threshold = need(g.util_threshold, "init.state0.gov.util_threshold")?;
        }
        Ok(Governor::Teo { version, cpu })
    }

    fn gov_out(gov: &Governor, n: usize) -> Result<TeoCpuJson, CaseError> {
        let Governor::Teo { version, cpu } = gov else {
            return Err(CaseError::UnknownVariant);
        };
        let util = has_util(*version);
        let mainline = *version == IdleGovernor::TeoMainline;
        let mut state_bins = heapless::Vec::new();
        for b in cpu.state_bins.iter().take(n) {
            let bin = TeoBinJson {
                intercepts: b.intercepts,
                hits: b.hits,
                recent: util.then_some(b.recent),
            };
            state_bins
                .push(bin)
                .map_err(|_| CaseError::TooLong(crate::limit::CPUIDLE_STATE_MAX))?;
        }
        Ok(TeoCpuJson {
            time_span_ns: (!mainline).then_some(cpu.time_span_ns),
            sleep_length_ns: cpu.sleep_length_ns,
            state_bins,
            total: cpu.total,
            next_recent_idx: util.then_some(cpu.next_recent_idx),
            recent_idx: util.then_some(cpu.recent_idx),
            tick_hits: (!mainline).then_some(cpu.tick_hits),
            util_threshold: util.then_some(cpu.util_threshold),
            tick_intercepts: mainline.then_some(cpu.tick_intercepts),
            short_idles: mainline.then_some(cpu.short_idles),
            artificial_wakeup: mainline.then_some(cpu.artificial_wakeup),
        })
    }
}

/// menu (`gov` = the core's [`MenuDevice`], whose fields are the fixture's).
pub enum Menu {}

impl IdleGov for Menu {
    type Gov = MenuDevice;

    /// menu has one version; the header's `variant` names the kernel it came from.
    fn version(_variant: &str) -> Result<IdleGovernor, CaseError> {
        Ok(IdleGovernor::Menu)
    }

    fn gov_in(_version: IdleGovernor, g: &MenuDevice, _n: usize) -> Result<Governor, CaseError> {
        Ok(Governor::Menu(*g))
    }

    fn gov_out(gov: &Governor, _n: usize) -> Result<MenuDevice, CaseError> {
        match gov {
            Governor::Menu(d) => Ok(*d),
            Governor::Teo { .. } => Err(CaseError::UnknownVariant),
        }
    }
}

/// `cpuidle/teo_sequence` (all four teo suites).
pub type TeoSequence = IdleSeq<Teo>;
/// `cpuidle/menu_sequence`.
pub type MenuSequence = IdleSeq<Menu>;
