r"""Cor. 6.2 of Shachaf et al. 2021 where its constant is tested: two inputs, any angle.

Cor. 6.2 bounds the RKHS-type norm of the fine-tuning residual, ``√(ỹᵀ(H^∞)⁻¹ỹ) ≤
3‖θ_T − θ_S‖`` (perfect pretraining, ``ỹ = X(θ_T − θ_S)``, unit-norm inputs). On random
inputs on the sphere the ratio stays near ``√2`` (nearly orthogonal rows make ``H^∞ ≈ I/2``),
so a bound with a much smaller constant holds there too. Two unit inputs with cosine ``t``
have a closed form. Write the task gap as ``v = a·u_− + b·u_+ + w`` with ``u_∓ = (x_1 ∓
x_2)/‖x_1 ∓ x_2‖`` and ``w`` orthogonal to both inputs. Then ``ỹ = a√(1 − t)·e_− +
b√(1 + t)·e_+`` with ``e_∓ = (1, ∓1)/√2``, the eigenvectors of ``H^∞ = [[½, t·m(t)], [t·m(t),
½]]`` (``m(t) = (π − arccos t)/(2π)``) with eigenvalues ``½ ∓ t·m(t)``, so

    ỹᵀ(H^∞)⁻¹ỹ = a²·2(1 − t)/(1 − 2t·m(t)) + b²·2(1 + t)/(1 + 2t·m(t)).

Along ``x_1 − x_2`` alone (``b = 0``, ``w = 0``) the ratio to ``‖v‖`` is ``√2`` at ``t = 0`` and
tends to 2 as ``t → −1`` (``m → 0``): the constant 2 of the bound ``2‖P_∥v‖`` (from ``H^∞ ⪰
XXᵀ/4``) cannot be lowered, and any constant below 2 in place of Cor. 6.2's 3 fails on
nearly antipodal pairs. The ``b`` term tests the other eigenvalue, and ``w`` the projection
``P_∥`` of the derived bound.

:func:`simulate_cor6_2_pairs` draws such pairs (the plane rotated at random in ``R^d``) and
evaluates the project's ``H^∞`` (:func:`ntsim.core.two_layer_relu_hinf`), its norm
(:func:`~ntsim.theory.linear_teachers.hinf_norm`) and both bounds on them, and the risk
bounds that use the norm: Thm. 6.1's main term ``2√(ỹᵀ(H^∞)⁻¹ỹ/n)`` and Cor. 6.3's
``6‖θ_T − θ_S‖/√n``, which is Thm. 6.1's with Cor. 6.2's bound put in for the norm.
Even-numbered pairs lie along ``x_1 − x_2`` (the worst case; pair 0 at the smallest cosine
exactly); odd-numbered pairs mix in ``u_+`` and, for ``d ≥ 3``, an orthogonal ``w``.

(A public submodule, not re-exported from :mod:`ntsim.theory.linear_teachers` yet: the
package's ``__init__`` is on the source path of every linear-teachers claim, so exporting it
re-hashes them all. Export it when that topic is next re-recorded.)
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
from ntsim.core import two_layer_relu_hinf
from ntsim.theory.linear_teachers import _relu

__all__ = ["Cor62PairRun", "Cor62PairSetting", "cor6_2_pair_norm", "simulate_cor6_2_pairs"]


def cor6_2_pair_norm(
    cosine: ArrayLike, difference_coefficient: ArrayLike, sum_coefficient: ArrayLike = 0.0
) -> Array:
    """``√(ỹᵀ(H^∞)⁻¹ỹ)`` in closed form for two unit inputs with cosine ``t`` and the task gap
    ``a·u_− + b·u_+ (+ w ⊥ x_1, x_2)`` (module doc).

    Args:
      cosine: ``t = x_1·x_2``, in ``(−1, 1)``.
      difference_coefficient: ``a``, the gap's coordinate along ``(x_1 − x_2)/‖x_1 − x_2‖``.
      sum_coefficient: ``b``, its coordinate along ``(x_1 + x_2)/‖x_1 + x_2‖``.

    Examples:
      >>> round(float(cor6_2_pair_norm(0.0, 1.0)), 6)  # orthogonal: H^∞ = I/2, √2
      1.414214
      >>> round(float(cor6_2_pair_norm(-0.999, 1.0)), 3)  # nearly antipodal: → 2
      1.985
      >>> round(float(cor6_2_pair_norm(0.0, 0.0, 1.0)), 6)  # both eigenvalues ½ at t = 0
      1.414214
    """
    t = jnp.asarray(cosine, jnp.result_type(float))
    tm = t * (math.pi - jnp.arccos(t)) / (2 * math.pi)
    a, b = jnp.asarray(difference_coefficient), jnp.asarray(sum_coefficient)
    return jnp.sqrt(a**2 * 2 * (1 - t) / (1 - 2 * tm) + b**2 * 2 * (1 + t) / (1 + 2 * tm))


@dataclass(frozen=True)
class Cor62PairSetting:
    """Pairs of unit inputs in ``R^d``: cosine uniform on ``[min_cosine, max_cosine]`` (pair 0
    at ``min_cosine``), in-plane gap norm ``√(a² + b²)`` log-uniform on ``[0.01, 10]`` (the
    statements are 1-homogeneous in it), ``θ_S ~ N(0, I)``. Even pairs: ``b = 0, w = 0``; odd
    pairs: ``(a, b)`` at a uniform angle, ``‖w‖`` uniform on ``[0, √(a² + b²)]`` (``d ≥ 3``)."""

    pairs: int = 2_000
    d: int = 5
    min_cosine: float = -0.99
    max_cosine: float = 0.99

    def __post_init__(self):
        where = "Cor62PairSetting"
        check_positive_int(where, "pairs", self.pairs)
        if check_positive_int(where, "d", self.d) < 2:
            raise ValueError(f"{where}: d must be >= 2 (a plane), got {self.d}.")
        if not -1.0 < self.min_cosine <= self.max_cosine < 1.0:
            raise ValueError(
                f"{where}: need -1 < min_cosine <= max_cosine < 1 (distinct, non-antipodal "
                f"inputs), got {self.min_cosine}, {self.max_cosine}."
            )


class Cor62PairRun(NamedTuple):
    """Per pair (axis 0).

    Attributes:
      cosine: ``t = x_1·x_2`` as drawn.
      difference_coefficient: ``a`` as drawn (module doc).
      sum_coefficient: ``b`` as drawn.
      off_plane_norm: ``‖w‖`` as drawn.
      gap_norm: ``‖θ_T − θ_S‖`` from the parameters.
      norm: ``√(ỹᵀ(H^∞)⁻¹ỹ)`` by the project's ``H^∞`` and Cholesky solve.
      printed: Cor. 6.2's ``3‖θ_T − θ_S‖``.
      derived: ``2‖P_∥(θ_T − θ_S)‖``.
      inputs_cosine: ``x_1·x_2`` recomputed from the rotated inputs.
      thm6_1: Thm. 6.1's main term ``2√(ỹᵀ(H^∞)⁻¹ỹ/n)`` (``n = 2``).
      cor6_3: Cor. 6.3's main term ``6‖θ_T − θ_S‖/√n`` (``n = 2``).
    """

    cosine: Array
    difference_coefficient: Array
    sum_coefficient: Array
    off_plane_norm: Array
    gap_norm: Array
    norm: Array
    printed: Array
    derived: Array
    inputs_cosine: Array
    thm6_1: Array
    cor6_3: Array


def simulate_cor6_2_pairs(key: PRNGKey, setting: Cor62PairSetting) -> Cor62PairRun:
    """Cor. 6.2's quantities on random pairs (module doc)."""
    check_setting_type("simulate_cor6_2_pairs", setting, Cor62PairSetting)
    check_key("simulate_cor6_2_pairs", key)
    s = setting
    dtype = jnp.result_type(float)
    k_t, k_angle, k_off, k_scale, k_rest = jax.random.split(key, 5)
    cosine = jax.random.uniform(k_t, (s.pairs,), dtype, s.min_cosine, s.max_cosine)
    cosine = cosine.at[0].set(s.min_cosine)  # the worst case in every draw
    mixed = jnp.arange(s.pairs) % 2 == 1
    angle = jnp.where(mixed, jax.random.uniform(k_angle, (s.pairs,), dtype, 0, 2 * math.pi), 0)
    in_plane = 10 ** jax.random.uniform(k_scale, (s.pairs,), dtype, -2.0, 1.0)
    off_fraction = jax.random.uniform(k_off, (s.pairs,), dtype) if s.d >= 3 else 0.0
    coefficients = (
        in_plane * jnp.cos(angle),
        in_plane * jnp.sin(angle),
        jnp.where(mixed, off_fraction * in_plane, 0.0),
    )

    def instance(k, t, a, b, c):
        k_plane, k_source = jax.random.split(k)
        # a random orthonormal frame: the inputs' plane and (d >= 3) one direction off it
        frame, _ = jnp.linalg.qr(jax.random.normal(k_plane, (s.d, min(s.d, 3)), dtype))
        x = jnp.stack([frame[:, 0], t * frame[:, 0] + jnp.sqrt(1 - t**2) * frame[:, 1]])
        difference = (x[0] - x[1]) / jnp.linalg.norm(x[0] - x[1])
        total = (x[0] + x[1]) / jnp.linalg.norm(x[0] + x[1])
        gap = a * difference + b * total + (c * frame[:, 2] if s.d >= 3 else 0.0)
        theta_s = jax.random.normal(k_source, (s.d,), dtype)
        theta_t = theta_s + gap
        residual = x @ theta_t - x @ theta_s  # perfect pretraining: f(x; Θ_S) = xᵀθ_S
        hinf = two_layer_relu_hinf(x)
        return (
            jnp.linalg.norm(theta_t - theta_s),
            _relu.hinf_norm(hinf, residual),
            _relu.hinf_norm_bound_cor6_2(theta_s, theta_t),
            _relu.hinf_norm_bound_derived(x, theta_s, theta_t),
            x[0] @ x[1],
            _relu.risk_bound_thm6_1(hinf, residual),
            _relu.risk_bound_cor6_3(theta_s, theta_t, 2),
        )

    keys = jax.random.split(k_rest, s.pairs)
    measured = jax.jit(jax.vmap(instance))(keys, cosine, *coefficients)
    return Cor62PairRun(cosine, *coefficients, *measured)
