"""Kernels of PEFT configurations at θ_0 on a tiny random BERT, against brute force.

The oracle is the flat Jacobian ``J`` of the classifier's logit w.r.t. every trainable leaf
of a configuration (``jax.jacrev`` of a ``ravel_pytree`` vector, no block structure), with
``K = J Jᵀ`` and ``K_sign = J sign(J)ᵀ`` formed explicitly; the LoRA ``B``-block is also
checked against ``s² Σ tr(Gᵀ A Aᵀ G')`` with ``G = ∂f/∂W`` taken on the plain encoder.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from ntsim.core import get_path, set_path
from ntsim.transformers import (
    AdapterLayout,
    BertConfig,
    BertEncoder,
    adamw,
    adapter_model,
    block_kernels,
    finetune,
    lora_rank_kernel,
    lora_row_kernels,
    participation_ratio,
    per_example_gradients,
    pooled_features,
)

CONFIG = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=16, max_position_embeddings=16)  # fmt: skip
LAYOUT = AdapterLayout(qv_rank=4, ffn_rank=3, alpha=8.0)
N, T = 5, 6
# float64 round-off of the same sums formed in two orders (P ≤ 1e3 terms of O(1))
RTOL = 1e-9


@pytest.fixture(scope="module")
def setup():
    with jax.enable_x64(True):
        ids = jax.random.randint(jax.random.PRNGKey(0), (N, T), 1, CONFIG.vocab_size)
        mask = jnp.ones((N, T), jnp.int32).at[0, 4:].set(0)
        encoder = BertEncoder(CONFIG).init(jax.random.PRNGKey(1), ids[:1], mask[:1])["params"]
        encoder = jax.tree.map(lambda a: a.astype(jnp.float64), encoder)
        model = adapter_model(CONFIG, encoder, LAYOUT)
        yield model, encoder, {"input_ids": ids, "attention_mask": mask}


def _one(example):
    return jax.tree.map(lambda a: a[None], example)


def _trainable(adapters, name):
    keep = {"head": ("head",), "lora_qv2": ("head", "qv"), "lora_ffn3": ("head", "ffn"),
            "last_layer": ("head", "last")}[name]  # fmt: skip
    return {k: adapters[k] for k in keep}


def _brute_force(model, adapters, selection, batch, name):
    """Flat Jacobian of the logit w.r.t. the configuration's trainable leaves."""
    trainable = _trainable(adapters, name)
    flat, unravel = ravel_pytree(trainable)

    def logits(v):
        return model.scores({**adapters, **unravel(v)}, selection, batch)

    return jax.jacrev(logits)(flat)


def _probe_kernels(model, batch, key, kind):
    adapters, selection = model.probe(key)
    fn = lambda a, x: model.scores(a, selection, _one(x))[0]  # noqa: E731
    jac = per_example_gradients(fn, adapters, batch)
    blocks = block_kernels(jac, kind=kind)
    rows_qv = lora_row_kernels(tuple(f["b"] for f in jac["qv"]), kind=kind)
    rows_ffn = lora_row_kernels(tuple(f["b"] for f in jac["ffn"]), kind=kind)
    head = sum(jax.tree.leaves(blocks["head"]))
    last = sum(jax.tree.leaves(blocks["last"]))
    return jac, head, rows_qv, rows_ffn, last


@pytest.mark.parametrize("kind", ["ntk", "sign"])
def test_configuration_kernels_equal_the_brute_force_jacobian_kernels(setup, kind):
    model, _, batch = setup
    key = jax.random.PRNGKey(2)
    with jax.enable_x64(True):
        _, head, rows_qv, rows_ffn, last = _probe_kernels(model, batch, key, kind)
        scale = lambda r: LAYOUT.alpha / r  # noqa: E731
        ours = {
            "head": head,
            "lora_qv2": head + lora_rank_kernel(rows_qv, 2, scale(2), kind=kind),
            "lora_ffn3": head + lora_rank_kernel(rows_ffn, 3, scale(3), kind=kind),
            "last_layer": head + last,
        }
        for name, kernel in ours.items():
            adapters, selection = model.init(key, name)
            jac = _brute_force(model, adapters, selection, batch, name)
            other = jnp.sign(jac) if kind == "sign" else jac
            expected = jac @ other.T
            atol = RTOL * np.abs(expected).max()
            np.testing.assert_allclose(kernel, expected, rtol=RTOL, atol=atol, err_msg=name)


def test_lora_a_block_is_exactly_zero_at_b_zero(setup):
    model, _, batch = setup
    with jax.enable_x64(True):
        adapters, selection = model.init(jax.random.PRNGKey(3), "lora_qv4")
        fn = lambda a, x: model.scores(a, selection, _one(x))[0]  # noqa: E731
        jac = per_example_gradients(fn, adapters, batch)
        a_grads = np.concatenate([np.ravel(f["a"]) for f in jac["qv"]])
        b_grads = np.concatenate([np.ravel(f["b"]) for f in jac["qv"]])
        assert np.all(a_grads == 0.0)
        assert np.abs(b_grads).max() > 1e-3  # the B-block is not zero


def test_lora_b_block_equals_the_closed_form_through_the_weight_gradient(setup):
    """s² Σ_targets tr(G(x)ᵀ A Aᵀ G(x')), G = ∂f/∂W on the plain encoder (no adapters)."""
    model, encoder, batch = setup
    key = jax.random.PRNGKey(4)
    with jax.enable_x64(True):
        adapters, selection = model.init(key, "lora_qv2")
        w = adapters["head"]["kernel"]

        def f(weights, x):
            enc = encoder
            for path, wt in zip(model.qv_targets, weights, strict=True):
                enc = set_path(enc, path, wt)
            return (pooled_features(CONFIG, enc, _one(x)) @ w)[0]

        weights = tuple(get_path(encoder, p) for p in model.qv_targets)
        grads = per_example_gradients(f, weights, batch)  # G per target: (N, fan_in, fan_out)
        s = LAYOUT.alpha / 2
        expected = np.zeros((N, N))
        for g, factors in zip(grads, adapters["qv"], strict=True):
            proj = np.einsum("nio,ik->nko", np.asarray(g), np.asarray(factors["a"]))
            expected += s**2 * np.einsum("nko,mko->nm", proj, proj)
        _, _, rows_qv, _, _ = _probe_kernels(model, batch, key, "ntk")
        np.testing.assert_allclose(lora_rank_kernel(rows_qv, 2, s), expected, rtol=RTOL,
                                   atol=RTOL * np.abs(expected).max())  # fmt: skip


@pytest.mark.slow  # a tiny-BERT AdamW compilation
def test_rank_r_adapter_stays_rank_r_and_off_blocks_stay_zero_under_adamw(setup):
    model, _, batch = setup
    batch = {**batch, "label": jnp.array([0.0, 1.0, 1.0, 0.0, 1.0])}
    adapters0, selection = model.init(jax.random.PRNGKey(5), "lora_qv2")

    def loss_fn(a, b, key):
        z = model.scores(a, selection, b, key=key)
        return jnp.mean(jax.nn.softplus(-(2 * b["label"] - 1) * z)), {}

    out = finetune(loss_fn, adapters0, batch, optimizer=adamw(1e-2), num_steps=4, batch_size=5,
                   keys=jax.random.PRNGKey(6))  # fmt: skip
    for f in out.params["qv"]:
        assert np.all(np.asarray(f["a"])[:, 2:] == 0) and np.all(np.asarray(f["b"])[2:] == 0)
        assert np.abs(np.asarray(f["b"])[:2]).max() > 0  # the rank-2 part did train
    for leaf in jax.tree.leaves((out.params["ffn"], out.params["last"])):
        assert np.all(np.asarray(leaf) == 0)


def test_participation_ratio_of_a_two_level_spectrum():
    # (a + b)² / (a² + b²) for eigenvalues {a, b}: 2 when equal, → 1 as b/a → 0
    assert float(participation_ratio(jnp.array([3.0, 1.0]))) == pytest.approx(16 / 10)
