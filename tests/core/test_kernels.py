"""Empirical NTK: implementations agree, match independent oracles and neural-tangents."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import load_fixture
from jax.flatten_util import ravel_pytree

from ntsim.core import (
    attention_model,
    batched,
    empirical_ntk,
    empirical_ntk_fn,
    linear,
    mlp,
    ntk_vector_product_fn,
    random_signs,
    two_layer_relu,
)

IMPLEMENTATIONS = ("jacobian_contraction", "ntk_vector_products", "structured")
# float64 round-off on O(1)-entry kernels after a few hundred flops per entry.
RTOL64 = 1e-10
# The acceptance criterion of the foundation issue against neural-tangents' kernels.
RTOL_NT = 1e-5


def _flat_oracle(apply, x1, x2, params):
    """Independent oracle: forward-mode Jacobian of the raveled parameter vector, J1 J2ᵀ."""
    flat, unravel = ravel_pytree(params)

    def jac(x):
        return jax.jacfwd(lambda v: batched(apply)(unravel(v), x))(flat)  # (N, *S, P)

    j1, j2 = np.asarray(jac(x1)), np.asarray(jac(x2))
    return np.tensordot(j1, j2, axes=([-1], [-1]))  # (N1, *S, N2, *S)


def _relative_error(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


@pytest.fixture
def mlp_problem(x64, key):
    model = mlp((16, 16), 3, activation="tanh", parameterization="ntk", w_std=1.5, b_std=0.1)
    k1, k2, k3 = jax.random.split(key, 3)
    params = model.init(k1, jnp.ones(5))
    return model, params, jax.random.normal(k2, (6, 5)), jax.random.normal(k3, (4, 5))


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_full_kernel_matches_flat_jacobian_oracle(mlp_problem, implementation):
    model, params, x1, x2 = mlp_problem
    full = empirical_ntk(model.apply, x1, x2, params, trace_axes=(), implementation=implementation)
    oracle = _flat_oracle(model.apply, x1, x2, params).transpose(0, 2, 1, 3)  # NT zip layout
    assert full.shape == (6, 4, 3, 3)
    np.testing.assert_allclose(full, oracle, rtol=RTOL64, atol=1e-12)


@pytest.mark.parametrize(
    ("trace_axes", "diagonal_axes", "einsum"),
    [((-1,), (), "aibi->ab"), ((1,), (), "aibi->ab"), ((), (-1,), "aibi->abi")],
)
def test_trace_and_diagonal_axes(mlp_problem, trace_axes, diagonal_axes, einsum):
    model, params, x1, x2 = mlp_problem
    # Traced axes are averaged (neural-tangents convention): the trace over O = 3 outputs / 3.
    oracle = np.einsum(einsum, _flat_oracle(model.apply, x1, x2, params)) / (3 if trace_axes else 1)
    for implementation in IMPLEMENTATIONS:
        kernel = empirical_ntk(
            model.apply,
            x1,
            x2,
            params,
            trace_axes=trace_axes,
            diagonal_axes=diagonal_axes,
            implementation=implementation,
        )
        np.testing.assert_allclose(kernel, oracle, rtol=RTOL64, atol=1e-12)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_per_block_kernels_sum_to_full_and_are_each_a_jacobian_product(mlp_problem, implementation):
    model, params, x1, x2 = mlp_problem
    blocks = empirical_ntk(
        model.apply, x1, x2, params, per_block=True, implementation=implementation
    )
    assert jax.tree.structure(blocks) == jax.tree.structure(params)
    full = empirical_ntk(model.apply, x1, x2, params)
    np.testing.assert_allclose(sum(jax.tree.leaves(blocks)), full, rtol=RTOL64)
    # Last-layer bias block: ∂f_i/∂b_j = b_std·δ_ij, so the (averaged) trace is b_std² everywhere.
    np.testing.assert_allclose(blocks["layers"][-1]["b"], 0.1**2 * np.ones((6, 4)), rtol=1e-12)


@pytest.mark.parametrize("batch_size", [1, 4, 5, 64])
def test_chunked_evaluation_equals_unchunked(mlp_problem, batch_size):
    model, params, x1, x2 = mlp_problem
    full = empirical_ntk(model.apply, x1, x2, params, trace_axes=())
    chunked = empirical_ntk(model.apply, x1, x2, params, trace_axes=(), batch_size=batch_size)
    np.testing.assert_allclose(chunked, full, rtol=RTOL64, atol=1e-13)
    blocks = empirical_ntk(model.apply, x1, x2, params, per_block=True, batch_size=batch_size)
    np.testing.assert_allclose(
        sum(jax.tree.leaves(blocks)), full.trace(axis1=2, axis2=3) / 3, rtol=RTOL64
    )


def test_linear_model_kernel_is_gram_matrix(x64, key):
    x = jax.random.normal(key, (7, 4))
    kernel = empirical_ntk(linear().apply, x, None, {"w": jnp.zeros(4)})
    np.testing.assert_allclose(kernel, x @ x.T, rtol=1e-12)


def test_two_layer_relu_kernel_matches_activation_pattern_formula(x64, key):
    # Θ_ij = (1/m) x_i·x_j Σ_r 1{w_r·x_i > 0} 1{w_r·x_j > 0} (a_r² = 1), Du et al. 2019.
    k1, k2, k3 = jax.random.split(key, 3)
    model = two_layer_relu(random_signs(k1, 50))
    params = model.init(k2, jnp.ones(3))
    x = jax.random.normal(k3, (5, 3))
    active = (x @ params["w"].T > 0).astype(float)
    expected = (x @ x.T) * (active @ active.T) / 50
    for implementation in IMPLEMENTATIONS:
        kernel = empirical_ntk(model.apply, x, None, params, implementation=implementation)
        np.testing.assert_allclose(kernel, expected, rtol=1e-12)


def test_attention_implementations_agree_and_kernel_is_psd(x64, key):
    model = attention_model(
        width=8,
        num_heads=2,
        head_dim=4,
        ffn_width=8,
        logit_scaling="1/sqrt(d)",
        parameterization="standard",
    )
    k1, k2 = jax.random.split(key)
    params = model.init(k1, jnp.ones((3, 4)))
    x = jax.random.normal(k2, (5, 3, 4))
    jc, *others = (
        empirical_ntk(model.apply, x, None, params, implementation=i) for i in IMPLEMENTATIONS
    )
    for other in others:
        np.testing.assert_allclose(jc, other, rtol=RTOL64, atol=1e-12)
    np.testing.assert_allclose(jc, jc.T, rtol=RTOL64)
    assert np.linalg.eigvalsh(np.asarray(jc)).min() > -1e-10


def test_ntk_vector_product_equals_kernel_times_vector(mlp_problem):
    model, params, x1, x2 = mlp_problem
    v = jax.random.normal(jax.random.PRNGKey(3), (4, 3))
    full = empirical_ntk(model.apply, x1, x2, params, trace_axes=())  # (N1, N2, O, O)
    expected = np.einsum("abij,bj->ai", full, v)
    np.testing.assert_allclose(
        ntk_vector_product_fn(model.apply)(x1, x2, params, v), expected, rtol=RTOL64
    )


def test_jit_and_vmap_over_parameters_match_stacked_calls(mlp_problem):
    model, params, x1, x2 = mlp_problem
    ntk_fn = empirical_ntk_fn(model.apply)
    stacked = jax.tree.map(lambda p: jnp.stack([p, 2 * p]), params)
    vmapped = jax.vmap(ntk_fn, in_axes=(None, None, 0))(x1, x2, stacked)
    doubled = jax.tree.map(lambda p: 2 * p, params)
    np.testing.assert_allclose(vmapped[0], ntk_fn(x1, x2, params), rtol=RTOL64)
    np.testing.assert_allclose(vmapped[1], ntk_fn(x1, x2, doubled), rtol=RTOL64)


# --- neural-tangents fixtures (written by `make nt-fixtures`, committed) -----------------


def _nt_mlp_params(data, num_layers):
    return {"layers": [{"w": data[f"W{i}"], "b": data[f"b{i}"]} for i in range(num_layers)]}


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_mlp_kernels_match_neural_tangents(x64, implementation):
    data = load_fixture("nt_mlp_empirical")
    model = mlp((64, 64), 3, activation="relu", parameterization="ntk", w_std=1.5, b_std=0.1)
    params = _nt_mlp_params(data, 3)
    np.testing.assert_allclose(batched(model.apply)(params, data["x1"]), data["f_x1"], rtol=1e-10)
    tag = "jc" if implementation == "jacobian_contraction" else "vp"
    cases = {"trace": ((-1,), ()), "full": ((), ())}
    if tag == "jc":
        cases["diag"] = ((), (-1,))
    for name, (trace_axes, diagonal_axes) in cases.items():
        kernel = empirical_ntk(
            model.apply,
            data["x1"],
            data["x2"],
            params,
            trace_axes=trace_axes,
            diagonal_axes=diagonal_axes,
            implementation=implementation,
        )
        assert _relative_error(kernel, data[f"ntk_{tag}_{name}"]) < RTOL_NT, name
    same = empirical_ntk(model.apply, data["x1"], None, params, implementation=implementation)
    assert _relative_error(same, data["ntk_jc_x1x1_trace"]) < RTOL_NT


def test_two_axis_output_layout_matches_neural_tangents(x64):
    data = load_fixture("nt_mlp_2d_output")
    model = mlp((32, 32), 6, activation="relu", parameterization="ntk", w_std=1.5, b_std=0.1)
    params = _nt_mlp_params(data, 3)

    def apply(p, x):
        return model.apply(p, x).reshape(2, 3)

    names = {"": (), "m1": (-1,), "1": (1,)}
    for t_name, t_axes in names.items():
        for d_name, d_axes in names.items():
            key = f"ntk_t{t_name}_d{d_name}"
            if key not in data:
                continue
            kernel = empirical_ntk(
                apply, data["x1"], data["x2"], params, trace_axes=t_axes, diagonal_axes=d_axes
            )
            assert kernel.shape == data[key].shape, key
            assert _relative_error(kernel, data[key]) < RTOL_NT, key


@pytest.mark.parametrize("scaling", ["1/d", "1/sqrt(d)"])
def test_attention_kernel_matches_neural_tangents(x64, scaling):
    data = load_fixture("nt_attention_empirical")
    model = attention_model(
        width=16,
        num_heads=2,
        head_dim=8,
        ffn_width=32,
        activation="gelu",
        logit_scaling=scaling,
        parameterization="ntk",
    )
    params = {
        "embed": {"w": data["embed_w"]},
        "attention": {k: data[k] for k in ("query", "key", "value", "out")},
        "ffn": {"w1": data["ffn_w1"], "w2": data["ffn_w2"]},
        "layer_norm": {"scale": data["ln_scale"], "bias": data["ln_bias"]},
        "head": {"w": data["head_w"]},
    }
    tag = "1overd" if scaling == "1/d" else "1oversqrtd"
    outputs = batched(model.apply)(params, data["x1"])
    np.testing.assert_allclose(outputs, data[f"f_x1_{tag}"].reshape(outputs.shape), rtol=1e-10)
    for implementation, fixture_tag in (
        ("jacobian_contraction", "jc"),
        ("ntk_vector_products", "vp"),
        ("structured", "jc"),
    ):
        key = f"ntk_{fixture_tag}_{tag}"
        if key not in data:
            continue
        kernel = empirical_ntk(
            model.apply, data["x1"], data["x2"], params, implementation=implementation
        )
        assert _relative_error(kernel, data[key]) < RTOL_NT, key


# --- bad input ----------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors(mlp_problem):
    model, params, x1, x2 = mlp_problem
    with pytest.raises(ValueError, match="implementation must be one of"):
        empirical_ntk_fn(model.apply, implementation="structural")
    with pytest.raises(ValueError, match="batch axis 0"):
        empirical_ntk(model.apply, x1, x2, params, trace_axes=(0,))
    with pytest.raises(ValueError, match="disjoint"):
        empirical_ntk(model.apply, x1, x2, params, trace_axes=(-1,), diagonal_axes=(1,))
    with pytest.raises(ValueError, match="out of range"):
        empirical_ntk(model.apply, x1, x2, params, trace_axes=(3,))
    with pytest.raises(ValueError, match="same shape"):
        empirical_ntk(model.apply, x1, x2[:, :4], params)
    with pytest.raises(ValueError, match=r"one example of shape \(5,\)"):
        empirical_ntk(model.apply, x1[:, :4], None, params)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        empirical_ntk_fn(model.apply, batch_size=0)


def test_tiled_ntk_compiled_temp_memory_does_not_grow_with_examples_or_parameters():
    """``batch_size`` tiles: XLA's own buffer plan (``memory_analysis``) of the compiled NTK
    holds two tiles' per-example quantities plus the ``N²`` kernel, not ``N`` examples' worth
    (the untiled program does), and under the structured rule no ``P``-sized Jacobian: ~14x
    the parameters costs at most ~4x the temporaries (the widths)."""

    def temp_bytes(width, n, batch_size, implementation="structured"):
        model = mlp((width, width), parameterization="ntk")
        params = model.init(jax.random.PRNGKey(0), jnp.ones(16))
        fn = empirical_ntk_fn(model.apply, implementation=implementation, batch_size=batch_size)
        compiled = fn.lower(jnp.ones((n, 16)), None, params).compile()
        return compiled.memory_analysis().temp_size_in_bytes

    kernel_bytes = 4 * (64**2 - 8**2)  # the float32 kernel's own growth from N = 8 to 64
    small = temp_bytes(64, 8, 4)
    assert temp_bytes(64, 64, 4) - small <= 2 * kernel_bytes  # the (tiles of the) kernel only
    assert temp_bytes(64, 64, None) - temp_bytes(64, 8, None) > 4 * kernel_bytes  # untiled
    jacobians = temp_bytes(64, 64, 4, "jacobian_contraction")
    assert jacobians - temp_bytes(64, 8, 4, "jacobian_contraction") <= 2 * kernel_bytes
    params_ratio = (16 * 256 + 256 * 256) / (16 * 64 + 64 * 64)  # ~14x the weights
    assert params_ratio > 13 and temp_bytes(256, 8, 4) < 4.5 * small


def test_ntk_of_a_batch_of_scalar_examples():
    """x of shape (n,): each example a scalar. f(w, x) = w₀x + w₁x², so Θ(x, x') = xx' + x²x'²."""
    from ntsim.core import empirical_ntk_fn

    x = jnp.array([0.5, -1.0, 2.0])
    ntk = empirical_ntk_fn(lambda w, x: w[0] * x + w[1] * x**2, trace_axes=())
    expected = np.outer(x, x) + np.outer(x**2, x**2)
    np.testing.assert_allclose(ntk(x, None, jnp.array([0.3, -0.2])), expected, rtol=1e-6)
