// SPDX-License-Identifier: GPL-2.0-only
//! The governors the simulator drives: schedutil per frequency domain (the core's
//! `sugov_update_single_freq` for one-CPU policies, `sugov_update_shared` otherwise, on a
//! fast-switch driver, with the domain's rate limit) and a cpuidle governor per CPU (the
//! core's teo/menu `select` and `cpuidle_enter_and_reflect`).
//!
//! The cpufreq policy itself comes from [`GovernorPolicy::from_platform`] (the same one
//! `schedmath governor` replays) and the idle states from [`platform_states`] (the ones
//! `schedmath idle` replays), so the commands agree.
//! Simplifications: frequency changes take effect at once (no transition latency); updates
//! from any CPU of a policy are accepted (`dvfs_possible_from_any_cpu`); a polling idle
//! state polls until the wake-up (no poll time limit).

use std::collections::BTreeMap;

use schedmath::cpuidle::{
    cpuidle_enter_and_reflect, cpuidle_enter_state, cpuidle_enter_state_repeated, CpuidleDevice,
    CpuidleDriver, CpuidleState, Governor, IdleExit, IdleMiss, SelectEnv, Selection,
};
use schedmath::schedutil::{
    sugov_get_util, sugov_update_shared_with, sugov_update_single_freq, SugovCpu, SugovEnv,
    SugovPolicy, SugovRq, SugovUpdate,
};
use schedmath::Profile;

use crate::platform::idle::platform_states;
use crate::platform::policy::{GovernorPolicy, PolicyError};
use crate::platform::Platform;

/// One frequency domain: its policy, governor state and accounting.
#[derive(Debug, Clone)]
pub struct FreqDomainState {
    /// Name in reports.
    pub name: String,
    /// Its CPUs, ascending.
    pub cpus: Vec<usize>,
    /// schedutil's policy state (`policy.cur` is the running frequency).
    pub sg: SugovPolicy,
    /// schedutil's per-CPU state, in `cpus` order.
    pub sg_cpus: Vec<SugovCpu>,
    /// `arch_scale_freq_ref()`: the frequency at which `capacity_orig` is reached (kHz).
    pub fref_khz: u64,
    /// Busy power per OPP (kHz → µW), 0 where the platform has none.
    pub power_uw: BTreeMap<u32, u64>,
    /// `power_uw` at the running frequency (read at every accounting step).
    cur_power_uw: u64,
    /// What schedutil reads besides the rqs.
    pub env: SugovEnv,
    /// Frequency residency (kHz → ns).
    pub residency: BTreeMap<u32, u64>,
    /// Start of the current residency interval.
    pub since: u64,
    /// What the last update did (`None`: it failed); read by the trace.
    pub last: Option<SugovUpdate>,
    /// Per CPU of a shared policy (in `cpus` order): the iowait boost and the `(util,
    /// bw_min)` of its last `sugov_get_util()`, `None` once its rq view changed (the
    /// caller of [`FreqDomainState::update`] clears it). `sugov_get_util()` is a function
    /// of the view, the boost and the domain's fixed `env`, and most updates find the
    /// policy's other CPUs as the last one left them: their result is reused.
    pub get_util_memo: Vec<Option<(u64, (u64, u64))>>,
}

impl FreqDomainState {
    /// Domain `n` of `platform`.
    pub fn new(
        platform: &Platform,
        n: usize,
        tick_nsec: i64,
        uclamp_used: bool,
    ) -> Result<Self, PolicyError> {
        let gp = GovernorPolicy::from_platform(platform, n)?;
        let sg = gp.sugov()?;
        let d = &platform.domains[n];
        let mut st = FreqDomainState {
            name: d.name.clone(),
            cpus: d.cpus.clone(),
            sg,
            sg_cpus: vec![SugovCpu::default(); d.cpus.len()],
            fref_khz: d.capacity_freq_ref_khz,
            power_uw: d
                .opps
                .iter()
                .map(|o| (o.khz as u32, o.power_uw.unwrap_or(0))) // validated to fit by GovernorPolicy
                .collect(),
            env: SugovEnv {
                tick_nsec,
                uclamp_used,
                freq_invariant: true,
                arch_freq_ref: d.capacity_freq_ref_khz,
            },
            residency: BTreeMap::new(),
            since: 0,
            last: None,
            cur_power_uw: 0,
            get_util_memo: vec![None; d.cpus.len()],
        };
        st.cur_power_uw = st.power_at(st.cur());
        Ok(st)
    }

    /// The running frequency (kHz).
    pub fn cur(&self) -> u32 {
        self.sg.policy.cur
    }

    /// Busy power at `khz` (µW), 0 for a frequency without an OPP.
    fn power_at(&self, khz: u32) -> u64 {
        self.power_uw.get(&khz).copied().unwrap_or(0)
    }

    /// Busy power at the running frequency (µW).
    pub fn cur_power_uw(&self) -> u64 {
        self.cur_power_uw
    }

    /// `cpufreq_update_util(flags)` from the CPU at position `pos` with every CPU's rq
    /// view; returns the new frequency when the driver switched. Inline in its one
    /// caller, the engine's `cpufreq_update_flags()` (123 508 calls per 100 s run).
    #[inline(always)]
    pub fn update(
        &mut self,
        pos: usize,
        rqs: &[SugovRq],
        profile: &Profile,
        now: u64,
        flags: u32,
    ) -> Option<u32> {
        let before = self.sg.policy.cur;
        self.last = if self.cpus.len() == 1 {
            let (rq, sg_cpu) = (rqs.first()?, self.sg_cpus.first_mut()?);
            sugov_update_single_freq(&mut self.sg, sg_cpu, rq, &self.env, profile, now, flags)
        } else {
            let (env, memo) = (&self.env, &mut self.get_util_memo);
            let mut get_util =
                |j: usize, sg_cpu: &mut SugovCpu, rq: &SugovRq, boost: u64| match memo.get_mut(j) {
                    Some(Some((b, util))) if *b == boost => {
                        (sg_cpu.util, sg_cpu.bw_min) = *util;
                    }
                    m => {
                        sugov_get_util(sg_cpu, rq, env, boost);
                        if let Some(m) = m {
                            *m = Some((boost, (sg_cpu.util, sg_cpu.bw_min)));
                        }
                    }
                };
            let cpus = (&mut self.sg_cpus[..], rqs, pos);
            sugov_update_shared_with(&mut self.sg, cpus, env, now, flags, &mut get_util)
        };
        let after = self.sg.policy.cur;
        if after != before {
            self.cur_power_uw = self.power_at(after);
        }
        self.last?;
        if after == before {
            return None;
        }
        *self.residency.entry(before).or_default() += now - self.since;
        self.since = now;
        Some(after)
    }

    /// Closes the residency at `now`.
    pub fn finish(&mut self, now: u64) {
        *self.residency.entry(self.sg.policy.cur).or_default() += now.saturating_sub(self.since);
        self.since = now;
    }
}

/// One CPU's cpuidle driver, device and governor.
#[derive(Debug, Clone)]
pub struct CpuIdle {
    /// The state table.
    pub drv: CpuidleDriver,
    /// Usage, residency and misses per state.
    pub dev: CpuidleDevice,
    /// teo or menu.
    pub gov: Governor,
    /// Power per state (µW), 0 where not given.
    pub power_uw: Vec<u64>,
    /// The governor is not called: its selection is known without it (see
    /// [`CpuIdle::new`]).
    pub skip_governor: bool,
}

impl CpuIdle {
    /// The idle states of `cpu`; `None` when the platform gives it none.
    ///
    /// With one state and teo, the governor is skipped unless `traced`: every teo
    /// version's `teo_select()` answers "no choice" there (`state_count < 2`: state 0,
    /// tick kept, nothing else read) — what `cpuidle_idle_call()` itself does without the
    /// governor since commit e5c9ffc6ae1b ("cpuidle: Skip governor when only one idle
    /// state is available", kernel/sched/idle.c). The statistics teo would keep (its
    /// `teo_update()` at each select, `teo_reflect()`) decide nothing with one state and
    /// only a trace prints them, so a traced run still calls it. menu is always called:
    /// before that commit its `menu_select()` stops the tick with one non-polling state.
    pub fn new(
        platform: &Platform,
        cpu: usize,
        capacity: u64,
        profile: &Profile,
        traced: bool,
    ) -> Option<Self> {
        let table: Vec<CpuidleState> = platform_states(platform, cpu)
            .iter()
            .map(|s| s.state)
            .collect();
        let drv = CpuidleDriver::new(&table).filter(|d| d.state_count() > 0)?;
        let gov = Governor::enable(profile.idle_governor, capacity);
        let skip_governor =
            !traced && drv.state_count() == 1 && matches!(gov, Governor::Teo { .. });
        Some(CpuIdle {
            drv,
            dev: CpuidleDevice::default(),
            gov,
            skip_governor,
            power_uw: platform
                .idle_states_of(cpu)
                .iter()
                .map(|s| s.power_uw.unwrap_or(0))
                .collect(),
        })
    }

    /// The governor's `select`.
    pub fn select(&mut self, env: &SelectEnv) -> Selection {
        self.gov.select(&self.drv, &mut self.dev, env)
    }

    /// Exit latency of state `idx` (ns).
    pub fn exit_latency_ns(&self, idx: usize) -> u64 {
        u64::try_from(self.drv.exit_latency_ns(idx)).unwrap_or(0)
    }

    /// `n` stays in `idx` of `wall` ns each, each ended by the tick, for a CPU whose
    /// governor is skipped (no `reflect` to call): the statistics of as many exits.
    pub fn exit_repeated(&mut self, idx: usize, wall: u64, n: u64) {
        debug_assert!(self.skip_governor);
        let residency = wall.saturating_add(self.exit_latency_ns(idx));
        let diff = i64::try_from(residency).unwrap_or(i64::MAX);
        cpuidle_enter_state_repeated(&self.drv, &mut self.dev, idx, diff, false, n);
    }

    /// The stay in `idx` from `since` ended at `now` (by a wake-up or the tick): the
    /// statistics of `cpuidle_enter_state()` (residency includes the exit latency) and
    /// the governor's `reflect`.
    /// Returns whether the stay missed its state (the `cpu_idle_miss` of the kernel).
    pub fn exit(
        &mut self,
        idx: usize,
        since: u64,
        now: u64,
        got_tick: bool,
        tick_nsec: i64,
    ) -> IdleMiss {
        let residency = (now - since).saturating_add(self.exit_latency_ns(idx));
        let exit = IdleExit {
            last_residency_ns: i64::try_from(residency).unwrap_or(i64::MAX),
            poll_time_limit: false,
            got_tick,
            reflect_now_ns: since.saturating_add(residency),
        };
        if self.skip_governor {
            return cpuidle_enter_state(
                &self.drv,
                &mut self.dev,
                idx,
                exit.last_residency_ns,
                exit.poll_time_limit,
            );
        }
        cpuidle_enter_and_reflect(
            &self.drv,
            &mut self.dev,
            &mut self.gov,
            idx,
            tick_nsec,
            &exit,
        )
    }
}
