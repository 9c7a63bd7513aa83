// SPDX-License-Identifier: GPL-2.0-only
//! External commands under a deadline.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Wait for `child` until `timeout`; kill it past the deadline. `what` names the step in
/// the error.
pub fn wait_deadline(
    mut child: Child,
    timeout: Duration,
    what: &str,
) -> anyhow::Result<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().with_context(|| format!("{what}: wait"))? {
            return Ok(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{what}: no result after {} s (killed)", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Run `cmd` with output captured (to temporary files, so a chatty command cannot block
/// on a full pipe); error with its stderr tail when it fails or times out.
pub fn run(mut cmd: Command, timeout: Duration, what: &str) -> anyhow::Result<Output> {
    let dir = tempfile::tempdir().context("temporary directory")?;
    let out_path = dir.path().join("stdout");
    let err_path = dir.path().join("stderr");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .spawn()
        .with_context(|| format!("{what}: cannot start {:?}", cmd.get_program()))?;
    let status = wait_deadline(child, timeout, what)?;
    let stdout = std::fs::read(&out_path)?;
    let stderr = std::fs::read(&err_path)?;
    if !status.success() {
        let tail: String = String::from_utf8_lossy(&stderr)
            .lines()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        bail!("{what}: {status}\n{tail}");
    }
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// `run` and return stdout as text.
pub fn text(cmd: Command, timeout: Duration, what: &str) -> anyhow::Result<String> {
    let o = run(cmd, timeout, what)?;
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Whether `prog` is on PATH.
pub fn have(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
}

/// Whether we run as root (apt needs it).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

/// Make sure each `(program, debian package)` is installed: apt-get install what is
/// missing (as root), else a clear error.
pub fn ensure_tools(tools: &[(&str, &str)]) -> anyhow::Result<()> {
    ensure_tools_from(tools, None)
}

/// [`ensure_tools`], installing from apt suite `suite` (`-t`) when given.
pub fn ensure_tools_from(tools: &[(&str, &str)], suite: Option<&str>) -> anyhow::Result<()> {
    let missing: Vec<&str> = tools
        .iter()
        .filter(|(prog, _)| !have(prog))
        .map(|&(_, pkg)| pkg)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !is_root() {
        bail!(
            "missing tools; install the Debian packages {} (as root: apt-get install {})",
            missing.join(", "),
            missing.join(" ")
        );
    }
    let mut c = Command::new("apt-get");
    c.args(["install", "-y", "-q", "--no-install-recommends"]);
    if let Some(t) = suite {
        c.args(["-t", t]);
    }
    c.args(&missing).env("DEBIAN_FRONTEND", "noninteractive");
    run(
        c,
        Duration::from_secs(900),
        &format!("apt-get install {}", missing.join(" ")),
    )?;
    Ok(())
}
