# SPDX-License-Identifier: GPL-2.0-only
"""Shared helpers: the repository's fixtures and the real-kernel captures as the
series a LISA user would build from a trace."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures"
PELT = FIXTURES / "kernel" / "pelt"
REALKERNEL = sorted(PELT.glob("realkernel*_sequence.jsonl"))


def cases(path):
    """(case dict) for every case line of a suite file."""
    lines = path.read_text().splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def capture_series(case):
    """One capture chain → (kwargs for schedmath.pelt.simulate, expected DataFrame).

    Row 0 is the recorded state's `last_update_time`; row i+1 is op i's `now`, and row
    i carries op i's arguments (the state of the interval that op closes). Times go in
    as float seconds, as in a LISA DataFrame (`now * 1e-9`).
    """
    init = case["in"]["init"]
    ops = case["in"]["ops"]
    after = case["out"]["after"]
    ns = np.array([init["last_update_time"]] + [o["now"] for o in ops], dtype=np.int64)
    seconds = ns * 1e-9
    assert (np.rint(seconds * 1e9).astype(np.int64) == ns).all(), "float seconds lose ns"
    cfs = case["fn"] == "cfs_rq_sequence"

    def col(f, default=0):
        return np.array([f(o) for o in ops] + [default], dtype=np.int64)

    blocked = lambda o: o["op"] == "__update_load_avg_blocked_se"  # noqa: E731
    if cfs:
        running = col(lambda o: o["has_curr"])
        on_rq = col(lambda o: o["h_nr_runnable"])
    else:
        running = col(lambda o: 0 if blocked(o) else o["is_curr"])
        on_rq = col(lambda o: 0 if blocked(o) else o["on_rq"])
    assert all(o["load_weight"] % 1024 == 0 for o in ops)
    weight = col(lambda o: o["load_weight"] >> 10)
    delayed = col(lambda o: o.get("sched_delayed", 0))
    idx = pd.Index(seconds, name="time")
    kwargs = dict(
        activations=pd.Series(running, index=idx),
        init={k: v for k, v in init.items() if k != "util_est"},
        entity="cfs_rq" if cfs else "se",
        on_rq=on_rq,
        weight=weight,
        sched_delayed=delayed,
        signal="all",
    )
    expected = pd.DataFrame(
        {
            "util": [init["util_avg"]] + [a["util_avg"] for a in after],
            "load": [init["load_avg"]] + [a["load_avg"] for a in after],
            "runnable": [init["runnable_avg"]] + [a["runnable_avg"] for a in after],
        },
        index=idx,
        dtype="int64",
    )
    return kwargs, expected
