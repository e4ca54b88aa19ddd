"""Generic synthetic data: Haar orthogonal matrices, Gaussian inputs with a given spectrum.

* :func:`random_orthogonal` — Haar-distributed ``Q ∈ O(d)`` (Mezzadri 2007).
* :func:`gaussian_inputs` — rows ``x ~ N(0, Σ)`` with ``Σ = V diag(spectrum) Vᵀ``;
  :func:`covariance` returns that ``Σ``.
* :func:`two_level_spectrum`, :func:`power_law_spectrum` — the covariance spectra used by
  the papers (e.g. Shachaf et al. 2021, Fig. 1: 50 eigenvalues 1.5, the rest 0.3).

All generators take an explicit ``jax.random`` key and keep the default float dtype
(float32, or float64 inside ``jax.enable_x64(True)``).

References:
  F. Mezzadri, "How to generate random matrices from the classical compact groups",
  Notices of the AMS 54(5), 2007. https://arxiv.org/abs/math-ph/0609050
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._checks import psd_tolerance
from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import (
    _is_concrete,
    check_finite_scalar,
    check_ndim,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

__all__ = [
    "covariance",
    "gaussian_inputs",
    "power_law_spectrum",
    "random_orthogonal",
    "two_level_spectrum",
]


def random_orthogonal(key: PRNGKey, d: int) -> Array:
    """A Haar-distributed (uniform) random orthogonal ``d × d`` matrix.

    QR-decompose a standard Gaussian matrix ``Z = QR`` and return ``Q diag(sign(diag R))``.
    The sign correction makes the factorisation unique (``R`` with a positive diagonal), which
    is what makes ``Q`` Haar-distributed; plain ``Q`` from LAPACK is not (Mezzadri 2007, Sec 5).

    Args:
      key: a ``jax.random`` key.
      d: the dimension (a positive integer).

    Returns:
      ``Q`` of shape ``(d, d)`` with ``QᵀQ = I``.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> q = random_orthogonal(jax.random.key(0), 3)
      >>> bool(jnp.allclose(q.T @ q, jnp.eye(3), atol=1e-5))
      True
    """
    d = check_positive_int("random_orthogonal", "d", d)
    q, r = jnp.linalg.qr(jax.random.normal(key, (d, d)))
    signs = jnp.where(jnp.diagonal(r) < 0, -1.0, 1.0).astype(q.dtype)
    return q * signs[None, :]


def _check_spectrum_basis(where: str, spectrum: ArrayLike, basis: ArrayLike | None) -> Array:
    spectrum = jnp.asarray(spectrum)
    check_ndim(where, "spectrum", spectrum, 1)
    if spectrum.shape[0] == 0:
        raise ValueError(f"{where}: spectrum must have at least one eigenvalue, got shape (0,).")
    check_nonnegative(where, "spectrum", spectrum)
    if basis is not None:
        d = spectrum.shape[0]
        if jnp.shape(basis) != (d, d):
            raise ValueError(
                f"{where}: basis must be an orthogonal (d, d) matrix with d = len(spectrum) = {d}, "
                f"got basis.shape={jnp.shape(basis)}."
            )
    return spectrum


def covariance(spectrum: ArrayLike, basis: ArrayLike | None = None) -> Array:
    """``Σ = V diag(spectrum) Vᵀ`` with ``V = basis`` (columns are eigenvectors) or ``I``.

    Args:
      spectrum: eigenvalues ``(d,)``, all ``≥ 0``.
      basis: orthogonal ``(d, d)`` matrix of eigenvectors (columns); default the identity.
        Its shape is checked, and ``VᵀV = I`` within ``sqrt(eps)`` when it is concrete
        (under ``jit`` the ``O(d³)`` check would double the cost: the caller's basis, e.g.
        from :func:`random_orthogonal`, is trusted there).

    Examples:
      >>> covariance([2.0, 1.0]).tolist()
      [[2.0, 0.0], [0.0, 1.0]]
    """
    spectrum = _check_spectrum_basis("covariance", spectrum, basis)
    if basis is None:
        return jnp.diag(spectrum)
    basis = jnp.asarray(basis)
    if _is_concrete(basis):
        gram = np.asarray(basis, float).T @ np.asarray(basis, float)
        error = float(np.max(np.abs(gram - np.eye(len(gram))))) if gram.size else 0.0
        if not error <= psd_tolerance(np.result_type(basis.dtype, np.float32)):
            raise ValueError(
                "covariance: basis must be orthogonal (VᵀV = I, its columns the "
                f"eigenvectors), got max|VᵀV − I| = {error:.3g}. Orthonormalise it (e.g. "
                "jnp.linalg.qr(basis)[0]) or use random_orthogonal."
            )
    return (basis * spectrum[None, :]) @ basis.T


def gaussian_inputs(
    key: PRNGKey, n: int, spectrum: ArrayLike, basis: ArrayLike | None = None
) -> Array:
    """``n`` i.i.d. rows ``x ~ N(0, Σ)``, ``Σ = V diag(spectrum) Vᵀ`` (see :func:`covariance`).

    Sampled as ``X = Z diag(√spectrum) Vᵀ`` with ``Z`` standard Gaussian ``(n, d)``, so
    ``E[XᵀX]/n = Σ`` without forming or factorising ``Σ``.

    Args:
      key: a ``jax.random`` key.
      n: number of rows (a positive integer).
      spectrum: eigenvalues ``(d,)``, all ``≥ 0``.
      basis: orthogonal ``(d, d)`` eigenvector matrix (columns); default the identity.

    Returns:
      ``X`` of shape ``(n, d)``.

    Examples:
      >>> import jax
      >>> gaussian_inputs(jax.random.key(0), 4, [1.0, 0.0]).shape
      (4, 2)
    """
    n = check_positive_int("gaussian_inputs", "n", n)
    spectrum = _check_spectrum_basis("gaussian_inputs", spectrum, basis)
    z = jax.random.normal(key, (n, spectrum.shape[0]))
    x = z * jnp.sqrt(spectrum)[None, :]
    return x if basis is None else x @ jnp.asarray(basis).T


def two_level_spectrum(d: int, top: int, top_value: ArrayLike, bottom_value: ArrayLike) -> Array:
    """``top`` eigenvalues equal to ``top_value`` followed by ``d − top`` equal to ``bottom_value``.

    Shachaf et al. (2021), Fig. 1 use ``d = 100, top = 50, top_value = 1.5,
    bottom_value = 0.3``.

    Args:
      d: dimension (positive integer).
      top: number of leading eigenvalues, ``0 ≤ top ≤ d``.
      top_value: the leading eigenvalue, ``≥ 0`` (may be traced).
      bottom_value: the trailing eigenvalue, ``≥ 0`` (may be traced).

    Returns:
      The ``(d,)`` eigenvalues, leading ones first, in the default float dtype.

    Examples:
      >>> [round(v, 6) for v in two_level_spectrum(4, 1, 1.5, 0.3).tolist()]
      [1.5, 0.3, 0.3, 0.3]
    """
    where = "two_level_spectrum"
    d = check_positive_int(where, "d", d)
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= d:
        raise ValueError(f"{where}: top must be an integer with 0 <= top <= d = {d}, got {top!r}.")
    check_nonnegative(where, "top_value", top_value)
    check_nonnegative(where, "bottom_value", bottom_value)
    is_top = jnp.arange(d) < top
    values = jnp.where(is_top, jnp.asarray(top_value), jnp.asarray(bottom_value))
    return values.astype(jnp.result_type(float))


def power_law_spectrum(d: int, exponent: ArrayLike, scale: ArrayLike = 1.0) -> Array:
    """Power-law eigenvalues ``λ_k = scale · k^(−exponent)`` for ``k = 1, …, d``.

    Args:
      d: dimension (positive integer).
      exponent: decay exponent (a finite scalar; may be traced).
      scale: ``λ_1 > 0`` (may be traced).

    Examples:
      >>> [round(v, 6) for v in power_law_spectrum(3, 2.0, scale=4.0).tolist()]
      [4.0, 1.0, 0.444444]
    """
    where = "power_law_spectrum"
    d = check_positive_int(where, "d", d)
    check_finite_scalar(where, "exponent", exponent)
    check_positive(where, "scale", scale)
    k = jnp.arange(1, d + 1, dtype=jnp.result_type(float))
    return scale * k ** (-jnp.asarray(exponent, k.dtype))
