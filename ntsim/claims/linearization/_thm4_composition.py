"""Thm 4's simplified bound read as its proof builds it from Thm 3 (Rahimi Afzal et al. 2025).

The slides derive Thm 4's ``λ ≥ λ_o`` bound in one line: "Based on Theorem 3, ``Δ(t) ≤
b(t + e^{−λt}/λ − 1/λ)``; when ``λ ≥ λ_o``, ``Δ(t)`` grows linearly, with coefficient
``2Lip(f)r_0(2rLip(∇f) + Lip(f))``". Two steps make that true: ``t + (e^{−λt} − 1)/λ ≤ t``,
and ``b = 2Lip(f)²r_0((4/λ)Lip(∇f)r_0 + 1)`` decreases in ``λ``, so for ``λ ≥ λ_o =
2r_0Lip(f)/r`` it is at most its value at ``λ_o``, which is the printed coefficient exactly
(``(4/λ_o)Lip(∇f)r_0 = 2rLip(∇f)/Lip(f)``).

The claim tests both on the constants the Thm 3 runs measure (``linearization.thm3.bound``'s
simulation: path maxima of ``‖J‖`` and of ``‖J_t − J_0‖/‖θ_t − θ_0‖``, ``r_0``, the run's
``λ``), at the radii ``r = m·2r_0Lip(f)/λ`` for ``m = 1, 2, 4`` (``λ = λ_o, 2λ_o, 4λ_o``):
the coefficient against Thm 3's ``b`` at ``λ_o`` (an identity between three printed
formulas: Thm 3's ``b``, Thm 4's ``λ_o`` and Thm 4's simplified bound), and Thm 3's bound at
the run's ``λ`` and times against the simplified bound (an exact inequality), and their ratio
against ``(b(λ)/b(λ_o))·h(λt)``, ``h(z) = 1 − (1 − e^{−z})/z``, written out here (so a Thm 3
bound with a dropped or scaled term is noticed too). A simplified bound with a term scaled,
or a ``λ_o`` or ``b`` that no longer compose, breaks the first.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, derived
from ntsim.claims._decisions import all_of, compare
from ntsim.claims.linearization._common import PAPER, ROUND_OFF, ROUND_OFF_BOUND
from ntsim.claims.linearization._gap import GAP
from ntsim.theory import linearization as lz

__all__ = ["CLAIMS"]

#: Multiples of the smallest radius with ``λ ≥ λ_o`` (``λ/λ_o`` = each multiple).
RADIUS_MULTIPLES = (1.0, 2.0, 4.0)


def check_simplified_bound_composes(run: lz.GapRun):
    """Thm 4: ``2Lr_0(2rL_∇ + L) = b(λ_o)`` and ``b(λ)(t − (1 − e^{−λt})/λ) ≤ 2Lr_0(2rL_∇ +
    L)t`` for ``λ ≥ λ_o = 2r_0L/r``."""
    lam, r0, lip = (np.asarray(v)[:, None] for v in (run.lam, run.r0, run.lip))
    lip_grad, times = np.asarray(run.lip_grad)[:, None], np.asarray(run.times)  # times: (I, T)
    multiples = np.asarray(RADIUS_MULTIPLES)
    radius = multiples * 2 * r0 * lip / lam  # (instances, multiples): λ = multiple·λ_o
    coefficient = np.asarray(lz.thm4_simplified_bound(lip, lip_grad, r0, radius, 1.0))
    lambda_o = np.asarray(lz.thm4_lambda_o(r0, lip, radius))
    at_lambda_o = np.asarray(lz.thm3_b(lip, lip_grad, r0, lambda_o))
    identity = np.abs(coefficient / at_lambda_o - 1)
    thm3 = np.asarray(lz.thm3_bound(lip, lip_grad, r0, lam, times))[:, None, 1:]
    simplified = coefficient[..., None] * times[:, None, 1:]  # (instances, multiples, T − 1)
    ratio = thm3 / simplified
    # the same ratio by hand: (b(λ)/b(λ_o))·h(λt), h(z) = 1 − (1 − e^{−z})/z = (z + e^{−z} − 1)/z
    z = lam[..., None] * times[:, None, 1:]
    by_hand = ((4 * lip_grad * r0 / lam + 1) / (4 * lip_grad * r0 / lambda_o + 1))[..., None] * (
        (z + np.expm1(-z)) / z
    )
    route_error = np.abs(ratio / by_hand - 1).max(axis=(1, 2))
    return all_of(
        compare(identity.max(axis=1), ROUND_OFF.value, relation="upper_bound",
                tolerance=ROUND_OFF),
        compare(ratio.max(axis=(1, 2)), 1.0, relation="upper_bound",
                atol=ROUND_OFF_BOUND.value, tolerance=ROUND_OFF_BOUND),
        compare(route_error, ROUND_OFF_BOUND.value, relation="upper_bound",
                tolerance=ROUND_OFF_BOUND),
        diagnostics={"max |2Lr0(2rL_∇ + L)/b(λ_o) − 1|": identity.max(),
                     "λ_o/λ at the radii (checks the grid)": (lambda_o / lam).max(axis=0),
                     "max Thm 3 bound / simplified bound": ratio.max(),
                     "max |ratio/((b(λ)/b(λ_o))h(λt)) − 1|": route_error.max(),
                     "min Thm 3 bound / simplified bound at t_max": float(
                         (thm3[..., -1] / simplified[..., -1]).min())},
        notes="part 0: thm4_simplified_bound at t = 1 against thm3_b at λ_o = thm4_lambda_o(r0, "
        "L, r), relative; part 1: thm3_bound at the run's λ and recorded times against the "
        "simplified bound, max ratio per instance (≤ 1), and the ratio against "
        "(b(λ)/b(λ_o))·h(λt), h(z) = 1 − (1 − e^{−z})/z, by hand (part 2); r = m·2r0L/λ, "
        "m ∈ {1, 2, 4}; L, L_∇ the path maxima, r0 = ‖f_θ0(x*) − y*‖.",
    )  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="linearization.thm4.simplified_bound_composes",
        paper=f"{PAPER}, Thm 4 (its derivation from Thm 3)",
        statement="For λ ≥ λ_o = 2r0Lip(f)/r, Thm 3's bound b(t − (1 − e^{−λt})/λ) is at most "
        "2Lip(f)r0(2rLip(∇f) + Lip(f))t, whose coefficient is Thm 3's b at λ = λ_o exactly "
        "(b decreases in λ), and their ratio is (b(λ)/b(λ_o))(1 − (1 − e^{−λt})/(λt)), on the "
        "Thm 3 runs' constants at λ/λ_o = 1, 2, 4",
        kind="identity",
        reading=derived(
            "the slides print only “Based on Theorem 3, we get that Δ(t) ≤ 2Lip(f)²‖f_θ0(x*) − "
            "y*‖((4/λ)Lip(∇f)‖f_θ0(x*) − y*‖ + 1)(t + (1/λ)e^{−λt} − 1/λ). When λ ≥ λ_o, Δ(t) "
            "grows linearly, with coefficient given by Δ(t) ≤ 2Lip(f)‖y(0) − y*‖(2rLip(∇f) + "
            "Lip(f))t”; the two steps (b decreases in λ; t − (1 − e^{−λt})/λ ≤ t) are the "
            "project's reconstruction. The identity holds with ‖y(0) − y*‖ as on that slide; "
            "with the statement's printed R̃(θ0) = r0² it would not"
        ),
        uses=GAP,
        check=check_simplified_bound_composes,
        min_instances=200,
    ),
)
