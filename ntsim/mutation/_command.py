"""The ``ntsim mutate`` subcommand: its options and what it runs (``ntsim.cli`` adds it)."""

from __future__ import annotations

import argparse
import math
import pathlib
from collections.abc import Callable, Sequence

from ntsim import _io

#: Where the committed kill matrix lives (relative to the repository root, where ntsim runs).
DEFAULT_OUT = pathlib.Path("figures")

__all__ = ["add_mutate_parser", "run_mutate_command"]


def add_mutate_parser(sub, seed_type: Callable[[str], int]) -> argparse.ArgumentParser:
    """Add ``mutate`` to the subparsers ``sub`` (``seed_type`` checks its seeds)."""
    p = sub.add_parser(
        "mutate", help="mutants of the claims' numerics: which claims notice them (MUTATION.md)"
    )
    p.add_argument(
        "--topic", dest="topics", action="append", default=[],
        help="this topic (repeatable; default every topic)",
    )  # fmt: skip
    p.add_argument(
        "--function", dest="functions", action="append", default=[],
        help="only this function: name, Class.name or module.name (repeatable; without "
        "--topic, in the topics whose claims' paths hold it)",
    )  # fmt: skip
    p.add_argument(
        "--sample", type=int,
        help="mutants per topic, drawn one function at a time (default: one per function "
        "and two per claim)",
    )  # fmt: skip
    p.add_argument("--seed", type=seed_type, default=0, help="seed of the mutant sample")
    p.add_argument("--claim-seed", type=seed_type, default=0, help="master seed the claims run at")
    p.add_argument("--jobs", type=int, default=1, help="child processes at once (default 1)")
    p.add_argument(
        "--timeout", type=float, default=1800.0,
        help="cap on a mutant's time limit, which is 120 s + 6 × its claims' baseline "
        "seconds, and on each claim's own (120 s + 6 × its simulation's baseline seconds) "
        "(default 1800); a mutant past either limit, twice, counts as killed by hanging",
    )  # fmt: skip
    p.add_argument(
        "--tests", choices=("survivors", "all", "none"), default="survivors",
        help="when the unit tests naming the mutated function run (default: for mutants "
        "that moved some claim's numbers and no verdict)",
    )  # fmt: skip
    p.add_argument(
        "--all-claims", action="store_true",
        help="run each mutant on every claim whose path holds the function (default: only "
        "on the claims that execute the mutated line, traced in the baseline run, and after "
        "a kill only on claims that have killed nothing yet; a mutant none executes is "
        "equivalent without a run)",
    )  # fmt: skip
    p.add_argument(
        "--silent-extra", type=int, default=4, metavar="N",
        help="whole matrix only: after the first round, up to N more mutants of its own "
        "functions for each claim of a checked kind that killed none (default 4; 0: none)",
    )  # fmt: skip
    p.add_argument(
        "--max-rounds", type=int, default=4, metavar="R",
        help="whole matrix only: a claim still silent after a round gets --silent-extra more "
        "of its own mutants in the next, up to round R (default 4)",
    )  # fmt: skip
    p.add_argument(
        "--slow-max-rounds", type=int, default=2, metavar="R",
        help="the same for a claim marked slow_at_quick (its quick run takes minutes, e.g. "
        "MiniLM): up to round R (default 2; at most --max-rounds)",
    )  # fmt: skip
    p.add_argument(
        "--dry-run", action="store_true",
        help="list the first round's mutants; run nothing",
    )  # fmt: skip
    p.add_argument(
        "--resume", action="store_true",
        help="keep the mutants <out>/MUTATION.json already holds for a topic at this claim "
        "seed whose claims have not changed since; run only the others",
    )  # fmt: skip
    p.add_argument(
        "--controls", action="store_true",
        help="instead replay each bound/identity claim's negative control from "
        "<out>/MUTATION.json (a mutant it killed); exit 1 if a claim no longer notices it",
    )  # fmt: skip
    p.add_argument(
        "--rewrite", action="store_true",
        help="rewrite <out>/MUTATION.md from <out>/MUTATION.json and the current survivor "
        "reasons (ntsim/mutation/_survivors.py); run nothing",
    )  # fmt: skip
    p.add_argument(
        "--out", default=str(DEFAULT_OUT),
        help="output directory (default figures/; a --function or --sample run must name "
        "another, since it would replace the topic's committed entry)",
    )  # fmt: skip
    return p


def _recorded_entry(out: pathlib.Path, topic: str, claim_seed: int) -> dict | None:
    """The entry ``out/MUTATION.json`` holds for ``topic`` at this claim seed and quick scale
    (``ntsim mutate --resume`` reuses the outcomes of the claims that did not change); None
    when it was made under an older classification rule (:data:`MATRIX_RULE`)."""
    from ntsim.mutation._record import MATRIX_RULE

    path = out / "MUTATION.json"
    if not path.exists():
        return None
    entry = _io.read_json(path)["topics"].get(topic)
    if not entry or entry["claim_seed"] != claim_seed or entry.get("scale") != "quick":
        return None
    return entry if entry.get("rule") == MATRIX_RULE else None


def _replay_controls(args) -> int:
    from ntsim.claims import REGISTRY
    from ntsim.mutation import ClaimServer, controls_from_matrix, run_control

    path = pathlib.Path(args.out) / "MUTATION.json"
    if not path.exists():
        raise ValueError(f"{path} does not exist: run `ntsim mutate` first")
    controls = controls_from_matrix(path)
    topics = set(args.topics) or {c.topic for c in REGISTRY}
    topic_of = {c.id: c.topic for c in REGISTRY}
    failed = 0
    with ClaimServer() as server:
        for claim, control in controls.items():
            if topic_of.get(claim) not in topics:
                continue
            noticed, why = run_control(control, server, seed=args.claim_seed)
            failed += not noticed
            print(f"{'ok  ' if noticed else 'MISS'} {control.describe()[:110]} ({why})")
    print(f"{failed} negative controls no longer noticed")
    return 1 if failed else 0


def _topics_holding(topics: Sequence[str], functions: Sequence[str]) -> list[str]:
    """The ``topics`` on whose claims' paths one of ``functions`` lies (``--function`` without
    ``--topic``: a function need not be on every topic's paths).

    Raises:
      ValueError: no topic holds any of them.
    """
    from ntsim.claims import REGISTRY
    from ntsim.mutation import _matches as matches
    from ntsim.mutation import topic_functions

    def holds(topic: str) -> bool:
        refs = topic_functions([c for c in REGISTRY if c.topic == topic])
        return any(matches(ref, functions) for ref in refs)

    held = [topic for topic in topics if holds(topic)]
    if not held:
        raise ValueError(
            f"No function on any topic's claims' paths matches {list(functions)} "
            "(`ntsim mutate --topic T --dry-run` lists a topic's functions)."
        )
    return held


def run_mutate_command(args, log: Callable[[str], None]) -> int:
    """``ntsim mutate``: run the matrix (or replay the controls) for ``args``."""
    from ntsim.mutation import kept_outcomes, mutate_topic, plan_topic, site_key, write_matrix

    if not args.jobs >= 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    if not 0 < args.timeout < math.inf:
        raise ValueError(f"--timeout must be positive seconds, got {args.timeout}")
    if args.silent_extra < 0:
        raise ValueError(f"--silent-extra must be 0 or more, got {args.silent_extra}")
    if args.max_rounds < 1:
        raise ValueError(f"--max-rounds must be at least 1, got {args.max_rounds}")
    if args.slow_max_rounds < 1:
        raise ValueError(f"--slow-max-rounds must be at least 1, got {args.slow_max_rounds}")
    if args.controls:
        return _replay_controls(args)
    if args.rewrite:
        path = pathlib.Path(args.out) / "MUTATION.json"
        if not path.exists():
            raise ValueError(f"{path} does not exist: run `ntsim mutate` first")
        _, md_path = write_matrix(path.parent, [])
        print(f"wrote {md_path}")
        return 0
    if args.sample is not None and args.sample < 1:
        raise ValueError("--sample must be at least 1")
    from ntsim.claims import REGISTRY

    topics = args.topics or sorted({c.topic for c in REGISTRY})
    if args.functions and not args.topics:  # the topics whose claims' paths hold a function
        topics = _topics_holding(topics, args.functions)
    options = dict(functions=args.functions, sample=args.sample, sample_seed=args.seed)
    out = pathlib.Path(args.out)
    restricted = bool(args.functions) or args.sample is not None
    if restricted and not args.dry_run and out.resolve() == DEFAULT_OUT.resolve():
        raise ValueError(
            "--function and --sample make a partial matrix, which would replace the topic's "
            f"entry in {DEFAULT_OUT}/MUTATION.json: write it elsewhere with --out DIR "
            "(e.g. --out /tmp/mutation)"
        )
    for topic in topics:  # validate every topic and function before running any
        plan = plan_topic(topic, **options)
        if args.dry_run:
            entry = _recorded_entry(out, topic, args.claim_seed) if args.resume else None
            recorded = kept_outcomes(plan, entry)[1]
            for module, site in plan.mutants:
                kept = site_key(module, site) in recorded
                print(f"{topic}  {module}.{site.describe()}" + ("  (kept by --resume)" * kept))
    if args.dry_run:
        return 0
    entries = []
    for topic in topics:
        entry = mutate_topic(
            topic,
            **options,
            claim_seed=args.claim_seed,
            jobs=args.jobs,
            timeout=args.timeout,
            tests=args.tests,
            trace_lines=not args.all_claims,
            silent_extra=args.silent_extra,
            max_rounds=args.max_rounds,
            slow_max_rounds=args.slow_max_rounds,
            progress=log,
            previous=_recorded_entry(out, topic, args.claim_seed) if args.resume else None,
            checkpoint=lambda partial: write_matrix(out, [partial]),
        )
        entries.append(entry)
        rate = entry["claim_kill_rate"]
        log(f"{topic}: claim kill rate {'-' if rate is None else f'{rate:.3f}'} "
             f"({entry['killed']} killed, {entry['survived']} survived, "
             f"{entry['equivalent']} equivalent) in {entry['seconds']:.0f} s")  # fmt: skip
        write_matrix(out, entries)
    print(f"wrote {out / 'MUTATION.md'}")
    return 0
