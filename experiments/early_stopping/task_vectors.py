"""Task vectors of a fine-tuned attention model: cosine heatmap and multi-task performance (Fig. 3).

What is plotted (Sun & Raskutti 2026, Sec 7.2, Fig. 3, Cor 2). A small
attention block is pretrained on a synthetic source task
(:func:`ntsim.theory.early_stopping.pretrain_attention`) and fine-tuned separately, by
full-batch GD with step ``η_0/n`` (the real network, not its linearisation), on four target
tasks whose tokens lie on subspaces of ``ℝ^{d⁰}``: A and B share one subspace (different
teachers), C overlaps it in half of its directions, D lies on an orthogonal subspace.
Task vectors ``τ_t = θ_FT,t − θ_PT`` (eq. (22)). One seed is
:func:`ntsim.theory.early_stopping.trained_task_vectors` (``Config`` extends its
``TaskVectorSetting`` by ``seeds``); the claim
``early_stopping.cor2.trained_cosine_matches_kernel`` sweeps it over widths.

* Left: ``cos(τ_s, τ_t)`` of the trained network.
* Middle: the cross-task NTK alignment ``‖Θ(X_s, X_t)‖_F/√(‖Θ(X_s, X_s)‖_F‖Θ(X_t, X_t)‖_F)``
  at ``θ_PT`` (Cor 2: the cosine is controlled by the cross-task kernel block), and, in
  each cell, the linearised-model prediction of the cosine from kernel blocks alone,
  ``c_sᵀG_{st}c_t/√(c_sᵀG_{ss}c_s · c_tᵀG_{tt}c_t)`` (:func:`task_vector_cosine`).
* Right: normalised multi-task performance of ``θ_PT + Σ_t τ_t`` on each task,
  ``(MSE_PT − MSE_MT)/(MSE_PT − MSE_FT)`` on test inputs (1: as good as the task's own
  fine-tuned model; 0: no better than ``f_PT``), mean ± std over seeds. The paper normalises
  accuracy the same way (Ilharco et al. convention; not stated).

Run: ``ntsim run early_stopping/task_vectors [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import check_int_fields
from ntsim.theory import early_stopping as es

TASKS = ("A", "B (= A's subspace)", "C (half overlap)", "D (orthogonal)")


@dataclass(frozen=True)
class Config(es.TaskVectorSetting):
    """:class:`ntsim.theory.early_stopping.TaskVectorSetting` plus the number of seeds."""

    seeds: int = 3

    def __post_init__(self):
        super().__post_init__()
        check_int_fields(self, ("seeds",), minimum=2)  # a std band needs two seeds


SCALES = {
    "quick": Config(
        width=16, num_train=16, num_test=32, pretrain_steps=50, finetune_steps=50, seeds=2
    ),
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Per-seed cosines, alignments, predicted cosines and multi-task scores; their means."""
    keys = jax.random.split(key, config.seeds)
    runs = jax.jit(jax.vmap(lambda k: es.trained_task_vectors(k, config)))(keys)
    out = {k: np.asarray(v) for k, v in runs._asdict().items()}
    results = {"tasks": list(TASKS), "seeds": config.seeds, "width": config.width}
    for name, values in out.items():
        results[f"{name}_mean"] = values.mean(axis=0).tolist()
        results[f"{name}_std"] = values.std(axis=0, ddof=1).tolist()
    off = ~np.eye(4, dtype=bool)
    results["cosine_vs_predicted_max_gap"] = float(
        np.max(np.abs(out["cosine"] - out["predicted_cosine"])[:, off])
    )
    return results


def plot(results: dict):
    """Cosine heatmap, alignment heatmap with predicted cosines, normalised performance bars."""
    import matplotlib.pyplot as plt

    tasks = results["tasks"]
    short = [t.split(" ")[0] for t in tasks]
    fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.8))
    for ax, name, title, cells in (
        (axes[0], "cosine_mean", "cos(τ_s, τ_t), trained network", "cosine_mean"),
        (
            axes[1],
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
    ax = axes[2]
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
        f"θ_PT + Σ_t τ_t on each task (n = {results['width']}, mean ± std, "
        f"{results['seeds']} seeds)",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
