"""Claims on early stopping ↔ kernel ridge regression (Sun & Raskutti 2026, Sec 6.2, eq. (27)).

The per-eigenvalue shrinkages of ``τ`` GD steps and of ridge ``λ`` are compared on random
spectra and step counts (:func:`ntsim.theory.early_stopping.simulate_shrinkage_sandwich`),
with ``λ = 1/η_τ`` (corrected) and ``λ = η_τ`` (printed) on the same draws.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, ViolationFraction, derived, printed
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.claims._premises import given
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS", "SANDWICH"]

_PAPER = "Sun & Raskutti 2026"
_EXPERIMENT = "early_stopping/ridge_shrinkage_sandwich"

SANDWICH = Simulation(
    "early_stopping.sec6_2.sandwich",
    es.simulate_shrinkage_sandwich,
    es.SANDWICH_SETTINGS,
    x64=True,
)
# s_KRR ≤ s_GD ≤ 2 s_KRR holds exactly; margins are differences of numbers ≤ 1 computed with
# expm1/log1p, so round-off is ~1e-16; 1e-13 absorbs it and nothing else.
ROUND_OFF = Tolerance("round-off", 1e-13, "float64 differences of shrinkages in [0, 1]")

#: With λ = η_τ the ridge shrinkage λ̂/(λ̂ + η_τ) → 0 as η_τ grows while s_GD → 1, so
#: 2 s_KRR − s_GD → −1 for large τ: every instance (τ up to 1e6) violates, by nearly 1 and
#: never by more than 1 (both shrinkages lie in [0, 1]).
PRINTED_RIDGE_MISSES = ViolationFraction(
    between=(0.95, 1.0), min_violation=0.5, max_violation=1.0 + ROUND_OFF.value
)


def _check(margins, ratios):
    margins, ratios = np.asarray(margins), np.asarray(ratios)
    return compare(
        margins,
        0.0,
        relation="lower_bound",
        atol=ROUND_OFF.value,
        tolerance=ROUND_OFF,
        diagnostics={
            "s_GD/s_KRR range": [float(ratios[:, 0].min()), float(ratios[:, 1].max())],
            "violating instances": int(np.sum(margins < -ROUND_OFF.value)),
        },
        notes="min over (λ̂, τ) of min(s_GD − s_KRR, 2s_KRR − s_GD) per instance (≥ 0 holds; "
        "the sandwich needs s_GD/s_KRR in [1, 2]); λ̂ log-uniform on [1e-6, 1], α ~ U[0.1, "
        "1]/λ̂_max, τ log-uniform on [1, 1e6].",
    )


#: The anchor instance λ̂ ∈ {1/2, 1/4}, α = 1, τ ∈ {2, 6}, by hand: s_GD = 1 − (1 − λ̂)^τ and
#: s_KRR(1/η_τ) = λ̂τ/(λ̂τ + 1) are (3/4, 63/64) and (1/2, 3/4) at λ̂ = 1/2, (7/16,
#: 3367/4096) and (1/3, 3/5) at λ̂ = 1/4. So s_GD − s_KRR = (1/4, 15/64, 5/48, 4547/20480),
#: smallest 5/48; 2s_KRR − s_GD = (1/4, 33/64, 11/48, 7741/20480), smallest 11/48;
#: s_GD/s_KRR = (3/2, 21/16, 21/16, 16835/12288), in [21/16, 3/2]; αλ̂_max = 1/2.
ANCHOR_SIDES = (5 / 48, 11 / 48, 21 / 16, 3 / 2, 1 / 2)


def _step_premise(run: es.SandwichMargins) -> dict:
    """The sandwich's hypothesis αλ̂ ≤ 1, measured on each instance (round-off allowed)."""
    product = np.asarray(run.step_times_lambda_max)
    return {"αλ̂_max ≤ 1": product <= 1 + ROUND_OFF.value}


def check_ridge_sandwich_corrected(run: es.SandwichMargins):
    """s_KRR(1/η_τ) ≤ s_GD(τ) ≤ 2 s_KRR(1/η_τ) for every eigenvalue and step count.

    Anchor: the random instances' margin is the smaller of the two sides, so a slack on one
    side (the lower one, say) would hide behind the other. On the hand instance
    λ̂ ∈ {1/2, 1/4}, α = 1, τ ∈ {2, 6} (:data:`ANCHOR_SIDES`) the run's two sides, ratio
    range and αλ̂_max, computed by the same code as the instances, must equal their closed
    forms to round-off, each side separately. Premise: αλ̂_max ≤ 1 on every instance.
    """
    anchor = np.asarray(run.anchor)
    conclusion = all_of(
        _check(run.corrected, run.corrected_ratio),
        compare(
            anchor,
            ANCHOR_SIDES,
            relation="equal",
            atol=ROUND_OFF.value,
            tolerance=ROUND_OFF,
            num_instances=1,
        ),  # fmt: skip
        diagnostics={"anchor: lower side, upper side, min and max of s_GD/s_KRR, αλ̂_max": anchor},
        notes="The sandwich on the random instances (first part), and both of its sides, the "
        "ratio range and αλ̂_max on the hand instance λ̂ ∈ {1/2, 1/4}, α = 1, τ ∈ {2, 6}, "
        "against 5/48, 11/48, 21/16, 3/2 and 1/2 (second part).",
    )
    return given(conclusion, _step_premise(run))


def check_ridge_sandwich_printed(run: es.SandwichMargins):
    """The same sandwich with the paper's literal λ = η_τ (refuted), on instances with
    αλ̂_max ≤ 1."""
    return given(_check(run.printed, run.printed_ratio), _step_premise(run))


CLAIMS = (
    Claim(
        id="early_stopping.sec6_2.ridge_sandwich_corrected",
        paper=f"{_PAPER}, Sec 6.2, eq. (27) with λ = 1/η_τ; Raskutti et al. 2014",
        statement="With αλ̂ ≤ 1: λ̂/(λ̂ + 1/η_τ) ≤ 1 − (1 − αλ̂)^τ ≤ 2λ̂/(λ̂ + 1/η_τ), i.e. τ GD "
        "steps shrink like ridge with λ = 1/η_τ up to a factor 2 (and, on λ̂ ∈ {1/2, 1/4} "
        "with α = 1, τ ∈ {2, 6}, the two sides' smallest slacks are 5/48 and 11/48).",
        kind="bound",
        reading=derived(
            "the paper says early stopping 'can be roughly viewed as' ridge (27); the project "
            "makes the correspondence exact as a sandwich with λ = 1/η_τ (Raskutti et al. "
            "2014's correspondence)"
        ),
        uses=SANDWICH,
        check=check_ridge_sandwich_corrected,
        min_instances=200,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="early_stopping.sec6_2.ridge_sandwich_printed",
        paper=f"{_PAPER}, Sec 6.2, below eq. (27): λ = εT̂_op",
        statement="Early stopping at τ matches ridge with λ = η_τ = ετ: λ̂/(λ̂ + η_τ) ≤ "
        "1 − (1 − αλ̂)^τ ≤ 2λ̂/(λ̂ + η_τ).",
        kind="bound",
        reading=printed("“where λ = εT̂_op” (below eq. (27))"),
        uses=SANDWICH,
        check=check_ridge_sandwich_printed,
        expect="refuted",
        counterexample=PRINTED_RIDGE_MISSES,
        twin="early_stopping.sec6_2.ridge_sandwich_corrected",
        min_instances=200,
        experiment=_EXPERIMENT,
    ),
)
