"""The code hash of a record at one scale: other scales' settings left out.

A claim's settings live in *scale tables*, dict literals keyed by scale names
(``{"quick": Setting(...), "full": Setting(...)}``). A full-scale record cannot depend on the
quick entry of such a table, yet :func:`ntsim.claims._provenance.code_hash` changes with
it, so shrinking a quick setting (to make ``make reproduce`` faster, say) would mark every
full-scale record on that module's path stale. :func:`scale_code_hash` hashes the same
modules with the entries of other scales replaced by ``None``.

It stays sound by refusing where it cannot be sure: if any module on the path names
another scale outside a table's keys (``SETTINGS["quick"]``, ``scale == "quick"``, a tuple
of some of the scale names), that code might read the other scale's entry, and nothing is
left out (the hash is then the plain code hash's algorithm over unblanked trees). Two
exceptions name no scale in particular: :mod:`ntsim._scales`, which defines the names and
holds no table, and a tuple or list literal of *every* scale name, each once (an
enumeration of the scales: ``{s: SETTINGS[s] for s in ("quick", "full")}`` builds a table
whose entry at ``s`` reads the entries at ``s``). Like a table read through ``.values()``
(which blanking already assumes no claim does), picking one scale out of such an
enumeration by position would hide a dependence: ``tests/claims/test_contract.py`` checks
that every enumeration on a claim's path is iterated, or bound to a name nothing indexes.

This module is deliberately not imported by any claim's code (the runner and the report
use it), so changing it never changes a claim's own code hash.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import pathlib
from collections.abc import Iterable

from ntsim._scales import SCALES, check_scale
from ntsim.claims._provenance import _without_docstrings, source_modules

__all__ = ["scale_code_hash"]

#: The module that defines the scale names (and reads no table): exempt from
#: :func:`_names_other_scale`.
_SCALE_NAMES = "ntsim._scales"


def _is_scale_table(node: ast.AST) -> bool:
    """A dict literal whose keys are all scale names (``{"quick": ..., "full": ...}``)."""
    return (
        isinstance(node, ast.Dict)
        and bool(node.keys)
        and all(isinstance(k, ast.Constant) and k.value in SCALES for k in node.keys)
    )


def _blank_other_scales(tree: ast.AST, scale: str) -> ast.AST:
    """``tree`` with the entries of every scale table (:func:`_is_scale_table`) at scales
    other than ``scale`` replaced by ``None``: what a run at ``scale`` cannot read."""
    for node in ast.walk(tree):
        if _is_scale_table(node):
            node.values = [
                value if key.value == scale else ast.Constant(None)
                for key, value in zip(node.keys, node.values, strict=True)
            ]
    return tree


def _is_scale_enumeration(node: ast.AST) -> bool:
    """A tuple or list literal of every scale name, each once (``("quick", "full")``)."""
    return (
        isinstance(node, (ast.Tuple, ast.List))
        and len(node.elts) == len(SCALES)
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        and sorted(e.value for e in node.elts) == sorted(SCALES)
    )


def _names_other_scale(tree: ast.AST, scale: str) -> bool:
    """Some string constant still names another scale outside a scale table's keys and an
    enumeration of all scales: code at ``scale`` may then read another scale's entry, so
    blanking would hide a dependence."""
    keys = {id(k) for node in ast.walk(tree) if _is_scale_table(node) for k in node.keys}
    keys |= {id(e) for node in ast.walk(tree) if _is_scale_enumeration(node) for e in node.elts}
    return any(
        isinstance(node, ast.Constant) and node.value in SCALES and node.value != scale
        and id(node) not in keys
        for node in ast.walk(tree)
    )  # fmt: skip


@functools.cache
def _module_tree(module_name: str, scale: str | None) -> ast.AST:
    path = importlib.import_module(module_name).__file__
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8")) if path else ast.Module([], [])
    tree = _without_docstrings(tree)
    return tree if scale is None else _blank_other_scales(tree, scale)


def scale_code_hash(roots: Iterable[str], scale: str) -> str:
    """16 hex digits of a SHA-256 over the code (no docstrings, no comments, no other
    scale's table entries) of :func:`ntsim.claims._provenance.source_modules` ``(roots)``:
    what a record made at ``scale`` depends on (module doc).

    Examples:
      >>> roots = ["ntsim.claims._decisions"]
      >>> scale_code_hash(roots, "full") == scale_code_hash(roots, "full")
      True
      >>> scale_code_hash(roots, "huge")
      Traceback (most recent call last):
      ...
      ValueError: scale must be one of ('quick', 'full'), got 'huge'.
    """
    check_scale(scale)
    modules = source_modules(roots)
    readers = [name for name in modules if name != _SCALE_NAMES]
    blank: str | None = scale
    if any(_module_names_other_scale(name, scale) for name in readers):
        blank = None
    digest = hashlib.sha256()
    for name in modules:
        digest.update(_module_digest(name, blank).encode())
    return digest.hexdigest()[:16]


# A claim's modules overlap the other claims' (every claim reads the decision rules): the
# per-module answers are cached, so hashing every claim of a run walks each tree once.
@functools.cache
def _module_names_other_scale(module_name: str, scale: str) -> bool:
    return _names_other_scale(_module_tree(module_name, scale), scale)


@functools.cache
def _module_digest(module_name: str, scale: str | None) -> str:
    code = ast.dump(_module_tree(module_name, scale), include_attributes=False)
    return hashlib.sha256(module_name.encode() + b"\0" + code.encode()).hexdigest()
