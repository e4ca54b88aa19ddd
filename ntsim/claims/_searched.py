"""The worst case a claim has survived: ``ntsim falsify``'s table, joined to the records.

A verification row says how a claim fared on the instances its simulation drew (its *worst
margin*). When ``ntsim falsify`` has searched the claim's instance space, the row also
carries what the search found: for each searched space (``claim_id`` or ``claim_id:part``),
the largest ratio ``lhs/rhs`` of the statement ``lhs ≤ rhs`` among the random starts and the
largest any restart reached (above ``1 + tolerance``: a violation).

The search is read from ``<out>/FALSIFICATION.json``, the file ``ntsim falsify`` writes, so
this module does not import :mod:`ntsim.falsify` (which sits above the claims). Both
``ntsim verify`` (through :func:`~ntsim.claims.write_verification`) and ``ntsim falsify``
(through :func:`refresh_searches`) attach it, so the row and the table agree whichever ran
last.
"""

from __future__ import annotations

import pathlib

from ntsim import _io

__all__ = [
    "attach_searches",
    "search_flag",
    "search_summaries",
    "searched_cell",
    "violated_by_search",
]

TABLE = "FALSIFICATION.json"
_KEYS = ("start_worst_ratio", "searched_worst_ratio", "tolerance", "violated", "made",
         "source_hash")  # fmt: skip


def search_summaries(out_dir: str | pathlib.Path) -> dict[str, list[dict]]:
    """Claim id → the summaries of its searched spaces, from ``<out_dir>/FALSIFICATION.json``
    (``{}`` when there is none)."""
    path = pathlib.Path(out_dir) / TABLE
    if not path.exists():
        return {}
    try:
        spaces = _io.read_json(path)["claims"]
    except (KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a falsification table (no {error}).") from None
    by_claim: dict[str, list[dict]] = {}
    for name, entry in sorted(spaces.items()):
        summary = {"space": name, **{key: entry.get(key) for key in _KEYS}}
        by_claim.setdefault(entry["claim"], []).append(summary)
    return by_claim


def attach_searches(entries: list[dict], summaries: dict[str, list[dict]]) -> list[dict]:
    """``entries`` (verification rows) with ``search`` set from ``summaries`` (dropped from
    rows of claims that have none). A row recorded as holding whose search found a violation
    gains ``verdict_by_search = "refuted"``: it is counted and shown as refuted until the
    claim is re-recorded with the counterexample (or the bug the search found is fixed)."""
    rows = []
    for entry in entries:
        row = {k: v for k, v in entry.items() if k not in ("search", "verdict_by_search")}
        if entry["id"] in summaries:
            row["search"] = summaries[entry["id"]]
            if row.get("verdict") == "holds" and violated_by_search(row):
                row["verdict_by_search"] = "refuted"  # the search found a counterexample
        rows.append(row)
    return rows


def violated_by_search(entry: dict) -> list[str]:
    """Spaces of the row whose search found a violation."""
    return [s["space"] for s in entry.get("search", []) if s.get("violated")]


def search_flag(entry: dict) -> str | None:
    """A flag for a row recorded as holding whose search found a violation (the record must
    be re-made with the counterexample, or the bug the search found fixed)."""
    violated = violated_by_search(entry)
    if violated and entry.get("verdict") == "holds":
        return "VIOLATED by search: " + ", ".join(violated) + " (FALSIFICATION.md)"
    return None


def searched_cell(entry: dict) -> str:
    """The table cell: searched ratio (random starts), per searched space; ``-`` if none."""
    cells = []
    for s in entry.get("search", []):
        part = s["space"].split(":", 1)[1] + ": " if ":" in s["space"] else ""
        cells.append(
            f"{part}{s['searched_worst_ratio']:.3g} ({s['start_worst_ratio']:.3g})"
            + (" ✗" if s.get("violated") else "")
        )
    return "; ".join(cells) or "-"
