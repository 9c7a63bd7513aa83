# SPDX-License-Identifier: GPL-2.0-only
"""``SimResult.signals`` and ``.events``: shapes, dtypes, and values equal to the run's
trace (the events frame is the ``--trace FILE.csv`` text; with the CLI built, the
``.txt`` trace of the same run is compared too)."""

import subprocess

import numpy as np
import pandas as pd
import pytest

from conftest import FIXTURES
from test_errors import cli

import schedmath

M1 = FIXTURES / "platforms" / "m1pro-8c.toml"
BUSY = FIXTURES / "scenarios" / "busy-plus-4x5pct.toml"


@pytest.fixture(scope="module")
def run():
    return schedmath.simulate(M1, BUSY, duration=1)


def test_signals_schema(run):
    s = run.signals
    assert list(s.columns) == ["time", "time_ns", "entity", "signal", "value"]
    assert s.dtypes.tolist() == [np.float64, np.int64, "category", "category", np.int64]
    assert s["time_ns"].is_monotonic_increasing
    assert set(s["signal"].unique()) == {"util_avg", "util_est", "frequency", "idle_state"}
    # 5 tasks and 8 CPUs.
    ents = set(s["entity"].unique())
    assert {"busy-0-1", "small-3-5"} <= ents and {f"cpu{c}" for c in range(8)} <= ents
    assert (s["time"] == s["time_ns"] / 1e9).all()
    # Busy saturates: its last util_avg is near 1024 (and never above it).
    busy = s[(s.entity == "busy-0-1") & (s.signal == "util_avg")]["value"]
    assert 1000 <= busy.iloc[-1] <= 1024


def test_events_schema(run):
    e = run.events
    assert list(e.columns[:5]) == ["time_ns", "cpu", "event", "comm", "pid"]
    assert e["time_ns"].dtype == np.int64 and e["cpu"].dtype == np.int64
    assert e["time_ns"].is_monotonic_increasing
    names = set(e["event"])
    for n in ["sched_switch", "cpu_frequency", "cpu_idle", "lisa__sched_pelt_se", "schedmath__sugov"]:
        assert n in names


def test_signals_are_the_recorded_events(run):
    s, e = run.signals, run.events
    f = e[e.event == "cpu_frequency"]
    freq = s[s.signal == "frequency"]
    # Every CPU's frequency steps are its cpu_frequency events (same instant, same kHz).
    for cpu in range(8):
        ev = f[f.cpu_id == cpu][["time_ns", "state"]].drop_duplicates("time_ns", keep="last")
        sig = freq[freq.entity == f"cpu{cpu}"]
        assert sig["time_ns"].tolist() == ev["time_ns"].tolist()
        assert sig["value"].tolist() == ev["state"].astype("int64").tolist()
    pelt = e[(e.event == "lisa__sched_pelt_se") & (e.pid == 1)]
    util = s[(s.entity == "busy-0-1") & (s.signal == "util_avg")]
    assert util["value"].tolist() == pelt["util"].astype("int64").tolist()


def test_not_recorded_says_so():
    r = schedmath.simulate(M1, BUSY, duration=1, record=False)
    with pytest.raises(ValueError, match="not recorded"):
        r.signals


def test_a_value_equals_the_cli_trace(run, tmp_path):
    exe = cli()
    if exe is None:
        pytest.skip("the schedmath CLI is not built (cargo build -p schedmath-host)")
    txt = tmp_path / "run.txt"
    subprocess.run(
        [exe, "simulate", "--platform", M1, "--workload", BUSY, "--duration", "1", "--trace", txt],
        check=True,
        capture_output=True,
    )
    last = [l for l in txt.read_text().splitlines() if " cpu_frequency: " in l and l.endswith("cpu_id=5")][-1]
    khz = int(last.split("state=")[1].split()[0])
    s = run.signals
    assert s[(s.entity == "cpu5") & (s.signal == "frequency")]["value"].iloc[-1] == khz
