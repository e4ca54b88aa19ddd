"""Task vectors in the linearised model (``ntsim.theory.early_stopping._task_vectors``).

Oracles: GD iterated in parameter space with numpy, ``numpy.linalg.pinv`` (the converged
task vector is the minimum-norm interpolant's displacement), direct numpy MSEs and cosines,
and ``ntsim.core.gradient_descent`` on ``ntsim.core.linearize`` of the attention model with
an autodiff (``jax.jacrev``) Jacobian.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import gradient_descent, linearize, mse_loss
from ntsim.theory import early_stopping as es


def _gd_numpy(j, f0, y, eps, steps):
    delta = np.zeros(j.shape[1])
    for _ in range(steps):
        delta = delta - eps / y.size * j.T @ (f0 + j @ delta - y)
    return delta


@pytest.mark.parametrize("rows, params", [(6, 4), (5, 12)])  # rank-deficient G; P > N
def test_task_vector_matches_numpy_gd(x64, rows, params):
    rng = np.random.default_rng(rows)
    j = rng.standard_normal((rows, params))
    f0, y = rng.standard_normal(rows), rng.standard_normal(rows)
    eps = 0.9 * rows / np.linalg.eigvalsh(j @ j.T).max()
    for steps in (0, 1, 7, 150):
        tau = np.asarray(es.task_vector(j, f0, y, step_size=eps, steps=steps))
        np.testing.assert_allclose(tau, _gd_numpy(j, f0, y, eps, steps), rtol=1e-11, atol=1e-13)


def test_task_vector_converges_to_minimum_norm_displacement(x64):
    rng = np.random.default_rng(1)
    j = rng.standard_normal((5, 20))
    f0, y = rng.standard_normal(5), rng.standard_normal(5)
    eps = 5 / np.linalg.eigvalsh(j @ j.T).max()
    tau = np.asarray(es.task_vector(j, f0, y, step_size=eps, steps=20000))
    np.testing.assert_allclose(tau, np.linalg.pinv(j) @ (y - f0), rtol=1e-9)
    c = np.asarray(es.task_vector_coefficients(j @ j.T, f0 - y, step_size=eps, steps=20000))
    np.testing.assert_allclose(c, -np.linalg.solve(j @ j.T, f0 - y), rtol=1e-9)


def test_task_vector_rejects_unstable_step(x64):
    j = np.eye(3)
    with pytest.raises(ValueError, match="step_size"):
        es.task_vector(j, np.zeros(3), np.ones(3), step_size=3.5, steps=2)  # εg/N = 7/6


def test_negation_gap_equals_mse_difference(x64):
    rng = np.random.default_rng(2)
    j_test, tau = rng.standard_normal((9, 7)), rng.standard_normal(7)
    f0, y = rng.standard_normal(9), rng.standard_normal(9)
    mse = lambda d: np.mean((f0 + j_test @ d - y) ** 2)  # noqa: E731
    np.testing.assert_allclose(
        float(es.negation_gap(j_test, f0, y, tau)), mse(-tau) - mse(tau), rtol=1e-12
    )
    np.testing.assert_allclose(float(es.linearised_mse(j_test, f0, y, tau)), mse(tau), rtol=1e-14)


def test_cosine_and_interference_from_kernel_blocks(x64):
    rng = np.random.default_rng(3)
    j1, j2 = rng.standard_normal((4, 10)), rng.standard_normal((6, 10))
    c1, c2 = rng.standard_normal(4), rng.standard_normal(6)
    t1, t2 = j1.T @ c1, j2.T @ c2
    cos = float(es.task_vector_cosine(j1 @ j1.T, j1 @ j2.T, j2 @ j2.T, c1, c2))
    np.testing.assert_allclose(cos, t1 @ t2 / np.linalg.norm(t1) / np.linalg.norm(t2), rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(es.addition_interference(j1 @ j2.T, c2)), j1 @ t2, rtol=1e-12
    )
    # orthogonal supports: cosine 0 and no interference
    j2_orth = np.concatenate([np.zeros((6, 5)), rng.standard_normal((6, 5))], axis=1)
    j1_orth = np.concatenate([rng.standard_normal((4, 5)), np.zeros((4, 5))], axis=1)
    g12 = j1_orth @ j2_orth.T
    assert float(es.task_vector_cosine(j1_orth @ j1_orth.T, g12, j2_orth @ j2_orth.T, c1, c2)) == 0
    assert np.all(np.asarray(es.addition_interference(g12, c2)) == 0)


@pytest.mark.slow  # > 20 s at quick sizes (compilation); runs in make test-full
def test_task_vector_of_linearised_attention_model(x64, key):
    """τ from ntsim.core GD on the linearised attention model = Jᵀc with an autodiff J."""
    model = es.paper_attention_model(8, num_heads=2)
    k_x, k_y, k_p = jax.random.split(key, 3)
    x = jax.random.normal(k_x, (5, 3, 4))
    y = jax.random.normal(k_y, (5,))
    params = model.init(k_p, x[0])
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    jac = jax.vmap(lambda xi: jax.jacrev(lambda p: model.apply(unravel(p), xi)[0])(flat))(x)
    f0 = jax.vmap(model.apply, in_axes=(None, 0))(params, x)[:, 0]
    eps = 0.8 * 5 / float(jnp.linalg.eigvalsh(jac @ jac.T)[-1])
    steps = 40
    loss = mse_loss(linearize(model.apply, params), x, y, loss_scale=0.5 / 5)
    ft = gradient_descent(loss, params, num_steps=steps, learning_rate=eps).params
    tau = jax.flatten_util.ravel_pytree(ft)[0] - flat
    expected = es.task_vector(jac, f0, y, step_size=eps, steps=steps)
    np.testing.assert_allclose(np.asarray(tau), np.asarray(expected), rtol=1e-9, atol=1e-12)


def test_gd_task_vector_matches_numpy_gd(x64):
    rng = np.random.default_rng(3)
    j = rng.standard_normal((5, 9))
    f0, y = rng.standard_normal(5), rng.standard_normal(5)
    eps = 0.9 * 5 / np.linalg.eigvalsh(j @ j.T).max()
    np.testing.assert_allclose(
        np.asarray(es.gd_task_vector(j, f0, y, eps, 30)), _gd_numpy(j, f0, y, eps, 30), rtol=1e-12
    )


def test_linear_task_vector_simulation_closed_form_facts(x64, key):
    """Orthogonal row spaces: cos = 0 and no interference (Assumption 5.1); the printed
    negation (θ_PT) gives MSE(θ_PT) − MSE(θ_FT), i.e. half of eq. (104) minus ‖J_testτ‖²/N,
    so it is never above half the formula; the scanned τ equals the closed form."""
    small = dict(num_params=12, num_train=4, num_test=5, steps=20, instances=6, batch_size=3)
    ortho = es.simulate_linear_task_vectors(
        key, es.LinearTaskVectorSetting(orthogonal=True, **small)
    )
    assert np.abs(np.asarray(ortho.cosine)).max() < 1e-12
    assert np.abs(np.asarray(ortho.interference)).max() < 1e-12
    generic = es.simulate_linear_task_vectors(key, es.LinearTaskVectorSetting(**small))
    assert np.asarray(generic.interference).shape == (6, 4)
    assert np.asarray(generic.tau_error).max() < 1e-10
    np.testing.assert_allclose(generic.gap_corrected, generic.gap_formula, rtol=1e-9)
    assert np.all(np.asarray(generic.gap_printed) <= np.asarray(generic.gap_formula) / 2 + 1e-12)
    assert np.abs(np.asarray(generic.cosine)).max() > 1e-3  # shared directions: not orthogonal
    with pytest.raises(ValueError, match="num_params"):
        es.LinearTaskVectorSetting(num_params=7)
