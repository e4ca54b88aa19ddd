"""Claims on the model and the pretraining loss after fine-tuning (Springer et al. 2025, Thms 4.6,
4.7, Lemmas A.23–A.27).

Float64. The simulations (``simulate_progressive_sensitivity``,
``simulate_misalignment_threshold``, ``simulate_regularisation``,
``simulate_converged_model``, ``simulate_long_finetuning`` of
:mod:`ntsim.theory.overtraining`) fine-tune by GD on the matrices from every checkpoint; the
checks hold the post-fine-tuning losses against the theorems' closed forms and bounds, and
take the inflection from Def 4.2. The last claim is the simulation caveat: from *real*
checkpoints (gradient flow from ``e^{−τ}I``) a long fine-tuning run learns the unlearned modes
too and the effect vanishes.
"""

from __future__ import annotations

import jax
import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, printed
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.claims._design import sharply_tested
from ntsim.claims._mechanism import MechanismViolation
from ntsim.claims._premises import given
from ntsim.claims.overtraining._assumptions import assumption_a8_margin, eq12_gamma
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

PAPER = "Springer et al. 2025"
_EXPERIMENT = "overtraining/fig_finetuning_inflection"

SENSITIVITY = Simulation(
    "overtraining.post_finetuning.sensitivity",
    ot.simulate_progressive_sensitivity,
    ot.SENSITIVITY_SETTINGS,
    x64=True,
    key_name="overtraining.thm4_6.progressive_sensitivity",
)  # fmt: skip
THRESHOLD = Simulation(
    "overtraining.post_finetuning.threshold",
    ot.simulate_misalignment_threshold,
    ot.THRESHOLD_SETTINGS,
    x64=True,
    key_name="overtraining.thm4_7.misalignment_threshold",
)  # fmt: skip
REGULARISATION = Simulation(
    "overtraining.post_finetuning.regularisation",
    ot.simulate_regularisation,
    ot.REGULARISATION_SETTINGS,
    x64=True,
    key_name="overtraining.thm4_7.regularisation_delays_inflection",
)  # fmt: skip
CONVERGED = Simulation(
    "overtraining.post_finetuning.converged_model",
    ot.simulate_converged_model,
    {"quick": ot.ConvergedModelSetting(d=4, instances=64, tau=20.0, points=160),
     "full": ot.ConvergedModelSetting(d=8, instances=200, tau=20.0, points=600)},
    x64=True,
    key_name="overtraining.lemma_a23.converged_model",
)  # fmt: skip
LONG = Simulation(
    "overtraining.post_finetuning.long_finetuning",
    ot.simulate_long_finetuning,
    ot.LONG_FINETUNING_SETTINGS,
    x64=True,
    key_name="overtraining.caveat.long_finetuning_erases",
)  # fmt: skip

ROUND_OFF = Tolerance("round-off", 1e-10, "float64 over ≤ 3000 GD steps, relative to Γ²")
EXACT_ZERO = Tolerance("round-off", 1e-12, "float64 on O(Γ²) losses (Δ_pre(0) is 0 exactly)")
ERASED = Tolerance(
    "chosen", 0.05,
    "every real-checkpoint L_pre(n), n ≥ 1, within 5% of ‖A^ft − A^pre‖² after ηK = 30",
    observed="≤ 2.7% at d = 10 (some seeds keep a mode pretraining had suppressed below "
    "e^(−2τ) still rising at ηK = 30), while the ideal curve spans ≈ 100% (20× more)",
)  # fmt: skip
TRACKED = Tolerance(
    "chosen", 0.02,
    "at ηK = 1 real and ideal post-FT curves agree within 2% of the curve's range",
    observed="1.6% at τ = 15, ≤ 0.4% at τ = 20 (the quick and full τ)",
)  # fmt: skip


def _gamma2(pre, ft):
    return np.maximum(pre[:, :1], ft[:, :1]) ** 2


def _loss_before_finetuning(pre) -> np.ndarray:
    """The pretraining loss of the ideal checkpoint ``n`` before fine-tuning, ``Σ_(i>n) σ_i²``
    for ``n = 0..d``: ``(instances, d + 1)``."""
    tails = np.cumsum((pre**2)[:, ::-1], axis=1)[:, ::-1]
    return np.concatenate([tails, np.zeros((pre.shape[0], 1))], axis=1)


def _sensitivity_premises(pre, ft, reg, eta) -> dict:
    """Thm 4.6's hypotheses, measured on each drawn instance: positive decreasing spectra,
    (α, 1)-misalignment with α > 1 (Def 4.5: ``σ^ft_i > ασ^pre_i`` for ``i > 1``) and the
    step size of A.21(2) with ``λ0 → λ`` (``4η(λ + 2)Γ < 1``, ``Γ = max{σ^pre_1, max σ^ft}``)."""
    gamma = np.maximum(pre[:, 0], ft.max(axis=1))
    return {
        "positive decreasing spectra": (np.min(pre, axis=1) > 0)
        & np.all(np.diff(pre, axis=1) <= 0, axis=1)
        & np.all(np.diff(ft, axis=1) <= 0, axis=1),
        "(α, 1)-misaligned, α > 1": np.all(ft[:, 1:] > pre[:, 1:], axis=1),
        "4η(λ + 2)Γ < 1 (A.21(2))": 4 * eta * (reg + 2) * gamma < 1,
    }


def check_progressive_sensitivity(run: ot.SensitivityRun):
    """Thm 4.6 / A.24: ``Δ_pre(n) ≥ 0`` and non-decreasing in ``n`` under misalignment,
    decided only on instances that meet the theorem's hypotheses (:func:`given`)."""
    pre, ft, reg, eta, delta = (np.asarray(v) for v in run[:5])
    scale = _gamma2(pre, ft)
    initial = _loss_before_finetuning(pre)
    x = jax.vmap(lambda p, f, e, r: ot.mode_trajectory(
        p, f, learning_rate=e, reg=r, num_steps=run.steps)[-1])(pre, ft, eta, reg)  # fmt: skip
    at_k = np.asarray(jax.vmap(lambda m, p, f: ot.post_finetuning_losses(m, p, f)[0])(
        np.asarray(x) ** 2, pre, ft)) - initial  # fmt: skip
    bound = np.asarray(jax.vmap(ot.a24_increment_bound)(pre, ft, reg, reg))  # λ0 → λ
    increments = np.diff(delta, axis=1)
    count = pre.shape[0]
    conclusion = all_of(
        compare(increments / scale, 0.0, relation="lower_bound", num_instances=count),
        compare(delta[:, 0] / scale[:, 0], 0.0, relation="equal", atol=EXACT_ZERO.value,
                tolerance=EXACT_ZERO),
        compare(np.abs(delta - at_k) / scale, ROUND_OFF.value, relation="upper_bound",
                tolerance=ROUND_OFF),
        compare((increments - bound) / scale, 0.0, relation="lower_bound",
                atol=EXACT_ZERO.value, tolerance=EXACT_ZERO),
        diagnostics={"min increment/Γ²": (increments / scale).min(),
                     "max |Δ_pre − recursion|/Γ²": (np.abs(delta - at_k) / scale).max(),
                     "min A.24 margin/Γ²": ((increments - bound) / scale).min()},
        notes="Δ_pre(n) − Δ_pre(n−1) from GD on the matrices (≥ 0), Δ_pre(0) = 0, Δ_pre equal "
        "to the per-mode recursion at K, and A.24's increment bound with λ0 → λ (≥ 0).",
    )  # fmt: skip
    return given(conclusion, _sensitivity_premises(pre, ft, reg, eta))


def check_misalignment_threshold(run: ot.ThresholdRun):
    """Thm 4.7.1 / A.26 at λ = 0: ``L_pre(n) > L_pre(n−1)`` iff ``σ^ft_n > 2σ^pre_n``.

    The sign is decided on the modes outside the run's excluded band ``(lo, hi)`` around 2;
    a "holds" needs kept modes on both sides whose nearest ratios lie within one band width
    of it (``[lo − w, hi + w]``, ``w = hi − lo``; chosen: the registered runs' nearest sit at
    ≈ 1.78 and ≈ 2.21 inside ``[1.4, 2.6]``), else the run cannot tell 2 from a threshold
    farther off and the claim is inconclusive (:func:`~ntsim.claims._design.sharply_tested`).
    """
    pre, ft, increments = (np.asarray(v) for v in run[:3])
    ratio = ft / pre
    lo, hi = run.ratio_gap  # the band the run's ratios were drawn outside, at its own scale
    kept = (ratio <= lo) | (ratio >= hi)  # making σ^ft decreasing may move a ratio into the gap
    signed = increments * np.sign(ft - 2 * pre)
    strong = ft > 4 * pre
    below, above = ratio[kept & (ratio < 2)], ratio[kept & (ratio > 2)]
    bracket = (below.max() if below.size else -np.inf, above.min() if above.size else np.inf)
    conclusion = compare(
        signed[kept], 0.0, relation="lower_bound", num_instances=pre.shape[0],
        diagnostics={"modes kept (ratio outside the gap)": int(kept.sum()),
                     "min signed increment/Γ²": signed[kept].min(),
                     "nearest kept ratios below and above 2": bracket,
                     "(4, r)-misaligned modes": int(strong.sum()),
                     "their min increment/Γ²": increments[strong].min() if strong.any() else 0},
        notes="(L_pre(θ^n(K)) − L_pre(θ^(n−1)(K)))·sign(σ^ft_n − 2σ^pre_n)/Γ² at λ = 0, m = ∞ "
        "(> 0: the sign flips exactly at σ^ft_n = 2σ^pre_n).",
    )  # fmt: skip
    # "exactly at 2" is tested only as finely as the run brackets 2: modes far from it on
    # either side cannot tell a threshold of 2 from one of 1.5 or 2.5 (a design check: it
    # leaves a refutation standing)
    low, high = lo - (hi - lo), hi + (hi - lo)
    ceiling = run.ratio_range[1]  # the draw's; making σ^ft non-increasing only lowers a ratio
    return sharply_tested(conclusion, {
        f"kept modes on both sides of 2, the nearest within one gap width of the gap "
        f"[{low:.3g}, {high:.3g}]": np.asarray(low <= bracket[0] and bracket[1] <= high),
        f"every ratio within the drawn range's ceiling {ceiling:g}":
            ratio <= ceiling * (1 + 1e-12),
    })  # fmt: skip


def _inflections(run: ot.RegularisationRun):
    """Measured inflections (Def 4.2 on the GD post-FT ``L_pre(n)``) and the ones the
    converged closed form gives, derived here without the theory's functions: ``L_pre(n) −
    L_pre(n − 1) = (a_n − σ^pre_n)² − (σ^pre_n)²`` with ``a_n = (σ^ft_n + λσ^pre_n)/(1 + λ)``
    rises iff ``σ^ft_n > (2 + λ)σ^pre_n``, so ``r = min{n : σ^ft_n > (2 + λ)σ^pre_n} − 1``
    (``d`` if none)."""
    measured = np.asarray(ot.inflection_point(run.pre_loss))  # (instances, λ)
    pre, ft = np.asarray(run.pre)[:, None, :], np.asarray(run.ft)[:, None, :]
    rises = ft > (2 + np.asarray(run.regs)[None, :, None]) * pre  # index i: checkpoint n = i + 1
    closed = np.where(rises.any(axis=-1), rises.argmax(axis=-1), rises.shape[-1])
    return measured, closed


def _a8_premise(run: ot.RegularisationRun) -> dict[str, np.ndarray]:
    """Assumption A.8, ``4η(λ + 2)Γ < 1``, at every λ of the sweep (one η for all of them),
    per instance, with ``Γ = max{σ^pre_1, max σ^ft}`` (eq. 12) taken from the run's spectra."""
    gamma = eq12_gamma(run.pre, run.ft)[:, None]
    eta = np.asarray(run.learning_rate)[:, None]
    margin = assumption_a8_margin(eta, np.asarray(run.regs), gamma)
    return {"4η(λ + 2)Γ < 1 at every λ (A.8)": margin < 1}


def check_regularisation_delays_inflection(run: ot.RegularisationRun):
    """Thm 4.7.2 (corrected): larger λ ⇒ later (or equal) inflection and larger ID loss,
    decided where the sweep's step meets Assumption A.8 at every λ (:func:`_a8_premise`)."""
    inflection, closed = _inflections(run)
    later, costs = np.diff(inflection, axis=1), np.diff(np.asarray(run.id_loss), axis=1)
    count = inflection.shape[0]
    return given(all_of(
        compare(later, 0.0, relation="lower_bound", num_instances=count),
        compare(costs, 0.0, relation="lower_bound", num_instances=count),
        compare(inflection, closed, relation="equal", num_instances=count),
        diagnostics={"instances whose inflection moves later": np.mean(np.any(later > 0, 1)),
                     "min ID-loss increment/Γ²": costs.min()},
        notes="r(λ_(j+1)) − r(λ_j) ≥ 0 (Def 4.2 on the GD post-FT L_pre(n)), ID loss increasing "
        "in λ, and r equal to the converged closed form's, min{n : σ^ft_n > (2 + λ)σ^pre_n} − 1 "
        "(this part checks the convergence that A.21's step count, far beyond these runs, is "
        "there to ensure).",
    ), _a8_premise(run))  # fmt: skip


def check_regularisation_printed(run: ot.RegularisationRun):
    """Thm A.25 / Lemma A.27 as printed: ``λ1 > λ2 ⇒ r_{λ1} ≤ r_{λ2}`` (earlier inflection);
    part 1 pins the inflections that violate it to the converged closed form's. Under
    Assumption A.8 at every λ (:func:`_a8_premise`), or no counterexample; the pairs are
    those of the sweep's λ > 0, as A.25/A.27 assume ``λ1 > λ2 > 0``."""
    inflection, closed = _inflections(run)
    later = np.diff(inflection[:, np.asarray(run.regs) > 0], axis=1)
    mismatch = np.abs(inflection - closed).max(keepdims=True)
    return given(all_of(
        compare(later, 0.0, relation="upper_bound", num_instances=inflection.shape[0]),
        compare(mismatch, 0.0, relation="upper_bound"),
        diagnostics={"(instance, λ step) pairs moving later": np.mean(later > 0),
                     "max |r − r(closed form)|": mismatch.max()},
        notes="part 0: r(λ_(j+1)) − r(λ_j) ≤ 0 demanded over the sweep's λ > 0 (the proof of "
        "A.27 shows the opposite order); part 1: the inflections are min{n : σ^ft_n > (2 + "
        "λ)σ^pre_n} − 1, the converged closed form's, worst instance. A.21's step count "
        "(A.10's K ≥ log(100Γ/ε)/(η min σ)) is far beyond these runs; part 1 checks the "
        "convergence it is there to ensure.",
    ), _a8_premise(run))  # fmt: skip


def _a21_premises(pre, ft, reg, reg0, eta, eps, steps) -> tuple[np.ndarray, dict]:
    """``Γ`` and the parts of Assumption A.21 the ideal-init run must meet, measured on each
    instance: (1) ``0 ≤ λ < λ0``; (2) ``4η(λ0 + 2)Γ < 1``; ε below its limit
    ``min_n|σ^pre_n − σ^ft_n|²/(4000d(λ0+1)²Γ²)``; (3) ``K`` at least A.10's
    ``log(100Γ/ε)/(η min_i min{σ^pre_i, σ^ft_i})``. ``Γ = max{σ^pre_1, max σ^ft}`` (eq. 12)."""
    gamma = eq12_gamma(pre, ft)
    d = pre.shape[1]
    gap2 = np.min(np.abs(pre - ft) ** 2, axis=1)
    need = np.log(100 * gamma / eps) / (eta * np.min(np.minimum(pre, ft), axis=1))
    return gamma, {
        "0 ≤ λ < λ0 (A.21(1))": (reg >= 0) & (reg < reg0),
        "4η(λ0 + 2)Γ < 1 (A.21(2))": assumption_a8_margin(eta, reg0, gamma) < 1,
        "ε < min|σ^pre − σ^ft|²/(4000d(λ0+1)²Γ²)": eps * 4000 * d * (reg0 + 1) ** 2 * gamma**2
        < gap2,
        "K ≥ log(100Γ/ε)/(η min σ) (A.10)": steps >= need,
    }


def check_converged_model(run: ot.ConvergedModelRun):
    """Lemma A.23 (m = ∞): ``‖Uᵀθ^n(K)V − diag(target_{:n})‖_F`` within its bound, decided on
    instances that meet A.21 (:func:`_a21_premises`)."""
    pre, ft, reg, reg0 = (np.asarray(v) for v in (run.pre, run.ft, run.reg, run.reg0))
    eta, eps = np.asarray(run.eta), np.asarray(run.eps)
    gamma, premises = _a21_premises(pre, ft, reg, reg0, eta, eps, run.steps)
    cummin = np.minimum.accumulate(np.abs(pre - ft) ** 2, axis=1)
    bound = cummin / (500 * (reg0[:, None] + 1) ** 2 * gamma[:, None])  # n = 1..d
    ideal, real = np.asarray(run.ideal)[:, 1:], np.asarray(run.real)[:, 1:]
    c_tau = run.steps * np.log1p(32 * eta * gamma) - np.log(np.sqrt(gamma) * eps)
    conclusion = compare(
        ideal, bound, relation="upper_bound", num_instances=pre.shape[0],
        diagnostics={"K": run.steps, "ηK range": [float((eta * run.steps).min()),
                                                 float((eta * run.steps).max())],
                     "max measured/bound (ideal)": (ideal / bound).max(),
                     "real checkpoints: fraction within the bound": np.mean(real <= bound),
                     "Cτ A.21(5) would need": [float(c_tau.min()), float(c_tau.max())]},
        notes="after A.10's K steps (m = ∞) from the ideal checkpoints n = 1..d, against A.23's "
        "min_(i≤n)|σ^pre_i − σ^ft_i|²/(500(λ0+1)²Γ). From real checkpoints the unlearned modes "
        "grow back (the caveat claim): A.21(5) asks e^(−Cτ) ≤ Γ^(1/2)ε/(1+32ηΓ)^K, beyond "
        "float64 — the real-checkpoint half of A.23 is not simulable in its stated regime.",
    )  # fmt: skip
    return given(conclusion, premises)


def check_long_finetuning_erases(run: ot.LongFinetuningRun):
    """From real checkpoints ηK = 30 sends every ``n ≥ 1`` to ``‖A^ft − A^pre‖²``; at ηK = 1 real
    and ideal curves agree and share the inflection."""
    out = {name: np.asarray(value) for name, value in run._asdict().items()}
    dist = out["distance"][:, None]
    span = np.ptp(out["ideal_short"], axis=1, keepdims=True)
    r_ideal = np.asarray(ot.inflection_point(out["ideal_short"]))
    r_real = np.asarray(ot.inflection_point(out["real_short"]))
    r_batch = np.asarray(ot.inflection_point(out["real_short_batch"]))
    count = dist.shape[0]
    # n ≥ 1: checkpoint 0 is the init e^(−τ)I itself (training A^ft from scratch)
    return all_of(
        compare(out["real_long"][:, 1:], dist, relation="equal", rtol=ERASED.value,
                tolerance=ERASED, num_instances=count),
        compare(np.abs(out["real_short"] - out["ideal_short"]) / span, TRACKED.value,
                relation="upper_bound", tolerance=TRACKED, num_instances=count),
        compare(np.stack([r_real, r_batch]), r_ideal, relation="equal", num_instances=count),
        diagnostics={"max |L_pre/‖A^ft − A^pre‖² − 1| (n ≥ 1, ηK = 30)":
                     np.abs(out["real_long"][:, 1:] / dist - 1).max(),
                     "ideal span at ηK = 30 / ‖A^ft − A^pre‖²":
                     (np.ptp(out["ideal_long"], axis=1) / out["distance"]).min(),
                     "ideal inflections": sorted(set(r_ideal.tolist()))},
        notes="config R (σ^pre = 4·0.6^(i−1), σ^ft = 0.95^(i−1)), real checkpoints from gradient "
        "flow, η = 0.01, λ = 0: erased at ηK = 30, tracked at ηK = 1 (m = ∞ and 200).",
    )  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.thm4_6.progressive_sensitivity",
        paper=f"{PAPER}, Thm 4.6 / A.24",
        statement="Under (α, 1)-misalignment (α > 1), Δ_pre(n) = L_pre(θ^n(K)) − L_pre(θ^n(0)) "
        "is ≥ 0 and non-decreasing in n, with A.24's increment bound",
        kind="bound",
        reading=printed(
            "Thm 4.6: Δ_pre(n) ≥ 0 and non-decreasing in n under (α, 1)-misalignment; "
            "Thm A.24's increment bound |σ^pre_n − σ^ft_n|²/(1+λ)² − 3min_(i≤n)|…|²/(5(λ0+1)²)"
        ),
        uses=SENSITIVITY,
        check=check_progressive_sensitivity,
        min_instances=64,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_7.misalignment_threshold",
        paper=f"{PAPER}, Thm 4.7 part 1 / A.25.1, Lemma A.26",
        statement="At λ = 0 the post-FT pretraining loss rises at checkpoint n iff σ^ft_n > "
        "2σ^pre_n (sharp threshold; (4, r)-misalignment ⇒ increasing for n > r)",
        kind="bound",
        reading=derived(
            "Thm 4.7.1 states the increase under (4, r)-misalignment; Lemma A.26's increment "
            "(σ^ft_n − σ^pre_n)² − (σ^pre_n)² at λ = 0 changes sign exactly at σ^ft_n = "
            "2σ^pre_n, which the project checks in both directions"
        ),
        uses=THRESHOLD,
        check=check_misalignment_threshold,
        min_instances=64,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_7.regularisation_delays_inflection",
        paper=f"{PAPER}, Thm 4.7 part 2 (main text), proof of Lemma A.27",
        statement="Larger λ gives a later (or equal) inflection of the post-FT pretraining loss "
        "and a strictly larger ID loss ‖θ^n(K) − A^ft‖²",
        kind="ordering",
        reading=derived(
            "the main text's Thm 4.7.2 and the proof of Lemma A.27 ('increase under λ1 ⇒ "
            "increase under λ2', i.e. r_λ1 ≥ r_λ2); Thm A.25 prints the opposite order (twin)"
        ),
        uses=REGULARISATION,
        check=check_regularisation_delays_inflection,
        min_instances=40,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_7.regularisation_printed",
        paper=f"{PAPER}, Thm A.25 part 2 / Lemma A.27 (as printed)",
        statement="λ1 > λ2 > 0 ⇒ r_λ1 ≤ r_λ2 (larger λ gives an earlier or equal inflection)",
        kind="ordering",
        reading=printed("Thm A.25 part 2 / Lemma A.27: for λ1 > λ2 > 0, r_λ1 ≤ r_λ2"),
        uses=REGULARISATION,
        check=check_regularisation_printed,
        expect="refuted",
        # Mechanism: a larger λ pulls each learned mode toward σ^pre, so the increment
        # (a − σ^pre_n)² − (σ^pre_n)² shrinks and the inflection moves later, never earlier;
        # it moves only when the threshold (2 + λ)σ^pre crosses a checkpoint between two
        # consecutive λ. σ^ft_n/σ^pre_n grows ×1.3–2.1 per checkpoint and the thresholds are
        # ×1.2–1.5 apart, so about half the (instance, λ step) pairs move at full scale
        # (seen 54–57%, seeds 0–2) and a fifth at quick scale (18–28%). The window is chosen:
        # ≥ 2% (one of the 120 pairs at 40 instances) and ≤ 90% (only a rule that moves
        # nearly every pair falls outside). A move is a whole number of checkpoints, ≥ 1 and
        # ≤ d. Part 1 (the inflections are the converged closed form's) must hold for the
        # counterexample to match.
        counterexample=MechanismViolation(
            between=(0.02, 0.9), min_violation=1.0, max_violation=5.0, part=0
        ),  # fmt: skip
        twin="overtraining.thm4_7.regularisation_delays_inflection",
        min_instances=40,
    ),
    Claim(
        id="overtraining.lemma_a23.converged_model",
        paper=f"{PAPER}, Lemma A.23 under Assumption A.21 (m = ∞, ideal init)",
        statement="After K ≥ A.10's steps, ‖Uᵀθ^n(K)V − diag((σ^ft + λσ^pre)_(:n)/(1+λ))‖_F ≤ "
        "min_(i≤n)|σ^pre_i − σ^ft_i|²/(500(λ0+1)²Γ) for every checkpoint n",
        kind="bound",
        reading=printed(
            "“‖Uᵀθⁿ(K)V − (Σ^ft_(:n,:n) + λΣ^pre_(:n,:n))/(1+λ)‖_F ≤ "
            "min_(i≤n){|Σ^pre_ii − Σ^ft_ii|²}/(500(λ0+1)²Γ)” (Lemma A.23, under A.21; its "
            "target is printed with the modes in the right order, unlike Lemmas A.11 and A.28)"
        ),
        uses=CONVERGED,
        check=check_converged_model,
        min_instances=64,
    ),
    Claim(
        id="overtraining.caveat.long_finetuning_erases",
        paper=f"{PAPER}, Assumption A.21(3, 5) (simulation caveat)",
        statement="From real checkpoints, long fine-tuning (ηK = 30) drives L_pre(θ^n(K)) to "
        "‖A^ft − A^pre‖² for every n ≥ 1; at ηK = 1 real and ideal curves agree (m = ∞ and 200)",
        kind="bound",
        reading=derived(
            "the project's: A.21 bounds the fine-tuning length K and asks a tiny init "
            "(e^(−Cτ) ≤ Γ^(1/2)ε/(1+32ηΓ)^K); beyond that regime the effect vanishes"
        ),
        uses=LONG,
        check=check_long_finetuning_erases,
        min_instances=8,
        experiment=_EXPERIMENT,
    ),
)
