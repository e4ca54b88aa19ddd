"""Summary statistics used when a claim or figure reports a trend over many instances.

* :func:`spearman` — Spearman's rank correlation ρ (Pearson correlation of tie-averaged
  ranks); under independence ``√(N − 1)·ρ`` is approximately standard normal, which is
  how the trend claims call a correlation significant.
* :func:`loglog_slope` — least-squares slope of ``log y`` on ``log x`` (rates such as
  ``n^{-1}``).
* :func:`mean_se` — mean and standard error over an axis.

Host-side (numpy) helpers: they summarise results that already left the device.
"""

from __future__ import annotations

import numpy as np

from ntsim._types import ArrayLike

__all__ = ["loglog_slope", "mean_se", "spearman"]


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
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt(np.sum(ra**2) * np.sum(rb**2))
    return float(np.sum(ra * rb) / denom) if denom > 0 else float("nan")


def loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    """Least-squares slope of ``log y`` on ``log x`` over the points with ``y > 0``.

    Examples:
      >>> round(loglog_slope([10, 100, 1000], [0.3, 0.03, 0.003]), 6)
      -1.0
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
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
