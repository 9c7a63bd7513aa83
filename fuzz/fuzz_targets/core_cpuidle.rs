// SPDX-License-Identifier: GPL-2.0-only
//! The cpuidle governors (teo in each version, menu) and the core's idle-cycle statistics
//! with arbitrary state tables, devices and times: no panic (overflow checks on), and a
//! selected idle state is always a state of the table.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedmath::cpuidle::{
    self, CpuidleDevice, CpuidleDriver, CpuidleState, Governor, IdleExit, ReflectEnv, SelectEnv,
    CPUIDLE_STATE_MAX,
};
use schedmath::profile::IdleGovernor;

fn run(u: &mut Unstructured) -> Result<()> {
    let n = u.int_in_range(1..=CPUIDLE_STATE_MAX)?;
    let mut states = Vec::with_capacity(n);
    for _ in 0..n {
        states.push(CpuidleState {
            exit_latency_ns: u.arbitrary()?,
            target_residency_ns: u.arbitrary()?,
            flags: u.arbitrary()?,
        });
    }
    let Some(drv) = CpuidleDriver::new(&states) else {
        return Ok(());
    };
    let mut dev = CpuidleDevice::default();
    for usage in dev.states_usage.iter_mut() {
        usage.disable = u.int_in_range(0..=3u64)?.saturating_sub(2);
    }
    let kind = *u.choose(&[
        IdleGovernor::TeoV6_6,
        IdleGovernor::TeoV6_10,
        IdleGovernor::TeoV6_12,
        IdleGovernor::TeoMainline,
        IdleGovernor::Menu,
    ])?;
    let mut gov = Governor::enable(kind, u.arbitrary()?);
    while !u.is_empty() {
        let env = SelectEnv {
            tick_nsec: u.arbitrary()?,
            latency_req_ns: u.arbitrary()?,
            tick_stopped: u.arbitrary()?,
            sleep_length_ns: u.arbitrary()?,
            delta_tick_ns: u.arbitrary()?,
            now_ns: u.arbitrary()?,
            cpu_util: u.arbitrary()?,
        };
        let exit = IdleExit {
            last_residency_ns: u.arbitrary()?,
            poll_time_limit: u.arbitrary()?,
            got_tick: u.arbitrary()?,
            reflect_now_ns: u.arbitrary()?,
        };
        match u.int_in_range(0..=3u8)? {
            0 => {
                let cycle = cpuidle::cpuidle_idle_call(&drv, &mut dev, &mut gov, &env, Some(&exit));
                assert!(
                    cycle.selection.idx < n,
                    "idx {} of {n}",
                    cycle.selection.idx
                );
            }
            1 => {
                let cycle = cpuidle::cpuidle_idle_call(&drv, &mut dev, &mut gov, &env, None);
                assert!(
                    cycle.selection.idx < n,
                    "idx {} of {n}",
                    cycle.selection.idx
                );
            }
            2 => {
                let s = gov.select(&drv, &mut dev, &env);
                assert!(s.idx < n, "idx {} of {n}", s.idx);
                let reflect = ReflectEnv {
                    tick_nsec: u.arbitrary()?,
                    got_tick: u.arbitrary()?,
                    now_ns: u.arbitrary()?,
                };
                gov.reflect(&mut dev, s.idx, &reflect);
            }
            _ => {
                // A state toggled through sysfs between cycles.
                let i = u.choose_index(n)?;
                dev.states_usage[i].disable = u.int_in_range(0..=1)?;
            }
        }
        assert!(
            dev.last_state_idx < n as i32,
            "last_state_idx {} of {n}",
            dev.last_state_idx
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
