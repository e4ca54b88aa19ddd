"""Simulations the early-stopping claims read: the Sobolev sweep and eq. (30)'s power laws.

Oracles: direct calls of :func:`sobolev_benchmark` with the documented key layout, a numpy
bisection of eq. (11) on the unpadded spectrum, and the continuum limit of eq. (30).
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ntsim.theory import early_stopping as es


def test_sobolev_sweep_is_the_benchmark_at_the_documented_keys(x64, key):
    setting = es.SobolevSweepSetting(sizes=(12, 16), draws=3, max_steps=40, chunk_size=3)
    sweep = es.simulate_sobolev_sweep(key, setting)
    assert np.asarray(sweep.sizes).tolist() == [12, 16]
    assert np.asarray(sweep.holdout).shape == (2, 3)
    keys = jax.random.split(jax.random.fold_in(key, 1), 3)  # the second size, third draw
    one = es.sobolev_benchmark(keys[2], 16, max_steps=40)
    for name, value in one._asdict().items():
        np.testing.assert_allclose(np.asarray(getattr(sweep, name))[1, 2], value, rtol=1e-10)
    # the guarantee is 12 C_H² ϱ̂² (Raskutti et al. 2014, Thm 1)
    np.testing.assert_allclose(
        np.asarray(sweep.guarantee),
        12 * es.SOBOLEV_TARGET_RKHS_NORM**2 * np.asarray(sweep.critical_radius) ** 2,
        rtol=1e-12,
    )


@pytest.mark.parametrize("field, value", [("sizes", (5,)), ("draws", 0), ("holdout_fraction", 1)])
def test_sobolev_sweep_setting_validates(field, value):
    with pytest.raises(ValueError, match=field):
        es.SobolevSweepSetting(**{field: value})


def _numpy_radius_squared(beta: float, n: int, c: float) -> float:
    """Bisection of R̂(ϱ) = cϱ² (eq. (11)) on λ_k = k^{−2β}, k ≤ n, without padding."""
    lam = np.arange(1, n + 1.0) ** (-2 * beta)
    lo, hi = 1e-8, 10.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if math.sqrt(np.minimum(lam, mid**2).mean()) > c * mid**2:
            lo = mid
        else:
            hi = mid
    return hi**2


def test_padded_power_law_radius_matches_an_unpadded_bisection(x64):
    c = float(es.critical_radius_coefficient(1.0))
    for beta, n in ((0.6, 50), (1.0, 300), (2.0, 1000)):
        padded = float(es.power_law_critical_radius_squared(beta, float(n), 2000, c))
        assert padded == pytest.approx(_numpy_radius_squared(beta, n, c), rel=1e-9)


def test_power_law_slopes_approach_the_continuum_rate(x64):
    """In the continuum limit ϱ̂² ∝ N^{−2β/(2β+1)} exactly; at N ≤ 10^5 the slopes lie close."""
    rates = es.simulate_power_law_rates(None, es.PowerLawRateSetting(betas=(1.0, 2.0), top=10**5))
    np.testing.assert_allclose(np.asarray(rates.theory), [-2 / 3, -0.8])
    np.testing.assert_allclose(np.asarray(rates.slopes), np.asarray(rates.theory), atol=0.05)
    # the padded ϱ̂_N² at N = top/1000 = 100 is eq. (11)'s root on the 100 eigenvalues
    np.testing.assert_allclose(np.asarray(rates.padding_gap), 0.0, atol=1e-12)
    c = float(es.critical_radius_coefficient(1.0))
    padded = float(es.power_law_critical_radius_squared(1.0, 100.0, 10**5, c))
    assert padded == pytest.approx(_numpy_radius_squared(1.0, 100, c), rel=1e-9)
    assert np.all(np.isfinite(np.asarray(rates.slopes_early)))
    with pytest.raises(ValueError, match="betas"):
        es.PowerLawRateSetting(betas=(0.5,))


def test_shrinkage_sandwich_simulation_matches_numpy(x64, key):
    """Instance 1 recomputed in numpy: s_GD = 1 − (1 − αλ̂)^τ, s_KRR = λ̂/(λ̂ + λ)."""
    setting = es.SandwichSetting(num_eigenvalues=7, num_steps=5, instances=3)
    run = es.simulate_shrinkage_sandwich(key, setting)
    k_lam, k_alpha, k_tau = jax.random.split(jax.random.split(key, 3)[1], 3)
    lam = np.asarray(10 ** jax.random.uniform(k_lam, (7,), minval=-6.0, maxval=0.0))
    alpha = float(jax.random.uniform(k_alpha, minval=0.1, maxval=1.0)) / lam.max()
    tau = np.sort(np.round(np.asarray(10 ** jax.random.uniform(k_tau, (5,), maxval=6.0))))
    gd = 1 - (1 - alpha * lam[None, :]) ** tau[:, None]
    for field, ridge in (("corrected", 1 / (alpha * tau)), ("printed", alpha * tau)):
        krr = lam[None, :] / (lam[None, :] + ridge[:, None])
        margin = min((gd - krr).min(), (2 * krr - gd).min())
        assert float(np.asarray(getattr(run, field))[1]) == pytest.approx(margin, abs=1e-12)
    assert np.asarray(run.corrected).min() > -1e-13  # the sandwich (1 − e^{−x} ≥ x/(1 + x))
    assert float(np.asarray(run.step_times_lambda_max)[1]) == pytest.approx(alpha * lam.max())
    # the hand instance λ̂ ∈ {1/2, 1/4}, α = 1, τ ∈ {2, 6}: s_GD = 1 − (1 − λ̂)^τ and
    # s_KRR = λ̂τ/(λ̂τ + 1), so the sides are min(1/4, 15/64, 5/48, 4547/20480) and
    # min(1/4, 33/64, 11/48, 7741/20480), the ratios (3/2, 21/16, 21/16, 16835/12288)
    np.testing.assert_allclose(
        np.asarray(run.anchor), [5 / 48, 11 / 48, 21 / 16, 3 / 2, 1 / 2], rtol=0, atol=1e-15
    )


def test_c_h_rescaling_bounds_from_the_slope_of_r_over_rho_squared(x64, key):
    """Corrected exponent: invariant to round-off. Printed: the coefficients differ by C_H,
    and R̂(ϱ)/ϱ² has log–log slope in [−2, −1], so |ϱ̂/ϱ̂_unit − 1| ∈ [1 − 1/√2, 1 − 1/5]."""
    run = es.simulate_c_h_rescaling(key, es.SpectrumSetting(num_eigenvalues=30, instances=20))
    assert np.asarray(run.corrected)[:, 0].max() < 1e-9
    assert np.all(np.asarray(run.corrected)[:, 1] == 0)
    printed_gap = np.asarray(run.printed)[:, 0]
    assert printed_gap.min() >= 1 - 1 / np.sqrt(2) - 1e-9 and printed_gap.max() <= 0.8 + 1e-9


def test_optimal_stopping_is_monotone_in_the_drift_and_capped(x64, key):
    setting = es.SpectrumSetting(num_eigenvalues=20, instances=2, horizon=3000, batch_size=2)
    run = es.simulate_optimal_stopping(key, setting)
    t_max = np.asarray(run.t_max)
    assert np.all((t_max >= 0) & (t_max < setting.horizon))
    # T̂_op is non-increasing in the drift slope and never above T̂_max
    t_op = np.asarray(run.t_op)
    assert np.all(np.diff(t_op, axis=1) <= 0) and np.all(t_op <= np.maximum(t_max, 1)[:, None])
    np.testing.assert_array_equal(t_op[:, 0], np.maximum(t_max, 1))  # no drift: T̂_max


def test_rademacher_facts_are_attained_at_both_ends_of_the_grid(x64, key):
    """Eq. (10): R̂ = ϱ below λ̂_min^{1/2} (the grid starts at 10⁻⁶λ̂_max^{1/2}, below it for
    N ≤ 400), R̂² = tr K/N and R̂ constant above λ̂_max^{1/2}; R̂/ϱ² strictly decreasing."""
    for n in (50, 400):
        run = np.asarray(es.simulate_rademacher_facts(
            key, es.SpectrumSetting(num_eigenvalues=n, instances=10)
        ))  # fmt: skip
        np.testing.assert_allclose(run[:, :3], 0.0, atol=1e-14)
        assert run[:, 3].min() > 0
        spectrum = np.asarray(es.random_spectrum(jax.random.split(key, 10)[0], n))
        assert spectrum.min() / spectrum.max() >= 1e-12  # the grid's lower end is below it
