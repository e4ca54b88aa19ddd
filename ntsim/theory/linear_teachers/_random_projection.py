"""Thm 5.4 of Shachaf et al. 2021 (``Σ = I``): the simulation behind bounds (9) and (10).

:func:`simulate_random_projection` draws the Gaussian instances of Thm 5.4 on a grid of
alignments ``‖θ̂_T − θ̂_S‖`` and target norms ``‖θ_T‖`` and evaluates, per draw, the risks
``R(β_∞)`` (eq. (6)/(7)) and ``R(γ)`` (Thm 4.1), the bounds of
:func:`~ntsim.theory.linear_teachers.random_projection_bounds` with the measured ``ε``, and
the risks after rescaling ``θ_S`` or ``θ_T``. It also evaluates one *constructed* instance
(no randomness) on which the deterministic core of the proof of (9) fails:
``d = 2``, ``n = 1``, ``X = e_1ᵀ``, ``θ_S`` at 60° and ``θ_T`` at 30° from ``e_1``,
``‖θ_S‖ = ‖θ_T‖ = 1``. There ``P_∥`` keeps the first coordinate, so
``c_∞ = cos 30°/cos 60° = √3`` and ``R(β_∞) = (sin 30° − √3 sin 60°)² = 1`` exactly, while
every vector the proof projects deviates from the random-projection scaling by at most
``ε = 1 − 1/√2`` and (9) evaluates to ``((1 + ε)²(2 − √3) + ε²)/2 ≈ 0.267``: the cross term
``2(1 − c_∞)⟨P_⊥Δ, P_⊥θ̂_S⟩`` of eq. (7) is first order in ``‖Δ‖`` and (9) does not cover it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.theory.linear_teachers import _deep

__all__ = [
    "CONSTRUCTED_ANGLES_DEG",
    "RandomProjectionRun",
    "RandomProjectionSetting",
    "simulate_random_projection",
]

#: Angles (degrees, from ``e_1``) of ``θ_S`` and ``θ_T`` in the constructed instance.
CONSTRUCTED_ANGLES_DEG = (60.0, 30.0)


@dataclass(frozen=True)
class RandomProjectionSetting:
    """Thm 5.4 (``Σ = I``, ``X ~ N(0, I)^n``, ``‖θ_S‖ = 1``). Sizes the paper leaves open are
    ours (its checks suggest ``d = 1000``, ``n = 100``).

    Attributes:
      d: input dimension.
      n: target samples (``n < d``).
      distances: ``‖θ̂_T − θ̂_S‖`` values (exact per draw), in ``(0, 2)``.
      target_norms: ``‖θ_T‖`` values.
      draws: draws per (distance, target norm) cell.
      rescalings: factors ``s`` applied to ``θ_S`` (risk must not change) and to ``θ_T``
        (risk must scale by ``s²``).
    """

    d: int = 200
    n: int = 20
    distances: tuple[float, ...] = (0.1, 0.5, 1.0)
    target_norms: tuple[float, ...] = (1.0, 10.0)
    draws: int = 50
    rescalings: tuple[float, ...] = (0.1, 10.0)

    def __post_init__(self):
        if not 0 < self.n < self.d:
            raise ValueError(f"RandomProjectionSetting: need 0 < n < d, got {self.n=}, {self.d=}.")
        if not all(0 < a < 2 for a in self.distances):
            raise ValueError(f"RandomProjectionSetting: distances must lie in (0, 2), got "
                             f"{self.distances}.")  # fmt: skip
        if not all(t > 0 for t in (*self.target_norms, *self.rescalings)) or self.draws < 1:
            raise ValueError("RandomProjectionSetting: norms, rescalings and draws must be > 0.")


class RandomProjectionRun(NamedTuple):
    """Per-draw quantities of :func:`simulate_random_projection` (shape ``(draws_total,)``,
    cells in the order distance-major, target-norm-minor), and the constructed instance.

    Attributes:
      distance, target_norm: the cell of each draw.
      risk_deep: ``R(β_∞)`` (eq. (6), ``Σ = I``).
      risk_linear: ``R(γ) = ‖P_⊥(θ_T − θ_S)‖²``.
      epsilon, zeta, eq9, eq10, eq9_corrected: :class:`RandomProjectionBounds` per draw.
      risk_source_rescaled, risk_target_rescaled: ``R(β_∞)`` with ``θ_S → sθ_S`` (resp.
        ``θ_T → sθ_T``), shape ``(draws_total, len(rescalings))``.
      rescalings: the factors ``s``.
      constructed: the same fields for the constructed instance (module doc), shape ``(1,)``
        each, as a dict ``{risk_deep, risk_linear, epsilon, zeta, eq9, eq10, eq9_corrected}``.
      d, n: sizes.
    """

    distance: Array
    target_norm: Array
    risk_deep: Array
    risk_linear: Array
    epsilon: Array
    zeta: Array
    eq9: Array
    eq10: Array
    eq9_corrected: Array
    risk_source_rescaled: Array
    risk_target_rescaled: Array
    rescalings: Array
    constructed: dict
    d: int
    n: int


def _terms(x, theta_s, theta_t, rescalings):
    d = x.shape[1]
    eye = jnp.eye(d)
    bounds = _deep.random_projection_bounds(x, theta_s, theta_t)
    return {
        "risk_deep": _deep.deep_risk(x, theta_s, theta_t, eye, jnp.inf),
        "risk_linear": _deep.deep_risk(x, theta_s, theta_t, eye, 1.0),
        "epsilon": bounds.epsilon,
        "zeta": bounds.zeta,
        "eq9": bounds.eq9,
        "eq10": bounds.eq10,
        "eq9_corrected": bounds.eq9_corrected,
        "risk_source_rescaled": jnp.stack(
            [_deep.deep_risk(x, s * theta_s, theta_t, eye, jnp.inf) for s in rescalings]
        ),
        "risk_target_rescaled": jnp.stack(
            [_deep.deep_risk(x, theta_s, s * theta_t, eye, jnp.inf) for s in rescalings]
        ),
    }


def _constructed(dtype) -> dict:
    a, b = np.deg2rad(CONSTRUCTED_ANGLES_DEG)
    x = jnp.asarray([[1.0, 0.0]], dtype)
    theta_s = jnp.asarray([np.cos(a), np.sin(a)], dtype)
    theta_t = jnp.asarray([np.cos(b), np.sin(b)], dtype)
    out = _terms(x, theta_s, theta_t, (1.0,))
    return {k: jnp.reshape(v, (1,)) for k, v in out.items() if "rescaled" not in k}


def simulate_random_projection(
    key: PRNGKey, setting: RandomProjectionSetting
) -> RandomProjectionRun:
    """Thm 5.4 instances: ``X ~ N(0, I)^n``, ``‖θ_S‖ = 1``, ``θ_T = ‖θ_T‖·θ̂_T`` with
    ``‖θ̂_T − θ̂_S‖`` exactly on the grid (:func:`unit_pair_at_distance`), one
    ``jit(vmap)`` over all draws; plus the constructed instance (module doc).

    Examples:
      >>> import jax
      >>> run = simulate_random_projection(
      ...     jax.random.PRNGKey(0), RandomProjectionSetting(d=20, n=4, draws=2))
      >>> run.risk_deep.shape, run.risk_source_rescaled.shape
      ((12,), (12, 2))
      >>> round(float(run.constructed["risk_deep"][0]), 5)
      1.0
    """
    check_setting_type("simulate_random_projection", setting, RandomProjectionSetting)
    check_key("simulate_random_projection", key)
    d, n = setting.d, setting.n
    grid = np.array([(a, t) for a in setting.distances for t in setting.target_norms])
    grid = grid.repeat(setting.draws, axis=0)
    keys = jax.random.split(key, grid.shape[0])
    dtype = jnp.asarray(0.0).dtype

    def one(k, distance, norm_t):
        k_x, k_s, k_p = jax.random.split(k, 3)
        unit_s, unit_t = _deep.unit_pair_at_distance(k_s, k_p, d, distance)
        x = jax.random.normal(k_x, (n, d))
        return _terms(x, unit_s, norm_t * unit_t, setting.rescalings)

    out = jax.jit(jax.vmap(one))(
        keys, jnp.asarray(grid[:, 0], dtype), jnp.asarray(grid[:, 1], dtype)
    )
    return RandomProjectionRun(
        distance=jnp.asarray(grid[:, 0], dtype),
        target_norm=jnp.asarray(grid[:, 1], dtype),
        **out,
        rescalings=jnp.asarray(setting.rescalings, dtype),
        constructed=_constructed(dtype),
        d=d,
        n=n,
    )
