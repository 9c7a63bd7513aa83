// SPDX-License-Identifier: GPL-2.0-only
//! Cases of `fixtures/kernel/capacity/`.

use schedmath::math::cap_scale;
use serde::{Deserialize, Serialize};

use crate::{Case, CaseError};

/// `cap_scale` {v, s} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CapScale {
    /// Value.
    pub v: u64,
    /// Scale (capacity units).
    pub s: u64,
}

/// `{ret}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ret<T> {
    /// The function's return value.
    pub ret: T,
}

impl Case for CapScale {
    type Out = Ret<u64>;
    fn run(&self) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: cap_scale(self.v, self.s),
        })
    }
}
