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
_VERIFY_ONE = ["verify", "--id", "linear_teachers.thm4_1.closed_form"]

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
    *(
        ([*_VERIFY_ONE, "--seeds", seeds, "--out", "{out}"], ["--seeds", words])
        for seeds, words in [
            ("3:1", "selects no seed"),
            ("a", "cannot read"),
            ("", "cannot read"),
            ("1,1", "distinct"),
            ("99999999999999999999", "out of range"),
            ("4294967294:4294967298", "out of range"),  # past 2³² − 1: would alias seeds 0, 1
            ("0:100000000", "at most"),
            ("-3:-1", "non-negative"),  # argparse alone took '-3:-1' for an option
        ]
    ),
    ([*_VERIFY_ONE, "--seeds", "0", "--seed", "5", "--out", "{out}"], ["--seed 5", "give one"]),
    (
        [*_VERIFY_ONE, "--out", "{file}"],
        ["--out", "not a directory"],
    ),
    # ntsim report
    (["report", "--out", "{out}/missing"], ["--out", "no such directory"]),
    (["report", "--out", "{out}", "--topic", "linear_teachers"], ["--topic", "--stale"]),
    (["report", "--out", "{out}", "--docs", "{file}"], ["--docs", "not a directory"]),
    (["report", "--out", "{out}", "--docs", ""], ["--docs ''", "e.g. --docs docs"]),
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
        ["--records", "not a directory"],
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
    (
        ["mutate", "--function", "nosuch_fn", "--dry-run", "--out", "{out}"],
        ["any topic", "nosuch_fn"],
    ),
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


def test_a_function_without_topic_is_mutated_in_the_topics_that_hold_it(tmp_path, capsys):
    """--function without --topic: the topics whose claims' paths hold it, not every topic."""
    argv = ["mutate", "--function", "simulate_plateau", "--sample", "1", "--dry-run"]
    status = main([*argv, "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 0, err
    topics = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert topics == {"linearization"}, out


def test_a_compilation_cache_that_is_a_file_is_refused(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "a_file"
    cache.write_text("not a directory")
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.setenv("NTSIM_JAX_CACHE", str(cache))
    status = main(["list", "experiments"])
    err = capsys.readouterr().err
    assert status == 2 and f"NTSIM_JAX_CACHE {cache}: exists and is not a directory" in err, err


def _run_stem(name: str) -> str:
    from ntsim.experiment import output_stem

    return output_stem(name, scale="quick", seed=0, overrides={})


def test_an_output_path_taken_by_a_directory_is_refused_before_computing(tmp_path, capsys):
    name = "linear_teachers/fig1_covariance_alignment"
    (tmp_path / "linear_teachers" / f"{_run_stem(name)}.png").mkdir(parents=True)
    status = main(["run", name, "--out", str(tmp_path)])
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ntsim: error:")]
    assert status == 2 and "run_experiment: the output" in line and "is a directory" in line, line


def test_a_topic_folder_that_is_a_file_is_refused_before_computing(tmp_path, capsys):
    (tmp_path / "linear_teachers").write_text("not a folder")
    status = main(["run", "linear_teachers/fig1_covariance_alignment", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "linear_teachers exists and is not a directory" in err, err


def test_a_write_that_fails_names_the_path_or_the_out_it_was_writing(tmp_path, capsys, monkeypatch):
    """An OSError at the end of a run is one line: the rename's target (not its temp file),
    or, for a full disk (no path), the --out being written."""
    import errno

    import ntsim.experiment

    failures = [
        (OSError(errno.EISDIR, "Is a directory", "x/.f.png.ab.tmp", None, "x/f.png"),
         "x/f.png: Is a directory"),
        (OSError(errno.ENOSPC, "No space left on device"),
         f"No space left on device (writing under --out {tmp_path})"),
    ]  # fmt: skip
    for error, words in failures:

        def fail(*args, error=error, **kwargs):
            raise error

        monkeypatch.setattr(ntsim.experiment, "run_experiment", fail)
        status = main(["run", "linear_teachers/fig1_covariance_alignment", "--out", str(tmp_path)])
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and err[-1] == f"ntsim: error: {words}", err


def test_seeds_beyond_the_prng_range_would_alias_smaller_ones():
    """Why --seeds stops at 2³² − 1: a larger master seed gives the key of a smaller one."""
    import jax

    assert (
        jax.random.key_data(jax.random.key(2**32)) == jax.random.key_data(jax.random.key(0))
    ).all()


# --- ntsim.transformers (not on any claim's path) --------------------------------------------


def _tiny_bert():
    import jax.numpy as jnp

    from ntsim.transformers import BertConfig

    config = BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16,
    )  # fmt: skip
    return config, jnp.ones((2, 8), jnp.int32)


def test_token_ids_outside_the_vocabulary_are_refused_not_nan():
    import jax

    from ntsim.transformers import BertClassifier

    config, ids = _tiny_bert()
    model = BertClassifier(config)
    params = model.init(jax.random.PRNGKey(0), ids)["params"]
    for bad in (ids + 100, ids - 2):
        with pytest.raises(ValueError, match=r"token ids must lie in \[0, vocab_size − 1\]"):
            model.apply({"params": params}, bad)


def test_float_ids_and_a_mask_of_another_shape_are_named():
    import jax
    import jax.numpy as jnp

    from ntsim.transformers import BertClassifier

    config, ids = _tiny_bert()
    model = BertClassifier(config)
    params = model.init(jax.random.PRNGKey(0), ids)["params"]
    with pytest.raises(ValueError, match="input_ids must be integer token ids, got dtype float32"):
        model.apply({"params": params}, ids.astype(jnp.float32))
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of input_ids"):
        model.apply({"params": params}, ids, jnp.ones((2, 4), jnp.int32))


def test_a_classifier_needs_a_label():
    import jax

    from ntsim.transformers import BertClassifier

    config, ids = _tiny_bert()
    with pytest.raises(ValueError, match="num_labels must be a positive integer, got 0"):
        BertClassifier(config, num_labels=0).init(jax.random.PRNGKey(0), ids)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("heads", 0, "heads must be a positive integer"),
        ("heads", 2.5, "heads must be a positive integer"),
        ("surt_steps", 0, "surt_steps must be a positive integer"),
        ("mixout_p", 1.0, "mixout_p must be [0, 1)"),
        ("mixout_p", -0.1, "mixout_p must be [0, 1)"),
        ("mask_rate", 0.0, "mask_rate must be (0, 1)"),
        ("lnsr_sigma", float("nan"), "lnsr_sigma must be ≥ 0"),
        ("mmr_weight", -1.0, "mmr_weight must be ≥ 0"),
        ("surt_learning_rate", 0.0, "surt_learning_rate must be > 0"),
    ],
)
def test_method_settings_refuse_what_the_methods_cannot_use(field, value, words):
    from ntsim.transformers import MethodSettings

    with pytest.raises(ValueError) as error:
        MethodSettings(**{field: value})
    assert words in str(error.value)


@pytest.mark.parametrize("max_length", [0, 1, 2.5, True])
def test_a_tokenizer_needs_room_for_its_special_tokens(max_length):
    from ntsim.transformers import load_tokenizer

    with pytest.raises(ValueError, match="max_length must be an integer ≥ 2"):
        load_tokenizer(max_length=max_length)


def _finetune_args(tmp_path, **change):
    import jax
    import jax.numpy as jnp
    import optax

    from ntsim.transformers import adamw

    def loss_fn(params, batch, key):
        logits = batch["x"] @ params["w"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"]).mean()

    data = {"x": jnp.ones((6, 3)), "label": jnp.asarray([0, 1, 0, 1, 0, 1])}
    args = dict(
        loss_fn=loss_fn, params0={"w": jnp.zeros((3, 2))}, train_data=data,
        optimizer=adamw(1e-2), num_steps=2, batch_size=2, keys=jax.random.PRNGKey(0),
    )  # fmt: skip
    args.update(change)
    return args


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"keys": [1, 2, 3]}, "keys must be one PRNG key"),
        ({"train_data": {"x": [[1.0] * 3] * 6, "label": [0, 1, -1, 1, 0, 1]}}, "negative label"),
        ({"state_path": "{tmp}/missing/state.npz"}, "not writable"),
    ],
)
def test_finetune_refuses_bad_input_before_training(change, words, tmp_path):
    import jax.numpy as jnp

    from ntsim.transformers import finetune

    change = {k: (str(v).replace("{tmp}", str(tmp_path)) if k == "state_path" else v)
              for k, v in change.items()}  # fmt: skip
    if "keys" in change:
        change["keys"] = jnp.asarray(change["keys"], jnp.uint32)
    if "train_data" in change:
        change["train_data"] = {k: jnp.asarray(v) for k, v in change["train_data"].items()}
    with pytest.raises(ValueError, match=words):
        finetune(**_finetune_args(tmp_path, **change))


@pytest.mark.parametrize("learning_rate", [float("nan"), float("inf"), 0.0, -1e-3])
def test_adamw_needs_a_positive_finite_step(learning_rate):
    from ntsim.transformers import adamw

    with pytest.raises(ValueError, match="learning_rate must be positive and finite"):
        adamw(learning_rate)
