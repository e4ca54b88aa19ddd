"""Byte-level text corpora that exist on every machine, and random windows into them.

* :func:`stdlib_corpus` — the Python standard library's own ``.py`` sources (the
  pretraining corpus of the from-scratch decoders; no download, no package). Files are
  listed in sorted order and split into disjoint train / held-out sets *by file*, so
  held-out text is never seen in training.
* :func:`arithmetic_corpus` — synthetic lines ``"a+b=c\\n"`` from a seeded generator: a
  task far from source code, used as the *shifted* fine-tuning distribution.
* :func:`sample_windows` — random contiguous windows (``jax.random``; vmappable).

The stdlib text depends on the Python version; :class:`ByteCorpus` records it and a SHA-256
of the bytes so results can say exactly which text they were computed on.
"""

from __future__ import annotations

import hashlib
import pathlib
import platform
import sysconfig
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_positive_int

__all__ = ["ByteCorpus", "arithmetic_corpus", "sample_windows", "stdlib_corpus"]


class ByteCorpus(NamedTuple):
    """Train and held-out byte streams (``uint8`` numpy arrays) and their provenance."""

    train: np.ndarray
    heldout: np.ndarray
    description: str
    sha256: str


def _digest(*parts: np.ndarray) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.tobytes())
    return h.hexdigest()


def stdlib_corpus(
    *, max_bytes: int | None = None, heldout_fraction: float = 0.1, exclude_tests: bool = True
) -> ByteCorpus:
    """The top-level ``.py`` files of this Python's standard library as one byte stream.

    Args:
      max_bytes: stop adding files once the corpus holds this many bytes (``None``: all).
      heldout_fraction: every ``round(1/heldout_fraction)``-th file (in sorted order) goes
        to the held-out stream.
      exclude_tests: drop ``test_*.py`` files.

    Raises:
      FileNotFoundError: when the standard library's sources are not on disk (some minimal
        Python images ship only bytecode).
    """
    if not 0 < heldout_fraction < 0.5:
        raise ValueError(f"stdlib_corpus: heldout_fraction must lie in (0, 0.5), got "
                         f"{heldout_fraction}.")  # fmt: skip
    if max_bytes is not None:
        max_bytes = check_positive_int("stdlib_corpus", "max_bytes", max_bytes)
    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p for p in root.glob("*.py") if not (exclude_tests and p.name.startswith("test"))
    )
    if not files:
        raise FileNotFoundError(f"stdlib_corpus: no .py sources under {root}.")
    every = round(1 / heldout_fraction)
    train, heldout, total = [], [], 0
    for i, path in enumerate(files):
        data = path.read_bytes()
        (heldout if i % every == every - 1 else train).append(data)
        total += len(data)
        if max_bytes is not None and total >= max_bytes:
            break
    train_bytes = np.frombuffer(b"".join(train), dtype=np.uint8)
    heldout_bytes = np.frombuffer(b"".join(heldout), dtype=np.uint8)
    description = (
        f"Python {platform.python_version()} stdlib {root} top-level .py files "
        f"({len(train)} train / {len(heldout)} held-out files, {train_bytes.size} / "
        f"{heldout_bytes.size} bytes)"
    )
    return ByteCorpus(train_bytes, heldout_bytes, description, _digest(train_bytes, heldout_bytes))


def arithmetic_corpus(seed: int, num_lines: int, *, max_operand: int = 999) -> ByteCorpus:
    """Lines ``"a+b=c\\n"`` / ``"a-b=c\\n"`` with uniform operands (90% train, 10% held out)."""
    num_lines = check_positive_int("arithmetic_corpus", "num_lines", num_lines)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, max_operand + 1, size=(2, num_lines))
    plus = rng.random(num_lines) < 0.5
    lines = [
        f"{x}+{y}={x + y}\n" if p else f"{x}-{y}={x - y}\n"
        for x, y, p in zip(a, b, plus, strict=True)
    ]
    split = int(0.9 * num_lines)
    train = np.frombuffer("".join(lines[:split]).encode(), dtype=np.uint8)
    heldout = np.frombuffer("".join(lines[split:]).encode(), dtype=np.uint8)
    description = f"arithmetic lines a±b=c, operands ≤ {max_operand}, seed {seed}"
    return ByteCorpus(train, heldout, description, _digest(train, heldout))


def sample_windows(key: PRNGKey, data: Array, batch_size: int, length: int) -> Array:
    """``batch_size`` random contiguous windows of ``length`` tokens from ``data`` (int32).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> w = sample_windows(jax.random.PRNGKey(0), jnp.arange(100), 3, 5)
      >>> w.shape, bool(jnp.all(jnp.diff(w, axis=1) == 1))
      ((3, 5), True)
    """
    data = jnp.asarray(data)
    if data.shape[0] <= length:
        raise ValueError(
            f"sample_windows: data has {data.shape[0]} tokens, needs more than length={length}."
        )
    starts = jax.random.randint(key, (batch_size,), 0, data.shape[0] - length)
    index = starts[:, None] + jnp.arange(length)[None, :]
    return data[index].astype(jnp.int32)
