// SPDX-License-Identifier: GPL-2.0-only
//! EEVDF virtual time on one cfs_rq — kernel/sched/fair.c (`avg_vruntime()`,
//! `vruntime_eligible()`, `update_entity_lag()`, `place_entity()`, `update_deadline()`,
//! `update_min_vruntime()`, `cfs_rq_min_slice()`, the slice protection helpers).
//!
//! The average vruntime `V` is `Σ w_i v_i / Σ w_i`, tracked relative to `min_vruntime`
//! (`v0`) so the sum stays small: `avg_vruntime = Σ (v_i - v0) * w_i`, `avg_load = Σ w_i`,
//! with scaled-down weights (nice 0 = 1024). The running entity (`curr`) is kept out of
//! the sums and added on the fly. An entity is eligible when `V >= v_i`, tested without
//! dividing; its lag `V - v_i` is kept across sleep (clamped) and re-applied, inflated by
//! `(W + w_i) / W`, when it is placed again. Its deadline is `v_i + slice / w_i`.
//!
//! This file is the mainline commit the fixtures name: the reference is `min_vruntime`
//! (before v6.18's `zero_vruntime`), and `avg_vruntime()` has no side effects.

use super::weight::{calc_delta_fair, update_load_add, update_load_sub, LoadWeight};
use super::{clamp_i64, div_s64, min_vruntime, DivideTrap};
use crate::math::scale_load_down;
use crate::profile::{FairClass, Profile};

/// The cfs_rq fields EEVDF's arithmetic reads and writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfsRq {
    /// `min_vruntime`: the reference vruntime `v0`, monotonic.
    pub min_vruntime: u64,
    /// `avg_vruntime`: `Σ (v_i - v0) * scale_load_down(w_i)` over the tree (s64, wraps).
    pub avg_vruntime: i64,
    /// `avg_load`: `Σ scale_load_down(w_i)` over the tree.
    pub avg_load: u64,
    /// `nr_queued`: entities on the runqueue, curr and delayed ones included.
    pub nr_queued: u32,
    /// `load`: `Σ w_i` at full resolution over the queued entities.
    pub load: LoadWeight,
}

/// `struct sched_entity`'s EEVDF fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SchedEntity {
    /// `load`: weight and inverse weight.
    pub load: LoadWeight,
    /// `vruntime` (virtual ns).
    pub vruntime: u64,
    /// `deadline` (virtual ns; relative to `vruntime` while `rel_deadline`).
    pub deadline: u64,
    /// `vlag` — and `vprot`: the kernel keeps both in one union, so while the entity runs
    /// this holds its protected vruntime (as `u64` bits), and `update_entity_lag()`
    /// overwrites that protection.
    pub vlag: i64,
    /// `slice` (ns).
    pub slice: u64,
    /// `custom_slice`: set by sched_setattr, kept across placement.
    pub custom_slice: bool,
    /// `rel_deadline`: `deadline` is relative to `vruntime`.
    pub rel_deadline: bool,
    /// `on_rq`.
    pub on_rq: bool,
    /// `sched_delayed`: dequeued to sleep but left queued until it is picked or wakes.
    pub sched_delayed: bool,
}

impl SchedEntity {
    /// `se->vprot`: the `vlag` storage read as `u64`.
    pub fn vprot(&self) -> u64 {
        self.vlag as u64 // same bits: a union of s64 and u64
    }

    /// What the cfs_rq helpers read of it when it is `cfs_rq->curr`.
    pub fn as_curr(&self) -> Curr {
        Curr {
            vruntime: self.vruntime,
            weight: self.load.weight,
            on_rq: self.on_rq,
        }
    }
}

/// The running entity as the cfs_rq helpers see it (it is not in the sums).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Curr {
    /// `curr->vruntime`.
    pub vruntime: u64,
    /// `curr->load.weight` (scaled).
    pub weight: u64,
    /// `curr->on_rq`: only a queued curr counts.
    pub on_rq: bool,
}

/// `sched_feat()` switches EEVDF reads (kernel/sched/features.h); all on by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EevdfFeatures {
    /// `PLACE_LAG`: keep lag across sleep.
    pub place_lag: bool,
    /// `PLACE_DEADLINE_INITIAL`: a new task starts with half a slice.
    pub place_deadline_initial: bool,
    /// `PLACE_REL_DEADLINE`: a migrating entity keeps its relative deadline.
    pub place_rel_deadline: bool,
    /// `RUN_TO_PARITY`: protect curr up to the shortest queued slice.
    pub run_to_parity: bool,
    /// `DELAY_DEQUEUE`: a sleeping ineligible entity stays queued.
    pub delay_dequeue: bool,
    /// `DELAY_ZERO`: a delayed entity leaves (or wakes) with its positive lag cut to 0.
    pub delay_zero: bool,
}

impl Default for EevdfFeatures {
    fn default() -> Self {
        EevdfFeatures {
            place_lag: true,
            place_deadline_initial: true,
            place_rel_deadline: true,
            run_to_parity: true,
            delay_dequeue: true,
            delay_zero: true,
        }
    }
}

/// `entity_key()`: `v - v0` as a signed difference.
#[inline]
pub fn entity_key(cfs_rq: &CfsRq, vruntime: u64) -> i64 {
    vruntime.wrapping_sub(cfs_rq.min_vruntime) as i64 // (s64) cast of the u64 difference
}

/// `avg_vruntime_add()`: an entity joins the sums (`key * w` wraps).
pub fn avg_vruntime_add(cfs_rq: &mut CfsRq, se: &SchedEntity) {
    let weight = scale_load_down(se.load.weight);
    let key = entity_key(cfs_rq, se.vruntime);
    cfs_rq.avg_vruntime = cfs_rq
        .avg_vruntime
        .wrapping_add(key.wrapping_mul(weight as i64)); // s64 * unsigned long: same bits
    cfs_rq.avg_load = cfs_rq.avg_load.wrapping_add(weight);
}

/// `avg_vruntime_sub()`: an entity leaves the sums.
pub fn avg_vruntime_sub(cfs_rq: &mut CfsRq, se: &SchedEntity) {
    let weight = scale_load_down(se.load.weight);
    let key = entity_key(cfs_rq, se.vruntime);
    cfs_rq.avg_vruntime = cfs_rq
        .avg_vruntime
        .wrapping_sub(key.wrapping_mul(weight as i64));
    cfs_rq.avg_load = cfs_rq.avg_load.wrapping_sub(weight);
}

/// `avg_vruntime_update()`: `v0` moves by `delta`, so every key shrinks by it.
pub fn avg_vruntime_update(cfs_rq: &mut CfsRq, delta: i64) {
    cfs_rq.avg_vruntime = cfs_rq
        .avg_vruntime
        .wrapping_sub(cfs_rq.avg_load.wrapping_mul(delta as u64) as i64);
}

/// The sums with a queued curr added: `(avg, load)`.
fn sums_with_curr(cfs_rq: &CfsRq, curr: Option<Curr>) -> (i64, i64) {
    let mut avg = cfs_rq.avg_vruntime;
    let mut load = cfs_rq.avg_load as i64; // `long load = cfs_rq->avg_load`
    if let Some(c) = curr.filter(|c| c.on_rq) {
        let weight = scale_load_down(c.weight);
        avg = avg.wrapping_add(entity_key(cfs_rq, c.vruntime).wrapping_mul(weight as i64));
        load = load.wrapping_add(weight as i64);
    }
    (avg, load)
}

/// `avg_vruntime()`: `V`, the load-weighted average vruntime (curr included if queued).
///
/// Traps: a negative sum is lowered by `load - 1` first so the division floors (V has a
/// left bias, and `V` itself is always eligible); with zero load the raw sum is added to
/// `v0` undivided; `div_s64()` takes the load's low 32 bits as a signed divisor, so a
/// load of `2^32` faults ([`DivideTrap`]) and `2^31 + x` divides by a negative number.
pub fn avg_vruntime(cfs_rq: &CfsRq, curr: Option<Curr>) -> Result<u64, DivideTrap> {
    let (mut avg, load) = sums_with_curr(cfs_rq, curr);
    if load != 0 {
        if avg < 0 {
            avg = avg.wrapping_sub(load - 1);
        }
        avg = div_s64(avg, load as i32)?; // div_s64()'s s32 divisor
    }
    Ok(cfs_rq.min_vruntime.wrapping_add(avg as u64))
}

/// `vruntime_eligible()`: is `V >= vruntime`, as `Σ(v_i - v0) w_i >= (vruntime - v0) W`
/// (wrapping s64, no division, so no rounding).
pub fn vruntime_eligible(cfs_rq: &CfsRq, curr: Option<Curr>, vruntime: u64) -> bool {
    let (avg, load) = sums_with_curr(cfs_rq, curr);
    avg >= entity_key(cfs_rq, vruntime).wrapping_mul(load)
}

/// `entity_eligible()`.
pub fn entity_eligible(cfs_rq: &CfsRq, curr: Option<Curr>, se: &SchedEntity) -> bool {
    vruntime_eligible(cfs_rq, curr, se.vruntime)
}

/// What `update_entity_lag()` computed besides `se.vlag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lag {
    /// `V` at the time.
    pub v: u64,
    /// The clamp bound `calc_delta_fair(max(2 * slice, TICK_NSEC))` (as s64).
    pub limit: i64,
}

/// `update_entity_lag()`: `se.vlag = V - v_i`, clamped to ±`limit`, `limit` being two
/// slices (at least a tick) in the entity's virtual time. Overwrites `vprot` (same storage).
pub fn update_entity_lag(
    cfs_rq: &CfsRq,
    curr: Option<Curr>,
    se: &mut SchedEntity,
    tick_nsec: u64,
) -> Result<Lag, DivideTrap> {
    let v = avg_vruntime(cfs_rq, curr)?;
    let vlag = v.wrapping_sub(se.vruntime) as i64;
    let limit = calc_delta_fair(se.slice.wrapping_mul(2).max(tick_nsec), &mut se.load) as i64;
    se.vlag = clamp_i64(vlag, limit.wrapping_neg(), limit);
    Ok(Lag { v, limit })
}

/// What `place_entity()` computed besides the entity's new fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// `V` before placing.
    pub v: u64,
    /// The lag subtracted from `V` (after inflation).
    pub lag: i64,
    /// The virtual slice (halved for an initial placement), when the deadline was set
    /// from it.
    pub vslice: u64,
}

/// `place_entity()`: puts `se` at `V - lag` and gives it a deadline.
///
/// Without a custom slice the slice is reset to `base_slice`. With `PLACE_LAG`, other
/// entities queued and a nonzero `vlag`, the lag is inflated to `vlag * (W + w) / W`
/// (`W` = queued load with a queued curr): the product wraps in 64 bits and only **then**
/// is a zero `W` replaced by 1, and the division is `div_s64()` (s32 divisor). A relative
/// deadline becomes absolute again; otherwise `deadline = vruntime + vslice`, the virtual
/// slice halved for `initial` placements under `PLACE_DEADLINE_INITIAL`.
pub fn place_entity(
    cfs_rq: &CfsRq,
    curr: Option<Curr>,
    se: &mut SchedEntity,
    initial: bool,
    features: &EevdfFeatures,
    base_slice: u64,
) -> Result<Placement, DivideTrap> {
    let v = avg_vruntime(cfs_rq, curr)?;
    let mut lag: i64 = 0;
    if !se.custom_slice {
        se.slice = base_slice;
    }
    let mut vslice = calc_delta_fair(se.slice, &mut se.load);
    if features.place_lag && cfs_rq.nr_queued != 0 && se.vlag != 0 {
        let mut load = cfs_rq.avg_load;
        if let Some(c) = curr.filter(|c| c.on_rq) {
            load = load.wrapping_add(scale_load_down(c.weight));
        }
        // `lag *= load + w`: s64 times unsigned long, same bits as a wrapping i64 product.
        lag = se
            .vlag
            .wrapping_mul(load.wrapping_add(scale_load_down(se.load.weight)) as i64);
        if load == 0 {
            load = 1; // the kernel warns and divides by 1
        }
        lag = div_s64(lag, load as i32)?;
    }
    se.vruntime = v.wrapping_sub(lag as u64);
    if se.rel_deadline {
        se.deadline = se.deadline.wrapping_add(se.vruntime);
        se.rel_deadline = false;
        return Ok(Placement { v, lag, vslice });
    }
    if features.place_deadline_initial && initial {
        vslice /= 2;
    }
    se.deadline = se.vruntime.wrapping_add(vslice);
    Ok(Placement { v, lag, vslice })
}

/// `update_deadline()`: once curr reaches its deadline (equality included: only
/// `vruntime - deadline < 0` returns early) it gets a new request: slice refreshed
/// (unless custom), `deadline = vruntime + slice / w`. Returns whether it did.
pub fn update_deadline(se: &mut SchedEntity, base_slice: u64) -> bool {
    if (se.vruntime.wrapping_sub(se.deadline) as i64) < 0 {
        return false;
    }
    if !se.custom_slice {
        se.slice = base_slice;
    }
    se.deadline = se
        .vruntime
        .wrapping_add(calc_delta_fair(se.slice, &mut se.load));
    true
}

/// `update_min_vruntime()`: `v0` follows the smaller of a queued curr's vruntime and the
/// tree's minimum (`root_min_vruntime`, `None` for an empty tree), forward only.
///
/// EEVDF corrects the sums for the move (`avg_vruntime -= avg_load * delta`, wrapping);
/// the 6.1 CFS (`fair-cfs`) has no sums to correct and only moves `min_vruntime`.
pub fn update_min_vruntime(
    cfs_rq: &mut CfsRq,
    curr: Option<Curr>,
    root_min_vruntime: Option<u64>,
    profile: &Profile,
) {
    let curr = curr.filter(|c| c.on_rq);
    let mut vruntime = curr.map_or(cfs_rq.min_vruntime, |c| c.vruntime);
    if let Some(root) = root_min_vruntime {
        vruntime = match curr {
            None => root,
            Some(_) => min_vruntime(vruntime, root),
        };
    }
    // __update_min_vruntime(): an open-coded max_vruntime().
    let delta = vruntime.wrapping_sub(cfs_rq.min_vruntime) as i64;
    if delta > 0 {
        match profile.fair {
            FairClass::Eevdf => avg_vruntime_update(cfs_rq, delta),
            FairClass::CfsV6_1 => {}
        }
        cfs_rq.min_vruntime = vruntime;
    }
}

/// `cfs_rq_min_slice()`: the shortest slice of a queued curr and the tree
/// (`root_min_slice`), `u64::MAX` when both are absent.
pub fn cfs_rq_min_slice(curr_slice: Option<u64>, root_min_slice: Option<u64>) -> u64 {
    let s = curr_slice.unwrap_or(u64::MAX);
    root_min_slice.map_or(s, |r| s.min(r))
}

/// `set_protect_slice()`: the vruntime up to which a newly picked entity runs before the
/// pick is looked at again — its deadline, or sooner when a shorter slice is queued
/// (`RUN_TO_PARITY`; without it, at most `normalized_sysctl_sched_base_slice`). Written to
/// `vprot`, i.e. over `vlag`.
pub fn set_protect_slice(
    se: &mut SchedEntity,
    min_slice: u64,
    run_to_parity: bool,
    normalized_base_slice: u64,
) {
    let mut slice = if run_to_parity {
        min_slice
    } else {
        normalized_base_slice
    };
    slice = slice.min(se.slice);
    let mut vprot = se.deadline;
    if slice != se.slice {
        let end = se
            .vruntime
            .wrapping_add(calc_delta_fair(slice, &mut se.load));
        vprot = min_vruntime(vprot, end);
    }
    se.vlag = vprot as i64; // vprot shares vlag's storage
}

/// `protect_slice()`: curr is still inside its protected window.
pub fn protect_slice(se: &SchedEntity) -> bool {
    (se.vprot().wrapping_sub(se.vruntime) as i64) > 0
}

/// `update_protect_slice()`: a shorter slice queued since curr was picked cuts its
/// protection to `vruntime + min_slice / w` (never extends it).
pub fn update_protect_slice(se: &mut SchedEntity, min_slice: u64) {
    let end = se
        .vruntime
        .wrapping_add(calc_delta_fair(min_slice, &mut se.load));
    se.vlag = min_vruntime(se.vprot(), end) as i64; // vprot shares vlag's storage
}

/// `cancel_protect_slice()`: a protected curr loses the rest of its protection.
pub fn cancel_protect_slice(se: &mut SchedEntity) {
    if protect_slice(se) {
        se.vlag = se.vruntime as i64; // vprot = vruntime
    }
}

/// `entity_before()` of EEVDF's tree: `a`'s deadline is earlier (signed difference).
pub fn entity_before(a: &SchedEntity, b: &SchedEntity) -> bool {
    (a.deadline.wrapping_sub(b.deadline) as i64) < 0
}

/// `PREEMPT_SHORT` (features.h, default on since v6.12): a waking entity with a shorter
/// slice than curr may cut curr's slice protection.
pub const PREEMPT_SHORT: bool = true;

/// `__pick_eevdf()`: among the entities in the tree (`tree`, in tree order for equal
/// deadlines: first inserted first) and curr, the eligible one with the earliest virtual
/// deadline; curr while it is eligible and (with `protect`) inside its protected slice.
///
/// The kernel's augmented-tree search finds the leftmost eligible entity in deadline
/// order; scanning every entity for the earliest eligible deadline finds the same one.
/// Trap: with one entity queued the eligibility test is skipped — an ineligible (delayed)
/// lone entity is still picked. `curr` is `cfs_rq->curr` (its `on_rq` says whether it is
/// still queued); `None` when the tree is empty and curr is gone.
pub fn __pick_eevdf<'a, K: Copy + 'a>(
    cfs_rq: &CfsRq,
    curr: Option<(K, &SchedEntity)>,
    tree: impl Iterator<Item = (K, &'a SchedEntity)>,
    protect: bool,
) -> Option<K> {
    let view = curr.map(|(_, se)| se.as_curr());
    let mut leftmost: Option<(K, &SchedEntity)> = None;
    let mut best: Option<(K, &SchedEntity)> = None;
    for (k, se) in tree {
        if leftmost.is_none_or(|(_, l)| entity_before(se, l)) {
            leftmost = Some((k, se));
        }
        if best.is_none_or(|(_, b)| entity_before(se, b)) && entity_eligible(cfs_rq, view, se) {
            best = Some((k, se));
        }
    }
    if cfs_rq.nr_queued == 1 {
        return match curr {
            Some((k, se)) if se.on_rq => Some(k),
            _ => leftmost.map(|(k, _)| k),
        };
    }
    let curr = curr.filter(|(_, se)| se.on_rq && entity_eligible(cfs_rq, view, se));
    if let Some((k, se)) = curr {
        if protect && protect_slice(se) {
            return Some(k);
        }
    }
    match (best, curr) {
        (None, Some((k, _))) => Some(k),
        (Some((_, b)), Some((k, c))) if entity_before(c, b) => Some(k),
        (b, _) => b.map(|(k, _)| k),
    }
}

/// The EEVDF part of `check_preempt_wakeup_fair()`, once curr's entity `se` and the woken
/// entity `pse` (in the tree) share `cfs_rq` and curr's time is accounted: preempt when
/// `pse` is what `__pick_eevdf()` now picks — ignoring curr's protection when `pse` asks
/// for a shorter slice (PREEMPT_SHORT), which then also cancels that protection; a
/// shorter slice that does not win still trims curr's protection (RUN_TO_PARITY).
/// `min_slice` is `cfs_rq_min_slice()` with `pse` queued.
pub fn check_preempt_wakeup_fair<'a, K: Copy + PartialEq + 'a>(
    cfs_rq: &CfsRq,
    se: (K, &mut SchedEntity),
    pse: (K, &SchedEntity),
    tree: impl Iterator<Item = (K, &'a SchedEntity)>,
    min_slice: u64,
    features: &EevdfFeatures,
) -> bool {
    let do_preempt_short = PREEMPT_SHORT && pse.1.slice < se.1.slice;
    let picked = __pick_eevdf(cfs_rq, Some((se.0, &*se.1)), tree, !do_preempt_short);
    if picked == Some(pse.0) {
        if do_preempt_short {
            cancel_protect_slice(se.1);
        }
        return true;
    }
    if features.run_to_parity && do_preempt_short {
        update_protect_slice(se.1, min_slice);
    }
    false
}

/// `reweight_entity()` for one entity of `cfs_rq`, up to (not including) its final
/// `update_min_vruntime()`: a queued entity's lag is taken and it leaves the sums (unless
/// it is curr, which the sums never hold), its `vlag` and relative deadline are rescaled by
/// `old / new` weight (`div_s64()`: s32 divisor) and it is placed again with that lag.
/// `curr` is `cfs_rq->curr` as the sums see it (`se` itself when `is_curr`).
#[allow(clippy::too_many_arguments)] // the kernel reads these from se, cfs_rq and sysctls
pub fn reweight_entity(
    cfs_rq: &mut CfsRq,
    curr: Option<Curr>,
    se: &mut SchedEntity,
    is_curr: bool,
    weight: u64,
    features: &EevdfFeatures,
    base_slice: u64,
    tick_nsec: u64,
) -> Result<(), DivideTrap> {
    if se.on_rq {
        update_entity_lag(cfs_rq, curr, se, tick_nsec)?;
        se.deadline = se.deadline.wrapping_sub(se.vruntime);
        se.rel_deadline = true;
        cfs_rq.nr_queued = cfs_rq.nr_queued.wrapping_sub(1);
        if !is_curr {
            avg_vruntime_sub(cfs_rq, se);
        }
        update_load_sub(&mut cfs_rq.load, se.load.weight);
    }
    let old = se.load.weight;
    let divisor = weight as i32; // div_s64() takes the low 32 bits
                                 // `vlag * load.weight`: s64 times unsigned long, the same bits as a wrapping i64.
    se.vlag = div_s64(se.vlag.wrapping_mul(old as i64), divisor)?;
    if se.rel_deadline {
        let d = se.deadline.wrapping_mul(old) as i64; // u64 product read as s64
        se.deadline = div_s64(d, divisor)? as u64;
    }
    se.load = LoadWeight::new(weight);
    if se.on_rq {
        let curr = if is_curr { Some(se.as_curr()) } else { curr };
        place_entity(cfs_rq, curr, se, false, features, base_slice)?;
        update_load_add(&mut cfs_rq.load, weight);
        if !is_curr {
            avg_vruntime_add(cfs_rq, se);
        }
        cfs_rq.nr_queued = cfs_rq.nr_queued.wrapping_add(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fair::NICE_0_LOAD;

    fn rq(min: u64, avg: i64, load: u64) -> CfsRq {
        CfsRq {
            min_vruntime: min,
            avg_vruntime: avg,
            avg_load: load,
            nr_queued: 1,
            load: LoadWeight::default(),
        }
    }

    #[test]
    fn avg_vruntime_floors_negative_sums() {
        // -5 over 2: floor is -3 (truncation would give -2).
        assert_eq!(avg_vruntime(&rq(100, -5, 2), None), Ok(97));
        assert_eq!(avg_vruntime(&rq(100, 5, 2), None), Ok(102));
    }

    #[test]
    fn avg_vruntime_zero_load_adds_the_sum_undivided() {
        assert_eq!(avg_vruntime(&rq(100, 7, 0), None), Ok(107));
    }

    #[test]
    fn avg_vruntime_divides_by_the_loads_low_32_bits() {
        // load 2^32 + 2 divides by 2; a load of 2^32 would fault.
        assert_eq!(avg_vruntime(&rq(0, 10, (1 << 32) + 2), None), Ok(5));
        assert_eq!(avg_vruntime(&rq(0, 10, 1 << 32), None), Err(DivideTrap));
        // load 2^31 + 2 is a negative s32 divisor: 10 / -2147483646 = 0.
        assert_eq!(avg_vruntime(&rq(0, 10, (1 << 31) + 2), None), Ok(0));
    }

    #[test]
    fn fresh_cfs_rq_wraps_through_2_pow_64() {
        let v0 = u64::MAX - (1 << 20) + 1; // 2^64 - 2^20
        let mut c = rq(v0, 0, 0);
        let mut se = SchedEntity {
            load: LoadWeight::new(NICE_0_LOAD),
            vruntime: v0.wrapping_add(2 << 20),
            ..SchedEntity::default()
        };
        avg_vruntime_add(&mut c, &se);
        assert_eq!(c.avg_vruntime, 1024 * (2 << 20));
        assert_eq!(avg_vruntime(&c, None), Ok(1 << 20));
        assert!(vruntime_eligible(&c, None, 1 << 20));
        assert!(!vruntime_eligible(&c, None, (1 << 20) + 1));
        se.vruntime = v0;
        assert!(vruntime_eligible(&c, None, se.vruntime));
    }

    #[test]
    fn place_entity_multiplies_before_replacing_zero_load() {
        // nr_queued > 0 but no load: lag = vlag * (0 + 1024), then divided by 1.
        let c = CfsRq {
            nr_queued: 1,
            ..rq(1000, 0, 0)
        };
        let mut se = SchedEntity {
            load: LoadWeight {
                weight: NICE_0_LOAD,
                inv_weight: 4_194_304,
            },
            vlag: 3,
            ..SchedEntity::default()
        };
        let p = place_entity(&c, None, &mut se, false, &EevdfFeatures::default(), 700_000);
        assert_eq!(p.map(|p| p.lag), Ok(3072));
        assert_eq!(se.vruntime, 1000u64.wrapping_sub(3072));
        assert_eq!(se.deadline, se.vruntime.wrapping_add(700_000));
        assert_eq!(se.slice, 700_000);
    }

    #[test]
    fn place_entity_initial_halves_the_vslice_and_rel_deadline_returns_early() {
        let c = rq(5000, 0, 0);
        let mut se = SchedEntity {
            load: LoadWeight::new(NICE_0_LOAD),
            ..SchedEntity::default()
        };
        let f = EevdfFeatures::default();
        let p = place_entity(&c, None, &mut se, true, &f, 2_800_000).unwrap();
        assert_eq!((p.vslice, se.deadline), (1_400_000, 5000 + 1_400_000));
        se.deadline = 123;
        se.rel_deadline = true;
        place_entity(&c, None, &mut se, true, &f, 2_800_000).unwrap();
        assert_eq!((se.deadline, se.rel_deadline), (5000 + 123, false));
    }

    #[test]
    fn update_deadline_fires_at_equality() {
        let mut se = SchedEntity {
            load: LoadWeight::new(NICE_0_LOAD),
            vruntime: 10,
            deadline: 11,
            slice: 5,
            ..SchedEntity::default()
        };
        assert!(!update_deadline(&mut se, 700_000));
        se.vruntime = 11;
        assert!(update_deadline(&mut se, 700_000));
        assert_eq!((se.slice, se.deadline), (700_000, 700_011));
        // A custom slice is kept.
        se.custom_slice = true;
        se.slice = 100_000;
        se.vruntime = se.deadline;
        assert!(update_deadline(&mut se, 700_000));
        assert_eq!(se.deadline, 700_011 + 100_000);
    }

    #[test]
    fn update_min_vruntime_corrects_the_sums_only_under_eevdf() {
        let mut c = rq(100, 0, 2048);
        update_min_vruntime(&mut c, None, Some(150), &Profile::MAINLINE);
        assert_eq!((c.min_vruntime, c.avg_vruntime), (150, -2048 * 50));
        // Never backwards.
        update_min_vruntime(&mut c, None, Some(120), &Profile::MAINLINE);
        assert_eq!(c.min_vruntime, 150);
        let mut c = rq(100, 0, 2048);
        let cfs = Profile::from_name("fair-cfs").unwrap();
        let curr = Curr {
            vruntime: 400,
            weight: NICE_0_LOAD,
            on_rq: true,
        };
        update_min_vruntime(&mut c, Some(curr), Some(300), &cfs);
        assert_eq!((c.min_vruntime, c.avg_vruntime), (300, 0));
    }

    #[test]
    fn vlag_is_also_vprot() {
        let mut se = SchedEntity {
            load: LoadWeight::new(NICE_0_LOAD),
            vruntime: 1000,
            deadline: 5000,
            slice: 2_800_000,
            vlag: -7,
            ..SchedEntity::default()
        };
        set_protect_slice(&mut se, 2_800_000, true, 700_000);
        assert_eq!((se.vlag, se.vprot()), (5000, 5000));
        assert!(protect_slice(&se));
        // A shorter queued slice protects only that far.
        set_protect_slice(&mut se, 100, true, 700_000);
        assert_eq!(se.vprot(), 1100);
        // The lag update overwrites the protection.
        let c = rq(0, 0, 0);
        update_entity_lag(&c, None, &mut se, 1_000_000).unwrap();
        assert_eq!(se.vlag, -1000);
    }

    fn ent(vruntime: u64, deadline: u64) -> SchedEntity {
        SchedEntity {
            load: LoadWeight::new(NICE_0_LOAD),
            vruntime,
            deadline,
            slice: 2_800_000,
            on_rq: true,
            ..SchedEntity::default()
        }
    }

    /// A cfs_rq whose sums hold `tree` (min_vruntime 0).
    fn sums(tree: &[SchedEntity], curr: bool) -> CfsRq {
        let mut c = CfsRq::default();
        for se in tree {
            avg_vruntime_add(&mut c, se);
        }
        c.nr_queued = tree.len() as u32 + u32::from(curr);
        c
    }

    #[test]
    fn pick_eevdf_takes_the_earliest_eligible_deadline_not_the_leftmost() {
        // V = 200: entity 0 (v 400, earliest deadline) is not eligible.
        let tree = [ent(400, 500), ent(0, 900), ent(200, 700)];
        let c = sums(&tree, false);
        let it = || tree.iter().enumerate();
        assert_eq!(__pick_eevdf(&c, None, it(), true), Some(2));
        // Equal deadlines: the first in tree order.
        let tree = [ent(0, 700), ent(0, 700)];
        let c = sums(&tree, false);
        assert_eq!(
            __pick_eevdf(&c, None, tree.iter().enumerate(), true),
            Some(0)
        );
        // A lone entity is picked without the eligibility test.
        let lone = [ent(10, 20)];
        let mut c = sums(&lone, false);
        c.min_vruntime = 0;
        c.avg_vruntime = -5; // V below its vruntime
        assert_eq!(
            __pick_eevdf(&c, None, lone.iter().enumerate(), true),
            Some(0)
        );
    }

    #[test]
    fn pick_eevdf_keeps_a_protected_curr_and_prefers_an_earlier_curr_deadline() {
        let tree = [ent(0, 300)];
        let mut curr = ent(0, 1000);
        curr.vlag = 500; // vprot ahead of vruntime: protected
        let c = sums(&tree, true);
        let it = || tree.iter().map(|se| (1usize, se));
        assert_eq!(__pick_eevdf(&c, Some((9, &curr)), it(), true), Some(9));
        assert_eq!(__pick_eevdf(&c, Some((9, &curr)), it(), false), Some(1));
        curr.deadline = 200;
        assert_eq!(__pick_eevdf(&c, Some((9, &curr)), it(), false), Some(9));
        // A curr that left the runqueue is not a candidate.
        curr.on_rq = false;
        assert_eq!(__pick_eevdf(&c, Some((9, &curr)), it(), true), Some(1));
    }

    #[test]
    fn preempt_short_cancels_the_protection_and_a_losing_short_slice_trims_it() {
        let f = EevdfFeatures::default();
        let mut curr = ent(0, 2_800_000);
        curr.vlag = 2_800_000; // protected up to its deadline
        let mut short = ent(0, 100_000);
        short.slice = 100_000;
        let c = sums(&[short], true);
        let tree = [short];
        let woke = check_preempt_wakeup_fair(
            &c,
            (0usize, &mut curr),
            (1, &short),
            tree.iter().map(|se| (1usize, se)),
            100_000,
            &f,
        );
        assert!(woke);
        assert_eq!(curr.vprot(), curr.vruntime); // protection cancelled
                                                 // A short slice whose deadline is later does not win but trims the protection.
        let mut curr = ent(0, 2_800_000);
        curr.vlag = 2_800_000;
        let mut late = ent(0, 3_000_000);
        late.slice = 100_000;
        let tree = [late];
        let woke = check_preempt_wakeup_fair(
            &c,
            (0usize, &mut curr),
            (1, &late),
            tree.iter().map(|se| (1usize, se)),
            100_000,
            &f,
        );
        assert!(!woke);
        assert_eq!(curr.vprot(), 100_000);
        assert!(entity_before(&curr, &late));
    }

    #[test]
    fn update_and_cancel_protect_slice_only_shorten() {
        let mut se = ent(1000, 9000);
        se.vlag = 5000;
        update_protect_slice(&mut se, 10_000_000);
        assert_eq!(se.vprot(), 5000);
        update_protect_slice(&mut se, 1000);
        assert_eq!(se.vprot(), 2000);
        cancel_protect_slice(&mut se);
        assert_eq!(se.vprot(), 1000);
        se.vlag = 10; // already unprotected: unchanged
        cancel_protect_slice(&mut se);
        assert_eq!(se.vprot(), 10);
    }

    #[test]
    fn reweight_entity_of_a_queued_entity_keeps_its_lag_in_real_time() {
        // Two nice-0 entities at V = 500; entity 0 (v 0, lag 500) doubles its weight.
        let mut tree = [ent(0, 3_000_000), ent(1000, 3_000_000)];
        let mut c = sums(&tree, false);
        let f = EevdfFeatures::default();
        let [a, _] = &mut tree;
        reweight_entity(
            &mut c,
            None,
            a,
            false,
            2 * NICE_0_LOAD,
            &f,
            2_800_000,
            4_000_000,
        )
        .unwrap();
        // vlag 500 halves to 250 and is inflated by (1024 + 2048) / 1024 on placement
        // around the V of the remaining entity (1000): v = 1000 - 750.
        assert_eq!((a.vlag, a.vruntime), (250, 250));
        assert_eq!(a.deadline, 250 + 1_500_000);
        assert_eq!((c.avg_load, c.nr_queued), (3072, 2));
        // load.weight: the sums helper started it at 0; -1 MiB + 2 MiB.
        assert_eq!(c.load.weight, NICE_0_LOAD);
    }

    #[test]
    fn cfs_rq_min_slice_defaults_to_u64_max() {
        assert_eq!(cfs_rq_min_slice(None, None), u64::MAX);
        assert_eq!(cfs_rq_min_slice(Some(5), Some(3)), 3);
        assert_eq!(cfs_rq_min_slice(None, Some(7)), 7);
    }
}
