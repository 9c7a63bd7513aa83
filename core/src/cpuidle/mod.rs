// SPDX-License-Identifier: GPL-2.0-only
//! cpuidle core — drivers/cpuidle/cpuidle.c (statistics of `cpuidle_enter_state()`),
//! include/linux/cpuidle.h (state table, device) and drivers/cpuidle/governors/gov.h.
//!
//! One pass of the idle loop is: the governor's `select`, the driver's `enter` (here the
//! measured residency is an input), the core's per-state statistics with the idle-miss
//! accounting ("above": the state was too deep, "below": a deeper one would have fitted),
//! then the governor's `reflect`. Times are `s64` nanoseconds as in the kernel, and the
//! comparisons keep C's mixed signed/unsigned rules, because the fixtures compare bits.
//! The governors are [`teo`] (one module, every version) and [`menu`].

pub mod menu;
pub mod teo;

use crate::profile::IdleGovernor;

pub use menu::MenuDevice;
pub use teo::TeoCpu;

/// `CPUIDLE_STATE_MAX`: the most idle states a driver may register (include/linux/cpuidle.h).
/// It bounds the state table and every per-state array of the device and the governors.
pub const CPUIDLE_STATE_MAX: usize = 10;

/// `CPUIDLE_FLAG_POLLING`: the state busy-polls (`poll_idle()`); governors avoid it unless
/// a wakeup is imminent.
pub const CPUIDLE_FLAG_POLLING: u32 = 1 << 0;

/// `CPUIDLE_FLAG_TIMER_STOP`: the local timer stops in this state (governors ignore it).
pub const CPUIDLE_FLAG_TIMER_STOP: u32 = 1 << 2;

/// `RESIDENCY_THRESHOLD_NS` (gov.h): 15 µs, below which a target residency is "short".
pub const RESIDENCY_THRESHOLD_NS: i64 = 15_000;

/// `KTIME_MAX`: "no timer" for sleep lengths.
pub const KTIME_MAX: i64 = i64::MAX;

/// `NSEC_PER_USEC`.
pub const NSEC_PER_USEC: i64 = 1000;

/// C's usual arithmetic conversion of an `s64` meeting a `u64` (comparison, assignment or
/// arithmetic): the value is reinterpreted, so a negative time becomes a huge one. Every
/// mixed signed/unsigned comparison of the governors goes through here, by name.
#[inline]
pub const fn unsigned(x: i64) -> u64 {
    x as u64 // two's-complement reinterpretation, as C does
}

/// One entry of `drv->states[]` (`struct cpuidle_state`), the fields governors read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpuidleState {
    /// `exit_latency_ns` (s64).
    pub exit_latency_ns: i64,
    /// `target_residency_ns` (s64).
    pub target_residency_ns: i64,
    /// `flags` (`CPUIDLE_FLAG_*`).
    pub flags: u32,
}

/// The idle states of a CPU, shallowest first (`struct cpuidle_driver`); `state_count` is
/// the table's length, at most [`CPUIDLE_STATE_MAX`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CpuidleDriver {
    /// `states[0..state_count]`.
    pub states: heapless::Vec<CpuidleState, CPUIDLE_STATE_MAX>,
}

impl CpuidleDriver {
    /// A driver from a table; `None` when it has more than [`CPUIDLE_STATE_MAX`] states.
    pub fn new(states: &[CpuidleState]) -> Option<Self> {
        heapless::Vec::from_slice(states)
            .ok()
            .map(|states| Self { states })
    }

    /// `drv->state_count`.
    pub fn state_count(&self) -> usize {
        self.states.len()
    }

    /// State `i`; an index outside the table reads as an all-zero state (the kernel would
    /// read past the table; no kernel path here does it with a consistent device).
    pub fn state(&self, i: usize) -> CpuidleState {
        self.states.get(i).copied().unwrap_or_default()
    }

    /// `drv->states[i].target_residency_ns`.
    pub fn target_residency_ns(&self, i: usize) -> i64 {
        self.state(i).target_residency_ns
    }

    /// `drv->states[i].exit_latency_ns`.
    pub fn exit_latency_ns(&self, i: usize) -> i64 {
        self.state(i).exit_latency_ns
    }

    /// `drv->states[i].flags & CPUIDLE_FLAG_POLLING`.
    pub fn is_polling(&self, i: usize) -> bool {
        self.state(i).flags & CPUIDLE_FLAG_POLLING != 0
    }
}

/// `struct cpuidle_state_usage`: per-state counters of one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpuidleStateUsage {
    /// `disable` (nonzero = disabled via sysfs or the driver).
    pub disable: u64,
    /// `usage`: entries.
    pub usage: u64,
    /// `time_ns`: summed residency (wraps as the kernel's u64).
    pub time_ns: u64,
    /// `above`: entries whose residency was below the state's target residency while a
    /// shallower state was enabled.
    pub above: u64,
    /// `below`: entries after which the first enabled deeper state would have fitted.
    pub below: u64,
    /// `rejected`: entries the driver refused (never produced here: the modelled driver
    /// enters or the loop aborts before calling it).
    pub rejected: u64,
}

/// `struct cpuidle_device`: the fields the core and the governors use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CpuidleDevice {
    /// `last_state_idx` (int): teo uses -1 for "already accounted".
    pub last_state_idx: i32,
    /// `last_residency_ns` (s64): the last measured entry-to-exit time.
    pub last_residency_ns: i64,
    /// `poll_time_limit`: `poll_idle()` stopped on its time limit.
    pub poll_time_limit: bool,
    /// `states_usage[CPUIDLE_STATE_MAX]`.
    pub states_usage: [CpuidleStateUsage; CPUIDLE_STATE_MAX],
}

impl Default for CpuidleDevice {
    /// The per-CPU device starts zeroed: `last_state_idx` 0, nothing disabled.
    fn default() -> Self {
        Self {
            last_state_idx: 0,
            last_residency_ns: 0,
            poll_time_limit: false,
            states_usage: [CpuidleStateUsage::default(); CPUIDLE_STATE_MAX],
        }
    }
}

impl CpuidleDevice {
    /// `dev->states_usage[i].disable` is nonzero; an index outside the array reads as
    /// disabled.
    pub fn is_disabled(&self, i: usize) -> bool {
        self.states_usage.get(i).is_none_or(|u| u.disable != 0)
    }
}

/// The idle-miss outcome of one entry, as `cpuidle_enter_state()` counts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IdleMiss {
    /// The state was too deep (`above` was incremented).
    pub above: bool,
    /// A deeper state would have fitted (`below` was incremented).
    pub below: bool,
}

/// The statistics block of `cpuidle_enter_state()` for an entry into `entered_state` that
/// lasted `diff` ns (entry-to-exit, exit latency included); `poll_time_limit` is what
/// `poll_idle()` reports and is written only when the state polls.
///
/// Trap: `below` is the `else if` branch: it is looked at only when the residency reached
/// the entered state's target residency *and* exceeded its exit latency, and it compares
/// `diff - exit_latency` (s64, wrapping) with the *first enabled* deeper state only;
/// disabled deeper states are skipped, deeper enabled ones never looked at.
pub fn cpuidle_enter_state(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    entered_state: usize,
    diff: i64,
    poll_time_limit: bool,
) -> IdleMiss {
    if drv.is_polling(entered_state) {
        dev.poll_time_limit = poll_time_limit;
    }
    let delay = drv.exit_latency_ns(entered_state);
    dev.last_residency_ns = diff;
    let mut miss = IdleMiss::default();
    if diff < drv.target_residency_ns(entered_state) {
        miss.above = (0..entered_state).rev().any(|i| !dev.is_disabled(i));
    } else if diff > delay {
        if let Some(i) = (entered_state + 1..drv.state_count()).find(|&i| !dev.is_disabled(i)) {
            miss.below = diff.wrapping_sub(delay) >= drv.target_residency_ns(i);
        }
    }
    if let Some(u) = dev.states_usage.get_mut(entered_state) {
        u.time_ns = u.time_ns.wrapping_add(diff as u64); // kernel adds the s64 into a u64
        u.usage = u.usage.wrapping_add(1);
        u.above = u.above.wrapping_add(u64::from(miss.above));
        u.below = u.below.wrapping_add(u64::from(miss.below));
    }
    miss
}

/// [`cpuidle_enter_state()`] for `n` entries into `entered_state` of `diff` ns each: the
/// same statistics as `n` calls, in one step (a CPU whose tick wakes it from the same state
/// every period, folded by the simulator). Returns what each entry counted.
pub fn cpuidle_enter_state_repeated(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    entered_state: usize,
    diff: i64,
    poll_time_limit: bool,
    n: u64,
) -> IdleMiss {
    if n == 0 {
        return IdleMiss::default();
    }
    let miss = cpuidle_enter_state(drv, dev, entered_state, diff, poll_time_limit);
    let more = n - 1;
    if let Some(u) = dev.states_usage.get_mut(entered_state) {
        // The kernel's u64 sums wrap, so n additions are one wrapping product.
        u.time_ns = u.time_ns.wrapping_add((diff as u64).wrapping_mul(more));
        u.usage = u.usage.wrapping_add(more);
        u.above = u.above.wrapping_add(u64::from(miss.above) * more);
        u.below = u.below.wrapping_add(u64::from(miss.below) * more);
    }
    miss
}

/// `call_cpuidle()` with `need_resched()` already set: entry is aborted, the residency
/// reads 0, no statistics change and the governor's `reflect` is not called.
pub fn call_cpuidle_aborted(dev: &mut CpuidleDevice) {
    dev.last_residency_ns = 0;
}

/// `cpuidle_governor_latency_req()` with no latency request, in ns: the CPU-latency QoS
/// default `PM_QOS_CPU_LATENCY_DEFAULT_VALUE` (include/linux/pm_qos.h, 2000 s in µs; it is
/// below the device's "no constraint" `S32_MAX` µs, so it is the minimum) × `NSEC_PER_USEC`.
pub const PM_QOS_CPU_LATENCY_DEFAULT_NS: i64 = 2_000_000_000_000;

/// What the kernel answers to the governor's questions while `select` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SelectEnv {
    /// `TICK_NSEC` (a compile-time signed long).
    pub tick_nsec: i64,
    /// `cpuidle_governor_latency_req()` in ns (s64).
    pub latency_req_ns: i64,
    /// `tick_nohz_tick_stopped()`.
    pub tick_stopped: bool,
    /// `tick_nohz_get_sleep_length()` (ktime_t, may be negative or `KTIME_MAX`).
    pub sleep_length_ns: i64,
    /// The `delta_next` it writes: time to the next event including the tick.
    pub delta_tick_ns: i64,
    /// `local_clock()` (teo v6.6, v6.10, v6.12).
    pub now_ns: u64,
    /// `sched_cpu_util()` (teo v6.6, v6.10).
    pub cpu_util: u64,
}

/// What the kernel answers while `reflect` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ReflectEnv {
    /// `TICK_NSEC`.
    pub tick_nsec: i64,
    /// `tick_nohz_idle_got_tick()`.
    pub got_tick: bool,
    /// `local_clock()` (teo v6.6, v6.10, v6.12).
    pub now_ns: u64,
}

/// A governor's `select` result plus what it asked the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Selection {
    /// The selected state index.
    pub idx: usize,
    /// The final `*stop_tick` (preset true).
    pub stop_tick: bool,
    /// `tick_nohz_get_sleep_length()` was called.
    pub sleep_length_queried: bool,
    /// teo v6.6/v6.10: `teo_cpu_is_utilized()` was evaluated.
    pub util_queried: bool,
    /// teo v6.6/v6.10: its result (false when not evaluated).
    pub cpu_utilized: bool,
    /// The branch of the governor that settled `idx` (the last one that moved it, or
    /// the one that returned early): what `explain` prints, recorded at the call.
    pub rule: IdleRule,
}

/// The branch of `teo_select()` / `menu_select()` that settled the state, named after
/// the kernel's own tests (drivers/cpuidle/governors/teo.c, menu.c). Reporting only: no
/// governor reads it back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IdleRule {
    /// No selection made (the default of an empty [`Selection`]).
    #[default]
    None,
    /// Fewer than two states (teo: `drv->state_count < 2`, menu: `<= 1`), or none
    /// enabled: state 0.
    NoChoice,
    /// One state enabled (teo `idx == idx0` after the first loop): that one.
    OneEnabled,
    /// teo v6.6/v6.10: a utilized CPU with two states takes the shallow non-polling one.
    UtilizedTwoStates,
    /// teo: intercepts are not the majority, so the deepest enabled state (where the
    /// past idle durations mostly fell: the "hits") stays the candidate.
    Hits,
    /// teo: `2 * idx_intercept_sum > total - idx_hit_sum`: intercepts dominate, so the
    /// deepest shallower state that most intercepted idle periods reached.
    Intercepts,
    /// teo v6.10: `idx_recent_sum > NR_RECENT / 2`: recent intercepts pull shallower.
    RecentIntercepts,
    /// teo v6.12: the intercepts chose state 0; the sleep length is learned and the tick
    /// kept.
    InterceptsChoseZero,
    /// teo: `idx > constraint_idx`; menu: `exit_latency_ns > latency_req`: the PM QoS
    /// latency limit caps the depth.
    LatencyLimit,
    /// teo mainline: a short candidate when short idles dominate (or the latency limit is
    /// tight): the sleep length is not asked, the tick kept.
    ShortIdles,
    /// teo v6.6/v6.10: `teo_cpu_is_utilized()`: the closest shallower non-polling state.
    Utilized,
    /// teo: state 0 polls and the candidate's target residency is under
    /// `RESIDENCY_THRESHOLD_NS`: no sleep length asked, the tick kept.
    ShortResidency,
    /// The sleep length (time to the next timer) is shorter than the candidate's target
    /// residency: the deepest state that fits it (teo `teo_find_shallower_state()`).
    SleepLength,
    /// The tick stays (the state polls or the idle is shorter than a tick): the state is
    /// fitted to the time to the next tick (`delta_tick`).
    TickFit,
    /// menu: `latency_req == 0`, or the next timer comes before state 1's target
    /// residency, or the latency limit is below state 1's exit latency: state 0.
    TimerOrLatencyState0,
    /// menu: the deepest state whose target residency fits the predicted idle duration
    /// (typical interval or corrected timer).
    Predicted,
    /// menu: a physical state instead of polling when the timer is not imminent.
    AvoidPolling,
    /// menu: the prediction is past the tick but the tick runs: the shallower state, and
    /// the governor runs again at the tick.
    KeepTickShallow,
    /// menu: the tick is stopped: the deeper state if it fits before the next event.
    TickStopped,
}

impl IdleRule {
    /// Its name in records (`schedmath__idle_select`'s `rule=`).
    pub fn name(self) -> &'static str {
        match self {
            IdleRule::None => "none",
            IdleRule::NoChoice => "no_choice",
            IdleRule::OneEnabled => "one_enabled",
            IdleRule::UtilizedTwoStates => "utilized_two_states",
            IdleRule::Hits => "hits",
            IdleRule::Intercepts => "intercepts",
            IdleRule::RecentIntercepts => "recent_intercepts",
            IdleRule::InterceptsChoseZero => "intercepts_chose_0",
            IdleRule::LatencyLimit => "latency_limit",
            IdleRule::ShortIdles => "short_idles",
            IdleRule::Utilized => "utilized",
            IdleRule::ShortResidency => "short_residency",
            IdleRule::SleepLength => "sleep_length",
            IdleRule::TickFit => "tick_fit",
            IdleRule::TimerOrLatencyState0 => "timer_or_latency_0",
            IdleRule::Predicted => "predicted",
            IdleRule::AvoidPolling => "avoid_polling",
            IdleRule::KeepTickShallow => "keep_tick_shallow",
            IdleRule::TickStopped => "tick_stopped",
        }
    }
}

/// A governor's per-CPU data; which code runs is the [`IdleGovernor`] it was enabled with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Governor {
    /// teo (`struct teo_cpu`) of one version.
    Teo {
        /// Which teo.c (never `Menu`).
        version: IdleGovernor,
        /// The per-CPU data.
        cpu: TeoCpu,
    },
    /// menu (`struct menu_device`).
    Menu(MenuDevice),
}

impl Governor {
    /// The governor's `enable` callback for a CPU of `capacity`
    /// (`arch_scale_cpu_capacity()`, read by teo v6.6/v6.10 only).
    pub fn enable(kind: IdleGovernor, capacity: u64) -> Self {
        match kind {
            IdleGovernor::Menu => Governor::Menu(menu::menu_enable_device()),
            version => Governor::Teo {
                version,
                cpu: teo::teo_enable_device(version, capacity),
            },
        }
    }

    /// Which governor and version runs.
    pub fn kind(&self) -> IdleGovernor {
        match self {
            Governor::Teo { version, .. } => *version,
            Governor::Menu(_) => IdleGovernor::Menu,
        }
    }

    /// The governor's `select`.
    pub fn select(
        &mut self,
        drv: &CpuidleDriver,
        dev: &mut CpuidleDevice,
        env: &SelectEnv,
    ) -> Selection {
        match self {
            Governor::Teo { version, cpu } => teo::teo_select(drv, dev, cpu, *version, env),
            Governor::Menu(data) => menu::menu_select(drv, dev, data, env),
        }
    }

    /// The governor's `reflect` for the entered `state`.
    pub fn reflect(&mut self, dev: &mut CpuidleDevice, state: usize, env: &ReflectEnv) {
        match self {
            Governor::Teo { version, cpu } => teo::teo_reflect(dev, cpu, *version, state, env),
            Governor::Menu(data) => menu::menu_reflect(dev, data, state, env),
        }
    }
}

/// How an idle period ended, as measured after wakeup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IdleExit {
    /// Entry-to-exit time (s64 ns, exit latency included).
    pub last_residency_ns: i64,
    /// What `poll_idle()` reports (used only when a polling state was entered).
    pub poll_time_limit: bool,
    /// `tick_nohz_idle_got_tick()`.
    pub got_tick: bool,
    /// `local_clock()` at reflect.
    pub reflect_now_ns: u64,
}

/// The outcome of one idle cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IdleCycle {
    /// What select returned.
    pub selection: Selection,
    /// The idle-miss accounting (both false when entry was aborted).
    pub miss: IdleMiss,
}

/// One pass of `cpuidle_idle_call()`: select, then either an aborted entry (`exit` is
/// `None`: `need_resched()` was set) or enter + statistics + reflect.
pub fn cpuidle_idle_call(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    gov: &mut Governor,
    env: &SelectEnv,
    exit: Option<&IdleExit>,
) -> IdleCycle {
    let selection = gov.select(drv, dev, env);
    let miss = match exit {
        Some(exit) => cpuidle_enter_and_reflect(drv, dev, gov, selection.idx, env.tick_nsec, exit),
        None => {
            call_cpuidle_aborted(dev);
            IdleMiss::default()
        }
    };
    IdleCycle { selection, miss }
}

/// The second half of an idle cycle whose state `idx` was selected: the entry statistics
/// of `cpuidle_enter_state()` and the governor's `reflect`.
pub fn cpuidle_enter_and_reflect(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    gov: &mut Governor,
    idx: usize,
    tick_nsec: i64,
    exit: &IdleExit,
) -> IdleMiss {
    let miss = cpuidle_enter_state(drv, dev, idx, exit.last_residency_ns, exit.poll_time_limit);
    gov.reflect(
        dev,
        idx,
        &ReflectEnv {
            tick_nsec,
            got_tick: exit.got_tick,
            now_ns: exit.reflect_now_ns,
        },
    );
    miss
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rk3399: WFI 1/1 µs, cpu-sleep 370/900 µs, cluster-sleep 900/2000 µs.
    pub(crate) fn rk3399() -> CpuidleDriver {
        let s = |lat_us: i64, res_us: i64| CpuidleState {
            exit_latency_ns: lat_us * 1000,
            target_residency_ns: res_us * 1000,
            flags: 0,
        };
        CpuidleDriver::new(&[s(1, 1), s(370, 900), s(900, 2000)]).unwrap()
    }

    /// HZ=250.
    pub(crate) const TICK: i64 = 4_000_000;

    /// Select inputs with no latency constraint, the tick running, `sleep_length_ns` to
    /// the next timer (the tick within one period).
    pub(crate) fn env(sleep_length_ns: i64) -> SelectEnv {
        SelectEnv {
            tick_nsec: TICK,
            latency_req_ns: PM_QOS_CPU_LATENCY_DEFAULT_NS,
            tick_stopped: false,
            sleep_length_ns,
            delta_tick_ns: sleep_length_ns.clamp(0, TICK),
            now_ns: 0,
            cpu_util: 0,
        }
    }

    /// A device whose last idle period measured `last_residency_ns` in state 0.
    pub(crate) fn dev_after(last_residency_ns: i64) -> CpuidleDevice {
        CpuidleDevice {
            last_residency_ns,
            ..CpuidleDevice::default()
        }
    }

    #[test]
    fn idle_rule_name_is_the_record_word() {
        assert_eq!(IdleRule::Intercepts.name(), "intercepts");
        assert_eq!(IdleRule::InterceptsChoseZero.name(), "intercepts_chose_0");
        assert_eq!(IdleRule::TimerOrLatencyState0.name(), "timer_or_latency_0");
        assert_eq!(IdleRule::default().name(), "none");
    }

    #[test]
    fn below_compares_only_the_first_enabled_deeper_state() {
        let drv = rk3399();
        let mut dev = CpuidleDevice::default();
        // 2.5 ms in WFI: state 1 (900 µs) fits → below.
        let m = cpuidle_enter_state(&drv, &mut dev, 0, 2_500_000, false);
        assert_eq!(
            m,
            IdleMiss {
                above: false,
                below: true
            }
        );
        // With state 1 disabled, state 2 (2000 µs) is compared: 1_500_000 - 1000 < 2 ms.
        dev.states_usage[1].disable = 1;
        let m = cpuidle_enter_state(&drv, &mut dev, 0, 1_500_000, false);
        assert_eq!(m, IdleMiss::default());
        assert_eq!(dev.states_usage[0].below, 1);
        assert_eq!(dev.states_usage[0].usage, 2);
    }

    #[test]
    fn repeated_entries_count_as_that_many_single_ones() {
        let drv = rk3399();
        for (idx, diff, n) in [(0, 2_500_000, 3), (0, 4_000, 5), (2, 5_000, 4), (1, 7, 1)] {
            let (mut one, mut many) = (CpuidleDevice::default(), CpuidleDevice::default());
            for _ in 0..n {
                cpuidle_enter_state(&drv, &mut one, idx, diff, false);
            }
            let m = cpuidle_enter_state_repeated(&drv, &mut many, idx, diff, false, n);
            assert_eq!(
                m,
                cpuidle_enter_state(&drv, &mut CpuidleDevice::default(), idx, diff, false)
            );
            assert_eq!(one, many);
        }
        // 3 × 2.5 ms in WFI: usage 3, time 7.5 ms, below 3 (state 1 fits each time).
        let mut dev = CpuidleDevice::default();
        cpuidle_enter_state_repeated(&drv, &mut dev, 0, 2_500_000, false, 3);
        let u = dev.states_usage[0];
        assert_eq!((u.usage, u.time_ns, u.above, u.below), (3, 7_500_000, 0, 3));
        assert_eq!(dev.last_residency_ns, 2_500_000);
        // None: nothing changes.
        let mut none = CpuidleDevice::default();
        cpuidle_enter_state_repeated(&drv, &mut none, 0, 2_500_000, false, 0);
        assert_eq!(none, CpuidleDevice::default());
    }

    #[test]
    fn below_boundary_is_residency_minus_exit_latency() {
        let drv = rk3399();
        let mut dev = CpuidleDevice::default();
        // diff - 1000 >= 900_000 exactly at 901_000.
        assert!(cpuidle_enter_state(&drv, &mut dev, 0, 901_000, false).below);
        assert!(!cpuidle_enter_state(&drv, &mut dev, 0, 900_999, false).below);
    }

    #[test]
    fn above_needs_an_enabled_shallower_state() {
        let drv = rk3399();
        let mut dev = CpuidleDevice::default();
        assert!(cpuidle_enter_state(&drv, &mut dev, 2, 5_000, false).above);
        dev.states_usage[0].disable = 1;
        dev.states_usage[1].disable = 1;
        let m = cpuidle_enter_state(&drv, &mut dev, 2, 5_000, false);
        assert_eq!(m, IdleMiss::default());
        assert_eq!(dev.last_residency_ns, 5_000);
    }

    #[test]
    fn enable_starts_each_governor_as_its_enable_callback() {
        let g = Governor::enable(IdleGovernor::TeoV6_10, 1024);
        assert_eq!(g.kind(), IdleGovernor::TeoV6_10);
        let Governor::Teo { cpu, .. } = g else {
            panic!("teo")
        };
        assert_eq!((cpu.util_threshold, cpu.recent_idx), (16, [-1; 9]));
        let g = Governor::enable(IdleGovernor::Menu, 1024);
        assert_eq!(g.kind(), IdleGovernor::Menu);
        let Governor::Menu(d) = g else { panic!("menu") };
        assert_eq!(d.correction_factor, [8192; 6]);
    }
}
