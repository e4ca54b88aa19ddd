"""Figure 1 of Shachaf et al. 2021 (Sec 4.2): the simulation the figure and its claim share.

``Σ = diag(top_value × top, bottom_value × (d − top))`` (paper: ``d = 1000``, 50 eigenvalues
1.5, the rest 0.3) and two task differences ``v = θ_T − θ_S`` of equal norm: "Top Eigen
Align" (``P_{≤m}v = 0``) and "Bottom Eigen Align" (``P_{>m}v = 0``). Each repeat draws both
``v`` uniformly on the sphere of their subspaces and one Gaussian ``X`` with ``d`` rows shared
by both curves; the risks ``R(γ) = ‖Σ^{1/2}P_⊥v‖²`` (eq. (2)) at every ``n = 1..d`` come from
that draw (:func:`~ntsim.theory.linear_teachers.risk_curve_nested`). Optionally the
constant-free Thm 4.2 bound (eq. (3) with ``g = ĝ`` of the draw, ``m = top``) on a geometric
grid of ``n``, and the ridgeless deterministic equivalent with its predicted crossing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._config import Validated, param
from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import gaussian_inputs, sweep_keys, two_level_spectrum
from ntsim.theory.linear_teachers import _alignment, _bounds

__all__ = [
    "CovarianceAlignmentRun",
    "CovarianceAlignmentSetting",
    "simulate_covariance_alignment",
]


@dataclass(frozen=True)
class CovarianceAlignmentSetting(Validated):
    """Figure 1 (Sec 4.2). ``norm`` and ``repeats`` are unspecified in the paper.

    Attributes:
      d, top, top_value, bottom_value: the covariance (paper: 1000, 50, 1.5, 0.3).
      norm: ``‖θ_T − θ_S‖``, the same for both curves (risk scales as ``norm²``).
      repeats: draws of ``(X, v)``.
      chunk_size: repeats vmapped at once (bounds memory).
      bound_points: sample sizes (geometric grid) where the Thm 4.2 bound is computed;
        ``0``: no bound.
    """

    d: int = param(1000, "input dimension", low=2)
    top: int = param(50, "eigenvalues in the top block", low=1, allowed="1 ≤ top < d")
    top_value: float = param(1.5, "top eigenvalue", low=0, open="low",
                             allowed="> bottom_value")  # fmt: skip
    bottom_value: float = param(0.3, "bottom eigenvalue", low=0, open="low")
    norm: float = param(1.0, "‖θ_T − θ_S‖", low=0, open="low")
    repeats: int = param(20, "draws of (X, v)", low=2)
    chunk_size: int = param(4, "repeats vmapped at once", low=1)
    bound_points: int = param(40, "sizes where the Thm 4.2 bound is computed (0: none)", low=0)

    def check(self):
        if self.top >= self.d:
            raise ValueError(
                f"CovarianceAlignmentSetting.top must be < d = {self.d}, got {self.top}."
            )
        if not self.top_value > self.bottom_value:
            raise ValueError(
                "CovarianceAlignmentSetting.top_value must exceed bottom_value = "
                f"{self.bottom_value}, got {self.top_value}."
            )

    @property
    def bound_sizes(self) -> tuple[int, ...]:
        if not self.bound_points:
            return ()
        grid = np.unique(np.geomspace(1, self.d - 1, self.bound_points).round())
        return tuple(int(n) for n in grid)


class CovarianceAlignmentRun(NamedTuple):
    """Figure 1 risks; index 0 of the alignment axis is Top Eigen Align, 1 Bottom.

    Attributes:
      risks: ``R(γ)`` at ``n = 1..d``, ``(repeats, 2, d)``.
      v_squared: ``v²`` per coordinate, ``(repeats, 2, d)``.
      bound: Thm 4.2 bound at ``bound_sizes``, ``(repeats, 2, len(bound_sizes))`` (empty
        last axis when ``bound_points = 0``).
      theory: deterministic equivalent of the mean ``v²`` at ``n = 1..d``, ``(2, d)``.
      crossing: its predicted crossing ``n_×``.
      spectrum: the eigenvalues of ``Σ`` (diagonal), ``(d,)``.
    """

    risks: Array
    v_squared: Array
    bound: Array
    theory: Array
    crossing: Array
    spectrum: Array


def simulate_covariance_alignment(
    key: PRNGKey, setting: CovarianceAlignmentSetting, *, progress: bool = False
) -> CovarianceAlignmentRun:
    """Figure 1 (module doc) over ``jax.random.split(key, repeats)``; call in float64 (the
    nested-prefix risks cancel to ~0 as ``n → d``).

    Examples:
      >>> import jax
      >>> s = CovarianceAlignmentSetting(d=20, top=4, repeats=2, bound_points=0)
      >>> with jax.enable_x64(True):
      ...     run = simulate_covariance_alignment(jax.random.PRNGKey(0), s)
      >>> run.risks.shape, run.bound.shape
      ((2, 2, 20), (2, 2, 0))
    """
    check_setting_type("simulate_covariance_alignment", setting, CovarianceAlignmentSetting)
    check_key("simulate_covariance_alignment", key)
    s = setting
    spectrum = two_level_spectrum(s.d, s.top, s.top_value, s.bottom_value)
    grid = s.bound_sizes

    def one_repeat(k):
        k_v, k_x = jax.random.split(k)
        dirs = jnp.stack(_alignment.alignment_directions(k_v, spectrum, s.top, norm=s.norm))
        risks = _alignment.risk_curve_nested(k_x, spectrum, dirs, s.d)
        if grid:  # the same draw again (same key), for ĝ on the bound grid
            x = gaussian_inputs(k_x, s.d, spectrum)
            bound = _bounds.bound_thm4_2_prefixes(x, spectrum, s.top, dirs, grid)
        else:
            bound = jnp.zeros((2, 0), risks.dtype)
        return {"risks": risks, "v_squared": dirs**2, "bound": bound}

    out = sweep_keys(one_repeat, key, s.repeats, chunk_size=s.chunk_size, progress=progress,
                     description="fig1 repeats")  # fmt: skip
    n = jnp.arange(1, s.d + 1)
    v_squared = out["v_squared"].mean(axis=0)
    theory = jax.vmap(lambda v2: _alignment.deterministic_equivalent_risk(spectrum, v2, n))(
        v_squared
    )
    crossing = _alignment.deterministic_equivalent_crossing(s.top_value, s.bottom_value, s.d,
                                                            s.top)  # fmt: skip
    return CovarianceAlignmentRun(
        out["risks"], out["v_squared"], out["bound"], theory, crossing, spectrum
    )
