"""Anchors of the linearization claims: equality cases and closed forms a looser bound misses.

Each test runs the claim at quick scale (seed 0), checks that it holds, and plants the bug the
anchor is there for (a bound made looser, a threshold made larger): both leave every
inequality true, so only the anchor can notice them, and the verdict must change.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import ntsim.theory.linearization as lz
from ntsim.claims import RunCache, get_claim, run_claims
from ntsim.claims.linearization import _gap
from ntsim.theory.linearization import _bounds

CACHE = RunCache(maxsize=4)


def _record(claim_id: str, *, cache=CACHE):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,), cache=cache)
    assert record.per_seed[0].error is None, record.per_seed[0].error
    return record


def test_thm7_step_bounds_must_be_attained_at_no_extra_kernel(monkeypatch):
    """At S = 0 with y* along K's eigenvector of λ_min, R^{1/2} = σ‖y*‖/(λ_min(K) + σ), the
    corrected upper bound. λ_min(K + σI) taken as σ (λ_min(K) dropped) inflates κ and both
    upper bounds: every inequality still holds, the equality case does not."""
    assert _record("linearization.thm7.step_printed").verdict == "holds"
    original = lz.thm7_step_bounds

    def without_lambda_min(kernel, extra, targets, ridge, *, printed):
        b = original(kernel, extra, targets, ridge, printed=printed)
        lam_min = jnp.maximum(jnp.linalg.eigvalsh(kernel)[0], 0) + ridge
        loosened = (lam_min / ridge) ** (2 if printed else 1)  # κ ↑, and the printed λ_min ↓
        return b._replace(upper=b.upper * loosened)

    monkeypatch.setattr(lz, "thm7_step_bounds", without_lambda_min)
    assert _record("linearization.thm7.step_printed", cache=None).verdict == "refuted"


def test_linear_containment_ratio_closed_form_matches_the_split_step_recursion():
    """The closed form against the top-mode recursion a_{k+1} = (1 − λη)(a_k(1 − 2ημ) +
    2η‖Φ‖r_0), run step by step (μ = ‖Φ‖² = 1: the ratio is free of Φ's scale)."""
    for r0 in (0.2, 0.7, 1.2):
        radius = r0**2 / _gap._LINEAR_C
        lam = 2 * r0 / radius  # λ_o with Lip(f) = ‖Φ‖ = 1
        eta = _gap._LINEAR_LAM_ETA / lam
        a = 0.0
        for _ in range(_gap._LINEAR_STEPS):
            a = (1 - lam * eta) * (a * (1 - 2 * eta) + 2 * eta * r0)
        np.testing.assert_allclose(a / radius, _gap.linear_containment_ratio(r0), rtol=1e-12)


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_thm4_containment_must_reach_its_closed_form_at_the_threshold(monkeypatch, factor):
    """On the linear worst case at exactly λ = λ_o the distance is a closed form just below r.
    λ_o ×2 keeps every run in the ball (a weaker statement that still holds); only the closed
    form notices it. λ_o ×½ is noticed too."""
    assert _record("linearization.thm4.containment").verdict == "holds"
    original = _bounds.thm4_lambda_o
    monkeypatch.setattr(_bounds, "thm4_lambda_o", lambda *a: factor * original(*a))
    assert _record("linearization.thm4.containment", cache=None).verdict == "refuted"
