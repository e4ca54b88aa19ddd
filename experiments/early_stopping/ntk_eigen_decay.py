"""NTK eigen-decay at the pretrained model for synthetic tasks of different difficulty (Figs 4–9).

What is plotted (Sun & Raskutti 2026, App. A.2–A.3, eqs. (31)–(32), Figs 4–9 analogue): the
eigenvalues ``λ_k`` of the ``num_points × num_points`` (paper: 100 × 100) width-normalised
empirical NTK ``Θ = JJᵀ/n`` of a small attention block pretrained by GD on a synthetic
source task (:func:`ntsim.theory.early_stopping.pretrain_attention`), evaluated on the
inputs of target tasks whose tokens lie on a random ``r``-dimensional subspace of
``ℝ^{d⁰}`` (smaller ``r``: a simpler task). Left: ``λ_k/λ_1`` against ``k`` on log–log axes
(mean over seeds) with the fitted power law ``k^{−2β}`` through the origin (eq. (32)).
Right: fitted ``β`` per task, through the origin and with an intercept (the paper does not
say which it used), mean ± std over seeds; the paper's GPT-Neo values lie in
``[0.51, 0.62]``, all ``> 1/2`` as eq. (29) requires.

Run: ``ntsim run early_stopping/ntk_eigen_decay [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import eigen_decay_exponent
from ntsim.experiment import Validated, param
from ntsim.theory import early_stopping as es

#: β reported for GPT-Neo-1.3B (Sun & Raskutti 2026, App. A.3), for the plot's reference band.
PAPER_BETA_RANGE = (0.51, 0.62)


@dataclass(frozen=True)
class Config(Validated):
    """Model, tasks and sizes (ours: the paper uses GPT-Neo and real datasets)."""

    width: int = param(64, "n: width of the attention block", low=1, shape=True)
    seq_len: int = param(4, "T: tokens per sequence", low=1, shape=True)
    input_dim: int = param(16, "d⁰: token dimension", low=1, shape=True)
    ranks: tuple[int, ...] = param(
        (1, 2, 4, 8, 16), "task input-subspace dimensions r", low=1,
        allowed="1 ≤ r ≤ input_dim", shape=True,
    )  # fmt: skip
    num_points: int = param(
        100, "NTK size (paper: 100 random samples); ≥ 3 for a decay fit", low=3, shape=True
    )
    num_source: int = param(64, "pretraining sample size", low=1, shape=True)
    pretrain_steps: int = param(300, "GD steps with η_0/n", low=1, shape=True)
    eta0: float = param(
        1.0, "η_0: the pretraining GD step is η_0/n (not in the paper)", low=0, open=True
    )
    seeds: int = param(3, "pretrained models and task draws, vmapped", low=1, shape=True)

    def check(self):
        if max(self.ranks) > self.input_dim:
            raise ValueError(
                f"Config.ranks must each lie in [1, input_dim = {self.input_dim}], got "
                f"{self.ranks}."
            )


SCALES = {
    "quick": Config(width=32, ranks=(1, 4, 16), num_points=50, pretrain_steps=100, seeds=2),
    "full": Config(),
}


def spectra(config: Config, key) -> np.ndarray:
    """Eigenvalues (decreasing) per seed and rank, ``(seeds, ranks, num_points)``."""

    def one_seed(k):
        k_pre, k_tasks = jax.random.split(k)
        pre = es.pretrain_attention_for(k_pre, config)
        out = []
        for index, rank in enumerate(config.ranks):
            k_b, k_x = jax.random.split(jax.random.fold_in(k_tasks, index))
            basis = es.subspace_basis(k_b, config.input_dim, rank)
            x = es.subspace_inputs(k_x, config.num_points, config.seq_len, basis)
            kernel = es.width_normalised_ntk(pre.model, pre.params, x)
            out.append(jnp.linalg.eigvalsh(kernel)[::-1])
        return jnp.stack(out)

    keys = jax.random.split(key, config.seeds)
    return np.asarray(jax.jit(jax.vmap(one_seed))(keys))


def run(config: Config, key) -> dict:
    """Spectra and fitted β (through the origin and with intercept) per seed and task."""
    lam = spectra(config, key)
    beta = {
        name: np.asarray(
            jax.vmap(jax.vmap(lambda v, i=intercept: eigen_decay_exponent(v, fit_intercept=i)))(
                jnp.asarray(lam)
            )
        )
        for name, intercept in (("origin", False), ("intercept", True))
    }
    ratios = lam / lam[..., :1]
    # eigenvalues at round-off level (≤ 0 in some seed) are left out of the plotted mean
    mean_ratio = [
        [float(v) if ok else None for v, ok in zip(row, positive, strict=True)]
        for row, positive in zip(ratios.mean(axis=0), np.all(lam > 0, axis=0), strict=True)
    ]
    return {
        "ranks": list(config.ranks),
        "num_points": config.num_points,
        "width": config.width,
        "seeds": config.seeds,
        "mean_ratio": mean_ratio,  # (ranks, num_points), None below round-off
        "beta_origin": beta["origin"].tolist(),  # (seeds, ranks)
        "beta_intercept": beta["intercept"].tolist(),
        "beta_origin_mean": beta["origin"].mean(axis=0).tolist(),
        "beta_origin_std": beta["origin"].std(axis=0, ddof=1).tolist(),
        "beta_intercept_mean": beta["intercept"].mean(axis=0).tolist(),
        "beta_intercept_std": beta["intercept"].std(axis=0, ddof=1).tolist(),
        "min_eigenvalue": float(lam.min()),
        "paper_beta_range": list(PAPER_BETA_RANGE),
    }


def plot(results: dict):
    """Left: normalised spectra with fitted power laws. Right: β per task."""
    import matplotlib.pyplot as plt

    ranks = results["ranks"]
    k = np.arange(1, results["num_points"] + 1)
    fig, (ax, ax_beta) = plt.subplots(1, 2, figsize=(12.5, 4.8))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(ranks)))
    for i, rank in enumerate(ranks):
        ratio = np.array([np.nan if v is None else v for v in results["mean_ratio"][i]])
        beta = results["beta_origin_mean"][i]
        ax.plot(k, ratio, marker="o", markersize=2.5, linestyle="none", color=colors[i])
        ax.plot(
            k,
            k ** (-2 * beta),
            color=colors[i],
            label=f"r = {rank}: fit k^(−2β), β = {beta:.2f}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    finite = np.array([v for row in results["mean_ratio"] for v in row if v is not None])
    ax.set_ylim(bottom=max(finite.min() / 3, 1e-9), top=2)
    ax.set_xlabel("eigenvalue index k")
    ax.set_ylabel("λ_k / λ_1 (width-normalised NTK at θ_PT)")
    ax.set_title(
        f"{results['num_points']}×{results['num_points']} NTK, attention block n = "
        f"{results['width']}; dots: mean over {results['seeds']} seeds",
        fontsize=10,
    )
    ax.legend(fontsize=8, title="task input rank r", title_fontsize=8)
    x = np.arange(len(ranks))
    for offset, name, label in (
        (-0.15, "origin", "through origin"),
        (0.15, "intercept", "with intercept"),
    ):
        ax_beta.errorbar(
            x + offset,
            results[f"beta_{name}_mean"],
            yerr=results[f"beta_{name}_std"],
            marker="o",
            capsize=3,
            linestyle="none",
            label=f"β fit {label} (eq. 32)",
        )
    lo, hi = results["paper_beta_range"]
    ax_beta.axhspan(lo, hi, color="gray", alpha=0.25, label="GPT-Neo-1.3B (paper, App. A.3)")
    ax_beta.axhline(0.5, color="black", linestyle=":", label="β = 1/2 (eq. 29 needs β > 1/2)")
    ax_beta.set_xticks(x, [f"r = {r}" for r in ranks])
    ax_beta.set_xlabel("task (dimension of the token subspace)")
    ax_beta.set_ylabel("fitted decay exponent β")
    ax_beta.set_title("fitted β, mean ± std over seeds", fontsize=10)
    ax_beta.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
