"""Claims of Shachaf, Brutzkus & Globerson 2021, Sec 6: two-layer ReLU nets in the NTK regime.

Identity/inequality checks (``H^∞`` vs its Monte Carlo definition and neural-tangents,
``H^∞ ⪰ XXᵀ/4``, Cor. 6.2) run in float64 inside ``with jax.enable_x64(True):``. The
trained-network checks (Thm 6.1's kernel regime, Cor. 6.3) run in float32 — their errors are
``O(m^{-1/2})`` ≫ float32 round-off — and loop in Python only over the static widths ``m``
and sample sizes ``n``; repeats are vmapped. Inputs are uniform on the unit sphere (Sec 6
assumes ``‖x‖ = 1``) and ``κ = 0.1``: small enough that the pretrained function is not
dominated by the random init, large enough that activation patterns barely flip at the
widths used (at ``κ = 0.01`` a first run at ``m ≤ 4096`` left the kernel regime:
network-vs-kernel deviation ≈ 11–17/√m, which the thresholds below reject).
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

import ntsim
from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, compare
from ntsim.claims._contract import Claim as V2Claim
from ntsim.claims._contract import Simulation, derived, printed, proof
from ntsim.claims._decisions import Tolerance, all_of
from ntsim.claims._decisions import compare as compare_v2
from ntsim.core import (
    empirical_ntk_fn,
    random_signs,
    two_layer_relu,
    two_layer_relu_hinf,
)
from ntsim.theory import linear_teachers as relu

__all__ = ["CLAIMS"]

_PAPER = "Shachaf et al. 2021"
_EXPERIMENT = "linear_teachers/relu_kernel_vs_network"
_FIXTURE = "nt_relu_analytic.npz"


def _slope(widths, values) -> float:
    """Least-squares slope of ``log(values)`` against ``log(widths)``."""
    return float(np.polyfit(np.log(np.asarray(widths, float)), np.log(values), 1)[0])


# --------------------------------------------------- H^∞ vs the finite-width Gram matrix

# (n, d, widths, instances). The Gram at width m is a mean of m i.i.d. terms, so its error
# is exactly Monte Carlo: E‖H_m − H^∞‖_F² = (1/m) Σ_ij (x_iᵀx_j)² p_ij(1 − p_ij) with
# p_ij = (π − arccos x_iᵀx_j)/(2π) (variance of a Bernoulli indicator).
_GRAM = {
    "quick": (12, 10, (256, 1024, 4096), 32),
    "full": (20, 10, (1024, 4096, 16384, 65536), 50),
}
# Ratio mean_K ‖H_m − H^∞‖_F² / mean_K E‖·‖² must be 1 ± 0.2: each instance's squared error
# is a sum over ~n²/2 correlated entries; a first run gave ratios within 0.93–1.05 at
# quick scale (32 instances), so 0.2 is ≳ 4 standard deviations. The log-log slope of the
# mean error against m must be −1/2 ± 0.1 (rtol 0.2 on −1/2): a CLT rate, and the measured
# slope sits within 0.02 of −1/2.
_RTOL_GRAM = 0.2


def _gram_instance(key, n, d, width):
    k_x, k_signs, k_w = jax.random.split(key, 3)
    x = relu.unit_norm_inputs(k_x, n, d)
    signs = random_signs(k_signs, width)
    params = two_layer_relu(signs).init(k_w, x[0])
    exact = two_layer_relu_hinf(x)
    empirical = empirical_ntk_fn(two_layer_relu(signs).apply)(x, None, params)  # H_m
    error2 = jnp.sum((empirical - exact) ** 2)
    gram = x @ x.T
    p = exact / jnp.where(gram == 0, 1, gram)  # p_ij = (π − arccos)/(2π), via H^∞ / XXᵀ
    p = jnp.where(gram == 0, 0.5, p)
    predicted2 = jnp.sum(gram**2 * p * (1 - p)) / width
    return error2, predicted2


def check_hinf_empirical_gram(key, scale: str) -> ClaimResult:
    """Closed-form H^∞ vs the empirical first-layer Gram (core empirical NTK) at width m."""
    check_choice("check_hinf_empirical_gram", "scale", scale, SCALES)
    n, d, widths, count = _GRAM[scale]
    keys = jax.random.split(key, count)
    ratios, errors = [], []
    with jax.enable_x64(True):
        for width in widths:  # static shapes; lax.map bounds memory at the largest width
            fn = jax.jit(lambda ks, w=width: jax.lax.map(lambda k: _gram_instance(k, n, d, w), ks))
            error2, predicted2 = map(np.asarray, fn(keys))
            ratios.append(error2.mean() / predicted2.mean())
            errors.append(np.sqrt(error2).mean())
    slope = _slope(widths, errors)
    ratio_text = ", ".join(f"m={w}: {r:.3f}" for w, r in zip(widths, ratios, strict=True))
    return compare(
        np.append(ratios, slope),
        np.append(np.ones(len(widths)), -0.5),
        relation="equal",
        rtol=_RTOL_GRAM,
        num_instances=count * len(widths),
        notes=f"n = {n}, d = {d}, unit-norm x, {count} instances per width; measured = "
        f"mean‖H_m − H^∞‖_F² / mean E‖H_m − H^∞‖_F² (exact Monte Carlo variance) per width "
        f"({ratio_text}), then the log-log slope of the mean Frobenius error vs m = "
        f"{slope:.3f} (expected −1/2); tolerance ±{_RTOL_GRAM:g} relative. H_m by "
        "ntsim.core.empirical_ntk_fn of two_layer_relu w.r.t. W.",
    )


# Closed form vs neural-tangents 0.6.5 (ntk − nngp of Dense-Relu-Dense on √d·u, float64):
# two float64 evaluations of arccos on the same inputs differ by ~1e-16; 1e-12 relative
# leaves 1e4 slack.
_TOL_NT = 1e-12


def _fixture_path() -> pathlib.Path:
    path = pathlib.Path(ntsim.__file__).parents[1] / "tests" / "fixtures" / _FIXTURE
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: this claim compares against neural-tangents' H^∞ written by "
            "`make nt-fixtures` (tests/fixtures/README.md); run it from a source checkout."
        )
    return path


def check_hinf_neural_tangents(key, scale: str) -> ClaimResult:
    """Closed-form H^∞ vs neural-tangents' analytic ntk − nngp (committed fixture)."""
    check_choice("check_hinf_neural_tangents", "scale", scale, SCALES)
    del key  # deterministic: the fixture's inputs
    with np.load(_fixture_path()) as data:
        x1, x2, reference = data["hinf_x1"], data["hinf_x2"], data["hinf"]
    with jax.enable_x64(True):
        measured = np.asarray(two_layer_relu_hinf(x1, x2))
    worst = np.max(np.abs(measured - reference) / np.abs(reference).max())
    return compare(
        measured,
        reference,
        relation="equal",
        atol=_TOL_NT * np.abs(reference).max(),
        num_instances=1,
        notes=f"{x1.shape[0]}×{x2.shape[0]} entries on unit-norm rows (d = {x1.shape[1]}); "
        f"max |Δ|/max|H| = {worst:.1e} vs tolerance {_TOL_NT:g} (float64 round-off).",
    )


# ------------------------------------------------------------- H^∞ ⪰ XXᵀ/4 and Cor. 6.2

# n > d is allowed for the PSD check (no rank assumption is needed) but Cor. 6.2's derived
# bound uses P_∥ and needs n < d (Ass. 3.1). Same keys as the v1 claims.
HINF_PSD = Simulation(
    "linear_teachers.cor6_2.hinf_dominates_gram",
    relu.simulate_hinf_psd,
    {"quick": relu.NTKSizes(d=10, n_values=(5, 20, 40), draws_per_n=70),
     "full": relu.NTKSizes(d=20, n_values=(5, 20, 80), draws_per_n=100)},
    x64=True,
)  # fmt: skip
COR62 = Simulation(
    "linear_teachers.cor6_2.bound",
    relu.simulate_cor6_2,
    {"quick": relu.NTKSizes(d=30, n_values=(5, 15, 29), draws_per_n=70),
     "full": relu.NTKSizes(d=100, n_values=(10, 50, 99), draws_per_n=100)},
    x64=True,
)  # fmt: skip
# λ_min(H^∞ − XXᵀ/4)/λ_max(H^∞) ≥ −1e-12: eigvalsh's backward error is ~n·eps·‖H‖ ≈ 1e-14.
_TOL_PSD = Tolerance("round-off", 1e-12, "eigvalsh backward error ~n·eps relative to ‖H^∞‖")
# The bounds need no slack beyond round-off of the Cholesky solve (~1e-14).
_TOL_BOUND = Tolerance("round-off", 1e-10, "on ratios of O(1); Cholesky solve in float64")


def check_hinf_dominates_gram(margins):
    """λ_min(H^∞ − XXᵀ/4) ≥ 0 (up to round-off) for random unit-norm X."""
    return compare_v2(
        margins, 0.0, relation="lower_bound", atol=_TOL_PSD.value, tolerance=_TOL_PSD,
        diagnostics={"min λ_min(H^∞ − XXᵀ/4)/λ_max(H^∞)": margins.min()},
        notes="n > d gives singular XXᵀ: the gap is then strictly positive only through the "
        "arcsin terms.",
    )  # fmt: skip


def check_cor6_2_printed(run: relu.Cor62Run):
    """Cor. 6.2: √(ỹᵀ(H^∞)⁻¹ỹ) ≤ 3‖θ_T − θ_S‖ with ỹ = X(θ_T − θ_S)."""
    ratio = run.norm / run.printed
    return compare_v2(
        ratio, 1.0, relation="upper_bound", atol=_TOL_BOUND.value, tolerance=_TOL_BOUND,
        diagnostics={"max √(ỹᵀ(H^∞)⁻¹ỹ)/(3‖v‖)": ratio.max()},
        notes="≤ 2/3 is implied by the derived bound 2‖P_∥v‖.",
    )  # fmt: skip


def check_cor6_2_derived(run: relu.Cor62Run):
    """Tighter: √(ỹᵀ(H^∞)⁻¹ỹ) ≤ 2‖P_∥(θ_T − θ_S)‖ (from H^∞ ⪰ XXᵀ/4)."""
    ratio = run.norm / run.derived
    return all_of(
        compare_v2(ratio, 1.0, relation="upper_bound", atol=_TOL_BOUND.value,
                   tolerance=_TOL_BOUND),
        compare_v2(run.derived, 2 * run.p_par, relation="equal", rtol=_TOL_BOUND.value,
                   tolerance=_TOL_BOUND),
        diagnostics={"max ratio": ratio.max(), "median ratio": float(np.median(ratio))},
        notes="Second part: the bound against an independent ‖P_∥v‖ (row-space projector).",
    )  # fmt: skip


# -------------------------------------------------- Thm 6.1: fine-tuning in the kernel regime

# Thm 6.1's kernel regime (contract v2): one simulation in theory; the same key as the v1
# claim (the data, teachers and first neurons of each draw are unchanged).
KERNEL_REGIME = Simulation(
    "linear_teachers.thm6_1.kernel_regime",
    relu.simulate_kernel_regime,
    {
        "quick": relu.KernelRegimeSetting(widths=(256, 512, 1024), repeats=4),
        "full": relu.KernelRegimeSetting(
            widths=(2500, 5000, 10000),
            repeats=67,
            pretrain_steps=200,
            fine_tune_steps=120,
            record_every=40,
        ),
    },  # fmt: skip
)
# The proof's picture predicts O(m^{-1/2}) deviations at fixed κ; an O(·) is an upper bound,
# read as mean over repeats ≤ c/√m at every width tested, with c chosen.
_C_KERNEL = Tolerance(
    "chosen", 4.0, "c in mean ≤ c/√m for the network-vs-kernel prediction deviation and for "
    "|‖W_FT − W_S‖_F/√(ỹᵀ(H^∞)⁻¹ỹ) − 1|; at κ = 0.01 (outside the kernel regime at these m) "
    "the same runs gave mean·√m ≈ 5–15 and fail",
    observed="mean·√m 1.6–2.6 in the first v1 runs (m = 512–4096); at the v2 quick setting "
    "(m = 256–1024, seeds 0–2): prediction ≤ 2.54, distance ≤ 2.84; at m = 512–2048 distance "
    "reached 3.16 (its constant grows slowly with m)",
)  # fmt: skip
_C_GRAM = Tolerance(
    "chosen", 12.0, "c in mean ≤ c/√m for max_t ‖H(t) − H^∞‖₂/‖H^∞‖₂ (both phases): it mixes "
    "the O(m^{-1/2}) sampling error of H(0) with activation flips, whose constant still grows",
    observed="mean·√m 3.4–5.2 in the first v1 runs, 8.3 at m = 2·10⁴; v2 quick (seeds 0–2) "
    "≤ 5.43, and ≤ 6.18 at m = 2048",
)  # fmt: skip
_TOL_LOSS = Tolerance(
    "chosen", 1e-6, "zero training loss (Assumption 3.3): final/initial train loss of the worse "
    "phase ≤ 1e-6 (float32 floor ~1e-12; GD contracts ~e^{-35} in the steps used)",
    observed="log10 ratio ≤ −9.8 at v2 quick, seeds 0–2",
)  # fmt: skip


def check_kernel_regime(run: relu.KernelRegimeRun):
    """Fine-tuned wide net: loss → 0, ≈ kernel predictor, ‖W_FT − W_S‖_F ≈ √(ỹᵀH⁻¹ỹ), and
    max_t ‖H(t) − H^∞‖₂ small, each mean over repeats ≤ c/√m at every width."""
    if np.any(np.asarray(run.first_nonfinite) >= 0):
        raise FloatingPointError("simulate_kernel_regime: GD diverged.")
    widths = np.asarray(run.widths, float)
    repeats = run.prediction.shape[1]
    means = {name: np.asarray(getattr(run, name)).mean(axis=1)
             for name in ("prediction", "distance", "gram_drift")}  # fmt: skip
    parts = [
        compare_v2(means[name], tol.value / np.sqrt(widths), relation="upper_bound", tolerance=tol,
                num_instances=repeats)
        for name, tol in (("prediction", _C_KERNEL), ("distance", _C_KERNEL),
                          ("gram_drift", _C_GRAM))
    ]  # fmt: skip
    parts.append(compare_v2(run.log_loss, np.log10(_TOL_LOSS.value), relation="upper_bound",
                         tolerance=_TOL_LOSS, num_instances=repeats))  # fmt: skip
    return all_of(
        *parts,
        diagnostics={
            "m": widths,
            **{f"mean {k}·√m": v * np.sqrt(widths) for k, v in means.items()},
            **{
                f"log-log slope of mean {k} (not decided)": _slope(widths, v)
                for k, v in means.items()
            },
            "max log10 loss ratio": float(np.max(run.log_loss)),
        },  # fmt: skip
        notes="d = 10, n = 20, n_S = 40, κ = 0.1, ‖θ_S‖ = ‖θ_T − θ_S‖ = 1, GD η = 0.9n/λ_max(H^∞) "
        "(float32). Slopes are diagnostics only: with a few repeats their CIs are too wide to "
        "decide a rate, and the O(m^{-1/2}) statement is checked as the upper bound it is.",
    )


# ---------------------------------------------------- Thm 6.1 / Cor. 6.3: the risk bounds

# ‖θ_T − θ_S‖ ∈ {0.1, 0.3, 1}, n ∈ {10, 20, 40}; d = 10, n_S = 40, κ = 0.1. Full uses
# m = 10⁴ to fit the CPU budget (at m = 2·10⁴, 8 repeats, the worst risk/bound ratio was 0.43
# for Thm 6.1 — same picture). Same key as the v1 claims (their shared key id).
RISK_RUNS = Simulation(
    "linear_teachers.thm6_1.risk_runs",
    relu.simulate_relu_risk_runs,
    {"quick": relu.ReluRiskSetting(width=1024, repeats=4, pretrain_steps=150,
                                   fine_tune_steps=100, num_test=1000),
     "full": relu.ReluRiskSetting(width=10000, repeats=23, pretrain_steps=200,
                                  fine_tune_steps=120, num_test=2000)},
)  # fmt: skip


def check_thm6_1_main_term(out: dict):
    """Clipped-ℓ1 risk of the fine-tuned net ≤ 2√(ỹᵀ(H^∞)⁻¹ỹ/n) (eq. (11) without O-term)."""
    risk, bound = np.asarray(out["network_risk"]), np.asarray(out["thm6_1_bound"])
    return compare_v2(
        risk, bound, relation="upper_bound", num_instances=risk.size,
        diagnostics={"max risk/bound": (risk / bound).max(),
                     "median risk/bound": float(np.median(risk / bound)),
                     "pretrained-net risk vs θ_S": np.asarray(out["source_risk"]).mean()},
        notes="Main term only (the O(√(log(n/(λ₀δ))/n)) term has no stated constant); risk on "
        "fresh unit-norm test points; ỹ includes the pretraining error on the target inputs.",
    )  # fmt: skip


def check_cor6_3_main_term(out: dict):
    """Clipped-ℓ1 risk of the fine-tuned net ≤ 6‖θ_T − θ_S‖/√n (Cor. 6.3 without O-term)."""
    risk, bound = np.asarray(out["network_risk"]), np.asarray(out["cor6_3_bound"])
    return compare_v2(
        risk, bound, relation="upper_bound", num_instances=risk.size,
        diagnostics={"max risk/bound": (risk / bound).max(),
                     "pretrained-net risk vs θ_S": np.asarray(out["source_risk"]).mean()},
        notes="Main term only. Cor. 6.3 assumes perfect pretraining (Ass. 3.2), which a finite "
        "network trained on n_S = 40 points only approximates.",
    )  # fmt: skip


CLAIMS: tuple = (
    Claim(
        id="linear_teachers.thm6_1.hinf_empirical_gram",
        paper=f"{_PAPER}, Sec 6 (H^∞ of Du et al. 2019)",
        statement="The first-layer Gram (1/m)(XXᵀ)∘(AAᵀ) at random init converges to the closed "
        "form H^∞ with exactly the Monte Carlo variance, error ∝ m^{-1/2}",
        check=check_hinf_empirical_gram,
    ),
    Claim(
        id="linear_teachers.thm6_1.hinf_neural_tangents",
        paper=f"{_PAPER}, Sec 6; notes Sec 1c",
        statement="Closed-form H^∞ equals neural-tangents' ntk − nngp of Dense-Relu-Dense on √d·x",
        check=check_hinf_neural_tangents,
    ),
    V2Claim(
        id="linear_teachers.thm6_1.kernel_regime",
        paper=f"{_PAPER}, Thm 6.1 (the kernel-regime argument of its proof)",
        statement="Fine-tuning a wide pretrained ReLU net reaches zero train loss, matches "
        "f_S + H^∞(·,X)(H^∞)⁻¹ỹ, moves ‖W‖_F by √(ỹᵀ(H^∞)⁻¹ỹ), and keeps ‖H(t) − H^∞‖₂ small "
        "through both phases, each deviation O(m^{-1/2}) (mean ≤ c/√m at every width, c chosen)",
        kind="bound",
        reading=proof(
            "Thm 6.1's proof: for m ≥ κ⁻²poly(n, n_S, λ₀⁻¹, δ⁻¹) GD fine-tuning stays in the "
            "kernel regime of H^∞, so the fine-tuned network is the kernel predictor on ỹ and "
            "‖W_FT − W_S‖_F = √(ỹᵀ(H^∞)⁻¹ỹ) up to vanishing terms"
        ),
        uses=KERNEL_REGIME,
        check=check_kernel_regime,
        min_instances=4,
        experiment=_EXPERIMENT,
    ),
    V2Claim(
        id="linear_teachers.thm6_1.risk_main_term",
        paper=f"{_PAPER}, Thm 6.1, eq. (11)",
        statement="Clipped-ℓ1 risk of the fine-tuned net ≤ 2√(ỹᵀ(H^∞)⁻¹ỹ/n) (the main term, "
        "without the O(·) term)",
        kind="bound",
        reading=derived(
            "eq. (11) without its O(√(log(n/(λ₀δ))/n)) term, whose constant is "
            "not stated: stronger than the printed bound"
        ),
        uses=RISK_RUNS,
        check=check_thm6_1_main_term,
        min_instances=36,
        experiment=_EXPERIMENT,
    ),
    V2Claim(
        id="linear_teachers.cor6_2.hinf_dominates_gram",
        paper=f"{_PAPER}, Cor. 6.2 (a step of its proof, derived here)",
        statement="H^∞ − XXᵀ/4 ⪰ 0 for unit-norm X ((π − arccos t)/(2π) = 1/4 + arcsin t/(2π))",
        kind="bound",
        reading=derived(
            "(π − arccos t)/(2π) = 1/4 + arcsin t/(2π) and the arcsin kernel is PSD, "
            "so H^∞ ⪰ XXᵀ/4; the step that gives Cor. 6.2 its constant"
        ),
        uses=HINF_PSD,
        check=check_hinf_dominates_gram,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.cor6_2.bound",
        paper=f"{_PAPER}, Cor. 6.2",
        statement="√(ỹᵀ(H^∞)⁻¹ỹ) ≤ 3‖θ_T − θ_S‖ for ỹ = X(θ_T − θ_S), unit-norm X",
        kind="bound",
        reading=printed("Cor. 6.2: √(ỹᵀ(H^∞)⁻¹ỹ) ≤ 3‖θ_T − θ_S‖ (perfect pretraining)"),
        uses=COR62,
        check=check_cor6_2_printed,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.cor6_2.derived_bound",
        paper=f"{_PAPER}, Cor. 6.2 (tighter form, derived here)",
        statement="√(ỹᵀ(H^∞)⁻¹ỹ) ≤ 2‖P_∥(θ_T − θ_S)‖ (tighter than Cor. 6.2)",
        kind="bound",
        reading=derived("from H^∞ ⪰ XXᵀ/4: ỹᵀ(H^∞)⁻¹ỹ ≤ 4ỹᵀ(XXᵀ)⁻¹ỹ = 4‖P_∥v‖²"),
        uses=COR62,
        check=check_cor6_2_derived,
        min_instances=200,
    ),
    V2Claim(
        id="linear_teachers.cor6_3.risk_main_term",
        paper=f"{_PAPER}, Cor. 6.3",
        statement="Clipped-ℓ1 risk of the fine-tuned net ≤ 6‖θ_T − θ_S‖/√n (the main term, "
        "without the O(·) term)",
        kind="bound",
        reading=derived(
            "Cor. 6.3 without its O(·) term (no stated constant), with a finite "
            "pretrained network in place of perfect pretraining"
        ),
        uses=RISK_RUNS,
        check=check_cor6_3_main_term,
        min_instances=36,
        experiment=_EXPERIMENT,
    ),
)
