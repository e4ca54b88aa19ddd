r"""Kernel gradient descent from a pretrained model: normalisation, closed forms, bias/variance.

Setting (Sun & Raskutti 2026, Secs 3.3–3.5, App. B): targets ``Y = f_tgt(X) + w`` with
independent ``σ``-sub-Gaussian noise, initial function ``f_PT``. The empirical kernel matrix
is ``K = 𝕂(X, X)/N`` (eq. (5)); for a network in standard parameterisation ``𝕂`` is the NTK
divided by the width, so ``K = JJᵀ/(N n)`` (eqs. (7), (37)). Full-batch GD on
``(1/2N)Σ_i(f(X_i) − Y_i)²`` with learning rate ``ε = η_0/n`` moves the linearised network as

.. math:: f_{τ+1}(X) = f_τ(X) − α K (f_τ(X) − Y), \qquad α = η_0,

so ``r_τ = (I − αK)^τ r_0`` for ``r_τ = f_τ(X) − Y``, and the running step sum is
``η_τ = ατ`` [derived]. With ``Δ* = f_tgt(X) − f_PT(X)``,
``f_τ(X) − f_tgt(X) = −(I − αK)^τ Δ* + [I − (I − αK)^τ] w``: squared bias
``B²_τ = (1/N)‖(I − αK)^τ Δ*‖²`` and variance ``V_τ = (1/N)‖[I − (I − αK)^τ] w‖²`` with
``E V_τ = (σ²/N) Σ_i (1 − (1 − αλ̂_i)^τ)²``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ntsim._checks import require_finite, require_psd_spectrum
from ntsim._types import Array, ArrayLike
from ntsim._validation import _is_concrete, check_ndim, check_nonnegative, check_positive
from ntsim.core import Predictions, local_rademacher_complexity

__all__ = [
    "bias_bound",
    "empirical_kernel_matrix",
    "expected_variance",
    "gd_shrinkage",
    "kernel_gd_residuals",
    "pretrained_kernel_gd",
    "squared_bias",
    "variance_bound",
]


def empirical_kernel_matrix(ntk: ArrayLike, *, width: float = 1.0) -> Array:
    r"""The paper's kernel matrix ``K = Θ/(N·n)`` from the raw NTK ``Θ = JJᵀ``.

    Sun & Raskutti 2026, eq. (5) ``K(i, j) = 𝕂(X_i, X_j)/N`` with eq. (37)'s width
    normalisation ``𝕂 = ⟨∇_θ f, ∇_θ f'⟩/n`` under standard parameterisation: ``K = JJᵀ/(Nn)``
    (eq. (7) with the ``1/n`` of (37)). Pass ``width=1`` for a kernel that needs no width
    normalisation (NTK parameterisation, or an analytic kernel ``𝕂``).

    Args:
      ntk: ``(N, N)`` Gram matrix ``⟨∇_θ f(X_i), ∇_θ f(X_j)⟩`` (e.g. from
        ``ntsim.core.empirical_ntk_fn``) or ``𝕂(X, X)``.
      width: ``n > 0``.

    Examples:
      >>> import jax.numpy as jnp
      >>> empirical_kernel_matrix(jnp.full((2, 2), 8.0), width=4.0).tolist()
      [[1.0, 1.0], [1.0, 1.0]]
    """
    where = "empirical_kernel_matrix"
    theta = jnp.asarray(ntk)
    if theta.ndim != 2 or theta.shape[0] != theta.shape[1]:
        raise ValueError(f"{where}: ntk must be a square (N, N) matrix, got {theta.shape}.")
    check_positive(where, "width", width)
    theta = theta.astype(jnp.result_type(theta, float))
    return theta / (theta.shape[0] * jnp.asarray(width, theta.dtype))


def _steps(where: str, steps: ArrayLike, dtype) -> Array:
    s = jnp.asarray(steps)
    if s.ndim > 1:
        raise ValueError(f"{where}: steps must be a scalar or 1-D, got shape {s.shape}.")
    if _is_concrete(s):
        s_np = np.asarray(s)
        if np.any(s_np < 0) or np.any(s_np != np.round(s_np)):
            raise ValueError(f"{where}: steps must be non-negative integers, got {steps!r}.")
    return s.astype(dtype)


def _check_step_size(where: str, step_size: ArrayLike, eigenvalues: Array) -> None:
    check_positive(where, "step_size", step_size)
    if _is_concrete(step_size) and _is_concrete(eigenvalues):
        product = float(np.max(np.asarray(step_size))) * float(jnp.max(eigenvalues))
        if product > 1 + 1e3 * float(jnp.finfo(eigenvalues.dtype).eps):
            raise ValueError(
                f"{where}: step_size must satisfy α·λ̂_max ≤ 1 (Raskutti et al. 2014 require "
                f"α ≤ min{{1, 1/λ̂_max}}), got α·λ̂_max = {product:.6g}."
            )


def _decay_and_shrinkage(a: Array, tau: Array) -> tuple[Array, Array]:
    """``(1 − a)^τ`` and ``1 − (1 − a)^τ`` for ``0 ≤ a ≤ 1``, accurate for tiny ``a``."""
    inside = a < 1
    log_decay = tau * jnp.log1p(-jnp.where(inside, a, 0))
    positive = tau > 0
    decay = jnp.where(inside, jnp.exp(log_decay), jnp.where(positive, 0, 1))
    shrink = jnp.where(inside, -jnp.expm1(log_decay), jnp.where(positive, 1, 0))
    return decay, shrink


def gd_shrinkage(eigenvalues: ArrayLike, step_size: ArrayLike, steps: ArrayLike) -> Array:
    r"""Per-eigenvalue shrinkage of kernel GD, ``s_GD = 1 − (1 − αλ̂_i)^τ``.

    ``f_τ(X) = Σ_i s_GD(λ̂_i) ⟨u_i, Y⟩ u_i`` from ``f_0 = 0`` (Raskutti et al. 2014, Sec 2.2;
    Sun & Raskutti 2026, Sec 6.2). Requires ``αλ̂_max ≤ 1``.

    Args:
      eigenvalues: ``λ̂_i ≥ 0``, ``(N,)``.
      step_size: constant ``α``.
      steps: ``τ``, a scalar or ``(T,)`` of non-negative integers.

    Returns:
      ``(N,)``, or ``(T, N)`` for 1-D ``steps``.

    Examples:
      >>> import jax.numpy as jnp
      >>> gd_shrinkage(jnp.array([1.0, 0.5]), 1.0, jnp.array([0, 2])).tolist()
      [[0.0, 0.0], [1.0, 0.75]]
    """
    where = "gd_shrinkage"
    lam = jnp.asarray(eigenvalues)
    check_ndim(where, "eigenvalues", lam, 1)
    lam = lam.astype(jnp.result_type(lam, float))
    if _is_concrete(lam):  # a NaN would give a shrinkage of 1; traced inside the falsifier's
        lam = require_finite(where, "eigenvalues", lam)  # search: checked by its caller
    _check_step_size(where, step_size, lam)
    tau = _steps(where, steps, lam.dtype)
    a = jnp.asarray(step_size, lam.dtype) * jnp.maximum(lam, 0)
    return _decay_and_shrinkage(a, tau[..., None])[1]


def kernel_gd_residuals(
    kernel: ArrayLike, initial_residual: ArrayLike, step_size: ArrayLike, steps: ArrayLike
) -> Array:
    r"""Train residuals ``r_τ = (I − αK)^τ r_0`` of kernel GD.

    Computed on the eigenbasis ``K = Q diag(λ̂) Qᵀ``: ``r_τ = Q diag((1 − αλ̂)^τ) Qᵀ r_0``.

    Args:
      kernel: ``K`` (:func:`empirical_kernel_matrix`), ``(N, N)`` symmetric PSD.
      initial_residual: ``r_0 = f_PT(X) − Y``, ``(N,)``.
      step_size: ``α`` with ``αλ̂_max ≤ 1``.
      steps: ``τ``, scalar or ``(T,)``.

    Returns:
      ``(N,)`` or ``(T, N)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> kernel_gd_residuals(jnp.eye(2) / 2, jnp.array([4.0, 8.0]), 1.0, 2).tolist()
      [1.0, 2.0]
    """
    where = "kernel_gd_residuals"
    k = jnp.asarray(kernel)
    if k.ndim != 2 or k.shape[0] != k.shape[1]:
        raise ValueError(f"{where}: kernel must be a square (N, N) matrix, got {k.shape}.")
    r0 = jnp.asarray(initial_residual)
    if r0.shape != (k.shape[0],):
        raise ValueError(
            f"{where}: initial_residual must have shape ({k.shape[0]},), got {r0.shape}."
        )
    dtype = jnp.result_type(k, r0, float)
    lam, q = jnp.linalg.eigh(((k + k.T) / 2).astype(dtype))
    _check_step_size(where, step_size, lam)
    tau = _steps(where, steps, dtype)
    a = jnp.asarray(step_size, dtype) * jnp.maximum(lam, 0)
    decay = _decay_and_shrinkage(a, tau[..., None])[0]
    return (decay * (q.T @ r0.astype(dtype))) @ q.T


def pretrained_kernel_gd(
    kernel_train: ArrayLike,
    y_train: ArrayLike,
    f_pt_train: ArrayLike | None = None,
    *,
    step_size: ArrayLike | None = None,
    steps: ArrayLike,
    kernel_test_train: ArrayLike | None = None,
    f_pt_test: ArrayLike | None = None,
) -> Predictions:
    r"""Kernel GD from ``f_PT`` in the paper's normalisation, on train and test inputs.

    .. math::

        f_τ(X) = Y + (I − αK)^τ (f_{PT}(X) − Y), \quad
        f_τ(x) = f_{PT}(x) + 𝕂(x, X)𝕂^{-1}[I − (I − αK)^τ](Y − f_{PT}(X))

    with ``K = 𝕂/N`` ([derived]; the test formula needs ``K`` full rank,
    Assumption 4.5 — on a null eigenvalue ``[I − (I − αK)^τ]K^{-1}`` is read as its limit
    ``ατ``). It is the same dynamics as ``ntsim.core.kernel_gd_predictions`` with ``K`` as the
    kernel, ``learning_rate = α`` and ``loss_scale = 1/2``, evaluated with one ``eigh`` and
    two matrix products per call (no ``(T, N, N)`` intermediate), so long step grids are cheap.

    Args:
      kernel_train: ``𝕂(X, X)`` (unnormalised), ``(N, N)``.
      y_train: ``Y``, ``(N,)``.
      f_pt_train: ``f_PT(X)``; ``None`` means 0.
      step_size: ``α`` with ``α λ̂_max(K) ≤ 1``; ``None`` means ``min{1, 1/λ̂_max}``
        (Raskutti et al. 2014's choice).
      steps: ``τ``, scalar or ``(T,)`` non-negative integers.
      kernel_test_train: ``𝕂(x*, X)`` (unnormalised), ``(M, N)``.
      f_pt_test: ``f_PT(x*)``; ``None`` means 0.

    Returns:
      ``ntsim.core.Predictions`` (leading ``T`` axis for 1-D ``steps``).

    Examples:
      >>> import jax.numpy as jnp
      >>> p = pretrained_kernel_gd(2 * jnp.eye(2), jnp.array([2.0, 4.0]), step_size=0.5,
      ...                          steps=1)
      >>> p.train.tolist()  # K = I: one step of size 1/2 moves half way
      [1.0, 2.0]
    """
    where = "pretrained_kernel_gd"
    k = jnp.asarray(kernel_train)
    if k.ndim != 2 or k.shape[0] != k.shape[1]:
        raise ValueError(f"{where}: kernel_train must be a square (N, N) matrix, got {k.shape}.")
    n = k.shape[0]
    y = jnp.asarray(y_train)
    if y.shape != (n,):
        raise ValueError(f"{where}: y_train must have shape ({n},), got {y.shape}.")
    dtype = jnp.result_type(k, y, float)
    f0 = jnp.zeros(n, dtype) if f_pt_train is None else jnp.asarray(f_pt_train, dtype)
    if f0.shape != (n,):
        raise ValueError(f"{where}: f_pt_train must have shape ({n},), got {f0.shape}.")
    k = require_finite(where, "kernel_train", k)
    y = require_finite(where, "y_train", y)
    f0 = require_finite(where, "f_pt_train", f0)
    lam, q = jnp.linalg.eigh(((k + k.T) / (2 * n)).astype(dtype))
    lam = require_psd_spectrum(where, "kernel_train", lam)
    lam = jnp.maximum(lam, 0)
    alpha = jnp.minimum(1.0, 1 / lam[-1]) if step_size is None else step_size
    _check_step_size(where, alpha, lam)
    alpha = jnp.asarray(alpha, dtype)
    tau = _steps(where, steps, dtype)[..., None]
    decay, shrink = _decay_and_shrinkage(alpha * lam, tau)
    coeff = q.T @ (y.astype(dtype) - f0)
    train = y - (decay * coeff) @ q.T
    test = None
    if kernel_test_train is not None:
        k_test = jnp.asarray(kernel_test_train, dtype)
        if k_test.ndim != 2 or k_test.shape[1] != n:
            raise ValueError(
                f"{where}: kernel_test_train must have shape (M, {n}), got {k_test.shape}."
            )
        positive = lam > 0
        phi = jnp.where(positive, shrink / jnp.where(positive, lam, 1), alpha * tau)
        f0_test = 0 if f_pt_test is None else jnp.asarray(f_pt_test, dtype)
        test = f0_test + (phi * coeff) @ ((k_test / n) @ q).T
    return Predictions(train, test)


def squared_bias(
    kernel: ArrayLike, target_gap: ArrayLike, step_size: ArrayLike, steps: ArrayLike
) -> Array:
    r"""``B²_τ = (1/N)‖(I − αK)^τ Δ*‖²``, ``Δ* = f_tgt(X) − f_PT(X)`` (eq. (34)).

    Examples:
      >>> import jax.numpy as jnp
      >>> float(squared_bias(jnp.eye(2) / 2, jnp.array([2.0, 2.0]), 1.0, 1))
      1.0
    """
    residual = kernel_gd_residuals(kernel, target_gap, step_size, steps)
    return jnp.mean(residual**2, axis=-1)


def expected_variance(
    eigenvalues: ArrayLike, step_size: ArrayLike, steps: ArrayLike, noise_std: ArrayLike
) -> Array:
    r"""``E V_τ = (σ²/N) Σ_i (1 − (1 − αλ̂_i)^τ)²`` for i.i.d. noise of variance ``σ²``.

    Derived: ``V_τ = (1/N)‖[I − (I − αK)^τ] w‖²`` and ``E wwᵀ = σ² I``.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(expected_variance(jnp.array([1.0, 0.0]), 1.0, 3, 2.0))  # (4/2)·(1 + 0)
      2.0
    """
    check_nonnegative("expected_variance", "noise_std", noise_std)
    shrink = gd_shrinkage(eigenvalues, step_size, steps)
    return jnp.asarray(noise_std, shrink.dtype) ** 2 * jnp.mean(shrink**2, axis=-1)


def bias_bound(rkhs_norm_squared: ArrayLike, eta: ArrayLike) -> Array:
    r"""``B²_τ ≤ ‖Δ*‖²_H/(2eη_τ)`` for ``Δ* ∈ span{𝕂(·, X_j)}``.

    With ``Δ* = Σ_j a_j 𝕂(·, X_j)``, ``‖Δ*‖²_H = aᵀ𝕂a``; each eigen-direction contributes
    ``λ̂(1 − αλ̂)^{2τ} ≤ λ̂ e^{−2η_τλ̂} ≤ 1/(2eη_τ)`` times its share of ``‖Δ*‖²_H``
    (Raskutti et al. 2014, Lemma 7 style).

    Examples:
      >>> round(float(bias_bound(1.0, 1.0 / (2 * 2.718281828459045))), 6)
      1.0
    """
    check_positive("bias_bound", "eta", eta)
    norm_sq = jnp.asarray(rkhs_norm_squared)
    return norm_sq / (2 * np.e * jnp.asarray(eta, jnp.result_type(norm_sq, float)))


def variance_bound(eigenvalues: ArrayLike, eta: ArrayLike, noise_std: ArrayLike) -> Array:
    r"""``E V_τ ≤ σ² η_τ R̂_K(η_τ^{−1/2})²``.

    ``(1 − (1 − αλ̂)^τ)² ≤ min{1, η_τλ̂}`` term by term, and
    ``(1/N)Σ min{1, ηλ̂} = η R̂_K(η^{−1/2})²`` (eq. (10)).

    Examples:
      >>> import jax.numpy as jnp
      >>> round(float(variance_bound(jnp.array([1.0, 0.25]), 2.0, 1.0)), 6)  # 2·(0.5 + 0.25)/2
      0.75
    """
    check_positive("variance_bound", "eta", eta)
    check_nonnegative("variance_bound", "noise_std", noise_std)
    eta = jnp.asarray(eta)
    eta = eta.astype(jnp.result_type(eta, float))
    complexity = local_rademacher_complexity(eigenvalues, 1 / jnp.sqrt(eta))
    return jnp.asarray(noise_std, eta.dtype) ** 2 * eta * complexity**2
