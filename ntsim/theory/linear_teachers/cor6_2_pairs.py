r"""Cor. 6.2 of Shachaf et al. 2021 where its constant is tested: two inputs, any angle.

Cor. 6.2 bounds the RKHS-type norm of the fine-tuning residual, ``√(ỹᵀ(H^∞)⁻¹ỹ) ≤
3‖θ_T − θ_S‖`` (perfect pretraining, ``ỹ = X(θ_T − θ_S)``, unit-norm inputs). On random
inputs on the sphere the ratio stays near ``√2`` (nearly orthogonal rows make ``H^∞ ≈ I/2``),
so a bound with a much smaller constant holds there too. Two unit inputs with cosine ``t``
and the task gap ``v = θ_T − θ_S = α(x_1 − x_2)/‖x_1 − x_2‖`` have a closed form:
``ỹ = α√((1 − t)/2)·(1, −1)``, an eigenvector of ``H^∞ = [[½, t·m(t)], [t·m(t), ½]]`` with
``m(t) = (π − arccos t)/(2π)`` and eigenvalue ``½ − t·m(t)``, so

    √(ỹᵀ(H^∞)⁻¹ỹ) = ‖v‖·√(2(1 − t)/(1 − 2t·m(t))),

which is ``√2‖v‖`` at ``t = 0`` and tends to ``2‖v‖`` as ``t → −1`` (``m → 0``): the constant 2
of the bound ``2‖P_∥v‖`` (from ``H^∞ ⪰ XXᵀ/4``) cannot be lowered, and any constant below 2
in place of Cor. 6.2's 3 fails on nearly antipodal pairs.

:func:`simulate_cor6_2_pairs` draws such pairs (the plane rotated at random in ``R^d``) and
evaluates the project's ``H^∞`` (:func:`ntsim.core.two_layer_relu_hinf`), its norm
(:func:`~ntsim.theory.linear_teachers.hinf_norm`) and both bounds on them.

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


def cor6_2_pair_norm(cosine: ArrayLike, gap_norm: ArrayLike) -> Array:
    """``√(ỹᵀ(H^∞)⁻¹ỹ)`` in closed form for two unit inputs with cosine ``t`` and the task
    gap along ``x_1 − x_2`` (module doc).

    Examples:
      >>> round(float(cor6_2_pair_norm(0.0, 1.0)), 6)  # orthogonal: H^∞ = I/2, √2
      1.414214
      >>> round(float(cor6_2_pair_norm(-0.999, 1.0)), 3)  # nearly antipodal: → 2
      1.985
    """
    t = jnp.asarray(cosine, jnp.result_type(float))
    m = (math.pi - jnp.arccos(t)) / (2 * math.pi)
    return jnp.asarray(gap_norm) * jnp.sqrt(2 * (1 - t) / (1 - 2 * t * m))


@dataclass(frozen=True)
class Cor62PairSetting:
    """Pairs of unit inputs in ``R^d``: cosine uniform on ``[min_cosine, max_cosine]``,
    ``‖θ_T − θ_S‖`` log-uniform on ``[0.01, 10]`` (the statements are 1-homogeneous in it),
    ``θ_S ~ N(0, I)``."""

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
      gap_norm: ``‖θ_T − θ_S‖``.
      norm: ``√(ỹᵀ(H^∞)⁻¹ỹ)`` by the project's ``H^∞`` and Cholesky solve.
      printed: Cor. 6.2's ``3‖θ_T − θ_S‖``.
      derived: ``2‖P_∥(θ_T − θ_S)‖``.
      inputs_cosine: ``x_1·x_2`` recomputed from the rotated inputs.
    """

    cosine: Array
    gap_norm: Array
    norm: Array
    printed: Array
    derived: Array
    inputs_cosine: Array


def simulate_cor6_2_pairs(key: PRNGKey, setting: Cor62PairSetting) -> Cor62PairRun:
    """Cor. 6.2's quantities on random pairs (module doc)."""
    check_setting_type("simulate_cor6_2_pairs", setting, Cor62PairSetting)
    check_key("simulate_cor6_2_pairs", key)
    s = setting
    dtype = jnp.result_type(float)

    def instance(k):
        k_t, k_plane, k_source, k_scale = jax.random.split(k, 4)
        t = jax.random.uniform(k_t, (), dtype, s.min_cosine, s.max_cosine)
        basis, _ = jnp.linalg.qr(jax.random.normal(k_plane, (s.d, 2), dtype))  # a random plane
        x = jnp.stack([basis[:, 0], t * basis[:, 0] + jnp.sqrt(1 - t**2) * basis[:, 1]])
        direction = (x[0] - x[1]) / jnp.linalg.norm(x[0] - x[1])
        gap_norm = 10 ** jax.random.uniform(k_scale, (), dtype, -2.0, 1.0)
        theta_s = jax.random.normal(k_source, (s.d,), dtype)
        theta_t = theta_s + gap_norm * direction
        residual = x @ theta_t - x @ theta_s  # perfect pretraining: f(x; Θ_S) = xᵀθ_S
        return (
            t,
            jnp.linalg.norm(theta_t - theta_s),
            _relu.hinf_norm(two_layer_relu_hinf(x), residual),
            _relu.hinf_norm_bound_cor6_2(theta_s, theta_t),
            _relu.hinf_norm_bound_derived(x, theta_s, theta_t),
            x[0] @ x[1],
        )

    return Cor62PairRun(*jax.jit(jax.vmap(instance))(jax.random.split(key, s.pairs)))
