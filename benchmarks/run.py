"""``make bench``: performance as ratios measured within one run, on one machine.

Each benchmark times two ways of computing the same thing, after a warm-up call (so
compilation is excluded), takes the median of a few repeats, checks that both give the same
numbers, and reports the ratio. Absolute times are printed for context only; never compare
them across machines. Results go to ``benchmarks/results.json``.

Benchmarks:

* ``ntk_implementations`` — empirical NTK of a 3-hidden-layer ReLU MLP (d = 32, N = 128,
  scalar output) by Jacobian contraction vs NTK-vector products, at two widths.
* ``sweep_vmap_vs_loop`` — least-squares GD on K datasets: one ``ntsim.core.sweep`` (vmapped,
  sharded over the local devices) vs a Python loop over a jitted per-dataset function.
"""

from __future__ import annotations

import pathlib
import statistics
import time

import jax
import jax.numpy as jnp

from ntsim import _io
from ntsim.core import empirical_ntk_fn, gradient_descent, linear, mlp, mse_loss, sweep

REPEATS = 3  # median of 3 after one warm-up call


def _time(fn, *args) -> tuple[float, object]:
    out = jax.block_until_ready(fn(*args))  # warm-up: compile
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def bench_ntk_implementations(width: int) -> dict:
    model = mlp((width,) * 3, 1, activation="relu", parameterization="ntk", w_std=2**0.5)
    params = model.init(jax.random.PRNGKey(0), jnp.ones(32))
    x = jax.random.normal(jax.random.PRNGKey(1), (128, 32))
    t_jc, k_jc = _time(empirical_ntk_fn(model.apply), x, None, params)
    t_vp, k_vp = _time(
        empirical_ntk_fn(model.apply, implementation="ntk_vector_products"), x, None, params
    )
    error = float(jnp.linalg.norm(k_jc - k_vp) / jnp.linalg.norm(k_jc))
    return {
        "width": width,
        "jacobian_contraction_s": t_jc,
        "ntk_vector_products_s": t_vp,
        "ratio_jc_over_vp": t_jc / t_vp,
        "relative_difference": error,
    }


def bench_sweep_vmap_vs_loop(
    num_datasets: int = 64, n: int = 200, d: int = 20, steps: int = 500
) -> dict:
    def fit(key):
        kx, kw = jax.random.split(key)
        x = jax.random.normal(kx, (n, d))
        y = x @ jax.random.normal(kw, (d,))
        loss = mse_loss(linear().apply, x, y[:, None], loss_scale=1.0 / n)
        return gradient_descent(
            loss, {"w": jnp.zeros(d)}, learning_rate=0.1, num_steps=steps, throw=False
        ).params["w"]

    keys = jax.random.split(jax.random.PRNGKey(2), num_datasets)
    t_sweep, w_sweep = _time(lambda k: sweep(fit, k), keys)
    fit_jit = jax.jit(fit)
    t_loop, w_loop = _time(lambda k: jnp.stack([fit_jit(k[i]) for i in range(len(k))]), keys)
    return {
        "datasets": num_datasets,
        "sweep_s": t_sweep,
        "loop_s": t_loop,
        "speedup_sweep_over_loop": t_loop / t_sweep,
        "max_abs_difference": float(jnp.max(jnp.abs(w_sweep - w_loop))),
        "devices": jax.local_device_count(),
    }


def main() -> None:
    results = {
        "ntk_implementations": [bench_ntk_implementations(w) for w in (128, 512)],
        "sweep_vmap_vs_loop": bench_sweep_vmap_vs_loop(),
        "metadata": _io.run_metadata(),
    }
    for row in results["ntk_implementations"]:
        print(
            f"NTK width {row['width']:5d}: jacobian contraction / NTK-vector products "
            f"= {row['ratio_jc_over_vp']:.2f}  (rel. diff {row['relative_difference']:.1e})"
        )
    s = results["sweep_vmap_vs_loop"]
    print(
        f"sweep over {s['datasets']} datasets on {s['devices']} device(s): "
        f"{s['speedup_sweep_over_loop']:.1f}x faster than a jitted per-dataset loop"
    )
    path = pathlib.Path(__file__).with_name("results.json")
    _io.write_json(path, results)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
