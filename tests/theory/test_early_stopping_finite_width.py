"""Trained task vectors, Lemma 5's random-init expansion and hold-out learning curves.

Oracles: one GD step of the network is exactly ``−(ε/N)Jᵀr_0`` (so trained and predicted
task-vector cosines coincide), ``jax.jacrev`` Jacobians of the flattened parameters (not
``ntsim.core``'s NTK), ``θ_PT = θ_0`` (then ``e = 0`` exactly), and a numpy loop of kernel GD
with its own patience rule.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from ntsim.theory import early_stopping as es
from ntsim.theory.early_stopping._learning_curves import _kernel_target

# ------------------------------------------------------------------------ task vectors


def test_task_vector_bases_overlap_structure(x64, key):
    d, r = 12, 4
    b = np.asarray(es.task_vector_bases(key, d, r))
    assert b.shape == (4, r, d)
    gram = np.einsum("sid,tjd->stij", b, b) * r / d  # orthonormal rows: identity blocks
    np.testing.assert_allclose(gram[0, 0], np.eye(r), atol=1e-12)
    np.testing.assert_allclose(gram[0, 1], np.eye(r), atol=1e-12)  # B = A's subspace
    np.testing.assert_allclose(gram[0, 3], 0, atol=1e-12)  # D ⊥ A
    np.testing.assert_allclose(gram[2, 3], 0, atol=1e-12)  # D ⊥ C
    overlap = np.linalg.svd(gram[0, 2], compute_uv=False)  # C shares r/2 of A's directions
    np.testing.assert_allclose(overlap, [1, 1, 0, 0], atol=1e-12)
    with pytest.raises(ValueError, match="subspace_dim"):
        es.task_vector_bases(key, 8, 3)


@pytest.mark.slow  # > 20 s on 2 shared cores (compilation); runs in make test-full
def test_one_step_task_vectors_are_the_kernel_prediction(x64, key):
    """After one GD step τ_t = −(ε/N)J_tᵀr_t exactly, so cos(τ_s, τ_t) = the prediction."""
    setting = es.TaskVectorSetting(
        width=6,
        seq_len=3,
        input_dim=6,
        subspace_dim=2,
        num_train=5,
        num_test=4,
        num_source=6,
        pretrain_steps=3,
        finetune_steps=1,
        eta0=0.2,  # ε λ_max(G_tt)/N ≤ 1: the prediction's validity condition
    )
    out = es.trained_task_vectors(key, setting)
    assert 0.05 < float(out.max_kernel_step) <= 1
    np.testing.assert_allclose(
        np.asarray(out.cosine), np.asarray(out.predicted_cosine), rtol=1e-9, atol=1e-11
    )
    np.testing.assert_allclose(np.diag(np.asarray(out.cosine)), 1, rtol=1e-12)
    np.testing.assert_allclose(np.diag(np.asarray(out.alignment)), 1, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(out.cosine), np.asarray(out.cosine).T, rtol=1e-12)
    normalised = (out.mse_pt - out.mse_mt) / (out.mse_pt - out.mse_ft)
    np.testing.assert_allclose(np.asarray(out.normalised), np.asarray(normalised), rtol=1e-12)
    with pytest.raises(ValueError, match="TaskVectorSetting.subspace_dim"):
        es.TaskVectorSetting(input_dim=8, subspace_dim=3)


# ----------------------------------------------------------------------------- Lemma 5


def _flat_jacobian(model, params, x):
    flat, unravel = ravel_pytree(params)
    jac = jax.vmap(lambda xi: jax.jacrev(lambda p: model.apply(unravel(p), xi)[0])(flat))(x)
    return np.asarray(jac)


def test_mixed_init_kernel_matches_autodiff(x64, key):
    width, n = 6, 4
    model = es.paper_attention_model(width, num_heads=2)
    k_x, k_0, k_p, k_w = jax.random.split(key, 4)
    x = jax.random.normal(k_x, (n, 3, 5))
    params0 = model.init(k_0, x[0])
    leaves, treedef = jax.tree.flatten(params0)
    noise = jax.random.split(k_p, len(leaves))
    moved = [v + 0.3 * jax.random.normal(k, v.shape) for v, k in zip(leaves, noise, strict=True)]
    params_pt = jax.tree.unflatten(treedef, moved)
    head = jax.random.normal(k_w, (width,)) / np.sqrt(width)
    terms = es.mixed_init_kernel(model, params_pt, params0, head, x)

    def with_head(p):
        return {**p, "head": {"w": head.reshape(-1, 1)}}

    j_pt = _flat_jacobian(model, with_head(params_pt), x)
    j_0 = _flat_jacobian(model, with_head(params0), x)
    # the head's columns of the flat Jacobian: ravel a pytree that is 1 on the head only
    marker = jax.tree.map(jnp.zeros_like, with_head(params0))
    marker["head"]["w"] = jnp.ones((width, 1))
    is_head = np.asarray(ravel_pytree(marker)[0]) == 1
    assert is_head.sum() == width
    np.testing.assert_allclose(np.asarray(terms.kernel), j_pt @ j_pt.T / width, rtol=1e-10)
    h_pt = j_pt[:, is_head]
    np.testing.assert_allclose(np.asarray(terms.head_block), h_pt @ h_pt.T / width, rtol=1e-10)
    bb_pt, bb_0 = j_pt[:, ~is_head], j_0[:, ~is_head]
    np.testing.assert_allclose(
        np.asarray(terms.backbone_block), bb_pt @ bb_pt.T / width, rtol=1e-10
    )
    np.testing.assert_allclose(
        np.asarray(terms.random_init_backbone), bb_0 @ bb_0.T / width, rtol=1e-10
    )
    # x⁰ = f_BB(θ_0) is the head Jacobian at θ_0 (the head is linear)
    h_0 = j_0[:, is_head]
    np.testing.assert_allclose(
        np.asarray(terms.random_init_features), h_0 @ h_0.T / width, rtol=1e-10
    )


def test_mixed_init_error_vanishes_without_pretraining(x64, key):
    """θ_PT = θ_0: eq. (97) holds with e = 0 (the head block equals x⁰x⁰ᵀ/n, eq. (93))."""
    model = es.paper_attention_model(6, num_heads=2)
    x = jax.random.normal(key, (3, 4, 5))
    params0 = model.init(key, x[0])
    head = jax.random.normal(jax.random.fold_in(key, 1), (6,)) / np.sqrt(6)
    terms = es.mixed_init_kernel(model, params0, params0, head, x)
    error = np.asarray(terms.kernel - terms.random_init_backbone - terms.random_init_features)
    assert np.max(np.abs(error)) < 1e-13 * np.max(np.abs(np.asarray(terms.kernel)))
    setting = es.WidthScalingSetting(num_source=4, num_target=3, pretrain_steps=20)
    run = es.mixed_init_run(key, 6, setting)
    assert 1e-6 < float(run.relative_error) < 1 and float(run.pretrain_distance) > 0
    assert float(run.relative_error) <= float(run.head_error + run.backbone_error) + 1e-15


# --------------------------------------------------------------------- learning curves


def _numpy_holdout_error(gram, f_pt, y, delta, n, n_max, s):
    """Kernel GD in function space, validation every ``eval_every`` steps, patience."""
    n_val = max(1, round(s.holdout_fraction * n))
    tr, va, te = np.arange(n - n_val), np.arange(n - n_val, n), np.arange(n_max, len(y))
    k_tr = gram[np.ix_(tr, tr)] / tr.size
    alpha = min(1.0, 1 / np.linalg.eigvalsh(k_tr)[-1])
    rows = {"tr": tr, "va": va, "te": te}
    f = {name: f_pt[idx].copy() for name, idx in rows.items()}
    best, best_test, wait = np.inf, None, 0
    for t in range(s.max_steps + 1):
        if t % s.eval_every == 0:
            loss = np.mean((f["va"] - y[va]) ** 2)
            if loss < best:
                best, best_test, wait = loss, f["te"].copy(), 0
            else:
                wait += 1
                if wait >= s.patience:
                    break
        r = f["tr"] - y[tr]
        for name, idx in rows.items():
            f[name] = f[name] - alpha / tr.size * gram[np.ix_(idx, tr)] @ r
    target = f_pt[te] + delta[te]
    return np.mean((best_test - target) ** 2) / np.mean(delta[te] ** 2)


# the teacher variant took > 20 s on 2 shared cores; the kernel variant runs the same loop in CI
@pytest.mark.parametrize("target", [pytest.param("teacher", marks=pytest.mark.slow), "kernel"])
def test_holdout_learning_curves_match_numpy_gd(x64, key, target):
    s = es.LearningCurveSetting(
        width=8,
        seq_len=3,
        input_dim=4,
        ranks=(2, 4),
        sizes=(10, 20),
        num_test=12,
        num_source=8,
        pretrain_steps=5,
        patience=3,
        eval_every=5,
        max_steps=200,
        beta_points=12,
        target=target,
        kernel_centres=5,
    )
    out = es.holdout_learning_curves(key, s)
    assert out.errors.shape == out.kept_steps.shape == (2, 2) and out.betas.shape == (2,)
    k_pre, k_tasks = jax.random.split(key)
    pre = es.pretrain_attention(k_pre, width=8, seq_len=3, input_dim=4, num_source=8, steps=5)
    n_max = max(s.sizes)
    for index, rank in enumerate(s.ranks):
        k_b, k_x, k_t, k_w, _ = jax.random.split(jax.random.fold_in(k_tasks, index), 5)
        basis = es.subspace_basis(k_b, 4, rank)
        x = es.subspace_inputs(k_x, n_max + s.num_test, 3, basis)
        f_pt = np.asarray(jax.vmap(pre.model.apply, in_axes=(None, 0))(pre.params, x)[:, 0])
        if target == "kernel":
            gram, delta = (
                np.asarray(a) for a in _kernel_target(k_t, pre.model, pre.params, x, 5, 3, basis)
            )
        else:
            gram = np.asarray(es.width_normalised_ntk(pre.model, pre.params, x))
            delta = np.asarray(es.task_teacher(k_t, x))
        y = f_pt + delta + 0.1 * np.asarray(jax.random.normal(k_w, f_pt.shape))
        for j, n in enumerate(s.sizes):
            expected = _numpy_holdout_error(gram, f_pt, y, delta, n, n_max, s)
            np.testing.assert_allclose(float(out.errors[index, j]), expected, rtol=1e-8)


def test_kernel_target_is_in_the_ntk_span_with_the_teacher_rms(x64, key):
    model = es.paper_attention_model(8, num_heads=2)
    basis = es.subspace_basis(key, 4, 2)
    x = es.subspace_inputs(jax.random.fold_in(key, 1), 7, 3, basis)
    params = model.init(key, x[0])
    gram, delta = _kernel_target(key, model, params, x, 5, 3, basis)
    k_z, k_a, k_t = jax.random.split(key, 3)
    z = es.subspace_inputs(k_z, 5, 3, basis)
    full = np.asarray(es.width_normalised_ntk(model, params, jnp.concatenate([x, z])))
    np.testing.assert_allclose(np.asarray(gram), full[:7, :7], rtol=1e-12)
    a = np.asarray(jax.random.normal(k_a, (5,)))
    on_x, on_z = full[:7, 7:] @ a, full[7:, 7:] @ a
    rms = np.sqrt(np.mean(np.asarray(es.task_teacher(k_t, z)) ** 2) / np.mean(on_z**2))
    np.testing.assert_allclose(np.asarray(delta), rms * on_x, rtol=1e-10)
    with pytest.raises(ValueError, match="target"):
        es.LearningCurveSetting(target="other")


def test_pretrain_attention_for_reads_the_setting(key):
    """The shared pretraining reads sizes and ``η_0`` from any setting (default ``η_0 = 1``)."""
    setting = es.TaskVectorSetting(
        width=8, seq_len=3, input_dim=6, subspace_dim=2, num_source=8, pretrain_steps=5, eta0=0.5
    )
    explicit = es.pretrain_attention(
        key, width=8, seq_len=3, input_dim=6, num_source=8, steps=5, eta0=0.5
    )
    for a, b in zip(
        jax.tree.leaves(es.pretrain_attention_for(key, setting).params),
        jax.tree.leaves(explicit.params),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)
    default = es.LearningCurveSetting(
        width=8, seq_len=3, input_dim=6, num_source=8, pretrain_steps=5, ranks=(1, 2)
    )
    eta_one = es.pretrain_attention(key, width=8, seq_len=3, input_dim=6, num_source=8, steps=5)
    np.testing.assert_array_equal(
        ravel_pytree(es.pretrain_attention_for(key, default).params)[0],
        ravel_pytree(eta_one.params)[0],
    )
    assert not np.allclose(ravel_pytree(eta_one.params)[0], ravel_pytree(explicit.params)[0])


@pytest.mark.slow  # one compilation per width; runs in make test-full
def test_mixed_init_sweep_is_the_per_width_run_with_shared_seed_keys(key):
    setting = es.WidthScalingSetting(
        num_source=3, num_target=3, pretrain_steps=2, widths=(4, 8), num_seeds=2
    )
    sweep = es.simulate_mixed_init(key, setting)
    keys = jax.random.split(key, 2)
    for i, width in enumerate(setting.widths):
        one = es.mixed_init_run(keys[1], width, setting)
        for name, value in one._asdict().items():
            np.testing.assert_allclose(
                np.asarray(getattr(sweep, name))[i, 1], np.asarray(value), rtol=1e-5
            )


def test_mixed_init_blocks_simulation_matches_the_lemma5_formulas(x64, key):
    run = es.simulate_mixed_init_blocks(
        key, es.MixedInitBlocksSetting(width=4, num_inputs=2, instances=2, batch_size=2)
    )
    assert np.asarray(run.head).shape == (2, 2, 2)
    np.testing.assert_allclose(run.head, run.head_formula, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(run.backbone, run.backbone_formula, rtol=1e-10, atol=1e-14)


@pytest.mark.slow  # one compilation per width; runs in make test-full
def test_trained_task_vector_sweep_is_the_per_width_run(key):
    base = es.TaskVectorSetting(
        width=8, num_train=4, num_test=4, num_source=8, pretrain_steps=2, finetune_steps=2
    )
    setting = es.TaskVectorSweepSetting(base=base, widths=(8, 12), num_seeds=2)
    sweep = es.simulate_trained_task_vectors(key, setting)
    one = es.trained_task_vectors(jax.random.split(key, 2)[1], base)
    np.testing.assert_allclose(
        np.asarray(sweep.runs.cosine)[0, 1], np.asarray(one.cosine), rtol=1e-4, atol=1e-6
    )
    with pytest.raises(ValueError, match="widths"):
        es.TaskVectorSweepSetting(widths=(8,))


@pytest.mark.slow  # NTK of the largest sample per seed; runs in make test-full
def test_learning_curve_sweep_is_the_per_seed_run(x64, key):
    base = es.LearningCurveSetting(
        width=8, ranks=(4,), sizes=(10, 20), num_test=5, num_source=8, pretrain_steps=2,
        max_steps=40, beta_points=10,
    )  # fmt: skip
    sweep = es.simulate_learning_curves(
        key, es.LearningCurveSweepSetting(base=base, num_seeds=2, batch_size=1)
    )
    one = es.holdout_learning_curves(jax.random.split(key, 2)[1], base)
    assert np.asarray(sweep.errors).shape == (2, 1, 2)
    np.testing.assert_allclose(np.asarray(sweep.errors)[1], np.asarray(one.errors), rtol=1e-8)


def test_width_normalised_ntk_is_the_parameter_gradient_gram_over_the_width(x64, key):
    """Eq. (37): Θ(x, x') = (1/n)⟨∇_θ f(x), ∇_θ f(x')⟩, from per-input gradients (a route
    that shares no code with ntsim.core's empirical NTK); 1/(n − 1) is off by n/(n − 1)."""
    width = 8
    model = es.paper_attention_model(width, num_heads=2)
    x = jax.random.normal(key, (4, 3, 5))
    params = model.init(jax.random.fold_in(key, 1), x[0])
    grads = np.stack(
        [np.asarray(ravel_pytree(jax.grad(lambda p, xi=xi: model.apply(p, xi)[0])(params))[0])
         for xi in x]
    )  # fmt: skip
    np.testing.assert_allclose(
        np.asarray(es.width_normalised_ntk(model, params, x)), grads @ grads.T / width, rtol=1e-10
    )
