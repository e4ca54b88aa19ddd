"""``ntsim falsify``: the command line of :mod:`ntsim.falsify` (parser and command)."""

from __future__ import annotations

import argparse
import math
import pathlib
from collections.abc import Callable

from ntsim import _io

__all__ = ["add_falsify_parser", "run_falsify_command"]


#: Upper limits on the search's size: beyond them a typo, not a search (memory grows with
#: restarts, time with steps).
MAX_RESTARTS = 65_536
MAX_STEPS = 1_000_000


def add_falsify_parser(sub, seed_type: Callable[[str], int]) -> argparse.ArgumentParser:
    """Add ``falsify`` to the subparsers ``sub`` (``seed_type`` checks its seed)."""
    p = sub.add_parser(
        "falsify",
        help="search a bound's instance space for its worst case (FALSIFICATION.md)",
    )
    p.add_argument(
        "ids", nargs="*", metavar="ID",
        help="claim ids with a declared space (or claim_id:part for one part of a claim)",
    )  # fmt: skip
    p.add_argument("--all", action="store_true", help="every claim with a declared space")
    p.add_argument("--list", action="store_true", help="list the declared spaces and exit")
    p.add_argument("--restarts", type=int, default=32, help="random starts (default 32)")
    p.add_argument("--steps", type=int, default=500, help="Adam steps per start (default 500)")
    p.add_argument(
        "--learning-rate", type=float, default=0.05, help="Adam step size (default 0.05)"
    )
    p.add_argument(
        "--method", choices=("adam", "random"),
        help="adam or random search (default: the space's own, adam unless its path cannot "
        "be differentiated)",
    )  # fmt: skip
    p.add_argument("--seed", type=seed_type, default=0, help="seed of the random starts")
    p.add_argument(
        "--budget", type=float, help="seconds per claim; the search stops after the chunk "
        "of steps that passes it",
    )  # fmt: skip
    p.add_argument("--out", default="figures", help="output directory (default figures/)")
    p.add_argument(
        "--records", default="figures",
        help="where the claims' VERIFICATION.json records are read (default figures/)",
    )  # fmt: skip
    return p


def _record_of(out: pathlib.Path, claim_id: str) -> dict | None:
    topic = claim_id.split(".", 1)[0]
    path = out / topic / "VERIFICATION.json"
    if not path.exists():
        return None
    rows = _io.read_json(path).get("claims", [])
    return next((row for row in rows if row.get("id") == claim_id), None)


def run_falsify_command(args, log: Callable[[str], None]) -> int:
    """Run ``ntsim falsify`` (exit 0; 1 when a claim expected to hold was violated)."""
    from ntsim.falsify import SPACES, falsify, get_space, random_search
    from ntsim.falsify._record import entry_for, save_search, write_table
    from ntsim.falsify._search import replay

    if args.list:
        for name, space in SPACES.items():
            log(f"{name}: {space.description}")
        return 0
    ids = list(SPACES) if args.all else args.ids
    if not ids:
        raise ValueError("falsify: name claim ids, or --all (`ntsim falsify --list` shows them)")
    spaces = [get_space(claim_id) for claim_id in ids]
    for name, most in (("restarts", MAX_RESTARTS), ("steps", MAX_STEPS)):
        value = getattr(args, name)
        if not 1 <= value <= most:
            raise ValueError(f"falsify: --{name} must be in [1, {most}], got {value}")
    if not 0 < args.learning_rate < math.inf:
        raise ValueError(
            f"falsify: --learning-rate must be a positive finite number, got {args.learning_rate}"
        )
    if args.budget is not None and not 0 < args.budget < math.inf:
        raise ValueError(f"falsify: --budget must be positive seconds, got {args.budget}")
    if not pathlib.Path(args.records).is_dir():
        why = "not a directory" if pathlib.Path(args.records).exists() else "no such directory"
        raise ValueError(
            f"falsify: --records {args.records}: {why} (where the claims' "
            "VERIFICATION.json are; default figures/)"
        )
    import jax

    out = pathlib.Path(args.out)
    entries, surprises = [], []
    for space in spaces:
        key = jax.random.PRNGKey(args.seed)
        method = args.method or space.method
        log(f"{space.name}: {method}, {args.restarts} starts ...")
        if method == "random":
            result = random_search(space, key, samples=args.restarts * args.steps)
        else:
            result = falsify(
                space, key, restarts=args.restarts, steps=args.steps,
                learning_rate=args.learning_rate, budget_seconds=args.budget,
                progress=lambda done, worst: log(f"    step {done}: worst ratio {worst:.4g}"),
            )  # fmt: skip
        record = _record_of(pathlib.Path(args.records), space.claim_id)
        entry = entry_for(result, space, seed=args.seed, restarts=args.restarts,
                          learning_rate=args.learning_rate, record=record)  # fmt: skip
        if space.as_run is not None:  # the claim's own check, on the worst instance
            entry["replayed_check"] = replay(space, result.worst_instance).outcome
            log(f"  the claim's own check on the worst instance: {entry['replayed_check']}")
        path = save_search(entry, result, out)
        entries.append(entry)
        expect = (record or {}).get("expect", "holds")
        flag = "VIOLATED" if entry["violated"] else "not violated"
        log(f"  => worst ratio {result.worst_ratio:.4g} ({flag}; random starts "
            f"{result.start_worst_ratio:.4g}) in {result.seconds:.1f} s; saved {path}")  # fmt: skip
        refuted = entry["violated"] or entry.get("replayed_check") == "refuted"
        if refuted and expect == "holds":
            surprises.append(space.name)
    table = write_table(entries, out)
    log(f"wrote {table} and {table.with_suffix('.md')}")
    if pathlib.Path(args.records).resolve() == out.resolve():
        from ntsim.claims import refresh_searches

        refresh_searches(out)
        log(f"the verification tables under {out} now show the searched ratios")
    if surprises:
        log("a claim recorded as holding was violated by search: " + ", ".join(surprises))
        return 1
    return 0
