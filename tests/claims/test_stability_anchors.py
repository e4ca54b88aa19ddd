"""The stability claims' anchors and premises: each notices the bug it was added for.

Every test first decides the claim on a correct run (small runs or synthetic run objects),
then on the same run with one quantity planted as a bug would leave it, and asserts the
verdict changes: refuted for an anchor (a value known in closed form), inconclusive for a
premise (an instance outside the statement's hypotheses).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.claims import get_claim
from ntsim.theory import stability as st
from ntsim.theory.stability import _svm_runs


def _decide(claim_id: str, run):
    with jax.enable_x64(True):
        return get_claim(claim_id).check(run)


def _small(simulate, setting):
    with jax.enable_x64(True):
        return simulate(jax.random.key(0), setting)


# ------------------------------------------------------------- pointwise lemmas (App. A.2)


def test_max_simplification_sees_a_wrong_second_argument():
    """Both sides of the identity come from lemma_a2_5_terms; the anchor recomputes the proof's
    quadratic nλu² − Bu − 2a = 0 and catches a doubled B² under the root."""
    claim_id = "stability.max_simplification.identity"
    run = _small(st.simulate_max_terms, st.RandomPointsSetting(400))
    assert _decide(claim_id, run).outcome == "holds"
    nlam = np.asarray(run.n) * np.asarray(run.lam)
    b = np.asarray(run.radius)
    a = 1.0 + b / np.asarray(run.margin)
    wrong = (b + np.sqrt(2 * b**2 + 8 * nlam * a)) / (2 * nlam)
    planted = run._replace(second=wrong, full=np.maximum(np.asarray(run.first), wrong))
    assert _decide(claim_id, planted).outcome == "refuted"


def test_lemma_a2_1_anchor_sees_the_smaller_norm_in_nu():
    """ν = 2/min(‖a‖, ‖b‖) is a looser bound that random pairs cannot refute; on the antipodal
    anchors b = −t·a the right side must be exactly 2(1 + t)."""
    claim_id = "stability.lemma_a2_1.normalization_lipschitz"
    run = _small(st.simulate_lemma_a2_1, st.RandomPointsSetting(400))
    assert _decide(claim_id, run).outcome == "holds"
    t = np.asarray(run.exact_rhs) / 2 - 1
    planted = run._replace(anchor_rhs=np.asarray(run.anchor_rhs) / t)  # 2‖a − b‖/min
    assert _decide(claim_id, planted).outcome == "refuted"


def test_lemma_a2_2_anchor_sees_a_looser_hinge_bound():
    claim_id = "stability.lemma_a2_2.hinge_difference"
    run = _small(st.simulate_lemma_a2_2, st.RandomPointsSetting(400))
    assert _decide(claim_id, run).outcome == "holds"
    assert np.all(np.asarray(run.anchor_lhs) >= 2.0)  # the attained case, not the kink
    planted = run._replace(anchor_rhs=np.asarray(run.anchor_rhs) + 0.1)
    assert _decide(claim_id, planted).outcome == "refuted"
    planted = run._replace(anchor_lhs=0.5 * np.asarray(run.anchor_lhs))  # a wrong hinge
    assert _decide(claim_id, planted).outcome == "refuted"


def test_lemma_a2_2_third_argument_anchor_sees_a_dropped_v2(monkeypatch):
    """‖v₁‖ for ‖v₁ − v₂‖ in the max's third argument keeps a true (looser) bound, since
    |f₁ − f₂| ≤ max(f₁, f₂) needs only the first two; only an instance where the third is
    attained (v₂ = v₁, b₂ on the kink) shows it."""
    claim_id = "stability.lemma_a2_2.hinge_difference"
    correct = st.lemma_a2_2_sides

    def dropped_v2(v1, b1, v2, b2, x, y):
        sides = correct(v1, b1, v2, b2, x, y)
        nx = np.linalg.norm(np.asarray(x), axis=-1)
        third = np.linalg.norm(np.asarray(v1), axis=-1) * nx + np.abs(b1) + np.abs(b2)
        return sides._replace(rhs=np.maximum(np.asarray(sides.rhs), third))

    monkeypatch.setattr(_svm_runs.ht, "lemma_a2_2_sides", dropped_v2)
    run = _small(st.simulate_lemma_a2_2, st.RandomPointsSetting(400))
    assert _decide(claim_id, run).outcome == "refuted"


def test_cor2_5_gap_is_attained_and_sees_a_doubled_bound(monkeypatch):
    """With every point inside the margin the λ-SVM is in closed form and its leave-one-out
    gap equals L_i/(2λn); the bound doubled (the printed L/(λn)) still holds everywhere."""
    claim_id = "stability.cor2_5.lambda_svm_gap"
    setting = st.SvmGapSetting(datasets=16, points=20, dim=3, lams=(1e-2, 1.0))
    run = _small(st.simulate_svm_gaps, setting)
    assert np.asarray(run.inside_margin)[:, -1].all()  # λ = 1: every point inside
    assert _decide(claim_id, run).outcome == "holds"
    monkeypatch.setattr(st, "cor2_5_gap_corrected", st.cor2_5_gap_printed)
    assert _decide(claim_id, run).outcome == "refuted"


def _gap_run(radius_from_min: bool):
    rng = np.random.default_rng(0)
    norms = rng.uniform(0.2, 1.0, (30, 8))  # 30 datasets of 8 points
    lams = np.array([1e-3, 1e-2, 1e-1])
    radius = norms.min(1) if radius_from_min else norms.max(1)
    return st.SvmGapRun(
        lams=lams, gap=np.full((30, 3), 1e-3), lipschitz=np.sqrt(norms.max(1) ** 2 + 1.0),
        radius=radius, gamma=np.full(30, 0.1), points=8, kkt=np.asarray(1e-10),
        removed_lipschitz=np.sqrt(norms[:, 0] ** 2 + 1.0), inside_margin=np.zeros((30, 3), bool),
        capped_duals=np.tile(1.0 / (2 * lams[None, :, None, None] * np.array([8, 7])[:, None]),
                             (30, 1, 1, 2)),
    )  # fmt: skip


def test_lemma_a2_5_is_inconclusive_when_b_does_not_bound_every_point():
    """Lemma A.2.5 assumes ‖x_i‖ ≤ B; a radius taken as min‖x_i‖ breaks it."""
    claim_id = "stability.lemma_a2_5.paper_setting"
    assert _decide(claim_id, _gap_run(radius_from_min=False)).outcome == "holds"
    planted = _decide(claim_id, _gap_run(radius_from_min=True))
    assert planted.outcome == "inconclusive" and "‖x_i‖ ≤ B" in planted.notes


# ------------------------------------------------------------- head tuning (Thm 2.4)


def test_svm_anchor_sees_a_rescaled_svm():
    """A solver returning 2ŵ keeps every direction: only the heads themselves show it."""
    claim_id = "stability.anchor.svm_loo_distance"
    closed = st.loo_anchor_closed_form()
    run = st.LooAnchorRun(
        steps=np.array([1, 10]), svm_distance=np.asarray(closed["distance"]),
        svm_mean=np.full(3, closed["mean_distance"]), gd_distance=np.zeros((3, 2)),
        gd_error=np.zeros((3, 2)), kkt=np.asarray(1e-10),
        svm_head_s=np.tile(closed["heads_s"], (3, 1)), svm_head_loo=np.asarray(closed["heads_loo"]),
        early_steps=np.zeros((3, 2, 2, 2)),  # not read by this claim
    )  # fmt: skip
    assert _decide(claim_id, run).outcome == "holds"
    planted = run._replace(svm_head_s=2 * run.svm_head_s, svm_head_loo=2 * run.svm_head_loo)
    assert _decide(claim_id, planted).outcome == "refuted"


def _loo_run():
    rng = np.random.default_rng(1)
    steps = np.array([1, 3, 10, 32, 100])
    e_s, e_si = (rng.uniform(0.1, 0.3, (10, 5)) / np.log(steps + 2) for _ in range(2))
    svm_direction = rng.uniform(0.0, 0.2, 10)
    lhs = 0.5 * np.abs(e_s - e_si) + 0.5 * svm_direction[:, None]  # any lhs below the sum
    return st.LooBoundRun(
        steps=steps, lhs=lhs, rhs=e_s + e_si + svm_direction[:, None], e_sum=e_s + e_si,
        nu=np.full(10, 0.2), lam=np.full(10, 1e-3), gamma=np.full(10, 0.1),
        radius=np.ones(10), svm_gap=np.full(10, 0.5), svm_direction=svm_direction,
        kkt=np.asarray(1e-10), points=40, norms=rng.uniform(0.2, 1.0, (10, 40)),
    )  # fmt: skip


def test_telescoping_sees_a_term_missing_from_its_right_side():
    claim_id = "stability.thm2_4.telescoping"
    run = _loo_run()
    assert _decide(claim_id, run).outcome == "holds"
    e_s = run.rhs - run.svm_direction[:, None] - 0.4 * run.e_sum  # some e_S < e_S + e_S^i
    planted = run._replace(rhs=e_s + run.svm_direction[:, None])
    assert np.all(planted.lhs <= planted.rhs)  # the inequality alone still holds
    assert _decide(claim_id, planted).outcome == "refuted"


def test_thm2_4_bound_is_inconclusive_when_b_does_not_bound_every_point():
    claim_id = "stability.thm2_4.bound"
    run = _loo_run()
    planted = _decide(claim_id, run._replace(radius=np.asarray(run.norms).min(1)))
    assert planted.outcome == "inconclusive" and "‖x_j‖ ≤ B" in planted.notes


def test_thm2_4_bound_sees_a_fit_of_c_that_skips_a_checked_step(monkeypatch):
    claim_id = "stability.thm2_4.bound"
    run = _loo_run()
    assert _decide(claim_id, run).outcome == "holds"

    def skips_t3(errors, steps, *, min_step=3):
        keep = np.asarray(steps) > 3
        return np.max(np.asarray(errors)[..., keep] / np.asarray(st.soudry_rate(steps[keep])), -1)

    monkeypatch.setattr(st, "fit_soudry_constant", skips_t3)
    assert _decide(claim_id, run).outcome == "refuted"


# ------------------------------------------------------------- step sizes, SVM-limit trends


@pytest.mark.parametrize("claim_id", [
    "stability.lr.descent_below_two_over_beta",
    "stability.lr.nonmonotone_above_two_over_beta",
    "stability.lr.distance_falls_with_step",
])  # fmt: skip
def test_step_size_claims_are_inconclusive_off_their_stated_steps(claim_id):
    """A step-size function off by ½ runs η·β_F = 0.5, 0.95, 1.25, …: not the claimed steps."""
    run = _small(st.simulate_step_sizes, st.StepSizeSetting(datasets=400, points=30, dim=3,
                                                             num_steps=60))  # fmt: skip
    assert _decide(claim_id, run).outcome != "inconclusive"
    assert np.allclose(run.eta_beta, run.factors[None, :], rtol=1e-12)
    planted = _decide(claim_id, run._replace(eta_beta=0.5 * np.asarray(run.eta_beta)))
    assert planted.outcome == "inconclusive" and "η·β_F as stated" in planted.notes


def _panel_run(exact: bool):
    rng = np.random.default_rng(2)
    setting = st.SyntheticPanelSetting(datasets=50, margins=(0.05, 0.2), init_norms=(0.0,),
                                       radii=(0.5, 2.0))  # fmt: skip
    params = np.repeat(np.asarray(setting.cells(), float), setting.datasets, axis=0)
    count = len(params)
    gamma = params[:, 0] * rng.uniform(0.9, 1.1, count)
    svm = params[:, 1] / params[:, 0] * rng.uniform(0.5, 1.5, count) / 100
    return st.SyntheticPanelRun(
        steps=np.array([1, 10]), params=params, delta=np.tile(svm[:, None], (1, 2)), svm=svm,
        gamma=gamma, w0_distance=np.ones(count),
        rows={p: setting.rows(p) for p in ("margin", "init", "radius")},
        datasets=setting.datasets, svm_exact=np.full(count, True) if exact
        else np.arange(count) % 7 != 0,
    )  # fmt: skip


@pytest.mark.parametrize("claim_id", ["stability.fig7.margin_svm_limit",
                                      "stability.fig9.radius_svm_limit"])  # fmt: skip
def test_svm_limit_trends_need_the_exact_average(claim_id):
    assert _decide(claim_id, _panel_run(exact=True)).outcome == "holds"
    planted = _decide(claim_id, _panel_run(exact=False))
    assert planted.outcome == "inconclusive" and "every support vector" in planted.notes


def test_fig6_needs_the_exact_average():
    rng = np.random.default_rng(3)
    ns = np.array([50, 100, 200])
    delta = (1 / ns[:, None]) * rng.uniform(0.5, 1.5, (3, 60))
    run = st.OverNRun(ns=ns, delta=delta, svm=delta.copy(), steps=np.array([1, 10]),
                      svm_exact=np.full((3, 60), True))  # fmt: skip
    claim_id = "stability.fig6.decreasing_in_n"
    assert _decide(claim_id, run).outcome == "holds"
    planted = run._replace(svm_exact=np.arange(180).reshape(3, 60) % 5 != 0)
    assert _decide(claim_id, planted).outcome == "inconclusive"


# ------------------------------------------------------------- full fine-tuning (App. A.1)


def test_lemma_a1_1_anchor_sees_a_wrong_rate():
    """The bound is loose and equal at t = 0, so a looser rate passes on random starts; along
    the slowest eigenvector the squared bound must equal the measured distance."""
    claim_id = "stability.lemma_a1_1.quadratic"
    run = _small(st.simulate_contraction, st.ContractionSetting(instances=40, num_steps=30))
    assert _decide(claim_id, run).outcome == "holds"
    # (1 − ημ/2)^{t/2} in place of (1 − ημ)^{t/2}: recover ημ from the anchor at t = 1
    eta_mu = 1.0 - np.asarray(run.slow_error)[:, 1]
    t = np.arange(np.asarray(run.slow_error).shape[1])
    planted = run._replace(slow_bound=(1 - eta_mu[:, None] / 2) ** (t / 2))
    assert _decide(claim_id, planted).outcome == "refuted"


# ------------------------------------------------------------- Thm 2.2 and Cor 3.1


def test_lipschitz_scaling_floor_sees_a_sup_taken_as_a_min():
    """sup_T‖Δ_T‖ ≥ ‖Δ_1‖ ≥ ημR/n; the min over T is 0 (Δ_0 = 0), a flat curve that passes
    the paired-increase test (its CI is [0, 0]) and the retuned invariant (0 = 0)."""
    claim_id = "stability.thm2_2.scaling_lipschitz"
    setting = st.LipschitzScalingSetting(instances=40, num_steps=50)
    run = _small(st.simulate_lipschitz_scaling, setting)
    assert _decide(claim_id, run).outcome == "holds"
    zeros = np.zeros_like(np.asarray(run.fixed))
    planted = run._replace(fixed=zeros, retuned=zeros)
    assert _decide(claim_id, planted).outcome == "refuted"


def test_mhloss_bound_is_inconclusive_for_a_xi_below_one():
    """ξ = H max|p_h|/|Σ p_h| ≥ 1 (triangle inequality): half of it is not ξ."""
    claim_id = "stability.cor3_1.mhloss_bound"
    rng = np.random.default_rng(2)
    shape = (20, 4, 2)  # datasets, steps, head counts
    run = st.MultiHeadRun(
        steps=np.array([1, 10, 100, 1000]), e_bar=rng.uniform(0.1, 0.2, shape),
        xi=rng.uniform(1.0, 1.5, shape), e_max=rng.uniform(0.2, 0.3, shape),
        conv_lhs=np.zeros(shape), conv_rhs=np.ones(shape), kkt=np.asarray(1e-10),
        heads=(50, 100),
    )  # fmt: skip
    assert _decide(claim_id, run).outcome in ("holds", "refuted")
    planted = _decide(claim_id, run._replace(xi=0.5 * run.xi))
    assert planted.outcome == "inconclusive" and "ξ ≥ 1" in planted.notes
