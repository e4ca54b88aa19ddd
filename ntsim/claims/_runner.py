"""The claim runner: seeds, keys, float64, one run per simulation, records that lose nothing.

:func:`run_claims` runs each claim at every requested master seed and returns one
:class:`ClaimRecord` per claim. For each (claim, seed) it

1. derives the key from the simulation's name (``fold_in(PRNGKey(seed), crc32(name))``:
   independent of which other claims run, stable across sessions);
2. computes the simulation's run at the requested scale, once per (simulation, scale,
   seed), inside ``jax.enable_x64`` when the simulation asks for it, and shares it with
   every claim that reads it (a run is dropped after the last claim reading it);
3. calls the pure ``check(run)``; an exception, a result that is not a
   :class:`~ntsim.claims.ClaimResult`, a non-finite value or fewer than ``min_instances``
   instances make an *error* for that seed, never a verdict;
4. for ``expect="refuted"``, matches the result against the declared counterexample.

A claim's verdict is holds or refuted only when every seed agrees; otherwise it is
inconclusive (an error at any seed makes it an error). ``on_record`` receives each record
as soon as it is finished (``ntsim verify`` writes it to the tables then, so an interrupted
run keeps what finished).
"""

from __future__ import annotations

import contextlib
import time
import traceback
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ntsim._scales import check_scale
from ntsim._shared_runs import take
from ntsim.claims._contract import Claim
from ntsim.claims._decisions import ClaimResult
from ntsim.claims._provenance import callable_module, code_hash, source_hash
from ntsim.claims._scale_provenance import scale_code_hash

__all__ = [
    "ClaimRecord",
    "RunCache",
    "SeedOutcome",
    "claim_key",
    "parse_seeds",
    "run_claims",
    "simulation_run",
]


def claim_key(seed: int, name: str):
    """The key for simulation ``name`` at master seed ``seed``.

    Examples:
      >>> import jax
      >>> bool((claim_key(0, "a") == claim_key(0, "a")).all())
      True
      >>> bool((claim_key(0, "a") == claim_key(1, "a")).all())
      False
    """
    import jax

    return jax.random.fold_in(jax.random.PRNGKey(seed), zlib.crc32(name.encode()))


#: Master seeds are ``jax.random.PRNGKey`` seeds: unsigned 32-bit integers (a larger one
#: would wrap to the key of a smaller one).
MAX_SEED = 2**32 - 1
#: More seeds than this in one ``--seeds`` is a typo, not a study.
MAX_SEED_COUNT = 10_000


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"0:3"`` → ``(0, 1, 2)``; ``"0,3,7"`` → ``(0, 3, 7)``; ``"5"`` → ``(5,)``.

    Examples:
      >>> parse_seeds("0:3"), parse_seeds("0,3,7"), parse_seeds("5")
      ((0, 1, 2), (0, 3, 7), (5,))
      >>> parse_seeds("3:3")
      Traceback (most recent call last):
      ...
      ValueError: --seeds: '3:3' selects no seed (use START:STOP with STOP > START, or 0,3,7).
    """
    text = text.strip()
    try:
        if ":" in text:
            start, stop = (int(v) for v in text.split(":"))
            if stop - start > MAX_SEED_COUNT:
                raise ValueError(
                    f"--seeds: {text!r} selects {stop - start} seeds; at most {MAX_SEED_COUNT} "
                    "at once"
                )
            seeds = tuple(range(start, stop))
        else:
            seeds = tuple(int(v) for v in text.split(","))
    except ValueError as error:
        if str(error).startswith("--seeds"):
            raise
        raise ValueError(f"--seeds: cannot read {text!r} (use 0:3 or 0,3,7).") from None
    if not seeds:
        raise ValueError(
            f"--seeds: {text!r} selects no seed (use START:STOP with STOP > START, or 0,3,7)."
        )
    if len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError(f"--seeds: seeds must be distinct and non-negative, got {seeds}.")
    if max(seeds) > MAX_SEED:
        raise ValueError(
            f"--seeds: {max(seeds)} is out of range: seeds are PRNG seeds, 0 to {MAX_SEED}."
        )
    return seeds


@dataclass(frozen=True)
class SeedOutcome:
    """One claim at one master seed."""

    seed: int
    verdict: str  # holds | refuted | inconclusive | error
    result: ClaimResult | None
    error: str | None
    seconds: float
    counterexample_matched: bool | None = None
    counterexample_found: str = ""


@dataclass(frozen=True)
class ClaimRecord:
    """A claim's outcome over all seeds, as the tables record it."""

    claim: Claim
    scale: str
    per_seed: tuple[SeedOutcome, ...]
    source_hash: str
    code_hash: str = ""
    scale_code_hash: str = ""  # code_hash(..., scale): other scales' settings left out

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(s.seed for s in self.per_seed)

    @property
    def verdict(self) -> str:
        """holds/refuted when every seed agrees; error if any seed errs; else inconclusive."""
        verdicts = {s.verdict for s in self.per_seed}
        if "error" in verdicts:
            return "error"
        return verdicts.pop() if len(verdicts) == 1 else "inconclusive"

    @property
    def flips(self) -> bool:
        """Seeds disagree (without errors)."""
        return len({s.verdict for s in self.per_seed}) > 1 and self.verdict != "error"

    @property
    def counterexample_matched(self) -> bool | None:
        flags = [s.counterexample_matched for s in self.per_seed]
        return None if any(f is None for f in flags) else all(flags)

    @property
    def smoke(self) -> bool:
        """A quick-scale record of a claim whose quick scale decides nothing
        (:data:`ntsim.claims.QUICK_SMOKE_CLAIMS`)."""
        from ntsim.claims import QUICK_SMOKE_CLAIMS

        return self.scale == "quick" and self.claim.id in QUICK_SMOKE_CLAIMS

    @property
    def as_expected(self) -> bool:
        """The verdict is the one registered; a refutation must also match its counterexample.
        A smoke record (:attr:`smoke`) only has to run without error."""
        if self.smoke:
            return self.verdict != "error"
        if self.verdict != self.claim.expect:
            return False
        return self.claim.expect == "holds" or bool(self.counterexample_matched)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.per_seed)

    def _results(self) -> list[ClaimResult]:
        return [s.result for s in self.per_seed if s.result is not None]

    @property
    def worst_margin(self) -> float:
        values = [r.worst_margin for r in self._results()]
        return min(values) if values else float("nan")

    @property
    def headroom(self) -> float:
        values = [r.headroom for r in self._results() if np.isfinite(r.headroom)]
        return min(values) if values else float("nan")

    @property
    def num_instances(self) -> int:
        values = [r.num_instances for r in self._results()]
        return min(values) if values else 0


class RunCache:
    """Runs by (simulation, scale, seed), least recently used dropped beyond ``maxsize``."""

    def __init__(self, maxsize: int = 8):
        self.maxsize = maxsize
        self._runs: OrderedDict = OrderedDict()

    def get(self, key, compute: Callable[[], Any]):
        if key in self._runs:
            self._runs.move_to_end(key)
            return self._runs[key]
        value = compute()
        self._runs[key] = value
        while len(self._runs) > self.maxsize:
            self._runs.popitem(last=False)
        return value

    def drop(self, name: str) -> None:
        for key in [k for k in self._runs if k[0] == name]:
            del self._runs[key]

    def put(self, key, value) -> None:
        """Store ``value`` as the run of ``key`` (``(simulation, scale, seed)``), as
        :meth:`get` would after computing it."""
        self.get(key, lambda: value)


def _x64(enabled: bool):
    if not enabled:
        return contextlib.nullcontext()
    import jax

    return jax.enable_x64(True)


def _format_error(error: BaseException) -> str:
    """The exception and its innermost frames (where the check failed)."""
    frames = traceback.extract_tb(error.__traceback__)[-4:]
    where = "".join(traceback.format_list(frames))
    return f"{type(error).__name__}: {error}\n{where}"


def claim_roots(claim: Claim) -> tuple[str, ...]:
    """The modules a claim's source hash starts from: its check's and its simulation's."""
    return (callable_module(claim.check), callable_module(claim.uses.fn))


def claim_source_hash(claim: Claim) -> str:
    """Hash of the claim's transitive source (:mod:`ntsim.claims._provenance`)."""
    return source_hash(claim_roots(claim))


def claim_code_hash(claim: Claim, scale: str | None = None) -> str:
    """Hash of the claim's transitive code, docstrings and comments left out; with
    ``scale``, also the settings of other scales (:mod:`ntsim.claims._scale_provenance`)."""
    if scale is None:
        return code_hash(claim_roots(claim))
    return scale_code_hash(claim_roots(claim), scale)


def _compute(sim, seed: int, setting):
    """The simulation's run at master seed ``seed``: taken from the experiment that computed
    it with the same key inside ``ntsim reproduce`` (:mod:`ntsim._shared_runs`), else run."""
    key = claim_key(seed, sim.key)
    found, run = take(sim.fn, key, setting)
    return run if found else sim.fn(key, setting)


def simulation_run(sim, scale: str, seed: int, cache: RunCache):
    """The run of ``sim`` at ``scale`` and master seed ``seed`` that :func:`run_claims`
    would give its claims (``cache``'s, else computed and kept there)."""
    with _x64(sim.x64):
        return cache.get((sim.name, scale, seed), lambda: _compute(sim, seed, sim.setting(scale)))


def _run_one(claim: Claim, scale: str, seed: int, cache: RunCache) -> SeedOutcome:
    start = time.perf_counter()
    try:
        sim = claim.uses
        setting = sim.setting(scale)
        with _x64(sim.x64):
            run = cache.get((sim.name, scale, seed), lambda: _compute(sim, seed, setting))
            result = claim.check(run)
        if not isinstance(result, ClaimResult):
            raise TypeError(
                f"check returned {type(result).__name__}, expected ntsim.claims.ClaimResult."
            )
        if result.num_instances < claim.min_instances:
            raise ValueError(
                f"decided on {result.num_instances} instances; the claim requires at least "
                f"{claim.min_instances}."
            )
    except Exception as error:  # a broken claim is an error row, never hides the others
        return SeedOutcome(seed, "error", None, _format_error(error), time.perf_counter() - start)
    matched, found = None, ""
    if claim.expect == "refuted":
        matched, found = claim.counterexample.matches(result)
    seconds = time.perf_counter() - start
    return SeedOutcome(seed, result.outcome, result, None, seconds, matched, found)


def run_claims(
    claims: Sequence[Claim],
    *,
    scale: str = "quick",
    seeds: Sequence[int] = (0,),
    progress: Callable[[str], None] | None = None,
    on_record: Callable[[ClaimRecord], None] | None = None,
    cache: RunCache | None = None,
) -> list[ClaimRecord]:
    """Run ``claims`` at ``scale`` for every seed in ``seeds`` (module doc).

    Args:
      claims: the claims, in the order to run them.
      scale: ``"quick"`` or ``"full"``.
      seeds: master seeds.
      progress: receives one line per step (the CLI prints it to stderr).
      on_record: receives each finished :class:`ClaimRecord` at once.
      cache: share runs across calls (tests); by default each call has its own cache and
        drops a simulation's runs after the last claim that reads them.
    """
    check_scale(scale)
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("run_claims: need at least one seed.")
    own_cache = cache is None
    cache = cache or RunCache(maxsize=max(8, len(seeds)))
    last_use = {c.uses.name: i for i, c in enumerate(claims)}
    records = []
    for index, claim in enumerate(claims, start=1):
        if progress:
            progress(f"[{index}/{len(claims)}] {claim.id} (seeds {_seed_text(seeds)}) ...")
        outcomes = []
        for seed in seeds:
            outcome = _run_one(claim, scale, seed, cache)
            outcomes.append(outcome)
            if progress:
                progress(_seed_line(claim, outcome))
        record = ClaimRecord(
            claim,
            scale,
            tuple(outcomes),
            claim_source_hash(claim),
            claim_code_hash(claim),
            claim_code_hash(claim, scale),
        )
        if own_cache and last_use[claim.uses.name] == index - 1:
            cache.drop(claim.uses.name)
        if progress:
            mark = "as expected" if record.as_expected else "UNEXPECTED"
            mark += " (a smoke run at this scale)" if record.smoke else ""
            progress(f"    => {record.verdict} ({mark}) in {record.seconds:.1f} s")
        if on_record:
            on_record(record)
        records.append(record)
    return records


def _seed_text(seeds: Sequence[int]) -> str:
    return ",".join(map(str, seeds)) if len(seeds) <= 6 else f"{seeds[0]}..{seeds[-1]}"


def _seed_line(claim: Claim, outcome: SeedOutcome) -> str:
    head = f"    seed {outcome.seed}: {outcome.verdict} in {outcome.seconds:.1f} s"
    if outcome.error:
        return head + "\n" + "\n".join("      " + line for line in outcome.error.splitlines())
    result = outcome.result
    head += f", worst margin {result.worst_margin:.3g}"
    if np.isfinite(result.headroom):
        head += f", headroom {result.headroom:.3g}"
    if result.interval is not None:
        head += f", estimate {result.measured[0]:.4g} CI [{result.interval[0]:.4g}, "
        head += f"{result.interval[1]:.4g}] vs {result.region.describe()}"
    if outcome.counterexample_matched is not None:
        state = "matches" if outcome.counterexample_matched else "DOES NOT match"
        head += f"; counterexample {state} ({outcome.counterexample_found})"
    return head
