// SPDX-License-Identifier: GPL-2.0-only
//! Perfetto protobuf (placeholder).
use crate::trace::record::Trace;
use std::io::{self, Write};
/// Writes the `.pftrace`.
pub fn write(_t: &Trace, _out: &mut dyn Write) -> io::Result<()> {
    Err(io::Error::other(".pftrace: not yet"))
}
