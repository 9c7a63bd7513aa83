// SPDX-License-Identifier: GPL-2.0-only
//! The host's import layering: core ← support ← platform/workload/fixtures ← sim ←
//! study/replays ← versus/sweep ← docs ← CLI, and no import cycle between sibling modules.
//!
//! Every `crate::…`, `super::…` and `self::…` path in `host/src` (in `use` declarations and
//! in code, comments and strings blanked) is resolved to the module it names. Two rules:
//! * a top-level module may only name modules of a lower layer ([`LAYERS`]) or itself;
//! * within any module directory, the graph "child X names sibling Y" has no cycle (a
//!   child naming its parent's own items — errors, engine constants in `sim/mod.rs` — is
//!   not an edge: the parent is the facade its children share).
//!
//! The binary (`main.rs`) is the CLI layer above all of them and reaches the library only
//! through `schedmath_host::`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod support;
use support::rust_src::{module_of, rust_files, strip, tokens, use_tree};

/// Top-level modules of `host/src` by layer, lowest first. A module may name modules of
/// lower layers only.
const LAYERS: &[&[&str]] = &[
    // Support: no scheduler knowledge (seeded random numbers, CSV and table text, the
    // input limits and bounded file reads).
    &["rng", "text", "limits"],
    // Inputs: the kernel fixtures' envelope, platform files, workloads, trace text.
    &["fixtures", "platform", "workload", "trace"],
    // The simulator.
    &["sim"],
    // Commands over the layers below: studies, the schedutil and cpuidle replays, the
    // replay of a real trace, verify.
    &["study", "governor", "idle", "replay", "verify"],
    // The simulator beside a kernel capture (it reads the trace through replay); sweeps
    // (their runs and table cells are the studies'); seeing a run (plots, explain, HTML
    // reports of compare's tables: it reads sim's recordings).
    &["versus", "sweep", "see"],
    // The generated parts of the docs (they run studies).
    &["docs"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn is_module(src: &Path, path: &[String]) -> bool {
    let rel: PathBuf = path.iter().collect();
    let dir = src.join(&rel);
    dir.with_extension("rs").is_file() || dir.join("mod.rs").is_file()
}

/// Every module path a file names: (absolute path, line).
fn named_paths(src: &Path, file: &Path) -> Vec<(Vec<String>, usize)> {
    let code = strip(&std::fs::read_to_string(file).unwrap());
    let toks = tokens(&code);
    let here = module_of(src, file);
    let line = |off: usize| code[..off].matches('\n').count() + 1;
    let mut out = Vec::new();
    let absolute = |segs: &[String]| -> Option<Vec<String>> {
        let (first, rest) = segs.split_first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => here.clone(),
            "super" => {
                let mut m = here.clone();
                m.pop()?;
                m
            }
            _ => return None,
        };
        let mut rest = rest.iter().peekable();
        while rest.peek().is_some_and(|s| *s == "super") {
            rest.next();
            base.pop()?;
        }
        base.extend(rest.cloned());
        Some(base)
    };
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k].1;
        if t == "use" {
            let mut found = Vec::new();
            let end = use_tree(&toks, k + 1, &[], &mut found);
            for (p, _) in found {
                if let Some(a) = absolute(&p) {
                    out.push((a, line(toks[k].0)));
                }
            }
            k = end.max(k + 1);
            continue;
        }
        let starts_path = matches!(t, "crate" | "super" | "self")
            && toks.get(k + 1).map(|t| t.1) == Some(":")
            && toks.get(k + 2).map(|t| t.1) == Some(":")
            && (k < 2 || !(toks[k - 1].1 == ":" && toks[k - 2].1 == ":"));
        if starts_path {
            let mut segs = vec![t.to_string()];
            let mut j = k + 1;
            while toks.get(j).map(|t| t.1) == Some(":")
                && toks.get(j + 1).map(|t| t.1) == Some(":")
                && toks
                    .get(j + 2)
                    .is_some_and(|t| t.1.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                segs.push(toks[j + 2].1.to_string());
                j += 3;
            }
            if let Some(a) = absolute(&segs) {
                out.push((a, line(toks[k].0)));
            }
            k = j;
            continue;
        }
        k += 1;
    }
    out
}

/// Layering violations and sibling cycles in the crate at `src`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad = Vec::new();
    // (parent module) → child → (sibling it names → first place)
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    for f in &files {
        let here = module_of(src, f);
        if here.is_empty() {
            continue; // lib.rs / main.rs: the crate root declares modules
        }
        let rel = f.strip_prefix(src).unwrap().display().to_string();
        for (path, line) in named_paths(src, f) {
            let Some(top) = path.first() else { continue };
            if *top != here[0] {
                match (layer_of(&here[0]), layer_of(top)) {
                    (Some(a), Some(b)) if b < a => {}
                    (a, b) => bad.push(format!(
                        "{rel}:{line}: `{}` (layer {}) names `{}` (layer {})",
                        here[0],
                        a.map_or("?".into(), |a| a.to_string()),
                        path.join("::"),
                        b.map_or("?".into(), |b| b.to_string()),
                    )),
                }
            }
            // The deepest common ancestor and the two children below it.
            let common = here.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if common < here.len() && common < path.len() {
                let parent = here[..common].to_vec();
                let child = here[common].clone();
                let sibling = path[..=common].to_vec();
                if is_module(src, &sibling) {
                    edges
                        .entry(parent)
                        .or_default()
                        .entry(child)
                        .or_default()
                        .entry(path[common].clone())
                        .or_insert(format!("{rel}:{line}"));
                }
            }
        }
    }
    for (parent, graph) in &edges {
        let nodes: BTreeSet<&String> = graph.keys().collect();
        for start in nodes {
            // A path from a sibling back to `start` closes a cycle.
            let mut stack: Vec<Vec<&String>> = vec![vec![start]];
            let mut seen = BTreeSet::new();
            while let Some(chain) = stack.pop() {
                let last = *chain.last().unwrap();
                for next in graph.get(last).into_iter().flat_map(|m| m.keys()) {
                    if next == start {
                        let mut names: Vec<String> = chain
                            .windows(2)
                            .chain(std::iter::once([last, next].as_slice()))
                            .map(|w| format!("{} → {} ({})", w[0], w[1], graph[w[0]][w[1]]))
                            .collect();
                        names.dedup();
                        let msg = format!("cycle in {}: {}", parent.join("::"), names.join(", "));
                        if !bad.contains(&msg) && chain.iter().all(|c| *c >= start) {
                            bad.push(msg);
                        }
                    } else if seen.insert(next) {
                        let mut c = chain.clone();
                        c.push(next);
                        stack.push(c);
                    }
                }
            }
        }
    }
    bad
}

#[test]
fn host_modules_follow_the_layers_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("host/src");
    let mut top: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "lib" && n != "main")
        .collect();
    top.sort();
    let unplaced: Vec<&String> = top.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "modules without a layer in LAYERS: {unplaced:?}"
    );
    let bad = violations(&src);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn the_check_fails_on_an_upward_import_and_a_cycle() {
    let dir = std::env::temp_dir().join(format!("schedmath-layering-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(
        &dir,
        "lib.rs",
        "pub mod sim; pub mod governor; pub mod platform;",
    );
    // sim (layer 2) reaching up into a replay (layer 3), in code and in a use tree.
    write(
        &dir,
        "sim/mod.rs",
        "pub mod a; pub mod b; pub const X: u32 = 1;\n// crate::governor::Nope\n",
    );
    write(
        &dir,
        "sim/a.rs",
        "use super::{b::B, X};\npub struct A;\nfn f() { let _ = crate::governor::G; }\n",
    );
    write(
        &dir,
        "sim/b.rs",
        "use crate::platform::P;\npub struct B(super::a::A);\n",
    );
    write(&dir, "governor.rs", "pub struct G; use crate::sim::a::A;\n");
    write(
        &dir,
        "platform.rs",
        "pub struct P; /* use crate::sim::a::A; */ const S: &str = \"crate::sim::X\";\n",
    );
    let bad = violations(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        bad.iter()
            .any(|b| b.starts_with("sim/a.rs:3: `sim` (layer 2) names `governor::G`")),
        "{bad:?}"
    );
    assert!(
        bad.iter()
            .any(|b| b.starts_with("cycle in sim: a → b") && b.contains("b → a")),
        "{bad:?}"
    );
    // The same upward edge also closes a cycle between the two top-level modules.
    assert!(
        bad.iter()
            .any(|b| b.starts_with("cycle in : governor → sim")),
        "{bad:?}"
    );
    assert_eq!(bad.len(), 3, "{bad:?}");
}
