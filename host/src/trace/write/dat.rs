// SPDX-License-Identifier: GPL-2.0-only
//! trace-cmd data file (placeholder).
use crate::trace::record::Trace;
use std::io::{self, Write};
/// Writes the `.dat`.
pub fn write(_t: &Trace, _out: &mut dyn Write) -> io::Result<()> {
    Err(io::Error::other(".dat: not yet"))
}
