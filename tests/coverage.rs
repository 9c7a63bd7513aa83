// SPDX-License-Identifier: GPL-2.0-only
//! Every public function of the core is exercised by a fixture driver or a unit test.
//!
//! The core mirrors kernel functions one for one; a function no fixture suite drives and
//! no unit test calls is arithmetic nobody checked. The list of functions is derived from
//! the core's sources: every `pub fn` at item level of a module or of an inherent `impl`
//! outside `#[cfg(test)]` (trait impls are reached through their trait). A function counts
//! as covered when a call to it appears in a core test module, a typed fixture driver
//! (`xtask/conformance`), a host fixture runner (`host/src/fixtures/runners`) or an
//! integration test (`tests/`, `host/tests/`), or in the body of a core function that is
//! itself covered (fixpoint).
//!
//! What counts as a call, so that the test can fail:
//! * comments (line, block, doc) and string and char literals are blanked first;
//! * a function's body ends at its matching closing brace;
//! * a call names its function by path, resolved through the file's `use` declarations,
//!   `pub use` re-exports, `super`/`self`/`crate`/`schedmath`: `pelt::decay_load(`,
//!   `decay_load(` after `use schedmath::pelt::decay_load` (or a glob of its module, or in
//!   its own module), `FreqTable::new(` / `Self::new(` for an associated function;
//! * a method (`self` receiver) also counts when called as `.name(` in a file that names
//!   its type; an associated function without `self` (a constructor) never counts from a
//!   bare `name(` or `.name(`.
//!
//! `scanner_finds_an_injected_untested_function` proves the scan fails: it copies the core
//! into a temporary directory, adds a documented but untested `pub fn` (mentioned in a doc
//! comment, a string and a test comment) and checks that it is reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod support;
use support::rust_src::{matching, module_of, rust_files, strip, tokens, uses};

// ---------------------------------------------------------------------------------------
// The core: modules, types, functions.

type ModPath = Vec<String>;

/// One public function of the core.
#[derive(Debug, Clone)]
struct CoreFn {
    file: String,
    module: ModPath,
    /// The inherent impl's type for an associated function.
    ty: Option<String>,
    name: String,
    /// Has a `self` receiver.
    method: bool,
    /// Its body (stripped), the context it is read in.
    body: String,
}

/// A piece of code whose calls count: its text and how names resolve in it.
struct Context {
    code: String,
    /// Core module whose items are in scope (core code and its test modules).
    module: Option<ModPath>,
    /// `Self` inside an inherent impl.
    self_ty: Option<String>,
    /// `crate::` means the core.
    in_core: bool,
    imports: Vec<(Vec<String>, String)>,
    /// Words of the whole file (a method counts where its type is named).
    words: BTreeSet<String>,
}

#[derive(Default)]
struct Core {
    fns: Vec<CoreFn>,
    modules: BTreeSet<ModPath>,
    /// Types (struct/enum/type alias/trait) per module.
    types: BTreeSet<(ModPath, String)>,
    /// `pub use` re-exports: (module, local name) → target path.
    reexports: BTreeMap<(ModPath, String), Vec<String>>,
    /// Module-level `use` of each core module (for bodies).
    module_uses: BTreeMap<ModPath, Vec<(Vec<String>, String)>>,
    /// Test modules: (their parent module, code, imports).
    tests: Vec<Context>,
}

fn words(code: &str) -> BTreeSet<String> {
    tokens(code).into_iter().map(|t| t.1.to_string()).collect()
}

/// Scope kinds while walking a file.
enum Scope {
    Module(ModPath),
    Impl { ty: String, inherent: bool },
    Other,
}

fn scan_core(src_dir: &Path) -> Core {
    let mut core = Core::default();
    let mut files = Vec::new();
    rust_files(src_dir, &mut files);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let code = strip(&text);
        let toks = tokens(&code);
        let file_mod = module_of(src_dir, f);
        let rel = f
            .strip_prefix(src_dir.parent().unwrap())
            .unwrap()
            .display()
            .to_string();
        core.modules.insert(file_mod.clone());
        let file_words = words(&code);
        // (scope, index of the token closing it)
        let mut stack: Vec<(Scope, usize)> = vec![(Scope::Module(file_mod.clone()), toks.len())];
        let mut item_uses: Vec<(ModPath, usize, usize)> = Vec::new();
        let mut seg_start = 0;
        let mut k = 0;
        while k < toks.len() {
            while stack.len() > 1 && k > stack.last().unwrap().1 {
                let (s, _) = stack.pop().unwrap();
                if let Scope::Module(m) = s {
                    let _ = m;
                }
            }
            let cur_mod = stack
                .iter()
                .rev()
                .find_map(|(s, _)| match s {
                    Scope::Module(m) => Some(m.clone()),
                    _ => None,
                })
                .unwrap();
            let t = toks[k].1;
            // `#[cfg(test)] mod NAME { ... }`: test code, read as a context.
            if t == "#" && toks.get(k + 1).map(|t| t.1) == Some("[") {
                let close = matching(&toks, k + 1);
                let attr: String = toks[k + 2..close].iter().map(|t| t.1).collect();
                if attr == "cfg(test)" {
                    let mut j = close + 1;
                    while toks.get(j).map(|t| t.1) == Some("#") {
                        j = matching(&toks, j + 1) + 1;
                    }
                    // Skip the item: to the end of its block or `;`.
                    let mut e = j;
                    while e < toks.len() && toks[e].1 != "{" && toks[e].1 != ";" {
                        e += 1;
                    }
                    let end = if e < toks.len() && toks[e].1 == "{" {
                        matching(&toks, e)
                    } else {
                        e
                    };
                    if toks.get(j).map(|t| t.1) == Some("mod") {
                        let name = toks[j + 1].1.to_string();
                        let mut m = cur_mod.clone();
                        m.push(name);
                        let from = toks[j].0;
                        let to = toks.get(end).map_or(code.len(), |t| t.0 + 1);
                        let imports = uses(&toks, j, end)
                            .into_iter()
                            .map(|(p, n, _)| (p, n))
                            .collect();
                        core.tests.push(Context {
                            code: code[from..to].to_string(),
                            module: Some(m),
                            self_ty: None,
                            in_core: true,
                            imports,
                            words: file_words.clone(),
                        });
                    }
                    item_uses.push((cur_mod.clone(), seg_start, k));
                    k = end + 1;
                    seg_start = k;
                    continue;
                }
                k = close + 1;
                continue;
            }
            let depth_ok = true;
            match t {
                "mod" if depth_ok && toks.get(k + 2).map(|t| t.1) == Some("{") => {
                    let mut m = cur_mod.clone();
                    m.push(toks[k + 1].1.to_string());
                    core.modules.insert(m.clone());
                    let close = matching(&toks, k + 2);
                    stack.push((Scope::Module(m), close));
                    k += 3;
                    continue;
                }
                "mod" => {
                    let mut m = cur_mod.clone();
                    m.push(toks[k + 1].1.to_string());
                    core.modules.insert(m);
                }
                "struct" | "enum" | "type" | "trait" | "union"
                    if toks
                        .get(k + 1)
                        .is_some_and(|t| t.1.chars().all(|c| c.is_alphanumeric() || c == '_')) =>
                {
                    core.types
                        .insert((cur_mod.clone(), toks[k + 1].1.to_string()));
                    if t == "trait" {
                        let mut e = k;
                        while e < toks.len() && toks[e].1 != "{" {
                            e += 1;
                        }
                        let close = matching(&toks, e);
                        stack.push((Scope::Other, close));
                        k = e + 1;
                        continue;
                    }
                }
                "impl" => {
                    // impl<..> [Trait for] Type<..> { ... }
                    let mut e = k + 1;
                    let mut angle = 0;
                    let mut names: Vec<&str> = Vec::new();
                    let mut inherent = true;
                    while e < toks.len() && !(toks[e].1 == "{" && angle == 0) {
                        match toks[e].1 {
                            "<" => angle += 1,
                            ">" if toks[e - 1].1 != "-" => angle -= 1,
                            "for" if angle == 0 => {
                                inherent = false;
                                names.clear();
                            }
                            "where" if angle == 0 => break,
                            id if angle == 0
                                && id.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                            {
                                names.push(id)
                            }
                            _ => {}
                        }
                        e += 1;
                    }
                    while e < toks.len() && toks[e].1 != "{" {
                        e += 1;
                    }
                    let ty = names.last().copied().unwrap_or_default().to_string();
                    let close = matching(&toks, e);
                    stack.push((Scope::Impl { ty, inherent }, close));
                    k = e + 1;
                    continue;
                }
                "fn" if !toks
                    .get(k + 1)
                    .is_some_and(|t| t.1.chars().all(|c| c.is_alphanumeric() || c == '_')) => {}
                "fn" => {
                    let name = toks[k + 1].1.to_string();
                    // Visibility: `pub` right before (`pub const fn`, `pub unsafe fn`...);
                    // `pub(crate)` is not public.
                    let mut b = k;
                    while b > 0 && matches!(toks[b - 1].1, "const" | "unsafe" | "async" | "extern")
                    {
                        b -= 1;
                    }
                    let public = b > 0 && toks[b - 1].1 == "pub";
                    // Signature to the body's `{` (or `;`).
                    let mut e = k + 2;
                    while e < toks.len() && toks[e].1 != "{" && toks[e].1 != ";" {
                        e += 1;
                    }
                    let open_paren = (k + 2..e).find(|&j| toks[j].1 == "(").unwrap_or(e);
                    let close_paren = matching(&toks, open_paren);
                    let method = toks[open_paren..close_paren.min(e)]
                        .iter()
                        .take_while(|t| t.1 != ",")
                        .any(|t| t.1 == "self");
                    if e >= toks.len() || toks[e].1 == ";" {
                        k = e + 1;
                        continue;
                    }
                    let close = matching(&toks, e);
                    let body = code[toks[e].0..=toks[close].0].to_string();
                    let (ty, listed) = match &stack.last().unwrap().0 {
                        Scope::Module(_) => (None, public),
                        Scope::Impl { ty, inherent } => (Some(ty.clone()), public && *inherent),
                        Scope::Other => (None, false),
                    };
                    core.fns.push(CoreFn {
                        file: rel.clone(),
                        module: cur_mod.clone(),
                        ty,
                        name,
                        method,
                        body,
                    });
                    if !listed {
                        // Private helpers still carry calls: kept with an empty name
                        // marker so the fixpoint can read them once reached.
                        core.fns.last_mut().unwrap().name.insert(0, '#');
                    }
                    k = close + 1;
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
        item_uses.push((file_mod.clone(), seg_start, toks.len()));
        for (m, from, to) in item_uses {
            for (p, n, public) in uses(&toks, from, to) {
                if public && n != "*" {
                    core.reexports.insert((m.clone(), n.clone()), p.clone());
                }
                core.module_uses.entry(m.clone()).or_default().push((p, n));
            }
        }
    }
    core
}

// ---------------------------------------------------------------------------------------
// Resolution.

impl Core {
    /// A written path (`a::b::c`) as a core path, or None when it leaves the core.
    fn resolve(&self, ctx: &Context, path: &[&str]) -> Option<Vec<String>> {
        self.resolve_in(ctx, path, true)
    }

    fn resolve_in(&self, ctx: &Context, path: &[&str], use_globs: bool) -> Option<Vec<String>> {
        let (first, rest) = path.split_first()?;
        let mut base: Vec<String> = match *first {
            "schedmath" => Vec::new(),
            "crate" if ctx.in_core => Vec::new(),
            "self" => ctx.module.clone()?,
            "super" => {
                let mut m = ctx.module.clone()?;
                m.pop()?;
                m
            }
            "Self" => {
                let mut m = ctx.module.clone()?;
                m.push(ctx.self_ty.clone()?);
                m
            }
            name => {
                if let Some((p, _)) = ctx
                    .imports
                    .iter()
                    .find(|(p, n)| n == name && p.first().is_some_and(|f| f != name))
                {
                    self.absolute(ctx, p)?
                } else if let Some(m) = ctx.module.as_ref().filter(|m| {
                    let mut q = (*m).clone();
                    q.push(name.to_string());
                    self.modules.contains(&q)
                        || self.types.contains(&((*m).clone(), name.to_string()))
                }) {
                    let mut q = m.clone();
                    q.push(name.to_string());
                    q
                } else {
                    let globs = if use_globs {
                        self.globs(ctx)
                    } else {
                        Vec::new()
                    };
                    globs.into_iter().find_map(|g| {
                        let mut q = g.clone();
                        q.push(name.to_string());
                        (self.modules.contains(&q) || self.types.contains(&(g, name.to_string())))
                            .then_some(q)
                    })?
                }
            }
        };
        let mut rest = rest.iter().peekable();
        while rest.peek() == Some(&&"super") {
            rest.next();
            base.pop()?;
        }
        base.extend(rest.map(|s| s.to_string()));
        Some(self.canonical(base))
    }

    /// An import path (as written in `use`) made absolute in the core.
    fn absolute(&self, ctx: &Context, p: &[String]) -> Option<Vec<String>> {
        let refs: Vec<&str> = p.iter().map(String::as_str).collect();
        match refs.first()? {
            &"schedmath" | &"crate" | &"self" | &"super" => self.resolve(ctx, &refs),
            _ if ctx.in_core => self.resolve(ctx, &refs),
            _ => None,
        }
    }

    fn globs(&self, ctx: &Context) -> Vec<ModPath> {
        ctx.imports
            .iter()
            .filter(|(_, n)| n == "*")
            .filter_map(|(p, _)| {
                let refs: Vec<&str> = p.iter().map(String::as_str).collect();
                match refs.first()? {
                    &"schedmath" | &"crate" | &"self" | &"super" => {
                        self.resolve_in(ctx, &refs, false)
                    }
                    _ if ctx.in_core => self.resolve_in(ctx, &refs, false),
                    _ => None,
                }
            })
            .collect()
    }

    /// Follows `pub use` re-exports (`schedmath::Profile` → `profile::Profile`).
    fn canonical(&self, mut p: Vec<String>) -> Vec<String> {
        for _ in 0..8 {
            let mut changed = false;
            for cut in 0..p.len() {
                let key = (p[..cut].to_vec(), p[cut].clone());
                if let Some(target) = self.reexports.get(&key) {
                    let ctx = Context {
                        code: String::new(),
                        module: Some(p[..cut].to_vec()),
                        self_ty: None,
                        in_core: true,
                        imports: Vec::new(),
                        words: BTreeSet::new(),
                    };
                    let refs: Vec<&str> = target.iter().map(String::as_str).collect();
                    if let Some(mut t) = self.resolve_plain(&ctx, &refs) {
                        t.extend(p[cut + 1..].iter().cloned());
                        p = t;
                        changed = true;
                        break;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        p
    }

    /// `resolve` without re-export following (used while following them).
    fn resolve_plain(&self, ctx: &Context, path: &[&str]) -> Option<Vec<String>> {
        let (first, rest) = path.split_first()?;
        let mut base: Vec<String> = match *first {
            "schedmath" | "crate" => Vec::new(),
            "self" => ctx.module.clone()?,
            "super" => {
                let mut m = ctx.module.clone()?;
                m.pop()?;
                m
            }
            name => {
                let mut m = ctx.module.clone()?;
                m.push(name.to_string());
                m
            }
        };
        base.extend(rest.iter().map(|s| s.to_string()));
        Some(base)
    }

    /// Does `ctx` call `f`?
    fn calls(&self, ctx: &Context, f: &CoreFn) -> bool {
        let toks = tokens(&ctx.code);
        let mut target = f.module.clone();
        if let Some(ty) = &f.ty {
            target.push(ty.clone());
        }
        // `use` declarations name functions without calling them.
        let mut in_use = vec![false; toks.len()];
        let mut k = 0;
        while k < toks.len() {
            if toks[k].1 == "use" {
                while k < toks.len() && toks[k].1 != ";" {
                    in_use[k] = true;
                    k += 1;
                }
            }
            k += 1;
        }
        for (k, t) in toks.iter().enumerate() {
            if t.1 != f.name || in_use[k] {
                continue;
            }
            let next = toks.get(k + 1).map(|t| t.1);
            let callish = next == Some("(")
                || (next == Some(":") && toks.get(k + 3).map(|t| t.1) == Some("<"));
            let prev = if k > 0 { toks[k - 1].1 } else { "" };
            if prev == "fn" {
                continue;
            }
            if prev == "." {
                if f.method && callish && f.ty.as_ref().is_some_and(|ty| ctx.words.contains(ty)) {
                    return true;
                }
                continue;
            }
            if prev == ":" && k >= 2 && toks[k - 2].1 == ":" {
                // Collect the written path before `::name`.
                let mut path: Vec<&str> = Vec::new();
                let mut j = k;
                while j >= 3 && toks[j - 1].1 == ":" && toks[j - 2].1 == ":" {
                    let seg = toks[j - 3].1;
                    if !seg.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        break;
                    }
                    path.insert(0, seg);
                    j -= 3;
                    // Skip turbofish/generic args like `Vec::<u8>::` (not needed here).
                }
                if path.is_empty() {
                    continue;
                }
                // A path reference counts as a call (`.map(pelt::decay_load)` passes it).
                if self.resolve(ctx, &path).as_ref() == Some(&target) {
                    return true;
                }
                continue;
            }
            if f.ty.is_none() && callish {
                // Bare `name(`: the name is in scope by its module, an import or a glob.
                let by_module = ctx.module.as_ref() == Some(&f.module);
                let by_import = ctx
                    .imports
                    .iter()
                    .filter(|(_, n)| *n == f.name)
                    .any(|(p, _)| {
                        self.absolute(ctx, p).as_ref()
                            == Some(&{
                                let mut q = f.module.clone();
                                q.push(f.name.clone());
                                q
                            })
                    });
                let by_glob = self.globs(ctx).contains(&f.module);
                if by_module || by_import || by_glob {
                    return true;
                }
            }
        }
        false
    }
}

/// Public core functions under `src_dir` that nothing in `exercisers` reaches.
fn uncovered(src_dir: &Path, exercisers: &[PathBuf]) -> (usize, Vec<String>) {
    let core = scan_core(src_dir);
    let mut contexts: Vec<Context> = Vec::new();
    for dir in exercisers {
        let mut files = Vec::new();
        if dir.is_dir() {
            rust_files(dir, &mut files);
        }
        for f in files {
            let code = strip(&std::fs::read_to_string(&f).unwrap());
            let toks = tokens(&code);
            let imports = uses(&toks, 0, toks.len())
                .into_iter()
                .map(|(p, n, _)| (p, n))
                .collect();
            contexts.push(Context {
                words: words(&code),
                code,
                module: None,
                self_ty: None,
                in_core: false,
                imports,
            });
        }
    }
    let body_context = |f: &CoreFn| Context {
        code: f.body.clone(),
        module: Some(f.module.clone()),
        self_ty: f.ty.clone(),
        in_core: true,
        imports: core.module_uses.get(&f.module).cloned().unwrap_or_default(),
        words: words(
            &std::fs::read_to_string(src_dir.parent().unwrap().join(&f.file))
                .map(|t| strip(&t))
                .unwrap_or_default(),
        ),
    };
    // Every function (private ones too: a covered public function may reach a public one
    // through a private helper).
    let plain = |f: &CoreFn| CoreFn {
        name: f.name.trim_start_matches('#').to_string(),
        ..f.clone()
    };
    let all: Vec<CoreFn> = core.fns.iter().map(plain).collect();
    let mut covered: Vec<bool> = all
        .iter()
        .map(|f| core.tests.iter().chain(&contexts).any(|c| core.calls(c, f)))
        .collect();
    let mut read = vec![false; all.len()];
    loop {
        let mut grew = false;
        for i in 0..all.len() {
            if covered[i] && !read[i] {
                read[i] = true;
                let ctx = body_context(&all[i]);
                for j in 0..all.len() {
                    if !covered[j] && core.calls(&ctx, &all[j]) {
                        covered[j] = true;
                        grew = true;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    let public: Vec<(usize, &CoreFn)> = core
        .fns
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.name.starts_with('#'))
        .collect();
    let missing = public
        .iter()
        .filter(|(i, _)| !covered[*i])
        .map(|(_, f)| {
            let mut path = f.module.join("::");
            if let Some(ty) = &f.ty {
                path = format!("{path}::{ty}");
            }
            format!("{}: {}::{}", f.file, path, f.name)
        })
        .collect();
    (public.len(), missing)
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn exercisers() -> Vec<PathBuf> {
    [
        "xtask/conformance/src",
        "host/src/fixtures/runners",
        "tests",
        "host/tests",
    ]
    .iter()
    .map(|d| root().join(d))
    .collect()
}

#[test]
fn every_core_function_has_a_fixture_driver_or_a_unit_test() {
    let (public, missing) = uncovered(&root().join("core/src"), &exercisers());
    assert!(public > 150, "found only {public} public core functions");
    assert!(
        missing.is_empty(),
        "core functions with neither a fixture driver nor a unit test:\n{}",
        missing.join("\n")
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dst = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dst);
        } else {
            std::fs::copy(&p, &dst).unwrap();
        }
    }
}

#[test]
fn scanner_finds_an_injected_untested_function() {
    let tmp = std::env::temp_dir().join(format!("schedmath-coverage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let src = tmp.join("core/src");
    copy_dir(&root().join("core/src"), &src);
    // An untested public function that every weakness of a text search would "cover":
    // its doc and a test comment name it, a string holds a call, the next function's doc
    // follows it, and `new(` is called elsewhere.
    let math = src.join("math.rs");
    let text = std::fs::read_to_string(&math).unwrap();
    let injected = "\n/// `injected_untested()`: calls `injected_untested(1)` in its doc.\n\
        pub fn injected_untested(x: u64) -> u64 {\n    x + 1\n}\n\n\
        /// The next function's doc: injected_untested(2).\n\
        pub fn injected_neighbour() -> &'static str {\n    \"injected_untested(3)\"\n}\n\n\
        /// An associated constructor nobody calls by path.\n\
        pub struct InjectedTable;\n\
        impl InjectedTable {\n    /// Never called as `InjectedTable::new()`.\n    pub fn new() -> Self {\n        InjectedTable\n    }\n}\n";
    let (code, tests) = text.split_at(text.find("#[cfg(test)]").unwrap());
    let tests = tests.replacen(
        "mod tests {",
        "mod tests {\n    // injected_untested(4) /* injected_untested(5) */\n    \
         #[test]\n    fn injected_neighbour_is_tested() {\n        \
         assert_eq!(super::injected_neighbour(), \"injected_untested(6)\");\n        \
         let _ = r#\"injected_untested(7)\"#;\n        let _ = Vec::<u8>::new();\n    }\n    \
         #[allow(unused_imports)]\n    use super::injected_untested;\n",
        1,
    );
    std::fs::write(&math, format!("{code}{injected}{tests}")).unwrap();
    let (_, missing) = uncovered(&src, &exercisers());
    let _ = std::fs::remove_dir_all(&tmp);
    let names: Vec<&str> = missing
        .iter()
        .map(|m| m.rsplit("::").next().unwrap())
        .collect();
    assert!(
        names.contains(&"injected_untested"),
        "not reported: {missing:?}"
    );
    assert!(
        names.contains(&"new") && missing.iter().any(|m| m.contains("InjectedTable::new")),
        "{missing:?}"
    );
    assert!(!names.contains(&"injected_neighbour"), "{missing:?}");
}

#[test]
fn strip_blanks_comments_and_literals_but_keeps_lifetimes() {
    let s = strip("a(1) // b(2)\n/* c( /* d( */ */ e('x', '\\n', \"f(\", r#\"g(\"#) -> &'a T");
    assert!(s.contains("a(1)") && s.contains("e(") && s.contains("&'a T"));
    for gone in ["b(2", "c(", "d(", "f(", "g(", "'x'"] {
        assert!(!s.contains(gone), "{gone} left in {s:?}");
    }
    assert_eq!(s.lines().count(), 2);
}
