"""Rahimi Afzal et al. 2025 (``ntsim.theory.linearization``) against independent oracles.

Oracles: finite differences, numpy/scipy linear algebra (``expm``, ``solve``, ``eigvalsh``),
``ntsim.core.kernel_gd_predictions`` / ``kernel_ridge_regression`` (closed forms of the same
linearised dynamics), diffrax flows vs eigen closed forms, and plain-Python GD loops.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from jax.flatten_util import ravel_pytree

from ntsim.core import (
    gradient_flow,
    kernel_gd_predictions,
    kernel_ridge_regression,
    linear,
    linearize,
    mlp,
    mse_loss,
)
from ntsim.theory import linearization as lz


def _setup(key, n=6, d=3, width=12, offset=0.0):
    model = mlp((width,), activation="tanh", parameterization="ntk", b_std=0.3)
    kx, ky, kp = jax.random.split(key, 3)
    x = jax.random.normal(kx, (n, d))
    p0 = model.init(kp, x[0])
    y = jnp.sign(jax.random.normal(ky, (n,))) + offset
    return model, x, y, p0


def _kernel(apply, p, x):
    jac = np.asarray(lz.flat_jacobian(apply, p, x))
    return jac, jac @ jac.T


# ----------------------------------------------------------------------------- Thm 1


def test_thm1_identity_jvp_formula_and_finite_differences(x64, key):
    model, x, y, p0 = _setup(key)
    flat0, unravel = ravel_pytree(p0)
    theta = unravel(flat0 + 0.3 * jax.random.normal(jax.random.fold_in(key, 7), flat0.shape))
    lam = 2.5
    ident = lz.thm1_identity(model.apply, theta, p0, x, y, lam)
    np.testing.assert_allclose(ident.lhs, ident.rhs, rtol=1e-11)
    np.testing.assert_allclose(ident.dy_jvp, ident.dy_formula, rtol=1e-11, atol=1e-13)
    assert float(ident.kernel_term) <= 0
    # Independent oracle: central difference of ½‖y − y*‖² along θ̇ = −∇R̃ − λ(θ − θ_0).
    loss = lz.squared_loss(model.apply, x, y)
    flat = ravel_pytree(theta)[0]
    velocity = -ravel_pytree(jax.grad(loss)(theta))[0] - lam * (flat - flat0)
    h = 1e-5
    half = lambda v: 0.5 * float(loss(unravel(v)))  # noqa: E731
    fd = (half(flat + h * velocity) - half(flat - h * velocity)) / (2 * h)
    assert float(ident.lhs) == pytest.approx(fd, rel=1e-7)


# ------------------------------------------------------------- dynamics and Lemma 3


def test_linearised_finetune_equals_kernel_gd_and_numpy_loop(x64, key):
    model, x, y, p0 = _setup(key)
    jac, k = _kernel(model.apply, p0, x)
    f0 = np.asarray(lz.outputs(model.apply, p0, x))
    eta, steps = 0.2 / np.linalg.eigvalsh(k)[-1], 30
    run = lz.finetune(
        model.apply, p0, x, y, proximal=0.0, learning_rate=eta, num_steps=steps, linearised=True
    )
    # R̃ = Σ(f − y)² is loss_scale c = 1 in ntsim.core's closed form.
    closed = kernel_gd_predictions(
        k, y, f0, learning_rate=eta, loss_scale=1.0, steps=np.arange(steps + 1)
    )
    np.testing.assert_allclose(run.train, closed.train, rtol=1e-10, atol=1e-12)
    lam = 3.0
    run = lz.finetune(
        model.apply, p0, x, y, proximal=lam, learning_rate=eta, num_steps=steps, linearised=True
    )
    u, ytil = np.zeros(jac.shape[1]), np.asarray(y) - f0
    for _ in range(steps):
        u = (1 - lam * eta) * (u - 2 * eta * jac.T @ (jac @ u - ytil))
    np.testing.assert_allclose(run.train[-1], f0 + jac @ u, rtol=1e-10)
    np.testing.assert_allclose(run.distance[-1], np.linalg.norm(u), rtol=1e-10)
    np.testing.assert_allclose(run.times, eta * np.arange(steps + 1), rtol=1e-14)
    np.testing.assert_allclose(run.jac_norm, np.sqrt(np.linalg.eigvalsh(k)[-1]), rtol=1e-10)
    np.testing.assert_allclose(run.grad_lip, 0.0, atol=1e-12)  # constant J (up to round-off)


def test_network_run_records_path_lipschitz_estimates(x64, key):
    model, x, y, p0 = _setup(key)
    _, k = _kernel(model.apply, p0, x)
    eta = 0.1 / np.linalg.eigvalsh(k)[-1]
    run = lz.finetune(
        model.apply, p0, x, y, proximal=1.0, learning_rate=eta, num_steps=40, record_every=20
    )
    jac0 = np.asarray(lz.flat_jacobian(model.apply, p0, x))
    jac_t = np.asarray(lz.flat_jacobian(model.apply, run.params, x))
    dist = np.linalg.norm(ravel_pytree(run.params)[0] - ravel_pytree(p0)[0])
    np.testing.assert_allclose(run.distance[-1], dist, rtol=1e-12)
    np.testing.assert_allclose(run.jac_norm[-1], np.linalg.norm(jac_t, 2), rtol=1e-10)
    np.testing.assert_allclose(run.grad_lip[-1], np.linalg.norm(jac_t - jac0, 2) / dist, rtol=1e-10)
    assert float(run.grad_lip[0]) == 0.0
    cheap = lz.finetune(
        model.apply,
        p0,
        x,
        y,
        proximal=1.0,
        learning_rate=eta,
        num_steps=40,
        record_every=20,
        record_jacobian=False,
    )
    assert cheap.jac_norm is None and cheap.grad_lip is None
    np.testing.assert_allclose(cheap.train, run.train, rtol=1e-14)


def test_lemma3_gd_to_flow_gap_is_first_order(x64, key):
    model, x, y, p0 = _setup(key)
    _, k = _kernel(model.apply, p0, x)
    lam, t_end = 1.5, 1.0
    eta = 0.05 / np.linalg.eigvalsh(k)[-1]
    steps = int(round(t_end / eta))
    eta = t_end / steps
    flow = lz.flow_path(model.apply, p0, x, y, proximal=lam, times=jnp.array([0.0, t_end]))
    target = ravel_pytree(jax.tree.map(lambda a: a[-1], flow))[0]
    gaps = []
    for factor in (1, 2, 4):
        run = lz.finetune(
            model.apply,
            p0,
            x,
            y,
            proximal=lam,
            learning_rate=eta / factor,
            num_steps=steps * factor,
        )
        gaps.append(float(jnp.linalg.norm(ravel_pytree(run.params)[0] - target)))
    slope = np.polyfit(np.log([1, 0.5, 0.25]), np.log(gaps), 1)[0]
    assert slope == pytest.approx(1.0, abs=0.05)  # O(η): ≈ halves when η halves


def test_selective_scheme_regularises_rarely_and_training_error_decreases(x64, key):
    model, x, y, p0 = _setup(key)
    _, k = _kernel(model.apply, p0, x)
    eta = 0.1 / np.linalg.eigvalsh(k)[-1]
    run = lz.finetune(
        model.apply, p0, x, y, proximal=5.0, learning_rate=eta, num_steps=300, selective=True
    )
    res = np.linalg.norm(np.asarray(run.train) - np.asarray(y), axis=1)
    assert np.all(np.diff(res) <= 1e-12)
    # Derivation: near θ_0, u ≈ −t∇R̃ᵀ so ∇R̃·u < 0 and λ_t = 0 after the first step.
    assert float(run.strengths[0]) == 5.0 and np.all(np.asarray(run.strengths[1:20]) == 0)
    assert float(run.fraction_regularised) == pytest.approx(np.mean(np.asarray(run.strengths) > 0))
    assert np.all(np.asarray(run.inner[1:20]) < 0)


# ------------------------------------------------------------------------ Lemma 1


def test_lemma1_pair_bound_and_equality_case(x64):
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.standard_normal((5, 9)), rng.standard_normal((5, 9))
        pair = lz.lemma1_pair(a, b)
        assert float(pair.kernel_gap) <= float(pair.bound) * (1 + 1e-12)
        np.testing.assert_allclose(
            pair.kernel_gap, np.linalg.norm(a @ a.T - b @ b.T, 2), rtol=1e-10
        )
    a = rng.standard_normal((4, 7))
    pair = lz.lemma1_pair(a, np.zeros_like(a))  # ‖aaᵀ‖ = ‖a‖² = (‖a‖ + 0)‖a‖
    np.testing.assert_allclose(pair.kernel_gap, pair.bound, rtol=1e-10)
    with pytest.raises(ValueError, match="same shape"):
        lz.lemma1_pair(a, a[:, :3])


def test_algorithm1_on_a_linear_model_is_exact(x64, key):
    x = jax.random.normal(key, (5, 4))
    model = linear()
    p0 = {"w": jax.random.normal(jax.random.fold_in(key, 1), (4,))}
    samples = lz.sample_ball(jax.random.fold_in(key, 2), p0, 0.7, 16)
    np.testing.assert_allclose(jnp.linalg.norm(samples["w"] - p0["w"], axis=1), 0.7, rtol=1e-12)
    est = lz.estimate_lipschitz(key, model.apply, p0, x, radius=0.7, num_samples=8)
    np.testing.assert_allclose(est.lip_f_max, np.linalg.norm(np.asarray(x), 2), rtol=1e-10)
    np.testing.assert_allclose(est.lip_f_avg, est.lip_f_max, rtol=1e-10)
    assert float(est.lip_grad_max) < 1e-12  # J is constant
    assert float(est.sphere_error) < 1e-12  # its samples lie on the 0.7-sphere


def test_algorithm1_reports_samples_off_its_sphere(x64, key, monkeypatch):
    """A sampler drawing at 0.5r: the estimate's sphere_error measures |0.5 − 1| = 0.5."""
    import ntsim.theory.linearization._lipschitz as lipschitz

    source = lipschitz.sample_ball
    monkeypatch.setattr(lipschitz, "sample_ball", lambda k, p, r, m: source(k, p, 0.5 * r, m))
    p0 = {"w": jax.random.normal(jax.random.fold_in(key, 1), (4,))}
    x = jax.random.normal(key, (5, 4))
    est = lz.estimate_lipschitz(key, linear().apply, p0, x, radius=0.7, num_samples=8)
    np.testing.assert_allclose(est.sphere_error, 0.5, rtol=1e-12)


def test_algorithm1_gradient_lipschitz_of_a_quadratic(x64, key):
    """f(θ, x) = ½ x_0 ‖θ‖²: J_θ = x_0 θᵀ, so ‖J_θ − J_θ0‖/‖θ − θ0‖ = ‖x_0‖ exactly."""
    x = jax.random.normal(key, (5, 1))
    apply = lambda p, xi: 0.5 * xi[0] * jnp.sum(p**2)  # noqa: E731
    p0 = jax.random.normal(jax.random.fold_in(key, 1), (3,))
    est = lz.estimate_lipschitz(key, apply, p0, x, radius=0.4, num_samples=6)
    np.testing.assert_allclose(est.lip_grad_max, np.linalg.norm(np.asarray(x)), rtol=1e-10)
    np.testing.assert_allclose(est.lip_grad_avg, est.lip_grad_max, rtol=1e-10)


# --------------------------------------------------------------------- Thms 2 – 4


def test_thm2_integral_against_quadrature(x64):
    eta = 0.01
    lam = np.where(np.random.default_rng(1).random(300) < 0.3, 4.0, 0.0)
    integral = np.asarray(lz.thm2_integral(lam, eta))
    big = np.concatenate([[0.0], np.cumsum(lam * eta)])  # Λ at the grid points (piecewise linear)
    fine = 200
    for k in (1, 50, 300):
        s = np.linspace(0, k * eta, k * fine + 1)
        lam_s = np.interp(s, np.arange(k + 1) * eta, big[: k + 1])
        vals = np.exp(-(big[k] - lam_s))
        assert integral[k] == pytest.approx(np.trapezoid(vals, s), rel=1e-6)
    np.testing.assert_allclose(
        lz.thm2_integral(np.full(50, 2.0), eta),
        (1 - np.exp(-2 * eta * np.arange(51))) / 2,
        rtol=1e-12,
        atol=1e-15,
    )
    np.testing.assert_allclose(lz.thm2_integral(np.zeros(50), eta), eta * np.arange(51), rtol=1e-12)
    np.testing.assert_allclose(lz.thm2_bound_constant(1.5, 2.0, 0.0, 3.0), 2 * 1.5 * 2 * 3.0)


def test_thm3_bound_limits(x64):
    lip, lip_grad, r0 = 1.3, 0.7, 2.0
    t = np.array([0.5, 2.0, 40.0])
    for lam in (0.3, 4.0):
        b = 2 * lip**2 * r0 * (4 / lam * lip_grad * r0 + 1)
        np.testing.assert_allclose(lz.thm3_b(lip, lip_grad, r0, lam), b)
        np.testing.assert_allclose(
            lz.thm3_bound(lip, lip_grad, r0, lam, t),
            b * (t - (1 - np.exp(-lam * t)) / lam),
            rtol=1e-12,
        )
    # λ → 0: 4 L² L_∇ r0² t² (finite); small λt: b λ t²/2.
    np.testing.assert_allclose(
        lz.thm3_bound(lip, lip_grad, r0, 0.0, t), 4 * lip**2 * lip_grad * r0**2 * t**2
    )
    np.testing.assert_allclose(
        lz.thm3_bound(lip, lip_grad, r0, 1e-7, t[:2]),
        lz.thm3_bound(lip, lip_grad, r0, 0.0, t[:2]),
        rtol=1e-5,
    )


def test_thm4_threshold_stay_time_and_simplified(x64):
    lip, r0, radius = 2.0, 0.5, 0.3
    lam_o = float(lz.thm4_lambda_o(r0, lip, radius))
    assert lam_o == pytest.approx(2 * r0 * lip / radius)
    assert float(lz.thm4_lambda_o_printed(r0**2, lip, radius)) == pytest.approx(r0 * lam_o)
    for lam in (0.0, 0.2 * lam_o, 0.9 * lam_o):
        t_stay = float(lz.thm4_stay_time(lam, lam_o))
        # At the guaranteed stay time, Thm 2's constant-λ bound reaches r exactly.
        assert float(lz.thm2_bound_constant(lip, r0, lam, t_stay)) == pytest.approx(
            radius, rel=1e-10
        )
    assert np.isinf(lz.thm4_stay_time(lam_o, lam_o))
    # For λ ≥ λ_o the simplified bound dominates the Thm 3 bound at every t.
    t = np.linspace(0.01, 10, 50)
    for lam in (lam_o, 3 * lam_o):
        assert np.all(
            lz.thm4_simplified_bound(lip, 0.8, r0, radius, t) >= lz.thm3_bound(lip, 0.8, r0, lam, t)
        )


# ------------------------------------------------------------------ KRR reduction


def test_residual_path_against_expm_and_flow(x64, key):
    model, x, y, p0 = _setup(key, offset=0.5)
    jac, k = _kernel(model.apply, p0, x)
    f0 = np.asarray(lz.outputs(model.apply, p0, x))
    r0, lam = f0 - np.asarray(y), 0.8
    times = np.array([0.0, 0.3, 2.0, 10.0])
    n = len(r0)
    a = 2 * k + lam * np.eye(n)
    expected = np.stack(
        [
            (np.eye(n) - 2 * k @ np.linalg.solve(a, np.eye(n) - scipy.linalg.expm(-a * t))) @ r0
            for t in times
        ]
    )
    path = np.asarray(lz.residual_path(k, r0, lam, times))
    np.testing.assert_allclose(path, expected, rtol=1e-9, atol=1e-12)
    flow = lz.flow_path(
        model.apply, p0, x, y, proximal=lam, times=jnp.asarray(times), linearised=True
    )
    lin = linearize(model.apply, p0)
    flow_res = np.stack(
        [
            np.asarray(lz.outputs(lin, jax.tree.map(lambda v, i=i: v[i], flow), x)) - np.asarray(y)
            for i in range(len(times))
        ]
    )
    np.testing.assert_allclose(flow_res, path, rtol=1e-7, atol=1e-9)
    # Each eigen-coordinate moves monotonically from r0_i to r0_i σ/(μ_i + σ).
    evals, evecs = np.linalg.eigh(k)
    coords = np.asarray(lz.residual_path(k, r0, lam, np.linspace(0, 30, 200))) @ evecs
    assert np.all(np.diff(np.abs(coords), axis=0) <= 1e-13)
    np.testing.assert_allclose(
        coords[-1], (evecs.T @ r0) * (lam / 2) / (evals + lam / 2), rtol=1e-8
    )


@pytest.mark.parametrize("convention", ["sum", "mean"])
def test_krr_reduction_linearised_flow_converges_to_krr(x64, key, convention):
    model, x, y, p0 = _setup(key, offset=0.5)
    x_test = jax.random.normal(jax.random.fold_in(key, 9), (4, 3))
    jac, k = _kernel(model.apply, p0, x)
    n, lam = len(y), 0.6
    c = 1.0 if convention == "sum" else 1.0 / n
    lin = linearize(model.apply, p0)
    params = gradient_flow(
        mse_loss(lin, x, y, loss_scale=c),
        p0,
        t1=400.0,
        save_times=jnp.array([400.0]),
        proximal=lam,
        rtol=1e-11,
        atol=1e-11,
    )
    params = jax.tree.map(lambda v: v[0], params)
    sigma = float(lz.ridge_from_proximal(lam, convention=convention, num_examples=n))
    assert sigma == pytest.approx(lam / (2 * c))
    f0 = np.asarray(lz.outputs(model.apply, p0, x))
    ytil = np.asarray(y) - f0
    u = ravel_pytree(params)[0] - ravel_pytree(p0)[0]
    np.testing.assert_allclose(
        u, jac.T @ np.linalg.solve(k + sigma * np.eye(n), ytil), rtol=1e-7, atol=1e-9
    )
    np.testing.assert_allclose(
        np.linalg.norm(u), lz.weight_distance_limit(k, ytil, sigma), rtol=1e-7
    )
    jac_test = np.asarray(lz.flat_jacobian(model.apply, p0, x_test))
    krr = kernel_ridge_regression(
        k,
        y,
        ridge=sigma,
        k_test_train=jac_test @ jac.T,
        f0_train=f0,
        f0_test=lz.outputs(model.apply, p0, x_test),
    )
    np.testing.assert_allclose(lz.outputs(lin, params, x_test), krr.test, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(lz.outputs(lin, params, x), krr.train, rtol=1e-7, atol=1e-9)
    if convention == "mean":  # the slides' σ = λ/2 with the mean loss is off by the factor n
        printed = float(lz.ridge_from_proximal_printed(lam))
        wrong = jac.T @ np.linalg.solve(k + printed * np.eye(n), ytil)
        assert np.linalg.norm(wrong - u) > 0.1 * np.linalg.norm(u)
    with pytest.raises(ValueError, match="convention"):
        lz.ridge_from_proximal(lam, convention="avg", num_examples=n)


def test_weight_distance_limit_decreases_in_ridge(x64):
    rng = np.random.default_rng(3)
    phi = rng.standard_normal((6, 10))
    k, ytil = phi @ phi.T, rng.standard_normal(6)
    dists = [float(lz.weight_distance_limit(k, ytil, s)) for s in (0.01, 0.1, 1.0, 10.0, 100.0)]
    assert np.all(np.diff(dists) < 0)
    direct = np.sqrt(
        ytil @ np.linalg.solve(k + np.eye(6), k @ np.linalg.solve(k + np.eye(6), ytil))
    )
    assert dists[2] == pytest.approx(direct, rel=1e-12)


# ------------------------------------------------------------------- Thms 5 – 7


def test_thm5_bounds_and_equality(x64):
    rng = np.random.default_rng(4)
    for _ in range(10):
        phi = rng.standard_normal((7, 12)) * np.arange(1, 13) ** -1.0
        k, ytil, sigma = phi @ phi.T, rng.standard_normal(7), 10 ** rng.uniform(-3, 1)
        bounds = lz.thm5_bounds(k, ytil, sigma)
        direct = np.sum((sigma * np.linalg.solve(k + sigma * np.eye(7), ytil)) ** 2)
        assert float(bounds.value) == pytest.approx(direct, rel=1e-10)
        assert float(bounds.lower) <= float(bounds.value) <= float(bounds.upper)
    k = 3.0 * np.eye(4)  # λ_min = λ_max: both bounds are equalities
    b = lz.thm5_bounds(k, np.ones(4), 2.0)
    np.testing.assert_allclose([b.lower, b.upper], b.value, rtol=1e-12)


def test_thm5_printed_fails_with_a_pretrained_offset(x64):
    rng = np.random.default_rng(5)
    phi = rng.standard_normal((5, 8))
    k, y = phi @ phi.T, rng.standard_normal(5)
    printed = lz.thm5_bounds_printed(k, y, f0=y - 0.01 * rng.standard_normal(5), ridge=1.0)
    assert float(printed.value) < float(printed.lower)  # almost-fit pretrained model


def test_thm6_bounds_weyl_and_equality(x64):
    rng = np.random.default_rng(6)
    for _ in range(10):
        a, b = rng.standard_normal((6, 9)), rng.standard_normal((6, 4))
        k, s = a @ a.T, 0.3 * b @ b.T
        t6 = lz.thm6_bounds(k, s)
        eta = np.max(
            np.abs(
                np.linalg.eigvalsh(
                    scipy.linalg.sqrtm(np.linalg.inv(k)).real
                    @ s
                    @ scipy.linalg.sqrtm(np.linalg.inv(k)).real
                )
            )
        )
        assert float(t6.eta) == pytest.approx(eta, rel=1e-8)
        assert np.all(t6.value <= t6.upper * (1 + 1e-12)) and np.all(t6.value >= t6.lower)
        assert np.all(t6.value >= t6.base * (1 - 1e-12))
    k = np.diag([1.0, 2.0, 5.0])
    t6 = lz.thm6_bounds(k, 0.25 * k)  # S = εK: η = ε and the upper bound is attained
    np.testing.assert_allclose(t6.eta, 0.25)
    np.testing.assert_allclose(t6.value, t6.upper, rtol=1e-12)


def test_thm7_bounds_and_printed_step(x64):
    rng = np.random.default_rng(7)
    seen = 0
    for _ in range(30):
        a, b = rng.standard_normal((6, 9)), rng.standard_normal((6, 3))
        k, s, ytil, sigma = a @ a.T, 0.05 * b @ b.T, rng.standard_normal(6), 0.5
        bounds, eta = lz.thm7_bounds(k, s, ytil, sigma)
        direct = np.sqrt(lz.krr_train_risk(k + s, ytil, sigma) / lz.krr_train_risk(k, ytil, sigma))
        assert float(bounds.value) == pytest.approx(float(direct), rel=1e-12)
        if float(eta) < 1:
            seen += 1
            assert float(bounds.lower) <= float(bounds.value) <= float(bounds.upper)
            step = lz.thm7_step_bounds(k, s, ytil, sigma, printed=False)
            step_printed = lz.thm7_step_bounds(k, s, ytil, sigma, printed=True)
            assert float(step.lower) <= float(step.value) <= float(step.upper)
            assert float(step_printed.upper) >= float(step.upper)
    assert seen >= 10


def test_bad_inputs_raise_naming_the_argument():
    with pytest.raises(ValueError, match="strengths"):
        lz.thm2_integral(np.array([1.0, -1.0]), 0.1)
    with pytest.raises(ValueError, match="learning_rate"):
        lz.thm2_integral(np.array([1.0]), 0.0)
    with pytest.raises(ValueError, match="proximal"):
        lz.thm3_bound(1.0, 1.0, 1.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="radius"):
        lz.thm4_lambda_o(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="lambda_o"):
        lz.thm4_stay_time(1.0, 0.0)
    with pytest.raises(ValueError, match="positive definite"):
        lz.perturbation_size(np.diag([1.0, 0.0]), np.eye(2))
    with pytest.raises(ValueError, match="symmetric"):
        lz.thm5_bounds(np.array([[1.0, 2.0], [0.0, 1.0]]), np.ones(2), 1.0)
    with pytest.raises(ValueError, match="square"):
        lz.residual_path(np.ones((2, 3)), np.ones(2), 1.0, 1.0)
    with pytest.raises(ValueError, match="scalar model"):
        lz.outputs(lambda p, x: jnp.stack([p, p]), 1.0, np.ones((2, 1)))
