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
    of monotonicity are 0, and R̂_K(ϱ) = ϱ once ϱ² ≤ λ̂_min, so is that of R̂ ≤ ϱ. A slack
    taken as the largest instead of the smallest (≈ 1), a flipped R̂ ≤ ϱ (ϱ + R̂ > 0), or a
    fact that no longer reads R̂, keeps every slack ≥ 0 but is not attained."""
    claim = get_claim("early_stopping.eq10.rademacher_monotone")
    rng = np.random.default_rng(0)
    margins = np.column_stack(
        [np.zeros(200), np.zeros(200), np.zeros(200), rng.uniform(0, 0.5, 200)]
    )
    margins[::7, 1] = -3e-16  # round-off below the bound
    margins[::5, 0] = 2e-24  # round-off above it (R̂ = ϱ at the grid's lower end)
    assert claim.check(margins).outcome == "holds"
    for fact in (0, 1, 2):
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


def test_critical_radius_must_cross_one_by_between_delta_and_two_delta_just_below_the_root():
    """Eq. (10): R̂_K non-decreasing and R̂_K/ϱ non-increasing put h = R̂/(cϱ²) at ϱ̂(1 − δ) in
    [(1 − δ)^{−1}, (1 − δ)^{−2}] (h(ϱ̂) = 1). The flipped sign of the simulation's h − 1
    (h + 1 ≈ 2, trivially > 0) and a root off by more than δ both leave the old check ≥ 0."""
    claim = get_claim("early_stopping.eq11.critical_radius")
    delta, n = es.BELOW_ROOT, 200
    rng = np.random.default_rng(4)
    run = es.CriticalRadiusRun(
        residual=np.full(n, 4e-16),
        fails_below=delta * rng.uniform(1.01, 1.99, n),
        sigma_monotone=rng.uniform(0.1, 0.5, n),
        c_h_monotone=rng.uniform(0.1, 0.5, n),
    )
    run.fails_below[:2] = [1 / (1 - delta) - 1, (1 - delta) ** -2 - 1]  # the attained ends
    assert claim.check(run).outcome == "holds"
    flipped = run._replace(fails_below=run.fails_below + 2)  # h + 1 instead of h − 1
    assert claim.check(flipped).outcome == "refuted"
    not_the_root = run._replace(fails_below=run.fails_below * 100)  # ϱ̂ above the root
    assert claim.check(not_the_root).outcome == "refuted"


def test_corrected_c_h_exponent_must_give_the_same_stopping_time():
    """The rescaled problems' T̂ = ⌊1/(αϱ̂²)⌋ share α: equal ϱ̂ give the same integer. A T̂ of
    one problem halved (ϱ̂ still equal) now refutes the corrected exponent."""
    claim = get_claim("early_stopping.eq11.c_h_exponent_corrected")
    rng = np.random.default_rng(5)
    t_hat = rng.integers(1, 3000, 200).astype(float)
    corrected = np.column_stack([np.full(200, 2e-16), np.zeros(200)])
    run = es.CHRescaling(printed=np.column_stack([np.full(200, 0.5), t_hat]), corrected=corrected)
    assert claim.check(run).outcome == "holds"
    halved = corrected.copy()
    halved[:, 1] = np.abs(0.5 * t_hat - t_hat)
    assert claim.check(run._replace(corrected=halved)).outcome == "refuted"


def test_stopping_time_closed_form_needs_the_rules_step_condition():
    """Raskutti et al.'s rule is defined for α_t ≤ 1/λ̂_max: a generator that draws α from
    1/λ̂_min (max ↔ min) keeps the closed form exact but leaves the statement's setting."""
    claim = get_claim("early_stopping.stopping_rule.closed_form")
    rng = np.random.default_rng(6)
    rule = rng.integers(0, 500, (200, 4))
    run = es.StoppingTimesRun(
        rule=rule,
        closed=rule.copy(),
        c_h_monotone=np.abs(rng.integers(0, 5, (200, 2))),
        fired=np.ones(200, bool),
        step_times_lambda_max=rng.uniform(0.2, 1.0, 200),
    )
    assert claim.check(run).outcome == "holds"
    too_large = run._replace(step_times_lambda_max=run.step_times_lambda_max * 1e3)
    planted = claim.check(too_large)
    assert planted.outcome == "inconclusive" and "step condition" in planted.notes


def _init_logits(moment):
    widths = np.array([64, 128, 256, 512])
    rng = np.random.default_rng(7)
    inverse = 2.0 / np.sqrt(widths)[:, None] * rng.uniform(0.9, 1.1, (4, 50))
    return es.InitLogits(
        widths=widths,
        inverse=inverse,
        inverse_sqrt=inverse * np.sqrt(widths)[:, None],
        inverse_moment=moment * rng.uniform(0.8, 1.2, (4, 50)),
        inverse_sqrt_moment=moment * rng.uniform(0.8, 1.2, (4, 50)),
    )


def test_logit_scaling_must_carry_the_scale_of_eq3_at_the_gaussian_init():
    """E[S² | h] = s²‖h_t‖²‖h_s‖²/n at the N(0, 1/n) init: logits twice eq. (3)'s (4× the
    mean square) keep both slopes, and only the anchor sees them."""
    claim = get_claim("early_stopping.lemma2.logit_scaling")
    assert claim.check(_init_logits(1.0)).outcome == "holds"
    assert claim.check(_init_logits(4.0)).outcome == "refuted"
    assert claim.check(_init_logits(0.25)).outcome == "refuted"
