// SPDX-License-Identifier: GPL-2.0-only
//! A streaming reader of `trace-cmd report` text.
//!
//! One event per line:
//!
//! ```text
//!           rt-app-153   [001]  3950.176256: sched_switch: rt-app:153 [120] S ==> swapper/1:0 [120]
//!           rt-app-153   [001] d..2. 3950.176256123: sched_switch: prev_comm=rt-app prev_pid=153 ...
//! ```
//!
//! `COMM-PID [CPU] [FLAGS] SECONDS.FRACTION: EVENT: BODY`. The comm is right-aligned and may
//! contain spaces and dashes (the pid is after the last `-`); the flags column (`d..2.`,
//! trace-cmd `-l` and 3.x latency format) is optional; the fraction has 6 digits (µs,
//! trace-cmd's default) or 9 (ns, `trace-cmd report -t`). Lines before the first event are
//! the header (`cpus=N`, `version = N`); `CPU:N [LOST M EVENTS]` marks a hole in one CPU's
//! buffer.
//!
//! Memory is bounded: one line buffer of at most [`MAX_LINE`] bytes plus a fixed number of
//! remembered skip locations, whatever the trace's length. Timestamps must not go
//! backwards (trace-cmd merges the CPU buffers in time order): that is an error naming the
//! file and line, because every later timeline would be wrong. A line that cannot be read
//! (truncated, garbled, too long, not UTF-8) is skipped, counted and its first locations
//! kept for the report.

use std::fmt;
use std::io::BufRead;
use std::ops::Range;

/// The longest line kept (bytes). trace-cmd's longest sched lines are ~200 bytes; a
/// kernel `print` event can be longer, 64 KiB covers any real one.
pub const MAX_LINE: usize = 64 * 1024;
/// How many skip locations are remembered per reason (the count itself is exact).
pub const MAX_SKIP_EXAMPLES: usize = 8;

/// One event line, borrowing the reader's line buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// 1-based line number in the file.
    pub line: u64,
    /// The comm of the task that was current when the event was recorded.
    pub comm: &'a str,
    /// Its pid (0 = the idle task).
    pub pid: i32,
    /// The CPU whose buffer recorded it.
    pub cpu: u32,
    /// The latency-flags column (`d..2.`) when present.
    pub flags: Option<&'a str>,
    /// The timestamp in ns (from a µs or ns fraction).
    pub ts_ns: u64,
    /// The event name (`sched_switch`, `lisa__sched_pelt_se`, ...).
    pub event: &'a str,
    /// Everything after `EVENT: `.
    pub body: &'a str,
}

impl<'a> Record<'a> {
    /// The `key=value` fields of the body (see [`fields`]).
    pub fn fields(&self) -> Fields<'a> {
        fields(self.body)
    }

    /// The value of one field, if present.
    pub fn field(&self, key: &str) -> Option<&'a str> {
        self.fields().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// Why a line was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// The last line of the file, cut short (no newline).
    Truncated,
    /// A line after the header that is not an event line.
    Malformed,
    /// Longer than [`MAX_LINE`].
    TooLong,
    /// Not UTF-8.
    NotUtf8,
    /// `CPU:N [LOST M EVENTS]`: trace-cmd lost events of that CPU here.
    LostEvents,
    /// An event line whose event the reader's user does not know (counted by the user
    /// with [`ReportReader::skip`]).
    UnknownEvent,
    /// A known event whose fields do not parse (counted by the user).
    BadFields,
    /// A known event the user cannot place (e.g. a pid never switched in).
    Unplaced,
}

impl SkipReason {
    /// Every reason, in report order.
    pub const ALL: [SkipReason; 8] = [
        SkipReason::Truncated,
        SkipReason::Malformed,
        SkipReason::TooLong,
        SkipReason::NotUtf8,
        SkipReason::LostEvents,
        SkipReason::UnknownEvent,
        SkipReason::BadFields,
        SkipReason::Unplaced,
    ];

    /// A short name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            SkipReason::Truncated => "truncated line",
            SkipReason::Malformed => "malformed line",
            SkipReason::TooLong => "line too long",
            SkipReason::NotUtf8 => "not UTF-8",
            SkipReason::LostEvents => "lost events",
            SkipReason::UnknownEvent => "unknown event",
            SkipReason::BadFields => "bad fields",
            SkipReason::Unplaced => "unplaced event",
        }
    }
}

/// The skipped lines of one reason: exact count, first locations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// How many lines.
    pub count: u64,
    /// The first [`MAX_SKIP_EXAMPLES`] (line, detail).
    pub examples: Vec<(u64, String)>,
}

/// A reading error: the file cannot be read or its timeline is broken.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// I/O error.
    #[error("{path}:{line}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The line being read.
        line: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// A timestamp earlier than the one before.
    #[error("{path}:{line}: timestamp {ts} goes backwards (previous event at {prev})")]
    Backwards {
        /// The file.
        path: String,
        /// The line.
        line: u64,
        /// This line's timestamp (s.fraction).
        ts: String,
        /// The previous one.
        prev: String,
    },
}

/// `ns` as `S.NNNNNNNNN` for messages.
pub fn fmt_ns(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// Reads `trace-cmd report` text line by line.
pub struct ReportReader<R> {
    inner: R,
    path: String,
    line: u64,
    buf: Vec<u8>,
    text: String,
    last_ts: Option<u64>,
    in_header: bool,
    cpus: Option<u32>,
    frac_digits: Option<usize>,
    skipped: [Skipped; SkipReason::ALL.len()],
}

impl<R: BufRead> ReportReader<R> {
    /// A reader of `inner`; `path` names it in errors and skip locations.
    pub fn new(inner: R, path: impl Into<String>) -> Self {
        ReportReader {
            inner,
            path: path.into(),
            line: 0,
            buf: Vec::new(),
            text: String::new(),
            last_ts: None,
            in_header: true,
            cpus: None,
            frac_digits: None,
            skipped: Default::default(),
        }
    }

    /// The file name given to [`new`](Self::new).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `cpus=N` from the header, if it had one.
    pub fn cpus(&self) -> Option<u32> {
        self.cpus
    }

    /// The number of fraction digits of the timestamps (6 = µs, 9 = ns), once an event
    /// was read.
    pub fn timestamp_digits(&self) -> Option<usize> {
        self.frac_digits
    }

    /// The line number of the last line read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// What was skipped so far, per reason.
    pub fn skipped(&self) -> impl Iterator<Item = (SkipReason, &Skipped)> {
        SkipReason::ALL.iter().copied().zip(self.skipped.iter())
    }

    /// Counts a skip of line `line` (for the reader's users: unknown events, bad fields).
    pub fn skip(&mut self, reason: SkipReason, line: u64, detail: impl Into<String>) {
        let s = &mut self.skipped[reason as usize];
        s.count += 1;
        if s.examples.len() < MAX_SKIP_EXAMPLES {
            s.examples.push((line, detail.into()));
        }
    }

    /// Reads one raw line into `buf` (without the newline), at most [`MAX_LINE`] bytes kept.
    /// Returns `None` at end of file, else (had a newline, was too long).
    fn read_raw(&mut self) -> Result<Option<(bool, bool)>, ReadError> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ReadError::Io {
                        path: self.path.clone(),
                        line: self.line + 1,
                        source,
                    })
                }
            };
            if chunk.is_empty() {
                return Ok(any.then_some((false, too_long)));
            }
            any = true;
            let (take, newline) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.buf.len());
            if take > room {
                too_long = true;
            }
            self.buf.extend_from_slice(&chunk[..take.min(room)]);
            self.inner.consume(take + usize::from(newline));
            if newline {
                return Ok(Some((true, too_long)));
            }
        }
    }

    /// The next event record; `Ok(None)` at end of file.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, ReadError> {
        loop {
            let Some((newline, too_long)) = self.read_raw()? else {
                return Ok(None);
            };
            self.line += 1;
            let line = self.line;
            if too_long {
                self.skip(SkipReason::TooLong, line, format!("> {MAX_LINE} bytes"));
                continue;
            }
            let Ok(s) = std::str::from_utf8(&self.buf) else {
                self.skip(SkipReason::NotUtf8, line, "");
                continue;
            };
            let s = s.trim_end_matches('\r');
            if s.trim().is_empty() {
                continue;
            }
            if let Some(rest) = s.trim_start().strip_prefix("CPU:") {
                if rest.contains("LOST") {
                    let detail = s.trim().to_string();
                    self.skip(SkipReason::LostEvents, line, detail);
                    continue;
                }
            }
            // trace-cmd ends every line with a newline: a last line without one was cut
            // (a value cut short can still parse, so it is never trusted).
            if !newline {
                let detail: String = s.chars().take(80).collect();
                self.skip(SkipReason::Truncated, line, detail);
                continue;
            }
            match parse_line(s) {
                Some((sp, digits)) => {
                    let ts = sp.ts_ns;
                    if let Some(prev) = self.last_ts {
                        if ts < prev {
                            return Err(ReadError::Backwards {
                                path: self.path.clone(),
                                line,
                                ts: fmt_ns(ts),
                                prev: fmt_ns(prev),
                            });
                        }
                    }
                    self.last_ts = Some(ts);
                    self.in_header = false;
                    self.frac_digits.get_or_insert(digits);
                    self.text.clear();
                    self.text.push_str(s);
                    // The spans found in `s` hold in its copy.
                    return Ok(Some(sp.record(&self.text, line)));
                }
                None if self.in_header => {
                    if let Some(n) = s.trim().strip_prefix("cpus=") {
                        self.cpus = n.trim().parse().ok();
                    }
                }
                None => {
                    let detail: String = s.chars().take(80).collect();
                    self.skip(SkipReason::Malformed, line, detail);
                }
            }
        }
    }
}

/// Splits an event line: its [`Spans`] and the fraction digit count of its timestamp, or
/// `None` when the line is not an event line.
fn parse_line(s: &str) -> Option<(Spans, usize)> {
    let sp = spans(s)?;
    let digits = ts_token(&s[sp.after..])?;
    Some((sp, digits))
}

/// The fraction digit count of the timestamp token in `after`, the text after `[CPU]`.
fn ts_token(after: &str) -> Option<usize> {
    let mut toks = after.split_whitespace();
    let t = toks.next()?;
    let t = if t.ends_with(':') { t } else { toks.next()? };
    let frac = t.strip_suffix(':')?.split_once('.')?.1;
    Some(frac.len())
}

/// Finds `[CPU]` after `comm-pid`: returns (byte index of '[', text after ']').
fn cpu_bracket(s: &str) -> Option<(usize, &str)> {
    let mut from = 0;
    while let Some(i) = s[from..].find('[') {
        let open = from + i;
        if let Some(close) = s[open..].find(']') {
            let inner = &s[open + 1..open + close];
            let left = s[..open].trim_end();
            if !inner.is_empty()
                && inner.bytes().all(|b| b.is_ascii_digit())
                && left.rsplit_once('-').is_some_and(|(_, p)| {
                    !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                })
            {
                return Some((open, &s[open + close + 1..]));
            }
        }
        from = open + 1;
    }
    None
}

/// `SECONDS.FRACTION` → ns (1 to 9 fraction digits), at most `i64::MAX` ns (292 years):
/// replays take differences between trace stamps and kernel clocks as i64.
pub fn parse_seconds(t: &str) -> Option<u64> {
    let (sec, frac) = t.split_once('.')?;
    if sec.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !sec.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let s: u64 = sec.parse().ok()?;
    let f: u64 = frac.parse().ok()?;
    let scale = 10u64.pow(9 - frac.len() as u32);
    let ns = s.checked_mul(1_000_000_000)?.checked_add(f * scale)?;
    (ns <= i64::MAX as u64).then_some(ns)
}

/// Splits an event line into a [`Record`], or `None` when it is not one.
#[cfg(test)]
pub(crate) fn split_line(s: &str, line: u64) -> Option<Record<'_>> {
    spans(s).map(|sp| sp.record(s, line))
}

/// Where a line's [`Record`] parts lie in it (byte ranges), so that a line checked once
/// is not split again when it is copied out of the read buffer.
struct Spans {
    comm: Range<usize>,
    pid: i32,
    cpu: u32,
    flags: Option<Range<usize>>,
    ts_ns: u64,
    event: Range<usize>,
    body: Range<usize>,
    /// Where the text after `[CPU]` starts.
    after: usize,
}

impl Spans {
    /// The record these spans give in `s`, the text they were found in (or a copy).
    fn record<'s>(&self, s: &'s str, line: u64) -> Record<'s> {
        Record {
            line,
            comm: &s[self.comm.clone()],
            pid: self.pid,
            cpu: self.cpu,
            flags: self.flags.clone().map(|r| &s[r]),
            ts_ns: self.ts_ns,
            event: &s[self.event.clone()],
            body: &s[self.body.clone()],
        }
    }
}

/// The byte range of `part`, a subslice of `s`, in `s`.
fn span(s: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - s.as_ptr() as usize;
    start..start + part.len()
}

/// The [`Spans`] of an event line, or `None` when it is not one.
fn spans(s: &str) -> Option<Spans> {
    let (open, after) = cpu_bracket(s)?;
    let after_at = span(s, after).start;
    let left = s[..open].trim();
    let (comm, pid) = left.rsplit_once('-')?;
    let pid: i32 = pid.parse().ok()?;
    let close = open + s[open..].find(']')?;
    let cpu: u32 = s[open + 1..close].parse().ok()?;
    let after = after.trim_start();
    let (first, rest) = after.split_once(char::is_whitespace).unwrap_or((after, ""));
    let (flags, ts_tok, rest) =
        if first.ends_with(':') && parse_seconds(&first[..first.len() - 1]).is_some() {
            (None, first, rest)
        } else {
            let rest = rest.trim_start();
            let (t, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            (Some(first), t, r)
        };
    let ts_ns = parse_seconds(ts_tok.strip_suffix(':')?)?;
    let rest = rest.trim_start();
    let (event, body) = match rest.split_once(':') {
        Some((e, b)) => (e, b.trim_start()),
        None => return None,
    };
    if event.is_empty() || event.contains(char::is_whitespace) {
        return None;
    }
    Some(Spans {
        comm: span(s, comm.trim()),
        pid,
        cpu,
        flags: flags.map(|f| span(s, f)),
        ts_ns,
        event: span(s, event),
        body: span(s, body),
        after: after_at,
    })
}

/// Iterator over the `key=value` fields of an event body.
///
/// A field starts at a whitespace-separated token `key=...` whose key is an identifier;
/// its value runs to the next such token, so values with spaces (a comm like
/// `Web Content`) survive. A lone `==>` token (sched_switch) ends a value.
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    rest: &'a str,
    /// `rest` starts with the key token the last value ended at: where its `=` is.
    key_next: Option<usize>,
}

/// The fields of `body` (see [`Fields`]).
pub fn fields(body: &str) -> Fields<'_> {
    Fields {
        rest: body,
        key_next: None,
    }
}

/// Where the `=` of `tok` is if `tok` starts a field: a non-empty key of ASCII letters,
/// digits, `_` or `'`, not starting with a digit, then `=`. One pass that stops at the
/// first byte that rules it out (most tokens of a value are numbers).
fn is_key(tok: &str) -> Option<usize> {
    let b = tok.as_bytes();
    if b.first().is_none_or(|c| c.is_ascii_digit() || *c == b'=') {
        return None;
    }
    for (i, &c) in b.iter().enumerate() {
        if c == b'=' {
            return Some(i);
        }
        if !(c.is_ascii_alphanumeric() || c == b'_' || c == b'\'') {
            return None;
        }
    }
    None
}

/// Whether an ASCII byte is whitespace as `char::is_whitespace` has it (tab, line feed,
/// vertical tab, form feed, carriage return, space).
fn ascii_ws(b: u8) -> bool {
    b == b' ' || (0x09..=0x0d).contains(&b)
}

/// `s.find(char::is_whitespace)`, bytewise over ASCII (every field of a trace line) and
/// by `char` from the first non-ASCII byte on (a comm, a no-break space).
fn find_ws(s: &str) -> Option<usize> {
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if b >= 0x80 {
            // `i` follows only ASCII bytes: a char boundary.
            return s[i..].find(char::is_whitespace).map(|j| i + j);
        }
        if ascii_ws(b) {
            return Some(i);
        }
    }
    None
}

/// `s.trim_start()`, bytewise over ASCII as [`find_ws`].
fn trim_ws_start(s: &str) -> &str {
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if b >= 0x80 {
            return s[i..].trim_start();
        }
        if !ascii_ws(b) {
            return &s[i..];
        }
    }
    ""
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        // Find the next token that starts a field (known when the last value ended at it).
        let mut s = self.rest;
        let start = match self.key_next.take() {
            Some(eq) => (s, eq),
            None => loop {
                let t = trim_ws_start(s);
                if t.is_empty() {
                    self.rest = "";
                    return None;
                }
                let end = find_ws(t).unwrap_or(t.len());
                if let Some(eq) = is_key(&t[..end]) {
                    break (t, eq);
                }
                s = &t[end..];
            },
        };
        let (start, eq) = start;
        let key = &start[..eq];
        let after = &start[eq + 1..];
        // The value ends before the next token that is a field or `==>`.
        let mut pos = 0;
        let mut value_end = 0;
        while pos < after.len() {
            let tok_end = find_ws(&after[pos..]).map_or(after.len(), |i| pos + i);
            let tok = &after[pos..tok_end];
            if pos > 0 {
                if tok == "==>" {
                    break;
                }
                if let Some(eq) = is_key(tok) {
                    self.rest = &after[pos..];
                    self.key_next = Some(eq);
                    return Some((key, after[..value_end].trim_end()));
                }
            }
            value_end = tok_end;
            // Skip the same (Unicode) whitespace `find` stopped at: skipping only ASCII
            // left `pos` at a vertical tab or no-break space forever (found by fuzzing).
            pos = after.len() - trim_ws_start(&after[tok_end..]).len();
        }
        self.rest = &after[value_end..];
        Some((key, after[..value_end].trim_end()))
    }
}

impl fmt::Display for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{} [{:03}] {}: {}: {}",
            self.comm,
            self.pid,
            self.cpu,
            fmt_ns(self.ts_ns),
            self.event,
            self.body
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every join of up to `n` of `pieces` (with repeats), the empty string first.
    fn joins(pieces: &[&str], n: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = all.clone();
        for _ in 0..n {
            last = last
                .iter()
                .flat_map(|w| pieces.iter().map(move |p| format!("{w}{p}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    /// The `=` of a key token by its definition: the first `=`, after a non-empty key of
    /// ASCII letters, digits, `_` or `'` that does not start with a digit.
    fn key_by_definition(tok: &str) -> Option<usize> {
        let eq = tok.find('=')?;
        let key = &tok[..eq];
        let ok = !key.is_empty()
            && !key.as_bytes()[0].is_ascii_digit()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'\'');
        ok.then_some(eq)
    }

    /// [`Fields`] against its definition (each call scans from the end of the last value
    /// for the next key token, by `str`'s own whitespace), on every join of up to four
    /// pieces of keys, values, `==>`, Unicode and ASCII whitespace.
    #[test]
    fn fields_match_their_definition() {
        fn by_definition(mut rest: &str) -> Vec<(&str, &str)> {
            let mut out = Vec::new();
            loop {
                let mut s = rest;
                let (start, eq) = loop {
                    let t = s.trim_start();
                    if t.is_empty() {
                        return out;
                    }
                    let end = t.find(char::is_whitespace).unwrap_or(t.len());
                    if let Some(eq) = key_by_definition(&t[..end]) {
                        break (t, eq);
                    }
                    s = &t[end..];
                };
                let after = &start[eq + 1..];
                let (mut pos, mut value_end) = (0, 0);
                while pos < after.len() {
                    let tok_end = after[pos..]
                        .find(char::is_whitespace)
                        .map_or(after.len(), |i| pos + i);
                    let tok = &after[pos..tok_end];
                    if pos > 0 && (tok == "==>" || key_by_definition(tok).is_some()) {
                        break;
                    }
                    value_end = tok_end;
                    pos = after.len() - after[tok_end..].trim_start().len();
                }
                rest = &after[value_end..];
                out.push((&start[..eq], after[..value_end].trim_end()));
            }
        }
        let pieces = [
            "a=1", "b'=", "==>", "x", " ", "\t", "c=d=e", "\u{a0}", "9=z", "=q",
        ];
        for w in joins(&pieces, 4) {
            assert_eq!(fields(&w).collect::<Vec<_>>(), by_definition(&w), "{w:?}");
        }
    }

    /// The bytewise whitespace helpers against `str`'s own, on strings mixing ASCII
    /// whitespace, vertical tab, no-break space, U+0085 and letters.
    #[test]
    fn whitespace_helpers_match_str() {
        let pieces = [
            "a", " ", "\t", "\u{b}", "\u{c}", "\r", "\u{a0}", "\u{85}", "é", "=",
        ];
        for w in joins(&pieces, 4) {
            assert_eq!(find_ws(&w), w.find(char::is_whitespace), "{w:?}");
            assert_eq!(trim_ws_start(&w), w.trim_start(), "{w:?}");
        }
    }

    /// The one-pass `is_key` against its definition, on every string of up to four
    /// characters over an alphabet of each class.
    #[test]
    fn is_key_matches_its_definition() {
        let pieces = ["a", "Z", "7", "_", "'", "=", "-", " ", "é", "["];
        for w in joins(&pieces, 4) {
            assert_eq!(is_key(&w), key_by_definition(&w), "{w:?}");
        }
    }

    fn read_all(text: &str) -> (Vec<String>, ReportReader<&[u8]>) {
        let mut r = ReportReader::new(text.as_bytes(), "t.txt");
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push(format!("{rec}"));
        }
        (out, r)
    }

    #[test]
    fn plain_and_flags_columns() {
        let text = "cpus=2\n\
           rt-app-153   [001]  3950.176256: sched_switch: rt-app:153 [120] S ==> swapper/1:0 [120]\n\
 kworker/0:1H-kblockd-12 [000] d..2. 3950.176300123: sched_waking: comm=rt-app pid=153 prio=120 target_cpu=001\n";
        let (recs, r) = read_all(text);
        assert_eq!(r.cpus(), Some(2));
        assert_eq!(recs.len(), 2);
        assert_eq!(
            recs[0],
            "rt-app-153 [001] 3950.176256000: sched_switch: rt-app:153 [120] S ==> swapper/1:0 [120]"
        );
        assert!(recs[1].starts_with("kworker/0:1H-kblockd-12 [000] 3950.176300123: sched_waking"));
    }

    #[test]
    fn fields_end_at_unicode_whitespace() {
        // A vertical tab or a no-break space between fields once stopped the scan.
        let f: Vec<_> = fields("a=b\u{b}c=d\u{a0}e=f").collect();
        assert_eq!(f, vec![("a", "b"), ("c", "d"), ("e", "f")]);
    }

    #[test]
    fn fields_keep_spaces_in_values() {
        let f: Vec<_> = fields(
            "prev_comm=Web Content prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=a b next_pid=0",
        )
        .collect();
        assert_eq!(
            f,
            vec![
                ("prev_comm", "Web Content"),
                ("prev_pid", "7"),
                ("prev_prio", "120"),
                ("prev_state", "S"),
                ("next_comm", "a b"),
                ("next_pid", "0")
            ]
        );
    }

    #[test]
    fn backwards_timestamp_is_an_error_with_line() {
        let text = "a-1 [000] 2.000000: x: a=1\na-1 [000] 1.000000: x: a=1\n";
        let mut r = ReportReader::new(text.as_bytes(), "t.txt");
        assert!(r.next_record().unwrap().is_some());
        let e = r.next_record().unwrap_err().to_string();
        assert_eq!(
            e,
            "t.txt:2: timestamp 1.000000000 goes backwards (previous event at 2.000000000)"
        );
    }

    #[test]
    fn truncated_and_malformed_lines_are_counted() {
        let text =
            "a-1 [000] 1.000000: x: a=1\ngarbage here\nCPU:1 [LOST 12 EVENTS]\na-1 [000] 2.0000";
        let (recs, r) = read_all(text);
        assert_eq!(recs.len(), 1);
        let s: Vec<_> = r
            .skipped()
            .filter(|(_, s)| s.count > 0)
            .map(|(k, s)| (k, s.count, s.examples[0].0))
            .collect();
        assert_eq!(
            s,
            vec![
                (SkipReason::Truncated, 1, 4),
                (SkipReason::Malformed, 1, 2),
                (SkipReason::LostEvents, 1, 3)
            ]
        );
    }

    #[test]
    fn overlong_line_is_skipped_not_kept() {
        let mut text = String::from("a-1 [000] 1.000000: x: a=");
        text.push_str(&"9".repeat(MAX_LINE * 2));
        text.push_str("\na-1 [000] 2.000000: x: a=1\n");
        let (recs, r) = read_all(&text);
        assert_eq!(recs.len(), 1);
        assert_eq!(r.skipped().next().map(|(_, s)| s.count), Some(0));
        assert_eq!(
            r.skipped()
                .find(|(k, _)| *k == SkipReason::TooLong)
                .map(|(_, s)| s.count),
            Some(1)
        );
    }

    #[test]
    fn seconds_parse_to_ns() {
        assert_eq!(parse_seconds("12.5"), Some(12_500_000_000));
        assert_eq!(parse_seconds("0.000001"), Some(1_000));
        assert_eq!(parse_seconds("1.123456789"), Some(1_123_456_789));
        assert_eq!(parse_seconds("1.1234567890"), None);
        assert_eq!(parse_seconds("99999999999999999999.1"), None);
    }
}
