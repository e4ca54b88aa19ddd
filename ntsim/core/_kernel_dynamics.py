"""Closed-form MSE dynamics of linearised models in the kernel regime.

* :func:`kernel_flow_predictions`, :func:`kernel_gd_predictions`,
  :func:`kernel_ridge_regression`: training of the linearised model under
  ``L(θ) = c Σ_i ‖f_θ(x_i) − y_i‖²`` in closed form, with the normalisation
  ``c = loss_scale`` always explicit (:func:`mse_loss_scale`; Shachaf et al. 2021's
  ``(1/n)‖Xθ − y‖²`` is ``c = 1/n``).

The closed forms use one eigendecomposition ``K = Q diag(λ) Qᵀ`` of the training NTK and
evaluate every requested time at once through scalar functions of ``λ`` (no loop over
steps: ``10^6`` GD steps cost one ``exp``); singular ``K`` is fine. Targets ``y`` may be
``(N,)`` or ``(N, O)``; the ``(N, N)`` kernel acts on each output column, which is exact
when the NTK is diagonal in the outputs (infinite width; ``ntsim.core.linear``).
Checks on data (symmetric PSD kernel, GD step size at most ``1/(c λ_max)``) run when the
arguments are concrete; under ``jit``/``vmap`` they are skipped and the closed form is
evaluated as is (an unstable step size then gives the diverging values GD would).

References:
  Jacot, Gabriel & Hongler (2018), *Neural tangent kernel*, arXiv:1806.07572, Sec 5.
  Lee et al. (2019), *Wide neural networks of any depth evolve as linear models under
  gradient descent*, arXiv:1902.06720, Sec 2.2 (linearised networks).
  Arora et al. (2019), *On exact computation with an infinitely wide neural net*,
  arXiv:1904.11955, Sec 3 (KRR limit).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._checks import (
    require,
    require_finite,
    require_nonempty,
    require_nonnegative,
    require_positive,
    require_psd_spectrum,
)
from ntsim._types import Array, ArrayLike
from ntsim._validation import (
    _is_concrete,
    check_choice,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

__all__ = [
    "LOSS_CONVENTIONS",
    "Predictions",
    "kernel_flow_predictions",
    "kernel_gd_predictions",
    "kernel_ridge_regression",
    "mse_loss_scale",
]

#: Names accepted by :func:`mse_loss_scale`.
LOSS_CONVENTIONS = ("sum", "mean", "neural_tangents")


class Predictions(NamedTuple):
    """Outputs of the closed-form dynamics.

    Attributes:
      train: predictions on the training inputs, ``(T, N)`` / ``(T, N, O)`` (no ``T`` axis
        for scalar ``times``/``steps`` and for kernel ridge regression).
      test: the same on the test inputs (``M`` rows), or ``None`` without ``k_test_train``.
    """

    train: Array
    test: Array | None


def mse_loss_scale(convention: str, num_examples: int, out_dim: int = 1) -> float:
    """The factor ``c`` in ``L(θ) = c Σ_i ‖f(x_i) − y_i‖²`` for a named convention.

    * ``"sum"``: ``L = ½ Σ_i ‖f(x_i) − y_i‖²``, ``c = 1/2``;
    * ``"mean"``: ``L = 1/(2N) Σ_i ‖f(x_i) − y_i‖²``, ``c = 1/(2N)``;
    * ``"neural_tangents"``: ``L = 1/(2NO) Σ_i ‖f(x_i) − y_i‖²``, ``c = 1/(2NO)``
      (``neural_tangents.predict.gradient_descent_mse``, which averages over outputs too).

    Shachaf et al. (2021)'s ``(1/n)‖Xθ − y‖²`` is ``c = 1/n``: pass ``loss_scale=1/n``.

    Args:
      convention: one of :data:`LOSS_CONVENTIONS`.
      num_examples: ``N ≥ 1``, the number of training examples.
      out_dim: ``O ≥ 1``, the output dimension.

    Returns:
      ``c`` as a Python float.

    Examples:
      >>> mse_loss_scale("mean", 4), mse_loss_scale("neural_tangents", 4, out_dim=2)
      (0.125, 0.0625)
    """
    where = "mse_loss_scale"
    check_choice(where, "convention", convention, LOSS_CONVENTIONS)
    n = check_positive_int(where, "num_examples", num_examples)
    o = check_positive_int(where, "out_dim", out_dim)
    return {"sum": 0.5, "mean": 0.5 / n, "neural_tangents": 0.5 / (n * o)}[convention]


# ------------------------------------------------------------------- closed-form dynamics


def _kernel_tolerance(dtype) -> float:
    """Relative tolerance for symmetry and negative eigenvalues: ``sqrt(eps)``.

    Kernels from Jacobian contractions carry rounding ``~ eps·sqrt(P)`` relative to
    ``‖K‖`` (``P`` parameters); ``sqrt(eps)`` (1.5e-8 in float64, 3.5e-4 in float32) admits
    that for any practical ``P`` and still rejects a genuinely indefinite kernel.
    """
    return float(np.sqrt(np.finfo(dtype).eps))


class _Problem(NamedTuple):
    """Validated inputs of a closed form, all 2-D (outputs as columns) in one float dtype."""

    evals: Array  # (N,) eigenvalues of K, clipped to >= 0
    evecs: Array  # (N, N)
    targets: Array  # y, (N, O)
    f0_train: Array  # (N, O)
    k_test_train: Array | None  # (M, N)
    f0_test: Array | None  # (M, O)
    vector_output: bool  # y was (N,)


def _as_2d(where: str, name: str, value: ArrayLike, rows: int, cols: int | None) -> Array:
    """``value`` with shape ``(rows,)`` (``cols=None``) or ``(rows, cols)``, as 2-D."""
    arr = jnp.asarray(value)
    expected = (rows,) if cols is None else (rows, cols)
    if arr.shape != expected:
        raise ValueError(
            f"{where}: {name} must have shape {expected} (matching y_train and the kernels), "
            f"got {arr.shape}."
        )
    return arr if arr.ndim == 2 else arr[:, None]


@jax.jit
def _eigh(k: Array) -> tuple[Array, Array]:
    """Eigendecomposition of the symmetric part of ``k`` (``eigh`` reads one triangle)."""
    return jnp.linalg.eigh((k + k.T) / 2)


def _problem(where, k_train_train, y_train, f0_train, k_test_train, f0_test) -> _Problem:
    """Validate shapes, check the kernel (when concrete) and eigendecompose it once."""
    k = jnp.asarray(k_train_train)
    if k.ndim != 2 or k.shape[0] != k.shape[1]:
        raise ValueError(f"{where}: k_train_train must be a square (N, N) matrix, got {k.shape}.")
    require_nonempty(where, "k_train_train", k)
    n = k.shape[0]
    y = jnp.asarray(y_train)
    if y.ndim not in (1, 2) or y.shape[0] != n:
        raise ValueError(
            f"{where}: y_train must have shape ({n},) or ({n}, O) to match k_train_train "
            f"{k.shape}, got {y.shape}."
        )
    y = require_finite(where, "y_train", y)
    cols = y.shape[1] if y.ndim == 2 else None
    y = y if y.ndim == 2 else y[:, None]
    f0 = jnp.zeros_like(y) if f0_train is None else _as_2d(where, "f0_train", f0_train, n, cols)
    ks = f0s = None
    if k_test_train is not None:
        ks = jnp.asarray(k_test_train)
        if ks.ndim != 2 or ks.shape[1] != n:
            raise ValueError(f"{where}: k_test_train must have shape (M, {n}), got {ks.shape}.")
        if f0_test is None and f0_train is not None:
            raise ValueError(
                f"{where}: f0_test is required when f0_train is given (the initial outputs on "
                "the test inputs); pass zeros explicitly if that is what you mean."
            )
        rows = ks.shape[0]
        f0s = (
            jnp.zeros((rows, y.shape[1]), y.dtype)
            if f0_test is None
            else _as_2d(where, "f0_test", f0_test, rows, cols)
        )
    elif f0_test is not None:
        raise ValueError(f"{where}: f0_test was given without k_test_train.")
    dtype = jnp.result_type(*(a for a in (k, y, f0, ks, f0s) if a is not None), float)
    k, y, f0 = k.astype(dtype), y.astype(dtype), f0.astype(dtype)
    if ks is not None:
        ks, f0s = ks.astype(dtype), f0s.astype(dtype)
    f0 = require_finite(where, "f0_train", f0)
    if f0s is not None:
        f0s = require_finite(where, "f0_test", f0s)
    tol = _kernel_tolerance(dtype)
    if not _is_concrete(k):
        k = require_finite(where, "k_train_train", k)
    if _is_concrete(k):
        k_np = np.asarray(k)
        scale = float(np.max(np.abs(k_np))) if k_np.size else 0.0
        asym = float(np.max(np.abs(k_np - k_np.T))) if k_np.size else 0.0
        if not np.all(np.isfinite(k_np)) or asym > tol * scale:
            raise ValueError(
                f"{where}: k_train_train must be finite and symmetric, got "
                f"max|K − Kᵀ| = {asym:.3g} > {tol:.1g}·max|K| = {tol * scale:.3g}."
            )
    evals, evecs = _eigh(k)
    if _is_concrete(evals):
        ev = np.asarray(evals)
        lo, hi = float(ev[0]), float(np.max(np.abs(ev)))
        if lo < -tol * hi:
            raise ValueError(
                f"{where}: k_train_train must be positive semi-definite, got smallest "
                f"eigenvalue {lo:.3g} < −{tol:.1g}·max|λ| = {-tol * hi:.3g}."
            )
    else:  # checked mode under jit/vmap: an indefinite kernel must not give a number
        evals = require_psd_spectrum(where, "k_train_train", evals)
    return _Problem(jnp.maximum(evals, 0), evecs, y, f0, ks, f0s, cols is None)


@partial(jax.jit, static_argnums=(3, 4))
def _assemble(prob: _Problem, one_minus: Array, phi: Array, vector: bool, scalar_time: bool):
    """``f0 + Q diag(1 − decay) Qᵀ r`` and ``f0* + K*Q diag(φ) Qᵀ r`` for each time row."""
    coeffs = prob.evecs.T @ (prob.targets - prob.f0_train)  # Qᵀ (y − f0), (N, O)
    train = prob.f0_train + jnp.einsum("ij,tj,jo->tio", prob.evecs, one_minus, coeffs)
    test = None
    if prob.k_test_train is not None:
        ks_q = prob.k_test_train @ prob.evecs
        test = prob.f0_test + jnp.einsum("mj,tj,jo->tmo", ks_q, phi, coeffs)
    if vector:
        train = train[..., 0]
        test = None if test is None else test[..., 0]
    if scalar_time:
        train = train[0]
        test = None if test is None else test[0]
    return train, test


def _predictions(prob: _Problem, one_minus: Array, phi: Array, scalar_time: bool) -> Predictions:
    # vector_output is a Python bool: pass it statically, not inside the traced pytree.
    arrays = prob._replace(vector_output=None)
    return Predictions(*_assemble(arrays, one_minus, phi, prob.vector_output, scalar_time))


def _rate(where, prob, learning_rate, loss_scale) -> Array:
    """``2cη`` in the problem's dtype (both checked positive when concrete)."""
    check_positive(where, "learning_rate", learning_rate)
    check_positive(where, "loss_scale", loss_scale)
    learning_rate = require_positive(where, "learning_rate", learning_rate)  # when traced
    loss_scale = require_positive(where, "loss_scale", loss_scale)
    dtype = prob.evals.dtype
    return 2 * jnp.asarray(loss_scale, dtype) * jnp.asarray(learning_rate, dtype)


def _phi(evals: Array, one_minus: Array, small_limit: Array) -> Array:
    """``(1 − decay)/λ`` with its ``λ → 0`` limit ``small_limit`` (``2cη t``) at ``λ = 0``."""
    zero = evals == 0
    return jnp.where(zero, small_limit, one_minus / jnp.where(zero, 1, evals))


@jax.jit
def _flow_factors(evals: Array, rate: Array, t: Array) -> tuple[Array, Array]:
    """``1 − e^{−2cηλt}`` and ``φ`` for times ``t`` of shape ``(T, 1)``."""
    one_minus = -jnp.expm1(-rate * evals[None, :] * t)
    return one_minus, _phi(evals[None, :], one_minus, rate * t)


@jax.jit
def _gd_factors(evals: Array, rate: Array, t: Array) -> tuple[Array, Array]:
    """``1 − (1 − 2cηλ)^s`` and ``φ`` for step counts ``s = t`` of shape ``(T, 1)``."""
    a = rate * evals[None, :]
    stable = a < 1
    # a < 1: (1 − a)^s = exp(s log1p(−a)), accurate for tiny a.
    log_decay = t * jnp.log1p(-jnp.where(stable, a, 0))
    # a ≥ 1 (edge of stability, or beyond under tracing): (−1)^s |1 − a|^s.
    parity = 1 - 2 * jnp.mod(t, 2)
    big = parity * jnp.power(jnp.where(stable, 1, jnp.abs(1 - a)), t)
    one_minus = jnp.where(stable, -jnp.expm1(log_decay), 1 - big)
    return one_minus, _phi(evals[None, :], one_minus, rate * t)


@jax.jit
def _krr_factors(evals: Array, ridge: Array) -> tuple[Array, Array]:
    """``λ/(λ + ρ)`` and ``1/(λ + ρ)``, dropping ``λ + ρ`` below ``N·eps·λ_max``."""
    lam = evals[None, :]
    denom = lam + ridge
    cutoff = lam.shape[1] * jnp.finfo(lam.dtype).eps * jnp.max(lam)
    keep = denom > cutoff
    phi = jnp.where(keep, 1 / jnp.where(keep, denom, 1), 0)
    return lam * phi, phi


def kernel_flow_predictions(
    k_train_train: ArrayLike,
    y_train: ArrayLike,
    f0_train: ArrayLike | None = None,
    *,
    learning_rate: float,
    loss_scale: float,
    times: ArrayLike,
    k_test_train: ArrayLike | None = None,
    f0_test: ArrayLike | None = None,
) -> Predictions:
    """Kernel gradient flow ``θ̇ = −η∇L`` of the linearised model, in closed form.

    .. math::

        f_t(X) = y + e^{-2cηKt}(f_0(X) - y), \\qquad
        f_t(x^*) = f_0(x^*) + K(x^*, X) K^{-1}(I - e^{-2cηKt})(y - f_0(X))

    (Jacot et al. 2018, Sec 5; Lee et al. 2019, Sec 2.2, whose ``η`` is our
    ``2cη``), with ``c = loss_scale`` and ``η = learning_rate`` (only the product ``cηt``
    matters). As ``t → ∞`` this is the minimum-norm interpolant.

    Args:
      k_train_train: NTK ``K`` on the training inputs, ``(N, N)``, symmetric PSD.
      y_train: targets, ``(N,)`` or ``(N, O)``.
      f0_train: initial outputs ``f_0(X)`` (same shape as ``y_train``); ``None`` means 0.
      learning_rate: ``η > 0``.
      loss_scale: ``c > 0`` of ``L = c Σ‖f − y‖²`` (see :func:`mse_loss_scale`).
      times: ``t ≥ 0``, a scalar or a 1-D array ``(T,)``.
      k_test_train: ``K(x*, X)``, ``(M, N)``.
      f0_test: ``f_0(x*)``, ``(M,)`` / ``(M, O)``; required when ``f0_train`` is given.

    Returns:
      :class:`Predictions` with a leading ``T`` axis when ``times`` is 1-D.

    Raises:
      ValueError: on inconsistent shapes, a non-symmetric or indefinite kernel, or
        non-positive ``learning_rate``/``loss_scale`` or negative ``times`` (when concrete).

    Examples:
      >>> import jax.numpy as jnp
      >>> p = kernel_flow_predictions(jnp.eye(2), jnp.array([1.0, 2.0]), learning_rate=1.0,
      ...                             loss_scale=0.5, times=jnp.array([0.0, 50.0]))
      >>> p.train.round(4).tolist()
      [[0.0, 0.0], [1.0, 2.0]]
    """
    where = "kernel_flow_predictions"
    prob = _problem(where, k_train_train, y_train, f0_train, k_test_train, f0_test)
    rate = _rate(where, prob, learning_rate, loss_scale)
    t = jnp.asarray(times, prob.evals.dtype)
    if t.ndim > 1:
        raise ValueError(f"{where}: times must be a scalar or 1-D, got shape {t.shape}.")
    check_nonnegative(where, "times", times)
    t = require_nonnegative(where, "times", t)  # checked mode when traced
    one_minus, phi = _flow_factors(prob.evals, rate, jnp.atleast_1d(t)[:, None])
    return _predictions(prob, one_minus, phi, t.ndim == 0)


def kernel_gd_predictions(
    k_train_train: ArrayLike,
    y_train: ArrayLike,
    f0_train: ArrayLike | None = None,
    *,
    learning_rate: float,
    loss_scale: float,
    steps: ArrayLike,
    k_test_train: ArrayLike | None = None,
    f0_test: ArrayLike | None = None,
) -> Predictions:
    """Full-batch gradient descent ``θ_{s+1} = θ_s − η∇L`` of the linearised model.

    .. math::

        f_s(X) = y + (I - 2cηK)^s (f_0(X) - y), \\qquad
        f_s(x^*) = f_0(x^*) + K(x^*, X) K^{-1}(I - (I - 2cηK)^s)(y - f_0(X)),

    exact for the linearised model (:func:`ntsim.core.linearize`) with ``K`` its NTK, since
    ``f_s(x) = f_0(x) − 2cη K(x, X) Σ_{r<s} (f_r(X) − y)``. Powers are taken on the
    eigenvalues (``exp(s·log1p(−2cηλ))`` for accuracy at small ``λ``), so ``s = 10^6`` costs
    the same as ``s = 1``. GD is stable iff ``|1 − 2cηλ_max| ≤ 1``, i.e.
    ``η ≤ 1/(c λ_max)`` (= ``2/λ_max`` for ``c = 1/2``).

    Args:
      k_train_train: NTK ``K`` on the training inputs, ``(N, N)``, symmetric PSD.
      y_train: targets, ``(N,)`` or ``(N, O)``.
      f0_train: initial outputs ``f_0(X)``; ``None`` means 0.
      learning_rate: ``η``, with ``0 < η ≤ 1/(c λ_max)``.
      loss_scale: ``c > 0`` of ``L = c Σ‖f − y‖²`` (see :func:`mse_loss_scale`).
      steps: non-negative integer step counts, a scalar or 1-D ``(T,)``.
      k_test_train: ``K(x*, X)``, ``(M, N)``.
      f0_test: ``f_0(x*)``; required when ``f0_train`` is given.

    Returns:
      :class:`Predictions` with a leading ``T`` axis when ``steps`` is 1-D.

    Raises:
      ValueError: as :func:`kernel_flow_predictions`, for non-integer or negative
        ``steps``, and for ``learning_rate > 1/(loss_scale·λ_max)`` (when concrete).

    Examples:
      >>> import jax.numpy as jnp
      >>> p = kernel_gd_predictions(jnp.eye(2), jnp.array([1.0, 2.0]), learning_rate=0.5,
      ...                           loss_scale=0.5, steps=jnp.array([0, 1, 2]))
      >>> p.train.tolist()
      [[0.0, 0.0], [0.5, 1.0], [0.75, 1.5]]
    """
    where = "kernel_gd_predictions"
    prob = _problem(where, k_train_train, y_train, f0_train, k_test_train, f0_test)
    rate = _rate(where, prob, learning_rate, loss_scale)
    s = jnp.asarray(steps)
    if s.ndim > 1:
        raise ValueError(f"{where}: steps must be a scalar or 1-D, got shape {s.shape}.")
    if _is_concrete(s):
        s_np = np.asarray(s)
        if np.any(s_np < 0) or np.any(s_np != np.round(s_np)):
            raise ValueError(f"{where}: steps must be non-negative integers, got {steps!r}.")
    else:
        s = require(
            s,
            jnp.any((s < 0) | (s != jnp.round(s))),
            f"{where}: steps must be non-negative integers, got {{}}.",
            jnp.min(s),
        )
    if _is_concrete(rate) and _is_concrete(prob.evals):
        lam_max = float(prob.evals[-1])
        product = float(rate) * lam_max / 2  # c η λ_max
        # Slack of 1e3 eps: η computed from the user's own eigvalsh may land a hair above.
        if product > 1 + 1e3 * float(jnp.finfo(prob.evals.dtype).eps):
            limit = float(learning_rate) / product
            raise ValueError(
                f"{where}: learning_rate must be at most the stability limit "
                f"1/(loss_scale·λ_max) = {limit:.6g} (λ_max = {lam_max:.6g}); GD diverges "
                f"above it, got {learning_rate=}."
            )
    else:  # checked mode: a traced step size beyond the limit must not return NaN/inf
        slack = 1 + 1e3 * float(jnp.finfo(prob.evals.dtype).eps)
        rate = require(
            rate,
            rate * prob.evals[-1] / 2 > slack,
            f"{where}: learning_rate must be at most the stability limit "
            "1/(loss_scale·λ_max) (λ_max = {}); GD diverges above it, got "
            "loss_scale·learning_rate·λ_max = {}.",
            prob.evals[-1],
            rate * prob.evals[-1] / 2,
        )
    t = jnp.atleast_1d(s).astype(prob.evals.dtype)[:, None]
    one_minus, phi = _gd_factors(prob.evals, rate, t)
    return _predictions(prob, one_minus, phi, s.ndim == 0)


def kernel_ridge_regression(
    k_train_train: ArrayLike,
    y_train: ArrayLike,
    *,
    ridge: float,
    k_test_train: ArrayLike | None = None,
    f0_train: ArrayLike | None = None,
    f0_test: ArrayLike | None = None,
) -> Predictions:
    """Kernel ridge regression on the residual targets ``y − f_0``.

    .. math:: f(x) = f_0(x) + K(x, X)(K + ρ I)^{-1}(y - f_0(X)),

    the minimiser of ``Σ_i (f(x_i) − y_i)² + ρ ‖f − f_0‖²_{\\mathcal H_K}``. With ``ρ = 0``
    it is the minimum-norm interpolant (``t → ∞`` of :func:`kernel_flow_predictions`), with
    ``(K + ρI)^{-1}`` read as a pseudo-inverse that drops eigenvalues below
    ``N·eps·λ_max`` (``numpy.linalg.pinv``'s default cut-off). Gradient flow on
    ``c Σ‖f_θ − y‖² + (μ/2)‖θ − θ_0‖²`` for the linearised model converges to ``ρ = μ/(2c)``.

    Args:
      k_train_train: ``K``, ``(N, N)``, symmetric PSD.
      y_train: targets, ``(N,)`` or ``(N, O)``.
      ridge: ``ρ ≥ 0``.
      k_test_train: ``K(x*, X)``, ``(M, N)``.
      f0_train: ``f_0(X)``; ``None`` means 0.
      f0_test: ``f_0(x*)``; required when ``f0_train`` and ``k_test_train`` are given.

    Returns:
      :class:`Predictions` without a time axis.

    Raises:
      ValueError: on inconsistent shapes, a non-symmetric or indefinite kernel, or
        ``ridge < 0``.

    Examples:
      >>> import jax.numpy as jnp
      >>> kernel_ridge_regression(jnp.eye(2), jnp.array([2.0, 4.0]), ridge=1.0).train.tolist()
      [1.0, 2.0]
    """
    where = "kernel_ridge_regression"
    check_nonnegative(where, "ridge", ridge)
    ridge = require_nonnegative(where, "ridge", ridge)  # checked mode when traced
    prob = _problem(where, k_train_train, y_train, f0_train, k_test_train, f0_test)
    one_minus, phi = _krr_factors(prob.evals, jnp.asarray(ridge, prob.evals.dtype))
    return _predictions(prob, one_minus, phi, True)
