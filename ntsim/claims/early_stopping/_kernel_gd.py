"""Claims on kernel GD from a pretrained initialisation (Sun & Raskutti 2026, Secs 3.4, B.1).

Each claim reads one float64 simulation of
:mod:`ntsim.theory.early_stopping` (``simulate_linearised_gd``,
``simulate_kernel_closed_forms``, ``simulate_bias_variance_monte_carlo``,
``simulate_bias_variance_bounds``) over 200 random instances: the statement's closed form
against an independent computation (GD on the linearised network, direct function-space
iteration, Monte Carlo noise propagated by explicit matrix powers).
"""

from __future__ import annotations

import math

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, proof
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS"]

_PAPER = "Sun & Raskutti 2026"

LINEARISED_GD = Simulation(
    "early_stopping.eq7.linearised_gd",
    es.simulate_linearised_gd,
    {
        "quick": es.LinearisedGDSetting(width=24, num_train=5, input_dim=3, steps=12),
        "full": es.LinearisedGDSetting(),
    },
    x64=True,
    key_name="early_stopping.eq7.linearised_gd_is_kernel_gd",  # the v1 claim's key
)
CLOSED_FORMS = Simulation(
    "early_stopping.kernel_gd.closed_forms",
    es.simulate_kernel_closed_forms,
    {
        "quick": es.ClosedFormSetting(num_train=12, num_test=5, steps=40),
        "full": es.ClosedFormSetting(),
    },
    x64=True,
)
MONTE_CARLO = Simulation(
    "early_stopping.eq34.monte_carlo",
    es.simulate_bias_variance_monte_carlo,
    {"quick": es.MonteCarloSetting(num_train=12, draws=4000), "full": es.MonteCarloSetting()},
    x64=True,
    key_name="early_stopping.eq34.bias_variance_monte_carlo",  # the v1 claim's key
)
BOUNDS = Simulation(
    "early_stopping.eq35.bounds",
    es.simulate_bias_variance_bounds,
    {"quick": es.BoundsSetting(num_train=12), "full": es.BoundsSetting()},
    x64=True,
    key_name="early_stopping.eq35.bias_variance_bounds",  # the v1 claim's key
)

# The linearised network's GD and the eigen closed form differ by round-off accumulated over
# ≤ 400 steps of a contraction, ~1e-14 relative; 1e-9 leaves > 1e4 slack while any wrong
# factor of N or n in K would give O(1) errors.
ROUND_OFF = Tolerance("round-off", 1e-9, "float64, ≤ 400 steps of a contraction: ~1e-14")
# |z| ≤ 5.5 per (instance, τ, quantity): each z is a mean of ≥ 4000 i.i.d. draws of a
# quadratic form in Gaussians (CLT). A referee re-running 37 seeds found |z| = 4.53 at seed 8
# under the former bound 4.5 (≈ 0.8% family-wise per seed over 200 × 3 × 2 = 1200 z's). The
# bound is now set by Bonferroni over 1200 z's per seed and 50 seeds at a 1% family-wise
# false-alarm rate: P(|z| > 5.5) = 3.8e-8 ≤ 0.01/(1200·50) = 1.7e-7.
Z_MAX = Tolerance(
    "monte-carlo", 5.5, "|z| of a CLT mean; Bonferroni over 1200 z's × 50 seeds at 1% "
    "family-wise"
)  # fmt: skip
# The bounds are attained only as τ → ∞; their margins are differences of O(1) numbers.
ROUND_OFF_BOUND = Tolerance("round-off", 1e-12, "relative to the largest bound, float64")


def check_linearised_network(errors):
    """GD with ε = η_0/n on the linearised SP network = kernel GD with α = η_0, K = JJᵀ/(Nn)."""
    errors = np.asarray(errors)
    return compare(
        errors,
        ROUND_OFF.value,
        relation="upper_bound",
        tolerance=ROUND_OFF,
        diagnostics={"worst relative error": float(errors.max())},
        notes="tanh MLP (2 hidden layers, SP) linearised at a random init; GD on (1/2N)Σ(f − y)² "
        "with ε = η_0/n, η_0 = 1/λ̂_max(K); measured max_τ ‖f_τ(X) − [Y + (I − η_0K)^τ(f_0 − "
        "Y)]‖_∞ / ‖f_0 − Y‖_∞ with K = JJᵀ/(Nn).",
    )


def check_closed_forms(run: es.ClosedFormErrors):
    """Train residual (I − αK)^τ r_0 and test predictions vs direct function-space iteration."""
    parts = [
        compare(np.asarray(v), ROUND_OFF.value, relation="upper_bound", tolerance=ROUND_OFF)
        for v in run
    ]
    return all_of(
        *parts,
        diagnostics={f"worst {k} error": float(np.max(v)) for k, v in run._asdict().items()},
        notes="random full-rank kernels 𝕂 = ΦΦᵀ, α = 1/λ̂_max(𝕂/N); f_PT and Y Gaussian; "
        "errors relative to max|f| over τ.",
    )


def check_bias_variance_monte_carlo(z):
    """E‖f_τ − f_tgt‖²_N = B²_τ + E V_τ, E V_τ = (σ²/N)Σ(1 − (1 − αλ̂_i)^τ)² (Monte Carlo)."""
    z = np.abs(np.asarray(z))
    return compare(
        z.ravel(),
        Z_MAX.value,
        relation="upper_bound",
        tolerance=Z_MAX,
        num_instances=z.shape[0],
        diagnostics={"max |z|": float(z.max())},
        notes="random kernels, Δ* ~ N(0, I), σ ~ U[0.2, 2], τ ∈ (1, 7, 60); explicit matrix "
        "powers (I − αK)^τ applied to Δ* and the noise against the eigenvalue closed forms "
        "B²_τ + E V_τ and E V_τ.",
    )


def check_bias_variance_bounds(run: es.BiasVarianceBounds):
    """B²_τ ≤ ‖Δ*‖²_H/(2eη_τ) and E V_τ ≤ σ²η_τ R̂_K(η_τ^{−1/2})²."""
    out = {k: np.asarray(v) for k, v in run._asdict().items()}
    parts = [
        compare(
            out[name],
            out[f"{name}_bound"],
            relation="upper_bound",
            atol=ROUND_OFF_BOUND.value * out[f"{name}_bound"].max(),
            tolerance=ROUND_OFF_BOUND,
            num_instances=out[name].shape[0],
        )
        for name in ("bias", "variance")
    ]
    # The hand instance (N = 2): K = diag(2, 2x), so α = ½ and η_τ = τ/2. Δ* = 𝕂e₂ = (0, 4x)
    # gives B²_τ = 8x²(1 − x)^{2τ} and ‖Δ*‖²_H = 4x, so B²_τ/bound = 2eτx(1 − x)^{2τ}; σ = 1
    # gives E V_τ = ½[1 + (1 − (1 − x)^τ)²] and bound ½[min(1, τ) + min(1, τx)]. All written
    # here, two-sided: a bound off by any factor, the wrong e, η = τ for ατ, or a wrong
    # branch of min{1, ηλ̂} moves them.
    taus, x = out["taus"][0], es.BOUNDS_ANCHOR_X
    bias_ratio = 2 * math.e * taus * x * (1 - x) ** (2 * taus)
    variance = 0.5 * (1 + (1 - (1 - x) ** taus) ** 2)
    variance_bound = 0.5 * (np.minimum(1, taus) + np.minimum(1, taus * x))
    anchors = [
        compare(out[f"anchor_{name}"], np.broadcast_to(value, out[f"anchor_{name}"].shape),
                relation="equal", rtol=ROUND_OFF.value, tolerance=ROUND_OFF)
        for name, value in (("variance", variance), ("variance_bound", variance_bound))
    ] + [
        compare(out["anchor_bias"] / out["anchor_bias_bound"],
                np.broadcast_to(bias_ratio, out["anchor_bias"].shape), relation="equal",
                rtol=ROUND_OFF.value, tolerance=ROUND_OFF),
    ]  # fmt: skip
    return all_of(
        *parts,
        *anchors,
        diagnostics={
            "tightest B²/bound": float(np.max(out["bias"] / out["bias_bound"])),
            "tightest E V/bound": float(np.max(out["variance"] / out["variance_bound"])),
            "hand instance: largest B²/bound (closed form)": float(bias_ratio.max()),
        },
        notes="Δ* = 𝕂a with a ~ N(0, I), 30 step counts τ ∈ [1, 10⁴] (geometric), α = "
        f"1/λ̂_max; the variance bound is attained as τ → ∞ (e = {math.e:.4f} in the bias one). "
        "Hand instance: K = diag(2, 2x), x = 0.005, α = ½: Δ* along 2x (B²/bound = "
        "2eτx(1 − x)^{2τ}, largest 0.985 on the grid, at τ = 85) and σ = 1 (E V_τ and its bound "
        "in closed form, both branches of min{1, ηλ̂}).",
    )


CLAIMS = (
    Claim(
        id="early_stopping.eq7.linearised_gd_is_kernel_gd",
        paper=f"{_PAPER}, eqs. (5), (7), (37)",
        statement="GD with ε = η_0/n on (1/2N)Σ(f − y)² moves the linearised SP network as "
        "f_{τ+1}(X) = f_τ(X) − η_0 K(f_τ(X) − Y) with K = JJᵀ/(N n).",
        kind="identity",
        reading=derived(
            "the paper defines K = (1/N)JJᵀ (7) and the width-normalised NTK (37) with step "
            "ε = η_0/n; the project derives that linearised GD is exactly kernel GD on "
            "K = JJᵀ/(Nn) with step η_0"
        ),
        uses=LINEARISED_GD,
        check=check_linearised_network,
        min_instances=200,
    ),
    Claim(
        id="early_stopping.kernel_gd.closed_forms",
        paper=f"{_PAPER}, Sec 3.4, Lemma 1 (linearised)",
        statement="Kernel GD from f_PT: r_τ = (I − αK)^τ r_0 and f_τ(x) = f_PT(x) + "
        "𝕂(x, X)𝕂^{-1}[I − (I − αK)^τ](Y − f_PT(X)).",
        kind="identity",
        reading=derived("the closed forms of kernel GD from f_PT, behind Lemma 1's (14)"),
        uses=CLOSED_FORMS,
        check=check_closed_forms,
        min_instances=200,
    ),
    Claim(
        id="early_stopping.eq34.bias_variance_monte_carlo",
        paper=f"{_PAPER}, eq. (34)",
        statement="E‖f_τ − f_tgt‖²_N = (1/N)‖(I − αK)^τΔ*‖² + (σ²/N)Σ_i(1 − (1 − αλ̂_i)^τ)².",
        kind="identity",
        reading=proof("the bias/variance split (19)/(34) of the error, made exact in expectation"),
        uses=MONTE_CARLO,
        check=check_bias_variance_monte_carlo,
        min_instances=200,
    ),
    Claim(
        id="early_stopping.eq35.bias_variance_bounds",
        paper=f"{_PAPER}, eq. (35); Raskutti et al. 2014, Lemmas 7–8",
        statement="B²_τ ≤ ‖Δ*‖²_H/(2eη_τ) and E V_τ ≤ σ²η_τ R̂_K(η_τ^{−1/2})² for every τ.",
        kind="bound",
        reading=proof("“B²_τ + V_τ ≤ C/η_τ” (35), with Raskutti et al. 2014's constants"),
        uses=BOUNDS,
        check=check_bias_variance_bounds,
        min_instances=200,
    ),
)
