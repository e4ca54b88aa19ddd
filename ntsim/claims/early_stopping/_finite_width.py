"""Claims on the attention model at finite width and sample size (Sun & Raskutti 2026).

* Cor 2 at finite width (contract v2): the trained network's task-vector cosines against
  the linearised-model prediction from kernel blocks at ``θ_PT``, over widths × seeds
  (:func:`ntsim.theory.early_stopping.simulate_trained_task_vectors`).
* Lemma 5, eq. (97) (contract v2): pretrained backbone + fresh Gaussian head; the NTK
  minus its random-init expansion, relative to the NTK, over widths × seeds
  (:func:`ntsim.theory.early_stopping.simulate_mixed_init`), decided on the slope's CI.
* Thm 1, eq. (15) (contract v2): test MSE of hold-out-stopped (linearised) fine-tuning
  of the pretrained attention model against ``N``
  (:func:`ntsim.theory.early_stopping.simulate_learning_curves`), over sizes × seeds,
  decided on the CI of :func:`ntsim.theory.early_stopping.fit_log_log_rate`. The quick
  setting uses width 12 (a smaller finite-width RKHS, so the tanh teacher's approximation
  floor shows within N ≤ 800 at 20 seeds); full keeps width 64.

Outcome (full scale, measured; README): the trained cosines approach the kernel prediction
like ``n^{−0.98}`` (mean max gap 0.065 at n = 16, 0.0043 at n = 256); Lemma 5's ``e`` decays
like ``n^{−0.99}`` — the printed ``O(√log n/√n)`` holds as a bound, the derived exact-rate
reading is refuted (as for the kernel drift of :mod:`._width_scaling`); the learning-curve
slope over ``N ∈ [25, 800]`` is −0.47 for a tanh teacher (outside Assumption 4.1) but
flattens to −0.18 over ``N ≥ 200`` (``Δ`` is not in the finite-width NTK's RKHS, so an
approximation floor appears), while ``Δ`` in the NTK's span keeps a slope ≈ −1 throughout.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ntsim.claims._contract import Claim as ClaimV2
from ntsim.claims._contract import EstimateIn, Simulation, derived, printed
from ntsim.claims._decisions import AtMost, Interval, Tolerance, all_of, estimate_in
from ntsim.claims._decisions import compare as compare_v2
from ntsim.claims.early_stopping._width_scaling import (
    DECAYS_LIKE_INVERSE_N,
    EFFECT,
    EXACT_BAND,
    EXACT_HALF,
)
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS"]

_PAPER = "Sun & Raskutti 2026"


# ------------------------------------------------------------ Cor 2 at finite width

TRAINED_TASK_VECTORS = Simulation(
    "early_stopping.cor2.trained",
    es.simulate_trained_task_vectors,
    {
        # The prediction needs ε λ_max(G_tt)/N ≤ 1; at n = 16 λ_max fluctuates so much across
        # seeds (ε λ_max/N up to 0.95 at η_0 = 0.5) that no fixed η_0 guarantees it, so the
        # step is capped by the kernel at θ_PT (κ = 0.9). 12 seeds: at 4 the slope's CI
        # (t_3 = 3.18) reached above −0.3 at one seed in six although the mean slope is ≈ −1.2.
        **es.TRAINED_TASK_VECTOR_SETTINGS,
    },
    key_name="early_stopping.cor2.trained_cosine_matches_kernel",  # the v1 claim's key
)
#: κ of both scales' settings: the fine-tuning step is min(η_0/n, κN/λ_max).
_STEP_CAP = es.TRAINED_TASK_VECTOR_SETTINGS["full"].base.kernel_step_cap
assert all(s.base.kernel_step_cap == _STEP_CAP for s in es.TRAINED_TASK_VECTOR_SETTINGS.values())
#: ε = κN/λ_max and then ε λ_max/N in float32: two roundings of each factor.
STEP_ROUND_OFF = Tolerance(
    "round-off", 1e-5,
    "float32: λ_max by singular values against eigvalsh, then κN/λ and ελ/N: the two routes "
    "agree to 3.6e-7 relative (quick, seeds 0, 1), ×25",
)  # fmt: skip
COSINE_TOL = Tolerance(
    "chosen",
    0.05,
    "|cos_trained − cos_predicted| at the largest width; cosines span [−1, 1]",
    observed="max gap 0.008 at n = 64 (quick) and ≤ 0.009 at n = 256 (full), per seed",
)


def check_trained_cosine(run: es.TrainedTaskVectorSweep):
    """max_{s≠t}|cos(τ_s, τ_t) − predicted| ≤ 0.05 at the largest width, decreasing in n."""
    widths = np.asarray(run.widths)
    off = ~np.eye(es.NUM_TASKS, dtype=bool)
    cosine, predicted = np.asarray(run.runs.cosine), np.asarray(run.runs.predicted_cosine)
    gap = np.abs(cosine - predicted)[..., off].max(axis=-1)  # (W, S)
    fit = es.fit_log_log_rate(widths, gap)
    return all_of(
        compare_v2(gap[-1], COSINE_TOL.value, relation="upper_bound", tolerance=COSINE_TOL),
        estimate_in(
            fit.slope,
            fit.interval,
            AtMost(-0.5 + EFFECT.value),
            num_instances=gap.shape[1],
            tolerance=EFFECT,
        ),  # fmt: skip
        # the prediction assumes ε λ_max(G_tt)/N ≤ 1 (task_vector_coefficients); the setting
        # caps the step at κN/λ_max with κ = 0.9, so ε λ_max/N ≤ κ up to float32 round-off.
        # λ_max of each block by its spectral norm (singular values), not the eigenvalue
        # that set ε, so a wrong λ_max in the cap does not cancel
        compare_v2(
            np.asarray(run.runs.task_kernel_step).max(axis=-1).ravel(),
            _STEP_CAP,
            relation="upper_bound",
            atol=STEP_ROUND_OFF.value * _STEP_CAP,  # relative round-off of κ
            tolerance=STEP_ROUND_OFF,
        ),  # fmt: skip
        diagnostics={
            "widths": widths,
            "mean max gap per width": gap.mean(axis=1),
            "slope of the gap": fit.slope,
            "95% CI": list(fit.interval),
            "trained cosine range": [float(cosine[..., off].min()), float(cosine[..., off].max())],
            "median normalised multi-task performance at the largest width": np.median(
                np.asarray(run.runs.normalised)[-1], axis=0
            ),
        },
        notes="attention block in SP (2 heads, 1/d logits) pretrained on a source task, "
        "fine-tuned by GD on 4 tasks (A, B on one token subspace, C half-overlapping, D "
        "orthogonal); prediction c_sᵀG_stc_t/√(c_sᵀG_ssc_s·c_tᵀG_ttc_t) from the NTK at θ_PT "
        "(float32). Criteria: gap ≤ 0.05 for every seed at the largest width; the gap's "
        "slope CI ≤ −1/2 + 0.2 (Lemma 1's linearisation rate); ε λ_max(G_tt)/N ≤ κ = 0.9, the "
        "setting's cap on the step (the prediction needs ≤ 1).",
    )


# ------------------------------------------------------------------- Lemma 5, eq. (97)

MIXED_INIT = Simulation(
    "early_stopping.lemma5.random_init",
    es.simulate_mixed_init,
    {
        # quick: widths 16–64 (≈ 7 s of run after compilation; 32–128 took ≈ 50 s of CPU);
        # 24 seeds keep the steeper small-width slope's CI (≈ −1.2…−1.3 at 12 seeds, lower
        # ends down to −1.55) inside the counterexample's [−1.6, −0.7]
        "quick": es.WidthScalingSetting(
            num_target=8, pretrain_steps=100, widths=(16, 32, 64), num_seeds=24
        ),
        # full: 12 seeds; at 40 (91 s) the slope was −0.99 [−1.03, −0.95], so at 12 its CI
        # (≈ ±0.08) stays ≥ 0.5 from −0.3 and ≥ 0.2 from the counterexample's [−1.6, −0.7]
        "full": es.WidthScalingSetting(pretrain_steps=200, num_seeds=12),
    },
    key_name="early_stopping.lemma5.random_init_runs",  # the v1 claims' key id
)


#: e = (head block − x⁰x⁰ᵀ/n) + (backbone block − (1/n)WJ_BB(θ_0)J_BB(θ_0)ᵀWᵀ) is computed in
#: float32 from four N×N matrices of Frobenius norm ≤ ‖Θ‖_F (PSD blocks of Θ and their
#: random-init counterparts): regrouping the sums moves ‖e‖_F by ≲ 8·2^{−24}‖Θ‖_F ≈ 5e-7‖Θ‖_F.
ROUND_OFF_PARTS = Tolerance(
    "round-off",
    1e-5,
    "float32 regrouping of four N×N matrices of norm ≤ ‖Θ‖_F: ≲ 5e-7 relative to ‖Θ‖_F, ×20",
)


def _parts_consistent(run: es.MixedInitSweep):
    """Second route to ‖e‖_F/‖Θ‖_F: e is the sum of its eq. (94) (head) and eq. (96)
    (backbone) parts, so |‖e_94‖ − ‖e_96‖| ≤ ‖e‖ ≤ ‖e_94‖ + ‖e_96‖ (all over ‖Θ‖_F)."""
    total = np.asarray(run.relative_error).ravel()
    head, backbone = np.asarray(run.head_error).ravel(), np.asarray(run.backbone_error).ravel()
    bounds = dict(atol=ROUND_OFF_PARTS.value, tolerance=ROUND_OFF_PARTS)
    return all_of(
        compare_v2(total, head + backbone, relation="upper_bound", **bounds),
        compare_v2(total, np.abs(head - backbone), relation="lower_bound", **bounds),
    )


def _expansion(run: es.MixedInitSweep, region: Interval, tolerance: Tolerance):
    widths = np.asarray(run.widths)
    fit = es.fit_log_log_rate(widths, np.asarray(run.relative_error))
    parts = {
        name: es.fit_log_log_rate(widths, np.asarray(getattr(run, field))).slope
        for name, field in (
            ("slope of the head part (eq. 94)", "head_error"),
            ("slope of the backbone part (eq. 96)", "backbone_error"),
            ("slope of ‖θ_PT − θ_0‖", "pretrain_distance"),
        )
    }
    rate = estimate_in(
        fit.slope,
        fit.interval,
        region,
        num_instances=np.asarray(run.relative_error).shape[1],
        tolerance=tolerance,
        diagnostics={
            "slope of ‖e‖_F/‖Θ‖_F": fit.slope,
            "95% CI": list(fit.interval),
            "widths": widths,
            "mean ‖e‖_F/‖Θ‖_F per width": np.asarray(run.relative_error).mean(axis=1),
            **parts,
            "max source loss at θ_PT": float(np.max(run.source_loss)),
        },
        notes="Pretrained backbone + fresh head W ~ N(0, 1/n): e = Θ − (1/n)WJ_BB(θ_0)"
        "J_BB(θ_0)ᵀWᵀ − x⁰x⁰ᵀ/n on the target inputs; mean over seeds of the per-seed "
        "log–log slope in n, 95% Student-t CI over seeds. Every measured ‖e‖_F/‖Θ‖_F must "
        "lie within the triangle bounds of its eq. (94) and eq. (96) parts.",
    )
    return all_of(rate, _parts_consistent(run))


def check_random_init_expansion(run: es.MixedInitSweep):
    """‖e‖_F/‖Θ‖_F = O(√log n/√n): slope ≤ −1/2 + EFFECT (eq. (97))."""
    return _expansion(run, AtMost(-0.5 + EFFECT.value), EFFECT)


def check_random_init_expansion_half(run: es.MixedInitSweep):
    """Derived: the slope lies in −1/2 ± 0.15 (refuted: it decays like n^{−1})."""
    return _expansion(run, EXACT_HALF, EXACT_BAND)


# ----------------------------------------------------------- Thm 1, learning curves

_LC_SIZES = (25, 50, 100, 200, 400, 800)
_LC_TAIL = 3  # the tail fit uses the three largest N (200, 400, 800)
#: seeds per scale, multiples of the batch; the in-span target's rates sit far from −0.3
#: (−0.86 [−0.93, −0.79] over all N, tail −0.74 [−0.92, −0.56] at width 12 × 20 seeds), so
#: its quick run needs fewer seeds than the teacher's (whose tail decides by ≈ 0.06–0.10)
_LC_SEEDS = {"quick": 40, "full": 36}
# full, in-span target: 12 seeds; at 36 its slopes were −1.01 [−1.07, −0.95] (all N) and
# −0.91 [−1.04, −0.77] (tail): at 12 the tail CI (≈ ±0.25) stays ≥ 0.3 from −0.3
_LC_SEEDS_KERNEL = {"quick": 16, "full": 12}
_LC_BATCH = {"quick": 8, "full": 2}  # full: a (1000 × P) float64 Jacobian per seed
_LC_RANK = 16  # full-rank Gaussian tokens (d⁰ = 16): no subspace structure
_LC_SETTINGS = {
    # quick: width 12 × 40 seeds (one run shared by two claims). At width 32 × 8 seeds the
    # teacher's tail CI (≈ [−0.41, −0.12]) straddled −0.3; at width 16 × 16 it did at one
    # seed in three; at width 12 × 20 it decided, but by 0.016–0.019 at two seeds of three.
    "quick": es.LearningCurveSetting(
        width=12,
        ranks=(_LC_RANK,),
        sizes=_LC_SIZES,
        num_test=100,
        pretrain_steps=100,
        beta_points=50,
        max_steps=2000,
    ),
    "full": es.LearningCurveSetting(ranks=(_LC_RANK,), sizes=_LC_SIZES),
}


def _lc_simulation(name: str, target: str, key_name: str) -> Simulation:
    seeds = _LC_SEEDS_KERNEL if target == "kernel" else _LC_SEEDS
    return Simulation(
        name,
        es.simulate_learning_curves,
        {
            scale: es.LearningCurveSweepSetting(
                base=dataclasses.replace(_LC_SETTINGS[scale], target=target),
                num_seeds=seeds[scale],
                batch_size=_LC_BATCH[scale],
            )
            for scale in ("quick", "full")
        },
        x64=True,  # as the experiment: NTK spectra span many decades
        key_name=key_name,
    )


def _curve_rate(run: es.LearningCurves, tail: bool):
    errors = np.asarray(run.errors)[:, 0]  # (seeds, sizes), the one task
    sizes = np.asarray(_LC_SIZES, float)
    fitted = slice(len(sizes) - _LC_TAIL, None) if tail else slice(None)
    fit = es.fit_log_log_rate(sizes[fitted], errors[:, fitted].T)
    beta = float(np.asarray(run.betas).mean())
    return estimate_in(
        fit.slope,
        fit.interval,
        AtMost(-0.5 + EFFECT.value),
        num_instances=errors.shape[0],
        tolerance=EFFECT,
        diagnostics={
            "N fitted": sizes[fitted],
            "slope": fit.slope,
            "95% CI": list(fit.interval),
            "mean test MSE / mean Δ² per N": errors.mean(axis=0),
            "fitted NTK decay β": beta,
            "eq. (30) rate −2β/(2β+1)": -2 * beta / (2 * beta + 1),
            "mean kept step per N": np.asarray(run.kept_steps)[:, 0].mean(axis=0),
        },
        notes="hold-out-stopped linearised fine-tuning (kernel GD on the NTK at θ_PT) of the "
        "pretrained attention block; nested samples (keys shared across N); mean over seeds "
        "of the per-seed log–log slope, 95% Student-t CI over seeds.",
    )


def check_curve_rate(run: es.LearningCurves):
    """Test MSE slope over all N ≤ −1/2 + EFFECT (Thm 1's O(N^{−1/2}), on the CI)."""
    return _curve_rate(run, tail=False)


def check_curve_tail_rate(run: es.LearningCurves):
    """The same over the three largest N."""
    return _curve_rate(run, tail=True)


#: The counterexample of the teacher's tail rate: Δ (a tanh teacher) is not in the span of the
#: finite-width NTK, so the test error tends to a positive approximation floor and its local
#: log–log slope rises from the in-span rate toward 0 at large N; the region is disjoint from
#: the statement's ≤ −0.3, and its upper end 0.05 leaves room for a quick-scale CI around a
#: slope near 0 (the error never grows with N on nested samples).
APPROXIMATION_FLOOR = EstimateIn(
    Interval(-0.5 + EFFECT.value, 0.05),
    "Δ outside the finite-width NTK's RKHS: the error approaches a positive floor, so the "
    "tail slope is shallower than -0.3",
)

_LC_TEACHER = "early_stopping.thm1.learning_curves_teacher"
_LC_KERNEL = "early_stopping.thm1.learning_curves_kernel"

LC_TEACHER = _lc_simulation("early_stopping.thm1.teacher", "teacher", _LC_TEACHER)
LC_KERNEL = _lc_simulation("early_stopping.thm1.kernel", "kernel", _LC_KERNEL)

CLAIMS = (
    ClaimV2(
        id="early_stopping.cor2.trained_cosine_matches_kernel",
        paper=f"{_PAPER}, Cor 2, eqs. (25), (107)–(109), Lemma 1, Sec 7.2",
        statement="Attention block fine-tuned on four tasks by GD: the trained task vectors' "
        "cosines match the linearised-model prediction c_sᵀG_stc_t/(‖J_sᵀc_s‖‖J_tᵀc_t‖) from "
        "the NTK at θ_PT to ≤ 0.05 at the largest width, and the gap decays at least like "
        "n^{−1/2} (slope CI ≤ −0.3).",
        kind="trend",
        reading=derived(
            "Cor 2 and Lemma 1 describe task vectors through the linearised model; the project "
            "tests that picture on the trained network's cosines (Sec 7.2's Fig. 3 quantity)"
        ),
        uses=TRAINED_TASK_VECTORS,
        check=check_trained_cosine,
        min_instances=12,  # at 4 seeds the slope's CI was too wide (t_3 = 3.18)
        experiment="early_stopping/task_vectors",
    ),
    ClaimV2(
        id="early_stopping.lemma5.random_init_expansion",
        paper=f"{_PAPER}, Lemma 5, eqs. (94), (96)–(97)",
        statement="Pretrained backbone + fresh head W ~ N(0, 1/n): Θ = (1/n)WJ_BB(θ_0)"
        "J_BB(θ_0)ᵀWᵀ + x⁰x⁰ᵀ/n + e (x⁰ = f_BB(θ_0)) with ‖e‖_F/‖Θ‖_F = O(√log n/√n): its "
        "fitted slope in n is ≤ −1/2 + 0.2 (and each measured ‖e‖_F lies within the "
        "triangle bounds of its eq. (94) and (96) parts).",
        kind="rate",
        reading=printed(
            "“the norm of error term e vanishes to 0 with rate O(√log n / n^{1/2})” (eq. (97))"
        ),
        uses=MIXED_INIT,
        check=check_random_init_expansion,
        min_instances=6,
    ),
    ClaimV2(
        id="early_stopping.lemma5.random_init_expansion_slope_half",
        paper=f"{_PAPER}, Lemma 5, eq. (97) read as an exact rate",
        statement="(Derived reading, stronger than the paper's upper bound.) ‖e‖_F/‖Θ‖_F "
        "decays exactly like n^{−1/2}: its fitted slope lies in −1/2 ± 0.15.",
        kind="rate",
        reading=derived(
            "the project reads the printed O(√log n/√n) as the exact rate n^{-1/2} (fitted "
            "slope within -1/2 ± 0.15); the paper states an upper bound, so this refutes a "
            "reading, not the paper"
        ),
        uses=MIXED_INIT,
        check=check_random_init_expansion_half,
        expect="refuted",
        counterexample=DECAYS_LIKE_INVERSE_N,
        twin="early_stopping.lemma5.random_init_expansion",
        min_instances=6,
    ),
    ClaimV2(
        id="early_stopping.thm1.learning_curve_rate",
        paper=f"{_PAPER}, Thm 1, eq. (15), Sec 7.1, Fig. 2, applied outside Assumption 4.1",
        statement="Hold-out-stopped fine-tuning of the pretrained attention block on a "
        "tanh-teacher target f_tgt = f_PT + Δ (Δ is NOT in the NTK's span: outside "
        "Assumption 4.1, so outside Thm 1's hypotheses): the test MSE's fitted slope in "
        "N ∈ [25, 800] is ≤ −1/2 + 0.2 (on its CI).",
        kind="rate",
        reading=derived(
            "the project applies Thm 1's O(N^{-1/2}) to the tanh teacher of the "
            "learning_curves figure, which violates Assumption 4.1 (Δ not in the NTK's span)"
        ),
        uses=LC_TEACHER,
        check=check_curve_rate,
        min_instances=8,
        experiment="early_stopping/learning_curves",
    ),
    ClaimV2(
        id="early_stopping.thm1.learning_curve_tail_rate",
        paper=f"{_PAPER}, Thm 1, eq. (15) read as a rate at large N, applied outside "
        "Assumption 4.1",
        statement="(Derived reading beyond the theorem's hypotheses.) The same tanh-teacher "
        "target, whose Δ is not in the NTK's span (Assumption 4.1 fails, so Thm 1 does not "
        "apply): the O(N^{−1/2}) rate persists at large N, i.e. the fitted slope over "
        "N ∈ {200, 400, 800} is ≤ −1/2 + 0.2 (on its CI). Refuted: the error flattens toward "
        "an approximation floor (slope CI inside (−0.3, 0.05]); not a statement of the paper.",
        kind="rate",
        reading=derived(
            "Thm 1's “‖f_T̂op − f_tgt‖²_2 ≤ O(N_2^{-1/2})” (eq. (15)), which the paper says "
            "“should be interpreted as an upper bound” (Sec 6.3), applied by the project to a "
            "tanh teacher that violates Assumption 4.1 and read as holding at the largest N"
        ),
        uses=LC_TEACHER,
        check=check_curve_tail_rate,
        expect="refuted",
        counterexample=APPROXIMATION_FLOOR,
        twin="early_stopping.thm1.learning_curve_rate",
        min_instances=8,
        experiment="early_stopping/learning_curves",
    ),
    ClaimV2(
        id="early_stopping.thm1.learning_curve_rate_rkhs",
        paper=f"{_PAPER}, Thm 1, eq. (15) under Assumption 4.1",
        statement="With Δ = f_tgt − f_PT in the span of the NTK at θ_PT (Assumption 4.1): the "
        "test MSE's fitted slope in N ∈ [25, 800] is ≤ −1/2 + 0.2 (on its CI).",
        kind="rate",
        reading=derived(
            "eq. (15), “‖f_T̂op − f_tgt‖²_2 ≤ O(N_2^{-1/2})”, measured with hold-out stopping "
            "in place of the rule T̂_op, as the paper's experiments stop: a rate for hold-out "
            "does not carry over to T̂_op (holdout.rule_beats_holdout finds hold-out better "
            "at σ = 0.5), so this is the project's reading, not the printed theorem"
        ),  # fmt: skip
        uses=LC_KERNEL,
        check=check_curve_rate,
        min_instances=8,
        experiment="early_stopping/learning_curves",
    ),
    ClaimV2(
        id="early_stopping.thm1.learning_curve_tail_rate_rkhs",
        paper=f"{_PAPER}, Thm 1, eq. (15) under Assumption 4.1, at large N",
        statement="With Δ in the NTK's span the rate persists at large N: the fitted slope over "
        "N ∈ {200, 400, 800} is ≤ −1/2 + 0.2 (on its CI).",
        kind="rate",
        reading=derived(
            "eq. (15), “‖f_T̂op − f_tgt‖²_2 ≤ O(N_2^{-1/2})”, at the largest N, with hold-out "
            "stopping in place of T̂_op (as learning_curve_rate_rkhs)"
        ),
        uses=LC_KERNEL,
        check=check_curve_tail_rate,
        min_instances=8,
        experiment="early_stopping/learning_curves",
    ),
)
