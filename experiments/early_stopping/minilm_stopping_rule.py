"""The kernel stopping rule T̂ on a real checkpoint against the test-optimal step (Secs 3.5, 6).

What is computed (:func:`~ntsim.theory.early_stopping.minilm.simulate_minilm_stopping_rule`): per
seed, a MiniLM encoder (``minilm-l3`` quick, ``minilm-l6`` full) with a random scalar head
is ``θ_PT``; a fresh draw of training (``sizes``, nested), validation and test sentences of
one task (labels ``±1``); the NTK ``Θ`` of all parameters on all of them. Per size ``N``:

* ``T̂``: eq. (11)'s data-dependent rule (corrected ``C_H`` exponent) on ``K = Θ/N`` with the
  plug-ins ``σ̂²`` = the least validation MSE of linearised GD and ``Ĉ_H`` = the RKHS norm
  of linearised GD's increment at that step (:func:`ntsim.theory.early_stopping.minilm.
  plug_in_stopping_time`: the data give neither ``σ`` nor ``C_H``);
* the test-optimal step of (a) linearised GD on ``Θ`` (closed form) and (b) full
  fine-tuning of every parameter by full-batch GD on the same loss, at the same step
  ``α = step_fraction/λ̂_max(Θ/N)``, read on a grid of ``eval_every`` steps.

What is plotted: left, the test MSE curves of (a) and (b) per size (mean over seeds) with
``T̂`` marked; right, ``T̂`` against the two test-optimal steps, per size and seed.

Run: ``ntsim run early_stopping/minilm_stopping_rule [--scale full]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.run_cache import disk_memo
from ntsim.theory.early_stopping import minilm


@dataclass(frozen=True)
class Config(Validated):
    """Everything here is ours: the paper runs hold-out early stopping on GPT-Neo."""

    checkpoint: str = param(
        "minilm-l6", "shipped MiniLM encoder", choices=("minilm-l3", "minilm-l6"), shape=True
    )
    dataset: str = param("rotten_tomatoes", "the task", choices=minilm.MINILM_TASKS)
    sizes: tuple[int, ...] = param(
        (16, 32, 64), "training-set sizes N (nested)", low=2, increasing=True, shape=True
    )
    validation_size: int = param(32, "split giving the plug-ins σ̂, Ĉ_H", low=1, shape=True)
    test_size: int = param(64, "split scoring every step", low=1, shape=True)
    max_length: int = param(32, "tokens per sentence", low=2, shape=True)
    seeds: int = param(5, "draws of sentences and head", low=1)
    max_steps: int = param(200, "GD horizon", low=1, shape=True)
    eval_every: int = param(10, "test MSE read every this many steps", low=1, shape=True,
                            allowed="divides max_steps")  # fmt: skip
    step_fraction: float = param(0.5, "α = step_fraction/λ̂_max(Θ/N)", low=0, high=1, open="low")
    horizon: int = param(100_000, "longest T̂ looked for", low=1)
    ntk_batch: int = param(16, "sentences per NTK tile (memory)", low=1, shape=True)
    finetune: bool = param(True, "also fine-tune the network (else linearised GD only)")
    run_cache: str = param("", 'directory keeping each finished seed; "" = none')

    def check(self):
        if self.max_steps % self.eval_every:
            raise ValueError("Config.eval_every must divide max_steps.")

    def setting(self) -> minilm.MiniLMStoppingSetting:
        fields = minilm.MiniLMStoppingSetting.__dataclass_fields__
        return minilm.MiniLMStoppingSetting(**{k: getattr(self, k) for k in fields})


SCALES = {
    # quick: the claim early_stopping.minilm.rule_stops_early's quick setting, so `ntsim
    # reproduce` computes the run once for both (linearised GD only: the network's fine-tuning
    # is a separate program, tested in tests/theory; the full scale plots it)
    "quick": Config(checkpoint="minilm-l3", sizes=(8, 16, 32), validation_size=16,
                    test_size=32, max_length=16, seeds=8, max_steps=200, eval_every=10,
                    ntk_batch=8, finetune=False),
    "full": Config(run_cache="figures/early_stopping/minilm_runs/stopping_rule"),
}  # fmt: skip


def run(config: Config, key) -> dict:
    """``T̂``, plug-ins and test-optimal steps per seed and size, and the test MSE curves."""
    setting = config.setting()
    memo = lambda k: disk_memo(config.run_cache, setting, k)  # noqa: E731
    out = shared_run(minilm.simulate_minilm_stopping_rule, key, setting, memo=memo)
    results = {name: np.asarray(value).tolist() for name, value in out._asdict().items()}
    if not config.finetune:  # NaN placeholders: not JSON numbers
        results.pop("finetune_curve")
        results.pop("finetune_step")
    results.update(checkpoint=config.checkpoint, dataset=config.dataset, seeds=config.seeds,
                   finetune=config.finetune)  # fmt: skip
    for i, size in enumerate(config.sizes):
        tuned = out.finetune_step[:, i].tolist() if config.finetune else "not run"
        print(f"N = {size}: T̂ = {out.stopping_time[:, i].tolist()}, test-optimal step "
              f"linearised {out.linearised_step[:, i].tolist()}, fine-tuned {tuned}",
              flush=True)  # fmt: skip
    return results


def plot(results: dict):
    """Left: test MSE curves with T̂. Right: T̂ against the test-optimal steps."""
    import matplotlib.pyplot as plt

    fig, (ax, ax_steps) = plt.subplots(1, 2, figsize=(13.0, 4.8))
    steps = np.asarray(results["evaluated_steps"])
    sizes = results["sizes"]
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(sizes)))
    lin = np.asarray(results["linearised_curve"])  # (S, A, E)
    ft = np.asarray(results.get("finetune_curve", np.nan))
    rule = np.asarray(results["stopping_time"], float)  # (S, A)
    for i, size in enumerate(sizes):
        ax.plot(steps, lin[:, i].mean(0), color=colors[i], label=f"N = {size}: linearised GD")
        if results["finetune"]:
            ax.plot(steps, ft[:, i].mean(0), "--", color=colors[i], label=f"N = {size}: fine-tuned")
        ax.axvline(np.median(rule[:, i]), color=colors[i], linestyle=":", alpha=0.8)
    ax.set_xlabel("GD step τ (step α = step_fraction/λ̂_max(Θ/N))")
    ax.set_ylabel("test MSE (labels ±1), mean over seeds")
    ax.set_title(f"{results['checkpoint']} on {results['dataset']}; dotted: median T̂ "
                 "(plug-in σ̂, Ĉ_H)", fontsize=10)  # fmt: skip
    ax.legend(fontsize=7)
    offset = 1.0  # steps can be 0: plot τ + 1 on a log axis
    for i, size in enumerate(sizes):
        x = rule[:, i] + offset
        ax_steps.plot(x, np.asarray(results["linearised_step"])[:, i] + offset, "o",
                      color=colors[i], label=f"N = {size}: linearised")  # fmt: skip
        if results["finetune"]:
            ax_steps.plot(x, np.asarray(results["finetune_step"])[:, i] + offset, "x", ms=8,
                          color=colors[i], label=f"N = {size}: fine-tuned")  # fmt: skip
    top = max(steps[-1], rule.max()) + offset
    ax_steps.plot([1, top], [1, top], color="gray", linestyle=":", label="test-optimal = T̂")
    ax_steps.axhline(steps[-1] + offset, color="black", linewidth=0.8,
                     label="horizon (test-optimal step capped here)")  # fmt: skip
    ax_steps.set_xscale("log")
    ax_steps.set_yscale("log")
    ax_steps.set_xlabel("T̂ + 1 (kernel stopping rule)")
    ax_steps.set_ylabel("test-optimal step + 1 (grid of eval_every)")
    ax_steps.set_title("T̂ against the step the test set prefers, per seed", fontsize=10)
    ax_steps.legend(fontsize=7)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
