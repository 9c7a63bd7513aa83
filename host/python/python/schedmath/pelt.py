# SPDX-License-Identifier: GPL-2.0-only
"""Kernel-exact PELT for pandas: ``simulate`` takes the arguments of LISA's
``lisa.pelt.simulate_pelt`` and returns what the kernel's integer code
(kernel/sched/pelt.c, computed by the schedmath core) gives, not a float model.

How seconds become the PELT clock
---------------------------------
* Every label of the activations index (after the union with ``index``) is one
  instant ``t`` in seconds (float or int), or a ``Timedelta``/``Timestamp``. Floats
  are rounded to the nearest nanosecond (``round(t * 1e9)``); float64 keeps every
  nanosecond exact up to 2**53 ns, 104 days. Timedelta/Timestamp labels are taken as
  integer nanoseconds, with no rounding.
* The PELT clock is that time in ns (``clock`` replaces it, ``capacity`` scales it,
  below). The kernel counts it in 1024 ns units and 1024-unit periods (1.048576 ms):
  ``last_update_time`` only ever advances by whole 1024 ns units, and the sums decay
  at period boundaries. With a numeric ``init`` the first instant is placed in its
  period as if the signal's history had started at clock 0: ``last_update_time =
  t0 & ~1023`` and ``period_contrib = (t0 >> 10) % 1024``, so period boundaries fall
  on multiples of 1 048 576 ns — the absolute windows LISA uses. A dict ``init`` (the
  kernel's ``struct sched_avg``: ``last_update_time``, ``load_sum``, ``runnable_sum``,
  ``util_sum``, ``period_contrib``, ``load_avg``, ``runnable_avg``, ``util_avg``) is
  taken as it is, which is how a trace's recorded state is continued exactly.
* Where updates happen: at every row (each activation edge and each extra ``index``
  label is one ``__update_load_avg_se()`` call), plus, with ``tick_hz``, at every
  scheduler tick ``k * TICK_NSEC`` strictly inside a running interval (the kernel's
  ``entity_tick()``); tick rows are added to the result. Without ``tick_hz`` there is
  no tick, as in LISA. Row 0 is the starting point and reports ``init``.
* A row's value (1 running, 0 sleeping) holds until the next row; the update at row i
  is made with row i-1's state, because the kernel's load/runnable/running arguments
  describe the interval that just ended (LISA shifts its activations the same way).
* ``capacity`` (CPU capacity, 0..1024, a number or a Series forward-filled onto the
  rows) and ``freq_capacity`` turn the task time into the core's ``rq->clock_pelt``:
  while the task runs the clock advances by ``cap_scale(cap_scale(dt, capacity),
  freq_capacity)``; while it sleeps the CPU is idle and the clock is synced to the task
  clock; at each idle entry ``update_idle_rq_clock_pelt()`` adds lost idle time when
  the util_sum is saturated, taking the task's util_sum as its CPU's (nothing else runs
  there). ``clock`` (a PELT clock in seconds per row, e.g. a trace's
  ``update_time * 1e-9``) replaces all of this.

Where the result differs from LISA's ``simulate_pelt`` and why
--------------------------------------------------------------
* Values are the kernel's integers (``util_avg`` etc. as ``int64``), with its
  truncations: a 1024 ns granularity, ``decay_load()``'s 32-bit table, averages
  divided by ``LOAD_AVG_MAX - 1024 + period_contrib``. A float model of the same
  updates (tests/float_pelt.py, the kind LISA runs) is off by 0.81 util on average and
  14.81 at most on the 2 195 updates of the Linux 6.1 task captures, where schedmath is
  off by 0 (tests/test_float_reference.py, tests/test_realkernel.py).
* The value at a row is the signal *after that update*, which between period
  boundaries does not change (the kernel recomputes the averages only when a period
  boundary was crossed); LISA interpolates inside a window.
* ``windowless=True`` and a ``window`` or ``scale`` other than the kernel's are
  refused: the kernel has one window (1024 * 1024 ns) and one scale (1024).
* ``half_life`` must be 32, 16 or 8: the kernel's generator tables that exist.
* ``clock`` must have a value at every row: LISA estimates missing PELT clock values at
  enqueue/dequeue from neighbouring rows; schedmath does not guess.
* Rows before the first activation value (an ``index`` that starts earlier) are
  dropped, as LISA's ``dropna`` does; a value other than 0/1 is an error.
"""

import math

import numpy as np
import pandas as pd

from . import _schedmath

PELT_WINDOW = 1024 * 1024 * 1e-9
"""The kernel's PELT period in seconds (1024 units of 1024 ns)."""

PELT_HALF_LIFE = 32
"""Mainline half-life in periods."""

PELT_SCALE = 1024
"""SCHED_CAPACITY_SCALE: the largest util_avg."""

NICE_0_WEIGHT = 1024
"""sched_prio_to_weight[20]: the weight of a nice-0 task (before scale_load)."""

SIGNALS = ("util", "load", "runnable")

_INIT_FIELDS = (
    "last_update_time",
    "load_sum",
    "runnable_sum",
    "util_sum",
    "period_contrib",
    "load_avg",
    "runnable_avg",
    "util_avg",
)


def _ns(labels, what):
    """Index labels or values → int64 ns (see the module doc)."""
    if isinstance(labels, (pd.TimedeltaIndex, pd.DatetimeIndex)):
        if labels.hasnans:
            raise ValueError(f"{what}: NaT at row {int(np.argmax(labels.isna()))}")
        return np.asarray(labels.as_unit("ns").asi8, dtype=np.int64)
    v = np.asarray(labels)
    if v.dtype.kind in "mM":
        v = v.astype("datetime64[ns]" if v.dtype.kind == "M" else "timedelta64[ns]")
        return v.view(np.int64)
    try:
        v = v.astype(np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{what}: not seconds ({e})") from None
    bad = ~np.isfinite(v) | (v < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{what}: row {i}: {v[i]} is not a time >= 0 s")
    if (v >= 2.0**63 / 1e9).any():
        raise ValueError(f"{what}: a time above 2**63 ns")
    return np.rint(v * 1e9).astype(np.int64)


def _per_row(x, idx, what, default, integer=True):
    """A number, an array of one value per row, or a Series (forward-filled onto `idx`,
    then back-filled; taken row by row when its index is `idx`) → uint64 array."""
    if x is None:
        x = default
    if isinstance(x, pd.Series) and x.index.equals(idx):
        x = x.to_numpy()
    if isinstance(x, pd.Series):
        if not x.index.is_unique:
            raise ValueError(f"{what}: its index has duplicates")
        v = x.reindex(idx, method="ffill").bfill()
        if v.isna().any():
            raise ValueError(f"{what}: no value to fill the rows with")
        v = v.to_numpy(dtype=np.float64)
    elif np.ndim(x) > 0:
        v = np.asarray(x, dtype=np.float64)
        if v.shape != (len(idx),):
            raise ValueError(f"{what}: {v.shape[0]} values for {len(idx)} rows")
    else:
        v = np.full(len(idx), float(x))
    if (v < 0).any() or (integer and (v != np.floor(v)).any()):
        i = int(np.argmax((v < 0) | (v != np.floor(v))))
        raise ValueError(f"{what}: row {i}: {v[i]} is not an integer >= 0")
    return v.astype(np.uint64)


def _bytes(a, dtype="<u8"):
    return np.ascontiguousarray(a, dtype=dtype).tobytes()


def simulate(
    activations,
    init=0,
    index=None,
    clock=None,
    capacity=None,
    windowless=False,
    window=PELT_WINDOW,
    half_life=PELT_HALF_LIFE,
    scale=PELT_SCALE,
    *,
    signal="util",
    entity="se",
    on_rq=None,
    weight=NICE_0_WEIGHT,
    sched_delayed=None,
    freq_capacity=None,
    tick_hz=None,
):
    """The kernel's PELT signal for a series of activations (1 running, 0 sleeping).

    Positional arguments are LISA's ``simulate_pelt``'s (see the module doc for the
    clock and for where the result differs). Keywords beyond LISA's:

    * ``signal``: ``"util"`` (default), ``"load"``, ``"runnable"`` → an int64 Series;
      ``"all"`` → a DataFrame with those three, ``clock_pelt`` (ns) and ``tick``.
    * ``entity``: ``"se"`` (a task, default) or ``"cfs_rq"`` (a root runqueue, where
      activations are ``has_curr``, ``on_rq`` is ``h_nr_runnable`` and ``weight`` is
      ``cfs_rq->load.weight``).
    * ``on_rq``: a Series (or number) of the load argument, default: the activations
      (a task that does not run sleeps). 1 with activations 0 is a task waiting.
    * ``weight``: ``se->load.weight`` before ``scale_load()`` (1024 = nice 0).
    * ``sched_delayed``: 1 where the task is an EEVDF delayed-dequeue entity (v6.12+).
    * ``freq_capacity``: frequency capacity (0..1024) with ``capacity``.
    * ``tick_hz``: add the tick's updates while running (e.g. 250).
    """
    if not isinstance(activations, pd.Series):
        raise TypeError("activations: a pandas Series of 0/1 indexed by time")
    if windowless:
        raise ValueError("windowless: the kernel's PELT is windowed; no windowless form")
    if not math.isclose(window, PELT_WINDOW, rel_tol=1e-12):
        raise ValueError(f"window: the kernel's PELT period is {PELT_WINDOW} s, not {window}")
    if scale != PELT_SCALE:
        raise ValueError(f"scale: the kernel's scale is {PELT_SCALE}, not {scale}")
    if signal not in SIGNALS + ("all",):
        raise ValueError(f"signal: {signal!r} (util, load, runnable, all)")
    if clock is not None and (capacity is not None or freq_capacity is not None):
        raise ValueError("clock is already the PELT clock: give it or capacity, not both")
    if clock is not None and tick_hz is not None:
        raise ValueError("tick_hz needs the task time: the ticks of a given clock are its rows")

    if index is not None:
        idx = index.union(activations.index)
        activations = activations.reindex(idx, method="ffill")
    idx = activations.index
    act = activations.to_numpy(dtype=np.float64, na_value=np.nan)
    known = ~np.isnan(act)
    first = 0
    if not known.all():
        first = int(np.argmax(known)) if known.any() else len(act)
        if not known[first:].all():
            i = first + int(np.argmax(~known[first:]))
            raise ValueError(f"activations: row {i} ({idx[i]}) has no value")
    full_idx = idx
    idx, act = idx[first:], act[first:]
    bad = (act != 0) & (act != 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"activations: row {i} ({idx[i]}): {act[i]} is not 0 or 1")
    running = act.astype(np.uint8)

    if clock is not None:
        if isinstance(clock, pd.Series) and not clock.index.equals(full_idx):
            if not clock.index.is_unique:
                raise ValueError("clock: its index has duplicates")
            clock = clock.reindex(full_idx)
        c = np.asarray(clock)
        if c.shape != (len(full_idx),):
            raise ValueError(f"clock: {c.shape[0]} values for {len(full_idx)} rows")
        c = c[first:]
        if c.dtype.kind not in "mM":
            c = c.astype(np.float64)
        missing = pd.isna(c)
        if missing.any():
            i = int(np.argmax(missing))
            raise ValueError(f"clock: no value at row {first + i} ({idx[i]})")
        t = _ns(c, "clock")
    else:
        t = _ns(idx, "activations index")

    if on_rq is not None:
        load = _per_row(on_rq, full_idx, "on_rq", 0)[first:]
    else:
        load = running.astype(np.uint64)
    w = _per_row(weight, full_idx, "weight", NICE_0_WEIGHT)[first:]
    delayed = _per_row(sched_delayed, full_idx, "sched_delayed", 0)[first:].astype(np.uint8)
    cap = None if capacity is None else _per_row(capacity, full_idx, "capacity", 1024)[first:]
    freq = None
    if freq_capacity is not None:
        freq = _per_row(freq_capacity, full_idx, "freq_capacity", 1024)[first:]
    if cap is not None or freq is not None:
        full = np.full(len(idx), 1024, dtype=np.uint64)
        cap = _bytes(full if cap is None else cap)
        freq = _bytes(full if freq is None else freq)

    if isinstance(init, dict):
        missing = [k for k in _INIT_FIELDS if k not in init]
        if missing:
            raise ValueError(f"init: missing {', '.join(missing)}")
        state = tuple(int(init[k]) for k in _INIT_FIELDS)
        init_avg = 0
    else:
        if init < 0:
            raise ValueError(f"init: {init!r} < 0")
        state = None
        init_avg = int(round(init))

    out = _schedmath.pelt_series(
        entity,
        int(half_life),
        _bytes(t),
        _bytes(running, "u1"),
        _bytes(load),
        _bytes(w),
        _bytes(delayed, "u1"),
        init_avg,
        state,
        cap,
        freq,
        tick_hz,
    )
    t_out, row, tick, clock_pelt, util, load_avg, runnable = (
        np.frombuffer(b, dtype="<u8") for b in out
    )
    tick = tick.astype(bool)
    if tick.any():
        if isinstance(idx, (pd.TimedeltaIndex, pd.DatetimeIndex)):
            labels = pd.to_timedelta(t_out.astype(np.int64), unit="ns")
            if isinstance(idx, pd.DatetimeIndex):
                labels = pd.DatetimeIndex(pd.Timestamp(0, tz=idx.tz) + labels)
            out_idx = pd.Index(labels, name=idx.name)
        else:
            v = np.where(tick, t_out / 1e9, np.asarray(idx, dtype=np.float64)[row.astype(np.intp)])
            out_idx = pd.Index(v, name=idx.name)
    else:
        out_idx = idx
    cols = {
        "util": util.astype(np.int64),
        "load": load_avg.astype(np.int64),
        "runnable": runnable.astype(np.int64),
    }
    if signal != "all":
        return pd.Series(cols[signal], index=out_idx, name=signal)
    cols["clock_pelt"] = clock_pelt.astype(np.int64)
    cols["tick"] = tick
    return pd.DataFrame(cols, index=out_idx)
