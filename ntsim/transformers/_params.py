"""Selecting parameters by path: which weights a fine-tuning run trains.

Every tuning mode of the Flax path — full, head-only, selected layers, LoRA factors — is a
boolean mask over the parameter pytree (``True`` = trained). Masks are built from
``"/"``-joined key paths matched with shell-style patterns (:mod:`fnmatch`), e.g.

* ``"head/*"`` — the classification head;
* ``"encoder/layer_2/*"`` — every weight of one transformer block;
* ``"*/query/kernel"`` — the query kernels of all blocks (LoRA targets).

A mask is consumed by :func:`ntsim.transformers.adamw` (frozen leaves get zero updates),
by the proximal term of :func:`ntsim.transformers.finetune`, and by
:func:`ntsim.transformers.subset_ntk_fn` (the NTK w.r.t. the selected leaves only).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

from ntsim._types import Params, PyTree

__all__ = [
    "count_params",
    "find_paths",
    "lora_targets",
    "merge_params",
    "param_mask",
    "path_string",
    "split_params",
]


def path_string(path: Sequence[Any]) -> str:
    """``"a/0/b"`` for a :func:`jax.tree_util` key path (dict keys, sequence indices).

    Examples:
      >>> import jax
      >>> [path_string(p) for p, _ in jax.tree_util.tree_leaves_with_path({"a": [1, 2]})]
      ['a/0', 'a/1']
    """
    parts = []
    for entry in path:
        for attribute in ("key", "idx", "name"):
            if hasattr(entry, attribute):
                parts.append(str(getattr(entry, attribute)))
                break
        else:
            parts.append(str(entry))
    return "/".join(parts)


def _as_patterns(where: str, patterns: str | Sequence[str]) -> tuple[str, ...]:
    patterns = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    if not all(isinstance(p, str) and p for p in patterns):
        raise ValueError(f"{where}: patterns must be non-empty strings, got {patterns!r}.")
    return patterns


def param_mask(
    params: Params, include: str | Sequence[str] = "*", exclude: str | Sequence[str] = ()
) -> PyTree[bool]:
    """Boolean pytree: ``True`` where a leaf's path matches ``include`` and not ``exclude``.

    Args:
      params: any parameter pytree.
      include: pattern(s) over ``"/"``-joined paths; ``"*"`` selects everything.
      exclude: pattern(s) removed from the selection.

    Raises:
      ValueError: a pattern that is not a non-empty string, or an ``include`` pattern that
        matches no leaf (almost always a typo in a path).

    Examples:
      >>> params = {"encoder": {"w": 1.0}, "head": {"w": 2.0, "b": 0.0}}
      >>> param_mask(params, "head/*")
      {'encoder': {'w': False}, 'head': {'b': True, 'w': True}}
      >>> param_mask(params, "*", exclude="*/b")["head"]
      {'b': False, 'w': True}
    """
    where = "param_mask"
    include = _as_patterns(where, include)
    exclude = () if not exclude else _as_patterns(where, exclude)
    paths = [path_string(p) for p, _ in jax.tree_util.tree_leaves_with_path(params)]
    for pattern in include:
        if not any(fnmatch.fnmatchcase(path, pattern) for path in paths):
            raise ValueError(
                f"{where}: include pattern {pattern!r} matches no parameter; paths look like "
                f"{paths[:4]!r}."
            )

    def selected(path, _):
        text = path_string(path)
        return any(fnmatch.fnmatchcase(text, p) for p in include) and not any(
            fnmatch.fnmatchcase(text, p) for p in exclude
        )

    return jax.tree_util.tree_map_with_path(selected, params)


def find_paths(params: Params, pattern: str) -> tuple[tuple[Any, ...], ...]:
    """Key paths (tuples usable with :func:`ntsim.core.get_path`) of leaves matching ``pattern``.

    Examples:
      >>> find_paths({"l0": {"query": {"kernel": 0}, "key": {"kernel": 0}}}, "*/query/kernel")
      (('l0', 'query', 'kernel'),)
    """
    out = []
    for path, _ in jax.tree_util.tree_leaves_with_path(params):
        if fnmatch.fnmatchcase(path_string(path), pattern):
            out.append(tuple(getattr(e, "key", getattr(e, "idx", e)) for e in path))
    if not out:
        raise ValueError(f"find_paths: pattern {pattern!r} matches no parameter.")
    return tuple(out)


LORA_DEFAULT_PATTERNS = ("*attention/query/kernel", "*attention/value/kernel")


def lora_targets(
    params: Params, patterns: str | Sequence[str] = LORA_DEFAULT_PATTERNS
) -> tuple[tuple[Any, ...], ...]:
    """Paths of the Dense kernels to wrap with LoRA: by default every block's query and value.

    Hu et al. (2021, Sec 7.1) adapt ``W_q`` and ``W_v``; pass other patterns for any Dense
    (e.g. ``"*/intermediate/kernel"``). The result is the ``targets`` argument of
    :func:`ntsim.core.lora`, which does the wrapping (``W_0 + (α/r) A B``, ``B = 0`` at init)
    on any ``apply(params, x)`` — a Flax ``module.apply`` included.

    Examples:
      >>> import jax.numpy as jnp
      >>> params = {"layer_0": {"attention": {n: {"kernel": jnp.zeros((4, 4))}
      ...                                     for n in ("query", "key", "value")}}}
      >>> lora_targets(params)
      (('layer_0', 'attention', 'query', 'kernel'), ('layer_0', 'attention', 'value', 'kernel'))
    """
    targets = []
    for pattern in _as_patterns("lora_targets", patterns):
        targets.extend(p for p in find_paths(params, pattern) if p not in targets)
    return tuple(targets)


def split_params(params: Params, mask: PyTree[bool]) -> tuple[Params, Params]:
    """``(trainable, frozen)``: two pytrees of ``params``' structure, ``None`` where unselected.

    :func:`merge_params` inverts it. ``None`` leaves are empty subtrees for JAX, so the
    trainable half can be differentiated, vmapped or optimised alone.
    """
    trainable = jax.tree.map(lambda p, m: p if m else None, params, mask)
    frozen = jax.tree.map(lambda p, m: None if m else p, params, mask)
    return trainable, frozen


def merge_params(trainable: Params, frozen: Params) -> Params:
    """Inverse of :func:`split_params`."""
    return jax.tree.map(
        lambda t, f: f if t is None else t, trainable, frozen, is_leaf=lambda x: x is None
    )


def count_params(params: Params, mask: PyTree[bool] | None = None) -> int:
    """Number of scalar parameters (of the selected leaves when ``mask`` is given).

    Examples:
      >>> count_params({"w": jnp.zeros((3, 4)), "b": jnp.zeros(4)})
      16
    """
    if mask is None:
        return int(sum(jnp.size(p) for p in jax.tree.leaves(params)))
    return int(
        sum(
            jnp.size(p)
            for p, m in zip(jax.tree.leaves(params), jax.tree.leaves(mask), strict=True)
            if m
        )
    )
