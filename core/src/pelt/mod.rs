// SPDX-License-Identifier: GPL-2.0-only
//! Per-entity load tracking (PELT) — kernel/sched/pelt.c and kernel/sched/pelt.h.
//!
//! Each signal is a geometric series in integers: time is cut into 1024 ns units and
//! 1024-unit periods; at every period boundary the old sums decay by `y`
//! (`y^LOAD_AVG_PERIOD = 1/2`, see [`tables`]) and the new period's share is added:
//!
//! ```text
//! sum' = sum * y^p  +  d1 * y^p  +  1024 * (y + ... + y^(p-1))  +  d3
//! ```
//!
//! where `d1` completes the last period, `p - 1` periods were full and `d3` is the part of
//! the current one. `load_sum`/`runnable_sum` are u64, `util_sum` is a u32 (it wraps where the
//! kernel's does), and the averages are the sums over `LOAD_AVG_MAX - 1024 + period_contrib`.
//! Everything keeps the kernel's widths and truncation order, because the fixtures compare
//! bits; the entity-specific entry points take what the kernel reads from the sched_entity,
//! cfs_rq or rq as explicit arguments.

pub mod bench_support;
pub mod clock;
pub mod propagate;
pub mod response;
pub mod tables;

pub use tables::{sched_pelt_generator, GeneratedTables, PeltTables};

use crate::math::{cap_scale, div_u64, mul_u64_u32_shr, scale_load_down, SCHED_CAPACITY_SHIFT};
use crate::util_est::UtilEst;

/// `struct sched_avg` (include/linux/sched.h): one PELT signal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SchedAvg {
    /// `last_update_time` (ns, PELT clock): advanced in whole 1024 ns units.
    pub last_update_time: u64,
    /// `load_sum`: decayed sum of `load * contrib` (u64).
    pub load_sum: u64,
    /// `runnable_sum`: decayed sum of `(runnable * contrib) << 10` (u64).
    pub runnable_sum: u64,
    /// `util_sum`: decayed sum of `contrib << 10` while running (u32, wraps).
    pub util_sum: u32,
    /// `period_contrib`: the elapsed part of the current period, in 1024 ns units (0..1023).
    pub period_contrib: u32,
    /// `load_avg`: `load * load_sum / divider` (unsigned long).
    pub load_avg: u64,
    /// `runnable_avg`: `runnable_sum / divider` (unsigned long).
    pub runnable_avg: u64,
    /// `util_avg`: `util_sum / divider` (unsigned long).
    pub util_avg: u64,
    /// `util_est`: estimated utilization, in the layout of the chosen kernel version.
    pub util_est: UtilEst,
}

/// `decay_load()`: `val * y^n`, truncated as the kernel does.
///
/// Returns 0 when `n > 63 * LOAD_AVG_PERIOD` — tested on the full u64 `n`, *before* it is
/// narrowed to 32 bits (so `n = 2^32` gives 0, not `val * y^0`). Otherwise `val` is shifted
/// right by `n / PERIOD` and multiplied by the table entry for `n % PERIOD` with a 96-bit
/// product. Trap: `y^0` is stored as `0xffffffff`, so `decay_load(1024, 0)` is 1023.
#[inline(always)]
pub fn decay_load(val: u64, n: u64, t: &PeltTables) -> u64 {
    if n > t.decay_load_zero_threshold_periods() {
        return 0;
    }
    let local_n = n as u32; // the kernel collapses n to 32 bits after the bound check
                            // The kernel shifts and reduces only when local_n >= LOAD_AVG_PERIOD; below it the
                            // shift is by 0 and the index is local_n itself, so doing both always is the same
                            // value without the branch. local_n <= 63 * PERIOD, so the shift count is <= 63.
    let val = val.wrapping_shr(t.periods_div(local_n));
    mul_u64_u32_shr(val, t.yn_inv_mod(local_n), 32)
}

/// Runs `$body` (written once, expanded into both arms) with `$t` bound to
/// `&PeltTables::HL32` when `$t` is mainline's table, else with `$t` itself. The hot
/// entry points thus run their body with a compile-time constant table, as the kernel's
/// `LOAD_AVG_PERIOD`, `LOAD_AVG_MAX` and table address are; other halflives run the same
/// body with `t`. The period identifies the table (only the three kernel tables exist as
/// values), so the result is the same either way.
macro_rules! with_const_hl32 {
    ($t:ident => $body:expr) => {
        if $t.load_avg_period() == PeltTables::HL32.load_avg_period() {
            let $t = &PeltTables::HL32;
            $body
        } else {
            $body
        }
    };
}

/// `__accumulate_pelt_segments()`: the contribution of a span that crossed `periods`
/// boundaries: `d1 * y^p + 1024 * (y + ... + y^(p-1)) + d3`.
///
/// The middle part is `LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, p) - 1024`. Trap: every part
/// and the sum are `u32` (a large `d1`/`d3` wraps the result).
#[inline(always)] // inlined in the kernel too (__always_inline / static)
pub fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32, t: &PeltTables) -> u32 {
    let max = t.load_avg_max();
    let c1 = decay_load(u64::from(d1), periods, t) as u32; // u32 c1, as in the kernel
    let c2 = max
        .wrapping_sub(decay_load(u64::from(max), periods, t) as u32) // u32 c2
        .wrapping_sub(1024);
    c1.wrapping_add(c2).wrapping_add(d3)
}

/// `accumulate_sum()`: decays the sums over the periods crossed by `delta` (1024 ns units)
/// and adds the new contribution; returns the period count narrowed to `u32`.
///
/// Traps: the contribution stays the raw `delta` unless a period was crossed *and* `load`
/// is non-zero (only then is `accumulate_pelt_segments` called); `util_sum` is decayed
/// through a u64 call and stored back as u32, and `contrib << 10` is added with u32 wrap;
/// `runnable_sum` adds `(runnable * contrib) << 10` in u64; `running` is only tested for
/// being non-zero. The return value is `(u32)periods`: exactly k·2^32 periods return 0.
#[inline(always)] // inlined in the kernel too (__always_inline / static)
pub fn accumulate_sum(
    delta: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: i32,
    t: &PeltTables,
) -> u32 {
    let mut contrib = delta as u32; // p == 0 -> delta < 1024
    let mut delta = delta.wrapping_add(u64::from(sa.period_contrib));
    let periods = delta / 1024;

    if periods != 0 {
        sa.load_sum = decay_load(sa.load_sum, periods, t);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods, t);
        // decayed through the u64 function, stored back into the u32 field
        sa.util_sum = decay_load(u64::from(sa.util_sum), periods, t) as u32;

        delta %= 1024;
        if load != 0 {
            // 1024 - period_contrib is u32 arithmetic (period_contrib <= 1023 in domain).
            let d1 = 1024u32.wrapping_sub(sa.period_contrib);
            // delta < 1024 here: d3 fits the u32 parameter
            contrib = accumulate_pelt_segments(periods, d1, delta as u32, t);
        }
    }
    sa.period_contrib = delta as u32; // < 1024 after a crossing, else the grown remainder

    if load != 0 {
        sa.load_sum = sa
            .load_sum
            .wrapping_add(load.wrapping_mul(u64::from(contrib)));
    }
    if runnable != 0 {
        let add = runnable.wrapping_mul(u64::from(contrib)) << SCHED_CAPACITY_SHIFT;
        sa.runnable_sum = sa.runnable_sum.wrapping_add(add);
    }
    if running != 0 {
        sa.util_sum = sa.util_sum.wrapping_add(contrib << SCHED_CAPACITY_SHIFT);
    }

    periods as u32 // the kernel returns u32
}

/// `___update_load_sum()`: brings the sums of `sa` up to `now`; returns 1 when a period
/// boundary was crossed (the averages must then be recomputed), else 0.
///
/// Works in 1024 ns units: `last_update_time` advances by `(delta >> 10) << 10`, not to
/// `now`. Traps: when time goes backwards (`(s64)(now - lut) < 0`) `last_update_time` is set
/// to `now` exactly (unaligned) and 0 is returned; a zero `load` forces `runnable` and
/// `running` to 0; a gap of exactly k·2^32 periods decays and refills the sums but returns 0
/// (see [`accumulate_sum`]).
#[inline(always)] // inlined in the kernel too (__always_inline / static)
pub fn update_load_sum(
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: i32,
    t: &PeltTables,
) -> i32 {
    let delta = now.wrapping_sub(sa.last_update_time);
    if (delta as i64) < 0 {
        // (s64)delta < 0: time went backwards (it does while sched clock initialises)
        sa.last_update_time = now;
        return 0;
    }
    let delta = delta >> 10;
    if delta == 0 {
        return 0;
    }
    sa.last_update_time = sa.last_update_time.wrapping_add(delta << 10);

    let (runnable, running) = if load == 0 {
        (0, 0)
    } else {
        (runnable, running)
    };

    if accumulate_sum(delta, sa, load, runnable, running, t) == 0 {
        return 0;
    }
    1
}

/// `get_pelt_divider()` (kernel/sched/pelt.h): `PELT_MIN_DIVIDER + period_contrib` (u32).
#[inline(always)] // inlined in the kernel too (__always_inline / static)
pub fn get_pelt_divider(sa: &SchedAvg, t: &PeltTables) -> u32 {
    t.pelt_min_divider().wrapping_add(sa.period_contrib)
}

/// `___update_load_avg()`: recomputes the averages from the sums.
///
/// `load_avg = load * load_sum / divider` (u64 product, wraps), `runnable_avg =
/// runnable_sum / divider`, `util_avg = util_sum / divider` (u32 division), where the
/// divider uses `period_contrib` *after* the sum update. `load` is `se_weight()` for an
/// entity and 1 for a runqueue signal. A zero divider (only from a `period_contrib` near
/// 2^32 that no update leaves behind; the kernel would fault) leaves the averages as
/// they are.
#[inline(always)] // inlined in the kernel too (__always_inline / static)
pub fn sync_load_avg(sa: &mut SchedAvg, load: u64, t: &PeltTables) {
    let divider = get_pelt_divider(sa, t);
    if let Some(avg) = div_u64(load.wrapping_mul(sa.load_sum), divider) {
        sa.load_avg = avg;
    }
    if let Some(avg) = div_u64(sa.runnable_sum, divider) {
        sa.runnable_avg = avg;
    }
    if let Some(avg) = sa.util_sum.checked_div(divider) {
        sa.util_avg = u64::from(avg);
    }
}

/// What `__update_load_avg_se()` reads from the sched_entity and its cfs_rq.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SchedEntityPelt {
    /// `se->load.weight` in the kernel's scaled (64-bit, `<< 10`) units.
    pub load_weight: u64,
    /// `se->on_rq != 0`.
    pub on_rq: bool,
    /// `cfs_rq->curr == se`.
    pub is_curr: bool,
    /// `se->sched_delayed` (EEVDF delayed dequeue, v6.12+).
    pub sched_delayed: bool,
    /// `None` for a task (`entity_is_task`); `Some(se->runnable_weight)` for a group entity
    /// (its group cfs_rq's runnable task count).
    pub group_runnable_weight: Option<u64>,
}

/// `se_weight()` (kernel/sched/sched.h): `scale_load_down(se->load.weight)`, at least 2 when
/// non-zero.
#[inline]
pub fn se_weight(se: &SchedEntityPelt) -> u64 {
    scale_load_down(se.load_weight)
}

/// `se_runnable()` (kernel/sched/sched.h): 0 for a delayed-dequeue entity, else `!!on_rq`
/// for a task and `runnable_weight` for a group entity.
#[inline]
pub fn se_runnable(se: &SchedEntityPelt) -> u64 {
    if se.sched_delayed {
        return 0;
    }
    match se.group_runnable_weight {
        None => u64::from(se.on_rq),
        Some(w) => w,
    }
}

/// `cfs_se_util_change()` (kernel/sched/pelt.h): the entity's util_avg changed, so clear
/// `UTIL_AVG_UNCHANGED` in its util_est (UTIL_EST feature on).
#[inline]
pub fn cfs_se_util_change(avg: &mut SchedAvg) {
    avg.util_est.clear_unchanged_flag();
}

/// `__update_load_avg_blocked_se()`: decays a sched_entity that is not on a runqueue
/// (load, runnable and running all 0); returns 1 when the averages were recomputed.
///
/// Unlike `__update_load_avg_se`, it does not touch util_est.
pub fn __update_load_avg_blocked_se(
    now: u64,
    sa: &mut SchedAvg,
    load_weight: u64,
    t: &PeltTables,
) -> i32 {
    if update_load_sum(now, sa, 0, 0, 0, t) != 0 {
        sync_load_avg(sa, scale_load_down(load_weight), t);
        return 1;
    }
    0
}

/// `__update_load_avg_se()`: updates a sched_entity's signal with
/// `load = !!on_rq`, `runnable = se_runnable()`, `running = (cfs_rq->curr == se)`; when a
/// period was crossed recomputes the averages with `se_weight()` and clears the util_est
/// flag. Returns 1 in that case, else 0.
pub fn __update_load_avg_se(
    now: u64,
    sa: &mut SchedAvg,
    se: &SchedEntityPelt,
    t: &PeltTables,
) -> i32 {
    with_const_hl32!(t => {
        let load = u64::from(se.on_rq);
        if update_load_sum(now, sa, load, se_runnable(se), i32::from(se.is_curr), t) != 0 {
            sync_load_avg(sa, se_weight(se), t);
            cfs_se_util_change(sa);
            return 1;
        }
        0
    })
}

/// `__update_load_avg_cfs_rq()`: updates a cfs_rq's signal with
/// `load = scale_load_down(cfs_rq->load.weight)`, `runnable = h_nr_runnable` (6.1 passes
/// `h_nr_running`), `running = (cfs_rq->curr != NULL)`; averages use weight 1.
pub fn __update_load_avg_cfs_rq(
    now: u64,
    sa: &mut SchedAvg,
    load_weight: u64,
    h_nr_runnable: u32,
    has_curr: bool,
    t: &PeltTables,
) -> i32 {
    with_const_hl32!(t => {
        let load = scale_load_down(load_weight);
        let runnable = u64::from(h_nr_runnable);
        if update_load_sum(now, sa, load, runnable, i32::from(has_curr), t) != 0 {
            sync_load_avg(sa, 1, t);
            return 1;
        }
        0
    })
}

/// The shared body of the rt and dl runqueue signals: the `int running` is passed as load
/// and runnable (widened to `unsigned long`, sign-extending) and as running.
fn update_class_rq_load_avg(now: u64, sa: &mut SchedAvg, running: i32, t: &PeltTables) -> i32 {
    let as_ulong = i64::from(running) as u64; // int -> unsigned long sign-extends
    if update_load_sum(now, sa, as_ulong, as_ulong, running, t) != 0 {
        sync_load_avg(sa, 1, t);
        return 1;
    }
    0
}

/// `update_rt_rq_load_avg()`: the rq's RT signal (`rq->avg_rt`); `running` is 1 while an RT
/// task runs.
///
/// Trap: `running = 2` doubles the load/runnable contributions, but util_sum still adds
/// only `contrib << 10` (running is only tested for non-zero).
pub fn update_rt_rq_load_avg(now: u64, sa: &mut SchedAvg, running: i32, t: &PeltTables) -> i32 {
    update_class_rq_load_avg(now, sa, running, t)
}

/// `update_dl_rq_load_avg()`: the rq's deadline signal (`rq->avg_dl`); same arithmetic as
/// [`update_rt_rq_load_avg`].
pub fn update_dl_rq_load_avg(now: u64, sa: &mut SchedAvg, running: i32, t: &PeltTables) -> i32 {
    update_class_rq_load_avg(now, sa, running, t)
}

/// `update_hw_load_avg()`: the rq's hardware-pressure signal (`rq->avg_hw`), driven by
/// `rq_clock_task` and the capacity lost to the pressure.
///
/// Trap: `capacity` is the `unsigned long` load and runnable, but the `int` running: only
/// its low 32 bits are tested, so `1 << 32` adds nothing to util_sum while `0x80000000`
/// (negative as an int) does; load/runnable products wrap in u64.
pub fn update_hw_load_avg(now: u64, sa: &mut SchedAvg, capacity: u64, t: &PeltTables) -> i32 {
    let running = capacity as u32 as i32; // the kernel's `int running` parameter
    if update_load_sum(now, sa, capacity, capacity, running, t) != 0 {
        sync_load_avg(sa, 1, t);
        return 1;
    }
    0
}

/// `update_irq_load_avg()`: the rq's IRQ/steal signal (`rq->avg_irq`).
///
/// `running` (irq + steal ns since the last call) is scaled by `cap_scale` with the
/// frequency capacity first, then the CPU capacity, each step truncating — the reverse of
/// clock_pelt's order, and visible when `clock - running` lands on a 1024 ns boundary. The
/// sums decay (idle) up to `clock - running`, then accumulate (running) up to `clock`; the
/// averages are recomputed when either call returned 1, and the return value is the sum of
/// both (0, 1 or 2).
pub fn update_irq_load_avg(
    clock: u64,
    sa: &mut SchedAvg,
    running: u64,
    freq_capacity: u64,
    cpu_capacity: u64,
    t: &PeltTables,
) -> i32 {
    let running = cap_scale(running, freq_capacity);
    let running = cap_scale(running, cpu_capacity);

    let ret = update_load_sum(clock.wrapping_sub(running), sa, 0, 0, 0, t)
        + update_load_sum(clock, sa, 1, 1, 1, t);
    if ret != 0 {
        sync_load_avg(sa, 1, t);
    }
    ret
}

/// `init_entity_runnable_average()` (kernel/sched/fair.c) for a task: all sums and
/// averages zero except `load_avg = se_weight` (a new task starts as heavy as it is);
/// `util_est` is kept.
pub fn init_entity_runnable_average(sa: &mut SchedAvg, se_weight: u64) {
    *sa = SchedAvg {
        load_avg: se_weight,
        util_est: sa.util_est,
        ..SchedAvg::default()
    };
}

/// `post_init_entity_util_avg()` (kernel/sched/fair.c) for a fair task forked onto a CPU
/// of capacity `cpu_scale` whose cfs_rq is `cfs_rq`: the new task's `util_avg` is the
/// cfs_rq's utilization shared by weight, `util_avg * se_weight / (load_avg + 1)`, at most
/// half the CPU's spare capacity `cap = (cpu_scale - util_avg) / 2`; the whole `cap` when
/// the cfs_rq has no utilization; nothing when there is no spare capacity.
/// `runnable_avg` copies `util_avg`.
///
/// Trap: `cap` is a signed `long` division, so an over-full CPU gives a negative `cap`
/// (rounded toward zero) and leaves `util_avg` untouched.
pub fn post_init_entity_util_avg(
    sa: &mut SchedAvg,
    cfs_rq: &SchedAvg,
    cpu_scale: u64,
    se_weight: u64,
) {
    let cap = (cpu_scale as i64).wrapping_sub(cfs_rq.util_avg as i64) / 2; // long arithmetic
    if cap > 0 {
        let cap = cap as u64; // positive
        sa.util_avg = if cfs_rq.util_avg != 0 {
            let u = cfs_rq
                .util_avg
                .wrapping_mul(se_weight)
                .checked_div(cfs_rq.load_avg.wrapping_add(1))
                .unwrap_or(0);
            core::cmp::min(u, cap)
        } else {
            cap
        };
    }
    sa.runnable_avg = sa.util_avg;
}

/// `sub_positive()` (kernel/sched/fair.c): `*ptr -= min(*ptr, val)`.
#[inline]
pub(crate) fn sub_positive(v: u64, d: u64) -> u64 {
    v - core::cmp::min(v, d)
}

/// `max_t(u32, sum, avg * PELT_MIN_DIVIDER)` (kernel/sched/fair.c, after every subtraction
/// from a cfs_rq's sums): keeps a sum from falling below what its average implies; both
/// sides truncated to 32 bits first.
#[inline]
pub(crate) fn at_least_min_divider(sum: u64, avg: u64, t: &PeltTables) -> u64 {
    u64::from(core::cmp::max(
        sum as u32,
        (avg as u32).wrapping_mul(t.pelt_min_divider()),
    ))
}

/// `attach_entity_load_avg()` (kernel/sched/fair.c), root cfs_rq, no group propagation:
/// a task arriving on a runqueue (migration, first enqueue) takes the cfs_rq's
/// `last_update_time` and `period_contrib`, rebuilds its sums from its averages with the
/// cfs_rq's divider, and its averages and sums are added to the cfs_rq's.
///
/// Traps: the entity's `load_sum` is stored divided by `se_weight` (1 when the product is
/// not above the weight); `util_sum = util_avg * divider` is a u32 product (wraps); the
/// cfs_rq's `load_sum` gains `se_weight * load_sum` (u64, wraps).
pub fn attach_entity_load_avg(
    cfs_rq: &mut SchedAvg,
    se: &mut SchedAvg,
    se_weight: u64,
    t: &PeltTables,
) {
    let divider = get_pelt_divider(cfs_rq, t);
    se.last_update_time = cfs_rq.last_update_time;
    se.period_contrib = cfs_rq.period_contrib;
    se.util_sum = (se.util_avg as u32).wrapping_mul(divider); // an unsigned int product
    se.runnable_sum = se.runnable_avg.wrapping_mul(u64::from(divider));
    let load_sum = se.load_avg.wrapping_mul(u64::from(divider));
    se.load_sum = if se_weight < load_sum {
        div_u64(load_sum, se_weight as u32).unwrap_or(1) // se_weight is below load_sum, > 0
    } else {
        1
    };
    cfs_rq.load_avg = cfs_rq.load_avg.wrapping_add(se.load_avg);
    cfs_rq.load_sum = cfs_rq
        .load_sum
        .wrapping_add(se_weight.wrapping_mul(se.load_sum));
    cfs_rq.util_avg = cfs_rq.util_avg.wrapping_add(se.util_avg);
    cfs_rq.util_sum = cfs_rq.util_sum.wrapping_add(se.util_sum);
    cfs_rq.runnable_avg = cfs_rq.runnable_avg.wrapping_add(se.runnable_avg);
    cfs_rq.runnable_sum = cfs_rq.runnable_sum.wrapping_add(se.runnable_sum);
}

/// `detach_entity_load_avg()` (kernel/sched/fair.c), root cfs_rq, no group propagation:
/// a task leaving a runqueue takes its averages and sums out of the cfs_rq's, each
/// subtraction stopping at 0 (`sub_positive`).
///
/// Trap: each sum is then raised to at least `avg * PELT_MIN_DIVIDER` with `max_t(u32, ..)`,
/// so both sides are truncated to 32 bits first — a u64 `load_sum` or `runnable_sum` above
/// 2^32 comes back truncated.
pub fn detach_entity_load_avg(
    cfs_rq: &mut SchedAvg,
    se: &SchedAvg,
    se_weight: u64,
    t: &PeltTables,
) {
    let min_div = t.pelt_min_divider();
    let max_u32 = |sum: u64, avg: u64| at_least_min_divider(sum, avg, t);
    cfs_rq.load_avg = sub_positive(cfs_rq.load_avg, se.load_avg);
    cfs_rq.load_sum = sub_positive(cfs_rq.load_sum, se_weight.wrapping_mul(se.load_sum));
    cfs_rq.load_sum = max_u32(cfs_rq.load_sum, cfs_rq.load_avg);
    cfs_rq.util_avg = sub_positive(cfs_rq.util_avg, se.util_avg);
    cfs_rq.util_sum = cfs_rq.util_sum - core::cmp::min(cfs_rq.util_sum, se.util_sum);
    cfs_rq.util_sum = core::cmp::max(
        cfs_rq.util_sum,
        (cfs_rq.util_avg as u32).wrapping_mul(min_div),
    );
    cfs_rq.runnable_avg = sub_positive(cfs_rq.runnable_avg, se.runnable_avg);
    cfs_rq.runnable_sum = sub_positive(cfs_rq.runnable_sum, se.runnable_sum);
    cfs_rq.runnable_sum = max_u32(cfs_rq.runnable_sum, cfs_rq.runnable_avg);
}

/// `cfs_rq->removed` (kernel/sched/sched.h): the averages of entities that left this
/// cfs_rq without its lock (a task that died or woke up on another CPU), folded in at the
/// cfs_rq's next [`update_cfs_rq_load_avg`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfsRqRemoved {
    /// `removed.nr`: entities removed since the last fold.
    pub nr: u32,
    /// `removed.load_avg` (unsigned long).
    pub load_avg: u64,
    /// `removed.util_avg`.
    pub util_avg: u64,
    /// `removed.runnable_avg`.
    pub runnable_avg: u64,
}

/// `remove_entity_load_avg()` (kernel/sched/fair.c): syncs a leaving entity to its
/// cfs_rq's `last_update_time` (`sync_entity_load_avg()`: a blocked update, no clock read)
/// and queues its averages in the cfs_rq's `removed`.
pub fn remove_entity_load_avg(
    cfs_rq_last_update_time: u64,
    se: &mut SchedAvg,
    load_weight: u64,
    removed: &mut CfsRqRemoved,
    t: &PeltTables,
) {
    __update_load_avg_blocked_se(cfs_rq_last_update_time, se, load_weight, t);
    removed.nr = removed.nr.wrapping_add(1);
    removed.util_avg = removed.util_avg.wrapping_add(se.util_avg);
    removed.load_avg = removed.load_avg.wrapping_add(se.load_avg);
    removed.runnable_avg = removed.runnable_avg.wrapping_add(se.runnable_avg);
}

/// `load_avg_is_decayed()` (kernel/sched/fair.c): every sum is 0.
pub fn load_avg_is_decayed(sa: &SchedAvg) -> bool {
    sa.load_sum == 0 && sa.util_sum == 0 && sa.runnable_sum == 0
}

/// `update_cfs_rq_load_avg()` (kernel/sched/fair.c, the same in v6.1 and v6.12): folds
/// the cfs_rq's `removed` averages in (each average and its `avg * divider` share of the
/// sum taken out with `sub_positive`, each sum then raised to at least `avg *
/// PELT_MIN_DIVIDER` with `max_t(u32, ..)`), then [`__update_load_avg_cfs_rq`]. Returns
/// whether anything decayed or was removed.
///
/// Traps: the divider is the one *before* the update; `sub_positive` converts `r *
/// divider` to the sum's type first, so the u32 `util_sum` loses a product past 2^32.
pub fn update_cfs_rq_load_avg(
    now: u64,
    sa: &mut SchedAvg,
    removed: &mut CfsRqRemoved,
    load_weight: u64,
    h_nr_runnable: u32,
    has_curr: bool,
    t: &PeltTables,
) -> bool {
    let mut decayed = false;
    if removed.nr != 0 {
        let r = core::mem::take(removed);
        let divider = u64::from(get_pelt_divider(sa, t));
        let min_div = t.pelt_min_divider();
        let at_least = |sum: u64, avg: u64| at_least_min_divider(sum, avg, t);
        sa.load_avg = sub_positive(sa.load_avg, r.load_avg);
        sa.load_sum = sub_positive(sa.load_sum, r.load_avg.wrapping_mul(divider));
        sa.load_sum = at_least(sa.load_sum, sa.load_avg);
        sa.util_avg = sub_positive(sa.util_avg, r.util_avg);
        let du = r.util_avg.wrapping_mul(divider) as u32; // typeof(*ptr) in sub_positive
        sa.util_sum = sa.util_sum - core::cmp::min(sa.util_sum, du);
        sa.util_sum = core::cmp::max(sa.util_sum, (sa.util_avg as u32).wrapping_mul(min_div));
        sa.runnable_avg = sub_positive(sa.runnable_avg, r.runnable_avg);
        sa.runnable_sum = sub_positive(sa.runnable_sum, r.runnable_avg.wrapping_mul(divider));
        sa.runnable_sum = at_least(sa.runnable_sum, sa.runnable_avg);
        decayed = true;
    }
    decayed | (__update_load_avg_cfs_rq(now, sa, load_weight, h_nr_runnable, has_curr, t) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util_est::UTIL_AVG_UNCHANGED;

    const T: &PeltTables = &PeltTables::HL32;
    const NICE_0: u64 = 1024 << 10;

    fn task(on_rq: bool, is_curr: bool) -> SchedEntityPelt {
        SchedEntityPelt {
            load_weight: NICE_0,
            on_rq,
            is_curr,
            ..SchedEntityPelt::default()
        }
    }

    fn avg(lut: u64) -> SchedAvg {
        SchedAvg {
            last_update_time: lut,
            ..SchedAvg::default()
        }
    }

    #[test]
    fn removed_load_is_folded_in_before_the_update() {
        // Linux 6.1.192 under QEMU (fixtures/lab/6.1.0-57-amd64/periodic-5pct-16ms): cpu0's
        // root cfs_rq after `cat` was dequeued for the last time, `cat`'s sched_avg at
        // task_dead_fair(), and the state the next __update_load_avg_cfs_rq() call saw.
        let mut cfs = SchedAvg {
            last_update_time: 12446543872,
            load_sum: 122341007,
            runnable_sum: 41600312,
            util_sum: 41326284,
            period_contrib: 972,
            load_avg: 2569,
            runnable_avg: 872,
            util_avg: 867,
            ..SchedAvg::default()
        };
        let mut cat = SchedAvg {
            last_update_time: 12446543872,
            load_sum: 47643,
            runnable_sum: 11179796,
            util_sum: 10941776,
            period_contrib: 972,
            load_avg: 1023,
            runnable_avg: 233,
            util_avg: 228,
            ..SchedAvg::default()
        };
        let mut removed = CfsRqRemoved::default();
        remove_entity_load_avg(cfs.last_update_time, &mut cat, NICE_0, &mut removed, T);
        assert_eq!(
            removed,
            CfsRqRemoved {
                nr: 1,
                load_avg: 1023,
                util_avg: 228,
                runnable_avg: 233
            }
        );
        // Folded at the next update (the same instant: only the removal shows).
        assert!(update_cfs_rq_load_avg(
            cfs.last_update_time,
            &mut cfs,
            &mut removed,
            0,
            0,
            false,
            T
        ));
        assert_eq!(removed, CfsRqRemoved::default());
        assert_eq!(
            (cfs.load_sum, cfs.runnable_sum, cfs.util_sum),
            (73554137, 30488542, 30452964)
        );
        assert_eq!(
            (cfs.load_avg, cfs.runnable_avg, cfs.util_avg),
            (1546, 639, 639)
        );
        // Nothing removed and no time passed: nothing decayed.
        let before = cfs;
        let lut = cfs.last_update_time;
        assert!(!update_cfs_rq_load_avg(
            lut,
            &mut cfs,
            &mut removed,
            0,
            0,
            false,
            T
        ));
        assert_eq!(cfs, before);
        assert!(!load_avg_is_decayed(&cfs));
        assert!(load_avg_is_decayed(&SchedAvg::default()));
    }

    #[test]
    fn decay_load_by_zero_periods_loses_one() {
        assert_eq!(decay_load(1024, 0, T), 1023);
        assert_eq!(decay_load(1, 0, T), 0);
        assert_eq!(decay_load(0, 0, T), 0);
    }

    #[test]
    fn decay_load_halves_every_period_count() {
        assert_eq!(decay_load(1 << 20, 32, T), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 16, &PeltTables::HL16), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 8, &PeltTables::HL8), (1 << 19) - 1);
    }

    #[test]
    fn decay_load_cutoff_is_above_63_periods_of_halflife() {
        // At 63*PERIOD the value is shifted by 63 (0 or 1) and 1*0xffffffff >> 32 is 0,
        // so `>` and `>=` agree; one period less still leaves something.
        assert_eq!(decay_load(u64::MAX, 2015, T), 1);
        assert_eq!(decay_load(u64::MAX, 2016, T), 0);
        assert_eq!(decay_load(u64::MAX, 2017, T), 0);
        assert_eq!(decay_load(u64::MAX, 1007, &PeltTables::HL16), 1);
        assert_eq!(decay_load(u64::MAX, 1008, &PeltTables::HL16), 0);
    }

    #[test]
    fn decay_load_checks_the_cutoff_before_narrowing_n() {
        // n = 2^32 would be y^0 after the u32 narrowing; the u64 bound check gives 0.
        assert_eq!(decay_load(1024, 1 << 32, T), 0);
        assert_eq!(decay_load(1024, (1 << 32) + 1, T), 0);
    }

    #[test]
    fn accumulate_pelt_segments_one_full_period() {
        // d1 = 1024 at p = 1: 1024*y = 1002, and no full period in between:
        // 47742 - decay_load(47742, 1) - 1024 = 47742 - 46718 - 1024 = 0.
        assert_eq!(decay_load(47742, 1, T), 46718);
        assert_eq!(accumulate_pelt_segments(1, 1024, 0, T), 1002);
        assert_eq!(accumulate_pelt_segments(1, 1, 0, T), 0);
    }

    #[test]
    fn accumulate_pelt_segments_sum_wraps_in_u32() {
        let r = accumulate_pelt_segments(1, u32::MAX, u32::MAX, T);
        let c1 = decay_load(u64::from(u32::MAX), 1, T) as u32;
        let c2 = 47742u32 - decay_load(47742, 1, T) as u32 - 1024;
        assert_eq!(r, c1.wrapping_add(c2).wrapping_add(u32::MAX));
    }

    #[test]
    fn lut_advances_in_1024ns_units_not_to_now() {
        let mut sa = avg(5000);
        assert_eq!(update_load_sum(5000 + 3000, &mut sa, 1, 1, 1, T), 0);
        assert_eq!(sa.last_update_time, 5000 + 2048);
        assert_eq!(sa.period_contrib, 2);
        // Under 1024 ns: nothing moves.
        assert_eq!(update_load_sum(5000 + 2048 + 1023, &mut sa, 1, 1, 1, T), 0);
        assert_eq!(sa.last_update_time, 5000 + 2048);
    }

    #[test]
    fn time_going_backwards_sets_lut_to_now_unaligned() {
        let mut sa = avg(7_000_000_000);
        sa.util_sum = 5;
        assert_eq!(update_load_sum(6_999_999_999, &mut sa, 1, 1, 1, T), 0);
        assert_eq!(sa.last_update_time, 6_999_999_999);
        assert_eq!(sa.util_sum, 5);
    }

    #[test]
    fn zero_load_forces_runnable_and_running_to_zero() {
        let mut sa = avg(0);
        assert_eq!(update_load_sum(100 * 1024, &mut sa, 0, 3, 1, T), 0);
        assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (0, 0, 0));
        assert_eq!(sa.period_contrib, 100);
    }

    #[test]
    fn contrib_stays_raw_delta_without_load_or_crossing() {
        // No crossing: contrib = delta = 100 units.
        let mut sa = avg(0);
        accumulate_sum(100, &mut sa, 2, 3, 1, T);
        assert_eq!(sa.load_sum, 200);
        assert_eq!(sa.runnable_sum, 300 << 10);
        assert_eq!(sa.util_sum, 100 << 10);
        // Crossing with load 0: sums decay, contrib is unused.
        let mut sa = SchedAvg {
            util_sum: 1 << 20,
            period_contrib: 1000,
            ..SchedAvg::default()
        };
        assert_eq!(accumulate_sum(100, &mut sa, 0, 0, 0, T), 1);
        assert_eq!(sa.util_sum, decay_load(1 << 20, 1, T) as u32);
        assert_eq!(sa.period_contrib, 76);
    }

    #[test]
    fn runnable_sum_adds_runnable_times_contrib_shifted_in_u64() {
        let mut sa = avg(0);
        accumulate_sum(1000, &mut sa, 1, 1 << 60, 0, T);
        assert_eq!(sa.runnable_sum, (1u64 << 60).wrapping_mul(1000) << 10);
        assert_eq!(sa.util_sum, 0);
    }

    #[test]
    fn util_sum_u32_wrap() {
        let mut sa = SchedAvg {
            util_sum: u32::MAX - 100,
            ..SchedAvg::default()
        };
        // 10 units inside the period: util_sum += 10 << 10, wrapping.
        assert_eq!(accumulate_sum(10, &mut sa, 1, 1, 1, T), 0);
        assert_eq!(sa.util_sum, (u32::MAX - 100).wrapping_add(10 << 10));
        assert_eq!(sa.util_sum, 10139);
    }

    #[test]
    fn gap_of_exactly_2pow32_periods_returns_0() {
        let lut = 1_000_000_000u64;
        let mut sa = SchedAvg {
            last_update_time: lut,
            load_sum: 47000,
            util_sum: 47_000_000,
            util_avg: 1000,
            load_avg: 1000,
            runnable_avg: 1000,
            runnable_sum: 47_000_000,
            util_est: UtilEst::Mainline(UTIL_AVG_UNCHANGED | 7),
            ..SchedAvg::default()
        };
        let now = lut + (1u64 << 32) * 1024 * 1024;
        assert_eq!(__update_load_avg_se(now, &mut sa, &task(true, true), T), 0);
        // Sums decayed to 0 and refilled with the new contribution; averages untouched.
        let contrib = accumulate_pelt_segments(1 << 32, 1024, 0, T);
        assert_eq!(sa.load_sum, u64::from(contrib));
        assert_eq!(sa.util_sum, contrib << 10);
        assert_eq!(sa.last_update_time, now);
        assert_eq!(sa.period_contrib, 0);
        assert_eq!(
            (sa.load_avg, sa.util_avg, sa.runnable_avg),
            (1000, 1000, 1000)
        );
        assert_eq!(sa.util_est, UtilEst::Mainline(UTIL_AVG_UNCHANGED | 7));
        // One period more returns 1 as usual.
        let mut sb = avg(lut);
        let ret = __update_load_avg_se(
            lut + ((1u64 << 32) + 1) * 1024 * 1024,
            &mut sb,
            &task(true, true),
            T,
        );
        assert_eq!(ret, 1);
    }

    #[test]
    fn averages_use_divider_after_the_update_and_se_weight() {
        let mut sa = avg(0);
        let se = SchedEntityPelt {
            load_weight: 3071, // raw weight: scale_load_down clamps to 2
            on_rq: true,
            is_curr: true,
            ..SchedEntityPelt::default()
        };
        assert_eq!(__update_load_avg_se(1_000_000_000, &mut sa, &se, T), 1);
        let divider = u64::from(46718 + sa.period_contrib);
        assert_eq!(sa.load_avg, 2 * sa.load_sum / divider);
        assert_eq!(sa.util_avg, u64::from(sa.util_sum) / divider);
        assert_eq!(sa.runnable_avg, sa.runnable_sum / divider);
    }

    #[test]
    fn averages_recomputed_only_when_a_period_is_crossed() {
        let mut sa = SchedAvg {
            last_update_time: 0,
            period_contrib: 0,
            util_avg: 77,
            load_avg: 77,
            runnable_avg: 77,
            ..SchedAvg::default()
        };
        // 1023 units inside the first period: sums grow, averages stay.
        assert_eq!(
            __update_load_avg_se(1023 * 1024, &mut sa, &task(true, true), T),
            0
        );
        assert_eq!(sa.util_sum, 1023 << 10);
        assert_eq!((sa.util_avg, sa.load_avg, sa.runnable_avg), (77, 77, 77));
        // The next unit crosses the boundary: all three are recomputed.
        assert_eq!(
            __update_load_avg_se(1024 * 1024, &mut sa, &task(true, true), T),
            1
        );
        assert_eq!(sa.util_avg, u64::from(sa.util_sum) / 46718);
        assert_ne!(sa.util_avg, 77);
    }

    #[test]
    fn se_runnable_is_zero_when_delayed_and_the_count_for_groups() {
        let mut se = task(true, false);
        assert_eq!(se_runnable(&se), 1);
        se.sched_delayed = true;
        assert_eq!(se_runnable(&se), 0);
        se.sched_delayed = false;
        se.group_runnable_weight = Some(3);
        assert_eq!(se_runnable(&se), 3);
        assert_eq!(se_weight(&se), 1024);
    }

    #[test]
    fn blocked_se_decays_without_touching_util_est() {
        let mut sa = SchedAvg {
            last_update_time: 0,
            util_sum: 1 << 25,
            util_est: UtilEst::Mainline(UTIL_AVG_UNCHANGED | 5),
            ..SchedAvg::default()
        };
        assert_eq!(
            __update_load_avg_blocked_se(32 * 1024 * 1024, &mut sa, NICE_0, T),
            1
        );
        assert_eq!(sa.util_sum, decay_load(1 << 25, 32, T) as u32);
        assert_eq!(sa.util_est, UtilEst::Mainline(UTIL_AVG_UNCHANGED | 5));
        // __update_load_avg_se clears it on the next crossing.
        assert_eq!(
            __update_load_avg_se(33 * 1024 * 1024, &mut sa, &task(true, true), T),
            1
        );
        assert_eq!(sa.util_est, UtilEst::Mainline(5));
    }

    #[test]
    fn cfs_rq_weight_zero_with_curr_accumulates_nothing() {
        let mut sa = avg(0);
        assert_eq!(
            __update_load_avg_cfs_rq(4 * 1024 * 1024, &mut sa, 0, 2, true, T),
            1
        );
        assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (0, 0, 0));
        let mut sa = avg(0);
        __update_load_avg_cfs_rq(1024 * 1024, &mut sa, 2 * NICE_0, 2, true, T);
        assert_eq!(
            sa.load_avg,
            2048 * sa.load_sum / u64::from(46718 + sa.period_contrib) / 2048
        );
    }

    #[test]
    fn rt_running_two_doubles_load_but_not_util() {
        let mut one = avg(0);
        let mut two = avg(0);
        update_rt_rq_load_avg(10 * 1024 * 1024, &mut one, 1, T);
        update_dl_rq_load_avg(10 * 1024 * 1024, &mut two, 2, T);
        assert_eq!(two.load_sum, 2 * one.load_sum);
        assert_eq!(two.runnable_sum, 2 * one.runnable_sum);
        assert_eq!(two.util_sum, one.util_sum);
    }

    #[test]
    fn hw_int_truncation_of_running() {
        // 1 << 32: low word 0 -> not running, but load/runnable use the full value.
        let mut sa = avg(0);
        assert_eq!(update_hw_load_avg(4 * 1024 * 1024, &mut sa, 1 << 32, T), 1);
        assert_eq!(sa.util_sum, 0);
        assert_ne!(sa.load_sum, 0);
        // 0x80000000 is negative as an int, still running.
        let mut sb = avg(0);
        update_hw_load_avg(4 * 1024 * 1024, &mut sb, 0x8000_0000, T);
        let mut sc = avg(0);
        update_hw_load_avg(4 * 1024 * 1024, &mut sc, 1, T);
        assert_eq!(sb.util_sum, sc.util_sum);
        assert_ne!(sb.util_sum, 0);
        assert_eq!(sb.load_sum, sc.load_sum.wrapping_mul(0x8000_0000));
    }

    #[test]
    fn irq_scaling_order_freq_then_cpu() {
        let running = 3000u64;
        let freq_first = cap_scale(cap_scale(running, 1000), 700);
        let cpu_first = cap_scale(cap_scale(running, 700), 1000);
        assert_eq!((freq_first, cpu_first), (2002, 2001));
        // clock - freq_first is 1 ns short of a 1024 ns boundary B; cpu-first lands on B.
        let lut = 1024 * 1000;
        let b = lut + 10 * 1024;
        let clock = b - 1 + freq_first;
        let mut sa = avg(lut);
        update_irq_load_avg(clock, &mut sa, running, 1000, 700, T);
        // Kernel order: idle up to B - 1024, then 3025 ns = 2 running units.
        assert_eq!(sa.last_update_time, b + 1024);
        assert_eq!(sa.util_sum, 2 << 10);
        let mut other = avg(lut);
        update_load_sum(clock - cpu_first, &mut other, 0, 0, 0, T);
        update_load_sum(clock, &mut other, 1, 1, 1, T);
        assert_eq!(other.util_sum, 1 << 10);
    }

    #[test]
    fn irq_ret_counts_both_calls() {
        let mut sa = avg(0);
        // Idle part crosses a period, running part crosses another: ret 2.
        let clock = 3 * 1024 * 1024;
        assert_eq!(
            update_irq_load_avg(clock, &mut sa, 1024 * 1024 + 512, 1024, 1024, T),
            2
        );
    }

    #[test]
    fn attach_then_detach_moves_util_and_keeps_sum_floor() {
        let t = &PeltTables::HL32;
        let mut cfs = SchedAvg {
            last_update_time: 5 << 20,
            period_contrib: 100,
            util_avg: 300,
            util_sum: 300 * (t.pelt_min_divider() + 100),
            ..SchedAvg::default()
        };
        let mut se = SchedAvg {
            util_avg: 200,
            load_avg: 1024,
            ..SchedAvg::default()
        };
        attach_entity_load_avg(&mut cfs, &mut se, 1024, t);
        let divider = t.pelt_min_divider() + 100;
        assert_eq!(se.last_update_time, 5 << 20);
        assert_eq!(se.util_sum, 200 * divider);
        assert_eq!(se.load_sum, u64::from(divider)); // 1024 * divider / 1024
        assert_eq!(cfs.util_avg, 500);
        assert_eq!(cfs.util_sum, 500 * divider);
        assert_eq!(cfs.load_avg, 1024);
        detach_entity_load_avg(&mut cfs, &se, 1024, t);
        assert_eq!(cfs.util_avg, 300);
        assert_eq!(cfs.util_sum, 300 * divider);
        detach_entity_load_avg(&mut cfs, &se, 1024, t);
        assert_eq!(cfs.util_avg, 100);
        assert_eq!(cfs.util_sum, 100 * divider);
        // Removing more than is there stops at 0; a sum below avg * PELT_MIN_DIVIDER is
        // raised to it.
        cfs.util_sum = 5;
        detach_entity_load_avg(&mut cfs, &SchedAvg::default(), 1024, t);
        assert_eq!(cfs.util_sum, 100 * t.pelt_min_divider());
        detach_entity_load_avg(&mut cfs, &se, 1024, t);
        assert_eq!((cfs.util_avg, cfs.util_sum), (0, 0));
    }

    #[test]
    fn attach_load_sum_is_one_when_not_above_the_weight() {
        let t = &PeltTables::HL32;
        let mut cfs = SchedAvg::default();
        let mut se = SchedAvg::default();
        attach_entity_load_avg(&mut cfs, &mut se, 1024, t);
        assert_eq!(se.load_sum, 1);
        assert_eq!(cfs.load_sum, 1024);
    }

    #[test]
    fn post_init_util_is_half_the_spare_capacity_at_most() {
        let mut sa = SchedAvg::default();
        init_entity_runnable_average(&mut sa, 1024);
        assert_eq!(sa.load_avg, 1024);
        post_init_entity_util_avg(&mut sa, &SchedAvg::default(), 1024, 1024);
        assert_eq!((sa.util_avg, sa.runnable_avg), (512, 512));
        let cfs = SchedAvg {
            util_avg: 400,
            load_avg: 1023,
            ..SchedAvg::default()
        };
        let mut sa = SchedAvg::default();
        post_init_entity_util_avg(&mut sa, &cfs, 1024, 1024);
        assert_eq!(sa.util_avg, 312); // min(400 * 1024 / 1024, (1024 - 400) / 2)
        let full = SchedAvg {
            util_avg: 1023,
            ..SchedAvg::default()
        };
        let mut sa = SchedAvg::default();
        post_init_entity_util_avg(&mut sa, &full, 1024, 1024);
        assert_eq!(sa.util_avg, 0); // cap = 1 / 2 = 0: untouched
    }
}
