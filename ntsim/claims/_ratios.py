"""``measured / bound`` that a broken bound cannot pass.

A bound on a norm checked as ``max(measured/bound) ≤ 1`` passes silently when the bound
turns negative (a dropped ``1 +``, a flipped sign): the ratio is then negative. Here a
bound that is not positive gives the ratio :data:`BROKEN`, far above 1 but finite (so the
comparison refutes rather than erroring on a non-finite value), unless the measured value
is itself 0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BROKEN", "ratio_to_bound"]

#: The ratio given to a measured value above a bound that is not positive.
BROKEN = float(np.finfo(float).max / 4)


def ratio_to_bound(measured, bound) -> np.ndarray:
    """``measured / bound`` where ``bound > 0``; :data:`BROKEN` where ``bound ≤ 0`` and
    ``measured ≠ 0``; ``0`` where ``measured`` is 0 and ``bound`` is not positive.

    Examples:
      >>> ratio = ratio_to_bound([1.0, 1.0, 0.0], [2.0, -2.0, 0.0])
      >>> float(ratio[0]), bool(ratio[1] == BROKEN), float(ratio[2])
      (0.5, True, 0.0)
    """
    measured, bound = np.asarray(measured, float), np.asarray(bound, float)
    safe = np.where(bound > 0, bound, 1.0)
    return np.where(bound > 0, measured / safe, np.where(measured == 0, 0.0, BROKEN))
