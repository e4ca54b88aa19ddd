"""Causal decoder and byte corpora: an explicit-loop NumPy reference and corpus invariants."""

from __future__ import annotations

import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf

from ntsim.core import (
    arithmetic_corpus,
    causal_decoder,
    next_token_loss,
    sample_windows,
    stdlib_corpus,
)


def _reference_forward(params, tokens, num_heads):
    """GPT-2 pre-LN forward with explicit loops over positions (independent of the einsums)."""
    p = jax.tree.map(lambda a: np.asarray(a, np.float64), params)

    def ln(x, q):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return q["scale"] * (x - mu) / np.sqrt(var + 1e-5) + q["bias"]

    h = p["embed"][tokens] + p["position"][: len(tokens)]
    width = h.shape[1]
    dh = width // num_heads
    for block in p["blocks"]:
        a = block["attention"]
        x = ln(h, block["ln1"])
        qkv = x @ a["qkv"] + a["qkv_bias"]
        q, k, v = qkv[:, :width], qkv[:, width : 2 * width], qkv[:, 2 * width :]
        out = np.zeros_like(h)
        for head in range(num_heads):
            sl = slice(head * dh, (head + 1) * dh)
            for t in range(len(tokens)):
                scores = np.array([q[t, sl] @ k[s, sl] / math.sqrt(dh) for s in range(t + 1)])
                w = np.exp(scores - scores.max())
                w /= w.sum()
                out[t, sl] = sum(w[s] * v[s, sl] for s in range(t + 1))
        h = h + out @ a["out"] + a["out_bias"]
        m = block["mlp"]
        z = ln(h, block["ln2"]) @ m["w1"] + m["b1"]
        h = h + (0.5 * z * (1 + erf(z / math.sqrt(2)))) @ m["w2"] + m["b2"]
    return ln(h, p["ln_final"]) @ p["unembed"]


def _model_and_params(seed=0, **kwargs):
    settings = {"context": 8, "width": 12, "depth": 2, "num_heads": 3, "vocab_size": 20}
    settings.update(kwargs)
    model = causal_decoder(**settings)
    params = model.init(jax.random.PRNGKey(seed))
    # Larger weights than GPT-2's 0.02 so that attention is far from uniform.
    params = jax.tree.map(lambda a: a * 25.0 if a.ndim == 2 else a, params)
    return model, params


def test_decoder_matches_explicit_loop_reference():
    model, params = _model_and_params()
    tokens = jnp.asarray([3, 1, 4, 1, 5, 9, 2, 6])
    got = np.asarray(model.apply(params, tokens), np.float64)
    want = _reference_forward(params, np.asarray(tokens), num_heads=3)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


def test_decoder_is_causal():
    model, params = _model_and_params(seed=1)
    tokens = jnp.asarray([3, 1, 4, 1, 5, 9, 2, 6])
    changed = tokens.at[5].set(17)
    a, b = model.apply(params, tokens), model.apply(params, changed)
    np.testing.assert_array_equal(a[:5], b[:5])  # positions before the change: identical
    assert float(jnp.abs(a[5:] - b[5:]).max()) > 1e-3


def test_next_token_loss_is_cross_entropy():
    model, params = _model_and_params(seed=2)
    windows = jax.random.randint(jax.random.PRNGKey(3), (4, 9), 0, 20)
    logits = np.asarray(jax.vmap(model.apply, in_axes=(None, 0))(params, windows[:, :-1]))
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = np.asarray(windows[:, 1:])
    want = -np.mean(np.take_along_axis(logp, targets[..., None], -1))
    np.testing.assert_allclose(
        float(next_token_loss(model.apply, params, windows)), want, rtol=1e-5
    )


def test_decoder_rejects_bad_input():
    with pytest.raises(ValueError, match="divisible"):
        causal_decoder(context=8, width=10, depth=1, num_heads=3)
    model, params = _model_and_params()
    with pytest.raises(ValueError, match="context=8"):
        model.apply(params, jnp.zeros(9, jnp.int32))
    with pytest.raises(ValueError, match=r"\(B, T \+ 1\)"):
        next_token_loss(model.apply, params, jnp.zeros(5, jnp.int32))


def test_stdlib_corpus_splits_by_file_and_is_reproducible():
    corpus = stdlib_corpus(max_bytes=400_000)
    again = stdlib_corpus(max_bytes=400_000)
    assert corpus.sha256 == again.sha256
    assert corpus.train.dtype == np.uint8 and corpus.heldout.size > 0
    assert corpus.train.size + corpus.heldout.size >= 400_000
    text = corpus.train[:20_000].tobytes().decode("utf-8", errors="replace")
    assert "def " in text or "import " in text  # Python source
    with pytest.raises(ValueError, match="heldout_fraction"):
        stdlib_corpus(heldout_fraction=0.7)


def test_arithmetic_corpus_lines_are_correct():
    corpus = arithmetic_corpus(seed=4, num_lines=500)
    lines = (corpus.train.tobytes() + corpus.heldout.tobytes()).decode().splitlines()
    assert len(lines) == 500
    for line in lines:
        a, op, b, c = re.fullmatch(r"(\d+)([+-])(\d+)=(-?\d+)", line).groups()
        assert int(c) == (int(a) + int(b) if op == "+" else int(a) - int(b))


def test_sample_windows_are_contiguous_slices():
    data = jnp.arange(1000) % 256
    w = sample_windows(jax.random.PRNGKey(5), data, 16, 33)
    assert w.shape == (16, 33) and w.dtype == jnp.int32
    starts = np.asarray(w[:, 0])
    for row, s in zip(np.asarray(w), starts, strict=True):
        np.testing.assert_array_equal(row, np.asarray(data[s : s + 33]))
    with pytest.raises(ValueError, match="more than length"):
        sample_windows(jax.random.PRNGKey(0), data[:10], 2, 10)


def test_sample_windows_are_slices_of_the_stream():
    """Over many draws every window is a full, in-bounds slice of the stream (a start past
    ``N − length`` would run off the end, where JAX's gather clamps to the last token) and
    the starts reach the stream's last tenth (windows drawn from its whole length)."""
    data = jnp.arange(200, dtype=jnp.int32)  # distinct tokens: a window's content is its place
    length = 20
    w = np.asarray(sample_windows(jax.random.PRNGKey(11), data, 4096, length))
    starts = w[:, 0]
    np.testing.assert_array_equal(w, starts[:, None] + np.arange(length)[None, :])
    assert starts.min() == 0 and starts.max() + length <= data.shape[0]
    assert starts.max() >= 0.9 * (data.shape[0] - length)
