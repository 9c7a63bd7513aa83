// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask lab fetch|run`: Debian's kernels under QEMU with rt-app, traced.
//!
//! * `fetch` downloads Debian's binaries with apt into `target/lab/` ([`fetch`]).
//! * `run` builds the probe module ([`probe`]), an initramfs ([`initramfs`]) and boots
//!   `qemu-system-x86_64` on it ([`run`]); the capture format is fixtures/lab/README.md.
//!
//! Every external command runs under a deadline ([`cmd`]): a stuck download, build or
//! guest is an error naming the step, never a hang.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

pub mod cmd;
pub mod compare;
pub mod fetch;
pub mod initramfs;
pub mod probe;
pub mod run;
pub mod workload;

/// The kernels the lab knows: the series name on the command line and how apt names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Series {
    /// Debian bookworm's 6.1 (CFS).
    #[value(name = "6.1")]
    V6_1,
    /// bookworm-backports' 6.12 (EEVDF, delayed dequeue).
    #[value(name = "6.12")]
    V6_12,
}

impl Series {
    /// The upstream version prefix of `linux-image-amd64`'s version for this series.
    pub fn version_prefix(self) -> &'static str {
        match self {
            Series::V6_1 => "6.1.",
            Series::V6_12 => "6.12.",
        }
    }
}

#[derive(Subcommand)]
pub enum LabCmd {
    /// Download and unpack Debian's kernel, headers, kbuild, busybox, rt-app, trace-cmd
    /// and their libraries into target/lab/ (apt-get download; adds bookworm-backports),
    /// and build the probe module against the kernel.
    ///
    /// Example: cargo xtask lab fetch --kernel 6.12
    Fetch {
        /// Only this kernel (default: both).
        #[arg(long)]
        kernel: Option<Series>,
    },
    /// Boot a Debian kernel under QEMU, run an rt-app workload under trace-cmd with the
    /// probe module loaded, and copy trace.dat, report.txt and meta.json to --out.
    ///
    /// Example: cargo xtask lab run --kernel 6.12 --cpus 2 --workload fixtures/lab/workloads/periodic-25pct-16ms.json --out /tmp/cap
    ///          cargo xtask lab run --kernel 6.1 --workload fixtures/lab/workloads/hogs-nice.json --fixture
    Run(RunArgs),
    /// Simulator vs kernel for a committed capture (README "Simulator vs kernel").
    ///
    /// Example: cargo xtask lab compare periodic-25pct-16ms --kernel 6.12
    Compare {
        /// Workload name (a folder under fixtures/lab/<kernel>/).
        workload: String,
        /// Kernel series (`6.1`, `6.12`) or a full `uname -r`.
        #[arg(long)]
        kernel: String,
    },
}

#[derive(Args, Clone)]
pub struct RunArgs {
    #[arg(long)]
    pub kernel: Series,
    /// vCPUs of the guest.
    #[arg(long, default_value_t = 2)]
    pub cpus: u32,
    /// rt-app JSON (strict JSON; tasks may name a `taskgroup`, see fixtures/lab/README.md).
    #[arg(long)]
    pub workload: PathBuf,
    /// Output folder (created). With --fixture, default fixtures/lab/<uname -r>/<workload>/.
    #[arg(long, required_unless_present = "fixture")]
    pub out: Option<PathBuf>,
    /// Store a committed capture: the rt-app file, report.txt.gz, meta.json and
    /// probe-stats.txt only (fixtures/lab/README.md).
    #[arg(long)]
    pub fixture: bool,
    /// Override rt-app's global.duration (seconds).
    #[arg(long)]
    pub duration: Option<u32>,
    /// auto: KVM when a KVM guest boots here, else TCG.
    #[arg(long, value_enum, default_value_t = Accel::Auto)]
    pub accel: Accel,
    /// TCG only: `-icount shift=N,sleep=off` (guest time follows instructions, not the
    /// host clock).
    #[arg(long, value_name = "SHIFT")]
    pub icount: Option<u32>,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 2048)]
    pub mem_mb: u32,
    /// Per-CPU trace buffer in KiB.
    #[arg(long, default_value_t = 131072)]
    pub buffer_kb: u32,
    /// Wall-clock limit for the whole guest run, seconds (default: 120 + 40 × duration).
    #[arg(long)]
    pub timeout: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Accel {
    Auto,
    Kvm,
    Tcg,
}

/// `target/lab/` of the workspace.
pub fn lab_dir(root: &Path) -> PathBuf {
    root.join("target/lab")
}

pub fn main(root: &Path, cmd: LabCmd, out: &mut dyn std::io::Write) -> anyhow::Result<bool> {
    match cmd {
        LabCmd::Fetch { kernel } => {
            let series = match kernel {
                Some(s) => vec![s],
                None => vec![Series::V6_1, Series::V6_12],
            };
            for s in series {
                let k = fetch::fetch(&lab_dir(root), s, out)?;
                let ko = probe::build(root, &lab_dir(root), &k)?;
                writeln!(
                    out,
                    "lab fetch: {} ready in {}, probe {}",
                    k.release,
                    k.sysroot.display(),
                    ko.display()
                )?;
            }
            Ok(true)
        }
        LabCmd::Run(args) => run::run(root, &args, out),
        LabCmd::Compare { workload, kernel } => compare::compare(root, &workload, &kernel, out),
    }
}
