"""Claims' simulations that keep their finished units, for runs longer than a sitting.

A full-scale MiniLM simulation takes up to two hours per master seed on two CPU cores, and
a claim reads three seeds. :func:`keeping_units` wraps such a simulation (one that accepts
``memo=``, module doc of :mod:`ntsim.run_cache`) so that, when the environment variable
``NTSIM_KEEP_UNITS`` names a directory (``ntsim verify --keep-units DIR`` sets it), each
finished unit is kept under ``DIR/<simulation name>/`` and a later ``ntsim verify`` at the
same code reads it instead of computing it again. The units' digest holds the setting, the
key and the code hash of the simulation's transitive source (:func:`code_hash`, the one the
records carry), so a unit is reused only by a run whose record would carry the same code
hash; any change to the code on the simulation's path computes every unit afresh. Without
the variable the simulation runs as it is, computing everything.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from ntsim.claims._provenance import callable_module, code_hash
from ntsim.run_cache import KEEP_UNITS_ENV, disk_memo

__all__ = ["keeping_units"]


def keeping_units(simulate: Callable[..., Any], name: str) -> Callable[[Any, Any], Any]:
    """``simulate(key, setting, memo=...)`` as ``fn(key, setting)`` keeping its units under
    ``$NTSIM_KEEP_UNITS/name`` when that is set (module doc)."""

    @functools.wraps(simulate)
    def run(key, setting):
        root = os.environ.get(KEEP_UNITS_ENV, "")
        if not root:
            return simulate(key, setting)
        salt = "code " + code_hash([callable_module(simulate)])
        return simulate(key, setting, memo=disk_memo(os.path.join(root, name), setting, key,
                                                     salt=salt))  # fmt: skip

    return run
