"""Argument checks shared across ntsim (raise early, name the argument and the rule).

Every public function validates what can be known at trace time (shapes, static
hyperparameters) with these helpers, so error messages look the same everywhere:
``"<function>: <argument> must <rule>, got <value>."``.

These checks read concrete values and skip tracers; values that must also be checked under
``jit``/``vmap`` (finiteness, PSD spectra, ranges, indices) use :mod:`ntsim._checks`, whose
checked mode raises at run time. The policy is in ``docs/guides/errors.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "check_choice",
    "check_key",
    "check_finite_scalar",
    "check_ndim",
    "check_nonnegative",
    "check_params_keys",
    "check_positive",
    "check_positive_int",
    "check_same_leading_dim",
    "check_setting_type",
]


def _is_concrete(value) -> bool:
    """True when ``value`` can be read on the host (not a tracer under jit/vmap)."""
    try:
        np.asarray(value)
    except Exception:  # jax.errors.TracerArrayConversionError and friends
        return False
    return True


def check_positive_int(where: str, name: str, value) -> int:
    """Require a positive Python integer (static shape-like argument)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{where}: {name} must be a positive integer, got {value!r}.")
    return int(value)


def check_int_fields(config, names, *, minimum: int = 1) -> None:
    """Require each field ``names`` of a config dataclass to be a Python integer ``>= minimum``.

    For ``__post_init__`` of frozen configs; the error names the class and the field.
    """
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise ValueError(f"{type(config).__name__}.{name} must be {wanted}, got {value!r}.")


def check_positive(where: str, name: str, value) -> None:
    """Require ``value > 0`` elementwise when ``value`` is concrete (skipped under tracing)."""
    if _is_concrete(value):
        arr = np.asarray(value)
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"{where}: {name} must be positive and finite, got {value!r}.")


def check_nonnegative(where: str, name: str, value) -> None:
    """Require ``value >= 0`` elementwise when ``value`` is concrete (skipped under tracing)."""
    if _is_concrete(value):
        arr = np.asarray(value)
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"{where}: {name} must be non-negative and finite, got {value!r}.")


def check_finite_scalar(where: str, name: str, value) -> None:
    """Require a finite scalar when concrete."""
    if _is_concrete(value):
        arr = np.asarray(value)
        if arr.ndim != 0 or not math.isfinite(float(arr)):
            raise ValueError(f"{where}: {name} must be a finite scalar, got {value!r}.")


def check_choice(where: str, name: str, value, choices: Sequence) -> None:
    """Require ``value`` to be one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{where}: {name} must be one of {tuple(choices)}, got {value!r}.")


def check_setting_type(where: str, setting, expected: type | tuple[type, ...]) -> None:
    """Require ``setting`` to be an instance of ``expected`` (a theory setting class).

    A setting of another simulation would otherwise fail later on a missing attribute.

    Examples:
      >>> check_setting_type("simulate", 3, int)
      >>> check_setting_type("simulate", 3.0, int)
      Traceback (most recent call last):
      ...
      TypeError: simulate: setting must be an instance of int, got a float: 3.0.
    """
    if not isinstance(setting, expected):
        names = " or ".join(
            c.__name__ for c in (expected if isinstance(expected, tuple) else (expected,))
        )
        raise TypeError(
            f"{where}: setting must be an instance of {names}, got a "
            f"{type(setting).__name__}: {setting!r}."
        )


def check_key(where: str, key) -> None:
    """Require ``key`` to be one PRNG key: ``jax.random.PRNGKey(seed)`` (``uint32``, shape
    ``(2,)``) or ``jax.random.key(seed)`` (a typed key of shape ``()``). Static: dtype and shape
    are known under ``jit``/``vmap`` too.

    Examples:
      >>> import jax
      >>> check_key("simulate", jax.random.PRNGKey(0))
      >>> check_key("simulate", np.arange(3))  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      TypeError: simulate: key must be one PRNG key (...), got an array of dtype int64 and ...
    """
    import jax  # noqa: PLC0415 (this module stays importable without initialising jax)

    dtype, shape = getattr(key, "dtype", None), np.shape(key)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        if shape == ():
            return
    elif dtype is not None and dtype == np.uint32 and shape == (2,):
        return
    kind = f"an array of dtype {dtype}" if dtype is not None else f"a {type(key).__name__}"
    raise TypeError(
        f"{where}: key must be one PRNG key (jax.random.PRNGKey(seed), a uint32 array of shape "
        f"(2,), or jax.random.key(seed)), got {kind} and shape {shape}."
    )


def check_params_keys(where: str, params, keys: Sequence[str], *, init: str) -> None:
    """Require ``params`` to be a mapping holding ``keys`` (the pytree ``init`` returns).

    Examples:
      >>> check_params_keys("f", {"a": 1}, ("a",), init="g")
      >>> check_params_keys("f", {"b": 1}, ("a",), init="g")  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ValueError: f: params must be the pytree g returns, with keys ('a',); got ... 'a').
    """
    if not hasattr(params, "keys"):
        raise ValueError(
            f"{where}: params must be the pytree {init} returns, a mapping with keys "
            f"{tuple(keys)}; got a {type(params).__name__}."
        )
    missing = [k for k in keys if k not in params]
    if missing:
        raise ValueError(
            f"{where}: params must be the pytree {init} returns, with keys {tuple(keys)}; got "
            f"keys {tuple(params.keys())} (missing {', '.join(map(repr, missing))})."
        )


def check_ndim(where: str, name: str, array, ndim: int | Sequence[int]) -> None:
    """Require ``array.ndim`` in ``ndim``."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    actual = np.ndim(array)
    if actual not in allowed:
        shape = np.shape(array)
        raise ValueError(
            f"{where}: {name} must have ndim in {allowed}, got shape {shape} (ndim {actual})."
        )


def check_same_leading_dim(where: str, names: Sequence[str], arrays: Sequence) -> None:
    """Require all ``arrays`` to share their first dimension (number of examples)."""
    sizes = [np.shape(a)[0] if np.ndim(a) else None for a in arrays]
    if len(set(sizes)) != 1:
        pairs = ", ".join(f"{n}.shape={np.shape(a)}" for n, a in zip(names, arrays, strict=True))
        raise ValueError(
            f"{where}: {', '.join(names)} must have the same first dimension, got {pairs}."
        )
