"""Bad input to the library never passes silently: concretely, and under ``jit`` by the
checked mode of :mod:`ntsim._checks`.

Each case asserts the exception class and the key words of its message
(``"<function>: <argument> must <rule>, got <value>."``). Concrete calls raise
``ValueError``; under ``jax.jit``/``vmap`` the same line arrives inside a
``jax.errors.JaxRuntimeError``. The cases come from a bad-input trial of the library: each
one returned a number (NaN, zeros, a negative risk) or a bare ``IndexError`` before.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ntsim.core as core
import ntsim.theory.early_stopping as es
import ntsim.theory.stability as st
from ntsim._checks import (
    psd_tolerance,
    require,
    require_finite,
    require_index,
    require_psd_spectrum,
)

RuntimeFailure = jax.errors.JaxRuntimeError

_A = np.array(
    [[1.0, 0.2, 0.0, 0.1], [0.3, 1.1, 0.2, 0.0], [0.0, 0.4, 0.9, 0.2], [0.1, 0.0, 0.3, 1.2]]
)
K = jnp.asarray(_A @ _A.T / 4, jnp.float32)  # symmetric PSD, λ_max ≈ 0.5
Y = jnp.arange(4.0)
NAN_Y = Y.at[0].set(jnp.nan)


def _krr(**kw):
    args = {"k_train_train": K, "y_train": Y, "ridge": 0.1} | kw
    return core.kernel_ridge_regression(**args)


def _gd(**kw):
    args = {"learning_rate": 0.1, "loss_scale": 1.0, "steps": jnp.arange(3)} | kw
    k, y = args.pop("k", K), args.pop("y", Y)
    return core.kernel_gd_predictions(k, y, **args)


def _flow(**kw):
    args = {"learning_rate": 0.1, "loss_scale": 1.0, "times": jnp.array([0.0, 1.0])} | kw
    k, y = args.pop("k", K), args.pop("y", Y)
    return core.kernel_flow_predictions(k, y, **args)


# (id, call, words that must appear in the ValueError)
CONCRETE_CASES = [
    # ntsim.core: kernel dynamics
    ("krr-ridge-negative", lambda: _krr(ridge=-1.0), ["ridge", "non-negative", "-1.0"]),
    ("krr-ridge-nan", lambda: _krr(ridge=float("nan")), ["ridge", "finite", "nan"]),
    ("krr-ridge-inf", lambda: _krr(ridge=float("inf")), ["ridge", "finite"]),
    ("krr-indefinite", lambda: _krr(k_train_train=-K), ["k_train_train", "semi-definite"]),
    ("krr-empty-kernel", lambda: _krr(k_train_train=jnp.zeros((0, 0)), y_train=jnp.zeros(0)),
     ["k_train_train", "at least one entry", "(0, 0)"]),
    ("krr-nan-target", lambda: _krr(y_train=NAN_Y), ["y_train", "finite", "1 non-finite", "(4,)"]),
    ("krr-inf-target", lambda: _krr(y_train=Y.at[2].set(jnp.inf)), ["y_train", "finite"]),
    ("krr-nan-f0", lambda: _krr(f0_train=NAN_Y), ["f0_train", "finite"]),
    ("krr-nan-kernel", lambda: _krr(k_train_train=K.at[0, 0].set(jnp.nan)),
     ["k_train_train", "finite"]),
    ("krr-nan-f0-test",
     lambda: _krr(k_test_train=K[:2], f0_train=Y, f0_test=jnp.array([0.0, jnp.nan])),
     ["f0_test", "finite"]),
    ("gd-nan-target", lambda: _gd(y=NAN_Y), ["kernel_gd_predictions", "y_train", "finite"]),
    ("gd-indefinite", lambda: _gd(k=-K), ["kernel_gd_predictions", "semi-definite"]),
    ("gd-empty-kernel", lambda: _gd(k=jnp.zeros((0, 0)), y=jnp.zeros(0)), ["at least one"]),
    ("gd-unstable-step", lambda: _gd(learning_rate=100.0), ["learning_rate", "stability limit"]),
    ("gd-negative-step", lambda: _gd(learning_rate=-0.1), ["learning_rate", "positive"]),
    ("gd-negative-steps", lambda: _gd(steps=jnp.array([-3])), ["steps", "non-negative integers"]),
    ("gd-fractional-steps", lambda: _gd(steps=jnp.array([2.5])), ["steps", "integers"]),
    ("gd-zero-loss-scale", lambda: _gd(loss_scale=0.0), ["loss_scale", "positive"]),
    ("flow-nan-target", lambda: _flow(y=NAN_Y), ["kernel_flow_predictions", "y_train", "finite"]),
    ("flow-negative-time", lambda: _flow(times=jnp.array([-1.0])), ["times", "non-negative"]),
    ("flow-nan-time", lambda: _flow(times=jnp.array([jnp.nan])), ["times", "finite"]),
    ("flow-indefinite", lambda: _flow(k=-K), ["semi-definite"]),
    # ntsim.core: spectra
    ("condition-indefinite", lambda: core.condition_number(-K), ["condition_number", "kernel",
                                                                  "semi-definite"]),
    ("condition-nan-kernel", lambda: core.condition_number(K.at[1, 1].set(jnp.nan)),
     ["condition_number", "kernel", "finite"]),
    ("condition-negative-sigma", lambda: core.condition_number(K, -1.0), ["sigma", "non-negative"]),
    ("condition-nan-sigma", lambda: core.condition_number(K, float("nan")), ["sigma"]),
    ("rademacher-negative-radius",
     lambda: core.local_rademacher_complexity(jnp.array([1.0, 0.5]), -1.0),
     ["local_rademacher_complexity", "radius", "non-negative", "-1.0"]),
    ("rademacher-nan-radius",
     lambda: core.local_rademacher_complexity(jnp.array([1.0, 0.5]), jnp.array([0.5, jnp.nan])),
     ["radius", "finite"]),
    # ntsim.theory.early_stopping
    ("sobolev-kernel-below-domain", lambda: es.sobolev_kernel(jnp.array([-2.0, 0.5])),
     ["sobolev_kernel", "x1", "[0, 1]", "-2.0"]),
    ("sobolev-kernel-above-domain",
     lambda: es.sobolev_kernel(jnp.array([0.5]), jnp.array([0.2, 5.0])),
     ["sobolev_kernel", "x2", "[0, 1]", "5.0"]),
    ("sobolev-kernel-nan", lambda: es.sobolev_kernel(jnp.array([0.5, jnp.nan])),
     ["sobolev_kernel", "x1", "[0, 1]"]),
    ("pretrained-gd-indefinite",
     lambda: es.pretrained_kernel_gd(-jnp.eye(3), jnp.ones(3), steps=jnp.array([5])),
     ["pretrained_kernel_gd", "kernel_train", "semi-definite"]),
    ("pretrained-gd-nan-target",
     lambda: es.pretrained_kernel_gd(jnp.eye(3), jnp.array([1.0, jnp.nan, 0.0]), steps=1),
     ["pretrained_kernel_gd", "y_train", "finite"]),
    ("pretrained-gd-nan-kernel",
     lambda: es.pretrained_kernel_gd(jnp.eye(3).at[0, 1].set(jnp.nan), jnp.ones(3), steps=1),
     ["pretrained_kernel_gd", "kernel_train", "finite"]),
    ("pretrained-gd-nan-f0",
     lambda: es.pretrained_kernel_gd(jnp.eye(3), jnp.ones(3), jnp.full(3, jnp.nan), steps=1),
     ["pretrained_kernel_gd", "f_pt_train", "finite"]),
    # ntsim.theory.stability
    ("loo-index-too-large", lambda: st.loo_weights(5, 7), ["loo_weights", "i", "[0, 5)", "7"]),
    ("loo-index-negative", lambda: st.loo_weights(5, -1), ["loo_weights", "i", "[0, 5)", "-1"]),
    ("loo-index-fractional", lambda: st.loo_weights(5, 2.5), ["loo_weights", "i", "integer"]),
    ("loo-index-bool", lambda: st.loo_weights(5, True), ["loo_weights", "i", "integer"]),
    ("loo-n-zero", lambda: st.loo_weights(0, 0), ["loo_weights", "n", "positive integer"]),
    ("mhloss-heads-zero", lambda: st.MHLossIdentitySetting(heads=0), ["heads", "≥ 1", "0"]),
    ("mhloss-instances-zero", lambda: st.MHLossIdentitySetting(instances=0), ["instances"]),
    ("mhloss-n-negative", lambda: st.MHLossIdentitySetting(n=-1), ["MHLossIdentitySetting.n"]),
    ("mhloss-k-float", lambda: st.MHLossIdentitySetting(k=2.5), ["k", "integer"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "words"), [c[1:] for c in CONCRETE_CASES], ids=[c[0] for c in CONCRETE_CASES]
)
def test_bad_input_raises_a_value_error_naming_it(call, words):
    with pytest.raises(ValueError) as info:
        jax.block_until_ready(call())
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)


# Under jit the values are tracers: the checked mode must stop the program, not return one.
JIT_CASES = [
    ("krr-jit-ridge", lambda r: core.kernel_ridge_regression(K, Y, ridge=r).train, -1.0,
     ["kernel_ridge_regression", "ridge", "non-negative", "-1.0"]),
    ("krr-jit-indefinite", lambda k: core.kernel_ridge_regression(k, Y, ridge=0.1).train, -K,
     ["kernel_ridge_regression", "k_train_train", "semi-definite"]),
    ("krr-jit-nan-kernel", lambda k: core.kernel_ridge_regression(k, Y, ridge=0.1).train,
     K.at[0, 1].set(jnp.nan), ["k_train_train", "finite"]),
    ("krr-jit-nan-target", lambda y: core.kernel_ridge_regression(K, y, ridge=0.1).train, NAN_Y,
     ["y_train", "finite", "1 non-finite"]),
    ("gd-jit-unstable-step",
     lambda lr: core.kernel_gd_predictions(K, Y, learning_rate=lr, loss_scale=1.0,
                                           steps=jnp.array([1000])).train,
     100.0, ["kernel_gd_predictions", "learning_rate", "stability limit"]),
    ("gd-jit-negative-step",
     lambda lr: core.kernel_gd_predictions(K, Y, learning_rate=lr, loss_scale=1.0, steps=2).train,
     -0.1, ["learning_rate", "positive"]),
    ("gd-jit-negative-steps",
     lambda s: core.kernel_gd_predictions(K, Y, learning_rate=0.1, loss_scale=1.0, steps=s).train,
     jnp.array([2, -3]), ["steps", "non-negative integers", "-3"]),
    ("flow-jit-negative-time",
     lambda t: core.kernel_flow_predictions(K, Y, learning_rate=0.1, loss_scale=1.0,
                                            times=t).train,
     jnp.array([-1.0]), ["times", "non-negative"]),
    ("condition-jit-indefinite", core.condition_number, -K, ["condition_number", "semi-definite"]),
    ("rademacher-jit-radius",
     lambda r: core.local_rademacher_complexity(jnp.array([1.0, 0.5]), r), -1.0, ["radius"]),
    ("sobolev-jit-domain", es.sobolev_kernel, jnp.array([-2.0, 0.5]), ["x1", "[0, 1]"]),
    ("pretrained-gd-jit-indefinite",
     lambda k: es.pretrained_kernel_gd(k, jnp.ones(3), steps=jnp.array([5])).train,
     -jnp.eye(3), ["pretrained_kernel_gd", "semi-definite"]),
    ("loo-jit-index", lambda i: st.loo_weights(5, i), 7, ["loo_weights", "[0, 5)", "7"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "arg", "words"), [c[1:] for c in JIT_CASES], ids=[c[0] for c in JIT_CASES]
)
def test_under_jit_bad_input_stops_the_program_naming_it(fn, arg, words):
    with pytest.raises(RuntimeFailure) as info:
        jax.block_until_ready(jax.jit(fn)(arg))
    message = str(info.value)
    assert "ValueError" in message
    for word in words:
        assert word in message, (word, message)


def test_under_vmap_one_bad_instance_is_enough():
    ridges = jnp.array([0.1, 1.0, -1.0])
    fn = jax.vmap(lambda r: core.kernel_ridge_regression(K, Y, ridge=r).train)
    with pytest.raises(RuntimeFailure, match="ridge must be non-negative"):
        jax.block_until_ready(jax.jit(fn)(ridges))
    indices = jnp.array([0, 4, 5])  # eager vmap (no jit): the ValueError itself
    with pytest.raises(ValueError, match=r"i must be an index in \[0, 5\), got 5."):
        jax.block_until_ready(jax.vmap(lambda i: st.loo_weights(5, i))(indices))


def test_good_input_under_jit_gives_the_concrete_answer():
    """The checked mode adds no false alarm and changes no number: jit and concrete agree
    with the closed form ``K(K + ρI)⁻¹y`` computed independently."""
    oracle = np.asarray(K, float) @ np.linalg.solve(np.asarray(K, float) + 0.1 * np.eye(4), Y)
    jitted = jax.jit(lambda r: core.kernel_ridge_regression(K, Y, ridge=r).train)(0.1)
    np.testing.assert_allclose(jitted, oracle, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(jitted, jax.jit(lambda: _krr().train)())
    weights = jax.vmap(lambda i: st.loo_weights(5, i))(jnp.arange(5))
    np.testing.assert_allclose(weights, (1 - np.eye(5)) / 5, rtol=1e-7)  # one left out per row


def test_require_raises_now_when_concrete_and_at_run_time_when_traced():
    with pytest.raises(ValueError, match="f: x must be positive, got -2.0."):
        require(jnp.array(-2.0) <= 0, "f: x must be positive, got {}.", jnp.array(-2.0))
    require(jnp.array(False), "never raised {}.", 0)

    def f(x):
        require(x <= 0, "f: x must be positive, got {}.", x)
        return 2 * x

    assert float(jax.jit(f)(3.0)) == 6.0
    with pytest.raises(RuntimeFailure, match="f: x must be positive, got -2.0."):
        jax.block_until_ready(jax.jit(f)(-2.0))
    assert float(jax.grad(f)(3.0)) == 2.0  # the check is transparent to differentiation


def test_psd_check_admits_round_off_and_rejects_a_real_negative_eigenvalue():
    tol = psd_tolerance(np.float32)
    assert tol == pytest.approx(np.sqrt(np.finfo(np.float32).eps))
    require_psd_spectrum("f", "K", np.array([-0.5 * tol, 0.3, 1.0], np.float32))  # round-off
    with pytest.raises(ValueError, match="f: K must be positive semi-definite"):
        require_psd_spectrum("f", "K", np.array([-2 * tol, 0.3, 1.0], np.float32))
    with pytest.raises(ValueError, match="f: K must be positive semi-definite"):
        require_psd_spectrum("f", "K", np.array([0.0, np.nan], np.float32))


def test_index_and_finite_helpers_name_the_argument():
    require_index("f", "i", 4, 5)
    with pytest.raises(ValueError, match=r"f: i must be an index in \[0, 5\), got 5."):
        require_index("f", "i", 5, 5)
    require_finite("f", "x", np.zeros((0, 3)))  # nothing to check in an empty array
    with pytest.raises(ValueError, match=r"f: x must be finite .* got 2 non-finite"):
        require_finite("f", "x", np.array([np.nan, 1.0, np.inf]))
