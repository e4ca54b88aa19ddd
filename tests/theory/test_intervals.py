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


@pytest.mark.parametrize(("correlation", "size"), [(0.5, 20), (-0.8, 8), (0.3, 50)])
def test_spearman_estimate_mean_matches_a_large_simulation(correlation, size):
    """Oracle: scipy's Spearman ρ̂ averaged over 40,000 samples of ``size`` pairs (standard
    error ≤ 0.001); ρ_S itself differs by ≥ 0.0055 at these N (the finite-N bias)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40_000, size))
    y = correlation * x + np.sqrt(1 - correlation**2) * rng.standard_normal((40_000, size))
    ranks_x, ranks_y = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
    d2 = np.sum((ranks_x - ranks_y) ** 2, axis=1)
    sample = np.mean(1 - 6 * d2 / (size * (size**2 - 1)))
    assert abs(iv.spearman_estimate_mean(correlation, size) - sample) < 0.004


SMALL = iv.CoverageSetting(mean_sizes=(3, 8), mean_replications=20_000, spearman_size=15,
                           spearman_correlations=(0.6, -0.3), spearman_replications=300,
                           bootstrap_size=30, bootstrap_replications=300, resamples=200,
                           level=0.5)  # fmt: skip
SIMULATIONS = (iv.simulate_t_coverage, iv.simulate_spearman_coverage,
               iv.simulate_bootstrap_coverage)  # fmt: skip


def test_each_tail_misses_half_of_one_minus_the_level():
    """At level 0.5 every tail should miss in 25% of replications: the t interval exactly (4
    standard errors at 20,000 replications), Fisher's z and the percentile bootstrap
    approximately (300 replications: ±0.1 is four standard errors, room for their finite-N
    bias too)."""
    exact = iv.simulate_t_coverage(jax.random.PRNGKey(0), SMALL)
    spearman = iv.simulate_spearman_coverage(jax.random.PRNGKey(0), SMALL)
    bootstrap = iv.simulate_bootstrap_coverage(jax.random.PRNGKey(0), SMALL)
    assert [len(r.procedures) for r in (exact, spearman, bootstrap)] == [2, 2, 1]
    for run, atol in ((exact, 4 * np.sqrt(0.25 * 0.75 / 20_000)), (spearman, 0.1),
                      (bootstrap, 0.1)):  # fmt: skip
        assert run.level == 0.5
        for counts in (run.below, run.above):
            np.testing.assert_allclose(np.asarray(counts) / run.replications, 0.25, atol=atol)
    np.testing.assert_allclose(spearman.truth, [iv.spearman_of_bivariate_normal(0.6),
                                                iv.spearman_of_bivariate_normal(-0.3)])  # fmt: skip
    assert spearman.truth[1] < 0
    np.testing.assert_array_equal(spearman.sizes, [15, 15])
    np.testing.assert_array_equal(exact.sizes, [3, 8])
    # the t rows' estimates are sample means of N(0, 1): sd 1/√N
    np.testing.assert_allclose(exact.estimate_sd, 1 / np.sqrt([3, 8]), rtol=0.03)


@pytest.mark.parametrize("simulate", SIMULATIONS)
def test_the_run_is_a_function_of_the_key(simulate):
    a = simulate(jax.random.PRNGKey(3), SMALL)
    b = simulate(jax.random.PRNGKey(3), SMALL)
    c = simulate(jax.random.PRNGKey(4), SMALL)
    for field in ("below", "above"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(np.r_[a.below, a.above], np.r_[c.below, c.above])


BAD = (dict(mean_sizes=(1,)), dict(level=1.0), dict(spearman_size=4),
       dict(spearman_correlations=(1.0,)), dict(resamples=0))  # fmt: skip


@pytest.mark.parametrize("bad", BAD)
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        iv.CoverageSetting(**bad)
