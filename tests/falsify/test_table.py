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


def _replayed_ratio(name: str) -> float:
    import jax
    import jax.numpy as jnp

    from ntsim.falsify._record import load_instance

    space = SPACES[name]
    instance = load_instance(FIGURES, name)
    with jax.enable_x64(space.x64):
        lhs, rhs = space.sides({k: jnp.asarray(v) for k, v in instance.items()})
        return float(lhs / rhs)


_VIOLATED = sorted(name for name, entry in _entries().items() if entry["violated"])


@pytest.mark.parametrize("name", _VIOLATED)
def test_a_saved_counterexample_still_violates_its_statement(name):
    """The regression test of every violation search found: the saved worst instance,
    replayed through the space's sides, still gives the ratio the table reports."""
    entry = _entries()[name]
    ratio = _replayed_ratio(name)
    assert ratio > 1.0 + entry["tolerance"]
    assert ratio == pytest.approx(entry["searched_worst_ratio"], rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(SPACES) - set(_VIOLATED)))
def test_a_saved_worst_instance_replays_to_its_ratio(name):
    """Relative 1e-6; absolute 1e-3 for identities, whose ratio |error|/tolerance is round-off
    (~1e-5, and not reproducible bit for bit outside the search's jit) far below 1."""
    entry = _entries()[name]
    ratio = _replayed_ratio(name)
    assert ratio == pytest.approx(entry["searched_worst_ratio"], rel=1e-6, abs=1e-3)
    assert ratio <= 1.0 + entry["tolerance"]


@pytest.mark.parametrize("name", sorted(n for n, s in SPACES.items() if s.as_run is not None))
def test_the_claims_own_check_agrees_with_the_search_on_the_saved_instance(name):
    """The worst instance, replayed through the registered claim's ``check``: refuted exactly
    when the search found a violation, and the table records that outcome."""
    from ntsim.falsify._record import load_instance
    from ntsim.falsify._search import replay

    entry = _entries()[name]
    outcome = replay(SPACES[name], load_instance(FIGURES, name)).outcome
    assert outcome == ("refuted" if entry["violated"] else "holds")
    assert entry.get("replayed_check") == outcome, "run `ntsim falsify` again and commit"


def test_the_verification_rows_carry_the_committed_search():
    """Each claim's row in its VERIFICATION table shows what the committed table found
    (`ntsim report` or `ntsim falsify` re-attaches it)."""
    from ntsim.claims._searched import search_summaries

    summaries = search_summaries(FIGURES)
    for path in sorted(FIGURES.glob("*/VERIFICATION.json")):
        for row in json.loads(path.read_text(encoding="utf-8"))["claims"]:
            assert row.get("search") == summaries.get(row["id"]), (
                f"{row['id']}: run `ntsim report` and commit the tables"
            )
