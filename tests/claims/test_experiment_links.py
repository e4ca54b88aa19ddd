"""A claim's ``experiment`` names a real experiment, and that experiment draws the claim's
simulation (one simulation per figure and claim).

The check is textual — the experiment's source must name the claim's ``simulate_*``
function — which is enough to catch a figure that draws its own copy of the computation.
"""

from __future__ import annotations

import functools
import inspect
import pathlib

import pytest

from ntsim.claims import REGISTRY, Claim

EXPERIMENTS = pathlib.Path(__file__).resolve().parents[2] / "experiments"

LINKED = [c for c in REGISTRY if isinstance(c, Claim) and c.experiment]


def _simulation_name(claim: Claim) -> str:
    fn = claim.uses.fn
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.unwrap(fn).__name__


def test_some_claims_name_their_experiment():
    assert len(LINKED) >= 20


@pytest.mark.parametrize("claim", LINKED, ids=lambda c: c.id)
def test_linked_experiment_exists_and_draws_the_claims_simulation(claim):
    path = EXPERIMENTS / f"{claim.experiment}.py"
    assert path.is_file(), f"{claim.id}: experiment {claim.experiment!r} does not exist"
    assert _simulation_name(claim) in path.read_text(encoding="utf-8"), (
        f"{claim.id}: experiment {claim.experiment} does not call "
        f"{_simulation_name(claim)} (the simulation the claim reads)"
    )
