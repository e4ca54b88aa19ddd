"""The stability search spaces (Fu et al. 2023) against theory and independent oracles.

Oracles: the equality cases of Lemma A.1.3 (top eigenvector, c = 0) and of Thm 2.2's
certificate; the one-dimensional maximum of Lemma A.1.3 for the logistic loss
(max_m 2σ(−m)²/log(1 + e^{−m}) on a dense grid, in numpy); the closed-form band
[(μ/β)R/n, R/(n μ/β)] of sup‖Δ‖ against the printed eq. (3) at the claim's small radius; the
corrected Thm 2.2 bound and Lemma A.2.1, proved to hold.
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ntsim.claims import get_claim
from ntsim.falsify import falsify, get_space
from ntsim.falsify.spaces import stability


def _search(name, steps=200, restarts=8, seed=0):
    return falsify(get_space(name), jax.random.PRNGKey(seed), restarts=restarts, steps=steps)


def test_spaces_name_bound_or_identity_claims_with_their_round_off():
    from ntsim.claims.stability._full_finetuning import ROUND_OFF as FULL
    from ntsim.claims.stability._head_tuning_svm import ROUND_OFF as SVM

    assert stability.ROUND_OFF == FULL.value == SVM.value
    assert len(stability.SPACES) >= 6
    for space in stability.SPACES:
        claim = get_claim(space.claim_id)
        assert claim.kind in ("bound", "identity"), space.name
        assert space.tolerance in (0.0, stability.ROUND_OFF)
        assert get_space(space.name) is space


def test_lemma_a1_3_quadratic_reaches_its_equality_case():
    """‖H e‖² ≤ 2β(½eᵀHe + c) with equality at c = 0, e a top eigenvector: ratio → 1, no
    further than the claim's round-off."""
    result = _search("stability.lemma_a1_3.quadratic")
    assert 1.0 - 1e-6 < result.worst_ratio <= 1.0 + stability.ROUND_OFF
    assert result.worst_ratio > result.start_worst_ratio


def test_lemma_a1_3_logistic_reaches_the_one_dimensional_maximum():
    """For ℓ(xᵀw), β = ‖x‖²/4 the ratio is 2σ(−m)²/log(1 + e^{−m}) at m = xᵀw: its maximum
    over m (a numpy grid, independent of the library) is what the search must find."""
    m = np.linspace(-8.0, 8.0, 2_000_001)
    sig = 1.0 / (1.0 + np.exp(m))
    oracle = float(np.max(2 * sig**2 / np.log1p(np.exp(-m))))
    result = _search("stability.lemma_a1_3.logistic")
    assert 0.8 < oracle < 0.82
    assert result.worst_ratio == pytest.approx(oracle, rel=1e-7)


def _printed_radius_band():
    """sup_T‖Δ_T‖/eq.(3) lies in [(μ/β)R/n, R/(n μ/β)]/eq.(3) (one step; the certificate
    with contraction 1 − μ/β), eq. (3) with L = βR written out here."""
    p = stability.PRINTED_RADIUS
    mu, beta, n, r = p["mu"], p["beta"], p["n"], p["radius"]
    root = (1 - mu / beta) ** 0.25
    eq3 = math.sqrt(2 * beta * r) * r / beta * root / (n * (1 - root))
    return (mu / beta) * r / n / eq3, r / (n * mu / beta) / eq3


def test_printed_eq3_exceeds_its_counterexample_and_stays_in_the_closed_form_band():
    from ntsim.claims.stability._full_finetuning import _radius_violation_band

    low, high = _printed_radius_band()
    assert (low - 1, high - 1) == pytest.approx(_radius_violation_band())
    result = _search("stability.thm2_2.bound_printed_radius", steps=150, restarts=4)
    assert low < result.start_worst_ratio <= result.worst_ratio <= high
    assert result.worst_ratio > result.start_worst_ratio * 1.02


def test_thm2_2_corrected_bound_survives_and_the_certificate_is_tight_beyond_t_1():
    """The corrected bound is proved for every S, i, T: the search raises the ratio far above
    its random starts and stays below 1. The certificate is attained at t ≥ 2 when the other
    samples' curvature vanishes along Δ_1: ratio → 1, within round-off."""
    corrected = _search("stability.thm2_2.bound_corrected", steps=200)
    assert 10 * corrected.start_worst_ratio < corrected.worst_ratio < 1.0
    cert = _search("stability.thm2_2.certificate", steps=200, restarts=4)
    assert 0.999 < cert.worst_ratio <= 1.0 + stability.ROUND_OFF


def test_lemma_a2_1_and_a2_2_hold_and_approach_their_suprema():
    """Lemma A.2.1's ratio tends to 1 as b → −εa (never beyond); Lemma A.2.2 is attained
    (h₂ = 0, v₂ − v₁ ∥ x): both searched ratios → 1 from well below at the random starts."""
    for name in ("stability.lemma_a2_1.normalization_lipschitz",
                 "stability.lemma_a2_2.hinge_difference"):  # fmt: skip
        result = _search(name, steps=300)
        assert result.start_worst_ratio < 0.9
        assert 0.99 < result.worst_ratio <= 1.0 + stability.ROUND_OFF, name


def test_head_tuning_descent_below_two_over_beta_survives_random_search():
    """Below η = 2/β_F every GD step lowers the mean logistic loss (the descent lemma with the
    measured β_F): the largest one-step ratio L_{t+1}/L_t over random separable datasets and
    step sizes stays below 1 (its path is not reverse-differentiable: random search)."""
    from ntsim.falsify import random_search

    space = get_space("stability.lr.descent_below_two_over_beta")
    result = random_search(space, jax.random.PRNGKey(0), samples=2048)
    assert 0.9 < result.worst_ratio < 1.0
