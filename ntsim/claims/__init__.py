"""Numerical theorem checks: the claim contract (v2), the registry, the runner, the tables.

Write a claim with :class:`Claim` (what it reads and how it is decided) and the decisions
:func:`compare`, :func:`estimate_in` and :func:`all_of`; :func:`run_claims` runs claims at
several seeds and :func:`write_verification` records them. The registry is an explicit
tuple (no registration by import side effect): each topic package ``ntsim/claims/<topic>/``
exports ``CLAIMS`` and is listed in :data:`REGISTRY`. Besides the five papers' topics,
``intervals`` checks the interval procedures every verdict is decided on
(:data:`SHARED_TOPICS`).
"""

from __future__ import annotations

from ntsim._scales import SCALES
from ntsim.claims._contract import (
    KINDS,
    Claim,
    Counterexample,
    EstimateIn,
    Reading,
    Simulation,
    ViolationFraction,
    derived,
    figure,
    printed,
    proof,
)
from ntsim.claims._decisions import (
    AtLeast,
    AtMost,
    ClaimResult,
    Interval,
    NonFiniteError,
    Tolerance,
    all_of,
    compare,
    estimate_in,
)
from ntsim.claims._findings import findings_page, write_findings
from ntsim.claims._report import (
    finished_rows,
    refresh_searches,
    stale_records,
    write_index,
    write_verification,
)
from ntsim.claims._runner import (
    ClaimRecord,
    RunCache,
    SeedOutcome,
    claim_code_hash,
    claim_key,
    claim_source_hash,
    parse_seeds,
    run_claims,
    simulation_run,
)

# The topic packages come after the names above, so that a topic module can write
# `from ntsim.claims import Claim, compare, ...` while this package is being initialised.
from ntsim.claims import early_stopping as _early_stopping  # noqa: E402  isort: skip
from ntsim.claims import intervals as _intervals  # noqa: E402  isort: skip
from ntsim.claims import linear_teachers as _linear_teachers  # noqa: E402  isort: skip
from ntsim.claims import linearization as _linearization  # noqa: E402  isort: skip
from ntsim.claims import overtraining as _overtraining  # noqa: E402  isort: skip
from ntsim.claims import stability as _stability  # noqa: E402  isort: skip

__all__ = [
    "KINDS",
    "REGISTRY",
    "SCALES",
    "QUICK_SMOKE_CLAIMS",
    "SHARED_TOPICS",
    "AtLeast",
    "AtMost",
    "Claim",
    "ClaimRecord",
    "ClaimResult",
    "Counterexample",
    "EstimateIn",
    "Interval",
    "NonFiniteError",
    "Reading",
    "RunCache",
    "SeedOutcome",
    "Simulation",
    "Tolerance",
    "ViolationFraction",
    "all_of",
    "build_registry",
    "claim_code_hash",
    "claim_key",
    "claim_source_hash",
    "compare",
    "derived",
    "estimate_in",
    "figure",
    "findings_page",
    "finished_rows",
    "refresh_searches",
    "get_claim",
    "parse_seeds",
    "printed",
    "proof",
    "run_claims",
    "select_claims",
    "simulation_run",
    "stale_records",
    "write_findings",
    "write_index",
    "write_verification",
]


def build_registry(*claims) -> tuple:
    """``claims`` as a registry tuple, after checking it as a whole.

    Ids are unique; every ``expect="refuted"`` claim (contract v2) names a twin that is
    registered, expects ``"holds"`` and reads the same simulation; two simulations with
    one name are the same simulation.

    Raises:
      ValueError: naming the offending claims.
    """
    by_id = {}
    for claim in claims:
        if claim.id in by_id:
            raise ValueError(f"Duplicate claim id {claim.id!r}: ids must be unique.")
        by_id[claim.id] = claim
    simulations = {}
    for claim in claims:
        if not isinstance(claim, Claim):
            continue
        other = simulations.setdefault(claim.uses.name, claim.uses)
        if other is not claim.uses and other != claim.uses:
            raise ValueError(f"{claim.id}: two different simulations named {claim.uses.name!r}.")
        if claim.expect != "refuted":
            continue
        twin = by_id.get(claim.twin)
        if not isinstance(twin, Claim) or twin.expect != "holds":
            raise ValueError(f"{claim.id}: twin {claim.twin!r} is not a registered v2 claim "
                             "expected to hold.")  # fmt: skip
        if twin.uses.name != claim.uses.name:
            raise ValueError(
                f"{claim.id}: twin {twin.id} reads {twin.uses.name!r}, not {claim.uses.name!r}."
            )
    return tuple(claims)


#: Every registered claim, in topic order.
REGISTRY: tuple = build_registry(
    *_linear_teachers.CLAIMS,
    *_stability.CLAIMS,
    *_overtraining.CLAIMS,
    *_early_stopping.CLAIMS,
    *_linearization.CLAIMS,
    *_intervals.CLAIMS,
)

#: Topics whose claims check machinery every topic's verdicts rest on (no paper of their
#: own): ``ntsim mutate --topic T`` also runs them on T's mutants of functions on their paths.
SHARED_TOPICS: tuple[str, ...] = ("intervals",)

#: Claims whose quick scale only exercises the pipeline: a real checkpoint's quick run (L3,
#: a dozen sentences) is too small to decide the statement either way. At quick scale their
#: verdict is reported and an error fails, but it is not held to ``expect``
#: (:attr:`ClaimRecord.as_expected`); at full scale they count like every claim.
QUICK_SMOKE_CLAIMS: frozenset[str] = _linearization.QUICK_SMOKE | _early_stopping.QUICK_SMOKE


def get_claim(claim_id: str):
    """The registered claim with this id (ValueError listing close ids otherwise)."""
    for claim in REGISTRY:
        if claim.id == claim_id:
            return claim
    prefix = claim_id.split(".", 1)[0]
    near = [c.id for c in REGISTRY if c.id.startswith(prefix)] or [c.id for c in REGISTRY]
    raise ValueError(f"Unknown claim {claim_id!r}. Registered: {', '.join(near)}.")


def select_claims(topic: str | None = None, ids: tuple[str, ...] = ()) -> tuple:
    """Claims of one ``topic`` and/or with the given ``ids`` (all when both are empty).

    Raises:
      ValueError: unknown topic or id, or a selection that is empty (e.g. an id of
        another topic than ``topic``).
    """
    topics = sorted({c.topic for c in REGISTRY})
    if topic is not None and topic not in topics:
        raise ValueError(f"Unknown topic {topic!r}. Topics with claims: {', '.join(topics)}.")
    chosen = [c for c in REGISTRY if topic is None or c.topic == topic]
    if ids:
        wanted = {get_claim(i).id for i in ids}
        chosen = [c for c in chosen if c.id in wanted]
        if not chosen:
            raise ValueError(
                f"No claim selected: {', '.join(sorted(wanted))} not in topic {topic!r}."
            )
    return tuple(chosen)
