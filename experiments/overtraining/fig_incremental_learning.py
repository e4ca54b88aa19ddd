"""Theory figure T1 (Springer et al. 2025, Sec 4.1, Thm 4.1): the incremental-learning staircase.

What is plotted (the paper has no figure of this):

* left: the learned features ``σ_i(t) = (Uᵀθ(t)V)_ii`` of gradient flow (eqs. 5–6, diffrax)
  from the paper's init ``W1 = W2 = e^{−τ}I`` with Haar ``U ≠ V`` (solid), against the
  per-mode logistic closed form of the aligned init ``W1 = e^{−τ}U, W2 = e^{−τ}Vᵀ`` (dashed,
  :func:`~ntsim.theory.overtraining.logistic_modes`); the real checkpoints ``t_n``
  (:func:`~ntsim.theory.overtraining.closest_checkpoints`) are marked;
* right: ``L_pre(t) = ‖θ(t) − A^pre‖²`` (log scale) with the plateau levels
  ``Σ_{i>n}(σ^pre_i)²`` of the ideal checkpoints (dotted).

The identity init learns each mode later than the aligned formula (its mode ``n`` starts
at ``≈ e^{−2τ}(1 + u_nᵀv_n)/2`` and couples to the others), but passes through every ideal
checkpoint (claim ``overtraining.thm4_1.incremental_learning``).

Run: ``ntsim run overtraining/fig_incremental_learning [--scale full]`` or this file.
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
    """The project's config R: ``σ^pre_i = 4·0.6^{i−1}``, ``d = 10``; ``τ`` is ours."""

    d: int = 10  # input/hidden dimension (config R)
    first: float = 4.0  # σ^pre_1 (config R)
    ratio: float = 0.6  # σ^pre_{i+1}/σ^pre_i (config R)
    tau: float = 15.0  # init scale e^{−τ}; plateaus separate for τ ≳ 12
    points: int = 800  # log-spaced save times of the gradient flow
    end_factor: float = 3.0  # last save time = end_factor × t_d of the aligned init

    def __post_init__(self):
        check_int_fields(self, ("d", "points"), minimum=2)
        for name in ("first", "tau", "end_factor"):
            if not float(getattr(self, name)) > 0:
                raise ValueError(f"Config.{name} must be positive, got {getattr(self, name)!r}.")
        if not 0 < self.ratio < 1:
            raise ValueError(f"Config.ratio must lie in (0, 1), got {self.ratio!r}.")


SCALES = {
    "quick": Config(d=6, tau=12.0, points=300),  # a few seconds on CPU
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Gradient flow from ``e^{−τ}I`` and the logistic closed form on one log time grid."""
    with jax.enable_x64(True):  # τ = 15 puts the init at e^{−30} ≈ 1e-13 of σ_1
        spectrum = ot.geometric_spectrum(config.d, config.first, config.ratio)
        k_u, k_v = jax.random.split(key)
        u, v = random_orthogonal(k_u, config.d), random_orthogonal(k_v, config.d)
        aligned_times = ot.checkpoint_times(spectrum, config.tau)
        times = jnp.geomspace(
            0.02 * aligned_times[0], config.end_factor * aligned_times[-1], config.points
        )
        a_pre = ot.task_matrix(spectrum, u, v)
        w1, w2 = ot.pretrain_gradient_flow(a_pre, ot.identity_init(config.d, config.tau), times)
        thetas = w1 @ w2
        modes = jax.vmap(ot.mode_matrix, in_axes=(0, None, None))(thetas, u, v)
        index, distance = ot.closest_checkpoints(thetas, spectrum, u, v)
        loss = jax.vmap(ot.pretraining_loss, in_axes=(0, 0, None))(w1, w2, a_pre)
        logistic = ot.logistic_modes(spectrum, config.tau, times)
        plateaus = jnp.concatenate([jnp.cumsum((spectrum**2)[::-1])[::-1], jnp.zeros(1)])
        checkpoint_times = np.asarray(times[index])
    return {
        "times": np.asarray(times).tolist(),
        "spectrum": np.asarray(spectrum).tolist(),
        "modes": np.asarray(jnp.diagonal(modes, axis1=1, axis2=2)).tolist(),  # (T, d)
        "logistic": np.asarray(logistic).tolist(),
        "checkpoint_times": checkpoint_times.tolist(),
        "checkpoint_distances": np.asarray(distance).tolist(),
        "loss": np.asarray(loss).tolist(),
        "plateaus": np.asarray(plateaus).tolist(),
        "aligned_times": np.asarray(aligned_times).tolist(),
        "d": config.d,
        "tau": config.tau,
    }


def plot(results: dict):
    """Left: σ_i(t) (identity init) and the aligned logistic. Right: L_pre(t) and plateaus."""
    import matplotlib.pyplot as plt

    t = np.asarray(results["times"])
    modes, logistic = np.asarray(results["modes"]), np.asarray(results["logistic"])
    fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(13.0, 4.8))
    colors = plt.cm.viridis(np.linspace(0, 0.9, results["d"]))
    for i, color in enumerate(colors):
        ax.plot(t, modes[:, i], color=color, label=f"σ_{i + 1}(t)" if i < 4 else None)
        ax.plot(t, logistic[:, i], color=color, linestyle="--", linewidth=0.8)
        ax.axhline(results["spectrum"][i], color=color, linestyle=":", linewidth=0.6)
    for tn in results["checkpoint_times"][1:]:
        ax.axvline(tn, color="gray", linewidth=0.5, alpha=0.6)
    ax.plot([], [], color="k", linestyle="--", label="aligned init: logistic closed form")
    ax.plot([], [], color="gray", linewidth=0.5, label="real checkpoints t_n")
    ax.set_xscale("log")
    ax.set_xlabel("gradient-flow time t")
    ax.set_ylabel(r"learned feature $\sigma_i(t) = (U^\top\theta(t)V)_{ii}$")
    ax.set_title(
        f"Incremental learning, d = {results['d']}, τ = {results['tau']:g}, W(0) = e^(−τ)I "
        f"(solid)\nmax ‖θ(t_n) − UΣ_(:n)Vᵀ‖_F = {max(results['checkpoint_distances']):.1e}",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    ax_loss.plot(t, results["loss"], color="tab:blue", label=r"$L_{pre}(t)$")
    for n, level in enumerate(results["plateaus"][:-1]):
        ax_loss.axhline(level, color="gray", linestyle=":", linewidth=0.7)
        ax_loss.annotate(f"n = {n}", (t[0], level), fontsize=7, va="bottom")
    ax_loss.set_xscale("log")
    ax_loss.set_yscale("log")
    ax_loss.set_ylim(bottom=1e-3 * results["plateaus"][-2])  # below: solver round-off
    ax_loss.set_xlabel("gradient-flow time t")
    ax_loss.set_ylabel(r"$L_{pre}(t) = \|\theta(t) - A^{pre}\|_F^2$")
    ax_loss.set_title(r"plateaus at $\sum_{i>n}(\sigma^{pre}_i)^2$ (dotted)", fontsize=10)
    ax_loss.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
