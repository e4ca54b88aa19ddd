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

Every run is :func:`ntsim.theory.stability.simulate_loo_grid` with the settings the claims
``stability.thm2_2.*`` read (:data:`ntsim.theory.stability.THM2_2_SETTINGS`, the same at
each scale; ``R = β = 1``, ``d = 5``):

* left — against ``n`` (log–log) at ``μ/β = 0.5`` (``over_n``; claim ``scaling_n``): all
  curves ∝ 1/n;
* middle — against ``μ/β`` at ``n = 10`` (``generic`` up to ``μ/β = 0.96`` and ``near_one``
  from 0.9; claims ``bound_printed_generic`` and ``bound_printed``), log ``y``; the region
  where the printed bound is below the largest measured distance is shaded (it is 0 at
  ``μ = β``, drawn at the bottom edge);
* right — the worst and mean ``sup‖Δ‖``/corrected bound against ``μ/β`` for each ``n``
  (``certificate``; claim ``bound_corrected``): at most 1.

Run: ``ntsim run stability/thm2_2_bound_variants [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import stability as ff

# name: (legend, color, line style, line width); the proof is drawn wide so that the
# printed bound (equal to it when R = β) stays visible on top of it.
_BOUNDS = {
    "bound_corrected": ("corrected (off-by-one fixed)", "tab:green", "-", 1.5),
    "bound_proof": ("proof, App. A.1", "tab:orange", "-", 4.0),
    "bound_printed": ("printed, eq. (3) (= proof when R = β)", "tab:red", "--", 1.5),
}
_PARTS = ("over_n", "generic", "near_one", "certificate")


@dataclass(frozen=True)
class Config(Validated):
    """The paper has no simulation; the sizes are the claims' (THM2_2_SETTINGS)."""

    settings: str = param(
        "full", "which scale of ntsim.theory.stability.THM2_2_SETTINGS to draw",
        choices=ff.SHARED_SCALES, shape=True,
    )  # fmt: skip


SCALES = {"quick": Config(settings="quick"), "full": Config()}


def _summary(run: ff.LooGridRun, cells) -> dict:
    """Per cell (in the order of ``cells``): the measured distances and the bounds."""
    sup = run.sup_distance[cells]
    summary = {
        "mu_over_beta": run.mu_over_beta[cells].tolist(),
        "num_samples": run.num_samples[cells].tolist(),
        "sup_mean": sup.mean(axis=-1).tolist(),
        "sup_max": sup.max(axis=-1).tolist(),
        "certificate_mean": run.certificate[cells].mean(axis=-1).tolist(),
        "printed_violation_rate": (sup > run.bound_printed[cells]).mean(axis=-1).tolist(),
        "corrected_violation_rate": (sup > run.bound_corrected[cells]).mean(axis=-1).tolist(),
        "worst_sup_over_corrected": (sup / run.bound_corrected[cells]).max(axis=-1).tolist(),
        "mean_sup_over_corrected": (sup / run.bound_corrected[cells]).mean(axis=-1).tolist(),
    }
    for name in _BOUNDS:  # L = max_j λ_max(H_j)·R = βR on every instance: one value per cell
        summary[name] = getattr(run, name)[cells].mean(axis=-1).tolist()
    return summary


def run(config: Config, key) -> dict:
    """The four Thm 2.2 grids of the claims, each one compiled program, in float64."""
    runs = {}
    with jax.enable_x64(True):
        for part, k in zip(_PARTS, jax.random.split(key, len(_PARTS)), strict=True):
            runs[part] = shared_run(
                ff.simulate_loo_grid, k, ff.THM2_2_SETTINGS[part][config.settings]
            )
    over_n = runs["over_n"]
    # μ/β panel at n = 10: the generic grid below 0.9, the near-one grid from 0.9 on
    generic, near = runs["generic"], runs["near_one"]
    low = np.flatnonzero(generic.mu_over_beta < near.mu_over_beta.min())
    below, above = _summary(generic, low), _summary(near, np.arange(near.mu_over_beta.size))
    over_ratio = {name: below[name] + above[name] for name in below}
    cert = runs["certificate"]
    setting = ff.THM2_2_SETTINGS["over_n"][config.settings]
    return {
        "settings": config.settings,
        "radius": float(over_n.radius[0]),
        "beta": 1.0,
        "mu_over_beta": float(over_n.mu_over_beta[0]),
        "sample_sizes": over_n.num_samples.tolist(),
        "instances": {
            part: ff.THM2_2_SETTINGS[part][config.settings].instances for part in _PARTS
        },  # fmt: skip
        "num_steps": setting.num_steps,
        "over_n": _summary(over_n, np.arange(over_n.num_samples.size)),
        "ratios": over_ratio["mu_over_beta"],
        "ratio_n": int(near.num_samples[0]),
        "over_ratio": over_ratio,
        "certificate": {
            int(n): _summary(cert, np.flatnonzero(cert.num_samples == n))
            for n in np.unique(cert.num_samples)
        },
        "max_certificate_gap": float(cert.max_certificate_gap.max()),
    }


def _measured(ax, x, part: dict) -> None:
    label = r"measured $\max_T \|w_T - w^i_T\|$"
    ax.plot(x, part["sup_mean"], "o-", color="black", label=f"{label} (mean)")
    ax.plot(x, part["sup_max"], "s:", color="gray", label=f"{label} (max)")
    ax.plot(x, part["certificate_mean"], "^-", color="tab:purple", markersize=4,
            label=r"certificate $\frac{\eta}{n}\sum_t\|\nabla f(w_t,z_i)\|$ (mean)")  # fmt: skip


def plot(results: dict):
    """Left: vs n (log–log). Middle: vs μ/β (log y), printed-bound violations shaded. Right:
    sup‖Δ‖ over the corrected bound."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, (ax_n, ax_r, ax_c) = plt.subplots(1, 3, figsize=(19.0, 5.2))
    n = np.asarray(results["sample_sizes"])
    part = results["over_n"]
    _measured(ax_n, n, part)
    for name, (label, color, style, width) in _BOUNDS.items():
        ax_n.plot(n, part[name], color=color, linestyle=style, linewidth=width, label=label)
    ax_n.set_xscale("log")
    ax_n.xaxis.set_minor_formatter(NullFormatter())  # crowded labels on short decades
    ax_n.set_yscale("log")
    ax_n.set_xlabel("number of samples n")
    ax_n.set_ylabel(r"$\|w_T - w^i_T\|$ and bounds")
    ax_n.set_title(
        f"vs n at μ/β = {results['mu_over_beta']:g} (R = {results['radius']:g}, "
        f"β = {results['beta']:g}, L = βR, {results['instances']['over_n']} instances)",
        fontsize=10,
    )
    ax_n.legend(fontsize=7, loc="lower left")

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
        f"vs μ/β at n = {results['ratio_n']} (R/n = {results['radius'] / results['ratio_n']:g}; "
        f"{results['instances']['generic']}/{results['instances']['near_one']} instances "
        "below/from 0.9)",
        fontsize=10,
    )
    ax_r.legend(fontsize=7, loc="upper right")

    colors = plt.cm.viridis(np.linspace(0, 0.8, len(results["certificate"])))
    for color, (n_cell, part) in zip(colors, results["certificate"].items(), strict=True):
        x = np.asarray(part["mu_over_beta"])
        ax_c.plot(x, part["worst_sup_over_corrected"], "o-", color=color,
                  label=f"n = {n_cell}: worst instance")  # fmt: skip
        ax_c.plot(x, part["mean_sup_over_corrected"], "s:", color=color, markersize=4,
                  label=f"n = {n_cell}: mean")  # fmt: skip
    ax_c.axhline(1.0, color="tab:green", linestyle="--", label="corrected bound (ratio 1)")
    ax_c.set_ylim(0, 1.1)
    ax_c.set_xlabel(r"$\mu/\beta$")
    ax_c.set_ylabel(r"$\max_T\|w_T - w^i_T\|$ / corrected bound")
    ax_c.set_title(
        f"corrected bound holds ({results['instances']['certificate']} instances per cell; "
        f"certificate gap ≤ {results['max_certificate_gap']:.1e})",
        fontsize=10,
    )
    ax_c.legend(fontsize=7, loc="lower left")
    fig.suptitle("Fu et al. 2023, Thm 2.2: leave-one-out stability of GD on the quadratic model")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
