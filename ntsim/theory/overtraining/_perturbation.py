"""Gaussian parameter perturbation and sharpness (Springer et al. 2025, Sec 4.2, App A.2, App D).

``θ̃ = (W1 + Z1)(W2 + Z2)`` with ``Z1, Z2`` i.i.d. ``N(0, γ²)`` entries; ``L̃_pre = E L_pre(θ̃)``
(eq. 13). Checkpoints are indexed ``n = 0..d`` (``n`` features learned; ``n = 0`` is the
zero model the small init approximates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import (
    check_int_fields,
    check_key,
    check_ndim,
    check_nonnegative,
    check_positive_int,
    check_setting_type,
)
from ntsim.theory.overtraining._instances import haar_pair, ideal_checkpoints, sorted_uniform
from ntsim.theory.overtraining._pretraining import ideal_checkpoint, task_matrix

__all__ = [
    "HESSIAN_TRACE_SETTINGS",
    "IDEAL_PERTURBATION_SETTINGS",
    "MONTE_CARLO_SETTINGS",
    "HessianTraceRun",
    "HessianTraceSetting",
    "IdealPerturbationRun",
    "IdealPerturbationSetting",
    "PerturbedLossMonteCarloRun",
    "PerturbedLossMonteCarloSetting",
    "simulate_hessian_traces",
    "simulate_ideal_perturbation",
    "simulate_perturbed_loss_monte_carlo",
    "assumption_a2_bound",
    "expected_perturbed_loss",
    "gaussian_inflection",
    "hessian_trace",
    "ideal_hessian_traces",
    "ideal_perturbed_losses",
    "inflection_point",
    "lemma_a6_gap_bound",
    "monte_carlo_perturbed_loss",
    "perturbed_increments",
]


def _square(where: str, name: str, w) -> Array:
    w = jnp.asarray(w)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"{where}: {name} must be a square (d, d) matrix, got shape {w.shape}.")
    return w


def expected_perturbed_loss(w1: ArrayLike, w2: ArrayLike, a: ArrayLike, gamma: ArrayLike) -> Array:
    r"""Exact ``E‖(W1 + Z1)(W2 + Z2) − A‖_F²`` for any ``W1, W2`` (proof of Lemma A.6, via A.5).

    .. math:: \|W_1W_2 - A\|_F^2 + d\gamma^2(\|W_1\|_F^2 + \|W_2\|_F^2) + d^3\gamma^4

    (cross terms have mean 0; ``E‖Z1 M‖² = dγ²‖M‖²`` is Lemma A.5; ``E‖Z1Z2‖² = d³γ⁴``).
    The middle term equals ``½γ² Tr∇²L_pre`` (:func:`hessian_trace`, Prop D.1); the last is
    the non-quadratic part.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(expected_perturbed_loss(jnp.eye(2), jnp.eye(2), jnp.eye(2), 0.5))
      2.5
    """
    w1 = _square("expected_perturbed_loss", "w1", w1)
    w2 = _square("expected_perturbed_loss", "w2", w2)
    check_nonnegative("expected_perturbed_loss", "gamma", gamma)
    d = w1.shape[0]
    g2 = jnp.square(jnp.asarray(gamma, dtype=w1.dtype))
    base = jnp.sum(jnp.square(w1 @ w2 - jnp.asarray(a)))
    return base + d * g2 * (jnp.sum(w1**2) + jnp.sum(w2**2)) + d**3 * g2**2


def monte_carlo_perturbed_loss(
    key: PRNGKey,
    w1: ArrayLike,
    w2: ArrayLike,
    a: ArrayLike,
    gamma: ArrayLike,
    *,
    num_samples: int,
) -> tuple[Array, Array]:
    """Monte Carlo ``E L_pre((W1 + Z1)(W2 + Z2))`` over ``num_samples`` draws: ``(mean, s.e.)``.

    The independent oracle for :func:`expected_perturbed_loss` (eq. 13 sampled directly).
    """
    w1 = _square("monte_carlo_perturbed_loss", "w1", w1)
    w2 = _square("monte_carlo_perturbed_loss", "w2", w2)
    num_samples = check_positive_int("monte_carlo_perturbed_loss", "num_samples", num_samples)
    if num_samples < 2:
        raise ValueError("monte_carlo_perturbed_loss: num_samples must be >= 2 for a s.e.")

    def one(k):
        k1, k2 = jax.random.split(k)
        z1 = gamma * jax.random.normal(k1, w1.shape, w1.dtype)
        z2 = gamma * jax.random.normal(k2, w2.shape, w2.dtype)
        return jnp.sum(jnp.square((w1 + z1) @ (w2 + z2) - a))

    losses = jax.vmap(one)(jax.random.split(key, num_samples))
    return losses.mean(), losses.std(ddof=1) / jnp.sqrt(num_samples)


def ideal_perturbed_losses(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    r"""``L̃_pre(n)`` at the ideal checkpoints ``n = 0..d`` (from Lemma A.4).

    .. math:: \tilde L(n) = \sum_{i>n}\sigma_i^2 + 2d\gamma^2\sum_{i\le n}\sigma_i + d^3\gamma^4

    Examples:
      >>> import jax.numpy as jnp
      >>> ideal_perturbed_losses(jnp.array([2.0, 1.0]), 0.5).tolist()  # 2dγ² = 1 = σ_2
      [5.5, 3.5, 3.5]
    """
    spectrum = jnp.asarray(spectrum)
    check_ndim("ideal_perturbed_losses", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    g2 = jnp.square(jnp.asarray(gamma, dtype=spectrum.dtype))
    zero = jnp.zeros((1,), spectrum.dtype)
    learned = jnp.concatenate([zero, jnp.cumsum(spectrum)])
    tail = jnp.concatenate([jnp.cumsum(spectrum[::-1] ** 2)[::-1], zero])
    return tail + 2 * d * g2 * learned + d**3 * g2**2


def perturbed_increments(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    """``L̃(n) − L̃(n−1) = (2dγ² − σ_n)σ_n``, ``n = 1..d`` (Prop 4.3 / Lemma A.4).

    The paper states ``≥``; at the ideal checkpoints it is an equality.
    """
    spectrum = jnp.asarray(spectrum)
    check_ndim("perturbed_increments", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    return (2 * d * jnp.square(jnp.asarray(gamma, spectrum.dtype)) - spectrum) * spectrum


def inflection_point(losses: ArrayLike) -> Array:
    """Definition 4.2: the smallest ``r`` with ``L(r) < L(r + 1)``; ``len − 1`` if there is none.

    ``losses[n]`` is the loss after the modification of checkpoint ``n`` (``n = 0..d``).
    Works on the last axis and under ``jit``/``vmap``.

    Examples:
      >>> import jax.numpy as jnp
      >>> int(inflection_point(jnp.array([5.0, 3.0, 4.0, 6.0]))), int(inflection_point(jnp.ones(3)))
      (1, 2)
    """
    losses = jnp.asarray(losses)
    if losses.ndim == 0 or losses.shape[-1] == 0:
        raise ValueError(
            "inflection_point: losses must hold at least one loss on its last axis "
            f"(one per checkpoint n = 0..d), got shape {losses.shape}."
        )
    up = losses[..., 1:] > losses[..., :-1]
    last = losses.shape[-1] - 1
    return jnp.where(jnp.any(up, axis=-1), jnp.argmax(up, axis=-1), last)


def gaussian_inflection(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    """Predicted inflection (Thm 4.4 with Prop 4.3): ``min{n : 2dγ² > σ_n} − 1``; ``d`` if none.

    Examples:
      >>> import jax.numpy as jnp
      >>> int(gaussian_inflection(jnp.array([4.0, 2.0, 1.0]), 0.5))  # 2dγ² = 1.5
      2
    """
    spectrum = jnp.asarray(spectrum)
    d = spectrum.shape[0]
    above = 2 * d * jnp.square(jnp.asarray(gamma, spectrum.dtype)) > spectrum
    return jnp.where(jnp.any(above), jnp.argmax(above), d)


def assumption_a2_bound(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    """Right side of Assumption A.2: ``exp(−Cτ)`` must be below this.

    ``min{σ_1/2, 1/4, σ_d² / (16 d σ_1 (2σ_1 + γ²))}``. ``C`` is not given by the paper, so
    the assumption cannot be checked directly; :func:`lemma_a6_gap_bound` is what it buys.
    """
    s = jnp.asarray(spectrum)
    d = s.shape[0]
    g2 = jnp.square(jnp.asarray(gamma, s.dtype))
    return jnp.minimum(jnp.minimum(s[0] / 2, 0.25), s[-1] ** 2 / (16 * d * s[0] * (2 * s[0] + g2)))


def lemma_a6_gap_bound(spectrum: ArrayLike) -> Array:
    """Lemma A.6: ``|L̃(θ^n(0)) − L̃(θ̄^n(0))| ≤ σ_d²/2`` (real vs ideal checkpoint, under A.2)."""
    s = jnp.asarray(spectrum)
    return s[-1] ** 2 / 2


def hessian_trace(w1: ArrayLike, w2: ArrayLike) -> Array:
    """``Tr ∇²_{W1,W2} ‖W1W2 − A‖² = 2d(‖W1‖_F² + ‖W2‖_F²)`` (derived here; any ``A``).

    The Hessian block in ``W1`` is ``2(W2W2ᵀ ⊗ I_d)`` (trace ``2d‖W2‖²``), in ``W2`` it is
    ``2(I_d ⊗ W1ᵀW1)`` (trace ``2d‖W1‖²``). With Prop D.1, ``½γ² Tr H`` is the quadratic part
    of the Gaussian sensitivity (:func:`expected_perturbed_loss`).

    Examples:
      >>> import jax.numpy as jnp
      >>> float(hessian_trace(jnp.eye(3), 2 * jnp.eye(3)))
      90.0
    """
    w1 = _square("hessian_trace", "w1", w1)
    w2 = _square("hessian_trace", "w2", w2)
    return 2 * w1.shape[0] * (jnp.sum(w1**2) + jnp.sum(w2**2))


def ideal_hessian_traces(spectrum: ArrayLike) -> Array:
    """``Tr H = 4d Σ_{i≤n} σ_i`` at the ideal checkpoints ``n = 0..d`` ("progressive sharpening").

    Examples:
      >>> import jax.numpy as jnp
      >>> ideal_hessian_traces(jnp.array([2.0, 1.0])).tolist()
      [0.0, 16.0, 24.0]
    """
    spectrum = jnp.asarray(spectrum)
    check_ndim("ideal_hessian_traces", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    return 4 * d * jnp.concatenate([jnp.zeros((1,), spectrum.dtype), jnp.cumsum(spectrum)])


# ------------------------------------------------------------------ simulations the claims read


def _random_factors(key, d):
    """Gaussian ``W1, W2, A`` (entries ``N(0, 1/d)``) and ``γ ~ U[0.05, 0.5]/√d``."""
    k1, k2, k3, k_g = jax.random.split(key, 4)
    w1, w2, a = (jax.random.normal(k, (d, d)) / jnp.sqrt(d) for k in (k1, k2, k3))
    gamma = jax.random.uniform(k_g, minval=0.05, maxval=0.5) / jnp.sqrt(d)
    return w1, w2, a, gamma


@dataclass(frozen=True)
class PerturbedLossMonteCarloSetting:
    """Exact expected Gaussian-perturbed loss vs Monte Carlo at random factors (Lemma A.5).

    ``W1, W2, A`` have ``N(0, 1/d)`` entries and ``γ ~ U[0.05, 0.5]/√d`` per instance (sizes
    the paper leaves open are ours).
    """

    d: int = 4
    instances: int = 200
    samples: int = 4000  # draws of (Z1, Z2) per instance

    def __post_init__(self):
        check_int_fields(self, ("d", "instances"))
        check_int_fields(self, ("samples",), minimum=2)


class PerturbedLossMonteCarloRun(NamedTuple):
    """Per instance: the closed form of eq. (13) and its Monte Carlo mean and s.e."""

    exact: Array  # (instances,) expected_perturbed_loss(W1, W2, A, γ)
    mc_mean: Array  # (instances,)
    mc_se: Array  # (instances,)


def simulate_perturbed_loss_monte_carlo(
    key: PRNGKey, setting: PerturbedLossMonteCarloSetting
) -> PerturbedLossMonteCarloRun:
    """Draw ``setting.instances`` random ``(W1, W2, A, γ)``; closed form and Monte Carlo of
    ``E‖(W1+Z1)(W2+Z2) − A‖²`` (:func:`expected_perturbed_loss`,
    :func:`monte_carlo_perturbed_loss`) for each."""
    check_setting_type(
        "simulate_perturbed_loss_monte_carlo", setting, PerturbedLossMonteCarloSetting
    )
    check_key("simulate_perturbed_loss_monte_carlo", key)
    d, samples = setting.d, setting.samples

    def one(k):
        k_inst, k_mc = jax.random.split(k)
        w1, w2, a, gamma = _random_factors(k_inst, d)
        exact = expected_perturbed_loss(w1, w2, a, gamma)
        mean, se = monte_carlo_perturbed_loss(k_mc, w1, w2, a, gamma, num_samples=samples)
        return exact, mean, se

    keys = jax.random.split(key, setting.instances)
    return PerturbedLossMonteCarloRun(*jax.lax.map(jax.jit(one), keys))


@dataclass(frozen=True)
class IdealPerturbationSetting:
    """Perturbed losses of the ideal checkpoints, computed from their matrices (Sec 4.2).

    Per instance: ``σ^pre ~`` sorted ``U[low, high]``, Haar ``U, V``, and ``gammas`` noise
    levels with ``2dγ²`` log-uniform in ``[σ_d/3, 3σ_1]`` (so the inflection falls anywhere
    in ``0..d``, including "none").
    """

    d: int = 6
    instances: int = 200
    gammas: int = 16
    low: float = 0.05
    high: float = 4.0

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "gammas"))
        if not 0 < self.low < self.high:
            raise ValueError(f"IdealPerturbationSetting: need 0 < low < high, got {self}.")


class IdealPerturbationRun(NamedTuple):
    """``losses[i, j, n]`` is ``E L_pre`` of the ideal checkpoint ``n`` perturbed with
    ``gammas[i, j]``, from the checkpoint's matrices (:func:`expected_perturbed_loss`)."""

    spectrum: Array  # (instances, d), decreasing
    gammas: Array  # (instances, gammas), increasing
    losses: Array  # (instances, gammas, d + 1)


def simulate_ideal_perturbation(
    key: PRNGKey, setting: IdealPerturbationSetting
) -> IdealPerturbationRun:
    """Random spectra and Haar ``U, V``; the perturbed loss of every ideal checkpoint
    ``W̄1 W̄2 = U_{:n}Σ_{:n}V_{:n}ᵀ`` (eqs. 7–8) for each γ, by the matrix route.

    The spectral closed form (:func:`ideal_perturbed_losses`) is what the claims hold this
    against; the matrices are built from the singular vectors, so the two routes share only
    :func:`expected_perturbed_loss`.
    """
    check_setting_type("simulate_ideal_perturbation", setting, IdealPerturbationSetting)
    check_key("simulate_ideal_perturbation", key)
    d = setting.d

    def one(k):
        k_s, k_uv, k_g = jax.random.split(k, 3)
        spectrum = sorted_uniform(k_s, d, setting.low, setting.high)
        u, v = haar_pair(k_uv, d)
        lo, hi = jnp.log(spectrum[-1] / 3), jnp.log(3 * spectrum[0])
        level = jnp.exp(lo + (hi - lo) * jax.random.uniform(k_g, (setting.gammas,)))
        gammas = jnp.sort(jnp.sqrt(level / (2 * d)))
        a_pre = task_matrix(spectrum, u, v)
        w1s, w2s = ideal_checkpoints(spectrum, u, v)
        per_n = jax.vmap(expected_perturbed_loss, in_axes=(0, 0, None, None))
        losses = jax.vmap(lambda g: per_n(w1s, w2s, a_pre, g))(gammas)
        return spectrum, gammas, losses

    return IdealPerturbationRun(*jax.vmap(one)(jax.random.split(key, setting.instances)))


@dataclass(frozen=True)
class HessianTraceSetting:
    """Hessian traces by autodiff at random factors and at random ideal checkpoints (App D)."""

    d: int = 4
    instances: int = 200
    low: float = 0.05  # σ^pre ~ sorted U[low, high]
    high: float = 4.0

    def __post_init__(self):
        check_int_fields(self, ("d", "instances"))


class HessianTraceRun(NamedTuple):
    """Per instance: random factors ``(W1, W2, A, γ)``, a random ideal checkpoint ``n`` of a
    random spectrum, and ``Tr jax.hessian(‖W1W2 − A‖²)`` at both."""

    w1: Array  # (instances, d, d)
    w2: Array
    a: Array
    gamma: Array  # (instances,)
    spectrum: Array  # (instances, d)
    n: Array  # (instances,) int
    trace_random: Array  # (instances,) autodiff trace at (W1, W2, A)
    trace_ideal: Array  # (instances,) autodiff trace at the ideal checkpoint n


def simulate_hessian_traces(key: PRNGKey, setting: HessianTraceSetting) -> HessianTraceRun:
    """``Tr ∇²‖W1W2 − A‖²`` by ``jax.hessian`` (a ``2d² × 2d²`` matrix) at random
    ``(W1, W2, A)`` and at a random ideal checkpoint; the identity it is held against is
    :func:`hessian_trace` / :func:`ideal_hessian_traces`."""
    check_setting_type("simulate_hessian_traces", setting, HessianTraceSetting)
    check_key("simulate_hessian_traces", key)
    d = setting.d

    def trace(w1, w2, a):
        def loss(p):
            w1_, w2_ = p[: d * d].reshape(d, d), p[d * d :].reshape(d, d)
            return jnp.sum(jnp.square(w1_ @ w2_ - a))

        return jnp.trace(jax.hessian(loss)(jnp.concatenate([w1.ravel(), w2.ravel()])))

    def one(k):
        k_f, k_s, k_uv, k_n = jax.random.split(k, 4)
        w1, w2, a, gamma = _random_factors(k_f, d)
        spectrum = sorted_uniform(k_s, d, setting.low, setting.high)
        u, v = haar_pair(k_uv, d)
        n = jax.random.randint(k_n, (), 0, d + 1)
        w1_bar, w2_bar = ideal_checkpoint(spectrum, n, u, v)
        ideal = trace(w1_bar, w2_bar, task_matrix(spectrum, u, v))
        return w1, w2, a, gamma, spectrum, n, trace(w1, w2, a), ideal

    keys = jax.random.split(key, setting.instances)
    return HessianTraceRun(*jax.lax.map(jax.jit(one), keys))


MONTE_CARLO_SETTINGS = {
    "quick": PerturbedLossMonteCarloSetting(d=4, instances=200, samples=4000),
    "full": PerturbedLossMonteCarloSetting(d=10, instances=200, samples=20_000),
}
"""Lemma A.5's Monte Carlo per scale (the claim and the experiment both read these)."""
IDEAL_PERTURBATION_SETTINGS = {
    "quick": IdealPerturbationSetting(d=6, instances=200, gammas=16),
    "full": IdealPerturbationSetting(d=10, instances=400, gammas=16),
}
"""Perturbed ideal checkpoints per scale (Prop 4.3, Thm 4.4 claims and the experiment)."""
HESSIAN_TRACE_SETTINGS = {
    "quick": HessianTraceSetting(d=4, instances=200),
    "full": HessianTraceSetting(d=10, instances=200),
}
"""Autodiff Hessian traces per scale (Prop D.1 claim and the experiment)."""
