"""Pretraining-budget analogue (Springer et al. 2025, Figs 3, 4, 5, 8) with a tiny decoder.

What is plotted. A byte-level GPT-style decoder (:func:`ntsim.core.causal_decoder`) is
pretrained on the Python standard library's sources, one separate AdamW run with warm-up and
cosine decay to zero per token budget on a doubling grid, replicated over independent
pretraining runs (a run's budgets share its init and batch sequence). Then, per checkpoint:

* left (Fig 3 analogue): held-out pretraining loss after Gaussian noise
  ``γ · std(W_init) · N(0, I)`` on every tensor, minus the unperturbed loss, vs budget, per
  γ: the first pretraining replicate over every budget (line), and at the first and last
  budgets — where every independent pretraining run is pretrained, and what the claim
  ``overtraining.budget.progressive_sensitivity`` reads — the mean ± 2 s.e. over the runs
  (error bars; each run averaged over its noise draws) — *progressive sensitivity* predicts
  growth with budget;
* middle (Figs 4–5 analogue, first pretraining replicate): held-out *pretraining* loss
  after fine-tuning at fixed learning rates on a shifted task (arithmetic lines ``a±b=c``),
  vs budget, per learning rate, with the base checkpoint's loss dashed — *catastrophic
  overtraining* is a U-shape (loss rising again at large budgets); the inflection (argmin)
  is marked;
* right (Fig 8 analogue): ``‖θ_ft − θ_pre‖`` vs learning rate, per budget.

The paper's U-shape appears at ≳ 10³ tokens per parameter on billion-parameter models; the
full scale here reaches 382 (8192 steps × 2048 bytes on 43,904 parameters) on a 2-core
CPU, so read the result as what this scale shows, not as a replication (the JSON records
whether a U-shape appeared). The protocol is the claims' simulation
:func:`ntsim.theory.overtraining.simulate_budget_sweep` (claims ``overtraining.budget.*``);
``Config`` is its :class:`~ntsim.theory.overtraining.BudgetSetting`, with the claims' settings
at both scales.

Run: ``ntsim run overtraining/fig_pretraining_budget [--scale full]`` or this file.
"""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ntsim.core import stdlib_corpus
from ntsim.experiment import shared_run
from ntsim.theory import overtraining as ot

Config = ot.BudgetSetting  # model, budgets, perturbation and fine-tuning grids

SCALES = {"quick": ot.QUICK_BUDGET_SETTING, "full": ot.BudgetSetting()}


def run(config: Config, key) -> dict:
    """:func:`ntsim.theory.overtraining.simulate_budget_sweep` (the claims' simulation) with a
    progress bar over pretraining steps."""
    total = sum(config.budgets)  # steps per replicate (the replicates run vmapped)
    with tqdm(total=total, desc="pretraining steps", unit="step") as bar:
        sweep = shared_run(ot.simulate_budget_sweep, key, config, progress=bar.update)
    increase = np.asarray(sweep.perturbed_increase).mean(-1)  # (R, B, γ); NaN: not pretrained
    argmin = np.asarray(sweep.finetuned_pretrain_loss).argmin(axis=0)  # per learning rate
    corpus = stdlib_corpus()
    return {
        "budgets": list(config.budgets),
        "tokens_per_parameter": np.asarray(sweep.tokens_per_parameter).tolist(),
        "num_params": int(sweep.num_params),
        "gammas": list(config.gammas),
        "finetune_lrs": list(config.finetune_lrs),
        "base_loss": np.asarray(sweep.base_loss).tolist(),
        # (R, B, γ) draw means; null where a replicate was not pretrained at that budget
        "perturbed_increase": [
            [[None if np.isnan(x) else float(x) for x in row] for row in budget]
            for budget in increase
        ],
        "finetuned_pretrain_loss": np.asarray(sweep.finetuned_pretrain_loss).tolist(),
        "finetuned_task_loss": np.asarray(sweep.finetuned_task_loss).tolist(),
        "distance": np.asarray(sweep.distance).tolist(),
        "inflection_budget": [config.budgets[i] for i in argmin],
        "u_shape": [bool(i < len(config.budgets) - 1) for i in argmin],
        "corpus": corpus.description,
        "corpus_sha256": corpus.sha256,
    }


def plot(results: dict):
    """Three panels: perturbation sensitivity, post-fine-tuning pretraining loss, distance."""
    import matplotlib.pyplot as plt

    budgets = np.asarray(results["budgets"])
    fig, (ax_p, ax_f, ax_d) = plt.subplots(1, 3, figsize=(17.0, 4.8))
    increase = np.asarray(results["perturbed_increase"], dtype=float)  # (R, B, γ); NaN: none
    ends = [0, len(budgets) - 1]
    colors = plt.cm.viridis(np.linspace(0.1, 0.85, len(results["gammas"])))
    for j, (gamma, color) in enumerate(zip(results["gammas"], colors, strict=True)):
        ax_p.plot(budgets, increase[0, :, j], marker="o", color=color, markersize=4,
                  label=f"γ = {gamma:g}, replicate 0")  # fmt: skip
        at_ends = increase[:, ends, j]
        mean = at_ends.mean(0)
        se = at_ends.std(0, ddof=1) / np.sqrt(at_ends.shape[0])
        ax_p.errorbar(budgets[ends], mean, yerr=2 * se, marker="s", color=color, capsize=3,
                      linestyle="none")  # fmt: skip
    ax_p.plot([], [], "s", color="gray",
              label=f"mean ± 2 s.e. over {increase.shape[0]} runs (claim)")  # fmt: skip
    ax_p.set(xscale="log", xlabel="pretraining budget (AdamW steps)",
             ylabel="held-out loss increase (nats/byte)")  # fmt: skip
    ax_p.set_title("Gaussian perturbation γ·std(W_init) (Fig 3 analogue)", fontsize=10)
    ax_p.legend(fontsize=8)

    ft = np.asarray(results["finetuned_pretrain_loss"])
    colors = plt.cm.plasma(np.linspace(0.1, 0.8, len(results["finetune_lrs"])))
    for j, (lr, color) in enumerate(zip(results["finetune_lrs"], colors, strict=True)):
        ax_f.plot(budgets, ft[:, j], marker="o", color=color, label=f"fine-tuned, lr = {lr:g}")
        i = int(np.argmin(ft[:, j]))
        ax_f.plot(budgets[i], ft[i, j], "*", markersize=13, color=color, markeredgecolor="k")
    ax_f.plot(budgets, results["base_loss"], "k--", label="before fine-tuning")
    ax_f.plot([], [], "*", color="gray", markeredgecolor="k", markersize=11, label="argmin")
    ax_f.set(xscale="log", xlabel="pretraining budget (AdamW steps)",
             ylabel="held-out pretraining loss (nats/byte)")  # fmt: skip
    ax_f.set_title("Pretraining loss after fine-tuning on a shifted task (Figs 4–5)", fontsize=10)
    for ax in (ax_p, ax_f):  # one labelled tick per budget (log minor labels collide)
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
    ax_f.legend(fontsize=7)

    distance = np.asarray(results["distance"])
    colors = plt.cm.cividis(np.linspace(0.1, 0.9, len(budgets)))
    for i, (budget, color) in enumerate(zip(budgets, colors, strict=True)):
        ax_d.plot(results["finetune_lrs"], distance[i], marker="o", color=color,
                  label=f"budget {budget}")  # fmt: skip
    ax_d.set(xscale="log", yscale="log", xlabel="fine-tuning learning rate",
             ylabel="‖θ_ft − θ_pre‖₂")  # fmt: skip
    ax_d.set_title("Distance moved by fine-tuning (Fig 8 analogue)", fontsize=10)
    ax_d.legend(fontsize=7, ncol=2)
    fig.suptitle(
        f"Springer et al. 2025 in miniature: byte-level decoder, {results['num_params']} "
        f"parameters, stdlib sources; tokens/parameter "
        f"{results['tokens_per_parameter'][0]:.0f}–{results['tokens_per_parameter'][-1]:.0f}",
        fontsize=11,
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
