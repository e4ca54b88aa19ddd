"""Helpers shared by the early-stopping claims."""

from __future__ import annotations

from collections.abc import Callable

import jax

from ntsim.claims._base import vmap_instances

__all__ = ["map_instances"]


def map_instances(fn: Callable, keys: jax.Array, *, batch_size: int):
    """``fn`` over ``keys`` as ``lax.map`` of vmapped batches (one compilation, bounded memory).

    ``vmap`` over all 200 instances at once would hold every instance's intermediates at
    the same time (several GB for the Monte Carlo and stopping-time claims at full scale);
    ``batch_size`` instances are vmapped together instead.
    """
    return vmap_instances(fn, keys, batch_size=batch_size)
