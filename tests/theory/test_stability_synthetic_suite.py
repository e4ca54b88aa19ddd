"""The synthetic suite of Fu et al. 2023, Sec 4.3 (``ntsim.theory.stability._synthetic``).

Oracles: the bias-penalised hard-margin SVM (the GD direction limit, Soudry et al. 2018),
Lemma A.2.4 (removing a non-support point leaves the SVM unchanged), a brute-force loop of
leave-one-out SVM solves over every ``i``, and numpy/scipy for the summary statistics.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from experiments.stability import synthetic_loo_stability as exp
from ntsim.core import hard_margin_svm, loglog_slope, mean_se, separable_dataset, spearman
from ntsim.theory import stability as st
from ntsim.theory.stability._synthetic import (
    distinct_count,
    largest_distinct,
    on_margin,
    removed_or_copy,
)

_reference = jax.jit(st.svm_reference)  # one compile per shape, shared by the tests


def _x64(data):
    return jnp.asarray(np.asarray(data.x), jnp.float64), jnp.asarray(
        np.asarray(data.y), jnp.float64
    )


def test_gd_direction_tends_to_bias_penalised_svm():
    """Head 0 of ``loo_cell`` (GD on S from w_0 = 0) approaches ŵ_S, the augmented SVM."""
    params = jnp.array([0.3, 1.0, 0.3, 0.0])  # margin, radius, offset, init norm
    out = st.loo_cell(jax.random.key(1), params, num_points=12, dim=2, steps=(10, 100_000))
    heads = np.asarray(out["final"], np.float64)
    with jax.enable_x64(True):
        x = jnp.asarray(np.asarray(out["x"]), jnp.float64)
        y = jnp.asarray(np.asarray(out["y"]), jnp.float64)
        pen = hard_margin_svm(x, y)
        err = float(st.direction_error(heads[0], st.svm_head(pen.weights, pen.bias)))
    assert err < 0.05  # Soudry's rate is 1/log t: measured 0.017 at t = 10⁵
    # ‖Δ̂_t‖ recorded at both steps is a distance between unit vectors
    assert np.all((np.asarray(out["delta"]) >= 0) & (np.asarray(out["delta"]) <= 2))


def test_svm_reference_matches_brute_force_and_lemma_a2_4():
    """``svm_avg`` = (1/n)Σ_i over all i of the LOO SVM distance; non-support i gives 0."""
    data = separable_dataset(jax.random.key(3), 15, 3, margin=0.2, radius=1.0, offset=0.3)
    with jax.enable_x64(True):
        x, y = _x64(data)
        n = x.shape[0]
        full = hard_margin_svm(x, y)
        w_s = st.svm_head(full.weights, full.bias)
        masks = jnp.arange(n)[None, :] != jnp.arange(n)[:, None]
        loo = jax.jit(jax.vmap(lambda m: hard_margin_svm(x, y, sample_mask=m)))(masks)
        brute = np.asarray(st.direction_error(st.svm_head(loo.weights, loo.bias), w_s))
        support = np.asarray(full.support)
        non_support = int(np.flatnonzero(~support)[0])
        ref = _reference(x, y, non_support)
        ref_sv = _reference(x, y, int(np.flatnonzero(support)[0]))
        margin_points = on_margin(x, y, full)
    assert bool(ref["svm_avg_exact"])
    np.testing.assert_allclose(float(ref["svm_avg"]), brute.mean(), rtol=1e-6, atol=1e-9)
    assert np.all(brute[~support] < 1e-6)  # Lemma A.2.4: only support vectors move the SVM
    # the points on the margin are exactly those whose removal moves the SVM (general position)
    np.testing.assert_array_equal(np.asarray(margin_points), brute > 1e-6)
    assert float(ref["svm_delta"]) < 1e-6
    np.testing.assert_allclose(float(ref_sv["svm_delta"]), brute[support][0], rtol=1e-6)
    assert float(ref["gamma"]) >= 0.2 - 1e-9  # the generator's slab half-width bounds γ_S
    np.testing.assert_allclose(np.asarray(ref["w_svm"]), np.asarray(w_s), atol=1e-9)


def test_gd_loo_distance_of_a_non_support_point_tends_to_zero():
    """For i outside the support the GD distance ‖Δ̂_t‖ decreases towards the SVM value 0."""
    data = separable_dataset(jax.random.key(5), 12, 2, margin=0.3, radius=1.0, offset=0.3)
    with jax.enable_x64(True):
        x, y = _x64(data)
        i = int(np.flatnonzero(~np.asarray(hard_margin_svm(x, y).support))[0])
    run = st.loo_head_tuning(data.x, data.y, i, record_steps=(100, 10_000, 100_000))
    delta = np.asarray(st.direction_error(run.weights[:, 1], run.weights[:, 0]))
    assert np.all(np.diff(delta) < 0), delta
    assert delta[-1] < 0.1 * delta[0]  # measured 0.0204 → 0.0014 (≈ 1/log t)


def test_svm_average_loo_distance_decreases_with_n():
    """Mean over datasets of the exact over-i SVM LOO distance falls with n (≈ 1/n)."""
    means = []
    for n in (15, 120):  # n = 15, d = 3 reuses the compiled solve of the brute-force test
        values = []
        for seed in range(12):
            data = separable_dataset(jax.random.key(100 * n + seed), n, 3, margin=0.2,
                                     radius=1.0, offset=0.3)  # fmt: skip
            with jax.enable_x64(True):
                ref = _reference(*_x64(data), 0)
                assert bool(ref["svm_avg_exact"])
                values.append(float(ref["svm_avg"]))
        means.append(float(np.mean(values)))
    assert means[1] < 0.5 * means[0], means


def test_summary_statistics():
    mean, se = mean_se(np.array([[1.0, 2.0], [3.0, 6.0]]))
    assert mean == [2.0, 4.0]
    np.testing.assert_allclose(se, [1.0, 2.0])
    x = np.array([10.0, 100.0, 1000.0])
    assert loglog_slope(x, 3.0 / x) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4], [10, 9, 2, 1]) == pytest.approx(-1.0)
    assert (
        st.chunk_divisor(25, 40) == 20
        and st.chunk_divisor(25, 500) == 25
        and st.chunk_divisor(5, 7) == 1
    )


def test_config_validation():
    with pytest.raises(ValueError, match="offset \\+ margin < radius"):
        exp.Config(radii=(0.25,))
    with pytest.raises(ValueError, match="Config.num_steps must be ≥ 1, got 0"):
        exp.Config(num_steps=0)
    with pytest.raises(ValueError, match="implementation must be one of"):
        exp.Config(implementation="gpu")
    assert exp.SCALES["full"].num_datasets == 500 and exp.SCALES["full"].num_points == 2000
    # Issue 4: steps on a log grid to 10^4, and 10^5 at full scale where direction
    # convergence needs it (it does: ~1/log t); the grid must still record t = 10^4.
    full = exp.SCALES["full"]
    assert full.num_steps == 100_000 and full.d == 10
    assert 10_000 in st.log_spaced_steps(full.num_steps, full.num_records)


def test_on_margin_reads_the_slack_against_the_dual():
    """The two cases a fixed slack cut gets wrong, as the interior-point solver leaves them: a
    true support vector with a small dual (α = 1e-4·max α) 6.8e-7 above the margin is on it;
    an inactive point 4.6e-6 above it, with α = 2.4e-6·max α ~ μ/slack, is not."""
    from ntsim.core import SVMSolution

    with jax.enable_x64(True):
        x = jnp.array([[1.0], [-1.0], [1.0 + 6.8e-7], [1.0 + 4.6e-6], [3.0]], jnp.float64)
        y = jnp.array([1.0, -1.0, 1.0, 1.0, 1.0], jnp.float64)
        dual = jnp.array([1.0, 0.5, 1e-4, 2.4e-6, 1e-9], jnp.float64)
        solution = SVMSolution(jnp.array([1.0]), jnp.array(0.0), dual, dual > 1e-6,
                               jnp.array(1.0), jnp.array(0.0), jnp.array(0))  # fmt: skip
        got = np.asarray(on_margin(x, y, solution))
    np.testing.assert_array_equal(got, [True, True, True, False, False])  # x₄ has slack 2


def test_on_margin_points_are_those_whose_removal_moves_the_svm():
    """Over 40 planar datasets (the paper's SVM, b free): the points on the margin are exactly
    those whose removal changes γ (brute force over every i), in general position."""
    keys = jax.random.split(jax.random.key(7), 40)
    with jax.enable_x64(True):
        data = jax.vmap(lambda k: separable_dataset(k, 10, 2, margin=0.1, radius=1.0,
                                                    offset=0.5))(keys)  # fmt: skip
        x, y = data.x.astype(jnp.float64), data.y.astype(jnp.float64)
        masks = jnp.arange(10)[None, :] != jnp.arange(10)[:, None]

        def one(xi, yi):
            full = hard_margin_svm(xi, yi, penalize_bias=False)
            loo = jax.vmap(lambda m: hard_margin_svm(xi, yi, penalize_bias=False,
                                                     sample_mask=m))(masks)  # fmt: skip
            return on_margin(xi, yi, full), loo.margin - full.margin, jnp.all(yi[None] * masks)

        flags, rise, _ = jax.jit(jax.vmap(one))(x, y)
    one_label = np.asarray([len(set(np.asarray(row).tolist())) < 2 for row in y])
    keep = ~one_label
    moved = np.asarray(rise)[keep] > 1e-6
    np.testing.assert_array_equal(np.asarray(flags)[keep], moved)
    assert moved.sum() >= 2 * keep.sum()  # at least one point per class on every margin


def test_copies_count_once():
    """Exact copies and copies one ulp apart (what the generator's clipped points give under
    different XLA optimisation levels) count once; points 1e-9 apart are distinct."""
    x = jnp.array([[0.0, 1.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(removed_or_copy(x, jnp.array([0]))),
                                  [True, False, True, False])  # fmt: skip
    assert int(distinct_count(x, jnp.array([True, False, True, True]))) == 2
    assert int(distinct_count(x, jnp.array([False, True, True, False]))) == 2
    with jax.enable_x64(True):
        ulp = jnp.array([[-0.56211267, 0.82706067], [-0.56211267 - 1.1e-16, 0.82706067],
                         [-0.56211267 + 1e-9, 0.82706067]], jnp.float64)  # fmt: skip
        assert float(ulp[0, 0]) != float(ulp[1, 0])  # one ulp apart, not equal
        assert int(distinct_count(ulp, jnp.array([True, True, False]))) == 1
        assert int(distinct_count(ulp, jnp.array([True, True, True]))) == 2
        np.testing.assert_array_equal(np.asarray(removed_or_copy(ulp, jnp.array([1]))),
                                      [True, True, False])  # fmt: skip


def test_largest_duals_skip_copies():
    """Two copies share one dual: the top two over distinct points are the copy seen first
    and the next distinct point, never both copies (found at full scale, seed 11)."""
    x = jnp.array([[0.0, 1.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    dual = jnp.array([0.5, 0.1, 0.5, 0.3])
    assert np.asarray(largest_distinct(x, dual, 2)).tolist() == [0, 3]
    assert np.asarray(largest_distinct(x, dual, 3)).tolist() == [0, 3, 1]
    distinct = x.at[2].set(jnp.array([0.0, 2.0]))  # no copies: the plain top duals
    assert sorted(np.asarray(largest_distinct(distinct, dual, 2)).tolist()) == [0, 2]
