"""Why the overtraining survivors with a reason are not blind spots (Springer et al. 2025).

Part of :data:`ntsim.mutation._survivors.REASONS` (the module doc there says what a reason
must be). Each was checked against the mutant it covers.
"""

from __future__ import annotations

from ntsim.mutation._survivor_reason import EQUIVALENT, LOOSER, OUTSIDE, SurvivorReason

__all__ = ["OVERTRAINING_REASONS"]

_BUDGET = (
    "the budget claims are trends over the pretraining budget and the fine-tuning learning "
    "rate of a small byte-level decoder; no statement fixes "
)

OVERTRAINING_REASONS: tuple[SurvivorReason, ...] = (
    SurvivorReason(
        "finetune",
        OUTSIDE,
        "the step numbers returned beside the recorded checkpoints cut to the first half of "
        "the run (arange(0, num_steps/2 + 1, every)): a label array that no claim reads; the "
        "trajectory and the checkpoints themselves are the original's",
        operator="scale_x0.5",
        before="num_steps + 1",
    ),
    SurvivorReason(
        "causal_decoder",
        OUTSIDE,
        _BUDGET + "the decoder's embedding scale",
        operator="scale_x0.5",
        before="params['embed'][tokens] + params['position']",
    ),
    SurvivorReason(
        "arithmetic_corpus",
        OUTSIDE,
        _BUDGET + "what the corpus lines say",
        operator="drop_term",
        before="x + y",
    ),
    SurvivorReason(
        "_finetune",
        OUTSIDE,
        _BUDGET + "the fine-tuning window length",
        operator="drop_term",
        before="context + 1",
    ),
    SurvivorReason(
        "_pretrain_chunk",
        OUTSIDE,
        _BUDGET + "the pretraining schedule's clock (at twice the step the cosine reaches 0 "
        "halfway and climbs back); tests/theory/test_overtraining_budget.py kills it",
        operator="scale_x2",
        before="step0 + jnp.arange",
    ),
    SurvivorReason(
        "cosine_to_zero",
        OUTSIDE,
        _BUDGET + "the schedule's shape (a constant half-peak rate after warm-up instead of "
        "the cosine to 0); test_cosine_to_zero_shape kills it",
        operator="drop_term",
        before="1.0 + jnp.cos",
    ),
    SurvivorReason(
        "budget_sweep",
        OUTSIDE,
        _BUDGET + "the length of the held-out windows the losses are read on (context − 1 "
        "bytes instead of context + 1)",
        operator="flip_sign",
        before="c.context + 1",
    ),
    SurvivorReason(
        "_squared_distance",
        OUTSIDE,
        "‖θ + θ_0‖ in place of ‖θ − θ_0‖: the overtraining claims read the distance only in "
        "the Fig 8 sanity check (distance grows with the learning rate), which the sum "
        "still passes; tests/core/test_train.py and the budget tests pin the distance (they "
        "kill it)",
        operator="flip_sign",
        before="a - b",
    ),
    SurvivorReason(
        "_perturbation",
        EQUIVALENT,
        "noise ×½ is the perturbation at γ/2, and progressive sensitivity is claimed at every γ",
        operator="scale_x0.5",
        after="0.5 * (gamma",
    ),
    SurvivorReason(
        "contraction_rate",
        OUTSIDE,
        "Lemma A.28 claims the rate 1 − 2η min{σ^pre, σ^ft}, not that it is the best one, and "
        "1 − 4η min{·} is itself a valid rate (no correct claim can refute it): with x*² = "
        "(σ^ft + λσ^pre)/(1 + λ), one step gives f(x) − x* = (x − x*)(1 − 2η(1 + λ)x(x + x*)); "
        "while x stays between √σ^pre and √σ^ft (the lemma's first part) the factor lies in "
        "(0, 1 − 4η(1 + λ) min] (A.8 makes 4η(1 + λ) max < 1), and at λ = 0 with σ^ft ≤ σ^pre "
        "1 − 4η min is the exact asymptotic rate",
        operator="scale_x2",
    ),
    SurvivorReason(
        "a8_learning_rate",
        OUTSIDE,
        "Γ from min σ^ft is smaller, so η is larger but still in the range where GD converges; "
        "Assumption A.8 is sufficient for the lemmas, not necessary",
        operator="min_max",
    ),
    SurvivorReason(
        "simulate_dead_units",
        EQUIVALENT,
        "W1W2ᵀ for W1W2: in the rank test it has rank ≤ n as W1W2 does when the hidden units "
        "≥ n are zero; in the mode matrix it moves only the off-block leak, a diagnostic the "
        "claim reports but does not decide on",
        operator="transpose",
        before="res.w1 @ res.w2",
    ),
    SurvivorReason(
        "random_geometric_spectrum",
        EQUIVALENT,
        "σ_1 ~ U[1, 2] or U[4, 8] instead of U[2, 4]: another draw of the instance family, and "
        "the lemmas hold for every spectrum",
        before="first * ratio",
    ),
    SurvivorReason(
        "checkpoint_times",
        EQUIVALENT,
        "a checkpoint time shifted by log(σ_n)/(2σ_n) lands on the same loss plateau of the "
        "pretraining flow from e^(−τ)I (τ ≥ 12 makes the plateaus long), so the real "
        "checkpoint is the same up to e^(−Cτ)",
        operator="scale_x2",
        before="jnp.log(spectrum)",
    ),
    SurvivorReason(
        "_a23_setting",
        OUTSIDE,
        "ε only sets how many steps Lemma A.10 asks for; another ε changes the step count, and "
        "the runs have converged either way",
        before="pre - ft",
    ),
    SurvivorReason(
        "simulate_finite_batch",
        OUTSIDE,
        "ε measured as ‖Σ_k − 2I‖_op ≈ 1 overstates the batch error, which only loosens the "
        "bounds of Lemmas A.15–A.20",
        operator="scale_x2",
        before="cov - jnp.eye(d)",
    ),
    SurvivorReason(
        "geometric_spectrum",
        EQUIVALENT,
        "the spectrum 2·0.6^(i−1) instead of 4·0.6^(i−1): the caveat holds for any spectrum",
        operator="scale_x0.5",
    ),
    SurvivorReason("lemma_a6_gap_bound", OUTSIDE, LOOSER, operator="scale_x2"),
    SurvivorReason(
        "lemma_a6_gap_bound",
        OUTSIDE,
        "Lemma A.6 states the bound σ_d²/2, not its tightness; the measured gaps (of order "
        "e^(−Cτ)) sit far inside σ_d²/4 too",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "perturbation_loss_increase",
        EQUIVALENT,
        "noise scaled by the trained weights' spread instead of the initial ones': the same "
        "perturbation at another γ, and the sensitivity trends are claimed at every γ",
        operator="swap_args",
        before="_perturbation(params, init_params",
    ),
    SurvivorReason(
        "simulate_dead_units",
        OUTSIDE,
        "the mask of the off-block leak, a diagnostic the claim reports but does not decide on",
        operator="compare",
        before="jnp.arange(d)[:, None] < n",
    ),
    SurvivorReason(
        "_curves",
        OUTSIDE,
        "η computed for a larger λ_max is smaller, still within Assumption A.8, and the runs "
        "reach the converged losses the claims compare with either way",
        operator="scale_x2",
    ),
    SurvivorReason(
        "simulate_regularisation",
        EQUIVALENT,
        "the ID loss divided by min(σ^pre_1, σ^ft_1)² instead of Γ²: another positive constant "
        "per instance, and the claim compares the ID loss across λ within an instance",
        operator="min_max",
        before="jnp.maximum(pre[0], ft[0])",
    ),
    SurvivorReason(
        "simulate_hessian_traces",
        EQUIVALENT,
        "the ideal checkpoint n drawn from 0..d − 1 instead of 0..d: another draw, and the "
        "trace identity is claimed at every n",
        before="d + 1",
    ),
    SurvivorReason(
        "a24_increment_bound",
        OUTSIDE,
        "a lower bound that holds still holds when it is lowered; Thm A.24 states no tightness",
        operator="scale_x0.5",
    ),
    SurvivorReason(
        "a24_increment_bound",
        OUTSIDE,
        "Thm A.24's lower bound lowered (its subtracted 3·min gap²/(5(λ0 + 1)²) doubled): a "
        "lower bound that holds still holds when lowered, and Thm A.24 states no tightness",
        operator="scale_x2",
        before="3 * jax.lax.cummin(gap2)",
    ),
    SurvivorReason(
        "simulate_misalignment_threshold",
        EQUIVALENT,
        "the ratios σ^ft/σ^pre drawn from another range or around another excluded band: the "
        "claim leaves out the band its run records, the sign test holds on both sides, and "
        "making σ^ft decreasing still puts kept ratios within ±25% of 2 on both sides (the "
        "premise that the run brackets the threshold; a draw that stops doing so is killed)",
        before="hi - lo",
    ),
    SurvivorReason(
        "simulate_ideal_perturbation",
        EQUIVALENT,
        "another log-uniform range of γ; Prop 4.3 and Thm 4.4 are claimed at every γ",
        before="hi - lo",
    ),
    SurvivorReason(
        "layer_norm",
        OUTSIDE,
        "x/√(var + ε) instead of (x − μ)/√(var + ε): a normalisation that scales without "
        "centring (RMS-like), so another smooth network; the claims that run it are about "
        "whatever network is pretrained and fine-tuned (the budget trends of the byte-level "
        "decoder; early stopping's width, Lemma 5 and Cor 2 runs of the attention models), "
        "and test_layer_norm_normalises_and_rescales kills it",
        operator="drop_term",
        before="x - mean",
    ),
    SurvivorReason(
        "layer_norm",
        EQUIVALENT,
        "the ε under the square root is a guard against a zero variance, which the claims' "
        "activations never have: without it each normalised activation moves by about "
        "ε/(2 var) of itself (ε = 1e-5)",
        operator="drop_term",
        before="var + eps",
    ),
    SurvivorReason(
        "causal_decoder",
        OUTSIDE,
        _BUDGET + "whether the attention projections have a bias",
        operator="drop_term",
        before="p['qkv_bias']",
    ),
    SurvivorReason(
        "causal_decoder",
        OUTSIDE,
        _BUDGET + "the MLP's hidden bias (dropped, or doubled: a learned parameter either way)",
        operator=("drop_term", "scale_x2"),
        before="mlp['b1']",
    ),
    SurvivorReason(
        "arithmetic_corpus",
        OUTSIDE,
        _BUDGET + "the fine-tuning task's content (operands up to max − 1, or x − 2y printed as "
        "the difference): another byte-level task shifted from the pretraining corpus",
        operator=("flip_sign", "scale_x2"),
        before="max_operand + 1",
    ),
    SurvivorReason(
        "arithmetic_corpus",
        OUTSIDE,
        _BUDGET + "the fine-tuning task's content (x − 2y printed as the difference)",
        operator="scale_x2",
        before="x - y",
    ),
    SurvivorReason(
        "sample_windows",
        OUTSIDE,
        _BUDGET + "which windows of the corpus a batch reads (starts over the first part of the "
        "stream, or up to half a window past the last full one, where JAX's clamped gather "
        "repeats the final byte); test_sample_windows_are_slices_of_the_stream kills both",
        operator=("scale_x2", "scale_x0.5"),
        before="data.shape[0] - length",
    ),
    SurvivorReason(
        "_real_checkpoints",
        OUTSIDE,
        "the smallest instead of the largest rise of L_pre between saved times: Thm 4.1's "
        "check asks the largest to be ≤ 0 (L_pre non-increasing along the flow), and the "
        "smallest is ≤ the largest, so the check is only made looser; the run's flow is "
        "monotone either way (tests/theory kill it)",
        operator="min_max",
        before="jnp.max(jnp.diff(losses))",
    ),
    SurvivorReason(
        "simulate_finite_batch",
        OUTSIDE,
        "the smallest instead of the largest operator norm of the six factors: the "
        "well-conditioned part of Lemma A.20's check asks the largest to be ≤ 2√Γ, and the "
        "smallest is ≤ the largest, so the check is only made looser (the unit tests kill it)",
        operator="min_max",
        before="jnp.max(jnp.asarray([_op(w)",
    ),
)
