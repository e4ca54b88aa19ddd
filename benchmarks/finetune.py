"""Time per fine-tuning step of MiniLM: seeds vmapped vs looped, on this backend.

The stability experiment (``experiments/stability/minilm_stability.py``) runs FineTune and
the other methods with ``S`` seeds per :func:`ntsim.transformers.finetune` call, either
vmapped (one program over the seeds axis) or looped (the single-seed program once per
seed); ``seed_batching="auto"`` picks the loop on the CPU and vmap on an accelerator, from
these measurements. Here one step of the FineTune loss (dropout on, AdamW, batch 16 × 48
tokens of Rotten Tomatoes) is timed from :attr:`FinetuneResult.segment_seconds` (the first
segment, which compiles, is dropped) for the ``S`` seeds both ways, in one process, and the
row's ratio is vmap time / loop time (above 1: the loop is faster). Achieved GFLOP/s
counts the matmuls of the forward and backward pass,
``3 · tokens · L · (2(4h² + 2h·f) + 4Th)`` per seed and step (``h`` hidden, ``f``
intermediate, ``T`` tokens per sentence; embeddings, softmax, GELU and LayerNorm not counted).
"""

from __future__ import annotations

import jax
import numpy as np

from benchmarks._timing import Row

BATCH, MAX_LENGTH, EVAL_EVERY, SEGMENTS = 16, 48, 4, 3
CASES = (("minilm-l3", 4), ("minilm-l6", 5))  # (checkpoint, seeds); L6 × 5 = the experiment


def _matmul_flops_per_seed_step(config) -> float:
    h, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_token = layers * (2 * (4 * h * h + 2 * h * f) + 4 * MAX_LENGTH * h)
    return 3.0 * BATCH * MAX_LENGTH * per_token


def _seconds_per_step(checkpoint: str, seeds: int, batching: str) -> tuple[float, object]:
    from ntsim.transformers import (
        MethodSettings,
        adamw,
        finetune,
        init_heads,
        learning_rate_schedule,
        load_pretrained,
        load_text_dataset,
        load_tokenizer,
        method_loss,
        tokenize,
    )

    config, encoder = load_pretrained(checkpoint)
    texts, labels = load_text_dataset("rotten_tomatoes")
    tokens = tokenize(load_tokenizer(MAX_LENGTH), texts[: 4 * BATCH])
    data = {
        "input_ids": jax.numpy.asarray(tokens["input_ids"]),
        "attention_mask": jax.numpy.asarray(tokens["attention_mask"]),
        "label": jax.numpy.asarray(np.asarray(labels[: 4 * BATCH]), jax.numpy.float32),
    }
    num_steps = SEGMENTS * EVAL_EVERY
    shape = learning_rate_schedule(1.0, total_steps=num_steps, warmup_steps=1, decay="linear")
    loss = method_loss(config, "finetune", MethodSettings(), encoder)
    build = lambda k: {"encoder": encoder, "head": init_heads(k, config.hidden_size, 1)}  # noqa: E731
    keys = jax.random.split(jax.random.PRNGKey(0), seeds)
    out = finetune(loss, build, data, optimizer=adamw(shape, peak=5e-5), num_steps=num_steps,
                   batch_size=BATCH, keys=keys, eval_every=EVAL_EVERY,
                   seed_batching=batching)  # fmt: skip
    return float(np.median(out.segment_seconds[1:])) / EVAL_EVERY, config


def bench_finetune_step(checkpoint: str, seeds: int, peak: float) -> list[Row]:
    """One row: ``seeds`` seeds looped (ntsim side) vs vmapped (reference), same run."""
    from ntsim.transformers import resolve_seed_batching

    looped, config = _seconds_per_step(checkpoint, seeds, "loop")
    vmapped, _ = _seconds_per_step(checkpoint, seeds, "vmap")
    gflops = seeds * _matmul_flops_per_seed_step(config) / min(looped, vmapped) / 1e9
    return [
        Row(
            case=f"fine-tuning step, {checkpoint}, {seeds} seeds looped, batch {BATCH} × "
            f"{MAX_LENGTH} tokens (FineTune, AdamW, dropout)",
            ntsim_s=looped,
            reference=f"the {seeds} seeds vmapped",
            reference_s=vmapped,
            gflops=gflops,
            notes=f"{100 * gflops / peak:.0f}% of the matmul peak (the faster way); "
            f'seed_batching="auto" is {resolve_seed_batching("auto")!r} on '
            f"{jax.default_backend()}",
        )
    ]
