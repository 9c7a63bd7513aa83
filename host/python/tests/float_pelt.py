# SPDX-License-Identifier: GPL-2.0-only
"""A float PELT model, evaluated row by row through pandas (``DataFrame.apply``): the
kind of reference LISA users run today (lisa.pelt.simulate_pelt is one). Written here
from the PELT definition, for comparison only — schedmath never uses it.

The model: a geometric moving average over 1024 * 1024 ns windows on absolute window
boundaries, ``s' = y * s + (1 - y) * busy_fraction`` at each window end, ``y**32 = 1/2``,
and inside a window the value the average would take if the window ended now, weighted
by how much of it has elapsed. No integer truncation anywhere.
"""

import math

import numpy as np
import pandas as pd

WINDOW = 1024 * 1024 * 1e-9
Y = 0.5 ** (1 / 32)


def float_pelt(activations, init=0.0, clock=None):
    """Float util (0..1024) at each row; row i's value holds until row i+1 (the update at
    row i uses row i-1's state, as the kernel does)."""
    df = pd.DataFrame({"running": activations.astype(float).shift().to_numpy()}, index=activations.index)
    df["clock"] = np.asarray(clock if clock is not None else activations.index, dtype=float)
    df["prev"] = df["clock"].shift()
    state = {"s": init / 1024.0, "acc": None, "out": init}

    def row(r):
        if math.isnan(r["prev"]):
            c = r["clock"]
            state["acc"] = 0.0
            state["start"] = c
            return state["out"]
        run, c, p = r["running"], r["clock"], r["prev"]
        wp, wc = math.floor(p / WINDOW), math.floor(c / WINDOW)
        if wc == wp:
            state["acc"] += run * (c - p) / WINDOW
        else:
            state["acc"] += run * ((wp + 1) * WINDOW - p) / WINDOW
            s = Y * state["s"] + (1 - Y) * state["acc"]
            s = run + (s - run) * Y ** (wc - wp - 1)
            state["s"] = s
            state["acc"] = run * (c - wc * WINDOW) / WINDOW
        frac = (c - math.floor(c / WINDOW) * WINDOW) / WINDOW
        s = state["s"]
        state["out"] = 1024.0 * (s * (1 - (1 - Y) * frac) + (1 - Y) * state["acc"])
        return state["out"]

    return df.apply(row, axis=1)
