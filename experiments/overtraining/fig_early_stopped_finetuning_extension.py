"""EXTENSION (not in Springer et al. 2025): early-stopped fine-tuning instead of regularisation.

The paper controls the size of the fine-tuning update with λ (Sec 4.3); its LLM experiments
use the learning rate instead (Figs 4, 5). Here λ = 0 and the budget ``ηK`` of the
fine-tuning run is the knob (an extension of the paper). In the ideal infinite-batch dynamics
each learned mode moves from ``σ^pre_n`` toward ``σ^ft_n`` by the map of Lemma A.7,
``a_n(K) = f^{(K)}(√σ^pre_n)²``, so the post-fine-tuning pretraining loss is
``Σ_{i≤n}(a_i(K) − σ^pre_i)² + Σ_{i>n}(σ^pre_i)²`` and its increment at ``n`` is
``(a_n(K) − σ^pre_n)² − (σ^pre_n)²``: positive once ``a_n(K) > 2σ^pre_n``. Longer fine-tuning
moves more modes past that threshold, so a larger ``ηK`` gives an earlier inflection — the
analogue of "larger learning rate ⇒ earlier inflection" in the paper's Figs 4–5.

What is plotted: left, ``L_pre(θ^n(K))`` vs ``n`` for several budgets ``ηK`` (recursion,
lines; GD on the matrices from the ideal checkpoints, markers) with the inflection starred;
right, the inflection vs ``ηK`` on a fine grid. The ideal init is used because from real
checkpoints large ``ηK`` also learns the unlearned modes and erases the effect (claim
``overtraining.caveat.long_finetuning_erases``). The project's config R.

Run: ``ntsim run overtraining/fig_early_stopped_finetuning_extension [--scale full]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import random_orthogonal
from ntsim.experiment import Validated, param
from ntsim.theory import overtraining as ot


@dataclass(frozen=True)
class Config(Validated):
    """The project's config R with λ = 0 and η = 0.01; budgets ηK are the varied quantity."""

    d: int = param(10, "dimension (config R)", low=2, shape=True)
    pre_first: float = param(4.0, "σ^pre_1 (config R)", low=0, open=True)
    pre_ratio: float = param(0.6, "σ^pre_{i+1}/σ^pre_i (config R)", low=0, open=True)
    ft_first: float = param(1.0, "σ^ft_1 (config R)", low=0, open=True)
    ft_ratio: float = param(0.95, "σ^ft_{i+1}/σ^ft_i (config R)", low=0, open=True)
    learning_rate: float = param(
        0.01, "η; the step counts are ηK/η", low=0, open=True,
        allowed="(0, 1/(8·max(pre_first, ft_first))) (A.8 at λ = 0)", shape=True,
    )  # fmt: skip
    budgets: tuple[float, ...] = param(
        (0.1, 0.3, 0.34, 0.38, 0.5, 2.0),
        "ηK of the plotted curves: config R's inflection moves from none (ηK ≲ 0.3) to n = 5",
        low=0, open=True, allowed="(0, max_budget]", shape=True,
    )  # fmt: skip
    max_budget: float = param(
        8.0, "the right panel spans ηK ∈ (0, max_budget]", low=0, open=True,
        allowed="≥ max(budgets)", shape=True,
    )  # fmt: skip

    def check(self):
        if max(self.budgets) > self.max_budget:
            raise ValueError(
                f"Config.max_budget must be >= every entry of Config.budgets, got "
                f"{self.max_budget} < {max(self.budgets)}."
            )
        if not 8 * self.learning_rate * max(self.pre_first, self.ft_first) < 1:
            raise ValueError(
                "Config.learning_rate violates A.8 at λ = 0, 8η·max(pre_first, ft_first) < 1: "
                f"got η = {self.learning_rate}."
            )


SCALES = {
    "quick": Config(max_budget=2.0),  # seconds on CPU
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Per-mode recursion for every K ≤ max_budget/η; GD on the matrices at the budgets."""
    steps = round(config.max_budget / config.learning_rate)
    every = [round(b / config.learning_rate) for b in config.budgets]
    with jax.enable_x64(True):
        pre = ot.geometric_spectrum(config.d, config.pre_first, config.pre_ratio)
        ft = ot.geometric_spectrum(config.d, config.ft_first, config.ft_ratio)
        k_u, k_v = jax.random.split(key)
        u, v = random_orthogonal(k_u, config.d), random_orthogonal(k_v, config.d)
        x = ot.mode_trajectory(
            pre, ft, learning_rate=config.learning_rate, reg=0.0, num_steps=steps
        )
        curves = ot.post_finetuning_losses(x**2, pre, ft)[0]  # (K+1, d+1)
        inflection = ot.inflection_point(curves)
        # GD on the matrices, recorded every step of the gcd grid of the plotted budgets
        record = int(np.gcd.reduce(every))
        thetas, _, _ = ot.finetune_ideal_checkpoints(
            pre, ft, u, v, learning_rate=config.learning_rate, num_steps=max(every),
            record_every=record,
        )  # fmt: skip
        a_pre = ot.task_matrix(pre, u, v)
        gd = jnp.sum((thetas - a_pre) ** 2, axis=(-2, -1))  # (n, records)
        gd = gd[:, jnp.asarray(every) // record].T  # (budgets, n)
        out = {
            "budget_grid": config.learning_rate * jnp.arange(steps + 1),
            "inflection_grid": inflection,
            "curves": curves[jnp.asarray(every)],
            "gd_curves": gd,
            "inflection": inflection[jnp.asarray(every)],
            "converged": ot.post_finetuning_losses(ft, pre, ft)[0],
            "initial": ot.post_finetuning_losses(pre, pre, ft)[0],
        }
        out = {name: np.asarray(value).tolist() for name, value in out.items()}
    return {**out, "budgets": list(config.budgets), "d": config.d}


def plot(results: dict):
    """Left: post-FT L_pre(n) per budget ηK. Right: inflection vs ηK."""
    import matplotlib.pyplot as plt

    d = results["d"]
    n = np.arange(d + 1)
    fig, (ax, ax_r) = plt.subplots(1, 2, figsize=(13.0, 4.8))
    colors = plt.cm.cividis(np.linspace(0.0, 0.9, len(results["budgets"])))
    for j, (budget, color) in enumerate(zip(results["budgets"], colors, strict=True)):
        curve = results["curves"][j]
        ax.plot(n, curve, color=color, label=f"ηK = {budget:g}")
        ax.plot(n, results["gd_curves"][j], "o", color=color, markersize=4)
        r = results["inflection"][j]
        if r < d:
            ax.plot(r, curve[r], "*", markersize=14, color=color, markeredgecolor="k")
    ax.plot(n, results["converged"], color="tab:red", linestyle="-.", label="ηK → ∞ (λ = 0)")
    ax.plot(n, results["initial"], "k--", label="pretrained, before FT")
    ax.plot([], [], "ko", markersize=4, label="GD on W1, W2 (m = ∞)")
    ax.set_yscale("log")
    ax.set_xlabel("checkpoint n (features learned)")
    ax.set_ylabel(r"$L_{pre}(\theta^n(K))$")
    ax.set_title("EXTENSION: early-stopped fine-tuning (λ = 0), budget ηK", fontsize=10)
    ax.legend(fontsize=8)
    ax_r.step(results["budget_grid"], results["inflection_grid"], where="post")
    ax_r.set_xlabel("fine-tuning budget ηK")
    ax_r.set_ylabel(f"inflection point (r = {d}: none)")
    ax_r.set_title("EXTENSION: longer fine-tuning ⇒ earlier inflection", fontsize=10)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
