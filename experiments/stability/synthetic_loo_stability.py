"""Fu et al. 2023, Sec 4.3 (Figs 5–9): leave-one-out stability of head tuning on synthetic data.

Setting (ours where the paper leaves d, the loss, η, T, the init and ``i`` unspecified):
linearly separable datasets from :func:`ntsim.core.separable_dataset` (slab half-width
``γ`` = ``margin``, ball radius ``B`` = ``radius``, slab centre at distance ``offset`` from
the origin, so the bias matters), labels ``±1``, a linear head ``w = [v; b]`` on the
augmented points ``[x; −1]`` trained by full-batch GD on the mean logistic loss with
``η = 1/β_F`` (:func:`~ntsim.theory.stability.head_tuning_step_size`) on ``S`` and, from
the same init, on ``S^i`` (``i`` uniform, ``1/n`` normaliser, eq. (12)). The measured
quantity is the normalised leave-one-out distance after ``T`` steps

    ‖Δ̂_T‖ = ‖w_T/‖w_T‖ − w^i_T/‖w^i_T‖‖,

and its ``T → ∞`` limit, the same distance between the hard-margin SVMs of the augmented
points (bias penalised — the direction GD converges to; float64 interior-point solves).
GD is run for one uniformly drawn ``i`` per dataset (a high-variance estimate: most ``i``
are not support vectors); the SVM curves are the exact average over all ``n`` choices of
``i`` (only support vectors move the SVM, Lemma A.2.4, so ``d + 3`` leave-one-out solves per
dataset suffice; ``svm_avg_exact_rate`` reports the coverage), and ``svm_drawn_i_mean`` the
SVM distance for the same ``i`` as GD. Every panel shows the mean ± s.e. over datasets.

Panels: (a) Fig 5 — MHLoss with ``H ∈ {5, 10, 20, 50, 100}`` heads from ``N(0, σ_0²)``
inits (the first ``H`` of 100 heads, so the curves are nested), ``‖Δ̂_t‖`` of the averaged
head ``w̄`` vs step ``t``; (b) the main sweep (``500`` datasets × ``2,000`` points × ``d = 10``
× ``10⁴`` steps, ``S`` and ``S^i`` in one ``lax.map``-chunked program; its wall time is
``sweep_wall_time_s``) vs ``t`` (a Fig 2 analogue, check 21); (c) Fig 6 vs ``n``;
(d) Fig 7 vs the measured SVM margin ``γ_S`` (classical bias-free SVM; the margin
parameter of the generator is varied); (e) Fig 8 vs ``‖w_0 − ŵ_S‖`` (random inits of growing
norm, ``ŵ_S`` the bias-penalised SVM, i.e. the minimum-norm head with margin 1, standing in
for the paper's ``w_*``); (f) Fig 9 vs ``B`` at fixed ``γ``. Panels (d)–(f) are one program
over concatenated cells (the varying thing is a traced parameter of one generator+runner).

Bottom row, drawn with the settings the claims read (``shared_settings`` names the scale of
the ``ntsim.theory.stability`` settings dicts): (g)–(h) the step-size condition of Thm 2.4
(:func:`~ntsim.theory.stability.simulate_step_sizes`, GD from 0 at ``η·β_F ∈ {1, 1.9, 2.5,
4, 8}``; claims ``stability.lr.*``) — the median loss curve per step size and the fraction of
monotone runs, and the mean and std over datasets of ``‖Δ̂_T‖`` per step size; (i) the
closed-form anchor ``x = (1, −1, 2)``, ``y = (+1, −1, +1)``
(:func:`~ntsim.theory.stability.simulate_loo_anchor`; claim
``stability.anchor.svm_loo_distance``): GD's ``‖Δ̂_t‖`` per left-out point against the
SVM-limit distance measured by the suite and its closed form.

Reported: Spearman ρ of the per-dataset ‖Δ̂_T‖ against ``γ_S``, ``‖w_0 − ŵ_S‖`` and ``B``,
and the log–log slopes of the mean ‖Δ̂_T‖ (GD and SVM) against ``n``. The paper's claims
(Sec 4.3): decreasing in ``n`` and in ``γ``, increasing in ``‖w_0 − w_*‖`` and ``B``.

Run: ``ntsim run stability/synthetic_loo_stability [--scale full]`` or this file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import numpy as np

from ntsim.core import loglog_slope, mean_se, spearman
from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import stability as st
from ntsim.theory.stability import (
    HEAD_TUNING_IMPLEMENTATIONS,
    chunk_divisor,
    loo_sweep,
    multi_head_cell,
    svm_sweep,
)


@dataclass(frozen=True)
class Config(Validated):
    """The paper gives n = 2,000 and 500 datasets; every other value is ours."""

    d: int = param(10, "feature dimension", low=2, shape=True)
    num_points: int = param(2000, "n of the main sweep", low=2, shape=True)
    num_datasets: int = param(500, "datasets of the main sweep", low=1, shape=True)
    num_steps: int = param(
        100_000, "T (GD steps), every sweep: direction convergence is ~1/log t", low=1,
        shape=True,
    )  # fmt: skip
    num_records: int = param(11, "log-spaced recorded steps up to T", low=1, shape=True)
    margin: float = param(
        0.1, "γ (slab half-width) unless varied", low=0, open=True,
        allowed="> 0, offset + margin < radius",
    )  # fmt: skip
    radius: float = param(
        1.0, "B unless varied", low=0, open=True, allowed="> offset + max(margin, margins)"
    )
    offset: float = param(
        0.2, "‖slab centre‖", low=0, allowed="≥ 0, offset + margin < min(radius, radii)"
    )
    chunk_size: int = param(25, "datasets per lax.map batch", low=1, shape=True)
    implementation: str = param(
        "xla", 'GD loop: "xla" (matmul form) or "fused" (ntsim.core.logistic_gd_fused, a CPU '
        "kernel; 4x faster on the full-size sweep, same heads to 2e-7; see head_tuning_gd)",
        choices=HEAD_TUNING_IMPLEMENTATIONS, shape=True,
    )  # fmt: skip
    panel_datasets: int = param(100, "datasets of panels (c)–(f)", low=1, shape=True)
    panel_points: int = param(500, "n of panels (d)–(f)", low=2, shape=True)
    sample_sizes: tuple[int, ...] = param(
        (100, 200, 500, 1000, 2000, 5000), "n of panel (c), Fig 6", low=2, shape=True
    )
    margins: tuple[float, ...] = param(
        (0.02, 0.05, 0.1, 0.2, 0.4), "γ of panel (d), Fig 7", low=0, open=True,
        allowed="> 0, offset + margin < radius", shape=True,
    )  # fmt: skip
    radii: tuple[float, ...] = param(
        (0.5, 1.0, 2.0, 4.0, 8.0), "B of panel (f), Fig 9, at fixed γ", low=0, open=True,
        allowed="> offset + margin", shape=True,
    )  # fmt: skip
    init_norms: tuple[float, ...] = param(
        (0.0, 2.0, 5.0, 10.0, 20.0, 50.0), "‖w_0‖, panel (e), Fig 8", low=0, shape=True
    )
    heads: tuple[int, ...] = param((5, 10, 20, 50, 100), "panel (a): MHLoss H", low=1, shape=True)
    head_scale: float = param(1.0, "σ_0 of the MHLoss heads", low=0, open=True)
    head_points: int = param(200, "n of panel (a)", low=2, shape=True)
    head_datasets: int = param(30, "datasets of panel (a)", low=1, shape=True)
    shared_settings: str = param(
        "full",
        "panels (g)–(i): scale of the settings shared with the claims (step sizes, anchor)",
        choices=st.SHARED_SCALES,
    )

    def check(self):
        pairs = [(self.margin, self.radius)] + [(m, self.radius) for m in self.margins]
        for margin, radius in pairs + [(self.margin, r) for r in self.radii]:
            if not self.offset + margin < radius:
                raise ValueError(
                    f"Config: need 0 < margin and offset + margin < radius, got {margin=}, "
                    f"{radius=}, offset={self.offset}."
                )


SCALES = {
    "quick": Config(
        num_points=100,
        num_datasets=16,
        num_steps=1000,
        num_records=7,
        panel_datasets=100,
        panel_points=100,
        sample_sizes=(25, 50, 100),
        margins=(0.05, 0.1, 0.2, 0.4),
        radii=(0.5, 1.0, 2.0, 4.0),
        init_norms=(0.0, 5.0, 20.0),
        head_points=50,
        head_datasets=4,
        shared_settings="quick",
    ),  # fmt: skip
    "full": Config(),
}


# ---------------------------------------------------------------------------------- run


def _panel(sweep: dict, cells: int, per_cell: int) -> dict:
    """Mean ± s.e. per cell of the final ‖Δ̂_T‖, the SVM distance and the x quantities."""
    shape = (cells, per_cell)
    out = {}
    columns = {"delta": sweep["delta"][:, -1], "svm": sweep["svm"], "gamma": sweep["gamma"],
               "w0_distance": sweep["w0_distance"]}  # fmt: skip
    for name, values in columns.items():
        mean, se = mean_se(np.asarray(values).reshape(shape), axis=1)
        out[f"{name}_mean"], out[f"{name}_se"] = mean, se
    return out


def _summary(part: dict) -> dict:
    """The per-cell means of a panel (drops the per-dataset arrays)."""
    return {k: v for k, v in part.items() if k.endswith(("_mean", "_se"))}


def panel_setting(c: Config) -> st.SyntheticPanelSetting:
    """The (γ, ‖w_0‖, B) panels of ``c`` as the theory setting the claims read."""
    return st.SyntheticPanelSetting(
        points=c.panel_points, datasets=c.panel_datasets, num_steps=c.num_steps,
        num_records=c.num_records, dim=c.d, margins=c.margins, init_norms=c.init_norms,
        radii=c.radii, base=(c.margin, c.radius, c.offset, 0.0), chunk=c.chunk_size,
        implementation=c.implementation,
    )  # fmt: skip


def over_n_setting(c: Config) -> st.OverNSetting:
    """The n panel (Fig 6) of ``c`` as the theory setting the claim reads."""
    return st.OverNSetting(
        ns=c.sample_sizes, datasets=c.panel_datasets, num_steps=c.num_steps,
        num_records=c.num_records, dim=c.d, base=(c.margin, c.radius, c.offset, 0.0),
        chunk=c.chunk_size, implementation=c.implementation,
    )  # fmt: skip


def step_size_summary(run: st.StepSizeRun) -> dict:
    """Per step size: monotone fraction, median loss curve, mean/s.e./std of ‖Δ̂_T‖."""
    loss, delta = np.asarray(run.loss), np.asarray(run.loo_distance)
    monotone = np.max(np.diff(loss, axis=-1), axis=-1) <= 0  # (N, F): the loss never rises
    mean, se = mean_se(delta)
    return {
        "factors": np.asarray(run.factors).tolist(),
        "datasets": int(delta.shape[0]),
        "fraction_monotone": monotone.mean(axis=0).tolist(),
        "median_loss_ratio": np.median(loss / loss[..., :1], axis=0).tolist(),  # (F, T + 1)
        "delta_mean": mean,
        "delta_se": se,
        "delta_std": delta.std(axis=0, ddof=1).tolist(),
    }


def anchor_summary(run: st.LooAnchorRun) -> dict:
    """GD's ‖Δ̂_t‖ per left-out point, the suite's SVM-limit distances and the closed form."""
    closed = st.loo_anchor_closed_form()
    return {
        "steps": np.asarray(run.steps).tolist(),
        "gd_distance": np.asarray(run.gd_distance).tolist(),
        "gd_error": np.asarray(run.gd_error).tolist(),
        "svm_distance": np.asarray(run.svm_distance).tolist(),
        "closed_form": [float(v) for v in closed["distance"]],
        "svm_mean": float(np.asarray(run.svm_mean).ravel()[0]),
        "closed_form_mean": float(closed["mean_distance"]),
    }


def shared_panels(scale: str, key) -> dict:
    """Panels (g)–(i): the claims' step-size and anchor simulations, in float64."""
    k_steps, k_anchor = jax.random.split(key)
    with jax.enable_x64(True):
        steps = shared_run(st.simulate_step_sizes, k_steps, st.STEP_SIZE_SETTINGS[scale])
        anchor = shared_run(st.simulate_loo_anchor, k_anchor, st.LOO_ANCHOR_SETTINGS[scale])
    return {"step_sizes": step_size_summary(steps), "anchor": anchor_summary(anchor)}


def run(config: Config, key) -> dict:
    """The main sweep, the n panel, the (γ, ‖w_0 − ŵ_S‖, B) panels, the MHLoss panel and the
    step-size and anchor panels."""
    c = config
    steps = st.log_spaced_steps(c.num_steps, c.num_records)
    k_main, k_n, k_panel, k_heads = jax.random.split(key, 4)
    k_shared = jax.random.fold_in(key, 1)  # the other panels' key stream is unchanged
    base = (c.margin, c.radius, c.offset, 0.0)

    # main sweep: num_datasets × num_points × d × num_steps, S and S^i
    params = np.tile(np.asarray(base, np.float32), (c.num_datasets, 1))
    main = loo_sweep(jax.random.split(k_main, c.num_datasets), params, num_points=c.num_points,
                     dim=c.d, steps=steps, chunk_size=c.chunk_size,
                     implementation=c.implementation)  # fmt: skip
    delta_mean, delta_se = mean_se(main["delta"])
    svm_mean, svm_se = mean_se(main["svm"])

    # Figs 7–9: one program, cells concatenated (margin, init norm, radius varied); the claims
    # stability.fig7–fig9 read the same simulation with the same setting
    panel = shared_run(st.simulate_synthetic_panel, k_panel, panel_setting(c))._asdict()
    parts = {}
    for name, count in (("margin", len(c.margins)), ("init", len(c.init_norms)),
                        ("radius", len(c.radii))):  # fmt: skip
        rows = panel["rows"][name]
        part = {k: v[rows] for k, v in panel.items() if isinstance(v, np.ndarray)}
        parts[name] = _panel(part, count, c.panel_datasets)
        parts[name]["final_delta"] = part["delta"][:, -1]
        parts[name]["svm_all"] = part["svm"]
        parts[name]["gamma_all"] = part["gamma"]
        parts[name]["w0_distance_all"] = part["w0_distance"]
    radius_all = np.repeat(np.asarray(c.radii), c.panel_datasets)

    # Fig 6: the claim stability.fig6.decreasing_in_n reads the same simulation with the same
    # setting type (one compiled program per n)
    sweep_n = shared_run(st.simulate_loo_over_n, k_n, over_n_setting(c))
    over_n = {"delta_mean": [], "delta_se": [], "svm_mean": [], "svm_se": []}
    for delta, svm in zip(sweep_n.delta, sweep_n.svm, strict=True):
        for name, values in (("delta", delta), ("svm", svm)):
            mean, se = mean_se(values)
            over_n[f"{name}_mean"].append(mean)
            over_n[f"{name}_se"].append(se)

    # Fig 5: MHLoss, nested head counts from one run of max(heads) heads per side
    h_max = max(c.heads)

    @jax.jit
    def heads_run(keys):
        fn = lambda k: multi_head_cell(  # noqa: E731
            k, num_points=c.head_points, dim=c.d, steps=steps, num_heads=h_max,
            scale=c.head_scale, margin=c.margin, radius=c.radius, offset=c.offset,
        )  # fmt: skip
        return jax.lax.map(fn, keys, batch_size=chunk_divisor(5, c.head_datasets))

    start_time = time.perf_counter()
    heads = jax.block_until_ready(heads_run(jax.random.split(k_heads, c.head_datasets)))
    heads_time = time.perf_counter() - start_time
    heads_svm = svm_sweep(heads["x"], heads["y"], heads["i"], chunk_size=c.chunk_size)["svm_avg"]
    head_delta = np.asarray(heads["delta"])[:, :, [h - 1 for h in c.heads]]  # (D, R, |heads|)
    h_mean, h_se = mean_se(head_delta)

    return {
        "steps": list(steps),
        "d": c.d,
        "num_points": c.num_points,
        "num_datasets": c.num_datasets,
        "num_steps": c.num_steps,
        "margin": c.margin,
        "radius": c.radius,
        "offset": c.offset,
        "sweep_wall_time_s": main["gd_time"],
        "sweep_svm_time_s": main["svm_time"],
        "main": {
            "delta_mean": delta_mean,
            "delta_se": delta_se,
            "svm_mean": svm_mean,
            "svm_se": svm_se,
            "max_kkt": float(main["kkt"].max()),
            "svm_drawn_i_mean": float(main["svm_delta"].mean()),  # same i as GD
            "support_left_out_rate": float((main["svm_delta"] > 1e-6).mean()),
            "num_support_mean": float(main["num_support"].mean()),
            "svm_avg_exact_rate": float(main["svm_avg_exact"].mean()),
        },  # fmt: skip
        "sample_sizes": list(c.sample_sizes),
        "panel_datasets": c.panel_datasets,
        "panel_points": c.panel_points,
        "over_n": over_n,
        "margins": list(c.margins),
        "over_margin": _summary(parts["margin"]),
        "init_norms": list(c.init_norms),
        "over_init": _summary(parts["init"]),
        "radii": list(c.radii),
        "over_radius": _summary(parts["radius"]),
        "spearman_margin": spearman(parts["margin"]["gamma_all"], parts["margin"]["final_delta"]),
        "spearman_margin_svm": spearman(parts["margin"]["gamma_all"], parts["margin"]["svm_all"]),
        "spearman_init": spearman(parts["init"]["w0_distance_all"], parts["init"]["final_delta"]),
        "spearman_radius": spearman(radius_all, parts["radius"]["final_delta"]),
        "spearman_radius_svm": spearman(radius_all, parts["radius"]["svm_all"]),
        "slope_n": loglog_slope(c.sample_sizes, over_n["delta_mean"]),
        "slope_n_svm": loglog_slope(c.sample_sizes, over_n["svm_mean"]),
        "heads": list(c.heads),
        "head_points": c.head_points,
        "head_datasets": c.head_datasets,
        "head_scale": c.head_scale,
        "heads_delta_mean": h_mean,  # (R, |heads|)
        "heads_delta_se": h_se,
        "heads_svm_mean": float(heads_svm.mean()),
        "heads_wall_time_s": heads_time,
        **shared_panels(c.shared_settings, k_shared),
    }


# --------------------------------------------------------------------------------- plot


def _band(ax, x, mean, se, label, color, marker="o"):
    x, mean, se = (np.asarray(a, float) for a in (x, mean, se))
    ax.errorbar(x, mean, yerr=se, fmt=f"{marker}-", color=color, capsize=3, label=label,
                markersize=4)  # fmt: skip


def plot(results: dict):
    """(a) Fig 5, (b) main sweep vs t, (c)–(f) Figs 6–9."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(3, 3, figsize=(17.0, 14.0))
    gd_label = r"GD $\|\hat\Delta_T\|$"
    svm_label = r"SVM $\|\hat w_S/\|\cdot\| - \hat w_{S^i}/\|\cdot\|\|$, mean over all i"
    steps = np.asarray(results["steps"])

    ax = axes[0, 0]
    mean, se = np.asarray(results["heads_delta_mean"]), np.asarray(results["heads_delta_se"])
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(results["heads"])))
    for j, h in enumerate(results["heads"]):
        _band(ax, steps, mean[:, j], se[:, j], f"H = {h}", colors[j])
    ax.axhline(
        results["heads_svm_mean"],
        color="black",
        linestyle="--",
        label="SVM reference (mean over i)",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel(r"$\|\hat\Delta_t\|$ of the averaged head $\bar w$")
    title = f"(a) Fig 5: MHLoss, σ0 = {results['head_scale']:g}, n = {results['head_points']}"
    ax.set_title(f"{title}, {results['head_datasets']} datasets", fontsize=10)
    ax.legend(fontsize=8)

    ax = axes[0, 1]
    main = results["main"]
    _band(ax, steps, main["delta_mean"], main["delta_se"], gd_label, "tab:blue")
    ax.axhline(main["svm_mean"], color="black", linestyle="--", label=svm_label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel(r"mean $\|\hat\Delta_t\|$")
    ax.set_title(f"(b) main sweep: {results['num_datasets']} datasets × n = "
                 f"{results['num_points']}, d = {results['d']} "
                 f"({results['sweep_wall_time_s']:.0f} s)", fontsize=10)  # fmt: skip
    ax.legend(fontsize=8)

    def panel(ax, x, part, xlabel, title, logx=False):
        _band(ax, x, part["delta_mean"], part["delta_se"], gd_label, "tab:blue")
        _band(ax, x, part["svm_mean"], part["svm_se"], svm_label, "black", marker="s")
        if logx:
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # crowded labels on short decades
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(rf"mean $\|\hat\Delta_T\|$, T = {results['num_steps']}")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)

    n_part = results["over_n"]
    panel(axes[0, 2], results["sample_sizes"], n_part, "number of samples n",
          f"(c) Fig 6: vs n (slope GD {results['slope_n']:.2f}, SVM "
          f"{results['slope_n_svm']:.2f})", logx=True)  # fmt: skip
    m = results["over_margin"]
    panel(axes[1, 0], m["gamma_mean"], m, r"measured SVM margin $\gamma_S$",
          f"(d) Fig 7: vs margin (ρ = {results['spearman_margin']:.2f})", logx=True)  # fmt: skip
    m = results["over_init"]
    panel(axes[1, 1], m["w0_distance_mean"], m, r"$\|w_0 - \hat w_S\|$",
          f"(e) Fig 8: vs init distance (ρ = {results['spearman_init']:.2f})")  # fmt: skip
    panel(axes[1, 2], results["radii"], results["over_radius"], "radius B",
          f"(f) Fig 9: vs B (ρ = {results['spearman_radius']:.2f})", logx=True)  # fmt: skip
    _step_size_panels(axes[2, 0], axes[2, 1], results["step_sizes"])
    _anchor_panel(axes[2, 2], results["anchor"])
    fig.suptitle(
        f"Fu et al. 2023, Sec 4.3: normalised leave-one-out distance of head tuning "
        f"(panels c–f: {results['panel_datasets']} datasets per point, n = "
        f"{results['panel_points']} in d–f; mean ± s.e.)"
    )
    fig.tight_layout()
    return fig


def _step_size_panels(ax_loss, ax_delta, part: dict) -> None:
    """(g) median loss curves and monotone fractions, (h) ‖Δ̂_T‖ per step size."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    factors = part["factors"]
    curves = np.asarray(part["median_loss_ratio"])
    colors = plt.cm.plasma(np.linspace(0, 0.85, len(factors)))
    for color, f, curve, mono in zip(colors, factors, curves, part["fraction_monotone"],
                                     strict=True):  # fmt: skip
        ax_loss.plot(np.arange(curve.size), curve, color=color,
                     label=f"η·β_F = {f:g}: {100 * mono:.0f}% monotone")  # fmt: skip
    ax_loss.set_yscale("log")
    ax_loss.set_xlabel("step t")
    ax_loss.set_ylabel("median loss / initial loss (log 2)")
    ax_loss.set_title(f"(g) Thm 2.4 step size: loss of GD from 0, {part['datasets']} datasets",
                      fontsize=10)  # fmt: skip
    ax_loss.legend(fontsize=8)
    x = np.asarray(factors, float)
    _band(ax_delta, x, part["delta_mean"], part["delta_se"], r"mean $\|\hat\Delta_T\|$ ± s.e.",
          "tab:blue")  # fmt: skip
    ax_delta.plot(x, part["delta_std"], "s--", color="tab:orange", markersize=4,
                  label=r"std over datasets of $\|\hat\Delta_T\|$")  # fmt: skip
    ax_delta.axvline(2.0, color="gray", linestyle=":", label=r"$\eta = 2/\beta_F$")
    ax_delta.set_xscale("log")
    ax_delta.set_xticks(x, [f"{f:g}" for f in factors])
    ax_delta.xaxis.set_minor_formatter(NullFormatter())
    ax_delta.set_xlabel(r"$\eta\cdot\beta_F$")
    ax_delta.set_ylabel(r"$\|\hat\Delta_T\|$ at the last step")
    ax_delta.set_title("(h) leave-one-out distance vs step size (same datasets at every η)",
                       fontsize=10)  # fmt: skip
    ax_delta.legend(fontsize=8)


def _anchor_panel(ax, part: dict) -> None:
    """(i) GD's ‖Δ̂_t‖ on the anchor against the SVM limit (measured and closed form)."""
    steps = np.asarray(part["steps"])
    for i, color in enumerate(("tab:blue", "tab:green", "tab:red")):
        ax.plot(steps, part["gd_distance"][i], "o-", color=color, markersize=4,
                label=f"GD, x_{i + 1} left out")  # fmt: skip
        ax.axhline(part["closed_form"][i], color=color, linestyle="--", linewidth=1)
        ax.plot(steps[-1] * 1.6, part["svm_distance"][i], "*", color=color, markersize=11)
    ax.plot([], [], "k--", linewidth=1, label="closed-form SVM limit")
    ax.plot([], [], "k*", label="SVM limit as the suite computes it")
    ax.set_xscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel(r"$\|\hat\Delta_t\|$")
    ax.set_title(f"(i) anchor x = (1, −1, 2), y = ±1: SVM mean over i {part['svm_mean']:.4f} "
                 f"(closed form {part['closed_form_mean']:.4f})", fontsize=10)  # fmt: skip
    ax.legend(fontsize=8)


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
