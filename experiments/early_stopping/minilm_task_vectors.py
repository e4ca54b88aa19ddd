"""Task vectors of a real checkpoint: measured cosines against Cor 2, and task addition (Sec 7.2).

What is computed (:func:`~ntsim.theory.early_stopping.minilm.simulate_minilm_task_vectors`): per
seed, ``θ_PT`` = a MiniLM encoder (``minilm-l3`` quick, ``minilm-l6`` full) with one random
scalar head, fine-tuned separately (all parameters, full-batch GD on the squared loss,
``steps`` steps of ``α = step_fraction/max_i λ̂_max(Θ_ii/N)``) on each task:

* ``rotten_tomatoes`` — review sentiment, fresh vs rotten;
* ``tweets`` — tweet sentiment, positive vs negative;
* ``long_sentence`` — the review snippets labelled by their own length (above the median
  word count or not): a task defined by the inputs alone.

``τ_i = θ_i − θ_PT`` (eq. (22)). Measured ``cos(τ_i, τ_j)`` (float64 over all parameters)
beside Cor 2's prediction for the same GD run from the NTK blocks at ``θ_PT``
(``τ_i = J_iᵀc_i``; :func:`ntsim.theory.early_stopping.minilm.kernel_predicted_cosines`), and the
test accuracy of ``θ_PT + Σ_i τ_i`` on each task divided by that of ``θ_i`` (Sec 7.2's
"normalised accuracy", Fig 3 right).

What is plotted: left, measured against predicted cosine for every pair and seed; middle,
the mean measured cosine matrix (Fig 3 left's heatmap); right, test accuracy per task of
``θ_PT``, ``θ_i`` and the sum, with the normalised accuracy written above.

Claims: ``early_stopping.minilm.cosine_matches_kernel`` (derived, refuted: the measured cosines
sit above the prediction) and its twin ``.cosine_order_matches_kernel`` read the same
simulation with the same settings.

Run: ``ntsim run early_stopping/minilm_task_vectors [--scale full]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ntsim.core import mean_ci
from ntsim.experiment import Validated, param, shared_run
from ntsim.run_cache import disk_memo
from ntsim.theory.early_stopping import minilm


@dataclass(frozen=True)
class Config(Validated):
    """The paper: GPT-Neo-1.3B on CR, SentEval-CR, MRPC, RTE; everything here is ours."""

    checkpoint: str = param(
        "minilm-l6", "shipped MiniLM encoder", choices=("minilm-l3", "minilm-l6"), shape=True
    )
    tasks: tuple[str, ...] = param(minilm.MINILM_TASKS, "tasks (≥ 2)", choices=minilm.MINILM_TASKS)
    train_size: int = param(64, "training sentences per task", low=1, shape=True)
    test_size: int = param(128, "test sentences per task", low=1, shape=True)
    max_length: int = param(32, "tokens per sentence", low=2, shape=True)
    seeds: int = param(5, "draws of sentences and head", low=1)
    steps: int = param(100, "GD steps per task", low=1, shape=True)
    step_fraction: float = param(0.5, "α = step_fraction/max_i λ̂_max(Θ_ii/N)", low=0, high=1,
                                 open="low")  # fmt: skip
    ntk_batch: int = param(16, "sentences per NTK tile (memory)", low=1, shape=True)
    run_cache: str = param("", 'directory keeping each finished seed; "" = none')

    def setting(self) -> minilm.MiniLMTaskVectorSetting:
        fields = minilm.MiniLMTaskVectorSetting.__dataclass_fields__
        return minilm.MiniLMTaskVectorSetting(**{k: getattr(self, k) for k in fields})


SCALES = {
    "quick": Config(checkpoint="minilm-l3", train_size=12, test_size=24, max_length=12, seeds=2,
                    steps=20, ntk_batch=12),
    "full": Config(run_cache="figures/early_stopping/minilm_runs/task_vectors"),
}  # fmt: skip


def run(config: Config, key) -> dict:
    """Cosines (measured, predicted) and accuracies per seed, with means and CIs."""
    setting = config.setting()
    out = shared_run(
        minilm.simulate_minilm_task_vectors,
        key,
        setting,
        memo=lambda k: disk_memo(config.run_cache, setting, k),
    )
    results = {name: np.asarray(value).tolist() for name, value in out._asdict().items()}
    upper = np.triu_indices(len(config.tasks), 1)
    gap = np.abs(out.measured_cosine - out.predicted_cosine)[:, upper[0], upper[1]].ravel()
    results.update(
        checkpoint=config.checkpoint,
        tasks=list(config.tasks),
        seeds=config.seeds,
        mean_abs_cosine_gap=float(gap.mean()),
        max_abs_cosine_gap=float(gap.max()),
    )
    if config.seeds >= 2:
        mean, (lo, hi) = mean_ci(out.normalised_accuracy)
        results["normalised_accuracy_mean"] = np.asarray(mean).tolist()
        results["normalised_accuracy_ci"] = np.stack([lo, hi], axis=1).tolist()
    print(f"|measured − predicted cos|: mean {gap.mean():.3f}, max {gap.max():.3f}; normalised "
          f"accuracy per task {np.round(out.normalised_accuracy.mean(0), 3).tolist()}",
          flush=True)  # fmt: skip
    return results


def plot(results: dict):
    """Measured vs predicted cosines, the cosine heatmap, accuracies per task."""
    import matplotlib.pyplot as plt

    tasks = results["tasks"]
    measured = np.asarray(results["measured_cosine"])
    predicted = np.asarray(results["predicted_cosine"])
    fig, (ax, ax_heat, ax_acc) = plt.subplots(1, 3, figsize=(16.0, 4.8))
    upper = np.triu_indices(len(tasks), 1)
    for i, j in zip(*upper, strict=True):
        ax.plot(predicted[:, i, j], measured[:, i, j], "o", label=f"{tasks[i]} · {tasks[j]}")
    lim = max(0.1, float(np.abs(np.concatenate([measured[:, *upper], predicted[:, *upper]])).max()))
    ax.plot([-lim, lim], [-lim, lim], color="gray", linestyle=":", label="measured = predicted")
    ax.set_xlabel("cos(τ_i, τ_j) predicted from the NTK at θ_PT (Cor 2)")
    ax.set_ylabel("cos(τ_i, τ_j) of the fine-tuned network")
    ax.set_title(f"{results['checkpoint']}: each point one seed; mean |gap| = "
                 f"{results['mean_abs_cosine_gap']:.3f}", fontsize=10)  # fmt: skip
    ax.legend(fontsize=7)
    image = ax_heat.imshow(measured.mean(0), vmin=-1, vmax=1, cmap="RdBu_r")
    for i in range(len(tasks)):
        for j in range(len(tasks)):
            ax_heat.text(j, i, f"{measured.mean(0)[i, j]:.2f}", ha="center", va="center")
    ax_heat.set_xticks(range(len(tasks)), tasks, rotation=20, fontsize=8)
    ax_heat.set_yticks(range(len(tasks)), tasks, fontsize=8)
    ax_heat.set_title(f"measured cosine, mean over {results['seeds']} seeds (Fig 3 left)",
                      fontsize=10)  # fmt: skip
    fig.colorbar(image, ax=ax_heat, fraction=0.046)
    x = np.arange(len(tasks))
    width = 0.27
    bars = (("accuracy_pretrained", "θ_PT"),
            ("accuracy_finetuned", "θ_i (fine-tuned on the task)"),
            ("accuracy_multitask", "θ_PT + Σ τ (task addition)"))  # fmt: skip
    for k, (name, label) in enumerate(bars):
        values = 100 * np.asarray(results[name])
        ax_acc.bar(x + (k - 1) * width, values.mean(0), width, yerr=values.std(0), capsize=2,
                   label=label)  # fmt: skip
    normalised = np.asarray(results["normalised_accuracy"]).mean(0)
    for i, value in enumerate(normalised):
        ax_acc.text(i, 102, f"{value:.2f}", ha="center", fontsize=8)
    ax_acc.axhline(50, color="gray", linestyle=":", linewidth=0.8)
    ax_acc.set_ylim(0, 110)
    ax_acc.set_xticks(x, tasks, rotation=20, fontsize=8)
    ax_acc.set_ylabel("test accuracy (%), mean ± std over seeds")
    ax_acc.set_title("task addition; above: normalised accuracy (Fig 3 right)", fontsize=10)
    ax_acc.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
