r"""Lemma A.2.3 where it is tight: the bias-free hard-margin SVM of two points on a line.

Fu et al. 2023, Lemma A.2.3 bounds the bias of the (bias-unpenalised) hard-margin SVM,
``|b̂| ≤ 1 + ‖v̂‖B`` with ``B = max_i ‖x_i‖``. On random datasets the bound has room to spare
(a bound off by a factor on ``‖v̂‖B`` still holds there). On the two-point sets

    S = {(s·B, +1), (s·a, −1)},   −B < a < B,   s = ±1,

both points are support vectors of the SVM ``min ½v²`` s.t. ``y_i(v x_i − b) ≥ 1``
(score ``v x − b``), and the two active constraints give the closed form

    v̂ = 2s/(B − a),   b̂ = v̂·sB − 1 = 2B/(B − a) − 1,

so ``|v̂|B = 2B/(B − a) ≥ 1`` (as ``a > −B``), ``|b̂| = |v̂|B − 1`` and the bound exceeds
``|b̂|`` by exactly 2, whatever ``B`` and ``a``: the coefficient 1 of ``‖v̂‖B`` cannot be
lowered (as ``a → B``, ``|v̂|B → ∞``). :func:`simulate_two_point_svm` solves these sets with
the project's interior-point solver (:func:`ntsim.core.hard_margin_svm`, float64) and evaluates
the lemma's bound (:func:`ntsim.theory.stability.lemma_a2_3_bound`) on the solutions.

(A public submodule, not re-exported from :mod:`ntsim.theory.stability` yet: the package's
``__init__`` is on the source path of every stability claim, so exporting it re-hashes them
all. Export it when that topic is next re-recorded.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ntsim._validation import check_key, check_positive, check_positive_int, check_setting_type
from ntsim.core import hard_margin_svm
from ntsim.theory.stability._head_tuning import lemma_a2_3_bound

__all__ = [
    "TwoPointSvmRun",
    "TwoPointSvmSetting",
    "simulate_two_point_svm",
    "two_point_svm_closed_form",
]


def two_point_svm_closed_form(radius: ArrayLike, other: ArrayLike, sign: ArrayLike = 1.0):
    """``(v̂, b̂)`` of the bias-free hard-margin SVM of ``{(s·B, +1), (s·a, −1)}``, ``a < B``.

    Examples:
      >>> v, b = two_point_svm_closed_form(2.0, 0.0)  # points 2 (+1) and 0 (−1)
      >>> float(v), float(b)  # v·2 − b = 1, v·0 − b = −1
      (1.0, 1.0)
      >>> v, b = two_point_svm_closed_form(2.0, 0.0, sign=-1.0)  # mirrored: −2 (+1), 0 (−1)
      >>> float(v), float(b)
      (-1.0, 1.0)
    """
    radius, other, sign = (jnp.asarray(a, jnp.result_type(float)) for a in (radius, other, sign))
    weight = 2.0 * sign / (radius - other)
    return weight, weight * sign * radius - 1.0


@dataclass(frozen=True)
class TwoPointSvmSetting:
    """Random two-point sets ``{(s·B, +1), (s·a, −1)}``.

    ``B`` log-uniform on ``[min_radius, max_radius]``, ``a = u·B`` with ``u`` uniform on
    ``[−max_ratio, max_ratio]`` (so ``|v̂|B = 2/(1 − u)`` spans ``[2/(1 + r), 2/(1 − r)]``),
    ``s = ±1`` with probability ½ each. Pairs 0 and 1 sit at ``u = ±max_ratio`` exactly.
    """

    pairs: int = 2_000
    min_radius: float = 0.1
    max_radius: float = 10.0
    max_ratio: float = 0.95

    def __post_init__(self):
        where = "TwoPointSvmSetting"
        check_positive_int(where, "pairs", self.pairs)
        check_positive(where, "min_radius", self.min_radius)
        if not self.max_radius >= self.min_radius:
            raise ValueError(f"{where}: need max_radius >= min_radius, got {self.max_radius}.")
        if not 0.0 < self.max_ratio < 1.0:
            raise ValueError(f"{where}: max_ratio must lie in (0, 1), got {self.max_ratio}.")


class TwoPointSvmRun(NamedTuple):
    """Per pair (axis 0, length ``pairs``).

    Attributes:
      radius: ``B = max_i |x_i|``.
      other: ``a`` (the negative point is ``s·a``).
      sign: ``s``.
      weight: the solver's ``v̂``.
      bias: the solver's ``b̂``.
      bias_bound: Lemma A.2.3's ``1 + |v̂|B`` at the solver's ``v̂``.
      kkt: the worst KKT residual of the solves (a scalar).
    """

    radius: jax.Array
    other: jax.Array
    sign: jax.Array
    weight: jax.Array
    bias: jax.Array
    bias_bound: jax.Array
    kkt: jax.Array


def simulate_two_point_svm(key, setting: TwoPointSvmSetting) -> TwoPointSvmRun:
    """Solve the SVM of ``setting.pairs`` random two-point sets and evaluate Lemma A.2.3."""
    check_setting_type("simulate_two_point_svm", setting, TwoPointSvmSetting)
    check_key("simulate_two_point_svm", key)
    s = setting
    dtype = jnp.result_type(float)
    k_radius, k_ratio, k_sign = jax.random.split(key, 3)
    log_radius = jax.random.uniform(k_radius, (s.pairs,), dtype, jnp.log(s.min_radius),
                                    jnp.log(s.max_radius))  # fmt: skip
    radius = jnp.exp(log_radius)
    ratio = jax.random.uniform(k_ratio, (s.pairs,), dtype, -s.max_ratio, s.max_ratio)
    # the extremes in every draw: pair 0 at u = max_ratio (the largest |v̂|B), pair 1 at −max_ratio
    ratio = ratio.at[: min(2, s.pairs)].set(jnp.asarray([s.max_ratio, -s.max_ratio])[: s.pairs])
    other = radius * ratio
    sign = jnp.where(jax.random.bernoulli(k_sign, 0.5, (s.pairs,)), 1.0, -1.0).astype(dtype)
    labels = jnp.asarray([1.0, -1.0], dtype)

    def one(b, a, sg):
        solution = hard_margin_svm(jnp.stack([sg * b, sg * a])[:, None], labels,
                                   penalize_bias=False)  # fmt: skip
        weight = solution.weights[0]
        return weight, solution.bias, lemma_a2_3_bound(jnp.abs(weight), b), solution.kkt_residual

    weight, bias, bound, kkt = jax.jit(jax.vmap(one))(radius, other, sign)
    return TwoPointSvmRun(radius, other, sign, weight, bias, bound, jnp.max(kkt))
