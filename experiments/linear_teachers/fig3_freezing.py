"""Fig 3 of Shachaf et al. 2021 (Sec 5, Thm 5.5): freezing the first layer vs fine-tuning.

What is plotted: the population test risk ``R(β) = ‖θ_T − β‖²`` (``Σ = I``) of three
two-layer linear networks ``β = W_1 w_2`` (hidden width ``d``) trained by GD on ``n`` target
samples of ``y = Xθ_T``, against ``n``:

* "Frozen": ``W_1`` fixed after pretraining, only ``w_2`` trained;
* "Vanilla": both layers trained from a fresh small init ``N(0, σ₀²)`` on the target only;
* "Finetune": both layers trained from the pretrained weights.

Pretraining is GD from ``N(0, σ₀²)`` (δ-approximately balanced) on ``n_S ≥ d`` samples of the
source ``θ_S`` (``‖θ_S‖ = 1``); ``θ_T = θ_S + 0.5·ξ/√d``, ``ξ ~ N(0, I)`` (our defaults;
the paper gives no sizes).
Overlays: Vanilla ``((d − n)/d)‖θ_T‖²`` (min-norm interpolation, in expectation) and the
min-norm risk ``‖P_⊥θ_T‖²`` of the same draws; Finetune
eq. (5) with ``L = 2`` (:func:`~ntsim.theory.linear_teachers.deep_risk`, with the pretrained
``β_S`` as source); Frozen ``R(c*β_S)``, ``c* = ⟨Xβ_S, y⟩/‖Xβ_S‖²`` (Thm 5.5), and the
``n``-independent floor ``min_c R(cβ_S)``. Bands are mean ± std over seeds (vmapped).

The simulation is :func:`ntsim.theory.linear_teachers.simulate_freezing` (the Fig 3 claims
read the same function): GD is layer-wise on the paper's ``(1/n)‖Xβ − y‖²``; all ``n`` of a
seed share the target inputs (nested prefixes) and run in one vmap, the rows beyond ``n``
zeroed (they add nothing to the loss or its gradient). The step size is
``η = eta_scale/λ_max(XᵀX/n)``.

Caveat (found here): Thm 5.5 needs a rank-one frozen ``W_1``; pretraining from
``N(0, σ₀²)`` leaves the init ``W_1(0)`` (``‖W_1(0)‖_F² ≈ σ₀²d²``, i.e. ≈ 1 at the default
σ₀ = 0.01, d = 100) in the frozen layer, and long GD on ``w_2`` then fits the target through
those small directions: the Frozen risk drifts below the floor as ``n`` grows.
``--set init_scale=0.001`` makes ``W_1`` rank one to ~1% and the Frozen curve flat.

Run: ``ntsim run linear_teachers/fig3_freezing [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import Validated, param
from ntsim.theory import linear_teachers as lt


@dataclass(frozen=True)
class Config(Validated):
    """Fig 3 setting (ours: d, n, steps and step sizes are not in the paper)."""

    d: int = param(100, "input dimension = hidden width", low=2, shape=True)
    n_values: tuple[int, ...] = param(
        tuple(range(5, 100, 5)), "target sample sizes (n < d, Sec 3)", low=1, increasing=True,
        allowed="1 ≤ n ≤ d − 1, increasing", shape=True,
    )  # fmt: skip
    source_ratio: int = param(3, "n_S = source_ratio · d pretraining samples", low=1, shape=True)
    task_noise: float = param(0.5, "θ_T = θ_S + task_noise · N(0, I)/√d · ‖θ_S‖", low=0, open=True)
    init_scale: float = param(0.01, "σ₀: entries of the random inits ~ N(0, σ₀²)", low=0, open=True)
    eta_scale: float = param(
        0.15, "η = eta_scale / λ_max(XᵀX/n) (pretraining: of the source X); below 0.5 for "
        "GD stability at ‖β‖ ≈ 1", low=0, high=0.5, open=True,
    )  # fmt: skip
    pretrain_steps: int = param(
        3000, "GD steps of pretraining on the n_S source samples", low=1, shape=True
    )
    fine_tune_steps: int = param(
        10_000, "GD steps of fine-tuning, for all three models", low=1, shape=True
    )
    seeds: int = param(
        8, "draws of (θ_S, θ_T, data, inits), vmapped (≥ 2 for a std band)", low=2, shape=True
    )

    def check(self):
        if max(self.n_values) >= self.d:
            raise ValueError(
                f"Config.n_values must lie in [1, d − 1] = [1, {self.d - 1}] (n < d, Sec 3), "
                f"got {self.n_values}."
            )


SCALES = {
    "quick": Config(
        d=30,
        n_values=(3, 6, 9, 12, 15, 18, 21, 24, 27),
        pretrain_steps=1500,
        fine_tune_steps=4000,
        seeds=6,
    ),  # fmt: skip
    "full": Config(),
}


def setting(config: Config) -> lt.FreezingSetting:
    """The :func:`~ntsim.theory.linear_teachers.simulate_freezing` setting of ``config``."""
    return lt.FreezingSetting(
        d=config.d,
        n_values=tuple(config.n_values),
        task_noise=config.task_noise,
        draws=config.seeds,
        training=lt.FreezingTraining(
            source_ratio=config.source_ratio,
            init_scale=config.init_scale,
            eta_scale=config.eta_scale,
            pretrain_steps=config.pretrain_steps,
            fine_tune_steps=config.fine_tune_steps,
        ),
    )


def run(config: Config, key) -> dict:
    """Risks (simulated and theory) of Frozen / Vanilla / Finetune per (seed, n)."""
    with jax.enable_x64(True):
        sim = lt.simulate_freezing(key, setting(config), progress=True)
        sim = jax.tree_util.tree_map(np.asarray, sim)
    gd = sim.gd
    if gd["nonfinite"].any():
        raise FloatingPointError("fig3_freezing: GD diverged; lower eta_scale.")
    n = np.asarray(config.n_values, dtype=float)
    return {
        "d": config.d,
        "n_values": list(config.n_values),
        "n_source": config.source_ratio * config.d,
        "fine_tune_steps": config.fine_tune_steps,
        "theory_vanilla": (config.d - n) / config.d * sim.target_norm_sq[:, None],
        "theory_vanilla_min_norm": sim.vanilla,  # ‖P_⊥θ_T‖², (seeds, n)
        "theory_finetune": sim.finetune,  # eq. (5), L = 2, from the pretrained β_S
        "theory_frozen": sim.frozen,  # R(c*β_S)
        "frozen_floor": sim.floor,
        "target_norm_sq": sim.target_norm_sq,
        **{k: v for k, v in gd.items() if k != "nonfinite"},
    }


def plot(results: dict):
    """Test risk vs n for Frozen / Vanilla / Finetune with their theory overlays."""
    import matplotlib.pyplot as plt

    n = np.asarray(results["n_values"])
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    for name, label, color, theory, theory_label in (
        ("frozen", "Frozen (W₁ fixed)", "C0", "theory_frozen", "R(c*β_S), Thm 5.5"),
        ("vanilla", "Vanilla (from scratch)", "C1", "theory_vanilla", "((d−n)/d)‖θ_T‖²"),
        ("finetune", "Finetune (all layers)", "C2", "theory_finetune", "eq. (5), L = 2"),
    ):
        values = np.asarray(results[f"{name}_risk"])
        mean, std = values.mean(0), values.std(0)
        ax.plot(n, mean, color=color, marker="o", ms=4, label=f"{label}: GD")
        ax.fill_between(n, mean - std, mean + std, color=color, alpha=0.2)
        ax.plot(n, np.asarray(results[theory]).mean(0), color=color, ls="--",
                label=f"{label}: theory {theory_label}")  # fmt: skip
        if name == "vanilla":
            ax.plot(n, np.asarray(results["theory_vanilla_min_norm"]).mean(0), color=color,
                    ls=":", label=f"{label}: min-norm ‖P_⊥θ_T‖² (same draws)")  # fmt: skip
    floor = float(np.mean(results["frozen_floor"]))
    ax.axhline(floor, color="k", ls=":", lw=1, label=f"floor min_c R(cβ_S) = {floor:.3f}")
    ax.set(xlabel="number of target samples n", ylabel="test loss R(β) = ‖θ_T − β‖² (Σ = I)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7.5, loc="upper right")
    ax.set_title(
        f"Shachaf et al. 2021, Fig 3: two-layer linear nets, d = {results['d']}, "
        f"n_S = {results['n_source']}\n(mean ± std over {np.shape(results['frozen_risk'])[0]} "
        f"seeds, {results['fine_tune_steps']} GD steps; frozen W₁: "
        f"{100 * np.mean(results['w1_off_rank_one']):.0f}% of ‖W₁‖²_F off rank one)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
