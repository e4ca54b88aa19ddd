"""The structured NTK rule: which leaves it takes, and agreement with Jacobian contraction."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import dense_leaves, empirical_ntk_fn, lora, mlp, two_layer_relu
from ntsim.core._structured_ntk import _dense_block

RTOL = 1e-5  # float32 kernels of O(1) entries; the agreement target


def _relative(a, b) -> float:
    return float(jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(b)))


def _both(apply, x, params, **kwargs):
    return tuple(
        empirical_ntk_fn(apply, implementation=i, **kwargs)(x, None, params)
        for i in ("structured", "jacobian_contraction")
    )


def test_dense_leaves_of_an_mlp_and_a_transposed_weight(key):
    model = mlp((6, 5), 2, parameterization="ntk")
    params = model.init(key, jnp.ones(3))
    flags = dense_leaves(model.apply, params, jnp.ones(3))
    assert [layer["w"] for layer in flags["layers"]] == [True] * 3  # x @ w
    assert [layer["b"] for layer in flags["layers"]] == [False] * 3  # added, not multiplied
    signs = jnp.where(jnp.arange(7) % 2 == 0, 1.0, -1.0)
    relu = two_layer_relu(signs)  # relu(x @ w.T) a: the weight enters transposed
    p = relu.init(key, jnp.ones(3))
    assert dense_leaves(relu.apply, p, jnp.ones(3)) == {"w": True}
    x = jax.random.normal(key, (6, 3))
    structured, reference = _both(relu.apply, x, p)
    assert _relative(structured, reference) < RTOL


def test_shared_weight_uses_and_disqualified_uses(key):
    k1, k2, k3 = jax.random.split(key, 3)
    params = {"w": jax.random.normal(k1, (4, 4)) / 2, "v": jax.random.normal(k2, (4,))}
    x = jax.random.normal(k3, (5, 4))

    def tied(p, x):  # W used twice, both times contracting its first axis
        return jnp.atleast_1d(jnp.tanh(jnp.tanh(x @ p["w"]) @ p["w"]) @ p["v"])

    def mixed(p, x):  # W contracted on axis 0, then on axis 1; and scaled before use
        h = jnp.tanh(x @ p["w"]) @ p["w"].T
        return jnp.atleast_1d(h @ (2.0 * p["v"]))

    assert dense_leaves(tied, params, x[0]) == {"w": True, "v": True}
    assert dense_leaves(mixed, params, x[0]) == {"w": False, "v": False}
    for apply in (tied, mixed):
        structured, reference = _both(apply, x, params)
        assert _relative(structured, reference) < RTOL


def test_both_contraction_orders_agree(key):
    keys = jax.random.split(key, 4)
    a1, a2 = jax.random.normal(keys[0], (3, 4, 5)), jax.random.normal(keys[1], (2, 6, 5))
    d1, d2 = jax.random.normal(keys[2], (3, 2, 4, 7)), jax.random.normal(keys[3], (2, 2, 6, 7))
    gram, jacobian = (_dense_block(a1, a2, d1, d2, order) for order in ("gram", "jacobian"))
    explicit = np.einsum("ntc,nitf,msc,mjsf->nimj", a1, d1, a2, d2)  # ⟨J(x), J(x')⟩ written out
    np.testing.assert_allclose(gram, explicit, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jacobian, explicit, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("trace_axes", [(-1,), ()])
def test_flax_bert_per_token_weights(key, trace_axes):
    from ntsim.transformers import BertConfig, BertEncoder, mean_pool

    config = BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=8, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)  # fmt: skip
    encoder = BertEncoder(config)
    ids = jax.random.randint(key, (4, 6), 4, 40)
    mask = jnp.ones_like(ids).at[0, -2:].set(0)
    params = encoder.init(key, ids[:1])["params"]

    def apply(p, example):
        tokens, attention = example[None, :6], example[None, 6:]
        return mean_pool(encoder.apply({"params": p}, tokens, attention), attention)[0, :2]

    examples = jnp.concatenate([ids, mask], axis=1)
    flags = dense_leaves(apply, params, examples[0])
    for name in ("query", "key", "value", "output"):
        assert flags["layer_0"]["attention"][name]["kernel"], name
    assert flags["embeddings"]["word"]["embedding"]  # a row gather: [id_t = id'_s] δ·δ'
    assert not flags["embeddings"]["layer_norm"]["scale"]  # elementwise: Jacobian fallback
    structured, reference = _both(apply, examples, params, trace_axes=trace_axes)
    assert _relative(structured, reference) < RTOL


@pytest.mark.parametrize("mode", ["fill", "clip", "wrap"])
def test_gathered_table_matches_jacobian_contraction(key, mode):
    """Repeated ids (the same row read twice), out-of-range ids (read nothing in fill mode,
    the last row in clip mode, row 9 mod 7 in wrap mode), and the explicit one-hot form."""
    k1, k2, k3 = jax.random.split(key, 3)
    params = {"table": jax.random.normal(k1, (7, 3)), "w": jax.random.normal(k2, (3, 2))}
    ids = jnp.array([[0, 2, 2, 5], [2, 9, 1, 0], [5, 5, 5, 6]])  # 9 is out of range

    def apply(p, example):
        rows = jnp.take(p["table"], example, axis=0, mode=mode)
        return jnp.tanh(jnp.nan_to_num(rows) @ p["w"]).sum(0)

    assert dense_leaves(apply, params, ids[0]) == {"table": True, "w": True}
    structured, reference = _both(apply, ids, params, trace_axes=())
    assert _relative(structured, reference) < RTOL
    if mode == "wrap":  # the same model written with one-hot rows: a dot

        def one_hot_apply(p, example):
            return jnp.tanh(jax.nn.one_hot(example % 7, 7) @ p["table"] @ p["w"]).sum(0)

        one_hot = empirical_ntk_fn(one_hot_apply, trace_axes=(), implementation="structured")
        assert _relative(structured, one_hot(ids, None, params)) < RTOL


def test_table_gathered_and_multiplied_falls_back(key):
    """A tied embedding (looked up, then used as the output matrix) mixes a gather and a dot:
    the leaf falls back to Jacobian contraction and still agrees."""
    table = jax.random.normal(key, (6, 4))
    ids = jnp.array([[0, 3], [3, 5], [1, 1]])

    def tied(p, example):
        hidden = jnp.tanh(jnp.take(p["table"], example, axis=0).mean(0))
        return hidden @ p["table"].T

    assert dense_leaves(tied, {"table": table}, ids[0]) == {"table": False}
    structured, reference = _both(tied, ids, {"table": table})
    assert _relative(structured, reference) < RTOL


def test_lora_factors_fall_back_and_still_agree(key):
    model = mlp((6,), 1, parameterization="standard")
    params0 = model.init(key, jnp.ones(3))
    wrapped = lora(model.apply, params0, targets=[("layers", 0, "w")], rank=2)
    factors = wrapped.init(jax.random.PRNGKey(1))
    factors = jax.tree.map(lambda f: f + 0.3, factors)  # B ≠ 0: both blocks non-zero
    x = jax.random.normal(key, (5, 3))
    structured, reference = _both(wrapped.apply, x, factors)
    assert _relative(structured, reference) < RTOL
