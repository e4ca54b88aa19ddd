"""The kill matrix: mutants of the functions claims run, and which claims notice them.

For a topic, :func:`~ntsim.mutation._sampling.topic_functions` maps every mutable function on
some claim's path to those claims; :func:`~ntsim.mutation._sampling.select_mutants` draws
mutants from them (stratified: one per function in turn, so a sample of at least the number
of functions covers every function); :func:`run_mutant` runs one mutant in a child process
(:mod:`ntsim.mutation._worker`) on its claims at one scale and seed, then on the unit tests
that name the function, and :func:`classify` compares the claims' summaries with the
unmutated baseline:

* **killed** — some claim's verdict or counterexample match changed, or it raised (a smoke
  claim only by raising; an error at the mutated expression itself is not a kill, below),
  or it ran past its time limit twice (:func:`claim_time_limits`; the kill is that claim's);
* **survived** — no verdict changed, but some claim's numbers moved (beyond round-off): those
  claims are the ones that *should* have caught it; or no claim's numbers moved while the
  mutated function's own results did on the claims' calls (:mod:`ntsim.mutation._outputs`);
  or nothing moved but the function's results could not be compared on every call (none
  compared, or some unobservable): an equivalence not shown is not assumed;
* **equivalent** — the function's results were compared on the claims' calls and agreed
  with the original's on every one, and no claim's numbers moved (left out of the kill
  rate, whatever the unit tests say). A mutant whose node no claim executes
  (:func:`run_covered_baseline` traces the lines each claim runs) is equivalent without
  being run;
* **invalid** — the mutant does not compile, or it only raised a ``TypeError`` at the
  mutated expression itself (an ill-typed program; left out of the rate);
* **not judged** — it moved something, but every claim that ran it is a smoke claim at this
  scale (:data:`ntsim.claims.QUICK_SMOKE_CLAIMS`), whose verdict decides nothing there: it
  could neither kill nor survive (left out of the rate, counted apart).

The claim kill rate is killed / (killed + survived).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from ntsim.mutation._operators import Site
from ntsim.mutation._reuse import reusable_runs
from ntsim.mutation._server import ClaimServer, ask, child_env
from ntsim.mutation._worker import NEVER_FIRED, noticed

__all__ = [
    "TESTS_WHEN",
    "ClaimServer",
    "MutantOutcome",
    "baseline_seconds",
    "classify",
    "executing_claims",
    "run_baseline",
    "run_covered_baseline",
    "run_mutant",
]

#: Two claim outputs are the same to round-off when they agree to this relative tolerance.
ROUND_OFF_RTOL = 1e-6
ROUND_OFF_ATOL = 1e-12

_REPO = pathlib.Path(__file__).resolve().parents[2]

#: When the unit tests naming a mutated function run: only for survivors (mutants that moved
#: some claim's numbers and no verdict: enough for the rates and the survivors' table; an
#: equivalent mutant is out of the rate whatever the tests say), for every mutant, or never.
TESTS_WHEN: tuple[str, ...] = ("survivors", "all", "none")


@dataclass
class MutantOutcome:
    """One mutant and what noticed it (see the module doc for the statuses)."""

    module: str
    function: str
    operator: str
    line: int
    before: str
    after: str
    index: int
    status: str = ""
    claims_run: list[str] = field(default_factory=list)
    #: Claims that execute the mutated line but were not run: after a kill, claims that had
    #: already killed some mutant may be skipped (``run_mutant``'s ``may_skip``). Smoke claims
    #: may be skipped too and are not named here (their verdicts cannot kill).
    claims_skipped: list[str] = field(default_factory=list)
    claims_killed: list[str] = field(default_factory=list)
    claims_changed: list[str] = field(default_factory=list)
    claims_errored: list[str] = field(default_factory=list)
    tests_run: list[str] = field(default_factory=list)
    tests_killed: bool | None = None
    error: str | None = None
    seconds: float = 0.0
    round: int = 1  # r ≥ 2: drawn for a claim still silent after round r − 1 (silent_claim_mutants)
    #: Calls of the mutated function whose results agreed with the original's, differed, or
    #: could not be compared (:mod:`ntsim.mutation._outputs`); None: not compared.
    outputs: dict | None = None

    def to_json(self) -> dict:
        return asdict(self)


def _same_numbers(a: list[float], b: list[float]) -> bool:
    if len(a) != len(b):
        return False
    return bool(
        np.allclose(np.asarray(a), np.asarray(b), rtol=ROUND_OFF_RTOL, atol=ROUND_OFF_ATOL,
                    equal_nan=True)
    )  # fmt: skip


def classify(baseline: dict, mutant: dict) -> tuple[list[str], list[str], list[str]]:
    """(claims killed, claims whose numbers changed but not their verdict, claims killed by
    raising) of a mutant's claim summaries against the baseline's.

    Examples:
      >>> base = {"a": {"verdict": "holds", "matched": None, "error": None, "numbers": [1.0]}}
      >>> classify(base, {"a": dict(base["a"], numbers=[1.0 + 1e-9])})
      ([], [], [])
      >>> classify(base, {"a": dict(base["a"], numbers=[1.1])})
      ([], ['a'], [])
      >>> classify(base, {"a": dict(base["a"], verdict="inconclusive")})
      (['a'], [], [])
    """
    killed, changed, errored = [], [], []
    for claim_id, summary in mutant.items():
        base = baseline[claim_id]
        if summary.get("ill_typed") and summary["error"] and not base["error"]:
            continue  # raised at the mutated expression itself: invalid, not a kill
        if noticed(summary, base):
            killed.append(claim_id)
            if summary["error"] and not base["error"]:
                errored.append(claim_id)
        elif (
            not _same_numbers(summary["numbers"], base["numbers"])
            or summary["verdict"] != base["verdict"]  # a smoke claim's, which kills nothing
            or summary["matched"] != base["matched"]
        ):
            changed.append(claim_id)
    return killed, changed, errored


def run_baseline(
    claim_ids: Sequence[str],
    *,
    scale: str,
    seed: int,
    timeout: float,
    server: ClaimServer | None = None,
) -> dict:
    """The unmutated claims' summaries (same process path as the mutants)."""
    return _baseline(claim_ids, scale=scale, seed=seed, timeout=timeout, server=server)[0]


def run_covered_baseline(
    claim_ids: Sequence[str],
    *,
    scale: str,
    seed: int,
    timeout: float,
    server: ClaimServer | None = None,
    probes: Sequence[list] = (),
    run_dir: str | None = None,
) -> tuple[dict, dict[str, dict[str, frozenset]]]:
    """:func:`run_baseline`, and the lines of ``ntsim.theory`` and ``ntsim.core`` each claim
    runs (``{claim: {module: lines}}``), traced one simulation at a time from cold caches.

    A mutant whose lines no claim runs cannot change any claim's numbers (the program is
    deterministic up to that line, and the line never runs): :func:`run_mutant` given this
    coverage runs only the claims that execute the mutated node, and none when no claim does.

    ``probes`` (:func:`guard_probe` of the planned ``swap_args`` and ``transpose`` mutants)
    are read at every run of their line: a claim's coverage lists under ``NEVER_FIRED`` the
    probes whose guard never fired in its run (two arguments never of the same kind, an
    operand never square). There the mutant's guard leaves the code as it was, so that run
    is the original's: the claim need not run the mutant.

    The coverage also lists, under ``SIMULATION_LINES + module``, the lines each claim's
    simulation ran; with ``run_dir`` the runs that survive a pickle round trip unchanged are
    saved there (:func:`reusable_runs` finds them for a mutant).
    """
    return _baseline(claim_ids, scale=scale, seed=seed, timeout=timeout, server=server,
                     coverage=True, probes=probes, run_dir=run_dir)  # fmt: skip


def guard_probe(module: str, site: Site) -> list | None:
    """What the traced baseline reads for a mutant with a run-time guard (``[module, line,
    key, *names]``: a ``swap_args`` mutant's two names, a ``transpose`` mutant's operand;
    ``None`` for a site without probe names), keyed by :func:`probe_key`."""
    if not site.names:
        return None
    return [module, site.line, probe_key(module, site), *site.names]


def probe_key(module: str, site: Site) -> str:
    """The key of a mutant's probe: ``module:function:index``."""
    return f"{module}:{site.function}:{site.index}"


def _baseline(claim_ids, *, scale, seed, timeout, server, coverage=False, probes=(), run_dir=None):
    spec = {"claims": list(claim_ids), "scale": scale, "seed": seed, "coverage": coverage}
    if probes:
        spec["probes"] = [list(p) for p in probes]
    if run_dir is not None:
        spec["run_dir"] = str(run_dir)
    summary = ask(server, spec, timeout)
    if summary.get("crash") or summary.get("timeout"):
        raise RuntimeError(f"baseline run failed: {summary}")
    lines = {
        claim: {module: frozenset(found) for module, found in per_module.items()}
        for claim, per_module in summary.get("coverage", {}).items()
    }
    return summary["claims"], lines


def executing_claims(
    module: str, site: Site, claim_ids: Sequence[str], coverage: Mapping | None
) -> list[str]:
    """The claims of ``claim_ids`` that run some line of ``site`` (all of them without
    ``coverage``; a claim the coverage does not know is kept), less, for a guarded mutant
    (``swap_args``, ``transpose``), the claims in whose run its guard never fired
    (:func:`run_covered_baseline`).

    Examples:
      >>> from ntsim.mutation._operators import Site
      >>> site = Site("f", "flip_sign", 0, 0, line=4, before="a + b", after="a - b")
      >>> executing_claims("m", site, ["c1", "c2", "c3"],
      ...                  {"c1": {"m": frozenset({3, 4})}, "c2": {"m": frozenset({5})}})
      ['c1', 'c3']
      >>> swap = Site("f", "swap_args", 2, 0, line=4, before="g(a, b)", after="g(b, a)",
      ...             names=("a", "b"))
      >>> executing_claims("m", swap, ["c1", "c2"],
      ...                  {"c1": {"m": frozenset({4}), NEVER_FIRED: frozenset({"m:f:2"})},
      ...                   "c2": {"m": frozenset({4}), NEVER_FIRED: frozenset()}})
      ['c2']
    """
    if coverage is None:
        return list(claim_ids)
    key = probe_key(module, site) if site.names else None
    return [
        claim
        for claim in claim_ids
        if claim not in coverage
        or (
            any(line in coverage[claim].get(module, ()) for line in site.lines)
            and key not in coverage[claim].get(NEVER_FIRED, ())
        )
    ]


def _public_callers(module: str, name: str) -> list[str]:
    """Public top-level functions of ``module`` whose body names ``name`` (a private helper is
    tested through them)."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
    ]


def unit_test_files(function: str, module: str | None = None) -> list[str]:
    """The unit tests that name ``function`` (its last dotted part) or, for a private helper
    of ``module``, a public function that calls it: ``path::test_name`` for each top-level
    test in ``tests/theory`` and ``tests/core`` whose source names it (the whole file when
    only its module-level code does)."""
    name = function.rsplit(".", 1)[-1]
    names = [name]
    if name.startswith("_") and module is not None:
        names += _public_callers(module, name)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")
    selected = []
    for base in ("tests/theory", "tests/core"):
        for path in sorted((_REPO / base).glob("test_*.py")):
            text = path.read_text(encoding="utf-8")
            if not pattern.search(text):
                continue
            relative = str(path.relative_to(_REPO))
            tests = [
                node.name
                for node in ast.parse(text).body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name.startswith("test")
                and pattern.search(ast.get_source_segment(text, node) or "")
            ]
            selected += [f"{relative}::{t}" for t in tests] if tests else [relative]
    return selected


def _run_tests(spec: dict, files: list[str], timeout: float) -> bool | None:
    """True when the unit tests (files or ``path::test`` ids) fail with the mutant (killed),
    None when there are none."""
    if not files:
        return None
    with tempfile.TemporaryDirectory(prefix="ntsim-mutant-") as tmp:
        spec_path = pathlib.Path(tmp, "spec.json")
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        command = [
            sys.executable, "-m", "ntsim.mutation._worker", "--pytest", str(spec_path), "--",
            "-x", "-q", "-m", "not slow", "-p", "no:cacheprovider", "-p", "no:xdist",
            *files,
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, env=child_env(), cwd=_REPO, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return True
        return done.returncode != 0


#: A mutant's time limit: this many times the baseline seconds of the simulations its
#: claims read, plus
#: :data:`TIME_LIMIT_FLOOR` (compilation of the re-executed module), capped by ``--timeout``.
#: The baseline ran cold and, when traced, under ``sys.settrace``, so a mutant that only
#: changes what it computes finishes well inside, though its function runs up to three times
#: (the mutant, the original beside it, and the original again when the two differ:
#: :mod:`ntsim.mutation._outputs`) and a doubled iteration count costs 2× more; one past the
#: limit hangs in effect.
TIME_LIMIT_FACTOR = 6.0
TIME_LIMIT_FLOOR = 120.0


def mutant_time_limit(timeout: float, baseline: Mapping, claim_ids: Sequence[str]) -> float:
    """Seconds a mutant on ``claim_ids`` may run: ``min(timeout, FLOOR + FACTOR · Σ baseline
    seconds)``, each simulation counted once (claims of one ``"simulation"`` share its run);
    ``timeout`` when some claim's baseline time is unknown.

    Examples:
      >>> base = {"a": {"seconds": 10.0}, "b": {"seconds": 20.0}}
      >>> mutant_time_limit(600.0, base, ["a", "b"])
      300.0
      >>> mutant_time_limit(200.0, base, ["a", "b"]), mutant_time_limit(600.0, {}, ["a"])
      (200.0, 600.0)
      >>> shared = {c: {"seconds": 30.0, "simulation": "S"} for c in ("a", "b")}
      >>> mutant_time_limit(600.0, shared, ["a", "b"])
      300.0
    """
    seconds = baseline_seconds(baseline, claim_ids)
    if seconds is None:
        return timeout
    return min(timeout, TIME_LIMIT_FLOOR + TIME_LIMIT_FACTOR * seconds)


def claim_time_limits(timeout: float, baseline: Mapping, claim_ids: Sequence[str]) -> dict:
    """Seconds each of ``claim_ids`` may run in a mutant, from the moment it starts:
    ``min(timeout, FLOOR + FACTOR · s)`` with ``s`` the longest baseline time among the
    claims of its simulation (whichever of them runs first computes the shared run). A claim
    whose baseline time is unknown has no limit of its own (only the mutant's total).

    Examples:
      >>> base = {"a": {"seconds": 10.0, "simulation": "S"}, "b": {"seconds": 0.5,
      ...         "simulation": "S"}, "c": {"seconds": 2.0}}
      >>> claim_time_limits(600.0, base, ["a", "b", "c", "d"])
      {'a': 180.0, 'b': 180.0, 'c': 132.0}
    """
    longest: dict[str, float] = {}
    for claim, summary in baseline.items():
        if summary.get("seconds") is not None:
            key = summary.get("simulation", claim)
            longest[key] = max(longest.get(key, 0.0), float(summary["seconds"]))
    limits = {}
    for claim in claim_ids:
        key = baseline.get(claim, {}).get("simulation", claim)
        if key in longest:
            limits[claim] = min(timeout, TIME_LIMIT_FLOOR + TIME_LIMIT_FACTOR * longest[key])
    return limits


def baseline_seconds(baseline: Mapping, claim_ids: Sequence[str]) -> float | None:
    """The baseline seconds of ``claim_ids``, each simulation counted once (``None`` when
    some claim's time is unknown): what a mutant on them is expected to cost, up to the
    compilation a mutant adds.

    Examples:
      >>> shared = {c: {"seconds": 30.0, "simulation": "S"} for c in ("a", "b")}
      >>> baseline_seconds({**shared, "c": {"seconds": 5.0}}, ["a", "b", "c"])
      35.0
      >>> baseline_seconds(shared, ["a", "d"]) is None
      True
    """
    seconds = {}
    for claim in claim_ids:
        summary = baseline.get(claim, {})
        if summary.get("seconds") is None:
            return None
        seconds[summary.get("simulation", claim)] = summary["seconds"]
    return float(sum(seconds.values()))


def run_mutant(
    module: str,
    site: Site,
    claim_ids: Sequence[str],
    baseline: dict,
    *,
    scale: str,
    seed: int,
    timeout: float,
    tests: str = "survivors",
    server: ClaimServer | None = None,
    coverage: Mapping | None = None,
    may_skip: Collection[str] | None = None,
    run_dir: str | None = None,
) -> MutantOutcome:
    """Run one mutant on its claims, then on the unit tests naming its function (``tests``:
    ``"survivors"`` — only when it survived the claims; ``"all"``; ``"none"``); classify it.

    With ``coverage`` (:func:`run_covered_baseline`) only the claims that execute the mutated
    node run; a mutant no claim executes is ``equivalent`` without a run (its
    ``claims_run`` is empty). With ``may_skip`` (the claims that already killed some mutant)
    the claims run one at a time, the others first, and after a kill the run stops once only
    claims of ``may_skip`` are left: the status is the same, a claim that has killed nothing
    yet is never skipped (so which claims kill nothing is exact), and ``claims_run`` names
    the claims that ran. With ``run_dir`` (the baseline's saved runs) a claim whose
    simulation never runs the mutated lines takes the baseline's run and runs only its check
    (:func:`reusable_runs`).
    """
    if tests not in TESTS_WHEN:
        raise ValueError(f"tests must be one of {TESTS_WHEN}, got {tests!r}.")
    start = time.perf_counter()
    claim_ids = executing_claims(module, site, claim_ids, coverage)
    outcome = MutantOutcome(
        module=module,
        function=site.function,
        operator=site.operator,
        line=site.line,
        before=site.before,
        after=site.after,
        index=site.index,
        claims_run=list(claim_ids),
    )
    spec = {
        "module": module,
        "function": site.function,
        "index": site.index,
        "operator": site.operator,
        "before": site.before,
        "lines": list(site.lines),
        "compare_outputs": True,
        "claims": list(claim_ids),
        "scale": scale,
        "seed": seed,
    }
    reuse = reusable_runs(module, site, claim_ids, baseline, coverage, run_dir)
    if reuse:
        spec["reuse_runs"] = reuse
    if may_skip is not None and len(claim_ids) > 1:
        spec["stop_on_kill"] = {
            "baseline": {c: baseline[c] for c in claim_ids},
            "may_skip": sorted(set(may_skip) & set(claim_ids)),
        }
    limit = mutant_time_limit(timeout, baseline, claim_ids)
    claim_limits = claim_time_limits(timeout, baseline, claim_ids)
    summary = ask(server, spec, limit, claim_limits) if claim_ids else {"claims": {}}
    if summary.get("timeout"):  # once more: a loaded machine, not the mutant, may be slow
        summary = ask(server, spec, limit, claim_limits)
    if summary.get("claim") in claim_limits:
        limit = claim_limits[summary["claim"]]
    _classify_outcome(outcome, summary, baseline, limit)
    run_tests = tests == "all" or (tests == "survivors" and outcome.status == "survived")
    if run_tests and outcome.status != "invalid":
        outcome.tests_run = unit_test_files(site.function, module)
        outcome.tests_killed = _run_tests(spec, outcome.tests_run, timeout)
    outcome.seconds = time.perf_counter() - start
    return outcome


def _skipped(executing: list[str], ran, baseline: dict) -> list[str]:
    """The claims that execute the mutated line and did not run, less the smoke claims (a
    smoke claim's verdict kills nothing at this scale, so skipping it loses no kill)."""
    return [c for c in executing if c not in ran and not baseline.get(c, {}).get("smoke")]


def _classify_outcome(outcome: MutantOutcome, summary: dict, baseline: dict, limit: float):
    """Set ``outcome``'s status from the child's ``summary`` (the module doc's rules): a
    verdict changed or a claim raised → killed; a claim's numbers moved, or the function's
    own outputs did on the claims' inputs → survived; only errors raised at the mutated
    line itself (``ill_typed``) → invalid; else equivalent."""
    executing = list(outcome.claims_run)  # the claims that execute the mutated line
    if summary.get("apply_error"):
        outcome.status, outcome.error = "invalid", summary["apply_error"]
        return
    if summary.get("timeout") or summary.get("crash"):
        # A mutant that hangs (twice) or kills the process is noticed by the claim that was
        # running when it was stopped, or by every claim it runs when that is not known.
        outcome.status = "killed"
        outcome.error = f"timeout ({limit:.0f} s)" if summary.get("timeout") else summary["crash"]
        noticing = list(outcome.claims_run)
        if summary.get("claim"):
            outcome.claims_run, noticing = list(summary["started"]), [summary["claim"]]
            outcome.error += f" in {summary['claim']}"
        outcome.claims_skipped = _skipped(executing, outcome.claims_run, baseline)
        outcome.claims_killed, outcome.claims_errored = noticing, list(noticing)
        return
    outcome.claims_run = list(summary["claims"])
    outcome.claims_skipped = _skipped(executing, summary["claims"], baseline)
    outcome.outputs = summary.get("outputs")
    killed, changed, errored = classify(baseline, summary["claims"])
    outcome.claims_killed, outcome.claims_changed = killed, changed
    outcome.claims_errored = errored
    ill_typed = [
        c for c, s in summary["claims"].items() if s.get("ill_typed") and not baseline[c]["error"]
    ]
    smoke_only = bool(summary["claims"]) and all(s.get("smoke") for s in summary["claims"].values())
    outputs = outcome.outputs or {}
    moved = bool(changed) or bool(outputs.get("differed"))
    # equivalent is detected, not guessed: the function's own results were compared on the
    # claims' calls and agreed on every one of them (a mutant no claim executes ran on no
    # claim: equivalent without a run)
    compared = outputs.get("agreed", 0) > 0 and not outputs.get("unobservable")
    not_shown = bool(summary["claims"]) and not (compared or ill_typed)
    if killed:
        outcome.status = "killed"
    elif moved or not_shown:  # smoke claims alone decide nothing at this scale
        outcome.status = "not judged" if smoke_only else "survived"
    elif ill_typed:
        outcome.status = "invalid"
        outcome.error = "ill-typed at the mutated line: " + summary["claims"][ill_typed[0]]["error"]
    else:
        outcome.status = "equivalent"
