"""Gradient-based falsification: the worst case a bound or identity claim has survived.

``ntsim falsify ID`` maximises a claim's ``lhs/rhs`` over its declared instance space
(:mod:`ntsim.falsify.spaces`) with Adam from many random starts, and reports the worst
instance found beside the random starts. See :func:`falsify` and :class:`SearchSpace`.

The names are imported on first use, so the command line can read its arguments (and set
JAX's compilation cache) before JAX starts.
"""

from __future__ import annotations

import importlib

from ntsim.falsify._command import add_falsify_parser, run_falsify_command

__all__ = [
    "SPACES",
    "SearchResult",
    "SearchSpace",
    "add_falsify_parser",
    "falsify",
    "get_space",
    "load_instance",
    "random_search",
    "replay",
    "run_falsify_command",
    "stale_entries",
]

_LAZY = {
    "SearchResult": "_search",
    "SearchSpace": "_search",
    "falsify": "_search",
    "random_search": "_search",
    "replay": "_search",
    "load_instance": "_record",
    "SPACES": "spaces",
    "get_space": "spaces",
    "stale_entries": "_record",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"ntsim.falsify.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'ntsim.falsify' has no attribute {name!r}")
