"""The head-tuning simulations claims and figures read (Fu et al. 2023), against closed forms
and independent numpy oracles."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

from ntsim.core import hard_margin_svm, separable_dataset
from ntsim.theory import stability as st


def _numpy_direction(w):
    return w / np.linalg.norm(w, axis=-1, keepdims=True)


def _numpy_gd(x, y, eta, steps, weights):
    """Oracle: numpy GD from 0 on Σ_i c_i log(1 + exp(−y_i wᵀx̃_i)), recorded at ``steps``."""
    z = y[:, None] * np.hstack([x, -np.ones((len(y), 1))])
    w = np.zeros(z.shape[1])
    out = []
    for t in range(max(steps) + 1):
        if t in steps:
            out.append(w.copy())
        w = w + eta * (weights * scipy.special.expit(-(z @ w))) @ z
    return np.asarray(out)


def test_anchor_closed_form_is_the_svm_by_kkt():
    """The closed-form SVMs satisfy the KKT conditions of min ‖w‖² s.t. wᵀz_i ≥ 1."""
    x = np.asarray(st.LOO_ANCHOR_POINTS)[:, 0]
    y = np.asarray(st.LOO_ANCHOR_LABELS)
    z = y[:, None] * np.stack([x, -np.ones(3)], axis=1)
    closed = st.loo_anchor_closed_form()
    sets = [(np.arange(3), closed["heads_s"])] + [
        (np.delete(np.arange(3), i), closed["heads_loo"][i]) for i in range(3)
    ]
    for keep, w in sets:
        w = np.asarray(w)
        margins = z[keep] @ w
        assert np.all(margins >= 1 - 1e-12)
        active = keep[np.isclose(margins, 1.0)]
        alpha, *_ = np.linalg.lstsq(z[active].T, w, rcond=None)  # w = Σ_active α_i z_i
        np.testing.assert_allclose(z[active].T @ alpha, w, atol=1e-12)
        assert np.all(alpha >= -1e-12)
    heads = [np.asarray(h) for h in closed["heads_loo"]]
    u = _numpy_direction(np.asarray(closed["heads_s"]))
    expected = [np.linalg.norm(_numpy_direction(h) - u) for h in heads]
    np.testing.assert_allclose(closed["distance"], expected, atol=1e-15)
    assert math.isclose(closed["mean_distance"], sum(expected) / 3)


def test_simulate_loo_anchor_matches_closed_form(x64):
    run = st.simulate_loo_anchor(None, st.LooAnchorSetting(num_steps=100, num_records=3))
    closed = st.loo_anchor_closed_form()
    np.testing.assert_allclose(run.svm_distance, closed["distance"], atol=1e-7)
    np.testing.assert_allclose(run.svm_mean, closed["mean_distance"], atol=1e-7)
    assert float(run.kkt) < 1e-8
    # GD against a numpy oracle on S and S^i (1/n weights)
    x = np.asarray(st.LOO_ANCHOR_POINTS)
    y = np.asarray(st.LOO_ANCHOR_LABELS)
    eta = float(st.head_tuning_step_size(x))
    steps = tuple(int(t) for t in run.steps)
    for i in range(3):
        full = _numpy_gd(x, y, eta, steps, np.full(3, 1 / 3))
        loo = _numpy_gd(x, y, eta, steps, np.where(np.arange(3) == i, 0.0, 1 / 3))
        dist = np.linalg.norm(_numpy_direction(loo) - _numpy_direction(full), axis=-1)
        np.testing.assert_allclose(run.gd_distance[i], dist, rtol=1e-10)
        err = np.linalg.norm(
            _numpy_direction(full) - _numpy_direction(np.array(closed["heads_s"])), axis=-1
        ) + np.linalg.norm(
            _numpy_direction(loo) - _numpy_direction(np.array(closed["heads_loo"][i])), axis=-1
        )
        np.testing.assert_allclose(run.gd_error[i], err, rtol=1e-10)


def test_simulate_soudry_directions_against_numpy_gd(x64, key):
    setting = st.SoudrySetting(datasets=2, num_steps=200, num_records=3)
    run = st.simulate_soudry_directions(key, setting)
    k0 = jax.random.split(key, 2)[0]
    data = separable_dataset(k0, setting.points, setting.dim, margin=setting.margin,
                             radius=setting.radius, offset=setting.offset)  # fmt: skip
    x, y = np.asarray(data.x), np.asarray(data.y)
    w = _numpy_gd(x, y, float(st.head_tuning_step_size(x)), tuple(int(t) for t in run.steps),
                  np.full(len(y), 1 / len(y)))  # fmt: skip
    aug = hard_margin_svm(data.x, data.y)
    head = np.append(np.asarray(aug.weights), float(aug.bias))
    expected = np.linalg.norm(_numpy_direction(w) - _numpy_direction(head), axis=-1)
    np.testing.assert_allclose(run.e_aug[0], expected, rtol=1e-8)
    assert run.e_aug.shape == run.e_paper.shape == (2, len(run.steps))
    assert np.all(np.asarray(run.svm_gap) >= 0) and float(run.kkt) < 1e-8


def test_simulate_loo_bound_against_numpy_gd(x64, key):
    setting = st.LooBoundSetting(datasets=2, points=20, dim=3, num_steps=50, num_records=3,
                                 chunk=2)  # fmt: skip
    run = st.simulate_loo_bound(key, setting)
    k_data, k_i = jax.random.split(jax.random.split(key, 2)[0])
    data = separable_dataset(k_data, 20, 3, margin=setting.margin, radius=setting.radius,
                             offset=setting.offset)  # fmt: skip
    i = int(jax.random.randint(k_i, (), 0, 20))
    x, y = np.asarray(data.x), np.asarray(data.y)
    eta, steps = float(st.head_tuning_step_size(x)), tuple(int(t) for t in run.steps)
    full = _numpy_gd(x, y, eta, steps, np.full(20, 1 / 20))
    loo = _numpy_gd(x, y, eta, steps, np.where(np.arange(20) == i, 0.0, 1 / 20))
    dist = np.linalg.norm(_numpy_direction(loo) - _numpy_direction(full), axis=-1)
    np.testing.assert_allclose(run.lhs[0], dist, rtol=1e-8)
    assert np.all(run.lhs <= run.rhs + 1e-12) and run.points == 20
    np.testing.assert_allclose(
        run.gamma[0], 1 / np.linalg.norm(hard_margin_svm(data.x, data.y).weights), rtol=1e-10
    )


def test_simulate_multi_head_one_head_and_jensen(x64, key):
    setting = st.MultiHeadSetting(datasets=2, points=20, dim=3, num_steps=30, num_records=3,
                                  heads=(1, 4), chunk=2)  # fmt: skip
    run = st.simulate_multi_head(key, setting)
    assert run.e_bar.shape == (2, len(run.steps), 2) and run.heads == (1, 4)
    # one head: the average is the head, ξ = 1, and Jensen's two sides coincide
    np.testing.assert_allclose(run.e_bar[..., 0], run.e_max[..., 0], rtol=1e-12)
    np.testing.assert_allclose(run.xi[..., 0], 1.0, rtol=1e-12)
    np.testing.assert_allclose(run.conv_lhs[..., 0], run.conv_rhs[..., 0], rtol=1e-12)
    assert np.all(run.conv_lhs <= run.conv_rhs + 1e-12) and np.all(run.xi >= 1 - 1e-12)


def test_synthetic_panel_rows_and_svm_limit_against_brute_force(key):
    setting = st.SyntheticPanelSetting(points=12, datasets=2, num_steps=20, num_records=2,
                                       dim=2, margins=(0.1,), init_norms=(0.0, 3.0),
                                       radii=(1.0,), chunk=2)  # fmt: skip
    run = st.simulate_synthetic_panel(key, setting)
    assert run.params.shape == (8, 4) and run.delta.shape == (8, len(run.steps))
    assert [run.rows[p] for p in ("margin", "init", "radius")] == [
        slice(0, 2), slice(2, 6), slice(6, 8)]  # fmt: skip
    np.testing.assert_array_equal(run.params[2:6, 3], [0.0, 0.0, 3.0, 3.0])
    # the SVM limit: mean over i of the SVM leave-one-out distance, brute force over every i
    keys = jax.random.split(key, 8)
    params = jnp.asarray(run.params[0], jnp.float32)  # the sweep draws in float32
    data = separable_dataset(jax.random.split(keys[0], 3)[0], 12, 2, margin=params[0],
                             radius=params[1], offset=params[2])  # fmt: skip
    with jax.enable_x64(True):
        x, y = jnp.asarray(data.x, jnp.float64), jnp.asarray(data.y, jnp.float64)
        full = hard_margin_svm(x, y)
        u = _numpy_direction(np.append(np.asarray(full.weights), float(full.bias)))
        dists = []
        for i in range(12):
            s = hard_margin_svm(x, y, sample_mask=jnp.arange(12) != i)
            dists.append(
                np.linalg.norm(
                    _numpy_direction(np.append(np.asarray(s.weights), float(s.bias))) - u
                )
            )
    np.testing.assert_allclose(run.svm[0], np.mean(dists), atol=1e-6)


def test_over_n_shapes(key):
    run = st.simulate_loo_over_n(key, st.OverNSetting(ns=(8, 12), datasets=2, num_steps=10,
                                                      num_records=2, dim=2, chunk=2))  # fmt: skip
    assert run.delta.shape == run.svm.shape == (2, 2) and list(run.ns) == [8, 12]
    assert np.all(run.svm >= 0) and np.all(run.delta >= 0)


def test_step_sizes_start_at_log_two_and_match_numpy_gd(x64, key):
    setting = st.StepSizeSetting(datasets=2, points=15, dim=2, num_steps=20, factors=(1.0, 2.5))
    run = st.simulate_step_sizes(key, setting)
    np.testing.assert_allclose(run.loss[:, :, 0], np.log(2.0), rtol=1e-12)  # w_0 = 0
    k_data, k_i = jax.random.split(jax.random.split(key, 2)[0])
    data = separable_dataset(k_data, 15, 2, margin=0.1, radius=1.0, offset=0.2)
    i = int(jax.random.randint(k_i, (), 0, 15))
    x, y = np.asarray(data.x), np.asarray(data.y)
    eta = 2.5 * float(st.head_tuning_step_size(x))
    full = _numpy_gd(x, y, eta, (20,), np.full(15, 1 / 15))
    loo = _numpy_gd(x, y, eta, (20,), np.where(np.arange(15) == i, 0.0, 1 / 15))
    expected = np.linalg.norm(_numpy_direction(loo) - _numpy_direction(full), axis=-1)[0]
    np.testing.assert_allclose(run.loo_distance[0, 1], expected, rtol=1e-8)


def test_mmr_regulariser_before_training_is_eq8(x64, key):
    setting = st.MMRSetting(datasets=2, points=20, dim=3, num_steps=5)
    run = st.simulate_mmr_margin(key, setting)
    k_data, k_w = jax.random.split(jax.random.split(key, 2)[0])
    data = separable_dataset(k_data, 20, 3, margin=0.1, radius=1.0, offset=0.2)
    x, y = np.asarray(data.x), np.asarray(data.y)
    w0 = np.asarray(jax.random.normal(k_w, (3, 3), jnp.float64)) / np.sqrt(3)
    z = x @ w0.T
    gap = z[y > 0].mean(0) - z[y < 0].mean(0)
    np.testing.assert_allclose(run.r0[0], 1 / (1 + np.linalg.norm(gap)), rtol=1e-10)
    assert np.all(np.asarray(run.r1) <= np.asarray(run.r0)) and np.all(np.asarray(run.gamma0) > 0)


def test_margin_monotone_bias_bound_is_one_plus_radius_over_gamma(x64, key):
    run = st.simulate_margin_monotone(key, st.MarginMonotoneSetting(datasets=2, points=20,
                                                                    dim=2, extra=2))  # fmt: skip
    data = separable_dataset(jax.random.split(jax.random.split(key, 2)[0])[0], 20, 2,
                             margin=0.1, radius=1.0, offset=0.5)  # fmt: skip
    radius = np.max(np.linalg.norm(np.asarray(data.x), axis=1))
    np.testing.assert_allclose(run.bias_bound[0, 0], 1 + radius / run.gamma[0], rtol=1e-10)
    assert run.gamma_loo.shape == run.support.shape == (2, 5) and float(run.kkt) < 1e-8


def test_svm_gap_at_large_lambda_is_the_closed_form(x64, key):
    """At large λ every point is inside the margin (α_j = 1/(2λn)) and, with b penalised,
    removing x_i moves ŵ by exactly ‖x̃_i‖/(2λn)."""
    n, lam = 20, 10.0
    run = st.simulate_svm_gaps(key, st.SvmGapSetting(datasets=2, points=n, dim=2, lams=(lam,)))
    k_data, k_i = jax.random.split(jax.random.split(key, 2)[0])
    data = separable_dataset(k_data, n, 2, margin=0.1, radius=1.0, offset=0.5)
    i = int(jax.random.randint(k_i, (), 0, n))
    x_tilde = np.append(np.asarray(data.x)[i], -1.0)
    np.testing.assert_allclose(run.gap[0, 0], np.linalg.norm(x_tilde) / (2 * lam * n), rtol=1e-6)
    assert run.points == n and float(run.kkt) < 1e-8


def test_pointwise_lemma_draws(x64, key):
    setting = st.RandomPointsSetting(300)
    for run in (st.simulate_lemma_a2_1(key, setting), st.simulate_lemma_a2_2(key, setting)):
        assert run.lhs.shape == run.rhs.shape == (300,)
        assert np.all(np.asarray(run.lhs) <= np.asarray(run.rhs) + 1e-12)
    terms = st.simulate_max_terms(key, setting)
    np.testing.assert_allclose(terms.full, np.maximum(terms.first, terms.second), rtol=1e-14)


def test_worst_kkt_is_the_largest_residual_of_every_solve():
    """The claims' solver guard reads the *worst* KKT residual over all solves and points."""
    from types import SimpleNamespace

    from ntsim.theory.stability._head_tuning_runs import _worst_kkt

    solves = [SimpleNamespace(kkt_residual=jnp.array([1e-12, 3e-10])),
              SimpleNamespace(kkt_residual=jnp.array(2e-3))]  # fmt: skip
    assert float(_worst_kkt(*solves)) == pytest.approx(2e-3)
    assert float(_worst_kkt(solves[0])) == pytest.approx(3e-10)


@pytest.mark.parametrize("radius, other", [(1.0, 0.5), (3.0, -1.0), (2.0, 1.9)])
def test_lemma_a2_3_bound_has_slack_two_on_two_points(x64, radius, other):
    """Lemma A.2.3's ``|b̂| ≤ 1 + ‖v̂‖B`` on the 1-D pair ``{(B, +1), (a, −1)}``, ``a < B``:
    both points are support vectors of the textbook SVM (score ``v x − b``), so
    ``v̂ = 2/(B − a)``, ``b̂ = v̂B − 1`` (closed form), and the bound exceeds ``|b̂|`` by
    exactly 2 whenever ``v̂B ≥ 1``; the solver's SVM must give the same."""
    x = jnp.asarray([[radius], [other]])
    y = jnp.asarray([1.0, -1.0])
    sol = hard_margin_svm(x, y, penalize_bias=False)
    v = 2.0 / (radius - other)
    np.testing.assert_allclose(sol.weights[0], v, rtol=1e-7)
    np.testing.assert_allclose(sol.bias, v * radius - 1.0, rtol=1e-7)
    bound = st.lemma_a2_3_bound(abs(v), max(abs(radius), abs(other)))
    np.testing.assert_allclose(bound - abs(v * radius - 1.0), 2.0, rtol=1e-12)
