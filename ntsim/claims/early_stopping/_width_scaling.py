"""Claims on width scaling of the attention model (Sun & Raskutti 2026, Thms 3, 5; Lemmas 1, 2).

Every claim reads one sweep of :func:`ntsim.theory.early_stopping.simulate_width_scaling`
(pretrain on a synthetic source task, fine-tune on a related target task, at widths ``n`` ×
seeds, keys shared across widths) or of :func:`~ntsim.theory.early_stopping.simulate_init_logits`.
A rate is the mean over seeds of the per-seed least-squares slope of ``log(quantity)`` on
``log n`` with its 95% Student-t interval over seeds
(:func:`~ntsim.theory.early_stopping.fit_log_log_rate`), decided on that interval
(:func:`~ntsim.claims.estimate_in`): never on the point estimate.

The paper's width statements are upper bounds — ``θ_PT ∈ B(θ_0, C_1 n^{−1/2})`` (Thm 3,
Step 1), ``sup_τ ‖K_PT − K_τ‖_F ≤ O(n^{−1/2})`` (eq. (17)), ``‖e‖ = Õ(n^{−1/2})`` (Lemma 1) —
so each is checked as ``slope ≤ −1/2 + EFFECT`` (``EFFECT = 0.2``). Reading them as the
exact rate ``n^{−1/2}`` is the project's own (``derived``) reading; the kernel drift and
the linearisation gap decay like ``n^{−1}`` (the second-order mechanism: the NTK of a wide
network moves by ``O(1/n)`` during training, and so does the network's distance to its
linearisation), so that reading is refuted with an explicit counterexample, and the
printed bound holds.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, EstimateIn, Simulation, derived, printed
from ntsim.claims._decisions import AtMost, Interval, Tolerance, all_of, estimate_in
from ntsim.core import mean_ci
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS", "INIT_LOGITS", "WIDTH_SCALING"]

_PAPER = "Sun & Raskutti 2026"
_HALF = -0.5

#: The sweep every width claim reads. Quick: small samples and few steps (quick exists to
#: catch bugs), 4 widths × 24 seeds so that the slope CIs are narrow enough to decide; widths
#: 16–128 (≈ 25 s of run after compilation; 32–256 took several times longer).
WIDTH_SCALING = Simulation(
    "early_stopping.width_scaling",
    es.simulate_width_scaling,
    {
        "quick": es.WidthScalingSetting(
            num_source=8,
            num_target=8,
            num_test=8,
            pretrain_steps=100,
            finetune_steps=60,
            record_every=20,
            widths=(16, 32, 64, 128),
            num_seeds=24,
        ),  # fmt: skip
        "full": es.WidthScalingSetting(),
    },
    key_name="early_stopping.width_scaling.runs",  # the v1 claims' key id
)

INIT_LOGITS = Simulation(
    "early_stopping.init_logits",
    es.simulate_init_logits,
    {
        # quick: widths 64–512 (at 32–128 the small-n tails of the q·k sums steepened
        # both slopes by ≈ 0.07, one CI half-width from the band's edge: inconclusive at
        # one seed of 12); 50 seeds per width, as full
        "quick": es.InitLogitSetting(widths=(64, 128, 256, 512)),
        "full": es.InitLogitSetting(),
    },
    key_name="early_stopping.lemma2.logit_scaling",  # the v1 claim's key
)

#: How far above −1/2 a fitted slope may lie and still be "O(n^{−1/2})".
EFFECT = Tolerance(
    "chosen",
    0.2,
    "finite widths are pre-asymptotic and the O(·) constants unknown: a log n factor (Lemma "
    "1's Õ; Lemma 2's H̃ = O(log^α n)) alone has local log–log slope 1/ln n = 0.22 at n = 90, "
    "the geometric middle of the quick widths; 0.2 keeps 'slope ≤ −0.3' well apart from no "
    "decay (slope 0) while allowing n^{−1/2} with such corrections",
    observed="quick (widths 32–256, 24 seeds), seeds 0–2: ‖θ_PT − θ_0‖ slope −0.44…−0.54, "
    "CI upper ends −0.36…−0.47; drift −1.01…−1.03, linearisation −1.01…−1.15; v1 quick runs: "
    "−0.44…−0.45, −1.03…−1.10, −0.94…−1.02",
)
#: The derived "exact rate −1/2" reading: the slope's CI inside −1/2 ± 0.15 (a band narrower
#: than EFFECT, so that it stays disjoint from the n^{−1} counterexample region).
EXACT_BAND = Tolerance(
    "chosen",
    0.15,
    "half-width of the band around −1/2 that the exact-rate reading allows; below the gap "
    "between the exponents −1/2 and −1",
    observed="v1 quick runs: −1.03…−1.10 (drift), −0.94…−1.02 (linearisation)",
)
EXACT_HALF = Interval(_HALF - EXACT_BAND.value, _HALF + EXACT_BAND.value)
#: The counterexample of the exact-rate reading: the second-order mechanism gives n^{−1};
#: −0.7 keeps the region disjoint from EXACT_HALF with 0.05 to spare, −1.6 leaves room for
#: the pre-asymptotic steepening seen at small widths and for a quick-scale CI (±0.3).
DECAYS_LIKE_INVERSE_N = EstimateIn(
    Interval(-1.6, -0.7),
    "decays like n^{-1}: the NTK of a wide network and its distance to the linearisation "
    "move by O(1/n) during training, not O(n^{-1/2})",
)


def _rate(run, field: str):
    return es.fit_log_log_rate(np.asarray(run.widths), np.asarray(getattr(run, field)))


def _diagnostics(run, field: str, fit) -> dict:
    return {
        f"slope of {field}": fit.slope,
        "95% CI": list(fit.interval),
        "per-seed slopes (min, max)": [float(fit.slopes.min()), float(fit.slopes.max())],
        "widths": np.asarray(run.widths),
        f"mean {field} per width": np.asarray(getattr(run, field)).mean(axis=1),
        "max source loss at θ_PT": float(np.max(run.source_loss)),
        "mean target loss, start → end": [
            float(np.mean(run.target_loss_start)),
            float(np.mean(run.target_loss_end)),
        ],
    }


def _estimate(run, field: str, region: Interval, tolerance: Tolerance):
    fit = _rate(run, field)
    values = np.asarray(getattr(run, field))
    return estimate_in(
        fit.slope,
        fit.interval,
        region,
        num_instances=values.shape[1],
        tolerance=tolerance,
        diagnostics=_diagnostics(run, field, fit),
        notes=f"mean over {values.shape[1]} seeds of the per-seed log–log slope of {field} in "
        f"n over widths {tuple(int(w) for w in run.widths)}; 95% Student-t CI over seeds.",
    )


#: The pretraining-distance claim's own threshold (its statement, not an allowance around
#: −1/2): "decays at least like n^{−0.3}".
DECAYS = Tolerance(
    "chosen",
    0.3,
    "the claim states decay at least like n^{-0.3} (slope ≤ -0.3): clearly apart from no "
    "decay (slope 0), and weaker than the printed n^{-1/2}, which a width sweep cannot decide",
    observed="quick (widths 32–256, 24 seeds), seeds 0–2: slope −0.44…−0.54, CI upper ends "
    "−0.36…−0.47; widths 16–128: −0.51 [−0.59, −0.44], −0.42 [−0.48, −0.36]; full −0.48 "
    "[−0.56, −0.39]",
)


def check_pretraining_distance(run: es.WidthScalingSweep):
    """Thm 3 / Step 1, weakened: ‖θ_PT − θ_0‖ decays at least like n^{−0.3} (slope CI ≤ −0.3)."""
    return _estimate(run, "pretrain_distance", AtMost(-DECAYS.value), DECAYS)


def check_kernel_drift_bound(run: es.WidthScalingSweep):
    """Eq. (17)/(99): sup_τ ‖K_τ − K_PT‖_F/‖K_PT‖_F = O(n^{−1/2}): slope ≤ −1/2 + EFFECT."""
    return _estimate(run, "kernel_drift", AtMost(_HALF + EFFECT.value), EFFECT)


def check_kernel_drift_half(run: es.WidthScalingSweep):
    """Derived: the drift's slope lies in −1/2 ± EFFECT (refuted: it decays like n^{−1})."""
    return _estimate(run, "kernel_drift", EXACT_HALF, EXACT_BAND)


def check_linearisation_bound(run: es.WidthScalingSweep):
    """Lemma 1, eq. (14): sup_τ ‖f_τ − f_τ^lin‖_{L2(test)} = Õ(n^{−1/2})."""
    return _estimate(run, "linearisation_error", AtMost(_HALF + EFFECT.value), EFFECT)


def check_linearisation_half(run: es.WidthScalingSweep):
    """Derived: the linearisation gap's slope lies in −1/2 ± EFFECT (refuted: ≈ −1)."""
    return _estimate(run, "linearisation_error", EXACT_HALF, EXACT_BAND)


#: The logits' mean square against its closed form at the Gaussian init (anchor of eq. (3)).
MOMENT_BAND = Tolerance(
    "chosen",
    0.1,
    "mean of S²/E[S² | h] within 1 ± 0.1: a 10% error in the mean square is a 5% error in the "
    "scale s of eq. (3); the Monte Carlo CI over 50 seeds is ≈ ±0.02",
    observed="quick (widths 64–512, 50 seeds), seeds 0, 1: 0.978 [0.956, 1.000], 0.996 "
    "[0.976, 1.017] under both scalings",
)


def _moment(values, name: str):
    """Mean over seeds of S²/E[S² | h] (averaged over widths), decided on its 95% CI."""
    per_seed = np.asarray(values).mean(axis=0)
    mean, interval = mean_ci(per_seed)
    return estimate_in(
        float(mean),
        interval,
        Interval(1 - MOMENT_BAND.value, 1 + MOMENT_BAND.value),
        num_instances=per_seed.size,
        tolerance=MOMENT_BAND,
        diagnostics={f"mean S²/E[S² | h] under {name}": float(mean)},
    )


def check_logit_scaling(run: es.InitLogits):
    """max|S_h| at init: slope in −1/2 ± EFFECT under 1/d, in 0 ± EFFECT under 1/√d.

    Anchor: eq. (3) fixes the logits' scale, S = s·(hW^Q)(hW^K)ᵀ with s = 1/d (or 1/√d), and
    at the Gaussian init of App. B.2 (W^Q, W^K ~ N(0, 1/n), d = n) q_t·k_s given h has
    variance ‖h_t‖²‖h_s‖²/n, so E[S² | h] = s²‖h_t‖²‖h_s‖²/n exactly. The simulation's mean
    of S²/E[S² | h] must be 1 (its CI within 1 ± MOMENT_BAND) under each scaling: a slope
    is blind to a constant factor on the logits, this is not.
    """
    widths = np.asarray(run.widths)
    parts = [
        _moment(run.inverse_moment, "1/d"),
        _moment(run.inverse_sqrt_moment, "1/sqrt(d)"),
    ]
    for name, values, target in (
        ("1/d", run.inverse, _HALF),
        ("1/sqrt(d)", run.inverse_sqrt, 0.0),
    ):
        values = np.asarray(values)
        fit = es.fit_log_log_rate(widths, values)
        parts.append(
            estimate_in(
                fit.slope,
                fit.interval,
                Interval(target - EXACT_BAND.value, target + EXACT_BAND.value),
                num_instances=values.size,
                tolerance=EXACT_BAND,
                diagnostics={
                    f"slope under {name}": fit.slope,
                    f"95% CI under {name}": list(fit.interval),
                    f"mean max|S| per width under {name}": values.mean(axis=1),
                },
            )
        )
    return all_of(
        *parts,
        notes=f"SP init, max over heads, token pairs and 16 Gaussian source sequences; widths "
        f"{tuple(int(w) for w in widths)} × {np.asarray(run.inverse).shape[1]} seeds (keys "
        "shared across widths); 95% Student-t CIs over the per-seed slopes. Anchor: the mean "
        "of S²/(s²‖h_t‖²‖h_s‖²/n) over heads, pairs, inputs and widths is 1 at the N(0, 1/n) "
        "init (CI over seeds within 1 ± 0.1) under each scale s of eq. (3).",
    )


_EXACT_READING = (
    "the project reads the printed O(n^{-1/2}) as the exact rate n^{-1/2} (fitted slope "
    "within -1/2 ± 0.15); the paper states an upper bound, so this refutes a reading, not "
    "the paper"
)

CLAIMS = (
    Claim(
        id="early_stopping.thm3.pretraining_distance",
        paper=f"{_PAPER}, Thm 3, proof sketch Step 1, Fig. 1",
        statement="(Weaker than the printed radius: what a finite-width sweep can decide.) "
        "Pretraining by GD with step η_0/n from the SP Gaussian init moves θ by a distance "
        "that shrinks with the width at least like n^{−0.3}: the fitted slope of "
        "‖θ_PT − θ_0‖ in n has its CI ≤ −0.3. The printed B(θ_0, C_1 n^{−1/2}) itself is not "
        "decided: the slope CIs (≈ −0.44…−0.54, half-width ≈ 0.06–0.08 at quick scale, "
        "−0.48 [−0.56, −0.39] at full scale) contain −1/2 and cannot separate n^{−1/2} from "
        "n^{−0.4}, so against slope ≤ −1/2 they are inconclusive.",
        kind="rate",
        reading=derived(
            "the paper prints “θ_PT lies in the neighborhood of θ_0 with controlled radius, "
            "which is B(θ_0, C_1 n^{-1/2})” (Sec 4.2, proof sketch, step 1), an upper bound with "
            "an unknown constant; the project tests only that the distance decays with n at "
            "least like n^{-0.3} (decay clearly apart from none), not the exponent -1/2"
        ),
        uses=WIDTH_SCALING,
        check=check_pretraining_distance,
        min_instances=6,
    ),
    Claim(
        id="early_stopping.thm5.kernel_drift_bound",
        paper=f"{_PAPER}, Thm 5, eqs. (17), (99)",
        statement="During fine-tuning from θ_PT, sup_τ ‖K_τ − K_PT‖_F/‖K_PT‖_F = O(n^{−1/2}): "
        "its fitted slope in n is ≤ −1/2 + 0.2.",
        kind="rate",
        reading=printed("“sup_τ ‖K_PT − K_τ‖_F ≤ O(d^{l−1/2})” (eq. (17)); (99): ≤ C n^{-1/2}"),
        uses=WIDTH_SCALING,
        check=check_kernel_drift_bound,
        min_instances=6,
    ),
    Claim(
        id="early_stopping.thm5.kernel_drift_slope_half",
        paper=f"{_PAPER}, Thm 5, eqs. (17), (99) read as an exact rate",
        statement="(Derived reading, stronger than the paper's upper bound.) The relative "
        "kernel drift decays exactly like n^{−1/2}: its fitted slope lies in −1/2 ± 0.15.",
        kind="rate",
        reading=derived(_EXACT_READING),
        uses=WIDTH_SCALING,
        check=check_kernel_drift_half,
        expect="refuted",
        counterexample=DECAYS_LIKE_INVERSE_N,
        twin="early_stopping.thm5.kernel_drift_bound",
        min_instances=6,
    ),
    Claim(
        id="early_stopping.lemma1.linearisation_bound",
        paper=f"{_PAPER}, Lemma 1, eq. (14) (Lemma 6, eq. (100))",
        statement="sup_τ ‖f_τ − f_τ^lin‖_{L2(test)} (network vs its linearisation at θ_PT, "
        "same GD) = Õ(n^{−1/2}): its fitted slope in n is ≤ −1/2 + 0.2.",
        kind="rate",
        reading=printed("“the L_2-norm of the error term e is bounded by Õ(1/d^{1/2})” (Lemma 1)"),
        uses=WIDTH_SCALING,
        check=check_linearisation_bound,
        min_instances=6,
    ),
    Claim(
        id="early_stopping.lemma1.linearisation_slope_half",
        paper=f"{_PAPER}, Lemma 1, eq. (14) read as an exact rate",
        statement="(Derived reading, stronger than the paper's upper bound.) The linearisation "
        "gap decays exactly like n^{−1/2}: its fitted slope lies in −1/2 ± 0.15.",
        kind="rate",
        reading=derived(_EXACT_READING),
        uses=WIDTH_SCALING,
        check=check_linearisation_half,
        expect="refuted",
        counterexample=DECAYS_LIKE_INVERSE_N,
        twin="early_stopping.lemma1.linearisation_bound",
        min_instances=6,
    ),
    Claim(
        id="early_stopping.lemma2.logit_scaling",
        paper=f"{_PAPER}, eq. (3), Lemma 2, eq. (51)",
        statement="At the SP init, max|S_h| shrinks like n^{−1/2} under 1/d logit scaling and "
        "stays O(1) under 1/√d (fitted slopes within ±0.15 of −1/2 and 0); the logits carry "
        "eq. (3)'s scale s exactly: at the N(0, 1/n) init E[S² | h] = s²‖h_t‖²‖h_s‖²/n "
        "(the measured mean ratio's CI within 1 ± 0.1 under each scaling).",
        kind="rate",
        reading=derived(
            "eq. (3) scales the logits by 1/d^{l,G} (“crucial” for the proofs) and (51) bounds "
            "‖ΔS‖ by O(n)/d^{l,G}; the project derives the exact rates at init: q·k is a sum "
            "of n independent O(1) terms, so |S| ∝ n^{-1/2} under 1/d and O(1) under 1/√d"
        ),
        uses=INIT_LOGITS,
        check=check_logit_scaling,
        min_instances=150,
    ),
)
