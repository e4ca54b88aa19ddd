"""Sweep benchmark cases: the head-tuning sweep's FLOP rate against the machine's matmul peak,
and one vmapped program against a per-dataset jitted loop (Fu et al. 2023, Sec 4.3).

The sweep is full-batch GD of two logistic heads (``S`` and ``S^i``) on ``datasets``
separable datasets of ``points`` points in ``d`` dimensions for ``steps`` steps
(:func:`ntsim.theory.stability.head_tuning_gd`). Its useful work per step and dataset is
the margins ``W Z`` and the gradient ``c ⊙ σ(−m) Zᵀ``: ``2 · 2k(d + 1)n`` FLOPs for ``k``
heads (the sigmoid's own cost is not counted). The peak is a 2048³ fp32 matmul timed in
the same run. The datasets run in ``lax.map`` chunks of ``GD_CHUNK_SIZE`` (vmapped inside a
chunk), as :func:`ntsim.theory.stability.loo_sweep` runs them, so a chunk stays in cache.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from benchmarks._timing import Row, time_call
from ntsim.core import separable_dataset
from ntsim.theory.stability import head_tuning_gd, loo_weights
from ntsim.theory.stability._synthetic import GD_CHUNK_SIZE

HEADS = 2  # S and S^i


def matmul_peak_gflops(size: int = 2048) -> float:
    a = jax.random.normal(jax.random.PRNGKey(0), (size, size))
    seconds, _ = time_call(jax.jit(jnp.dot), a, a)
    return 2 * size**3 / seconds / 1e9


def _head_tuning(key, points: int, dim: int, steps: int):
    data = separable_dataset(key, points, dim, margin=0.1, radius=1.0, offset=0.2)
    weights = jnp.stack([jnp.full(points, 1.0 / points), loo_weights(points, 0)])
    run = head_tuning_gd(data.x, data.y, jnp.zeros((HEADS, dim + 1)), learning_rate=1.0,
                         record_steps=(steps,), sample_weights=weights)  # fmt: skip
    return run.weights[-1]


def bench_head_tuning_sweep(
    datasets: int = 64, points: int = 2000, dim: int = 10, steps: int = 2000, peak: float = 0.0
) -> list[Row]:
    keys = jax.random.split(jax.random.PRNGKey(5), datasets)
    one = jax.jit(lambda k: _head_tuning(k, points, dim, steps))
    one_dataset = lambda k: _head_tuning(k, points, dim, steps)  # noqa: E731
    vmapped = jax.jit(lambda ks: jax.lax.map(one_dataset, ks, batch_size=GD_CHUNK_SIZE))
    t_vmap, w_vmap = time_call(vmapped, keys)
    t_loop, w_loop = time_call(lambda ks: jnp.stack([one(k) for k in ks]), keys, repeats=1)
    flops = datasets * steps * 2 * 2 * HEADS * (dim + 1) * points
    gflops = flops / t_vmap / 1e9
    diff = float(jnp.max(jnp.abs(w_vmap - w_loop)) / jnp.max(jnp.abs(w_loop)))
    return [
        Row(
            case=f"head-tuning sweep {datasets}x{points}x{dim}, {steps} steps, S and S^i",
            ntsim_s=t_vmap,
            reference="per-dataset jitted loop",
            reference_s=t_loop,
            gflops=gflops,
            notes=f"{100 * gflops / peak:.0f}% of the {peak:.0f} GFLOP/s matmul peak; "
            f"max rel. diff {diff:.1e}",
        )
    ]
