"""Array contracts that hold under ``jit`` too: finiteness, PSD spectra, index ranges.

The library's bad-input policy (see ``docs/guides/errors.md``):

1. **Every public function checks its inputs against its mathematical contract** (shapes,
   finiteness, PSD-ness, index ranges, label sets) at its entry, once per call, and raises
   ``ValueError("<function>: <argument> must <rule>, got <value>.")``, adding the fix
   where there is one. Shapes and static arguments are checked with the helpers of
   :mod:`ntsim._validation`; values with the helpers here.
2. **Concrete values are checked at once.** Under ``jax.jit``/``vmap`` a value is a
   tracer and cannot be read while tracing; a check on a traced value must not pass
   silently, so it becomes a **checked mode**: :func:`require` puts a ``lax.cond`` in the
   compiled program whose failing branch calls back to the host
   (``jax.debug.callback``) and raises the same ``ValueError`` there. JAX then stops the
   computation with a ``jax.errors.JaxRuntimeError`` (a ``RuntimeError``) whose text
   ends with that ``ValueError`` line. The passing branch does nothing: the cost is one
   reduction and a branch per call (no host round trip), measured in
   ``tests/test_bad_input_library.py``. This is the mechanism of equinox's ``error_if``
   (a callback in a conditional branch, no new dependency); unlike
   ``jax.experimental.checkify`` it needs no functionalisation by the caller and raises as
   soon as the branch runs, on CPU and GPU alike.
3. **Checks stay out of inner loops.** They run at public entry points, never inside a
   ``scan``/``while`` body, and never change what is computed: a check reads its inputs
   and returns nothing, so outputs are bit-identical with and without it.

Rules that need a tolerance state it: a kernel is PSD when its smallest eigenvalue is at
least ``−sqrt(eps)·max|λ|`` (the round-off of a Jacobian contraction; see
:func:`psd_tolerance`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

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


def require(failed, message: str, *values) -> None:
    """Raise ``ValueError(message.format(*values))`` where any entry of ``failed`` is true.

    Concrete ``failed``: raises now. Traced ``failed`` (under ``jit``/``vmap``/``grad``):
    the check is compiled into the program and raises when it runs (the checked mode of
    the module doc). ``values`` are shown by :func:`_show` (scalars in full, arrays by
    shape), so pass the few numbers the message needs, not large arrays.

    Examples:
      >>> require(False, "f: x must be positive, got {}.", 1.0)
      >>> require(True, "f: x must be positive, got {}.", -1.0)
      Traceback (most recent call last):
      ...
      ValueError: f: x must be positive, got -1.0.
    """
    if _is_concrete(failed):
        if np.any(np.asarray(failed)):
            _raise(message, values)
        return

    def host(flag, *host_values):
        if np.any(flag):  # under vmap the branch runs for every element: look again
            _raise(message, host_values)

    flag = jnp.any(failed)
    jax.lax.cond(flag, lambda: jax.debug.callback(host, flag, *values), lambda: None)


def require_finite(where: str, name: str, array) -> None:
    """Require every entry of ``array`` finite (no NaN, no ±inf)."""
    arr = jnp.asarray(array) if not isinstance(array, np.ndarray) else array
    if arr.size == 0:
        return
    xp = np if _is_concrete(arr) else jnp
    bad = xp.sum(~xp.isfinite(arr))
    require(
        bad > 0,
        f"{where}: {name} must be finite (no NaN or inf), got {{}} non-finite "
        f"entries in an array of shape {tuple(arr.shape)}.",
        bad,
    )


def require_nonnegative(where: str, name: str, value) -> None:
    """Require ``value >= 0`` and finite, elementwise (checked mode when traced)."""
    xp = np if _is_concrete(value) else jnp
    arr = xp.asarray(value)
    require(
        xp.any(~xp.isfinite(arr) | (arr < 0)),
        f"{where}: {name} must be non-negative and finite, got {{}}.",
        arr if arr.ndim == 0 else xp.min(arr),
    )


def require_positive(where: str, name: str, value) -> None:
    """Require ``value > 0`` and finite, elementwise (checked mode when traced)."""
    xp = np if _is_concrete(value) else jnp
    arr = xp.asarray(value)
    require(
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


def require_psd_spectrum(where: str, name: str, eigenvalues, *, fix: str = "") -> None:
    """Require the spectrum of a symmetric matrix to be PSD within :func:`psd_tolerance`:
    ``min λ ≥ −sqrt(eps)·max|λ|``, and finite. ``fix`` is appended to the message."""
    xp = np if _is_concrete(eigenvalues) else jnp
    ev = xp.asarray(eigenvalues)
    if ev.size == 0:
        return
    tol = psd_tolerance(ev.dtype)
    lo, hi = xp.min(ev), xp.max(xp.abs(ev))
    require(
        ~xp.isfinite(hi) | (lo < -tol * hi),
        f"{where}: {name} must be positive semi-definite (smallest eigenvalue ≥ "
        f"−{tol:.1g}·max|λ|), got smallest eigenvalue {{}} and max|λ| = {{}}.{fix}",
        lo,
        hi,
    )


def require_index(where: str, name: str, index, size: int) -> None:
    """Require an integer index in ``[0, size)`` (negative indices are refused: a
    leave-one-out index of ``-1`` is a mistake, not "the last point")."""
    if isinstance(index, bool) or (
        _is_concrete(index) and not np.issubdtype(np.asarray(index).dtype, np.integer)
    ):
        raise ValueError(f"{where}: {name} must be an integer index, got {index!r}.")
    xp = np if _is_concrete(index) else jnp
    arr = xp.asarray(index)
    require(
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
