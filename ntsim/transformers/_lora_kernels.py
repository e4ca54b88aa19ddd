r"""NTK and sign kernel of a trainable subset at ``θ_0`` from per-example gradients, and LoRA's.

For a scalar model ``f(θ, x)`` and a trainable block ``θ_b`` with per-example gradients
``J_b(x) = ∂f(x)/∂θ_b``, the block's NTK and sign (Adam-style) kernel are

.. math:: K_b(x, x') = ⟨J_b(x), J_b(x')⟩, \qquad
          K^{\rm sign}_b(x, x') = ⟨J_b(x), \operatorname{sign} J_b(x')⟩,

and both are *additive over disjoint blocks* (the sign is taken entrywise), so the kernel of
a configuration is the sum of its blocks' kernels (:func:`block_kernels`).

**LoRA at ``B = 0``.** With ``W = W_0 + s A B`` (``s = α/r``) and ``G(x) = ∂f/∂W`` at ``W_0``,
``∂f/∂A = s G Bᵀ = 0``: the ``A``-block of the kernel vanishes at initialisation, and the
LoRA kernel is the closed-form ``B``-block

.. math:: K(x, x') = s^2 \sum_{\rm targets} \operatorname{tr}\big(G(x)^⊤ A A^⊤ G(x')\big)
          = s^2 \sum_{k<r} \sum_{\rm targets} ⟨A_{:,k}^⊤ G(x), A_{:,k}^⊤ G(x')⟩.

Row ``k`` of ``B`` sees only column ``k`` of ``A``, so with nested ``A`` columns (rank ``r``
keeps the first ``r`` of one rank-``R`` draw) every rank's kernel is a partial sum of the
same per-row kernels (:func:`lora_row_kernels`, :func:`lora_rank_kernel`): one Jacobian
w.r.t. the rank-``R`` ``B`` at unit scale gives ranks ``1..R``. The sign kernel of ``s J``
is ``s·J sign(J)ᵀ`` (``s > 0``), so it scales with ``s``, the NTK with ``s²``.

References:
  Hu et al. (2021), *LoRA*, arXiv:2106.09685, Sec 4.1 (zero ``B`` at init).
  Malladi et al. (2023), *A Kernel-Based View of Language Model Fine-Tuning*, ICML,
  arXiv:2210.05643, Def. 4.3 (the asymmetric SignGD kernel).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ntsim._types import Array, Params, PyTree
from ntsim._validation import check_choice

__all__ = [
    "KERNEL_KINDS",
    "block_kernels",
    "lora_rank_kernel",
    "lora_row_kernels",
    "participation_ratio",
    "per_example_gradients",
]

#: ``"ntk"``: ``J Jᵀ``; ``"sign"``: ``J sign(J)ᵀ``.
KERNEL_KINDS = ("ntk", "sign")


def per_example_gradients(
    fn: Callable[[Params, PyTree], Array],
    params: Params,
    data: PyTree,
    *,
    batch_size: int | None = None,
) -> Params:
    """``∂fn(params, x_i)/∂params`` for every example: ``params``' pytree, leaves ``(N, ...)``.

    Args:
      fn: ``fn(params, example) -> scalar`` on ONE example (a pytree of unbatched arrays).
      params: where the gradients are taken (e.g. ``θ_0``).
      data: pytree of arrays with a shared leading example axis ``N``.
      batch_size: examples per vectorised chunk (``jax.lax.map``); ``None``: all at once.

    Examples:
      >>> import jax.numpy as jnp
      >>> g = per_example_gradients(lambda w, x: x @ w, jnp.zeros(2), jnp.eye(2) * 3.0)
      >>> g.tolist()
      [[3.0, 0.0], [0.0, 3.0]]
    """
    grad = jax.grad(fn)
    return jax.lax.map(lambda x: grad(params, x), data, batch_size=batch_size)


def _flat(leaf: Array) -> Array:
    return leaf.reshape(leaf.shape[0], -1)


def _contract(j1: Array, j2: Array, kind: str) -> Array:
    return _flat(j1) @ (jnp.sign(_flat(j2)) if kind == "sign" else _flat(j2)).T


def block_kernels(jac1: Params, jac2: Params | None = None, *, kind: str = "ntk") -> Params:
    """Per-leaf kernels ``(N1, N2)`` of per-example gradients (module doc); they sum to the
    kernel of all the leaves together.

    Args:
      jac1: a pytree of per-example gradients, leaves ``(N1, ...)``.
      jac2: the same for the second argument, leaves ``(N2, ...)``; ``None`` is ``jac1``.
      kind: ``"ntk"`` (``J₁J₂ᵀ``) or ``"sign"`` (``J₁ sign(J₂)ᵀ``).

    Examples:
      >>> import jax.numpy as jnp
      >>> j = {"a": jnp.array([[2.0, -1.0]]), "b": jnp.array([[0.5]])}
      >>> {k: v.tolist() for k, v in block_kernels(j, kind="sign").items()}
      {'a': [[3.0]], 'b': [[0.5]]}
    """
    check_choice("block_kernels", "kind", kind, KERNEL_KINDS)
    jac2 = jac1 if jac2 is None else jac2
    return jax.tree.map(lambda a, b: _contract(a, b, kind), jac1, jac2)


def lora_row_kernels(jac_b: PyTree, jac_b2: PyTree | None = None, *, kind: str = "ntk") -> Array:
    """Per-row kernels ``(R, N1, N2)`` of LoRA ``B`` factors, summed over the targets.

    Args:
      jac_b: per-example gradients w.r.t. the ``B`` factors at unit scale, leaves
        ``(N, R, fan_out)`` (one leaf per target).
      jac_b2: the second argument's (``None``: ``jac_b``).
      kind: ``"ntk"`` or ``"sign"``.

    Returns:
      ``rows[k] = Σ_targets ⟨J_{B_k}(x), J_{B_k}(x')⟩`` (or with ``sign``), so that a rank-``r``
      adapter's kernel is :func:`lora_rank_kernel` of these.
    """
    check_choice("lora_row_kernels", "kind", kind, KERNEL_KINDS)
    jac_b2 = jac_b if jac_b2 is None else jac_b2

    def rows(a, b):
        if a.ndim != 3:
            raise ValueError(
                f"lora_row_kernels: B gradients must be (N, R, fan_out), got shape {a.shape}."
            )
        b = jnp.sign(b) if kind == "sign" else b
        return jnp.einsum("ikf,jkf->kij", a, b)

    return sum(jax.tree.leaves(jax.tree.map(rows, jac_b, jac_b2)))


def lora_rank_kernel(row_kernels: Array, rank: int, scale: Array, *, kind: str = "ntk") -> Array:
    """The kernel of rank-``rank`` LoRA with scale ``s = α/r``: ``s^p Σ_{k<r} rows[k]``,
    ``p = 2`` for the NTK and ``p = 1`` for the sign kernel (module doc).

    Args:
      row_kernels: :func:`lora_row_kernels` ``(R, N1, N2)``.
      rank: ``r`` in ``[1, R]``.
      scale: ``s = α/r``.
      kind: ``"ntk"`` or ``"sign"``.

    Examples:
      >>> import jax.numpy as jnp
      >>> rows = jnp.stack([jnp.eye(2), 2 * jnp.eye(2), 4 * jnp.eye(2)])
      >>> lora_rank_kernel(rows, 2, 3.0).tolist()
      [[27.0, 0.0], [0.0, 27.0]]
    """
    check_choice("lora_rank_kernel", "kind", kind, KERNEL_KINDS)
    if not 1 <= rank <= row_kernels.shape[0]:
        raise ValueError(
            f"lora_rank_kernel: rank must be in [1, {row_kernels.shape[0]}], got {rank}."
        )
    power = 2 if kind == "ntk" else 1
    return jnp.asarray(scale) ** power * row_kernels[:rank].sum(0)


def participation_ratio(eigenvalues: Array) -> Array:
    """Effective rank ``(Σλ)²/Σλ²`` of a spectrum (``1`` for one direction, ``n`` for ``cI``).

    Args:
      eigenvalues: the spectrum (non-negative).

    Examples:
      >>> import jax.numpy as jnp
      >>> float(participation_ratio(jnp.array([1.0, 1.0, 1.0, 1.0])))
      4.0
    """
    eigenvalues = jnp.asarray(eigenvalues)
    return jnp.sum(eigenvalues) ** 2 / jnp.sum(eigenvalues**2)
