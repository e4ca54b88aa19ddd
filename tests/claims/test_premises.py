"""Premises (ntsim.claims._premises.given): a verdict only on instances the statement is
about. The unit rules, and the claims that use them going inconclusive — not holding, not
refuted — on an instance outside their theorem's hypotheses."""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.claims import compare
from ntsim.claims._design import sharply_tested
from ntsim.claims._premises import given


def _conclusion(measured):
    return compare(np.asarray(measured, float), 1.0, relation="upper_bound")


def test_premises_keep_the_verdict_when_they_hold_and_report_their_counts():
    result = given(_conclusion([0.5, 0.9]), {"η below 2/L": np.array([True, True])})
    assert result.outcome == "holds"
    assert result.diagnostics["premise: η below 2/L"] == "2 of 2"


@pytest.mark.parametrize(("measured", "verdict"), [([0.5, 0.9], "inconclusive"),
                                                   ([0.5, 1.5], "refuted")])  # fmt: skip
def test_a_failed_design_check_undecides_a_hold_and_leaves_a_refutation(measured, verdict):
    """A run that cannot test the statement sharply: "holds" means little there, but a
    counterexample on a valid instance is one whatever the design."""
    checks = {"a ratio near 2 on each side": np.array([True, False])}
    result = sharply_tested(_conclusion(measured), checks)
    assert result.outcome == verdict
    assert result.diagnostics["design: a ratio near 2 on each side"] == "1 of 2"
    assert "a ratio near 2 on each side (1 of 2 fail)" in result.notes
    passed = sharply_tested(_conclusion(measured), {"near": np.array([True, True])})
    assert passed.outcome == ("holds" if verdict == "inconclusive" else "refuted")
    with pytest.raises(TypeError, match="must be boolean"):
        sharply_tested(_conclusion(measured), {"near": np.array([1.0])})
    with pytest.raises(ValueError, match="name at least one"):
        sharply_tested(_conclusion(measured), {})


@pytest.mark.parametrize("measured", [[0.5, 0.9], [0.5, 1.5]], ids=["holds", "refuted"])
def test_a_failed_premise_makes_any_verdict_inconclusive(measured):
    """A counterexample outside the hypotheses is no counterexample: refuted → inconclusive."""
    result = given(_conclusion(measured), {"misaligned": np.array([True, False]),
                                           "positive": True})  # fmt: skip
    assert result.outcome == "inconclusive"
    assert "misaligned (1 of 2 fail)" in result.notes
    assert "positive" not in result.notes.split(":", 1)[1].split(".")[0]
    np.testing.assert_array_equal(result.measured, np.asarray(measured))


def test_premises_must_be_boolean_and_named():
    with pytest.raises(ValueError, match="at least one premise"):
        given(_conclusion([0.5]), {})
    with pytest.raises(TypeError, match="must be boolean"):
        given(_conclusion([0.5]), {"step": np.array([0.3])})
    with pytest.raises(ValueError, match="no entries"):
        given(_conclusion([0.5]), {"step": np.array([], bool)})


def _quick(claim_id: str):
    """The claim and its quick-scale run at seed 0, as the runner makes it."""
    import jax

    from ntsim.claims import claim_key, get_claim

    claim = get_claim(claim_id)
    sim = claim.uses
    with jax.enable_x64(sim.x64):
        return claim, sim.fn(claim_key(0, sim.key), sim.setting("quick"))


def _check(claim, run):
    import jax

    with jax.enable_x64(claim.uses.x64):
        return claim.check(run)


def test_progressive_sensitivity_is_inconclusive_on_spectra_that_are_not_misaligned():
    """Thm 4.6 assumes (α, 1)-misalignment (σ^ft_i > ασ^pre_i, i > 1, α > 1). With pre and ft
    swapped on half the instances — a generator that stopped drawing misaligned spectra —
    the claim decides nothing, whatever the increments do."""
    claim, run = _quick("overtraining.thm4_6.progressive_sensitivity")
    assert _check(claim, run).outcome == "holds"
    half = np.arange(run.pre.shape[0]) % 2 == 0
    pre = np.where(half[:, None], run.ft, run.pre)
    ft = np.where(half[:, None], run.pre, run.ft)
    planted = _check(claim, run._replace(pre=pre, ft=ft))
    assert planted.outcome == "inconclusive"
    assert "misaligned" in planted.notes


def test_converged_model_is_inconclusive_when_epsilon_breaks_assumption_a21():
    """Lemma A.23 holds under A.21: an ε ten times its limit (the bound itself does not read
    ε) takes the instances outside the lemma."""
    claim, run = _quick("overtraining.lemma_a23.converged_model")
    assert _check(claim, run).outcome == "holds"
    planted = _check(claim, run._replace(eps=10 * np.asarray(run.eps)))
    assert planted.outcome == "inconclusive"
    assert "ε <" in planted.notes


def _relu_risk_out(norm_error):
    """A risk run of Thm 6.1 / Cor 6.3 (two repeats) whose risks lie under both bounds."""
    ones = np.ones((2, 1, 1))
    return {"network_risk": 0.1 * ones, "thm6_1_bound": ones, "cor6_3_bound": ones,
            "source_risk": np.zeros(2), "input_norm_error": np.asarray(norm_error)}  # fmt: skip


@pytest.mark.parametrize("claim_id", ["linear_teachers.thm6_1.risk_main_term",
                                      "linear_teachers.cor6_3.risk_main_term"])  # fmt: skip
def test_relu_risk_bounds_are_inconclusive_off_the_unit_sphere(claim_id):
    """Sec 6 assumes ‖x_i‖ = 1: a run whose inputs left the sphere (a rescaled generator)
    decides neither bound, however its risks compare with them."""
    from ntsim.claims import get_claim

    check = get_claim(claim_id).check
    assert check(_relu_risk_out([0.0, 1e-7])).outcome == "holds"
    planted = check(_relu_risk_out([0.0, 1.0]))
    assert planted.outcome == "inconclusive"
    assert "unit-norm inputs" in planted.notes


def test_relu_fine_tuning_reports_how_far_its_inputs_are_from_the_sphere():
    import jax

    from ntsim.theory import linear_teachers as lt

    out = lt.simulate_relu_fine_tuning(
        jax.random.PRNGKey(0), d=3, n_source=4, n_values=(3,), gap_norms=[0.1], width=16,
        init_scale=0.1, pretrain_steps=2, fine_tune_steps=2, num_test=5,
    )  # fmt: skip
    assert 0.0 <= float(out["input_norm_error"]) < 1e-6


@pytest.mark.parametrize("sizes, outcome", [((10, 20), "holds"), ((10, 10), "inconclusive")])
def test_implied_constant_needs_two_measured_sample_sizes(sizes, outcome):
    """ "Flat in n" is a trend: a run whose groups all saw the same n (a generator that drew
    too few rows, so every slice was truncated) decides nothing about it."""
    from ntsim.claims import get_claim
    from ntsim.theory import linear_teachers as lt

    run = lt.ImpliedConstantRun(c=np.ones((2, 50)), effective_rank=np.float64(3.0),
                                n_values=sizes)  # fmt: skip
    assert get_claim("linear_teachers.thm4_2.implied_constant").check(run).outcome == outcome


def test_sizes_runs_report_the_sample_sizes_they_measured():
    import jax

    from ntsim.theory import linear_teachers as lt

    setting = lt.SizesSetting(d=6, n_values=(2, 5), draws_per_n=2)
    assert lt.simulate_identity_risk(jax.random.PRNGKey(0), setting).n_values == (2, 5)


# --- pooled noise statistics (ntsim.claims._noise_premises.pooled_z_within) --------------------


def test_pooled_z_premise_passes_standard_normal_noise_and_fails_a_shifted_signal():
    from ntsim.claims._noise_premises import PREMISE_Z, pooled_z_within

    z = np.random.default_rng(0).standard_normal((400, 2))
    assert pooled_z_within(z).tolist() == [True, True]
    shifted = z + np.array([0.0, -0.25])  # a quarter-σ shift: pooled −5 (√400 · 0.25)
    assert pooled_z_within(shifted).tolist() == [True, False]
    assert bool(pooled_z_within(np.full(16, PREMISE_Z / 4)))  # exactly at the bound
    assert not bool(pooled_z_within(np.full(16, PREMISE_Z / 4 + 1e-9)))
    with pytest.raises(ValueError, match="finite"):
        pooled_z_within(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="at least one"):
        pooled_z_within(np.array([]))


def _sobolev_sweep(noise_z):
    """A synthetic Sobolev sweep (two N × 30 draws) inside the guarantee, with ``noise_z``."""
    from ntsim.theory import early_stopping as es

    sizes = np.array([100, 200])
    bound = 12 * (17 / 16) * 0.1 * (sizes[:, None] / 100.0) ** (-2 / 3) * np.ones((2, 30))
    fields = {name: 0.01 * bound for name in es.SobolevSweep._fields}
    radius = np.sqrt(bound / (12 * (17 / 16)))  # the bound is the printed 12C_H²ϱ̂²
    fields.update(sizes=sizes, guarantee=bound, critical_radius=radius, noise_z=noise_z)
    return es.SobolevSweep(**fields)


@pytest.mark.parametrize(
    "claim_id",
    ["early_stopping.raskutti_thm1.sobolev_guarantee", "early_stopping.holdout.within_guarantee"],
)
def test_sobolev_claims_are_inconclusive_when_the_data_do_not_follow_f_star(claim_id):
    """Raskutti et al.'s Thm 1 is about y = f*(x) + w: a generator that draws y from f*/2
    (the noise along f* then has mean −‖f*‖/(2σ) per draw) leaves no verdict."""
    from ntsim.claims import get_claim

    claim = get_claim(claim_id)
    z = np.random.default_rng(1).standard_normal((2, 30))
    assert claim.check(_sobolev_sweep(z)).outcome == "holds"
    planted = claim.check(_sobolev_sweep(z - 1.0))  # pooled z ≈ −√60
    assert planted.outcome == "inconclusive"
    assert "noise centred along f*" in planted.notes


@pytest.mark.parametrize(
    "claim_id",
    ["early_stopping.raskutti_thm1.sobolev_guarantee", "early_stopping.holdout.within_guarantee"],
)
def test_sobolev_claims_are_inconclusive_when_f_star_leaves_the_ball_of_radius_c_h(claim_id):
    """Thm 1 assumes ‖f*‖_H ≤ C_H in the RKHS of the kernel GD runs with; the interpolant's
    norm f*ᵀ𝕂⁻¹f* is at most ‖f*‖²_H = 17/16 for 𝕂 = 1 + min, but ≈ 33/16 for 1 + min/2."""
    from ntsim.claims import get_claim

    claim = get_claim(claim_id)
    z = np.random.default_rng(1).standard_normal((2, 30))
    run = _sobolev_sweep(z)._replace(target_rkhs_norm_sq=np.full((2, 30), 1.06))
    assert claim.check(run).outcome == "holds"
    planted = claim.check(run._replace(target_rkhs_norm_sq=np.full((2, 30), 33 / 16)))
    assert planted.outcome == "inconclusive" and "‖f*‖_H ≤ C_H" in planted.notes


def test_sobolev_interpolant_norm_notices_a_halved_kernel(monkeypatch, x64, key):
    """The planted bug itself: 𝕂 = 1 + min(x, x')/2 in the benchmark breaks the premise (its
    RKHS norm of f* is 1/16 + 2 = 33/16), the real kernel keeps it."""
    from ntsim.claims.early_stopping._holdout import sobolev_premises
    from ntsim.theory import early_stopping as es
    from ntsim.theory.early_stopping import _sobolev

    setting = es.SobolevSweepSetting(sizes=(50,), draws=3, max_steps=20, holdout_fraction=None)
    name = "‖f*‖_H ≤ C_H: interpolant norm² ≤ 17/16"
    run = es.simulate_sobolev_sweep(key, setting)
    assert np.all(np.asarray(run.target_rkhs_norm_sq) > 0.9)
    assert sobolev_premises(run)[name].all()
    real = _sobolev.sobolev_kernel
    monkeypatch.setattr(
        _sobolev, "sobolev_kernel", lambda a, b=None: 1 + 0.5 * (real(a, b) - 1)
    )  # fmt: skip
    assert not sobolev_premises(es.simulate_sobolev_sweep(key, setting))[name].any()


def test_negation_hurts_is_inconclusive_when_fine_tuning_and_test_tasks_differ():
    """Cor 1 (eq. (105)): the fine-tuning and the test targets come from the same task δ*. A
    generator that fine-tunes on δ*/2 shifts the training noise statistic; the test one stays."""
    from ntsim.claims import get_claim
    from ntsim.theory import early_stopping as es

    claim = get_claim("early_stopping.cor1.negation_hurts")
    rng = np.random.default_rng(2)
    fields = {name: np.zeros(200) for name in es.LinearTaskVectorRun._fields}
    fields.update(
        gap_same_task=1.0 + 0.3 * rng.standard_normal(200),
        task_noise_z=rng.standard_normal((200, 2)),
    )
    run = es.LinearTaskVectorRun(**fields)
    assert claim.check(run).outcome == "holds"
    train_shifted = run.task_noise_z - np.array([1.0, 0.0])
    planted = claim.check(run._replace(task_noise_z=train_shifted))
    assert planted.outcome == "inconclusive"
    assert "fine-tuning targets" in planted.notes and "test targets" not in planted.notes
