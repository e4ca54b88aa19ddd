"""The MiniLM claims' checks can fail: each decides runs built by hand, whose verdict follows
from their construction (the checks on the real simulations run in test_registered_claims,
slow, since they need MiniLM)."""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.claims.early_stopping import _minilm as claims
from ntsim.theory.early_stopping import minilm


def _decay(beta_origin) -> minilm.MiniLMDecay:
    beta = np.asarray(beta_origin, float)
    k = np.arange(1.0, 21.0)
    spectra = k ** (-2 * beta[..., None])
    return minilm.MiniLMDecay(spectra, beta, beta - 0.15, 1000)


@pytest.mark.parametrize(
    ("betas", "outcome"),
    [
        ([[0.60, 0.61, 0.62], [0.63, 0.62, 0.64]], "holds"),
        ([[0.60, 0.61, 0.62], [0.40, 0.41, 0.42]], "refuted"),  # one dataset below 1/2
        ([[0.60, 0.61, 0.62], [0.40, 0.60, 0.55]], "inconclusive"),  # its CI straddles 1/2
    ],
)
def test_beta_check_follows_the_draws(betas, outcome):
    assert claims.check_beta_above_half(_decay(betas)).outcome == outcome


def _stopping(rule, best) -> minilm.MiniLMStopping:
    rule, best = np.asarray(rule, float), np.asarray(best, float)
    zeros = np.zeros_like(rule)
    curve = np.zeros((*rule.shape, 3))
    return minilm.MiniLMStopping(
        np.array([8, 16]), np.array([0, 10, 20]), rule, zeros + 1, zeros + 0.9, zeros + 0.3,
        zeros + 0.01, best, best, curve, curve, zeros + 1, zeros + 1,
    )  # fmt: skip


def test_rule_check_holds_when_the_rule_stops_first_and_is_refuted_when_it_stops_last():
    early = _stopping([[1, 2], [0, 3], [2, 1]], [[100, 200], [150, 90], [200, 120]])
    late = _stopping([[100, 200], [150, 90], [200, 120]], [[1, 2], [0, 3], [2, 1]])
    assert claims.check_rule_stops_early(early).outcome == "holds"
    assert claims.check_rule_stops_early(late).outcome == "refuted"
