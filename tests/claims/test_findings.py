"""Findings pages are generated from the records: the committed pages are what the
committed records produce, and a page says what a record says."""

from __future__ import annotations

import json
import pathlib

import pytest

from ntsim.claims import findings_page, write_findings

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOPICS = sorted(p.parent.name for p in (ROOT / "figures").glob("*/VERIFICATION.json"))


@pytest.mark.parametrize("topic", TOPICS)
def test_committed_findings_page_is_what_the_records_produce(topic):
    committed = ROOT / "docs" / "findings" / f"{topic}.md"
    assert committed.exists(), f"run `ntsim report` to write {committed}"
    assert committed.read_text(encoding="utf-8") == findings_page(topic, ROOT / "figures"), (
        f"{committed} differs from the records: run `ntsim report` and commit it"
    )


def _row(claim_id, verdict, reading, **extra):
    seeds = [0, 1]
    return {
        "id": claim_id, "paper": "Doe 2025, Thm 1", "statement": f"statement of {claim_id}",
        "kind": "bound", "reading": {"kind": reading, "source": f"quote of {claim_id}"},
        "verdict": verdict, "as_expected": True, "seeds": seeds,
        "per_seed": [{"seed": s, "verdict": verdict, "counterexample_found": f"found at {s}"}
                     for s in seeds],
        "worst_margin": 0.25, "headroom": 0.5, **extra,
    }  # fmt: skip


def test_a_refutation_shows_its_reading_counterexample_and_twin(tmp_path):
    rows = [
        _row(
            "toy.thm1.printed",
            "refuted",
            "printed",
            twin="toy.thm1.corrected",
            counterexample="all instances violate",
        ),  # fmt: skip
        _row("toy.thm1.corrected", "holds", "derived"),
    ]
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "VERIFICATION.json").write_text(json.dumps({"claims": rows}))
    page = findings_page("toy", tmp_path)
    assert "| printed refuted | 1 |" in page and "| derived holds | 1 |" in page
    assert "## Printed statements shown false" in page
    assert "quote of toy.thm1.printed" in page and "seed 1: refuted; found at 1" in page
    assert "statement of toy.thm1.corrected — **holds** at seeds 0, 1" in page
    assert "| `toy.thm1.corrected` | bound | statement of toy.thm1.corrected | 0.25 | 0.5 |" in page
    (written,) = write_findings(tmp_path, tmp_path / "docs")
    assert written.read_text() == page
