// SPDX-License-Identifier: GPL-2.0-only
//! README.md's generated parts are current: every ```` ```text ```` block starting with
//! `$ schedmath study NAME` equals what the command prints, every study file in
//! fixtures/scenarios/ has one, and the profile list is the core's table
//! (`cargo xtask bless` rewrites them all).

use std::path::{Path, PathBuf};

use schedmath_host::{docs, study};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

#[test]
fn readme_study_tables_match_the_command() {
    let readme = readme();
    let blocks = docs::study_blocks(&readme);
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
    for (name, range) in &blocks {
        let r = study::run(&study::resolve(name, &scenarios)).unwrap();
        assert_eq!(
            &readme[range.clone()],
            r.render(),
            "README table of `{name}` is stale: run `cargo xtask bless`"
        );
    }
}

#[test]
fn readme_profile_list_is_the_core_table() {
    let readme = readme();
    let b = readme
        .find(docs::PROFILES_BEGIN)
        .expect("profile list start marker");
    let e = readme
        .find(docs::PROFILES_END)
        .expect("profile list end marker");
    assert_eq!(
        &readme[b + docs::PROFILES_BEGIN.len()..e],
        docs::profile_list(),
        "README profile list is stale: run `cargo xtask bless`"
    );
}
