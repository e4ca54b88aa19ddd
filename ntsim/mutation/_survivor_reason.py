"""The record of why a surviving mutant is not a blind spot (see :mod:`._survivors`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["EQUIVALENT", "LOOSER", "OUTSIDE", "TIGHTER", "Category", "SurvivorReason"]

Category = Literal["equivalent in effect", "outside the claims"]


@dataclass(frozen=True)
class SurvivorReason:
    """Why the survivors of ``function`` (``operator``, ``before``) are not blind spots.

    Attributes:
      function: qualified name as the matrix records it (``"lemma_a15_bound"``,
        ``"Class.method"``).
      category: ``"equivalent in effect"`` or ``"outside the claims"`` (the module doc of
        :mod:`ntsim.mutation._survivors`).
      why: one sentence a referee can check.
      operator: only mutants of this operator (``"scale_x2"``…) or of these operators (a
        tuple); None for any.
      before: only mutants whose original expression contains this text; None for any.
      after: only mutants whose mutated expression contains this text; None for any (to
        tell apart mutants of one expression, such as ×½ on either side of a sum).
    """

    function: str
    category: Category
    why: str
    operator: str | tuple[str, ...] | None = None
    before: str | None = None
    after: str | None = None

    def __post_init__(self):
        if self.category not in ("equivalent in effect", "outside the claims"):
            raise ValueError(f"SurvivorReason: unknown category {self.category!r}.")
        if not self.why.strip():
            raise ValueError(f"SurvivorReason for {self.function}: give the reason.")

    def matches(self, outcome: Mapping) -> bool:
        """Whether this reason covers the recorded mutant ``outcome``."""
        return (
            outcome["function"] == self.function
            and (
                self.operator is None
                or outcome["operator"]
                in ((self.operator,) if isinstance(self.operator, str) else self.operator)
            )
            and (self.before is None or self.before in outcome["before"])
            and (self.after is None or self.after in outcome["after"])
        )


EQUIVALENT = "equivalent in effect"
OUTSIDE = "outside the claims"
LOOSER = "a bound that holds still holds when it is made looser; the lemma states no tightness"
TIGHTER = (
    "the theorem states an upper bound, not its tightness, and these runs sit inside the "
    "tighter bound too"
)
