r"""Batched linear SVMs (hard and soft margin) by a primal-dual method, under ``jit``/``vmap``.

Two primal forms, for points ``x_i ∈ R^d`` with labels ``y_i = ±1`` and the score
``vᵀx − b`` (the sign convention of Fu et al. 2023, Sec 2.3):

* **augmented** (``penalize_bias=True``): the bias is a weight on the constant feature
  ``−1``. With ``z_i = [x_i; −1]`` and ``w = [v; b]``,

  .. math:: \min_w \tfrac12\|w\|^2 + \sum_i C_i \max(0, 1 - y_i w^\top z_i).

  Gradient descent on a separable logistic problem with the homogeneous predictor ``wᵀz``
  converges in direction to the hard-margin solution of this form (Soudry et al. 2018).
* **bias-free penalty** (``penalize_bias=False``), the textbook SVM and the one Fu et al.
  write (Lemma A.2.3, eq. (13)): ``½‖v‖²`` in place of ``½‖w‖²`` (its dual carries the
  equality ``Σ_i α_i y_i = 0``). scikit-learn's ``SVC(kernel="linear")`` solves this form.

Hard margin is ``C_i = ∞``; the soft margin of Lemma A.2.5 is ``C = 1/(2λm)``.

**Solver.** Both forms are the quadratic programme ``min ½wᵀPw + Σ C_i ξ_i`` subject to
``y_i wᵀz_i + ξ_i ≥ 1``, ``ξ ≥ 0`` (no ``ξ`` for hard margin), ``P = diag(1, …, 1, 1 or 0)``,
solved by Mehrotra's predictor-corrector primal-dual interior-point method (Nocedal & Wright
2006, Alg. 16.4), with the centring parameter σ = (μ_aff/μ)³ capped at ½ (uncapped, it
can fall into a period-4 cycle that stalls the KKT error; see ``_solve``). Each iteration
solves one ``(d+1) × (d+1)`` system
``(P + Σ_i a_i a_iᵀ/D_i) Δw = r``, so the cost is ``O(n d²)`` per iteration with no
sequential loop over points, and 15–40 iterations reach round-off (float64). It vectorises
under ``vmap``: the ``while_loop`` runs until every instance has converged. The dual
variables ``α`` are the multipliers of the margin constraints, ``v = Σ α_i y_i x_i``.

Points with ``sample_mask = False`` are removed by turning their constraint into
``0ᵀw ≥ −1`` (always slack, ``α_i = 0``), so the leave-one-out problems ``S^i`` are the
same-shape problem with one mask entry switched off: vmap over ``i`` with no reshaping.

Termination: the KKT error — max of the primal residual (functional-margin units), the
dual residual relative to ``1 + ‖w‖_∞``, and the mean complementarity product — falls
below ``tol``, or ``max_iter`` iterations ran, or round-off makes it non-finite; the best
iterate is returned, with its error as ``kkt_residual``.
Non-separable data have no hard-margin solution: the iterates then diverge and
``kkt_residual`` stays large (check it, or use the soft margin).

References:
  J. Nocedal, S. J. Wright (2006). Numerical Optimization, 2nd ed., Sec 16.6 (interior-point
  methods for quadratic programming). Springer.
  D. Soudry, E. Hoffer, M. S. Nacson, S. Gunasekar, N. Srebro (2018). The implicit bias of
  gradient descent on separable data. JMLR 19(70). arXiv:1710.10345.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int

__all__ = ["SVMSolution", "hard_margin_svm", "soft_margin_svm", "svm_primal_objective"]

# Default stopping tolerances on the KKT error, ~1e3·eps·n: reached in round-off for
# n = 2,000 points (measured: float64 stalls at 1e-10–1e-9 on the hardest of 500 problems);
# float64 solutions agree with independent solvers to ~1e-9. Prefer float64 for SVMs.
_DEFAULT_TOL = {np.dtype("float32"): 1e-4, np.dtype("float64"): 1e-9}
# Dual variables below this fraction of max α count as zero in ``support`` (interior-point
# multipliers of inactive constraints are ~tol/slack, i.e. ≤ 1e-9·max α at convergence).
_SUPPORT_RTOL = 1e-6


class SVMSolution(NamedTuple):
    """A linear SVM: the classifier ``sign(vᵀx − b)`` and its dual certificate.

    Attributes:
      weights: ``v``, shape ``(d,)``.
      bias: ``b`` (score ``vᵀx − b``), shape ``()``.
      dual: ``α``, shape ``(n,)``; 0 for masked points. ``v = Σ_i α_i y_i x_i`` (and
        ``b = −Σ_i α_i y_i`` in the augmented form).
      support: ``α_i > 1e-6·max α``, shape ``(n,)`` (boolean).
      margin: geometric margin of the returned hyperplane on the kept points,
        ``min_i y_i(vᵀx_i − b)/‖v‖`` (``= 1/‖v‖`` at a hard-margin optimum; negative if the
        soft-margin classifier misclassifies a point).
      kkt_residual: the final KKT error (compare with ``tol``).
      iterations: interior-point iterations run.
    """

    weights: Array
    bias: Array
    dual: Array
    support: Array
    margin: Array
    kkt_residual: Array
    iterations: Array


def _validate(where: str, x, y, sample_mask):
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.result_type(float))
    check_ndim(where, "x", x, 2)
    n = x.shape[0]
    y = jnp.asarray(y, x.dtype)
    if y.shape != (n,):
        raise ValueError(f"{where}: y must have shape ({n},) to match x {x.shape}, got {y.shape}.")
    if _is_concrete(y):
        values = np.unique(np.asarray(y))
        if not np.all(np.isin(values, (-1.0, 1.0))):
            raise ValueError(f"{where}: y must hold labels ±1, got values {values.tolist()}.")
    mask = jnp.ones((n,), bool) if sample_mask is None else jnp.asarray(sample_mask, bool)
    if mask.shape != (n,):
        raise ValueError(f"{where}: sample_mask must have shape ({n},), got {mask.shape}.")
    if _is_concrete(mask) and _is_concrete(y):
        kept = np.asarray(y)[np.asarray(mask)]
        if not (np.any(kept > 0) and np.any(kept < 0)):
            raise ValueError(f"{where}: the kept points (sample_mask) must contain both classes.")
    return x, y, mask


def _solve(x, y, upper, mask, *, penalize_bias, soft, tol, max_iter) -> SVMSolution:
    """Mehrotra predictor-corrector interior-point method on the primal; see the module doc."""
    n, d = x.shape
    dtype = x.dtype
    keep = mask.astype(dtype)
    # Constraint rows a_i = y_i [x_i; −1] ≥ 1; a removed point becomes 0ᵀw ≥ −1 (always slack).
    rows = keep[:, None] * (y[:, None] * jnp.concatenate([x, -jnp.ones((n, 1), dtype)], axis=1))
    rhs = jnp.where(mask, 1.0, -1.0).astype(dtype)
    quad = jnp.ones((d + 1,), dtype).at[-1].set(1.0 if penalize_bias else 0.0)  # diag of P
    cap = jnp.where(mask, upper, 1.0).astype(dtype) if soft else None
    num_pairs = n * (2 if soft else 1)

    def residuals(state):
        w, s, alpha, xi, zeta = state
        r_d = quad * w - rows.T @ alpha
        r_p = rows @ w + (xi if soft else 0.0) - s - rhs
        r_c = cap - alpha - zeta if soft else jnp.zeros((n,), dtype)
        gap = (s @ alpha + (xi @ zeta if soft else 0.0)) / num_pairs
        return r_d, r_p, r_c, gap

    def error(state):
        w = state[0]
        r_d, r_p, r_c, gap = residuals(state)
        scale = 1.0 + jnp.max(jnp.abs(w))
        return jnp.maximum(
            jnp.maximum(jnp.max(jnp.abs(r_p)), jnp.max(jnp.abs(r_d)) / scale),
            jnp.maximum(jnp.max(jnp.abs(r_c)), gap),
        )

    def newton(state, r_d, r_p, r_c, target_s, target_xi):
        """Solve the linearised KKT system; target_* are the complementarity right sides."""
        w, s, alpha, xi, zeta = state
        diag = s / alpha + (xi / zeta if soft else 0.0)
        g = -r_p + target_s / alpha
        if soft:
            g = g - (target_xi - xi * r_c) / zeta
        normal = jnp.diag(quad) + rows.T @ (rows / diag[:, None])
        dw = jnp.linalg.solve(normal, -r_d + rows.T @ (g / diag))
        dalpha = (g - rows @ dw) / diag
        ds = (target_s - s * dalpha) / alpha
        if soft:
            dzeta = r_c - dalpha
            dxi = (target_xi - xi * dzeta) / zeta
        else:
            dzeta = dxi = jnp.zeros((n,), dtype)
        return dw, ds, dalpha, dxi, dzeta

    def max_step(values, deltas):
        ratios = jnp.where(deltas < 0, -values / jnp.where(deltas < 0, deltas, -1.0), jnp.inf)
        return jnp.minimum(1.0, jnp.min(ratios))

    def step_lengths(state, delta):
        _, s, alpha, xi, zeta = state
        _, ds, dalpha, dxi, dzeta = delta
        primal = max_step(s, ds)
        dual = max_step(alpha, dalpha)
        if soft:
            primal = jnp.minimum(primal, max_step(xi, dxi))
            dual = jnp.minimum(dual, max_step(zeta, dzeta))
        return jnp.minimum(primal, dual)

    def iteration(carry):
        state, _, k = carry
        _, s, alpha, xi, zeta = state
        r_d, r_p, r_c, gap = residuals(state)
        zero = jnp.zeros((n,), dtype)
        # Predictor (affine scaling): drive the complementarity products to 0.
        aff = newton(state, r_d, r_p, r_c, -s * alpha, -xi * zeta if soft else zero)
        step = step_lengths(state, aff)
        _, ds, dalpha, dxi, dzeta = aff
        gap_aff = ((s + step * ds) @ (alpha + step * dalpha)) + (
            ((xi + step * dxi) @ (zeta + step * dzeta)) if soft else 0.0
        )
        # Mehrotra's centring σ = (μ_aff/μ)³, capped at ½: uncapped, σ can settle into a
        # period-4 cycle (σ ≈ 0.06, 0.7, 0.12, 0.7, …) that never lowers the KKT error below
        # 8e-2 (seen on 2 of ~9,000 planar leave-one-out problems, n = 8). With the cap each
        # corrector aims at least to halve μ. Mean iterations are unchanged; a referee's
        # ~9,000 problems had one (n = 200, d = 10) that now runs to max_iter and stops at
        # KKT 1.4e-9 (answer equal to SLSQP to 3e-13), above tol but below the claims' 1e-8.
        sigma = jnp.minimum((gap_aff / (num_pairs * gap)) ** 3, 0.5)
        # Corrector: centring σμ plus the second-order term of the predictor.
        target_s = sigma * gap - s * alpha - ds * dalpha
        target_xi = sigma * gap - xi * zeta - dxi * dzeta if soft else zero
        delta = newton(state, r_d, r_p, r_c, target_s, target_xi)
        step = 0.99 * step_lengths(state, delta)
        state = tuple(v + step * dv for v, dv in zip(state, delta, strict=True))
        return state, error(state), k + 1

    ones = jnp.ones((n,), dtype)
    alpha0 = jnp.minimum(ones, cap / 2) if soft else ones
    state0 = (
        jnp.zeros((d + 1,), dtype),
        ones,
        alpha0,
        ones if soft else jnp.zeros((n,), dtype),
        cap - alpha0 if soft else jnp.zeros((n,), dtype),
    )

    def run(carry):
        state, err, best, best_err, k = carry
        state, err, k = iteration((state, err, k))
        better = err < best_err  # keep the best iterate: round-off can end the descent
        best = jax.tree.map(lambda new, old: jnp.where(better, new, old), state, best)
        return state, err, best, jnp.where(better, err, best_err), k

    err0 = error(state0)
    _, _, state, err, iters = jax.lax.while_loop(
        lambda c: (c[3] > tol) & (c[4] < max_iter) & jnp.isfinite(c[1]),
        run,
        (state0, err0, state0, err0, jnp.zeros((), jnp.int32)),
    )
    w, _, alpha, _, _ = state
    alpha = jnp.where(mask, alpha, 0.0)
    weights, bias = w[:-1], w[-1]
    scores = y * (x @ weights - bias)
    margin = jnp.min(jnp.where(mask, scores, jnp.inf)) / jnp.linalg.norm(weights)
    support = alpha > _SUPPORT_RTOL * jnp.max(alpha)
    return SVMSolution(weights, bias, alpha, support, margin, err, iters)


def _tolerance(tol, dtype) -> float:
    if tol is None:
        return _DEFAULT_TOL.get(np.dtype(dtype), 1e-5)
    check_positive("svm", "tol", tol)
    return float(tol)


def hard_margin_svm(
    x: ArrayLike,
    y: ArrayLike,
    *,
    penalize_bias: bool = True,
    sample_mask: ArrayLike | None = None,
    tol: float | None = None,
    max_iter: int = 100,
) -> SVMSolution:
    r"""Hard-margin linear SVM of separable data, ``min ½‖w‖²`` s.t. ``y_i(vᵀx_i − b) ≥ 1``.

    With ``penalize_bias=True`` (default) ``‖w‖² = ‖v‖² + b²`` (the SVM of the augmented
    points ``[x_i; −1]``, the direction GD converges to, Soudry et al. 2018); with ``False``
    ``‖w‖² = ‖v‖²`` (the classical SVM, Fu et al. 2023, Lemma A.2.3, eq. (13)). The maximal
    geometric margin is ``γ = 1/‖v‖`` for the bias-free form.

    Args:
      x: points, shape ``(n, d)``.
      y: labels ``±1``, shape ``(n,)``.
      penalize_bias: penalise ``b`` (augmented form) or not.
      sample_mask: boolean ``(n,)``; ``False`` removes a point (leave-one-out sets).
      tol: KKT tolerance (default ``1e-9`` in float64, ``1e-4`` in float32).
      max_iter: cap on interior-point iterations (a static integer).

    Returns:
      :class:`SVMSolution`. Data that are not separable have no hard-margin solution: the
      iterates then diverge and ``kkt_residual`` stays large.

    Examples:
      >>> import jax.numpy as jnp
      >>> x = jnp.array([[2.0], [3.0], [-1.0], [-2.0]])
      >>> sol = hard_margin_svm(x, jnp.array([1.0, 1.0, -1.0, -1.0]), penalize_bias=False)
      >>> round(float(sol.weights[0]), 4), round(float(sol.bias), 4), round(float(sol.margin), 4)
      (0.6667, 0.3333, 1.5)
    """
    where = "hard_margin_svm"
    x, y, mask = _validate(where, x, y, sample_mask)
    max_iter = check_positive_int(where, "max_iter", max_iter)
    upper = jnp.full((x.shape[0],), jnp.inf, x.dtype)
    return _solve(
        x, y, upper, mask, penalize_bias=penalize_bias, soft=False, tol=_tolerance(tol, x.dtype),
        max_iter=max_iter,
    )  # fmt: skip


def soft_margin_svm(
    x: ArrayLike,
    y: ArrayLike,
    *,
    regularization: ArrayLike,
    penalize_bias: bool = True,
    sample_mask: ArrayLike | None = None,
    normalizer: ArrayLike | None = None,
    tol: float | None = None,
    max_iter: int = 100,
) -> SVMSolution:
    r"""λ-regularised hinge-loss SVM (Fu et al. 2023, Lemma A.2.5).

    .. math::
        \min_{v,b}\ \lambda\|w\|^2
        + \frac1m \sum_{i\ \mathrm{kept}} \max(0, 1 - y_i(v^\top x_i - b))

    with :math:`\lambda` = ``regularization``, :math:`m` = ``normalizer`` (default: the
    number of kept points, so ``S^i`` uses ``1/(n−1)`` as the paper writes; pass ``n`` for
    the ``1/n`` convention of the rigorous Cor 2.5) and ``‖w‖² = ‖v‖² + b²`` or ``‖v‖²``
    (``penalize_bias``). It equals ``½‖w‖² + C Σ hinge`` with ``C = 1/(2λm)``: scikit-learn's
    ``SVC(C=1/(2λm))`` solves the bias-free form.

    Args:
      x: points, shape ``(n, d)``.
      y: labels ``±1``, shape ``(n,)``.
      regularization: ``λ > 0`` (may be traced).
      penalize_bias: penalise ``b`` (``‖w‖² = ‖v‖² + b²``) or not (``‖w‖² = ‖v‖²``).
      sample_mask: boolean ``(n,)``; ``False`` removes a point (leave-one-out sets).
      normalizer: ``m > 0`` (may be traced); default ``Σ_i sample_mask_i``.
      tol: KKT tolerance (default ``1e-9`` in float64, ``1e-4`` in float32).
      max_iter: cap on interior-point iterations (a static integer).

    Returns:
      :class:`SVMSolution`.

    Examples:
      >>> import jax.numpy as jnp
      >>> x, y = jnp.array([[2.0], [-2.0]]), jnp.array([1.0, -1.0])
      >>> sol = soft_margin_svm(x, y, regularization=4.0, penalize_bias=False)
      >>> round(float(sol.weights[0]), 4)  # C = 1/16 caps α: v = 2·(1/16)·2
      0.25
    """
    where = "soft_margin_svm"
    x, y, mask = _validate(where, x, y, sample_mask)
    max_iter = check_positive_int(where, "max_iter", max_iter)
    check_positive(where, "regularization", regularization)
    m = jnp.sum(mask).astype(x.dtype) if normalizer is None else jnp.asarray(normalizer, x.dtype)
    if normalizer is not None:
        check_positive(where, "normalizer", normalizer)
    upper = jnp.broadcast_to(1.0 / (2.0 * jnp.asarray(regularization, x.dtype) * m), y.shape)
    return _solve(
        x, y, upper, mask, penalize_bias=penalize_bias, soft=True, tol=_tolerance(tol, x.dtype),
        max_iter=max_iter,
    )  # fmt: skip


def svm_primal_objective(
    weights: ArrayLike,
    bias: ArrayLike,
    x: ArrayLike,
    y: ArrayLike,
    *,
    regularization: ArrayLike,
    penalize_bias: bool = True,
    sample_mask: ArrayLike | None = None,
    normalizer: ArrayLike | None = None,
) -> Array:
    r"""The soft-margin objective ``λ‖w‖² + (1/m) Σ_kept max(0, 1 − y_i(vᵀx_i − b))``.

    Same conventions as :func:`soft_margin_svm` (Fu et al. 2023, Lemma A.2.5); useful to
    certify a solution or to evaluate ``𝓛_S`` at the leave-one-out solution.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(svm_primal_objective(jnp.array([1.0]), 0.0, jnp.array([[0.5]]),
      ...                            jnp.array([1.0]), regularization=0.5))
      1.0
    """
    x = jnp.asarray(x)
    y = jnp.asarray(y, x.dtype)
    weights = jnp.asarray(weights, x.dtype)
    bias = jnp.asarray(bias, x.dtype)
    mask = jnp.ones(y.shape, bool) if sample_mask is None else jnp.asarray(sample_mask, bool)
    m = jnp.sum(mask).astype(x.dtype) if normalizer is None else jnp.asarray(normalizer, x.dtype)
    hinge = jnp.maximum(0.0, 1.0 - y * (x @ weights - bias))
    norm2 = weights @ weights + (bias**2 if penalize_bias else 0.0)
    return regularization * norm2 + jnp.sum(jnp.where(mask, hinge, 0.0)) / m
