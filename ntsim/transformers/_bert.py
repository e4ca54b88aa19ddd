r"""A BERT encoder in Flax (linen), matching the MiniLM checkpoints, plus a classifier.

The architecture is BERT's (Devlin et al. 2019, Sec 3; Vaswani et al. 2017, Sec 3.2) in the
post-LayerNorm form of the reference implementation:

.. math::
   h^{(0)} &= \mathrm{LN}(E_{word}[x] + E_{pos}[0..T) + E_{type}[s]) \\
   a &= \mathrm{LN}(h + \mathrm{Attn}(h)\,W_o + b_o), \qquad
   h' = \mathrm{LN}(a + \mathrm{GELU}(a W_1 + b_1) W_2 + b_2)

with multi-head attention ``softmax(Q Kᵀ/√d_h + mask) V`` (padded keys masked out),
exact-erf GELU and the LayerNorm ε of the checkpoint's ``config.json``. Dense kernels are
stored ``(in, out)`` (``x W``), so a checkpoint's torch ``(out, in)`` weights are transposed
at load (:mod:`ntsim.transformers._checkpoints`).

Parameter paths (what :func:`ntsim.transformers.param_mask` patterns match)::

    embeddings/{word,position,token_type}/embedding, embeddings/layer_norm/{scale,bias}
    layer_<l>/attention/{query,key,value,output}/{kernel,bias}
    layer_<l>/attention_layer_norm/{scale,bias}
    layer_<l>/intermediate/{kernel,bias}, layer_<l>/output/{kernel,bias}
    layer_<l>/output_layer_norm/{scale,bias}

:class:`BertClassifier` puts this encoder under ``encoder/`` and a dense head under
``head/`` on the mean-pooled (sentence-transformers) or ``[CLS]`` representation.

References:
  Devlin, Chang, Lee, Toutanova (2019). BERT: Pre-training of Deep Bidirectional
  Transformers for Language Understanding. NAACL.
  Wang et al. (2020). MiniLM: Deep Self-Attention Distillation for Task-Agnostic
  Compression of Pre-Trained Transformers. NeurIPS (the checkpoints' architecture).
  Reimers & Gurevych (2019). Sentence-BERT. EMNLP (mean pooling).
"""

from __future__ import annotations

import dataclasses
import json
import os

import flax.linen as nn
import jax
import jax.numpy as jnp

from ntsim._types import Array

__all__ = ["BertClassifier", "BertConfig", "BertEncoder", "mean_pool"]

_POOLINGS = ("mean", "cls")


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """The fields of a BERT ``config.json`` that fix the computation.

    Attributes mirror the Hugging Face names; ``hidden_act`` must be ``"gelu"`` (exact erf).
    """

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    hidden_act: str = "gelu"

    def __post_init__(self):
        sizes = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings", "type_vocab_size")  # fmt: skip
        for name in sizes:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"BertConfig.{name} must be a positive integer, got {value!r}.")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"BertConfig: hidden_size ({self.hidden_size}) must be divisible by "
                f"num_attention_heads ({self.num_attention_heads})."
            )
        if self.hidden_act != "gelu":
            raise ValueError(f"BertConfig.hidden_act must be 'gelu', got {self.hidden_act!r}.")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"BertConfig.{name} must be in [0, 1), got {getattr(self, name)}.")
        if not self.layer_norm_eps > 0:
            raise ValueError(f"BertConfig.layer_norm_eps must be > 0, got {self.layer_norm_eps}.")

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> BertConfig:
        """Read the known fields of a Hugging Face ``config.json`` (others are ignored)."""
        with open(path) as f:
            raw = json.load(f)
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})

    @property
    def head_dim(self) -> int:
        """``d_h = hidden_size / num_attention_heads``."""
        return self.hidden_size // self.num_attention_heads


def _layer_norm(config: BertConfig, name: str) -> nn.LayerNorm:
    return nn.LayerNorm(epsilon=config.layer_norm_eps, name=name)


class _SelfAttention(nn.Module):
    config: BertConfig

    @nn.compact
    def __call__(self, hidden: Array, attention_mask: Array, deterministic: bool) -> Array:
        c = self.config
        batch, length, _ = hidden.shape

        def heads(name):  # (B, T, H) -> (B, heads, T, d_h)
            y = nn.Dense(c.hidden_size, name=name)(hidden)
            return y.reshape(batch, length, c.num_attention_heads, c.head_dim).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(c.head_dim).astype(q.dtype)
        keep = attention_mask[:, None, None, :].astype(bool)
        scores = jnp.where(keep, scores, jnp.finfo(scores.dtype).min)
        weights = jax.nn.softmax(scores, axis=-1)
        weights = nn.Dropout(c.attention_probs_dropout_prob)(weights, deterministic=deterministic)
        context = jnp.einsum("bhqk,bhkd->bhqd", weights, v).transpose(0, 2, 1, 3)
        return nn.Dense(c.hidden_size, name="output")(context.reshape(batch, length, -1))


class _Layer(nn.Module):
    config: BertConfig

    @nn.compact
    def __call__(self, hidden: Array, attention_mask: Array, deterministic: bool) -> Array:
        c = self.config
        drop = nn.Dropout(c.hidden_dropout_prob)
        attended = _SelfAttention(c, name="attention")(hidden, attention_mask, deterministic)
        hidden = _layer_norm(c, "attention_layer_norm")(
            hidden + drop(attended, deterministic=deterministic)
        )
        inner = nn.gelu(
            nn.Dense(c.intermediate_size, name="intermediate")(hidden), approximate=False
        )
        out = nn.Dense(c.hidden_size, name="output")(inner)
        return _layer_norm(c, "output_layer_norm")(hidden + drop(out, deterministic=deterministic))


class BertEncoder(nn.Module):
    """BERT encoder: token ids ``(B, T)`` → hidden states ``(B, T, hidden_size)``.

    Call as ``module.apply(variables, input_ids, attention_mask, token_type_ids=None,
    deterministic=True)``; with ``deterministic=False`` pass ``rngs={"dropout": key}``.
    ``embedding_noise`` (shape ``(B, T, hidden)``) is added to the embedding output, the
    injection point of LNSR (Hua et al. 2021).
    """

    config: BertConfig

    @nn.compact
    def __call__(
        self,
        input_ids: Array,
        attention_mask: Array | None = None,
        token_type_ids: Array | None = None,
        deterministic: bool = True,
        embedding_noise: Array | None = None,
    ) -> Array:
        c = self.config
        input_ids = jnp.asarray(input_ids)
        if input_ids.ndim != 2:
            raise ValueError(
                f"BertEncoder: input_ids must be (batch, length), got {input_ids.shape}."
            )
        if not jnp.issubdtype(input_ids.dtype, jnp.integer):
            raise ValueError(
                f"BertEncoder: input_ids must be integer token ids, got dtype {input_ids.dtype}."
            )
        for name, extra in (("attention_mask", attention_mask), ("token_type_ids", token_type_ids)):
            if extra is not None and jnp.shape(extra) != input_ids.shape:
                raise ValueError(
                    f"BertEncoder: {name} must have the shape of input_ids {input_ids.shape}, "
                    f"got {jnp.shape(extra)}."
                )
        length = input_ids.shape[1]
        if length > c.max_position_embeddings:
            raise ValueError(
                f"BertEncoder: length {length} exceeds max_position_embeddings "
                f"{c.max_position_embeddings}."
            )
        if not isinstance(input_ids, jax.core.Tracer) and input_ids.size:
            low, high = int(jnp.min(input_ids)), int(jnp.max(input_ids))
            if low < 0 or high >= c.vocab_size:  # the embedding lookup would give NaN
                raise ValueError(
                    f"BertEncoder: token ids must lie in [0, vocab_size − 1] = "
                    f"[0, {c.vocab_size - 1}], got [{low}, {high}] (a tokenizer of another "
                    "vocabulary?)."
                )
        if attention_mask is None:
            attention_mask = jnp.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = jnp.zeros_like(input_ids)
        embeddings = _Embeddings(c, name="embeddings")(input_ids, token_type_ids)
        if embedding_noise is not None:  # LNSR's perturbation of the first hidden input
            embeddings = embeddings + embedding_noise
        hidden = nn.Dropout(c.hidden_dropout_prob)(embeddings, deterministic=deterministic)
        for layer in range(c.num_hidden_layers):
            hidden = _Layer(c, name=f"layer_{layer}")(hidden, attention_mask, deterministic)
        return hidden


class _Embeddings(nn.Module):
    config: BertConfig

    @nn.compact
    def __call__(self, input_ids: Array, token_type_ids: Array) -> Array:
        c = self.config
        positions = jnp.arange(input_ids.shape[1])[None, :]
        total = (
            nn.Embed(c.vocab_size, c.hidden_size, name="word")(input_ids)
            + nn.Embed(c.max_position_embeddings, c.hidden_size, name="position")(positions)
            + nn.Embed(c.type_vocab_size, c.hidden_size, name="token_type")(token_type_ids)
        )
        return _layer_norm(c, "layer_norm")(total)


def mean_pool(hidden: Array, attention_mask: Array) -> Array:
    """Mean of the hidden states over the non-padded tokens (Sentence-BERT pooling).

    Examples:
      >>> import jax.numpy as jnp
      >>> h = jnp.array([[[1.0], [3.0], [100.0]]])
      >>> mean_pool(h, jnp.array([[1, 1, 0]])).tolist()
      [[2.0]]
    """
    mask = jnp.asarray(attention_mask, hidden.dtype)[..., None]
    return jnp.sum(hidden * mask, axis=-2) / jnp.maximum(jnp.sum(mask, axis=-2), 1e-9)


class BertClassifier(nn.Module):
    """:class:`BertEncoder` (``encoder/``) → pooling → dense head (``head/``) → logits.

    Attributes:
      config: the encoder's :class:`BertConfig`.
      num_labels: output dimension (1 for regression / a binary margin).
      pooling: ``"mean"`` (masked mean, as the MiniLM sentence encoders) or ``"cls"``.
    """

    config: BertConfig
    num_labels: int = 2
    pooling: str = "mean"

    @nn.compact
    def __call__(
        self,
        input_ids: Array,
        attention_mask: Array | None = None,
        token_type_ids: Array | None = None,
        deterministic: bool = True,
    ) -> Array:
        if (
            isinstance(self.num_labels, bool)
            or not isinstance(self.num_labels, int)
            or (self.num_labels < 1)
        ):
            raise ValueError(
                f"BertClassifier.num_labels must be a positive integer, got {self.num_labels!r}."
            )
        if self.pooling not in _POOLINGS:
            raise ValueError(
                f"BertClassifier.pooling must be one of {_POOLINGS}, got {self.pooling!r}."
            )
        if attention_mask is None:
            attention_mask = jnp.ones_like(jnp.asarray(input_ids))
        hidden = BertEncoder(self.config, name="encoder")(
            input_ids, attention_mask, token_type_ids, deterministic
        )
        pooled = mean_pool(hidden, attention_mask) if self.pooling == "mean" else hidden[:, 0]
        pooled = nn.Dropout(self.config.hidden_dropout_prob)(pooled, deterministic=deterministic)
        return nn.Dense(self.num_labels, name="head")(pooled)
