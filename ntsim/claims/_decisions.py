"""Decisions of contract v2: per-instance margins, confidence-interval verdicts, tolerances.

A check turns what a simulation measured into a :class:`ClaimResult` with one of three
outcomes:

* :func:`compare` — identities and bounds. Every instance gets a *margin* (``>= 0``: the
  instance satisfies the statement); the claim holds when every margin is ``>= 0`` and is
  refuted otherwise. A non-finite value on either side raises :class:`NonFiniteError`: the
  runner records an error row, never a verdict.
* :func:`estimate_in` — estimates (slopes, ratios, means, rank correlations, bootstrap
  quantities) with their confidence interval, against the region the statement claims:
  **holds** when the interval lies inside the region, **refuted** when it lies entirely
  outside, **inconclusive** when it straddles a boundary. Non-significance never refutes;
  an O(·) rate is an upper bound (``region=AtMost(...)``).
* :func:`all_of` — several parts of one statement: refuted when some part is refuted,
  holds when every part holds, inconclusive otherwise.

Each result carries the :class:`Tolerance` it was decided with and where that tolerance
came from (a derived round-off bound, a Monte Carlo standard error, the theorem's own
constant, or a *chosen* value — which must record what was observed when it was chosen),
per-instance margins relative to the threshold (so ``1e-12`` and ``0.3`` are comparable),
and ``diagnostics``: a small dict of named numbers the report renders as a table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = [
    "OUTCOMES",
    "AtLeast",
    "AtMost",
    "ClaimResult",
    "Interval",
    "NonFiniteError",
    "Tolerance",
    "all_of",
    "compare",
    "estimate_in",
]

Outcome = Literal["holds", "refuted", "inconclusive"]
#: The three verdicts a check can reach (errors are not verdicts).
OUTCOMES: tuple[str, ...] = ("holds", "refuted", "inconclusive")
Relation = Literal["equal", "upper_bound", "lower_bound"]
ToleranceSource = Literal["none", "round-off", "monte-carlo", "theorem", "chosen"]
_SOURCES = ("none", "round-off", "monte-carlo", "theorem", "chosen")


class NonFiniteError(ValueError):
    """A measured or reference value is NaN or infinite: an error, never a verdict."""


@dataclass(frozen=True)
class Tolerance:
    """A tolerance and where it came from.

    Attributes:
      source: ``"none"`` (exact comparison), ``"round-off"`` (derived from floating-point
        error), ``"monte-carlo"`` (from a standard error), ``"theorem"`` (the statement's
        own constant or slack), or ``"chosen"`` (a value the project picked).
      value: the tolerance (absolute, relative or effect size; ``why`` says which).
      why: one sentence: how the value follows from its source.
      observed: for ``source="chosen"`` (required): what was observed when it was chosen,
        so a reader can judge the headroom.

    Examples:
      >>> Tolerance("round-off", 1e-10, "float64, ~100 flops per entry").source
      'round-off'
      >>> Tolerance("chosen", 0.15)
      Traceback (most recent call last):
      ...
      ValueError: Tolerance: a chosen tolerance must record what was observed when it was chosen.
    """

    source: ToleranceSource = "none"
    value: float | None = None
    why: str = ""
    observed: str | None = None

    def __post_init__(self):
        if self.source not in _SOURCES:
            raise ValueError(f"Tolerance: source must be one of {_SOURCES}, got {self.source!r}.")
        if self.source == "chosen" and not self.observed:
            raise ValueError(
                "Tolerance: a chosen tolerance must record what was observed when it was chosen."
            )
        if self.value is not None and not self.value >= 0:
            raise ValueError(f"Tolerance: value must be >= 0, got {self.value!r}.")

    def to_dict(self) -> dict:
        return {"source": self.source, "value": self.value, "why": self.why,
                "observed": self.observed}  # fmt: skip


EXACT = Tolerance()


@dataclass(frozen=True)
class Interval:
    """The closed region ``[lo, hi]`` a statement claims for an estimate (±inf allowed)."""

    lo: float = -math.inf
    hi: float = math.inf

    def __post_init__(self):
        if not self.lo <= self.hi:
            raise ValueError(f"Interval: need lo <= hi, got [{self.lo}, {self.hi}].")

    def describe(self) -> str:
        if self.lo == -math.inf:
            return f"≤ {self.hi:.4g}"
        if self.hi == math.inf:
            return f"≥ {self.lo:.4g}"
        return f"in [{self.lo:.4g}, {self.hi:.4g}]"


def AtMost(value: float) -> Interval:  # noqa: N802 (reads as a region)
    """The region ``(-inf, value]``."""
    return Interval(-math.inf, float(value))


def AtLeast(value: float) -> Interval:  # noqa: N802
    """The region ``[value, inf)``."""
    return Interval(float(value), math.inf)


@dataclass(frozen=True)
class ClaimResult:
    """What one check decided, at one seed.

    Attributes:
      outcome: ``"holds"``, ``"refuted"`` or ``"inconclusive"``.
      measured: measured values (flattened; for an estimate, ``[estimate]``).
      reference: what they were held against, same shape (for an estimate, the nearest
        boundary of the claimed region).
      margins: per-instance slack, ``>= 0`` where the instance satisfies the statement.
      relative_margins: margins divided by the size of their threshold (``|reference|``
        for a bound, the tolerance for an identity, the region's scale for an estimate).
      num_instances: independent random instances behind the decision.
      tolerance: the tolerance and its provenance.
      diagnostics: named numbers (scalars or short lists) the report shows.
      notes: free text (setting, what the numbers mean).
      interval: for an estimate, its confidence interval ``(lo, hi)``.
      region: for an estimate, the region the statement claims.
      parts: for a result joined by :func:`all_of`, the parts it joined (so a
        counterexample can be matched against one of them).
    """

    outcome: Outcome
    measured: np.ndarray
    reference: np.ndarray
    margins: np.ndarray
    relative_margins: np.ndarray
    num_instances: int
    tolerance: Tolerance = EXACT
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    notes: str = ""
    interval: tuple[float, float] | None = None
    region: Interval | None = None
    parts: tuple[ClaimResult, ...] = ()

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"ClaimResult: outcome must be one of {OUTCOMES}.")

    @property
    def holds(self) -> bool:
        return self.outcome == "holds"

    @property
    def worst_margin(self) -> float:
        """The smallest per-instance margin (negative: the worst violation)."""
        return float(np.min(self.margins)) if self.margins.size else math.nan

    @property
    def headroom(self) -> float:
        """The smallest relative margin: how far (as a fraction of its threshold) the
        closest instance is from flipping the verdict (NaN for exact comparisons that hold
        exactly: no threshold, no headroom to measure)."""
        values = self.relative_margins[~np.isnan(self.relative_margins)]
        return float(np.min(values)) if values.size else math.nan

    @property
    def violation_fraction(self) -> float:
        """Fraction of instances with a negative margin."""
        return float(np.mean(self.margins < 0)) if self.margins.size else math.nan


def _finite(name: str, values: np.ndarray) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        first = int(np.flatnonzero(bad.ravel())[0])
        raise NonFiniteError(
            f"{int(bad.sum())} of {values.size} {name} values are not finite "
            f"(first at flat index {first}: {values.ravel()[first]})."
        )


def _diagnostics(diagnostics: Mapping[str, Any] | None) -> dict:
    out = {}
    for name, value in (diagnostics or {}).items():
        array = np.asarray(value)
        out[name] = array.item() if array.ndim == 0 else array.tolist()
    return out


def _relative(margins: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """``margins / threshold``; where the threshold is 0 (an exact comparison) a margin of 0
    has no headroom to speak of (NaN) and any other margin is ±inf."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        relative = margins / threshold
        unbounded = np.where(margins == 0, np.nan, np.copysign(np.inf, margins))
    return np.where(threshold == 0, unbounded, relative)


def compare(
    measured,
    reference,
    *,
    relation: Relation,
    rtol: float = 0.0,
    atol: float = 0.0,
    tolerance: Tolerance | None = None,
    num_instances: int | None = None,
    diagnostics: Mapping[str, Any] | None = None,
    notes: str = "",
) -> ClaimResult:
    """Per-instance margins of an identity or a bound; holds iff every margin is ``>= 0``.

    Margins are

    * ``"equal"``: ``atol + rtol·|reference| − |measured − reference|``;
    * ``"upper_bound"`` (``measured <= reference``): ``reference − measured + atol``;
    * ``"lower_bound"`` (``measured >= reference``): ``measured − reference + atol``.

    Args:
      measured (ArrayLike): measured values, any shape (flattened).
      reference (ArrayLike): closed form or bound, broadcastable to ``measured``.
      relation: how ``measured`` must relate to ``reference``.
      rtol: relative tolerance (``"equal"`` only).
      atol: absolute slack.
      tolerance: where ``rtol``/``atol`` come from; required when either is non-zero.
      num_instances: independent instances (default: the number of measured values).
      diagnostics: named numbers for the report.
      notes: free text.

    Raises:
      NonFiniteError: a measured or reference value is NaN or infinite.

    Examples:
      >>> r = compare([1.0, 2.0], [1.0, 2.5], relation="upper_bound")
      >>> r.outcome, r.worst_margin, r.headroom
      ('holds', 0.0, 0.0)
      >>> compare([3.0], [3.0], relation="equal").headroom  # exact: nothing to measure
      nan
      >>> compare([1.0], [float("nan")], relation="equal")  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ntsim.claims._decisions.NonFiniteError: 1 of 1 reference values are not finite ...
    """
    measured = np.asarray(measured, dtype=float)
    reference = np.broadcast_to(np.asarray(reference, dtype=float), measured.shape)
    if rtol < 0 or atol < 0:
        raise ValueError(f"compare: rtol and atol must be non-negative, got {rtol=}, {atol=}.")
    if (rtol or atol) and tolerance is None:
        raise ValueError("compare: a non-zero rtol/atol needs tolerance=Tolerance(source, ...).")
    _finite("measured", measured)
    _finite("reference", reference)
    if relation == "equal":
        threshold = atol + rtol * np.abs(reference)
        margins = threshold - np.abs(measured - reference)
    elif relation in ("upper_bound", "lower_bound"):
        sign = 1.0 if relation == "upper_bound" else -1.0
        margins = sign * (reference - measured) + atol
        threshold = np.abs(reference) + atol
    else:
        raise ValueError(
            f"compare: relation must be 'equal', 'upper_bound' or 'lower_bound', got {relation!r}."
        )
    relative = _relative(margins, threshold)
    return ClaimResult(
        outcome="holds" if np.all(margins >= 0) else "refuted",
        measured=measured.ravel(),
        reference=np.asarray(reference, dtype=float).ravel(),
        margins=margins.ravel(),
        relative_margins=relative.ravel(),
        num_instances=int(measured.size if num_instances is None else num_instances),
        tolerance=tolerance or EXACT,
        diagnostics=_diagnostics(diagnostics),
        notes=notes,
    )


def estimate_in(
    estimate: float,
    interval: tuple[float, float],
    region: Interval,
    *,
    num_instances: int,
    tolerance: Tolerance | None = None,
    diagnostics: Mapping[str, Any] | None = None,
    notes: str = "",
) -> ClaimResult:
    """Decide an estimate on its confidence interval against the region a statement claims.

    **holds** when ``interval ⊆ region``, **refuted** when ``interval ∩ region = ∅``,
    **inconclusive** otherwise. The margin is how far the interval stays inside the region
    (holds, ``>= 0``), or minus how far it stays outside (refuted: a margin near 0 is a
    fragile refutation); the relative margin divides by the interval's half-width.

    Args:
      estimate: the point estimate (must lie in ``interval``).
      interval: its confidence interval ``(lo, hi)`` (say which level in ``notes``).
      region: what the statement claims, e.g. ``AtMost(-0.5 + effect)``.
      num_instances: independent instances behind the estimate (seeds, datasets).
      tolerance: where the effect size built into ``region`` comes from.
      diagnostics: named numbers for the report.
      notes: free text.

    Examples:
      >>> estimate_in(-0.8, (-0.9, -0.7), AtMost(-0.4), num_instances=8).outcome
      'holds'
      >>> estimate_in(-0.8, (-0.9, -0.3), AtMost(-0.4), num_instances=8).outcome
      'inconclusive'
      >>> estimate_in(0.1, (0.0, 0.2), AtMost(-0.4), num_instances=8).outcome
      'refuted'
    """
    lo, hi = (float(v) for v in interval)
    values = np.array([estimate, lo, hi], dtype=float)
    _finite("estimate/interval", values)
    if not lo <= estimate <= hi:
        raise ValueError(f"estimate_in: estimate {estimate} outside its interval [{lo}, {hi}].")
    inside = min(lo - region.lo, region.hi - hi)
    outside = max(region.lo - hi, lo - region.hi)
    outcome = "holds" if inside >= 0 else "refuted" if outside > 0 else "inconclusive"
    boundary = region.hi if abs(region.hi - hi) <= abs(lo - region.lo) else region.lo
    scale = max((hi - lo) / 2, np.finfo(float).tiny)
    # holds: how far the interval stays inside; refuted: how far it stays outside (so a
    # refutation that is 0.001 from inconclusive shows a margin of −0.001, not −(width))
    margin = -outside if outcome == "refuted" else inside
    return ClaimResult(
        outcome=outcome,
        measured=np.array([float(estimate)]),
        reference=np.array([boundary]),
        margins=np.array([margin]),
        relative_margins=np.array([margin / scale]),
        num_instances=int(num_instances),
        tolerance=tolerance or EXACT,
        diagnostics=_diagnostics(diagnostics),
        notes=notes,
        interval=(lo, hi),
        region=region,
    )


def all_of(*results: ClaimResult, notes: str = "", diagnostics=None) -> ClaimResult:
    """Several parts of one statement as one result.

    Refuted when some part is refuted, holds when every part holds, inconclusive
    otherwise. Margins are concatenated; ``num_instances`` is the largest of the parts
    (they check the same instances from different angles); the tolerance is the first
    part's whose source is not ``"none"``. The parts are kept (``parts``), so an
    :class:`~ntsim.claims.EstimateIn` counterexample can name the estimate it is about.
    """
    if not results:
        raise ValueError("all_of: need at least one result.")
    outcomes = {r.outcome for r in results}
    outcome = "refuted" if "refuted" in outcomes else "holds" if outcomes == {"holds"} else (
        "inconclusive")  # fmt: skip
    tolerance = next((r.tolerance for r in results if r.tolerance.source != "none"), EXACT)
    merged = {}
    for r in results:
        merged.update(r.diagnostics)
    merged.update(_diagnostics(diagnostics))
    return ClaimResult(
        outcome=outcome,
        measured=np.concatenate([r.measured for r in results]),
        reference=np.concatenate([r.reference for r in results]),
        margins=np.concatenate([r.margins for r in results]),
        relative_margins=np.concatenate([r.relative_margins for r in results]),
        num_instances=max(r.num_instances for r in results),
        tolerance=tolerance,
        diagnostics=merged,
        notes=notes or " ".join(r.notes for r in results if r.notes),
        interval=results[0].interval if len(results) == 1 else None,
        region=results[0].region if len(results) == 1 else None,
        parts=tuple(results),
    )
