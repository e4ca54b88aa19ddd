"""Simulations of the model and the pretraining loss after fine-tuning (Springer et al. 2025,
Thms 4.6, 4.7, Lemmas A.23–A.27) that the claims and the figure read.

GD on the matrices (``m = ∞`` unless stated) from every ideal checkpoint ``n = 0..d``
(:func:`~ntsim.theory.overtraining.finetune_ideal_checkpoints`). Spectra are strictly
decreasing for both tasks, as the paper assumes: with an unsorted ``σ^ft`` a learned hidden
unit ``j`` is a saddle that swaps to an unlearned mode ``i`` whenever
``σ^ft_i > σ^ft_j + λσ^pre_j`` (linearisation of eqs. 16–17), and round-off alone triggers it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.theory.overtraining._finetuning import (
    finetune,
    finetune_ideal_checkpoints,
    fixed_point,
)
from ntsim.theory.overtraining._finetuning_runs import A8_FRACTION
from ntsim.theory.overtraining._instances import haar_pair, ideal_checkpoints, sorted_uniform
from ntsim.theory.overtraining._pretraining import (
    geometric_spectrum,
    ideal_checkpoint,
    mode_matrix,
    pretraining_loss,
    task_matrix,
)
from ntsim.theory.overtraining._pretraining_runs import _real_checkpoints

__all__ = [
    "SENSITIVITY_SETTINGS",
    "THRESHOLD_SETTINGS",
    "LONG_FINETUNING_SETTINGS",
    "REGULARISATION_SETTINGS",
    "ConvergedModelRun",
    "ConvergedModelSetting",
    "LongFinetuningRun",
    "LongFinetuningSetting",
    "RegularisationRun",
    "RegularisationSetting",
    "SensitivityRun",
    "SensitivitySetting",
    "ThresholdRun",
    "ThresholdSetting",
    "a24_increment_bound",
    "simulate_converged_model",
    "simulate_long_finetuning",
    "simulate_misalignment_threshold",
    "simulate_progressive_sensitivity",
    "simulate_regularisation",
]


def _curves(pre, ft, u, v, regs, steps):
    """Post-FT (pretraining, ID) losses for each λ in ``regs``, ``(len(regs), d + 1)``, and η."""
    eta = A8_FRACTION / (4 * (jnp.max(jnp.asarray(regs)) + 2) * jnp.maximum(pre[0], ft[0]))

    def at(reg):
        _, pre_loss, id_loss = finetune_ideal_checkpoints(
            pre, ft, u, v, learning_rate=eta, reg=reg, num_steps=steps
        )
        return pre_loss, id_loss

    return jax.vmap(at)(jnp.asarray(regs)), eta


def a24_increment_bound(sigma_pre: ArrayLike, sigma_ft: ArrayLike, reg, reg0) -> Array:
    """Thm A.24's lower bound on ``Δ_pre(n) − Δ_pre(n−1)``, ``n = 1..d``:
    ``|σ^pre_n − σ^ft_n|²/(1+λ)² − 3 min_{i≤n}|σ^pre_i − σ^ft_i|²/(5(λ0+1)²)``."""
    gap2 = jnp.abs(jnp.asarray(sigma_pre) - jnp.asarray(sigma_ft)) ** 2
    return gap2 / (1 + reg) ** 2 - 3 * jax.lax.cummin(gap2) / (5 * (reg0 + 1) ** 2)


@dataclass(frozen=True)
class SensitivitySetting:
    """(α, 1)-misaligned decreasing spectra (Thm 4.6): ``σ^pre_i = σ^ft_i/(α g_i)``,
    ``g_i ≥ 1`` increasing, ``α ~ U[1.2, 3]``, ``σ^ft ~`` sorted ``U[0.3, 3]``, ``λ ~ U[0, 2]``
    (``σ^pre_1`` is free: ``σ^ft_1·U[0.5, 1.5]``)."""

    d: int = 4
    instances: int = 64
    steps: int = 400

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "steps"))


class SensitivityRun(NamedTuple):
    pre: Array  # (instances, d)
    ft: Array
    reg: Array  # (instances,)
    learning_rate: Array  # (instances,)
    delta: Array  # (instances, d + 1): Δ_pre(n) = L_pre(θ^n(K)) − L_pre(θ^n(0)), GD on matrices
    steps: int


def simulate_progressive_sensitivity(key: PRNGKey, setting: SensitivitySetting) -> SensitivityRun:
    """``Δ_pre(n)`` from GD on the matrices (``m = ∞``) from every ideal checkpoint."""
    check_setting_type("simulate_progressive_sensitivity", setting, SensitivitySetting)
    check_key("simulate_progressive_sensitivity", key)
    d = setting.d

    def one(k):
        k_f, k_a, k_g, k_uv, k_r, k_1 = jax.random.split(k, 6)
        ft = sorted_uniform(k_f, d, 0.3, 3.0)
        alpha = jax.random.uniform(k_a, minval=1.2, maxval=3.0)
        g = 1 + jnp.cumsum(jax.random.uniform(k_g, (d,), maxval=0.3))
        pre = ft / (alpha * g)
        pre = pre.at[0].set(ft[0] * jax.random.uniform(k_1, minval=0.5, maxval=1.5))
        pre = jnp.sort(pre)[::-1]
        u, v = haar_pair(k_uv, d)
        reg = jax.random.uniform(k_r, minval=0.0, maxval=2.0)
        (pre_loss, _), eta = _curves(pre, ft, u, v, (reg,), setting.steps)
        initial = jnp.concatenate([jnp.cumsum((pre**2)[::-1])[::-1], jnp.zeros(1)])
        return pre, ft, reg, eta, pre_loss[0] - initial

    out = jax.vmap(one)(jax.random.split(key, setting.instances))
    return SensitivityRun(*out, setting.steps)


@dataclass(frozen=True)
class ThresholdSetting:
    """Thm 4.7.1 at ``λ = 0``: ``σ^pre ~`` sorted ``U[0.3, 1]`` and ratios ``σ^ft/σ^pre``
    drawn sorted in ``ratio_range`` outside ``ratio_gap`` (so that the sign of each increment
    is decided well before ``K``: the mode has moved ≥ 10% past ``2σ^pre``), then ``σ^ft``
    capped to decrease strictly (``σ^ft_n ≤ 0.999σ^ft_{n−1}``), which only lowers a ratio.
    Increasing ratios against a decreasing ``σ^pre`` make the cap bind on most modes after
    the first (≈ 90% at ``d = 4``), so most ratios are set by the cap, not by the draw; a
    capped ratio may fall into ``ratio_gap``, and the claims leave those modes out."""

    d: int = 4
    instances: int = 64
    steps: int = 600
    ratio_gap: tuple[float, float] = (1.8, 2.2)
    ratio_range: tuple[float, float] = (0.3, 5.0)

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "steps"))
        lo, hi = self.ratio_gap
        low, high = self.ratio_range
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
            raise ValueError(
                "ThresholdSetting.ratio_gap must be an interval (lo, hi) with 0 < lo < hi "
                f"(the excluded band around the threshold 2), got {self.ratio_gap!r}."
            )
        if not (math.isfinite(low) and math.isfinite(high) and 0 < low <= lo and hi < high):
            raise ValueError(
                "ThresholdSetting.ratio_range must be an interval (low, high) holding ratio_gap "
                f"inside it, got {self.ratio_range!r} around {self.ratio_gap!r}."
            )


class ThresholdRun(NamedTuple):
    pre: Array  # (instances, d)
    ft: Array
    increments: Array  # (instances, d): (L_pre(θ^n(K)) − L_pre(θ^(n−1)(K)))/Γ², n = 1..d
    ratio_gap: tuple[float, float]  # the setting's excluded band of σ^ft/σ^pre
    ratio_range: tuple[float, float]  # the setting's range of the drawn σ^ft/σ^pre


def simulate_misalignment_threshold(key: PRNGKey, setting: ThresholdSetting) -> ThresholdRun:
    """Post-FT pretraining-loss increments at ``λ = 0`` (GD on the matrices, ``m = ∞``)."""
    check_setting_type("simulate_misalignment_threshold", setting, ThresholdSetting)
    check_key("simulate_misalignment_threshold", key)
    d, (lo, hi), (low, high) = setting.d, setting.ratio_gap, setting.ratio_range

    def one(k):
        k_p, k_r, k_uv = jax.random.split(k, 3)
        pre = sorted_uniform(k_p, d, 0.3, 1.0)
        raw = jnp.sort(jax.random.uniform(k_r, (d,), minval=low, maxval=high - (hi - lo)))
        ft = pre * jnp.where(raw < lo, raw, raw + (hi - lo))
        # σ^ft must decrease too (the paper's ordering), strictly (module doc): each value
        # capped at 0.999 × the capped one before it, ft_n ← min_{k ≤ n} 0.999^(n−k)·ft_k
        decay = 0.999 ** jnp.arange(d)
        ft = decay * jax.lax.cummin(ft / decay)
        u, v = haar_pair(k_uv, d)
        (pre_loss, _), _ = _curves(pre, ft, u, v, (0.0,), setting.steps)
        return pre, ft, jnp.diff(pre_loss[0]) / jnp.maximum(pre[0], ft[0]) ** 2

    pre, ft, increments = jax.vmap(one)(jax.random.split(key, setting.instances))
    return ThresholdRun(pre, ft, increments, setting.ratio_gap, setting.ratio_range)


@dataclass(frozen=True)
class RegularisationSetting:
    """Thm 4.7.2: ``σ^pre`` decays fast (``σ_1 ~ U[2, 4]``, ratio ``U[0.45, 0.65]``), ``σ^ft``
    slowly (``c ~ U[0.5, 1.5]``, ratio ``U[0.85, 0.97]``); one η (that of the largest λ)."""

    d: int = 5
    instances: int = 40
    steps: int = 1500
    regs: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "steps"))
        if list(self.regs) != sorted(set(self.regs)) or min(self.regs) < 0:
            raise ValueError(f"RegularisationSetting: regs must increase from >= 0: {self.regs}.")


class RegularisationRun(NamedTuple):
    pre: Array  # (instances, d)
    ft: Array
    regs: Array  # (λ,)
    pre_loss: Array  # (instances, λ, d + 1): post-FT L_pre(n)
    id_loss: Array  # (instances, λ): ‖θ^d(K) − A^ft‖²/Γ²
    learning_rate: Array  # (instances,): the one η of every λ (A.8's at the largest λ)


def simulate_regularisation(key: PRNGKey, setting: RegularisationSetting) -> RegularisationRun:
    """Post-FT losses from every ideal checkpoint for each λ of ``setting.regs``."""
    check_setting_type("simulate_regularisation", setting, RegularisationSetting)
    check_key("simulate_regularisation", key)
    d = setting.d

    def one(k):
        k_p, k_pr, k_f, k_fr, k_uv = jax.random.split(k, 5)
        pre = jax.random.uniform(k_p, minval=2.0, maxval=4.0) * jax.random.uniform(
            k_pr, minval=0.45, maxval=0.65
        ) ** jnp.arange(d)
        ft = jax.random.uniform(k_f, minval=0.5, maxval=1.5) * jax.random.uniform(
            k_fr, minval=0.85, maxval=0.97
        ) ** jnp.arange(d)
        u, v = haar_pair(k_uv, d)
        (pre_loss, id_loss), eta = _curves(pre, ft, u, v, setting.regs, setting.steps)
        return pre, ft, pre_loss, id_loss[:, -1] / jnp.maximum(pre[0], ft[0]) ** 2, eta

    pre, ft, pre_loss, id_loss, eta = jax.vmap(one)(jax.random.split(key, setting.instances))
    return RegularisationRun(pre, ft, jnp.asarray(setting.regs), pre_loss, id_loss, eta)


@dataclass(frozen=True)
class LongFinetuningSetting:
    """The simulation caveat: config R spectra (``σ^pre = 4·0.6^{i−1}``, ``σ^ft = 0.95^{i−1}``,
    ``d ≥ 6`` so there is an inflection), real checkpoints from ``e^{−τ}I``, ``η = 0.01``,
    ``λ = 0``, ``short`` and ``long`` steps (ηK = 1 and 30), batches of ``batch``."""

    d: int = 7
    instances: int = 8
    tau: float = 20.0
    points: int = 160
    learning_rate: float = 0.01
    short: int = 100
    long: int = 3000
    batch: int = 200

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "points", "short", "long", "batch"))


class LongFinetuningRun(NamedTuple):
    real_long: Array  # (instances, d + 1): L_pre after `long` steps from real checkpoints
    real_short: Array  # after `short` steps, m = ∞
    real_short_batch: Array  # after `short` steps, batches of `batch`
    ideal_short: Array
    ideal_long: Array
    distance: Array  # (instances,): ‖A^ft − A^pre‖²


def simulate_long_finetuning(key: PRNGKey, setting: LongFinetuningSetting) -> LongFinetuningRun:
    """Post-FT pretraining losses from real and ideal checkpoints, short and long runs."""
    check_setting_type("simulate_long_finetuning", setting, LongFinetuningSetting)
    check_key("simulate_long_finetuning", key)
    s = setting
    d = s.d

    def one(k):
        k_uv, k_b = jax.random.split(k)
        pre, ft = geometric_spectrum(d, 4.0, 0.6), geometric_spectrum(d, 1.0, 0.95)
        u, v = haar_pair(k_uv, d)
        a_pre, a_ft = task_matrix(pre, u, v), task_matrix(ft, u, v)
        w1s, w2s, _, _ = _real_checkpoints(pre, u, v, s.tau, s.points)

        def curve(w1_all, w2_all, steps, batch):
            def at(w1, w2):
                res = finetune(w1, w2, a_ft, learning_rate=s.learning_rate, num_steps=steps,
                               batch_size=batch, key=k_b)  # fmt: skip
                return pretraining_loss(res.w1, res.w2, a_pre)

            return jax.vmap(at)(w1_all, w2_all)

        ideal = jax.vmap(lambda n: ideal_checkpoint(pre, n, u, v))(jnp.arange(d + 1))
        return (
            curve(w1s, w2s, s.long, None), curve(w1s, w2s, s.short, None),
            curve(w1s, w2s, s.short, s.batch), curve(*ideal, s.short, None),
            curve(*ideal, s.long, None), jnp.sum((a_ft - a_pre) ** 2),
        )  # fmt: skip

    return LongFinetuningRun(*jax.vmap(one)(jax.random.split(key, s.instances)))


@dataclass(frozen=True)
class ConvergedModelSetting:
    """Lemma A.23 under Assumption A.21 (``m = ∞``): ``σ^pre, σ^ft ~`` sorted ``U[0.3, 3]``,
    ``λ ~ U[0, 1]``, ``λ0 = 1.01λ + 0.001``, ``ε`` at A.21's limit, η at A.8 with 20% margin,
    ``K`` = the largest over instances of A.10's ``log(100Γ/ε)/(η min σ)``; real checkpoints
    at ``τ`` (as far into the plateau as float64 gradient flow allows)."""

    d: int = 4
    instances: int = 64
    tau: float = 20.0
    points: int = 160

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "points"))


class ConvergedModelRun(NamedTuple):
    ideal: Array  # (instances, d + 1): ‖Uᵀθ^n(K)V − diag(target_{:n})‖_F from ideal checkpoints
    real: Array  # (instances, d + 1): the same from real checkpoints
    pre: Array  # (instances, d)
    ft: Array
    reg: Array  # (instances,)
    reg0: Array
    gamma: Array
    eta: Array
    eps: Array
    steps: int


def _a23_setting(key, d):
    k_p, k_f, k_uv, k_r = jax.random.split(key, 4)
    pre, ft = sorted_uniform(k_p, d, 0.3, 3.0), sorted_uniform(k_f, d, 0.3, 3.0)
    u, v = haar_pair(k_uv, d)
    reg = jax.random.uniform(k_r, minval=0.0, maxval=1.0)
    reg0 = 1.01 * reg + 1e-3  # λ < λ0 (A.21(1)); λ0 close to λ gives the strongest bound
    gamma = jnp.maximum(pre[0], jnp.max(ft))
    eps = 0.99 * jnp.min(jnp.abs(pre - ft) ** 2) / (4000 * d * (reg0 + 1) ** 2 * gamma**2)
    eta = A8_FRACTION / (4 * (reg0 + 2) * gamma)  # A.21(2)
    need = jnp.log(100 * gamma / eps) / (eta * jnp.min(jnp.minimum(pre, ft)))  # A.10
    return pre, ft, u, v, reg, reg0, gamma, eta, eps, need


def simulate_converged_model(key: PRNGKey, setting: ConvergedModelSetting) -> ConvergedModelRun:
    """Fine-tune ideal and real checkpoints for A.10's step count; distance to the target."""
    check_setting_type("simulate_converged_model", setting, ConvergedModelSetting)
    check_key("simulate_converged_model", key)
    d = setting.d
    keys = jax.random.split(key, setting.instances)
    *_, need = jax.vmap(lambda k: _a23_setting(k, d))(keys)
    steps = int(math.ceil(float(np.max(np.asarray(need)))))

    def one(k):
        pre, ft, u, v, reg, reg0, gamma, eta, eps, _ = _a23_setting(k, d)
        a_ft = task_matrix(ft, u, v)
        target = fixed_point(pre, ft, reg)

        def run(w1, w2, n):
            res = finetune(w1, w2, a_ft, learning_rate=eta, reg=reg, num_steps=steps)
            modes = mode_matrix(res.w1 @ res.w2, u, v)
            return jnp.linalg.norm(modes - jnp.diag(jnp.where(jnp.arange(d) < n, target, 0.0)))

        n_all = jnp.arange(d + 1)
        w1s, w2s, _, _ = _real_checkpoints(pre, u, v, setting.tau, setting.points)
        ideal = jax.vmap(run)(*ideal_checkpoints(pre, u, v), n_all)
        return ideal, jax.vmap(run)(w1s, w2s, n_all), pre, ft, reg, reg0, gamma, eta, eps

    return ConvergedModelRun(*jax.vmap(one)(keys), steps)


REGULARISATION_SETTINGS = {
    "quick": RegularisationSetting(d=5, instances=40, steps=1500),
    "full": RegularisationSetting(d=8, instances=200, steps=3000),
}
"""Post-fine-tuning losses per λ per scale (Thm 4.7 claims and the experiment)."""
SENSITIVITY_SETTINGS = {
    "quick": SensitivitySetting(d=4, instances=64, steps=400),
    "full": SensitivitySetting(d=10, instances=200, steps=1500),
}
"""Δ_pre(n) from the ideal checkpoints per scale (Thm 4.6 claims and the experiment)."""
THRESHOLD_SETTINGS = {
    "quick": ThresholdSetting(d=4, instances=64, steps=600),
    "full": ThresholdSetting(d=10, instances=200, steps=1500),
}
"""Post-fine-tuning increments at ``λ = 0`` per scale (Thm 4.7.1 claim and the experiment)."""
LONG_FINETUNING_SETTINGS = {
    "quick": LongFinetuningSetting(d=7, instances=8, tau=20.0, points=160),
    "full": LongFinetuningSetting(d=10, instances=200, tau=20.0, points=600),
}
"""Short and long fine-tuning from real checkpoints per scale (the caveat claim and the
experiment)."""
