"""Does the regulariser make a real model linear? The slides' λ table on MiniLM + LoRA.

What is computed: :func:`ntsim.theory.linearization.minilm.simulate_minilm_lambda` — MiniLM (L3 at
quick scale, L6 at full) with the head plus LoRA on query/value, fine-tuned by AdamW +
cross-entropy with the proximal term (λ/2)‖θ − θ_0‖² for every λ of the grid and every seed
(one stacked run per dataset), then per (dataset, λ, seed): ‖θ_T − θ_0‖, the gap between the
fine-tuned logits and their first-order Taylor expansion at θ_0 (train and test sentences),
the mean KL between the two predictive distributions on the test sentences, and test
accuracy. The gaps are also taken at θ_0 + s(θ_T − θ_0) for s = ½, ¼
(``gap_train_scaled``, ``gap_test_scaled``): a correct linearisation leaves a second-order
remainder, so each halving of s quarters the gap (the halving exponent, printed, is 2).

What is plotted: the four rows of the slides' table against λ (mean ± std over seeds, one
line per dataset), and the slides' CoLA / SST-2 numbers (RoBERTa-base + LoRA) beside ours as
text. ``results["spearman_vs_lambda"]`` holds Spearman ρ(λ, ·) per (dataset, seed) and its
mean; ``results["paper_spearman_vs_lambda"]`` the same of the slides' table.

Run: ``ntsim run linearization/minilm_lambda_table [--scale full]``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from experiments.linearization.lambda_table import PAPER_LAMBDAS, PAPER_TABLE
from ntsim.core import spearman
from ntsim.experiment import param, shared_run
from ntsim.run_cache import disk_memo, setting_of
from ntsim.theory.linearization import minilm as lz


@dataclasses.dataclass(frozen=True)
class Config(lz.MiniLMLambdaSetting):
    """The simulation's setting (the claims ``linearization.minilm_lambda.*`` read the same
    simulation with the same settings) and where a run keeps its finished units."""

    run_cache: str = param("", 'directory keeping each finished unit (resumable); "" = none')


#: The simulation's scales; the full run keeps its units in ``figures/linearization/minilm_runs``.
SCALES = {
    "quick": Config(**dataclasses.asdict(lz.MINILM_LAMBDA_SCALES["quick"])),
    "full": Config(**dataclasses.asdict(lz.MINILM_LAMBDA_SCALES["full"]),
                   run_cache="figures/linearization/minilm_runs/lambda_table"),
}  # fmt: skip

METRICS = ("distance", "gap_train", "gap_test", "kl_test", "accuracy")


def _rho(x, y):
    value = spearman(x, y)
    return None if np.isnan(value) else value


def run(config: Config, key) -> dict:
    """The λ table and Spearman ρ(λ, ·) here and in the slides."""
    setting = setting_of(config, lz.MiniLMLambdaSetting)
    memo = lambda k: disk_memo(config.run_cache, setting, k)  # noqa: E731
    sim = shared_run(lz.simulate_minilm_lambda, key, setting, memo=memo)
    lambdas = list(config.lambdas)
    spearman_vs_lambda = {}
    for metric in METRICS:
        values = np.asarray(getattr(sim, metric))  # (D, L, S)
        per_run = [_rho(lambdas, values[d, :, j]) for d in range(values.shape[0])
                   for j in range(values.shape[2])]  # fmt: skip
        defined = [v for v in per_run if v is not None]
        mean = float(np.mean(defined)) if defined else None
        spearman_vs_lambda[metric] = {"per_dataset_seed": per_run, "mean": mean}
    for split in ("train", "test"):  # log₂(R(½)/R(¼)) per λ: 2 for a second-order remainder
        scaled = np.asarray(getattr(sim, f"gap_{split}_scaled"))
        exponent = np.log2(scaled[..., 0] / scaled[..., 1]).mean(axis=(0, 2))
        print(f"{split} gap halving exponent per λ: {np.round(exponent, 3).tolist()}", flush=True)
    paper_spearman = {name: {row: _rho(PAPER_LAMBDAS, values) for row, values in table.items()}
                      for name, table in PAPER_TABLE.items()}  # fmt: skip
    return {
        "checkpoint": config.checkpoint,
        "datasets": list(config.datasets),
        "config": config.config,
        "lambdas": lambdas,
        "train_size": config.train_size,
        "seeds": config.seeds,
        **{
            m: np.asarray(getattr(sim, m)).tolist()
            for m in (*METRICS, "train_loss", "gap_train_scaled", "gap_test_scaled")
        },
        "spearman_vs_lambda": spearman_vs_lambda,
        "paper": {"lambdas": list(PAPER_LAMBDAS), **PAPER_TABLE},
        "paper_spearman_vs_lambda": paper_spearman,
        "notes": "gap = ‖f(θ_T) − f̄(θ_T)‖₂ with f̄ the Taylor expansion at θ_0 evaluated at the "
        "same θ_T (the slides' column header); the small analogue "
        "(linearization/lambda_table) trains the linearised model separately instead. λ is on "
        "the minibatch-mean loss scale.",
    }


def plot(results: dict):
    """Four panels against λ (categorical) and the slides' table as text."""
    import matplotlib.pyplot as plt

    lambdas = results["lambdas"]
    pos = np.arange(len(lambdas))
    fig, axes = plt.subplots(2, 3, figsize=(16.0, 8.5))
    panels = (("distance", "‖θ_T − θ_0‖₂"), ("gap_train", "‖f(θ_T) − f̄(θ_T)‖₂ (train)"),
              ("kl_test", "mean KL(Ber σ(f) ‖ Ber σ(f̄)) (test)"), ("accuracy", "test accuracy"),
              ("gap_test", "‖f(θ_T) − f̄(θ_T)‖₂ (test)"))  # fmt: skip
    for ax, (metric, label) in zip(axes.flat, panels, strict=False):
        values = np.asarray(results[metric])  # (D, L, S)
        for d, dataset in enumerate(results["datasets"]):
            ax.errorbar(pos, values[d].mean(-1), yerr=values[d].std(-1), marker="o",
                        capsize=3, label=dataset)  # fmt: skip
        rho = results["spearman_vs_lambda"][metric]["mean"]
        ax.set_title(f"{label}: mean ρ(λ, ·) = " + ("n/a" if rho is None else f"{rho:+.2f}"),
                     fontsize=9)  # fmt: skip
        ax.set_xticks(pos, [f"{lam:g}" for lam in lambdas])
        ax.set_xlabel("λ (proximal strength, minibatch-mean loss scale)")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    ax = axes.flat[5]
    ax.axis("off")
    paper = results["paper"]
    lines = ["Slides (RoBERTa-base + LoRA):", "λ:     " + " ".join(f"{v:>6g}" for v in
                                                                  paper["lambdas"])]  # fmt: skip
    for name in ("CoLA", "SST-2"):
        for metric in ("distance", "gap", "kl", "accuracy"):
            lines.append(f"{name[:5]:<5} {metric[:4]:<4} "
                         + " ".join(f"{v:6.3f}" for v in paper[name][metric]))  # fmt: skip
    lines += ["", f"Ours ({results['checkpoint']}, {results['config']}; mean over seeds):",
              "λ:     " + " ".join(f"{v:>6g}" for v in lambdas)]  # fmt: skip
    for d, dataset in enumerate(results["datasets"]):
        for metric in ("distance", "gap_train", "kl_test", "accuracy"):
            values = np.asarray(results[metric])[d].mean(-1)
            lines.append(f"{dataset[:5]:<5} {metric[:4]:<4} "
                         + " ".join(f"{v:6.3f}" for v in values))  # fmt: skip
    ax.text(0.0, 1.0, "\n".join(lines), family="monospace", fontsize=6.5, va="top")
    fig.suptitle("Does the proximal regulariser make fine-tuning linear? MiniLM + LoRA "
                 "(Rahimi Afzal et al. 2025)")  # fmt: skip
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
