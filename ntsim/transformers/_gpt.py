r"""A small GPT-style causal decoder in Flax (linen), for from-scratch pretraining.

Pre-LayerNorm blocks (Radford et al. 2019, GPT-2, Sec 2.3):

.. math::
   h_0 &= E[x_t] + P_t, \qquad
   h \leftarrow h + \mathrm{Attn}_{causal}(\mathrm{LN}(h))\,W_o + b_o, \\
   h &\leftarrow h + \mathrm{GELU}(\mathrm{LN}(h) W_1 + b_1) W_2 + b_2, \qquad
   \mathrm{logits}_t = \mathrm{LN}(h)_t\, W_{out}

with ``softmax(Q Kᵀ/√d_h)`` restricted to keys ``s ≤ t``. Weights ``N(0, 0.02²)``, the two
residual projections ``N(0, (0.02/√(2·depth))²)``, biases 0 (GPT-2's initialisation). It
is the same function as the pure :func:`ntsim.core.causal_decoder` (a test maps one's
parameters onto the other's and compares logits); this one lives on the Flax path so that
:func:`ntsim.transformers.finetune`, :func:`ntsim.transformers.param_mask` patterns and
LoRA (:func:`ntsim.transformers.lora_targets`) apply to it as to BERT.

Parameter paths::

    embed/embedding, position/embedding
    block_<l>/ln_attention/{scale,bias}
    block_<l>/attention/{query,key,value,output}/{kernel,bias}
    block_<l>/ln_mlp/{scale,bias}, block_<l>/{mlp_hidden,mlp_output}/{kernel,bias}
    ln_final/{scale,bias}, unembed/kernel

References:
  Radford et al. (2019). Language Models are Unsupervised Multitask Learners (GPT-2).
"""

from __future__ import annotations

import dataclasses
import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from ntsim._types import Array

__all__ = ["GPTConfig", "GPTDecoder"]

_INIT_STD = 0.02  # GPT-2


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    """Sizes of the decoder (defaults: a byte-level model of ~0.2M parameters)."""

    vocab_size: int = 256
    context: int = 64
    width: int = 64
    depth: int = 2
    num_heads: int = 4
    ffn_width: int | None = None  # default 4·width
    layer_norm_eps: float = 1e-5

    def __post_init__(self):
        for name in ("vocab_size", "context", "width", "depth", "num_heads"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"GPTConfig.{name} must be a positive integer, got {value!r}.")
        if self.width % self.num_heads:
            raise ValueError(
                f"GPTConfig.width={self.width} must be divisible by num_heads={self.num_heads}."
            )

    @property
    def hidden_ffn(self) -> int:
        return 4 * self.width if self.ffn_width is None else self.ffn_width


def _dense(features: int, name: str, std: float = _INIT_STD) -> nn.Dense:
    return nn.Dense(features, kernel_init=nn.initializers.normal(std), name=name)


class _CausalSelfAttention(nn.Module):
    config: GPTConfig
    residual_std: float

    @nn.compact
    def __call__(self, h: Array) -> Array:
        c = self.config
        batch, length, _ = h.shape
        head_dim = c.width // c.num_heads

        def heads(name):
            return _dense(c.width, name)(h).reshape(batch, length, c.num_heads, head_dim)

        q, k, v = heads("query"), heads("key"), heads("value")
        logits = jnp.einsum("bthd,bshd->bhts", q, k) / math.sqrt(head_dim)
        causal = jnp.tril(jnp.ones((length, length), dtype=bool))
        logits = jnp.where(causal, logits, jnp.finfo(logits.dtype).min)
        mixed = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(logits, axis=-1), v)
        return _dense(c.width, "output", self.residual_std)(mixed.reshape(batch, length, -1))


class _Block(nn.Module):
    config: GPTConfig

    @nn.compact
    def __call__(self, h: Array) -> Array:
        c = self.config
        residual_std = _INIT_STD / math.sqrt(2 * c.depth)
        norm = lambda name: nn.LayerNorm(epsilon=c.layer_norm_eps, name=name)  # noqa: E731
        h = h + _CausalSelfAttention(c, residual_std, name="attention")(norm("ln_attention")(h))
        hidden = _dense(c.hidden_ffn, "mlp_hidden")(norm("ln_mlp")(h))
        return h + _dense(c.width, "mlp_output", residual_std)(nn.gelu(hidden, approximate=False))


class GPTDecoder(nn.Module):
    """``apply({"params": p}, tokens)``: logits ``(B, T, vocab)`` of int tokens ``(B, T)``.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> model = GPTDecoder(GPTConfig(context=8, width=16, depth=1, num_heads=2))
      >>> params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, 8), jnp.int32))["params"]
      >>> model.apply({"params": params}, jnp.zeros((3, 5), jnp.int32)).shape
      (3, 5, 256)
    """

    config: GPTConfig

    @nn.compact
    def __call__(self, tokens: Array) -> Array:
        c = self.config
        if tokens.ndim != 2 or tokens.shape[1] > c.context:
            raise ValueError(
                f"GPTDecoder: tokens must have shape (B, T) with T <= context={c.context}, "
                f"got {tokens.shape}."
            )
        init = nn.initializers.normal(_INIT_STD)
        h = nn.Embed(c.vocab_size, c.width, embedding_init=init, name="embed")(tokens)
        positions = nn.Embed(c.context, c.width, embedding_init=init, name="position")
        h = h + positions(jnp.arange(tokens.shape[1]))[None]
        for layer in range(c.depth):
            h = _Block(c, name=f"block_{layer}")(h)
        h = nn.LayerNorm(epsilon=c.layer_norm_eps, name="ln_final")(h)
        return nn.Dense(c.vocab_size, use_bias=False, kernel_init=init, name="unembed")(h)
