// SPDX-License-Identifier: GPL-2.0-only
//! The simulator: tasks on a platform, driven through the core's PELT, util_est, uclamp,
//! schedutil, cpuidle, overutilized and Energy Model arithmetic, event by event.
//!
//! * [`program`]: what runs (task programs built from the workload model);
//! * [`rq`]: per-CPU runqueue state and the class/pick model;
//! * [`group`]: task groups (per-CPU group cfs_rq and entity, `calc_group_shares()`);
//! * [`domains`]: the sched domains the fork path walks (SMT / MC / PKG);
//! * [`placement`]: wake-up CPU selection (EAS / idle-capacity search / fork slow path);
//! * [`governors`]: schedutil per frequency domain, cpuidle per CPU;
//! * [`task`]: a task's kernel-side state and its program walk;
//! * [`engine`]: the event loop and the kernel points it calls (`sched`, `wakeup`, `tick`);
//! * [`metrics`]: what is measured and its tables.
//!
//! Same inputs → same output, bit for bit: integer time, a heap ordered by (time,
//! insertion number), ordered maps only, no clock; random numbers only from each task's
//! seeded stream ([`crate::rng`], drawn by workload ranges alone, so a workload without
//! ranges gives the same result for every seed). Each module's doc names its
//! simplifications.
//!
//! This file holds what every part of the simulator shares: the run parameters
//! ([`SimConfig`]), the engine's constants and the kernel's priority weights; the files
//! below it name each other without cycles (`tests/layering.rs`).

pub mod domains;
pub mod engine;
pub mod governors;
pub mod group;
pub mod metrics;
pub mod observe;
pub mod placement;
pub mod program;
pub mod rq;
pub mod task;

pub use engine::{
    simulate, simulate_counting_events, simulate_traced, simulate_with_progress, simulate_workload,
};
pub use metrics::{render_compare, Metrics};
pub use program::{tasks_from_workload, PhaseAttrs, SchedPolicy, SimPhase, SimTask, Step};

use crate::platform::policy::PolicyError;
use crate::platform::PlatformError;
use crate::workload::WorkloadError;

/// Why a simulation cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The platform file.
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// The workload file.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A frequency domain cannot be driven.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// Inconsistent parameters (names the task or option).
    #[error("{0}")]
    Config(String),
}

/// Run parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// Simulated time (ns).
    pub duration_ns: u64,
    /// Tick rate.
    pub hz: u32,
    /// Seeds every task's random stream (see the module doc).
    pub seed: u64,
}

impl SimConfig {
    /// A run of workload `w`: `duration_s` when given, else the workload's own duration
    /// (`global.duration`), else 10 s — what `simulate` and `sweep` run.
    pub fn for_workload(
        w: &crate::workload::Workload,
        duration_s: Option<u32>,
        hz: u32,
        seed: u64,
    ) -> Self {
        let duration_ns = duration_s
            .map(|s| u64::from(s) * 1_000_000_000)
            .or(w.global.duration_ns)
            .unwrap_or(10_000_000_000);
        SimConfig {
            duration_ns,
            hz,
            seed,
        }
    }
}

/// The rq clocks start here ("uptime" at simulated time 0): the kernel never sees a
/// zero clock, and a zero `last_update_time` means "not attached" to PELT.
pub const BOOT_CLOCK_NS: u64 = 1_000_000_000;

// The kernel's weight tables (kernel/sched/core.c, sched.h), from the core: the
// fair-class model and the task groups both read them.
pub use schedmath::fair::weight::{SCHED_PRIO_TO_WEIGHT, WEIGHT_IDLEPRIO};
