r"""The head-tuning simulations of Fu et al. 2023 (Sec 2.3, 3.2, 4.3) that claims and figures read.

Each is a public ``simulate_*(key, setting) -> NamedTuple`` with a frozen ``*Setting`` of
named sizes (sizes the paper leaves open are ours). Run them in float64 (``jax.enable_x64``)
when the SVM quantities matter: SVMs come from :func:`ntsim.core.hard_margin_svm` (interior
point) and every run returns the worst KKT residual of its solves.

* :func:`simulate_loo_anchor` — the absolute anchor of the leave-one-out metric
  ``‖Δ̂‖ = ‖w^i/‖w^i‖ − w/‖w‖‖``: a three-point dataset on the line whose bias-penalised
  SVMs on ``S`` and on every ``S^i`` are known in closed form (:func:`loo_anchor_closed_form`).
* :func:`simulate_soudry_directions` — GD direction vs the augmented SVM (``b`` penalised)
  and the paper's SVM (``b`` free, eq. (13)) on small datasets far from the origin.
* :func:`simulate_loo_bound` — GD on ``S`` and ``S^i`` with the SVM quantities of Thm 2.4.
* :func:`simulate_multi_head` — MHLoss heads (Cor 3.1, Lemma A.4.1).
* :func:`simulate_synthetic_panel`, :func:`simulate_loo_over_n` — the γ, ``‖w_0‖``, ``B``
  panels and the ``n`` panel of the synthetic suite (Figs 6–9), through
  :func:`ntsim.theory.stability.loo_sweep`.

:mod:`._svm_runs` holds the step-size and MMR runs and the SVM lemmas' simulations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    hard_margin_svm,
    separable_dataset,
    sweep,
)
from ntsim.theory.stability import _head_tuning as ht
from ntsim.theory.stability import _synthetic as syn

__all__ = [
    "LOO_ANCHOR_LABELS",
    "LOO_ANCHOR_POINTS",
    "LooAnchorRun",
    "LooAnchorSetting",
    "LooBoundRun",
    "LooBoundSetting",
    "MultiHeadRun",
    "MultiHeadSetting",
    "OverNRun",
    "OverNSetting",
    "SoudryRun",
    "SoudrySetting",
    "SyntheticPanelRun",
    "SyntheticPanelSetting",
    "loo_anchor_closed_form",
    "simulate_loo_anchor",
    "simulate_loo_bound",
    "simulate_loo_over_n",
    "simulate_multi_head",
    "simulate_soudry_directions",
    "simulate_synthetic_panel",
]


def _worst_kkt(*solutions) -> jax.Array:
    return jnp.max(jnp.stack([jnp.max(s.kkt_residual) for s in solutions]))


def _dataset(key, n, d, margin, radius, offset):
    return separable_dataset(key, n, d, margin=margin, radius=radius, offset=offset)


# ------------------------------------------------------------------ the closed-form anchor

#: The anchor's features ``x_i ∈ R`` and labels: ``x = (1, −1, 2)``, ``y = (+1, −1, +1)``.
LOO_ANCHOR_POINTS = ((1.0,), (-1.0,), (2.0,))
LOO_ANCHOR_LABELS = (1.0, -1.0, 1.0)


def loo_anchor_closed_form() -> dict:
    r"""Closed-form bias-penalised SVM directions of the anchor and its leave-one-out distances.

    With ``z_i = y_i x̃_i = y_i[x_i; −1]``: ``z_1 = (1, −1)``, ``z_2 = (1, 1)``, ``z_3 = (2, −1)``.
    The SVM ``argmin ‖w‖²`` s.t. ``wᵀz_i ≥ 1`` is

    * on ``S``: ``ŵ_S = (1, 0)`` (``z_1, z_2`` active, duals ``(½, ½)``, ``ŵ_Sᵀz_3 = 2``);
    * on ``S^1`` (drop ``x = 1``): ``(2/3, 1/3)`` (``z_2, z_3`` active, duals ``(4/9, 1/9)``);
    * on ``S^2`` (drop ``x = −1``, one class left): ``z_1/‖z_1‖² = (½, −½)`` (``ŵᵀz_3 = 3/2``);
    * on ``S^3`` (drop the non-support ``x = 2``): ``ŵ_S``.

    So ``‖Δ̂‖ = √(2 − 2cos θ_i)``: ``√(2 − 4/√5)``, ``√(2 − √2)`` and ``0``.

    GD's first step from ``w_0 = 0`` (every margin 0, so ``−ℓ'(0) = ½``) with
    ``η = 1/β_F = 4n/σ_max²(X̃) = 12/7`` (``X̃ᵀX̃ = [[6, −2], [−2, 3]]``, eigenvalues 7 and 2) is
    ``w_1 = (η/2)Σ_j c_j z_j``: with the weights ``c_j = 1/n`` on ``S``,
    ``w_1(S) = (2/7)(z_1 + z_2 + z_3) = (8/7, −2/7)``, and with eq. (12)'s ``1/n`` kept on
    ``S^i``, ``w_1(S^i) = w_1(S) − (2/7)z_i``: ``(6/7, 0)``, ``(6/7, −4/7)``, ``(4/7, 0)``. The
    mean over ``S^i`` (``1/(n − 1)``) would give ``(9/7, 0)`` for ``i = 1``.

    Returns:
      ``heads_s`` ``(2,)``, ``heads_loo`` ``(3, 2)`` (the SVM of ``S^i``, row ``i``),
      ``distance`` ``(3,)``, ``mean_distance`` (the average over ``i``), and GD's first
      step ``first_step_s`` ``(2,)`` and ``first_step_loo`` ``(3, 2)``.

    Examples:
      >>> [round(v, 6) for v in loo_anchor_closed_form()["distance"]]
      [0.459506, 0.765367, 0.0]
    """
    distance = (math.sqrt(2 - 4 / math.sqrt(5)), math.sqrt(2 - math.sqrt(2)), 0.0)
    return {
        "heads_s": (1.0, 0.0),
        "heads_loo": ((2 / 3, 1 / 3), (0.5, -0.5), (1.0, 0.0)),
        "distance": distance,
        "mean_distance": sum(distance) / 3,
        "first_step_s": (8 / 7, -2 / 7),
        "first_step_loo": ((6 / 7, 0.0), (6 / 7, -4 / 7), (4 / 7, 0.0)),
    }


@dataclass(frozen=True)
class LooAnchorSetting:
    """GD steps of the anchor (the dataset is fixed: :data:`LOO_ANCHOR_POINTS`)."""

    num_steps: int = 10_000
    num_records: int = 5


class LooAnchorRun(NamedTuple):
    """Per left-out index ``i`` (axis 0, length 3) of the anchor dataset.

    Attributes:
      steps: ``(R,)`` recorded GD steps.
      svm_distance: ``(3,)`` the SVM-limit ``‖Δ̂‖`` for ``S^i`` as the synthetic suite
        computes it (:func:`ntsim.theory.stability.svm_reference`, ``svm_delta``).
      svm_mean: ``(3,)`` that suite's exact average over ``i`` (``svm_avg``), once per call.
      gd_distance: ``(3, R)`` ``‖Δ̂_t‖`` of GD from ``w_0 = 0`` on ``S`` and ``S^i``.
      gd_error: ``(3, R)`` ``e_S(t) + e_{S^i}(t)`` against the closed-form SVM directions.
      kkt: the worst KKT residual of the SVM solves.
      svm_head_s, svm_head_loo: ``(3, 2)`` the SVM heads ``ŵ_S`` and ``ŵ_{S^i}`` (not only
        their directions) as that suite solves them, row ``i``.
      early_steps: ``(3, 2, 2, 2)`` GD's weights after one and two steps,
        ``[[w_1(S), w_1(S^i)], [w_2(S), w_2(S^i)]]`` in row ``i``.
    """

    steps: jax.Array
    svm_distance: jax.Array
    svm_mean: jax.Array
    gd_distance: jax.Array
    gd_error: jax.Array
    kkt: jax.Array
    svm_head_s: jax.Array
    svm_head_loo: jax.Array
    early_steps: jax.Array


def simulate_loo_anchor(key, setting: LooAnchorSetting) -> LooAnchorRun:
    """The leave-one-out metric on the closed-form anchor (deterministic: ``key`` unused).

    Runs the same code path as the synthetic suite (:func:`ntsim.theory.stability.svm_reference`
    for the SVM limit; :func:`ntsim.theory.stability.loo_head_tuning` and
    :func:`ntsim.theory.stability.direction_error` for GD), so an error in that metric shows
    against :func:`loo_anchor_closed_form`.
    """
    check_setting_type("simulate_loo_anchor", setting, LooAnchorSetting)
    del key
    x = jnp.asarray(LOO_ANCHOR_POINTS, jnp.result_type(float))
    y = jnp.asarray(LOO_ANCHOR_LABELS, x.dtype)
    steps = ht.log_spaced_steps(setting.num_steps, setting.num_records)
    closed = loo_anchor_closed_form()
    head_s = jnp.asarray(closed["heads_s"], x.dtype)
    heads_loo = jnp.asarray(closed["heads_loo"], x.dtype)

    def one(i):
        ref = syn.svm_reference(x, y, i)
        run = ht.loo_head_tuning(x, y, i, record_steps=steps)
        early = ht.loo_head_tuning(x, y, i, record_steps=(1, 2)).weights
        w_s, w_si = run.weights[:, 0], run.weights[:, 1]
        error = ht.direction_error(w_s, head_s) + ht.direction_error(w_si, heads_loo[i])
        return (ref["svm_delta"], ref["svm_avg"], ht.direction_error(w_si, w_s), error,
                ref["kkt"], ref["w_svm"], ref["w_svm_loo"], early)  # fmt: skip

    svm, mean, gd, error, kkt, head_s, head_loo, early = jax.vmap(one)(jnp.arange(3))
    return LooAnchorRun(jnp.asarray(steps), svm, mean, gd, error, jnp.max(kkt), head_s, head_loo,
                        early)  # fmt: skip


# ---------------------------------------------------- Soudry: GD → which SVM direction


@dataclass(frozen=True)
class SoudrySetting:
    """Small datasets far from the origin (few support vectors, large optimal bias), so the
    bias-penalised and the bias-free SVM differ."""

    datasets: int = 100
    points: int = 12
    dim: int = 5
    num_steps: int = 10_000
    num_records: int = 6
    margin: float = 0.2
    radius: float = 2.0
    offset: float = 1.5


class SoudryRun(NamedTuple):
    """``steps`` ``(R,)``; ``e_aug``, ``e_paper`` ``(N, R)`` GD direction errors against the
    augmented (``b`` penalised) and the paper's (``b`` free) SVM; ``svm_gap`` ``(N,)`` the
    distance between the two SVM directions; ``kkt`` the worst KKT residual."""

    steps: jax.Array
    e_aug: jax.Array
    e_paper: jax.Array
    svm_gap: jax.Array
    kkt: jax.Array


def simulate_soudry_directions(key, setting: SoudrySetting) -> SoudryRun:
    """GD (logistic, ``η = 1/β_F``, ``w_0 = 0``) on ``wᵀ[x; −1]`` vs both SVM directions."""
    check_setting_type("simulate_soudry_directions", setting, SoudrySetting)
    check_key("simulate_soudry_directions", key)
    s = setting
    steps = ht.log_spaced_steps(s.num_steps, s.num_records)

    def one(k):
        data = _dataset(k, s.points, s.dim, s.margin, s.radius, s.offset)
        aug = hard_margin_svm(data.x, data.y)
        paper = hard_margin_svm(data.x, data.y, penalize_bias=False)
        run = ht.head_tuning_gd(
            data.x, data.y, jnp.zeros((1, s.dim + 1), data.x.dtype),
            learning_rate=ht.head_tuning_step_size(data.x), record_steps=steps,
        )  # fmt: skip
        w = run.weights[:, 0]
        head_aug = ht.svm_head(aug.weights, aug.bias)
        head_paper = ht.svm_head(paper.weights, paper.bias)
        return (
            ht.direction_error(w, head_aug),
            ht.direction_error(w, head_paper),
            ht.direction_error(head_aug, head_paper),
            _worst_kkt(aug, paper),
        )

    e_aug, e_paper, gap, kkt = sweep(one, jax.random.split(key, s.datasets))
    return SoudryRun(jnp.asarray(steps), e_aug, e_paper, gap, jnp.max(kkt))


# ------------------------------------------------------------------- Thm 2.4 (LOO runs)


@dataclass(frozen=True)
class LooBoundSetting:
    """Leave-one-out GD runs with the SVM quantities of Thm 2.4 (slab γ = 0.1, B = 1,
    offset 0.5)."""

    datasets: int = 40
    points: int = 60
    dim: int = 4
    num_steps: int = 1_000
    num_records: int = 7
    chunk: int = 40
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.5


class LooBoundRun(NamedTuple):
    """Per dataset (axis 0) and recorded step (axis 1).

    Attributes:
      steps: ``(R,)``.
      lhs, rhs: ``(N, R)`` the two sides of the telescoping inequality
        (:func:`ntsim.theory.stability.telescoping_sides`, augmented SVMs).
      e_sum: ``(N, R)`` ``e_S(t) + e_{S^i}(t)``.
      nu: ``(N,)`` ``2/max(‖ŵ_S‖, ‖ŵ_{S^i}‖)`` (Lemma A.2.1).
      lam: ``(N,)`` the largest λ at which the soft-margin SVM (``1/n`` on both) equals the hard
        one, ``1/(2n max α)``.
      gamma: ``(N,)`` ``1/‖v̂_S‖``; radius: ``(N,)`` ``max‖x_i‖``; svm_gap: ``(N,)``
        ``‖ŵ_{S^i} − ŵ_S‖``; svm_direction: ``(N,)`` ``‖ŵ_{S^i}/‖ŵ_{S^i}‖ − ŵ_S/‖ŵ_S‖‖``;
        kkt: the worst KKT residual; points: ``n``; norms: ``(N, n)`` every ``‖x_j‖`` (for
        the hypothesis ``‖x_j‖ ≤ B``).
    """

    steps: jax.Array
    lhs: jax.Array
    rhs: jax.Array
    e_sum: jax.Array
    nu: jax.Array
    lam: jax.Array
    gamma: jax.Array
    radius: jax.Array
    svm_gap: jax.Array
    svm_direction: jax.Array
    kkt: jax.Array
    points: int
    norms: jax.Array


def simulate_loo_bound(key, setting: LooBoundSetting) -> LooBoundRun:
    """GD from 0 on ``S`` and ``S^i`` (``1/n`` normaliser, drawn ``i``) and the augmented SVMs."""
    check_setting_type("simulate_loo_bound", setting, LooBoundSetting)
    check_key("simulate_loo_bound", key)
    s = setting
    steps = ht.log_spaced_steps(s.num_steps, s.num_records)
    n = s.points

    def one(k):
        k_data, k_i = jax.random.split(k)
        data = _dataset(k_data, n, s.dim, s.margin, s.radius, s.offset)
        i = jax.random.randint(k_i, (), 0, n)
        # S and S^i in one vmapped solve: one compiled solver instead of two
        masks = jnp.stack([jnp.ones((n,), bool), jnp.arange(n) != i])
        both = jax.vmap(lambda mask: hard_margin_svm(data.x, data.y, sample_mask=mask))(masks)
        run = ht.loo_head_tuning(data.x, data.y, i, record_steps=steps, normalizer="n")
        head_s, head_si = ht.svm_head(both.weights, both.bias)
        sides = ht.telescoping_sides(run.weights[:, 0], run.weights[:, 1], head_s, head_si)
        max_alpha = jnp.max(both.dual)
        return (
            sides.lhs,
            sides.rhs,
            ht.direction_error(run.weights[:, 0], head_s)
            + ht.direction_error(run.weights[:, 1], head_si),
            ht.nu_lemma_a2_1(jnp.linalg.norm(head_s), jnp.linalg.norm(head_si)),
            1.0 / (2.0 * n * max_alpha),
            1.0 / jnp.linalg.norm(both.weights[0]),
            jnp.max(jnp.linalg.norm(data.x, axis=1)),
            jnp.linalg.norm(head_si - head_s),
            ht.direction_error(head_si, head_s),
            _worst_kkt(both),
            jnp.sqrt(jnp.sum(data.x**2, axis=1)),
        )

    out = sweep(one, jax.random.split(key, s.datasets), chunk_size=s.chunk)
    *fields, kkt, norms = out
    return LooBoundRun(jnp.asarray(steps), *fields, jnp.max(kkt), n, norms)


# ------------------------------------------------------------------- Cor 3.1 and A.4.1


@dataclass(frozen=True)
class MultiHeadSetting:
    """MHLoss: ``max(heads)`` heads from ``N(0, I)`` trained together on each dataset;
    every nested head count ``H ∈ heads`` averages the first ``H``."""

    datasets: int = 20
    points: int = 60
    dim: int = 4
    num_steps: int = 400
    num_records: int = 4
    heads: tuple[int, ...] = (1, 5, 10, 20, 50, 100)
    chunk: int = 25
    margin: float = 0.1
    radius: float = 1.0
    offset: float = 0.5


class MultiHeadRun(NamedTuple):
    """``steps`` ``(R,)``; per dataset, step and head count (``(N, R, len(heads))``):
    ``e_bar`` the direction error of the averaged head ``w̄``, ``xi`` (:func:`head_xi`),
    ``e_max`` ``max_h e_h``, ``conv_lhs``/``conv_rhs`` the two sides of the convexity step of
    Lemma A.4.1; ``kkt`` the worst KKT residual; ``heads`` the head counts."""

    steps: jax.Array
    e_bar: jax.Array
    xi: jax.Array
    e_max: jax.Array
    conv_lhs: jax.Array
    conv_rhs: jax.Array
    kkt: jax.Array
    heads: tuple[int, ...]


def simulate_multi_head(key, setting: MultiHeadSetting) -> MultiHeadRun:
    """GD on ``max(heads)`` random-init heads (one dataset each), against the augmented SVM."""
    check_setting_type("simulate_multi_head", setting, MultiHeadSetting)
    check_key("simulate_multi_head", key)
    s = setting
    steps = ht.log_spaced_steps(s.num_steps, s.num_records)

    def one(k):
        k_data, k_heads = jax.random.split(k)
        data = _dataset(k_data, s.points, s.dim, s.margin, s.radius, s.offset)
        svm = hard_margin_svm(data.x, data.y)
        head = ht.svm_head(svm.weights, svm.bias)
        run = ht.head_tuning_gd(
            data.x, data.y, ht.multi_head_init(k_heads, max(s.heads), s.dim).astype(data.x.dtype),
            learning_rate=ht.head_tuning_step_size(data.x), record_steps=steps,
        )  # fmt: skip
        w = run.weights  # (R, H, p)
        e_h = ht.direction_error(w, head)
        per = []
        for h in s.heads:  # static head counts: one slice each
            conv = ht.a4_1_convexity_sides(w[:, :h], head)
            per.append((
                ht.direction_error(jnp.mean(w[:, :h], axis=1), head),
                ht.head_xi(w[:, :h], head),
                jnp.max(e_h[:, :h], axis=1),
                conv.lhs,
                conv.rhs,
            ))  # fmt: skip
        stacked = tuple(jnp.stack([p[j] for p in per], axis=-1) for j in range(5))
        return (*stacked, _worst_kkt(svm))

    *fields, kkt = sweep(one, jax.random.split(key, s.datasets), chunk_size=s.chunk)
    return MultiHeadRun(jnp.asarray(steps), *fields, jnp.max(kkt), s.heads)


# ------------------------------------------------------------- synthetic panels (Figs 6–9)


@dataclass(frozen=True)
class SyntheticPanelSetting:
    """The γ, ``‖w_0‖`` and ``B`` panels of the synthetic suite (Figs 7–9), one cell per
    value, ``datasets`` per cell, the other values at the base (γ, B, offset, ‖w_0‖).

    The defaults are the full-scale panels of ``experiments/stability/synthetic_loo_stability``
    (the paper gives n = 2,000 for its main sweep; every other value is ours)."""

    points: int = 500
    datasets: int = 100
    num_steps: int = 100_000
    num_records: int = 11
    dim: int = 10
    margins: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.4)
    init_norms: tuple[float, ...] = (0.0, 2.0, 5.0, 10.0, 20.0, 50.0)
    radii: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
    base: tuple[float, float, float, float] = (0.1, 1.0, 0.2, 0.0)  # (γ, B, offset, ‖w_0‖)
    chunk: int = 25
    implementation: str = "xla"  # head_tuning_gd's GD loop ("xla" or "fused")

    def cells(self) -> list[tuple[float, float, float, float]]:
        """``(γ, B, offset, ‖w_0‖)`` per cell: margin cells, then init cells, then radius cells."""
        g, b, o, w = self.base
        return (
            [(m, b, o, w) for m in self.margins]
            + [(g, b, o, s) for s in self.init_norms]
            + [(g, r, o, w) for r in self.radii]
        )  # fmt: skip

    def rows(self, panel: str) -> slice:
        """The datasets of ``panel`` (``"margin"``, ``"init"`` or ``"radius"``)."""
        sizes = {"margin": len(self.margins), "init": len(self.init_norms),
                 "radius": len(self.radii)}  # fmt: skip
        start = 0
        for name, count in sizes.items():
            if name == panel:
                return slice(start * self.datasets, (start + count) * self.datasets)
            start += count
        raise ValueError(f"rows: panel must be one of {tuple(sizes)}, got {panel!r}.")


class SyntheticPanelRun(NamedTuple):
    """Per dataset (axis 0; cells in the order of :meth:`SyntheticPanelSetting.cells`).

    Attributes:
      steps: ``(R,)``; params: ``(K, 4)`` the cell's (γ, B, offset, ‖w_0‖) per dataset.
      delta: ``(K, R)`` ``‖Δ̂_t‖`` of GD; svm: ``(K,)`` the SVM limit averaged exactly over i;
      gamma: ``(K,)`` the bias-free SVM margin; w0_distance: ``(K,)`` ``‖w_0 − ŵ_S‖``;
      rows: ``{"margin", "init", "radius"} -> slice`` of each panel's datasets;
      datasets: datasets per cell; svm_exact: ``(K,)`` whether ``svm`` is the exact average
        (its points cover every support vector: ``svm_avg_exact`` of
        :func:`ntsim.theory.stability.svm_reference`).
    """

    steps: np.ndarray
    params: np.ndarray
    delta: np.ndarray
    svm: np.ndarray
    gamma: np.ndarray
    w0_distance: np.ndarray
    rows: dict
    datasets: int
    svm_exact: np.ndarray


def simulate_synthetic_panel(key, setting: SyntheticPanelSetting) -> SyntheticPanelRun:
    """:func:`ntsim.theory.stability.loo_sweep` over every cell, ``datasets`` keys each."""
    check_setting_type("simulate_synthetic_panel", setting, SyntheticPanelSetting)
    check_key("simulate_synthetic_panel", key)
    s = setting
    params = np.repeat(np.asarray(s.cells(), np.float32), s.datasets, axis=0)
    steps = ht.log_spaced_steps(s.num_steps, s.num_records)
    out = syn.loo_sweep(jax.random.split(key, len(params)), params, num_points=s.points,
                        dim=s.dim, steps=steps, chunk_size=s.chunk,
                        implementation=s.implementation)  # fmt: skip
    rows = {name: s.rows(name) for name in ("margin", "init", "radius")}
    return SyntheticPanelRun(np.asarray(steps), params, out["delta"], out["svm"], out["gamma"],
                             out["w0_distance"], rows, s.datasets,
                             out["svm_avg_exact"])  # fmt: skip


@dataclass(frozen=True)
class OverNSetting:
    """The ``n`` panel (Fig 6): the base cell at every ``n``, ``datasets`` each."""

    ns: tuple[int, ...] = (100, 200, 500, 1000, 2000)
    datasets: int = 100
    num_steps: int = 10_000
    num_records: int = 7
    dim: int = 10
    base: tuple[float, float, float, float] = (0.1, 1.0, 0.2, 0.0)
    chunk: int = 25
    implementation: str = "xla"  # head_tuning_gd's GD loop ("xla" or "fused")


class OverNRun(NamedTuple):
    """``ns`` ``(M,)``; ``delta`` ``(M, D)`` final ``‖Δ̂_T‖`` of GD; ``svm`` ``(M, D)`` the SVM
    limit averaged over ``i``; ``steps`` ``(R,)``; ``svm_exact`` ``(M, D)`` whether that
    average covers every support vector (``svm_avg_exact``)."""

    ns: np.ndarray
    delta: np.ndarray
    svm: np.ndarray
    steps: np.ndarray
    svm_exact: np.ndarray


def simulate_loo_over_n(key, setting: OverNSetting) -> OverNRun:
    """The base cell at every ``n`` (one compiled program per ``n``, key ``split(key, M)[j]``)."""
    check_setting_type("simulate_loo_over_n", setting, OverNSetting)
    check_key("simulate_loo_over_n", key)
    s = setting
    steps = ht.log_spaced_steps(s.num_steps, s.num_records)
    params = np.tile(np.asarray(s.base, np.float32), (s.datasets, 1))
    delta, svm, exact = [], [], []
    for n, k in zip(s.ns, jax.random.split(key, len(s.ns)), strict=True):
        out = syn.loo_sweep(jax.random.split(k, s.datasets), params, num_points=n, dim=s.dim,
                            steps=steps, chunk_size=s.chunk,
                            implementation=s.implementation)  # fmt: skip
        delta.append(out["delta"][:, -1])
        svm.append(out["svm"])
        exact.append(out["svm_avg_exact"])
    return OverNRun(np.asarray(s.ns), np.stack(delta), np.stack(svm), np.asarray(steps),
                    np.stack(exact))  # fmt: skip
