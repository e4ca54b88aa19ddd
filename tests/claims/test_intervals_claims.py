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
                          truth=np.zeros(len(counts)), level=0.95,
                          estimate_mean=np.zeros(len(counts)), estimate_sd=np.ones(len(counts)),
                          sizes=np.full(len(counts), 20))  # fmt: skip


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


def _spearman_means(means, sd=0.188, replications=20_000):
    """A Spearman run at N = 20, r = ±0.5 whose estimates average ``means``."""
    truth = [iv.spearman_of_bivariate_normal(r) for r in (0.5, -0.5)]
    return iv.CoverageRun(procedures=("r = 0.5", "r = -0.5"), below=np.zeros(2),
                          above=np.zeros(2), replications=np.full(2, replications),
                          truth=np.asarray(truth), level=0.95, estimate_mean=np.asarray(means),
                          estimate_sd=np.full(2, sd), sizes=np.full(2, 20))  # fmt: skip


def test_spearman_estimate_mean_holds_at_morans_value_and_refutes_a_wrong_correlation():
    """Oracle: Moran's E[ρ̂] at N = 20 worked by hand, 6/(21π)(arcsin ½ + 18 arcsin ¼)
    = 0.46126; data drawn at r = 0.5/√1.125 (the generator's 1 − r² halved) average
    E[ρ̂](0.4714) = 0.4344, and r_s averaging ρ_S = 0.4826 (no finite-N bias) is off too."""
    exact = 6 / (21 * np.pi) * (np.arcsin(0.5) + 18 * np.arcsin(0.25))
    assert abs(exact - 0.46126) < 1e-5
    check = claims.check_spearman_estimate_mean
    assert check(_spearman_means([exact, -exact])).outcome == "holds"
    shifted = 6 / (21 * np.pi) * (np.arcsin(0.4714) + 18 * np.arcsin(0.2357))
    assert check(_spearman_means([shifted, -exact])).outcome == "refuted"
    assert check(_spearman_means([exact, -0.4826])).outcome == "refuted"
    assert check(_spearman_means([exact + 0.007, -exact])).outcome == "inconclusive"


def test_small_n_estimate_mean_refutes_a_normaliser_off_by_one():
    """Oracle by hand at N = 5: E[ρ̂] = 6/(6π)(arcsin ½ + 3 arcsin ¼) = 0.40796; a denominator
    Σr² − 1 (here 10 − 1) scales every ρ̂ by 10/9, so the mean becomes 0.45329. At N = 20 the
    same error (665/664) moves it by 0.0007, inside the N = 20 claim's tolerance."""
    exact = (np.arcsin(0.5) + 3 * np.arcsin(0.25)) / np.pi
    assert abs(exact - iv.spearman_estimate_mean(0.5, 5)) < 1e-12
    assert abs(exact - 0.40796) < 1e-5

    def run(means):
        return _spearman_means(means, sd=0.435, replications=60_000)._replace(sizes=np.full(2, 5))

    check = claims.check_small_n_spearman_estimate_mean
    assert check(run([exact, -exact])).outcome == "holds"
    assert check(run([exact * 10 / 9, -exact * 10 / 9])).outcome == "refuted"
    assert (
        claims.check_spearman_estimate_mean(
            _spearman_means([0.46126 * 665 / 664, -0.46126 * 665 / 664])
        ).outcome
        == "holds"
    )


def test_planted_normaliser_off_by_one_in_spearman_refutes_the_small_n_anchor(monkeypatch):
    """The same bug planted in :func:`ntsim.core.spearman` itself, run through the claim."""
    from ntsim.claims import get_claim, run_claims
    from ntsim.core import _statistics

    original = _statistics.spearman

    def planted(a, b):
        n = len(a)
        squares = n * (n * n - 1) / 12.0  # Σ (rank − mean)² without ties
        return original(a, b) * squares / (squares - 1.0)

    monkeypatch.setattr(_statistics, "spearman", planted)
    claim = get_claim("intervals.spearman_ci.estimate_mean_small_n")
    (record,) = run_claims([claim], scale="quick", seeds=(0,))
    assert record.verdict == "refuted"
