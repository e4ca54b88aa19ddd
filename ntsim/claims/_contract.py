"""The claim record of contract v2: what a claim declares; the runner does the rest.

A :class:`Claim` is data plus one pure decision:

* ``id``, ``paper``, ``statement`` — what is checked, in words;
* ``kind`` — identity | bound | rate | trend | ordering | sanity (a sanity check cannot fail
  by construction and is counted apart from verification);
* ``reading`` — which reading of the paper is tested (:func:`printed`, :func:`proof`,
  :func:`figure` or :func:`derived`, with the quoted words), so that a refutation of a
  reading is never reported as "the paper is wrong";
* ``uses`` — the :class:`Simulation` it reads: a public function of ``ntsim.theory`` with a
  frozen setting per scale; the figure that draws the same statement calls the same
  function with the same setting;
* ``check(run) -> ClaimResult`` — pure, built from :mod:`ntsim.claims._decisions`;
* ``expect`` and, for ``expect="refuted"``, a :class:`Counterexample` the measurement must
  match and the ``twin`` (the corrected statement, reading the same simulation).

The runner (:func:`ntsim.claims.run_claims`) validates the scale, derives the key from the
simulation's name, enters float64 when the simulation asks for it, computes one run per
(simulation, scale, seed) and shares it between the claims that read it, enforces
``min_instances`` and runs several master seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ntsim._scales import SCALES
from ntsim.claims._decisions import ClaimResult, Interval

__all__ = [
    "KINDS",
    "Claim",
    "Counterexample",
    "EstimateIn",
    "Reading",
    "Simulation",
    "ViolationFraction",
    "derived",
    "figure",
    "printed",
    "proof",
]

Kind = Literal["identity", "bound", "rate", "trend", "ordering", "sanity"]
#: Claim kinds; ``sanity`` checks are counted apart from verification.
KINDS: tuple[str, ...] = ("identity", "bound", "rate", "trend", "ordering", "sanity")
_READINGS = ("printed", "proof", "figure", "derived")


@dataclass(frozen=True)
class Reading:
    """Which reading of the paper a claim tests.

    Attributes:
      kind: ``"printed"`` (the paper's words or equation as printed), ``"proof"`` (a step
        of its proof), ``"figure"`` (what a figure shows), or ``"derived"`` (the project's
        own, stronger or more specific reading).
      source: the quoted sentence or equation (printed/figure), the proof step, or for
        ``derived`` what the project adds to the paper and why.
    """

    kind: Literal["printed", "proof", "figure", "derived"]
    source: str

    def __post_init__(self):
        if self.kind not in _READINGS:
            raise ValueError(f"Reading: kind must be one of {_READINGS}, got {self.kind!r}.")
        if not self.source.strip():
            raise ValueError("Reading: quote the words, equation or proof step that is tested.")


def printed(source: str) -> Reading:
    """The paper's printed statement (quote it)."""
    return Reading("printed", source)


def proof(source: str) -> Reading:
    """A step of the paper's proof."""
    return Reading("proof", source)


def figure(source: str) -> Reading:
    """What a figure (or its caption) shows."""
    return Reading("figure", source)


def derived(source: str) -> Reading:
    """The project's own reading, stronger or more specific than the paper's words."""
    return Reading("derived", source)


@dataclass(frozen=True)
class Simulation:
    """A simulation claims read: ``fn(key, setting) -> run`` with one setting per scale.

    Attributes:
      name: unique name; the runner derives the key from it (so claims reading the same
        simulation read the same run) and caches one run per (name, scale, seed).
      fn: a public, tested function of ``ntsim.theory`` (or a thin map of one over keys).
      scales: ``{"quick": setting, "full": setting}``; settings are frozen dataclasses or
        NamedTuples (hashable, with named fields).
      x64: compute the run (and the checks reading it) in float64.
      key_name: the name the key is derived from when it must differ from ``name``.
    """

    name: str
    fn: Callable[[Any, Any], Any] = field(repr=False)
    scales: Mapping[str, Any] = field(repr=False)
    x64: bool = False
    key_name: str | None = None

    def __post_init__(self):
        if set(self.scales) != set(SCALES):
            raise ValueError(
                f"Simulation {self.name!r}: scales must define exactly {SCALES}, "
                f"got {tuple(self.scales)}."
            )
        for scale, setting in self.scales.items():
            try:
                hash(setting)
            except TypeError as error:
                raise TypeError(
                    f"Simulation {self.name!r}: the {scale} setting must be hashable "
                    "(a frozen dataclass or NamedTuple)."
                ) from error

    @property
    def key(self) -> str:
        return self.key_name or self.name

    def setting(self, scale: str) -> Any:
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}.")
        return self.scales[scale]


class Counterexample:
    """What a refuted printed statement's measurement must look like.

    A subclass implements :meth:`matches` (``(bool, why)``) and :meth:`describe`. An
    ``expect="refuted"`` claim is *as expected* only when its result is refuted **and**
    matches, so an error in the printed-side formula in either direction changes the
    outcome.
    """

    def matches(self, result: ClaimResult) -> tuple[bool, str]:  # pragma: no cover
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class ViolationFraction(Counterexample):
    """Between ``between[0]`` and ``between[1]`` of the instances violate the statement, the
    worst by at least ``min_violation`` (and at most ``max_violation``, when given).

    Violations are measured on the margins (``relative=False``) or the relative margins.
    """

    between: tuple[float, float]
    min_violation: float
    max_violation: float = math.inf
    relative: bool = False

    def __post_init__(self):
        lo, hi = self.between
        if not 0 < lo <= hi <= 1:
            raise ValueError(f"ViolationFraction: need 0 < lo <= hi <= 1, got {self.between}.")
        if not 0 <= self.min_violation <= self.max_violation:
            raise ValueError("ViolationFraction: need 0 <= min_violation <= max_violation.")

    def matches(self, result: ClaimResult) -> tuple[bool, str]:
        margins = result.relative_margins if self.relative else result.margins
        fraction = float((margins < 0).mean()) if margins.size else 0.0
        worst = float(-margins.min()) if margins.size else 0.0
        lo, hi = self.between
        ok = lo <= fraction <= hi and self.min_violation <= worst <= self.max_violation
        return ok, f"{fraction:.1%} of instances violate, the worst by {worst:.3g}"

    def describe(self) -> str:
        top = "" if self.max_violation == math.inf else f" and at most {self.max_violation:.3g}"
        what = "relative violation" if self.relative else "violation"
        return (
            f"{self.between[0]:.0%}–{self.between[1]:.0%} of instances violate, worst "
            f"{what} at least {self.min_violation:.3g}{top}"
        )


@dataclass(frozen=True)
class EstimateIn(Counterexample):
    """The estimate's confidence interval lies inside ``region`` (e.g. a decay exponent
    that is clearly another one than the statement's).

    For a result joined by :func:`~ntsim.claims.all_of`, ``part`` names which part
    (its position among the joined results) carries the estimate; it may be left out
    when exactly one part is an estimate.
    """

    region: Interval
    why: str = ""
    part: int | None = None

    def _estimate(self, result: ClaimResult) -> ClaimResult | None:
        if self.part is not None:
            if not 0 <= self.part < len(result.parts):
                return None
            return result.parts[self.part]
        if result.interval is not None:
            return result
        estimates = [p for p in result.parts if p.interval is not None]
        return estimates[0] if len(estimates) == 1 else None

    def matches(self, result: ClaimResult) -> tuple[bool, str]:
        estimate = self._estimate(result)
        if estimate is None or estimate.interval is None:
            where = "" if self.part is None else f" (part {self.part})"
            return False, f"the result carries no single confidence interval{where}"
        lo, hi = estimate.interval
        ok = self.region.lo <= lo and hi <= self.region.hi
        return ok, f"estimate {estimate.measured[0]:.4g}, CI [{lo:.4g}, {hi:.4g}]"

    def describe(self) -> str:
        return f"the estimate's CI lies {self.region.describe()}" + (
            f" ({self.why})" if self.why else ""
        )


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper (contract v2; module doc).

    Attributes:
      id: ``<topic>.<result>.<aspect>``, e.g. ``linear_teachers.thm4_1.closed_form``.
      paper: reference, e.g. ``"Shachaf et al. 2021, Thm 4.1, eq. (1)"``.
      statement: one line in words and symbols (for a derived reading, say what it adds).
      kind: identity | bound | rate | trend | ordering | sanity.
      reading: which reading is tested, with the quoted words.
      uses: the simulation the check reads.
      check: ``check(run) -> ClaimResult``, pure.
      expect: ``"holds"`` or ``"refuted"``.
      counterexample: required when ``expect="refuted"``.
      twin: id of the corrected statement (``expect="holds"``, same simulation), required
        when ``expect="refuted"``.
      min_instances: the runner errors when a check decides on fewer instances.
      slow_at_quick: the quick check takes long enough that CI skips it.
      experiment: the experiment that draws the same statement, if any.
    """

    id: str
    paper: str
    statement: str
    kind: Kind
    reading: Reading
    uses: Simulation
    check: Callable[[Any], ClaimResult] = field(repr=False)
    expect: Literal["holds", "refuted"] = "holds"
    counterexample: Counterexample | None = None
    twin: str | None = None
    min_instances: int = 1
    slow_at_quick: bool = False
    experiment: str | None = None

    def __post_init__(self):
        where = f"Claim {self.id!r}"
        if self.id.count(".") < 2 or not all(self.id.split(".")):
            raise ValueError(f"{where}: id must be '<topic>.<result>.<aspect>'.")
        if not (self.paper.strip() and self.statement.strip()):
            raise ValueError(f"{where}: paper and statement must not be empty.")
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}, got {self.kind!r}.")
        if not isinstance(self.reading, Reading):
            raise TypeError(f"{where}: reading must be a Reading (printed(...), derived(...)).")
        if not isinstance(self.uses, Simulation):
            raise TypeError(f"{where}: uses must be a Simulation.")
        if self.expect not in ("holds", "refuted"):
            raise ValueError(f"{where}: expect must be 'holds' or 'refuted'.")
        if self.expect == "refuted":
            if not isinstance(self.counterexample, Counterexample):
                raise ValueError(f"{where}: expect='refuted' needs a counterexample.")
            if not self.twin:
                raise ValueError(f"{where}: expect='refuted' needs its corrected twin's id.")
            if self.kind == "sanity":
                raise ValueError(f"{where}: a sanity check cannot be refuted.")
        if self.min_instances < 1:
            raise ValueError(f"{where}: min_instances must be >= 1.")

    @property
    def topic(self) -> str:
        """The paper topic (first component of the id)."""
        return self.id.split(".", 1)[0]

    @property
    def x64(self) -> bool:
        return self.uses.x64
