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
        "of the family Thm 7 is claimed for (and with 0.1·I another positive definite one)",
        before="0.05 * jnp.eye",
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
        "a layer's kernel as half (or twice) its weight block plus its bias block: still a sum of "
        "positive semi-definite blocks, so another pair (K, S) of the family Thm 6 quantifies "
        "over (the NTK additivity claim reads its own blocks, not these)",
        before="b['w'] + b['b']",
    ),
    SurvivorReason(
        "simulate_kappa", OUTSIDE,
        "the GD step's normaliser L = 2λ_max + λ with one term halved: 0.5/(λ_max + λ) (about "
        "twice the step, still below the descent limit 2/L) or 0.5/(2λ_max + λ/2) (λ = 0.02 ≪ "
        "λ_max: the step moves by a relative λ/(4λ_max)); no statement fixes the step, and the "
        "κ claims compare configurations under one step rule",
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
    SurvivorReason(
        "empirical_ntk_fn", EQUIVALENT,
        "the input check rejecting 1-D batches too: every claim passes batches (n, d), where "
        "ndim < 1 and ndim <= 1 agree; a unit test runs a batch of scalar examples (it kills "
        "the mutant)",
        operator="compare", before="x1.ndim < 1",
    ),
    SurvivorReason(
        "linearize", EQUIVALENT,
        "apply(x, p) for apply(p, x): the swap's guard (same shape and dtype) never fires on "
        "the claims' inputs, where p is a parameter pytree (a dict) and x an array; a unit "
        "test with p and x of one shape kills it (uncompared only because linearize returns "
        "a closure)",
        operator="swap_args", before="apply(p, x)",
    ),
    SurvivorReason(
        "mlp", EQUIVALENT,
        "dense_init(a, k, b) for dense_init(k, a, b): a PRNG key array and an int never pass "
        "the swap's guard (uncompared only because mlp returns closures)",
        operator="swap_args", before="dense_init(k, a, b",
    ),
    SurvivorReason(
        "subset_model", EQUIVALENT,
        "get_path(p, params0): a path tuple and a parameter dict never pass the swap's guard "
        "(uncompared only because subset_model returns a closure)",
        operator="swap_args", before="get_path(params0, p)",
    ),
    SurvivorReason(
        "selective_strength", OUTSIDE,
        "the tie ⟨∇L, θ_t − θ_0⟩ = 0 occurs only at θ_t = θ_0 (each run's first step), where "
        "the pull λ(θ_t − θ_0) is zero, so the trajectory is the same; only the logged λ_0 "
        "differs, and Thms 1–2 hold for any logged schedule λ_s ≥ 0; a unit test pins the "
        "tie to λ (it kills the mutant)",
        operator="compare", before="inner >= 0",
    ),
    SurvivorReason(
        "simulate_linearity_table", OUTSIDE,
        "the GD step 0.5/(2μ_max + λ_1/2) instead of 0.5/(2μ_max + λ_1): still stable for "
        "every λ of the table (λη < 1, η < 1/μ_max), only the horizon ηT grows; the slides give "
        "no step, and the table's monotone distance is a statement at any horizon",
        operator="scale_x0.5", before="2 * inst.mu_max + lambdas[0]",
    ),
    SurvivorReason(
        "simulate_linearity_table", OUTSIDE,
        "the GD step 0.5/(4μ_max + λ_1) instead of 0.5/(2μ_max + λ_1): a smaller stable step, "
        "so only the horizon ηT shrinks; the slides give no step, and the table's orderings "
        "(distance and KL falling with λ) are statements at any horizon",
        operator="scale_x2", before="2 * inst.mu_max + lambdas[0]",
    ),
    SurvivorReason(
        "sign_kernel_fn", EQUIVALENT,
        "x1.ndim ≤ 1 instead of < 1 in the input check: every claim passes a batch of 2-D (or "
        "higher) inputs, so neither test raises (only a batch of scalar examples, which no "
        "claim passes, tells them apart); uncompared because kernel_fn is a closure",
        operator="compare", before="x1.ndim < 1",
    ),
    SurvivorReason(
        "sign_kernel_fn", EQUIVALENT,
        "the swap's run-time guard exchanges only values of one kind (same_kind): params is a "
        "dict and x2 an array, contract a function and j1 a dict, so the mutant runs the "
        "original call (uncompared: kernel_fn is a closure, which the pairing cannot stand "
        "in for)",
        operator="swap_args",
    ),
    SurvivorReason(
        "synthetic_tasks", OUTSIDE,
        "labels sign(0.5 sin(2x·v)) without x·w_k: every task is the same labelling, which is "
        "still a task of the family the κ claims quantify over (a rank correlation of κ with "
        "the loss across configurations, for any labelling); no claim states how the tasks "
        "differ with the angle",
        operator="drop_term", before="x @ w + 0.5 * jnp.sin(2 * x @ v)",
    ),
    SurvivorReason(
        "thm2_bound_constant", OUTSIDE,
        "read only by linearity_vs_lambda's bound curve, the λ-table figure's overlay, which "
        "no claim reads; its unit tests kill the mutant",
    ),
    SurvivorReason(
        "linearity_vs_lambda", OUTSIDE,
        "r_0 against y/2: r_0 feeds only the bound curve of the λ-table figure's overlay, "
        "which no claim reads (the table's claims read the distances and gaps)",
        operator="scale_x0.5", before="net.train[0] - y",
    ),
    SurvivorReason(
        "simulate_thm5", EQUIVALENT,
        "y* + εw for y* − εw (w Gaussian): ỹ = y* − f_θ0 changes sign, and the risk "
        "‖σ(K + σI)^{-1}ỹ‖², ‖ỹ‖ and the printed bounds (which read ‖y*‖) are all even in it; "
        "every number is the same",
        operator="flip_sign",
    ),
    SurvivorReason(
        "estimate_lipschitz", OUTSIDE,
        "only Lip(∇f)'s estimates (lip_grad_max, lip_grad_avg) move; their one caller, the "
        "containment simulation, reads Lip(f) and the sphere error, and Thms 3–4 use path "
        "maxima from finetune: no claim reads Algorithm 1's Lip(∇f)",
        operator="scale_x0.5", before="j - jac0",
    ),
    SurvivorReason(
        "_kl64", OUTSIDE,
        "KL(f̄‖f) for KL(f‖f̄): the slides' λ table reports a KL without its direction, and "
        "no claim reads the KL column",
        operator="swap_args",
    ),
    SurvivorReason(
        "simulate_gd_to_flow", OUTSIDE,
        "t_end/(steps − 1) changes only the reported step eta; the GD runs take "
        "t_end/(steps·factor) and Lemma 3's claim reads the gaps",
        operator="n_minus_one", before="t_end / s.steps",
    ),
    SurvivorReason(
        "simulate_split_step", EQUIVALENT,
        "λ = U/(η − 1) < 0 for U/η: the checked combined form θ' = (1 − λη)θ − η(1 − λη)g + "
        "ληθ_0 is a polynomial identity in λ, true for every real λ, so these are other "
        "instances of the same algebra",
        operator="n_minus_one",
    ),
    SurvivorReason(
        "simulate_thm1_identity", EQUIVALENT,
        "θ_0 − 0.5v/√p for θ_0 + 0.5v/√p, v ~ N(0, I): the same law",
        operator="flip_sign",
    ),
    SurvivorReason(
        "simulate_selective_step", EQUIVALENT,
        "targets with ‖y* − f_θ0‖ = 2 instead of 1: Thm 1 and its printed step are stated for "
        "any targets, and the constructed state's residual ε(y* − f_θ0) scales with them",
        operator="scale_x2", before="u / jnp.linalg.norm(u)",
    ),
    SurvivorReason(
        "random_instance", EQUIVALENT,
        "targets ±1 − 0.5 for ±1 + 0.5 (the KRR instances' offset): negating the output layer "
        "(weights N(0, 1), bias 0.3·N(0, 1)) is an isometry T of θ that preserves θ_0's law "
        "and maps f_θ to −f_{Tθ}, so the mutant's (f_θ0, y*) has the law of the original's "
        "(−f_θ0, −y*) with the same kernel K; the KRR claims read ỹ, residuals, their norms "
        "and the flow's ridge, which this map carries over exactly: another draw of the same "
        "family",
        operator="flip_sign", before="1.0, -1.0) + target_offset",
    ),
    SurvivorReason(
        "simulate_selective_step", OUTSIDE,
        "the step's cap 0.1/(μ − 1) for 0.1/μ (μ = λ_max(ΦΦᵀ), median ≈ 1.9 for Φ of n × 4n "
        "with N(0, 1/4n) entries): η ≈ 0.1, still below the descent limit 1/μ wherever μ > "
        "1.11; the printed scheme is refuted for any such step, by a relative increase in "
        "[λη/ε − 2, λη/ε] read from the logged λη, and the worst case λη = 1/2 (λ ≥ 5μ, "
        "η = 0.5/λ) is unchanged",
        operator="n_minus_one", before="0.1 / mu",
    ),
    SurvivorReason(
        "simulate_minilm_lambda", OUTSIDE,
        "minibatch order and dropout drawn from fold_in(key, d), the key that drew the "
        "dataset's sentences (a permutation of the whole dataset), for fold_in(key, 2000 + d): "
        "the same sentences and another draw of the training randomness; the table's "
        "orderings are claimed for every run, whatever its minibatch order and dropout masks",
        operator="drop_term", before="2000 + d",
    ),
    SurvivorReason(
        "simulate_quadratic_gap", OUTSIDE,
        "the time grid [10⁻³, 10]/(4a² + λ) for /(2a² + λ): another grid, from A·t_1 ≤ 10⁻³ "
        "(A = 2a² + λ) to A·t ≥ 5; Thm 3 is stated at every t, the closed forms are evaluated "
        "at the run's own times (the quadrature where A·t ≤ 1, the onset at t_1, still inside "
        "its regime), and the bound is tightest as t → 0, which a smaller t_1 only nears",
        operator="scale_x2", before="2 * a ** 2 + lam",
    ),
)  # fmt: skip
