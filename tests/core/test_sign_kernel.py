"""Sign (Adam-style) kernel against flat autodiff Jacobians and a sign-descent step."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from ntsim.core import mlp
from ntsim.core._sign_kernel import sign_kernel_fn, sign_kernel_from_jacobians


def _setup(key, out_dim=1):
    model = mlp((5,), out_dim, activation="tanh", parameterization="ntk", b_std=0.3)
    x = jax.random.normal(key, (4, 3))
    params = model.init(jax.random.fold_in(key, 1), x[0])
    return model, x, params


def _flat_jacobian(model, params, x):
    flat, unravel = ravel_pytree(params)
    return jax.vmap(lambda xi: jax.jacrev(lambda p: model.apply(unravel(p), xi))(flat))(x)


def test_sign_kernel_equals_j_sign_j(x64, key):
    model, x, params = _setup(key)
    jac = np.asarray(_flat_jacobian(model, params, x))[:, 0, :]  # (N, P)
    expected = jac @ np.sign(jac).T
    k = sign_kernel_fn(model.apply)(x, None, params)
    np.testing.assert_allclose(k, expected, rtol=1e-12)
    np.testing.assert_allclose(sign_kernel_from_jacobians(jac, jac), expected, rtol=1e-12)
    # Diagonal is the ℓ1 norm of the gradient; the kernel is not symmetric in general.
    np.testing.assert_allclose(np.diag(k), np.abs(jac).sum(axis=1), rtol=1e-12)
    assert np.max(np.abs(k - k.T)) > 1e-3
    blocks = sign_kernel_fn(model.apply, per_block=True)(x, None, params)
    np.testing.assert_allclose(sum(jax.tree.leaves(blocks)), k, rtol=1e-12)


def test_sign_kernel_predicts_sign_descent_step(x64, key):
    """One step θ' = θ − η sign(∇f(x_j)) changes f(x_i) by −η K_sign(x_i, x_j) + O(η²)."""
    model, x, params = _setup(key)
    k = np.asarray(sign_kernel_fn(model.apply)(x, None, params))
    g = jax.grad(lambda p: model.apply(p, x[2])[0])(params)
    f = lambda p: jax.vmap(model.apply, in_axes=(None, 0))(p, x)[:, 0]  # noqa: E731
    changes = []
    for eta in (1e-3, 5e-4):
        stepped = jax.tree.map(lambda p, gi, eta=eta: p - eta * jnp.sign(gi), params, g)
        changes.append(np.asarray(f(stepped) - f(params)) / eta + k[:, 2])
    # The error of the first-order prediction is O(η): halving η halves it.
    ratio = np.linalg.norm(changes[0]) / np.linalg.norm(changes[1])
    assert ratio == pytest.approx(2.0, rel=0.02)


def test_sign_kernel_multi_output_is_averaged(x64, key):
    model, x, params = _setup(key, out_dim=3)
    jac = np.asarray(_flat_jacobian(model, params, x))  # (N, O, P)
    expected = np.einsum("iop,jop->ij", jac, np.sign(jac)) / 3
    np.testing.assert_allclose(
        sign_kernel_fn(model.apply)(x, x[:2], params), expected[:, :2], rtol=1e-12
    )
    with pytest.raises(ValueError, match="same shape"):
        sign_kernel_fn(model.apply)(x, jnp.ones((2, 4)), params)
    with pytest.raises(ValueError, match="same P"):
        sign_kernel_from_jacobians(np.ones((2, 3)), np.ones((2, 4)))
