"""Compiled programs of :func:`ntsim.transformers.finetune` that outlive one call.

Two costs of a fine-tuning call grow with the model, not with the run:

1. Arrays a function closes over (a pretrained encoder MixOut mixes toward, a method's term
   weights, a teacher) become constants of every program that calls it: XLA embeds them
   and constant-folds through them, so compilation time grows with their size (minutes for
   a 70 MB encoder) and the persistent compilation cache keys on their values.
   :func:`hoist_constants` traces the function once at its arguments' shapes and returns
   the same computation taking those arrays as an argument.
2. Every call builds its training segment anew: it traces the step (for a BERT encoder
   about 4 s on 2 CPU cores), lowers it and compiles it or loads it from the persistent
   cache (about 3 s more), even when an earlier call of the same process built the same
   program — e.g. FineTune, MixOut, LNSR and MMR, whose terms are data
   (:func:`ntsim.transformers.method_terms`). :func:`shared_segment` keeps built segments
   under a key, so such calls trace nothing.

**When a segment is shared.** Only for calls that pass the same ``share_program`` (any
hashable value chosen by the caller) *and* whose loss, evaluation and optimiser update
print the same jaxprs (:attr:`Hoisted.printed`, with their output trees) *and* whose static
loop values agree (``finetune`` adds those to the key). A printed jaxpr shows every
operation, shape, dtype and literal, but not the Python rules of a ``custom_jvp`` or
``custom_vjp`` (it prints ``jvp=<lambda>``): the ``share_program`` name is the caller's
promise that calls under it differ at most in the arrays their functions close over.
Without it nothing is shared. At most :data:`MAX_SHARED_SEGMENTS` segments are kept (the
oldest is dropped, and its compiled programs with it).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array

__all__ = ["MAX_SHARED_SEGMENTS", "Hoisted", "hoist_constants", "shared_segment"]

#: Segments kept by :func:`shared_segment` (each holds its compiled programs).
MAX_SHARED_SEGMENTS = 8

_SEGMENTS: collections.OrderedDict[Hashable, Callable] = collections.OrderedDict()


class Hoisted(NamedTuple):
    """``fn(consts, *args) == original(*args)``; ``consts`` the arrays it closed over."""

    fn: Callable
    consts: list[Array]
    jaxpr: Any  # the traced jaxpr (without its constants)
    out_tree: Any

    def printed(self) -> str:
        """The jaxpr and output tree as text: equal texts, equal computations up to the
        constants and the custom-derivative rules (module doc)."""
        return f"{self.jaxpr}\n{self.out_tree}"


def hoist_constants(fn: Callable, *example_args) -> Hoisted:
    """``fn`` traced once at ``example_args``' shapes, its closed-over arrays an argument.

    Examples:
      >>> import jax.numpy as jnp
      >>> weights = jnp.asarray([1.0, 2.0])
      >>> hoisted = hoist_constants(lambda x: x @ weights, jnp.ones(2))
      >>> float(hoisted.fn(hoisted.consts, jnp.asarray([3.0, 4.0])))
      11.0
    """
    closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*example_args)
    out_tree = jax.tree.structure(out_shape)

    def fn_with_consts(consts, *args):
        flat = jax.core.eval_jaxpr(closed.jaxpr, consts, *jax.tree.leaves(args))
        return jax.tree.unflatten(out_tree, flat)

    return Hoisted(fn_with_consts, [jnp.asarray(c) for c in closed.consts], closed.jaxpr, out_tree)


def shared_segment(key: Hashable, build: Callable[[], Callable]) -> Callable:
    """The segment kept under ``key``, or ``build()`` kept under it (module doc)."""
    segment = _SEGMENTS.get(key)
    if segment is None:
        segment = _SEGMENTS[key] = build()
        while len(_SEGMENTS) > MAX_SHARED_SEGMENTS:
            _SEGMENTS.popitem(last=False)
    else:
        _SEGMENTS.move_to_end(key)
    return segment
