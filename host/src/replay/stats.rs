// SPDX-License-Identifier: GPL-2.0-only
//! Per-entity comparison counters: updates, exact updates, max and mean |error| per field.

use serde::Serialize;

/// The compared signals, in report order.
pub const FIELDS: [&str; 4] = ["util", "load", "runnable", "util_est"];

/// One field's errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldErr {
    /// Updates where this field was compared.
    pub n: u64,
    /// Largest |ours - kernel's|.
    pub max: u64,
    /// Sum of |ours - kernel's| (u128: cannot overflow on any trace).
    pub sum: u128,
}

impl FieldErr {
    /// Records one comparison.
    pub fn add(&mut self, ours: u64, kernel: u64) {
        let e = ours.abs_diff(kernel);
        self.n += 1;
        self.max = self.max.max(e);
        self.sum += u128::from(e);
    }

    /// The mean |error| (0 when never compared).
    pub fn mean(&self) -> f64 {
        mean(self.sum, self.n)
    }
}

/// One entity's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntityStats {
    /// `pid 1234 rt-app` or `cpu1 /`.
    pub entity: String,
    /// The kernel's recorded updates compared.
    pub updates: u64,
    /// Updates whose every compared field equals the kernel's.
    pub exact: u64,
    /// Per field of [`FIELDS`].
    pub err: [FieldErr; 4],
    /// How often the kernel's state before a call differed from ours after the previous
    /// one (something outside pelt.c rewrote it: attach/detach, removed load, a new task),
    /// so the chain restarted from the kernel's state.
    pub restarts: u64,
}

/// `sum / n`, 0 for no sample.
pub fn mean(sum: u128, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum as f64 / n as f64
    }
}

/// Rounds a mean for JSON and tables (3 decimals).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[derive(Serialize)]
struct ErrJson {
    util: serde_json::Value,
    load: serde_json::Value,
    runnable: serde_json::Value,
    util_est: serde_json::Value,
}

/// `{"entity", "updates", "exact", "max_abs_err", "mean_abs_err"}` (issue 12's schema).
#[derive(Serialize)]
pub struct EntityJson {
    entity: String,
    updates: u64,
    exact: u64,
    max_abs_err: ErrJson,
    mean_abs_err: ErrJson,
}

impl EntityStats {
    /// The JSON object of this entity; a field never compared is `null`.
    pub fn to_json(&self) -> EntityJson {
        let val = |i: usize, mean: bool| -> serde_json::Value {
            let f = &self.err[i];
            if f.n == 0 {
                serde_json::Value::Null
            } else if mean {
                serde_json::json!(round3(f.mean()))
            } else {
                serde_json::json!(f.max)
            }
        };
        let errs = |mean| ErrJson {
            util: val(0, mean),
            load: val(1, mean),
            runnable: val(2, mean),
            util_est: val(3, mean),
        };
        EntityJson {
            entity: self.entity.clone(),
            updates: self.updates,
            exact: self.exact,
            max_abs_err: errs(false),
            mean_abs_err: errs(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_max() {
        let mut f = FieldErr::default();
        f.add(10, 12);
        f.add(5, 4);
        f.add(7, 7);
        assert_eq!((f.n, f.max, f.sum), (3, 2, 3));
        assert_eq!(f.mean(), 1.0);
    }
}
