"""Type aliases shared by every ntsim layer (one place, as in diffrax's ``_custom_types``).

These are documentation aids for signatures; runtime shape checks live in the validators
of :mod:`ntsim._validation`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from jaxtyping import Array, ArrayLike, Float, PyTree

__all__ = [
    "Array",
    "ArrayLike",
    "ApplyFn",
    "Float",
    "Kernel",
    "PRNGKey",
    "Params",
    "PyTree",
]

#: A ``jax.random`` key (new-style typed key or legacy ``uint32[2]``).
PRNGKey = jax.Array
#: Any pytree of arrays holding model parameters.
Params = PyTree[Any]
#: ``apply(params, x) -> y`` acting on ONE example (batching is the caller's ``vmap``).
ApplyFn = Callable[[Any, Array], Array]
#: A kernel matrix between two batches of inputs.
Kernel = Float[Array, "n1 n2"]
