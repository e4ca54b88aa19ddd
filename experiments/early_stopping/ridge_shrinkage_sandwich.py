"""Early stopping ↔ ridge: per-eigenvalue shrinkage of GD vs KRR with λ = 1/η_τ and λ = η_τ.

What is plotted (Sun & Raskutti 2026, Sec 6.2, eq. (27)). Kernel GD for
``τ`` steps of size ``α`` shrinks the ``i``-th eigen-coordinate of the targets by
``s_GD = 1 − (1 − αλ̂_i)^τ``, ridge ``λ`` by ``s_KRR = λ̂_i/(λ̂_i + λ)``. Left: ``s_GD`` against
``x = η_τλ̂_i`` for several ``αλ̂`` (dots) inside the band ``[x/(1 + x), 2x/(1 + x)]`` that
``s_KRR(λ = 1/η_τ)`` and its double give (exact for ``αλ̂ ≤ 1``). Right: for a power-law
spectrum ``λ̂_k = k^{−2β}``, the range over ``k`` of ``s_GD/s_KRR`` along the GD path, for the
corrected ``λ = 1/η_τ`` (stays in ``[1, 2]``) and the paper's literal ``λ = η_τ`` (leaves
it by orders of magnitude: ridge ``λ = η_τ`` shrinks ever harder while GD fits ever more;
with ``α < 1`` it also falls below 1 at the first steps). Third panel: the claims'
simulation (:func:`ntsim.theory.early_stopping.simulate_shrinkage_sandwich`, the claims
``early_stopping.sec6_2.ridge_sandwich_corrected`` / ``_printed`` read the same setting,
``es.SANDWICH_SETTINGS``): per random instance (log-uniform spectrum, step size ``α`` with
``αλ̂_max ≤ 1``, log-uniform step counts) the range ``[min, max]`` of ``s_GD/s_KRR`` over
eigenvalues and steps, for both ridge rules.

Run: ``ntsim run early_stopping/ridge_shrinkage_sandwich [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import power_law_spectrum
from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import early_stopping as es


@dataclass(frozen=True)
class Config(Validated):
    """Spectrum, step size and step grid (illustrative; the paper gives no numbers)."""

    num_eigenvalues: int = param(1000, "N: eigenvalues of the spectrum", low=1, shape=True)
    beta: float = param(1.0, "λ̂_k = k^{−2β} (β = 1: the Sobolev kernel's decay)", low=0, open=True)
    step_size: float = param(1.0, "α (α λ̂_max = α here); αλ̂_max ≤ 1", low=0, high=1, open="low")
    max_steps: int = param(10**6, "longest run τ", low=1, shape=True)
    num_steps: int = param(200, "points on the geometric τ grid", low=1, shape=True)
    step_products: tuple[float, ...] = param(
        (1e-3, 0.1, 0.5, 0.9, 1.0), "αλ̂ values in the left panel", low=0, high=1, open="low"
    )
    sandwich: es.SandwichSetting = param(
        es.SANDWICH_SETTINGS["full"], "the claims' random instances (a theory setting)"
    )


SCALES = {
    "quick": Config(
        num_eigenvalues=200, max_steps=10**5, num_steps=80, sandwich=es.SANDWICH_SETTINGS["quick"]
    ),
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Shrinkage curves, ratio ranges along the path, and the claims' random instances."""
    with jax.enable_x64(True):
        margins = shared_run(es.simulate_shrinkage_sandwich, key, config.sandwich)
        instances = {
            f"instances_{name}_{bound}": np.asarray(
                getattr(margins, f"{name}_ratio")[:, i]
            ).tolist()
            for name in ("corrected", "printed")
            for i, bound in enumerate(("min", "max"))
        }
        instances["instances_corrected_margin_min"] = float(np.min(margins.corrected))
        instances["instances_printed_margin_min"] = float(np.min(margins.printed))
        steps = jnp.unique(jnp.geomspace(1, config.max_steps, config.num_steps).round())
        curves = []
        for product in config.step_products:  # one eigenvalue λ̂ = product/α per curve
            lam = jnp.array([product / config.step_size])
            pair = es.shrinkage_sandwich(lam, config.step_size, steps)
            curves.append(
                {
                    "alpha_lambda": product,
                    "x": np.asarray(config.step_size * steps * lam[0]).tolist(),
                    "gd": np.asarray(pair.gd[:, 0]).tolist(),
                }
            )
        spectrum = power_law_spectrum(config.num_eigenvalues, 2 * config.beta)
        ranges = {}
        for name, printed in (("corrected", False), ("printed", True)):
            pair = es.shrinkage_sandwich(spectrum, config.step_size, steps, printed=printed)
            ratio = pair.gd / pair.krr
            ranges[f"{name}_ratio_min"] = np.asarray(ratio.min(axis=1)).tolist()
            ranges[f"{name}_ratio_max"] = np.asarray(ratio.max(axis=1)).tolist()
    x_grid = np.geomspace(1e-3, 1e4, 300)
    return {
        "steps": np.asarray(steps).tolist(),
        "curves": curves,
        "x_grid": x_grid.tolist(),
        "band_low": (x_grid / (1 + x_grid)).tolist(),
        "band_high": np.minimum(1, 2 * x_grid / (1 + x_grid)).tolist(),
        "beta": config.beta,
        "num_eigenvalues": config.num_eigenvalues,
        "step_size": config.step_size,
        **ranges,
        **instances,
    }


def plot(results: dict):
    """Left: s_GD vs η_τλ̂ in the KRR band. Right: range of s_GD/s_KRR along the path."""
    import matplotlib.pyplot as plt

    fig, (ax, ax_ratio, ax_inst) = plt.subplots(1, 3, figsize=(19.0, 5.0))
    x_grid = np.asarray(results["x_grid"])
    ax.fill_between(
        x_grid,
        results["band_low"],
        results["band_high"],
        color="tab:green",
        alpha=0.2,
        label="[s_KRR, 2 s_KRR] with λ = 1/η_τ (corrected)",
    )
    ax.plot(x_grid, results["band_low"], color="tab:green", label="s_KRR = x/(1 + x)")
    for curve in results["curves"]:
        ax.plot(
            curve["x"],
            curve["gd"],
            marker=".",
            linestyle="none",
            markersize=4,
            label=f"s_GD = 1 − (1 − αλ̂)^τ, αλ̂ = {curve['alpha_lambda']:g}",
        )
    ax.set_xscale("log")
    ax.set_xlabel(r"$x = \eta_\tau \hat\lambda = \alpha\tau\hat\lambda$")
    ax.set_ylabel("shrinkage factor of an eigen-direction")
    ax.set_xlim(x_grid[0], x_grid[-1])
    ax.set_title("GD shrinkage lies in the ridge band (αλ̂ ≤ 1)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    steps = np.asarray(results["steps"])
    for name, color, label in (
        ("corrected", "tab:green", "λ = 1/η_τ (corrected)"),
        ("printed", "tab:red", "λ = η_τ (printed, Sec 6.2)"),
    ):
        ax_ratio.fill_between(
            steps,
            results[f"{name}_ratio_min"],
            results[f"{name}_ratio_max"],
            color=color,
            alpha=0.3,
            label=f"range over k of s_GD/s_KRR, {label}",
        )
    ax_ratio.axhline(1, color="gray", linestyle=":")
    ax_ratio.axhline(2, color="gray", linestyle=":", label="sandwich bounds 1 and 2")
    ax_ratio.set_xscale("log")
    ax_ratio.set_yscale("log")
    ax_ratio.set_xlabel("GD steps τ")
    ax_ratio.set_ylabel("s_GD / s_KRR (log scale)")
    ax_ratio.set_title(
        f"λ̂_k = k^(−2β), β = {results['beta']:g}, N = {results['num_eigenvalues']}, "
        f"α = {results['step_size']:g}",
        fontsize=10,
    )
    ax_ratio.legend(fontsize=8)
    for name, color, marker, label in (
        ("corrected", "tab:green", "o", "λ = 1/η_τ (corrected)"),
        ("printed", "tab:red", "x", "λ = η_τ (printed)"),
    ):
        ax_inst.scatter(
            results[f"instances_{name}_min"],
            results[f"instances_{name}_max"],
            s=10,
            color=color,
            marker=marker,
            alpha=0.6,
            label=f"{label}: min margin {results[f'instances_{name}_margin_min']:.2g}",
        )
    ax_inst.axvline(1, color="gray", linestyle=":")
    ax_inst.axhline(2, color="gray", linestyle=":", label="sandwich: min ≥ 1, max ≤ 2")
    ax_inst.set_xscale("log")
    ax_inst.set_yscale("log")
    ax_inst.set_xlabel("min over (λ̂, τ) of s_GD/s_KRR")
    ax_inst.set_ylabel("max over (λ̂, τ) of s_GD/s_KRR")
    ax_inst.set_title(
        f"random spectra, α and τ ({len(results['instances_corrected_min'])} instances; "
        "the claims' simulation)",
        fontsize=10,
    )
    ax_inst.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
