"""Rates fitted over a swept axis with a confidence interval over seeds.

The width and sample-size statements of Sun & Raskutti 2026 (Thms 1, 3, 5; Lemmas 1, 2, 5)
are ``O(axis^s)`` statements. A sweep measures a quantity at every point of an axis (widths
``n`` or sample sizes ``N``) for ``S`` seeds whose data and init keys are shared across the
axis, so each seed is one curve. :func:`fit_log_log_rate` fits one least-squares slope of
``log value`` on ``log axis`` per seed (which removes the seed-to-seed offset that a pooled
fit would count as noise) and reports their mean with a Student-t interval over the ``S``
slopes. Plain numpy: no ``jax``, no ``ntsim.core``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ntsim.core import mean_ci

__all__ = ["RateFit", "fit_log_log_rate"]


class RateFit(NamedTuple):
    """A fitted log–log rate.

    Attributes:
      slope: mean over seeds of the per-seed slopes.
      lo: lower end of the two-sided ``level`` Student-t interval of that mean.
      hi: upper end of that interval.
      slopes: the per-seed slopes, ``(S,)``.
      level: the confidence level of ``(lo, hi)``.
    """

    slope: float
    lo: float
    hi: float
    slopes: np.ndarray
    level: float

    @property
    def interval(self) -> tuple[float, float]:
        return self.lo, self.hi


def fit_log_log_rate(axis, values, *, level: float = 0.95) -> RateFit:
    """Mean per-seed least-squares slope of ``log values`` on ``log axis``, with its CI.

    Args:
      axis (ArrayLike): ``(A,)`` positive points of the swept axis (``A ≥ 2``).
      values (ArrayLike): ``(A, S)`` positive values, one column per seed (``S ≥ 2``).
      level: confidence level of the Student-t interval on the ``S`` slopes.

    Returns:
      :class:`RateFit`: the mean slope, its interval and the per-seed slopes.

    Raises:
      ValueError: wrong shapes, fewer than two points or seeds, non-positive values.

    Examples:
      >>> import numpy as np
      >>> n = np.array([16.0, 32.0, 64.0])
      >>> fit = fit_log_log_rate(n, np.stack([3 * n**-0.5, 5 * n**-0.5], axis=1))
      >>> round(fit.slope, 12), round(fit.lo, 12), round(fit.hi, 12)
      (-0.5, -0.5, -0.5)
    """
    x = np.asarray(axis, float)
    y = np.asarray(values, float)
    if x.ndim != 1 or y.ndim != 2 or y.shape[0] != x.size:
        raise ValueError(
            f"fit_log_log_rate: axis must be (A,) and values (A, S), got {x.shape}, {y.shape}."
        )
    if x.size < 2 or y.shape[1] < 2:
        raise ValueError(
            f"fit_log_log_rate: need at least 2 axis points and 2 seeds, got {y.shape}."
        )
    if not (np.all(x > 0) and np.all(y > 0)):
        raise ValueError("fit_log_log_rate: axis and values must be positive (log–log fit).")
    if not 0 < level < 1:
        raise ValueError(f"fit_log_log_rate: level must lie in (0, 1), got {level}.")
    log_x = np.log(x) - np.log(x).mean()
    log_y = np.log(y)
    slopes = log_x @ (log_y - log_y.mean(axis=0)) / (log_x @ log_x)
    mean, (lo, hi) = mean_ci(slopes, level=level)
    return RateFit(float(mean), float(lo), float(hi), slopes, level)
