"""Search spaces of the linearization claims (none declared yet)."""

from __future__ import annotations

from ntsim.falsify._search import SearchSpace

__all__ = ["SPACES"]

SPACES: tuple[SearchSpace, ...] = ()
