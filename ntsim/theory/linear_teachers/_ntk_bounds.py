"""Simulations behind Sec 6 of Shachaf et al. 2021: ``H^∞`` and Cor. 6.2.

Inputs are uniform on the unit sphere (Sec 6 assumes ``‖x‖ = 1``); ``draws_per_n``
instances per sample size, each ``n`` from its own keys (``fold_in(key, j)``).

* :func:`simulate_hinf_psd` — ``λ_min(H^∞ − XXᵀ/4)/λ_max(H^∞)``.
* :func:`simulate_cor6_2` — perfect pretraining (``ỹ = X(θ_T − θ_S)``) with ``‖θ_T − θ_S‖``
  log-uniform on ``[0.01, 10]``: ``√(ỹᵀ(H^∞)⁻¹ỹ)``, Cor. 6.2's ``3‖θ_T − θ_S‖``, the tighter
  ``2‖P_∥(θ_T − θ_S)‖`` and an independent ``‖P_∥(θ_T − θ_S)‖`` (row-space projector).
* :func:`simulate_hinf_gram` — the first-layer Gram ``H_m`` of a width-``m`` two-layer ReLU
  net at random init (:func:`ntsim.core.empirical_ntk_fn`) against the closed-form ``H^∞``
  and the exact Monte Carlo variance of ``H_m`` (a mean of ``m`` i.i.d. terms).
* :func:`simulate_hinf_fixture` — the closed-form ``H^∞`` on the inputs of a reference file
  written by neural-tangents (``make nt-fixtures``), with the reference values.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import empirical_ntk_fn, random_signs, two_layer_relu, two_layer_relu_hinf
from ntsim.theory.linear_teachers import _common, _relu

__all__ = [
    "Cor62Run",
    "HinfFixtureRun",
    "HinfFixtureSetting",
    "HinfGramRun",
    "HinfGramSetting",
    "NTKSizes",
    "simulate_cor6_2",
    "simulate_hinf_fixture",
    "simulate_hinf_gram",
    "simulate_hinf_psd",
]


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
    check_setting_type("simulate_hinf_psd", setting, NTKSizes)
    check_key("simulate_hinf_psd", key)

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
    check_setting_type("simulate_cor6_2", setting, NTKSizes)
    check_key("simulate_cor6_2", key)
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


# ----------------------------------------------------- H^∞ vs the finite-width Gram matrix


@dataclass(frozen=True)
class HinfGramSetting:
    """Sizes of :func:`simulate_hinf_gram` (ours).

    Attributes:
      n, d: sample size and input dimension (unit-norm rows).
      widths: network widths ``m``.
      draws: independent draws of ``(X, a, W)`` per width (the same keys at every width).
    """

    n: int = 12
    d: int = 10
    widths: tuple[int, ...] = (256, 1024, 4096)
    draws: int = 32

    def __post_init__(self):
        if self.n < 1 or self.d < 1 or self.draws < 2 or min(self.widths) < 1:
            raise ValueError("HinfGramSetting: need n, d, widths >= 1 and draws >= 2.")


class HinfGramRun(NamedTuple):
    """Shapes ``(len(widths), draws)``.

    Attributes:
      error_sq: ``‖H_m − H^∞‖_F²``, ``H_m`` the empirical NTK w.r.t. the first layer.
      expected_sq: ``E‖H_m − H^∞‖_F² = (1/m) Σ_ij (x_iᵀx_j)² p_ij(1 − p_ij)``,
        ``p_ij = (π − arccos x_iᵀx_j)/(2π)`` (``H_m`` is a mean of ``m`` i.i.d. terms
        ``x_iᵀx_j 1[w_rᵀx_i ≥ 0]1[w_rᵀx_j ≥ 0]``, each a Bernoulli(``p_ij``) times ``x_iᵀx_j``).
      widths: the widths.
    """

    error_sq: Array
    expected_sq: Array
    widths: tuple[int, ...]


def _gram_instance(key, setting: HinfGramSetting, width: int):
    k_x, k_signs, k_w = jax.random.split(key, 3)
    x = _relu.unit_norm_inputs(k_x, setting.n, setting.d)
    signs = random_signs(k_signs, width)
    params = two_layer_relu(signs).init(k_w, x[0])
    exact = two_layer_relu_hinf(x)
    empirical = empirical_ntk_fn(two_layer_relu(signs).apply)(x, None, params)
    gram = x @ x.T
    # p_ij from its own formula (not from H^∞): the variance is independent of the closed form
    p = (jnp.pi - jnp.arccos(jnp.clip(gram, -1.0, 1.0))) / (2 * jnp.pi)
    return jnp.sum((empirical - exact) ** 2), jnp.sum(gram**2 * p * (1 - p)) / width


def simulate_hinf_gram(key: PRNGKey, setting: HinfGramSetting) -> HinfGramRun:
    """``‖H_m − H^∞‖_F²`` and its exact expectation per (width, draw); the draws use
    ``jax.random.split(key, draws)`` at every width (``lax.map`` bounds memory)."""
    check_setting_type("simulate_hinf_gram", setting, HinfGramSetting)
    check_key("simulate_hinf_gram", key)
    keys = jax.random.split(key, setting.draws)
    errors, expected = [], []
    for width in setting.widths:  # static shapes
        fn = lambda k, w=width: _gram_instance(k, setting, w)  # noqa: E731
        e2, p2 = jax.jit(lambda ks, fn=fn: jax.lax.map(fn, ks))(keys)
        errors.append(e2)
        expected.append(p2)
    return HinfGramRun(jnp.stack(errors), jnp.stack(expected), tuple(setting.widths))


# ------------------------------------------------------------- H^∞ vs neural-tangents


@dataclass(frozen=True)
class HinfFixtureSetting:
    """The neural-tangents reference file (in ``tests/fixtures`` of a source checkout,
    written by ``make nt-fixtures``: ``ntk − nngp`` of Dense-Relu-Dense on ``√d·x``, float64,
    neural-tangents 0.6.5)."""

    fixture: str = "nt_relu_analytic.npz"


class HinfFixtureRun(NamedTuple):
    """``measured``: the closed-form ``H^∞(x1, x2)``; ``reference``: neural-tangents'."""

    measured: Array
    reference: Array


def simulate_hinf_fixture(key: PRNGKey, setting: HinfFixtureSetting) -> HinfFixtureRun:
    """The closed-form ``H^∞`` on the reference file's inputs (deterministic: ``key`` unused).

    Raises:
      FileNotFoundError: the reference file is missing (run from a source checkout).
    """
    check_setting_type("simulate_hinf_fixture", setting, HinfFixtureSetting)
    del key
    import ntsim

    path = pathlib.Path(ntsim.__file__).parents[1] / "tests" / "fixtures" / setting.fixture
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: the neural-tangents reference is written by "
            "`make nt-fixtures` (tests/fixtures/README.md); run from a source checkout."
        )
    with np.load(path) as data:
        x1, x2, reference = data["hinf_x1"], data["hinf_x2"], data["hinf"]
    return HinfFixtureRun(two_layer_relu_hinf(jnp.asarray(x1), jnp.asarray(x2)),
                          jnp.asarray(reference))  # fmt: skip
