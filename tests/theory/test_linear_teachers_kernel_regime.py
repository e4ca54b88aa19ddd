"""Value tests of :func:`ntsim.theory.linear_teachers.simulate_kernel_regime` (Thm 6.1).

Oracles are the closed forms of the kernel picture: the analytic H^∞ (its norm
√(ỹᵀ(H^∞)⁻¹ỹ) for the weight displacement, its kernel predictor for the outputs) must be
approached as the width grows, and GD must fit both phases.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt


@pytest.fixture(scope="module")
def run():
    setting = lt.KernelRegimeSetting(widths=(64, 4096), repeats=2, num_test=100)
    out = lt.simulate_kernel_regime(jax.random.PRNGKey(0), setting)
    return jax.tree_util.tree_map(np.asarray, out)


def test_shapes_and_training(run):
    assert run.widths == (64, 4096)
    for name in ("prediction", "distance", "gram_drift", "log_loss"):
        assert getattr(run, name).shape == (2, 2)
    assert np.all(run.first_nonfinite < 0)
    assert np.all(run.log_loss < -6)  # both phases reach (near) zero train loss


def test_wide_network_approaches_the_kernel_closed_forms(run):
    # at m = 4096 the network is the kernel predictor and moves by √(ỹᵀ(H^∞)⁻¹ỹ), to ~5%
    assert np.all(run.prediction[1] < 0.1) and np.all(run.distance[1] < 0.1)
    assert np.all(run.gram_drift[1] < 0.2)
    # and every deviation is smaller than at m = 64 (64× narrower: ~8× larger deviations)
    for name in ("prediction", "distance", "gram_drift"):
        values = getattr(run, name)
        assert values[1].mean() < values[0].mean() / 2, name


def test_setting_is_validated():
    with pytest.raises(ValueError, match="widths"):
        lt.KernelRegimeSetting(widths=(1024, 512))


def test_risk_runs_map_the_single_draw_function():
    setting = lt.ReluRiskSetting(n_values=(5,), gap_norms=(0.3, 1.0), width=64, repeats=2,
                                 pretrain_steps=20, fine_tune_steps=20, num_test=50)  # fmt: skip
    out = lt.simulate_relu_risk_runs(jax.random.PRNGKey(3), setting)
    assert out["network_risk"].shape == (2, 1, 2)
    one = lt.simulate_relu_fine_tuning(
        jax.random.split(jax.random.PRNGKey(3), 2)[1], d=10, n_source=40, n_values=(5,),
        gap_norms=(0.3, 1.0), width=64, init_scale=0.1, pretrain_steps=20, fine_tune_steps=20,
        num_test=50,
    )  # fmt: skip
    np.testing.assert_allclose(out["cor6_3_bound"][1], one["cor6_3_bound"], rtol=1e-6)
    np.testing.assert_allclose(out["network_risk"][1], one["network_risk"], rtol=1e-4)


def test_symmetric_spectral_norm_matches_numpy_svd_norm():
    # the drift's ‖A‖₂ comes from eigvalsh (no pooled SVD); the oracle is numpy's SVD norm,
    # on matrices whose dominant eigenvalue is negative as well as positive
    from ntsim.theory.linear_teachers._kernel_regime import _symmetric_spectral_norm

    a = np.random.default_rng(0).normal(size=(6, 12, 12))
    a = a + np.swapaxes(a, 1, 2)
    a[:3] -= 10 * np.eye(12)  # dominant eigenvalue ≈ −10 − …
    a[3:] += 10 * np.eye(12)
    got = np.asarray(jax.vmap(_symmetric_spectral_norm)(a))
    np.testing.assert_allclose(got, np.linalg.norm(a, 2, axis=(1, 2)), rtol=1e-5)
