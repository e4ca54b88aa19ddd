"""``make bench``: performance as ratios measured within one run, on one machine.

Each case times ntsim against a reference computing the same thing, after a warm-up call
(compilation excluded), as the median of a few repeats, checks that both agree, and
reports ``ratio = reference time / ntsim time``. Absolute times are printed for context
only; never compare them across machines. Results go to ``benchmarks/results.json``; the
hand-written record with dates and machines is ``benchmarks/RESULTS.md``.

Cases (modules beside this file):

* :mod:`benchmarks.ntk` — the structured NTK rule vs Jacobian contraction / NTK-vector
  products (same run) and vs neural-tangents (``make bench-nt`` first, which writes
  ``benchmarks/nt_results.json`` from the pinned ``.venv-nt``), on the issue's 3-layer ReLU
  MLP at widths 512–2048 and a 2-layer attention model;
* :mod:`benchmarks.sweeps` — the head-tuning sweep's GFLOP/s against a 2048³ matmul timed
  in the same run, vmapped vs a per-dataset jitted loop and vs a Python loop over steps,
  the fused CPU kernel vs the XLA form; ``core.sweep`` vs a loop;
* :mod:`benchmarks.finetune` — seconds per MiniLM fine-tuning step (L3, and L6 as in the
  full-scale stability experiment), seeds vmapped vs a per-seed loop, GFLOP/s vs the peak;
* :mod:`benchmarks.memory` — peak memory of the NTK of MiniLM-L6 on 100 sentences w.r.t.
  all parameters (its own process, so the peak is its own).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp

from benchmarks import finetune, memory, ntk, sweeps
from benchmarks._timing import Row, time_call
from ntsim import _io
from ntsim.core import gradient_descent, linear, mse_loss, sweep


def bench_sweep_vmap_vs_loop(
    num_datasets: int = 64, n: int = 200, d: int = 20, steps: int = 500
) -> list[Row]:
    def fit(key):
        kx, kw = jax.random.split(key)
        x = jax.random.normal(kx, (n, d))
        y = x @ jax.random.normal(kw, (d,))
        loss = mse_loss(linear().apply, x, y[:, None], loss_scale=1.0 / n)
        return gradient_descent(
            loss, {"w": jnp.zeros(d)}, learning_rate=0.1, num_steps=steps, throw=False
        ).params["w"]

    keys = jax.random.split(jax.random.PRNGKey(2), num_datasets)
    t_sweep, w_sweep = time_call(lambda k: sweep(fit, k), keys)
    fit_jit = jax.jit(fit)
    t_loop, w_loop = time_call(lambda k: jnp.stack([fit_jit(k[i]) for i in range(len(k))]), keys)
    diff = float(jnp.max(jnp.abs(w_sweep - w_loop)))
    return [
        Row(
            case=f"core.sweep least squares, {num_datasets} datasets",
            ntsim_s=t_sweep,
            reference="per-dataset jitted loop",
            reference_s=t_loop,
            notes=f"{jax.local_device_count()} host device(s); max abs. diff {diff:.1e}",
        )
    ]


def bench_memory() -> list[Row]:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory"], capture_output=True, text=True, check=True
    )
    record = json.loads(result.stdout.strip().splitlines()[-1])
    return [
        Row(
            case=record["case"],
            ntsim_s=record["seconds_including_compilation"],
            peak_memory_gb=record["peak_rss_gb"],
            notes=f"{record['parameters'] / 1e6:.1f}M parameters; 8x8 block vs Jacobian "
            f"contraction rel. error {record['relative_error_vs_jacobian_contraction_8x8']:.1e}; "
            f"{record['peak_rss_gb_with_check']:.1f} GB with that check; this (parent) process "
            f"peaked at {memory.own_peak_rss_gb():.1f} GB before",
        )
    ]


def _format(row: Row) -> str:
    ratio = "" if row.ratio is None else f"{row.ratio:7.1f}x"
    ref = "" if row.reference_s is None else f"{row.reference_s:9.3g}"
    gflops = "" if row.gflops is None else f"{row.gflops:6.1f}"
    memory = "" if row.peak_memory_gb is None else f"{row.peak_memory_gb:5.1f}"
    return (
        f"| {row.case} | {row.ntsim_s:.3g} | {row.reference} | {ref} | {ratio} | {gflops} | "
        f"{memory} | {row.notes} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument(
        "--without-checkpoints", action="store_true",
        help="skip the cases that load the shipped MiniLM weights (fine-tuning steps, NTK "
        "memory): for a machine where only the code travels, e.g. a GPU host",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=pathlib.Path, default=pathlib.Path(__file__).with_name("results.json"),
        help="where the JSON goes (default benchmarks/results.json)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    peak = sweeps.matmul_peak_gflops()
    rows: list[Row] = []
    for width in ntk.MLP_WIDTHS:
        rows += ntk.bench_mlp(width)
    for width, tokens in ntk.ATTENTION_CASES:
        rows += ntk.bench_attention(width, tokens)
    rows += ntk.bench_flax_bert()
    rows += sweeps.bench_head_tuning_sweep(peak=peak)
    rows += bench_sweep_vmap_vs_loop()
    if not args.without_checkpoints:
        for checkpoint, seeds in finetune.CASES:
            rows += finetune.bench_finetune_step(checkpoint, seeds, peak=peak)
        rows += bench_memory()
    print(f"2048^3 fp32 matmul: {peak:.0f} GFLOP/s on {jax.devices()[0].device_kind}\n")
    print("| case | ntsim (s) | reference | reference (s) | ratio | GFLOP/s | peak GB | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(_format(row))
    path = args.out
    rows_json = [{**dataclasses.asdict(r), "ratio": r.ratio} for r in rows]
    _io.write_json(path, {"matmul_peak_gflops": peak, "rows": rows_json,
                          "metadata": _io.run_metadata()})  # fmt: skip
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
