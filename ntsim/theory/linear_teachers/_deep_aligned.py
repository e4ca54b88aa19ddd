"""Simulation behind Thm 5.3 of Shachaf et al. 2021: deep linear fine-tuning on aligned
tasks ``θ_T = αθ_S`` (the risks of eqs. (5)/(6) per depth). Instances as in
:mod:`._deep_simulations` (:func:`~._deep_simulations._tasks`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.theory.linear_teachers import _common, _deep
from ntsim.theory.linear_teachers._deep_simulations import _norms, _tasks

__all__ = [
    "AlignedRun",
    "AlignedSetting",
    "simulate_aligned",
]


@dataclass(frozen=True)
class AlignedSetting:
    """Sizes of :func:`simulate_aligned` (ours).

    Attributes:
      d, n: input dimension and sample size (random ``Σ``, ``λ ∈ [0.2, 2]``).
      draws: instances (``α`` log-uniform in ``[0.2, 5]``).
      depths: finite depths ``L`` (increasing).
    """

    d: int = 100
    n: int = 10
    draws: int = 200
    depths: tuple[float, ...] = (1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 20.0, 50.0)

    def __post_init__(self):
        if not (1 <= self.n < self.d and self.draws >= 1):
            raise ValueError("AlignedSetting: need 1 <= n < d and draws >= 1.")
        if self.depths[0] != 1.0 or list(self.depths) != sorted(set(self.depths)):
            raise ValueError("AlignedSetting: depths must increase strictly from 1.0.")
        if any(math.isinf(L) for L in self.depths):
            raise ValueError("AlignedSetting: depths are finite (L = ∞ is always measured).")


class AlignedRun(NamedTuple):
    """Per instance, ``θ_T = αθ_S``.

    Attributes:
      risk_inf_relative: ``R(β_∞)/θ_TᵀΣθ_T`` (eq. (6)).
      risk_eq8: eq. (8), ``((α − 1)/α)²‖Σ^{1/2}P_⊥θ_T‖²``.
      risks: ``R(β_L)`` per depth, ``(draws, len(depths))`` (eq. (5)).
      formula: ``(α − c_L)²‖Σ^{1/2}P_⊥θ_S‖²`` with ``c_L`` from the root equation (SVD norms).
      depths: the depths.
    """

    risk_inf_relative: Array
    risk_eq8: Array
    risks: Array
    formula: Array
    depths: tuple[float, ...]


def _aligned_terms(inst, depths: tuple[float, ...]) -> dict:
    x, ts, sigma, alpha = inst["x"], inst["theta_s"], inst["sigma"], inst["alpha"]
    tt = alpha * ts
    ls = jnp.asarray(depths)
    risks = jax.vmap(lambda L: _deep.deep_risk(x, ts, tt, sigma, L))(ls)
    a, c, b_row, _ = _norms(x, ts, tt)
    coeff = jax.vmap(lambda L: _deep.deep_limit_scale(a, c, b_row, L).coefficient)(ls)
    u = _common.null_space_projector(x) @ ts
    return {
        "risk_inf_relative": _deep.deep_risk(x, ts, tt, sigma, jnp.inf) / (tt @ sigma @ tt),
        "risk_eq8": _deep.aligned_risk_depth1(alpha, x, tt, sigma),
        "risks": risks,
        "formula": (alpha - coeff) ** 2 * (u @ sigma @ u),
    }


def simulate_aligned(key: PRNGKey, setting: AlignedSetting) -> AlignedRun:
    """Thm 5.3: risks of eq. (5)/(6) for ``θ_T = αθ_S`` over ``jax.random.split(key, draws)``.

    Examples:
      >>> import jax
      >>> with jax.enable_x64(True):
      ...     run = simulate_aligned(jax.random.PRNGKey(0), AlignedSetting(d=8, n=3, draws=2))
      >>> run.risks.shape
      (2, 8)
    """
    check_setting_type("simulate_aligned", setting, AlignedSetting)
    check_key("simulate_aligned", key)
    keys = jax.random.split(key, setting.draws)
    one = lambda k: _aligned_terms(_tasks(k, setting.n, setting.d), setting.depths)  # noqa: E731
    out = jax.jit(jax.vmap(one))(keys)
    return AlignedRun(depths=tuple(setting.depths), **out)
