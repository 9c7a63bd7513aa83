// SPDX-License-Identifier: GPL-2.0-only
//! Step response of a task's PELT signal: how fast util_avg follows a task that starts or
//! stops running, per halflife and PELT multiplier (docs/VARIANTS.md §5).
//!
//! Not a kernel file: a small driver of the kernel functions in [`crate::pelt`] and
//! [`crate::pelt::clock`] (a nice-0 task alone on a max-capacity CPU at its highest
//! frequency, updated every millisecond), shared by the snapshot tests and the simulator's
//! halflife study.

use crate::math::NICE_0_LOAD_SHIFT;
use crate::pelt::clock::{rq_clock_pelt, update_rq_clock_task, PeltClockCpu, RqClock};
use crate::pelt::{__update_load_avg_se, PeltTables, SchedAvg, SchedEntityPelt};
use crate::profile::Profile;
use crate::util_est::UtilEst;

/// Nanoseconds per millisecond: the sampling step of the traces.
pub const NSEC_PER_MSEC: u64 = 1_000_000;

/// `NICE_0_LOAD` on a 64-bit kernel: the scaled weight of a nice-0 task.
pub const NICE_0_LOAD: u64 = 1 << NICE_0_LOAD_SHIFT;

/// The task's state after the update at the end of millisecond `ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseSample {
    /// Milliseconds since the task woke (the update covers `(ms - 1, ms]`).
    pub ms: u64,
    /// Whether the task ran during that millisecond.
    pub running: bool,
    /// The update's return value (1: a period boundary was crossed).
    pub ret: i32,
    /// The task's signal after the update.
    pub avg: SchedAvg,
}

/// A nice-0 task with a zeroed signal wakes at t = 0, runs `run_ms` at 100 % on a CPU of
/// capacity 1024 at maximum frequency, then sleeps `sleep_ms`; `sample` sees the state
/// after each 1 ms update.
///
/// Each millisecond the rq clock advances (`update_rq_clock_task`, curr idle while the task
/// sleeps, so `clock_pelt` follows the multiplier of `profile`) and the task is updated at
/// `rq_clock_pelt` with `on_rq = curr = running`. The idle entry's lost-idle-time check is
/// not modelled: at full capacity and frequency `clock_pelt` never falls behind the task
/// clock, so it would add 0.
pub fn busy_then_idle(
    profile: &Profile,
    run_ms: u64,
    sleep_ms: u64,
    mut sample: impl FnMut(&ResponseSample),
) {
    let t = PeltTables::of(profile.halflife);
    let mut rq = RqClock::new(0, 0, 0);
    let mut avg = SchedAvg {
        util_est: UtilEst::new(profile.util_est),
        ..SchedAvg::default()
    };
    for ms in 1..=run_ms.saturating_add(sleep_ms) {
        let running = ms <= run_ms;
        let cpu = PeltClockCpu {
            curr_is_idle: !running,
            cpu_capacity: 1024,
            freq_capacity: 1024,
        };
        update_rq_clock_task(&mut rq, NSEC_PER_MSEC, 0, &cpu, profile);
        let se = SchedEntityPelt {
            load_weight: NICE_0_LOAD,
            on_rq: running,
            is_curr: running,
            ..SchedEntityPelt::default()
        };
        let ret = __update_load_avg_se(rq_clock_pelt(&rq), &mut avg, &se, t);
        sample(&ResponseSample {
            ms,
            running,
            ret,
            avg,
        });
    }
}

/// Ramp-up and decay times of a task's util_avg, in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RampDecay {
    /// First ms after waking (from a zeroed signal, running 100 %) at which
    /// `util_avg >= up_util`; `None` if never within [`RESPONSE_PHASE_MS`].
    pub ramp_up_ms: Option<u64>,
    /// The util_avg reached at the end of the busy phase (the decay's starting point).
    pub saturated_util_avg: u64,
    /// First ms after going to sleep at which `util_avg <= down_util`; `None` if never
    /// within [`RESPONSE_PHASE_MS`].
    pub decay_ms: Option<u64>,
}

/// Length of the busy and of the idle phase of [`ramp_decay_ms`]: long enough for every
/// supported halflife to saturate (63 halflives of 32 ms plus margin).
pub const RESPONSE_PHASE_MS: u64 = 4096;

/// Ramp-up time (0 → `up_util`) and decay time (saturated → `down_util`) of util_avg for a
/// nice-0 task alone on a max-capacity CPU, with the halflife and multiplier of `profile`.
///
/// VARIANTS.md §5 uses `up_util = 819` (80 % of 1024) and `down_util = 204` (20 %).
pub fn ramp_decay_ms(profile: &Profile, up_util: u64, down_util: u64) -> RampDecay {
    let mut out = RampDecay {
        ramp_up_ms: None,
        saturated_util_avg: 0,
        decay_ms: None,
    };
    busy_then_idle(profile, RESPONSE_PHASE_MS, RESPONSE_PHASE_MS, |s| {
        let util = s.avg.util_avg;
        if s.running {
            if out.ramp_up_ms.is_none() && util >= up_util {
                out.ramp_up_ms = Some(s.ms);
            }
            out.saturated_util_avg = util;
        } else if out.decay_ms.is_none() && util <= down_util {
            out.decay_ms = Some(s.ms.saturating_sub(RESPONSE_PHASE_MS));
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faster_halflives_ramp_and_decay_faster() {
        let at = |name: &str| {
            let p = Profile::from_name(name).unwrap_or_default();
            ramp_decay_ms(&p, 819, 204)
        };
        let hl32 = at("mainline");
        let hl16 = at("pelt-hl16");
        let hl8 = at("pelt-hl8");
        assert!(hl16.ramp_up_ms < hl32.ramp_up_ms && hl8.ramp_up_ms < hl16.ramp_up_ms);
        assert!(hl16.decay_ms < hl32.decay_ms && hl8.decay_ms < hl16.decay_ms);
        // A multiplier of 2 is close to (not exactly) a 16 ms halflife.
        let mult2 = at("pelt-mult2");
        let (a, b) = (mult2.ramp_up_ms.unwrap_or(0), hl16.ramp_up_ms.unwrap_or(0));
        assert!(a.abs_diff(b) <= 2, "{a} vs {b}");
    }
}
