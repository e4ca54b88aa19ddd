"""Claims of Shachaf, Brutzkus & Globerson 2021 (linear teachers): Thm 4.1 and Figure 1.

The simulations are public functions of :mod:`ntsim.theory.linear_teachers`, run in float64:
Thm 4.1 on random instances (a covariance ``Σ = V diag(λ) Vᵀ`` with Haar ``V`` and
``λ ~ U[0.2, 2]``, so the checks do not rely on isotropy; Gaussian rows ``x ~ N(0, Σ)``;
``θ_S, θ_T ~ N(0, I_d)`` independent), and Figure 1 through
:func:`~ntsim.theory.linear_teachers.simulate_covariance_alignment`, the function the
experiment ``linear_teachers/fig1_covariance_alignment`` draws.
"""

from __future__ import annotations

import math

import numpy as np

from ntsim.claims._contract import Claim as V2Claim
from ntsim.claims._contract import Simulation, derived, figure, printed
from ntsim.claims._decisions import AtMost, Interval, Tolerance, all_of, estimate_in
from ntsim.claims._decisions import compare as compare_v2
from ntsim.claims._premises import given
from ntsim.claims.linear_teachers._monte_carlo import z_within
from ntsim.theory import linear_teachers as lt

__all__ = ["CLAIMS"]

_PAPER = "Shachaf et al. 2021"
_EXPERIMENT = "linear_teachers/fig1_covariance_alignment"

# Thm 4.1: simulations of ntsim.theory.
CLOSED_FORM = Simulation(
    "linear_teachers.thm4_1.closed_form",
    lt.simulate_thm4_1_closed_form,
    {
        "quick": lt.Thm41Setting(d=40, n_values=(1, 10, 20, 30, 39), draws_per_n=45),
        "full": lt.Thm41Setting(d=200, n_values=(1, 50, 100, 150, 199), draws_per_n=45),
    },
    x64=True,
)
# GD: n well below d keeps λ_min⁺(XᵀX)/λ_max(XᵀX) away from 0 (≈ ((√d−√n)/(√d+√n))² for
# isotropic X), so the contraction 1 − 1.8·λ_min⁺/λ_max reaches round-off in a few hundred steps.
GD = Simulation(
    "linear_teachers.thm4_1.gd_converges",
    lt.simulate_thm4_1_gd,
    {
        "quick": lt.Thm41Setting(
            d=60, n_values=(8,), draws_per_n=200, gd_steps=600, gd_record_every=50
        ),
        "full": lt.Thm41Setting(
            d=200, n_values=(25,), draws_per_n=200, gd_steps=1500, gd_record_every=100
        ),
    },  # fmt: skip
    x64=True,
)
MONTE_CARLO = Simulation(
    "linear_teachers.thm4_1.risk_monte_carlo",
    lt.simulate_thm4_1_monte_carlo,
    {
        "quick": lt.Thm41Setting(
            d=30, n_values=(1, 5, 15, 25, 29), draws_per_n=40, mc_samples=20_000
        ),
        "full": lt.Thm41Setting(
            d=100, n_values=(1, 10, 50, 90, 99), draws_per_n=40, mc_samples=50_000
        ),
    },  # fmt: skip
    x64=True,
)

# Two independent routes (QR projectors vs SVD pseudo-inverse) differ by ~eps·cond(X) ≤ 1e-12.
_TOL_CLOSED_FORM = Tolerance("round-off", 1e-10, "relative; ~eps·cond(X) ≤ 1e-12 in float64")
# After the contraction reaches round-off each step adds ~eps·‖w‖: a few hundred steps ~1e-13.
_TOL_GD = Tolerance("round-off", 1e-10, "relative to ‖θ_S‖ + ‖θ_T‖; ~steps·eps in float64")
# |z| ≤ 5 per instance: z ≈ N(0, 1) by the CLT (the skewness √8 of (xᵀe)² enters as
# √8/√N ≤ 0.02 at N = 20 000). A referee re-running 37 seeds found |z| = 4.38 at seed 9 under
# the former bound 4 (≈ 1.3% family-wise per seed over 200 instances). The bound is now set
# by Bonferroni over 201 z's per seed and 50 seeds at a 1% family-wise false-alarm rate:
# P(|z| > 5) = 5.7e-7 ≤ 0.01/(201·50) = 1e-6. The pooled z̄·√K must obey the same bound (a
# bias too small for one instance to see).
_Z_MAX = Tolerance(
    "monte-carlo", 5.0, "|z| of a fresh-sample mean against eq. (2), exact s.e.; Bonferroni "
    "over 201 z's × 50 seeds at 1% family-wise"
)  # fmt: skip
# ‖u‖ ≈ 10‖θ‖: γ carries round-off ~eps·cond(X)·‖u‖; measured ≤ 3e-13 relative (d = 40).
_TOL_TRANSLATION = Tolerance("round-off", 1e-9, "relative; eps·cond(X)·‖u‖/‖θ‖ with ‖u‖ ≈ 10‖θ‖")


def check_closed_form(run: lt.ClosedFormRun):
    """γ by eq. (1) (QR projectors) vs θ_S + X⁺(y − Xθ_S) (SVD pseudo-inverse)."""
    return compare_v2(
        run.relative_error, _TOL_CLOSED_FORM.value, relation="upper_bound",
        tolerance=_TOL_CLOSED_FORM, diagnostics={"max relative error": run.relative_error.max()},
    )  # fmt: skip


def check_gd_converges(run: lt.GDRun):
    """GD from θ_S → γ; iterates = closed form; P_⊥w(t) = P_⊥θ_S."""
    if np.any(np.asarray(run.first_nonfinite) >= 0):
        raise FloatingPointError("simulate_thm4_1_gd: GD diverged.")
    parts = [compare_v2(getattr(run, k), _TOL_GD.value, relation="upper_bound", tolerance=_TOL_GD)
             for k in ("limit", "iterates", "null_space")]  # fmt: skip
    return all_of(*parts, diagnostics={f"max {k}": getattr(run, k).max()
                                       for k in ("limit", "iterates", "null_space")})  # fmt: skip


def check_risk_monte_carlo(run: lt.MonteCarloRun):
    """R(γ) by eq. (2) vs a Monte Carlo estimate of E[(xᵀθ_T − xᵀγ)²] on fresh samples."""
    z = np.asarray((run.estimate - run.risk) / run.stderr)
    return z_within(
        z,
        _Z_MAX,
        num_instances=z.size,
        diagnostics={"max |z|": np.abs(z).max(), "mean z": z.mean(), "std z": z.std()},
    )


def check_translation_invariance(run: lt.ClosedFormRun):
    """R(γ) after fine-tuning is unchanged when θ_S and θ_T are shifted by the same u."""
    return compare_v2(
        run.risk_shifted, run.risk, relation="equal", rtol=_TOL_TRANSLATION.value,
        tolerance=_TOL_TRANSLATION,
        diagnostics={"max relative change": np.max(np.abs(run.risk_shifted - run.risk)
                                                   / run.risk)},
    )  # fmt: skip


# ------------------------------------------------------------------------------ Figure 1

# Figure 1 reads the simulation the experiment draws; quick keeps the paper's structure at
# d = 200 (top 10), full is the paper's d = 1000 (top 50). The Thm 4.2 bound panel is not
# needed by the claim (bound_points = 0).
FIG1 = Simulation(
    "linear_teachers.fig1.covariance_alignment",
    lt.simulate_covariance_alignment,
    {"quick": lt.CovarianceAlignmentSetting(d=200, top=10, repeats=24, chunk_size=12,
                                            bound_points=0),
     "full": lt.CovarianceAlignmentSetting(d=1000, top=50, repeats=20, bound_points=0)},
    x64=True,
)  # fmt: skip
_Z_FIG1 = 3.0  # mean ± 3 s.e.: ≈ 99.7% for a normal mean, ≈ 99.3% under t with 19 d.o.f.
_NEAR_ZERO = Tolerance(
    "chosen", 0.05, "“drops to ≈ 0 well before n = d” read as the mean Bottom-Align risk at "
    "n = 3d/4 at most 5% of its n = 0 value vᵀΣv = λ_top‖v‖² (CI)",
    observed="the deterministic equivalent gives ≈ 1.7%; measured 1.72%, CI [1.55%, 1.89%] "
    "(quick, 50 repeats, seed 2)",
)  # fmt: skip
_NEAR_CROSSING = Tolerance(
    "chosen", 1.25, "windows next to the predicted n_×: top-align lower over "
    "n_×/2 ≤ n ≤ n_×/1.25, bottom-align lower over 1.25n_× ≤ n ≤ 2n_× (paired gaps averaged "
    "over each window, 3-s.e. CI); averages, so they locate the crossing only loosely (a "
    "referee's replica held with n_× off by a factor 0.8–1.2 at quick scale)",
    observed="empirical crossing of the means / n_× = 70/65.6 = 1.07 (quick, seeds 0, 1); "
    "the expected-lower curve's gaps over the two windows 0.11 ± 0.013 and 0.045 ± 0.004 "
    "(mean ± s.e.)",
)  # fmt: skip


def _fig1_curves_as_defined(run: lt.CovarianceAlignmentRun) -> dict:
    """Premise of both Fig. 1 claims, per repeat: Top-align ``v`` has no component on the
    top-eigenvalue block of the returned spectrum and Bottom-align ``v`` lies inside it."""
    v_squared = np.asarray(run.v_squared)  # (repeats, 2, d)
    spectrum = np.asarray(run.spectrum)
    top_block = spectrum == spectrum.max()
    return {
        "Top-align v ⟂ the top eigenspace, Bottom-align v inside it (as Fig. 1 defines them)":
        np.all((v_squared[:, 0] > 0) == ~top_block, axis=-1)
        & np.all((v_squared[:, 1] > 0) == top_block, axis=-1)
    }  # fmt: skip


def _fig1_paired_mean(values: np.ndarray) -> tuple[float, tuple[float, float]]:
    """Mean over repeats with its ``±3`` s.e. interval."""
    mean, se = values.mean(), values.std(ddof=1) / np.sqrt(values.size)
    return float(mean), (float(mean - _Z_FIG1 * se), float(mean + _Z_FIG1 * se))


def _fig1_v_sigma_v(run: lt.CovarianceAlignmentRun) -> np.ndarray:
    """``vᵀΣv`` per repeat and curve, ``(repeats, 2)``: each curve's ``n = 0`` risk
    (Top-align ``λ_bottom‖v‖²``, Bottom-align ``λ_top‖v‖²``)."""
    return np.sum(np.asarray(run.v_squared) * np.asarray(run.spectrum), axis=-1)


def _fig1_gaps(run: lt.CovarianceAlignmentRun, windows: dict) -> tuple[list, dict, dict]:
    """Paired gaps of the expected-lower curve over each window of ``n``, relative to
    Bottom-align's ``vᵀΣv`` (the larger ``n = 0`` risk).

    ``windows``: name → (``+1`` where Top-align should be lower, ``−1`` where Bottom-align
    should, the mask over ``n = 1..d``, the window's tolerance or None). Returns the
    decisions, their diagnostics and the premise that every window holds some ``n`` (an
    n_× near ``d`` empties the windows above it: nothing to test there).
    """
    risks = np.asarray(run.risks)  # (repeats, 2, d): n = 1..d
    repeats = risks.shape[0]
    gap = (risks[:, 1] - risks[:, 0]) / _fig1_v_sigma_v(run)[:, 1:]  # R_BA − R_TA
    results, diagnostics = [], {}
    for name, (sign, where, tolerance) in windows.items():
        if not where.any():
            continue
        mean, ci = _fig1_paired_mean(sign * gap[:, where].mean(1))
        diagnostics[f"lower curve's gap/vᵀΣv over {name} (mean, CI)"] = [mean, *ci]
        results.append(estimate_in(mean, ci, Interval(0.0, np.inf), num_instances=repeats,
                                   tolerance=tolerance))  # fmt: skip
    nonempty = {"every window of n holds at least one sample size":
                np.array([w.any() for _, w, _ in windows.values()])}  # fmt: skip
    return results, diagnostics, nonempty


def check_fig1_crossing(run: lt.CovarianceAlignmentRun):
    """Top-align lower at small n, bottom-align lower at large n (paired gaps averaged over
    each range, 3-s.e. CI above 0), and bottom-align ≈ 0 at n = 3d/4."""
    risks = np.asarray(run.risks)  # (repeats, 2, d): n = 1..d
    repeats, _, d = risks.shape
    n = np.arange(1, d + 1)
    n_cross = float(run.crossing)
    results, diagnostics, nonempty = _fig1_gaps(run, {
        "n ≤ n_×/4": (1, n <= n_cross / 4, None),
        "2n_× ≤ n ≤ 0.9d": (-1, (n >= 2 * n_cross) & (n <= 0.9 * d), None),
    })  # fmt: skip
    zero = _fig1_paired_mean(risks[:, 1, 3 * d // 4 - 1] / _fig1_v_sigma_v(run)[:, 1])
    mean_top, mean_bottom = risks[:, 0].mean(0), risks[:, 1].mean(0)
    crossed = np.flatnonzero(mean_bottom[:-1] < mean_top[:-1])
    result = all_of(
        *results,
        estimate_in(*zero, AtMost(_NEAR_ZERO.value), num_instances=repeats,
                    tolerance=_NEAR_ZERO),
        diagnostics={"d": d, "predicted crossing n_×": n_cross,
                     "empirical crossing of the means": int(n[crossed[0]]) if crossed.size
                     else -1,
                     "R_BA(3d/4)/vᵀΣv (mean, CI)": [zero[0], *zero[1]], **diagnostics},
        notes="Σ two-level (top eigenvalues 1.5, rest 0.3), ‖v‖ = 1, one X per repeat shared "
        "by both v; CIs are mean ± 3 s.e. over repeats; gaps are the expected-lower curve's "
        "advantage (R_BA − R_TA at small n, R_TA − R_BA at large n) over vᵀΣv = λ_top‖v‖².",
    )  # fmt: skip
    return given(result, {**_fig1_curves_as_defined(run), **nonempty})


_DETERMINISTIC_EQUIVALENT = Tolerance(
    "chosen", 0.05, "|mean of (R_n − R_DE(n))/vᵀΣv over n ≤ 0.9d|, per curve with its own "
    "vᵀΣv: the 3-s.e. CI lies within ±0.05 (the equivalent is exact only as n, d → ∞)",
    observed="quick seeds 0 and 1 (d = 200, 24 repeats), mean and 3-s.e. CI: Top-align 0.003 "
    "[−0.017, 0.023] and −0.001 [−0.022, 0.020]; Bottom-align 0.008 [−0.009, 0.024] and "
    "0.007 [−0.009, 0.022]. First chosen as ±0.03 on Bottom-align's vᵀΣv for both curves; a "
    "referee showed that left a wrong denominator in R_DE inconclusive on Top-align, whose own "
    "vᵀΣv is 5× smaller, so each curve now has its own unit and the CIs widened with it",
)  # fmt: skip


def check_fig1_deterministic_equivalent(run: lt.CovarianceAlignmentRun):
    """The ridgeless deterministic equivalent (of the mean ``v²``) predicts the Fig. 1 curves:

    * per curve, the per-repeat mean of ``(R_n − R_DE(n))/vᵀΣv`` over ``n ≤ 0.9d`` (each
      curve's own ``vᵀΣv``): 3-s.e. CI inside ±0.05;
    * the two ``R_DE`` curves change order exactly at the predicted ``n_×`` (Bottom-align
      above at ``⌈n_×⌉ − 1``, below at ``⌊n_×⌋ + 1``: the crossing formula agrees with the
      risk formula, no tolerance);
    * the simulated curves are on the predicted side next to ``n_×`` (Top-align lower over
      ``n_×/2 ≤ n ≤ n_×/1.25``, Bottom-align lower over ``1.25n_× ≤ n ≤ 2n_×``).

    One range per curve for the first, not one below and one above ``n_×``: at quick scale
    (top = 10, 24 repeats) the Bottom-align risk below ``n_×`` fluctuates so much between
    draws of ``X`` that its own 3-s.e. interval is ±0.03 wide (seen: ±0.028 over
    ``n ≤ n_×``)."""
    risks, theory = np.asarray(run.risks), np.asarray(run.theory)  # (r, 2, d), (2, d)
    repeats, _, d = risks.shape
    n = np.arange(1, d + 1)
    n_cross = float(run.crossing)
    v_sigma_v = _fig1_v_sigma_v(run)  # (repeats, 2)
    tol = _DETERMINISTIC_EQUIVALENT.value
    results, diagnostics = [], {"d": d, "predicted crossing n_×": n_cross}
    for curve, name in enumerate(("Top-align", "Bottom-align")):
        deviation = (risks[:, curve] - theory[curve])[:, n <= 0.9 * d].mean(1)
        mean, ci = _fig1_paired_mean(deviation / v_sigma_v[:, curve])
        diagnostics[f"{name}: (R − R_DE)/vᵀΣv over n ≤ 0.9d (mean, CI)"] = [mean, *ci]
        results.append(estimate_in(mean, ci, Interval(-tol, tol), num_instances=repeats,
                                   tolerance=_DETERMINISTIC_EQUIVALENT))  # fmt: skip
    below, above = math.ceil(n_cross) - 1, math.floor(n_cross) + 1  # sizes either side
    inside = 1 <= below and above <= d
    if inside:
        order = theory[1, [below - 1, above - 1]] - theory[0, [below - 1, above - 1]]
        diagnostics["R_DE,BA − R_DE,TA at ⌈n_×⌉ − 1 and ⌊n_×⌋ + 1"] = order
        results.append(compare_v2(np.array([-order[0], order[1]]), 0.0,
                                  relation="upper_bound", num_instances=repeats))  # fmt: skip
    factor = _NEAR_CROSSING.value
    windows, window_diagnostics, nonempty = _fig1_gaps(run, {
        "n_×/2 ≤ n ≤ n_×/1.25": (1, (n >= n_cross / 2) & (n <= n_cross / factor),
                                 _NEAR_CROSSING),
        "1.25n_× ≤ n ≤ 2n_×": (-1, (n >= factor * n_cross) & (n <= 2 * n_cross),
                               _NEAR_CROSSING),
    })  # fmt: skip
    result = all_of(
        *results, *windows, diagnostics={**diagnostics, **window_diagnostics},
        notes="R_DE: the ridgeless bias of min-norm interpolation of v (Hastie et al. 2022) "
        "with the repeats' mean v² per eigen-direction; CIs are mean ± 3 s.e. over repeats.",
    )  # fmt: skip
    premises = {
        **_fig1_curves_as_defined(run),
        **nonempty,
        "1 < n_× < d (sizes on both sides of the crossing)": np.array(inside),
    }
    return given(result, premises)


CLAIMS: tuple = (
    V2Claim(
        id="linear_teachers.thm4_1.closed_form",
        paper=f"{_PAPER}, Thm 4.1, eq. (1)",
        statement="γ = P_⊥θ_S + P_∥θ_T equals θ_S + X⁺(y − Xθ_S), y = Xθ_T (float64, 1e-10 rel.)",
        kind="identity",
        reading=printed("“γ = P_⊥θ_S + P_∥θ_T” (eq. (1))"),
        uses=CLOSED_FORM,
        check=check_closed_form,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.thm4_1.gd_converges",
        paper=f"{_PAPER}, Thm 4.1, eq. (1)",
        statement="GD on (1/n)‖Xw−y‖² from θ_S, η = 0.9n/λ_max(XᵀX), converges to γ, follows "
        "w(t) = γ + (I − (2η/n)XᵀX)^t(θ_S − γ), and keeps P_⊥w(t) = P_⊥θ_S",
        kind="identity",
        reading=printed("Thm 4.1: gradient descent initialised at θ_S converges to γ of eq. (1)"),
        uses=GD,
        check=check_gd_converges,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.thm4_1.risk_monte_carlo",
        paper=f"{_PAPER}, Thm 4.1, eq. (2)",
        statement="R(γ) = ‖Σ^{1/2}P_⊥(θ_T − θ_S)‖² agrees with a fresh-sample Monte Carlo "
        "estimate of E[(xᵀθ_T − xᵀγ)²] within 4 standard errors",
        kind="identity",
        reading=printed("“R(γ) = ‖Σ^{1/2}P_⊥(θ_T − θ_S)‖²” (eq. (2))"),
        uses=MONTE_CARLO,
        check=check_risk_monte_carlo,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.thm4_1.translation_invariance",
        paper=f"{_PAPER}, Thm 4.1, eq. (2)",
        statement="R(γ) depends only on θ_T − θ_S: shifting both by u leaves it unchanged",
        kind="identity",
        reading=derived(
            "eq. (2) depends on θ_S, θ_T only through θ_T − θ_S; checked on the "
            "whole pipeline (labels, fine-tuning, risk)"
        ),
        uses=CLOSED_FORM,
        check=check_translation_invariance,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.fig1.crossing",
        paper=f"{_PAPER}, Sec 4.2, Fig. 1",
        statement="Top-eigen-align has lower risk at small n (n ≤ n_×/4), bottom-eigen-align at "
        "large n (2n_× ≤ n ≤ 0.9d), each a paired gap averaged over the range with a 3-s.e. CI "
        "above 0, and bottom-align is ≤ 5% of vᵀΣv at n = 3d/4",
        kind="ordering",
        reading=figure(
            "Fig. 1: “Top Eigen Align” and “Bottom Eigen Align” risks against n (d = 1000, top "
            "m = 50 eigenvalues 1.5, the rest 0.3): top-align lower at first, bottom-align "
            "falling to ≈ 0 well before n = d; n_× is the crossing predicted by the ridgeless "
            "deterministic equivalent (not in the paper; tested in "
            "linear_teachers.fig1.deterministic_equivalent)"
        ),
        uses=FIG1,
        check=check_fig1_crossing,
        min_instances=20,
        experiment=_EXPERIMENT,
    ),
    V2Claim(
        id="linear_teachers.fig1.deterministic_equivalent",
        paper=f"{_PAPER}, Sec 4.2, Fig. 1 (extension)",
        statement="The ridgeless deterministic equivalent predicts the Fig. 1 curves: per curve "
        "the per-repeat mean of (R_n − R_DE(n))/vᵀΣv over n ≤ 0.9d (its own vᵀΣv) has a 3-s.e. "
        "CI within ±0.05; the two R_DE curves change order exactly at the predicted n_×; and "
        "the simulated curves are on the predicted side next to it (top-align lower over "
        "n_×/2 ≤ n ≤ n_×/1.25, bottom-align over 1.25n_× ≤ n ≤ 2n_×, 3-s.e. CIs)",
        kind="identity",
        reading=derived(
            "not in the paper: the Fig. 1 risks (eq. (2) on Gaussian data) against the "
            "ridgeless-bias deterministic equivalent (Hastie et al. 2022) that also gives the "
            "crossing n_× of linear_teachers.fig1.crossing; a second route to the figure's "
            "curves, exact only as n, d → ∞, hence the chosen ±0.05; the windows next to n_× "
            "are averages and locate the crossing only loosely"
        ),
        uses=FIG1,
        check=check_fig1_deterministic_equivalent,
        min_instances=20,
        experiment=_EXPERIMENT,
    ),
)
