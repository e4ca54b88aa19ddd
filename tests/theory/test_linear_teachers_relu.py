"""Value tests of ntsim.theory.linear_teachers._relu (Shachaf et al. 2021, Sec 6).

Oracles: NumPy solves, the identity (π − arccos t)/(2π) = 1/4 + arcsin(t)/(2π), and the
explicit activation-pattern Gram (1/m)(XXᵀ)∘(AAᵀ). float64 via the ``x64`` fixture.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import empirical_ntk_fn, random_signs, two_layer_relu, two_layer_relu_hinf
from ntsim.theory.linear_teachers import _relu as relu

TIGHT = 1e-10  # float64 round-off on n ≤ 30 with cond(H^∞) ≲ 1e3


def test_arccos_arcsin_identity_and_hinf_dominates_gram(x64, key):
    t = np.linspace(-1, 1, 101)
    np.testing.assert_allclose((np.pi - np.arccos(t)) / (2 * np.pi),
                               0.25 + np.arcsin(t) / (2 * np.pi), atol=1e-15)  # fmt: skip
    x = np.asarray(relu.unit_norm_inputs(key, 25, 8))
    gram = x @ x.T
    oracle = gram * (0.25 + np.arcsin(np.clip(gram, -1, 1)) / (2 * np.pi))
    np.testing.assert_allclose(two_layer_relu_hinf(x), oracle, atol=TIGHT)
    assert np.linalg.eigvalsh(oracle - gram / 4)[0] > -TIGHT


def test_hinf_norm_matches_numpy_solve(x64, key):
    x = relu.unit_norm_inputs(key, 12, 20)
    h = np.asarray(two_layer_relu_hinf(x))
    r = np.asarray(jax.random.normal(jax.random.fold_in(key, 1), (12,)))
    oracle = np.sqrt(r @ np.linalg.solve(h, r))
    assert float(relu.hinf_norm(h, r)) == pytest.approx(oracle, rel=TIGHT)
    assert float(relu.risk_bound_thm6_1(h, r)) == pytest.approx(2 * oracle / np.sqrt(12), rel=TIGHT)


def test_bounds_values(x64, key):
    x = relu.unit_norm_inputs(key, 6, 15)
    ts = jnp.arange(15.0) / 10
    tt = ts + jnp.ones(15)
    xn = np.asarray(x)
    p_par = xn.T @ np.linalg.solve(xn @ xn.T, xn)
    v = np.ones(15)
    assert float(relu.hinf_norm_bound_derived(x, ts, tt)) == pytest.approx(
        2 * np.linalg.norm(p_par @ v), rel=TIGHT)  # fmt: skip
    assert float(relu.hinf_norm_bound_cor6_2(ts, tt)) == pytest.approx(3 * np.sqrt(15))
    assert float(relu.risk_bound_cor6_3(ts, tt, 9)) == pytest.approx(6 * np.sqrt(15) / 3)
    norm = relu.hinf_norm(two_layer_relu_hinf(x), x @ (tt - ts))
    assert float(norm) <= float(relu.hinf_norm_bound_derived(x, ts, tt)) + TIGHT


def test_kernel_predictor_interpolates_and_matches_numpy(x64, key):
    x = relu.unit_norm_inputs(key, 10, 6)
    xt = relu.unit_norm_inputs(jax.random.fold_in(key, 1), 7, 6)
    r = jnp.linspace(-1, 1, 10)
    f_s = jnp.zeros(10)
    np.testing.assert_allclose(relu.kernel_predictor(x, x, f_s, r), r, atol=TIGHT)
    h, hx = np.asarray(two_layer_relu_hinf(x)), np.asarray(two_layer_relu_hinf(xt, x))
    oracle = 0.5 + hx @ np.linalg.solve(h, np.asarray(r))
    np.testing.assert_allclose(relu.kernel_predictor(xt, x, jnp.full(7, 0.5), r), oracle,
                               atol=TIGHT)  # fmt: skip


def test_first_layer_gram_is_activation_pattern_gram(x64, key):
    x = relu.unit_norm_inputs(key, 5, 4)
    signs = random_signs(key, 64)
    params = two_layer_relu(signs).init(jax.random.fold_in(key, 2), x[0])
    a = (np.asarray(x) @ np.asarray(params["w"]).T > 0).astype(float)  # (n, m)
    oracle = (np.asarray(x) @ np.asarray(x).T) * (a @ a.T) / 64
    gram = relu.first_layer_gram(signs, params, x)
    np.testing.assert_allclose(gram, oracle, atol=TIGHT)
    # ... and it is the empirical NTK w.r.t. W, by autodiff
    ntk = empirical_ntk_fn(two_layer_relu(signs).apply)(x, None, params)
    np.testing.assert_allclose(gram, ntk, atol=TIGHT)
    with pytest.raises(ValueError, match="must have shape"):
        relu.first_layer_gram(signs[:10], params, x)


def test_residual_targets_and_clipped_loss(x64, key):
    x = relu.unit_norm_inputs(key, 4, 3)
    model = two_layer_relu(jnp.array([1.0, -1.0]))
    params = {"w": jnp.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])}
    xn = np.asarray(x)
    f = (np.maximum(xn[:, 0], 0) - np.maximum(xn[:, 1], 0)) / np.sqrt(2)
    np.testing.assert_allclose(relu.residual_targets(model.apply, params, x, jnp.ones(4)),
                               1 - f, atol=TIGHT)  # fmt: skip
    assert float(relu.clipped_l1_loss(jnp.array([0.0, 2.0]), jnp.array([0.2, -3.0]))) == (
        pytest.approx(0.6)
    )


def test_pretraining_interpolates_source(x64, key):
    xs = relu.unit_norm_inputs(key, 8, 5)
    y = xs[:, 0]
    eta = 0.9 * 8 / float(jnp.linalg.eigvalsh(two_layer_relu_hinf(xs))[-1])  # stable step
    pre = relu.pretrain_two_layer_relu(key, xs, y, width=512, init_scale=0.1,
                                       learning_rate=eta, num_steps=600)  # fmt: skip
    f = jax.vmap(two_layer_relu(pre.signs).apply, in_axes=(None, 0))(pre.params, xs)[:, 0]
    assert float(jnp.max(jnp.abs(f - y))) < 1e-4  # GD contracts ~(1 − 2ηλ₀/n)^t → 0


def test_bad_inputs_raise(x64):
    with pytest.raises(ValueError, match="positive definite"):
        relu.hinf_norm(jnp.array([[1.0, 1.0], [1.0, 1.0]]), jnp.ones(2))
    with pytest.raises(ValueError, match="square"):
        relu.hinf_norm(jnp.ones((2, 3)), jnp.ones(2))
    with pytest.raises(ValueError, match="residual"):
        relu.hinf_norm(jnp.eye(2), jnp.ones(3))
    with pytest.raises(ValueError, match="positive definite"):  # parallel inputs: λ₀ = 0
        relu.kernel_predictor(jnp.eye(2), jnp.array([[1.0, 0.0], [1.0, 0.0]]), jnp.zeros(2),
                              jnp.ones(2))  # fmt: skip
    with pytest.raises(ValueError, match="n < d"):
        relu.hinf_norm_bound_derived(jnp.eye(3), jnp.zeros(3), jnp.ones(3))
    with pytest.raises(ValueError, match="delta"):
        relu.thm6_1_o_term(10, 0.1, 1.5, 1.0)
    with pytest.raises(ValueError, match="same shape"):
        relu.clipped_l1_loss(jnp.ones(2), jnp.ones(3))
