"""Numerical theorem checks: the claim contract, the registry, and the runner.

The registry is an explicit tuple (no registration by import side effect): each topic
module ``ntsim/claims/<topic>.py`` exports ``CLAIMS`` and is listed in :data:`REGISTRY`.
"""

from __future__ import annotations

from ntsim.claims import early_stopping as _early_stopping
from ntsim.claims import linear_teachers as _linear_teachers
from ntsim.claims import linearization as _linearization
from ntsim.claims import overtraining as _overtraining
from ntsim.claims import stability as _stability
from ntsim.claims._base import SCALES, Claim, ClaimResult, compare
from ntsim.claims._report import ClaimRun, claim_key, run_claims, write_verification

__all__ = [
    "REGISTRY",
    "SCALES",
    "Claim",
    "ClaimResult",
    "ClaimRun",
    "claim_key",
    "compare",
    "get_claim",
    "run_claims",
    "select_claims",
    "write_verification",
]

#: Every registered claim, in topic order.
REGISTRY: tuple[Claim, ...] = (
    *_linear_teachers.CLAIMS,
    *_stability.CLAIMS,
    *_overtraining.CLAIMS,
    *_early_stopping.CLAIMS,
    *_linearization.CLAIMS,
)


def get_claim(claim_id: str) -> Claim:
    """The registered claim with this id (ValueError listing close ids otherwise)."""
    for claim in REGISTRY:
        if claim.id == claim_id:
            return claim
    prefix = claim_id.split(".", 1)[0]
    near = [c.id for c in REGISTRY if c.id.startswith(prefix)] or [c.id for c in REGISTRY]
    raise ValueError(f"Unknown claim {claim_id!r}. Registered: {', '.join(near)}.")


def select_claims(topic: str | None = None, ids: tuple[str, ...] = ()) -> tuple[Claim, ...]:
    """Claims of one ``topic`` and/or with the given ``ids`` (all when both are empty)."""
    topics = sorted({c.topic for c in REGISTRY})
    if topic is not None and topic not in topics:
        raise ValueError(f"Unknown topic {topic!r}. Topics with claims: {', '.join(topics)}.")
    chosen = [c for c in REGISTRY if topic is None or c.topic == topic]
    if ids:
        wanted = {get_claim(i).id for i in ids}
        chosen = [c for c in chosen if c.id in wanted]
    return tuple(chosen)
