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
  ``r``: the population Spearman correlation is ``ρ_S = (6/π) arcsin(r/2)`` (Pearson 1907;
  Kruskal 1958, eq. (5.5)); the interval is approximate at finite ``N``;
* **percentile bootstrap of a mean**, normal data: first-order accurate, slightly narrow at
  finite ``N`` (its standard error uses ``1/N``, not ``1/(N − 1)``, and the normal, not the t,
  quantile).

The counts are integers, so the claims decide each tail's miss rate on a binomial interval
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
    "CoverageRun",
    "CoverageSetting",
    "simulate_interval_coverage",
    "spearman_of_bivariate_normal",
]


@dataclasses.dataclass(frozen=True)
class CoverageSetting:
    """Replications and sample sizes of :func:`simulate_interval_coverage`.

    Attributes:
      mean_sizes: ``N`` of the t-interval replications (normal data), one row each.
      mean_replications: replications per ``N`` (vectorised: cheap).
      spearman_size: pairs per Spearman replication.
      spearman_correlation: the bivariate normal's correlation ``r``.
      spearman_replications: Spearman replications.
      bootstrap_size: observations per bootstrap replication.
      bootstrap_replications: bootstrap replications.
      resamples: bootstrap resamples per interval.
      level: the intervals' level.
    """

    mean_sizes: tuple[int, ...] = (3, 10)
    mean_replications: int = 200_000
    spearman_size: int = 20
    spearman_correlation: float = 0.5
    spearman_replications: int = 20_000
    bootstrap_size: int = 100
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
        if not (-1 < self.spearman_correlation < 1 and 0 < self.level < 1):
            raise ValueError("CoverageSetting: spearman_correlation in (-1, 1), level in (0, 1).")


class CoverageRun(NamedTuple):
    """Miss counts per procedure (rows: the t interval at each ``mean_sizes`` entry, then
    Fisher-z Spearman, then the percentile bootstrap).

    Attributes:
      procedures: ``(P,)`` names of the rows.
      below: ``(P,)`` replications whose interval lies wholly above the truth (``lo > θ``).
      above: ``(P,)`` replications whose interval lies wholly below it (``hi < θ``).
      replications: ``(P,)`` replications per row.
      truth: ``(P,)`` the true value per row.
      level: the intervals' level.
    """

    procedures: tuple[str, ...]
    below: Array
    above: Array
    replications: Array
    truth: Array
    level: float


def spearman_of_bivariate_normal(correlation: float) -> float:
    r"""Population Spearman correlation of a bivariate normal with correlation ``r``:
    ``ρ_S = (6/π) arcsin(r/2)`` (Pearson 1907; Kruskal 1958, eq. (5.5)).

    Examples:
      >>> spearman_of_bivariate_normal(0.0), round(spearman_of_bivariate_normal(1.0), 12)
      (0.0, 1.0)
    """
    return float(6.0 / np.pi * np.arcsin(correlation / 2.0))


def simulate_interval_coverage(key: PRNGKey, setting: CoverageSetting) -> CoverageRun:
    """Count each tail's misses of the three interval procedures (module doc).

    Data come from ``key`` (``jax.random``); the bootstrap's resampling generator is seeded
    per replication from it too, so the run is a pure function of ``(key, setting)``.
    """
    check_setting_type("simulate_interval_coverage", setting, CoverageSetting)
    check_key("simulate_interval_coverage", key)
    s = setting
    k_mean, k_spearman, k_boot, k_seeds = jax.random.split(key, 4)
    names, below, above, count, truth = [], [], [], [], []

    for j, size in enumerate(s.mean_sizes):
        data = np.asarray(jax.random.normal(jax.random.fold_in(k_mean, j),
                                            (size, s.mean_replications)), np.float64)  # fmt: skip
        _, (lo, hi) = mean_ci(data, level=s.level, axis=0)
        names.append(f"t interval, mean, N = {size}")
        below.append(int(np.sum(lo > 0.0)))
        above.append(int(np.sum(hi < 0.0)))
        count.append(s.mean_replications)
        truth.append(0.0)

    rho_s = spearman_of_bivariate_normal(s.spearman_correlation)
    z = np.asarray(jax.random.normal(k_spearman, (s.spearman_replications, s.spearman_size, 2)),
                   np.float64)  # fmt: skip
    x = z[..., 0]
    y = s.spearman_correlation * x + np.sqrt(1.0 - s.spearman_correlation**2) * z[..., 1]
    ends = np.array([spearman_ci(a, b, level=s.level)[1] for a, b in zip(x, y, strict=True)])
    names.append(f"Fisher-z Spearman, N = {s.spearman_size}, r = {s.spearman_correlation:g}")
    below.append(int(np.sum(ends[:, 0] > rho_s)))
    above.append(int(np.sum(ends[:, 1] < rho_s)))
    count.append(s.spearman_replications)
    truth.append(rho_s)

    data = np.asarray(jax.random.normal(k_boot, (s.bootstrap_replications, s.bootstrap_size)),
                      np.float64)  # fmt: skip
    seeds = np.asarray(jax.random.randint(k_seeds, (s.bootstrap_replications,), 0, 2**31 - 1))
    ends = np.array([
        bootstrap_ci(lambda index, v=values: v[index].mean(), s.bootstrap_size, level=s.level,
                     resamples=s.resamples, seed=int(seed))[1]
        for values, seed in zip(data, seeds, strict=True)
    ])  # fmt: skip
    names.append(f"percentile bootstrap, mean, N = {s.bootstrap_size}")
    below.append(int(np.sum(ends[:, 0] > 0.0)))
    above.append(int(np.sum(ends[:, 1] < 0.0)))
    count.append(s.bootstrap_replications)
    truth.append(0.0)

    return CoverageRun(
        procedures=tuple(names),
        below=np.asarray(below),
        above=np.asarray(above),
        replications=np.asarray(count),
        truth=np.asarray(truth),
        level=float(s.level),
    )


#: Quick: fewer Spearman replications and bootstrap resamples (~20 s on 2 cores); each tail's
#: 95% Wilson interval is then about ±0.005 wide. Full: ±0.002 (Spearman), ±0.0035 (bootstrap).
COVERAGE_SCALES = {
    "quick": CoverageSetting(spearman_replications=4000, bootstrap_replications=4000,
                             resamples=500),
    "full": CoverageSetting(),
}  # fmt: skip
