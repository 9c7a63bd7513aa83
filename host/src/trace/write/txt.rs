// SPDX-License-Identifier: GPL-2.0-only
//! `trace-cmd report` text: `cpus=N`, then one line per event,
//! `COMM-PID [CPU] SECONDS.MICROS: EVENT: key=value ...`, laid out as trace-cmd 3.x prints
//! it without the latency-flags column (`%16s-%-5d [%03d] %5lu.%06lu: ` then `NAME:` padded to 21 columns and a space with the
//! colon after the name), the kernel's print format for every field (`target_cpu=%03d`,
//! `prev_state` letters, ` ==>` in `sched_switch`). The lab's captures
//! (fixtures/lab/*/*/report.txt.gz) have this shape, and so this text is read by
//! `schedmath replay` and LISA's text parser.

use std::io::{self, Write};

use crate::trace::record::{Fmt, Rec, Trace, Val};

/// One event's line (no newline).
pub fn line(t: &Trace, r: &Rec, out: &mut String) {
    use std::fmt::Write as _;
    let def = r.kind.event_def();
    // `%16s-%-5d`: comm right-aligned in 16, pid left-aligned in 5.
    let comm = t.comm(r.pid);
    // Microseconds rounded to nearest, as libtraceevent prints them.
    let us = (r.ts + 500) / 1000;
    let _ = write!(
        out,
        "{comm:>16}-{:<5} [{:03}] {:>5}.{:06}: {:<21} ",
        r.pid,
        r.cpu,
        us / 1_000_000,
        us % 1_000_000,
        format!("{}:", def.name),
    );
    let vals = r.kind.values(t, r.cpu);
    for (i, (fd, v)) in def.fields.iter().zip(vals.iter()).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if def.arrow_before == Some(i) {
            out.push_str("==> ");
        }
        out.push_str(fd.key);
        out.push('=');
        match (fd.fmt, v) {
            (Fmt::Dec03, Val::U(n)) => {
                let _ = write!(out, "{n:03}");
            }
            (Fmt::Dec03, Val::I(n)) => {
                let _ = write!(out, "{n:03}");
            }
            (Fmt::State, Val::U(bits)) => out.push_str(state_letters(*bits)),
            (Fmt::AboveBelow, Val::U(b)) => out.push_str(if *b != 0 { "below" } else { "above" }),
            (Fmt::Hex, v) => {
                let _ = write!(out, "0x{v}");
            }
            (_, v) => {
                let _ = write!(out, "{v}");
            }
        }
    }
}

/// The letters of `prev_state` bits.
pub fn state_letters(bits: u64) -> &'static str {
    match bits {
        0 => "R",
        0x1 => "S",
        0x2 => "D",
        0x10 => "X",
        _ => "?",
    }
}

/// Writes the whole report.
pub fn write(t: &Trace, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "cpus={}", t.nr_cpus)?;
    let mut s = String::with_capacity(256);
    for r in &t.events {
        s.clear();
        line(t, r, &mut s);
        s.push('\n');
        out.write_all(s.as_bytes())?;
    }
    Ok(())
}
