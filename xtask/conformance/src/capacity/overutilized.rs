// SPDX-License-Identifier: GPL-2.0-only
//! `overutilized.jsonl`: the EAS overutilized test of one CPU and the root-domain flag
//! sequence (kernel/sched/fair.c). Both read the suite header's `variant` as a
//! [`Profile`] (`ou-lone-task` changes `cpu_overutilized()`).

use heapless::Vec;
use schedmath::capacity::topology::NR_CPUS;
use schedmath::capacity::{cpu_util_cfs, sched_cpu_util, RqPressureUtil};
use schedmath::overutilized::{
    check_update_overutilized_status, cpu_overutilized, is_rd_overutilized,
    update_sd_lb_overutilized, EasKeys, OverutilizedCpu, RootDomain,
};
use schedmath::profile::OverutilizedPolicy;
use schedmath::Profile;
use serde::{Deserialize, Serialize};

use super::{bounded, cpu_capacity, Flag};
use crate::limit::NR_CPUS as NR;
use crate::{Case, CaseError, Sequence};

fn profile_of(variant: &str) -> Result<Profile, CaseError> {
    Profile::from_name(variant).map_err(|_| CaseError::UnknownVariant)
}

/// Declares, from one list of the suite's per-CPU fields, [`OuCpu`] (a CPU record of
/// `rd_overutilized_seq`) and [`CpuOverutilized`] (`cpu_overutilized`'s `in`: the same
/// fields, flat, after the two static keys — postcard cannot `flatten`).
macro_rules! ou_cpu_structs {
    ($( $(#[$doc:meta])* $field:ident: $ty:ty, )*) => {
        /// One CPU's state in the overutilized suite.
        #[derive(Clone, Copy, Debug, Serialize, Deserialize)]
        pub struct OuCpu {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        /// `cpu_overutilized` {uclamp_is_used, sched_energy_enabled, ...one CPU's state}
        /// → {ret, sched_cpu_util}.
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub struct CpuOverutilized {
            /// `sched_uclamp_used`.
            pub uclamp_is_used: Flag,
            /// `sched_energy_present`.
            pub sched_energy_enabled: Flag,
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl CpuOverutilized {
            /// The CPU part of the input.
            fn ou_cpu(&self) -> OuCpu {
                OuCpu { $( $field: self.$field, )* }
            }
        }
    };
}

ou_cpu_structs! {
    /// `arch_scale_cpu_capacity(cpu)`.
    capacity_orig: u64,
    /// `capacity_of(cpu)`.
    cpu_capacity: u64,
    /// `hw_load_avg(rq)`.
    hw_load_avg: u64,
    /// `cpufreq_get_pressure(cpu)`.
    cpufreq_pressure: u64,
    /// `rq->cfs.avg.util_avg`.
    cfs_util_avg: u64,
    /// `rq->cfs.avg.util_est`.
    cfs_util_est: u32,
    /// `rq->uclamp[UCLAMP_MIN].value`.
    rq_uclamp_min: u64,
    /// `rq->uclamp[UCLAMP_MAX].value`.
    rq_uclamp_max: u64,
    /// `rq->nr_running`: only the `ou-lone-task` profile reads it; mainline fixtures do
    /// not carry it.
    nr_running: Option<u32>,
}

impl OuCpu {
    /// The core's view; `nr_running` is required only by a profile that reads it.
    fn core(&self, profile: &Profile) -> Result<OverutilizedCpu, CaseError> {
        let nr_running = match (self.nr_running, profile.overutilized) {
            (Some(n), _) => n,
            (None, OverutilizedPolicy::Mainline) => 0,
            (None, _) => return Err(CaseError::Missing("nr_running")),
        };
        Ok(OverutilizedCpu {
            capacity: cpu_capacity(
                self.capacity_orig,
                self.cpu_capacity,
                self.hw_load_avg,
                self.cpufreq_pressure,
            ),
            cfs_util_avg: self.cfs_util_avg,
            cfs_util_est: self.cfs_util_est,
            rq_uclamp_min: self.rq_uclamp_min,
            rq_uclamp_max: self.rq_uclamp_max,
            nr_running,
        })
    }
}

/// `{ret, sched_cpu_util}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuOverutilizedOut {
    /// `cpu_overutilized()`.
    pub ret: Flag,
    /// `sched_cpu_util()` (no RT, DL or IRQ time in this suite).
    pub sched_cpu_util: u64,
}

impl Case for CpuOverutilized {
    type Out = CpuOverutilizedOut;
    fn run(&self, variant: &str) -> Result<CpuOverutilizedOut, CaseError> {
        let profile = profile_of(variant)?;
        let keys = EasKeys {
            sched_energy_enabled: self.sched_energy_enabled.0,
            uclamp_is_used: self.uclamp_is_used.0,
        };
        let cpu = self.ou_cpu().core(&profile)?;
        Ok(CpuOverutilizedOut {
            ret: Flag(cpu_overutilized(&profile, keys, &cpu)),
            sched_cpu_util: sched_cpu_util(&cpu.util_rq(), &RqPressureUtil::default()),
        })
    }
}

/// `rd_overutilized_seq`: the root domain's flag over a small system, driven by
/// enqueues, ticks and load-balance passes.
pub struct RdOverutilizedSeq;

/// `in` of `rd_overutilized_seq` (its `ops` are read one by one).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RdOverutilizedIn {
    /// `in.init`.
    pub init: RdOverutilizedInit,
}

/// `in.init` (`initial_state` is not read).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RdOverutilizedInit {
    /// Number of CPUs, at most [`NR_CPUS`].
    pub nr_cpus: u32,
    /// `sched_uclamp_used`.
    pub uclamp_is_used: Flag,
    /// `sched_energy_present`.
    pub sched_energy_enabled: Flag,
    /// `rd->overutilized` before op 0.
    pub rd_overutilized: Flag,
    /// Each CPU's state before op 0.
    #[serde(deserialize_with = "crate::limit::nr_cpus::list")]
    pub cpus: Vec<OuCpu, NR_CPUS>,
}

/// One op of `rd_overutilized_seq` (see the README).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum RdOverutilizedOp {
    /// Replaces a CPU's state.
    #[serde(rename = "set_cpu")]
    SetCpu {
        /// CPU index.
        cpu: u32,
        /// Its complete new state.
        state: OuCpu,
    },
    /// The end of `enqueue_task_fair()`.
    #[serde(rename = "enqueue_task_fair")]
    EnqueueTaskFair {
        /// CPU index.
        cpu: u32,
        /// A new task (no overutilized update).
        task_new: Flag,
    },
    /// `task_tick_fair()`.
    #[serde(rename = "task_tick_fair")]
    TaskTickFair {
        /// CPU index.
        cpu: u32,
    },
    /// A load-balance pass at the root domain over every CPU.
    #[serde(rename = "lb_root_domain")]
    LbRootDomain {},
    /// A load-balance pass in a child domain.
    #[serde(rename = "lb_child_domain")]
    LbChildDomain {
        /// The domain's CPUs.
        #[serde(deserialize_with = "crate::limit::nr_cpus::list")]
        cpus: Vec<u32, NR_CPUS>,
    },
}

/// The running state.
#[derive(Clone, Debug)]
pub struct RdOverutilizedState {
    profile: Profile,
    keys: EasKeys,
    rd: RootDomain,
    cpus: Vec<OverutilizedCpu, NR_CPUS>,
}

/// One element of `out.after`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RdOverutilizedAfter {
    /// The stored `rd->overutilized`.
    pub rd_overutilized: Flag,
    /// `is_rd_overutilized()`.
    pub is_rd_overutilized: Flag,
    /// `cpu_overutilized()` of every CPU.
    pub cpu_overutilized: Vec<Flag, NR_CPUS>,
    /// `cpu_util_cfs()` of every CPU.
    pub cpu_util_cfs: Vec<u64, NR_CPUS>,
}

impl RdOverutilizedState {
    fn cpu(&self, c: u32) -> Result<&OverutilizedCpu, CaseError> {
        self.cpus
            .get(c as usize)
            .ok_or(CaseError::OutOfRange("cpu"))
    }

    fn overutilized(&self, c: &OverutilizedCpu) -> bool {
        cpu_overutilized(&self.profile, self.keys, c)
    }

    /// `check_update_overutilized_status()` for CPU `c`.
    fn check_update(&mut self, c: u32) -> Result<(), CaseError> {
        let cpu = *self.cpu(c)?;
        check_update_overutilized_status(&self.profile, self.keys, &mut self.rd, &cpu);
        Ok(())
    }
}

impl Sequence for RdOverutilizedSeq {
    type Init = RdOverutilizedIn;
    type Op = RdOverutilizedOp;
    type After = RdOverutilizedAfter;
    type State = RdOverutilizedState;

    fn start(init: &RdOverutilizedIn, variant: &str) -> Result<RdOverutilizedState, CaseError> {
        let init = &init.init;
        let profile = profile_of(variant)?;
        if init.cpus.len() != init.nr_cpus as usize {
            return Err(CaseError::OutOfRange("nr_cpus"));
        }
        let mut cpus = Vec::new();
        for c in &init.cpus {
            cpus.push(c.core(&profile)?)
                .map_err(|_| CaseError::TooLong(crate::limit::NR_CPUS))?;
        }
        Ok(RdOverutilizedState {
            profile,
            keys: EasKeys {
                sched_energy_enabled: init.sched_energy_enabled.0,
                uclamp_is_used: init.uclamp_is_used.0,
            },
            rd: RootDomain {
                overutilized: init.rd_overutilized.0,
            },
            cpus,
        })
    }

    fn apply(
        s: &mut RdOverutilizedState,
        op: &RdOverutilizedOp,
    ) -> Result<RdOverutilizedAfter, CaseError> {
        match op {
            RdOverutilizedOp::SetCpu { cpu, state } => {
                let new = state.core(&s.profile)?;
                let slot = s
                    .cpus
                    .get_mut(*cpu as usize)
                    .ok_or(CaseError::OutOfRange("cpu"))?;
                *slot = new;
            }
            RdOverutilizedOp::EnqueueTaskFair { cpu, task_new } => {
                s.cpu(*cpu)?;
                if !task_new.0 {
                    s.check_update(*cpu)?;
                }
            }
            RdOverutilizedOp::TaskTickFair { cpu } => s.check_update(*cpu)?,
            RdOverutilizedOp::LbRootDomain {} => {
                let any = s.cpus.iter().any(|c| s.overutilized(c));
                update_sd_lb_overutilized(s.keys, &mut s.rd, true, any);
            }
            RdOverutilizedOp::LbChildDomain { cpus } => {
                let mut any = false;
                for &c in cpus {
                    any |= s.overutilized(s.cpu(c)?);
                }
                update_sd_lb_overutilized(s.keys, &mut s.rd, false, any);
            }
        }
        Ok(RdOverutilizedAfter {
            rd_overutilized: Flag(s.rd.overutilized),
            is_rd_overutilized: Flag(is_rd_overutilized(s.keys, &s.rd)),
            cpu_overutilized: bounded(s.cpus.iter().map(|c| Flag(s.overutilized(c))), NR)?,
            cpu_util_cfs: bounded(s.cpus.iter().map(|c| cpu_util_cfs(&c.util_rq())), NR)?,
        })
    }
}
