r"""The first-order Sobolev benchmark of the stopping rule (Raskutti et al. 2014, Sec 4, Fig. 3).

Sun & Raskutti 2026 (Sec 6.2) cite Raskutti et al. 2014's simulation for "the theoretical
rule beats hold-out" without reproducing itfixes the setting: inputs
``x_i ~ U[0, 1]``, kernel ``𝕂(x, x') = 1 + min{x, x'}``, target ``f*(x) = |x − 1/2| − 1/4``,
Gaussian noise ``σ = 0.5``, ``f_0 = 0``, constant step ``α = min{1, 1/λ̂_max}``. The kernel's
eigenvalues decay like ``k^{−2}`` (``β = 1``), so the minimax rate is ``N^{−2/3}``.

RKHS norm: ``𝕂 = 1 + min`` is the reproducing kernel of
``H = {f : f(x) = f(0) + ∫_0^x f'}`` with ``⟨f, g⟩_H = f(0)g(0) + ∫_0^1 f'g'`` (check:
``⟨1 + min(·, y), g⟩_H = g(0) + ∫_0^y g' = g(y)``). So
``‖f*‖²_H = (1/4)² + ∫_0^1 1 = 17/16`` (:data:`SOBOLEV_TARGET_RKHS_NORM`), just outside the
unit ball; the guarantee uses ``C_H = ‖f*‖_H``.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._checks import require
from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_key, check_positive, check_positive_int, check_setting_type
from ntsim.core import stopping_time_constant_step, sweep_keys
from ntsim.theory.early_stopping._kernel_gd import gd_shrinkage
from ntsim.theory.early_stopping._ridge import krr_shrinkage
from ntsim.theory.early_stopping._stopping import (
    CORRECTED_C_H_EXPONENT,
    empirical_critical_radius,
    guarantee_bound,
    holdout_early_stopping,
)

__all__ = [
    "SobolevSweep",
    "SobolevSweepSetting",
    "simulate_sobolev_sweep",
    "SOBOLEV_NOISE_STD",
    "SOBOLEV_TARGET_RKHS_NORM",
    "SobolevErrors",
    "sobolev_benchmark",
    "sobolev_kernel",
    "sobolev_sample",
    "sobolev_target",
]

#: Noise level of the benchmark (Raskutti et al. 2014, Sec 4).
SOBOLEV_NOISE_STD = 0.5
#: ``‖f*‖_H = (17/16)^{1/2}`` for ``f*(x) = |x − 1/2| − 1/4`` and ``𝕂 = 1 + min`` (module doc).
SOBOLEV_TARGET_RKHS_NORM = float(np.sqrt(17 / 16))


def sobolev_kernel(x1: ArrayLike, x2: ArrayLike | None = None) -> Array:
    r"""``𝕂(x, x') = 1 + min{x, x'}`` on ``[0, 1]``, ``(N1, N2)`` for 1-D inputs.

    Examples:
      >>> import jax.numpy as jnp
      >>> sobolev_kernel(jnp.array([0.25, 1.0])).tolist()
      [[1.25, 1.25], [1.25, 2.0]]
    """
    a = jnp.asarray(x1)
    b = a if x2 is None else jnp.asarray(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"sobolev_kernel: inputs must be 1-D, got {a.shape} and {b.shape}.")
    same = x2 is None
    a = _in_unit_interval("x1", a)  # off [0, 1] the kernel is not PSD
    b = a if same else _in_unit_interval("x2", b)
    return 1 + jnp.minimum(a[:, None], b[None, :])


def _in_unit_interval(name: str, points: Array) -> Array:
    if not points.size:
        return points
    lo, hi = jnp.min(points), jnp.max(points)
    return require(
        points,
        ~(lo >= 0) | ~(hi <= 1),
        f"sobolev_kernel: {name} must lie in [0, 1] (the kernel's domain), got values in "
        "[{}, {}].",
        lo,
        hi,
    )


def sobolev_target(x: ArrayLike) -> Array:
    """``f*(x) = |x − 1/2| − 1/4`` (Raskutti et al. 2014, Sec 4).

    Examples:
      >>> import jax.numpy as jnp
      >>> sobolev_target(jnp.array([0.0, 0.5, 1.0])).tolist()
      [0.25, -0.25, 0.25]
    """
    return jnp.abs(jnp.asarray(x) - 0.5) - 0.25


def sobolev_sample(
    key: PRNGKey, num_samples: int, noise_std: ArrayLike = SOBOLEV_NOISE_STD
) -> tuple[Array, Array]:
    """``x_i ~ U[0, 1]`` and ``y_i = f*(x_i) + σ w_i``, ``w_i ~ N(0, 1)``.

    Examples:
      >>> import jax
      >>> x, y = sobolev_sample(jax.random.PRNGKey(0), 5)
      >>> x.shape, y.shape
      ((5,), (5,))
    """
    num_samples = check_positive_int("sobolev_sample", "num_samples", num_samples)
    check_positive("sobolev_sample", "noise_std", noise_std)
    k_x, k_w = jax.random.split(key)
    x = jax.random.uniform(k_x, (num_samples,))
    return x, sobolev_target(x) + noise_std * jax.random.normal(k_w, (num_samples,))


class SobolevErrors(NamedTuple):
    """One benchmark draw: ``‖f̂ − f*‖²_N`` on the ``N`` design points for each method.

    Attributes:
      stopping_rule: GD stopped at ``T̂`` (the data-dependent rule).
      oracle: GD at the best step in ``0..max_steps`` (uses ``f*``; not computable).
      holdout: GD on the training split stopped by validation loss with patience.
      ridge: kernel ridge regression with ``λ = 1/η_T̂`` (Sec 6.2, corrected).
      guarantee: ``12 C_H² ϱ̂²``.
      critical_radius: ``ϱ̂_N``.
      stopping_time: ``T̂``.
      oracle_step: the oracle's step.
      holdout_step: the hold-out rule's kept step.
      path_end: GD at ``max_steps`` (the late end of the path; interpolation needs ``~N²``
        steps since ``λ̂_N ≍ N^{−2}``).
      noise_z: ``⟨y − f*(x), f*(x)⟩/(σ‖f*(x)‖)``, the realised noise along ``f*`` on the
        design, standardised: exactly ``N(0, 1)`` given ``x`` when ``y = f*(x) + w`` with
        ``w ~ N(0, σ²I)`` (the model of Raskutti et al. 2014, Thm 1), so the claims can check
        on the draw that the data are generated by the ``f*`` the errors are scored against.
      target_rkhs_norm_sq: ``f*(x)ᵀ 𝕂(x, x)⁻¹ f*(x)``, the squared ``H``-norm of the
        minimum-norm interpolant of ``f*`` on the design in the RKHS of the kernel the run
        uses: at most ``‖f*‖²_H``, so at most ``C_H² = 17/16`` when ``C_H`` is ``f*``'s norm in
        that RKHS (the hypothesis ``‖f*‖_H ≤ C_H`` of Raskutti et al. 2014, Thm 1).
    """

    stopping_rule: Array
    oracle: Array
    holdout: Array
    ridge: Array
    guarantee: Array
    critical_radius: Array
    stopping_time: Array
    oracle_step: Array
    holdout_step: Array
    path_end: Array
    noise_z: Array
    target_rkhs_norm_sq: Array


def sobolev_benchmark(
    key: PRNGKey,
    num_samples: int,
    *,
    noise_std: ArrayLike = SOBOLEV_NOISE_STD,
    max_steps: int = 4000,
    holdout_fraction: float | None = 0.2,
    patience: int = 5,
    eval_every: int = 10,
    c_h_exponent: float = CORRECTED_C_H_EXPONENT,
) -> SobolevErrors:
    r"""One draw of the Sobolev benchmark: error at ``T̂`` vs oracle vs hold-out vs ridge.

    GD from ``f_0 = 0`` on ``K = 𝕂/N`` with ``α = min{1, 1/λ̂_max}``; ``ϱ̂`` from eq. (11)
    with ``σ = noise_std`` and ``C_H = ‖f*‖_H``; ``T̂ = ⌊1/(αϱ̂²)⌋``. Errors along the path
    use the eigenbasis (``‖f_τ − f*‖²_N = (1/N)‖s_τ ⊙ Qᵀy − Qᵀf*‖²``). Hold-out trains on the
    first ``(1 − holdout_fraction)N`` points (inputs are i.i.d., so a prefix is a random
    split) and is scored on all ``N`` design points like the other methods.
    ``jit``/``vmap``-compatible over ``key`` and ``noise_std``.

    Args:
      key: PRNG key of the draw.
      num_samples: ``N`` (static).
      noise_std: ``σ``.
      max_steps: path length for the oracle and hold-out (static; keep ``≥ 3T̂``).
      holdout_fraction: validation share in ``(0, 1)``; ``None`` skips hold-out (its
        fields are then NaN / −1), which saves an ``eigh`` per draw.
      patience: hold-out patience, in evaluations.
      eval_every: steps between validation evaluations.
      c_h_exponent: exponent of ``C_H`` in eq. (11) (corrected 1 by default).

    Returns:
      :class:`SobolevErrors`.
    """
    where = "sobolev_benchmark"
    n = check_positive_int(where, "num_samples", num_samples)
    if holdout_fraction is not None:
        if not 0 < holdout_fraction < 1:
            raise ValueError(
                f"{where}: holdout_fraction must lie in (0, 1) or be None, got {holdout_fraction}."
            )
        n_val = max(1, round(holdout_fraction * n))
        if n - n_val < 2:
            raise ValueError(f"{where}: num_samples = {n} leaves fewer than 2 training points.")
    x, y = sobolev_sample(key, n, noise_std)
    target = sobolev_target(x)
    gram = sobolev_kernel(x)
    lam, q = jnp.linalg.eigh(gram / n)
    lam = jnp.maximum(lam, 0)
    step = jnp.minimum(1.0, 1 / lam[-1])
    c_h = SOBOLEV_TARGET_RKHS_NORM
    radius = empirical_critical_radius(lam, noise_std, c_h, c_h_exponent=c_h_exponent)
    t_hat = stopping_time_constant_step(radius, step)
    coeff_y, coeff_f = q.T @ y, q.T @ target

    def error(shrink):  # (..., N) shrinkage -> ‖f − f*‖²_N
        return jnp.mean((shrink * coeff_y - coeff_f) ** 2, axis=-1)

    path = error(gd_shrinkage(lam, step, jnp.arange(max_steps + 1)))
    eta_hat = step * jnp.maximum(t_hat, 1)
    if holdout_fraction is None:
        holdout_error, holdout_step = jnp.full((), jnp.nan, lam.dtype), jnp.array(-1)
    else:
        n_tr = n - n_val
        held = holdout_early_stopping(
            gram[:n_tr, :n_tr],
            gram[n_tr:, :n_tr],
            y[:n_tr],
            y[n_tr:],
            max_steps=max_steps,
            patience=patience,
            eval_every=eval_every,
            kernel_eval_train=gram[:, :n_tr],
        )
        holdout_error, holdout_step = jnp.mean((held.predictions - target) ** 2), held.step
    return SobolevErrors(
        stopping_rule=error(gd_shrinkage(lam, step, t_hat)),
        oracle=jnp.min(path),
        holdout=holdout_error,
        ridge=error(krr_shrinkage(lam, 1 / eta_hat)),
        guarantee=guarantee_bound(radius, c_h),
        critical_radius=radius,
        stopping_time=t_hat,
        oracle_step=jnp.argmin(path),
        holdout_step=holdout_step,
        path_end=path[-1],
        noise_z=(y - target) @ target / (noise_std * jnp.linalg.norm(target)),
        # 𝕂⁻¹ = Q diag(1/(Nλ)) Qᵀ: 𝕂 = 1 + min is positive definite on distinct inputs
        target_rkhs_norm_sq=jnp.sum(coeff_f**2 / lam) / n,
    )


@dataclasses.dataclass(frozen=True)
class SobolevSweepSetting:
    """The Sobolev benchmark over sample sizes × draws (Raskutti et al. 2014, Sec 4, Fig. 3).

    The benchmark itself is fixed (:func:`sobolev_benchmark`); the sizes, draws and hold-out
    details are ours (the papers give no hold-out protocol).

    Attributes:
      sizes: sample sizes ``N`` (each one compilation).
      draws: independent draws per ``N``.
      noise_std: ``σ``.
      max_steps: path length for the oracle and hold-out (``≥ 3×`` the oracle step).
      holdout_fraction: validation share, or ``None`` to skip hold-out (cheaper).
      patience: hold-out patience, in evaluations.
      eval_every: steps between validation evaluations.
      chunk_size: draws vmapped at once (bounds memory).
    """

    sizes: tuple[int, ...] = (100, 200, 400, 800, 1600)
    draws: int = 20
    noise_std: float = SOBOLEV_NOISE_STD
    max_steps: int = 3000
    holdout_fraction: float | None = 0.2
    patience: int = 5
    eval_every: int = 10
    chunk_size: int = 10

    def __post_init__(self):
        where = "SobolevSweepSetting"
        if not self.sizes or any(not isinstance(n, int) or n < 10 for n in self.sizes):
            raise ValueError(f"{where}.sizes must be non-empty ints >= 10, got {self.sizes}.")
        for name in ("draws", "max_steps", "patience", "eval_every", "chunk_size"):
            check_positive_int(where, name, getattr(self, name))
        if not self.noise_std > 0:
            raise ValueError(f"{where}.noise_std must be positive, got {self.noise_std}.")
        if self.holdout_fraction is not None and not 0 < self.holdout_fraction < 1:
            raise ValueError(
                f"{where}.holdout_fraction must lie in (0, 1) or be None, got "
                f"{self.holdout_fraction}."
            )


class SobolevSweep(NamedTuple):
    """:class:`SobolevErrors` per size and draw: every field ``(A, draws)``; ``sizes`` ``(A,)``."""

    sizes: Array
    stopping_rule: Array
    oracle: Array
    holdout: Array
    ridge: Array
    guarantee: Array
    critical_radius: Array
    stopping_time: Array
    oracle_step: Array
    holdout_step: Array
    path_end: Array
    noise_z: Array
    target_rkhs_norm_sq: Array


def simulate_sobolev_sweep(key: PRNGKey, setting: SobolevSweepSetting) -> SobolevSweep:
    """:func:`sobolev_benchmark` for ``setting.draws`` draws at every ``N`` of ``setting.sizes``.

    The draws at the ``i``-th size use the keys ``split(fold_in(key, i), draws)``; each size
    is one compiled program mapped over the draws in chunks (``ntsim.core.sweep_keys``).
    Run it in float64 (the Sobolev spectrum spans ``N²``).
    """
    check_setting_type("simulate_sobolev_sweep", setting, SobolevSweepSetting)
    check_key("simulate_sobolev_sweep", key)
    per_size = []
    for index, n in enumerate(setting.sizes):  # static N: one compilation each

        def draw(k, n=n):
            return sobolev_benchmark(
                k,
                n,
                noise_std=setting.noise_std,
                max_steps=setting.max_steps,
                holdout_fraction=setting.holdout_fraction,
                patience=setting.patience,
                eval_every=setting.eval_every,
            )

        per_size.append(
            sweep_keys(
                draw, jax.random.fold_in(key, index), setting.draws, chunk_size=setting.chunk_size
            )
        )
    stacked = jax.tree.map(lambda *values: jnp.stack(values), *per_size)
    return SobolevSweep(jnp.asarray(setting.sizes), *stacked)
