# SPDX-License-Identifier: GPL-2.0-only
"""The result of ``schedmath.simulate``: the metrics and DataFrame views of them."""

import json

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

    Time series (per-task and per-CPU util_avg, util_est, frequency and idle state over
    time) are not here: the simulator's public API returns end-of-run metrics only.
    """

    def __init__(self, metrics):
        self.metrics = metrics

    @classmethod
    def from_json(cls, text):
        return cls(json.loads(text))

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
