"""The paper-SVM claim's counterexample is two-sided: a run with e_aug and e_paper swapped
(which at quick scale also violates the per-dataset bound on some datasets, GD not yet
converged) is refuted without the declared counterexample, so its verdict changes."""

from __future__ import annotations

import jax

from ntsim.claims import REGISTRY


def test_swapped_directions_do_not_match_the_counterexample():
    (claim,) = [c for c in REGISTRY if c.id == "stability.soudry.paper_svm_direction"]
    with jax.enable_x64(True):
        run = claim.uses.fn(jax.random.PRNGKey(0), claim.uses.scales["quick"])
    result = claim.check(run)
    assert result.outcome == "refuted" and claim.counterexample.matches(result)[0]
    swapped = claim.check(run._replace(e_aug=run.e_paper, e_paper=run.e_aug))
    assert swapped.outcome == "refuted" and not claim.counterexample.matches(swapped)[0]
