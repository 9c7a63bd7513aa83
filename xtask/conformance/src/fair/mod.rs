// SPDX-License-Identifier: GPL-2.0-only
//! Cases of `fixtures/kernel/fair/` (that folder's README describes every field).
//!
//! One submodule per concern: [`weight`] (calc_delta.jsonl, prio_tables.jsonl),
//! [`eevdf`] (eevdf.jsonl), [`seq`] (eevdf_sequence.jsonl), [`cfs`] (cfs_v6_1.jsonl),
//! [`group`] (group_shares*.jsonl) and [`lb`] (lb_classify*.jsonl). The suite header's
//! `variant` (`mainline` or `cfs-v6.1`) picks the profile for the functions both kernels
//! have; a `fn` both files use with different inputs (`place_entity`,
//! `update_min_vruntime`, `update_sysctl`) has one input type whose fields are the union,
//! each variant requiring its own.

use schedmath::fair::{DivideTrap, LoadWeight};
use schedmath::profile::{Concern, Profile};
use serde::{Deserialize, Serialize};

use crate::CaseError;

pub mod cfs;
pub mod eevdf;
pub mod group;
pub mod lb;
pub mod seq;
pub mod weight;

/// The profile of a fair suite's header `variant` (`mainline` or `cfs-v6.1`), from the
/// core's one profile table.
pub fn profile_of(variant: &str) -> Result<Profile, CaseError> {
    Profile::from_fixture_variant(Concern::Fair, variant).ok_or(CaseError::UnknownVariant)
}

/// Whether `variant` is the 6.1 CFS.
fn is_cfs(variant: &str) -> Result<bool, CaseError> {
    Ok(profile_of(variant)?.fair == schedmath::profile::FairClass::CfsV6_1)
}

/// A field a variant needs.
fn need<T>(v: Option<T>, name: &'static str) -> Result<T, CaseError> {
    v.ok_or(CaseError::Missing(name))
}

/// A kernel fault on the fixture's input: the case is outside what the kernel computes.
fn trap(_: DivideTrap) -> CaseError {
    CaseError::OutOfRange("divisor")
}

/// `{weight, inv_weight}` as the core's struct.
fn lw(weight: u64, inv_weight: u32) -> LoadWeight {
    LoadWeight { weight, inv_weight }
}

/// `{inv_weight}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvWeightOut {
    /// The inverse weight after the lazy update.
    pub inv_weight: u32,
}
