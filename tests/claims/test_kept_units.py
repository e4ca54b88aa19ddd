"""``ntsim.claims._kept_units``: a claims' simulation keeps its units only when asked, and
reuses them only at the same setting, key and code hash."""

from __future__ import annotations

import dataclasses

import jax

from ntsim.claims import _kept_units
from ntsim.claims._kept_units import keeping_units
from ntsim.run_cache import KEEP_UNITS_ENV


@dataclasses.dataclass(frozen=True)
class Setting:
    size: int = 2


def _simulation(computed):
    def simulate(key, setting, *, memo=None):
        memo = memo or (lambda name, compute: compute())
        units = []
        for i in range(setting.size):

            def compute(i=i):
                computed.append(i)
                return {"value": float(i) + float(jax.random.uniform(key))}

            units.append(memo(f"unit{i}", compute)["value"])
        return units

    return simulate


def test_units_are_kept_only_when_the_variable_names_a_directory(tmp_path, monkeypatch):
    computed = []
    run = keeping_units(_simulation(computed), "topic.sim")
    key = jax.random.PRNGKey(0)
    monkeypatch.delenv(KEEP_UNITS_ENV, raising=False)
    first = run(key, Setting())
    assert run(key, Setting()) == first and computed == [0, 1, 0, 1]
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv(KEEP_UNITS_ENV, str(tmp_path))
    computed.clear()
    assert run(key, Setting()) == first and computed == [0, 1]
    assert run(key, Setting()) == first and computed == [0, 1]  # read back, same numbers
    assert len(list((tmp_path / "topic.sim").iterdir())) == 2
    run(key, Setting(size=3))  # another setting: its own units
    run(jax.random.PRNGKey(1), Setting())  # another key: its own units
    assert computed == [0, 1, 0, 1, 2, 0, 1]


def test_a_changed_code_hash_computes_every_unit_again(tmp_path, monkeypatch):
    computed = []
    run = keeping_units(_simulation(computed), "topic.sim")
    monkeypatch.setenv(KEEP_UNITS_ENV, str(tmp_path))
    run(jax.random.PRNGKey(0), Setting())
    monkeypatch.setattr(_kept_units, "code_hash", lambda roots: "another code")
    run(jax.random.PRNGKey(0), Setting())
    assert computed == [0, 1, 0, 1]


def test_the_wrapper_keeps_the_simulations_module_for_the_records():
    from ntsim.claims._provenance import callable_module
    from ntsim.claims.linearization._minilm_kappa import MINILM_KAPPA
    from ntsim.theory.linearization import minilm

    assert callable_module(MINILM_KAPPA.fn) == callable_module(minilm.simulate_minilm_kappa)


def test_verify_refuses_a_keep_units_path_that_is_a_file(tmp_path, capsys):
    from ntsim.cli import main

    target = tmp_path / "file"
    target.write_text("")
    code = main(["verify", "--id", "linearization.minilm_lambda.gap_shrinks", "--keep-units",
                 str(target), "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 2  # before any computing
    err = capsys.readouterr().err
    assert "--keep-units" in err and "not a directory" in err
