"""Trend claims of Fu et al. 2023, Sec 4.3 (Figs 2, 6–9): what makes head tuning stable (v2).

The paper reads its synthetic figures as: the normalised leave-one-out distance ``‖Δ̂‖``
falls with the number of samples ``n`` (Fig 6), with the margin ``γ`` (Fig 7) and with the
training length ``t`` (the synthetic analogue of Fig 2), and grows with ``‖w_0 − w_*‖``
(Fig 8) and with the radius ``B`` (Fig 9). Each statement is checked for GD after ``T``
steps (what the paper plots) and, where Thm 2.4 speaks of it, for the ``t → ∞`` limit: the
leave-one-out distance of the bias-penalised hard-margin SVM averaged exactly over the
left-out point.

The runs are the experiment's panels (:func:`ntsim.theory.stability.simulate_synthetic_panel`,
:func:`ntsim.theory.stability.simulate_loo_over_n`). A trend is decided on the 95% Fisher-z
interval of Spearman's ρ between the per-dataset distance and the varied quantity, against
the region ``ρ ≤ −0.1`` (decreasing) or ``ρ ≥ 0.1`` (increasing): holds when the interval is
inside, refuted when it is outside, inconclusive otherwise (never refuted for want of
significance).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, EstimateIn, Simulation, derived, figure
from ntsim.claims._decisions import AtLeast, AtMost, Interval, Tolerance, all_of, estimate_in
from ntsim.claims._premises import given
from ntsim.core import loglog_slope, mean_ci, spearman_ci
from ntsim.theory import stability as st

__all__ = ["CLAIMS"]

_PAPER = "Fu et al. 2023"
_EXPERIMENT = "stability/synthetic_loo_stability"

# 100 datasets per cell at quick scale (400 per panel): Spearman's ρ then has a 95% CI of
# about ±0.1, a quarter of the gap between the GD margin trend (ρ ≈ +0.3) and the region's
# edge −0.1; at 20 per cell (±0.22) the fig7 refutation was inconclusive at seeds 7 and 11.
PANEL = Simulation(
    "stability.synthetic.panel", st.simulate_synthetic_panel,
    {"quick": st.SyntheticPanelSetting(points=100, datasets=100, num_steps=1000, num_records=7,
                                       margins=(0.05, 0.1, 0.2, 0.4), init_norms=(0.0, 5.0, 20.0),
                                       radii=(0.5, 1.0, 2.0, 4.0)),
     "full": st.SyntheticPanelSetting()},
)  # fmt: skip
# Fig 8 alone, with many datasets per cell: the dependence on ‖w_0 − w_*‖ is weak, and a CI
# that decides it needs ~10³ datasets (the base cell, no γ or B panels). Quick run: ≈ 40 s
# cold (compilation) on the shared 2 cores at load ≈ 15, 8–12 s per seed once cached.
INIT_PANEL = Simulation(
    "stability.synthetic.init_panel", st.simulate_synthetic_panel,
    {"quick": st.SyntheticPanelSetting(points=60, datasets=500, num_steps=1000, margins=(),
                                       init_norms=(0.0, 5.0, 20.0), radii=()),
     "full": st.SyntheticPanelSetting(datasets=300, margins=(), radii=())},
)  # fmt: skip
OVER_N = Simulation(
    "stability.synthetic.over_n", st.simulate_loo_over_n,
    {"quick": st.OverNSetting(ns=(25, 50, 100), datasets=100, num_steps=1000),
     "full": st.OverNSetting()},
)  # fmt: skip

# Cohen's "small" correlation: the weakest rank correlation we call a trend.
RHO = Tolerance(
    "chosen",
    0.1,
    "|Spearman ρ| ≥ 0.1 (Cohen's 'small' effect) is a trend",
    observed="|ρ| 0.3–0.9 for the trends that hold at quick scale, seeds 0–2",
)
# GD from w_0 = 0: the first step already separates S from S^i; the trend in t is read from
# the recorded step t = 10 on. (From a shared w_0 ≠ 0, ‖Δ̂_0‖ = 0 and the distance first grows.)
_FIRST_STEP = 10
_STEP_DROP = Tolerance(
    "chosen", 0.1, "a fall of ≥ 10% (mean ratio ≤ 0.9) of ‖Δ̂_t‖ from t = 10 to T per cell",
    observed="chosen on mean log ratios −0.9 to −2.6 per cell (quick scale, seed 0), i.e. "
    "geometric-mean ratios 0.07–0.41; the check moved to the arithmetic mean ratio when full "
    "scale gave ‖Δ̂_T‖ = 0 (log −∞) on some datasets",
)  # fmt: skip


def _trend(x, values, sign: float, label: str):
    rho, ci = spearman_ci(x, values)
    region = AtMost(-RHO.value) if sign < 0 else AtLeast(RHO.value)
    return estimate_in(rho, ci, region, num_instances=len(np.ravel(values)), tolerance=RHO,
                       notes=f"{label}: Spearman ρ, 95% Fisher-z CI.")  # fmt: skip


_COLUMN = {"margin": 0, "init": 3, "radius": 1}  # the column of params each panel varies
#: The premise of every SVM-limit trend: the limit is the leave-one-out distance averaged
#: over *every* left-out point, which the suite computes from the support vectors only
#: (Lemma A.2.4: removing any other point leaves the SVM unchanged), so its points must
#: cover every support vector of S (measured per dataset by ``svm_reference``).
_EXACT = "SVM limit averaged over every support vector"


def _panel_check(panel: str, column: str, x_name: str, sign: float):
    def check(run: st.SyntheticPanelRun):
        rows = run.rows[panel]
        values = run.delta[rows, -1] if column == "delta" else run.svm[rows]
        x = {"gamma": run.gamma, "w0_distance": run.w0_distance,
             "radius": run.params[:, 1]}[x_name][rows]  # fmt: skip
        cells = run.params[rows][:: run.datasets, _COLUMN[panel]]
        result = _trend(x, values, sign, f"{'GD ‖Δ̂_T‖' if column == 'delta' else 'SVM limit'} "
                        f"vs {x_name}")  # fmt: skip
        if column == "svm":
            result = given(result, {_EXACT: np.asarray(run.svm_exact[rows], bool)})
        return all_of(result, diagnostics={
            f"{panel} cells": cells,
            "mean ‖Δ̂‖ per cell": values.reshape(len(cells), -1).mean(1),
            f"mean {x_name} per cell": x.reshape(len(cells), -1).mean(1),
        })  # fmt: skip

    return check


def check_decreasing_in_n(run: st.OverNRun):
    """Fig 6: ‖Δ̂_T‖ (GD) and the SVM limit fall with n (Spearman ρ ≤ −0.1 for both)."""
    parts = []
    for column, label in (("delta", "GD ‖Δ̂_T‖"), ("svm", "SVM limit")):
        values = getattr(run, column)
        parts.append(_trend(np.repeat(run.ns, values.shape[1]), values.ravel(), -1.0,
                            f"{label} vs n"))  # fmt: skip
    parts[1] = given(parts[1], {_EXACT: np.asarray(run.svm_exact, bool)})
    ns = np.asarray(run.ns, float)
    return all_of(*parts, diagnostics={
        "n": run.ns, "mean GD ‖Δ̂_T‖": run.delta.mean(1), "mean SVM limit": run.svm.mean(1),
        "log-log slope GD": loglog_slope(ns, run.delta.mean(1)),
        "log-log slope SVM": loglog_slope(ns, run.svm.mean(1)),
    })  # fmt: skip


def check_decreasing_in_steps(run: st.SyntheticPanelRun):
    """Synthetic Fig 2: per cell from w_0 = 0, mean ratio ‖Δ̂_T‖/‖Δ̂_10‖ ≤ 0.9 (95% CI).

    The ratio, not its log: at full scale (T = 10⁵) some datasets reach ‖Δ̂_T‖ = 0 exactly
    in float32 (the left-out point's logistic gradient underflows, so both runs take the
    same steps), where a log ratio is −∞. The arithmetic mean of the ratios is at least
    their geometric mean, so this reading is the more demanding one.
    """
    first = int(np.searchsorted(run.steps, _FIRST_STEP))
    from_zero = run.params[:: run.datasets, 3] == 0  # cells from w_0 ≠ 0 start at ‖Δ̂_0‖ = 0
    start = run.delta[:, first].reshape(-1, run.datasets)[from_zero]
    ratio = run.delta[:, -1].reshape(-1, run.datasets)[from_zero] / start
    parts = []
    for cell in ratio:
        mean, ci = mean_ci(cell, distribution="normal")
        parts.append(estimate_in(float(mean), ci, AtMost(1 - _STEP_DROP.value),
                                 num_instances=cell.size, tolerance=_STEP_DROP))  # fmt: skip
    return all_of(*parts, diagnostics={
        "t": run.steps[first:], "mean ‖Δ̂_T‖/‖Δ̂_10‖ per cell": ratio.mean(1),
        "datasets with ‖Δ̂_T‖ = 0": int((ratio == 0).sum()),
    }, notes=f"every cell with w_0 = 0 ({run.datasets} datasets each; from a shared w_0 ≠ 0 "
       "both runs start at ‖Δ̂_0‖ = 0 and the distance first grows): mean over "
       f"datasets of ‖Δ̂_T‖/‖Δ̂_t‖ from t = {run.steps[first]} to T = {run.steps[-1]}, 95% "
       "normal CI, against 0.9.")  # fmt: skip


_WEAK = Tolerance(
    "chosen",
    0.3,
    "|ρ| ≤ 0.3 is 'weak' (Cohen: below 'medium'); a distance "
    "linear in R like the Thm 2.2 bound would rank-correlate strongly with R",
    observed="ρ = −0.04 to +0.02, CIs within ±0.1, 1,500 datasets, quick seeds 0–2",
)


def check_init_distance_weak(run: st.SyntheticPanelRun):
    """|Spearman ρ(‖w_0 − ŵ_S‖, ‖Δ̂_T‖)| ≤ 0.3 (95% CI): a weak dependence at most."""
    rows = run.rows["init"]
    delta, distance = run.delta[rows, -1], run.w0_distance[rows]
    rho, ci = spearman_ci(distance, delta)
    cells = delta.reshape(-1, run.datasets)
    return estimate_in(
        rho, ci, Interval(-_WEAK.value, _WEAK.value), num_instances=delta.size, tolerance=_WEAK,
        diagnostics={"mean ‖w_0 − ŵ_S‖ per cell": distance.reshape(cells.shape).mean(1),
                     "mean ‖Δ̂_T‖ per cell": cells.mean(1),
                     "log-log slope of the nonzero-init cell means": loglog_slope(
                         distance.reshape(cells.shape).mean(1)[1:], cells.mean(1)[1:])},
        notes="Spearman ρ with its 95% Fisher-z CI. Logistic GD forgets the init's scale as its "
        "direction converges to the SVM, so the distance depends on it only weakly.",
    )  # fmt: skip


# Why GD after T steps need not follow its t → ∞ limit: the SVM term of eq. (6) is what γ and
# B move, while at T = 10³–10⁴ ‖Δ̂_T‖ is dominated by the first term (GD's distance to its own
# limit, ~1/log t), which γ and B change through the conditioning of X̃, in either direction.
# The counterexample is "no trend in the printed direction (CI beyond ∓0.1), and not a
# near-deterministic one the other way (|ρ| < 0.9, which a metric that lost its data
# dependence would give)"; observed at quick scale, seeds 0–2: ρ(γ) = +0.21 to +0.35,
# ρ(B) = −0.20 to −0.37.
_NOT_YET = (
    "at finite T GD's ‖Δ̂_T‖ is dominated by its distance to its own limit, which γ "
    "and B move through the conditioning of X̃, not through the SVM term"
)


def _claim(id_, paper, statement, kind, reading, check, uses=PANEL, **kw) -> Claim:
    return Claim(id=id_, paper=f"{_PAPER}, {paper}", statement=statement, kind=kind,
                 reading=reading, uses=uses, check=check, experiment=_EXPERIMENT,
                 min_instances=kw.pop("min_instances", 100), **kw)  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    _claim("stability.fig6.decreasing_in_n", "Sec 4.3.2, Fig 6",
           "‖Δ̂_T‖ of GD and its SVM limit decrease with n (Spearman ρ ≤ −0.1, 95% CI)",
           "trend", figure("“‖Δ̂‖ decreases as the sample size increases” (Sec 4.3.2, Fig 6)"),
           check_decreasing_in_n, uses=OVER_N, min_instances=100),
    _claim("stability.fig2.decreasing_in_steps", "Sec 4.2.3 (Fig 2) and Thm 2.4",
           "from w_0 = 0, ‖Δ̂_t‖ falls by ≥ 10% from t = 10 to T in every synthetic cell (95% CI "
           "of the mean ratio ‖Δ̂_T‖/‖Δ̂_10‖)", "trend",
           derived("Fig 2 shows GLUE runs (“as the training epochs increase, the stability of "
                   "nearly all tasks correspondingly improves”); the project reads it on the "
                   "synthetic cells, where Thm 2.4's first term falls with t"),
           check_decreasing_in_steps),
    _claim("stability.fig7.margin_svm_limit", "Sec 4.3.3, Fig 7 and Thm 2.4",
           "the SVM-limit LOO distance decreases with the measured margin γ_S (ρ ≤ −0.1)",
           "trend", figure("“as the margin increases, the stability improves” (Sec 4.3.3)"),
           _panel_check("margin", "svm", "gamma", -1.0)),
    _claim("stability.fig7.margin_gd", "Sec 4.3.3, Fig 7",
           "after T GD steps, ‖Δ̂_T‖ decreases with the measured margin γ_S (ρ ≤ −0.1)",
           "trend", figure("“as the margin increases, the stability improves” (Sec 4.3.3), read "
                           "for GD after T steps"),
           _panel_check("margin", "delta", "gamma", -1.0), expect="refuted",
           twin="stability.fig7.margin_svm_limit", min_instances=400,
           counterexample=EstimateIn(Interval(-RHO.value, 0.9), _NOT_YET)),
    _claim("stability.fig8.init_distance_gd", "Sec 4.3.4, Fig 8",
           "after T GD steps, ‖Δ̂_T‖ grows with ‖w_0 − w_*‖ by at least a small effect "
           "(Spearman ρ ≥ 0.1, 95% CI)",
           "trend", derived("the project's reading of Fig 8 (“if the distance ‖w_0 − w_*‖ is "
                            "small, the training procedure becomes more stable”, Sec 4.3.4) as "
                            "an association of at least Cohen's 'small' size, ρ ≥ 0.1. The "
                            "refutation excludes such an effect; the sign of ρ is not decided "
                            "(the CIs contain 0), so the figure's words are not refuted"),
           _panel_check("init", "delta", "w0_distance", 1.0), uses=INIT_PANEL,
           expect="refuted", twin="stability.fig8.init_distance_weak",
           # Logistic GD forgets the scale of its init as its norm grows like log t and its
           # direction converges to the SVM, which does not depend on w_0; a large shared init
           # can only keep the two runs together longer (a weak negative trend). Observed at
           # quick scale, seed 0: ρ = −0.04, CI [−0.09, 0.01]. At full scale (1,800 datasets,
           # CI half-width ≈ 0.047) ρ = 0.039, 0.044, 0.075 at seeds 0–2: a weak *positive*
           # association, and seed 2's CI [0.027, 0.122] straddles 0.1, so that seed is
           # inconclusive. Deciding every seed needs ~4× the datasets (left for an accelerator
           # run); the threshold stays where it is.
           counterexample=EstimateIn(Interval(-0.3, RHO.value), "GD forgets its init: no "
                                     "positive trend of size 0.1, at most a weak negative one")),
    _claim("stability.fig8.init_distance_weak", "Sec 4.3.4, Fig 8 and Thm 2.2",
           "after T GD steps, ‖Δ̂_T‖ depends at most weakly on ‖w_0 − w_*‖: |Spearman ρ| ≤ 0.3 "
           "(95% CI), not like the Thm 2.2 bound, which is linear in R", "trend",
           derived("the project's corrected reading of Fig 8 for head tuning: the paper "
                   "motivates it by Thm 2.2, whose bound is linear in R = ‖w_0 − w_*‖"),
           check_init_distance_weak, uses=INIT_PANEL),
    _claim("stability.fig9.radius_svm_limit", "Sec 4.3.5, Fig 9 and Thm 2.4",
           "the SVM-limit LOO distance increases with the radius B at fixed γ (ρ ≥ 0.1)",
           "trend", figure("“as B decreases, the model becomes more stable” (Sec 4.3.5)"),
           _panel_check("radius", "svm", "radius", 1.0)),
    _claim("stability.fig9.radius_gd", "Sec 4.3.5, Fig 9",
           "after T GD steps, ‖Δ̂_T‖ increases with the radius B at fixed γ (ρ ≥ 0.1)",
           "trend", figure("“as B decreases, the model becomes more stable” (Sec 4.3.5), read "
                           "for GD after T steps"),
           _panel_check("radius", "delta", "radius", 1.0), expect="refuted",
           twin="stability.fig9.radius_svm_limit",
           counterexample=EstimateIn(Interval(-0.9, RHO.value), _NOT_YET)),
)  # fmt: skip
