// SPDX-License-Identifier: GPL-2.0-only
//! Workload errors: every one names the file, the line and the JSON path of the key.
//!
//! A workload mistake found late in a simulation is expensive, so the readers refuse
//! anything they cannot model and say exactly where it is (`file:line:column: path: msg`).

use super::json::Loc;

/// A workload file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// The file could not be read, or its kind is not known.
    #[error("{origin}: {msg}")]
    Io {
        /// The file.
        origin: String,
        /// What went wrong.
        msg: String,
    },
    /// Unreadable, too large or not UTF-8 (names the limit or the position).
    #[error(transparent)]
    Input(#[from] crate::limits::InputError),
    /// Not (lenient) JSON / TOML.
    #[error("{origin}:{at}: {msg}")]
    Syntax {
        /// The file.
        origin: String,
        /// Where the reader stopped.
        at: Loc,
        /// What it expected.
        msg: String,
    },
    /// Well-formed, but not a workload schedmath can model.
    #[error("{origin}:{at}: {path}: {msg}")]
    Invalid {
        /// The file.
        origin: String,
        /// The offending key (or value).
        at: Loc,
        /// The key path, e.g. `tasks.thread0.phases.p1.run1`.
        path: String,
        /// What is wrong.
        msg: String,
    },
}
