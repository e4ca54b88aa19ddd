"""Array contracts that hold under ``jit`` too: finiteness, PSD spectra, index ranges.

The library's bad-input policy (see ``docs/guides/errors.md``):

1. **Every public function checks its inputs against its mathematical contract** (shapes,
   finiteness, PSD-ness, index ranges, label sets) at its entry, once per call, and raises
   ``ValueError("<function>: <argument> must <rule>, got <value>.")``, adding the fix
   where there is one. Shapes and static arguments are checked with the helpers of
   :mod:`ntsim._validation`; values with the helpers here.
2. **Concrete values are checked at once.** Under ``jax.jit``/``vmap`` a value is a
   tracer and cannot be read while tracing; a check on a traced value must not pass
   silently, so it becomes a **checked mode**: :func:`require` threads the checked value
   through a ``lax.cond`` whose failing branch calls back to the host
   (``jax.pure_callback``) and raises the same ``ValueError`` there. JAX then stops the
   computation with a ``jax.errors.JaxRuntimeError`` (a ``RuntimeError``) whose text
   ends with that ``ValueError`` line. The passing branch returns the value itself: the
   cost is one reduction and one branch per call, with no host round trip and jit's fast
   dispatch kept (a callback with effects, ``jax.debug.callback``, costs ~0.6 ms per call
   even untaken). Under ``vmap`` the condition is reduced over the batch first (a
   ``custom_vmap`` rule), so it stays one branch per call, not one per element. This is
   the mechanism of equinox's ``error_if`` (a callback in a branch the result depends on)
   with public JAX only; unlike ``jax.experimental.checkify`` it needs no
   functionalisation by the caller, and it works on CPU and GPU alike.
3. **Checks stay out of inner loops.** They run at public entry points, never inside a
   ``scan``/``while`` body, and never change what is computed: the passing branch returns
   its input, so outputs are bit-identical with and without the checks.

Rules that need a tolerance state it: a kernel is PSD when its smallest eigenvalue is at
least ``−sqrt(eps)·max|λ|`` (the round-off of a Jacobian contraction; see
:func:`psd_tolerance`).
"""

from __future__ import annotations

import contextlib
import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from ntsim._validation import _is_concrete

__all__ = [
    "psd_tolerance",
    "require",
    "require_finite",
    "require_index",
    "require_nonempty",
    "require_nonnegative",
    "require_positive",
    "require_psd_spectrum",
    "traced_checks_skipped",
]


def _show(value) -> str:
    """A short text of a value for a message (a scalar as itself, an array by its shape)."""
    try:
        arr = np.asarray(value)
    except Exception:  # a tracer inside a concrete failure: say so instead of failing
        return "a traced value"
    if arr.ndim == 0:
        item = arr.item()
        return repr(float(f"{item:.7g}")) if isinstance(item, float) else repr(item)
    if arr.size <= 6:
        return np.array2string(arr, precision=6, separator=", ")
    return f"an array of shape {arr.shape}"


def _raise(message: str, values) -> None:
    raise ValueError(message.format(*(_show(v) for v in values)))


@custom_vmap
def _any_over_batch(flag):
    """``any(flag)``; under ``vmap`` also over the batch, so the branch of :func:`require`
    is one branch per call (not one per element): a failure anywhere in the batch raises."""
    return jnp.any(flag)


@_any_over_batch.def_vmap
def _any_over_batch_rule(axis_size, in_batched, flag):
    del axis_size
    return _any_over_batch(jnp.any(flag, axis=0) if in_batched[0] else flag), False


def _host_raise(message: str, value, failed, *values):
    """Raise on the host. Under ``vmap`` (``broadcast_all``) every argument carries the
    batch axes in front and ``failed`` has exactly them: the message shows the values of the
    first failing element and says which it is."""
    failed = np.asarray(failed)
    if failed.ndim:
        index = tuple(int(i) for i in np.argwhere(failed)[0])
        values = [np.asarray(v)[index] for v in values]
        message = message.rstrip(".") + f" (element {index} of a vmapped batch)."
    _raise(message, values)
    return value  # never reached


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _checked(message: str, value, failed, *values):
    """``value`` unchanged, through a ``lax.cond`` whose failing branch raises on the host.

    The result depends on the branch, so the check cannot be pruned while ``value`` is
    used; the passing branch returns ``value`` itself (bit-identical). The callback is a
    ``pure_callback`` (no effects), which keeps jit's fast dispatch path.
    """
    failed = jnp.any(failed)  # one flag per call (per element under vmap)
    flag = _any_over_batch(failed)

    def fail(value, values):
        shape = jax.ShapeDtypeStruct(jnp.shape(value), jnp.result_type(value))
        host = functools.partial(_host_raise, message)
        return jax.pure_callback(host, shape, value, failed, *values, vmap_method="broadcast_all")

    return jax.lax.cond(flag, fail, lambda value, values: value, value, values)


@_checked.defjvp
def _checked_jvp(message, primals, tangents):
    return _checked(message, *primals), tangents[0]  # the check is transparent to autodiff


_SKIP_TRACED = threading.local()


@contextlib.contextmanager
def traced_checks_skipped():
    """Inside the block, checks on traced values are not compiled in (concrete values are
    still checked). For an inner loop that must stay free of callbacks and handles bad
    values itself: ``ntsim falsify``'s gradient search, whose diverging starts give NaN and
    are dropped (as ``equinox``'s ``EQX_ON_ERROR=nan`` does for a whole process). Programs
    traced inside the block have no checks, so JAX's in-memory caches are cleared on leaving
    it: no unchecked trace is reused outside.
    """
    previous = getattr(_SKIP_TRACED, "on", False)
    _SKIP_TRACED.on = True
    try:
        yield
    finally:
        _SKIP_TRACED.on = previous
        if not previous:
            jax.clear_caches()


def require(value, failed, message: str, *values):
    """``value``, after requiring ``failed`` false everywhere; else
    ``ValueError(message.format(*values))``.

    Concrete ``failed``: raises now, returns ``value`` unchanged. Traced ``failed`` (under
    ``jit``/``vmap``): returns ``value`` threaded through the check (the checked mode of
    the module doc), so **use the returned value** downstream: a check whose result is
    unused is pruned with it. ``values`` are shown by :func:`_show` (scalars in full,
    arrays by shape), so pass the few numbers the message needs, not large arrays.

    Examples:
      >>> require(1.0, False, "f: x must be positive, got {}.", 1.0)
      1.0
      >>> require(-1.0, True, "f: x must be positive, got {}.", -1.0)
      Traceback (most recent call last):
      ...
      ValueError: f: x must be positive, got -1.0.
    """
    if _is_concrete(failed):
        if np.any(np.asarray(failed)):
            _raise(message, values)
        return value
    if getattr(_SKIP_TRACED, "on", False):
        return value
    failed = jax.lax.stop_gradient(jnp.asarray(failed))
    return _checked(message, jnp.asarray(value), failed, *values)


def require_finite(where: str, name: str, array):
    """``array``, required to have every entry finite (no NaN, no ±inf)."""
    arr = array if isinstance(array, np.ndarray) else jnp.asarray(array)
    if arr.size == 0:
        return array
    xp = np if _is_concrete(arr) else jnp
    bad = xp.sum(~xp.isfinite(arr))
    return require(
        array,
        bad > 0,
        f"{where}: {name} must be finite (no NaN or inf), got {{}} non-finite "
        f"entries in an array of shape {tuple(arr.shape)}.",
        bad,
    )


def require_nonnegative(where: str, name: str, value):
    """``value``, required ``>= 0`` and finite elementwise (checked mode when traced)."""
    xp = np if _is_concrete(value) else jnp
    arr = xp.asarray(value)
    return require(
        value,
        xp.any(~xp.isfinite(arr) | (arr < 0)),
        f"{where}: {name} must be non-negative and finite, got {{}}.",
        arr if arr.ndim == 0 else xp.min(arr),
    )


def require_positive(where: str, name: str, value):
    """``value``, required ``> 0`` and finite elementwise (checked mode when traced)."""
    xp = np if _is_concrete(value) else jnp
    arr = xp.asarray(value)
    return require(
        value,
        xp.any(~xp.isfinite(arr) | (arr <= 0)),
        f"{where}: {name} must be positive and finite, got {{}}.",
        arr if arr.ndim == 0 else xp.min(arr),
    )


def psd_tolerance(dtype) -> float:
    """Relative round-off a PSD check admits: ``sqrt(eps)`` of ``dtype``.

    Kernels from Jacobian contractions carry rounding ``~ eps·sqrt(P)`` relative to
    ``‖K‖`` (``P`` parameters); ``sqrt(eps)`` (1.5e-8 in float64, 3.5e-4 in float32)
    admits that for any practical ``P`` and still rejects a genuinely indefinite kernel.
    """
    return float(np.sqrt(np.finfo(dtype).eps))


def require_psd_spectrum(where: str, name: str, eigenvalues, *, fix: str = ""):
    """``eigenvalues``, required PSD within :func:`psd_tolerance` (``min λ ≥
    −sqrt(eps)·max|λ|``) and finite. ``fix`` is appended to the message."""
    xp = np if _is_concrete(eigenvalues) else jnp
    ev = xp.asarray(eigenvalues)
    if ev.size == 0:
        return eigenvalues
    tol = psd_tolerance(ev.dtype)
    lo, hi = xp.min(ev), xp.max(xp.abs(ev))
    return require(
        eigenvalues,
        ~xp.isfinite(hi) | (lo < -tol * hi),
        f"{where}: {name} must be positive semi-definite (smallest eigenvalue ≥ "
        f"−{tol:.1g}·max|λ|), got smallest eigenvalue {{}} and max|λ| = {{}}.{fix}",
        lo,
        hi,
    )


def require_index(where: str, name: str, index, size: int):
    """``index``, required an integer in ``[0, size)`` (negative indices are refused: a
    leave-one-out index of ``-1`` is a mistake, not "the last point")."""
    if isinstance(index, bool) or (
        _is_concrete(index) and not np.issubdtype(np.asarray(index).dtype, np.integer)
    ):
        raise ValueError(f"{where}: {name} must be an integer index, got {index!r}.")
    xp = np if _is_concrete(index) else jnp
    arr = xp.asarray(index)
    return require(
        index,
        xp.any((arr < 0) | (arr >= size)),
        f"{where}: {name} must be an index in [0, {size}), got {{}}.",
        arr,
    )


def require_nonempty(where: str, name: str, array, *, axis: int = 0) -> None:
    """Require ``array`` to have at least one entry along ``axis`` (a static shape check)."""
    shape = np.shape(array)
    if len(shape) <= axis or shape[axis] == 0:
        raise ValueError(
            f"{where}: {name} must hold at least one entry along axis {axis}, got shape {shape}."
        )
