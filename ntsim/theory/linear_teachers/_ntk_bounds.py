"""Simulations behind Cor. 6.2 of Shachaf et al. 2021 (the H^∞ norm of the residual).

Inputs are uniform on the unit sphere (Sec 6 assumes ``‖x‖ = 1``); ``draws_per_n``
instances per sample size, each ``n`` from its own keys (``fold_in(key, j)``).

* :func:`simulate_hinf_psd` — ``λ_min(H^∞ − XXᵀ/4)/λ_max(H^∞)``.
* :func:`simulate_cor6_2` — perfect pretraining (``ỹ = X(θ_T − θ_S)``) with ``‖θ_T − θ_S‖``
  log-uniform on ``[0.01, 10]``: ``√(ỹᵀ(H^∞)⁻¹ỹ)``, Cor. 6.2's ``3‖θ_T − θ_S‖``, the tighter
  ``2‖P_∥(θ_T − θ_S)‖`` and an independent ``‖P_∥(θ_T − θ_S)‖`` (row-space projector).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim.core import two_layer_relu_hinf
from ntsim.theory.linear_teachers import _common, _relu

__all__ = ["Cor62Run", "NTKSizes", "simulate_cor6_2", "simulate_hinf_psd"]


@dataclass(frozen=True)
class NTKSizes:
    """Sizes (ours): input dimension ``d``, sample sizes, instances per size."""

    d: int = 30
    n_values: tuple[int, ...] = (5, 15, 29)
    draws_per_n: int = 70

    def __post_init__(self):
        if not self.n_values or min(self.n_values) < 1 or self.draws_per_n < 1:
            raise ValueError("NTKSizes: need n_values >= 1 and draws_per_n >= 1.")


def _per_n(key, fn, setting: NTKSizes):
    out = []
    for j, n in enumerate(setting.n_values):  # static n: one program per n
        keys = jax.random.split(jax.random.fold_in(key, j), setting.draws_per_n)
        out.append(jax.jit(jax.vmap(lambda k, n=n: fn(k, n)))(keys))
    return jax.tree.map(lambda *a: jnp.concatenate(a), *out)


def simulate_hinf_psd(key: PRNGKey, setting: NTKSizes) -> Array:
    """``λ_min(H^∞ − XXᵀ/4)/λ_max(H^∞)`` per instance (``n > d`` allowed)."""

    def margin(k, n):
        x = _relu.unit_norm_inputs(k, n, setting.d)
        hinf = two_layer_relu_hinf(x)
        return jnp.linalg.eigvalsh(hinf - x @ x.T / 4)[0] / jnp.linalg.eigvalsh(hinf)[-1]

    return _per_n(key, margin, setting)


class Cor62Run(NamedTuple):
    """Per instance: ``√(ỹᵀ(H^∞)⁻¹ỹ)`` (norm), ``3‖v‖`` (printed), ``2‖P_∥v‖`` (derived) and
    ``‖P_∥v‖`` by the row-space projector (p_par), ``v = θ_T − θ_S``."""

    norm: Array
    printed: Array
    derived: Array
    p_par: Array


def simulate_cor6_2(key: PRNGKey, setting: NTKSizes) -> Cor62Run:
    """Cor. 6.2 instances (module doc); needs ``n < d`` for the derived bound."""
    d = setting.d

    def instance(k, n):
        k_x, k_s, k_v, k_scale = jax.random.split(k, 4)
        x = _relu.unit_norm_inputs(k_x, n, d)
        theta_s = jax.random.normal(k_s, (d,))
        v = jax.random.normal(k_v, (d,))  # the statements are 1-homogeneous in v
        v = v / jnp.linalg.norm(v) * 10 ** jax.random.uniform(k_scale, minval=-2, maxval=1)
        theta_t = theta_s + v
        residual = x @ theta_t - x @ theta_s  # perfect pretraining: f(x; Θ_S) = xᵀθ_S
        return {
            "norm": _relu.hinf_norm(two_layer_relu_hinf(x), residual),
            "printed": _relu.hinf_norm_bound_cor6_2(theta_s, theta_t),
            "derived": _relu.hinf_norm_bound_derived(x, theta_s, theta_t),
            "p_par": jnp.linalg.norm(_common.row_space_projector(x) @ v),
        }

    return Cor62Run(**_per_n(key, instance, setting))
