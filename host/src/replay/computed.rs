// SPDX-License-Identifier: GPL-2.0-only
//! What the inferred replay computed, for a trace without the kernel's own values (a
//! board's `trace-cmd record -e sched` with neither the lab's probe nor LISA's
//! `sched_pelt_*` events): per entity, its `util_avg` after each of the replay's updates
//! (count, mean, max) and its signals at the trace's end. There is nothing to compare
//! with, so these are the numbers themselves: what the kernel would have computed on that
//! timeline, under the traced kernel's profile or a what-if one.

use schedmath::pelt::SchedAvg;
use schedmath::util_est::_task_util_est;
use serde_json::json;

use super::stats::{mean, round3};

/// One entity's signal as the replay computed it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signal {
    /// Updates the replay made (`__update_load_avg_se()` / `update_cfs_rq_load_avg()`).
    pub updates: u64,
    /// Sum of `util_avg` after each update (u128: cannot overflow on any trace).
    pub util_sum: u128,
    /// Largest `util_avg` after an update.
    pub util_max: u64,
    /// The signals after the last update.
    pub end: SchedAvg,
    /// The entity existed before the trace's first event (not forked in it): its state
    /// there is unknown and taken as zero, so its first ~100 ms (PELT's 32 ms half-life
    /// decays a start error to 1/8) are not the kernel's.
    pub from_zero: bool,
    /// A task a `sched_switch` of the trace switched in (else nothing it did was seen run).
    pub ran: bool,
}

impl Signal {
    /// Records the state after one update.
    pub fn add(&mut self, avg: &SchedAvg) {
        self.updates += 1;
        self.util_sum += u128::from(avg.util_avg);
        self.util_max = self.util_max.max(avg.util_avg);
        self.end = *avg;
    }

    /// Mean `util_avg` over the updates (0 without one).
    pub fn util_mean(&self) -> f64 {
        mean(self.util_sum, self.updates)
    }
}

/// One entity's computed signal, and the same under a what-if profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Computed {
    /// `pid 1234 rt-app` or `cpu1 /`.
    pub entity: String,
    /// A task (its util_est is reported), not a cfs_rq.
    pub task: bool,
    /// Under the replay's profile.
    pub signal: Signal,
    /// Under the traced kernel's own profile, when the replay's is a what-if.
    pub kernel: Option<Signal>,
}

impl Computed {
    /// The JSON of one entity: `{"entity", "updates", "util_mean", "util_max", "end":
    /// {"util", "load", "runnable", "util_est"}, "from_zero"}` (`util_est`:
    /// _task_util_est(), null for a cfs_rq)`, plus `"kernel": {...}`
    /// (the same fields) for a what-if.
    pub fn to_json(&self) -> serde_json::Value {
        let sig = |s: &Signal| {
            let util_est = self.task.then(|| _task_util_est(&s.end));
            json!({
                "updates": s.updates,
                "util_mean": round3(s.util_mean()),
                "util_max": s.util_max,
                "end": {
                    "util": s.end.util_avg,
                    "load": s.end.load_avg,
                    "runnable": s.end.runnable_avg,
                    "util_est": util_est,
                },
                "from_zero": s.from_zero,
            })
        };
        let mut v = sig(&self.signal);
        v["entity"] = json!(self.entity);
        if let Some(k) = &self.kernel {
            v["kernel"] = sig(k);
        }
        v
    }
}

/// `kernel`'s signals beside `what_if`'s, matched by entity (both replays see the same
/// events, so the same entities).
pub fn pair(what_if: Vec<Computed>, kernel: Vec<Computed>) -> Vec<Computed> {
    let mut k: std::collections::HashMap<String, Signal> =
        kernel.into_iter().map(|c| (c.entity, c.signal)).collect();
    what_if
        .into_iter()
        .map(|mut c| {
            c.kernel = k.remove(&c.entity);
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_counts_its_updates_mean_and_max() {
        let mut s = Signal::default();
        for u in [100, 300, 200] {
            s.add(&SchedAvg {
                util_avg: u,
                ..SchedAvg::default()
            });
        }
        assert_eq!((s.updates, s.util_max, s.end.util_avg), (3, 300, 200));
        assert_eq!(s.util_mean(), 200.0);
        let v = Computed {
            entity: "cpu0 /".into(),
            task: false,
            signal: s,
            kernel: None,
        }
        .to_json();
        assert_eq!(v["util_mean"], 200.0);
        assert_eq!(v["end"]["util"], 200);
        assert!(v["end"]["util_est"].is_null());
        assert!(v.get("kernel").is_none());
    }
}
