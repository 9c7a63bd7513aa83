// SPDX-License-Identifier: GPL-2.0-only
//! The guest's initramfs: an uncompressed cpio (newc) archive written here, holding
//! busybox, rt-app, trace-cmd and their libraries from the unpacked Debian packages, the
//! virtio modules the results disk needs, the probe, `/init` (xtask/lab/init.sh) and the
//! run's files under `/lab`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};

use super::cmd;

enum Node {
    Dir,
    File(Vec<u8>, u32),
    Symlink(String),
    CharDev(u32, u32),
}

/// Archive entries by path (no leading slash), written in path order so parents come
/// first.
#[derive(Default)]
pub struct Archive {
    nodes: BTreeMap<String, Node>,
}

impl Archive {
    fn parents(&mut self, path: &str) {
        let mut p = path;
        while let Some(i) = p.rfind('/') {
            p = &p[..i];
            self.nodes.entry(p.to_string()).or_insert(Node::Dir);
        }
    }
    pub fn dir(&mut self, path: &str) {
        self.parents(path);
        self.nodes.insert(path.to_string(), Node::Dir);
    }
    pub fn file(&mut self, path: &str, data: Vec<u8>, mode: u32) {
        self.parents(path);
        self.nodes.insert(path.to_string(), Node::File(data, mode));
    }
    pub fn symlink(&mut self, path: &str, target: &str) {
        self.parents(path);
        self.nodes
            .insert(path.to_string(), Node::Symlink(target.to_string()));
    }
    pub fn chardev(&mut self, path: &str, major: u32, minor: u32) {
        self.parents(path);
        self.nodes
            .insert(path.to_string(), Node::CharDev(major, minor));
    }
    /// Copy a host file, keeping its executable bit.
    pub fn copy(&mut self, path: &str, from: &Path) -> anyhow::Result<()> {
        let data = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
        let exec = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(from)?.permissions())
            & 0o111
            != 0;
        self.file(path, data, if exec { 0o755 } else { 0o644 });
        Ok(())
    }
    /// Copy a host tree (files and symlinks) to `path`, skipping names in `skip`.
    pub fn copy_tree(&mut self, path: &str, from: &Path, skip: &[&str]) -> anyhow::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(from)
            .with_context(|| format!("reading {}", from.display()))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if skip.contains(&name.as_str()) {
                continue;
            }
            let dst = format!("{path}/{name}");
            let ft = e.file_type()?;
            if ft.is_symlink() {
                let t = std::fs::read_link(e.path())?;
                self.symlink(&dst, &t.to_string_lossy());
            } else if ft.is_dir() {
                self.copy_tree(&dst, &e.path(), skip)?;
            } else if ft.is_file() {
                self.copy(&dst, &e.path())?;
            }
        }
        Ok(())
    }

    /// The cpio newc bytes.
    pub fn write(&self, out: &mut impl Write) -> anyhow::Result<()> {
        let mut ino = 1u32;
        let mut entry = |out: &mut dyn Write,
                         name: &str,
                         mode: u32,
                         data: &[u8],
                         rdev: (u32, u32)|
         -> anyhow::Result<()> {
            let namesize = name.len() + 1;
            write!(
                out,
                "070701{ino:08x}{mode:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{namesize:08x}{:08x}",
                0, 0, 1, 0, data.len(), 0, 0, rdev.0, rdev.1, 0
            )?;
            ino += 1;
            out.write_all(name.as_bytes())?;
            out.write_all(&[0])?;
            out.write_all(&vec![0u8; (4 - (110 + namesize) % 4) % 4])?;
            out.write_all(data)?;
            out.write_all(&vec![0u8; (4 - data.len() % 4) % 4])?;
            Ok(())
        };
        for (path, node) in &self.nodes {
            match node {
                Node::Dir => entry(out, path, 0o040755, &[], (0, 0))?,
                Node::File(d, m) => entry(out, path, 0o100000 | m, d, (0, 0))?,
                Node::Symlink(t) => entry(out, path, 0o120777, t.as_bytes(), (0, 0))?,
                Node::CharDev(a, b) => entry(out, path, 0o020600, &[], (*a, *b))?,
            }
        }
        entry(out, "TRAILER!!!", 0, &[], (0, 0))
    }
}

/// A kernel module's bytes (decompressing `.ko.xz` / `.ko.zst`).
fn module_bytes(p: &Path) -> anyhow::Result<Vec<u8>> {
    let name = p.to_string_lossy();
    let prog = if name.ends_with(".xz") {
        "xz"
    } else if name.ends_with(".zst") {
        "zstd"
    } else {
        return std::fs::read(p).with_context(|| format!("reading {}", p.display()));
    };
    let mut c = Command::new(prog);
    c.arg("-dcq").arg(p);
    Ok(cmd::run(
        c,
        Duration::from_secs(60),
        &format!("{prog} -d {}", p.display()),
    )?
    .stdout)
}

fn modinfo_depends(ko: &[u8]) -> Vec<String> {
    let key = b"depends=";
    ko.windows(key.len())
        .position(|w| w == key)
        .map(|i| {
            let rest = &ko[i + key.len()..];
            let end = rest.iter().position(|&b| b == 0).unwrap_or(0);
            String::from_utf8_lossy(&rest[..end])
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.replace('-', "_"))
                .collect()
        })
        .unwrap_or_default()
}

/// `wanted` modules and their dependencies (from `.modinfo` `depends=`), dependencies
/// first, as (file name, bytes); built-in ones (modules.builtin) are skipped.
pub fn modules(dir: &Path, wanted: &[&str]) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    fn walk(d: &Path, found: &mut BTreeMap<String, PathBuf>) {
        if let Ok(rd) = std::fs::read_dir(d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, found);
                } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
                    if let Some(stem) = n.split(".ko").next().filter(|_| n.contains(".ko")) {
                        found.insert(stem.replace('-', "_"), p.clone());
                    }
                }
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(&dir.join("kernel"), &mut files);
    let builtin = std::fs::read_to_string(dir.join("modules.builtin")).unwrap_or_default();
    let is_builtin = |m: &str| {
        builtin.lines().any(|l| {
            l.rsplit('/')
                .next()
                .and_then(|f| f.strip_suffix(".ko"))
                .is_some_and(|f| f.replace('-', "_") == m)
        })
    };
    let mut order: Vec<(String, Vec<u8>)> = Vec::new();
    fn visit(
        m: &str,
        files: &BTreeMap<String, PathBuf>,
        is_builtin: &dyn Fn(&str) -> bool,
        order: &mut Vec<(String, Vec<u8>)>,
        depth: usize,
    ) -> anyhow::Result<()> {
        let fname = format!("{m}.ko");
        if depth > 16 || order.iter().any(|(n, _)| *n == fname) {
            return Ok(());
        }
        let Some(p) = files.get(m) else {
            if is_builtin(m) {
                return Ok(());
            }
            bail!("kernel module {m} is neither a file nor built in");
        };
        let bytes = module_bytes(p)?;
        for d in modinfo_depends(&bytes) {
            visit(&d, files, is_builtin, order, depth + 1)?;
        }
        order.push((fname, bytes));
        Ok(())
    }
    for m in wanted {
        visit(m, &files, &is_builtin, &mut order, 0)?;
    }
    if order.is_empty() && wanted.iter().all(|m| !is_builtin(m)) {
        return Err(anyhow!("no module among {wanted:?} in {}", dir.display()));
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_layout() {
        let mut a = Archive::default();
        a.file("lab/x", b"abc".to_vec(), 0o644);
        let mut v = Vec::new();
        a.write(&mut v).unwrap();
        // "lab" (dir), "lab/x" (file), trailer; every header 4-byte aligned
        let s = String::from_utf8_lossy(&v);
        assert!(s.starts_with("070701"));
        assert_eq!(s.matches("070701").count(), 3);
        assert!(s.contains("lab/x\0"));
        assert!(s.contains("TRAILER!!!\0"));
        assert_eq!(v.len() % 4, 0);
    }

    #[test]
    fn depends_from_modinfo() {
        let ko = b"\0license=GPL\0depends=virtio,virtio-ring\0name=virtio_blk\0";
        assert_eq!(modinfo_depends(ko), vec!["virtio", "virtio_ring"]);
        assert!(modinfo_depends(b"depends=\0").is_empty());
    }
}
