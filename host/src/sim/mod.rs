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
//! insertion number), ordered maps only, no clock, no random numbers. Each module's doc
//! names its simplifications.

pub mod domains;
pub mod engine;
pub mod governors;
pub mod group;
pub mod metrics;
pub mod placement;
pub mod program;
pub mod rq;
pub mod task;

pub use engine::{simulate, simulate_with_progress, simulate_workload, SimConfig};
pub use metrics::{render_compare, Metrics};
pub use program::{tasks_from_workload, PhaseAttrs, SchedPolicy, SimPhase, SimTask, Step};

use crate::governor::GovernorError;
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
    Governor(#[from] GovernorError),
    /// Inconsistent parameters (names the task or option).
    #[error("{0}")]
    Config(String),
}
