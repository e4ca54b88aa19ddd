"""Linearised models and closed-form MSE dynamics against explicitly simulated training."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from scipy import stats

from ntsim.core import (
    batched,
    deep_linear,
    kernel_flow_predictions,
    kernel_gd_predictions,
    kernel_ridge_regression,
    linear,
    linearize,
    mlp,
    mse_loss_scale,
    taylor_expand,
)

# float64 GD on the linearised model accumulates ~1e-15 per step over <= 100 steps; the
# closed form differs only by the eigendecomposition's round-off (~1e-13 relative).
RTOL64 = 1e-8


@partial(jax.jit, static_argnums=0)
def _jacobian(apply, params, x):
    """Flat Jacobian ``(N, O, P)`` of ``apply`` over the batch ``x``."""
    flat, unravel = ravel_pytree(params)
    return jax.jacrev(lambda v: batched(apply)(unravel(v), x))(flat)


def _ntk(apply, params, x1, x2):
    """Empirical NTK traced over outputs (averaged, as neural-tangents), ``(N1, N2)``."""
    j1, j2 = _jacobian(apply, params, x1), _jacobian(apply, params, x2)
    return jnp.einsum("iop,jop->ij", j1, j2) / j1.shape[1]


@pytest.fixture(scope="module")
def problem():
    """A small NTK-parameterised MLP, 8 train and 3 test points, and its kernels (float64).

    Module-scoped (built once, under its own scoped x64); tests using it also request the
    ``x64`` fixture so that everything they compute stays in float64.
    """
    with jax.enable_x64(True):
        model = mlp((64, 64), 1, parameterization="ntk", w_std=1.5, b_std=0.1)
        k_init, k_x, k_y = jax.random.split(jax.random.PRNGKey(20211206), 3)
        x = jax.random.normal(k_x, (11, 3))
        params0 = model.init(k_init, x[0])
        y = jnp.sin(2 * x[:8, 0]) + 0.3 * jax.random.normal(k_y, (8,))

        @jax.jit
        def setup(params0, x):
            f = batched(model.apply)(params0, x)[:, 0]
            k = _ntk(model.apply, params0, x, x[:8])
            return f[:8], f[8:], k[:8], k[8:]

        f0_train, f0_test, k, k_test = setup(params0, x)
    return dict(
        apply=model.apply,
        params0=params0,
        x_train=x[:8],
        x_test=x[8:],
        y=y,
        f0_train=f0_train,
        f0_test=f0_test,
        k=k,
        k_test=k_test,
    )


@partial(jax.jit, static_argnums=(0, 7))
def _run_linearised_gd(apply, params0, x_train, x_test, y, lr, c, steps):
    """Explicit GD ``θ ← θ − η∇L`` on ``L = c Σ‖f_lin − y‖²``; predictions at every step.

    ``lr`` and ``c`` are traced, so every loss scale and step size shares one compilation.
    """
    f_lin = batched(linearize(apply, params0))
    loss = lambda p: c * jnp.sum((f_lin(p, x_train).reshape(y.shape) - y) ** 2)

    def step(p, _):
        record = (f_lin(p, x_train), f_lin(p, x_test))
        return jax.tree.map(lambda a, g: a - lr * g, p, jax.grad(loss)(p)), record

    _, (train, test) = jax.lax.scan(step, params0, None, length=steps + 1)
    return train, test


# ------------------------------------------------------------------ (a) closed form vs GD


@pytest.mark.parametrize("convention", ["sum", "mean", "shachaf"])
@pytest.mark.parametrize("fraction", [0.3, 0.9])  # η/(1/(cλ_max)); 0.9 oscillates (2cηλ > 1)
def test_kernel_gd_matches_gd_on_linearised_mlp(x64, problem, convention, fraction):
    p = problem
    n = p["y"].shape[0]
    c = 1.0 / n if convention == "shachaf" else mse_loss_scale(convention, n)
    lr = fraction / (c * float(jnp.linalg.eigvalsh(p["k"])[-1]))
    steps = np.array([0, 1, 10, 100])
    train, test = _run_linearised_gd(
        p["apply"], p["params0"], p["x_train"], p["x_test"], p["y"], lr, c, int(steps[-1])
    )
    pred = kernel_gd_predictions(
        p["k"],
        p["y"],
        p["f0_train"],
        learning_rate=lr,
        loss_scale=c,
        steps=steps,
        k_test_train=p["k_test"],
        f0_test=p["f0_test"],
    )
    np.testing.assert_allclose(pred.train, train[steps, :, 0], rtol=RTOL64, atol=RTOL64)
    np.testing.assert_allclose(pred.test, test[steps, :, 0], rtol=RTOL64, atol=RTOL64)


def test_kernel_gd_multi_output_singular_kernel(x64, key):
    # linear(out_dim=2): NTK = x·x' δ_ab exactly, and with N=8 > d=3 it is singular (rank 3).
    model = linear(out_dim=2)
    k_x, k_w, k_y = jax.random.split(key, 3)
    x = jax.random.normal(k_x, (10, 3))
    params0 = {"w": jax.random.normal(k_w, (3, 2))}
    y = jax.random.normal(k_y, (8, 2))
    k, k_test = x[:8] @ x[:8].T, x[8:] @ x[:8].T
    c = mse_loss_scale("neural_tangents", 8, out_dim=2)
    lr = 0.5 / (c * float(jnp.linalg.eigvalsh(k)[-1]))
    train, test = _run_linearised_gd(model.apply, params0, x[:8], x[8:], y, lr, c, 50)
    f0 = batched(model.apply)(params0, x)
    pred = kernel_gd_predictions(
        k,
        y,
        f0[:8],
        learning_rate=lr,
        loss_scale=c,
        steps=jnp.array([3, 50]),
        k_test_train=k_test,
        f0_test=f0[8:],
    )
    assert pred.train.shape == (2, 8, 2) and pred.test.shape == (2, 2, 2)
    np.testing.assert_allclose(pred.train, train[jnp.array([3, 50])], rtol=RTOL64, atol=RTOL64)
    np.testing.assert_allclose(pred.test, test[jnp.array([3, 50])], rtol=RTOL64, atol=RTOL64)


# --------------------------------------------------------- (b) flow limits and GD → flow


def test_flow_converges_to_interpolant(x64, problem):
    p = problem
    c, lr = 0.5, 1.0
    lam_min = float(jnp.linalg.eigvalsh(p["k"])[0])
    t_inf = 80.0 / (2 * c * lr * lam_min)  # e^{−80}: the flow has converged to round-off.
    pred = kernel_flow_predictions(
        p["k"],
        p["y"],
        p["f0_train"],
        learning_rate=lr,
        loss_scale=c,
        times=t_inf,
        k_test_train=p["k_test"],
        f0_test=p["f0_test"],
    )
    interpolant = p["f0_test"] + p["k_test"] @ jnp.linalg.solve(p["k"], p["y"] - p["f0_train"])
    np.testing.assert_allclose(pred.train, p["y"], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(pred.test, interpolant, rtol=1e-6)
    # 10^6 GD steps at half the stability limit reach the same point without overflow.
    gd = kernel_gd_predictions(
        p["k"],
        p["y"],
        p["f0_train"],
        learning_rate=0.5 / (c * float(jnp.linalg.eigvalsh(p["k"])[-1])),
        loss_scale=c,
        steps=10**6,
        k_test_train=p["k_test"],
        f0_test=p["f0_test"],
    )
    np.testing.assert_allclose(gd.test, interpolant, rtol=1e-6)


def test_gd_approaches_flow_at_rate_eta(x64, problem):
    # Same physical time T = η·s: GD's per-eigenvalue factor (1 − 2cηλ)^{T/η} differs from
    # e^{−2cλT} by O(η), so the error must scale with slope 1 in η.
    p = problem
    c, horizon = 0.5, 2.0 / float(jnp.linalg.eigvalsh(p["k"])[-1])
    kw = dict(k_test_train=p["k_test"], f0_test=p["f0_test"], loss_scale=c)
    flow = kernel_flow_predictions(
        p["k"], p["y"], p["f0_train"], learning_rate=1.0, times=horizon, **kw
    )
    etas = horizon / np.array([20, 40, 80, 160])
    errors = [
        float(
            jnp.linalg.norm(
                kernel_gd_predictions(
                    p["k"],
                    p["y"],
                    p["f0_train"],
                    learning_rate=eta,
                    steps=int(round(horizon / eta)),
                    **kw,
                ).test
                - flow.test
            )
        )
        for eta in etas
    ]
    slope = stats.linregress(np.log(etas), np.log(errors)).slope
    assert abs(slope - 1) < 0.1, (slope, errors)


def test_flow_zero_time_and_monotone_train_loss(x64, problem):
    p = problem
    times = jnp.linspace(0.0, 5.0, 6)
    pred = kernel_flow_predictions(
        p["k"],
        p["y"],
        p["f0_train"],
        learning_rate=0.1,
        loss_scale=0.5,
        times=times,
        k_test_train=p["k_test"],
        f0_test=p["f0_test"],
    )
    np.testing.assert_allclose(pred.train[0], p["f0_train"], rtol=1e-12)
    np.testing.assert_allclose(pred.test[0], p["f0_test"], rtol=1e-12)
    losses = jnp.sum((pred.train - p["y"]) ** 2, axis=1)
    assert bool(jnp.all(jnp.diff(losses) < 0))  # ‖e^{−aKt} r‖ decreases for PSD K


# --------------------------------------------------------------------------- (c) KRR


def test_krr_ridgeless_is_interpolant_and_ridge_is_proximal_limit(x64, key):
    model = mlp((16,), 1, parameterization="ntk", w_std=1.3, b_std=0.2)  # P = 81 parameters
    k_init, k_x, k_y = jax.random.split(key, 3)
    x = jax.random.normal(k_x, (9, 3))
    params0 = model.init(k_init, x[0])
    flat0, _ = ravel_pytree(params0)
    y = jax.random.normal(k_y, (6,))
    f0 = batched(model.apply)(params0, x)[:, 0]
    j = _jacobian(model.apply, params0, x)[:, 0]  # (9, P)
    k, k_test = j[:6] @ j[:6].T, j[6:] @ j[:6].T
    r = y - f0[:6]
    kw = dict(k_test_train=k_test, f0_train=f0[:6], f0_test=f0[6:])
    ridgeless = kernel_ridge_regression(k, y, ridge=0.0, **kw)
    np.testing.assert_allclose(ridgeless.train, y, rtol=1e-9)
    np.testing.assert_allclose(ridgeless.test, f0[6:] + k_test @ jnp.linalg.solve(k, r), rtol=1e-9)
    # argmin_Δ c‖J Δ − r‖² + (μ/2)‖Δ‖² solved in parameter space equals KRR with ρ = μ/(2c).
    c, mu = 1.0 / 6, 0.05
    delta = jnp.linalg.solve(
        2 * c * j[:6].T @ j[:6] + mu * jnp.eye(flat0.size), 2 * c * j[:6].T @ r
    )
    ridge = kernel_ridge_regression(k, y, ridge=mu / (2 * c), **kw)
    np.testing.assert_allclose(ridge.train, f0[:6] + j[:6] @ delta, rtol=1e-9)
    np.testing.assert_allclose(ridge.test, f0[6:] + j[6:] @ delta, rtol=1e-9)


# ------------------------------------------------------------------- (d) linearize/taylor


def test_linearize_is_exact_first_order(x64, problem):
    p = problem
    apply, params0, x = p["apply"], p["params0"], p["x_test"]
    flat0, unravel = ravel_pytree(params0)
    direction = jax.random.normal(jax.random.PRNGKey(1), flat0.shape)
    f0 = batched(apply)(params0, x)
    # f_lin(θ0 + αΔ) for several α at once; α = 0 must reproduce apply exactly.
    alphas = jnp.array([0.0, 1.0, -0.7, 2.3])
    moved = jax.jit(
        jax.vmap(lambda a: batched(linearize(apply, params0))(unravel(flat0 + a * direction), x))
    )(alphas)
    np.testing.assert_allclose(moved[0], f0, rtol=1e-14)
    # Linear in Δθ, and equal to f0 + J Δθ with an explicit Jacobian.
    one = moved[1] - f0
    np.testing.assert_allclose(moved[2:] - f0, alphas[2:, None, None] * one, rtol=1e-10)
    np.testing.assert_allclose(one, _jacobian(apply, params0, x) @ direction, rtol=1e-10)


def test_taylor_remainder_orders(x64, key):
    # Smooth activation (ReLU kinks would break the Taylor remainder's power law):
    # apply − taylor_k = O(ε^{k+1}) along a unit direction, slope fitted in log-log.
    model = mlp((32, 32), 2, activation="tanh", parameterization="ntk", w_std=1.2, b_std=0.1)
    k0, k1, k2 = jax.random.split(key, 3)
    x = jax.random.normal(k2, (4, 3))
    params0 = model.init(k0, x[0])
    flat0, unravel = ravel_pytree(params0)
    direction = jax.random.normal(k1, flat0.shape)
    direction = direction / jnp.linalg.norm(direction)
    eps = jnp.array([0.05, 0.1, 0.2])
    for degree in (1, 2, 3):
        g = batched(taylor_expand(model.apply, params0, degree))

        def remainder(e, g=g):
            params = unravel(flat0 + e * direction)
            return jnp.linalg.norm(batched(model.apply)(params, x) - g(params, x))

        err = np.asarray(jax.jit(jax.vmap(remainder))(eps))
        slope = stats.linregress(np.log(eps), np.log(err)).slope
        assert abs(slope - (degree + 1)) < 0.2, (degree, slope, err)


def test_taylor_expand_degrees(x64, key):
    model = deep_linear((4, 3, 1))  # f is a cubic polynomial in the parameters
    k0, k1, k2 = jax.random.split(key, 3)
    x = jax.random.normal(k2, (5, 2))
    params0, params = model.init(k0, x[0]), model.init(k1, x[0])
    f = batched(model.apply)
    expand = lambda degree: jax.jit(batched(taylor_expand(model.apply, params0, degree)))(params, x)
    np.testing.assert_allclose(expand(0), f(params0, x), rtol=1e-14)
    np.testing.assert_allclose(
        expand(1), batched(linearize(model.apply, params0))(params, x), rtol=1e-14
    )
    assert float(jnp.linalg.norm(expand(2) - f(params, x))) > 1e-3  # the cubic term matters
    np.testing.assert_allclose(expand(3), f(params, x), rtol=1e-12)
    np.testing.assert_allclose(expand(4), f(params, x), rtol=1e-12)


# ------------------------------------------------------------ conventions and transforms


def test_mse_loss_scale_conventions():
    assert mse_loss_scale("sum", 10) == 0.5
    assert mse_loss_scale("mean", 10) == 0.05
    assert mse_loss_scale("neural_tangents", 10, out_dim=4) == 0.5 / 40


def test_jit_and_vmap_over_learning_rates(x64, problem):
    p = problem
    run = lambda lr: (
        kernel_flow_predictions(
            p["k"],
            p["y"],
            p["f0_train"],
            learning_rate=lr,
            loss_scale=0.5,
            times=jnp.array([1.0, 3.0]),
            k_test_train=p["k_test"],
            f0_test=p["f0_test"],
        ).test
    )
    lrs = jnp.array([0.01, 0.1, 1.0])
    stacked = jnp.stack([run(float(lr)) for lr in lrs])
    np.testing.assert_allclose(jax.vmap(run)(lrs), stacked, rtol=1e-12)
    np.testing.assert_allclose(jax.jit(run)(0.1), stacked[1], rtol=1e-12)
    scalar = kernel_gd_predictions(p["k"], p["y"], learning_rate=0.01, loss_scale=0.5, steps=7)
    assert scalar.train.shape == (8,) and scalar.test is None


# ------------------------------------------------------------------------ (e) bad input


def test_bad_inputs_raise(x64, problem):
    p = problem
    k, y, f0 = p["k"], p["y"], p["f0_train"]
    gd = lambda **kw: kernel_gd_predictions(
        **(
            dict(
                k_train_train=k, y_train=y, f0_train=f0, learning_rate=1e-3, loss_scale=0.5, steps=3
            )
            | kw
        )
    )
    lam_max = float(jnp.linalg.eigvalsh(k)[-1])
    cases = [
        (dict(k_train_train=k[:, :7]), "square"),
        (dict(k_train_train=k + jnp.triu(jnp.ones_like(k))), "symmetric"),
        (dict(k_train_train=k - 2 * lam_max * jnp.eye(8)), "positive semi-definite"),
        (dict(y_train=y[:7]), "y_train must have shape"),
        (dict(f0_train=f0[:, None]), "f0_train must have shape"),
        (dict(k_test_train=p["k_test"]), "f0_test is required"),
        (dict(f0_test=p["f0_test"]), "f0_test was given without k_test_train"),
        (dict(learning_rate=1.01 / (0.5 * lam_max)), "stability limit"),
        (dict(learning_rate=-1.0), "learning_rate must be positive"),
        (dict(loss_scale=0.0), "loss_scale must be positive"),
        (dict(steps=-1), "non-negative integers"),
        (dict(steps=jnp.array([1.5])), "non-negative integers"),
        (dict(steps=jnp.ones((2, 2), int)), "scalar or 1-D"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            gd(**kwargs)
    gd(learning_rate=1.0 / (0.5 * lam_max))  # exactly at the limit: bounded, allowed
    with pytest.raises(ValueError, match="times must be non-negative"):
        kernel_flow_predictions(k, y, learning_rate=1.0, loss_scale=0.5, times=-1.0)
    with pytest.raises(ValueError, match="ridge must be non-negative"):
        kernel_ridge_regression(k, y, ridge=-1e-3)
    with pytest.raises(ValueError, match="convention must be one of"):
        mse_loss_scale("average", 3)
    with pytest.raises(ValueError, match="degree must be a non-negative integer"):
        taylor_expand(p["apply"], p["params0"], -1)
    with pytest.raises(ValueError, match="pytree structure"):
        linearize(p["apply"], p["params0"])({"w": 1.0}, p["x_test"][0])


def test_linearize_reads_params_and_inputs_in_their_places():
    """f(p, x) = p²·x with p and x of one shape (so exchanging them is not a shape error):
    f_lin(p, x) = p0²x + 2p0x(p − p0), by hand."""
    from ntsim.core import linearize

    p0, p, x = jnp.array([1.0, 2.0]), jnp.array([1.5, 1.0]), jnp.array([3.0, -1.0])
    f_lin = linearize(lambda p, x: p**2 * x, p0)
    np.testing.assert_allclose(f_lin(p, x), p0**2 * x + 2 * p0 * x * (p - p0), rtol=1e-6)
