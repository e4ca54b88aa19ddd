"""Negative controls: for each claim of kind bound or identity, a bug it must notice.

A negative control is a perturbed variant of a claim whose verdict must flip. Here it is
a mutant from the committed kill matrix (``figures/MUTATION.json``) that the claim killed
when the matrix was made: :func:`controls_from_matrix` picks, per claim, the recorded
mutant of the function nearest the claim's own formula (the fewest other claims on its
path), so a control names a concrete bug (``fixed_point_printed:346 scale_x2: … → …``)
rather than a hand-written monkeypatch. :func:`run_control` replays it through a
:class:`~ntsim.mutation.ClaimServer` and says whether the claim still notices it. A claim
of those kinds with no recorded kill has no control, and the matrix lists it as silent.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable
from dataclasses import dataclass

from ntsim import _io
from ntsim.mutation._matrix import ClaimServer, classify

__all__ = ["CONTROL_KINDS", "NegativeControl", "controls_from_matrix", "run_control"]

#: Claim kinds that must have a negative control (a bound or an identity can be broken).
CONTROL_KINDS: tuple[str, ...] = ("bound", "identity")


@dataclass(frozen=True)
class NegativeControl:
    """A recorded mutant that ``claim`` killed: replaying it must change its outcome."""

    claim: str
    module: str
    function: str
    operator: str
    index: int
    before: str
    after: str
    line: int

    @classmethod
    def from_outcome(cls, claim: str, outcome: dict) -> NegativeControl:
        """The control of ``claim`` from a recorded mutant (an entry of ``outcomes``)."""
        fields = ("module", "function", "operator", "index", "before", "after", "line")
        return cls(claim=claim, **{name: outcome[name] for name in fields})

    def describe(self) -> str:
        return f"{self.claim}: {self.function}:{self.line} {self.operator}: {self.before} → " + (
            self.after
        )

    def spec(self, *, scale: str = "quick", seed: int = 0) -> dict:
        """The worker spec that runs this mutant on this claim."""
        return {
            "module": self.module,
            "function": self.function,
            "index": self.index,
            "operator": self.operator,
            "before": self.before,
            "claims": [self.claim],
            "scale": scale,
            "seed": seed,
        }


def controls_from_matrix(
    path: pathlib.Path, kinds: Iterable[str] = CONTROL_KINDS
) -> dict[str, NegativeControl]:
    """One control per claim of ``kinds`` that killed some mutant in the matrix at ``path``.

    Among the mutants a claim killed, the one run on the fewest claims is chosen (the bug
    closest to the claim's own formula), ties broken by module, function and site.
    """
    kinds = set(kinds)
    matrix = _io.read_json(pathlib.Path(path))["topics"]
    controls: dict[str, NegativeControl] = {}
    ranks: dict[str, tuple] = {}
    for entry in matrix.values():
        for outcome in entry["outcomes"]:
            if outcome["status"] != "killed":
                continue
            for claim in outcome["claims_killed"]:
                if entry["claims"].get(claim, {}).get("kind") not in kinds:
                    continue
                if claim in outcome.get("claims_errored", []):
                    continue  # a crash is not a verdict a reader would see flip
                rank = (
                    len(outcome["claims_run"]),
                    outcome["module"],
                    outcome["function"],
                    outcome["index"],
                )
                if claim not in ranks or rank < ranks[claim]:
                    ranks[claim] = rank
                    controls[claim] = NegativeControl.from_outcome(claim, outcome)
    return dict(sorted(controls.items()))


def run_control(
    control: NegativeControl,
    server: ClaimServer,
    *,
    baseline: dict | None = None,
    scale: str = "quick",
    seed: int = 0,
    timeout: float = 600.0,
) -> tuple[bool, str]:
    """Replay ``control``; ``(noticed, why)``. ``baseline`` (the unmutated claim's summary,
    from :func:`~ntsim.mutation.run_baseline`) is computed when not given."""
    if baseline is None:
        answer = server.ask({"claims": [control.claim], "scale": scale, "seed": seed}, timeout)
        baseline = answer["claims"]
    answer = server.ask(control.spec(scale=scale, seed=seed), timeout)
    if answer.get("apply_error"):
        return False, f"the mutant no longer applies: {answer['apply_error']}"
    if answer.get("timeout") or answer.get("crash"):
        return True, "the claim hung or crashed"
    killed, changed, _ = classify(baseline, answer["claims"])
    if killed:
        mutant = answer["claims"][control.claim]
        return True, f"verdict {baseline[control.claim]['verdict']} → {mutant['verdict']}"
    return False, "numbers moved, verdict did not" if changed else "nothing moved"
