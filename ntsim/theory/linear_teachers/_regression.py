"""Theorem 4.1: the limit of GD fine-tuning of linear regression and its risk (Sec 4).

``γ = P_⊥θ_S + P_∥θ_T`` (eq. 1), ``R(γ) = ‖Σ^{1/2}P_⊥(θ_T − θ_S)‖²`` (eq. 2), the GD iterates
in closed form, and a Monte Carlo risk estimator used as an independent oracle.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._checks import psd_tolerance, require_finite
from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int
from ntsim.theory.linear_teachers._common import (
    _check_data,
    _row_basis,
    _shaped,
)


def fine_tuned_linear(x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike) -> Array:
    """The GD fine-tuning limit ``γ = P_⊥θ_S + P_∥θ_T`` (Shachaf et al. 2021, Thm 4.1, eq. (1)).

    Assumes a linear model, noiseless labels ``y = Xθ_T`` and GD (or GF) from ``θ_S`` that
    reaches zero training loss (Assumptions 3.1–3.3).

    Examples:
      >>> fine_tuned_linear(jnp.array([[1.0, 0.0]]), jnp.array([5.0, 5.0]),
      ...                   jnp.array([1.0, 2.0])).tolist()
      [1.0, 5.0]
    """
    x = _check_data("fine_tuned_linear", x)
    d = x.shape[1]
    theta_source = _shaped("fine_tuned_linear", "theta_source", theta_source, (d,))
    theta_target = _shaped("fine_tuned_linear", "theta_target", theta_target, (d,))
    q = _row_basis(x)
    p_par = lambda u: q @ (q.T @ u)
    return (theta_source - p_par(theta_source)) + p_par(theta_target)


def fine_tuned_linear_pinv(x: ArrayLike, y: ArrayLike, theta_source: ArrayLike) -> Array:
    """``γ = θ_S + X⁺(y − Xθ_S)``: the interpolant of ``(X, y)`` closest to ``θ_S``.

    Equivalent to Thm 4.1, eq. (1) when ``y = Xθ_T`` (Shachaf et al. 2021, Sec 4; [24, 25]);
    valid for any labels ``y (n,)``. ``X⁺`` is the Moore–Penrose pseudo-inverse (SVD), a
    route independent of the QR projectors of :func:`fine_tuned_linear`.

    Examples:
      >>> fine_tuned_linear_pinv(jnp.array([[1.0, 0.0]]), jnp.array([1.0]),
      ...                        jnp.array([5.0, 5.0])).tolist()
      [1.0, 5.0]
    """
    x = _check_data("fine_tuned_linear_pinv", x)
    n, d = x.shape
    theta_source = _shaped("fine_tuned_linear_pinv", "theta_source", theta_source, (d,))
    y = _shaped("fine_tuned_linear_pinv", "y", y, (n,))
    return theta_source + jnp.linalg.pinv(x) @ (y - x @ theta_source)


def population_risk(w: ArrayLike, theta_target: ArrayLike, covariance: ArrayLike) -> Array:
    """``R(w) = E_x[(xᵀθ_T − xᵀw)²] = (θ_T − w)ᵀΣ(θ_T − w)`` (Sec 3, ``Σ`` = second moment).

    Examples:
      >>> sigma = jnp.diag(jnp.array([2.0, 3.0]))
      >>> float(population_risk(jnp.zeros(2), jnp.array([1.0, 1.0]), sigma))
      5.0
    """
    check_ndim("population_risk", "w", w, 1)
    d = jnp.shape(w)[0]
    e = _shaped("population_risk", "theta_target", theta_target, (d,)) - jnp.asarray(w)
    covariance = _shaped("population_risk", "covariance", covariance, (d, d))
    risk = e @ covariance @ e
    if _is_concrete(risk):  # one O(1) look at the result diagnoses what the inputs broke
        _check_risk("population_risk", float(risk), e, covariance)
    return risk


def _check_risk(where: str, risk: float, e: Array, covariance: Array) -> None:
    """A quadratic form ``eᵀΣe`` is finite and ``≥ 0`` for finite ``e`` and PSD ``Σ``:
    name the input that broke it (``Σ`` PSD within ``sqrt(eps)`` round-off)."""
    if not np.isfinite(risk):
        for name, array in (("w or theta_target", e), ("covariance", covariance)):
            require_finite(where, name, array)
    scale = float(jnp.sum(e**2) * jnp.max(jnp.abs(covariance)))
    if risk < -psd_tolerance(np.asarray(covariance).dtype) * scale:
        raise ValueError(
            f"{where}: covariance must be positive semi-definite (a second moment), got "
            f"(θ_T − w)ᵀΣ(θ_T − w) = {risk:.6g} < 0."
        )


def risk_thm4_1(
    x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike, covariance: ArrayLike
) -> Array:
    """``R(γ) = ‖Σ^{1/2} P_⊥(θ_T − θ_S)‖²`` (Shachaf et al. 2021, Thm 4.1, eq. (2)).

    Evaluated as ``uᵀΣu`` with ``u = P_⊥(θ_T − θ_S)`` (equal to ``‖Σ^{1/2}u‖²`` without a
    matrix square root). Depends on the tasks only through ``θ_T − θ_S``.

    Examples:
      >>> float(risk_thm4_1(jnp.array([[1.0, 0.0]]), jnp.zeros(2), jnp.array([3.0, 2.0]),
      ...                   jnp.eye(2)))
      4.0
    """
    where = "risk_thm4_1"
    x = _check_data(where, x)
    d = x.shape[1]
    v = _shaped(where, "theta_target", theta_target, (d,))
    v = v - _shaped(where, "theta_source", theta_source, (d,))
    covariance = _shaped(where, "covariance", covariance, (d, d))
    q = _row_basis(x)
    u = v - q @ (q.T @ v)
    return u @ covariance @ u


def gd_iterate_closed_form(
    x: ArrayLike, y: ArrayLike, theta0: ArrayLike, *, learning_rate: ArrayLike, steps: ArrayLike
) -> Array:
    r"""GD iterates ``w(t) = γ + (I − (2η/n)XᵀX)^t (θ_0 − γ)`` on ``L(w) = (1/n)‖Xw − y‖²``.

    Exact iterates of ``w(t+1) = w(t) − η∇L(w(t))``, ``∇L = (2/n)Xᵀ(Xw − y)``, from
    ``w(0) = θ_0`` (unrolling the linear recursion), with ``γ = θ_0 + X⁺(y − Xθ_0)``
    (Thm 4.1, eq. (1)). ``θ_0 − γ`` lies in the row space, so with the thin SVD
    ``X = U diag(s) Vᵀ`` the power is ``(1 − 2ηs_k²/n)^t`` on each right singular vector.
    GD converges iff ``0 < η < n/λ_max(XᵀX)`` (larger ``η``: the diverging iterates).
    ``steps`` are non-negative integers of any shape ``S``; the result has shape ``S + (d,)``.

    Examples:
      >>> gd_iterate_closed_form(jnp.array([[1.0, 0.0]]), jnp.array([0.0]), jnp.array([1.0, 1.0]),
      ...                        learning_rate=0.25, steps=jnp.array([0, 1, 2])).tolist()
      [[1.0, 1.0], [0.5, 1.0], [0.25, 1.0]]
    """
    where = "gd_iterate_closed_form"
    x = _check_data(where, x)
    n, d = x.shape
    y = _shaped(where, "y", y, (n,))
    theta0 = _shaped(where, "theta0", theta0, (d,))
    check_positive(where, "learning_rate", learning_rate)
    steps = jnp.asarray(steps)
    if not jnp.issubdtype(steps.dtype, jnp.integer):
        raise ValueError(f"{where}: steps must be integers, got dtype {steps.dtype}.")
    if _is_concrete(steps) and np.any(np.asarray(steps) < 0):
        raise ValueError(f"{where}: steps must be non-negative, got {steps}.")
    u, s, vt = jnp.linalg.svd(x, full_matrices=False)
    gamma = theta0 + vt.T @ ((u.T @ (y - x @ theta0)) / s)
    coeffs = vt @ (theta0 - gamma)  # θ_0 − γ in the right-singular basis
    factors = (1.0 - (2.0 * learning_rate / n) * s**2) ** steps[..., None].astype(s.dtype)
    return gamma + (factors * coeffs) @ vt


def monte_carlo_risk(
    key: PRNGKey,
    w: ArrayLike,
    theta_target: ArrayLike,
    covariance_sqrt: ArrayLike,
    *,
    num_samples: int,
    batch_size: int | None = None,
) -> tuple[Array, Array]:
    """Monte Carlo estimate of ``R(w) = E_x[(xᵀθ_T − xᵀw)²]`` (Sec 3) on fresh samples.

    Draws ``x = Az``, ``z ~ N(0, I_d)``, i.e. ``x ~ N(0, AAᵀ)`` for ``A = covariance_sqrt``
    (any factor of ``Σ``: ``Σ^{1/2}``, ``V diag(√λ)``, Cholesky), in a ``lax.scan`` over
    batches of ``batch_size`` (must divide ``num_samples``; default ``min(N, 1000)``), so
    memory is ``O(batch_size · d)``. Batch means/variances are merged with Chan et al.'s
    parallel update (no ``Σr² − (Σr)²`` cancellation).

    Returns:
      ``(estimate, standard_error)``, ``standard_error = sample std / √num_samples``.
    """
    where = "monte_carlo_risk"
    num_samples = check_positive_int(where, "num_samples", num_samples)
    batch = min(num_samples, 1000) if batch_size is None else batch_size
    batch = check_positive_int(where, "batch_size", batch)
    if num_samples % batch or num_samples < 2:
        raise ValueError(
            f"{where}: num_samples must be >= 2 and a multiple of batch_size, got "
            f"{num_samples=}, batch_size={batch}."
        )
    w = jnp.asarray(w)
    check_ndim(where, "w", w, 1)
    d = w.shape[0]
    e = _shaped(where, "theta_target", theta_target, (d,)) - w
    a = _shaped(where, "covariance_sqrt", covariance_sqrt, (d, d))
    dtype = jnp.result_type(e, a)

    def body(carry, k):
        count, mean, m2 = carry
        r2 = ((jax.random.normal(k, (batch, d), dtype) @ a.T) @ e) ** 2
        b_mean = jnp.mean(r2)
        delta = b_mean - mean
        total = count + batch
        mean = mean + delta * batch / total
        m2 = m2 + jnp.sum((r2 - b_mean) ** 2) + delta**2 * count * batch / total
        return (total, mean, m2), None

    zero = jnp.zeros((), dtype)
    keys = jax.random.split(key, num_samples // batch)
    (_, mean, m2), _ = jax.lax.scan(body, (zero, zero, zero), keys)
    return mean, jnp.sqrt(m2 / (num_samples - 1) / num_samples)
