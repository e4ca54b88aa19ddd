"""The synthetic leave-one-out suite of Fu et al. 2023, Sec 4.3 (Figs 5–9), as pure pieces.

One *cell* is one synthetic dataset (:func:`ntsim.core.separable_dataset`: slab half-width
``γ`` = ``margin``, ball radius ``B`` = ``radius``, slab centre at ``offset``), a drawn
left-out index ``i`` and an init ``w_0``; head tuning runs full-batch GD on the mean
logistic loss of the augmented points ``[x; −1]`` with ``η = 1/β_F`` on ``S`` and, from the
same init, on ``S^i`` (``1/n`` normaliser, eq. (12)). The measured quantity is the normalised
leave-one-out distance

    ‖Δ̂_t‖ = ‖w_t/‖w_t‖ − w^i_t/‖w^i_t‖‖

and its ``t → ∞`` limit, the same distance between the bias-penalised hard-margin SVMs of
the augmented points (the GD direction limit, Soudry et al. 2018), averaged exactly over
every ``i`` (only support vectors move the SVM, Lemma A.2.4).

Used by ``experiments/stability/synthetic_loo_stability.py`` (the figures) and by the trend
claims ``stability.fig2`` and ``stability.fig6``–``fig9``.
"""

from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import hard_margin_svm, separable_dataset
from ntsim.theory.stability import _head_tuning as st

__all__ = [
    "chunk_divisor",
    "loo_cell",
    "loo_sweep",
    "multi_head_cell",
    "svm_reference",
    "svm_sweep",
]


def loo_cell(
    key, params, *, num_points: int, dim: int, steps: tuple[int, ...], implementation: str = "xla"
) -> dict:
    """One dataset: generate, draw ``i`` and ``w_0``, GD on ``S`` and ``S^i`` from ``w_0``.

    ``params = (margin, radius, offset, init_norm)`` may be traced (vmap / ``lax.map`` over
    them); ``w_0 = init_norm · g/‖g‖`` with ``g ~ N(0, I_{d+1})`` (``w_0 = 0`` at norm 0).
    ``implementation`` is :func:`~ntsim.theory.stability.head_tuning_gd`'s (``"xla"`` or
    ``"fused"``).

    Returns:
      ``x``, ``y`` (the data), ``i``, ``w0``, ``delta`` (``‖Δ̂_t‖`` at ``steps``) and
      ``final`` (the two heads at the last step, shape ``(2, d + 1)``).
    """
    margin, radius, offset, init_norm = params
    k_data, k_i, k_init = jax.random.split(key, 3)
    data = separable_dataset(k_data, num_points, dim, margin=margin, radius=radius, offset=offset)
    i = jax.random.randint(k_i, (), 0, num_points)
    w0 = init_norm * st.normalize(jax.random.normal(k_init, (dim + 1,), data.x.dtype))
    run = st.loo_head_tuning(data.x, data.y, i, record_steps=steps, init=w0,
                             implementation=implementation)  # fmt: skip
    delta = st.direction_error(run.weights[:, 1], run.weights[:, 0])
    return {"x": data.x, "y": data.y, "i": i, "w0": w0, "delta": delta, "final": run.weights[-1]}


def on_margin(x, y, solution) -> jax.Array:
    """``(n,)``: whether each point lies on ``solution``'s margin (an active constraint).

    A point is on the margin when its slack ``y_i(v̂ᵀx_i − b̂) − 1`` is at most its dual weight
    relative to the largest, ``α_i/max α``. An interior-point solution keeps
    ``slack_i · α_i ≈ μ`` (its final barrier parameter) for every point, so an active point has
    a large ``α_i`` and a tiny slack and an inactive one the reverse; the rule splits them
    wherever ``slack_i`` and ``α_i/max α`` are not both near ``√(μ/max α)``. A fixed slack cut
    cannot: the slack of a true support vector runs from 1e-8 to 1e-6 with its ``α_i``, and
    the solver's ``support`` flag (``α_i > 1e-6·max α``) caught an inactive point 4.6e-6 above
    the margin (``α_i = 2.4e-6·max α``).
    """
    slack = y * (x @ solution.weights - solution.bias) - 1.0
    return slack <= solution.dual / jnp.max(solution.dual)


#: Two points closer than this are copies of one point: :func:`ntsim.core.separable_dataset`
#: emits duplicates in ``d = 2`` (when both the depth and the in-plane offset are clipped)
#: that coincide to the last bit or to one ulp (1.1e-16 seen, under the command line's XLA
#: optimisation level), while distinct continuous draws in a ball of radius ≤ 1.5 are apart
#: by far more (a pair within 1e-12 has probability ~1e-24 per pair in the plane).
COPY_DISTANCE = 1e-12


def _copies(x) -> jax.Array:
    """``(n, n)``: whether points ``i`` and ``j`` are copies (within :data:`COPY_DISTANCE`)."""
    return jnp.max(jnp.abs(x[:, None, :] - x[None, :, :]), axis=-1) <= COPY_DISTANCE


def removed_or_copy(x, removed) -> jax.Array:
    """``(n,)``: whether each point, or a copy of it, is among the ``removed`` indices.

    Removing one copy of a point on the margin leaves the SVM unchanged, so a design check
    over "every point on the margin removed" counts distinct points (:data:`COPY_DISTANCE`).
    """
    return jnp.any(_copies(x)[:, removed], axis=1)


def _earlier_copy(x, flags) -> jax.Array:
    """``(n,)``: whether point ``i`` has a copy among the ``flags``-marked points before it."""
    n = x.shape[0]
    earlier = jnp.arange(n)[None, :] < jnp.arange(n)[:, None]
    return jnp.any(_copies(x) & flags[None, :] & earlier, axis=1)


def distinct_count(x, flags) -> jax.Array:
    """The number of distinct points among those ``flags`` marks (copies count once)."""
    return jnp.sum(flags & ~_earlier_copy(x, flags))


def largest_distinct(x, weights, count: int) -> jax.Array:
    """Indices of the ``count`` largest ``weights`` over distinct points: a copy of an
    earlier point is ranked last, so two copies sharing one dual never take two places
    (:data:`COPY_DISTANCE`)."""
    repeated = _earlier_copy(x, jnp.ones(x.shape[0], bool))
    return jnp.argsort(-jnp.where(repeated, -jnp.inf, weights))[:count]


def svm_reference(x, y, i) -> dict:
    """SVM quantities of one dataset (call under ``jax.enable_x64``, float64 inputs).

    Returns:
      ``svm_delta``: ``‖ŵ_S/‖ŵ_S‖ − ŵ_{S^i}/‖ŵ_{S^i}‖‖`` for the drawn ``i`` (bias-penalised
      SVMs of the augmented points, the GD limit); ``svm_avg``: the same distance averaged
      over all ``n`` choices of ``i``, computed exactly — only support vectors move the SVM
      (Lemma A.2.4), so it is ``(1/n)Σ_{i ∈ SV}`` over the ``min(n, d + 3)`` points of
      largest dual weight; ``svm_avg_exact`` says whether they cover every point on the
      margin of ``S`` (so every support vector, :func:`on_margin`);
      ``num_support``; ``w_svm = ŵ_S``; ``w_svm_loo = ŵ_{S^i}``; ``gamma``, the margin of the
      classical bias-free SVM of ``S`` (the paper's γ_S); ``kkt``, the largest KKT residual of
      the solves.
    """
    n, d = x.shape
    solve = jax.vmap(lambda mask: hard_margin_svm(x, y, sample_mask=mask))
    both = solve(jnp.stack([jnp.ones((n,), bool), jnp.arange(n) != i]))  # S, S^i
    free = hard_margin_svm(x, y, penalize_bias=False)
    heads = st.svm_head(both.weights, both.bias)
    top = jax.lax.top_k(both.dual[0], min(n, d + 3))[1]
    loo = solve(jnp.arange(n)[None, :] != top[:, None])
    dist = st.direction_error(st.svm_head(loo.weights, loo.bias), heads[0])
    support = both.support[0]
    full_s = jax.tree.map(lambda a: a[0], both)
    kkt = jnp.max(jnp.concatenate([both.kkt_residual, loo.kkt_residual, free.kkt_residual[None]]))
    return {
        "svm_delta": st.direction_error(heads[1], heads[0]),
        "svm_avg": jnp.sum(jnp.where(support[top], dist, 0.0)) / n,
        "svm_avg_exact": jnp.all(~on_margin(x, y, full_s) | removed_or_copy(x, top)),
        "num_support": jnp.sum(support),
        "w_svm": heads[0],
        "w_svm_loo": heads[1],
        "gamma": free.margin,
        "kkt": kkt,
    }


@partial(jax.jit, static_argnames=("num_points", "dim", "steps", "chunk_size", "implementation"))
def _gd_sweep(keys, params, *, num_points, dim, steps, chunk_size, implementation="xla"):
    def fn(a):
        return loo_cell(a[0], a[1], num_points=num_points, dim=dim, steps=steps,
                        implementation=implementation)  # fmt: skip

    return jax.lax.map(fn, (keys, params), batch_size=chunk_size)


@partial(jax.jit, static_argnames=("chunk_size",))
def _svm_sweep(x, y, i, *, chunk_size):
    return jax.lax.map(lambda a: svm_reference(*a), (x, y, i), batch_size=chunk_size)


def svm_sweep(x, y, i, *, chunk_size) -> dict:
    """:func:`svm_reference` over datasets (float64, ``lax.map`` in chunks), as numpy."""
    with jax.enable_x64(True):
        ref = _svm_sweep(jnp.asarray(np.asarray(x), jnp.float64),
                         jnp.asarray(np.asarray(y), jnp.float64), jnp.asarray(np.asarray(i)),
                         chunk_size=chunk_divisor(chunk_size, len(i)))  # fmt: skip
        return {k: np.asarray(v) for k, v in ref.items()}


GD_CHUNK_SIZE = 4
"""Datasets per ``lax.map`` batch of the GD sweep: a chunk's data stays in cache while all its
steps run (2,000 × 11 floats = 88 KB per dataset). Measured on 2 cores, 64 datasets:
chunks of 2–4 run 1.7x faster than vmapping all 64 and 2.6x faster than chunks of 1."""


def loo_sweep(
    keys, params, *, num_points, dim, steps, chunk_size, implementation: str = "xla"
) -> dict:
    """:func:`loo_cell` over datasets (``lax.map`` in chunks) then :func:`svm_reference`.

    ``params``: ``(K, 4)`` rows ``(margin, radius, offset, init_norm)``. ``chunk_size`` is
    the SVM solves' batch; GD runs in batches of at most :data:`GD_CHUNK_SIZE`
    (``implementation="fused"``: all datasets in one batch, the kernel threads over them).
    Returns numpy arrays with a leading axis ``K``, plus the GD and SVM wall times
    (compilation included).
    """
    start = time.perf_counter()
    out = jax.block_until_ready(_gd_sweep(
        keys, jnp.asarray(params, jnp.float32), num_points=num_points, dim=dim, steps=steps,
        chunk_size=len(params) if implementation == "fused"
        else chunk_divisor(min(chunk_size, GD_CHUNK_SIZE), len(params)),
        implementation=implementation,
    ))  # fmt: skip
    gd_time = time.perf_counter() - start
    start = time.perf_counter()
    ref = svm_sweep(out["x"], out["y"], out["i"], chunk_size=chunk_size)
    svm_time = time.perf_counter() - start
    result = {k: np.asarray(out[k]) for k in ("i", "w0", "delta", "final")}
    result.update(ref)
    result["svm"] = result["svm_avg"]  # the SVM curves: exact mean over the left-out i
    result["w0_distance"] = np.linalg.norm(result["w0"] - result["w_svm"], axis=-1)
    result["gd_time"], result["svm_time"] = gd_time, svm_time
    return result


def multi_head_cell(key, *, num_points, dim, steps, num_heads, scale, margin, radius, offset):
    """MHLoss on ``S`` and ``S^i``: ``num_heads`` heads from ``N(0, scale²)``, same inits.

    Returns ``x``, ``y``, ``i`` and ``delta`` of shape ``(len(steps), num_heads)``: entry
    ``[t, H−1]`` is ``‖Δ̂_t‖`` of the averaged head ``w̄`` of the first ``H`` heads.
    """
    k_data, k_i, k_init = jax.random.split(key, 3)
    data = separable_dataset(k_data, num_points, dim, margin=margin, radius=radius, offset=offset)
    i = jax.random.randint(k_i, (), 0, num_points)
    init = st.multi_head_init(k_init, num_heads, dim, scale).astype(data.x.dtype)
    weights = jnp.concatenate([
        jnp.broadcast_to(jnp.full((num_points,), 1.0 / num_points, data.x.dtype),
                         (num_heads, num_points)),
        jnp.broadcast_to(st.loo_weights(num_points, i, dtype=data.x.dtype),
                         (num_heads, num_points)),
    ])  # fmt: skip
    run = st.head_tuning_gd(
        data.x, data.y, jnp.concatenate([init, init]),
        learning_rate=st.head_tuning_step_size(data.x), record_steps=steps,
        sample_weights=weights,
    )  # fmt: skip
    w = run.weights.reshape(len(steps), 2, num_heads, dim + 1)
    counts = jnp.arange(1, num_heads + 1, dtype=w.dtype)[None, None, :, None]
    mean_first = jnp.cumsum(w, axis=2) / counts  # w̄ of the first H heads, every H
    delta = st.direction_error(mean_first[:, 1], mean_first[:, 0])
    return {"x": data.x, "y": data.y, "i": i, "delta": delta}


def chunk_divisor(size: int, count: int) -> int:
    """The largest divisor of ``count`` that is ``≤ size`` (no remainder batch to compile)."""
    return max(b for b in range(1, min(size, count) + 1) if count % b == 0)
