// SPDX-License-Identifier: GPL-2.0-only
//! One EEVDF cfs_rq driven as the kernel drives it — kernel/sched/fair.c
//! (`enqueue_entity()`, `dequeue_entity()` with DELAY_DEQUEUE, `requeue_delayed_entity()`,
//! `set_next_entity()`, `put_prev_entity()`, `update_curr()`, `reweight_entity()`,
//! `reweight_task_fair()`, `yield_task_fair()`) and `__setparam_fair()`'s slice.
//!
//! A flat runqueue of task entities (no group hierarchy, no bandwidth, no PELT): the
//! entity table is a fixed array of `N` slots, entities are named by their index. Time
//! only advances through [`EevdfRq::update_curr`]; the `update_curr()` calls inside the
//! other operations see no elapsed time, as when they run right after one. The rbtree is
//! not modelled: what its augmented root caches (smallest vruntime and slice of the
//! entities in it) is computed from the entities in it, and the pick is the caller's
//! (`set_next_entity()` of the entity it chose).
//!
//! If an operation returns [`RqError::Trap`] the kernel would have faulted part-way; the
//! state is then whatever the arithmetic had reached.

use super::eevdf::{
    __pick_eevdf, avg_vruntime, avg_vruntime_add, avg_vruntime_sub, cfs_rq_min_slice,
    entity_eligible, place_entity, protect_slice, set_protect_slice, update_deadline,
    update_entity_lag, update_min_vruntime, CfsRq, Curr, EevdfFeatures, SchedEntity,
};
use super::sysctl::__setparam_fair;
use super::weight::{
    calc_delta_fair, set_load_weight, update_load_add, update_load_sub, FairPolicy,
};
use super::{min_vruntime, DivideTrap};
use crate::profile::Profile;

/// Default entity capacity of an [`EevdfRq`] for callers without a reason to pick
/// another: the fixtures queue 1-8 entities; 64 covers a busy CPU's runnable tasks in the
/// lab workloads with room to spare. A runqueue refuses entities beyond its `N`.
pub const EEVDF_RQ_MAX_ENTITIES: usize = 64;

/// Why an operation could not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RqError {
    /// No entity with this index.
    NoEntity(usize),
    /// The entity table is full (its `N`).
    Full,
    /// A nice level outside -20..=19.
    Nice(i32),
    /// The kernel would have faulted on a division.
    Trap(DivideTrap),
}

impl From<DivideTrap> for RqError {
    fn from(t: DivideTrap) -> Self {
        RqError::Trap(t)
    }
}

impl core::fmt::Display for RqError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoEntity(i) => write!(f, "no entity {i} on this runqueue"),
            Self::Full => f.write_str("entity table full"),
            Self::Nice(n) => write!(f, "nice {n} outside -20..=19"),
            Self::Trap(t) => t.fmt(f),
        }
    }
}

/// The tunables one cfs_rq reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EevdfConfig {
    /// `sysctl_sched_base_slice` (ns).
    pub base_slice: u64,
    /// `normalized_sysctl_sched_base_slice` (ns): the protection without RUN_TO_PARITY.
    pub normalized_base_slice: u64,
    /// `TICK_NSEC`: the least lag limit.
    pub tick_nsec: u64,
    /// Feature switches.
    pub features: EevdfFeatures,
}

/// `ENQUEUE_*` flags that change the arithmetic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnqueueFlags {
    /// `ENQUEUE_INITIAL`: a new task (half a slice to start with).
    pub initial: bool,
}

/// `DEQUEUE_*` flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DequeueFlags {
    /// `DEQUEUE_SLEEP`: the task blocks (may be delayed; keeps an absolute deadline).
    pub sleep: bool,
    /// `DEQUEUE_SPECIAL`: a special task state, never delayed.
    pub special: bool,
    /// `DEQUEUE_DELAYED`: finish a delayed dequeue.
    pub delayed: bool,
    /// `DEQUEUE_SAVE`: taken off to be put back (min_vruntime kept unless also MOVE).
    pub save: bool,
    /// `DEQUEUE_MOVE`.
    pub r#move: bool,
}

/// `dequeue_entity()` of one entity of `cfs_rq` (whose sums hold it unless it is curr),
/// up to (not including) the final `update_min_vruntime()`: `Ok(false)` when the dequeue
/// is delayed (DELAY_DEQUEUE: a sleeping entity that is not eligible stays queued with
/// `sched_delayed`), else the entity leaves with its lag saved (its deadline made relative
/// unless it sleeps); finishing a delayed dequeue cuts a positive lag (DELAY_ZERO).
pub fn dequeue_entity(
    cfs_rq: &mut CfsRq,
    curr: Option<Curr>,
    se: &mut SchedEntity,
    is_curr: bool,
    flags: DequeueFlags,
    config: &EevdfConfig,
) -> Result<bool, DivideTrap> {
    let f = config.features;
    if !flags.delayed {
        let delay = flags.sleep && !flags.special;
        if f.delay_dequeue && delay && !entity_eligible(cfs_rq, curr, se) {
            se.sched_delayed = true;
            return Ok(false);
        }
    }
    update_entity_lag(cfs_rq, curr, se, config.tick_nsec)?;
    if f.place_rel_deadline && !flags.sleep {
        se.deadline = se.deadline.wrapping_sub(se.vruntime);
        se.rel_deadline = true;
    }
    if !is_curr {
        avg_vruntime_sub(cfs_rq, se);
    }
    se.on_rq = false;
    update_load_sub(&mut cfs_rq.load, se.load.weight);
    cfs_rq.nr_queued = cfs_rq.nr_queued.wrapping_sub(1);
    if flags.delayed {
        // finish_delayed_dequeue_entity()
        se.sched_delayed = false;
        if f.delay_zero && se.vlag > 0 {
            se.vlag = 0;
        }
    }
    Ok(true)
}

/// `requeue_delayed_entity()`: a delayed entity of `cfs_rq` (in its sums unless curr)
/// wakes up. With DELAY_ZERO its lag is recomputed and, if positive, it is placed again
/// with zero lag; the delayed flag clears.
pub fn requeue_delayed_entity(
    cfs_rq: &mut CfsRq,
    curr: Option<Curr>,
    se: &mut SchedEntity,
    is_curr: bool,
    config: &EevdfConfig,
) -> Result<(), DivideTrap> {
    if config.features.delay_zero {
        update_entity_lag(cfs_rq, curr, se, config.tick_nsec)?;
        if se.vlag > 0 {
            cfs_rq.nr_queued = cfs_rq.nr_queued.wrapping_sub(1);
            if !is_curr {
                avg_vruntime_sub(cfs_rq, se);
            }
            se.vlag = 0;
            place_entity(cfs_rq, curr, se, false, &config.features, config.base_slice)?;
            if !is_curr {
                avg_vruntime_add(cfs_rq, se);
            }
            cfs_rq.nr_queued = cfs_rq.nr_queued.wrapping_add(1);
        }
    }
    se.sched_delayed = false;
    Ok(())
}

/// An entity slot: the entity and whether it sits in the (unmodelled) rbtree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RqEntity {
    /// The entity.
    pub se: SchedEntity,
    /// `__enqueue_entity()` put it in the tree and `__dequeue_entity()` has not removed it.
    pub in_tree: bool,
}

/// One cfs_rq with up to `N` task entities.
#[derive(Clone, Debug)]
pub struct EevdfRq<const N: usize> {
    /// The runqueue's sums, load and reference vruntime.
    pub cfs: CfsRq,
    /// `cfs_rq->curr`: index of the running entity.
    pub curr: Option<usize>,
    /// The entities, queued or not.
    pub entities: heapless::Vec<RqEntity, N>,
    /// Tunables.
    pub config: EevdfConfig,
    /// Behaviour profile (EEVDF's sums follow `min_vruntime` under mainline).
    pub profile: Profile,
}

impl<const N: usize> EevdfRq<N> {
    /// An empty runqueue whose reference vruntime starts at `min_vruntime` (a fresh
    /// kernel cfs_rq starts at `2^64 - 2^20`).
    pub fn new(min_vruntime: u64, config: EevdfConfig, profile: Profile) -> Self {
        EevdfRq {
            cfs: CfsRq {
                min_vruntime,
                ..CfsRq::default()
            },
            curr: None,
            entities: heapless::Vec::new(),
            config,
            profile,
        }
    }

    /// Adds an entity, off the runqueue; returns its index.
    pub fn add_entity(&mut self, mut se: SchedEntity) -> Result<usize, RqError> {
        se.on_rq = false;
        se.sched_delayed = false;
        let i = self.entities.len();
        self.entities
            .push(RqEntity { se, in_tree: false })
            .map_err(|_| RqError::Full)?;
        Ok(i)
    }

    /// Entity `i`.
    pub fn se(&self, i: usize) -> Result<&SchedEntity, RqError> {
        self.entities
            .get(i)
            .map(|e| &e.se)
            .ok_or(RqError::NoEntity(i))
    }

    fn check(&self, i: usize) -> Result<(), RqError> {
        self.se(i).map(|_| ())
    }

    /// `cfs_rq->curr` as the helpers read it.
    pub fn curr_view(&self) -> Option<Curr> {
        self.curr
            .and_then(|c| self.entities.get(c))
            .map(|e| e.se.as_curr())
    }

    fn tree(&self) -> impl Iterator<Item = &SchedEntity> + '_ {
        self.entities.iter().filter(|e| e.in_tree).map(|e| &e.se)
    }

    /// The tree root's `min_vruntime`: the earliest vruntime in the tree.
    pub fn root_min_vruntime(&self) -> Option<u64> {
        self.tree().map(|s| s.vruntime).reduce(min_vruntime)
    }

    /// The tree root's `min_slice`: the shortest slice in the tree.
    pub fn root_min_slice(&self) -> Option<u64> {
        self.tree().map(|s| s.slice).min()
    }

    /// `avg_vruntime()`: `V` now.
    pub fn avg_vruntime(&self) -> Result<u64, DivideTrap> {
        avg_vruntime(&self.cfs, self.curr_view())
    }

    /// `entity_eligible()` of entity `i`.
    pub fn entity_eligible(&self, i: usize) -> Result<bool, RqError> {
        Ok(entity_eligible(&self.cfs, self.curr_view(), self.se(i)?))
    }

    /// `pick_eevdf()` on this runqueue: [`__pick_eevdf`] over its tree and curr
    /// (`protect`: curr keeps the CPU inside its protected slice, RUN_TO_PARITY).
    pub fn pick_eevdf(&self, protect: bool) -> Option<usize> {
        let curr = self
            .curr
            .and_then(|c| self.entities.get(c).map(|e| (c, &e.se)));
        let tree = self
            .entities
            .iter()
            .enumerate()
            .filter(|(_, e)| e.in_tree)
            .map(|(k, e)| (k, &e.se));
        __pick_eevdf(&self.cfs, curr, tree, protect)
    }

    /// `cfs_rq_min_slice()`.
    pub fn cfs_rq_min_slice(&self) -> u64 {
        let curr_slice = self
            .curr
            .and_then(|c| self.entities.get(c))
            .filter(|e| e.se.on_rq)
            .map(|e| e.se.slice);
        cfs_rq_min_slice(curr_slice, self.root_min_slice())
    }

    fn update_min_vruntime(&mut self) {
        let (curr, root) = (self.curr_view(), self.root_min_vruntime());
        update_min_vruntime(&mut self.cfs, curr, root, &self.profile);
    }

    fn __enqueue_entity(&mut self, i: usize) {
        if let Some(e) = self.entities.get_mut(i) {
            avg_vruntime_add(&mut self.cfs, &e.se);
            e.in_tree = true;
        }
    }

    fn __dequeue_entity(&mut self, i: usize) {
        if let Some(e) = self.entities.get_mut(i) {
            e.in_tree = false;
            avg_vruntime_sub(&mut self.cfs, &e.se);
        }
    }

    fn place_entity(&mut self, i: usize, initial: bool) -> Result<(), RqError> {
        let curr = self.curr_view();
        let e = self.entities.get_mut(i).ok_or(RqError::NoEntity(i))?;
        place_entity(
            &self.cfs,
            curr,
            &mut e.se,
            initial,
            &self.config.features,
            self.config.base_slice,
        )?;
        Ok(())
    }

    fn se_mut(&mut self, i: usize) -> Result<&mut SchedEntity, RqError> {
        self.entities
            .get_mut(i)
            .map(|e| &mut e.se)
            .ok_or(RqError::NoEntity(i))
    }

    /// `enqueue_entity()`: places entity `i` (before accounting when it is the dequeued
    /// curr, after otherwise — the order only matters for groups) and queues it.
    pub fn enqueue_entity(&mut self, i: usize, flags: EnqueueFlags) -> Result<(), RqError> {
        self.check(i)?;
        let is_curr = self.curr == Some(i);
        // update_curr(): no time has passed; update_cfs_group(): tasks have no group.
        self.place_entity(i, flags.initial)?;
        let weight = self.se(i)?.load.weight;
        update_load_add(&mut self.cfs.load, weight);
        self.cfs.nr_queued = self.cfs.nr_queued.wrapping_add(1);
        if !is_curr {
            self.__enqueue_entity(i);
        }
        self.se_mut(i)?.on_rq = true;
        Ok(())
    }

    /// `dequeue_entity()`: `Ok(false)` when the dequeue was delayed (DELAY_DEQUEUE: a
    /// sleeping entity that is not eligible stays queued with `sched_delayed`), else the
    /// entity leaves with its lag saved (and its deadline made relative unless it sleeps).
    pub fn dequeue_entity(&mut self, i: usize, flags: DequeueFlags) -> Result<bool, RqError> {
        self.check(i)?;
        let is_curr = self.curr == Some(i);
        let curr = self.curr_view();
        let cfg = self.config;
        let e = self.entities.get_mut(i).ok_or(RqError::NoEntity(i))?;
        if !dequeue_entity(&mut self.cfs, curr, &mut e.se, is_curr, flags, &cfg)? {
            return Ok(false);
        }
        if !is_curr {
            e.in_tree = false;
        }
        // (flags & (DEQUEUE_SAVE | DEQUEUE_MOVE)) != DEQUEUE_SAVE
        if !flags.save || flags.r#move {
            self.update_min_vruntime();
        }
        Ok(true)
    }

    /// `requeue_delayed_entity()`: a delayed entity wakes up. With DELAY_ZERO its lag is
    /// recomputed and, if positive, it is placed again with zero lag.
    pub fn requeue_delayed_entity(&mut self, i: usize) -> Result<(), RqError> {
        self.check(i)?;
        let is_curr = self.curr == Some(i);
        let curr = self.curr_view();
        let cfg = self.config;
        let e = self.entities.get_mut(i).ok_or(RqError::NoEntity(i))?;
        requeue_delayed_entity(&mut self.cfs, curr, &mut e.se, is_curr, &cfg)?;
        Ok(())
    }

    /// `set_next_entity()`: entity `i` becomes curr; a queued one leaves the tree and gets
    /// its protected vruntime (`vprot`, stored over `vlag`).
    pub fn set_next_entity(&mut self, i: usize) -> Result<(), RqError> {
        self.check(i)?;
        if self.se(i)?.on_rq {
            self.__dequeue_entity(i);
            let min_slice = self.cfs_rq_min_slice();
            let (rtp, norm) = (
                self.config.features.run_to_parity,
                self.config.normalized_base_slice,
            );
            set_protect_slice(self.se_mut(i)?, min_slice, rtp, norm);
        }
        self.curr = Some(i);
        Ok(())
    }

    /// `put_prev_entity()`: curr goes back into the tree if still queued; no curr.
    pub fn put_prev_entity(&mut self) {
        if let Some(c) = self.curr {
            if self.entities.get(c).is_some_and(|e| e.se.on_rq) {
                self.__enqueue_entity(c);
            }
        }
        self.curr = None;
    }

    /// `update_curr()` after curr ran `delta_exec` ns: its vruntime advances by the
    /// weighted delta, its deadline is renewed once reached, `min_vruntime` follows.
    /// Returns whether the kernel would reschedule: more than one entity queued and the
    /// deadline passed or curr left its protected window. No curr or `delta_exec <= 0`:
    /// nothing happens.
    pub fn update_curr(&mut self, delta_exec: i64) -> Result<bool, RqError> {
        let Some(c) = self.curr else {
            return Ok(false);
        };
        if delta_exec <= 0 {
            return Ok(false);
        }
        let base = self.config.base_slice;
        let se = self.se_mut(c)?;
        let dv = calc_delta_fair(delta_exec as u64, &mut se.load); // delta_exec > 0 here
        se.vruntime = se.vruntime.wrapping_add(dv);
        let resched = update_deadline(se, base);
        self.update_min_vruntime();
        if self.cfs.nr_queued == 1 {
            return Ok(false);
        }
        Ok(resched || !protect_slice(self.se(c)?))
    }

    /// `reweight_entity()`: a new weight for entity `i` (queued or not, curr or not). A
    /// queued entity's lag is taken, it leaves, its `vlag` and relative deadline are
    /// rescaled by `old / new` weight (`div_s64()`: s32 divisor) and it is placed again.
    /// The inverse weight is reset to be computed lazily.
    pub fn reweight_entity(&mut self, i: usize, weight: u64) -> Result<(), RqError> {
        self.check(i)?;
        let is_curr = self.curr == Some(i);
        let curr = self.curr_view();
        let cfg = self.config;
        let e = self.entities.get_mut(i).ok_or(RqError::NoEntity(i))?;
        // The entity stays in (or out of) the tree: `in_tree` does not change.
        super::eevdf::reweight_entity(
            &mut self.cfs,
            curr,
            &mut e.se,
            is_curr,
            weight,
            &cfg.features,
            cfg.base_slice,
            cfg.tick_nsec,
        )?;
        if e.se.on_rq {
            self.update_min_vruntime();
        }
        Ok(())
    }

    /// `reweight_task_fair()` from `set_load_weight()` (renice, policy change): the
    /// table weight through [`Self::reweight_entity`] (so any re-placement uses the lazy
    /// inverse), then the table inverse is stored.
    pub fn reweight_task(
        &mut self,
        i: usize,
        nice: i32,
        policy: FairPolicy,
    ) -> Result<(), RqError> {
        let lw = set_load_weight(nice, policy).ok_or(RqError::Nice(nice))?;
        self.reweight_entity(i, lw.weight)?;
        self.se_mut(i)?.load.inv_weight = lw.inv_weight;
        Ok(())
    }

    /// `yield_task_fair()`: curr gives up the rest of its request, `deadline +=
    /// slice / w`; nothing when it is alone.
    pub fn yield_task_fair(&mut self) -> Result<(), RqError> {
        let Some(c) = self.curr else {
            return Ok(());
        };
        if self.cfs.nr_queued == 1 {
            return Ok(());
        }
        let se = self.se_mut(c)?;
        let dv = calc_delta_fair(se.slice, &mut se.load);
        se.deadline = se.deadline.wrapping_add(dv);
        Ok(())
    }

    /// `__setparam_fair()`'s slice part for entity `i` (sched_setattr on a task that is
    /// off the runqueue): a custom slice, or back to the base slice for 0.
    pub fn set_slice(&mut self, i: usize, sched_runtime: u64) -> Result<(), RqError> {
        let base = self.config.base_slice;
        let se = self.se_mut(i)?;
        (se.slice, se.custom_slice) = __setparam_fair(sched_runtime, base);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fair::{LoadWeight, NICE_0_LOAD};

    const V0: u64 = u64::MAX - (1 << 20) + 1; // a fresh cfs_rq: 2^64 - 2^20

    fn rq3() -> EevdfRq<4> {
        let cfg = EevdfConfig {
            base_slice: 2_800_000,
            normalized_base_slice: 700_000,
            tick_nsec: 1_000_000,
            features: EevdfFeatures::default(),
        };
        let mut rq = EevdfRq::new(V0, cfg, Profile::MAINLINE);
        for _ in 0..3 {
            let se = SchedEntity {
                load: LoadWeight {
                    weight: NICE_0_LOAD,
                    inv_weight: 4_194_304,
                },
                ..SchedEntity::default()
            };
            rq.add_entity(se).unwrap();
        }
        for i in 0..3 {
            rq.enqueue_entity(i, EnqueueFlags { initial: true })
                .unwrap();
        }
        rq
    }

    #[test]
    fn delayed_dequeue_keeps_an_ineligible_sleeper_queued() {
        // The fixture's seq-edge-delay-dequeue, first six ops.
        let mut rq = rq3();
        assert_eq!(rq.se(0).unwrap().deadline, V0.wrapping_add(1_400_000));
        rq.set_next_entity(0).unwrap();
        assert_eq!(rq.se(0).unwrap().vlag, 351_424); // vprot = deadline
        assert_eq!(rq.update_curr(3_000_000), Ok(true));
        let se = *rq.se(0).unwrap();
        assert_eq!((se.vruntime, se.deadline), (1_951_424, 4_751_424));
        let sleep = DequeueFlags {
            sleep: true,
            ..DequeueFlags::default()
        };
        assert_eq!(rq.dequeue_entity(0, sleep), Ok(false));
        assert!(rq.se(0).unwrap().sched_delayed);
        assert_eq!(rq.cfs.nr_queued, 3);
        rq.put_prev_entity();
        assert_eq!(
            (rq.cfs.avg_vruntime, rq.cfs.avg_load),
            (3_072_000_000, 3072)
        );
        assert_eq!(rq.avg_vruntime(), Ok(V0.wrapping_add(1_000_000)));
    }

    #[test]
    fn pick_eevdf_passes_over_the_delayed_sleeper_to_the_first_earliest_deadline() {
        let mut rq = rq3();
        rq.set_next_entity(0).unwrap();
        rq.update_curr(3_000_000).unwrap();
        let sleep = DequeueFlags {
            sleep: true,
            ..DequeueFlags::default()
        };
        assert_eq!(rq.dequeue_entity(0, sleep), Ok(false));
        rq.put_prev_entity();
        // 0 is 2 ms past the average (V0 + 1 ms); 1 and 2 sit at V0 with the same
        // deadline V0 + 1.4 ms (half a 2.8 ms slice): the first in the tree wins.
        assert_eq!(rq.pick_eevdf(true), Some(1));
        // Once 1 and 2 have run past it, the delayed 0 is eligible and earliest.
        for i in [1, 2] {
            rq.set_next_entity(i).unwrap();
            rq.update_curr(3_000_000).unwrap();
            rq.put_prev_entity();
        }
        assert_eq!(rq.pick_eevdf(true), Some(0));
    }

    #[test]
    fn update_curr_alone_never_reschedules() {
        let cfg = rq3().config;
        let mut rq: EevdfRq<2> = EevdfRq::new(0, cfg, Profile::MAINLINE);
        let i = rq
            .add_entity(SchedEntity {
                load: LoadWeight::new(NICE_0_LOAD),
                ..SchedEntity::default()
            })
            .unwrap();
        rq.enqueue_entity(i, EnqueueFlags::default()).unwrap();
        rq.set_next_entity(i).unwrap();
        assert_eq!(rq.update_curr(10_000_000), Ok(false));
        assert_eq!(rq.se(i).unwrap().vruntime, 10_000_000);
        assert_eq!(rq.cfs.min_vruntime, 10_000_000);
        assert_eq!(rq.update_curr(-1), Ok(false));
        rq.yield_task_fair().unwrap();
        assert_eq!(rq.se(i).unwrap().deadline, 10_000_000 + 2_800_000);
    }

    #[test]
    fn table_full_and_unknown_entities_are_errors() {
        let mut rq = rq3();
        rq.add_entity(SchedEntity::default()).unwrap();
        assert_eq!(rq.add_entity(SchedEntity::default()), Err(RqError::Full));
        assert_eq!(rq.set_next_entity(9), Err(RqError::NoEntity(9)));
        assert_eq!(
            rq.reweight_task(0, 20, FairPolicy::Normal),
            Err(RqError::Nice(20))
        );
    }

    #[test]
    fn reweight_entity_rescales_lag_by_old_over_new_weight() {
        let mut rq = rq3();
        let sleep = DequeueFlags {
            save: true,
            ..DequeueFlags::default()
        };
        rq.se_mut(1).unwrap().vlag = 0;
        assert_eq!(rq.dequeue_entity(1, sleep), Ok(true));
        rq.se_mut(1).unwrap().vlag = 1000;
        // 1000 * 1048576 / 2048: a group weight of 2048 counts as 2 in the sums.
        rq.reweight_entity(1, 2048).unwrap();
        let se = rq.se(1).unwrap();
        assert_eq!((se.vlag, se.load), (512_000, LoadWeight::new(2048)));
    }
    #[test]
    fn vlag_vprot_reweight_of_curr_overwrites_the_protection() {
        let mut rq = rq3();
        rq.set_next_entity(0).unwrap();
        assert_eq!(rq.se(0).unwrap().vprot(), 351_424);
        assert_eq!(rq.update_curr(1_000_000), Ok(false)); // inside its protection
                                                          // A group weight of 2048 scales down to 2 in the sums.
        rq.reweight_entity(0, 2048).unwrap();
        let se = *rq.se(0).unwrap();
        // lag V - v = 333333 - 1000000, rescaled by 1048576 / 2048, inflated by
        // (2050 + 2) / 2050 on placement; the relative deadline 400000 rescaled too.
        assert_eq!(se.vlag, -666_667 * 512);
        assert_eq!(se.vruntime, V0.wrapping_add(975 + 341_666_512));
        assert_eq!(se.deadline, se.vruntime.wrapping_add(204_800_000));
        assert!(!se.rel_deadline);
        assert_eq!(
            (rq.cfs.avg_load, rq.cfs.nr_queued, rq.cfs.load.weight),
            (2048, 3, 2 * NICE_0_LOAD + 2048)
        );
    }

    #[test]
    fn reweight_task_places_with_the_lazy_inverse_then_stores_the_table_one() {
        let mut rq = rq3();
        // nice 5 (weight 335): the re-placement computes (2^32 - 1) / 335 lazily...
        rq.reweight_entity(1, 335 << 10).unwrap();
        assert_eq!(rq.se(1).unwrap().load.inv_weight, 12_820_797);
        // ...while set_user_nice() stores the table's 2^32 / 335 afterwards.
        rq.reweight_task(2, 5, FairPolicy::Normal).unwrap();
        assert_eq!(
            rq.se(2).unwrap().load,
            LoadWeight {
                weight: 335 << 10,
                inv_weight: 12_820_798
            }
        );
        rq.reweight_task(2, 0, FairPolicy::Idle).unwrap();
        assert_eq!(rq.se(2).unwrap().load.weight, 3 << 10);
    }
}
