"""Thms 6 and 7 layer by layer: does adding layer l to head tuning change the risk as predicted?

What is computed (Rahimi Afzal et al. 2025, Thms 6–7). A tanh MLP pretrained on
``tanh(x·w_0)`` (as in ``kappa_predicts_finetuning``) is fine-tuned on related binary tasks
with the head trainable, alone or together with one hidden layer ``l``. The NTK is additive
over parameter blocks, so tuning head + layer ``l`` has the kernel ``K + S_l`` with ``K`` the
head's NTK and ``S_l`` layer ``l``'s, both at ``θ_0`` on the training inputs. Per layer:

* ``η_l = ‖K^{−1/2} S_l K^{−1/2}‖`` (Thm 6) and the eigenvalue ratios
  ``λ_i(K + S_l)/λ_i(K)``, which Thm 6 puts in ``[1 − η_l, 1 + η_l]`` (and Weyl above 1);
* Thm 7's interval ``[q/a, a·q]`` for ``(R(K + S_l)/R(K))^{1/2}``, ``a = κ(K + σI)/(1 − η_l)²``,
  ``q = λ_max(K + S_l + σI)/λ_max(K + σI)`` (valid for ``η_l < 1``), against the KRR risk
  ratio itself (residual targets ``y − f_{θ_0}``, ridge ``σ = λ/2``);
* the *actual* ratio ``(L_{head+l}/L_head)^{1/2}`` of final training MSEs after split-step
  GD with the proximal term ``λ`` (the step ``step_fraction/(2λ_max + λ)`` of each
  configuration's own kernel).

What is plotted: (a) per layer and task, Thm 7's interval (bar), the KRR ratio (circle) and
the trained ratio (cross), log scale, with ``η_l`` under each layer; (b) Thm 6: the
eigenvalue ratios against ``i`` with the band ``1 ± η_l``; (c) ``η_l`` per layer (log),
the line ``η = 1`` where Thm 7 stops applying.

Run: ``ntsim run linearization/per_layer_spectral [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.core import empirical_ntk_fn
from ntsim.experiment import Validated, param
from ntsim.theory import linearization as lz


@dataclass(frozen=True)
class Config(Validated):
    """Model, tasks and training as in ``kappa_predicts_finetuning`` (the slides give none)."""

    hidden: tuple[int, ...] = param(
        (64, 64, 64), "tanh MLP hidden widths (one layer l per entry)", low=1, shape=True
    )
    dim: int = param(8, "input dimension d", low=1, shape=True)
    num_pretrain: int = param(512, "pretraining samples of tanh(x·w_0)", low=1, shape=True)
    num_train: int = param(
        48, "< the head's fan-in: K = head NTK is positive definite", low=1,
        allowed="[1, hidden[-1]]", shape=True,
    )  # fmt: skip
    num_test: int = param(1000, "test inputs per task", low=1, shape=True)
    angles: tuple[float, ...] = param(
        (0.4, 0.8, 1.2), "task directions vs w_0 (radians)", shape=True
    )
    sigma: float = param(0.01, "ridge σ = λ/2 of the summed loss", low=0, open=True)
    proximal: float = param(0.02, "λ during fine-tuning", low=0)
    step_fraction: float = param(
        0.5, "η = step_fraction / (2λ_max + λ) of each configuration's NTK", low=0, high=1,
        open="low",
    )  # fmt: skip
    steps: int = param(2000, "split-step GD steps of fine-tuning", low=1, shape=True)
    record_every: int = param(
        100, "steps between recorded training losses (the last is used)", low=1,
        allowed="[1, steps]", shape=True,
    )  # fmt: skip
    pretrain_steps: int = param(2000, "full-batch GD steps of pretraining θ_0", low=0, shape=True)
    pretrain_lr: float = param(0.5, "GD step size of pretraining", low=0)

    def check(self):
        if self.num_train > self.hidden[-1]:
            raise ValueError(
                f"Config.num_train = {self.num_train} exceeds the head's fan-in "
                f"{self.hidden[-1]}: the head NTK K would be singular (η needs K ≻ 0)."
            )
        if self.record_every > self.steps:
            raise ValueError(
                f"Config.record_every must not exceed Config.steps = {self.steps}, got "
                f"{self.record_every}."
            )


SCALES = {
    "quick": Config(hidden=(16, 16), num_pretrain=128, num_train=12, num_test=150,
                    angles=(0.4, 1.0), steps=150, record_every=15, pretrain_steps=150),
    "full": Config(),
}  # fmt: skip


def _final_losses(config: Config, apply, theta0, paths, tasks) -> np.ndarray:
    """Final training MSE per task, tuning the subtrees at ``paths`` (split-step GD)."""
    sub_apply, sub0 = lz.subset_model(apply, theta0, paths)
    kernel = empirical_ntk_fn(sub_apply)(tasks.x_train, None, sub0)
    eta = config.step_fraction / (2 * float(np.linalg.eigvalsh(np.asarray(kernel))[-1])
                                  + config.proximal)  # fmt: skip

    def fit(y, y_test):
        return lz.fit_config(sub_apply, sub0, tasks.x_train, y, tasks.x_test, y_test,
                             proximal=config.proximal, learning_rate=eta,
                             num_steps=config.steps, record_every=config.record_every)  # fmt: skip

    return np.asarray(jax.jit(jax.vmap(fit))(tasks.y_train, tasks.y_test).train_loss)


def run(config: Config, key) -> dict:
    """Head vs head + layer ``l`` for every hidden layer: Thm 6/7 from the NTKs, then training."""
    k_data, k_model = jax.random.split(key)
    tasks, apply, theta0 = lz.pretrained_setup(k_data, k_model, config)
    blocks = empirical_ntk_fn(apply, per_block=True)(tasks.x_train, None, theta0)
    layer_kernel = [np.asarray(layer["w"] + layer["b"], np.float64) for layer in blocks["layers"]]
    head_path, head = ("layers", len(config.hidden)), layer_kernel[-1]
    residual = np.asarray(tasks.y_train) - np.asarray(lz.outputs(apply, theta0, tasks.x_train))
    head_loss = _final_losses(config, apply, theta0, [head_path], tasks)
    names = ("eta", "thm6_ratio", "thm6_inside", "thm7_lower", "krr_ratio", "thm7_upper",
             "trained_ratio", "loss_head_plus_layer")  # fmt: skip
    out = {name: [] for name in names}
    for layer in range(len(config.hidden)):
        extra = layer_kernel[layer]
        thm6 = lz.thm6_bounds(head, extra)
        eta = float(thm6.eta)
        ratio = np.asarray(thm6.value) / np.asarray(thm6.base)
        slack = 1e-9 * np.abs(np.asarray(thm6.base)).max()
        inside = (np.asarray(thm6.lower) - slack <= thm6.value) & (
            thm6.value <= np.asarray(thm6.upper) + slack
        )
        thm7 = [lz.thm7_bounds(head, extra, r, config.sigma)[0] for r in residual]
        loss = _final_losses(config, apply, theta0, [head_path, ("layers", layer)], tasks)
        out["eta"].append(eta)
        out["thm6_ratio"].append(ratio.tolist())
        out["thm6_inside"].append(float(np.mean(inside)))
        out["thm7_lower"].append([float(b.lower) for b in thm7])
        out["krr_ratio"].append([float(b.value) for b in thm7])
        out["thm7_upper"].append([float(b.upper) for b in thm7])
        out["trained_ratio"].append(np.sqrt(loss / head_loss).tolist())
        out["loss_head_plus_layer"].append(loss.tolist())
    krr, trained = np.asarray(out["krr_ratio"]), np.asarray(out["trained_ratio"])
    return {
        "layers": list(range(len(config.hidden))),
        "angles": list(config.angles),
        "sigma": config.sigma,
        "loss_head": head_loss.tolist(),
        "krr_trained_spearman": lz.spearman(np.log(krr).ravel(), np.log(trained).ravel()),
        **out,
    }


def plot(results: dict):
    """(a) Thm 7 intervals vs KRR and trained ratios, (b) Thm 6 eigenvalue ratios, (c) η_l."""
    import matplotlib.pyplot as plt

    layers, angles = results["layers"], results["angles"]
    fig, axes = plt.subplots(1, 3, figsize=(16.0, 4.8))
    ax = axes[0]
    width = 0.8 / len(angles)
    for t, angle in enumerate(angles):
        pos = np.asarray(layers) + (t - (len(angles) - 1) / 2) * width
        lower = np.asarray(results["thm7_lower"])[:, t]
        upper = np.asarray(results["thm7_upper"])[:, t]
        valid = np.asarray(results["eta"]) < 1
        ax.vlines(pos[valid], lower[valid], upper[valid], color="0.6", linewidth=6, alpha=0.6,
                  label="Thm 7 interval (η < 1)" if t == 0 else None)  # fmt: skip
        ax.scatter(pos, np.asarray(results["krr_ratio"])[:, t], marker="o", color=f"C{t}",
                   label=f"KRR ratio, task {angle:g} rad")  # fmt: skip
        ax.scatter(pos, np.asarray(results["trained_ratio"])[:, t], marker="x", color=f"C{t}",
                   s=60, label=f"trained ratio, task {angle:g} rad")  # fmt: skip
    ax.axhline(1.0, color="k", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(layers, [f"layer {i}\nη = {e:.3g}" for i, e in zip(layers, results["eta"],
                                                                     strict=True)])  # fmt: skip
    ax.set_ylabel("(risk with head + layer / risk with head)^1/2")
    ax.set_title(f"(a) Thm 7 per layer; ρ(KRR, trained) = {results['krr_trained_spearman']:+.2f}",
                 fontsize=9)  # fmt: skip
    ax.legend(fontsize=6)
    ax = axes[1]
    for layer, (ratio, eta) in enumerate(zip(results["thm6_ratio"], results["eta"], strict=True)):
        index = np.arange(1, len(ratio) + 1)
        ax.plot(index, ratio, color=f"C{layer}", label=f"layer {layer}: λ_i(K+S)/λ_i(K)")
        ax.axhline(1 + eta, color=f"C{layer}", linestyle="--", linewidth=0.8)
    ax.axhline(1.0, color="k", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("eigenvalue index i (ascending)")
    ax.set_title("(b) Thm 6: ratios inside [1 − η, 1 + η] (dashed: 1 + η)", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[2]
    ax.bar(layers, results["eta"])
    ax.axhline(1.0, color="r", linestyle="--", label="η = 1 (Thm 7 needs η < 1)")
    ax.set_yscale("log")
    ax.set_xticks(layers, [f"layer {i}" for i in layers])
    ax.set_ylabel("η_l = ‖K^{-1/2} S_l K^{-1/2}‖")
    ax.set_title("(c) size of each layer's NTK relative to the head's", fontsize=9)
    ax.legend(fontsize=8)
    fig.suptitle("Adding one layer to head tuning: Thms 6–7 against KRR and training "
                 "(Rahimi Afzal et al. 2025)")  # fmt: skip
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
