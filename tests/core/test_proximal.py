"""Split / selective proximal steps (``ntsim.core._proximal``) against hand algebra and GD."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import Record, gradient_descent, mse_loss, record_params
from ntsim.core._proximal import (
    proximal_combined_step,
    proximal_gd,
    proximal_split_step,
    selective_strength,
    tree_inner,
)


def _random_trees(seed):
    rng = np.random.default_rng(seed)
    make = lambda: {
        "a": jnp.asarray(rng.standard_normal(3)),
        "b": [jnp.asarray(rng.standard_normal((2, 2)))],
    }  # noqa: E731
    return make(), make(), make()


def test_split_equals_combined_form(x64):
    params, grads, params0 = _random_trees(0)
    eta, lam = 0.3, 1.7
    mid, new = proximal_split_step(params, grads, params0, learning_rate=eta, proximal=lam)
    combined = proximal_combined_step(params, grads, params0, learning_rate=eta, proximal=lam)
    # The notes' expanded form: (1 − λη)θ − η(1 − λη)g + ληθ_0, computed here in numpy.
    flat = lambda t: np.concatenate([np.ravel(x) for x in jax.tree.leaves(t)])  # noqa: E731
    th, g, th0 = flat(params), flat(grads), flat(params0)
    expanded = (1 - lam * eta) * th - eta * (1 - lam * eta) * g + lam * eta * th0
    np.testing.assert_allclose(flat(mid), th - eta * g, rtol=1e-15)
    np.testing.assert_allclose(flat(new), expanded, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(flat(combined), expanded, rtol=1e-13, atol=1e-15)


def test_split_step_differs_from_joint_gd_by_eta_squared_lambda_grad(x64):
    """One step of core.gradient_descent (joint) and the split step differ by η²λ∇L exactly."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    loss = mse_loss(lambda w, xi: jnp.atleast_1d(xi @ w), x, y, loss_scale=1.0)
    w0 = jnp.asarray(rng.standard_normal(3))
    w1 = w0 + 0.1  # start away from the anchor so the pull acts
    eta, lam = 0.05, 3.0
    # core.gradient_descent anchors at its start point: take w1 as both.
    joint = gradient_descent(loss, w1, learning_rate=eta, num_steps=1, proximal=lam).params
    g = jax.grad(loss)(w1)
    split = proximal_combined_step(w1, g, w1, learning_rate=eta, proximal=lam)
    np.testing.assert_allclose(split - joint, eta**2 * lam * g, rtol=1e-10, atol=1e-15)
    split_far = proximal_combined_step(w1, g, w0, learning_rate=eta, proximal=lam)
    joint_far = w1 - eta * g - eta * lam * (w1 - w0)
    np.testing.assert_allclose(split_far - joint_far, eta**2 * lam * g, rtol=1e-10, atol=1e-15)


def test_selective_strength_switch():
    lam, inner = selective_strength(
        jnp.array([1.0, 1.0]), jnp.array([2.0, -1.0]), jnp.zeros(2), 4.0
    )
    assert float(inner) == 1.0 and float(lam) == 4.0
    lam, inner = selective_strength(
        jnp.array([1.0, 1.0]), jnp.array([-2.0, 1.0]), jnp.zeros(2), 4.0
    )
    assert float(inner) == -1.0 and float(lam) == 0.0
    assert float(tree_inner({"u": jnp.ones(3)}, {"u": jnp.arange(3.0)})) == 3.0


def _quadratic(seed, n=5, d=4):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((n, d)) / 3, rng.standard_normal(n)
    return x, y, mse_loss(lambda w, xi: jnp.atleast_1d(xi @ w), x, y, loss_scale=1.0)


def test_proximal_gd_matches_python_loop_constant_and_selective(x64):
    x, y, loss = _quadratic(2)
    w0 = jnp.asarray(np.random.default_rng(3).standard_normal(4))
    eta, lam, steps = 0.05, 2.0, 37
    for selective in (False, True):
        res = proximal_gd(
            loss,
            w0,
            num_steps=steps,
            learning_rate=eta,
            proximal=lam,
            selective=selective,
            record=Record(every=5, fn=record_params()),
        )
        w, lams, path = np.asarray(w0), [], [np.asarray(w0)]
        for t in range(steps):
            g = 2 * x.T @ (x @ w - y)
            on = lam if (not selective or g @ (w - np.asarray(w0)) >= 0) else 0.0
            lams.append(on)
            w = np.asarray(w0) + (1 - on * eta) * (w - np.asarray(w0) - eta * g)
            if (t + 1) % 5 == 0:
                path.append(w)
        np.testing.assert_allclose(res.params, w, rtol=1e-12)
        np.testing.assert_allclose(res.strengths, lams)
        np.testing.assert_allclose(res.records, np.stack(path), rtol=1e-12)
        assert res.steps.tolist() == list(range(0, steps, 5))
        assert float(res.fraction_regularised) == pytest.approx(np.mean(np.asarray(lams) > 0))
    # The first step starts at the anchor: ⟨g, 0⟩ = 0 ≥ 0 switches λ on; afterwards GD moves
    # against the gradient so ⟨g, θ − θ_0⟩ < 0 and the selective pull is off (notes, Thm 1).
    res = proximal_gd(loss, w0, num_steps=steps, learning_rate=eta, proximal=lam, selective=True)
    assert float(res.strengths[0]) == lam and float(res.strengths[1]) == 0.0


def test_proximal_gd_fixed_point_is_ridge(x64):
    """Constant λ: the split-step fixed point solves (1−λη)(−η g) = λη u, i.e. g = −λu/(1−λη)."""
    x, y, loss = _quadratic(4)
    w0 = jnp.zeros(4)
    eta, lam = 0.1, 1.5
    res = proximal_gd(loss, w0, num_steps=4000, learning_rate=eta, proximal=lam)
    h = 2 * x.T @ x
    # g = Hw − 2Xᵀy; fixed point: (H + λ/(1−λη) I) w = 2Xᵀy.
    expected = np.linalg.solve(h + lam / (1 - lam * eta) * np.eye(4), 2 * x.T @ y)
    np.testing.assert_allclose(res.params, expected, rtol=1e-10)


def test_proximal_gd_validation_and_vmap(x64):
    _, _, loss = _quadratic(5)
    with pytest.raises(ValueError, match="proximal·learning_rate"):
        proximal_gd(loss, jnp.zeros(4), num_steps=3, learning_rate=0.5, proximal=3.0)
    with pytest.raises(ValueError, match="learning_rate"):
        proximal_gd(loss, jnp.zeros(4), num_steps=3, learning_rate=0.0, proximal=1.0)
    with pytest.raises(ValueError, match="num_steps"):
        proximal_gd(loss, jnp.zeros(4), num_steps=-1, learning_rate=0.1, proximal=1.0)
    lams = jnp.array([0.0, 1.0, 4.0])
    run = lambda lam: (
        proximal_gd(  # noqa: E731
            loss, jnp.zeros(4), num_steps=20, learning_rate=0.1, proximal=lam, throw=False
        ).params
    )
    batched = jax.vmap(run)(lams)
    for i, lam in enumerate([0.0, 1.0, 4.0]):
        np.testing.assert_allclose(batched[i], run(lam), rtol=1e-13)


def test_selective_strength_applies_lambda_at_the_tie():
    """λ_t = λ·1[⟨∇L, θ_t − θ_0⟩ ≥ 0]: at θ_t = θ_0 the inner product is 0 and λ applies."""
    from ntsim.core import selective_strength

    theta0 = jnp.array([0.5, -1.0])
    lam, inner = selective_strength(theta0, jnp.array([2.0, 3.0]), theta0, 0.7)
    assert float(inner) == 0.0 and float(lam) == pytest.approx(0.7)
