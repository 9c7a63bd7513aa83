// SPDX-License-Identifier: GPL-2.0-only
//! A simulated task: its kernel-side state (weight, PELT signal, uclamp, affinity,
//! vruntime) and where it is in its program, with the program walk (steps, phase and
//! task loops, timers, phase attributes).

use schedmath::fair::eevdf::{reweight_entity, CfsRq, EevdfFeatures, SchedEntity};
use schedmath::fair::sysctl::__setparam_fair;
use schedmath::fair::weight::{set_load_weight, FairPolicy};
use schedmath::pelt::{__update_load_avg_blocked_se, PeltTables, SchedAvg};
use schedmath::profile::UtilEstVersion;
use schedmath::uclamp::{uclamp_se_set, UclampId, UclampTask};
use schedmath::util_est::UtilEst;
use serde::Serialize;

use super::program::{PhaseAttrs, SchedPolicy, SimTask, Step};
use super::{SCHED_PRIO_TO_WEIGHT, WEIGHT_IDLEPRIO};
use crate::rng::SplitMix64;

/// `CONFIG_UCLAMP_BUCKETS_COUNT` default.
pub const UCLAMP_BUCKETS: u32 = 5;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TState {
    /// Not started yet (first activation pending).
    New,
    /// Blocked until `wake_at`.
    Sleeping,
    /// Blocked on a mutex, condition, barrier or suspend until another task wakes it.
    Blocked,
    /// Queued or running.
    Runnable,
    /// Its program ended.
    Finished,
}

/// What the program wants next.
pub enum StepOutcome {
    /// Work to do (`remaining` set).
    Run,
    /// Sleep until this time.
    Sleep(u64),
    /// A synchronisation step for the engine (the program stays on it).
    Sync(Step),
    /// Blocked until another task wakes it (the program is past the blocking step).
    Block,
    /// The program ended.
    Finished,
}

/// Where and how a thread forked during the run started (its first enqueue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ForkStart {
    /// Simulated time of the first enqueue (ns).
    pub at_ns: u64,
    /// The CPU the fork path chose.
    pub cpu: usize,
    /// `util_avg` set by `post_init_entity_util_avg()` on that CPU.
    pub util_avg: u64,
}

/// One task (fields named after what the kernel keeps; `spec` is the program).
pub struct Task {
    /// The program and start attributes.
    pub spec: SimTask,
    /// Current policy.
    pub policy: SchedPolicy,
    /// Current nice.
    pub nice: i32,
    /// Requested uclamp min (`None`: not set).
    pub uc_min: Option<u32>,
    /// Requested uclamp max.
    pub uc_max: Option<u32>,
    /// `se.load.weight` unscaled (`sched_prio_to_weight[]`, 3 for SCHED_IDLE).
    pub weight: u64,
    /// `p->se.avg`.
    pub avg: SchedAvg,
    /// `p->uclamp_req[]` / `p->uclamp[]`.
    pub uclamp: UclampTask,
    /// `p->cpus_mask`, sorted.
    pub allowed: Vec<usize>,
    /// Task group id (`p->sched_task_group`; [`super::group::ROOT`] for the root).
    pub group: usize,
    /// A phase started with attributes not applied yet.
    pub attrs_pending: bool,
    /// `task_cpu(p)`.
    pub cpu: usize,
    /// `p->recent_used_cpu`: set to the parent's CPU by `wake_up_new_task()`, then to the
    /// previous CPU by each `select_idle_sibling()` that gets past its first two tests.
    pub recent_used_cpu: Option<usize>,
    /// Life state.
    pub state: TState,
    /// `p->se`: the fair-class entity (vruntime, deadline, lag, slice, queued, delayed).
    pub se: SchedEntity,
    /// 6.1 CFS: `se.vruntime` is relative to the cfs_rq it left (a migration), to be
    /// rebased on the next enqueue.
    pub cfs_relative: bool,
    /// `se.exec_start`: last vruntime update.
    pub exec_start: u64,
    /// When it was last picked (slice preemption).
    pub slice_start: u64,
    /// Current phase.
    pub phase: usize,
    /// Loops of the current phase done.
    pub phase_loops: u64,
    /// Current step in the phase.
    pub step: usize,
    /// Whole-program loops done.
    pub loops_done: u64,
    /// Work (ns at 1024 and f_ref) or wall ns left in the current step.
    pub remaining: u64,
    /// The current step is `runtime` (wall time), not `run`.
    pub wall_step: bool,
    /// A `runtime` step ends at this wall time, fixed when it first runs (rt-app spins
    /// until the wall clock has advanced by the duration, preempted time included).
    pub wall_until: Option<u64>,
    /// The program ends when the current sleep ends.
    pub finish_after_sleep: bool,
    /// Last timer expiry (ns).
    pub timer_next: u64,
    /// Pending activation time while sleeping (or before the first start).
    pub wake_at: Option<u64>,
    /// Activation time awaiting the first run (wake-up latency).
    pub woke_at: Option<u64>,
    /// `p->in_iowait`: sleeping in an `iorun`; its enqueue asks for the iowait boost.
    pub in_iowait: bool,
    /// A `yield` was passed since it last ran its step.
    pub yielded: bool,
    /// The task's random stream (IO latencies); seeded per task by the engine.
    pub rng: SplitMix64,
    /// Periods of its `timer` loop: activation (expiry) to reaching the next timer.
    pub frames: FrameStats,
    /// First enqueue (fork) time.
    pub started_at: Option<u64>,
    /// Time from the first enqueue until `util_avg` first reached [`RAMP_UTIL`].
    pub ramp_ns: Option<u64>,
    /// Created by a `fork` step while the simulation runs.
    pub forked: bool,
    /// A forked task's first enqueue: when, where, and its `util_avg` right after
    /// `post_init_entity_util_avg()`.
    pub fork_start: Option<ForkStart>,
    /// At its first sleep with `util_avg` ≥ [`RAMP_UTIL`]: how long PELT takes to decay it
    /// below [`DECAY_UTIL`] (see [`util_decay_ns`]).
    pub decay_ns: Option<u64>,
}

/// The utilization a ramp-up is measured to: 80 % of `SCHED_CAPACITY_SCALE`.
pub const RAMP_UTIL: u64 = 819;
/// The utilization a decay is measured to: 20 % of `SCHED_CAPACITY_SCALE`.
pub const DECAY_UTIL: u64 = 205;
/// Longest decay measured (beyond: none).
const DECAY_LIMIT_NS: u64 = 10_000_000_000;

/// Wall time for a blocked entity's `util_avg` to fall below [`DECAY_UTIL`] from `avg`
/// (last updated at `now_pelt`), in 1 ms steps of a CPU that stays idle (its PELT clock
/// then follows wall time, `1 << pelt_lshift` times faster under the multiplier),
/// each step the kernel's `__update_load_avg_blocked_se()`. `None`: above 10 s.
pub fn util_decay_ns(
    avg: &SchedAvg,
    now_pelt: u64,
    load_weight: u64,
    pelt_lshift: u8,
    tables: &PeltTables,
) -> Option<u64> {
    const STEP: u64 = 1_000_000;
    let mut sa = *avg;
    let mut wall = 0;
    while sa.util_avg >= DECAY_UTIL {
        wall += STEP;
        if wall > DECAY_LIMIT_NS {
            return None;
        }
        let pelt = now_pelt.wrapping_add(wall << pelt_lshift);
        __update_load_avg_blocked_se(pelt, &mut sa, load_weight, tables);
    }
    Some(wall)
}

/// Frame (timer period) completion times of one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Frames completed.
    pub count: u64,
    /// Sum of their times (ns).
    pub sum_ns: u64,
    /// Longest (ns).
    pub max_ns: u64,
}

impl FrameStats {
    fn add(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(ns);
        self.max_ns = self.max_ns.max(ns);
    }
}

impl Task {
    /// A task not started yet: the spec's start attributes, PELT at zero with the
    /// util_est layout of `util_est`, uclamp in the root group, first activation after
    /// the spec's delay.
    pub fn new(spec: SimTask, util_est: UtilEstVersion, allowed: Vec<usize>) -> Task {
        let delay = spec.delay_ns;
        Task {
            policy: spec.policy,
            nice: spec.nice,
            uc_min: spec.uclamp_min,
            uc_max: spec.uclamp_max,
            weight: 0,
            avg: SchedAvg {
                util_est: UtilEst::new(util_est),
                ..SchedAvg::default()
            },
            uclamp: UclampTask {
                uclamp_enabled: true,
                tg_is_root_or_autogroup: true,
                tg_uclamp: [0, 1024],
                ..UclampTask::default()
            },
            allowed,
            group: super::group::ROOT,
            attrs_pending: false,
            cpu: 0,
            recent_used_cpu: None,
            state: TState::New,
            se: SchedEntity::default(),
            cfs_relative: false,
            exec_start: 0,
            slice_start: 0,
            phase: 0,
            phase_loops: 0,
            step: 0,
            loops_done: 0,
            remaining: 0,
            wall_step: false,
            wall_until: None,
            finish_after_sleep: false,
            timer_next: delay,
            wake_at: Some(delay),
            woke_at: None,
            in_iowait: false,
            yielded: false,
            rng: SplitMix64::default(),
            frames: FrameStats::default(),
            started_at: None,
            ramp_ns: None,
            forked: false,
            fork_start: None,
            decay_ns: None,
            spec,
        }
    }

    pub fn is_fair(&self) -> bool {
        self.policy.rt_prio().is_none()
    }

    /// Applies a phase's attributes (the task is off its runqueue) and recomputes the
    /// weight and the uclamp requests (RT tasks default to uclamp_min 1024).
    pub fn apply(&mut self, a: &PhaseAttrs, n: usize) {
        if let Some(p) = a.policy {
            self.policy = p;
        }
        if let Some(nice) = a.nice {
            self.nice = nice;
        }
        if let Some(c) = &a.cpus {
            // validated when the engine was built
            self.allowed = allowed_cpus(Some(c), n).unwrap_or_else(|_| (0..n).collect());
        }
        self.uc_min = a.uclamp_min.or(self.uc_min);
        self.uc_max = a.uclamp_max.or(self.uc_max);
        self.weight = match self.policy {
            SchedPolicy::Idle => WEIGHT_IDLEPRIO,
            _ => SCHED_PRIO_TO_WEIGHT[(self.nice.clamp(-20, 19) + 20) as usize], // clamped
        };
        self.set_fair_weight();
        if let Some(ns) = a.slice_ns {
            // __setparam_fair(): the slice of the next placement (0: back to the base).
            (self.se.slice, self.se.custom_slice) = __setparam_fair(ns, self.se.slice);
        }
        let rt_default = if self.is_fair() { 0 } else { 1024 };
        self.uclamp.uclamp_req[UclampId::Min as usize] = uclamp_se_set(
            self.uc_min.unwrap_or(rt_default),
            self.uc_min.is_some(),
            UCLAMP_BUCKETS,
        );
        self.uclamp.uclamp_req[UclampId::Max as usize] = uclamp_se_set(
            self.uc_max.unwrap_or(1024),
            self.uc_max.is_some(),
            UCLAMP_BUCKETS,
        );
    }

    /// `set_load_weight()` on the fair entity (the task is off its runqueue): the table
    /// weight and inverse; `reweight_task_fair()` rescales a kept lag by old / new weight.
    fn set_fair_weight(&mut self) {
        let policy = match self.policy {
            SchedPolicy::Idle => FairPolicy::Idle,
            _ => FairPolicy::Normal,
        };
        let Some(lw) = set_load_weight(self.nice.clamp(-20, 19), policy) else {
            return;
        };
        let se = &mut self.se;
        if se.load.weight != 0 && se.load.weight != lw.weight {
            // Off the runqueue: only vlag (and a relative deadline) are rescaled; a trap
            // (a weight whose low 32 bits are 0) cannot happen with table weights.
            let f = EevdfFeatures::default();
            let _ = reweight_entity(&mut CfsRq::default(), None, se, false, lw.weight, &f, 0, 0);
        }
        se.load = lw;
    }

    /// Moves to the next step (phase loops, then phases, then task loops); false when the
    /// program ends. Entering a phase with attributes marks them pending.
    pub fn next_step(&mut self) -> bool {
        self.step += 1;
        let phase = &self.spec.phases[self.phase];
        if self.step < phase.steps.len() {
            return true;
        }
        self.step = 0;
        self.phase_loops += 1;
        if self.phase_loops < phase.loops {
            return true;
        }
        self.phase_loops = 0;
        self.phase += 1;
        if self.phase >= self.spec.phases.len() {
            self.phase = 0;
            self.loops_done += 1;
            if self.spec.loops.is_some_and(|l| self.loops_done >= l) {
                return false;
            }
        }
        if self.spec.phases.len() > 1 {
            self.attrs_pending |= !self.spec.phases[self.phase].attrs.is_empty();
        }
        true
    }

    /// Walks the program at `now` from the current step until the task must run, sleep,
    /// synchronise or end; returns that and the number of timer expiries found already passed
    /// (deadline misses).
    pub fn walk(&mut self, now: u64) -> (StepOutcome, u64) {
        let len: usize = self.spec.phases.iter().map(|p| p.steps.len()).sum();
        let mut misses = 0;
        for _ in 0..(2 * len + 2) {
            let step = self.spec.phases[self.phase].steps[self.step];
            let mut sleep_until = None;
            match step {
                Step::Run(w) | Step::Runtime(w) if w > 0 => {
                    self.remaining = w;
                    self.wall_step = matches!(step, Step::Runtime(_));
                    self.wall_until = None;
                    return (StepOutcome::Run, misses);
                }
                Step::Sleep(ns) if ns > 0 => sleep_until = Some(now.saturating_add(ns)),
                Step::IoWait { min_ns, max_ns } if max_ns > 0 => {
                    self.in_iowait = true;
                    let ns = self.rng.range(min_ns, max_ns);
                    sleep_until = Some(now.saturating_add(ns));
                }
                s if s.is_sync() => return (StepOutcome::Sync(s), misses),
                Step::Timer {
                    period_ns,
                    absolute,
                } => {
                    self.frames.add(now.saturating_sub(self.timer_next));
                    let next = self.timer_next.saturating_add(period_ns);
                    if next >= now {
                        self.timer_next = next;
                        sleep_until = (next > now).then_some(next);
                    } else {
                        misses += 1;
                        self.timer_next = if absolute { next } else { now };
                    }
                }
                _ => {}
            }
            let more = self.next_step();
            if let Some(until) = sleep_until {
                self.finish_after_sleep = !more;
                return (StepOutcome::Sleep(until), misses);
            }
            if !more {
                return (StepOutcome::Finished, misses);
            }
        }
        // Two whole passes took no time: the program cannot advance the clock.
        (StepOutcome::Finished, misses)
    }
}

/// The sorted, distinct allowed CPUs (`None`: all `n`).
pub fn allowed_cpus(cpus: Option<&[usize]>, n: usize) -> Result<Vec<usize>, String> {
    let Some(c) = cpus else {
        return Ok((0..n).collect());
    };
    let mut c = c.to_vec();
    c.sort_unstable();
    c.dedup();
    if let Some(bad) = c.iter().find(|&&x| x >= n) {
        return Err(format!(
            "cpu {bad} does not exist (the platform has {n} CPUs)"
        ));
    }
    if c.is_empty() {
        return Err("empty cpus".into());
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::program::SimPhase;

    fn task(phases: Vec<SimPhase>, loops: Option<u64>) -> Task {
        let mut spec = SimTask::periodic("t", 0, 1, loops);
        spec.phases = phases;
        Task {
            weight: 1024,
            avg: SchedAvg::default(),
            uclamp: UclampTask::default(),
            wake_at: None,
            ..Task::new(spec, UtilEstVersion::Mainline, vec![0])
        }
    }

    fn timer(absolute: bool) -> SimPhase {
        SimPhase {
            attrs: PhaseAttrs::default(),
            loops: 1,
            steps: vec![
                Step::Run(5),
                Step::Timer {
                    period_ns: 10,
                    absolute,
                },
            ],
        }
    }

    #[test]
    fn late_relative_timer_rebases_absolute_keeps_its_grid() {
        for absolute in [false, true] {
            let mut t = task(vec![timer(absolute)], None);
            assert!(matches!(t.walk(0), (StepOutcome::Run, 0)));
            // The run ended at 25, after the expiry at 10: one miss, no sleep.
            assert!(t.next_step());
            assert!(matches!(t.walk(25), (StepOutcome::Run, 1)));
            assert_eq!(t.timer_next, if absolute { 10 } else { 25 });
            // The next run ends at 26. Relative: expiry 35, sleep. Absolute: expiry 20
            // has passed too, another miss and no sleep (misses cascade on the grid).
            assert!(t.next_step());
            let got = t.walk(26);
            if absolute {
                assert!(matches!(got, (StepOutcome::Run, 1)));
                assert_eq!(t.timer_next, 20);
            } else {
                assert!(matches!(got, (StepOutcome::Sleep(35), 0)));
            }
            // Frames: 0 → 25, then from the expiry the period counted from (25 or 10).
            let second = if absolute { 16 } else { 1 };
            let want = FrameStats {
                count: 2,
                sum_ns: 25 + second,
                max_ns: 25,
            };
            assert_eq!(t.frames, want);
        }
    }

    #[test]
    fn timer_exactly_on_time_is_no_miss_and_no_sleep() {
        let mut t = task(vec![timer(false)], None);
        t.walk(0);
        assert!(t.next_step());
        assert!(matches!(t.walk(10), (StepOutcome::Run, 0)));
        assert_eq!(t.timer_next, 10);
    }

    #[test]
    fn phases_loop_then_the_task_loops_then_ends() {
        let p = |loops, cpu| SimPhase {
            attrs: PhaseAttrs {
                cpus: Some(vec![cpu]),
                ..PhaseAttrs::default()
            },
            loops,
            steps: vec![Step::Run(1)],
        };
        let mut t = task(vec![p(2, 0), p(1, 1)], Some(2));
        let mut seen = vec![(t.phase, t.attrs_pending)];
        while t.next_step() {
            seen.push((t.phase, std::mem::take(&mut t.attrs_pending)));
        }
        // phase 0 twice, phase 1 once (attrs pending on entry), twice over.
        assert_eq!(
            seen,
            vec![
                (0, false),
                (0, false),
                (1, true),
                (0, true),
                (0, false),
                (1, true)
            ]
        );
    }

    #[test]
    fn a_program_that_takes_no_time_ends() {
        let zero = SimPhase {
            attrs: PhaseAttrs::default(),
            loops: 1,
            steps: vec![Step::Run(0), Step::Sleep(0)],
        };
        let mut t = task(vec![zero], None);
        assert!(matches!(t.walk(0), (StepOutcome::Finished, 0)));
    }
    #[test]
    fn util_decay_follows_the_halflife_and_the_multiplier() {
        use schedmath::math::scale_load;
        use schedmath::pelt::{__update_load_avg_se, SchedEntityPelt};
        // A task running for 1 s from t = 1 ms (util_avg 1024),
        // then blocked: wall time until util_avg < 205.
        let w = scale_load(1024);
        let decay = |t: &PeltTables, lshift: u8| {
            let mut sa = SchedAvg {
                last_update_time: 1_000_000,
                ..SchedAvg::default()
            };
            let se = SchedEntityPelt {
                load_weight: w,
                on_rq: true,
                is_curr: true,
                ..SchedEntityPelt::default()
            };
            let end = 1_001_000_000;
            __update_load_avg_se(end, &mut sa, &se, t);
            (sa.util_avg, util_decay_ns(&sa, end, w, lshift, t))
        };
        // From 1024 to < 205: y^k < 0.2 at k = 75 / 38 / 19 PELT periods (1.048576 ms
        // each), seen at the next 1 ms step.
        let got = [
            decay(&PeltTables::HL32, 0),
            decay(&PeltTables::HL16, 0),
            decay(&PeltTables::HL8, 0),
            decay(&PeltTables::HL32, 1),
            decay(&PeltTables::HL32, 2),
        ];
        let ms = |m: u64| (1024, Some(m * 1_000_000));
        // hl32, hl16, hl8; then hl32 with the clock twice and four times as fast.
        assert_eq!(got, [ms(78), ms(39), ms(20), ms(39), ms(20)]);
        // Already below: no time.
        let low = SchedAvg::default();
        assert_eq!(util_decay_ns(&low, 0, w, 0, &PeltTables::HL32), Some(0));
    }
}
