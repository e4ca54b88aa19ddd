"""Figure 2 of Shachaf et al. 2021 (Sec 5, Thm 5.2): depth and task scale in deep linear nets.

What is plotted (``Σ = I``, Gaussian ``X`` with ``n`` rows, population risk
``R(β) = ‖θ_T − β‖²``):

* (a) Fig 2a — ``R/‖θ_S‖²`` against ``α`` for ``θ_T = αθ_S + ε``, ``θ_S ~ N(0, 4I)``,
  ``ε ~ N(0, I)``, ``n = d/10``, one curve per depth ``L ∈ {1, 2, 3, 5, 7, ∞}``. Curves are
  the gradient-flow limit eq. (5) (``L = ∞``: eq. (6);
  :func:`~ntsim.theory.linear_teachers.deep_fine_tuned_limit`), mean over seeds; the dotted
  black line is the ``L = 1`` expectation ``((d−n)/d)((α−1)² + 0.25)``. Markers (± std) are
  actually trained networks: layer-wise GD on ``(1/n)‖Xβ − y‖²`` from the exactly
  0-balanced rank-one weights with ``β(0) = θ_S``
  (:func:`~ntsim.core.balanced_deep_linear_params`, hidden widths ``d_gd``) at a smaller
  size ``d_gd`` (``n = d_gd/10``), so they sit on that size's own eq. (5) curves (thin,
  same colours). GD is run on ``θ_S, θ_T`` divided by ``‖θ_S‖`` (eq. (5) is 1-homogeneous,
  so ``R/‖θ_S‖²`` is unchanged) with ``η = eta_scale / (L·max(1, ‖θ_T‖)^{2−2/L}·λ_max(XᵀX/n))``
  (the stability limit of the end-to-end dynamics).
* (b) Fig 2b — ``L = 7``, ``‖θ̂_T − θ̂_S‖ = 0.1`` exactly: "scale target"
  (``θ_T = αθ̂_T``, ``‖θ_S‖ = 1``, solid) vs "scale source" (``θ_S = αθ̂_S``, ``‖θ_T‖ = 1``,
  dashed), eq. (5), for several ``n/d`` (the size of the gap depends on ``n/d``), from
  :func:`~ntsim.theory.linear_teachers.simulate_scale_target_vs_source` (as the claims).

Seeds are vmapped (:func:`~ntsim.core.sweep_keys`), ``α`` is vmapped inside a seed; only the
static depths and ``n/d`` values are Python loops. Float64 throughout.

Run: ``ntsim run linear_teachers/fig2_depth_and_scale [--scale full]`` or this file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import (
    balanced_deep_linear_params,
    deep_linear,
    end_to_end_vector,
    gradient_descent,
    mse_loss,
    sweep_keys,
)
from ntsim.experiment import Validated, param
from ntsim.theory import linear_teachers as lt


@dataclass(frozen=True)
class Config(Validated):
    """Fig 2 settings (d, seeds, α grids and GD sizes are not in the paper; they are ours)."""

    d: int = param(1000, "input dimension for the theory curves (n = d/10)", low=10, shape=True)
    depths: tuple[float, ...] = param(
        (1.0, 2.0, 3.0, 5.0, 7.0, float("inf")), "(a) depths L; inf = eq. (6)", low=1,
        high=math.inf, shape=True,
    )  # fmt: skip
    alpha_max: float = param(
        10.0, "(a) and (b): α on a grid in [alpha_min, alpha_max]", low=0, open=True,
        allowed="> alpha_min",
    )  # fmt: skip
    alpha_min: float = param(
        0.5, "smallest α of the theory grid", low=0, open=True, allowed="(0, alpha_max)"
    )
    alpha_points: int = param(
        40, "number of α on the theory grid (evenly spaced)", low=1, shape=True
    )
    seeds: int = param(
        20, "draws of (X, θ_S, ε) for (a), of (X, θ̂_S, θ̂_T) for (b) (≥ 2 for a std band)",
        low=2, shape=True,
    )  # fmt: skip
    d_gd: int = param(
        50, "(a) trained networks: input dimension (= hidden width), n = d_gd/10", low=10,
        shape=True,
    )  # fmt: skip
    gd_depths: tuple[int, ...] = param(
        (1, 2, 3, 7), "depths L of the trained networks (markers)", low=1, shape=True
    )
    gd_alphas: tuple[float, ...] = param(
        (0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0), "α of the trained nets", low=0, open=True,
        shape=True,
    )  # fmt: skip
    gd_seeds: int = param(
        8, "draws of (X, θ_S, ε) for the trained networks (≥ 2 for a std band)", low=2,
        shape=True,
    )  # fmt: skip
    gd_steps: int = param(20_000, "layer-wise GD steps of each trained network", low=1, shape=True)
    eta_scale: float = param(0.5, "fraction of the stability limit", low=0, high=1, open=True)
    fig2b_depth: float = param(
        7.0, "(b) depth L (paper: L = 7; inf = eq. (6))", low=1, high=math.inf
    )
    angle: float = param(0.1, "(b) ‖θ̂_T − θ̂_S‖ (paper ≈ 0.1)", low=0, high=2, open=True)
    sample_ratios: tuple[float, ...] = param(
        (0.1, 0.3, 0.5), "(b) n/d (not in the paper; the gap depends on it)", low=0, high=1,
        open=True, allowed="(0, 1), round(ratio · d) ≥ 1", shape=True,
    )  # fmt: skip

    def check(self):
        if not self.alpha_min < self.alpha_max:
            raise ValueError(
                f"Config needs 0 < alpha_min < alpha_max, got {self.alpha_min}, {self.alpha_max}."
            )
        if any(int(round(r * self.d)) < 1 for r in self.sample_ratios):
            raise ValueError(f"Config.sample_ratios·d must give n >= 1, got {self.sample_ratios}.")


SCALES = {
    "quick": Config(
        d=100,
        alpha_points=25,
        seeds=8,
        d_gd=20,
        gd_depths=(1, 2, 7),
        gd_alphas=(0.5, 1.0, 3.0, 5.0),
        gd_seeds=4,
        gd_steps=8000,
    ),  # fmt: skip
    "full": Config(),
}


def _alphas(config: Config) -> np.ndarray:
    return np.linspace(config.alpha_min, config.alpha_max, config.alpha_points)


def _risk(x, theta_s, theta_t, depth):
    """``‖θ_T − β_L‖²`` (Σ = I) with ``β_L`` of eq. (5)/(6)."""
    beta = lt.deep_fine_tuned_limit(x, theta_s, theta_t, depth)
    return jnp.sum((theta_t - beta) ** 2)


def fig2a_setting(config: Config) -> lt.DepthSetting:
    """Panel (a) theory as a :func:`~ntsim.theory.linear_teachers.simulate_depth_and_alpha`
    setting (the Fig 2a claim calls the same function)."""
    alphas = tuple(float(a) for a in _alphas(config))
    return lt.DepthSetting(d=config.d, depths=tuple(config.depths), alphas=alphas,
                           draws=config.seeds)  # fmt: skip


def _fig2a_gd(key, config: Config, alphas):
    """One seed: trained-network and eq. (5) risks R/‖θ_S‖² for every (gd depth, α)."""
    d = config.d_gd
    n = d // 10
    k_x, k_s, k_e, k_v = jax.random.split(key, 4)
    x = jax.random.normal(k_x, (n, d))
    theta_s = 2.0 * jax.random.normal(k_s, (d,))
    eps = jax.random.normal(k_e, (d,))
    norm_s = jnp.linalg.norm(theta_s)
    lam = jnp.linalg.norm(x, 2) ** 2 / n  # λ_max(XᵀX/n)
    unit_s, unit_eps = theta_s / norm_s, eps / norm_s  # normalised: ‖θ_S‖ = 1
    sim, theory, bad, loss_ratio = [], [], [], []
    for depth in config.gd_depths:
        widths = (d,) * (depth - 1) + (1,)
        vs = [jax.random.normal(k, (d,)) for k in jax.random.split(k_v, depth - 1)]
        params0 = balanced_deep_linear_params(unit_s, widths, vs)
        apply = deep_linear(widths).apply

        def one(a, depth=depth, params0=params0, apply=apply):
            theta_t = a * unit_s + unit_eps
            loss = mse_loss(apply, x, x @ theta_t, loss_scale=1.0 / n)
            growth = jnp.maximum(1.0, jnp.linalg.norm(theta_t)) ** (2.0 - 2.0 / depth)
            eta = config.eta_scale / (depth * growth * lam)
            out = gradient_descent(
                loss, params0, learning_rate=eta, num_steps=config.gd_steps, throw=False
            )
            beta = end_to_end_vector(out.params)
            return (
                jnp.sum((theta_t - beta) ** 2),
                _risk(x, unit_s, theta_t, float(depth)),
                out.first_nonfinite_step >= 0,
                loss(out.params) / loss(params0),
            )

        r_sim, r_th, nonfinite, ratio = jax.vmap(one)(alphas)
        sim.append(r_sim)
        theory.append(r_th)
        bad.append(nonfinite)
        loss_ratio.append(ratio)
    return {
        "gd_risk": jnp.stack(sim),
        "gd_theory": jnp.stack(theory),
        "gd_nonfinite": jnp.stack(bad),
        "gd_loss_ratio": jnp.stack(loss_ratio),
    }


def fig2b_setting(config: Config) -> lt.ScaleSetting:
    """Panel (b) as a :func:`~ntsim.theory.linear_teachers.simulate_scale_target_vs_source`
    setting (the Fig 2b claims call the same function)."""
    return lt.ScaleSetting(
        d=config.d,
        sample_ratios=tuple(config.sample_ratios),
        depth=config.fig2b_depth,
        angle=config.angle,
        alphas=tuple(float(a) for a in _alphas(config)),
        draws=config.seeds,
    )


def run(config: Config, key) -> dict:
    """Fig 2a theory + trained nets, Fig 2b theory."""
    k_a, k_gd, k_b = jax.random.split(key, 3)
    alphas = _alphas(config)
    with jax.enable_x64(True):
        theory = lt.simulate_depth_and_alpha(k_a, fig2a_setting(config), progress=True).risk
        gd = sweep_keys(
            _fig2a_gd, k_gd, config.gd_seeds, progress=True, description="fig2a GD",
            config=config, alphas=jnp.asarray(config.gd_alphas),
        )  # fmt: skip
        # eq. (5) at d_gd on the dense α grid (the marker reference)
        dense = lt.DepthSetting(
            d=config.d_gd, depths=tuple(map(float, config.gd_depths)),
            alphas=tuple(map(float, alphas)), draws=config.gd_seeds,
        )  # fmt: skip
        gd_dense = lt.simulate_depth_and_alpha(k_gd, dense).risk
        sim = lt.simulate_scale_target_vs_source(k_b, fig2b_setting(config), progress=True)
        fig2b = {"scale_target": sim.scale_target, "scale_source": sim.scale_source}
        theory = np.asarray(theory)  # (seeds, depths, α)
        gd = {k: np.asarray(v) for k, v in gd.items()}  # (gd_seeds, gd depths, gd α)
        gd_dense = np.asarray(gd_dense)
        fig2b = {k: np.asarray(v) for k, v in fig2b.items()}  # (seeds, ratios, α)
    if gd["gd_nonfinite"].any():
        raise FloatingPointError("fig2_depth_and_scale: GD diverged; lower eta_scale.")
    d, n = config.d, config.d // 10
    rel_err = np.abs(gd["gd_risk"] - gd["gd_theory"]) / np.maximum(gd["gd_theory"], 1e-12)
    target, source = fig2b["scale_target"].mean(0), fig2b["scale_source"].mean(0)
    return {
        "d": d,
        "n": n,
        "alphas": alphas.tolist(),
        "depths": [float(v) for v in config.depths],
        "theory_mean": theory.mean(0),  # (depths, α)
        "theory_std": theory.std(0, ddof=1),
        "l1_analytic": ((d - n) / d) * ((alphas - 1.0) ** 2 + 0.25),
        "seeds": config.seeds,
        "d_gd": config.d_gd,
        "n_gd": config.d_gd // 10,
        "gd_depths": list(config.gd_depths),
        "gd_alphas": list(config.gd_alphas),
        "gd_steps": config.gd_steps,
        "gd_seeds": config.gd_seeds,
        "gd_risk": gd["gd_risk"],  # (gd_seeds, gd depths, gd α)
        "gd_theory_same_draws": gd["gd_theory"],
        "gd_rel_error_max": float(rel_err.max()),
        "gd_rel_error_median": float(np.median(rel_err)),
        "gd_loss_ratio_max": float(gd["gd_loss_ratio"].max()),
        "gd_dense_theory_mean": gd_dense.mean(0),  # (gd depths, α) at d_gd
        "fig2b_depth": config.fig2b_depth,
        "angle": config.angle,
        "sample_ratios": list(config.sample_ratios),
        "scale_target_mean": target,  # (ratios, α)
        "scale_source_mean": source,
        "scale_target_std": fig2b["scale_target"].std(0, ddof=1),
        "scale_source_std": fig2b["scale_source"].std(0, ddof=1),
        "target_over_source_at_alpha_max": (target[:, -1] / source[:, -1]).tolist(),
    }


def _depth_label(depth: float) -> str:
    return "L = ∞ (eq. 6)" if np.isinf(depth) else f"L = {depth:g}"


def plot(results: dict):
    """(a) R/‖θ_S‖² vs α per depth (+ GD markers); (b) scale target vs scale source."""
    import matplotlib.pyplot as plt

    alphas = np.asarray(results["alphas"])
    fig, (ax, ax_b) = plt.subplots(1, 2, figsize=(14.0, 5.4))
    depths = results["depths"]
    cmap = plt.get_cmap("viridis")
    colors = {dep: cmap(i / max(len(depths) - 1, 1)) for i, dep in enumerate(depths)}
    mean = np.asarray(results["theory_mean"])
    for i, depth in enumerate(depths):
        ax.plot(alphas, mean[i], color=colors[depth], lw=2,
                label=f"{_depth_label(depth)}: eq. (5), d = {results['d']}")  # fmt: skip
    ax.plot(alphas, results["l1_analytic"], color="k", ls=":", lw=1.5,
            label="L = 1 analytic ((d−n)/d)((α−1)² + 0.25)")  # fmt: skip
    gd = np.asarray(results["gd_risk"])
    dense = np.asarray(results["gd_dense_theory_mean"])
    markers = "osD^vP*X"
    for j, depth in enumerate(results["gd_depths"]):
        color = colors.get(float(depth), f"C{j}")
        ax.plot(alphas, dense[j], color=color, lw=0.8, ls="--")
        label = f"L = {depth}: trained net (GD), d = {results['d_gd']}"
        ax.errorbar(results["gd_alphas"], gd[:, j].mean(0), yerr=gd[:, j].std(0, ddof=1),
                    color=color, marker=markers[j % len(markers)], ls="none", ms=6, capsize=2,
                    mec="k", label=label)  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("α   (θ_T = αθ_S + ε)")
    ax.set_ylabel("test risk R / ‖θ_S‖²")
    ax.set_title(
        f"(a) Fig 2a: depth vs task scale, Σ = I, n = d/10, θ_S ~ N(0, 4I), ε ~ N(0, I)\n"
        f"lines: eq. (5), mean of {results['seeds']} seeds; thin dashed: eq. (5) at "
        f"d = {results['d_gd']}; markers: GD ({results['gd_steps']} steps, "
        f"{results['gd_seeds']} seeds, median |GD − eq.(5)|/eq.(5) = "
        f"{results['gd_rel_error_median']:.1e})",
        fontsize=9,
    )
    ax.legend(fontsize=7, ncol=2, loc="upper left")

    for i, ratio in enumerate(results["sample_ratios"]):
        color = f"C{i}"
        for name, style, label in (
            ("scale_target", "-", "scale target θ_T = αθ̂_T, ‖θ_S‖ = 1"),
            ("scale_source", "--", "scale source θ_S = αθ̂_S, ‖θ_T‖ = 1"),
        ):
            m = np.asarray(results[f"{name}_mean"])[i]
            s = np.asarray(results[f"{name}_std"])[i]
            ax_b.plot(alphas, m, color=color, ls=style, lw=2, label=f"n/d = {ratio:g}: {label}")
            ax_b.fill_between(alphas, np.maximum(m - s, 1e-12), m + s, color=color, alpha=0.15)
    ax_b.set_yscale("log")
    ax_b.set_xlabel("scaling factor α")
    ax_b.set_ylabel("test risk R = ‖θ_T − β_L‖²")
    gap = ", ".join(
        f"{r:g}: {g:.0f}×"
        for r, g in zip(results["sample_ratios"], results["target_over_source_at_alpha_max"],
                        strict=True)
    )  # fmt: skip
    ax_b.set_title(
        f"(b) Fig 2b: L = {results['fig2b_depth']:g}, ‖θ̂_T − θ̂_S‖ = {results['angle']:g}, "
        f"d = {results['d']}, eq. (5), mean ± std of {results['seeds']} seeds\n"
        f"target/source risk at α = {alphas[-1]:g} by n/d: {gap}",
        fontsize=9,
    )
    ax_b.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
