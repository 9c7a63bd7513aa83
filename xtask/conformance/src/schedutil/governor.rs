// SPDX-License-Identifier: GPL-2.0-only
//! The governor sequences of `fixtures/kernel/schedutil/`: `get_next_freq_sequence`,
//! `iowait_sequence`, `sugov_update_single_freq_sequence` and
//! `sugov_update_shared_sequence`.
//!
//! Each builds the cpufreq policy and governor state from `in.init`, applies the ops in
//! order and reports the state after each. The single-CPU suite's header `variant` selects
//! the busy filter ([`profile_of`]).
//!
//! Wire shapes: the three policy suites share one `in.init`, the table fields
//! ([`TableIn`]) beside [`PolicyInit`]; the fields only some of them carry are `Option`s
//! that the driver requires where it needs them. The single- and shared-policy suites share one state struct, [`GovernorAfter`],
//! whose fields of only one of them (or only of `update` ops) are `Option`s filled exactly
//! where the fixtures have them. A shared policy has at most [`POLICY_CPUS_MAX`] CPUs.

use heapless::{LinearMap, Vec};
use schedmath::cpufreq::{cpufreq_driver_fast_switch, cpufreq_set_policy};
use schedmath::profile::BusyFilter;
use schedmath::schedutil::{
    get_next_freq, sugov_iowait_apply, sugov_iowait_boost, sugov_iowait_reset, sugov_limits,
    sugov_update_next_freq, sugov_update_shared, sugov_update_single_freq, sugov_work, SugovCpu,
    SugovEnv, SugovPolicy, SugovRq, SugovUpdate,
};
use schedmath::Profile;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::TableIn;
use crate::flat::Flat;
use crate::{CaseError, Sequence};

/// Most CPUs of one shared policy the driver holds (the fixtures have at most 4). A longer
/// `cpus` list, or a map over more CPUs, is refused when read, naming this limit.
///
/// Host (feature `json`): 64, as many as a topology holds (`NR_CPUS`; a shared policy can
/// span a whole cluster or package). Target: 8, an ARM cluster: it sizes the largest
/// sequence state, which every sequence's start pays for on the target's stack (with 8
/// the shared suite measures 15.1 KB below the runner loop on thumbv7m, 25.4 KB with 16).
#[cfg(feature = "json")]
pub const POLICY_CPUS_MAX: usize = 64;
/// See the `json` variant of this constant.
#[cfg(not(feature = "json"))]
pub const POLICY_CPUS_MAX: usize = 8;

/// The profile a suite header's `variant` names: `mainline`, or
/// `busy-filter-without-uclamp-exception` (the busy filter before the 2021 fix).
pub fn profile_of(variant: &str) -> Result<Profile, CaseError> {
    let mut p = Profile::MAINLINE;
    match variant {
        "mainline" => {}
        "busy-filter-without-uclamp-exception" => {
            p.busy_filter = BusyFilter::WithoutUclampException;
        }
        _ => return Err(CaseError::UnknownVariant),
    }
    Ok(p)
}

fn need<T>(v: Option<T>, name: &'static str) -> Result<T, CaseError> {
    v.ok_or(CaseError::Missing(name))
}

// ---------------------------------------------------------------------------------------
// The cpufreq policy and sugov_policy of next_freq, single_freq and shared_freq

/// `in.init` of the policy suites: the cpufreq policy and `sugov_policy` fields all three
/// carry, then the governor fields (single- and shared-policy suites), the single CPU's
/// `sugov_cpu` (single-policy suite) and the CPUs of a shared policy.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PolicyInit {
    /// `cpuinfo.max_freq`.
    pub cpuinfo_max_freq: u32,
    /// `cpuinfo.min_freq`.
    pub cpuinfo_min_freq: u32,
    /// `policy->min`.
    pub min: u32,
    /// `policy->max`.
    pub max: u32,
    /// `policy->cur`.
    pub cur: u32,
    /// `arch_scale_freq_invariant()`.
    pub freq_invariant: bool,
    /// `arch_scale_freq_ref()`.
    pub arch_freq_ref: u64,
    /// The driver has `CPUFREQ_NEED_UPDATE_LIMITS`.
    pub driver_need_update_limits: bool,
    /// `fast_switch_enabled`.
    pub fast_switch_enabled: bool,
    /// `sg_policy->next_freq`.
    pub next_freq: u32,
    /// `sg_policy->cached_raw_freq`.
    pub cached_raw_freq: u32,
    /// `sg_policy->need_freq_update`.
    pub need_freq_update: bool,
    /// `sg_policy->last_freq_update_time`.
    pub last_freq_update_time: u64,
    /// `arch_scale_cpu_capacity()` of every CPU of the policy.
    pub capacity: u64,
    /// `uclamp_is_used()` (governor suites).
    #[serde(default)]
    pub uclamp_used: Option<bool>,
    /// `TICK_NSEC` (governor suites).
    #[serde(default, rename = "TICK_NSEC")]
    pub tick_nsec: Option<i64>,
    /// `sg_policy->freq_update_delay_ns` (governor suites).
    #[serde(default)]
    pub freq_update_delay_ns: Option<i64>,
    /// `sg_policy->limits_changed` (governor suites).
    #[serde(default)]
    pub limits_changed: Option<bool>,
    /// `sg_policy->work_in_progress` (governor suites).
    #[serde(default)]
    pub work_in_progress: Option<bool>,
    /// `sg_cpu->iowait_boost` (single-policy suite).
    #[serde(default)]
    pub iowait_boost: Option<u32>,
    /// `sg_cpu->iowait_boost_pending` (single-policy suite).
    #[serde(default)]
    pub iowait_boost_pending: Option<bool>,
    /// `sg_cpu->last_update` (single-policy suite).
    #[serde(default)]
    pub last_update: Option<u64>,
    /// `sg_cpu->util` (single-policy suite).
    #[serde(default)]
    pub util: Option<u64>,
    /// `sg_cpu->bw_min` (single-policy suite).
    #[serde(default)]
    pub bw_min: Option<u64>,
    /// `sg_cpu->saved_idle_calls` (single-policy suite).
    #[serde(default)]
    pub saved_idle_calls: Option<u64>,
    /// The policy's CPU ids, in order (shared-policy suite).
    #[serde(default, deserialize_with = "crate::limit::policy_cpus::opt_list")]
    pub cpus: Option<Vec<u32, POLICY_CPUS_MAX>>,
    /// Each CPU's `sugov_cpu` (shared-policy suite).
    #[serde(default, deserialize_with = "crate::limit::policy_cpus::opt_map")]
    pub per_cpu: Option<LinearMap<u32, SugovCpu, POLICY_CPUS_MAX>>,
    /// Each CPU's rq inputs (shared-policy suite).
    #[serde(default, deserialize_with = "crate::limit::policy_cpus::opt_map")]
    pub rq: Option<LinearMap<u32, RqIn, POLICY_CPUS_MAX>>,
}

impl PolicyInit {
    /// The policy (with `table`'s frequencies) and the `sugov_policy` fields every suite
    /// carries.
    fn sg_policy(&self, table: &TableIn) -> Result<SugovPolicy, CaseError> {
        let mut policy = table.policy(self.min, self.max)?;
        policy.cur = self.cur;
        policy.cpuinfo_min_freq = self.cpuinfo_min_freq;
        policy.cpuinfo_max_freq = self.cpuinfo_max_freq;
        policy.fast_switch_enabled = self.fast_switch_enabled;
        policy.driver_need_update_limits = self.driver_need_update_limits;
        Ok(SugovPolicy {
            policy,
            last_freq_update_time: self.last_freq_update_time,
            next_freq: self.next_freq,
            cached_raw_freq: self.cached_raw_freq,
            need_freq_update: self.need_freq_update,
            ..Default::default()
        })
    }

    fn env(&self, tick_nsec: i64, uclamp_used: bool) -> SugovEnv {
        SugovEnv {
            tick_nsec,
            uclamp_used,
            freq_invariant: self.freq_invariant,
            arch_freq_ref: self.arch_freq_ref,
        }
    }

    /// The governor of a single- or shared-policy suite (its fields required).
    fn governor(&self, table: &TableIn) -> Result<Governor, CaseError> {
        let mut sg = self.sg_policy(table)?;
        sg.freq_update_delay_ns = need(self.freq_update_delay_ns, "init.freq_update_delay_ns")?;
        sg.limits_changed = need(self.limits_changed, "init.limits_changed")?;
        sg.work_in_progress = need(self.work_in_progress, "init.work_in_progress")?;
        let env = self.env(
            need(self.tick_nsec, "init.TICK_NSEC")?,
            need(self.uclamp_used, "init.uclamp_used")?,
        );
        Ok(Governor {
            sg,
            env,
            capacity: self.capacity,
        })
    }
}

/// A policy suite's `in` (besides `ops`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PolicyIn {
    /// Initial state: the frequency table and the rest.
    pub init: Flat<TableIn, PolicyInit>,
}

// ---------------------------------------------------------------------------------------
// next_freq.jsonl

/// Ops of `get_next_freq_sequence`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum NextFreqOp {
    /// `get_next_freq()`, `sugov_update_next_freq()` and, if committed, the fast switch.
    #[serde(rename = "step")]
    Step {
        /// Now (ns).
        time: u64,
        /// Utilization.
        util: u64,
        /// Capacity.
        max: u64,
    },
    /// `get_next_freq()` alone.
    #[serde(rename = "get_next_freq")]
    GetNextFreq {
        /// Utilization.
        util: u64,
        /// Capacity.
        max: u64,
    },
    /// `need_freq_update = true`.
    #[serde(rename = "set_need_freq_update")]
    SetNeedFreqUpdate {},
    /// Writes policy min/max directly (no resolution).
    #[serde(rename = "set_policy_limits")]
    SetPolicyLimits {
        /// `policy->min`.
        min: u32,
        /// `policy->max`.
        max: u32,
    },
    /// Writes `policy->cur`.
    #[serde(rename = "set_cur")]
    SetCur {
        /// `policy->cur`.
        cur: u32,
    },
}

/// `get_next_freq_sequence`'s `out.after[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NextFreqAfter {
    /// `sg_policy->next_freq`.
    pub next_freq: u32,
    /// `sg_policy->cached_raw_freq`.
    pub cached_raw_freq: u32,
    /// `sg_policy->need_freq_update`.
    pub need_freq_update: bool,
    /// `sg_policy->last_freq_update_time`.
    pub last_freq_update_time: u64,
    /// `policy->cur`.
    pub cur: u32,
    /// `policy->cached_target_freq`.
    pub cached_target_freq: u32,
    /// `policy->cached_resolved_idx`.
    pub cached_resolved_idx: u32,
    /// `get_next_freq()`'s result (`step`, `get_next_freq`).
    #[serde(default)]
    pub ret: Option<u32>,
    /// `sugov_update_next_freq()`'s result (`step`).
    #[serde(default)]
    pub committed: Option<bool>,
}

/// The running state of [`NextFreqSequence`].
pub struct NextFreqState {
    sg: SugovPolicy,
    env: SugovEnv,
}

/// `schedutil/get_next_freq_sequence`.
pub struct NextFreqSequence;

impl Sequence for NextFreqSequence {
    type Init = PolicyIn;
    type Op = NextFreqOp;
    type After = NextFreqAfter;
    type State = NextFreqState;

    fn start(init: &PolicyIn, _variant: &str) -> Result<NextFreqState, CaseError> {
        Ok(NextFreqState {
            sg: init.init.1.sg_policy(&init.init.0)?,
            env: init.init.1.env(0, false),
        })
    }

    fn apply(s: &mut NextFreqState, op: &NextFreqOp) -> Result<NextFreqAfter, CaseError> {
        let (sg, env) = (&mut s.sg, &s.env);
        let next = |sg: &mut SugovPolicy, util, max| {
            get_next_freq(sg, env, util, max).ok_or(CaseError::OutOfRange("max"))
        };
        let (mut ret, mut committed) = (None, None);
        match *op {
            NextFreqOp::Step { time, util, max } => {
                let f = next(sg, util, max)?;
                let c = sugov_update_next_freq(sg, time, f);
                if c {
                    cpufreq_driver_fast_switch(&mut sg.policy, f);
                }
                (ret, committed) = (Some(f), Some(c));
            }
            NextFreqOp::GetNextFreq { util, max } => ret = Some(next(sg, util, max)?),
            NextFreqOp::SetNeedFreqUpdate {} => sg.need_freq_update = true,
            NextFreqOp::SetPolicyLimits { min, max } => (sg.policy.min, sg.policy.max) = (min, max),
            NextFreqOp::SetCur { cur } => sg.policy.cur = cur,
        }
        Ok(NextFreqAfter {
            next_freq: sg.next_freq,
            cached_raw_freq: sg.cached_raw_freq,
            need_freq_update: sg.need_freq_update,
            last_freq_update_time: sg.last_freq_update_time,
            cur: sg.policy.cur,
            cached_target_freq: sg.policy.cached_target_freq,
            cached_resolved_idx: sg.policy.cached_resolved_idx,
            ret,
            committed,
        })
    }
}

// ---------------------------------------------------------------------------------------
// iowait.jsonl

/// `iowait_sequence`'s `in.init`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct IowaitInit {
    /// `TICK_NSEC`.
    #[serde(rename = "TICK_NSEC")]
    pub tick_nsec: i64,
    /// `sg_cpu->iowait_boost`.
    pub iowait_boost: u32,
    /// `sg_cpu->iowait_boost_pending`.
    pub iowait_boost_pending: bool,
    /// `sg_cpu->last_update`.
    pub last_update: u64,
}

/// `iowait_sequence`'s `in` (besides `ops`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct IowaitIn {
    /// Initial state.
    pub init: IowaitInit,
}

/// Ops of `iowait_sequence`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum IowaitOp {
    /// The single-CPU update order: boost, `last_update = time`, then apply if
    /// `should_update`.
    #[serde(rename = "update")]
    Update {
        /// Now (ns).
        time: u64,
        /// Update flags.
        flags: u32,
        /// The rate limit let the update through.
        should_update: bool,
        /// The CPU's capacity.
        max_cap: u64,
    },
    /// `sugov_iowait_boost()`.
    #[serde(rename = "sugov_iowait_boost")]
    Boost {
        /// Now (ns).
        time: u64,
        /// Update flags.
        flags: u32,
    },
    /// `sugov_iowait_apply()`.
    #[serde(rename = "sugov_iowait_apply")]
    Apply {
        /// Now (ns).
        time: u64,
        /// The CPU's capacity.
        max_cap: u64,
    },
    /// `sugov_iowait_reset()`.
    #[serde(rename = "sugov_iowait_reset")]
    Reset {
        /// Now (ns).
        time: u64,
        /// Restart at the minimum rather than drop.
        set_iowait_boost: bool,
    },
    /// `last_update = time`.
    #[serde(rename = "set_last_update")]
    SetLastUpdate {
        /// Now (ns).
        time: u64,
    },
}

/// An iowait op's `ret`: the boost in capacity units (`sugov_iowait_apply`) or whether the
/// boost was reset (`sugov_iowait_reset`).
///
/// The fixtures write a bare number or bool. JSON is read by its type; postcard, which
/// cannot tell types apart, carries it as a plain tagged enum ([`IowaitRetTagged`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IowaitRet {
    /// Boost in capacity units.
    Boost(u64),
    /// The reset happened.
    Reset(bool),
}

/// [`IowaitRet`] on a binary wire.
#[derive(Serialize, Deserialize)]
enum IowaitRetTagged {
    Boost(u64),
    Reset(bool),
}

impl Serialize for IowaitRet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (*self, s.is_human_readable()) {
            (IowaitRet::Boost(v), true) => s.serialize_u64(v),
            (IowaitRet::Reset(b), true) => s.serialize_bool(b),
            (IowaitRet::Boost(v), false) => IowaitRetTagged::Boost(v).serialize(s),
            (IowaitRet::Reset(b), false) => IowaitRetTagged::Reset(b).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for IowaitRet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bare;
        impl Visitor<'_> for Bare {
            type Value = IowaitRet;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("an unsigned integer or a bool")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IowaitRet, E> {
                Ok(IowaitRet::Boost(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<IowaitRet, E> {
                Ok(IowaitRet::Reset(v))
            }
        }
        if d.is_human_readable() {
            return d.deserialize_any(Bare);
        }
        Ok(match IowaitRetTagged::deserialize(d)? {
            IowaitRetTagged::Boost(v) => IowaitRet::Boost(v),
            IowaitRetTagged::Reset(b) => IowaitRet::Reset(b),
        })
    }
}

/// `iowait_sequence`'s `out.after[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IowaitAfter {
    /// `sg_cpu->iowait_boost`.
    pub iowait_boost: u32,
    /// `sg_cpu->iowait_boost_pending`.
    pub iowait_boost_pending: bool,
    /// `sg_cpu->last_update`.
    pub last_update: u64,
    /// The op's return value (apply and reset ops, and `update` with `should_update`).
    #[serde(default)]
    pub ret: Option<IowaitRet>,
}

/// The running state of [`IowaitSequence`].
pub struct IowaitState {
    c: SugovCpu,
    env: SugovEnv,
}

/// `schedutil/iowait_sequence`.
pub struct IowaitSequence;

impl Sequence for IowaitSequence {
    type Init = IowaitIn;
    type Op = IowaitOp;
    type After = IowaitAfter;
    type State = IowaitState;

    fn start(init: &IowaitIn, _variant: &str) -> Result<IowaitState, CaseError> {
        let i = &init.init;
        Ok(IowaitState {
            c: SugovCpu {
                iowait_boost: i.iowait_boost,
                iowait_boost_pending: i.iowait_boost_pending,
                last_update: i.last_update,
                ..Default::default()
            },
            env: SugovEnv {
                tick_nsec: i.tick_nsec,
                ..Default::default()
            },
        })
    }

    fn apply(s: &mut IowaitState, op: &IowaitOp) -> Result<IowaitAfter, CaseError> {
        let (c, env) = (&mut s.c, &s.env);
        let ret = match *op {
            IowaitOp::Update {
                time,
                flags,
                should_update,
                max_cap,
            } => {
                sugov_iowait_boost(c, env, time, flags);
                c.last_update = time;
                should_update.then(|| IowaitRet::Boost(sugov_iowait_apply(c, env, time, max_cap)))
            }
            IowaitOp::Boost { time, flags } => {
                sugov_iowait_boost(c, env, time, flags);
                None
            }
            IowaitOp::Apply { time, max_cap } => {
                Some(IowaitRet::Boost(sugov_iowait_apply(c, env, time, max_cap)))
            }
            IowaitOp::Reset {
                time,
                set_iowait_boost,
            } => Some(IowaitRet::Reset(sugov_iowait_reset(
                c,
                env,
                time,
                set_iowait_boost,
            ))),
            IowaitOp::SetLastUpdate { time } => {
                c.last_update = time;
                None
            }
        };
        Ok(IowaitAfter {
            iowait_boost: c.iowait_boost,
            iowait_boost_pending: c.iowait_boost_pending,
            last_update: c.last_update,
            ret,
        })
    }
}

// ---------------------------------------------------------------------------------------
// single_freq.jsonl and shared_freq.jsonl

/// The single-policy `update` op's own fields beside its rq inputs.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct UpdateAt {
    /// Now (ns).
    #[serde(default)]
    pub time: Option<u64>,
    /// Update flags (the kernel's `unsigned int flags`, narrowed where it is passed).
    #[serde(default)]
    pub flags: Option<u64>,
}

/// One CPU's runqueue inputs: the core's [`SugovRq`] as the fixtures write it (flat;
/// `capacity` comes from `in.init`), with the single-policy `update` op's `time` and
/// `flags` beside it.
pub type RqIn = Flat<SugovRq, UpdateAt>;

/// The rq inputs with the policy's `capacity`.
fn rq_at(r: &RqIn, capacity: u64) -> SugovRq {
    SugovRq { capacity, ..r.0 }
}

/// A `sugov_cpu` of a shared policy in `out.after[i].per_cpu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuAfter {
    /// `iowait_boost`.
    pub iowait_boost: u32,
    /// `iowait_boost_pending`.
    pub iowait_boost_pending: bool,
    /// `last_update`.
    pub last_update: u64,
    /// `util`.
    pub util: u64,
    /// `bw_min`.
    pub bw_min: u64,
}

/// `out.after[i]` of the single- and shared-policy suites.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GovernorAfter {
    /// `sg_policy->next_freq`.
    pub next_freq: u32,
    /// `sg_policy->cached_raw_freq`.
    pub cached_raw_freq: u32,
    /// `sg_policy->last_freq_update_time`.
    pub last_freq_update_time: u64,
    /// `sg_policy->need_freq_update`.
    pub need_freq_update: bool,
    /// `sg_policy->limits_changed`.
    pub limits_changed: bool,
    /// `sg_policy->work_in_progress`.
    pub work_in_progress: bool,
    /// `policy->cur`.
    pub cur: u32,
    /// `policy->min`.
    pub min: u32,
    /// `policy->max`.
    pub max: u32,
    /// `sg_cpu->iowait_boost` (single policy).
    #[serde(default)]
    pub iowait_boost: Option<u32>,
    /// `sg_cpu->iowait_boost_pending` (single policy).
    #[serde(default)]
    pub iowait_boost_pending: Option<bool>,
    /// `sg_cpu->last_update` (single policy).
    #[serde(default)]
    pub last_update: Option<u64>,
    /// `sg_cpu->util` (single policy).
    #[serde(default)]
    pub util: Option<u64>,
    /// `sg_cpu->bw_min` (single policy).
    #[serde(default)]
    pub bw_min: Option<u64>,
    /// `sg_cpu->saved_idle_calls` (single policy).
    #[serde(default)]
    pub saved_idle_calls: Option<u64>,
    /// Every CPU's `sugov_cpu` in `cpus` order (shared policy).
    #[serde(default)]
    pub per_cpu: Option<Vec<CpuAfter, POLICY_CPUS_MAX>>,
    /// Trace of an `update`: `sugov_should_update_freq()` returned true.
    #[serde(default)]
    pub should_update: Option<bool>,
    /// Trace of a single-policy `update`: what `get_next_freq()` returned.
    #[serde(default)]
    pub next_f_resolved: Option<u32>,
    /// Trace of a single-policy `update`: `sugov_hold_freq()`'s result, null when it was
    /// not called.
    #[serde(default)]
    pub hold: Option<bool>,
    /// Trace of an `update`: the frequency after the hold filter.
    #[serde(default)]
    pub next_f: Option<u32>,
    /// Trace of an `update`: `sugov_update_next_freq()` returned true.
    #[serde(default)]
    pub committed: Option<bool>,
}

/// The governor of a single- or shared-policy suite.
pub struct Governor {
    sg: SugovPolicy,
    env: SugovEnv,
    capacity: u64,
}

impl Governor {
    /// The `limits` op: cpufreq_set_policy()'s resolution, then the governor hook.
    fn limits(&mut self, min: u32, max: u32) {
        cpufreq_set_policy(&mut self.sg.policy, min, max);
        sugov_limits(&mut self.sg);
    }

    /// The policy-level fields of `after[i]` (the rest empty).
    fn after(&self) -> GovernorAfter {
        let sg = &self.sg;
        GovernorAfter {
            next_freq: sg.next_freq,
            cached_raw_freq: sg.cached_raw_freq,
            last_freq_update_time: sg.last_freq_update_time,
            need_freq_update: sg.need_freq_update,
            limits_changed: sg.limits_changed,
            work_in_progress: sg.work_in_progress,
            cur: sg.policy.cur,
            min: sg.policy.min,
            max: sg.policy.max,
            iowait_boost: None,
            iowait_boost_pending: None,
            last_update: None,
            util: None,
            bw_min: None,
            saved_idle_calls: None,
            per_cpu: None,
            should_update: None,
            next_f_resolved: None,
            hold: None,
            next_f: None,
            committed: None,
        }
    }
}

/// Ops of `sugov_update_single_freq_sequence`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SingleOp {
    /// Set the rq inputs, then `sugov_update_single_freq(time, flags)`.
    #[serde(rename = "update")]
    Update(RqIn),
    /// `cpufreq_set_policy()`'s limits, then `sugov_limits()`.
    #[serde(rename = "limits")]
    Limits {
        /// Requested min.
        min: u32,
        /// Requested max.
        max: u32,
    },
    /// `sugov_work()`.
    #[serde(rename = "work")]
    Work {},
}

/// The running state of [`SingleFreqSequence`].
pub struct SingleState {
    gov: Governor,
    c: SugovCpu,
    profile: Profile,
}

/// `schedutil/sugov_update_single_freq_sequence`; the header `variant` picks the busy
/// filter.
pub struct SingleFreqSequence;

impl Sequence for SingleFreqSequence {
    type Init = PolicyIn;
    type Op = SingleOp;
    type After = GovernorAfter;
    type State = SingleState;

    fn start(init: &PolicyIn, variant: &str) -> Result<SingleState, CaseError> {
        let profile = profile_of(variant)?;
        let Flat(table, i) = &init.init;
        Ok(SingleState {
            gov: i.governor(table)?,
            c: SugovCpu {
                iowait_boost: need(i.iowait_boost, "init.iowait_boost")?,
                iowait_boost_pending: need(i.iowait_boost_pending, "init.iowait_boost_pending")?,
                last_update: need(i.last_update, "init.last_update")?,
                util: need(i.util, "init.util")?,
                bw_min: need(i.bw_min, "init.bw_min")?,
                saved_idle_calls: need(i.saved_idle_calls, "init.saved_idle_calls")?,
            },
            profile,
        })
    }

    fn apply(s: &mut SingleState, op: &SingleOp) -> Result<GovernorAfter, CaseError> {
        let g = &mut s.gov;
        let mut trace = None;
        match op {
            SingleOp::Update(rq) => {
                let time = need(rq.1.time, "time")?;
                let flags = need(rq.1.flags, "flags")? as u32; // kernel: unsigned int flags
                let rq = rq_at(rq, g.capacity);
                let t = sugov_update_single_freq(
                    &mut g.sg, &mut s.c, &rq, &g.env, &s.profile, time, flags,
                )
                .ok_or(CaseError::OutOfRange("capacity"))?;
                trace = Some(t);
            }
            SingleOp::Limits { min, max } => g.limits(*min, *max),
            SingleOp::Work {} => sugov_work(&mut g.sg),
        }
        let c = &s.c;
        let mut a = g.after();
        a.iowait_boost = Some(c.iowait_boost);
        a.iowait_boost_pending = Some(c.iowait_boost_pending);
        a.last_update = Some(c.last_update);
        a.util = Some(c.util);
        a.bw_min = Some(c.bw_min);
        a.saved_idle_calls = Some(c.saved_idle_calls);
        if let Some(t) = trace {
            a.should_update = Some(t.should_update);
            a.next_f_resolved = Some(t.next_f_resolved);
            a.hold = t.hold;
            a.next_f = Some(t.next_f);
            a.committed = Some(t.committed);
        }
        Ok(a)
    }
}

/// Ops of `sugov_update_shared_sequence`.
#[derive(Clone, Debug, Serialize, Deserialize)]
// No allocator to box into; an op lives only for the one `apply` that reads it.
#[allow(clippy::large_enum_variant)]
pub enum SharedOp {
    /// Overwrite the listed CPUs' rq inputs, then `sugov_update_shared()` for `cpu`.
    #[serde(rename = "update")]
    Update {
        /// The triggering CPU's id.
        cpu: u32,
        /// Now (ns).
        time: u64,
        /// Update flags.
        flags: u32,
        /// New rq inputs by CPU id.
        #[serde(deserialize_with = "crate::limit::policy_cpus::map")]
        rq_update: LinearMap<u32, RqIn, POLICY_CPUS_MAX>,
    },
    /// `cpufreq_set_policy()`'s limits, then `sugov_limits()`.
    #[serde(rename = "limits")]
    Limits {
        /// Requested min.
        min: u32,
        /// Requested max.
        max: u32,
    },
    /// `sugov_work()`.
    #[serde(rename = "work")]
    Work {},
}

/// The running state of [`SharedFreqSequence`]: the governor and, in `cpus` order, each
/// CPU's id, `sugov_cpu` and persistent rq inputs.
pub struct SharedState {
    gov: Governor,
    ids: Vec<u32, POLICY_CPUS_MAX>,
    cpus: Vec<SugovCpu, POLICY_CPUS_MAX>,
    rqs: Vec<SugovRq, POLICY_CPUS_MAX>,
}

/// Position of CPU `id` in `ids`; `what` names the field that gave it.
fn position(ids: &[u32], id: u32, what: &'static str) -> Result<usize, CaseError> {
    ids.iter()
        .position(|&c| c == id)
        .ok_or(CaseError::OutOfRange(what))
}

/// `schedutil/sugov_update_shared_sequence` (no busy filter, so the header `variant` is
/// only checked).
pub struct SharedFreqSequence;

impl Sequence for SharedFreqSequence {
    type Init = PolicyIn;
    type Op = SharedOp;
    type After = GovernorAfter;
    type State = SharedState;

    fn start(init: &PolicyIn, variant: &str) -> Result<SharedState, CaseError> {
        profile_of(variant)?;
        let Flat(table, i) = &init.init;
        let gov = i.governor(table)?;
        let ids = need(i.cpus.clone(), "init.cpus")?;
        let per_cpu = need(i.per_cpu.as_ref(), "init.per_cpu")?;
        let rq = need(i.rq.as_ref(), "init.rq")?;
        let (mut cpus, mut rqs) = (Vec::new(), Vec::new());
        for &id in &ids {
            let c = per_cpu.get(&id).ok_or(CaseError::Missing("init.per_cpu"))?;
            let r = rq.get(&id).ok_or(CaseError::Missing("init.rq"))?;
            // Both fit: `ids` has at most POLICY_CPUS_MAX entries.
            cpus.push(*c)
                .map_err(|_| CaseError::TooLong(crate::limit::POLICY_CPUS_MAX))?;
            rqs.push(rq_at(r, gov.capacity))
                .map_err(|_| CaseError::TooLong(crate::limit::POLICY_CPUS_MAX))?;
        }
        for id in per_cpu.keys() {
            position(&ids, *id, "init.per_cpu")?;
        }
        for id in rq.keys() {
            position(&ids, *id, "init.rq")?;
        }
        Ok(SharedState {
            gov,
            ids,
            cpus,
            rqs,
        })
    }

    fn apply(s: &mut SharedState, op: &SharedOp) -> Result<GovernorAfter, CaseError> {
        let g = &mut s.gov;
        let mut trace: Option<SugovUpdate> = None;
        match op {
            SharedOp::Update {
                cpu,
                time,
                flags,
                rq_update,
            } => {
                for (id, r) in rq_update {
                    let p = position(&s.ids, *id, "rq_update")?;
                    let slot = s.rqs.get_mut(p).ok_or(CaseError::OutOfRange("rq_update"))?;
                    *slot = rq_at(r, g.capacity);
                }
                let p = position(&s.ids, *cpu, "cpu")?;
                let t =
                    sugov_update_shared(&mut g.sg, &mut s.cpus, &s.rqs, p, &g.env, *time, *flags)
                        .ok_or(CaseError::OutOfRange("capacity"))?;
                trace = Some(t);
            }
            SharedOp::Limits { min, max } => g.limits(*min, *max),
            SharedOp::Work {} => sugov_work(&mut g.sg),
        }
        let mut a = g.after();
        let mut per_cpu = Vec::new();
        for c in &s.cpus {
            // Fits: as many CPUs as `cpus`, at most POLICY_CPUS_MAX.
            per_cpu
                .push(CpuAfter {
                    iowait_boost: c.iowait_boost,
                    iowait_boost_pending: c.iowait_boost_pending,
                    last_update: c.last_update,
                    util: c.util,
                    bw_min: c.bw_min,
                })
                .map_err(|_| CaseError::TooLong(crate::limit::POLICY_CPUS_MAX))?;
        }
        a.per_cpu = Some(per_cpu);
        if let Some(t) = trace {
            a.should_update = Some(t.should_update);
            a.next_f = Some(t.next_f);
            a.committed = Some(t.committed);
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iowait_ret_is_a_tagged_enum_on_postcard() {
        for ret in [IowaitRet::Boost(111), IowaitRet::Reset(true)] {
            let after = IowaitAfter {
                iowait_boost: 128,
                iowait_boost_pending: false,
                last_update: 5,
                ret: Some(ret),
            };
            let mut buf = [0u8; 32];
            let bytes = postcard::to_slice(&after, &mut buf).map(|b| &*b);
            let back = bytes.and_then(postcard::from_bytes::<IowaitAfter>);
            assert_eq!(back, Ok(after));
        }
    }

    #[test]
    fn profile_of_knows_the_two_single_freq_variants() {
        assert_eq!(profile_of("mainline"), Ok(Profile::MAINLINE));
        assert_eq!(
            profile_of("busy-filter-without-uclamp-exception").map(|p| p.busy_filter),
            Ok(BusyFilter::WithoutUclampException)
        );
        assert_eq!(profile_of("v5.4"), Err(CaseError::UnknownVariant));
    }
}
