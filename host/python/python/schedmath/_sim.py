# SPDX-License-Identifier: GPL-2.0-only
"""The result of ``schedmath.simulate``: the metrics and DataFrame views of them."""

import io
import json

import numpy as np
import pandas as pd


class SimResult:
    """``metrics``: the dict ``schedmath simulate --json`` prints (its keys are
    documented in host/src/sim/metrics.rs). DataFrames built from it:

    * ``tasks``: one row per task — ``util_avg_end``, ``work_done_ms``,
      ``deadline_misses``, ``util_ramp_ms``, ``util_decay_ms`` (NaN: never reached);
    * ``task_cpu_residency``: seconds per task (rows) and CPU (columns);
    * ``freq_residency``: ``domain``, ``khz``, ``seconds``;
    * ``idle``: ``cpu``, ``state``, ``residency_s``, ``usage``, ``miss_above``,
      ``miss_below``.

    From the run's recording (``simulate(..., record=True)``, the default):

    * ``signals``: the time series, tidy (long): one row per recorded value, columns
      ``time`` (float64 s), ``time_ns`` (int64), ``entity`` (category: ``COMM-PID`` for
      a task, ``cpuN`` for a CPU), ``signal`` (category: ``util_avg``, ``util_est`` of a
      task; ``frequency`` in kHz, ``idle_state`` of a CPU: the state index entered, -1
      when it leaves idle) and ``value`` (int64), in time order. A task's util_avg is its
      ``lisa__sched_pelt_se`` events, util_est its ``lisa__sched_util_est_se``
      (``enqueued``), a CPU's frequency its ``cpu_frequency`` events, its idle state its
      ``cpu_idle`` events. ``signals.pivot_table(index="time", columns=["entity",
      "signal"], values="value")`` gives the wide form.
    * ``events``: one row per recorded event, as the ``--trace FILE.csv`` file holds
      them: ``time_ns``, ``cpu``, ``event``, ``comm``, ``pid``, then every field of the
      event kinds present (empty where an event has no such field).
    """

    def __init__(self, metrics, recording=None):
        self.metrics = metrics
        self._recording = recording

    @classmethod
    def from_json(cls, text, recording=None):
        return cls(json.loads(text), recording)

    def _recorded(self, what):
        if self._recording is None:
            raise ValueError(f"{what}: the run was not recorded (simulate(..., record=True))")
        return self._recording

    @property
    def signals(self):
        _, (ts, entity, signal, value) = self._recorded("signals")
        time_ns = np.asarray(ts, dtype="int64")
        return pd.DataFrame(
            {
                "time": time_ns / 1e9,
                "time_ns": time_ns,
                "entity": pd.Categorical(entity),
                "signal": pd.Categorical(
                    signal, categories=["util_avg", "util_est", "frequency", "idle_state"]
                ),
                "value": np.asarray(value, dtype="int64"),
            }
        )

    @property
    def events(self):
        csv, _ = self._recorded("events")
        return pd.read_csv(io.StringIO(csv), keep_default_na=False, na_values=[""], low_memory=False)

    def __repr__(self):
        m = self.metrics
        return (
            f"SimResult(platform={m['platform']!r}, profile={m['profile']!r}, "
            f"duration_s={m['duration_s']}, tasks={len(m['work_done_ms'])})"
        )

    @property
    def tasks(self):
        m = self.metrics
        names = list(m["work_done_ms"])
        df = pd.DataFrame(
            {
                "util_avg_end": [m["task_util_avg_end"].get(n) for n in names],
                "work_done_ms": [m["work_done_ms"][n] for n in names],
                "deadline_misses": [m["deadline_misses"].get(n, 0) for n in names],
                "util_ramp_ms": [m["util_ramp_ms"].get(n) for n in names],
                "util_decay_ms": [m["util_decay_ms"].get(n) for n in names],
            },
            index=pd.Index(names, name="task"),
        )
        return df.astype(
            {
                "util_avg_end": "int64",
                "work_done_ms": "float64",
                "deadline_misses": "int64",
                "util_ramp_ms": "float64",
                "util_decay_ms": "float64",
            }
        )

    @property
    def task_cpu_residency(self):
        r = self.metrics["task_cpu_residency_s"]
        df = pd.DataFrame.from_dict(r, orient="index", dtype="float64")
        df.index.name = "task"
        df.columns.name = "cpu"
        return df

    @property
    def freq_residency(self):
        rows = [
            (dom, int(khz), s)
            for dom, per in self.metrics["freq_residency_s"].items()
            for khz, s in per.items()
        ]
        df = pd.DataFrame(rows, columns=["domain", "khz", "seconds"])
        return df.astype({"khz": "int64", "seconds": "float64"})

    @property
    def idle(self):
        m = self.metrics
        rows = []
        for cpu, res in m["idle_residency_s"].items():
            for state, s in enumerate(res):
                rows.append(
                    (
                        int(cpu),
                        state,
                        s,
                        m["idle_usage"][cpu][state],
                        m["idle_miss_above"][cpu][state],
                        m["idle_miss_below"][cpu][state],
                    )
                )
        cols = ["cpu", "state", "residency_s", "usage", "miss_above", "miss_below"]
        df = pd.DataFrame(rows, columns=cols)
        return df.astype(
            {
                "cpu": "int64",
                "state": "int64",
                "residency_s": "float64",
                "usage": "int64",
                "miss_above": "int64",
                "miss_below": "int64",
            }
        )
