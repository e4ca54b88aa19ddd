"""Every registered claim, at quick scale, reaches its expected verdict through the runner
(one parametrised test, in the spirit of optax's ``_OPTIMIZERS_UNDER_TEST``).

Claims that read one simulation run in one xdist group, so the module-level run cache
computes each run once per worker.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.claims import REGISTRY, Claim, RunCache, get_claim, run_claims, select_claims

CACHE = RunCache(maxsize=4)


@pytest.fixture(autouse=True)
def _release_compiled_programs_per_claim():
    """This module compiles hundreds of programs in one worker: release them after each
    claim (see tests/conftest.py; the run cache keeps the simulations' results)."""
    yield
    jax.clear_caches()


def test_registry_is_well_formed():
    ids = [claim.id for claim in REGISTRY]
    assert len(set(ids)) == len(ids)
    for claim in REGISTRY:
        assert isinstance(claim, Claim), claim.id
        assert claim.statement and claim.paper, claim.id
        assert get_claim(claim.id) is claim
    assert select_claims("linear_teachers") == tuple(
        c for c in REGISTRY if c.topic == "linear_teachers"
    )


def _group(claim) -> str:
    return claim.uses.name


def _slow(claim) -> bool:
    return claim.slow_at_quick


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(
            claim,
            marks=[pytest.mark.xdist_group(_group(claim))]
            + ([pytest.mark.slow] if _slow(claim) else []),
        )
        for claim in REGISTRY
    ],
    ids=lambda claim: claim.id,
)
def test_claim_quick(claim):
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=CACHE)
    (seed,) = record.per_seed
    assert seed.error is None, seed.error
    result = seed.result
    detail = f"{result.notes} {dict(result.diagnostics)} {seed.counterexample_found}"
    assert record.as_expected, f"{record.verdict} (expected {claim.expect}): {detail}"
    assert result.num_instances >= claim.min_instances
    assert result.margins.shape == result.measured.shape == result.reference.shape
    assert np.all(np.isfinite(result.measured)), result.notes
    assert result.notes or result.diagnostics


def test_claims_reject_unknown_scale():
    with pytest.raises(ValueError, match="scale"):
        run_claims(REGISTRY[:1], scale="huge")


@pytest.mark.slow
@pytest.mark.parametrize(
    "claim",
    [pytest.param(claim, marks=pytest.mark.xdist_group(_group(claim))) for claim in REGISTRY],
    ids=lambda claim: claim.id,
)
def test_claim_quick_other_seeds(claim):
    """`make test-full`: the quick verdict is the expected one at seeds 1 and 2 as well (a
    verdict that rests on one seed is not evidence)."""
    (record,) = run_claims([claim], scale="quick", seeds=(1, 2), cache=CACHE)
    errors = [s.error for s in record.per_seed if s.error]
    assert not errors, errors[0]
    assert record.as_expected, [
        (s.seed, s.verdict, s.result.notes, s.counterexample_found) for s in record.per_seed
    ]
