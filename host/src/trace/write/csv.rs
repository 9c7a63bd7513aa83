// SPDX-License-Identifier: GPL-2.0-only
//! CSV: one row per event. Columns: `time_ns,cpu,event,comm,pid` (when, where, and the
//! task current there), then every field of every event kind present, in first-seen
//! order, empty where the event has no such field. A field named like a leading column
//! (LISA's `cpu`, `comm`, `pid`) is written as `field_cpu`, ... so no two columns share a
//! name (pandas reads the file with `read_csv` as is).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::text::csv_field;
use crate::trace::record::{Trace, EVENTS};
use crate::trace::write::txt::state_letters;

use crate::trace::record::{Fmt, Val};

const LEAD: [&str; 5] = ["time_ns", "cpu", "event", "comm", "pid"];

/// Writes the CSV.
pub fn write(t: &Trace, out: &mut dyn Write) -> io::Result<()> {
    // The columns: every field of the layouts used, first-seen order.
    let mut used = vec![false; EVENTS.len()];
    for r in &t.events {
        used[r.kind.def()] = true;
    }
    let mut cols: Vec<String> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for (d, _) in used.iter().enumerate().filter(|(_, u)| **u) {
        for f in EVENTS[d].fields {
            let name = column(f.key);
            if !index.contains_key(&name) {
                index.insert(name.clone(), cols.len());
                cols.push(name);
            }
        }
    }
    let head: Vec<&str> = LEAD
        .iter()
        .copied()
        .chain(cols.iter().map(String::as_str))
        .collect();
    writeln!(out, "{}", head.join(","))?;
    let mut cells = vec![String::new(); cols.len()];
    let mut line = String::with_capacity(256);
    for r in &t.events {
        let def = r.kind.event_def();
        for c in &mut cells {
            c.clear();
        }
        for (f, v) in def.fields.iter().zip(r.kind.values(t, r.cpu)) {
            let cell = &mut cells[index[&column(f.key)]];
            *cell = match (f.fmt, &v) {
                (Fmt::State, Val::U(b)) => state_letters(*b).to_string(),
                (Fmt::AboveBelow, Val::U(b)) => (if *b != 0 { "below" } else { "above" }).into(),
                (Fmt::Hex, v) => format!("0x{v}"),
                (_, v) => v.to_string(),
            };
        }
        line.clear();
        line.push_str(&format!("{},{},{},", r.ts, r.cpu, def.name));
        line.push_str(&csv_field(t.comm(r.pid)));
        line.push_str(&format!(",{}", r.pid));
        for c in &cells {
            line.push(',');
            line.push_str(&csv_field(c));
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

fn column(key: &str) -> String {
    if LEAD.contains(&key) {
        format!("field_{key}")
    } else {
        key.to_string()
    }
}
