"""Figure 1 of Shachaf et al. 2021: fine-tuning risk vs n when θ_T − θ_S is top/bottom aligned.

What is plotted: the population risk ``R(γ) = ‖Σ^{1/2}P_⊥(θ_T − θ_S)‖²`` of the GD
fine-tuning limit (Thm 4.1, eq. (2)) against the number of target samples ``n = 1, …, d``,
for ``Σ = diag(top_value × top, bottom_value × (d − top))`` (paper: d = 1000, 50 eigenvalues
1.5, the rest 0.3) and two task differences ``v = θ_T − θ_S`` of equal norm:

* "Top Eigen Align": ``P_{≤m} v = 0`` — ``v`` lies in the bottom span (the tasks agree on
  the top eigenvectors); best at small ``n``;
* "Bottom Eigen Align": ``P_{>m} v = 0`` — ``v`` lies in the top-``m`` span; its risk drops
  to ≈ 0 well before ``n = d``.

The simulation is :func:`ntsim.theory.linear_teachers.simulate_covariance_alignment` (the
claim ``linear_teachers.fig1.crossing`` reads it too): each repeat draws ``v`` uniformly on
the sphere of its subspace and one Gaussian ``X`` with ``d`` rows shared by both curves; all
``n`` come from that draw (nested-prefix trick, in float64). Bands are mean ± std
over repeats. Theory curves: the ridgeless deterministic equivalent
(:func:`~ntsim.theory.linear_teachers.deterministic_equivalent_risk`, an extension, not in
the paper) and its predicted crossing ``n_×`` (dotted line).

Second panel (log y): the constant-free Thm 4.2 bound (eq. (3) with ``g = ĝ = ‖Σ̃ − Σ‖₂``
from each repeat's own draw, ``m = top``; mean over repeats) above the same risks. ``ĝ`` needs
an eigenvalue problem per ``n``, so the bound is evaluated on a geometric grid of
``bound_points`` sample sizes (dense at small ``n``, where it changes fastest), using the
spiked-covariance reduction :func:`~ntsim.theory.linear_teachers.realised_deviation_spiked`.

Third panel (log y): the claim ``linear_teachers.thm4_2.deterministic`` on its own simulation
(:func:`~ntsim.theory.linear_teachers.simulate_thm4_2_deterministic` with
:data:`~ntsim.theory.linear_teachers.THM4_2_DETERMINISTIC_SETTINGS` of the same scale): random
``Σ`` (Haar basis, spectrum log-uniform on ``[0.02, 2]``), and per draw and ``n`` the ratios
lhs/rhs of the three deterministic steps of Thm 4.2 — ``R(γ)`` over eq. (3) with ``ĝ``
(worst ``m``), Davis–Kahan ``‖P_⊥V_{≤m}‖λ_m/ĝ`` (worst ``m``) and ``R(γ)/(ĝ‖P_⊥v‖²)`` — all
``≤ 1`` where the claim holds.

Run: ``ntsim run linear_teachers/fig1_covariance_alignment [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import linear_teachers as lt


@dataclass(frozen=True)
class Config(Validated):
    """Figure 1 setting (Sec 4.2). ``norm`` and ``repeats`` are unspecified in the paper."""

    d: int = param(1000, "input dimension (paper)", low=2, shape=True)
    top: int = param(
        50, "m: number of large eigenvalues (paper)", low=1, allowed="1 ≤ top < d", shape=True
    )
    top_value: float = param(
        1.5, "the top-m eigenvalues (paper)", low=0, open=True, allowed="> bottom_value > 0"
    )
    bottom_value: float = param(
        0.3, "the remaining d − m eigenvalues (paper)", low=0, open=True,
        allowed="(0, top_value)",
    )  # fmt: skip
    norm: float = param(
        1.0, "‖θ_T − θ_S‖, the same for both curves; risk scales as norm²", low=0, open=True
    )
    repeats: int = param(20, "draws of (X, v) per curve (≥ 2 for a std band)", low=2, shape=True)
    chunk_size: int = param(
        4, "repeats vmapped at once: bounds memory (~50 MB per repeat at d=1000)", low=1,
        shape=True,
    )  # fmt: skip
    bound_points: int = param(
        40, "sample sizes (geometric grid) where the Thm 4.2 bound is computed", low=1,
        shape=True,
    )  # fmt: skip
    deterministic: lt.SizesSetting = param(
        lt.THM4_2_DETERMINISTIC_SETTINGS["full"],
        "the claim's simulation (same setting type and values as the claim at this scale)",
    )

    def check(self):
        if self.top >= self.d:
            raise ValueError(f"Config.top must satisfy 1 <= top < d, got {self.top=}, {self.d=}.")
        if self.top_value <= self.bottom_value:
            raise ValueError(
                "Config.top_value must exceed Config.bottom_value (the top-m span must hold "
                f"the largest eigenvalues), got {self.top_value=}, {self.bottom_value=}."
            )


SCALES = {
    "quick": Config(  # same structure, d/5; a few seconds on CPU
        d=200, top=10, repeats=20, deterministic=lt.THM4_2_DETERMINISTIC_SETTINGS["quick"]
    ),
    "full": Config(),
}


def setting(config: Config) -> lt.CovarianceAlignmentSetting:
    """The :func:`~ntsim.theory.linear_teachers.simulate_covariance_alignment` setting of
    ``config`` (the claim ``linear_teachers.fig1.crossing`` reads the same function)."""
    return lt.CovarianceAlignmentSetting(
        d=config.d, top=config.top, top_value=config.top_value,
        bottom_value=config.bottom_value, norm=config.norm, repeats=config.repeats,
        chunk_size=config.chunk_size, bound_points=config.bound_points,
    )  # fmt: skip


def run(config: Config, key) -> dict:
    """Risk curves of both alignments over ``n = 1..d`` for ``config.repeats`` draws."""
    sim_setting = setting(config)
    k_claim = jax.random.fold_in(key, 1)  # `key` itself still draws Fig 1
    with jax.enable_x64(True):  # the nested-prefix risks cancel to ~0 as n → d (see theory)
        sim = shared_run(lt.simulate_covariance_alignment, key, sim_setting, progress=True)
        ratios = shared_run(lt.simulate_thm4_2_deterministic, k_claim, config.deterministic)
        risks = np.asarray(sim.risks)  # (repeats, 2, d)
        bound = np.asarray(sim.bound)  # (repeats, 2, len(grid))
        theory, n_cross = np.asarray(sim.theory), float(sim.crossing)
    grid = sim_setting.bound_sizes
    n = np.arange(1, config.d + 1)
    results = {
        "n": np.asarray(n).tolist(),
        "theory_crossing_n": n_cross,
        "d": config.d,
        "top": config.top,
        "top_value": config.top_value,
        "bottom_value": config.bottom_value,
        "norm": config.norm,
        "repeats": config.repeats,
        "bound_n": list(grid),
        # the claim's ratios per (n, draw): worst m for the two m-indexed steps
        "thm4_2_n": list(ratios.n_values),
        "thm4_2_d": config.deterministic.d,
        "thm4_2_bound_ratio": np.asarray(ratios.bound).max(axis=-1).tolist(),
        "thm4_2_davis_kahan_ratio": np.asarray(ratios.davis_kahan).max(axis=-1).tolist(),
        "thm4_2_null_space_ratio": np.asarray(ratios.null_space).tolist(),
    }
    for index, name in enumerate(("top_align", "bottom_align")):
        results[f"{name}_mean"] = risks[:, index].mean(axis=0).tolist()
        results[f"{name}_std"] = risks[:, index].std(axis=0, ddof=1).tolist()
        results[f"{name}_theory"] = theory[index].tolist()
        results[f"{name}_bound_mean"] = bound[:, index].mean(axis=0).tolist()
        results[f"{name}_bound_std"] = bound[:, index].std(axis=0, ddof=1).tolist()
    return results


def plot(results: dict):
    """Left: mean ± std risks, deterministic equivalents, ``n_×``. Middle: Thm 4.2 bound (log).
    Right: the claim's lhs/rhs ratios of Thm 4.2's deterministic steps (log)."""
    import matplotlib.pyplot as plt

    n = np.asarray(results["n"])
    fig, (ax, ax_bound, ax_claim) = plt.subplots(1, 3, figsize=(19.5, 4.8))
    labels = {"top_align": "Top Eigen Align", "bottom_align": "Bottom Eigen Align"}
    colors = {"top_align": ("tab:blue", "navy"), "bottom_align": ("tab:orange", "saddlebrown")}
    for name, label in labels.items():
        band, line = colors[name]
        mean = np.asarray(results[f"{name}_mean"])
        std = np.asarray(results[f"{name}_std"])
        ax.fill_between(n, mean - std, mean + std, color=band, alpha=0.25, linewidth=0)
        ax.plot(n, mean, color=band, label=f"{label}: simulation (mean ± std)")
        theory = results[f"{name}_theory"]
        ax.plot(n, theory, color=line, linestyle="--", label=f"{label}: deterministic equivalent")
    crossing = results["theory_crossing_n"]
    ax.axvline(
        crossing, color="gray", linestyle=":", label=f"predicted crossing n ≈ {crossing:.0f}"
    )
    ax.set_xlabel("number of target samples n")
    ax.set_ylabel(r"population risk $R(\gamma)$")
    ax.set_xlim(0, n[-1])
    ax.set_ylim(bottom=0)
    ax.set_title(
        f"Shachaf et al. 2021, Fig. 1: d = {results['d']}, top {results['top']} eigenvalues "
        f"{results['top_value']:g}, rest {results['bottom_value']:g}\n"
        f"‖θ_T − θ_S‖ = {results['norm']:g}, {results['repeats']} repeats",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    bound_n = np.asarray(results["bound_n"])
    for name, label in labels.items():
        band, line = colors[name]
        mean = np.asarray(results[f"{name}_mean"])
        ax_bound.plot(n[:-1], mean[:-1], color=band, label=f"{label}: risk (mean)")
        ax_bound.plot(
            bound_n,
            results[f"{name}_bound_mean"],
            color=line,
            marker="o",
            markersize=3,
            linestyle="-.",
            label=f"{label}: Thm 4.2 bound, ĝ, m = {results['top']} (mean)",
        )
    ax_bound.set_yscale("log")
    ax_bound.set_xlim(0, n[-1])
    ax_bound.set_xlabel("number of target samples n")
    ax_bound.set_ylabel(r"$R(\gamma)$ and bound (log scale)")
    ax_bound.set_title(
        r"Thm 4.2 with $\hat g = \|\tilde\Sigma - \Sigma\|_2$ of each draw (no constant); "
        f"\nbound on {len(bound_n)} geometric n values; risk at n = d is 0 (not shown)",
        fontsize=10,
    )
    ax_bound.legend(fontsize=8)
    claim_n = np.asarray(results["thm4_2_n"], float)
    for offset, (name, color, label) in zip((-0.25, 0.0, 0.25), (
        ("thm4_2_bound_ratio", "tab:purple", "R(γ) / eq. (3) with ĝ (worst m)"),
        ("thm4_2_davis_kahan_ratio", "tab:green", "‖P_⊥V_≤m‖λ_m/ĝ (worst m)"),
        ("thm4_2_null_space_ratio", "tab:red", "R(γ)/(ĝ‖P_⊥v‖²)"),
    ), strict=True):  # fmt: skip
        values = np.asarray(results[name])  # (n, draws)
        spread = np.linspace(-0.08, 0.08, values.shape[1]) + offset
        x = claim_n[:, None] * (1 + 0.1 * spread[None, :])
        ax_claim.plot(x.ravel(), values.ravel(), "o", color=color, markersize=2.5, alpha=0.5,
                      label=label)  # fmt: skip
    ax_claim.axhline(1.0, color="k", linestyle="--", label="lhs = rhs")
    ax_claim.set(xscale="log", yscale="log", xlabel="number of target samples n",
                 ylabel="lhs / rhs (≤ 1: the step holds)")  # fmt: skip
    ax_claim.set_xticks(claim_n, [str(int(v)) for v in claim_n])
    ax_claim.minorticks_off()
    ax_claim.set_title(
        f"Thm 4.2's deterministic steps on random Σ, d = {results['thm4_2_d']} "
        f"({len(results['thm4_2_null_space_ratio'][0])} draws per n; claim's simulation)",
        fontsize=10,
    )
    ax_claim.legend(fontsize=8)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
