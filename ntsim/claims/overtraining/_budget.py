"""Claims on the pretraining-budget analogue (Springer et al. 2025, Sec 3, Figs 3–5, 8).

One :func:`~ntsim.theory.overtraining.budget_sweep` per (key, scale) — a byte-level decoder
pretrained on the standard library's sources for each budget on a doubling grid, perturbed
and fine-tuned — serves all three claims (cached). Quick scale is
:data:`~ntsim.theory.overtraining.QUICK_BUDGET_SETTING`; full scale the default
:class:`~ntsim.theory.overtraining.BudgetSetting` (12–382 tokens per parameter, the
experiment ``overtraining/fig_pretraining_budget``).

What is claimed is what the paper's figures show, read on this miniature: noise of a fixed
relative size hurts later checkpoints more (Fig 3, progressive sensitivity), and
fine-tuning with a larger learning rate moves further (Fig 8). The paper's U-shape (Figs
4–5) needs ≳ 10³ tokens per parameter on much larger models and is not claimed: at full
scale the post-fine-tuning pretraining loss is lowest at the longest budget for every
rate (the experiment's JSON records ``u_shape``), while at the claims' quick scale the
largest rate (3e-3) wipes the tiny model out (≈ 5 nats/byte, uniform is 5.55) and the
budget order becomes noise.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, cached_per_key, compare
from ntsim.claims.overtraining._common import PAPER
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

_EXPERIMENT = "overtraining/fig_pretraining_budget"
_KEY_ID = "overtraining.budget.sweep"  # one key, so the claims share one cached sweep
# Quick: the experiment's quick setting (1–5 tokens per parameter) is too short for the
# trends (the γ = 0.25 increase fell 0.005 → 0.003 there); twice the batch and budgets
# 128–512 (5–22 tokens per parameter) show them on every seed tried (0, 1), ~50 s idle.
_SETTINGS = {
    "quick": dataclasses.replace(
        ot.QUICK_BUDGET_SETTING,
        batch_size=16,
        budgets=(128, 256, 512),
        warmup=32,
        chunk=64,
        noise_draws=8,
        eval_windows=64,
    ),  # fmt: skip
    "full": ot.BudgetSetting(),
}


@cached_per_key(maxsize=2)
def _sweep(key, scale: str) -> dict:
    check_choice("budget claims", "scale", scale, SCALES)
    return ot.budget_sweep(_SETTINGS[scale], key)


def _setting_note(out: dict) -> str:
    tpp = out["tokens_per_parameter"]
    return (
        f"{out['num_params']} parameters, budgets {out['budgets']} AdamW steps "
        f"({tpp[0]:.0f}–{tpp[-1]:.0f} tokens per parameter)"
    )


def check_progressive_sensitivity(key, scale: str) -> ClaimResult:
    """Fig 3: the mean loss increase under ``γ·std(W_init)`` noise is larger at the last budget."""
    out = _sweep(key, scale)
    increase = out["perturbed_increase"]  # (budgets, γ, draws); draws shared across budgets
    gain = increase[-1] - increase[0]  # paired: the same noise draw at both checkpoints
    mean = increase.mean(axis=-1)
    se = gain.std(axis=-1, ddof=1) / np.sqrt(gain.shape[-1])
    rising = np.mean(np.diff(mean, axis=0) > 0)
    return compare(
        gain.mean(axis=-1),
        0.0,
        relation="lower_bound",
        notes=f"measured: held-out loss increase (nats/byte) under noise γ·std(W_init), mean "
        f"over {gain.shape[-1]} draws shared by all budgets, last budget minus first (must be "
        f"> 0), per γ = {out['gammas']}: first → last "
        + ", ".join(f"{a:.4f} → {b:.4f}" for a, b in zip(mean[0], mean[-1], strict=True))
        + " (paired gain / s.e.: "
        + ", ".join(f"{g:.1f}" for g in gain.mean(axis=-1) / se)
        + f"); {rising:.0%} of consecutive-budget steps raise the mean; "
        f"{np.mean(gain > 0):.0%} of single draws gain. {_setting_note(out)}.",
    )


def check_distance_grows_with_learning_rate(key, scale: str) -> ClaimResult:
    """Fig 8: ``‖θ_ft − θ_pre‖`` increases with the fine-tuning learning rate at every budget."""
    out = _sweep(key, scale)
    distance = out["distance"]  # (budgets, lrs)
    ratio = distance[:, 1:] / distance[:, :-1]
    return compare(
        ratio,
        1.0,
        relation="lower_bound",
        num_instances=distance.shape[0],
        notes=f"measured: ‖θ_ft − θ_pre‖ at the next learning rate over the previous one (must "
        f"be > 1), learning rates {out['finetune_lrs']}, every budget; min ratio "
        f"{ratio.min():.2f}. Distances at the largest rate by budget: "
        + ", ".join(f"{d:.2f}" for d in distance[:, -1])
        + f". {_setting_note(out)}.",
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.budget.progressive_sensitivity",
        paper=f"{PAPER}, Sec 3.1, Fig 3 (analogue: byte-level decoder on stdlib sources)",
        statement="Gaussian noise γ·std(W_init) raises the held-out loss more at the longest "
        "pretraining budget than at the shortest, for every γ",
        check=check_progressive_sensitivity,
        experiment=_EXPERIMENT,
        key_id=_KEY_ID,
    ),
    Claim(
        id="overtraining.budget.distance_grows_with_learning_rate",
        paper=f"{PAPER}, Fig 8 (analogue)",
        statement="‖θ_ft − θ_pre‖ increases with the fine-tuning learning rate at every budget",
        check=check_distance_grows_with_learning_rate,
        experiment=_EXPERIMENT,
        key_id=_KEY_ID,
    ),
)
