"""Premises (ntsim.claims._premises.given): a verdict only on instances the statement is
about. The unit rules, and the claims that use them going inconclusive — not holding, not
refuted — on an instance outside their theorem's hypotheses."""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.claims import compare
from ntsim.claims._premises import given


def _conclusion(measured):
    return compare(np.asarray(measured, float), 1.0, relation="upper_bound")


def test_premises_keep_the_verdict_when_they_hold_and_report_their_counts():
    result = given(_conclusion([0.5, 0.9]), {"η below 2/L": np.array([True, True])})
    assert result.outcome == "holds"
    assert result.diagnostics["premise: η below 2/L"] == "2 of 2"


@pytest.mark.parametrize("measured", [[0.5, 0.9], [0.5, 1.5]], ids=["holds", "refuted"])
def test_a_failed_premise_makes_any_verdict_inconclusive(measured):
    """A counterexample outside the hypotheses is no counterexample: refuted → inconclusive."""
    result = given(_conclusion(measured), {"misaligned": np.array([True, False]),
                                           "positive": True})  # fmt: skip
    assert result.outcome == "inconclusive"
    assert "misaligned (1 of 2 fail)" in result.notes
    assert "positive" not in result.notes.split(":", 1)[1].split(".")[0]
    np.testing.assert_array_equal(result.measured, np.asarray(measured))


def test_premises_must_be_boolean_and_named():
    with pytest.raises(ValueError, match="at least one premise"):
        given(_conclusion([0.5]), {})
    with pytest.raises(TypeError, match="must be boolean"):
        given(_conclusion([0.5]), {"step": np.array([0.3])})
    with pytest.raises(ValueError, match="no entries"):
        given(_conclusion([0.5]), {"step": np.array([], bool)})


def _quick(claim_id: str):
    """The claim and its quick-scale run at seed 0, as the runner makes it."""
    import jax

    from ntsim.claims import claim_key, get_claim

    claim = get_claim(claim_id)
    sim = claim.uses
    with jax.enable_x64(sim.x64):
        return claim, sim.fn(claim_key(0, sim.key), sim.setting("quick"))


def _check(claim, run):
    import jax

    with jax.enable_x64(claim.uses.x64):
        return claim.check(run)


def test_progressive_sensitivity_is_inconclusive_on_spectra_that_are_not_misaligned():
    """Thm 4.6 assumes (α, 1)-misalignment (σ^ft_i > ασ^pre_i, i > 1, α > 1). With pre and ft
    swapped on half the instances — a generator that stopped drawing misaligned spectra —
    the claim decides nothing, whatever the increments do."""
    claim, run = _quick("overtraining.thm4_6.progressive_sensitivity")
    assert _check(claim, run).outcome == "holds"
    half = np.arange(run.pre.shape[0]) % 2 == 0
    pre = np.where(half[:, None], run.ft, run.pre)
    ft = np.where(half[:, None], run.pre, run.ft)
    planted = _check(claim, run._replace(pre=pre, ft=ft))
    assert planted.outcome == "inconclusive"
    assert "misaligned" in planted.notes


def test_converged_model_is_inconclusive_when_epsilon_breaks_assumption_a21():
    """Lemma A.23 holds under A.21: an ε ten times its limit (the bound itself does not read
    ε) takes the instances outside the lemma."""
    claim, run = _quick("overtraining.lemma_a23.converged_model")
    assert _check(claim, run).outcome == "holds"
    planted = _check(claim, run._replace(eps=10 * np.asarray(run.eps)))
    assert planted.outcome == "inconclusive"
    assert "ε <" in planted.notes
