"""Sec 6 of Shachaf et al. 2021 (no figure in the paper): ReLU fine-tuning in the NTK regime.

What is plotted: the clipped-ℓ1 test risk ``E min(|f(x) − xᵀθ_T|, 1)`` of a wide two-layer
ReLU network (fixed ±1 output layer, 1/√m scaling) pretrained by GD on a linear source task
``θ_S`` and then fine-tuned by GD on ``n`` target samples of ``θ_T = θ_S + g·u``, against the
task gap ``g = ‖θ_T − θ_S‖``, one panel per ``n``. Overlaid: the risk of the kernel predictor
``f_S + H^∞(·, X)(H^∞)⁻¹ỹ`` that the NTK theory says the network follows, and the main term
``6‖θ_T − θ_S‖/√n`` of the Cor 6.3 bound (the O-term has no stated constant). Bands are
mean ± std over repeats; the simulation is
:func:`ntsim.theory.linear_teachers.simulate_relu_fine_tuning`, vmapped over repeats.

Run: ``ntsim run linear_teachers/relu_kernel_vs_network [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ntsim.core import sweep_keys
from ntsim.experiment import check_int_fields
from ntsim.theory import linear_teachers as lt


@dataclass(frozen=True)
class Config:
    """Sec 6 setting with linear teachers (Cors. 6.2, 6.3); the sizes are ours, not the
    paper's (it has no Sec 6 experiment)."""

    d: int = 10  # input dimension (ours)
    n_source: int = 40  # source samples for pretraining (ours)
    n_values: tuple[int, ...] = (10, 20, 40)  # target sample sizes (ours)
    gap_norms: tuple[float, ...] = (0.1, 0.3, 1.0)  # ‖θ_T − θ_S‖ (ours)
    width: int = 10_000  # m, hidden width
    init_scale: float = 0.1  # κ: w_r(0) ~ N(0, κ² I)
    pretrain_steps: int = 300
    fine_tune_steps: int = 200
    num_test: int = 2000  # fresh unit-norm test inputs per repeat
    repeats: int = 8

    def __post_init__(self):
        check_int_fields(
            self, ("d", "n_source", "width", "pretrain_steps", "fine_tune_steps", "num_test")
        )
        if self.repeats < 2:
            raise ValueError(f"Config.repeats must be >= 2 for a std band, got {self.repeats}.")
        if not self.n_values or min(self.n_values) <= 0:
            raise ValueError(f"Config.n_values must be positive integers, got {self.n_values}.")
        if not self.gap_norms or min(self.gap_norms) <= 0:
            raise ValueError(f"Config.gap_norms must be positive, got {self.gap_norms}.")
        if not self.init_scale > 0:
            raise ValueError(f"Config.init_scale must be positive, got {self.init_scale!r}.")


SCALES = {
    "quick": Config(width=1024, pretrain_steps=150, fine_tune_steps=100, num_test=500, repeats=4),
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Risks of the network and the kernel predictor over (n, gap) for ``repeats`` draws."""

    def one_repeat(k):
        return lt.simulate_relu_fine_tuning(
            k,
            d=config.d,
            n_source=config.n_source,
            n_values=config.n_values,
            gap_norms=config.gap_norms,
            width=config.width,
            init_scale=config.init_scale,
            pretrain_steps=config.pretrain_steps,
            fine_tune_steps=config.fine_tune_steps,
            num_test=config.num_test,
        )

    out = sweep_keys(one_repeat, key, config.repeats, progress=True, description="relu repeats")
    return {
        "n_values": list(config.n_values),
        "gap_norms": list(config.gap_norms),
        "width": config.width,
        **{name: np.asarray(value) for name, value in out.items()},  # (repeats, n, gap)
    }


def plot(results: dict):
    """One panel per n: risk vs ‖θ_T − θ_S‖ for the network, the kernel predictor, Cor 6.3."""
    import matplotlib.pyplot as plt

    n_values, gaps = results["n_values"], np.asarray(results["gap_norms"])
    fig, axes = plt.subplots(1, len(n_values), figsize=(4.2 * len(n_values), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for i, (ax, n) in enumerate(zip(axes, n_values, strict=True)):
        for name, label, style in (
            ("network_risk", "fine-tuned network", dict(color="C0", marker="o")),
            ("kernel_risk", "kernel predictor (H^∞)", dict(color="C1", ls="--", marker="s")),
        ):
            values = np.asarray(results[name])[:, i, :]
            mean, std = values.mean(0), values.std(0)
            ax.plot(gaps, mean, label=label, **style)
            ax.fill_between(gaps, mean - std, mean + std, color=style["color"], alpha=0.2)
        bound = np.asarray(results["cor6_3_bound"])[:, i, :].mean(0)
        ax.plot(gaps, bound, color="k", ls=":", label="Cor 6.3 main term 6‖θ_T−θ_S‖/√n")
        ax.set(xscale="log", yscale="log", title=f"n = {n} target samples")
        ax.set_xlabel("task gap ‖θ_T − θ_S‖")
    axes[0].set_ylabel("clipped-ℓ1 test risk E min(|f − y|, 1)")
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle(
        f"Shachaf et al. 2021, Sec 6: two-layer ReLU (m = {results['width']}) fine-tuned from "
        "pretrained weights vs its NTK kernel predictor"
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
