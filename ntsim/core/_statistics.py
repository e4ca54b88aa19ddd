"""Summary statistics used when a claim or figure reports a trend over many instances.

* :func:`spearman` — Spearman's rank correlation ρ (Pearson correlation of tie-averaged
  ranks); under independence ``√(N − 1)·ρ`` is approximately standard normal, which is
  how the trend claims call a correlation significant.
* :func:`loglog_slope` — least-squares slope of ``log y`` on ``log x`` (rates such as
  ``n^{-1}``).
* :func:`mean_se` — mean and standard error over an axis.
* :func:`mean_ci` — a mean with its confidence interval (Student t, or normal);
* :func:`spearman_ci` — Spearman's ρ with its Fisher-z interval (standard error
  ``√(1.06/(N − 3))``, Fieller, Hartley & Pearson 1957);
* :func:`bootstrap_ci` — a percentile bootstrap interval over independent instances.

The interval estimators are what claims decide estimates on
(:func:`ntsim.claims.estimate_in`): holds, refuted or inconclusive by where the interval
lies, never by a point estimate.

Host-side (numpy) helpers: they summarise results that already left the device.
"""

from __future__ import annotations

import numpy as np

from ntsim._types import ArrayLike

__all__ = [
    "Z95",
    "bootstrap_ci",
    "loglog_slope",
    "mean_ci",
    "mean_se",
    "spearman",
    "spearman_ci",
]

#: Two-sided 95% quantile of the standard normal.
Z95 = 1.959963984540054


def _finite(where: str, name: str, values: np.ndarray) -> np.ndarray:
    """``values``, required free of NaN and ±inf (a NaN would be ranked, averaged or
    resampled into a plausible-looking number)."""
    bad = int(np.sum(~np.isfinite(values)))
    if bad:
        raise ValueError(
            f"{where}: {name} must be finite (no NaN or inf), got {bad} non-finite entries in "
            f"an array of shape {values.shape}."
        )
    return values


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties averaged."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for v in np.unique(values):
        tie = values == v
        ranks[tie] = ranks[tie].mean()
    return ranks


def spearman(a: ArrayLike, b: ArrayLike) -> float:
    """Spearman's rank correlation ρ (Pearson correlation of the tie-averaged ranks).

    Returns NaN when either input is constant (ρ undefined).

    Examples:
      >>> spearman([1, 2, 3, 4], [10, 20, 15, 40])
      0.8
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(
            f"spearman: a and b must be 1-D of the same length ≥ 2, got {a.shape}, {b.shape}."
        )
    _finite("spearman", "a", a)
    _finite("spearman", "b", b)
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt(np.sum(ra**2) * np.sum(rb**2))
    return float(np.sum(ra * rb) / denom) if denom > 0 else float("nan")


def loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    """Least-squares slope of ``log y`` on ``log x`` over the points with ``y > 0``.

    ``x`` must be positive and ``y`` non-negative (a zero, e.g. a distance that vanished, is
    skipped); both finite, of the same 1-D shape. NaN when fewer than two points have
    ``y > 0``.

    Examples:
      >>> round(loglog_slope([10, 100, 1000], [0.3, 0.03, 0.003]), 6)
      -1.0
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"loglog_slope: x and y must be 1-D of the same length, got {x.shape}, {y.shape}."
        )
    if not (np.all(np.isfinite(x)) and np.all(x > 0)):
        raise ValueError(f"loglog_slope: x must be positive and finite, got {x.tolist()}.")
    if not (np.all(np.isfinite(y)) and np.all(y >= 0)):
        raise ValueError(
            f"loglog_slope: y must be non-negative and finite (a log-log fit), got {y.tolist()}."
        )
    ok = y > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def mean_se(values: ArrayLike, axis: int = 0) -> tuple[list, list]:
    """Mean and standard error (``ddof = 1``) along ``axis``, as lists.

    Examples:
      >>> mean_se([[1.0, 2.0], [3.0, 6.0]])
      ([2.0, 4.0], [1.0, 2.0])
    """
    values = np.asarray(values, float)
    count = values.shape[axis]
    se = values.std(axis=axis, ddof=1) / np.sqrt(count) if count > 1 else 0 * values.mean(axis)
    return values.mean(axis=axis).tolist(), np.asarray(se).tolist()


def _quantile(level: float, count: int, distribution: str) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}.")
    if distribution == "normal":
        from scipy import stats  # scikit-learn's dependency; imported lazily (slow import)

        return float(stats.norm.ppf((1 + level) / 2))
    if distribution == "t":
        from scipy import stats

        return float(stats.t.ppf((1 + level) / 2, count - 1))
    raise ValueError(f"distribution must be 't' or 'normal', got {distribution!r}.")


def mean_ci(values: ArrayLike, *, level: float = 0.95, axis: int = 0, distribution: str = "t"):
    """``(mean, (lo, hi))``: the mean along ``axis`` and its ``level`` confidence interval
    ``mean ∓ q·std/√N`` (``ddof = 1``), ``q`` the Student-t (``N − 1`` degrees of freedom) or
    normal quantile.

    Examples:
      >>> m, (lo, hi) = mean_ci([1.0, 2.0, 3.0])
      >>> float(m), round(float(lo), 4), round(float(hi), 4)
      (2.0, -0.4841, 4.4841)
      >>> m, (lo, hi) = mean_ci([1.0, 2.0, 3.0], distribution="normal")
      >>> round(float(hi), 4)
      3.1316
    """
    values = np.asarray(values, float)
    count = values.shape[axis]
    if count < 2:
        raise ValueError(f"mean_ci: need at least 2 values along axis {axis}, got {count}.")
    _finite("mean_ci", "values", values)
    mean = values.mean(axis=axis)
    half = _quantile(level, count, distribution) * values.std(axis=axis, ddof=1) / np.sqrt(count)
    return mean, (mean - half, mean + half)


def spearman_ci(x: ArrayLike, y: ArrayLike, *, level: float = 0.95):
    """Spearman's ``ρ(x, y)`` and its Fisher-z ``level`` interval (``se = √(1.06/(N − 3))``).

    Examples:
      >>> rho, (lo, hi) = spearman_ci(np.arange(50.0), np.arange(50.0) ** 2)
      >>> rho, lo < 1.0
      (1.0, True)
    """
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    if x.size < 4:
        raise ValueError(f"spearman_ci: need at least 4 pairs, got {x.size}.")
    rho = float(spearman(x, y))
    centre = np.arctanh(np.clip(rho, -1 + 1e-12, 1 - 1e-12))
    half = _quantile(level, x.size, "normal") * np.sqrt(1.06 / (x.size - 3))
    lo, hi = np.tanh(centre - half), np.tanh(centre + half)
    return rho, (float(min(lo, rho)), float(max(hi, rho)))


def bootstrap_ci(
    statistic, size: int, *, level: float = 0.95, resamples: int = 2000, seed: int = 0
):
    """``(statistic(all), (lo, hi))``: the percentile interval of ``statistic(index)`` over
    ``resamples`` bootstrap draws of ``size`` instance indices (a fixed generator, so a
    check that uses it stays a pure function of its run).

    Examples:
      >>> values = np.arange(100.0)
      >>> point, (lo, hi) = bootstrap_ci(lambda i: values[i].mean(), 100)
      >>> point, bool(lo < 49.5 < hi)
      (49.5, True)
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise ValueError(f"bootstrap_ci: size must be a positive integer, got {size!r}.")
    rng = np.random.default_rng(seed)
    point = float(statistic(np.arange(size)))
    draws = np.array([statistic(rng.integers(0, size, size)) for _ in range(resamples)])
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return point, (float(min(lo, point)), float(max(hi, point)))
