"""neural-tangents' side of the NTK benchmark, run by ``make bench-nt`` in ``.venv-nt``.

neural-tangents 0.6.5 needs jax 0.5.3, so this script runs in the pinned environment of
``make nt-fixtures`` and imports nothing from ntsim. It times NT's ``empirical_ntk_fn`` on
the benchmark's MLP (3 hidden ReLU layers, NTK parameterisation, d = 32, N = 128, scalar
output) with each of NT's implementations, and on the 2-layer attention model of
``attention_model.py`` (plain JAX, the very function ntsim differentiates) at the
``ATTENTION_CASES`` widths and lengths; records failures (structured derivatives fail on
every JAX version tried), and writes ``benchmarks/nt_results.json`` for ``make bench``.
"""

from __future__ import annotations

import json
import pathlib
import platform
import statistics
import time

import attention_model  # beside this script: run as `python benchmarks/nt_reference.py`
import jax
import neural_tangents as nt
from neural_tangents import stax

WIDTHS = (512, 1024, 2048)
JACOBIAN_MAX_WIDTH = 1024  # as on the ntsim side: the 2048 Jacobian is 4.3 GB per side
IMPLEMENTATIONS = {
    "jacobian_contraction": nt.NtkImplementation.JACOBIAN_CONTRACTION,
    "ntk_vector_products": nt.NtkImplementation.NTK_VECTOR_PRODUCTS,
    "structured_derivatives": nt.NtkImplementation.STRUCTURED_DERIVATIVES,
}


ATTENTION_CASES = ((256, 16), (512, 8))  # (width, tokens), N = 64: as in benchmarks/ntk.py
ATTENTION_INPUTS = 64
SLOW_S = 10.0  # a warm-up call slower than this is timed once more, not three times


def _time(fn, *args, repeats: int = 3) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    if time.perf_counter() - start > SLOW_S:
        repeats = 1
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _time_implementations(label: str, apply_fn, x, params, skip=()) -> dict:
    """NT's ``empirical_ntk_fn(x, None, params)`` time per implementation (or its failure)."""
    times, failed = {}, {}
    for name, implementation in IMPLEMENTATIONS.items():
        if name in skip:
            continue
        fn = jax.jit(nt.empirical_ntk_fn(apply_fn, trace_axes=(-1,), vmap_axes=0,
                                         implementation=implementation))  # fmt: skip
        try:
            times[name] = _time(fn, x, None, params)
        except Exception as error:  # noqa: BLE001 - recorded, this is what we measure
            failed[name] = f"{type(error).__name__}: {str(error)[:200]}"
        print(label, name, times.get(name, failed.get(name)), flush=True)
    versions = f"neural-tangents {nt.__version__}, jax {jax.__version__}"
    return {"times": times, "failed": failed, "versions": versions}


def main() -> None:
    x = jax.random.normal(jax.random.PRNGKey(1), (128, 32))
    mlp = {}
    for width in WIDTHS:
        layers = []
        for _ in range(3):
            layers += [stax.Dense(width, W_std=2**0.5, parameterization="ntk"), stax.Relu()]
        init_fn, apply_fn, _ = stax.serial(*layers, stax.Dense(1, parameterization="ntk"))
        _, params = init_fn(jax.random.PRNGKey(0), x.shape)
        skip = ("jacobian_contraction",) if width > JACOBIAN_MAX_WIDTH else ()
        mlp[str(width)] = _time_implementations(f"mlp {width}", apply_fn, x, params, skip)
    attention = {}
    for width, tokens in ATTENTION_CASES:
        params, ids = attention_model.problem(ATTENTION_INPUTS, tokens, width)
        attention[f"{width}x{tokens}"] = _time_implementations(
            f"attention {width}x{tokens}", attention_model.apply, ids, params
        )
    out = {
        "mlp": mlp,
        "attention": attention,
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
    }
    path = pathlib.Path(__file__).with_name("nt_results.json")
    path.write_text(json.dumps(out, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
