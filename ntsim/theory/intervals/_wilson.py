"""A confidence interval for a proportion (Wilson's score interval).

It lives here, not in :mod:`ntsim.core`, on purpose: the intervals claims decide on it
whether ``ntsim.core``'s own intervals are calibrated, so it shares no code with them.
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["wilson_ci"]


def wilson_ci(successes: int, total: int, *, level: float = 0.95) -> tuple[float, tuple]:
    r"""``(p̂, (lo, hi))``: the proportion ``p̂ = successes/total`` and Wilson's score interval
    (Wilson 1927), the set of ``p`` whose score test does not reject at ``1 − level``:

    .. math:: \frac{\hat p + z^2/2n}{1 + z^2/n} ∓
       \frac{z}{1 + z^2/n}\sqrt{\frac{\hat p(1 - \hat p)}{n} + \frac{z^2}{4n^2}},

    ``z`` the two-sided normal quantile (from the standard library, so this interval shares
    no code with the intervals of :mod:`ntsim.core` it is used to check). The ends are
    clipped to ``[0, 1]`` and always contain ``p̂``.

    Examples:
      >>> p, (lo, hi) = wilson_ci(0, 100)
      >>> p, lo, round(hi, 4)
      (0.0, 0.0, 0.037)
      >>> p, (lo, hi) = wilson_ci(50, 100)
      >>> round(lo, 4), round(hi, 4)
      (0.4038, 0.5962)
    """
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise ValueError(f"wilson_ci: total must be a positive integer, got {total!r}.")
    if not 0 <= successes <= total:
        raise ValueError(f"wilson_ci: need 0 <= successes <= total, got {successes}/{total}.")
    if not 0 < level < 1:
        raise ValueError(f"wilson_ci: level must be in (0, 1), got {level}.")
    z = NormalDist().inv_cdf((1 + level) / 2)
    p = successes / total
    shrink = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / shrink
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / shrink
    return p, (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))
