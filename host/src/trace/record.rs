// SPDX-License-Identifier: GPL-2.0-only
//! A recorded run: plain event records with integer ns timestamps, and the one table of
//! event layouts ([`EVENTS`]) every trace writer reads.
//!
//! The simulator's observer (`crate::sim::observe`) fills a [`Trace`]; the writers
//! (`.txt`, `.dat`, `.pftrace`, `.csv`, [`super::write`]) and later users (plots,
//! `explain`, Python's `.events`) only read it. Nothing here knows the simulator: a
//! record holds the values the simulator passed at the call, never recomputed ones.
//!
//! Event names, field names and field order are the kernel's (`sched_*` in
//! include/trace/events/sched.h, `cpu_*` in include/trace/events/power.h), LISA's module
//! (`lisa__*`, lisa/_assets/kmodules/lisa/ftrace_events.h, as the lab captures in
//! fixtures/lab print them) and the lab probe's `schedmath__pelt_update`
//! (fixtures/lab/README.md). The `schedmath__` decision records (`sugov`, `placement`,
//! `idle_select`, `overutilized`) are ours: the inputs and outcome of each decision.

use std::borrow::Cow;
use std::fmt::Write as _;

use schedmath::cpuidle::IdleRule;
use schedmath::pelt::SchedAvg;
use schedmath::util_est::UtilEst;

/// pid of the idle task (`swapper/N`, printed `<idle>` as the current task).
pub const IDLE_PID: i32 = 0;

/// `cpu_idle`'s state on leaving idle (`PWR_EVENT_EXIT`, (u32)-1).
pub const PWR_EVENT_EXIT: u32 = u32::MAX;

/// A task's state as `sched_switch` reports it for the task leaving the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrevState {
    /// Preempted, still runnable: `R` (0).
    Running,
    /// Asleep (timer, futex): `S` (`TASK_INTERRUPTIBLE`, 0x1).
    Sleeping,
    /// Waiting for IO: `D` (`TASK_UNINTERRUPTIBLE`, 0x2).
    Uninterruptible,
    /// Exited: `X` (`EXIT_DEAD`, 0x10).
    Dead,
}

impl PrevState {
    /// The letter(s) `trace-cmd report` prints.
    pub fn letters(self) -> &'static str {
        match self {
            PrevState::Running => "R",
            PrevState::Sleeping => "S",
            PrevState::Uninterruptible => "D",
            PrevState::Dead => "X",
        }
    }

    /// The kernel's `prev_state` bits (`__trace_sched_switch_state()`).
    pub fn bits(self) -> u64 {
        match self {
            PrevState::Running => 0,
            PrevState::Sleeping => 0x1,
            PrevState::Uninterruptible => 0x2,
            PrevState::Dead => 0x10,
        }
    }
}

/// The util_est layout the probe record prints (v6.9 made `util_est` one word).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UeLayout {
    /// `b_ue`/`a_ue`: the raw word.
    Mainline,
    /// `b_ue_enq`/`b_ue_ewma` (and `a_*`).
    PreV6_9,
}

/// Which PELT function a probe record is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeltFn {
    /// `__update_load_avg_se`.
    Se,
    /// `__update_load_avg_blocked_se`.
    BlockedSe,
    /// `__update_load_avg_cfs_rq`.
    Cfs,
}

/// One call of a PELT update function (the lab probe's `schedmath__pelt_update`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeltCallRec {
    /// Which function.
    pub func: PeltFn,
    /// The CPU of the cfs_rq.
    pub cpu: u32,
    /// The task's pid (task entity), else -1.
    pub pid: i32,
    /// The group path (`/` for the root).
    pub path: String,
    /// Whether the entity is a group's (`kind=group`).
    pub group: bool,
    /// `now` (the PELT clock, ns).
    pub now: u64,
    /// `load.weight` (scaled: nice 0 = 1048576).
    pub lw: u64,
    /// The multiplier (`se_weight()`, 1 for a cfs_rq).
    pub weight: u64,
    /// `___update_load_sum()`'s load argument.
    pub load: u64,
    /// Its runnable argument.
    pub runnable: u64,
    /// Its running argument.
    pub running: bool,
    /// `se->on_rq` (-1 for a cfs_rq).
    pub on_rq: i32,
    /// `h_nr_queued` of the group's / the cfs_rq (-1 for a task).
    pub nr_queued: i64,
    /// The function's return value.
    pub ret: i32,
    /// util_est layout of `before`/`after`.
    pub ue: UeLayout,
    /// `sched_avg` before the call (the core's own struct).
    pub before: SchedAvg,
    /// After.
    pub after: SchedAvg,
}

/// One CPU's inputs to a schedutil update, as passed to the core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SugovCpuRec {
    /// The CPU.
    pub cpu: u32,
    /// `cpu_util_cfs_boost()` (what schedutil reads for cfs).
    pub util_cfs: u64,
    /// `cpu_util_rt()`.
    pub util_rt: u64,
    /// `cpu_util_dl()` (no DL class: 0).
    pub util_dl: u64,
    /// `cpu_util_irq()`.
    pub util_irq: u64,
    /// `rq->uclamp[UCLAMP_MIN]`.
    pub uclamp_min: u64,
    /// `rq->uclamp[UCLAMP_MAX]`.
    pub uclamp_max: u64,
    /// `sg_cpu->util` after the update: the request with the 25 % headroom
    /// (`map_util_perf()`) and clamps applied.
    pub util: u64,
    /// `sg_cpu->bw_min`.
    pub bw_min: u64,
    /// `sg_cpu->iowait_boost`.
    pub iowait_boost: u32,
}

impl SugovCpuRec {
    /// The per-CPU inputs in the order both readers print them: the key of the trace's
    /// `k=v` list and the column heading `explain` prints. One list, so the two formats
    /// cannot drift apart; [`SugovCpuRec::values`] gives the numbers in the same order.
    pub const FIELDS: [(&'static str, &'static str); 9] = [
        ("cfs", "cfs"),
        ("rt", "rt"),
        ("dl", "dl"),
        ("irq", "irq"),
        ("min", "uclamp_min"),
        ("max", "uclamp_max"),
        ("util", "util(+headroom,clamps)"),
        ("bw_min", "bw_min"),
        ("iowait", "iowait"),
    ];

    /// The values of [`SugovCpuRec::FIELDS`], in order.
    pub fn values(&self) -> [u64; Self::FIELDS.len()] {
        [
            self.util_cfs,
            self.util_rt,
            self.util_dl,
            self.util_irq,
            self.uclamp_min,
            self.uclamp_max,
            self.util,
            self.bw_min,
            u64::from(self.iowait_boost),
        ]
    }
}

/// A schedutil update (`cpufreq_update_util()` → `sugov_update_*()`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SugovRec {
    /// The frequency domain (index in the platform).
    pub domain: u32,
    /// The CPU that asked.
    pub cpu: u32,
    /// `cpufreq_update_util()` flags (`SCHED_CPUFREQ_IOWAIT` = 1).
    pub flags: u32,
    /// The policy's CPUs, in order: what each contributed.
    pub cpus: Vec<SugovCpuRec>,
    /// `sugov_should_update_freq()`: false = held back by the rate limit.
    pub should_update: bool,
    /// `cached_raw_freq` after the update: the unresolved frequency (kHz).
    pub raw_freq: u32,
    /// What `get_next_freq()` returned, resolved to an OPP (kHz, 0: not run).
    pub resolved_freq: u32,
    /// `sugov_hold_freq()` (the busy filter): `None` = not evaluated.
    pub hold: Option<bool>,
    /// The frequency after the busy filter (kHz, 0: not run).
    pub next_freq: u32,
    /// A new frequency was committed.
    pub committed: bool,
    /// The frequency before (kHz).
    pub old_freq: u32,
    /// The frequency after (kHz).
    pub cur_freq: u32,
}

/// Which wake-up placement path ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlacementRule {
    /// `sched_balance_find_dst_cpu()` (fork / first activation).
    Fork,
    /// `find_energy_efficient_cpu()` chose.
    Eas,
    /// The idle-CPU search (`select_idle_sibling()` / `select_idle_capacity()`).
    Idle,
    /// The idle search for an RT task (`find_lowest_rq()`-like).
    Rt,
}

impl PlacementRule {
    /// Its name in records.
    pub fn name(self) -> &'static str {
        match self {
            PlacementRule::Fork => "fork",
            PlacementRule::Eas => "eas",
            PlacementRule::Idle => "idle",
            PlacementRule::Rt => "rt",
        }
    }
}

/// One candidate CPU as the placement saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CandidateRec {
    /// The CPU.
    pub cpu: u32,
    /// Allowed by the task's affinity.
    pub allowed: bool,
    /// Idle (or running only SCHED_IDLE tasks).
    pub idle: bool,
    /// `task_fits_cpu()` (1 or 0); for a CPU `find_energy_efficient_cpu()` tested, its
    /// `util_fits_cpu()` with the rq's clamps (1, -1: uclamp_min not met, 0).
    pub fits: i32,
    /// `capacity_of() − cpu_util()` (0 when negative); for a CPU
    /// `find_energy_efficient_cpu()` tested, with the task on it.
    pub spare: u64,
    /// `cpu_util_cfs()`.
    pub util: u64,
    /// `capacity_of()`.
    pub capacity: u64,
}

/// A wake-up placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementRec {
    /// The task's pid.
    pub pid: i32,
    /// Its previous CPU.
    pub prev_cpu: u32,
    /// The CPU chosen.
    pub dst_cpu: u32,
    /// The path that chose it.
    pub rule: PlacementRule,
    /// The core's reason within the path (`find_energy_efficient_cpu()`'s `FeecRule`,
    /// `select_idle_sibling()`'s `SisRule`, `idlest` for the fork walk).
    pub why: &'static str,
    /// The task's util_avg / util_est / effective clamps.
    pub util_avg: u64,
    /// `_task_util_est()`.
    pub util_est: u64,
    /// Effective `uclamp_min`.
    pub uclamp_min: u64,
    /// Effective `uclamp_max`.
    pub uclamp_max: u64,
    /// Each CPU as seen at the call.
    pub candidates: Vec<CandidateRec>,
    /// EAS only: each performance domain `find_energy_efficient_cpu()` priced.
    pub pd_energy: Vec<PdEnergyRec>,
}

/// One performance domain as `find_energy_efficient_cpu()` priced it (`compute_energy()`
/// values, the core's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PdEnergyRec {
    /// Its first CPU.
    pub first_cpu: u32,
    /// Without the task.
    pub base: u64,
    /// With the task on the previous CPU (when in the domain and fitting).
    pub with_prev: Option<u64>,
    /// The domain's max-spare-capacity CPU.
    pub max_spare_cpu: Option<u32>,
    /// With the task there (when priced).
    pub with_max_spare: Option<u64>,
}

impl std::fmt::Display for PdEnergyRec {
    /// `FIRST:base=B:prev=P:cpuN=E` (`-` where not priced).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        write!(
            f,
            "{}:base={}:prev={}",
            self.first_cpu,
            self.base,
            opt(self.with_prev)
        )?;
        match self.max_spare_cpu {
            Some(c) => write!(f, ":cpu{c}={}", opt(self.with_max_spare)),
            None => Ok(()),
        }
    }
}

/// An idle-state selection (`cpuidle_select()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleSelectRec {
    /// The CPU.
    pub cpu: u32,
    /// `teo` or `menu` (and version).
    pub governor: String,
    /// `tick_nohz_get_sleep_length()` (ns; `KTIME_MAX` = no timer).
    pub sleep_length_ns: i64,
    /// Time to the next tick or timer (ns).
    pub delta_tick_ns: i64,
    /// `sched_cpu_util()`.
    pub cpu_util: u64,
    /// The state chosen.
    pub idx: u32,
    /// Whether the tick is stopped.
    pub stop_tick: bool,
    /// The governor's branch that settled `idx`, as the core returned it.
    pub rule: IdleRule,
    /// teo: `teo_cpu_is_utilized()` was evaluated / its result.
    pub utilized: Option<bool>,
    /// The governor's per-state statistics before the selection: teo's bins
    /// (`intercepts/hits` per state), menu's correction factors per bucket.
    pub stats: String,
}

/// What flipped the root domain's overutilized flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OuTest {
    /// `check_update_overutilized_status()` on one CPU at enqueue / tick.
    CheckUpdate,
    /// The load-balance pass (`update_sd_lb_overutilized()` over all CPUs).
    LoadBalance,
}

/// A change of the root domain's overutilized flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OuRec {
    /// The new value.
    pub overutilized: bool,
    /// The CPU tested (the load-balance pass: the first overutilized CPU, or -1).
    pub cpu: i32,
    /// Which test.
    pub test: OuTest,
    /// That CPU's `cfs.util_avg`, util_est, `capacity_of()` and rq clamps at the test.
    pub util_avg: u64,
    /// `cfs_rq->avg.util_est`.
    pub util_est: u64,
    /// `capacity_of()`.
    pub capacity: u64,
    /// `rq->uclamp[UCLAMP_MIN]`.
    pub uclamp_min: u64,
    /// `rq->uclamp[UCLAMP_MAX]`.
    pub uclamp_max: u64,
}

/// The PELT signals LISA's `sched_pelt_*` events print, in their order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeltSignals {
    /// `load_avg`.
    pub load: u64,
    /// `util_avg`.
    pub util: u64,
    /// `last_update_time` (PELT clock ns).
    pub update_time: u64,
    /// `runnable_avg`.
    pub runnable: u64,
}

impl PeltSignals {
    /// The signals of a `sched_avg` (after the update).
    pub fn of(a: &SchedAvg) -> Self {
        PeltSignals {
            load: a.load_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
            runnable: a.runnable_avg,
        }
    }

    fn values(&self) -> [Val<'static>; 4] {
        [
            Val::U(self.load),
            Val::U(self.util),
            Val::U(self.update_time),
            Val::U(self.runnable),
        ]
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `sched_switch`.
    Switch {
        /// Leaving.
        prev_pid: i32,
        /// Its prio.
        prev_prio: i32,
        /// Its state.
        prev_state: PrevState,
        /// Entering.
        next_pid: i32,
        /// Its prio.
        next_prio: i32,
    },
    /// `sched_waking` (`which` 0), `sched_wakeup` (1), `sched_wakeup_new` (2).
    Wakeup {
        /// 0 waking, 1 wakeup, 2 wakeup_new.
        which: u8,
        /// The task.
        pid: i32,
        /// Its prio.
        prio: i32,
        /// The CPU it goes to.
        target_cpu: u32,
    },
    /// `sched_migrate_task`.
    Migrate {
        /// The task.
        pid: i32,
        /// Its prio.
        prio: i32,
        /// From.
        orig_cpu: u32,
        /// To.
        dest_cpu: u32,
    },
    /// `cpu_frequency` (kHz; one per CPU of the policy).
    Frequency {
        /// kHz.
        state: u32,
        /// The CPU.
        cpu_id: u32,
    },
    /// `cpu_idle` (state index, [`PWR_EVENT_EXIT`] on exit).
    Idle {
        /// State.
        state: u32,
        /// The CPU.
        cpu_id: u32,
    },
    /// `cpu_idle_miss`: the state was too deep (`below`) or too shallow (above).
    IdleMiss {
        /// The CPU.
        cpu_id: u32,
        /// State.
        state: u32,
        /// Too deep for the residency.
        below: bool,
    },
    /// `lisa__sched_pelt_se` (pid -1: a group entity, `path` its group).
    PeltSe {
        /// The CPU.
        cpu: u32,
        /// The task (-1: group).
        pid: i32,
        /// The group path for a group entity.
        path: String,
        /// Its signals.
        avg: PeltSignals,
    },
    /// `lisa__sched_pelt_cfs`.
    PeltCfs {
        /// The CPU.
        cpu: u32,
        /// The group path (`/`: the root).
        path: String,
        /// Its signals.
        avg: PeltSignals,
    },
    /// `lisa__sched_util_est_se`.
    UtilEstSe {
        /// The CPU.
        cpu: u32,
        /// The task.
        pid: i32,
        /// `enqueued` without the flag.
        enqueued: u32,
        /// `ewma`.
        ewma: u32,
        /// `util_avg`.
        util: u64,
    },
    /// `lisa__sched_util_est_cfs`.
    UtilEstCfs {
        /// The CPU.
        cpu: u32,
        /// `enqueued`.
        enqueued: u32,
        /// `ewma`.
        ewma: u32,
        /// `util_avg`.
        util: u64,
    },
    /// `lisa__sched_overutilized` (span: the root domain's CPU mask).
    Overutilized {
        /// The new value.
        overutilized: bool,
        /// CPU mask.
        span: u64,
    },
    /// `lisa__sched_cpu_capacity` (`rq->cpu_capacity`).
    CpuCapacity {
        /// The CPU.
        cpu: u32,
        /// `capacity_of()`.
        capacity: u64,
    },
    /// `lisa__uclamp_util_se`.
    UclampUtilSe {
        /// The task.
        pid: i32,
        /// The CPU.
        cpu: u32,
        /// `util_avg`.
        util_avg: u64,
        /// `uclamp_rq_util_with(rq, util_avg)`.
        uclamp_avg: u64,
        /// `rq->uclamp[UCLAMP_MIN]`.
        uclamp_min: u64,
        /// `rq->uclamp[UCLAMP_MAX]`.
        uclamp_max: u64,
    },
    /// `schedmath__pelt_update`.
    PeltCall(Box<PeltCallRec>),
    /// `schedmath__sugov`.
    Sugov(Box<SugovRec>),
    /// `schedmath__placement`.
    Placement(Box<PlacementRec>),
    /// `schedmath__idle_select`.
    IdleSelect(Box<IdleSelectRec>),
    /// `schedmath__overutilized`.
    OuChange(OuRec),
}

/// One event: when (simulated ns), on which CPU, with which task current there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    /// Simulated time (ns).
    pub ts: u64,
    /// The CPU the event is recorded on.
    pub cpu: u32,
    /// The task current on that CPU ([`IDLE_PID`]: idle).
    pub pid: i32,
    /// What.
    pub kind: Kind,
}

/// A task of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRec {
    /// pid (> 0).
    pub pid: i32,
    /// Its name, spaces replaced by `_` (a comm has none in trace text).
    pub comm: String,
}

/// A recorded run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Number of CPUs.
    pub nr_cpus: usize,
    /// Simulated duration (ns).
    pub duration_ns: u64,
    /// The tasks, by pid order.
    pub tasks: Vec<TaskRec>,
    /// The events, in time order.
    pub events: Vec<Rec>,
}

impl Trace {
    /// The comm of `pid` (`<idle>` for the idle task, `<...>` when unknown, as
    /// trace-cmd prints a pid without a saved cmdline).
    pub fn comm(&self, pid: i32) -> &str {
        if pid == IDLE_PID {
            return "<idle>";
        }
        match usize::try_from(pid - 1)
            .ok()
            .and_then(|i| self.tasks.get(i))
        {
            Some(t) => &t.comm,
            None => "<...>",
        }
    }

    /// The name `sched_switch` prints for `pid` on `cpu` (`swapper/N` for idle).
    pub fn switch_comm(&self, pid: i32, cpu: u32) -> Cow<'_, str> {
        if pid == IDLE_PID {
            Cow::Owned(format!("swapper/{cpu}"))
        } else {
            Cow::Borrowed(self.comm(pid))
        }
    }
}

/// How a field is stored in a `.dat` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `int` (4 bytes, signed).
    I32,
    /// `unsigned int`.
    U32,
    /// `long` / `s64`.
    I64,
    /// `unsigned long` / `u64`.
    U64,
    /// `char name[N]`, NUL-padded.
    Char(usize),
    /// `__data_loc char[] name`: a 32-bit (length << 16 | offset) word in the record,
    /// the NUL-terminated text after the fixed fields (the kernel's `__string()`).
    DynStr,
}

impl Ty {
    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            Ty::I32 | Ty::U32 | Ty::DynStr => 4,
            Ty::I64 | Ty::U64 => 8,
            Ty::Char(n) => n,
        }
    }
}

/// How a field is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    /// Decimal.
    Dec,
    /// Decimal, 3 digits zero-padded (`target_cpu=%03d`).
    Dec03,
    /// A string.
    Str,
    /// `prev_state`: letters from the state bits.
    State,
    /// `span=0x%s`: a hex mask string.
    Hex,
    /// `cpu_idle_miss`'s `type=%s`: `below` when the stored flag is set, else `above`.
    AboveBelow,
}

/// One field of an event layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// The key printed (`key=value`).
    pub key: &'static str,
    /// The field's name in the `.dat` format (the kernel's struct member).
    pub field: &'static str,
    /// Storage.
    pub ty: Ty,
    /// Printing.
    pub fmt: Fmt,
}

/// One event layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventDef {
    /// The event's name.
    pub name: &'static str,
    /// Its trace system (`sched`, `power`, `lisa`, `schedmath`).
    pub system: &'static str,
    /// Its fields in print order.
    pub fields: &'static [FieldDef],
    /// `sched_switch`: the text ` ==>` is printed before this field.
    pub arrow_before: Option<usize>,
}

const fn f(key: &'static str, ty: Ty, fmt: Fmt) -> FieldDef {
    FieldDef {
        key,
        field: key,
        ty,
        fmt,
    }
}
const fn d32(key: &'static str) -> FieldDef {
    f(key, Ty::I32, Fmt::Dec)
}
const fn u32f(key: &'static str) -> FieldDef {
    f(key, Ty::U32, Fmt::Dec)
}
const fn u64f(key: &'static str) -> FieldDef {
    f(key, Ty::U64, Fmt::Dec)
}
const fn i64f(key: &'static str) -> FieldDef {
    f(key, Ty::I64, Fmt::Dec)
}
/// `TASK_COMM_LEN`.
pub const COMM_LEN: usize = 16;
/// LISA's `PATH_SIZE`.
pub const PATH_LEN: usize = 64;
const fn comm(key: &'static str) -> FieldDef {
    f(key, Ty::Char(COMM_LEN), Fmt::Str)
}
const fn path() -> FieldDef {
    f("path", Ty::Char(PATH_LEN), Fmt::Str)
}
const fn text(key: &'static str, n: usize) -> FieldDef {
    f(key, Ty::Char(n), Fmt::Str)
}
const fn dyn_text(key: &'static str) -> FieldDef {
    f(key, Ty::DynStr, Fmt::Str)
}

/// A layout printed without the `==>` of `sched_switch`.
const fn def(name: &'static str, system: &'static str, fields: &'static [FieldDef]) -> EventDef {
    EventDef {
        name,
        system,
        fields,
        arrow_before: None,
    }
}

/// `cpu_frequency` and `cpu_idle` (include/trace/events/power.h's `cpu` class).
const CPU_FIELDS: &[FieldDef] = &[u32f("state"), u32f("cpu_id")];

const WAKEUP_FIELDS: &[FieldDef] = &[
    comm("comm"),
    d32("pid"),
    d32("prio"),
    f("target_cpu", Ty::I32, Fmt::Dec03),
];

/// LISA's `sched_pelt_se` / `sched_pelt_cfs`: `cpu`, `path`, the entity's own fields,
/// then [`PeltSignals`].
macro_rules! pelt_fields {
    ($($own:expr),*) => {
        [
            d32("cpu"),
            path(),
            $($own,)*
            u64f("load"),
            u64f("util"),
            u64f("update_time"),
            u64f("runnable"),
        ]
    };
}

macro_rules! avg_fields {
    ($p:literal, $($ue:literal),*) => {
        [
            u64f(concat!($p, "_lut")),
            u64f(concat!($p, "_load_sum")),
            u64f(concat!($p, "_runnable_sum")),
            u32f(concat!($p, "_util_sum")),
            u32f(concat!($p, "_period_contrib")),
            u64f(concat!($p, "_load_avg")),
            u64f(concat!($p, "_runnable_avg")),
            u64f(concat!($p, "_util_avg")),
            $(u32f(concat!($p, $ue)),)*
        ]
    };
}

macro_rules! pelt_call_fields {
    ($($ue:literal),*) => {{
        const HEAD: [FieldDef; 17] = [
            text("fn", 12),
            text("kind", 8),
            d32("cpu"),
            d32("pid"),
            comm("comm"),
            path(),
            u64f("now"),
            u64f("lw"),
            u64f("weight"),
            u64f("load"),
            u64f("runnable"),
            d32("running"),
            d32("on_rq"),
            d32("delayed"),
            i64f("nr_queued"),
            i64f("nr_runnable"),
            d32("ret"),
        ];
        const B: [FieldDef; 8 + [$($ue),*].len()] = avg_fields!("b", $($ue),*);
        const A: [FieldDef; 8 + [$($ue),*].len()] = avg_fields!("a", $($ue),*);
        const ALL: [FieldDef; 17 + 2 * (8 + [$($ue),*].len())] = {
            let mut out = [HEAD[0]; 17 + 2 * (8 + [$($ue),*].len())];
            let mut i = 0;
            while i < 17 {
                out[i] = HEAD[i];
                i += 1;
            }
            let mut j = 0;
            while j < B.len() {
                out[17 + j] = B[j];
                out[17 + B.len() + j] = A[j];
                j += 1;
            }
            out
        };
        &ALL
    }};
}

/// Every event layout; [`Kind::def`] indexes it.
pub static EVENTS: &[EventDef] = &[
    EventDef {
        name: "sched_switch",
        system: "sched",
        fields: &[
            comm("prev_comm"),
            d32("prev_pid"),
            d32("prev_prio"),
            f("prev_state", Ty::I64, Fmt::State),
            comm("next_comm"),
            d32("next_pid"),
            d32("next_prio"),
        ],
        arrow_before: Some(4),
    },
    def("sched_waking", "sched", WAKEUP_FIELDS),
    def("sched_wakeup", "sched", WAKEUP_FIELDS),
    def("sched_wakeup_new", "sched", WAKEUP_FIELDS),
    def(
        "sched_migrate_task",
        "sched",
        &[
            comm("comm"),
            d32("pid"),
            d32("prio"),
            d32("orig_cpu"),
            d32("dest_cpu"),
        ],
    ),
    def("cpu_frequency", "power", CPU_FIELDS),
    def("cpu_idle", "power", CPU_FIELDS),
    def(
        "cpu_idle_miss",
        "power",
        &[
            u32f("cpu_id"),
            u32f("state"),
            FieldDef {
                key: "type",
                field: "below",
                ty: Ty::U32,
                fmt: Fmt::AboveBelow,
            },
        ],
    ),
    def(
        "lisa__sched_pelt_se",
        "lisa",
        &pelt_fields!(comm("comm"), d32("pid")),
    ),
    def("lisa__sched_pelt_cfs", "lisa", &pelt_fields!()),
    def(
        "lisa__sched_util_est_se",
        "lisa",
        &[
            d32("cpu"),
            path(),
            comm("comm"),
            d32("pid"),
            u32f("enqueued"),
            u32f("ewma"),
            u64f("util"),
        ],
    ),
    def(
        "lisa__sched_util_est_cfs",
        "lisa",
        &[
            d32("cpu"),
            path(),
            u32f("enqueued"),
            u32f("ewma"),
            u64f("util"),
        ],
    ),
    def(
        "lisa__sched_overutilized",
        "lisa",
        &[d32("overutilized"), f("span", Ty::Char(32), Fmt::Hex)],
    ),
    def(
        "lisa__sched_cpu_capacity",
        "lisa",
        &[d32("cpu"), u64f("capacity")],
    ),
    def(
        "lisa__uclamp_util_se",
        "lisa",
        &[
            d32("pid"),
            comm("comm"),
            d32("cpu"),
            u64f("util_avg"),
            u64f("uclamp_avg"),
            u64f("uclamp_min"),
            u64f("uclamp_max"),
        ],
    ),
    def(
        "schedmath__pelt_update",
        "schedmath",
        pelt_call_fields!("_ue"),
    ),
    def(
        "schedmath__pelt_update",
        "schedmath",
        pelt_call_fields!("_ue_enq", "_ue_ewma"),
    ),
    def(
        "schedmath__sugov",
        "schedmath",
        &[
            d32("domain"),
            d32("cpu"),
            u32f("flags"),
            dyn_text("cpus"),
            d32("should_update"),
            u32f("raw_freq"),
            u32f("resolved_freq"),
            d32("hold"),
            u32f("next_freq"),
            d32("committed"),
            u32f("old_freq"),
            u32f("cur_freq"),
        ],
    ),
    def(
        "schedmath__placement",
        "schedmath",
        &[
            d32("pid"),
            d32("prev_cpu"),
            d32("dst_cpu"),
            text("rule", 8),
            u64f("util_avg"),
            u64f("util_est"),
            u64f("uclamp_min"),
            u64f("uclamp_max"),
            dyn_text("cpus"),
            dyn_text("pd_energy"),
        ],
    ),
    def(
        "schedmath__idle_select",
        "schedmath",
        &[
            d32("cpu"),
            text("governor", 16),
            i64f("sleep_length"),
            i64f("delta_tick"),
            u64f("cpu_util"),
            d32("idx"),
            d32("stop_tick"),
            text("rule", 24),
            d32("utilized"),
            dyn_text("stats"),
        ],
    ),
    def(
        "schedmath__overutilized",
        "schedmath",
        &[
            d32("overutilized"),
            d32("cpu"),
            text("test", 16),
            u64f("util_avg"),
            u64f("util_est"),
            u64f("capacity"),
            u64f("uclamp_min"),
            u64f("uclamp_max"),
        ],
    ),
];

/// A field value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val<'a> {
    /// Unsigned.
    U(u64),
    /// Signed.
    I(i64),
    /// Text.
    S(Cow<'a, str>),
}

impl std::fmt::Display for Val<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::U(v) => write!(f, "{v}"),
            Val::I(v) => write!(f, "{v}"),
            Val::S(s) => f.write_str(s),
        }
    }
}

fn b(v: bool) -> Val<'static> {
    Val::I(i64::from(v))
}

/// A `sched_avg` as the probe record prints it: the util_est word (mainline) or
/// `enqueued`, then `ewma` for the pre-v6.9 layout.
fn avg_vals(out: &mut Vec<Val<'_>>, a: &SchedAvg, ue: UeLayout) {
    let (util_est, util_est_ewma) = match a.util_est {
        UtilEst::Mainline(v) => (v, 0),
        UtilEst::PreV6_9 { enqueued, ewma } => (enqueued, ewma),
    };
    out.extend([
        Val::U(a.last_update_time),
        Val::U(a.load_sum),
        Val::U(a.runnable_sum),
        Val::U(a.util_sum.into()),
        Val::U(a.period_contrib.into()),
        Val::U(a.load_avg),
        Val::U(a.runnable_avg),
        Val::U(a.util_avg),
        Val::U(util_est.into()),
    ]);
    if ue == UeLayout::PreV6_9 {
        out.push(Val::U(util_est_ewma.into()));
    }
}

/// A comm as trace text prints it: no spaces.
pub fn comm_of(name: &str) -> String {
    name.replace(char::is_whitespace, "_")
}

impl Kind {
    /// Its layout's index in [`EVENTS`].
    pub fn def(&self) -> usize {
        match self {
            Kind::Switch { .. } => 0,
            Kind::Wakeup { which, .. } => 1 + usize::from(*which).min(2),
            Kind::Migrate { .. } => 4,
            Kind::Frequency { .. } => 5,
            Kind::Idle { .. } => 6,
            Kind::IdleMiss { .. } => 7,
            Kind::PeltSe { .. } => 8,
            Kind::PeltCfs { .. } => 9,
            Kind::UtilEstSe { .. } => 10,
            Kind::UtilEstCfs { .. } => 11,
            Kind::Overutilized { .. } => 12,
            Kind::CpuCapacity { .. } => 13,
            Kind::UclampUtilSe { .. } => 14,
            Kind::PeltCall(c) => match c.ue {
                UeLayout::Mainline => 15,
                UeLayout::PreV6_9 => 16,
            },
            Kind::Sugov(_) => 17,
            Kind::Placement(_) => 18,
            Kind::IdleSelect(_) => 19,
            Kind::OuChange(_) => 20,
        }
    }

    /// Its layout.
    pub fn event_def(&self) -> &'static EventDef {
        &EVENTS[self.def()]
    }

    /// The values of its fields, in [`EventDef::fields`] order (`cpu` is the CPU the
    /// event is recorded on: `swapper/N` names the idle task).
    pub fn values<'a>(&'a self, t: &'a Trace, cpu: u32) -> Vec<Val<'a>> {
        let c = |pid: i32| Val::S(t.switch_comm(pid, cpu));
        let cm = |pid: i32| Val::S(Cow::Borrowed(t.comm(pid)));
        let u = |v: u32| Val::U(v.into());
        let i = |v: i32| Val::I(v.into());
        let s = |v: &'a str| Val::S(Cow::Borrowed(v));
        match self {
            Kind::Switch {
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
            } => vec![
                c(*prev_pid),
                i(*prev_pid),
                i(*prev_prio),
                Val::U(prev_state.bits()),
                c(*next_pid),
                i(*next_pid),
                i(*next_prio),
            ],
            Kind::Wakeup {
                pid,
                prio,
                target_cpu,
                ..
            } => vec![cm(*pid), i(*pid), i(*prio), u(*target_cpu)],
            Kind::Migrate {
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            } => vec![cm(*pid), i(*pid), i(*prio), u(*orig_cpu), u(*dest_cpu)],
            Kind::Frequency { state, cpu_id } | Kind::Idle { state, cpu_id } => {
                vec![u(*state), u(*cpu_id)]
            }
            Kind::IdleMiss {
                cpu_id,
                state,
                below,
            } => vec![u(*cpu_id), u(*state), Val::U(u64::from(*below))],
            Kind::PeltSe {
                cpu,
                pid,
                path,
                avg,
            } => {
                let task = *pid > 0;
                let mut v = vec![
                    u(*cpu),
                    s(if task { "(null)" } else { path }),
                    if task { cm(*pid) } else { s("(null)") },
                    i(*pid),
                ];
                v.extend(avg.values());
                v
            }
            Kind::PeltCfs { cpu, path, avg } => {
                let mut v = vec![u(*cpu), s(path)];
                v.extend(avg.values());
                v
            }
            Kind::UtilEstSe {
                cpu,
                pid,
                enqueued,
                ewma,
                util,
            } => vec![
                u(*cpu),
                s("(null)"),
                cm(*pid),
                i(*pid),
                u(*enqueued),
                u(*ewma),
                Val::U(*util),
            ],
            Kind::UtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            } => vec![u(*cpu), s("/"), u(*enqueued), u(*ewma), Val::U(*util)],
            Kind::Overutilized { overutilized, span } => {
                vec![b(*overutilized), Val::S(Cow::Owned(format!("{span:x}")))]
            }
            Kind::CpuCapacity { cpu, capacity } => vec![u(*cpu), Val::U(*capacity)],
            Kind::UclampUtilSe {
                pid,
                cpu,
                util_avg,
                uclamp_avg,
                uclamp_min,
                uclamp_max,
            } => vec![
                i(*pid),
                cm(*pid),
                u(*cpu),
                Val::U(*util_avg),
                Val::U(*uclamp_avg),
                Val::U(*uclamp_min),
                Val::U(*uclamp_max),
            ],
            Kind::PeltCall(p) => {
                let task = p.pid > 0;
                let mut v = vec![
                    s(match p.func {
                        PeltFn::Se => "se",
                        PeltFn::BlockedSe => "blocked_se",
                        PeltFn::Cfs => "cfs",
                    }),
                    s(match (p.func, p.group) {
                        (PeltFn::Cfs, _) => "cfs_rq",
                        (_, true) => "group",
                        _ => "task",
                    }),
                    u(p.cpu),
                    i(p.pid),
                    if task { cm(p.pid) } else { s("(null)") },
                    s(&p.path),
                    Val::U(p.now),
                    Val::U(p.lw),
                    Val::U(p.weight),
                    Val::U(p.load),
                    Val::U(p.runnable),
                    b(p.running),
                    i(p.on_rq),
                    i(if p.func == PeltFn::Cfs { -1 } else { 0 }),
                    Val::I(p.nr_queued),
                    Val::I(-1),
                    i(p.ret),
                ];
                avg_vals(&mut v, &p.before, p.ue);
                avg_vals(&mut v, &p.after, p.ue);
                v
            }
            Kind::Sugov(r) => {
                let cpus = r
                    .cpus
                    .iter()
                    .map(|c| {
                        let mut f = c.cpu.to_string();
                        for ((key, _), v) in SugovCpuRec::FIELDS.iter().zip(c.values()) {
                            let _ = write!(f, ":{key}={v}");
                        }
                        f
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                vec![
                    u(r.domain),
                    u(r.cpu),
                    u(r.flags),
                    Val::S(Cow::Owned(cpus)),
                    b(r.should_update),
                    u(r.raw_freq),
                    u(r.resolved_freq),
                    Val::I(r.hold.map_or(-1, i64::from)),
                    u(r.next_freq),
                    b(r.committed),
                    u(r.old_freq),
                    u(r.cur_freq),
                ]
            }
            Kind::Placement(p) => {
                let cpus = p
                    .candidates
                    .iter()
                    .map(|c| {
                        format!(
                            "{}:allowed={}:idle={}:fits={}:spare={}:util={}:cap={}",
                            c.cpu,
                            u8::from(c.allowed),
                            u8::from(c.idle),
                            c.fits,
                            c.spare,
                            c.util,
                            c.capacity
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                let pd = p
                    .pd_energy
                    .iter()
                    .map(PdEnergyRec::to_string)
                    .collect::<Vec<_>>()
                    .join(",");
                vec![
                    i(p.pid),
                    u(p.prev_cpu),
                    u(p.dst_cpu),
                    s(p.rule.name()),
                    Val::U(p.util_avg),
                    Val::U(p.util_est),
                    Val::U(p.uclamp_min),
                    Val::U(p.uclamp_max),
                    Val::S(Cow::Owned(if cpus.is_empty() { "-".into() } else { cpus })),
                    Val::S(Cow::Owned(if pd.is_empty() { "-".into() } else { pd })),
                ]
            }
            Kind::IdleSelect(r) => vec![
                u(r.cpu),
                s(&r.governor),
                Val::I(r.sleep_length_ns),
                Val::I(r.delta_tick_ns),
                Val::U(r.cpu_util),
                u(r.idx),
                b(r.stop_tick),
                s(r.rule.name()),
                Val::I(r.utilized.map_or(-1, i64::from)),
                s(if r.stats.is_empty() { "-" } else { &r.stats }),
            ],
            Kind::OuChange(o) => vec![
                b(o.overutilized),
                i(o.cpu),
                s(match o.test {
                    OuTest::CheckUpdate => "check_update",
                    OuTest::LoadBalance => "load_balance",
                }),
                Val::U(o.util_avg),
                Val::U(o.util_est),
                Val::U(o.capacity),
                Val::U(o.uclamp_min),
                Val::U(o.uclamp_max),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_has_its_kinds_values() {
        // The probe layouts: 17 head fields + 2 × (8 + util_est words).
        assert_eq!(EVENTS[15].fields.len(), 17 + 2 * 9);
        assert_eq!(EVENTS[16].fields.len(), 17 + 2 * 10);
        assert_eq!(EVENTS[15].fields[17].key, "b_lut");
        assert_eq!(EVENTS[15].fields[25].key, "b_ue");
        assert_eq!(EVENTS[15].fields[26].key, "a_lut");
        assert_eq!(EVENTS[16].fields[26].key, "b_ue_ewma");
    }
}
