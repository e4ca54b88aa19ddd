"""Analytic infinite-width kernels: NNGP and NTK of MLPs, and the ``H^∞`` of Du et al.

Every function follows the empirical-kernel shape convention ``fn(x1, x2=None) -> (N1, N2)``
(``x2=None`` means ``x2 = x1``), is pure ``jax.numpy`` and works under ``jit``/``vmap``
(``w_std``/``b_std`` may be traced; ``depth`` is static).

Conventions are those of neural-tangents' ``stax`` in the NTK parameterization
(``Dense(n, W_std, b_std, parameterization='ntk')``; :func:`ntsim.core.mlp` with
``parameterization="ntk"`` is the same network). For ``Dense → φ → … → Dense`` with
``depth`` hidden layers, writing ``Σ`` for the NNGP and ``Θ`` for the NTK of pre-activations:

.. math::

    Σ^{(0)}(x, x') = σ_w^2 \\, x^\\top x' / d + σ_b^2, \\qquad Θ^{(0)} = Σ^{(0)},

    Σ^{(l)} = σ_w^2 \\, \\mathbb{E}[φ(u) φ(v)] + σ_b^2, \\qquad
    Θ^{(l)} = Σ^{(l)} + σ_w^2 \\, \\mathbb{E}[φ'(u) φ'(v)] \\, Θ^{(l-1)},

with ``(u, v) ~ N(0, [[Σ^{(l-1)}(x,x), Σ^{(l-1)}(x,x')], [·, Σ^{(l-1)}(x',x')]])``, for
``l = 1..depth`` (the last step is the readout ``Dense``). Kernels are per output unit (no
sum over the output width), and ``Θ`` includes the readout's own ``Σ`` term.

References:
  Cho & Saul (2009), *Kernel methods for deep learning*, NeurIPS (arc-cosine kernels).
  Williams (1997), *Computing with infinite networks*, NeurIPS (erf / arcsine kernel).
  Jacot, Gabriel & Hongler (2018), *Neural tangent kernel*, arXiv:1806.07572, Thm 1.
  Arora et al. (2019), *On exact computation with an infinitely wide neural net*,
  arXiv:1904.11955 (the NTK recursion for fully connected nets).
  Du, Zhai, Poczos & Singh (2019), *Gradient descent provably optimizes over-parameterized
  neural networks*, arXiv:1810.02054 (the Gram matrix ``H^∞``).
  Novak et al. (2020), *Neural tangents*, arXiv:1912.02803 (conventions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._checks import require_finite, require_nonnegative, require_positive
from ntsim._types import Array, ArrayLike
from ntsim._validation import check_nonnegative, check_positive, check_positive_int

__all__ = [
    "InfiniteWidthKernels",
    "erf_mlp_kernels",
    "linear_kernel",
    "linear_mlp_kernels",
    "relu_mlp_kernels",
    "two_layer_relu_hinf",
]


class InfiniteWidthKernels(NamedTuple):
    """NNGP and NTK of a network, each of shape ``(N1, N2)``; unpacks as ``nngp, ntk``."""

    nngp: Array
    ntk: Array


def _prepare(where: str, x1: ArrayLike, x2: ArrayLike | None) -> tuple[Array, Array, bool]:
    """Validate ``(N1, d)``/``(N2, d)`` inputs and cast integers to the default float dtype."""
    same = x2 is None
    arrays = []
    for name, x in (("x1", x1), ("x2", x1 if same else x2)):
        x = jnp.asarray(x)
        if x.ndim != 2:
            raise ValueError(
                f"{where}: {name} must be a 2-D array (num_examples, features), got shape "
                f"{x.shape}. Stack single examples with x[None]."
            )
        if not jnp.issubdtype(x.dtype, jnp.floating):
            x = x.astype(jnp.result_type(float))
        arrays.append(x)
    a, b = arrays
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"{where}: x1 and x2 must have the same feature dimension, got x1.shape={a.shape} "
            f"and x2.shape={b.shape}."
        )
    dtype = jnp.result_type(a, b)
    return a.astype(dtype), b.astype(dtype), same


def _cosine(k12: Array, d1: Array, d2: Array, same: bool) -> tuple[Array, Array]:
    """``(sqrt(k11 k22), clip(k12 / sqrt(k11 k22), -1, 1))`` with a safe zero norm.

    On the diagonal of ``fn(x1, None)`` the cosine is set to exactly 1 so that rounding in
    ``sqrt`` cannot give ``arccos`` a spurious ``O(sqrt(eps))`` angle.
    """
    norms = jnp.sqrt(d1[:, None] * d2[None, :])
    positive = norms > 0
    cos = jnp.where(positive, k12 / jnp.where(positive, norms, 1), 0)
    if same:
        cos = jnp.where(jnp.eye(k12.shape[0], dtype=bool), 1, cos)
    return norms, jnp.clip(cos, -1, 1)


# An activation rule maps (Σ12, Σ11 diagonal, Σ22 diagonal, same) to
# (E[φ(u)φ(v)], E[φ'(u)φ'(v)], E[φ(u)^2] for x1, E[φ(v)^2] for x2).
_Rule = Callable[[Array, Array, Array, bool], tuple[Array, Array, Array, Array]]


def _relu_rule(k12: Array, d1: Array, d2: Array, same: bool):
    """Arc-cosine kernels of degree 1 and 0 (Cho & Saul 2009), as used by Arora et al. 2019.

    ``E[relu(u)relu(v)] = sqrt(k11 k22) (sin θ + (π − θ) cos θ) / (2π)`` and
    ``E[1(u>0)1(v>0)] = (π − θ) / (2π)`` with ``cos θ = k12 / sqrt(k11 k22)``.
    """
    norms, cos = _cosine(k12, d1, d2, same)
    theta = jnp.arccos(cos)
    sin = jnp.sqrt(jnp.maximum(1 - cos**2, 0))
    nngp = norms * (sin + (jnp.pi - theta) * cos) / (2 * jnp.pi)
    deriv = (jnp.pi - theta) / (2 * jnp.pi)
    return nngp, deriv, d1 / 2, d2 / 2


def _erf_rule(k12: Array, d1: Array, d2: Array, same: bool):
    """Arcsine kernel of erf (Williams 1997) and of its derivative.

    ``E[erf(u)erf(v)] = (2/π) arcsin(2 k12 / sqrt((1 + 2 k11)(1 + 2 k22)))`` and, with
    ``erf'(u) = (2/√π) e^{−u²}``, ``E[erf'(u)erf'(v)] = (4/π) det(I + 2Σ)^{-1/2}``.
    """
    del same
    a = 1 + 2 * d1[:, None]
    b = 1 + 2 * d2[None, :]
    nngp = (2 / jnp.pi) * jnp.arcsin(jnp.clip(2 * k12 / jnp.sqrt(a * b), -1, 1))
    # det(I + 2Σ) = (1 + 2k11)(1 + 2k22) − 4k12² ≥ 1 since k12² ≤ k11 k22.
    deriv = (4 / jnp.pi) / jnp.sqrt(jnp.maximum(a * b - 4 * k12**2, 1))
    diag = lambda d: (2 / jnp.pi) * jnp.arcsin(2 * d / (1 + 2 * d))
    return nngp, deriv, diag(d1), diag(d2)


def _identity_rule(k12: Array, d1: Array, d2: Array, same: bool):
    """``φ(u) = u``: ``E[uv] = k12`` and ``E[φ'φ'] = 1``."""
    del same
    return k12, jnp.ones_like(k12), d1, d2


def _mlp_kernels(where: str, rule: _Rule, x1, x2, depth, w_std, b_std) -> InfiniteWidthKernels:
    """Validate, then run the (jitted, cached) recursion of the module docstring."""
    x1, x2, same = _prepare(where, x1, x2)
    depth = check_positive_int(where, "depth", depth)
    check_positive(where, "w_std", w_std)
    check_nonnegative(where, "b_std", b_std)
    w_std = require_positive(where, "w_std", w_std)  # checked mode when traced
    b_std = require_nonnegative(where, "b_std", b_std)
    x1 = require_finite(where, "x1", x1)
    x2 = x1 if same else require_finite(where, "x2", x2)
    w2 = jnp.asarray(w_std, x1.dtype) ** 2
    b2 = jnp.asarray(b_std, x1.dtype) ** 2
    return InfiniteWidthKernels(*_recursion(rule, depth, same, x1, x2, w2, b2))


@partial(jax.jit, static_argnums=(0, 1, 2))
def _recursion(rule: _Rule, depth: int, same: bool, x1, x2, w2, b2) -> tuple[Array, Array]:
    """``depth`` activation+Dense steps after the input Dense layer, as one ``fori_loop``."""
    d = x1.shape[1]
    # First Dense layer on the raw inputs (NT's input kernel is x·x'/d).
    nngp = w2 * (x1 @ x2.T) / d + b2
    d1 = w2 * jnp.sum(x1**2, axis=1) / d + b2
    d2 = w2 * jnp.sum(x2**2, axis=1) / d + b2

    def layer(_, carry):
        nngp, ntk, d1, d2 = carry
        e_phi, e_dphi, e1, e2 = rule(nngp, d1, d2, same)
        new_nngp = w2 * e_phi + b2
        return new_nngp, new_nngp + w2 * e_dphi * ntk, w2 * e1 + b2, w2 * e2 + b2

    nngp, ntk, _, _ = jax.lax.fori_loop(0, depth, layer, (nngp, nngp, d1, d2))
    return nngp, ntk


def relu_mlp_kernels(
    x1: ArrayLike, x2: ArrayLike | None = None, *, depth: int, w_std: float, b_std: float
) -> InfiniteWidthKernels:
    """Infinite-width NNGP and NTK of a ReLU MLP (arc-cosine recursion).

    The network is ``depth × [Dense(n, σ_w, σ_b), Relu] → Dense(1, σ_w, σ_b)`` in the NTK
    parameterization (:func:`ntsim.core.mlp` with ``activation="relu"``,
    ``parameterization="ntk"``) at ``n → ∞``; the recursion is the module docstring's with
    the arc-cosine expectations of Cho & Saul (2009, degrees 1 and 0), as in
    Jacot et al. (2018, Thm 1) and Arora et al. (2019). Matches
    ``neural_tangents.stax.serial(...).kernel_fn(x1, x2, ('nngp', 'ntk'))``.

    Args:
      x1: inputs of shape ``(N1, d)``.
      x2: inputs of shape ``(N2, d)``; ``None`` means ``x1`` (the diagonal is then exact).
      depth: number of hidden ReLU layers, ``≥ 1``.
      w_std: ``σ_w > 0`` of every Dense layer (``sqrt(2)`` is He scaling).
      b_std: ``σ_b ≥ 0`` of every Dense layer.

    Returns:
      :class:`InfiniteWidthKernels` ``(nngp, ntk)``, each ``(N1, N2)``.

    Raises:
      ValueError: on non-2-D inputs, mismatched feature sizes, ``depth < 1``,
        ``w_std ≤ 0`` or ``b_std < 0``.

    Examples:
      >>> import jax.numpy as jnp
      >>> x = jnp.array([[1.0, 0.0], [0.0, 1.0]])
      >>> nngp, ntk = relu_mlp_kernels(x, depth=1, w_std=1.0, b_std=0.0)
      >>> [round(v, 4) for v in nngp[0].tolist()], round(float(ntk[0, 0]), 4)
      ([0.25, 0.0796], 0.5)
    """
    return _mlp_kernels("relu_mlp_kernels", _relu_rule, x1, x2, depth, w_std, b_std)


def erf_mlp_kernels(
    x1: ArrayLike, x2: ArrayLike | None = None, *, depth: int, w_std: float, b_std: float
) -> InfiniteWidthKernels:
    """Infinite-width NNGP and NTK of an erf MLP (Williams 1997 arcsine kernel).

    Same network and recursion as :func:`relu_mlp_kernels` with ``φ = erf`` and the
    expectations ``E[erf(u)erf(v)] = (2/π) arcsin(2Σ12 / sqrt((1+2Σ11)(1+2Σ22)))``
    (Williams 1997) and ``E[erf'(u)erf'(v)] = (4/π) det(I + 2Σ)^{-1/2}``.
    Matches neural-tangents ``stax.Erf()`` (``a=1, b=1, c=0``).

    Args:
      x1: inputs of shape ``(N1, d)``.
      x2: inputs of shape ``(N2, d)``; ``None`` means ``x1``.
      depth: number of hidden erf layers, ``≥ 1``.
      w_std: ``σ_w > 0``.
      b_std: ``σ_b ≥ 0``.

    Returns:
      :class:`InfiniteWidthKernels` ``(nngp, ntk)``, each ``(N1, N2)``.

    Raises:
      ValueError: as for :func:`relu_mlp_kernels`.
    """
    return _mlp_kernels("erf_mlp_kernels", _erf_rule, x1, x2, depth, w_std, b_std)


def linear_mlp_kernels(
    x1: ArrayLike, x2: ArrayLike | None = None, *, depth: int, w_std: float, b_std: float
) -> InfiniteWidthKernels:
    """NNGP and NTK of ``depth + 1`` Dense layers with identity activations (NTK param.).

    The recursion of the module docstring with ``E[uv] = Σ12`` and ``E[φ'φ'] = 1``:
    ``Σ^{(l)} = σ_w² Σ^{(l-1)} + σ_b²``, ``Θ^{(l)} = Σ^{(l)} + σ_w² Θ^{(l-1)}``. For
    ``σ_b = 0`` this is ``Σ = σ_w^{2(depth+1)} x·x'/d`` and ``Θ = (depth + 1) Σ`` (one equal
    contribution per layer). This is :func:`ntsim.core.mlp` with ``activation="identity"``
    and ``parameterization="ntk"``, NOT :func:`ntsim.core.deep_linear` (raw, unscaled
    weights, whose NTK depends on the weights at any width).

    Args:
      x1: inputs of shape ``(N1, d)``.
      x2: inputs of shape ``(N2, d)``; ``None`` means ``x1``.
      depth: number of hidden (identity) layers, ``≥ 1``.
      w_std: ``σ_w > 0``.
      b_std: ``σ_b ≥ 0``.

    Returns:
      :class:`InfiniteWidthKernels` ``(nngp, ntk)``, each ``(N1, N2)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> x = jnp.array([[1.0, 1.0]])
      >>> k = linear_mlp_kernels(x, depth=2, w_std=1.0, b_std=0.0)
      >>> float(k.nngp[0, 0]), float(k.ntk[0, 0])
      (1.0, 3.0)
    """
    return _mlp_kernels("linear_mlp_kernels", _identity_rule, x1, x2, depth, w_std, b_std)


def linear_kernel(
    x1: ArrayLike, x2: ArrayLike | None = None, *, w_std: float = 1.0, b_std: float = 0.0
) -> Array:
    """Kernel of one Dense layer: ``k(x, x') = σ_w² x·x'/d + σ_b²``.

    For a single neural-tangents ``Dense(n, W_std, b_std)`` (NTK parameterization) applied
    to the inputs, the NNGP and the NTK coincide and both equal this kernel (the input NTK
    is 0, so ``Θ = Σ + σ_w²·0``); it is also the first step ``Σ^{(0)}`` of every MLP
    recursion in this module. Note the ``1/d``: the raw Gram matrix is ``w_std=sqrt(d)``.

    Args:
      x1: inputs of shape ``(N1, d)``.
      x2: inputs of shape ``(N2, d)``; ``None`` means ``x1``.
      w_std: ``σ_w > 0``.
      b_std: ``σ_b ≥ 0``.

    Returns:
      The kernel matrix, shape ``(N1, N2)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> linear_kernel(jnp.array([[1.0, 2.0]]), w_std=2.0, b_std=1.0).tolist()
      [[11.0]]
    """
    where = "linear_kernel"
    x1, x2, _ = _prepare(where, x1, x2)
    check_positive(where, "w_std", w_std)
    check_nonnegative(where, "b_std", b_std)
    return _linear(x1, x2, jnp.asarray(w_std, x1.dtype), jnp.asarray(b_std, x1.dtype))


@jax.jit
def _linear(x1: Array, x2: Array, w_std: Array, b_std: Array) -> Array:
    return w_std**2 * (x1 @ x2.T) / x1.shape[1] + b_std**2


def two_layer_relu_hinf(x1: ArrayLike, x2: ArrayLike | None = None) -> Array:
    """``H^∞`` of the two-layer ReLU net with fixed ``±1`` outputs (Du et al. 2019).

    .. math::

        H^\\infty_{ij} = \\mathbb{E}_{w \\sim N(0, I)}[x_i^\\top x_j \\,
        1\\{w^\\top x_i \\ge 0, w^\\top x_j \\ge 0\\}]
        = x_i^\\top x_j \\, \\frac{\\pi - \\arccos(x_i^\\top x_j / (\\|x_i\\| \\|x_j\\|))}{2\\pi}.

    It is the ``m → ∞`` limit of the Gram matrix of :func:`ntsim.core.two_layer_relu`
    w.r.t. its first layer ``W`` (independent of the init scale ``κ``); Shachaf et al.
    (2021, Sec 6) use it for unit-norm inputs, where the cosine is ``x_i·x_j``. The formula
    holds for any norms; the cosine is clipped to ``[-1, 1]`` and a zero input gives a zero
    row. Since ``(π − θ)/(2π) = 1/4 + arcsin(cos θ)/(2π)``, ``H^∞ − XXᵀ/4 ⪰ 0`` (Schur).

    Args:
      x1: inputs of shape ``(N1, d)``.
      x2: inputs of shape ``(N2, d)``; ``None`` means ``x1``.

    Returns:
      ``H^∞`` of shape ``(N1, N2)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> two_layer_relu_hinf(jnp.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
      [[0.5, 0.0], [0.0, 0.5]]
    """
    x1, x2, same = _prepare("two_layer_relu_hinf", x1, x2)
    return _hinf(same, x1, x2)


@partial(jax.jit, static_argnums=0)
def _hinf(same: bool, x1: Array, x2: Array) -> Array:
    gram = x1 @ x2.T
    _, cos = _cosine(gram, jnp.sum(x1**2, axis=1), jnp.sum(x2**2, axis=1), same)
    return gram * (jnp.pi - jnp.arccos(cos)) / (2 * math.pi)
