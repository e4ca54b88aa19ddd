"""Section 5: fine-tuning deep linear networks (Thms 5.2–5.5 of Shachaf et al. 2021).

A depth-``L`` linear network ``β = W_1 W_2 ⋯ W_L`` that is 0-balanced before pretraining
(Def. 5.1) and pretrained perfectly (``β(0) = θ_S``) converges under gradient flow on
``L(W) = (1/n)‖Xβ(W) − y‖²``, ``y = Xθ_T``, to ``β_L = c_L P_⊥θ_S + P_∥θ_T`` (Thm 5.2,
eq. (5)); ``c_L = (‖β_L‖/‖θ_S‖)^{(L−1)/L}`` is implicit and is found here from the scalar
root equation obtained by taking norms of both sides of (5) (``P_⊥ ⟂ P_∥``; derived
here, see :func:`deep_limit_scale`). ``L → ∞`` gives eq. (6),
``c_∞ = ‖P_∥θ_T‖/‖P_∥θ_S‖``. Also: the aligned-task risk of Thm 5.3 (eq. (8)), the
random-projection bounds of Thm 5.4 (eqs. (9), (10)) with a measured ``ε``, and the frozen
first layer of Thm 5.5.

Layer-wise GD needs no code here: it is :func:`ntsim.core.gradient_descent` on
``mse_loss(deep_linear(widths).apply, x, y, loss_scale=1/n)`` from
:func:`ntsim.core.balanced_deep_linear_params`; freezing ``W_1`` is GD on the other layers
with ``W_1`` closed over. The end-to-end view of the same flow, ``β̇ = −P_L(β)∇ℓ(β)``, is
the optax transformation :func:`end_to_end_preconditioner` (Arora, Cohen & Hazan 2018).

``depth`` may be a traced float and ``jnp.inf`` (eq. (6)); every function is pure ``jnp``
and vmappable. Value checks (``depth ≥ 1``, ``P_∥θ_S ≠ 0``, ``P_∥θ_T ≠ 0``) run only on
concrete inputs: under ``jit``/``vmap`` a degenerate instance gives NaN/Inf instead.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import _is_concrete, check_ndim
from ntsim.theory.linear_teachers._common import _check_data, _row_basis, _shaped

# Bisection on t = log(b/S) over [min(0, log c_∞), max(0, log c_∞)]: k halvings leave a
# width |log c_∞|·2^{-k}. Any finite float64 ratio has |log c_∞| < 1420, and 1420·2^{-64}
# ≈ 8e-17, below float64 round-off of b/S; float32 brackets are narrower still. So 64 steps
# give b to relative round-off for every representable instance (extra steps are no-ops).
_BISECTION_STEPS = 64


def _check_depth(where: str, depth: ArrayLike) -> Array:
    depth = jnp.asarray(depth)
    if depth.ndim != 0:
        raise ValueError(f"{where}: depth must be a scalar, got shape {depth.shape}.")
    if _is_concrete(depth) and not float(depth) >= 1.0:  # also rejects NaN
        raise ValueError(f"{where}: depth must be >= 1 (or jnp.inf), got {float(depth)!r}.")
    return depth


def _check_nonzero(where: str, name: str, value: ArrayLike, why: str) -> None:
    if _is_concrete(value) and not np.all(np.asarray(value) > 0):
        raise ValueError(f"{where}: {name} must be non-zero ({why}), got {value!r}.")


class DeepLimitScale(NamedTuple):
    """Solution of the root equation behind Thm 5.2, eq. (5).

    Attributes:
      norm: ``b = ‖β_L‖``, the norm of the fine-tuned end-to-end vector.
      coefficient: ``c_L = (b/S)^{(L−1)/L}``, the factor on ``P_⊥θ_S`` in eq. (5).
    """

    norm: Array
    coefficient: Array


def deep_limit_scale(
    source_null_norm: ArrayLike,
    source_row_norm: ArrayLike,
    target_row_norm: ArrayLike,
    depth: ArrayLike,
) -> DeepLimitScale:
    r"""Solve eq. (5) of Shachaf et al. 2021, Thm 5.2, for ``b = ‖β_L‖`` and ``c_L``.

    With ``A = ‖P_⊥θ_S‖`` (``source_null_norm``), ``C = ‖P_∥θ_S‖`` (``source_row_norm``),
    ``B = ‖P_∥θ_T‖`` (``target_row_norm``), ``S = ‖θ_S‖ = √(A² + C²)`` and
    ``c_∞ = B/C``, taking norms in eq. (5) gives ``b² = c_L²A² + B²``, i.e. ``b`` is a
    positive root of

    .. math::  h(b) = b^2 - (b/S)^{2(L-1)/L} A^2 - B^2 .

    The root is unique (``h(b)/b^p`` increases, ``p = 2(L−1)/L``) and lies in
    ``[S·min(1, c_∞), S·max(1, c_∞)]`` (``h(S) = C² − B²`` and
    ``h(S c_∞) = A²(c_∞² − c_∞^p)`` have opposite signs); ``c_L = (b/S)^{(L−1)/L}`` lies
    between 1 and ``c_∞`` (since ``b/S`` does). Found by bisection on ``log(b/S)`` in a
    ``lax.fori_loop`` (vmappable). ``L = 1`` gives ``c_1 = 1`` (Thm 4.1); ``L = 2`` gives
    ``b = (A²/S + √(A⁴/S² + 4B²))/2``; ``depth = jnp.inf`` returns ``c_∞`` exactly (eq. (6)).

    Args:
      source_null_norm: ``A ≥ 0``.
      source_row_norm: ``C > 0`` (``Xθ_S ≠ 0``).
      target_row_norm: ``B > 0`` (``y ≠ 0``).
      depth: ``L ≥ 1``, a scalar (float, may be traced, may be ``jnp.inf``).

    Returns:
      :class:`DeepLimitScale` ``(norm, coefficient)``.

    Examples:
      >>> s = deep_limit_scale(3.0, 4.0, 8.0, 2.0)  # S = 5, c_∞ = 2
      >>> round(float(s.norm), 4), round(float(s.coefficient), 4)
      (8.9505, 1.3379)
    """
    where = "deep_limit_scale"
    depth = _check_depth(where, depth)
    a, c, b_row = (jnp.asarray(v) for v in (source_null_norm, source_row_norm, target_row_norm))
    _check_nonzero(where, "source_row_norm", c, "P_∥θ_S = 0 makes c_∞ infinite")
    _check_nonzero(where, "target_row_norm", b_row, "the bracket needs c_∞ > 0")
    dtype = jnp.result_type(a, c, b_row, depth, float)
    a, c, b_row, depth = (v.astype(dtype) for v in (a, c, b_row, depth))
    s = jnp.hypot(a, c)
    a_rel, b_rel = a / s, b_row / s  # h(b)/S² in r = b/S: r² − r^p a_rel² − b_rel²
    c_inf = b_row / c
    q = 1.0 - 1.0 / depth  # (L − 1)/L; 1 at L = ∞
    log_c_inf = jnp.log(c_inf)

    def h_rel(t):
        r = jnp.exp(t)
        return r * r - jnp.exp(2.0 * q * t) * a_rel**2 - b_rel**2

    def body(_, bracket):
        lo, hi = bracket  # h_rel(lo) ≤ 0 ≤ h_rel(hi) (h increases through its root)
        mid = 0.5 * (lo + hi)
        neg = h_rel(mid) <= 0
        return jnp.where(neg, mid, lo), jnp.where(neg, hi, mid)

    # h(S) = C² − B² ≤ 0 iff c_∞ ≥ 1: then the root is in [0, log c_∞], else [log c_∞, 0].
    lo0, hi0 = jnp.minimum(0.0, log_c_inf), jnp.maximum(0.0, log_c_inf)
    lo, hi = jax.lax.fori_loop(0, _BISECTION_STEPS, body, (lo0, hi0))
    t = 0.5 * (lo + hi)
    coefficient = jnp.where(jnp.isinf(depth), c_inf, jnp.exp(q * t))
    norm = jnp.where(jnp.isinf(depth), s * c_inf, s * jnp.exp(t))
    return DeepLimitScale(norm, coefficient)


def _deep_parts(where: str, x, theta_source, theta_target, depth):
    """Projections, validated inputs and ``c_L`` shared by eq. (5) and its risk."""
    x = _check_data(where, x)
    d = x.shape[1]
    theta_source = _shaped(where, "theta_source", theta_source, (d,))
    theta_target = _shaped(where, "theta_target", theta_target, (d,))
    depth = _check_depth(where, depth)
    q = _row_basis(x)
    src_row, tgt_row = q.T @ theta_source, q.T @ theta_target  # coordinates in the row space
    src_null = theta_source - q @ src_row
    if _is_concrete(src_row) and _is_concrete(depth) and np.isinf(float(depth)):
        _check_nonzero(where, "P_∥θ_S", jnp.linalg.norm(src_row), "eq. (6) divides by it")
    scale = deep_limit_scale(
        jnp.linalg.norm(src_null), jnp.linalg.norm(src_row), jnp.linalg.norm(tgt_row), depth
    )
    return x, q, theta_source, theta_target, src_null, scale.coefficient


def deep_fine_tuned_limit(
    x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike, depth: ArrayLike
) -> Array:
    """``β_L = c_L P_⊥θ_S + P_∥θ_T`` (Shachaf et al. 2021, Thm 5.2, eqs. (5) and (6)).

    The gradient-flow limit of fine-tuning a 0-balanced depth-``L`` linear network from
    ``β(0) = θ_S`` on ``y = Xθ_T`` (Assumptions 3.1–3.3); ``c_L`` from
    :func:`deep_limit_scale`. ``depth = jnp.inf`` is eq. (6), ``c_∞ = ‖P_∥θ_T‖/‖P_∥θ_S‖``
    (``P_∥θ_S ≠ 0`` required, checked when concrete). ``depth = 1`` equals ``γ`` of Thm 4.1.
    Layer-wise GD reaches it only up to ``O(η)`` (eq. (5) is a gradient-flow result).

    Examples:
      >>> x = jnp.array([[1.0, 0.0]])
      >>> deep_fine_tuned_limit(x, jnp.array([1.0, 1.0]), jnp.array([3.0, 0.0]), jnp.inf).tolist()
      [3.0, 3.0]
    """
    _, q, _, theta_target, src_null, c = _deep_parts(
        "deep_fine_tuned_limit", x, theta_source, theta_target, depth
    )
    return c * src_null + q @ (q.T @ theta_target)


def deep_risk(
    x: ArrayLike,
    theta_source: ArrayLike,
    theta_target: ArrayLike,
    covariance: ArrayLike,
    depth: ArrayLike,
) -> Array:
    """``R(β_L) = ‖Σ^{1/2}P_⊥(θ_T − c_Lθ_S)‖²`` (Shachaf et al. 2021, Sec 5.1; eq. (7) at L = ∞).

    The population risk ``(θ_T − β_L)ᵀΣ(θ_T − β_L)`` of eq. (5): ``θ_T − β_L =
    P_⊥(θ_T − c_Lθ_S)``. ``depth = 1`` is eq. (2) of Thm 4.1; ``depth = jnp.inf`` is eq. (7).

    Examples:
      >>> x = jnp.array([[1.0, 0.0]])
      >>> float(deep_risk(x, jnp.array([1.0, 1.0]), jnp.array([3.0, 3.0]), jnp.eye(2), jnp.inf))
      0.0
    """
    where = "deep_risk"
    x, q, theta_source, theta_target, src_null, c = _deep_parts(
        where, x, theta_source, theta_target, depth
    )
    d = x.shape[1]
    covariance = _shaped(where, "covariance", covariance, (d, d))
    u = (theta_target - q @ (q.T @ theta_target)) - c * src_null
    return u @ covariance @ u


# -------------------------------------------------------------------------------- Thm 5.3


def aligned_risk_depth1(
    alpha: ArrayLike, x: ArrayLike, theta_target: ArrayLike, covariance: ArrayLike
) -> Array:
    """``R(γ) = ((α − 1)/α)² ‖Σ^{1/2}P_⊥θ_T‖²`` (Shachaf et al. 2021, Thm 5.3, eq. (8)).

    The ``L = 1`` risk when the tasks are aligned, ``θ_T = αθ_S`` with ``α > 0`` (then
    ``θ_T − θ_S = ((α − 1)/α)θ_T`` in eq. (2)); at ``L = ∞`` the risk is 0 (eq. (6)).

    Examples:
      >>> float(aligned_risk_depth1(2.0, jnp.array([[1.0, 0.0]]), jnp.array([2.0, 2.0]),
      ...                           jnp.eye(2)))
      1.0
    """
    where = "aligned_risk_depth1"
    x = _check_data(where, x)
    d = x.shape[1]
    theta_target = _shaped(where, "theta_target", theta_target, (d,))
    covariance = _shaped(where, "covariance", covariance, (d, d))
    alpha = jnp.asarray(alpha)
    if _is_concrete(alpha) and not np.all(np.asarray(alpha) > 0):
        raise ValueError(f"{where}: alpha must be positive (θ_T = αθ_S, α > 0), got {alpha!r}.")
    q = _row_basis(x)
    u = theta_target - q @ (q.T @ theta_target)
    return ((alpha - 1.0) / alpha) ** 2 * (u @ covariance @ u)


# -------------------------------------------------------------------------------- Thm 5.4


class RandomProjectionBounds(NamedTuple):
    """Bounds (9) and (10) of Thm 5.4 evaluated with the measured ``ε`` and ``ζ``.

    Attributes:
      epsilon: the measured ``ε`` (see :func:`random_projection_bounds`).
      zeta: ``ζ = ε‖θ_T‖``, the printed approximation ``ζ(‖θ_T‖) ≈ ε‖θ_T‖`` of eq. (9).
      eq9: ``((d−n)/d)(1+ε)²‖θ_T‖²‖θ̂_T − θ̂_S‖² + ((d−n)/d)ζ²``, bound on ``R(β_∞)``.
      eq10: ``((d−n)/d)(1+ε)²‖θ_T − θ_S‖²``, bound on ``R(γ)``.
      eq9_corrected: ``((d−n)/d)·4(1+ε)²/(1−ε)²·‖θ_T‖²‖θ̂_T − θ̂_S‖²`` (``ε < 1``), a
        bound on ``R(β_∞)`` that holds for every draw given the measured ``ε`` (derived
        below; the printed (9) with ``ζ = ε‖θ_T‖`` does not, see the claims).
    """

    epsilon: Array
    zeta: Array
    eq9: Array
    eq10: Array
    eq9_corrected: Array


def projection_epsilon(x: ArrayLike, vectors: ArrayLike) -> Array:
    """Measured two-sided random-projection deviation ``ε`` of ``P_⊥`` and ``P_∥``.

    Vershynin (2018), *High-Dimensional Probability*, Lemma 5.3.2: for the projection ``P``
    onto a uniformly random ``m``-dimensional subspace of ``R^d``,
    ``(1 − ε)√(m/d)‖u‖ ≤ ‖Pu‖ ≤ (1 + ε)√(m/d)‖u‖`` with probability
    ``≥ 1 − 2exp(−cε²m)``. Here ``ε`` is *measured*: the smallest ``ε ≥ 0`` for which this
    holds for ``P = P_⊥`` (``m = d − n``) and ``P = P_∥`` (``m = n``) and every row ``u`` of
    ``vectors`` (shape ``(k, d)``, non-zero rows), i.e. the largest of
    ``|‖P_⊥u‖/(√((d−n)/d)‖u‖) − 1|`` and ``|‖P_∥u‖/(√(n/d)‖u‖) − 1|``.

    Examples:
      >>> round(float(projection_epsilon(jnp.array([[1.0, 0.0]]), jnp.array([[1.0, 1.0]]))), 6)
      0.0
    """
    where = "projection_epsilon"
    x = _check_data(where, x)
    n, d = x.shape
    check_ndim(where, "vectors", vectors, 2)
    vectors = jnp.asarray(vectors)
    if vectors.shape[1] != d:
        raise ValueError(f"{where}: vectors must have shape (k, {d}), got {vectors.shape}.")
    q = _row_basis(x)
    norms = jnp.linalg.norm(vectors, axis=1)
    row = jnp.linalg.norm(vectors @ q, axis=1)
    null = jnp.linalg.norm(vectors - (vectors @ q) @ q.T, axis=1)
    dev_null = jnp.abs(null / (jnp.sqrt((d - n) / d) * norms) - 1.0)
    dev_row = jnp.abs(row / (jnp.sqrt(n / d) * norms) - 1.0)
    return jnp.maximum(jnp.max(dev_null), jnp.max(dev_row))


def random_projection_bounds(
    x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike
) -> RandomProjectionBounds:
    """Bounds (9) and (10) of Shachaf et al. 2021, Thm 5.4 (``Σ = I``), with measured ``ε``.

    ``ε = projection_epsilon(x, [θ_T − θ_S, θ̂_T − θ̂_S, θ̂_S, θ̂_T])``: the smallest ``ε``
    for which the two-sided concentration of Vershynin's Lemma 5.3.2 (the lemma the proof
    uses) holds for ``P_⊥`` and ``P_∥`` on every vector the proof projects. The printed
    ``ζ(‖θ_T‖) ≈ ε‖θ_T‖`` is taken literally, ``ζ = ε‖θ_T‖``. With this ``ε``, (10) is the
    lemma itself applied to ``θ_T − θ_S`` (``R(γ) = ‖P_⊥(θ_T − θ_S)‖²`` for ``Σ = I``);
    (9) is a statement about ``R(β_∞)`` of eq. (7). ``θ_T − θ_S`` and both must be non-zero.

    Corrected (9) [derived here]: with ``Δ = θ̂_T − θ̂_S`` and ``ρ = ‖P_∥θ̂_T‖/‖P_∥θ̂_S‖``,
    eq. (7) is ``R(β_∞) = ‖θ_T‖²‖P_⊥Δ + (1 − ρ)P_⊥θ̂_S‖²``; the reverse triangle inequality
    gives ``|1 − ρ| ≤ ‖P_∥Δ‖/‖P_∥θ̂_S‖ ≤ (1+ε)‖Δ‖/(1−ε)``, and the lemma bounds ``‖P_⊥Δ‖``
    and ``‖P_⊥θ̂_S‖``, so ``R(β_∞) ≤ ((d−n)/d)(1+ε)²‖θ_T‖²‖Δ‖²(2/(1−ε))²``: still only
    ``‖θ_T‖`` and the alignment, as the theorem says, but with a factor ``4/(1−ε)²`` in place
    of the printed additive ``ζ²`` (the cross term ``2(1−ρ)⟨P_⊥Δ, θ̂_S⟩`` is first order).

    Returns:
      :class:`RandomProjectionBounds` ``(epsilon, zeta, eq9, eq10)``.
    """
    where = "random_projection_bounds"
    x = _check_data(where, x)
    n, d = x.shape
    theta_source = _shaped(where, "theta_source", theta_source, (d,))
    theta_target = _shaped(where, "theta_target", theta_target, (d,))
    norm_t = jnp.linalg.norm(theta_target)
    unit_s, unit_t = theta_source / jnp.linalg.norm(theta_source), theta_target / norm_t
    vectors = jnp.stack([theta_target - theta_source, unit_t - unit_s, unit_s, unit_t])
    eps = projection_epsilon(x, vectors)
    frac = (d - n) / d
    zeta = eps * norm_t
    eq9 = frac * (1 + eps) ** 2 * norm_t**2 * jnp.sum((unit_t - unit_s) ** 2) + frac * zeta**2
    eq10 = frac * (1 + eps) ** 2 * jnp.sum((theta_target - theta_source) ** 2)
    lead = frac * (1 + eps) ** 2 * norm_t**2 * jnp.sum((unit_t - unit_s) ** 2)
    return RandomProjectionBounds(eps, zeta, eq9, eq10, lead * 4.0 / (1.0 - eps) ** 2)


# -------------------------------------------------------------------------------- Thm 5.5


def frozen_first_layer_coefficient(x: ArrayLike, y: ArrayLike, theta_source: ArrayLike) -> Array:
    """``c* = ⟨Xθ_S, y⟩/‖Xθ_S‖²``: the limit of fine-tuning with ``W_1`` frozen (Thm 5.5).

    With ``W_1 = s θ̂_S v_1ᵀ`` frozen (rank one, 0-balanced pretraining), ``β(t) = c(t)θ_S``
    for all ``t`` (Shachaf et al. 2021, Thm 5.5), so GD on the other layers minimises
    ``(1/n)‖cXθ_S − y‖²`` over the scalar ``c``: the least-squares ``c*`` (derived here).

    Examples:
      >>> float(frozen_first_layer_coefficient(jnp.eye(2), jnp.array([2.0, 0.0]),
      ...                                      jnp.array([1.0, 1.0])))
      1.0
    """
    where = "frozen_first_layer_coefficient"
    check_ndim(where, "x", x, 2)
    x = jnp.asarray(x)
    n, d = x.shape
    y = _shaped(where, "y", y, (n,))
    theta_source = _shaped(where, "theta_source", theta_source, (d,))
    z = x @ theta_source
    _check_nonzero(where, "Xθ_S", jnp.linalg.norm(z), "c* divides by ‖Xθ_S‖²")
    return (z @ y) / (z @ z)


def frozen_risk_floor(
    theta_source: ArrayLike, theta_target: ArrayLike, covariance: ArrayLike
) -> Array:
    """``min_c R(cθ_S) = θ_TᵀΣθ_T − (θ_SᵀΣθ_T)²/(θ_SᵀΣθ_S)`` (Thm 5.5; derived here).

    A lower bound, for every ``n``, on the risk of any model ``β = cθ_S``, in particular of
    fine-tuning with a frozen first layer.

    Examples:
      >>> float(frozen_risk_floor(jnp.array([1.0, 0.0]), jnp.array([1.0, 2.0]), jnp.eye(2)))
      4.0
    """
    where = "frozen_risk_floor"
    check_ndim(where, "theta_source", theta_source, 1)
    theta_source = jnp.asarray(theta_source)
    d = theta_source.shape[0]
    theta_target = _shaped(where, "theta_target", theta_target, (d,))
    covariance = _shaped(where, "covariance", covariance, (d, d))
    ss = theta_source @ covariance @ theta_source
    _check_nonzero(where, "θ_SᵀΣθ_S", ss, "the floor divides by it")
    st = theta_source @ covariance @ theta_target
    return theta_target @ covariance @ theta_target - st**2 / ss


def unit_pair_at_distance(
    key_source: PRNGKey, key_orthogonal: PRNGKey, d: int, distance: ArrayLike
) -> tuple[Array, Array]:
    """Random unit vectors ``(θ̂_S, θ̂_T)`` in ``R^d`` with ``‖θ̂_T − θ̂_S‖ = distance`` exactly.

    The alignment parameter of Thm 5.4 and Fig 2b (Shachaf et al. 2021): ``θ̂_S`` is uniform
    on the sphere (from ``key_source``), ``θ̂_T = cos·θ̂_S + sin·u`` with ``u ⊥ θ̂_S`` a uniform
    unit vector (from ``key_orthogonal``) and ``cos = 1 − distance²/2``, since
    ``‖θ̂_T − θ̂_S‖² = 2 − 2cos``. Needs ``0 ≤ distance ≤ 2``.
    """
    unit_s = jax.random.normal(key_source, (d,))
    unit_s = unit_s / jnp.linalg.norm(unit_s)
    perp = jax.random.normal(key_orthogonal, (d,))
    perp = perp - (perp @ unit_s) * unit_s
    perp = perp / jnp.linalg.norm(perp)
    cos = 1.0 - jnp.asarray(distance) ** 2 / 2
    return unit_s, cos * unit_s + jnp.sqrt(1.0 - cos**2) * perp


# ------------------------------------------------------------- end-to-end dynamics (5.2)


def end_to_end_preconditioner(depth: int) -> optax.GradientTransformation:
    r"""``g ↦ ‖β‖^{2−2/L}(g + (L−1)⟨g, β̂⟩β̂)``: the end-to-end dynamics of a balanced net.

    For a depth-``L`` linear network with scalar output that is 0-balanced, gradient flow on
    the layers moves the end-to-end vector ``β = W_1⋯W_L`` by
    ``β̇ = −‖β‖^{2−2/L}(∇ℓ(β) + (L−1)⟨∇ℓ(β), β̂⟩β̂)``, ``β̂ = β/‖β‖`` (Arora, Cohen & Hazan
    2018, Thm 1 / Claim 1 for a single output; the flow behind Shachaf et al. 2021, Thm 5.2).
    Chained with ``optax.sgd(η)`` this is the discrete end-to-end
    preconditioned GD ``β ← β − η P_L(β)∇ℓ(β)``, which tracks layer-wise GD from exactly
    balanced weights up to ``O(η)`` and converges to eq. (5).

    ``depth = 1`` is the identity (plain GD). At ``β = 0`` and ``L ≥ 2`` the update is 0.

    Args:
      depth: ``L ≥ 1`` (static).

    Examples:
      >>> import jax.numpy as jnp, optax
      >>> opt = optax.chain(end_to_end_preconditioner(2), optax.sgd(1.0))
      >>> beta, grad = jnp.array([3.0, 4.0]), jnp.array([1.0, 0.0])
      >>> updates, _ = opt.update(grad, opt.init(beta), beta)
      >>> [round(u, 4) for u in updates.tolist()]  # −5·([1, 0] + 0.6·[0.6, 0.8])
      [-6.8, -2.4]
    """
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ValueError(f"end_to_end_preconditioner: depth must be an integer ≥ 1, got {depth!r}.")
    power = 2.0 - 2.0 / depth

    def update(updates, state, params=None):
        if params is None:
            raise ValueError("end_to_end_preconditioner needs params (the current β).")
        norm = jnp.linalg.norm(params)
        unit = params / jnp.where(norm > 0, norm, 1.0)
        scale = norm**power if depth > 1 else jnp.ones_like(norm)
        return scale * (updates + (depth - 1) * (updates @ unit) * unit), state

    return optax.GradientTransformation(lambda params: optax.EmptyState(), update)
