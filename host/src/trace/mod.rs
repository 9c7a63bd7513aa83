// SPDX-License-Identifier: GPL-2.0-only
//! Traces: a streaming reader of `trace-cmd report` text ([`report`]) and the typed
//! scheduler events it yields ([`event`]).
//!
//! The reader knows nothing about PELT or replay: it turns lines into records (task,
//! CPU, timestamp, event name, fields) and records into typed events, so `replay` and
//! later trace users share one parser. It reads the output of trace-cmd 2.9–3.x with or
//! without the latency-flags column (`d..2.`), with trace-cmd's sched plugin formats
//! (`comm:pid [prio] S ==> comm:pid [prio]`) or the kernel's raw `key=value` print
//! formats, and the project's own traces (same text format, LISA event names).

pub mod event;
pub mod record;
pub mod report;
pub mod write;

pub use event::{Event, PeltCall, PeltCallKind, PeltEntity, PeltState, UtilEstValue};
pub use report::{ReadError, Record, ReportReader, SkipReason, Skipped};
