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
            for alias in node.names:
                if alias.name.split(".")[0] != "ntsim":
                    continue
                if alias.asname is None:  # ``import ntsim.x.y`` binds ``ntsim``: keep it coarse
                    found.add(alias.name)
                else:
                    found.update(_package_uses(tree, alias.asname, alias.name))
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node.module or "", package, node.level)
            if source.split(".")[0] != "ntsim":
                continue
            source_module = importlib.import_module(source)
            for alias in node.names:
                obj = getattr(source_module, alias.name, None)
                if isinstance(obj, types.ModuleType):
                    found.update(_package_uses(tree, alias.asname or alias.name, obj.__name__))
                    continue
                found.add(_defining_module(obj, source))
    found.discard(module_name)
    return frozenset(found)


def _defining_module(obj, source: str, name: str | None = None) -> str:
    """The ``ntsim`` module that defines ``obj``: a function's or class's ``__module__``;
    for a constant (no ``__module__``) named ``name``, the module that assigns it, found by
    following ``from … import name`` from ``source`` (:func:`_assigning_module`); else
    ``source``, the module it was taken from."""
    defined_in = getattr(obj, "__module__", None)
    if str(defined_in).startswith("ntsim"):
        return defined_in
    return _assigning_module(source, name) if name else source


@functools.cache
def _assigning_module(module_name: str, name: str, depth: int = 0) -> str:
    """The module whose top level assigns ``name``, following ``from … import name``
    re-exports from ``module_name`` (a package's ``__init__``); ``module_name`` itself when
    it assigns the name, or when the trail is lost (a star import, a dynamic binding)."""
    module = importlib.import_module(module_name)
    path = getattr(module, "__file__", None)
    if path is None or depth > 8:
        return module_name
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
    package = module.__package__ or module_name.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(
            (a.asname or a.name) == name and a.name == name for a in node.names
        ):
            source = _resolve(node.module or "", package, node.level)
            if source.split(".")[0] == "ntsim":
                return _assigning_module(source, name, depth + 1)
    return module_name


def _package_uses(tree: ast.AST, bound: str, package_name: str) -> set[str]:
    """What a module bound to the name ``bound`` contributes: for a *package* that the code
    reads only as ``bound.attr``, the modules defining each ``attr`` read (so a claims
    module that imports ``ntsim.theory.overtraining as ot`` depends on the modules of the
    ``ot.*`` it uses, not on every module the package re-exports; an ``attr`` with no
    defining module, a constant, falls back to the whole package); for a plain module, or a
    package the code uses any other way, the module itself (all it imports)."""
    target = importlib.import_module(package_name)
    if not hasattr(target, "__path__"):
        return {package_name}
    attributes: set[str] = set()
    attribute_nodes: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == bound
        ):
            attributes.add(node.attr)
            attribute_nodes.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == bound and id(node) not in attribute_nodes:
            return {package_name}  # passed around or rebound: anything in it may be read
    uses: set[str] = set()
    for attr in attributes:
        obj = getattr(target, attr, None)
        if isinstance(obj, types.ModuleType):
            uses.add(obj.__name__)
        else:
            uses.add(_defining_module(obj, package_name, attr))
    return uses


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
