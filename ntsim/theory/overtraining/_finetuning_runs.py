"""Simulations of fine-tuning the linear network that the claims read (Sec 4.3, App A.3–A.6).

GD on the *matrices* (:func:`~ntsim.theory.overtraining.finetune`, eqs. 10–11 / 16–17) from
ideal checkpoints built with random Haar ``U, V``. Learning rates satisfy Assumption A.8
with 20% margin, ``η = 0.8/(4(λ_max + 2)Γ)``, ``Γ = max(σ^pre_1, σ^ft_max)`` (eq. 12).

Both spectra are drawn strictly decreasing, as the paper assumes. This matters numerically:
the ideal dynamics is a saddle when some unlearned mode ``i`` has ``σ^ft_i > σ^ft_j + λσ^pre_j``
for a learned ``j`` (linearising eqs. 16–17: the hidden unit of mode ``j`` then rotates toward
mode ``i`` at rate ``2η(σ^ft_i − (1+λ)a_j)``), and round-off alone triggers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.theory.overtraining._finetuning import (
    finetune,
    finetune_ideal_checkpoints,
    mode_trajectory,
)
from ntsim.theory.overtraining._instances import haar_pair, sorted_uniform
from ntsim.theory.overtraining._pretraining import ideal_checkpoint, mode_matrix, task_matrix

__all__ = [
    "A8_FRACTION",
    "FIXED_POINT_SETTINGS",
    "ContractionRun",
    "ContractionSetting",
    "DeadUnitsRun",
    "DeadUnitsSetting",
    "FixedPointRun",
    "FixedPointSetting",
    "MinibatchGradientRun",
    "MinibatchGradientSetting",
    "RecursionRun",
    "RecursionSetting",
    "a8_learning_rate",
    "simulate_contraction",
    "simulate_dead_units",
    "simulate_fixed_point",
    "simulate_minibatch_gradient",
    "simulate_recursion",
]

#: η = A8_FRACTION/(4(λ + 2)Γ): Assumption A.8 with 20% margin.
A8_FRACTION = 0.8


def a8_learning_rate(spectrum_pre, spectrum_ft, reg):
    """``(η, Γ)`` with ``η = 0.8/(4(λ + 2)Γ)`` and ``Γ = max(σ^pre_1, max σ^ft)`` (eq. 12, A.8)."""
    gamma = jnp.maximum(spectrum_pre[0], spectrum_ft.max())
    return A8_FRACTION / (4 * (reg + 2) * gamma), gamma


def _spectra(key, d, low_pre, low_ft, high=3.0):
    k_s, k_f = jax.random.split(key)
    return sorted_uniform(k_s, d, low_pre, high), sorted_uniform(k_f, d, low_ft, high)


@dataclass(frozen=True)
class RecursionSetting:
    """Ideal-init GD at ``m = ∞`` from every checkpoint ``n = 0..d`` (Lemma A.7).

    ``σ^pre ~`` sorted ``U[0.2, 3]``, ``σ^ft ~`` sorted ``U[0.1, 3]``, ``λ ~ U[0.2, 3]``.
    """

    d: int = 4
    instances: int = 200
    steps: int = 200
    record_every: int = 50

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "steps", "record_every"))
        if self.steps % self.record_every:
            raise ValueError("RecursionSetting: record_every must divide steps.")


class RecursionRun(NamedTuple):
    pre: Array  # (instances, d)
    ft: Array  # (instances, d)
    reg: Array  # (instances,)
    learning_rate: Array  # (instances,)
    gamma: Array  # (instances,) Γ
    modes: Array  # (instances, d + 1, R, d, d): UᵀθV per checkpoint n at the recorded steps
    steps: Array  # (R,) the recorded steps 0, record_every, …, steps


def simulate_recursion(key: PRNGKey, setting: RecursionSetting) -> RecursionRun:
    """GD on eqs. 16–17 from every ideal checkpoint; ``UᵀθV`` every ``record_every`` steps."""
    check_setting_type("simulate_recursion", setting, RecursionSetting)
    check_key("simulate_recursion", key)
    d = setting.d

    def one(k):
        k_s, k_uv, k_r = jax.random.split(k, 3)
        pre, ft = _spectra(k_s, d, 0.2, 0.1)
        u, v = haar_pair(k_uv, d)
        reg = jax.random.uniform(k_r, minval=0.2, maxval=3.0)
        eta, gamma = a8_learning_rate(pre, ft, reg)
        thetas, _, _ = finetune_ideal_checkpoints(
            pre, ft, u, v, learning_rate=eta, reg=reg, num_steps=setting.steps,
            record_every=setting.record_every,
        )  # fmt: skip
        per_time = jax.vmap(mode_matrix, in_axes=(0, None, None))
        return pre, ft, reg, eta, gamma, jax.vmap(per_time, in_axes=(0, None, None))(thetas, u, v)

    out = jax.vmap(one)(jax.random.split(key, setting.instances))
    return RecursionRun(*out, jnp.arange(0, setting.steps + 1, setting.record_every))


@dataclass(frozen=True)
class DeadUnitsSetting:
    """Minibatch GD (batch ``batch``) from an ideal checkpoint ``n < d`` (``λ ~ U[0, 3]``)."""

    d: int = 4
    instances: int = 200
    steps: int = 100
    batch: int = 20

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "steps", "batch"))


class DeadUnitsRun(NamedTuple):
    dead_max: Array  # (instances,) max |W1[:, j]|, |W2[j, :]| over the unlearned units j ≥ n
    rank_excess: Array  # (instances,) σ_(n+1)(θ)/Γ
    leak: Array  # (instances,) max |(UᵀθV)_ij|/Γ outside the top-n block


def simulate_dead_units(key: PRNGKey, setting: DeadUnitsSetting) -> DeadUnitsRun:
    """Finite-batch GD from ``(W̄1, W̄2)`` of a random checkpoint ``n ∈ {0..d−1}``."""
    check_setting_type("simulate_dead_units", setting, DeadUnitsSetting)
    check_key("simulate_dead_units", key)
    d = setting.d

    def one(k):
        k_s, k_uv, k_r, k_n, k_b = jax.random.split(k, 5)
        pre, ft = _spectra(k_s, d, 0.2, 0.1)
        u, v = haar_pair(k_uv, d)
        reg = jax.random.uniform(k_r, minval=0.0, maxval=3.0)
        n = jax.random.randint(k_n, (), 0, d)  # at least one unlearned unit
        eta, gamma = a8_learning_rate(pre, ft, reg)
        w1, w2 = ideal_checkpoint(pre, n, u, v)
        res = finetune(
            w1, w2, task_matrix(ft, u, v), learning_rate=eta, reg=reg, num_steps=setting.steps,
            batch_size=setting.batch, key=k_b,
        )  # fmt: skip
        dead = jnp.arange(d) >= n
        dead_max = jnp.maximum(
            jnp.max(jnp.abs(jnp.where(dead[None, :], res.w1, 0.0))),
            jnp.max(jnp.abs(jnp.where(dead[:, None], res.w2, 0.0))),
        )
        singular = jnp.linalg.svd(res.w1 @ res.w2, compute_uv=False)
        rank_excess = jnp.where(dead, singular, 0.0).max() / gamma
        modes = mode_matrix(res.w1 @ res.w2, u, v)
        block = (jnp.arange(d)[:, None] < n) & (jnp.arange(d)[None, :] < n)
        return dead_max, rank_excess, jnp.max(jnp.abs(jnp.where(block, 0.0, modes))) / gamma

    return DeadUnitsRun(*jax.vmap(one)(jax.random.split(key, setting.instances)))


@dataclass(frozen=True)
class FixedPointSetting:
    """GD at ``m = ∞`` from the full checkpoint ``n = d`` for ``steps`` steps.

    ``σ^pre, σ^ft ~`` sorted ``U[0.3, 3]``, ``λ ~ U[0, 3]``: per-step rates
    ``≥ 4η(σ^ft + λσ^pre) ≥ 1.3e-2``, so 3000 steps leave ``≤ 1e-17`` of the initial gap.
    """

    d: int = 4
    instances: int = 100
    steps: int = 3000

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "steps"))


class FixedPointRun(NamedTuple):
    pre: Array  # (instances, d)
    ft: Array
    reg: Array  # (instances,)
    gamma: Array  # (instances,)
    modes: Array  # (instances, d): diag(Uᵀθ(K)V)


def simulate_fixed_point(key: PRNGKey, setting: FixedPointSetting) -> FixedPointRun:
    """Long GD (``m = ∞``) from ``(W̄1, W̄2)`` at ``n = d``; the converged modes."""
    check_setting_type("simulate_fixed_point", setting, FixedPointSetting)
    check_key("simulate_fixed_point", key)
    d = setting.d

    def one(k):
        k_s, k_uv, k_r = jax.random.split(k, 3)
        pre, ft = _spectra(k_s, d, 0.3, 0.3)
        u, v = haar_pair(k_uv, d)
        reg = jax.random.uniform(k_r, minval=0.0, maxval=3.0)
        eta, gamma = a8_learning_rate(pre, ft, reg)
        w1, w2 = ideal_checkpoint(pre, d, u, v)
        res = finetune(w1, w2, task_matrix(ft, u, v), learning_rate=eta, reg=reg,
                       num_steps=setting.steps)  # fmt: skip
        return pre, ft, reg, gamma, jnp.diagonal(mode_matrix(res.w1 @ res.w2, u, v))

    return FixedPointRun(*jax.vmap(one)(jax.random.split(key, setting.instances)))


@dataclass(frozen=True)
class ContractionSetting:
    """The scalar per-mode recursion (App A.6) at the largest step Lemma A.28 allows × 0.95.

    ``σ^pre, σ^ft ~ U[0.05, 3]``, ``λ ~ U[0, 3]``.
    """

    instances: int = 2000
    steps: int = 400

    def __post_init__(self):
        check_int_fields(self, ("instances", "steps"))


class ContractionRun(NamedTuple):
    pre: Array  # (instances,)
    ft: Array
    reg: Array
    learning_rate: Array
    x: Array  # (steps + 1, instances): the iterates x_k, x_0 = √σ^pre


def simulate_contraction(key: PRNGKey, setting: ContractionSetting) -> ContractionRun:
    """Iterate the corrected per-mode map (:func:`mode_trajectory`) on random scalars."""
    check_setting_type("simulate_contraction", setting, ContractionSetting)
    check_key("simulate_contraction", key)
    k_p, k_f, k_r = jax.random.split(key, 3)
    count = setting.instances
    pre = jax.random.uniform(k_p, (count,), minval=0.05, maxval=3.0)
    ft = jax.random.uniform(k_f, (count,), minval=0.05, maxval=3.0)
    reg = jax.random.uniform(k_r, (count,), minval=0.0, maxval=3.0)
    big = 2 * jnp.maximum(pre, ft) + reg + reg * jnp.sqrt(pre / ft)
    eta = 0.95 / ((reg + 2) * big)
    x = mode_trajectory(pre, ft, learning_rate=eta, reg=reg, num_steps=setting.steps)
    return ContractionRun(pre, ft, reg, eta, x)


@dataclass(frozen=True)
class MinibatchGradientSetting:
    """Two minibatch steps (batch ``batch``) from a random ideal checkpoint ``n ≥ 1``: the
    second step is the first where ``θ ≠ θ0``, so the proximal term ``λ(θ − θ0)`` acts."""

    d: int = 4
    instances: int = 200
    batch: int = 8

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "batch"))


class MinibatchGradientRun(NamedTuple):
    """Per instance, against GD by ``jax.grad`` of the minibatch loss of eq. (9).

    ``gradient``: two :func:`finetune` steps, ``max |W − W_ref|`` over both factors over the
    largest entry of the reference's total move ``W_ref − W(0)``. ``printed``: one step with
    ``eq11="printed"``, ``max |W2' − (W2 − η∂L/∂W2)| / (η max|∂L/∂W2|)``. ``commutator``:
    what ``printed`` must be if the printed update differs from the gradient step exactly by
    ``2ηW1ᵀ(Σ_k(θ − A) − (θ − A)Σ_k)``, in the same units.
    """

    gradient: Array  # (instances,) eq11="gradient", two steps
    printed: Array  # (instances,) eq11="printed", one step
    commutator: Array  # (instances,) max |2W1ᵀ[Σ_k, θ − A]| / max |∂L/∂W2|


def simulate_minibatch_gradient(
    key: PRNGKey, setting: MinibatchGradientSetting
) -> MinibatchGradientRun:
    """:func:`finetune` against ``jax.grad`` of eq. (9) on the same batches (run's doc)."""
    check_setting_type("simulate_minibatch_gradient", setting, MinibatchGradientSetting)
    check_key("simulate_minibatch_gradient", key)
    d, batch = setting.d, setting.batch

    def one(k):
        k_s, k_uv, k_r, k_n, k_b = jax.random.split(k, 5)
        pre, ft = _spectra(k_s, d, 0.2, 0.1)
        u, v = haar_pair(k_uv, d)
        reg = jax.random.uniform(k_r, minval=0.0, maxval=3.0)
        n = jax.random.randint(k_n, (), 1, d + 1)
        eta, _ = a8_learning_rate(pre, ft, reg)
        w1, w2 = ideal_checkpoint(pre, n, u, v)
        a_ft, anchor = task_matrix(ft, u, v), w1 @ w2

        def loss(w, x):  # eq. (9) on one batch: Tr((θ − A)ᵀ(θ − A)Σ_k) + λ‖θ − θ0‖²
            theta = w[0] @ w[1]
            fit = jnp.mean(jnp.sum(((theta - a_ft) @ x.T) ** 2, axis=0))
            return fit + reg * jnp.sum((theta - anchor) ** 2)

        def batch_of(kk):  # finetune's batch drawn from its step key
            return jax.random.normal(kk, (batch, d))

        reference = (w1, w2)
        for kk in jax.random.split(k_b, 2):  # finetune's step keys for two steps
            g = jax.grad(loss)(reference, batch_of(kk))
            reference = tuple(w - eta * gw for w, gw in zip(reference, g, strict=True))
        two = finetune(w1, w2, a_ft, learning_rate=eta, reg=reg, num_steps=2,
                       batch_size=batch, key=k_b)  # fmt: skip
        pairs = zip(reference, (w1, w2), strict=True)
        moved = jnp.maximum(*(jnp.max(jnp.abs(r - w)) for r, w in pairs))
        pairs = zip((two.w1, two.w2), reference, strict=True)
        off = jnp.maximum(*(jnp.max(jnp.abs(a - b)) for a, b in pairs))

        x = batch_of(jax.random.split(k_b, 1)[0])
        g2 = jax.grad(loss)((w1, w2), x)[1]
        one_step = finetune(w1, w2, a_ft, learning_rate=eta, reg=reg, num_steps=1,
                            batch_size=batch, key=k_b, eq11="printed")  # fmt: skip
        scale = jnp.max(jnp.abs(g2))
        printed = jnp.max(jnp.abs(one_step.w2 - (w2 - eta * g2))) / (eta * scale)
        cov, resid = x.T @ x / batch, anchor - a_ft
        commutator = jnp.max(jnp.abs(2 * w1.T @ (cov @ resid - resid @ cov))) / scale
        return off / moved, printed, commutator

    return MinibatchGradientRun(*jax.vmap(one)(jax.random.split(key, setting.instances)))


FIXED_POINT_SETTINGS = {
    "quick": FixedPointSetting(d=4, instances=100, steps=3000),
    "full": FixedPointSetting(d=10, instances=200, steps=3000),
}
"""Converged fine-tuning from ``n = d`` per scale (Lemma A.11 claims and the experiment)."""
