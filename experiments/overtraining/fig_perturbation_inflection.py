"""Theory figures T2, T6 (γ), T7 (Springer et al. 2025, Sec 4.2, Prop 4.3, Thm 4.4, Prop D.1).

What is plotted (analogue of the paper's Fig 3 right; the paper has no linear-model figure):

* left: the expected perturbed pretraining loss ``L̃_pre(n)`` of the ideal checkpoints
  ``n = 0..d`` for several noise levels γ (closed form, lines) with Monte Carlo
  estimates on the checkpoint matrices (markers, ± 2 s.e.); the argmin — the inflection
  ``min{n : 2dγ² > σ_n} − 1`` of Thm 4.4 — is marked with a star; the unperturbed loss
  ``Σ_{i>n}σ_i²`` is dashed;
* middle: the inflection point ``r(γ)`` over a fine γ grid (Def 4.2 on the closed form) and
  the prediction ``min{n : 2dγ² > σ_n} − 1``; larger γ ⇒ earlier inflection;
* right: ``Tr ∇²L_pre = 4dΣ_{i≤n}σ_i`` at the ideal checkpoints ("progressive sharpening")
  and its share of the Gaussian sensitivity: ``L̃ − L = ½γ²Tr H + d³γ⁴`` (Prop D.1).

The project's config R: ``d = 10``, ``σ^pre_i = 4·0.6^{i−1}``, γ ∈ {0.05, 0.10, 0.15}.

Run: ``ntsim run overtraining/fig_perturbation_inflection [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import random_orthogonal
from ntsim.experiment import check_int_fields
from ntsim.theory import overtraining as ot


@dataclass(frozen=True)
class Config:
    """The project's config R and three noise levels."""

    d: int = 10  # dimension (config R)
    first: float = 4.0  # σ^pre_1 (config R)
    ratio: float = 0.6  # σ^pre_{i+1}/σ^pre_i (config R)
    gammas: tuple[float, ...] = (0.05, 0.10, 0.15)  # config R
    mc_samples: int = 20_000  # Monte Carlo draws of (Z1, Z2) per (γ, n)
    grid_points: int = 400  # γ grid for the inflection curve
    grid_max: float = 0.6  # largest γ on that grid

    def __post_init__(self):
        check_int_fields(self, ("d", "mc_samples", "grid_points"), minimum=2)
        if not self.gammas or any(not g > 0 for g in self.gammas):
            raise ValueError(f"Config.gammas must be non-empty and positive, got {self.gammas}.")
        if not 0 < self.ratio < 1 or not self.first > 0 or not self.grid_max > 0:
            raise ValueError("Config: need first > 0, 0 < ratio < 1 and grid_max > 0.")


SCALES = {
    "quick": Config(mc_samples=2000, grid_points=200),  # seconds on CPU
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Closed-form and Monte Carlo perturbed losses, inflection vs γ, Hessian traces."""
    with jax.enable_x64(True):
        spectrum = ot.geometric_spectrum(config.d, config.first, config.ratio)
        k_u, k_v, k_mc = jax.random.split(key, 3)
        u, v = random_orthogonal(k_u, config.d), random_orthogonal(k_v, config.d)
        a_pre = ot.task_matrix(spectrum, u, v)
        gammas = jnp.asarray(config.gammas)
        closed = jax.vmap(ot.ideal_perturbed_losses, in_axes=(None, 0))(spectrum, gammas)
        w1s, w2s = jax.vmap(lambda n: ot.ideal_checkpoint(spectrum, n, u, v))(
            jnp.arange(config.d + 1)
        )

        def mc(k, w1, w2, g):
            return ot.monte_carlo_perturbed_loss(k, w1, w2, a_pre, g, num_samples=config.mc_samples)

        keys = jax.random.split(k_mc, (len(config.gammas), config.d + 1))
        mean, se = jax.jit(
            jax.vmap(jax.vmap(mc, in_axes=(0, 0, 0, None)), in_axes=(0, None, None, 0))
        )(keys, w1s, w2s, gammas)
        grid = jnp.linspace(
            config.grid_max / config.grid_points, config.grid_max, config.grid_points
        )
        grid_losses = jax.vmap(ot.ideal_perturbed_losses, in_axes=(None, 0))(spectrum, grid)
        measured_r = ot.inflection_point(grid_losses)
        predicted_r = jax.vmap(ot.gaussian_inflection, in_axes=(None, 0))(spectrum, grid)
        traces = jax.vmap(ot.hessian_trace)(w1s, w2s)
        base = jnp.concatenate([jnp.cumsum((spectrum**2)[::-1])[::-1], jnp.zeros(1)])
        out = {
            "spectrum": spectrum,
            "closed": closed,
            "mc_mean": mean,
            "mc_se": se,
            "argmin": jnp.argmin(closed, axis=1),
            "predicted_inflection": jax.vmap(ot.gaussian_inflection, in_axes=(None, 0))(
                spectrum, gammas
            ),
            "gamma_grid": grid,
            "inflection_measured": measured_r,
            "inflection_predicted": predicted_r,
            "hessian_trace": traces,
            "hessian_trace_closed_form": ot.ideal_hessian_traces(spectrum),
            "unperturbed": base,
        }
        out = {name: np.asarray(value).tolist() for name, value in out.items()}
    return {**out, "gammas": list(config.gammas), "d": config.d}


def plot(results: dict):
    """Three panels: L̃(n) per γ, inflection vs γ, Hessian trace vs n."""
    import matplotlib.pyplot as plt

    d = results["d"]
    n = np.arange(d + 1)
    fig, (ax, ax_r, ax_h) = plt.subplots(1, 3, figsize=(17.0, 4.8))
    colors = plt.cm.plasma(np.linspace(0.1, 0.8, len(results["gammas"])))
    for j, (gamma, color) in enumerate(zip(results["gammas"], colors, strict=True)):
        closed = np.asarray(results["closed"][j])
        ax.plot(n, closed, color=color, label=f"γ = {gamma:g}: closed form")
        ax.errorbar(
            n, results["mc_mean"][j], yerr=2 * np.asarray(results["mc_se"][j]), fmt="o",
            color=color, markersize=3, capsize=2,
        )  # fmt: skip
        r = results["argmin"][j]
        ax.plot(r, closed[r], marker="*", markersize=14, color=color, markeredgecolor="k")
    ax.plot(n, results["unperturbed"], color="k", linestyle="--", label="unperturbed L_pre(n)")
    ax.errorbar([], [], yerr=[], fmt="o", color="gray", markersize=3, label="Monte Carlo ± 2 s.e.")
    ax.plot([], [], "*", color="gray", markeredgecolor="k", markersize=12, label="argmin (Thm 4.4)")
    ax.set_yscale("log")
    ax.set_xlabel("checkpoint n (features learned)")
    ax.set_ylabel(r"$\tilde L_{pre}(n) = E\,\|(W_1+Z_1)(W_2+Z_2) - A^{pre}\|_F^2$")
    ax.set_title(f"Perturbed pretraining loss (Fig 3 right analogue), d = {d}", fontsize=10)
    ax.legend(fontsize=7)

    grid = np.asarray(results["gamma_grid"])
    ax_r.step(grid, results["inflection_measured"], where="post", label="Def 4.2 on L̃(n)")
    ax_r.plot(
        grid, results["inflection_predicted"], linestyle="--", color="tab:red",
        label="min{n : 2dγ² > σ_n} − 1",
    )  # fmt: skip
    ax_r.set_xlabel("noise level γ")
    ax_r.set_ylabel("inflection point r(γ)")
    ax_r.set_title(f"Larger γ ⇒ earlier inflection (r = {d}: none)", fontsize=10)
    ax_r.legend(fontsize=8)

    ax_h.plot(n, results["hessian_trace"], "o", label="2d(‖W1‖² + ‖W2‖²) at checkpoint n")
    ax_h.plot(n, results["hessian_trace_closed_form"], "--", label=r"$4d\sum_{i\leq n}\sigma_i$")
    ax_h.set_xlabel("checkpoint n (features learned)")
    ax_h.set_ylabel(r"Tr $\nabla^2 L_{pre}$")
    ax_h.set_title("Progressive sharpening; L̃ − L = ½γ² Tr H + d³γ⁴ (Prop D.1)", fontsize=10)
    ax_h.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
