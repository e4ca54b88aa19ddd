r"""Head tuning (Fu et al. 2023, Sec 2.3, 3.2, App. A.2–A.4): GD on separable data, Thm 2.4.

Setting (Sec 2.3, eq. (4)). Frozen features ``E(x_i) ∈ R^d`` with labels ``y_i = ±1`` are
augmented to ``x̃_i = [E(x_i); −1]`` (:func:`augment_features`) and a linear head
``w = [v; b]`` is trained by full-batch GD on the logistic loss
``𝓛(w) = Σ_i c_i ℓ(y_i wᵀx̃_i)``, ``ℓ(u) = log(1 + e^{−u})``, with weights ``c_i = 1/n`` on
``S``. The leave-one-out set ``S^i`` is the same problem with ``c_i = 0``; the remaining
weights are ``1/n`` (``loo_normalizer="n"``, the convention of the paper's eq. (12)) or
``1/(n − 1)`` (the average over ``S^i``), see :func:`loo_weights`. The step size is
``η = 1/β_F`` with ``β_F = σ_max²(X̃)/(4n)`` the smoothness of ``𝓛`` on ``S``
(:func:`head_tuning_step_size`); the same ``η`` is used on ``S^i``.

**Which SVM.** GD on the homogeneous predictor ``wᵀx̃`` converges in direction to the
hard-margin SVM of the *augmented* points, ``argmin ‖w‖²`` s.t. ``y_i wᵀx̃_i ≥ 1``, in which
``b`` is penalised (Soudry et al. 2018, Thm 3). The paper writes the classical SVM with an
unpenalised bias (Lemma A.2.3, eq. (13)); the two differ whenever the optimal bias is not 0.
Both are available from :func:`ntsim.core.hard_margin_svm` (``penalize_bias``); every
"GD direction vs SVM" quantity here takes the SVM head ``ŵ = [v̂; b̂]`` as an argument.

Thm 2.4 (eq. (6)) bounds the normalised leave-one-out distance
``‖Δ̂_t‖ = ‖w^i_t/‖w^i_t‖ − w_t/‖w_t‖‖`` through the exact triangle inequality
(:func:`telescoping_sides`) ``‖Δ̂_t‖ ≤ e_S(t) + e_{S^i}(t) + ‖ŵ_{S^i}/‖ŵ_{S^i}‖ − ŵ_S/‖ŵ_S‖‖``
with ``e_S(t) = ‖w_t/‖w_t‖ − ŵ_S/‖ŵ_S‖‖`` (:func:`direction_error`), Soudry's rate
``e_S + e_{S^i} ≤ C log log t/log t`` (:func:`soudry_rate`), Lemma A.2.1 (:func:`nu_lemma_a2_1`)
and Lemma A.2.5 (:func:`lemma_a2_5_bound`). Cor 2.5 replaces A.2.5 by ``L/(λn)``; its proof
needs the bias penalised and ``S^i`` normalised by ``1/n``, and then gives ``L/(2λn)``
(:func:`cor2_5_gap_printed`, :func:`cor2_5_gap_corrected`). Cor 3.1 (MHLoss, eq. (11)) is
:func:`cor3_1_bound_printed` / :func:`cor3_1_bound_corrected` with :func:`head_xi`.

The runner :func:`head_tuning_gd` trains ``k`` heads at once (the columns of one matrix
product per step: ``S`` and ``S^i``, or ``H`` MHLoss heads) and records the raw iterates only
at the requested steps (``lax.scan`` over the gaps between records, ``fori_loop`` inside),
so memory does not grow with the number of steps. It is ``jit``/``vmap``-compatible; vmap
it over datasets (and over the left-out index ``i``). Cost: ``4k·n·(d+1)`` flops per step.
For large sweeps chunk the datasets (``lax.map(..., batch_size≈25)`` for ``n = 2000``,
``d = 10``, float32: the chunk's features then stay in cache across steps; measured on the
shared 2-core CPU under load: 500 datasets × 2 runs × 10⁴ steps ≈ 100 s with chunks of 25,
≈ 190 s unchunked).

References:
  .. code-block:: bibtex

    @inproceedings{fu2023stability,
      title     = {A Stability Analysis of Fine-Tuning a Pre-Trained Model},
      author    = {Fu, Zihao and So, Anthony Man-Cho and Collier, Nigel},
      booktitle = {Proceedings of ACL},
      year      = {2023},
      url       = {https://arxiv.org/abs/2301.09820},
    }

  D. Soudry, E. Hoffer, M. S. Nacson, S. Gunasekar, N. Srebro (2018). The implicit bias of
  gradient descent on separable data. JMLR 19(70). arXiv:1710.10345.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._checks import require_index
from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import (
    _is_concrete,
    check_choice,
    check_ndim,
    check_positive,
    check_positive_int,
)
from ntsim.core import logistic_gd_fused
from ntsim.theory.stability._full_finetuning import LemmaSides, logistic_smoothness

__all__ = [
    "HEAD_TUNING_IMPLEMENTATIONS",
    "HeadTuningRun",
    "LOO_NORMALIZERS",
    "a4_1_convexity_sides",
    "augment_features",
    "cor2_5_gap_corrected",
    "cor2_5_gap_printed",
    "cor3_1_bound_corrected",
    "cor3_1_bound_printed",
    "cor3_1_factor",
    "cor3_1_min_delta",
    "direction_error",
    "fit_soudry_constant",
    "head_tuning_gd",
    "head_tuning_step_size",
    "head_xi",
    "hinge_lipschitz",
    "lemma_a2_1_sides",
    "lemma_a2_2_sides",
    "lemma_a2_3_bound",
    "lemma_a2_5_bound",
    "lemma_a2_5_bound_simplified",
    "lemma_a2_5_terms",
    "log_spaced_steps",
    "loo_head_tuning",
    "loo_weights",
    "multi_head_init",
    "normalize",
    "nu_lemma_a2_1",
    "soudry_rate",
    "svm_head",
    "telescoping_sides",
    "thm2_4_bound",
]

#: Implementations of :func:`head_tuning_gd`'s GD loop.
HEAD_TUNING_IMPLEMENTATIONS = ("xla", "fused")

#: Normalisers of the leave-one-out loss: ``"n"`` (paper's eq. (12)) or ``"n-1"``.
LOO_NORMALIZERS = ("n", "n-1")


class HeadTuningRun(NamedTuple):
    """Iterates of ``k`` heads trained together, recorded at ``steps``.

    Attributes:
      steps: ``(R,)`` the recorded step counts ``t``.
      weights: ``(R, k, d + 1)`` the raw iterates ``w_t = [v_t; b_t]`` of every head.
      loss: ``(R, k)`` each head's training loss ``Σ_i c_i ℓ(y_i w_tᵀx̃_i)``.
    """

    steps: Array
    weights: Array
    loss: Array


# ------------------------------------------------------------------------------- setting


def augment_features(x: ArrayLike) -> Array:
    """``x̃ = [x; −1]`` along the last axis (Fu et al. 2023, Sec 2.3), so ``wᵀx̃ = vᵀx − b``.

    Examples:
      >>> augment_features(jnp.array([[2.0, 3.0]])).tolist()
      [[2.0, 3.0, -1.0]]
    """
    x = jnp.asarray(x)
    return jnp.concatenate([x, -jnp.ones(x.shape[:-1] + (1,), x.dtype)], axis=-1)


def svm_head(weights: ArrayLike, bias: ArrayLike) -> Array:
    """The SVM ``(v̂, b̂)`` as a head ``ŵ = [v̂; b̂]`` in the coordinates of :func:`augment_features`.

    Examples:
      >>> svm_head(jnp.array([1.0, 2.0]), 0.5).tolist()
      [1.0, 2.0, 0.5]
    """
    weights = jnp.asarray(weights)
    bias = jnp.asarray(bias, weights.dtype)
    return jnp.concatenate([weights, bias[..., None]], axis=-1)


def head_tuning_step_size(x: ArrayLike) -> Array:
    r"""``η = 1/β_F`` with ``β_F = σ_max²(X̃)/(4n)``, the smoothness of the mean logistic loss.

    The Hessian of ``(1/n)Σ ℓ(y_i wᵀx̃_i)`` is ``(1/n)X̃ᵀ diag(ℓ'') X̃ ⪯ X̃ᵀX̃/(4n)``
    (``ℓ'' ≤ 1/4``), so GD with ``η = 1/β_F`` decreases the loss monotonically (Lemma A.5.1).
    Fu et al. state ``η < 2β^{−1}σ_max^{−1}(X̃)`` (Thm 2.4) for the per-sample smoothness
    ``β = 1/4``; for the averaged loss the step that Soudry et al. (2018, Thm 3) need is
    ``η < 2/β_F = 8n/σ_max²(X̃)``, and ``1/β_F`` satisfies it.

    Args:
      x: features ``E(x_i)``, shape ``(n, d)`` (augmented inside).

    Examples:
      >>> round(float(head_tuning_step_size(jnp.array([[1.0], [1.0]]))), 5)  # X̃ = [[1, −1]] × 2
      2.0
    """
    z = augment_features(x)
    check_ndim("head_tuning_step_size", "x", z, 2)
    return 1.0 / logistic_smoothness(z)


def loo_weights(n: int, i: ArrayLike, normalizer: str = "n", dtype=None) -> Array:
    """Per-sample loss weights of ``S^i``: 0 at ``i``, ``1/n`` (``"n"``) or ``1/(n−1)`` elsewhere.

    ``i`` may be traced (vmap over the left-out index). The paper's proof of eq. (12) uses
    ``1/n`` (the sum over ``S^i`` keeps the normaliser of ``S``).

    Examples:
      >>> loo_weights(4, 1, "n-1").tolist()
      [0.3333333432674408, 0.0, 0.3333333432674408, 0.3333333432674408]
    """
    check_choice("loo_weights", "normalizer", normalizer, LOO_NORMALIZERS)
    n = check_positive_int("loo_weights", "n", n)
    i = require_index("loo_weights", "i", i, n)  # a point outside S would leave none out
    dtype = jnp.result_type(float) if dtype is None else dtype
    scale = 1.0 / (n if normalizer == "n" else n - 1)
    return jnp.where(jnp.arange(n) == i, 0.0, scale).astype(dtype)


def log_spaced_steps(num_steps: int, num_records: int) -> tuple[int, ...]:
    """Distinct integer steps ``1 ≤ t ≤ num_steps``, roughly log-spaced, ending at ``num_steps``.

    Examples:
      >>> log_spaced_steps(1000, 4)
      (1, 10, 100, 1000)
    """
    if num_steps < 1 or num_records < 1:
        raise ValueError(f"log_spaced_steps: need num_steps, num_records >= 1, got "
                         f"{num_steps=}, {num_records=}.")  # fmt: skip
    grid = np.unique(np.round(np.geomspace(1, num_steps, num_records)).astype(int))
    return tuple(int(t) for t in grid)


def multi_head_init(key: PRNGKey, num_heads: int, dim: int, scale: ArrayLike = 1.0) -> Array:
    """``H`` independent heads ``w_h(0) ~ N(0, σ_0² I_{d+1})`` (MHLoss needs random inits, Sec 3.2).

    Examples:
      >>> multi_head_init(jax.random.key(0), 5, 3).shape
      (5, 4)
    """
    check_positive("multi_head_init", "scale", scale)
    return scale * jax.random.normal(key, (num_heads, dim + 1))


# -------------------------------------------------------------------------------- runner


def head_tuning_gd(
    x: ArrayLike,
    y: ArrayLike,
    init: ArrayLike,
    *,
    learning_rate: ArrayLike,
    record_steps: Sequence[int],
    sample_weights: ArrayLike | None = None,
    implementation: str = "xla",
) -> HeadTuningRun:
    r"""Full-batch GD of ``k`` linear heads on the logistic loss (Fu et al. 2023, eq. (4)).

    .. math::
        w_{k,t+1} = w_{k,t} - \eta \nabla_w \sum_i c_{k,i}\, \ell(y_i w_{k,t}^\top \tilde x_i),
        \qquad \ell(u) = \log(1 + e^{-u})

    with :math:`\eta` = ``learning_rate``, :math:`c` = ``sample_weights`` and
    :math:`\tilde x_i = [x_i; -1]`. Head ``k`` is row ``k`` of ``init``. Use cases:

    * ``S`` and ``S^i``: ``init = zeros((2, d+1))``, ``sample_weights =
      stack([full(n, 1/n), loo_weights(n, i)])``;
    * MHLoss (eq. (10)) with ``H`` heads: ``init = multi_head_init(...)``, the same weights
      for every head. GD on eq. (10) with step ``Hη`` is exactly this (each head takes the
      single-head step ``η``); GD on eq. (10) with step ``η`` is the same run at ``t/H``.

    Args:
      x: features ``E(x_i)``, shape ``(n, d)``.
      y: labels ``±1``, shape ``(n,)``.
      init: initial heads, shape ``(k, d + 1)``.
      learning_rate: ``η`` (may be traced), e.g. :func:`head_tuning_step_size`.
      record_steps: increasing non-negative step counts to record (static).
      sample_weights: ``(n,)`` (shared) or ``(k, n)``; default ``1/n``.
      implementation: ``"xla"`` (default: the GD loop as XLA matmuls, any dtype and
        platform) or ``"fused"``: each segment between records runs in one call of
        :func:`ntsim.core.logistic_gd_fused`, a CPU kernel that makes one pass over the data
        per step (float32, ``d + 1 ≤ 64``; 1.7x the XLA form on the benchmark sweep, see
        ``benchmarks/RESULTS.md``); the losses at the records stay in JAX. Both agree to
        float32 rounding (``tests/core/test_fused_logistic.py``).

    Returns:
      :class:`HeadTuningRun`.

    Examples:
      >>> x, y = jnp.array([[1.0], [-1.0]]), jnp.array([1.0, -1.0])
      >>> run = head_tuning_gd(x, y, jnp.zeros((1, 2)), learning_rate=1.0, record_steps=(0, 1))
      >>> run.weights[:, 0].tolist()  # one step from 0: η·(1/2)·Σ_i y_i x̃_i/2 = [0.5, 0]
      [[0.0, 0.0], [0.5, 0.0]]
    """
    where = "head_tuning_gd"
    x = jnp.asarray(x)
    check_ndim(where, "x", x, 2)
    n, d = x.shape
    y = jnp.asarray(y, x.dtype)
    if y.shape != (n,):
        raise ValueError(f"{where}: y must have shape ({n},), got {y.shape}.")
    if _is_concrete(y) and not np.all(np.isin(np.asarray(y), (-1.0, 1.0))):
        raise ValueError(f"{where}: y must hold labels ±1.")
    init = jnp.asarray(init, x.dtype)
    if init.ndim != 2 or init.shape[1] != d + 1:
        raise ValueError(f"{where}: init must have shape (k, {d + 1}), got {init.shape}.")
    k = init.shape[0]
    c = jnp.full((n,), 1.0 / n, x.dtype) if sample_weights is None else sample_weights
    c = jnp.broadcast_to(jnp.asarray(c, x.dtype), (k, n))
    steps = np.asarray(record_steps, dtype=np.int64)
    if steps.ndim != 1 or steps.size == 0 or steps[0] < 0 or np.any(np.diff(steps) <= 0):
        raise ValueError(f"{where}: record_steps must be increasing and >= 0, got {record_steps}.")
    check_positive(where, "learning_rate", learning_rate)
    check_choice(where, "implementation", implementation, HEAD_TUNING_IMPLEMENTATIONS)
    if implementation == "fused" and x.dtype != jnp.float32:
        raise ValueError(f"{where}: implementation='fused' needs float32 data, got {x.dtype}.")
    eta = jnp.asarray(learning_rate, x.dtype)
    # Columns y_i x̃_i, stored (d+1, n); margins W Zᵀ and gradient G Z as matmuls. On jax
    # 0.9 CPU (k = 2, d = 10, n = 2000, 64 datasets in lax.map chunks of 4) this runs 3.5x
    # faster than broadcast-multiply-reduce loops (which were faster on older jaxlibs).
    zt = (y[:, None] * augment_features(x)).T

    def margins(w):
        return w @ zt  # (k, n)

    def step(_, w):
        g = c * jax.nn.sigmoid(-margins(w))  # −ℓ'(u) = σ(−u)
        return w + eta * g @ zt.T

    def segment(w, length):
        if implementation == "fused":
            w = logistic_gd_fused(zt, c, w, eta, length)
        else:
            w = jax.lax.fori_loop(0, length, step, w)
        return w, (w, jnp.sum(c * jax.nn.softplus(-margins(w)), axis=1))

    gaps = jnp.asarray(np.diff(steps, prepend=0), jnp.int32)
    _, (weights, loss) = jax.lax.scan(segment, init, gaps)
    return HeadTuningRun(steps=jnp.asarray(steps), weights=weights, loss=loss)


def loo_head_tuning(
    x: ArrayLike,
    y: ArrayLike,
    i: ArrayLike,
    *,
    record_steps: Sequence[int],
    learning_rate: ArrayLike | None = None,
    normalizer: str = "n",
    init: ArrayLike | None = None,
    implementation: str = "xla",
) -> HeadTuningRun:
    """GD from ``w_0`` on ``S`` (head 0) and on ``S^i`` (head 1), same ``η`` (Def. 2.3).

    ``η`` defaults to :func:`head_tuning_step_size` of ``S``; ``S^i`` uses
    :func:`loo_weights` with ``normalizer`` (``"n"``: eq. (12); ``"n-1"``: the mean over
    ``S^i``, identical to training on ``S`` with point ``i`` deleted). ``i`` may be traced.
    ``init`` is ``w_0``, shape ``(d + 1,)`` (default 0); ``implementation`` is
    :func:`head_tuning_gd`'s.

    Returns:
      :class:`HeadTuningRun` with ``k = 2``; ``‖Δ̂_t‖`` is
      ``direction_error(run.weights[:, 1], run.weights[:, 0])``.
    """
    x = jnp.asarray(x)
    n, d = x.shape
    eta = head_tuning_step_size(x) if learning_rate is None else learning_rate
    w0 = jnp.zeros((d + 1,), x.dtype) if init is None else jnp.asarray(init, x.dtype)
    weights = jnp.stack([jnp.full((n,), 1.0 / n, x.dtype), loo_weights(n, i, normalizer, x.dtype)])
    return head_tuning_gd(
        x, y, jnp.stack([w0, w0]), learning_rate=eta, record_steps=record_steps,
        sample_weights=weights, implementation=implementation,
    )  # fmt: skip


# ------------------------------------------------------------------ directions, Thm 2.4


def normalize(w: ArrayLike) -> Array:
    """``w/‖w‖`` along the last axis."""
    w = jnp.asarray(w)
    return w / jnp.linalg.norm(w, axis=-1, keepdims=True)


def direction_error(w: ArrayLike, reference: ArrayLike) -> Array:
    r"""``e(t) = ‖w/‖w‖ − ŵ/‖ŵ‖‖`` along the last axis (Fu et al. 2023, proof of Thm 2.4).

    Examples:
      >>> round(float(direction_error(jnp.array([1.0, 0.0]), jnp.array([0.0, 2.0]))), 6)
      1.414214
    """
    return jnp.linalg.norm(normalize(w) - normalize(reference), axis=-1)


def telescoping_sides(w_s, w_si, svm_s, svm_si) -> LemmaSides:
    r"""The triangle inequality behind Thm 2.4 (App. A.2, first two lines of the proof).

    ``lhs = ‖w^i/‖w^i‖ − w/‖w‖‖`` and ``rhs = e_{S^i} + e_S + ‖ŵ_{S^i}/‖·‖ − ŵ_S/‖·‖‖`` for the
    GD heads ``w_s``, ``w_si`` and the SVM heads ``svm_s``, ``svm_si`` (broadcast over
    leading axes, e.g. the recorded steps). Exact for any four non-zero vectors.
    """
    lhs = direction_error(w_si, w_s)
    rhs = (
        direction_error(w_si, svm_si) + direction_error(w_s, svm_s) + direction_error(svm_si, svm_s)
    )
    return LemmaSides(lhs, rhs)


def soudry_rate(t: ArrayLike) -> Array:
    r"""``log log t / log t``, the rate of ``e_S(t)`` in Thm 2.4 (Soudry et al. 2018, Thm 5).

    Positive only for ``t > e``; Fu et al. use it for every ``t``, we require ``t ≥ 3``.

    Examples:
      >>> round(float(soudry_rate(jnp.e ** jnp.e)), 6)  # log log t = 1, log t = e
      0.367879
    """
    if _is_concrete(t) and np.any(np.asarray(t) < 3):
        raise ValueError(f"soudry_rate: t must be >= 3 (log log t > 0), got {t!r}.")
    log_t = jnp.log(jnp.asarray(t, jnp.result_type(float)))
    return jnp.log(log_t) / log_t


def fit_soudry_constant(errors: ArrayLike, steps: ArrayLike, *, min_step: int = 3) -> Array:
    """The smallest ``C`` with ``errors(t) ≤ C·log log t/log t`` for all recorded ``t ≥ min_step``.

    ``errors`` has the step axis last (e.g. ``e_S + e_{S^i}`` per dataset).
    """
    steps = np.asarray(steps)
    keep = steps >= max(min_step, 3)
    return jnp.max(jnp.asarray(errors)[..., keep] / soudry_rate(steps[keep]), axis=-1)


def nu_lemma_a2_1(norm_a: ArrayLike, norm_b: ArrayLike) -> Array:
    """``ν = 2/max(‖a‖, ‖b‖)``: Lemma A.2.1 with the larger norm (its proof divides by either).

    Examples:
      >>> float(nu_lemma_a2_1(1.0, 4.0))
      0.5
    """
    return 2.0 / jnp.maximum(jnp.asarray(norm_a), jnp.asarray(norm_b))


def lemma_a2_1_sides(a: ArrayLike, b: ArrayLike) -> LemmaSides:
    """Lemma A.2.1: ``‖a/‖a‖ − b/‖b‖‖ ≤ ν‖a − b‖`` with ``ν`` of :func:`nu_lemma_a2_1`."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    nu = nu_lemma_a2_1(jnp.linalg.norm(a, axis=-1), jnp.linalg.norm(b, axis=-1))
    return LemmaSides(direction_error(a, b), nu * jnp.linalg.norm(a - b, axis=-1))


def lemma_a2_2_sides(v1, b1, v2, b2, x, y) -> LemmaSides:
    r"""Lemma A.2.2: ``|f(v_1,b_1) − f(v_2,b_2)| ≤ max(1 + ‖v_1‖‖x‖ + |b_1|,``
    ``1 + ‖v_2‖‖x‖ + |b_2|, ‖v_1 − v_2‖‖x‖ + |b_1| + |b_2|)`` for the hinge
    ``f(v, b) = max(0, 1 − y(vᵀx − b))``."""
    v1, v2, x = (jnp.asarray(a) for a in (v1, v2, x))

    def hinge(v, b):
        return jnp.maximum(0.0, 1.0 - y * (jnp.sum(v * x, axis=-1) - b))

    nx = jnp.linalg.norm(x, axis=-1)
    rhs = jnp.maximum(
        jnp.maximum(1 + jnp.linalg.norm(v1, axis=-1) * nx + jnp.abs(b1),
                    1 + jnp.linalg.norm(v2, axis=-1) * nx + jnp.abs(b2)),
        jnp.linalg.norm(v1 - v2, axis=-1) * nx + jnp.abs(b1) + jnp.abs(b2),
    )  # fmt: skip
    return LemmaSides(jnp.abs(hinge(v1, b1) - hinge(v2, b2)), rhs)


def lemma_a2_3_bound(weight_norm: ArrayLike, radius: ArrayLike) -> Array:
    """Lemma A.2.3: ``|b̂| ≤ 1 + ‖v̂‖B`` for a hard-margin SVM of points with ``‖x_i‖ ≤ B``.

    (The paper's proof only uses a positive point and reads ``b̂ ≤ v̂ᵀx_i − 1`` as a bound on
    ``|b̂|``; with one point of each class one gets ``|b̂| ≤ ‖v̂‖B − 1``, so it holds.)
    """
    return 1.0 + jnp.asarray(weight_norm) * jnp.asarray(radius)


def lemma_a2_5_terms(n, regularization, radius, margin) -> tuple[Array, Array]:
    r"""The two arguments of the max in Lemma A.2.5 / eq. (6):

    ``√((2/(λn))(1 + B/γ_S))`` and ``(B + √(B² + 8nλ(1 + B/γ_S)))/(2nλ)``
    with ``λ`` = ``regularization``, ``B`` = ``radius``, ``γ_S`` = ``margin``.
    """
    n, lam, b, g = (
        jnp.asarray(a, jnp.result_type(float)) for a in (n, regularization, radius, margin)
    )
    a = 1.0 + b / g
    first = jnp.sqrt(2.0 / (lam * n) * a)
    second = (b + jnp.sqrt(b**2 + 8.0 * n * lam * a)) / (2.0 * n * lam)
    return first, second


def lemma_a2_5_bound(n, regularization, radius, margin) -> Array:
    """Lemma A.2.5 as printed: ``‖ŵ_{S^i} − ŵ_S‖ ≤ max{…}`` (see :func:`lemma_a2_5_terms`).

    Examples:
      >>> round(float(lemma_a2_5_bound(100, 0.01, 0.0, 1.0)), 6)  # B = 0: both terms √2
      1.414214
    """
    return jnp.maximum(*lemma_a2_5_terms(n, regularization, radius, margin))


def lemma_a2_5_bound_simplified(n, regularization, radius, margin) -> Array:
    r"""The max of Lemma A.2.5 is always its second argument.

    With ``a = 1 + B/γ ≥ 1`` and ``k = nλ``: ``(B + √(B² + 8ka))/(2k) ≥ √(8ka)/(2k) = √(2a/k)``,
    with equality iff ``B = 0``. So the bound is ``O(1/√(λn)) + O(B/(λn))``.
    """
    return lemma_a2_5_terms(n, regularization, radius, margin)[1]


def thm2_4_bound(t, *, constant, regularization, nu, radius, margin, n) -> Array:
    r"""Right side of Thm 2.4, eq. (6): ``C log log t/log t + ν·max{…}`` (Lemma A.2.5 term)."""
    return constant * soudry_rate(t) + nu * lemma_a2_5_bound(n, regularization, radius, margin)


def hinge_lipschitz(radius: ArrayLike) -> Array:
    """``L = √(B² + 1)``: the hinge on ``x̃ = [x; −1]`` is ``max_i ‖x̃_i‖``-Lipschitz in ``w``."""
    return jnp.sqrt(jnp.asarray(radius) ** 2 + 1.0)


def cor2_5_gap_printed(lipschitz, regularization, n) -> Array:
    """Cor 2.5 (App. A.3): ``‖ŵ_{S^i} − ŵ_S‖ ≤ L/(λn)`` as printed.

    The proof treats ``λ‖v‖²`` as ``2λ``-strongly convex in ``(v, b)`` (false in ``b``) and
    uses ``n ≈ n − 1``; :func:`cor2_5_gap_corrected` states the setting where it is a proof.
    """
    return jnp.asarray(lipschitz) / (jnp.asarray(regularization) * n)


def cor2_5_gap_corrected(lipschitz, regularization, n) -> Array:
    r"""Rigorous Cor 2.5: ``‖ŵ_{S^i} − ŵ_S‖ ≤ L/(2λn)``.

    For ``F_S(w) = λ‖w‖² + (1/n)Σ_j h_j(w)`` with the bias penalised (``w = [v; b]``, so
    ``F_S`` is ``2λ``-strongly convex) and ``F_{S^i} = F_S − h_i/n`` (``1/n`` on ``S^i``):
    ``F_S(ŵ_{S^i}) − F_S(ŵ_S) ≥ λ‖Δ‖²`` and ``F_{S^i}(ŵ_S) − F_{S^i}(ŵ_{S^i}) ≥ λ‖Δ‖²``; their
    sum is ``(h_i(ŵ_{S^i}) − h_i(ŵ_S))/n ≤ L‖Δ‖/n``, so ``2λ‖Δ‖² ≤ L‖Δ‖/n``.
    """
    return cor2_5_gap_printed(lipschitz, regularization, n) / 2.0


# ---------------------------------------------------------------------- Cor 3.1 (MHLoss)


def cor3_1_factor(num_heads, delta) -> Array:
    """``√((2 + 8 log(1/δ))/H)``, the MHLoss factor of Cor 3.1.

    (The appendix writes ``8(¼ + log(1/δ))``, which is ``2 + 8 log(1/δ)``.)

    Examples:
      >>> round(float(cor3_1_factor(4, jnp.exp(-0.25))), 6)  # (2 + 2)/4
      1.0
    """
    return jnp.sqrt(
        (2.0 + 8.0 * jnp.log(1.0 / jnp.asarray(delta, jnp.result_type(float)))) / num_heads
    )


def cor3_1_min_delta(num_heads) -> Array:
    """Smallest admissible ``δ``: ``H > 2 + 8 ln(1/δ) ⇔ δ > exp(−(H − 2)/8)``.

    Examples:
      >>> round(float(cor3_1_min_delta(10)), 6)
      0.367879
    """
    return jnp.exp(-(jnp.asarray(num_heads, jnp.result_type(float)) - 2.0) / 8.0)


def head_xi(heads: ArrayLike, reference: ArrayLike) -> Array:
    r"""``ξ = H max_h ‖w̃_h‖/‖Σ_h w̃_h‖``, ``w̃_h`` = projection of head ``h`` onto ``ŵ`` (App. A.4).

    ``heads`` has shape ``(..., H, p)``, ``reference`` ``(..., p)``. ``ξ ≥ 1``, with equality
    when all projections are equal.
    """
    u = normalize(reference)[..., None, :]
    proj = jnp.sum(jnp.asarray(heads) * u, axis=-1)  # signed lengths of w̃_h
    return heads.shape[-2] * jnp.max(jnp.abs(proj), axis=-1) / jnp.abs(jnp.sum(proj, axis=-1))


def cor3_1_bound_corrected(t, *, num_heads, delta, constant, xi, nu, regularization, radius,
                           margin, n) -> Array:  # fmt: skip
    r"""Cor 3.1 as derived in App. A.4: ``√((2+8 log(1/δ))/H)·C ξ log log t/log t + ν max{…}``."""
    first = cor3_1_factor(num_heads, delta) * constant * xi * soudry_rate(t)
    return first + nu * lemma_a2_5_bound(n, regularization, radius, margin)


def cor3_1_bound_printed(t, *, num_heads, delta, constant, xi, nu, regularization, radius,
                         margin, n) -> Array:  # fmt: skip
    r"""Cor 3.1 as printed in the main text, eq. (11): the whole first term under the root,
    ``√((2+8 log(1/δ))/H · C ξ log log t/log t) + ν max{…}`` — a typo: the
    vector Bernstein step of the proof is linear in ``C ξ log log t/log t``."""
    first = jnp.sqrt(cor3_1_factor(num_heads, delta) ** 2 * constant * xi * soudry_rate(t))
    return first + nu * lemma_a2_5_bound(n, regularization, radius, margin)


def a4_1_convexity_sides(heads: ArrayLike, reference: ArrayLike) -> LemmaSides:
    """``‖mean_h w_h/‖w_h‖ − ŵ/‖ŵ‖‖ ≤ mean_h ‖w_h/‖w_h‖ − ŵ/‖ŵ‖‖`` (convexity of the norm).

    Lemma A.4.1 claims ``E[w(t)/‖w(t)‖] = ŵ/‖ŵ‖`` over random inits; the left side is its
    empirical version with ``H`` heads. ``heads``: ``(..., H, p)``; ``reference``: ``(..., p)``.
    """
    dirs = normalize(heads)
    target = normalize(reference)
    lhs = jnp.linalg.norm(jnp.mean(dirs, axis=-2) - target, axis=-1)
    rhs = jnp.mean(jnp.linalg.norm(dirs - target[..., None, :], axis=-1), axis=-1)
    return LemmaSides(lhs, rhs)
