"""Claims on the pretraining-budget analogue (Springer et al. 2025, Sec 3, Figs 3–5, 8).

One :func:`~ntsim.theory.overtraining.simulate_budget_sweep` per (seed, scale) — a byte-level
decoder pretrained on the standard library's sources for each budget (several independent
pretraining runs, vmapped, at the first and last budgets — the two the budget contrast reads
— and the first run alone in between), perturbed and fine-tuned — serves both claims. Quick scale is
:data:`~ntsim.theory.overtraining.QUICK_BUDGET_SETTING`, full scale the default
:class:`~ntsim.theory.overtraining.BudgetSetting` (12–382 tokens per parameter); the
experiment ``overtraining/fig_pretraining_budget`` runs the same function with the same
settings.

What is claimed is what the paper's figures show, read on this miniature: noise of a fixed
relative size hurts later checkpoints more (Fig 3, progressive sensitivity), and
fine-tuning with a larger learning rate moves further (Fig 8; with Adam this cannot fail,
so it is a sanity check). The paper's U-shape (Figs 4–5) needs ≳ 10³ tokens per parameter on
much larger models and is not claimed: at full scale the post-fine-tuning pretraining loss
is lowest at the longest budget for every rate (the experiment's JSON records ``u_shape``).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, figure
from ntsim.claims._decisions import AtLeast, all_of, compare, estimate_in
from ntsim.core import mean_ci
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

PAPER = "Springer et al. 2025"
_EXPERIMENT = "overtraining/fig_pretraining_budget"

SWEEP = Simulation(
    "overtraining.budget.sweep",
    ot.simulate_budget_sweep,
    {"quick": ot.QUICK_BUDGET_SETTING, "full": ot.BudgetSetting()},
)


def _setting_diagnostics(run: ot.BudgetSweepRun) -> dict:
    return {
        "parameters": run.num_params,
        "budgets (AdamW steps)": run.budgets,
        "tokens per parameter": np.round(run.tokens_per_parameter, 1),
    }


def check_progressive_sensitivity(run: ot.BudgetSweepRun):
    """Fig 3: the mean loss increase under ``γ·std(W_init)`` noise is larger at the last budget.

    The unit of replication is the pretraining run (the claim is about pretraining budgets):
    per replicate and γ, the gain is the draw-mean increase at the last budget minus that at
    the first (paired: a replicate's budgets share its init, batches and noise draws). Per γ
    the gain is decided on its 95% t interval over the replicates, which therefore carries
    the variability of pretraining itself; holds when the interval lies above 0.
    """
    increase = np.asarray(run.perturbed_increase).mean(axis=-1)  # (replicates, budgets, γ)
    gain = increase[:, -1] - increase[:, 0]  # (replicates, γ)
    replicates = gain.shape[0]
    mean, (lo, hi) = mean_ci(gain, axis=0)
    se = gain.std(axis=0, ddof=1) / np.sqrt(replicates)
    parts = [
        estimate_in(m, (low, high), AtLeast(0.0), num_instances=replicates)
        for m, low, high in zip(mean, lo, hi, strict=True)
    ]
    return all_of(
        *parts,
        diagnostics={
            "γ": run.gammas,
            "mean increase at the first budget": increase[:, 0].mean(axis=0),
            "mean increase at the last budget": increase[:, -1].mean(axis=0),
            "smallest replicate gain": gain.min(axis=0),
            "gain / s.e. over replicates": mean / se,
            "pretraining replicates": replicates,
            **_setting_diagnostics(run),
        },
        notes="Held-out loss increase (nats/byte) under noise γ·std(W_init), last budget minus "
        "first, averaged over the noise draws of each independent pretraining run; 95% t "
        "interval over the pretraining runs per γ against > 0. Effect size 0: Fig 3 asserts "
        "a direction (“progressively increases”) and prints no magnitude that carries over "
        "from OLMo-30M to a 12k–44k parameter decoder.",
    )


def check_distance_grows_with_learning_rate(run: ot.BudgetSweepRun):
    """Fig 8: ``‖θ_ft − θ_pre‖`` increases with the fine-tuning learning rate at every budget."""
    distance = np.asarray(run.distance)  # (budgets, lrs)
    ratio = distance[:, 1:] / distance[:, :-1]
    return compare(
        ratio, 1.0, relation="lower_bound", num_instances=distance.shape[0],
        diagnostics={"learning rates": run.finetune_lrs,
                     "distance at the largest rate, per budget": distance[:, -1],
                     **_setting_diagnostics(run)},
        notes="‖θ_ft − θ_pre‖ at the next learning rate over the previous one (must be > 1).",
    )  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.budget.progressive_sensitivity",
        paper=f"{PAPER}, Sec 3.1, Fig 3 (analogue: byte-level decoder on stdlib sources)",
        statement="Gaussian noise γ·std(W_init) raises the held-out loss more at the longest "
        "pretraining budget than at the shortest, for every γ (95% CI over independent "
        "pretraining runs of the paired gain > 0)",
        kind="trend",
        reading=figure(
            "Fig 3 (left): “extending pre-training progressively increases the degree to which "
            "a Gaussian parameter perturbation degrades perplexity” (OLMo-30M; here a 12k–44k "
            "parameter decoder)"
        ),
        uses=SWEEP,
        check=check_progressive_sensitivity,
        min_instances=4,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.budget.distance_grows_with_learning_rate",
        paper=f"{PAPER}, Fig 8 (analogue)",
        statement="‖θ_ft − θ_pre‖ increases with the fine-tuning learning rate at every budget "
        "(sanity: with Adam each step moves each weight by about the learning rate, so a "
        "tenfold rate cannot move less)",
        kind="sanity",
        reading=figure(
            "Fig 8: “the distance between the pre-trained and fine-tuned model is not exactly, "
            "but approximately, directly proportional to the learning rate”"
        ),
        uses=SWEEP,
        check=check_distance_grows_with_learning_rate,
        experiment=_EXPERIMENT,
    ),
)
