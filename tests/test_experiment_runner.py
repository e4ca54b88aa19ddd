"""The experiment contract: overrides, output naming, atomic writes, claims plumbing."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from ntsim import _io
from ntsim.claims import Claim, compare, run_claims, write_verification
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


def test_compare_margins_and_verdicts():
    equal = compare([1.0, 2.0 + 1e-9], [1.0, 2.0], relation="equal", rtol=1e-8)
    assert equal.holds and equal.worst_margin > 0
    broken = compare([1.0, 3.0], [1.0, 2.0], relation="upper_bound")
    assert not broken.holds and broken.worst_margin == pytest.approx(-1.0)
    assert not compare([np.nan], [1.0], relation="lower_bound").holds  # NaN never passes


def test_claim_runner_records_errors_and_expected_refutations(tmp_path):
    def refuted(key, scale):
        return compare([2.0], [1.0], relation="upper_bound", notes="counterexample")

    def broken(key, scale):
        raise RuntimeError("boom")

    claims = (
        Claim("demo.printed.bound", "Demo 2020, eq. (1)", "x <= 1", refuted, expect="refuted"),
        Claim("demo.broken.check", "Demo 2020, eq. (2)", "never runs", broken),
    )
    runs = run_claims(claims, scale="quick")
    assert [r.verdict for r in runs] == ["refuted", "error"]
    assert [r.as_expected for r in runs] == [True, False]
    md, js = write_verification(runs, out_dir=tmp_path, scale="quick", seed=0)
    assert "1 of 2 recorded claims as expected" in md.read_text()
    assert json.loads(js.read_text())["topics"][0]["as_expected"] == 1
    text = (tmp_path / "demo" / "VERIFICATION_quick.md").read_text()
    assert "1 of 2 claims as expected" in text and "boom" in text
    record = json.loads((tmp_path / "demo" / "VERIFICATION_quick.json").read_text())
    assert record["claims"][0]["verdict"] == "refuted"
    with pytest.raises(ValueError, match="<topic>.<result>.<aspect>"):
        Claim("nodots", "x", "y", refuted)


def test_verification_records_merge_across_runs(tmp_path):
    """A later run replaces only the rows of the claims it ran; full and quick stay apart."""

    def holds(key, scale):
        return compare([0.0], [1.0], relation="upper_bound", notes=f"run at {scale}")

    first = Claim("demo.a.one", "Demo", "a", holds)
    second = Claim("demo.b.two", "Demo", "b", holds)
    write_verification(run_claims((first, second)), out_dir=tmp_path, scale="quick", seed=0)
    write_verification(run_claims((second,)), out_dir=tmp_path, scale="quick", seed=7)
    write_verification(run_claims((first,), scale="full"), out_dir=tmp_path, scale="full", seed=0)
    quick = json.loads((tmp_path / "demo" / "VERIFICATION_quick.json").read_text())["claims"]
    assert [(e["id"], e["seed"]) for e in quick] == [("demo.a.one", 0), ("demo.b.two", 7)]
    full = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    assert [e["id"] for e in full] == ["demo.a.one"] and "full" in full[0]["result"]["notes"]
    assert "2 of 2 recorded" in (tmp_path / "VERIFICATION_quick.md").read_text()


@pytest.mark.parametrize("name", list_experiments())
def test_every_config_validates_its_integer_fields(name):
    """Each experiment's default Config is valid and rejects a non-integer / non-positive size."""
    module = load_experiment(name)
    config = module.SCALES["quick"]
    ints = [f.name for f in dataclasses.fields(config) if f.type in ("int", int)]
    assert ints, f"{name}: no integer fields?"
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match=r"must be"):
            dataclasses.replace(config, **{ints[0]: bad})
