"""The verification tables: ``<out>/<topic>/VERIFICATION{,_quick}.{md,json}`` and the index.

:func:`write_verification` merges finished :class:`~ntsim.claims.ClaimRecord` s into their
topic's JSON (a record replaces the row of the same claim and keeps the others, so topics
or single claims can be re-verified later), rewrites that topic's Markdown and the index.
The CLI calls it after *every* claim, so an interrupted ``ntsim verify`` keeps what finished.

Verdict classes are counted apart: printed statements that hold, printed statements refuted
(each with its counterexample), other readings (proof, figure, derived), sanity checks,
inconclusive, errors, and rows recorded under the retired v1 contract (one seed,
one-sided refutations), which count as legacy until they are re-made.
:func:`stale_records` lists rows whose source hash no longer matches the checkout.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Sequence

from ntsim import _io
from ntsim._scales import check_scale
from ntsim.claims._runner import ClaimRecord, claim_code_hash, claim_source_hash
from ntsim.claims._searched import attach_searches, search_flag, search_summaries, searched_cell

__all__ = [
    "entry_class",
    "finished_rows",
    "refresh_searches",
    "stale_records",
    "write_index",
    "write_verification",
]

#: Headroom below which a row is flagged (relative margin of the closest instance).
LOW_HEADROOM = 0.10
#: For an estimate, |headroom| is measured in CI half-widths: below this the verdict is
#: flagged as near the region's edge (it may flip at other seeds).
NEAR_EDGE = 1.0

CLASSES = (
    ("printed_holds", "printed holds"),
    ("printed_refuted", "printed refuted"),
    ("other_holds", "other reading holds"),
    ("other_refuted", "other reading refuted"),
    ("sanity", "sanity"),
    ("inconclusive", "inconclusive"),
    ("error", "error"),
    ("legacy", "legacy (v1)"),
)


def _suffix(scale: str) -> str:
    """Full-scale records are committed; quick ones are local, like quick figures."""
    return "" if scale == "full" else f"_{scale}"


def _finite_or_none(value: float):
    return None if value is None or not math.isfinite(value) else float(value)


def _entry(record: ClaimRecord, metadata: dict) -> dict:
    claim = record.claim
    first = next((s.result for s in record.per_seed if s.result is not None), None)
    tolerance = first.tolerance.to_dict() if first is not None else None
    return {
        "id": claim.id,
        "paper": claim.paper,
        "statement": claim.statement,
        "kind": claim.kind,
        "reading": {"kind": claim.reading.kind, "source": claim.reading.source},
        "simulation": claim.uses.name,
        "expect": claim.expect,
        "counterexample": None if claim.counterexample is None else claim.counterexample.describe(),
        "twin": claim.twin,
        "verdict": record.verdict,
        "as_expected": record.as_expected,
        "smoke": record.smoke,
        "flips": record.flips,
        "scale": record.scale,
        "seeds": list(record.seeds),
        "per_seed_verdicts": [s.verdict for s in record.per_seed],
        "per_seed": [
            {
                "seed": s.seed,
                "verdict": s.verdict,
                "worst_margin": _finite_or_none(s.result.worst_margin) if s.result else None,
                "headroom": _finite_or_none(s.result.headroom) if s.result else None,
                "num_instances": s.result.num_instances if s.result else None,
                "interval": list(s.result.interval) if s.result and s.result.interval else None,
                "estimate": float(s.result.measured[0]) if s.result and s.result.interval else None,
                "counterexample_matched": s.counterexample_matched,
                "counterexample_found": s.counterexample_found,
                "seconds": s.seconds,
                "error": s.error,
            }
            for s in record.per_seed
        ],
        "num_instances": record.num_instances,
        "worst_margin": _finite_or_none(record.worst_margin),
        "headroom": _finite_or_none(record.headroom),
        "tolerance_source": tolerance,
        "region": first.region.describe() if first is not None and first.region else None,
        "diagnostics": dict(first.diagnostics) if first is not None else {},
        "notes": first.notes if first is not None else "",
        "error": next((s.error for s in record.per_seed if s.error), None),
        "source_hash": record.source_hash,
        "code_hash": record.code_hash,
        "scale_code_hash": record.scale_code_hash,
        "seconds": record.seconds,
        "commit": metadata["git_commit"],
        "timestamp": metadata["timestamp"],
        "backend": metadata["backend"],
    }


def entry_class(entry: dict) -> str:
    """The verdict class a table row is counted in (see :data:`CLASSES`)."""
    if entry["verdict"] == "error":
        return "error"
    if entry.get("kind") in (None, "legacy") or entry.get("reading") is None:
        return "legacy"
    if entry["kind"] == "sanity":
        return "sanity"
    if entry["verdict"] == "inconclusive":
        return "inconclusive"
    side = "printed" if entry["reading"]["kind"] == "printed" else "other"
    return f"{side}_{entry.get('verdict_by_search', entry['verdict'])}"


def _flags(entry: dict) -> list[str]:
    flags = []
    tolerance = entry.get("tolerance_source") or {}
    if tolerance.get("source") == "chosen":
        flags.append("chosen tolerance")
    headroom = entry.get("headroom")
    if entry["verdict"] in ("holds", "refuted") and entry["kind"] not in ("legacy", "sanity"):
        if headroom is not None and 0 <= headroom < LOW_HEADROOM:
            flags.append("headroom < 10%")
    if entry["verdict"] == "refuted" and entry.get("region") and headroom is not None:
        if -LOW_HEADROOM < headroom < 0:
            flags.append("fragile refutation (CI < 10% of its half-width outside)")
    if entry["verdict"] in ("holds", "refuted") and entry.get("region") and headroom is not None:
        if LOW_HEADROOM <= abs(headroom) < NEAR_EDGE:
            # A CI within one half-width of the region's edge can cross it at another seed.
            flags.append("near edge (< 1 CI half-width)")
    if entry.get("flips"):
        flags.append("seeds disagree")
    if entry["kind"] == "legacy" and entry["expect"] == "refuted":
        flags.append("one-sided (v1)")
    if search_flag(entry):
        flags.append(search_flag(entry))
    return flags


def _fmt(value, spec=".3g") -> str:
    return "-" if value is None else format(value, spec)


def _verdict(entry: dict) -> str:
    if entry.get("verdict_by_search"):
        return f"**{entry['verdict_by_search']} by search** (recorded {entry['verdict']})"
    return entry["verdict"]


def _smoke(entry: dict) -> str:
    return "; a smoke run at this scale, not held to it" if entry.get("smoke") else ""


def _row(entry: dict) -> str:
    reading = entry["reading"]["kind"] if entry.get("reading") else "-"
    status = "✓" if entry["as_expected"] and not search_flag(entry) else "✗ UNEXPECTED"
    statement = entry["statement"].replace("|", "\\|")
    seeds = ",".join(str(s) for s in entry.get("seeds", [])) or "-"
    per_seed = "/".join(v[0].upper() for v in entry.get("per_seed_verdicts", []))
    tolerance = (entry.get("tolerance_source") or {}).get("source", "-")
    return (
        f"| `{entry['id']}` | {entry['paper']} | {statement} | {entry['kind']} | {reading} | "
        f"{seeds} ({per_seed}) | {entry.get('num_instances', '-')} | "
        f"{_fmt(entry.get('worst_margin'))} | {_fmt(entry.get('headroom'))} | "
        f"{searched_cell(entry)} | {tolerance} | "
        f"{_verdict(entry)} (expected {entry['expect']}{_smoke(entry)}) {status} | "
        f"{'; '.join(_flags(entry)) or '-'} | {entry['seconds']:.1f} | "
        f"`{str(entry['commit'])[:8]}` |"
    )


_LEGEND = (
    "Verdicts: **holds** (every instance satisfies the statement, or the estimate's "
    "confidence interval lies inside the claimed region), **refuted** (a violation, or the "
    "interval lies outside), **inconclusive** (the interval straddles a boundary, or seeds "
    "disagree). A verdict is holds/refuted only when every seed agrees (per-seed letters in "
    "the seeds column). *Reading*: printed (the paper's words), proof, figure, or derived "
    "(the project's own stronger reading: its refutation is not a refutation of the paper). "
    "*Margin*: the closest instance's slack (≥ 0 satisfies); *headroom*: that slack relative "
    "to its threshold (for an estimate: in CI half-widths; *near edge* flags an estimate "
    "less than one half-width from flipping, which other seeds may flip). *Searched*: for a "
    "bound or identity whose instance space `ntsim falsify` searched (FALSIFICATION.md), the "
    "largest ratio lhs/rhs of `lhs ≤ rhs` it reached, and in brackets the largest among its "
    "random starts (above 1: a violation, marked ✗). A refuted "
    "printed statement is as expected only when its declared counterexample matches. "
    "*legacy (v1)* rows are claims not yet moved to contract v2: "
    "their refutations are one-sided."
)


def _counts(entries: list[dict]) -> dict[str, int]:
    counts = {name: 0 for name, _ in CLASSES}
    for entry in entries:
        counts[entry_class(entry)] += 1
    return counts


def _counts_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{label} {counts[name]}" for name, label in CLASSES if counts[name])


def _topic_markdown(topic: str, scale: str, entries: list[dict]) -> str:
    good = sum(e["as_expected"] for e in entries)
    lines = [
        f"# `{topic}`: claim verification, scale `{scale}`",
        "",
        "Generated by `ntsim verify`; do not edit. Each row records the run that produced it "
        "(seeds, seconds, commit, source hash in the JSON); re-running some claims replaces "
        "only their rows. " + _LEGEND,
        "",
        f"**{good} of {len(entries)} claims as expected** ({_counts_line(_counts(entries))}).",
        "",
        "| id | reference | statement | kind | reading | seeds | instances | worst margin | "
        "headroom | searched lhs/rhs (random starts) | tolerance | verdict | flags | seconds | "
        "commit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *(_row(e) for e in entries),
        "",
    ]
    refuted = [e for e in entries if e["verdict"] == "refuted"]
    if refuted:
        lines += ["## Refutations", ""]
        for e in refuted:
            reading = e["reading"]["kind"] if e.get("reading") else "legacy (v1)"
            found = "; ".join(
                f"seed {s['seed']}: {s['counterexample_found']}"
                for s in e.get("per_seed", [])
                if s.get("counterexample_found")
            )
            lines.append(
                f"- `{e['id']}` ({reading} reading"
                + (f"; twin `{e['twin']}`" if e.get("twin") else "")
                + f"): declared counterexample: {e.get('counterexample') or 'none (v1)'}"
                + (f"; found: {found}" if found else "")
                + "."
            )
        lines.append("")
    notes = []
    for e in entries:
        parts = []
        if e.get("reading"):
            parts.append(f"*{e['reading']['kind']}*: {e['reading']['source']}")
        tolerance = e.get("tolerance_source") or {}
        if tolerance.get("source") not in (None, "none"):
            text = f"tolerance ({tolerance['source']}"
            text += f", {tolerance['value']:.3g}" if tolerance.get("value") is not None else ""
            text += f"): {tolerance.get('why', '')}"
            if tolerance.get("observed"):
                text += f" Observed when chosen: {tolerance['observed']}."
            parts.append(text)
        if e.get("diagnostics"):
            parts.append(
                "diagnostics: " + ", ".join(f"{k} = {v}" for k, v in e["diagnostics"].items())
            )
        if e.get("notes"):
            parts.append(e["notes"])
        if parts:
            notes.append(f"- `{e['id']}`: " + " ".join(p.rstrip() for p in parts))
    if notes:
        lines += ["## Notes", "", *notes, ""]
    errors = [f"### `{e['id']}`\n\n```\n{e['error']}```\n" for e in entries if e.get("error")]
    if errors:
        lines += ["## Errors", "", *errors]
    return "\n".join(lines)


def _upgrade(entry: dict) -> dict:
    """A row written before contract v2 (``seed``, ``result``) in the v2 layout."""
    if "per_seed_verdicts" in entry:
        return entry
    result = entry.get("result") or {}
    return {
        **entry,
        "kind": "legacy",
        "reading": None,
        "seeds": [entry.get("seed", 0)],
        "per_seed_verdicts": [entry["verdict"]],
        "num_instances": result.get("num_instances", 0),
        "worst_margin": result.get("worst_margin"),
        "headroom": None,
        "tolerance_source": None,
        "notes": result.get("notes", ""),
        "source_hash": None,
    }


def _load(path: pathlib.Path) -> list[dict]:
    if not path.exists():
        return []
    why = None
    try:
        table = json.loads(path.read_text())
        if not isinstance(table, dict):
            why = f"a JSON {type(table).__name__}, not a table object"
        else:
            return [_upgrade(e) for e in table["claims"]]
    except IsADirectoryError:
        why = "a directory"
    except (OSError, ValueError, KeyError, TypeError) as error:
        why = str(error) or type(error).__name__
    raise ValueError(
        f"{path}: not a readable verification table ({why}); move it away to start anew."
    )


def _merge(path: pathlib.Path, new: list[dict]) -> list[dict]:
    """Entries of ``path`` with those of ``new`` replacing same-id ones, in registry order.

    Entries of claims that are no longer registered in a registered topic are dropped.
    """
    from ntsim.claims import REGISTRY

    by_id = {e["id"]: e for e in _load(path)}
    by_id.update({e["id"]: e for e in new})
    order = {claim.id: i for i, claim in enumerate(REGISTRY)}
    topics = {claim.topic for claim in REGISTRY}
    kept = [e for e in by_id.values() if e["id"] in order or e["id"].split(".")[0] not in topics]
    return sorted(kept, key=lambda e: order.get(e["id"], len(order)))


def write_verification(
    records: Sequence[ClaimRecord],
    *,
    out_dir: str | pathlib.Path = "figures",
    scale: str,
    metadata: dict | None = None,
) -> tuple[pathlib.Path, pathlib.Path]:
    """Merge ``records`` into their topics' tables and rewrite the index (module doc).

    Returns:
      The paths of the index ``VERIFICATION{,_quick}.md`` and ``.json``.
    """
    check_scale(scale)
    out_dir = pathlib.Path(out_dir)
    suffix = _suffix(scale)
    metadata = metadata or _io.run_metadata()
    by_topic: dict[str, list[dict]] = {}
    for record in records:
        if record.scale != scale:
            raise ValueError(
                f"record of {record.claim.id} is at scale {record.scale}, not {scale}."
            )
        by_topic.setdefault(record.claim.topic, []).append(_entry(record, metadata))
    searches = search_summaries(out_dir)
    for topic, new in by_topic.items():
        path = out_dir / topic / f"VERIFICATION{suffix}.json"
        entries = attach_searches(_merge(path, new), searches)
        _io.write_json(path, {"topic": topic, "scale": scale, "claims": entries})
        _io.atomic_write_text(path.with_suffix(".md"), _topic_markdown(topic, scale, entries))
    return write_index(out_dir, scale)


def refresh_searches(out_dir: str | pathlib.Path = "figures") -> list[pathlib.Path]:
    """Re-attach ``<out_dir>/FALSIFICATION.json`` to every topic table (both scales) and
    redraw their Markdown and the indices; the JSON tables rewritten."""
    out_dir = pathlib.Path(out_dir)
    searches = search_summaries(out_dir)
    written = []
    for scale in ("quick", "full"):
        suffix = _suffix(scale)
        paths = sorted(out_dir.glob(f"*/VERIFICATION{suffix}.json"))
        for path in paths:
            topic = path.parent.name
            entries = attach_searches(with_scale_code_hashes(_load(path)), searches)
            written.append(
                _io.write_json(path, {"topic": topic, "scale": scale, "claims": entries})
            )
            _io.atomic_write_text(path.with_suffix(".md"), _topic_markdown(topic, scale, entries))
        if paths:
            write_index(out_dir, scale)
    return written


def write_index(out_dir: str | pathlib.Path, scale: str) -> tuple[pathlib.Path, pathlib.Path]:
    """Rebuild ``<out_dir>/VERIFICATION{,_quick}.{md,json}`` from the topic tables."""
    from ntsim.claims import REGISTRY

    out_dir = pathlib.Path(out_dir)
    suffix = _suffix(scale)
    registered: dict[str, int] = {}
    for claim in REGISTRY:
        registered[claim.topic] = registered.get(claim.topic, 0) + 1
    topics = []
    for path in sorted(out_dir.glob(f"*/VERIFICATION{suffix}.json")):
        entries = _load(path)
        if not entries:
            continue
        topic = path.parent.name
        topics.append(
            {
                "topic": topic,
                "recorded": len(entries),
                "registered": registered.get(topic, 0),
                "as_expected": sum(e["as_expected"] for e in entries),
                "classes": _counts(entries),
                "seeds": sorted(
                    {s for e in entries for s in e.get("seeds", [e.get("seed")]) if s is not None}
                ),  # fmt: skip
                "flips": sum(bool(e.get("flips")) for e in entries),
                "chosen_tolerances": sum(
                    (e.get("tolerance_source") or {}).get("source") == "chosen" for e in entries
                ),
                "low_headroom": sum("headroom < 10%" in _flags(e) for e in entries),
                "seconds": sum(e["seconds"] for e in entries),
                "newest": max(e["timestamp"] for e in entries),
                "commits": sorted({str(e["commit"])[:8] for e in entries}),
                "table": f"{topic}/VERIFICATION{suffix}.md",
            }
        )
    total = {name: sum(t["classes"][name] for t in topics) for name, _ in CLASSES}
    good = sum(t["as_expected"] for t in topics)
    recorded = sum(t["recorded"] for t in topics)
    recorded_ids = {
        e["id"] for path in out_dir.glob(f"*/VERIFICATION{suffix}.json") for e in _load(path)
    }
    missing = sum(claim.id not in recorded_ids for claim in REGISTRY)
    orphans = len(recorded_ids - {claim.id for claim in REGISTRY})
    header = " | ".join(label for _, label in CLASSES)
    lines = [
        f"# ntsim claim verification, scale `{scale}`",
        "",
        "Generated by `ntsim verify` (index over the per-topic tables; do not edit). " + _LEGEND,
        "",
        f"**{good} of {recorded} recorded claims as expected**"
        + (f"; {missing} registered claims not yet verified at this scale" if missing else "")
        + (f"; {orphans} rows of claims no longer registered" if orphans else "")
        + (
            f"; {total['legacy']} of them recorded under the legacy (v1) contract — one seed, "
            "one-sided refutations, no source hash — and not yet evidence in the sense below."
            if total["legacy"]
            else "."
        ),
        f"By class: {_counts_line(total)}. Only *printed refuted* rows show a printed statement "
        "of a paper false; *other reading refuted* rows refute the project's proof, figure or "
        "derived reading.",
        "",
        f"| topic | as expected | recorded / registered | {header} | seeds | seed flips | "
        "chosen tolerances | headroom < 10% | seconds (sum) | newest run | commits |",
        "|---|---|---|" + "---|" * len(CLASSES) + "---|---|---|---|---|---|---|",
        *(
            f"| [{t['topic']}]({t['table']}) | {t['as_expected']} of {t['recorded']} | "
            f"{t['recorded']} / {t['registered']} | "
            + " | ".join(str(t["classes"][name]) for name, _ in CLASSES)
            + f" | {','.join(map(str, t['seeds']))} | {t['flips']} | {t['chosen_tolerances']} | "
            f"{t['low_headroom']} | {t['seconds']:.0f} | {t['newest']} | "
            f"{', '.join(f'`{c}`' for c in t['commits'])} |"
            for t in topics
        ),
        "",
    ]
    md = _io.atomic_write_text(out_dir / f"VERIFICATION{suffix}.md", "\n".join(lines))
    payload = {"scale": scale, "classes": total, "topics": topics}
    return md, _io.write_json(out_dir / f"VERIFICATION{suffix}.json", payload)


def stale_records(
    out_dir: str | pathlib.Path = "figures", scale: str = "full", *, topic: str | None = None
) -> list[dict]:
    """Rows of the ``scale`` tables that no longer match the checkout.

    A row is stale when its claim is no longer registered, when it has no source hash
    (made before provenance was recorded), or when the claim's transitive code differs
    from the one it was made at (compared by the code hash, which leaves docstrings and
    comments out; rows older than the code hash compare the source hash). A registered
    claim with no row at all is listed too ("not recorded"), so an empty or missing table
    never reads as clean.
    ``topic`` restricts both to one topic. Each item: ``{"id", "table", "why"}``.
    """
    from ntsim.claims import REGISTRY

    check_scale(scale)
    registered = [c for c in REGISTRY if topic is None or c.topic == topic]
    if topic is not None and not registered:
        raise ValueError(f"No registered claim has topic {topic!r}.")
    by_id = {claim.id: claim for claim in REGISTRY}
    pattern = f"{topic or '*'}/VERIFICATION{_suffix(scale)}.json"
    stale = []
    for path in sorted(pathlib.Path(out_dir).glob(pattern)):
        for entry in _load(path):
            claim = by_id.get(entry["id"])
            if claim is None:
                why = "claim no longer registered"
            elif not entry.get("source_hash"):
                why = "no source hash (recorded before provenance)"
            elif not _current(entry, claim):
                if entry.get("scale_code_hash"):
                    now = claim_code_hash(claim, entry.get("scale"))
                    why = f"code changed ({entry['scale_code_hash']} → {now}, at its scale)"
                elif entry.get("code_hash"):
                    why = f"code changed ({entry['code_hash']} → {claim_code_hash(claim)})"
                else:
                    why = f"source changed ({entry['source_hash']} → {claim_source_hash(claim)})"
            else:
                continue
            stale.append({"id": entry["id"], "table": str(path), "why": why})
    recorded = {
        entry["id"] for path in pathlib.Path(out_dir).glob(pattern) for entry in _load(path)
    }
    for claim in registered:
        if claim.id not in recorded:
            table = pathlib.Path(out_dir) / claim.topic / f"VERIFICATION{_suffix(scale)}.json"
            stale.append({"id": claim.id, "table": str(table), "why": "not recorded"})
    return stale


def _current(row: dict, claim) -> bool:
    """The row was made at the claim's current code: compared by the hash at the row's
    scale where the row has one (other scales' settings may have changed since), else by
    the code hash (docstrings and comments may have changed), else, for older rows, by the
    source."""
    if row.get("scale_code_hash"):
        if row["scale_code_hash"] == claim_code_hash(claim, row.get("scale")):
            return True
        # made where the scale hasher refused (then the scale hash *is* the code hash) and
        # read by a hasher that no longer refuses: current while the code is unchanged
        refused = row["scale_code_hash"] == row.get("code_hash")
        return refused and row["code_hash"] == claim_code_hash(claim)
    if row.get("code_hash"):
        return row["code_hash"] == claim_code_hash(claim)
    return row.get("source_hash") == claim_source_hash(claim)


def with_scale_code_hashes(entries: list[dict]) -> list[dict]:
    """``entries``, each current row that lacks a ``scale_code_hash`` (or carries the code
    hash as one: made where the scale hasher refused) given the one of its claim now
    (sound: the row's code hash equals the current one, so the code it was made at *is*
    the current code). Such rows thereby stay current when only another scale's settings
    change later; stale rows are left as they are."""
    from ntsim.claims import REGISTRY

    by_id = {claim.id: claim for claim in REGISTRY}
    upgraded = []
    for row in entries:
        claim = by_id.get(row["id"])
        refused = row.get("scale_code_hash") in (None, "", row.get("code_hash"))
        if claim is not None and refused and row.get("code_hash"):
            if row.get("scale") and _current(row, claim):
                row = {**row, "scale_code_hash": claim_code_hash(claim, row["scale"])}
        upgraded.append(row)
    return upgraded


def finished_rows(
    claims: Sequence, *, out_dir: str | pathlib.Path, scale: str, seeds: Sequence[int]
) -> dict[str, dict]:
    """Rows of ``claims`` already recorded at these ``seeds`` and the current code (source,
    for rows older than the code hash), not errors, by id: what ``ntsim verify --resume``
    skips."""
    check_scale(scale)
    out_dir = pathlib.Path(out_dir)
    done = {}
    for topic in sorted({claim.topic for claim in claims}):
        rows = {e["id"]: e for e in _load(out_dir / topic / f"VERIFICATION{_suffix(scale)}.json")}
        for claim in claims:
            row = rows.get(claim.id)
            if (
                row is not None
                and row["verdict"] != "error"
                and row.get("seeds") == list(seeds)
                and _current(row, claim)
            ):
                done[claim.id] = row
    return done
