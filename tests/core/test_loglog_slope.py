"""ntsim.core.loglog_slope: the least-squares slope of log y on log x over the points y > 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ntsim.core import loglog_slope


def test_two_positive_points_give_the_slope_through_them():
    """Two points determine a line: the slope is defined (NaN only below two points)."""
    assert loglog_slope([10.0, 1000.0], [2.0, 0.02]) == pytest.approx(-1.0)
    assert loglog_slope([1.0, 2.0, 4.0], [0.0, 1.0, 8.0]) == pytest.approx(3.0)  # y = 0 left out


def test_fewer_than_two_positive_points_have_no_slope():
    assert math.isnan(loglog_slope([1.0, 2.0], [0.0, 5.0]))
    assert math.isnan(loglog_slope([1.0, 2.0, 3.0], [0.0, 0.0, 4.0]))


@pytest.mark.parametrize(
    ("x", "y", "words"),
    [
        ([1.0, 2.0, 3.0], [-1.0, 0.0, 4.0], ["y", "non-negative"]),  # not a log-log fit
        ([1.0, 2.0, 3.0], [1.0, float("nan"), 4.0], ["y", "finite"]),
        ([0.0, 2.0, 3.0], [1.0, 2.0, 4.0], ["x", "positive"]),
        ([1.0, 2.0], [1.0, 2.0, 3.0], ["same length"]),
    ],
)
def test_input_off_the_contract_is_refused_not_skipped(x, y, words):
    with pytest.raises(ValueError, match="loglog_slope") as info:
        loglog_slope(x, y)
    assert all(word in str(info.value) for word in words)


def test_slope_matches_a_direct_least_squares_fit():
    rng = np.random.default_rng(0)
    x = np.geomspace(1.0, 1e3, 9)
    y = 5.0 * x**-0.7 * np.exp(0.1 * rng.standard_normal(9))
    lx, ly = np.log(x), np.log(y)
    direct = np.sum((lx - lx.mean()) * (ly - ly.mean())) / np.sum((lx - lx.mean()) ** 2)
    assert loglog_slope(x, y) == pytest.approx(direct, rel=1e-12)
