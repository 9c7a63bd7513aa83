# SPDX-License-Identifier: GPL-2.0-only
"""``schedmath.replay`` (host/src/replay) on a real capture: exact per update."""

import pytest

from conftest import PELT, cases

import schedmath
from schedmath import _schedmath


def test_replay_is_in_every_wheel():
    assert hasattr(_schedmath, "replay_json")
    assert "replay" in schedmath.__all__


def probe_trace(case):
    """One 6.12 task chain as the lab probe's `schedmath__pelt_update` trace text."""

    def state(p, s):
        keys = [("lut", "last_update_time"), ("load_sum", "load_sum"),
                ("runnable_sum", "runnable_sum"), ("util_sum", "util_sum"),
                ("period_contrib", "period_contrib"), ("load_avg", "load_avg"),
                ("runnable_avg", "runnable_avg"), ("util_avg", "util_avg"), ("ue", "util_est")]
        return "".join(f" {p}_{k}={s.get(f, 0)}" for k, f in keys)

    lines = ["cpus=2"]
    before = case["in"]["init"]
    for i, (op, after) in enumerate(zip(case["in"]["ops"], case["out"]["after"])):
        lw = op["load_weight"]
        if op["op"] == "__update_load_avg_blocked_se":
            f, load, runnable, running, delayed = "blocked_se", 0, 0, 0, 0
        else:
            f, load, running = "se", op["on_rq"], op["is_curr"]
            delayed = op.get("sched_delayed", 0)
            runnable = 0 if delayed else load
        lines.append(
            f"          rt-app-153   [001]  10.{i:06}: schedmath__pelt_update: fn={f} kind=task "
            f"cpu=1 pid=153 comm=rt-app path=/ now={op['now']} lw={lw} weight={max(lw >> 10, 2)} "
            f"load={load} runnable={runnable} running={running} on_rq={load} delayed={delayed} "
            f"nr_queued=-1 nr_runnable=-1 ret={after['ret']}{state('b', before)}{state('a', after)}"
        )
        before = after
    return "\n".join(lines) + "\n", len(case["in"]["ops"])


def test_replay_of_a_6_12_capture_is_exact(tmp_path):
    case = max(cases(PELT / "realkernel612_se_sequence.jsonl"), key=lambda c: len(c["in"]["ops"]))
    text, n = probe_trace(case)
    path = tmp_path / "6.12.117" / "trace.txt"
    path.parent.mkdir()
    path.write_text(text)
    r = schedmath.replay(path)
    assert r.report["mode"] == "probe"
    assert r.totals == {"updates": n, "exact": n}
    e = r.entities
    assert e["entity"].tolist() == ["pid 153 rt-app"]
    assert e[["updates", "exact"]].iloc[0].tolist() == [n, n]
    assert e["max_abs_err_util"].iloc[0] == 0.0


def test_replay_missing_trace(tmp_path):
    with pytest.raises(schedmath.SchedmathError) as e:
        schedmath.replay(tmp_path / "none.txt")
    assert str(tmp_path / "none.txt") in str(e.value)


def test_a_board_trace_without_kernel_values_gives_computed_signals(tmp_path):
    """6.1 `periodic-25pct-16ms` with the answer key's lines removed: the replay's own
    numbers, as pandas reads them (host/tests/replay.rs checks the same run)."""
    import gzip

    from conftest import FIXTURES

    cap = FIXTURES / "lab" / "6.1.0-57-amd64" / "periodic-25pct-16ms" / "report.txt.gz"
    with gzip.open(cap, "rt") as f:
        lines = [l for l in f if ": schedmath__pelt_update:" not in l and ": lisa__" not in l]
    path = tmp_path / "board.txt"
    path.write_text("".join(lines))
    r = schedmath.replay(path, kernel="6.1.0-57")
    assert r.totals == {"updates": 0, "exact": 0}
    assert len(r.entities) == 0
    c = r.computed.set_index("entity")
    assert str(c["updates"].dtype) == "int64" and str(c["util_mean"].dtype) == "float64"
    p = c.loc["pid 126 rt-app"]
    assert (p["updates"], p["end_util"], p["util_mean"]) == (758, 263, 258.028)
    assert not p["from_zero"] and c.loc["cpu1 /", "from_zero"]
    assert c["end_util_est"].isna()["cpu1 /"]
    w = schedmath.replay(path, kernel="6.1.0-57", profile="pelt-hl8").computed.set_index("entity")
    # Halflife 8 beside the traced kernel's 32: max 478 against 389, same end (263).
    row = w.loc["pid 126 rt-app"]
    assert (row["util_max"], row["kernel_util_max"], row["kernel_end_util"]) == (478, 389, 263)
