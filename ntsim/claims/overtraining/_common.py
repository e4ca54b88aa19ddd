"""Random instances shared by the overtraining claims (Springer et al. 2025, Sec 4).

Every helper takes one key and returns one instance; the claims ``vmap`` them over split
keys. Spectra are drawn, not fixed, so a claim covers many shapes of ``σ^pre`` and ``σ^ft``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim.theory import overtraining as ot
from ntsim.theory.overtraining import (  # noqa: F401 (re-exported for the v1 modules)
    haar_pair,
    ideal_checkpoints,
    procrustes_distance,
    random_geometric_spectrum,
    sorted_uniform,
)

PAPER = "Springer et al. 2025"

# Real checkpoints: save points span [0.02·t_1, 3·t_d] (t_n of the aligned init, which
# the identity init reaches later: its mode n starts at ≈ e^{−2τ}(1 + u_nᵀv_n)/2 and couples
# to the others); measured: with 3·t_d every mode has risen in all instances drawn.
_GRID_START, _GRID_END = 0.02, 3.0


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
