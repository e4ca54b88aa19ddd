"""A small GPT-style causal decoder over a byte vocabulary, as a pure ``(init, apply)`` pair.

Pre-LayerNorm blocks (Radford et al. 2019, GPT-2):

.. math::

   h_0 &= E[x_t] + P_t \\\\
   h &\\leftarrow h + \\mathrm{MHA}_{causal}(\\mathrm{LN}(h)) \\\\
   h &\\leftarrow h + W_2\\, φ(W_1 \\mathrm{LN}(h)) \\\\
   \\mathrm{logits}_t &= \\mathrm{LN}(h)_t\\, W_{out}

with attention logits scaled by ``1/sqrt(D_h)`` and a causal mask (position ``t`` attends to
``s ≤ t``). Weights are ``N(0, 0.02²)`` (GPT-2's init), the residual output projections
``N(0, (0.02/sqrt(2·depth))²)``, biases 0, LayerNorm scales 1. ``apply`` acts on one token
sequence (int array ``(T,)``, ``T ≤ context``) and returns ``(T, vocab_size)`` logits.

This is the from-scratch pretraining model of the overtraining topic's pretraining-budget
analogue (Springer et al. 2025, Figs 3–5, 8 in miniature); real checkpoints belong to the
Flax path (``ntsim.transformers``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_choice, check_positive_int
from ntsim.core._attention import layer_norm
from ntsim.core._models import ACTIVATIONS, Model

__all__ = ["causal_decoder", "next_token_loss"]

_INIT_STD = 0.02  # GPT-2


def causal_decoder(
    *,
    vocab_size: int = 256,
    context: int,
    width: int,
    depth: int,
    num_heads: int,
    ffn_width: int | None = None,
    activation: str = "gelu",
) -> Model:
    """GPT-style decoder (module doc) with ``depth`` pre-LN blocks of width ``width``.

    Args:
      vocab_size: number of token ids (256 for bytes).
      context: maximal sequence length (learned positional embeddings).
      width: model width ``D`` (divisible by ``num_heads``).
      depth: number of blocks.
      num_heads: attention heads; ``D_h = D / num_heads``.
      ffn_width: hidden width of the MLP (default ``4D``).
      activation: MLP nonlinearity, one of :data:`ntsim.core.ACTIVATIONS`.

    Returns:
      A :class:`~ntsim.core.Model`; ``init(key, tokens_example)`` ignores the example's
      values. Params: ``{"embed", "position", "blocks": [{"ln1", "attention", "ln2",
      "mlp"}, ...], "ln_final", "unembed"}``.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> model = causal_decoder(context=8, width=16, depth=1, num_heads=2)
      >>> params = model.init(jax.random.PRNGKey(0), jnp.zeros(8, jnp.int32))
      >>> model.apply(params, jnp.arange(5)).shape
      (5, 256)
    """
    where = "causal_decoder"
    vocab_size = check_positive_int(where, "vocab_size", vocab_size)
    context = check_positive_int(where, "context", context)
    width = check_positive_int(where, "width", width)
    depth = check_positive_int(where, "depth", depth)
    num_heads = check_positive_int(where, "num_heads", num_heads)
    if width % num_heads:
        raise ValueError(f"{where}: width={width} must be divisible by num_heads={num_heads}.")
    ffn_width = (
        4 * width if ffn_width is None else check_positive_int(where, "ffn_width", ffn_width)
    )
    check_choice(where, "activation", activation, tuple(ACTIVATIONS))
    phi = ACTIVATIONS[activation]
    head_dim = width // num_heads
    residual_std = _INIT_STD / math.sqrt(2 * depth)

    def normal(key: PRNGKey, shape: tuple[int, ...], std: float = _INIT_STD) -> Array:
        return std * jax.random.normal(key, shape)

    def ln_params() -> Params:
        return {"scale": jnp.ones((width,)), "bias": jnp.zeros((width,))}

    def block_init(key: PRNGKey) -> Params:
        k_qkv, k_out, k_w1, k_w2 = jax.random.split(key, 4)
        return {
            "ln1": ln_params(),
            "attention": {
                "qkv": normal(k_qkv, (width, 3 * width)),
                "qkv_bias": jnp.zeros((3 * width,)),
                "out": normal(k_out, (width, width), residual_std),
                "out_bias": jnp.zeros((width,)),
            },
            "ln2": ln_params(),
            "mlp": {
                "w1": normal(k_w1, (width, ffn_width)),
                "b1": jnp.zeros((ffn_width,)),
                "w2": normal(k_w2, (ffn_width, width), residual_std),
                "b2": jnp.zeros((width,)),
            },
        }

    def init(key: PRNGKey, tokens_example: ArrayLike | None = None) -> Params:
        k_embed, k_pos, k_out, *k_blocks = jax.random.split(key, 3 + depth)
        return {
            "embed": normal(k_embed, (vocab_size, width)),
            "position": normal(k_pos, (context, width)),
            "blocks": [block_init(k) for k in k_blocks],
            "ln_final": ln_params(),
            "unembed": normal(k_out, (width, vocab_size)),
        }

    def attend(p: Params, h: Array) -> Array:
        length = h.shape[0]
        qkv = h @ p["qkv"] + p["qkv_bias"]
        q, k, v = (a.reshape(length, num_heads, head_dim) for a in jnp.split(qkv, 3, axis=-1))
        logits = jnp.einsum("thd,shd->hts", q, k) / math.sqrt(head_dim)
        causal = jnp.tril(jnp.ones((length, length), dtype=bool))
        logits = jnp.where(causal, logits, jnp.finfo(logits.dtype).min)
        heads = jnp.einsum("hts,shd->thd", jax.nn.softmax(logits, axis=-1), v)
        return heads.reshape(length, width) @ p["out"] + p["out_bias"]

    def apply(params: Params, tokens: Array) -> Array:
        tokens = jnp.asarray(tokens)
        if tokens.ndim != 1 or not 1 <= tokens.shape[0] <= params["position"].shape[0]:
            raise ValueError(
                f"{where}.apply: acts on one token sequence of shape (T,) with 1 <= T <= "
                f"context={params['position'].shape[0]}, got shape {tokens.shape}. For a batch "
                "use jax.vmap(apply, in_axes=(None, 0))."
            )
        h = params["embed"][tokens] + params["position"][: tokens.shape[0]]
        for block in params["blocks"]:
            h = h + attend(block["attention"], layer_norm(h, **block["ln1"]))
            mlp = block["mlp"]
            hidden = phi(layer_norm(h, **block["ln2"]) @ mlp["w1"] + mlp["b1"])
            h = h + hidden @ mlp["w2"] + mlp["b2"]
        return layer_norm(h, **params["ln_final"]) @ params["unembed"]

    return Model(init, apply)


def next_token_loss(apply, params: Params, windows: Array) -> Array:
    """Mean next-token cross-entropy (nats) of ``apply`` on token windows ``(B, T + 1)``.

    Position ``t`` of ``windows[:, :-1]`` predicts ``windows[:, t + 1]``; the perplexity is
    ``exp`` of this loss.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> model = causal_decoder(context=8, width=16, depth=1, num_heads=2)
      >>> params = jax.tree.map(jnp.zeros_like, model.init(jax.random.PRNGKey(0)))
      >>> round(float(next_token_loss(model.apply, params, jnp.zeros((2, 9), jnp.int32))), 4)
      5.5452
    """
    windows = jnp.asarray(windows)
    if windows.ndim != 2 or windows.shape[1] < 2:
        raise ValueError(
            f"next_token_loss: windows must have shape (B, T + 1) with T >= 1, got {windows.shape}."
        )
    logits = jax.vmap(apply, in_axes=(None, 0))(params, windows[:, :-1])
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    targets = windows[:, 1:]
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], axis=-1))
