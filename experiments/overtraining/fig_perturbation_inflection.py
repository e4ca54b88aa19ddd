"""Theory figures T2, T6 (γ), T7 (Springer et al. 2025, Sec 4.2, Prop 4.3, Thm 4.4, Prop D.1).

What is plotted (analogue of the paper's Fig 3 right; the paper has no linear-model figure).
Top row, an illustration on the project's config R in closed form (no claim reads config R):

* left: the expected perturbed pretraining loss ``L̃_pre(n)`` of the ideal checkpoints
  ``n = 0..d`` for several noise levels γ (closed form); the argmin — the inflection
  ``min{n : 2dγ² > σ_n} − 1`` of Thm 4.4 — is marked with a star; the unperturbed loss
  ``Σ_{i>n}σ_i²`` is dashed;
* middle: the inflection point ``r(γ)`` over a fine γ grid (Def 4.2 on the closed form) and
  the prediction ``min{n : 2dγ² > σ_n} − 1``; larger γ ⇒ earlier inflection;
* right: ``Tr ∇²L_pre = 4dΣ_{i≤n}σ_i`` at the ideal checkpoints ("progressive sharpening")
  and its share of the Gaussian sensitivity: ``L̃ − L = ½γ²Tr H + d³γ⁴`` (Prop D.1).

Bottom row, the simulations the claims read, with the claims' settings of the same scale
(:data:`~ntsim.theory.overtraining.MONTE_CARLO_SETTINGS` and its two siblings), run here by
the same functions:

* left: Lemma A.5, Monte Carlo vs the closed form of ``E‖(W1+Z1)(W2+Z2) − A‖²`` at random
  factors, as z-scores (:func:`~ntsim.theory.overtraining.simulate_perturbed_loss_monte_carlo`;
  claim ``overtraining.lemma_a5.expected_perturbed_loss``);
* middle: Thm 4.4, the inflection of the perturbed ideal checkpoints (matrix route) against
  ``min{n : 2dγ² > σ_n} − 1`` over random spectra and γ
  (:func:`~ntsim.theory.overtraining.simulate_ideal_perturbation`; claims
  ``overtraining.thm4_4.*``, ``overtraining.prop4_3.increment``);
* right: Prop D.1, ``Tr ∇²L`` by autodiff against ``2d(‖W1‖² + ‖W2‖²)`` at random factors and
  ideal checkpoints (:func:`~ntsim.theory.overtraining.simulate_hessian_traces`; claim
  ``overtraining.prop_d1.hessian_trace``);
* far right: Lemma A.6, the largest gap ``|L̃(θ^n(0)) − L̃(θ̄^n(0))|`` between the perturbed
  losses of real (gradient flow from ``e^{−τ}I``) and ideal checkpoints ``n ≥ 1`` over γ,
  relative to the lemma's bound ``(σ^pre_d)²/2``, per instance and ``τ``
  (:func:`~ntsim.theory.overtraining.simulate_real_vs_ideal_gap`,
  :data:`~ntsim.theory.overtraining.REAL_VS_IDEAL_GAP_SETTINGS`; claim
  ``overtraining.lemma_a6.real_vs_ideal_gap`` reads the largest τ).

The project's config R: ``d = 10``, ``σ^pre_i = 4·0.6^{i−1}``, γ ∈ {0.05, 0.10, 0.15}.

Run: ``ntsim run overtraining/fig_perturbation_inflection [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import overtraining as ot


@dataclass(frozen=True)
class Config(Validated):
    """The project's config R and three noise levels."""

    d: int = param(10, "dimension (config R)", low=2, shape=True)
    first: float = param(4.0, "σ^pre_1 (config R)", low=0, open=True)
    ratio: float = param(0.6, "σ^pre_{i+1}/σ^pre_i (config R)", low=0, high=1, open=True)
    gammas: tuple[float, ...] = param(
        (0.05, 0.10, 0.15), "noise levels γ (config R)", low=0, open=True, shape=True
    )
    grid_points: int = param(400, "γ grid for the inflection curve", low=2, shape=True)
    grid_max: float = param(0.6, "largest γ on that grid", low=0, open=True)
    monte_carlo: ot.PerturbedLossMonteCarloSetting = param(
        ot.MONTE_CARLO_SETTINGS["full"],
        "the claims' simulations (same setting types and values as the claims at this scale)",
    )
    ideal: ot.IdealPerturbationSetting = param(
        ot.IDEAL_PERTURBATION_SETTINGS["full"],
        "Thm 4.4: simulate_ideal_perturbation, inflection of perturbed ideal checkpoints",
    )
    hessian: ot.HessianTraceSetting = param(
        ot.HESSIAN_TRACE_SETTINGS["full"],
        "Prop D.1: simulate_hessian_traces, Tr ∇²L by autodiff vs 2d(‖W1‖² + ‖W2‖²)",
    )
    gap: ot.RealVsIdealGapSetting = param(
        ot.REAL_VS_IDEAL_GAP_SETTINGS["full"],
        "Lemma A.6: simulate_real_vs_ideal_gap, perturbed losses of real vs ideal checkpoints",
    )


SCALES = {
    "quick": Config(
        grid_points=200,
        monte_carlo=ot.MONTE_CARLO_SETTINGS["quick"],
        ideal=ot.IDEAL_PERTURBATION_SETTINGS["quick"],
        hessian=ot.HESSIAN_TRACE_SETTINGS["quick"],
        gap=ot.REAL_VS_IDEAL_GAP_SETTINGS["quick"],
    ),  # seconds on CPU
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Config R in closed form; the claims' three simulations at this scale."""
    with jax.enable_x64(True):
        spectrum = ot.geometric_spectrum(config.d, config.first, config.ratio)
        k_mc, k_ideal, k_hessian = jax.random.split(key, 3)
        k_gap = jax.random.fold_in(key, 3)
        gammas = jnp.asarray(config.gammas)
        closed = jax.vmap(ot.ideal_perturbed_losses, in_axes=(None, 0))(spectrum, gammas)
        grid = jnp.linspace(
            config.grid_max / config.grid_points, config.grid_max, config.grid_points
        )
        grid_losses = jax.vmap(ot.ideal_perturbed_losses, in_axes=(None, 0))(spectrum, grid)
        measured_r = ot.inflection_point(grid_losses)
        predicted_r = jax.vmap(ot.gaussian_inflection, in_axes=(None, 0))(spectrum, grid)
        base = jnp.concatenate([jnp.cumsum((spectrum**2)[::-1])[::-1], jnp.zeros(1)])
        mc = shared_run(ot.simulate_perturbed_loss_monte_carlo, k_mc, config.monte_carlo)
        ideal = shared_run(ot.simulate_ideal_perturbation, k_ideal, config.ideal)
        ideal_measured = ot.inflection_point(ideal.losses)  # (instances, γ)
        ideal_predicted = jax.vmap(
            jax.vmap(ot.gaussian_inflection, in_axes=(None, 0)), in_axes=(0, 0)
        )(ideal.spectrum, ideal.gammas)
        hessian = shared_run(ot.simulate_hessian_traces, k_hessian, config.hessian)
        gap = shared_run(ot.simulate_real_vs_ideal_gap, k_gap, config.gap)
        gap_ratio = gap.gaps[..., 1:].max(axis=(-2, -1)) / (
            gap.spectrum[:, -1:] ** 2 / 2
        )  # (instances, τ): largest gap over γ and n ≥ 1 / (σ_d²/2)
        out = {
            "spectrum": spectrum,
            "closed": closed,
            "argmin": jnp.argmin(closed, axis=1),
            "predicted_inflection": jax.vmap(ot.gaussian_inflection, in_axes=(None, 0))(
                spectrum, gammas
            ),
            "gamma_grid": grid,
            "inflection_measured": measured_r,
            "inflection_predicted": predicted_r,
            "hessian_trace_closed_form": ot.ideal_hessian_traces(spectrum),
            "unperturbed": base,
            "mc_z": (mc.mc_mean - mc.exact) / mc.mc_se,
            "ideal_inflection_measured": ideal_measured.ravel(),
            "ideal_inflection_predicted": ideal_predicted.ravel(),
            "hessian_autodiff": hessian.trace_random,
            "hessian_formula": jax.vmap(ot.hessian_trace)(hessian.w1, hessian.w2),
            "hessian_ideal_autodiff": hessian.trace_ideal,
            "hessian_ideal_formula": jax.vmap(ot.ideal_hessian_traces)(hessian.spectrum)[
                jnp.arange(hessian.spectrum.shape[0]), hessian.n
            ],
            "gap_taus": gap.taus,
            "gap_ratio": gap_ratio,
        }
        out = {name: np.asarray(value).tolist() for name, value in out.items()}
    return {**out, "gammas": list(config.gammas), "d": config.d}


def plot(results: dict):
    """Top: config R (L̃(n) per γ, inflection vs γ, Hessian trace vs n). Bottom: the claims'
    simulations (Monte Carlo z-scores, inflection vs prediction, autodiff vs formula)."""
    import matplotlib.pyplot as plt

    d = results["d"]
    n = np.arange(d + 1)
    fig, ((ax, ax_r, ax_h, ax_blank), (ax_z, ax_i, ax_t, ax_gap)) = plt.subplots(
        2, 4, figsize=(22.0, 9.6)
    )
    ax_blank.axis("off")
    colors = plt.cm.plasma(np.linspace(0.1, 0.8, len(results["gammas"])))
    for j, (gamma, color) in enumerate(zip(results["gammas"], colors, strict=True)):
        closed = np.asarray(results["closed"][j])
        ax.plot(n, closed, color=color, marker="o", markersize=3, label=f"γ = {gamma:g}")
        r = results["argmin"][j]
        ax.plot(r, closed[r], marker="*", markersize=14, color=color, markeredgecolor="k")
    ax.plot(n, results["unperturbed"], color="k", linestyle="--", label="unperturbed L_pre(n)")
    ax.plot([], [], "*", color="gray", markeredgecolor="k", markersize=12, label="argmin (Thm 4.4)")
    ax.set_yscale("log")
    ax.set_xlabel("checkpoint n (features learned)")
    ax.set_ylabel(r"$\tilde L_{pre}(n) = E\,\|(W_1+Z_1)(W_2+Z_2) - A^{pre}\|_F^2$")
    ax.set_title(f"Perturbed pretraining loss, config R (closed form), d = {d}", fontsize=10)
    ax.legend(fontsize=7)

    grid = np.asarray(results["gamma_grid"])
    ax_r.step(grid, results["inflection_measured"], where="post", label="Def 4.2 on L̃(n)")
    ax_r.plot(
        grid, results["inflection_predicted"], linestyle="--", color="tab:red",
        label="min{n : 2dγ² > σ_n} − 1",
    )  # fmt: skip
    ax_r.set_xlabel("noise level γ")
    ax_r.set_ylabel("inflection point r(γ)")
    ax_r.set_title(f"Larger γ ⇒ earlier inflection (r = {d}: none), config R", fontsize=10)
    ax_r.legend(fontsize=8)

    ax_h.plot(n, results["hessian_trace_closed_form"], "o--", label=r"$4d\sum_{i\leq n}\sigma_i$")
    ax_h.set_xlabel("checkpoint n (features learned)")
    ax_h.set_ylabel(r"Tr $\nabla^2 L_{pre}$")
    ax_h.set_title("Progressive sharpening, config R (Prop D.1 closed form)", fontsize=10)
    ax_h.legend(fontsize=8)

    z = np.asarray(results["mc_z"])
    ax_z.hist(z, bins=30, density=True, color="tab:blue", alpha=0.6, label="(MC − exact)/s.e.")
    x = np.linspace(-4, 4, 200)
    ax_z.plot(x, np.exp(-(x**2) / 2) / np.sqrt(2 * np.pi), "k--", label="N(0, 1)")
    ax_z.set_xlabel("z-score")
    ax_z.set_title(f"Lemma A.5 at {z.size} random (W1, W2, A, γ) (claim's simulation)",
                   fontsize=10)  # fmt: skip
    ax_z.legend(fontsize=8)

    measured = np.asarray(results["ideal_inflection_measured"])
    predicted = np.asarray(results["ideal_inflection_predicted"])
    counts = np.zeros((predicted.max() + 1, measured.max() + 1))
    np.add.at(counts, (predicted, measured), 1)
    ax_i.imshow(counts.T, origin="lower", cmap="Greens", aspect="auto")
    ax_i.set_xlabel("min{n : 2dγ² > σ_n} − 1")
    ax_i.set_ylabel("inflection of the perturbed ideal checkpoints")
    share = float(np.mean(measured == predicted))
    ax_i.set_title(f"Thm 4.4 on random spectra and γ: {share:.1%} agree (claim's simulation)",
                   fontsize=10)  # fmt: skip

    for key, formula, label in (("hessian_autodiff", "hessian_formula", "random factors"),
                                ("hessian_ideal_autodiff", "hessian_ideal_formula",
                                 "ideal checkpoints")):  # fmt: skip
        ax_t.plot(results[formula], results[key], "o", markersize=3, alpha=0.6, label=label)
    top = max(max(results["hessian_formula"]), max(results["hessian_ideal_formula"]))
    ax_t.plot([0, top], [0, top], "k--", linewidth=1)
    ax_t.set_xlabel("2d(‖W1‖² + ‖W2‖²)  /  4dΣ_{i≤n}σ_i")
    ax_t.set_ylabel("Tr ∇²L by jax.hessian")
    ax_t.set_title("Prop D.1: autodiff vs closed form (claim's simulation)", fontsize=10)
    ax_t.legend(fontsize=8)

    ratio = np.asarray(results["gap_ratio"])  # (instances, τ)
    taus = np.asarray(results["gap_taus"])
    jitter = np.linspace(-0.3, 0.3, ratio.shape[0])
    for j, tau in enumerate(taus):
        ax_gap.plot(tau + jitter, ratio[:, j], "o", color="tab:brown", markersize=3, alpha=0.5)
    ax_gap.axhline(1.0, color="k", linestyle="--", label="Lemma A.6 bound (σ_d)²/2")
    ax_gap.set_yscale("log")
    ax_gap.set_xticks(taus)
    ax_gap.set_xlabel("init scale τ (W(0) = e^(−τ)I; the claim reads the largest)")
    ax_gap.set_ylabel(r"$\max_{\gamma, n\geq 1} |\tilde L(\theta^n) - \tilde L(\bar\theta^n)|"
                      r" / (\sigma_d^2/2)$")  # fmt: skip
    ax_gap.set_title(f"Lemma A.6: real vs ideal checkpoints, {ratio.shape[0]} instances "
                     "(claim's simulation)", fontsize=10)  # fmt: skip
    ax_gap.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
