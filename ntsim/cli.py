"""``ntsim`` command line: list | run | verify | reproduce | report | mutate.

Examples::

    ntsim list
    ntsim run linear_teachers/fig1_covariance_alignment --scale quick --set d=200
    ntsim verify --topic linear_teachers --seeds 0:3
    ntsim reproduce                 # every experiment + every claim, quick scale
    ntsim reproduce --jobs 2        # the same, one process per topic, two at a time
    ntsim report                    # index of the figures written so far
    ntsim report --stale            # rows whose source changed or missing (exit 1 if any)
    ntsim mutate --topic overtraining --sample 20 --jobs 2   # would a claim notice a bug?

Exit status: 0 when everything ran and every claim has its expected verdict, 1 when an
experiment failed or a claim did not (or ``report --stale`` found stale rows), 2 on bad
usage (an unknown topic or id, an empty selection, a malformed ``--seeds``, an output
directory that cannot be written), 3 on an internal error (a bug in ntsim), 130 when
interrupted.

Errors: a failure the user can cause is one line, ``ntsim: error: ...``, naming what was
wrong and what to do; an internal error says it is a bug. ``ntsim --debug COMMAND`` shows
the traceback of either. What can be checked before computing is (the seed's range, that
``--out`` can be written, that ``report --out`` exists), so no long run ends in an error
it could have had at the start.

JAX start-up: the compilation cache and the compiler effort the command line sets before
JAX starts are in :mod:`ntsim._jax_startup`.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
from collections.abc import Sequence

from ntsim._io import catch_interrupts, interrupt_requested, interrupts_deferred
from ntsim._jax_startup import configure_compilation_cache, configure_compiler_effort, start_jax
from ntsim.falsify import add_falsify_parser
from ntsim.mutation import add_mutate_parser

__all__ = ["main", "run_script"]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


#: Seeds are ``jax.random.PRNGKey`` seeds: unsigned 32-bit integers.
MAX_SEED = 2**32 - 1


def seed_argument(text: str) -> int:
    """An integer in ``[0, 2³² − 1]`` (argparse type of every seed option).

    Examples:
      >>> seed_argument("7")
      7
      >>> seed_argument("99999999999999999999")
      Traceback (most recent call last):
      ...
      argparse.ArgumentTypeError: seed 99999999999999999999 is out of range: use 0 to 4294967295
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed {text!r} is not an integer") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"seed {text} is out of range: use 0 to {MAX_SEED}")
    return value


def _add_common(parser: argparse.ArgumentParser, *, scale: bool = True) -> None:
    if scale:
        parser.add_argument("--scale", choices=("quick", "full"), default="quick")
        parser.add_argument(
            "--seed", type=seed_argument, default=0, help="seed of the jax.random key"
        )
    parser.add_argument("--out", default="figures", help="output directory (default figures/)")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ntsim", description="Numerical theory simulator for fine-tuning theory."
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (before COMMAND)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="list experiments and claims")
    p.add_argument("what", nargs="?", choices=("all", "experiments", "claims"), default="all")
    p = sub.add_parser("run", help="run one experiment: PNG + JSON under --out", add_help=False)
    p.set_defaults(print_run_help=p.print_help)
    p.add_argument("name", nargs="?", help="<topic>/<name>, see `ntsim list experiments`")
    p.add_argument(
        "-h", "--help", action="store_true",
        help="this help; with NAME, the experiment's config fields (type, quick and full "
        "values, meaning)",
    )  # fmt: skip
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a config field (repeatable; tuples as 1,2,4)",
    )
    _add_common(p)
    p = sub.add_parser("verify", help="run the claims, write VERIFICATION.md + JSON")
    p.add_argument("--topic", help="only this topic's claims")
    p.add_argument("--id", dest="ids", action="append", default=[], help="only these claim ids")
    p.add_argument(
        "--seeds",
        help="master seeds: START:STOP (0:3 = 0,1,2) or a list 0,3,7 (default: --seed)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="skip claims already recorded at these seeds and the current source hash",
    )
    p.add_argument(
        "--keep-units",
        metavar="DIR",
        help="keep the finished units of the long MiniLM simulations under DIR at the current "
        "code, so a stopped verify resumes (sets NTSIM_KEEP_UNITS)",
    )
    _add_common(p)
    p = sub.add_parser("reproduce", help="every experiment and every claim, then a summary")
    p.add_argument("--topic", help="only this topic")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="topics run in this many processes at once (default 1; `make reproduce` uses 2)",
    )
    p.add_argument("--summary-json", help=argparse.SUPPRESS)  # used by --jobs children
    _add_common(p)
    p = sub.add_parser(
        "report", help="write <out>/README.md indexing the figures, and the findings pages"
    )
    p.add_argument(
        "--stale",
        action="store_true",
        help="instead list verification rows whose claim source changed, registered "
        "claims with no row, and the stale topics of MUTATION.json and spaces of "
        "FALSIFICATION.json where they exist; exit 1 if any",
    )
    p.add_argument("--topic", help="with --stale: only this topic's claims and tables")
    p.add_argument("--docs", default="docs",
                   help="where the findings pages go (<docs>/findings/<topic>.md)")  # fmt: skip
    p.add_argument("--scale", choices=("quick", "full"), default="full",
                   help="which verification tables --stale reads (default full)")  # fmt: skip
    _add_common(p, scale=False)
    add_mutate_parser(sub, seed_argument)
    add_falsify_parser(sub, seed_argument)
    return parser


def _cmd_list(args) -> int:
    from ntsim.claims import REGISTRY
    from ntsim.experiment import list_experiments

    if args.what in ("all", "experiments"):
        print("Experiments (ntsim run NAME):")
        for name in list_experiments():
            print(f"  {name}")
    if args.what in ("all", "claims"):
        print("Claims (ntsim verify --id ID): id, kind/reading, reference")
        for claim in REGISTRY:
            flag = "" if claim.expect == "holds" else "  [expect refuted]"
            kind = f"{claim.kind}/{claim.reading.kind}"
            print(f"  {claim.id:55s} {kind:18s} {claim.paper}{flag}")
    return 0


def _cmd_run(args) -> int:
    from ntsim.experiment import describe_experiment, run_experiment

    if args.help:
        if args.name is None:
            args.print_run_help()
        else:
            print(describe_experiment(args.name), end="")
        return 0
    if args.name is None:
        raise ValueError("run: give the experiment NAME (see `ntsim list experiments`)")

    _log(f"running {args.name} (scale {args.scale}, seed {args.seed}) ...")
    output = run_experiment(
        args.name, scale=args.scale, seed=args.seed, out_dir=args.out, overrides=args.overrides
    )
    _log(f"done in {output.wall_time_s:.1f} s: {output.png} and {output.json}")
    return 0


def _cmd_verify(args) -> int:
    from ntsim._reproduce import verify_claims

    good, total, _ = verify_claims(args, args.topic, args.ids, log=_log)
    return 0 if good == total else 1


def _cmd_reproduce(args) -> int:
    from ntsim._reproduce import reproduce

    return reproduce(args, log=_log)


def _cmd_report(args) -> int:
    if args.stale:
        from ntsim.claims import stale_records
        from ntsim.mutation import stale_matrix

        stale = stale_records(args.out, args.scale, topic=args.topic)
        for row in stale:
            print(f"{row['id']:58s} {row['why']}  ({row['table']})")
        print(f"{len(stale)} stale verification rows at scale {args.scale}")
        stale_mutation = stale_matrix(pathlib.Path(args.out), topic=args.topic)
        for row in stale_mutation:
            print(f"{row['id']:58s} {row['why']}  ({row['table']})")
        if stale_mutation:
            print(f"{len(stale_mutation)} stale topics in the mutation kill matrix")
        stale_search = []
        if (pathlib.Path(args.out) / "FALSIFICATION.json").exists():
            from ntsim.falsify import stale_entries

            stale_search = [
                why for why in stale_entries(args.out)
                if args.topic is None or why.startswith(f"{args.topic}.")
            ]  # fmt: skip
            for why in stale_search:
                print(f"falsify {why}  (FALSIFICATION.json)")
            if stale_search:
                print(f"{len(stale_search)} stale spaces in the falsification table")
        return 1 if stale or stale_mutation or stale_search else 0
    from ntsim.claims import refresh_searches, write_findings

    refresh_searches(args.out)  # the searched ratios of FALSIFICATION.json, into the tables
    from ntsim._reproduce import write_figure_index

    path = write_figure_index(pathlib.Path(args.out), log=_log)
    print(f"wrote {path}")
    pages = write_findings(args.out, args.docs)
    if pages:
        print(f"wrote {len(pages)} findings pages under {pathlib.Path(args.docs) / 'findings'}")
    return 0


def _cmd_falsify(args) -> int:
    from ntsim.falsify import run_falsify_command

    return run_falsify_command(args, _log)


def _cmd_mutate(args) -> int:
    from ntsim.mutation import run_mutate_command

    return run_mutate_command(args, _log)


#: Commands that compute with JAX, and whether they compute in this process (then its
#: backend is started too, :func:`start_jax`) or in worker processes.
_COMPUTING = {"run": True, "verify": True, "falsify": True, "reproduce": False, "mutate": False}

_COMMANDS = {
    "list": _cmd_list,
    "run": _cmd_run,
    "verify": _cmd_verify,
    "reproduce": _cmd_reproduce,
    "report": _cmd_report,
    "mutate": _cmd_mutate,
    "falsify": _cmd_falsify,
}


def run_script(module_name_or_file: str, argv: Sequence[str] | None = None) -> None:
    """``python experiments/<topic>/<name>.py [--scale ...]``: the same as ``ntsim run``.

    An experiment file ends with ``if __name__ == "__main__": run_script(__file__)``. By
    then the file's own imports have started JAX, too late for the compilation cache and
    the XLA flags the command line sets (module doc), so the process is replaced by
    ``python -m ntsim.cli run NAME ARGS`` (same interpreter, same arguments): the script
    and ``ntsim run`` then behave, and take, the same.
    """
    path = pathlib.Path(module_name_or_file)
    if path.suffix == ".py":
        name = f"{path.parent.name}/{path.stem}"
    else:
        parts = module_name_or_file.split(".")
        name = f"{parts[-2]}/{parts[-1]}"
    args = list(sys.argv[1:] if argv is None else argv)
    if "jax" in sys.modules:
        env = dict(os.environ)
        if env.get("TF_CPP_MIN_LOG_LEVEL") == "1":  # jax's import set it: not the user's choice
            del env["TF_CPP_MIN_LOG_LEVEL"]
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "ntsim.cli", "run", name, *args], env)
    raise SystemExit(main(["run", name, *args]))


def check_output_dir(
    path: str | pathlib.Path, *, must_exist: bool = False, option: str = "--out"
) -> pathlib.Path:
    """``path`` as a directory this process can write, created if needed (unless
    ``must_exist``), checked before any computation.

    Raises:
      ValueError: naming the directory, why it cannot be used and what to do.
    """
    if not str(path).strip():
        example = "docs" if option == "--docs" else "figures"
        raise ValueError(f"{option} '': empty path (give a directory, e.g. {option} {example})")
    path = pathlib.Path(path)
    if must_exist and not path.is_dir():
        raise ValueError(f"{option} {path}: no such directory (nothing to read there; give the "
                         "directory the figures were written to)")  # fmt: skip
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".ntsim-write-check-"):
            pass
    except OSError as error:
        raise ValueError(f"{option} {path}: cannot write there ({error.strerror or error}); "
                         "choose a writable directory") from None  # fmt: skip
    return path


def _check_before_computing(args) -> None:
    if args.command == "run" and args.help:
        return
    if getattr(args, "seeds", None) is not None and args.seed != 0:
        raise ValueError(f"--seed {args.seed} and --seeds {args.seeds}: give one (--seeds runs "
                         "several master seeds, --seed one)")  # fmt: skip
    if args.command in ("run", "verify", "reproduce", "mutate", "falsify"):
        if not (args.command == "falsify" and args.list):
            check_output_dir(args.out)
        if getattr(args, "keep_units", None) is not None:
            check_output_dir(args.keep_units, option="--keep-units")
    elif args.command == "report":
        check_output_dir(args.out, must_exist=True)
        if not args.stale:
            if args.topic is not None:
                raise ValueError("--topic: only with --stale (report writes every topic's pages)")
            check_output_dir(args.docs, option="--docs").joinpath("findings").mkdir(exist_ok=True)


def _glue_dash_values(argv: Sequence[str]) -> list[str]:
    """``--seeds -3:-1`` as ``--seeds=-3:-1``: argparse takes a value starting with ``-`` (other
    than a plain negative number) for an option and says only 'expected one argument'."""
    argv = list(argv)
    for i in range(len(argv) - 1, 0, -1):
        if argv[i - 1] == "--seeds" and argv[i].startswith("-") and not argv[i].startswith("--"):
            argv[i - 1 : i + 1] = [f"--seeds={argv[i]}"]
    return argv


def _error_line(error: Exception, args) -> str:
    """A user's error as one line: an ``OSError`` as ``<path>: <reason>`` (a rename's target,
    not its temp file), or, with no path (a full disk), the ``--out`` being written."""
    if not isinstance(error, OSError) or error.strerror is None:
        return str(error)
    path = error.filename2 if error.filename2 is not None else error.filename
    if path is not None:
        return f"{path}: {error.strerror}"
    out = getattr(args, "out", None)
    return f"{error.strerror} (writing under --out {out})" if out else error.strerror


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ntsim`` console script; returns the exit status (module doc)."""
    args = _build_parser().parse_args(_glue_dash_values(sys.argv[1:] if argv is None else argv))
    try:
        configure_compilation_cache()
        configure_compiler_effort()
        _check_before_computing(args)
        with catch_interrupts():
            if args.command in _COMPUTING:
                with interrupts_deferred():
                    start_jax(backend=_COMPUTING[args.command])
            status = _COMMANDS[args.command](args)
            if interrupt_requested():  # a Ctrl-C that something swallowed: still a stop
                raise KeyboardInterrupt
        return status
    except KeyboardInterrupt:
        print("ntsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `ntsim list | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, OSError) as error:  # what a user can cause: one line
        if args.debug:
            raise
        print(f"ntsim: error: {_error_line(error, args)}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug: say so, and how to see where
        if args.debug:
            raise
        hint = f"`ntsim --debug {args.command} ...` shows the traceback"
        print(f"ntsim: internal error (a bug in ntsim; {hint}): {type(error).__name__}: "
              f"{error}", file=sys.stderr)  # fmt: skip
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
