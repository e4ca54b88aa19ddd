"""Run claims (or unit tests) with one mutant swapped in: the child process of ``ntsim mutate``.

The mutant replaces the ``__code__`` of the function object in its own module, in this
process only: every reference to the function (imports elsewhere, ``functools.partial``,
the ``__wrapped__`` of a ``jax.jit``) then runs the mutated body, and the file on disk is
untouched.

``python -m ntsim.mutation._worker --serve`` reads one JSON spec per line on stdin and, for
each, swaps the mutant in, runs the claims it names at one scale and seed, answers one line
``@@ntsim-mutant@@ {summary}`` on stdout, then restores the original code and clears JAX's
and ``functools``' caches, so one process (one import of JAX, a warm trace cache for the
unchanged code) serves many mutants. A mutant that hangs or crashes the process is the
parent's to handle (it starts a new server). ``... --pytest SPEC.json -- ARGS`` applies the
mutant and runs pytest with ``ARGS`` (its exit status is the process's).
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["ANSWER_PREFIX", "apply_mutant", "claim_summary", "run_claims_summary"]

#: Marks the answer line on stdout (anything else printed there is ignored).
ANSWER_PREFIX = "@@ntsim-mutant@@ "


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


def apply_mutant(spec: dict) -> Callable[[], None]:
    """Swap in the mutant ``spec`` names (keys ``module``, ``function``, ``index``,
    ``operator``, ``before``); a spec without ``module`` is the unmutated baseline.

    Returns:
      a function that puts the original code back.
    """
    if not spec.get("module"):
        return lambda: None
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
    original = function.__code__
    function.__code__ = code

    def restore() -> None:
        function.__code__ = original

    return restore


def _clear_caches() -> None:
    """Forget every trace and memoised value that may hold a mutant's results."""
    import jax

    jax.clear_caches()
    for name, module in list(sys.modules.items()):
        if not (name == "ntsim" or name.startswith("ntsim.")) or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


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
    """Apply the mutant, run the spec's claims at its scale and seed, summarise each, and
    put the original code back."""
    try:
        restore = apply_mutant(spec)
    except Exception as exc:  # a mutant that does not compile kills nothing: report it
        return {"apply_error": f"{type(exc).__name__}: {exc}", "claims": {}}
    try:
        from ntsim.claims import REGISTRY, run_claims

        by_id = {c.id: c for c in REGISTRY}
        claims = [by_id[i] for i in spec["claims"]]
        seeds = (spec.get("seed", 0),)
        records = run_claims(claims, scale=spec.get("scale", "quick"), seeds=seeds)
        return {"apply_error": None, "claims": {r.claim.id: claim_summary(r) for r in records}}
    finally:
        restore()
        _clear_caches()


def serve(lines, answer: Callable[[str], None]) -> None:
    """Answer each JSON spec line with ``ANSWER_PREFIX`` + its summary (module doc)."""
    for line in lines:
        if line.strip():
            answer(ANSWER_PREFIX + json.dumps(run_claims_summary(json.loads(line))))


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--pytest":
        spec = json.loads(open(argv[1], encoding="utf-8").read())
        apply_mutant(spec)
        import pytest

        rest = argv[argv.index("--") + 1 :] if "--" in argv else []
        return int(pytest.main(rest))
    if argv == ["--serve"]:

        def answer(text: str) -> None:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

        serve(sys.stdin, answer)
        return 0
    raise SystemExit("usage: python -m ntsim.mutation._worker --serve | --pytest SPEC -- ARGS")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
