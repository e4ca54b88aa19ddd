"""The cluster bootstrap the MiniLM claims decide on (``ntsim.claims._resampling``).

Oracle: where the statistic is defined on every resample it must equal the project's plain
percentile bootstrap (``ntsim.core.bootstrap_ci``, same generator and seed); where it is
not, the undefined resamples are dropped, and too many of them decide nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.claims._resampling import cluster_bootstrap_ci
from ntsim.core import bootstrap_ci


def test_equals_the_plain_bootstrap_where_always_defined():
    values = np.random.default_rng(1).normal(size=12)
    statistic = lambda index: values[index].mean()  # noqa: E731
    assert cluster_bootstrap_ci(statistic, 12, bounds=(-9.0, 9.0)) == bootstrap_ci(statistic, 12)


def test_undefined_resamples_are_dropped_not_scored():
    """A statistic undefined whenever cluster 0 is drawn: the interval is the plain one over
    the other resamples (none of which contains a placeholder value)."""
    values = np.arange(8.0)

    def statistic(index):
        resample = not np.array_equal(index, np.arange(8))  # the point itself stays defined
        return float("nan") if resample and (index == 0).any() else values[index].mean()

    point, (lo, hi) = cluster_bootstrap_ci(statistic, 8, bounds=(0.0, 7.0), min_defined=0.1)
    assert point == pytest.approx(3.5) and 1.0 <= lo < hi < 7.0  # no resample with cluster 0
    # most resamples draw cluster 0 (1 − (7/8)^8 ≈ 66%): at the default 90% that decides nothing
    assert cluster_bootstrap_ci(statistic, 8, bounds=(0.0, 7.0))[1] == (0.0, 7.0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="clusters"):
        cluster_bootstrap_ci(lambda i: 0.0, 0, bounds=(0.0, 1.0))
    with pytest.raises(ValueError, match="min_defined"):
        cluster_bootstrap_ci(lambda i: 0.0, 3, bounds=(0.0, 1.0), min_defined=0.0)
