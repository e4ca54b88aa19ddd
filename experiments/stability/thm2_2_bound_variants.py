"""Thm 2.2 of Fu et al. 2023: measured leave-one-out stability vs each version of the bound.

A figure the paper lacks (it states eq. (3) without a measurement). What is plotted:
``sup_T‖w_T − w^i_T‖`` of full-batch GD (``η = 1/β``) on the quadratic (Taylor) model of
Sec 2.2 — per-sample Hessians with spectrum in ``[μ, β]``, shared minimiser ``w_*``,
``‖w_0 − w_*‖ = R``, leave-one-out run on ``S^i`` with the ``1/n`` normaliser — mean and
max over random instances, the pathwise certificate ``(η/n)Σ_t‖∇f(w_t, z_i)‖``, and the
three bound variants with ``L = βR`` (:mod:`ntsim.theory.stability._full_finetuning`):

* printed (main text, eq. (3)): ``√(2L)R/β / (n(q^{−1/4} − 1))``, ``q = 1 − μ/β``;
* proof (App. A.1, last line): ``√(2LR/β) / (n(q^{−1/4} − 1))``;
* corrected (off-by-one fixed): ``√(2LR/β) / (n(1 − q^{1/4}))``.

Left panel: against ``n`` (log–log) at fixed ``μ/β``; all curves ∝ 1/n. Right panel: against
``μ/β`` at fixed ``n``, log ``y``; the region where the printed bound is below the largest
measured distance is shaded (it is 0 at ``μ = β``, drawn at the bottom edge).

Run: ``ntsim run stability/thm2_2_bound_variants [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import check_int_fields
from ntsim.theory import stability as ff

# name: (legend, color, line style, line width); the proof is drawn wide so that the
# printed bound (equal to it when R = β) stays visible on top of it.
_BOUNDS = {
    "bound_corrected": ("corrected (off-by-one fixed)", "tab:green", "-", 1.5),
    "bound_proof": ("proof, App. A.1", "tab:orange", "-", 4.0),
    "bound_printed": ("printed, eq. (3) (= proof when R = β)", "tab:red", "--", 1.5),
}


@dataclass(frozen=True)
class Config:
    """Quadratic model of Sec 2.2; the paper has no simulation, so every value is ours."""

    d: int = 5  # parameter dimension (the bounds are dimension-free)
    beta: float = 1.0  # smoothness β (η = 1/β); at R = β the printed and proof bounds agree
    radius: float = 1.0  # R = ‖w_0 − w_*‖
    mu_over_beta: float = 0.5  # μ/β of the left panel
    sample_sizes: tuple[int, ...] = (10, 25, 50, 100, 200, 400)  # n, left panel
    ratio_n: int = 10  # n of the right panel (that of the claim stability.thm2_2.bound_printed)
    ratios: tuple[float, ...] = (
        0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 1.0,
    )  # fmt: skip
    instances: int = 200  # random instances per point
    num_steps: int = 600  # GD steps; (1 − μ/β)^T is negligible, the sup is reached early

    def __post_init__(self):
        check_int_fields(self, ("d", "ratio_n", "instances", "num_steps"))
        if self.d < 2:
            raise ValueError(f"Config.d must be >= 2, got {self.d}.")
        if not self.sample_sizes or min(self.sample_sizes) < 2:
            raise ValueError(f"Config.sample_sizes must be >= 2, got {self.sample_sizes}.")
        for name in ("beta", "radius"):
            if not float(getattr(self, name)) > 0:
                raise ValueError(f"Config.{name} must be positive, got {getattr(self, name)!r}.")
        ratios = (*self.ratios, self.mu_over_beta)
        if not all(0 < r <= 1 for r in ratios):
            raise ValueError(f"Config ratios μ/β must lie in (0, 1], got {ratios}.")


SCALES = {
    "quick": Config(sample_sizes=(10, 25, 50, 100), instances=20, num_steps=200),
    "full": Config(),
}


def _summary(out: dict) -> dict:
    sup = out["sup_distance"]
    summary = {
        "sup_mean": sup.mean(axis=-1).tolist(),
        "sup_max": sup.max(axis=-1).tolist(),
        "certificate_mean": out["certificate"].mean(axis=-1).tolist(),
        "printed_violation_rate": (sup > out["bound_printed"]).mean(axis=-1).tolist(),
        "corrected_violation_rate": (sup > out["bound_corrected"]).mean(axis=-1).tolist(),
    }
    for name in _BOUNDS:  # L = max_j λ_max(H_j)·R = βR on every instance: one value per cell
        summary[name] = out[name].mean(axis=-1).tolist()
    return summary


def run(config: Config, key) -> dict:
    """Both sweeps as one compiled, vmapped program (cells concatenated), in float64."""
    sizes, ratios = list(config.sample_sizes), list(config.ratios)
    cell_ratios = [config.mu_over_beta] * len(sizes) + ratios
    cell_sizes = sizes + [config.ratio_n] * len(ratios)
    with jax.enable_x64(True):
        out = ff.simulate_loo_stability_grid(
            key, mu_over_beta=cell_ratios, num_samples=cell_sizes, radius=config.radius,
            beta=config.beta, d=config.d, num_steps=config.num_steps, instances=config.instances,
        )  # fmt: skip
    over_n = {name: v[: len(sizes)] for name, v in out.items()}
    over_ratio = {name: v[len(sizes) :] for name, v in out.items()}
    return {
        "sample_sizes": sizes,
        "ratios": ratios,
        "mu_over_beta": config.mu_over_beta,
        "ratio_n": config.ratio_n,
        "radius": config.radius,
        "beta": config.beta,
        "instances": config.instances,
        "over_n": _summary(over_n),
        "over_ratio": _summary(over_ratio),
    }


def _measured(ax, x, part: dict) -> None:
    label = r"measured $\max_T \|w_T - w^i_T\|$"
    ax.plot(x, part["sup_mean"], "o-", color="black", label=f"{label} (mean)")
    ax.plot(x, part["sup_max"], "s:", color="gray", label=f"{label} (max)")
    ax.plot(x, part["certificate_mean"], "^-", color="tab:purple", markersize=4,
            label=r"certificate $\frac{\eta}{n}\sum_t\|\nabla f(w_t,z_i)\|$ (mean)")  # fmt: skip


def plot(results: dict):
    """Left: vs n (log–log). Right: vs μ/β (log y), printed-bound violations shaded."""
    import matplotlib.pyplot as plt

    fig, (ax_n, ax_r) = plt.subplots(1, 2, figsize=(16.0, 5.0))
    n = np.asarray(results["sample_sizes"])
    part = results["over_n"]
    _measured(ax_n, n, part)
    for name, (label, color, style, width) in _BOUNDS.items():
        ax_n.plot(n, part[name], color=color, linestyle=style, linewidth=width, label=label)
    ax_n.set_xscale("log")
    ax_n.set_yscale("log")
    ax_n.set_xlabel("number of samples n")
    ax_n.set_ylabel(r"$\|w_T - w^i_T\|$ and bounds")
    ax_n.set_title(
        f"vs n at μ/β = {results['mu_over_beta']:g} (R = {results['radius']:g}, "
        f"β = {results['beta']:g}, L = βR, {results['instances']} instances)",
        fontsize=10,
    )
    ax_n.legend(fontsize=8, loc="upper right")

    ratios = np.asarray(results["ratios"])
    part = results["over_ratio"]
    _measured(ax_r, ratios, part)
    positive = [v for name in _BOUNDS for v in part[name] if v > 0]
    floor = 0.5 * min(min(part["sup_mean"]), min(positive))
    for name, (label, color, style, width) in _BOUNDS.items():
        values = np.asarray(part[name])
        zero = values <= 0
        ax_r.plot(ratios[~zero], values[~zero], color=color, linestyle=style, linewidth=width,
                  marker=".", label=label)  # fmt: skip
        if zero.any():  # the printed versions are exactly 0 at μ = β: a marker on the floor
            ax_r.plot(ratios[zero], np.full(zero.sum(), floor), "v", color=color,
                      markersize=9, label=f"{name.split('_')[1]} bound = 0")  # fmt: skip
    violated = ratios[np.asarray(part["printed_violation_rate"]) > 0]
    if violated.size:
        ax_r.axvspan(violated.min(), ratios.max(), color="tab:red", alpha=0.12,
                     label=f"printed bound violated (from μ/β = {violated.min():g})")  # fmt: skip
    ax_r.set_yscale("log")
    ax_r.set_ylim(bottom=floor * 0.8)
    ax_r.set_xlabel(r"$\mu/\beta$")
    ax_r.set_ylabel(r"$\|w_T - w^i_T\|$ and bounds")
    ax_r.set_title(
        f"vs μ/β at n = {results['ratio_n']} (R/n = {results['radius'] / results['ratio_n']:g})",
        fontsize=10,
    )
    ax_r.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle("Fu et al. 2023, Thm 2.2: leave-one-out stability of GD on the quadratic model")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
