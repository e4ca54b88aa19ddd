r"""Trained attention-model task vectors vs the kernel prediction (Sun & Raskutti 2026, Cor 2).

Cor 2 (eqs. (25), (107)–(109)) is proved through the linearised model: at large width a
fine-tuned network is ``f_PT + Σ_i ζ_i 𝕂(·, X_i) + e`` with ``‖e‖ = Õ(n^{−1/2})``
(Lemma 1), so the task vector of the *trained network* should be close to the one of the
linearised model, ``τ ≈ Jᵀc`` (:func:`task_vector_coefficients`), and its cosine with
another task's vector close to the kernel-only prediction
``c_sᵀG_{st}c_t/√(c_sᵀG_{ss}c_s · c_tᵀG_{tt}c_t)`` (:func:`task_vector_cosine`).

:func:`trained_task_vectors` runs one instance of the Sec 7.2 / Fig. 3 analogue: an attention
block pretrained by GD on a synthetic source task (:func:`pretrain_attention`), four target
tasks whose tokens lie on subspaces of ``ℝ^{d⁰}`` (:func:`task_vector_bases`: A and B share one
subspace with different teachers, C overlaps it in half of its directions, D lies on an
orthogonal subspace), each fine-tuned separately by full-batch GD with step ``η_0/n`` on
``(1/2N)Σ(f − y)²`` (the real network; the step may be capped by the kernel, see
:class:`TaskVectorSetting`), and returns the trained cosines, the linearised-model
predicted cosines from kernel blocks at ``θ_PT``, the cross-task NTK alignments and the
multi-task MSEs of ``θ_PT + Σ_t τ_t``. Pure and ``vmap``-able over the key; the width (in
:class:`TaskVectorSetting`) is static."""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_positive_int, check_setting_type
from ntsim.core import gradient_descent, mse_loss
from ntsim.theory.early_stopping._synthetic_tasks import (
    pretrain_attention_for,
    subspace_inputs,
    task_teacher,
    width_normalised_ntk,
)
from ntsim.theory.early_stopping._task_vectors import (
    task_vector_coefficients,
    task_vector_cosine,
)

__all__ = [
    "TRAINED_TASK_VECTOR_SETTINGS",
    "TaskVectorSweepSetting",
    "TrainedTaskVectorSweep",
    "simulate_trained_task_vectors",
    "NUM_TASKS",
    "TaskVectorSetting",
    "TrainedTaskVectors",
    "finetune_step",
    "task_vector_bases",
    "trained_task_vectors",
]

#: Tasks A (subspace U), B (= U, another teacher), C (half of U + new directions), D (⊥ U).
NUM_TASKS = 4


@dataclasses.dataclass(frozen=True)
class TaskVectorSetting:
    """Model, task sizes and fine-tuning of the task-vector analogue (sizes are ours).

    The paper fine-tunes GPT-Neo-1.3B and reports no hyperparameters.

    Attributes:
      width: ``n`` (attention head width, FFN width; SP, 2 heads, ``1/d`` logits).
      seq_len: tokens per sequence ``T``.
      input_dim: token dimension ``d⁰`` (needs ``3·subspace_dim ≤ d⁰``).
      subspace_dim: dimension ``r ≥ 2`` of each task's token subspace.
      num_train: fine-tuning samples per task.
      num_test: test samples per task.
      noise_std: ``σ`` of the Gaussian target noise.
      num_source: source (pretraining) sample size.
      pretrain_steps, finetune_steps: GD steps of both stages.
      eta0: ``η_0``; the GD step is ``η_0/n`` (capped by ``kernel_step_cap``).
      kernel_step_cap: ``κ`` or ``None``. With ``κ``, the step is
        ``ε = min(η_0/n, κ N/max_t λ_max(G_tt))`` (``G`` at ``θ_PT``), so the linearised
        model's GD condition ``ε λ_max(G_tt)/N ≤ κ ≤ 1`` holds on every instance; at small
        ``n`` the largest NTK eigenvalue fluctuates enough across seeds that no fixed
        ``η_0`` guarantees it. ``None``: ``ε = η_0/n``.
    """

    width: int = 64
    seq_len: int = 4
    input_dim: int = 16
    subspace_dim: int = 4
    num_train: int = 32
    num_test: int = 100
    noise_std: float = 0.05
    num_source: int = 64
    pretrain_steps: int = 300
    finetune_steps: int = 300
    eta0: float = 1.0
    kernel_step_cap: float | None = None

    def __post_init__(self):
        check_int_fields(
            self,
            (
                "width",
                "seq_len",
                "input_dim",
                "subspace_dim",
                "num_train",
                "num_test",
                "num_source",
                "pretrain_steps",
                "finetune_steps",
            ),
        )
        name = type(self).__name__
        if 3 * self.subspace_dim > self.input_dim:
            raise ValueError(
                f"{name}.subspace_dim must satisfy 3·subspace_dim <= input_dim = "
                f"{self.input_dim}, got {self.subspace_dim}."
            )
        if self.subspace_dim < 2:
            raise ValueError(f"{name}.subspace_dim must be >= 2, got {self.subspace_dim}.")
        if not self.eta0 > 0:
            raise ValueError(f"{name}.eta0 must be positive, got {self.eta0}.")
        if self.kernel_step_cap is not None and not 0 < self.kernel_step_cap <= 1:
            raise ValueError(
                f"{name}.kernel_step_cap must lie in (0, 1] or be None, got {self.kernel_step_cap}."
            )
        if not self.noise_std >= 0:
            raise ValueError(f"{name}.noise_std must be >= 0, got {self.noise_std}.")


def task_vector_bases(key: PRNGKey, input_dim: int, subspace_dim: int) -> Array:
    """Token-subspace bases of tasks A–D, ``(4, r, d⁰)``, each scaled by ``√(d⁰/r)``.

    Columns of one random orthogonal ``Q``: A uses ``0..r−1``, B the same, C
    ``r/2..r/2+r−1`` (half of A's directions), D ``2r..3r−1`` (orthogonal to A, B, C).
    The scale is :func:`subspace_basis`'s (``E‖x_t‖² = d⁰``).
    """
    r = check_positive_int("task_vector_bases", "subspace_dim", subspace_dim)
    d = check_positive_int("task_vector_bases", "input_dim", input_dim)
    if r < 2 or 3 * r > d:
        raise ValueError(
            f"task_vector_bases: subspace_dim must be >= 2 with 3·subspace_dim <= input_dim = "
            f"{d}, got {r}."
        )
    q, _ = jnp.linalg.qr(jax.random.normal(key, (d, d)))
    half = r // 2
    cols = (jnp.arange(r), jnp.arange(r), jnp.arange(half, half + r), jnp.arange(2 * r, 3 * r))
    return jnp.stack([q[:, c].T * math.sqrt(d / r) for c in cols])


class TrainedTaskVectors(NamedTuple):
    """One instance of :func:`trained_task_vectors` (``s, t`` index the four tasks).

    Attributes:
      cosine: ``cos(τ_s, τ_t)`` of the trained network's task vectors, ``(4, 4)``.
      predicted_cosine: the linearised-model prediction from kernel blocks at ``θ_PT``,
        ``(4, 4)``.
      alignment: ``‖G_st‖_F/√(‖G_ss‖_F‖G_tt‖_F)``, cross-task NTK alignment, ``(4, 4)``.
      mse_pt, mse_ft, mse_mt: test MSE against ``f_tgt`` of ``θ_PT``, of each task's own
        fine-tuned model and of ``θ_PT + Σ_t τ_t``, ``(4,)``.
      normalised: ``(MSE_PT − MSE_MT)/(MSE_PT − MSE_FT)``, ``(4,)`` (1: as good as the
        task's own model; 0: no better than ``θ_PT``).
      finetune_loss: final training loss ``(1/2N)Σ(f − y)²`` per task, ``(4,)``.
      max_kernel_step: ``max_t ε λ_max(G_tt)/N``; the prediction
        (:func:`task_vector_coefficients`) is valid only when it is ``≤ 1`` (not checked
        under ``jit``: callers check this field).
      task_kernel_step: ``ε ‖G_tt‖₂/N`` per task, ``(4,)``: the same condition with each
        block's largest eigenvalue taken by a second route (its spectral norm, by singular
        values), so an error in the ``λ_max`` that sets ``ε`` does not cancel.
    """

    cosine: Array
    predicted_cosine: Array
    alignment: Array
    mse_pt: Array
    mse_ft: Array
    mse_mt: Array
    normalised: Array
    finetune_loss: Array
    max_kernel_step: Array
    task_kernel_step: Array


def finetune_step(setting: TaskVectorSetting, lam_max: ArrayLike, num_train: int) -> Array:
    """The fine-tuning step ``ε = η_0/n``, capped at ``κ N/λ_max`` when ``κ`` is set.

    ``lam_max`` is ``max_t λ_max(G_tt)`` of the unnormalised per-task grams ``G_tt = J_tJ_tᵀ``
    at ``θ_PT`` and ``num_train`` the rows ``N`` of one task, so ``ε λ_max/N ≤ κ``.
    """
    check_setting_type("finetune_step", setting, TaskVectorSetting)
    lam = jnp.asarray(lam_max)
    step = jnp.asarray(setting.eta0 / setting.width, lam.dtype)
    if setting.kernel_step_cap is None:
        return step
    return jnp.minimum(step, setting.kernel_step_cap * num_train / lam)


def trained_task_vectors(key: PRNGKey, setting: TaskVectorSetting) -> TrainedTaskVectors:
    r"""Fine-tune a pretrained attention block on four tasks; trained vs predicted task vectors.

    Sun & Raskutti 2026, Sec 7.2, Fig. 3, Cor 2. Targets are
    ``f_tgt = f_PT + Δ_t`` (``Δ_t`` a random tanh teacher, :func:`task_teacher`) plus
    ``N(0, σ²)`` noise on the training points. Task vectors ``τ_t = θ_FT,t − θ_PT``
    (eq. (22)) of the network trained by GD with step ``ε = η_0/n``; the prediction uses
    ``G = JJᵀ`` at ``θ_PT`` on the four tasks' training inputs and
    ``c_t = task_vector_coefficients(G_tt, f_PT − Y, ε, steps)``, i.e. the same GD on the
    linearised model (Lemma 1).

    ``vmap``-compatible over ``key``; ``setting`` is static.
    """
    check_setting_type("trained_task_vectors", setting, TaskVectorSetting)
    check_key("trained_task_vectors", key)
    k_pre, k_basis, k_x, k_t, k_w = jax.random.split(key, 5)
    s = setting
    pre = pretrain_attention_for(k_pre, s)
    predict = jax.vmap(pre.model.apply, in_axes=(None, 0))
    bases = task_vector_bases(k_basis, s.input_dim, s.subspace_dim)
    n_all = s.num_train + s.num_test
    x = jax.vmap(lambda k, b: subspace_inputs(k, n_all, s.seq_len, b))(
        jax.random.split(k_x, NUM_TASKS), bases
    )  # (4, n_all, T, d⁰)
    f_pt = jax.vmap(lambda xi: predict(pre.params, xi)[:, 0])(x)
    delta = jax.vmap(task_teacher)(jax.random.split(k_t, NUM_TASKS), x)
    y = f_pt + delta + s.noise_std * jax.random.normal(k_w, f_pt.shape)
    tr, te = slice(0, s.num_train), slice(s.num_train, None)

    # kernel blocks G_st = J_sJ_tᵀ at θ_PT on the training inputs
    x_train = x[:, tr].reshape(-1, *x.shape[2:])
    gram = width_normalised_ntk(pre.model, pre.params, x_train) * s.width
    m = s.num_train
    block = gram.reshape(NUM_TASKS, m, NUM_TASKS, m).transpose(0, 2, 1, 3)  # (s, t, m, m)
    index = jnp.arange(NUM_TASKS)
    diag = block[index, index]  # (4, m, m)
    lam_max = jnp.max(jnp.linalg.eigvalsh(diag)[:, -1])
    lr = finetune_step(s, lam_max, m)

    def finetune(xi, yi):
        loss = mse_loss(pre.model.apply, xi[tr], yi[tr], loss_scale=0.5 / s.num_train)
        params = gradient_descent(
            loss, pre.params, num_steps=s.finetune_steps, learning_rate=lr, throw=False
        ).params
        return params, loss(params)

    fine, ft_loss = jax.vmap(finetune)(x, y)
    flat_pt, unravel = ravel_pytree(pre.params)
    taus = jax.vmap(lambda p: ravel_pytree(p)[0] - flat_pt)(fine)  # (4, P)
    norms = jnp.linalg.norm(taus, axis=1)
    cosine = taus @ taus.T / jnp.outer(norms, norms)

    fro = jnp.linalg.norm(block, axis=(2, 3))
    alignment = fro / jnp.sqrt(jnp.outer(jnp.diag(fro), jnp.diag(fro)))
    coeffs = jax.vmap(
        lambda g, r0: task_vector_coefficients(g, r0, step_size=lr, steps=s.finetune_steps)
    )(diag, f_pt[:, tr] - y[:, tr])  # (4, m)

    def pair(a, b):
        return task_vector_cosine(diag[a], block[a, b], diag[b], coeffs[a], coeffs[b])

    predicted = jax.vmap(lambda a: jax.vmap(lambda b: pair(a, b))(index))(index)

    multi = unravel(flat_pt + taus.sum(axis=0))
    target = f_pt[:, te] + delta[:, te]

    def mse(params, t):
        return jnp.mean((predict(params, x[t][te])[:, 0] - target[t]) ** 2)

    mse_pt = jnp.mean(delta[:, te] ** 2, axis=1)
    mse_ft = jax.vmap(mse)(fine, index)
    mse_mt = jax.vmap(mse, in_axes=(None, 0))(multi, index)
    return TrainedTaskVectors(
        cosine=cosine,
        predicted_cosine=predicted,
        alignment=alignment,
        mse_pt=mse_pt,
        mse_ft=mse_ft,
        mse_mt=mse_mt,
        normalised=(mse_pt - mse_mt) / (mse_pt - mse_ft),
        finetune_loss=ft_loss,
        max_kernel_step=lr * lam_max / m,
        task_kernel_step=lr * jnp.linalg.norm(diag, 2, axis=(1, 2)) / m,
    )


@dataclasses.dataclass(frozen=True)
class TaskVectorSweepSetting:
    """:func:`trained_task_vectors` over widths × seeds (Cor 2 at finite width; sizes ours).

    Attributes:
      base: the setting at every width (its ``width`` is replaced).
      widths: the widths ``n``.
      num_seeds: seeds per width; the seed keys are the same at every width.
    """

    base: TaskVectorSetting = TaskVectorSetting()
    widths: tuple[int, ...] = (16, 32, 64, 128, 256)
    num_seeds: int = 40

    def __post_init__(self):
        check_int_fields(self, ("num_seeds",))
        if len(self.widths) < 2 or any(not isinstance(w, int) or w < 1 for w in self.widths):
            raise ValueError(
                f"TaskVectorSweepSetting.widths must hold >= 2 positive ints, got {self.widths}."
            )


class TrainedTaskVectorSweep(NamedTuple):
    """``widths`` ``(W,)`` and ``runs``: :class:`TrainedTaskVectors` with every field stacked
    to ``(W, S, ...)``."""

    widths: Array
    runs: TrainedTaskVectors


def simulate_trained_task_vectors(
    key: PRNGKey, setting: TaskVectorSweepSetting
) -> TrainedTaskVectorSweep:
    """:func:`trained_task_vectors` at every width for ``num_seeds`` seeds (keys
    ``split(key, num_seeds)`` shared across widths; seeds mapped in vmapped batches of 4 up
    to n = 64 and 2 above, which bound memory)."""
    check_setting_type("simulate_trained_task_vectors", setting, TaskVectorSweepSetting)
    check_key("simulate_trained_task_vectors", key)
    keys = jax.random.split(key, setting.num_seeds)
    per_width = []
    for width in setting.widths:
        at_width = dataclasses.replace(setting.base, width=width)
        batch = 4 if width <= 64 else 2
        per_width.append(
            jax.jit(
                lambda ks, s=at_width, b=batch: jax.lax.map(
                    lambda k: trained_task_vectors(k, s), ks, batch_size=b
                )
            )(keys)
        )
    stacked = jax.tree.map(lambda *values: jnp.stack(values), *per_width)
    return TrainedTaskVectorSweep(jnp.asarray(setting.widths), stacked)


TRAINED_TASK_VECTOR_SETTINGS = {
    "quick": TaskVectorSweepSetting(
        base=TaskVectorSetting(
            num_train=16, num_test=32, pretrain_steps=50, finetune_steps=50, kernel_step_cap=0.9
        ),
        widths=(16, 64),
        num_seeds=12,
    ),
    # full: 12 seeds (40 cost 401 s); at 40 the gap's slope was −0.98 [−1.06, −0.90], so at
    # 12 its CI (≈ ±0.16) stays ≥ 0.5 from −0.3; the largest-width gap (≤ 0.009) is per seed
    "full": TaskVectorSweepSetting(base=TaskVectorSetting(kernel_step_cap=0.9), num_seeds=12),
}
"""Trained task vectors over widths × seeds per scale (the Cor 2 claim and the Fig. 3
experiment both read these)."""
