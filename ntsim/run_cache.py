"""Resumable per-unit run caches for the long (MiniLM) simulations.

The MiniLM simulations of :mod:`ntsim.theory.early_stopping` and
:mod:`ntsim.theory.linearization.minilm` call ``memo(name, compute)`` once per unit (a draw
of sentences, a seed, a dataset's kernels, one stacked training run); :func:`disk_memo`
keeps each finished unit as a small JSON file named by the unit and a digest of everything
that determines its numbers (the setting, the key and an optional salt such as the code
hash), written atomically, so an interrupted full-scale run resumes where it stopped and a
changed setting never reads another setting's units. The experiments keep units with
``run_cache``; ``ntsim verify --keep-units DIR`` keeps the claims' units
(:mod:`ntsim.claims._kept_units`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["KEEP_UNITS_ENV", "disk_memo", "setting_of"]

#: The environment variable naming the directory where the claims' long simulations keep
#: their units ("" or unset: none); ``ntsim verify --keep-units DIR`` sets it.
KEEP_UNITS_ENV = "NTSIM_KEEP_UNITS"


def disk_memo(
    folder: str, setting: Any, key: Any, *, salt: str = ""
) -> Callable[[str, Callable[[], dict]], dict]:
    """``memo(name, compute)`` keeping units under ``folder`` (``""``: compute every time).

    Args:
      folder: where the units go (created on the first write).
      setting: the simulation's setting (a dataclass).
      key: the simulation's PRNG key (anything ``np.asarray`` turns into integers).
      salt: more text the units depend on (``""`` leaves the digest as it always was).
    """
    if not folder:
        return lambda name, compute: compute()
    identity = [type(setting).__name__, dataclasses.asdict(setting), np.asarray(key).tolist()]
    digest = hashlib.sha256(
        json.dumps(identity + ([salt] if salt else []), sort_keys=True, default=str).encode()
    ).hexdigest()[:24]

    def memo(name: str, compute: Callable[[], dict]) -> dict:
        path = os.path.join(folder, f"{name}_{digest}.json")
        if os.path.exists(path):
            with open(path) as file:
                return json.load(file)
        unit = compute()
        os.makedirs(folder, exist_ok=True)
        with open(path + ".tmp", "w") as file:
            json.dump(unit, file)
        os.replace(path + ".tmp", path)
        return unit

    return memo


def setting_of(config: Any, setting_type: type) -> Any:
    """The simulation setting inside an experiment ``Config`` that extends ``setting_type``
    with fields of its own (``run_cache``): the fields ``setting_type`` declares, nothing
    else, so the setting — and the units' digest — never depend on where units are kept."""
    fields = dataclasses.fields(setting_type)
    return setting_type(**{field.name: getattr(config, field.name) for field in fields})
