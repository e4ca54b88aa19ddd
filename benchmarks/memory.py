"""Peak memory of the NTK of MiniLM-L6 on 100 sentences w.r.t. ALL 22.7M parameters.

Run in its own process (``python -m benchmarks.memory``; ``make bench`` does) so that the
peak resident set size belongs to this computation alone, read as the high-water mark of
this process's own address space (:func:`own_peak_rss_gb`). Not ``getrusage``'s
``ru_maxrss``: on Linux a child started by ``fork``/``vfork`` + ``exec`` inherits its
parent's peak there (the kernel carries the old address space's high-water mark across
``exec``), so inside ``make bench`` it reported the fine-tuning benchmarks' peak, run
earlier in the parent (8.7 GB), not this kernel's. The structured rule handles the
36 dense kernels of the six blocks from layer inputs and cotangents and the embedding tables
from the looked-up ids; the biases and LayerNorms take per-example Jacobians from the same
backward pass. The kernel is built in tiles of ``BATCH × BATCH`` sentences.
For scale: the full Jacobian of 100 sentences is 100 x 22.7M fp32 = 9.1 GB per side.
Prints one JSON line.
"""

from __future__ import annotations

import json
import pathlib
import resource
import time

SENTENCES, MAX_LENGTH, BATCH = 100, 48, 25


def own_peak_rss_gb() -> float:
    """Peak resident set size (GiB) of this process's own address space since ``exec``.

    ``VmHWM`` of ``/proc/self/status`` belongs to the current address space, which ``exec``
    replaces, so a child process never reports its parent's peak (``ru_maxrss`` does, see
    the module doc). Where ``/proc`` is missing (macOS) it falls back to ``ru_maxrss``
    (bytes there), which may then include the parent's peak.
    """
    status = pathlib.Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**30


def main() -> None:
    import jax
    import jax.numpy as jnp

    from ntsim.core import empirical_ntk_fn
    from ntsim.transformers import (
        BertEncoder,
        count_params,
        load_pretrained,
        load_text_dataset,
        load_tokenizer,
        mean_pool,
        tokenize,
    )

    config, params = load_pretrained("minilm-l6")
    texts, _ = load_text_dataset("rotten_tomatoes")
    tokens = tokenize(load_tokenizer(MAX_LENGTH), texts[:SENTENCES])
    examples = jnp.concatenate(
        [jnp.asarray(tokens["input_ids"]), jnp.asarray(tokens["attention_mask"])], axis=1
    )
    readout = jax.random.normal(jax.random.PRNGKey(0), (config.hidden_size,))
    encoder = BertEncoder(config)

    def apply(p, example):
        ids, mask = example[None, :MAX_LENGTH], example[None, MAX_LENGTH:]
        pooled = mean_pool(encoder.apply({"params": p}, ids, mask), mask)
        return pooled[0] @ readout[:, None] / config.hidden_size**0.5

    fn = empirical_ntk_fn(apply, implementation="structured", batch_size=BATCH)
    start = time.perf_counter()
    kernel = jax.block_until_ready(fn(examples, None, params))
    seconds = time.perf_counter() - start
    peak = own_peak_rss_gb()  # the NTK's peak (the check below holds 8 full Jacobians)
    eigenvalues = jnp.linalg.eigvalsh(kernel)
    check = 8  # the first 8 sentences by plain Jacobian contraction: an independent check
    reference = empirical_ntk_fn(apply, batch_size=4)(examples[:check], None, params)
    error = jnp.max(jnp.abs(kernel[:check, :check] - reference)) / jnp.max(jnp.abs(reference))
    error = float(jax.block_until_ready(error))
    print(json.dumps({
        "case": f"NTK MiniLM-L6, {SENTENCES} sentences x {MAX_LENGTH} tokens, all parameters",
        "parameters": count_params(params),
        "seconds_including_compilation": seconds,
        "peak_rss_gb": peak,
        "peak_rss_gb_with_check": own_peak_rss_gb(),
        "ru_maxrss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,  # ≥ parent
        "kernel_shape": list(kernel.shape),
        "min_eigenvalue_over_max": float(eigenvalues[0] / eigenvalues[-1]),
        "symmetry_error": float(jnp.max(jnp.abs(kernel - kernel.T)) / jnp.max(kernel)),
        "relative_error_vs_jacobian_contraction_8x8": error,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
