#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per-activation cost of schedmath.pelt.simulate vs a pandas row-wise float PELT
(tests/float_pelt.py) on the same 10 000-activation series (25 % of 16 ms).

Run from a venv with the wheel installed:  python host/python/scripts/bench_pelt.py
Prints best-of-N wall times (time.perf_counter). Not a test: numbers go in BENCHMARKS.md.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from float_pelt import float_pelt  # noqa: E402
from test_float_reference import periodic  # noqa: E402

from schedmath import pelt  # noqa: E402


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    n = 10_000
    acts = periodic(n)
    exact = best(lambda: pelt.simulate(acts), 50)
    ticks = best(lambda: pelt.simulate(acts, tick_hz=250), 50)
    ref = best(lambda: float_pelt(acts), 5)
    print(f"series: {n} activations (25 % of 16 ms)")
    print(f"schedmath.pelt.simulate           : {exact * 1e3:8.2f} ms  {exact / n * 1e9:8.0f} ns/activation")
    print(f"schedmath.pelt.simulate tick_hz=250: {ticks * 1e3:8.2f} ms  {ticks / n * 1e9:8.0f} ns/activation")
    print(f"pandas row-wise float model        : {ref * 1e3:8.2f} ms  {ref / n * 1e9:8.0f} ns/activation")
    print(f"speed-up: {ref / exact:.0f}x")


if __name__ == "__main__":
    main()
