"""Why the linear-teachers survivors with a reason are not blind spots (Shachaf et al. 2021).

Part of :data:`ntsim.mutation._survivors.REASONS` (the module doc there says what a reason
must be). Each was checked against the mutant it covers.
"""

from __future__ import annotations

from ntsim.mutation._survivor_reason import EQUIVALENT, LOOSER, OUTSIDE, TIGHTER, SurvivorReason

__all__ = ["LINEAR_TEACHERS_REASONS"]

LINEAR_TEACHERS_REASONS: tuple[SurvivorReason, ...] = (
    SurvivorReason(
        "_symmetric_spectral_norm", OUTSIDE,
        "the Gram drift's ‖H(t) − H^∞‖₂ read as the smaller of |λ_min| and λ_max instead of the "
        "larger: the proof of Thm 6.1 bounds the drift by 'a decreasing function in m' with no "
        "constant or rate, and the smaller extreme eigenvalue of the same random fluctuation "
        "decreases in m too (the claim's slope stays below −0.1); the unit test against "
        "numpy's SVD norm kills it",
        operator="min_max", before="jnp.maximum(-eigenvalues",
    ),
    SurvivorReason(
        "risk_bound_thm6_1", OUTSIDE, LOOSER + " (the Thm 6.1 risk bound doubled)",
        operator="scale_x2",
    ),
    SurvivorReason(
        "risk_bound_cor6_3", OUTSIDE, LOOSER + " (the Cor 6.3 risk bound doubled)",
        operator="scale_x2",
    ),
    SurvivorReason(
        "simulate_random_projection", EQUIVALENT,
        "the source and projection keys swapped: another draw of the same instance family",
        operator="swap_args", before="unit_pair_at_distance",
    ),
    SurvivorReason(
        "_freezing_draw", EQUIVALENT,
        "θ_s − ξ with ξ ~ N(0, s²I) has the law of θ_s + ξ: another draw of the same task",
        operator="flip_sign", before="setting.task_noise",
    ),
    SurvivorReason(
        "_tasks", EQUIVALENT,
        "αθ_S − ξ with ξ ~ N(0, (0.25/d)I) has the law of αθ_S + ξ: another draw of the same "
        "task family (Thm 5.2's instances)",
        operator="flip_sign", before="alpha * theta_s + noise",
    ),
    SurvivorReason(
        "bound_thm4_2", OUTSIDE,
        LOOSER + " (the 2ĝ³‖P_≤m v‖²/λ_m² term of the constant-free eq. (3) doubled)",
        operator="scale_x2", before="2.0 * g ** 3",
    ),
    SurvivorReason(
        "random_projection_bounds", OUTSIDE,
        TIGHTER + " (a (1 + ε)² factor of eq. (9), (10) or the corrected (9) dropped: the "
        "bound shrinks by at most (1 + ε)²)",
        operator="drop_term", before="1 + eps",
    ),
    SurvivorReason(
        "_kappa", EQUIVALENT,
        "the bisection's lower end halved: still below the root, and 100 geometric halvings "
        "from either bracket end at the same κ to round-off (identical in float64 on the quick "
        "Fig. 1 spectrum, n = 1..199, checked 2026-11-30)",
        operator="scale_x0.5", before="d - n",
    ),
    SurvivorReason(
        "deep_linear", EQUIVALENT,
        "x.T for x: apply acts on ONE example (its input check rejects anything but a 1-D x, "
        "and every layer's output is 1-D again), and transposing a 1-D array is the identity: "
        "the same program (uncompared only because the model's apply is returned as a closure)",
        operator="transpose", before="x @ w",
    ),
    SurvivorReason(
        "two_layer_relu", EQUIVALENT,
        "relu(x Wᵀ).T for relu(x Wᵀ): x is one example (1-D, enforced by apply's input "
        "check), so relu(x Wᵀ) is 1-D and transposing it is the identity: the same program "
        "(uncompared only because apply is returned as a closure)",
        operator="transpose", before="jax.nn.relu(x @ w.T) @ signs",
    ),
    *(
        SurvivorReason(
            "simulate_relu_fine_tuning", OUTSIDE,
            f"the {which} network's training loss ({name}) is reported beside the risks and "
            "read by no claim: Thm 6.1 and Cor 6.3 state the test risk of the fitted network, "
            "not its training loss",
            before=before,
        )
        for which, name, before in (
            ("fine-tuned", "train_loss", "net(run.params, x) - y"),
            ("pretrained", "source_train_loss", "net(pre.params, x_s) - x_s @ theta_s"),
        )
    ),
    SurvivorReason(
        "simulate_relu_fine_tuning", OUTSIDE,
        "the weight movement ‖W_FT − W_S‖_F (weight_distance) is reported beside the risks "
        "and read by no claim: Thm 6.1 and Cor 6.3 state the test risk of the fitted network; "
        "that the weights stay near W_S is a step of the proof, not a statement",
        operator="scale_x2", before="run.params['w'] - pre.params['w']",
    ),
    SurvivorReason(
        "_fit_steps_rate", OUTSIDE,
        "a step size half as large: Thm 6.1 and Cor 6.3 hold for the "
        "fitted network however the fit is reached, and the step only sets how long it takes",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "_approx_error", EQUIVALENT,
        "θ_T's alignment with θ_S set to 0.85 instead of 1.7: another task of the family; the "
        "σ₀ → 0 trend toward eq. (5) is stated for every θ_T (both stay below GD's stability "
        "limit)",
        operator="scale_x0.5", before="s.alpha - inst",
    ),
    SurvivorReason(
        "simulate_hinf_psd", OUTSIDE,
        "a positive multiple of the margin λ_min(H^∞ − XXᵀ/4)/λ_max(H^∞): the statement "
        "H^∞ ⪰ XXᵀ/4 is its sign, which no positive rescaling changes (the normalisation by "
        "λ_max is the report's, not the paper's)",
        operator=("scale_x2", "scale_x0.5"),
        before="jnp.linalg.eigvalsh(hinf - x @ x.T / 4)[0] / jnp.linalg.eigvalsh(hinf)",
    ),
    SurvivorReason(
        "alignment_directions", EQUIVALENT,
        "the top-eigen subspace of Fig. 1 one dimension larger (m + 1 instead of m, the bottom "
        "one smaller): the paper's m = 50 is a choice of the figure, and the crossing it shows "
        "(top-aligned better at small n, bottom-aligned at large n) is stated for every m",
        operator="compare", before="jnp.arange(d) < top",
    ),
    SurvivorReason(
        "_rate", EQUIVALENT,
        "r_0/(n − 1) for r_0/n in Thm 4.2's g: a factor n/(n − 1) → 1 on the rate, which the "
        "theorem's unspecified constant c absorbs; the claim bounds the implied c and tests "
        "that it does not trend in n, both unchanged by a factor this close to 1",
        operator="n_minus_one",
    ),
    SurvivorReason(
        "unit_pair_at_distance", OUTSIDE,
        "the construction of Thm 5.4's task pair with cos = 1 − δ²/4 (its realised distance "
        "δ/√2 instead of δ): the claims read the pairs drawn and their bounds hold at every "
        "alignment, so a mislabelled distance moves their x-axis, not a verdict; "
        "the unit tests of the random-projection and scale simulations pin the distance "
        "(they kill this mutant)",
        operator="scale_x0.5", before="distance) ** 2 / 2",
    ),
    SurvivorReason(
        "_root_terms", OUTSIDE,
        "max(f, 1 − f) for min(f, 1 − f), f = (c_L − 1)/(c_∞ − 1): the claim's own statistic "
        "for 'c_L strictly between 1 and c_∞', positive on every instance either way when the "
        "theory is right (f ∈ (0, 1)); it weakens the check, it changes no computed quantity "
        "of the paper",
        operator="min_max", before="jnp.minimum(frac, 1.0 - frac)",
    ),
    SurvivorReason(
        "_tasks", EQUIVALENT,
        "θ_T = αθ_S + ξ with the noise ξ half as large: another target of the family; the "
        "root equation of Thm 5.2 and its balancedness are claimed for every θ_T",
        operator="scale_x0.5", before="alpha * theta_s + noise",
    ),
    SurvivorReason(
        "monte_carlo_risk", OUTSIDE,
        "the batch merge with its mean update doubled: the batch means are then weighted "
        "2(j − 1)/(K(K − 1)) instead of 1/K, still summing to 1, so the estimate stays "
        "unbiased, but its spread grows (sd ≈ 1.19× the reported standard error in a referee's "
        "2,000 replications, K = 10): the z-test of the closed form then rejects a right "
        "closed form more often, never a wrong one less, so the mutant can turn the claim red "
        "but cannot hide an error in Thm 4.1; no claim states the estimator's variance; "
        "tests/theory/test_linear_teachers.py compares the merge with the plain mean of the "
        "same draws (it kills this mutant)",
        operator="scale_x2", before="mean + delta * batch / total",
    ),
    SurvivorReason(
        "_over_sizes", OUTSIDE,
        "every instance drawn at the smallest n of the grid instead of the largest, so each "
        "group is measured at that n: Thm 4.1's closed form, translation invariance and Monte "
        "Carlo identity are claimed at each n and hold at the one measured, and the run "
        "reports the sizes it measured (read from its inputs), so the collapse shows in the "
        "record's n values, not in a verdict",
        operator="min_max", before="max(ns)",
    ),
    SurvivorReason(
        "_e2e_terms", EQUIVALENT,
        "min(steps // records, 1) = 1 for max(…): both trajectories recorded at every step "
        "instead of every (steps // records)-th, so the layer-wise vs end-to-end gap is a "
        "maximum over all steps, a superset of the recorded ones: Thm 5.2's statement is about "
        "the whole trajectory, which the mutant measures more densely (the gap it reports can "
        "only grow, and it holds)",
        operator="min_max", before="max(steps // records, 1)",
    ),
    *(
        SurvivorReason(
            "simulate_hinf_psd", OUTSIDE,
            LOOSER + f" ({weaker}, implied by H^∞ ⪰ XXᵀ/4; the proof of Cor. 6.2 needs the "
            "1/4, which no claim states to be the best constant)",
            operator=operator, before="hinf - x @ x.T / 4", after=after,
        )
        for operator, after, weaker in (
            ("flip_sign", "hinf + x @ x.T / 4", "H^∞ ⪰ −XXᵀ/4"),
            ("scale_x0.5", "hinf - 0.5 * (x @ x.T / 4)", "H^∞ ⪰ XXᵀ/8"),
        )
    ),
    SurvivorReason(
        "first_layer_gram", EQUIVALENT,
        "the empirical Gram H(0) divided by m − 1 for m: a factor m/(m − 1) → 1, a bias of "
        "order 1/m below the m^{-1/2} fluctuation of H(0) around H^∞, so the kernel-regime "
        "deviations still shrink with m, which is what Thm 6.1's claim decides (slope CI ≤ "
        "−0.1); the unit tests pin the Gram against H^∞ (they kill this mutant)",
        operator="n_minus_one", before="/ width",
    ),
)  # fmt: skip
