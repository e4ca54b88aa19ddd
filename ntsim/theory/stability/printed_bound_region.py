r"""Where Thm 2.2's printed bound (eq. (3)) is provably safe, by a second route.

Fu et al. 2023, eq. (3), bounds the leave-one-out distance of GD with ``η = 1/β`` by
``√(2L)·R/β · q^{1/4}/(n(1 − q^{1/4}))`` (``q = 1 − μ/β``). On the project's quadratic
model (``R = β = 1``, ``L = βR``) the proof's certificate gives ``sup_T‖w_T − w^i_T‖ ≤
R/(n μ/β)``, so eq. (3) is safe wherever it is at least that certificate. Writing ``r =
μ/β`` and ``ρ = q^{1/4}``,

    n·r·eq3(r) − 1 = (√2·r·ρ − (1 − ρ))/(1 − ρ),

so the sign of eq. (3) minus the certificate is that of
:func:`ntsim.theory.stability.printed_bound_safe_ratio` ``= √2·r·ρ − (1 − ρ)``, and

    printed_bound_safe_ratio(r) = (1 − ρ)·(n·r·eq3(r) − 1)    for every n.

The stability claims use that margin as a guard (the grid of the printed-bound claim must
stay where it is positive, up to ``r ≈ 0.968``). :func:`simulate_printed_bound_region`
evaluates both sides on random ``(r, n)``: the guard's closed form against
:func:`~ntsim.theory.stability.thm2_2_bound_printed`.

(:func:`safe_region_end` is the region's end on eq. (3) itself, for tests and readers; the
simulation leaves it out so that the claim's run holds only what the claim decides on.)

(A public submodule, not re-exported from :mod:`ntsim.theory.stability` yet: the package's
``__init__`` is on the source path of every stability claim, so exporting it re-hashes them
all. Export it when that topic is next re-recorded.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_key, check_positive_int, check_setting_type
from ntsim.theory.stability import printed_bound_safe_ratio, thm2_2_bound_printed

__all__ = [
    "PrintedBoundRegionRun",
    "PrintedBoundRegionSetting",
    "safe_region_end",
    "simulate_printed_bound_region",
]


def safe_region_end(num_samples: int = 10, iterations: int = 60) -> float:
    """The ``μ/β`` in ``(0.5, 1)`` where eq. (3) (``R = β = 1``, ``L = βR``) meets the
    certificate ``R/(n μ/β)``, by bisection on the two directly (not on the guard).

    Examples:
      >>> round(safe_region_end(), 4)
      0.9683
    """
    n = check_positive_int("safe_region_end", "num_samples", num_samples)

    def above(r):
        return float(thm2_2_bound_printed(n, r, 1.0, 1.0, 1.0)) >= 1.0 / (n * r)

    low, high = 0.5, 1.0 - 1e-12  # eq. (3) is above at ½ and 0 < 1/n at μ = β
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if above(middle) else (low, middle)
    return 0.5 * (low + high)


@dataclass(frozen=True)
class PrintedBoundRegionSetting:
    """``r = μ/β`` uniform on ``[min_ratio, max_ratio]``, ``n`` uniform on
    ``{2, …, max_samples}``."""

    points: int = 2_000
    min_ratio: float = 0.01
    max_ratio: float = 0.999
    max_samples: int = 1_000

    def __post_init__(self):
        where = "PrintedBoundRegionSetting"
        check_positive_int(where, "points", self.points)
        if check_positive_int(where, "max_samples", self.max_samples) < 2:
            raise ValueError(f"{where}: max_samples must be >= 2, got {self.max_samples}.")
        if not 0.0 < self.min_ratio <= self.max_ratio < 1.0:
            raise ValueError(
                f"{where}: need 0 < min_ratio <= max_ratio < 1, got {self.min_ratio}, "
                f"{self.max_ratio}."
            )


class PrintedBoundRegionRun(NamedTuple):
    """Per point (axis 0): ``ratio`` (``μ/β``), ``num_samples``, ``eq3`` (the library's eq.
    (3) at ``R = β = 1``, ``L = βR``), ``safe_margin`` (the library's guard)."""

    ratio: np.ndarray
    num_samples: np.ndarray
    eq3: np.ndarray
    safe_margin: np.ndarray


def simulate_printed_bound_region(key, setting: PrintedBoundRegionSetting) -> PrintedBoundRegionRun:
    """Eq. (3) and the safe-region guard on random ``(μ/β, n)`` (module doc)."""
    check_setting_type("simulate_printed_bound_region", setting, PrintedBoundRegionSetting)
    check_key("simulate_printed_bound_region", key)
    s = setting
    k_ratio, k_samples = jax.random.split(key)
    ratio = np.asarray(jax.random.uniform(k_ratio, (s.points,), jnp.result_type(float),
                                          s.min_ratio, s.max_ratio), float)  # fmt: skip
    num_samples = np.asarray(jax.random.randint(k_samples, (s.points,), 2, s.max_samples + 1))
    eq3 = np.asarray(thm2_2_bound_printed(num_samples, ratio, 1.0, 1.0, 1.0), float)
    return PrintedBoundRegionRun(
        ratio, num_samples, eq3, np.asarray(printed_bound_safe_ratio(ratio))
    )
