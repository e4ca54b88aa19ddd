"""The Flax GPT decoder against the pure core decoder; LoRA on BERT's query/value kernels."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import causal_decoder, lora
from ntsim.transformers import (
    BertConfig,
    BertEncoder,
    GPTConfig,
    GPTDecoder,
    lora_targets,
    mean_pool,
    param_mask,
    subset_ntk_fn,
)


def _flax_from_core(core: dict, width: int) -> dict:
    """The core decoder's parameters in the Flax decoder's layout (fused qkv split in 3)."""
    params = {
        "embed": {"embedding": core["embed"]},
        "position": {"embedding": core["position"]},
        "ln_final": dict(core["ln_final"]),
        "unembed": {"kernel": core["unembed"]},
    }
    for layer, block in enumerate(core["blocks"]):
        att = block["attention"]
        kernels = jnp.split(att["qkv"], 3, axis=1)
        biases = jnp.split(att["qkv_bias"], 3)
        attention = {
            name: {"kernel": w, "bias": b}
            for name, w, b in zip(("query", "key", "value"), kernels, biases, strict=True)
        }
        attention["output"] = {"kernel": att["out"], "bias": att["out_bias"]}
        mlp = block["mlp"]
        params[f"block_{layer}"] = {
            "ln_attention": dict(block["ln1"]),
            "attention": attention,
            "ln_mlp": dict(block["ln2"]),
            "mlp_hidden": {"kernel": mlp["w1"], "bias": mlp["b1"]},
            "mlp_output": {"kernel": mlp["w2"], "bias": mlp["b2"]},
        }
    return params


def test_flax_gpt_equals_core_decoder_and_is_causal():
    config = GPTConfig(vocab_size=50, context=12, width=24, depth=2, num_heads=3)
    core = causal_decoder(vocab_size=50, context=12, width=24, depth=2, num_heads=3)
    core_params = core.init(jax.random.PRNGKey(0))
    # perturb LayerNorms and biases so that no parameter is at its trivial init value
    core_params = jax.tree.map(
        lambda p: p + 0.1 * jax.random.normal(jax.random.PRNGKey(p.size), p.shape), core_params
    )
    model = GPTDecoder(config)
    flax_params = _flax_from_core(core_params, 24)
    reference = model.init(jax.random.PRNGKey(1), jnp.zeros((1, 12), jnp.int32))["params"]
    assert jax.tree.structure(flax_params) == jax.tree.structure(reference)
    tokens = jax.random.randint(jax.random.PRNGKey(2), (3, 10), 0, 50)
    logits = model.apply({"params": flax_params}, tokens)
    expected = jax.vmap(core.apply, in_axes=(None, 0))(core_params, tokens)
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)
    changed = model.apply({"params": flax_params}, tokens.at[:, 6].set(7))
    np.testing.assert_array_equal(changed[:, :6], logits[:, :6])  # the past ignores the future
    assert not np.allclose(changed[:, 6:], logits[:, 6:])
    with pytest.raises(ValueError, match="context"):
        model.apply({"params": flax_params}, jnp.zeros((1, 13), jnp.int32))


TINY = BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=12, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0)  # fmt: skip


def test_lora_on_bert_query_value_and_its_ntk_at_init():
    key = jax.random.PRNGKey(0)
    ids = jax.random.randint(key, (5, 8), 4, 60)
    mask = jnp.ones_like(ids).at[:2, -2:].set(0)
    encoder = BertEncoder(TINY)
    params0 = encoder.init(key, ids[:1])["params"]
    targets = lora_targets(params0)
    assert targets == tuple((f"layer_{layer}", "attention", name, "kernel")
                            for name in ("query", "value") for layer in (0, 1))  # fmt: skip
    readout = jax.random.normal(jax.random.PRNGKey(1), (16,))

    def apply(params, example):  # one sentence -> a scalar score
        tokens, attention = example[None, :8], example[None, 8:]
        hidden = encoder.apply({"params": params}, tokens, attention)
        return mean_pool(hidden, attention)[0] @ readout[:, None]

    rank, alpha = 2, 6.0
    wrapped = lora(apply, params0, targets=targets, rank=rank, alpha=alpha)
    lora_params = wrapped.init(jax.random.PRNGKey(3))
    examples = jnp.concatenate([ids, mask], axis=1)
    batched = jax.vmap(wrapped.apply, (None, 0))(lora_params, examples)
    np.testing.assert_allclose(batched, jax.vmap(apply, (None, 0))(params0, examples), rtol=1e-6)
    # NTK at init (Hu et al. with B = 0): the A-block vanishes, so the NTK is the B-block;
    # that of target W is (α/r)² tr(G(x)ᵀ A Aᵀ G(x')), G = ∂f/∂W, from plain gradients.
    ntk_a = subset_ntk_fn(wrapped.apply, param_mask(lora_params, "*/a"))(
        examples, None, lora_params
    )
    ntk_b = subset_ntk_fn(wrapped.apply, param_mask(lora_params, "*/b"))(
        examples, None, lora_params
    )
    assert float(jnp.max(jnp.abs(ntk_a))) == 0.0
    grads = jax.vmap(jax.grad(lambda p, x: apply(p, x)[0]), (None, 0))(params0, examples)
    expected = 0.0
    for path, factors in zip(targets, lora_params, strict=True):
        g = grads
        for part in path:
            g = g[part]
        projected = jnp.einsum("nio,ir->nro", g, factors["a"])  # Aᵀ G(x) per example
        expected = expected + (alpha / rank) ** 2 * jnp.einsum("nro,mro->nm", projected, projected)
    np.testing.assert_allclose(ntk_b, expected, rtol=1e-4, atol=1e-6)
