"""Config fields declared once with ``param``: validation and ``--help`` from the same rule."""

from __future__ import annotations

import dataclasses
import inspect
import math

import pytest

from ntsim._config import _element_type, allowed_text, field_rule
from ntsim.experiment import (
    Validated,
    describe_experiment,
    list_experiments,
    load_experiment,
    param,
)


@dataclasses.dataclass(frozen=True)
class Demo(Validated):
    d: int = param(10, "dimension", low=2, shape=True)
    sizes: tuple[int, ...] = param((2, 4), "sample sizes", low=1, increasing=True)
    rate: float = param(0.1, "step size", low=0, high=0.5, open=True)
    ridge: float = param(0.0, "ridge", low=0)
    weights: tuple[float, ...] = param((1.0,), "weights", high=1)
    loss: str = param("mse", "loss", choices=("mse", "ce"))
    flag: bool = param(False, "a switch")
    free: int = 3  # not declared: not checked

    def check(self):
        if max(self.sizes) >= self.d:
            raise ValueError(f"Demo.sizes must be < d = {self.d}, got {self.sizes}.")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"d": 1}, "Demo.d must be ≥ 2, got 1"),
        ({"d": 2.0}, "Demo.d must be an integer"),
        ({"d": True}, "Demo.d must be an integer"),
        ({"sizes": ()}, "Demo.sizes must be a non-empty tuple"),
        ({"sizes": (0, 3)}, "Demo.sizes (each element) must be ≥ 1, got 0"),
        ({"sizes": (3, 3)}, "Demo.sizes must be strictly increasing"),
        ({"sizes": (2, 10)}, "Demo.sizes must be < d = 10"),  # the cross-field rule
        ({"rate": 0.0}, "Demo.rate must be in (0, 0.5), got 0.0"),
        ({"rate": 0.5}, "Demo.rate must be in (0, 0.5), got 0.5"),
        ({"rate": float("nan")}, "Demo.rate must be finite, got nan"),
        ({"ridge": -1e-9}, "Demo.ridge must be ≥ 0"),
        ({"ridge": float("inf")}, "Demo.ridge must be finite"),
        ({"weights": (0.5, float("nan"))}, "Demo.weights (each element) must be finite"),
        ({"weights": (1.5,)}, "Demo.weights (each element) must be ≤ 1"),
        ({"loss": "hinge"}, "Demo.loss must be one of mse, ce, got 'hinge'"),
        ({"flag": 1}, "Demo.flag must be true or false"),
    ],
)
def test_every_rule_rejects_what_it_excludes(change, words):
    with pytest.raises(ValueError) as error:
        Demo(**change)
    assert words in str(error.value)


def test_values_on_the_edges_of_closed_rules_pass():
    config = Demo(d=2, sizes=(1,), rate=0.49, ridge=0.0, weights=(1.0, -3.0), loss="ce", free=-5)
    assert config.ridge == 0.0 and config.free == -5


def test_allowed_text_reads_the_rule():
    text = {f.name: allowed_text(f) for f in dataclasses.fields(Demo)}
    assert text == {
        "d": "≥ 2", "sizes": "≥ 1, increasing", "rate": "(0, 0.5)", "ridge": "≥ 0",
        "weights": "≤ 1", "loss": "one of mse, ce", "flag": "", "free": "",
    }  # fmt: skip


def test_run_help_shows_the_declared_rule_and_marks_compiled_shapes():
    text = describe_experiment("linear_teachers/fig3_freezing")
    (eta,) = [line for line in text.splitlines() if line.startswith("eta_scale ")]
    assert "(0, 0.5)" in eta and "GD stability" in eta
    (n_values,) = [line for line in text.splitlines() if line.startswith("n_values *")]
    assert "1 ≤ n ≤ d − 1, increasing" in n_values
    assert "draws: figures/linear_teachers/fig3_freezing.png" in text
    assert "* changes the compiled programs" in text


# -- the extensions: half-open intervals, an admitted +inf, optional (empty) sweeps ---------


@dataclasses.dataclass(frozen=True)
class Extended(Validated):
    step: float = param(1.0, "step", low=0, high=1, open="low")
    keep: float = param(0.0, "probability", low=0, high=1, open="high")
    depths: tuple[float, ...] = param((1.0, math.inf), "depths", low=1, high=math.inf)
    sweep: tuple[int, ...] = param((), "optional sweep", low=1, empty=True)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"step": 0.0}, "Extended.step must be in (0, 1], got 0.0"),
        ({"step": 1.5}, "Extended.step must be in (0, 1]"),
        ({"keep": 1.0}, "Extended.keep must be in [0, 1), got 1.0"),
        ({"depths": (0.5,)}, "Extended.depths (each element) must be in [1, inf]"),
        ({"depths": (float("nan"),)}, "Extended.depths (each element) must be finite"),
        ({"depths": (-math.inf,)}, "Extended.depths (each element) must be finite"),
        ({"sweep": (0,)}, "Extended.sweep (each element) must be ≥ 1"),
    ],
)
def test_half_open_bounds_infinite_tops_and_empty_sweeps(change, words):
    with pytest.raises(ValueError) as error:
        Extended(**change)
    assert words in str(error.value)


def test_the_extensions_admit_their_edges_and_read_in_help():
    config = Extended(step=1.0, keep=0.0, depths=(1.0, math.inf), sweep=())
    assert config.sweep == () and Extended(sweep=(2, 1)).sweep == (2, 1)
    text = {f.name: allowed_text(f) for f in dataclasses.fields(Extended)}
    assert text == {
        "step": "(0, 1]", "keep": "[0, 1)", "depths": "[1, inf]", "sweep": "≥ 1, or empty"
    }  # fmt: skip
    with pytest.raises(ValueError, match="open must be"):
        param(1.0, "x", low=0, open="left")


# -- every experiment: each declared field rejects what its rule excludes --------------------


def _declared_fields() -> list[tuple[str, str]]:
    """``(experiment, field)`` for every field of every experiment's Config declared with
    :func:`param` (loads the experiments at collection: their configs are plain data)."""
    return [
        (name, field.name)
        for name in list_experiments()
        for field in dataclasses.fields(load_experiment(name).Config)
        if field_rule(field) is not None
    ]


def _below(rule, kind) -> float:
    """A value just outside ``rule``'s lower bound (the bound itself when it is open)."""
    if rule.open in (True, "low"):
        return rule.low
    return rule.low - 1 if kind is int else rule.low - abs(rule.low) * 0.5 - 1e-3


def _above(rule, kind) -> float:
    if rule.open in (True, "high"):
        return rule.high
    return rule.high + 1 if kind is int else rule.high + abs(rule.high) * 0.5 + 1e-3


def _rejects(config, name: str, value) -> None:
    """``replace(config, name=value)`` raises a ValueError that names ``Config.name``."""
    where = f"{type(config).__name__}.{name}"
    with pytest.raises(ValueError) as error:
        dataclasses.replace(config, **{name: value})
    assert where in str(error.value), (where, str(error.value))


@pytest.mark.parametrize(("name", "field_name"), _declared_fields())
def test_every_declared_field_rejects_what_its_rule_excludes(name, field_name):
    """A float set to NaN or ±inf, a value below ``low`` (or above ``high``; the bound
    itself when open) and a string outside ``choices`` raise a ValueError naming the field;
    the quick and full scales construct."""
    module = load_experiment(name)
    (field,) = [f for f in dataclasses.fields(module.Config) if f.name == field_name]
    rule, (kind, is_tuple) = field_rule(field), _element_type(field.type)
    for scale in ("quick", "full"):
        config = dataclasses.replace(module.SCALES[scale])  # validates again
        assert getattr(config, field_name) == getattr(module.SCALES[scale], field_name)
    config = module.SCALES["quick"]

    def bad(value):
        _rejects(config, field_name, (value,) if is_tuple else value)

    if kind is float:
        bad(float("nan"))
        bad(-math.inf)
        if rule.high == math.inf and rule.open not in (True, "high"):
            dataclasses.replace(config, **{field_name: (math.inf,) if is_tuple else math.inf})
        else:
            bad(math.inf)
    if rule.low is not None:
        bad(_below(rule, kind))
    if rule.high is not None and rule.high != math.inf:
        bad(_above(rule, kind))
    if rule.choices is not None:
        bad("no-such-choice")
    if is_tuple and not rule.empty:
        _rejects(config, field_name, ())


@pytest.mark.parametrize("name", list_experiments())
def test_every_field_declared_in_experiments_uses_param(name):
    """Fields an experiment declares itself carry a param declaration; fields of a theory
    setting that ``Config`` is or inherits (claims' paths) are left to the theory."""
    config_cls = load_experiment(name).Config
    for field in dataclasses.fields(config_cls):
        owner = next(c for c in config_cls.__mro__ if field.name in inspect.get_annotations(c))
        if owner.__module__.startswith("experiments."):
            assert field_rule(field) is not None, f"{name}: {field.name} is not declared with param"


@pytest.mark.parametrize("name", list_experiments())
def test_run_help_shows_an_allowed_value_for_every_field_with_a_rule(name):
    text = describe_experiment(name)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("field "))
    column = header.index("allowed")
    rows = {line.split()[0]: line for line in lines[lines.index(header) + 1 :] if line.strip()}
    for field in dataclasses.fields(load_experiment(name).Config):
        rule = field_rule(field)
        ruled = rule is not None and (
            rule.low is not None or rule.high is not None or rule.choices is not None
            or rule.increasing or rule.allowed
        )  # fmt: skip
        if not ruled:
            continue
        row = rows[field.name]
        assert allowed_text(field) in row, (field.name, row)
        assert row[column] != " ", f"{name}: empty allowed column for {field.name}: {row}"
