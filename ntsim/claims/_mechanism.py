"""A counterexample with its mechanism: the violation, and the parts that explain it.

A refutation is strongest when the claim also checks *why* the statement fails (the printed
formula differs from the true one by exactly a closed-form gap). :class:`MechanismViolation`
measures the violation on one part of an :func:`~ntsim.claims.all_of` result and matches
only while every other part holds, so a wrong mechanism, or a wrong measurement that still
happens to violate the statement, no longer matches the recorded counterexample.
"""

from __future__ import annotations

from dataclasses import dataclass

from ntsim.claims._contract import ViolationFraction
from ntsim.claims._decisions import ClaimResult

__all__ = ["MechanismViolation"]


@dataclass(frozen=True)
class MechanismViolation(ViolationFraction):
    """:class:`~ntsim.claims.ViolationFraction` measured on part ``part`` of a joined result;
    every other part (the mechanism) must hold for the counterexample to match."""

    part: int = 0

    def matches(self, result: ClaimResult) -> tuple[bool, str]:
        if not 0 <= self.part < len(result.parts):
            return False, f"the result has no part {self.part} (join the parts with all_of)"
        broken = [i for i, p in enumerate(result.parts) if i != self.part and p.outcome != "holds"]
        ok, why = super().matches(result.parts[self.part])
        if broken:
            return False, f"{why}; but the mechanism (part {broken}) does not hold"
        return ok, why

    def describe(self) -> str:
        return f"{super().describe()} (part {self.part}, with the other parts holding)"
