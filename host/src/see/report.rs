// SPDX-License-Identifier: GPL-2.0-only
//! A self-contained HTML report: the run's inputs (command line, platform and workload
//! files, profiles, seed), its tables and its plots inline as SVG. No script, no
//! stylesheet or font from elsewhere: the file opens offline as it is.

/// One section of a report.
pub enum Section {
    /// A heading and preformatted text (a table as the CLI prints it, an input file).
    Text(String, String),
    /// A heading and an inline SVG plot.
    Svg(String, String),
}

/// Escapes `s` for HTML text.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(ch),
        }
    }
    o
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;max-width:1450px}\
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:13px}\
h2{border-bottom:1px solid #ccc;margin-top:1.6em}\
dt{font-weight:bold}details{margin:.4em 0}";

/// The report: `title`, the `inputs` (name, value) listed first, then `sections`.
pub fn html(title: &str, inputs: &[(&str, String)], sections: &[Section]) -> String {
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    o.push_str(&format!(
        "<title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    ));
    o.push_str(&format!(
        "<h1>{}</h1>\n<h2>Inputs</h2>\n<dl>\n",
        escape(title)
    ));
    for (k, v) in inputs {
        if v.contains('\n') {
            o.push_str(&format!(
                "<dt>{}</dt><dd><details><summary>show</summary><pre>{}</pre></details></dd>\n",
                escape(k),
                escape(v)
            ));
        } else {
            o.push_str(&format!(
                "<dt>{}</dt><dd><code>{}</code></dd>\n",
                escape(k),
                escape(v)
            ));
        }
    }
    o.push_str("</dl>\n");
    for s in sections {
        match s {
            Section::Text(h, t) => {
                o.push_str(&format!(
                    "<h2>{}</h2>\n<pre>{}</pre>\n",
                    escape(h),
                    escape(t)
                ));
            }
            Section::Svg(h, svg) => {
                let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
                o.push_str(&format!("<h2>{}</h2>\n<div>{body}</div>\n", escape(h)));
            }
        }
    }
    o.push_str("</body></html>\n");
    o
}
