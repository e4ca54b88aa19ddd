"""Random instances shared by the overtraining claims (Springer et al. 2025, Sec 4).

Every helper takes one key and returns one instance; the claims ``vmap`` them over split
keys. Spectra are drawn, not fixed, so a claim covers many shapes of ``σ^pre`` and ``σ^ft``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim.core import random_orthogonal
from ntsim.theory import overtraining as ot

PAPER = "Springer et al. 2025"

# Real checkpoints: save points span [0.02·t_1, 3·t_d] (t_n of the aligned init, which
# the identity init reaches later: its mode n starts at ≈ e^{−2τ}(1 + u_nᵀv_n)/2 and couples
# to the others); measured: with 3·t_d every mode has risen in all instances drawn.
_GRID_START, _GRID_END = 0.02, 3.0


def haar_pair(key, d: int):
    """Independent Haar ``U, V ∈ O(d)`` (the singular vectors of both tasks)."""
    k_u, k_v = jax.random.split(key)
    return random_orthogonal(k_u, d), random_orthogonal(k_v, d)


def sorted_uniform(key, d: int, low: float, high: float):
    """``d`` values ``U[low, high]`` sorted decreasingly (a random strictly decreasing spectrum)."""
    return jnp.sort(jax.random.uniform(key, (d,), minval=low, maxval=high))[::-1]


def random_geometric_spectrum(key, d: int, ratios: tuple[float, float]):
    """``σ_i = σ_1 r^{i−1}``, ``σ_1 ~ U[2, 4]``, ``r ~ U[ratios]`` (notes §7 config R: 4, 0.6)."""
    k_first, k_ratio = jax.random.split(key)
    first = jax.random.uniform(k_first, minval=2.0, maxval=4.0)
    ratio = jax.random.uniform(k_ratio, minval=ratios[0], maxval=ratios[1])
    return first * ratio ** jnp.arange(d)


def real_checkpoints(spectrum, u, v, tau, points: int):
    """Gradient flow from ``W1 = W2 = e^{−τ}I`` on ``A = U diag(σ) Vᵀ`` and its checkpoints.

    Returns a dict: ``w1``, ``w2`` at the real checkpoints ``n = 0..d``
    (:func:`~ntsim.theory.overtraining.closest_checkpoints`), their ``distance`` to the
    ideal products, the grid ``index`` of each, and ``max_loss_increase``: the largest
    increase of ``L_pre`` between consecutive saved times (``≤ 0`` for a gradient flow).
    """
    times = ot.checkpoint_times(spectrum, tau)
    grid = jnp.exp(
        jnp.linspace(jnp.log(_GRID_START * times[0]), jnp.log(_GRID_END * times[-1]), points)
    )
    a_pre = ot.task_matrix(spectrum, u, v)
    w1, w2 = ot.pretrain_gradient_flow(a_pre, ot.identity_init(spectrum.shape[0], tau), grid)
    index, distance = ot.closest_checkpoints(w1 @ w2, spectrum, u, v)
    losses = jax.vmap(ot.pretraining_loss, in_axes=(0, 0, None))(w1, w2, a_pre)
    return {
        "w1": w1[index],
        "w2": w2[index],
        "distance": distance,
        "index": index,
        "max_loss_increase": jnp.max(jnp.diff(losses)),
    }


def procrustes_distance(w1, w2, w1_ideal, w2_ideal):
    """``min_Q max(‖W1Q − W̄1‖_F, ‖QᵀW2 − W̄2‖_F)`` with ``Q`` the Procrustes fit of ``W1``.

    ``(W1Q, QᵀW2)`` has the same product for every orthogonal ``Q`` (hidden-layer symmetry).
    """
    p, _, rt = jnp.linalg.svd(w1.T @ w1_ideal)
    q = p @ rt
    return jnp.maximum(jnp.linalg.norm(w1 @ q - w1_ideal), jnp.linalg.norm(q.T @ w2 - w2_ideal))


def ideal_checkpoints(spectrum, u, v):
    """``(W̄1, W̄2)`` for every ``n = 0..d`` stacked on a leading axis (eqs. 7–8)."""
    d = spectrum.shape[0]
    return jax.vmap(lambda n: ot.ideal_checkpoint(spectrum, n, u, v))(jnp.arange(d + 1))
