"""Planted bugs on the overtraining claims' own paths: each must change the outcome.

Every test monkeypatches one formula a claim reads (×2, a dropped term, an off-by-one, a
sign) and runs the claim through :func:`ntsim.claims.run_claims` at quick scale, seed 0;
the registered claims' unpatched verdicts are checked by ``test_registered_claims``.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ntsim.theory.overtraining._perturbation as perturbation
import ntsim.theory.overtraining._pretraining_runs as pretraining_runs
from ntsim.claims import get_claim, run_claims
from ntsim.claims.overtraining import _contraction as contraction
from ntsim.theory import overtraining as ot


def _outcome(claim_id: str):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,))
    return record


# ------------------------------------------------------------------------------ perturbation


def test_doubled_increment_formula_refutes_prop4_3(monkeypatch):
    original = ot.perturbed_increments
    monkeypatch.setattr(ot, "perturbed_increments", lambda s, g: 2 * original(s, g))
    record = _outcome("overtraining.prop4_3.increment")
    assert record.verdict == "refuted" and not record.as_expected


def test_off_by_one_inflection_formula_refutes_thm4_4(monkeypatch):
    original = ot.gaussian_inflection
    monkeypatch.setattr(ot, "gaussian_inflection", lambda s, g: original(s, g) + 1)
    assert _outcome("overtraining.thm4_4.inflection").verdict == "refuted"


def test_doubled_hessian_trace_refutes_prop_d1(monkeypatch):
    original = ot.hessian_trace
    monkeypatch.setattr(ot, "hessian_trace", lambda w1, w2: 2 * original(w1, w2))
    assert _outcome("overtraining.prop_d1.hessian_trace").verdict == "refuted"


@pytest.mark.parametrize("factor", [0.0, 2.0])
def test_wrong_quartic_term_of_the_perturbed_loss_is_caught(monkeypatch, factor):
    """Dropping (or doubling) the d³γ⁴ term of the closed form: the Monte Carlo claim and the
    Prop D.1 decomposition both notice."""
    original = perturbation.expected_perturbed_loss

    def planted(w1, w2, a, gamma):
        d = w1.shape[0]
        return original(w1, w2, a, gamma) + (factor - 1.0) * d**3 * gamma**4

    monkeypatch.setattr(perturbation, "expected_perturbed_loss", planted)
    monkeypatch.setattr(ot, "expected_perturbed_loss", planted)
    assert _outcome("overtraining.lemma_a5.expected_perturbed_loss").verdict == "refuted"
    assert _outcome("overtraining.prop_d1.hessian_trace").verdict == "refuted"


# ------------------------------------------------------------------------------- pretraining


def test_wrong_logistic_rate_refutes_the_closed_form(monkeypatch):
    original = ot.logistic_modes
    monkeypatch.setattr(ot, "logistic_modes", lambda s, tau, t: original(s, tau, 0.5 * t))
    assert _outcome("overtraining.thm4_1.logistic_closed_form").verdict == "refuted"


def test_smaller_lemma_a6_bound_refutes_it(monkeypatch):
    """At quick scale (τ = 16) the gap sits ≈ 100× below σ_d²/2, so only an error of that
    size in the bound is caught here; the claim at smaller τ (diagnostics) shows the rest."""
    original = ot.lemma_a6_gap_bound
    monkeypatch.setattr(ot, "lemma_a6_gap_bound", lambda s: 1e-3 * original(s))
    assert _outcome("overtraining.lemma_a6.real_vs_ideal_gap").verdict == "refuted"


def test_swapped_singular_vectors_break_the_factor_claims(monkeypatch):
    """Ideal checkpoints built from (V, U) instead of (U, V) (the transposed task): the
    corrected twin of the printed factor alignment no longer holds."""
    original = ot.ideal_checkpoints
    monkeypatch.setattr(ot, "ideal_checkpoints", lambda s, u, v: original(s, v, u))
    assert _outcome("overtraining.thm4_1.incremental_learning").verdict == "refuted"


# ------------------------------------------------------------------------------ budget sweep


def test_sign_flipped_perturbation_increase_refutes_progressive_sensitivity(monkeypatch):
    import ntsim.theory.overtraining._budget_sweep as sweep

    original = sweep.perturbation_loss_increase
    monkeypatch.setattr(sweep, "perturbation_loss_increase", lambda *a, **k: -original(*a, **k))
    assert _outcome("overtraining.budget.progressive_sensitivity").verdict == "refuted"


# -------------------------------------------------------------------------------- fine-tuning


def _expect(claim_id: str) -> tuple[str, bool]:
    record = _outcome(claim_id)
    return record.verdict, record.as_expected


def test_printed_recursion_replaced_by_the_corrected_one_is_no_longer_refuted(monkeypatch):
    original = ot.mode_trajectory
    monkeypatch.setattr(ot, "mode_trajectory", lambda *a, printed=False, **k: original(*a, **k))
    assert _expect("overtraining.lemma_a7.recursion_printed") == ("holds", False)


@pytest.mark.parametrize("factor", ["2x", "half"])
def test_wrong_printed_map_breaks_the_recursion_counterexample(monkeypatch, factor):
    """eq. (18) with another λ term than the printed one (2x·(σ^pre − x²) or 0.5·(σ^pre − x²),
    neither is eq. 18): GD still deviates, but the map no longer reaches the printed map's
    closed-form fixed point, so the refutation is no longer the expected one."""
    import jax.numpy as jnp

    import ntsim.theory.overtraining._finetuning as finetuning

    def planted(x, sigma_ft, sigma_pre, *, learning_rate, reg, printed=False):
        x = jnp.asarray(x)
        wrong = 2.0 * x if factor == "2x" else 0.5
        reg_term = (sigma_pre - x**2) * (wrong if printed else x)
        return x + 2 * learning_rate * x * (sigma_ft - x**2) + 2 * learning_rate * reg * reg_term

    monkeypatch.setattr(finetuning, "mode_step", planted)
    assert _expect("overtraining.lemma_a7.recursion_printed") == ("refuted", False)


@pytest.mark.parametrize(
    ("planted", "verdict"),
    [
        # the printed side "fixed": part 0 holds, part 1 (the swap gap) fails
        (lambda p, f, r: ot.fixed_point(p, f, r), "refuted"),
        (lambda p, f, r: p + r * f, "refuted"),  # the (1 + λ) dropped: too far off
    ],
)
def test_printed_fixed_point_in_both_directions(monkeypatch, planted, verdict):
    monkeypatch.setattr(ot, "fixed_point_printed", planted)
    assert _expect("overtraining.lemma_a11.fixed_point_printed") == (verdict, False)


def test_fixed_point_off_by_a_little_refutes_the_corrected_claims(monkeypatch):
    original = ot.fixed_point
    monkeypatch.setattr(ot, "fixed_point", lambda p, f, r: original(p, f, r) * (1 + 1e-6))
    assert _outcome("overtraining.lemma_a11.fixed_point").verdict == "refuted"
    assert _outcome("overtraining.lemma_a28.contraction").verdict == "refuted"


def test_printed_contraction_target_replaced_by_the_corrected_one(monkeypatch):
    monkeypatch.setattr(ot, "fixed_point_printed", ot.fixed_point)
    assert _expect("overtraining.lemma_a28.contraction_printed") == ("holds", False)


# ----------------------------------------------------------------------- finite-batch dynamics


def test_dropped_growth_factor_in_lemma_a19_refutes_it(monkeypatch):
    """The growth factor (1 + 32ηΓ)^k dropped: the real-vs-ideal gap outgrows the bound."""
    monkeypatch.setattr(ot, "lemma_a19_bound", lambda e, g, gap, k: gap + 0 * k)
    assert _outcome("overtraining.lemma_a19.real_vs_ideal_growth").verdict == "refuted"


def test_smaller_one_step_bound_refutes_lemma_a15(monkeypatch):
    original = ot.lemma_a15_bound
    monkeypatch.setattr(ot, "lemma_a15_bound", lambda e, g, eps: 0.01 * original(e, g, eps))
    assert _outcome("overtraining.lemma_a15.one_step_batch_gap").verdict == "refuted"


def test_a_batch_error_measured_against_2i_refutes_lemma_a12():
    """The finite-batch run records ‖Σ_k − 2I‖ instead of ‖Σ_k − I‖ (≈ 1 + the true error):
    the bounds of Lemmas A.15–A.20 only loosen, but the Gaussian form of A.12 is refuted."""
    import dataclasses

    claim = get_claim("overtraining.lemma_a12.batch_concentration")
    true_fn = claim.uses.fn

    def planted(key, setting):
        run = true_fn(key, setting)
        return run._replace(batch_error=1 + run.batch_error)

    uses = dataclasses.replace(claim.uses, fn=planted, name=claim.uses.name + ".planted")
    (record,) = run_claims([dataclasses.replace(claim, uses=uses)], scale="quick", seeds=(0,))
    assert record.verdict == "refuted"


def test_the_gaussian_batch_bound_without_its_deviation_term_is_refuted(monkeypatch):
    """t dropped from (1 + √(d/m) + t)² − 1: the largest of 320 batch errors exceeds it."""
    import ntsim.claims.overtraining._batch_concentration as concentration

    def planted(d, batch, batches, delta):
        return (1 + (d / batch) ** 0.5) ** 2 - 1

    monkeypatch.setattr(concentration, "gaussian_batch_error_bound", planted)
    assert _outcome("overtraining.lemma_a12.batch_concentration").verdict == "refuted"


# --------------------------------------------------------------------------- post fine-tuning


def test_doubled_a24_bound_refutes_progressive_sensitivity(monkeypatch):
    original = ot.a24_increment_bound
    monkeypatch.setattr(ot, "a24_increment_bound", lambda *a: 2 * original(*a))
    assert _outcome("overtraining.thm4_6.progressive_sensitivity").verdict == "refuted"


def test_an_off_by_one_inflection_breaks_the_regularisation_pair(monkeypatch):
    """Def 4.2 read one checkpoint late: both A.27 claims compare the measured inflections
    with min{n : σ^ft_n > (2 + λ)σ^pre_n} − 1, derived in the claim without the theory's
    functions, so the corrected ordering is refuted and the printed one's counterexample
    (whose mechanism part no longer holds) stops matching."""
    original = ot.inflection_point
    monkeypatch.setattr(ot, "inflection_point", lambda losses: original(losses) + 1)
    assert _outcome("overtraining.thm4_7.regularisation_delays_inflection").verdict == "refuted"
    printed = _outcome("overtraining.thm4_7.regularisation_printed")
    assert printed.verdict == "refuted" and not printed.as_expected


def test_a_step_beyond_assumption_a8_leaves_the_regularisation_pair_undecided(monkeypatch):
    """The sweep's one η set for its smallest λ instead of its largest (max ↔ min): at λ = 4,
    4η(λ + 2)Γ = 0.8·6/2 = 2.4, outside A.8, and neither claim decides (the printed twin's
    refutation included: a counterexample must meet the hypotheses)."""
    import ntsim.theory.overtraining._post_finetuning_runs as post

    def planted(pre, ft, u, v, regs, steps):
        gamma = jnp.maximum(pre[0], ft[0])
        eta = post.A8_FRACTION / (4 * (jnp.min(jnp.asarray(regs)) + 2) * gamma)

        def at(reg):
            _, pre_loss, id_loss = post.finetune_ideal_checkpoints(
                pre, ft, u, v, learning_rate=eta, reg=reg, num_steps=steps
            )
            return pre_loss, id_loss

        return jax.vmap(at)(jnp.asarray(regs)), eta

    monkeypatch.setattr(post, "_curves", planted)
    for claim_id in ("overtraining.thm4_7.regularisation_delays_inflection",
                     "overtraining.thm4_7.regularisation_printed"):  # fmt: skip
        assert _outcome(claim_id).verdict == "inconclusive"


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_scaled_printed_fixed_point_no_longer_matches_its_counterexample(monkeypatch, factor):
    """The printed Lemma A.11 limit off by a factor: still refuted, but the deviation is no
    longer the closed-form swap gap, so the counterexample stops matching."""
    original = ot.fixed_point_printed
    monkeypatch.setattr(ot, "fixed_point_printed", lambda p, f, r: factor * original(p, f, r))
    record = _outcome("overtraining.lemma_a11.fixed_point_printed")
    assert record.verdict == "refuted" and not record.as_expected


def test_printed_map_replaced_by_the_correct_one_is_caught(monkeypatch):
    """eq. (18)'s printed map swapped for the correct one: part 0 holds, part 1 fails, and
    the counterexample (all instances deviate, the map reaches its own fixed point) does
    not match."""
    import ntsim.theory.overtraining._finetuning as finetuning

    original = finetuning.mode_step

    def corrected(x, sigma_ft, sigma_pre, *, learning_rate, reg, printed=False):
        return original(x, sigma_ft, sigma_pre, learning_rate=learning_rate, reg=reg)

    monkeypatch.setattr(finetuning, "mode_step", corrected)
    assert _expect("overtraining.lemma_a7.recursion_printed")[1] is False


# --------------------------------------------------------------------------- post-finetuning


def test_misalignment_threshold_leaves_out_the_gap_of_its_own_run():
    """The check drops the modes whose σ^ft/σ^pre lies in the band the run's setting
    excluded (at whatever scale it ran), and decides the sign on the others."""
    import numpy as np

    from ntsim.claims.overtraining._post_finetuning import check_misalignment_threshold

    pre = np.ones((1, 3))
    ft = np.array([[3.0, 1.9, 0.5]])  # ratios 3.0 (above 2), 1.9 (near 2), 0.5 (below)
    right_signs = np.array([[0.4, -0.1, -0.5]])  # 1.9 < 2: the increment is negative
    for gap, kept in (((1.8, 2.2), 2), ((1.0, 1.5), 3)):
        run = ot.ThresholdRun(pre, ft, right_signs, gap, (0.3, 5.0))
        result = check_misalignment_threshold(run)
        assert result.diagnostics["modes kept (ratio outside the gap)"] == kept
    # a wrong sign on the mode at ratio 1.9 is forgiven only where its gap leaves it out
    wrong = np.array([[0.4, 0.1, -0.5]])
    forgiven = check_misalignment_threshold(ot.ThresholdRun(pre, ft, wrong, (1.8, 2.2), (0.3, 5.0)))
    caught = check_misalignment_threshold(ot.ThresholdRun(pre, ft, wrong, (1.0, 1.5), (0.3, 5.0)))
    assert forgiven.worst_margin >= 0 and caught.worst_margin < 0


def test_misalignment_threshold_undecided_where_the_run_does_not_bracket_2():
    """A run whose nearest kept ratios sit farther than one gap width from the gap cannot
    tell a threshold of 2 from one of 2.7: its "holds" becomes inconclusive, and a wrong
    sign is still a refutation there (a design check, not a hypothesis)."""
    from ntsim.claims.overtraining._post_finetuning import check_misalignment_threshold

    def outcome(ratios, increments):
        run = ot.ThresholdRun(np.ones((1, 2)), np.array([ratios]), np.array([increments]),
                              (1.8, 2.2), (0.3, 5.0))  # fmt: skip
        return check_misalignment_threshold(run).outcome

    assert outcome([2.3, 1.7], [0.3, -0.2]) == "holds"
    assert outcome([2.7, 1.7], [0.3, -0.2]) == "inconclusive"  # window [1.4, 2.6]
    assert outcome([2.3, 1.3], [0.3, -0.2]) == "inconclusive"
    assert outcome([2.3], [0.3]) == "inconclusive"  # one side only
    assert outcome([5.3, 1.7], [0.3, -0.2]) == "inconclusive"  # above the drawn range's 5
    assert outcome([2.7, 1.7], [-0.3, -0.2]) == "refuted"  # the sign is wrong at 2.7


# ------------------------------------------------------- hypotheses measured on the run


def _with_fn(claim_id: str, fn):
    """The claim at quick scale, seed 0, with its simulation replaced by ``fn``."""
    import dataclasses

    claim = get_claim(claim_id)
    uses = dataclasses.replace(claim.uses, fn=fn, name=claim.uses.name + ".planted")
    (record,) = run_claims([dataclasses.replace(claim, uses=uses)], scale="quick", seeds=(0,))
    return record


def test_lemma_a9_holds_and_is_attained_on_the_genuine_run():
    record = _outcome("overtraining.lemma_a9.well_bounded")
    assert record.verdict == "holds"


def test_iterates_a_thousandth_too_large_refute_lemma_a9(monkeypatch):
    """θ̂ scaled by 1.001 (a checkpoint or step off by 0.1%): ‖θ̂‖_op = σ^pre_1 = Γ at
    k = 0 on about half the instances, so the bound is exceeded there."""
    import ntsim.theory.overtraining._finetuning_runs as runs

    original = runs.finetune_ideal_checkpoints

    def planted(*args, **kwargs):
        thetas, pre_losses, id_losses = original(*args, **kwargs)
        return 1.001 * thetas, pre_losses, id_losses

    monkeypatch.setattr(runs, "finetune_ideal_checkpoints", planted)
    assert _outcome("overtraining.lemma_a9.well_bounded").verdict == "refuted"


def test_gamma_read_from_the_pretraining_spectrum_alone_refutes_lemma_a9(monkeypatch):
    """Γ = σ^pre_1 in place of eq. 12's max{σ^pre_1, max σ^ft}: learned modes converge
    toward (σ^ft + λσ^pre)/(1 + λ) > σ^pre_1 when σ^ft_1 > σ^pre_1."""
    import numpy as np

    import ntsim.claims.overtraining._hypotheses as hypotheses

    monkeypatch.setattr(hypotheses, "eq12_gamma", lambda pre, ft: np.asarray(pre)[..., 0])
    assert _outcome("overtraining.lemma_a9.well_bounded").verdict == "refuted"


def test_a_learning_rate_beyond_assumption_a8_leaves_lemma_a9_undecided(monkeypatch):
    """Γ taken as the smallest fine-tuning value (max ↔ min): η exceeds A.8 on the instances
    where σ^ft_1 > 1.25 max{σ^pre_1, σ^ft_d}, and the claim decides nothing."""
    import jax.numpy as jnp

    import ntsim.theory.overtraining._finetuning_runs as runs

    def planted(spectrum_pre, spectrum_ft, reg):
        gamma = jnp.maximum(spectrum_pre[0], spectrum_ft.min())
        return runs.A8_FRACTION / (4 * (reg + 2) * gamma), gamma

    monkeypatch.setattr(runs, "a8_learning_rate", planted)
    record = _outcome("overtraining.lemma_a9.well_bounded")
    assert record.verdict == "inconclusive"


def test_lemma_a26_holds_on_the_genuine_run():
    assert _outcome("overtraining.lemma_a26.strong_misalignment").verdict == "holds"


def test_pretraining_and_id_losses_swapped_refute_lemma_a26(monkeypatch):
    """The post-FT loss read against A^ft instead of A^pre: on a learned mode the ID loss
    falls, (a_n − σ^ft_n)² − (σ^ft_n)² < 0, so the strongly misaligned modes go negative."""
    import ntsim.theory.overtraining._post_finetuning_runs as post

    original = post.finetune_ideal_checkpoints

    def planted(*args, **kwargs):
        thetas, pre_losses, id_losses = original(*args, **kwargs)
        return thetas, id_losses, pre_losses

    monkeypatch.setattr(post, "finetune_ideal_checkpoints", planted)
    assert _outcome("overtraining.lemma_a26.strong_misalignment").verdict == "refuted"


def test_a_run_without_strongly_misaligned_modes_leaves_lemma_a26_undecided():
    """Ratios σ^ft/σ^pre drawn in [0.3, 3.9] (outside (1.8, 2.2)): no mode has
    σ^ft_n > 4σ^pre_n, and the claim decides nothing."""
    import dataclasses

    true_fn = get_claim("overtraining.lemma_a26.strong_misalignment").uses.fn

    def planted(key, setting):
        return true_fn(
            key, dataclasses.replace(setting, ratio_gap=(1.8, 2.2), ratio_range=(0.3, 3.9))
        )

    record = _with_fn("overtraining.lemma_a26.strong_misalignment", planted)
    assert record.verdict == "inconclusive"


# ------------------------------------------------- Lemma A.28's rate, checkpoint times, A.6's cap


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_scaled_contraction_rate_gap_refutes_the_one_step_factor(monkeypatch, factor):
    """ρ = 1 − 2η·min scaled in its gap: ×½ is a looser rate the contraction bound cannot
    notice, ×2 a valid but different one; the proof's one-step identity pins both."""
    monkeypatch.setattr(
        ot, "contraction_rate", lambda p, f, eta: 1 - factor * 2 * eta * jnp.minimum(f, p)
    )
    assert _outcome("overtraining.lemma_a28.one_step_factor").verdict == "refuted"
    if factor == 0.5:
        assert _outcome("overtraining.lemma_a28.contraction").verdict == "holds"


def test_a_step_beyond_lemma_a28s_hypothesis_leaves_its_claims_undecided():
    """The run's η computed without λ's terms: 4 of 5 instances break the hypothesis, which
    the claims measure on the recorded η (the conclusions alone would still hold)."""

    def planted(key, setting):
        run = original(key, setting)
        eta = 0.95 / ((run.reg + 2) * 2 * jnp.maximum(run.pre, run.ft))
        x = ot.mode_trajectory(run.pre, run.ft, learning_rate=eta, reg=run.reg,
                               num_steps=setting.steps)  # fmt: skip
        return run._replace(learning_rate=eta, x=x)

    original = ot.simulate_contraction
    uses = dataclasses.replace(contraction.CONTRACTION, fn=planted)
    for claim_id in ("lemma_a28.contraction", "lemma_a28.one_step_factor"):
        claim = dataclasses.replace(get_claim(f"overtraining.{claim_id}"), uses=uses)
        (record,) = run_claims([claim], scale="quick", seeds=(0,))
        assert record.verdict == "inconclusive"


def test_a_step_far_below_lemma_a28s_limit_leaves_the_bound_undecided():
    """The run at half the largest step the hypothesis allows: the contraction bound still
    holds there, but the lemma's "the hypothesis suffices" is tested only near the cap, so
    the bound is inconclusive; the printed twin's refutation and the one-step identity, which
    hold or fail at any step, are decided as before."""

    def planted(key, setting):
        run = original(key, setting)
        eta = run.learning_rate / 2
        x = ot.mode_trajectory(run.pre, run.ft, learning_rate=eta, reg=run.reg,
                               num_steps=setting.steps)  # fmt: skip
        return run._replace(learning_rate=eta, x=x)

    original = ot.simulate_contraction
    uses = dataclasses.replace(contraction.CONTRACTION, fn=planted)
    expected = {"contraction": "inconclusive", "contraction_printed": "refuted",
                "one_step_factor": "holds"}  # fmt: skip
    for claim_id, verdict in expected.items():
        claim = dataclasses.replace(get_claim(f"overtraining.lemma_a28.{claim_id}"), uses=uses)
        (record,) = run_claims([claim], scale="quick", seeds=(0,))
        assert record.verdict == verdict, claim_id


def test_checkpoint_times_with_the_log1p_sign_flipped_refute_the_logistic_claim(monkeypatch):
    """t_n's log1p(−e^(−2τ)/σ_n) term is ≤ 2% of the log ratio at τ ≥ 3; part 0 evaluates the
    closed form wherever the run saved, so only part 1 (the ODE at the formula's times) can
    see the flipped sign."""

    def planted(spectrum, tau, factor=1e3):
        spectrum = jnp.asarray(spectrum)
        log_ratio = jnp.log(spectrum) + 2 * tau - jnp.log1p(-jnp.exp(-2 * tau) / spectrum)
        return (log_ratio + jnp.log(factor)) / (4 * spectrum)

    monkeypatch.setattr(pretraining_runs, "checkpoint_times", planted)
    assert _outcome("overtraining.thm4_1.logistic_closed_form").verdict == "refuted"


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_scaled_lemma_a6_bound_refutes_the_composition(monkeypatch, factor):
    original = ot.lemma_a6_gap_bound
    monkeypatch.setattr(ot, "lemma_a6_gap_bound", lambda s: factor * original(s))
    assert _outcome("overtraining.lemma_a6.constants_compose").verdict == "refuted"


def test_a_doubled_cap_of_assumption_a2_refutes_the_composition(monkeypatch):
    original = ot.assumption_a2_bound
    monkeypatch.setattr(ot, "assumption_a2_bound", lambda s, g: 2 * original(s, g))
    assert _outcome("overtraining.lemma_a6.constants_compose").verdict == "refuted"


def test_the_composition_is_undecided_below_sigma_1_of_one_over_16d():
    """A spectrum with σ_1 < 1/(16d): A.2's cap is σ_1/2, and the chain bound falls short of
    σ_d²/2 (hand-computed: 32·0.001·0.0024·0.0005 / (0.0009²/2) ≈ 0.0948). That instance is
    outside the statement, so the check leaves it undecided rather than refuting it."""
    from ntsim.claims.overtraining import _pretraining as claims_pretraining

    spectrum = jnp.array([[0.001, 0.001, 0.0009, 0.0009]])
    gammas = jnp.array([0.02])
    cap = ot.assumption_a2_bound(spectrum[0], gammas[0])
    np.testing.assert_allclose(cap, 0.0005, rtol=1e-6)
    chain = 8 * 4 * 0.001 * (2 * 0.001 + 0.02**2) * cap
    np.testing.assert_allclose(chain / (0.0009**2 / 2), 0.0948, rtol=1e-3)
    empty = jnp.zeros((1, 1, 1, 5))
    run = ot.RealVsIdealGapRun(spectrum, jnp.array([1.0]), gammas, empty, empty[..., 0, :])
    result = claims_pretraining.check_constants_compose(run)
    assert result.outcome == "inconclusive"
    assert "σ_1 ≥ 1/(16d)" in result.notes


def test_a_run_that_skips_the_last_checkpoints_leaves_prop_d1_undecided():
    """n drawn from 0..d/2 instead of 0..d: the identity is still exact where it is tested,
    but the checkpoints n > d/2 the statement covers are never exercised."""
    from ntsim.claims.overtraining import _perturbation as claims_perturbation

    original = ot.simulate_hessian_traces

    def planted(key, setting):  # the instances whose n ≤ d/2: each trace matches its own n
        run = original(key, setting)
        keep = np.asarray(run.n) <= setting.d // 2
        return type(run)(*(np.asarray(field)[keep] for field in run))

    uses = dataclasses.replace(claims_perturbation.HESSIAN, fn=planted)
    claim = dataclasses.replace(get_claim("overtraining.prop_d1.hessian_trace"), uses=uses,
                                min_instances=1)  # fmt: skip
    (record,) = run_claims([claim], scale="quick", seeds=(0,))
    assert record.verdict == "inconclusive"


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_scaled_allowance_in_thm_a24s_bound_refutes_its_composition(monkeypatch, factor):
    """The bound's subtracted 3·min/(5(λ0 + 1)²) scaled (a lower bound lowered or raised):
    the bound-composition identity notices either, where the bound itself sees only a rise."""

    def planted(sigma_pre, sigma_ft, reg, reg0):
        gap2 = jnp.abs(sigma_pre - sigma_ft) ** 2
        allowance = 3 * jax.lax.cummin(gap2) / (5 * (reg0 + 1) ** 2)
        return gap2 / (1 + reg) ** 2 - factor * allowance

    monkeypatch.setattr(ot, "a24_increment_bound", planted)
    assert _outcome("overtraining.thm_a24.bound_composes").verdict == "refuted"


def test_the_sum_in_place_of_the_distance_refutes_fig8s_ordering(monkeypatch):
    """‖θ_ft + θ_pre‖ in place of ‖θ_ft − θ_pre‖ follows the growth of ‖θ_pre‖ with the
    budget, not the learning rate: the distance-ordering claim is refuted (the sanity claim,
    that it grows with the rate, still holds)."""
    import ntsim.core._train as train

    def planted(params, params0):
        leaves = jax.tree.leaves(jax.tree.map(lambda a, b: jnp.sum(jnp.square(a + b)),
                                              params, params0))  # fmt: skip
        return sum(leaves, start=jnp.zeros(()))

    monkeypatch.setattr(train, "_squared_distance", planted)
    assert _outcome("overtraining.budget.distance_set_by_learning_rate").verdict == "refuted"


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_noise_levels_off_their_stated_range_leave_thm4_4_undecided(factor):
    """2dγ² drawn ×2 (or ×½) off the stated log-uniform [σ_d/3, 3σ_1]: the inflection law is
    still exact there, so only the design check notices that the run is not the one its
    setting describes."""
    true_fn = get_claim("overtraining.thm4_4.inflection").uses.fn

    def planted(key, setting):
        run = true_fn(key, setting)
        gammas = np.sqrt(factor) * np.asarray(run.gammas)
        per_gamma = jax.vmap(ot.ideal_perturbed_losses, in_axes=(None, 0))
        losses = jax.vmap(per_gamma)(run.spectrum, gammas)  # the closed form at the new γ
        return run._replace(gammas=gammas, losses=losses)

    assert _outcome("overtraining.thm4_4.inflection").verdict == "holds"
    record = _with_fn("overtraining.thm4_4.inflection", planted)
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics


def test_noise_levels_crowded_at_the_top_of_their_range_leave_thm4_4_undecided():
    """2dγ² drawn only in the top 5% of [σ_d/3, 3σ_1] (inside the stated range): every
    inflection is at 0, so the run no longer tests the law at every r — the coverage design
    check notices (referee 64)."""
    true_fn = get_claim("overtraining.thm4_4.inflection").uses.fn

    def planted(key, setting):
        run = true_fn(key, setting)
        spectrum = np.asarray(run.spectrum)
        d = spectrum.shape[1]
        lo, hi = np.log(spectrum[:, -1:] / 3), np.log(3 * spectrum[:, :1])
        u = np.linspace(0.95, 0.999, run.gammas.shape[1])[None, :]
        gammas = np.sqrt(np.exp(lo + (hi - lo) * u) / (2 * d))
        per_gamma = jax.vmap(ot.ideal_perturbed_losses, in_axes=(None, 0))
        return run._replace(gammas=gammas, losses=jax.vmap(per_gamma)(run.spectrum, gammas))

    record = _with_fn("overtraining.thm4_4.inflection", planted)
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics


# ------------------------------------------------------------------------------ dead units


@pytest.mark.parametrize("plant", ["reg dropped", "step ×2"])
def test_a_wrong_update_breaks_the_dead_units_anchor(monkeypatch, plant):
    """A wrong update keeps the dead units at 0 (any update proportional to W2ᵀ or W1ᵀ
    does), so only the hand instance's live weight sees it: the claim becomes inconclusive."""
    import ntsim.theory.overtraining._finetuning as finetuning

    original = finetuning.finetune_step

    def planted(w1, w2, a_ft, anchor, *, learning_rate, reg=0.0, **kw):
        if plant == "reg dropped":
            return original(w1, w2, a_ft, anchor, learning_rate=learning_rate, reg=0.0, **kw)
        return original(w1, w2, a_ft, anchor, learning_rate=2 * learning_rate, reg=reg, **kw)

    monkeypatch.setattr(finetuning, "finetune_step", planted)
    record = _outcome("overtraining.lemma_a7.dead_units")
    assert record.verdict == "inconclusive" and not record.as_expected


def test_the_dead_units_hand_value_is_the_matrix_update():
    """The closed form of the hand instance against eqs. (10)–(11) stepped as matrices in
    numpy (not through ``ot.finetune``)."""
    from ntsim.claims.overtraining._finetuning import HAND_DEAD_UNITS, dead_units_by_hand

    h = HAND_DEAD_UNITS
    w1 = w2 = np.diag([h["a"], 0.0])
    a_ft, theta0 = np.diag([h["s1"], h["s2"]]), w1 @ w2
    for _ in range(2):
        g = (w1 @ w2 - a_ft) + h["reg"] * (w1 @ w2 - theta0)
        w1, w2 = w1 - 2 * h["learning_rate"] * g @ w2.T, w2 - 2 * h["learning_rate"] * w1.T @ g
    assert np.allclose(w1, np.diag([dead_units_by_hand(**h), 0.0]), rtol=1e-14, atol=0)
    assert np.allclose(w2, w1, rtol=1e-14, atol=0)


# ------------------------------------------------------------------------------ finite batch


def _finite_batch_site(after: str, operator: str):
    import inspect

    import ntsim.theory.overtraining._finite_batch as finite_batch
    from ntsim.mutation import function_sites

    source = inspect.getsource(finite_batch)
    (site,) = [s for s in function_sites(source, "simulate_finite_batch")
               if s.after == after and s.operator == operator]  # fmt: skip
    return {"module": finite_batch.__name__, "function": site.function, "index": site.index,
            "operator": site.operator, "before": site.before}  # fmt: skip


@pytest.mark.parametrize("after", ["q.T.T @ w2", "w1 @ q.T"])
def test_a_real_checkpoint_rebased_by_a_wrong_rotation_leaves_the_dynamics_undecided(after):
    """Q for Qᵀ on either factor of the re-based real checkpoint: no longer the pretrained
    network, so the lemmas' premise fails and no finite-batch verdict is given (session 38's
    matrix had both mutants survive, the bounds being loose)."""
    from ntsim.mutation import apply_mutant

    restore = apply_mutant(_finite_batch_site(after, "transpose"))
    try:
        for claim_id in ("overtraining.lemma_a17.finite_vs_infinite_batch",
                         "overtraining.lemma_a20.three_dynamics"):  # fmt: skip
            record = _outcome(claim_id)
            assert record.verdict == "inconclusive", (claim_id, record.verdict)
    finally:
        restore()
    assert _outcome("overtraining.lemma_a20.three_dynamics").verdict == "holds"


# ------------------------------------------------------------------------------ budget sweep


def _budget_run(budgets=(256, 1024)):
    distance = np.array([[1.0, 3.0, 9.0], [1.1, 3.2, 9.5]])  # set by the rate, not the budget
    nan = np.full((2, 3), np.nan)
    return ot.BudgetSweepRun(budgets=np.asarray(budgets), tokens_per_parameter=np.ones(2),
                             num_params=1, gammas=np.ones(1),
                             finetune_lrs=np.array([1e-4, 3e-4, 1e-3]), base_loss=np.ones(2),
                             perturbed_increase=np.ones((1, 2, 1, 1)),
                             finetuned_pretrain_loss=nan, finetuned_task_loss=nan,
                             distance=distance)  # fmt: skip


@pytest.mark.parametrize(
    "planted",
    [lambda progress: 2.0 * 1.0 + jnp.cos(np.pi * progress),  # the matrix's survivor
     lambda progress: jnp.cos(np.pi * progress)],  # the "1.0 +" dropped
)  # fmt: skip
def test_a_schedule_that_does_not_anneal_to_zero_leaves_fig8s_ordering_undecided(
    monkeypatch, planted
):
    from ntsim.claims.overtraining import _budget_distance

    check = _budget_distance.check_distance_set_by_learning_rate
    assert check(_budget_run()).outcome == "holds"

    def schedule(step, budget, peak, warmup):
        step = jnp.asarray(step, jnp.float32)
        ramp = jnp.minimum(1.0, step / max(warmup, 1))
        return peak * ramp * 0.5 * planted(jnp.minimum(step / budget, 1.0))

    monkeypatch.setattr(ot, "cosine_to_zero", schedule)
    assert check(_budget_run()).outcome == "inconclusive"
