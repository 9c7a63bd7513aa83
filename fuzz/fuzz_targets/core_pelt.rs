// SPDX-License-Identifier: GPL-2.0-only
//! PELT, the rq clocks and util_est with arbitrary inputs: no panic (overflow checks on),
//! and the kernel's invariants: `decay_load(x, n) <= x`; starting from a zeroed
//! `sched_avg`, `util_avg <= 1024` for every signal (the util part only counts "running"),
//! and after an update that returned 1 the averages are the sums over the divider.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedmath::math::div_u64;
use schedmath::pelt::clock::{self, PeltClockCpu, RqClock};
use schedmath::pelt::{self, PeltTables, SchedAvg, SchedEntityPelt};
use schedmath::profile::{Halflife, Profile, UtilEstVersion};
use schedmath::util_est::{self, UtilEst, UtilEstCpu};

fn tables(u: &mut Unstructured) -> Result<&'static PeltTables> {
    Ok(PeltTables::of(*u.choose(&[
        Halflife::Hl32,
        Halflife::Hl16,
        Halflife::Hl8,
    ])?))
}

/// The averages an update that returned 1 must have stored (`___update_load_avg()`).
fn check_consistent(sa: &SchedAvg, weight: u64, t: &PeltTables) {
    let divider = pelt::get_pelt_divider(sa, t);
    assert_eq!(
        sa.util_avg,
        u64::from(sa.util_sum / divider),
        "util_avg vs util_sum"
    );
    assert_eq!(
        Some(sa.runnable_avg),
        div_u64(sa.runnable_sum, divider),
        "runnable_avg vs runnable_sum"
    );
    assert_eq!(
        Some(sa.load_avg),
        div_u64(weight.wrapping_mul(sa.load_sum), divider),
        "load_avg vs load_sum"
    );
}

fn run(u: &mut Unstructured) -> Result<()> {
    let t = tables(u)?;
    let (val, n): (u64, u64) = (u.arbitrary()?, u.arbitrary()?);
    assert!(
        pelt::decay_load(val, n, t) <= val,
        "decay_load grew {val} over {n}"
    );
    pelt::accumulate_pelt_segments(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?, t);

    // A signal from a zeroed state, or from any state (no invariants then).
    let from_zero: bool = u.arbitrary()?;
    let mut sa = if from_zero {
        SchedAvg::default()
    } else {
        SchedAvg {
            last_update_time: u.arbitrary()?,
            load_sum: u.arbitrary()?,
            runnable_sum: u.arbitrary()?,
            util_sum: u.arbitrary()?,
            period_contrib: u.arbitrary()?,
            load_avg: u.arbitrary()?,
            runnable_avg: u.arbitrary()?,
            util_avg: u.arbitrary()?,
            util_est: UtilEst::Mainline(u.arbitrary()?),
        }
    };
    let mut now = sa.last_update_time;
    let kind: u8 = u.int_in_range(0..=6)?;
    while !u.is_empty() {
        // Mostly forward steps of realistic size, sometimes anything (backwards, huge).
        now = match u.int_in_range(0..=7u8)? {
            0 => u.arbitrary()?,
            _ => now.wrapping_add(u64::from(u.arbitrary::<u32>()?)),
        };
        let (ret, weight) = match kind {
            0 => {
                let se = SchedEntityPelt {
                    load_weight: u.arbitrary()?,
                    on_rq: u.arbitrary()?,
                    is_curr: u.arbitrary()?,
                    sched_delayed: u.arbitrary()?,
                    group_runnable_weight: u.arbitrary()?,
                };
                let w = pelt::se_weight(&se);
                (pelt::__update_load_avg_se(now, &mut sa, &se, t), w)
            }
            1 => {
                let w: u64 = u.arbitrary()?;
                let r = pelt::__update_load_avg_blocked_se(now, &mut sa, w, t);
                (
                    r,
                    pelt::se_weight(&SchedEntityPelt {
                        load_weight: w,
                        ..Default::default()
                    }),
                )
            }
            2 => {
                let r = pelt::__update_load_avg_cfs_rq(
                    now,
                    &mut sa,
                    u.arbitrary()?,
                    u.arbitrary()?,
                    u.arbitrary()?,
                    t,
                );
                (r, 1)
            }
            3 => (
                pelt::update_rt_rq_load_avg(now, &mut sa, u.arbitrary()?, t),
                1,
            ),
            4 => (
                pelt::update_dl_rq_load_avg(now, &mut sa, u.arbitrary()?, t),
                1,
            ),
            5 => (pelt::update_hw_load_avg(now, &mut sa, u.arbitrary()?, t), 1),
            _ => {
                let r = pelt::update_irq_load_avg(
                    now,
                    &mut sa,
                    u.arbitrary()?,
                    u.arbitrary()?,
                    u.arbitrary()?,
                    t,
                );
                (r.min(1), 1)
            }
        };
        if from_zero {
            assert!(
                sa.util_avg <= 1024,
                "util_avg {} > 1024: {sa:?}",
                sa.util_avg
            );
            // irq runs two sum updates; only the final state is checked, as for the others.
            if ret == 1 && kind != 6 {
                check_consistent(&sa, weight, t);
            }
        }
    }
    Ok(())
}

/// The rq clocks (pelt.h, the multiplier patch) and util_est in both layouts.
fn run_clock_and_util_est(u: &mut Unstructured) -> Result<()> {
    let t = tables(u)?;
    let mut rq = RqClock::new(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    let profile = Profile {
        pelt_lshift: u.int_in_range(0..=2)?,
        ..Profile::MAINLINE
    };
    let mut p = SchedAvg {
        util_est: UtilEst::new(*u.choose(&[UtilEstVersion::Mainline, UtilEstVersion::PreV6_9])?),
        ..SchedAvg::default()
    };
    let mut cfs_rq = SchedAvg {
        util_est: p.util_est,
        ..SchedAvg::default()
    };
    let cpu = UtilEstCpu {
        capacity_orig: u.arbitrary()?,
        util_est_fastup: u.arbitrary()?,
    };
    while !u.is_empty() {
        match u.int_in_range(0..=8u8)? {
            0 => {
                let c = PeltClockCpu {
                    curr_is_idle: u.arbitrary()?,
                    cpu_capacity: u.arbitrary()?,
                    freq_capacity: u.arbitrary()?,
                };
                let (delta, irq): (u64, u64) = (u.arbitrary()?, u.arbitrary()?);
                clock::update_rq_clock_task(&mut rq, delta, irq, &c, &profile);
            }
            1 => clock::update_idle_rq_clock_pelt(
                &mut rq,
                u.arbitrary()?,
                u.arbitrary()?,
                u.arbitrary()?,
                t,
            ),
            2 => {
                clock::rq_clock_pelt(&rq);
            }
            3 => util_est::util_est_enqueue(&mut cfs_rq, &p),
            4 => util_est::util_est_dequeue(&mut cfs_rq, &p),
            5 => {
                p.util_avg = u.arbitrary()?;
                p.runnable_avg = u.arbitrary()?;
                pelt::cfs_se_util_change(&mut p);
            }
            6 => util_est::util_est_update(&mut p, u.arbitrary()?, &cpu),
            7 => {
                util_est::task_util_est(&p);
                util_est::_task_util_est(&p);
            }
            _ => {
                pelt::attach_entity_load_avg(&mut cfs_rq, &mut p, u.arbitrary()?, t);
                pelt::detach_entity_load_avg(&mut cfs_rq, &p, u.arbitrary()?, t);
            }
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = match u.arbitrary::<bool>() {
        Ok(true) => run_clock_and_util_est(&mut u),
        _ => run(&mut u),
    };
});
