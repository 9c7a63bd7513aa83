// SPDX-License-Identifier: GPL-2.0-only
//! The core's hot paths on fixed op sequences, two ways (`cargo xtask bench` runs both):
//!
//! * `hot_paths --callgrind PATH N`: runs the first `N` ops of one path and prints their
//!   checksum. Under `valgrind --tool=callgrind --toggle-collect='*bench_op_PATH*'` only
//!   the instructions inside the path's `bench_op_*` function are counted: op generation
//!   and setup run outside it, so instructions / N is the cost of one op (call included).
//! * anything else: criterion (its usual arguments, e.g. the filter `^hot_paths/pelt_se$`),
//!   one benchmark per path, one iteration = one op (replayed
//!   in blocks of [`BLOCK`] from a fresh state), so criterion's `time` is ns per op.
//!
//! Every sequence is deterministic (xorshift64, fixed seeds); the checksums printed in
//! callgrind mode prove the ops ran. A new path (the fair class arithmetic, for one) is
//! one more `bench_op_*` function, one more `match` arm in [`prepare`], and one more name
//! in [`PATHS`]; `cargo xtask bench` picks it up from there (its baseline then needs the
//! new count, `cargo xtask bench --write-baseline`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use schedmath::capacity::{effective_cpu_util, util_fits_cpu, CpuCapacity, EffectiveUtilInput};
use schedmath::cpufreq::{set_freq_table_sorted, CpufreqFrequencyTable, CpufreqPolicy, FreqTable};
use schedmath::cpuidle::menu::{self, MenuDevice};
use schedmath::cpuidle::teo::{self, TeoCpu};
use schedmath::cpuidle::{CpuidleDevice, CpuidleDriver, CpuidleState, ReflectEnv, SelectEnv};
use schedmath::energy::{EmPerfDomain, EmPerfState};
use schedmath::pelt::bench_support::UpdateOps;
use schedmath::pelt::response::NICE_0_LOAD;
use schedmath::pelt::{
    __update_load_avg_cfs_rq, __update_load_avg_se, PeltTables, SchedAvg, SchedEntityPelt,
};
use schedmath::profile::IdleGovernor;
use schedmath::schedutil::{get_next_freq, sugov_effective_cpu_perf, SugovEnv, SugovPolicy};
use schedmath::util_est::{util_est_update, UtilEst, UtilEstCpu};

/// The paths, in table order (`cargo xtask bench` reads this list from `--list`).
const PATHS: &[&str] = &[
    "pelt_se",
    "pelt_cfs_rq",
    "util_est_update",
    "schedutil_freq",
    "util_fits_cpu",
    "em_cpu_energy",
    "teo_select_reflect",
    "menu_select_reflect",
    // "fair_...": the fair class arithmetic goes here when it lands.
];

/// Ops per replayed block in criterion mode.
const BLOCK: usize = 10_000;

/// xorshift64, the generator of every sequence here.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `lo..hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
}

// ---- PELT: the pelt_update sequence (schedmath::pelt::bench_support) ----

/// One update, as the kernel harness calls `__update_load_avg_se(now, cfs_rq, se)` with
/// the entity prepared by the caller (`bench_support::apply` builds the same one per op).
#[inline(never)]
fn bench_op_pelt_se(sa: &mut SchedAvg, now: u64, se: &SchedEntityPelt) -> i32 {
    __update_load_avg_se(now, sa, se, &PeltTables::HL32)
}

/// The cfs_rq of that same task alone: load and `h_nr_runnable` while it runs, empty
/// while it sleeps.
#[inline(never)]
fn bench_op_pelt_cfs_rq(sa: &mut SchedAvg, now: u64, se: &SchedEntityPelt) -> i32 {
    let running = se.is_curr;
    let weight = if running { se.load_weight } else { 0 };
    __update_load_avg_cfs_rq(
        now,
        sa,
        weight,
        u32::from(running),
        running,
        &PeltTables::HL32,
    )
}

fn pelt(n: usize, op: fn(&mut SchedAvg, u64, &SchedEntityPelt) -> i32) -> Runner {
    let ops: Vec<(u64, bool)> = UpdateOps::new().take(n).collect();
    // bench_support::apply's entity: nice 0, on_rq, current while running.
    let se = |is_curr| SchedEntityPelt {
        load_weight: NICE_0_LOAD,
        on_rq: true,
        is_curr,
        ..SchedEntityPelt::default()
    };
    let ses = [se(false), se(true)];
    Box::new(move || {
        let mut sa = SchedAvg::default();
        let mut sum = 0u64;
        for &(now, running) in black_box(&ops) {
            let r = op(&mut sa, now, &ses[usize::from(running)]);
            sum = sum.wrapping_add(r as u64).wrapping_add(sa.util_avg);
        }
        sum
    })
}

// ---- util_est_update (mainline): a task's util_avg at each dequeue-for-sleep ----

#[inline(never)]
fn bench_op_util_est_update(p: &mut SchedAvg, cpu: &UtilEstCpu) {
    util_est_update(p, true, cpu);
}

fn util_est(n: usize) -> Runner {
    let mut rng = Rng(0x5eed_0001);
    let ops: Vec<(u64, u64)> = (0..n)
        .map(|_| {
            let util = rng.range(0, 1025);
            (util, util + rng.range(0, 40))
        })
        .collect();
    Box::new(move || {
        let cpu = UtilEstCpu::default();
        let mut p = SchedAvg {
            util_est: UtilEst::new(schedmath::profile::UtilEstVersion::Mainline),
            ..SchedAvg::default()
        };
        let mut sum = 0u64;
        for &(util, runnable) in black_box(&ops) {
            p.util_avg = util;
            p.runnable_avg = runnable;
            p.util_est.clear_unchanged_flag(); // util_avg changed since the last dequeue
            bench_op_util_est_update(&mut p, &cpu);
            sum = sum.wrapping_add(u64::from(p.util_est.enqueued()));
        }
        sum
    })
}

// ---- schedutil: effective_cpu_util + sugov_effective_cpu_perf + get_next_freq (which
// resolves through cpufreq_driver_resolve_freq) on an 8-OPP ascending table ----

#[inline(never)]
fn bench_op_schedutil_freq(
    sg: &mut SugovPolicy,
    env: &SugovEnv,
    input: &EffectiveUtilInput,
) -> Option<u32> {
    let eff = effective_cpu_util(input);
    let util = sugov_effective_cpu_perf(eff.ret, eff.min, eff.max);
    get_next_freq(sg, env, util, input.capacity)
}

fn schedutil_policy() -> SugovPolicy {
    let mut table = FreqTable::new();
    for f in [
        400_000, 600_000, 800_000, 1_000_000, 1_200_000, 1_500_000, 1_800_000, 2_000_000,
    ] {
        let _ = table.push(CpufreqFrequencyTable {
            flags: 0,
            frequency: f,
        });
    }
    let mut policy = CpufreqPolicy {
        freq_table: Some(table),
        min: 400_000,
        max: 2_000_000,
        cur: 400_000,
        cpuinfo_min_freq: 400_000,
        cpuinfo_max_freq: 2_000_000,
        fast_switch_enabled: true,
        ..CpufreqPolicy::default()
    };
    assert_eq!(set_freq_table_sorted(&mut policy), 0);
    SugovPolicy {
        policy,
        ..SugovPolicy::default()
    }
}

fn schedutil(n: usize) -> Runner {
    let mut rng = Rng(0x5eed_0002);
    let ops: Vec<EffectiveUtilInput> = (0..n)
        .map(|_| EffectiveUtilInput {
            capacity: 1024,
            util_cfs: rng.range(0, 1024),
            util_rt: rng.range(0, 64),
            util_dl: 0,
            util_irq: rng.range(0, 16),
            bw_dl: 0,
            rt_runnable: false,
            uclamp_used: false,
            uclamp_min: 0,
            uclamp_max: 1024,
            ..Default::default()
        })
        .collect();
    Box::new(move || {
        let mut sg = schedutil_policy();
        let env = SugovEnv::default();
        let mut sum = 0u64;
        for input in black_box(&ops) {
            let f = bench_op_schedutil_freq(&mut sg, &env, input);
            sum = sum.wrapping_add(u64::from(f.unwrap_or(0)));
        }
        sum
    })
}

// ---- util_fits_cpu with uclamp in use, on little / mid / big CPUs ----

#[inline(never)]
fn bench_op_util_fits_cpu(util: u64, uclamp_min: u64, uclamp_max: u64, cpu: &CpuCapacity) -> i32 {
    util_fits_cpu(util, uclamp_min, uclamp_max, true, cpu)
}

fn fits(n: usize) -> Runner {
    let cpus = [
        CpuCapacity {
            capacity_orig: 160,
            cpu_capacity: 150,
            hw_load_avg: 0,
            cpufreq_pressure: 0,
        },
        CpuCapacity {
            capacity_orig: 512,
            cpu_capacity: 490,
            hw_load_avg: 20,
            cpufreq_pressure: 0,
        },
        CpuCapacity {
            capacity_orig: 1024,
            cpu_capacity: 1000,
            hw_load_avg: 0,
            cpufreq_pressure: 100,
        },
    ];
    let mut rng = Rng(0x5eed_0003);
    let ops: Vec<(u64, u64, u64, usize)> = (0..n)
        .map(|_| {
            let umax = if rng.next() & 1 == 0 {
                1024
            } else {
                rng.range(0, 1025)
            };
            (
                rng.range(0, 1025),
                rng.range(0, 1025),
                umax,
                (rng.next() % 3) as usize,
            )
        })
        .collect();
    Box::new(move || {
        let mut sum = 0u64;
        for &(util, umin, umax, c) in black_box(&ops) {
            let r = bench_op_util_fits_cpu(util, umin, umax, &cpus[c]);
            sum = sum.wrapping_add(r as u64);
        }
        sum
    })
}

// ---- em_cpu_energy on an 8-state performance domain ----

#[inline(never)]
fn bench_op_em_cpu_energy(pd: &EmPerfDomain, max_util: u64, sum_util: u64) -> u64 {
    schedmath::energy::em_cpu_energy(pd, max_util, sum_util, 1024).energy
}

fn em(n: usize) -> Runner {
    let mut pd = EmPerfDomain {
        max_perf_state: 7,
        ..EmPerfDomain::default()
    };
    for (i, (perf, power)) in [
        (200, 30_000),
        (300, 55_000),
        (410, 90_000),
        (520, 140_000),
        (640, 210_000),
        (770, 310_000),
        (900, 450_000),
        (1024, 640_000),
    ]
    .into_iter()
    .enumerate()
    {
        let _ = pd.table.push(EmPerfState {
            performance: perf,
            frequency: 500_000 + 200_000 * i as u64,
            power,
            cost: 10 * power / perf,
            flags: 0,
        });
    }
    let mut rng = Rng(0x5eed_0004);
    let ops: Vec<(u64, u64)> = (0..n)
        .map(|_| {
            let max = rng.range(0, 1100);
            (max, max + rng.range(0, 2048))
        })
        .collect();
    Box::new(move || {
        let mut sum = 0u64;
        for &(max, s) in black_box(&ops) {
            sum = sum.wrapping_add(bench_op_em_cpu_energy(&pd, max, s));
        }
        sum
    })
}

// ---- cpuidle: select + reflect on a 3-state table (WFI, retention, power-down) ----

#[inline(never)]
fn bench_op_teo_select_reflect(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    cpu: &mut TeoCpu,
    env: &SelectEnv,
    renv: &ReflectEnv,
) -> usize {
    let v = IdleGovernor::TeoMainline;
    let sel = teo::teo_select(drv, dev, cpu, v, env);
    teo::teo_reflect(dev, cpu, v, sel.idx, renv);
    sel.idx
}

#[inline(never)]
fn bench_op_menu_select_reflect(
    drv: &CpuidleDriver,
    dev: &mut CpuidleDevice,
    data: &mut MenuDevice,
    env: &SelectEnv,
    renv: &ReflectEnv,
) -> usize {
    let sel = menu::menu_select(drv, dev, data, env);
    menu::menu_reflect(dev, data, sel.idx, renv);
    sel.idx
}

type IdleOp<G> = fn(&CpuidleDriver, &mut CpuidleDevice, &mut G, &SelectEnv, &ReflectEnv) -> usize;

fn idle<G: 'static>(n: usize, init: fn() -> G, op: IdleOp<G>) -> Runner {
    let drv = CpuidleDriver::new(&[
        CpuidleState {
            exit_latency_ns: 1_000,
            target_residency_ns: 1_000,
            flags: 0,
        },
        CpuidleState {
            exit_latency_ns: 100_000,
            target_residency_ns: 500_000,
            flags: 0,
        },
        CpuidleState {
            exit_latency_ns: 1_000_000,
            target_residency_ns: 5_000_000,
            flags: 0,
        },
    ])
    .expect("3 states fit");
    let mut rng = Rng(0x5eed_0005);
    let mut now = 1_000_000_000u64;
    // (select env, measured residency, reflect env)
    let ops: Vec<(SelectEnv, i64, ReflectEnv)> = (0..n)
        .map(|_| {
            let sleep = rng.range(10_000, 20_000_000) as i64;
            // Mostly woken by the timer, sometimes early (an interrupt).
            let residency = if rng.next() & 3 == 0 {
                rng.range(1_000, sleep as u64) as i64
            } else {
                sleep
            };
            let env = SelectEnv {
                tick_nsec: 4_000_000,
                latency_req_ns: i64::MAX,
                tick_stopped: false,
                sleep_length_ns: sleep,
                delta_tick_ns: sleep.min(4_000_000),
                now_ns: now,
                cpu_util: 0,
            };
            now += residency as u64;
            let renv = ReflectEnv {
                tick_nsec: 4_000_000,
                got_tick: residency >= 4_000_000 && sleep > 4_000_000,
                now_ns: now,
            };
            now += rng.range(1_000, 100_000);
            (env, residency, renv)
        })
        .collect();
    Box::new(move || {
        let mut dev = CpuidleDevice::default();
        let mut gov = init();
        let mut sum = 0u64;
        for (env, residency, renv) in black_box(&ops) {
            let idx = op(&drv, &mut dev, &mut gov, env, renv);
            dev.last_residency_ns = *residency;
            sum = sum.wrapping_add(idx as u64);
        }
        sum
    })
}

/// Runs a path's pre-generated ops from a fresh state; returns their checksum.
type Runner = Box<dyn Fn() -> u64>;

/// The first `n` ops of `path`, generated, ready to run (`None`: unknown path).
fn prepare(path: &str, n: usize) -> Option<Runner> {
    Some(match path {
        "pelt_se" => pelt(n, bench_op_pelt_se),
        "pelt_cfs_rq" => pelt(n, bench_op_pelt_cfs_rq),
        "util_est_update" => util_est(n),
        "schedutil_freq" => schedutil(n),
        "util_fits_cpu" => fits(n),
        "em_cpu_energy" => em(n),
        "teo_select_reflect" => idle(
            n,
            || teo::teo_enable_device(IdleGovernor::TeoMainline, 1024),
            bench_op_teo_select_reflect,
        ),
        "menu_select_reflect" => idle(n, menu::menu_enable_device, bench_op_menu_select_reflect),
        _ => return None,
    })
}

fn criterion_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("hot_paths");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for &path in PATHS {
        let Some(run) = prepare(path, BLOCK) else {
            continue;
        };
        group.bench_function(path, |b| {
            b.iter_custom(|iters| {
                // Whole blocks of pre-generated ops, each from a fresh state.
                let blocks = iters.div_ceil(BLOCK as u64).max(1);
                let start = Instant::now();
                for _ in 0..blocks {
                    black_box(run());
                }
                start
                    .elapsed()
                    .mul_f64(iters as f64 / (blocks * BLOCK as u64) as f64)
            })
        });
    }
    group.finish();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        for p in PATHS {
            println!("{p}");
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--callgrind") {
        let path = args.get(i + 1).map(String::as_str).unwrap_or("");
        let n: usize = args.get(i + 2).and_then(|s| s.parse().ok()).unwrap_or(0);
        match prepare(path, n).map(|run| run()) {
            Some(sum) => println!("{path} {n} ops checksum {sum}"),
            None => {
                eprintln!("unknown path `{path}` (known: {})", PATHS.join(", "));
                std::process::exit(2);
            }
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
}
