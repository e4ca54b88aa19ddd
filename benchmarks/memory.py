"""Peak memory of the NTK of MiniLM-L6 on 100 sentences w.r.t. ALL 22.7M parameters.

Run in its own process (``python -m benchmarks.memory``; ``make bench`` does) so that the
peak resident set size belongs to this computation alone. The structured rule handles the
36 dense kernels of the six blocks from layer inputs and cotangents and the embedding tables
from the looked-up ids; the biases and LayerNorms take per-example Jacobians from the same
backward pass. The kernel is built in tiles of ``BATCH × BATCH`` sentences.
For scale: the full Jacobian of 100 sentences is 100 x 22.7M fp32 = 9.1 GB per side.
Prints one JSON line.
"""

from __future__ import annotations

import json
import resource
import time

SENTENCES, MAX_LENGTH, BATCH = 100, 48, 25


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
    eigenvalues = jnp.linalg.eigvalsh(kernel)
    check = 8  # the first 8 sentences by plain Jacobian contraction: an independent check
    reference = empirical_ntk_fn(apply, batch_size=4)(examples[:check], None, params)
    error = jnp.max(jnp.abs(kernel[:check, :check] - reference)) / jnp.max(jnp.abs(reference))
    print(json.dumps({
        "case": f"NTK MiniLM-L6, {SENTENCES} sentences x {MAX_LENGTH} tokens, all parameters",
        "parameters": count_params(params),
        "seconds_including_compilation": seconds,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "kernel_shape": list(kernel.shape),
        "min_eigenvalue_over_max": float(eigenvalues[0] / eigenvalues[-1]),
        "symmetry_error": float(jnp.max(jnp.abs(kernel - kernel.T)) / jnp.max(kernel)),
        "relative_error_vs_jacobian_contraction_8x8": float(error),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
