"""Claim of Sun & Raskutti 2026, eq. (3) at the Gaussian init: the logits' second moment at
small widths, where the width normaliser is resolvable.

``early_stopping.lemma2.logit_scaling`` anchors the logits' scale at widths 64–1024:
at the ``N(0, 1/n)`` init of App. B.2 with ``d = n``, ``q_t·k_s`` given the embeddings
``h`` is a sum of ``n`` independent products of ``N(0, ‖h_t‖²/n)`` and ``N(0, ‖h_s‖²/n)``
variables, so ``E[S² | h] = s²‖h_t‖²‖h_s‖²/n`` exactly, at every width. At those widths a
normaliser off by one (``n − 1`` for ``n``) moves the mean ratio by at most 1.6%, below
that claim's Monte Carlo resolution. The same identity at widths 4, 8 and 16 moves it by
``1/n`` = 25%, 12.5% and 6%: this claim reads the same simulation there, with more seeds,
and decides each width on its own (at n = 4 the 95% CI half-width over 1600 seeds is about
0.03, against a shift of 0.25 for ``n ± 1``).

What it cannot see, by construction: anything upstream of ``h`` (the ratio is normalised by
the embeddings read from ``θ_0``, so a wrong embedding scale cancels), a transposed ``W^Q``
or transposed logits (square i.i.d. weights at ``d = n``, an identity symmetric in ``t, s``),
and the model's own forward pass (the logits come from :func:`attention_logits`, whose
agreement with the model's attention is a unit test's, not this claim's).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived
from ntsim.claims._decisions import all_of
from ntsim.claims.early_stopping._width_scaling import _moment
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS", "SMALL_WIDTH_LOGITS"]

_PAPER = "Sun & Raskutti 2026"

SMALL_WIDTH_LOGITS = Simulation(
    "early_stopping.init_logits_small_widths",
    es.simulate_init_logits,
    {
        "quick": es.InitLogitSetting(widths=(4, 8, 16), num_seeds=1600),
        "full": es.InitLogitSetting(widths=(4, 8, 16), num_seeds=6400),
    },
)


def check_small_width_moment(run: es.InitLogits):
    """At every width, the mean over seeds of ``S²/E[S² | h]`` has its 95% CI within
    ``1 ± MOMENT_BAND`` (the band of ``early_stopping.lemma2.logit_scaling``), under each
    scale ``s`` of eq. (3).

    With ``d = n`` the two scalings give the same ratio when the code is right (both the
    logits and the closed form carry ``s²``); they differ when one branch's scale is wrong,
    which is why both are decided.
    """
    widths = [int(w) for w in np.asarray(run.widths)]
    parts = [
        _moment(ratios[i : i + 1], f"{scaling} at n = {width}")  # one width's seeds
        for scaling, ratios in (
            ("1/d", np.asarray(run.inverse_moment)),
            ("1/sqrt(d)", np.asarray(run.inverse_sqrt_moment)),
        )
        for i, width in enumerate(widths)
    ]
    seeds = np.asarray(run.inverse_moment).shape[1]
    return all_of(
        *parts,
        notes=f"SP init, {seeds} seeds per width; parts 0–{len(widths) - 1} under 1/d and "
        f"{len(widths)}–{2 * len(widths) - 1} under 1/√d, one per width {tuple(widths)}: the "
        "mean over heads, token pairs and inputs of S²/(s²‖h_t‖²‖h_s‖²/n), decided on its 95% "
        "Student-t CI over seeds (within 1 ± 0.1).",
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="early_stopping.eq3.logit_moment_small_widths",
        paper=f"{_PAPER}, eq. (3) and App. B.2 (the init), at widths 4–16",
        statement="At the N(0, 1/n) init with d = n, the logits of eq. (3) have E[S² | h] = "
        "s²‖h_t‖²‖h_s‖²/n at each of the widths 4, 8 and 16 (each width's mean ratio, CI "
        "within 1 ± 0.1, under both scales s = 1/d and 1/√d)",
        kind="identity",
        reading=derived(
            "eq. (3) fixes the logits' scale s and App. B.2 the init; the project derives the "
            "conditional second moment, exact at every width, and tests it where a normaliser "
            "off by one would show"
        ),
        uses=SMALL_WIDTH_LOGITS,
        check=check_small_width_moment,
        min_instances=1600,
    ),
)
