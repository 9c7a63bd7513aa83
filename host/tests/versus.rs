// SPDX-License-Identifier: GPL-2.0-only
//! README.md's "Simulator vs kernel" tables are what `schedmath versus CAPTURE` prints:
//! every ```` ```text ```` block starting with `$ schedmath versus DIR` must equal the
//! command's output, and every committed lab capture must have one.

use std::path::{Path, PathBuf};

use schedmath_host::versus;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (capture dir, the block's text after the command line).
fn readme_blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut rest = readme.as_str();
    let start = "```text\n$ schedmath versus ";
    while let Some(i) = rest.find(start) {
        let block = &rest[i + start.len()..];
        let (dir, body) = block.split_once('\n').unwrap();
        let end = body.find("```").unwrap();
        out.push((dir.trim().to_string(), body[..end].to_string()));
        rest = &body[end..];
    }
    out
}

#[test]
fn readme_versus_tables_match_the_command() {
    let blocks = readme_blocks();
    let lab = root().join("fixtures/lab");
    let mut captures = Vec::new();
    for k in std::fs::read_dir(&lab).unwrap().map(|e| e.unwrap().path()) {
        if k.is_dir() && !k.ends_with("workloads") {
            for c in std::fs::read_dir(&k).unwrap().map(|e| e.unwrap().path()) {
                let rel = c
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                captures.push(rel);
            }
        }
    }
    captures.sort();
    let mut named: Vec<String> = blocks.iter().map(|(d, _)| d.clone()).collect();
    named.sort();
    assert_eq!(
        named, captures,
        "README versus tables vs committed captures"
    );
    for (dir, body) in &blocks {
        let (cap, k, m) = versus::run(&root().join(dir), None).unwrap();
        assert_eq!(
            body,
            &versus::render(&cap, &k, &m),
            "README table of `{dir}` is stale: rerun `schedmath versus {dir}`"
        );
    }
}
