r"""How often ntsim's confidence intervals miss, each tail apart, on data where the truth is known.

Every verdict of the claims layer rests on an interval: a Student-t interval for a mean
(:func:`ntsim.core.mean_ci`), Fisher's z interval for Spearman's ρ with Fieller, Hartley &
Pearson's variance ``1.06/(N − 3)`` (:func:`ntsim.core.spearman_ci`), or the percentile
bootstrap (:func:`ntsim.core.bootstrap_ci`). A ``level`` interval with equal tails misses
the truth from below (the whole interval above it) in ``(1 − level)/2`` of replications and
from above in as many. This simulation draws data whose truth is known in closed form and
counts both kinds of miss:

* **t interval for a mean**, normal data ``N(0, 1)``: exact for every ``N ≥ 2`` (Student
  1908), so the tails are ``(1 − level)/2`` up to Monte Carlo error;
* **Fisher-z interval for Spearman's ρ**, pairs from a bivariate normal with correlation
  ``r`` (one positive, one negative): the population Spearman correlation is
  ``ρ_S = (6/π) arcsin(r/2)`` (Pearson 1907; Kruskal 1958, eq. (5.5)); the interval is
  approximate at finite ``N``. The estimator itself has an exact finite-``N`` mean,
  ``E[ρ̂] = 6/(π(N + 1))·[arcsin r + (N − 2)·arcsin(r/2)]`` (Moran 1948), an anchor on the
  data the interval is checked on: data drawn at another correlation moves that mean far
  more than it moves the tails. The same simulation at ``N = 5``
  (:data:`SMALL_SPEARMAN_SCALES`) anchors the estimator where the finite-``N`` term is
  largest;
* **percentile bootstrap of a mean**, normal data: first-order accurate, slightly narrow at
  finite ``N`` (its standard error uses ``1/N``, not ``1/(N − 1)``, and the normal, not the t,
  quantile).

One simulation per procedure, so each claim's path holds its own procedure only (``ntsim
mutate`` runs a claim on the mutants of the functions on its path). The counts are
integers, so the claims decide each tail's miss rate on a binomial interval
(:func:`~ntsim.theory.intervals.wilson_ci`).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import bootstrap_ci, mean_ci, spearman_ci

__all__ = [
    "COVERAGE_SCALES",
    "SMALL_SPEARMAN_SCALES",
    "CoverageRun",
    "CoverageSetting",
    "simulate_bootstrap_coverage",
    "simulate_spearman_coverage",
    "simulate_t_coverage",
    "spearman_estimate_mean",
    "spearman_of_bivariate_normal",
]


@dataclasses.dataclass(frozen=True)
class CoverageSetting:
    """Replications and sample sizes of the coverage simulations.

    Attributes:
      mean_sizes: ``N`` of the t-interval replications (normal data), one row each.
      mean_replications: replications per ``N`` (vectorised: cheap).
      spearman_size: pairs per Spearman replication.
      spearman_correlations: the bivariate normal's correlations ``r``, one row each.
      spearman_replications: Spearman replications per ``r``.
      bootstrap_size: observations per bootstrap replication.
      bootstrap_replications: bootstrap replications.
      resamples: bootstrap resamples per interval.
      level: the intervals' level.
    """

    mean_sizes: tuple[int, ...] = (3, 10)
    mean_replications: int = 200_000
    spearman_size: int = 20
    spearman_correlations: tuple[float, ...] = (0.5, -0.5)
    spearman_replications: int = 50_000
    bootstrap_size: int = 400
    bootstrap_replications: int = 8_000
    resamples: int = 1000
    level: float = 0.95

    def __post_init__(self):
        check_int_fields(self, ("mean_replications", "spearman_replications",
                                "bootstrap_replications", "resamples"))  # fmt: skip
        check_int_fields(self, ("spearman_size",), minimum=5)
        check_int_fields(self, ("bootstrap_size",), minimum=2)
        if not self.mean_sizes or any(isinstance(n, bool) or not isinstance(n, int) or n < 2
                                      for n in self.mean_sizes):  # fmt: skip
            raise ValueError("CoverageSetting.mean_sizes must be integers >= 2.")
        if not self.spearman_correlations or not all(
            -1 < r < 1 for r in self.spearman_correlations
        ):
            raise ValueError("CoverageSetting.spearman_correlations must lie in (-1, 1).")
        if not 0 < self.level < 1:
            raise ValueError("CoverageSetting.level must lie in (0, 1).")


class CoverageRun(NamedTuple):
    """Miss counts of one procedure, one row per data setting.

    Attributes:
      procedures: ``(P,)`` names of the rows.
      below: ``(P,)`` replications whose interval lies wholly above the truth (``lo > θ``).
      above: ``(P,)`` replications whose interval lies wholly below it (``hi < θ``).
      replications: ``(P,)`` replications per row.
      truth: ``(P,)`` the true value per row.
      level: the intervals' level.
      estimate_mean: ``(P,)`` mean of the procedure's point estimates over replications.
      estimate_sd: ``(P,)`` their standard deviation (``ddof = 1``).
      sizes: ``(P,)`` observations (or pairs) per replication.
    """

    procedures: tuple[str, ...]
    below: Array
    above: Array
    replications: Array
    truth: Array
    level: float
    estimate_mean: Array
    estimate_sd: Array
    sizes: Array


def spearman_of_bivariate_normal(correlation: float) -> float:
    r"""Population Spearman correlation of a bivariate normal with correlation ``r``:
    ``ρ_S = (6/π) arcsin(r/2)`` (Pearson 1907; Kruskal 1958, eq. (5.5)).

    Examples:
      >>> spearman_of_bivariate_normal(0.0), round(spearman_of_bivariate_normal(1.0), 12)
      (0.0, 1.0)
    """
    return float(6.0 / np.pi * np.arcsin(correlation / 2.0))


def spearman_estimate_mean(correlation: float, size: int) -> float:
    r"""Exact mean of Spearman's estimator on ``size`` pairs from a bivariate normal with
    correlation ``r``: ``E[ρ̂] = 6/(π(N + 1))·[arcsin r + (N − 2)·arcsin(r/2)]`` (Moran 1948);
    it tends to ``ρ_S`` as ``N → ∞``.

    Examples:
      >>> round(spearman_estimate_mean(0.5, 20), 4), spearman_estimate_mean(0.0, 20)
      (0.4613, 0.0)
      >>> round(spearman_estimate_mean(1.0, 20), 12)  # every ranking agrees
      1.0
    """
    if size < 2:
        raise ValueError(f"spearman_estimate_mean: size must be >= 2, got {size}.")
    r = correlation
    return float(6.0 / (np.pi * (size + 1)) * (np.arcsin(r) + (size - 2) * np.arcsin(r / 2.0)))


def _counted(rows: list[tuple[str, np.ndarray, np.ndarray, float]], level: float,
             sizes: list[int]) -> CoverageRun:  # fmt: skip
    """``rows`` of (name, point estimates ``(R,)``, interval ends ``(R, 2)``, truth) as miss
    counts and the estimates' mean and spread; ``sizes`` per row."""
    return CoverageRun(
        procedures=tuple(name for name, _, _, _ in rows),
        below=np.asarray([int(np.sum(ends[:, 0] > truth)) for _, _, ends, truth in rows]),
        above=np.asarray([int(np.sum(ends[:, 1] < truth)) for _, _, ends, truth in rows]),
        replications=np.asarray([len(ends) for _, _, ends, _ in rows]),
        truth=np.asarray([truth for _, _, _, truth in rows]),
        level=float(level),
        estimate_mean=np.asarray([float(np.mean(points)) for _, points, _, _ in rows]),
        estimate_sd=np.asarray([float(np.std(points, ddof=1)) for _, points, _, _ in rows]),
        sizes=np.asarray(sizes),
    )


def _checked(where: str, key, setting) -> None:
    check_setting_type(where, setting, CoverageSetting)
    check_key(where, key)


def simulate_t_coverage(key: PRNGKey, setting: CoverageSetting) -> CoverageRun:
    """Each tail's misses of :func:`ntsim.core.mean_ci` (Student t) on ``N(0, 1)`` data, one
    row per ``mean_sizes`` entry (module doc)."""
    _checked("simulate_t_coverage", key, setting)
    s, rows = setting, []
    for j, size in enumerate(s.mean_sizes):
        data = np.asarray(jax.random.normal(jax.random.fold_in(key, j),
                                            (size, s.mean_replications)), np.float64)  # fmt: skip
        means, (lo, hi) = mean_ci(data, level=s.level, axis=0)
        rows.append((f"t interval, mean, N = {size}", np.asarray(means),
                     np.stack([lo, hi], axis=1), 0.0))  # fmt: skip
    return _counted(rows, s.level, list(s.mean_sizes))


def simulate_spearman_coverage(key: PRNGKey, setting: CoverageSetting) -> CoverageRun:
    """Each tail's misses of :func:`ntsim.core.spearman_ci` (Fisher z) on bivariate normal
    pairs, one row per ``spearman_correlations`` entry (module doc)."""
    _checked("simulate_spearman_coverage", key, setting)
    s, rows = setting, []
    for j, r in enumerate(s.spearman_correlations):
        z = np.asarray(jax.random.normal(jax.random.fold_in(key, j),
                                         (s.spearman_replications, s.spearman_size, 2)),
                       np.float64)  # fmt: skip
        x, y = z[..., 0], r * z[..., 0] + np.sqrt(1.0 - r**2) * z[..., 1]
        fits = [spearman_ci(a, b, level=s.level) for a, b in zip(x, y, strict=True)]
        rows.append((f"Fisher-z Spearman, N = {s.spearman_size}, r = {r:g}",
                     np.array([rho for rho, _ in fits]), np.array([ends for _, ends in fits]),
                     spearman_of_bivariate_normal(r)))  # fmt: skip
    return _counted(rows, s.level, [s.spearman_size] * len(rows))


def simulate_bootstrap_coverage(key: PRNGKey, setting: CoverageSetting) -> CoverageRun:
    """Each tail's misses of :func:`ntsim.core.bootstrap_ci` (percentile) for the mean of
    ``N(0, 1)`` data (module doc); each replication's resampling generator is seeded from
    ``key``, so the run is a pure function of ``(key, setting)``."""
    _checked("simulate_bootstrap_coverage", key, setting)
    s = setting
    k_data, k_seeds = jax.random.split(key)
    data = np.asarray(jax.random.normal(k_data, (s.bootstrap_replications, s.bootstrap_size)),
                      np.float64)  # fmt: skip
    seeds = np.asarray(jax.random.randint(k_seeds, (s.bootstrap_replications,), 0, 2**31 - 1))
    fits = [
        bootstrap_ci(lambda index, v=values: v[index].mean(), s.bootstrap_size, level=s.level,
                     resamples=s.resamples, seed=int(seed))
        for values, seed in zip(data, seeds, strict=True)
    ]  # fmt: skip
    name = f"percentile bootstrap ({s.resamples} resamples), mean, N = {s.bootstrap_size}"
    points, ends = np.array([point for point, _ in fits]), np.array([e for _, e in fits])
    return _counted([(name, points, ends, 0.0)], s.level, [s.bootstrap_size])


#: Quick: fewer replications and resamples (~25 s on 2 cores); a tail's 95% Wilson interval
#: is then about ±0.0023 (Spearman) and ±0.005 (bootstrap) wide. Full: ±0.0015 and ±0.0035.
COVERAGE_SCALES = {
    "quick": CoverageSetting(spearman_replications=20_000, bootstrap_replications=4000,
                             resamples=500),
    "full": CoverageSetting(),
}  # fmt: skip

#: Spearman at ``N = 5``, where Moran's finite-``N`` term is largest (``E[ρ̂] = 0.408`` against
#: ``ρ_S = 0.483`` at ``r = 0.5``) and an error of relative order ``1/N³`` in the estimator
#: (its normaliser's scale) is still ~10%; at ``N = 20`` it is 0.15%. The estimator's spread
#: is ``sd ≈ 0.435`` there, so a mean over 60,000 replications has a standard error of 0.0018
#: (0.001 at 200,000). The t and bootstrap fields are unused by the Spearman simulation.
SMALL_SPEARMAN_SCALES = {
    "quick": CoverageSetting(spearman_size=5, spearman_replications=60_000),
    "full": CoverageSetting(spearman_size=5, spearman_replications=200_000),
}  # fmt: skip
