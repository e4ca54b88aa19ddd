r"""Theorem 4.2: bounds on the fine-tuning risk ``R(γ)`` through ``‖Σ̃ − Σ‖`` (Sec 4).

Shachaf et al. 2021, Thm 4.2, eq. (3): for sub-Gaussian rows, with probability ``1 − e^{−δ}``

.. math::  R(\gamma) \le 2g^3\frac{\|P_{\le m}v\|^2}{\lambda_m^2} + 2g\|P_{>m}v\|^2,
           \qquad g = c\lambda_1\max\Big\{\sqrt{\tfrac{r_0}{n}}, \tfrac{r_0}{n},
           \sqrt{\tfrac{\delta}{n}}, \tfrac{\delta}{n}\Big\},

``v = θ_T − θ_S``, ``r_0 = Σ_iλ_i/λ_1`` (effective rank), ``‖Σ̃ − Σ‖ ≤ g``, ``c`` unknown.

The proof holds for every ``X`` once ``g`` is replaced by the realised deviation
``ĝ = ‖Σ̃ − Σ‖₂``, ``Σ̃ = XᵀX/n`` (derived here from the proof of Thm 4.2); it has two steps:

* Davis–Kahan: ``P_⊥Σ̃ = 0`` gives ``P_⊥V_{≤m}Λ_{≤m} = P_⊥(Σ − Σ̃)V_{≤m}``, so
  ``‖P_⊥V_{≤m}‖₂ ≤ ĝ/λ_m`` (:func:`null_space_top_overlap` vs ``ĝ/λ_m``);
* ``R(γ) = uᵀP_⊥ΣP_⊥u = uᵀP_⊥(Σ − Σ̃)P_⊥u ≤ ĝ‖P_⊥v‖²`` (:func:`risk_null_space_bound`);

then ``‖P_⊥v‖² ≤ 2‖P_⊥V_{≤m}‖²‖P_{≤m}v‖² + 2‖P_{>m}v‖²`` gives
:func:`bound_thm4_2_deterministic`. The eigenvalues ``λ`` are sorted non-increasingly and
the bound is returned for every ``m = 1..d`` at once (``inf`` where ``λ_m = 0``); any
orthonormal eigenbasis of a repeated eigenvalue gives a valid bound.

Also here: the bias bound of Bartlett, Long, Lugosi & Tsigler, "Benign overfitting in linear
regression", PNAS 117(48), 2020, Thm 4 (as adapted by the paper, Sec 4.2, footnote 1) and the
``R²`` used by Table 1.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int
from ntsim.theory.linear_teachers._common import _check_data, _row_basis, _shaped

__all__ = [
    "bartlett_bias_bound",
    "bound_thm4_2",
    "bound_thm4_2_deterministic",
    "bound_thm4_2_prefixes",
    "bound_thm4_2_printed",
    "deviation_bound_thm4_2",
    "eigen_split_norms",
    "effective_rank",
    "implied_constant",
    "min_norm_least_squares",
    "null_space_top_overlap",
    "r_squared",
    "realised_deviation",
    "realised_deviation_spiked",
    "risk_null_space_bound",
    "second_moment",
    "zero_one_error",
]


# --------------------------------------------------------------------------- helpers


def _check_samples(where: str, x: ArrayLike) -> Array:
    """``x`` is ``(n, d)`` with ``n >= 1`` (any ``n``: ĝ needs no rank condition)."""
    check_ndim(where, "x", x, 2)
    x = jnp.asarray(x)
    if x.shape[0] == 0:
        raise ValueError(f"{where}: x must have at least one row, got x.shape={x.shape}.")
    return x


def _check_covariance(where: str, covariance: ArrayLike, d: int | None = None) -> Array:
    check_ndim(where, "covariance", covariance, 2)
    covariance = jnp.asarray(covariance)
    d = covariance.shape[0] if d is None else d
    covariance = _shaped(where, "covariance", covariance, (d, d))
    if _is_concrete(covariance):
        c = np.asarray(covariance, dtype=np.float64)
        scale = max(float(np.abs(c).max()), 1.0)
        if not np.all(np.isfinite(c)) or not np.allclose(c, c.T, atol=1e-6 * scale):
            raise ValueError(f"{where}: covariance must be a finite symmetric (d, d) matrix.")
        if np.linalg.eigvalsh(c)[0] < -1e-6 * scale:
            raise ValueError(
                f"{where}: covariance must be positive semi-definite, got smallest eigenvalue "
                f"{np.linalg.eigvalsh(c)[0]:.3g}."
            )
    return covariance


def _check_nonneg_spectrum(where: str, spectrum: ArrayLike) -> Array:
    """Eigenvalues ``(d,)``, ``≥ 0``, non-increasing, ``λ_1 > 0`` (checked when concrete)."""
    check_ndim(where, "spectrum", spectrum, 1)
    spectrum = jnp.asarray(spectrum)
    if _is_concrete(spectrum):
        s = np.asarray(spectrum)
        if s.size == 0 or not np.all(np.isfinite(s)) or np.any(s < 0) or s[0] <= 0:
            raise ValueError(
                f"{where}: spectrum must be finite, non-negative with λ_1 > 0, got {spectrum}."
            )
        if np.any(np.diff(s) > 0):
            raise ValueError(f"{where}: spectrum must be non-increasing, got {spectrum}.")
    return spectrum


def _eigh_descending(covariance: Array) -> tuple[Array, Array]:
    """``(λ, V)`` with ``λ_1 ≥ … ≥ λ_d`` and ``V`` the matching eigenvector columns."""
    values, vectors = jnp.linalg.eigh(covariance)
    return values[::-1], vectors[:, ::-1]


def _task_difference(where: str, theta_source, theta_target, d: int) -> Array:
    return _shaped(where, "theta_target", theta_target, (d,)) - _shaped(
        where, "theta_source", theta_source, (d,)
    )


# ------------------------------------------------------------------- ĝ = ‖Σ̃ − Σ‖₂


def realised_deviation(x: ArrayLike, covariance: ArrayLike) -> Array:
    """``ĝ = ‖Σ̃ − Σ‖₂`` with ``Σ̃ = XᵀX/n`` (the quantity ``g`` bounds in Thm 4.2).

    The largest absolute eigenvalue of the symmetric ``XᵀX/n − Σ`` (one ``d × d``
    ``eigvalsh``). ``x`` is ``(n, d)``, any ``n >= 1``; ``covariance`` is ``Σ`` ``(d, d)``.

    Examples:
      >>> round(float(realised_deviation(jnp.array([[2.0, 0.0]]), jnp.eye(2))), 5)
      3.0
    """
    where = "realised_deviation"
    x = _check_samples(where, x)
    n, d = x.shape
    covariance = _check_covariance(where, covariance, d)
    return jnp.max(jnp.abs(jnp.linalg.eigvalsh(x.T @ x / n - covariance)))


def realised_deviation_spiked(
    x: ArrayLike, spectrum: ArrayLike, top: int, basis: ArrayLike | None = None
) -> Array:
    r"""``ĝ = ‖Σ̃ − Σ‖₂`` for a spiked ``Σ = V diag(λ)Vᵀ`` with ``λ_{top+1} = … = λ_d = b``.

    Same value as :func:`realised_deviation`, cheaper when ``n + top < d`` (Fig. 1). With
    ``Σ = bI + V_k diag(λ_{≤k} − b)V_kᵀ`` (``k = top``) and ``W = [X/√n; diag(λ_{≤k} −
    b)^{1/2}V_kᵀ]``, ``J = diag(I_n, −I_k)``: ``Σ̃ − Σ + bI = WᵀJW = Q(RJRᵀ)Qᵀ`` for the thin
    QR ``Wᵀ = QR``, so the eigenvalues of ``Σ̃ − Σ`` are ``eig(RJRᵀ) − b`` plus ``−b``
    (``d − n − k`` times). Cost ``O(d(n+k)²)`` instead of ``O(d³)``; for ``n + k >= d`` it
    falls back to the dense route. Requires ``λ_k > b`` (checked when concrete).
    """
    where = "realised_deviation_spiked"
    x = _check_samples(where, x)
    n, d = x.shape
    spectrum = _check_nonneg_spectrum(where, _shaped(where, "spectrum", spectrum, (d,)))
    top = check_positive_int(where, "top", top)
    if top >= d:
        raise ValueError(f"{where}: top must be < d = {d}, got {top}.")
    if _is_concrete(spectrum):
        s = np.asarray(spectrum)
        if not np.allclose(s[top:], s[top]) or s[top - 1] <= s[top]:
            raise ValueError(
                f"{where}: spectrum must be spiked: λ_1 ≥ … ≥ λ_top > λ_(top+1) = … = λ_d, "
                f"got {spectrum}."
            )
    v_top = jnp.eye(d, top, dtype=x.dtype) if basis is None else jnp.asarray(basis)[:, :top]
    bottom = spectrum[top]
    if n + top >= d:
        sigma = (v_top * (spectrum[:top] - bottom)) @ v_top.T + bottom * jnp.eye(d, dtype=x.dtype)
        return realised_deviation(x, sigma)
    w = jnp.concatenate([x / jnp.sqrt(n), (v_top * jnp.sqrt(spectrum[:top] - bottom)).T])
    r = jnp.linalg.qr(w.T)[1]
    signs = jnp.concatenate([jnp.ones(n, x.dtype), -jnp.ones(top, x.dtype)])
    eig = jnp.linalg.eigvalsh((r * signs) @ r.T) - bottom
    return jnp.maximum(jnp.max(jnp.abs(eig)), bottom)


# ------------------------------------------------------------------ deterministic Thm 4.2


def eigen_split_norms(covariance: ArrayLike, v: ArrayLike) -> tuple[Array, Array, Array]:
    """``(λ, ‖P_{≤m}v‖², ‖P_{>m}v‖²)`` for ``m = 1..d`` (entry ``m − 1``), λ non-increasing.

    ``P_{≤m} = V_{≤m}V_{≤m}ᵀ`` projects onto the top-``m`` eigenvectors of ``Σ`` (Sec 3).
    Both sums are cumulative sums of ``(Vᵀv)²`` (the tail one from the end, no cancellation).

    Examples:
      >>> lam, top, bottom = eigen_split_norms(jnp.diag(jnp.array([1.0, 3.0])),
      ...                                      jnp.array([1.0, 2.0]))
      >>> lam.tolist(), top.tolist(), bottom.tolist()
      ([3.0, 1.0], [4.0, 5.0], [1.0, 0.0])
    """
    where = "eigen_split_norms"
    covariance = _check_covariance(where, covariance)
    v = _shaped(where, "v", v, (covariance.shape[0],))
    spectrum, vectors = _eigh_descending(covariance)
    coords = (vectors.T @ v) ** 2
    top = jnp.cumsum(coords)
    bottom = jnp.concatenate([jnp.cumsum(coords[::-1])[::-1][1:], jnp.zeros(1, coords.dtype)])
    return spectrum, top, bottom


def bound_thm4_2(
    g: ArrayLike, spectrum: ArrayLike, top_norm_sq: ArrayLike, bottom_norm_sq: ArrayLike
) -> Array:
    r"""``2g³‖P_{≤m}v‖²/λ_m² + 2g‖P_{>m}v‖²`` for every ``m`` (Thm 4.2, eq. (3)).

    The combination shared by :func:`bound_thm4_2_deterministic` (``g = ĝ``) and
    :func:`bound_thm4_2_printed` (``g = g(λ, δ, n)``). ``spectrum``, ``top_norm_sq`` and
    ``bottom_norm_sq`` are ``(d,)`` (as from :func:`eigen_split_norms`); ``g`` is a scalar.
    Where ``λ_m <= 0`` the theorem says nothing and the entry is ``inf``.

    Examples:
      >>> bound_thm4_2(1.0, jnp.array([2.0, 0.0]), jnp.array([4.0, 5.0]),
      ...              jnp.array([1.0, 0.0])).tolist()
      [4.0, inf]
    """
    g = jnp.asarray(g)
    spectrum = jnp.asarray(spectrum)
    safe = jnp.where(spectrum > 0, spectrum, 1.0)
    value = 2.0 * g**3 * jnp.asarray(top_norm_sq) / safe**2 + 2.0 * g * bottom_norm_sq
    return jnp.where(spectrum > 0, value, jnp.inf)


def bound_thm4_2_deterministic(
    x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike, covariance: ArrayLike
) -> Array:
    """Constant-free Thm 4.2 (eq. (3) with ``g = ĝ = ‖Σ̃ − Σ‖₂``) for ``m = 1..d``.

    Holds for every ``X`` (module doc: derived from the proof of Thm 4.2): returns
    ``(d,)``, entry ``m − 1`` bounds ``R(γ)`` of :func:`risk_thm4_1` (``inf`` if ``λ_m = 0``).
    """
    where = "bound_thm4_2_deterministic"
    x = _check_samples(where, x)
    d = x.shape[1]
    covariance = _check_covariance(where, covariance, d)
    v = _task_difference(where, theta_source, theta_target, d)
    spectrum, top, bottom = eigen_split_norms(covariance, v)
    return bound_thm4_2(realised_deviation(x, covariance), spectrum, top, bottom)


def null_space_top_overlap(x: ArrayLike, covariance: ArrayLike) -> Array:
    """``‖P_⊥V_{≤m}‖₂`` for ``m = 1..d`` (the Davis–Kahan quantity of Thm 4.2's proof).

    With ``G = VᵀP_⊥V`` (eigenbasis of ``Σ``, descending), ``‖P_⊥V_{≤m}‖₂² = λ_max(G_{≤m,≤m})``.
    For ``m > n`` it is 1 (``V_{≤m}`` meets ``null(X)``), so only the leading ``n × n``
    blocks are diagonalised (masked, vmap-friendly): ``O(n⁴ + d²n)``. ``x`` is ``(n, d)``,
    ``n < d``, full row rank. Bound: ``≤ ĝ/λ_m`` (module doc).
    """
    where = "null_space_top_overlap"
    x = _check_data(where, x)
    n, d = x.shape
    covariance = _check_covariance(where, covariance, d)
    _, vectors = _eigh_descending(covariance)
    b = vectors.T @ _row_basis(x)  # (d, n); G = I − BBᵀ
    g = jnp.eye(n, dtype=b.dtype) - b[:n] @ b[:n].T
    idx = jnp.arange(n)
    masks = (idx[None, :] <= idx[:, None]).astype(g.dtype)  # row m−1: the first m indices
    blocks = masks[:, :, None] * g[None] * masks[:, None, :]
    lead = jnp.max(jnp.linalg.eigvalsh(blocks), axis=-1)
    overlap_sq = jnp.concatenate([jnp.clip(lead, 0.0, 1.0), jnp.ones(d - n, g.dtype)])
    return jnp.sqrt(overlap_sq)


def risk_null_space_bound(
    x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike, covariance: ArrayLike
) -> Array:
    """``ĝ‖P_⊥v‖²``, an upper bound on ``R(γ) = ‖Σ^{1/2}P_⊥v‖²`` (step of Thm 4.2's proof)."""
    where = "risk_null_space_bound"
    x = _check_data(where, x)
    d = x.shape[1]
    covariance = _check_covariance(where, covariance, d)
    v = _task_difference(where, theta_source, theta_target, d)
    q = _row_basis(x)
    u = v - q @ (q.T @ v)
    return realised_deviation(x, covariance) * (u @ u)


# ---------------------------------------------------------------- printed Thm 4.2, eq. (3)


def effective_rank(spectrum: ArrayLike) -> Array:
    """``r_0 = Σ_i λ_i / λ_1`` (Koltchinskii & Lounici; Bartlett et al. 2020, Def. 3 k = 0).

    Examples:
      >>> float(effective_rank(jnp.array([2.0, 1.0, 1.0])))
      2.0
    """
    spectrum = _check_nonneg_spectrum("effective_rank", spectrum)
    return jnp.sum(spectrum) / jnp.max(spectrum)


def _rate(spectrum: Array, n: ArrayLike, delta: ArrayLike) -> Array:
    """``max{√(r_0/n), r_0/n, √(δ/n), δ/n}`` (Thm 4.2's ``g`` without ``cλ_1``)."""
    n = jnp.asarray(n, spectrum.dtype)
    r0 = effective_rank(spectrum)
    a, b = r0 / n, jnp.asarray(delta, spectrum.dtype) / n
    return jnp.maximum(jnp.maximum(jnp.sqrt(a), a), jnp.maximum(jnp.sqrt(b), b))


def deviation_bound_thm4_2(
    spectrum: ArrayLike, n: ArrayLike, *, c: ArrayLike, delta: ArrayLike
) -> Array:
    r"""``g(λ, δ, n) = cλ_1 max{√(r_0/n), r_0/n, √(δ/n), δ/n}`` (Thm 4.2, below eq. (3)).

    ``spectrum`` ``(d,)`` non-increasing, ``≥ 0``; ``n > 0`` any shape; ``c > 0`` is the
    theorem's unknown absolute constant and ``δ >= 1`` sets the failure probability
    ``e^{−δ}`` (both explicit; the paper does not say which values its Table 1 used, and
    ``c = δ = 1`` is this project's default).

    Examples:
      >>> float(deviation_bound_thm4_2(jnp.array([2.0, 1.0, 1.0]), 8, c=1.0, delta=1.0))
      1.0
    """
    where = "deviation_bound_thm4_2"
    spectrum = _check_nonneg_spectrum(where, spectrum)
    check_positive(where, "n", n)
    check_positive(where, "c", c)
    if _is_concrete(delta) and not np.all(np.asarray(delta) >= 1):
        raise ValueError(f"{where}: delta must be >= 1 (Thm 4.2), got {delta!r}.")
    return c * jnp.max(spectrum) * _rate(spectrum, n, delta)


def bound_thm4_2_printed(
    covariance: ArrayLike,
    theta_source: ArrayLike,
    theta_target: ArrayLike,
    n: ArrayLike,
    *,
    c: ArrayLike,
    delta: ArrayLike,
) -> Array:
    """The printed high-probability bound (3) for ``m = 1..d`` with ``g = g(λ, δ, n)``.

    Valid with probability ``>= 1 − e^{−δ}`` only for the theorem's unknown ``c``
    (:func:`deviation_bound_thm4_2`); ``n`` is a scalar. Returns ``(d,)`` (``inf`` where
    ``λ_m = 0``).
    """
    where = "bound_thm4_2_printed"
    covariance = _check_covariance(where, covariance)
    v = _task_difference(where, theta_source, theta_target, covariance.shape[0])
    spectrum, top, bottom = eigen_split_norms(covariance, v)
    spectrum = jnp.clip(spectrum, 0.0)  # round-off negatives of a PSD Σ
    g = deviation_bound_thm4_2(spectrum, n, c=c, delta=delta)
    return bound_thm4_2(g, spectrum, top, bottom)


def implied_constant(x: ArrayLike, covariance: ArrayLike, *, delta: ArrayLike) -> Array:
    """``ĝ / (λ_1 max{√(r_0/n), r_0/n, √(δ/n), δ/n})``: the ``c`` making ``ĝ = g`` exactly.

    If Thm 4.2's rate is right, this is ``O(1)`` uniformly in ``n``.

    Examples:
      >>> round(float(implied_constant(jnp.array([[2.0, 0.0]]), jnp.eye(2), delta=1.0)), 5)
      1.5
    """
    where = "implied_constant"
    x = _check_samples(where, x)
    n, d = x.shape
    covariance = _check_covariance(where, covariance, d)
    if _is_concrete(delta) and not np.all(np.asarray(delta) >= 1):
        raise ValueError(f"{where}: delta must be >= 1 (Thm 4.2), got {delta!r}.")
    spectrum = jnp.clip(jnp.linalg.eigvalsh(covariance)[::-1], 0.0)
    return realised_deviation(x, covariance) / (spectrum[0] * _rate(spectrum, n, delta))


# ------------------------------------------------------------ Table 1: other predictors


def bartlett_bias_bound(
    covariance: ArrayLike,
    theta_source: ArrayLike,
    theta_target: ArrayLike,
    n: ArrayLike,
    *,
    c: ArrayLike,
    delta: ArrayLike,
) -> Array:
    r"""``c‖v‖²‖Σ‖ max{√(r_0/n), r_0/n, √(log(1/δ)/n)}``, ``v = θ_T − θ_S``.

    The bias term of Bartlett et al. 2020, Thm 4 with ``θ* → θ_T − θ_S`` and no label
    noise (the adaptation of the paper's Sec 4.2, footnote 1). ``δ ∈ (0, 1]`` is
    the failure probability (``δ = e^{−1}`` matches Thm 4.2's ``δ = 1``); ``c > 0`` the
    unknown constant.
    """
    where = "bartlett_bias_bound"
    covariance = _check_covariance(where, covariance)
    v = _task_difference(where, theta_source, theta_target, covariance.shape[0])
    check_positive(where, "n", n)
    check_positive(where, "c", c)
    if _is_concrete(delta) and not np.all((np.asarray(delta) > 0) & (np.asarray(delta) <= 1)):
        raise ValueError(f"{where}: delta must be in (0, 1], got {delta!r}.")
    spectrum = jnp.clip(jnp.linalg.eigvalsh(covariance), 0.0)
    lam1 = jnp.max(spectrum)
    n = jnp.asarray(n, spectrum.dtype)
    r0 = jnp.sum(spectrum) / lam1 / n
    rate = jnp.maximum(jnp.maximum(jnp.sqrt(r0), r0), jnp.sqrt(-jnp.log(delta) / n))
    return c * (v @ v) * lam1 * rate


def r_squared(actual: ArrayLike, predicted: ArrayLike) -> Array:
    """``R²`` of the least-squares line of ``actual`` on ``predicted`` (squared Pearson ``r``).

    Invariant to any affine rescaling of the predictor, so unknown bound constants that
    multiply every task equally do not matter (Table 1 compares correlations, Sec 4.2).
    Reduces over the last axis (batch dimensions broadcast).

    Examples:
      >>> float(r_squared(jnp.array([1.0, 2.0, 3.0]), jnp.array([2.0, 4.0, 6.0])))
      1.0
    """
    a, p = jnp.asarray(actual), jnp.asarray(predicted)
    if a.shape[-1] < 2 or p.shape[-1] != a.shape[-1]:
        raise ValueError(
            f"r_squared: actual and predicted need the same last axis of length >= 2, got "
            f"{a.shape} and {p.shape}."
        )
    a = a - jnp.mean(a, axis=-1, keepdims=True)
    p = p - jnp.mean(p, axis=-1, keepdims=True)
    return jnp.sum(a * p, axis=-1) ** 2 / (jnp.sum(a * a, axis=-1) * jnp.sum(p * p, axis=-1))


def bound_thm4_2_prefixes(
    x: ArrayLike, spectrum: ArrayLike, top: int, v: ArrayLike, sample_sizes: tuple[int, ...]
) -> Array:
    """Deterministic Thm 4.2 at ``m = top`` for the prefixes ``X_{1:n}``, ``n ∈ sample_sizes``.

    For the Fig. 1 setting: ``Σ = diag(spectrum)`` (eigenbasis ``I``) spiked at ``top``
    (:func:`realised_deviation_spiked`), so ``P_{≤m}v`` is the first ``top`` coordinates.
    Bound: ``2ĝ_n³‖P_{≤m}v‖²/λ_m² + 2ĝ_n‖P_{>m}v‖²`` with ``ĝ_n = ‖X_{1:n}ᵀX_{1:n}/n − Σ‖``.
    ``x`` is ``(N, d)``; ``v`` is ``(d,)`` or ``(k, d)``; ``sample_sizes`` static ints in
    ``[1, N]``. Returns ``(len(sample_sizes),)`` or ``(k, len(sample_sizes))``.
    """
    where = "bound_thm4_2_prefixes"
    x = _check_samples(where, x)
    big_n, d = x.shape
    v = jnp.asarray(v)
    if v.ndim not in (1, 2) or v.shape[-1] != d:
        raise ValueError(f"{where}: v must have shape (d,) or (k, d) with d = {d}, got {v.shape}.")
    sizes = tuple(check_positive_int(where, "sample_sizes", n) for n in sample_sizes)
    if not sizes or max(sizes) > big_n:
        raise ValueError(f"{where}: sample_sizes must be in [1, {big_n}], got {sample_sizes}.")
    spectrum = jnp.asarray(spectrum)
    g = jnp.stack([realised_deviation_spiked(x[:n], spectrum, top) for n in sizes])
    top_sq = jnp.sum(v[..., :top] ** 2, axis=-1, keepdims=True)
    bottom_sq = jnp.sum(v[..., top:] ** 2, axis=-1, keepdims=True)
    return 2.0 * g**3 * top_sq / spectrum[top - 1] ** 2 + 2.0 * g * bottom_sq


def zero_one_error(w: ArrayLike, x: ArrayLike, y: ArrayLike, weights: ArrayLike | None = None):
    """Weighted 0-1 error ``Σ_i w_i 1{sign(x_iᵀw) ≠ y_i} / Σ_i w_i`` for ``±1`` labels.

    The error Table 1 records (Sec 4.2: regression to ``±1``, classified by the sign).
    ``weights`` (default 1) masks padded rows.

    Examples:
      >>> float(zero_one_error(jnp.array([1.0]), jnp.array([[1.0], [2.0]]), jnp.array([1, -1])))
      0.5
    """
    x, y = jnp.asarray(x), jnp.asarray(y)
    wrong = (jnp.where(x @ jnp.asarray(w) >= 0, 1, -1) != y).astype(x.dtype)
    weights = jnp.ones_like(wrong) if weights is None else jnp.asarray(weights, x.dtype)
    return jnp.sum(weights * wrong) / jnp.sum(weights)


def min_norm_least_squares(
    x: ArrayLike, y: ArrayLike, weights: ArrayLike | None = None, ridge: ArrayLike = 0.0
) -> Array:
    """``X⁺y`` (``ridge = 0``) or ``argmin (1/N)‖Xθ − y‖² + ridge·‖θ‖²`` (θ_S, θ_T of Table 1).

    The paper leaves how θ_S and θ_T are fitted unspecified (here: least squares). With
    ``ridge = 0`` this is the minimum-norm least-squares solution; ``ridge > 0`` is the ridge
    solution ``(XᵀX + N·ridge·I)⁻¹Xᵀy`` with ``N`` the number of kept rows, which tends to
    ``X⁺y`` as ``ridge → 0``. ``weights`` in ``{0, 1}`` drop padded rows (their rows are
    zeroed, which leaves the solution on the kept rows unchanged).

    Examples:
      >>> x, y = jnp.array([[1.0, 0.0], [0.0, 0.0]]), jnp.array([2.0, 0.0])
      >>> min_norm_least_squares(x, y).tolist(), min_norm_least_squares(x, y, ridge=0.5).tolist()
      ([2.0, 0.0], [1.0, 0.0])
    """
    x, y = jnp.asarray(x), jnp.asarray(y, jnp.asarray(x).dtype)
    keep = jnp.ones(x.shape[0], x.dtype) if weights is None else jnp.asarray(weights, x.dtype)
    x, y = x * keep[:, None], y * keep
    if _is_concrete(ridge) and float(ridge) == 0.0:
        return jnp.linalg.pinv(x) @ y
    if _is_concrete(ridge) and float(ridge) < 0:
        raise ValueError(f"min_norm_least_squares: ridge must be ≥ 0, got {float(ridge)}.")
    gram = x.T @ x + jnp.sum(keep) * ridge * jnp.eye(x.shape[1], dtype=x.dtype)
    return jnp.linalg.solve(gram, x.T @ y)


def second_moment(x: ArrayLike, weights: ArrayLike | None = None) -> Array:
    """``Σ = (1/N)Σ_i x_i x_iᵀ`` over the rows with weight 1 (Table 1's target covariance)."""
    x = jnp.asarray(x)
    keep = jnp.ones(x.shape[0], x.dtype) if weights is None else jnp.asarray(weights, x.dtype)
    return (x * keep[:, None]).T @ x / jnp.sum(keep)
