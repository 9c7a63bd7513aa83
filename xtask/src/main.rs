// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask <job>`: the project's jobs (alias in .cargo/config.toml).
//!
//! * `verify [--fixtures DIR]... [--suite PATTERN] [--target TRIPLE]`: every kernel fixture
//!   suite on the host, or on a Cortex-M under QEMU.
//! * `fuzz --seconds N`: every cargo-fuzz target in `fuzz/`, N seconds each.
//! * `bench [--check] [--json]`: instructions and ns per op of the core's hot paths.
//! * `pgo-bench [-- ARGS]`: the simulator benchmark built with profile-guided optimisation.
//! * `lab fetch|run|compare`: Debian's kernels under QEMU running rt-app, traced (src/lab/).
//! * `firmware [--bless]`: the example firmware under QEMU, its log against the snapshot.
//! * `panic-check`, `size`: the core's panic freedom and code size on a Cortex-M.
//! * `bless`: rewrite README's generated parts and the insta snapshots from what the code
//!   prints now.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod bless;
mod embedded;
mod firmware;
mod fuzz;
mod lab;
mod pgo;
mod target;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "schedmath project jobs")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every kernel fixture suite (default: fixtures/kernel/) and compare bit for bit.
    ///
    /// Example: cargo xtask verify --fixtures /tmp/more-pelt-cases --suite se_sequence
    Verify {
        #[command(flatten)]
        args: schedmath_host::verify::VerifyArgs,
        /// Run the suites on an embedded target under QEMU instead of the host
        /// (thumbv7m-none-eabi: Cortex-M3 lm3s6965evb; thumbv7em-none-eabihf: Cortex-M4F mps2-an386).
        #[arg(long, value_name = "TRIPLE")]
        target: Option<String>,
    },
    /// Prove the core has no panic path: link a firmware-like binary that calls every core
    /// entry point with a panic handler that references an undefined symbol.
    ///
    /// Example: cargo xtask panic-check && cargo xtask panic-check --inject
    PanicCheck {
        /// Add a deliberate panic path; the check must then fail to link (self-test).
        #[arg(long)]
        inject: bool,
    },
    /// Run every cargo-fuzz target in fuzz/ for N seconds each (installs cargo-fuzz and the
    /// nightly toolchain if missing; seeds corpora from fixtures/).
    ///
    /// Example: cargo xtask fuzz --seconds 20
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
        /// Run only this target (e.g. core_pelt).
        #[arg(long, value_name = "TARGET")]
        only: Option<String>,
    },
    /// Instructions per op (callgrind) and ns per op (criterion) of the core's hot paths;
    /// `--check` fails on a count 5 % over xtask/bench-baseline.json.
    ///
    /// Example: cargo xtask bench --check
    Bench {
        #[command(flatten)]
        args: bench::BenchArgs,
    },
    /// The simulator benchmark (`sim_functional`, `sim-bench` profile) built with
    /// profile-guided optimisation: instrumented build, training runs, llvm-profdata merge,
    /// then `cargo bench` with the profile (all under target/pgo/).
    ///
    /// Example: cargo xtask pgo-bench -- '10s$' --measurement-time 20
    PgoBench {
        #[command(flatten)]
        args: pgo::PgoArgs,
    },
    /// The kernel lab: Debian's kernels under QEMU running rt-app, traced with the probe
    /// module (fixtures/lab/README.md).
    #[command(subcommand)]
    Lab(lab::LabCmd),
    /// Build the example power-manager firmware, run it under QEMU (mps2-an386) and compare
    /// its defmt log with xtask/firmware-snapshot.txt.
    ///
    /// Example: cargo xtask firmware
    Firmware {
        /// Rewrite the snapshot with this run's log.
        #[arg(long)]
        bless: bool,
    },
    /// Code size of the core per module for thumbv7m-none-eabi, and of the probe binary.
    ///
    /// Example: cargo xtask size
    Size,
    /// Re-run what README tables and insta snapshots quote and rewrite them: README's
    /// profile list and study tables, then every snapshot, then the tests once more.
    ///
    /// Example: cargo xtask bless && git diff
    Bless,
}

/// The workspace root (xtask lives one level below it).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Verify { args, target: None } => schedmath_host::verify::run(
            &args,
            &workspace_root().join("fixtures/kernel"),
            &mut std::io::stdout().lock(),
        ),
        Cmd::Verify {
            args,
            target: Some(t),
        } => target::run(&args, &t, &workspace_root(), &mut std::io::stdout().lock()),
        Cmd::PanicCheck { inject } => {
            embedded::panic_check(&workspace_root(), inject, &mut std::io::stdout().lock())
        }
        Cmd::Fuzz { seconds, only } => fuzz::run(
            &workspace_root(),
            seconds,
            only.as_deref(),
            &mut std::io::stdout().lock(),
        ),
        Cmd::Bench { args } => bench::run(&workspace_root(), &args, &mut std::io::stdout().lock()),
        Cmd::PgoBench { args } => {
            pgo::pgo_bench(&workspace_root(), &args, &mut std::io::stdout().lock())
        }
        Cmd::Lab(c) => lab::main(&workspace_root(), c, &mut std::io::stdout().lock()),
        Cmd::Firmware { bless } => {
            firmware::run(&workspace_root(), bless, &mut std::io::stdout().lock())
        }
        Cmd::Size => {
            embedded::size(&workspace_root(), &mut std::io::stdout().lock()).map(|()| true)
        }
        Cmd::Bless => bless::run(&workspace_root(), &mut std::io::stdout().lock()),
    };
    schedmath_host::exit_code(result)
}
