"""Confidence intervals the stability checks decide on (pure functions of a run's arrays).

* :func:`mean_ci` — a mean with its normal-approximation interval ``mean ± z·s.e.``;
* :func:`spearman_ci` — Spearman's ρ with the Fisher-z interval, standard error
  ``√(1.06/(N − 3))`` (Fieller, Hartley & Pearson 1957);
* :func:`bootstrap_ci` — a percentile bootstrap over independent instances (a fixed
  generator, so a check stays a pure function of its run).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ntsim.core import spearman

__all__ = ["Z95", "bootstrap_ci", "mean_ci", "spearman_ci"]

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def mean_ci(values, z: float = Z95, axis: int = 0):
    """``(mean, (lo, hi))`` with ``lo, hi = mean ∓ z·std/√N`` along ``axis``.

    Examples:
      >>> m, (lo, hi) = mean_ci([1.0, 2.0, 3.0], z=1.0)
      >>> float(m), round(float(lo), 6), round(float(hi), 6)
      (2.0, 1.42265, 2.57735)
    """
    values = np.asarray(values, float)
    mean = values.mean(axis=axis)
    se = values.std(axis=axis, ddof=1) / np.sqrt(values.shape[axis])
    return mean, (mean - z * se, mean + z * se)


def spearman_ci(x, y, z: float = Z95):
    """Spearman's ``ρ(x, y)`` and its Fisher-z confidence interval.

    Examples:
      >>> rho, (lo, hi) = spearman_ci(np.arange(50.0), np.arange(50.0) ** 2)
      >>> rho, lo < 1.0
      (1.0, True)
    """
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    rho = float(spearman(x, y))
    clipped = np.clip(rho, -1 + 1e-12, 1 - 1e-12)
    se = np.sqrt(1.06 / (x.size - 3))
    centre = np.arctanh(clipped)
    lo, hi = np.tanh(centre - z * se), np.tanh(centre + z * se)
    return rho, (float(min(lo, rho)), float(max(hi, rho)))


def bootstrap_ci(
    statistic: Callable[[np.ndarray], float], size: int, *, level: float = 0.95,
    resamples: int = 2000, seed: int = 0,
):  # fmt: skip
    """``(statistic(all), (lo, hi))``: percentile interval of ``statistic(index)`` over
    ``resamples`` bootstrap index draws of ``size`` independent instances."""
    rng = np.random.default_rng(seed)
    point = float(statistic(np.arange(size)))
    draws = np.array([statistic(rng.integers(0, size, size)) for _ in range(resamples)])
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return point, (float(min(lo, point)), float(max(hi, point)))
