"""Small-scale analogues of Fu et al. 2023 Figs 1–4: std over seeds vs H, η, epochs, data.

What is computed: on ``tasks`` synthetic target tasks (each with its own pretrained MLP
encoder, :mod:`ntsim.theory.stability` small-scale setting), fine-tuning is run with
``seeds`` seeds at every point of four sweeps, all vmapped in ONE compiled program
(tasks × sweep points × seeds):

* Fig. 1 — MHLoss head number ``H`` (paper: ``H ∈ {1, 5, 50, 100, 200}``);
* Fig. 2 — training epochs (the per-epoch test accuracy of the base run);
* Fig. 3 — learning rate ``η`` (Adam);
* Fig. 4 — training-set fraction (paper: 40 %, …, 100 %; points outside the fraction get
  weight 0, so all fractions share shapes and the same number of optimiser steps).

The base run is FineTune with one head, the config's learning rate and all data. What is
plotted: the std over seeds of the final test accuracy (%) against each swept quantity, one
curve per task, as in the paper's figures (which give no numbers; the paper's reading is
that the std falls with H, epochs and data, and rises with η).

Run: ``ntsim run stability/methods_std_sweeps [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.experiment import Validated, param
from ntsim.theory.stability import (
    MethodHyper,
    TransferSetting,
    finetune,
    pretrain,
    transfer_task_data,
)


@dataclass(frozen=True)
class Config(Validated):
    """Sweep grids and sizes (paper grids where it gives them; the rest are substitutes)."""

    tasks: int = param(3, 'curves (the paper shows "several" GLUE tasks)', low=1, shape=True)
    seeds: int = param(
        20, "paper: 10; more here so each std has ~16% relative error, not ~24% (≥ 2 for a std)",
        low=2, shape=True,
    )  # fmt: skip
    heads: tuple[int, ...] = param(
        (1, 5, 50, 100, 200), "MHLoss H swept (paper, Sec 4.2.2)", low=1,
        allowed="≥ 1, each divides max(heads)", shape=True,
    )  # fmt: skip
    learning_rates: tuple[float, ...] = param(
        (1e-3, 3e-3, 1e-2, 3e-2, 1e-1), "Adam η swept (Fig. 3)", low=0, open=True
    )
    fractions: tuple[float, ...] = param(
        (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), "training-data fractions swept (paper, Sec 4.2.5)",
        low=0, high=1, open="low", shape=True,
    )  # fmt: skip
    learning_rate: float = param(1e-2, "base run (Adam)", low=0, open=True)
    epochs: int = param(
        40, "passes over the target training set (x-axis of Fig. 2)", low=1, shape=True
    )
    n_train: int = param(160, "labelled target training examples per task", low=1, shape=True)
    n_test: int = param(2000, "target test examples (test accuracy)", low=1, shape=True)
    n_source: int = param(2000, "source examples for pretraining the encoder", low=1, shape=True)
    batch_size: int = param(
        16, "Adam minibatch size (must divide n_train)", low=1, allowed="≥ 1, divides n_train",
        shape=True,
    )  # fmt: skip
    label_noise: float = param(
        0.1, "fraction of flipped target training labels", low=0, high=0.5, open="high"
    )
    pretrain_steps: int = param(
        1000, "full-batch Adam steps of pretraining on the source task", low=1, shape=True
    )

    def check(self):
        if any(max(self.heads) % h for h in self.heads):
            raise ValueError(
                f"Config.heads must be positive divisors of max(heads), got {self.heads}."
            )
        if self.n_train % self.batch_size:
            raise ValueError(
                f"Config.batch_size must divide n_train, got {self.batch_size=}, {self.n_train=}."
            )

    def setting(self) -> TransferSetting:
        """The synthetic source/target pair of this config."""
        return TransferSetting(
            n_source=self.n_source, n_train=self.n_train, n_test=self.n_test,
            label_noise=self.label_noise,
        )  # fmt: skip


SCALES = {
    "quick": Config(
        tasks=2,
        seeds=10,
        heads=(1, 5, 20),
        learning_rates=(3e-3, 1e-2, 3e-2),
        fractions=(0.4, 0.7, 1.0),
        epochs=12,
        n_train=64,
        n_test=1000,
        n_source=1000,
        pretrain_steps=200,
    ),  # fmt: skip
    "full": Config(),
}


def _sweep_points(config: Config, key):
    """Per sweep point: (heads, learning rate, fraction); point 0 is the base run."""
    base = (1, config.learning_rate, 1.0)
    points = [base]
    points += [(h, config.learning_rate, 1.0) for h in config.heads]
    points += [(1, lr, 1.0) for lr in config.learning_rates]
    points += [(1, config.learning_rate, f) for f in config.fractions]
    heads, lrs, fracs = (np.array(v) for v in zip(*points, strict=True))
    # fraction f keeps the first round(f·n) points of one fixed random order per task
    rank = jnp.argsort(jax.random.permutation(key, config.n_train))
    weights = (rank[None, :] < np.round(fracs * config.n_train)[:, None]).astype(float)
    return jnp.asarray(heads), jnp.asarray(lrs), weights


def run(config: Config, key) -> dict:
    """Final (and per-epoch) test accuracy for tasks × sweep points × seeds; stds over seeds."""
    setting = config.setting()
    k_tasks, k_seeds = jax.random.split(key)
    seed_keys = jax.random.split(k_seeds, config.seeds)  # the same seeds at every point

    def one_task(k):
        k_data, k_pre, k_frac = jax.random.split(k, 3)
        data = transfer_task_data(k_data, setting)
        encoder0 = pretrain(k_pre, data, setting, steps=config.pretrain_steps).encoder
        heads, lrs, weights = _sweep_points(config, k_frac)

        def one_point(h, lr, w):
            def one_seed(ks):
                return finetune(
                    ks, encoder0, data, w, MethodHyper(heads=h), setting,
                    head_slots=max(config.heads), epochs=config.epochs,
                    batch_size=config.batch_size, learning_rate=lr,
                ).test_accuracy  # fmt: skip

            return jax.vmap(one_seed)(seed_keys)

        return jax.vmap(one_point)(heads, lrs, weights)  # (points, seeds, epochs)

    acc = np.asarray(jax.jit(jax.vmap(one_task))(jax.random.split(k_tasks, config.tasks)))
    std = acc.std(axis=2, ddof=1)  # (tasks, points, epochs): std over seeds
    final_std, final_mean = std[..., -1], acc[..., -1].mean(axis=2)
    n_h, n_lr = len(config.heads), len(config.learning_rates)
    sl = {
        "heads": slice(1, 1 + n_h),
        "learning_rates": slice(1 + n_h, 1 + n_h + n_lr),
        "fractions": slice(1 + n_h + n_lr, None),
    }
    results = {
        "tasks": config.tasks,
        "seeds": config.seeds,
        "epochs": list(range(1, config.epochs + 1)),
        "std_vs_epochs": std[:, 0, :].tolist(),
        "mean_vs_epochs": acc[:, 0].mean(axis=1).tolist(),
    }
    for name, s in sl.items():
        results[name] = [float(v) for v in getattr(config, name)]
        results[f"std_vs_{name}"] = final_std[:, s].tolist()
        results[f"mean_vs_{name}"] = final_mean[:, s].tolist()
    return results


def plot(results: dict):
    """Four panels (Figs 1–4 analogues): std over seeds vs H, epochs, η, data fraction."""
    import matplotlib.pyplot as plt

    panels = [
        ("heads", "MHLoss head number H", "Fig. 1: impact of head number", "log"),
        ("epochs", "training epochs", "Fig. 2: impact of training epochs", "linear"),
        ("learning_rates", "learning rate η (Adam)", "Fig. 3: impact of learning rate", "log"),
        ("fractions", "training-set fraction", "Fig. 4: influence of sample count", "linear"),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(18.0, 4.4))
    for ax, (name, xlabel, title, xscale) in zip(axes, panels, strict=True):
        x = np.asarray(results[name])
        for task, curve in enumerate(results[f"std_vs_{name}"]):
            ax.plot(x, curve, marker="o", markersize=3, label=f"task {task + 1}")
        ax.set_xscale(xscale)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"std of test accuracy over {results['seeds']} seeds (%)")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.suptitle("Fu et al. 2023, Figs 1–4 analogues: pretrained MLP encoder, synthetic targets")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
