r"""The NTK of a pretrained backbone with a fresh Gaussian head (Sun & Raskutti 2026, Lemma 5).

Setting 2 (Sec 5.1, App. B.4): keep the pretrained backbone ``θ_PT^BB`` (here: everything
below the scalar head of :func:`paper_attention_model`, whose output is the pooled
LayerNorm feature ``f_BB(x) ∈ ℝ^n``) and append a fresh linear head ``W_i ~ N(0, σ²/n)``.
Lemma 5's proof splits the width-normalised NTK ``Θ = (1/n)⟨∇_θf, ∇_θf⟩`` (eq. (37)) into

* the head block ``n^{−1/2}f_BB · n^{−1/2}f_BBᵀ`` (eq. (93), :func:`head_kernel_block`);
* the backbone block ``(1/n) W J_BB(θ_PT) J_BB(θ_PT)ᵀ Wᵀ`` (eq. (95),
  :func:`backbone_kernel_block`);

and, with ``n^{−1/2}f_BB(θ_PT) = n^{−1/2}x⁰ + O(√log n/√n)`` (eq. (94); ``x⁰ = f_BB(θ_0)``
is the backbone's output at the Gaussian init ``θ_0`` that pretraining started from) and
``J_BB(θ_PT) = J_BB(θ_0) + Δ`` (eq. (96)), concludes (eq. (97))

.. math::

   Θ = \frac1n W J_{BB}(θ_0) J_{BB}(θ_0)ᵀ Wᵀ + \frac{x⁰x⁰ᵀ}{n} + e,
   \qquad ‖e‖ = O(\sqrt{\log n}/\sqrt n).

Reading of the printed statement: ``W`` in (95)/(97) is the *fresh* head in both terms
(the proof never uses the pretrained model's own head), so the first two terms of (97) are
exactly the width-normalised NTK of the network ``(θ_0^BB, W)`` — the "random initialized
network" of the proof's last sentence — and ``e`` collects the cross terms
``(x⁰δᵀ + δx⁰ᵀ + δδᵀ)/n`` (``δ = f_BB(θ_PT) − x⁰``) and ``(1/n)W(J_BB Δᵀ + ΔJ_BBᵀ + ΔΔᵀ)Wᵀ``.
The paper's head also has a bias ``b ~ N(0, σ²)``, whose NTK block is ``11ᵀ`` (``11ᵀ/n``
after the width normalisation, absent from (97)); our model's head has no bias, so no such
term arises. Nothing in (97) is wrong as printed under this reading; the rate is checked by
the claim ``early_stopping.lemma5.random_init_expansion``.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import Model, empirical_ntk_fn, tree_distance
from ntsim.theory.early_stopping._width_scaling import (
    WidthScalingSetting,
    backbone_features,
    backbone_kernel_block,
    head_kernel_block,
    paper_attention_model,
    pretrain_source,
)

__all__ = [
    "MixedInitBlocks",
    "MixedInitBlocksSetting",
    "MixedInitKernel",
    "MixedInitRun",
    "MixedInitSweep",
    "mixed_init_kernel",
    "mixed_init_run",
    "simulate_mixed_init",
    "simulate_mixed_init_blocks",
]


class MixedInitKernel(NamedTuple):
    """The terms of Lemma 5 on inputs ``X``, each ``(N, N)`` and width-normalised.

    Attributes:
      kernel: ``Θ`` at ``(θ_PT^BB, W)``: the sum of all per-parameter blocks.
      head_block: its head block (eq. (93)).
      backbone_block: its backbone block (eq. (95)).
      random_init_backbone: ``(1/n) W J_BB(θ_0) J_BB(θ_0)ᵀ Wᵀ`` (eq. (97), first term).
      random_init_features: ``x⁰x⁰ᵀ/n`` with ``x⁰ = f_BB(θ_0)`` (eq. (97), second term).

    ``e = kernel − random_init_backbone − random_init_features`` (eq. (97)).
    """

    kernel: Array
    head_block: Array
    backbone_block: Array
    random_init_backbone: Array
    random_init_features: Array


def _head_and_backbone_blocks(model: Model, params: Params, x: Array) -> tuple[Array, Array]:
    """Head block and the sum of all other blocks of the width-normalised NTK."""
    width = params["head"]["w"].shape[0]
    blocks = empirical_ntk_fn(model.apply, per_block=True)(x, None, params)
    backbone = sum(
        leaf for path, leaf in jax.tree.leaves_with_path(blocks) if path[0].key != "head"
    )
    return blocks["head"]["w"] / width, backbone / width


def mixed_init_kernel(
    model: Model, params_pt: Params, params0: Params, head: ArrayLike, x: ArrayLike
) -> MixedInitKernel:
    r"""Lemma 5, eqs. (93)–(97): the NTK at ``(θ_PT^BB, W)`` and its random-init expansion.

    Args:
      model: the attention model (:func:`paper_attention_model`).
      params_pt: pretrained parameters (their ``"head"`` is replaced by ``W``).
      params0: the Gaussian init pretraining started from (``"head"`` replaced by ``W``).
      head: the fresh head ``W``, ``(n,)`` or ``(n, 1)``.
      x: inputs, ``(N, T, d⁰)``.

    Both blocks of both kernels come from ``ntsim.core.empirical_ntk_fn(per_block=True)``;
    ``x⁰x⁰ᵀ/n`` from :func:`backbone_features` and :func:`head_kernel_block`.
    """
    x = jnp.asarray(x)
    w = jnp.asarray(head).reshape(-1, 1)
    at_pt = {**params_pt, "head": {"w": w.astype(params_pt["head"]["w"].dtype)}}
    at_0 = {**params0, "head": {"w": w.astype(params0["head"]["w"].dtype)}}
    head_block, backbone_block = _head_and_backbone_blocks(model, at_pt, x)
    _, backbone0 = _head_and_backbone_blocks(model, at_0, x)
    features0 = head_kernel_block(backbone_features(model, at_0, x))
    return MixedInitKernel(
        kernel=head_block + backbone_block,
        head_block=head_block,
        backbone_block=backbone_block,
        random_init_backbone=backbone0,
        random_init_features=features0,
    )


class MixedInitRun(NamedTuple):
    """One pretrain → fresh-head run at one width (all scalars).

    Attributes:
      relative_error: ``‖e‖_F/‖Θ‖_F`` of eq. (97).
      head_error: ``‖head block − x⁰x⁰ᵀ/n‖_F/‖Θ‖_F`` (the eq. (94) part of ``e``).
      backbone_error: ``‖backbone block − (1/n)WJ_BB(θ_0)J_BB(θ_0)ᵀWᵀ‖_F/‖Θ‖_F`` (eq. (96)).
      pretrain_distance: ``‖θ_PT − θ_0‖_2`` (the pretrained head included).
      source_loss: pretraining loss at ``θ_PT``.
    """

    relative_error: Array
    head_error: Array
    backbone_error: Array
    pretrain_distance: Array
    source_loss: Array


def mixed_init_run(key: PRNGKey, width: int, setting: WidthScalingSetting) -> MixedInitRun:
    """Pretrain on the source task, replace the head by ``W ~ N(0, 1/n)``, measure eq. (97).

    Pretraining is :func:`pretrain_source` (GD, step ``η_0/n``, from the SP init ``θ_0``);
    the kernels are on the ``num_target`` target inputs of :func:`source_target_data`.
    ``vmap``-compatible over ``key`` (``width`` and ``setting`` static).
    """
    check_setting_type("mixed_init_run", setting, WidthScalingSetting)
    check_key("mixed_init_run", key)
    k_pre, k_head = jax.random.split(key)
    model, data, params0, params_pt = pretrain_source(k_pre, width, setting)
    head = jax.random.normal(k_head, (width, 1), params_pt["head"]["w"].dtype) / jnp.sqrt(width)
    terms = mixed_init_kernel(model, params_pt, params0, head, data.x_target)
    norm = jnp.linalg.norm(terms.kernel)
    error = terms.kernel - terms.random_init_backbone - terms.random_init_features
    source = jax.vmap(model.apply, in_axes=(None, 0))(params_pt, data.x_source)[:, 0]
    return MixedInitRun(
        relative_error=jnp.linalg.norm(error) / norm,
        head_error=jnp.linalg.norm(terms.head_block - terms.random_init_features) / norm,
        backbone_error=jnp.linalg.norm(terms.backbone_block - terms.random_init_backbone) / norm,
        pretrain_distance=tree_distance(params_pt, params0),
        source_loss=0.5 * jnp.mean((source - data.y_source) ** 2),
    )


class MixedInitSweep(NamedTuple):
    """:class:`MixedInitRun` over widths × seeds: every field ``(W, S)``, plus ``widths``."""

    widths: Array
    relative_error: Array
    head_error: Array
    backbone_error: Array
    pretrain_distance: Array
    source_loss: Array


def simulate_mixed_init(key: PRNGKey, setting: WidthScalingSetting) -> MixedInitSweep:
    """:func:`mixed_init_run` at every width of ``setting.widths`` for ``num_seeds`` seeds.

    The seed keys are ``split(key, num_seeds)``, the same at every width (one curve per
    seed); per width, seeds are mapped in vmapped batches (8 up to n = 128, 2 above) that
    bound the memory of the per-block NTKs. Lemma 5, eq. (97): the claims fit
    ``log(relative_error)`` on ``log n``.
    """
    check_setting_type("simulate_mixed_init", setting, WidthScalingSetting)
    check_key("simulate_mixed_init", key)
    keys = jax.random.split(key, setting.num_seeds)
    per_width = []
    for width in setting.widths:
        batch = min(setting.num_seeds, 8) if width <= 128 else 2
        per_width.append(
            jax.jit(
                lambda ks, w=width, b=batch: jax.lax.map(
                    lambda k: mixed_init_run(k, w, setting), ks, batch_size=b
                )
            )(keys)
        )
    stacked = jax.tree.map(lambda *values: jnp.stack(values), *per_width)
    return MixedInitSweep(jnp.asarray(setting.widths), *stacked)


@dataclasses.dataclass(frozen=True)
class MixedInitBlocksSetting:
    """Lemma 5, eqs. (93), (95) on random instances of the attention model (sizes ours).

    Attributes:
      width: ``n`` (2 heads, ``1/d`` logits, SP).
      num_inputs: inputs of 4 tokens of dimension 6.
      instances: independent instances (``split(key, instances)``).
      batch_size: instances vmapped at once.
    """

    width: int = 32
    num_inputs: int = 8
    instances: int = 200
    batch_size: int = 50

    def __post_init__(self):
        check_int_fields(self, ("width", "num_inputs", "instances", "batch_size"))


class MixedInitBlocks(NamedTuple):
    """Per instance, ``(instances, N, N)``: the head block of the width-normalised NTK from
    the per-parameter NTK (``head``) and eq. (93)'s ``f_BB f_BBᵀ/n`` (``head_formula``); the
    sum of all backbone blocks (``backbone``) and eq. (95)'s ``(1/n)WᵀJ_BBJ_BBᵀW`` from the
    multi-output backbone NTK (``backbone_formula``)."""

    head: Array
    head_formula: Array
    backbone: Array
    backbone_formula: Array


def simulate_mixed_init_blocks(key: PRNGKey, setting: MixedInitBlocksSetting) -> MixedInitBlocks:
    """A "pretrained" backbone (``θ_0`` plus a random perturbation of size ``O(n^{−1/2})`` per
    leaf: eqs. (93), (95) hold for any backbone) and a fresh head ``W ~ N(0, 1/n)``; blocks by
    ``ntsim.core.empirical_ntk_fn(per_block=True)`` against the two formulas. Float64."""
    check_setting_type("simulate_mixed_init_blocks", setting, MixedInitBlocksSetting)
    check_key("simulate_mixed_init_blocks", key)
    width, num_inputs = setting.width, setting.num_inputs

    def instance(k):
        k_init, k_bb, k_head, k_x = jax.random.split(k, 4)
        model = paper_attention_model(width, num_heads=2)
        x = jax.random.normal(k_x, (num_inputs, 4, 6))
        params0 = model.init(k_init, x[0])
        leaves, treedef = jax.tree.flatten(params0)
        noise = jax.random.split(k_bb, len(leaves))
        leaves = [
            leaf + jax.random.normal(kk, leaf.shape) / jnp.sqrt(leaf.size)
            for leaf, kk in zip(leaves, noise, strict=True)
        ]
        params = jax.tree.unflatten(treedef, leaves)
        head = jax.random.normal(k_head, (width, 1)) / jnp.sqrt(width)
        params = {**params, "head": {"w": head}}
        head_block, backbone = _head_and_backbone_blocks(model, params, x)

        def features(p, xi):  # f_BB(x) as a function of the backbone parameters
            return backbone_features(model, {**p, "head": params["head"]}, xi[None])[0]

        backbone_ntk = empirical_ntk_fn(features, trace_axes=())(
            x, None, {kk: v for kk, v in params.items() if kk != "head"}
        )
        return MixedInitBlocks(
            head_block,
            head_kernel_block(backbone_features(model, params, x)),
            backbone,
            backbone_kernel_block(backbone_ntk, head),
        )

    keys = jax.random.split(key, setting.instances)
    return jax.jit(lambda ks: jax.lax.map(instance, ks, batch_size=setting.batch_size))(keys)
