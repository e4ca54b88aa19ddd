"""Figure 1: covariance alignment of the task difference, all-n risk curves, theory curve.

:func:`deterministic_equivalent_risk` is not in the paper: it is the standard ridgeless
deterministic equivalent of min-norm interpolation (cf. Hastie, Montanari, Rosset &
Tibshirani, "Surprises in high-dimensional ridgeless least squares interpolation",
Ann. Statist. 50(2), 2022, arXiv:1903.08560) for the effective target ``θ_T − θ_S``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_positive, check_positive_int
from ntsim.core import covariance as _covariance
from ntsim.core import gaussian_inputs
from ntsim.theory.linear_teachers._common import (
    _check_data,
    _check_spectrum,
    _row_basis,
    _shaped,
)

# Geometric bisection steps for κ: the bracket [λ_min(d−n)/n, λ_max(d−n)/n] has log-width
# log(λ_max/λ_min); 100 halvings shrink any width below 1e-16 relative (float64 round-off).
_BISECTION_STEPS = 100


# ------------------------------------------------------------------------------ Figure 1


class AlignmentDirections(NamedTuple):
    """The two task differences ``v = θ_T − θ_S`` of Figure 1 (same norm).

    Attributes:
      top_align: the paper's "Top Eigen Align", ``P_{≤m} v = 0``: ``v`` lies in the span of
        the bottom ``d − m`` eigenvectors (the tasks agree on the top eigenspace).
      bottom_align: the paper's "Bottom Eigen Align", ``P_{>m} v = 0``: ``v`` lies in the
        top-``m`` span. (The labels name where the tasks *agree*, not where ``v`` lives.)
    """

    top_align: Array
    bottom_align: Array


def alignment_directions(
    key: PRNGKey, spectrum: ArrayLike, top: int, *, norm: ArrayLike = 1.0, basis=None
) -> AlignmentDirections:
    """Random ``v`` in the bottom / top-``m`` eigenspace with ``‖v‖ = norm`` (Fig. 1, Sec 4.2).

    Each direction is uniform on the sphere of its subspace (a masked Gaussian, normalised).
    ``spectrum`` (``(d,)``, non-increasing) fixes ``d``; the top-``m`` span is that of the
    first ``top`` columns of ``basis`` (default ``I``: no loss of generality for Gaussian data),
    ``1 <= top < d`` (Fig. 1: 50). ``norm`` is unspecified in the paper; risk scales as norm².

    Examples:
      >>> import jax
      >>> dirs = alignment_directions(jax.random.key(0), jnp.array([2.0, 1.0, 1.0]), 1)
      >>> float(dirs.top_align[0]), float(dirs.bottom_align[1])
      (0.0, 0.0)
    """
    where = "alignment_directions"
    spectrum = _check_spectrum(where, spectrum, sorted_=True)
    d = spectrum.shape[0]
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 1 <= top < d:
        raise ValueError(f"{where}: top must be an integer with 1 <= top < d = {d}, got {top!r}.")
    check_positive(where, "norm", norm)
    in_top = jnp.arange(d) < top
    k_top, k_bottom = jax.random.split(key)

    def direction(k, mask):
        g = jnp.where(mask, jax.random.normal(k, (d,), spectrum.dtype), 0.0)
        c = norm * g / jnp.linalg.norm(g)
        return c if basis is None else _shaped(where, "basis", basis, (d, d)) @ c

    return AlignmentDirections(direction(k_top, ~in_top), direction(k_bottom, in_top))


def nested_prefix_risks(x: ArrayLike, covariance: ArrayLike, v: ArrayLike) -> Array:
    r"""``R_n = ‖Σ^{1/2} P_⊥^{(n)} v‖²`` (Thm 4.1, eq. (2)) for every prefix ``X_{1:n}``.

    The nested-prefix trick (derived here): with the thin QR
    ``Xᵀ = QR`` (``R`` upper triangular), ``q_1, …, q_n`` span the first ``n`` rows, so
    ``P_∥^{(n)} = Q_{≤n}Q_{≤n}ᵀ``. With ``a = Qᵀv``, ``s = QᵀΣv`` and ``M = QᵀΣQ``

    .. math::  R_n = v^\top\Sigma v - 2\sum_{k\le n} a_k s_k + \sum_{k,l\le n} a_k a_l M_{kl},

    the last sum as the prefix sum of ``a_l²M_ll + 2a_l Σ_{k<l} a_k M_kl``. One QR and
    ``O(d²N)`` work give all ``N`` risks.

    .. warning:: ``R_n`` is a difference of terms of size ``λ_max‖v‖²`` that falls to
       ``~0`` as ``n → d`` (exactly 0 at ``n = d``). In float32 the round-off
       (``~1e-7 · λ_max‖v‖² · √N``) is a visible fraction of small risks and can make them
       negative, so call this under ``jax.enable_x64(True)`` with float64 inputs.

    ``x`` is ``(N, d)``, ``N <= d``, full row rank; ``v = θ_T − θ_S`` is ``(d,)`` or ``(k, d)``
    (several ``v`` on one draw). Returns ``(N,)`` or ``(k, N)``: entry ``n − 1`` is ``R_n``.
    """
    where = "nested_prefix_risks"
    x = _check_data(where, x, allow_square=True)
    d = x.shape[1]
    covariance = _shaped(where, "covariance", covariance, (d, d))
    v = jnp.asarray(v)
    if v.ndim not in (1, 2) or v.shape[-1] != d:
        raise ValueError(f"{where}: v must have shape (d,) or (k, d) with d = {d}, got {v.shape}.")
    q = _row_basis(x)
    sigma_q = covariance @ q
    a, s, m = v @ q, v @ sigma_q, q.T @ sigma_q
    vsv = jnp.sum((v @ covariance) * v, axis=-1, keepdims=True)
    quad = a**2 * jnp.diagonal(m) + 2.0 * a * (a @ jnp.triu(m, 1))
    return vsv - 2.0 * jnp.cumsum(a * s, axis=-1) + jnp.cumsum(quad, axis=-1)


def risk_curve_nested(
    key: PRNGKey, spectrum: ArrayLike, v: ArrayLike, n_max: int, *, basis: ArrayLike | None = None
) -> Array:
    """``R(γ)`` for ``n = 1, …, n_max`` Gaussian samples from ONE draw (Thm 4.1, eq. (2)).

    Draws ``X ~ N(0, Σ)^{n_max}``, ``Σ = V diag(spectrum) Vᵀ`` (``V = basis``, default
    ``I``; ``1 <= n_max <= d``) and applies :func:`nested_prefix_risks` (float64 advised).
    Several ``v`` (``(k, d)``) share the draw, so their differences are less noisy. Returns
    ``(n_max,)`` or ``(k, n_max)``; entry ``n − 1`` is ``R(γ)`` after ``n`` samples.
    """
    where = "risk_curve_nested"
    spectrum = _check_spectrum(where, spectrum)
    n_max = check_positive_int(where, "n_max", n_max)
    if n_max > spectrum.shape[0]:
        raise ValueError(f"{where}: n_max must be <= d = {spectrum.shape[0]}, got {n_max}.")
    x = gaussian_inputs(key, n_max, spectrum, basis)
    return nested_prefix_risks(x, _covariance(spectrum, basis), v)


def _kappa(spectrum: Array, n: Array) -> Array:
    """κ > 0 with ``Σ_i λ_i/(λ_i + κ) = n`` by geometric bisection (``0 < n < d``)."""
    d = spectrum.shape[-1]
    lo = jnp.min(spectrum) * (d - n) / n  # each term >= λ_min/(λ_min+κ)  =>  κ >= lo
    hi = jnp.max(spectrum) * (d - n) / n  # each term <= λ_max/(λ_max+κ)  =>  κ <= hi

    def body(_, bounds):
        lo, hi = bounds
        mid = jnp.sqrt(lo * hi)
        too_small = jnp.sum(spectrum / (spectrum + mid[..., None]), axis=-1) > n
        return jnp.where(too_small, mid, lo), jnp.where(too_small, hi, mid)

    lo, hi = jax.lax.fori_loop(0, _BISECTION_STEPS, body, (lo, hi))
    return jnp.sqrt(lo * hi)


def deterministic_equivalent_risk(
    spectrum: ArrayLike, v_squared_per_eigen: ArrayLike, n: ArrayLike
) -> Array:
    r"""Deterministic equivalent of ``E R(γ)`` for Gaussian data [extension, not in the paper].

    Fine-tuning from ``θ_S`` is min-norm interpolation of the target ``v = θ_T − θ_S``, whose
    risk is the ridgeless bias (Hastie et al. 2022, applied to ``v``):

    .. math::  R \approx \frac{\kappa^2 \sum_i \lambda_i v_i^2/(\lambda_i+\kappa)^2}
               {1 - \frac{1}{n}\sum_i \lambda_i^2/(\lambda_i+\kappa)^2},
               \qquad \sum_i \frac{\lambda_i}{\lambda_i+\kappa} = n,

    with :math:`\lambda_i` = ``spectrum`` and :math:`v_i^2` = ``v_squared_per_eigen`` (the
    squared coordinates of ``v`` in the eigenbasis). For ``Σ = I`` it is exactly
    ``((d − n)/d)‖v‖²`` (``κ = (d−n)/n``); for ``n >= d`` it is 0 (unique interpolant).
    It is exact as ``n, d → ∞`` at fixed ``n/d``. ``n > 0`` may have any shape (the result
    has its shape) and need not be an integer; κ is found by bisection, so everything is
    ``jit``/``vmap``-able.

    Examples:
      >>> float(deterministic_equivalent_risk(jnp.ones(10), jnp.full(10, 0.1), 4))  # 6/10
      0.6000000238418579
    """
    where = "deterministic_equivalent_risk"
    spectrum = _check_spectrum(where, spectrum)
    d = spectrum.shape[0]
    v2 = _shaped(where, "v_squared_per_eigen", v_squared_per_eigen, (d,))
    check_positive(where, "n", n)
    n = jnp.asarray(n, spectrum.dtype)
    n_safe = jnp.minimum(n, d - 0.5)  # keeps the unused branch finite for n >= d
    kappa = _kappa(spectrum, n_safe)[..., None]
    ratio = spectrum / (spectrum + kappa)
    numerator = jnp.sum(kappa**2 * spectrum * v2 / (spectrum + kappa) ** 2, axis=-1)
    denominator = 1.0 - jnp.sum(ratio**2, axis=-1) / n_safe
    return jnp.where(n < d, numerator / denominator, 0.0)


def deterministic_equivalent_crossing(
    top_value: ArrayLike, bottom_value: ArrayLike, d: int, top: int
) -> Array:
    """Sample size where the two Fig. 1 curves cross, by :func:`deterministic_equivalent_risk`.

    For a two-level spectrum (``top`` eigenvalues ``λ_t``, ``d − top`` eigenvalues ``λ_b``)
    and ``v`` entirely in one block, the two risks share the denominator and are equal iff
    ``λ_t/(λ_t+κ)² = λ_b/(λ_b+κ)²``, i.e. ``κ_× = √(λ_t λ_b)``; then
    ``n_× = top·λ_t/(λ_t+κ_×) + (d−top)·λ_b/(λ_b+κ_×)``. Bottom-align has the smaller risk
    for ``n > n_×`` (an extension derived here, not in the paper).

    Examples:
      >>> round(float(deterministic_equivalent_crossing(1.5, 0.3, 1000, 50)), 1)
      328.1
    """
    where = "deterministic_equivalent_crossing"
    check_positive(where, "top_value", top_value)
    check_positive(where, "bottom_value", bottom_value)
    d = check_positive_int(where, "d", d)
    top = check_positive_int(where, "top", top)
    if top >= d:
        raise ValueError(f"{where}: top must be < d = {d}, got {top}.")
    kappa = jnp.sqrt(jnp.asarray(top_value) * bottom_value)
    return top * top_value / (top_value + kappa) + (d - top) * bottom_value / (bottom_value + kappa)
