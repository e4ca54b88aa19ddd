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

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import check_int_fields
from ntsim.theory import linearization as lz


@dataclass(frozen=True)
class Config:
    """Model, tasks, configurations, and training (the slides give no hyperparameters)."""

    hidden: tuple[int, ...] = (64, 64)
    dim: int = 8
    num_pretrain: int = 512
    num_train: int = 64
    num_test: int = 1000
    angles: tuple[float, ...] = (0.4, 0.8, 1.2)
    configs: tuple[str, ...] = ("head", "layer0", "layer1", "lora1", "lora2", "lora4", "lora8")
    sigma: float = 0.01  # ridge in κ(K + σI) (σ = λ/2 of the summed loss)
    proximal: float = 0.02  # λ during fine-tuning
    step_rule: str = "normalised"  # "normalised" or "fixed"
    step_fraction: float = 0.5
    fixed_learning_rate: float = 1e-3  # η for step_rule="fixed"
    steps: int = 2000
    record_every: int = 100
    pretrain_steps: int = 2000
    pretrain_lr: float = 0.5

    def __post_init__(self):
        names = ("dim", "num_pretrain", "num_train", "num_test", "steps", "record_every")
        check_int_fields(self, names)
        check_int_fields(self, ("pretrain_steps",), minimum=0)
        if self.step_rule not in ("normalised", "fixed"):
            raise ValueError(
                f"Config.step_rule must be 'normalised' or 'fixed', got {self.step_rule!r}."
            )
        if len(self.configs) < 3:
            raise ValueError(f"Config.configs needs at least 3 entries, got {self.configs}.")
        if self.sigma < 0 or self.proximal < 0:
            raise ValueError(f"Config.sigma and proximal must be >= 0, got {self}.")
        if not 0 < self.step_fraction <= 1 or self.fixed_learning_rate <= 0:
            raise ValueError("Config.step_fraction in (0, 1] and fixed_learning_rate > 0 needed.")
        if self.record_every > self.steps:
            raise ValueError("Config.record_every must not exceed Config.steps.")


SCALES = {
    "quick": Config(
        hidden=(16, 16),
        num_pretrain=128,
        num_train=16,
        num_test=150,
        angles=(0.4, 1.0),
        configs=("head", "layer0", "lora2"),
        steps=150,
        record_every=15,
        pretrain_steps=150,
    ),
    "full": Config(),
}


def _rho(a, b):
    """Spearman's ρ, or ``None`` when undefined (a constant series, e.g. equal accuracies)."""
    value = lz.spearman(a, b)
    return None if np.isnan(value) else value


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def run(config: Config, key) -> dict:
    """κ of both kernels at θ_0 per configuration, then one fine-tuning run per (config, task)."""
    k_data, k_model, k_lora = jax.random.split(key, 3)
    tasks, apply, theta0 = lz.pretrained_setup(k_data, k_model, config)
    targets = [("layers", i, "w") for i in range(len(config.hidden))]
    out = {
        name: [] for name in ("kappa_ntk", "kappa_sign", "lambda_max", "lambda_min", "num_params")
    }
    out.update(loss_curves=[], train_loss=[], accuracy=[], learning_rate=[])
    for name in config.configs:  # static axis: parameter shapes differ between configurations
        peft = lz.peft_model(apply, theta0, name, key=k_lora, lora_targets=targets)
        ntk, sign = lz.peft_kernels(peft, tasks.x_train)
        evals = np.linalg.eigvalsh(np.asarray(ntk))
        eta = (
            config.step_fraction / (2 * evals[-1] + config.proximal)
            if config.step_rule == "normalised"
            else config.fixed_learning_rate
        )

        def fit(y, y_test, peft=peft, eta=eta):
            return lz.fit_config(
                peft.apply,
                peft.params0,
                tasks.x_train,
                y,
                tasks.x_test,
                y_test,
                proximal=config.proximal,
                learning_rate=eta,
                num_steps=config.steps,
                record_every=config.record_every,
            )

        result = jax.jit(jax.vmap(fit))(tasks.y_train, tasks.y_test)
        out["kappa_ntk"].append(float(lz.kernel_condition_number(ntk, config.sigma)))
        out["kappa_sign"].append(float(lz.kernel_condition_number(sign, config.sigma)))
        out["lambda_max"].append(float(evals[-1]))
        out["lambda_min"].append(float(evals[0]))
        out["num_params"].append(int(sum(np.size(a) for a in jax.tree.leaves(peft.params0))))
        out["loss_curves"].append(np.asarray(result.loss_curve).tolist())
        out["train_loss"].append(np.asarray(result.train_loss).tolist())
        out["accuracy"].append(np.asarray(result.accuracy).tolist())
        out["learning_rate"].append(float(eta))
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
    return {
        "configs": list(config.configs),
        "angles": list(config.angles),
        "step_rule": config.step_rule,
        "sigma": config.sigma,
        "steps": steps.tolist(),
        "spearman": correlations,
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
