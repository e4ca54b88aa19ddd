r"""Simulations of Fu et al. 2023 read by the step-size, MMR and SVM-lemma claims.

* :func:`simulate_step_sizes` — GD at several ``η·β_F`` (the step-size condition, Fig 3).
* :func:`simulate_mmr_margin` — MMR (eq. (8)) on a norm-constrained linear encoder.
* :func:`simulate_margin_monotone`, :func:`simulate_svm_gaps`, :func:`simulate_lemma_a2_1`,
  :func:`simulate_lemma_a2_2`, :func:`simulate_max_terms` — the SVM lemmas (A.2.1–A.2.5)
  and Cor 2.5's SVM gaps.

Conventions (float64, KKT residuals returned) as in :mod:`._head_tuning_runs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    hard_margin_svm,
    max_margin_regularizer,
    soft_margin_svm,
    sweep,
)
from ntsim.theory.stability import _head_tuning as ht
from ntsim.theory.stability._head_tuning_runs import (
    _dataset,
    _worst_kkt,
)
from ntsim.theory.stability._synthetic import (
    distinct_count,
    largest_distinct,
    on_margin,
    removed_or_copy,
)

__all__ = [
    "LemmaSidesRun",
    "MMRRun",
    "MMRSetting",
    "MarginMonotoneRun",
    "MarginMonotoneSetting",
    "MaxTermsRun",
    "RandomPointsSetting",
    "StepSizeRun",
    "StepSizeSetting",
    "SvmGapRun",
    "SvmGapSetting",
    "simulate_lemma_a2_1",
    "simulate_lemma_a2_2",
    "simulate_margin_monotone",
    "simulate_max_terms",
    "simulate_mmr_margin",
    "simulate_step_sizes",
    "simulate_svm_gaps",
]


# --------------------------------------------------------- step size (Fig 3) and MMR (Sec 3.1)


@dataclass(frozen=True)
class StepSizeSetting:
    """Head-tuning GD from 0 at ``η = factor/β_F`` for each factor, on ``S`` and ``S^i``."""

    datasets: int = 500
    points: int = 500
    dim: int = 10
    num_steps: int = 1000
    factors: tuple[float, ...] = (1.0, 1.9, 2.5, 4.0, 8.0)
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.2


class StepSizeRun(NamedTuple):
    """``factors`` ``(F,)``; ``loss`` ``(N, F, T + 1)`` the mean logistic loss on ``S`` at
    every step ``0..T``; ``loo_distance`` ``(N, F)`` ``‖Δ̂_T‖`` (drawn ``i``, ``1/n`` on ``S^i``);
    ``eta_beta`` ``(N, F)`` the step each run took times ``β_F`` measured again as the top
    eigenvalue of ``X̃ᵀX̃/(4n)`` (the Hessian bound of the mean logistic loss)."""

    factors: np.ndarray
    loss: jax.Array
    loo_distance: jax.Array
    eta_beta: jax.Array


def simulate_step_sizes(key, setting: StepSizeSetting) -> StepSizeRun:
    """GD on ``S`` and ``S^i`` from ``w_0 = 0`` at every ``η = factor/β_F``."""
    check_setting_type("simulate_step_sizes", setting, StepSizeSetting)
    check_key("simulate_step_sizes", key)
    s = setting
    record = tuple(range(s.num_steps + 1))

    def one(k):
        k_data, k_i = jax.random.split(k)
        data = _dataset(k_data, s.points, s.dim, s.margin, s.radius, s.offset)
        i = jax.random.randint(k_i, (), 0, s.points)
        eta = ht.head_tuning_step_size(data.x)
        z = ht.augment_features(data.x)
        beta = jnp.linalg.eigvalsh(z.T @ z)[-1] / (4 * s.points)

        def at(f):
            run = ht.loo_head_tuning(data.x, data.y, i, record_steps=record,
                                     learning_rate=f * eta)  # fmt: skip
            return (run.loss[:, 0], ht.direction_error(run.weights[-1, 1], run.weights[-1, 0]),
                    f * eta * beta)  # fmt: skip

        return jax.vmap(at)(jnp.asarray(s.factors, data.x.dtype))

    loss, distance, eta_beta = jax.jit(jax.vmap(one))(jax.random.split(key, s.datasets))
    return StepSizeRun(np.asarray(s.factors), loss, distance, eta_beta)


@dataclass(frozen=True)
class MMRSetting:
    """MMR (eq. (8)) on a square linear encoder ``E(x) = W x`` kept on ``‖W‖_F = ‖W_0‖_F``."""

    datasets: int = 500
    points: int = 200
    dim: int = 10
    num_steps: int = 300
    step_size: float = 0.5
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.2


class MMRRun(NamedTuple):
    """Per dataset ``(N,)``: ``r0``/``r1`` the regulariser ``R = 1/(1 + ‖μ₊ − μ₋‖)`` before and
    after projected GD on ``R``; ``gamma0``/``gamma1`` the bias-free SVM margin of the encoded
    data before and after."""

    r0: jax.Array
    r1: jax.Array
    gamma0: jax.Array
    gamma1: jax.Array


def simulate_mmr_margin(key, setting: MMRSetting) -> MMRRun:
    """Projected GD on eq. (8) over ``W`` (random ``W_0``), and the SVM margins it produces."""
    check_setting_type("simulate_mmr_margin", setting, MMRSetting)
    check_key("simulate_mmr_margin", key)
    s = setting

    def one(k):
        k_data, k_w = jax.random.split(k)
        data = _dataset(k_data, s.points, s.dim, s.margin, s.radius, s.offset)
        x, y = data.x, data.y
        w0 = jax.random.normal(k_w, (s.dim, s.dim), x.dtype) / jnp.sqrt(s.dim)
        radius = jnp.linalg.norm(w0)

        def objective(w):
            return max_margin_regularizer(x @ w.T, y)

        def step(w, _):
            w = w - s.step_size * jax.grad(objective)(w)
            return radius * w / jnp.linalg.norm(w), None  # stay on ‖W‖_F = ‖W_0‖_F

        w_final, _ = jax.lax.scan(step, w0, None, length=s.num_steps)
        gammas = [hard_margin_svm(x @ w.T, y, penalize_bias=False).margin for w in (w0, w_final)]
        return objective(w0), objective(w_final), gammas[0], gammas[1]

    return MMRRun(*jax.jit(jax.vmap(one))(jax.random.split(key, s.datasets)))


# ------------------------------------------------------------ SVM lemmas (A.2.1–A.2.5, Cor 2.5)


@dataclass(frozen=True)
class MarginMonotoneSetting:
    """Per dataset, remove each of the ``d + 1`` largest-α distinct points and ``extra``
    random ones and re-solve the paper's SVM (bias not penalised), Lemmas A.2.3–A.2.4.

    ``remove_every_point``: remove each of the ``n`` points in turn instead (``extra`` is
    then unused) — for small sets, where a class clipped to one depth can put more than
    ``d + 1`` points on the margin (they are then not in general position)."""

    datasets: int = 200
    points: int = 500
    dim: int = 10
    extra: int = 8
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.5
    remove_every_point: bool = False


class MarginMonotoneRun(NamedTuple):
    """``gamma`` ``(N,)`` the margin on ``S``; ``gamma_loo`` ``(N, K)`` on each ``S^i``;
    ``support`` ``(N, K)`` whether the removed point is a support vector; ``bias`` ``(N, K+1)``
    ``b̂`` on ``S`` then each ``S^i``; ``bias_bound`` ``(N, K+1)`` ``1 + ‖v̂‖B``;
    ``covered`` ``(N,)`` whether every point on the margin of ``S`` (the support vectors), or
    an exact copy of it, is among the removed points; ``margin_count`` ``(N,)`` the distinct
    points on that margin and ``margin_labels`` ``(N,)`` whether they hold both labels;
    ``two_classes`` ``(N, K+1)`` whether ``S`` (then each ``S^i``) holds both labels (else
    the SVM's ``v̂`` is 0 and the lemmas do not apply); ``kkt``; ``dim`` ``d``;
    ``every_point``: whether every point was removed in turn (the setting's
    ``remove_every_point``)."""

    gamma: jax.Array
    gamma_loo: jax.Array
    support: jax.Array
    bias: jax.Array
    bias_bound: jax.Array
    covered: jax.Array
    margin_count: jax.Array
    margin_labels: jax.Array
    two_classes: jax.Array
    kkt: jax.Array
    dim: int
    every_point: bool = False


def _both_labels(y, idx):
    """Whether ``S`` and each ``S^i`` (``i`` in ``idx``) hold a point of each label."""
    positives, negatives = jnp.sum(y > 0), jnp.sum(y < 0)
    pos_left = positives - (y[idx] > 0)
    neg_left = negatives - (y[idx] < 0)
    full = (positives > 0) & (negatives > 0)
    return jnp.concatenate([full[None], (pos_left > 0) & (neg_left > 0)])


def simulate_margin_monotone(key, setting: MarginMonotoneSetting) -> MarginMonotoneRun:
    """The paper's SVM on ``S`` and on ``S^i`` for support and random ``i``."""
    check_setting_type("simulate_margin_monotone", setting, MarginMonotoneSetting)
    check_key("simulate_margin_monotone", key)
    s = setting
    n = s.points

    def one(k):
        k_data, k_i = jax.random.split(k)
        data = _dataset(k_data, n, s.dim, s.margin, s.radius, s.offset)
        full = hard_margin_svm(data.x, data.y, penalize_bias=False)
        if s.remove_every_point:
            idx = jnp.arange(n)
        else:
            idx = jnp.concatenate([
                largest_distinct(data.x, full.dual, s.dim + 1),
                jax.random.choice(k_i, n, (s.extra,), replace=False),
            ])  # fmt: skip

        def drop(i):
            return hard_margin_svm(data.x, data.y, penalize_bias=False,
                                   sample_mask=jnp.arange(n) != i)  # fmt: skip

        loo = jax.vmap(drop)(idx)
        radius = jnp.max(jnp.linalg.norm(data.x, axis=1))
        margin_points = on_margin(data.x, data.y, full)
        norms = jnp.concatenate([jnp.linalg.norm(full.weights)[None],
                                 jnp.linalg.norm(loo.weights, axis=1)])  # fmt: skip
        return (
            1.0 / jnp.linalg.norm(full.weights),
            1.0 / jnp.linalg.norm(loo.weights, axis=1),
            full.support[idx],
            jnp.concatenate([full.bias[None], loo.bias]),
            ht.lemma_a2_3_bound(norms, radius),
            jnp.all(~margin_points | removed_or_copy(data.x, idx)),
            distinct_count(data.x, margin_points),
            jnp.any(margin_points & (data.y > 0)) & jnp.any(margin_points & (data.y < 0)),
            _both_labels(data.y, idx),
            _worst_kkt(full, loo),
        )

    *fields, kkt = sweep(one, jax.random.split(key, s.datasets))
    return MarginMonotoneRun(*fields, jnp.max(kkt), s.dim, s.remove_every_point)


@dataclass(frozen=True)
class SvmGapSetting:
    """λ-SVMs on ``S`` and ``S^i`` (drawn ``i``) at every λ (Cor 2.5, Lemma A.2.5).

    ``penalize_bias``: the bias in the regulariser (the rigorous variant) or not (the paper's);
    ``loo_normalizer``: ``"n"`` (the proof's) or ``"n-1"`` (the mean over ``S^i``)."""

    datasets: int = 200
    points: int = 500
    dim: int = 10
    lams: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1)
    penalize_bias: bool = True
    loo_normalizer: str = "n"
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.5


class SvmGapRun(NamedTuple):
    """``lams`` ``(L,)``; ``gap`` ``(N, L)`` ``‖ŵ_{S^i} − ŵ_S‖``; per dataset ``(N,)``:
    ``lipschitz`` ``max‖x̃_i‖``, ``radius`` ``max‖x_i‖``, ``gamma`` the hard-margin (b free)
    margin; ``points`` ``n``; ``kkt``; ``removed_lipschitz`` ``(N,)`` ``‖x̃_i‖`` of the removed
    point; ``inside_margin`` ``(N, L)``: every training point of ``S`` and of ``S^i`` has
    ``y_j ŵᵀx̃_j < 0.99`` (all hinges in their linear piece); ``capped_duals`` ``(N, L, 2, 2)``:
    for ``S`` then ``S^i``, the smallest and largest dual ``α_j`` over the points strictly
    inside that problem's margin (``y_j ŵᵀx̃_j < 0.99``; ``+inf``/``−inf`` when there is none),
    which KKT puts at the box cap ``C = 1/(2λm)``, ``m`` the problem's normaliser."""

    lams: np.ndarray
    gap: jax.Array
    lipschitz: jax.Array
    radius: jax.Array
    gamma: jax.Array
    points: int
    kkt: jax.Array
    removed_lipschitz: jax.Array
    inside_margin: jax.Array
    capped_duals: jax.Array


def simulate_svm_gaps(key, setting: SvmGapSetting) -> SvmGapRun:
    """The λ-SVM leave-one-out gap of ``setting``'s variant, one drawn ``i`` per dataset."""
    check_setting_type("simulate_svm_gaps", setting, SvmGapSetting)
    check_key("simulate_svm_gaps", key)
    s = setting
    n = s.points
    norm_si = n if s.loo_normalizer == "n" else n - 1

    def one(k):
        k_data, k_i = jax.random.split(k)
        data = _dataset(k_data, n, s.dim, s.margin, s.radius, s.offset)
        removed = jax.random.randint(k_i, (), 0, n)
        mask = jnp.arange(n) != removed
        # S (normaliser n) and S^i (normaliser n or n − 1) in one vmapped solve: one compiled
        # solver instead of two
        masks = jnp.stack([jnp.ones((n,), bool), mask])
        normalizers = jnp.asarray([n, norm_si], data.x.dtype)

        def solve(lam):
            both = jax.vmap(lambda m, c: soft_margin_svm(
                data.x, data.y, regularization=lam, penalize_bias=s.penalize_bias,
                sample_mask=m, normalizer=c))(masks, normalizers)  # fmt: skip
            head_s, head_si = ht.svm_head(both.weights, both.bias)
            margins = data.y * (both.weights @ data.x.T - both.bias[:, None])  # (2, n)
            # strictly inside: 1% below the margin (the interior-point solution of a point
            # on the margin can sit 1e-4 inside it, and its subgradient is not 1)
            strict = masks & (margins < 1.0 - 1e-2)
            inside = jnp.all(jnp.where(masks, strict, True))
            # the duals of strictly-inside points sit at the box cap C = 1/(2λm) of each
            # problem (m its normaliser): their extremes, per problem, ±inf when none is inside
            capped = jnp.stack(
                [
                    jnp.min(jnp.where(strict, both.dual, jnp.inf), axis=1),
                    jnp.max(jnp.where(strict, both.dual, -jnp.inf), axis=1),
                ],
                -1,
            )
            return jnp.linalg.norm(head_si - head_s), _worst_kkt(both), inside, capped

        gaps, kkts, inside, capped = jax.vmap(solve)(jnp.asarray(s.lams))
        hard = hard_margin_svm(data.x, data.y, penalize_bias=False)
        return (
            gaps,
            jnp.sqrt(jnp.max(jnp.sum(data.x**2, axis=1)) + 1.0),
            jnp.max(jnp.linalg.norm(data.x, axis=1)),
            1.0 / jnp.linalg.norm(hard.weights),
            jnp.maximum(jnp.max(kkts), _worst_kkt(hard)),
            jnp.sqrt(jnp.sum(data.x[removed] ** 2) + 1.0),
            inside,
            capped,
        )

    gap, lipschitz, radius, gamma, kkt, removed_lipschitz, inside, capped = sweep(
        one, jax.random.split(key, s.datasets)
    )
    return SvmGapRun(np.asarray(s.lams), gap, lipschitz, radius, gamma, n, jnp.max(kkt),
                     removed_lipschitz, inside, capped)  # fmt: skip


@dataclass(frozen=True)
class RandomPointsSetting:
    """Random instances for the pointwise lemmas (A.2.1, A.2.2, eq. (6)'s max)."""

    count: int = 200_000


class LemmaSidesRun(NamedTuple):
    """``lhs``, ``rhs`` ``(count,)`` of a pointwise inequality on random instances, and the
    same sides on *anchor* instances where both are known in closed form
    (``anchor_lhs``, ``anchor_rhs`` from the library; ``exact_lhs``, ``exact_rhs`` the
    closed forms; one entry per anchor instance)."""

    lhs: jax.Array
    rhs: jax.Array
    anchor_lhs: jax.Array
    anchor_rhs: jax.Array
    exact_lhs: jax.Array
    exact_rhs: jax.Array


def simulate_lemma_a2_1(key, setting: RandomPointsSetting) -> LemmaSidesRun:
    """Lemma A.2.1 on random pairs in R⁴ with log-normal scales: a third near-antipodal, a
    third near-parallel, a third independent.

    Anchors: exactly antipodal pairs ``b = −t·a``, ``t ∈ [0.05, 1]``, where
    ``‖a/‖a‖ − b/‖b‖‖ = 2`` and ``2‖a − b‖/max(‖a‖, ‖b‖) = 2(1 + t)`` (``max = ‖a‖``).
    """
    check_setting_type("simulate_lemma_a2_1", setting, RandomPointsSetting)
    check_key("simulate_lemma_a2_1", key)
    count = setting.count
    k_a, k_b, k_s = jax.random.split(key, 3)
    a = jax.random.normal(k_a, (count, 4)) * jnp.exp(2 * jax.random.normal(k_s, (count, 1)))
    b = jax.random.normal(k_b, (count, 4))
    third = jnp.arange(count)[:, None] % 3
    b = jnp.where(third == 0, -a + 0.1 * b, b)
    b = jnp.where(third == 1, 3.0 * a + 0.01 * b, b)
    anchors = max(count // 8, 1)
    t = jax.random.uniform(jax.random.fold_in(key, 1), (anchors,), a.dtype, 0.05, 1.0)
    anchor = ht.lemma_a2_1_sides(a[:anchors], -t[:, None] * a[:anchors])
    return LemmaSidesRun(*ht.lemma_a2_1_sides(a, b), *anchor, jnp.full_like(t, 2.0), 2 * (1 + t))


def simulate_lemma_a2_2(key, setting: RandomPointsSetting) -> LemmaSidesRun:
    """Lemma A.2.2 on random ``(v₁, b₁, v₂, b₂, x, y)`` in R³.

    Anchors: the bound attained (case 2 of the proof). With ``u = x/‖x‖``,
    ``v₁ = −yα u``, ``b₁ = y s``, ``v₂ = yβ u``, ``b₂ = −y(1 − β‖x‖)`` (``α‖x‖ ≥ 1``,
    ``s ≥ 0``, ``0 < β‖x‖ < 1``): ``f(v₁, b₁) = 1 + α‖x‖ + s``, ``f(v₂, b₂) = 0`` (on the
    hinge's kink), and the three arguments of the max are ``1 + α‖x‖ + s``, ``2`` and
    ``(α + β)‖x‖ + s + 1 − β‖x‖``, so both sides equal ``1 + α‖x‖ + s``. And the bound
    attained by its third argument: ``v₂ = v₁``, ``b₂ = −y(1 + α‖x‖)`` (``f(v₂, b₂) = 0``, on
    the kink) and ``s ≥ 1 + α‖x‖``, where the arguments are ``1 + α‖x‖ + s``,
    ``2 + 2α‖x‖`` and ``|b₁| + |b₂| = 1 + α‖x‖ + s``: both sides equal ``1 + α‖x‖ + s``.
    """
    check_setting_type("simulate_lemma_a2_2", setting, RandomPointsSetting)
    check_key("simulate_lemma_a2_2", key)
    count = setting.count
    ks = jax.random.split(key, 6)
    v1, v2, x = (jax.random.normal(k, (count, 3)) for k in ks[:3])
    b1, b2 = (2 * jax.random.normal(k, (count,)) for k in ks[3:5])
    y = jax.random.rademacher(ks[5], (count,), v1.dtype)
    anchors = max(count // 8, 1)
    ka = jax.random.split(jax.random.fold_in(key, 1), 3)
    xa, ya = x[:anchors], y[:anchors]
    nx = jnp.linalg.norm(xa, axis=-1)
    u = xa / nx[:, None]
    reach = 1.0 + jax.random.exponential(ka[0], (anchors,), x.dtype)  # α‖x‖ ≥ 1
    s = jnp.abs(2 * jax.random.normal(ka[1], (anchors,), x.dtype))
    kink = jax.random.uniform(ka[2], (anchors,), x.dtype, 0.05, 0.95)  # β‖x‖
    kinked = ht.lemma_a2_2_sides(
        -(ya * reach / nx)[:, None] * u,
        ya * s,
        (ya * kink / nx)[:, None] * u,
        -ya * (1.0 - kink),
        xa,
        ya,
    )
    # the third argument attained: same weights, b₂ on the kink, |b₁| = s ≥ 1 + α‖x‖
    same_weights = -(ya * (reach - 1.0) / nx)[:, None] * u  # α‖x‖ = reach − 1 ≥ 0
    s_third = reach + s  # = 1 + α‖x‖ + |2z| ≥ 1 + α‖x‖
    third = ht.lemma_a2_2_sides(
        same_weights, ya * s_third, same_weights, -ya * reach, xa, ya
    )  # fmt: skip
    anchor_lhs = jnp.concatenate([kinked.lhs, third.lhs])
    anchor_rhs = jnp.concatenate([kinked.rhs, third.rhs])
    exact = jnp.concatenate([1.0 + reach + s, reach + s_third])
    return LemmaSidesRun(*ht.lemma_a2_2_sides(v1, b1, v2, b2, x, y), anchor_lhs, anchor_rhs,
                         exact, exact)  # fmt: skip


class MaxTermsRun(NamedTuple):
    """Eq. (6)'s max on random ``(n, λ, B, γ)``: ``first``, ``second`` its two arguments and
    ``full`` :func:`~ntsim.theory.stability.lemma_a2_5_bound`; ``n``, ``lam``, ``radius``,
    ``margin`` the drawn ``(n, λ, B, γ_S)`` (so a check can recompute what the arguments
    solve in the proof of Lemma A.2.5)."""

    first: jax.Array
    second: jax.Array
    full: jax.Array
    n: jax.Array
    lam: jax.Array
    radius: jax.Array
    margin: jax.Array


def simulate_max_terms(key, setting: RandomPointsSetting) -> MaxTermsRun:
    """``n ∈ [1, e¹⁰]``, ``λ ∈ [e⁻¹², e²]`` log-uniform, ``B`` log-normal (10% at ``B = 0``),
    ``γ`` up to ``e(B + 1)``."""
    check_setting_type("simulate_max_terms", setting, RandomPointsSetting)
    check_key("simulate_max_terms", key)
    count = setting.count
    ks = jax.random.split(key, 4)
    n = jnp.round(jnp.exp(jax.random.uniform(ks[0], (count,), maxval=10.0)))
    lam = jnp.exp(jax.random.uniform(ks[1], (count,), minval=-12.0, maxval=2.0))
    b = jnp.where(jnp.arange(count) % 10 == 0, 0.0, jnp.exp(jax.random.normal(ks[2], (count,))))
    gamma = jnp.exp(jax.random.uniform(ks[3], (count,), minval=-6.0, maxval=1.0)) * (b + 1)
    first, second = ht.lemma_a2_5_terms(n, lam, b, gamma)
    return MaxTermsRun(first, second, ht.lemma_a2_5_bound(n, lam, b, gamma), n, lam, b, gamma)
