r"""Linearly separable two-class data with independent control of margin and radius.

:func:`separable_dataset` draws ``n`` points in ``R^d`` around a slab of half-width ``γ``:

.. math::
    y_i \sim \mathrm{Rademacher},\qquad
    x_i = c + y_i(\gamma + |\varepsilon_i|)\,u + r_i,\qquad r_i \perp u,

with a random unit normal ``u``, a centre ``c = offset·e`` (``e`` a random unit vector, so
the separating hyperplane ``uᵀx = uᵀc`` does not pass through the origin and the bias
matters), ``ε_i ~ N(0, spread²)`` and ``r_i`` the projection of ``P_⊥c + N(0, perp_scale² I)``
onto ``u^⊥``. Two truncations make the radius exact without rejection sampling (so the
generator has a fixed shape and is ``vmap``-able over keys and over the traced parameters):
``γ + |ε_i| ≤ radius − offset`` keeps the along-``u`` coordinate inside the ball, and ``r_i``
is shrunk radially when needed so that ``‖x_i‖ ≤ radius``. Neither changes the along-``u``
coordinate, so

* the slab ``|uᵀ(x − c)| < γ`` is empty: the data are separable with a (bias-free) SVM
  margin ``γ_S ≥ γ`` (close to ``γ`` when ``n`` is large: ``min_i |ε_i| ≈ spread·√(π/2)/n``);
* ``‖x_i‖ ≤ radius`` for every point, with equality for the points whose ``r_i`` was
  shrunk (the default ``perp_scale = radius`` makes that a large fraction, so ``radius`` is
  the realised ``B = max_i ‖x_i‖``).

This is the synthetic setting of Fu et al. (2023), Sec 4.3 (500 training sets × 2,000
points; margin controlled by the distance between the class centres, then measured by an
SVM). The paper does not specify its generator; this one is ours, chosen so that the
margin and the radius are controlled separately.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import _is_concrete, check_nonnegative, check_positive, check_positive_int

__all__ = ["SeparableData", "separable_dataset"]


class SeparableData(NamedTuple):
    """One separable training set.

    Attributes:
      x: points, shape ``(n, d)``, ``‖x_i‖ ≤ radius``.
      y: labels ``±1``, shape ``(n,)``.
      normal: the unit normal ``u`` of the empty slab, shape ``(d,)``.
      center: the slab centre ``c``, shape ``(d,)``.
    """

    x: Array
    y: Array
    normal: Array
    center: Array


def _unit(key, d, dtype):
    v = jax.random.normal(key, (d,), dtype)
    return v / jnp.linalg.norm(v)


def separable_dataset(
    key: PRNGKey,
    num_points: int,
    dim: int,
    *,
    margin: ArrayLike,
    radius: ArrayLike,
    offset: ArrayLike = 0.0,
    spread: ArrayLike | None = None,
    perp_scale: ArrayLike | None = None,
) -> SeparableData:
    r"""A linearly separable dataset with slab half-width ``margin`` inside a ball ``radius``.

    Args:
      key: a ``jax.random`` key.
      num_points: ``n`` (static).
      dim: ``d ≥ 2`` (static).
      margin: ``γ > 0``, half-width of the empty slab (the SVM margin is ``≥ γ``).
      radius: ``B``, every ``‖x_i‖ ≤ B``; requires ``offset + margin < radius``.
      offset: ``‖c‖ ≥ 0``, distance of the slab centre from the origin.
      spread: std of ``ε`` (distance beyond the slab); default ``(radius − offset − margin)/2``.
      perp_scale: std of the in-plane noise; default ``radius``.

    ``margin``, ``radius``, ``offset``, ``spread``, ``perp_scale`` may be traced (vmap over
    them); the constraint ``offset + margin < radius`` is then not checked.

    Returns:
      :class:`SeparableData`.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> data = separable_dataset(jax.random.key(0), 200, 3, margin=0.2, radius=2.0)
      >>> bool(jnp.max(jnp.linalg.norm(data.x, axis=1)) <= 2.0 + 1e-5)
      True
      >>> bool(jnp.min(data.y * ((data.x - data.center) @ data.normal)) >= 0.2)
      True
    """
    where = "separable_dataset"
    n = check_positive_int(where, "num_points", num_points)
    d = check_positive_int(where, "dim", dim)
    if d < 2:
        raise ValueError(f"{where}: dim must be >= 2 (a slab normal and its complement), got {d}.")
    check_positive(where, "margin", margin)
    check_positive(where, "radius", radius)
    check_nonnegative(where, "offset", offset)
    for name, value in (("spread", spread), ("perp_scale", perp_scale)):
        if value is not None:
            check_nonnegative(where, name, value)
    if all(_is_concrete(a) for a in (margin, radius, offset)) and not (
        float(np.asarray(offset)) + float(np.asarray(margin)) < float(np.asarray(radius))
    ):
        raise ValueError(
            f"{where}: need offset + margin < radius so the slab fits in the ball, got "
            f"{offset=}, {margin=}, {radius=}."
        )
    dtype = jnp.result_type(float)
    margin, radius, offset = (jnp.asarray(a, dtype) for a in (margin, radius, offset))
    room = radius - offset - margin  # largest |ε| that keeps |uᵀx| ≤ radius
    spread = room / 2 if spread is None else jnp.asarray(spread, dtype)
    perp_scale = radius if perp_scale is None else jnp.asarray(perp_scale, dtype)

    k_u, k_c, k_y, k_eps, k_perp = jax.random.split(key, 5)
    normal = _unit(k_u, d, dtype)
    center = offset * _unit(k_c, d, dtype)
    y = jax.random.rademacher(k_y, (n,), dtype)
    depth = margin + jnp.minimum(jnp.abs(spread * jax.random.normal(k_eps, (n,), dtype)), room)
    along = center @ normal + y * depth  # the uᵀx coordinate, |along| ≤ radius
    perp = center + perp_scale * jax.random.normal(k_perp, (n, d), dtype)
    perp = perp - jnp.outer(perp @ normal, normal)
    allowed = jnp.sqrt(jnp.maximum(radius**2 - along**2, 0.0))
    norms = jnp.linalg.norm(perp, axis=1)
    perp = perp * jnp.minimum(1.0, allowed / jnp.maximum(norms, jnp.finfo(dtype).tiny))[:, None]
    x = along[:, None] * normal[None, :] + perp
    return SeparableData(x=x, y=y, normal=normal, center=center)
