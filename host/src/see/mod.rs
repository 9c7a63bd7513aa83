// SPDX-License-Identifier: GPL-2.0-only
//! Seeing a run: its recorded events ([`crate::trace::record`]) as time series
//! ([`signals`]), SVG plots ([`plot`]), the arithmetic behind the decisions at an instant
//! ([`explain`]) and a self-contained HTML report ([`report`]). Everything here reads the
//! recording; nothing recomputes a value the simulator computed.

pub mod explain;
pub mod plot;
pub mod report;
pub mod signals;

use std::path::{Path, PathBuf};

/// Why an output file cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutError {
    /// The extension is not the one the option writes.
    #[error("{path}: {option} writes {want} files (the name must end in {want})")]
    Extension {
        /// The path given.
        path: String,
        /// The option.
        option: &'static str,
        /// The extension expected.
        want: &'static str,
    },
    /// The file system refused.
    #[error("{path}: cannot write {option}: {err}")]
    Io {
        /// The path.
        path: String,
        /// The option.
        option: &'static str,
        /// The error.
        err: std::io::Error,
    },
}

/// An output of one option (`--plot`, `--report`): its path and the extension it needs.
#[derive(Clone, Debug)]
pub struct Out {
    /// Where.
    pub path: PathBuf,
    /// The option writing it.
    pub option: &'static str,
}

fn temp_of(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

impl Out {
    /// `path` for `option`, checked: the extension is `want` (`.svg`, `.html`) and its
    /// directory takes a file (checked before any simulation, leaving nothing behind).
    pub fn new(path: &Path, option: &'static str, want: &'static str) -> Result<Out, OutError> {
        let ok = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| format!(".{e}") == want);
        if !ok {
            return Err(OutError::Extension {
                path: path.display().to_string(),
                option,
                want,
            });
        }
        let out = Out {
            path: path.to_path_buf(),
            option,
        };
        let tmp = temp_of(path);
        std::fs::File::create(&tmp)
            .and_then(|_| std::fs::remove_file(&tmp))
            .map_err(|e| out.io(e))?;
        Ok(out)
    }

    fn io(&self, err: std::io::Error) -> OutError {
        OutError::Io {
            path: self.path.display().to_string(),
            option: self.option,
            err,
        }
    }

    /// Writes `bytes` through a temporary file in the same directory, renamed when
    /// complete (removed on failure).
    pub fn write(&self, bytes: &[u8]) -> Result<(), OutError> {
        let tmp = temp_of(&self.path);
        let r = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &self.path));
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        r.map_err(|e| self.io(e))
    }
}
