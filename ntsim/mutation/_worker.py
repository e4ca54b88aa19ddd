"""Run claims (or unit tests) with one mutant swapped in: the child process of ``ntsim mutate``.

The mutant replaces the ``__code__`` of the function object in its own module, in this
process only, before anything runs: every reference to the function (imports elsewhere,
``functools.partial``, the ``__wrapped__`` of a ``jax.jit``) then runs the mutated body, the
file on disk is untouched, and the process (with its jit caches) ends after one mutant.

``python -m ntsim.mutation._worker SPEC.json OUT.json`` runs the claims the spec names at one
scale and seed and writes one summary per claim; ``... --pytest SPEC.json -- ARGS`` applies
the mutant and runs pytest with ``ARGS`` (its exit status is the process's).
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from typing import Any

import numpy as np

__all__ = ["apply_mutant", "claim_summary", "run_claims_summary"]


def _code_object(code: types.CodeType, qualname: str) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            found = _code_object(const, qualname)
            if found is not None:
                return found
    return None


def _function_object(module: types.ModuleType, qualname: str):
    obj: Any = module
    for part in qualname.split("."):
        obj = inspect.getattr_static(obj, part)
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    return inspect.unwrap(obj)


def apply_mutant(spec: dict) -> None:
    """Swap in the mutant ``spec`` names (keys ``module``, ``function``, ``index``,
    ``operator``, ``before``); a spec without ``module`` is the unmutated baseline."""
    if not spec.get("module"):
        return
    from ntsim.mutation._operators import Site, mutate_module

    module = importlib.import_module(spec["module"])
    source = inspect.getsource(module)
    site = Site(
        function=spec["function"],
        operator=spec["operator"],
        index=int(spec["index"]),
        variant=0,
        line=0,
        before=spec["before"],
        after="",
    )
    mutated = compile(mutate_module(source, site), module.__file__, "exec")
    code = _code_object(mutated, spec["function"])
    if code is None:
        raise RuntimeError(f"mutant of {spec['function']} compiled to no code object")
    function = _function_object(module, spec["function"])
    function.__code__ = code


def _numbers(result) -> list[float]:
    values: list[float] = []
    for array in (result.measured, result.reference, result.margins):
        values.extend(np.asarray(array, dtype=float).ravel().tolist())
    if result.interval is not None:
        values.extend(float(v) for v in result.interval)
    for key in sorted(result.diagnostics):
        value = result.diagnostics[key]
        try:
            values.extend(np.asarray(value, dtype=float).ravel().tolist())
        except (TypeError, ValueError):
            continue
    return values


def claim_summary(record) -> dict:
    """What a kill is judged on: verdict, counterexample match, error and every number."""
    outcome = record.per_seed[0]
    return {
        "verdict": record.verdict,
        "matched": record.counterexample_matched,
        "error": (outcome.error or "").splitlines()[0][:300] if outcome.error else None,
        "numbers": _numbers(outcome.result) if outcome.result is not None else [],
    }


def run_claims_summary(spec: dict) -> dict:
    """Apply the mutant, run the spec's claims at its scale and seed, summarise each."""
    error = None
    try:
        apply_mutant(spec)
    except Exception as exc:  # a mutant that does not compile kills nothing: report it
        error = f"{type(exc).__name__}: {exc}"
    if error is not None:
        return {"apply_error": error, "claims": {}}
    from ntsim.claims import REGISTRY, run_claims

    by_id = {c.id: c for c in REGISTRY}
    claims = [by_id[i] for i in spec["claims"]]
    records = run_claims(claims, scale=spec.get("scale", "quick"), seeds=(spec.get("seed", 0),))
    return {"apply_error": None, "claims": {r.claim.id: claim_summary(r) for r in records}}


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--pytest":
        spec = json.loads(open(argv[1], encoding="utf-8").read())
        apply_mutant(spec)
        import pytest

        rest = argv[argv.index("--") + 1 :] if "--" in argv else []
        return int(pytest.main(rest))
    spec_path, out_path = argv
    spec = json.loads(open(spec_path, encoding="utf-8").read())
    summary = run_claims_summary(spec)
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(summary, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
