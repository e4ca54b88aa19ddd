"""Simulations behind Thm 4.2 of Shachaf et al. 2021 and the ``Σ = I`` expectation of ``R(γ)``.

Each draws ``draws_per_n`` instances per sample size ``n`` from split keys: an instance is
drawn once with ``max(n_values)`` rows and group ``j`` sees the first ``n_values[j]`` rows
(rows are i.i.d., so a prefix is an ``n``-sample draw).

* :func:`simulate_thm4_2_deterministic` — ``Σ = V diag(λ) Vᵀ`` (Haar ``V``, ``λ``
  log-uniform on ``spectrum_range``), ``θ_S, θ_T ~ N(0, I)``: the ratios lhs/rhs of the
  constant-free bound (3) for every ``m``, of Davis–Kahan ``‖P_⊥V_{≤m}‖ ≤ ĝ/λ_m``, and of
  ``R(γ) ≤ ĝ‖P_⊥v‖²`` (:func:`bound_thm4_2_deterministic`, :func:`null_space_top_overlap`,
  :func:`risk_null_space_bound`).
* :func:`simulate_implied_constant` — power-law ``λ_k = k^{-p}``: the constant ``c`` that
  ``ĝ = ‖Σ̃ − Σ‖`` implies in ``g(λ, δ, n)`` (:func:`implied_constant`, ``δ = 1``).
* :func:`simulate_identity_risk` — ``Σ = I``: ``R(γ)/(((d−n)/d)‖θ_T − θ_S‖²)``, whose
  expectation is exactly 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import covariance, gaussian_inputs, power_law_spectrum, random_orthogonal
from ntsim.theory.linear_teachers import _bounds, _regression

__all__ = [
    "THM4_2_DETERMINISTIC_SETTINGS",
    "IdentityRiskRun",
    "ImpliedConstantRun",
    "SizesSetting",
    "Thm42Run",
    "simulate_identity_risk",
    "simulate_implied_constant",
    "simulate_thm4_2_deterministic",
]


@dataclass(frozen=True)
class SizesSetting:
    """Sizes of the Thm 4.2 / ``Σ = I`` simulations (ours; the paper gives none).

    Attributes:
      d: input dimension.
      n_values: sample sizes.
      draws_per_n: instances per sample size.
      spectrum_range: log-uniform eigenvalue range (deterministic bound).
      power_law: exponent ``p`` of ``λ_k = k^{-p}`` (implied constant).
    """

    d: int = 30
    n_values: tuple[int, ...] = (2, 8, 15, 22, 29)
    draws_per_n: int = 40
    spectrum_range: tuple[float, float] = (0.02, 2.0)
    power_law: float = 1.0

    def __post_init__(self):
        if not self.n_values or min(self.n_values) < 1 or self.draws_per_n < 1:
            raise ValueError("SizesSetting: need n_values >= 1 and draws_per_n >= 1.")
        if not all(math.isfinite(v) and v > 0 for v in self.spectrum_range):
            raise ValueError(
                "SizesSetting.spectrum_range must hold two positive finite eigenvalues (a "
                f"log-uniform range; either order), got {self.spectrum_range!r}."
            )


def _over_sizes(key, instance_fn, fn, setting: SizesSetting):
    """``fn`` on ``draws_per_n`` instances per sample size, and the sizes it actually saw.

    Returns ``(outputs stacked over sizes, sizes)``; ``sizes`` is read from the inputs each
    group was given (not copied from the setting), so a run reports the ``n`` it measured.
    """
    ns, per_n = setting.n_values, setting.draws_per_n
    keys = jax.random.split(key, len(ns) * per_n)
    instances = jax.jit(jax.vmap(lambda k: instance_fn(k, max(ns))))(keys)
    outs, sizes = [], []
    for j, n in enumerate(ns):
        group = jax.tree.map(lambda a, j=j: a[j * per_n : (j + 1) * per_n], instances)
        x = group["x"][:, :n]
        sizes.append(int(x.shape[1]))
        outs.append(jax.jit(jax.vmap(fn))({**group, "x": x}))
    return jax.tree.map(lambda *a: jnp.stack(a), *outs), tuple(sizes)


class Thm42Run(NamedTuple):
    """Ratios lhs/rhs (``≤ 1`` where the statement holds), per ``(n, draw[, m])``.

    Attributes:
      bound: ``R(γ)/bound(3)`` for every ``m = 1..d``, ``(n, draws, d)``.
      davis_kahan: ``‖P_⊥V_{≤m}‖·λ_m/ĝ``, ``(n, draws, d)``.
      null_space: ``R(γ)/(ĝ‖P_⊥v‖²)``, ``(n, draws)``.
      n_values: the sample sizes, as measured on the inputs of each group.
    """

    bound: Array
    davis_kahan: Array
    null_space: Array
    n_values: tuple[int, ...]


def simulate_thm4_2_deterministic(key: PRNGKey, setting: SizesSetting) -> Thm42Run:
    """Thm 4.2 deterministic ratios (module doc)."""
    check_setting_type("simulate_thm4_2_deterministic", setting, SizesSetting)
    check_key("simulate_thm4_2_deterministic", key)
    d = setting.d
    lo, hi = setting.spectrum_range

    def instance(k, n):
        k_spec, k_basis, k_x, k_s, k_t = jax.random.split(k, 5)
        u = jax.random.uniform(k_spec, (d,))
        spectrum = jnp.sort(lo * (hi / lo) ** u)[::-1]
        basis = random_orthogonal(k_basis, d)
        return {
            "sigma": covariance(spectrum, basis),
            "x": gaussian_inputs(k_x, n, spectrum, basis),
            "theta_s": jax.random.normal(k_s, (d,)),
            "theta_t": jax.random.normal(k_t, (d,)),
        }

    def ratios(inst):
        x, ts, tt, sigma = inst["x"], inst["theta_s"], inst["theta_t"], inst["sigma"]
        risk = _regression.risk_thm4_1(x, ts, tt, sigma)
        g = _bounds.realised_deviation(x, sigma)
        spectrum = jnp.linalg.eigvalsh(sigma)[::-1]
        return {
            "bound": risk / _bounds.bound_thm4_2_deterministic(x, ts, tt, sigma),
            "davis_kahan": _bounds.null_space_top_overlap(x, sigma) * spectrum / g,
            "null_space": risk / _bounds.risk_null_space_bound(x, ts, tt, sigma),
        }

    out, sizes = _over_sizes(key, instance, ratios, setting)
    return Thm42Run(**out, n_values=sizes)


class ImpliedConstantRun(NamedTuple):
    """``c`` per ``(n, draw)`` and the effective rank ``r_0`` of the spectrum."""

    c: Array
    effective_rank: Array
    n_values: tuple[int, ...]


def simulate_implied_constant(key: PRNGKey, setting: SizesSetting) -> ImpliedConstantRun:
    """Implied constant of Thm 4.2's ``g`` for Gaussian data (module doc)."""
    check_setting_type("simulate_implied_constant", setting, SizesSetting)
    check_key("simulate_implied_constant", key)
    d = setting.d
    spectrum = power_law_spectrum(d, setting.power_law)

    def instance(k, n):
        k_basis, k_x = jax.random.split(k)
        basis = random_orthogonal(k_basis, d)
        return {"sigma": covariance(spectrum, basis), "x": gaussian_inputs(k_x, n, spectrum, basis)}

    c, sizes = _over_sizes(
        key, instance, lambda inst: _bounds.implied_constant(inst["x"], inst["sigma"], delta=1.0),
        setting,
    )  # fmt: skip
    return ImpliedConstantRun(c, _bounds.effective_rank(spectrum), sizes)


class IdentityRiskRun(NamedTuple):
    """``R(γ)/(((d−n)/d)‖θ_T − θ_S‖²)`` per ``(n, draw)`` (``Σ = I``)."""

    ratio: Array
    n_values: tuple[int, ...]
    d: int


def simulate_identity_risk(key: PRNGKey, setting: SizesSetting) -> IdentityRiskRun:
    """``Σ = I``, Gaussian ``X``, ``θ_S, θ_T ~ N(0, I)`` (module doc)."""
    check_setting_type("simulate_identity_risk", setting, SizesSetting)
    check_key("simulate_identity_risk", key)
    d = setting.d

    def instance(k, n):
        k_x, k_s, k_t = jax.random.split(k, 3)
        return {
            "x": jax.random.normal(k_x, (n, d)),
            "theta_s": jax.random.normal(k_s, (d,)),
            "theta_t": jax.random.normal(k_t, (d,)),
        }

    def ratio(inst):
        x, ts, tt = inst["x"], inst["theta_s"], inst["theta_t"]
        n = x.shape[0]
        risk = _regression.risk_thm4_1(x, ts, tt, jnp.eye(d, dtype=x.dtype))
        return risk / ((d - n) / d * jnp.sum((tt - ts) ** 2))

    ratios, sizes = _over_sizes(key, instance, ratio, setting)
    return IdentityRiskRun(ratios, sizes, d)


THM4_2_DETERMINISTIC_SETTINGS = {
    "quick": SizesSetting(d=30, n_values=(2, 8, 15, 22, 29), draws_per_n=40),
    "full": SizesSetting(d=80, n_values=(5, 20, 40, 60, 79), draws_per_n=40),
}
"""Thm 4.2 deterministic ratios per scale (the claim and ``fig1_covariance_alignment``)."""
