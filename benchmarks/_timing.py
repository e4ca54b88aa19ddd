"""Timing helpers shared by the benchmark cases: warm-up, median of repeats, one row type."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import jax

REPEATS = 3  # median of 3 after one warm-up call (compilation excluded)


def time_call(fn, *args, repeats: int = REPEATS) -> tuple[float, object]:
    """Median wall time of ``fn(*args)`` (blocked until ready) after one warm-up call."""
    out = jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


@dataclass
class Row:
    """One line of the benchmark table; ``ratio`` is reference time over ntsim time."""

    case: str
    ntsim_s: float
    reference: str = ""
    reference_s: float | None = None
    gflops: float | None = None  # achieved by the ntsim side
    peak_memory_gb: float | None = None
    notes: str = ""

    @property
    def ratio(self) -> float | None:
        return None if self.reference_s is None else self.reference_s / self.ntsim_s
