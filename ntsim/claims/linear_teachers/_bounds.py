"""Claims of Shachaf et al. 2021 on Thm 4.2 (bounds via ‖Σ̃ − Σ‖) and the Σ = I expectation.

Each reads one simulation of :mod:`ntsim.theory.linear_teachers` in float64 (the same keys
as the v1 claims, so the draws are unchanged). Non-isotropic instances: ``Σ = V diag(λ) Vᵀ``
with Haar ``V`` and a spread spectrum (log-uniform on ``[0.02, 2]``, condition number up to
100), Gaussian rows.
"""

from __future__ import annotations

import math

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, proof
from ntsim.claims._decisions import Interval, Tolerance, all_of, compare, estimate_in
from ntsim.claims._premises import given
from ntsim.claims.linear_teachers._monte_carlo import z_within
from ntsim.theory import linear_teachers as lt

__all__ = ["CLAIMS"]

_PAPER = "Shachaf et al. 2021"
_EXPERIMENT = "linear_teachers/fig1_covariance_alignment"

DETERMINISTIC = Simulation(
    "linear_teachers.thm4_2.deterministic_ratios",
    lt.simulate_thm4_2_deterministic,
    lt.THM4_2_DETERMINISTIC_SETTINGS,
    x64=True,
    key_name="linear_teachers.thm4_2.deterministic",
)
IMPLIED = Simulation(
    "linear_teachers.thm4_2.implied_constant",
    lt.simulate_implied_constant,
    {
        "quick": lt.SizesSetting(d=50, n_values=(10, 20, 50, 100, 200), draws_per_n=40),
        "full": lt.SizesSetting(d=200, n_values=(10, 22, 46, 100, 215, 464, 1000), draws_per_n=30),
    },  # fmt: skip
    x64=True,
)
IDENTITY = Simulation(
    "linear_teachers.sigma_identity.expected_risk",
    lt.simulate_identity_risk,
    {
        "quick": lt.SizesSetting(d=40, n_values=(1, 10, 20, 30, 39), draws_per_n=200),
        "full": lt.SizesSetting(d=200, n_values=(1, 50, 100, 150, 199), draws_per_n=400),
    },
    x64=True,
)

# Ratios lhs/rhs ≤ 1: both sides are float64 computations with relative error ~1e-13 (eigh,
# QR on d ≤ 80); 1e-10 cannot hide a bound that is off by a constant factor.
_TOL_RATIO = Tolerance("round-off", 1e-10, "absolute on ratios of O(1); float64 eigh/QR, d ≤ 80")
# "c bounded, not growing with n": the slope of log(mean c) on log n lies in [−0.2, 0.2]. A
# wrong rate leaves the band: dropping the r_0/n term moves the slope at n < r_0 towards +0.5,
# dropping the max{} altogether (c = ĝ/λ_1) gives ≈ −0.5.
_SLOPE_BAND = Tolerance(
    "chosen", 0.2, "|slope| of log mean c against log n: half-way between flat (0) and the ±0.5 "
    "a wrong rate in g would give",
    observed="quick, seed 0: slope −0.047, 99.7% bootstrap CI [−0.103, 0.010]",
)  # fmt: skip
_C_MAX = Tolerance(
    "chosen", 4.0, "every implied c ≤ 4: Koltchinskii–Lounici's E‖Σ̃ − Σ‖ ≍ λ_1(√(r_0/n) + r_0/n) "
    "puts c for Gaussian data between ≈ 1 and ≈ 3",
    observed="c between 1.2 and 2.9 in the first v1 runs; max 2.98 at quick, seed 0",
)  # fmt: skip
_BOOTSTRAP = 2000
_Z_MAX = Tolerance(
    "monte-carlo", 4.0, "|z| of a mean over ≥ 200 draws against its exact expectation, with the "
    "exact (Beta) standard error: per-n false-alarm rate ≈ 6e-5"
)  # fmt: skip


def check_deterministic(run: lt.Thm42Run):
    """R(γ) ≤ 2ĝ³‖P_{≤m}v‖²/λ_m² + 2ĝ‖P_{>m}v‖² ∀ m, ‖P_⊥V_{≤m}‖ ≤ ĝ/λ_m, R ≤ ĝ‖P_⊥v‖²."""
    bound, dk, null = (np.asarray(v) for v in (run.bound, run.davis_kahan, run.null_space))
    instances = null.size
    parts = [
        compare(values, 1.0, relation="upper_bound", atol=_TOL_RATIO.value, tolerance=_TOL_RATIO,
                num_instances=instances)
        for values in (bound, dk, null)
    ]  # fmt: skip
    best_m = bound.max(axis=-1)  # tightest m per instance
    return all_of(
        *parts,
        diagnostics={
            "worst R/bound(3) over m": bound.max(),
            "worst Davis–Kahan ratio": dk.max(),
            "worst R/(ĝ‖P_⊥v‖²)": null.max(),
            "n": list(run.n_values),
            "median over draws of R/min_m bound(3), per n": np.median(best_m, axis=1),
        },
        notes="Ratios lhs/rhs (≤ 1 required), all m = 1..d; Haar Σ, λ log-uniform on "
        "[0.02, 2], θ_S, θ_T ~ N(0, I).",
    )


def _slope(ns: np.ndarray, c: np.ndarray) -> float:
    return float(np.polyfit(np.log(ns), np.log(c.mean(axis=-1)), 1)[0])


def check_implied_constant(run: lt.ImpliedConstantRun):
    """ĝ/(λ_1 max{√(r_0/n), r_0/n, √(1/n), 1/n}) is O(1) (≤ 4) and flat in n (slope CI)."""
    c = np.asarray(run.c)  # (n, draws)
    ns = np.asarray(run.n_values, float)  # as measured on the run's inputs
    sizes = {"two or more distinct sample sizes (a trend in n)": np.array(np.unique(ns).size > 1)}
    bounded = compare(c, _C_MAX.value, relation="upper_bound", tolerance=_C_MAX)
    if np.unique(ns).size < 2:  # no slope to fit: the flatness half is undecided
        return given(bounded, sizes)
    slope = _slope(ns, c)
    rng = np.random.default_rng(0)  # resampling only; the draws come from the run
    idx = rng.integers(0, c.shape[1], size=(_BOOTSTRAP, c.shape[1]))
    boot = np.array([_slope(ns, c[:, i]) for i in idx])
    ci = tuple(np.quantile(boot, [0.0015, 0.9985]))  # ~99.7%, as mean ± 3 s.e.
    ci = (min(ci[0], slope), max(ci[1], slope))
    return all_of(
        estimate_in(slope, ci, Interval(-_SLOPE_BAND.value, _SLOPE_BAND.value),
                    num_instances=c.size, tolerance=_SLOPE_BAND),
        bounded,
        diagnostics={"n": ns, "mean c per n": c.mean(1), "min c": c.min(), "max c": c.max(),
                     "slope (bootstrap 99.7% CI)": [slope, *ci],
                     "r_0": float(run.effective_rank)},
        notes="Gaussian X, Haar Σ with λ_k = 1/k, δ = 1; slope of log mean c on log n with a "
        f"bootstrap CI over draws ({_BOOTSTRAP} resamples).",
    )  # fmt: skip


def check_identity_expected_risk(run: lt.IdentityRiskRun):
    """Σ = I: E[R(γ)] = ((d−n)/d)‖θ_T − θ_S‖² (mean ratio within 4 exact s.e. of 1)."""
    ratios = np.asarray(run.ratio)
    d, per_n = run.d, ratios.shape[1]
    n = np.asarray(run.n_values, dtype=float)
    se = np.sqrt(n / ((d - n) * (d / 2 + 1)) / per_n)  # exact (Beta) standard error
    z = (ratios.mean(axis=1) - 1.0) / se
    return z_within(
        z, _Z_MAX, num_instances=ratios.size,
        diagnostics={"n": n, "mean ratio per n": ratios.mean(1), "z per n": z,
                     "sample sd / exact sd": ratios.std(1, ddof=1) / (se * math.sqrt(per_n))},
        notes="|z| of the mean ratio R(γ)/(((d−n)/d)‖v‖²) per n, then pooled; exact s.e. "
        "from ‖P_⊥v̂‖² ~ Beta((d−n)/2, n/2).",
    )  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="linear_teachers.thm4_2.deterministic",
        paper=f"{_PAPER}, Thm 4.2, eq. (3) (constant-free form with ĝ = ‖Σ̃ − Σ‖)",
        statement="For every X and every m with λ_m > 0: R(γ) ≤ 2ĝ³‖P_≤m v‖²/λ_m² + "
        "2ĝ‖P_>m v‖², ‖P_⊥V_≤m‖ ≤ ĝ/λ_m (Davis–Kahan) and R(γ) ≤ ĝ‖P_⊥v‖²",
        kind="bound",
        reading=proof(
            "the deterministic steps of Thm 4.2's proof, with the realised ĝ = ‖Σ̃ − Σ‖ in "
            "place of its high-probability bound g(λ, δ, n) (which carries an unspecified "
            "constant)"
        ),
        uses=DETERMINISTIC,
        check=check_deterministic,
        min_instances=200,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="linear_teachers.thm4_2.implied_constant",
        paper=f"{_PAPER}, Thm 4.2 (g(λ, δ, n) and ‖Σ̃ − Σ‖ ≤ g)",
        statement="The constant c = ĝ/(λ_1 max{√(r_0/n), r_0/n, √(δ/n), δ/n}) (δ = 1) is at "
        "most 4 and flat in n (slope of log mean c on log n within ±0.2, bootstrap CI)",
        kind="rate",
        reading=derived(
            "g's constant is unspecified in the paper; the project reads g as the right rate: "
            "the constant it implies for Gaussian data is O(1) and does not drift with n"
        ),
        uses=IMPLIED,
        check=check_implied_constant,
        min_instances=200,
    ),
    Claim(
        id="linear_teachers.sigma_identity.expected_risk",
        paper=f"{_PAPER}, Sec 5.4 (Thm 5.4, eq. (10); exact expectation)",
        statement="Σ = I, Gaussian X: E[R(γ)] = ((d−n)/d)‖θ_T − θ_S‖² exactly",
        kind="identity",
        reading=derived(
            "eq. (10) in expectation: P_⊥ is a uniformly random (d − n)-dimensional projection, "
            "so E‖P_⊥v‖² = ((d−n)/d)‖v‖² exactly (the ε of (10) is its fluctuation)"
        ),
        uses=IDENTITY,
        check=check_identity_expected_risk,
        min_instances=200,
    ),
)
