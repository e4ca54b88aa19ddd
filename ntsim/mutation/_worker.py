"""Run claims (or unit tests) with one mutant swapped in: the child process of ``ntsim mutate``.

The mutant replaces the ``__code__`` of the function object in its own module, in this
process only: every reference to the function (imports elsewhere, ``functools.partial``,
the ``__wrapped__`` of a ``jax.jit``) then runs the mutated body, and the file on disk is
untouched.

``python -m ntsim.mutation._worker --serve`` reads one JSON spec per line on stdin and, for
each, swaps the mutant in, runs the claims it names at one scale and seed (saying
``@@ntsim-claim@@ ID`` on stdout as each starts, for the parent's per-claim time limit),
answers one line ``@@ntsim-mutant@@ {summary}`` on stdout, then restores the original code
and clears JAX's and ``functools``' caches, so one process (one import of JAX, a warm trace
cache for the unchanged code) serves many mutants. A mutant that hangs or crashes the process is the
parent's to handle (it starts a new server). A server's traced checks poison with NaN instead
of calling back to the host (:mod:`ntsim.mutation._poison`), so the programs stay in JAX's
persistent cache from one mutant to the next. ``... --pytest SPEC.json -- ARGS`` applies the
mutant and runs pytest with ``ARGS`` (its exit status is the process's).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pathlib
import re
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ntsim.mutation._closure import MUTABLE_PACKAGES
from ntsim.mutation._reuse import (
    SIMULATION_LINES,
    pickled_run,
    reused_runs,
    save_reusable_run,
)

__all__ = [
    "ANSWER_PREFIX",
    "CLAIM_PREFIX",
    "apply_mutant",
    "claim_summary",
    "noticed",
    "run_claims_summary",
]

#: Marks the answer line on stdout (anything else printed there is ignored).
ANSWER_PREFIX = "@@ntsim-mutant@@ "
#: Marks a line on stdout naming the claim the child starts next (its time limit starts).
CLAIM_PREFIX = "@@ntsim-claim@@ "


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


def apply_mutant(spec: dict, *, compare_outputs: bool = False) -> Callable[[], None]:
    """Swap in the mutant ``spec`` names (keys ``module``, ``function``, ``index``,
    ``operator``, ``before``); a spec without ``module`` is the unmutated baseline.

    With ``compare_outputs`` the function runs :func:`~ntsim.mutation._outputs.paired`
    instead: the mutant's result, with the original's run beside it and compared
    (:data:`~ntsim.mutation._outputs.COUNTS`). A function with a closure or a generator
    cannot be stood in for this way: it runs the mutant alone, and its calls are not counted.

    Returns:
      a function that puts the original code back.
    """
    if not spec.get("module"):
        return lambda: None
    from ntsim.mutation._operators import Site, mutate_tree

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
    # compiled from the tree, not its unparsed text: the mutant's frames carry the file's
    # line numbers (what ``ill_typed`` and a reader of a traceback compare with)
    mutated = compile(mutate_tree(source, site), module.__file__, "exec")
    code = _code_object(mutated, spec["function"])
    if code is None:
        raise RuntimeError(f"mutant of {spec['function']} compiled to no code object")
    function = _function_object(module, spec["function"])
    if compare_outputs and _can_pair(function):
        return _swap_in_pair(module, function, code)
    original = function.__code__
    function.__code__ = code

    def restore() -> None:
        function.__code__ = original

    return restore


#: The module global through which a paired stand-in is reached (see :func:`_swap_in_pair`).
_PAIRS = "__ntsim_mutation_pairs__"
_TRAMPOLINE = compile(
    f"def trampoline(*args, **kwargs):\n    return {_PAIRS}[0](*args, **kwargs)\n",
    "<ntsim.mutation>",
    "exec",
).co_consts[0]


def _can_pair(function) -> bool:
    flags = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
    return not function.__closure__ and not function.__code__.co_flags & flags


def _swap_in_pair(module, function, code: types.CodeType) -> Callable[[], None]:
    """Give ``function`` a body that calls ``paired(mutant, original)`` (both rebuilt from
    its code objects, defaults and globals), so every reference to it — an import
    elsewhere, a ``jax.jit``'s ``__wrapped__`` — runs the pair."""
    from ntsim.mutation._outputs import paired

    def rebuilt(body: types.CodeType):
        copy = types.FunctionType(
            body, function.__globals__, function.__name__, function.__defaults__
        )
        copy.__kwdefaults__ = function.__kwdefaults__
        copy.__qualname__ = function.__qualname__
        return copy

    saved = {
        "__code__": function.__code__,
        "__defaults__": function.__defaults__,
        "__kwdefaults__": function.__kwdefaults__,
    }
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        signature = None
    pair = paired(rebuilt(code), rebuilt(function.__code__))
    function.__globals__[_PAIRS] = (pair,)
    function.__code__ = _TRAMPOLINE
    function.__defaults__, function.__kwdefaults__ = None, None
    if signature is not None:
        function.__signature__ = signature

    def restore() -> None:
        for name, value in saved.items():
            setattr(function, name, value)
        vars(function).pop("__signature__", None)
        function.__globals__.pop(_PAIRS, None)

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


def claim_summary(record, lines: tuple[str, Any] | None = None) -> dict:
    """What a kill is judged on: verdict, counterexample match, error and every number;
    ``smoke`` for a claim whose quick scale decides nothing (only an error of it counts);
    ``ill_typed`` when ``lines`` (``(file, mutated lines)``) are given and the error is a
    ``TypeError`` raised at a mutated line itself (:func:`ill_typed`)."""
    outcome = record.per_seed[0]
    return {
        "verdict": record.verdict,
        "matched": record.counterexample_matched,
        "error": (outcome.error or "").splitlines()[0][:300] if outcome.error else None,
        "ill_typed": bool(lines and outcome.error and ill_typed(outcome.error, *lines)),
        "smoke": bool(record.smoke),
        "numbers": _numbers(outcome.result) if outcome.result is not None else [],
        "seconds": float(record.seconds),  # sets the mutants' time limit, never compared
    }


def ill_typed(error: str, filename: str, lines) -> bool:
    """Whether a claim's error (the runner's text: the exception, then its innermost frames)
    is a ``TypeError`` whose innermost frame is a mutated line: the mutant's own expression
    cannot be evaluated on the claims' values (``2.0 * x.shape``, ``range(2.0 * n)``, a
    transposed operand of the wrong shape) — an ill-typed program, not a formula bug a
    claim could notice or miss.

    Examples:
      >>> text = 'TypeError: bad\\n  File "/a/m.py", line 7, in f\\n    y = 2.0 * x.shape\\n'
      >>> ill_typed(text, "/a/m.py", [7]), ill_typed(text, "/a/m.py", [8])
      (True, False)
      >>> ill_typed(text.replace("TypeError", "ValueError"), "/a/m.py", [7])
      False
    """
    if not error.startswith("TypeError"):
        return False
    frames = re.findall(r'File "([^"]+)", line (\d+)', error)
    if not frames:
        return False
    where, line = frames[-1]
    return where == filename and int(line) in set(lines)


#: Key of a claim's coverage under which the baseline lists the probes (of ``swap_args`` and
#: ``transpose`` mutants) whose guard never fired in its run (not a module name: module names
#: never start with ``<``).
NEVER_FIRED = "<guard never fired>"


def _resolve(frame, name: str) -> tuple[bool, object]:
    """``(found, value)`` of ``name`` as the frame's code would read it now; a local (or
    cell) not yet bound is not found, never looked up among the globals."""
    local = frame.f_locals
    if name in local:
        return True, local[name]
    code = frame.f_code
    if name in code.co_varnames or name in code.co_cellvars or name in code.co_freevars:
        return False, None
    for scope in (frame.f_globals, frame.f_builtins):
        if name in scope:
            return True, scope[name]
    return False, None


class _LineTracer:
    """Records the lines of the mutated packages (:data:`~ntsim.mutation.MUTABLE_PACKAGES`)
    that run: ``sys.settrace`` on this thread and on threads started meanwhile; frames of
    other files are not traced.

    ``probes`` (``[module, line, key, *names]`` each, the ``swap_args`` and ``transpose``
    mutants planned) are read at each line event of their line: whether the names' values
    would let the mutant's guard (:func:`~ntsim.mutation._operators.guard_fires`: two
    arguments of the same kind, or a square operand) fire. A reading
    that cannot find one of the names is left out: the call cannot be evaluated in that
    frame while the name is unbound there, so the frame is an enclosing scope's (the line
    ``return lambda params, step: apply(params, x)`` runs first in the function that returns
    the lambda, where ``params`` is no name at all) or the name is bound later on the line,
    where a later line event reads it — except in a generator whose own local is unbound:
    its line events read each loop value one item late, and a generator closed early
    (``any``, ``next``, ``break``) never reads the last value its call used, so that reading
    counts as ``"may"`` (found by referee 60). A probe is ``"never"`` when some reading found
    every name and no such reading let the guard fire, ``"may"`` when one did or a value
    could not be read; a probe no reading completed stays unknown, which counts as
    ``"may"`` (:meth:`never_fired`)."""

    def __init__(self, probes: list | None = None):
        from ntsim.mutation._operators import guard_fires

        root = pathlib.Path(importlib.import_module("ntsim").__file__).parent
        self._roots = tuple(
            str(root.joinpath(*package.split(".")[1:])) + os.sep for package in MUTABLE_PACKAGES
        )
        self._package = root.parent
        self.lines: dict[str, set[int]] = {}
        self._guard_fires = guard_fires
        self._probes: dict[tuple[str, int], list[tuple[str, tuple[str, ...]]]] = {}
        for module, line, key, *names in probes or ():
            filename = importlib.import_module(module).__file__
            self._probes.setdefault((filename, int(line)), []).append((key, tuple(names)))
        self.guards: dict[str, str] = {}
        #: while True, lines also go to ``simulation_lines`` (the simulation's phase)
        self.in_simulation = False
        self.simulation_lines: dict[str, set[int]] = {}

    def _read_probe(self, frame, key: str, names: tuple[str, ...]) -> None:
        if self.guards.get(key) == "may":
            return
        try:
            readings = [_resolve(frame, name) for name in names]
            if not all(found for found, _ in readings):
                code = frame.f_code
                own = {*code.co_varnames, *code.co_cellvars}
                if code.co_flags & inspect.CO_GENERATOR and own.intersection(names):
                    # A generator's line events lag its loop variable by one item, and it may
                    # be closed (any, next, break) before the event that would read the last.
                    self.guards[key] = "may"
                return  # not the frame (or not yet the moment) that evaluates the call
            never = not self._guard_fires(tuple(value for _, value in readings))
        except Exception:  # a value whose kind cannot be read: the guard may fire
            never = False
        if never:  # one way: a "may" another thread wrote meanwhile is never overwritten
            self.guards.setdefault(key, "never")
        else:
            self.guards[key] = "may"

    def _local(self, frame, event, arg):
        if event == "line":
            where = (frame.f_code.co_filename, frame.f_lineno)
            self.lines.setdefault(where[0], set()).add(where[1])
            if self.in_simulation:
                self.simulation_lines.setdefault(where[0], set()).add(where[1])
            for key, names in self._probes.get(where, ()):
                self._read_probe(frame, key, names)
        return self._local

    def never_fired(self) -> list[str]:
        """Keys of the probes read whose guard never fired."""
        return sorted(key for key, state in self.guards.items() if state == "never")

    def _global(self, frame, event, arg):
        return self._local if frame.f_code.co_filename.startswith(self._roots) else None

    def __enter__(self) -> _LineTracer:
        threading.settrace(self._global)
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(None)
        threading.settrace(None)

    def by_module(self, simulation: bool = False) -> dict[str, list[int]]:
        """``{module: sorted lines}`` of what ran (with ``simulation``: in the simulation's
        phase only)."""
        out = {}
        for filename, lines in (self.simulation_lines if simulation else self.lines).items():
            relative = pathlib.Path(filename).relative_to(self._package).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            out[".".join(parts)] = sorted(lines)
        return out


def _covered_runs(
    claims,
    scale: str,
    seeds: tuple[int, ...],
    probes: list | None = None,
    run_dir: str | None = None,
) -> tuple[list, dict]:
    """Run ``claims`` one simulation at a time from cold caches, tracing the lines each
    group runs (its simulation and its checks); every claim of a group is credited with the
    group's lines (an over-approximation: a claim may be run for a line only a sibling's
    check executes, never skipped for one it executes), with the ``swap_args`` and
    ``transpose`` probes that never fired in the group (under :data:`NEVER_FIRED`), and
    with the lines its simulation ran (under :data:`SIMULATION_LINES` + module). With
    ``run_dir``, each group's run is saved there when the checks give the same answers on
    the saved copy (:func:`save_reusable_run`). Also returns each group's simulation seconds
    under its first claim: the records time only the checks, which find the run cached."""
    from ntsim.claims import RunCache, run_claims, simulation_run

    groups: dict[str, list] = {}
    for claim in claims:
        groups.setdefault(claim.uses.name, []).append(claim)
    records, coverage, simulation_seconds = [], {}, {}
    for group in groups.values():
        _clear_caches()  # a trace cached by an earlier group would hide this group's lines
        cache, blob = RunCache(maxsize=1), None
        with _LineTracer(probes) as tracer:
            tracer.in_simulation = True
            start = time.perf_counter()
            try:
                run = simulation_run(group[0].uses, scale, seeds[0], cache)
                blob = pickled_run(run) if run_dir is not None else None  # before the checks
            except Exception:  # run_claims below meets the error again and records it
                pass
            finally:
                tracer.in_simulation = False
            # the claims below find the run cached: charge its time to the first of them, as
            # run_claims would (the mutants' time limits and order are read from it)
            simulation_seconds[group[0].id] = time.perf_counter() - start
            group_records = run_claims(group, scale=scale, seeds=seeds, cache=cache)
        records += group_records
        lines = {**tracer.by_module(), NEVER_FIRED: tracer.never_fired()}
        lines.update(
            (SIMULATION_LINES + module, found)
            for module, found in tracer.by_module(simulation=True).items()
        )
        coverage.update({claim.id: lines for claim in group})
        if run_dir is not None and len(seeds) == 1:
            save_reusable_run(group, group_records, blob, scale, seeds[0], run_dir)
    return records, coverage, simulation_seconds


def noticed(summary: dict, base: dict) -> bool:
    """Whether a claim killed the mutant: it raised where the baseline did not (unless the
    error is ``ill_typed``), or its verdict or counterexample match changed — not for a
    ``smoke`` claim, whose quick-scale verdict decides nothing (the rule of
    :func:`ntsim.mutation.classify`)."""
    if summary["error"] and not base["error"]:
        return not summary.get("ill_typed", False)
    if summary.get("smoke"):
        return False
    return summary["verdict"] != base["verdict"] or summary["matched"] != base["matched"]


def _one_at_a_time(
    claims,
    scale: str,
    seeds: tuple[int, ...],
    stop: dict | None = None,
    lines: tuple | None = None,
    announce: Callable[[str], None] | None = None,
    prefill: Callable[[Any], None] | None = None,
) -> dict:
    """Summaries of ``claims`` run one at a time, each named to ``announce`` as it starts
    (claims of one simulation together, which a shared cache computes once). With ``stop``
    (``{"baseline": ..., "may_skip": [...]}``) the claims not in ``may_skip`` run first,
    then those of ``may_skip``, cheapest simulation first (baseline seconds), so the first
    kill among them tends to come cheaply; after a kill the run stops once every claim left
    is one that may be skipped."""
    from ntsim.claims import RunCache, run_claims

    may_skip = set(stop["may_skip"]) if stop else set()

    def cost(claim) -> float:  # only the skippable claims' order depends on it
        if claim.id not in may_skip:
            return 0.0
        return float(stop["baseline"].get(claim.id, {}).get("seconds") or 0.0)

    order = sorted(claims, key=lambda c: (c.id in may_skip, cost(c), c.uses.name, c.id))
    cache, summaries, killed = RunCache(maxsize=4), {}, False
    if prefill is not None:  # the baseline's runs, for simulations the mutant cannot reach
        cache.maxsize = 4 + len(claims)
        prefill(cache)
    for index, claim in enumerate(order):
        if announce is not None:
            announce(claim.id)
        (record,) = run_claims([claim], scale=scale, seeds=seeds, cache=cache)
        summaries[claim.id] = claim_summary(record, lines)
        if stop is None:
            continue
        killed = killed or noticed(summaries[claim.id], stop["baseline"][claim.id])
        if killed and all(c.id in may_skip for c in order[index + 1 :]):
            break
    return summaries


def run_claims_summary(spec: dict, announce: Callable[[str], None] | None = None) -> dict:
    """Apply the mutant, run the spec's claims at its scale and seed, summarise each, and put
    the original code back. With ``spec["coverage"]`` (the baseline), also answer which
    lines of ``ntsim.theory`` and ``ntsim.core`` each claim runs (``"coverage"``:
    ``{claim: {module: [lines]}}``), with the keys of ``spec["probes"]`` that never
    fired under :data:`NEVER_FIRED` and the simulations' own lines under
    :data:`SIMULATION_LINES`; with ``spec["run_dir"]`` it also saves the runs mutants may
    reuse (:func:`save_reusable_run`), which a mutant's ``spec["reuse_runs"]``
    (simulation → file) names. With ``spec["stop_on_kill"]`` (``{"baseline":
    {claim: summary}, "may_skip": [claims]}``) stop early after a kill
    (:func:`_one_at_a_time`): only the claims that ran are answered. Outside the
    baseline each claim is named to ``announce`` as it starts. With
    ``spec["compare_outputs"]`` the original runs beside the mutant on every call
    (:mod:`ntsim.mutation._outputs`) and the answer's ``"outputs"`` counts the calls
    whose results agreed, differed or could not be compared (``None`` when the function
    could not be paired). ``spec["lines"]`` (the mutated lines) marks a claim's error
    raised at one of them as ``ill_typed``."""
    from ntsim.mutation import _outputs

    _outputs.reset_counts()
    try:
        restore = apply_mutant(spec, compare_outputs=bool(spec.get("compare_outputs")))
    except Exception as exc:  # a mutant that does not compile kills nothing: report it
        return {"apply_error": f"{type(exc).__name__}: {exc}", "claims": {}}
    paired = (
        bool(spec.get("compare_outputs"))
        and vars(importlib.import_module(spec["module"])).get(_PAIRS) is not None
    )
    lines = None
    if spec.get("module") and spec.get("lines"):
        lines = (importlib.import_module(spec["module"]).__file__, tuple(spec["lines"]))
    try:
        from ntsim.claims import REGISTRY

        by_id = {c.id: c for c in REGISTRY}
        claims = [by_id[i] for i in spec["claims"]]
        seeds = (spec.get("seed", 0),)
        scale = spec.get("scale", "quick")
        coverage = None
        if spec.get("coverage"):
            records, coverage, simulated = _covered_runs(claims, scale, seeds, spec.get("probes"),
                                                         spec.get("run_dir"))  # fmt: skip
            summaries = {r.claim.id: claim_summary(r, lines) for r in records}
            for claim_id, seconds in simulated.items():
                summaries[claim_id]["seconds"] += seconds
        else:
            stop = spec.get("stop_on_kill")
            summaries = _one_at_a_time(claims, scale, seeds, stop, lines, announce,
                                       lambda cache: reused_runs(cache, spec))  # fmt: skip
        answer = {"apply_error": None, "claims": summaries}
        if paired:
            import jax

            jax.effects_barrier()  # every debug callback of the runs has reported
            answer["outputs"] = _outputs.COUNTS.to_json()
        elif spec.get("compare_outputs"):
            answer["outputs"] = None
        return answer if coverage is None else {**answer, "coverage": coverage}
    finally:
        restore()
        _clear_caches()


def serve(lines, answer: Callable[[str], None]) -> None:
    """Answer each JSON spec line with ``ANSWER_PREFIX`` + its summary (module doc)."""
    for line in lines:
        if line.strip():
            summary = run_claims_summary(json.loads(line), lambda c: answer(CLAIM_PREFIX + c))
            answer(ANSWER_PREFIX + json.dumps(summary))


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--pytest":
        spec = json.loads(open(argv[1], encoding="utf-8").read())
        apply_mutant(spec)
        import pytest

        rest = argv[argv.index("--") + 1 :] if "--" in argv else []
        return int(pytest.main(rest))
    if argv == ["--serve"]:
        from ntsim.mutation._poison import poisoning_checks

        def answer(text: str) -> None:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

        with poisoning_checks():  # the claims' programs stay cacheable (module doc there)
            serve(sys.stdin, answer)
        return 0
    raise SystemExit("usage: python -m ntsim.mutation._worker --serve | --pytest SPEC -- ARGS")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
