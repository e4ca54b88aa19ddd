"""Claims of Sun & Raskutti 2026's Sec 7.2 (task vectors) read on a real checkpoint, MiniLM.

They read :func:`ntsim.theory.early_stopping.minilm.simulate_minilm_task_vectors` with the
settings the figure ``early_stopping/minilm_task_vectors`` draws: one ``θ_PT`` (a MiniLM
encoder with a random scalar head) fine-tuned by full-batch GD on the squared loss,
separately on three tasks; ``τ_i = θ_i − θ_PT``. Cor 2's linearised model makes every
``τ_i = J_iᵀc_i`` (GD from ``Δθ = 0`` moves in the row space of the task's Jacobian), so
``cos(τ_i, τ_j)`` is set by the cross-task NTK block at ``θ_PT``; the simulation computes that
prediction for the same GD run beside the measured cosine.

* ``cosine_matches_kernel`` (derived, expected refuted): the measured cosine equals the
  prediction within ±0.05. At full scale the fine-tuned task vectors are more aligned than
  the kernel predicts, by about +0.15 on average (the experiment's first two draws: +0.15,
  +0.14).
* ``cosine_order_matches_kernel`` (its corrected twin): the kernel at ``θ_PT`` predicts
  which pairs of tasks align more — the ordering of the cosines within a draw — not their
  level.

Each is decided on a Student-t interval over draws (a draw's three pairs share one ``θ_PT``
and one head, so the draw is the independent unit). At quick scale (MiniLM-L3, a dozen
sentences, 20 steps, two draws) GD barely leaves the linear regime and two draws decide
nothing: both are smoke runs there (:data:`QUICK_SMOKE`).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, EstimateIn, Simulation, derived
from ntsim.claims._decisions import AtLeast, Interval, Tolerance, estimate_in
from ntsim.claims._kept_units import keeping_units
from ntsim.claims._resampling import cluster_bootstrap_ci
from ntsim.core import mean_ci, spearman
from ntsim.theory.early_stopping import minilm

__all__ = ["CLAIMS", "MINILM_TASK_VECTORS", "QUICK_SMOKE"]

_PAPER = "Sun & Raskutti 2026"
_FIGURE = "early_stopping/minilm_task_vectors"

# About 40 min per master seed at full scale on 2 CPU cores (five draws, three GD runs of all
# 22.6M parameters each): `ntsim verify --keep-units figures/claim_units` keeps each draw.
MINILM_TASK_VECTORS = Simulation(
    "early_stopping.minilm.task_vectors",
    keeping_units(minilm.simulate_minilm_task_vectors, "early_stopping.minilm.task_vectors"),
    {
        # the experiment's quick and full settings (without its run cache)
        "quick": minilm.MiniLMTaskVectorSetting(
            checkpoint="minilm-l3",
            train_size=12,
            test_size=24,
            max_length=12,
            seeds=2,
            steps=20,
            ntk_batch=12,
        ),  # fmt: skip
        "full": minilm.MiniLMTaskVectorSetting(),
    },
)

#: How far the measured cosine may sit from the kernel's prediction and still "match".
_MATCH = Tolerance(
    "chosen",
    0.05,
    "cosines span [−1, 1]; ±0.05 is the size of the cosines themselves between task vectors "
    "the kernel calls nearly orthogonal (quick scale)",
    observed="quick (L3, 20 steps): pairs within 0.015–0.031 of their predictions; full, "
    "the experiment's draws 0–1: mean gaps +0.15 and +0.14 per draw",
)
_SIGN = Tolerance("none", 0.0, "the ordering is claimed, not its strength")


def _pairs(matrices: np.ndarray) -> np.ndarray:
    """``(S, M, M)`` → the ``(S, M(M − 1)/2)`` entries above the diagonal."""
    upper = np.triu_indices(matrices.shape[-1], 1)
    return np.asarray(matrices)[:, upper[0], upper[1]]


def check_cosine_matches_kernel(run: minilm.MiniLMTaskVectors):
    """Mean over draws of the draw's mean (measured − predicted) cosine, CI in ±0.05."""
    measured, predicted = _pairs(run.measured_cosine), _pairs(run.predicted_cosine)
    gap_per_draw = (measured - predicted).mean(axis=1)
    mean, (lo, hi) = mean_ci(gap_per_draw)
    return estimate_in(
        float(mean), (float(lo), float(hi)), Interval(-_MATCH.value, _MATCH.value),
        num_instances=gap_per_draw.size, tolerance=_MATCH,
        diagnostics={"measured cos per draw and pair": np.round(measured, 4),
                     "predicted cos per draw and pair": np.round(predicted, 4),
                     "mean gap per draw": np.round(gap_per_draw, 4)},
        notes="Per draw, the mean over the task pairs of cos(τ_i, τ_j) measured on the "
        "fine-tuned network minus Cor 2's prediction from the NTK blocks at θ_PT for the same "
        "GD run; 95% Student-t CI over draws.",
    )  # fmt: skip


def _demeaned_rank_correlation(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Spearman ρ over all (draw, pair) points after each pair's mean over the draws is
    removed from both sides: whether the prediction tracks how a pair's cosine moves from
    draw to draw (a constant pattern, right or wrong, scores nothing). NaN if undefined."""
    rho = spearman((predicted - predicted.mean(0)).ravel(), (measured - measured.mean(0)).ravel())
    return float(rho)


def check_cosine_order_matches_kernel(run: minilm.MiniLMTaskVectors, *, resamples: int = 2000):
    """The prediction tracks the measured cosines across draws: the pair-demeaned Spearman ρ,
    CI ≥ 0, the interval a percentile bootstrap over draws as clusters."""
    measured, predicted = _pairs(run.measured_cosine), _pairs(run.predicted_cosine)
    draws = measured.shape[0]
    rho, interval = cluster_bootstrap_ci(
        lambda index: _demeaned_rank_correlation(predicted[index], measured[index]),
        draws,
        bounds=(-1.0, 1.0),
        resamples=resamples,
    )
    between = np.array([spearman(p, m) for p, m in zip(predicted, measured, strict=True)])
    return estimate_in(
        rho if np.isfinite(rho) else 0.0, interval, AtLeast(0.0), num_instances=draws,
        tolerance=_SIGN,
        diagnostics={"pair-demeaned ρ": rho, "95% bootstrap CI over draws": list(interval),
                     "ρ between pairs, per draw (not decided: 3 pairs)": np.round(between, 3)},
        notes="Spearman ρ between predicted and measured cosines over all (draw, pair) points, "
        "each pair's mean over draws removed from both: whether Cor 2's kernel at θ_PT tracks "
        "which draw aligns a pair more. 95% percentile bootstrap over draws. (Until "
        "2026-11-28 the check ordered the 3 pairs within each draw, which a constant guess "
        "of the pattern also passes; an independent referee pointed it out.)",
    )  # fmt: skip


_GD = (
    "MiniLM (L6, all 22.6M parameters) with a random scalar head, fine-tuned by full-batch GD "
    "on the squared loss separately on Rotten Tomatoes sentiment, tweet sentiment and a "
    "sentence-length task"
)

CLAIMS = (
    Claim(
        id="early_stopping.minilm.cosine_matches_kernel",
        paper=f"{_PAPER}, Cor 2, eq. (25); Sec 7.2, Fig 3 (left)",
        statement=f"On {_GD}, the cosine between two task vectors equals Cor 2's linearised "
        "prediction from the NTK blocks at θ_PT: the mean (measured − predicted) over pairs "
        "and draws has its 95% CI within ±0.05.",
        kind="identity",
        reading=derived(
            "Cor 2's linearised model (τ_i = J_iᵀc_i: “task vectors are almost orthogonal” "
            "when the cross-task kernel block vanishes, Assumption 5.1) read as predicting the "
            "cosine of a real fine-tuned network from its NTK at θ_PT"
        ),  # fmt: skip
        uses=MINILM_TASK_VECTORS,
        check=check_cosine_matches_kernel,
        expect="refuted",
        counterexample=EstimateIn(
            Interval(_MATCH.value, 1.0),
            why="the fine-tuned task vectors are more aligned than the kernel at θ_PT "
            "predicts: the mean gap's CI lies above +0.05",
        ),
        twin="early_stopping.minilm.cosine_order_matches_kernel",
        min_instances=2,
        slow_at_quick=True,
        experiment=_FIGURE,
    ),
    Claim(
        id="early_stopping.minilm.cosine_order_matches_kernel",
        paper=f"{_PAPER}, Cor 2, eq. (25); Sec 7.2, Fig 3 (left)",
        statement=f"(Corrected twin.) On {_GD}, the NTK at θ_PT predicts how the cosine of "
        "a pair of task vectors varies with the draw (sentences, head): after each pair's "
        "mean over draws is removed, the predicted and measured cosines are rank-correlated "
        "(Spearman ρ over the (draw, pair) points, 95% bootstrap CI over draws above 0).",
        kind="ordering",
        reading=derived(
            "the corrected reading of Cor 2's linearised model on a real network: the cross-"
            "task kernel block sets the pattern of the cosines, while fine-tuning adds an "
            "alignment the kernel at θ_PT does not see"
        ),  # fmt: skip
        uses=MINILM_TASK_VECTORS,
        check=check_cosine_order_matches_kernel,
        min_instances=2,
        slow_at_quick=True,
        experiment=_FIGURE,
    ),
)

#: Two draws of MiniLM-L3 trained for 20 steps decide neither claim (module doc).
QUICK_SMOKE = frozenset(claim.id for claim in CLAIMS)
