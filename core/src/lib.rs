// SPDX-License-Identifier: GPL-2.0-only
//! schedmath — the Linux scheduler's integer arithmetic, bit for bit.
//!
//! Each module mirrors one kernel file (named in its module doc) and keeps the kernel's
//! function names, integer widths, truncation order and wrapping, because the kernel
//! fixtures compare bits. Everything the kernel reads from per-CPU or runqueue state is an
//! explicit input; behaviour that differs between kernel versions or patches is chosen by a
//! [`profile::Profile`] value, never by a copied function.
//!
//! `#![no_std]`, no allocation, no `unsafe`, no floats outside table generation; no input
//! makes it panic (it wraps where the kernel wraps and reports where the kernel would trap).
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

#[cfg(feature = "std")]
extern crate std;

pub mod capacity;
pub mod cpufreq;
pub mod cpuidle;
pub mod energy;
pub mod fair;
pub mod math;
pub mod overutilized;
pub mod pelt;
pub mod profile;
pub mod schedutil;
pub mod uclamp;
pub mod util_est;

pub use profile::Profile;
