"""The kill matrix: mutants of the functions claims run, and which claims notice them.

For a topic, :func:`topic_functions` maps every mutable function on some claim's path to
those claims; :func:`select_mutants` draws mutants from them (stratified: one per function
in turn, so a sample of at least the number of functions covers every function);
:func:`run_mutant` runs one mutant in a child process (:mod:`ntsim.mutation._worker`) on
its claims at one scale and seed, then on the unit tests that name the function, and
:func:`classify` compares the claims' summaries with the unmutated baseline:

* **killed** — some claim's verdict or counterexample match changed, or it raised;
* **survived** — some claim's numbers changed (beyond round-off) but no verdict did: those
  claims are the ones that *should* have caught it;
* **equivalent** — no claim's numbers changed: on the claims' own inputs the mutant is the
  same function (left out of the kill rate, whatever the unit tests say).

The claim kill rate is killed / (killed + survived).
"""

from __future__ import annotations

import collections
import importlib
import inspect
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from ntsim.mutation._closure import FunctionRef, claim_path
from ntsim.mutation._operators import Site, function_sites

__all__ = [
    "MutantOutcome",
    "classify",
    "run_baseline",
    "run_mutant",
    "select_mutants",
    "topic_functions",
]

#: Two claim outputs are the same to round-off when they agree to this relative tolerance.
ROUND_OFF_RTOL = 1e-6
ROUND_OFF_ATOL = 1e-12

_REPO = pathlib.Path(__file__).resolve().parents[2]


def topic_functions(claims) -> dict[FunctionRef, tuple[str, ...]]:
    """Every mutable function on some claim's path → the ids of the claims that run it."""
    users: dict[FunctionRef, list[str]] = collections.defaultdict(list)
    for claim in claims:
        for ref in claim_path([claim.check, claim.uses.fn]):
            users[ref].append(claim.id)
    return {ref: tuple(ids) for ref, ids in sorted(users.items())}


def _source(module: str) -> str:
    return inspect.getsource(importlib.import_module(module))


def select_mutants(
    functions: Sequence[FunctionRef],
    *,
    sample: int | None,
    seed: int = 0,
    operators: Sequence[str] | None = None,
) -> list[tuple[str, Site]]:
    """``(module, site)`` pairs: all sites, or ``sample`` of them drawn one function at a
    time (functions in random order, each function's sites shuffled), seeded."""
    rng = random.Random(seed)
    pools = []
    for module, function in functions:
        sites = [s for s in function_sites(_source(module), function)]
        if operators:
            sites = [s for s in sites if s.operator in operators]
        rng.shuffle(sites)
        if sites:
            pools.append([(module, s) for s in sites])
    if sample is None:
        return [pair for pool in pools for pair in pool]
    rng.shuffle(pools)
    chosen: list[tuple[str, Site]] = []
    while len(chosen) < sample and any(pools):
        for pool in pools:
            if pool and len(chosen) < sample:
                chosen.append(pool.pop())
    return chosen


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
    claims_killed: list[str] = field(default_factory=list)
    claims_changed: list[str] = field(default_factory=list)
    claims_errored: list[str] = field(default_factory=list)
    tests_run: list[str] = field(default_factory=list)
    tests_killed: bool | None = None
    error: str | None = None
    seconds: float = 0.0

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
        if summary["error"] and not base["error"]:
            killed.append(claim_id)
            errored.append(claim_id)
        elif summary["verdict"] != base["verdict"] or summary["matched"] != base["matched"]:
            killed.append(claim_id)
        elif not _same_numbers(summary["numbers"], base["numbers"]):
            changed.append(claim_id)
    return killed, changed, errored


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=1")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("JAX_COMPILATION_CACHE_DIR", str(pathlib.Path.home() / ".cache/ntsim/jax"))
    env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")
    return env


def _run_worker(spec: dict, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="ntsim-mutant-") as tmp:
        spec_path, out_path = pathlib.Path(tmp, "spec.json"), pathlib.Path(tmp, "out.json")
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        command = [sys.executable, "-m", "ntsim.mutation._worker", str(spec_path), str(out_path)]
        try:
            done = subprocess.run(
                command, env=_child_env(), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return {"apply_error": None, "timeout": True, "claims": {}}
        if done.returncode != 0 or not out_path.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return {"apply_error": None, "crash": " | ".join(tail), "claims": {}}
        return json.loads(out_path.read_text(encoding="utf-8"))


def run_baseline(claim_ids: Sequence[str], *, scale: str, seed: int, timeout: float) -> dict:
    """The unmutated claims' summaries (same process path as the mutants)."""
    summary = _run_worker(
        {"claims": list(claim_ids), "scale": scale, "seed": seed}, timeout=timeout
    )
    if summary.get("crash") or summary.get("timeout"):
        raise RuntimeError(f"baseline run failed: {summary}")
    return summary["claims"]


def unit_test_files(function: str) -> list[str]:
    """Test files under ``tests/`` that name ``function`` (its last dotted part)."""
    name = function.rsplit(".", 1)[-1]
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    files = []
    for base in ("tests/theory", "tests/core"):
        for path in sorted((_REPO / base).glob("test_*.py")):
            if pattern.search(path.read_text(encoding="utf-8")):
                files.append(str(path.relative_to(_REPO)))
    return files


def _run_tests(spec: dict, files: list[str], timeout: float) -> bool | None:
    """True when the unit tests fail with the mutant (killed), None when there are none."""
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
                command, env=_child_env(), cwd=_REPO, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return True
        return done.returncode != 0


def run_mutant(
    module: str,
    site: Site,
    claim_ids: Sequence[str],
    baseline: dict,
    *,
    scale: str,
    seed: int,
    timeout: float,
    tests: bool = True,
) -> MutantOutcome:
    """Run one mutant on its claims (and the unit tests naming its function); classify it."""
    start = time.perf_counter()
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
        "claims": list(claim_ids),
        "scale": scale,
        "seed": seed,
    }
    summary = _run_worker(spec, timeout=timeout)
    if summary.get("apply_error"):
        outcome.status, outcome.error = "invalid", summary["apply_error"]
    elif summary.get("timeout") or summary.get("crash"):
        # A mutant that hangs or kills the process is noticed by every claim it runs.
        outcome.status = "killed"
        outcome.claims_killed = list(claim_ids)
        outcome.claims_errored = list(claim_ids)
        outcome.error = "timeout" if summary.get("timeout") else summary["crash"]
    else:
        killed, changed, errored = classify(baseline, summary["claims"])
        outcome.claims_killed, outcome.claims_changed = killed, changed
        outcome.claims_errored = errored
        outcome.status = "killed" if killed else "survived" if changed else "equivalent"
    if tests and outcome.status != "invalid":
        outcome.tests_run = unit_test_files(site.function)
        outcome.tests_killed = _run_tests(spec, outcome.tests_run, timeout)
    outcome.seconds = time.perf_counter() - start
    return outcome
