"""Planted bugs on the overtraining claims' own paths: each must change the outcome.

Every test monkeypatches one formula a claim reads (×2, a dropped term, an off-by-one, a
sign) and runs the claim through :func:`ntsim.claims.run_claims` at quick scale, seed 0;
the registered claims' unpatched verdicts are checked by ``test_registered_claims``.
"""

from __future__ import annotations

import pytest

import ntsim.theory.overtraining._perturbation as perturbation
from ntsim.claims import get_claim, run_claims
from ntsim.theory import overtraining as ot


def _outcome(claim_id: str):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,))
    return record


# ------------------------------------------------------------------------------ perturbation


def test_doubled_increment_formula_refutes_prop4_3(monkeypatch):
    original = ot.perturbed_increments
    monkeypatch.setattr(ot, "perturbed_increments", lambda s, g: 2 * original(s, g))
    record = _outcome("overtraining.prop4_3.increment")
    assert record.verdict == "refuted" and not record.as_expected


def test_off_by_one_inflection_formula_refutes_thm4_4(monkeypatch):
    original = ot.gaussian_inflection
    monkeypatch.setattr(ot, "gaussian_inflection", lambda s, g: original(s, g) + 1)
    assert _outcome("overtraining.thm4_4.inflection").verdict == "refuted"


def test_doubled_hessian_trace_refutes_prop_d1(monkeypatch):
    original = ot.hessian_trace
    monkeypatch.setattr(ot, "hessian_trace", lambda w1, w2: 2 * original(w1, w2))
    assert _outcome("overtraining.prop_d1.hessian_trace").verdict == "refuted"


@pytest.mark.parametrize("factor", [0.0, 2.0])
def test_wrong_quartic_term_of_the_perturbed_loss_is_caught(monkeypatch, factor):
    """Dropping (or doubling) the d³γ⁴ term of the closed form: the Monte Carlo claim and the
    Prop D.1 decomposition both notice."""
    original = perturbation.expected_perturbed_loss

    def planted(w1, w2, a, gamma):
        d = w1.shape[0]
        return original(w1, w2, a, gamma) + (factor - 1.0) * d**3 * gamma**4

    monkeypatch.setattr(perturbation, "expected_perturbed_loss", planted)
    monkeypatch.setattr(ot, "expected_perturbed_loss", planted)
    assert _outcome("overtraining.lemma_a5.expected_perturbed_loss").verdict == "refuted"
    assert _outcome("overtraining.prop_d1.hessian_trace").verdict == "refuted"
