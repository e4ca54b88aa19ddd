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
    assert np.all((1e-3 <= run.sigma) & (run.sigma <= 100.0))


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
