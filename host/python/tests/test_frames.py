# SPDX-License-Identifier: GPL-2.0-only
"""Shapes, dtypes and indexes of what the package returns."""

import numpy as np
import pandas as pd
import pytest

from conftest import FIXTURES, PELT

import schedmath
from schedmath import pelt

ACTS = pd.Series([1, 0, 1, 0, 1, 0], index=[0.0, 0.004, 0.016, 0.020, 0.032, 0.036])


def test_util_series_keeps_the_index_and_is_int64():
    s = pelt.simulate(ACTS)
    assert s.name == "util" and s.dtype == np.int64
    assert s.index.equals(ACTS.index)
    # 4 ms running from 0, then decay over 12 ms of sleep, and so on.
    assert s.tolist() == [0, 81, 63, 139, 108, 181]


def test_all_signals_frame():
    df = pelt.simulate(ACTS, signal="all")
    assert list(df.columns) == ["util", "load", "runnable", "clock_pelt", "tick"]
    assert df.dtypes.tolist() == [np.int64] * 4 + [np.bool_]
    assert df.shape == (6, 5)
    # A lone nice-0 task: load and runnable equal util.
    assert (df["load"] == df["util"]).all() and (df["runnable"] == df["util"]).all()
    assert df["clock_pelt"].tolist() == [0, 4_000_000, 16_000_000, 20_000_000, 32_000_000, 36_000_000]


def test_waiting_counts_in_load_and_runnable_not_util():
    # Runnable but not running from 0 to 4 ms (on_rq 1, activations 0), then asleep.
    a = pd.Series([0, 0], index=[0.0, 0.004])
    df = pelt.simulate(a, on_rq=[1, 0], signal="all")
    assert df.iloc[1][["util", "load", "runnable"]].tolist() == [0, 81, 81]


def test_ticks_add_rows_inside_running_intervals():
    a = pd.Series([1, 0], index=[0.001, 0.0125])
    df = pelt.simulate(a, tick_hz=250, signal="all")
    assert df.index.tolist() == [0.001, 0.004, 0.008, 0.012, 0.0125]
    assert df["tick"].tolist() == [False, True, True, True, False]
    assert df["util"].tolist() == [0, 61, 137, 208, 208]
    # The kernel recomputes the averages only at an update that crosses a period
    # boundary (k * 1.048576 ms: 11.53, 12.58 ms). 12.0 -> 12.5 ms crosses none, so the
    # ticked signal keeps 208; without ticks the one update at 12.5 ms crosses 11.53 ms
    # and reports the newer partial period.
    assert pelt.simulate(a).tolist() == [0, 216]


def test_timedelta_index_is_exact_nanoseconds():
    a = pd.Series([1, 0], index=pd.to_timedelta([1_000_001, 5_000_003], unit="ns"))
    df = pelt.simulate(a, signal="all", tick_hz=1000)
    assert isinstance(df.index, pd.TimedeltaIndex)
    # Ticks strictly inside the running interval, at k * TICK_NSEC (1 ms at 1000 Hz).
    assert df["clock_pelt"].tolist() == [1_000_001, 2_000_000, 3_000_000, 4_000_000, 5_000_000, 5_000_003]


def test_capacity_scales_the_clock_while_running_and_syncs_it_while_idle():
    df = pelt.simulate(ACTS, capacity=512, signal="all")
    assert df["clock_pelt"].tolist() == [0, 2_000_000, 16_000_000, 18_000_000, 32_000_000, 34_000_000]
    assert df["util"].tolist() == [0, 41, 31, 71, 53, 92]


def test_capacity_lost_idle_time_after_a_saturated_run():
    # 1 s always running at capacity 512 saturates util_sum, so at idle entry
    # update_idle_rq_clock_pelt() records the 0.5 s the PELT clock fell behind as lost
    # idle time: after the sleep the PELT clock is 0.6 s, not the task clock's 1.1 s.
    a = pd.Series([1, 0, 1, 0], index=[0.0, 1.0, 1.1, 1.2])
    df = pelt.simulate(a, capacity=512, signal="all")
    assert df["clock_pelt"].tolist() == [0, 500_000_000, 600_000_000, 650_000_000]
    assert df["util"].tolist() == [0, 1023, 129, 705]


def test_index_adds_update_instants():
    s = pelt.simulate(ACTS, index=pd.Index([0.002, 0.010]))
    assert s.index.tolist() == [0.0, 0.002, 0.004, 0.010, 0.016, 0.020, 0.032, 0.036]
    # Extra updates change only which period boundaries split the sums: same values here.
    assert s.loc[[0.004, 0.036]].tolist() == [81, 181]


def test_half_life_tables():
    s8 = pelt.simulate(ACTS, half_life=8)
    # 4 ms is 3.8 periods, about half an 8-period halflife: 1024 * (1 - 2**-0.477) = 288.
    assert s8.tolist() == [0, 288, 107, 364, 135, 385]


def test_simulate_result_frames():
    r = schedmath.simulate(
        FIXTURES / "platforms" / "rk3399.toml",
        FIXTURES / "scenarios" / "two-periodic.toml",
        duration=1,
    )
    m = r.metrics
    assert m["platform"] == "rk3399" and m["profile"] == "mainline" and m["duration_s"] == 1.0
    t = r.tasks
    assert t.index.tolist() == ["mid-0", "tiny-0"]
    assert t.dtypes.to_dict() == {
        "util_avg_end": np.int64,
        "work_done_ms": np.float64,
        "deadline_misses": np.int64,
        "util_ramp_ms": np.float64,
        "util_decay_ms": np.float64,
    }
    res = r.task_cpu_residency
    assert res.shape == (2, 6) and (res.dtypes == np.float64).all()
    assert res.loc["tiny-0", 1] == pytest.approx(0.099922)
    f = r.freq_residency
    assert list(f.columns) == ["domain", "khz", "seconds"]
    assert set(f["domain"]) == {"a53", "a72"} and f["khz"].dtype == np.int64
    idle = r.idle
    assert list(idle.columns) == ["cpu", "state", "residency_s", "usage", "miss_above", "miss_below"]
    assert len(idle) == 6 * 3 and (idle.drop(columns="residency_s").dtypes == np.int64).all()


def test_simulate_matches_the_cli_json():
    r = schedmath.simulate(
        FIXTURES / "platforms" / "rk3399.toml",
        FIXTURES / "scenarios" / "two-periodic.toml",
        duration=1,
        seed=3,
    )
    assert r.metrics["seed"] == 3
    assert r.metrics["task_cpu_residency_s"]["tiny-0"] == [0.0, 0.099922, 0.0, 0.0, 0.0, 0.0]


def test_verify_frame():
    df = schedmath.verify(PELT)
    assert list(df.columns) == ["suite", "variant", "path", "cases", "passed", "failed", "failures"]
    assert (df[["cases", "passed", "failed"]].dtypes == np.int64).all()
    assert len(df) == len(list(PELT.glob("*.jsonl")))
    assert (df["failed"] == 0).all() and (df["cases"] > 0).all()
    assert df.set_index("suite").loc["pelt/realkernel_se_sequence", "cases"] == 12
    assert df["failures"].map(len).sum() == 0


def test_verify_suite_filter_and_failure_lines(tmp_path):
    src = (PELT / "decay_load.jsonl").read_text().splitlines()
    # One case whose expected value is off by one: the CLI's mismatch line comes back.
    import json

    case = json.loads(src[1])
    case["out"]["ret"] += 1
    (tmp_path / "decay_load.jsonl").write_text("\n".join([src[0], json.dumps(case)]) + "\n")
    df = schedmath.verify(tmp_path, suite="decay")
    assert df[["cases", "passed", "failed"]].iloc[0].tolist() == [1, 0, 1]
    (line,) = df["failures"].iloc[0]
    assert line.startswith(f"mismatch: pelt/decay_load  {case['id']}  -  ret  expected ")
