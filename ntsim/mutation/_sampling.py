"""Which mutants the matrix draws: the functions on the claims' paths, a stratified sample
of their mutation sites, the sites that give every claim mutants of its *own* functions,
and the second round for claims that killed nothing (:func:`silent_claim_mutants`).
"""

from __future__ import annotations

import collections
import importlib
import inspect
import random
from collections.abc import Collection, Mapping, Sequence

from ntsim.mutation._closure import FunctionRef, claim_path
from ntsim.mutation._operators import Site, function_sites

__all__ = [
    "cover_claims",
    "own_functions",
    "select_mutants",
    "silent_claim_mutants",
    "topic_functions",
]


def topic_functions(claims) -> dict[FunctionRef, tuple[str, ...]]:
    """Every mutable function on some claim's path → the ids of the claims that run it."""
    users: dict[FunctionRef, list[str]] = collections.defaultdict(list)
    for claim in claims:
        for ref in claim_path([claim.check, claim.uses.fn]):
            users[ref].append(claim.id)
    return {ref: tuple(ids) for ref, ids in sorted(users.items())}


def _source(module: str) -> str:
    return inspect.getsource(importlib.import_module(module))


def select_mutants(
    functions: Sequence[FunctionRef],
    *,
    sample: int | None,
    seed: int = 0,
    operators: Sequence[str] | None = None,
) -> list[tuple[str, Site]]:
    """``(module, site)`` pairs: all sites, or ``sample`` of them drawn one function at a
    time (functions in random order, each function's sites shuffled), seeded."""
    rng = random.Random(seed)
    pools = []
    for module, function in functions:
        sites = [s for s in function_sites(_source(module), function)]
        if operators:
            sites = [s for s in sites if s.operator in operators]
        rng.shuffle(sites)
        if sites:
            pools.append([(module, s) for s in sites])
    if sample is None:
        return [pair for pool in pools for pair in pool]
    rng.shuffle(pools)
    chosen: list[tuple[str, Site]] = []
    while len(chosen) < sample and any(pools):
        for pool in pools:
            if pool and len(chosen) < sample:
                chosen.append(pool.pop())
    return chosen


def own_functions(users: Mapping[FunctionRef, Sequence[str]]) -> dict[str, list[FunctionRef]]:
    """Each claim's *own* functions: those on its path shared by the fewest claims (at most
    ``max(3, fewest)``), the most specific first (ties by name).

    Examples:
      >>> users = {("m", "f"): ("a",), ("m", "g"): ("a", "b"), ("m", "h"): ("a", "b", "c", "d")}
      >>> own_functions(users)
      {'a': [('m', 'f'), ('m', 'g')], 'b': [('m', 'g')], 'c': [('m', 'h')], 'd': [('m', 'h')]}
    """
    claims = sorted({cid for ids in users.values() for cid in ids})
    own: dict[str, list[FunctionRef]] = {}
    for claim in claims:
        mine = sorted((len(ids), ref) for ref, ids in users.items() if claim in ids)
        limit = max(3, mine[0][0])
        own[claim] = [ref for size, ref in mine if size <= limit]
    return own


def silent_claim_mutants(
    users: Mapping[FunctionRef, Sequence[str]],
    silent: Sequence[str],
    taken: Collection[tuple[str, str, int]],
    *,
    per_claim: int,
    seed: int = 0,
) -> list[tuple[str, Site]]:
    """The second round of the matrix: for each claim of ``silent`` (a checked kind that
    killed no mutant of the first round), up to ``per_claim`` more mutants of its own
    functions (:func:`own_functions`), drawn one function at a time (seeded), none of
    ``taken`` (``(module, function, index)``) or drawn for an earlier claim."""
    rng = random.Random(seed)
    own, taken, result = own_functions(users), set(taken), []
    for claim in sorted(silent):
        pools = []
        for module, function in own.get(claim, ()):
            left = [s for s in function_sites(_source(module), function)
                    if (module, function, s.index) not in taken]  # fmt: skip
            rng.shuffle(left)
            pools.append([(module, s) for s in left])
        drawn = 0
        while drawn < per_claim and any(pools):
            for pool in pools:
                if pool and drawn < per_claim:
                    module, site = pool.pop()
                    result.append((module, site))
                    taken.add((module, site.function, site.index))
                    drawn += 1
    return result


def cover_claims(
    users: dict[FunctionRef, tuple[str, ...]],
    chosen: Sequence[tuple[str, Site]],
    *,
    per_claim: int,
    seed: int = 0,
) -> list[tuple[str, Site]]:
    """``chosen`` plus mutants until every claim has ``per_claim`` of them in its *own*
    functions: those on its path shared by the fewest claims (at most
    ``max(3, fewest)``), so the bugs counted are near its formula, not in shared helpers.
    Added mutants come from those functions, the most specific first (ties by name).
    """
    rng = random.Random(seed)
    result = list(chosen)
    taken = {(m, s.function, s.index) for m, s in result}
    own = own_functions(users)
    for claim in sorted(own):
        have = sum((m, s.function) in own[claim] for m, s in result)
        for module, function in own[claim]:
            if have >= per_claim:
                break
            left = [s for s in function_sites(_source(module), function)
                    if (module, function, s.index) not in taken]  # fmt: skip
            rng.shuffle(left)
            for site in left[: per_claim - have]:
                result.append((module, site))
                taken.add((module, function, site.index))
                have += 1
    return result
