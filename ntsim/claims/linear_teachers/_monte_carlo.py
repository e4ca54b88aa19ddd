"""Monte Carlo identities of the linear_teachers claims: z-statistics per group and pooled.

A claim "a Monte Carlo mean equals its exact value" reads, per group (a sample size, a width,
an instance), ``z = (mean − exact)/s.e.``, which is ≈ ``N(0, 1)`` when the identity holds.
One group can hide a small bias that every group shares; the pooled ``Σz/√k`` (again
``N(0, 1)``) shows it ``√k`` times larger. :func:`z_within` decides both against one bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ntsim.claims._decisions import ClaimResult, Tolerance, compare

__all__ = ["z_within"]


def z_within(
    z,
    tolerance: Tolerance,
    *,
    num_instances: int,
    diagnostics: Mapping[str, Any] | None = None,
    notes: str = "",
) -> ClaimResult:
    """Holds iff every ``|z_i|`` and the pooled ``|Σ z_i|/√k`` are at most ``tolerance``.

    Args:
      z: the ``k`` per-group statistics, any shape (flattened).
      tolerance: the bound on ``|z|`` (kind ``"monte-carlo"``).
      num_instances: the Monte Carlo draws behind the statistics.
      diagnostics: recorded with the result; ``"pooled z"`` is added.
      notes: recorded with the result.

    Examples:
      >>> tol = Tolerance("monte-carlo", 4.0, "4 s.e.")
      >>> z_within([1.0, -0.5, 2.0], tol, num_instances=30).holds  # pooled 2.5/√3
      True
      >>> z_within([3.0, 3.0, 3.0], tol, num_instances=30).holds  # pooled 9/√3 ≈ 5.2
      False
    """
    z = np.ravel(np.asarray(z, dtype=float))
    pooled = float(z.sum() / math.sqrt(z.size))
    return compare(
        np.append(np.abs(z), abs(pooled)), tolerance.value, relation="upper_bound",
        tolerance=tolerance, num_instances=num_instances,
        diagnostics={**(diagnostics or {}), "pooled z": pooled}, notes=notes,
    )  # fmt: skip
