"""Sun & Raskutti 2026 kernel theory (``ntsim.theory.early_stopping``) against oracles.

Oracles: autodiff Jacobians (``jax.jacrev``, not ``ntsim.core``'s NTK), ``numpy`` matrix
powers and eigendecompositions, direct GD iteration, ``ntsim.core.kernel_gd_predictions``
and ``kernel_ridge_regression`` (an independent implementation of the same dynamics),
scikit-learn's ``KernelRidge``, plain-Python loops, and Monte Carlo with a z-score bound.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from ntsim.core import critical_radius, kernel_gd_predictions, kernel_ridge_regression, mlp
from ntsim.theory import early_stopping as es


def _kernel(rng, rows, features=None):
    """A full-rank PSD Gram matrix with a decaying spectrum."""
    features = features or 2 * rows
    phi = rng.standard_normal((rows, features)) * np.arange(1, features + 1) ** -0.75
    return phi @ phi.T


def test_empirical_kernel_matrix_is_jjt_over_n_width(x64, key):
    width, n, d = 16, 7, 3
    model = mlp((width,), activation="tanh", parameterization="standard", b_std=0.1)
    x = jax.random.normal(key, (n, d))
    params = model.init(key, x[0])
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    jac = jax.vmap(lambda xi: jax.jacrev(lambda p: model.apply(unravel(p), xi)[0])(flat))(x)
    jac = np.asarray(jac)
    k = np.asarray(es.empirical_kernel_matrix(jac @ jac.T, width=width))
    np.testing.assert_allclose(k, jac @ jac.T / (n * width), rtol=1e-13)
    np.testing.assert_allclose(k, k.T, atol=0)
    assert np.linalg.eigvalsh(k).min() > -1e-14
    np.testing.assert_allclose(np.trace(k), np.sum(jac**2) / (n * width), rtol=1e-12)
    with pytest.raises(ValueError, match="width"):
        es.empirical_kernel_matrix(jac @ jac.T, width=0.0)


def test_kernel_gd_matches_iteration_and_core(x64):
    rng = np.random.default_rng(0)
    n, m, steps = 10, 4, 60
    gram = _kernel(rng, n + m)
    y, f_pt = rng.standard_normal(n), rng.standard_normal(n + m)
    alpha = 1 / np.linalg.eigvalsh(gram[:n, :n] / n).max()
    pred = es.pretrained_kernel_gd(
        gram[:n, :n],
        y,
        f_pt[:n],
        steps=np.arange(steps + 1),
        kernel_test_train=gram[n:, :n],
        f_pt_test=f_pt[n:],
    )  # default step: min(1, 1/λ̂_max) = alpha here (λ̂_max > 1 not guaranteed: check)
    alpha_used = min(1.0, alpha)
    f, path = f_pt.copy(), []
    for _ in range(steps + 1):
        path.append(f.copy())
        f = f - alpha_used / n * gram[:, :n] @ (f[:n] - y)
    path = np.array(path)
    np.testing.assert_allclose(pred.train, path[:, :n], atol=1e-12)
    np.testing.assert_allclose(pred.test, path[:, n:], atol=1e-12)
    core = kernel_gd_predictions(
        gram[:n, :n] / n,
        y,
        f_pt[:n],
        learning_rate=alpha_used,
        loss_scale=0.5,
        steps=np.arange(steps + 1),
        k_test_train=gram[n:, :n] / n,
        f0_test=f_pt[n:],
    )
    np.testing.assert_allclose(pred.test, core.test, atol=1e-12)
    residual = es.kernel_gd_residuals(gram[:n, :n] / n, f_pt[:n] - y, alpha_used, 17)
    power = np.linalg.matrix_power(np.eye(n) - alpha_used * gram[:n, :n] / n, 17)
    np.testing.assert_allclose(residual, power @ (f_pt[:n] - y), atol=1e-13)


def test_pretrained_kernel_gd_on_singular_kernel_uses_the_limit(x64):
    rng = np.random.default_rng(1)
    phi = rng.standard_normal((6, 3))  # rank 3 on 6 points
    gram, y = phi @ phi.T, rng.standard_normal(6)
    k_test = rng.standard_normal((2, 3)) @ phi.T
    ours = es.pretrained_kernel_gd(gram, y, step_size=0.5, steps=9, kernel_test_train=k_test)
    core = kernel_gd_predictions(
        gram / 6, y, learning_rate=0.5, loss_scale=0.5, steps=9, k_test_train=k_test / 6
    )
    np.testing.assert_allclose(ours.train, core.train, atol=1e-12)
    np.testing.assert_allclose(ours.test, core.test, atol=1e-12)


def test_bias_and_variance_closed_forms(x64):
    rng = np.random.default_rng(2)
    n = 8
    k = _kernel(rng, n) / n
    lam = np.linalg.eigvalsh(k)
    alpha, taus = 1 / lam.max(), np.array([0, 1, 5, 40])
    gap, sigma = rng.standard_normal(n), 0.7
    powers = [np.linalg.matrix_power(np.eye(n) - alpha * k, t) for t in taus]
    bias = [np.mean((p @ gap) ** 2) for p in powers]
    variance = [sigma**2 * np.trace((np.eye(n) - p) @ (np.eye(n) - p).T) / n for p in powers]
    np.testing.assert_allclose(es.squared_bias(k, gap, alpha, taus), bias, rtol=1e-12)
    np.testing.assert_allclose(
        es.expected_variance(lam, alpha, taus, sigma), variance, rtol=1e-12, atol=1e-16
    )
    # Monte Carlo: mean of V_τ over Gaussian noise within 5 standard errors of E V_τ
    draws = 20_000
    noise = sigma * rng.standard_normal((draws, n))
    v = np.mean((noise @ (np.eye(n) - powers[2]).T) ** 2, axis=1)
    assert abs(v.mean() - variance[2]) < 5 * v.std(ddof=1) / np.sqrt(draws)


def test_bias_and_variance_bounds_hold_and_are_attained_in_the_limit(x64):
    rng = np.random.default_rng(3)
    n = 12
    gram = _kernel(rng, n)
    lam = np.linalg.eigvalsh(gram / n)
    alpha = 1 / lam.max()
    coef = rng.standard_normal(n)
    taus = np.unique(np.geomspace(1, 1e5, 25).round())
    bias = es.squared_bias(gram / n, gram @ coef, alpha, taus)
    assert np.all(bias <= es.bias_bound(coef @ gram @ coef, alpha * taus))
    var = es.expected_variance(lam, alpha, taus, 1.3)
    bound = es.variance_bound(lam, alpha * taus, 1.3)
    assert np.all(var <= bound * (1 + 1e-12))
    expected_bound = 1.3**2 * np.array(
        [
            np.mean(np.minimum(1, a * t * lam))
            for a, t in zip(np.full(taus.size, alpha), taus, strict=True)
        ]
    )
    np.testing.assert_allclose(bound, expected_bound, rtol=1e-12)


def test_gd_shrinkage_edge_cases(x64):
    lam = np.array([1.0, 1e-12, 0.0])
    s = np.asarray(es.gd_shrinkage(lam, 1.0, np.array([0, 1, 1000])))
    np.testing.assert_array_equal(s[0], 0.0)
    np.testing.assert_array_equal(s[:, 2], 0.0)
    np.testing.assert_allclose(s[1:, 0], 1.0)  # αλ = 1: one step fits the direction exactly
    # 1 − (1 − ε)^1000 = 1000ε − C(1000, 2)ε² + …, ε = 1e-12
    np.testing.assert_allclose(s[2, 1], 1000e-12 - 499_500e-24, rtol=1e-12)
    with pytest.raises(ValueError, match="step_size"):
        es.gd_shrinkage(lam, 1.5, 3)
    with pytest.raises(ValueError, match="steps"):
        es.gd_shrinkage(lam, 0.5, 2.5)


def test_critical_radius_exponents_and_stopping_time(x64):
    rng = np.random.default_rng(4)
    lam = np.sort(np.linalg.eigvalsh(_kernel(rng, 30) / 30))
    sigma, c_h = 0.4, 2.5
    printed = es.empirical_critical_radius_printed(lam, sigma, c_h)
    corrected = es.empirical_critical_radius_corrected(lam, sigma, c_h)
    np.testing.assert_allclose(printed, critical_radius(lam, c_h**2 / (2 * np.e * sigma)))
    np.testing.assert_allclose(corrected, critical_radius(lam, c_h / (2 * np.e * sigma)))
    np.testing.assert_allclose(  # both agree at C_H = 1
        es.empirical_critical_radius_printed(lam, sigma), es.empirical_critical_radius(lam, sigma)
    )
    alpha = 0.9 / lam.max()
    t_hat = int(es.raskutti_stopping_time(lam, np.full(50_000, alpha), sigma, c_h))
    assert t_hat == int(np.floor(1 / (alpha * float(corrected) ** 2)))
    np.testing.assert_allclose(es.guarantee_bound(corrected, c_h), 12 * c_h**2 * corrected**2)


def test_optimal_stopping_time_against_brute_force(x64):
    rng = np.random.default_rng(5)
    for _ in range(20):
        steps = rng.uniform(0.1, 1.0, 200)
        drift = np.cumsum(rng.exponential(0.01, 200))
        constant, max_time = rng.uniform(0.5, 5), int(rng.integers(1, 201))
        objective = constant / np.cumsum(steps) + drift
        expected = int(np.argmin(objective[:max_time])) + 1
        assert int(es.optimal_stopping_time(steps, constant, drift, max_time)) == expected
    # no drift: the bound C/η_τ decreases, so T̂_op = T̂_max; the printed argmax stops at 1
    assert int(es.optimal_stopping_time(np.ones(50), 2.0, np.zeros(50), 37)) == 37
    assert int(es.optimal_stopping_time_printed(np.ones(50), 2.0, np.zeros(50), 37)) == 1


def _patience_loop(losses, patience):
    best, best_step, wait = losses[0], 0, 0
    for t in range(1, len(losses)):
        if losses[t] < best:
            best, best_step, wait = losses[t], t, 0
        else:
            wait += 1
            if wait >= patience:
                return best_step, t
    return best_step, len(losses) - 1


def test_patience_stopping_matches_a_plain_loop():
    rng = np.random.default_rng(6)
    for _ in range(30):
        steps = np.arange(80)
        losses = (steps - rng.uniform(10, 70)) ** 2 / 500 + rng.uniform(0, 0.3, 80)
        patience = int(rng.integers(1, 8))
        got = tuple(int(v) for v in es.patience_stopping(losses, patience))
        assert got == _patience_loop(losses, patience)


def test_holdout_early_stopping_losses_and_kept_model(x64):
    rng = np.random.default_rng(7)
    n_tr, n_val = 14, 5
    gram = _kernel(rng, n_tr + n_val + 3)
    y = rng.standard_normal(n_tr + n_val)
    k_tr, k_val, k_eval = gram[:n_tr, :n_tr], gram[n_tr : n_tr + n_val, :n_tr], gram[:, :n_tr]
    result = es.holdout_early_stopping(
        k_tr, k_val, y[:n_tr], y[n_tr:], max_steps=300, patience=4, eval_every=3,
        kernel_eval_train=k_eval,
    )  # fmt: skip
    alpha = min(1.0, 1 / np.linalg.eigvalsh(k_tr / n_tr).max())
    evaluated = np.arange(0, 301, 3)
    core = kernel_gd_predictions(
        k_tr / n_tr, y[:n_tr], learning_rate=alpha, loss_scale=0.5, steps=evaluated,
        k_test_train=gram[n_tr:, :n_tr] / n_tr,
    )  # fmt: skip
    losses = np.mean((np.asarray(core.test)[:, :n_val] - y[n_tr:]) ** 2, axis=1)
    np.testing.assert_allclose(result.validation_losses, losses, rtol=1e-10)
    kept, stopped = _patience_loop(losses, 4)
    assert int(result.step) == evaluated[kept] and int(result.stopped_at) == evaluated[stopped]
    kept_model = kernel_gd_predictions(
        k_tr / n_tr, y[:n_tr], learning_rate=alpha, loss_scale=0.5, steps=int(result.step),
        k_test_train=k_eval / n_tr,
    ).test  # fmt: skip
    np.testing.assert_allclose(result.predictions, kept_model, atol=1e-12)


def test_krr_shrinkage_is_kernel_ridge_regression(x64):
    rng = np.random.default_rng(8)
    n = 15
    gram = _kernel(rng, n)
    y, ridge = rng.standard_normal(n), 0.03
    lam, q = np.linalg.eigh(gram / n)
    ours = q @ (np.asarray(es.krr_shrinkage(lam, ridge)) * (q.T @ y))
    # (1/N)Σ(Y − f)² + λ‖f‖²_H  ⇔  sklearn's Σ(y − f)² + (Nλ)‖f‖²_H
    sk = KernelRidge(alpha=n * ridge, kernel="precomputed").fit(gram, y).predict(gram)
    np.testing.assert_allclose(ours, sk, atol=1e-10)
    core = kernel_ridge_regression(gram / n, y, ridge=ridge).train
    np.testing.assert_allclose(ours, core, atol=1e-10)


def test_shrinkage_sandwich_corrected_and_printed(x64):
    lam = np.geomspace(1e-6, 1.0, 40)
    steps = np.unique(np.geomspace(1, 1e6, 40).round())
    good = es.shrinkage_sandwich(lam, 1.0, steps)
    assert np.all(good.krr <= good.gd + 1e-15) and np.all(good.gd <= 2 * good.krr + 1e-15)
    bad = es.shrinkage_sandwich(lam, 1.0, steps, printed=True)
    np.testing.assert_allclose(bad.krr, lam / (lam + steps[:, None]))
    assert np.any(bad.gd > 2 * bad.krr)  # long runs: GD fits, ridge λ = η_τ shrinks to 0
    early = es.shrinkage_sandwich(lam, 0.01, np.array([1, 2]), printed=True)
    assert np.all(early.gd < early.krr)  # η_τ < 1: ridge fits more than GD has
    np.testing.assert_allclose(es.ridge_for_steps_corrected(4.0), 0.25)
    np.testing.assert_allclose(es.ridge_for_steps_printed(4.0), 4.0)


def test_sobolev_target_norm_and_kernel(x64):
    knots = np.array([0.0, 0.5, 1.0])
    gram = np.asarray(es.sobolev_kernel(knots))
    coef = np.linalg.solve(gram, np.asarray(es.sobolev_target(knots)))
    # the minimum-norm interpolant is piecewise linear through the knots = f* on [0, 1]
    grid = np.linspace(0, 1, 101)
    interp = np.asarray(es.sobolev_kernel(grid, knots)) @ coef
    np.testing.assert_allclose(interp, es.sobolev_target(grid), atol=1e-12)
    np.testing.assert_allclose(coef @ gram @ coef, es.SOBOLEV_TARGET_RKHS_NORM**2, rtol=1e-12)
    # ⟨f, f⟩_H = f(0)² + ∫ f'² for a random kernel expansion (reproducing property)
    rng = np.random.default_rng(9)
    centres, a = rng.uniform(0, 1, 6), rng.standard_normal(6)
    fine = np.linspace(0, 1, 200_001)
    f = np.asarray(es.sobolev_kernel(fine, centres)) @ a
    integral = np.sum(np.diff(f) ** 2 / np.diff(fine))
    expected = a @ np.asarray(es.sobolev_kernel(centres)) @ a
    np.testing.assert_allclose(f[0] ** 2 + integral, expected, rtol=1e-4)


def test_sobolev_benchmark_fields_match_direct_computation(x64, key):
    n = 60
    out = es.sobolev_benchmark(key, n, max_steps=400, eval_every=5)
    x, y = es.sobolev_sample(key, n)
    target = np.asarray(es.sobolev_target(x))
    gram = np.asarray(es.sobolev_kernel(x))
    lam = np.linalg.eigvalsh(gram / n)
    alpha = min(1.0, 1 / lam.max())
    rho = es.empirical_critical_radius(lam, es.SOBOLEV_NOISE_STD, es.SOBOLEV_TARGET_RKHS_NORM)
    np.testing.assert_allclose(out.critical_radius, rho, rtol=1e-12)
    t_hat = int(es.raskutti_stopping_time(lam, np.full(10_000, alpha), 0.5, np.sqrt(17 / 16)))
    assert int(out.stopping_time) == t_hat
    path = kernel_gd_predictions(
        gram / n, y, learning_rate=alpha, loss_scale=0.5, steps=np.arange(401)
    ).train
    errors = np.mean((np.asarray(path) - target) ** 2, axis=1)
    np.testing.assert_allclose(out.stopping_rule, errors[t_hat], rtol=1e-9)
    np.testing.assert_allclose(out.oracle, errors.min(), rtol=1e-9)
    assert int(out.oracle_step) == int(np.argmin(errors))
    ridge = kernel_ridge_regression(gram / n, y, ridge=1 / (alpha * t_hat)).train
    np.testing.assert_allclose(out.ridge, np.mean((np.asarray(ridge) - target) ** 2), rtol=1e-9)
    assert out.stopping_rule <= out.guarantee
    n_tr = n - 12
    held = es.holdout_early_stopping(
        gram[:n_tr, :n_tr], gram[n_tr:, :n_tr], y[:n_tr], y[n_tr:], max_steps=400, patience=5,
        eval_every=5, kernel_eval_train=gram[:, :n_tr],
    )  # fmt: skip
    assert int(out.holdout_step) == int(held.step)
    np.testing.assert_allclose(out.holdout, np.mean((held.predictions - target) ** 2), rtol=1e-9)
    noise = np.asarray(y) - target  # the realised noise along f*, standardised
    z = noise @ target / (es.SOBOLEV_NOISE_STD * np.linalg.norm(target))
    np.testing.assert_allclose(out.noise_z, z, rtol=1e-9)
    skipped = es.sobolev_benchmark(key, n, holdout_fraction=None, max_steps=10)
    assert np.isnan(float(skipped.holdout)) and int(skipped.holdout_step) == -1
    with pytest.raises(ValueError, match="holdout_fraction"):
        es.sobolev_benchmark(key, n, holdout_fraction=1.5)


def test_vmap_over_instances(x64, key):
    draws = jax.jit(
        jax.vmap(lambda k: es.sobolev_benchmark(k, 30, holdout_fraction=None, max_steps=50))
    )(jax.random.split(key, 4))
    single = es.sobolev_benchmark(jax.random.split(key, 4)[2], 30, holdout_fraction=None,
                                  max_steps=50)  # fmt: skip
    np.testing.assert_allclose(draws.stopping_rule[2], single.stopping_rule, rtol=1e-12)
    assert jnp.all(draws.oracle <= draws.stopping_rule)
