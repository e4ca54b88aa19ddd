"""The experiment contract: overrides, output naming, atomic writes (claims: tests/claims)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from ntsim import _io
from ntsim.experiment import list_experiments, load_experiment, output_stem, parse_overrides


@dataclasses.dataclass(frozen=True)
class _Config:
    d: int = 10
    rate: float = 0.5
    name: str = "a"
    flag: bool = False
    depths: tuple[int, ...] = (1, 2)


def test_overrides_are_parsed_with_the_field_types():
    parsed = parse_overrides(
        _Config, ["d=200", "rate=1e-3", "name=bottom", "flag=true", "depths=1,2,4"]
    )
    assert parsed == {"d": 200, "rate": 1e-3, "name": "bottom", "flag": True, "depths": (1, 2, 4)}


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("dd=3", "Valid fields: d, depths, flag, name, rate"),
        ("d=3.5", "expected a value of type int"),
        ("flag=maybe", "expected a value of type bool"),
        ("depths=1,x", "expected a value of type int"),
        ("depths=1,nan", "expected a value of type int"),
        ("rate=nan", "expected a finite number"),
        ("rate=-inf", "expected a finite number"),
        ("d", "FIELD=VALUE"),
    ],
)
def test_bad_overrides_raise_errors_that_say_what_is_valid(assignment, message):
    with pytest.raises(ValueError, match=message):
        parse_overrides(_Config, [assignment])


def test_output_stems_differ_whenever_the_configuration_differs():
    stems = {
        output_stem("t/fig", scale="full", seed=0, overrides={}),
        output_stem("t/fig", scale="quick", seed=0, overrides={}),
        output_stem("t/fig", scale="quick", seed=1, overrides={}),
        output_stem("t/fig", scale="quick", seed=0, overrides={"d": 3}),
        output_stem("t/fig", scale="quick", seed=0, overrides={"d": 4}),
    }
    assert len(stems) == 5
    assert output_stem("t/fig", scale="full", seed=0, overrides={}) == "fig"


def test_atomic_json_round_trip_leaves_no_temporary_files(tmp_path):
    path = _io.write_json(tmp_path / "sub" / "r.json", {"a": np.arange(3), "c": _Config()})
    assert json.loads(path.read_text()) == {
        "a": [0, 1, 2],
        "c": {"d": 10, "rate": 0.5, "name": "a", "flag": False, "depths": [1, 2]},
    }
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def _int_field(config) -> tuple[object, str] | None:
    """An integer field of ``config`` or of a setting nested in it: (owner, name)."""
    for f in dataclasses.fields(config):
        if f.type in ("int", int):
            return config, f.name
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and (found := _int_field(value)):
            return found
    return None


@pytest.mark.parametrize("name", list_experiments())
def test_every_config_validates_its_integer_fields(name):
    """Each experiment's default Config is valid and rejects a non-integer / non-positive size
    (its own, or that of a shared theory setting it holds); a Config that only selects the
    claims' shared settings by name rejects an unknown name."""
    module = load_experiment(name)
    config = module.SCALES["quick"]
    found = _int_field(config)
    if found is None:
        choices = [f.name for f in dataclasses.fields(config) if f.type in ("str", str)]
        assert choices, f"{name}: no integer or choice fields?"
        with pytest.raises(ValueError, match=r"must be"):
            dataclasses.replace(config, **{choices[0]: "no-such-choice"})
        return
    owner, field = found
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match=r"must be"):
            dataclasses.replace(owner, **{field: bad})


def test_a_failing_plot_writes_neither_file_and_a_record_always_has_its_png(tmp_path):
    class Broken:
        def savefig(self, *args, **kwargs):
            raise RuntimeError("cannot draw")

    png, record = tmp_path / "t" / "fig.png", tmp_path / "t" / "fig.json"
    with pytest.raises(RuntimeError, match="cannot draw"):
        _io.write_figure_and_record(Broken(), png, record, {"a": 1})
    assert not png.exists() and not record.exists()

    class Unserialisable:
        pass

    import matplotlib.pyplot as plt

    figure = plt.figure()
    with pytest.raises(TypeError):
        _io.write_figure_and_record(figure, png, record, {"a": Unserialisable()})
    assert not png.exists() and not record.exists()  # the JSON failed first: no orphan PNG
    _io.write_figure_and_record(figure, png, record, {"a": 1})
    plt.close(figure)
    assert json.loads(record.read_text()) == {"a": 1} and png.read_bytes()[:4] == b"\x89PNG"


def test_outputs_are_readable_by_everyone_not_only_their_owner(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = _io.write_json(tmp_path / "r.json", {"a": 1})
    finally:
        os.umask(old)
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode == 0o644, oct(mode)  # mkstemp alone would leave 0o600


@pytest.mark.parametrize("name", list_experiments())
def test_run_help_lists_every_config_field_with_both_scales(name):
    from ntsim.experiment import describe_experiment

    text = describe_experiment(name)
    module = load_experiment(name)
    rows = {line.split()[0]: line for line in text.splitlines()[5:] if line.strip()}
    for field in dataclasses.fields(module.Config):
        assert field.name in rows, field.name


def test_run_help_reads_each_fields_meaning_from_its_declaration():
    """A ``param`` field's meaning is its declaration's; a field of a theory setting that
    ``Config`` inherits reads the setting's ``Attributes:`` docstring."""
    from ntsim.experiment import describe_experiment

    text = describe_experiment("linear_teachers/fig1_covariance_alignment")
    (row,) = [line for line in text.splitlines() if line.startswith("d ")]
    assert row.split()[1:5] == ["*", "int", "200", "1000"]
    assert row.endswith("input dimension (paper)")
    text = describe_experiment("early_stopping/learning_curves")
    (row,) = [line for line in text.splitlines() if line.startswith("width ")]
    assert row.split()[1:4] == ["int", "12", "64"] and "of the pretrained attention block" in row


# Configs that are theory settings on claims' paths: their field comments are added with
# the next full-scale re-recording of their topic (provenance hashes the source).
PENDING_FIELD_DOCS = {
    "linearization/kappa_predicts_finetuning",
    "overtraining/fig_pretraining_budget",
}


@pytest.mark.parametrize("name", list_experiments())
def test_every_config_field_says_what_it_means(name):
    from ntsim.experiment import _field_comments

    config = load_experiment(name).Config
    meanings = _field_comments(config)
    missing = [f.name for f in dataclasses.fields(config) if not meanings.get(f.name)]
    if name in PENDING_FIELD_DOCS:
        assert missing, f"{name} is documented now: remove it from PENDING_FIELD_DOCS"
    else:
        assert not missing, f"{name}: no comment beside {missing}"
