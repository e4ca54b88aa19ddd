"""Thm A.24's increment bound read as its proof builds it (Springer et al. 2025, App A.4).

The proof of Thm A.24 bounds ``Δ_pre(n) − Δ_pre(n−1)`` in two steps: the converged model
``U(Σ^ft + λΣ^pre)/(1 + λ)Vᵀ`` has, in closed form, ``L_pre − L_pre(UΣ^preVᵀ) = Σ_(i≤n)
((σ^ft_i − σ^pre_i)/(1 + λ))²``, so the closed-form increment is ``(σ^ft_n − σ^pre_n)²/(1 +
λ)²``; Lemmas A.22 and A.23 then allow ``Δ_pre`` to sit within ``3 min_(i≤n)|σ^pre_i −
σ^ft_i|²/(10(λ0 + 1)²)`` of it at ``n`` and at ``n − 1``, and the bound subtracts both
allowances. So the bound plus ``3 min/(5(λ0 + 1)²)`` *is* the closed-form increment, for any
``λ0``: an identity that pins both of the bound's terms, where the bound itself (never
attained: on converged ideal-checkpoint runs it is ≥ 2/5 of the increment and equals 2/5 at
a mode whose gap is the smallest so far) only notices a bound that is too large.

The claim reads the sensitivity run of ``overtraining.thm4_6.progressive_sensitivity``: the
closed form from :func:`~ntsim.theory.overtraining.post_finetuning_losses` at
:func:`~ntsim.theory.overtraining.fixed_point` (a route that does not read the bound), and the
run's GD increments, which must have converged to it (the proof's ``K`` steps).
"""

from __future__ import annotations

import jax
import numpy as np

from ntsim.claims._contract import Claim, proof
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.claims._premises import given
from ntsim.claims.overtraining._post_finetuning import (
    EXACT_ZERO,
    SENSITIVITY,
    _gamma2,
    _loss_before_finetuning,
    _sensitivity_premises,
)
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

PAPER = "Springer et al. 2025"

#: The run's GD increments against the converged closed form, relative to Γ².
CONVERGED = Tolerance(
    "chosen", 1e-6,
    "|GD increment − (σ^ft_n − σ^pre_n)²/(1 + λ)²|/Γ² after the run's K steps",
    observed="≤ 3.2e-9 (quick, 64 instances, K = 400) and ≤ 1.4e-15 (full-size, 24 "
    "instances) when chosen",
)  # fmt: skip


def check_bound_composes(run: ot.SensitivityRun):
    """Thm A.24's bound + ``3 min_(i≤n)|σ^pre_i − σ^ft_i|²/(5(λ0 + 1)²)`` = the closed-form
    increment ``(σ^ft_n − σ^pre_n)²/(1 + λ)²``, at ``λ0 = λ`` and at a larger ``λ0``; and the
    run's converged GD increments equal that closed form."""
    pre, ft, reg, eta, delta = (np.asarray(v) for v in run[:5])
    scale = _gamma2(pre, ft)
    initial = _loss_before_finetuning(pre)
    losses = np.asarray(jax.vmap(
        lambda p, f, r: ot.post_finetuning_losses(ot.fixed_point(p, f, r), p, f)[0]
    )(pre, ft, reg))  # fmt: skip
    closed = np.diff(losses - initial, axis=1)  # (instances, d): the converged increments
    smallest = np.minimum.accumulate((pre - ft) ** 2, axis=1)
    residuals = []
    for reg0 in (reg, 1.5 * reg + 0.1):  # the identity holds for every λ0 (A.21: λ < λ0)
        bound = np.asarray(jax.vmap(ot.a24_increment_bound)(pre, ft, reg, reg0))
        allowance = 3 * smallest / (5 * (reg0[:, None] + 1) ** 2)
        residuals.append(np.abs(bound + allowance - closed) / scale)
    gd = np.abs(np.diff(delta, axis=1) - closed) / scale
    count = pre.shape[0]
    conclusion = all_of(
        *(compare(r, EXACT_ZERO.value, relation="upper_bound", tolerance=EXACT_ZERO,
                  num_instances=count) for r in residuals),
        compare(gd, CONVERGED.value, relation="upper_bound", tolerance=CONVERGED,
                num_instances=count),
        diagnostics={"max |bound + allowance − closed form|/Γ², λ0 = λ": residuals[0].max(),
                     "the same, λ0 = 1.5λ + 0.1": residuals[1].max(),
                     "max |GD increment − closed form|/Γ²": gd.max(),
                     "min bound/closed form (λ0 = λ)": float(np.min(
                         np.asarray(jax.vmap(ot.a24_increment_bound)(pre, ft, reg, reg))
                         / closed))},
        notes="parts 0–1: a24_increment_bound + 3·cummin|σ^pre − σ^ft|²/(5(λ0 + 1)²) against "
        "the increments of post_finetuning_losses at the fixed point (σ^ft + λσ^pre)/(1 + λ), "
        "relative to Γ², at λ0 = λ and 1.5λ + 0.1; part 2: the run's GD increments against "
        "the same closed form (the converged model the proof compares with).",
    )  # fmt: skip
    return given(conclusion, _sensitivity_premises(pre, ft, reg, eta))


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.thm_a24.bound_composes",
        paper=f"{PAPER}, proof of Thm A.24",
        statement="Thm A.24's increment bound equals the converged closed-form increment "
        "(σ^ft_n − σ^pre_n)²/(1 + λ)² minus the proof's allowance 3min_(i≤n)|σ^pre_i − "
        "σ^ft_i|²/(5(λ0 + 1)²), for any λ0; and the GD run's increments have converged to "
        "that closed form",
        kind="identity",
        reading=proof(
            "“L_pre(U(Σ^ft + λΣ^pre)/(1+λ)Vᵀ) − L_pre(UΣ^preVᵀ) = Σ_(i=1..n)((Σ^ft_ii − "
            "Σ^pre_ii)/(1+λ))²” and “Δ_n − Δ_(n−1) ≥ (Σ^pre_nn − Σ^ft_nn)²/(1+λ)² − "
            "3min_(i≤n){|Σ^pre_ii − Σ^ft_ii|²}/(5(λ0+1)²)”: the bound is the closed form less "
            "the two allowances of the proof's “tight bound” (at n and n − 1); the proof's "
            "slips (it cites 1/100 and 1/50 for Lemmas A.22–A.23's 1/1000 and 1/500, and uses "
            "min_(i≤n) for n − 1) do not touch this identity"
        ),
        uses=SENSITIVITY,
        check=check_bound_composes,
        min_instances=64,
    ),
)
