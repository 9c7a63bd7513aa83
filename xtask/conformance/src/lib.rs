// SPDX-License-Identifier: GPL-2.0-only
//! Typed kernel fixture cases and the drivers that run them on the core.
//!
//! One place says how a fixture case drives the core, so the host verifier (JSON in,
//! `cargo xtask verify`) and the Cortex-M runner (postcard records streamed over
//! semihosting, `cargo xtask verify --target ...`) run the very same code.
//!
//! * A [`Case`] is a stateless call: typed input → typed output.
//! * A [`Sequence`] is a stateful suite: `init` → state, then each op → the observable
//!   state after it (`out.after[i]`).
//!
//! Every case type is registered once in [`for_each_kind!`]; its position is the kind id
//! used in the binary stream.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "json")]
extern crate std;

use serde::{de::DeserializeOwned, Serialize};

pub mod capacity;
pub mod cpuidle;
pub mod fair;
pub mod flat;
#[cfg(feature = "json")]
mod json_support;
pub mod limit;
pub mod pelt;
pub mod record;
pub mod registry;
pub mod schedutil;

#[cfg(feature = "json")]
pub use json_support::Encoded;

/// Why a case could not be run (input outside what the driver can represent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CaseError {
    /// The header `variant` or an input's `variant` is not one this driver knows.
    UnknownVariant,
    /// A table or list is longer than the named fixed capacity the core uses.
    TooLong(limit::Limit),
    /// The op's name is not one this sequence knows.
    UnknownOp,
    /// A field this variant or op needs is absent (its name).
    Missing(&'static str),
    /// A field's value is outside what the kernel code computes (its name).
    OutOfRange(&'static str),
}

impl core::fmt::Display for CaseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::UnknownVariant => f.write_str("unknown variant"),
            Self::TooLong(limit) => write!(f, "more entries than the core's {limit}"),
            Self::UnknownOp => f.write_str("unknown op"),
            Self::Missing(field) => write!(f, "missing field `{field}`"),
            Self::OutOfRange(field) => write!(f, "field `{field}` out of range"),
        }
    }
}

/// A stateless fixture case: `in` → `out`.
pub trait Case: Serialize + DeserializeOwned {
    /// The fixture's `out` object.
    type Out: Serialize + DeserializeOwned + PartialEq + core::fmt::Debug;
    /// Runs the case on the core; `variant` is the suite header's (the behaviour
    /// profile, e.g. `ou-lone-task`), which most cases do not read.
    fn run(&self, variant: &str) -> Result<Self::Out, CaseError>;
}

/// A stateful fixture suite: `in.init` and `in.ops[i]` → `out.after[i]`.
pub trait Sequence {
    /// Everything in `in` except `ops` (initial state, configuration).
    type Init: Serialize + DeserializeOwned;
    /// One element of `in.ops`.
    type Op: Serialize + DeserializeOwned;
    /// One element of `out.after`.
    type After: Serialize + DeserializeOwned + PartialEq + core::fmt::Debug;
    /// The running state.
    type State;
    /// Builds the state from `init`; `variant` is the suite header's.
    fn start(init: &Self::Init, variant: &str) -> Result<Self::State, CaseError>;
    /// Applies one op and reports the observable state after it.
    fn apply(state: &mut Self::State, op: &Self::Op) -> Result<Self::After, CaseError>;
}
