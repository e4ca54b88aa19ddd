"""Random instances of the two-layer linear setting (Springer et al. 2025, Sec 4.1).

Every helper takes one key and returns one instance; the simulations ``vmap`` them over
split keys. Spectra are drawn, not fixed, so a simulation covers many shapes of
``σ^pre`` and ``σ^ft``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_positive_int
from ntsim.core import random_orthogonal
from ntsim.theory.overtraining._pretraining import ideal_checkpoint

__all__ = [
    "haar_pair",
    "ideal_checkpoints",
    "procrustes_distance",
    "random_geometric_spectrum",
    "sorted_uniform",
]


def haar_pair(key: PRNGKey, d: int) -> tuple[Array, Array]:
    """Independent Haar ``U, V ∈ O(d)`` (the singular vectors of both tasks)."""
    d = check_positive_int("haar_pair", "d", d)
    k_u, k_v = jax.random.split(key)
    return random_orthogonal(k_u, d), random_orthogonal(k_v, d)


def sorted_uniform(key: PRNGKey, d: int, low: float, high: float) -> Array:
    """``d`` values ``U[low, high]`` sorted decreasingly (a random strictly decreasing spectrum).

    Examples:
      >>> import jax
      >>> s = sorted_uniform(jax.random.PRNGKey(0), 4, 0.5, 2.0)
      >>> bool((s[:-1] >= s[1:]).all() and (s >= 0.5).all() and (s <= 2.0).all())
      True
    """
    return jnp.sort(jax.random.uniform(key, (d,), minval=low, maxval=high))[::-1]


def random_geometric_spectrum(key: PRNGKey, d: int, ratios: tuple[float, float]) -> Array:
    """``σ_i = σ_1 r^{i−1}`` with ``σ_1 ~ U[2, 4]`` and ``r ~ U[ratios]``."""
    k_first, k_ratio = jax.random.split(key)
    first = jax.random.uniform(k_first, minval=2.0, maxval=4.0)
    ratio = jax.random.uniform(k_ratio, minval=ratios[0], maxval=ratios[1])
    return first * ratio ** jnp.arange(d)


def ideal_checkpoints(spectrum: ArrayLike, u: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    """``(W̄1, W̄2)`` for every ``n = 0..d`` stacked on a leading axis (eqs. 7–8)."""
    d = jnp.asarray(spectrum).shape[0]
    return jax.vmap(lambda n: ideal_checkpoint(spectrum, n, u, v))(jnp.arange(d + 1))


def procrustes_distance(w1, w2, w1_ideal, w2_ideal) -> Array:
    """``max(‖W1Q − W̄1‖_F, ‖QᵀW2 − W̄2‖_F)`` with ``Q`` the Procrustes fit of ``W1`` to ``W̄1``.

    ``(W1Q, QᵀW2)`` has the same product for every orthogonal ``Q`` (hidden-layer symmetry).
    """
    p, _, rt = jnp.linalg.svd(w1.T @ w1_ideal)
    q = p @ rt
    return jnp.maximum(jnp.linalg.norm(w1 @ q - w1_ideal), jnp.linalg.norm(q.T @ w2 - w2_ideal))
