# SPDX-License-Identifier: GPL-2.0-only
"""How far a float PELT model (tests/float_pelt.py) is from the kernel's integers on the
same update instants: the real-kernel captures and a 10 000-activation periodic task.
schedmath's error on the captures is 0 (test_realkernel.py); the float model's is not."""

import numpy as np
import pandas as pd

from conftest import PELT, capture_series, cases
from float_pelt import float_pelt

from schedmath import pelt


def periodic(n, period=0.016, duty=0.25):
    """n activation edges of a periodic task: run duty*period, sleep the rest."""
    edges = np.arange(n) // 2 * period + np.where(np.arange(n) % 2, duty * period, 0.0)
    return pd.Series(np.arange(n) % 2 == 0, index=edges).astype(int)


def float_errors(series, exact, **kw):
    f = float_pelt(series, **kw)
    return (f.to_numpy() - exact.to_numpy()).astype(float)


def test_float_model_error_on_the_6_1_captures():
    # The task chains of Linux 6.1: one task per CPU, so the activations are is_curr.
    err = []
    for case in cases(PELT / "realkernel_se_sequence.jsonl"):
        kwargs, expected = capture_series(case)
        e = float_errors(kwargs["activations"], expected["util"], init=expected["util"].iloc[0])
        err.append(e[1:])
    err = np.abs(np.concatenate(err))
    print(f"\nfloat model vs Linux 6.1 util_avg: {err.size} updates, "
          f"mean |error| {err.mean():.2f}, max {err.max():.2f}, "
          f"{(err >= 0.5).mean() * 100:.1f} % off by 0.5 or more")
    assert err.size == 2195
    # Measured (units of util, 0..1024); IEEE doubles, so the same on every machine.
    assert round(err.mean(), 2) == 0.81
    assert round(err.max(), 2) == 14.81


def test_float_model_error_on_a_periodic_task():
    acts = periodic(10_000)
    exact = pelt.simulate(acts)
    err = np.abs(float_errors(acts, exact))
    print(f"\nfloat model vs schedmath, 25 %/16 ms, 10 000 edges: "
          f"mean |error| {err.mean():.2f}, max {err.max():.2f}")
    # Steady state: trough at the last wake-up, peak at the last sleep.
    assert exact.iloc[-2:].tolist() == [225, 288]
    assert round(err.mean(), 2) == 0.35
    assert round(err.max(), 2) == 1.04
