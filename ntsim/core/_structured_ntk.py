r"""Structured NTK blocks of dense-like weights: ``(A Aᵀ) ∘ (Δ Δᵀ)`` instead of ``J Jᵀ``.

A weight ``W`` that enters the model only through matrix products ``y = a·W`` (possibly
transposed, possibly several times, e.g. per token) has the per-example Jacobian

.. math:: \frac{∂f_i(x)}{∂W} = \sum_t a_t(x) ⊗ δ_{i,t}(x), \qquad δ_{i,t} = \frac{∂f_i}{∂y_t},

so its NTK block is (Novak et al. 2022, "Fast finite width neural tangent kernel", Sec 4)

.. math:: Θ_W(x, x')_{ij} = \sum_{t,s} \big(a_t(x)·a_s(x')\big)\big(δ_{i,t}(x)·δ_{j,s}(x')\big),

which for one position per example is the Hadamard product ``(A Aᵀ) ∘ (Δ Δᵀ)``. It needs
the layer inputs ``a`` (a forward pass) and the output cotangents ``δ`` (one backward pass
per output entry), never the ``fan_in × fan_out`` Jacobian: memory does not grow with the
parameter count. When ``N·T²(fan_in + fan_out)`` exceeds ``(N + T)·fan_in·fan_out`` (many
positions, small weights) the block is formed as ``⟨Σ_t a_t ⊗ δ_t, Σ_s a'_s ⊗ δ'_s⟩``
instead, still from ``a`` and ``δ`` alone (one ``fan_in × fan_out`` matrix per example
and output, never the whole Jacobian).

An embedding table read by row lookups ``y_t = W[id_t]`` is the same rule with one-hot
inputs, ``a_t·a'_s = [id_t = id'_s]``:

.. math:: Θ_W(x, x')_{ij} = \sum_{t,s} [\mathrm{id}_t = \mathrm{id}'_s]\, δ_{i,t}·δ'_{j,s},

at cost ``N²T²F`` instead of ``N²·V·F`` for a vocabulary of ``V`` rows.

Which leaves are structured is found automatically from the model's jaxpr: a leaf qualifies
if every use of it (through ``transpose`` and nested ``jit`` calls) is one operand of a
``dot_general`` without batch dimensions whose other operand does not depend on the
parameters' identity, all its uses contracting the same axes of ``W``; or if every use is
a row ``gather`` of the untransposed 2-D table (``jnp.take(W, ids, axis=0)``, what
``flax.linen.Embed`` does). Any other use (e.g. ``W * c``) disqualifies it. The layer
inputs, the looked-up ids and the cotangents are read by re-evaluating that jaxpr with a
zero perturbation added to each such product's output and differentiating with respect to
the perturbations. The remaining leaves (biases, LayerNorm scales, …) are differentiated
in the same backward pass, and their per-example Jacobians contracted (Jacobian
contraction, but without a second backward pass).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.extend import core as jcore

from ntsim._types import Array, Params

__all__ = ["dense_leaves", "structured_kernel_blocks"]

_CALLS = ("jit", "pjit", "closed_call", "core_call")


JACOBIAN_ORDER_PENALTY = 8
"""How many Gram-order FLOPs one Jacobian-order FLOP is worth. The per-example outer
products ``Σ_t a_t ⊗ δ_t`` are batched matmuls with a short contraction (``T``) and a large
output, which XLA's CPU backend runs ~15x slower per FLOP than the Gram order's matmuls
(measured: N = 64, T = 16, C = F = 256: Gram order 7.9 ms for 1.07 GFLOP, Jacobian order
36 ms for 0.67 GFLOP). The Jacobian order still wins for many positions and small weights
(``T²(C + F) ≫ C·F``)."""


class _Use(NamedTuple):
    leaf: int
    side: int  # 0: the weight is the lhs of dot_general, 1: the rhs (a gather: 0)
    a_perm: tuple[int, ...]  # transpose of the other operand to (free..., contracted...)
    a_free_size: int  # positions T of this use
    y_perm: tuple[int, ...]  # transpose of the output to (a-free..., leaf-free sorted...)
    contracted: tuple[int, ...]  # leaf axes contracted (sorted)
    kind: str = "dot"  # or "gather": the recorded activation is then the row ids (T,)


class _Context:
    """What one evaluation of the jaxpr collects (uses, disqualified leaves, layer inputs)."""

    def __init__(self, eps=None):
        self.uses: list[_Use] = []
        self.disqualified: set[int] = set()
        self.eps = eps
        self.activations: list[Array] = []
        self.product_avals: list[tuple[tuple[int, ...], Any]] = []


def _read(env, var):
    return var.val if isinstance(var, jcore.Literal) else env[var]


def _dot_use(eqn, tags, ctx) -> _Use | None:
    """A :class:`_Use` when exactly one operand of this dot_general is a tagged weight."""
    (contract_l, contract_r), (batch_l, batch_r) = eqn.params["dimension_numbers"]
    tagged = [tags.get(v) if not isinstance(v, jcore.Literal) else None for v in eqn.invars]
    if all(t is None for t in tagged):
        return None
    if all(t is not None for t in tagged) or batch_l or batch_r:
        for t in tagged:
            if t is not None:
                ctx.disqualified.add(t[0])
        return None
    side = 0 if tagged[0] is not None else 1
    leaf, perm = tagged[side]
    w_contract = (contract_l, contract_r)[side]
    a_contract = (contract_l, contract_r)[1 - side]
    w_ndim = len(perm)
    a_ndim = eqn.invars[1 - side].aval.ndim
    pairs = sorted(zip((perm[k] for k in w_contract), a_contract, strict=True))
    contracted = tuple(c for c, _ in pairs)
    a_free = [d for d in range(a_ndim) if d not in a_contract]
    w_free = [k for k in range(w_ndim) if k not in w_contract]
    a_perm = tuple(a_free) + tuple(a for _, a in pairs)
    # output layout: lhs free dims then rhs free dims
    if side == 1:
        a_pos = list(range(len(a_free)))
        w_pos = {k: len(a_free) + i for i, k in enumerate(w_free)}
    else:
        w_pos = {k: i for i, k in enumerate(w_free)}
        a_pos = [len(w_free) + i for i in range(len(a_free))]
    w_free_sorted = sorted(w_free, key=lambda k: perm[k])
    y_perm = tuple(a_pos) + tuple(w_pos[k] for k in w_free_sorted)
    a_shape = eqn.invars[1 - side].aval.shape
    a_free_size = math.prod(a_shape[d] for d in a_free)
    return _Use(leaf, side, a_perm, a_free_size, y_perm, contracted)


def _gather_use(eqn, tags, ctx) -> _Use | None:
    """A :class:`_Use` for ``W[ids]`` (row lookups of an untransposed 2-D table)."""
    operand, indices = eqn.invars
    tag = None if isinstance(operand, jcore.Literal) else tags.get(operand)
    if tag is None:
        return None
    leaf, perm = tag
    numbers = eqn.params["dimension_numbers"]
    out_ndim = eqn.outvars[0].aval.ndim
    rows = (
        perm == (0, 1)
        and indices.aval.shape[-1:] == (1,)
        and tuple(numbers.collapsed_slice_dims) == (0,)
        and tuple(numbers.start_index_map) == (0,)
        and tuple(numbers.offset_dims) == (out_ndim - 1,)
        and not getattr(numbers, "operand_batching_dims", ())
        and tuple(eqn.params["slice_sizes"]) == (1, operand.aval.shape[1])
    )
    if not rows:
        ctx.disqualified.add(leaf)
        return None
    positions = math.prod(indices.aval.shape[:-1])
    return _Use(leaf, 0, (), positions, tuple(range(out_ndim)), (0,), kind="gather")


def _row_ids(eqn, indices) -> Array:
    """The table rows a gather reads, ``-1`` where it reads none (out of bounds, fill mode)."""
    rows = eqn.invars[0].aval.shape[0]
    ids = indices[..., 0].reshape(-1)
    mode = eqn.params["mode"]
    if mode == jax.lax.GatherScatterMode.CLIP:
        return jnp.clip(ids, 0, rows - 1)
    return jnp.where((ids >= 0) & (ids < rows), ids, -1)


def _interpret(jaxpr, consts, args, arg_tags, ctx: _Context):
    """Evaluate ``jaxpr`` tracking which values are (transposed) parameter leaves."""
    env, tags = {}, {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value, tag in zip(jaxpr.invars, args, arg_tags, strict=True):
        env[var] = value
        if tag is not None:
            tags[var] = tag
    for eqn in jaxpr.eqns:
        invals = [_read(env, v) for v in eqn.invars]
        in_tags = [None if isinstance(v, jcore.Literal) else tags.get(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in _CALLS and any(t is not None for t in in_tags):
            inner = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
            closed = inner if hasattr(inner, "consts") else None
            body = closed.jaxpr if closed is not None else inner
            outs, out_tags = _interpret(
                body, closed.consts if closed is not None else (), invals, in_tags, ctx
            )
            for var, value, tag in zip(eqn.outvars, outs, out_tags, strict=True):
                env[var] = value
                if tag is not None:
                    tags[var] = tag
            continue
        if name == "transpose" and in_tags[0] is not None:
            leaf, perm = in_tags[0]
            (out,) = eqn.outvars
            env[out] = jax.lax.transpose(invals[0], eqn.params["permutation"])
            tags[out] = (leaf, tuple(perm[p] for p in eqn.params["permutation"]))
            continue
        use = None
        if name == "dot_general":
            use = _dot_use(eqn, tags, ctx)
        elif name == "gather":
            use = _gather_use(eqn, tags, ctx)
        if use is None and name not in ("dot_general", "gather"):
            for t in in_tags:
                if t is not None:
                    ctx.disqualified.add(t[0])
        bind_params = eqn.primitive.get_bind_params(eqn.params)
        subfuns = []
        if isinstance(bind_params, tuple):  # jax < 0.7: (subfuns, params)
            subfuns, bind_params = bind_params
        with eqn.ctx.manager:
            outs = eqn.primitive.bind(*subfuns, *invals, **bind_params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        if use is not None:
            index = len(ctx.uses)
            ctx.uses.append(use)
            if use.kind == "gather":
                ctx.activations.append(_row_ids(eqn, invals[1]))
            else:
                ctx.activations.append(invals[1 - use.side])
            ctx.product_avals.append((tuple(outs[0].shape), outs[0].dtype))
            if ctx.eps is not None:
                outs = [outs[0] + ctx.eps[index]]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
    out_tags = [None if isinstance(v, jcore.Literal) else tags.get(v) for v in jaxpr.outvars]
    return [_read(env, v) for v in jaxpr.outvars], out_tags


def _trace(apply, params, x_example):
    leaves, treedef = jax.tree.flatten(params)
    closed = jax.make_jaxpr(lambda ls, x: apply(jax.tree.unflatten(treedef, ls), x))(
        leaves, x_example
    )
    return closed, leaves, treedef


def _leaf_tags(leaves) -> list:
    return [(i, tuple(range(jnp.ndim(leaf)))) for i, leaf in enumerate(leaves)] + [None]


def _analyse(closed, leaves) -> tuple[_Context, list[bool]]:
    """Uses of every leaf, product output shapes and the dense flags (abstract evaluation)."""
    ctx = _Context()
    x_aval = closed.in_avals[len(leaves)]

    def run(*args):
        _interpret(closed.jaxpr, closed.consts, args, _leaf_tags(leaves), ctx)
        return 0.0

    jax.eval_shape(run, *leaves, jax.ShapeDtypeStruct(x_aval.shape, x_aval.dtype))
    dense = []
    for leaf in range(len(leaves)):
        kinds = {(u.kind, u.contracted) for u in ctx.uses if u.leaf == leaf}
        dense.append(len(kinds) == 1 and leaf not in ctx.disqualified)
    return ctx, dense


def dense_leaves(apply: Callable[[Params, Array], Array], params: Params, x_example: Array):
    """Boolean pytree like ``params``: ``True`` where the structured rule applies (module doc:
    dense-like weights and row-gathered embedding tables).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ntsim.core import mlp
      >>> model = mlp((4,), parameterization="ntk")
      >>> p = model.init(jax.random.PRNGKey(0), jnp.ones(3))
      >>> [bool(v) for v in jax.tree.leaves(dense_leaves(model.apply, p, jnp.ones(3)))]
      [False, True, False, True]
    """
    closed, leaves, treedef = _trace(apply, params, x_example)
    _, dense = _analyse(closed, leaves)
    return jax.tree.unflatten(treedef, dense)


def _probe(closed, analysis: _Context, leaves, rest: list[int], x, out_shape):
    """One example, one backward pass per output entry. Per use: the layer input ``(T, C)``
    (row ids ``(T,)`` for a gather) and the cotangents ``(|S|, T, F)``; per leaf in
    ``rest``: its Jacobian ``(|S|, *leaf)``."""

    def forward(eps, rest_values):
        values = list(leaves)
        for i, value in zip(rest, rest_values, strict=True):
            values[i] = value
        ctx = _Context(eps)
        (out,), _ = _interpret(closed.jaxpr, closed.consts, [*values, x], _leaf_tags(leaves), ctx)
        return out, ctx.activations

    eps0 = [jnp.zeros(shape, dtype) for shape, dtype in analysis.product_avals]
    out, vjp, activations = jax.vjp(forward, eps0, [leaves[i] for i in rest], has_aux=True)
    size = math.prod(out_shape)
    basis = jnp.eye(size, dtype=out.dtype).reshape((size, *out_shape))
    cotangents, rest_jacobians = jax.vmap(vjp)(basis)  # per use: (|S|, *product shape)
    result = []
    for use, act, cot in zip(analysis.uses, activations, cotangents, strict=True):
        if use.kind == "gather":
            a = act
        else:
            a = jnp.transpose(act, use.a_perm).reshape(use.a_free_size, -1)
        d = jnp.transpose(cot, (0, *(1 + p for p in use.y_perm)))
        result.append((a, d.reshape(size, use.a_free_size, -1)))
    return result, rest_jacobians


def structured_kernel_blocks(apply, params, x1, x2, contract, contract_jacobians) -> Params:
    """Per-leaf kernels: structured for dense and gathered leaves, Jacobian contraction of
    the same backward pass's per-example Jacobians for the others.

    ``contract(full)`` reduces a full ``(N1, *S, N2, *S)`` block to the caller's layout;
    ``contract_jacobians(j1, j2)`` does the same from Jacobians ``(N, *S, *leaf)``.
    ``x2 is x1`` reuses the first side's pass.
    """
    closed, leaves, treedef = _trace(apply, params, x1[0])
    analysis, dense = _analyse(closed, leaves)
    out_shape = tuple(closed.out_avals[0].shape)
    rest = [i for i, flag in enumerate(dense) if not flag]

    def probe(x):
        return _probe(closed, analysis, leaves, rest, x, out_shape)

    (p1, j1) = jax.vmap(probe)(x1)
    (p2, j2) = (p1, j1) if x2 is x1 else jax.vmap(probe)(x2)
    blocks: list[Array | None] = [None] * len(leaves)
    for leaf in (i for i, flag in enumerate(dense) if flag):
        idx = [k for k, u in enumerate(analysis.uses) if u.leaf == leaf]
        a1 = jnp.concatenate([p1[k][0] for k in idx], axis=1)  # (N1, T, C) or ids (N1, T)
        a2 = jnp.concatenate([p2[k][0] for k in idx], axis=1)
        d1 = jnp.concatenate([p1[k][1] for k in idx], axis=2)  # (N1, S, T, F)
        d2 = jnp.concatenate([p2[k][1] for k in idx], axis=2)
        if analysis.uses[idx[0]].kind == "gather":
            same_row = (a1[:, :, None, None] == a2[None, None, :, :]) & (a1 >= 0)[:, :, None, None]
            full = _dense_block(None, None, d1, d2, gram_a=same_row.astype(d1.dtype))
        else:
            full = _dense_block(a1, a2, d1, d2)  # (N1, S, N2, S)
        blocks[leaf] = contract(full.reshape((x1.shape[0], *out_shape, x2.shape[0], *out_shape)))
    for i, a, b in zip(rest, j1, j2, strict=True):
        blocks[i] = contract_jacobians(
            a.reshape((x1.shape[0], *out_shape, *a.shape[2:])),
            b.reshape((x2.shape[0], *out_shape, *b.shape[2:])),
        )
    return jax.tree.unflatten(treedef, blocks)


def _dense_block(a1, a2, d1, d2, order: str | None = None, gram_a=None) -> Array:
    """``Σ_{t,s} (a1_t·a2_s)(d1_{i,t}·d2_{j,s})`` → ``(N1, S, N2, S)``.

    ``order="gram"`` forms the Gram matrices of the inputs and of the cotangents (cost
    ``N1·N2·T1·T2·(C + F)``); ``order="jacobian"`` forms ``Σ_t a_t ⊗ δ_t`` per example first
    (cost ``(N1·T1 + N2·T2)·C·F + N1·N2·C·F``); ``None`` picks the cheaper, counting the
    Jacobian order's FLOPs :data:`JACOBIAN_ORDER_PENALTY` times. ``gram_a``
    ``(N1, T1, N2, T2)`` given: the inputs' Gram itself (gathers), Gram order.
    """
    if gram_a is not None:
        order = "gram"
    else:
        n1, t1, c = a1.shape
        n2, t2, _ = a2.shape
        f = d1.shape[3]
    if order is None:
        gram_cost = n1 * n2 * t1 * t2 * (c + f)
        jacobian_cost = (n1 * t1 + n2 * t2) * c * f + n1 * n2 * c * f
        order = "gram" if gram_cost <= JACOBIAN_ORDER_PENALTY * jacobian_cost else "jacobian"
    if order == "gram":
        if gram_a is None:
            gram_a = jnp.einsum("ntc,msc->ntms", a1, a2)
        gram_d = jnp.einsum("nitf,mjsf->nitmjs", d1, d2)
        return jnp.einsum("ntms,nitmjs->nimj", gram_a, gram_d)
    j1 = jnp.einsum("ntc,nitf->nicf", a1, d1)
    j2 = jnp.einsum("msc,mjsf->mjcf", a2, d2)
    return jnp.einsum("nicf,mjcf->nimj", j1, j2)
