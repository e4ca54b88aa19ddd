"""One run shared by an experiment and the claims that read the same simulation.

Most claims read a simulation that an experiment also plots (the experiment
``linearization/minilm_kappa`` and the claims ``linearization.minilm_kappa.*``, say). Each
draws its own key, so ``ntsim reproduce`` used to compute such a simulation twice at the
same setting. Inside :func:`sharing` (which ``ntsim reproduce --scale quick`` opens around
each topic), an experiment's call ``shared_run(fn, key, setting)`` whose function and
setting are those of a claims' simulation runs with *the claims' key* instead of its own,
and keeps the result; the claims runner then takes it (:func:`take`) instead of computing
it again. The numbers are those the claims would have computed alone: the same function,
setting, key and float64 mode.

Outside :func:`sharing` (``ntsim run``, ``ntsim verify``, the tests, and every full-scale
run, whose committed figures are made with the experiment's own key) ``shared_run`` is the
plain call ``fn(key, setting, ...)``. So a quick figure made by ``ntsim reproduce`` can
differ from the one ``ntsim run`` makes: it is drawn with the claims' key.

This module is deliberately on no claim's source path (the claims runner and the CLI import
it; no check or simulation does): sharing changes where a run is computed, never what.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

__all__ = ["function_id", "shared_run", "sharing", "take"]

#: (function id, setting repr) -> (the claims' key, float64 mode) while :func:`sharing` is open.
_PLAN: dict[tuple[str, str], tuple[Any, bool]] = {}
#: (function id, setting repr, key bytes) -> the run an experiment computed for the claims.
_RUNS: dict[tuple[str, str, bytes], Any] = {}
#: the experiment's own key of each shared run: another key at the same setting is not shared
_OWN_KEYS: dict[tuple[str, str, bytes], bytes] = {}
#: how many runs the claims took from an experiment (``ntsim reproduce`` reports it)
_TAKEN: list[str] = []


def function_id(fn: Callable) -> str:
    """``module.qualname`` of ``fn`` (through ``functools.partial`` and jit wrappers)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = inspect.unwrap(fn)
    return f"{fn.__module__}.{fn.__qualname__}"


def _key_bytes(key) -> bytes:
    import jax

    if jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return np.asarray(key).tobytes()


@contextlib.contextmanager
def sharing(plan: Mapping[tuple[Callable, Any], tuple[Any, bool]]) -> Iterator[list[str]]:
    """Share runs inside the block: ``plan`` maps ``(fn, setting)`` to ``(key, x64)``, the
    key and float64 mode the claims run ``fn`` at ``setting`` with. Yields the list of the
    function ids whose run the claims took from an experiment. Not re-entrant."""
    if _PLAN:
        raise RuntimeError("ntsim._shared_runs.sharing is already open.")
    _PLAN.update({(function_id(fn), repr(setting)): value for (fn, setting), value in plan.items()})
    _TAKEN.clear()
    try:
        yield _TAKEN
    finally:
        _PLAN.clear()
        _RUNS.clear()
        _OWN_KEYS.clear()


def shared_run(fn: Callable, key, setting, *, memo: Callable | None = None, **kwargs) -> Any:
    """``fn(key, setting, **kwargs)``; inside :func:`sharing`, with the claims' key when
    the claims run ``fn`` at ``setting`` (module doc).

    Args:
      fn: a simulation ``fn(key, setting, **kwargs)``.
      key: the experiment's own key, used unless the plan names ``(fn, setting)``. Only
        the first own key asking for a planned run gets it (again on every later call with
        that key); an experiment that draws several runs at one setting with other keys
        gets those computed with their own keys, so its runs stay independent.
      setting: the simulation's setting.
      memo: ``key -> memo``, for a simulation that keeps its units on disk keyed by its key
        (:func:`ntsim.run_cache.disk_memo`): built with the key actually used.
      **kwargs: arguments that do not change the numbers (a progress callback).
    """
    planned = _PLAN.get((function_id(fn), repr(setting)))
    if planned is None:
        return fn(key, setting, **_with_memo(kwargs, memo, key))
    claims_key, x64 = planned
    name = (function_id(fn), repr(setting), _key_bytes(claims_key))
    own = _key_bytes(key)
    if _OWN_KEYS.setdefault(name, own) != own:  # an experiment drawing several runs of one
        return fn(key, setting, **_with_memo(kwargs, memo, key))  # setting: only one shared
    if name not in _RUNS:
        import jax

        with jax.enable_x64(x64):
            _RUNS[name] = fn(claims_key, setting, **_with_memo(kwargs, memo, claims_key))
    return _private_copy(_RUNS[name])


def _private_copy(run):
    """The run with its containers and NumPy arrays copied (JAX arrays are immutable): an
    experiment that edits what it got in place cannot change what the claims take."""
    import jax

    return jax.tree.map(lambda leaf: leaf.copy() if isinstance(leaf, np.ndarray) else leaf, run)


def _with_memo(kwargs: dict, memo: Callable | None, key) -> dict:
    return kwargs if memo is None else {**kwargs, "memo": memo(key)}


def take(fn: Callable, key, setting) -> tuple[bool, Any]:
    """``(True, run)`` if an experiment computed ``fn(key, setting)`` inside the open
    :func:`sharing` block (the run is handed over and forgotten here), else ``(False, None)``."""
    run = _RUNS.pop((function_id(fn), repr(setting), _key_bytes(key)), _MISSING)
    if run is _MISSING:
        return False, None
    _TAKEN.append(function_id(fn))
    return True, run


_MISSING = object()
