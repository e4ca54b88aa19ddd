"""The simulations the linearization claims read (``lz.simulate_*``) against independent
oracles: finite differences, explicit Jacobians, numpy linear algebra, and the closed forms
of linear models (whose Lipschitz constants and flows are exact)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from ntsim.core import mlp
from ntsim.theory import linearization as lz

TINY = lz.NetworkSetting(n=4, d=3, width=6, steps=40, instances=3)
KERNELS = lz.KernelSpectraSetting(n=4, d=3, width=6, kernel_n=5, features=8, instances=3)


def _fd_jacobian(apply, params, x, h=1e-6):
    flat, unravel = ravel_pytree(params)
    out = lambda v: jax.vmap(lambda xi: jnp.reshape(apply(unravel(v), xi), ()))(x)  # noqa: E731
    eye = np.eye(flat.size)
    cols = [(out(flat + h * e) - out(flat - h * e)) / (2 * h) for e in eye]
    return np.stack([np.asarray(c) for c in cols], axis=1)


def test_kernel_blocks_match_finite_difference_ntks(x64, key):
    run = lz.simulate_kernel_blocks(key, KERNELS)
    k = jax.random.split(key, KERNELS.instances)[1]
    net = mlp((6, 6), activation="tanh", parameterization="ntk", b_std=0.3)
    x = jax.random.normal(k, (4, 3))
    params = net.init(jax.random.fold_in(k, 1), x[0])
    jac = _fd_jacobian(net.apply, params, x)
    np.testing.assert_allclose(run.full[1], jac @ jac.T, rtol=1e-6, atol=1e-8)
    # first layer = the leading columns (w then b of layer 0 in ravel order)
    sub = _fd_jacobian(lambda p, xi: net.apply({**params, "layers": [p, *params["layers"][1:]]},
                                               xi), params["layers"][0], x)  # fmt: skip
    np.testing.assert_allclose(run.first[1], sub @ sub.T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(run.union, run.first + run.head, rtol=1e-10, atol=1e-12)
    assert np.all(np.asarray(run.lora_a_max) == 0.0)


def test_layer_kernels_are_psd_blocks_and_scale_in_range(x64, key):
    run = lz.simulate_layer_kernels(key, KERNELS)
    for block in (run.head, run.first, run.middle):
        assert np.all(np.linalg.eigvalsh(np.asarray(block)) > -1e-12)
    assert np.all((0.05 <= run.scale) & (run.scale <= 1.0))


def test_thm5_instances_have_the_promised_residual_ratio(x64, key):
    run = lz.simulate_thm5(key, KERNELS)
    ratio = np.linalg.norm(run.y - run.f0, axis=1) / np.linalg.norm(run.y, axis=1)
    np.testing.assert_allclose(ratio, lz.THM5_EPSILON, rtol=1e-12)
    assert np.all((1e-3 <= run.sigma) & (run.sigma <= 1e3))


def test_thm7_perturbation_sizes_lie_in_the_drawn_range(x64, key):
    run = lz.simulate_thm7(key, KERNELS)
    for kernel, extra in zip(run.kernel, run.extra, strict=True):
        w, v = np.linalg.eigh(np.asarray(kernel))
        inv = v / np.sqrt(w)
        eta = np.max(np.abs(np.linalg.eigvalsh(inv.T @ np.asarray(extra) @ inv)))
        assert 0.05 <= eta <= 0.95


def test_split_step_matches_the_expanded_form(x64, key):
    run = lz.simulate_split_step(key, lz.SplitStepSetting(instances=4))
    eta, lam = np.asarray(run.eta)[:, None], np.asarray(run.lam)[:, None]
    expected = run.theta0 + (1 - lam * eta) * (run.theta - run.theta0 - eta * run.grads)
    np.testing.assert_allclose(run.split, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run.combined, expected, rtol=1e-12, atol=1e-12)


def test_thm1_identity_sides_agree_at_the_drawn_points(x64, key):
    run = lz.simulate_thm1_identity(key, TINY)
    assert np.all(np.isfinite(run.lhs))
    np.testing.assert_allclose(run.lhs, run.rhs, rtol=1e-9)
    np.testing.assert_allclose(run.dy_jvp, run.dy_formula, rtol=1e-9, atol=1e-12)
    assert np.all(np.asarray(run.kernel_term) <= 0)


def test_selective_runs_start_at_the_initial_residual_and_decrease(x64, key):
    run = lz.simulate_selective(key, TINY)
    k = jax.random.split(key, TINY.instances)[0]
    inst = lz.random_instance(k, n=4, d=3, width=6)
    r0 = np.linalg.norm(lz.outputs(lz.instance_model(6).apply, inst.params0, inst.x) - inst.y)
    np.testing.assert_allclose(run.residual[0, 0], r0, rtol=1e-12)
    assert np.all(run.residual[:, -1] < run.residual[:, 0])
    assert np.all(np.asarray(run.first_nonfinite_step) == -1)


@pytest.mark.slow
def test_gd_to_flow_gap_halves_with_the_step(x64, key):
    run = lz.simulate_gd_to_flow(key, lz.GdToFlowSetting(n=4, d=3, width=6, steps=10,
                                                          instances=2))  # fmt: skip
    ratio = np.asarray(run.gaps[:, 0] / run.gaps[:, 1])
    assert np.all((1.7 < ratio) & (ratio < 2.3))


def test_distance_linear_runs_follow_their_closed_form(x64, key):
    setting = lz.DistanceSetting(network=TINY, linear_instances=3, linear_steps=30)
    run = lz.simulate_distance(key, setting)
    a = np.asarray(run.linear_a)[:, None]
    np.testing.assert_allclose(a, 0.02, rtol=1e-12)
    k = np.arange(31)[None]
    r0 = np.asarray(run.linear_residual)[:, :1]
    np.testing.assert_allclose(run.linear_residual, r0 * (1 - a) ** k, rtol=1e-10)
    mu = np.asarray(run.linear_lip)[:, None] ** 2
    expected = r0 * (1 - (1 - a) ** k) / np.sqrt(mu)
    np.testing.assert_allclose(run.linear_distance, expected, rtol=1e-10, atol=1e-14)
    eta = a / (2 * mu)
    np.testing.assert_allclose(run.linear_integral, eta * k, rtol=1e-12)  # λ = 0: I_k = kη
    # network runs: the distance starts at 0 and the integral is increasing
    assert np.all(np.asarray(run.selective_distance)[:, 0] == 0)
    assert np.all(np.diff(run.constant_integral, axis=1) > 0)


def test_containment_linear_runs_settle_at_the_split_step_fixed_point(x64, key):
    setting = lz.ContainmentSetting(network=TINY, linear_instances=4, linear_steps=600)
    run = lz.simulate_containment(key, setting)
    r0 = np.asarray(run.linear_r0)
    # σ_eff = λ/(2(1 − λη)), λη = 0.05; printed λ = 20μ, derived λ = 20μ/r_0; r = r_0²/(10√μ)
    printed = 10 / (1 + 10 / 0.95) / r0
    derived = 10 / (r0 + 10 / 0.95)
    np.testing.assert_allclose(run.linear_printed_ratio, printed, rtol=1e-8)
    np.testing.assert_allclose(run.linear_derived_ratio, derived, rtol=1e-8)
    assert np.all(np.asarray(run.network_lam_ratio) > 0)


def test_lemma1_pairs_satisfy_the_algebraic_bound(x64, key):
    run = lz.simulate_lemma1(key, lz.Lemma1Setting(network=TINY, pairs=3))
    assert run.kernel_gap.shape == (3, 3)
    assert np.all(np.asarray(run.kernel_gap) <= np.asarray(run.bound) * (1 + 1e-12))


def test_plateau_and_table_distances_fall_as_lambda_grows(x64, key):
    plateau = lz.simulate_plateau(key, TINY)
    assert np.all(np.diff(plateau.distance, axis=1) < 0)
    assert np.all(np.asarray(plateau.scaled) <= 1 + 1e-9)
    table = lz.simulate_linearity_table(key, TINY)  # grid from λ = 50 down to 0
    assert np.all(np.diff(table.distance, axis=1) > 0)
    assert table.gap_train.shape == (3, len(lz.TABLE_LAMBDAS))


def test_gap_and_exit_runs(x64, key):
    gap = lz.simulate_gap(key, TINY)
    assert np.all(np.asarray(gap.gap)[:, 0] < 1e-12)  # same start
    assert np.all(np.asarray(gap.lip) > 0) and np.all(np.asarray(gap.lip_grad) >= 0)
    exit_ = lz.simulate_exit_time(key, TINY)
    assert np.all(np.asarray(exit_.t_exit) > 0)
    assert np.all(np.asarray(exit_.radius) > 0)


def test_krr_flow_limit_matches_numpy_ridge_regression(x64, key):
    run = lz.simulate_krr(key, lz.KrrSetting(n=4, width=6, instances=2))
    for i in range(2):
        jac = np.asarray(run.jac[i])
        kernel = jac @ jac.T
        c = 1 / 4 if bool(run.mean_loss[i]) else 1.0
        sigma = float(run.lam[i]) / (2 * c)
        alpha = np.linalg.solve(kernel + sigma * np.eye(4), np.asarray(run.y[i] - run.f0[i]))
        np.testing.assert_allclose(run.u[i], jac.T @ alpha, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(run.train[i], run.f0[i] + kernel @ alpha, rtol=1e-6)


def test_residual_path_simulation_matches_the_eigen_closed_form(x64, key):
    run = lz.simulate_residual_path(key, TINY)
    np.testing.assert_allclose(run.simulated, run.closed, atol=1e-7)
    np.testing.assert_allclose(run.simulated[:, 0], run.r0, atol=1e-12)


def test_kappa_simulation_condition_numbers_and_losses(key):
    setting = lz.KappaSetting(
        hidden=(6, 6), dim=4, num_pretrain=32, num_train=6, num_test=20, angles=(0.4, 1.0),
        configs=("head", "layer0", "lora1"), steps=10, record_every=5, pretrain_steps=5,
        replicates=2,
    )  # fmt: skip
    run = lz.simulate_kappa(key, setting)
    assert run.kappa_ntk.shape == (2, 3) and run.train_loss.shape == (2, 3, 2)
    sigma = setting.sigma
    expected = (np.asarray(run.lambda_max) + sigma) / (np.asarray(run.lambda_min) + sigma)
    np.testing.assert_allclose(run.kappa_ntk, expected, rtol=1e-3)  # SVD vs eigenvalues
    np.testing.assert_allclose(run.train_loss, np.asarray(run.loss_curves)[..., -1])
    # the normalised step: η = step_fraction/(2λ_max + λ)
    np.testing.assert_allclose(run.learning_rate, 0.5 / (2 * np.asarray(run.lambda_max) + 0.02),
                               rtol=1e-5)  # fmt: skip
    # replicate 0 at step 0 is the pretrained model's training error (independent rebuild)
    k_data, k_model, _ = jax.random.split(jax.random.split(key, 2)[0], 3)
    tasks, apply, theta0 = lz.pretrained_setup(k_data, k_model, setting)
    f0 = lz.outputs(apply, theta0, tasks.x_train)
    np.testing.assert_allclose(
        run.loss_curves[0, 0, :, 0], np.mean((f0 - tasks.y_train) ** 2, axis=1), rtol=1e-4
    )
    assert list(np.asarray(run.num_params))[:2] == [6 + 1, 4 * 6 + 6]  # head, first layer


def test_loss_rank_correlations_on_a_constructed_run():
    kappa = np.array([[1.0, 10.0, 100.0]])
    loss = np.array([[[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]])
    run = lz.KappaRun(kappa, kappa, kappa, np.array([[3.0, 2.0, 1.0]]), None, None, loss, None,
                      None, np.asarray(0.0))  # fmt: skip
    rho_k = lz.loss_rank_correlations(run, "kappa_ntk")
    rho_b = lz.loss_rank_correlations(run, "thm5_upper")
    expected = np.corrcoef([1, 1, 2, 2, 3, 3], [1, 2, 3, 4, 5, 6])[0, 1]  # tie-averaged ranks
    np.testing.assert_allclose(rho_k, [expected])
    np.testing.assert_allclose(rho_b, [expected])  # −log λ_min rises with the loss too


def test_selective_step_simulation_follows_its_closed_form(x64, key):
    setting = lz.SelectiveStepSetting(n=4, epsilon=1e-3, instances=16)
    run = lz.simulate_selective_step(key, setting)
    eps = setting.epsilon
    np.testing.assert_allclose(run.before, eps, rtol=1e-9)
    np.testing.assert_allclose(run.inner, 2 * eps * (1 + eps), rtol=1e-7)
    increase = np.asarray(run.after) / eps - 1
    lam_eta = np.asarray(run.lam_eta)
    # y' − y* = −λη d + ε(1 − λη)(I − 2ηK)d, ‖d‖ = 1, ‖I − 2ηK‖ ≤ 1
    assert np.all(increase >= lam_eta / eps - 2 - 1e-9) and np.all(increase <= lam_eta / eps)
    assert np.all(np.asarray(run.flow_rate) <= -np.asarray(run.kernel_term) + 1e-15)
