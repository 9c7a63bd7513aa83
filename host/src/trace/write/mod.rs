// SPDX-License-Identifier: GPL-2.0-only
//! Trace writers: a recorded run ([`Trace`]) to a file whose extension picks the format.
//!
//! * `.txt`: what `trace-cmd report` prints ([`txt`]);
//! * `.dat`: a trace-cmd data file, version 6 ([`dat`]);
//! * `.pftrace`: a Perfetto protobuf trace ([`pftrace`]);
//! * `.csv`: one row per event ([`csv`]).
//!
//! A file is written to a temporary name in its directory and renamed when complete, so
//! a failed write leaves nothing behind.

pub mod csv;
pub mod dat;
pub mod pftrace;
pub mod txt;

use std::io::Write;
use std::path::{Path, PathBuf};

use super::record::Trace;

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `trace-cmd report` text.
    Txt,
    /// trace-cmd data file.
    Dat,
    /// Perfetto protobuf.
    Pftrace,
    /// CSV.
    Csv,
}

/// Why a trace cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The extension names no format.
    #[error("{path}: unknown trace format `{ext}` (use .txt, .dat, .pftrace or .csv)")]
    UnknownFormat {
        /// The path given.
        path: String,
        /// Its extension.
        ext: String,
    },
    /// The file system refused.
    #[error("{path}: cannot write the trace: {err}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        err: std::io::Error,
    },
}

impl Format {
    /// The format of `path` by its extension.
    pub fn of(path: &Path) -> Result<Format, WriteError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        Ok(match ext {
            "txt" => Format::Txt,
            "dat" => Format::Dat,
            "pftrace" => Format::Pftrace,
            "csv" => Format::Csv,
            _ => {
                return Err(WriteError::UnknownFormat {
                    path: path.display().to_string(),
                    ext: if ext.is_empty() {
                        "(none)".into()
                    } else {
                        format!(".{ext}")
                    },
                })
            }
        })
    }
}

/// `FILE` with `tag` before its extension: `run.txt` + `base` → `run.base.txt`.
pub fn tagged(path: &Path, tag: &str) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = match (stem, path.extension()) {
        (Some(s), Some(e)) => format!("{s}.{tag}.{}", e.to_string_lossy()),
        (Some(s), None) => format!("{s}.{tag}"),
        (None, _) => tag.to_string(),
    };
    path.with_file_name(name)
}

/// Writes `trace` in `format` to `out`.
pub fn write_to(trace: &Trace, format: Format, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Txt => txt::write(trace, out),
        Format::Dat => dat::write(trace, out),
        Format::Pftrace => pftrace::write(trace, out),
        Format::Csv => csv::write(trace, out),
    }
}

/// The temporary name next to `path`: `.NAME.PID.tmp`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Writes `trace` to `path` in the format of its extension, through a temporary file in
/// the same directory renamed on success (removed on failure).
pub fn write_file(trace: &Trace, path: &Path) -> Result<(), WriteError> {
    let format = Format::of(path)?;
    let io = |err| WriteError::Io {
        path: path.display().to_string(),
        err,
    };
    let tmp = temp_path(path);
    let result = (|| {
        let f = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        write_to(trace, format, &mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Checks that `path` has a known extension and that its directory takes a file (the
/// CLI asks before simulating, so a bad `--trace` fails at once, leaving nothing).
pub fn check_path(path: &Path) -> Result<(), WriteError> {
    Format::of(path)?;
    let tmp = temp_path(path);
    std::fs::File::create(&tmp)
        .and_then(|_| std::fs::remove_file(&tmp))
        .map_err(|err| WriteError::Io {
            path: path.display().to_string(),
            err,
        })
}
