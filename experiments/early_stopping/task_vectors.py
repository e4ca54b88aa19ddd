"""Task vectors of a fine-tuned attention model: cosine heatmap, multi-task performance and
the kernel prediction over widths (Fig. 3, Cor 2).

What is plotted (Sun & Raskutti 2026, Sec 7.2, Fig. 3, Cor 2). A small
attention block is pretrained on a synthetic source task
(:func:`ntsim.theory.early_stopping.pretrain_attention`) and fine-tuned separately, by
full-batch GD (the real network, not its linearisation), on four target tasks whose
tokens lie on subspaces of ``ℝ^{d⁰}``: A and B share one subspace (different teachers), C
overlaps it in half of its directions, D lies on an orthogonal subspace. Task vectors
``τ_t = θ_FT,t − θ_PT`` (eq. (22)). The runs are the claims' simulations with the claims'
settings: :func:`ntsim.theory.early_stopping.simulate_trained_task_vectors` over widths ×
seeds (``es.TRAINED_TASK_VECTOR_SETTINGS``; claim
``early_stopping.cor2.trained_cosine_matches_kernel``) and
:func:`ntsim.theory.early_stopping.simulate_linear_task_vectors`
(``es.LINEAR_TASK_VECTOR_SETTINGS``; claim ``early_stopping.cor2.cross_kernel_cosine``).

* Top left: ``cos(τ_s, τ_t)`` of the trained network at the largest width (mean over seeds).
* Top middle: the cross-task NTK alignment ``‖Θ(X_s, X_t)‖_F/√(‖Θ(X_s, X_s)‖_F‖Θ(X_t,
  X_t)‖_F)`` at ``θ_PT`` (Cor 2: the cosine is controlled by the cross-task kernel block),
  and, in each cell, the linearised-model prediction of the cosine from kernel blocks
  alone, ``c_sᵀG_{st}c_t/√(c_sᵀG_{ss}c_s · c_tᵀG_{tt}c_t)`` (:func:`task_vector_cosine`).
* Top right: normalised multi-task performance of ``θ_PT + Σ_t τ_t`` on each task,
  ``(MSE_PT − MSE_MT)/(MSE_PT − MSE_FT)`` on test inputs (1: as good as the task's own
  fine-tuned model; 0: no better than ``f_PT``), mean ± std over seeds. The paper normalises
  accuracy the same way (Ilharco et al. convention; not stated).
* Bottom left: ``max_{s≠t}|cos(τ_s, τ_t) − predicted|`` against the width (per seed and
  mean), the quantity the Cor 2 claim decides.
* Bottom middle: the linearised model on random Jacobians: scanned-GD cosine against the
  kernel formula (exact there).
* Bottom right: the prediction's step condition ``ε λ_max(G_tt)/N`` per width and seed.

Run: ``ntsim run early_stopping/task_vectors [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import early_stopping as es

TASKS = ("A", "B (= A's subspace)", "C (half overlap)", "D (orthogonal)")


@dataclass(frozen=True)
class Config(Validated):
    """The claims' settings: trained task vectors over widths × seeds, linearised model."""

    trained: es.TaskVectorSweepSetting = param(
        es.TRAINED_TASK_VECTOR_SETTINGS["full"],
        "trained network: attention block fine-tuned by GD on tasks A–D, over widths × seeds",
    )
    linear: es.LinearTaskVectorSetting = param(
        es.LINEAR_TASK_VECTOR_SETTINGS["full"],
        "linearised model on random Jacobians: GD task-vector cosine vs the kernel formula",
    )


SCALES = {
    "quick": Config(
        trained=es.TRAINED_TASK_VECTOR_SETTINGS["quick"],
        linear=es.LINEAR_TASK_VECTOR_SETTINGS["quick"],
    ),
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Trained task vectors per width and seed; linearised-model cosines against the kernel."""
    k_trained, k_linear = jax.random.split(key)
    sweep = shared_run(es.simulate_trained_task_vectors, k_trained, config.trained)
    with jax.enable_x64(True):  # the linearised model is checked in float64 (the claims')
        linear = shared_run(es.simulate_linear_task_vectors, k_linear, config.linear)
        cos_scan, cos_kernel = np.asarray(linear.cosine), np.asarray(linear.cosine_kernel)
    out = {k: np.asarray(v) for k, v in sweep.runs._asdict().items()}  # (W, S, ...)
    off = ~np.eye(es.NUM_TASKS, dtype=bool)
    gap = np.abs(out["cosine"] - out["predicted_cosine"])[..., off].max(axis=-1)  # (W, S)
    results = {
        "tasks": list(TASKS),
        "widths": np.asarray(sweep.widths).tolist(),
        "seeds": config.trained.num_seeds,
        "gap": gap.tolist(),
        "max_kernel_step": out["max_kernel_step"].tolist(),
        "linear_cosine": cos_scan.tolist(),
        "linear_cosine_kernel": cos_kernel.tolist(),
        "linear_max_cosine_error": float(np.max(np.abs(cos_scan - cos_kernel))),
    }
    for name in ("cosine", "predicted_cosine", "alignment", "normalised"):
        values = out[name][-1]  # the largest width, (S, ...)
        results[f"{name}_mean"] = values.mean(axis=0).tolist()
        results[f"{name}_std"] = values.std(axis=0, ddof=1).tolist()
    return results


def plot(results: dict):
    """Heatmaps and multi-task bars at the largest width; gap vs width; linearised model."""
    import matplotlib.pyplot as plt

    tasks = results["tasks"]
    short = [t.split(" ")[0] for t in tasks]
    widths = np.asarray(results["widths"])
    fig, axes = plt.subplots(2, 3, figsize=(16.0, 9.6))
    for ax, name, title, cells in (
        (
            axes[0, 0],
            "cosine_mean",
            f"cos(τ_s, τ_t), trained network, n = {widths[-1]}",
            "cosine_mean",
        ),
        (
            axes[0, 1],
            "alignment_mean",
            "cross-NTK alignment at θ_PT\n(cells: linearised-model predicted cosine)",
            "predicted_cosine_mean",
        ),
    ):
        data = np.asarray(results[name])
        cosine = name == "cosine_mean"
        image = ax.imshow(
            data, vmin=-1 if cosine else 0, vmax=1, cmap="RdBu_r" if cosine else "Reds"
        )
        for s in range(4):
            for t in range(4):
                value = results[cells][s][t]
                ax.text(t, s, f"{value:.2f}", ha="center", va="center", fontsize=9)
        ax.set_xticks(range(4), short)
        ax.set_yticks(range(4), short)
        ax.set_title(title, fontsize=10)
        fig.colorbar(image, ax=ax, fraction=0.046)
    ax = axes[0, 2]
    ax.bar(
        range(4),
        results["normalised_mean"],
        yerr=results["normalised_std"],
        capsize=4,
        color="tab:blue",
    )
    ax.axhline(1.0, color="black", linestyle=":", label="individually fine-tuned model")
    ax.set_xticks(range(4), tasks, fontsize=8, rotation=15)
    ax.set_ylabel("(MSE_PT − MSE_MT) / (MSE_PT − MSE_FT)")
    ax.set_title(
        f"θ_PT + Σ_t τ_t on each task (n = {widths[-1]}, mean ± std, {results['seeds']} seeds)",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="lower right")

    ax = axes[1, 0]
    gap = np.asarray(results["gap"])  # (W, S)
    ax.plot(widths, gap, color="tab:gray", alpha=0.3, linewidth=0.8)
    ax.plot(widths, gap.mean(axis=1), "o-", color="tab:blue", label="mean over seeds")
    for power, style in ((0.5, "--"), (1.0, ":")):
        ref = gap.mean(axis=1)[0] * (widths / widths[0]) ** -power
        ax.plot(widths, ref, style, color="black", label=f"∝ n^-{power:g}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.set_yscale("log")
    ax.set_xlabel("width n")
    ax.set_ylabel("max_{s≠t} |cos(τ_s, τ_t) − predicted|")
    ax.set_title("trained vs kernel-predicted cosine (grey: seeds)", fontsize=10)
    ax.legend(fontsize=8)

    ax = axes[1, 1]
    scan, kernel = results["linear_cosine"], results["linear_cosine_kernel"]
    ax.scatter(kernel, scan, s=8, alpha=0.6, color="tab:purple")
    ax.plot([-1, 1], [-1, 1], color="black", linestyle=":", linewidth=0.8)
    ax.set_xlabel("c_1ᵀG_12c_2 / √(c_1ᵀG_11c_1 · c_2ᵀG_22c_2)")
    ax.set_ylabel("cos(τ_1, τ_2), GD scan")
    ax.set_title(
        f"linearised model, {len(scan)} random instances "
        f"(max error {results['linear_max_cosine_error']:.1e})",
        fontsize=10,
    )

    ax = axes[1, 2]
    steps = np.asarray(results["max_kernel_step"])  # (W, S)
    for i, width in enumerate(widths):
        ax.scatter(np.full(steps.shape[1], width), steps[i], s=12, alpha=0.6, color="tab:green")
    ax.axhline(1.0, color="tab:red", linestyle="--", label="condition ε λ_max/N ≤ 1")
    ax.set_xscale("log", base=2)
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("width n")
    ax.set_ylabel("max_t ε λ_max(G_tt)/N")
    ax.set_title("the prediction's step condition per seed", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
