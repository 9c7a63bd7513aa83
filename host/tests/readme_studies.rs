// SPDX-License-Identifier: GPL-2.0-only
//! README.md's "Studies" tables are what `schedmath study NAME` prints: every
//! ```` ```text ```` block starting with `$ schedmath study NAME` must equal the table,
//! and every study file in fixtures/scenarios/ must have one.

use std::path::{Path, PathBuf};

use schedmath_host::study;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (name, the block's text after the command line).
fn readme_blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut rest = readme.as_str();
    while let Some(i) = rest.find("```text\n$ schedmath study ") {
        let block = &rest[i + "```text\n$ schedmath study ".len()..];
        let (name, body) = block.split_once('\n').unwrap();
        let end = body.find("```").unwrap();
        out.push((name.trim().to_string(), body[..end].to_string()));
        rest = &body[end..];
    }
    out
}

#[test]
fn readme_study_tables_match_the_command() {
    let blocks = readme_blocks();
    let scenarios = root().join("fixtures/scenarios");
    let mut studies: Vec<String> = std::fs::read_dir(&scenarios)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .any(|l| l.starts_with("study = "))
        })
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    studies.sort();
    let mut named: Vec<String> = blocks.iter().map(|(n, _)| n.clone()).collect();
    named.sort();
    assert_eq!(named, studies, "README study tables vs study files");
    for (name, body) in &blocks {
        let r = study::run(&study::resolve(name, &scenarios)).unwrap();
        assert_eq!(
            body,
            &r.render(),
            "README table of `{name}` is stale: rerun `schedmath study {name}`"
        );
    }
}
