r"""The sign (Adam-style) kernel ``K_sign(x, x') = ⟨∇_θf(x), sign(∇_θf(x'))⟩``.

Under sign gradient descent ``θ' = θ − η sign(∇L(θ))`` (Adam's first steps: with zero
moment estimates and ``ε → 0`` the bias-corrected Adam update is ``−η sign(g)``), a single
training example ``x'`` with loss gradient ``ℓ'·∇f(x')`` moves the output at ``x`` by
``−η sign(ℓ')·K_sign(x, x')`` to first order. Malladi et al. (2023) call this the
asymmetric SignGD kernel; it is not symmetric and not PSD in general, so spectral
quantities of it are taken of its symmetric part (documented where used). The plain NTK
is ``K(x, x') = ⟨∇f(x), ∇f(x')⟩`` (:func:`ntsim.core.empirical_ntk_fn`).

Models with ``O`` outputs: the kernel is averaged over the outputs, like the NTK's
``trace_axes=(-1,)``: ``K_sign = (1/O) Σ_o ⟨∇f_o(x), sign(∇f_o(x'))⟩``.

References:
  Malladi, Wettig, Yu, Chen & Arora (2023), *A Kernel-Based View of Language Model
  Fine-Tuning*, ICML, arXiv:2210.05643, Def. 4.3 (asymmetric SignGD kernel).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ntsim._types import Array, Params

__all__ = ["sign_kernel_fn", "sign_kernel_from_jacobians"]


def sign_kernel_from_jacobians(jac1: Array, jac2: Array) -> Array:
    """``J_1 sign(J_2)ᵀ`` for flat Jacobians ``(N1, P)`` and ``(N2, P)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> sign_kernel_from_jacobians(jnp.array([[2.0, -1.0]]), jnp.array([[0.5, 3.0]])).tolist()
      [[1.0]]
    """
    jac1, jac2 = jnp.asarray(jac1), jnp.asarray(jac2)
    if jac1.ndim != 2 or jac2.ndim != 2 or jac1.shape[1] != jac2.shape[1]:
        raise ValueError(
            "sign_kernel_from_jacobians: jac1 and jac2 must be (N1, P) and (N2, P) with the same "
            f"P, got {jac1.shape} and {jac2.shape}."
        )
    return jac1 @ jnp.sign(jac2).T


def sign_kernel_fn(
    apply: Callable[[Params, Array], Array], *, per_block: bool = False
) -> Callable[[Array, Array | None, Params], Array | Params]:
    """Return ``kernel_fn(x1, x2, params)``, the sign kernel of ``apply`` (module doc).

    Args:
      apply: ``apply(params, x) -> y`` on ONE example, ``y`` of shape ``(O,)`` or scalar.
      per_block: return a pytree (structure of ``params``) of per-leaf kernels, which sum
        to the full kernel (the sign is taken entrywise, so the sign kernel is additive
        over parameter blocks like the NTK).

    Returns:
      A jitted ``kernel_fn(x1, x2, params)`` of shape ``(N1, N2)``; ``x2=None`` means ``x1``.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ntsim.core import linear
      >>> k = sign_kernel_fn(linear().apply)
      >>> k(jnp.array([[2.0, -1.0]]), jnp.array([[0.5, 3.0]]), {"w": jnp.zeros(2)}).tolist()
      [[1.0]]
    """

    def kernel_fn(x1: Array, x2: Array | None, params: Params):
        x1 = jnp.asarray(x1)
        x2 = x1 if x2 is None else jnp.asarray(x2)
        if x1.ndim < 1 or x1.shape[1:] != x2.shape[1:]:
            raise ValueError(
                "sign_kernel_fn: x1 and x2 must be batches of examples of the same shape, got "
                f"x1.shape={x1.shape}, x2.shape={x2.shape}."
            )

        def flat_apply(p, x):
            return jnp.reshape(apply(p, x), (-1,))

        jac = jax.vmap(jax.jacrev(flat_apply), in_axes=(None, 0))
        j1, j2 = jac(params, x1), jac(params, x2)  # leaves (N, O, *leaf_shape)

        def contract(a, b):
            a = a.reshape(a.shape[0], a.shape[1], -1)
            b = b.reshape(b.shape[0], b.shape[1], -1)
            return jnp.einsum("iop,jop->ij", a, jnp.sign(b)) / a.shape[1]

        blocks = jax.tree.map(contract, j1, j2)
        return blocks if per_block else sum(jax.tree.leaves(blocks))

    return jax.jit(kernel_fn)
