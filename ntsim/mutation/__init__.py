"""Mutation testing of the claims: would some claim notice a plausible bug in the numerics?

``ntsim mutate --topic T`` makes mutants of the functions of ``ntsim.theory`` and
``ntsim.core`` that the topic's claims run (:mod:`ntsim.mutation._operators`: a term ×2 or
×½, a flipped sign, a dropped term, a transpose, n → n − 1, swapped arguments, max ↔ min,
< ↔ ≤), runs each in a child process on the claims whose path contains the function
(:mod:`ntsim.mutation._closure`) and on the unit tests that name it, and records which
claims killed it (:mod:`ntsim.mutation._matrix`) in ``figures/MUTATION.md`` + ``.json``
(:mod:`ntsim.mutation._record`). Nothing on disk is changed: a mutant lives in the child
process only.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from ntsim.mutation._baseline import _expected_cost, _split_baseline
from ntsim.mutation._closure import MUTABLE_PACKAGES, FunctionRef, claim_path
from ntsim.mutation._command import add_mutate_parser, run_mutate_command
from ntsim.mutation._controls import (
    CONTROL_KINDS,
    NegativeControl,
    controls_from_matrix,
    run_control,
)
from ntsim.mutation._matrix import (
    TESTS_WHEN,
    ClaimServer,
    MutantOutcome,
    classify,
    executing_claims,
    guard_probe,
    mutant_time_limit,
    run_baseline,
    run_covered_baseline,
    run_mutant,
)
from ntsim.mutation._operators import OPERATORS, Site, function_sites, mutate_module
from ntsim.mutation._record import (
    CHECKED_KINDS,
    MATRIX_RULE,
    blind_spots,
    markdown_matrix,
    stale_matrix,
    summarise_topic,
    verdict_kills,
    write_matrix,
)
from ntsim.mutation._sampling import (
    cover_claims,
    own_functions,
    select_mutants,
    silent_claim_mutants,
    topic_functions,
)
from ntsim.mutation._survivors import REASONS, SurvivorReason, reason_for
from ntsim.mutation._worker import apply_mutant

__all__ = [
    "CHECKED_KINDS",
    "exact_outcomes",
    "MATRIX_RULE",
    "verdict_kills",
    "CONTROL_KINDS",
    "MUTABLE_PACKAGES",
    "NegativeControl",
    "controls_from_matrix",
    "run_control",
    "TESTS_WHEN",
    "ClaimServer",
    "OPERATORS",
    "FunctionRef",
    "MutantOutcome",
    "REASONS",
    "SurvivorReason",
    "blind_spots",
    "markdown_matrix",
    "reason_for",
    "Site",
    "apply_mutant",
    "TopicPlan",
    "add_mutate_parser",
    "claim_path",
    "classify",
    "cover_claims",
    "function_sites",
    "mutate_module",
    "mutate_topic",
    "plan_topic",
    "topic_claims_and_users",
    "run_mutant",
    "mutant_time_limit",
    "run_covered_baseline",
    "executing_claims",
    "silent_claim_mutants",
    "own_functions",
    "run_baseline",
    "run_mutate_command",
    "select_mutants",
    "stale_matrix",
    "kept_outcomes",
    "reusable_outcomes",
    "site_key",
    "topic_claims_hash",
    "topic_functions",
    "write_matrix",
]


def topic_claims_hash(claims) -> str:
    """16 hex digits over the code hashes of ``claims`` (what a matrix entry was made at:
    a docstring or comment edit leaves it current)."""
    from ntsim.claims import claim_code_hash  # lazily: the CLI imports this package early

    digest = hashlib.sha256()
    for claim in sorted(claims, key=lambda c: c.id):
        digest.update(f"{claim.id}={claim_code_hash(claim)};".encode())
    return digest.hexdigest()[:16]


def reusable_outcomes(
    entry: Mapping | None,
    users: Mapping[FunctionRef, Sequence[str]],
    hashes: Mapping[str, str],
    source_hash: str,
) -> list[dict]:
    """The outcomes of a recorded topic ``entry`` that still hold: those of mutants whose
    function's claims (``users``) all have the code hash the entry recorded for them
    (``hashes`` are the current ones). An entry without per-claim hashes is reused whole
    when its ``source_hash`` is the current one, else not at all.

    Examples:
      >>> entry = {"source_hash": "old", "claims": {"a": {"code_hash": "1"},
      ...          "b": {"code_hash": "2"}}, "outcomes": [
      ...     {"module": "m", "function": "f"}, {"module": "m", "function": "g"}]}
      >>> users = {("m", "f"): ("a",), ("m", "g"): ("a", "b")}
      >>> [o["function"] for o in reusable_outcomes(entry, users, {"a": "1", "b": "3"}, "new")]
      ['f']
    """
    if not entry:
        return []
    recorded = {cid: row.get("code_hash") for cid, row in entry.get("claims", {}).items()}
    if not any(recorded.values()):
        return list(entry["outcomes"]) if entry.get("source_hash") == source_hash else []
    kept = []
    for outcome in entry["outcomes"]:
        claims = users.get((outcome["module"], outcome["function"]), ())
        if claims and all(recorded.get(cid) == hashes.get(cid) for cid in claims):
            kept.append(outcome)
    return kept


def kept_outcomes(plan: TopicPlan, previous: Mapping | None) -> tuple[dict, dict]:
    """``(claim → code hash now, {mutant key: outcome})``: the recorded outcomes of
    ``previous`` (a topic's ``MUTATION.json`` entry) that ``--resume`` keeps
    (:func:`reusable_outcomes`), keyed by ``(module, function, index, operator, before)``."""
    from ntsim.claims import claim_code_hash  # lazily: the CLI imports this package early

    hashes = {c.id: claim_code_hash(c) for c in plan.claims}
    reusable = reusable_outcomes(previous, plan.users, hashes, topic_claims_hash(plan.claims))
    return hashes, {
        _key(o["module"], o["function"], o["index"], o["operator"], o["before"]): o
        for o in reusable
    }


def exact_outcomes(
    kept: Mapping[tuple, dict],
    planned: Collection[tuple],
    users: Mapping[FunctionRef, Sequence[str]],
    checked: Collection[str],
) -> dict:
    """The outcomes of ``kept`` whose record of which claims kill nothing is exact.

    After a kill, a mutant's run may skip the claims that had already killed some mutant
    (:func:`~ntsim.mutation._matrix.run_mutant`'s ``may_skip``). A kept outcome that skipped a
    claim of a checked kind (``checked``) which kills nothing among the kept outcomes of the
    plan (``planned`` keys) — its earlier kills were of mutants no longer drawn — would leave
    that claim silent without having asked it: such outcomes are dropped (to run again).
    Outcomes recorded before ``claims_skipped`` existed count as having skipped every claim
    of their function's ``users`` that they did not run.

    Examples:
      >>> kept = {1: {"module": "m", "function": "f", "status": "killed",
      ...             "claims_run": ["a"], "claims_killed": ["a"], "claims_skipped": ["b"]},
      ...         2: {"module": "m", "function": "g", "status": "killed",
      ...             "claims_run": ["b"], "claims_killed": ["b"], "claims_skipped": []}}
      >>> sorted(exact_outcomes(kept, {1, 2}, {}, {"a", "b"}))
      [1, 2]
      >>> sorted(exact_outcomes(kept, {1}, {}, {"a", "b"}))  # b's kill is not in the plan
      [2]
    """
    from ntsim.mutation._record import verdict_kills

    def skipped(outcome: Mapping) -> set[str]:
        if outcome["status"] != "killed":
            return set()
        if "claims_skipped" in outcome:
            return set(outcome["claims_skipped"])
        path = users.get((outcome["module"], outcome["function"]), ())
        return set(path) - set(outcome.get("claims_run", ()))

    checked, exact = set(checked), dict(kept)
    while True:
        killers = {cid for k, o in exact.items() if k in planned for cid in verdict_kills(o)}
        inexact = [k for k, o in exact.items() if (skipped(o) & checked) - killers]
        if not inexact:
            return exact
        for k in inexact:
            del exact[k]


def smoke_claims(baseline: Mapping[str, Mapping]) -> set[str]:
    """The claims whose baseline run at this scale is a smoke run (its verdict decides
    nothing, so it kills only by raising).

    Examples:
      >>> smoke_claims({"a": {"smoke": True}, "b": {"smoke": False}, "c": {}})
      {'a'}
    """
    return {cid for cid, summary in baseline.items() if summary.get("smoke")}


def site_key(module: str, site: Site) -> tuple:
    """The key of a planned mutant in :func:`kept_outcomes`."""
    return _key(module, site.function, site.index, site.operator, site.before)


def _matches(ref: FunctionRef, names: Sequence[str]) -> bool:
    module, qualname = ref
    return any(n in (qualname, f"{module}.{qualname}", qualname.rsplit(".", 1)[-1]) for n in names)


@dataclass(frozen=True)
class TopicPlan:
    """What ``ntsim mutate`` will run for a topic."""

    claims: tuple
    users: dict  # FunctionRef -> ids of the claims whose path contains it
    mutants: tuple  # (module, Site) pairs


def topic_claims_and_users(topic: str) -> tuple[tuple, dict]:
    """The claims a topic's mutants run on, and each function on the topic's paths → the ids
    of those claims whose path holds it: the topic's own claims, plus the claims of
    :data:`ntsim.claims.SHARED_TOPICS` whose paths hold one of the topic's functions."""
    from ntsim.claims import REGISTRY, SHARED_TOPICS

    claims = tuple(c for c in REGISTRY if c.topic == topic)
    users = topic_functions(claims)
    if topic in SHARED_TOPICS or not claims:
        return claims, users
    shared = topic_functions([c for c in REGISTRY if c.topic in SHARED_TOPICS])
    users = {ref: ids + shared.get(ref, ()) for ref, ids in users.items()}
    watching = {cid for ref in users for cid in shared.get(ref, ())}
    return claims + tuple(c for c in REGISTRY if c.id in watching), users


def plan_topic(
    topic: str,
    *,
    functions: Sequence[str] = (),
    sample: int | None = None,
    sample_seed: int = 0,
    per_claim: int = 2,
) -> TopicPlan:
    """The claims of ``topic``, the functions on their paths and the mutants drawn from them.

    The claims of :data:`ntsim.claims.SHARED_TOPICS` (the interval procedures every verdict
    rests on) join the plan for the functions of ``topic`` that lie on their paths too: a
    mutant is run on every claim whose path holds its function, the topic's and the shared
    ones, and a kill by either counts.

    ``sample=None`` (the default matrix): one mutant per function that has a mutation site,
    then more until every claim has ``per_claim`` on its path (:func:`cover_claims`);
    ``sample=K``: exactly ``K``, drawn one function at a time. Draws are seeded per
    function, so a function's mutants do not change when other functions do.

    Raises:
      ValueError: an unknown topic, no function matching ``functions``, or matching
        functions with no mutation site.
    """
    from ntsim.claims import REGISTRY

    claims, users = topic_claims_and_users(topic)
    if not claims:
        topics = sorted({c.topic for c in REGISTRY})
        raise ValueError(f"No claims in topic {topic!r}; topics: {', '.join(topics)}.")
    chosen = [ref for ref in users if not functions or _matches(ref, functions)]
    if not chosen:
        raise ValueError(f"No function on the {topic} claims' paths matches {list(functions)}.")
    if sample is None:  # one per function with a site (a count of all functions would
        # draw second mutants of whichever functions came first)
        mutants = [pair for ref in chosen
                   for pair in select_mutants([ref], sample=1, seed=sample_seed)]  # fmt: skip
    else:
        mutants = select_mutants(chosen, sample=sample, seed=sample_seed)
    if functions and not mutants:
        names = ", ".join(f"{module}.{function}" for module, function in chosen)
        raise ValueError(
            f"{names}: on the {topic} claims' paths but without a mutation site (an additive "
            "term, a product or @, an n − 1 divisor, max/min or a comparison), so no mutant "
            "can be made of it; see docs/guides/mutation.md."
        )
    if sample is None:
        scope = {ref: ids for ref, ids in users.items() if ref in set(chosen)}
        mutants = cover_claims(scope, mutants, per_claim=per_claim, seed=sample_seed)
    return TopicPlan(claims, users, tuple(mutants))


def _key(module: str, function: str, index: int, operator: str, before: str) -> tuple:
    return (module, function, int(index), operator, before)


def mutate_topic(
    topic: str,
    *,
    functions: Sequence[str] = (),
    sample: int | None = None,
    sample_seed: int = 0,
    claim_seed: int = 0,
    scale: str = "quick",
    jobs: int = 1,
    timeout: float = 1800.0,
    tests: str = "survivors",
    progress: Callable[[str], None] | None = None,
    previous: Mapping | None = None,
    checkpoint: Callable[[dict], None] | None = None,
    checkpoint_every: int = 10,
    trace_lines: bool = True,
    silent_extra: int = 4,
    max_rounds: int = 4,
    slow_max_rounds: int = 2,
) -> dict:
    """Run the mutants of one topic and return its matrix entry (:func:`write_matrix` input).

    Args:
      topic: a claims topic (``ntsim list`` shows them).
      functions: only these functions (``name``, ``Class.name`` or ``module.name``).
      sample: how many mutants, drawn one function at a time (``None``: one per function
        and at least two per claim, :func:`plan_topic`).
      sample_seed: seed of that draw.
      claim_seed: the master seed the claims run at.
      scale: the claims' scale (``"quick"`` for mutation runs).
      jobs: child processes at once.
      timeout: seconds before a child is stopped (a mutant that hangs counts as killed).
      tests: when the unit tests naming the mutated function run: ``"survivors"`` (for
        survivors: mutants that moved some claim's numbers and no verdict), ``"all"`` or ``"none"``.
      progress: receives one line per step.
      previous: the topic's entry already recorded (``MUTATION.json``) at this scale and
        claim seed: a mutant it holds is not run again when every claim whose path holds the
        mutated function has the code hash it was recorded at (``ntsim mutate --resume``:
        after a change to some claims only the mutants those claims can see run again).
      checkpoint: receives the entry so far (``"partial": True``) every
        ``checkpoint_every`` new mutants, so an interrupted run keeps what it finished.
      trace_lines: trace the lines each claim runs in the baseline and run a mutant only on
        the claims that execute it (:func:`run_covered_baseline`), stopping after a kill once
        only claims that have killed before are left (:func:`run_mutant`'s ``may_skip``);
        False runs every claim whose static path holds the function.
      silent_extra: in the whole matrix (no ``functions``, no ``sample``), a second round:
        each of the topic's claims of a checked kind (identity, bound, rate, trend,
        ordering) that killed no mutant gets up to this many more mutants of its own
        functions (:func:`silent_claim_mutants`); they count in the rates like the others
        (``"round": 2`` in their outcomes). 0: no second round.
      max_rounds: the last round: a claim still silent after round ``r`` (and not a smoke
        run at this scale, whose verdict cannot kill) gets up to
        ``silent_extra`` more of its own functions' mutants in round ``r + 1`` (those not yet
        drawn), until it kills one by its verdict, its functions have no site left, or round
        ``max_rounds`` has run.
      slow_max_rounds: the last round for a claim marked ``slow_at_quick`` (its quick run
        takes minutes: MiniLM). In session 39's whole matrix, rounds 3–4 of early stopping's
        slow claims cost 1,969 of its 9,108 mutant-seconds and gave none of them a kill.
    """
    say = progress or (lambda line: None)
    start = time.perf_counter()
    plan = plan_topic(topic, functions=functions, sample=sample, sample_seed=sample_seed)
    claims, users = plan.claims, plan.users
    hashes, kept = kept_outcomes(plan, previous)
    checked = {c.id for c in claims if c.kind in CHECKED_KINDS}
    # the plan's first round, and the later rounds' draws of the last run (drawn again the
    # same way while the silent claims are the same)
    planned = {site_key(m, s) for m, s in plan.mutants} | {
        k for k, o in kept.items() if o.get("round", 1) > 1
    }
    kept = exact_outcomes(kept, planned, users, checked)
    reused = [kept[k] for k in (site_key(m, s) for m, s in plan.mutants) if k in kept]
    mutants = [(m, s) for m, s in plan.mutants if site_key(m, s) not in kept]
    chosen = {(module, site.function) for module, site in plan.mutants}
    claim_ids = sorted({cid for module, site in mutants for cid in users[(module, site.function)]})
    say(f"{topic}: {len(plan.mutants)} mutants of {len(chosen)} functions ({len(reused)} "
        f"already recorded); baseline of {len(claim_ids)} claims at {scale} scale, seed "
        f"{claim_seed} ...")  # fmt: skip
    options = dict(
        scale=scale, claim_seed=claim_seed, sample_seed=sample_seed,
        source_hash=topic_claims_hash(claims), functions_on_paths=len(users),
        claim_hashes=hashes,
    )  # fmt: skip
    kinds = {c.id: c.kind for c in claims}

    def entry(done: list[MutantOutcome], partial: bool) -> dict:
        outcomes = reused + [o.to_json() for o in done]
        outcomes.sort(key=lambda o: (o["module"], o["function"], o["index"]))
        made = summarise_topic(
            topic, outcomes, kinds, seconds=time.perf_counter() - start, **options
        )
        return {**made, "partial": True} if partial else made

    servers: list[ClaimServer] = []
    local = threading.local()

    def server() -> ClaimServer:  # one child process per thread, reused across mutants
        if not hasattr(local, "server"):
            local.server = ClaimServer()
            servers.append(local.server)
        return local.server

    # Claims that have killed some mutant by a verdict may be skipped after another claim
    # kills one (run_mutant); a claim that has killed nothing yet (or only by raising) runs.
    killers = {cid for o in reused for cid in verdict_kills(o)}
    lock = threading.Lock()

    def run(module: str, site: Site) -> MutantOutcome:
        claim_set = users[(module, site.function)]
        # a claim that is a smoke run at this scale kills only by raising, never by its
        # verdict: after another claim's kill it may be skipped too (it cannot stop being
        # silent here, and the MiniLM ones cost minutes a run)
        with lock:
            may_skip = frozenset(killers | smoke_claims(baseline)) if trace_lines else None
        return run_mutant(module, site, claim_set, baseline, scale=scale, seed=claim_seed,
                          timeout=timeout, tests=tests, server=server(),
                          coverage=coverage if trace_lines else None,
                          may_skip=may_skip, run_dir=run_dir)  # fmt: skip

    outcomes: list[MutantOutcome] = []
    killed = 0
    baseline: dict = {}
    # the baseline's runs that mutants outside their simulations reuse (run_mutant)
    run_dir = tempfile.mkdtemp(prefix=f"ntsim-mutate-{topic}-") if trace_lines else None
    coverage: dict | None = None

    def run_round(batch: list[tuple[str, Site]], number: int) -> None:
        nonlocal killed
        # cheapest first (by the baseline time of the claims each will run): the claims that
        # kill cheap mutants join `killers` early, so a mutant on many claims, run later,
        # stops soon after its first kill (longest first ran the 21-claim mutants before
        # any claim had killed, to the time limit: 2026-11-30)
        order = sorted(batch, key=lambda m: _expected_cost(m, users, baseline, coverage))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(run, module, site): site for module, site in order}
            for count, done in enumerate(as_completed(futures), 1):
                outcome = done.result()
                outcome.round = number
                outcomes.append(outcome)
                with lock:
                    killers.update(verdict_kills(outcome.to_json()))
                killed += outcome.status == "killed"
                tests_text = {None: "-", True: "killed", False: "survived"}[outcome.tests_killed]
                say(f"[{f'round {number}: ' * (number > 1)}{count}/{len(batch)}] "
                    f"{futures[done].describe()} → {outcome.status} "
                    f"({len(outcome.claims_killed)} claims; tests {tests_text}) "
                    f"{outcome.seconds:.0f} s; killed so far {killed}")  # fmt: skip
                if checkpoint and len(outcomes) % checkpoint_every == 0:
                    checkpoint(entry(outcomes, partial=True))

    try:
        baseline, coverage = (
            _split_baseline(claim_ids, claims, jobs, scale=scale, seed=claim_seed,
                            timeout=timeout, trace_lines=trace_lines,
                            probes=[p for m, s in mutants if (p := guard_probe(m, s))],
                            run_dir=run_dir)
            if mutants else ({}, None)
        )  # fmt: skip
        if coverage is not None:
            executed = sum(bool(executing_claims(m, s, users[(m, s.function)], coverage))
                           for m, s in mutants)  # fmt: skip
            say(
                f"{topic}: the claims execute {executed} of the {len(mutants)} mutants (swaps "
                "counted where their guard can fire); the others are equivalent without a run"
            )
        run_round(mutants, 1)
        taken = {(m, s.function, s.index) for m, s in plan.mutants}
        number = 2
        while silent_extra > 0 and sample is None and not functions and number <= max_rounds:
            recorded = reused + [o.to_json() for o in outcomes]
            noticed = {cid for o in recorded for cid in verdict_kills(o)}
            # a smoke claim (its quick verdict decides nothing) cannot kill by its verdict
            # at this scale, however many of its mutants run: no more rounds for it
            smoke = smoke_claims(baseline)
            silent = [c.id for c in claims if c.topic == topic and c.kind in CHECKED_KINDS
                      and c.id not in noticed and c.id not in smoke
                      and not (c.slow_at_quick and number > slow_max_rounds)]  # fmt: skip
            extra = silent_claim_mutants(users, silent, taken, per_claim=silent_extra,
                                         seed=sample_seed)  # fmt: skip
            if not extra:
                break
            taken |= {(m, s.function, s.index) for m, s in extra}
            again = [dict(kept[k], round=number) for m, s in extra
                     if (k := site_key(m, s)) in kept]  # fmt: skip
            reused += again
            with lock:
                killers.update(cid for o in again for cid in verdict_kills(o))
            more_mutants = [(m, s) for m, s in extra if site_key(m, s) not in kept]
            say(f"{topic}: {len(silent)} claims of a checked kind killed no mutant by a verdict; "
                f"round {number}: {len(extra)} more mutants of their own functions "
                f"({len(extra) - len(more_mutants)} already recorded)")  # fmt: skip
            missing = sorted({cid for m, s in more_mutants for cid in users[(m, s.function)]}
                             - set(baseline))  # fmt: skip
            if missing:
                more, lines = _split_baseline(missing, claims, jobs, scale=scale, seed=claim_seed,
                                              timeout=timeout, trace_lines=trace_lines,
                                              run_dir=run_dir)  # fmt: skip
                baseline.update(more)
                coverage = None if lines is None else {**(coverage or {}), **lines}
            run_round(more_mutants, number)
            number += 1
    finally:
        for each in servers:
            each.close()
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)
    return entry(outcomes, partial=False)
