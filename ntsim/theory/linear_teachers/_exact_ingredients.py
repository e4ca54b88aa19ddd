"""Thm 4.2's two data-dependent ingredients on cases with exact values (Shachaf et al. 2021).

The high-probability bound ``g(λ, δ, n) = cλ_1 max{√(r_0/n), r_0/n, √(δ/n), δ/n}`` of
Thm 4.2 is built from the realised deviation ``ĝ = ‖Σ̃ − Σ‖₂`` of the sample second moment
``Σ̃ = XᵀX/n`` and the effective rank ``r_0 = Σ_i λ_i/λ_1``. Both have exact values on simple
cases, which :func:`simulate_exact_ingredients` measures through
:func:`~ntsim.theory.linear_teachers.realised_deviation` and
:func:`~ntsim.theory.linear_teachers.effective_rank`:

* one-dimensional ``Σ = σ²``: ``ĝ = σ²|χ²_n/n − 1|``, with
  ``E|χ²_n − n| = 4(n/2)^{n/2}e^{−n/2}/Γ(n/2)`` (the mean absolute deviation of a Gamma
  variable, shape ``n/2``, scale 2) and ``E(χ²_n/n − 1)² = 2/n``;
* one row (``n = 1``) of ``Σ = σ²I_d``: ``XᵀX − Σ`` has the eigenvalue ``‖x‖² − σ²`` once
  and ``−σ²`` ``d − 1`` times, so ``ĝ = σ² max(|χ²_d − 1|, 1)`` (the operator norm; a
  Frobenius or max-entry norm gives other values when ``d > 1``), whose mean is
  ``d·P(χ²_{d+2} > 2) − P(χ²_d > 2) + P(χ²_d ≤ 2)``, since ``E[Y; Y > 2] = d·P(χ²_{d+2} > 2)``
  for ``Y ~ χ²_d``;
* ``λ_k = 1/k``, ``k = 1..d``: ``r_0 = H_d = Σ_{k ≤ d} 1/k`` (the harmonic number).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import gaussian_inputs, power_law_spectrum
from ntsim.theory.linear_teachers import _bounds

__all__ = [
    "ExactIngredientsRun",
    "ExactIngredientsSetting",
    "mean_absolute_chi2_deviation",
    "single_row_deviation_moments",
    "simulate_exact_ingredients",
]


@dataclass(frozen=True)
class ExactIngredientsSetting:
    """Sizes of :func:`simulate_exact_ingredients` (ours; the paper gives none).

    Attributes:
      n_values: sample sizes of the one-dimensional draws (small ``n`` is where a wrong
        normaliser ``1/(n − 1)`` shows most).
      draws_per_n: one-dimensional samples per size.
      variance: ``σ²``, the one-dimensional ``Σ``.
      d_values: dimensions of the ``λ_k = 1/k`` spectra whose ``r_0`` is measured.
      row_dims: dimensions ``d`` of the one-row draws from ``Σ = σ²I_d``.
    """

    n_values: tuple[int, ...] = (2, 5, 10, 40)
    draws_per_n: int = 40000
    variance: float = 2.0
    d_values: tuple[int, ...] = (1, 10, 200)
    row_dims: tuple[int, ...] = (2, 5, 20)

    def __post_init__(self):
        if not self.n_values or min(self.n_values) < 1 or self.draws_per_n < 2:
            raise ValueError(
                "ExactIngredientsSetting: need n_values >= 1 and draws_per_n >= 2, got "
                f"{self.n_values!r} and {self.draws_per_n!r}."
            )
        if not (math.isfinite(self.variance) and self.variance > 0):
            raise ValueError(
                f"ExactIngredientsSetting.variance must be positive, got {self.variance!r}."
            )
        if not self.d_values or min(self.d_values) < 1:
            raise ValueError(f"ExactIngredientsSetting: need d_values >= 1, got {self.d_values!r}.")
        if not self.row_dims or min(self.row_dims) < 1:
            raise ValueError(f"ExactIngredientsSetting: need row_dims >= 1, got {self.row_dims!r}.")


class ExactIngredientsRun(NamedTuple):
    """What :func:`simulate_exact_ingredients` measured.

    Attributes:
      deviation: ``ĝ`` of each one-dimensional draw, ``(len(n_values), draws_per_n)``.
      n_values: the sample sizes, as measured on the drawn inputs.
      variance: ``σ²``.
      effective_rank: ``r_0`` of ``λ_k = 1/k`` per dimension, ``(len(d_values),)``.
      d_values: the dimensions, as measured on the spectra.
      row_deviation: ``ĝ`` of one row from ``Σ = σ²I_d``, ``(len(row_dims), draws_per_n)``.
      row_dims: those dimensions, as measured on the drawn rows.
    """

    deviation: Array
    n_values: tuple[int, ...]
    variance: float
    effective_rank: Array
    d_values: tuple[int, ...]
    row_deviation: Array
    row_dims: tuple[int, ...]


def mean_absolute_chi2_deviation(n: int) -> float:
    """``E|χ²_n/n − 1| = (4/n)(n/2)^{n/2}e^{−n/2}/Γ(n/2)`` (module doc).

    Examples:
      >>> round(mean_absolute_chi2_deviation(2), 6)  # χ²_2/2 ~ Exp(1): E|E − 1| = 2/e
      0.735759
    """
    half = n / 2
    return math.exp(math.log(4 / n) + half * math.log(half) - half - math.lgamma(half))


def single_row_deviation_moments(d: int) -> tuple[float, float]:
    """``(E M, E M²)`` of ``M = max(|χ²_d − 1|, 1)`` (module doc), from χ² tail probabilities.

    Examples:
      >>> m, _ = single_row_deviation_moments(2)  # χ²_2 = 2E, E ~ Exp(1): 1 + 2/e
      >>> round(m, 6), round(1 + 2 / math.e, 6)
      (1.735759, 1.735759)
    """

    def tail(k):  # P(χ²_k > 2): the regularised upper incomplete gamma Q(k/2, 1)
        return float(jax.scipy.special.gammaincc(k / 2, 1.0))

    above = tail(d)
    first = d * tail(d + 2)  # E[Y; Y > 2]
    second = d * (d + 2) * tail(d + 4)  # E[Y²; Y > 2]
    return first - above + (1 - above), second - 2 * first + above + (1 - above)


def _deviations(key: PRNGKey, rows: int, spectrum: Array, draws: int) -> tuple[Array, tuple]:
    """``ĝ`` of ``draws`` samples of ``rows`` rows from ``N(0, diag(spectrum))``, and the
    measured ``(rows, d)`` of the drawn inputs."""
    x = jax.vmap(lambda k: gaussian_inputs(k, rows, spectrum))(jax.random.split(key, draws))
    sigma = jnp.diag(spectrum)
    return jax.vmap(lambda x: _bounds.realised_deviation(x, sigma))(x), x.shape[1:]


def simulate_exact_ingredients(
    key: PRNGKey, setting: ExactIngredientsSetting
) -> ExactIngredientsRun:
    """``ĝ`` on one-dimensional samples of each ``n`` and on one row from ``σ²I_d`` for each
    ``d``, and ``r_0`` of ``λ_k = 1/k`` per ``d`` (module doc)."""
    check_setting_type("simulate_exact_ingredients", setting, ExactIngredientsSetting)
    check_key("simulate_exact_ingredients", key)
    s = setting
    one_dim = [
        _deviations(k, n, jnp.full((1,), s.variance), s.draws_per_n)
        for k, n in zip(jax.random.split(key, len(s.n_values)), s.n_values, strict=True)
    ]
    row_keys = jax.random.split(jax.random.fold_in(key, 1), len(s.row_dims))
    one_row = [
        _deviations(k, 1, jnp.full((d,), s.variance), s.draws_per_n)
        for k, d in zip(row_keys, s.row_dims, strict=True)
    ]
    spectra = [power_law_spectrum(d, 1.0) for d in s.d_values]
    return ExactIngredientsRun(
        deviation=jnp.stack([g for g, _ in one_dim]),
        n_values=tuple(int(shape[0]) for _, shape in one_dim),
        variance=s.variance,
        effective_rank=jnp.stack([_bounds.effective_rank(lam) for lam in spectra]),
        d_values=tuple(int(lam.shape[0]) for lam in spectra),
        row_deviation=jnp.stack([g for g, _ in one_row]),
        row_dims=tuple(int(shape[1]) for _, shape in one_row),
    )
