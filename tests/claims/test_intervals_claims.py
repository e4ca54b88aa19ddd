"""The intervals claims decide constructed miss counts: nominal counts hold, the counts a
wrong quantile gives are refuted (oracle: the miss rates worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ntsim.claims import intervals as claims
from ntsim.theory import intervals as iv

#: (check, replications per row) as the full scale runs them.
CHECKS = {"t": (claims.check_t_interval_tails, [200_000, 200_000]),
          "spearman": (claims.check_spearman_interval_tails, [50_000, 50_000]),
          "bootstrap": (claims.check_bootstrap_interval_tails, [8_000])}  # fmt: skip


def _run(counts, rates_below, rates_above):
    counts = np.asarray(counts)
    return iv.CoverageRun(procedures=tuple(f"row {i}" for i in range(len(counts))),
                          below=np.round(counts * np.asarray(rates_below)),
                          above=np.round(counts * np.asarray(rates_above)), replications=counts,
                          truth=np.zeros(len(counts)), level=0.95)  # fmt: skip


def _decide(name, rates_below, rates_above):
    check, counts = CHECKS[name]
    return check(_run(counts, rates_below, rates_above)).outcome


@pytest.mark.parametrize("name", CHECKS)
def test_nominal_tails_hold(name):
    rows = len(CHECKS[name][1])
    assert _decide(name, [0.025] * rows, [0.025] * rows) == "holds"


def test_a_t_quantile_with_n_degrees_of_freedom_is_refuted():
    """t_{0.975, 3} instead of t_{0.975, 2} at N = 3: each tail misses P(T_2 > 3.182)."""
    tail = stats.t.sf(stats.t.ppf(0.975, 3), 2)
    assert 0.04 < tail < 0.05
    assert _decide("t", [tail, 0.025], [tail, 0.025]) == "refuted"


@pytest.mark.parametrize("name", ["spearman", "bootstrap"])
def test_one_tail_never_missing_is_refuted(name):
    """An end moved twice as far out (a ×2 half-width on one side) almost never misses."""
    rows = len(CHECKS[name][1])
    assert _decide(name, [0.0005] + [0.025] * (rows - 1), [0.025] * rows) == "refuted"


def test_a_rate_near_the_tolerance_is_inconclusive():
    """A tail rate whose Wilson interval straddles 0.0375 decides nothing."""
    assert _decide("spearman", [0.025, 0.0375], [0.025, 0.025]) == "inconclusive"
