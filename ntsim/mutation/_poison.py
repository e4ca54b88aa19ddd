"""Traced checks that poison instead of calling back, so the claims' programs stay cacheable.

A check on a traced value (:func:`ntsim._checks.require`) raises through a
``jax.pure_callback`` in the failing branch of a ``lax.cond``. JAX never writes a program
with a host callback to its persistent compilation cache (the callback is a Python object of
one process), so every program that composes a checked public function under ``jit``
compiles afresh in every process and, since the worker clears JAX's in-memory caches
between mutants, for every mutant. Profiled 2026-12-02 on early stopping's four
learning-curve claims (quick scale, a fresh process, the cache warm): 91–102 s, of which
43–48 s compiled two such programs again; with the poisoning checks below, 43–45 s.

The mechanism belongs in :mod:`ntsim._checks` itself (a process-wide failure mode, as
equinox's ``EQX_ON_ERROR``); it lives here because any change to that module dates every
claim's record (it is on every path), so it moves there with the next change that re-records
them anyway.

:func:`poisoning_checks` swaps in, for the life of a mutation worker, a check whose failing
branch returns the value filled with NaN instead (``equinox``'s ``EQX_ON_ERROR=nan``): the
passing branch still returns the value itself, so a run whose checks pass is bit-identical,
and a run whose check fails carries NaN into what the claim reads, which the claims runner
reports as an error (a non-finite value), as the raised ``ValueError`` was. Values that
cannot hold NaN (integers, booleans: an index check) keep the raising check. The decision
primitives (``compare``, ``estimate_in``) reject non-finite numbers, so a claim that reads
the poisoned values through them errors; a check that first reduces them itself (a fraction
of comparisons, false for NaN) may see nothing, and a mutant that only a raising check had
stopped then shows as a survivor, listed in the matrix like any other. The baseline
and the mutants run under the same swap; the unit tests a survivor runs do not (they expect
the raise).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

__all__ = ["poisoning_checks"]


@contextlib.contextmanager
def poisoning_checks() -> Iterator[None]:
    """Inside the block, a failing check on a traced inexact value returns NaN (module doc)."""
    import jax
    import jax.numpy as jnp

    from ntsim import _checks

    raising = _checks._checked

    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def poisoning(message: str, value, failed, *values):
        if not jnp.issubdtype(jnp.result_type(value), jnp.inexact):
            return raising(message, value, failed, *values)
        flag = _checks._any_over_batch(jnp.any(failed))
        return jax.lax.cond(flag, lambda v: jnp.full_like(v, jnp.nan), lambda v: v, value)

    @poisoning.defjvp
    def _poisoning_jvp(message, primals, tangents):
        return poisoning(message, *primals), tangents[0]

    _checks._checked = poisoning
    try:
        yield
    finally:
        _checks._checked = raising
