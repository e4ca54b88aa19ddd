r"""The step-size condition of head tuning and MMR's effect on the margin (Fu et al. 2023), v2.

Thm 2.4 assumes ``η < 2β⁻¹σ_max⁻¹(X̃)``; Sec 4.2.4 (Fig 3) says only that "as the learning
rate η decreases, the model achieves better stability". For the *mean* logistic loss of the
augmented features the smoothness is ``β_F = σ_max²(X̃)/(4n)``
(:func:`ntsim.theory.stability.head_tuning_step_size`), and ``η < 2/β_F`` is the descent
lemma's (and Soudry et al.'s) condition — the project's reading of the printed condition, in
which ``σ_max⁻¹`` becomes ``σ_max⁻²`` and ``β = 1/4``. The claims below about what happens
*above* ``2/β_F`` are therefore the project's (derived) readings, not the paper's statements.

The runs are :func:`ntsim.theory.stability.simulate_step_sizes` (GD from 0 at
``η·β_F ∈ {1, 1.9, 2.5, 4, 8}``) and :func:`ntsim.theory.stability.simulate_mmr_margin`.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, EstimateIn, Simulation, derived, printed, proof
from ntsim.claims._decisions import (
    AtLeast,
    AtMost,
    Interval,
    Tolerance,
    all_of,
    compare,
    estimate_in,
)
from ntsim.claims._premises import given
from ntsim.core import Z95, bootstrap_ci, mean_ci
from ntsim.theory import stability as st

__all__ = ["CLAIMS"]

_PAPER = "Fu et al. 2023"
_EXPERIMENT = "stability/synthetic_loo_stability"

# Settings shared with the figures (st.STEP_SIZE_SETTINGS: 3200 datasets at quick, 2000 at
# full, so the paired 95% CI of the spread ratio of ‖Δ̂_T‖ is about ±0.02-0.025 and the 5%
# effect below is decided at every seed instead of by the luck of the draw).
STEP_SIZES = Simulation("stability.head_tuning.step_sizes", st.simulate_step_sizes,
                        st.STEP_SIZE_SETTINGS, x64=True)  # fmt: skip
MMR = Simulation("stability.mmr.encoder", st.simulate_mmr_margin, st.MMR_MARGIN_SETTINGS,
                 x64=True, key_name="stability.mmr.increases_margin")  # fmt: skip

ROUND_OFF = Tolerance(
    "round-off",
    1e-12,
    "relative to the initial loss log 2: float64 sums of n O(1) terms, ~1e-15, 1000x",
)


def _as_stated(run: st.StepSizeRun) -> dict:
    """The premise every step-size claim names: each run's step is at the stated ``η·β_F``,
    with ``β_F`` measured on the dataset (``run.eta_beta``: the step taken times the top
    eigenvalue of ``X̃ᵀX̃/(4n)``), to round-off (float64 eigenvalue of a (d+1)×(d+1) Gram
    matrix, ~1e-15 relative; :data:`ROUND_OFF` leaves 1000x)."""
    measured = np.asarray(run.eta_beta)
    stated = np.asarray(run.factors)[None, :]
    return {"η·β_F as stated (β_F measured)":
            np.abs(measured - stated) <= ROUND_OFF.value * stated}  # fmt: skip


def _below(run: st.StepSizeRun):
    return [j for j, f in enumerate(run.factors) if f < 2]


def _above(run: st.StepSizeRun):
    return [j for j, f in enumerate(run.factors) if f > 2]


def check_descent_below_two_over_beta(run: st.StepSizeRun):
    loss = np.asarray(run.loss)[:, _below(run)]
    increase = np.max(np.diff(loss, axis=-1), axis=-1)  # (N, F): worst step per run
    slack = ROUND_OFF.value * float(np.max(loss[..., 0]))
    result = compare(
        increase, 0.0, relation="upper_bound", atol=slack, tolerance=ROUND_OFF,
        num_instances=loss.shape[0],
        diagnostics={"η·β_F": run.factors[_below(run)], "largest one-step change": increase.max(0),
                     "median final/initial loss": np.median(loss[..., -1] / loss[..., 0], axis=0)},
        notes="measured = the largest one-step loss change of each run (≤ 0: monotone).",
    )  # fmt: skip
    return given(result, _as_stated(run))


_MOSTLY = Tolerance(
    "chosen",
    0.05,
    "'non-monotone above 2/β_F' read as: at most 5% of runs monotone at the factor nearest 2",
    observed="100% monotone at η·β_F = 2.5, 200 datasets, quick scale, seeds 0",
)


def _wilson(successes: int, total: int, z: float = Z95):
    p = successes / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * np.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return p, (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def check_nonmonotone_above_two_over_beta(run: st.StepSizeRun):
    loss = np.asarray(run.loss)
    increase = np.max(np.diff(loss, axis=-1), axis=-1)  # (N, F)
    monotone = increase <= 0
    above = _above(run)
    j = above[0]  # the factor nearest 2 from above
    fraction, ci = _wilson(int(monotone[:, j].sum()), monotone.shape[0])
    result = estimate_in(
        fraction, ci, AtMost(_MOSTLY.value), num_instances=monotone.shape[0], tolerance=_MOSTLY,
        diagnostics={"η·β_F": run.factors[above], "fraction monotone": monotone[:, above].mean(0),
                     "median final/initial loss": np.median(loss[:, above, -1] / loss[:, above, 0],
                                                            axis=0)},
        notes=f"estimate = fraction of runs whose loss never rises, at η·β_F = "
        f"{run.factors[j]:g}, 95% Wilson CI. 2/β_F is sufficient for descent, not necessary: "
        "the logistic curvature reaches β_F only at w = 0 and along the top eigenvector of "
        "X̃ᵀX̃, so larger steps can still decrease the loss at every step.",
    )  # fmt: skip
    return given(result, _as_stated(run))


_SPREAD = Tolerance(
    "chosen",
    0.05,
    "a spread ratio ≥ 1.05 counts as 'varies more': the same 5% resolution at which the twin "
    "reads 'smaller' for the mean (the paper gives no effect size); the datasets are sized so "
    "the ratio's 95% CI (±0.02) decides a 5% effect",
    observed="v1 point ratios 1.08–1.19 (seed 3); v2 at 400 datasets: CIs up to 1.07 (seeds "
    "0–19, inconclusive at 5 of them); at 3200 datasets: 1.009 [0.987, 1.031], 0.994 [0.975, "
    "1.011], 0.988 [0.970, 1.005] (seeds 0–2, exploratory keys)",
)
_FALL = Tolerance(
    "chosen",
    0.05,
    "a mean ratio ≤ 0.95 counts as 'smaller'",
    observed="0.73 [0.68, 0.78] and 0.77 [0.72, 0.81] at η·β_F = 2.5 (200 datasets, seeds 0, 1)",
)


def _ratio_to_base(run: st.StepSizeRun, statistic):
    delta = np.asarray(run.loo_distance)
    base = int(np.flatnonzero(run.factors == 1.0)[0])
    j = _above(run)[0]  # the factor nearest 2 from above
    ratio, ci = bootstrap_ci(lambda idx: statistic(delta[idx, j]) / statistic(delta[idx, base]),
                             delta.shape[0])  # fmt: skip
    diagnostics = {"η·β_F": run.factors, "std ‖Δ̂_T‖": delta.std(0, ddof=1),
                   "mean ‖Δ̂_T‖": delta.mean(0)}  # fmt: skip
    return ratio, ci, delta.shape[0], diagnostics, run.factors[j]


def check_variability_grows_above_two_over_beta(run: st.StepSizeRun):
    ratio, ci, count, diagnostics, factor = _ratio_to_base(run, lambda v: v.std(ddof=1))
    delta = np.asarray(run.loo_distance)
    cv = delta.std(0, ddof=1) / delta.mean(0)
    diagnostics["coefficient of variation / at η = 1/β_F (not decided)"] = cv / cv[0]
    result = estimate_in(
        ratio, ci, AtLeast(1 + _SPREAD.value), num_instances=count, tolerance=_SPREAD,
        diagnostics=diagnostics,
        notes=f"estimate = std over datasets of ‖Δ̂_T‖ at η·β_F = {factor:g} over the std at "
        "η = 1/β_F, 95% bootstrap CI (paired: the same datasets at every η). The std stays "
        "while the mean falls by about a quarter, so the *relative* spread (std/mean, in the "
        "diagnostics) grows by about 30%: under a scale-free reading of 'varies more' the "
        "statement would hold; the claim reads the absolute spread.",
    )  # fmt: skip
    return given(result, _as_stated(run))


def check_distance_falls_with_step(run: st.StepSizeRun):
    ratio, ci, count, diagnostics, factor = _ratio_to_base(run, np.mean)
    result = estimate_in(
        ratio, ci, AtMost(1 - _FALL.value), num_instances=count, tolerance=_FALL,
        diagnostics=diagnostics,
        notes=f"estimate = mean ‖Δ̂_T‖ at η·β_F = {factor:g} over the mean at η = 1/β_F, 95% "
        "bootstrap CI (paired). A larger step moves GD further along its path in T steps, and "
        "‖Δ̂_t‖ falls along the path.",
    )  # fmt: skip
    return given(result, _as_stated(run))


_MARGIN_GAIN = Tolerance(
    "chosen",
    0.05,
    "a mean margin gain of ≥ 5% (mean log(γ_after/γ_before) ≥ log 1.05)",
    observed="95% CI lower ends of the mean log ratio 0.091–0.098 at quick scale (200 "
    "datasets, seeds 0–2); median ratio 1.6–1.75",
)


def check_mmr_increases_margin(run: st.MMRRun):
    r0, r1, g0, g1 = (np.asarray(a) for a in run)
    lowered = compare(r1, r0, relation="upper_bound", num_instances=r0.size)
    log_ratio = np.log(g1 / g0)
    mean, ci = mean_ci(log_ratio, distribution="normal")
    gain = estimate_in(float(mean), ci, AtLeast(np.log(1 + _MARGIN_GAIN.value)),
                       num_instances=r0.size, tolerance=_MARGIN_GAIN)  # fmt: skip
    return all_of(lowered, gain, diagnostics={
        "median R before/after": [float(np.median(r0)), float(np.median(r1))],
        "median γ ratio": float(np.median(g1 / g0)),
        "fraction with γ decreased": float(np.mean(g1 < g0)),
    }, notes="R lowered on every dataset; estimate = mean log(γ_after/γ_before), 95% normal CI. "
       "The encoder aligns with μ₊ − μ₋, which is not the SVM direction, so a gain on average "
       "is what can be claimed, not in every instance.")  # fmt: skip


CLAIMS = (
    Claim(
        id="stability.lr.descent_below_two_over_beta",
        paper=f"{_PAPER}, Thm 2.4 step-size condition; Lemma A.5.1",
        statement="head-tuning GD on the mean logistic loss decreases the loss at every step for "
        "η < 2/β_F, β_F = σ_max²(X̃)/(4n) (tested at η·β_F = 1 and 1.9)",
        kind="bound",
        reading=proof(
            "the descent lemma (Lemma A.5.1, printed for η < 1/β; the standard lemma "
            "gives descent for η < 2/β) applied to the β_F-smooth mean loss"
        ),
        uses=STEP_SIZES,
        check=check_descent_below_two_over_beta,
        min_instances=400,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="stability.lr.nonmonotone_above_two_over_beta",
        paper=f"{_PAPER}, Thm 2.4 step-size condition and Sec 4.2.4 (Fig 3), as the project "
        "reads them",
        statement="(derived) just above η = 2/β_F head-tuning GD is non-monotone: at most 5% of "
        "runs at η·β_F = 2.5 decrease the loss at every step (95% CI)",
        kind="bound",
        reading=derived(
            "the paper states η < 2β⁻¹σ_max⁻¹(X̃) as a hypothesis of Thm 2.4 and "
            "says smaller η is more stable (Fig 3); that crossing 2/β_F (the "
            "mean-loss form of the condition) makes GD non-monotone is the "
            "project's reading"
        ),
        uses=STEP_SIZES,
        check=check_nonmonotone_above_two_over_beta,
        expect="refuted",
        twin="stability.lr.descent_below_two_over_beta",
        # The first step from w = 0 sees curvature β_F only along the top eigenvector of X̃ᵀX̃;
        # GD's gradient is not aligned with it, so most runs stay monotone just above 2/β_F.
        counterexample=EstimateIn(
            Interval(0.5, 1.0),
            "most runs at η·β_F = 2.5 stay monotone: "
            "2/β_F is sufficient for descent, not necessary",
        ),
        min_instances=400,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="stability.lr.variability_grows_above_two_over_beta",
        paper=f"{_PAPER}, Sec 4.2.4 (Fig 3), as the project reads it",
        statement="(derived) above η = 2/β_F the leave-one-out distance ‖Δ̂_T‖ varies more "
        "across datasets: its std at η·β_F = 2.5 is ≥ 1.05 times the std at η = 1/β_F (95% CI "
        "of the paired ratio, ±0.02 at the datasets used)",
        kind="ordering",
        reading=derived(
            "Fig 3: “as the learning rate η decreases, the model achieves better "
            "stability”; the project reads stability as the spread of ‖Δ̂_T‖ over "
            "datasets and compares steps above 2/β_F with η = 1/β_F"
        ),
        uses=STEP_SIZES,
        check=check_variability_grows_above_two_over_beta,
        expect="refuted",
        twin="stability.lr.distance_falls_with_step",
        # Mechanism: in T steps a larger η moves GD further along the same path, and ‖Δ̂_t‖
        # falls along it (mean ratio ≈ 0.75); the spread stays (ratio ≈ 0.99), it does not grow.
        counterexample=EstimateIn(
            Interval(0.6, 1 + _SPREAD.value),
            "the spread does not grow: a larger step only moves GD further along its path",
        ),
        min_instances=2000,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="stability.lr.distance_falls_with_step",
        paper=f"{_PAPER}, Thm 2.4 (first term, falling in t) and Sec 4.2.4",
        statement="(derived) at a fixed number of steps T, GD with η·β_F = 2.5 ends with a "
        "smaller mean ‖Δ̂_T‖ than with η = 1/β_F (ratio ≤ 0.95, 95% CI)",
        kind="ordering",
        reading=derived(
            "the first term of eq. (6) falls along GD's path and at fixed T a larger step is "
            "further along it; Fig 3 (GLUE accuracy std) is another setting"
        ),
        uses=STEP_SIZES,
        check=check_distance_falls_with_step,
        min_instances=400,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="stability.mmr.increases_margin",
        paper=f"{_PAPER}, Sec 3.1, eq. (8)–(9)",
        statement="minimising R(S) = 1/(1 + ‖μ₊ − μ₋‖) over a linear encoder of fixed norm "
        "lowers R on every dataset and increases the SVM margin γ_S of the encoded data on "
        "average (95% CI of the mean log ratio)",
        kind="ordering",
        reading=printed(
            "“if the distance between the class centers increases, the margin "
            "between the encoded representation and the separation plane will also "
            "likely to increase” (Sec 3.1)"
        ),
        uses=MMR,
        check=check_mmr_increases_margin,
        min_instances=200,
        experiment="stability/table2_methods_small_scale",
    ),
)
