// SPDX-License-Identifier: GPL-2.0-only
//! A core input struct plus a case's own fields, read from one flat fixture object.
//!
//! The fixtures write the core's inputs (e.g. a `SugovRq`) as plain keys beside
//! case-specific ones (`time`, `flags`, `boost`). [`Flat`] reuses the core struct instead
//! of copying its field list: JSON reads the flat object with serde's `flatten` (host,
//! feature `json`), postcard carries the pair (postcard cannot flatten).

use serde::{Deserialize, Deserializer, Serialize};

/// `T` (a core struct) and `X` (the case's other fields) from one flat object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flat<T, X>(pub T, pub X);

impl<'de, T: Deserialize<'de>, X: Deserialize<'de>> Deserialize<'de> for Flat<T, X> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[cfg(feature = "json")]
        if d.is_human_readable() {
            #[derive(Deserialize)]
            #[serde(bound = "T: Deserialize<'de>, X: Deserialize<'de>")]
            struct F<T, X> {
                #[serde(flatten)]
                t: T,
                #[serde(flatten)]
                x: X,
            }
            let f = F::<T, X>::deserialize(d)?;
            return Ok(Flat(f.t, f.x));
        }
        let (t, x) = <(T, X)>::deserialize(d)?;
        Ok(Flat(t, x))
    }
}
