"""What the linearization claims share: the paper reference and float64 round-off tolerances.

The simulations live in :mod:`ntsim.theory.linearization` (``simulate_*``); this package
only holds the claim records and their checks.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._decisions import Tolerance

__all__ = [
    "PAPER",
    "ROUND_OFF",
    "ROUND_OFF_BOUND",
    "relative_error",
]

PAPER = "Rahimi Afzal et al. 2025"

#: Float64 identities between two evaluations of the same algebra (≤ ~100 flops on O(1)
#: numbers, relative round-off ~1e-15): 1e-11 relative leaves 1e4 slack and still catches
#: any wrong factor or sign.
ROUND_OFF = Tolerance(
    "round-off", 1e-11, "float64, ~1e2 flops on O(1) values: relative error ~1e-15, slack 1e4"
)
#: A simulated quantity against a bound that dominates it exactly (e.g. GD against the
#: flow's Grönwall bound, or an exact spectral inequality): only float64 round-off
#: separates them; 1e-9 relative.
ROUND_OFF_BOUND = Tolerance(
    "round-off", 1e-9, "float64 evaluation of an exact inequality: relative round-off ≪ 1e-9"
)


def relative_error(a, b, scale=None) -> np.ndarray:
    """``max|a − b| / max|b|`` per instance (leading axis), or over ``scale`` when given."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    axes = tuple(range(1, a.ndim))
    den = np.max(np.abs(b), axis=axes) if scale is None else np.asarray(scale, float)
    return np.max(np.abs(a - b), axis=axes) / den
