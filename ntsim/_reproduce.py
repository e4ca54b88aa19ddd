"""What ``ntsim verify`` and ``ntsim reproduce`` do, behind :mod:`ntsim.cli`.

``reproduce`` runs every experiment of a topic, then its claims; with ``--jobs`` > 1 one
process per topic (largest first). At quick scale the experiments run the claims'
simulations with the claims' keys and the claims take those runs
(:mod:`ntsim._shared_runs`), so ``make reproduce`` computes each simulation once. The CLI
passes its ``log`` (progress lines on stderr) to every function here.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import time
import traceback
from collections.abc import Callable, Sequence

Log = Callable[[str], None]


def verify_claims(
    args, topic: str | None, ids: Sequence[str] = (), *, log: Log
) -> tuple[int, int, list[str]]:
    """``ntsim verify``: the claims of ``topic`` or ``ids`` at ``args``' scale and seeds;
    each row lands in the verification tables as it finishes. Returns (as expected, total,
    ids not as expected)."""
    from ntsim._io import run_metadata
    from ntsim.claims import parse_seeds, run_claims, select_claims, write_verification

    if getattr(args, "keep_units", None):
        from ntsim.run_cache import KEEP_UNITS_ENV

        os.environ[KEEP_UNITS_ENV] = os.path.abspath(args.keep_units)
    claims = select_claims(topic, tuple(ids))
    seeds = parse_seeds(args.seeds) if getattr(args, "seeds", None) is not None else (args.seed,)
    done = {}
    if getattr(args, "resume", False):
        from ntsim.claims import finished_rows

        done = finished_rows(claims, out_dir=args.out, scale=args.scale, seeds=seeds)
        if done:
            log(f"--resume: {len(done)} of {len(claims)} claims already recorded, skipped")
        claims = tuple(c for c in claims if c.id not in done)
    metadata = run_metadata()
    written = []

    def record(claim_record) -> None:  # every claim lands in the tables as it finishes
        written.append(write_verification([claim_record], out_dir=args.out, scale=args.scale,
                                          metadata=metadata)[0])  # fmt: skip

    records = run_claims(claims, scale=args.scale, seeds=seeds, progress=log, on_record=record)
    print(f"\n{'claim':58s} {'seeds':>7s} {'inst.':>6s} {'worst margin':>12s}  verdict")
    for rec in records:
        per_seed = "".join(s.verdict[0].upper() for s in rec.per_seed)
        mark = ("ok, smoke at quick" if rec.smoke else "ok") if rec.as_expected else "UNEXPECTED"
        verdict = f"{rec.verdict} (expected {rec.claim.expect}) [{mark}]"
        print(f"{rec.claim.id:58s} {per_seed:>7s} {rec.num_instances:>6d} "
              f"{rec.worst_margin:12.3g}  {verdict}")  # fmt: skip
    good = sum(rec.as_expected for rec in records) + sum(r["as_expected"] for r in done.values())
    total = len(records) + len(done)
    where = f"; tables in {written[-1]}" if written else ""
    resumed = f" ({len(done)} from the tables)" if done else ""
    print(f"{good}/{total} claims as expected at seeds {','.join(map(str, seeds))}{resumed}{where}")
    unexpected = [rec.claim.id for rec in records if not rec.as_expected]
    return good, total, unexpected + [i for i, r in done.items() if not r["as_expected"]]


_Summary = tuple[list[tuple[str, str, float, str]], int, int, list[str]]


def _reproduce_here(args, log: Log) -> _Summary:
    """Every experiment, then every claim, of ``args.topic`` (all topics when None)."""
    from ntsim.experiment import list_experiments, run_experiment

    names = [n for n in list_experiments() if args.topic is None or n.startswith(args.topic + "/")]
    with sharing_quick_runs(args) as taken:
        summary = _run_experiments(args, names, run_experiment, log)
        good, total, unexpected = verify_claims(args, args.topic, log=log)
    if taken:
        log(f"{len(taken)} claim simulations taken from the experiments' runs (no recompute)")
    return summary, good, total, unexpected


def sharing_quick_runs(args):
    """At quick scale, the experiments run the claims' simulations with the claims' keys
    and the claims take those runs (:mod:`ntsim._shared_runs`); at full scale nothing is
    shared, so the committed figures keep their own keys."""
    import contextlib

    if args.scale != "quick":
        return contextlib.nullcontext([])
    from ntsim._shared_runs import sharing
    from ntsim.claims import claim_key, select_claims

    plan = {}
    for claim in select_claims(args.topic):
        sim = claim.uses
        plan[(sim.fn, sim.setting(args.scale))] = (claim_key(args.seed, sim.key), sim.x64)
    return sharing(plan)


def _run_experiments(args, names, run_experiment, log: Log) -> list:
    summary = []
    for index, name in enumerate(names, start=1):
        log(f"[{index}/{len(names)}] experiment {name} (scale {args.scale}) ...")
        start = time.perf_counter()
        try:
            output = run_experiment(name, scale=args.scale, seed=args.seed, out_dir=args.out)
            summary.append((name, "ok", time.perf_counter() - start, str(output.png)))
        except Exception:  # report and go on: reproduce skips nothing silently
            log(traceback.format_exc())
            summary.append((name, "FAILED", time.perf_counter() - start, "-"))
        log(f"    {summary[-1][1]} in {summary[-1][2]:.1f} s")
    return summary


def topics_by_size() -> list[str]:
    """Topics, the one with the most experiments + claims first (longest-job-first)."""
    from collections import Counter

    from ntsim.claims import REGISTRY
    from ntsim.experiment import list_experiments

    sizes = Counter(claim.topic for claim in REGISTRY)
    sizes.update(name.split("/")[0] for name in list_experiments())
    return sorted(sizes, key=lambda topic: (-sizes[topic], topic))


def _reproduce_in_parallel(args) -> _Summary:
    """One ``ntsim reproduce --topic T`` process per topic, ``args.jobs`` at a time.

    Separate processes, not threads: most of a quick run is single-threaded XLA
    compilation and Python dispatch, which two processes overlap on two cores. Each child
    writes its topic's figures and verification table; its progress goes to stderr as it
    runs and its summary comes back through a JSON file. The shared persistent compilation
    cache is safe to use from several processes.
    """
    import subprocess
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    def child(topic: str) -> tuple[int, dict | None]:
        with tempfile.TemporaryDirectory() as tmp:
            summary_path = pathlib.Path(tmp) / "summary.json"
            command = [sys.executable, "-m", "ntsim.cli", "reproduce", "--topic", topic,
                       "--scale", args.scale, "--seed", str(args.seed), "--out", args.out,
                       "--summary-json", str(summary_path)]  # fmt: skip
            code = subprocess.run(command, stdout=subprocess.DEVNULL, check=False).returncode
            record = json.loads(summary_path.read_text()) if summary_path.exists() else None
        return code, record

    topics = topics_by_size()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(topics, pool.map(child, topics), strict=True))
    summary, good, total, unexpected = [], 0, 0, []
    for topic in sorted(results):
        code, record = results[topic]
        if record is None:  # the child died before writing its summary
            summary.append((f"{topic} (whole topic, exit status {code})", "FAILED", 0.0, "-"))
            continue
        summary += [tuple(row) for row in record["experiments"]]
        good, total = good + record["claims_as_expected"], total + record["claims"]
        unexpected += record["unexpected"]
    from ntsim.claims import write_index as write_claims_index

    write_claims_index(pathlib.Path(args.out), args.scale)  # children raced on the index
    return summary, good, total, unexpected


def reproduce(args, *, log: Log) -> int:
    """``ntsim reproduce``: every experiment, then every claim (one process per topic with
    ``--jobs`` > 1); prints the summary; 0 when everything ran as expected."""
    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}.")
    if args.jobs > 1 and args.topic is None:
        summary, good, total, unexpected = _reproduce_in_parallel(args)
    else:
        summary, good, total, unexpected = _reproduce_here(args, log)
    if args.summary_json:
        record = {"experiments": summary, "claims_as_expected": good, "claims": total,
                  "unexpected": unexpected}  # fmt: skip
        pathlib.Path(args.summary_json).write_text(json.dumps(record))
    write_figure_index(pathlib.Path(args.out), log=log)
    print(f"\n{'experiment':50s} {'status':>7s} {'seconds':>8s}  output")
    for name, status, seconds, png in summary:
        print(f"{name:50s} {status:>7s} {seconds:8.1f}  {png}")
    failed = sum(status != "ok" for _, status, _, _ in summary)
    for claim_id in unexpected:
        print(f"claim {claim_id}: NOT as expected (see the verification table)")
    print(
        f"{len(summary) - failed}/{len(summary)} experiments ok; {good}/{total} claims as expected"
    )
    return 0 if failed == 0 and good == total else 1


def write_figure_index(out: pathlib.Path, *, log: Log) -> pathlib.Path:
    """``figures/README.md``: one row per experiment record under ``out``."""
    from ntsim import _io

    rows = []
    orphans = [png for png in sorted(out.glob("*/*.png")) if not png.with_suffix(".json").exists()]
    for png in orphans:  # an interrupted run: say so, never drop it silently
        log(f"ntsim report: {png} has no JSON beside it (an interrupted run?); not indexed")
    for path in sorted(out.glob("*/*.json")):
        try:
            record = json.loads(path.read_text())
        except ValueError:
            continue
        if not isinstance(record, dict) or "experiment" not in record:
            continue
        missing = [k for k in ("scale", "seed", "wall_time_s") if k not in record]
        if missing:  # an experiment record without its provenance: say so, never crash
            log(f"ntsim report: {path} lacks {', '.join(missing)}; not indexed")
            continue
        rows.append(
            f"| [{path.stem}]({path.relative_to(out).with_suffix('.png')}) | "
            f"`{record['experiment']}` | {record['scale']} | {record['seed']} | "
            f"{record.get('overrides') or '-'} | {record['wall_time_s']:.1f} |"
        )
    text = "\n".join(
        [
            "# ntsim figures",
            "",
            "Written by `ntsim run` / `ntsim reproduce`; each PNG has a JSON beside it with "
            "the numbers, config, seed, versions, commit and wall time. Claims: "
            "[VERIFICATION.md](VERIFICATION.md).",
            "",
            "| figure | experiment | scale | seed | overrides | wall time (s) |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    return _io.atomic_write_text(out / "README.md", text)
