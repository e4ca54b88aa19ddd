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

__all__ = ["given"]


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
    if not premises:
        raise ValueError("given: name at least one premise.")
    diagnostics = dict(result.diagnostics)
    failed = []
    for name, value in premises.items():
        entries = np.asarray(value)
        if entries.dtype != bool:
            raise TypeError(f"given: premise {name!r} must be boolean, got {entries.dtype}.")
        if entries.size == 0:
            raise ValueError(f"given: premise {name!r} has no entries.")
        held = int(entries.sum())
        diagnostics[f"premise: {name}"] = f"{held} of {entries.size}"
        if held < entries.size:
            failed.append(f"{name} ({entries.size - held} of {entries.size} fail)")
    if not failed:
        return dataclasses.replace(result, diagnostics=diagnostics)
    note = "Outside the statement's hypotheses: " + "; ".join(failed) + "."
    return dataclasses.replace(
        result,
        outcome="inconclusive",
        diagnostics=diagnostics,
        notes=f"{note} {result.notes}".strip(),
    )
