"""Stabilising-method pieces (MMR, MHLoss, MixOut, LNSR, SURT) against independent oracles.

Oracles: explicit class means and single-head losses in numpy, expectations over many
random masks / noise draws with standard-error tolerances, and ``jax.jacfwd`` Jacobians.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core._regularizers import (
    augmented_linear_head,
    logistic_loss,
    masked_reconstruction_loss,
    max_margin_regularizer,
    mixout,
    multi_head_loss,
    multi_head_predict,
    noise_stability_penalty,
)

# Monte Carlo checks accept |estimate − expectation| ≤ 4 standard errors: for a normal
# estimate the false-alarm rate is 6e-5 per check (the fixed key makes it deterministic).
_Z = 4.0


def _labels(rng, n):
    y = rng.choice([-1.0, 1.0], size=n)
    y[0], y[1] = 1.0, -1.0  # both classes present
    return y


# ------------------------------------------------------------------------------- MMR


@pytest.mark.parametrize("weighted", [False, True])
def test_mmr_equals_inverse_one_plus_class_mean_gap(x64, weighted):
    rng = np.random.default_rng(0)
    for n, k in [(2, 1), (7, 3), (40, 5)]:
        e, y = rng.normal(size=(n, k)), _labels(rng, n)
        w = rng.uniform(0.1, 2.0, size=n) if weighted else np.ones(n)
        mu_p = (w[y > 0, None] * e[y > 0]).sum(0) / w[y > 0].sum()
        mu_m = (w[y < 0, None] * e[y < 0]).sum(0) / w[y < 0].sum()
        expected = 1.0 / (1.0 + np.linalg.norm(mu_p - mu_m))
        got = max_margin_regularizer(e, y, weights=w if weighted else None)
        np.testing.assert_allclose(float(got), expected, rtol=1e-12)


def test_mmr_gradient_is_finite_at_equal_class_means(x64):
    e = jnp.array([[1.0, 2.0], [1.0, 2.0]])
    g = jax.grad(max_margin_regularizer)(e, jnp.array([1.0, -1.0]))
    assert float(max_margin_regularizer(e, jnp.array([1.0, -1.0]))) == 1.0
    np.testing.assert_array_equal(np.asarray(g), 0.0)


def test_mmr_gradient_pushes_class_means_apart(x64):
    # dR/dμ₊ = −(μ₊ − μ₋)/(‖·‖(1 + ‖·‖)²): descent moves μ₊ away from μ₋.
    rng = np.random.default_rng(1)
    e, y = rng.normal(size=(10, 3)), _labels(rng, 10)
    g = np.asarray(jax.grad(max_margin_regularizer)(jnp.asarray(e), jnp.asarray(y)))
    gap = e[y > 0].mean(0) - e[y < 0].mean(0)
    dist = np.linalg.norm(gap)
    expected = -(gap / (dist * (1 + dist) ** 2))[None, :] * np.where(
        y[:, None] > 0, 1 / (y > 0).sum(), -1 / (y < 0).sum()
    )
    np.testing.assert_allclose(g, expected, rtol=1e-10)


def test_mmr_rejects_a_missing_class_and_bad_labels():
    with pytest.raises(ValueError, match="each class"):
        max_margin_regularizer(jnp.ones((3, 2)), jnp.ones(3))
    with pytest.raises(ValueError, match="labels must be ±1"):
        max_margin_regularizer(jnp.ones((2, 2)), jnp.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="each class"):  # weight 0 removes the only −1
        max_margin_regularizer(jnp.ones((2, 2)), jnp.array([1.0, -1.0]), weights=[1.0, 0.0])
    # under jit a missing class cannot raise; it gives NaN (caught by divergence checks)
    assert np.isnan(float(jax.jit(max_margin_regularizer)(jnp.ones((3, 2)), jnp.ones(3))))


@pytest.mark.parametrize("labels", [[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], [1.0]])
def test_mmr_missing_class_value_has_zero_gradient(x64, labels):
    """``missing_class=0``: a one-class minibatch gives 0 and a zero (not NaN) gradient."""
    y = jnp.asarray(labels)
    e = jnp.arange(2.0 * len(labels)).reshape(len(labels), 2)
    fn = lambda e, y: max_margin_regularizer(e, y, missing_class=0.0)  # noqa: E731
    for f in (fn, jax.jit(fn)):
        assert float(f(e, y)) == 0.0
        np.testing.assert_array_equal(np.asarray(jax.grad(f)(e, y)), 0.0)
    # with both classes the option changes nothing (value and gradient)
    e2, y2 = jnp.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]), jnp.array([-1.0, 1.0, 1.0])
    assert float(fn(e2, y2)) == float(max_margin_regularizer(e2, y2))
    np.testing.assert_array_equal(
        np.asarray(jax.grad(fn)(e2, y2)), np.asarray(jax.grad(max_margin_regularizer)(e2, y2))
    )


def test_mmr_vmap_equals_stacked_calls(x64):
    rng = np.random.default_rng(2)
    e = rng.normal(size=(4, 6, 2))
    y = np.stack([_labels(rng, 6) for _ in range(4)])
    batched = jax.jit(jax.vmap(max_margin_regularizer))(e, y)
    single = [float(max_margin_regularizer(e[b], y[b])) for b in range(4)]
    np.testing.assert_allclose(np.asarray(batched), single, rtol=1e-12)


# ---------------------------------------------------------------------------- MHLoss


def _np_logistic(u):
    return np.logaddexp(0.0, -u)


def test_multi_head_loss_is_the_mean_of_single_head_losses(x64):
    rng = np.random.default_rng(3)
    n, k, num_heads = 12, 4, 5
    e, y = rng.normal(size=(n, k)), _labels(rng, n)
    heads = rng.normal(size=(num_heads, k + 1))
    x_aug = np.concatenate([e, -np.ones((n, 1))], axis=1)  # x̃ = [E(x); −1]
    single = [_np_logistic(y * (x_aug @ w)).mean() for w in heads]
    np.testing.assert_allclose(float(multi_head_loss(heads, e, y)), np.mean(single), rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(multi_head_predict(heads, e)), x_aug @ heads.mean(0), rtol=1e-12
    )
    w = rng.uniform(0, 1, size=n)
    weighted = np.mean([(w * _np_logistic(y * (x_aug @ h))).sum() / w.sum() for h in heads])
    np.testing.assert_allclose(float(multi_head_loss(heads, e, y, weights=w)), weighted, rtol=1e-12)


def test_multi_head_gradient_is_one_over_h_times_single_head_gradient(x64):
    rng = np.random.default_rng(4)
    n, k, num_heads = 9, 3, 7
    e, y = jnp.asarray(rng.normal(size=(n, k))), jnp.asarray(_labels(rng, n))
    heads = jnp.asarray(rng.normal(size=(num_heads, k + 1)))
    grad_mh = jax.grad(multi_head_loss)(heads, e, y)
    # independent single-head gradient: ∇_w mean_i ℓ(y_i wᵀx̃_i) = mean_i ℓ'(u_i) y_i x̃_i
    x_aug = np.concatenate([np.asarray(e), -np.ones((n, 1))], axis=1)
    yv = np.asarray(y)
    for h in range(num_heads):
        u = yv * (x_aug @ np.asarray(heads[h]))
        single = ((-1.0 / (1.0 + np.exp(u))) * yv) @ x_aug / n
        np.testing.assert_allclose(np.asarray(grad_mh[h]), single / num_heads, rtol=1e-10)


def test_multi_head_with_one_head_is_plain_logistic_loss(x64):
    e, y = jnp.array([[1.0], [-2.0]]), jnp.array([1.0, -1.0])
    w = jnp.array([[0.5, 0.25]])
    expected = np.mean(_np_logistic(np.array([1.0, 1.0]) * np.array([0.25, 1.25])))
    np.testing.assert_allclose(float(multi_head_loss(w, e, y)), expected, rtol=1e-12)
    assert float(augmented_linear_head(w[0], e[0])) == 0.25
    np.testing.assert_allclose(float(logistic_loss(0.0)), np.log(2.0), rtol=1e-12)


# ---------------------------------------------------------------------------- MixOut


def test_mixout_p_zero_is_the_identity(key):
    params = {"a": jnp.arange(6.0).reshape(2, 3), "b": jnp.array([-1.0])}
    pre = jax.tree.map(jnp.ones_like, params)
    out = mixout(key, params, pre, 0.0)
    jax.tree.map(
        lambda a, b: np.testing.assert_array_equal(np.asarray(a), np.asarray(b)), out, params
    )


def test_mixout_values_frequency_and_expectation(key, x64):
    p, num_masks = 0.3, 20_000
    w = jnp.array([2.0, -1.0, 0.5, 3.0])
    u = jnp.array([1.0, 1.0, -2.0, 0.0])
    draws = np.asarray(jax.vmap(lambda k: mixout(k, w, u, p))(jax.random.split(key, num_masks)))
    wn, un = np.asarray(w), np.asarray(u)
    kept = (wn - p * un) / (1 - p)  # M = 1; M = 0 gives exactly u
    assert not np.any(np.isclose(kept, un))  # the two outcomes are distinguishable
    is_u = np.isclose(draws, un)
    assert np.all(is_u | np.isclose(draws, kept))
    # replaced with probability p: binomial standard error sqrt(p(1 − p)/N)
    freq = is_u.mean(axis=0)
    assert np.all(np.abs(freq - p) <= _Z * np.sqrt(p * (1 - p) / num_masks))
    # unbiased: E[Φ(w)] = w; per-coordinate std of Φ is |kept − u|·sqrt(p(1 − p))
    se = np.abs(kept - un) * np.sqrt(p * (1 - p) / num_masks)
    assert np.all(np.abs(draws.mean(axis=0) - wn) <= _Z * se)


def test_mixout_rejects_bad_p_and_mismatched_trees(key):
    with pytest.raises(ValueError, match=r"p must lie in \[0, 1\)"):
        mixout(key, jnp.ones(2), jnp.ones(2), 1.0)
    with pytest.raises(ValueError, match="same structure"):
        mixout(key, {"a": jnp.ones(2)}, {"b": jnp.ones(2)}, 0.1)


# ------------------------------------------------------------------------------ LNSR


def test_lnsr_linear_map_is_sigma_squared_frobenius(key, x64):
    rng = np.random.default_rng(5)
    a = jnp.asarray(rng.normal(size=(3, 4)))
    n, sigma = 20_000, 0.3
    h = jnp.asarray(rng.normal(size=(n, 4)))
    r = float(noise_stability_penalty(key, lambda m, v: m @ v, a, h, sigma))
    expected = sigma**2 * float(jnp.sum(a**2))
    # ‖Aε‖² for ε ~ N(0, σ²I) has variance 2σ⁴‖AᵀA‖_F²; the mean of n draws has SE below
    se = np.sqrt(2 * sigma**4 * float(jnp.sum((a.T @ a) ** 2)) / n)
    assert abs(r - expected) <= _Z * se


def test_lnsr_small_sigma_matches_jacobian_and_vanishes(key, x64):
    rng = np.random.default_rng(6)
    params = {
        "w1": jnp.asarray(rng.normal(size=(5, 3))),
        "w2": jnp.asarray(rng.normal(size=(2, 5))),
    }

    def f(p, h):
        return p["w2"] @ jnp.tanh(p["w1"] @ h)

    n = 20_000
    h = jnp.asarray(rng.normal(size=(n, 3)))
    jac_sq = jax.vmap(lambda v: jnp.sum(jax.jacfwd(f, argnums=1)(params, v) ** 2))(h)
    sigma = 1e-3
    r = float(noise_stability_penalty(key, f, params, h, sigma))
    expected = sigma**2 * float(jac_sq.mean())
    # MC spread ≈ sqrt(2)·σ²·mean‖J‖²/sqrt(n) ~ 1% of the value; the O(σ⁴) bias is ~1e-6 relative
    assert abs(r - expected) <= 0.05 * expected
    tiny = float(noise_stability_penalty(key, f, params, h, 1e-8))
    assert 0 < tiny <= 1e-15 * float(jac_sq.mean()) * 10


def test_lnsr_rejects_nonpositive_sigma(key):
    with pytest.raises(ValueError, match="sigma must be positive"):
        noise_stability_penalty(key, lambda p, h: h, None, jnp.ones((2, 2)), 0.0)


# ------------------------------------------------------------------------------ SURT


def test_masked_reconstruction_counts_only_masked_coordinates(key):
    # identity "decoder" on all-ones inputs: masked coords (set to 0) have error 1, unmasked
    # ones error 0; the loss is 1 only if unmasked coordinates are excluded from the average.
    loss = masked_reconstruction_loss(key, lambda p, v: v, None, jnp.ones((50, 8)), 0.2)
    assert float(loss) == pytest.approx(1.0)


def test_masked_reconstruction_expectation(key, x64):
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.normal(size=(4000, 5)))
    c = jnp.asarray(rng.normal(size=5))
    # a constant decoder g(x̃) = c: loss = average of (c_j − x_ij)² over masked (i, j); masks
    # are independent of x, so its expectation ≈ the average over all (i, j).
    loss = float(masked_reconstruction_loss(key, lambda p, v: p, c, x, 0.5))
    err = np.asarray((c[None, :] - x) ** 2)
    se = err.std() / np.sqrt(0.5 * err.size)
    assert abs(loss - err.mean()) <= _Z * se


def test_masked_reconstruction_weight_zero_drops_an_input(key):
    x = jnp.concatenate([jnp.ones((1, 6)), 3.0 * jnp.ones((1, 6))])
    # identity decoder: masked coordinates of row r have error x_r², i.e. 1 or 9
    only_first = masked_reconstruction_loss(key, lambda p, v: v, None, x, 1.0, weights=[1, 0])
    only_second = masked_reconstruction_loss(key, lambda p, v: v, None, x, 1.0, weights=[0, 2])
    assert float(only_first) == pytest.approx(1.0) and float(only_second) == pytest.approx(9.0)


def test_masked_reconstruction_rejects_bad_inputs(key):
    with pytest.raises(ValueError, match="mask_rate"):
        masked_reconstruction_loss(key, lambda p, v: v, None, jnp.ones((2, 2)), 0.0)
    with pytest.raises(ValueError, match="reconstruct"):
        masked_reconstruction_loss(key, lambda p, v: v[:1], None, jnp.ones((2, 2)), 0.5)
