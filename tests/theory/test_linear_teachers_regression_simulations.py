"""Value tests of the Thm 4.1 simulations of ntsim.theory.linear_teachers.

Oracles: NumPy least squares (γ = θ_S + X⁺(y − Xθ_S)) and eq. (2) recomputed from the same
draw; GD's limit γ and its invariant P_⊥w(t) = P_⊥θ_S; the Monte Carlo z-scores ≈ N(0, 1).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt

SETTING = lt.Thm41Setting(d=12, n_values=(3, 8), draws_per_n=6, mc_samples=4000,
                          gd_steps=400, gd_record_every=50)  # fmt: skip


def test_closed_form_and_translation(x64):
    run = jax.tree_util.tree_map(
        np.asarray, lt.simulate_thm4_1_closed_form(jax.random.PRNGKey(0), SETTING)
    )
    assert run.relative_error.shape == (12,)
    assert np.all(run.relative_error < 1e-10)
    np.testing.assert_allclose(run.risk_shifted, run.risk, rtol=1e-9)
    # eq. (2) from the draw, in NumPy (group 0, draw 0 sees the first 3 rows)
    from ntsim.core import covariance, gaussian_inputs, random_orthogonal

    key = jax.random.split(jax.random.PRNGKey(0), 12)[0]
    k_spec, k_basis, k_x, k_s, k_t, _ = jax.random.split(key, 6)
    spectrum = np.sort(np.asarray(jax.random.uniform(k_spec, (12,), minval=0.2, maxval=2.0)))[::-1]
    basis = random_orthogonal(k_basis, 12)
    sigma = np.asarray(covariance(spectrum, basis))
    x = np.asarray(gaussian_inputs(k_x, 8, spectrum, basis))[:3]
    ts, tt = np.asarray(jax.random.normal(k_s, (12,))), np.asarray(jax.random.normal(k_t, (12,)))
    gamma = ts + np.linalg.lstsq(x, x @ tt - x @ ts, rcond=None)[0]
    assert run.risk[0] == pytest.approx((tt - gamma) @ sigma @ (tt - gamma), rel=1e-9)


def test_gd_reaches_the_limit(x64):
    setting = lt.Thm41Setting(d=30, n_values=(4,), draws_per_n=8, gd_steps=600)
    run = jax.tree_util.tree_map(np.asarray, lt.simulate_thm4_1_gd(jax.random.PRNGKey(1), setting))
    assert np.all(run.first_nonfinite < 0)
    assert np.all(run.limit < 1e-9) and np.all(run.iterates < 1e-9)
    assert np.all(run.null_space < 1e-12)


def test_monte_carlo_z_scores_are_standard(x64):
    setting = lt.Thm41Setting(d=12, n_values=(3, 8), draws_per_n=50, mc_samples=4000)
    run = lt.simulate_thm4_1_monte_carlo(jax.random.PRNGKey(2), setting)
    z = np.asarray((run.estimate - run.risk) / run.stderr)
    assert abs(z.mean()) < 4 / np.sqrt(z.size) and 0.7 < z.std() < 1.3
