"""Config fields declared once: meaning, allowed range, and whether they change compiled shapes.

A config is a frozen dataclass. Each field declared with :func:`param` carries its one-line
meaning and its rule (a range, a set of choices, an increasing tuple, …) in the field's
metadata; :class:`Validated` checks every declared field against its rule when the config is
built, and ``ntsim run NAME --help`` prints the same declaration. Validation and help come
from one place, so they cannot disagree.

Rules that tie several fields together (``n < d``) go in :meth:`Validated.check`; name them
in the field's ``allowed`` text so ``--help`` shows them.

Example::

    @dataclass(frozen=True)
    class Config(Validated):
        d: int = param(100, "input dimension", low=2, shape=True)
        n_values: tuple[int, ...] = param((5, 10), "sample sizes", low=1, increasing=True,
                                          allowed="1 ≤ n < d, increasing", shape=True)
        eta_scale: float = param(0.15, "step size / λ_max", low=0, high=0.5, open=True)

        def check(self):
            if max(self.n_values) >= self.d:
                raise ValueError(...)
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import typing
from collections.abc import Sequence
from typing import Any

__all__ = ["Validated", "allowed_text", "field_rule", "param", "validate_fields"]

_KEY = "ntsim"


@dataclasses.dataclass(frozen=True)
class _Rule:
    meaning: str
    low: float | None = None
    high: float | None = None
    open: bool | str = False
    choices: tuple | None = None
    increasing: bool = False
    allowed: str | None = None
    shape: bool = False
    empty: bool = False


def param(
    default: Any,
    meaning: str,
    *,
    low: float | None = None,
    high: float | None = None,
    open: bool | str = False,  # noqa: A002 (reads as the interval's kind)
    choices: Sequence | None = None,
    increasing: bool = False,
    allowed: str | None = None,
    shape: bool = False,
    empty: bool = False,
) -> Any:
    """A config field with its meaning and rule (a ``dataclasses.field``).

    Args:
      default: the full-scale value (the paper's, or ours where the paper gives none).
      meaning: one line: what the field is (shown by ``ntsim run NAME --help``).
      low, high: bounds on the value (on every element of a tuple); inclusive unless
        ``open``. ``high=math.inf`` (closed) admits ``inf`` itself (``depths`` where
        ``inf`` is the infinite-depth limit); every other value must be finite.
      open: ``True``: both bounds exclusive; ``"low"`` or ``"high"``: that bound only
        (``(0, 1]`` is ``low=0, high=1, open="low"``).
      choices: the allowed values (strings, or the elements of a tuple of strings).
      increasing: a tuple must be strictly increasing.
      allowed: the rule in words, when it says more than the bounds (a rule of
        :meth:`Validated.check` across fields); shown in place of the generated text.
      shape: changing the field changes the compiled programs (an array shape or a static
        loop length): a new value compiles anew instead of hitting the cache.
      empty: a tuple may be empty (an optional sweep: ``()`` skips it).

    Every ``float`` field (and element) must be finite (but for ``high=math.inf``); every
    tuple non-empty (but for ``empty=True``).
    """
    if open not in (True, False, "low", "high"):
        raise ValueError(f"param: open must be True, False, 'low' or 'high', got {open!r}.")
    rule = _Rule(
        meaning, low, high, open, tuple(choices) if choices is not None else None, increasing,
        allowed, shape, empty,
    )  # fmt: skip
    return dataclasses.field(default=default, metadata={_KEY: rule})


def field_rule(field: dataclasses.Field) -> _Rule | None:
    """The :func:`param` declaration of ``field`` (``None`` for a field declared without)."""
    return field.metadata.get(_KEY)


def _open_low(rule: _Rule) -> bool:
    return rule.open in (True, "low")


def _open_high(rule: _Rule) -> bool:
    return rule.open in (True, "high")


def _interval(rule: _Rule) -> str:
    left = "(" if _open_low(rule) else "["
    right = ")" if _open_high(rule) else "]"
    if rule.low is not None and rule.high is not None:
        return f"{left}{rule.low:g}, {rule.high:g}{right}"
    if rule.low is not None:
        return f"{'>' if _open_low(rule) else '≥'} {rule.low:g}"
    if rule.high is not None:
        return f"{'<' if _open_high(rule) else '≤'} {rule.high:g}"
    return ""


def allowed_text(field: dataclasses.Field) -> str:
    """The field's rule in words (``""`` for a field not declared with :func:`param`)."""
    rule = field_rule(field)
    if rule is None:
        return ""
    if rule.allowed:
        return rule.allowed
    parts = [_interval(rule)] if _interval(rule) else []
    if rule.choices is not None:
        parts.append("one of " + ", ".join(str(c) for c in rule.choices))
    if rule.increasing:
        parts.append("increasing")
    if rule.empty:
        parts.append("or empty" if parts else "may be empty")
    return ", ".join(parts)


def _element_type(annotation: Any) -> tuple[type | None, bool]:
    """``(element type, is a tuple)`` of a field's annotation (strings resolved)."""
    if isinstance(annotation, str):
        names = {"int": int, "float": float, "str": str, "bool": bool}
        for name, kind in names.items():
            if annotation == name:
                return kind, False
            if annotation.replace(" ", "") == f"tuple[{name},...]":
                return kind, True
        return None, False
    origin = typing.get_origin(annotation)
    if origin is tuple:
        args = typing.get_args(annotation)
        return (args[0] if args else None), True
    return (annotation if isinstance(annotation, type) else None), False


def _check_value(where: str, kind: type | None, value: Any, rule: _Rule) -> None:
    if kind is int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise ValueError(f"{where} must be an integer, got {value!r}.")
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            fix = (
                " (a 0-d array: pass float(value); settings are hashable, static data)"
                if getattr(value, "shape", None) == ()
                else ""
            )
            raise ValueError(f"{where} must be a number, got {value!r}{fix}.")
        infinite_allowed = value == rule.high == math.inf and not _open_high(rule)
        if not math.isfinite(value) and not infinite_allowed:
            raise ValueError(f"{where} must be finite, got {value!r}.")
    if kind is bool and not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, got {value!r}.")
    if kind is str and not isinstance(value, str):
        raise ValueError(f"{where} must be a string, got {value!r}.")
    if rule.choices is not None and value not in rule.choices:
        raise ValueError(
            f"{where} must be one of {', '.join(map(str, rule.choices))}, got {value!r}."
        )
    interval = _interval(rule)
    if rule.low is not None and (value < rule.low or (_open_low(rule) and value == rule.low)):
        raise ValueError(f"{where} must be {_fmt_interval(interval)}, got {value!r}.")
    if rule.high is not None and (value > rule.high or (_open_high(rule) and value == rule.high)):
        raise ValueError(f"{where} must be {_fmt_interval(interval)}, got {value!r}.")


def _fmt_interval(interval: str) -> str:
    return f"in {interval}" if interval[:1] in "[(" else interval


def validate_fields(config: Any) -> None:
    """Check every field of ``config`` declared with :func:`param` against its rule.

    Raises:
      ValueError: naming the class, the field, the rule and the value.
    """
    cls = type(config).__name__
    for field in dataclasses.fields(config):
        rule = field_rule(field)
        if rule is None:
            continue
        kind, is_tuple = _element_type(field.type)
        value = getattr(config, field.name)
        where = f"{cls}.{field.name}"
        if not is_tuple:
            _check_value(where, kind, value, rule)
            continue
        if not isinstance(value, tuple) or (not value and not rule.empty):
            raise ValueError(f"{where} must be a non-empty tuple, got {value!r}.")
        for element in value:
            _check_value(f"{where} (each element)", kind, element, rule)
        if rule.increasing and any(b <= a for a, b in zip(value, value[1:], strict=False)):
            raise ValueError(f"{where} must be strictly increasing, got {value!r}.")


class Validated:
    """Mixin for a frozen config dataclass: on construction, :func:`validate_fields`, then
    :meth:`check` (rules across fields). A subclass overrides :meth:`check`, not
    ``__post_init__``."""

    def __post_init__(self) -> None:
        validate_fields(self)
        self.check()

    def check(self) -> None:
        """Rules that tie fields together; raise ``ValueError`` naming them."""
