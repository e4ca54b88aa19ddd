r"""Spectral tools for kernel regression: complexities, critical radii, stopping times, fits.

Everything here takes the eigenvalues ``λ̂_1, …, λ̂_N`` of a (normalised) kernel matrix and
returns numbers; nothing depends on where the kernel came from. Functions are pure,
``jit``/``vmap``-compatible (fixed iteration counts, no data-dependent shapes) and keep the
input dtype; value checks run only on concrete inputs.

* :func:`local_rademacher_complexity` — ``R̂_K(ϱ) = [(1/N) Σ_i min{λ̂_i, ϱ²}]^{1/2}``
  (Raskutti, Wainwright & Yu 2014, eq. (6); Sun & Raskutti 2026, eq. (10)).
* :func:`critical_radius` — the smallest ``ϱ > 0`` with ``R̂_K(ϱ) ≤ c·ϱ²`` by bisection on
  ``log ϱ`` (Sun & Raskutti 2026, eq. (11) with ``c = C_H/(2eσ)``).
* :func:`stopping_time` — the data-dependent stopping rule ``T̂`` of Raskutti et al. 2014,
  eq. (7), for any step schedule; :func:`stopping_time_constant_step` its closed form.
* :func:`eigen_decay_exponent` — ``β`` in ``λ_k ≈ λ_1 k^{−2β}`` by least squares on
  ``log(λ_k/λ_1)`` vs ``log k`` (Sun & Raskutti 2026, App. A.3, eqs. (31)–(32)).
* :func:`log_log_slope` — slope (and standard error) of ``log y`` on ``log x``.
* :func:`condition_number` — ``κ(K + σI)``.

Normalisation: ``λ̂_i`` are eigenvalues of the kernel matrix *as the rule uses it*; in
Sun & Raskutti 2026 that is ``K = 𝕂(X, X)/N`` (eq. (5)), so ``R̂_K`` has a single ``1/N``.

References:
  G. Raskutti, M. J. Wainwright, B. Yu, "Early stopping and non-parametric regression: an
  optimal data-dependent stopping rule", JMLR 15:335–366, 2014.
  Z. Sun, G. Raskutti, "A theoretical framework for LLM fine-tuning using early stopping
  for non-random initialization", 2026.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._checks import require_finite, require_nonnegative, require_psd_spectrum
from ntsim._types import Array, ArrayLike
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int

__all__ = [
    "condition_number",
    "critical_radius",
    "eigen_decay_exponent",
    "local_rademacher_complexity",
    "log_log_slope",
    "stopping_time",
    "stopping_time_constant_step",
]


def _eigenvalues(where: str, eigenvalues: ArrayLike) -> Array:
    """1-D float eigenvalues, checked finite and non-negative up to round-off when concrete."""
    lam = jnp.asarray(eigenvalues)
    check_ndim(where, "eigenvalues", lam, 1)
    if lam.shape[0] == 0:
        raise ValueError(f"{where}: eigenvalues must be non-empty.")
    lam = lam.astype(jnp.result_type(lam, float))
    if _is_concrete(lam):
        arr = np.asarray(lam)
        tol = np.sqrt(np.finfo(arr.dtype).eps) * max(float(np.max(np.abs(arr))), 0.0)
        if not np.all(np.isfinite(arr)) or np.min(arr) < -tol:
            raise ValueError(
                f"{where}: eigenvalues must be finite and non-negative (a PSD kernel), got "
                f"min {np.min(arr):.3g}."
            )
    return jnp.maximum(lam, 0)


def local_rademacher_complexity(eigenvalues: ArrayLike, radius: ArrayLike) -> Array:
    r"""Local empirical Rademacher complexity of a kernel class.

    .. math:: \hat{\mathcal R}_K(ϱ) = \Big[\frac1N \sum_{i=1}^N \min\{\hat λ_i, ϱ^2\}\Big]^{1/2}

    (Sun & Raskutti 2026, eq. (10); Raskutti et al. 2014, eq. (6)). It is non-decreasing
    in ``ϱ``, at most ``ϱ`` and at most ``(tr K/N)^{1/2}``, and ``R̂_K(ϱ)/ϱ²`` is
    non-increasing (strictly decreasing unless every ``λ̂_i = 0``).

    Args:
      eigenvalues: ``λ̂_i ≥ 0`` of the normalised kernel matrix, shape ``(N,)``.
      radius: ``ϱ ≥ 0``, a scalar or any array shape (evaluated elementwise).

    Returns:
      ``R̂_K(ϱ)`` with the shape of ``radius``.

    Examples:
      >>> import jax.numpy as jnp
      >>> lam = jnp.array([3.0, 1.0, 0.0, 0.0])  # radius 2: (min(3, 4) + 1)/4 = 1
      >>> local_rademacher_complexity(lam, jnp.array([0.5, 2.0])).tolist()
      [0.3535533845424652, 1.0]
    """
    lam = _eigenvalues("local_rademacher_complexity", eigenvalues)
    radius = require_nonnegative("local_rademacher_complexity", "radius", radius)
    rho = jnp.asarray(radius, lam.dtype)
    clipped = jnp.minimum(lam, rho[..., None] ** 2)
    return jnp.sqrt(jnp.mean(clipped, axis=-1))


def critical_radius(
    eigenvalues: ArrayLike, coefficient: ArrayLike, *, num_iterations: int = 100
) -> Array:
    r"""Smallest ``ϱ > 0`` with ``R̂_K(ϱ) ≤ c·ϱ²``, by bisection on ``log ϱ``.

    Sun & Raskutti 2026, eq. (11) with ``c = C_H/(2eσ)`` (corrected exponent; see
    ``ntsim.theory.early_stopping``); Raskutti et al. 2014, eq. (8) with ``c = 1/(2eσ)``.
    Since ``h(ϱ) = R̂_K(ϱ)/ϱ²`` is strictly decreasing, the solution is the unique root of
    ``h(ϱ) = c``. The bracket is exact: ``R̂_K(ϱ) ≥ ϱ/√N`` for ``ϱ² ≤ λ̂_max`` gives
    ``h ≥ c`` at ``ϱ_lo = min{1/(c√N), λ̂_max^{1/2}}``, and ``R̂_K(ϱ) ≤ min{ϱ, (tr K/N)^{1/2}}``
    gives ``h ≤ c`` at ``ϱ_hi = min{1/c, ((tr K/N)^{1/2}/c)^{1/2}}``. ``log(ϱ_hi/ϱ_lo) ≤
    log √N``, so 100 halvings reach round-off in any dtype. The upper end is returned, so
    the inequality holds at the result.

    Args:
      eigenvalues: ``λ̂_i ≥ 0``, shape ``(N,)``, not all zero.
      coefficient: ``c > 0`` (may be traced, e.g. vmapped over noise levels).
      num_iterations: bisection steps (static).

    Returns:
      ``ϱ̂`` as a scalar array.

    Raises:
      ValueError: non-positive ``coefficient`` or all-zero/negative eigenvalues (concrete).

    Examples:
      >>> import jax.numpy as jnp
      >>> rho = critical_radius(jnp.ones(4), 1.0)  # R̂ = ϱ for ϱ ≤ 1: ϱ = ϱ² at ϱ = 1
      >>> round(float(rho), 6)
      1.0
    """
    where = "critical_radius"
    lam = _eigenvalues(where, eigenvalues)
    check_positive(where, "coefficient", coefficient)
    num_iterations = check_positive_int(where, "num_iterations", num_iterations)
    if _is_concrete(lam) and float(jnp.max(lam)) == 0:
        raise ValueError(f"{where}: eigenvalues must not all be zero (R̂_K ≡ 0 has no radius).")
    c = jnp.asarray(coefficient, lam.dtype)
    n = lam.shape[0]
    lam_max, mean = jnp.max(lam), jnp.mean(lam)
    lo = jnp.log(jnp.minimum(1 / (c * np.sqrt(n)), jnp.sqrt(lam_max)))
    hi = jnp.log(jnp.minimum(1 / c, jnp.sqrt(jnp.sqrt(mean) / c)))

    def excess(log_rho):  # log h(ϱ) − log c, decreasing in log ϱ
        rho = jnp.exp(log_rho)
        return jnp.log(jnp.sqrt(jnp.mean(jnp.minimum(lam, rho**2)))) - 2 * log_rho - jnp.log(c)

    def halve(_, bracket):
        low, high = bracket
        mid = (low + high) / 2
        above = excess(mid) > 0  # h(mid) > c: the root is to the right
        return jnp.where(above, mid, low), jnp.where(above, high, mid)

    _, hi = jax.lax.fori_loop(0, num_iterations, halve, (jnp.minimum(lo, hi), hi))
    return jnp.exp(hi)


def _check_steps(where: str, step_sizes: ArrayLike, dtype) -> Array:
    steps = jnp.asarray(step_sizes, dtype)
    check_ndim(where, "step_sizes", steps, 1)
    if steps.shape[0] == 0:
        raise ValueError(f"{where}: step_sizes must be non-empty.")
    check_positive(where, "step_sizes", steps)
    return steps


def stopping_time(eigenvalues: ArrayLike, step_sizes: ArrayLike, coefficient: ArrayLike) -> Array:
    r"""The data-dependent stopping time ``T̂`` for the step schedule ``α_0, α_1, …``.

    .. math::

        \hat T = \arg\min\Big\{t \ge 1 : \hat{\mathcal R}_K(η_t^{-1/2}) > \frac{c}{η_t}\Big\}
        - 1, \qquad η_t = \sum_{s<t} α_s

    (Raskutti et al. 2014, eq. (7) with ``c = 1/(2eσ)``; Sun & Raskutti 2026, Sec 3.5 and
    App. B.1, whose ``T̂_max`` this is, with ``c = C_H/(2eσ)``). The rule is evaluated as
    printed, not through the critical radius; since ``R̂_K(ϱ)/ϱ²`` decreases it equals
    ``max{t : η_t ≤ ϱ̂^{−2}}`` (see :func:`stopping_time_constant_step`). If the rule never
    fires within the schedule, ``len(step_sizes)`` is returned (a longer schedule is needed).

    Args:
      eigenvalues: ``λ̂_i ≥ 0``, shape ``(N,)``.
      step_sizes: ``α_t > 0``, shape ``(T,)`` (Raskutti et al. require non-increasing
        ``α_t ≤ min{1, 1/λ̂_max}``; not needed to evaluate the rule).
      coefficient: ``c > 0``.

    Returns:
      ``T̂`` as an int32 scalar array.

    Examples:
      >>> import jax.numpy as jnp
      >>> lam = jnp.array([0.5, 0.2, 0.1, 0.05])
      >>> int(stopping_time(lam, jnp.full(1000, 0.5), 3.0))  # = ⌊1/(0.5 ϱ̂²)⌋, ϱ̂ ≈ 0.312
      20
    """
    where = "stopping_time"
    lam = _eigenvalues(where, eigenvalues)
    check_positive(where, "coefficient", coefficient)
    steps = _check_steps(where, step_sizes, lam.dtype)
    eta = jnp.cumsum(steps)  # η_1, …, η_T
    complexity = local_rademacher_complexity(lam, 1 / jnp.sqrt(eta))
    fired = complexity > jnp.asarray(coefficient, lam.dtype) / eta
    first = jnp.argmax(fired)  # index of η_t with t = first + 1
    return jnp.where(jnp.any(fired), first, steps.shape[0]).astype(jnp.int32)


def stopping_time_constant_step(radius: ArrayLike, step_size: ArrayLike) -> Array:
    r"""``T̂ = ⌊1/(α ϱ̂²)⌋``: the stopping rule's closed form for a constant step ``α``.

    [derived] ``R̂_K(ϱ)/ϱ²`` is decreasing, so the rule of :func:`stopping_time` fires at
    the first ``t`` with ``η_t^{−1/2} < ϱ̂``, i.e. ``T̂ = max{t : η_t ≤ ϱ̂^{−2}}``; with
    ``η_t = αt`` that is ``⌊1/(αϱ̂²)⌋`` (Raskutti et al. 2014, Sec 3.2).

    Args:
      radius: the critical radius ``ϱ̂ > 0`` (:func:`critical_radius`).
      step_size: ``α > 0``.

    Examples:
      >>> float(stopping_time_constant_step(0.125, 0.5))  # ⌊1/(0.5 · 2⁻⁶)⌋
      128.0
    """
    check_positive("stopping_time_constant_step", "radius", radius)
    check_positive("stopping_time_constant_step", "step_size", step_size)
    rho = jnp.asarray(radius)
    rho = rho.astype(jnp.result_type(rho, float))
    return jnp.floor(1 / (jnp.asarray(step_size, rho.dtype) * rho**2))


def eigen_decay_exponent(
    eigenvalues: ArrayLike, *, fit_intercept: bool = False, num_eigenvalues: int | None = None
) -> Array:
    r"""Decay exponent ``β`` of ``λ_k ≈ λ_1 k^{−2β}`` by least squares on a log–log scale.

    Sun & Raskutti 2026, App. A.3: regress ``log(λ_k/λ_1)`` on ``log k`` (eq. (32)); the slope
    is ``−2β``. The paper does not say whether an intercept is fitted: ``fit_intercept=False``
    fits through the origin (exact at ``k = 1``), ``True`` fits ``a − 2β log k``. Both
    recover ``β`` exactly for an exact power law. Eigenvalues are sorted decreasingly; those
    ``≤ 0`` (round-off of a singular kernel) are left out of the fit by zero weights, so the
    function stays ``vmap``-compatible.

    Args:
      eigenvalues: ``(N,)``, any order.
      fit_intercept: fit an intercept as well.
      num_eigenvalues: use only the top ``k`` eigenvalues (static); default all.

    Returns:
      ``β`` as a scalar array.

    Examples:
      >>> import jax.numpy as jnp
      >>> lam = 3.0 * jnp.arange(1.0, 11.0) ** -1.2
      >>> round(float(eigen_decay_exponent(lam)), 6), round(float(
      ...     eigen_decay_exponent(lam, fit_intercept=True)), 6)
      (0.6, 0.6)
    """
    where = "eigen_decay_exponent"
    lam = jnp.asarray(eigenvalues)
    check_ndim(where, "eigenvalues", lam, 1)
    lam = jnp.sort(lam.astype(jnp.result_type(lam, float)))[::-1]
    if num_eigenvalues is not None:
        num_eigenvalues = check_positive_int(where, "num_eigenvalues", num_eigenvalues)
        lam = lam[:num_eigenvalues]
    if lam.shape[0] < 2:
        raise ValueError(f"{where}: at least 2 eigenvalues are needed, got {lam.shape[0]}.")
    weights = (lam > 0).astype(lam.dtype)
    if _is_concrete(weights) and float(jnp.sum(weights)) < 2:
        raise ValueError(f"{where}: at least 2 positive eigenvalues are needed.")
    log_k = jnp.log(jnp.arange(1, lam.shape[0] + 1, dtype=lam.dtype))
    log_ratio = jnp.log(jnp.where(weights > 0, lam, 1) / lam[0]) * weights
    if fit_intercept:
        slope, _ = _weighted_slope(log_k, log_ratio, weights)
    else:
        slope = jnp.sum(weights * log_k * log_ratio) / jnp.sum(weights * log_k**2)
    return -slope / 2


def _weighted_slope(x: Array, y: Array, weights: Array) -> tuple[Array, Array]:
    """Weighted least-squares slope of ``y`` on ``x`` with intercept, and its standard error."""
    total = jnp.sum(weights)
    x_mean = jnp.sum(weights * x) / total
    y_mean = jnp.sum(weights * y) / total
    sxx = jnp.sum(weights * (x - x_mean) ** 2)
    slope = jnp.sum(weights * (x - x_mean) * (y - y_mean)) / sxx
    residual = weights * (y - y_mean - slope * (x - x_mean)) ** 2
    stderr = jnp.sqrt(jnp.sum(residual) / jnp.maximum(total - 2, 1) / sxx)
    return slope, stderr


def log_log_slope(x: ArrayLike, y: ArrayLike) -> tuple[Array, Array]:
    """Least-squares slope of ``log y`` on ``log x`` (with intercept) and its standard error.

    The standard error is the usual ``sqrt(RSS/(n − 2)/S_xx)``; it is zero for an exact power
    law and undefined (reported as computed) for two points.

    Args:
      x: positive abscissae, shape ``(n,)``, ``n ≥ 2``.
      y: positive ordinates, the same shape as ``x``.

    Returns:
      ``(slope, stderr)``: the fitted slope and its standard error, scalars.

    Examples:
      >>> import jax.numpy as jnp
      >>> slope, stderr = log_log_slope(jnp.array([1.0, 2.0, 4.0]), jnp.array([3.0, 0.75, 0.1875]))
      >>> round(float(slope), 6), round(float(stderr), 6)
      (-2.0, 0.0)
    """
    where = "log_log_slope"
    x_arr, y_arr = jnp.asarray(x), jnp.asarray(y)
    check_ndim(where, "x", x_arr, 1)
    if y_arr.shape != x_arr.shape or x_arr.shape[0] < 2:
        raise ValueError(
            f"{where}: x and y must have the same shape (n,) with n >= 2, got "
            f"{x_arr.shape} and {y_arr.shape}."
        )
    check_positive(where, "x", x_arr)
    check_positive(where, "y", y_arr)
    dtype = jnp.result_type(x_arr, y_arr, float)
    log_x, log_y = jnp.log(x_arr.astype(dtype)), jnp.log(y_arr.astype(dtype))
    return _weighted_slope(log_x, log_y, jnp.ones_like(log_x))


def condition_number(kernel: ArrayLike, sigma: ArrayLike = 0.0) -> Array:
    r"""``κ(K + σI) = (λ_max + σ)/(λ_min + σ)`` of a symmetric PSD kernel matrix.

    Args:
      kernel: ``(N, N)`` symmetric PSD.
      sigma: ``σ ≥ 0``, the ridge added to the diagonal.

    Returns:
      ``κ`` (``inf`` for a singular ``K`` with ``σ = 0``).

    Examples:
      >>> import jax.numpy as jnp
      >>> round(float(condition_number(jnp.diag(jnp.array([4.0, 1.0])), 1.0)), 5)
      2.5
    """
    where = "condition_number"
    k = jnp.asarray(kernel)
    if k.ndim != 2 or k.shape[0] != k.shape[1] or k.shape[0] == 0:
        raise ValueError(f"{where}: kernel must be a square (N, N) matrix, got {k.shape}.")
    if _is_concrete(sigma) and not float(np.min(np.asarray(sigma))) >= 0:
        raise ValueError(f"{where}: sigma must be non-negative, got {sigma!r}.")
    sigma = require_nonnegative(where, "sigma", sigma)  # checked mode when traced
    k = require_finite(where, "kernel", k)
    k = k.astype(jnp.result_type(k, float))
    lam = jnp.linalg.eigvalsh((k + k.T) / 2)
    lam = require_psd_spectrum(where, "kernel", lam)
    s = jnp.asarray(sigma, k.dtype)
    low = jnp.maximum(lam[0], 0) + s
    return jnp.where(low > 0, (lam[-1] + s) / jnp.where(low > 0, low, 1), jnp.inf)
