"""Which functions of ``ntsim.theory`` and ``ntsim.core`` a claim runs, found from bytecode.

The claims' source hashes (``ntsim.claims``' provenance) work per module: enough to find a
stale record, too coarse to say which claims should notice a bug in one function. Here a
claim's *path* is every function reachable from its check and its simulation through the
global names and attributes their code objects load (nested functions and lambdas
included), the functions bound in ``functools.partial`` objects, the methods of ``ntsim``
classes they name, and the callables held in module-level dicts, lists and tuples they name.
It over-approximates (a name loaded on a branch that never runs still counts); a mutant of
a function a claim never calls is then recognised as *equivalent* for that claim (its
outputs do not change), not counted as a survivor.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Iterable, Iterator

__all__ = ["MUTABLE_PACKAGES", "FunctionRef", "claim_path", "function_ref"]

#: Packages whose functions are mutated (where the numerics live).
MUTABLE_PACKAGES: tuple[str, ...] = ("ntsim.theory", "ntsim.core")

#: (module, qualified name): a top-level function ``f`` or a method ``Class.f``.
FunctionRef = tuple[str, str]


def _unwrap(obj):
    for _ in range(16):
        if isinstance(obj, functools.partial):
            obj = obj.func
            continue
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is None or wrapped is obj:
            return obj
        obj = wrapped
    return obj


def _in_ntsim(module: str | None) -> bool:
    return bool(module) and (module == "ntsim" or module.startswith("ntsim."))


def function_ref(obj) -> FunctionRef | None:
    """``(module, qualname)`` of an ``ntsim`` function or method that a mutant can replace
    (top level or one class deep; nested functions belong to their parent), else ``None``."""
    obj = _unwrap(obj)
    if not inspect.isfunction(obj) or not _in_ntsim(obj.__module__):
        return None
    qualname = obj.__qualname__
    if "<" in qualname or qualname.count(".") > 1:  # lambdas, nested functions
        return None
    return obj.__module__, qualname


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _referenced(obj) -> Iterator[object]:
    """The objects a callable (or container, or class) refers to by global name or attribute."""
    if isinstance(obj, functools.partial):
        yield obj.func
        yield from obj.args
        yield from obj.keywords.values()
        return
    if isinstance(obj, dict):
        yield from obj.values()
        return
    if isinstance(obj, list | tuple | frozenset | set):
        yield from obj
        return
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if not (name.startswith("__") and name.endswith("__")) or name == "__call__":
                yield member
        return
    obj = _unwrap(obj)
    if not inspect.isfunction(obj):
        return
    namespace = obj.__globals__
    names = set(_code_names(obj.__code__))
    modules = [v for v in namespace.values() if isinstance(v, types.ModuleType)]
    for name in names:
        if name in namespace:
            yield namespace[name]
    for module in modules:  # ``module.attr`` loads: attr is in co_names
        if not _in_ntsim(module.__name__):
            continue
        for name in names:
            if hasattr(module, name):
                yield getattr(module, name)
    yield from obj.__defaults__ or ()
    yield from (obj.__kwdefaults__ or {}).values()


def _worth_following(obj) -> bool:
    if isinstance(obj, functools.partial | dict | list | tuple | frozenset | set):
        return True
    if inspect.isclass(obj):
        return _in_ntsim(obj.__module__)
    obj = _unwrap(obj)
    return inspect.isfunction(obj) and _in_ntsim(obj.__module__)


def claim_path(roots: Iterable[object]) -> frozenset[FunctionRef]:
    """The mutable functions (in :data:`MUTABLE_PACKAGES`) reachable from ``roots``.

    Examples:
      >>> from ntsim.core import log_log_slope
      >>> ("ntsim.core._spectra", "log_log_slope") in claim_path([log_log_slope])
      True
    """
    seen: set[int] = set()
    found: set[FunctionRef] = set()
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or not _worth_following(obj):
            continue
        seen.add(id(obj))
        ref = function_ref(obj)
        if ref is not None and ref[0].startswith(MUTABLE_PACKAGES):
            found.add(ref)
        stack.extend(_referenced(obj))
    return frozenset(found)
