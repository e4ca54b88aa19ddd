r"""Empirical NTK of a model w.r.t. a chosen subset of its parameters, streamed in blocks.

For a mask ``M`` over the parameters (:func:`ntsim.transformers.param_mask`),

.. math:: Θ_M(x, x') = \sum_{p ∈ M} \frac{∂f(x)}{∂θ_p} \frac{∂f(x')}{∂θ_p}^{⊤},

the kernel that governs linearised fine-tuning of exactly those parameters (all of them,
one layer, the LoRA ``B`` factors, the head). Kernels over disjoint subsets add up to the
kernel over their union. The frozen parameters are passed to the compiled function as
arguments, never baked in as constants (a MiniLM checkpoint is ~90 MB), and
``batch_size`` evaluates ``Θ_M`` in ``batch_size × batch_size`` tiles, so the memory
holds the Jacobians of ``2·batch_size`` examples w.r.t. ``M`` at a time, independent of
the number of examples. The kernel itself is :func:`ntsim.core.empirical_ntk_fn`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax

from ntsim._types import Array, Params, PyTree
from ntsim.core import empirical_ntk_fn
from ntsim.transformers._params import merge_params, split_params

__all__ = ["subset_ntk_fn"]


def subset_ntk_fn(
    apply: Callable[[Params, Array], Array],
    mask: PyTree[bool],
    *,
    batch_size: int | None = None,
    implementation: str = "jacobian_contraction",
    trace_axes: Sequence[int] = (-1,),
    diagonal_axes: Sequence[int] = (),
) -> Callable[[Array, Array | None, Params], Array]:
    """``ntk_fn(x1, x2, params)``: the NTK of ``apply`` w.r.t. the leaves selected by ``mask``.

    Args:
      apply: ``apply(params, x) -> y`` on ONE example (e.g. a Flax ``module.apply`` wrapped
        to take one tokenised sentence).
      mask: boolean pytree of ``params``' structure (``True`` = differentiate).
      batch_size: as :func:`ntsim.core.empirical_ntk_fn`.
      implementation: as :func:`ntsim.core.empirical_ntk_fn`.
      trace_axes: as :func:`ntsim.core.empirical_ntk_fn`.
      diagonal_axes: as :func:`ntsim.core.empirical_ntk_fn`.

    Returns:
      A jitted ``ntk_fn(x1, x2, params)`` (``x2=None`` means ``x1``).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ntsim.transformers import param_mask
      >>> apply = lambda p, x: jnp.atleast_1d(jnp.tanh(x @ p["w"]) @ p["v"])
      >>> params = {"w": jnp.eye(2), "v": jnp.ones(2)}
      >>> ntk = subset_ntk_fn(apply, param_mask(params, "v"))  # head only: Θ = φ(X)φ(X)ᵀ
      >>> x = jnp.array([[1.0, 0.0], [0.0, 2.0]])
      >>> bool(jnp.allclose(ntk(x, None, params), jnp.tanh(x) @ jnp.tanh(x).T))
      True
    """
    kwargs = dict(
        batch_size=batch_size,
        implementation=implementation,
        trace_axes=trace_axes,
        diagonal_axes=diagonal_axes,
    )

    @jax.jit
    def ntk_fn(x1: Array, x2: Array | None, params: Params) -> Array:
        trainable, frozen = split_params(params, mask)
        sub_apply = lambda t, x: apply(merge_params(t, frozen), x)  # noqa: E731
        return empirical_ntk_fn(sub_apply, **kwargs)(x1, x2, trainable)

    return ntk_fn
