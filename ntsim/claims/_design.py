"""A "holds" only where the run tests the statement sharply: design checks.

A run can meet every hypothesis of a statement (:mod:`ntsim.claims._premises`) and still
test it weakly: a sharp threshold "iff σ^ft > 2σ^pre" tested only on ratios far from 2
cannot tell 2 from 2.5, and a bound whose hypothesis caps a step size, tested only far
below the cap, hardly tests that the hypothesis suffices. :func:`sharply_tested` turns such
a run's "holds" into ``inconclusive``; a refutation stands (a counterexample on a valid
instance is one whatever the design), unlike a failed premise, which leaves the instance
outside the statement.

(Kept apart from :mod:`ntsim.claims._premises`, which is on the path of most claims: a
change here re-dates only the records of the claims that use design checks.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ntsim.claims._decisions import ClaimResult

__all__ = ["sharply_tested"]


def sharply_tested(result: ClaimResult, checks: Mapping[str, object]) -> ClaimResult:
    """``result``, made ``inconclusive`` where a design check fails and it holds (module doc).

    Args:
      result: the decided conclusion.
      checks: name → boolean array (or scalar) measured on the run; a check passes when
        every entry is true.

    Returns:
      ``result`` with the checks in its diagnostics (``"design: <name>"`` → how many entries
      pass, of how many) and, when one fails, a note naming it; a "holds" becomes
      ``"inconclusive"``, any other outcome stands.

    Examples:
      >>> from ntsim.claims import compare
      >>> import numpy as np
      >>> near = {"a ratio within 25% of 2 on each side": np.array(False)}
      >>> sharply_tested(compare(np.array([0.5]), 1.0, relation="upper_bound"), near).outcome
      'inconclusive'
      >>> sharply_tested(compare(np.array([1.5]), 1.0, relation="upper_bound"), near).outcome
      'refuted'
    """
    if not checks:
        raise ValueError("sharply_tested: name at least one design check.")
    diagnostics = dict(result.diagnostics)
    failed = []
    for name, value in checks.items():
        entries = np.asarray(value)
        if entries.dtype != bool:
            raise TypeError(f"sharply_tested: check {name!r} must be boolean, got {entries.dtype}.")
        if entries.size == 0:
            raise ValueError(f"sharply_tested: check {name!r} has no entries.")
        passed = int(entries.sum())
        diagnostics[f"design: {name}"] = f"{passed} of {entries.size}"
        if passed < entries.size:
            failed.append(f"{name} ({entries.size - passed} of {entries.size} fail)")
    if not failed:
        return dataclasses.replace(result, diagnostics=diagnostics)
    if result.outcome != "holds":
        note = "Design check failed (" + "; ".join(failed) + f"); the {result.outcome} stands."
    else:
        note = "The run cannot test the statement sharply here: " + "; ".join(failed) + "."
    outcome = "inconclusive" if result.outcome == "holds" else result.outcome
    return dataclasses.replace(
        result, outcome=outcome, diagnostics=diagnostics, notes=f"{note} {result.notes}".strip()
    )
