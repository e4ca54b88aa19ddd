r"""Synthetic fine-tuning tasks on a pretrained attention model (Sun & Raskutti 2026, Sec 7).

The paper fine-tunes GPT-Neo on STS/SemRel/GLUE-type tasks and measures (App. A.2–A.3) the
eigen-decay of the ``100 × 100`` empirical NTK at ``f_PT``, learning curves with hold-out
early stopping (Fig. 2) and task vectors (Fig. 3). Offline and on a CPU we substitute
a small attention block pretrained by GD on a synthetic source task, and
target tasks whose token embeddings live on a random ``r``-dimensional subspace of
``ℝ^{d⁰}`` — smaller ``r`` gives a faster NTK eigen-decay (a "simpler" task, larger ``β``).
Targets are ``f_tgt = f_PT + Δ`` with ``Δ`` a random tanh teacher (Assumption 4.1 analogue:
``f_tgt − f_PT`` is smooth and independent of the width) plus Gaussian noise.

Everything is pure and key-driven; the experiments in ``experiments/early_stopping/`` only
call these functions and plot.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_positive_int
from ntsim.core import Model, empirical_ntk_fn, gradient_descent, mse_loss
from ntsim.theory.early_stopping._width_scaling import paper_attention_model

__all__ = [
    "PretrainedAttention",
    "pretrain_attention",
    "pretrain_attention_for",
    "subspace_basis",
    "subspace_inputs",
    "task_teacher",
    "width_normalised_ntk",
]


class PretrainedAttention(NamedTuple):
    """A pretrained attention model: the model, ``θ_0`` and ``θ_PT``."""

    model: Model
    params0: Params
    params: Params


def subspace_basis(key: PRNGKey, input_dim: int, rank: int) -> Array:
    """A random ``(rank, input_dim)`` orthonormal basis scaled by ``√(d⁰/r)``.

    The scale keeps ``E‖x_t‖² = d⁰`` for ``x_t = z_t B``, ``z_t ~ N(0, I_r)``, so inputs of
    every rank have the norm of full-rank Gaussian tokens.
    """
    rank = check_positive_int("subspace_basis", "rank", rank)
    input_dim = check_positive_int("subspace_basis", "input_dim", input_dim)
    if rank > input_dim:
        raise ValueError(f"subspace_basis: rank must be <= input_dim = {input_dim}, got {rank}.")
    q, _ = jnp.linalg.qr(jax.random.normal(key, (input_dim, input_dim)))
    return q[:, :rank].T * math.sqrt(input_dim / rank)


def subspace_inputs(key: PRNGKey, num: int, seq_len: int, basis: ArrayLike) -> Array:
    """``num`` sequences of ``seq_len`` tokens ``x_t = z_t B``, ``z_t ~ N(0, I_r)``."""
    b = jnp.asarray(basis)
    return jax.random.normal(key, (num, seq_len, b.shape[0])) @ b


def task_teacher(key: PRNGKey, x: ArrayLike, hidden: int = 8) -> Array:
    """``Δ(x) = mean_t Σ_k a_k tanh(⟨x_t, u_k⟩)``, ``u_k ~ N(0, I/d⁰)``, ``a ~ N(0, I/hidden)``."""
    x = jnp.asarray(x)
    k_u, k_a = jax.random.split(key)
    u = jax.random.normal(k_u, (x.shape[-1], hidden)) / math.sqrt(x.shape[-1])
    a = jax.random.normal(k_a, (hidden,)) / math.sqrt(hidden)
    return jnp.mean(jnp.tanh(x @ u) @ a, axis=-1)


def pretrain_attention(
    key: PRNGKey,
    *,
    width: int,
    seq_len: int,
    input_dim: int,
    num_source: int,
    steps: int,
    eta0: float = 1.0,
    num_heads: int = 2,
) -> PretrainedAttention:
    """Pretrain :func:`paper_attention_model` (SP) by GD with step ``η_0/n`` on a source task.

    Source inputs are full-rank Gaussian token sequences, targets a random tanh teacher
    (:func:`task_teacher`); loss ``(1/2N)Σ(f − y)²`` (Assumption 4.7: GD from a Gaussian
    init). ``jit``-compatible with ``width``, sizes and ``steps`` static.
    """
    k_x, k_t, k_init = jax.random.split(key, 3)
    model = paper_attention_model(width, num_heads=num_heads)
    x = jax.random.normal(k_x, (num_source, seq_len, input_dim))
    y = task_teacher(k_t, x)
    params0 = model.init(k_init, x[0])
    loss = mse_loss(model.apply, x, y, loss_scale=0.5 / num_source)
    params = gradient_descent(
        loss, params0, num_steps=steps, learning_rate=eta0 / width, throw=False
    ).params
    return PretrainedAttention(model, params0, params)


def pretrain_attention_for(key: PRNGKey, setting) -> PretrainedAttention:
    """:func:`pretrain_attention` at the sizes of ``setting``: any setting with the fields
    ``width, seq_len, input_dim, num_source, pretrain_steps`` and optionally ``eta0``
    (default 1) — the learning-curve, task-vector and NTK-decay settings all do, so the
    pretraining they share is spelled out once."""
    fields = ("width", "seq_len", "input_dim", "num_source", "pretrain_steps")
    missing = [name for name in fields if not hasattr(setting, name)]
    if missing:
        raise TypeError(
            f"pretrain_attention_for: setting must have the fields {fields}, got a "
            f"{type(setting).__name__} without {', '.join(missing)}."
        )
    return pretrain_attention(
        key,
        width=setting.width,
        seq_len=setting.seq_len,
        input_dim=setting.input_dim,
        num_source=setting.num_source,
        steps=setting.pretrain_steps,
        eta0=getattr(setting, "eta0", 1.0),
    )


def width_normalised_ntk(model: Model, params: Params, x1: ArrayLike, x2=None) -> Array:
    """``Θ(x, x') = (1/n)⟨∇_θ f(x), ∇_θ f(x')⟩`` (eq. (37)), ``n`` = the model width."""
    width = params["head"]["w"].shape[0]
    return empirical_ntk_fn(model.apply)(x1, x2, params) / width
