"""Bad input never passes silently: each case asserts the exit status (2: the user's error, one
line ``ntsim: error: ...``) or the exception class, and the key words of the message.

The cases come from a bad-input trial of the command line (the library's own cases live
beside each package's tests; every experiment config field is covered by
``tests/test_config_fields.py``). Every case here fails before anything is computed.
"""

from __future__ import annotations

import json

import pytest

from ntsim.cli import main

# (argv after `ntsim`, words that must appear in the one-line error). `{out}` is a fresh
# writable directory, `{file}` an existing plain file.
CLI_CASES = [
    # ntsim run
    (["run", "nosuch/experiment", "--out", "{out}"], ["nosuch/experiment"]),
    (["run", "linear_teachers", "--out", "{out}"], ["linear_teachers"]),
    (["run", "linear_teachers/fig3_freezing", "--set", "nosuch=1", "--out", "{out}"], ["nosuch"]),
    (["run", "linear_teachers/fig3_freezing", "--set", "d", "--out", "{out}"], ["FIELD=VALUE"]),
    (["run", "linear_teachers/fig3_freezing", "--set", "d=abc", "--out", "{out}"], ["d", "int"]),
    (["run", "linear_teachers/fig3_freezing", "--set", "d=1.5", "--out", "{out}"], ["d", "int"]),
    (["run", "linear_teachers/fig3_freezing", "--set", "d=1", "--out", "{out}"], ["d", "≥ 2"]),
    (["run", "linear_teachers/fig3_freezing", "--set", "d=-5", "--out", "{out}"], ["d"]),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", f"d={10**30}", "--out", "{out}"],
        ["too large"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "eta_scale=nan", "--out", "{out}"],
        ["eta_scale", "finite"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "eta_scale=inf", "--out", "{out}"],
        ["eta_scale", "finite"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "eta_scale=0.7", "--out", "{out}"],
        ["eta_scale", "(0, 0.5)"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "eta_scale=0", "--out", "{out}"],
        ["eta_scale", "(0, 0.5)"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "task_noise=-1", "--out", "{out}"],
        ["task_noise", "> 0"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "n_values=3,nan", "--out", "{out}"],
        ["n_values", "int"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "n_values=3,,6", "--out", "{out}"],
        ["n_values", "empty element"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "n_values=", "--out", "{out}"],
        ["n_values", "empty"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "n_values=6,3", "--out", "{out}"],
        ["n_values", "increasing"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "n_values=5,200", "--out", "{out}"],
        ["n_values", "d − 1"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "n_values=0,5", "--out", "{out}"],
        ["n_values", "≥ 1"],
    ),
    (
        ["run", "linear_teachers/fig3_freezing", "--set", "seeds=1", "--out", "{out}"],
        ["seeds", "≥ 2"],
    ),
    (["run", "linear_teachers/fig3_freezing", "--out", "{file}"], ["--out", "not a directory"]),
    (["run", "linear_teachers/fig3_freezing", "--out", ""], ["--out", "empty"]),
    (
        [
            "run",
            "linear_teachers/fig1_covariance_alignment",
            "--set",
            "deterministic=x",
            "--out",
            "{out}",
        ],
        ["deterministic", "nested setting"],
    ),  # fmt: skip
    (
        ["run", "stability/thm2_2_bound_variants", "--set", "settings=huge", "--out", "{out}"],
        ["settings", "one of"],
    ),
    # ntsim verify
    (["verify", "--id", "nosuch.claim", "--out", "{out}"], ["nosuch.claim"]),
    (["verify", "--topic", "nosuch", "--out", "{out}"], ["nosuch"]),
    (
        [
            "verify",
            "--id",
            "linear_teachers.thm4_1.closed_form",
            "--seeds",
            "3:1",
            "--out",
            "{out}",
        ],
        ["--seeds", "selects no seed"],
    ),
    (
        ["verify", "--id", "linear_teachers.thm4_1.closed_form", "--seeds", "a", "--out", "{out}"],
        ["--seeds", "cannot read"],
    ),
    (
        ["verify", "--id", "linear_teachers.thm4_1.closed_form", "--seeds", "", "--out", "{out}"],
        ["--seeds", "cannot read"],
    ),
    (
        [
            "verify",
            "--id",
            "linear_teachers.thm4_1.closed_form",
            "--seeds",
            "1,1",
            "--out",
            "{out}",
        ],
        ["--seeds", "distinct"],
    ),
    (
        [
            "verify",
            "--id",
            "linear_teachers.thm4_1.closed_form",
            "--seeds",
            "99999999999999999999",
            "--out",
            "{out}",
        ],
        ["--seeds", "out of range"],
    ),  # fmt: skip
    (
        [
            "verify",
            "--id",
            "linear_teachers.thm4_1.closed_form",
            "--seeds",
            "4294967294:4294967298",
            "--out",
            "{out}",
        ],
        ["--seeds", "out of range"],
    ),  # fmt: skip
    (
        [
            "verify",
            "--id",
            "linear_teachers.thm4_1.closed_form",
            "--seeds",
            "0:100000000",
            "--out",
            "{out}",
        ],
        ["--seeds", "at most"],
    ),  # fmt: skip
    (
        ["verify", "--id", "linear_teachers.thm4_1.closed_form", "--out", "{file}"],
        ["--out", "not a directory"],
    ),
    # ntsim report
    (["report", "--out", "{out}/missing"], ["--out", "no such directory"]),
    (["report", "--out", "{out}", "--topic", "linear_teachers"], ["--topic", "--stale"]),
    (["report", "--out", "{out}", "--docs", "{file}"], ["--docs", "not a directory"]),
    # ntsim falsify
    (["falsify", "--out", "{out}"], ["claim ids", "--all"]),
    (["falsify", "nosuch.claim", "--out", "{out}"], ["nosuch.claim"]),
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--restarts", "0", "--out", "{out}"],
        ["--restarts", "[1,"],
    ),
    (
        [
            "falsify",
            "linear_teachers.thm5_4.bounds",
            "--restarts",
            "1000000000000",
            "--out",
            "{out}",
        ],
        ["--restarts"],
    ),  # fmt: skip
    (["falsify", "linear_teachers.thm5_4.bounds", "--steps", "-1", "--out", "{out}"], ["--steps"]),
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--learning-rate", "inf", "--out", "{out}"],
        ["--learning-rate", "finite"],
    ),
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--learning-rate", "nan", "--out", "{out}"],
        ["--learning-rate"],
    ),
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--learning-rate", "-1", "--out", "{out}"],
        ["--learning-rate"],
    ),
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--budget", "-5", "--out", "{out}"],
        ["--budget"],
    ),
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--budget", "nan", "--out", "{out}"],
        ["--budget"],
    ),
    (
        [
            "falsify",
            "linear_teachers.thm5_4.bounds",
            "--records",
            "{out}/missing",
            "--out",
            "{out}",
        ],
        ["--records", "no such directory"],
    ),  # fmt: skip
    (
        ["falsify", "linear_teachers.thm5_4.bounds", "--records", "{file}", "--out", "{out}"],
        ["--records"],
    ),
    (["falsify", "linear_teachers.thm5_4.bounds", "--out", "{file}"], ["--out", "not a directory"]),
    # ntsim mutate
    (["mutate", "--topic", "nosuch", "--dry-run", "--out", "{out}"], ["nosuch"]),
    (["mutate", "--jobs", "0", "--dry-run", "--out", "{out}"], ["--jobs"]),
    (["mutate", "--timeout", "-1", "--dry-run", "--out", "{out}"], ["--timeout"]),
    (["mutate", "--timeout", "nan", "--dry-run", "--out", "{out}"], ["--timeout"]),
    (["mutate", "--sample", "0", "--dry-run", "--out", "{out}"], ["--sample"]),
    (["mutate", "--rewrite", "--out", "{out}"], ["MUTATION.json", "does not exist"]),
    (["mutate", "--controls", "--out", "{out}"], ["MUTATION.json", "does not exist"]),
]


def _argv(argv: list[str], tmp_path) -> list[str]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    file = tmp_path / "a_file"
    file.write_text("not a directory")
    return [a.replace("{out}", str(out)).replace("{file}", str(file)) for a in argv]


@pytest.mark.parametrize(("argv", "words"), CLI_CASES, ids=[" ".join(c[0][:4]) for c in CLI_CASES])
def test_a_users_mistake_is_one_line_naming_it(argv, words, tmp_path, capsys):
    status = main(_argv(argv, tmp_path))
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    (line,) = [line for line in err.splitlines() if line.startswith("ntsim: error:")]
    assert "Traceback" not in err, err
    for word in words:
        assert word in line, (word, line)


@pytest.mark.parametrize("name", ["MUTATION.json", "FALSIFICATION.json"])
def test_a_corrupt_table_is_named_by_report_stale(name, tmp_path, capsys):
    (tmp_path / name).write_text("{not json")
    status = main(["report", "--stale", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and name in err and "not readable JSON" in err, err


def test_an_experiment_record_without_provenance_is_reported_not_a_crash(tmp_path, capsys):
    (tmp_path / "topic").mkdir()
    (tmp_path / "topic" / "figure.json").write_text(json.dumps({"experiment": "topic/figure"}))
    status = main(["report", "--out", str(tmp_path), "--docs", str(tmp_path / "docs")])
    err = capsys.readouterr().err
    assert status == 0 and "figure.json lacks scale" in err, err


def test_seeds_beyond_the_prng_range_would_alias_smaller_ones():
    """Why --seeds stops at 2³² − 1: a larger master seed gives the key of a smaller one."""
    import jax

    assert (
        jax.random.key_data(jax.random.key(2**32)) == jax.random.key_data(jax.random.key(0))
    ).all()
