# SPDX-License-Identifier: GPL-2.0-only
"""schedmath.pelt.simulate reproduces every real-kernel capture (Linux 6.1 and 6.12
running under qemu, fixtures/kernel/pelt/realkernel*), update by update, when given the
capture's update instants as a LISA-style series of float seconds."""

import pandas as pd
import pytest

from conftest import REALKERNEL, capture_series, cases

from schedmath import pelt

CASES = [(p.stem, c) for p in REALKERNEL for c in cases(p)]


def test_every_capture_suite_is_found():
    assert [p.stem for p in REALKERNEL] == [
        "realkernel612_cfs_rq_sequence",
        "realkernel612_se_sequence",
        "realkernel_cfs_rq_sequence",
        "realkernel_se_sequence",
    ]
    assert len(CASES) == 12 + 599 + 27 + 40


@pytest.mark.parametrize("suite,case", CASES, ids=[f"{s}:{c['id']}" for s, c in CASES])
def test_capture_util_load_runnable_per_update(suite, case):
    kwargs, expected = capture_series(case)
    got = pelt.simulate(**kwargs)
    pd.testing.assert_frame_equal(got[["util", "load", "runnable"]], expected)
    # The PELT clock is the capture's `now`, to the nanosecond.
    assert got["clock_pelt"].iloc[1:].tolist() == [o["now"] for o in case["in"]["ops"]]


def test_all_updates_counted():
    ops = sum(len(c["in"]["ops"]) for _, c in CASES)
    assert ops == 2195 + 4838 + 2727 + 5561
