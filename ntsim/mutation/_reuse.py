"""Mutants that reuse the baseline's runs: a mutant its claims' simulations never reach.

The traced baseline (:func:`ntsim.mutation._worker._covered_runs`) records which lines each
claim's simulation ran, apart from its checks, under the coverage keys
``SIMULATION_LINES + module``, and saves each simulation's run (:func:`save_reusable_run`).
A mutant none of whose lines a claim's simulation ran gives that claim the saved run
(:func:`reusable_runs`, :func:`reused_runs`) and runs only its check: the program is
deterministic up to the first mutated line, and the simulation never reaches one.
"""

from __future__ import annotations

import pathlib
import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from ntsim.mutation._operators import Site

__all__ = [
    "SIMULATION_LINES",
    "pickled_run",
    "reusable_run_path",
    "reusable_runs",
    "reused_runs",
    "save_reusable_run",
]

#: Prefix of the coverage keys ``SIMULATION_LINES + module`` that list the lines a claim's
#: simulation ran (its other lines ran in the checks): a mutant none of whose lines its
#: simulation runs may reuse the baseline's run (:func:`save_reusable_run`).
SIMULATION_LINES = "<simulation>"


def _simulation_of(claim_id: str) -> str | None:
    """The name of a registered claim's simulation (``None`` for an unknown id)."""
    from ntsim.claims import REGISTRY

    return next((c.uses.name for c in REGISTRY if c.id == claim_id), None)


def reusable_runs(
    module: str,
    site: Site,
    claim_ids: Sequence[str],
    baseline: Mapping,
    coverage: Mapping | None,
    run_dir: str | None,
) -> dict[str, str]:
    """``{simulation: file}`` of the baseline's saved runs that the claims of ``claim_ids``
    may take instead of simulating with the mutant: the simulation never ran a line of
    ``site`` in the baseline (so, deterministic up to its first mutated line, it gives the
    baseline's run), and every one of these claims that reads the simulation had its check
    confirmed on that very file (:func:`save_reusable_run`'s markers; the mutant's run caches
    one run per simulation, so one claim without a marker, or two claims confirmed on
    different files, leave the simulation to be run).

    Examples:
      >>> import tempfile
      >>> from ntsim.mutation._operators import Site
      >>> site = Site("f", "flip_sign", 0, 0, line=4, before="a + b", after="a - b")
      >>> folder = tempfile.mkdtemp()
      >>> for claim, sim in (("c1", "s1"), ("c2", "s2"), ("c3", "s3")):
      ...     _ = _mark(folder, claim, reusable_run_path(folder, sim, [claim]))
      >>> ran = {"m": frozenset({4})}
      >>> coverage = {"c1": {**ran, "<simulation>m": frozenset({4})},
      ...             "c2": {**ran, "<simulation>m": frozenset({3})},
      ...             "c3": ran, "c4": ran}
      >>> baseline = {c: {"simulation": s} for c, s in
      ...             (("c1", "s1"), ("c2", "s2"), ("c3", "s3"), ("c4", "s3"))}
      >>> sorted(reusable_runs("m", site, ["c1", "c2", "c3"], baseline, coverage, folder))
      ['s2', 's3']
      >>> sorted(reusable_runs("m", site, ["c3", "c4"], baseline, coverage, folder))  # c4: none
      []
    """
    if coverage is None or run_dir is None:
        return {}
    by_simulation: dict[str, list[str]] = {}
    for claim in claim_ids:
        simulation = baseline.get(claim, {}).get("simulation") or _simulation_of(claim)
        if simulation is not None:
            by_simulation.setdefault(simulation, []).append(claim)
    found = {}
    for simulation, claims in by_simulation.items():
        files = {_marked(run_dir, claim) for claim in claims}
        reached = any(
            line in coverage.get(claim, {}).get(SIMULATION_LINES + module, ())
            for claim in claims
            for line in site.lines
        )
        confirmed = len(files) == 1 and None not in files
        if confirmed and all(c in coverage for c in claims) and not reached:
            found[simulation] = files.pop()
    return found


def reusable_run_path(run_dir: str, simulation: str, claim_ids: Sequence[str]) -> pathlib.Path:
    """The file of ``simulation``'s run as saved by the baseline of the claims ``claim_ids``
    (:func:`save_reusable_run`): one per simulation and group of claims."""
    group = zlib.crc32("\n".join(sorted(claim_ids)).encode())
    return pathlib.Path(run_dir) / f"{simulation}-{group:08x}.pkl"


def _marker(run_dir: str, claim_id: str) -> pathlib.Path:
    return pathlib.Path(run_dir) / f"{claim_id}.run"


def _mark(run_dir: str, claim_id: str, path: pathlib.Path) -> None:
    """Record that ``claim_id``'s check gave its baseline answer on the run saved at ``path``."""
    _marker(run_dir, claim_id).write_text(str(path))


def _marked(run_dir: str, claim_id: str) -> str | None:
    """The saved run ``claim_id``'s check was confirmed on (``None``: none)."""
    marker = _marker(run_dir, claim_id)
    return marker.read_text() if marker.exists() else None


def _same_summary(a: dict, b: dict) -> bool:
    keys = set(a) - {"seconds", "numbers"}
    return {k: a[k] for k in keys} == {k: b[k] for k in keys} and np.array_equal(
        np.asarray(a["numbers"], float), np.asarray(b["numbers"], float), equal_nan=True
    )


class _DeviceLeaf:
    """A JAX array of a saved run, held as numpy: unpickling a ``jax.Array`` outside the
    simulation's x64 context would truncate float64 to float32 (seen), so the array is
    rebuilt inside that context (:func:`_restored`)."""

    def __init__(self, value: np.ndarray):
        self.value = value


def pickled_run(run) -> bytes | None:
    """``run`` pickled as the simulation left it, before any check has touched it (its JAX
    arrays as :class:`_DeviceLeaf`); ``None`` when it does not pickle (a closure in it)."""
    import pickle

    import jax

    try:
        held = jax.tree.map(
            lambda x: _DeviceLeaf(np.asarray(x)) if isinstance(x, jax.Array) else x, run
        )
        return pickle.dumps(held)
    except Exception:
        return None


def _restored(blob: bytes, simulation) -> object:
    """The run of :func:`pickled_run`, its JAX arrays rebuilt in ``simulation``'s x64 mode."""
    import contextlib
    import pickle

    import jax
    import jax.numpy as jnp

    held = pickle.loads(blob)
    with jax.enable_x64(True) if simulation.x64 else contextlib.nullcontext():
        return jax.tree.map(
            lambda x: jnp.asarray(x.value) if isinstance(x, _DeviceLeaf) else x,
            held,
            is_leaf=lambda x: isinstance(x, _DeviceLeaf),
        )


def _simulation_named(name: str):
    from ntsim.claims import REGISTRY

    return next(c.uses for c in REGISTRY if c.uses.name == name)


def save_reusable_run(
    group, records, blob: bytes | None, scale: str, seed: int, run_dir: str
) -> bool:
    """Save the run ``blob`` (:func:`pickled_run`, taken before the checks ran) for mutants
    whose lines the simulation never runs: their claims may take it instead of simulating
    again, since the program is deterministic up to the first mutated line and the
    simulation never reaches one. Saved only when the group's checks, run again on the
    unpickled copy from cleared caches, give every claim the same verdict, match, error
    and numbers as ``records``; then each claim of the group is marked as confirmed on this
    file (:func:`reusable_runs` reads the marks). Otherwise the group's claims lose any
    earlier mark, and their mutants simulate. Returns whether it was saved."""
    from ntsim.claims import RunCache, run_claims
    from ntsim.mutation._worker import _clear_caches, claim_summary

    ids = [claim.id for claim in group]
    for claim in ids:
        _marker(run_dir, claim).unlink(missing_ok=True)
    if blob is None:
        return False
    try:
        _clear_caches()  # the copy is checked as a mutant would use it: without the
        cache = RunCache(maxsize=1)  # simulation's traces and memoised values
        cache.put((group[0].uses.name, scale, seed), _restored(blob, group[0].uses))
        again = run_claims(group, scale=scale, seeds=(seed,), cache=cache)
    except Exception:
        return False
    if not all(_same_summary(claim_summary(a), claim_summary(b))
               for a, b in zip(records, again, strict=True)):  # fmt: skip
        return False
    path = reusable_run_path(run_dir, group[0].uses.name, ids)
    path.write_bytes(blob)
    for claim in ids:
        _mark(run_dir, claim, path)
    return True


def reused_runs(cache, spec: dict) -> None:
    """Put the baseline's saved runs named by ``spec["reuse_runs"]`` (simulation → path) in
    ``cache`` (:func:`save_reusable_run`)."""
    seed = spec.get("seed", 0)
    for name, path in (spec.get("reuse_runs") or {}).items():
        run = _restored(pathlib.Path(path).read_bytes(), _simulation_named(name))
        cache.put((name, spec.get("scale", "quick"), seed), run)
