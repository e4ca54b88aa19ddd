"""Linearised models: Taylor expansions of ``apply(params, x)`` in the parameters.

:func:`linearize` and :func:`taylor_expand` expand around ``params0`` as
``neural_tangents.linearize`` / ``taylor_expand`` do; the closed-form training of the
linearised model lives in :mod:`ntsim.core._kernel_dynamics`.

References:
  Lee et al. (2019), *Wide neural networks of any depth evolve as linear models under
  gradient descent*, arXiv:1902.06720, Sec 2.2 (linearised networks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Params

__all__ = ["linearize", "taylor_expand"]


# ----------------------------------------------------------------------------- linearize


def _delta(where: str, params: Params, params0: Params) -> Params:
    """``params − params0`` leafwise, in the dtype of ``params0`` (the jvp tangent dtype)."""
    if jax.tree.structure(params) != jax.tree.structure(params0):
        raise ValueError(
            f"{where}: params must have the pytree structure of params0, got "
            f"{jax.tree.structure(params)} vs {jax.tree.structure(params0)}."
        )
    return jax.tree.map(lambda p, p0: (p - p0).astype(jnp.result_type(p0)), params, params0)


def linearize(apply: Callable[[Params, Any], Any], params0: Params) -> Callable[[Params, Any], Any]:
    """First-order Taylor expansion of ``apply`` in the parameters around ``params0``.

    .. math:: f^{\\rm lin}(θ, x) = f(θ_0, x) + J(θ_0, x)\\,(θ - θ_0),
       \\qquad J = ∂f/∂θ

    (Lee et al. 2019, Sec 2.2), computed with one ``jax.jvp`` (no Jacobian is formed).

    Args:
      apply: ``apply(params, x) -> y`` (any pytree output; for ntsim models one example).
      params0: the expansion point ``θ_0``.

    Returns:
      ``apply_lin(params, x)`` with the signature of ``apply``.

    Examples:
      >>> import jax.numpy as jnp
      >>> f = lambda p, x: jnp.sin(p * x)
      >>> f_lin = linearize(f, jnp.array(0.0))
      >>> float(f_lin(jnp.array(0.5), jnp.array(2.0)))
      1.0
    """

    def apply_lin(params: Params, x: Any) -> Any:
        delta = _delta("linearize", params, params0)
        f0, df = jax.jvp(lambda p: apply(p, x), (params0,), (delta,))
        return jax.tree.map(jnp.add, f0, df)

    return apply_lin


def taylor_expand(
    apply: Callable[[Params, Any], Any], params0: Params, degree: int
) -> Callable[[Params, Any], Any]:
    """Degree-``k`` Taylor expansion of ``apply`` in the parameters around ``params0``.

    .. math:: f^{(k)}(θ, x) = \\sum_{j=0}^{k} \\frac{1}{j!}\\, D^j_θ f(θ_0, x)[Δ, …, Δ],
       \\qquad Δ = θ - θ_0,

    computed by a tower of ``k`` nested ``jax.jvp`` along ``Δ`` (all orders in one pass;
    cost grows like ``2^k`` forward passes, fine for the small degrees used in practice).
    ``degree=1`` is :func:`linearize`; ``degree=0`` is the constant ``apply(params0, x)``.

    Args:
      apply: ``apply(params, x) -> y``.
      params0: the expansion point ``θ_0``.
      degree: ``k ≥ 0``.

    Returns:
      ``apply_taylor(params, x)`` with the signature of ``apply``.

    Examples:
      >>> import jax.numpy as jnp
      >>> f = lambda p, x: jnp.exp(p * x)
      >>> float(taylor_expand(f, jnp.array(0.0), 2)(jnp.array(1.0), jnp.array(1.0)))
      2.5
    """
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 0:
        raise ValueError(f"taylor_expand: degree must be a non-negative integer, got {degree!r}.")
    degree = int(degree)

    def apply_taylor(params: Params, x: Any) -> Any:
        delta = _delta("taylor_expand", params, params0)

        def tower(order: int) -> Callable[[Params], tuple]:
            """``p -> (f(p), D f(p)[Δ], …, D^order f(p)[Δ]^order)``."""
            if order == 0:
                return lambda p: (apply(p, x),)
            lower = tower(order - 1)

            def g(p):
                primal, tangent = jax.jvp(lower, (p,), (delta,))
                return (primal[0], *tangent)

            return g

        terms = tower(degree)(params0)
        total = terms[0]
        for j, term in enumerate(terms[1:], start=1):
            total = jax.tree.map(lambda a, b, j=j: a + b / math.factorial(j), total, term)
        return total

    return apply_taylor
