"""Shared validation and the row/null-space projectors of Shachaf et al. 2021 (Sec 3)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike
from ntsim._validation import _is_concrete, check_ndim, check_positive

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
