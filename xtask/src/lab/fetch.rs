// SPDX-License-Identifier: GPL-2.0-only
//! `lab fetch`: Debian's own binaries, chosen from apt's indexes, downloaded with
//! `apt-get download` and unpacked with `dpkg-deb -x` under `target/lab/`.
//!
//! * The kernel is the one `linux-image-amd64` depends on, at the highest version of the
//!   series apt knows (6.1: bookworm / bookworm-security; 6.12: bookworm-backports), with
//!   its `-unsigned` image, `linux-headers-*`, `-common` and `linux-kbuild-*` (exact
//!   versions from the headers' Depends).
//! * Userland: the candidate `busybox-static`, `rt-app`, `trace-cmd`, and the `lib*`
//!   packages in their Depends closure (the libraries they link).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};

use super::cmd;
use super::Series;

const APT_TIMEOUT: Duration = Duration::from_secs(600);
/// apt-cache takes 20 s on a loaded 2-core machine (measured); 5 min is a hang.
const QUERY_TIMEOUT: Duration = Duration::from_secs(300);
const BACKPORTS_SOURCES: &str = "/etc/apt/sources.list.d/schedmath-lab-bookworm-backports.sources";

/// One unpacked kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// `uname -r` of the guest, e.g. `6.12.95+deb12-amd64`.
    pub release: String,
    /// Root of the unpacked image, headers and kbuild packages.
    pub sysroot: PathBuf,
    /// (package, version) used.
    pub packages: Vec<(String, String)>,
}

impl Kernel {
    pub fn vmlinuz(&self) -> PathBuf {
        self.sysroot.join(format!("boot/vmlinuz-{}", self.release))
    }
    pub fn headers(&self) -> PathBuf {
        self.sysroot
            .join(format!("usr/src/linux-headers-{}", self.release))
    }
    pub fn modules(&self) -> PathBuf {
        self.sysroot.join(format!("lib/modules/{}", self.release))
    }
}

/// The unpacked userland (busybox, rt-app, trace-cmd, libraries).
#[derive(Debug, Clone)]
pub struct User {
    pub root: PathBuf,
    pub packages: Vec<(String, String)>,
}

fn apt_cache(args: &[&str]) -> anyhow::Result<String> {
    let mut c = Command::new("apt-cache");
    c.args(args);
    cmd::text(c, QUERY_TIMEOUT, &format!("apt-cache {}", args.join(" ")))
}

/// The `Field:` value of the first stanza of `apt-cache show` output.
fn field(stanza: &str, name: &str) -> Option<String> {
    let key = format!("{name}:");
    let mut lines = stanza.lines();
    while let Some(l) = lines.next() {
        if l.is_empty() {
            return None;
        }
        if let Some(v) = l.strip_prefix(&key) {
            let mut v = v.trim().to_string();
            for cont in lines.by_ref() {
                if !cont.starts_with(' ') {
                    break;
                }
                v.push(' ');
                v.push_str(cont.trim());
            }
            return Some(v);
        }
    }
    None
}

/// `Depends` as (package, exact version if `(= V)`), taking the first of alternatives.
fn depends(stanza: &str) -> Vec<(String, Option<String>)> {
    let Some(d) = field(stanza, "Depends") else {
        return Vec::new();
    };
    d.split(',')
        .filter_map(|alt| {
            let first = alt.split('|').next()?.trim();
            let name = first.split([' ', '(', ':']).next()?.to_string();
            let exact = first
                .find("(=")
                .map(|i| first[i + 2..].trim_end_matches(')').trim().to_string());
            (!name.is_empty()).then_some((name, exact))
        })
        .collect()
}

fn dpkg_version_gt(a: &str, b: &str) -> bool {
    Command::new("dpkg")
        .args(["--compare-versions", a, "gt", b])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn sources_mention_backports() -> bool {
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        files.extend(rd.flatten().map(|e| e.path()));
    }
    files.iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines()
                .any(|l| !l.trim_start().starts_with('#') && l.contains("bookworm-backports"))
        })
    })
}

fn apt_update() -> anyhow::Result<()> {
    let mut c = Command::new("apt-get");
    c.args(["update", "-q"]);
    cmd::run(c, APT_TIMEOUT, "apt-get update").map(|_| ())
}

/// Make apt know bookworm-backports (a deb822 sources file, written once) and have
/// package lists; idempotent.
pub fn ensure_apt(out: &mut dyn Write) -> anyhow::Result<()> {
    if !cmd::have("apt-get") || !cmd::have("dpkg-deb") {
        bail!("the lab needs a Debian (bookworm) host: apt-get and dpkg-deb are missing");
    }
    let mut updated = false;
    if !sources_mention_backports() {
        if !cmd::is_root() {
            bail!("apt does not know bookworm-backports (Debian's 6.12 kernel); run as root so the lab can add {BACKPORTS_SOURCES}, or add it yourself");
        }
        std::fs::write(
            BACKPORTS_SOURCES,
            "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\n\
             Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
        )
        .with_context(|| format!("writing {BACKPORTS_SOURCES}"))?;
        writeln!(out, "lab fetch: added {BACKPORTS_SOURCES}; apt-get update")?;
        apt_update()?;
        updated = true;
    }
    if !updated
        && apt_cache(&["madison", "linux-image-amd64"])?
            .trim()
            .is_empty()
    {
        if !cmd::is_root() {
            bail!("apt has no package lists; run `apt-get update` as root");
        }
        writeln!(out, "lab fetch: apt-get update")?;
        apt_update()?;
    }
    Ok(())
}

/// (package, version) of the kernel series: image, headers, -common, kbuild.
fn resolve_kernel(series: Series) -> anyhow::Result<(String, Vec<(String, String)>)> {
    let madison = apt_cache(&["madison", "linux-image-amd64"])?;
    let mut best: Option<String> = None;
    for l in madison.lines() {
        let v = l.split('|').nth(1).map(str::trim).unwrap_or("");
        if v.starts_with(series.version_prefix())
            && best.as_deref().is_none_or(|b| dpkg_version_gt(v, b))
        {
            best = Some(v.to_string());
        }
    }
    let meta_ver = best.ok_or_else(|| {
        anyhow!(
            "apt knows no linux-image-amd64 {}* (apt-cache madison linux-image-amd64:\n{madison})",
            series.version_prefix()
        )
    })?;
    let meta = apt_cache(&["show", &format!("linux-image-amd64={meta_ver}")])?;
    let image = depends(&meta)
        .into_iter()
        .map(|(n, _)| n)
        .find(|n| n.starts_with("linux-image-"))
        .ok_or_else(|| anyhow!("linux-image-amd64={meta_ver} depends on no linux-image-*"))?;
    let release = image.trim_start_matches("linux-image-").to_string();
    let headers = format!("linux-headers-{release}");
    let hstanza = apt_cache(&["show", &format!("{headers}={meta_ver}")])?;
    let mut pkgs = vec![
        (format!("{image}-unsigned"), meta_ver.clone()),
        (headers.clone(), meta_ver.clone()),
    ];
    for (n, exact) in depends(&hstanza) {
        if n.starts_with("linux-headers-") || n.starts_with("linux-kbuild-") {
            // kbuild is built from the same source: the headers' version when unpinned
            pkgs.push((n, exact.unwrap_or_else(|| meta_ver.clone())));
        }
    }
    if !pkgs.iter().any(|(n, _)| n.starts_with("linux-kbuild-")) {
        bail!("{headers}={meta_ver} depends on no linux-kbuild-* package");
    }
    Ok((release, pkgs))
}

/// The candidate version of `pkg` and its stanza.
fn candidate(pkg: &str) -> anyhow::Result<(String, String)> {
    let stanza = apt_cache(&["show", "--no-all-versions", pkg])?;
    let v = field(&stanza, "Version").ok_or_else(|| anyhow!("apt knows no package {pkg}"))?;
    Ok((v, stanza))
}

/// busybox-static, rt-app, trace-cmd and the lib* closure of their Depends.
fn resolve_user() -> anyhow::Result<Vec<(String, String)>> {
    let mut todo: Vec<String> = ["busybox-static", "rt-app", "trace-cmd"]
        .map(String::from)
        .to_vec();
    let mut done: BTreeMap<String, String> = BTreeMap::new();
    while let Some(p) = todo.pop() {
        if done.contains_key(&p) {
            continue;
        }
        let (v, stanza) = candidate(&p)?;
        for (d, _) in depends(&stanza) {
            if d.starts_with("lib") && !done.contains_key(&d) {
                todo.push(d);
            }
        }
        done.insert(p, v);
    }
    Ok(done.into_iter().collect())
}

/// The file apt-get download names `pkg=ver` (epoch colon escaped).
fn deb_file(debs: &Path, pkg: &str, ver: &str) -> Option<PathBuf> {
    let prefix = format!("{pkg}_{}_", ver.replace(':', "%3a"));
    std::fs::read_dir(debs)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
}

fn download(
    debs: &Path,
    pkgs: &[(String, String)],
    out: &mut dyn Write,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(debs)?;
    let missing: Vec<String> = pkgs
        .iter()
        .filter(|(p, v)| deb_file(debs, p, v).is_none())
        .map(|(p, v)| format!("{p}={v}"))
        .collect();
    if !missing.is_empty() {
        writeln!(out, "lab fetch: apt-get download {}", missing.join(" "))?;
        let mut c = Command::new("apt-get");
        c.arg("download").args(&missing).current_dir(debs);
        cmd::run(c, APT_TIMEOUT, "apt-get download")?;
    }
    pkgs.iter()
        .map(|(p, v)| {
            deb_file(debs, p, v).ok_or_else(|| {
                anyhow!(
                    "apt-get download left no {p}_{v}_*.deb in {}",
                    debs.display()
                )
            })
        })
        .collect()
}

/// Unpack `debs` into `root` unless `root/.unpacked` already lists exactly them.
fn unpack(root: &Path, debs: &[PathBuf]) -> anyhow::Result<()> {
    let stamp = root.join(".unpacked");
    let want: String = debs
        .iter()
        .map(|d| format!("{}\n", d.file_name().unwrap_or_default().to_string_lossy()))
        .collect();
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == want) {
        return Ok(());
    }
    if root.exists() {
        std::fs::remove_dir_all(root)?;
    }
    std::fs::create_dir_all(root)?;
    for d in debs {
        let mut c = Command::new("dpkg-deb");
        c.arg("-x").arg(d).arg(root);
        cmd::run(
            c,
            Duration::from_secs(300),
            &format!("dpkg-deb -x {}", d.display()),
        )?;
    }
    std::fs::write(stamp, want)?;
    Ok(())
}

/// Fetch and unpack one kernel (and the userland); returns the kernel.
pub fn fetch(lab: &Path, series: Series, out: &mut dyn Write) -> anyhow::Result<Kernel> {
    fetch_all(lab, series, true, out).map(|(k, _)| k)
}

/// What a previous fetch chose: `release` line, then `package version` lines (kernel,
/// a `--` line, userland).
type Resolved = (String, Vec<(String, String)>, Vec<(String, String)>);

fn read_resolved(p: &Path) -> Option<Resolved> {
    let t = std::fs::read_to_string(p).ok()?;
    let mut lines = t.lines();
    let release = lines.next()?.to_string();
    let (mut k, mut u, mut user) = (Vec::new(), Vec::new(), false);
    for l in lines {
        if l == "--" {
            user = true;
            continue;
        }
        let (n, v) = l.split_once(' ')?;
        if user { &mut u } else { &mut k }.push((n.to_string(), v.to_string()));
    }
    (!k.is_empty() && !u.is_empty()).then_some((release, k, u))
}

/// Fetch (or, with `refresh` false, reuse what the last fetch chose when its packages are
/// all downloaded) one kernel and the userland.
pub fn fetch_all(
    lab: &Path,
    series: Series,
    refresh: bool,
    out: &mut dyn Write,
) -> anyhow::Result<(Kernel, User)> {
    let debs = lab.join("debs");
    let cache = lab.join(format!(
        "resolved-{}",
        series.version_prefix().trim_end_matches('.')
    ));
    let cached = read_resolved(&cache).filter(|(_, k, u)| {
        !refresh
            && k.iter()
                .chain(u)
                .all(|(p, v)| deb_file(&debs, p, v).is_some())
    });
    let (release, kpkgs, upkgs) = match cached {
        Some(r) => r,
        None => {
            ensure_apt(out)?;
            let (release, kpkgs) = resolve_kernel(series)?;
            let upkgs = resolve_user()?;
            let mut t = format!("{release}\n");
            for (n, v) in &kpkgs {
                t.push_str(&format!("{n} {v}\n"));
            }
            t.push_str("--\n");
            for (n, v) in &upkgs {
                t.push_str(&format!("{n} {v}\n"));
            }
            std::fs::create_dir_all(lab)?;
            std::fs::write(&cache, t)?;
            (release, kpkgs, upkgs)
        }
    };
    let kdebs = download(&debs, &kpkgs, out)?;
    let sysroot = lab.join(format!("kernel-{release}"));
    unpack(&sysroot, &kdebs)?;
    // linux-headers-*-amd64/Makefile includes the -common Makefile by absolute path.
    let kernel = Kernel {
        release: release.clone(),
        sysroot: sysroot.clone(),
        packages: kpkgs,
    };
    let common = kernel
        .packages
        .iter()
        .find(|(n, _)| n.starts_with("linux-headers-") && n.ends_with("-common"))
        .map(|(n, _)| sysroot.join("usr/src").join(n))
        .ok_or_else(|| anyhow!("no linux-headers-*-common among {:?}", kernel.packages))?;
    std::fs::write(
        kernel.headers().join("Makefile"),
        format!("include {}/Makefile\n", common.display()),
    )?;
    for p in [kernel.vmlinuz(), kernel.headers().join(".config")] {
        if !p.is_file() {
            bail!(
                "{} is missing after unpacking {:?}",
                p.display(),
                kernel.packages
            );
        }
    }

    let udebs = download(&debs, &upkgs, out)?;
    let uroot = lab.join("user");
    unpack(&uroot, &udebs)?;
    let user = User {
        root: uroot,
        packages: upkgs,
    };
    let names: BTreeSet<&str> = user.packages.iter().map(|(n, _)| n.as_str()).collect();
    for p in ["busybox-static", "rt-app", "trace-cmd"] {
        if !names.contains(p) {
            bail!("{p} was not resolved");
        }
    }
    Ok((kernel, user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends_takes_names_exact_versions_and_first_alternatives() {
        let s = "Package: linux-headers-6.12.95+deb12-amd64\nVersion: 6.12.95-1~bpo12+1\n\
                 Depends: linux-headers-6.12.95+deb12-common (= 6.12.95-1~bpo12+1), linux-kbuild-6.12.95+deb12 (= 6.12.95-1~bpo12+1),\n \
                 gcc-12 | gcc, libc6:any (>= 2.34)\n\n";
        assert_eq!(
            depends(s),
            vec![
                (
                    "linux-headers-6.12.95+deb12-common".into(),
                    Some("6.12.95-1~bpo12+1".into())
                ),
                (
                    "linux-kbuild-6.12.95+deb12".into(),
                    Some("6.12.95-1~bpo12+1".into())
                ),
                ("gcc-12".into(), None),
                ("libc6".into(), None),
            ]
        );
        assert_eq!(field(s, "Version").as_deref(), Some("6.12.95-1~bpo12+1"));
    }
}
