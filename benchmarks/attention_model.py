"""The benchmark's 2-layer attention model, in plain JAX so both sides run the same function.

neural-tangents needs jax 0.5.3 (``.venv-nt``) and ntsim needs jax >= 0.8, so the model both
NTK implementations differentiate is written here with nothing but ``jax.numpy`` (no flax,
no ntsim). It is a BERT-style post-LN encoder: token and position embeddings (row lookups),
``LAYERS`` blocks of multi-head self-attention and a GELU MLP (4x width), every dense layer
with a bias, LayerNorm with scale and shift, mean pooling and a scalar readout. One example
is a vector of ``tokens`` ids; the output has shape ``(1,)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

LAYERS = 2
HEADS = 4
VOCAB = 512


def _dense(key, fan_in: int, fan_out: int) -> dict:
    return {"w": jax.random.normal(key, (fan_in, fan_out)) / fan_in**0.5, "b": jnp.zeros(fan_out)}


def _layer_norm(x, p):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-12) * p["scale"] + p["bias"]


def init(key, width: int, tokens: int) -> dict:
    """Parameters of the model (a nested dict of arrays)."""
    keys = iter(jax.random.split(key, 3 + 6 * LAYERS))
    ln = lambda: {"scale": jnp.ones(width), "bias": jnp.zeros(width)}  # noqa: E731
    layers = []
    for _ in range(LAYERS):
        layers.append({
            **{n: _dense(next(keys), width, width) for n in ("query", "key", "value", "out")},
            "mlp_in": _dense(next(keys), width, 4 * width),
            "mlp_out": _dense(next(keys), 4 * width, width),
            "ln_attention": ln(),
            "ln_mlp": ln(),
        })  # fmt: skip
    return {
        "word": jax.random.normal(next(keys), (VOCAB, width)) * 0.02,
        "position": jax.random.normal(next(keys), (tokens, width)) * 0.02,
        "ln_embeddings": ln(),
        "layers": layers,
        "readout": jax.random.normal(next(keys), (width, 1)) / width**0.5,
    }


def apply(params: dict, ids) -> jax.Array:
    """Output of one example ``ids`` (shape ``(tokens,)``), shape ``(1,)``; of a batch
    ``(N, tokens)`` (how neural-tangents calls it), shape ``(N, 1)``."""
    if ids.ndim == 2:
        return jax.vmap(lambda one: apply(params, one))(ids)
    tokens = ids.shape[0]
    h = jnp.take(params["word"], ids, axis=0) + jnp.take(
        params["position"], jnp.arange(tokens), axis=0
    )
    h = _layer_norm(h, params["ln_embeddings"])
    width = h.shape[-1]
    head_dim = width // HEADS
    for p in params["layers"]:
        split = lambda z: z.reshape(tokens, HEADS, head_dim)  # noqa: E731
        q, k, v = (split(h @ p[n]["w"] + p[n]["b"]) for n in ("query", "key", "value"))
        scores = jnp.einsum("thd,shd->hts", q, k) / head_dim**0.5
        context = jnp.einsum("hts,shd->thd", jax.nn.softmax(scores, axis=-1), v)
        attended = context.reshape(tokens, width) @ p["out"]["w"] + p["out"]["b"]
        h = _layer_norm(h + attended, p["ln_attention"])
        hidden = jax.nn.gelu(h @ p["mlp_in"]["w"] + p["mlp_in"]["b"])
        h = _layer_norm(h + hidden @ p["mlp_out"]["w"] + p["mlp_out"]["b"], p["ln_mlp"])
    return h.mean(0) @ params["readout"]


def problem(inputs: int, tokens: int, width: int):
    """``(params, ids)``: the model at ``width`` and ``inputs`` examples of ``tokens`` ids."""
    params = init(jax.random.PRNGKey(3), width, tokens)
    ids = jax.random.randint(jax.random.PRNGKey(2), (inputs, tokens), 0, VOCAB)
    return params, ids
