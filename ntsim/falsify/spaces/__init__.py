"""The instance spaces :func:`~ntsim.falsify.falsify` searches: one module per topic.

Declared here, beside the claims rather than inside them: a claim's recorded verdict is
keyed to the source of its own path, and a search space is not on that path (adding one
must not make every record stale). Each space uses the same public theory functions the
claim's simulation uses, so a worst instance found here is an instance of the claim's own
statement. A topic module exports ``SPACES``, a tuple of :class:`SearchSpace`; they are
keyed here by :attr:`SearchSpace.name` (``claim_id`` or ``claim_id:part``).
"""

from __future__ import annotations

from ntsim.falsify._search import SearchSpace
from ntsim.falsify.spaces import (
    early_stopping,
    linear_teachers,
    linearization,
    overtraining,
    stability,
)

__all__ = ["SPACES", "get_space"]

_TOPICS = (early_stopping, linear_teachers, linearization, overtraining, stability)


def _collect() -> dict[str, SearchSpace]:
    spaces: dict[str, SearchSpace] = {}
    for module in _TOPICS:
        for space in module.SPACES:
            if space.name in spaces:
                raise ValueError(f"two search spaces are named {space.name!r}.")
            spaces[space.name] = space
    return dict(sorted(spaces.items()))


#: Every declared space by name.
SPACES: dict[str, SearchSpace] = _collect()


def get_space(name: str) -> SearchSpace:
    """The space ``claim_id`` or ``claim_id:part`` (a ``ValueError`` naming those declared)."""
    try:
        return SPACES[name]
    except KeyError:
        known = ", ".join(sorted(SPACES))
        raise ValueError(f"no search space is declared for {name!r}; declared: {known}") from None
