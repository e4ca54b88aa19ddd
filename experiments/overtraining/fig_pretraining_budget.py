"""Pretraining-budget analogue (Springer et al. 2025, Figs 3, 4, 5, 8) with a tiny decoder.

What is plotted. A byte-level GPT-style decoder (:func:`ntsim.core.causal_decoder`) is
pretrained on the Python standard library's sources, one separate AdamW run with warm-up and
cosine decay to zero per token budget on a doubling grid (all runs share the init and the
batch sequence). Then, per checkpoint:

* left (Fig 3 analogue): held-out pretraining loss after Gaussian noise
  ``γ · std(W_init) · N(0, I)`` on every tensor, minus the unperturbed loss, vs budget, per
  γ (mean ± 2 s.e. over noise draws) — *progressive sensitivity* predicts growth with budget;
* middle (Figs 4–5 analogue): held-out *pretraining* loss after fine-tuning at fixed
  learning rates on a shifted task (synthetic arithmetic lines ``a±b=c``), vs budget, per
  learning rate, with the base checkpoint's loss dashed — *catastrophic overtraining* is a
  U-shape (loss rising again at large budgets); the inflection (argmin) is marked;
* right (Fig 8 analogue): ``‖θ_ft − θ_pre‖`` vs learning rate, per budget.

The paper's models see ~10³ tokens per parameter at the budgets where its U-shape appears;
the full scale here reaches ~10³ as well (8192 steps × 2048 tokens on ~3·10⁴ parameters),
but on a 2-core CPU, so the model is tiny: read the result as what this scale shows, not
as a replication (the JSON records whether a U-shape appeared).

Run: ``ntsim run overtraining/fig_pretraining_budget [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np
from tqdm.auto import tqdm

from ntsim._validation import check_int_fields
from ntsim.core import (
    arithmetic_corpus,
    causal_decoder,
    next_token_loss,
    sample_windows,
    stdlib_corpus,
)
from ntsim.theory import overtraining as ot


@dataclass(frozen=True)
class Config:
    """Model, budgets, perturbation and fine-tuning grids (the paper gives none at this scale)."""

    width: int = 32
    depth: int = 2
    num_heads: int = 4
    context: int = 64
    batch_size: int = 32  # windows per step (tokens per step = batch_size · context)
    budgets: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)  # pretraining steps
    peak_lr: float = 3e-3
    warmup: int = 64
    weight_decay: float = 0.0
    chunk: int = 128  # steps per compiled scan (divides every budget)
    gammas: tuple[float, ...] = (0.25, 0.5, 1.0)  # noise scale relative to the init std
    noise_draws: int = 8
    finetune_lrs: tuple[float, ...] = (1e-4, 3e-4, 1e-3, 3e-3)
    finetune_steps: int = 256
    eval_windows: int = 128  # fixed held-out windows per task
    arithmetic_lines: int = 100_000

    def __post_init__(self):
        names = (
            "width", "depth", "num_heads", "context", "batch_size", "chunk", "noise_draws",
            "finetune_steps", "eval_windows", "arithmetic_lines"
        )  # fmt: skip
        check_int_fields(self, names)
        if list(self.budgets) != sorted(set(self.budgets)) or any(
            b % self.chunk or b <= self.warmup for b in self.budgets
        ):
            raise ValueError(
                f"Config.budgets must be increasing multiples of chunk={self.chunk} above "
                f"warmup={self.warmup}, got {self.budgets}."
            )
        if not self.gammas or min(self.gammas) <= 0:
            raise ValueError(f"Config.gammas must be positive, got {self.gammas}.")
        if not self.finetune_lrs or min(self.finetune_lrs) <= 0:
            raise ValueError(f"Config.finetune_lrs must be positive, got {self.finetune_lrs}.")


SCALES = {
    "quick": Config(
        width=16,
        depth=1,
        num_heads=2,
        context=32,
        batch_size=8,
        budgets=(64, 128, 256),
        warmup=16,
        chunk=32,
        noise_draws=4,
        finetune_lrs=(3e-4, 3e-3),
        finetune_steps=32,
        eval_windows=32,
        arithmetic_lines=5000,
    ),  # fmt: skip
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Pretrain per budget, perturb and fine-tune every checkpoint, evaluate on both tasks."""
    k_init, k_batches, k_eval, k_noise, k_ft = jax.random.split(key, 5)
    corpus = stdlib_corpus()
    shifted = arithmetic_corpus(0, config.arithmetic_lines)
    model = causal_decoder(
        context=config.context, width=config.width, depth=config.depth,
        num_heads=config.num_heads,
    )  # fmt: skip
    init = model.init(k_init)
    k_pre, k_arith = jax.random.split(k_eval)
    heldout = sample_windows(k_pre, corpus.heldout, config.eval_windows, config.context + 1)
    heldout_ft = sample_windows(k_arith, shifted.heldout, config.eval_windows, config.context + 1)
    loss = jax.jit(lambda p, w: next_token_loss(model.apply, p, w))
    losses = jax.jit(jax.vmap(lambda p, w: next_token_loss(model.apply, p, w), in_axes=(0, None)))

    out = {name: [] for name in ("base", "perturbed", "ft_pretrain", "ft_task", "distance")}
    bar = tqdm(total=sum(config.budgets), desc="pretraining steps", unit="step")
    for budget in config.budgets:
        done = [0]

        def tick(steps, done=done):
            bar.update(steps - done[0])
            done[0] = steps

        params = ot.pretrain_for_budget(
            model.apply, init, corpus.train, k_batches, budget=budget,
            batch_size=config.batch_size, context=config.context, peak_lr=config.peak_lr,
            warmup=config.warmup, weight_decay=config.weight_decay, chunk=config.chunk,
            progress=tick,
        )  # fmt: skip
        out["base"].append(float(loss(params, heldout)))
        out["perturbed"].append(np.asarray(ot.perturbation_loss_increase(
            model.apply, params, init, heldout, config.gammas, k_noise,
            num_draws=config.noise_draws,
        )))  # fmt: skip
        tuned, distance = ot.finetune_at_learning_rates(
            model.apply, params, shifted.train, k_ft, learning_rates=config.finetune_lrs,
            steps=config.finetune_steps, batch_size=config.batch_size, context=config.context,
        )  # fmt: skip
        out["ft_pretrain"].append(np.asarray(losses(tuned, heldout)))
        out["ft_task"].append(np.asarray(losses(tuned, heldout_ft)))
        out["distance"].append(np.asarray(distance))
    bar.close()
    out = {name: np.asarray(value) for name, value in out.items()}
    argmin = out["ft_pretrain"].argmin(axis=0)  # per learning rate
    tokens = np.asarray(config.budgets) * config.batch_size * config.context
    num_params = int(sum(leaf.size for leaf in jax.tree.leaves(init)))
    return {
        "budgets": list(config.budgets),
        "tokens": tokens,
        "tokens_per_parameter": tokens / num_params,
        "num_params": num_params,
        "gammas": list(config.gammas),
        "finetune_lrs": list(config.finetune_lrs),
        "base_loss": out["base"],  # (budgets,)
        "perturbed_increase": out["perturbed"],  # (budgets, γ, draws)
        "finetuned_pretrain_loss": out["ft_pretrain"],  # (budgets, lrs)
        "finetuned_task_loss": out["ft_task"],  # (budgets, lrs)
        "distance": out["distance"],  # (budgets, lrs)
        "inflection_budget": [config.budgets[i] for i in argmin],
        "u_shape": [bool(i < len(config.budgets) - 1) for i in argmin],
        "corpus": corpus.description,
        "corpus_sha256": corpus.sha256,
        "shifted_task": shifted.description,
    }


def plot(results: dict):
    """Three panels: perturbation sensitivity, post-fine-tuning pretraining loss, distance."""
    import matplotlib.pyplot as plt

    budgets = np.asarray(results["budgets"])
    fig, (ax_p, ax_f, ax_d) = plt.subplots(1, 3, figsize=(17.0, 4.8))
    increase = np.asarray(results["perturbed_increase"])
    colors = plt.cm.viridis(np.linspace(0.1, 0.85, len(results["gammas"])))
    for j, (gamma, color) in enumerate(zip(results["gammas"], colors, strict=True)):
        mean = increase[:, j].mean(-1)
        se = increase[:, j].std(-1, ddof=1) / np.sqrt(increase.shape[-1])
        ax_p.errorbar(budgets, mean, yerr=2 * se, marker="o", color=color, capsize=2,
                      label=f"γ = {gamma:g}")  # fmt: skip
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
    from ntsim.experiment import main

    main(__file__)
