"""Analytic infinite-width kernels: neural-tangents, Monte-Carlo oracles and closed forms."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import load_fixture
from scipy import stats

from ntsim.core import (
    batched,
    erf_mlp_kernels,
    linear_kernel,
    linear_mlp_kernels,
    mlp,
    random_signs,
    relu_mlp_kernels,
    two_layer_relu,
    two_layer_relu_hinf,
)

# The acceptance criterion against neural-tangents' analytic kernels (float64 fixtures).
RTOL_NT = 1e-5
# float64 round-off of a few dozen flops per entry with O(1) values.
RTOL64 = 1e-12
MLP_KERNELS = {"relu": relu_mlp_kernels, "erf": erf_mlp_kernels, "identity": linear_mlp_kernels}


def _relative_error(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


@pytest.fixture
def nt_fixture():
    return load_fixture("nt_relu_analytic")  # committed; a missing file is a failure


def _unit_rows(key, n, d):
    x = jax.random.normal(key, (n, d))
    return x / jnp.linalg.norm(x, axis=1, keepdims=True)


# ------------------------------------------------------------------ neural-tangents fixtures


@pytest.mark.parametrize("depth", [1, 3])
def test_relu_matches_neural_tangents(x64, nt_fixture, depth):
    f = nt_fixture
    k = relu_mlp_kernels(
        f["x1"], f["x2"], depth=depth, w_std=float(f["relu_W_std"]), b_std=float(f["relu_b_std"])
    )
    np.testing.assert_allclose(k.nngp, f[f"nngp_depth{depth}"], rtol=RTOL_NT)
    np.testing.assert_allclose(k.ntk, f[f"ntk_depth{depth}"], rtol=RTOL_NT)


def test_erf_matches_neural_tangents(x64, nt_fixture):
    f = nt_fixture
    w, b = float(f["erf_W_std"]), float(f["erf_b_std"])
    nngp, ntk = erf_mlp_kernels(f["x1"], f["x2"], depth=1, w_std=w, b_std=b)
    np.testing.assert_allclose(nngp, f["nngp_erf1"], rtol=RTOL_NT)
    np.testing.assert_allclose(ntk, f["ntk_erf1"], rtol=RTOL_NT)


def test_hinf_matches_neural_tangents(x64, nt_fixture):
    f = nt_fixture
    np.testing.assert_allclose(
        two_layer_relu_hinf(f["hinf_x1"], f["hinf_x2"]), f["hinf"], rtol=RTOL_NT
    )
    # The same H^inf is the NTK minus the readout NNGP of Dense(1,0)-Relu-Dense(1,0) on sqrt(d)u.
    scaled = [math.sqrt(f["hinf_x1"].shape[1]) * f[k] for k in ("hinf_x1", "hinf_x2")]
    nngp, ntk = relu_mlp_kernels(*scaled, depth=1, w_std=1.0, b_std=0.0)
    np.testing.assert_allclose(ntk, f["hinf_ntk"], rtol=RTOL_NT)
    np.testing.assert_allclose(ntk - nngp, f["hinf"], rtol=RTOL_NT, atol=1e-12)


# ------------------------------------------------------------- Monte-Carlo (finite width)


def _empirical_kernels(activation, depth, width, w_std, b_std, key, x1, x2):
    """NNGP and NTK of one random ``ntsim.core.mlp`` (NTK param.) at finite width.

    NTK: ``J1 J2ᵀ`` from ``jax.jacobian``. NNGP: ``σ_w² φ(h)·φ(h')/n + σ_b²`` from the last
    hidden layer (the readout expectation taken exactly, the hidden layers sampled).
    """
    model = mlp(
        (width,) * depth, 1, activation=activation, parameterization="ntk", w_std=w_std, b_std=b_std
    )
    x = jnp.concatenate([x1, x2])
    n1 = x1.shape[0]
    params = model.init(key, x[0])
    jac = jax.jacobian(lambda p: batched(model.apply)(p, x)[:, 0])(params)
    flat = jnp.concatenate([j.reshape(x.shape[0], -1) for j in jax.tree.leaves(jac)], axis=1)
    features = mlp(
        (width,) * (depth - 1),
        width,
        activation=activation,
        parameterization="ntk",
        w_std=w_std,
        b_std=b_std,
    )
    h = batched(features.apply)({"layers": params["layers"][:-1]}, x)
    g = {"relu": jax.nn.relu, "erf": jax.scipy.special.erf}[activation](h)
    nngp = w_std**2 * (g[:n1] @ g[n1:].T) / width + b_std**2
    return nngp, flat[:n1] @ flat[n1:].T


# (activation, depth, w_std, b_std, width, seeds, tolerance). A finite-width kernel deviates
# from its limit by a relative Frobenius fluctuation ~ c·sqrt(depth/width) plus a bias
# O(depth/width); averaging S seeds divides the fluctuation by sqrt(S). Measured with these
# keys (per seed -> mean of S): relu depth 1 at 2^15: 1.7% -> 0.9%; erf: 0.6% -> 0.3%;
# relu depth 3 at 512: 17% -> 5.4%. Tolerances are ~3x the expected error of the mean; a
# wrong recursion (a dropped readout NNGP term in the NTK, depth off by one) errs by >= 17%.
MC_CASES = [
    ("relu", 1, math.sqrt(2), 0.1, 2**15, 4, 0.03),
    ("erf", 1, 1.3, 0.2, 2**15, 4, 0.03),
    ("relu", 3, math.sqrt(2), 0.1, 512, 16, 0.12),
]


@pytest.mark.parametrize("activation,depth,w_std,b_std,width,seeds,tol", MC_CASES)
def test_mlp_kernels_match_wide_network(key, activation, depth, w_std, b_std, width, seeds, tol):
    # float32 is enough: the tolerance is set by Monte-Carlo error, not by round-off.
    k1, k2, k3 = jax.random.split(key, 3)
    x1, x2 = jax.random.normal(k1, (5, 4)), jax.random.normal(k2, (3, 4))
    run = lambda k: _empirical_kernels(activation, depth, width, w_std, b_std, k, x1, x2)
    nngp, ntk = jax.lax.map(run, jax.random.split(k3, seeds))
    exact = MLP_KERNELS[activation](x1, x2, depth=depth, w_std=w_std, b_std=b_std)
    assert _relative_error(nngp.mean(0), exact.nngp) < tol
    assert _relative_error(ntk.mean(0), exact.ntk) < tol


def _hinf_neuron_grams(key, x, width):
    """Per-neuron terms of the Gram of ``two_layer_relu`` w.r.t. ``W``: ``(width, N, N)``.

    Their sum is the model's NTK at this width; ``width/m`` times the sum of the first ``m``
    is the Gram of a width-``m`` model (the neurons are i.i.d.), so one Jacobian serves
    every width.
    """
    k_signs, k_init = jax.random.split(key)
    model = two_layer_relu(random_signs(k_signs, width))
    params = model.init(k_init, x[0])
    jac = jax.jacobian(lambda p: batched(model.apply)(p, x)[:, 0])(params)["w"]  # (N, m, d)
    return jnp.einsum("irk,jrk->rij", jac, jac)


def test_hinf_is_limit_of_two_layer_gram_at_rate_sqrt_width(x64, key):
    k_x, k_mc = jax.random.split(key)
    x = _unit_rows(k_x, 8, 5)
    exact = two_layer_relu_hinf(x)
    widths = (256, 1024, 4096)

    @jax.jit
    def rms_errors(keys):
        terms = jax.vmap(lambda k: _hinf_neuron_grams(k, x, widths[-1]))(keys)
        grams = [terms[:, :m].sum(axis=1) * (widths[-1] / m) for m in widths]
        return jnp.stack([jnp.sqrt(jnp.mean(jnp.sum((g - exact) ** 2, (1, 2)))) for g in grams])

    # H_m − H^inf is an average of m i.i.d. zero-mean matrices, so its RMS Frobenius norm is
    # exactly C·m^{-1/2}; 16 seeds estimate it to ~10%, i.e. the slope to ~±0.05 over 16x
    # (measured: −0.504).
    rms = np.asarray(rms_errors(jax.random.split(k_mc, 16)))
    slope = stats.linregress(np.log(widths), np.log(rms)).slope
    assert abs(slope + 0.5) < 0.15, (slope, rms)
    assert rms[-1] / float(jnp.linalg.norm(exact)) < 0.05  # measured 1.9%


# ----------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_relu_he_init_diagonal_closed_form(x64, depth):
    # σ_w² = 2, σ_b = 0: E[relu(u)²] = q/2, so Σ(x, x) = 2|x|²/d at every layer, and each
    # of the depth + 1 layers adds Σ(x, x) to the NTK: Θ(x, x) = (depth + 1)·2|x|²/d.
    x = jnp.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]])
    q = 2 * jnp.sum(x**2, axis=1) / 3
    nngp, ntk = relu_mlp_kernels(x, depth=depth, w_std=math.sqrt(2), b_std=0.0)
    np.testing.assert_allclose(jnp.diag(nngp), q, rtol=RTOL64)
    np.testing.assert_allclose(jnp.diag(ntk), (depth + 1) * q, rtol=RTOL64)


def test_relu_one_layer_angles(x64):
    # Depth 1, σ_w = 1, σ_b = 0, d = 2: Σ0 = x·x'/2. Orthogonal unit inputs (θ = π/2):
    # nngp = (1/2)(1/(2π)) and ntk = nngp + (1/4)·0; antipodal (θ = π): both 0.
    x = jnp.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    nngp, ntk = relu_mlp_kernels(x, depth=1, w_std=1.0, b_std=0.0)
    # atol: near cos θ = ±1, arccos turns an eps rounding of the cosine into a sqrt(eps) angle.
    np.testing.assert_allclose(nngp[0], [0.25, 1 / (4 * math.pi), 0.0], atol=1e-8)
    np.testing.assert_allclose(ntk[0], [0.5, 1 / (4 * math.pi), 0.0], atol=1e-8)


def test_erf_one_layer_diagonal_closed_form(x64):
    x = jnp.array([[0.3, -1.2], [2.0, 0.7]])
    w, b = 1.3, 0.2
    q = w**2 * jnp.sum(x**2, axis=1) / 2 + b**2
    expected_nngp = w**2 * (2 / math.pi) * jnp.arcsin(2 * q / (1 + 2 * q)) + b**2
    expected_ntk = expected_nngp + w**2 * (4 / math.pi) / jnp.sqrt(1 + 4 * q) * q
    nngp, ntk = erf_mlp_kernels(x, depth=1, w_std=w, b_std=b)
    np.testing.assert_allclose(jnp.diag(nngp), expected_nngp, rtol=RTOL64)
    np.testing.assert_allclose(jnp.diag(ntk), expected_ntk, rtol=RTOL64)


def test_linear_kernels_closed_form(x64, key):
    x1, x2 = jax.random.normal(key, (4, 3)), jax.random.normal(jax.random.fold_in(key, 1), (2, 3))
    np.testing.assert_allclose(
        linear_kernel(x1, x2, w_std=1.5, b_std=0.3), 2.25 * x1 @ x2.T / 3 + 0.09, rtol=RTOL64
    )
    # σ_b = 0: Σ = σ_w^{2(L+1)} x·x'/d and Θ = (L + 1) Σ (one equal term per layer).
    nngp, ntk = linear_mlp_kernels(x1, x2, depth=3, w_std=1.2, b_std=0.0)
    np.testing.assert_allclose(nngp, 1.2**8 * x1 @ x2.T / 3, rtol=RTOL64)
    np.testing.assert_allclose(ntk, 4 * nngp, rtol=RTOL64)
    # Depth-0 case of the recursion: one Dense layer's kernel is the MLP's first step.
    first = linear_mlp_kernels(x1, x2, depth=1, w_std=1.5, b_std=0.3).nngp
    np.testing.assert_allclose(first, 2.25 * linear_kernel(x1, x2, w_std=1.5, b_std=0.3) + 0.09)


def test_hinf_closed_form_and_psd(x64, key):
    x = jnp.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.6, 0.8]])
    h = two_layer_relu_hinf(x)
    np.testing.assert_allclose(jnp.diag(h), 0.5, rtol=RTOL64)  # |x|² (π − 0)/(2π)
    np.testing.assert_allclose(h[0, 1:3], 0.0, atol=1e-15)  # θ = π/2 (x·x' = 0) and θ = π
    np.testing.assert_allclose(h[0, 3], 0.6 * (math.pi - math.acos(0.6)) / (2 * math.pi))
    # H^inf − XXᵀ/4 = XXᵀ ∘ arcsin(cos θ)/(2π) ⪰ 0 (Schur product of PSD matrices).
    for k in jax.random.split(key, 5):
        u = _unit_rows(k, 20, 6)
        assert float(jnp.linalg.eigvalsh(two_layer_relu_hinf(u) - u @ u.T / 4)[0]) > -1e-12


def test_hinf_is_norm_homogeneous(x64, key):
    u = _unit_rows(key, 5, 3)
    scale = jnp.array([0.5, 1.0, 2.0, 3.0, 0.1])
    x = u * scale[:, None]
    np.testing.assert_allclose(
        two_layer_relu_hinf(x), scale[:, None] * two_layer_relu_hinf(u) * scale[None, :], rtol=1e-12
    )
    assert float(jnp.abs(two_layer_relu_hinf(jnp.zeros((1, 3)), u)).max()) == 0.0


# --------------------------------------------------------------- conventions and transforms


@pytest.mark.parametrize("activation", sorted(MLP_KERNELS))
def test_symmetry_none_and_transforms(x64, key, activation):
    fn = lambda a, b=None, w=1.4: MLP_KERNELS[activation](a, b, depth=2, w_std=w, b_std=0.1)
    x1, x2 = jax.random.normal(key, (4, 3)), jax.random.normal(jax.random.fold_in(key, 1), (2, 3))
    for a, b in zip(fn(x1), fn(x1, x1), strict=True):
        # x2=None pins cos θ = 1 on the diagonal; x2=x1 carries arccos's sqrt(eps) angle.
        np.testing.assert_allclose(a, b, rtol=1e-7)
        np.testing.assert_allclose(a, a.T, rtol=1e-12)
    for a, b in zip(fn(x1, x2), fn(x2, x1), strict=True):
        np.testing.assert_allclose(a, b.T, rtol=1e-12)
    for a, b in zip(jax.jit(fn)(x1, x2), fn(x1, x2), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    ws = jnp.array([0.5, 1.0, 2.0])
    batched_ntk = jax.vmap(lambda w: fn(x1, x2, w).ntk)(ws)
    np.testing.assert_allclose(batched_ntk, jnp.stack([fn(x1, x2, float(w)).ntk for w in ws]))


def test_dtype_is_preserved(key):
    x = jax.random.normal(key, (3, 2))
    assert relu_mlp_kernels(x, depth=2, w_std=1.0, b_std=0.0).ntk.dtype == jnp.float32
    assert two_layer_relu_hinf(jnp.array([[1, 0], [0, 1]])).dtype == jnp.float32
    with jax.enable_x64(True):
        assert linear_kernel(np.ones((2, 2))).dtype == jnp.float64


def test_relu_diagonal_exact_in_float32():
    # x2=None pins cos θ = 1 on the diagonal: no O(sqrt(eps)) spurious angle in float32.
    x = jnp.array([[0.3, 0.7, 1.1]])
    ntk = relu_mlp_kernels(x, depth=4, w_std=math.sqrt(2), b_std=0.0).ntk
    np.testing.assert_allclose(ntk[0, 0], 5 * 2 * float(jnp.sum(x**2)) / 3, rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(x1=np.ones(3)), "x1 must be a 2-D array"),
        (dict(x1=np.ones((2, 3)), x2=np.ones((2, 4))), "same feature dimension"),
        (dict(depth=0), "depth must be a positive integer"),
        (dict(depth=1.5), "depth must be a positive integer"),
        (dict(w_std=0.0), "w_std must be positive"),
        (dict(b_std=-0.1), "b_std must be non-negative"),
    ],
)
def test_bad_inputs_raise(kwargs, match):
    args = dict(x1=np.ones((2, 3)), x2=None, depth=2, w_std=1.0, b_std=0.0) | kwargs
    x1, x2 = args.pop("x1"), args.pop("x2")
    for fn in MLP_KERNELS.values():
        with pytest.raises(ValueError, match=match):
            fn(x1, x2, **args)


def test_bad_inputs_raise_simple_kernels():
    with pytest.raises(ValueError, match="x2 must be a 2-D array"):
        two_layer_relu_hinf(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="w_std must be positive"):
        linear_kernel(np.ones((2, 3)), w_std=-1.0)
    with pytest.raises(ValueError, match="b_std must be non-negative"):
        linear_kernel(np.ones((2, 3)), b_std=-1.0)
