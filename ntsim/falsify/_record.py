"""Saving what a search found: the worst instance (``.npz`` + JSON) and the table.

``<out>/falsification/<claim id>[__<part>].npz`` holds the worst instance's arrays (the theorem's
domain, as :meth:`SearchSpace.to_instance` returns them) and ``<claim id>.json`` the search
that found it; ``<out>/FALSIFICATION.json`` keeps one entry per claim searched (a later run
replaces the entries of the claims it ran) and ``<out>/FALSIFICATION.md`` is drawn from it.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib
import json
import pathlib

import numpy as np

from ntsim import _io
from ntsim.falsify._search import SearchResult, SearchSpace

__all__ = [
    "entry_for",
    "load_instance",
    "save_search",
    "space_hash",
    "stale_entries",
    "write_table",
]

TABLE = "FALSIFICATION"


def space_hash(space: SearchSpace) -> str:
    """16 hex digits over the claim's own source path (the theory it runs, as the claim
    records it) and the sources of the search and of the space's topic module: a table entry
    made at another hash is stale."""
    from ntsim.claims import claim_source_hash, get_claim

    digest = hashlib.sha256(claim_source_hash(get_claim(space.claim_id)).encode())
    topic = space.claim_id.split(".", 1)[0]
    for name in ("ntsim.falsify._search", f"ntsim.falsify.spaces.{topic}"):
        digest.update(pathlib.Path(importlib.import_module(name).__file__).read_bytes())
    return digest.hexdigest()[:16]


def stale_entries(out: str | pathlib.Path) -> list[str]:
    """Why the table under ``out`` is not current: spaces with no entry or an entry made at
    another :func:`space_hash`, and entries of spaces no longer declared."""
    from ntsim.falsify.spaces import SPACES

    path = pathlib.Path(out) / f"{TABLE}.json"
    recorded = _io.read_json(path)["claims"] if path.exists() else {}
    why = [f"{name}: no longer declared" for name in recorded if name not in SPACES]
    for name, space in SPACES.items():
        entry = recorded.get(name)
        if entry is None:
            why.append(f"{name}: not searched")
        elif entry.get("source_hash") != space_hash(space):
            why.append(f"{name}: source changed since it was searched")
    return why


def entry_for(result: SearchResult, space: SearchSpace, *, seed: int, restarts: int,
              learning_rate: float, record: dict | None = None) -> dict:  # fmt: skip
    """The JSON entry of one search (and, when given, the claim's recorded verdict)."""
    history = np.nanmax(result.history, axis=1)
    entry = {
        "space": result.claim_id,
        "claim": space.claim_id,
        "statement": space.description,
        "method": result.method,
        "seed": seed,
        "restarts": restarts,
        "steps": result.steps,
        "learning_rate": learning_rate,
        "seconds": round(result.seconds, 2),
        "start_worst_ratio": result.start_worst_ratio,
        "searched_worst_ratio": result.worst_ratio,
        "tolerance": space.tolerance,
        "violated": bool(result.worst_ratio > 1.0 + space.tolerance),
        "reaches_one": bool(abs(result.worst_ratio - 1.0) <= space.tolerance),
        "feasible_starts": int(np.sum(np.isfinite(result.start_ratio))),
        "samples": int(np.size(result.start_ratio)) if result.method == "random" else None,
        "worst_ratio_by_record": [float(v) for v in history],
        "made": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "source_hash": space_hash(space),
    }
    if record is not None:
        keys = ("verdict", "expect", "worst_margin", "scale", "seeds")
        entry["record"] = {k: record.get(k) for k in keys}
    return entry


def _file_stem(name: str) -> str:
    """``claim_id`` or ``claim_id__part`` (no ``:`` in file names)."""
    return name.replace(":", "__")


def save_search(entry: dict, result: SearchResult, out: str | pathlib.Path) -> pathlib.Path:
    """Write the worst instance and its entry under ``<out>/falsification/``; the JSON path."""
    folder = pathlib.Path(out) / "falsification"
    folder.mkdir(parents=True, exist_ok=True)
    stem = _file_stem(result.claim_id)
    np.savez(folder / f"{stem}.npz", **result.worst_instance)
    path = folder / f"{stem}.json"
    path.write_text(json.dumps(entry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_instance(out: str | pathlib.Path, claim_id: str) -> dict[str, np.ndarray]:
    """The saved worst instance of the space ``claim_id[:part]`` (to replay its sides)."""
    path = pathlib.Path(out) / "falsification" / f"{_file_stem(claim_id)}.npz"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no saved instance; run `ntsim falsify {claim_id}`.")
    with np.load(path) as data:
        return dict(data)


def write_table(entries: list[dict], out: str | pathlib.Path) -> pathlib.Path:
    """Merge ``entries`` into ``<out>/FALSIFICATION.json`` and redraw the markdown table."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{TABLE}.json"
    table = _io.read_json(path) if path.exists() else {"claims": {}}
    for entry in entries:
        table["claims"][entry["space"]] = entry
    table["claims"] = dict(sorted(table["claims"].items()))
    path.write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / f"{TABLE}.md").write_text(markdown_table(table), encoding="utf-8")
    return path


def _flag(entry: dict) -> str:
    checked = entry.get("replayed_check")
    checked = f"; the claim's check on it: {checked}" if checked else ""
    if entry["violated"]:
        return f" (violated{checked})"
    if entry.get("reaches_one"):
        return f" (1 to the claim's round-off {entry['tolerance']:g}{checked})"
    return f" (the claim's check on it: {entry['replayed_check']})" if checked else ""


def _effort(entry: dict) -> str:
    if entry["method"] == "random":
        return f"{entry.get('samples', entry['restarts'] * entry['steps'])} samples"
    return f"{entry['restarts']} × {entry['steps']}"


def markdown_table(table: dict) -> str:
    """``FALSIFICATION.md``: per claim, random starts against the search (ratio lhs/rhs)."""
    lines = [
        "# Falsification: the worst case each claim has survived",
        "",
        "Generated by `ntsim falsify` from `FALSIFICATION.json`; do not edit. Each row searched "
        "the claim's instance space (`ntsim/falsify/spaces/<topic>.py`) for the largest ratio "
        "lhs/rhs of its statement `lhs ≤ rhs`: above 1 is a violation. *Random starts* is the "
        "largest ratio among the search's random starting instances, *searched* the largest "
        "any restart reached (for random search: the largest over all its samples). *1 to "
        "the claim's round-off* means the bound's supremum is reached: an equality case, or a "
        "degenerate limit where both sides meet (docs/guides/falsify.md says which). A "
        "searched ratio r < 1 also bounds the search's power: a bug that tightens the bound "
        "by a factor above r is caught, a smaller one is not. Where the space can build the "
        "claim's simulation output for one instance, the worst instance is also replayed "
        "through the claim's own check.",
        "",
        "| claim[:part] | recorded verdict | random starts | searched | restarts × steps | method "
        "| seconds | statement searched |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for claim, e in table["claims"].items():
        verdict = (e.get("record") or {}).get("verdict") or "—"
        lines.append(
            f"| `{claim}` | {verdict} | {e['start_worst_ratio']:.4g} | "
            f"**{e['searched_worst_ratio']:.4g}**{_flag(e)} | "
            f"{_effort(e)} | {e['method']} | {e['seconds']:.1f} | "
            f"{e['statement'].replace('|', chr(92) + '|')} |"
        )
    return "\n".join(lines) + "\n"
