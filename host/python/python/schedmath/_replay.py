# SPDX-License-Identifier: GPL-2.0-only
"""``schedmath.replay``: ``schedmath replay TRACE --json`` (host/src/replay) as pandas.

It calls the host library's replay module; no second implementation.
"""

import json
import os

import pandas as pd

from . import _schedmath

FIELDS = ("util", "load", "runnable", "util_est")


class ReplayResult:
    """``report``: the CLI's JSON object plus ``mode``, ``profile``, ``what_if``.
    ``entities``: one row per replayed signal — ``updates``, ``exact`` (int64) and
    ``max_abs_err_<field>`` / ``mean_abs_err_<field>`` (float64, NaN: not compared) for
    util, load, runnable, util_est. ``totals``: ``{"updates", "exact"}``.

    ``computed``: for a trace without the kernel's values (a board's, no probe records
    and no LISA ``sched_pelt_*`` events), what the replay computed per entity —
    ``updates``, ``util_max``, ``end_util``, ``end_load``, ``end_runnable`` (int64),
    ``util_mean`` and ``end_util_est`` (float64, NaN for a cfs_rq), ``from_zero``
    (bool: state before the trace taken as zero) and, for a what-if profile, the same
    under the traced kernel's profile as ``kernel_*`` columns; empty otherwise.

    The replay module reports these per-entity aggregates; per-update recomputed
    signals are not part of its public API yet.
    """

    def __init__(self, report):
        self.report = report

    def __repr__(self):
        t = self.report["totals"]
        return (
            f"ReplayResult(trace={self.report['trace']!r}, mode={self.report['mode']!r}, "
            f"updates={t['updates']}, exact={t['exact']})"
        )

    @property
    def totals(self):
        return dict(self.report["totals"])

    @property
    def entities(self):
        rows = []
        for e in self.report["entities"]:
            row = {"entity": e["entity"], "updates": e["updates"], "exact": e["exact"]}
            for kind in ("max_abs_err", "mean_abs_err"):
                for f in FIELDS:
                    row[f"{kind}_{f}"] = e[kind][f]
            rows.append(row)
        cols = ["entity", "updates", "exact"] + [
            f"{k}_{f}" for k in ("max_abs_err", "mean_abs_err") for f in FIELDS
        ]
        df = pd.DataFrame(rows, columns=cols)
        types = {c: "float64" for c in cols[3:]}
        types.update(updates="int64", exact="int64")
        return df.astype(types)

    @property
    def computed(self):
        cols = ["entity", "updates", "util_mean", "util_max", "end_util", "end_load",
                "end_runnable", "end_util_est", "from_zero"]
        rows = []
        for c in self.report.get("computed", []):
            sides = [("", c)] + ([("kernel_", c["kernel"])] if "kernel" in c else [])
            row = {"entity": c["entity"]}
            for prefix, s in sides:
                row.update({
                    f"{prefix}updates": s["updates"], f"{prefix}util_mean": s["util_mean"],
                    f"{prefix}util_max": s["util_max"], f"{prefix}end_util": s["end"]["util"],
                    f"{prefix}end_load": s["end"]["load"],
                    f"{prefix}end_runnable": s["end"]["runnable"],
                    f"{prefix}end_util_est": s["end"]["util_est"],
                    f"{prefix}from_zero": s["from_zero"],
                })
            rows.append(row)
        if any("kernel_updates" in r for r in rows):
            cols += ["kernel_" + c for c in cols[1:]]
        df = pd.DataFrame(rows, columns=cols)
        types = {}
        for c in cols[1:]:
            base = c.removeprefix("kernel_")
            types[c] = {"util_mean": "float64", "end_util_est": "float64",
                        "from_zero": "bool"}.get(base, "int64")
        return df.astype(types)


def replay(trace_path, profile=None, kernel=None, infer=False):
    """Replay a ``trace-cmd report`` text (or ``.gz``) through the core, as
    ``schedmath replay TRACE --json [--profile P] [--kernel V] [--infer]`` does."""
    text = _schedmath.replay_json(
        os.fspath(trace_path),
        None if profile is None else str(profile),
        None if kernel is None else str(kernel),
        bool(infer),
    )
    return ReplayResult(json.loads(text))
