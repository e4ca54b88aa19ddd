"""NTK benchmark cases: the structured rule against Jacobian contraction, NTK-vector products
and neural-tangents (whose times come from ``make bench-nt``, same inputs, same machine).

Models (the issue's): a 3-hidden-layer ReLU MLP, d = 32, scalar output, N = 128 inputs, NTK
parameterisation, at widths 512, 1024, 2048; and a 2-layer attention model (a Flax BERT
encoder: 2 blocks, width 256, 4 heads, 16 tokens, mean pooling, scalar readout; N = 64).
"""

from __future__ import annotations

import json
import pathlib

import jax
import jax.numpy as jnp

from benchmarks._timing import Row, time_call
from ntsim.core import empirical_ntk_fn, mlp

MLP_WIDTHS = (512, 1024, 2048)
MLP_INPUTS, MLP_DIM = 128, 32
JACOBIAN_MAX_WIDTH = 1024  # the 2048 Jacobian alone is 128 x 8.4M floats = 4.3 GB per side
NT_RESULTS = pathlib.Path(__file__).with_name("nt_results.json")


def mlp_problem(width: int):
    model = mlp((width,) * 3, 1, activation="relu", parameterization="ntk", w_std=2**0.5)
    params = model.init(jax.random.PRNGKey(0), jnp.ones(MLP_DIM))
    x = jax.random.normal(jax.random.PRNGKey(1), (MLP_INPUTS, MLP_DIM))
    return model.apply, params, x


def _nt_times() -> dict:
    if not NT_RESULTS.exists():
        return {}
    return json.loads(NT_RESULTS.read_text())


def _relative(a, b) -> float:
    return float(jnp.linalg.norm(a - b) / jnp.linalg.norm(b))


def bench_mlp(width: int) -> list[Row]:
    apply, params, x = mlp_problem(width)
    times, kernels = {}, {}
    methods = ["structured", "ntk_vector_products"]
    if width <= JACOBIAN_MAX_WIDTH:
        methods.append("jacobian_contraction")
    for method in methods:
        fn = empirical_ntk_fn(apply, implementation=method)
        times[method], kernels[method] = time_call(fn, x, None, params)
    best_other = min((m for m in methods if m != "structured"), key=times.get)
    error = max(_relative(kernels["structured"], kernels[m]) for m in methods[1:])
    rows = [
        Row(
            case=f"NTK MLP width {width}",
            ntsim_s=times["structured"],
            reference=f"ntsim {best_other}",
            reference_s=times[best_other],
            notes=f"max rel. diff {error:.1e}",
        )
    ]
    nt = _nt_times().get("mlp", {}).get(str(width))
    if nt:
        best = min(nt["times"], key=nt["times"].get)
        rows.append(
            Row(
                case=f"NTK MLP width {width}",
                ntsim_s=times["structured"],
                reference=f"neural-tangents {best}",
                reference_s=nt["times"][best],
                notes=f"{nt['versions']} (values: tests/core/test_kernels.py vs NT fixtures)",
            )
        )
    return rows


def attention_problem(inputs: int = 64, tokens: int = 16, width: int = 256):
    from ntsim.transformers import BertConfig, BertEncoder, mean_pool

    config = BertConfig(vocab_size=512, hidden_size=width, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=4 * width,
                        max_position_embeddings=tokens, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)  # fmt: skip
    encoder = BertEncoder(config)
    ids = jax.random.randint(jax.random.PRNGKey(2), (inputs, tokens), 4, config.vocab_size)
    params = encoder.init(jax.random.PRNGKey(3), ids[:1])["params"]
    readout = jax.random.normal(jax.random.PRNGKey(4), (width,)) / width**0.5

    def apply(p, example):
        hidden = encoder.apply({"params": p}, example[None], jnp.ones_like(example)[None])
        return mean_pool(hidden, jnp.ones_like(example)[None])[0] @ readout[:, None]

    return apply, params, ids


def bench_attention() -> list[Row]:
    apply, params, ids = attention_problem()
    times, kernels = {}, {}
    for method in ("structured", "jacobian_contraction", "ntk_vector_products"):
        fn = empirical_ntk_fn(apply, implementation=method)
        times[method], kernels[method] = time_call(fn, ids, None, params)
    best_other = min(("jacobian_contraction", "ntk_vector_products"), key=times.get)
    error = max(_relative(kernels["structured"], kernels[m]) for m in times if m != "structured")
    return [
        Row(
            case="NTK 2-layer attention (BERT, w 256, T 16)",
            ntsim_s=times["structured"],
            reference=f"ntsim {best_other}",
            reference_s=times[best_other],
            notes=f"max rel. diff {error:.1e}",
        )
    ]
