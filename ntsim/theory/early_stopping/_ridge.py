r"""Early stopping ↔ kernel ridge regression (Sun & Raskutti 2026, Sec 6.2, eq. (27)).

In the paper's normalisation (``K = 𝕂/N``, loss ``(1/N)Σ(Y − f)² + λ‖f − f_PT‖²_H``) kernel
ridge regression shrinks the ``i``-th eigen-coordinate of ``Y − f_PT(X)`` by
``s_KRR = λ̂_i/(λ̂_i + λ)``, and ``τ`` steps of kernel GD with step ``α`` by
``s_GD = 1 − (1 − αλ̂_i)^τ``. With ``x = η_τλ̂_i`` and ``αλ̂_i ≤ 1``,
``1 − e^{−x} ≥ x/(1 + x)`` and ``min{1, x} ≤ 2x/(1 + x)`` give the sandwich [derived]

.. math:: s_{KRR}(λ = 1/η_τ) \le s_{GD} \le 2\, s_{KRR}(λ = 1/η_τ),

the Raskutti et al. 2014 correspondence ``λ ≍ 1/η_τ``. **Erratum** (notes, typo 4): the
paper states ``λ = εT̂_op`` (``= η_τ``), the inverse; with it the shrinkages go in opposite
directions as ``τ`` grows (GD fits more, ridge fits less), so no constant-factor sandwich
holds. Both rules are here as :func:`ridge_for_steps_corrected` and
:func:`ridge_for_steps_printed`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from ntsim._types import Array, ArrayLike
from ntsim._validation import check_ndim, check_nonnegative, check_positive
from ntsim.theory.early_stopping._kernel_gd import gd_shrinkage

__all__ = [
    "ShrinkageSandwich",
    "krr_shrinkage",
    "ridge_for_steps_corrected",
    "ridge_for_steps_printed",
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
