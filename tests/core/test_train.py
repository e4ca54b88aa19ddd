"""Training loops: GD (``_train``) and gradient flow (``_flow``) against closed forms."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import scipy.linalg
import scipy.stats

from ntsim.core import (
    DivergenceError,
    Record,
    check_finite,
    check_learning_rate,
    combine_recorders,
    gradient_descent,
    gradient_flow,
    linear,
    mse_loss,
    record_distance,
    record_loss,
    record_params,
    record_predictions,
    tree_distance,
)

# float64 round-off after a few hundred O(1) updates of a 5-dimensional vector.
TOL64 = 1e-10


def _least_squares(n, d, seed=0):
    """Data (X, y, w0) with the Hessian 2c XᵀX of c‖Xw − y‖², c = 1/n, scaled to λ_max = 1."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    hessian = 2.0 / n * x.T @ x
    x = x / np.sqrt(np.linalg.eigvalsh(hessian).max())
    return x, rng.standard_normal(n), rng.standard_normal(d)


def _vector_apply(w, x):
    return jnp.atleast_1d(x @ w)


def _problem(x, y):
    """(loss on a raw vector w, loss on {"w": w} of ntsim's linear model, Hessian 2c XᵀX)."""
    loss = mse_loss(_vector_apply, x, y, loss_scale=1.0 / len(y))
    model_loss = mse_loss(linear().apply, x, y, loss_scale=1.0 / len(y))
    return loss, model_loss, 2.0 / len(y) * x.T @ x


def _gd_closed_form(x, y, w0, eta, steps, proximal=0.0):
    """w_t = w* + (I − η(H + λI))^t (w0 − w*) for F = (1/n)‖Xw − y‖² + (λ/2)‖w − w0‖²."""
    n, d = x.shape
    hessian = 2.0 / n * x.T @ x + proximal * np.eye(d)
    w_star = np.linalg.lstsq(hessian, 2.0 / n * x.T @ y + proximal * w0, rcond=None)[0]
    m = np.eye(d) - eta * hessian
    return np.stack([w_star + np.linalg.matrix_power(m, t) @ (w0 - w_star) for t in steps])


def _flow_closed_form(x, y, w0, eta, times, proximal=0.0):
    """w(t) = w∞ + expm(−ηt(H + λI))(w0 − w∞), the solution of ẇ = −η∇F(w)."""
    n, d = x.shape
    hessian = 2.0 / n * x.T @ x + proximal * np.eye(d)
    w_inf = np.linalg.solve(hessian, 2.0 / n * x.T @ y + proximal * w0)
    return np.stack([w_inf + scipy.linalg.expm(-eta * t * hessian) @ (w0 - w_inf) for t in times])


@pytest.mark.parametrize("num_steps", [50, 53])
def test_gd_matches_closed_form_at_recorded_steps(x64, num_steps):
    x, y, w0 = _least_squares(20, 5)
    _, model_loss, _ = _problem(x, y)
    res = gradient_descent(
        model_loss,
        {"w": jnp.asarray(w0)},
        learning_rate=0.7,
        num_steps=num_steps,
        record=Record(every=5, fn=record_params()),
    )
    np.testing.assert_array_equal(res.steps, np.arange(0, 51, 5))  # remainder unrecorded
    expected = _gd_closed_form(x, y, w0, 0.7, list(res.steps) + [num_steps])
    np.testing.assert_allclose(res.records["w"], expected[:-1], rtol=TOL64, atol=TOL64)
    np.testing.assert_allclose(res.params["w"], expected[-1], rtol=TOL64, atol=TOL64)
    assert int(res.first_nonfinite_step) == -1


def test_proximal_converges_to_ridge_toward_init(x64):
    x, y, w0 = _least_squares(5, 10)  # n < d: without the proximal term w0 would matter less
    loss, _, hessian = _problem(x, y)
    lam = 0.5
    res = gradient_descent(
        loss, jnp.asarray(w0), learning_rate=1.0 / (1.0 + lam), num_steps=600, proximal=lam
    )
    ridge = np.linalg.solve(hessian + lam * np.eye(10), 2.0 / 5 * x.T @ y + lam * w0)
    # contraction per step ≤ 1 − λ/(1 + λ) = 2/3, so 600 steps are far below round-off
    np.testing.assert_allclose(res.params, ridge, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("proximal", [0.0, 0.5])
def test_gradient_flow_matches_expm(x64, proximal):
    x, y, w0 = _least_squares(20, 5)
    loss, _, _ = _problem(x, y)
    ts = np.array([0.0, 0.5, 1.0, 2.0, 5.0])
    ws = gradient_flow(
        loss, jnp.asarray(w0), t1=5.0, save_times=ts, learning_rate=0.7, proximal=proximal
    )
    expected = _flow_closed_form(x, y, w0, 0.7, ts, proximal)
    np.testing.assert_allclose(ws, expected, atol=1e-6)


def test_gd_approaches_flow_with_error_linear_in_step_size(x64):
    x, y, w0 = _least_squares(20, 5)
    loss, _, _ = _problem(x, y)
    t = 2.0
    flow = gradient_flow(
        loss, jnp.asarray(w0), t1=t, save_times=jnp.array([t]), rtol=1e-12, atol=1e-12
    )[0]
    np.testing.assert_allclose(flow, _flow_closed_form(x, y, w0, 1.0, [t])[0], atol=1e-9)
    etas = 0.2 / 2.0 ** np.arange(4)
    errors = [
        np.linalg.norm(
            gradient_descent(
                loss, jnp.asarray(w0), learning_rate=eta, num_steps=round(t / eta)
            ).params
            - flow
        )
        for eta in etas
    ]
    fit = scipy.stats.linregress(np.log(etas), np.log(errors))
    assert 0.9 < fit.slope < 1.1, (fit.slope, errors)  # Euler's method is first order


def test_optax_sgd_equals_plain_gd_and_momentum_matches_reference(x64):
    x, y, w0 = _least_squares(20, 5)
    loss, _, hessian = _problem(x, y)
    rec = Record(every=1, fn=record_params())
    w0j = jnp.asarray(w0)
    plain = gradient_descent(loss, w0j, learning_rate=0.3, num_steps=30, record=rec)
    sgd = gradient_descent(loss, w0j, optimizer=optax.sgd(0.3), num_steps=30, record=rec)
    np.testing.assert_allclose(sgd.records, plain.records, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(
        plain.records, _gd_closed_form(x, y, w0, 0.3, range(31)), rtol=TOL64, atol=TOL64
    )
    # heavy ball (optax's trace): v ← βv + ∇F, w ← w − ηv
    heavy = gradient_descent(loss, w0j, optimizer=optax.sgd(0.3, momentum=0.9), num_steps=30)
    w, v = w0.copy(), np.zeros_like(w0)
    for _ in range(30):
        v = 0.9 * v + (hessian @ w - 2.0 / 20 * x.T @ y)
        w = w - 0.3 * v
    np.testing.assert_allclose(heavy.params, w, rtol=TOL64, atol=TOL64)


def test_vmap_and_jit_over_learning_rates_and_proximal(x64):
    x, y, w0 = _least_squares(20, 5)
    loss, _, _ = _problem(x, y)
    rec = Record(every=4, fn=combine_recorders(loss=record_loss(loss), w=record_params()))

    def run(lr, lam):
        return gradient_descent(
            loss,
            jnp.asarray(w0),
            learning_rate=lr,
            proximal=lam,
            num_steps=20,
            record=rec,
            throw=False,
        )

    lrs, lams = jnp.array([0.1, 0.5, 0.9]), jnp.array([0.0, 0.2, 1.0])
    batched = jax.vmap(run)(lrs, lams)
    jitted = jax.jit(run)
    for i in range(3):
        single = run(float(lrs[i]), float(lams[i]))
        for got in (jax.tree.map(lambda a, i=i: a[i], batched), jitted(lrs[i], lams[i])):
            np.testing.assert_allclose(got.records["w"], single.records["w"], rtol=1e-12)
            np.testing.assert_allclose(got.records["loss"], single.records["loss"], rtol=1e-12)
            np.testing.assert_allclose(got.params, single.params, rtol=1e-12)
    np.testing.assert_array_equal(batched.first_nonfinite_step, [-1, -1, -1])


def _first_nonfinite_reference(h, w0, eta, num_steps):
    """NumPy loop: first t with F(w_t) = ½ Σ h w² non-finite (same operations as the scan)."""
    w = w0.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(num_steps + 1):
            if not np.isfinite(0.5 * np.sum(h * w * w)):
                return t
            w = w - eta * (h * w)
    return -1


def test_divergence_raises_with_first_nonfinite_step(x64):
    h, w0 = np.array([1.0, 4.0]), np.array([1.0, 1.0])
    eta = 0.55  # 10% above the stability limit 2/λ_max = 0.5: |1 − ηλ_max| = 1.2
    with pytest.raises(ValueError, match=r"2 / hessian_max_eigenvalue = 0\.5\b"):
        check_learning_rate(eta, h.max())

    def loss(w):
        return 0.5 * jnp.sum(jnp.asarray(h) * w * w)

    expected = _first_nonfinite_reference(h, w0, eta, 3000)
    # analytically: the loss overflows when 2·1.2^(2t) ≳ 1.8e308, i.e. t ≈ 1943
    assert abs(expected - (np.log(0.9) + 308 * np.log(10)) / (2 * np.log(1.2))) < 2
    with pytest.raises(DivergenceError, match=rf"first at step {expected};"):
        gradient_descent(loss, jnp.asarray(w0), learning_rate=eta, num_steps=3000)
    # the final parameters count as step num_steps
    res = gradient_descent(
        loss, jnp.asarray(w0), learning_rate=eta, num_steps=expected, throw=False
    )
    assert int(res.first_nonfinite_step) == expected
    res = gradient_descent(
        loss, jnp.asarray(w0), learning_rate=eta, num_steps=expected - 1, throw=False
    )
    assert int(res.first_nonfinite_step) == -1
    # vmapped sweep: one stable and one unstable learning rate
    sweep = jax.vmap(
        lambda lr: gradient_descent(
            loss, jnp.asarray(w0), learning_rate=lr, num_steps=3000, throw=False
        )
    )(jnp.array([0.45, eta]))
    np.testing.assert_array_equal(sweep.first_nonfinite_step, [-1, expected])
    with pytest.raises(DivergenceError, match=re.escape(f"(1,): step {expected}")):
        check_finite(sweep)


def test_throw_under_jit_asks_for_throw_false():
    with pytest.raises(ValueError, match="throw=False"):
        jax.jit(
            lambda lr: (
                gradient_descent(
                    lambda w: jnp.sum(w**2), jnp.ones(2), learning_rate=lr, num_steps=3
                ).params
            )
        )(0.1)


def test_recorders_and_mse_loss_values(x64):
    x, y, w0 = _least_squares(6, 3)
    _, loss, _ = _problem(x, y)
    model = linear()
    params = {"w": jnp.asarray(w0)}
    np.testing.assert_allclose(loss(params), np.sum((x @ w0 - y) ** 2) / 6, rtol=1e-14)
    np.testing.assert_allclose(
        record_predictions(model.apply, x)(params, 0), (x @ w0)[:, None], rtol=1e-14
    )
    shifted = {"w": params["w"] + jnp.array([3.0, 0.0, 4.0])}
    assert float(record_distance(params)(shifted, 0)) == pytest.approx(5.0, rel=1e-14)
    grad = jax.grad(tree_distance)(params, params)  # zero-safe: 0, not NaN, at θ = θ0
    np.testing.assert_array_equal(grad["w"], np.zeros(3))
    # a (n, 1) target is accepted as well as (n,)
    loss2 = mse_loss(model.apply, x, y[:, None], loss_scale=1.0 / 6)
    assert float(loss2(params)) == pytest.approx(float(loss(params)), rel=1e-14)


def test_bad_arguments_raise():
    loss, w0 = (lambda w: jnp.sum(w**2)), jnp.ones(2)
    with pytest.raises(ValueError, match="proximal must be non-negative"):
        gradient_descent(loss, w0, learning_rate=0.1, num_steps=3, proximal=-0.1)
    with pytest.raises(ValueError, match="proximal must be non-negative"):
        gradient_flow(loss, w0, t1=1.0, save_times=jnp.array([1.0]), proximal=-1.0)
    with pytest.raises(ValueError, match="exactly one of learning_rate"):
        gradient_descent(loss, w0, learning_rate=0.1, optimizer=optax.sgd(0.1), num_steps=3)
    with pytest.raises(ValueError, match="exactly one of learning_rate"):
        gradient_descent(loss, w0, num_steps=3)
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        gradient_descent(loss, w0, learning_rate=-0.1, num_steps=3)
    with pytest.raises(ValueError, match="num_steps must be a non-negative integer"):
        gradient_descent(loss, w0, learning_rate=0.1, num_steps=2.5)
    with pytest.raises(ValueError, match="every must be a positive integer"):
        Record(every=0, fn=record_params())
    with pytest.raises(TypeError, match="record must be a Record"):
        gradient_descent(loss, w0, learning_rate=0.1, num_steps=3, record=5)
    for ts in ([0.5, 0.2], [0.0, 2.0], [-0.1, 0.5]):
        with pytest.raises(ValueError, match="save_times must be non-empty, strictly increasing"):
            gradient_flow(loss, w0, t1=1.0, save_times=jnp.array(ts))
    with pytest.raises(ValueError, match="same first dimension"):
        mse_loss(lambda w, x: x @ w, jnp.ones((3, 2)), jnp.ones(4), loss_scale=1.0)
    with pytest.raises(ValueError, match="loss_scale must be positive"):
        mse_loss(lambda w, x: x @ w, jnp.ones((3, 2)), jnp.ones(3), loss_scale=0.0)
    with pytest.raises(ValueError, match="hessian_max_eigenvalue must be positive"):
        check_learning_rate(0.1, 0.0)
    assert check_learning_rate(0.5, 4.0) == 0.5  # the limit itself is allowed
