r"""Fine-tuning linear regression from a linear teacher (Shachaf, Brutzkus & Globerson 2021).

Setting (Sec 3): target inputs ``x ~ D`` with second moment ``Σ = V diag(λ) Vᵀ``
(``λ_1 ≥ … ≥ λ_d``), ``n < d`` target samples ``X ∈ R^{n×d}`` labelled by a linear teacher,
``y = X θ_T``; fine-tuning runs gradient descent on ``L(w) = (1/n)‖Xw − y‖²`` from the
pretrained weights ``w(0) = θ_S``. ``P_∥ = Xᵀ(XXᵀ)⁻¹X`` projects onto the row space of ``X``
and ``P_⊥ = I − P_∥`` onto its null space. Theorem 4.1 gives the limit ``γ`` of GD and its
population risk; Figure 1 compares ``v = θ_T − θ_S`` in the top vs the bottom eigenspace.

Conventions: ``x`` is ``(n, d)`` (rows are samples). Functions are pure, keep the input
dtype, and are ``jit``/``vmap``-compatible; value checks (rank, ordering) run only on concrete
inputs. Nothing here touches ``jax_enable_x64``: use ``with jax.enable_x64(True):``.

References:
  .. code-block:: bibtex

    @inproceedings{shachaf2021theoretical,
      title     = {A Theoretical Analysis of Fine-tuning with Linear Teachers},
      author    = {Shachaf, Gal and Brutzkus, Alon and Globerson, Amir},
      booktitle = {Advances in Neural Information Processing Systems},
      volume    = {34},
      year      = {2021},
      url       = {https://arxiv.org/abs/2107.01641},
    }

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
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int
from ntsim.core import covariance as _covariance
from ntsim.core import gaussian_inputs

__all__ = [
    "AlignmentDirections",
    "alignment_directions",
    "deterministic_equivalent_crossing",
    "deterministic_equivalent_risk",
    "fine_tuned_linear",
    "fine_tuned_linear_pinv",
    "gd_iterate_closed_form",
    "monte_carlo_risk",
    "nested_prefix_risks",
    "null_space_projector",
    "population_risk",
    "risk_curve_nested",
    "risk_thm4_1",
    "row_space_projector",
]

# Geometric bisection steps for κ: the bracket [λ_min(d−n)/n, λ_max(d−n)/n] has log-width
# log(λ_max/λ_min); 100 halvings shrink any width below 1e-16 relative (float64 round-off).
_BISECTION_STEPS = 100


# --------------------------------------------------------------------------- validation


def _check_data(where: str, x: ArrayLike, *, allow_square: bool = False) -> Array:
    """``x`` is ``(n, d)`` with ``n < d`` (Sec 3) and full row rank (Assumption 3.1)."""
    check_ndim(where, "x", x, 2)
    x = jnp.asarray(x)
    n, d = x.shape
    if n >= d + allow_square or n == 0:
        rule = "1 <= n <= d" if allow_square else "1 <= n < d (under-determined, Sec 3)"
        raise ValueError(f"{where}: x must have shape (n, d) with {rule}, got x.shape={x.shape}.")
    if _is_concrete(x):
        s = np.linalg.svd(np.asarray(x, dtype=np.float64), compute_uv=False)
        eps = np.finfo(np.asarray(x).dtype).eps
        if not np.all(np.isfinite(s)) or s[0] == 0 or s[-1] <= s[0] * max(n, d) * eps:
            raise ValueError(
                f"{where}: XXᵀ must be non-singular (Assumption 3.1: linearly independent rows "
                f"of x), got singular values in [{s[-1]:.3g}, {s[0]:.3g}], x.shape={x.shape}."
            )
    return x


def _shaped(where: str, name: str, a: ArrayLike, shape: tuple[int, ...]) -> Array:
    a = jnp.asarray(a)
    if a.shape != shape:
        raise ValueError(f"{where}: {name} must have shape {shape}, got {a.shape}.")
    return a


def _check_spectrum(where: str, spectrum: ArrayLike, *, sorted_: bool = False) -> Array:
    """Positive eigenvalues ``(d,)``; with ``sorted_``, non-increasing (λ_1 ≥ … ≥ λ_d)."""
    check_ndim(where, "spectrum", spectrum, 1)
    check_positive(where, "spectrum", spectrum)
    if sorted_ and _is_concrete(spectrum) and np.any(np.diff(np.asarray(spectrum)) > 0):
        raise ValueError(
            f"{where}: spectrum must be non-increasing (λ_1 ≥ … ≥ λ_d), got {spectrum}."
        )
    return jnp.asarray(spectrum)


# --------------------------------------------------------------------- Thm 4.1 and Sec 3


def _row_basis(x: Array) -> Array:
    """Orthonormal basis ``Q`` (d, n) of the row space from the thin QR ``Xᵀ = QR``."""
    return jnp.linalg.qr(x.T)[0]


def row_space_projector(x: ArrayLike) -> Array:
    r"""``P_∥ = Xᵀ(XXᵀ)⁻¹X``, the projector onto the row space of ``X`` (Sec 3).

    Computed as ``QQᵀ`` from the thin QR ``Xᵀ = QR`` (equal: ``Xᵀ(XXᵀ)⁻¹X =
    QR(RᵀR)⁻¹RᵀQᵀ``), which avoids squaring the condition number. ``x`` is ``(n, d)``,
    ``n < d``, with full row rank (Assumption 3.1; checked when concrete).

    Examples:
      >>> row_space_projector(jnp.array([[1.0, 1.0]])).round(6).tolist()
      [[0.5, 0.5], [0.5, 0.5]]
    """
    q = _row_basis(_check_data("row_space_projector", x))
    return q @ q.T


def null_space_projector(x: ArrayLike) -> Array:
    """``P_⊥ = I − P_∥``, the projector onto the null space of ``X`` (Sec 3).

    Examples:
      >>> null_space_projector(jnp.array([[1.0, 1.0]])).round(6).tolist()
      [[0.5, -0.5], [-0.5, 0.5]]
    """
    x = _check_data("null_space_projector", x)
    q = _row_basis(x)
    return jnp.eye(x.shape[1], dtype=q.dtype) - q @ q.T


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
    return e @ covariance @ e


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
    ``w(0) = θ_0`` (notes on Shachaf et al. 2021, Sec 1a), with ``γ = θ_0 + X⁺(y − Xθ_0)``
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

    The nested-prefix trick (notes on Shachaf et al. 2021, Sec 4): with the thin QR
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
    risk is the ridgeless bias (notes on Shachaf et al. 2021, E1; cf. Hastie et al. 2022):

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
    for ``n > n_×`` (notes on Shachaf et al. 2021, E1 [extension]).

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
