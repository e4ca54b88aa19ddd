r"""Every PEFT configuration of a BERT classifier as ONE parameter structure; the choice is data.

A fine-tuning *configuration* names the trainable set of a binary classifier
``f(x) = w·pool(encoder_θ(x)) + b`` on a pretrained encoder ``θ_pre``:

* ``"head"`` — the linear head ``(w, b)`` alone;
* ``"lora_qv<r>"`` — the head plus LoRA of rank ``r`` on every block's query and value
  kernels (Hu et al. 2021's default targets): ``W = W_pre + (α/r) A B``;
* ``"lora_ffn<r>"`` — the head plus LoRA of rank ``r`` on every block's FFN kernels
  (``intermediate`` and ``output``);
* ``"last_layer"`` — the head plus every weight of the last transformer block,
  ``W = W_pre + Δ``.

The head is trained in every configuration, as sequence-classification LoRA trains its
classifier. All configurations share one parameter pytree (:class:`AdapterLayout` fixes its
shapes: LoRA factors at the largest rank ``R``, a ``Δ`` for the last block, the head) and
differ only in *data*: a :class:`Selection` of scales ``(α/r, α/r_ffn, 1_last)`` (``0`` turns a
block off) and the zero pattern of the ``A`` factors. A rank-``r`` adapter is the rank-``R``
one with ``A``'s columns ``r..R−1`` and ``B``'s rows ``r..R−1`` zero; those stay exactly zero
under GD and AdamW (their gradients ``s·A_{:,k}ᵀG`` and ``s·G B_{k,:}ᵀ`` vanish, and decay of
zero is zero), so the model is exactly rank ``r``. Blocks that are off keep ``A = 0`` and
``Δ = 0`` for the same reason. Hence one compiled training step serves every configuration
(:func:`ntsim.transformers.finetune` hoists the closed-over selection into an argument).

``B = 0`` at initialisation, so the classifier equals the pretrained one with its head.

References:
  Hu et al. (2021), *LoRA: Low-Rank Adaptation of Large Language Models*, arXiv:2106.09685,
  Sec 4.1 (``W_0 + (α/r)BA``, zero ``B``; ntsim writes ``x W`` so the product is ``A B``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, Params, PRNGKey, PyTree
from ntsim.core import get_path, set_path
from ntsim.transformers._bert import BertConfig
from ntsim.transformers._methods import pooled_features
from ntsim.transformers._params import lora_targets

__all__ = [
    "ADAPTER_CONFIG_PATTERN",
    "AdapterLayout",
    "AdapterModel",
    "Selection",
    "adapter_model",
    "parse_adapter_config",
]

#: ``head`` | ``lora_qv<r>`` | ``lora_ffn<r>`` | ``last_layer``.
ADAPTER_CONFIG_PATTERN = r"head|lora_qv[1-9]\d*|lora_ffn[1-9]\d*|last_layer"
_QV = ("*attention/query/kernel", "*attention/value/kernel")
_FFN = ("*/intermediate/kernel", "*/output/kernel")


def parse_adapter_config(name: str) -> tuple[str, int]:
    """``(kind, rank)`` of a configuration name; ``rank`` is 0 for ``head``/``last_layer``.

    Examples:
      >>> parse_adapter_config("lora_qv4"), parse_adapter_config("head")
      (('lora_qv', 4), ('head', 0))
    """
    if not isinstance(name, str) or not re.fullmatch(ADAPTER_CONFIG_PATTERN, name):
        raise ValueError(
            f"adapter configuration must match {ADAPTER_CONFIG_PATTERN!r} (e.g. 'lora_qv4'), "
            f"got {name!r}."
        )
    match = re.fullmatch(r"(lora_qv|lora_ffn)(\d+)", name)
    return (match[1], int(match[2])) if match else (name, 0)


@dataclass(frozen=True)
class AdapterLayout:
    """Shapes shared by every configuration (static: one compiled program per layout).

    Attributes:
      qv_rank: largest LoRA rank ``R`` on query/value (``lora_qv<r>`` needs ``r ≤ R``).
      ffn_rank: largest LoRA rank on the FFN kernels.
      alpha: LoRA's ``α`` (scale ``α/r``; Hu et al. keep ``α`` fixed across ranks).
    """

    qv_rank: int = 8
    ffn_rank: int = 8
    alpha: float = 16.0

    def __post_init__(self):
        for name in ("qv_rank", "ffn_rank"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AdapterLayout.{name} must be a positive integer, got {value!r}.")
        if not self.alpha > 0:
            raise ValueError(f"AdapterLayout.alpha must be > 0, got {self.alpha}.")


class Selection(NamedTuple):
    """Which blocks a configuration trains, as arrays (data, not program structure).

    Attributes:
      qv_scale: ``α/r`` of the query/value adapters, ``0`` when off.
      ffn_scale: ``α/r`` of the FFN adapters, ``0`` when off.
      last_layer: ``1`` when the last block's ``Δ`` is on, else ``0``.
    """

    qv_scale: Array
    ffn_scale: Array
    last_layer: Array


class AdapterModel(NamedTuple):
    """A classifier with every configuration's trainable set (module doc).

    Attributes:
      probe: ``probe(key) -> (adapters, selection)``: every block on at unit scale, all
        ``R`` columns of ``A`` (the same draws as ``init``), for the kernels of every
        configuration from one set of per-example gradients
        (:mod:`ntsim.transformers._lora_kernels`).
      init: ``init(key, name) -> (adapters, selection)``: the head ``w ~ N(0, I/hidden)``,
        ``b = 0``; ``A ~ N(0, 1/fan_in)`` with the columns beyond the configuration's rank
        zeroed (all-zero when the block is off), ``B = 0``, ``Δ = 0``. One key gives the same
        head and the same nested ``A`` columns to every configuration.
      scores: ``scores(adapters, selection, batch, key=None, encoder=None) -> (B,)`` logits;
        dropout on when ``key`` is given. ``batch`` has ``input_ids`` and
        ``attention_mask``. ``encoder``: the pretrained encoder (default ``encoder0``); pass
        it explicitly inside ``jax.jit`` so that ~90 MB of weights are an argument, not a
        constant compiled into the program.
      merge: ``merge(adapters, selection, encoder=None) -> encoder`` parameters.
      qv_targets, ffn_targets: the adapted kernels' paths in the encoder.
      last_block: the name of the last block (``"layer_<L−1>"``).
      layout: the :class:`AdapterLayout`.
    """

    probe: Callable[[PRNGKey], tuple[Params, Selection]]
    init: Callable[[PRNGKey, str], tuple[Params, Selection]]
    scores: Callable[..., Array]
    merge: Callable[..., Params]
    qv_targets: tuple[tuple[Any, ...], ...]
    ffn_targets: tuple[tuple[Any, ...], ...]
    last_block: str
    layout: AdapterLayout


def _lora_factors(key, encoder, targets, max_rank, rank) -> tuple[dict[str, Array], ...]:
    keys = jax.random.split(key, len(targets))
    out = []
    for k, path in zip(keys, targets, strict=True):
        fan_in, fan_out = get_path(encoder, path).shape
        a = jax.random.normal(k, (fan_in, max_rank)) / jnp.sqrt(fan_in)
        a = a * (jnp.arange(max_rank) < rank)  # nested ranks: rank r keeps columns 0..r−1
        out.append({"a": a, "b": jnp.zeros((max_rank, fan_out))})
    return tuple(out)


def adapter_model(
    config: BertConfig, encoder0: Params, layout: AdapterLayout = AdapterLayout()
) -> AdapterModel:
    """The classifier of every configuration on the pretrained ``encoder0`` (module doc).

    Raises:
      ValueError: a layout rank above a target's ``min(fan_in, fan_out)``.
    """
    qv_targets = lora_targets(encoder0, _QV)
    ffn_targets = lora_targets(encoder0, _FFN)
    for targets, rank in ((qv_targets, layout.qv_rank), (ffn_targets, layout.ffn_rank)):
        smallest = min(min(get_path(encoder0, p).shape) for p in targets)
        if rank > smallest:
            raise ValueError(
                f"adapter_model: rank {rank} exceeds min(fan_in, fan_out) = {smallest}."
            )
    last_block = f"layer_{config.num_hidden_layers - 1}"

    def init(key: PRNGKey, name: str) -> tuple[Params, Selection]:
        kind, rank = parse_adapter_config(name)
        max_rank = {"lora_qv": layout.qv_rank, "lora_ffn": layout.ffn_rank}.get(kind, 0)
        if rank > max_rank and kind != "head" and kind != "last_layer":
            raise ValueError(f"adapter_model: {name!r} needs rank ≤ {max_rank} (AdapterLayout).")
        k_head, k_qv, k_ffn = jax.random.split(key, 3)
        adapters = {
            "head": {
                "kernel": jax.random.normal(k_head, (config.hidden_size,))
                / jnp.sqrt(config.hidden_size),
                "bias": jnp.zeros(()),
            },
            "qv": _lora_factors(k_qv, encoder0, qv_targets, layout.qv_rank,
                                rank if kind == "lora_qv" else 0),
            "ffn": _lora_factors(k_ffn, encoder0, ffn_targets, layout.ffn_rank,
                                 rank if kind == "lora_ffn" else 0),
            "last": jax.tree.map(jnp.zeros_like, encoder0[last_block]),
        }  # fmt: skip
        scale = layout.alpha / max(rank, 1)
        selection = Selection(
            qv_scale=jnp.asarray(scale if kind == "lora_qv" else 0.0),
            ffn_scale=jnp.asarray(scale if kind == "lora_ffn" else 0.0),
            last_layer=jnp.asarray(1.0 if kind == "last_layer" else 0.0),
        )
        return adapters, selection

    def probe(key: PRNGKey) -> tuple[Params, Selection]:
        k_head, k_qv, k_ffn = jax.random.split(key, 3)
        adapters, _ = init(key, "head")
        adapters = {**adapters,
                    "qv": _lora_factors(k_qv, encoder0, qv_targets, layout.qv_rank, layout.qv_rank),
                    "ffn": _lora_factors(k_ffn, encoder0, ffn_targets, layout.ffn_rank,
                                         layout.ffn_rank)}  # fmt: skip
        one = jnp.asarray(1.0)
        return adapters, Selection(one, one, one)

    def merge(adapters: Params, selection: Selection, encoder: Params | None = None) -> Params:
        base = encoder0 if encoder is None else encoder
        encoder = dict(base)
        encoder[last_block] = jax.tree.map(
            lambda w, d: w + selection.last_layer * d, base[last_block], adapters["last"]
        )
        blocks = ((qv_targets, adapters["qv"], selection.qv_scale),
                  (ffn_targets, adapters["ffn"], selection.ffn_scale))  # fmt: skip
        for targets, factors, scale in blocks:
            for path, f in zip(targets, factors, strict=True):
                encoder = set_path(encoder, path, get_path(encoder, path) + scale * f["a"] @ f["b"])
        return encoder

    def scores(
        adapters: Params, selection: Selection, batch: PyTree, key=None, encoder=None
    ) -> Array:
        merged = merge(adapters, selection, encoder)
        features = pooled_features(config, merged, batch, key=key)
        return features @ adapters["head"]["kernel"] + adapters["head"]["bias"]

    return AdapterModel(probe, init, scores, merge, qv_targets, ffn_targets, last_block, layout)
