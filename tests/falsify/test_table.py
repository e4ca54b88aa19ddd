"""The committed falsification table (figures/FALSIFICATION.json) is current, complete, and
agrees with the claims' recorded verdicts: a violation found by search is either a recorded
refutation or a failing test here (record the refutation, or fix the bug it found)."""

from __future__ import annotations

import json
import pathlib

import pytest

from ntsim.falsify.spaces import SPACES

FIGURES = pathlib.Path(__file__).resolve().parents[2] / "figures"
TABLE = FIGURES / "FALSIFICATION.json"


def _entries() -> dict:
    return json.loads(TABLE.read_text(encoding="utf-8"))["claims"]


def _recorded_verdict(claim_id: str) -> str | None:
    path = FIGURES / claim_id.split(".", 1)[0] / "VERIFICATION.json"
    rows = json.loads(path.read_text(encoding="utf-8"))["claims"]
    return next((row["verdict"] for row in rows if row["id"] == claim_id), None)


def test_every_space_is_searched_at_its_current_source():
    from ntsim.falsify._record import stale_entries

    assert stale_entries(FIGURES) == [], "run `ntsim falsify --all` and commit the table"


def test_every_space_searches_a_registered_claim():
    from ntsim.claims import get_claim

    for space in SPACES.values():
        assert get_claim(space.claim_id).kind in ("bound", "identity", "sanity"), space.name


@pytest.mark.parametrize("name", sorted(SPACES))
def test_a_violation_found_by_search_is_a_recorded_refutation(name):
    entry = _entries()[name]
    verdict = _recorded_verdict(SPACES[name].claim_id)
    if entry["violated"]:
        assert verdict == "refuted", (
            f"{name}: search found ratio {entry['searched_worst_ratio']:.4g} > 1 on a claim "
            f"recorded as {verdict}: record the counterexample "
            f"(figures/falsification/{name.replace(':', '__')}.npz) or fix the bug it found"
        )
    assert entry["searched_worst_ratio"] >= entry["start_worst_ratio"] * (1 - 1e-12)
