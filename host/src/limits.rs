// SPDX-License-Identifier: GPL-2.0-only
//! The host's input limits, in one place: every command reads files and numbers through
//! these, so a platform, workload, pattern or study past one is refused the same way by
//! `platform show`, `simulate`, `idle`, `study` and the rest, with a message naming the
//! limit, the file and the field.
//!
//! The limits cover real hardware and real workloads with a wide margin (the kernel's own
//! where it has one: `NR_CPUS`, `CPUIDLE_STATE_MAX`, `CPUFREQ_TABLE_MAX`); they exist so
//! that a typo (`1000000000` for `1000`) ends in a clear error instead of an hour of
//! simulation or a 40 TB allocation.

use std::fmt::Display;
use std::io::Read;
use std::path::Path;

pub use schedmath::capacity::topology::NR_CPUS;
pub use schedmath::cpufreq::CPUFREQ_TABLE_MAX;
pub use schedmath::cpuidle::CPUIDLE_STATE_MAX;
pub use schedmath::math::SCHED_CAPACITY_SCALE;

/// Most instances one task object may ask for, and most threads of a whole workload
/// (a study sweep value included): far above any rt-app use case, low enough that a typo
/// (`"instance": 2000000000`) is an error, not an allocation failure.
pub const MAX_INSTANCES: u32 = 65_536;

/// Largest file read whole (workload, platform, study, idle-pattern CSV, capture
/// metadata): 16 MiB. Real ones are kilobytes; the largest shipped is 7 KB. Traces and
/// governor CSVs are streamed and have no size limit.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Largest kernel fixture suite (`.jsonl`): 64 MiB (the largest shipped is 2.7 MB).
pub const MAX_SUITE_BYTES: u64 = 64 << 20;

/// Longest line of a streamed CSV (governor utilization trace).
pub const MAX_CSV_LINE: usize = 64 * 1024;

/// Tick rates the simulator accepts: the kernel's `CONFIG_HZ` is 100..=1000 on every
/// architecture (alpha's 1024 and 1200 included up to 10 000).
pub const HZ_RANGE: std::ops::RangeInclusive<u32> = 1..=10_000;

/// Longest simulation (`--duration`, `duration_s`, a workload's `duration`): one hour of
/// simulated time.
pub const MAX_SIM_SECONDS: u64 = 3_600;

/// Idle periods `schedmath idle` replays (`--count`, `*N` phases, CSV rows): one million.
pub const MAX_IDLE_PERIODS: u64 = 1_000_000;

/// Longest idle period (a timer period or a CSV row's `sleep_length_ns`): one hour, so
/// the per-state totals of [`MAX_IDLE_PERIODS`] periods never overflow 64 bits.
pub const MAX_IDLE_PERIOD_NS: u64 = 3_600 * 1_000_000_000;

/// Idle-loop cycles of one `schedmath idle` replay (a polling state woken every few
/// nanoseconds over hours of idle would otherwise run for days).
pub const MAX_IDLE_CYCLES: u64 = 50_000_000;

/// Largest `tick_resched_latency_ns` a platform file may state: 1 ms, the tick period at
/// HZ 1000 (the simulator also refuses a latency not below the run's own tick).
pub const MAX_TICK_RESCHED_LATENCY_NS: u64 = 1_000_000;

/// The message of a value past a named limit.
pub fn beyond(what: impl Display, limit: &str, max: impl Display) -> String {
    format!("{what} is beyond the limit {limit} = {max}")
}

/// The message of a tick rate outside [`HZ_RANGE`].
pub fn hz_message(hz: u32) -> String {
    format!(
        "HZ {hz} is outside {}..={} (HZ_RANGE: the kernel's CONFIG_HZ choices)",
        HZ_RANGE.start(),
        HZ_RANGE.end()
    )
}

/// A tick rate in [`HZ_RANGE`] and a simulated duration within [`MAX_SIM_SECONDS`].
pub fn check_sim(hz: u32, duration_ns: u64) -> Result<(), String> {
    if !HZ_RANGE.contains(&hz) {
        return Err(hz_message(hz));
    }
    if duration_ns > MAX_SIM_SECONDS * 1_000_000_000 {
        return Err(beyond(
            format!("simulated duration {}", fmt_seconds(duration_ns)),
            "MAX_SIM_SECONDS",
            format!("{MAX_SIM_SECONDS} s"),
        ));
    }
    Ok(())
}

/// `ns` as seconds for messages (`12 s`, `1.5 s`).
pub fn fmt_seconds(ns: u64) -> String {
    let (s, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac == 0 {
        format!("{s} s")
    } else {
        let f = format!("{frac:09}");
        format!("{s}.{} s", f.trim_end_matches('0'))
    }
}

/// The message of a name holding a control character (ESC, NUL, newline, ...): names
/// are printed in reports and on terminals, so they are refused where they are read.
pub fn control_char_message(what: &str, c: char) -> String {
    format!(
        "{what} contains the control character {}: names are printed in reports, so control characters are refused",
        c.escape_unicode()
    )
}

/// The message of a count of idle states a CPU cannot have: shared by platform files and
/// `idle --states`, so both say the same.
pub fn idle_state_count(n: usize) -> String {
    format!("{n} idle states: a CPU has 1..={CPUIDLE_STATE_MAX} (the kernel's CPUIDLE_STATE_MAX)")
}

/// Why a file cannot be read as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Opening or reading failed (the OS error, once).
    #[error("{path}: cannot read: {msg}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        msg: String,
    },
    /// A directory, device or socket.
    #[error("{path}: not a regular file ({kind})")]
    NotAFile {
        /// The file.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Larger than the limit.
    #[error("{path}: larger than {max} bytes ({limit}); refused")]
    TooLarge {
        /// The file.
        path: String,
        /// The limit's name.
        limit: &'static str,
        /// Its value.
        max: u64,
    },
    /// Not UTF-8.
    #[error("{path}:{line}:{column}: invalid UTF-8 at byte {offset}")]
    NotUtf8 {
        /// The file.
        path: String,
        /// 1-based line of the first bad byte.
        line: usize,
        /// 1-based column (in characters) of the first bad byte.
        column: usize,
        /// Its byte offset.
        offset: usize,
    },
}

impl InputError {
    /// The file the error is about.
    pub fn path(&self) -> &str {
        match self {
            InputError::Io { path, .. }
            | InputError::NotAFile { path, .. }
            | InputError::TooLarge { path, .. }
            | InputError::NotUtf8 { path, .. } => path,
        }
    }

    /// The message without the file name (for errors that add the file themselves).
    pub fn detail(&self) -> String {
        let full = self.to_string();
        full.strip_prefix(self.path())
            .map(|r| r.trim_start_matches(':').trim_start().to_string())
            .unwrap_or(full)
    }
}

/// What a non-regular file is, for the message (`None`: a regular file or a FIFO, which
/// is read up to the limit).
fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    None
}

/// Opens `path` for streaming (a trace, a governor CSV): directories and devices are
/// refused, so `/dev/urandom` is an error and not an endless read.
pub fn open_regular(path: &Path) -> Result<std::fs::File, InputError> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| InputError::Io {
        path: name.clone(),
        msg: e.to_string(),
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if let Some(kind) = special_kind(&meta) {
        return Err(InputError::NotAFile { path: name, kind });
    }
    Ok(f)
}

/// Reads `path` as UTF-8 text of at most [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> Result<String, InputError> {
    read_text_limited(path, MAX_INPUT_BYTES, "MAX_INPUT_BYTES")
}

/// Reads `path` as UTF-8 text of at most `max` bytes (the limit named `limit`):
/// directories and devices are refused before reading, a FIFO is read up to the limit,
/// and invalid UTF-8 is an error naming its line, column and byte offset.
pub fn read_text_limited(path: &Path, max: u64, limit: &'static str) -> Result<String, InputError> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| InputError::Io {
        path: name.clone(),
        msg: e.to_string(),
    };
    let f = open_regular(path)?;
    let meta = f.metadata().map_err(io)?;
    let too_large = || InputError::TooLarge {
        path: name.clone(),
        limit,
        max,
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    f.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    text_from_bytes(&name, bytes)
}

/// `bytes` as a `String`, or where the first invalid UTF-8 byte is.
pub fn text_from_bytes(path: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let good = e.as_bytes().get(..offset).unwrap_or_default();
        // The prefix is valid UTF-8 by construction.
        let before = std::str::from_utf8(good).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        InputError::NotUtf8 {
            path: path.to_string(),
            line,
            column,
            offset,
        }
    })
}

/// `name` with control characters (ESC, NUL, newlines, DEL, C1) escaped as `\u{..}`: what
/// the reports print for any name that came from a file, so a task name cannot move the
/// cursor, clear the terminal or forge a report line.
pub fn printable(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(name);
    }
    std::borrow::Cow::Owned(
        name.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_names_line_column_and_offset() {
        let e = text_from_bytes("f", b"ab\ncd\xffe".to_vec()).unwrap_err();
        assert_eq!(e.to_string(), "f:2:3: invalid UTF-8 at byte 5");
        assert_eq!(e.detail(), "2:3: invalid UTF-8 at byte 5");
    }

    #[test]
    fn files_past_the_limit_and_non_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.toml");
        std::fs::write(&p, "x".repeat(11)).unwrap();
        let e = read_text_limited(&p, 10, "TEST_LIMIT").unwrap_err();
        assert!(
            e.to_string()
                .ends_with("larger than 10 bytes (TEST_LIMIT); refused"),
            "{e}"
        );
        assert_eq!(read_text_limited(&p, 11, "TEST_LIMIT").unwrap().len(), 11);
        let e = read_text(dir.path()).unwrap_err();
        assert!(
            e.to_string().ends_with("not a regular file (a directory)"),
            "{e}"
        );
        #[cfg(unix)]
        {
            let e = read_text(Path::new("/dev/zero")).unwrap_err();
            assert_eq!(e.to_string(), "/dev/zero: not a regular file (a device)");
        }
        let e = read_text(&dir.path().join("missing")).unwrap_err();
        assert_eq!(e.to_string().matches("No such file").count(), 1, "{e}");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("busy-0"), "busy-0");
        assert_eq!(printable("a\u{1b}[2Jb\n\0"), "a\\u{1b}[2Jb\\u{a}\\u{0}");
    }
}
