"""Which mutants the matrix draws: the functions on the claims' paths, a stratified sample
of their mutation sites, the sites that give every claim mutants of its *own* functions,
and the second round for claims that killed nothing (:func:`silent_claim_mutants`).

Every draw is seeded per function (:func:`_function_rng`: the seed, the draw's purpose and the
function's qualified name): which sites of a function are drawn depends on that function's
own source only, so adding, removing or editing another function leaves the sample of the
rest as it was, and ``ntsim mutate --resume`` keeps their outcomes.
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


def _function_rng(seed: int, purpose: str, module: str, function: str) -> random.Random:
    """A generator for one function's draw: seeded by a string (hashed with SHA-512 by
    :class:`random.Random`, the same in every process and Python run), not by the state a
    shared generator reached after the functions drawn before it."""
    return random.Random(f"{seed}:{purpose}:{module}.{function}")


def _shuffled_sites(module: str, function: str, seed: int, purpose: str, operators=None):
    sites = list(function_sites(_source(module), function))
    if operators:
        sites = [s for s in sites if s.operator in operators]
    _function_rng(seed, purpose, module, function).shuffle(sites)
    return sites


def select_mutants(
    functions: Sequence[FunctionRef],
    *,
    sample: int | None,
    seed: int = 0,
    operators: Sequence[str] | None = None,
) -> list[tuple[str, Site]]:
    """``(module, site)`` pairs: all sites, or ``sample`` of them drawn one function at a
    time (functions in a seeded order, each function's sites shuffled), seeded per function
    (:func:`_function_rng`)."""
    pools = []
    for module, function in functions:
        sites = _shuffled_sites(module, function, seed, "sites", operators)
        if sites:
            pools.append([(module, s) for s in sites])
    if sample is None:
        return [pair for pool in pools for pair in pool]
    # each function's place in the round robin is its own seeded draw, not a shuffle of the
    # list, so one function more or less does not reorder the others
    pools.sort(key=lambda pool: _function_rng(seed, "order", pool[0][0], pool[0][1].function)
               .random())  # fmt: skip
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
    functions (:func:`own_functions`), drawn one function at a time (seeded per claim and
    function), none of ``taken`` (``(module, function, index)``) or drawn for an earlier
    claim."""
    own, taken, result = own_functions(users), set(taken), []
    for claim in sorted(silent):
        pools = []
        for module, function in own.get(claim, ()):
            sites = _shuffled_sites(module, function, seed, f"silent:{claim}")
            left = [s for s in sites if (module, function, s.index) not in taken]
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
    Added mutants come from those functions, the most specific first (ties by name), each
    function's sites in a seeded order of its own (:func:`_function_rng`).
    """
    result = list(chosen)
    taken = {(m, s.function, s.index) for m, s in result}
    own = own_functions(users)
    for claim in sorted(own):
        have = sum((m, s.function) in own[claim] for m, s in result)
        for module, function in own[claim]:
            if have >= per_claim:
                break
            sites = _shuffled_sites(module, function, seed, "cover")
            left = [s for s in sites if (module, function, s.index) not in taken]
            for site in left[: per_claim - have]:
                result.append((module, site))
                taken.add((module, function, site.index))
                have += 1
    return result
