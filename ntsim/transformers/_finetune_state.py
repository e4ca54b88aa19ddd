"""The state a fine-tuning run carries between segments, and its atomic ``.npz`` checkpoints.

:func:`save_finetune_state` writes the whole state (parameters, optimiser state, best
parameters, step, keys) in one ``.npz`` through a temporary file and ``os.replace``, so a
crash never leaves half a file; :func:`load_finetune_state` reads it back into the
structure of a freshly initialised state, and a resumed :func:`ntsim.transformers.finetune`
reproduces the uninterrupted run exactly.
"""

from __future__ import annotations

import os
import pathlib
import tempfile
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, Params, PRNGKey
from ntsim.transformers._params import path_string

__all__ = ["FinetuneState", "is_key", "load_finetune_state", "save_finetune_state"]


class FinetuneState(NamedTuple):
    """Everything a run carries between segments (one run; a seeds axis leads every leaf)."""

    params: Params
    anchor: Params  # θ_0 of this run (the proximal anchor)
    opt_state: Any
    best_params: Params
    best_score: Array  # best monitored dev value so far (lower is better after the sign)
    evals_since_best: Array
    stopped: Array  # bool: early stopping fired
    step: Array
    key: PRNGKey


def save_finetune_state(path: str | os.PathLike, state: FinetuneState) -> None:
    """Write ``state`` to ``path`` (``.npz``) atomically: a crash never leaves half a file."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {
        path_string(p): np.asarray(jax.random.key_data(v) if is_key(v) else v)
        for p, v in jax.tree_util.tree_leaves_with_path(state)
    }
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as f:
        np.savez(f, **arrays)
        tmp = f.name
    os.replace(tmp, path)


def is_key(value) -> bool:
    return isinstance(value, jax.Array) and jnp.issubdtype(value.dtype, jax.dtypes.prng_key)


def load_finetune_state(path: str | os.PathLike, like: FinetuneState) -> FinetuneState:
    """Read a :func:`save_finetune_state` file into the structure (and dtypes) of ``like``.

    Raises:
      ValueError: the file was written for a different parameter/optimiser structure.
    """
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as error:  # not an .npz (numpy then talks about pickles)
        raise ValueError(
            f"load_finetune_state: {path} is not a state written by save_finetune_state (not an "
            f".npz archive: {type(error).__name__})."
        ) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(
            f"load_finetune_state: {path} is not a state written by save_finetune_state (a "
            "single .npy array, not an .npz archive)."
        )
    with archive as f:
        stored = dict(f)
    leaves = jax.tree_util.tree_leaves_with_path(like)
    names = [path_string(p) for p, _ in leaves]
    if sorted(names) != sorted(stored):
        missing = sorted(set(names) - set(stored))[:3]
        raise ValueError(
            f"load_finetune_state: {path} does not match this run's state (e.g. missing {missing})."
        )
    values = []
    for name, (_, leaf) in zip(names, leaves, strict=True):
        value = stored[name]
        if np.shape(value) != np.shape(leaf):
            raise ValueError(
                f"load_finetune_state: {name} has shape {np.shape(value)} in {path}, "
                f"expected {np.shape(leaf)}."
            )
        values.append(jnp.asarray(value, dtype=jnp.asarray(leaf).dtype))
    return jax.tree.unflatten(jax.tree.structure(like), values)
