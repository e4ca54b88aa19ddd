r"""Thm 3 of Rahimi Afzal et al. (2025) where its constant is tested: a quadratic model.

Thm 3 bounds the gap between the fine-tuned network and its linearisation,
``Δ(t) = ‖f_θt(x*) − f̄_θ̄t(x*)‖ ≤ b(t − (1 − e^{−λt})/λ)``, ``b = 2L²r_0((4/λ)L_∇r_0 + 1)``
(``L = Lip(f)``, ``L_∇ = Lip(∇f)``, ``r_0 = ‖f_θ0(x*) − y*‖``). On random networks the gap
stays well inside it, so a bound with half the ``L_∇`` term holds there too. One training
input and a model that is quadratic along it have a closed-form onset. Let ``x`` be a unit
vector, ``s = x·(θ − θ_0)`` (``θ_0 ⊥ x``) and

    f_θ(x) = a·s + (c/2)·s²,   ρ = f_θ0(x) − y* (so r_0 = |ρ|).

``J_θ = (a + cs)xᵀ`` and ``∇f`` is exactly ``|c|``-Lipschitz. Both flows ``θ̇ = −∇R̃ᵀ −
λ(θ − θ_0)`` stay on the line ``θ_0 + s·x``: the network's coordinate solves ``ṡ = g(s) =
−2(a + cs)(as + cs²/2 + ρ) − λs`` and the linearisation's ``s̄̇ = −A·s̄ − 2aρ``, ``A = 2a² +
λ``, so its residual is

    f̄_t − y* = ρ(λ + 2a²e^{−At})/A.

Expanding both to third order in ``t`` (``s'' = g'(s)g(s)``, ``g'(0) = −2cρ − A``),

    f_t − f̄_t = 4a²cρ²·t²·(1 − ((8/3)a² + (4/3)cρ + (5/6)λ)·t + O(t²)),

so ``Δ(t)/t² → 4L²L_∇r_0²`` with ``L = |a|`` (the slope at ``θ_0``), ``L_∇ = |c|``. The bound's
small-``t`` limit is ``bλt²/2 = (4L²L_∇r_0² + λL²r_0)t²``: the ratio ``Δ/bound`` tends to
``1/(1 + λ/(4L_∇r_0))``, so for ``λ ≪ L_∇r_0`` the bound is attained to leading order and
its constant 4 cannot be lowered (with ``2`` in its place the bound fails once
``λ < 2L_∇r_0``). When ``cρ > 0`` the slope ``|a + cs|`` falls along the path, so the path
maximum of ``‖J‖`` is ``|a|`` and the limit is reached; when ``cρ < 0`` it grows and the
path maximum loosens the bound.

:func:`simulate_quadratic_gap` runs both flows with the project's solver
(:func:`ntsim.core.gradient_flow` through the Lemma-3 flow of this package), measures
``Lip(f)`` and ``Lip(∇f)`` along the path from Jacobians as the network claims do, and
returns the coordinates the closed forms need. Even-numbered instances have ``cρ > 0`` (the
tight case), odd-numbered ones ``cρ < 0``.

(A public submodule, not re-exported from :mod:`ntsim.theory.linearization`: the package's
``__init__`` is on the source path of every linearization claim, so exporting it re-hashes
them all. Export it when that topic is next re-recorded.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_positive_int, check_setting_type
from ntsim.core import linearize
from ntsim.theory.linearization import _dynamics

__all__ = [
    "QuadraticGapRun",
    "QuadraticGapSetting",
    "quadratic_gap_onset",
    "quadratic_linear_residual",
    "simulate_quadratic_gap",
]


def quadratic_linear_residual(
    slope: ArrayLike, residual0: ArrayLike, proximal: ArrayLike, t: ArrayLike
) -> Array:
    """The linearised flow's residual ``f̄_t − y* = ρ(λ + 2a²e^{−At})/A``, ``A = 2a² + λ``
    (module doc).

    Args:
      slope: ``a``, the model's slope at ``θ_0`` along ``x``.
      residual0: ``ρ = f_θ0(x) − y*`` (signed).
      proximal: ``λ ≥ 0``.
      t: times.

    Examples:
      >>> float(quadratic_linear_residual(1.0, 1.0, 0.0, 0.0))  # starts at ρ
      1.0
      >>> round(float(quadratic_linear_residual(1.0, 1.0, 2.0, 100.0)), 12)  # λ/A of ρ kept
      0.5
    """
    a, rho = jnp.asarray(slope), jnp.asarray(residual0)
    lam, t = jnp.asarray(proximal), jnp.asarray(t)
    rate = 2 * a**2 + lam
    return rho * (lam + 2 * a**2 * jnp.exp(-rate * t)) / rate


def quadratic_gap_onset(
    slope: ArrayLike, curvature: ArrayLike, residual0: ArrayLike, proximal: ArrayLike
) -> tuple[Array, Array]:
    """``(α, β)`` of ``f_t − f̄_t = α·t²·(1 − β·t + O(t²))`` on the quadratic model: ``α =
    4a²cρ²``, ``β = (8/3)a² + (4/3)cρ + (5/6)λ`` (module doc).

    Examples:
      >>> alpha, beta = quadratic_gap_onset(1.0, 0.5, 1.0, 0.0)
      >>> float(alpha), round(float(beta), 6)
      (2.0, 3.333333)
    """
    a, c = jnp.asarray(slope), jnp.asarray(curvature)
    rho, lam = jnp.asarray(residual0), jnp.asarray(proximal)
    return 4 * a**2 * c * rho**2, 8 / 3 * a**2 + 4 / 3 * c * rho + 5 / 6 * lam


@dataclass(frozen=True)
class QuadraticGapSetting:
    """Quadratic-model instances (module doc) in ``R^d``: ``a ~ U[0.5, 2]``, ``r_0 ~ U[0.5,
    2]`` with a random sign of ``ρ``, ``|c| = q·a²/r_0`` with ``q`` log-uniform on ``[0.1,
    3]``, ``λ = 4ε|c|r_0`` with ``ε`` log-uniform on ``[0.01, 1]`` (the limit ratio ``1/(1 +
    ε)`` spans ``[0.5, 0.99]``); ``times`` times log-uniform on ``[min_time, max_time]/A``
    plus ``t = 0``; both flows by diffrax at ``rtol = atol = tol``."""

    instances: int = 200
    d: int = 3
    times: int = 25
    min_time: float = 1e-3
    max_time: float = 10.0
    tol: float = 1e-12

    def __post_init__(self):
        where = "QuadraticGapSetting"
        check_positive_int(where, "instances", self.instances)
        check_positive_int(where, "d", self.d)
        check_positive_int(where, "times", self.times)
        if not 0 < self.min_time < self.max_time:
            raise ValueError(
                f"{where}: need 0 < min_time < max_time, got {self.min_time}, {self.max_time}."
            )
        if not 0 < self.tol < 1:
            raise ValueError(f"{where}: tol must be in (0, 1), got {self.tol}.")


class QuadraticGapRun(NamedTuple):
    """Per instance (axis 0); ``T = times + 1`` recorded times (axis 1).

    Attributes:
      times: ``(I, T)`` flow times, ``t_0 = 0``.
      gap: ``(I, T)`` ``Δ(t) = |f_θt(x) − f̄_θ̄t(x)|``.
      lip: path maximum of ``‖J_θt‖_op`` over the recorded times.
      lip_grad: path maximum of ``‖J_θt − J_θ0‖_op/‖θ_t − θ_0‖`` (``t > 0``).
      r0: ``|f_θ0(x) − y*|`` from the model's outputs.
      lam: ``λ``.
      slope, curvature, residual0: the drawn ``a``, ``c`` and signed ``ρ``.
      coordinate: ``(I, T)`` ``s_t = x·(θ_t − θ_0)`` of the network's flow.
      linear_residual: ``(I, T)`` ``f̄_θ̄t(x) − y*``.
    """

    times: Array
    gap: Array
    lip: Array
    lip_grad: Array
    r0: Array
    lam: Array
    slope: Array
    curvature: Array
    residual0: Array
    coordinate: Array
    linear_residual: Array


def simulate_quadratic_gap(key: PRNGKey, setting: QuadraticGapSetting) -> QuadraticGapRun:
    """Thm 3's gap on the quadratic model (module doc), :class:`QuadraticGapRun`."""
    check_setting_type("simulate_quadratic_gap", setting, QuadraticGapSetting)
    check_key("simulate_quadratic_gap", key)
    s = setting
    dtype = jnp.result_type(float)
    grid = jnp.concatenate([
        jnp.zeros((1,), dtype),
        jnp.logspace(math.log10(s.min_time), math.log10(s.max_time), s.times, dtype=dtype),
    ])  # fmt: skip

    def one(k, tight):
        k_a, k_r, k_sign, k_q, k_eps, k_x, k_theta = jax.random.split(k, 7)
        a = jax.random.uniform(k_a, (), dtype, 0.5, 2.0)
        r0 = jax.random.uniform(k_r, (), dtype, 0.5, 2.0)
        rho = jnp.where(jax.random.bernoulli(k_sign), r0, -r0)
        q = 10 ** jax.random.uniform(k_q, (), dtype, -1.0, math.log10(3.0))
        c = jnp.where(tight, 1.0, -1.0) * jnp.sign(rho) * q * a**2 / r0
        lam = 4 * 10 ** jax.random.uniform(k_eps, (), dtype, -2.0, 0.0) * jnp.abs(c) * r0
        x = jax.random.normal(k_x, (s.d,), dtype)
        x = x / jnp.linalg.norm(x)
        z = jax.random.normal(k_theta, (s.d,), dtype)
        params0 = {"w": z - (z @ x) * x}  # θ_0 ⊥ x: s = 0 and f_θ0(x) = 0 at θ_0

        def apply(params, inputs):
            along = inputs @ params["w"]
            return a * along + 0.5 * c * along**2

        inputs, target = x[None], -rho[None]
        times = grid / (2 * a**2 + lam)
        flow = _dynamics.flow_path(
            apply, params0, inputs, target, proximal=lam, times=times, rtol=s.tol, atol=s.tol
        )
        flow_lin = _dynamics.flow_path(
            apply, params0, inputs, target, proximal=lam, times=times, linearised=True,
            rtol=s.tol, atol=s.tol,
        )  # fmt: skip
        lin = linearize(apply, params0)
        out = jax.vmap(lambda p: _dynamics.outputs(apply, p, inputs))(flow)
        out_lin = jax.vmap(lambda p: _dynamics.outputs(lin, p, inputs))(flow_lin)
        jacs = jax.vmap(lambda p: _dynamics.flat_jacobian(apply, p, inputs))(flow)
        jac_norms = jnp.linalg.norm(jacs, axis=(1, 2))  # one row: ‖·‖_op = ‖·‖_F
        moved = flow["w"] - params0["w"]
        distance = jnp.linalg.norm(moved, axis=1)
        jac_change = jnp.linalg.norm(jacs - jacs[:1], axis=(1, 2))
        lip_grad = jnp.max(jac_change[1:] / distance[1:])
        r0_measured = jnp.linalg.norm(_dynamics.outputs(apply, params0, inputs) - target)
        return QuadraticGapRun(
            times, jnp.linalg.norm(out - out_lin, axis=1), jnp.max(jac_norms), lip_grad,
            r0_measured, lam, a, c, rho, moved @ x, out_lin[:, 0] - target[0],
        )  # fmt: skip

    keys = jax.random.split(key, s.instances)
    tight = jnp.arange(s.instances) % 2 == 0
    return jax.jit(jax.vmap(one))(keys, tight)
