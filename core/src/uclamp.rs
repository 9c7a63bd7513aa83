// SPDX-License-Identifier: GPL-2.0-only
//! Utilization clamping — kernel/sched/sched.h, kernel/sched/core.c.
//!
//! uclamp lets user space bound the utilization the scheduler and schedutil act on. A
//! task's effective clamp is its request, restricted by its task group and by the system
//! default; a runqueue's clamp is the max over its runnable tasks' effective clamps,
//! kept with per-bucket task counts (`UCLAMP_BUCKETS` buckets of width
//! `1024 / UCLAMP_BUCKETS`, rounded) so a dequeue can find the next max without walking
//! the tasks. When the last task leaves, the MAX clamp keeps its last value ("idle
//! retention") until the next enqueue overwrites it.

use crate::math::SCHED_CAPACITY_SCALE;

/// The largest `CONFIG_UCLAMP_BUCKETS_COUNT` the kernel allows (Kconfig range 5..20);
/// the bucket arrays are this long and use the first `UCLAMP_BUCKETS` entries.
pub const UCLAMP_BUCKETS_MAX: usize = 20;

/// `UCLAMP_FLAG_IDLE`: the rq has no uclamp-counted task; MAX retains its last value.
pub const UCLAMP_FLAG_IDLE: u32 = 0x01;

/// `enum uclamp_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum UclampId {
    /// `UCLAMP_MIN` (0): the boost.
    Min = 0,
    /// `UCLAMP_MAX` (1): the cap.
    Max = 1,
}

impl UclampId {
    /// Both ids in the kernel's `for_each_clamp_id()` order.
    pub const ALL: [UclampId; 2] = [UclampId::Min, UclampId::Max];

    /// The id for the kernel's number (0 = MIN, 1 = MAX).
    pub fn from_index(i: u64) -> Option<UclampId> {
        match i {
            0 => Some(UclampId::Min),
            1 => Some(UclampId::Max),
            _ => None,
        }
    }

    fn idx(self) -> usize {
        self as usize // 0 or 1: the kernel's array index
    }
}

/// `uclamp_none()`: 0 for MIN, 1024 for MAX.
#[inline]
pub fn uclamp_none(clamp_id: UclampId) -> u32 {
    match clamp_id {
        UclampId::Min => 0,
        UclampId::Max => SCHED_CAPACITY_SCALE as u32, // 1024 fits an unsigned int
    }
}

/// `UCLAMP_BUCKET_DELTA`: `DIV_ROUND_CLOSEST(1024, buckets)`; `None` for 0 buckets.
#[inline]
pub fn uclamp_bucket_delta(buckets: u32) -> Option<u32> {
    const SCALE: u32 = SCHED_CAPACITY_SCALE as u32; // 1024 fits an unsigned int
    (buckets != 0).then(|| (SCALE + buckets / 2) / buckets)
}

/// `uclamp_bucket_id()`: `min(value / delta, buckets - 1)`.
///
/// Trap: the delta is rounded to nearest, so the last bucket is wider or narrower than the
/// others (5 buckets: delta 205, 1024 / 205 = 4 — the top bucket holds 820..=1024; 20
/// buckets: delta 51, 1024 / 51 = 20 is capped to 19). 0 buckets gives 0, and so does a
/// delta rounded down to 0 (more than 2048 buckets, far outside Kconfig's 5..=20) instead
/// of dividing by zero.
#[inline]
pub fn uclamp_bucket_id(clamp_value: u32, buckets: u32) -> u32 {
    match uclamp_bucket_delta(buckets).and_then(|delta| clamp_value.checked_div(delta)) {
        Some(id) => core::cmp::min(id, buckets - 1),
        None => 0,
    }
}

/// `struct uclamp_se`: a clamp value with its bucket and flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UclampSe {
    /// `value`.
    pub value: u32,
    /// `bucket_id`.
    pub bucket_id: u32,
    /// `active`: the clamp is refcounted in the rq's bucket.
    pub active: bool,
    /// `user_defined`.
    pub user_defined: bool,
}

/// `uclamp_se_set()`: a clamp with `value`, its bucket id and the user-defined flag (not
/// active).
#[inline]
pub fn uclamp_se_set(value: u32, user_defined: bool, buckets: u32) -> UclampSe {
    UclampSe {
        value,
        bucket_id: uclamp_bucket_id(value, buckets),
        active: false,
        user_defined,
    }
}

/// System-wide uclamp settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UclampConfig {
    /// `UCLAMP_BUCKETS` (`CONFIG_UCLAMP_BUCKETS_COUNT`), 5..=20.
    pub buckets: u32,
    /// `uclamp_is_used()`: the `sched_uclamp_used` static key.
    pub used: bool,
    /// `uclamp_default[]`: the system default clamps (MIN, MAX).
    pub default: [UclampSe; 2],
}

/// The task-side uclamp state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UclampTask {
    /// `p->uclamp_req[]`: the requested clamps.
    pub uclamp_req: [UclampSe; 2],
    /// `p->uclamp[]`: the effective clamps, back-annotated while refcounted.
    pub uclamp: [UclampSe; 2],
    /// `p->sched_class->uclamp_enabled`.
    pub uclamp_enabled: bool,
    /// `p->se.sched_delayed`.
    pub sched_delayed: bool,
    /// The task's group is the root group or an autogroup (no group restriction).
    pub tg_is_root_or_autogroup: bool,
    /// `task_group(p)->uclamp[]` values: the group's effective MIN and MAX.
    pub tg_uclamp: [u32; 2],
}

/// `clamp(val, lo, hi)` as include/linux/minmax.h evaluates it:
/// `val >= hi ? hi : (val <= lo ? lo : val)` — with `lo > hi` the upper bound wins for
/// values at or above it, the lower one below it.
#[inline]
fn kernel_clamp(val: u32, lo: u32, hi: u32) -> u32 {
    if val >= hi {
        hi
    } else if val <= lo {
        lo
    } else {
        val
    }
}

/// `uclamp_tg_restrict()`: the task's request for `clamp_id`, clamped into its group's
/// [MIN, MAX] unless the group is the root group or an autogroup.
///
/// Trap: the restricted value gets a fresh bucket id and loses `user_defined`.
pub fn uclamp_tg_restrict(p: &UclampTask, clamp_id: UclampId, buckets: u32) -> UclampSe {
    let uc_req = p.uclamp_req[clamp_id.idx()];
    if p.tg_is_root_or_autogroup {
        return uc_req;
    }
    let value = kernel_clamp(uc_req.value, p.tg_uclamp[0], p.tg_uclamp[1]);
    uclamp_se_set(value, false, buckets)
}

/// `uclamp_eff_get()`: the group-restricted request, replaced by the system default when
/// it is larger.
///
/// Trap: the default replaces the whole clamp, bucket id included.
pub fn uclamp_eff_get(p: &UclampTask, clamp_id: UclampId, cfg: &UclampConfig) -> UclampSe {
    let uc_req = uclamp_tg_restrict(p, clamp_id, cfg.buckets);
    let uc_max = cfg.default[clamp_id.idx()];
    if uc_req.value > uc_max.value {
        return uc_max;
    }
    uc_req
}

/// `uclamp_eff_value()`: the task's effective clamp: the back-annotated value while the
/// clamp is refcounted (`active`), else freshly computed by [`uclamp_eff_get`].
///
/// Trap: a refcounted task keeps its enqueue-time value even after its request, group or
/// the default changed.
pub fn uclamp_eff_value(p: &UclampTask, clamp_id: UclampId, cfg: &UclampConfig) -> u32 {
    let uc = p.uclamp[clamp_id.idx()];
    if uc.active {
        return uc.value;
    }
    uclamp_eff_get(p, clamp_id, cfg).value
}

/// `struct uclamp_bucket`: how many runnable tasks are counted here and the max of
/// their clamp values (stale once empty).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UclampBucket {
    /// `value`.
    pub value: u32,
    /// `tasks`.
    pub tasks: u32,
}

/// `struct uclamp_rq`: one clamp id's rq value and buckets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UclampRq {
    /// `value`: the rq's clamp.
    pub value: u32,
    /// `bucket[]` ([`UCLAMP_BUCKETS_MAX`] entries; the first `UCLAMP_BUCKETS` are used).
    pub bucket: [UclampBucket; UCLAMP_BUCKETS_MAX],
}

/// A runqueue's uclamp state: `rq->uclamp[]` and `rq->uclamp_flags`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RqUclamp {
    /// `rq->uclamp[UCLAMP_MIN]`, `rq->uclamp[UCLAMP_MAX]`.
    pub uclamp: [UclampRq; 2],
    /// `rq->uclamp_flags` ([`UCLAMP_FLAG_IDLE`]).
    pub uclamp_flags: u32,
}

/// `init_uclamp_rq()`: MIN 0, MAX 1024, every bucket empty, idle flag set.
pub fn init_uclamp_rq() -> RqUclamp {
    let mut rq = RqUclamp {
        uclamp_flags: UCLAMP_FLAG_IDLE,
        ..Default::default()
    };
    for id in UclampId::ALL {
        rq.uclamp[id.idx()].value = uclamp_none(id);
    }
    rq
}

/// `uclamp_rq_get()`.
#[inline]
pub fn uclamp_rq_get(rq: &RqUclamp, clamp_id: UclampId) -> u32 {
    rq.uclamp[clamp_id.idx()].value
}

/// `uclamp_rq_is_idle()` (kernel/sched/sched.h): the rq holds no uclamp-counted task, so
/// its MAX value is the last task's, stale.
#[inline]
pub fn uclamp_rq_is_idle(rq: &RqUclamp) -> bool {
    rq.uclamp_flags & UCLAMP_FLAG_IDLE != 0
}

/// `uclamp_idle_value()`: the rq value once no task is left: MIN goes to 0, MAX keeps
/// `clamp_value` (the leaving task's) and sets the idle flag.
fn uclamp_idle_value(rq: &mut RqUclamp, clamp_id: UclampId, clamp_value: u32) -> u32 {
    match clamp_id {
        UclampId::Max => {
            rq.uclamp_flags |= UCLAMP_FLAG_IDLE;
            clamp_value
        }
        UclampId::Min => uclamp_none(UclampId::Min),
    }
}

/// `uclamp_idle_reset()`: on idle exit the rq value is overwritten by the first task's.
fn uclamp_idle_reset(rq: &mut RqUclamp, clamp_id: UclampId, clamp_value: u32) {
    if rq.uclamp_flags & UCLAMP_FLAG_IDLE == 0 {
        return;
    }
    rq.uclamp[clamp_id.idx()].value = clamp_value;
}

/// `uclamp_rq_max_value()`: the value of the highest non-empty bucket, or the idle value.
fn uclamp_rq_max_value(
    rq: &mut RqUclamp,
    clamp_id: UclampId,
    clamp_value: u32,
    buckets: u32,
) -> u32 {
    let n = core::cmp::min(buckets as usize, UCLAMP_BUCKETS_MAX); // Kconfig bounds it by 20
    let top = rq.uclamp[clamp_id.idx()].bucket[..n]
        .iter()
        .rev()
        .find(|b| b.tasks != 0)
        .map(|b| b.value);
    match top {
        Some(v) => v,
        None => uclamp_idle_value(rq, clamp_id, clamp_value),
    }
}

/// `uclamp_rq_inc_id()`: refcount the task's effective clamp in its bucket.
///
/// Traps: the effective value is recomputed and back-annotated first; with the idle flag
/// set the rq value is overwritten (for MIN as well as MAX) before the max test; the
/// bucket value is reset by the first task, otherwise only raised.
pub fn uclamp_rq_inc_id(
    rq: &mut RqUclamp,
    p: &mut UclampTask,
    clamp_id: UclampId,
    cfg: &UclampConfig,
) {
    let id = clamp_id.idx();
    p.uclamp[id] = uclamp_eff_get(p, clamp_id, cfg);
    let uc_se = &mut p.uclamp[id];
    uc_se.active = true;
    let value = uc_se.value;
    let bucket_id = uc_se.bucket_id as usize; // bucket ids are below UCLAMP_BUCKETS
    uclamp_idle_reset(rq, clamp_id, value);
    let uc_rq = &mut rq.uclamp[id];
    if let Some(bucket) = uc_rq.bucket.get_mut(bucket_id) {
        bucket.tasks = bucket.tasks.wrapping_add(1);
        if bucket.tasks == 1 || value > bucket.value {
            bucket.value = value;
        }
    }
    if value > uc_rq.value {
        uc_rq.value = value;
    }
}

/// `uclamp_rq_dec_id()`: drop the task's refcount from the bucket it was counted in.
///
/// Traps: an inactive clamp is left alone; the stored bucket id is used, never a
/// recomputed one; only when the bucket empties and its (possibly stale) value is at or
/// above the rq value is the rq value recomputed; a MAX side left empty keeps the leaving
/// task's value and sets the idle flag.
pub fn uclamp_rq_dec_id(rq: &mut RqUclamp, p: &mut UclampTask, clamp_id: UclampId, buckets: u32) {
    let id = clamp_id.idx();
    let uc_se = &mut p.uclamp[id];
    if !uc_se.active {
        return;
    }
    uc_se.active = false;
    let value = uc_se.value;
    let uc_rq = &mut rq.uclamp[id];
    let rq_clamp = uc_rq.value;
    // The stored bucket id; `get_mut` guards a corrupt one instead of indexing.
    let Some(bucket) = uc_rq.bucket.get_mut(uc_se.bucket_id as usize) else {
        return;
    };
    if bucket.tasks != 0 {
        bucket.tasks -= 1;
    }
    if bucket.tasks != 0 {
        return;
    }
    if bucket.value >= rq_clamp {
        let bkt_clamp = uclamp_rq_max_value(rq, clamp_id, value, buckets);
        rq.uclamp[id].value = bkt_clamp;
    }
}

/// `uclamp_rq_inc()`: account an enqueued task's clamps (both ids), then clear the idle
/// flag.
///
/// Traps: nothing happens when uclamp is unused or the class is not uclamp-enabled, nor
/// for a delayed-dequeue task unless this is its `ENQUEUE_DELAYED` requeue.
pub fn uclamp_rq_inc(
    rq: &mut RqUclamp,
    p: &mut UclampTask,
    enqueue_delayed: bool,
    cfg: &UclampConfig,
) {
    if !cfg.used || !p.uclamp_enabled {
        return;
    }
    if p.sched_delayed && !enqueue_delayed {
        return;
    }
    for id in UclampId::ALL {
        uclamp_rq_inc_id(rq, p, id, cfg);
    }
    rq.uclamp_flags &= !UCLAMP_FLAG_IDLE;
}

/// `uclamp_rq_dec()`: drop a dequeued task's clamps (both ids).
///
/// Trap: a task still marked `sched_delayed` is skipped, so its buckets stay counted.
pub fn uclamp_rq_dec(rq: &mut RqUclamp, p: &mut UclampTask, cfg: &UclampConfig) {
    if !cfg.used || !p.uclamp_enabled || p.sched_delayed {
        return;
    }
    for id in UclampId::ALL {
        uclamp_rq_dec_id(rq, p, id, cfg.buckets);
    }
}

/// `uclamp_rq_reinc_id()`: re-account an active clamp after its request, group or
/// default changed (a dec then an inc); after MAX the idle flag is cleared.
///
/// Trap: the only gate is the clamp's `active` bit — not `uclamp_is_used`, the class or
/// `sched_delayed`.
pub fn uclamp_rq_reinc_id(
    rq: &mut RqUclamp,
    p: &mut UclampTask,
    clamp_id: UclampId,
    cfg: &UclampConfig,
) {
    if !p.uclamp[clamp_id.idx()].active {
        return;
    }
    uclamp_rq_dec_id(rq, p, clamp_id, cfg.buckets);
    uclamp_rq_inc_id(rq, p, clamp_id, cfg);
    if clamp_id == UclampId::Max {
        rq.uclamp_flags &= !UCLAMP_FLAG_IDLE;
    }
}

/// `uclamp_rq_util_with()` (kernel/sched/sched.h, v5.6 to v6.9; LISA's module keeps a
/// copy for its `uclamp_util_se` event on later kernels): `util` clamped to the rq's
/// clamps, each raised to the task `p`'s effective clamp when a task is given.
///
/// Traps: with uclamp unused it returns `util` untouched; with `p` on an rq whose idle
/// flag is set the rq's (retained) clamps are ignored for the task's alone; when the
/// aggregated MIN reaches MAX the result is MIN whatever `util` is (the inversion fix).
pub fn uclamp_rq_util_with(
    rq: &RqUclamp,
    util: u64,
    p: Option<&UclampTask>,
    cfg: &UclampConfig,
) -> u64 {
    if !cfg.used {
        return util;
    }
    let (mut min_util, mut max_util) = (0u64, 0u64);
    if let Some(p) = p {
        min_util = u64::from(uclamp_eff_value(p, UclampId::Min, cfg));
        max_util = u64::from(uclamp_eff_value(p, UclampId::Max, cfg));
    }
    let idle_task = p.is_some() && rq.uclamp_flags & UCLAMP_FLAG_IDLE != 0;
    if !idle_task {
        min_util = min_util.max(u64::from(uclamp_rq_get(rq, UclampId::Min)));
        max_util = max_util.max(u64::from(uclamp_rq_get(rq, UclampId::Max)));
    }
    if min_util >= max_util {
        return min_util;
    }
    util.clamp(min_util, max_util) // min_util < max_util here: no inversion
}

/// `uclamp_rq_is_capped()`: is the runqueue held down by its uclamp_max?
///
/// Traps: the plain `cpu_util_cfs()` (never the boosted value) plus RT is compared, and
/// equality counts as capped, so `uclamp_max == 0` with no utilization is capped; false
/// whenever uclamp is unused or the cap is 1024.
#[inline]
pub fn uclamp_rq_is_capped(
    uclamp_used: bool,
    util_cfs: u64,
    util_rt: u64,
    uclamp_max: u64,
) -> bool {
    if !uclamp_used {
        return false;
    }
    let rq_util = util_cfs.wrapping_add(util_rt);
    uclamp_max != SCHED_CAPACITY_SCALE && rq_util >= uclamp_max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uclamp_rq_get_reads_the_rq_value_of_each_id() {
        let mut rq = init_uclamp_rq();
        assert_eq!(uclamp_rq_get(&rq, UclampId::Min), 0);
        assert_eq!(uclamp_rq_get(&rq, UclampId::Max), 1024);
        rq.uclamp[UclampId::Max.idx()].value = 400;
        assert_eq!(uclamp_rq_get(&rq, UclampId::Max), 400);
        assert_eq!(uclamp_rq_get(&rq, UclampId::Min), 0);
    }

    #[test]
    fn uclamp_rq_is_idle_until_a_task_is_counted() {
        let mut rq = init_uclamp_rq();
        assert!(uclamp_rq_is_idle(&rq));
        rq.uclamp_flags = 0;
        assert!(!uclamp_rq_is_idle(&rq));
        rq.uclamp_flags = UCLAMP_FLAG_IDLE | 0x2;
        assert!(uclamp_rq_is_idle(&rq));
    }

    const B: u32 = 5;

    fn cfg() -> UclampConfig {
        UclampConfig {
            buckets: B,
            used: true,
            default: [uclamp_se_set(1024, false, B), uclamp_se_set(1024, false, B)],
        }
    }

    fn task(min: u32, max: u32) -> UclampTask {
        UclampTask {
            uclamp_req: [uclamp_se_set(min, true, B), uclamp_se_set(max, true, B)],
            uclamp_enabled: true,
            tg_is_root_or_autogroup: true,
            tg_uclamp: [0, 1024],
            ..Default::default()
        }
    }

    #[test]
    fn uclamp_bucket_delta_rounds_to_nearest_and_id_caps() {
        assert_eq!(uclamp_bucket_delta(5), Some(205));
        assert_eq!(uclamp_bucket_delta(20), Some(51)); // 1024 / 20 = 51.2
        assert_eq!(uclamp_bucket_delta(0), None);
        assert_eq!(uclamp_bucket_id(819, 5), 3);
        assert_eq!(uclamp_bucket_id(820, 5), 4);
        assert_eq!(uclamp_bucket_id(1024, 5), 4);
        assert_eq!(uclamp_bucket_id(1024, 20), 19); // 1024 / 51 = 20, capped
        assert_eq!(uclamp_bucket_id(5, 0), 0);
    }

    #[test]
    fn uclamp_bucket_id_zero_delta_does_not_divide() {
        // 2049 buckets: (1024 + 1024) / 2049 rounds the delta down to 0.
        assert_eq!(uclamp_bucket_delta(2048), Some(1));
        assert_eq!(uclamp_bucket_delta(2049), Some(0));
        assert_eq!(uclamp_bucket_id(1024, 2048), 1024);
        assert_eq!(uclamp_bucket_id(1024, 2049), 0);
        assert_eq!(uclamp_bucket_id(u32::MAX, u32::MAX), 0);
    }

    #[test]
    fn uclamp_eff_value_active_returns_stored_value() {
        let mut p = task(100, 1024);
        p.uclamp[0] = UclampSe {
            value: 700,
            bucket_id: 3,
            active: true,
            user_defined: false,
        };
        assert_eq!(uclamp_eff_value(&p, UclampId::Min, &cfg()), 700);
        p.uclamp[0].active = false;
        assert_eq!(uclamp_eff_value(&p, UclampId::Min, &cfg()), 100);
    }

    #[test]
    fn uclamp_eff_get_tg_restricts_unless_root_or_autogroup() {
        let mut p = task(900, 1024);
        p.tg_is_root_or_autogroup = false;
        p.tg_uclamp = [100, 600];
        let e = uclamp_eff_get(&p, UclampId::Min, &cfg());
        assert_eq!((e.value, e.bucket_id, e.user_defined), (600, 2, false));
        p.tg_is_root_or_autogroup = true;
        assert_eq!(uclamp_eff_get(&p, UclampId::Min, &cfg()).value, 900);
    }

    #[test]
    fn uclamp_eff_get_system_default_replaces_value_and_bucket() {
        let mut c = cfg();
        // A default whose stored bucket id is not the one its value would get.
        c.default[1] = UclampSe {
            value: 300,
            bucket_id: 4,
            active: false,
            user_defined: false,
        };
        let e = uclamp_eff_get(&task(0, 800), UclampId::Max, &c);
        assert_eq!((e.value, e.bucket_id), (300, 4));
    }

    #[test]
    fn kernel_clamp_upper_bound_wins_when_bounds_cross() {
        assert_eq!(kernel_clamp(500, 700, 600), 700);
        assert_eq!(kernel_clamp(650, 700, 600), 600);
        assert_eq!(kernel_clamp(300, 100, 600), 300);
    }

    #[test]
    fn uclamp_rq_inc_skips_unused_disabled_and_delayed() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        let mut off = cfg();
        off.used = false;
        uclamp_rq_inc(&mut rq, &mut p, false, &off);
        p.uclamp_enabled = false;
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        p.uclamp_enabled = true;
        p.sched_delayed = true;
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        assert_eq!(rq, init_uclamp_rq());
        uclamp_rq_inc(&mut rq, &mut p, true, &cfg()); // ENQUEUE_DELAYED
        assert_eq!(rq.uclamp[1].bucket[2].tasks, 1);
    }

    #[test]
    fn uclamp_rq_inc_idle_flag_overwrites_min_and_max() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        // MAX starts at 1024 but is overwritten (not max-ed) with 500.
        assert_eq!((rq.uclamp[0].value, rq.uclamp[1].value), (300, 500));
        assert_eq!(rq.uclamp_flags, 0);
        assert!(p.uclamp[0].active && p.uclamp[1].active);
    }

    #[test]
    fn uclamp_rq_bucket_value_reset_by_first_task_then_raised() {
        let mut rq = init_uclamp_rq();
        let (mut a, mut b) = (task(250, 1024), task(300, 1024));
        uclamp_rq_inc(&mut rq, &mut a, false, &cfg());
        assert_eq!(
            rq.uclamp[0].bucket[1],
            UclampBucket {
                value: 250,
                tasks: 1
            }
        );
        uclamp_rq_inc(&mut rq, &mut b, false, &cfg());
        assert_eq!(
            rq.uclamp[0].bucket[1],
            UclampBucket {
                value: 300,
                tasks: 2
            }
        );
        // Dequeue of the 300 task leaves the bucket at 300 (overboost accepted).
        uclamp_rq_dec(&mut rq, &mut b, &cfg());
        assert_eq!(
            rq.uclamp[0].bucket[1],
            UclampBucket {
                value: 300,
                tasks: 1
            }
        );
        assert_eq!(rq.uclamp[0].value, 300);
    }

    #[test]
    fn uclamp_rq_dec_last_task_min_to_zero_max_retained_idle_set() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        uclamp_rq_dec(&mut rq, &mut p, &cfg());
        assert_eq!((rq.uclamp[0].value, rq.uclamp[1].value), (0, 500));
        assert_eq!(rq.uclamp_flags, UCLAMP_FLAG_IDLE);
        // The empty buckets keep their stale values.
        assert_eq!(
            rq.uclamp[1].bucket[2],
            UclampBucket {
                value: 500,
                tasks: 0
            }
        );
    }

    #[test]
    fn uclamp_rq_dec_empty_min_side_never_sets_idle() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        uclamp_rq_dec_id(&mut rq, &mut p, UclampId::Min, B);
        assert_eq!(rq.uclamp[0].value, 0);
        assert_eq!(rq.uclamp_flags, 0);
    }

    #[test]
    fn uclamp_rq_dec_skips_delayed_task() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        let before = rq;
        p.sched_delayed = true;
        uclamp_rq_dec(&mut rq, &mut p, &cfg());
        assert_eq!(rq, before);
        assert!(p.uclamp[0].active);
    }

    #[test]
    fn uclamp_rq_dec_uses_stored_bucket_and_leaves_inactive_alone() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        // A new request does not move the counted bucket.
        p.uclamp_req[0] = uclamp_se_set(900, true, B);
        uclamp_rq_dec(&mut rq, &mut p, &cfg());
        assert_eq!(rq.uclamp[0].bucket[1].tasks, 0);
        assert_eq!(rq.uclamp[0].bucket[4].tasks, 0);
        // A second dec of the now-inactive clamps changes nothing.
        let before = rq;
        uclamp_rq_dec(&mut rq, &mut p, &cfg());
        assert_eq!(rq, before);
    }

    #[test]
    fn uclamp_rq_dec_recomputes_only_when_bucket_value_reaches_rq_value() {
        let mut rq = init_uclamp_rq();
        let (mut hi, mut lo) = (task(900, 1024), task(100, 1024));
        uclamp_rq_inc(&mut rq, &mut hi, false, &cfg());
        uclamp_rq_inc(&mut rq, &mut lo, false, &cfg());
        uclamp_rq_dec(&mut rq, &mut lo, &cfg()); // bucket 0 empties, 100 < 900: no recompute
        assert_eq!(rq.uclamp[0].value, 900);
        uclamp_rq_dec(&mut rq, &mut hi, &cfg()); // bucket 4 empties: recompute -> none left
        assert_eq!(rq.uclamp[0].value, 0);
    }

    #[test]
    fn uclamp_rq_reinc_gated_only_by_active_and_clears_idle() {
        let mut rq = init_uclamp_rq();
        let mut p = task(300, 500);
        uclamp_rq_inc(&mut rq, &mut p, false, &cfg());
        p.uclamp_req[1] = uclamp_se_set(800, true, B);
        // sched_delayed and a disabled static key do not stop it.
        p.sched_delayed = true;
        let mut off = cfg();
        off.used = false;
        uclamp_rq_reinc_id(&mut rq, &mut p, UclampId::Max, &off);
        assert_eq!(rq.uclamp[1].value, 800);
        assert_eq!(rq.uclamp_flags, 0); // transiently idle, cleared after MAX
        assert_eq!(rq.uclamp[1].bucket[3].tasks, 1);
        // An inactive clamp is not re-accounted.
        let mut q = task(300, 200);
        let before = rq;
        uclamp_rq_reinc_id(&mut rq, &mut q, UclampId::Max, &cfg());
        assert_eq!(rq, before);
    }

    #[test]
    fn uclamp_rq_util_with_clamps_to_the_rq_and_returns_util_when_unused() {
        let mut rq = init_uclamp_rq();
        rq.uclamp[UclampId::Min.idx()].value = 200;
        rq.uclamp[UclampId::Max.idx()].value = 600;
        rq.uclamp_flags = 0;
        let c = cfg();
        assert_eq!(uclamp_rq_util_with(&rq, 100, None, &c), 200);
        assert_eq!(uclamp_rq_util_with(&rq, 450, None, &c), 450);
        assert_eq!(uclamp_rq_util_with(&rq, 900, None, &c), 600);
        let unused = UclampConfig { used: false, ..c };
        assert_eq!(uclamp_rq_util_with(&rq, 900, None, &unused), 900);
    }

    #[test]
    fn uclamp_rq_util_with_inverted_clamps_return_min() {
        // A boosted task (MIN 700) beside a capped one (MAX 400): MIN wins, util ignored.
        let mut rq = init_uclamp_rq();
        rq.uclamp[UclampId::Min.idx()].value = 700;
        rq.uclamp[UclampId::Max.idx()].value = 400;
        rq.uclamp_flags = 0;
        assert_eq!(uclamp_rq_util_with(&rq, 10, None, &cfg()), 700);
        assert_eq!(uclamp_rq_util_with(&rq, 1000, None, &cfg()), 700);
    }

    #[test]
    fn uclamp_rq_util_with_task_on_idle_rq_ignores_retained_max() {
        // The rq keeps the last task's MAX 1024 while idle; a task capped at 300 is
        // clamped by its own clamps alone there, by max(task, rq) on a busy rq.
        let mut rq = init_uclamp_rq();
        rq.uclamp[UclampId::Max.idx()].value = 1024;
        let p = task(0, 300);
        assert_eq!(uclamp_rq_util_with(&rq, 800, Some(&p), &cfg()), 300);
        rq.uclamp_flags = 0;
        assert_eq!(uclamp_rq_util_with(&rq, 800, Some(&p), &cfg()), 800);
        rq.uclamp[UclampId::Max.idx()].value = 512;
        assert_eq!(uclamp_rq_util_with(&rq, 800, Some(&p), &cfg()), 512);
    }

    #[test]
    fn uclamp_rq_is_capped_counts_equality_and_zero_cap() {
        assert!(uclamp_rq_is_capped(true, 0, 0, 0));
        assert!(uclamp_rq_is_capped(true, 300, 100, 400));
        assert!(!uclamp_rq_is_capped(true, 300, 99, 400));
        assert!(!uclamp_rq_is_capped(true, 2000, 0, 1024));
        assert!(!uclamp_rq_is_capped(false, 2000, 0, 0));
    }
}
