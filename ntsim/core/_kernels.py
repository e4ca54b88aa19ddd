"""Empirical neural tangent kernels of any ``apply(params, x)``.

The empirical NTK of a model ``f(θ, x)`` with outputs of shape ``S`` is (Jacot et al. 2018)

.. math:: Θ(x_1, x_2)_{ij} = \\sum_p \\frac{∂ f_i(θ, x_1)}{∂θ_p} \\frac{∂ f_j(θ, x_2)}{∂θ_p},

a ``(N1, N2) + zip(S, S)`` array for batches ``x1`` (``N1`` examples) and ``x2``. Axis
conventions follow neural-tangents' ``empirical_ntk_fn`` (Novak et al. 2022):

* ``trace_axes`` — output axes (of the *batched* output ``(N, *S)``; axis 0 is the batch)
  traced over and, as in neural-tangents, *averaged*: the trace is divided by the product
  of the traced axes' sizes (so a model with ``O`` i.i.d. outputs has an ``O``-independent
  kernel). ``(-1,)`` gives the usual ``(N1, N2)`` kernel;
* ``diagonal_axes`` — output axes on which only equal indices are kept (one axis each);
* every other output axis ``a`` appears twice, *zipped*: ``(N1, N2, a1, a2, b1, b2, ...)``.

Three implementations, which agree to round-off (tested), selected by ``implementation``:

* ``"jacobian_contraction"`` — per-example Jacobians, contracted leaf by leaf. Memory
  ``O(N · |S| · P)``; fastest for small ``P``.
* ``"ntk_vector_products"`` — columns ``Θ e_j = J_1 (J_2^⊤ e_j)`` by one VJP and one JVP
  per output entry of ``x2``; never stores a Jacobian. Memory ``O((N1 + N2)|S| + P)`` per
  column.

* ``"structured"`` — for every weight used only in matrix products ``y = a·W`` (found
  from the jaxpr), the block ``Σ_{t,s}(a_t·a'_s)(δ_t·δ'_s)`` from the layer inputs and the
  output cotangents (``(A Aᵀ) ∘ (Δ Δᵀ)`` with one position per example); Jacobian
  contraction for the other leaves (:mod:`ntsim.core._structured_ntk`). Memory
  ``O(N · |S| · T · width)`` for the dense layers; fastest for wide layers.

``batch_size`` evaluates the kernel block by block (``lax.map`` over chunks of ``x1`` and
``x2``), so memory grows with ``batch_size``, not with ``N``. ``per_block=True`` returns a
pytree with the parameters' structure whose leaves are each parameter's contribution;
they sum to the full kernel (NTK additivity over parameter blocks).
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp

from ntsim._checks import require, require_finite, require_nonempty
from ntsim._types import Array, Params
from ntsim._validation import check_choice, check_positive_int
from ntsim.core._structured_ntk import structured_kernel_blocks

__all__ = ["IMPLEMENTATIONS", "empirical_ntk", "empirical_ntk_fn", "ntk_vector_product_fn"]

#: Available implementations of the empirical NTK (see module doc).
IMPLEMENTATIONS = ("jacobian_contraction", "ntk_vector_products", "structured")

_LETTERS = string.ascii_letters


def _batched(apply: Callable, params: Params, x: Array) -> Array:
    return jax.vmap(apply, in_axes=(None, 0))(params, x)


def _normalise_axes(
    trace_axes: Sequence[int], diagonal_axes: Sequence[int], out_ndim: int
) -> tuple[frozenset[int], frozenset[int]]:
    """Map axes of the batched output (ndim ``out_ndim + 1``) to per-example axes 0..."""
    batched_ndim = out_ndim + 1

    def norm(name: str, axes: Sequence[int]) -> frozenset[int]:
        result = set()
        for axis in axes:
            if not -batched_ndim <= axis < batched_ndim:
                raise ValueError(
                    f"empirical_ntk_fn: {name} entry {axis} is out of range for outputs of "
                    f"batched shape (N, ...) with {batched_ndim} axes."
                )
            axis %= batched_ndim
            if axis == 0:
                fix = (
                    f" The model's output is a scalar (no output axis to trace): pass {name}=()."
                    if out_ndim == 0
                    else ""
                )
                raise ValueError(
                    f"empirical_ntk_fn: {name} may not contain the batch axis 0 (got {axes})." + fix
                )
            result.add(axis - 1)
        return frozenset(result)

    trace, diagonal = norm("trace_axes", trace_axes), norm("diagonal_axes", diagonal_axes)
    if trace & diagonal:
        raise ValueError(
            "empirical_ntk_fn: trace_axes and diagonal_axes must be disjoint, got "
            f"{tuple(trace_axes)} and {tuple(diagonal_axes)}."
        )
    return trace, diagonal


def _output_subscripts(out_ndim: int, trace: frozenset[int], diagonal: frozenset[int]):
    """einsum subscripts (first, second, result) for the output axes, NT axis layout."""
    first, second, result = "", "", ""
    for axis in range(out_ndim):
        a, b = _LETTERS[2 + 2 * axis], _LETTERS[3 + 2 * axis]
        first += a
        if axis in trace:
            second += a
        elif axis in diagonal:
            second += a
            result += a
        else:
            second += b
            result += a + b
    return first, second, result


def _contract_jacobians(j1: Array, j2: Array, out_ndim: int, trace, diagonal) -> Array:
    """``Σ_p J1[a, s, p] J2[b, s', p]`` for one parameter leaf, with the axis conventions."""
    param_ndim = j1.ndim - 1 - out_ndim
    first, second, result = _output_subscripts(out_ndim, trace, diagonal)
    start = 2 + 2 * out_ndim
    params_sub = _LETTERS[start : start + param_ndim]
    spec = f"y{first}{params_sub},z{second}{params_sub}->yz{result}"
    return jnp.einsum(spec, j1, j2)


def _reduce_full_kernel(full: Array, out_ndim: int, trace, diagonal) -> Array:
    """From the full ``(N1, *S, N2, *S)`` kernel to the NT layout (trace/diagonal/zip)."""
    first, second, result = _output_subscripts(out_ndim, trace, diagonal)
    return jnp.einsum(f"y{first}z{second}->yz{result}", full)


def _kernel_blocks(apply, params, x1, x2, out_ndim, trace, diagonal, implementation):
    """Per-parameter-leaf kernels (a pytree like ``params``) between ``x1`` and ``x2``."""
    if implementation == "structured":
        return structured_kernel_blocks(
            apply,
            params,
            x1,
            x2,
            lambda full: _reduce_full_kernel(full, out_ndim, trace, diagonal),
            lambda j1, j2: _contract_jacobians(j1, j2, out_ndim, trace, diagonal),
        )
    if implementation == "jacobian_contraction":
        jac = jax.vmap(jax.jacrev(apply), in_axes=(None, 0))
        j1, j2 = jac(params, x1), jac(params, x2)
        return jax.tree.map(
            lambda a, b: _contract_jacobians(a, b, out_ndim, trace, diagonal), j1, j2
        )

    leaves, treedef = jax.tree.flatten(params)
    f2_out, vjp2 = jax.vjp(lambda p: _batched(apply, p, x2), params)
    basis = jnp.eye(f2_out.size, dtype=f2_out.dtype).reshape((f2_out.size, *f2_out.shape))

    def leaf_kernel(index: int) -> Array:
        def column(cotangent: Array) -> Array:
            (tangent,) = vjp2(cotangent)
            masked = [
                t if i == index else jnp.zeros_like(t)
                for i, t in enumerate(jax.tree.leaves(tangent))
            ]
            tangent = jax.tree.unflatten(treedef, masked)
            return jax.jvp(lambda p: _batched(apply, p, x1), (params,), (tangent,))[1]

        columns = jax.vmap(column)(basis)  # (N2·|S|, N1, *S)
        full = columns.reshape(f2_out.shape + columns.shape[1:])  # (N2, *S, N1, *S)
        n2_axes = tuple(range(out_ndim + 1))
        full = jnp.transpose(full, tuple(range(out_ndim + 1, 2 * out_ndim + 2)) + n2_axes)
        return _reduce_full_kernel(full, out_ndim, trace, diagonal)

    return jax.tree.unflatten(treedef, [leaf_kernel(i) for i in range(len(leaves))])


def _chunk(x: Array, size: int) -> tuple[Array, int]:
    """Pad ``x`` along axis 0 to a multiple of ``size`` and reshape to ``(chunks, size, ...)``."""
    n = x.shape[0]
    pad = (-n) % size
    if pad:
        x = jnp.concatenate([x, jnp.broadcast_to(x[:1], (pad, *x.shape[1:]))], axis=0)
    return x.reshape((-1, size, *x.shape[1:])), n


def empirical_ntk_fn(
    apply: Callable[[Params, Array], Array],
    *,
    trace_axes: Sequence[int] = (-1,),
    diagonal_axes: Sequence[int] = (),
    implementation: str = "jacobian_contraction",
    batch_size: int | None = None,
    per_block: bool = False,
) -> Callable[[Array, Array | None, Params], Array | Params]:
    """Return ``ntk_fn(x1, x2, params)``, the empirical NTK of ``apply`` (module doc).

    Args:
      apply: ``apply(params, x) -> y`` on ONE example (see :class:`ntsim.core.Model`).
      trace_axes: output axes to trace over (batched-output numbering; ``0`` forbidden).
      diagonal_axes: output axes on which to keep only the diagonal.
      implementation: one of :data:`IMPLEMENTATIONS`.
      batch_size: if given, evaluate in blocks of this many examples of ``x1`` and ``x2``.
      per_block: return a pytree (structure of ``params``) of per-leaf kernels.

    Returns:
      A jitted ``ntk_fn(x1, x2, params)``; ``x2=None`` means ``x2 = x1``. The result has
      shape ``(N1, N2) + zip(untraced output axes)``.

    Raises:
      ValueError: unknown implementation, bad axes, ``x1``/``x2`` with different example
        shapes, or examples that ``apply`` rejects for these ``params``.

    Examples:
      >>> import jax.numpy as jnp
      >>> from ntsim.core import linear
      >>> ntk = empirical_ntk_fn(linear().apply)
      >>> ntk(jnp.eye(2), None, {"w": jnp.zeros(2)}).tolist()  # Θ = X Xᵀ for f = <x, w>
      [[1.0, 0.0], [0.0, 1.0]]
    """
    check_choice("empirical_ntk_fn", "implementation", implementation, IMPLEMENTATIONS)
    if batch_size is not None:
        batch_size = check_positive_int("empirical_ntk_fn", "batch_size", batch_size)
    for name, axes in (("trace_axes", trace_axes), ("diagonal_axes", diagonal_axes)):
        if isinstance(axes, int):
            raise ValueError(
                f"empirical_ntk_fn: {name} must be a sequence of axes, got {axes!r}; pass "
                f"{name}=({axes},)."
            )
    trace_axes, diagonal_axes = tuple(trace_axes), tuple(diagonal_axes)

    def ntk_fn(x1: Array, x2: Array | None, params: Params):
        same = x2 is None
        x1 = jnp.asarray(x1)
        x2 = x1 if same else jnp.asarray(x2)
        if x1.ndim < 1 or x1.shape[1:] != x2.shape[1:]:
            raise ValueError(
                "empirical_ntk_fn: x1 and x2 must be batches of examples of the same shape, "
                f"got x1.shape={x1.shape}, x2.shape={x2.shape}."
            )
        require_nonempty("empirical_ntk_fn", "x1", x1)
        require_nonempty("empirical_ntk_fn", "x2", x2)
        x1 = require_finite("empirical_ntk_fn", "x1", x1)  # checked mode: ntk_fn is jitted
        x2 = x1 if same else require_finite("empirical_ntk_fn", "x2", x2)
        leaves = [jnp.asarray(leaf) for leaf in jax.tree.leaves(params)]
        leaves = [leaf for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.inexact)]
        if leaves:  # one check for the whole pytree: one branch per call, not one per leaf
            # A leaf's sum is NaN/inf iff an entry is (or the sum overflows, which only
            # absurd weights do): a reduction XLA fuses, with no P-sized temporary, where
            # an elementwise isfinite mask costs one (the memory test of the tiled NTK).
            bad = sum(jnp.sum(~jnp.isfinite(jnp.sum(leaf))) for leaf in leaves)
            x1 = require(  # threaded through x1: every kernel entry depends on it
                x1,
                bad > 0,
                "empirical_ntk_fn: params must be finite (no NaN or inf), got {} parameter "
                "arrays with non-finite entries.",
                bad,
            )
            x2 = x1 if same else x2
        out = jax.eval_shape(apply, params, x1[0])  # raises apply's own shape errors
        out_ndim = len(out.shape)
        trace, diagonal = _normalise_axes(trace_axes, diagonal_axes, out_ndim)
        trace_size = math.prod(out.shape[axis] for axis in trace)  # NT averages traced axes

        def block(a: Array, b: Array):
            blocks = _kernel_blocks(apply, params, a, b, out_ndim, trace, diagonal, implementation)
            blocks = jax.tree.map(lambda k: k / trace_size, blocks)
            return blocks if per_block else sum(jax.tree.leaves(blocks))

        if batch_size is None:
            return block(x1, x2)
        c1, n1 = _chunk(x1, batch_size)
        c2, n2 = _chunk(x2, batch_size)
        tiles = jax.lax.map(lambda a: jax.lax.map(lambda b: block(a, b), c2), c1)

        def assemble(t: Array) -> Array:  # (C1, C2, b, b, ...) -> (N1, N2, ...)
            t = jnp.swapaxes(t, 1, 2)
            t = t.reshape((t.shape[0] * t.shape[1], t.shape[2] * t.shape[3], *t.shape[4:]))
            return t[:n1, :n2]

        return jax.tree.map(assemble, tiles)

    return jax.jit(ntk_fn)


def empirical_ntk(
    apply: Callable[[Params, Array], Array],
    x1: Array,
    x2: Array | None,
    params: Params,
    **kwargs,
) -> Array | Params:
    """One-shot :func:`empirical_ntk_fn` ``(apply, **kwargs)(x1, x2, params)``."""
    return empirical_ntk_fn(apply, **kwargs)(x1, x2, params)


def ntk_vector_product_fn(
    apply: Callable[[Params, Array], Array],
) -> Callable[[Array, Array, Params, Array], Array]:
    """Return ``ntk_vp(x1, x2, params, v) = Θ(x1, x2) v`` without forming ``Θ``.

    ``v`` has the batched output shape of ``x2``, ``(N2, *S)``; the result has shape
    ``(N1, *S)``: ``J_1 (J_2^⊤ v)`` by one VJP and one JVP (cost of two forward/backward
    passes; for iterative solvers such as conjugate gradients).

    Examples:
      >>> import jax.numpy as jnp
      >>> from ntsim.core import linear
      >>> vp = ntk_vector_product_fn(linear().apply)
      >>> x = jnp.array([[1.0, 0.0], [1.0, 1.0]])
      >>> vp(x, x, {"w": jnp.zeros(2)}, jnp.ones((2, 1))).ravel().tolist()  # X Xᵀ 1
      [2.0, 3.0]
    """

    def ntk_vp(x1: Array, x2: Array, params: Params, v: Array) -> Array:
        out2, vjp2 = jax.vjp(lambda p: _batched(apply, p, x2), params)
        if v.shape != out2.shape:
            raise ValueError(
                f"ntk_vector_product_fn: v must have the batched output shape {out2.shape} "
                f"of x2, got {v.shape}."
            )
        (tangent,) = vjp2(v)
        return jax.jvp(lambda p: _batched(apply, p, x1), (params,), (tangent,))[1]

    return jax.jit(ntk_vp)
