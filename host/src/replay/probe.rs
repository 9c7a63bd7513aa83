// SPDX-License-Identifier: GPL-2.0-only
//! Replay at the kernel's own update points: the lab probe's per-call records.
//!
//! Each record is one call of `__update_load_avg_se`, `__update_load_avg_blocked_se` or
//! `__update_load_avg_cfs_rq` with its arguments and the entity's `sched_avg` before and
//! after. We keep our own `SchedAvg` per entity, apply the core's function of the same name
//! to it with the recorded arguments, and compare with the kernel's "after".
//!
//! Between two calls the kernel may change the signal outside pelt.c: util_est_update at a
//! dequeue for sleep, attach/detach on migration or fork, removed load folded into the
//! cfs_rq. A util_est change is replayed with the core's `util_est_update` and compared
//! (from the `sched_util_est_se` event when the trace has it, else detected from the next
//! call's "before"); any other difference restarts the entity's chain from the kernel's
//! "before" and is counted ([`EntityStats::restarts`]).
//!
//! Under a what-if profile (`--profile pelt-hl8`) nothing is restarted: our state runs on
//! its own from the first call and the numbers are the what-if minus the kernel's.

use std::collections::BTreeMap;

use schedmath::pelt::{
    __update_load_avg_blocked_se, __update_load_avg_cfs_rq, __update_load_avg_se, PeltTables,
    SchedAvg, SchedEntityPelt,
};
use schedmath::profile::{Profile, UtilEstVersion};
use schedmath::util_est::{util_est_update, UtilEst, UtilEstCpu, UTIL_AVG_UNCHANGED};

use super::stats::EntityStats;
use super::EntityKey;
use crate::trace::event::{PeltCall, PeltCallKind, PeltEntity, PeltState, UtilEstValue};

/// One traced entity.
#[derive(Default)]
struct Entity {
    state: Option<SchedAvg>,
    /// The kernel's state after the previous call (what-if: to carry its outside changes).
    kernel: Option<SchedAvg>,
    stats: EntityStats,
}

/// The probe replay's state: one signal per entity.
pub struct ProbeReplay {
    profile: Profile,
    tables: &'static PeltTables,
    ue_cpu: UtilEstCpu,
    what_if: bool,
    /// The trace has `sched_util_est_se` events: util_est updates are taken from them.
    util_est_events: bool,
    entities: BTreeMap<EntityKey, Entity>,
}

/// `state` as a core `SchedAvg` in the util_est layout of `version`.
pub fn to_avg(s: &PeltState, version: UtilEstVersion) -> SchedAvg {
    SchedAvg {
        util_est: match version {
            UtilEstVersion::Mainline => UtilEst::Mainline(s.util_est.unwrap_or(0)),
            UtilEstVersion::PreV6_9 => UtilEst::PreV6_9 {
                enqueued: s.util_est.unwrap_or(0),
                ewma: s.util_est_ewma.unwrap_or(0),
            },
        },
        ..s.avg
    }
}

/// The util_est value compared: the task's `_task_util_est`-style word without the flag
/// (mainline: the ewma; pre-v6.9: `enqueued`, with `ewma` folded into exactness).
fn util_est_of(a: &SchedAvg) -> u64 {
    u64::from(a.util_est.enqueued() & !UTIL_AVG_UNCHANGED)
}

impl ProbeReplay {
    /// A replay under `profile`; `what_if` when it is not the traced kernel's behaviour.
    pub fn new(profile: Profile, what_if: bool, util_est_events: bool) -> Self {
        ProbeReplay {
            profile,
            tables: PeltTables::of(profile.halflife),
            ue_cpu: UtilEstCpu::default(),
            what_if,
            util_est_events,
            entities: BTreeMap::new(),
        }
    }

    fn entity(&mut self, key: EntityKey, name: impl FnOnce() -> String) -> &mut Entity {
        self.entities.entry(key).or_insert_with(|| Entity {
            state: None,
            kernel: None,
            stats: EntityStats {
                entity: name(),
                ..EntityStats::default()
            },
        })
    }

    /// From now on util_est updates come from `sched_util_est_se` events.
    pub fn set_util_est_events(&mut self) {
        self.util_est_events = true;
    }

    /// One probe record.
    pub fn call(&mut self, c: &PeltCall<'_>) -> Result<(), String> {
        let version = self.profile.util_est;
        let key = EntityKey::of_call(c);
        let name = key.name(c.comm);
        let (tables, ue_cpu, what_if, ue_events) =
            (self.tables, self.ue_cpu, self.what_if, self.util_est_events);
        // A cfs_rq's util_est is the enqueued sum, changed by util_est_enqueue/dequeue
        // outside pelt.c: taken from the kernel, not compared.
        let has_ue = c.after.util_est.is_some() && c.entity == PeltEntity::Task;
        let ent = self.entity(key, || name);
        let kbefore = to_avg(&c.before, version);
        let kafter = to_avg(&c.after, version);
        let mut ours = match ent.state {
            Some(o) => o,
            // A what-if halflife starts from the kernel's averages with its own divider.
            None if what_if => rescale(&kbefore, c, tables),
            None => kbefore,
        };
        if !has_ue {
            ours.util_est = kbefore.util_est;
        }
        if what_if {
            if let Some(prev) = ent.kernel.filter(|p| *p != kbefore) {
                // Attach/detach/removed load changed the kernel's signal outside pelt.c:
                // apply the same change to the what-if signal.
                carry(&mut ours, &prev, &kbefore);
            }
        }
        if !what_if && ours != kbefore {
            if has_ue && !ue_events {
                // A util_est change between calls: util_est_update at the last dequeue.
                let mut est = ours;
                util_est_update(&mut est, true, &ue_cpu);
                // Only when the kernel's changed: a trace whose first `sched_util_est_se`
                // comes later must not count a migration's restart as an update.
                if kbefore.util_est != ours.util_est {
                    let s = &mut ent.stats;
                    s.updates += 1;
                    s.err[3].add(util_est_of(&est), util_est_of(&kbefore));
                    if est.util_est == kbefore.util_est {
                        s.exact += 1;
                    }
                    ours.util_est = est.util_est;
                }
            }
            if ours != kbefore {
                ent.stats.restarts += u64::from(ent.state.is_some());
                ours = kbefore;
            }
        }
        apply(c, &mut ours, tables)?;
        let s = &mut ent.stats;
        s.updates += 1;
        s.err[0].add(ours.util_avg, kafter.util_avg);
        s.err[1].add(ours.load_avg, kafter.load_avg);
        s.err[2].add(ours.runnable_avg, kafter.runnable_avg);
        if has_ue {
            s.err[3].add(util_est_of(&ours), util_est_of(&kafter));
        }
        let mut a = ours;
        if !has_ue {
            a.util_est = kafter.util_est;
        }
        if a == kafter {
            s.exact += 1;
        }
        ent.state = Some(ours);
        ent.kernel = Some(kafter);
        Ok(())
    }

    /// A `sched_util_est_se` event: the kernel ran util_est_update for this task.
    pub fn util_est_event(&mut self, pid: i32, value: UtilEstValue) {
        let ue_cpu = self.ue_cpu;
        let Some(ent) = self.entities.get_mut(&EntityKey::Task(pid)) else {
            return; // no PELT call of this task yet: nothing to update
        };
        let Some(mut ours) = ent.state else {
            return;
        };
        util_est_update(&mut ours, true, &ue_cpu);
        let (k, exact) = match (value, ours.util_est) {
            (UtilEstValue::Mainline(v), UtilEst::Mainline(o)) => {
                (u64::from(v), v == o & !UTIL_AVG_UNCHANGED)
            }
            (
                UtilEstValue::PreV6_9 { enqueued, ewma },
                UtilEst::PreV6_9 {
                    enqueued: e,
                    ewma: w,
                },
            ) => (
                u64::from(enqueued),
                enqueued == e & !UTIL_AVG_UNCHANGED && ewma == w,
            ),
            // LISA prints `enqueued`/`ewma` for one-word kernels too (both the estimate).
            (UtilEstValue::PreV6_9 { enqueued, .. }, UtilEst::Mainline(o)) => {
                (u64::from(enqueued), enqueued == o & !UTIL_AVG_UNCHANGED)
            }
            (UtilEstValue::Mainline(v), UtilEst::PreV6_9 { enqueued: e, .. }) => {
                (u64::from(v), v == e & !UTIL_AVG_UNCHANGED)
            }
        };
        let s = &mut ent.stats;
        s.updates += 1;
        s.err[3].add(util_est_of(&ours), k);
        s.exact += u64::from(exact);
        ent.state = Some(ours);
    }

    /// The per-entity counters, in key order.
    pub fn into_stats(self) -> Vec<EntityStats> {
        self.entities.into_values().map(|e| e.stats).collect()
    }
}

/// The kernel's averages re-expressed as sums under table `t` (what-if start).
fn rescale(k: &SchedAvg, c: &PeltCall<'_>, t: &PeltTables) -> SchedAvg {
    let divider = u64::from(t.pelt_min_divider()) + u64::from(k.period_contrib);
    let w = match c.entity {
        PeltEntity::CfsRq => 1,
        _ => schedmath::math::scale_load_down(c.lw).max(1),
    };
    SchedAvg {
        load_sum: k.load_avg * divider / w,
        runnable_sum: k.runnable_avg * divider,
        util_sum: u32::try_from(k.util_avg * divider).unwrap_or(u32::MAX),
        ..*k
    }
}

/// Adds the kernel's change `from → to` of the sums and averages to `ours` (at 0 at least),
/// and takes its util_est.
fn carry(ours: &mut SchedAvg, from: &SchedAvg, to: &SchedAvg) {
    let add = |o: u64, f: u64, t: u64| (o as i128 + t as i128 - f as i128).max(0) as u64;
    ours.load_avg = add(ours.load_avg, from.load_avg, to.load_avg);
    ours.runnable_avg = add(ours.runnable_avg, from.runnable_avg, to.runnable_avg);
    ours.util_avg = add(ours.util_avg, from.util_avg, to.util_avg);
    ours.load_sum = add(ours.load_sum, from.load_sum, to.load_sum);
    ours.runnable_sum = add(ours.runnable_sum, from.runnable_sum, to.runnable_sum);
    let u = add(
        u64::from(ours.util_sum),
        u64::from(from.util_sum),
        u64::from(to.util_sum),
    );
    ours.util_sum = u32::try_from(u).unwrap_or(u32::MAX);
    ours.util_est = to.util_est;
}

/// Applies the core function the kernel called, with the recorded arguments.
fn apply(c: &PeltCall<'_>, sa: &mut SchedAvg, t: &PeltTables) -> Result<(), String> {
    match c.kind {
        PeltCallKind::BlockedSe => {
            __update_load_avg_blocked_se(c.now, sa, c.lw, t);
        }
        PeltCallKind::Se => {
            let se = SchedEntityPelt {
                load_weight: c.lw,
                on_rq: c.load != 0,
                is_curr: c.running,
                sched_delayed: c.sched_delayed.unwrap_or(false),
                group_runnable_weight: (c.entity == PeltEntity::Group).then_some(c.runnable),
            };
            // The probe's `runnable` is the kernel's se_runnable(): ours must agree.
            let ours = schedmath::pelt::se_runnable(&se);
            if ours != c.runnable {
                return Err(format!(
                    "se_runnable() {ours} but the kernel passed runnable={}",
                    c.runnable
                ));
            }
            __update_load_avg_se(c.now, sa, &se, t);
        }
        PeltCallKind::CfsRq => {
            let runnable = u32::try_from(c.runnable)
                .map_err(|_| format!("runnable {} exceeds 32 bits", c.runnable))?;
            __update_load_avg_cfs_rq(c.now, sa, c.lw, runnable, c.running, t);
        }
    }
    Ok(())
}
