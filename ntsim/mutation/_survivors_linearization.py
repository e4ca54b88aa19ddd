"""Why the linearization survivors with a reason are not blind spots (Rahimi Afzal et al. 2025).

Part of :data:`ntsim.mutation._survivors.REASONS` (the module doc there says what a reason
must be). Each was checked against the mutant it covers.
"""

from __future__ import annotations

from ntsim.mutation._survivor_reason import EQUIVALENT, LOOSER, OUTSIDE, TIGHTER, SurvivorReason

__all__ = ["LINEARIZATION_REASONS"]

LINEARIZATION_REASONS: tuple[SurvivorReason, ...] = (
    SurvivorReason(
        "linearize", EQUIVALENT,
        "f0 + df for df + f0: IEEE addition is commutative, so every leaf is bitwise the same "
        "(uncompared only because linearize returns a closure)",
        operator="swap_args", before="jax.tree.map(jnp.add, f0, df)",
    ),
    SurvivorReason(
        "thm3_b", OUTSIDE, TIGHTER + " (here the 4L_∇r0/λ term halved)",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "thm4_simplified_bound", OUTSIDE, TIGHTER + " (here the Lip(f) term halved)",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "thm4_simplified_bound", OUTSIDE, LOOSER + " (here the 2rLip(∇f) term doubled)",
        operator="scale_x2", before="2 * jnp.asarray(radius) * lip_grad",
    ),
    SurvivorReason(
        "thm7_bounds", OUTSIDE,
        "q read from K + 1.5S instead of K + S: the upper bound aq loosens and the lower q/a "
        "rises, and both still hold (Thm 7's bounds sit a factor κ/(1 − η)² from the value on "
        "these kernels; no statement says they are attained)",
        operator="scale_x2", before="k + s",
    ),
    *(
        SurvivorReason(
            function, OUTSIDE,
            "read only by the MiniLM κ claims, which at quick scale (MiniLM-L3, a dozen "
            "sentences, 4 points) are smoke runs whose interval spans most of [−1, 1] "
            f"(QUICK_SMOKE): no quick-scale change can flip them; here {what}",
            operator=operator, before=before,
        )
        for function, operator, before, what in (
            ("halving_ladder", "drop_term", "halvings + 1",
             "no GD step is halved, so runs whose MSE rises keep it; at full scale the GD "
             "claims' premise (every GD run descends) catches it"),
            ("_spectrum", "scale_x0.5", "values[0] + sigma",
             "λ_max halved inside κ(K + σI), which shifts log κ by ≈ −log 2 on every "
             "configuration alike (σ ≪ λ_max): a rank correlation cannot see it"),
            ("simulate_minilm_kappa", "scale_x0.5", "2000 + d",
             "another key offset per dataset: another draw of the sentences"),
        )
    ),
    SurvivorReason(
        "kernel_condition_number", EQUIVALENT,
        "κ halved on every configuration alike: the κ claims are Spearman correlations over "
        "configurations, which no positive factor changes (the diagnostics that print κ do "
        "move); the unit tests of ntsim.theory.linearization pin κ(K + σI) (they kill it)",
        operator="scale_x0.5", before="s[0] / s[-1]",
    ),
    SurvivorReason(
        "simulate_exit_time", OUTSIDE,
        "a residual norm r0 computed from 2f0 is larger, so λ_o = 2r0L/r is larger and the "
        "promised stay shorter: a weaker statement, which still holds",
        operator="scale_x2", before="run.train[0] - inst.y",
    ),
    SurvivorReason(
        "sample_ball", EQUIVALENT,
        "v is a uniformly random direction, so θ0 − r·v has the law of θ0 + r·v",
        operator="flip_sign",
    ),
    SurvivorReason(
        "pretrained_mlp", OUTSIDE,
        "the pretraining step size 0.5/(n − 1) instead of 0.5/n: no claim states how the "
        "checkpoint is pretrained, only what fine-tuning from it does",
        operator="n_minus_one",
    ),
    SurvivorReason(
        "synthetic_tasks", EQUIVALENT,
        "tasks at other angles to the pretraining direction: another draw of the task family "
        "the κ claims quantify over",
        operator="scale_x2",
    ),
    SurvivorReason(
        "simulate_thm7", EQUIVALENT,
        "the random kernel without its 0.05·I jitter is another positive semi-definite kernel "
        "of the family Thm 7 is claimed for",
        operator="drop_term", before="0.05 * jnp.eye",
    ),
    SurvivorReason(
        "_random_kernel", EQUIVALENT,
        "ΦΦᵀ/2 instead of ΦΦᵀ: another positive semi-definite kernel (Φ's columns rescaled by "
        "1/√2); Thms 5–7 are stated for every such kernel and ridge σ, and their instances draw "
        "σ log-uniformly over decades, so halving K is another draw of the same family",
        operator="scale_x0.5", before="phi @ phi.T",
    ),
    SurvivorReason(
        "simulate_layer_kernels", EQUIVALENT,
        "a layer's kernel as half its weight block plus its bias block: still a sum of "
        "positive semi-definite blocks, so another pair (K, S) of the family Thm 6 quantifies "
        "over (the NTK additivity claim reads its own blocks, not these)",
        operator="scale_x0.5", before="b['w'] + b['b']",
    ),
    SurvivorReason(
        "simulate_kappa", OUTSIDE,
        "the normalised GD step 0.5/(λ_max + λ) instead of 0.5/L, L = 2λ_max + λ the "
        "curvature the rule normalises by: about twice the step, still below the descent limit "
        "2/L; no statement fixes the step, and the κ claims compare configurations under one "
        "step rule",
        operator="scale_x0.5", before="2 * evals[-1] + s.proximal",
    ),
    SurvivorReason(
        "fit_stacked", OUTSIDE,
        "AdamW's warm-up of one step instead of a tenth of the steps: a schedule detail no "
        "statement fixes (the project's default); read only by the MiniLM claims, "
        "which at quick scale are smoke runs (QUICK_SMOKE)",
        operator="min_max", before="max(num_steps // 10, 1)",
    ),
    SurvivorReason(
        "simulate_quadratic_gap", EQUIVALENT,
        "the path minimum of ‖J_t − J_0‖/‖θ_t − θ_0‖ instead of its maximum: on the quadratic "
        "model J_t − J_0 = c·s_t·xᵀ, so the ratio is |c| at every step and its minimum is its "
        "maximum (up to round-off)",
        operator="min_max", before="jnp.max(jac_change[1:] / distance[1:])",
    ),
    SurvivorReason(
        "synthetic_tasks", EQUIVALENT,
        "tasks at angle −φ from w_0 instead of φ: (w_0, −w_⊥) has the law of (w_0, w_⊥) (the "
        "first two columns of a Haar-random orthogonal matrix), so each task is another draw "
        "at the same angle to the pretraining direction",
        operator="flip_sign", before="jnp.cos(angles)[:, None] * w0",
    ),
    SurvivorReason(
        "_objective", EQUIVALENT,
        "‖θ0 − θ‖² = ‖θ − θ0‖²: only round-off moved (claim numbers that are themselves at "
        "round-off level change relatively)",
        operator="swap_args", before="_squared_distance(params, params0)",
    ),
    SurvivorReason(
        "simulate_plateau", OUTSIDE,
        "the step is 0.5/λ (λ a multiple of μ_max); in these runs λ ≥ 7.5, so 0.5/(λ − 1) is a "
        "slightly larger positive step (ηλ ≤ 0.58), still stable, and the plateau is the limit "
        "of the flow",
        operator="n_minus_one", before="0.5 / lam",
    ),
    SurvivorReason(
        "simulate_plateau", OUTSIDE,
        "the residual norm r_0 taken against 2y* is larger, so the plateau's bound 2Lip(f)r_0/λ "
        "is looser and λ‖θ_T − θ_0‖/(2Lr_0) smaller: a weaker statement, which still holds; "
        "the slope claim reads the distances, not r_0",
        operator="scale_x2", before="run.train[0] - inst.y",
    ),
    SurvivorReason(
        "random_instance", EQUIVALENT,
        "targets ±0.5 instead of ±1 (plus the offset): another instance of the family the "
        "kernel-ridge claims quantify over",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "simulate_gd_to_flow", EQUIVALENT,
        "another time horizon 2/(μ_max − 1) instead of 2/μ_max; Lemma 3's O(η) order is "
        "claimed on any finite horizon",
        operator="n_minus_one", before="2.0 / inst.mu_max",
    ),
)  # fmt: skip
