"""The kernel-GD simulations the early-stopping claims read (theory/_kernel_gd_checks.py).

Oracles: numpy matrix powers and eigen-decompositions recomputed from the documented key
layout; the simulations' own comparisons must then be at round-off.
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ntsim.theory import early_stopping as es


def test_random_kernel_is_full_rank_psd(x64, key):
    gram = np.asarray(es.random_kernel(key, 9))
    lam = np.linalg.eigvalsh(gram)
    np.testing.assert_allclose(gram, gram.T)
    assert lam.min() > 0 and lam.max() / lam.min() > 10  # full rank, spread spectrum


def test_bias_variance_bounds_match_numpy(x64, key):
    setting = es.BoundsSetting(num_train=6, num_taus=5, instances=3)
    run = es.simulate_bias_variance_bounds(key, setting)
    k_kernel, k_coef, k_sigma = jax.random.split(jax.random.split(key, 3)[2], 3)
    gram = np.asarray(es.random_kernel(k_kernel, 6))
    kernel = gram / 6
    lam, q = np.linalg.eigh(kernel)
    alpha = 1 / lam[-1]
    coef = np.asarray(jax.random.normal(k_coef, (6,)))
    sigma = float(jax.random.uniform(k_sigma, minval=0.2, maxval=2.0))
    taus = np.unique(np.geomspace(1, 10_000, 5).round())
    for i, tau in enumerate(taus):
        decay = np.linalg.matrix_power(np.eye(6) - alpha * kernel, int(tau))
        bias = np.sum((decay @ gram @ coef) ** 2) / 6
        variance = sigma**2 / 6 * np.sum((1 - (1 - alpha * lam) ** tau) ** 2)
        assert float(run.bias[2, i]) == pytest.approx(bias, rel=1e-9)
        assert float(run.variance[2, i]) == pytest.approx(variance, rel=1e-9)
        eta = alpha * tau
        assert float(run.bias_bound[2, i]) == pytest.approx(
            coef @ gram @ coef / (2 * math.e * eta), rel=1e-12
        )


def test_closed_forms_and_linearised_gd_agree_to_round_off(x64, key):
    errors = es.simulate_kernel_closed_forms(
        key, es.ClosedFormSetting(num_train=5, num_test=3, steps=10, instances=4)
    )
    assert max(float(np.max(v)) for v in errors) < 1e-11
    gap = es.simulate_linearised_gd(
        key, es.LinearisedGDSetting(width=8, num_train=3, input_dim=2, steps=5, instances=2)
    )
    assert np.asarray(gap).shape == (2,) and float(np.max(gap)) < 1e-11


def test_monte_carlo_z_scores_are_standard(x64, key):
    z = np.asarray(
        es.simulate_bias_variance_monte_carlo(
            key,
            es.MonteCarloSetting(
                num_train=5, draws=2000, taus=(1, 4), instances=20, batch_size=5
            ),  # fmt: skip
        )
    )
    assert z.shape == (20, 4)
    assert abs(z.mean()) < 4 / math.sqrt(z.size) * 1.5 and 0.5 < z.std() < 1.5
    with pytest.raises(ValueError, match="taus"):
        es.MonteCarloSetting(taus=(0,))
