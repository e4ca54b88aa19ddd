"""Learning curves with hold-out early stopping for tasks of different NTK decay (Fig. 2 analogue).

What is plotted (Sun & Raskutti 2026, Sec 7.1, Fig. 2): for synthetic target tasks
of different difficulty (token subspace dimension ``r``; smaller ``r`` gives a larger NTK
decay exponent ``β``, see ``ntk_eigen_decay``), the test error of fine-tuning from a
pretrained attention block against the number of samples ``N``, with hold-out early
stopping as the paper runs it (``holdout_fraction`` of the ``N`` samples held out,
validation loss every ``eval_every`` steps, ``patience`` evaluations without improvement,
best checkpoint kept). Fine-tuning is the linearised network's GD (Lemma 1; kernel GD on
the width-normalised empirical NTK at ``θ_PT`` from ``f_PT``,
:func:`ntsim.theory.early_stopping.holdout_early_stopping`), so every ``N`` and seed costs
one kernel solve instead of a network run (float64). Targets ``f_tgt = f_PT + Δ`` (Δ a
random tanh teacher by default) plus Gaussian noise; the error is ``mean (f̂ − f_tgt)²`` on
fresh test inputs, divided by ``mean Δ²`` (the error of not fine-tuning), mean ± std over
seeds (paper: 3 runs). Left: error vs ``N`` (log–log) with the fitted slope; the paper's Thm 1 gives
``O(N^{−1/2})`` and eq. (30) ``N^{−2β/(2β+1)}``. Right: fitted ``β`` (100-point NTK) per task.
The paper's claim (larger β ⇒ fewer samples) predicts curves ordered by ``β``. One seed is
:func:`ntsim.theory.early_stopping.holdout_learning_curves` (``Config`` extends its
``LearningCurveSetting`` by ``seeds`` and ``seed_batch``; ``--set target=kernel`` puts ``Δ``
in the NTK's span, Assumption 4.1); the claims ``early_stopping.thm1.learning_curve_*`` fit
its rate, and at quick scale this figure plots their run (one task).

Run: ``ntsim run early_stopping/learning_curves [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import log_log_slope
from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import early_stopping as es


@dataclass(frozen=True)
class Config(es.LearningCurveSetting, Validated):
    """:class:`ntsim.theory.early_stopping.LearningCurveSetting` plus the seeds and their batch.

    The inherited fields are the theory setting's (checked by its own ``__post_init__``, left
    as it is: it is on the claims' paths); ``seeds`` and ``seed_batch`` are declared here
    with :func:`param`.
    """

    seeds: int = param(
        3, 'seeds, vmapped (paper: "three random runs"; ≥ 2 for a std band)', low=2, shape=True
    )
    seed_batch: int = param(
        0, "seeds vmapped at once (0: all; a (max N × P) Jacobian per seed)", low=0, shape=True
    )

    def __post_init__(self):
        es.LearningCurveSetting.__post_init__(self)  # the theory setting's own checks
        Validated.__post_init__(self)  # the fields declared here


SCALES = {
    # quick: the run of the claims early_stopping.thm1.learning_curve_rate and _tail_rate (one
    # full-rank task, width 12 × 40 seeds in batches of 8), so `ntsim reproduce` computes it
    # once; the full scale plots the three tasks of different decay
    "quick": Config(
        width=12,
        ranks=(16,),
        sizes=(25, 50, 100, 200, 400, 800),
        num_test=100,
        pretrain_steps=100,
        beta_points=50,
        max_steps=2000,
        seeds=40,
        seed_batch=8,
    ),
    "full": Config(),
}


def sweep_setting(config: Config) -> es.LearningCurveSweepSetting:
    """The theory setting of ``config``'s run (its fields without ``seeds`` and ``seed_batch``)."""
    fields = {name: getattr(config, name) for name in es.LearningCurveSetting.__dataclass_fields__}
    return es.LearningCurveSweepSetting(
        base=es.LearningCurveSetting(**fields),
        num_seeds=config.seeds,
        batch_size=config.seed_batch or config.seeds,
    )


def run(config: Config, key) -> dict:
    """Errors per seed, task and N; fitted β; slopes of the mean curves."""
    # float64: the NTK spectra span ~10 decades (r = 1), below float32's resolution
    with jax.enable_x64(True):
        # the simulation the thm1 claims read
        run = shared_run(es.simulate_learning_curves, key, sweep_setting(config))
        errors, steps, betas = (np.asarray(a) for a in run)
    sizes = np.asarray(config.sizes, float)
    mean = errors.mean(axis=0)
    slopes = [float(log_log_slope(jnp.asarray(sizes), jnp.asarray(m))[0]) for m in mean]
    return {
        "ranks": list(config.ranks),
        "sizes": list(config.sizes),
        "seeds": config.seeds,
        "width": config.width,
        "noise_std": config.noise_std,
        "target": config.target,
        "error_mean": mean.tolist(),  # (ranks, sizes)
        "error_std": errors.std(axis=0, ddof=1).tolist(),
        "kept_step_mean": steps.mean(axis=0).tolist(),
        "beta_mean": betas.mean(axis=0).tolist(),
        "beta_std": betas.std(axis=0, ddof=1).tolist(),
        "slope": slopes,
        "rate_theory": [-2 * b / (2 * b + 1) for b in betas.mean(axis=0)],
    }


def plot(results: dict):
    """Left: normalised test error vs N per task. Right: kept hold-out steps."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    sizes = np.asarray(results["sizes"], float)
    fig, (ax, ax_steps) = plt.subplots(1, 2, figsize=(12.5, 4.8))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(results["ranks"])))
    for i, rank in enumerate(results["ranks"]):
        mean, std = np.asarray(results["error_mean"][i]), np.asarray(results["error_std"][i])
        label = (
            f"r = {rank}: β = {results['beta_mean'][i]:.2f}, slope {results['slope'][i]:.2f} "
            f"(eq. 30: {results['rate_theory'][i]:.2f})"
        )
        ax.fill_between(
            sizes, np.maximum(mean - std, mean * 0.1), mean + std, color=colors[i], alpha=0.15
        )
        ax.plot(sizes, mean, marker="o", color=colors[i], label=label)
        ax_steps.plot(sizes, results["kept_step_mean"][i], marker="o", color=colors[i])
    anchor = np.max(np.asarray(results["error_mean"])[:, 0])
    ax.plot(sizes, anchor * (sizes / sizes[0]) ** -0.5, "k:", label="N^(−1/2) (Thm 1 rate)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of fine-tuning samples N (train + hold-out)")
    ax.set_ylabel("test MSE / mean Δ² (1 = not fine-tuning)")
    ax.set_title(
        f"hold-out early stopping (band: ± std), linearised FT at θ_PT (n = {results['width']}, "
        f"σ = {results['noise_std']:g}, Δ: {results.get('target', 'teacher')}); mean ± std over "
        f"{results['seeds']} seeds",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    ax_steps.set_xscale("log")
    ax_steps.set_yscale("log")
    for axis in (ax, ax_steps):
        axis.set_xticks(sizes, [str(int(n)) for n in sizes])
        axis.xaxis.set_minor_formatter(NullFormatter())
    ax_steps.set_xlabel("number of fine-tuning samples N")
    ax_steps.set_ylabel("kept step (best validation loss)")
    ax_steps.set_title("hold-out stopping step (mean over seeds)", fontsize=9)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
