r"""Random instances for the stopping-rule statements (Sun & Raskutti 2026, Secs 3.5, 6.1).

Random spectra ``λ̂_k = s·u_k·k^{−2β}`` (``β ~ U[0.3, 2]``, ``u_k ~ U[0.5, 1.5]``, scale ``s``
log-uniform on ``[1e-2, 10]``); instance keys ``split(key, instances)``. Each simulation
measures one statement of :mod:`._stopping` against an independent computation:

* :func:`simulate_rademacher_facts` — eq. (10)'s four elementary facts on a radius grid;
* :func:`simulate_critical_radius` — eq. (11)'s root: residual, minimality, monotonicity;
* :func:`simulate_c_h_rescaling` — eq. (11) with ``C_H^p`` against the rescaled unit-ball
  problem, for the printed ``p = 2`` and the corrected ``p = 1`` on the same draws;
* :func:`simulate_stopping_times` — the rule evaluated step by step against ``⌊1/(αϱ̂²)⌋``
  and ``max{t: η_t ≤ ϱ̂⁻²}``;
* :func:`simulate_optimal_stopping` — eq. (36)'s ``T̂_op`` against the integer minimiser of
  the convex ``C/(ατ) + cατ``.

Run them in float64.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import local_rademacher_complexity, stopping_time, stopping_time_constant_step
from ntsim.theory.early_stopping._stopping import (
    CORRECTED_C_H_EXPONENT,
    PRINTED_C_H_EXPONENT,
    critical_radius_coefficient,
    empirical_critical_radius,
    optimal_stopping_time,
    raskutti_stopping_time,
)

__all__ = [
    "BELOW_ROOT",
    "DRIFT_SLOPES",
    "CHRescaling",
    "CriticalRadiusRun",
    "OptimalStoppingRun",
    "SpectrumSetting",
    "StoppingTimesRun",
    "random_spectrum",
    "simulate_c_h_rescaling",
    "simulate_critical_radius",
    "simulate_optimal_stopping",
    "simulate_rademacher_facts",
    "simulate_stopping_times",
]

#: Relative step δ below the root ϱ̂ at which :func:`simulate_critical_radius` probes minimality.
BELOW_ROOT = 1e-6
#: Drift-bound slopes c of g(τ) = c·η_τ for :func:`simulate_optimal_stopping`.
DRIFT_SLOPES = (0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)


@dataclasses.dataclass(frozen=True)
class SpectrumSetting:
    """Random spectra: ``num_eigenvalues`` per instance, ``instances``; ``radii`` grid points
    (eq. (10)); ``horizon`` steps for the step-by-step rules; ``batch_size`` instances vmapped
    at once."""

    num_eigenvalues: int = 400
    instances: int = 200
    radii: int = 64
    horizon: int = 20_000
    batch_size: int = 20

    def __post_init__(self):
        check_int_fields(self, ("num_eigenvalues", "instances", "radii", "horizon", "batch_size"))


def random_spectrum(key: PRNGKey, n: int) -> Array:
    """Eigenvalues ``s·u_k·k^{−2β}`` (module doc), ``(n,)``."""
    k_beta, k_noise, k_scale = jax.random.split(key, 3)
    beta = jax.random.uniform(k_beta, minval=0.3, maxval=2.0)
    jitter = jax.random.uniform(k_noise, (n,), minval=0.5, maxval=1.5)
    scale = 10 ** jax.random.uniform(k_scale, minval=-2.0, maxval=1.0)
    return scale * jitter * jnp.arange(1, n + 1) ** (-2 * beta)


def _instances(fn, key, setting: SpectrumSetting, batch_size: int | None = None):
    keys = jax.random.split(key, setting.instances)
    if batch_size is None:
        return jax.jit(jax.vmap(fn))(keys)
    return jax.jit(lambda ks: jax.lax.map(fn, ks, batch_size=batch_size))(keys)


def simulate_rademacher_facts(key: PRNGKey, setting: SpectrumSetting) -> Array:
    """Per instance, the smallest normalised slack of ``R̂ ≤ ϱ``, ``R̂² ≤ tr K/N``, ``R̂``
    non-decreasing and ``R̂/ϱ²`` non-increasing over ``radii`` radii from ``10⁻⁶λ̂_max^{1/2}``
    to ``10²λ̂_max^{1/2}``: ``(instances, 4)``, ``≥ 0`` where the fact holds (eq. (10)).

    The grid reaches both equality cases of eq. (10): ``ϱ² ≥ λ̂_max`` (``R̂² = tr K/N``) and
    ``ϱ² ≤ λ̂_min`` (``R̂ = ϱ``). The second needs ``10⁻¹² ≤ λ̂_min/λ̂_max``, which every
    spectrum of :func:`random_spectrum` with ``N ≤ 400`` meets: ``λ̂_min/λ̂_max ≥
    (0.5/1.5)·N^{−2β} ≥ N^{−4}/3 ≥ 1.3·10⁻¹¹`` (``β ≤ 2``)."""
    check_setting_type("simulate_rademacher_facts", setting, SpectrumSetting)
    check_key("simulate_rademacher_facts", key)

    def instance(k):
        lam = random_spectrum(k, setting.num_eigenvalues)
        radii = jnp.geomspace(1e-6, 1e2, setting.radii) * jnp.sqrt(jnp.max(lam))
        complexity = local_rademacher_complexity(lam, radii)
        scaled = complexity / radii**2
        return jnp.stack(
            [
                jnp.min(radii - complexity) / jnp.max(radii),
                jnp.min(jnp.mean(lam) - complexity**2) / jnp.mean(lam),
                jnp.min(jnp.diff(complexity)) / jnp.max(complexity),
                jnp.min(-jnp.diff(scaled)) / jnp.max(scaled),
            ]
        )

    return _instances(instance, key, setting)


class CriticalRadiusRun(NamedTuple):
    """Per instance: ``|R̂(ϱ̂)/(cϱ̂²) − 1|``, ``R̂/(cϱ²) − 1`` at ``ϱ = ϱ̂(1 − δ)``
    (``δ`` = :data:`BELOW_ROOT`; ``> 0``: the root is the smallest), and the relative growth of
    ``ϱ̂`` for ``σ × 1.5`` and ``C_H/1.5``."""

    residual: Array
    fails_below: Array
    sigma_monotone: Array
    c_h_monotone: Array


def simulate_critical_radius(key: PRNGKey, setting: SpectrumSetting) -> CriticalRadiusRun:
    """Eq. (11), corrected exponent: ``σ ~ U[0.1, 2]``, ``C_H ~ U[0.2, 5]``."""
    check_setting_type("simulate_critical_radius", setting, SpectrumSetting)
    check_key("simulate_critical_radius", key)

    def instance(k):
        k_spec, k_sigma, k_ch = jax.random.split(k, 3)
        lam = random_spectrum(k_spec, setting.num_eigenvalues)
        sigma = jax.random.uniform(k_sigma, minval=0.1, maxval=2.0)
        c_h = jax.random.uniform(k_ch, minval=0.2, maxval=5.0)
        c = critical_radius_coefficient(sigma, c_h)
        rho = empirical_critical_radius(lam, sigma, c_h)
        below = rho * (1 - BELOW_ROOT)
        return CriticalRadiusRun(
            jnp.abs(local_rademacher_complexity(lam, rho) / (c * rho**2) - 1),
            local_rademacher_complexity(lam, below) / (c * below**2) - 1,
            empirical_critical_radius(lam, 1.5 * sigma, c_h) / rho - 1,
            empirical_critical_radius(lam, sigma, c_h / 1.5) / rho - 1,
        )

    return _instances(instance, key, setting)


class CHRescaling(NamedTuple):
    """Per instance and exponent: ``|ϱ̂(σ, C_H)/ϱ̂(σ/C_H, 1) − 1|`` and ``|T̂ − T̂_unit|``,
    ``(instances, 2)`` each for the printed ``C_H²`` and the corrected ``C_H``."""

    printed: Array
    corrected: Array


def simulate_c_h_rescaling(key: PRNGKey, setting: SpectrumSetting) -> CHRescaling:
    """Dividing ``f`` and ``Y`` by ``C_H`` (``C_H ~ U[2, 5]``, ``σ ~ U[0.1, 2]``) gives the
    unit-ball problem with noise ``σ/C_H`` whose GD iterates are the original ones divided by
    ``C_H``: a consistent rule picks the same ``ϱ̂`` and ``T̂`` (``α = 1/λ̂_max``)."""
    check_setting_type("simulate_c_h_rescaling", setting, SpectrumSetting)
    check_key("simulate_c_h_rescaling", key)

    def instance(k):
        k_spec, k_sigma, k_ch = jax.random.split(k, 3)
        lam = random_spectrum(k_spec, setting.num_eigenvalues)
        alpha = 1 / jnp.max(lam)
        sigma = jax.random.uniform(k_sigma, minval=0.1, maxval=2.0)
        c_h = jax.random.uniform(k_ch, minval=2.0, maxval=5.0)
        out = []
        for exponent in (PRINTED_C_H_EXPONENT, CORRECTED_C_H_EXPONENT):
            rho = empirical_critical_radius(lam, sigma, c_h, c_h_exponent=exponent)
            unit = empirical_critical_radius(lam, sigma / c_h, 1.0, c_h_exponent=exponent)
            t_gap = jnp.abs(
                stopping_time_constant_step(rho, alpha) - stopping_time_constant_step(unit, alpha)
            )
            out.append(jnp.stack([jnp.abs(rho / unit - 1), t_gap.astype(rho.dtype)]))
        return CHRescaling(*out)

    return _instances(instance, key, setting)


class StoppingTimesRun(NamedTuple):
    """Per instance: the step-by-step rule for ``C_H ∈ {0.5, 1, 2}`` and a decreasing schedule
    (``rule``, ``(instances, 4)``), the closed forms (``closed``), ``diff`` of the rule over
    ``C_H`` (``c_h_monotone``), whether every rule fired within its horizon, and the largest
    ``α_t λ̂_max`` over both schedules (``step_times_lambda_max``: the rule is defined for
    non-increasing steps ``α_t ≤ min{1, 1/λ̂_max}``, Raskutti et al. 2014)."""

    rule: Array
    closed: Array
    c_h_monotone: Array
    fired: Array
    step_times_lambda_max: Array


def simulate_stopping_times(key: PRNGKey, setting: SpectrumSetting) -> StoppingTimesRun:
    """``σ ~ U[0.05, 1]``, ``α ~ U[0.2, 1]/λ̂_max``; the decreasing schedule ``α_t = α·max{(1 +
    t/20)^{−1/2}, 1/2}`` with ``C_H = 1`` and horizon ``2·horizon``."""
    check_setting_type("simulate_stopping_times", setting, SpectrumSetting)
    check_key("simulate_stopping_times", key)
    horizon = setting.horizon

    def instance(k):
        k_spec, k_sigma, k_alpha = jax.random.split(k, 3)
        lam = random_spectrum(k_spec, setting.num_eigenvalues)
        sigma = jax.random.uniform(k_sigma, minval=0.05, maxval=1.0)
        alpha = jax.random.uniform(k_alpha, minval=0.2, maxval=1.0) / jnp.max(lam)
        schedule = alpha * jnp.maximum(1 / jnp.sqrt(1 + jnp.arange(2 * horizon) / 20), 0.5)
        c_hs = jnp.array([0.5, 1.0, 2.0])
        rule = jax.vmap(lambda c: raskutti_stopping_time(lam, jnp.full(horizon, alpha), sigma, c))(
            c_hs
        )
        radius = jax.vmap(lambda c: empirical_critical_radius(lam, sigma, c))(c_hs)
        closed = stopping_time_constant_step(radius, alpha)
        decreasing = stopping_time(lam, schedule, critical_radius_coefficient(sigma, 1.0))
        decreasing_closed = jnp.sum(jnp.cumsum(schedule) <= radius[1] ** -2)
        return StoppingTimesRun(
            jnp.concatenate([rule, decreasing[None]]),
            jnp.concatenate([closed, decreasing_closed[None]]),
            jnp.diff(rule),
            (jnp.max(rule) < horizon) & (decreasing < 2 * horizon),
            jnp.maximum(alpha, jnp.max(schedule)) * lam.max(),
        )

    return _instances(instance, key, setting, batch_size=4)


class OptimalStoppingRun(NamedTuple):
    """Per instance: ``T̂_op`` and the convex oracle for each drift slope of
    :data:`DRIFT_SLOPES` (``(instances, 6)``), and ``T̂_max``."""

    t_op: Array
    oracle: Array
    t_max: Array


def simulate_optimal_stopping(key: PRNGKey, setting: SpectrumSetting) -> OptimalStoppingRun:
    """``T̂_op`` with drift bounds ``g(τ) = c·η_τ``, ``σ ~ U[0.05, 1]``, ``C ~ U[0.1, 10]``,
    ``α = 1/λ̂_max``, ``T̂_max`` from the rule; the oracle is the best integer next to
    ``τ* = √(C/c)/α`` clipped to ``[1, T̂_max]`` (``T̂_max`` itself when ``c = 0``)."""
    check_setting_type("simulate_optimal_stopping", setting, SpectrumSetting)
    check_key("simulate_optimal_stopping", key)
    horizon = setting.horizon

    def instance(k):
        k_spec, k_sigma, k_const = jax.random.split(k, 3)
        lam = random_spectrum(k_spec, setting.num_eigenvalues)
        sigma = jax.random.uniform(k_sigma, minval=0.05, maxval=1.0)
        constant = jax.random.uniform(k_const, minval=0.1, maxval=10.0)
        alpha = 1 / jnp.max(lam)
        steps = jnp.full(horizon, alpha)
        t_max = raskutti_stopping_time(lam, steps, sigma)
        eta = alpha * jnp.arange(1, horizon + 1)

        def t_op(slope):
            return optimal_stopping_time(steps, constant, slope * eta, t_max)

        def oracle(slope):
            star = jnp.sqrt(constant / jnp.maximum(slope, 1e-300)) / alpha
            low = jnp.clip(jnp.floor(star), 1, jnp.maximum(t_max, 1))
            high = jnp.clip(jnp.ceil(star), 1, jnp.maximum(t_max, 1))

            def objective(t):
                return constant / (alpha * t) + slope * alpha * t

            best = jnp.where(objective(high) < objective(low), high, low)
            return jnp.where(slope > 0, best, jnp.maximum(t_max, 1))

        slopes = jnp.asarray(DRIFT_SLOPES)
        return OptimalStoppingRun(jax.vmap(t_op)(slopes), jax.vmap(oracle)(slopes), t_max)

    return _instances(instance, key, setting, batch_size=setting.batch_size)
