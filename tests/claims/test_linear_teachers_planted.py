"""Planted bugs on the formulas the linear-teachers claims check: each must change the
claim's verdict or make it not as expected (run through ``run_claims`` at quick scale)."""

from __future__ import annotations

import pytest

from ntsim.claims import get_claim, run_claims
from ntsim.theory.linear_teachers import _deep


def _record(claim_id: str):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,))
    assert record.verdict != "error", record.per_seed[0].error
    return record


def _patch_bounds(monkeypatch, change):
    original = _deep.random_projection_bounds

    def planted(x, theta_source, theta_target):
        bounds = original(x, theta_source, theta_target)
        n, d = x.shape
        return change(bounds, (d - n) / d)

    monkeypatch.setattr(_deep, "random_projection_bounds", planted)


@pytest.mark.parametrize(
    "name, change",
    [
        # the planted bug: (9) made smaller by flipping the sign of its ζ² term
        ("zeta² sign flipped", lambda b, frac: b._replace(eq9=b.eq9 - 2 * frac * b.zeta**2)),
        # the opposite direction: (9) made larger by doubling its ζ² term
        ("zeta² doubled", lambda b, frac: b._replace(eq9=b.eq9 + frac * b.zeta**2)),
        # a dropped (1 + ε)² on the leading term
        ("(1+ε)² dropped", lambda b, frac: b._replace(
            eq9=(b.eq9 - frac * b.zeta**2) / (1 + b.epsilon) ** 2 + frac * b.zeta**2)),
    ],
)  # fmt: skip
def test_printed_bound9_is_two_sided(monkeypatch, name, change):
    assert _record("linear_teachers.thm5_4.bound9_printed").as_expected
    _patch_bounds(monkeypatch, change)
    record = _record("linear_teachers.thm5_4.bound9_printed")
    assert record.verdict == "refuted", name  # still violated ...
    assert not record.as_expected, name  # ... but no longer by the declared counterexample


def test_corrected_bound9_catches_a_dropped_factor(monkeypatch):
    _patch_bounds(monkeypatch, lambda b, frac: b._replace(eq9_corrected=b.eq9_corrected / 4))
    record = _record("linear_teachers.thm5_4.bounds")
    assert record.verdict == "refuted" and not record.as_expected


def test_fig3_frozen_expectation_catches_a_wrong_coefficient(monkeypatch):
    original = _deep.frozen_first_layer_coefficient
    monkeypatch.setattr(_deep, "frozen_first_layer_coefficient",
                        lambda x, y, theta: 1.1 * original(x, y, theta))  # fmt: skip
    record = _record("linear_teachers.fig3.frozen_expectation")
    assert record.verdict == "refuted" and not record.as_expected


def test_fig3_ordering_catches_swapped_models(monkeypatch):
    """Frozen and fine-tuned limits swapped (a wiring error) must refute the ordering."""
    from ntsim.theory.linear_teachers import _freezing

    original = _freezing._limits

    def swapped(*args):
        out = original(*args)
        return {**out, "frozen": out["finetune"], "finetune": out["frozen"]}

    monkeypatch.setattr(_freezing, "_limits", swapped)
    record = _record("linear_teachers.fig3.ordering")
    assert record.verdict == "refuted" and not record.as_expected


def test_fig2b_catches_swapped_settings(monkeypatch):
    """Scale target and scale source swapped: the figure's reading is refuted and the
    universal reading no longer matches its counterexample."""
    from ntsim.theory.linear_teachers import _scale

    original = _scale._scale_draw

    def swapped(key, setting):
        out = original(key, setting)
        return {"scale_target": out["scale_source"], "scale_source": out["scale_target"]}

    monkeypatch.setattr(_scale, "_scale_draw", swapped)
    figure = _record("linear_teachers.fig2b.target_vs_source")
    assert figure.verdict == "refuted" and not figure.as_expected
    universal = _record("linear_teachers.fig2b.target_vs_source_every_n")
    assert not universal.as_expected


@pytest.mark.parametrize("name", ["hinf_norm", "kernel_predictor"])
def test_kernel_regime_catches_a_wrong_closed_form(monkeypatch, name):
    """√(ỹᵀ(H^∞)⁻¹ỹ) × 1.5, or the kernel predictor's correction × 1.5, must refute it."""
    from ntsim.theory.linear_teachers import _relu

    original = getattr(_relu, name)
    if name == "hinf_norm":
        planted = lambda hinf, residual: 1.5 * original(hinf, residual)  # noqa: E731
    else:

        def planted(x_test, x, f_source, residual):
            base = original(x_test, x, f_source, 0.0 * residual)
            return base + 1.5 * (original(x_test, x, f_source, residual) - base)

    monkeypatch.setattr(_relu, name, planted)
    record = _record("linear_teachers.thm6_1.kernel_regime")
    assert record.verdict == "refuted" and not record.as_expected


@pytest.mark.parametrize(
    "claim_id, name, factor",
    [
        # (3) itself is loose (worst R/bound ≈ 0.08 at quick): a × 0.5 there is invisible,
        # but the Davis–Kahan step is tight to ≈ 0.75
        ("linear_teachers.thm4_2.deterministic", "null_space_top_overlap", 2.0),
        # the slope of log c is scale-invariant: only the absolute anchor c ≤ 4 sees × 2
        ("linear_teachers.thm4_2.implied_constant", "implied_constant", 2.0),
    ],
)
def test_thm4_2_catches_a_wrong_factor(monkeypatch, claim_id, name, factor):
    from ntsim.theory.linear_teachers import _bounds

    original = getattr(_bounds, name)
    monkeypatch.setattr(_bounds, name, lambda *a, **k: factor * original(*a, **k))
    record = _record(claim_id)
    assert record.verdict == "refuted" and not record.as_expected


def test_thm4_1_risk_catches_a_transposed_covariance_root(monkeypatch):
    """eq. (2) with Σ replaced by Σ² (a square-root slip) must refute the Monte Carlo claim."""
    from ntsim.theory.linear_teachers import _regression

    original = _regression.risk_thm4_1
    monkeypatch.setattr(_regression, "risk_thm4_1",
                        lambda x, ts, tt, sigma: original(x, ts, tt, sigma @ sigma))  # fmt: skip
    record = _record("linear_teachers.thm4_1.risk_monte_carlo")
    assert record.verdict == "refuted" and not record.as_expected


def test_cor6_2_catches_a_smaller_constant(monkeypatch):
    """Cor. 6.2 with 1 in place of 3 (the bound × 1/3) must be refuted."""
    from ntsim.theory.linear_teachers import _relu

    original = _relu.hinf_norm_bound_cor6_2
    monkeypatch.setattr(_relu, "hinf_norm_bound_cor6_2", lambda s, t: original(s, t) / 3)
    record = _record("linear_teachers.cor6_2.bound")
    assert record.verdict == "refuted" and not record.as_expected


def test_thm6_1_risk_catches_a_dropped_factor(monkeypatch):
    """eq. (11)'s main term without its √ (ỹᵀ(H^∞)⁻¹ỹ/n instead of its root) is refuted."""
    from ntsim.theory.linear_teachers import _relu

    original = _relu.risk_bound_thm6_1
    monkeypatch.setattr(_relu, "risk_bound_thm6_1",
                        lambda *a, **k: original(*a, **k) ** 2 / 4)  # fmt: skip
    record = _record("linear_teachers.thm6_1.risk_main_term")
    assert record.verdict == "refuted" and not record.as_expected


# ------------------------------------------------- Thms 5.2, 5.3, Fig 1, H^∞ (contract v2)


def test_root_equation_catches_a_wrong_root(monkeypatch):
    """‖β_L‖ off by 0.1% (a wrong bisection) leaves h(b) ≠ 0: refuted."""
    original = _deep.deep_limit_scale

    def planted(*args, **kwargs):
        sol = original(*args, **kwargs)
        return sol._replace(norm=1.001 * sol.norm)

    monkeypatch.setattr(_deep, "deep_limit_scale", planted)
    record = _record("linear_teachers.thm5_2.root_equation")
    assert record.verdict == "refuted" and not record.as_expected


@pytest.mark.parametrize(
    "claim_id",
    ["linear_teachers.thm5_2.gd_converges", "linear_teachers.thm5_2.approximately_balanced"],
)
def test_gd_claims_catch_a_wrong_depth_exponent(monkeypatch, claim_id):
    """eq. (5) evaluated at L + 1 instead of L: GD no longer converges to it."""
    original = _deep.deep_fine_tuned_limit
    monkeypatch.setattr(_deep, "deep_fine_tuned_limit",
                        lambda x, s, t, depth: original(x, s, t, depth + 1.0))  # fmt: skip
    record = _record(claim_id)
    assert record.verdict != "holds" and not record.as_expected


def test_end_to_end_catches_a_wrong_preconditioner(monkeypatch):
    """The end-to-end preconditioner of depth L + 1: the two paths separate by O(1)."""
    original = _deep.end_to_end_preconditioner
    monkeypatch.setattr(_deep, "end_to_end_preconditioner", lambda depth: original(depth + 1))
    record = _record("linear_teachers.thm5_2.end_to_end")
    assert record.verdict == "refuted" and not record.as_expected


def test_null_space_claim_catches_a_wrong_projector(monkeypatch):
    """P_∥ in place of P_⊥ (a swapped projector) shows the row-space motion of W_1."""
    import jax.numpy as jnp

    from ntsim.theory.linear_teachers import _common

    original = _common.null_space_projector
    monkeypatch.setattr(_common, "null_space_projector",
                        lambda x: jnp.eye(x.shape[1]) - original(x))  # fmt: skip
    record = _record("linear_teachers.thm5_2.null_space_first_layer")
    assert record.verdict == "refuted" and not record.as_expected


def test_aligned_claims_catch_wrong_formulas(monkeypatch):
    """eq. (8) × 1.01 refutes thm5_3.aligned; c_L × 1.001 refutes the depth formula."""
    original_eq8 = _deep.aligned_risk_depth1
    monkeypatch.setattr(_deep, "aligned_risk_depth1", lambda *a: 1.01 * original_eq8(*a))
    record = _record("linear_teachers.thm5_3.aligned")
    assert record.verdict == "refuted" and not record.as_expected
    monkeypatch.undo()
    original = _deep.deep_limit_scale

    def planted(*args, **kwargs):
        sol = original(*args, **kwargs)
        return sol._replace(coefficient=1.001 * sol.coefficient)

    monkeypatch.setattr(_deep, "deep_limit_scale", planted)
    record = _record("linear_teachers.thm5_3.aligned_depths")
    assert record.verdict == "refuted" and not record.as_expected


def test_fig1_catches_swapped_alignments(monkeypatch):
    """Top and bottom alignment swapped (a wiring error): the curves are no longer what
    Fig. 1 defines, so neither Fig. 1 claim can hold."""
    from ntsim.theory.linear_teachers import _alignment

    original = _alignment.alignment_directions

    def swapped(*args, **kwargs):
        dirs = original(*args, **kwargs)
        return dirs._replace(top_align=dirs.bottom_align, bottom_align=dirs.top_align)

    monkeypatch.setattr(_alignment, "alignment_directions", swapped)
    for claim_id in (
        "linear_teachers.fig1.crossing",
        "linear_teachers.fig1.deterministic_equivalent",
    ):
        record = _record(claim_id)
        assert record.verdict == "inconclusive" and not record.as_expected, claim_id
        assert "Outside the statement's hypotheses" in record.per_seed[0].result.notes


def test_fig1_catches_a_spectrum_block_one_too_wide(monkeypatch):
    """``arange(d) <= top`` for ``< top`` in the spectrum only: one bottom coordinate of
    Top-align ``v`` sits on a top eigenvalue; both claims see the curves are not Fig. 1's."""
    from ntsim.core import two_level_spectrum
    from ntsim.theory.linear_teachers import _covariance_alignment

    monkeypatch.setattr(_covariance_alignment, "two_level_spectrum",
                        lambda d, top, a, b: two_level_spectrum(d, top + 1, a, b))  # fmt: skip
    for claim_id in (
        "linear_teachers.fig1.crossing",
        "linear_teachers.fig1.deterministic_equivalent",
    ):
        record = _record(claim_id)
        assert record.verdict == "inconclusive" and not record.as_expected, claim_id


@pytest.mark.parametrize(
    "name, kappa, bottom_share",
    [
        ("bottom block halved", lambda t, b: (t * b) ** 0.5, 0.5),
        ("κ_× = (λ_t + λ_b)/2 (a referee's bug: n_× × 0.82)", lambda t, b: (t + b) / 2, 1.0),
        ("κ_× = λ_t λ_b, the root dropped (n_× × 1.28)", lambda t, b: t * b, 1.0),
    ],
    ids=["bottom-halved", "kappa-mean", "kappa-no-root"],
)
def test_fig1_deterministic_equivalent_catches_a_wrong_predicted_crossing(
    monkeypatch, name, kappa, bottom_share
):
    """A crossing formula that disagrees with the risk formula: the two R_DE curves no
    longer change order at the n_× it gives (exact, no tolerance)."""
    from ntsim.theory.linear_teachers import _alignment

    def planted(top_value, bottom_value, d, top):
        k = kappa(top_value, bottom_value)
        return top * top_value / (top_value + k) + bottom_share * (d - top) * bottom_value / (
            bottom_value + k
        )

    monkeypatch.setattr(_alignment, "deterministic_equivalent_crossing", planted)
    record = _record("linear_teachers.fig1.deterministic_equivalent")
    assert record.verdict == "refuted" and not record.as_expected, name


def test_fig1_deterministic_equivalent_catches_a_doubled_risk(monkeypatch):
    from ntsim.theory.linear_teachers import _alignment

    original = _alignment.deterministic_equivalent_risk
    monkeypatch.setattr(_alignment, "deterministic_equivalent_risk",
                        lambda *a: 2.0 * original(*a))  # fmt: skip
    record = _record("linear_teachers.fig1.deterministic_equivalent")
    assert record.verdict == "refuted" and not record.as_expected


@pytest.mark.parametrize(
    "claim_id, factor",
    [
        ("linear_teachers.thm6_1.hinf_empirical_gram", 1.02),  # a bias of 2% of H^∞
        ("linear_teachers.thm6_1.hinf_neural_tangents", 1.0 + 1e-9),
    ],
)
def test_hinf_claims_catch_a_scaled_closed_form(monkeypatch, claim_id, factor):
    from ntsim.theory.linear_teachers import _ntk_bounds

    original = _ntk_bounds.two_layer_relu_hinf
    monkeypatch.setattr(_ntk_bounds, "two_layer_relu_hinf", lambda *a: factor * original(*a))
    record = _record(claim_id)
    assert record.verdict == "refuted" and not record.as_expected


def test_frozen_parallel_requires_runs_with_negative_c_star_to_stall_at_zero():
    """Thm 5.5 with c* ≤ 0: GD must stall at c ≈ 0; a run that reached c* (a chain that
    could change sign) is caught, a round-off-sized step past 0 is not a violation."""
    import numpy as np

    from ntsim.claims.linear_teachers._freezing import check_frozen_parallel
    from ntsim.theory.linear_teachers import FrozenFirstLayerRun

    def run(c_gd):
        c_star = np.array([0.8, -3.2])
        return FrozenFirstLayerRun(
            n=np.array([10, 2]), off_parallel=np.zeros(2), c_gd=np.array([0.8, c_gd]),
            c_star=c_star, risk=np.ones(2), floor=np.ones(2), nonfinite=np.zeros(2, bool),
        )  # fmt: skip

    assert check_frozen_parallel(run(-1.6e-8)).outcome == "holds"
    assert check_frozen_parallel(run(1e-7)).outcome == "holds"
    assert check_frozen_parallel(run(-3.2)).outcome == "refuted"  # went to c*
    assert check_frozen_parallel(run(-1e-3)).outcome == "refuted"  # through zero


@pytest.mark.parametrize(
    ("constant", "derived_factor", "refuted"),
    [
        # Cor. 6.2 with 1.5 for 3: nearly antipodal pairs reach 1.95‖v‖ and break it (and
        # the closed-form claim's transcription part sees 1.5‖v‖ ≠ 3‖v‖)
        (1.5, 2.0, {"bound_two_inputs", "two_input_closed_form"}),
        # the derived bound's constant 2 lowered to 1.9: the closed form notices
        (3.0, 1.9, {"two_input_closed_form"}),
        # a printed constant that is still a valid bound (2): only the transcription part sees it
        (2.0, 2.0, {"two_input_closed_form"}),
        (3.0, 2.0, set()),
    ],
    ids=["printed_halved", "derived_lowered", "printed_two", "genuine"],
)
def test_cor6_2_constants_on_two_inputs(monkeypatch, constant, derived_factor, refuted):
    """Cor. 6.2's bounds on two unit inputs, where the ratio has a closed form tending to 2."""
    import jax

    from ntsim.theory.linear_teachers import _relu

    monkeypatch.setattr(_relu, "COR6_2_FACTOR", constant)
    monkeypatch.setattr(_relu, "DERIVED_FACTOR", derived_factor)
    jax.clear_caches()
    for name in ("bound_two_inputs", "two_input_closed_form"):
        record = _record(f"linear_teachers.cor6_2.{name}")
        assert (record.verdict == "refuted") == (name in refuted), name
    monkeypatch.undo()
    jax.clear_caches()


def test_cor6_2_pair_closed_form_against_a_direct_solve():
    """The closed form against H^∞ built entry by entry and a generic solve (no Cholesky)."""
    import math

    import numpy as np

    from ntsim.theory.linear_teachers import cor6_2_pairs

    for t in (-0.9, -0.3, 0.0, 0.6):
        m = (math.pi - math.acos(t)) / (2 * math.pi)
        hinf = np.array([[0.5, t * m], [t * m, 0.5]])
        # two unit inputs with cosine t in the plane; the gap a·u_− + b·u_+ gives ỹ = X(gap)
        x = np.array([[1.0, 0.0], [t, math.sqrt(1 - t**2)]])
        u_minus = (x[0] - x[1]) / np.linalg.norm(x[0] - x[1])
        u_plus = (x[0] + x[1]) / np.linalg.norm(x[0] + x[1])
        for a, b in ((1.0, 0.0), (0.0, 1.0), (0.6, -0.8)):
            residual = x @ (a * u_minus + b * u_plus)
            direct = math.sqrt(residual @ np.linalg.solve(hinf, residual))
            closed = float(cor6_2_pairs.cor6_2_pair_norm(t, a, b))
            assert abs(closed - direct) < 1e-5 * direct, (t, a, b)


def test_cor6_2_pairs_catch_a_shift_along_the_ones_direction(monkeypatch):
    """H^∞ + 0.1·11ᵀ keeps the eigenvalue along (1, −1): only the pairs with a component
    along x_1 + x_2 see it, and the closed-form claim must (the bound, loose there, need not)."""
    import jax
    import jax.numpy as jnp

    from ntsim.theory.linear_teachers import cor6_2_pairs

    original = cor6_2_pairs.two_layer_relu_hinf
    monkeypatch.setattr(cor6_2_pairs, "two_layer_relu_hinf",
                        lambda x: original(x) + 0.1 * jnp.ones((x.shape[0],) * 2))  # fmt: skip
    jax.clear_caches()
    assert _record("linear_teachers.cor6_2.two_input_closed_form").verdict == "refuted"
    monkeypatch.undo()
    jax.clear_caches()


@pytest.mark.parametrize(
    "plant",
    [
        ("THM6_1_FACTOR", 1.0),  # Thm 6.1's main term halved
        ("THM6_1_FACTOR", 4.0),  # doubled
        ("COR6_3_FACTOR", 12.0),  # Cor 6.3's doubled: no longer Thm 6.1 ∘ Cor 6.2
        (None, None),
    ],
    ids=["thm6_1_halved", "thm6_1_doubled", "cor6_3_doubled", "genuine"],
)
def test_cor6_3_composition_on_two_inputs(monkeypatch, plant):
    """Cor. 6.3 = Thm 6.1 with Cor. 6.2 substituted, on the pairs with a closed-form norm."""
    import jax

    from ntsim.theory.linear_teachers import _relu

    name, value = plant
    if name is not None:
        monkeypatch.setattr(_relu, name, value)
    jax.clear_caches()
    record = _record("linear_teachers.cor6_3.composition_two_inputs")
    assert record.verdict == ("holds" if name is None else "refuted")
    monkeypatch.undo()
    jax.clear_caches()


def test_exact_ingredients_catch_a_sample_covariance_over_n_minus_one(monkeypatch):
    """ĝ from XᵀX/(n − 1) instead of the paper's XᵀX/n: the exact mean at n = 2 is missed."""
    import jax.numpy as jnp

    from ntsim.theory.linear_teachers import _bounds

    def planted(x, covariance):
        n = x.shape[0]
        shifted = x.T @ x / (n - 1) - covariance
        return jnp.max(jnp.abs(jnp.linalg.eigvalsh(shifted)))

    monkeypatch.setattr(_bounds, "realised_deviation", planted)
    (record,) = run_claims([get_claim("linear_teachers.thm4_2.exact_ingredients")],
                           scale="quick", seeds=(0,))  # fmt: skip
    # the one-row draws (n = 1) divide by 0: a non-finite ĝ is an error, never a verdict
    assert record.verdict == "error" and "not finite" in record.per_seed[0].error


def test_exact_ingredients_catch_a_doubled_effective_rank(monkeypatch):
    from ntsim.theory.linear_teachers import _bounds

    original = _bounds.effective_rank
    monkeypatch.setattr(_bounds, "effective_rank", lambda s: 2.0 * original(s))
    record = _record("linear_teachers.thm4_2.exact_ingredients")
    assert record.verdict == "refuted" and not record.as_expected


def test_exact_ingredients_catch_a_frobenius_norm_for_the_operator_norm(monkeypatch):
    """‖Σ̃ − Σ‖_F for ‖Σ̃ − Σ‖₂: equal on 1 × 1 matrices, so only the one-row draws from σ²I_d
    (d > 1) see it (a referee's point)."""
    import jax.numpy as jnp

    from ntsim.theory.linear_teachers import _bounds

    def planted(x, covariance):
        return jnp.linalg.norm(x.T @ x / x.shape[0] - covariance)

    monkeypatch.setattr(_bounds, "realised_deviation", planted)
    record = _record("linear_teachers.thm4_2.exact_ingredients")
    assert record.verdict == "refuted" and not record.as_expected


def _mutant(module, function: str, after: str, before: str | None = None) -> dict:
    """The worker spec of the kill-matrix mutant of ``module.function`` whose mutated text is
    ``after`` (and original ``before``, where given), for :func:`ntsim.mutation.apply_mutant`."""
    import inspect

    from ntsim.mutation import function_sites

    (site,) = [s for s in function_sites(inspect.getsource(module), function)
               if s.after == after and before in (None, s.before)]  # fmt: skip
    return {"module": module.__name__, "function": site.function, "index": site.index,
            "operator": site.operator, "before": site.before}  # fmt: skip


@pytest.mark.parametrize(
    "before, after",
    [
        # the survivors of session 39's matrix: each moved Fig 2a's risks, not its ordering
        ("theta_s @ theta_s - c ** 2", "theta_s @ theta_s + c ** 2"),
        ("theta_s @ eps - ps @ pe", "0.5 * (theta_s @ eps) - ps @ pe"),
        ("eps @ eps - pe @ pe", "eps @ eps - 2.0 * (pe @ pe)"),
        ("gap ** 2 * a ** 2 + 2 * gap * cross", "0.5 * (gap ** 2 * a ** 2) + 2 * gap * cross"),
        # a referee's (session 40): ‖P_∥θ_T‖ and ‖P_∥θ_S‖ enter only through c_L, which both
        # routes share; c_L's own equation on the vectors sees them
        ("al * ps + pe", "al * ps - pe"),
        ("al * ps + pe", "al * ps"),
        ("al * ps + pe", "al * ps + 0.5 * pe"),
        ("_deep.deep_limit_scale(a, c, b, depth)", "_deep.deep_limit_scale(c, a, b, depth)"),
    ],
)
def test_a_wrong_norm_term_of_fig2a_risks_is_refuted_by_the_vector_route(before, after):
    """Fig 2a's ordering survives these mutants of the norm reduction; the identity against
    the vectors does not (checked at d = 100, 2 draws, L = 3 and ∞: the claim's own check)."""
    import jax

    import ntsim.theory.linear_teachers._scale as scale
    from ntsim.claims.linear_teachers._scale_and_depth import check_fig2a_two_routes
    from ntsim.mutation import apply_mutant
    from ntsim.theory import linear_teachers as lt

    setting = lt.DepthSetting(d=100, draws=2, depths=(3.0, float("inf")))
    with jax.enable_x64(True):
        run = lt.simulate_depth_and_alpha(jax.random.PRNGKey(0), setting)
        assert check_fig2a_two_routes(run).outcome == "holds"
        restore = apply_mutant(_mutant(scale, "_depth_draw", after, before))
        try:
            planted = lt.simulate_depth_and_alpha(jax.random.PRNGKey(0), setting)
        finally:
            restore()
    assert check_fig2a_two_routes(planted).outcome == "refuted"


def test_a_task_pair_at_the_wrong_distance_leaves_fig2b_undecided():
    """cos = 1 − δ² for 1 − δ²/2 in :func:`unit_pair_at_distance` draws the pairs at δ√2:
    session 39's matrix had Fig 2b's ordering hold there; the pairs are no longer the
    statement's (‖θ̂_T − θ̂_S‖ = 0.1), so its premise fails and nothing is decided."""
    from ntsim.mutation import apply_mutant

    restore = apply_mutant(_mutant(_deep, "unit_pair_at_distance",
                                   "1.0 - 2.0 * (jnp.asarray(distance) ** 2 / 2)"))  # fmt: skip
    try:
        for claim_id in ("linear_teachers.fig2b.target_vs_source",
                         "linear_teachers.fig2b.target_vs_source_every_n"):  # fmt: skip
            assert _record(claim_id).verdict == "inconclusive", claim_id
    finally:
        restore()


def test_tasks_drawn_at_twice_the_noise_leave_fig3_undecided():
    """θ_T = θ_S + 2·(0.5ξ/√d) in ``_freezing_draw``: session 40's matrix had Fig 3's ordering
    hold on those tasks; they are not the statement's (noise 0.5), so its premise (mean
    ‖θ_T‖² = 1.25 ± 0.05) fails and nothing is decided."""
    import ntsim.theory.linear_teachers._freezing as freezing
    from ntsim.mutation import apply_mutant

    doubled = "theta_s + 2.0 * (setting.task_noise * jax.random.normal(k_xi, (d,)) / jnp.sqrt(d))"
    restore = apply_mutant(_mutant(freezing, "_freezing_draw", doubled))
    try:
        assert _record("linear_teachers.fig3.ordering").verdict == "inconclusive"
    finally:
        restore()
