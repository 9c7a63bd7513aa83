// SPDX-License-Identifier: GPL-2.0-only
//! Every public function of the core is exercised by a fixture driver or a unit test.
//!
//! The core mirrors kernel functions one for one; a function no fixture suite drives and
//! no unit test calls is arithmetic nobody checked. This test reads the sources: a `pub fn`
//! outside `#[cfg(test)]` counts as covered when its name is called (`name(`) in a core
//! test module, a typed fixture driver (`xtask/conformance`), a host fixture runner
//! (`host/src/fixtures/runners`) or an integration/snapshot test (`tests/`, `host/tests/`),
//! or in the body of a core function that is itself covered (fixpoint).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (code outside the first `#[cfg(test)]`, the test part).
fn split_tests(text: &str) -> (&str, &str) {
    match text.find("#[cfg(test)]") {
        Some(at) => text.split_at(at),
        None => (text, ""),
    }
}

/// A function declared on this line: (name, is it `pub`).
fn declared(line: &str) -> Option<(String, bool)> {
    let l = line.trim_start();
    let (rest, public) = if let Some(r) = l
        .strip_prefix("pub fn ")
        .or_else(|| l.strip_prefix("pub const fn "))
    {
        (r, true)
    } else if let Some(r) = l
        .strip_prefix("fn ")
        .or_else(|| l.strip_prefix("const fn "))
        .or_else(|| l.strip_prefix("pub(crate) fn "))
        .or_else(|| l.strip_prefix("pub(super) fn "))
    {
        (r, false)
    } else {
        return None;
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some((name, public))
}

/// Every function of `code` with its text up to the next function: (name, pub, body).
fn functions(code: &str) -> Vec<(String, bool, String)> {
    let mut fns: Vec<(String, bool, String)> = Vec::new();
    for line in code.lines() {
        if let Some((name, public)) = declared(line) {
            fns.push((name, public, String::new()));
        } else if let Some(last) = fns.last_mut() {
            last.2.push_str(line);
            last.2.push('\n');
        }
    }
    fns
}

fn called(name: &str, text: &str) -> bool {
    // `name(` or `name::<` as a whole identifier.
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = &text[at + name.len()..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && (after.starts_with('(') || after.starts_with("::<"))
    })
}

#[test]
fn every_core_function_has_a_fixture_driver_or_a_unit_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut core_files = Vec::new();
    rust_files(&root.join("core/src"), &mut core_files);
    let mut exercised = String::new();
    let mut fns = Vec::new();
    for f in &core_files {
        let text = std::fs::read_to_string(f).unwrap();
        let (code, tests) = split_tests(&text);
        exercised.push_str(tests);
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        fns.extend(
            functions(code)
                .into_iter()
                .map(|(n, p, body)| (rel.clone(), n, p, body)),
        );
    }
    for dir in [
        "xtask/conformance/src",
        "host/src/fixtures/runners",
        "tests",
        "host/tests",
    ] {
        let mut files = Vec::new();
        if root.join(dir).exists() {
            rust_files(&root.join(dir), &mut files);
        }
        for f in files {
            exercised.push_str(&std::fs::read_to_string(f).unwrap());
        }
    }
    let public = fns.iter().filter(|f| f.2).count();
    assert!(public > 20, "found only {public} public core functions");
    // Fixpoint: the body of a covered function exercises what it calls.
    let mut covered: Vec<bool> = fns.iter().map(|f| called(&f.1, &exercised)).collect();
    loop {
        let mut grew = false;
        for i in 0..fns.len() {
            if !covered[i]
                && fns
                    .iter()
                    .zip(&covered)
                    .any(|(g, &c)| c && called(&fns[i].1, &g.3))
            {
                covered[i] = true;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let missing: Vec<String> = fns
        .iter()
        .zip(&covered)
        .filter(|(f, &c)| f.2 && !c)
        .map(|(f, _)| format!("{}: {}", f.0, f.1))
        .collect();
    assert!(
        missing.is_empty(),
        "core functions with neither a fixture driver nor a unit test:\n{}",
        missing.join("\n")
    );
}
