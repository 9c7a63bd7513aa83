// SPDX-License-Identifier: GPL-2.0-only
//! schedmath-host: drives the `schedmath` core from kernel fixtures, platform files and
//! workloads, and reports what the kernel would compute.

pub mod fixtures;
pub mod governor;
pub mod idle;
pub mod platform;
pub mod sim;
pub mod verify;
