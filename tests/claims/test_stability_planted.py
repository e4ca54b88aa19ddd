"""Planted bugs in the stability claims' own formulas change their verdicts (contract v2).

Each test monkeypatches one formula on a claim's path (×2, a dropped option, a changed
constant) and runs the claim through :func:`ntsim.claims.run_claims` at quick scale.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import pytest

import ntsim.theory.stability as st
from ntsim.claims import RunCache, get_claim, run_claims
from ntsim.theory.stability import _head_tuning as head_tuning_module
from ntsim.theory.stability import _head_tuning_runs as runs_module

CACHE = RunCache(maxsize=4)


def _record(claim_id: str, cache: RunCache | None = None):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,),
                           cache=cache or RunCache())  # fmt: skip
    (seed,) = record.per_seed
    assert seed.error is None, seed.error
    return record


def test_doubling_the_leave_one_out_metric_is_caught_by_the_anchor(monkeypatch):
    """Every trend claim of the head-tuning family is scale-invariant; the anchor is not."""
    assert _record("stability.anchor.svm_loo_distance").as_expected
    original = head_tuning_module.direction_error
    monkeypatch.setattr(head_tuning_module, "direction_error", lambda w, r: 2.0 * original(w, r))
    jax.clear_caches()
    for claim_id in ("stability.anchor.svm_loo_distance", "stability.anchor.gd_loo_distance"):
        record = _record(claim_id)
        assert record.verdict == "refuted" and not record.as_expected, claim_id
    monkeypatch.undo()
    jax.clear_caches()


@pytest.mark.parametrize("normalizer", ["full data 1/(n-1)", "S^i mean 1/(n-1)"])
def test_leave_one_out_normaliser_is_pinned_by_the_first_step(monkeypatch, normalizer):
    """Either weight vector's 1/n → 1/(n − 1) moves GD's first step off its closed form
    (gd_loo_distance, a triangle inequality, holds for any weights)."""
    claim_id = "stability.anchor.gd_first_step"
    assert _record(claim_id).as_expected
    if normalizer == "S^i mean 1/(n-1)":
        original = head_tuning_module.loo_weights
        monkeypatch.setattr(
            head_tuning_module,
            "loo_weights",
            lambda n, i, _normalizer="n", dtype=None: original(n, i, "n-1", dtype),
        )
    else:
        original_full = jnp.full

        def full(shape, value, dtype=None):
            n = shape[0] if isinstance(shape, tuple) else shape
            return original_full(shape, 1.0 / (n - 1) if value == 1.0 / n else value, dtype)

        monkeypatch.setattr(head_tuning_module.jnp, "full", full)
    jax.clear_caches()
    record = _record(claim_id)
    monkeypatch.undo()
    jax.clear_caches()
    assert record.verdict == "refuted" and not record.as_expected, normalizer


@pytest.mark.slow  # a patched solver: the SVM-in-GD program compiles afresh (≈ 60 s cold)
def test_paper_svm_with_the_bias_penalised_no_longer_refutes(monkeypatch):
    """If the 'paper SVM' were the augmented one (penalize_bias ignored), GD would be as close
    to it as to the augmented SVM: the refutation disappears (not as expected)."""
    original = runs_module.hard_margin_svm

    def ignore_option(x, y, **kw):
        kw.pop("penalize_bias", None)
        return original(x, y, **kw)

    monkeypatch.setattr(runs_module, "hard_margin_svm", ignore_option)
    record = _record("stability.soudry.paper_svm_direction")
    assert record.verdict == "holds" and not record.as_expected


@pytest.mark.parametrize("factor", [2.0, 0.1])
def test_cor3_1_factor_errors_in_both_directions(monkeypatch, factor):
    """The printed MHLoss factor √((2 + 8 ln(1/δ))/H): ×2 leaves only H = 100 violating; ×0.1 makes
    every (H, t) cell violate, which is not the declared counterexample (early cells hold)."""
    claim_id = "stability.cor3_1.mhloss_bound"
    assert _record(claim_id, CACHE).as_expected
    original = st.cor3_1_factor
    monkeypatch.setattr(st, "cor3_1_factor", lambda h, d: factor * original(h, d))
    record = _record(claim_id, CACHE)  # the same run; only the check's formula changed
    assert not record.as_expected, record.per_seed[0].counterexample_found


def test_anchor_closed_form_is_not_the_metric_of_its_own_output():
    """The anchor's closed form is data, not a call into the metric it checks."""
    closed = st.loo_anchor_closed_form()
    assert jnp.allclose(jnp.asarray(closed["distance"][:2]), jnp.asarray([0.4595058, 0.7653669]),
                        atol=1e-7)  # fmt: skip


def test_synthetic_figure_and_claims_read_the_same_panel_setting():
    """One simulation per figure and claim: the experiment builds the claims' setting."""
    from experiments.stability import synthetic_loo_stability as experiment
    from ntsim.claims.stability._synthetic_trends import PANEL

    for scale in ("quick", "full"):
        assert experiment.panel_setting(experiment.SCALES[scale]) == PANEL.setting(scale)


def test_fig6_figure_and_claim_read_the_same_simulation():
    """The n panel (Fig 6): the experiment calls the claim's simulate function with the claim's
    setting type; at quick scale the settings are equal (full: the figure goes to n = 5000)."""
    import inspect

    from experiments.stability import synthetic_loo_stability as experiment
    from ntsim.claims.stability._synthetic_trends import OVER_N

    assert OVER_N.fn is st.simulate_loo_over_n
    assert "simulate_loo_over_n" in inspect.getsource(experiment.run)
    for scale in ("quick", "full"):
        setting = experiment.over_n_setting(experiment.SCALES[scale])
        assert type(setting) is type(OVER_N.setting(scale))
    assert experiment.over_n_setting(experiment.SCALES["quick"]) == OVER_N.setting("quick")


def test_a_doubled_step_size_breaks_the_descent_twin(monkeypatch):
    """η = 1/β_F is the printed-side quantity of the step-size claims; doubling it puts
    η·β_F = 1.9 at 3.8. The runs then leave the steps the claim names (its premise, with
    β_F measured on each dataset), so the descent claim decides nothing: inconclusive, where
    it held (the loss also rises there, so without the premise it would be refuted)."""
    original = head_tuning_module.head_tuning_step_size
    monkeypatch.setattr(head_tuning_module, "head_tuning_step_size",
                        lambda x: 2.0 * original(x))  # fmt: skip
    record = _record("stability.lr.descent_below_two_over_beta")
    assert record.verdict == "inconclusive" and not record.as_expected
    (seed,) = record.per_seed
    assert "η·β_F as stated" in seed.result.notes


def test_a_halved_printed_thm2_2_bound_fails_on_the_generic_grid(monkeypatch):
    """Eq. (3) is checked where it provably holds; half of it does not."""
    from ntsim.theory.stability import _full_finetuning as full_finetuning_module

    original = full_finetuning_module.thm2_2_bound_printed
    monkeypatch.setattr(full_finetuning_module, "thm2_2_bound_printed",
                        lambda *a, **k: 0.5 * original(*a, **k))  # fmt: skip
    record = _record("stability.thm2_2.bound_printed_generic")
    assert record.verdict == "refuted" and not record.as_expected


@pytest.mark.parametrize(
    "plant",
    [
        pytest.param(lambda original, a: 0.5 * original(*a), id="half"),
        pytest.param(lambda original, a: 2.0 * original(*a), id="double"),
        # the q^{1/4} numerator dropped: √(2L)R/β / (n(1 − q^{1/4}))
        pytest.param(lambda original, a: original(*a) / (1 - a[1] / a[2]) ** 0.25,
                     id="dropped_q_root"),
    ],
)  # fmt: skip
def test_printed_thm2_2_bound_is_pinned_two_sided_by_the_radius_counterexample(monkeypatch, plant):
    """The small-R refutation of eq. (3) declares the worst relative violation in closed form
    ([14.7, 18.3] at μ/β = 0.9, R = 1e-3): a wrong factor on eq. (3) in either direction, or a
    dropped q^{1/4}, leaves the claim refuted but moves its violation out of that band."""
    from ntsim.theory.stability import _full_finetuning as full_finetuning_module

    claim_id = "stability.thm2_2.bound_printed_radius"
    assert _record(claim_id).as_expected
    original = full_finetuning_module.thm2_2_bound_printed
    monkeypatch.setattr(full_finetuning_module, "thm2_2_bound_printed",
                        lambda *a: plant(original, a))  # fmt: skip
    jax.clear_caches()
    record = _record(claim_id)
    assert not record.as_expected, record.per_seed[0].counterexample_found
    monkeypatch.undo()
    jax.clear_caches()


def test_unnormalised_loo_metric_makes_the_spread_grow(monkeypatch):
    """The spread claim reads ‖Δ̂_T‖ = ‖w/‖w‖ − w'/‖w'‖‖. Dropping the normalisation (a plain
    ‖w − w'‖, whose scale grows with η) makes the spread ratio ≈ 1.4: the derived reading
    then 'holds' and the claim is no longer as expected."""
    claim_id = "stability.lr.variability_grows_above_two_over_beta"
    monkeypatch.setattr(head_tuning_module, "direction_error",
                        lambda w, r: jnp.linalg.norm(w - r, axis=-1))  # fmt: skip
    jax.clear_caches()
    record = _record(claim_id)
    assert record.verdict == "holds" and not record.as_expected
    monkeypatch.undo()
    jax.clear_caches()


@pytest.mark.slow  # ≥ 20 s on 2 cores: make test-full (the kill matrix covers CI)
def test_margin_measured_as_its_reciprocal_flips_the_fig7_trends(monkeypatch):
    """γ_S = 1/‖ŵ‖ of the bias-free SVM; read as ‖ŵ‖ (reciprocal), the GD trend in γ changes
    sign (fig7.margin_gd 'holds') and the SVM limit's twin is refuted."""
    from ntsim.theory.stability import _synthetic as synthetic_module

    original = synthetic_module.hard_margin_svm

    def reciprocal_margin(*a, **k):
        solution = original(*a, **k)
        return solution._replace(margin=1.0 / solution.margin)

    monkeypatch.setattr(synthetic_module, "hard_margin_svm", reciprocal_margin)
    jax.clear_caches()
    cache = RunCache()
    gd = _record("stability.fig7.margin_gd", cache)
    svm = _record("stability.fig7.margin_svm_limit", cache)
    assert gd.verdict == "holds" and not gd.as_expected
    assert svm.verdict == "refuted" and not svm.as_expected
    monkeypatch.undo()
    jax.clear_caches()


def test_shared_settings_figures_read_the_claims_settings():
    """One simulation per figure and claim: Thm 2.2, the Table 2 figure and the step-size and
    anchor panels draw the claims' simulate_* with the claims' settings at each scale."""
    import inspect

    from experiments.stability import synthetic_loo_stability as synthetic
    from experiments.stability import table2_methods_small_scale as table2
    from experiments.stability import thm2_2_bound_variants as thm2_2
    from ntsim.claims.stability import _full_finetuning as ff_claims
    from ntsim.claims.stability import _head_tuning, _learning_rate, _methods

    pairs = (
        (thm2_2, "settings", ff_claims.OVER_N, st.THM2_2_SETTINGS["over_n"]),
        (thm2_2, "settings", ff_claims.GENERIC, st.THM2_2_SETTINGS["generic"]),
        (thm2_2, "settings", ff_claims.NEAR_ONE, st.THM2_2_SETTINGS["near_one"]),
        (thm2_2, "settings", ff_claims.CERT, st.THM2_2_SETTINGS["certificate"]),
        (synthetic, "shared_settings", _learning_rate.STEP_SIZES, st.STEP_SIZE_SETTINGS),
        (synthetic, "shared_settings", _head_tuning.ANCHOR, st.LOO_ANCHOR_SETTINGS),
        (table2, "shared_settings", _learning_rate.MMR, st.MMR_MARGIN_SETTINGS),
        (table2, "shared_settings", _methods.MMR_DRAWS, st.MMR_IDENTITY_SETTINGS),
        (table2, "shared_settings", _methods.MH_DRAWS, st.MHLOSS_IDENTITY_SETTINGS),
        (table2, "shared_settings", _methods.TABLES, st.TABLES_SETTINGS),
    )
    for experiment, field, simulation, shared in pairs:
        assert simulation.fn.__name__ in inspect.getsource(experiment)
        for scale in ("quick", "full"):
            assert getattr(experiment.SCALES[scale], field) == scale
            assert shared[scale] == simulation.setting(scale)


@pytest.mark.parametrize(
    ("plant", "refuted"),
    [
        # ‖v̂‖B halved: |b̂| = ‖v̂‖B − 1 exceeds it once ‖v̂‖B > 4 (the random datasets of the
        # lemma's own claim never get there); both two-point claims go red
        (lambda w, r: 1.0 + 0.5 * w * r, {"bias_bound_two_points", "two_point_slack"}),
        # a looser bound still holds: only the slack identity notices
        (lambda w, r: 1.0 + 2.0 * w * r, {"two_point_slack"}),
        (lambda w, r: w * r, {"two_point_slack"}),
    ],
    ids=["half", "double", "dropped_one"],
)
def test_lemma_a2_3_bound_plants_on_the_two_point_sets(monkeypatch, plant, refuted):
    """Lemma A.2.3's bound evaluated where it is tight to an additive 2."""
    from ntsim.theory.stability import two_point_svm as two_point_module

    monkeypatch.setattr(two_point_module, "lemma_a2_3_bound", plant)
    jax.clear_caches()
    for name in ("bias_bound_two_points", "two_point_slack"):
        record = _record(f"stability.lemma_a2_3.{name}")
        assert (record.verdict == "refuted") == (name in refuted), name
    monkeypatch.undo()
    jax.clear_caches()


def test_two_point_closed_form_is_the_solver_s_svm():
    """The closed form against the interior-point solver on three hand-picked sets, and the
    genuine bound's slack (2) on them."""
    with jax.enable_x64(True):
        from ntsim.core import hard_margin_svm
        from ntsim.theory.stability import two_point_svm as two_point_module

        for radius, other, sign in ((1.0, -0.5, 1.0), (3.0, 2.5, -1.0), (0.2, 0.0, 1.0)):
            x = jnp.asarray([[sign * radius], [sign * other]])
            solution = hard_margin_svm(x, jnp.asarray([1.0, -1.0]), penalize_bias=False)
            weight, bias = two_point_module.two_point_svm_closed_form(radius, other, sign)
            assert jnp.allclose(solution.weights[0], weight, rtol=1e-6)
            assert jnp.allclose(solution.bias, bias, rtol=1e-6, atol=1e-9)
            bound = st.lemma_a2_3_bound(abs(weight), radius)
            assert jnp.allclose(bound - abs(bias), 2.0, atol=1e-12)


@pytest.mark.parametrize(
    "plant",
    [
        ("printed_bound_safe_ratio", lambda original: lambda r: 2.0 * original(r)),
        ("printed_bound_safe_ratio", lambda original: lambda r: original(r) + 0.01),
        ("thm2_2_bound_printed", lambda original: lambda n, *rest: original(n - 1, *rest)),
        (None, None),
    ],
    ids=["guard_doubled", "guard_shifted", "eq3_n_minus_one", "genuine"],
)
def test_printed_bound_region_ties_the_guard_to_eq3(monkeypatch, plant):
    """The guard of the printed-bound grid against eq. (3) and the certificate."""
    from ntsim.theory.stability import printed_bound_region as region_module

    name, change = plant
    if name is not None:
        monkeypatch.setattr(region_module, name, change(getattr(region_module, name)))
    record = _record("stability.thm2_2.printed_bound_region")
    assert record.verdict == ("holds" if name is None else "refuted")
    # the guard's root by bisection on eq. (3) itself, against the safe end the
    # printed-bound grid quotes (0.968 to 3 decimals)
    if name is None:
        assert abs(region_module.safe_region_end() - 0.968) < 5e-4


def test_lipschitz_scaling_run_with_its_constants_swapped_breaks_the_ceiling(monkeypatch):
    """μ/β and R exchanged in the run (1 and 0.5 for 0.5 and 1): the first-step floor reads
    only their product, the certificate's ceiling R/(n·μ/β) drops from 0.2 to 0.05."""
    from ntsim.claims.stability import _full_finetuning as claims_ff

    original = claims_ff.LIPSCHITZ.fn

    def planted(key, setting):
        run = original(key, setting)
        return run._replace(mu_over_beta=run.radius, radius=run.mu_over_beta)

    claim_id = "stability.thm2_2.scaling_lipschitz"
    assert _record(claim_id).as_expected
    uses = dataclasses.replace(claims_ff.LIPSCHITZ, fn=planted)
    claim = dataclasses.replace(get_claim(claim_id), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_proof_version_of_thm2_2_is_pinned_two_sided(monkeypatch, factor):
    """The last display of App. A.1 ×½ is violated; ×2 holds but leaves sup/bound below the
    closed-form range [0.495, 0.612] (at [0.25, 0.31])."""
    from ntsim.theory.stability import _full_finetuning as full_finetuning_module

    claim_id = "stability.thm2_2.bound_proof_small_radius"
    assert _record(claim_id).as_expected
    original = full_finetuning_module.thm2_2_bound_proof
    monkeypatch.setattr(full_finetuning_module, "thm2_2_bound_proof",
                        lambda *a: factor * original(*a))  # fmt: skip
    jax.clear_caches()
    record = _record(claim_id)
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics
    monkeypatch.undo()
    jax.clear_caches()


def test_a_copy_suspect_search_that_pairs_a_method_with_itself_is_caught(monkeypatch):
    """duplicate_cells with the inner loop from 1 instead of a + 1: every method matches
    itself, so the repeats found are not the three read off the printed tables."""
    from ntsim.theory.stability import _tables

    def planted(table):
        return [(task, table.methods[a], table.methods[b])
                for t, task in enumerate(table.tasks)
                for a in range(len(table.methods)) for b in range(1, len(table.methods))
                if table.means[a, t] == table.means[b, t]
                and table.stds[a, t] == table.stds[b, t]]  # fmt: skip

    assert _record("stability.tables.repeated_cells").as_expected
    monkeypatch.setattr(_tables, "duplicate_cells", planted)
    record = _record("stability.tables.repeated_cells")
    assert not record.as_expected


def test_margin_monotone_with_one_support_vector_removed_decides_nothing(monkeypatch):
    """Only the largest dual removed per dataset (d + 1 → 1), as the mutant of the run does:
    the lemma still holds on what is removed, but no longer on every support vector of S
    (there are always ≥ 2, one per class), so the design checks leave it undecided."""
    from ntsim.claims.stability import _head_tuning_svm as claims_svm

    original = claims_svm.MONO.fn

    def planted(key, setting):
        run = original(key, setting)
        keep = [0, *range(setting.dim + 1, run.support.shape[1])]  # the top dual and extras
        return run._replace(
            gamma_loo=run.gamma_loo[:, keep], support=run.support[:, keep],
            bias=run.bias[:, [0, *(k + 1 for k in keep)]],
            bias_bound=run.bias_bound[:, [0, *(k + 1 for k in keep)]],
            two_classes=run.two_classes[:, [0, *(k + 1 for k in keep)]],
            covered=jnp.zeros_like(run.covered),
        )  # fmt: skip

    claim_id = "stability.lemma_a2_4.margin_monotone"
    uses = dataclasses.replace(claims_svm.MONO, fn=planted)
    claim = dataclasses.replace(get_claim(claim_id), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics


def test_margin_monotone_with_no_point_removed_decides_nothing():
    """A solver that ignores the sample mask (every S^i is S): γ_{S^i} = γ_S satisfies "≥",
    so only the design check that support-vector removals move the margin notices."""
    from ntsim.claims.stability import _head_tuning_svm as claims_svm

    original = claims_svm.MONO.fn

    def planted(key, setting):
        run = original(key, setting)
        gamma = jnp.asarray(run.gamma)[:, None]
        return run._replace(gamma_loo=jnp.broadcast_to(gamma, run.gamma_loo.shape))

    claim_id = "stability.lemma_a2_4.margin_monotone"
    uses = dataclasses.replace(claims_svm.MONO, fn=planted)
    claim = dataclasses.replace(get_claim(claim_id), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics


def test_lemma_a2_4_printed_norm_without_the_bias_no_longer_refutes():
    """The printed ‖[v̂; b̂]‖ read as ‖v̂‖ (the bias dropped from the run): the proof's form,
    which holds, so the declared counterexample is no longer found."""
    from ntsim.claims.stability import _head_tuning_svm as claims_svm

    original = claims_svm.MONO_SMALL.fn

    def planted(key, setting):
        run = original(key, setting)
        return run._replace(bias=jnp.zeros_like(run.bias))

    claim_id = "stability.lemma_a2_4.printed_norm"
    assert _record(claim_id).as_expected
    uses = dataclasses.replace(claims_svm.MONO_SMALL, fn=planted)
    claim = dataclasses.replace(get_claim(claim_id), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    assert record.verdict == "holds" and not record.as_expected


@pytest.mark.parametrize("claim_id", ["stability.lemma_a2_4.margin_monotone_small",
                                      "stability.lemma_a2_4.printed_norm"])  # fmt: skip
def test_one_label_flags_are_checked_against_the_solutions(monkeypatch, claim_id):
    """S^i's label flags computed as if no point left (the removed point's label still
    counted): sets left with one label stay in, where the SVM's v̂ = 0 and γ = 1/‖v̂‖ is
    astronomically large; "γ_{S^i} ≥ γ_S" would hold on them, the flags' second route does not."""
    from ntsim.theory.stability import _svm_runs

    def planted(y, idx):
        both = (jnp.sum(y > 0) > 0) & (jnp.sum(y < 0) > 0)
        return jnp.broadcast_to(both, (idx.shape[0] + 1,))

    monkeypatch.setattr(_svm_runs, "_both_labels", planted)
    jax.clear_caches()
    record = _record(claim_id)
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics
    assert "one-label flags" in record.per_seed[0].result.notes
    monkeypatch.undo()
    jax.clear_caches()


def test_the_sign_inside_the_logistic_derivative_is_pinned_by_the_second_step(monkeypatch):
    """σ(u) for σ(−u) in GD's step: the first step is unchanged (every margin is 0 at w_0 = 0,
    σ(0) = ½), the second is not."""
    claim_id = "stability.anchor.gd_first_step"
    assert _record(claim_id).as_expected
    sigmoid = jax.nn.sigmoid
    monkeypatch.setattr(head_tuning_module.jax.nn, "sigmoid", lambda u: sigmoid(-u))
    jax.clear_caches()
    record = _record(claim_id)
    monkeypatch.undo()
    jax.clear_caches()
    assert record.verdict == "refuted" and not record.as_expected
    (seed,) = record.per_seed
    assert seed.result.diagnostics["w_1(S) (rows i)"][0] == pytest.approx([8 / 7, -2 / 7])


def test_a_wrong_leave_one_out_normaliser_leaves_lemma_a2_5_undecided():
    """S^i solved with the mean over n points (the rigorous convention) where the claim reads
    the paper's mean over n − 1: the bound still holds with room, so only the box caps of
    the duals (1/(2λ(n − 1)) against the solver's 1/(2λn), 1.7% apart at n = 60) notice."""
    from ntsim.claims.stability import _head_tuning_svm as claims_svm

    original = claims_svm.GAP_PAPER.fn

    def planted(key, setting):
        return original(key, dataclasses.replace(setting, loo_normalizer="n"))

    claim_id = "stability.lemma_a2_5.paper_setting"
    uses = dataclasses.replace(claims_svm.GAP_PAPER, fn=planted)
    claim = dataclasses.replace(get_claim(claim_id), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    result = record.per_seed[0].result
    assert record.verdict == "inconclusive", result.diagnostics
    assert "duals of points strictly inside the margin" in result.notes


def test_an_on_margin_test_that_finds_nothing_leaves_lemma_a2_4_undecided(monkeypatch):
    """No point counted on the margin makes "every point on the margin removed" vacuous;
    the count of margin points (2 to d + 1, both labels) notices."""
    from ntsim.theory.stability import _svm_runs

    monkeypatch.setattr(_svm_runs, "on_margin", lambda x, y, solution: jnp.zeros_like(y, bool))
    jax.clear_caches()
    record = _record("stability.lemma_a2_4.margin_monotone")
    result = record.per_seed[0].result
    assert record.verdict == "inconclusive", result.diagnostics
    assert "2 to d + 1 distinct points" in result.notes
    monkeypatch.undo()
    jax.clear_caches()


def test_a_stretched_right_side_of_jensen_is_caught_at_one_head(monkeypatch):
    """mean_h ‖2·w_h/‖w_h‖ − ŵ/‖ŵ‖‖ on the right: "≤" still holds (it only grows), the
    equality case H = 1 does not."""
    claim_id = "stability.a4_1.convexity"
    assert _record(claim_id).verdict == "holds"

    def planted(heads, reference):
        dirs = head_tuning_module.normalize(heads)
        target = head_tuning_module.normalize(reference)
        lhs = jnp.linalg.norm(jnp.mean(dirs, axis=-2) - target, axis=-1)
        rhs = jnp.mean(jnp.linalg.norm(2.0 * dirs - target[..., None, :], axis=-1), axis=-1)
        return head_tuning_module.LemmaSides(lhs, rhs)

    monkeypatch.setattr(head_tuning_module, "a4_1_convexity_sides", planted)
    jax.clear_caches()
    assert _record(claim_id).verdict == "refuted"
    monkeypatch.undo()
    jax.clear_caches()


@pytest.mark.parametrize("average", [jnp.sum, jnp.max])
def test_a_right_side_of_jensen_that_does_not_average_is_caught_by_the_hand_instance(
    monkeypatch, average
):
    """The right side summed (or maximised) over heads instead of averaged: "≤" only gains
    room, and one head is still its own sum and maximum, so neither the bound nor the H = 1
    equality notices; the closed-form instance (heads 2e₁, 3e₂ against 5e₁: both sides
    1/√2) does."""
    claim_id = "stability.a4_1.convexity"

    def planted(heads, reference):
        dirs = head_tuning_module.normalize(heads)
        target = head_tuning_module.normalize(reference)
        lhs = jnp.linalg.norm(jnp.mean(dirs, axis=-2) - target, axis=-1)
        rhs = average(jnp.linalg.norm(dirs - target[..., None, :], axis=-1), axis=-1)
        return head_tuning_module.LemmaSides(lhs, rhs)

    for module in (head_tuning_module, st):
        monkeypatch.setattr(module, "a4_1_convexity_sides", planted)
    jax.clear_caches()
    record = _record(claim_id)
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics
    monkeypatch.undo()
    jax.clear_caches()
