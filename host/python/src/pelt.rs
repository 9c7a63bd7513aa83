// SPDX-License-Identifier: GPL-2.0-only
//! `pelt_series`: a list of update instants → the core's PELT signal after each update.
//!
//! Row `i` is one call of `__update_load_avg_se()` (or `__update_load_avg_cfs_rq()`) at
//! `t[i]`; its arguments are the state of row `i - 1`, because the kernel's load/runnable/
//! running arguments describe the interval that just elapsed. Row 0 is the starting point
//! (no update). The PELT clock is `t` itself, or, with CPU capacities, the core's
//! `rq->clock_pelt` driven by `t` (kernel/sched/pelt.h: scaled while busy, synced to the
//! task clock while idle, lost idle time at idle entry). With a tick rate, updates are
//! added at each tick (`k * TICK_NSEC`) inside a running interval, where the kernel's
//! `entity_tick()` updates the running entity.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use schedmath::math::scale_load;
use schedmath::pelt::clock::{
    rq_clock_pelt, update_idle_rq_clock_pelt, update_rq_clock_task, PeltClockCpu, RqClock,
};
use schedmath::pelt::{
    __update_load_avg_cfs_rq, __update_load_avg_se, attach_entity_load_avg, se_weight, PeltTables,
    SchedAvg, SchedEntityPelt,
};
use schedmath::profile::Halflife;
use schedmath::Profile;

/// The initial `struct sched_avg` fields, in the fixtures' order.
type InitState = (u64, u64, u64, u32, u32, u64, u64, u64);

/// Which kernel signal the rows drive.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entity {
    /// A task's `se->avg`.
    Se,
    /// A root `cfs_rq->avg` (`on_rq` is then `h_nr_runnable`, `running` is `has_curr`).
    CfsRq,
}

/// One row's arguments for the interval that starts at it.
#[derive(Clone, Copy)]
struct Args {
    running: bool,
    on_rq: u64,
    weight: u64,
    delayed: bool,
    cap: u64,
    freq: u64,
}

fn u64s(b: &[u8], what: &str, n: usize) -> PyResult<Vec<u64>> {
    if b.len() != 8 * n {
        return Err(PyValueError::new_err(format!(
            "{what}: {} bytes, expected {} (8 per row)",
            b.len(),
            8 * n
        )));
    }
    Ok(b.chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

fn le_bytes<'py>(py: Python<'py>, v: &[u64]) -> Bound<'py, PyBytes> {
    let mut b = Vec::with_capacity(v.len() * 8);
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
    PyBytes::new(py, &b)
}

/// The signal's outputs after each row (and each added tick).
#[derive(Default)]
struct Out {
    t: Vec<u64>,
    row: Vec<u64>,
    tick: Vec<u64>,
    clock_pelt: Vec<u64>,
    util: Vec<u64>,
    load: Vec<u64>,
    runnable: Vec<u64>,
}

impl Out {
    fn push(&mut self, t: u64, row: usize, tick: bool, now: u64, sa: &SchedAvg) {
        self.t.push(t);
        self.row.push(row as u64); // usize -> u64 widening on 64-bit hosts
        self.tick.push(u64::from(tick));
        self.clock_pelt.push(now);
        self.util.push(sa.util_avg);
        self.load.push(sa.load_avg);
        self.runnable.push(sa.runnable_avg);
    }
}

/// The signal, its PELT clock and what drives them.
struct Driver {
    entity: Entity,
    tables: &'static PeltTables,
    sa: SchedAvg,
    /// `Some` when the PELT clock is the core's `clock_pelt` (capacities given).
    rq: Option<RqClock>,
}

impl Driver {
    /// The PELT clock at task time `t` after an interval in state `a`.
    fn clock_at(&mut self, t: u64, a: &Args) -> u64 {
        let Some(rq) = self.rq.as_mut() else {
            return t;
        };
        let cpu = PeltClockCpu {
            curr_is_idle: !a.running,
            cpu_capacity: a.cap,
            freq_capacity: a.freq,
        };
        let delta = t.saturating_sub(rq.clock_task); // times are checked monotonic
        update_rq_clock_task(rq, delta, 0, &cpu, &Profile::MAINLINE);
        rq_clock_pelt(rq)
    }

    /// One kernel update at PELT time `now` for an interval in state `a`.
    fn update(&mut self, now: u64, a: &Args) {
        let w = scale_load(a.weight);
        match self.entity {
            Entity::Se => {
                let se = SchedEntityPelt {
                    load_weight: w,
                    on_rq: a.on_rq != 0,
                    is_curr: a.running,
                    sched_delayed: a.delayed,
                    group_runnable_weight: None,
                };
                __update_load_avg_se(now, &mut self.sa, &se, self.tables);
            }
            Entity::CfsRq => {
                let nr = u32::try_from(a.on_rq).unwrap_or(u32::MAX); // checked by the caller
                __update_load_avg_cfs_rq(now, &mut self.sa, w, nr, a.running, self.tables);
            }
        }
    }

    /// The CPU goes idle after an update: `update_idle_rq_clock_pelt()` with this
    /// signal's util_sum as the rq's cfs util_sum (exact for a cfs_rq; for a task, the
    /// CPU is taken to run nothing else).
    fn idle_entry(&mut self) {
        let util_sum = self.sa.util_sum;
        if let Some(rq) = self.rq.as_mut() {
            update_idle_rq_clock_pelt(rq, util_sum, 0, 0, self.tables);
        }
    }
}

/// The initial signal: the full state, or averages of `init` whose sums are rebuilt as
/// `attach_entity_load_avg()` does, on periods aligned to multiples of 1024 * 1024 ns of
/// the PELT clock (`last_update_time = now & !1023`, `period_contrib = (now >> 10) % 1024`).
fn initial(
    entity: Entity,
    init: u64,
    state: Option<InitState>,
    now: u64,
    first: &Args,
    tables: &PeltTables,
) -> SchedAvg {
    if let Some((lut, load_sum, runnable_sum, util_sum, period_contrib, load, runnable, util)) =
        state
    {
        return SchedAvg {
            last_update_time: lut,
            load_sum,
            runnable_sum,
            util_sum,
            period_contrib,
            load_avg: load,
            runnable_avg: runnable,
            util_avg: util,
            ..SchedAvg::default()
        };
    }
    let weight = match entity {
        Entity::Se => se_weight(&SchedEntityPelt {
            load_weight: scale_load(first.weight),
            ..SchedEntityPelt::default()
        }),
        Entity::CfsRq => 1,
    };
    let mut sa = SchedAvg {
        util_avg: init,
        runnable_avg: init,
        load_avg: init.saturating_mul(first.weight.max(1)) / 1024,
        ..SchedAvg::default()
    };
    let mut anchor = SchedAvg {
        last_update_time: now & !1023,
        period_contrib: ((now >> 10) & 1023) as u32, // < 1024
        ..SchedAvg::default()
    };
    attach_entity_load_avg(&mut anchor, &mut sa, weight, tables);
    sa
}

/// See the module doc. `t`, `on_rq`, `weight`, `capacity`, `freq` are LE u64 bytes per
/// row; `running`, `delayed` one byte per row. Returns LE u64 bytes:
/// `(t, row, is_tick, clock_pelt, util_avg, load_avg, runnable_avg)`.
#[pyfunction]
#[pyo3(signature = (entity, half_life, t, running, on_rq, weight, delayed, init, init_state, capacity, freq, tick_hz))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the Python side vectorised
pub fn pelt_series<'py>(
    py: Python<'py>,
    entity: &str,
    half_life: u32,
    t: &[u8],
    running: &[u8],
    on_rq: &[u8],
    weight: &[u8],
    delayed: &[u8],
    init: u64,
    init_state: Option<InitState>,
    capacity: Option<&[u8]>,
    freq: Option<&[u8]>,
    tick_hz: Option<u32>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let entity = match entity {
        "se" => Entity::Se,
        "cfs_rq" => Entity::CfsRq,
        e => return Err(PyValueError::new_err(format!("entity: `{e}` (se, cfs_rq)"))),
    };
    let halflife = match half_life {
        32 => Halflife::Hl32,
        16 => Halflife::Hl16,
        8 => Halflife::Hl8,
        h => {
            return Err(PyValueError::new_err(format!(
                "half_life: {h} (the kernel's tables exist for 32, 16 and 8)"
            )))
        }
    };
    let n = running.len();
    let t = u64s(t, "t", n)?;
    let on_rq = u64s(on_rq, "on_rq", n)?;
    let weight = u64s(weight, "weight", n)?;
    if delayed.len() != n {
        return Err(PyValueError::new_err("delayed: one byte per row"));
    }
    let cap = capacity.map(|b| u64s(b, "capacity", n)).transpose()?;
    let freq = freq.map(|b| u64s(b, "freq_capacity", n)).transpose()?;
    let scaled = cap.is_some() || freq.is_some();
    if entity == Entity::CfsRq {
        if let Some(i) = on_rq.iter().position(|&v| v > u64::from(u32::MAX)) {
            return Err(PyValueError::new_err(format!(
                "on_rq (h_nr_runnable), row {i}: {} does not fit an unsigned int",
                on_rq[i]
            )));
        }
    }
    let tick_ns = match tick_hz {
        None => None,
        Some(hz) => Some(
            schedmath::schedutil::tick_nsec(hz)
                .and_then(|t| u64::try_from(t).ok())
                .filter(|&t| t > 0)
                .ok_or_else(|| PyValueError::new_err(format!("tick_hz: {hz} must be > 0")))?,
        ),
    };
    if scaled || tick_ns.is_some() {
        if let Some(i) = (1..n).find(|&i| t[i] < t[i - 1]) {
            return Err(PyValueError::new_err(format!(
                "row {i}: time goes backwards ({} ns after {} ns); capacity and tick_hz \
                 need non-decreasing times",
                t[i],
                t[i - 1]
            )));
        }
    }
    let args = |i: usize| Args {
        running: running[i] != 0,
        on_rq: on_rq[i],
        weight: weight[i],
        delayed: delayed[i] != 0,
        cap: cap.as_ref().map_or(1024, |c| c[i]),
        freq: freq.as_ref().map_or(1024, |f| f[i]),
    };
    let mut out = Out::default();
    if n > 0 {
        let a0 = args(0);
        let mut d = Driver {
            entity,
            tables: PeltTables::of(halflife),
            sa: SchedAvg::default(),
            rq: scaled.then(|| RqClock::new(t[0], t[0], t[0])),
        };
        d.sa = initial(entity, init, init_state, t[0], &a0, d.tables);
        out.push(t[0], 0, false, t[0], &d.sa);
        for i in 1..n {
            let a = args(i - 1);
            if let Some(tick) = tick_ns.filter(|_| a.running) {
                // Ticks strictly inside (t[i-1], t[i]); one at t[i] is that update.
                let mut k = t[i - 1] / tick + 1;
                while let Some(at) = k.checked_mul(tick).filter(|&at| at < t[i]) {
                    let now = d.clock_at(at, &a);
                    d.update(now, &a);
                    out.push(at, i - 1, true, now, &d.sa);
                    k += 1;
                }
            }
            let now = d.clock_at(t[i], &a);
            d.update(now, &a);
            out.push(t[i], i, false, now, &d.sa);
            if a.running && !args(i).running {
                d.idle_entry();
            }
        }
    }
    Ok([
        &out.t,
        &out.row,
        &out.tick,
        &out.clock_pelt,
        &out.util,
        &out.load,
        &out.runnable,
    ]
    .iter()
    .map(|v| le_bytes(py, v))
    .collect())
}
