"""Provenance: a hash of the source a claim runs, so stale records can be found.

:func:`source_modules` follows the ``ntsim`` imports of a claim's modules (its check and
its simulation) transitively. An imported *name* resolves to the module that defines it
(``from ntsim.core import log_log_slope`` → ``ntsim.core._spectra``), an imported *module*
or package to itself (a package's ``__init__`` then pulls in what it re-exports). The
decision rules (:mod:`ntsim.claims._decisions`, :mod:`ntsim.claims._contract`) are always
included: a change there can change a verdict. :func:`source_hash` hashes the sources of
those modules; ``ntsim report --stale`` compares it with the hash a record was made at.

:func:`code_hash` hashes the same modules' *code*: their syntax trees without docstrings
(comments are not in a syntax tree). A record carries both; a row made with a code hash is
stale only when the code changed, so mending a docstring or a comment does not force a
full-scale re-recording. Rows made before the code hash existed fall back to the source
hash.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import inspect
import pathlib
import types
from collections.abc import Iterable

__all__ = ["callable_module", "code_hash", "source_hash", "source_modules"]

_ALWAYS = ("ntsim.claims._decisions", "ntsim.claims._contract")


def callable_module(fn) -> str:
    """The module that defines ``fn`` (unwrapping ``functools.partial`` and jit wrappers)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = inspect.unwrap(fn)
    module = getattr(fn, "__module__", None)
    if not module:
        raise TypeError(f"Cannot tell which module defines {fn!r}.")
    return module


def _resolve(name: str, package: str | None, level: int) -> str:
    if level:
        base = package.rsplit(".", level - 1)[0] if level > 1 else package
        return f"{base}.{name}" if name else base
    return name


@functools.cache
def _direct_dependencies(module_name: str) -> frozenset[str]:
    module = importlib.import_module(module_name)
    path = getattr(module, "__file__", None)
    if path is None:
        return frozenset()
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
    package = module.__package__ or module_name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "ntsim")
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node.module or "", package, node.level)
            if source.split(".")[0] != "ntsim":
                continue
            source_module = importlib.import_module(source)
            for alias in node.names:
                obj = getattr(source_module, alias.name, None)
                if isinstance(obj, types.ModuleType):
                    found.add(obj.__name__)
                    continue
                defined_in = getattr(obj, "__module__", None)
                found.add(defined_in if str(defined_in).startswith("ntsim") else source)
    found.discard(module_name)
    return frozenset(found)


def source_modules(roots: Iterable[str]) -> tuple[str, ...]:
    """Every ``ntsim`` module reachable from ``roots`` by imports (sorted), plus the
    decision rules.

    Examples:
      >>> source_modules(["ntsim.claims._decisions"])
      ('ntsim._scales', 'ntsim.claims._contract', 'ntsim.claims._decisions')
    """
    seen: set[str] = set()
    stack = [r for r in (*roots, *_ALWAYS) if r.split(".")[0] == "ntsim"]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(_direct_dependencies(name) - seen)
    return tuple(sorted(seen))


@functools.cache
def _module_digest(module_name: str) -> str:
    path = importlib.import_module(module_name).__file__
    data = pathlib.Path(path).read_bytes() if path else b""
    return hashlib.sha256(module_name.encode() + b"\0" + data).hexdigest()


def source_hash(roots: Iterable[str]) -> str:
    """16 hex digits of a SHA-256 over the sources of :func:`source_modules` ``(roots)``."""
    digest = hashlib.sha256()
    for name in source_modules(roots):
        digest.update(_module_digest(name).encode())
    return digest.hexdigest()[:16]


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


@functools.cache
def _module_code_digest(module_name: str) -> str:
    path = importlib.import_module(module_name).__file__
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8")) if path else ast.Module([], [])
    code = ast.dump(_without_docstrings(tree), include_attributes=False)
    return hashlib.sha256(module_name.encode() + b"\0" + code.encode()).hexdigest()


def code_hash(roots: Iterable[str]) -> str:
    """16 hex digits of a SHA-256 over the code (no docstrings, no comments) of
    :func:`source_modules` ``(roots)``.

    Examples:
      >>> code_hash(["ntsim.claims._decisions"]) == code_hash(["ntsim.claims._decisions"])
      True
    """
    digest = hashlib.sha256()
    for name in source_modules(roots):
        digest.update(_module_code_digest(name).encode())
    return digest.hexdigest()[:16]
