// SPDX-License-Identifier: GPL-2.0-only
//! Text in and out, with no scheduler knowledge: the one CSV row reader of the replays'
//! input files and the one fixed-width table writer of every report a person reads.
//!
//! The table writer pads exactly as `format!("{:<w$}")` / `format!("{:>w$}")` do (by
//! `char` count), so a report built with it is byte for byte what the snapshots hold.

use std::fmt::{Display, Write as _};

/// One data row of a CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow<'a> {
    /// 1-based line in the file.
    pub line: usize,
    /// The comma-separated fields, trimmed.
    pub fields: Vec<&'a str>,
}

/// The rows of CSV text: blank lines and lines starting with `#` are skipped; every other
/// line is split at commas (no quoting: the replays' columns are numbers and flags) and
/// its fields trimmed. The caller decides what a header is and what each field means.
pub fn csv_rows(text: &str) -> impl Iterator<Item = CsvRow<'_>> {
    text.lines().enumerate().filter_map(|(i, raw)| {
        let l = raw.trim();
        (!l.is_empty() && !l.starts_with('#')).then(|| CsvRow {
            line: i + 1,
            fields: l.split(',').map(str::trim).collect(),
        })
    })
}

/// One CSV field as written: quoted (with `"` doubled) when it holds a comma, a quote
/// or a line break (RFC 4180), else as is.
pub fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        std::borrow::Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Column {
    /// Text before the column (none before the first).
    sep: String,
    width: usize,
    align: Align,
}

/// A fixed-width table layout: columns with a width, an alignment and the separator
/// written before each. Cells wider than their column are written whole (as `format!`
/// does), so nothing is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    cols: Vec<Column>,
    /// Separator of the next column added.
    sep: String,
    /// Separator used after a one-off [`Table::then`].
    default_sep: String,
}

impl Table {
    /// An empty layout whose columns are separated by `sep`.
    pub fn new(sep: &str) -> Self {
        Self {
            cols: Vec::new(),
            sep: String::new(),
            default_sep: sep.to_string(),
        }
    }

    fn push(mut self, width: usize, align: Align) -> Self {
        let sep = std::mem::replace(&mut self.sep, self.default_sep.clone());
        self.cols.push(Column { sep, width, align });
        self
    }

    /// A left-aligned column `width` characters wide (0: as wide as its text).
    pub fn left(self, width: usize) -> Self {
        self.push(width, Align::Left)
    }

    /// A right-aligned column `width` characters wide.
    pub fn right(self, width: usize) -> Self {
        self.push(width, Align::Right)
    }

    /// `n` right-aligned columns of `width`.
    pub fn rights(mut self, n: usize, width: usize) -> Self {
        for _ in 0..n {
            self = self.right(width);
        }
        self
    }

    /// The next column is preceded by `sep` instead of the table's separator.
    pub fn then(mut self, sep: &str) -> Self {
        self.sep = sep.to_string();
        self
    }

    /// One line (without its newline): each cell padded to its column. Cells past the
    /// last column are left out; a row with fewer cells ends after its last one.
    pub fn row<T: Display>(&self, cells: &[T]) -> String {
        let mut out = String::new();
        for (c, v) in self.cols.iter().zip(cells) {
            out.push_str(&c.sep);
            let w = c.width;
            let _ = match c.align {
                Align::Left => write!(out, "{v:<w$}"),
                Align::Right => write!(out, "{v:>w$}"),
            };
        }
        out
    }

    /// [`Table::row`] with a newline, appended to `out`.
    pub fn line<T: Display>(&self, out: &mut String, cells: &[T]) {
        out.push_str(&self.row(cells));
        out.push('\n');
    }
}

/// Compresses a sorted CPU list: `[0, 1, 2, 3, 5]` → `0-3,5`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while let Some(&start) = cpus.get(i) {
        let mut end = start;
        while cpus.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if end == start {
            let _ = write!(out, "{start}");
        } else {
            let _ = write!(out, "{start}-{end}");
        }
        i += 1;
    }
    out
}

/// A progress bar of `len` `unit`s labelled `msg`, drawn only when stderr is a terminal
/// (hidden when piped, so captured output never changes).
pub fn progress_bar(len: u64, unit: &str, msg: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{{msg}} [{{bar:40}}] {{pos}}/{{len}} {unit} ({{elapsed}}, eta {{eta}})"
    )) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(msg.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_skip_blank_and_comment_lines_and_keep_line_numbers() {
        let rows: Vec<CsvRow> = csv_rows("# c\n\n a , 1 \n2,3,\n").collect();
        assert_eq!(
            rows,
            vec![
                CsvRow {
                    line: 3,
                    fields: vec!["a", "1"]
                },
                CsvRow {
                    line: 4,
                    fields: vec!["2", "3", ""]
                },
            ]
        );
    }

    #[test]
    fn a_table_pads_as_format_does() {
        let t = Table::new(" ")
            .left(6)
            .right(4)
            .then(" | ")
            .right(3)
            .left(0);
        assert_eq!(
            t.row(&["ab", "1", "x", "end"]),
            format!("{:<6} {:>4} | {:>3} {}", "ab", "1", "x", "end")
        );
        // Too wide: written whole; a short row ends early.
        assert_eq!(t.row(&["toolongcell", "1"]), "toolongcell    1");
        let mut s = String::new();
        Table::new("  ").rights(2, 3).line(&mut s, &[1, 22]);
        assert_eq!(s, "  1   22\n");
    }

    #[test]
    fn cpu_list_compresses_runs() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(cpu_list(&[4]), "4");
        assert_eq!(cpu_list(&[]), "");
    }
}
