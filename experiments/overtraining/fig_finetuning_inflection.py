"""Theory figures T3–T6 (λ) (Springer et al. 2025, Sec 4.3, Thms 4.6, 4.7, App A.24–A.27).

What is plotted (analogues of the paper's Fig 4 and Fig 5 top; the paper has no
linear-model figure). Top row, an illustration on the project's config R (no claim reads
config R): fine-tuning is GD on the matrices (eqs. 16–17, m = ∞, η = 0.01) from the ideal
checkpoints ``n = 0..d`` (markers), against the converged closed forms (lines):

* (a) ``Δ_pre(n) = L_pre(θ^n(K)) − L_pre(θ^n(0)) = Σ_{i≤n}((σ^ft_i − σ^pre_i)/(1+λ))²``,
  non-decreasing in ``n`` (progressive sensitivity, Thm 4.6), one curve per λ;
* (b) the post-fine-tuning pretraining loss ``L_pre(θ^n(K))`` per λ with the inflection
  (Def 4.2) starred, and the pretrained ``L_pre(θ^n(0)) = Σ_{i>n}σ_i²`` dashed (Thm 4.7);
* (c) the ID loss ``‖θ^n(K) − A^ft‖²`` at ``n = d`` vs λ: regularisation costs ID loss;
* (d) the inflection ``r(λ)``: larger λ delays it (Thm 4.7 part 2 in its corrected
  direction; the appendix's printed ``r_{λ1} ≤ r_{λ2}`` is refuted by
  ``overtraining.thm4_7.regularisation_printed``).

Bottom row, the same statements on the claims' own simulations, run here by the same
functions with the claims' settings of the same scale:

* (e) Thm 4.6: ``Δ_pre(n)/Γ²`` per random instance
  (:func:`~ntsim.theory.overtraining.simulate_progressive_sensitivity`,
  :data:`~ntsim.theory.overtraining.SENSITIVITY_SETTINGS`; claims ``overtraining.thm4_6.*``);
* (f) Thm 4.7.2: the inflection ``r(λ)`` per random instance
  (:func:`~ntsim.theory.overtraining.simulate_regularisation`,
  :data:`~ntsim.theory.overtraining.REGULARISATION_SETTINGS`; claims
  ``overtraining.thm4_7.regularisation_*``);
* (g) Lemma A.11 (corrected): the modes after long GD from ``n = d`` against
  ``(σ^ft + λσ^pre)/(1 + λ)`` (and the printed ``(σ^pre + λσ^ft)/(1 + λ)``, grey)
  (:func:`~ntsim.theory.overtraining.simulate_fixed_point`,
  :data:`~ntsim.theory.overtraining.FIXED_POINT_SETTINGS`; claims
  ``overtraining.lemma_a11.*``);
* (h) Thm 4.7.1 at ``λ = 0``: the increment ``L_pre(n) − L_pre(n−1)`` after fine-tuning
  against ``σ^ft_n/σ^pre_n``; its sign flips at 2
  (:func:`~ntsim.theory.overtraining.simulate_misalignment_threshold`,
  :data:`~ntsim.theory.overtraining.THRESHOLD_SETTINGS`; claim
  ``overtraining.thm4_7.misalignment_threshold``);
* (i) the simulation caveat: ``L_pre(n)/‖A^ft − A^pre‖²`` after fine-tuning from *real*
  checkpoints for ``ηK = 1`` and ``ηK = 30``, against the ideal ones
  (:func:`~ntsim.theory.overtraining.simulate_long_finetuning`,
  :data:`~ntsim.theory.overtraining.LONG_FINETUNING_SETTINGS`; claim
  ``overtraining.caveat.long_finetuning_erases``).

The ideal init is used on purpose: from real checkpoints long fine-tuning learns the
unlearned modes and erases the effect (claim ``overtraining.caveat.long_finetuning_erases``).
Setting: the project's config R, ``σ^pre_i = 4·0.6^{i−1}``, ``σ^ft_i = 0.95^{i−1}``.

Run: ``ntsim run overtraining/fig_finetuning_inflection [--scale full]`` or this file.
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
    """The project's config R, λ ∈ {0, 1, 3}, η = 0.01."""

    d: int = param(10, "dimension (config R)", low=2, shape=True)
    pre_first: float = param(4.0, "σ^pre_1 (config R)", low=0, open=True)
    pre_ratio: float = param(0.6, "σ^pre_{i+1}/σ^pre_i (config R)", low=0, open=True)
    ft_first: float = param(1.0, "σ^ft_1 (config R)", low=0, open=True)
    ft_ratio: float = param(0.95, "σ^ft_{i+1}/σ^ft_i (config R)", low=0, open=True)
    regs: tuple[float, ...] = param((0.0, 1.0, 3.0), "λ of the GD runs", low=0, shape=True)
    learning_rate: float = param(
        0.01, "η; A.8 needs 4η(λ+2)Γ < 1", low=0, open=True,
        allowed="(0, 1/(4(max(regs) + 2)Γ)), Γ = max(pre_first, ft_first) (A.8)",
    )  # fmt: skip
    num_steps: int = param(
        2000, "K: every learned mode within 1e-10 of its fixed point", low=2, shape=True
    )
    reg_grid_max: float = param(8.0, "the λ grid of panels (c), (d) spans [0, reg_grid_max]", low=0)
    reg_grid_points: int = param(161, "number of λ on that grid (evenly spaced)", low=2, shape=True)
    sensitivity: ot.SensitivitySetting = param(
        ot.SENSITIVITY_SETTINGS["full"],
        "the claims' simulations (same setting types and values as the claims at this scale)",
    )
    regularisation: ot.RegularisationSetting = param(
        ot.REGULARISATION_SETTINGS["full"],
        "(f) Thm 4.7.2: simulate_regularisation, the inflection r(λ) per random instance",
    )
    fixed: ot.FixedPointSetting = param(
        ot.FIXED_POINT_SETTINGS["full"],
        "(g) Lemma A.11: simulate_fixed_point, the modes after long GD from n = d",
    )
    threshold: ot.ThresholdSetting = param(
        ot.THRESHOLD_SETTINGS["full"],
        "(h) Thm 4.7.1 at λ = 0: simulate_misalignment_threshold, increments vs σ^ft_n/σ^pre_n",
    )
    long: ot.LongFinetuningSetting = param(
        ot.LONG_FINETUNING_SETTINGS["full"],
        "(i) caveat: simulate_long_finetuning, real vs ideal checkpoints after short and long ηK",
    )

    def check(self):
        gamma = max(self.pre_first, self.ft_first)
        if not 4 * self.learning_rate * (max(self.regs) + 2) * gamma < 1:
            raise ValueError(
                "Config.learning_rate violates Assumption A.8, 4η(λ+2)Γ < 1: got "
                f"η = {self.learning_rate}, λ = {max(self.regs)}, Γ = {gamma}."
            )


SCALES = {
    "quick": Config(
        num_steps=1500,
        reg_grid_points=81,
        sensitivity=ot.SENSITIVITY_SETTINGS["quick"],
        regularisation=ot.REGULARISATION_SETTINGS["quick"],
        fixed=ot.FIXED_POINT_SETTINGS["quick"],
        threshold=ot.THRESHOLD_SETTINGS["quick"],
        long=ot.LONG_FINETUNING_SETTINGS["quick"],
    ),  # seconds on CPU
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """GD from every ideal checkpoint for each λ, and the closed forms on a λ grid."""
    with jax.enable_x64(True):
        pre = ot.geometric_spectrum(config.d, config.pre_first, config.pre_ratio)
        ft = ot.geometric_spectrum(config.d, config.ft_first, config.ft_ratio)
        k_u, k_v, k_sens, k_reg = jax.random.split(key, 4)
        k_fixed, k_thr, k_long = (jax.random.fold_in(key, i) for i in (4, 5, 6))
        u, v = random_orthogonal(k_u, config.d), random_orthogonal(k_v, config.d)

        def gd(reg):
            _, pre_loss, id_loss = ot.finetune_ideal_checkpoints(
                pre, ft, u, v, learning_rate=config.learning_rate, reg=reg,
                num_steps=config.num_steps,
            )  # fmt: skip
            return pre_loss, id_loss

        regs = jnp.asarray(config.regs)
        gd_pre, gd_id = jax.jit(jax.vmap(gd))(regs)

        def closed(reg):
            return ot.post_finetuning_losses(ot.fixed_point(pre, ft, reg), pre, ft)

        closed_pre, closed_id = jax.vmap(closed)(regs)
        grid = jnp.linspace(0.0, config.reg_grid_max, config.reg_grid_points)
        grid_pre, grid_id = jax.vmap(closed)(grid)
        initial = jnp.concatenate([jnp.cumsum((pre**2)[::-1])[::-1], jnp.zeros(1)])
        out = {
            "gd_pretrain": gd_pre,
            "gd_id": gd_id,
            "gd_delta": gd_pre - initial,
            "closed_pretrain": closed_pre,
            "closed_delta": closed_pre - initial,
            "gd_inflection": ot.inflection_point(gd_pre),
            "closed_inflection": ot.inflection_point(closed_pre),
            "initial": initial,
            "reg_grid": grid,
            "grid_id_full": grid_id[:, -1],
            "grid_inflection": ot.inflection_point(grid_pre),
            "spectrum_pre": pre,
            "spectrum_ft": ft,
        }
        sens = shared_run(ot.simulate_progressive_sensitivity, k_sens, config.sensitivity)
        gamma = jnp.maximum(sens.pre[:, 0], sens.ft.max(axis=1))
        out["claim_delta"] = sens.delta / gamma[:, None] ** 2  # (instances, d + 1)
        reg_run = shared_run(ot.simulate_regularisation, k_reg, config.regularisation)
        out["claim_regs"] = reg_run.regs
        out["claim_inflection"] = ot.inflection_point(reg_run.pre_loss)  # (instances, λ)
        fixed = shared_run(ot.simulate_fixed_point, k_fixed, config.fixed)
        gamma = fixed.gamma[:, None]
        out["fixed_modes"] = fixed.modes / gamma  # (instances, d)
        out["fixed_corrected"] = jax.vmap(ot.fixed_point)(fixed.pre, fixed.ft, fixed.reg) / gamma
        out["fixed_printed"] = (
            jax.vmap(ot.fixed_point_printed)(fixed.pre, fixed.ft, fixed.reg) / gamma
        )
        threshold = shared_run(ot.simulate_misalignment_threshold, k_thr, config.threshold)
        out["threshold_ratio"] = threshold.ft / threshold.pre  # (instances, d)
        out["threshold_increment"] = threshold.increments
        long = shared_run(ot.simulate_long_finetuning, k_long, config.long)
        scale = long.distance[:, None]
        for name in ("real_long", "real_short", "ideal_short", "ideal_long"):
            out[f"long_{name}"] = getattr(long, name) / scale  # (instances, d + 1)
        out = {name: np.asarray(value).tolist() for name, value in out.items()}
    return {
        **out,
        "regs": list(config.regs),
        "d": config.d,
        "eta_k": config.learning_rate * config.num_steps,
        "long_eta_k": [config.long.learning_rate * config.long.short,
                       config.long.learning_rate * config.long.long],
    }  # fmt: skip


def plot(results: dict):
    """Config R (a–d) and the claims' simulations (e–i), on a 3 × 3 grid."""
    import matplotlib.pyplot as plt

    d = results["d"]
    n = np.arange(d + 1)
    fig, axes = plt.subplots(3, 3, figsize=(17.0, 14.4))
    ax_delta, ax_pre, ax_id, ax_r, ax_sens, ax_reg, ax_fixed, ax_thr, ax_long = axes.ravel()
    colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(results["regs"])))
    for j, (reg, color) in enumerate(zip(results["regs"], colors, strict=True)):
        ax_delta.plot(n, results["closed_delta"][j], color=color, label=f"λ = {reg:g}")
        ax_delta.plot(n, results["gd_delta"][j], "o", color=color, markersize=4)
        ax_pre.plot(n, results["closed_pretrain"][j], color=color, label=f"λ = {reg:g}")
        ax_pre.plot(n, results["gd_pretrain"][j], "o", color=color, markersize=4)
        r = results["gd_inflection"][j]
        if r < d:
            ax_pre.plot(r, results["gd_pretrain"][j][r], "*", markersize=15, color=color,
                        markeredgecolor="k")  # fmt: skip
    ax_pre.plot(n, results["initial"], "k--", label="pretrained, before FT")
    for ax in (ax_delta, ax_pre):
        ax.plot([], [], "ko", markersize=4, label="GD on W1, W2 (m = ∞)")
        ax.set_xlabel("checkpoint n (features learned)")
    ax_pre.plot([], [], "*", color="gray", markeredgecolor="k", markersize=12, label="inflection")
    ax_delta.set_ylabel(r"$\Delta_{pre}(n) = L_{pre}(\theta^n(K)) - L_{pre}(\theta^n(0))$")
    ax_delta.set_title("Progressive sensitivity (Thm 4.6; Fig 4 analogue)", fontsize=10)
    ax_pre.set_yscale("log")
    ax_pre.set_ylabel(r"$L_{pre}(\theta^n(K))$")
    ax_pre.set_title(
        f"Post-FT pretraining loss (Thm 4.7; Fig 5 top analogue), ηK = {results['eta_k']:g}",
        fontsize=10,
    )
    ax_delta.legend(fontsize=8)
    ax_pre.legend(fontsize=8)
    grid = np.asarray(results["reg_grid"])
    ax_id.plot(grid, results["grid_id_full"], label="closed form, n = d")
    ax_id.plot(results["regs"], [row[-1] for row in results["gd_id"]], "ko", label="GD, n = d")
    ax_id.set_xlabel("regularisation λ")
    ax_id.set_ylabel(r"ID loss $\|\theta^d(K) - A^{ft}\|_F^2$")
    ax_id.set_title("Regularisation costs ID performance (Thm 4.7.2)", fontsize=10)
    ax_id.legend(fontsize=8)
    ax_r.step(grid, results["grid_inflection"], where="post", label="closed form")
    ax_r.plot(results["regs"], results["gd_inflection"], "ko", label="GD")
    ax_r.set_xlabel("regularisation λ")
    ax_r.set_ylabel(f"inflection point r(λ) (r = {d}: none)")
    ax_r.set_title("Larger λ delays the inflection (Thm 4.7.2, corrected)", fontsize=10)
    ax_r.legend(fontsize=8)
    delta = np.asarray(results["claim_delta"])
    for row in delta:
        ax_sens.plot(np.arange(delta.shape[1]), row, color="tab:blue", alpha=0.25, linewidth=0.7)
    ax_sens.set_xlabel("checkpoint n (features learned)")
    ax_sens.set_ylabel(r"$\Delta_{pre}(n)/\Gamma^2$")
    ax_sens.set_title(f"(e) Thm 4.6 on {len(delta)} random instances (claims' simulation)",
                      fontsize=10)  # fmt: skip
    inflection = np.asarray(results["claim_inflection"])
    regs = np.asarray(results["claim_regs"])
    jitter = np.linspace(-0.15, 0.15, len(inflection))
    for k, row in enumerate(inflection):
        ax_reg.plot(regs, row + jitter[k], color="tab:green", alpha=0.3, linewidth=0.7)
    ax_reg.plot(regs, inflection.mean(axis=0), "ko-", label="mean over instances")
    ax_reg.set_xlabel("regularisation λ")
    ax_reg.set_ylabel("inflection point r(λ) (jittered)")
    ax_reg.set_title(f"(f) Thm 4.7.2 on {len(inflection)} random instances (claims' simulation)",
                     fontsize=10)  # fmt: skip
    ax_reg.legend(fontsize=8)

    corrected = np.asarray(results["fixed_corrected"]).ravel()
    modes = np.asarray(results["fixed_modes"]).ravel()
    ax_fixed.plot(np.asarray(results["fixed_printed"]).ravel(), modes, "o", color="gray",
                  markersize=2, alpha=0.4, label="printed (σ^pre + λσ^ft)/(1+λ)")  # fmt: skip
    ax_fixed.plot(corrected, modes, "o", color="tab:blue", markersize=3, alpha=0.6,
                  label="corrected (σ^ft + λσ^pre)/(1+λ)")  # fmt: skip
    ax_fixed.plot([0, modes.max()], [0, modes.max()], "k--", linewidth=1)
    ax_fixed.set_xlabel("predicted fixed point / Γ")
    ax_fixed.set_ylabel(r"diag$(U^\top\theta(K)V)$ / Γ after long GD from n = d")
    ax_fixed.set_title(f"(g) Lemma A.11 on {len(results['fixed_modes'])} instances "
                       "(claims' simulation)", fontsize=10)  # fmt: skip
    ax_fixed.legend(fontsize=8)

    ratio = np.asarray(results["threshold_ratio"]).ravel()
    increment = np.asarray(results["threshold_increment"]).ravel()
    up = increment > 0
    ax_thr.plot(ratio[up], increment[up], "o", color="tab:red", markersize=3, alpha=0.6,
                label="L_pre(n) > L_pre(n−1)")  # fmt: skip
    ax_thr.plot(ratio[~up], increment[~up], "o", color="tab:blue", markersize=3, alpha=0.6,
                label="L_pre(n) ≤ L_pre(n−1)")  # fmt: skip
    ax_thr.axvline(2.0, color="k", linestyle="--", label="σ^ft_n = 2σ^pre_n")
    ax_thr.axhline(0.0, color="gray", linewidth=0.7)
    ax_thr.set_xlabel(r"$\sigma^{ft}_n / \sigma^{pre}_n$")
    ax_thr.set_ylabel(r"$(L_{pre}(\theta^n(K)) - L_{pre}(\theta^{n-1}(K)))/\Gamma^2$, λ = 0")
    ax_thr.set_title(f"(h) Thm 4.7.1 on {len(results['threshold_ratio'])} instances "
                     "(claim's simulation)", fontsize=10)  # fmt: skip
    ax_thr.legend(fontsize=8)

    short_k, long_k = results["long_eta_k"]
    width = len(results["long_real_long"][0])
    for name, color, style, thick, label in (
        ("ideal_long", "gray", "-", 3.0, f"ideal checkpoints, ηK = {long_k:g}"),
        ("ideal_short", "k", "--", 0.8, f"ideal checkpoints, ηK = {short_k:g}"),
        ("real_short", "tab:blue", "-", 0.8, f"real checkpoints, ηK = {short_k:g}"),
        ("real_long", "tab:red", "-", 0.8, f"real checkpoints, ηK = {long_k:g}"),
    ):
        rows = np.asarray(results[f"long_{name}"])
        for k, row in enumerate(rows):
            ax_long.plot(np.arange(width), row, linestyle=style, color=color, alpha=0.4,
                         linewidth=thick, label=label if k == 0 else None)  # fmt: skip
    ax_long.axhline(1.0, color="tab:red", linewidth=0.6)
    ax_long.set_xlabel("checkpoint n (features learned)")
    ax_long.set_ylabel(r"$L_{pre}(\theta^n(K)) / \|A^{ft} - A^{pre}\|_F^2$")
    ax_long.set_title("(i) Long fine-tuning from real checkpoints erases the curve "
                      "(claim's simulation)", fontsize=10)  # fmt: skip
    ax_long.legend(fontsize=7)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
