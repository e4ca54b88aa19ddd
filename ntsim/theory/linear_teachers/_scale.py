"""Fig 2 of Shachaf et al. 2021: depth (2a) and scaling the target vs the source (2b), eq. (5).

:func:`simulate_depth_and_alpha` draws Fig 2a: ``R(β_L)/‖θ_S‖²`` for ``θ_T = αθ_S + ε`` per
depth and ``α``. :func:`simulate_scale_target_vs_source` draws unit ``θ̂_S, θ̂_T`` at exactly
``‖θ̂_T − θ̂_S‖ = angle`` and one Gaussian design per draw, and evaluates the population risk
of the depth-``L`` gradient-flow limit (eq. (5); ``L = ∞``: eq. (6)) for "scale target"
(``θ_T = αθ̂_T``, ``θ_S = θ̂_S``) and "scale source" (``θ_S = αθ̂_S``, ``θ_T = θ̂_T``) at each
``n = round(ratio·d)`` (nested prefixes of the design) and each ``α``. The experiment
``linear_teachers/fig2_depth_and_scale`` (both panels) and the Fig 2 claims call them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import sweep_keys
from ntsim.theory.linear_teachers import _common, _deep

__all__ = [
    "DepthRun",
    "DepthSetting",
    "ScaleRun",
    "ScaleSetting",
    "simulate_depth_and_alpha",
    "simulate_scale_target_vs_source",
]


@dataclass(frozen=True)
class ScaleSetting:
    """Fig 2b (``Σ = I``). The paper gives ``L = 7`` and ``‖θ̂_T − θ̂_S‖ ≈ 0.1``; ``d``, ``n`` and
    the ``α`` grid are ours.

    Attributes:
      d: input dimension.
      sample_ratios: ``n/d`` values, in ``(0, 1)``.
      depth: ``L ≥ 1`` (``math.inf``: eq. (6)).
      angle: ``‖θ̂_T − θ̂_S‖`` in ``(0, 2)``.
      alphas: scaling factors ``α > 0``.
      draws: independent draws of ``(X, θ̂_S, θ̂_T)``.
    """

    d: int = 100
    sample_ratios: tuple[float, ...] = (0.1, 0.3, 0.5)
    depth: float = 7.0
    angle: float = 0.1
    alphas: tuple[float, ...] = (10.0,)
    draws: int = 200

    def __post_init__(self):
        if not all(0 < r < 1 and round(r * self.d) >= 1 for r in self.sample_ratios):
            raise ValueError(f"ScaleSetting: sample_ratios must lie in (0, 1) with n >= 1, got "
                             f"{self.sample_ratios}.")  # fmt: skip
        if not (self.depth >= 1 and 0 < self.angle < 2 and min(self.alphas) > 0):
            raise ValueError("ScaleSetting: need depth >= 1, 0 < angle < 2 and alphas > 0.")

    @property
    def sample_sizes(self) -> tuple[int, ...]:
        return tuple(int(round(r * self.d)) for r in self.sample_ratios)


class ScaleRun(NamedTuple):
    """Risks of :func:`simulate_scale_target_vs_source`, shape ``(draws, ratios, alphas)``.

    Attributes:
      scale_target: ``R`` with ``θ_T = αθ̂_T``, ``θ_S = θ̂_S``.
      scale_source: ``R`` with ``θ_S = αθ̂_S``, ``θ_T = θ̂_T``.
      sample_ratios, alphas: the grid; depth: ``L``.
      distance: ``(draws,)``: ``‖θ̂_T − θ̂_S‖`` of each drawn pair (``setting.angle`` up to
        round-off; measured, so a claim can check the instance it was stated for).
    """

    scale_target: Array
    scale_source: Array
    sample_ratios: tuple[float, ...]
    alphas: tuple[float, ...]
    depth: float
    distance: Array


def _risk(x, theta_s, theta_t, depth):
    beta = _deep.deep_fine_tuned_limit(x, theta_s, theta_t, depth)
    return jnp.sum((theta_t - beta) ** 2)


def _scale_draw(key, setting: ScaleSetting) -> dict:
    k_x, k_s, k_p = jax.random.split(key, 3)
    d = setting.d
    unit_s, unit_t = _deep.unit_pair_at_distance(k_s, k_p, d, setting.angle)
    x_all = jax.random.normal(k_x, (max(setting.sample_sizes), d))
    alphas = jnp.asarray(setting.alphas, x_all.dtype)
    depth = jnp.inf if math.isinf(setting.depth) else setting.depth
    target, source = [], []
    for n in setting.sample_sizes:  # static prefix sizes
        x = x_all[:n]
        target.append(jax.vmap(lambda a, x=x: _risk(x, unit_s, a * unit_t, depth))(alphas))
        source.append(jax.vmap(lambda a, x=x: _risk(x, a * unit_s, unit_t, depth))(alphas))
    return {"scale_target": jnp.stack(target), "scale_source": jnp.stack(source),
            "distance": jnp.linalg.norm(unit_t - unit_s)}  # fmt: skip


def simulate_scale_target_vs_source(
    key: PRNGKey, setting: ScaleSetting, *, progress: bool = False
) -> ScaleRun:
    """Fig 2b risks (module doc), swept over ``setting.draws`` keys.

    Examples:
      >>> import jax
      >>> run = simulate_scale_target_vs_source(
      ...     jax.random.PRNGKey(0), ScaleSetting(d=20, alphas=(1.0, 3.0), draws=2))
      >>> run.scale_target.shape
      (2, 3, 2)
      >>> bool(jax.numpy.allclose(run.scale_target[..., 0], run.scale_source[..., 0]))
      True
    """
    check_setting_type("simulate_scale_target_vs_source", setting, ScaleSetting)
    check_key("simulate_scale_target_vs_source", key)
    out = sweep_keys(_scale_draw, key, setting.draws, progress=progress,
                     description="fig2b draws", setting=setting)  # fmt: skip
    return ScaleRun(
        scale_target=out["scale_target"],
        scale_source=out["scale_source"],
        sample_ratios=tuple(setting.sample_ratios),
        alphas=tuple(setting.alphas),
        depth=float(setting.depth),
        distance=out["distance"],
    )


# ------------------------------------------------------------------------------- Fig 2a


@dataclass(frozen=True)
class DepthSetting:
    """Fig 2a of Shachaf et al. 2021 (``Σ = I``): ``θ_T = αθ_S + ε``, ``θ_S ~ N(0, 4I)``,
    ``ε ~ N(0, I)``, ``n = d/10`` (the paper's words); ``d``, the grids and ``draws`` are ours.

    Attributes:
      d: input dimension (``n = d // 10``).
      depths: depths ``L ≥ 1`` (``math.inf``: eq. (6)).
      alphas: values of ``α``.
      draws: independent draws of ``(X, θ_S, ε)``.
    """

    d: int = 1000
    depths: tuple[float, ...] = (1.0, 2.0, 3.0, 5.0, 7.0, math.inf)
    alphas: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0)
    draws: int = 100

    def __post_init__(self):
        if self.d < 10 or not self.depths or min(self.depths) < 1 or self.draws < 1:
            raise ValueError("DepthSetting: need d >= 10, depths >= 1 and draws >= 1.")


class DepthRun(NamedTuple):
    """``R(β_L)/‖θ_S‖²`` per ``(draw, depth, α)`` (eq. (5); ``L = ∞``: eq. (6)).

    Attributes:
      risk: ``(draws, depths, α)``, from five norms per draw (:func:`_depth_draw`).
      depths, alphas: the grid.
      n: samples per draw.
      direct_risk: the same risks from the vectors, ``‖θ_T − β_L‖²/‖θ_S‖²`` (a second route
        to ``risk``: its reduction to norms is this module's, not the paper's).
      coefficient_residual: ``(draws, depths, α)``: the relative miss of the ``c_L`` used on
        its own equation evaluated on the vectors (:func:`_direct_risk`), which the norms
        ``‖P_∥θ_S‖`` and ``‖P_∥θ_T‖`` enter only through ``c_L``.
    """

    risk: Array
    depths: tuple[float, ...]
    alphas: tuple[float, ...]
    n: int
    direct_risk: Array
    coefficient_residual: Array


def _depth_draw(key, setting: DepthSetting):
    """One QR per draw: with ``Σ = I`` and ``θ_T = αθ_S + ε``, eq. (5) gives
    ``θ_T − β_L = (α − c_L)P_⊥θ_S + P_⊥ε``, so every depth and ``α`` needs only the norms
    ``A = ‖P_⊥θ_S‖``, ``C = ‖P_∥θ_S‖``, ``B = ‖P_∥θ_T‖``, ``⟨P_⊥θ_S, P_⊥ε⟩`` and ``‖P_⊥ε‖``
    (``c_L`` from :func:`~ntsim.theory.linear_teachers.deep_limit_scale`)."""
    d = setting.d
    k_x, k_s, k_e = jax.random.split(key, 3)
    x = jax.random.normal(k_x, (d // 10, d))
    theta_s = 2.0 * jax.random.normal(k_s, (d,))
    eps = jax.random.normal(k_e, (d,))
    q = _common._row_basis(x)  # (d, n)
    ps, pe = q.T @ theta_s, q.T @ eps  # row-space coordinates
    c = jnp.linalg.norm(ps)
    a = jnp.sqrt(jnp.maximum(theta_s @ theta_s - c**2, 0.0))
    cross = theta_s @ eps - ps @ pe  # ⟨P_⊥θ_S, P_⊥ε⟩
    eps_perp_sq = eps @ eps - pe @ pe  # ‖P_⊥ε‖²
    alphas = jnp.asarray(setting.alphas, x.dtype)
    b_row = jax.vmap(lambda al: jnp.linalg.norm(al * ps + pe))(alphas)
    rows, direct = [], []
    for depth in setting.depths:  # static
        depth = jnp.inf if math.isinf(depth) else depth
        coeff = jax.vmap(lambda b, depth=depth: _deep.deep_limit_scale(a, c, b, depth)
                         .coefficient)(b_row)  # fmt: skip
        gap = alphas - coeff
        rows.append((gap**2 * a**2 + 2 * gap * cross + eps_perp_sq) / (theta_s @ theta_s))
        direct.append(jax.vmap(lambda al, co, depth=depth: _direct_risk(
            al, co, theta_s, eps, q, depth))(alphas, coeff))  # fmt: skip
    risk_direct, residual = (jnp.stack(parts) for parts in zip(*direct, strict=True))
    return jnp.stack(rows), risk_direct, residual


def _direct_risk(alpha, coefficient, theta_s, eps, q, depth):
    """Eq. (5) from the vectors, no norm identity used: ``(‖θ_T − β_L‖²/‖θ_S‖², residual)``
    with ``θ_T = αθ_S + ε``, ``β_L = P_∥θ_T + c_L P_⊥θ_S`` (``P_∥ = QQᵀ``) and ``residual`` the
    relative miss of ``c_L`` on its own equation, ``c_L = (‖β_L‖/‖θ_S‖)^{(L−1)/L}`` (eq. (5);
    ``L = ∞``: ``c_∞ = ‖P_∥θ_T‖/‖P_∥θ_S‖``, eq. (6)), norms taken of the vectors."""
    target = alpha * theta_s + eps
    target_row, source_row = q @ (q.T @ target), q @ (q.T @ theta_s)
    beta = target_row + coefficient * (theta_s - source_row)
    source_norm = jnp.linalg.norm(theta_s)
    if math.isinf(depth):
        implied = jnp.linalg.norm(target_row) / jnp.linalg.norm(source_row)
    else:
        implied = (jnp.linalg.norm(beta) / source_norm) ** ((depth - 1.0) / depth)
    risk = jnp.sum(jnp.square(target - beta)) / source_norm**2
    return risk, (coefficient - implied) / implied


def simulate_depth_and_alpha(
    key: PRNGKey, setting: DepthSetting, *, progress: bool = False
) -> DepthRun:
    """Fig 2a risks (eq. (5)) for every depth and ``α``, swept over ``setting.draws`` keys.

    Examples:
      >>> import jax
      >>> run = simulate_depth_and_alpha(jax.random.PRNGKey(0), DepthSetting(d=20, draws=2))
      >>> run.risk.shape
      (2, 6, 4)
    """
    check_setting_type("simulate_depth_and_alpha", setting, DepthSetting)
    check_key("simulate_depth_and_alpha", key)
    risk, direct, residual = sweep_keys(_depth_draw, key, setting.draws, progress=progress,
                                        description="fig2a draws", setting=setting)  # fmt: skip
    return DepthRun(risk, tuple(setting.depths), tuple(setting.alphas), setting.d // 10, direct,
                    residual)  # fmt: skip
