r"""The data-dependent stopping rule, its guarantee, ``T̂_op`` and hold-out early stopping.

Sun & Raskutti 2026, Sec 3.5, eq. (11): the critical radius ``ϱ̂_N`` is the smallest ``ϱ > 0``
with ``R̂_K(ϱ) ≤ ϱ² C_H^p/(2eσ)``, ``C_H = ‖f_PT − f_tgt‖_H``. The paper prints ``p = 2``.
**Erratum**: rescaling Raskutti et al. 2014's unit-ball rule
(``‖f*‖_H ≤ 1``: ``R̂_K(ϱ) ≤ ϱ²/(2eσ)``) to a ball of radius ``C_H`` — divide ``f`` and ``Y``
by ``C_H``, which turns ``σ`` into ``σ/C_H`` and leaves GD's stopping time unchanged — gives
``p = 1``. Only ``p = 1`` makes the rule invariant under this rescaling (checked in
``ntsim.claims.early_stopping``). Every function takes ``c_h_exponent`` (default
:data:`CORRECTED_C_H_EXPONENT`); ``*_printed`` / ``*_corrected`` fix it.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike
from ntsim._validation import (
    check_ndim,
    check_positive,
    check_positive_int,
    check_setting_type,
)
from ntsim.core import critical_radius, log_log_slope, stopping_time
from ntsim.theory.early_stopping._kernel_gd import pretrained_kernel_gd

__all__ = [
    "PowerLawRateSetting",
    "PowerLawRates",
    "power_law_critical_radius_squared",
    "simulate_power_law_rates",
    "CORRECTED_C_H_EXPONENT",
    "GUARANTEE_FACTOR",
    "PRINTED_C_H_EXPONENT",
    "HoldoutResult",
    "critical_radius_coefficient",
    "empirical_critical_radius",
    "empirical_critical_radius_corrected",
    "empirical_critical_radius_printed",
    "guarantee_bound",
    "holdout_early_stopping",
    "optimal_stopping_time",
    "optimal_stopping_time_printed",
    "patience_stopping",
    "raskutti_stopping_time",
]

#: Exponent of ``C_H`` in eq. (11) as printed (Sun & Raskutti 2026, eq. (11)).
PRINTED_C_H_EXPONENT = 2
#: Exponent that rescaling Raskutti et al. 2014's unit-ball rule gives.
CORRECTED_C_H_EXPONENT = 1
#: ``‖f_T̂ − f*‖²_N ≤ 12 ϱ̂²`` w.h.p. for ``‖f*‖_H ≤ 1`` (Raskutti et al. 2014, Thm 1).
GUARANTEE_FACTOR = 12.0


def critical_radius_coefficient(
    noise_std: ArrayLike,
    rkhs_distance: ArrayLike = 1.0,
    *,
    c_h_exponent: float = CORRECTED_C_H_EXPONENT,
) -> Array:
    r"""``c = C_H^p/(2eσ)``: the right-hand side of eq. (11) is ``c·ϱ²``.

    Args:
      noise_std: ``σ > 0`` (sub-Gaussian parameter, Assumption 4.3).
      rkhs_distance: ``C_H = ‖f_PT − f_tgt‖_H > 0``.
      c_h_exponent: ``p``; 2 as printed, 1 corrected (module doc).

    Examples:
      >>> round(float(critical_radius_coefficient(1 / (2 * 2.718281828459045), 3.0)), 6)
      3.0
    """
    where = "critical_radius_coefficient"
    check_positive(where, "noise_std", noise_std)
    check_positive(where, "rkhs_distance", rkhs_distance)
    sigma = jnp.asarray(noise_std)
    sigma = sigma.astype(jnp.result_type(sigma, float))
    return jnp.asarray(rkhs_distance, sigma.dtype) ** c_h_exponent / (2 * np.e * sigma)


def empirical_critical_radius(
    eigenvalues: ArrayLike,
    noise_std: ArrayLike,
    rkhs_distance: ArrayLike = 1.0,
    *,
    c_h_exponent: float = CORRECTED_C_H_EXPONENT,
) -> Array:
    r"""``ϱ̂_N``: smallest ``ϱ > 0`` with ``R̂_K(ϱ) ≤ ϱ² C_H^p/(2eσ)`` (eq. (11)).

    Bisection of ``ntsim.core`` ``critical_radius`` with :func:`critical_radius_coefficient`.

    Args:
      eigenvalues: ``λ̂_i`` of ``K = 𝕂/N``, ``(N,)``.
      noise_std: ``σ``.
      rkhs_distance: ``C_H``.
      c_h_exponent: ``p`` (default corrected, 1).

    Examples:
      >>> import jax.numpy as jnp
      >>> lam = jnp.array([0.5, 0.2, 0.1, 0.05])
      >>> # σ → σ/C_H with C_H = 1 is the same problem as (σ, C_H) under p = 1
      >>> a = empirical_critical_radius(lam, 0.5, 2.0)
      >>> b = empirical_critical_radius(lam, 0.25)
      >>> bool(jnp.isclose(a, b))
      True
    """
    coefficient = critical_radius_coefficient(noise_std, rkhs_distance, c_h_exponent=c_h_exponent)
    return critical_radius(eigenvalues, coefficient)


def empirical_critical_radius_printed(
    eigenvalues: ArrayLike, noise_std: ArrayLike, rkhs_distance: ArrayLike = 1.0
) -> Array:
    """Eq. (11) as printed (``C_H²``); not invariant under rescaling ``f`` (module doc)."""
    return empirical_critical_radius(
        eigenvalues, noise_std, rkhs_distance, c_h_exponent=PRINTED_C_H_EXPONENT
    )


def empirical_critical_radius_corrected(
    eigenvalues: ArrayLike, noise_std: ArrayLike, rkhs_distance: ArrayLike = 1.0
) -> Array:
    """Eq. (11) with ``C_H`` to the first power (Raskutti et al.'s rule on a ``C_H``-ball)."""
    return empirical_critical_radius(
        eigenvalues, noise_std, rkhs_distance, c_h_exponent=CORRECTED_C_H_EXPONENT
    )


def raskutti_stopping_time(
    eigenvalues: ArrayLike,
    step_sizes: ArrayLike,
    noise_std: ArrayLike,
    rkhs_distance: ArrayLike = 1.0,
    *,
    c_h_exponent: float = CORRECTED_C_H_EXPONENT,
) -> Array:
    r"""``T̂ = argmin{t : R̂_K(η_t^{−1/2}) > C_H^p/(2eσ η_t)} − 1`` (the paper's ``T̂_max``).

    Raskutti et al. 2014, eq. (7) on a ``C_H``-ball; Sun & Raskutti 2026, Sec 3.5 / B.1.
    Equals ``⌊1/(αϱ̂²)⌋`` for a constant step ``α`` (``ntsim.core``
    ``stopping_time_constant_step``). A better initialisation (smaller ``C_H``) gives a
    smaller coefficient, a larger ``ϱ̂`` and an earlier stop (Sec 6.1).

    Examples:
      >>> import jax.numpy as jnp
      >>> lam = jnp.array([0.5, 0.2, 0.1, 0.05])
      >>> [int(raskutti_stopping_time(lam, jnp.full(500, 0.5), 0.1, c)) for c in (0.5, 1.0, 2.0)]
      [3, 9, 29]
    """
    coefficient = critical_radius_coefficient(noise_std, rkhs_distance, c_h_exponent=c_h_exponent)
    return stopping_time(eigenvalues, step_sizes, coefficient)


def guarantee_bound(radius: ArrayLike, rkhs_distance: ArrayLike = 1.0) -> Array:
    r"""``12 C_H² ϱ̂²``: the high-probability bound on ``‖f_T̂ − f*‖²_N``.

    Raskutti et al. 2014, Thm 1 (``‖f* − f_0‖_H ≤ 1``: ``‖f_T̂ − f*‖²_N ≤ 12ϱ̂²`` with
    probability ``≥ 1 − c_1 exp(−c_2 N ϱ̂²)``), rescaled to ``‖f* − f_0‖_H ≤ C_H``: the
    error scales as ``C_H²`` and ``ϱ̂`` is the corrected-exponent radius for ``(σ, C_H)``.

    Examples:
      >>> float(guarantee_bound(0.5, 2.0))
      12.0
    """
    rho = jnp.asarray(radius)
    rho = rho.astype(jnp.result_type(rho, float))
    return GUARANTEE_FACTOR * jnp.asarray(rkhs_distance, rho.dtype) ** 2 * rho**2


def _stopping_objective(step_sizes, constant, drift_bound) -> tuple[Array, Array]:
    steps = jnp.asarray(step_sizes)
    steps = steps.astype(jnp.result_type(steps, float))
    check_ndim("optimal_stopping_time", "step_sizes", steps, 1)
    drift = jnp.asarray(drift_bound, steps.dtype)
    if drift.shape != steps.shape:
        raise ValueError(
            "optimal_stopping_time: drift_bound must give g(τ) for τ = 1..T, shape "
            f"{steps.shape} like step_sizes, got {drift.shape}."
        )
    check_positive("optimal_stopping_time", "step_sizes", steps)
    check_positive("optimal_stopping_time", "constant", constant)
    eta = jnp.cumsum(steps)
    return jnp.asarray(constant, steps.dtype) / eta + drift, jnp.arange(1, steps.shape[0] + 1)


def optimal_stopping_time(
    step_sizes: ArrayLike, constant: ArrayLike, drift_bound: ArrayLike, max_time: ArrayLike
) -> Array:
    r"""``T̂_op = argmin_{1 ≤ τ ≤ T̂_max} {C/η_τ + g(τ)}`` (Sun & Raskutti 2026, eq. (36)).

    ``C/η_τ`` bounds ``B²_τ + V_τ`` (eq. (35)); ``g`` is a supplied non-decreasing bound on the
    kernel-drift term ``D²_τ`` (eq. (34)); ``T̂_max`` is the stopping time of
    :func:`raskutti_stopping_time`. Ties go to the earliest ``τ``. With ``g ≡ 0`` the
    minimiser is ``T̂_max`` itself. (Sec 6.1, eq. (26), prints "maximizing": see
    :func:`optimal_stopping_time_printed`.)

    Args:
      step_sizes: ``α_0, …, α_{T−1} > 0``, ``(T,)``; ``η_τ = Σ_{s<τ} α_s``.
      constant: ``C > 0``.
      drift_bound: ``g(τ)`` for ``τ = 1..T``, ``(T,)``.
      max_time: ``T̂_max`` (``≤ T``; may be traced). ``η_0 = 0`` makes ``C/η_0`` infinite,
        so ``τ ≥ 1``: ``T̂_max ≤ 1`` gives ``T̂_op = 1``.

    Returns:
      ``T̂_op`` as an int scalar array.

    Examples:
      >>> import jax.numpy as jnp
      >>> tau = jnp.arange(1.0, 101.0)
      >>> int(optimal_stopping_time(jnp.ones(100), 4.0, 0.01 * tau, 50))  # argmin 4/τ + τ/100
      20
    """
    objective, tau = _stopping_objective(step_sizes, constant, drift_bound)
    return tau[jnp.argmin(jnp.where(tau <= max_time, objective, jnp.inf))]


def optimal_stopping_time_printed(
    step_sizes: ArrayLike, constant: ArrayLike, drift_bound: ArrayLike, max_time: ArrayLike
) -> Array:
    r"""Eq. (26) as printed: ``argmax_{τ ≤ T̂_max} {C/(ετ) + g(τ)}``.

    **Erratum** (typo): the definition (36) is an argmin. The argmax is degenerate:
    ``C/η_τ`` is largest at ``τ = 1``, so with a slowly growing ``g`` the printed rule stops
    after one step whatever the data.

    Examples:
      >>> import jax.numpy as jnp
      >>> tau = jnp.arange(1.0, 101.0)
      >>> int(optimal_stopping_time_printed(jnp.ones(100), 4.0, 0.01 * tau, 50))
      1
    """
    objective, tau = _stopping_objective(step_sizes, constant, drift_bound)
    return tau[jnp.argmax(jnp.where(tau <= max_time, objective, -jnp.inf))]


def patience_stopping(validation_losses: ArrayLike, patience: int) -> tuple[Array, Array]:
    r"""Hold-out early stopping with patience, as practitioners run it (Sec 6.2, Sec 7).

    Walk through the validation losses ``L_0, L_1, …``; a step *improves* if its loss is
    strictly below the best so far. Training stops at the first step after ``patience``
    consecutive non-improving steps, and the best checkpoint seen is kept. If that never
    happens, the best step of the whole horizon is kept. (The paper does not state the
    patience: "no improvement over several iterations".)

    Args:
      validation_losses: ``(T + 1,)``, losses at steps ``0..T``.
      patience: ``≥ 1`` (static).

    Returns:
      ``(kept_step, stopped_at)`` as int scalar arrays.

    Examples:
      >>> import jax.numpy as jnp
      >>> losses = jnp.array([5.0, 3.0, 2.0, 2.5, 2.4, 2.6, 1.0])
      >>> [int(v) for v in patience_stopping(losses, 3)]  # stops at 5; 1.0 never seen
      [2, 5]
    """
    patience = check_positive_int("patience_stopping", "patience", patience)
    losses = jnp.asarray(validation_losses)
    check_ndim("patience_stopping", "validation_losses", losses, 1)
    horizon = losses.shape[0] - 1

    def step(carry, inputs):
        best, best_step, wait, stopped, stop_step = carry
        t, loss = inputs
        improves = (loss < best) & ~stopped
        best = jnp.where(improves, loss, best)
        best_step = jnp.where(improves, t, best_step)
        wait = jnp.where(improves, 0, wait + (~stopped).astype(wait.dtype))
        stop_now = ~stopped & (wait >= patience)
        stop_step = jnp.where(stop_now, t, stop_step)
        return (best, best_step, wait, stopped | stop_now, stop_step), None

    init = (losses[0], jnp.array(0), jnp.array(0), jnp.array(False), jnp.array(horizon))
    steps = jnp.arange(1, horizon + 1)
    (_, best_step, _, _, stop_step), _ = jax.lax.scan(step, init, (steps, losses[1:]))
    return best_step, stop_step


class HoldoutResult(NamedTuple):
    """Outcome of :func:`holdout_early_stopping`.

    Attributes:
      step: the kept step (best validation loss before patience ran out).
      stopped_at: the step at which training stopped.
      validation_losses: mean squared validation error at the evaluated steps.
      evaluated_steps: the steps ``0, e, 2e, …`` at which it was evaluated.
      predictions: the kept model on ``kernel_eval_train``'s inputs (``None`` without).
    """

    step: Array
    stopped_at: Array
    validation_losses: Array
    evaluated_steps: Array
    predictions: Array | None


def holdout_early_stopping(
    kernel_train: ArrayLike,
    kernel_val_train: ArrayLike,
    y_train: ArrayLike,
    y_val: ArrayLike,
    *,
    step_size: ArrayLike | None = None,
    max_steps: int,
    patience: int,
    eval_every: int = 1,
    f_pt_train: ArrayLike | None = None,
    f_pt_val: ArrayLike | None = None,
    kernel_eval_train: ArrayLike | None = None,
    f_pt_eval: ArrayLike | None = None,
) -> HoldoutResult:
    r"""Kernel GD on a training split, stopped by the validation loss (Sec 6.2's recommendation).

    GD runs on the training split alone (``K = 𝕂(X_tr, X_tr)/N_tr``,
    :func:`pretrained_kernel_gd`); the validation MSE is evaluated every ``eval_every``
    steps (an "epoch") and :func:`patience_stopping` picks the kept step (patience counts
    evaluations). The validation points do not enter the
    fit; they only choose when to stop.

    Args:
      kernel_train: ``𝕂(X_tr, X_tr)``, ``(N_tr, N_tr)``, unnormalised.
      kernel_val_train: ``𝕂(X_val, X_tr)``, ``(N_val, N_tr)``.
      y_train: training targets, ``(N_tr,)``.
      y_val: validation targets, ``(N_val,)``.
      step_size: ``α`` with ``α λ̂_max(𝕂_tr/N_tr) ≤ 1``; ``None``: ``min{1, 1/λ̂_max}``.
      max_steps: horizon (static).
      patience: see :func:`patience_stopping`.
      eval_every: steps between validation evaluations (static).
      f_pt_train: ``f_PT(X_tr)``, ``(N_tr,)`` (``None``: 0).
      f_pt_val: ``f_PT(X_val)``, ``(N_val,)`` (``None``: 0).
      kernel_eval_train: ``𝕂(X_eval, X_tr)``, ``(P, N_tr)``: also return the kept model's
        predictions on these inputs (e.g. all design points).
      f_pt_eval: ``f_PT(X_eval)`` (``None``: 0).

    Returns:
      :class:`HoldoutResult`: the kept and stopping steps, the validation curve and, with
      ``kernel_eval_train``, the kept model's predictions.

    Examples:
      >>> import jax.numpy as jnp
      >>> k = jnp.array([[2.0, 1.0], [1.0, 2.0]])
      >>> r = holdout_early_stopping(k, jnp.array([[1.5, 1.5]]), jnp.array([1.0, 1.0]),
      ...                            jnp.array([1.0]), step_size=0.5, max_steps=30, patience=3)
      >>> r.evaluated_steps.shape, bool(r.validation_losses[0] > r.validation_losses[-1])
      ((31,), True)
    """
    max_steps = check_positive_int("holdout_early_stopping", "max_steps", max_steps)
    eval_every = check_positive_int("holdout_early_stopping", "eval_every", eval_every)
    evaluated = jnp.arange(0, max_steps + 1, eval_every)
    k_val = jnp.asarray(kernel_val_train)
    n_val = k_val.shape[0]
    rows, f0_rows = k_val, f_pt_val
    if kernel_eval_train is not None:
        rows = jnp.concatenate([k_val, jnp.asarray(kernel_eval_train, k_val.dtype)])
        if f_pt_val is not None or f_pt_eval is not None:
            f0_val = jnp.zeros(n_val) if f_pt_val is None else jnp.asarray(f_pt_val)
            size = rows.shape[0] - n_val
            f0_eval = jnp.zeros(size) if f_pt_eval is None else jnp.asarray(f_pt_eval)
            f0_rows = jnp.concatenate([f0_val, f0_eval])
    predictions = pretrained_kernel_gd(
        kernel_train,
        y_train,
        f_pt_train,
        step_size=step_size,
        steps=evaluated,
        kernel_test_train=rows,
        f_pt_test=f0_rows,
    ).test
    losses = jnp.mean((predictions[:, :n_val] - jnp.asarray(y_val)) ** 2, axis=-1)
    kept, stopped = patience_stopping(losses, patience)
    kept_predictions = None if kernel_eval_train is None else predictions[kept, n_val:]
    return HoldoutResult(evaluated[kept], evaluated[stopped], losses, evaluated, kept_predictions)


@dataclasses.dataclass(frozen=True)
class PowerLawRateSetting:
    """Eq. (30) on exact power-law spectra ``λ̂_k = k^{−2β}``, ``k = 1..N`` (sizes are ours).

    Attributes:
      betas: decay exponents ``β > 1/2`` (eq. (29)).
      top: the largest ``N``; slopes are fitted over ``N ∈ [top/100, top]`` and, to see the
        convergence, over the earlier window ``[top/1000, top/10]``.
      sizes_per_window: geometrically spaced ``N`` per window.
      noise_std: ``σ``.
      rkhs_distance: ``C_H`` (``c = C_H/(2eσ)``, eq. (11) corrected).
    """

    betas: tuple[float, ...] = (0.6, 0.75, 1.0, 1.5, 2.0)
    top: int = 10**7
    sizes_per_window: int = 5
    noise_std: float = 1.0
    rkhs_distance: float = 1.0

    def __post_init__(self):
        where = "PowerLawRateSetting"
        if not self.betas or any(not b > 0.5 for b in self.betas):
            raise ValueError(f"{where}.betas must be non-empty, each > 1/2, got {self.betas}.")
        check_positive_int(where, "top", self.top)
        check_positive_int(where, "sizes_per_window", self.sizes_per_window)
        if self.top < 1000 or self.sizes_per_window < 2:
            raise ValueError(f"{where}: need top >= 1000 and sizes_per_window >= 2.")


class PowerLawRates(NamedTuple):
    """Fitted slopes of ``log ϱ̂_N²`` on ``log N`` per ``β``, ``(B,)`` each.

    Attributes:
      betas: the exponents.
      slopes: over ``N ∈ [top/100, top]``.
      slopes_early: over ``N ∈ [top/1000, top/10]``.
      theory: eq. (30)'s ``−2β/(2β+1)``.
      padding_gap: ``ϱ̂_N²`` of :func:`power_law_critical_radius_squared` (padded to ``top``
        slots) over ``ϱ̂_N²`` of :func:`empirical_critical_radius` on the ``N`` eigenvalues
        themselves, minus 1, at ``N = top/1000`` (the smallest fitted ``N``): ``0`` up to
        round-off.
    """

    betas: Array
    slopes: Array
    slopes_early: Array
    theory: Array
    padding_gap: Array


def power_law_critical_radius_squared(beta, size, top: int, coefficient) -> Array:
    """``ϱ̂_N²`` of eq. (11) for ``λ̂_k = k^{−2β}``, ``k ≤ N = size``, computed on ``top`` slots.

    The spectrum is zero-padded to ``top`` entries so that one compilation serves every
    ``N``: the padded mean is ``N/top`` times the true one, so ``R̂_padded(ϱ) =
    √(N/top)·R̂(ϱ)`` and the root of ``R̂ = c·ϱ²`` is that of ``R̂_padded = c√(N/top)·ϱ²``.
    """
    k = jnp.arange(1, top + 1.0)
    lam = jnp.where(k <= size, k ** (-2 * beta), 0.0)
    return critical_radius(lam, coefficient * jnp.sqrt(size / top)) ** 2


def simulate_power_law_rates(key, setting: PowerLawRateSetting) -> PowerLawRates:
    """Slopes of ``log ϱ̂_N²`` in ``N`` on exact power laws (eq. (30)); ``key`` is unused.

    Deterministic: the spectra are exact. Run it in float64 (``N`` up to ``10^7``). The
    padded radius is also compared with a direct bisection on the spectrum ``k^{−2β}``,
    ``k = 1..top/1000`` (``padding_gap``).
    """
    check_setting_type("simulate_power_law_rates", setting, PowerLawRateSetting)
    del key
    c = critical_radius_coefficient(setting.noise_std, setting.rkhs_distance)
    top = setting.top
    radius = jax.jit(lambda beta, size: power_law_critical_radius_squared(beta, size, top, c))
    out = {top // 10: [], top: []}
    ranks = jnp.arange(1, top // 1000 + 1.0)  # the smallest fitted N, eigenvalue by eigenvalue
    padding_gap = []
    for beta in setting.betas:
        for end in out:
            sizes = np.unique(np.geomspace(end // 100, end, setting.sizes_per_window).astype(int))
            rho2 = jnp.stack([radius(beta, float(m)) for m in sizes])
            out[end].append(log_log_slope(jnp.asarray(sizes, rho2.dtype), rho2)[0])
        direct = empirical_critical_radius(
            ranks ** (-2 * beta), setting.noise_std, setting.rkhs_distance
        )
        padding_gap.append(radius(beta, float(ranks.shape[0])) / direct**2 - 1)
    betas = jnp.asarray(setting.betas, dtype=c.dtype)
    return PowerLawRates(
        betas=betas,
        slopes=jnp.stack(out[top]),
        slopes_early=jnp.stack(out[top // 10]),
        theory=-2 * betas / (2 * betas + 1),
        padding_gap=jnp.stack(padding_gap),
    )
