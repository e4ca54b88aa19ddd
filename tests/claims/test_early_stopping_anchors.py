"""Anchors and second routes of the early-stopping claims, on synthetic runs.

Each test builds the run a claim reads, checks that the claim holds on it, and plants the
bug the anchor is there for: the claim must change its verdict.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims import get_claim
from ntsim.theory import early_stopping as es


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


def _mixed_init_sweep(relative_error):
    widths = np.array([16, 32, 64])
    rng = np.random.default_rng(3)
    head = 0.6 / widths[:, None] * rng.uniform(0.8, 1.2, (3, 24))
    backbone = 0.6 / widths[:, None] * rng.uniform(0.8, 1.2, (3, 24))
    ones = np.ones((3, 24))
    return es.MixedInitSweep(
        widths=widths,
        relative_error=relative_error(head, backbone),
        head_error=head,
        backbone_error=backbone,
        pretrain_distance=ones / widths[:, None],
        source_loss=0.01 * ones,
    )


def test_lemma5_expansion_error_must_lie_within_the_triangle_bounds_of_its_parts():
    """e is the sum of its eq. (94) and eq. (96) parts: ‖e‖/‖Θ‖ above their sum (as when the
    error is divided by ‖Θ‖_F − 1 instead of ‖Θ‖_F) refutes the rate claim whose slope holds."""
    claim = get_claim("early_stopping.lemma5.random_init_expansion")
    assert claim.check(_mixed_init_sweep(lambda h, b: 0.8 * (h + b))).outcome == "holds"
    over = _mixed_init_sweep(lambda h, b: 1.2 * (h + b))  # the same slope, too large
    assert claim.check(over).outcome == "refuted"
    under = _mixed_init_sweep(lambda h, b: 0.5 * np.abs(h - b))  # below |‖e_94‖ − ‖e_96‖|
    assert claim.check(under).outcome == "refuted"
