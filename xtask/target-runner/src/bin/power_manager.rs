// SPDX-License-Identifier: GPL-2.0-only
//! Example firmware: the schedmath core used the way a power manager on an MCU would.
//!
//! A 4 ms tick (SysTick, HZ = 250) drives PELT for three tasks and their runqueue, util_est
//! at each sleep, schedutil picking an OPP from the CPU's utilization, and teo picking an
//! idle state whenever no task is runnable (stopping the tick until the next wake-up when
//! teo says so). Every decision goes out over defmt (semihosting); `cargo xtask firmware`
//! runs it under QEMU (mps2-an386, Cortex-M4F) and diffs the decoded log against
//! `xtask/firmware-snapshot.txt`.
//!
//! The task load is a fixed script (periods and busy times below), and the arithmetic runs
//! on the logical tick clock, so the log is the same on every run; SysTick only paces it.
#![no_std]
#![no_main]

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use defmt_semihosting as _;
use schedmath::capacity::{cpu_util_cfs, CfsRqUtil, CpuUtilRq};
use schedmath::cpufreq::{set_freq_table_sorted, CpufreqFrequencyTable, CpufreqPolicy, FreqTable};
use schedmath::cpuidle::{
    cpuidle_enter_and_reflect, CpuidleDevice, CpuidleDriver, CpuidleState, Governor, IdleExit,
    SelectEnv,
};
use schedmath::pelt::response::NICE_0_LOAD;
use schedmath::pelt::{
    __update_load_avg_cfs_rq, __update_load_avg_se, PeltTables, SchedAvg, SchedEntityPelt,
};
use schedmath::schedutil::{
    sugov_start, sugov_update_single_freq, SugovCpu, SugovEnv, SugovPolicy, SugovRq,
};
use schedmath::util_est::{
    util_est_dequeue, util_est_enqueue, util_est_update, UtilEst, UtilEstCpu,
};
use schedmath::Profile;

/// The tick (HZ = 250).
const TICK_NS: u64 = 4_000_000;
/// Simulated run time.
const RUN_NS: u64 = 1_200_000_000;
/// mps2-an386 SYSCLK (25 MHz): SysTick reload for one tick.
const SYSTICK_RELOAD: u32 = 25_000_000 / 250 - 1;

/// One task of the script: runnable for `busy_ns` at the start of every `period_ns`,
/// first at `offset_ns`.
struct Task {
    name: &'static str,
    period_ns: u64,
    busy_ns: u64,
    offset_ns: u64,
    avg: SchedAvg,
    /// Was runnable during the last tick.
    queued: bool,
}

impl Task {
    const fn new(name: &'static str, period_ms: u64, busy_ms: u64, offset_ms: u64) -> Self {
        Task {
            name,
            period_ns: period_ms * 1_000_000,
            busy_ns: busy_ms * 1_000_000,
            offset_ns: offset_ms * 1_000_000,
            avg: SchedAvg {
                last_update_time: 0,
                load_sum: 0,
                runnable_sum: 0,
                util_sum: 0,
                period_contrib: 0,
                load_avg: 0,
                runnable_avg: 0,
                util_avg: 0,
                util_est: UtilEst::Mainline(0),
            },
            queued: false,
        }
    }

    /// Runnable during the tick starting at `t`.
    fn runnable_at(&self, t: u64) -> bool {
        t >= self.offset_ns && (t - self.offset_ns) % self.period_ns < self.busy_ns
    }

    /// The next start of a busy window at or after `t`.
    fn next_wakeup(&self, t: u64) -> u64 {
        if t <= self.offset_ns {
            return self.offset_ns;
        }
        let k = (t - self.offset_ns).div_ceil(self.period_ns);
        self.offset_ns + k * self.period_ns
    }
}

/// OPPs of the example MCU (kHz).
const OPPS_KHZ: [u32; 4] = [48_000, 96_000, 144_000, 192_000];

fn policy() -> SugovPolicy {
    let mut table = FreqTable::new();
    for f in OPPS_KHZ {
        let _ = table.push(CpufreqFrequencyTable {
            flags: 0,
            frequency: f,
        });
    }
    let mut policy = CpufreqPolicy {
        freq_table: Some(table),
        min: OPPS_KHZ[0],
        max: OPPS_KHZ[3],
        cur: OPPS_KHZ[0],
        cpuinfo_min_freq: OPPS_KHZ[0],
        cpuinfo_max_freq: OPPS_KHZ[3],
        fast_switch_enabled: true,
        ..CpufreqPolicy::default()
    };
    let _ = set_freq_table_sorted(&mut policy);
    SugovPolicy {
        policy,
        ..SugovPolicy::default()
    }
}

/// WFI, a clock-gated sleep and a power-down state.
fn idle_driver() -> Option<CpuidleDriver> {
    let s = |lat_us: i64, res_us: i64| CpuidleState {
        exit_latency_ns: lat_us * 1000,
        target_residency_ns: res_us * 1000,
        flags: 0,
    };
    CpuidleDriver::new(&[s(1, 1), s(50, 200), s(800, 6000)])
}

/// Paces the loop: waits for the next SysTick wrap (bounded, so a missing timer cannot
/// hang the run; the log does not depend on it).
fn wait_tick(syst: &mut cortex_m::peripheral::SYST) {
    for _ in 0..2_000_000 {
        if syst.has_wrapped() {
            return;
        }
    }
}

#[entry]
fn main() -> ! {
    let Some(mut cp) = cortex_m::Peripherals::take() else {
        fail()
    };
    cp.SYST.set_clock_source(SystClkSource::Core);
    cp.SYST.set_reload(SYSTICK_RELOAD);
    cp.SYST.clear_current();
    cp.SYST.enable_counter();

    let profile = Profile::default();
    let t = PeltTables::of(profile.halflife);
    let mut tasks = [
        Task::new("ui", 16, 4, 0),
        Task::new("sensor", 100, 4, 12),
        Task::new("burst", 500, 180, 200),
    ];
    let mut cfs = SchedAvg {
        util_est: UtilEst::Mainline(0),
        ..SchedAvg::default()
    };
    let mut sg_policy = policy();
    let mut sg_cpu = [SugovCpu::default()];
    sugov_start(&mut sg_policy, 1000, &mut sg_cpu);
    let env = SugovEnv::default();
    let Some(drv) = idle_driver() else { fail() };
    let mut dev = CpuidleDevice::default();
    let mut gov = Governor::enable(profile.idle_governor, 1024);
    let ue_cpu = UtilEstCpu::default();

    defmt::info!(
        "start hz=250 tasks={=usize} opps={=usize} idle_states={=usize}",
        tasks.len(),
        OPPS_KHZ.len(),
        drv.state_count()
    );
    let mut now = TICK_NS;
    let mut running: Option<usize> = None; // the task that ran during the last tick
    let (mut ticks, mut freq_changes, mut idle_entries) = (0u32, 0u32, 0u32);
    let mut rr = 0usize;
    while now < RUN_NS {
        wait_tick(&mut cp.SYST);
        ticks += 1;
        // Bring every task's and the runqueue's signals up to the tick (what happened
        // during the last tick: queued or not, running or not).
        let mut nr_queued = 0u32;
        for (i, task) in tasks.iter_mut().enumerate() {
            let se = SchedEntityPelt {
                load_weight: NICE_0_LOAD,
                on_rq: task.queued,
                is_curr: running == Some(i),
                ..SchedEntityPelt::default()
            };
            __update_load_avg_se(now, &mut task.avg, &se, t);
            nr_queued += u32::from(task.queued);
        }
        __update_load_avg_cfs_rq(
            now,
            &mut cfs,
            u64::from(nr_queued) * NICE_0_LOAD,
            nr_queued,
            running.is_some(),
            t,
        );
        // Wake-ups and sleeps for the next tick: util_est follows the runqueue.
        for task in tasks.iter_mut() {
            let queued = task.runnable_at(now);
            if queued && !task.queued {
                util_est_enqueue(&mut cfs, &task.avg);
            } else if !queued && task.queued {
                util_est_dequeue(&mut cfs, &task.avg);
                util_est_update(&mut task.avg, true, &ue_cpu);
                defmt::info!(
                    "sleep t={=u64}ms task={=str} util={=u64} util_est={=u32}",
                    now / 1_000_000,
                    task.name,
                    task.avg.util_avg,
                    task.avg.util_est.enqueued() & 0x7fff_ffff
                );
            }
            task.queued = queued;
        }
        // Round robin among the runnable tasks, one tick each.
        running = (0..tasks.len())
            .map(|k| (rr + k) % tasks.len())
            .find(|&i| tasks[i].queued);
        if let Some(i) = running {
            rr = i + 1;
        }

        // schedutil: the CPU's utilization picks the OPP.
        let util = cpu_util_cfs(&CpuUtilRq {
            cpu: 0,
            capacity_orig: 1024,
            cfs: CfsRqUtil {
                util_avg: cfs.util_avg,
                runnable_avg: cfs.runnable_avg,
                util_est: cfs.util_est.enqueued(),
            },
            util_est_feat: true,
        });
        let rq = SugovRq {
            capacity: 1024,
            util_cfs: util,
            util_cfs_boost: util,
            uclamp_max: 1024,
            idle_calls: u64::from(idle_entries),
            ..SugovRq::default()
        };
        let before = sg_policy.policy.cur;
        let _ =
            sugov_update_single_freq(&mut sg_policy, &mut sg_cpu[0], &rq, &env, &profile, now, 0);
        if sg_policy.policy.cur != before {
            freq_changes += 1;
            defmt::info!(
                "opp t={=u64}ms util={=u64} freq={=u32}kHz",
                now / 1_000_000,
                util,
                sg_policy.policy.cur
            );
        }

        // Nothing to run: teo picks the idle state; with the tick stopped the CPU sleeps
        // until the next wake-up (whole ticks), else until the next tick.
        if running.is_none() {
            let wake = tasks
                .iter()
                .map(|task| task.next_wakeup(now))
                .min()
                .unwrap_or(now + TICK_NS);
            let sleep = wake.saturating_sub(now).max(TICK_NS);
            let env = SelectEnv {
                tick_nsec: TICK_NS as i64,
                latency_req_ns: i64::MAX,
                tick_stopped: false,
                sleep_length_ns: sleep as i64,
                delta_tick_ns: TICK_NS as i64,
                now_ns: now,
                cpu_util: util,
            };
            let sel = gov.select(&drv, &mut dev, &env);
            let slept = if sel.stop_tick { sleep } else { TICK_NS };
            let exit = IdleExit {
                last_residency_ns: slept as i64,
                poll_time_limit: false,
                got_tick: !sel.stop_tick && sleep > TICK_NS,
                reflect_now_ns: now + slept,
            };
            // Enter: the entry statistics and teo's reflect.
            let miss =
                cpuidle_enter_and_reflect(&drv, &mut dev, &mut gov, sel.idx, env.tick_nsec, &exit);
            idle_entries += 1;
            defmt::info!(
                "idle t={=u64}ms state={=usize} stop_tick={=bool} slept={=u64}us above={=bool} below={=bool}",
                now / 1_000_000,
                sel.idx,
                sel.stop_tick,
                slept / 1000,
                miss.above,
                miss.below
            );
            now += slept.div_ceil(TICK_NS) * TICK_NS - TICK_NS;
        }
        now += TICK_NS;
    }
    for task in &tasks {
        defmt::info!(
            "task {=str} util={=u64} runnable={=u64} util_est={=u32}",
            task.name,
            task.avg.util_avg,
            task.avg.runnable_avg,
            task.avg.util_est.enqueued() & 0x7fff_ffff
        );
    }
    defmt::info!(
        "done ticks={=u32} opp_changes={=u32} idle_entries={=u32} cpu_util={=u64}",
        ticks,
        freq_changes,
        idle_entries,
        cfs.util_avg
    );
    debug::exit(debug::EXIT_SUCCESS);
    #[allow(clippy::empty_loop)]
    loop {}
}

fn fail() -> ! {
    defmt::error!("fatal");
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    fail()
}
