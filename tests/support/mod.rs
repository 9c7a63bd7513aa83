// SPDX-License-Identifier: GPL-2.0-only
//! Helpers shared by the root package's tests.
pub mod rust_src;
