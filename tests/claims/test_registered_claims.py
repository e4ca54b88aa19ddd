"""Every registered claim, at quick scale, reaches its expected verdict through the runner
(one parametrised test, in the spirit of optax's ``_OPTIMIZERS_UNDER_TEST``).

Claims that read one simulation (v2) or share a key id (legacy) run in one xdist group, so
the module-level run cache computes each run once per worker.
"""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.claims import REGISTRY, Claim, RunCache, get_claim, run_claims, select_claims
from ntsim.claims._base import Claim as LegacyClaim

CACHE = RunCache(maxsize=4)

# Legacy (v1) claims: instances the issues ask for, per claim (claims not listed need at least
# one). A claim moved to contract v2 declares ``min_instances`` itself and leaves this table.
MIN_INSTANCES = {
    "early_stopping.cor1.negation_gap_corrected": 200,
    "early_stopping.cor1.negation_gap_printed": 200,
    "early_stopping.cor1.negation_hurts": 200,
    "early_stopping.cor2.orthogonal_addition": 200,
    "early_stopping.cor2.cross_kernel_cosine": 200,
    "early_stopping.lemma5.mixed_init_blocks": 200,
    "early_stopping.lemma2.logit_scaling": 150,
    "early_stopping.holdout.rule_beats_holdout": 60,
    "early_stopping.holdout.within_guarantee": 60,
    **{
        f"linearization.{name}": 200
        for name in (
            "split_step.combined_form",
            "lemma3.gd_to_flow_order",
            "thm1.identity",
            "thm1.selective_monotone",
            "lemma1.kernel_lipschitz",
            "thm2.bound_corrected",
            "thm2.bound_printed",
            "thm2.plateau",
            "table.distance_monotone",
            "thm3.bound",
            "thm4.containment",
            "thm4.containment_printed",
            "thm4.exit_time",
            "thm4.simplified",
            "krr.reduction",
            "krr.reduction_printed",
            "krr.residual_closed_form",
            "thm5.bounds",
            "thm5.bounds_printed",
            "thm6.eigen_stability",
            "thm7.ratio_bound",
            "thm7.step_printed",
            "ntk.additivity",
            "lora.ntk_at_init",
        )  # fmt: skip
    },
    "linear_teachers.fig1.crossing": 20,
    "linear_teachers.thm5_2.root_equation": 200,
    "linear_teachers.thm5_3.aligned": 200,
    **{
        f"stability.{name}": 200
        for name in (
            "thm2_2.certificate",
            "thm2_2.bound_corrected",
            "thm2_2.bound_printed",
            "thm2_2.bound_printed_generic",
            "thm2_2.bound_printed_radius",
            "thm2_2.scaling_n",
            "thm2_2.scaling_r",
            "thm2_2.scaling_lipschitz",
            "lemma_a1_1.quadratic",
            "lemma_a1_2.quadratic",
            "lemma_a1_2.logistic",
            "lemma_a1_3.quadratic",
            "lemma_a1_3.logistic",
            "lemma_a5_1.quadratic",
            "lemma_a5_1.logistic",
            "lemma_a5_1.step_size",
        )
    },  # fmt: skip
    "stability.tables.avg_consistent": 48,
    "overtraining.thm4_1.logistic_closed_form": 200,
    "overtraining.lemma_a5.expected_perturbed_loss": 200,
    "overtraining.prop4_3.increment": 200,
    "overtraining.thm4_4.inflection": 200,
    "overtraining.thm4_4.larger_gamma_earlier": 200,
    "overtraining.prop_d1.hessian_trace": 200,
    "overtraining.lemma_a7.per_mode_recursion": 200,
    "overtraining.lemma_a7.dead_units": 200,
    "overtraining.lemma_a28.contraction": 2000,
    "overtraining.eq11.minibatch_gradient": 200,
    **{
        f"early_stopping.{name}": 200
        for name in (
            "eq7.linearised_gd_is_kernel_gd",
            "kernel_gd.closed_forms",
            "eq34.bias_variance_monte_carlo",
            "eq35.bias_variance_bounds",
            "eq10.rademacher_monotone",
            "eq11.critical_radius",
            "eq11.c_h_exponent_printed",
            "eq11.c_h_exponent_corrected",
            "stopping_rule.closed_form",
            "eq36.optimal_stopping_time",
            "raskutti_thm1.sobolev_guarantee",
            "sec6_2.ridge_sandwich_corrected",
            "sec6_2.ridge_sandwich_printed",
        )
    },  # 4 tables × 6 methods × (mean, std)
    "stability.mmr.identity": 200,
    "stability.mhloss.identity": 200,
}


def test_registry_is_well_formed():
    ids = [claim.id for claim in REGISTRY]
    assert SLOW_QUICK_CLAIMS <= set(ids)
    assert set(MIN_INSTANCES) <= set(ids)
    for claim in REGISTRY:
        assert claim.statement and claim.paper, claim.id
        assert get_claim(claim.id) is claim
        if isinstance(claim, Claim):  # v2 claims carry these themselves
            assert claim.id not in MIN_INSTANCES and claim.id not in SLOW_QUICK_CLAIMS, claim.id
    assert select_claims("linear_teachers") == tuple(
        c for c in REGISTRY if c.topic == "linear_teachers"
    )


def test_every_refuted_legacy_claim_has_a_corrected_twin():
    """(v1) A refuted printed statement sits beside a statement of the same result that holds;
    v2 twins are checked when the registry is built (same simulation, expected to hold)."""
    for claim in REGISTRY:
        if isinstance(claim, LegacyClaim) and claim.expect == "refuted":
            stem = claim.id.rsplit(".", 1)[0]
            twins = [c.id for c in REGISTRY if c.expect == "holds" and c.id.startswith(stem)]
            assert twins, f"{claim.id} has no corrected twin under {stem}.*"


# Claims whose quick check took >= 15 s on 2 shared cores (compilation dominates). They run
# in `make test-full` (and `ntsim verify`), not in CI, to keep CI within its 15-minute
# budget. TODO: shrink their quick sizes and bring them back.
SLOW_QUICK_CLAIMS = {
    "early_stopping.eq7.linearised_gd_is_kernel_gd",
    "early_stopping.thm3.pretraining_distance",  # width sweep: one compilation per width
    "early_stopping.thm5.kernel_drift_slope_half",  # the same width runs (shared key_id)
    "early_stopping.thm5.kernel_drift_bound",
    "early_stopping.lemma1.linearisation_slope_half",
    "early_stopping.lemma1.linearisation_bound",
    "linearization.lemma3.gd_to_flow_order",
    "early_stopping.lemma5.mixed_init_blocks",
    "early_stopping.lemma5.random_init_expansion",  # pretraining at 3 widths (≈ 40 s)
    "early_stopping.lemma5.random_init_expansion_slope_half",  # the same runs (key_id)
    "early_stopping.cor2.trained_cosine_matches_kernel",  # 2 widths × 5 trainings (≈ 50 s)
    "early_stopping.thm1.learning_curve_rate",  # NTK of 900 points, 6 hold-out runs (≈ 65 s)
    "early_stopping.thm1.learning_curve_tail_rate",  # the same runs (shared key_id)
    "early_stopping.thm1.learning_curve_rate_rkhs",
    "early_stopping.thm1.learning_curve_tail_rate_rkhs",
    "early_stopping.lemma2.logit_scaling",
    "early_stopping.raskutti_thm1.sobolev_guarantee",
    "linear_teachers.thm5_2.approximately_balanced",
    "linear_teachers.thm5_2.gd_converges",
    "linear_teachers.thm5_2.null_space_first_layer",
    "linear_teachers.thm5_2.root_equation",
    "linear_teachers.thm6_1.hinf_empirical_gram",
    "overtraining.caveat.long_finetuning_erases",
    "stability.a4_1.convexity",
    "stability.cor2_5.lambda_svm_gap",
    "stability.fig6.decreasing_in_n",  # one compiled sweep per n
    "stability.cor2_5.unpenalized_bias",
    "stability.cor3_1.heads_saturate",
    "stability.cor3_1.mhloss_bound",
    "stability.lemma_a2_3.bias_bound",
    "stability.lemma_a2_4.margin_monotone",
    "stability.lemma_a2_5.paper_setting",
    "stability.soudry.direction_converges",
    "stability.soudry.paper_svm_direction",
    "stability.thm2_4.bound",
    "stability.thm2_4.telescoping",
    # one pretraining run per budget (~50 s idle, shared by both claims)
    "overtraining.budget.progressive_sensitivity",
    "overtraining.budget.distance_grows_with_learning_rate",
}


def _group(claim) -> str:
    return claim.uses.name if isinstance(claim, Claim) else claim.key_name


def _slow(claim) -> bool:
    return claim.slow_at_quick if isinstance(claim, Claim) else claim.id in SLOW_QUICK_CLAIMS


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(
            claim,
            marks=[pytest.mark.xdist_group(_group(claim))]
            + ([pytest.mark.slow] if _slow(claim) else []),
        )
        for claim in REGISTRY
    ],
    ids=lambda claim: claim.id,
)
def test_claim_quick(claim):
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=CACHE)
    (seed,) = record.per_seed
    assert seed.error is None, seed.error
    result = seed.result
    detail = f"{result.notes} {dict(result.diagnostics)} {seed.counterexample_found}"
    assert record.as_expected, f"{record.verdict} (expected {claim.expect}): {detail}"
    assert result.num_instances >= MIN_INSTANCES.get(claim.id, 1)
    assert result.margins.shape == result.measured.shape == result.reference.shape
    assert np.all(np.isfinite(result.measured)), result.notes
    assert result.notes or result.diagnostics


def test_claims_reject_unknown_scale():
    with pytest.raises(ValueError, match="scale"):
        run_claims(REGISTRY[:1], scale="huge")
