"""The two sizes every claim and experiment supports (shared by ``ntsim.claims`` and
``ntsim.experiment``, so that running an experiment never imports the claims)."""

from __future__ import annotations

__all__ = ["SCALES", "check_scale"]

#: ``"quick"``: seconds to minutes on a 2-core CPU (what CI runs); ``"full"``: the paper's sizes.
SCALES: tuple[str, ...] = ("quick", "full")


def check_scale(scale: str) -> str:
    """``scale`` if it is one of :data:`SCALES`, else a ``ValueError`` listing them.

    Examples:
      >>> check_scale("quick")
      'quick'
      >>> check_scale("huge")
      Traceback (most recent call last):
      ...
      ValueError: scale must be one of ('quick', 'full'), got 'huge'.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}.")
    return scale
