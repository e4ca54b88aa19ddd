"""The ``ntsim`` command line end to end (small overrides so it runs in seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ntsim import _reproduce, cli

FIG1 = "linear_teachers/fig1_covariance_alignment"
SMALL = ["--set", "d=40", "--set", "top=4", "--set", "repeats=3"]


def test_list_names_experiments_and_claims(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert FIG1 in out and "linear_teachers.thm4_1.closed_form" in out


def test_run_writes_png_json_and_metadata_and_report_indexes_it(tmp_path):
    assert cli.main(["run", FIG1, "--out", str(tmp_path), "--seed", "2", *SMALL]) == 0
    (json_path,) = (tmp_path / "linear_teachers").glob("*.json")
    assert json_path.with_suffix(".png").stat().st_size > 10_000  # a real figure, not empty
    record = json.loads(json_path.read_text())
    assert record["overrides"] == {"d": 40, "top": 4, "repeats": 3}
    assert record["config"]["d"] == 40 and record["seed"] == 2 and record["scale"] == "quick"
    assert record["metadata"]["versions"]["jax"] and record["wall_time_s"] > 0
    assert "_seed2_" in json_path.stem  # a non-default config never takes the default name
    # `ntsim report` indexes what was written (same run: fig1 costs ~25 s of compilation)
    assert cli.main(["report", "--out", str(tmp_path)]) == 0
    assert json_path.with_suffix(".png").name in (tmp_path / "README.md").read_text()


def test_unknown_field_lists_the_valid_ones(tmp_path, capsys):
    assert cli.main(["run", FIG1, "--out", str(tmp_path), "--set", "dimension=3"]) == 2
    err = capsys.readouterr().err
    assert "Valid fields:" in err and "repeats" in err
    assert not list(tmp_path.rglob("*.png"))


def test_unknown_experiment_is_a_usage_error(capsys):
    assert cli.main(["run", "linear_teachers/fig99"]) == 2
    assert FIG1 in capsys.readouterr().err


def test_verify_one_claim_writes_the_table(tmp_path):
    claim = "linear_teachers.thm4_1.translation_invariance"
    assert cli.main(["verify", "--id", claim, "--out", str(tmp_path)]) == 0
    table = (tmp_path / "linear_teachers" / "VERIFICATION_quick.md").read_text()
    assert claim in table and "1 of 1 claims as expected" in table
    payload = json.loads((tmp_path / "linear_teachers" / "VERIFICATION_quick.json").read_text())
    assert payload["claims"][0]["num_instances"] >= 200
    index = (tmp_path / "VERIFICATION_quick.md").read_text()
    assert "[linear_teachers](linear_teachers/VERIFICATION_quick.md) | 1 of 1 |" in index


def test_verify_runs_several_seeds_and_report_stale_reads_the_tables(tmp_path, capsys):
    claim = "linear_teachers.thm4_1.translation_invariance"
    out = ["--out", str(tmp_path)]
    assert cli.main(["verify", "--id", claim, "--seeds", "0:2", "--scale", "quick", *out]) == 0
    (entry,) = json.loads((tmp_path / "linear_teachers" / "VERIFICATION_quick.json").read_text())[
        "claims"
    ]
    assert entry["seeds"] == [0, 1] and entry["per_seed_verdicts"] == ["holds", "holds"]
    capsys.readouterr()
    assert cli.main(["verify", "--id", claim, "--seeds", "0:2", "--resume", *out]) == 0
    assert "1/1 claims as expected at seeds 0,1 (1 from the tables)" in capsys.readouterr().out
    capsys.readouterr()
    # the other registered claims of the topic have no row yet: not clean, and listed
    assert cli.main(["report", "--stale", "--scale", "quick", "--topic", "linear_teachers", *out])
    listed = capsys.readouterr().out
    assert "not recorded" in listed and claim not in listed
    entry["scale_code_hash"] = entry["code_hash"] = "0" * 16
    path = tmp_path / "linear_teachers" / "VERIFICATION_quick.json"
    path.write_text(json.dumps({"claims": [entry]}))
    assert cli.main(["report", "--stale", "--scale", "quick", *out]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith(claim) and "code changed" in line for line in lines)


def test_verify_usage_errors_exit_2(capsys):
    other = "linear_teachers.thm4_1.translation_invariance"
    assert cli.main(["verify", "--topic", "stability", "--id", other]) == 2
    assert "No claim selected" in capsys.readouterr().err
    assert cli.main(["verify", "--id", "no.such.claim"]) == 2
    assert cli.main(["verify", "--seeds", "2:1"]) == 2


def test_command_line_fills_the_persistent_compilation_cache(tmp_path):
    """`ntsim` turns on JAX's persistent cache at $NTSIM_JAX_CACHE (compile-heavy reruns)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "TF_CPP"))}
    env["NTSIM_JAX_CACHE"] = str(tmp_path / "cache")
    claim = "linear_teachers.thm4_1.translation_invariance"
    command = [sys.executable, "-m", "ntsim.cli", "verify", "--id", claim, "--out", str(tmp_path)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert any((tmp_path / "cache").iterdir()), "nothing was cached"
    assert "cpu_aot_loader" not in done.stderr  # XLA's cache-hit log lines are silenced


@pytest.mark.parametrize(
    ("level", "given", "expected"),
    [
        (None, None, "--xla_backend_optimization_level=1"),
        ("0", "--xla_force_host_platform_device_count=4",
         "--xla_force_host_platform_device_count=4 --xla_backend_optimization_level=0"),
        ("default", None, ""),
        ("1", "--xla_backend_optimization_level=3", "--xla_backend_optimization_level=3"),
    ],
)  # fmt: skip
def test_command_line_sets_the_llvm_optimization_level_before_jax_starts(level, given, expected):
    """`ntsim` appends the level to XLA_FLAGS unless told otherwise; an explicit flag wins."""
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "NTSIM_XLA_OPT_LEVEL")}
    env.update({"XLA_FLAGS": given} if given is not None else {})
    env.update({"NTSIM_XLA_OPT_LEVEL": level} if level is not None else {})
    script = (
        "import os, sys; from ntsim import cli, _jax_startup; assert 'jax' not in sys.modules; "
        "_jax_startup.configure_compiler_effort(); print(os.environ.get('XLA_FLAGS', ''))"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_bad_llvm_optimization_level_is_a_usage_error():
    env = {**os.environ, "NTSIM_XLA_OPT_LEVEL": "fast"}
    env.pop("XLA_FLAGS", None)
    command = [sys.executable, "-m", "ntsim.cli", "list"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "NTSIM_XLA_OPT_LEVEL must be 0-3 or 'default', got 'fast'" in done.stderr


def test_reproduce_jobs_orders_topics_and_reports_a_dead_child(tmp_path, monkeypatch, capsys):
    from ntsim.claims import REGISTRY
    from ntsim.experiment import list_experiments

    assert cli.main(["reproduce", "--jobs", "0"]) == 2
    sizes: dict[str, int] = {}
    for claim in REGISTRY:
        sizes[claim.topic] = sizes.get(claim.topic, 0) + 1
    for name in list_experiments():
        sizes[name.split("/")[0]] = sizes.get(name.split("/")[0], 0) + 1
    order = _reproduce.topics_by_size()
    assert sorted(order) == sorted(sizes)
    assert [sizes[t] for t in order] == sorted(sizes.values(), reverse=True)
    # a child that dies before its summary (unknown topic: usage error, exit 2) is a
    # FAILED row and a non-zero exit, not a silent skip
    monkeypatch.setattr(_reproduce, "topics_by_size", lambda: ["no_such_topic"])
    assert cli.main(["reproduce", "--jobs", "2", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "no_such_topic (whole topic, exit status 2)" in out and "FAILED" in out
    assert "0/1 experiments ok; 0/0 claims as expected" in out


# ------------------------------------------------------------------ the error policy


def test_seed_out_of_range_is_refused_before_anything_runs(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", FIG1, "--seed", "99999999999999999999"])
    assert exit_info.value.code == 2
    assert "seed 99999999999999999999 is out of range: use 0 to 4294967295" in (
        capsys.readouterr().err
    )


def test_output_directory_is_checked_before_computing(tmp_path, capsys):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    assert cli.main(["verify", "--id", "nonsense", "--out", str(not_a_dir)]) == 2
    assert f"--out {not_a_dir}: exists and is not a directory" in capsys.readouterr().err
    missing = tmp_path / "never_written"
    assert cli.main(["report", "--out", str(missing)]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert not missing.exists()  # report does not create an empty index somewhere else


def test_internal_errors_say_they_are_bugs_and_debug_shows_the_traceback(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setitem(cli._COMMANDS, "list", broken)
    assert cli.main(["list"]) == 3
    err = capsys.readouterr().err
    assert "internal error (a bug in ntsim" in err and "RuntimeError: boom" in err
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["--debug", "list"])


def test_a_swallowed_interrupt_still_stops_the_run(monkeypatch, tmp_path, capsys):
    """Python loses a KeyboardInterrupt raised inside a gc callback ("Exception ignored");
    the command line remembers the Ctrl-C, so nothing is written after it and it exits 130."""
    import signal

    from ntsim import _io

    written = []

    def swallowed(args):
        try:
            signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # the handler cli installed
        except KeyboardInterrupt:
            pass  # what a gc callback does with it
        with pytest.raises(KeyboardInterrupt):  # no write after a Ctrl-C
            _io.atomic_write_text(tmp_path / "late.json", "{}")
        written.extend(tmp_path.iterdir())
        return 0

    monkeypatch.setitem(cli._COMMANDS, "list", swallowed)
    before = signal.getsignal(signal.SIGINT)
    assert cli.main(["list"]) == 130
    assert "ntsim: interrupted" in capsys.readouterr().err
    assert written == [] and signal.getsignal(signal.SIGINT) is before  # handler restored
    monkeypatch.setitem(cli._COMMANDS, "list", lambda args: 0)
    assert cli.main(["list"]) == 0  # the next run starts without the old Ctrl-C


def test_an_interrupt_inside_jax_garbage_collection_is_asked_again_not_printed(monkeypatch):
    """A Ctrl-C that lands in JAX's gc callback is not raised there (Python would print
    "Exception ignored" and drop it): it is remembered and SIGINT is sent again, to land
    at the next bytecode outside the callback."""
    import signal
    import sys
    import time

    from ntsim import _io

    sent = []
    monkeypatch.setattr(_io.os, "kill", lambda pid, sig: sent.append(sig))

    def _xla_gc_callback():  # the name JAX's callback has
        return sys._getframe()

    frame = _xla_gc_callback()
    _io._INTERRUPTED.clear()
    _io._on_interrupt(signal.SIGINT, frame)  # no KeyboardInterrupt here
    deadline = time.monotonic() + 5.0
    while not sent and time.monotonic() < deadline:  # the re-sent SIGINT comes from a timer
        time.sleep(0.01)
    assert _io.interrupt_requested() and sent == [signal.SIGINT]
    with pytest.raises(KeyboardInterrupt):  # anywhere else it raises as Python does
        _io._on_interrupt(signal.SIGINT, sys._getframe())
    _io._INTERRUPTED.clear()


def test_interrupt_exits_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli._COMMANDS, "list", interrupted)
    assert cli.main(["list"]) == 130
    assert "ntsim: interrupted" in capsys.readouterr().err


def test_an_interrupt_while_the_command_line_is_imported_exits_130(monkeypatch, capsys):
    """The console script imports ntsim.cli (and JAX) inside its own handler: a Ctrl-C in
    those seconds is one line and 130, not an import traceback (trial case I09)."""
    import sys

    from ntsim import _console

    class InterruptingFinder:
        def find_spec(self, name, path=None, target=None):
            if name == "ntsim.cli":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "ntsim.cli")
    monkeypatch.setattr(sys, "meta_path", [InterruptingFinder(), *sys.meta_path])
    assert _console.main() == 130
    assert capsys.readouterr().err.strip() == "ntsim: interrupted"


def test_an_interrupt_while_the_arguments_are_parsed_exits_130(monkeypatch, capsys):
    """argparse runs before cli.main's own handler (trial case I09 ended in gettext once)."""
    from ntsim import _console

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.argparse.ArgumentParser, "parse_args", interrupted)
    monkeypatch.setattr(cli.sys, "argv", ["ntsim", "list"])
    assert _console.main() == 130
    assert capsys.readouterr().err.strip() == "ntsim: interrupted"


def test_a_deferred_interrupt_is_raised_when_the_block_ends():
    """Ctrl-C while JAX starts (interrupts_deferred) does not stop the block half-way: it is
    raised after it, and the command line still exits 130 (trial case I09, a crash at exit)."""
    import signal

    from ntsim import _io

    finished = []
    with pytest.raises(KeyboardInterrupt), _io.catch_interrupts():
        with _io.interrupts_deferred():
            signal.raise_signal(signal.SIGINT)
            finished.append("the block ran to its end")
        finished.append("not reached")
    assert finished == ["the block ran to its end"]
    with _io.catch_interrupts(), _io.interrupts_deferred():  # nothing remembered from before
        pass


def test_jax_starts_with_interrupts_deferred_before_a_computing_command(monkeypatch, capsys):
    import signal

    from ntsim import _io

    handlers = []
    monkeypatch.setattr(
        cli,
        "start_jax",
        lambda backend: handlers.append((signal.getsignal(signal.SIGINT), backend)),
    )
    for command in ("run", "list", "reproduce"):
        monkeypatch.setitem(cli._COMMANDS, command, lambda args: 0)
    assert cli.main(["list"]) == 0 and handlers == []
    assert cli.main(["run", "linear_teachers/fig1_covariance_alignment"]) == 0
    assert handlers == [(_io._remember_interrupt, True)]
    assert cli.main(["reproduce"]) == 0  # workers compute: no backend in the parent
    assert handlers[-1] == (_io._remember_interrupt, False)


def test_report_names_a_png_without_its_json(tmp_path, capsys):
    (tmp_path / "topic").mkdir()
    (tmp_path / "topic" / "orphan.png").write_bytes(b"\x89PNG")
    assert cli.main(["report", "--out", str(tmp_path)]) == 0
    assert "orphan.png has no JSON beside it" in capsys.readouterr().err


def test_an_experiment_script_becomes_ntsim_run_before_jax_settings_are_too_late(monkeypatch):
    """`python experiments/t/name.py ARGS` started JAX through its imports: the process is
    replaced by `python -m ntsim.cli run t/name ARGS`, which sets the cache and XLA flags."""
    import jax  # noqa: F401  (as the experiment file's own imports do)

    calls = []
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")  # what importing jax leaves behind
    monkeypatch.setattr(
        os, "execve", lambda exe, argv, env: calls.append((exe, argv, env)) or exit(0)
    )
    with pytest.raises(SystemExit):
        cli.run_script("/x/experiments/linear_teachers/fig1_covariance_alignment.py",
                       ["--scale", "full"])  # fmt: skip
    ((exe, argv, env),) = calls
    assert (exe, argv) == (sys.executable, [sys.executable, "-m", "ntsim.cli", "run", FIG1,
                                            "--scale", "full"])  # fmt: skip
    assert "TF_CPP_MIN_LOG_LEVEL" not in env  # so the command line's quieter default applies
