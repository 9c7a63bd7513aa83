// SPDX-License-Identifier: GPL-2.0-only
//! The fixed capacities the drivers read lists into, each a named [`Limit`].
//!
//! The kernel has no such limits (its tables are allocated); the core's `heapless` tables
//! do, sized to cover real hardware. A fixture list longer than its limit is refused with
//! a message that names the limit and its value ("17 entries, more than the core's
//! CPUIDLE_STATE_MAX = 10"), never a bare parse error; the host adds the file, line and
//! field path.

use core::fmt;
use core::marker::PhantomData;

use heapless::{LinearMap, Vec};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A named fixed capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Limit {
    /// The constant's name, e.g. `EM_MAX_PERF_STATES`.
    pub name: &'static str,
    /// Its value.
    pub max: usize,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.name, self.max)
    }
}

macro_rules! limits {
    ($($(#[$doc:meta])* $id:ident = $path:path;)*) => {
        $(
            $(#[$doc])*
            pub const $id: Limit = Limit { name: stringify!($id), max: $path };
        )*
    };
}

limits! {
    /// Performance states of an Energy Model table (`schedmath::energy`).
    EM_MAX_PERF_STATES = schedmath::energy::EM_MAX_PERF_STATES;
    /// Rows of a cpufreq frequency table (`schedmath::cpufreq`).
    CPUFREQ_TABLE_MAX = schedmath::cpufreq::CPUFREQ_TABLE_MAX;
    /// CPUs of a topology or root domain (`schedmath::capacity::topology`).
    NR_CPUS = schedmath::capacity::topology::NR_CPUS;
    /// Idle states of a cpuidle driver (the kernel's own `CPUIDLE_STATE_MAX`).
    CPUIDLE_STATE_MAX = schedmath::cpuidle::CPUIDLE_STATE_MAX;
    /// CPUs of one shared cpufreq policy in the governor sequences.
    POLICY_CPUS_MAX = crate::schedutil::governor::POLICY_CPUS_MAX;
    /// Buckets of a uclamp runqueue (the kernel's Kconfig range ends at 20).
    UCLAMP_BUCKETS_MAX = schedmath::uclamp::UCLAMP_BUCKETS_MAX;
    /// Tasks of the uclamp runqueue sequences.
    UCLAMP_SEQ_TASKS = crate::capacity::uclamp::UCLAMP_SEQ_TASKS;
    /// `HALFLIFE` of the PELT table generator (its table's length).
    GENERATOR_MAX_HALFLIFE = crate::pelt::GENERATOR_MAX_HALFLIFE;
    /// Hierarchy levels of a 6.1 CFS case (`schedmath::fair::cfs`).
    CFS_MAX_LEVELS = schedmath::fair::cfs::CFS_MAX_LEVELS;
    /// Queued entities of an `avg_vruntime_entities` case.
    EEVDF_MAX_QUEUED = crate::fair::eevdf::MAX_QUEUED;
    /// Entities of an EEVDF runqueue sequence.
    SEQ_MAX_ENTITIES = crate::fair::seq::SEQ_MAX_ENTITIES;
    /// Nice levels of the kernel's prio tables (-20..19).
    NICE_LEVELS = crate::fair::weight::NICE_LEVELS;
}

/// The error of a list longer than `limit`: "N entries, more than the core's LIMIT = M".
fn too_long<E: de::Error>(n: usize, limit: Limit) -> E {
    E::custom(format_args!("{n} entries, more than the core's {limit}"))
}

struct SeqVisitor<T, const N: usize>(Limit, PhantomData<T>);

impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for SeqVisitor<T, N> {
    type Value = Vec<T, N>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of at most {} entries", self.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T, N>, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element()? {
            if v.push(x).is_err() {
                let mut n = N + 1;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                return Err(too_long(n, self.0));
            }
        }
        Ok(v)
    }
}

struct MapVisitor<K, V, const N: usize>(Limit, PhantomData<(K, V)>);

impl<'de, K, V, const N: usize> Visitor<'de> for MapVisitor<K, V, N>
where
    K: Deserialize<'de> + Eq,
    V: Deserialize<'de>,
{
    type Value = LinearMap<K, V, N>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map of at most {} entries", self.0)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LinearMap<K, V, N>, A::Error> {
        let mut m = LinearMap::new();
        while let Some((k, v)) = map.next_entry()? {
            if m.insert(k, v).is_err() {
                let mut n = N + 1;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    n += 1;
                }
                return Err(too_long(n, self.0));
            }
        }
        Ok(m)
    }
}

/// Reads a list into a `heapless::Vec` of `limit.max` entries, naming `limit` when it is
/// longer.
pub fn list<'de, D, T, const N: usize>(d: D, limit: Limit) -> Result<Vec<T, N>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_seq(SeqVisitor::<T, N>(limit, PhantomData))
}

/// Reads a map into a `heapless::LinearMap` of `limit.max` entries, naming `limit` when
/// it is longer.
pub fn map<'de, D, K, V, const N: usize>(d: D, limit: Limit) -> Result<LinearMap<K, V, N>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Eq,
    V: Deserialize<'de>,
{
    d.deserialize_map(MapVisitor::<K, V, N>(limit, PhantomData))
}

/// `deserialize_with` functions for list fields, one module per limit (plain and
/// `Option`al lists, and maps keyed by CPU).
macro_rules! field_fns {
    ($($module:ident => $limit:ident;)*) => {
        $(
            #[doc = concat!("Fields bounded by [`", stringify!($limit), "`].")]
            pub mod $module {
                use super::*;

                /// A list.
                pub fn list<'de, D, T, const N: usize>(d: D) -> Result<Vec<T, N>, D::Error>
                where
                    D: Deserializer<'de>,
                    T: Deserialize<'de>,
                {
                    super::list(d, $limit)
                }

                /// An optional list (`null` or absent is `None`).
                pub fn opt_list<'de, D, T, const N: usize>(
                    d: D,
                ) -> Result<Option<Vec<T, N>>, D::Error>
                where
                    D: Deserializer<'de>,
                    T: Deserialize<'de>,
                {
                    struct W<T, const N: usize>(Vec<T, N>);
                    impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for W<T, N> {
                        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                            super::list(d, $limit).map(W)
                        }
                    }
                    Ok(Option::<W<T, N>>::deserialize(d)?.map(|w| w.0))
                }

                /// An optional map.
                #[allow(dead_code)]
                pub fn opt_map<'de, D, K, V, const N: usize>(
                    d: D,
                ) -> Result<Option<LinearMap<K, V, N>>, D::Error>
                where
                    D: Deserializer<'de>,
                    K: Deserialize<'de> + Eq,
                    V: Deserialize<'de>,
                {
                    struct W<K, V, const N: usize>(LinearMap<K, V, N>);
                    impl<'de, K, V, const N: usize> Deserialize<'de> for W<K, V, N>
                    where
                        K: Deserialize<'de> + Eq,
                        V: Deserialize<'de>,
                    {
                        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                            super::map(d, $limit).map(W)
                        }
                    }
                    Ok(Option::<W<K, V, N>>::deserialize(d)?.map(|w| w.0))
                }

                /// A map.
                #[allow(dead_code)]
                pub fn map<'de, D, K, V, const N: usize>(
                    d: D,
                ) -> Result<LinearMap<K, V, N>, D::Error>
                where
                    D: Deserializer<'de>,
                    K: Deserialize<'de> + Eq,
                    V: Deserialize<'de>,
                {
                    super::map(d, $limit)
                }
            }
        )*
    };
}

field_fns! {
    em_perf_states => EM_MAX_PERF_STATES;
    cpufreq_table => CPUFREQ_TABLE_MAX;
    nr_cpus => NR_CPUS;
    cpuidle_states => CPUIDLE_STATE_MAX;
    policy_cpus => POLICY_CPUS_MAX;
    uclamp_tasks => UCLAMP_SEQ_TASKS;
}
