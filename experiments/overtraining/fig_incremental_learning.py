"""Theory figure T1 (Springer et al. 2025, Sec 4.1, Thm 4.1): the incremental-learning staircase.

What is plotted (the paper has no figure of this). Left and middle, the time course of one
flow on the project's config R (an illustration: no claim reads config R, and the claims'
simulation keeps only the checkpoints, not the time course):

* left: the learned features ``σ_i(t) = (Uᵀθ(t)V)_ii`` of gradient flow (eqs. 5–6, diffrax)
  from the paper's init ``W1 = W2 = e^{−τ}I`` with Haar ``U ≠ V`` (solid), against the
  per-mode logistic closed form of the aligned init ``W1 = e^{−τ}U, W2 = e^{−τ}Vᵀ`` (dashed,
  :func:`~ntsim.theory.overtraining.logistic_modes`); the real checkpoints ``t_n``
  (:func:`~ntsim.theory.overtraining.closest_checkpoints`) are marked;
* middle: ``L_pre(t) = ‖θ(t) − A^pre‖²`` (log scale) with the plateau levels
  ``Σ_{i>n}(σ^pre_i)²`` of the ideal checkpoints (dotted);
* right: the statement the claim ``overtraining.thm4_1.incremental_learning`` checks, on
  the claim's own simulation (:func:`~ntsim.theory.overtraining.simulate_real_checkpoints`
  with :data:`~ntsim.theory.overtraining.REAL_CHECKPOINT_SETTINGS` of the same scale): the
  distance ``‖θ(t_n) − UΣ_{:n}Vᵀ‖_F/σ_1`` of each real checkpoint from the truncated SVD,
  per instance and ``n``, against the claim's bound ``1.5·e^{−0.4τ}``;
* far right: the statement the claim ``overtraining.thm4_1.logistic_closed_form`` checks, on
  its own simulation (:func:`~ntsim.theory.overtraining.simulate_aligned_flow` with
  :data:`~ntsim.theory.overtraining.ALIGNED_FLOW_SETTINGS` of the same scale): per random
  aligned-init instance, the largest ``|UᵀθV − diag(a(t))|/σ_1`` between the ODE solver and
  the logistic closed form, against ``τ`` and the claim's tolerance ``1e-6``.

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
from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import overtraining as ot


@dataclass(frozen=True)
class Config(Validated):
    """The project's config R: ``σ^pre_i = 4·0.6^{i−1}``, ``d = 10``; ``τ`` is ours."""

    d: int = param(10, "input/hidden dimension (config R)", low=2, shape=True)
    first: float = param(4.0, "σ^pre_1 (config R)", low=0, open=True)
    ratio: float = param(0.6, "σ^pre_{i+1}/σ^pre_i (config R)", low=0, high=1, open=True)
    tau: float = param(15.0, "init scale e^{−τ}; plateaus separate for τ ≳ 12", low=0, open=True)
    points: int = param(800, "log-spaced save times of the gradient flow", low=2, shape=True)
    end_factor: float = param(
        3.0, "last save time = end_factor × t_d of the aligned init", low=0, open=True
    )
    checkpoints: ot.RealCheckpointSetting = param(
        ot.REAL_CHECKPOINT_SETTINGS["full"],
        "the claim's simulation (same setting type and values as the claim at this scale)",
    )
    aligned: ot.AlignedFlowSetting = param(
        ot.ALIGNED_FLOW_SETTINGS["full"],
        "far right: simulate_aligned_flow, ODE solver vs the logistic closed form (aligned init)",
    )


SCALES = {
    "quick": Config(
        d=6,
        tau=12.0,
        points=300,
        checkpoints=ot.REAL_CHECKPOINT_SETTINGS["quick"],
        aligned=ot.ALIGNED_FLOW_SETTINGS["quick"],
    ),  # seconds on CPU
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Gradient flow from ``e^{−τ}I`` and the logistic closed form on one log time grid."""
    with jax.enable_x64(True):  # τ = 15 puts the init at e^{−30} ≈ 1e-13 of σ_1
        spectrum = ot.geometric_spectrum(config.d, config.first, config.ratio)
        k_u, k_v, k_claim = jax.random.split(key, 3)
        k_aligned = jax.random.fold_in(key, 3)
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
        real = shared_run(ot.simulate_real_checkpoints, k_claim, config.checkpoints)
        learned = (
            jnp.arange(real.spectrum.shape[1])[None, :]
            < jnp.arange(real.spectrum.shape[1] + 1)[:, None]
        )  # (n, i)
        truncated = jnp.einsum(
            "kij,knj,klj->knil", real.u, real.spectrum[:, None, :] * learned[None], real.v
        )  # U Σ_{:n} Vᵀ per instance and n
        claim_distance = (
            jnp.linalg.norm(real.w1 @ real.w2 - truncated, axis=(-2, -1)) / real.spectrum[:, :1]
        )
        aligned = shared_run(ot.simulate_aligned_flow, k_aligned, config.aligned)
        closed = jax.vmap(ot.logistic_modes)(aligned.spectrum, aligned.tau, aligned.times)
        aligned_error = (
            jnp.abs(aligned.modes - jax.vmap(jax.vmap(jnp.diag))(closed)).max(axis=(1, 2, 3))
            / aligned.spectrum[:, 0]
        )  # (instances,): the claim's max_t,ij |UᵀθV − diag(a(t))|/σ_1
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
        "claim_distance": np.asarray(claim_distance).tolist(),  # (instances, d + 1)
        "claim_tau": np.asarray(real.tau).tolist(),
        "aligned_error": np.asarray(aligned_error).tolist(),
        "aligned_tau": np.asarray(aligned.tau).tolist(),
    }


def plot(results: dict):
    """Left: σ_i(t) (identity init) and the aligned logistic. Right: L_pre(t) and plateaus."""
    import matplotlib.pyplot as plt

    t = np.asarray(results["times"])
    modes, logistic = np.asarray(results["modes"]), np.asarray(results["logistic"])
    fig, (ax, ax_loss, ax_claim, ax_ode) = plt.subplots(1, 4, figsize=(23.0, 4.8))
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
    distance = np.asarray(results["claim_distance"])
    count, width = distance.shape
    for k in range(count):
        ax_claim.plot(np.arange(width), distance[k], "o-", color="tab:purple", alpha=0.3,
                      markersize=3, linewidth=0.6)  # fmt: skip
    tau_max = max(results["claim_tau"])
    ax_claim.axhline(1.5 * np.exp(-0.4 * tau_max), color="k", linestyle="--",
                     label=f"1.5·e^(−0.4τ) at τ = {tau_max:.1f} (the claim's bound)")  # fmt: skip
    ax_claim.set_yscale("log")
    ax_claim.set_xlabel("checkpoint n")
    ax_claim.set_ylabel(r"$\|\theta(t_n) - U\Sigma_{:n}V^\top\|_F / \sigma_1$")
    ax_claim.set_title(f"Thm 4.1 on {count} random instances (claim's simulation)", fontsize=10)
    ax_claim.legend(fontsize=8)
    error = np.maximum(np.asarray(results["aligned_error"]), 1e-18)  # exact 0 on a log axis
    ax_ode.plot(results["aligned_tau"], error, "o", color="tab:orange", markersize=3, alpha=0.6)
    ax_ode.axhline(1e-6, color="k", linestyle="--", label="the claim's tolerance 1e-6")
    ax_ode.set_yscale("log")
    ax_ode.set_xlabel("init scale τ (W1 = e^(−τ)U, W2 = e^(−τ)Vᵀ)")
    ax_ode.set_ylabel(r"$\max_{t,ij} |U^\top\theta V - \mathrm{diag}(a(t))| / \sigma_1$")
    ax_ode.set_title(f"Logistic closed form vs ODE on {error.size} aligned instances "
                     "(claim's simulation)", fontsize=10)  # fmt: skip
    ax_ode.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
