// SPDX-License-Identifier: GPL-2.0-only
//! Cases of `fixtures/kernel/pelt/` (see that folder's README for every field).
//!
//! The stateless functions (`sched_pelt_generator`, `decay_load`,
//! `__accumulate_pelt_segments`) are [`Case`]s. Every `*_sequence` suite on a
//! `struct sched_avg` goes through one generic driver, [`SignalSeq`], parameterised by the
//! [`Signal`] it drives (which ops it accepts and which core update each op calls); the rq
//! clock suites are [`ClockSeq`] (mainline and the PELT multiplier patch) and util_est is
//! [`UtilEstSeq`]. Each suite's op enum lists only its own ops, so an op of another suite
//! is refused like an unknown one.
//!
//! Wire shapes: one struct per state as the fixtures write it serves both `in.init` and
//! `out.after[i]`; fields that only some suites or only `after` carry are `Option`s that
//! the driver fills exactly where the fixtures have them (and requires where it needs them).

use core::marker::PhantomData;

use schedmath::pelt::clock::{
    rq_clock_pelt, update_idle_rq_clock_pelt, update_rq_clock_task, PeltClockCpu, RqClock,
};
use schedmath::pelt::{
    self, accumulate_pelt_segments, decay_load, sched_pelt_generator, tables, PeltTables, SchedAvg,
    SchedEntityPelt,
};
use schedmath::profile::{Halflife, Profile};
use schedmath::util_est::{
    _task_util_est, task_util_est, util_est_dequeue, util_est_enqueue, util_est_update, UtilEst,
    UtilEstCpu,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::capacity::Ret;
use crate::{Case, CaseError, Sequence};

/// `in.variant` of the PELT suites: the decay table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PeltVariant {
    /// 32 ms halflife (mainline).
    #[serde(rename = "hl32")]
    Hl32,
    /// 16 ms halflife.
    #[serde(rename = "hl16")]
    Hl16,
    /// 8 ms halflife.
    #[serde(rename = "hl8")]
    Hl8,
}

impl PeltVariant {
    /// The core's table for this halflife.
    pub const fn tables(self) -> &'static PeltTables {
        PeltTables::of(match self {
            PeltVariant::Hl32 => Halflife::Hl32,
            PeltVariant::Hl16 => Halflife::Hl16,
            PeltVariant::Hl8 => Halflife::Hl8,
        })
    }
}

/// Largest `HALFLIFE` the `sched_pelt_generator` driver accepts, i.e. the capacity of its
/// table.
///
/// Host (feature `json`): 4096, a 16 KiB table. Target: 1024, so that one expected output
/// (≤ 5 postcard bytes per entry, about 5 KiB) fits a [`crate::record::MAX_FRAME`] record,
/// and the driver's stack frame (the decoded expected table, the generator's and the
/// output's, with their moves: 24.7 KiB on thumbv7m) fits the lm3s6965's 64 KiB RAM beside
/// the runner's own 9 KiB frame. A larger halflife is refused with [`CaseError::TooLong(crate::limit::GENERATOR_MAX_HALFLIFE)`].
#[cfg(feature = "json")]
pub const GENERATOR_MAX_HALFLIFE: usize = 4096;
/// See the `json` variant of this constant.
#[cfg(not(feature = "json"))]
pub const GENERATOR_MAX_HALFLIFE: usize = 1024;

/// `sched_pelt_generator` {HALFLIFE} → the constants Documentation/scheduler/sched-pelt.c
/// prints for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SchedPeltGenerator {
    /// `HALFLIFE` in periods.
    #[serde(rename = "HALFLIFE")]
    pub halflife: u32,
}

/// The generator's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)] // the kernel's macro names
pub struct GeneratorOut {
    /// `runnable_avg_yN_inv[]`, `HALFLIFE` entries.
    pub runnable_avg_yN_inv: heapless::Vec<u32, GENERATOR_MAX_HALFLIFE>,
    /// `LOAD_AVG_PERIOD`.
    pub LOAD_AVG_PERIOD: u32,
    /// `LOAD_AVG_MAX`.
    pub LOAD_AVG_MAX: u32,
    /// `LOAD_AVG_MAX_N`.
    pub LOAD_AVG_MAX_N: u32,
    /// `PELT_MIN_DIVIDER` = `LOAD_AVG_MAX - 1024`.
    pub PELT_MIN_DIVIDER: u32,
    /// The util_sum threshold of `update_idle_rq_clock_pelt()`.
    pub idle_util_sum_threshold: u32,
    /// `LOAD_AVG_PERIOD * 63`: `decay_load()` returns 0 beyond it.
    pub decay_load_zero_threshold_periods: u64,
    /// Only for `HALFLIFE` 32, the one kernel/sched/sched-pelt.h there is: whether the
    /// output equals the core's const copy of it.
    #[serde(default)]
    pub matches_kernel_sched_pelt_h: Option<bool>,
}

impl Case for SchedPeltGenerator {
    type Out = GeneratorOut;
    fn run(&self, _: &str) -> Result<GeneratorOut, CaseError> {
        if self.halflife as usize > GENERATOR_MAX_HALFLIFE {
            return Err(CaseError::TooLong(crate::limit::GENERATOR_MAX_HALFLIFE));
        }
        let g = sched_pelt_generator::<GENERATOR_MAX_HALFLIFE>(self.halflife)
            .ok_or(CaseError::OutOfRange("HALFLIFE"))?;
        Ok(GeneratorOut {
            matches_kernel_sched_pelt_h: (self.halflife == 32)
                .then(|| g.matches(&PeltTables::HL32)),
            LOAD_AVG_PERIOD: g.load_avg_period,
            LOAD_AVG_MAX: g.load_avg_max,
            LOAD_AVG_MAX_N: g.load_avg_max_n,
            PELT_MIN_DIVIDER: tables::pelt_min_divider(g.load_avg_max),
            idle_util_sum_threshold: tables::idle_util_sum_threshold(g.load_avg_max),
            decay_load_zero_threshold_periods: tables::decay_load_zero_threshold_periods(
                g.load_avg_period,
            ),
            runnable_avg_yN_inv: g.runnable_avg_yn_inv,
        })
    }
}

/// `decay_load` {variant, val, n} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DecayLoad {
    /// Halflife table.
    pub variant: PeltVariant,
    /// Value to decay.
    pub val: u64,
    /// Periods.
    pub n: u64,
}

impl Case for DecayLoad {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: decay_load(self.val, self.n, self.variant.tables()),
        })
    }
}

/// `__accumulate_pelt_segments` {variant, periods, d1, d3} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AccumulatePeltSegments {
    /// Halflife table.
    pub variant: PeltVariant,
    /// Full periods crossed.
    pub periods: u64,
    /// Remainder of the first period.
    pub d1: u32,
    /// Elapsed part of the last period.
    pub d3: u32,
}

impl Case for AccumulatePeltSegments {
    type Out = Ret<u32>;
    fn run(&self, _: &str) -> Result<Ret<u32>, CaseError> {
        Ok(Ret {
            ret: accumulate_pelt_segments(self.periods, self.d1, self.d3, self.variant.tables()),
        })
    }
}

/// `struct sched_avg` as the fixtures write it, for `in.init` and `out.after[i]`: the
/// core's [`SchedAvg`] with the task's `util_est` as a plain word (present only in
/// sched_entity suites) and the update's return value: the fixtures' wire shape, not the
/// core's (whose `util_est` is the layout enum), so its own struct. [`SchedAvgJson::of`]
/// destructures and [`SchedAvgJson::avg`] builds a whole `SchedAvg`, so a field added to
/// `SchedAvg` fails to compile here instead of being dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedAvgJson {
    /// `last_update_time`.
    pub last_update_time: u64,
    /// `load_sum`.
    pub load_sum: u64,
    /// `runnable_sum`.
    pub runnable_sum: u64,
    /// `util_sum`.
    pub util_sum: u32,
    /// `period_contrib`.
    pub period_contrib: u32,
    /// `load_avg`.
    pub load_avg: u64,
    /// `runnable_avg`.
    pub runnable_avg: u64,
    /// `util_avg`.
    pub util_avg: u64,
    /// The task's `util_est` (mainline layout): sched_entity suites only.
    #[serde(default)]
    pub util_est: Option<u32>,
    /// The update's return value: `after` only.
    #[serde(default)]
    pub ret: Option<i32>,
}

impl SchedAvgJson {
    /// `sa` as the fixtures write it; its `util_est` word only when `with_util_est`.
    pub fn of(sa: &SchedAvg, with_util_est: bool, ret: Option<i32>) -> Self {
        let SchedAvg {
            last_update_time,
            load_sum,
            runnable_sum,
            util_sum,
            period_contrib,
            load_avg,
            runnable_avg,
            util_avg,
            util_est,
        } = *sa;
        SchedAvgJson {
            last_update_time,
            load_sum,
            runnable_sum,
            util_sum,
            period_contrib,
            load_avg,
            runnable_avg,
            util_avg,
            util_est: with_util_est.then(|| util_est.enqueued()),
            ret,
        }
    }

    /// The core's `SchedAvg` with `util_est` (the written word is the caller's to read).
    pub fn avg(&self, util_est: UtilEst) -> SchedAvg {
        SchedAvg {
            last_update_time: self.last_update_time,
            load_sum: self.load_sum,
            runnable_sum: self.runnable_sum,
            util_sum: self.util_sum,
            period_contrib: self.period_contrib,
            load_avg: self.load_avg,
            runnable_avg: self.runnable_avg,
            util_avg: self.util_avg,
            util_est,
        }
    }
}

/// A `sched_avg` suite's `in` (besides `ops`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SignalInit {
    /// Halflife table.
    pub variant: PeltVariant,
    /// Initial state.
    pub init: SchedAvgJson,
}

/// The signal a `sched_avg` sequence suite drives: its ops and the core update each calls.
pub trait Signal {
    /// The suite's ops (`in.ops[i]`).
    type Op: Serialize + DeserializeOwned;
    /// The state carries the task's `util_est` (sched_entity suites).
    const UTIL_EST: bool;
    /// Applies `op` to `sa`; the update's return value.
    fn update(sa: &mut SchedAvg, op: &Self::Op, t: &PeltTables) -> Result<i32, CaseError>;
}

/// The running state of a [`SignalSeq`].
pub struct SignalState {
    sa: SchedAvg,
    t: &'static PeltTables,
}

/// The generic `sched_avg` sequence driver.
pub struct SignalSeq<K>(PhantomData<K>);

impl<K: Signal> Sequence for SignalSeq<K> {
    type Init = SignalInit;
    type Op = K::Op;
    type After = SchedAvgJson;
    type State = SignalState;

    fn start(init: &SignalInit, _variant: &str) -> Result<SignalState, CaseError> {
        let a = &init.init;
        let util_est = match (K::UTIL_EST, a.util_est) {
            (true, Some(v)) => UtilEst::Mainline(v),
            (true, None) => return Err(CaseError::Missing("init.util_est")),
            (false, _) => UtilEst::default(),
        };
        Ok(SignalState {
            sa: a.avg(util_est),
            t: init.variant.tables(),
        })
    }

    fn apply(s: &mut SignalState, op: &K::Op) -> Result<SchedAvgJson, CaseError> {
        let ret = K::update(&mut s.sa, op, s.t)?;
        Ok(SchedAvgJson::of(&s.sa, K::UTIL_EST, Some(ret)))
    }
}

/// `se_sequence`: a sched_entity.
pub enum Se {}
/// `cfs_rq_sequence`: a cfs_rq.
pub enum CfsRq {}
/// `rt_sequence`: the rt rq.
pub enum Rt {}
/// `dl_sequence`: the dl rq.
pub enum Dl {}
/// `hw_sequence`: the hw pressure signal.
pub enum Hw {}
/// `irq_sequence`: the irq signal.
pub enum Irq {}

/// Ops of `se_sequence`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SeOp {
    /// `__update_load_avg_se()`.
    #[serde(rename = "__update_load_avg_se")]
    Update {
        /// PELT clock.
        now: u64,
        /// `se->load.weight` (scaled).
        load_weight: u64,
        /// `se->on_rq`.
        on_rq: u64,
        /// `cfs_rq->curr == se`.
        is_curr: u64,
        /// `se->sched_delayed` (v6.12+).
        #[serde(default)]
        sched_delayed: u64,
        /// A group entity (needs `runnable_weight`).
        #[serde(default)]
        is_group: u64,
        /// `se->runnable_weight` of a group entity.
        #[serde(default)]
        runnable_weight: Option<u64>,
    },
    /// `__update_load_avg_blocked_se()`.
    #[serde(rename = "__update_load_avg_blocked_se")]
    Blocked {
        /// PELT clock.
        now: u64,
        /// `se->load.weight` (scaled).
        load_weight: u64,
    },
}

impl Signal for Se {
    type Op = SeOp;
    const UTIL_EST: bool = true;
    fn update(sa: &mut SchedAvg, op: &SeOp, t: &PeltTables) -> Result<i32, CaseError> {
        Ok(match *op {
            SeOp::Update {
                now,
                load_weight,
                on_rq,
                is_curr,
                sched_delayed,
                is_group,
                runnable_weight,
            } => {
                let group_runnable_weight = match (is_group != 0, runnable_weight) {
                    (false, _) => None,
                    (true, Some(w)) => Some(w),
                    (true, None) => return Err(CaseError::Missing("runnable_weight")),
                };
                let se = SchedEntityPelt {
                    load_weight,
                    on_rq: on_rq != 0,
                    is_curr: is_curr != 0,
                    sched_delayed: sched_delayed != 0,
                    group_runnable_weight,
                };
                pelt::__update_load_avg_se(now, sa, &se, t)
            }
            SeOp::Blocked { now, load_weight } => {
                pelt::__update_load_avg_blocked_se(now, sa, load_weight, t)
            }
        })
    }
}

/// A signal whose suite has one op: the op enum with its one variant `Update` (named
/// `$name` in the fixtures) and its fields, and the core call the op makes.
macro_rules! single_op_signal {
    (
        $kind:ident, $op:ident, $suite:literal, $name:literal,
        { $($(#[$doc:meta])* $field:ident: $ty:ty,)* },
        |$sa:ident, $t:ident| $call:expr
    ) => {
        #[doc = concat!("Ops of `", $suite, "`.")]
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub enum $op {
            #[doc = concat!("`", $name, "()`.")]
            #[serde(rename = $name)]
            Update {
                $($(#[$doc])* $field: $ty,)*
            },
        }

        impl Signal for $kind {
            type Op = $op;
            const UTIL_EST: bool = false;
            fn update($sa: &mut SchedAvg, op: &$op, $t: &PeltTables) -> Result<i32, CaseError> {
                let $op::Update { $($field),* } = *op;
                Ok($call)
            }
        }
    };
}

single_op_signal!(
    CfsRq,
    CfsRqOp,
    "cfs_rq_sequence",
    "__update_load_avg_cfs_rq",
    {
        /// PELT clock.
        now: u64,
        /// `cfs_rq->load.weight` (scaled).
        load_weight: u64,
        /// `cfs_rq->h_nr_runnable`.
        h_nr_runnable: u32,
        /// `cfs_rq->curr != NULL`.
        has_curr: u64,
    },
    |sa, t| pelt::__update_load_avg_cfs_rq(now, sa, load_weight, h_nr_runnable, has_curr != 0, t)
);

single_op_signal!(
    Rt,
    RtOp,
    "rt_sequence",
    "update_rt_rq_load_avg",
    {
        /// PELT clock.
        now: u64,
        /// A task of the class is running.
        running: i32,
    },
    |sa, t| pelt::update_rt_rq_load_avg(now, sa, running, t)
);

single_op_signal!(
    Dl,
    DlOp,
    "dl_sequence",
    "update_dl_rq_load_avg",
    {
        /// PELT clock.
        now: u64,
        /// A task of the class is running.
        running: i32,
    },
    |sa, t| pelt::update_dl_rq_load_avg(now, sa, running, t)
);

single_op_signal!(
    Hw,
    HwOp,
    "hw_sequence",
    "update_hw_load_avg",
    {
        /// PELT clock.
        now: u64,
        /// Capacity lost to hw pressure.
        capacity: u64,
    },
    |sa, t| pelt::update_hw_load_avg(now, sa, capacity, t)
);

single_op_signal!(
    Irq,
    IrqOp,
    "irq_sequence",
    "update_irq_load_avg",
    {
        /// `rq->clock`.
        clock: u64,
        /// irq time of the interval (ns).
        running: u64,
        /// `arch_scale_freq_capacity()`.
        freq_capacity: u64,
        /// `arch_scale_cpu_capacity()`.
        cpu_capacity: u64,
    },
    |sa, t| pelt::update_irq_load_avg(clock, sa, running, freq_capacity, cpu_capacity, t)
);

/// `pelt/se_sequence`.
pub type SeSequence = SignalSeq<Se>;
/// `pelt/cfs_rq_sequence`.
pub type CfsRqSequence = SignalSeq<CfsRq>;
/// `pelt/rt_sequence`.
pub type RtSequence = SignalSeq<Rt>;
/// `pelt/dl_sequence`.
pub type DlSequence = SignalSeq<Dl>;
/// `pelt/hw_sequence`.
pub type HwSequence = SignalSeq<Hw>;
/// `pelt/irq_sequence`.
pub type IrqSequence = SignalSeq<Irq>;

/// The rq clocks as the clock suites write them, for `in.init` and `out.after[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockJson {
    /// `rq->clock`.
    pub clock: u64,
    /// `rq->clock_task`.
    pub clock_task: u64,
    /// `rq->clock_pelt`.
    pub clock_pelt: u64,
    /// `rq->lost_idle_time`.
    pub lost_idle_time: u64,
    /// `rq->clock_pelt_idle`.
    pub clock_pelt_idle: u64,
    /// `rq->clock_idle`.
    pub clock_idle: u64,
    /// `rq->clock_task_mult`: multiplier patch suite only.
    #[serde(default)]
    pub clock_task_mult: Option<u64>,
    /// `rq_clock_pelt(rq)`: `after` only.
    #[serde(default)]
    pub rq_clock_pelt: Option<u64>,
}

/// A clock suite's `in` (besides `ops`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClockInit {
    /// Halflife table (for the idle threshold).
    pub variant: PeltVariant,
    /// Initial clocks.
    pub init: ClockJson,
}

/// Ops of the clock suites.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ClockOp {
    /// `update_rq_clock()` down to `update_rq_clock_pelt()`.
    #[serde(rename = "update_rq_clock")]
    UpdateRqClock {
        /// Wall-clock delta (ns).
        delta: u64,
        /// irq + steal part of it.
        irq_delta: u64,
        /// The idle task is current.
        curr_is_idle: u64,
        /// `arch_scale_cpu_capacity()`.
        cpu_capacity: u64,
        /// `arch_scale_freq_capacity()`.
        freq_capacity: u64,
        /// `sched_pelt_lshift`: multiplier patch suite only.
        #[serde(default)]
        sched_pelt_lshift: Option<u8>,
    },
    /// `update_idle_rq_clock_pelt()`.
    #[serde(rename = "update_idle_rq_clock_pelt")]
    UpdateIdleRqClockPelt {
        /// cfs `util_sum`.
        cfs_util_sum: u32,
        /// rt `util_sum`.
        rt_util_sum: u32,
        /// dl `util_sum`.
        dl_util_sum: u32,
    },
}

/// The running state of a [`ClockSeq`].
pub struct ClockState {
    rq: RqClock,
    t: &'static PeltTables,
}

/// The rq clock sequence; `MULT` is the PELT multiplier patch suite, where
/// `clock_task_mult` and each `update_rq_clock`'s `sched_pelt_lshift` are required.
pub struct ClockSeq<const MULT: bool>;

impl<const MULT: bool> Sequence for ClockSeq<MULT> {
    type Init = ClockInit;
    type Op = ClockOp;
    type After = ClockJson;
    type State = ClockState;

    fn start(init: &ClockInit, _variant: &str) -> Result<ClockState, CaseError> {
        let c = &init.init;
        let clock_task_mult = match (MULT, c.clock_task_mult) {
            (true, Some(v)) => v,
            (true, None) => return Err(CaseError::Missing("init.clock_task_mult")),
            // Mainline is the patch with a multiplier of 1 and no separate clock.
            (false, _) => c.clock_task,
        };
        Ok(ClockState {
            rq: RqClock {
                clock: c.clock,
                clock_task: c.clock_task,
                clock_task_mult,
                clock_pelt: c.clock_pelt,
                lost_idle_time: c.lost_idle_time,
                clock_pelt_idle: c.clock_pelt_idle,
                clock_idle: c.clock_idle,
            },
            t: init.variant.tables(),
        })
    }

    fn apply(s: &mut ClockState, op: &ClockOp) -> Result<ClockJson, CaseError> {
        match *op {
            ClockOp::UpdateRqClock {
                delta,
                irq_delta,
                curr_is_idle,
                cpu_capacity,
                freq_capacity,
                sched_pelt_lshift,
            } => {
                let pelt_lshift = match (MULT, sched_pelt_lshift) {
                    (true, Some(l)) => l,
                    (true, None) => return Err(CaseError::Missing("sched_pelt_lshift")),
                    (false, _) => 0,
                };
                let profile = Profile {
                    pelt_lshift,
                    ..Profile::MAINLINE
                };
                let cpu = PeltClockCpu {
                    curr_is_idle: curr_is_idle != 0,
                    cpu_capacity,
                    freq_capacity,
                };
                update_rq_clock_task(&mut s.rq, delta, irq_delta, &cpu, &profile);
            }
            ClockOp::UpdateIdleRqClockPelt {
                cfs_util_sum,
                rt_util_sum,
                dl_util_sum,
            } => update_idle_rq_clock_pelt(&mut s.rq, cfs_util_sum, rt_util_sum, dl_util_sum, s.t),
        }
        let rq = &s.rq;
        Ok(ClockJson {
            clock: rq.clock,
            clock_task: rq.clock_task,
            clock_pelt: rq.clock_pelt,
            lost_idle_time: rq.lost_idle_time,
            clock_pelt_idle: rq.clock_pelt_idle,
            clock_idle: rq.clock_idle,
            clock_task_mult: MULT.then_some(rq.clock_task_mult),
            rq_clock_pelt: Some(rq_clock_pelt(rq)),
        })
    }
}

/// `pelt/clock_pelt_sequence` (mainline).
pub type ClockPeltSequence = ClockSeq<false>;
/// `pelt/clock_pelt_mult_sequence` (PELT multiplier patch).
pub type ClockPeltMultSequence = ClockSeq<true>;

/// `in.variant` of the util_est suite: the kernel's util_est layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UtilEstVariant {
    /// Since v6.9: one `unsigned int util_est`.
    #[serde(rename = "mainline")]
    Mainline,
    /// Before v6.9: `struct util_est {enqueued, ewma}`, plus the CPU inputs it reads.
    #[serde(rename = "pre-v6.9")]
    PreV6_9,
}

/// The util_est suite's state as the fixtures write it, for `in.init` and `out.after[i]`.
/// Mainline carries `util_est`/`cfs_util_est`, pre-v6.9 the dotted `enqueued`/`ewma`
/// fields (and, in `init` only, `capacity_orig` and `UTIL_EST_FASTUP`); `after` adds the
/// two estimates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UtilEstJson {
    /// The task's `util_est` (mainline).
    #[serde(default)]
    pub util_est: Option<u32>,
    /// The cfs_rq's `util_est` (mainline).
    #[serde(default)]
    pub cfs_util_est: Option<u32>,
    /// The task's `util_est.enqueued` (pre-v6.9).
    #[serde(default, rename = "util_est.enqueued")]
    pub util_est_enqueued: Option<u32>,
    /// The task's `util_est.ewma` (pre-v6.9).
    #[serde(default, rename = "util_est.ewma")]
    pub util_est_ewma: Option<u32>,
    /// The cfs_rq's `util_est.enqueued` (pre-v6.9).
    #[serde(default, rename = "cfs_util_est.enqueued")]
    pub cfs_util_est_enqueued: Option<u32>,
    /// The task's `util_avg`.
    pub util_avg: u64,
    /// The task's `runnable_avg`.
    pub runnable_avg: u64,
    /// `capacity_orig_of(cpu)` (pre-v6.9 `init` only).
    #[serde(default)]
    pub capacity_orig: Option<u64>,
    /// `sched_feat(UTIL_EST_FASTUP)` (pre-v6.9 `init` only).
    #[serde(default, rename = "UTIL_EST_FASTUP")]
    pub util_est_fastup: Option<u64>,
    /// `task_util_est(p)` (`after` only).
    #[serde(default)]
    pub task_util_est: Option<u64>,
    /// `_task_util_est(p)` (`after` only).
    #[serde(default, rename = "_task_util_est")]
    pub task_util_est_raw: Option<u64>,
}

/// The util_est suite's `in` (besides `ops`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UtilEstInit {
    /// util_est layout.
    pub variant: UtilEstVariant,
    /// Initial state.
    pub init: UtilEstJson,
}

/// Ops of the util_est suite.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum UtilEstOp {
    /// `util_est_enqueue()`.
    #[serde(rename = "util_est_enqueue")]
    Enqueue {},
    /// `util_est_dequeue()`.
    #[serde(rename = "util_est_dequeue")]
    Dequeue {},
    /// A task PELT update that returned 1: new averages, then `cfs_se_util_change()`.
    #[serde(rename = "pelt_update")]
    PeltUpdate {
        /// New `util_avg`.
        util_avg: u64,
        /// New `runnable_avg`.
        runnable_avg: u64,
    },
    /// `util_est_update()`.
    #[serde(rename = "util_est_update")]
    Update {
        /// The task goes to sleep.
        task_sleep: u64,
    },
}

/// A task and its root cfs_rq, in the util_est layout of `in.variant`.
pub struct UtilEstState {
    p: SchedAvg,
    cfs_rq: SchedAvg,
    cpu: UtilEstCpu,
}

/// `pelt/util_est_sequence`.
pub struct UtilEstSeq;

impl Sequence for UtilEstSeq {
    type Init = UtilEstInit;
    type Op = UtilEstOp;
    type After = UtilEstJson;
    type State = UtilEstState;

    fn start(init: &UtilEstInit, _variant: &str) -> Result<UtilEstState, CaseError> {
        let s = &init.init;
        let need = |v: Option<u32>, name| v.ok_or(CaseError::Missing(name));
        let (task, cfs, cpu) = match init.variant {
            UtilEstVariant::Mainline => (
                UtilEst::Mainline(need(s.util_est, "init.util_est")?),
                UtilEst::Mainline(need(s.cfs_util_est, "init.cfs_util_est")?),
                UtilEstCpu::default(),
            ),
            UtilEstVariant::PreV6_9 => (
                UtilEst::PreV6_9 {
                    enqueued: need(s.util_est_enqueued, "init.util_est.enqueued")?,
                    ewma: need(s.util_est_ewma, "init.util_est.ewma")?,
                },
                UtilEst::PreV6_9 {
                    enqueued: need(s.cfs_util_est_enqueued, "init.cfs_util_est.enqueued")?,
                    ewma: 0,
                },
                UtilEstCpu {
                    capacity_orig: s
                        .capacity_orig
                        .ok_or(CaseError::Missing("init.capacity_orig"))?,
                    util_est_fastup: s
                        .util_est_fastup
                        .ok_or(CaseError::Missing("init.UTIL_EST_FASTUP"))?
                        != 0,
                },
            ),
        };
        Ok(UtilEstState {
            p: SchedAvg {
                util_est: task,
                util_avg: s.util_avg,
                runnable_avg: s.runnable_avg,
                ..SchedAvg::default()
            },
            cfs_rq: SchedAvg {
                util_est: cfs,
                ..SchedAvg::default()
            },
            cpu,
        })
    }

    fn apply(s: &mut UtilEstState, op: &UtilEstOp) -> Result<UtilEstJson, CaseError> {
        match *op {
            UtilEstOp::Enqueue {} => util_est_enqueue(&mut s.cfs_rq, &s.p),
            UtilEstOp::Dequeue {} => util_est_dequeue(&mut s.cfs_rq, &s.p),
            UtilEstOp::PeltUpdate {
                util_avg,
                runnable_avg,
            } => {
                s.p.util_avg = util_avg;
                s.p.runnable_avg = runnable_avg;
                pelt::cfs_se_util_change(&mut s.p);
            }
            UtilEstOp::Update { task_sleep } => util_est_update(&mut s.p, task_sleep != 0, &s.cpu),
        }
        let (p, cfs) = (&s.p, s.cfs_rq.util_est.enqueued());
        let mut out = UtilEstJson {
            util_est: None,
            cfs_util_est: None,
            util_est_enqueued: None,
            util_est_ewma: None,
            cfs_util_est_enqueued: None,
            util_avg: p.util_avg,
            runnable_avg: p.runnable_avg,
            capacity_orig: None,
            util_est_fastup: None,
            task_util_est: Some(task_util_est(p)),
            task_util_est_raw: Some(_task_util_est(p)),
        };
        match p.util_est {
            UtilEst::Mainline(v) => {
                out.util_est = Some(v);
                out.cfs_util_est = Some(cfs);
            }
            UtilEst::PreV6_9 { enqueued, ewma } => {
                out.util_est_enqueued = Some(enqueued);
                out.util_est_ewma = Some(ewma);
                out.cfs_util_est_enqueued = Some(cfs);
            }
        }
        Ok(out)
    }
}
