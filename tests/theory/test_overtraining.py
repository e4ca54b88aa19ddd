"""ntsim.theory.overtraining against independent oracles (Springer et al. 2025, Sec 4, App A, D).

Oracles: the ODE solver vs the logistic closed form; Monte Carlo with standard-error
tolerances; matrices built from random ``U, V`` vs the spectral closed forms; ``jax.hessian``
and a finite-difference Hutchinson estimate vs the Hessian-trace identity; ``jax.grad`` of
the minibatch loss vs the hand-written GD update.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import random_orthogonal
from ntsim.theory import overtraining as ot


def _instance(key, d):
    k_u, k_v, k_s, k_f = jax.random.split(key, 4)
    spectrum = jnp.sort(jax.random.uniform(k_s, (d,), minval=0.2, maxval=3.0))[::-1]
    ft = jax.random.uniform(k_f, (d,), minval=0.1, maxval=2.0)
    return spectrum, ft, random_orthogonal(k_u, d), random_orthogonal(k_v, d)


# ------------------------------------------------------------------------------ pretraining


def test_logistic_modes_match_gradient_flow(x64, key):
    d, tau = 4, 5.0
    spectrum, _, u, v = _instance(key, d)
    times = ot.checkpoint_times(spectrum, tau, factor=100.0)
    save = jnp.sort(jnp.concatenate([jnp.array([0.0, 0.1]), times]))
    w1, w2 = ot.pretrain_gradient_flow(
        ot.task_matrix(spectrum, u, v), ot.aligned_init(u, v, tau), save, rtol=1e-11, atol=1e-13
    )
    modes = jax.vmap(ot.mode_matrix, in_axes=(0, None, None))(w1 @ w2, u, v)
    closed = ot.logistic_modes(spectrum, tau, save)
    # Tsit5 at rtol 1e-11: the relative error of each mode stays ~1e-9 over the sigmoid.
    np.testing.assert_allclose(jnp.diagonal(modes, axis1=1, axis2=2), closed, rtol=1e-7, atol=1e-12)
    off = modes - jax.vmap(jnp.diag)(jnp.diagonal(modes, axis1=1, axis2=2))
    assert float(jnp.max(jnp.abs(off))) < 1e-9  # aligned init: modes never couple


def test_checkpoint_times_reach_the_fraction(x64):
    spectrum = ot.geometric_spectrum(5, 4.0, 0.6)
    # τ = 1 makes the log1p(−e^(−2τ)/σ_n) term of t_n count (≈ 0.3 of the log ratio's 2τ)
    for tau, factor in ((12.0, 1e3), (12.0, 1e5), (1.0, 1e3), (1.0, 0.5)):
        a = ot.logistic_modes(spectrum, tau, ot.checkpoint_times(spectrum, tau, factor))
        np.testing.assert_allclose(jnp.diagonal(a), spectrum / (1 + 1 / factor), rtol=1e-12)


def test_identity_init_learns_incrementally(x64, key):
    """Thm 4.1 at small size: real checkpoints within a few e-3 of UΣ_{:n}Vᵀ, times ordered."""
    d, tau = 3, 12.0
    spectrum = ot.geometric_spectrum(d, 3.0, 0.4)
    _, _, u, v = _instance(key, d)
    save = jnp.geomspace(0.05, 3 * float(ot.checkpoint_times(spectrum, tau)[-1]), 300)
    w1, w2 = ot.pretrain_gradient_flow(
        ot.task_matrix(spectrum, u, v), ot.identity_init(d, tau), save
    )
    index, dist = ot.closest_checkpoints(w1 @ w2, spectrum, u, v)
    assert np.all(np.diff(np.asarray(index)) > 0)
    assert float(dist.max()) < 5e-3 * float(spectrum[0])
    losses = jax.vmap(ot.pretraining_loss, in_axes=(0, 0, None))(
        w1, w2, ot.task_matrix(spectrum, u, v)
    )
    assert float(jnp.max(jnp.diff(losses))) <= 1e-9  # gradient flow never increases L_pre


def test_ideal_checkpoint_is_the_truncated_svd(key):
    spectrum, _, u, v = _instance(key, 5)
    w1, w2 = ot.ideal_checkpoint(spectrum, 2, u, v)
    np.testing.assert_allclose(w1 @ w2, ot.task_matrix(spectrum.at[2:].set(0.0), u, v), atol=1e-5)
    assert np.all(np.asarray(w1[:, 2:]) == 0) and np.all(np.asarray(w2[2:]) == 0)


# ---------------------------------------------------------------------------- perturbation


def test_expected_perturbed_loss_matches_monte_carlo(x64, key):
    d = 4
    k_w1, k_w2, k_a, k_mc = jax.random.split(key, 4)
    w1, w2, a = (jax.random.normal(k, (d, d)) for k in (k_w1, k_w2, k_a))
    for gamma in (0.1, 0.5):
        exact = ot.expected_perturbed_loss(w1, w2, a, gamma)
        mean, se = ot.monte_carlo_perturbed_loss(k_mc, w1, w2, a, gamma, num_samples=40_000)
        # |z| < 4: false alarm 6e-5 per check (CLT; 40k samples of a sum of squares).
        assert abs(float((mean - exact) / se)) < 4.0


def test_ideal_perturbed_losses_match_matrix_route(x64, key):
    d, gamma = 6, 0.2
    spectrum, _, u, v = _instance(key, d)
    a = ot.task_matrix(spectrum, u, v)
    by_matrix = jnp.stack(
        [ot.expected_perturbed_loss(*ot.ideal_checkpoint(spectrum, n, u, v), a, gamma)
         for n in range(d + 1)]
    )  # fmt: skip
    closed = ot.ideal_perturbed_losses(spectrum, gamma)
    np.testing.assert_allclose(closed, by_matrix, rtol=1e-12)
    np.testing.assert_allclose(jnp.diff(closed), ot.perturbed_increments(spectrum, gamma), 1e-12)


def test_inflection_point_definition():
    assert int(ot.inflection_point(jnp.array([3.0, 2.0, 2.0, 2.5]))) == 2
    assert int(ot.inflection_point(jnp.array([1.0, 2.0]))) == 0
    assert int(ot.inflection_point(jnp.array([3.0, 2.0, 1.0]))) == 2  # none: last index
    batched = ot.inflection_point(jnp.array([[3.0, 2.0, 4.0], [3.0, 2.0, 1.0]]))
    assert batched.tolist() == [1, 2]


@pytest.mark.parametrize("gamma", [0.05, 0.1, 0.15, 0.3])
def test_gaussian_inflection_matches_argmin(x64, gamma):
    spectrum = ot.geometric_spectrum(10, 4.0, 0.6)  # the project's config R
    losses = ot.ideal_perturbed_losses(spectrum, gamma)
    r = int(ot.gaussian_inflection(spectrum, gamma))
    assert r == int(ot.inflection_point(losses)) == int(jnp.argmin(losses))
    assert np.all(np.diff(np.asarray(losses[r:])) > 0)


def test_hessian_trace_identity(x64, key):
    d = 3
    k_w1, k_w2, k_a, k_z = jax.random.split(key, 4)
    w1, w2, a = (jax.random.normal(k, (d, d)) for k in (k_w1, k_w2, k_a))
    flat = jnp.concatenate([w1.ravel(), w2.ravel()])

    def loss(p):
        return ot.pretraining_loss(p[: d * d].reshape(d, d), p[d * d :].reshape(d, d), a)

    trace = jnp.trace(jax.hessian(loss)(flat))
    np.testing.assert_allclose(trace, ot.hessian_trace(w1, w2), rtol=1e-12)
    # Hutchinson with central finite differences of the gradient (no second-order autodiff).
    z = jax.random.rademacher(k_z, (4000, flat.size), dtype=flat.dtype)
    grad, h = jax.grad(loss), 1e-4
    hz = jax.vmap(lambda zi: (grad(flat + h * zi) - grad(flat - h * zi)) / (2 * h))(z)
    samples = jnp.sum(z * hz, axis=1)
    se = samples.std() / np.sqrt(samples.size)
    assert abs(float(samples.mean() - ot.hessian_trace(w1, w2))) < 4 * float(se)


def test_ideal_hessian_traces(x64, key):
    spectrum, _, u, v = _instance(key, 5)
    traces = [ot.hessian_trace(*ot.ideal_checkpoint(spectrum, n, u, v)) for n in range(6)]
    np.testing.assert_allclose(ot.ideal_hessian_traces(spectrum), jnp.stack(traces), rtol=1e-12)


def test_perturbation_validation():
    with pytest.raises(ValueError, match="w1 must be a square"):
        ot.expected_perturbed_loss(jnp.ones((2, 3)), jnp.ones((3, 3)), jnp.ones((3, 3)), 0.1)
    with pytest.raises(ValueError, match="gamma"):
        ot.expected_perturbed_loss(jnp.eye(2), jnp.eye(2), jnp.eye(2), -0.1)


# ----------------------------------------------------------------------------- fine-tuning


@pytest.mark.parametrize("reg", [0.0, 0.7, 3.0])
def test_infinite_batch_finetuning_follows_mode_recursion(x64, key, reg):
    """Lemma A.7: GD on the matrices = the scalar map f per mode; unlearned modes stay 0."""
    d, n, eta, steps = 5, 3, 0.02, 300
    spectrum, ft, u, v = _instance(key, d)
    res = ot.finetune(
        *ot.ideal_checkpoint(spectrum, n, u, v), ot.task_matrix(ft, u, v),
        learning_rate=eta, reg=reg, num_steps=steps, record_every=50,
    )  # fmt: skip
    x = ot.mode_trajectory(spectrum, ft, learning_rate=eta, reg=reg, num_steps=steps)[::50]
    expected = jnp.where(jnp.arange(d) < n, x**2, 0.0)
    modes = jax.vmap(ot.mode_matrix, in_axes=(0, None, None))(res.thetas, u, v)
    np.testing.assert_allclose(
        modes, jax.vmap(jnp.diag)(expected), atol=1e-11 * float(spectrum[0] + ft.max())
    )


def test_printed_recursion_differs_when_regularised(x64):
    pre, ft = jnp.array(0.25), jnp.array(2.0)
    kw = dict(learning_rate=0.02, reg=1.0, num_steps=400)
    corrected = ot.mode_trajectory(pre, ft, **kw)[-1] ** 2
    printed = ot.mode_trajectory(pre, ft, printed=True, **kw)[-1] ** 2
    np.testing.assert_allclose(corrected, ot.fixed_point(pre, ft, 1.0), rtol=1e-10)
    # eq. (18) as printed converges to the root of x(σ^ft − x²) + λ(σ^pre − x²) = 0 instead
    x = jnp.sqrt(printed)
    np.testing.assert_allclose(x * (ft - x**2) + (pre - x**2), 0.0, atol=1e-10)
    assert abs(float(printed - corrected)) > 0.03  # 1.1569 vs 1.125


def test_fixed_point_corrected_not_printed(x64):
    pre, ft, reg = jnp.array([1.5, 0.5]), jnp.array([0.3, 2.0]), 3.0
    x = ot.mode_trajectory(pre, ft, learning_rate=0.02, reg=reg, num_steps=3000)[-1]
    np.testing.assert_allclose(x**2, ot.fixed_point(pre, ft, reg), rtol=1e-12)
    assert np.all(np.abs(np.asarray(x**2 - ot.fixed_point_printed(pre, ft, reg))) > 0.1)
    np.testing.assert_allclose(ot.fixed_point(pre, ft, 1.0), ot.fixed_point_printed(pre, ft, 1.0))


def test_contraction_bound_lemma_a28(x64, key):
    k1, k2 = jax.random.split(key)
    pre = jax.random.uniform(k1, (50,), minval=0.1, maxval=2.0)
    ft = jax.random.uniform(k2, (50,), minval=0.1, maxval=2.0)
    eta, reg = 0.03, 0.5
    assert bool(jnp.all(ot.contraction_condition(pre, ft, eta, reg)))
    x = ot.mode_trajectory(pre, ft, learning_rate=eta, reg=reg, num_steps=200)
    star = jnp.sqrt(ot.fixed_point(pre, ft, reg))
    k = jnp.arange(201)[:, None]
    bound = ot.contraction_rate(pre, ft, eta) ** k * jnp.abs(x[0] - star)
    assert bool(jnp.all(jnp.abs(x - star) <= bound + 1e-14))
    lo, hi = jnp.sqrt(jnp.minimum(pre, ft)), jnp.sqrt(jnp.maximum(pre, ft))
    assert bool(jnp.all((x >= lo - 1e-14) & (x <= hi + 1e-14)))


def test_minibatch_update_is_the_gradient(x64, key):
    """One finetune step with eq11="gradient" equals GD with jax.grad of the minibatch loss."""
    d, m, eta, reg = 4, 7, 0.01, 0.5
    spectrum, ft, u, v = _instance(key, d)
    w1, w2 = ot.ideal_checkpoint(spectrum, d, u, v)
    a_ft, k_batch = ot.task_matrix(ft, u, v), jax.random.PRNGKey(3)
    res = ot.finetune(w1, w2, a_ft, learning_rate=eta, reg=reg, num_steps=1, batch_size=m,
                      key=k_batch)  # fmt: skip
    x = jax.random.normal(jax.random.split(k_batch, 1)[0], (m, d))
    anchor = w1 @ w2

    def loss(w):  # (1/m)Σ‖(θ − A)x‖² + λ‖θ − θ0‖², eq. (9) on one batch
        theta = w[0] @ w[1]
        return jnp.mean(jnp.sum(((theta - a_ft) @ x.T) ** 2, 0)) + reg * jnp.sum(
            (theta - anchor) ** 2
        )

    g1, g2 = jax.grad(loss)((w1, w2))
    np.testing.assert_allclose(res.w1, w1 - eta * g1, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res.w2, w2 - eta * g2, rtol=1e-12, atol=1e-14)
    printed = ot.finetune(w1, w2, a_ft, learning_rate=eta, reg=reg, num_steps=1, batch_size=m,
                          key=k_batch, eq11="printed")  # fmt: skip
    assert float(jnp.max(jnp.abs(printed.w2 - res.w2))) > 1e-6  # eq. (11) as printed differs


def test_dead_units_stay_exactly_zero_with_minibatches(x64, key):
    d, n = 5, 2
    spectrum, ft, u, v = _instance(key, d)
    w1, w2 = ot.ideal_checkpoint(spectrum, n, u, v)
    res = ot.finetune(
        w1, w2, ot.task_matrix(ft, u, v), learning_rate=0.02, reg=0.5, num_steps=100,
        batch_size=20, key=key,
    )  # fmt: skip
    assert np.all(np.asarray(res.w1[:, n:]) == 0) and np.all(np.asarray(res.w2[n:]) == 0)


def test_post_finetuning_losses_match_matrices(x64, key):
    d, reg = 5, 0.8
    spectrum, ft, u, v = _instance(key, d)
    modes = ot.fixed_point(spectrum, ft, reg)
    pre_curve, id_curve = ot.post_finetuning_losses(modes, spectrum, ft)
    a_pre, a_ft = ot.task_matrix(spectrum, u, v), ot.task_matrix(ft, u, v)
    for n in range(d + 1):
        theta = ot.task_matrix(jnp.where(jnp.arange(d) < n, modes, 0.0), u, v)
        np.testing.assert_allclose(pre_curve[n], jnp.sum((theta - a_pre) ** 2), rtol=1e-12)
        np.testing.assert_allclose(id_curve[n], jnp.sum((theta - a_ft) ** 2), rtol=1e-12)
    np.testing.assert_allclose(
        jnp.diff(pre_curve), ot.finetuning_increments(spectrum, ft, reg), rtol=1e-10, atol=1e-12
    )


def test_finetune_validation(key):
    with pytest.raises(ValueError, match="key is required"):
        ot.finetune(jnp.eye(2), jnp.eye(2), jnp.eye(2), learning_rate=0.1, num_steps=2,
                    batch_size=4)  # fmt: skip
    with pytest.raises(ValueError, match="record_every"):
        ot.finetune(jnp.eye(2), jnp.eye(2), jnp.eye(2), learning_rate=0.1, num_steps=5,
                    record_every=2)  # fmt: skip
    with pytest.raises(ValueError, match="reg"):
        ot.finetune(jnp.eye(2), jnp.eye(2), jnp.eye(2), learning_rate=0.1, num_steps=5, reg=-1.0)


def test_finetune_ideal_checkpoints_matches_closed_forms(x64, key):
    """Every checkpoint's GD losses equal the per-mode closed forms (m = ∞, converged)."""
    d, reg, eta = 4, 1.5, 0.02
    k_s, k_f, k_uv = jax.random.split(key, 3)
    pre = jnp.sort(jax.random.uniform(k_s, (d,), minval=0.3, maxval=2.0))[::-1]
    ft = jnp.sort(jax.random.uniform(k_f, (d,), minval=0.3, maxval=2.0))[::-1]
    u, v = random_orthogonal(k_uv, d), random_orthogonal(jax.random.fold_in(k_uv, 1), d)
    _, pre_loss, id_loss = ot.finetune_ideal_checkpoints(
        pre, ft, u, v, learning_rate=eta, reg=reg, num_steps=3000
    )
    closed_pre, closed_id = ot.post_finetuning_losses(ot.fixed_point(pre, ft, reg), pre, ft)
    # rates 4η(σ^ft + λσ^pre) ≥ 0.07 per step: 3000 steps converge far below 1e-10
    np.testing.assert_allclose(pre_loss, closed_pre, rtol=1e-10)
    np.testing.assert_allclose(id_loss, closed_id, rtol=1e-10)


def test_finetune_step_matches_finetune_and_is_equivariant():
    """K finetune_step calls reproduce finetune; (W1Q, QᵀW2) is carried to (W1'Q, QᵀW2')."""
    with jax.enable_x64(True):
        keys = jax.random.split(jax.random.PRNGKey(3), 4)
        w1, w2 = (0.5 * jax.random.normal(k, (4, 4)) for k in keys[:2])
        a_ft = jax.random.normal(keys[2], (4, 4))
        q = random_orthogonal(keys[3], 4)
        res = ot.finetune(w1, w2, a_ft, learning_rate=0.01, reg=0.3, num_steps=5)
        state, rotated, anchor = (w1, w2), (w1 @ q, q.T @ w2), w1 @ w2
        for _ in range(5):
            state = ot.finetune_step(*state, a_ft, anchor, learning_rate=0.01, reg=0.3)
            rotated = ot.finetune_step(*rotated, a_ft, anchor, learning_rate=0.01, reg=0.3)
        np.testing.assert_allclose(state[0], res.w1, atol=1e-14)
        np.testing.assert_allclose(state[1], res.w2, atol=1e-14)
        np.testing.assert_allclose(rotated[0], state[0] @ q, atol=1e-12)
        np.testing.assert_allclose(rotated[1], q.T @ state[1], atol=1e-12)


def test_finetune_records_every_kth_checkpoint_with_its_step_number():
    """The records are θ = W1W2 at steps 0, k, 2k, …, K (the iterates of finetune_step), and
    ``steps`` names them."""
    with jax.enable_x64(True):
        keys = jax.random.split(jax.random.PRNGKey(5), 3)
        w1, w2 = (0.5 * jax.random.normal(k, (3, 3)) for k in keys[:2])
        a_ft = jax.random.normal(keys[2], (3, 3))
        res = ot.finetune(w1, w2, a_ft, learning_rate=0.02, reg=0.1, num_steps=6, record_every=2)
        np.testing.assert_array_equal(res.steps, [0, 2, 4, 6])
        state, anchor, expected = (w1, w2), w1 @ w2, [w1 @ w2]
        for step in range(1, 7):
            state = ot.finetune_step(*state, a_ft, anchor, learning_rate=0.02, reg=0.1)
            if step % 2 == 0:
                expected.append(state[0] @ state[1])
        np.testing.assert_allclose(res.thetas, np.stack(expected), atol=1e-13)


def test_printed_map_fixed_point_is_the_limit_of_the_printed_map(x64):
    pre = jnp.array([0.25, 1.0, 2.5])
    ft = jnp.array([2.0, 0.3, 2.5])
    kw = dict(learning_rate=0.02, reg=0.7, num_steps=3000)
    root = ot.printed_map_fixed_point(pre, ft, 0.7)
    np.testing.assert_allclose(root**3 + 0.7 * root**2 - ft * root - 0.7 * pre, 0.0, atol=1e-12)
    limit = ot.mode_limit(pre, ft, printed=True, **kw)
    np.testing.assert_allclose(limit, ot.mode_trajectory(pre, ft, printed=True, **kw)[-1])
    np.testing.assert_allclose(limit, root, rtol=1e-10)
    corrected = ot.mode_limit(pre, ft, **kw) ** 2
    np.testing.assert_allclose(corrected, ot.fixed_point(pre, ft, 0.7), rtol=1e-10)
    with pytest.raises(ValueError, match="λ > 0"):
        ot.printed_map_fixed_point(pre, ft, 0.0)
