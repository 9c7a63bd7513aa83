// SPDX-License-Identifier: GPL-2.0-only
//! A trace-cmd data file, version 6 (trace-cmd's Documentation/trace-cmd/trace-cmd.dat.v6
//! describes the layout; lib/trace-cmd/trace-output.c writes it), little endian, 8-byte
//! longs, 4096-byte pages:
//!
//! 1. magic `\x17\x08\x44tracing`, version `6\0`, endianness, long size, page size;
//! 2. `header_page` and `header_event`: the ring buffer's page header and event header
//!    layouts, as text (libtraceevent parses the page header's field sizes);
//! 3. ftrace's own event formats (none), then the event formats per system (`sched`,
//!    `power`, `lisa`, `schedmath`): our own format descriptions with the kernel's event
//!    and field names, from [`EVENTS`] (only the layouts the trace uses);
//! 4. kallsyms and trace_printk formats (empty), the cmdlines (`pid comm` per task);
//! 5. the CPU count, the options section (empty), and `flyrecord`: per CPU the offset and
//!    size of its buffer, then the buffers, page aligned. A buffer is ring-buffer pages:
//!    a 16-byte header (the first event's absolute timestamp, then the bytes committed)
//!    and events, each a 4-byte header (`type_len`: the payload in 4-byte words, 0 = a
//!    length word follows; `time_delta`: 27 bits since the previous event) and the record
//!    (the common fields, then the event's). A delta that does not fit 27 bits is carried
//!    by a time-extend event (type 30) before the record.

use std::io::{self, Write};

use crate::trace::record::{EventDef, Fmt, Rec, Trace, Ty, Val, EVENTS};

const PAGE_SIZE: usize = 4096;
/// The page header: `u64 timestamp`, `local_t commit`.
const PAGE_HEADER: usize = 16;
const PAGE_DATA: usize = PAGE_SIZE - PAGE_HEADER;
/// Largest payload `type_len` can describe (28 words).
const MAX_SMALL: usize = 28 * 4;
const TYPE_TIME_EXTEND: u32 = 30;
const TS_BITS: u32 = 27;
/// The record's common fields (`common_type`, `_flags`, `_preempt_count`, `_pid`).
const COMMON: usize = 8;
/// Event ids start here ([`EVENTS`] index + this).
const FIRST_ID: u16 = 1000;

const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

/// Field offsets of a layout (natural alignment after the common fields) and the
/// record's size.
fn layout(def: &EventDef) -> (Vec<usize>, usize) {
    let mut off = COMMON;
    let mut offs = Vec::with_capacity(def.fields.len());
    for f in def.fields {
        let align = match f.ty {
            Ty::Char(_) => 1,
            Ty::DynStr => 4,
            t => t.size(),
        };
        off = off.next_multiple_of(align);
        offs.push(off);
        off += f.ty.size();
    }
    (offs, off)
}

/// The C type of a field in the format text.
fn c_type(key: &str, ty: Ty) -> String {
    match ty {
        Ty::I32 => format!("int {key}"),
        Ty::U32 => format!("unsigned int {key}"),
        Ty::I64 => format!("long {key}"),
        Ty::U64 => format!("unsigned long {key}"),
        Ty::Char(n) => format!("char {key}[{n}]"),
        Ty::DynStr => format!("__data_loc char[] {key}"),
    }
}

/// The `format` file of one event, as the kernel's tracefs prints one.
pub fn format_text(def: &EventDef, id: u16) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "name: {}\nID: {id}\nformat:", def.name);
    let common = [
        ("unsigned short common_type", 0, 2, 0),
        ("unsigned char common_flags", 2, 1, 0),
        ("unsigned char common_preempt_count", 3, 1, 0),
        ("int common_pid", 4, 4, 1),
    ];
    for (decl, off, size, signed) in common {
        let _ = writeln!(
            s,
            "\tfield:{decl};\toffset:{off};\tsize:{size};\tsigned:{signed};"
        );
    }
    s.push('\n');
    let (offs, _) = layout(def);
    for (f, off) in def.fields.iter().zip(&offs) {
        let signed = u8::from(matches!(f.ty, Ty::I32 | Ty::I64 | Ty::Char(_)));
        let _ = writeln!(
            s,
            "\tfield:{};\toffset:{off};\tsize:{};\tsigned:{signed};",
            c_type(f.field, f.ty),
            f.ty.size()
        );
    }
    let mut fmt = String::new();
    let mut args = Vec::new();
    for (i, f) in def.fields.iter().enumerate() {
        if i > 0 {
            fmt.push(' ');
        }
        if def.arrow_before == Some(i) {
            fmt.push_str("==> ");
        }
        let rec = match f.ty {
            Ty::DynStr => format!("__get_str({})", f.field),
            _ => format!("REC->{}", f.field),
        };
        let conv = match (f.fmt, f.ty) {
            (Fmt::Dec03, _) => "%03d",
            (Fmt::Str | Fmt::Hex | Fmt::State | Fmt::AboveBelow, _) => "%s",
            (Fmt::Dec, Ty::I32) => "%d",
            (Fmt::Dec, Ty::U32) => "%u",
            (Fmt::Dec, Ty::I64) => "%ld",
            (Fmt::Dec, _) => "%lu",
        };
        let prefix = if f.fmt == Fmt::Hex { "0x" } else { "" };
        let _ = write!(fmt, "{}={prefix}{conv}", f.key);
        args.push(match f.fmt {
            Fmt::State => format!(
                "{rec} ? __print_flags({rec}, \"|\", {{ 0x01, \"S\" }}, {{ 0x02, \"D\" }}, \
                 {{ 0x10, \"X\" }}) : \"R\""
            ),
            Fmt::AboveBelow => format!("{rec} ? \"below\" : \"above\""),
            _ => rec,
        });
    }
    let _ = writeln!(s, "\nprint fmt: \"{fmt}\", {}", args.join(", "));
    s
}

/// One record's bytes (common fields, the event's, then its `__data_loc` strings;
/// padded to 4 bytes).
fn record(t: &Trace, r: &Rec, id: u16, out: &mut Vec<u8>) {
    let def = r.kind.event_def();
    let (offs, size) = layout(def);
    out.clear();
    out.resize(size, 0);
    out[0..2].copy_from_slice(&id.to_le_bytes());
    out[4..8].copy_from_slice(&r.pid.to_le_bytes());
    for ((f, off), v) in def.fields.iter().zip(offs).zip(r.kind.values(t, r.cpu)) {
        let bytes: Vec<u8> = match (f.ty, v) {
            (Ty::DynStr, v) => {
                let text = v.to_string();
                // A page holds the record: at most a few kB of text.
                let len = text.len().min(2048);
                let loc = ((len as u32 + 1) << 16) | out.len() as u32;
                out.extend_from_slice(&text.as_bytes()[..len]);
                out.push(0);
                loc.to_le_bytes().to_vec()
            }
            (Ty::Char(n), v) => {
                let text = v.to_string();
                let mut b = text.into_bytes();
                b.truncate(n - 1); // NUL-terminated, as strlcpy leaves it
                b
            }
            (Ty::I32 | Ty::U32, Val::U(x)) => (x as u32).to_le_bytes().to_vec(),
            (Ty::I32 | Ty::U32, Val::I(x)) => (x as i32).to_le_bytes().to_vec(),
            (Ty::I64 | Ty::U64, Val::U(x)) => x.to_le_bytes().to_vec(),
            (Ty::I64 | Ty::U64, Val::I(x)) => x.to_le_bytes().to_vec(),
            (_, Val::S(_)) => Vec::new(), // layouts declare text as char arrays
        };
        out[off..off + bytes.len()].copy_from_slice(&bytes);
    }
    out.resize(out.len().next_multiple_of(4), 0);
}

/// One CPU's ring-buffer pages.
struct CpuBuffer {
    pages: Vec<u8>,
    /// Start of the page being filled and its bytes used (after the header).
    page: usize,
    used: usize,
    /// Timestamp of the last event written (the base of the next delta).
    last_ts: u64,
}

impl CpuBuffer {
    fn new() -> Self {
        CpuBuffer {
            pages: Vec::new(),
            page: 0,
            used: PAGE_DATA, // forces a new page at the first event
            last_ts: 0,
        }
    }

    fn new_page(&mut self, ts: u64) {
        self.close_page();
        self.page = self.pages.len();
        self.pages.resize(self.page + PAGE_SIZE, 0);
        self.pages[self.page..self.page + 8].copy_from_slice(&ts.to_le_bytes());
        self.used = 0;
        self.last_ts = ts;
    }

    fn close_page(&mut self) {
        if self.pages.len() >= self.page + PAGE_SIZE {
            let commit = self.used as u64;
            self.pages[self.page + 8..self.page + 16].copy_from_slice(&commit.to_le_bytes());
        }
    }

    fn put_u32(&mut self, v: u32) {
        let at = self.page + PAGE_HEADER + self.used;
        self.pages[at..at + 4].copy_from_slice(&v.to_le_bytes());
        self.used += 4;
    }

    /// Appends a record at `ts`.
    fn push(&mut self, ts: u64, payload: &[u8]) {
        let body = if payload.len() > MAX_SMALL {
            8 + payload.len()
        } else {
            4 + payload.len()
        };
        let delta = ts.saturating_sub(self.last_ts);
        let extend = delta >= 1 << TS_BITS;
        let need = body + if extend { 8 } else { 0 };
        if need > PAGE_DATA {
            return; // no layout is near a page (the largest is about 500 bytes)
        }
        if self.used + need > PAGE_DATA {
            self.new_page(ts);
        }
        let delta = ts.saturating_sub(self.last_ts);
        let mut low = delta as u32 & ((1 << TS_BITS) - 1);
        if delta >= 1 << TS_BITS {
            self.put_u32(TYPE_TIME_EXTEND | (low << 5));
            self.put_u32((delta >> TS_BITS) as u32); // < 2^32 for any run shorter than 18 years
            low = 0;
        }
        if payload.len() > MAX_SMALL {
            self.put_u32(low << 5);
            self.put_u32(payload.len() as u32 + 4);
        } else {
            self.put_u32((payload.len() / 4) as u32 | (low << 5));
        }
        let at = self.page + PAGE_HEADER + self.used;
        self.pages[at..at + payload.len()].copy_from_slice(payload);
        self.used += payload.len();
        self.last_ts = ts;
    }

    fn finish(mut self) -> Vec<u8> {
        self.close_page();
        self.pages
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Writes the `.dat`.
pub fn write(t: &Trace, out: &mut dyn Write) -> io::Result<()> {
    let mut used = vec![false; EVENTS.len()];
    for r in &t.events {
        used[r.kind.def()] = true;
    }
    let id_of = |d: usize| FIRST_ID + d as u16; // EVENTS has a few dozen entries
    let mut h = Vec::new();
    h.extend_from_slice(b"\x17\x08\x44tracing");
    put_str(&mut h, "6");
    h.push(0); // little endian
    h.push(8); // long size
    h.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
    put_str(&mut h, "header_page");
    h.extend_from_slice(&(HEADER_PAGE.len() as u64).to_le_bytes());
    h.extend_from_slice(HEADER_PAGE.as_bytes());
    put_str(&mut h, "header_event");
    h.extend_from_slice(&(HEADER_EVENT.len() as u64).to_le_bytes());
    h.extend_from_slice(HEADER_EVENT.as_bytes());
    h.extend_from_slice(&0u32.to_le_bytes()); // ftrace event formats
                                              // Event formats, grouped by system in first-seen order.
    let mut systems: Vec<&str> = Vec::new();
    for (d, def) in EVENTS.iter().enumerate() {
        if used[d] && !systems.contains(&def.system) {
            systems.push(def.system);
        }
    }
    h.extend_from_slice(&(systems.len() as u32).to_le_bytes());
    for sys in &systems {
        put_str(&mut h, sys);
        let defs: Vec<usize> = (0..EVENTS.len())
            .filter(|&d| used[d] && EVENTS[d].system == *sys)
            .collect();
        h.extend_from_slice(&(defs.len() as u32).to_le_bytes());
        for d in defs {
            let text = format_text(&EVENTS[d], id_of(d));
            h.extend_from_slice(&(text.len() as u64).to_le_bytes());
            h.extend_from_slice(text.as_bytes());
        }
    }
    h.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
    h.extend_from_slice(&0u32.to_le_bytes()); // trace_printk formats
    let mut cmdlines = String::new();
    for task in &t.tasks {
        cmdlines.push_str(&format!("{} {}\n", task.pid, task.comm));
    }
    h.extend_from_slice(&(cmdlines.len() as u64).to_le_bytes());
    h.extend_from_slice(cmdlines.as_bytes());
    h.extend_from_slice(&(t.nr_cpus as u32).to_le_bytes());
    put_str(&mut h, "options  ");
    h.extend_from_slice(&0u16.to_le_bytes()); // no options
    put_str(&mut h, "flyrecord");
    // The buffers.
    let mut bufs: Vec<CpuBuffer> = (0..t.nr_cpus).map(|_| CpuBuffer::new()).collect();
    let mut payload = Vec::with_capacity(512);
    for r in &t.events {
        let Some(b) = bufs.get_mut(r.cpu as usize) else {
            continue;
        };
        record(t, r, id_of(r.kind.def()), &mut payload);
        b.push(r.ts, &payload);
    }
    let data: Vec<Vec<u8>> = bufs.into_iter().map(CpuBuffer::finish).collect();
    let table = 16 * data.len();
    let mut off = (h.len() + table).next_multiple_of(PAGE_SIZE);
    for d in &data {
        h.extend_from_slice(&(off as u64).to_le_bytes());
        h.extend_from_slice(&(d.len() as u64).to_le_bytes());
        off += d.len();
    }
    h.resize(h.len().next_multiple_of(PAGE_SIZE), 0);
    out.write_all(&h)?;
    for d in &data {
        out.write_all(d)?;
    }
    Ok(())
}
