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
import ntsim.theory.linear_teachers as lt
import ntsim.theory.linearization as lz
import ntsim.theory.overtraining as ot
import ntsim.theory.stability as st
from ntsim._checks import (
    psd_tolerance,
    require,
    require_finite,
    require_index,
    require_psd_spectrum,
)

# Under jit the checked mode's error is a JaxRuntimeError from the first (Python) dispatch
# and a ValueError from jit's C++ fast path; its text holds the ValueError line either way.
RuntimeFailure = (jax.errors.JaxRuntimeError, ValueError)

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


_MODEL = core.mlp((8,), 1, parameterization="ntk")
_PARAMS = _MODEL.init(jax.random.PRNGKey(0), jnp.ones(3))
_SCALAR_PARAMS = {"w": jnp.ones(3)}


def _scalar_apply(params, x):  # f(x) = <x, w>: a scalar output, no axis to trace
    return jnp.dot(x, params["w"])


_X = jax.random.normal(jax.random.PRNGKey(1), (4, 3))


def _ntk(**kw):
    return core.empirical_ntk_fn(_MODEL.apply, **kw)


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
    # ntsim.core: empirical NTK, infinite-width kernels, data
    ("ntk-empty-batch", lambda: _ntk()(jnp.ones((0, 3)), None, _PARAMS),
     ["empirical_ntk_fn", "x1", "at least one", "(0, 3)"]),
    ("ntk-empty-x2", lambda: _ntk()(_X, jnp.ones((0, 3)), _PARAMS), ["x2", "at least one"]),
    ("ntk-trace-axes-int", lambda: _ntk(trace_axes=-1), ["trace_axes", "sequence", "(-1,)"]),
    ("ntk-scalar-output-fix",
     lambda: core.empirical_ntk_fn(_scalar_apply)(_X, None, _SCALAR_PARAMS),
     ["trace_axes", "batch axis 0", "scalar", "trace_axes=()"]),
    ("relu-kernels-nan-w-std", lambda: core.relu_mlp_kernels(_X, depth=2, w_std=float("nan"),
                                                             b_std=0.0), ["w_std", "positive"]),
    ("covariance-not-orthogonal", lambda: core.covariance(jnp.ones(3), basis=jnp.ones((3, 3))),
     ["covariance", "basis", "orthogonal", "max|VᵀV − I|", "random_orthogonal"]),
    ("loglog-negative-y", lambda: core.loglog_slope(jnp.arange(1.0, 5.0), -jnp.arange(1.0, 5.0)),
     ["loglog_slope", "y", "non-negative"]),
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
    # ntsim.theory.linearization
    ("network-n-zero", lambda: lz.NetworkSetting(n=0), ["NetworkSetting.n", "≥ 1", "0"]),
    ("network-instances-zero", lambda: lz.NetworkSetting(instances=0),
     ["NetworkSetting.instances", "≥ 1"]),
    ("network-width-negative", lambda: lz.NetworkSetting(width=-3), ["NetworkSetting.width"]),
    ("network-steps-float", lambda: lz.NetworkSetting(steps=1.5), ["steps", "integer"]),
    ("krr-setting-width", lambda: lz.KrrSetting(width=-3), ["KrrSetting.width", "≥ 1"]),
    ("thm5-indefinite", lambda: lz.thm5_bounds(-jnp.eye(3), jnp.ones(3), 0.1),
     ["thm5_bounds", "kernel", "semi-definite", "JJᵀ"]),
    ("thm5-negative-ridge", lambda: lz.thm5_bounds(jnp.eye(3), jnp.ones(3), -0.1),
     ["thm5_bounds", "ridge", "non-negative"]),
    ("thm5-nan-kernel", lambda: lz.thm5_bounds(jnp.eye(3).at[0, 0].set(jnp.nan), jnp.ones(3), 0.1),
     ["thm5_bounds", "kernel", "finite"]),
    ("krr-risk-negative-ridge", lambda: lz.krr_train_risk(jnp.eye(3), jnp.ones(3), -1.0),
     ["krr_train_risk", "ridge", "-1.0"]),
    ("krr-risk-indefinite", lambda: lz.krr_train_risk(-jnp.eye(3), jnp.ones(3), 1.0),
     ["krr_train_risk", "semi-definite"]),
    ("weight-distance-negative-ridge",
     lambda: lz.weight_distance_limit(jnp.eye(3), jnp.ones(3), -1.0),
     ["weight_distance_limit", "ridge"]),
    ("residual-path-indefinite",
     lambda: lz.residual_path(-jnp.eye(2), jnp.ones(2), 0.1, jnp.array([1.0])),
     ["residual_path", "semi-definite"]),
    ("spectral-norm-nan", lambda: lz.spectral_norm(jnp.full((3, 3), jnp.nan)),
     ["spectral_norm", "matrix", "finite", "9 non-finite"]),
    ("spectral-norm-vector", lambda: lz.spectral_norm(jnp.ones(3)), ["spectral_norm", "ndim"]),
    ("thm6-extra-shape", lambda: lz.thm6_bounds(jnp.eye(3), jnp.eye(4)),
     ["thm6_bounds", "extra", "(3, 3)", "(4, 4)"]),
    # ntsim.theory.overtraining
    ("threshold-gap-reversed", lambda: ot.ThresholdSetting(ratio_gap=(2.2, 1.8)),
     ["ThresholdSetting.ratio_gap", "0 < lo < hi", "(2.2, 1.8)"]),
    ("threshold-gap-nan", lambda: ot.ThresholdSetting(ratio_gap=(float("nan"), 2.2)),
     ["ratio_gap"]),
    ("threshold-gap-negative", lambda: ot.ThresholdSetting(ratio_gap=(-1.0, 2.2)), ["ratio_gap"]),
    ("threshold-range-inside-gap", lambda: ot.ThresholdSetting(ratio_range=(0.3, 2.0)),
     ["ratio_range"]),
    ("fixed-point-negative-reg",
     lambda: ot.fixed_point(jnp.array([2.0, 1.0]), jnp.array([1.0, 0.5]), -1.0),
     ["fixed_point", "reg", "non-negative", "-1.0"]),
    ("fixed-point-printed-nan-reg", lambda: ot.fixed_point_printed(1.0, 2.0, float("nan")),
     ["fixed_point_printed", "reg", "finite"]),
    ("finetune-w2-shape",
     lambda: ot.finetune(jnp.eye(3), jnp.eye(4), jnp.eye(3), learning_rate=0.1, num_steps=5),
     ["finetune", "w2 (m, d)", "w2.shape=(4, 4)"]),
    ("finetune-a-ft-not-square",
     lambda: ot.finetune(jnp.eye(3), jnp.eye(3), jnp.ones((3, 2)), learning_rate=0.1,
                         num_steps=5),
     ["finetune", "a_ft must be square"]),
    ("inflection-empty", lambda: ot.inflection_point(jnp.zeros((0,))),
     ["inflection_point", "losses", "at least one", "(0,)"]),
    ("inflection-scalar", lambda: ot.inflection_point(1.0), ["inflection_point", "()"]),
    # ntsim.theory.linear_teachers
    ("alignment-d-negative", lambda: lt.CovarianceAlignmentSetting(d=-1),
     ["CovarianceAlignmentSetting.d", "≥ 2", "-1"]),
    ("alignment-top-equals-d", lambda: lt.CovarianceAlignmentSetting(d=20, top=20),
     ["CovarianceAlignmentSetting.top", "< d = 20", "20"]),
    ("alignment-top-value-nan", lambda: lt.CovarianceAlignmentSetting(top_value=float("nan")),
     ["top_value", "finite", "nan"]),
    ("alignment-values-reversed",
     lambda: lt.CovarianceAlignmentSetting(top_value=0.2, bottom_value=0.3),
     ["top_value", "must exceed bottom_value = 0.3", "0.2"]),
    ("alignment-norm-zero", lambda: lt.CovarianceAlignmentSetting(norm=0.0), ["norm", "> 0"]),
    ("alignment-repeats-one", lambda: lt.CovarianceAlignmentSetting(repeats=1),
     ["repeats", "≥ 2"]),
    ("alignment-bound-points-negative",
     lambda: lt.CovarianceAlignmentSetting(bound_points=-1), ["bound_points", "≥ 0"]),
    ("sizes-spectrum-negative", lambda: lt.SizesSetting(spectrum_range=(-1.0, 2.0)),
     ["SizesSetting.spectrum_range", "positive finite", "(-1.0, 2.0)"]),
    ("sizes-spectrum-zero", lambda: lt.SizesSetting(spectrum_range=(0.0, 2.0)),
     ["spectrum_range"]),
    ("population-risk-nan-weight",
     lambda: lt.population_risk(jnp.ones(5).at[0].set(jnp.nan), jnp.ones(5), jnp.eye(5)),
     ["population_risk", "w or theta_target", "finite"]),
    ("population-risk-nan-covariance",
     lambda: lt.population_risk(jnp.zeros(5), jnp.ones(5), jnp.eye(5).at[1, 1].set(jnp.inf)),
     ["population_risk", "covariance", "finite"]),
    ("population-risk-negative-covariance",
     lambda: lt.population_risk(jnp.ones(5), 2 * jnp.ones(5), -jnp.eye(5)),
     ["population_risk", "covariance", "positive semi-definite", "= -5 < 0"]),
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
    ("ntk-nan-input", lambda x: _ntk()(x, None, _PARAMS), _X.at[0, 0].set(jnp.nan),
     ["empirical_ntk_fn", "x1", "finite", "1 non-finite"]),
    ("ntk-structured-nan-input",
     lambda x: _ntk(implementation="structured")(x, None, _PARAMS), _X.at[0, 0].set(jnp.nan),
     ["empirical_ntk_fn", "x1", "finite"]),
    ("ntk-all-nan-batch", lambda x: _ntk()(x, None, _PARAMS), jnp.full((2, 3), jnp.nan),
     ["x1", "6 non-finite"]),
    ("ntk-nan-x2", lambda x: _ntk()(_X, x, _PARAMS), jnp.full((2, 3), jnp.inf), ["x2", "finite"]),
    ("ntk-nan-params", lambda p: _ntk()(_X, None, p),
     jax.tree.map(lambda a: a.at[(0,) * a.ndim].set(jnp.nan), _PARAMS),
     ["empirical_ntk_fn", "params", "finite"]),
    ("relu-kernels-jit-nan-w-std",
     lambda w: core.relu_mlp_kernels(_X, depth=2, w_std=w, b_std=0.0).ntk, jnp.nan,
     ["relu_mlp_kernels", "w_std", "positive and finite"]),
    ("relu-kernels-jit-negative-b-std",
     lambda b: core.relu_mlp_kernels(_X, depth=2, w_std=1.0, b_std=b).ntk, -1.0,
     ["relu_mlp_kernels", "b_std", "non-negative"]),
    ("relu-kernels-jit-nan-input",
     lambda x: core.relu_mlp_kernels(x, depth=1, w_std=1.0, b_std=0.0).ntk,
     _X.at[1, 1].set(jnp.nan), ["relu_mlp_kernels", "x1", "finite"]),
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
    indices = jnp.array([0, 4, 5])  # eager vmap (no jit) runs the same checked mode
    with pytest.raises(RuntimeFailure, match=r"i must be an index in \[0, 5\)"):
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
        require(-2.0, jnp.array(-2.0) <= 0, "f: x must be positive, got {}.", jnp.array(-2.0))
    assert require(3.0, jnp.array(False), "never raised {}.", 0) == 3.0

    def f(x):
        x = require(x, x <= 0, "f: x must be positive, got {}.", x)
        return 2 * x

    assert float(jax.jit(f)(3.0)) == 6.0
    with pytest.raises(RuntimeFailure, match="f: x must be positive, got -2.0."):
        jax.block_until_ready(jax.jit(f)(-2.0))
    assert float(jax.grad(f)(3.0)) == 2.0  # the check is transparent to differentiation
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(jnp.arange(1.0, 4.0)), [2.0, 4.0, 6.0])
    with pytest.raises(RuntimeFailure, match="f: x must be positive"):
        jax.block_until_ready(jax.jit(jax.vmap(f))(jnp.array([1.0, -1.0])))


def test_a_passing_check_calls_no_host_callback_even_under_vmap(monkeypatch):
    """Under vmap the condition is reduced over the batch (custom_vmap), so a good batch
    takes the passing branch: the host function is never called. A bad one calls it."""
    import ntsim._checks as checks

    calls = []

    def counting(message, value, *values):
        calls.append(np.shape(value))
        return checks._raise(message, values)

    monkeypatch.setattr(checks, "_host_raise", counting)

    def f(x):
        return require(x, x < 0, "f: x must be non-negative, got {}.", x)

    jax.block_until_ready(jax.jit(jax.vmap(f))(jnp.arange(5.0)))
    assert calls == []
    with pytest.raises(RuntimeFailure, match="must be non-negative"):
        jax.block_until_ready(jax.jit(jax.vmap(f))(jnp.array([1.0, -1.0, 2.0])))
    assert len(calls) == 1  # one call for the whole batch


def test_a_reversed_log_uniform_range_is_still_accepted():
    """Log-uniform sampling is symmetric in its ends, so (hi, lo) is a valid range."""
    assert lt.SizesSetting(spectrum_range=(2.0, 0.02)).spectrum_range == (2.0, 0.02)


def test_population_risk_admits_round_off_of_a_psd_covariance():
    """A PSD Σ whose rounding makes eᵀΣe a hair negative is not refused (risk = 0 exactly
    in exact arithmetic: e lies in the null space of Σ = uuᵀ)."""
    u = jnp.array([1.0, 1.0, 0.0]) / jnp.sqrt(2.0)
    e = jnp.array([1.0, -1.0, 0.0])
    risk = lt.population_risk(jnp.zeros(3), e, jnp.outer(u, u))
    assert abs(float(risk)) < 1e-6


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


# --- a parameter pytree that does not match its model (trial case C10) ------------------

_MLP = core.mlp((3,), parameterization="ntk")
_MLP_PARAMS = _MLP.init(jax.random.PRNGKey(0), jnp.ones(2))


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({}, ["mlp.apply", "pytree mlp.init returns", "missing 'layers'"]),
        ({"layers": _MLP_PARAMS["layers"][:1]}, ["mlp.apply", "must hold 2 layers", "got 1"]),
        (
            {"layers": [_MLP_PARAMS["layers"][0], {"w": _MLP_PARAMS["layers"][1]["w"]}]},
            ["mlp.apply layer 1", "missing 'b'"],
        ),
        ([jnp.ones(3)], ["mlp.apply", "a mapping with keys ('layers',)", "got a list"]),
    ],
    ids=["no-layers", "a-layer-short", "a-bias-missing", "not-a-mapping"],
)
def test_a_params_pytree_that_does_not_match_the_model_is_named(params, words):
    for call in (
        lambda: _MLP.apply(params, jnp.ones(2)),
        lambda: core.empirical_ntk(_MLP.apply, jnp.ones((2, 2)), None, params, trace_axes=()),
    ):
        with pytest.raises(ValueError) as info:
            call()
        for word in words:
            assert word in str(info.value), (word, str(info.value))


# --- a setting of another simulation (trial case T12) -------------------------------------


def _functions_taking_a_setting():
    import inspect

    found = []
    for package in (es, lt, lz, ot, st):
        for name in sorted(getattr(package, "__all__", ())):
            fn = getattr(package, name)
            if inspect.isfunction(fn) and "setting" in inspect.signature(fn).parameters:
                found.append(pytest.param(fn, id=f"{package.__name__.rsplit('.', 1)[1]}.{name}"))
    return found


class _NotASetting:
    pass


@pytest.mark.parametrize("fn", _functions_taking_a_setting())
def test_a_setting_of_the_wrong_type_is_refused_before_anything_runs(fn):
    import inspect

    kwargs = {
        p.name: None
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind is not p.VAR_POSITIONAL
    }
    kwargs["setting"] = _NotASetting()
    words = r"setting must (be an instance of \w+|have the fields)"
    with pytest.raises(TypeError, match=rf"{fn.__name__}: {words}"):
        fn(**kwargs)


# --- the second trial's library cases (NL01–NL39, C37) -------------------------------------

SECOND_TRIAL_CASES = [
    ("mean-ci-nan", lambda: core.mean_ci(np.array([1.0, np.nan, 2.0])),
     ValueError, ["mean_ci", "values must be finite", "1 non-finite"]),
    ("bootstrap-size-0", lambda: core.bootstrap_ci(lambda i: 0.0, 0),
     ValueError, ["bootstrap_ci", "size must be a positive integer", "0"]),
    ("spearman-nan", lambda: core.spearman(np.array([1.0, np.nan, 3.0]), np.arange(3.0)),
     ValueError, ["spearman", "a must be finite"]),
    ("gd-shrinkage-nan", lambda: es.gd_shrinkage(jnp.array([1.0, jnp.nan]), 0.5, 10),
     ValueError, ["gd_shrinkage", "eigenvalues must be finite"]),
    ("tree-distance-keys", lambda: core.tree_distance({"a": jnp.ones(3)}, {"b": jnp.ones(3)}),
     ValueError, ["tree_distance", "pytree structure of params0"]),
    ("tree-distance-shape", lambda: core.tree_distance({"a": jnp.ones(4)}, {"a": jnp.ones(3)}),
     ValueError, ["tree_distance", "params['a'] must have params0's shape (3,), got (4,)"]),
    ("gd-vector-loss", lambda: core.gradient_descent(lambda p: p**2, jnp.ones(3), num_steps=2,
                                                     learning_rate=0.1),
     ValueError, ["gradient_descent", "loss_fn must return a scalar", "(3,)"]),
    ("simulate-int-key", lambda: lt.simulate_aligned(jnp.array([1, 2, 3]), lt.AlignedSetting()),
     TypeError, ["simulate_aligned", "key must be one PRNG key", "shape (3,)"]),
    ("spectral-norm-empty", lambda: lz.spectral_norm(jnp.zeros((0, 0))),
     ValueError, ["spectral_norm", "at least one entry", "(0, 0)"]),
    ("krr-train-risk-shapes", lambda: lz.krr_train_risk(jnp.eye(3), jnp.ones(4), 0.1),
     ValueError, ["krr_train_risk", "targets must have shape (3,)", "(4,)"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [c[1:] for c in SECOND_TRIAL_CASES],
    ids=[c[0] for c in SECOND_TRIAL_CASES],
)
def test_second_trial_cases_raise_naming_the_argument(call, error, words):
    with pytest.raises(error) as info:
        jax.block_until_ready(call())
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_a_typed_key_and_a_legacy_key_are_both_accepted():
    setting = lt.AlignedSetting(d=8, n=3, draws=2)
    legacy = lt.simulate_aligned(jax.random.PRNGKey(0), setting).risks
    typed = lt.simulate_aligned(jax.random.key(0), setting).risks
    np.testing.assert_array_equal(legacy, typed)


def test_under_vmap_the_message_shows_the_first_failing_element():
    ridges = jnp.array([0.1, 0.2, -3.0, -4.0])
    fn = jax.jit(jax.vmap(lambda r: _krr(ridge=r).train))
    with pytest.raises(RuntimeFailure, match=r"got -3\.0 \(element \(2,\) of a vmapped batch\)"):
        jax.block_until_ready(fn(ridges))


def test_traced_checks_can_be_skipped_for_a_search_that_drops_bad_values():
    """Inside ``traced_checks_skipped`` a traced bad value gives the unchecked number (what
    ``ntsim falsify``'s search drops); outside, the same call stops with the error again
    (the unchecked trace is not reused: the caches are cleared on leaving)."""
    from ntsim._checks import traced_checks_skipped

    fn = jax.jit(lambda r: _krr(ridge=r).train)
    with traced_checks_skipped():
        assert jnp.all(jnp.isfinite(fn(-0.01)))  # a number, as before the checks existed
        with pytest.raises(ValueError, match="ridge must be non-negative"):
            _krr(ridge=-0.01)  # concrete values are still checked inside
    with pytest.raises(RuntimeFailure, match="ridge must be non-negative"):
        jax.block_until_ready(fn(-0.01))
