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
