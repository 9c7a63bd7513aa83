// SPDX-License-Identifier: GPL-2.0-only
//! Workloads: rt-app JSON or a compact periodic form → typed per-task programs.
//!
//! The simulator consumes [`Workload`] only; the file formats stop here. rt-app JSON is
//! the lingua franca of scheduler studies (LISA, EAS test suites, LKML threads), so we
//! read it as rt-app does — comments, trailing commas, repeated event keys — but refuse
//! what we cannot model instead of ignoring it. Modules:
//! * [`json`]: the lenient JSON reader (ordered members, line:column positions);
//! * [`rtapp`]: rt-app's grammar → model;
//! * [`periodic`]: the compact periodic TOML form → model;
//! * [`model`]: the typed model and its checks ([`Workload::validate`]);
//! * [`show`]: the summary `schedmath workload check` prints.

use std::path::Path;

pub mod error;
pub mod hazards;
pub mod json;
pub mod model;
pub mod periodic;
pub mod rtapp;
pub mod show;

pub use error::WorkloadError;
pub use model::{
    Affinity, Event, EventSpec, Format, Global, IgnoredKey, IrqShare, Loops, Phase, Policy, Sched,
    TaskGroup, TaskSpec, TimerMode, Uclamp, Workload,
};

impl Workload {
    /// Reads a workload file: `.json` is rt-app, `.toml` the periodic form.
    pub fn load(path: &Path) -> Result<Workload, WorkloadError> {
        let origin = path.display().to_string();
        let text = crate::limits::read_text(path)?;
        Workload::from_str_with_ext(&text, &origin, path.extension().and_then(|e| e.to_str()))
    }

    /// Parses `text` by extension (`json` or `toml`); `origin` names it in errors.
    pub fn from_str_with_ext(
        text: &str,
        origin: &str,
        ext: Option<&str>,
    ) -> Result<Workload, WorkloadError> {
        match ext {
            Some("json") => rtapp::parse_str(text, origin),
            Some("toml") => periodic::parse_str(text, origin),
            _ => Err(WorkloadError::Io {
                origin: origin.to_string(),
                msg: "unknown workload kind: use .json (rt-app) or .toml (periodic form)".into(),
            }),
        }
    }
}
