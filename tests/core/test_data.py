"""Synthetic data: Haar orthogonal matrices, Gaussian inputs with a prescribed covariance."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from ntsim.core import (
    covariance,
    gaussian_inputs,
    power_law_spectrum,
    random_orthogonal,
    two_level_spectrum,
)

# Monte-Carlo checks allow 5 standard errors: with a fixed key the test is deterministic,
# and a correct sampler would fail one of ≤ 25 such z-checks with probability < 2e-5.
Z = 5.0


def test_random_orthogonal_is_orthogonal(x64, key):
    q = random_orthogonal(key, 6)
    assert q.shape == (6, 6) and q.dtype == jnp.float64
    np.testing.assert_allclose(q.T @ q, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(q @ q.T, np.eye(6), atol=1e-12)


def test_random_orthogonal_is_haar(key):
    d, n = 4, 4000
    qs = np.asarray(jax.vmap(lambda k: random_orthogonal(k, d))(jax.random.split(key, n)))
    # Haar: every entry has mean 0 and variance 1/d, so the mean over n draws has standard
    # error 1/sqrt(n d). (Without Mezzadri's sign correction the diagonal mean is ~50 SE off.)
    assert np.max(np.abs(qs.mean(axis=0))) < Z / np.sqrt(n * d)
    # The first column is uniform on the sphere: Q[0, 0]² ~ Beta(1/2, (d−1)/2), mean 1/d.
    q00 = qs[:, 0, 0] ** 2
    beta = scipy.stats.beta(0.5, (d - 1) / 2)
    assert abs(q00.mean() - 1 / d) < Z * beta.std() / np.sqrt(n)
    assert scipy.stats.kstest(q00, beta.cdf).pvalue > 1e-3
    # O(d) has two components of equal Haar mass: det = ±1 each with probability 1/2.
    dets = np.linalg.det(qs)
    np.testing.assert_allclose(np.abs(dets), 1.0, atol=1e-4)
    assert abs(np.mean(dets > 0) - 0.5) < Z * 0.5 / np.sqrt(n)


def test_gaussian_inputs_sample_covariance(x64, key):
    d, n = 6, 200_000
    k_basis, k_x = jax.random.split(key)
    spectrum = power_law_spectrum(d, 1.0, scale=2.0)
    basis = random_orthogonal(k_basis, d)
    sigma = np.asarray(covariance(spectrum, basis))
    np.testing.assert_allclose(np.linalg.eigvalsh(sigma), np.sort(spectrum), atol=1e-12)
    x = np.asarray(gaussian_inputs(k_x, n, spectrum, basis))
    assert x.shape == (n, d)
    sample = x.T @ x / n  # the mean is known to be 0
    # Var(x_i x_j) = Σ_ii Σ_jj + Σ_ij² (Isserlis), so each entry has standard error:
    se = np.sqrt((np.outer(np.diag(sigma), np.diag(sigma)) + sigma**2) / n)
    assert np.all(np.abs(sample - sigma) < Z * se), np.max(np.abs(sample - sigma) / se)
    assert np.max(np.abs(x.mean(axis=0)) / np.sqrt(np.diag(sigma) / n)) < Z


def test_gaussian_inputs_default_basis_is_diagonal(x64, key):
    x = np.asarray(gaussian_inputs(key, 50_000, jnp.array([4.0, 1.0, 0.0])))
    np.testing.assert_array_equal(x[:, 2], 0.0)  # a zero eigenvalue gives a zero coordinate
    np.testing.assert_allclose(x.var(axis=0)[:2], [4.0, 1.0], rtol=Z * np.sqrt(2 / 50_000))
    np.testing.assert_array_equal(covariance(jnp.array([4.0, 1.0, 0.0])), np.diag([4.0, 1, 0]))


def test_spectra_values(x64):
    s = np.asarray(two_level_spectrum(100, 50, 1.5, 0.3))  # Shachaf et al. 2021, Fig. 1
    np.testing.assert_array_equal(s[:50], 1.5)
    np.testing.assert_array_equal(s[50:], 0.3)
    np.testing.assert_array_equal(two_level_spectrum(3, 0, 2.0, 1.0), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(two_level_spectrum(3, 3, 2.0, 1.0), [2.0, 2.0, 2.0])
    k = np.arange(1, 11)
    np.testing.assert_allclose(power_law_spectrum(10, 1.5, scale=3.0), 3.0 * k**-1.5, rtol=1e-14)
    # exponents may be traced, e.g. vmapped over a sweep of decay rates
    betas = jnp.array([0.5, 1.0, 2.0])
    got = jax.vmap(lambda b: power_law_spectrum(10, b))(betas)
    np.testing.assert_allclose(got, k[None, :] ** -np.asarray(betas)[:, None], rtol=1e-14)


def test_bad_inputs_raise(key):
    with pytest.raises(ValueError, match="d must be a positive integer"):
        random_orthogonal(key, 0)
    with pytest.raises(ValueError, match="spectrum must be non-negative"):
        covariance(jnp.array([1.0, -0.5]))
    with pytest.raises(ValueError, match="spectrum must have ndim"):
        gaussian_inputs(key, 3, jnp.eye(2))
    with pytest.raises(ValueError, match=r"basis must be an orthogonal \(d, d\) matrix"):
        gaussian_inputs(key, 3, jnp.ones(3), basis=jnp.eye(2))
    with pytest.raises(ValueError, match="n must be a positive integer"):
        gaussian_inputs(key, 0, jnp.ones(3))
    with pytest.raises(ValueError, match="top must be an integer with 0 <= top <= d"):
        two_level_spectrum(5, 6, 1.0, 0.1)
    with pytest.raises(ValueError, match="bottom_value must be non-negative"):
        two_level_spectrum(5, 2, 1.0, -0.1)
    with pytest.raises(ValueError, match="scale must be positive"):
        power_law_spectrum(5, 1.0, scale=0.0)
    with pytest.raises(ValueError, match="exponent must be a finite scalar"):
        power_law_spectrum(5, jnp.ones(2))
