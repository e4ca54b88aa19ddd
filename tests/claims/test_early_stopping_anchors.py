"""Anchors and second routes of the early-stopping claims, on synthetic runs.

Each test builds the run a claim reads, checks that the claim holds on it, and plants the
bug the anchor is there for: the claim must change its verdict.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims import get_claim


def test_rademacher_facts_must_be_attained_where_the_grid_passes_lambda_max():
    """Eq. (10): R̂_K(ϱ)² = tr K/N once ϱ² ≥ λ̂_max, so the smallest slacks of R̂² ≤ tr K/N and
    of monotonicity are 0. A slack taken as the largest instead of the smallest (≈ 1), or a
    fact that no longer reads R̂, keeps every slack ≥ 0 but is not attained."""
    claim = get_claim("early_stopping.eq10.rademacher_monotone")
    rng = np.random.default_rng(0)
    margins = np.column_stack(
        [rng.uniform(0, 0.5, 200), np.zeros(200), np.zeros(200), rng.uniform(0, 0.5, 200)]
    )
    margins[::7, 1] = -3e-16  # round-off below the bound
    assert claim.check(margins).outcome == "holds"
    for fact in (1, 2):
        loose = margins.copy()
        loose[:, fact] = rng.uniform(0.9, 1.0, 200)  # kept, but never attained
        assert claim.check(loose).outcome == "refuted", fact
