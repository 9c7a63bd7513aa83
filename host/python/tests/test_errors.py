# SPDX-License-Identifier: GPL-2.0-only
"""Bad input raises with the CLI's text (file, line, field); bad arguments raise
ValueError naming the argument and row."""

import shutil
import subprocess

import pandas as pd
import pytest

from conftest import FIXTURES, REPO

import schedmath
from schedmath import pelt

RK3399 = FIXTURES / "platforms" / "rk3399.toml"
TWO = FIXTURES / "scenarios" / "two-periodic.toml"


def cli():
    """The `schedmath` binary of this checkout, if cargo built it."""
    for p in (REPO / "target" / "debug" / "schedmath", REPO / "target" / "release" / "schedmath"):
        if p.exists():
            return p
    return shutil.which("schedmath")


def raised(f):
    with pytest.raises(schedmath.SchedmathError) as e:
        f()
    return str(e.value)


@pytest.fixture
def bad_platform(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('name = "x"\ndescription = 3\n')
    return p


@pytest.fixture
def bad_workload(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"tasks": {"t": {"run": "x"}}}\n')
    return p


def test_bad_platform_names_file_line_and_field(bad_platform):
    msg = raised(lambda: schedmath.simulate(bad_platform, TWO))
    assert msg == f"{bad_platform}:2:15: invalid type: integer `3`, expected a string"


def test_bad_workload_names_file_line_and_field(bad_workload):
    msg = raised(lambda: schedmath.simulate(RK3399, bad_workload))
    assert msg == f"{bad_workload}:1:25: tasks.t.run: expected an integer, found a string: \"run\" is a run event (the key starts with \"run\"), and rt-app exits on a mismatched event"


def test_unknown_profile():
    msg = raised(lambda: schedmath.simulate(RK3399, TWO, profile="nope"))
    assert msg.startswith("--profile: unknown profile `nope` (known: mainline ")


def test_verify_missing_directory(tmp_path):
    missing = tmp_path / "none"
    assert raised(lambda: schedmath.verify(missing)) == f"{missing}: no such file or directory"


def test_verify_bad_line_is_a_row_not_an_exception(tmp_path):
    head = (FIXTURES / "kernel" / "pelt" / "decay_load.jsonl").read_text().splitlines()[0]
    (tmp_path / "s.jsonl").write_text(head + "\n{not json\n")
    df = schedmath.verify(tmp_path)
    assert df[["cases", "passed", "failed"]].iloc[0].tolist() == [1, 0, 1]
    assert df["failures"].iloc[0][0].startswith(f"error: {tmp_path / 's.jsonl'}:2: ")


@pytest.mark.parametrize("which", ["platform", "workload", "verify"])
def test_same_text_as_the_cli(which, bad_platform, bad_workload, tmp_path):
    exe = cli()
    if exe is None:
        pytest.skip("the schedmath CLI is not built (cargo build -p schedmath-host)")
    if which == "platform":
        args, call = ["simulate", "--platform", bad_platform, "--workload", TWO], lambda: schedmath.simulate(bad_platform, TWO)
    elif which == "workload":
        args, call = ["simulate", "--platform", RK3399, "--workload", bad_workload], lambda: schedmath.simulate(RK3399, bad_workload)
    else:
        args, call = ["verify", "--fixtures", tmp_path / "none"], lambda: schedmath.verify(tmp_path / "none")
    r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr == f"error: {raised(call)}\n"


@pytest.mark.parametrize(
    "kwargs,text",
    [
        (dict(windowless=True), "windowless"),
        (dict(window=0.001), "window: the kernel's PELT period"),
        (dict(scale=100), "scale: the kernel's scale is 1024"),
        (dict(half_life=20), "half_life: 20"),
        (dict(signal="x"), "signal: 'x'"),
        (dict(clock=[0.0, 1.0], capacity=512), "clock is already the PELT clock"),
        (dict(on_rq=[1, 1, 1]), "on_rq: 3 values for 2 rows"),
        (dict(weight=-1), "weight: row 0: -1.0 is not an integer >= 0"),
    ],
)
def test_pelt_argument_errors(kwargs, text):
    a = pd.Series([1, 0], index=[0.0, 0.01])
    with pytest.raises(ValueError, match=None) as e:
        pelt.simulate(a, **kwargs)
    assert text in str(e.value)


def test_pelt_activation_values():
    with pytest.raises(ValueError) as e:
        pelt.simulate(pd.Series([1, 2], index=[0.0, 0.01]))
    assert str(e.value) == "activations: row 1 (0.01): 2.0 is not 0 or 1"
    with pytest.raises(ValueError) as e:
        pelt.simulate(pd.Series([1, 0], index=[0.0, -0.01]))
    assert str(e.value) == "activations index: row 1: -0.01 is not a time >= 0 s"
    with pytest.raises(TypeError):
        pelt.simulate([1, 0])


def test_time_going_backwards_with_capacity():
    with pytest.raises(ValueError) as e:
        pelt.simulate(pd.Series([1, 0], index=[0.01, 0.0]), capacity=512)
    assert "row 1: time goes backwards (0 ns after 10000000 ns)" in str(e.value)
