"""A percentile bootstrap over clusters for statistics that can be undefined on a resample
(the interval a claim's estimate is then decided on; kept in the claims layer beside the
decision rules so that adding it left every recorded claim's code hash as it was).

:func:`ntsim.core.bootstrap_ci` resamples instances and needs a statistic defined on every
draw. A rank correlation over a handful of clusters (configurations, draws) is not: a
resample that repeats too few clusters leaves nothing to rank. :func:`cluster_bootstrap_ci`
drops such resamples instead of scoring them (a pile of placeholder values would pull an
end of the interval onto them), and decides nothing (returns the statistic's whole range)
when too many are dropped.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["cluster_bootstrap_ci"]


def cluster_bootstrap_ci(
    statistic: Callable[[np.ndarray], float],
    clusters: int,
    *,
    bounds: tuple[float, float],
    level: float = 0.95,
    resamples: int = 2000,
    min_defined: float = 0.9,
    seed: int = 0,
) -> tuple[float, tuple[float, float]]:
    """``(statistic(all), (lo, hi))``: the percentile ``level`` interval of
    ``statistic(index)`` over ``resamples`` draws of ``clusters`` cluster indices with
    replacement. Draws where the statistic is NaN are dropped; if fewer than ``min_defined``
    of them remain, or the statistic on all clusters is NaN, the interval is ``bounds``
    (the statistic's range: nothing decided). A fixed generator keeps a check that uses it
    a pure function of its run.

    Examples:
      >>> values = np.arange(10.0)
      >>> point, (lo, hi) = cluster_bootstrap_ci(lambda i: values[i].mean(), 10,
      ...                                        bounds=(0.0, 9.0))
      >>> point, bool(2.0 < lo < 4.5 < hi < 7.0)
      (4.5, True)
      >>> cluster_bootstrap_ci(lambda i: float("nan"), 10, bounds=(-1.0, 1.0))[1]
      (-1.0, 1.0)
    """
    if isinstance(clusters, bool) or not isinstance(clusters, int | np.integer) or clusters < 1:
        raise ValueError(f"cluster_bootstrap_ci: clusters must be a positive integer, got "
                         f"{clusters!r}.")  # fmt: skip
    if not 0 < level < 1 or not 0 < min_defined <= 1:
        raise ValueError(f"cluster_bootstrap_ci: need 0 < level < 1 and 0 < min_defined <= 1, "
                         f"got {level=}, {min_defined=}.")  # fmt: skip
    point = float(statistic(np.arange(clusters)))
    rng = np.random.default_rng(seed)
    draws = np.array([statistic(rng.integers(0, clusters, clusters)) for _ in range(resamples)])
    draws = draws[np.isfinite(draws)]
    if not np.isfinite(point) or draws.size < min_defined * resamples:
        return point, (float(bounds[0]), float(bounds[1]))
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return point, (float(min(lo, point)), float(max(hi, point)))
