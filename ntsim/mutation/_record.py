"""The kill matrix on disk: ``MUTATION.json`` (everything) and ``MUTATION.md`` (to read).

One entry per topic, replaced whole when the topic is run again: the mutants with their
status and who noticed them, per-function and per-claim counts, the claim kill rate
(mutants killed by claims / non-equivalent mutants), the same counting only kills by a
changed verdict, the survivors unit tests kill, the source hash of the topic's claims it ran
at and the rule it was classified under (``ntsim report --stale`` compares both).
"""

from __future__ import annotations

import collections
import datetime
import json
import pathlib
from collections.abc import Mapping, Sequence

from ntsim import _io
from ntsim.mutation._survivors import reason_for

__all__ = [
    "CHECKED_KINDS",
    "MATRIX_RULE",
    "verdict_kills",
    "blind_spots",
    "markdown_matrix",
    "stale_matrix",
    "summarise_topic",
    "write_matrix",
]

#: The claim kinds that must kill some mutant (the others are sanity checks and estimates
#: with no formula of their own to get wrong).
CHECKED_KINDS: tuple[str, ...] = ("identity", "bound", "rate", "trend", "ordering")


#: The version of the classification rule an entry was made under (stale when older):
#: 2 (2026-11-30) decides "equivalent" on the mutated function's own outputs on the claims'
#: calls, not only on the claims' numbers; an error raised at the mutated expression itself
#: (ill-typed) makes a mutant invalid; a smoke claim's verdict kills nothing; a claim counts
#: as killing a mutant only by a changed verdict, not by raising.
MATRIX_RULE = 2


def verdict_kills(outcome: Mapping) -> set[str]:
    """The claims that killed ``outcome`` by a changed verdict or counterexample match (not by
    raising, hanging or crashing): what a claim of a checked kind needs at least one of.

    Examples:
      >>> sorted(verdict_kills({"claims_killed": ["a", "b"], "claims_errored": ["b"]}))
      ['a']
    """
    return set(outcome.get("claims_killed", ())) - set(outcome.get("claims_errored", ()))


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> list[float] | None:
    """The Wilson score interval (95% by default) of a proportion: how far a topic's kill rate,
    a proportion of some 60–150 mutants, may be from the rate of the operators' population.

    Examples:
      >>> [round(v, 3) for v in wilson_interval(63, 73)]
      [0.766, 0.924]
    """
    if trials == 0:
        return None
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * (p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5 / (1 + z * z / trials)
    return [centre - half, centre + half]


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def summarise_topic(
    topic: str,
    outcomes: Sequence[Mapping],
    claim_kinds: Mapping[str, str],
    *,
    scale: str,
    claim_seed: int,
    sample_seed: int,
    source_hash: str,
    seconds: float,
    functions_on_paths: int,
    claim_hashes: Mapping[str, str] | None = None,
) -> dict:
    """The JSON entry of one topic from its mutants' outcomes (``MutantOutcome.to_json``);
    ``claim_hashes`` (claim → code hash) lets a later ``--resume`` reuse the outcomes of the
    claims that did not change."""
    counted = [o for o in outcomes if o["status"] in ("killed", "survived")]
    by_claims = [o for o in counted if o["status"] == "killed"]
    by_tests = [o for o in counted if o["tests_killed"]]
    functions: dict[str, dict] = collections.defaultdict(
        lambda: {"mutants": 0, "killed": 0, "survived": 0, "equivalent": 0, "tests_killed": 0}
    )
    claims: dict[str, dict] = {
        cid: {"kind": kind, "killed": 0, "killed_by_verdict": 0, "moved_numbers": 0}
        | ({"code_hash": claim_hashes[cid]} if claim_hashes and cid in claim_hashes else {})
        for cid, kind in claim_kinds.items()
    }
    for o in outcomes:
        row = functions[f"{o['module']}.{o['function']}"]
        row["mutants"] += 1
        if o["status"] in row:
            row[o["status"]] += 1
        row["tests_killed"] += bool(o["tests_killed"])
        if o["status"] in ("killed", "survived"):
            for cid in o["claims_killed"]:
                claims[cid]["killed"] += 1
            for cid in verdict_kills(o):
                claims[cid]["killed_by_verdict"] += 1
            for cid in set(o["claims_killed"]) | set(o["claims_changed"]):
                claims[cid]["moved_numbers"] += 1
    return {
        "topic": topic,
        "scale": scale,
        "claim_seed": claim_seed,
        "sample_seed": sample_seed,
        "source_hash": source_hash,
        "rule": MATRIX_RULE,
        "made": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "seconds": round(seconds, 1),
        "functions_on_paths": functions_on_paths,
        "functions_mutated": len(functions),
        "mutants": len(outcomes),
        "killed": len(by_claims),
        "survived": len(counted) - len(by_claims),
        "equivalent": sum(o["status"] == "equivalent" for o in outcomes),
        "invalid": sum(o["status"] == "invalid" for o in outcomes),
        "not_judged": sum(o["status"] == "not judged" for o in outcomes),
        "claim_kill_rate": _rate(len(by_claims), len(counted)),
        "claim_kill_rate_interval": wilson_interval(len(by_claims), len(counted)),
        "survivors_killed_by_tests": len(by_tests),
        "killed_by_errors_only": sum(
            o["status"] == "killed" and not verdict_kills(o) for o in outcomes
        ),
        "claim_kill_rate_by_verdicts": _rate(
            sum(o["status"] == "killed" and bool(verdict_kills(o)) for o in outcomes),
            len(counted),
        ),
        "killed_by_timeouts": sum(
            o["status"] == "killed" and str(o.get("error") or "").startswith("timeout")
            for o in outcomes
        ),
        "survived_on_outputs_only": sum(
            o["status"] == "survived" and not o["claims_changed"] and _outputs_moved(o)
            for o in outcomes
        ),
        "survived_uncompared": sum(
            o["status"] == "survived" and not o["claims_changed"] and not _outputs_moved(o)
            for o in outcomes
        ),
        "functions": dict(sorted(functions.items())),
        "claims": dict(sorted(claims.items())),
        "outcomes": list(outcomes),
    }


def _outputs_moved(outcome: Mapping) -> bool:
    return bool((outcome.get("outputs") or {}).get("differed"))


def _fmt_rate(value: float | None) -> str:
    """Three decimals: two would print 61/72 = 0.847, under the 0.85 floor, as 0.85."""
    return "—" if value is None else f"{value:.3f}"


def _fmt_interval(entry: Mapping) -> str:
    interval = entry.get("claim_kill_rate_interval")
    return "" if not interval else f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def blind_spots(entry: Mapping) -> list[dict]:
    """The survivors of a topic's entry that no :data:`~ntsim.mutation.REASONS` covers."""
    return [o for o in entry["outcomes"] if o["status"] == "survived" and reason_for(o) is None]


def _silent_claims(entry: Mapping) -> list[str]:
    """Claims of a checked kind with no kill by a changed verdict in ``entry``."""
    return [
        cid
        for cid, row in entry["claims"].items()
        if row["kind"] in CHECKED_KINDS and row.get("killed_by_verdict", row["killed"]) == 0
    ]


_HEADER = """\
# Mutation kill matrix

Generated by `ntsim mutate`. Each mutant is one plausible bug (a term ×2 or ×½, a flipped
sign, a dropped term, a transpose, n → n − 1, swapped arguments, max ↔ min, < ↔ ≤) in a
function of `ntsim.theory`/`ntsim.core` on some claim's path, run on those claims at one
seed, with the original function run beside it on every call and their results compared.

- **Killed**: some claim's verdict or counterexample match changed, or a claim raised where
  it did not before (a *smoke* claim, whose quick scale decides nothing, kills only by
  raising). A run past its time limit twice counts as killed by every claim it ran
  (*timeouts* below).
- **Survived**: no verdict changed, but some claim's numbers moved, or the function's own
  results moved on the claims' calls while no claim's numbers did (*outputs only* below:
  the claims read the function through a threshold, or not at all), or nothing moved but
  the function's results could not be compared on every call (*uncompared* below: an
  equivalence not shown is not assumed).
- **Equivalent**: the function's results were compared on the claims' calls and agreed
  with the original's (to round-off) on every one, and no claim's numbers moved; a mutant
  of a line no claim runs is equivalent without a run. Left out of the rate.
- **Invalid**: the mutant does not compile, or its only effect is a `TypeError` raised at the
  mutated expression itself (`2.0 * x.shape`, a float passed to `range`): an ill-typed
  program, not a formula bug. Left out of the rate.
- **Not judged**: it moved something, but every claim that ran it is a smoke claim, whose
  quick-scale verdict decides nothing (the MiniLM claims): it can neither kill nor survive
  at this scale. Left out of the rate, counted apart.

Claim kill rate = killed / (killed + survived), with its 95% Wilson interval (the rate is a
proportion of a sample of mutants); *by verdicts* counts only the mutants some
claim killed by a changed verdict (not by raising). A claim of a checked kind (identity,
bound, rate, trend, ordering) must kill some mutant by a changed verdict. Unit tests run only
on survivors: the column counts the survivors they kill.

A survivor either has a reason no claim can notice it (`ntsim/mutation/_survivors.py`:
equivalent in effect, or outside what the claims state) or is a **blind spot**.
"""


def markdown_matrix(matrix: Mapping[str, dict]) -> str:
    """``MUTATION.md`` from the topics of ``MUTATION.json`` and the current reasons."""
    lines = [
        _HEADER,
        "| topic | mutants | killed (errors only; timeouts) | survived (outputs only; "
        "uncompared; blind spots) | equivalent | invalid | not judged "
        "| claim kill rate (by verdicts) "
        "| survivors killed by unit tests | functions mutated / on paths | scale, seed | rule "
        "| source hash |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for topic, entry in sorted(matrix.items()):
        name = f"{topic} (partial)" if entry.get("partial") else topic
        lines.append(
            f"| {name} | {entry['mutants']} "
            f"| {entry['killed']} ({entry['killed_by_errors_only']}; "
            f"{entry.get('killed_by_timeouts', '—')}) "
            f"| {entry['survived']} ({entry.get('survived_on_outputs_only', '—')}; "
            f"{entry.get('survived_uncompared', '—')}; {len(blind_spots(entry))}) "
            f"| {entry['equivalent']} | {entry['invalid']} | {entry.get('not_judged', '—')} "
            f"| {_fmt_rate(entry['claim_kill_rate'])} {_fmt_interval(entry)} "
            f"({_fmt_rate(entry.get('claim_kill_rate_by_verdicts'))}) "
            f"| {entry.get('survivors_killed_by_tests', '—')} "
            f"| {entry['functions_mutated']} / {entry['functions_on_paths']} "
            f"| {entry['scale']}, {entry['claim_seed']} | {entry.get('rule', 1)} "
            f"| `{entry['source_hash']}` |"
        )
    for topic, entry in sorted(matrix.items()):
        lines += ["", f"## {topic}", ""]
        survivors = [o for o in entry["outcomes"] if o["status"] == "survived"]
        blind = blind_spots(entry)
        lines.append(f"### Survivors ({len(survivors)}; {len(blind)} without a reason)")
        lines.append("")
        if survivors:
            lines.append(
                "| function | mutant | claims whose numbers moved | unit tests | why no claim "
                "notices it |"
            )
            lines.append("|---|---|---|---|---|")
        for o in survivors:
            tests = {True: "killed", False: "survived", None: "none name it"}[o["tests_killed"]]
            mutant = f"{o['operator']} at line {o['line']}: `{_cell(o['before'])}` → "
            mutant += f"`{_cell(o['after'])}`"
            moved = ", ".join(o["claims_changed"]) or (
                "none (outputs only; ran: " + ", ".join(o["claims_run"]) + ")"
            )
            reason = reason_for(o)
            why = (
                "**blind spot** (no reason given)"
                if reason is None
                else (f"*{reason.category}*: {reason.why.replace('|', chr(92) + '|')}")
            )
            lines.append(f"| `{o['function']}` | {mutant} | {moved} | {tests} | {why} |")
        silent = _silent_claims(entry)
        lines += [
            "",
            f"### Claims of a checked kind that killed no mutant by a verdict ({len(silent)})",
            "",
        ]
        for cid in silent:
            row = entry["claims"][cid]
            moved = row.get("moved_numbers", row.get("non_equivalent_on_path"))
            lines.append(
                f"- `{cid}` ({row['kind']}; {row['killed']} kills by raising; {moved} mutants "
                "moved its numbers)"
            )
        unkilled = [
            name
            for name, row in entry["functions"].items()
            if row["killed"] == 0 and row["survived"] > 0
        ]
        lines += ["", f"### Functions with a survivor and no claim kill ({len(unkilled)})", ""]
        lines += [f"- `{name}`" for name in unkilled]
    return "\n".join(lines) + "\n"


def _cell(text: str, width: int = 70) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|").replace("`", "'")
    return text if len(text) <= width else text[: width - 1] + "…"


def write_matrix(out: pathlib.Path, entries: Sequence[dict]) -> tuple[pathlib.Path, pathlib.Path]:
    """Merge ``entries`` (one per topic) into ``out/MUTATION.json`` and rewrite the Markdown."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "MUTATION.json", out / "MUTATION.md"
    matrix = {}
    if json_path.exists():
        matrix = _io.read_json(json_path).get("topics", {})
    for entry in entries:
        matrix[entry["topic"]] = entry
    json_path.write_text(
        json.dumps({"topics": dict(sorted(matrix.items()))}, indent=1) + "\n", encoding="utf-8"
    )
    md_path.write_text(markdown_matrix(matrix), encoding="utf-8")
    return json_path, md_path


def stale_matrix(out: pathlib.Path, topic: str | None = None) -> list[dict]:
    """Topics of ``out/MUTATION.json`` made at another source than the checkout's, and
    registered topics the file lacks (``{"id", "table", "why"}``, as the claims' stale rows).

    Nothing is listed while the file does not exist: the matrix is made on request
    (``ntsim mutate``), not by every verification.
    """
    from ntsim.claims import REGISTRY
    from ntsim.mutation import topic_claims_and_users, topic_claims_hash

    path = pathlib.Path(out) / "MUTATION.json"
    if not path.exists():
        return []
    recorded = _io.read_json(path).get("topics", {})
    topics = sorted({c.topic for c in REGISTRY} if topic is None else {topic})
    stale = []
    for name in topics:
        entry = recorded.get(name)
        if entry is None:
            stale.append({"id": f"mutation:{name}", "table": str(path), "why": "not recorded"})
            continue
        now = topic_claims_hash(topic_claims_and_users(name)[0])
        if entry.get("source_hash") != now:
            why = f"source changed ({entry.get('source_hash')} → {now})"
            stale.append({"id": f"mutation:{name}", "table": str(path), "why": why})
        elif entry.get("rule", 1) != MATRIX_RULE:
            why = f"made under classification rule {entry.get('rule', 1)}, now {MATRIX_RULE}"
            stale.append({"id": f"mutation:{name}", "table": str(path), "why": why})
    return stale
