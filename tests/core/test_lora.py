"""LoRA wrapping: identity at init, merge algebra, NTK at init (A-block zero, B-block formula)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import attention_model, empirical_ntk_fn, mlp
from ntsim.core._lora import get_path, lora, set_path


def _mlp_setup(key):
    model = mlp((6, 5), activation="tanh", parameterization="ntk", b_std=0.2)
    x = jax.random.normal(key, (5, 4))
    return model, x, model.init(jax.random.fold_in(key, 1), x[0])


def test_lora_identity_at_init_and_merge(x64, key):
    model, x, p0 = _mlp_setup(key)
    wrapped = lora(model.apply, p0, targets=[("layers", 1, "w")], rank=2, alpha=4.0)
    lp = wrapped.init(jax.random.fold_in(key, 2))
    assert wrapped.scale == 2.0
    np.testing.assert_array_equal(
        jax.vmap(wrapped.apply, (None, 0))(lp, x), jax.vmap(model.apply, (None, 0))(p0, x)
    )
    b = np.random.default_rng(0).standard_normal((2, 5))
    lp = ({"a": lp[0]["a"], "b": jnp.asarray(b)},)
    merged = wrapped.merge(lp)
    np.testing.assert_allclose(
        merged["layers"][1]["w"],
        p0["layers"][1]["w"] + 2.0 * np.asarray(lp[0]["a"]) @ b,
        rtol=1e-14,
    )
    np.testing.assert_array_equal(merged["layers"][0]["w"], p0["layers"][0]["w"])
    assert np.linalg.matrix_rank(np.asarray(merged["layers"][1]["w"] - p0["layers"][1]["w"])) == 2


def test_lora_ntk_at_init_is_b_block(x64, key):
    """B = 0 ⇒ J_A = 0 exactly; K_B = s² ⟨Aᵀ∂f/∂W(x), Aᵀ∂f/∂W(x')⟩ (independent oracle)."""
    model, x, p0 = _mlp_setup(key)
    wrapped = lora(
        model.apply, p0, targets=[("layers", 0, "w"), ("layers", 1, "w")], rank=3, alpha=1.5
    )
    lp = wrapped.init(jax.random.fold_in(key, 3))
    blocks = empirical_ntk_fn(wrapped.apply, per_block=True)(x, None, lp)
    for target in blocks:
        np.testing.assert_array_equal(target["a"], 0.0)
    s = wrapped.scale
    expected = np.zeros((len(x), len(x)))
    for index, factors in enumerate(lp):
        grads = jax.vmap(
            lambda xi, index=index: jax.grad(
                lambda w, i=index: model.apply(set_path(p0, ("layers", i, "w"), w), xi)[0]
            )(p0["layers"][index]["w"])
        )(x)
        projected = s * np.einsum("ir,nio->nro", np.asarray(factors["a"]), np.asarray(grads))
        expected += np.einsum("nro,mro->nm", projected, projected)
    full = empirical_ntk_fn(wrapped.apply)(x, None, lp)
    np.testing.assert_allclose(full, expected, rtol=1e-12)
    np.testing.assert_allclose(sum(b["b"] for b in blocks), expected, rtol=1e-12)


def test_lora_attention_heads(x64, key):
    model = attention_model(width=6, num_heads=2, head_dim=3, parameterization="ntk")
    x = jax.random.normal(key, (3, 4, 5))
    p0 = model.init(jax.random.fold_in(key, 1), x[0])
    wrapped = lora(
        model.apply, p0, targets=[("attention", "query"), ("attention", "value")], rank=2
    )
    lp = wrapped.init(key)
    assert lp[0]["a"].shape == (2, 6, 2) and lp[0]["b"].shape == (2, 2, 3)
    np.testing.assert_allclose(
        jax.vmap(wrapped.apply, (None, 0))(lp, x),
        jax.vmap(model.apply, (None, 0))(p0, x),
        rtol=1e-14,
    )
    k = empirical_ntk_fn(wrapped.apply, per_block=True)(x, None, lp)
    assert all(float(jnp.max(jnp.abs(b["a"]))) == 0.0 for b in k)
    assert float(jnp.min(jnp.linalg.eigvalsh(sum(b["b"] for b in k)))) > 0


def test_lora_validation(key):
    model, x, p0 = _mlp_setup(key)
    with pytest.raises(ValueError, match="does not exist"):
        lora(model.apply, p0, targets=[("layers", 7, "w")], rank=1)
    with pytest.raises(ValueError, match="fan_in, fan_out"):
        lora(model.apply, p0, targets=[("layers", 0, "b")], rank=1)
    with pytest.raises(ValueError, match="rank must be at most"):
        lora(model.apply, p0, targets=[("layers", 2, "w")], rank=2)
    with pytest.raises(ValueError, match="rank"):
        lora(model.apply, p0, targets=[("layers", 0, "w")], rank=0)
    assert get_path({"a": [1, {"b": 2}]}, ("a", 1, "b")) == 2
    assert set_path({"a": (1, 2)}, ("a", 1), 9) == {"a": (1, 9)}
