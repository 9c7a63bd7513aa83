// SPDX-License-Identifier: GPL-2.0-only
//! Cases of `fixtures/kernel/capacity/` (that folder's README describes every field).
//!
//! One submodule per suite file. Inputs are flat structs named after the fixture's `in`
//! keys (postcard cannot `flatten`), outputs carry every key of the fixture's `out`
//! (`deny_unknown_fields`, so an expected key without a typed field is an encoding error
//! rather than a silently skipped comparison). 0/1 flags are [`Flag`]s.

use schedmath::capacity::{CpuCapacity, CpuUtilRq};
use schedmath::math::cap_scale;
use schedmath::overutilized::OverutilizedCpu;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Case, CaseError};

pub mod effective_cpu_util;
pub mod energy;
pub mod fits;
pub mod normalize;
pub mod overutilized;
pub mod scale_rt_capacity;
pub mod uclamp;

/// A 0/1 fixture flag: a JSON integer, true when non-zero (C's truth test; the kernel
/// reads these as `bool`s or tests them with `if`), one byte in postcard, written back
/// as 0/1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(u8::from(self.0))
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // u64: postcard's 0/1 byte is the same varint; the JSON reader narrows any
        // integer to its bits first.
        Ok(Flag(u64::deserialize(d)? != 0))
    }
}

impl From<bool> for Flag {
    fn from(b: bool) -> Self {
        Flag(b)
    }
}

/// `{ret}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ret<T> {
    /// The function's return value.
    pub ret: T,
}

/// Collects into a fixed-capacity list: more items than it holds is
/// [`CaseError::TooLong`], never a panic (heapless' `collect` panics on overflow).
pub(crate) fn bounded<T, const N: usize>(
    items: impl IntoIterator<Item = T>,
    limit: crate::limit::Limit,
) -> Result<heapless::Vec<T, N>, CaseError> {
    let mut v = heapless::Vec::new();
    for x in items {
        v.push(x).map_err(|_| CaseError::TooLong(limit))?;
    }
    Ok(v)
}

/// `{ret}` from a bool result.
pub(crate) fn ret_flag(b: bool) -> Result<Ret<Flag>, CaseError> {
    Ok(Ret { ret: Flag(b) })
}

/// The four per-CPU capacity fields most capacity cases carry, as the core's struct.
fn cpu_capacity(
    capacity_orig: u64,
    cpu_capacity: u64,
    hw_load_avg: u64,
    cpufreq_pressure: u64,
) -> CpuCapacity {
    CpuCapacity {
        capacity_orig,
        cpu_capacity,
        hw_load_avg,
        cpufreq_pressure,
    }
}

/// The `cpu_util()` view of a CPU of which a suite gives only `cfs_util_avg` and
/// `cfs_util_est`: the overutilized model's (UTIL_EST on, no runnable boost).
fn cfs_rq(capacity_orig: u64, cfs_util_avg: u64, cfs_util_est: u32) -> CpuUtilRq {
    OverutilizedCpu {
        capacity: CpuCapacity {
            capacity_orig,
            ..CpuCapacity::default()
        },
        cfs_util_avg,
        cfs_util_est,
        ..OverutilizedCpu::default()
    }
    .util_rq()
}

/// `cap_scale` {v, s} → {ret}.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CapScale {
    /// Value.
    pub v: u64,
    /// Scale (capacity units).
    pub s: u64,
}

impl Case for CapScale {
    type Out = Ret<u64>;
    fn run(&self, _: &str) -> Result<Ret<u64>, CaseError> {
        Ok(Ret {
            ret: cap_scale(self.v, self.s),
        })
    }
}
