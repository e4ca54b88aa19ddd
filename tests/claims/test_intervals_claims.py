"""The intervals claims decide constructed miss counts: nominal counts hold, the counts a
wrong quantile gives are refuted (oracle: the miss rates worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ntsim.claims import intervals as claims
from ntsim.theory import intervals as iv

NAMES = ("t interval, mean, N = 3", "t interval, mean, N = 10", "Fisher-z Spearman, N = 20",
         "percentile bootstrap, mean, N = 100")  # fmt: skip
COUNTS = np.array([200_000, 200_000, 20_000, 8_000])


def _run(rates_below, rates_above):
    return iv.CoverageRun(procedures=NAMES, below=np.round(COUNTS * np.asarray(rates_below)),
                          above=np.round(COUNTS * np.asarray(rates_above)), replications=COUNTS,
                          truth=np.zeros(4), level=0.95)  # fmt: skip


CHECKS = (claims.check_t_interval_tails, claims.check_spearman_interval_tails,
          claims.check_bootstrap_interval_tails)  # fmt: skip


@pytest.mark.parametrize("check", CHECKS)
def test_nominal_tails_hold(check):
    assert check(_run([0.025] * 4, [0.025] * 4)).outcome == "holds"


def test_a_t_quantile_with_n_degrees_of_freedom_is_refuted():
    """t_{0.975, 3} instead of t_{0.975, 2} at N = 3: each tail misses P(T_2 > 3.182)."""
    tail = stats.t.sf(stats.t.ppf(0.975, 3), 2)
    assert 0.04 < tail < 0.05
    run = _run([tail, 0.025, 0.025, 0.025], [tail, 0.025, 0.025, 0.025])
    assert claims.check_t_interval_tails(run).outcome == "refuted"


@pytest.mark.parametrize("row, check", [(2, CHECKS[1]), (3, CHECKS[2])])
def test_one_tail_never_missing_is_refuted(row, check):
    """An end moved twice as far out (a ×2 half-width on one side) almost never misses."""
    below = [0.025] * 4
    below[row] = 0.0005
    assert check(_run(below, [0.025] * 4)).outcome == "refuted"


def test_a_rate_near_the_tolerance_is_inconclusive():
    """A tail rate whose Wilson interval straddles 0.0375 decides nothing."""
    below = [0.025, 0.025, 0.0375, 0.025]
    assert claims.check_spearman_interval_tails(_run(below, [0.025] * 4)).outcome == (
        "inconclusive"
    )
