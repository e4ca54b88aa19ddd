"""Theory figures for Rahimi Afzal et al. 2025: Thms 2, 3 and 5 and the selective scheme, simulated.

What is plotted (no figure of the slides). One figure per theorem's claims: each panel
draws the simulation the claims of that statement read (one simulation per figure and
claim), with the same setting type and, at each scale, the claims' sizes:

(a) Thm 3, :func:`ntsim.theory.linearization.simulate_gap` (claims
    ``linearization.thm3.bound``, ``linearization.thm4.simplified``): the network against
    its linearisation, ``Δ(t) = ‖f_{θ_t}(x*) − f̄_{θ̄_t}(x*)‖``, with Thm 3's bound
    ``b(t − (1 − e^{−λt})/λ)`` for a few instances spanning the λ range (``λ``
    log-uniform on ``[0.1, 10]·λ_max(K)``);
(b) Thm 2, :func:`~ntsim.theory.linearization.simulate_distance` (claims
    ``linearization.thm2.bound_corrected``, ``linearization.thm2.bound_printed``):
    ``‖θ_t − θ_0‖`` with the corrected bound ``2L̂‖y(0) − y*‖∫e^{−(Λ_t−Λ_s)}ds`` (dashed)
    and the printed one with ``‖f_θt(x*) − y*‖`` (dotted) for a few constant-λ instances;
(c) Thm 1's selective scheme, the same simulation: the training error
    ``‖f_θt(x*) − y*‖`` of the selective and the constant-λ run of the same instances (the
    claim ``linearization.thm1.selective_monotone`` reads its own selective runs, with the
    same network setting);
(d) Thm 5, :func:`~ntsim.theory.linearization.simulate_thm5` (claims
    ``linearization.thm5.bounds``, ``linearization.thm5.bounds_printed``): the KRR risk
    ``‖σ(K + σI)^{−1}ỹ‖²/‖ỹ‖²`` of random kernels against ``σ``, between the corrected
    bounds ``(σ/(σ + λ_max))²`` and ``(σ/(σ + λ_min))²``; the printed lower bound with
    ``‖y*‖`` (crosses, = 100× the corrected one since ``‖ỹ‖ = 0.1‖y*‖``) lies above the
    risk wherever ``κ < 10``.

``L̂`` and ``L̂_∇`` are path maxima of ``‖J_θ‖`` and ``‖J_θ − J_{θ_0}‖/‖θ − θ_0‖``.

Run: ``ntsim run linearization/theory_bounds [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import linearization as lz

_FULL_NETWORK = lz.NetworkSetting(n=16, d=4, width=64, steps=1000)


@dataclass(frozen=True)
class Config(Validated):
    """The three simulations' settings (the claims' sizes) and how many instances to draw."""

    gap: lz.NetworkSetting = param(lz.NetworkSetting(), "(a) Thm 3: simulate_gap's setting")
    distance: lz.DistanceSetting = param(
        lz.DistanceSetting(), "(b) Thm 2, (c) selective scheme: simulate_distance's setting"
    )
    thm5: lz.KernelSpectraSetting = param(
        lz.KernelSpectraSetting(), "(d) Thm 5: simulate_thm5's setting"
    )
    shown: int = param(
        4, "instances drawn as curves in panels (a)–(c)", low=1,
        allowed="[1, min(gap.instances, distance.network.instances)]",
    )  # fmt: skip

    def check(self):
        most = min(self.gap.instances, self.distance.network.instances)
        if self.shown > most:
            raise ValueError(
                f"Config.shown must not exceed the simulations' instances ({most}), got "
                f"{self.shown}."
            )


SCALES = {
    "quick": Config(),
    "full": Config(
        gap=_FULL_NETWORK,
        distance=lz.DistanceSetting(network=_FULL_NETWORK),
        thm5=lz.KernelSpectraSetting(n=16, d=4, width=64, kernel_n=40, features=80),
    ),
}


def _spread(values, count: int) -> list[int]:
    """Indices of ``count`` instances at evenly spaced quantiles of ``values``."""
    order = np.argsort(np.asarray(values))
    return [int(order[i]) for i in np.linspace(0, order.size - 1, count).round().astype(int)]


def run(config: Config, key) -> dict:
    """The three simulations the claims read (float64, as the claims); a few instances as
    curves, every instance in the summaries."""
    k_gap, k_dist, k_thm5 = jax.random.split(key, 3)
    with jax.enable_x64(True):
        gap = shared_run(lz.simulate_gap, k_gap, config.gap)
        dist = shared_run(lz.simulate_distance, k_dist, config.distance)
        thm5 = shared_run(lz.simulate_thm5, k_thm5, config.thm5)
        lam, r0 = np.asarray(gap.lam)[:, None], np.asarray(gap.r0)[:, None]
        lip_grad = np.asarray(gap.lip_grad)[:, None]
        thm3 = np.asarray(lz.thm3_bound(np.asarray(gap.lip)[:, None], lip_grad, r0, lam, gap.times))
        residual = np.asarray(dist.constant_residual)
        lip = np.asarray(dist.constant_lip)[:, None]
        integral = np.asarray(dist.constant_integral)
        thm2 = np.asarray(lz.thm2_bound(lip, residual[:, :1], integral))
        thm2_printed = np.asarray(lz.thm2_bound_printed(lip, residual, integral))
        corrected = jax.vmap(lz.thm5_bounds)(thm5.kernel, thm5.y - thm5.f0, thm5.sigma)
        printed = jax.vmap(lz.thm5_bounds_printed)(thm5.kernel, thm5.y, thm5.f0, thm5.sigma)
        norm2 = np.sum(np.asarray(thm5.y - thm5.f0) ** 2, axis=1)
    gap_shown = _spread(gap.lam, config.shown)
    constant = np.flatnonzero(np.asarray(dist.constant_lam) > 0)
    dist_shown = [int(constant[i]) for i in _spread(np.asarray(dist.constant_lam)[constant],
                                                    config.shown)]  # fmt: skip
    steps = np.arange(residual.shape[1])  # the flow time ηk differs per instance
    to_list = lambda a: np.asarray(a).tolist()  # noqa: E731
    ratio3 = np.max(np.asarray(gap.gap)[:, 1:] / thm3[:, 1:], axis=1)
    ratio2 = np.max(np.asarray(dist.constant_distance)[:, 1:] / thm2[:, 1:], axis=1)
    return {
        "gap": {
            "lam": to_list(np.asarray(gap.lam)[gap_shown]),
            "times": to_list(np.asarray(gap.times)[gap_shown]),
            "delta": to_list(np.asarray(gap.gap)[gap_shown]),
            "thm3_bound": to_list(thm3[gap_shown]),
            "max_ratio": float(ratio3.max()),
            "instances": int(ratio3.size),
        },
        "distance": {
            "lam": to_list(np.asarray(dist.constant_lam)[dist_shown]),
            "steps": to_list(steps),
            "distance": to_list(np.asarray(dist.constant_distance)[dist_shown]),
            "thm2_bound": to_list(thm2[dist_shown]),
            "thm2_printed": to_list(thm2_printed[dist_shown]),
            "max_ratio": float(ratio2.max()),
            "instances": int(ratio2.size),
        },
        "selective": {
            "residual": to_list(np.asarray(dist.selective_residual)[dist_shown]),
            "constant_residual": to_list(residual[dist_shown]),
            "fraction_regularised": to_list(np.asarray(dist.selective_fraction)[dist_shown]),
            "max_increase": float(
                np.max(
                    np.diff(np.asarray(dist.selective_residual), axis=1)
                    / np.asarray(dist.selective_residual)[:, :1]
                )
            ),
        },
        "thm5": {
            "sigma": to_list(thm5.sigma),
            "risk": to_list(np.asarray(corrected.value) / norm2),
            "lower": to_list(np.asarray(corrected.lower) / norm2),
            "upper": to_list(np.asarray(corrected.upper) / norm2),
            "printed_lower": to_list(np.asarray(printed.lower) / norm2),
            "below_printed_lower": float(
                np.mean(np.asarray(printed.value) < np.asarray(printed.lower))
            ),
        },
    }


def plot(results: dict):
    """Four panels (a)–(d) of the module doc."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13.0, 9.0))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ax = axes[0, 0]
    g = results["gap"]
    for i, lam in enumerate(g["lam"]):
        t, c = np.asarray(g["times"][i]), colors[i % len(colors)]
        ax.plot(t[1:], g["delta"][i][1:], color=c, label=f"Δ(t), λ = {lam:.3g}")
        ax.plot(t[1:], g["thm3_bound"][i][1:], color=c, linestyle="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow time t = η·step")
    ax.set_ylabel("‖f_θt(x*) − f̄_θ̄t(x*)‖ (dashed: Thm 3 bound)")
    ax.set_title(f"(a) network vs linearisation (Thm 3); max Δ/bound over {g['instances']} "
                 f"instances {g['max_ratio']:.3g}", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    d = results["distance"]
    for i, lam in enumerate(d["lam"]):
        c = colors[i % len(colors)]
        ax.plot(d["steps"], d["distance"][i], color=c, label=f"λ = {lam:.3g}")
        ax.plot(d["steps"], d["thm2_bound"][i], color=c, linestyle="--")
        ax.plot(d["steps"], d["thm2_printed"][i], color=c, linestyle=":")
    ax.set_yscale("log")
    ax.set_xlabel("split step")
    ax.set_ylabel("‖θ_t − θ_0‖ (dashed: Thm 2 corrected; dotted: printed)")
    ax.set_title(f"(b) distance to θ_0 (Thm 2); max distance/bound over {d['instances']} "
                 f"instances {d['max_ratio']:.3g}", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7)
    ax = axes[1, 0]
    s = results["selective"]
    for i, frac in enumerate(s["fraction_regularised"]):
        c = colors[i % len(colors)]
        ax.plot(s["residual"][i], color=c, label=f"selective (λ_t on in {100 * frac:.0f}%)")
        ax.plot(s["constant_residual"][i], color=c, linestyle="--")
    ax.set_yscale("log")
    ax.set_xlabel("split step")
    ax.set_ylabel("‖f_θt(x*) − y*‖ (dashed: constant λ)")
    ax.set_title(f"(c) selective vs constant λ (Thm 1); largest step increase / r_0 "
                 f"{s['max_increase']:.2g}", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    t5 = results["thm5"]
    ax.scatter(t5["sigma"], t5["risk"], s=8, label="KRR risk ‖σ(K+σI)⁻¹ỹ‖²/‖ỹ‖²")
    ax.scatter(t5["sigma"], t5["lower"], s=4, marker="v", label="Thm 5 lower (σ/(σ+λ_max))²")
    ax.scatter(t5["sigma"], t5["upper"], s=4, marker="^", label="Thm 5 upper (σ/(σ+λ_min))²")
    ax.scatter(t5["sigma"], t5["printed_lower"], s=6, marker="x", color="tab:red",
               label=f"printed lower with ‖y*‖ (above the risk in "
               f"{100 * t5['below_printed_lower']:.0f}%)")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ridge σ")
    ax.set_ylabel("risk / ‖ỹ‖²")
    ax.set_title("(d) Thm 5 sandwich on random kernels, ‖ỹ‖ = 0.1‖y*‖", fontsize=9)
    ax.legend(fontsize=7)
    fig.suptitle("Rahimi Afzal et al. 2025, Thms 1–3, 5: the claims' simulations")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
