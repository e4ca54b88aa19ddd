"""Value tests of the Thm 4.2 / Σ = I simulations of ntsim.theory.linear_teachers.

Oracles: NumPy recomputation from the same draw (projector by pseudo-inverse, ĝ by a dense
spectral norm, r_0 = tr Σ/λ_1) and the exact expectation of the Σ = I ratio.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt


def test_identity_risk_has_mean_one(x64):
    setting = lt.SizesSetting(d=12, n_values=(3, 9), draws_per_n=3000)
    ratio = np.asarray(lt.simulate_identity_risk(jax.random.PRNGKey(0), setting).ratio)
    se = ratio.std(1, ddof=1) / np.sqrt(ratio.shape[1])
    assert np.all(np.abs(ratio.mean(1) - 1) < 4 * se)


def test_null_space_ratio_matches_numpy(x64):
    setting = lt.SizesSetting(d=8, n_values=(3, 6), draws_per_n=2)
    run = lt.simulate_thm4_2_deterministic(jax.random.PRNGKey(1), setting)
    assert run.bound.shape == (2, 2, 8) and run.null_space.shape == (2, 2)
    # rebuild group 0, draw 0: instance key 0 of the split, first n rows
    key = jax.random.split(jax.random.PRNGKey(1), 4)[0]
    k_spec, k_basis, k_x, k_s, k_t = jax.random.split(key, 5)
    from ntsim.core import covariance, gaussian_inputs, random_orthogonal

    lo, hi = setting.spectrum_range
    spectrum = np.sort(lo * (hi / lo) ** np.asarray(jax.random.uniform(k_spec, (8,))))[::-1]
    basis = random_orthogonal(k_basis, 8)
    sigma = np.asarray(covariance(spectrum, basis))
    x = np.asarray(gaussian_inputs(k_x, 6, spectrum, basis))[:3]
    v = np.asarray(jax.random.normal(k_t, (8,))) - np.asarray(jax.random.normal(k_s, (8,)))
    p_perp = np.eye(8) - x.T @ np.linalg.pinv(x @ x.T) @ x
    risk = (p_perp @ v) @ sigma @ (p_perp @ v)
    g = np.linalg.norm(x.T @ x / 3 - sigma, 2)
    assert run.null_space[0, 0] == pytest.approx(risk / (g * np.sum((p_perp @ v) ** 2)), rel=1e-8)


def test_implied_constant_matches_numpy(x64):
    setting = lt.SizesSetting(d=10, n_values=(5,), draws_per_n=2, power_law=1.0)
    run = lt.simulate_implied_constant(jax.random.PRNGKey(2), setting)
    key = jax.random.split(jax.random.PRNGKey(2), 2)[0]
    k_basis, k_x = jax.random.split(key)
    from ntsim.core import covariance, gaussian_inputs, random_orthogonal

    spectrum = 1.0 / np.arange(1, 11)
    basis = random_orthogonal(k_basis, 10)
    sigma = np.asarray(covariance(spectrum, basis))
    x = np.asarray(gaussian_inputs(k_x, 5, spectrum, basis))
    r0 = spectrum.sum() / spectrum[0]
    g = np.linalg.norm(x.T @ x / 5 - sigma, 2)
    want = g / (spectrum[0] * max(np.sqrt(r0 / 5), r0 / 5, np.sqrt(1 / 5), 1 / 5))
    assert float(run.effective_rank) == pytest.approx(r0, rel=1e-12)
    assert run.c[0, 0] == pytest.approx(want, rel=1e-8)
