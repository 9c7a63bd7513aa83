#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The README figure: util_avg of a real Linux 6.1 task (capture run1-c: 50 % of 100 ms,
fixtures/kernel/pelt/realkernel_se_sequence.jsonl) as the kernel recorded it, as
schedmath.pelt.simulate computes it from the update instants, and as the float model
(tests/float_pelt.py) computes it; below, each model's error per update.

Run from a venv with the wheel and matplotlib installed:
    python host/python/scripts/plot_realkernel.py [OUT.svg|OUT.png]
Default output: host/python/docs/realkernel-pelt.svg.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

from conftest import PELT, capture_series, cases  # noqa: E402
from float_pelt import float_pelt  # noqa: E402

from schedmath import pelt  # noqa: E402

CASE = "run1-c-se112-chain0"
ZOOM_S = 0.45


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "docs" / "realkernel-pelt.svg"
    (case,) = [c for c in cases(PELT / "realkernel_se_sequence.jsonl") if c["id"] == CASE]
    kwargs, kernel = capture_series(case)
    exact = pelt.simulate(**kwargs)["util"]
    flt = float_pelt(kwargs["activations"], init=kernel["util"].iloc[0])
    t = kernel.index - kernel.index[0]

    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(9, 6), gridspec_kw={"height_ratios": [3, 1.6]}
    )
    top.step(t, kernel["util"], where="post", color="black", lw=2.8, label="Linux 6.1 (recorded)")
    top.step(t, exact, where="post", color="tab:orange", lw=1.1, label="schedmath.pelt.simulate")
    top.step(t, flt, where="post", color="tab:blue", lw=0.9, ls="--", label="float model")
    top.set_xlim(0, ZOOM_S)
    top.set_xlabel("seconds (first %.2f s)" % ZOOM_S)
    top.set_ylabel("util_avg")
    top.set_title(f"Task util_avg, 50 % of 100 ms on Linux 6.1 ({len(t) - 1} PELT updates)")
    top.legend(loc="lower center", ncol=3, fontsize="small")
    bottom.plot(t, exact - kernel["util"], color="tab:orange", lw=1.2, label="schedmath − kernel")
    bottom.plot(t, flt - kernel["util"], color="tab:blue", lw=0.8, label="float − kernel")
    bottom.axhline(0, color="black", lw=0.5)
    bottom.set_ylabel("error")
    bottom.set_xlabel("seconds (whole capture)")
    bottom.legend(loc="upper left", ncol=2, fontsize="small")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, **({"metadata": {"Date": None}} if out.suffix == ".svg" else {}))
    err = (flt - kernel["util"]).abs()
    print(f"{out}: schedmath max |error| {int((exact - kernel['util']).abs().max())}, "
          f"float mean |error| {err.mean():.2f}, max {err.max():.2f}")


if __name__ == "__main__":
    main()
