"""Sweep benchmark cases: the head-tuning sweep's FLOP rate against the machine's matmul peak,
and one vmapped program against a per-dataset jitted loop (Fu et al. 2023, Sec 4.3).

The sweep is full-batch GD of two logistic heads (``S`` and ``S^i``) on ``datasets``
separable datasets of ``points`` points in ``d`` dimensions for ``steps`` steps
(:func:`ntsim.theory.stability.head_tuning_gd`). Its useful work per step and dataset is
the margins ``W Z`` and the gradient ``c ⊙ σ(−m) Zᵀ``: ``2 · 2k(d + 1)n`` FLOPs for ``k``
heads (the sigmoid's own cost is not counted). The peak is a 2048³ fp32 matmul timed in
the same run. The datasets run in ``lax.map`` chunks of ``GD_CHUNK_SIZE`` (vmapped inside a
chunk), as :func:`ntsim.theory.stability.loo_sweep` runs them, so a chunk stays in cache.

Same inputs, same run: the fused CPU kernel (``implementation="fused"``,
:func:`ntsim.core.logistic_gd_fused`: all datasets in one vmapped call, threaded over
datasets), and a Python loop over datasets and steps that calls a jitted single GD step (what
a user writes without ``lax``), timed on ``LOOP_STEPS`` steps and scaled to ``steps``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from benchmarks._timing import Row, time_call
from ntsim.core import fused_logistic_available, separable_dataset
from ntsim.theory.stability import augment_features, head_tuning_gd, loo_weights
from ntsim.theory.stability._synthetic import GD_CHUNK_SIZE

HEADS = 2  # S and S^i
LOOP_STEPS = 20  # steps per dataset of the Python step loop (scaled to the full count)


def matmul_peak_gflops(size: int = 2048) -> float:
    a = jax.random.normal(jax.random.PRNGKey(0), (size, size))
    seconds, _ = time_call(jax.jit(jnp.dot), a, a)
    return 2 * size**3 / seconds / 1e9


def _data(key, points: int, dim: int):
    data = separable_dataset(key, points, dim, margin=0.1, radius=1.0, offset=0.2)
    weights = jnp.stack([jnp.full(points, 1.0 / points), loo_weights(points, 0)])
    return data, weights


def _head_tuning(key, points: int, dim: int, steps: int, implementation: str = "xla"):
    data, weights = _data(key, points, dim)
    run = head_tuning_gd(data.x, data.y, jnp.zeros((HEADS, dim + 1)), learning_rate=1.0,
                         record_steps=(steps,), sample_weights=weights,
                         implementation=implementation)  # fmt: skip
    return run.weights[-1]


@jax.jit
def _one_step(w, zt, c):
    """One GD step of ``head_tuning_gd`` (learning rate 1), for the Python step loop."""
    return w + (c * jax.nn.sigmoid(-(w @ zt))) @ zt.T


def _python_step_loop(inputs, steps: int):
    out = []
    for zt, c in inputs:
        w = jnp.zeros((HEADS, zt.shape[0]))
        for _ in range(steps):
            w = _one_step(w, zt, c)
        out.append(w)
    return jnp.stack(out)


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
    loop_gflops = flops / t_loop / 1e9
    diff = float(jnp.max(jnp.abs(w_vmap - w_loop)) / jnp.max(jnp.abs(w_loop)))
    case = f"head-tuning sweep {datasets}x{points}x{dim}, {steps} steps, S and S^i"
    rows = [
        Row(
            case=case,
            ntsim_s=t_vmap,
            reference="per-dataset jitted loop",
            reference_s=t_loop,
            gflops=gflops,
            notes=f"{100 * gflops / peak:.0f}% of the {peak:.0f} GFLOP/s matmul peak; "
            f"max rel. diff {diff:.1e}; the loop runs at {loop_gflops:.1f} GFLOP/s, so no "
            f"batched program can beat it by more than peak/rate = {peak / loop_gflops:.1f}x",
        )
    ]
    # A Python loop over datasets and steps calling one jitted step: fewer steps, scaled.
    # The data are made beforehand (the other rows generate them inside, < 1% of their time).
    prepare = jax.jit(lambda k: _data(k, points, dim))
    inputs = []
    for key in keys:
        data, c = prepare(key)
        inputs.append(((data.y[:, None] * augment_features(data.x)).T, c))
    t_steps, _ = time_call(lambda a: _python_step_loop(a, LOOP_STEPS), inputs, repeats=1)
    t_steps *= steps / LOOP_STEPS
    rows.append(
        Row(
            case=case + " (lax.map form)",
            ntsim_s=t_vmap,
            reference=f"Python loop over datasets and steps, jitted step ({LOOP_STEPS} steps, "
            f"scaled x{steps // LOOP_STEPS})",
            reference_s=t_steps,
            gflops=gflops,
            notes=f"the step loop runs at {flops / t_steps / 1e9:.2f} GFLOP/s "
            f"({1e6 * t_steps / (datasets * steps):.0f} us per step: dispatch-bound); data "
            "made beforehand",
        )
    )
    status = fused_logistic_available()
    if not status:
        rows.append(Row(case=case + " (fused kernel)", ntsim_s=float("nan"),
                        notes=f"skipped: {status.reason}"))  # fmt: skip
        return rows
    fused = jax.jit(jax.vmap(lambda k: _head_tuning(k, points, dim, steps, "fused")))
    t_fused, w_fused = time_call(fused, keys)
    fused_gflops = flops / t_fused / 1e9
    fused_diff = float(jnp.max(jnp.abs(w_fused - w_vmap)) / jnp.max(jnp.abs(w_vmap)))
    rows.append(
        Row(
            case=case + " (fused kernel, implementation='fused')",
            ntsim_s=t_fused,
            reference=f"XLA lax.map chunks of {GD_CHUNK_SIZE} (first row)",
            reference_s=t_vmap,
            gflops=fused_gflops,
            notes=f"{100 * fused_gflops / peak:.0f}% of the {peak:.0f} GFLOP/s matmul peak; "
            f"max rel. diff vs XLA {fused_diff:.1e}; {t_steps / t_fused:.0f}x the Python "
            "step loop",
        )
    )
    return rows
