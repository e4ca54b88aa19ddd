"""Claims of Fu et al. 2023 on where Thm 2.2's printed bound is provably safe.

The printed-bound claim (``stability.thm2_2.bound_printed_generic``) keeps its grid of
``μ/β`` where the guard :func:`ntsim.theory.stability.printed_bound_safe_ratio` is positive,
a sanity check that only reads the guard's sign. Here the guard is held to its derivation
from eq. (3) and the proof's certificate (:mod:`ntsim.theory.stability.printed_bound_region`):
a second route for the guard's value. (With ``R = β = 1`` eq. (3) and the proof's
``√(2LR/β)`` form give the same number, so this claim cannot tell them apart; the
Thm 2.2 claims at other ``R`` do.)
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived
from ntsim.claims._decisions import Tolerance, compare
from ntsim.theory.stability import printed_bound_region as region

__all__ = ["CLAIMS", "PRINTED_BOUND_REGION"]

PAPER = "Fu et al. 2023"

PRINTED_BOUND_REGION = Simulation(
    "stability.thm2_2.printed_bound_region",
    region.simulate_printed_bound_region,
    {"quick": region.PrintedBoundRegionSetting(points=300),
     "full": region.PrintedBoundRegionSetting()},
    x64=True,
)  # fmt: skip

# Both sides are a few float64 operations on ρ = (1 − r)^¼ ∈ [0.18, 1) and n·r·eq3 =
# √2·r·ρ/(1 − ρ) ≤ 5.7 (n cancels): round-off ≲ 1e-14 absolute; 1e-9 keeps 1e5 over that.
_ROUND_OFF = Tolerance("round-off", 1e-9, "absolute; float64, |terms| ≤ 6 (~1e-14)")


def check_printed_bound_region(run: region.PrintedBoundRegionRun):
    ratio, n = np.asarray(run.ratio), np.asarray(run.num_samples)
    rho = (1 - ratio) ** 0.25
    second_route = (1 - rho) * (n * ratio * np.asarray(run.eq3) - 1)
    margin = np.asarray(run.safe_margin)
    return compare(
        margin, second_route, relation="equal", atol=_ROUND_OFF.value, tolerance=_ROUND_OFF,
        diagnostics={"max |guard − (1 − ρ)(n r eq3 − 1)|":
                     float(np.max(np.abs(margin - second_route))),
                     "points with eq3 ≥ 1/(n r)": int((n * ratio * run.eq3 >= 1).sum())},
        notes="R = β = 1, L = βR, r = μ/β ∈ [0.01, 0.999], n ∈ {2, …, 1000}; the guard is "
        "positive exactly where eq. (3) ≥ R/(n μ/β), the certificate's bound on sup‖Δ‖.",
    )  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="stability.thm2_2.printed_bound_region",
        paper=f"{PAPER}, Thm 2.2 (eq. (3)) and the proof's certificate",
        statement="(Derived.) With R = β = 1 and L = βR, eq. (3) is at least the proof's "
        "certificate R/(n μ/β) ≥ sup_T‖w_T − w^i_T‖ exactly where √2·r·ρ − (1 − ρ) ≥ 0 "
        "(r = μ/β, ρ = (1 − r)^¼): that margin equals (1 − ρ)(n·r·eq3 − 1) for every n (it "
        "changes sign once, near μ/β = 0.968; the tests check that root on eq. (3) itself)",
        kind="identity",
        reading=derived(
            "the paper prints eq. (3) and proves a per-step certificate; the project derives "
            "where the two meet on the quadratic model (the region where the printed bound "
            "cannot fail) and tests the guard the printed-bound claim relies on against eq. (3) "
            "and the certificate directly"
        ),
        uses=PRINTED_BOUND_REGION,
        check=check_printed_bound_region,
        min_instances=100,
    ),
)
