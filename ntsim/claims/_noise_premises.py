"""Premises on a simulation's noise, for :func:`ntsim.claims._premises.given`.

A theorem about data ``y = signal + w`` decides nothing on data drawn from another signal.
A simulation can measure that on its instances: the realised noise along the signal,
standardised, is exactly ``N(0, 1)`` under the premise, and :func:`pooled_z_within` turns
those statistics into the boolean premise :func:`~ntsim.claims._premises.given` takes, with a
known false-alarm rate.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PREMISE_Z", "pooled_z_within"]

#: Bound on a pooled standard-normal statistic (:func:`pooled_z_within`): under the premise
#: ``|Z| > 4`` has probability ``2Φ(−4) = 6.3e-5``, so a correct simulation fails it about
#: once in 16 000 runs.
PREMISE_Z = 4.0


def pooled_z_within(z, *, bound: float = PREMISE_Z) -> np.ndarray:
    """Whether standardised noise statistics are centred: ``|Σ z_i|/√n ≤ bound``.

    For a premise "the data are ``signal + w`` with ``w ~ N(0, σ²I)``", a simulation can
    return, per instance, the exact z-statistic of its realised noise along a known direction
    ``u`` (``z = ⟨w, u⟩/(σ‖u‖)``, exactly ``N(0, 1)`` given the design). Their pooled
    statistic is again ``N(0, 1)`` under the premise, so the bound is a Monte Carlo
    threshold with a known false-alarm rate (:data:`PREMISE_Z`), not a chosen one; a
    generator whose data are not ``signal + w`` (a signal off by a factor) shifts every
    ``z`` the same way and the pooled one by ``√n`` times that.

    Args:
      z: per-instance statistics, any shape; pooled over all entries along axis 0, so a
        ``(n, k)`` array gives ``k`` premises (one per column).
      bound: the threshold on ``|pooled z|``.

    Returns:
      boolean, shape ``z.shape[1:]``.

    Examples:
      >>> bool(pooled_z_within(np.array([0.3, -1.2, 0.8, 0.1])))
      True
      >>> bool(pooled_z_within(np.full(100, -1.0)))  # pooled z = −10
      False
    """
    z = np.asarray(z, dtype=float)
    if z.ndim == 0 or z.shape[0] == 0:
        raise ValueError("pooled_z_within: need at least one statistic.")
    if not np.all(np.isfinite(z)):
        raise ValueError("pooled_z_within: the statistics must be finite.")
    return np.abs(z.sum(axis=0)) / np.sqrt(z.shape[0]) <= bound
