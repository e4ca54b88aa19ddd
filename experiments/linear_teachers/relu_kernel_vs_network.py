"""Sec 6 of Shachaf et al. 2021 (no figure in the paper): ReLU fine-tuning in the NTK regime.

What is plotted. Left panels, one per ``n``: the clipped-ℓ1 test risk
``E min(|f(x) − xᵀθ_T|, 1)`` of a wide two-layer ReLU network (fixed ±1 output layer, 1/√m
scaling) pretrained by GD on a linear source task ``θ_S`` and then fine-tuned by GD on ``n``
target samples of ``θ_T = θ_S + g·u``, against the task gap ``g = ‖θ_T − θ_S‖``. Overlaid: the
risk of the kernel predictor ``f_S + H^∞(·, X)(H^∞)⁻¹ỹ`` that the NTK theory says the network
follows, and the main terms ``2√(ỹᵀ(H^∞)⁻¹ỹ/n)`` of Thm 6.1 (eq. (11)) and ``6‖θ_T − θ_S‖/√n``
of Cor 6.3 (their O-terms have no stated constant). Bands are mean ± std over repeats. This is
the claims' simulation :func:`ntsim.theory.linear_teachers.simulate_relu_risk_runs` with
:data:`~ntsim.theory.linear_teachers.RELU_RISK_SETTINGS` of the same scale (claims
``linear_teachers.thm6_1.risk_main_term`` and ``linear_teachers.cor6_3.risk_main_term``: every
risk below its main term).

Right panel: Thm 6.1's kernel regime on the claim's own simulation
(:func:`~ntsim.theory.linear_teachers.simulate_kernel_regime` with
:data:`~ntsim.theory.linear_teachers.KERNEL_REGIME_SETTINGS` of the same scale; claim
``linear_teachers.thm6_1.kernel_regime``): the three deviations from the kernel picture —
prediction vs the kernel predictor, ``‖W_FT − W_S‖_F`` vs ``√(ỹᵀ(H^∞)⁻¹ỹ)``, and
``max_t ‖H(t) − H^∞‖₂/‖H^∞‖₂`` over both phases — against the width ``m`` (log-log; thin
lines: repeats, thick: mean; the legend gives the mean per-repeat slope the claim decides).

Run: ``ntsim run linear_teachers/relu_kernel_vs_network [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import linear_teachers as lt


@dataclass(frozen=True)
class Config(Validated):
    """Sec 6 setting with linear teachers (Cors. 6.2, 6.3); the sizes are ours, not the
    paper's (it has no Sec 6 experiment): the claims' settings of each scale."""

    risk: lt.ReluRiskSetting = param(
        lt.RELU_RISK_SETTINGS["full"], "left panels: risk over (n, gap)",
        allowed="risk.repeats ≥ 2 (a std band)",
    )  # fmt: skip
    kernel: lt.KernelRegimeSetting = param(
        lt.KERNEL_REGIME_SETTINGS["full"],
        "right panel: deviations from the kernel picture over the widths m (Thm 6.1)",
    )

    def check(self):
        if self.risk.repeats < 2:
            raise ValueError(f"Config.risk.repeats must be >= 2 for a std band, got "
                             f"{self.risk.repeats}.")  # fmt: skip


SCALES = {
    "quick": Config(risk=lt.RELU_RISK_SETTINGS["quick"], kernel=lt.KERNEL_REGIME_SETTINGS["quick"]),
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """The claims' two simulations: risks over (n, gap) and deviations over the widths."""
    k_risk, k_kernel = jax.random.split(key)
    risks = shared_run(lt.simulate_relu_risk_runs, k_risk, config.risk)  # (repeats, n, gap) each
    kernel = shared_run(
        lt.simulate_kernel_regime, k_kernel, config.kernel
    )  # (widths, repeats) each
    return {
        "n_values": list(config.risk.n_values),
        "gap_norms": list(config.risk.gap_norms),
        "width": config.risk.width,
        **{name: np.asarray(value) for name, value in risks.items()},
        "kernel_widths": list(kernel.widths),
        **{f"kernel_{name}": np.asarray(getattr(kernel, name))
           for name in ("prediction", "distance", "gram_drift", "log_loss")},
    }  # fmt: skip


def plot(results: dict):
    """One panel per n: risk vs ‖θ_T − θ_S‖ (network, kernel predictor, Thm 6.1 and Cor 6.3
    main terms); last panel: the kernel-regime deviations vs the width."""
    import matplotlib.pyplot as plt

    n_values, gaps = results["n_values"], np.asarray(results["gap_norms"])
    count = len(n_values)
    fig, axes = plt.subplots(1, count + 1, figsize=(4.2 * (count + 1), 3.9))
    for ax in axes[1:count]:
        ax.sharey(axes[0])
    for i, (ax, n) in enumerate(zip(axes[:count], n_values, strict=True)):
        for name, label, style in (
            ("network_risk", "fine-tuned network", dict(color="C0", marker="o")),
            ("kernel_risk", "kernel predictor (H^∞)", dict(color="C1", ls="--", marker="s")),
        ):
            values = np.asarray(results[name])[:, i, :]
            mean, std = values.mean(0), values.std(0)
            ax.plot(gaps, mean, label=label, **style)
            ax.fill_between(gaps, mean - std, mean + std, color=style["color"], alpha=0.2)
        for name, label, style in (
            ("thm6_1_bound", "Thm 6.1 main term 2√(ỹᵀ(H^∞)⁻¹ỹ/n)", "-."),
            ("cor6_3_bound", "Cor 6.3 main term 6‖θ_T−θ_S‖/√n", ":"),
        ):
            bound = np.asarray(results[name])[:, i, :].mean(0)
            ax.plot(gaps, bound, color="k", ls=style, label=label)
        ax.set(xscale="log", yscale="log", title=f"n = {n} target samples")
        ax.set_xlabel("task gap ‖θ_T − θ_S‖")
    axes[0].set_ylabel("clipped-ℓ1 test risk E min(|f − y|, 1)")
    axes[0].legend(fontsize=7, loc="upper left")

    ax_k = axes[count]
    widths = np.asarray(results["kernel_widths"], float)
    for name, color, label in (
        ("prediction", "C2", "prediction vs kernel predictor"),
        ("distance", "C3", "‖W_FT − W_S‖_F vs √(ỹᵀ(H^∞)⁻¹ỹ)"),
        ("gram_drift", "C4", "max_t ‖H(t) − H^∞‖₂/‖H^∞‖₂"),
    ):
        values = np.asarray(results[f"kernel_{name}"])  # (widths, repeats)
        slopes = np.polyfit(np.log(widths), np.log(values), 1)[0]
        ax_k.plot(widths, values, color=color, alpha=0.2, linewidth=0.7)
        ax_k.plot(widths, values.mean(1), color=color, marker="o", linewidth=2,
                  label=f"{label} (slope {slopes.mean():+.2f})")  # fmt: skip
    ax_k.set(xscale="log", yscale="log", xlabel="width m", ylabel="deviation")
    ax_k.set_xticks(widths, [str(int(w)) for w in widths])
    ax_k.minorticks_off()
    ax_k.set_title(f"Thm 6.1 kernel regime, {values.shape[1]} repeats (claim's simulation)",
                   fontsize=10)  # fmt: skip
    ax_k.legend(fontsize=7)
    fig.suptitle(
        f"Shachaf et al. 2021, Sec 6: two-layer ReLU (m = {results['width']}) fine-tuned from "
        "pretrained weights vs its NTK kernel predictor"
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
