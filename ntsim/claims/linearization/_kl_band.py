"""The KL column of a linearity table held to the gap column (both λ tables).

For Bernoulli predictions with logits ``a`` (the model) and ``b`` (its linearisation),
``KL = A(b) − A(a) − A'(a)(b − a) = A''(ξ)(a − b)²/2`` for some ``ξ`` between them, with
``A(z) = log(1 + eᶻ)`` and ``A'' = σ(1 − σ)``, at most 1/4 and at least ``σ′(M)`` on
``[−M, M]``. The mean KL over ``m`` test inputs therefore lies in
``[σ′(M)‖f − f̄‖²/(2m), ‖f − f̄‖²/(8m)]``, ``M`` the largest ``|f|`` or ``|f̄|``: a second
route to the KL, from the gap alone, that a KL formula off by a term or a factor leaves.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._decisions import Tolerance, all_of, compare

__all__ = ["KL_ROUND_OFF", "kl_within_logit_band"]

KL_ROUND_OFF = Tolerance(
    "round-off",
    1e-14,
    "absolute: the KL is a float64 sum of two terms of order |f − f̄| that "
    "cancel to order |f − f̄|², each with round-off ~1e-16 (log-probabilities of order 1); "
    "1e-14 keeps 100× and leaves the smallest KLs (~3e-12 at λ = 50) decided",
)


def kl_within_logit_band(kl, mean_square, largest, *, diagnostics=None, notes=""):
    """``σ′(M)·mean_square/2 ≤ kl ≤ mean_square/8`` entrywise (module doc), decided to
    :data:`KL_ROUND_OFF`; ``mean_square`` is ``‖f − f̄‖²/m`` and ``largest`` is ``M``."""
    kl, mean_square, largest = (np.asarray(a, float).ravel() for a in (kl, mean_square, largest))
    curvature = np.exp(-largest) / (1 + np.exp(-largest)) ** 2  # σ′(M), the least A'' on [−M, M]
    upper, lower = mean_square / 8, curvature * mean_square / 2
    scale = np.maximum(upper, np.finfo(float).tiny)
    return all_of(
        compare(kl, lower, relation="lower_bound", atol=KL_ROUND_OFF.value,
                tolerance=KL_ROUND_OFF),
        compare(kl, upper, relation="upper_bound", atol=KL_ROUND_OFF.value,
                tolerance=KL_ROUND_OFF),
        diagnostics={"min KL": float(kl.min()),
                     "KL/(‖f − f̄‖²/8m), range": [float((kl / scale).min()),
                                                 float((kl / scale).max())],
                     "lower/upper bound (4σ′(M)), range": [float(4 * curvature.min()),
                                                          float(4 * curvature.max())],
                     **(diagnostics or {})},
        notes=notes,
    )  # fmt: skip
