"""Whether a mutant's *outputs* differ from the original function's on the claims' own inputs.

A mutant is equivalent when the mutated function returns what the original returns (to
round-off) on every call the claims make — not merely when the claims' numbers stay put: a
claim may read an output only through a threshold (a bound's violation fraction) or not at
all (a diagnostic), and a mutant such a claim cannot see is a survivor, not an equivalent.

:func:`paired` builds the stand-in that :func:`~ntsim.mutation._worker.apply_mutant` swaps
in: each outermost call runs the mutant, then the original on the same arguments, returns
the mutant's result and counts, in :data:`COUNTS`, whether the two results agreed. Under a
JAX trace (``jit``, ``vmap``, ``scan``) the comparison is computed in the program and
reported by an ``io_callback`` when it runs; a call that is only traced (``eval_shape``, or
a forward pass that reverse-mode differentiation drops) reports nothing, and a result that
cannot be compared (a function, an opaque object) is counted as unobservable. Calls made
inside either branch go straight to that branch (recursion). A concrete result that differs
is checked against a second run of the original: leaves that are not functions of the
arguments (a wall-clock time, an unseeded draw) are left out of the comparison.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import threading
import types
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["COUNTS", "OutputCounts", "compare_outputs", "paired", "reset_counts"]

#: Two outputs agree when ``max |mutant − original| ≤ RTOL · max |original| + ATOL`` per
#: array (round-off of a program that computes both, relative to the array's scale).
RTOL = 1e-6
ATOL = 1e-12


@dataclasses.dataclass
class OutputCounts:
    """Calls compared (``agreed`` + ``differed``) and calls whose result could not be."""

    agreed: int = 0
    differed: int = 0
    unobservable: int = 0

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


#: The counts of the mutant applied in this process (reset by :func:`reset_counts`).
COUNTS = OutputCounts()
_LOCK = threading.Lock()


def reset_counts() -> None:
    with _LOCK:
        COUNTS.agreed = COUNTS.differed = COUNTS.unobservable = 0


def _count(field: str) -> None:
    with _LOCK:
        setattr(COUNTS, field, getattr(COUNTS, field) + 1)


def _report_int(differs) -> np.ndarray:
    _count("differed" if bool(np.any(np.asarray(differs))) else "agreed")
    return np.zeros((), np.int32)


def _is_tracer(value) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


def _numeric(value) -> bool:
    import jax

    return isinstance(value, np.ndarray | np.generic | jax.Array | int | float | complex | bool)


def _key_data(value):
    import jax

    dtype = getattr(value, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return jax.random.key_data(value)
    return value


def _concrete_gaps(original, mutant) -> np.ndarray | bool:
    """Entry by entry, whether ``mutant`` differs from ``original`` (True: the shapes differ).

    Integers, booleans and other non-float values are compared exactly; floats to
    ``RTOL · max |original| + ATOL`` (NaN = NaN, equal infinities agree)."""
    a = np.asarray(_key_data(original))
    b = np.asarray(_key_data(mutant))
    if a.shape != b.shape:
        return True
    if not (np.issubdtype(a.dtype, np.inexact) or np.issubdtype(b.dtype, np.inexact)):
        return np.asarray(a != b)
    a, b = a.astype(np.complex128), b.astype(np.complex128)
    same = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))  # NaN = NaN, ∞ = ∞
    with np.errstate(invalid="ignore"):
        gap = np.where(same, 0.0, np.abs(a - b))
    scale = np.max(np.where(np.isfinite(a), np.abs(a), 0.0), initial=0.0)
    return np.isnan(gap) | (gap > RTOL * scale + ATOL)  # a NaN or an ∞ on one side only


def _concrete_differs(original, mutant, unstable=None) -> bool:
    """Whether some entry differs, leaving out the ``unstable`` ones (a boolean mask)."""
    if unstable is True:  # the original's own runs differ in this leaf's shape
        return False
    gaps = _concrete_gaps(original, mutant)
    if gaps is True:
        return True
    if unstable is not None:
        gaps = gaps & ~np.asarray(unstable, bool)
    return bool(np.any(gaps))


def _traced_differs(original, mutant):
    """The same test as :func:`_concrete_differs`, as a traced boolean."""
    import jax.numpy as jnp

    a, b = jnp.asarray(_key_data(original)), jnp.asarray(_key_data(mutant))
    if a.shape != b.shape:
        return jnp.asarray(True)
    if a.size == 0:
        return jnp.asarray(False)
    if not (jnp.issubdtype(a.dtype, jnp.inexact) or jnp.issubdtype(b.dtype, jnp.inexact)):
        return jnp.any(a != b)  # integers and booleans exactly
    dtype = jnp.result_type(a.dtype, b.dtype, jnp.float32)
    a, b = a.astype(dtype), b.astype(dtype)
    both_nan = jnp.isnan(a) & jnp.isnan(b)
    same_inf = jnp.isinf(a) & (a == b)
    gap = jnp.where(both_nan | same_inf, 0.0, jnp.abs(a - b))
    scale = jnp.max(jnp.where(jnp.isfinite(a), jnp.abs(a), 0.0))
    return jnp.isnan(jnp.max(gap)) | (jnp.max(gap) > RTOL * scale + ATOL)


def _pairs(original, mutant, out: list) -> bool:
    """Collect the ``(original, mutant)`` array leaves in ``out``; False when the two results
    differ in structure or in a value that is not an array; raises ``_Unobservable`` for a
    leaf that cannot be compared by value."""
    import jax

    leaves_a, tree_a = jax.tree_util.tree_flatten(original)
    leaves_b, tree_b = jax.tree_util.tree_flatten(mutant)
    try:
        if tree_a != tree_b:
            return False
    except Exception as exc:  # a static field whose == is not a bool
        raise _Unobservable from exc
    for a, b in zip(leaves_a, leaves_b, strict=True):
        if _is_tracer(a) or _is_tracer(b) or (_numeric(a) and _numeric(b)):
            out.append((a, b))
        elif dataclasses.is_dataclass(a) and not isinstance(a, type):
            if type(a) is not type(b):
                return False
            fields = [f.name for f in dataclasses.fields(a)]
            sub_a = [getattr(a, name) for name in fields]
            sub_b = [getattr(b, name) for name in fields]
            if not _pairs(sub_a, sub_b, out):
                return False
        elif isinstance(a, str | bytes) or isinstance(b, str | bytes):
            if type(a) is not type(b):
                return False
            out.append((a, b))  # compared by value, like an array of one entry
        else:  # a function, a module, an opaque object: nothing to compare by value
            raise _Unobservable
    return True


class _Unobservable(Exception):
    pass


def _unstable_entries(original, again) -> dict[int, Any] | None:
    """Leaf index → mask of the concrete entries on which two runs of the original differ
    (a wall-clock time, an unseeded draw; True: the whole leaf, whose shape changed); None
    when the runs differ in structure."""
    pairs: list = []
    if not _pairs(original, again, pairs):
        return None
    unstable = {}
    for index, (a, b) in enumerate(pairs):
        if not (_is_tracer(a) or _is_tracer(b)):
            gaps = _concrete_gaps(a, b)
            if gaps is True or np.any(gaps):
                unstable[index] = gaps
    return unstable


def compare_outputs(original, mutant, again: Callable[[], Any] | None = None) -> None:
    """Count whether ``mutant`` (one call's result) agrees with ``original``'s (module doc).

    When a concrete entry differs and ``again`` is given, ``again()`` runs the original once
    more: the entries on which the two runs of the original differ are not compared (they
    are not a function of the arguments); when the two runs differ in structure the call
    is unobservable.

    Examples:
      >>> import numpy as np
      >>> reset_counts()
      >>> compare_outputs((np.ones(3), 2), (np.ones(3) + 1e-9, 2))
      >>> compare_outputs({"a": np.ones(3)}, {"a": 2 * np.ones(3)})
      >>> compare_outputs(len, len)
      >>> COUNTS
      OutputCounts(agreed=1, differed=1, unobservable=1)
      >>> reset_counts()
      >>> clock = iter([1.0, 2.0])
      >>> rerun = lambda: (np.ones(2), next(clock))
      >>> compare_outputs((np.ones(2), 0.5), (np.ones(2), 0.7), again=rerun)
      >>> compare_outputs((np.ones(2), 0.5), (np.zeros(2), 0.7), again=rerun)
      >>> COUNTS
      OutputCounts(agreed=1, differed=1, unobservable=0)
    """
    pairs: list = []
    try:
        same_structure = _pairs(original, mutant, pairs)
    except _Unobservable:
        _count("unobservable")
        return
    concrete = [index for index, (a, b) in enumerate(pairs) if not (_is_tracer(a) or _is_tracer(b))]
    differing = [index for index in concrete if _concrete_differs(*pairs[index])]
    if (differing or not same_structure) and again is not None:
        try:
            unstable = _unstable_entries(original, again())
        except Exception:  # the original itself does not rerun: nothing to stand on
            unstable = None
        if unstable is None:
            _count("unobservable")
            return
        differing = [
            index for index in differing if _concrete_differs(*pairs[index], unstable.get(index))
        ]
    if differing or not same_structure:
        _count("differed")
        return
    traced = [(a, b) for a, b in pairs if _is_tracer(a) or _is_tracer(b)]
    if not traced:
        _count("agreed")
        return
    import jax
    import jax.numpy as jnp
    from jax.experimental import io_callback

    flags = jnp.stack([_traced_differs(a, b) for a, b in traced])
    # io_callback, not jax.debug.callback: under vmap the latter is unrolled into one
    # callback per batch element at compile time; io_callback loops (lax.map).
    io_callback(_report_int, jax.ShapeDtypeStruct((), jnp.int32), jnp.any(flags), ordered=False)


class _Branch(threading.local):
    def __init__(self):
        self.name: str | None = None


class _Uncopyable(Exception):
    pass


def _shared(value) -> bool:
    """Whether ``value`` needs no copy: immutable (JAX arrays, tracers and jaxprs, scalars,
    strings, frozen dataclasses) or a callable (functions, classes, modules are not state
    here)."""
    import jax
    import jax.extend.core as jax_core

    immutable = (jax.Array, jax.core.Tracer, jax_core.Jaxpr, jax_core.ClosedJaxpr, np.generic)
    if isinstance(value, immutable + (int, float, complex, str)):
        return True
    if value is None or isinstance(value, bytes | types.ModuleType) or callable(value):
        return True
    return dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen


def _isolated(value):
    """A copy of a call's arguments the original can run on without touching the caller's:
    containers rebuilt, numpy arrays and other mutable objects copied; raises
    ``_Uncopyable`` when some object cannot be."""
    import jax

    def leaf(x):
        if isinstance(x, np.ndarray):
            return x.copy()
        if _shared(x):
            return x
        try:
            if hasattr(x, "__dict__"):  # attribute by attribute (they may hold tracers)
                twin = copy.copy(x)
                vars(twin).update({k: _isolated(v) for k, v in vars(x).items()})
                return twin
            return copy.deepcopy(x)
        except _Uncopyable:
            raise
        except Exception as exc:
            raise _Uncopyable from exc

    return jax.tree_util.tree_map(leaf, value)


def _state(value):
    """What a call may have changed in its arguments: their containers' structure, numpy
    arrays, Python numbers, and the attributes of mutable objects (callables and immutable
    values left out)."""
    import jax

    def leaf(x):
        if isinstance(x, np.ndarray | int | float | complex | str | bytes):
            return x
        if _shared(x):
            return None
        return _state(dict(vars(x))) if hasattr(x, "__dict__") else None

    return jax.tree_util.tree_map(leaf, value)


def _rng_states() -> tuple:
    return np.random.get_state(), random.getstate()  # noqa: NPY002 (the legacy global state)


def _set_rng_states(states: tuple) -> None:
    np.random.set_state(states[0])  # noqa: NPY002
    random.setstate(states[1])


def paired(mutant: Callable, original: Callable) -> Callable:
    """A function that returns ``mutant(...)`` and counts whether ``original(...)`` agrees
    (module doc); calls made inside either run that one alone.

    The mutant runs on the caller's arguments (the program goes on as the mutant alone would
    take it); the original on a copy of them taken before, from the same global random
    state (numpy's and Python's), which is then put back as the mutant left it. What the
    call left in its arguments (mutable containers, numpy arrays, object attributes) is
    compared too. Arguments that cannot be copied make the call unobservable.

    Examples:
      >>> reset_counts()
      >>> f = paired(lambda x: 2 * x, lambda x: x + x)
      >>> g = paired(lambda x: 3 * x, lambda x: x)
      >>> f(2.0), g(2.0), COUNTS
      (4.0, 6.0, OutputCounts(agreed=1, differed=1, unobservable=0))
      >>> def fill(out, x):  # a result written into an argument
      ...     out[:] = x + 1
      >>> def fill_mutant(out, x):
      ...     out[:] = 2 * x + 1
      >>> reset_counts()
      >>> buffer = np.zeros(2)
      >>> paired(fill_mutant, fill)(buffer, np.ones(2)); buffer.tolist(), COUNTS
      ([3.0, 3.0], OutputCounts(agreed=0, differed=1, unobservable=0))
    """
    branch = _Branch()

    def run_original(args, kwargs):
        branch.name = "original"
        try:
            return original(*args, **kwargs)
        finally:
            branch.name = None

    def run_both(*args: Any, **kwargs: Any):
        if branch.name is not None:
            return (mutant if branch.name == "mutant" else original)(*args, **kwargs)
        try:
            copies = [_isolated((args, kwargs)) for _ in range(2)]
        except _Uncopyable:
            copies = None
        before = _rng_states()
        branch.name = "mutant"
        try:
            result = mutant(*args, **kwargs)
        finally:
            branch.name = None
        if copies is None:
            _count("unobservable")
            return result
        after = _rng_states()

        def original_on(which: int):
            _set_rng_states(before)
            value = run_original(*copies[which])
            return value, _state(copies[which])

        try:
            try:
                expected = original_on(0)
            except Exception:  # the original fails where the mutant did not: they differ
                _count("differed")
                return result
            compare_outputs(
                expected, (result, _state((args, kwargs))), again=lambda: original_on(1)
            )
        finally:
            _set_rng_states(after)
        return result

    return run_both
