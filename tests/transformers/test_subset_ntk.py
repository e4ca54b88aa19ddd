"""NTK w.r.t. a parameter subset: closed forms, additivity, a Flax module, tiling."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import empirical_ntk_fn
from ntsim.transformers import param_mask, subset_ntk_fn


class _TwoLayer(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.gelu(nn.Dense(8, name="hidden")(x))
        return nn.Dense(1, name="head")(h)


def test_subsets_of_a_flax_module(key):
    module = _TwoLayer()
    x = jax.random.normal(key, (7, 5))
    params = module.init(jax.random.fold_in(key, 1), x[:1])
    apply = lambda p, xi: module.apply(p, xi[None])[0]
    full = empirical_ntk_fn(apply)(x, None, params)
    head = subset_ntk_fn(apply, param_mask(params, "params/head/*"))(x, None, params)
    body = subset_ntk_fn(apply, param_mask(params, "*", exclude="params/head/*"))(x, None, params)
    np.testing.assert_allclose(head + body, full, rtol=1e-5)  # disjoint subsets add up
    # head of a linear readout: Θ = φφᵀ + 1 (kernel and bias), φ = gelu(hidden(x))
    hidden = params["params"]["hidden"]
    phi = nn.gelu(x @ hidden["kernel"] + hidden["bias"])
    np.testing.assert_allclose(head, phi @ phi.T + 1.0, rtol=1e-5)
    # tiles of 3 (7 = 3 + 3 + 1 padded) give the same kernel; x2 ≠ x1 works
    tiled = subset_ntk_fn(apply, param_mask(params, "*"), batch_size=3)
    np.testing.assert_allclose(tiled(x, x[:4], params), full[:, :4], rtol=1e-5)


def test_subset_kernel_changes_with_params_not_closure(key):
    """The frozen weights are arguments: new values give a new kernel without retracing."""
    apply = lambda p, x: jnp.atleast_1d(jnp.tanh(x @ p["w"]) @ p["v"])
    ntk = subset_ntk_fn(apply, param_mask({"w": 0, "v": 0}, "v"))
    x = jax.random.normal(key, (4, 3))
    p1 = {"w": jnp.eye(3), "v": jnp.ones(3)}
    p2 = {"w": 2 * jnp.eye(3), "v": jnp.ones(3)}
    np.testing.assert_allclose(ntk(x, None, p1), jnp.tanh(x) @ jnp.tanh(x).T, rtol=1e-6)
    np.testing.assert_allclose(ntk(x, None, p2), jnp.tanh(2 * x) @ jnp.tanh(2 * x).T, rtol=1e-6)
