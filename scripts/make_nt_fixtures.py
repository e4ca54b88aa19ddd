"""Write neural-tangents (NT) reference fixtures to ``tests/fixtures``.

Standalone oracle script: it must run in the pinned ``.venv-nt`` environment (jax 0.5.3,
neural-tangents 0.6.5, tensorflow) created by ``scripts/make_nt_fixtures.sh``, and it never
imports ``ntsim``. Every fixture is float64, built from fixed seeds, and stored with
``np.savez_compressed`` together with a ``versions`` string array. The script also writes
``tests/fixtures/README.md``, listing every key with its shape and meaning.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # 3 = silence TensorFlow's C++ logging
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

from pathlib import Path  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import neural_tangents as nt  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from neural_tangents import stax  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
N1, N2, D_IN = 6, 4, 5  # rows of x1, rows of x2, input dimension
JC, VP = nt.NtkImplementation.JACOBIAN_CONTRACTION, nt.NtkImplementation.NTK_VECTOR_PRODUCTS
TOL = 1e-10  # float64 agreement demanded of every internal cross-check
VERSIONS = np.array(
    [
        f"jax={jax.__version__}",
        f"jaxlib={jaxlib.__version__}",
        f"neural_tangents={nt.__version__}",
        f"tensorflow={tf.__version__}",
        f"numpy={np.__version__}",
    ]
)


class Fixture:
    """Collects named arrays with one-line descriptions, then saves them as one ``.npz``."""

    def __init__(self, name: str, summary: str):
        """Start an empty fixture file ``name`` described by ``summary``."""
        self.name, self.summary, self.items = name, summary, {}

    def put(self, key: str, value, doc: str) -> None:
        """Store ``value`` (converted to a NumPy array) under ``key`` with its description."""
        self.items[key] = (np.asarray(value), doc)

    def save(self) -> str:
        """Write the ``.npz`` (plus ``versions``) and return this file's README section."""
        arrays = {k: v for k, (v, _) in self.items.items()}
        np.savez_compressed(OUT / self.name, versions=VERSIONS, **arrays)
        rows = [f"| `{k}` | {v.shape} | {v.dtype} | {d} |" for k, (v, d) in self.items.items()]
        rows.append(f"| `versions` | {VERSIONS.shape} | str | library versions used |")
        head = ["| key | shape | dtype | meaning |", "| --- | --- | --- | --- |"]
        return "\n".join([f"## `{self.name}`", "", self.summary, "", *head, *rows, ""])


def normal(seed: int, shape) -> jnp.ndarray:
    """Standard normal float64 array from ``jax.random.PRNGKey(seed)``."""
    return jax.random.normal(jax.random.PRNGKey(seed), shape, dtype=jnp.float64)


def ntk(f, x1, x2, params, trace=(-1,), diag=(), impl=JC):
    """Empirical NTK of ``f`` through ``nt.empirical_ntk_fn`` with ``vmap_axes=0``."""
    kw = dict(trace_axes=trace, diagonal_axes=diag, vmap_axes=0, implementation=impl)
    return nt.empirical_ntk_fn(f, **kw)(x1, x2, params)


def mlp(widths, out_dim, w_std, b_std):
    """NT stax ReLU MLP: ``Dense(w), Relu()`` per hidden width, then ``Dense(out_dim)``."""
    layers = []
    for w in widths:
        layers += [stax.Dense(w, W_std=w_std, b_std=b_std, parameterization="ntk"), stax.Relu()]
    layers.append(stax.Dense(out_dim, W_std=w_std, b_std=b_std, parameterization="ntk"))
    return stax.serial(*layers)


def put_mlp_params(fx: Fixture, params) -> None:
    """Save NT Dense params as ``W0,b0,W1,b1,...``; NT's native bias shape (1, fan_out) is
    squeezed to (fan_out,)."""
    dense = [p for p in params if p]  # Relu layers carry an empty tuple
    for i, (w, b) in enumerate(dense):
        fx.put(f"W{i}", w, "Dense weight, (fan_in, fan_out), N(0,1)")
        fx.put(f"b{i}", b.reshape(-1), "Dense bias, (fan_out,), N(0,1) (NT stores (1, fan_out))")


def fixture_mlp_empirical() -> str:
    """A: empirical NTKs of a 3-layer ReLU MLP with 3 outputs, both implementations."""
    fx = Fixture("nt_mlp_empirical.npz", MLP_A_DOC)
    w_std, b_std = 1.5, 0.1  # weight / bias std of every Dense layer
    init_fn, apply_fn, _ = mlp([64, 64], 3, w_std, b_std)  # hidden widths 64, 64; 3 outputs
    _, params = init_fn(jax.random.PRNGKey(0), (-1, D_IN))
    x1, x2 = normal(1, (N1, D_IN)), normal(2, (N2, D_IN))
    fx.put("x1", x1, "inputs")
    fx.put("x2", x2, "inputs")
    fx.put("W_std", w_std, "Dense W_std")
    fx.put("b_std", b_std, "Dense b_std")
    put_mlp_params(fx, params)
    fx.put("f_x1", apply_fn(params, x1), "apply_fn(params, x1)")
    for tag, impl in [("jc", JC), ("vp", VP)]:
        fx.put(f"ntk_{tag}_trace", ntk(apply_fn, x1, x2, params, impl=impl), f"{tag}, trace=(-1,)")
        full = ntk(apply_fn, x1, x2, params, trace=(), impl=impl)
        fx.put(f"ntk_{tag}_full", full, f"{tag}, trace=(), layout (N1, N2, 3, 3)")
    for kind in ("trace", "full"):  # the two implementations must agree
        jc, vp = fx.items[f"ntk_jc_{kind}"][0], fx.items[f"ntk_vp_{kind}"][0]
        assert np.allclose(jc, vp, rtol=0, atol=TOL), kind
    diag = ntk(apply_fn, x1, x2, params, trace=(), diag=(-1,))
    fx.put("ntk_jc_diag", diag, "jc, trace=(), diagonal=(-1,): (N1, N2, 3)")
    fx.put("ntk_jc_x1x1_trace", ntk(apply_fn, x1, None, params), "jc, x2=None, trace=(-1,)")
    return fx.save()


# Fixture B cases: (trace_axes, diagonal_axes, key suffix, reference einsum, traced size). The
# einsum acts on per-example Jacobians J[n, a, b, p] (output axes a: 2, b: 3; flattened params p);
# "m1" spells the axis -1. NT averages traced axes, so the einsum is divided by their size.
CASES_B = [
    ((), (), "t_d", "iabp,jcdp->ijacbd", 1),
    ((-1,), (), "tm1_d", "iabp,jcbp->ijac", 3),
    ((), (-1,), "t_dm1", "iabp,jcbp->ijacb", 1),
    ((), (1,), "t_d1", "iabp,jadp->ijabd", 1),
    ((1,), (-1,), "t1_dm1", "iabp,jabp->ijb", 2),
    ((-1,), (1,), "tm1_d1", "iabp,jabp->ija", 3),
]


def fixture_mlp_2d_output() -> str:
    """B: empirical NTKs of an MLP whose per-example output is reshaped to (2, 3)."""
    fx = Fixture("nt_mlp_2d_output.npz", MLP_B_DOC)
    init_fn, apply_fn, _ = mlp([32, 32], 6, 1.5, 0.1)  # widths 32, 32; 6 = 2*3 outputs; A's stds
    _, params = init_fn(jax.random.PRNGKey(10), (-1, D_IN))
    x1, x2 = normal(11, (N1, D_IN)), normal(12, (N2, D_IN))

    def f(p, x):
        """Per-example output with two axes (2, 3)."""
        return apply_fn(p, x).reshape(x.shape[0], 2, 3)

    fx.put("x1", x1, "inputs")
    fx.put("x2", x2, "inputs")
    put_mlp_params(fx, params)
    fx.put("f_x1", f(params, x1), "f(params, x1) = apply_fn(params, x1).reshape(N1, 2, 3)")

    def jac(x):
        """Per-example Jacobian flattened over parameters: (N, 2, 3, P)."""
        leaves = jax.tree_util.tree_leaves(jax.jacobian(f)(params, x))
        return jnp.concatenate([leaf.reshape(x.shape[0], 2, 3, -1) for leaf in leaves], -1)

    j1, j2 = jac(x1), jac(x2)
    for trace, diag, tag, spec, size in CASES_B:
        k = ntk(f, x1, x2, params, trace=trace, diag=diag)
        assert np.allclose(k, jnp.einsum(spec, j1, j2) / size, rtol=0, atol=TOL), tag
        fx.put(f"ntk_{tag}", k, f"jc, trace_axes={trace}, diagonal_axes={diag}")
    return fx.save()


ATT = {"T": 4, "D": 16, "H": 2, "Dh": 8, "F": 32}  # tokens, model width, heads, head dim, FFN
LN_EPS = 1e-5  # layer-norm variance epsilon


def attention_params(seed: int) -> dict:
    """Attention-model params (NTK parameterization: weights N(0,1))."""
    d, h, dh, ff = ATT["D"], ATT["H"], ATT["Dh"], ATT["F"]
    qkv = (h, d, dh)
    shapes = dict(embed_w=(D_IN, d), query=qkv, key=qkv, value=qkv, out=(h * dh, d))
    shapes.update(ffn_w1=(d, ff), ffn_w2=(ff, d), head_w=(d, 1))
    p = {name: normal(seed + i, s) for i, (name, s) in enumerate(shapes.items())}
    p["ln_scale"] = 1.0 + 0.1 * normal(seed + 100, (d,))  # 0.1 = spread around scale 1
    p["ln_bias"] = 0.1 * normal(seed + 101, (d,))  # 0.1 = spread around bias 0
    return p


def attention_one(p: dict, x: jnp.ndarray, s: float) -> jnp.ndarray:
    """One example ``x`` (T, d_in) -> (1,): attention block, GELU FFN, LayerNorm, mean-pool."""
    d, h, dh, ff = ATT["D"], ATT["H"], ATT["Dh"], ATT["F"]
    hid = x @ p["embed_w"] / np.sqrt(D_IN)
    q, k, v = (jnp.einsum("td,hde->hte", hid, p[n]) / np.sqrt(d) for n in ("query", "key", "value"))
    logits = jnp.einsum("hte,hse->hts", q, k) * s
    a = jax.nn.softmax(logits, axis=-1) @ v  # (H, T, Dh)
    cat = jnp.transpose(a, (1, 0, 2)).reshape(x.shape[0], h * dh)  # head i -> cols i*Dh:(i+1)*Dh
    z = hid + cat @ p["out"] / np.sqrt(h * dh)
    z = z + jax.nn.gelu(z @ p["ffn_w1"] / np.sqrt(d), approximate=False) @ p["ffn_w2"] / np.sqrt(ff)
    mu, var = z.mean(-1, keepdims=True), z.var(-1, keepdims=True)  # biased variance
    u = (z - mu) / jnp.sqrt(var + LN_EPS) * p["ln_scale"] + p["ln_bias"]
    return u.mean(0) @ p["head_w"] / np.sqrt(d)


def fixture_attention() -> str:
    """C: empirical NTKs of a one-block attention model with 1/d and 1/sqrt(d) logit scaling."""
    fx = Fixture("nt_attention_empirical.npz", ATT_DOC)
    params = attention_params(20)
    x1, x2 = normal(30, (N1, ATT["T"], D_IN)), normal(31, (N2, ATT["T"], D_IN))
    fx.put("x1", x1, "inputs (N1, T, d_in)")
    fx.put("x2", x2, "inputs (N2, T, d_in)")
    for name, val in params.items():
        fx.put(name, val, "parameter (shared by both variants)")
    for name, val in ATT.items():
        fx.put(name, val, "model size")
    fx.put("ln_eps", LN_EPS, "layer-norm epsilon")
    for tag, s in [("1overd", 1.0 / ATT["Dh"]), ("1oversqrtd", 1.0 / np.sqrt(ATT["Dh"]))]:

        def f(p, x, s=s):
            """Batched model: vmap of ``attention_one`` over examples."""
            return jax.vmap(attention_one, in_axes=(None, 0, None))(p, x, s)

        fx.put(f"logit_scale_{tag}", s, "s multiplying q @ k.T")
        fx.put(f"f_x1_{tag}", f(params, x1), "outputs (N1, 1)")
        fx.put(f"ntk_jc_{tag}", ntk(f, x1, x2, params), "jc, trace=(-1,)")
        if tag == "1overd":
            fx.put("ntk_vp_1overd", ntk(f, x1, x2, params, impl=VP), "vp, trace=(-1,)")
            assert np.allclose(fx.items["ntk_vp_1overd"][0], fx.items["ntk_jc_1overd"][0], 0, TOL)
    return fx.save()


def fixture_analytic() -> str:
    """D: NT analytic infinite-width NNGP/NTK kernels (ReLU depth 1 and 3, H^inf, erf)."""
    fx = Fixture("nt_relu_analytic.npz", ANALYTIC_DOC)
    x1, x2 = normal(1, (N1, D_IN)), normal(2, (N2, D_IN))  # same seeds as fixture A
    fx.put("x1", x1, "inputs (== x1 of nt_mlp_empirical.npz)")
    fx.put("x2", x2, "inputs (== x2 of nt_mlp_empirical.npz)")
    w_std, b_std = np.sqrt(2.0), 0.1  # He-style ReLU weight std, small bias std
    fx.put("relu_W_std", w_std, "W_std of every Dense in the ReLU MLPs")
    fx.put("relu_b_std", b_std, "b_std of every Dense in the ReLU MLPs")
    for depth in (1, 3):
        _, _, kfn = mlp([512] * depth, 1, w_std, b_std)  # width 512 is ignored by kernel_fn
        k = kfn(x1, x2, ("nngp", "ntk"))
        fx.put(f"nngp_depth{depth}", k.nngp, f"ReLU MLP with {depth} hidden layer(s)")
        fx.put(f"ntk_depth{depth}", k.ntk, f"ReLU MLP with {depth} hidden layer(s)")

    u1, u2 = (
        u / jnp.linalg.norm(u, axis=1, keepdims=True)
        for u in (normal(40, (N1, D_IN)), normal(41, (N2, D_IN)))
    )
    net = [stax.Dense(512, W_std=1.0, b_std=0.0), stax.Relu(), stax.Dense(1, 1.0, 0.0)]
    _, _, kfn = stax.serial(*net)  # W_std=1, b_std=0: the plain two-layer ReLU net
    k = kfn(np.sqrt(D_IN) * u1, np.sqrt(D_IN) * u2, ("nngp", "ntk"))
    hinf = k.ntk - k.nngp
    cos = u1 @ u2.T
    closed = cos * (np.pi - jnp.arccos(cos)) / (2 * np.pi)
    err = float(jnp.max(jnp.abs(hinf - closed)))
    assert err < TOL, f"H^inf differs from the closed form by {err:.3e}"
    fx.put("hinf_x1", u1, "unit-norm rows (unscaled)")
    fx.put("hinf_x2", u2, "unit-norm rows (unscaled)")
    fx.put("hinf_ntk", k.ntk, "NTK of the 2-layer ReLU net on sqrt(d)*u")
    fx.put("hinf_nngp", k.nngp, "NNGP of the 2-layer ReLU net on sqrt(d)*u")
    fx.put("hinf", hinf, "hinf_ntk - hinf_nngp = u.u' (pi - arccos u.u') / (2 pi)")

    w_erf, b_erf = 1.3, 0.2  # erf-network weight / bias std
    fx.put("erf_W_std", w_erf, "W_std of both Dense layers of the erf MLP")
    fx.put("erf_b_std", b_erf, "b_std of both Dense layers of the erf MLP")
    erf_net = [stax.Dense(512, w_erf, b_erf), stax.Erf(), stax.Dense(1, w_erf, b_erf)]
    k = stax.serial(*erf_net)[2](x1, x2, ("nngp", "ntk"))
    fx.put("nngp_erf1", k.nngp, "Dense-Erf-Dense")
    fx.put("ntk_erf1", k.ntk, "Dense-Erf-Dense")
    return fx.save()


MLP_A_DOC = """NT `stax.serial(Dense(64), Relu(), Dense(64), Relu(), Dense(3))`, every Dense with
`W_std=1.5, b_std=0.1, parameterization='ntk'`; params from `init_fn(PRNGKey(0), (-1, 5))`.
Kernels from `nt.empirical_ntk_fn(apply_fn, trace_axes, diagonal_axes, vmap_axes=0,
implementation)`; `jc` = JACOBIAN_CONTRACTION (1), `vp` = NTK_VECTOR_PRODUCTS (2)."""
MLP_B_DOC = """Same MLP family (widths 32, 32, last `Dense(6)`, `W_std=1.5, b_std=0.1`), wrapped as
`f(params, x) = apply_fn(params, x).reshape(N, 2, 3)` so each example has output axes (2, 3).
Key `ntk_t{T}_d{D}` spells the axes: `t` / `d` alone = `()`, `m1` = `-1`, `1` = `1`. All
JACOBIAN_CONTRACTION with `vmap_axes=0`; each was checked against an explicit Jacobian
einsum (see Conventions)."""
ATT_DOC = """Plain-JAX attention model (T=4 tokens, d_in=5, D=16, H=2 heads, Dh=8, F=32),
NTK parameterization, per example: `h = x @ embed_w / sqrt(d_in)`; per head
`q,k,v = h @ {query,key,value}[i] / sqrt(D)`, `a_i = softmax(s * q @ k.T) @ v`;
`z = h + concat_i(a_i) @ out / sqrt(H*Dh)`;
`z += gelu_erf(z @ ffn_w1 / sqrt(D)) @ ffn_w2 / sqrt(F)`;
`u = (z - mean) / sqrt(var + 1e-5) * ln_scale + ln_bias` (per token, biased var);
`y = mean_t(u) @ head_w / sqrt(D)`. Variants: `s = 1/Dh` (`1overd`), `s = 1/sqrt(Dh)`
(`1oversqrtd`), one shared param set. Weights N(0,1); `ln_scale = 1 + 0.1 N(0,1)`,
`ln_bias = 0.1 N(0,1)`. Batched with `jax.vmap`; kernels with `trace_axes=(-1,)`, `vmap_axes=0`."""
ANALYTIC_DOC = """NT analytic `kernel_fn(x1, x2, ('nngp', 'ntk'))` (NTK parameterization; the width
512 does not enter). `depth{k}`: `k` x `[Dense(512, sqrt2, 0.1), Relu()]` then
`Dense(1, sqrt2, 0.1)`. `hinf_*`: `Dense(512, 1, 0), Relu(), Dense(1, 1, 0)` evaluated on
`sqrt(5) * u` for unit rows `u`; the script asserts `hinf` equals the closed form to 1e-10.
`*_erf1`: `Dense(512, 1.3, 0.2), Erf(), Dense(1, 1.3, 0.2)` on x1, x2."""
CONVENTIONS = """## Conventions observed in neural-tangents 0.6.5

* **Dense forward ('ntk')**: `y = W_std / sqrt(fan_in) * x @ W + b_std * b`, with `W` of shape
  `(fan_in, fan_out)` and `b` of shape `(1, fan_out)` in NT (saved here as `(fan_out,)`),
  both initialised N(0, 1).
* **Empirical kernel normalisation**: no 1/width factor; traced axes are *averaged*, i.e.
  `K = sum_p J1 J2^T` summed over `trace_axes` and divided by the product of their sizes.
* **Result axis layout**: `(N1, N2)` first, then the remaining per-example output axes in
  their original order; an untraced, non-diagonal axis appears as an adjacent pair
  `(x1 axis, x2 axis)`, a diagonal axis as one axis, a traced axis not at all. With output
  axes `a` (2) and `b` (3): `()/()` -> `(N1,N2,a,a',b,b')` = (6,4,2,2,3,3);
  `(-1,)/()` -> (6,4,2,2); `()/(-1,)` -> `(N1,N2,a,a',b)` = (6,4,2,2,3);
  `()/(1,)` -> `(N1,N2,a,b,b')` = (6,4,2,3,3); `(1,)/(-1,)` -> (6,4,3); `(-1,)/(1,)` -> (6,4,2).
* **Analytic kernels**: per output unit (no sum over the output width); `ntk` includes the
  `nngp` term of the last layer, so for the 2-layer ReLU net `ntk - nngp = H^inf`.
"""


def main() -> None:
    """Write all fixtures and the README."""
    OUT.mkdir(parents=True, exist_ok=True)
    sections = [fixture_mlp_empirical(), fixture_mlp_2d_output()]
    sections += [fixture_attention(), fixture_analytic()]
    versions = ", ".join(str(v) for v in VERSIONS)
    intro = f"""# neural-tangents reference fixtures

Written by `scripts/make_nt_fixtures.py` (float64, fixed seeds); do not edit by hand.
Regenerate with `make nt-fixtures` (= `bash scripts/make_nt_fixtures.sh`), which builds the
pinned `.venv-nt` and runs the script. Versions used: {versions}
(also the string array `versions` in every file).
"""
    (OUT / "README.md").write_text("\n".join([intro, CONVENTIONS, *sections]))
    for p in sorted(OUT.glob("*.npz")):
        print(f"{p.name}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
