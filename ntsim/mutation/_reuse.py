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
from collections.abc import Mapping, Sequence

import numpy as np

from ntsim.mutation._operators import Site

__all__ = [
    "SIMULATION_LINES",
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
    baseline's run) and its run was saved (:func:`run_covered_baseline`).

    Examples:
      >>> import pathlib, tempfile
      >>> from ntsim.mutation._operators import Site
      >>> site = Site("f", "flip_sign", 0, 0, line=4, before="a + b", after="a - b")
      >>> folder = tempfile.mkdtemp()
      >>> for name in ("s1", "s2"):
      ...     _ = (pathlib.Path(folder) / f"{name}.pkl").write_bytes(b"")
      >>> coverage = {"c1": {"m": frozenset({4}), "<simulation>m": frozenset({4})},
      ...             "c2": {"m": frozenset({4}), "<simulation>m": frozenset({3})}}
      >>> baseline = {"c1": {"simulation": "s1"}, "c2": {"simulation": "s2"}}
      >>> list(reusable_runs("m", site, ["c1", "c2"], baseline, coverage, folder))
      ['s2']
    """
    if coverage is None or run_dir is None:
        return {}
    found = {}
    for claim in claim_ids:
        simulation = baseline.get(claim, {}).get("simulation") or _simulation_of(claim)
        if simulation is None or claim not in coverage:
            continue
        ran = coverage[claim].get(SIMULATION_LINES + module, ())
        path = reusable_run_path(run_dir, simulation)
        if not any(line in ran for line in site.lines) and path.exists():
            found[simulation] = str(path)
    return found


def reusable_run_path(run_dir: str, simulation: str) -> pathlib.Path:
    """Where the baseline keeps ``simulation``'s run for the mutants (:func:`save_reusable_run`)."""
    return pathlib.Path(run_dir) / f"{simulation}.pkl"


def _same_summary(a: dict, b: dict) -> bool:
    keys = set(a) - {"seconds", "numbers"}
    return {k: a[k] for k in keys} == {k: b[k] for k in keys} and np.array_equal(
        np.asarray(a["numbers"], float), np.asarray(b["numbers"], float), equal_nan=True
    )


def save_reusable_run(group, records, run, scale: str, seed: int, run_dir: str) -> bool:
    """Save ``run`` (JAX arrays as numpy arrays, pickled) for mutants whose lines the
    simulation never runs: their claims may take it instead of simulating again, since the
    program is deterministic up to the first mutated line and the simulation never reaches
    one. Saved only when the group's checks, run again on the unpickled copy, give every
    claim the same verdict, match, error and numbers as ``records`` (a check that needs a
    JAX array, or a run that does not pickle, leaves nothing saved: its mutants simulate).
    Returns whether it was saved."""
    import pickle

    import jax

    from ntsim.claims import RunCache, run_claims
    from ntsim.mutation._worker import claim_summary

    try:
        portable = jax.tree.map(lambda x: np.asarray(x) if isinstance(x, jax.Array) else x, run)
        blob = pickle.dumps(portable)
        cache = RunCache(maxsize=1)
        cache.put((group[0].uses.name, scale, seed), pickle.loads(blob))
        again = run_claims(group, scale=scale, seeds=(seed,), cache=cache)
    except Exception:
        return False
    if not all(_same_summary(claim_summary(a), claim_summary(b))
               for a, b in zip(records, again, strict=True)):  # fmt: skip
        return False
    reusable_run_path(run_dir, group[0].uses.name).write_bytes(blob)
    return True


def reused_runs(cache, spec: dict) -> None:
    """Put the baseline's saved runs named by ``spec["reuse_runs"]`` (simulation → path) in
    ``cache`` (:func:`save_reusable_run`)."""
    import pickle

    seed = spec.get("seed", 0)
    for simulation, path in (spec.get("reuse_runs") or {}).items():
        cache.put((simulation, spec.get("scale", "quick"), seed),
                  pickle.loads(pathlib.Path(path).read_bytes()))  # fmt: skip
