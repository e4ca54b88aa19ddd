"""NTK benchmark cases: the structured rule against Jacobian contraction, NTK-vector products
and neural-tangents (whose times come from ``make bench-nt``, same inputs, same machine).

Models (the issue's): a 3-hidden-layer ReLU MLP, d = 32, scalar output, N = 128 inputs, NTK
parameterisation, at widths 512, 1024, 2048; and a 2-layer attention model
(``attention_model.py``: BERT-style, 4 heads, mean pooling, scalar readout; N = 64) at
``ATTENTION_CASES``, plus the same architecture through the Flax path.

The structured rule's cost for a per-token weight is ``N²T²(C + F)`` against ``N²·C·F`` for
Jacobian contraction, so its FLOP advantage on attention is ``C·F / (T²(C + F))``: 0.5–0.8
at width 256 and 16 tokens, 4–6 at width 512 and 8 tokens (the rest of the speed-up is the
Gram matmuls running at a higher rate than ``jacrev`` and the Jacobians' einsum).
"""

from __future__ import annotations

import json
import pathlib

import jax
import jax.numpy as jnp

from benchmarks import attention_model
from benchmarks._timing import Row, time_call
from ntsim.core import empirical_ntk_fn, mlp

MLP_WIDTHS = (512, 1024, 2048)
MLP_INPUTS, MLP_DIM = 128, 32
JACOBIAN_MAX_WIDTH = 1024  # the 2048 Jacobian alone is 128 x 8.4M floats = 4.3 GB per side
ATTENTION_CASES = ((256, 16), (512, 8))  # (width, tokens), as in nt_reference.py
ATTENTION_INPUTS = 64
NT_RESULTS = pathlib.Path(__file__).with_name("nt_results.json")


def mlp_problem(width: int):
    model = mlp((width,) * 3, 1, activation="relu", parameterization="ntk", w_std=2**0.5)
    params = model.init(jax.random.PRNGKey(0), jnp.ones(MLP_DIM))
    x = jax.random.normal(jax.random.PRNGKey(1), (MLP_INPUTS, MLP_DIM))
    return model.apply, params, x


def _nt_times() -> dict:
    """neural-tangents' timings from ``make bench-nt`` (its own pinned venv, on this machine's
    CPU); none on another backend, where they would compare two devices."""
    if not NT_RESULTS.exists() or jax.default_backend() != "cpu":
        return {}
    return json.loads(NT_RESULTS.read_text())


def _relative(a, b) -> float:
    return float(jnp.linalg.norm(a - b) / jnp.linalg.norm(b))


def _compare(case: str, apply, params, x, methods, nt_record: dict | None) -> list[Row]:
    """Structured vs the other ``methods`` (same run) and vs neural-tangents' best time."""
    times, kernels = {}, {}
    for method in ("structured", *methods):
        fn = empirical_ntk_fn(apply, implementation=method)
        times[method], kernels[method] = time_call(fn, x, None, params)
    best_other = min(methods, key=times.get)
    error = max(_relative(kernels["structured"], kernels[m]) for m in methods)
    rows = [
        Row(
            case=case,
            ntsim_s=times["structured"],
            reference=f"ntsim {best_other}",
            reference_s=times[best_other],
            notes=f"max rel. diff {error:.1e}",
        )
    ]
    if nt_record and nt_record["times"]:
        best = min(nt_record["times"], key=nt_record["times"].get)
        rows.append(
            Row(
                case=case,
                ntsim_s=times["structured"],
                reference=f"neural-tangents {best} (its fastest working)",
                reference_s=nt_record["times"][best],
                notes=nt_record["versions"],
            )
        )
    return rows


def bench_mlp(width: int) -> list[Row]:
    apply, params, x = mlp_problem(width)
    methods = ["ntk_vector_products"]
    if width <= JACOBIAN_MAX_WIDTH:
        methods.append("jacobian_contraction")
    nt = _nt_times().get("mlp", {}).get(str(width))
    return _compare(f"NTK MLP width {width}, N = {MLP_INPUTS}", apply, params, x, methods, nt)


def bench_attention(width: int, tokens: int) -> list[Row]:
    """The plain-JAX attention model (``attention_model.py``), which NT also runs. NTK-vector
    products are left out: 44 s (w 256) and 128 s (w 512) per call, 60-500x slower."""
    params, ids = attention_model.problem(ATTENTION_INPUTS, tokens, width)
    nt = _nt_times().get("attention", {}).get(f"{width}x{tokens}")
    case = f"NTK 2-layer attention, width {width}, {tokens} tokens, N = {ATTENTION_INPUTS}"
    return _compare(case, attention_model.apply, params, ids, ["jacobian_contraction"], nt)


def flax_bert_problem(inputs: int = 64, tokens: int = 16, width: int = 256):
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


def bench_flax_bert() -> list[Row]:
    """The same architecture through the Flax path (``ntsim.transformers.BertEncoder``)."""
    apply, params, ids = flax_bert_problem()
    case = "NTK Flax BERT encoder, 2 layers, width 256, 16 tokens, N = 64"
    return _compare(case, apply, params, ids, ["jacobian_contraction"], None)
