r"""Lipschitz constants of ``θ ↦ f_θ(x*)``, ``θ ↦ ∇f_θ(x*)`` and the kernel (Lemma 1, Alg. 1).

* Lemma 1 (Rahimi Afzal et al. 2025): ``‖k_a − k_b‖ ≤ (‖J_a‖ + ‖J_b‖)‖J_a − J_b‖`` for
  ``k = JJᵀ`` (exact, from ``J_aJ_aᵀ − J_bJ_bᵀ = J_a(J_a − J_b)ᵀ + (J_a − J_b)J_bᵀ``), hence
  ``Lip(k) ≤ 2 Lip(f) Lip(∇f)``.
* Algorithm 1 (the paper's "Computation of L_avg and L_upper vs r"): sample
  ``θ = θ_0 + r·v/‖v‖``, ``v ~ N(0, I)``, and report the mean and the max over the samples
  of ``‖J_θ‖_op`` (for ``Lip(f)``) and of ``‖J_θ − J_{θ_0}‖_op/‖θ − θ_0‖`` (for
  ``Lip(∇f)``). Sampled maxima are *lower* estimates of the suprema over the ball.

Norms are spectral (``‖·‖_op``) throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from ntsim._checks import require_finite
from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import _is_concrete, check_ndim, check_nonnegative, check_positive_int
from ntsim.theory.linearization._dynamics import flat_jacobian

__all__ = [
    "LipschitzEstimate",
    "estimate_lipschitz",
    "lemma1_pair",
    "sample_ball",
    "spectral_norm",
]


def spectral_norm(matrix: ArrayLike) -> Array:
    """Largest singular value of a 2-D array (finite entries checked when concrete)."""
    m = jnp.asarray(matrix)
    check_ndim("spectral_norm", "matrix", m, 2)
    if m.size == 0:
        raise ValueError(
            f"spectral_norm: matrix must hold at least one entry, got shape {m.shape}."
        )
    if _is_concrete(m):  # traced inside the falsifier's search: checked by its caller
        require_finite("spectral_norm", "matrix", m)
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    return jnp.sqrt(jnp.maximum(jnp.linalg.eigvalsh(small)[-1], 0))


class Lemma1Pair(NamedTuple):
    """Both sides of Lemma 1 for one pair ``(θ_a, θ_b)``."""

    kernel_gap: Array  # ‖k_a − k_b‖_op
    bound: Array  # (‖J_a‖ + ‖J_b‖)‖J_a − J_b‖
    jac_gap: Array  # ‖J_a − J_b‖_op
    param_gap: Array  # ‖θ_a − θ_b‖


def lemma1_pair(jac_a: ArrayLike, jac_b: ArrayLike, param_gap: ArrayLike = jnp.nan) -> Lemma1Pair:
    r"""Lemma 1 (Rahimi Afzal et al. 2025): ``‖J_aJ_aᵀ − J_bJ_bᵀ‖ ≤ (‖J_a‖ + ‖J_b‖)‖J_a − J_b‖``.

    Args:
      jac_a: the Jacobian ``J_a``, ``(n, p)``, at ``θ_a``.
      jac_b: the Jacobian ``J_b`` at ``θ_b``, the same shape as ``jac_a``.
      param_gap: ``‖θ_a − θ_b‖`` (recorded only).

    Returns:
      :class:`Lemma1Pair`: the kernel gap, its bound, the Jacobian gap and ``param_gap``.

    Raises:
      ValueError: ``jac_a`` and ``jac_b`` are not matrices of the same shape.
    """
    jac_a, jac_b = jnp.asarray(jac_a), jnp.asarray(jac_b)
    if jac_a.shape != jac_b.shape or jac_a.ndim != 2:
        raise ValueError(
            f"lemma1_pair: jac_a and jac_b must be (n, p) of the same shape, got {jac_a.shape} "
            f"and {jac_b.shape}."
        )
    gap = spectral_norm(jac_a - jac_b)
    kernel_gap = spectral_norm(jac_a @ jac_a.T - jac_b @ jac_b.T)
    bound = (spectral_norm(jac_a) + spectral_norm(jac_b)) * gap
    return Lemma1Pair(kernel_gap, bound, gap, jnp.asarray(param_gap))


def sample_ball(key: PRNGKey, params0: Params, radius: ArrayLike, num_samples: int) -> Params:
    """Algorithm 1's samples ``θ_0 + r·v/‖v‖``, ``v ~ N(0, I)`` (on the sphere of radius ``r``).

    Returns:
      ``params`` with a leading axis ``num_samples``.
    """
    num_samples = check_positive_int("sample_ball", "num_samples", num_samples)
    check_nonnegative("sample_ball", "radius", radius)
    flat, unravel = ravel_pytree(params0)
    v = jax.random.normal(key, (num_samples, flat.size), flat.dtype)
    v = v / jnp.linalg.norm(v, axis=1, keepdims=True)
    return jax.vmap(unravel)(flat[None] + jnp.asarray(radius, flat.dtype) * v)


class LipschitzEstimate(NamedTuple):
    """Algorithm 1's estimates on the sphere of radius ``r`` around ``θ_0``.

    Attributes:
      lip_f_max: max over samples (and ``θ_0``) of ``‖J_θ‖_op``.
      lip_f_avg: mean over samples (and ``θ_0``) of ``‖J_θ‖_op``.
      lip_grad_max: max over samples of ``‖J_θ − J_{θ_0}‖_op/‖θ − θ_0‖``.
      lip_grad_avg: mean over samples of ``‖J_θ − J_{θ_0}‖_op/‖θ − θ_0‖``.
      sphere_error: max over samples of ``|‖θ − θ_0‖/r − 1|``, measured on the samples
        (round-off on Algorithm 1's sphere; a sampler off the sphere shows here).
    """

    lip_f_max: Array
    lip_f_avg: Array
    lip_grad_max: Array
    lip_grad_avg: Array
    sphere_error: Array


def estimate_lipschitz(
    key: PRNGKey,
    apply: Callable[[Params, Array], Array],
    params0: Params,
    x: ArrayLike,
    *,
    radius: ArrayLike,
    num_samples: int,
) -> LipschitzEstimate:
    """Algorithm 1 at one radius ``r > 0`` (module doc): sampled ``Lip(f)`` and ``Lip(∇f)``."""
    samples = sample_ball(key, params0, radius, num_samples)
    jac0 = flat_jacobian(apply, params0, x)
    jacs = jax.vmap(lambda p: flat_jacobian(apply, p, x))(samples)
    norms = jax.vmap(spectral_norm)(jacs)
    grads = jax.vmap(lambda j: spectral_norm(j - jac0))(jacs) / radius
    lip_f = jnp.concatenate([norms, spectral_norm(jac0)[None]])
    flat0 = ravel_pytree(params0)[0]
    offsets = jax.vmap(lambda p: ravel_pytree(p)[0] - flat0)(samples)
    sphere_error = jnp.max(jnp.abs(jnp.linalg.norm(offsets, axis=1) / radius - 1))
    return LipschitzEstimate(
        jnp.max(lip_f), jnp.mean(lip_f), jnp.max(grads), jnp.mean(grads), sphere_error
    )
