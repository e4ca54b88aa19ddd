"""A verdict only on instances the statement is about: the premises a check verifies.

A theorem says "if the hypotheses hold, then …". A check that measures the conclusion on a
simulated instance decides the statement only if the instance satisfies the hypotheses:
a spectrum that is not misaligned, a step size above the stability limit, a sample where
only one side of an "iff" occurs tell nothing about the statement, however the conclusion
comes out. :func:`given` makes that explicit: each premise is measured *on the instance*
(from what the simulation returns, never from the setting's parameters), and a result on
an instance that fails a premise is ``inconclusive`` — neither a confirmation nor a
counterexample.

Premises are also what makes a claim notice a broken instance generator: a simulation
that silently stopped drawing misaligned spectra leaves a "holds" that means nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ntsim.claims._decisions import ClaimResult

__all__ = ["given", "sharply_tested"]


def _failed(caller: str, label: str, checks: Mapping[str, object], diagnostics: dict) -> list:
    """The failed entries of ``checks`` (name → boolean array), each recorded in
    ``diagnostics`` as ``"<label>: <name>"`` → how many entries hold, of how many."""
    if not checks:
        raise ValueError(f"{caller}: name at least one {label} check.")
    failed = []
    for name, value in checks.items():
        entries = np.asarray(value)
        if entries.dtype != bool:
            raise TypeError(f"{caller}: {label} {name!r} must be boolean, got {entries.dtype}.")
        if entries.size == 0:
            raise ValueError(f"{caller}: {label} {name!r} has no entries.")
        held = int(entries.sum())
        diagnostics[f"{label}: {name}"] = f"{held} of {entries.size}"
        if held < entries.size:
            failed.append(f"{name} ({entries.size - held} of {entries.size} fail)")
    return failed


def given(result: ClaimResult, premises: Mapping[str, object]) -> ClaimResult:
    """``result``, made ``inconclusive`` where some premise fails.

    Args:
      result: the decided conclusion (any :class:`~ntsim.claims.ClaimResult`).
      premises: name → boolean array (or scalar), one entry per instance or one for the
        whole run; each must be measured on the simulated instances. A premise holds when
        every entry is true.

    Returns:
      ``result`` with the premises in its diagnostics (``"premise: <name>"`` → how many
      entries hold, of how many) and, when one fails, outcome ``"inconclusive"`` and a note
      naming it. A refutation on an instance outside the hypotheses is no counterexample,
      so a failed premise overrides ``"refuted"`` too.

    Examples:
      >>> from ntsim.claims import compare
      >>> import numpy as np
      >>> conclusion = compare(np.array([0.5, 0.9]), 1.0, relation="upper_bound")
      >>> given(conclusion, {"step below 2/L": np.array([True, True])}).outcome
      'holds'
      >>> given(conclusion, {"step below 2/L": np.array([True, False])}).outcome
      'inconclusive'
    """
    diagnostics = dict(result.diagnostics)
    failed = _failed("given", "premise", premises, diagnostics)
    if not failed:
        return dataclasses.replace(result, diagnostics=diagnostics)
    note = "Outside the statement's hypotheses: " + "; ".join(failed) + "."
    return dataclasses.replace(
        result,
        outcome="inconclusive",
        diagnostics=diagnostics,
        notes=f"{note} {result.notes}".strip(),
    )


def sharply_tested(result: ClaimResult, checks: Mapping[str, object]) -> ClaimResult:
    """``result``, made ``inconclusive`` where the run cannot test the statement sharply: a
    check of the *design*, not of the statement's hypotheses.

    A run can satisfy every hypothesis and still test a statement weakly: a sharp threshold
    "iff σ^ft > 2σ^pre" tested only on ratios far from 2 cannot tell 2 from 2.5, and a bound
    whose hypothesis caps a step size, tested only far below the cap, tests a weaker
    statement. Such a run's "holds" means little, so it becomes ``inconclusive``; a
    ``"refuted"`` stands (a counterexample is one whatever the design) — unlike
    :func:`given`, whose failed premise leaves the instance outside the statement.

    Args:
      result: the decided conclusion.
      checks: name → boolean array (or scalar) measured on the run, like :func:`given`'s.

    Examples:
      >>> from ntsim.claims import compare
      >>> import numpy as np
      >>> near = {"a ratio within 25% of 2 on each side": np.array(False)}
      >>> sharply_tested(compare(np.array([0.5]), 1.0, relation="upper_bound"), near).outcome
      'inconclusive'
      >>> sharply_tested(compare(np.array([1.5]), 1.0, relation="upper_bound"), near).outcome
      'refuted'
    """
    diagnostics = dict(result.diagnostics)
    failed = _failed("sharply_tested", "design", checks, diagnostics)
    if not failed:
        return dataclasses.replace(result, diagnostics=diagnostics)
    if result.outcome != "holds":
        note = "Design check failed (" + "; ".join(failed) + f"); the {result.outcome} stands."
        return dataclasses.replace(
            result, diagnostics=diagnostics, notes=f"{note} {result.notes}".strip()
        )
    note = "The run cannot test the statement sharply here: " + "; ".join(failed) + "."
    return dataclasses.replace(
        result,
        outcome="inconclusive",
        diagnostics=diagnostics,
        notes=f"{note} {result.notes}".strip(),
    )
