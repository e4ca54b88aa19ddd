"""Config fields declared once with ``param``: validation and ``--help`` from the same rule."""

from __future__ import annotations

import dataclasses
import math

import pytest

from ntsim._config import allowed_text
from ntsim.experiment import Validated, describe_experiment, param


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
