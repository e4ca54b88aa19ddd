"""Why the early-stopping survivors with a reason are not blind spots (Sun & Raskutti 2026).

Part of :data:`ntsim.mutation._survivors.REASONS` (the module doc there says what a reason
must be). Each was checked against the mutant it covers.
"""

from __future__ import annotations

from ntsim.mutation._survivor_reason import EQUIVALENT, OUTSIDE, TIGHTER, SurvivorReason

__all__ = ["EARLY_STOPPING_REASONS"]

EARLY_STOPPING_REASONS: tuple[SurvivorReason, ...] = (
    SurvivorReason(
        "simulate_mixed_init_blocks", EQUIVALENT,
        "the backbone perturbation ξ ~ N(0, I/size) is symmetric and independent of θ_0, so "
        "θ_0 − ξ has the law of θ_0 + ξ; eqs. (93), (95) are identities for any backbone",
        operator="flip_sign", before="leaf + jax.random.normal",
    ),
    SurvivorReason(
        "guarantee_bound", OUTSIDE,
        TIGHTER + " (here Raskutti et al.'s 12C_H²ϱ̂² halved: the T̂ and hold-out errors are "
        "at most 3% of the unhalved bound at quick scale, seeds 0–2)",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "power_law_critical_radius_squared", EQUIVALENT,
        "top − 2 padding slots instead of top: for N ≤ top − 2 the padded root is that of the "
        "exact power law with σ multiplied by (1 − 2/top)^{−1/2} ≈ 1 + 1/top, and at N = top "
        "the spectrum also loses its two smallest eigenvalues (≈ top^{−2β}); eq. (30)'s rate "
        "is claimed at every σ (a unit test pins the padding against an unpadded bisection)",
        operator="flip_sign", before="top + 1.0",
    ),
    SurvivorReason(
        "random_spectrum", EQUIVALENT,
        "the spectrum scale s log-uniform on [2e-2, 20] instead of [1e-2, 10]: another draw "
        "of the instance family; eqs. (10), (11), the rule T̂ and eq. (36) are claimed for "
        "every non-negative spectrum",
        operator="scale_x2", before="scale * jitter",
    ),
    SurvivorReason(
        "random_spectrum", EQUIVALENT,
        "the spectrum scale s log-uniform on [5e-3, 5] instead of [1e-2, 10]: another draw "
        "of the instance family; eqs. (10), (11), the rule T̂ and eq. (36) are claimed for "
        "every non-negative spectrum",
        operator="scale_x0.5", before="scale * jitter",
    ),
    SurvivorReason(
        "simulate_c_h_rescaling", OUTSIDE,
        "the step α only sets T̂ = ⌊1/(αϱ̂²)⌋, whose difference between the two problems is "
        "a diagnostic the C_H-exponent claims report but do not decide on; they decide on "
        "ϱ̂/ϱ̂_unit, which does not read α",
        operator="min_max", before="jnp.max(lam)",
    ),
    SurvivorReason(
        "pretrain_attention", OUTSIDE,
        "the pretraining step η_0/(n − 1) instead of η_0/n: Assumption 4.7 only asks that "
        "θ_PT be trained from a Gaussian init, and the learning-curve and Cor 2 claims state "
        "what fine-tuning from θ_PT does, not how θ_PT is reached",
        operator="n_minus_one", before="eta0 / width",
    ),
    SurvivorReason(
        "finetune_step", EQUIVALENT,
        "the fine-tuning step η_0/(n − 1) instead of η_0/n (still capped at 0.9N/λ_max): the "
        "trained network and the kernel prediction both use the returned step, so this is "
        "Cor 2 at another step ε = O(1/n), and the claim checks ελ_max/N ≤ 1 on the run",
        operator="n_minus_one", before="setting.eta0 / setting.width",
    ),
    SurvivorReason(
        "trained_task_vectors", OUTSIDE,
        "θ_PT + ½Στ_t instead of θ_PT + Στ_t only feeds the multi-task MSE, a diagnostic the "
        "Cor 2 claim reports but does not decide on (no statement of the paper is about "
        "adding these non-orthogonal tasks' vectors)",
        operator="scale_x0.5", before="flat_pt + taus.sum(axis=0)",
    ),
    SurvivorReason(
        "source_target_data", EQUIVALENT,
        "the target 2f_src + Δ instead of f_src + Δ: another target task, less related to "
        "the source; the width statements (Thm 3, Thm 5, Lemma 1) hold for any bounded "
        "target (Assumption 4.4 holds for both), and the data are noise-free either way",
        operator="scale_x2", before="f_src(x) + 0.5 * _teacher",
    ),
)  # fmt: skip
