"""The unmutated baseline of a topic's claims, computed over ``--jobs`` servers.

Every mutant is judged against the baseline: the claims' summaries, their times (which set
a mutant's time limit) and, traced, the lines each claim runs (:func:`run_covered_baseline`).
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import ThreadPoolExecutor

from ntsim.mutation._matrix import (
    baseline_seconds,
    executing_claims,
    run_baseline,
    run_covered_baseline,
)
from ntsim.mutation._server import ClaimServer

__all__ = ["BASELINE_TIME_LIMIT"]


#: Seconds the traced baseline of one topic's chunk may take (per process).
BASELINE_TIME_LIMIT = 3600.0


def _split_baseline(
    claim_ids, claims, jobs, *, scale, seed, timeout, trace_lines, probes=(), run_dir=None
):
    """The baseline (and, with ``trace_lines``, its coverage) of ``claim_ids``, computed in
    up to ``jobs`` servers at once: the claims of one simulation stay together (they share
    its run), and each server takes the next simulation from one queue as soon as it is
    free, the slow ones (``slow_at_quick``, then more claims) first. Every claim's
    ``seconds`` becomes its simulation's (recorded under ``simulation``), which
    :func:`mutant_time_limit` counts once. With ``trace_lines`` and ``run_dir`` the servers
    save there the runs mutants may reuse (:func:`run_covered_baseline`).

    A queue, not fixed chunks: chunks balanced by claim count left one core idle for most
    of early stopping's traced baseline (2026-12-02), its slow MiniLM simulations all in one
    chunk."""
    uses = {c.id: c.uses.name for c in claims}
    slow = {c.id for c in claims if c.slow_at_quick}
    groups: dict[str, list[str]] = {}
    for cid in claim_ids:
        groups.setdefault(uses.get(cid, cid), []).append(cid)
    queue = collections.deque(
        sorted(groups.values(), key=lambda g: (any(c in slow for c in g), len(g)), reverse=True)
    )
    lock = threading.Lock()
    # the baseline is the reference every mutant is judged against: it gets
    # BASELINE_TIME_LIMIT (or --timeout if larger), not one mutant's limit (early stopping's
    # traced baseline took 10 minutes in one process beside other work: the 600 s default
    # stopped it on 2026-11-30)
    options = dict(scale=scale, seed=seed, timeout=max(timeout, BASELINE_TIME_LIMIT))

    def serve(_) -> list:  # a server of its own, closed before the mutants' servers start
        done = []
        with ClaimServer() as own:
            while True:
                with lock:
                    if not queue:
                        return done
                    group = queue.popleft()
                if trace_lines:
                    done.append(run_covered_baseline(
                        group, **options, server=own, probes=probes, run_dir=run_dir
                    ))  # fmt: skip
                else:
                    done.append(run_baseline(group, **options, server=own))

    servers = max(1, min(jobs, len(groups)))
    with ThreadPoolExecutor(max_workers=servers) as pool:
        found = [part for parts in pool.map(serve, range(servers)) for part in parts]
    parts = found if not trace_lines else [part for part, _ in found]
    summaries = {k: dict(v) for part in parts for k, v in part.items()}
    # the first claim of a simulation is charged its run: give each claim its group's time
    for simulation, group in groups.items():
        times = [summaries[c].get("seconds") for c in group]
        total = None if None in times else sum(times)
        for cid in group:
            summaries[cid].update(seconds=total, simulation=simulation)
    coverage = None if not trace_lines else {
        k: v for _, lines in found for k, v in lines.items()
    }  # fmt: skip
    return summaries, coverage


def _expected_cost(mutant, users, baseline, coverage) -> float:
    module, site = mutant
    claims = executing_claims(module, site, users[(module, site.function)], coverage)
    seconds = baseline_seconds(baseline, claims)
    return float("inf") if seconds is None else seconds
