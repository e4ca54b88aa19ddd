r"""Hold-out learning curves of the fine-tuned attention model (Sun & Raskutti 2026, Thm 1, Fig. 2).

Theorem 1 (eq. (15)): fine-tuning a wide network from ``f_PT`` by GD stopped at ``T̂_op``
gives ``‖f − f_tgt‖²_2 = O(N^{−1/2})`` with probability ``≥ 1 − γ − c_1e^{−c_2Nϱ̂²}``; with
eigen-decay ``λ_k ≲ k^{−2β}`` the rate is ``N^{−2β/(2β+1)}`` (eq. (30)). Both need
Assumption 4.1: ``f_tgt − f_PT`` lies in the RKHS of the kernel (``C_H < ∞``). The paper's
experiments stop by hold-out validation instead (Sec 7).

:func:`holdout_learning_curves` runs one seed of the Fig. 2 analogue: an
attention block pretrained by GD on a synthetic source task (:func:`pretrain_attention`),
target tasks whose tokens lie on random ``r``-dimensional subspaces of ``ℝ^{d⁰}``
(:func:`subspace_basis`), targets ``f_tgt = f_PT + Δ`` plus ``N(0, σ²)`` noise, and
fine-tuning by GD of the linearised network (Lemma 1) — kernel GD on the width-normalised
empirical NTK at ``θ_PT`` (:func:`width_normalised_ntk`) from ``f_PT`` — stopped by
:func:`holdout_early_stopping` (``holdout_fraction`` of the ``N`` samples held out, the
validation loss every ``eval_every`` steps, ``patience`` evaluations, best checkpoint kept).
The error is ``mean (f̂ − f_tgt)²`` on fresh test inputs divided by ``mean Δ²`` (the error
of not fine-tuning). Two targets:

* ``target="teacher"``: ``Δ`` a random tanh teacher (:func:`task_teacher`), smooth and
  width-independent, but not constructed inside the finite-width NTK's RKHS;
* ``target="kernel"``: ``Δ = Σ_j a_j Θ(·, z_j)`` over ``kernel_centres`` task inputs
  ``z_j`` — Assumption 4.1 holds by construction (``C_H² = aᵀΘ(Z, Z)a``). ``a ~ N(0, I)``
  is rescaled so that ``Δ`` has the tanh teacher's root mean square on the centres (the
  same signal-to-noise ratio as ``"teacher"``).

Pure and ``vmap``-able over the key; the setting (sizes, ranks) is static.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import eigen_decay_exponent
from ntsim.theory.early_stopping._stopping import holdout_early_stopping
from ntsim.theory.early_stopping._synthetic_tasks import (
    pretrain_attention_for,
    subspace_basis,
    subspace_inputs,
    task_teacher,
    width_normalised_ntk,
)

__all__ = [
    "LEARNING_CURVE_TARGETS",
    "LearningCurveSetting",
    "LearningCurveSweepSetting",
    "LearningCurves",
    "holdout_learning_curves",
    "simulate_learning_curves",
]

#: Kinds of ``Δ = f_tgt − f_PT`` (module doc).
LEARNING_CURVE_TARGETS = ("teacher", "kernel")


@dataclasses.dataclass(frozen=True)
class LearningCurveSetting:
    """Model, tasks, sample sizes and hold-out rule (the paper reports none of these).

    Attributes:
      width: ``n`` of the pretrained attention block (SP, 2 heads, ``1/d`` logits).
      seq_len: tokens per sequence ``T``.
      input_dim: token dimension ``d⁰``.
      ranks: task input-subspace dimensions ``r`` (smaller ``r``: faster NTK decay).
      sizes: sample sizes ``N`` (train + hold-out), each ``≥ 10``.
      num_test: fresh test inputs per task.
      noise_std: ``σ`` of the target noise.
      num_source: source (pretraining) sample size.
      pretrain_steps: GD steps of pretraining (step ``1/n``).
      holdout_fraction: share of the ``N`` samples held out, in ``(0, 0.5)``.
      patience: evaluations without improvement before stopping.
      eval_every: kernel-GD steps between validation evaluations.
      max_steps: kernel-GD horizon.
      beta_points: NTK size for the eigen-decay fit ``β`` (paper: 100).
      target: ``"teacher"`` or ``"kernel"`` (module doc).
      kernel_centres: centres ``z_j`` of the ``"kernel"`` target.
    """

    width: int = 64
    seq_len: int = 4
    input_dim: int = 16
    ranks: tuple[int, ...] = (1, 2, 4, 16)
    sizes: tuple[int, ...] = (25, 50, 100, 200, 400, 800)
    num_test: int = 200
    noise_std: float = 0.1
    num_source: int = 64
    pretrain_steps: int = 300
    holdout_fraction: float = 0.2
    patience: int = 10
    eval_every: int = 20
    max_steps: int = 4000
    beta_points: int = 100
    target: str = "teacher"
    kernel_centres: int = 20

    def __post_init__(self):
        check_int_fields(
            self,
            (
                "width",
                "seq_len",
                "input_dim",
                "num_test",
                "num_source",
                "pretrain_steps",
                "patience",
                "eval_every",
                "max_steps",
                "beta_points",
                "kernel_centres",
            ),
        )
        name = type(self).__name__
        if not self.ranks or any(not 1 <= int(r) <= self.input_dim for r in self.ranks):
            raise ValueError(
                f"{name}.ranks must be non-empty, each in [1, input_dim = {self.input_dim}], "
                f"got {self.ranks}."
            )
        if not self.sizes or any(int(n) < 10 for n in self.sizes):
            raise ValueError(f"{name}.sizes must be non-empty with N >= 10, got {self.sizes}.")
        if not 0 < self.holdout_fraction < 0.5:
            raise ValueError(
                f"{name}.holdout_fraction must lie in (0, 0.5), got {self.holdout_fraction}."
            )
        if not self.noise_std >= 0:
            raise ValueError(f"{name}.noise_std must be >= 0, got {self.noise_std}.")
        if self.target not in LEARNING_CURVE_TARGETS:
            raise ValueError(
                f"{name}.target must be one of {LEARNING_CURVE_TARGETS}, got {self.target!r}."
            )


class LearningCurves(NamedTuple):
    """One seed of :func:`holdout_learning_curves`.

    Attributes:
      errors: normalised test errors ``mean (f̂ − f_tgt)²/mean Δ²``, ``(ranks, sizes)``.
      kept_steps: the hold-out rule's kept kernel-GD step, ``(ranks, sizes)``.
      betas: eigen-decay exponent of the ``beta_points`` NTK at ``θ_PT``
        (:func:`ntsim.core.eigen_decay_exponent`), ``(ranks,)``.
    """

    errors: Array
    kept_steps: Array
    betas: Array


def _kernel_target(key, model, params, x, num_centres, seq_len, basis):
    """``Δ = Σ_j a_j Θ(·, z_j)`` on ``x`` with the tanh teacher's RMS on the centres ``z``."""
    k_z, k_a, k_t = jax.random.split(key, 3)
    z = subspace_inputs(k_z, num_centres, seq_len, basis)
    gram = width_normalised_ntk(model, params, jnp.concatenate([x, z]))
    a = jax.random.normal(k_a, (num_centres,), gram.dtype)
    at_centres = gram[x.shape[0] :, x.shape[0] :] @ a
    rms = jnp.sqrt(jnp.mean(task_teacher(k_t, z) ** 2) / jnp.mean(at_centres**2))
    return gram[: x.shape[0], : x.shape[0]], gram[: x.shape[0], x.shape[0] :] @ (rms * a)


def holdout_learning_curves(key: PRNGKey, setting: LearningCurveSetting) -> LearningCurves:
    """Normalised test errors of hold-out-stopped linearised fine-tuning, per task and ``N``.

    Sun & Raskutti 2026, Thm 1, eq. (30), Sec 7.1, Fig. 2 (module doc). The first ``N`` of
    ``max(sizes)`` i.i.d. samples form the size-``N`` sample (nested samples), of which the
    last ``round(holdout_fraction·N)`` are held out. ``vmap``-compatible over ``key``.
    """
    check_setting_type("holdout_learning_curves", setting, LearningCurveSetting)
    check_key("holdout_learning_curves", key)
    s = setting
    k_pre, k_tasks = jax.random.split(key)
    pre = pretrain_attention_for(k_pre, s)
    predict = jax.vmap(pre.model.apply, in_axes=(None, 0))
    n_max = max(s.sizes)
    errors, steps, betas = [], [], []
    for index, rank in enumerate(s.ranks):
        k_b, k_x, k_t, k_w, k_beta = jax.random.split(jax.random.fold_in(k_tasks, index), 5)
        basis = subspace_basis(k_b, s.input_dim, rank)
        x = subspace_inputs(k_x, n_max + s.num_test, s.seq_len, basis)
        f_pt = predict(pre.params, x)[:, 0]
        if s.target == "kernel":
            gram, delta = _kernel_target(
                k_t, pre.model, pre.params, x, s.kernel_centres, s.seq_len, basis
            )
        else:
            gram = width_normalised_ntk(pre.model, pre.params, x)
            delta = task_teacher(k_t, x)
        y = f_pt + delta + s.noise_std * jax.random.normal(k_w, f_pt.shape, f_pt.dtype)
        test = slice(n_max, None)
        scale = jnp.mean(delta[test] ** 2)
        target = f_pt[test] + delta[test]
        row_e, row_s = [], []
        for n in s.sizes:  # static N; the first n samples are an i.i.d. draw
            n_val = max(1, round(s.holdout_fraction * n))
            tr, va = slice(0, n - n_val), slice(n - n_val, n)
            held = holdout_early_stopping(
                gram[tr, tr],
                gram[va, tr],
                y[tr],
                y[va],
                max_steps=s.max_steps,
                patience=s.patience,
                eval_every=s.eval_every,
                f_pt_train=f_pt[tr],
                f_pt_val=f_pt[va],
                kernel_eval_train=gram[test, tr],
                f_pt_eval=f_pt[test],
            )
            row_e.append(jnp.mean((held.predictions - target) ** 2) / scale)
            row_s.append(held.step)
        errors.append(jnp.stack(row_e))
        steps.append(jnp.stack(row_s))
        x_beta = subspace_inputs(k_beta, s.beta_points, s.seq_len, basis)
        lam = jnp.linalg.eigvalsh(width_normalised_ntk(pre.model, pre.params, x_beta))
        betas.append(eigen_decay_exponent(lam))
    return LearningCurves(jnp.stack(errors), jnp.stack(steps), jnp.stack(betas))


@dataclasses.dataclass(frozen=True)
class LearningCurveSweepSetting:
    """:func:`holdout_learning_curves` over seeds (Thm 1's rate in ``N``; sizes ours).

    Attributes:
      base: the model, tasks, sizes and hold-out rule.
      num_seeds: seeds (keys ``split(key, num_seeds)``; each seed is one nested curve).
      batch_size: seeds vmapped at once (a ``(max N × P)`` Jacobian per seed).
    """

    base: LearningCurveSetting = LearningCurveSetting()
    num_seeds: int = 36
    batch_size: int = 2

    def __post_init__(self):
        check_int_fields(self, ("num_seeds", "batch_size"))


def simulate_learning_curves(key: PRNGKey, setting: LearningCurveSweepSetting) -> LearningCurves:
    """:class:`LearningCurves` with a leading seed axis: errors ``(S, ranks, sizes)``.

    Run it in float64 (the NTK spectra span many decades)."""
    check_setting_type("simulate_learning_curves", setting, LearningCurveSweepSetting)
    check_key("simulate_learning_curves", key)
    keys = jax.random.split(key, setting.num_seeds)
    return jax.jit(
        lambda ks: jax.lax.map(
            lambda k: holdout_learning_curves(k, setting.base), ks, batch_size=setting.batch_size
        )
    )(keys)
