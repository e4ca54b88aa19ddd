r"""Early stopping ↔ kernel ridge regression (Sun & Raskutti 2026, Sec 6.2, eq. (27)).

In the paper's normalisation (``K = 𝕂/N``, loss ``(1/N)Σ(Y − f)² + λ‖f − f_PT‖²_H``) kernel
ridge regression shrinks the ``i``-th eigen-coordinate of ``Y − f_PT(X)`` by
``s_KRR = λ̂_i/(λ̂_i + λ)``, and ``τ`` steps of kernel GD with step ``α`` by
``s_GD = 1 − (1 − αλ̂_i)^τ``. With ``x = η_τλ̂_i`` and ``αλ̂_i ≤ 1``,
``1 − e^{−x} ≥ x/(1 + x)`` and ``min{1, x} ≤ 2x/(1 + x)`` give the sandwich [derived]

.. math:: s_{KRR}(λ = 1/η_τ) \le s_{GD} \le 2\, s_{KRR}(λ = 1/η_τ),

the Raskutti et al. 2014 correspondence ``λ ≍ 1/η_τ``. **Erratum** (typo): the
paper states ``λ = εT̂_op`` (``= η_τ``), the inverse; with it the shrinkages go in opposite
directions as ``τ`` grows (GD fits more, ridge fits less), so no constant-factor sandwich
holds. Both rules are here as :func:`ridge_for_steps_corrected` and
:func:`ridge_for_steps_printed`.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import (
    check_int_fields,
    check_key,
    check_ndim,
    check_nonnegative,
    check_positive,
    check_setting_type,
)
from ntsim.theory.early_stopping._kernel_gd import gd_shrinkage

__all__ = [
    "ANCHOR_INSTANCE",
    "SANDWICH_SETTINGS",
    "SandwichMargins",
    "SandwichSetting",
    "simulate_shrinkage_sandwich",
    "ShrinkageSandwich",
    "krr_shrinkage",
    "ridge_for_steps_corrected",
    "ridge_for_steps_printed",
    "sandwich_sides",
    "shrinkage_sandwich",
]


def krr_shrinkage(eigenvalues: ArrayLike, ridge: ArrayLike) -> Array:
    r"""``s_KRR = λ̂_i/(λ̂_i + λ)`` of eq. (27) with ``K = 𝕂/N`` (``f = K(K + λI)^{-1}Y``).

    Args:
      eigenvalues: ``λ̂_i ≥ 0``, ``(N,)``.
      ridge: ``λ > 0``, scalar or ``(T,)`` (then the result is ``(T, N)``).

    Examples:
      >>> import jax.numpy as jnp
      >>> krr_shrinkage(jnp.array([1.0, 3.0]), 1.0).tolist()
      [0.5, 0.75]
    """
    lam = jnp.asarray(eigenvalues)
    check_ndim("krr_shrinkage", "eigenvalues", lam, 1)
    check_positive("krr_shrinkage", "ridge", ridge)
    lam = jnp.maximum(lam.astype(jnp.result_type(lam, float)), 0)
    rho = jnp.asarray(ridge, lam.dtype)[..., None]
    return lam / (lam + rho)


def ridge_for_steps_corrected(eta: ArrayLike) -> Array:
    """``λ = 1/η_τ``: the ridge matching ``τ`` GD steps (module doc; Raskutti et al. 2014)."""
    check_positive("ridge_for_steps_corrected", "eta", eta)
    eta = jnp.asarray(eta)
    return 1 / eta.astype(jnp.result_type(eta, float))


def ridge_for_steps_printed(eta: ArrayLike) -> Array:
    """``λ = εT̂ = η_τ`` as printed below eq. (27) (inverted; module doc)."""
    check_positive("ridge_for_steps_printed", "eta", eta)
    eta = jnp.asarray(eta)
    return eta.astype(jnp.result_type(eta, float))


class ShrinkageSandwich(NamedTuple):
    """Per-eigenvalue shrinkage of GD and of the matched ridge (``(T, N)`` each)."""

    gd: Array
    krr: Array


def shrinkage_sandwich(
    eigenvalues: ArrayLike, step_size: ArrayLike, steps: ArrayLike, *, printed: bool = False
) -> ShrinkageSandwich:
    r"""``s_GD(τ)`` and ``s_KRR(λ(η_τ))`` with ``λ = 1/η_τ`` (``printed=False``) or ``η_τ``.

    The corrected pair satisfies ``krr ≤ gd ≤ 2·krr`` elementwise (module doc).

    Args:
      eigenvalues: ``λ̂_i``, ``(N,)``, with ``α λ̂_max ≤ 1``.
      step_size: constant ``α > 0``.
      steps: ``τ ≥ 1``, ``(T,)``.
      printed: use the paper's ``λ = η_τ``.

    Examples:
      >>> import jax.numpy as jnp
      >>> s = shrinkage_sandwich(jnp.array([0.5]), 1.0, jnp.array([2, 6]))
      >>> [round(float(v), 6) for v in s.gd[:, 0]], [round(float(v), 6) for v in s.krr[:, 0]]
      ([0.75, 0.984375], [0.5, 0.75])
    """
    steps = jnp.atleast_1d(jnp.asarray(steps))
    check_nonnegative("shrinkage_sandwich", "steps", steps)
    gd = gd_shrinkage(eigenvalues, step_size, steps)
    eta = jnp.asarray(step_size, gd.dtype) * steps.astype(gd.dtype)
    rule = ridge_for_steps_printed if printed else ridge_for_steps_corrected
    return ShrinkageSandwich(gd, krr_shrinkage(eigenvalues, rule(eta)))


@dataclasses.dataclass(frozen=True)
class SandwichSetting:
    """Random spectra and step counts for the shrinkage sandwich (sizes are ours).

    Per instance: ``λ̂`` log-uniform on ``[1e-6, 1]``, ``α ~ U[0.1, 1]/λ̂_max`` (so
    ``αλ̂ ≤ 1``), ``τ`` log-uniform on ``[1, 1e6]`` (rounded, sorted).
    """

    num_eigenvalues: int = 400
    num_steps: int = 200
    instances: int = 200

    def __post_init__(self):
        check_int_fields(self, ("num_eigenvalues", "num_steps", "instances"))


#: The hand instance of :class:`SandwichMargins`'s ``anchor``: ``λ̂ ∈ {1/2, 1/4}``,
#: ``α = 1``, ``τ ∈ {2, 6}``, where ``s_GD = 1 − (1 − λ̂)^τ`` and
#: ``s_KRR(1/η_τ) = λ̂τ/(λ̂τ + 1)``.
ANCHOR_INSTANCE = ((0.5, 0.25), 1.0, (2, 6))


class SandwichMargins(NamedTuple):
    """Per instance, ``min over (λ̂, τ)`` of ``min(s_GD − s_KRR, 2 s_KRR − s_GD)`` (``≥ 0``:
    the sandwich holds) and the range of ``s_GD/s_KRR``, for both ridge rules.

    Attributes:
      corrected, printed: the margins with ``λ = 1/η_τ`` and with the printed ``λ = η_τ``.
      corrected_ratio, printed_ratio: ``(min, max)`` of ``s_GD/s_KRR``, ``(instances, 2)``.
      step_times_lambda_max: ``αλ̂_max`` per instance (the sandwich's premise: ``≤ 1``).
      anchor: ``(5,)``, :func:`sandwich_sides` of the corrected sandwich on
        :data:`ANCHOR_INSTANCE` (``λ̂ ∈ {1/2, 1/4}``, ``α = 1``, ``τ ∈ {2, 6}``), by the same
        code as the instances: ``(5/48, 11/48, 21/16, 3/2, 1/2)`` by hand.
    """

    corrected: Array
    printed: Array
    corrected_ratio: Array
    printed_ratio: Array
    step_times_lambda_max: Array
    anchor: Array


def sandwich_sides(
    eigenvalues: ArrayLike, step_size: ArrayLike, steps: ArrayLike, *, printed: bool = False
) -> Array:
    r"""The two sides of the sandwich, the ratio range over ``(λ̂, τ)`` and the premise, ``(5,)``:
    ``min(s_GD − s_KRR)``, ``min(2 s_KRR − s_GD)`` (both ``≥ 0`` where it holds),
    ``(min, max)`` of ``s_GD/s_KRR`` and ``αλ̂_max`` (the sandwich needs ``αλ̂ ≤ 1``)
    (:func:`shrinkage_sandwich`'s arguments).

    Examples:
      >>> import jax.numpy as jnp
      >>> [round(float(v), 6) for v in sandwich_sides(jnp.array([0.5]), 1.0, jnp.array([2, 6]))]
      [0.234375, 0.25, 1.3125, 1.5, 0.5]
    """
    pair = shrinkage_sandwich(eigenvalues, step_size, steps, printed=printed)
    ratio = pair.gd / pair.krr
    return jnp.stack(
        [
            jnp.min(pair.gd - pair.krr),
            jnp.min(2 * pair.krr - pair.gd),
            jnp.min(ratio),
            jnp.max(ratio),
            step_size * jnp.max(eigenvalues),
        ]
    )


def simulate_shrinkage_sandwich(key: PRNGKey, setting: SandwichSetting) -> SandwichMargins:
    """The sandwich ``s_KRR ≤ s_GD ≤ 2 s_KRR`` on random spectra, for both ridge rules.

    Instance keys ``split(key, instances)``; each instance draws its spectrum, step size
    and step counts (:class:`SandwichSetting`) and evaluates :func:`sandwich_sides` with
    ``printed=False`` and ``printed=True`` on the same draw; the ``anchor`` is
    :func:`sandwich_sides` on :data:`ANCHOR_INSTANCE`. Run it in float64.
    """
    check_setting_type("simulate_shrinkage_sandwich", setting, SandwichSetting)
    check_key("simulate_shrinkage_sandwich", key)

    def instance(k):
        k_lam, k_alpha, k_tau = jax.random.split(k, 3)
        lam = 10 ** jax.random.uniform(k_lam, (setting.num_eigenvalues,), minval=-6.0, maxval=0.0)
        alpha = jax.random.uniform(k_alpha, minval=0.1, maxval=1.0) / jnp.max(lam)
        steps = jnp.sort(
            jnp.round(10 ** jax.random.uniform(k_tau, (setting.num_steps,), maxval=6.0))
        )
        out = []
        for printed in (False, True):
            sides = sandwich_sides(lam, alpha, steps, printed=printed)
            out.append((jnp.minimum(sides[0], sides[1]), sides[2:4], sides[4]))
        return out[0][0], out[1][0], out[0][1], out[1][1], out[0][2]

    margins = jax.jit(jax.vmap(instance))(jax.random.split(key, setting.instances))
    lam, alpha, steps = ANCHOR_INSTANCE
    anchor = sandwich_sides(jnp.array(lam), alpha, jnp.array(steps, float))
    return SandwichMargins(*margins, anchor)


SANDWICH_SETTINGS = {
    "quick": SandwichSetting(num_eigenvalues=50, num_steps=40),
    "full": SandwichSetting(),
}
"""Random-spectrum sandwich per scale (the Sec 6.2 claims and their experiment read these)."""
