// SPDX-License-Identifier: GPL-2.0-only
//! Reading Rust sources for the structure tests (coverage, layering): comments and
//! literals blanked, tokens, matching brackets, `use` trees. A scanner, not a parser: it
//! knows the shapes this workspace writes and is tested on the cases that fool a plain
//! text search.
#![allow(dead_code)] // each test binary uses part of it

use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// Lexing: blank comments and literals, keep byte offsets and newlines.

/// `src` with comments, string literals and char literals replaced by spaces (newlines
/// kept), so the scanner sees only code.
pub fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (c == b'r' || (c == b'b' && b.get(i + 1) == Some(&b'r')))
            && (i == 0 || !ident(b[i - 1]))
            && {
                let s = if c == b'b' { i + 2 } else { i + 1 };
                let hashes = b[s..].iter().take_while(|&&c| c == b'#').count();
                b.get(s + hashes) == Some(&b'"')
            }
        {
            // Raw string: r"..." / r#"..."# / br"...".
            let s = if c == b'b' { i + 2 } else { i + 1 };
            let hashes = b[s..].iter().take_while(|&&c| c == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = s + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 3; // past the escaped char (`'\''`)
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                blank(&mut out, i, (j + 1).min(b.len()));
                i = j + 1;
            } else if let Some(len) = src[i + 1..].chars().next().map(char::len_utf8) {
                if b.get(i + 1 + len) == Some(&b'\'') {
                    blank(&mut out, i, i + 2 + len);
                    i += 2 + len;
                } else {
                    i += 1;
                }
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces; multi-byte chars inside blanked
    // spans became spaces byte by byte, so the result is valid UTF-8.
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// Tokens: identifiers/numbers and single punctuation bytes, with their offsets.
pub fn tokens(code: &str) -> Vec<(usize, &str)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            out.push((s, &code[s..i]));
        } else {
            out.push((i, &code[i..i + 1]));
            i += 1;
        }
    }
    out
}

/// Index of the token closing the bracket opened at `open`.
pub fn matching(toks: &[(usize, &str)], open: usize) -> usize {
    let (o, c) = match toks[open].1 {
        "{" => ("{", "}"),
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        _ => return open,
    };
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.1 == o {
            depth += 1;
        } else if t.1 == c {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    toks.len() - 1
}

// ---------------------------------------------------------------------------------------
// `use` declarations.

/// The paths a `use` tree brings in: (path segments, local name; `*` for a glob).
pub fn use_tree(
    toks: &[(usize, &str)],
    mut k: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(k).map(|t| t.1) {
            Some("{") => {
                k += 1;
                loop {
                    k = use_tree(toks, k, &path, out);
                    match toks.get(k).map(|t| t.1) {
                        Some(",") => k += 1,
                        _ => break,
                    }
                    if toks.get(k).map(|t| t.1) == Some("}") {
                        break;
                    }
                }
                return k + 1; // past `}`
            }
            Some("*") => {
                out.push((path, "*".into()));
                return k + 1;
            }
            Some(":") => k += 1,
            Some(id) if id.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                if id == "self" && !path.is_empty() && toks.get(k + 1).map(|t| t.1) != Some(":") {
                    let name = path.last().cloned().unwrap_or_default();
                    let (alias, next) = alias(toks, k + 1, name);
                    out.push((path, alias));
                    return next;
                }
                path.push(id.to_string());
                if toks.get(k + 1).map(|t| t.1) != Some(":") {
                    let (alias, next) = alias(toks, k + 1, id.to_string());
                    out.push((path, alias));
                    return next;
                }
                k += 1;
            }
            _ => return k,
        }
    }
}

fn alias(toks: &[(usize, &str)], k: usize, name: String) -> (String, usize) {
    if toks.get(k).map(|t| t.1) == Some("as") {
        (toks.get(k + 1).map_or(name, |t| t.1.to_string()), k + 2)
    } else {
        (name, k)
    }
}

/// Every `use` declaration in `toks[from..to]`, `pub use` marked.
pub fn uses(toks: &[(usize, &str)], from: usize, to: usize) -> Vec<(Vec<String>, String, bool)> {
    let mut out = Vec::new();
    for k in from..to {
        if toks[k].1 == "use"
            && (k == 0 || matches!(toks[k - 1].1, ";" | "{" | "}" | "]" | "pub" | ")"))
        {
            let public = k > 0 && (toks[k - 1].1 == "pub");
            let mut found = Vec::new();
            use_tree(toks, k + 1, &[], &mut found);
            out.extend(found.into_iter().map(|(p, n)| (p, n, public)));
        }
    }
    out
}

/// Every `.rs` file below `dir`, sorted.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module path of a file below a crate's `src` (`sim/engine/tick.rs` → `sim::engine::tick`,
/// `mod.rs` and `lib.rs` name their directory).
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        segs.push(stem.to_string());
    }
    segs
}
