"""Does κ(K + σI) of the NTK at θ_0 predict fine-tuning? PEFT configurations on synthetic tasks.

What is plotted (Rahimi Afzal et al. 2025, condition-number experiment; Thm 5,
Figs. 3–5). A tanh MLP pretrained on ``tanh(x·w_0)`` is fine-tuned on several related
binary tasks with different parameter-efficient configurations: one layer, the head only,
or LoRA of rank ``r ∈ {1, 2, 4, 8}`` on the hidden weights. Before training, the empirical
NTK ``K = JJᵀ`` and the sign (Adam-style) kernel ``J sign(J)ᵀ`` of the trainable
parameters at ``θ_0`` give ``κ(K + σI)`` (singular values for the asymmetric sign kernel).
Each configuration is then trained by split-step GD on the summed squared loss. Panels:
(a) training loss curves; (b) κ per configuration (log); (c, d) κ against final training
loss and test accuracy, with Spearman's ρ over (configuration, task) pairs, for both
kernels. Two step-size rules: ``"normalised"`` (η = step_fraction/(2λ_max(K) + λ), the
largest stable step of each configuration, so the slowest eigenmode contracts at a rate
∝ 1/κ — the mechanism behind Thm 5's upper bound) and ``"fixed"`` (one η for all).

Run: ``ntsim run linearization/kappa_predicts_finetuning [--scale full]`` or this file.
"""

from __future__ import annotations

import numpy as np

from ntsim.experiment import shared_run
from ntsim.theory import linearization as lz

#: The experiment's configuration is the simulation's setting (the claim
#: ``linearization.kappa.predicts_train_loss`` reads the same simulation).
Config = lz.KappaSetting

SCALES = lz.KAPPA_SCALES


def _rho(a, b):
    """Spearman's ρ, or ``None`` when undefined (a constant series, e.g. equal accuracies)."""
    value = lz.spearman(a, b)
    return None if np.isnan(value) else value


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def run(config: Config, key) -> dict:
    """:func:`ntsim.theory.linearization.simulate_kappa`; the panels show replicate 0, the
    correlations every replicate."""
    sim = shared_run(lz.simulate_kappa, key, config)
    r0 = 0
    out = {
        "kappa_ntk": np.asarray(sim.kappa_ntk[r0]).tolist(),
        "kappa_sign": np.asarray(sim.kappa_sign[r0]).tolist(),
        "lambda_max": np.asarray(sim.lambda_max[r0]).tolist(),
        "lambda_min": np.asarray(sim.lambda_min[r0]).tolist(),
        "num_params": np.asarray(sim.num_params).tolist(),
        "loss_curves": np.asarray(sim.loss_curves[r0]).tolist(),
        "train_loss": np.asarray(sim.train_loss[r0]).tolist(),
        "accuracy": np.asarray(sim.accuracy[r0]).tolist(),
        "learning_rate": np.asarray(sim.learning_rate[r0]).tolist(),
    }
    num_tasks = len(config.angles)
    correlations = {}
    for kernel in ("kappa_ntk", "kappa_sign"):
        kappa = np.repeat(np.asarray(out[kernel]), num_tasks)
        for metric in ("train_loss", "accuracy"):
            values = np.asarray(out[metric]).ravel()
            correlations[f"{kernel}_vs_{metric}"] = _rho(np.log(kappa), values)
            correlations[f"{kernel}_vs_{metric}_per_task"] = [
                _rho(np.asarray(out[kernel]), np.asarray(out[metric])[:, t])
                for t in range(num_tasks)
            ]
    steps = np.arange(0, config.steps + 1, config.record_every)[: len(out["loss_curves"][0][0])]
    per_replicate = lz.loss_rank_correlations(sim, "kappa_ntk")
    return {
        "configs": list(config.configs),
        "angles": list(config.angles),
        "step_rule": config.step_rule,
        "sigma": config.sigma,
        "steps": steps.tolist(),
        "spearman": correlations,
        "spearman_ntk_loss_per_replicate": [
            None if np.isnan(v) else float(v) for v in per_replicate
        ],  # fmt: skip
        **out,
    }


def plot(results: dict):
    """(a) loss curves, (b) κ per configuration, (c, d) κ vs final loss / accuracy with ρ."""
    import matplotlib.pyplot as plt

    configs, angles = results["configs"], results["angles"]
    fig, axes = plt.subplots(2, 3, figsize=(16.0, 8.5))
    ax = axes[0, 0]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for c, name in enumerate(configs):
        for t in range(len(angles)):
            ax.plot(
                results["steps"],
                results["loss_curves"][c][t],
                color=colors[c % len(colors)],
                linestyle=("-", "--", ":", "-.")[t % 4],
                label=f"{name} (κ = {results['kappa_ntk'][c]:.3g})" if t == 0 else None,
            )
    ax.set_yscale("log")
    ax.set_xlabel("GD step")
    ax.set_ylabel("training MSE")
    ax.set_title(f"(a) train loss; line style = task ({results['step_rule']} step)", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    pos = np.arange(len(configs))
    ax.bar(pos - 0.2, results["kappa_ntk"], width=0.4, label="NTK JJᵀ")
    ax.bar(pos + 0.2, results["kappa_sign"], width=0.4, label="sign kernel J sign(J)ᵀ")
    ax.set_yscale("log")
    ax.set_xticks(pos, configs)
    ax.set_ylabel(f"κ(K + σI) at θ_0, σ = {results['sigma']:g}")
    ax.set_title("(b) condition number before fine-tuning", fontsize=9)
    ax.legend(fontsize=8)
    axes[0, 2].axis("off")
    rho = results["spearman"]
    text = ["Spearman ρ over (config, task) pairs:"]
    text += [f"  {k}: {_fmt(v)}" for k, v in rho.items() if not k.endswith("per_task")]
    text += ["", "per task:"]
    text += [
        f"  {k[:-9]}: " + ", ".join(_fmt(v) for v in vals)
        for k, vals in rho.items()
        if k.endswith("per_task")
    ]
    reps = [v for v in results.get("spearman_ntk_loss_per_replicate", []) if v is not None]
    if reps:
        text += [
            "",
            f"ρ_NTK(loss) over {len(reps)} replicates:",
            f"  mean {np.mean(reps):+.2f}, range [{min(reps):+.2f}, {max(reps):+.2f}]",
        ]
    text += ["", "paper: higher κ → higher train loss,", "lower accuracy (no ρ reported)"]
    axes[0, 2].text(0.0, 1.0, "\n".join(text), family="monospace", fontsize=8, va="top")
    for col, (metric, ylabel) in enumerate(
        (("train_loss", "final training MSE"), ("accuracy", "test accuracy"))
    ):
        ax = axes[1, col]
        for kernel, marker, label in (("kappa_ntk", "o", "NTK"), ("kappa_sign", "s", "sign")):
            for t, angle in enumerate(angles):
                ax.scatter(
                    results[kernel],
                    np.asarray(results[metric])[:, t],
                    marker=marker,
                    alpha=0.7,
                    label=f"{label}, task {angle:g} rad",
                )
        ax.set_xscale("log")
        if metric == "train_loss":
            ax.set_yscale("log")
        ax.set_xlabel("κ(K + σI) at θ_0")
        ax.set_ylabel(ylabel)
        ax.set_title(
            f"({'cd'[col]}) ρ_NTK = {_fmt(rho[f'kappa_ntk_vs_{metric}'])}, "
            f"ρ_sign = {_fmt(rho[f'kappa_sign_vs_{metric}'])}",
            fontsize=9,
        )
        ax.legend(fontsize=6)
    ax = axes[1, 2]
    ax.scatter(results["num_params"], results["kappa_ntk"])
    for c, name in enumerate(configs):
        ax.annotate(name, (results["num_params"][c], results["kappa_ntk"][c]), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trainable parameters")
    ax.set_ylabel("κ(K + σI) (NTK)")
    ax.set_title("(e) κ against configuration size", fontsize=9)
    fig.suptitle("κ of the NTK at θ_0 as a predictor of fine-tuning (Rahimi Afzal et al. 2025)")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
