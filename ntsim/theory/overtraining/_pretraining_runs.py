"""Simulations of pretraining by gradient flow that the claims and figures read (Sec 4.1, App A.1).

* :func:`simulate_aligned_flow` — gradient flow (diffrax) from the aligned init
  ``W1 = e^{−τ}U, W2 = e^{−τ}Vᵀ`` on random instances, saved where each mode is 1%, 50% and
  99% learned (the per-mode logistic closed form is what it is held against);
* :func:`simulate_real_checkpoints` — gradient flow from the paper's init
  ``W1 = W2 = e^{−τ}I`` with Haar ``U ≠ V`` and the *real* checkpoints ``θ(t_n)`` closest to
  the ideal products ``UΣ^pre_{:n}Vᵀ`` (Thm 4.1 / A.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.theory.overtraining._instances import (
    haar_pair,
    ideal_checkpoints,
    procrustes_distance,
    random_geometric_spectrum,
    sorted_uniform,
)
from ntsim.theory.overtraining._perturbation import expected_perturbed_loss
from ntsim.theory.overtraining._pretraining import (
    aligned_init,
    checkpoint_times,
    closest_checkpoints,
    identity_init,
    mode_matrix,
    pretrain_gradient_flow,
    pretraining_loss,
    task_matrix,
)

__all__ = [
    "ALIGNED_FLOW_SETTINGS",
    "REAL_CHECKPOINT_SETTINGS",
    "REAL_VS_IDEAL_GAP_SETTINGS",
    "AlignedFlowRun",
    "AlignedFlowSetting",
    "RealCheckpointRun",
    "RealCheckpointSetting",
    "simulate_aligned_flow",
    "RealVsIdealGapRun",
    "RealVsIdealGapSetting",
    "simulate_real_checkpoints",
    "simulate_real_vs_ideal_gap",
]


def _tau_range(where, tau):
    if not (len(tau) == 2 and 0 < tau[0] <= tau[1]):
        raise ValueError(f"{where}: tau must be (low, high) with 0 < low <= high, got {tau}.")


@dataclass(frozen=True)
class AlignedFlowSetting:
    """Aligned-init gradient flow on random instances (sizes the paper leaves open are ours).

    ``σ^pre ~`` sorted ``U[0.2, 4]``, Haar ``U, V``, ``τ ~ U[tau]``; Tsit5 at ``rtol``/``atol``.
    """

    d: int = 4
    instances: int = 200
    tau: tuple[float, float] = (3.0, 8.0)
    rtol: float = 1e-10
    atol: float = 1e-12

    def __post_init__(self):
        check_int_fields(self, ("d", "instances"))
        _tau_range("AlignedFlowSetting", self.tau)


class AlignedFlowRun(NamedTuple):
    """Per instance: the spectrum, ``τ``, the save times and ``UᵀθV`` at each of them."""

    spectrum: Array  # (instances, d)
    tau: Array  # (instances,)
    times: Array  # (instances, 3d + 1): 0 and where each mode is 1%, 50%, 99% learned
    modes: Array  # (instances, 3d + 1, d, d): UᵀW1W2V from the ODE solver


def simulate_aligned_flow(key: PRNGKey, setting: AlignedFlowSetting) -> AlignedFlowRun:
    """Gradient flow of eqs. 5–6 from ``W1 = e^{−τ}U, W2 = e^{−τ}Vᵀ`` (diffrax, Tsit5)."""
    check_setting_type("simulate_aligned_flow", setting, AlignedFlowSetting)
    check_key("simulate_aligned_flow", key)
    d = setting.d

    def one(k):
        k_s, k_uv, k_tau = jax.random.split(k, 3)
        spectrum = sorted_uniform(k_s, d, 0.2, 4.0)
        u, v = haar_pair(k_uv, d)
        tau = jax.random.uniform(k_tau, minval=setting.tau[0], maxval=setting.tau[1])
        times = jnp.concatenate(
            [checkpoint_times(spectrum, tau, factor=c) for c in (1 / 99, 1.0, 99.0)]
        )
        # a mode that starts above 1% of σ_i (small τ, small σ_i) has its 1% time before 0:
        # move such times to distinct instants just after 0 (the solver needs increasing times)
        times = jnp.maximum(times, 1e-6 * (1.0 + jnp.arange(times.shape[0])))
        times = jnp.concatenate([jnp.zeros(1), jnp.sort(times)])
        w1, w2 = pretrain_gradient_flow(
            task_matrix(spectrum, u, v), aligned_init(u, v, tau), times,
            rtol=setting.rtol, atol=setting.atol,
        )  # fmt: skip
        return spectrum, tau, times, jax.vmap(mode_matrix, in_axes=(0, None, None))(w1 @ w2, u, v)

    return AlignedFlowRun(*jax.vmap(one)(jax.random.split(key, setting.instances)))


@dataclass(frozen=True)
class RealCheckpointSetting:
    """Gradient flow from ``W1 = W2 = e^{−τ}I`` (the paper's small init) on random instances.

    ``σ_i = σ_1 r^{i−1}`` with ``σ_1 ~ U[2, 4]`` and ``r ~ U[ratios]``, Haar ``U, V``,
    ``τ ~ U[tau]``. The flow is saved on ``points`` log-spaced times from ``0.02·t_1`` to
    ``3·t_d`` (``t_n`` of the aligned init, which the identity init reaches later: with
    ``3·t_d`` every mode has risen in all instances drawn). The flow is stiff: it runs to
    ``≈ 3·(2τ)/(4σ_d)`` with steps ``≲ 1/σ_1``, so ``≈ r^{1−d}`` steps; at ``d = 10``,
    ``r ≥ 0.55`` keeps that below ~1e4.
    """

    d: int = 4
    instances: int = 16
    tau: tuple[float, float] = (15.0, 16.0)
    points: int = 160
    ratios: tuple[float, float] = (0.45, 0.6)

    def __post_init__(self):
        check_int_fields(self, ("d", "instances"))
        check_int_fields(self, ("points",), minimum=2)
        _tau_range("RealCheckpointSetting", self.tau)
        if not 0 < self.ratios[0] <= self.ratios[1] < 1:
            raise ValueError(f"RealCheckpointSetting: need 0 < ratios < 1, got {self.ratios}.")


class RealCheckpointRun(NamedTuple):
    """Per instance: the task, ``τ``, and the real checkpoints ``n = 0..d``."""

    spectrum: Array  # (instances, d)
    u: Array  # (instances, d, d)
    v: Array  # (instances, d, d)
    tau: Array  # (instances,)
    w1: Array  # (instances, d + 1, d, d): W1(t_n)
    w2: Array  # (instances, d + 1, d, d): W2(t_n)
    index: Array  # (instances, d + 1): grid index of t_n
    max_loss_increase: Array  # (instances,): largest rise of L_pre between saved times


def simulate_real_checkpoints(key: PRNGKey, setting: RealCheckpointSetting) -> RealCheckpointRun:
    """Gradient flow from ``e^{−τ}I`` and its checkpoints nearest to ``UΣ^pre_{:n}Vᵀ``
    (:func:`~ntsim.theory.overtraining.closest_checkpoints`), ``n = 0..d``."""
    check_setting_type("simulate_real_checkpoints", setting, RealCheckpointSetting)
    check_key("simulate_real_checkpoints", key)
    d = setting.d

    def one(k):
        k_s, k_uv, k_tau = jax.random.split(k, 3)
        spectrum = random_geometric_spectrum(k_s, d, setting.ratios)
        u, v = haar_pair(k_uv, d)
        tau = jax.random.uniform(k_tau, minval=setting.tau[0], maxval=setting.tau[1])
        return spectrum, u, v, tau, *_real_checkpoints(spectrum, u, v, tau, setting.points)

    return RealCheckpointRun(*jax.vmap(one)(jax.random.split(key, setting.instances)))


def _real_checkpoints(spectrum, u, v, tau, points):
    d = spectrum.shape[0]
    times = checkpoint_times(spectrum, tau)
    grid = jnp.exp(jnp.linspace(jnp.log(0.02 * times[0]), jnp.log(3.0 * times[-1]), points))
    a_pre = task_matrix(spectrum, u, v)
    w1, w2 = pretrain_gradient_flow(a_pre, identity_init(d, tau), grid)
    index, _ = closest_checkpoints(w1 @ w2, spectrum, u, v)
    losses = jax.vmap(pretraining_loss, in_axes=(0, 0, None))(w1, w2, a_pre)
    return w1[index], w2[index], index, jnp.max(jnp.diff(losses))


@dataclass(frozen=True)
class RealVsIdealGapSetting:
    """Perturbed losses of real vs ideal checkpoints at several init scales (Lemma A.6).

    Instances as in :class:`RealCheckpointSetting`; each is pretrained once per ``τ`` in
    ``taus`` (increasing) and its real checkpoints are perturbed with each γ in ``gammas``.
    """

    d: int = 4
    instances: int = 16
    taus: tuple[float, ...] = (8.0, 12.0, 16.0)
    gammas: tuple[float, ...] = (0.02, 0.05, 0.1)
    points: int = 160
    ratios: tuple[float, float] = (0.45, 0.6)

    def __post_init__(self):
        check_int_fields(self, ("d", "instances"))
        check_int_fields(self, ("points",), minimum=2)
        if len(self.taus) < 2 or any(
            b <= a for a, b in zip(self.taus, self.taus[1:], strict=False)
        ):
            raise ValueError(f"RealVsIdealGapSetting: taus must increase, got {self.taus}.")
        if not self.gammas or min(self.gammas) <= 0:
            raise ValueError(f"RealVsIdealGapSetting: gammas must be positive, got {self.gammas}.")
        if not 0 < self.ratios[0] <= self.ratios[1] < 1:
            raise ValueError(f"RealVsIdealGapSetting: need 0 < ratios < 1, got {self.ratios}.")


class RealVsIdealGapRun(NamedTuple):
    """Per instance, ``τ``, γ and checkpoint ``n = 0..d``."""

    spectrum: Array  # (instances, d)
    taus: Array  # (τ,)
    gammas: Array  # (γ,)
    gaps: Array  # (instances, τ, γ, d + 1): |L̃(θ^n) − L̃(θ̄^n)|
    distance: Array  # (instances, τ, d + 1): factor distance up to a hidden-layer rotation


def simulate_real_vs_ideal_gap(key: PRNGKey, setting: RealVsIdealGapSetting) -> RealVsIdealGapRun:
    """``|L̃(θ^n(0)) − L̃(θ̄^n(0))|`` (:func:`expected_perturbed_loss` of the real and the
    ideal checkpoint) and ``min_Q max(‖W1Q − W̄1‖, ‖QᵀW2 − W̄2‖)`` — the distance Thm A.1
    bounds, up to the rotation that leaves ``L̃`` unchanged — for every ``τ`` and ``n``."""
    check_setting_type("simulate_real_vs_ideal_gap", setting, RealVsIdealGapSetting)
    check_key("simulate_real_vs_ideal_gap", key)
    d = setting.d
    taus, gammas = jnp.asarray(setting.taus), jnp.asarray(setting.gammas)

    def one(k):
        k_s, k_uv = jax.random.split(k)
        spectrum = random_geometric_spectrum(k_s, d, setting.ratios)
        u, v = haar_pair(k_uv, d)
        a_pre = task_matrix(spectrum, u, v)
        w1_bar, w2_bar = ideal_checkpoints(spectrum, u, v)
        per_n = jax.vmap(expected_perturbed_loss, in_axes=(0, 0, None, None))

        def at(tau):
            w1, w2, _, _ = _real_checkpoints(spectrum, u, v, tau, setting.points)
            gaps = jax.vmap(
                lambda g: jnp.abs(per_n(w1, w2, a_pre, g) - per_n(w1_bar, w2_bar, a_pre, g))
            )(gammas)
            return gaps, jax.vmap(procrustes_distance)(w1, w2, w1_bar, w2_bar)

        gaps, distance = jax.vmap(at)(taus)
        return spectrum, gaps, distance

    spectrum, gaps, distance = jax.vmap(one)(jax.random.split(key, setting.instances))
    return RealVsIdealGapRun(spectrum, taus, gammas, gaps, distance)


REAL_CHECKPOINT_SETTINGS = {
    "quick": RealCheckpointSetting(
        d=4, instances=16, tau=(15.0, 16.0), points=160, ratios=(0.45, 0.6)
    ),
    "full": RealCheckpointSetting(
        d=10, instances=200, tau=(20.0, 21.0), points=400, ratios=(0.55, 0.65)
    ),
}
"""Real checkpoints per scale (Thm 4.1 claim and the experiment both read these)."""
ALIGNED_FLOW_SETTINGS = {
    "quick": AlignedFlowSetting(d=4, instances=200, tau=(3.0, 8.0)),
    "full": AlignedFlowSetting(d=10, instances=200, tau=(3.0, 12.0)),
}
"""Aligned-init flows per scale (the logistic closed-form claim and the experiment)."""
REAL_VS_IDEAL_GAP_SETTINGS = {
    "quick": RealVsIdealGapSetting(d=4, instances=16, taus=(8.0, 12.0, 16.0)),
    "full": RealVsIdealGapSetting(
        d=10, instances=200, taus=(10.0, 18.0, 26.0), points=400, ratios=(0.55, 0.65)
    ),
}
"""Real vs ideal perturbed checkpoints per scale (Lemma A.6 claims and the experiment)."""
