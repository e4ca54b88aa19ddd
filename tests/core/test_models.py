"""Core models: forward passes against numpy oracles, parameterizations, constructions."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf

from ntsim.core import (
    attention_model,
    balanced_deep_linear_params,
    batched,
    deep_linear,
    end_to_end_vector,
    layer_norm,
    linear,
    mlp,
    random_signs,
    two_layer_relu,
)


def test_mlp_forward_matches_numpy(x64, key):
    model = mlp((7, 5), 2, activation="erf", parameterization="ntk", w_std=1.3, b_std=0.2)
    params = model.init(key, jnp.ones(3))
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(1), (4, 3)))
    h = x
    layers = params["layers"]
    for i, layer in enumerate(layers):
        w, b = np.asarray(layer["w"]), np.asarray(layer["b"])
        h = 1.3 / math.sqrt(w.shape[0]) * h @ w + 0.2 * b
        if i < len(layers) - 1:
            h = erf(h)
    np.testing.assert_allclose(batched(model.apply)(params, x), h, rtol=1e-12)


@pytest.mark.parametrize("activation", ["relu", "erf", "tanh", "gelu"])
def test_standard_and_ntk_parameterizations_give_the_same_function_at_init(x64, key, activation):
    # Same N(0,1) draws: the standard init folds w_std/sqrt(fan_in) into the weights.
    kwargs = dict(activation=activation, w_std=1.7, b_std=0.3)
    ntk, standard = (mlp((9, 9), 2, parameterization=p, **kwargs) for p in ("ntk", "standard"))
    x = jax.random.normal(jax.random.PRNGKey(2), (5, 4))
    np.testing.assert_allclose(
        batched(ntk.apply)(ntk.init(key, x[0]), x),
        batched(standard.apply)(standard.init(key, x[0]), x),
        rtol=1e-12,
    )


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_balanced_construction_is_exactly_zero_balanced_with_the_given_product(x64, key, depth):
    d = 6
    theta = jax.random.normal(key, (d,))
    widths = (*(d + j for j in range(depth - 1)), 1)
    keys = jax.random.split(jax.random.PRNGKey(3), max(depth - 1, 1))
    vectors = [jax.random.normal(k, (w,)) for k, w in zip(keys, widths[:-1], strict=False)]
    params = balanced_deep_linear_params(theta, widths, vectors)
    layers = params["layers"]
    np.testing.assert_allclose(end_to_end_vector(params), theta, rtol=1e-12)
    for upper, lower in zip(layers[:-1], layers[1:], strict=True):  # Def. 5.1 of Shachaf et al.
        np.testing.assert_allclose(upper.T @ upper, lower @ lower.T, atol=1e-12)
    model = deep_linear(widths)
    x = jax.random.normal(jax.random.PRNGKey(4), (3, d))
    np.testing.assert_allclose(batched(model.apply)(params, x)[:, 0], x @ theta, rtol=1e-12)


def test_two_layer_relu_forward_and_signs(x64, key):
    signs = random_signs(key, 1000)
    assert set(np.unique(signs).tolist()) == {-1.0, 1.0}
    assert abs(float(signs.mean())) < 0.15  # 4.7 standard deviations of a ±1 mean over 1000
    model = two_layer_relu(signs, init_scale=0.5)
    params = model.init(jax.random.PRNGKey(1), jnp.ones(3))
    assert float(params["w"].std()) == pytest.approx(0.5, rel=0.05)
    x = np.array([0.3, -1.0, 2.0])
    expected = np.asarray(signs) @ np.maximum(np.asarray(params["w"]) @ x, 0) / math.sqrt(1000)
    np.testing.assert_allclose(model.apply(params, jnp.asarray(x)), [expected], rtol=1e-12)


def test_linear_model(key):
    model = linear(out_dim=1, init_scale=0.0)
    params = model.init(key, jnp.ones(3))
    assert np.all(params["w"] == 0) and params["w"].shape == (3,)
    np.testing.assert_allclose(model.apply({"w": jnp.array([1.0, 2.0, 3.0])}, jnp.ones(3)), [6.0])


def test_layer_norm_normalises_and_rescales(x64):
    x = jnp.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]])
    y = layer_norm(x, jnp.full(3, 2.0), jnp.full(3, 0.5), eps=0.0)
    np.testing.assert_allclose(((y - 0.5) / 2).mean(-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(((y - 0.5) / 2).var(-1), 1.0, rtol=1e-12)


def test_attention_numpy_oracle_single_head(x64, key):
    model = attention_model(width=4, num_heads=1, head_dim=4, parameterization="ntk")
    params = model.init(key, jnp.ones((3, 2)))
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(5), (3, 2)))
    p = jax.tree.map(np.asarray, params)
    h = x @ p["embed"]["w"] / math.sqrt(2)
    q, k, v = (h @ p["attention"][n][0] / 2 for n in ("query", "key", "value"))
    logits = q @ k.T / 4  # "1/d" scaling with head_dim 4
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    z = h + weights @ v @ p["attention"]["out"] / 2
    z = (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + 1e-5)
    expected = z.mean(0) @ p["head"]["w"] / 2
    np.testing.assert_allclose(model.apply(params, jnp.asarray(x)), expected, rtol=1e-10)


def test_attention_logits_shrink_under_one_over_d_scaling(key):
    # At init the logits are O(1/sqrt(D_h)) under 1/d scaling and O(1) under 1/sqrt(d):
    # doubling the width four times shrinks their spread by ~4x only under "1/d".
    def logit_spread(width, scaling):
        model = attention_model(width=width, logit_scaling=scaling, parameterization="ntk")
        params = model.init(key, jnp.ones((8, 4)))
        h = jax.random.normal(jax.random.PRNGKey(6), (8, width))
        q = h @ params["attention"]["query"][0] / math.sqrt(width)
        k = h @ params["attention"]["key"][0] / math.sqrt(width)
        scale = 1 / width if scaling == "1/d" else 1 / math.sqrt(width)
        return float(jnp.std(scale * q @ k.T))

    ratio_d = logit_spread(32, "1/d") / logit_spread(512, "1/d")
    ratio_sqrt = logit_spread(32, "1/sqrt(d)") / logit_spread(512, "1/sqrt(d)")
    assert 2.5 < ratio_d < 6.5  # sqrt(512/32) = 4; loose for one random draw
    assert 0.6 < ratio_sqrt < 1.6


def test_model_errors_name_the_argument(key):
    with pytest.raises(ValueError, match="parameterization must be one of"):
        mlp((3,), parameterization="mup")
    with pytest.raises(ValueError, match="activation must be one of"):
        mlp((3,), activation="swish", parameterization="ntk")
    with pytest.raises(ValueError, match="hidden"):
        mlp((0,), parameterization="ntk")
    model = mlp((3,), parameterization="ntk")
    params = model.init(key, jnp.ones(4))
    with pytest.raises(ValueError, match=r"one example of shape \(4,\)"):
        model.apply(params, jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="logit_scaling"):
        attention_model(width=4, logit_scaling="1/d^2", parameterization="ntk")
    with pytest.raises(ValueError, match="widths must end with output width 1"):
        balanced_deep_linear_params(jnp.ones(3), (3, 2), [jnp.ones(3)])
    with pytest.raises(ValueError, match="positive"):
        balanced_deep_linear_params(jnp.zeros(3), (3, 1), [jnp.ones(3)])
