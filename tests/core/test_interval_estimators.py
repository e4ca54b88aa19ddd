"""Interval estimators the claims decide on: coverage at the nominal level (Monte Carlo with
a known truth) and agreement with scipy's own intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ntsim.core import bootstrap_ci, mean_ci, spearman, spearman_ci


def test_mean_ci_equals_scipy_t_interval_and_covers_at_the_nominal_level():
    rng = np.random.default_rng(0)
    values = rng.normal(size=12)
    mean, (lo, hi) = mean_ci(values, level=0.9)
    ref = stats.t.interval(0.9, 11, loc=values.mean(), scale=stats.sem(values))
    np.testing.assert_allclose((lo, hi), ref, rtol=1e-12)
    assert mean == pytest.approx(values.mean())
    # coverage of the true mean 0 over 4000 samples of 8: 95% ± 3 Monte Carlo s.e.
    samples = rng.normal(size=(4000, 8))
    _, (lo, hi) = mean_ci(samples, axis=1)
    coverage = np.mean((lo <= 0) & (0 <= hi))
    assert abs(coverage - 0.95) < 3 * np.sqrt(0.95 * 0.05 / 4000)
    # the normal interval is narrower than the t interval at small N
    _, (nlo, nhi) = mean_ci(values, distribution="normal")
    _, (tlo, thi) = mean_ci(values)
    assert tlo < nlo < nhi < thi
    with pytest.raises(ValueError, match="at least 2"):
        mean_ci([1.0])


def test_spearman_ci_covers_the_population_correlation():
    rng = np.random.default_rng(1)
    r = 0.5  # Gaussian copula: population Spearman ρ_s = (6/π) asin(r/2)
    truth = 6 / np.pi * np.arcsin(r / 2)
    hits = 0
    trials = 600
    for _ in range(trials):
        x = rng.normal(size=60)
        y = r * x + np.sqrt(1 - r**2) * rng.normal(size=60)
        rho, (lo, hi) = spearman_ci(x, y)
        assert lo <= rho <= hi and rho == spearman(x, y)
        hits += lo <= truth <= hi
    assert abs(hits / trials - 0.95) < 3 * np.sqrt(0.95 * 0.05 / trials) + 0.01


def test_spearman_ci_is_the_fieller_interval_with_equal_tails():
    """Both ends are Fieller, Hartley & Pearson's (1957) tanh(atanh ρ ± z·√(1.06/(N − 3))),
    computed here from scipy's ρ and normal quantile, and each tail misses the population ρ_s
    about (1 − level)/2 of the time (a symmetric interval, not only the right total)."""
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=40), rng.normal(size=40)
    y = 0.6 * x + 0.8 * y
    rho, (lo, hi) = spearman_ci(x, y, level=0.9)
    reference = stats.spearmanr(x, y).statistic
    half = stats.norm.ppf(0.95) * np.sqrt(1.06 / 37)
    np.testing.assert_allclose(rho, reference, rtol=1e-12)
    np.testing.assert_allclose((lo, hi), np.tanh(np.arctanh(reference) + np.array([-1, 1]) * half),
                               rtol=1e-12)  # fmt: skip
    r, trials = 0.5, 1500
    truth = 6 / np.pi * np.arcsin(r / 2)
    below = above = 0
    for _ in range(trials):
        u = rng.normal(size=60)
        v = r * u + np.sqrt(1 - r**2) * rng.normal(size=60)
        _, (lo, hi) = spearman_ci(u, v)
        below += truth < lo
        above += truth > hi
    slack = 3 * np.sqrt(0.025 * 0.975 / trials) + 0.01  # Monte Carlo s.e. + the 1.06 rule's bias
    assert abs(below / trials - 0.025) < slack and abs(above / trials - 0.025) < slack


def test_bootstrap_ci_is_reproducible_and_brackets_the_mean():
    values = np.random.default_rng(2).exponential(size=200)
    first = bootstrap_ci(lambda i: values[i].mean(), values.size, seed=3)
    assert first == bootstrap_ci(lambda i: values[i].mean(), values.size, seed=3)
    point, (lo, hi) = first
    _, (tlo, thi) = mean_ci(values)
    assert lo < point < hi and abs(lo - tlo) < 0.05 and abs(hi - thi) < 0.05
