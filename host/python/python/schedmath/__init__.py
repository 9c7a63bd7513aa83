# SPDX-License-Identifier: GPL-2.0-only
"""schedmath: the Linux scheduler's integer arithmetic, bit for bit, for notebooks.

* ``schedmath.pelt.simulate(activations, ...)``: kernel-exact PELT with the arguments
  of LISA's ``simulate_pelt``.
* ``schedmath.simulate(platform, workload, ...)``: the simulator's metrics.
* ``schedmath.verify(fixtures_dir)``: the kernel fixture suites as a DataFrame.

Everything is computed by the Rust core and host library (no second implementation
in Python); nothing is fetched at import time. Bad input raises ``SchedmathError``
with the CLI's message (file, line, field).
"""

import math
import os

import pandas as pd

from . import _schedmath, pelt
from ._schedmath import SchedmathError
from ._sim import SimResult

from ._replay import ReplayResult, replay

__all__ = ["ReplayResult", "SchedmathError", "SimResult", "pelt", "replay", "simulate", "verify"]


def simulate(platform, workload, profile="mainline", duration=None, seed=0, hz=250, record=True):
    """Run ``workload`` (rt-app JSON or a schedmath TOML scenario) on ``platform`` (a
    platform TOML file) under ``profile`` (``mainline``, ``base+patch`` names as the
    CLI's ``--profile``) for ``duration`` seconds (default: the workload's
    ``duration_s``, else 10), as ``schedmath simulate --json`` does.

    Returns a :class:`SimResult`: ``.metrics`` (the CLI's JSON object as a dict),
    DataFrame views of it and, with ``record`` (the default), ``.signals`` and
    ``.events`` from the run's recording (the one ``--trace`` and ``--plot`` write).
    ``record=False`` skips the recording (faster, less memory).
    """
    duration_ns = None
    if duration is not None:
        if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
            raise ValueError(f"duration: {duration!r} is not a number of seconds > 0")
        duration_ns = int(round(duration * 1e9))
    text, recording = _native().simulate_json(
        os.fspath(platform),
        os.fspath(workload),
        str(profile),
        duration_ns,
        int(seed),
        int(hz),
        bool(record),
    )
    return SimResult.from_json(text, recording)


def verify(fixtures_dir, suite=None, max_report=5):
    """Run every kernel fixture suite (``*.jsonl``) under ``fixtures_dir`` (a directory
    or one file, or a list of them) as ``schedmath verify --fixtures DIR`` does.

    Returns one row per suite file: ``suite``, ``variant``, ``path``, ``cases``,
    ``passed``, ``failed`` (int64) and ``failures`` (the CLI's mismatch/error lines, at
    most ``max_report``).
    """
    dirs = fixtures_dir if isinstance(fixtures_dir, (list, tuple)) else [fixtures_dir]
    rows = _native().verify_suites([os.fspath(d) for d in dirs], suite, int(max_report))
    df = pd.DataFrame(
        [
            {
                "suite": s,
                "variant": v,
                "path": p,
                "cases": c,
                "passed": ok,
                "failed": c - ok,
                "failures": f,
            }
            for p, s, v, c, ok, f in rows
        ],
        columns=["suite", "variant", "path", "cases", "passed", "failed", "failures"],
    )
    return df.astype({"cases": "int64", "passed": "int64", "failed": "int64"})


def _native():
    from . import _schedmath

    return _schedmath
