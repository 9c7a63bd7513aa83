// SPDX-License-Identifier: GPL-2.0-only
//! One CPU's runqueue: the kernel state the simulator keeps per CPU (clocks, cfs, rt and
//! irq PELT signals, uclamp buckets, load weight) and the class/pick model.
//!
//! Simplifications (documented, deliberate):
//! * RT above fair; among RT tasks the highest priority, FIFO order within a priority
//!   (no RR slice, no RT throttling). No deadline class.
//! * The fair class (EEVDF or the 6.1 CFS per profile) is in [`super::engine`]'s `fair`
//!   module: each cfs_rq keeps its `min_vruntime` here (the root's) or in its
//!   [`GroupRq`], each entity its core `SchedEntity`.
//! * The root cfs_rq's PELT signals (what schedutil, EAS and overutilized read) are the
//!   flat sum of every fair task's contribution: its `load.weight` is the sum of task
//!   weights and tasks attach to it directly, grouped or not (the kernel propagates group
//!   entities' averages instead). A delayed task (EEVDF's delayed dequeue) keeps its
//!   weight there until its dequeue finishes; it is not runnable.
//! * `irq` (`rq->avg_irq`) is fed from a uniform irq rate (`irq_pct`, from the
//!   workload's `schedmath.irq_pct`), not from interrupts; no steal time (see
//!   [`super::engine`]).

use schedmath::pelt::clock::RqClock;
use schedmath::pelt::SchedAvg;
use schedmath::uclamp::{init_uclamp_rq, RqUclamp};
use schedmath::util_est::UtilEst;
use schedmath::Profile;

use super::group::GroupRq;
use super::BOOT_CLOCK_NS;

/// The idle-state stay a CPU is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleStay {
    /// Selected state.
    pub idx: usize,
    /// When the CPU entered it (ns).
    pub since: u64,
    /// Tick-time exits and re-entries into the same state folded into this stay (a CPU
    /// whose governor is skipped: see `Engine::tick_idle`): how many, and the first's
    /// time (ns); the others follow it a tick period apart.
    pub ticks: u64,
    pub first_tick: u64,
}

impl IdleStay {
    /// A stay in `idx` entered at `since`, no tick folded yet.
    pub fn new(idx: usize, since: u64) -> Self {
        IdleStay {
            idx,
            since,
            ticks: 0,
            first_tick: 0,
        }
    }
}

/// Per-CPU state.
#[derive(Debug, Clone)]
pub struct Rq {
    /// CPU number.
    pub cpu: usize,
    /// `arch_scale_cpu_capacity()`.
    pub capacity_orig: u64,
    /// `capacity_of()`: `rq->cpu_capacity`, refreshed at the tick.
    pub cpu_capacity: u64,
    /// Frequency domain index.
    pub domain: usize,
    /// `arch_scale_freq_capacity()`.
    pub freq_scale: u64,
    /// rq clocks (clock, clock_task, clock_pelt, lost idle time).
    pub clock: RqClock,
    /// `rq->cfs.avg`.
    pub cfs: SchedAvg,
    /// `rq->avg_rt`.
    pub rt: SchedAvg,
    /// `rq->avg_irq`: irq time (`update_irq_load_avg()`), read as `cpu_util_irq()`.
    pub irq: SchedAvg,
    /// Share of wall time this CPU spends in hard/soft irq, % (0: none; below 100).
    pub irq_pct: u64,
    /// `rq->cfs.load.weight` (scaled, `<< 10`).
    pub cfs_load_weight: u64,
    /// `rq->cfs.h_nr_runnable`.
    pub nr_fair: u32,
    /// RT tasks queued or running.
    pub nr_rt: u32,
    /// `rq->cfs.h_nr_idle`: fair tasks queued or running that are SCHED_IDLE or under an
    /// idle group (`sched_idle_rq()` when all runnable tasks are).
    pub h_nr_idle: u32,
    /// Runnable tasks that are not running (task ids).
    pub queue: Vec<usize>,
    /// Running task.
    pub curr: Option<usize>,
    /// Fair tasks asleep but still queued (`sched_delayed`), in order of their delay.
    pub delayed: Vec<usize>,
    /// `TIF_NEED_RESCHED` set by the fair class's `update_curr()`.
    pub need_resched: bool,
    /// `rq->uclamp[]`.
    pub uclamp: RqUclamp,
    /// Smallest vruntime seen (monotonic).
    pub min_vruntime: u64,
    /// Physical accounting: last time work/energy/residency were advanced.
    pub last_acct: u64,
    /// The running task makes progress from here (exit latency after idle).
    pub seg_start: u64,
    /// Generation of the pending completion event.
    pub gen: u64,
    /// One of the inputs of schedutil's view of this CPU (`cfs` util_avg, runnable_avg
    /// or util_est, `rt`/`irq` util_avg, `nr_rt`, the rq clamps, `idle_calls`) may have
    /// changed since the view was last built: every write of one sets it
    /// ([`Rq::inputs_written`]).
    pub sugov_stale: bool,
    /// The same for the EM estimate's `effective_cpu_util()` of this CPU, which reads the
    /// same inputs (the per-tick estimate recomputes only the CPUs that changed).
    pub em_stale: bool,
    /// Idle state stay, while idle.
    pub idle: Option<IdleStay>,
    /// The tick is stopped (nohz idle).
    pub tick_stopped: bool,
    /// `tick_nohz_get_idle_calls_cpu()`.
    pub idle_calls: u64,
    /// `rq->idle_stamp`: rq clock when the CPU last went idle (boot for a fresh rq).
    pub idle_stamp: u64,
    /// Last blocked-load update of an idle CPU (ns).
    pub last_blocked_update: u64,
    /// Per task group (by id; the root's slot is unused): its cfs_rq and entity here.
    pub grq: Vec<GroupRq>,
    /// Last decay of every group cfs_rq of this CPU (`update_blocked_averages()`, ns).
    pub last_group_update: u64,
}

impl Rq {
    /// One of the inputs of schedutil's view and the EM estimate of this CPU was written.
    pub fn inputs_written(&mut self) {
        self.sugov_stale = true;
        self.em_stale = true;
    }

    /// A fresh runqueue at time 0.
    pub fn new(cpu: usize, capacity_orig: u64, domain: usize, profile: &Profile) -> Self {
        let avg = SchedAvg {
            util_est: UtilEst::new(profile.util_est),
            ..SchedAvg::default()
        };
        Rq {
            cpu,
            capacity_orig,
            cpu_capacity: capacity_orig,
            domain,
            freq_scale: 1024,
            clock: RqClock::new(BOOT_CLOCK_NS, BOOT_CLOCK_NS, BOOT_CLOCK_NS),
            cfs: avg,
            rt: avg,
            irq: SchedAvg::default(),
            irq_pct: 0,
            cfs_load_weight: 0,
            nr_fair: 0,
            nr_rt: 0,
            h_nr_idle: 0,
            queue: Vec::new(),
            curr: None,
            delayed: Vec::new(),
            need_resched: false,
            uclamp: init_uclamp_rq(),
            min_vruntime: 0,
            last_acct: 0,
            seg_start: 0,
            gen: 0,
            sugov_stale: true,
            em_stale: true,
            idle: None,
            tick_stopped: false,
            idle_calls: 0,
            idle_stamp: BOOT_CLOCK_NS,
            last_blocked_update: 0,
            grq: Vec::new(),
            last_group_update: 0,
        }
    }

    /// `nr_running`.
    pub fn nr_running(&self) -> u32 {
        self.nr_fair + self.nr_rt
    }

    /// `available_idle_cpu()`: nothing runnable.
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.queue.is_empty()
    }

    /// `sched_idle_cpu()`: every runnable task is SCHED_IDLE or under an idle group.
    pub fn is_sched_idle(&self) -> bool {
        self.nr_running() > 0 && self.h_nr_idle == self.nr_running()
    }
}
