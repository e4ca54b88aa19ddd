"""Why a surviving mutant is not a blind spot: the reasons the kill matrix prints.

A survivor moved some claim's numbers and changed no verdict. Either a claim should have
noticed it (a blind spot: strengthen the claim), or no claim *can*, and then the matrix
says why, in one of two categories:

* **equivalent in effect** — the mutant computes another member of the family the claims
  quantify over: a different but equally valid random instance (a rescaled spectrum, a
  rotated Haar draw, another sampling range), or an internal convention the statements do
  not fix (a quantile interpolation rule);
* **outside the claims** — the mutant changes something no statement of the paper
  constrains: a bound made looser (a bound that holds also holds when it is doubled), a
  data generator whose content the trend claims do not depend on, an initialisation scale.

A reason names the function, optionally the operator and a piece of the mutated
expression; :func:`reason_for` finds the first that matches a recorded outcome. Keep each
reason specific: a reason that matches every mutant of a function that claims should pin
down hides a blind spot, and the matrix counts survivors without a reason apart.
"""

from __future__ import annotations

from collections.abc import Mapping

from ntsim.mutation._survivor_reason import EQUIVALENT, LOOSER, OUTSIDE, TIGHTER, SurvivorReason
from ntsim.mutation._survivors_early_stopping import EARLY_STOPPING_REASONS
from ntsim.mutation._survivors_linear_teachers import LINEAR_TEACHERS_REASONS
from ntsim.mutation._survivors_linearization import LINEARIZATION_REASONS
from ntsim.mutation._survivors_overtraining import OVERTRAINING_REASONS

__all__ = ["REASONS", "SurvivorReason", "reason_for"]

_CI_NO_VERDICT = (
    "the confidence-interval procedure is the project's, not a statement of any paper: the "
    "claims that read it decide far from their regions' boundaries, so this interval changes "
    "no verdict"
)
_CI = _CI_NO_VERDICT + "; the unit tests of ntsim.core pin the procedure (they kill this mutant)"

#: The reasons, by topic and function. Each was checked against the mutant it covers.
REASONS: tuple[SurvivorReason, ...] = (
    # ------------------------------------------------------------------ shared (ntsim.core)
    SurvivorReason(
        "wilson_ci", OUTSIDE,
        "the intervals claims' own binomial interval made wider (the variance term p(1 − p/2) "
        "instead of p(1 − p)): a more cautious decision, which these claims pass with room to "
        "spare; wilson_ci's doctest pins the formula (the interval of 50 successes in 100)",
        operator="scale_x0.5", before="1 - p",
    ),
    SurvivorReason(
        "_quantile", EQUIVALENT,
        "a Student-t quantile with N instead of N − 1 degrees of freedom moves a confidence "
        "interval's ends by O(1/N²) of its width at the claims' N; the unit tests hold mean_ci "
        "to scipy's t interval",
        before="count - 1",
    ),
    SurvivorReason(
        "spearman", OUTSIDE,
        "centring the ranks of a at twice their mean leaves the numerator unchanged (the other "
        "ranks sum to zero about their mean) and only inflates a's norm: ρ shrinks toward 0 "
        "with its sign kept, and the claims decide the sign; the unit tests hold spearman to "
        "scipy",
        operator="scale_x2", before="ra - ra.mean()",
    ),
    SurvivorReason(
        "_quantile", OUTSIDE, _CI + " (here the quantile at (1 + level/2)/2: a narrower interval)",
        operator="scale_x0.5", before="1 + level",
    ),
    SurvivorReason(
        "layer_norm", EQUIVALENT,
        "the attention model's LayerNorm without its additive β: β enters eq. (70) additively, "
        "so ∂y/∂x (eqs. (71)–(75)) and the proofs' Lipschitz conditions are unchanged and the "
        "network is another member of the architecture family the width and sample-size "
        "claims quantify over (β's gradient is the head's weights, so its NTK block is an "
        "input-independent constant); the unit tests of ntsim.core pin eq. (70) (they kill "
        "this mutant)",
        operator="drop_term", before="jax.lax.rsqrt(var + eps) + bias",
    ),
    # ------------------------------------------------------------------ linearization
    *LINEARIZATION_REASONS,
    # ------------------------------------------------------------------ overtraining
    *OVERTRAINING_REASONS,
    # ------------------------------------------------------------------ early_stopping
    *EARLY_STOPPING_REASONS,
    # ------------------------------------------------------------------ ntsim.core statistics
    *(
        SurvivorReason(function, OUTSIDE, _CI + f" (here {what})", operator=operator,
                       before=before)
        for function, operator, before, what in (
            ("bootstrap_ci", "drop_term", "1 - level", "the lower quantile moved to the median"),
            ("mean_ci", "scale_x2", "mean + half", "the upper end twice as far from the mean"),
            ("spearman_ci", "flip_sign", "centre + half",
             "the upper end mirrored below the centre"),
            ("bootstrap_ci", "flip_sign", "1 + level",
             "the upper quantile moved to the lower one"),
            ("mean_ci", "drop_term", "mean + half", "the upper end at the mean"),
            ("bootstrap_ci", "scale_x0.5", "1 - level", "the lower quantile at (1 − level/2)/2"),
            ("mean_ci", "scale_x2", "mean - half", "the lower end twice as far from the mean"),
        )
    ),  # fmt: skip
    SurvivorReason(
        "spearman_ci", OUTSIDE,
        _CI_NO_VERDICT + " (here the lower end twice as far on Fisher's z scale); "
        "tests/core/test_interval_estimators.py::test_spearman_ci_is_the_fieller_interval_with_"
        "equal_tails, added after this matrix was made, kills it (checked by applying it)",
        operator="scale_x2", before="centre - half",
    ),
    # ------------------------------------------------------------------ stability
    SurvivorReason(
        "_build", OUTSIDE,
        "a table's name and caption swapped: labels; the printed numbers (means, stds, Avg) the "
        "claims check are the transcribed ones",
        operator="swap_args", before="StabilityTable(name, caption,",
    ),
    SurvivorReason(
        "soudry_rate", EQUIVALENT,
        "Soudry et al.'s log log t/log t doubled: fit_soudry_constant fits C against the same "
        "rate, so the fitted C halves and C·rate is unchanged; Thm 2.4 states the rate up to "
        "'some constant C', which no claim can pin",
        operator="scale_x2",
    ),
    SurvivorReason(
        "loo_sweep", OUTSIDE,
        "the sweep's wall-clock seconds doubled: a timing that differs between any two runs (so "
        "the output comparison flags it for every mutant of this function) and that no claim "
        "reads",
        operator="scale_x2", before="time.perf_counter() - start",
    ),
    SurvivorReason(
        "simulate_printed_bound_region", EQUIVALENT,
        "n drawn from randint(2, 1) (every n = 2) instead of {2, …, max_samples}: the identity "
        "is stated for every n and n cancels in it (eq. (3) ∝ 1/n, so n·r·eq3 does not depend "
        "on n): the claim's margins are the same; only the recorded n and eq. (3) change",
        operator="drop_term", before="s.max_samples + 1",
    ),
    SurvivorReason(
        "simulate_printed_bound_region", EQUIVALENT,
        "n drawn from {2, …, max_samples − 2} instead of {2, …, max_samples}: the identity is "
        "stated for every n and n cancels in it (eq. (3) ∝ 1/n), so the claim's margins are "
        "the same; only the recorded n and eq. (3) change",
        operator="flip_sign", before="s.max_samples + 1",
    ),
    SurvivorReason(
        "soudry_rate", EQUIVALENT,
        "Soudry et al.'s log log t/log t halved: fit_soudry_constant fits C against the same "
        "rate, so the fitted C doubles and C·rate is unchanged; Thm 2.4 states the rate up to "
        "'some constant C', which no claim can pin",
        operator="scale_x0.5", before="jnp.log(log_t) / log_t",
    ),
    SurvivorReason(
        "thm2_2_bound_corrected", OUTSIDE, LOOSER + " (the corrected Thm 2.2 bound doubled)",
        operator="scale_x2", before="jnp.sqrt(2 * lipschitz * radius / beta) / (n * (1 - root))",
    ),
    SurvivorReason(
        "simulate_pointwise_lemma", EQUIVALENT,
        "the quadratic family's offset c (0 on half the instances, Exp(1) on the rest) scaled "
        "by ½ or 2: f = ½(w − a)ᵀH(w − a) + c stays a non-negative β-smooth quadratic, the "
        "hypothesis of Lemmas A.1.2, A.1.3 and A.5.1, so the instances are drawn from another "
        "family the lemmas cover; the c = 0 half (where A.1.3 is tightest) is untouched",
        operator=("scale_x2", "scale_x0.5"), before="ff.quadratic_loss(w, h, a) + c",
    ),
    SurvivorReason(
        "simulate_lemma_a2_1", EQUIVALENT,
        "pairs b = 0.1g (−a dropped) or b = −a (the noise dropped) instead of the "
        "near-antipodal −a + 0.1g: generic or exactly antipodal pairs, on both of which Lemma "
        "A.2.1 (stated for every pair) holds; the antipodal anchors b = −t·a are drawn apart "
        "and unchanged",
        operator="drop_term", before="-a + 0.1 * b",
    ),
    SurvivorReason(
        "lemma_a2_2_sides", OUTSIDE, TIGHTER + " (Lemma A.2.2's bound without its 1 +)",
        operator="drop_term", before="1 + jnp.linalg.norm(v2, axis=-1) * nx",
    ),
    SurvivorReason(
        "loglog_slope", OUTSIDE,
        "a log-log slope that needs three positive points instead of two: the stability claims "
        "read loglog_slope only into diagnostics (fig6's slopes, fig8's two nonzero-init "
        "cells), never into a verdict; tests/core/test_loglog_slope.py pins the two-point slope "
        "(it kills this mutant)",
        operator="compare", before="ok.sum() < 2",
    ),
    *(
        SurvivorReason(
            "_random_points", EQUIVALENT,
            f"points at {size} the base scale: the scales already spread log-uniformly over "
            "10^±2, and Lemmas A.1.2, A.1.3 and A.5.1 hold at every point of every loss, so "
            "this is another draw of the family the pointwise claims quantify over",
            operator=operator, before="jax.random.normal(k_dir, (count, *shape))",
        )
        for operator, size in (("scale_x0.5", "half"), ("scale_x2", "twice"))
    ),
    *(
        SurvivorReason(
            "multi_head_init", EQUIVALENT,
            f"MHLoss heads from N(0, {variance}) instead of N(0, σ_0²): Sec 3.2 and Cor 3.1 ask "
            "for random initial heads but fix no scale, so this is another instance of the "
            "family",
            operator=operator, before="scale * jax.random.normal(key, (num_heads, dim + 1))",
        )
        for operator, variance in (("scale_x0.5", "σ_0²/4"), ("scale_x2", "4σ_0²"))
    ),
    SurvivorReason(
        "soudry_rate", EQUIVALENT,
        "log log t/(log t − 1) for Soudry et al.'s log log t/log t: the two differ by the "
        "factor log t/(log t − 1) → 1, so they are the same rate up to a constant for t ≥ t_0, "
        "and Thm 2.4 states the rate with 'some constant C', which fit_soudry_constant fits "
        "(stability.thm2_4.bound is a sanity check); the doctest pins the formula (it kills "
        "this mutant)",
        operator="n_minus_one", before="jnp.log(log_t) / log_t",
    ),
    SurvivorReason(
        "spearman", EQUIVALENT,
        "ρ multiplied by denom/(denom − 1) with denom = (Σr_a²Σr_b²)^½ = n(n² − 1)/12 on "
        "centred ranks without ties: the sign the claims decide is kept, and the size moves by "
        "1/(denom − 1), "
        "0.15% at N = 20, the size of the interval claims' coverage draws (its change of "
        "intervals.spearman_ci.estimate_mean's numbers decides nothing there); the unit tests "
        "hold spearman to scipy (they kill this mutant)",
        operator="n_minus_one", before="np.sum(ra * rb) / denom",
    ),
    SurvivorReason(
        "simulate_bootstrap_coverage", EQUIVALENT,
        "the resampling generators' seeds drawn below 2³¹ (JAX clips the int32 bound) instead "
        "of below 2³¹ − 1: another set of seeds, so another draw of the same coverage "
        "experiment, whose coverage the claims decide on its binomial interval",
        operator="drop_term", before="2 ** 31 - 1",
    ),
    SurvivorReason(
        "simulate_synthetic_panel", EQUIVALENT,
        "the panel's params (an array) and rows (a dict of slices) swapped in the run: a swap "
        "whose same-type guard never fires, so the run is the original one (no claim's "
        "numbers moved and none raised); the unit test of the panel's rows kills the "
        "unguarded swap",
        operator="swap_args", before="SyntheticPanelRun(np.asarray(steps), params,",
    ),
    SurvivorReason(
        "simulate_lemma_a2_2", EQUIVALENT,
        "the case-(ii) anchors drawn at reach α‖x‖ = 1 exactly instead of 1 + Exp(1): the "
        "boundary of the same case, on which Lemma A.2.2 (stated for every pair) holds; the "
        "random pairs are unchanged",
        operator="drop_term", before="1.0 + jax.random.exponential(ka[0], (anchors,)",
    ),
    SurvivorReason(
        "_worst_kkt", OUTSIDE,
        "the KKT residual is the solver's certificate, no statement of the paper: every solve "
        "on the claims' instances converges (≤ 1e-9), so the best and the worst residual both "
        "pass the claims' 1e-8 guard; tests/theory/test_stability_head_tuning_runs.py pins "
        "_worst_kkt to the largest residual (it kills this mutant)",
        operator="min_max", before="jnp.max(jnp.stack([jnp.max(s.kkt_residual)",
    ),
    SurvivorReason(
        "_worst_kkt", OUTSIDE,
        "the smallest instead of the largest KKT residual within each solve's batch: the "
        "solver's certificate, no statement of the paper; every solve on the claims' "
        "instances converges (≤ 1e-9), so both pass the claims' 1e-8 guard",
        operator="min_max", before="jnp.max(s.kkt_residual)",
    ),
    SurvivorReason(
        "lemma_a5_1_sides", OUTSIDE,
        "the descent lemma's right side with 2f(w) for f(w): a bound made looser (the losses "
        "are ≥ 0), and Lemma A.5.1 states the bound, not its tightness; the doctest pins the "
        "formula (it kills this mutant). A bound claim cannot see it even at the equality "
        "case (f = (β/2)‖w‖², η = 1/β: the left side 0, the mutant's right side (β/2)‖w‖² ≥ 0); "
        "only a claim of the equality would",
        operator="scale_x2", before="value - learning_rate / 2 * grad @ grad",
    ),
    SurvivorReason(
        "simulate_mmr_margin", EQUIVALENT,
        "projected GD on eq. (8) with half the step: another run of the same descent; the "
        "claim is that MMR raises the SVM margin of the encoded data, which it does at any "
        "step that descends (the paper fixes no step)",
        operator="scale_x0.5", before="s.step_size * jax.grad(objective)(w)",
    ),
    SurvivorReason(
        "simulate_multi_head", OUTSIDE,
        "the smallest instead of the largest KKT residual over the MHLoss datasets: the "
        "solver's certificate, not a statement; every solve converges (≤ 1e-9), so both pass "
        "the claims' 1e-8 guard",
        operator="min_max", before="jnp.max(kkt)",
    ),
    SurvivorReason(
        "simulate_loo_bound", OUTSIDE,
        "svm_gap = ‖ŵ_{S^i} − ŵ_S‖ feeds only a diagnostic of stability.thm2_4.bound; the "
        "claims read the SVM term through Lemma A.2.5's bound (ν, λ, B, γ_S) and the direction "
        "distance svm_direction, which this mutant leaves unchanged",
        operator="scale_x0.5", before="head_si - head_s",
    ),
    SurvivorReason(
        "simulate_lemma_a2_1", EQUIVALENT,
        "near-antipodal pairs b = −2a + 0.1g instead of −a + 0.1g: another draw of the "
        "near-antipodal family on which Lemma A.2.1 holds (the exact antipodal anchors "
        "b = −t·a are drawn apart and unchanged)",
        operator="scale_x2", before="-a + 0.1 * b",
    ),
    SurvivorReason(
        "simulate_pointwise_lemma", OUTSIDE,
        "the scale that normalises lhs − rhs (for the round-off slack) taken as the smaller "
        "instead of the larger |side|: a positive rescaling of each margin, and Lemmas A.1.2, "
        "A.1.3 and A.5.1 state lhs ≤ rhs, the margin's sign, which no positive scale changes "
        "(the normalisation is the report's, not the paper's)",
        operator="min_max", before="jnp.maximum(jnp.abs(sides.rhs), jnp.abs(sides.lhs))",
    ),
    SurvivorReason(
        "simulate_lemma_a2_1", EQUIVALENT,
        "near-antipodal pairs b = −a − 0.1g instead of −a + 0.1g with g ~ N(0, I) independent "
        "of a: −g has the law of g, so this is another draw of the same family",
        operator="flip_sign", before="-a + 0.1 * b",
    ),
    SurvivorReason(
        "chunk_divisor", EQUIVALENT,
        "the smallest divisor (1) instead of the largest as the lax.map chunk: the same "
        "vmapped function on the same keys, batched differently: on an 8-dataset loo_sweep "
        "(1,000 GD steps, the SVM references) every output moved by ≤ 3e-14 absolute, round-off; "
        "the matrix's elementwise test flags it through numbers that are solver noise near 0 "
        "(‖ŵ_{S^i} − ŵ_S‖ ≈ 3e-9); tests/theory/test_stability_synthetic_suite.py pins "
        "chunk_divisor to the largest divisor (it kills this mutant)",
        operator="min_max",
    ),
    SurvivorReason(
        "_solve", EQUIVALENT,
        "the interior-point corrector's centring target with s·α halved: another search "
        "direction for the same convex program, which the iteration still drives to its KKT "
        "point within the solver's tolerance (the claims' 1e-8 KKT guard passes), so the "
        "claims read the same max-margin solution up to that tolerance; the unit tests of "
        "ntsim.core's SVM solver kill this mutant",
        operator="scale_x0.5", before="sigma * gap - s * alpha",
    ),
    *(
        SurvivorReason(
            function, OUTSIDE,
            "the smallest instead of the largest KKT residual over the solves: the solver's "
            "certificate, not a statement of the paper; every solve on the claims' instances "
            "converges (≤ 1e-9), so both pass the claims' 1e-8 guard",
            operator="min_max", before=before,
        )
        for function, before in (("simulate_soudry_directions", "jnp.max(kkt)"),
                                 ("simulate_svm_gaps", "jnp.maximum(jnp.max(kkts), _worst_kkt"),
                                 ("simulate_two_point_svm", "jnp.max(kkt)"),
                                 ("simulate_margin_monotone", "jnp.max(kkt)"),
                                 ("svm_reference", "jnp.max(jnp.concatenate([both.kkt_residual"))
    ),  # fmt: skip
    SurvivorReason(
        "simulate_step_sizes", EQUIVALENT,
        "GD recorded to step T − 1 instead of T (1,000 steps at full scale, 100 at quick): the "
        "learning-rate claims compare step sizes at a horizon the paper leaves free, and each "
        "holds at every large T, so this is the same run read one step earlier",
        operator="drop_term", before="s.num_steps + 1",
    ),
    *LINEAR_TEACHERS_REASONS,
)  # fmt: skip


def reason_for(outcome: Mapping) -> SurvivorReason | None:
    """The first reason of :data:`REASONS` that covers ``outcome``, or None."""
    return next((r for r in REASONS if r.matches(outcome)), None)
