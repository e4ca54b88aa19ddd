"""Spectral tools: local Rademacher complexity, critical radius, stopping times, fits.

Oracles: direct numpy sums, the exact piecewise-quadratic solution of ``R̂_K(ϱ) = cϱ²``
(``R̂_K²`` is piecewise linear in ``u = ϱ²``), brute-force loops over steps, scipy's
``linregress`` and numpy's ``cond``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from ntsim.core import (
    condition_number,
    critical_radius,
    eigen_decay_exponent,
    local_rademacher_complexity,
    log_log_slope,
    stopping_time,
    stopping_time_constant_step,
)


def _random_spectrum(rng, n):
    """Eigenvalues spanning several decades, with a few exact zeros."""
    lam = np.exp(rng.uniform(-8, 0, n))
    lam[rng.choice(n, size=n // 5, replace=False)] = 0.0
    return lam


def _radius_oracle(lam, c):
    """Exact root of c²u² = (1/N)(Σ_{λ<u} λ + #{λ ≥ u}·u), u = ϱ², interval by interval."""
    lam = np.sort(np.asarray(lam, float))
    n = lam.size
    edges = np.concatenate([[0.0], lam, [np.inf]])
    for j in range(n + 1):  # j eigenvalues below u
        s, k = lam[:j].sum(), n - j
        u = (k / n + np.sqrt((k / n) ** 2 + 4 * c**2 * s / n)) / (2 * c**2)
        if edges[j] <= u <= edges[j + 1] and u > 0:
            return np.sqrt(u)
    raise AssertionError("no root found")


def test_rademacher_matches_direct_sum_and_monotonicity(x64):
    rng = np.random.default_rng(0)
    lam = _random_spectrum(rng, 50)
    radii = np.geomspace(1e-5, 10, 200)
    got = np.asarray(local_rademacher_complexity(lam, radii))
    direct = np.array([np.sqrt(np.mean(np.minimum(lam, r**2))) for r in radii])
    np.testing.assert_allclose(got, direct, rtol=1e-13)
    assert np.all(got <= radii * (1 + 1e-14))  # R̂ ≤ ϱ
    assert np.all(got**2 <= lam.mean() * (1 + 1e-14))  # R̂² ≤ tr K/N
    assert np.all(np.diff(got) >= 0)  # non-decreasing
    assert np.all(np.diff(got / radii**2) < 0)  # R̂/ϱ² strictly decreasing


@pytest.mark.parametrize("n", [1, 7, 300])
def test_critical_radius_matches_piecewise_closed_form(x64, n):
    rng = np.random.default_rng(n)
    lam = _random_spectrum(rng, n) if n > 1 else np.array([0.3])
    for c in (0.05, 0.7, 3.0, 200.0):
        rho = float(critical_radius(lam, c))
        np.testing.assert_allclose(rho, _radius_oracle(lam, c), rtol=1e-12)
        # the inequality holds at the result and fails just below it
        assert float(local_rademacher_complexity(lam, rho)) <= c * rho**2 * (1 + 1e-12)
        below = rho * (1 - 1e-8)
        assert float(local_rademacher_complexity(lam, below)) > c * below**2


def test_critical_radius_vmaps_over_coefficients_and_spectra(x64):
    rng = np.random.default_rng(1)
    lams = np.stack([_random_spectrum(rng, 40) for _ in range(6)])
    coefs = rng.uniform(0.1, 10, 6)
    got = np.asarray(jax.vmap(critical_radius)(lams, coefs))
    expected = [_radius_oracle(lam, c) for lam, c in zip(lams, coefs, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # monotone: larger c (smaller σ, larger C_H) gives a smaller radius
    radii = np.asarray(jax.vmap(lambda c: critical_radius(lams[0], c))(jnp.geomspace(0.1, 10, 30)))
    assert np.all(np.diff(radii) < 0)


def test_critical_radius_float32_accuracy():
    lam = _random_spectrum(np.random.default_rng(2), 100).astype(np.float32)
    rho = float(critical_radius(lam, 1.5))
    np.testing.assert_allclose(rho, _radius_oracle(lam.astype(float), 1.5), rtol=1e-5)


def test_stopping_time_rule_matches_closed_form_and_brute_force(x64):
    rng = np.random.default_rng(3)
    for _ in range(8):
        lam = _random_spectrum(rng, 60)
        c = rng.uniform(0.5, 20)
        alpha = rng.uniform(0.1, 1.0)
        t_rule = int(stopping_time(lam, np.full(20_000, alpha), c))
        rho = float(critical_radius(lam, c))
        assert t_rule == int(stopping_time_constant_step(rho, alpha))
        assert t_rule == int(np.floor(1 / (alpha * _radius_oracle(lam, c) ** 2)))
        # a decreasing schedule: the printed rule, evaluated step by step in numpy
        schedule = alpha / np.sqrt(1 + np.arange(20_000) / 50)
        eta = np.cumsum(schedule)
        fired = np.sqrt(np.mean(np.minimum(lam[None, :], 1 / eta[:, None]), axis=1)) > c / eta
        brute = int(np.argmax(fired))  # first firing t is argmax + 1; T̂ = that − 1
        assert fired.any()
        assert int(stopping_time(lam, schedule, c)) == brute
        assert brute == int(np.sum(eta <= rho**-2))


def test_stopping_time_never_fires_returns_horizon(x64):
    lam = np.array([0.5, 0.1])
    assert int(stopping_time(lam, np.full(5, 0.1), 100.0)) == 5


def test_eigen_decay_exponent_exact_and_against_polyfit(x64):
    k = np.arange(1, 101)
    for beta in (0.51, 1.0, 2.5):
        lam = 7.0 * k ** (-2 * beta)
        for intercept in (False, True):
            got = float(eigen_decay_exponent(lam[::-1], fit_intercept=intercept))
            np.testing.assert_allclose(got, beta, rtol=1e-12)
    rng = np.random.default_rng(4)
    noisy = k ** (-1.3) * np.exp(0.3 * rng.standard_normal(k.size))
    noisy_sorted = np.sort(noisy)[::-1]
    slope, _ = np.polyfit(np.log(k), np.log(noisy_sorted / noisy_sorted[0]), 1)
    np.testing.assert_allclose(
        float(eigen_decay_exponent(noisy, fit_intercept=True)), -slope / 2, rtol=1e-10
    )
    x, y = np.log(k), np.log(noisy_sorted / noisy_sorted[0])
    origin = -(x @ y) / (x @ x) / 2
    np.testing.assert_allclose(float(eigen_decay_exponent(noisy)), origin, rtol=1e-10)
    top = float(eigen_decay_exponent(noisy, num_eigenvalues=20, fit_intercept=True))
    slope20, _ = np.polyfit(x[:20], y[:20], 1)
    np.testing.assert_allclose(top, -slope20 / 2, rtol=1e-10)


def test_eigen_decay_exponent_ignores_zero_eigenvalues(x64):
    lam = np.concatenate([np.arange(1.0, 11.0) ** -2.0, np.zeros(5), [-1e-18]])
    np.testing.assert_allclose(float(eigen_decay_exponent(lam)), 1.0, rtol=1e-12)


def test_log_log_slope_matches_linregress(x64):
    rng = np.random.default_rng(5)
    x = np.geomspace(10, 1e4, 9)
    y = 3 * x**-0.7 * np.exp(0.1 * rng.standard_normal(9))
    slope, stderr = log_log_slope(x, y)
    ref = scipy.stats.linregress(np.log(x), np.log(y))
    np.testing.assert_allclose([float(slope), float(stderr)], [ref.slope, ref.stderr], rtol=1e-10)


def test_condition_number_matches_numpy(x64):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((8, 5))
    k = a @ a.T  # rank 5: singular
    for sigma in (1e-3, 0.5, 10.0):
        np.testing.assert_allclose(
            float(condition_number(k, sigma)), np.linalg.cond(k + sigma * np.eye(8)), rtol=1e-9
        )
    assert np.isinf(float(condition_number(np.zeros((3, 3)))))


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="eigenvalues"):
        local_rademacher_complexity(np.array([1.0, -0.5]), 1.0)
    with pytest.raises(ValueError, match="coefficient"):
        critical_radius(np.ones(3), 0.0)
    with pytest.raises(ValueError, match="all be zero"):
        critical_radius(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="step_sizes"):
        stopping_time(np.ones(3), np.array([0.1, -0.1]), 1.0)
    with pytest.raises(ValueError, match="at least 2"):
        eigen_decay_exponent(np.array([1.0]))
    with pytest.raises(ValueError, match="same shape"):
        log_log_slope(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="sigma"):
        condition_number(np.eye(2), -1.0)
    with pytest.raises(ValueError, match="square"):
        condition_number(np.ones((2, 3)))
