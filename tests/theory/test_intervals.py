"""The interval-coverage simulation: Spearman's population ρ_S against a large sample, and
miss rates against the closed form (1 − level)/2 at a level where few replications suffice."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from scipy import stats

from ntsim.theory import intervals as iv


@pytest.mark.parametrize("correlation", [-0.7, 0.0, 0.5, 0.9])
def test_spearman_of_bivariate_normal_matches_a_large_sample(correlation):
    """Oracle: scipy's Spearman ρ of 200,000 pairs (standard error ≲ 0.0023)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(200_000)
    y = correlation * x + np.sqrt(1 - correlation**2) * rng.standard_normal(200_000)
    sample = stats.spearmanr(x, y).statistic
    assert abs(iv.spearman_of_bivariate_normal(correlation) - sample) < 0.01


def test_each_tail_misses_half_of_one_minus_the_level():
    """At level 0.5 every tail should miss in 25% of replications: the t interval exactly,
    Fisher's z and the percentile bootstrap approximately (300 replications: ±0.1 is four
    standard errors, room for their finite-N bias too)."""
    setting = iv.CoverageSetting(mean_sizes=(3, 8), mean_replications=20_000, spearman_size=15,
                                 spearman_replications=300, bootstrap_size=30,
                                 bootstrap_replications=300, resamples=200, level=0.5)  # fmt: skip
    run = iv.simulate_interval_coverage(jax.random.PRNGKey(0), setting)
    assert len(run.procedures) == 4 and run.level == 0.5
    rates_below = np.asarray(run.below) / np.asarray(run.replications)
    rates_above = np.asarray(run.above) / np.asarray(run.replications)
    # the t interval, exact: 4 standard errors of a rate at 20,000 replications
    np.testing.assert_allclose(rates_below[:2], 0.25, atol=4 * np.sqrt(0.25 * 0.75 / 20_000))
    np.testing.assert_allclose(rates_above[:2], 0.25, atol=4 * np.sqrt(0.25 * 0.75 / 20_000))
    np.testing.assert_allclose(rates_below[2:], 0.25, atol=0.1)
    np.testing.assert_allclose(rates_above[2:], 0.25, atol=0.1)
    np.testing.assert_allclose(run.truth[2], iv.spearman_of_bivariate_normal(0.5))


def test_the_run_is_a_function_of_the_key():
    setting = iv.CoverageSetting(mean_sizes=(3,), mean_replications=500, spearman_replications=20,
                                 bootstrap_replications=10, resamples=50)  # fmt: skip
    a = iv.simulate_interval_coverage(jax.random.PRNGKey(3), setting)
    b = iv.simulate_interval_coverage(jax.random.PRNGKey(3), setting)
    c = iv.simulate_interval_coverage(jax.random.PRNGKey(4), setting)
    for field in ("below", "above"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(np.r_[a.below, a.above], np.r_[c.below, c.above])


@pytest.mark.parametrize("bad", [dict(mean_sizes=(1,)), dict(level=1.0), dict(spearman_size=4),
                                 dict(spearman_correlation=1.0), dict(resamples=0)])  # fmt: skip
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        iv.CoverageSetting(**bad)
