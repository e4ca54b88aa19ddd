"""The Sobolev stopping-rule figure: error vs N for T̂, oracle, hold-out and KRR.

What is plotted (Raskutti, Wainwright & Yu 2014, Sec 4, Fig. 3, cited by Sun & Raskutti
2026, Sec 6.2): kernel GD on ``K = 𝕂/N`` with the first-order
Sobolev kernel ``𝕂(x, x') = 1 + min{x, x'}``, ``x ~ U[0, 1]``, target
``f*(x) = |x − 1/2| − 1/4``, Gaussian noise ``σ = 0.5``, ``f_0 = 0`` and constant step
``α = min{1, 1/λ̂_max}``. Left: the empirical error ``‖f̂ − f*‖²_N`` (mean ± std over seeds)
against ``N`` for

* the data-dependent rule ``T̂ = ⌊1/(αϱ̂²)⌋`` (eq. (11), corrected exponent, ``C_H = ‖f*‖_H``);
* the oracle step (best on the path; needs ``f*``);
* hold-out early stopping as practitioners run it (train on 80%, validation loss every
  ``eval_every`` steps, patience, best checkpoint kept; scored on all ``N`` design points);
* kernel ridge regression with ``λ = 1/η_T̂`` (Sec 6.2, corrected);

with the guarantee ``12 C_H² ϱ̂²`` (Raskutti et al. 2014, Thm 1) and a ``N^{−2/3}`` rate line
(``β = 1``). Right: the chosen stopping steps. All numbers come from
:func:`ntsim.theory.early_stopping.sobolev_benchmark` in float64.

Run: ``ntsim run early_stopping/sobolev_stopping_rule [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.core import log_log_slope
from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import early_stopping as es

_METHODS = ("stopping_rule", "oracle", "holdout", "ridge")
_LABELS = {
    "stopping_rule": "GD stopped at T̂ (data-dependent rule)",
    "oracle": "GD at the oracle step",
    "holdout": "GD with hold-out early stopping",
    "ridge": "KRR, λ = 1/η_T̂",
}


@dataclass(frozen=True)
class Config(Validated):
    """Benchmark setting. Seeds and hold-out details are not in the paper."""

    sizes: tuple[int, ...] = param(
        (100, 200, 400, 800, 1600), "N: sample sizes", low=10, shape=True
    )
    seeds: int = param(20, "draws per N (≥ 2 for a std band)", low=2, shape=True)
    noise_std: float = param(es.SOBOLEV_NOISE_STD, "σ: target noise std", low=0, open=True)
    max_steps: int = param(
        3000, "path length for the oracle and hold-out (oracle steps ≤ ~300)", low=1, shape=True
    )
    holdout_fraction: float = param(0.2, "validation share", low=0, high=1, open=True)
    patience: int = param(5, "evaluations without improvement before stopping", low=1, shape=True)
    eval_every: int = param(10, "steps between validation evaluations", low=1, shape=True)
    chunk_size: int = param(10, "seeds vmapped at once", low=1, shape=True)


SCALES = {
    # quick: the claims' quick setting (``early_stopping.holdout.*``), so that
    # ``ntsim reproduce`` computes the run once for the figure and the claims
    "quick": Config(sizes=(100, 200), seeds=30, max_steps=1000),
    "full": Config(),
}


def setting(config: Config) -> es.SobolevSweepSetting:
    """The theory setting this figure draws (the same simulation the claims read)."""
    return es.SobolevSweepSetting(
        sizes=tuple(int(n) for n in config.sizes),
        draws=config.seeds,
        noise_std=config.noise_std,
        max_steps=config.max_steps,
        holdout_fraction=config.holdout_fraction,
        patience=config.patience,
        eval_every=config.eval_every,
        chunk_size=config.chunk_size,
    )


def run(config: Config, key) -> dict:
    """Errors, radii and stopping steps of every method, per N, over ``config.seeds`` draws
    (:func:`ntsim.theory.early_stopping.simulate_sobolev_sweep`)."""
    results: dict = {"sizes": list(config.sizes), "seeds": config.seeds}
    per_size: dict[str, list] = {}
    with jax.enable_x64(True):
        sweep = shared_run(es.simulate_sobolev_sweep, key, setting(config))
        for name, values in sweep._asdict().items():
            if name == "sizes":
                continue
            values = np.asarray(values, dtype=float)  # (sizes, draws)
            per_size[f"{name}_mean"] = values.mean(axis=1).tolist()
            per_size[f"{name}_std"] = values.std(axis=1, ddof=1).tolist()
        x = np.asarray(config.sizes, float)
        for name in (*_METHODS, "guarantee"):
            slope, stderr = log_log_slope(x, np.asarray(per_size[f"{name}_mean"]))
            results[f"{name}_slope"] = float(slope)
            results[f"{name}_slope_stderr"] = float(stderr)
    results.update(per_size)
    results["rate_exponent"] = -2 / 3
    results["noise_std"] = config.noise_std
    results["rkhs_distance"] = es.SOBOLEV_TARGET_RKHS_NORM
    return results


def plot(results: dict):
    """Left: error vs N (log–log) with guarantee and rate line. Right: stopping steps."""
    import matplotlib.pyplot as plt

    sizes = np.asarray(results["sizes"], float)
    fig, (ax, ax_steps) = plt.subplots(1, 2, figsize=(13.0, 4.8))
    colors = {
        "stopping_rule": "tab:red",
        "oracle": "black",
        "holdout": "tab:blue",
        "ridge": "tab:green",
    }
    for name in _METHODS:
        mean = np.asarray(results[f"{name}_mean"])
        std = np.asarray(results[f"{name}_std"])
        ax.fill_between(
            sizes,
            np.maximum(mean - std, mean * 0.05),
            mean + std,
            color=colors[name],
            alpha=0.15,
            linewidth=0,
        )
        ax.plot(
            sizes,
            mean,
            marker="o",
            color=colors[name],
            label=f"{_LABELS[name]} (slope {results[f'{name}_slope']:.2f})",
        )
    ax.plot(
        sizes,
        results["guarantee_mean"],
        color="tab:red",
        linestyle="--",
        label=f"guarantee 12 C_H² ϱ̂² (slope {results['guarantee_slope']:.2f})",
    )
    anchor = results["oracle_mean"][0]
    ax.plot(
        sizes,
        anchor * (sizes / sizes[0]) ** results["rate_exponent"],
        color="gray",
        linestyle=":",
        label="rate N^(−2/3) (β = 1), through the oracle's first point",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of samples N")
    ax.set_ylabel(r"$\|\hat f - f^*\|_N^2$ (empirical squared error)")
    ax.set_title(
        "Sobolev kernel 1 + min(x, x'), f* = |x − 1/2| − 1/4, "
        f"σ = {results['noise_std']:g}; mean ± std over {results['seeds']} draws",
        fontsize=10,
    )
    # room above the guarantee line for the legend
    ax.set_ylim(top=50 * max(results["guarantee_mean"]))
    ax.legend(fontsize=7, loc="upper right")
    for name, key in (
        ("stopping_rule", "stopping_time"),
        ("oracle", "oracle_step"),
        ("holdout", "holdout_step"),
    ):
        ax_steps.errorbar(
            sizes,
            results[f"{key}_mean"],
            yerr=results[f"{key}_std"],
            marker="o",
            capsize=3,
            color=colors[name],
            label=_LABELS[name],
        )
    ax_steps.set_xscale("log")
    ax_steps.set_yscale("log")
    ax_steps.set_xlabel("number of samples N")
    ax_steps.set_ylabel("stopping step τ (α = min(1, 1/λ̂_max))")
    ax_steps.set_title("chosen stopping steps (mean ± std)", fontsize=10)
    ax_steps.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
