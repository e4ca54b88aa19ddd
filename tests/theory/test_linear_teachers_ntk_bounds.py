"""Value tests of the Cor. 6.2 simulations: H^∞ from its arccos closed form in NumPy,
ỹᵀ(H^∞)⁻¹ỹ by a dense solve, ‖P_∥v‖ by least squares."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt


def _hinf(x):
    g = np.clip(x @ x.T, -1.0, 1.0)
    return g * (np.pi - np.arccos(g)) / (2 * np.pi)


def test_cor6_2_matches_numpy(x64):
    setting = lt.NTKSizes(d=8, n_values=(3, 6), draws_per_n=2)
    run = jax.tree_util.tree_map(np.asarray, lt.simulate_cor6_2(jax.random.PRNGKey(0), setting))
    assert run.norm.shape == (4,)
    key = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(0), 0), 2)[0]
    k_x, k_s, k_v, k_scale = jax.random.split(key, 4)
    x = np.asarray(lt.unit_norm_inputs(k_x, 3, 8))
    v = np.asarray(jax.random.normal(k_v, (8,)))
    v = v / np.linalg.norm(v) * 10 ** float(jax.random.uniform(k_scale, minval=-2, maxval=1))
    y = x @ v
    assert run.norm[0] == pytest.approx(np.sqrt(y @ np.linalg.solve(_hinf(x), y)), rel=1e-9)
    assert run.printed[0] == pytest.approx(3 * np.linalg.norm(v), rel=1e-12)
    p_par = np.linalg.norm(x.T @ np.linalg.lstsq(x.T, v, rcond=None)[0])
    assert run.derived[0] == pytest.approx(2 * p_par, rel=1e-9)


def test_hinf_psd_matches_numpy(x64):
    setting = lt.NTKSizes(d=5, n_values=(4, 9), draws_per_n=2)
    margins = np.asarray(lt.simulate_hinf_psd(jax.random.PRNGKey(1), setting))
    key = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(1), 1), 2)[1]
    x = np.asarray(lt.unit_norm_inputs(key, 9, 5))
    h = _hinf(x)
    want = np.linalg.eigvalsh(h - x @ x.T / 4)[0] / np.linalg.eigvalsh(h)[-1]
    assert margins[3] == pytest.approx(want, rel=1e-8, abs=1e-14)
    assert np.all(margins > -1e-12)
