// SPDX-License-Identifier: GPL-2.0-only
//! The one list of fixture functions that have typed drivers, and what is generated
//! from it: kind ids, the target-side checkers (postcard in) and, with feature `json`,
//! the host-side runners and encoders (JSON in).

use crate::{Case, CaseError, Sequence};

/// A case could not be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CheckError {
    /// No such kind id in this build's registry.
    UnknownKind,
    /// The postcard bytes do not decode as the kind's types.
    Decode,
    /// The driver refused the input.
    Case(CaseError),
}

impl From<CaseError> for CheckError {
    fn from(e: CaseError) -> Self {
        CheckError::Case(e)
    }
}

/// Whether a `fn` is a stateless case or a sequence, and its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Index into [`CASES`].
    Case(u16),
    /// Index into [`SEQUENCES`].
    Seq(u16),
}

#[inline(never)] // one frame per kind: the target's stack lines show each suite's own use
fn check_one<C: Case>(input: &[u8], expected: &[u8], variant: &str) -> Result<bool, CheckError> {
    let case: C = postcard::from_bytes(input).map_err(|_| CheckError::Decode)?;
    // Run first: an input the driver refuses (e.g. a table above its capacity) reports
    // why, rather than failing to decode an expected output it could not hold.
    let got = case.run(variant)?;
    let want: C::Out = postcard::from_bytes(expected).map_err(|_| CheckError::Decode)?;
    Ok(got == want)
}

#[inline(never)]
fn seq_apply_one<S: Sequence>(
    state: &mut S::State,
    op: &[u8],
    expected: &[u8],
) -> Result<bool, CheckError> {
    let op: S::Op = postcard::from_bytes(op).map_err(|_| CheckError::Decode)?;
    let want: S::After = postcard::from_bytes(expected).map_err(|_| CheckError::Decode)?;
    Ok(S::apply(state, &op)? == want)
}

// The three target entry points below are `#[inline(never)]`: the Cortex-M runner measures
// the stack its cases use below its loop, which only counts frames of real calls (an
// inlined driver's locals, e.g. the generator's tables, would hide in the loop's frame).
macro_rules! registry {
    (
        cases: [ $( ($cmod:literal, $cfn:literal, $cty:ty) ),* $(,)? ],
        sequences: [ $( ($smod:literal, $sfn:literal, $sname:ident: $sty:ty) ),* $(,)? ] $(,)?
    ) => {
        /// Stateless case kinds: (module, `fn`); the index is the kind id.
        pub const CASES: &[(&str, &str)] = &[ $( ($cmod, $cfn) ),* ];
        /// Sequence kinds: (module, `fn`); the index is the kind id.
        pub const SEQUENCES: &[(&str, &str)] = &[ $( ($smod, $sfn) ),* ];

        /// The kind of `fn_name` in `module`, if it has a typed driver.
        pub fn kind_of(module: &str, fn_name: &str) -> Option<Kind> {
            let find = |t: &[(&str, &str)]| {
                t.iter().position(|(m, f)| *m == module && *f == fn_name).map(|i| i as u16)
            };
            find(CASES).map(Kind::Case).or_else(|| find(SEQUENCES).map(Kind::Seq))
        }

        /// Runs a stateless case from postcard bytes (`variant`: the suite header's);
        /// `Ok(true)` when the output matches.
        #[allow(unused_mut, unused_variables, unused_assignments)]
        #[inline(never)]
        pub fn check_case(
            kind: u16,
            input: &[u8],
            expected: &[u8],
            variant: &str,
        ) -> Result<bool, CheckError> {
            let mut k = 0u16;
            $(
                if kind == k {
                    return check_one::<$cty>(input, expected, variant);
                }
                k += 1;
            )*
            Err(CheckError::UnknownKind)
        }

        /// The running state of any registered sequence.
        #[allow(clippy::large_enum_variant)]
        pub enum SeqState {
            $( #[doc = concat!("`", $smod, "/", $sfn, "`")] $sname(<$sty as Sequence>::State), )*
        }

        /// Starts a sequence from its postcard init.
        #[allow(unused_mut, unused_variables, unused_assignments)]
        #[inline(never)]
        pub fn seq_start(kind: u16, init: &[u8], variant: &str) -> Result<SeqState, CheckError> {
            let mut k = 0u16;
            $(
                if kind == k {
                    let init: <$sty as Sequence>::Init =
                        postcard::from_bytes(init).map_err(|_| CheckError::Decode)?;
                    return Ok(SeqState::$sname(<$sty as Sequence>::start(&init, variant)?));
                }
                k += 1;
            )*
            Err(CheckError::UnknownKind)
        }

        /// Applies one postcard op; `Ok(true)` when the state after it matches.
        #[inline(never)]
        pub fn seq_apply(state: &mut SeqState, op: &[u8], expected: &[u8]) -> Result<bool, CheckError> {
            match *state {
                $( SeqState::$sname(ref mut s) => seq_apply_one::<$sty>(s, op, expected), )*
            }
        }

        /// Host side: JSON runners (for `cargo xtask verify`) and stream encoders (for
        /// `cargo xtask verify --target`).
        #[cfg(feature = "json")]
        pub mod json {
            #[allow(unused_imports)]
            use super::*;
            use crate::json_support::*;
            use std::string::String;

            /// Runs a case's JSON `in` and returns its output as JSON.
            #[allow(unused_mut, unused_variables, unused_assignments)]
            pub fn run(kind: Kind, input: &Value, variant: &str) -> Result<Value, String> {
                match kind {
                    Kind::Case(kind) => {
                        let mut k = 0u16;
                        $(
                            if kind == k {
                                return run_case::<$cty>(input, variant);
                            }
                            k += 1;
                        )*
                    }
                    Kind::Seq(kind) => {
                        let mut k = 0u16;
                        $(
                            if kind == k {
                                return run_seq::<$sty>(input, variant);
                            }
                            k += 1;
                        )*
                    }
                }
                Err("unknown kind".into())
            }

            /// Encodes a case (its JSON `in` and `out`) as stream records.
            #[allow(unused_mut, unused_variables, unused_assignments)]
            pub fn encode(kind: Kind, input: &Value, out: &Value) -> Result<Encoded, String> {
                match kind {
                    Kind::Case(kind) => {
                        let mut k = 0u16;
                        $(
                            if kind == k {
                                return encode_case::<$cty>(input, out);
                            }
                            k += 1;
                        )*
                    }
                    Kind::Seq(kind) => {
                        let mut k = 0u16;
                        $(
                            if kind == k {
                                return encode_seq::<$sty>(input, out);
                            }
                            k += 1;
                        )*
                    }
                }
                Err("unknown kind".into())
            }
        }
    };
}

registry! {
    cases: [
        ("capacity", "cap_scale", crate::capacity::CapScale),
        ("capacity", "topology_normalize_cpu_scale", crate::capacity::normalize::TopologyNormalizeCpuScale),
        ("capacity", "topology_set_freq_scale", crate::capacity::normalize::TopologySetFreqScale),
        ("capacity", "scale_rt_capacity", crate::capacity::scale_rt_capacity::ScaleRtCapacity),
        ("capacity", "topology_update_hw_pressure", crate::capacity::scale_rt_capacity::TopologyUpdateHwPressure),
        ("capacity", "cpufreq_update_pressure", crate::capacity::scale_rt_capacity::CpufreqUpdatePressure),
        ("capacity", "check_cpu_capacity", crate::capacity::scale_rt_capacity::CheckCpuCapacity),
        ("capacity", "fits_capacity", crate::capacity::fits::FitsCapacity),
        ("capacity", "capacity_greater", crate::capacity::fits::CapacityGreater),
        ("capacity", "util_fits_cpu", crate::capacity::fits::UtilFitsCpu),
        ("capacity", "task_fits_cpu", crate::capacity::fits::TaskFitsCpu),
        ("capacity", "uclamp_bucket_id", crate::capacity::uclamp::UclampBucketId),
        ("capacity", "uclamp_eff_value", crate::capacity::uclamp::UclampEffValue),
        ("capacity", "uclamp_rq_is_capped", crate::capacity::uclamp::UclampRqIsCapped),
        ("capacity", "effective_cpu_util", crate::capacity::effective_cpu_util::EffectiveCpuUtil),
        // Same inputs and output as schedutil's map.jsonl case: one driver for both suites.
        ("capacity", "sugov_effective_cpu_perf", crate::schedutil::SugovEffectiveCpuPerf),
        ("capacity", "cpu_util", crate::capacity::effective_cpu_util::CpuUtil),
        ("capacity", "cpu_overutilized", crate::capacity::overutilized::CpuOverutilized),
        ("capacity", "em_create_perf_table", crate::capacity::energy::EmCreatePerfTable),
        ("capacity", "em_cpu_energy", crate::capacity::energy::EmCpuEnergy),
        ("capacity", "em_update_performance_limits", crate::capacity::energy::EmUpdatePerformanceLimits),
        ("pelt", "sched_pelt_generator", crate::pelt::SchedPeltGenerator),
        ("pelt", "decay_load", crate::pelt::DecayLoad),
        ("pelt", "__accumulate_pelt_segments", crate::pelt::AccumulatePeltSegments),
        ("schedutil", "map_util_perf", crate::schedutil::MapUtilPerf),
        ("schedutil", "map_util_freq", crate::schedutil::MapUtilFreq),
        ("schedutil", "sugov_effective_cpu_perf", crate::schedutil::SugovEffectiveCpuPerf),
        ("schedutil", "get_capacity_ref_freq", crate::schedutil::GetCapacityRefFreq),
        ("schedutil", "effective_cpu_util", schedmath::capacity::EffectiveUtilInput),
        ("schedutil", "uclamp_rq_is_capped", crate::schedutil::UclampRqIsCapped),
        ("schedutil", "sugov_get_util", crate::schedutil::SugovGetUtil),
        ("schedutil", "set_freq_table_sorted", crate::schedutil::SetFreqTableSorted),
        ("schedutil", "cpufreq_frequency_table_target", crate::schedutil::CpufreqFrequencyTableTarget),
        ("schedutil", "cpufreq_driver_resolve_freq", crate::schedutil::CpufreqDriverResolveFreq),
        ("fair", "__calc_delta", crate::fair::weight::CalcDelta),
        ("fair", "calc_delta_fair", crate::fair::weight::CalcDeltaFair),
        ("fair", "__update_inv_weight", crate::fair::weight::UpdateInvWeight),
        ("fair", "sched_prio_to_weight", crate::fair::weight::SchedPrioToWeight),
        ("fair", "sched_prio_to_wmult", crate::fair::weight::SchedPrioToWmult),
        ("fair", "prio_load_weight", crate::fair::weight::PrioLoadWeight),
        // mainline's base slice or 6.1's latency/granularities, by the header variant.
        ("fair", "update_sysctl", crate::fair::weight::UpdateSysctl),
        ("fair", "__setparam_fair", crate::fair::weight::SetparamFair),
        ("fair", "avg_vruntime_entities", crate::fair::eevdf::AvgVruntimeEntities),
        ("fair", "avg_vruntime", crate::fair::eevdf::AvgVruntime),
        ("fair", "avg_vruntime_add", crate::fair::eevdf::AvgVruntimeAdd),
        ("fair", "avg_vruntime_sub", crate::fair::eevdf::AvgVruntimeSub),
        ("fair", "vruntime_eligible", crate::fair::eevdf::VruntimeEligible),
        ("fair", "update_entity_lag", crate::fair::eevdf::UpdateEntityLag),
        // EEVDF's (eevdf.jsonl) or 6.1's (cfs_v6_1.jsonl), by the header variant.
        ("fair", "place_entity", crate::fair::eevdf::PlaceEntity),
        ("fair", "update_deadline", crate::fair::eevdf::UpdateDeadline),
        ("fair", "update_min_vruntime", crate::fair::eevdf::UpdateMinVruntime),
        ("fair", "__sched_period", crate::fair::cfs::SchedPeriod),
        ("fair", "sched_slice", crate::fair::cfs::SchedSlice),
        ("fair", "check_preempt_tick", crate::fair::cfs::CheckPreemptTick),
        ("fair", "wakeup_preempt_entity", crate::fair::cfs::WakeupPreemptEntity),
        ("fair", "calc_group_shares", crate::fair::group::CalcGroupShares),
        ("fair", "update_tg_load_avg", crate::fair::group::UpdateTgLoadAvg),
        ("fair", "clear_tg_load_avg", crate::fair::group::ClearTgLoadAvg),
        ("fair", "group_classify", crate::fair::lb::GroupClassify),
        ("fair", "group_is_overloaded", crate::fair::lb::GroupIsOverloaded),
        ("fair", "group_has_capacity", crate::fair::lb::GroupHasCapacity),
        ("fair", "smt_balance", crate::fair::lb::SmtBalance),
    ],
    sequences: [
        ("pelt", "se_sequence", PeltSe: crate::pelt::SeSequence),
        ("pelt", "cfs_rq_sequence", PeltCfsRq: crate::pelt::CfsRqSequence),
        ("pelt", "rt_sequence", PeltRt: crate::pelt::RtSequence),
        ("pelt", "dl_sequence", PeltDl: crate::pelt::DlSequence),
        ("pelt", "hw_sequence", PeltHw: crate::pelt::HwSequence),
        ("pelt", "irq_sequence", PeltIrq: crate::pelt::IrqSequence),
        ("pelt", "clock_pelt_sequence", PeltClock: crate::pelt::ClockPeltSequence),
        ("pelt", "clock_pelt_mult_sequence", PeltClockMult: crate::pelt::ClockPeltMultSequence),
        ("pelt", "util_est_sequence", PeltUtilEst: crate::pelt::UtilEstSeq),
        ("capacity", "uclamp_rq_seq", CapacityUclampRq: crate::capacity::uclamp::UclampRqSeq),
        ("capacity", "rd_overutilized_seq", CapacityRdOverutilized: crate::capacity::overutilized::RdOverutilizedSeq),
        ("schedutil", "get_next_freq_sequence", SuNextFreq: crate::schedutil::governor::NextFreqSequence),
        ("schedutil", "iowait_sequence", SuIowait: crate::schedutil::governor::IowaitSequence),
        ("schedutil", "sugov_update_single_freq_sequence", SuSingleFreq: crate::schedutil::governor::SingleFreqSequence),
        ("schedutil", "sugov_update_shared_sequence", SuSharedFreq: crate::schedutil::governor::SharedFreqSequence),
        ("cpuidle", "teo_sequence", CpuidleTeo: crate::cpuidle::TeoSequence),
        ("cpuidle", "menu_sequence", CpuidleMenu: crate::cpuidle::MenuSequence),
        ("fair", "eevdf_sequence", FairEevdf: crate::fair::seq::EevdfSequence),
    ],
}
