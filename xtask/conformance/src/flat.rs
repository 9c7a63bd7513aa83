// SPDX-License-Identifier: GPL-2.0-only
//! A core input struct plus a case's own fields, read from one flat fixture object.
//!
//! The fixtures write the core's inputs (e.g. a `SugovRq`) as plain keys beside
//! case-specific ones (`time`, `flags`, `boost`). [`Flat`] reuses the core struct instead
//! of copying its field list: JSON reads both halves from the one flat object (host,
//! feature `json`), postcard carries the pair (postcard cannot flatten).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// `T` (a core struct) and `X` (the case's other fields) from one flat object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flat<T, X>(pub T, pub X);

impl<'de, T: DeserializeOwned, X: DeserializeOwned> Deserialize<'de> for Flat<T, X> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[cfg(feature = "json")]
        if d.is_human_readable() {
            // Both halves read the one object, each through the fixtures' C integer
            // narrowing (serde's `flatten` would buffer the integers and refuse a wide
            // one where the kernel truncates it); each ignores the other's keys.
            use crate::json_support::Narrowing;
            use serde::de::Error;
            let v = serde_json::Value::deserialize(d)?;
            let t = T::deserialize(Narrowing(&v)).map_err(D::Error::custom)?;
            let x = X::deserialize(Narrowing(&v)).map_err(D::Error::custom)?;
            return Ok(Flat(t, x));
        }
        let (t, x) = <(T, X)>::deserialize(d)?;
        Ok(Flat(t, x))
    }
}
