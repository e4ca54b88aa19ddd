"""Value tests of the Thm 4.2 bounds (ntsim.theory.linear_teachers._bounds) vs NumPy oracles.

Float64 through the ``x64`` fixture; tolerances are stated next to each assertion.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import covariance, gaussian_inputs, random_orthogonal, two_level_spectrum
from ntsim.theory import linear_teachers as lt
from ntsim.theory.linear_teachers import _bounds as ltb

# float64 identities on d ≤ 40: eigh/QR round-off ~1e-13 relative; 1e-10 leaves slack.
TIGHT = 1e-10


def _problem(key, n, d):
    """Haar Σ with a spread spectrum (log-uniform [0.02, 2]), X ~ N(0, Σ)^n, θ_S, θ_T."""
    ks = jax.random.split(key, 5)
    spectrum = jnp.sort(0.02 * 100.0 ** jax.random.uniform(ks[0], (d,)))[::-1]
    basis = random_orthogonal(ks[1], d)
    x = gaussian_inputs(ks[2], n, spectrum, basis)
    ts, tt = jax.random.normal(ks[3], (d,)), jax.random.normal(ks[4], (d,))
    return x, ts, tt, covariance(spectrum, basis), spectrum, basis


def _null_projector(x):
    x = np.asarray(x)
    return np.eye(x.shape[1]) - x.T @ np.linalg.solve(x @ x.T, x)


@pytest.mark.parametrize("n", [1, 9, 30, 60])
def test_realised_deviation_matches_numpy_eigvalsh(x64, key, n):
    x, _, _, sigma, *_ = _problem(key, n, 25)
    xn = np.asarray(x)
    oracle = np.abs(np.linalg.eigvalsh(xn.T @ xn / n - np.asarray(sigma))).max()
    assert float(ltb.realised_deviation(x, sigma)) == pytest.approx(oracle, rel=TIGHT)
    assert float(ltb.realised_deviation(x, sigma)) == pytest.approx(
        np.linalg.norm(xn.T @ xn / n - np.asarray(sigma), 2), rel=TIGHT
    )


@pytest.mark.parametrize("n", [1, 20, 34, 35, 39])
def test_spiked_deviation_equals_dense(x64, key, n):
    spectrum = two_level_spectrum(40, 5, 1.5, 0.3)
    basis = random_orthogonal(jax.random.fold_in(key, 1), 40)
    x = gaussian_inputs(key, n, spectrum, basis)
    dense = ltb.realised_deviation(x, covariance(spectrum, basis))
    spiked = ltb.realised_deviation_spiked(x, spectrum, 5, basis)
    assert float(spiked) == pytest.approx(float(dense), rel=TIGHT)


def test_eigen_split_norms_match_direct_projectors(x64, key):
    _, ts, tt, sigma, spectrum, basis = _problem(key, 5, 12)
    v = np.asarray(tt - ts)
    lam, top, bottom = ltb.eigen_split_norms(sigma, tt - ts)
    np.testing.assert_allclose(lam, spectrum, rtol=TIGHT)
    b = np.asarray(basis)
    for m in (1, 4, 12):
        p_top = b[:, :m] @ b[:, :m].T  # P_≤m from the generating eigenbasis
        assert top[m - 1] == pytest.approx(v @ p_top @ v, rel=TIGHT)
        assert bottom[m - 1] == pytest.approx(v @ (np.eye(12) - p_top) @ v, rel=1e-8, abs=TIGHT)


@pytest.mark.parametrize("n", [2, 10, 19])
def test_null_space_top_overlap_direct_and_davis_kahan(x64, key, n):
    x, _, _, sigma, spectrum, basis = _problem(key, n, 20)
    p_perp = _null_projector(x)
    b = np.asarray(basis)
    direct = [np.linalg.norm(p_perp @ b[:, :m], 2) for m in range(1, 21)]
    overlap = ltb.null_space_top_overlap(x, sigma)
    np.testing.assert_allclose(overlap, direct, atol=1e-8)
    g = float(ltb.realised_deviation(x, sigma))
    assert np.all(np.asarray(overlap) <= g / np.asarray(spectrum) + TIGHT)  # Davis–Kahan


@pytest.mark.parametrize("seed", range(6))
def test_deterministic_bound_holds_for_every_m(x64, seed):
    x, ts, tt, sigma, *_ = _problem(jax.random.key(seed), 3 + 5 * seed, 32)
    risk = float(lt.risk_thm4_1(x, ts, tt, sigma))
    bound = np.asarray(ltb.bound_thm4_2_deterministic(x, ts, tt, sigma))
    assert bound.shape == (32,) and np.all(np.isfinite(bound))
    assert np.all(risk <= bound * (1 + TIGHT))
    null_bound = float(ltb.risk_null_space_bound(x, ts, tt, sigma))
    v = np.asarray(tt - ts)
    oracle = np.abs(np.linalg.eigvalsh(np.asarray(x).T @ np.asarray(x) / x.shape[0] - sigma))
    assert null_bound == pytest.approx(oracle.max() * v @ _null_projector(x) @ v, rel=1e-8)
    assert risk <= null_bound * (1 + TIGHT)


def test_bound_formula_by_hand_and_zero_eigenvalue():
    # g = 1, λ = (2, 0): m = 1 gives 2·1·4/4 + 2·1·1 = 4; m = 2 has λ_2 = 0, no bound.
    out = ltb.bound_thm4_2(1.0, jnp.array([2.0, 0.0]), jnp.array([4.0, 5.0]), jnp.array([1.0, 0]))
    assert out.tolist() == [4.0, float("inf")]


def test_effective_rank_and_printed_g():
    lam = jnp.array([4.0, 2.0, 1.0, 1.0])
    assert float(ltb.effective_rank(lam)) == pytest.approx(2.0)
    # n = 1: max{√2, 2, √δ, δ} = 2 for δ = 1, = 3 for δ = 3; g = c·λ_1·max.
    assert float(ltb.deviation_bound_thm4_2(lam, 1, c=0.5, delta=1.0)) == pytest.approx(4.0)
    assert float(ltb.deviation_bound_thm4_2(lam, 1, c=0.5, delta=3.0)) == pytest.approx(6.0)
    # n = 200: √(2/200) = 0.1 dominates.
    assert float(ltb.deviation_bound_thm4_2(lam, 200, c=1.0, delta=1.0)) == pytest.approx(0.4)


def test_implied_constant_is_ratio(x64, key):
    x, _, _, sigma, spectrum, _ = _problem(key, 15, 20)
    g = float(ltb.realised_deviation(x, sigma))
    lam = np.asarray(spectrum)
    r0 = lam.sum() / lam[0]
    rate = max(np.sqrt(r0 / 15), r0 / 15, np.sqrt(2 / 15), 2 / 15)
    c = float(ltb.implied_constant(x, sigma, delta=2.0))
    assert c == pytest.approx(g / (lam[0] * rate), rel=1e-8)
    # with that c, g(λ, δ, n) equals ĝ exactly
    g_print = ltb.deviation_bound_thm4_2(spectrum, 15, c=c, delta=2.0)
    assert float(g_print) == pytest.approx(g, rel=1e-8)


def test_printed_bound_equals_combination(x64, key):
    _, ts, tt, sigma, spectrum, _ = _problem(key, 5, 10)
    g = float(ltb.deviation_bound_thm4_2(spectrum, 7, c=1.0, delta=1.0))
    lam, top, bottom = ltb.eigen_split_norms(sigma, tt - ts)
    expected = 2 * g**3 * np.asarray(top) / np.asarray(lam) ** 2 + 2 * g * np.asarray(bottom)
    got = ltb.bound_thm4_2_printed(sigma, ts, tt, 7, c=1.0, delta=1.0)
    np.testing.assert_allclose(got, expected, rtol=1e-8)


def test_bartlett_bias_bound_by_hand():
    sigma = jnp.diag(jnp.array([4.0, 2.0, 1.0, 1.0]))  # r0 = 2, ‖Σ‖ = 4
    v = jnp.array([1.0, 1.0, 0.0, 0.0])  # ‖v‖² = 2
    # n = 8: max{√(2/8), 2/8, √(log e / 8)} = 0.5 → 1.5·2·4·0.5 = 6
    got = ltb.bartlett_bias_bound(sigma, jnp.zeros(4), v, 8, c=1.5, delta=float(np.exp(-1)))
    assert float(got) == pytest.approx(6.0, rel=1e-6)


def test_r_squared_is_squared_pearson(x64, key):
    a, p = jax.random.normal(key, (2, 3, 20))
    oracle = [np.corrcoef(a[i], p[i])[0, 1] ** 2 for i in range(3)]
    np.testing.assert_allclose(ltb.r_squared(a, 3.0 * p + 1.0), oracle, rtol=1e-10)


def test_prefix_bound_matches_pointwise(x64, key):
    spectrum = two_level_spectrum(30, 4, 1.5, 0.3)
    x = gaussian_inputs(key, 30, spectrum)
    v = jax.random.normal(jax.random.fold_in(key, 2), (2, 30))
    got = ltb.bound_thm4_2_prefixes(x, spectrum, 4, v, (1, 7, 29))
    for j, n in enumerate((1, 7, 29)):
        g = ltb.realised_deviation(x[:n], jnp.diag(spectrum))
        vn = np.asarray(v)
        want = 2 * g**3 * (vn[:, :4] ** 2).sum(1) / 1.5**2 + 2 * g * (vn[:, 4:] ** 2).sum(1)
        np.testing.assert_allclose(got[:, j], want, rtol=1e-8)


def test_vmap_and_jit_agree(x64, key):
    x, ts, tt, sigma, *_ = _problem(key, 6, 10)
    xs = jnp.stack([x, 2 * x])
    batched = jax.jit(jax.vmap(lambda xi: ltb.bound_thm4_2_deterministic(xi, ts, tt, sigma)))(xs)
    np.testing.assert_allclose(batched[1], ltb.bound_thm4_2_deterministic(2 * x, ts, tt, sigma))


def test_bad_inputs_raise():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="covariance"):
        ltb.realised_deviation(x, jnp.eye(4))
    with pytest.raises(ValueError, match="semi-definite"):
        ltb.realised_deviation(x, -jnp.eye(3))
    with pytest.raises(ValueError, match="non-increasing"):
        ltb.effective_rank(jnp.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="delta"):
        ltb.deviation_bound_thm4_2(jnp.array([1.0]), 5, c=1.0, delta=0.5)
    with pytest.raises(ValueError, match="c must"):
        ltb.deviation_bound_thm4_2(jnp.array([1.0]), 5, c=-1.0, delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        ltb.bartlett_bias_bound(jnp.eye(2), jnp.zeros(2), jnp.ones(2), 5, c=1.0, delta=2.0)
    with pytest.raises(ValueError, match="spiked"):
        ltb.realised_deviation_spiked(jnp.ones((1, 3)), jnp.array([2.0, 1.0, 0.5]), 1)
    with pytest.raises(ValueError, match="n < d"):
        ltb.null_space_top_overlap(jnp.ones((3, 3)), jnp.eye(3))
