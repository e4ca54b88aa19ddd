"""Claims on the data-dependent stopping rule (Sun & Raskutti 2026, Secs 3.5, 6.1, 6.3).

Eqs. (10)–(11), the stopping time ``T̂``, the ``C_H`` exponent erratum, the rate of eq. (30)
on exact power-law spectra, and the ``12ϱ̂²`` guarantee on the Sobolev benchmark of
Raskutti et al. 2014. Float64 throughout (``with jax.enable_x64(True):``); instances are
vmapped, Python loops run only over static sizes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare, vmap_instances
from ntsim.claims._contract import Claim as ClaimV2
from ntsim.claims._contract import Simulation, derived
from ntsim.claims._decisions import Tolerance, all_of
from ntsim.claims._decisions import compare as compare_v2
from ntsim.claims.early_stopping._common import map_instances
from ntsim.core import (
    local_rademacher_complexity,
    log_log_slope,
    stopping_time,
    stopping_time_constant_step,
)
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS"]

_PAPER = "Sun & Raskutti 2026"
_INSTANCES = 200
_SPECTRUM_SIZE = {"quick": 50, "full": 400}
_RADII = 64  # radius grid for the monotonicity facts
# Bisection returns the upper end after 100 halvings of a log-bracket of width ≤ log √N:
# relative error ~1e-16; the fixed-point residual |R̂/(cϱ̂²) − 1| is then ~1e-15. 1e-10
# leaves 1e5 slack.
_TOL_FIXED_POINT = 1e-10
# Sobolev benchmark sizes: (sample sizes, draws per size) with ≥ 200 draws in all.
_SOBOLEV = {"quick": ((25, 50, 100, 200), 50), "full": ((100, 200, 400, 800, 1600), 40)}
# Rate of the guarantee 12 C_H² ϱ̂² on the Sobolev kernel (β = 1): slope −2/3. Measured
# −0.688 (N = 25..200) and −0.685 (N = 100..1600): the empirical spectrum only approximates
# k^{−2} at small k; 0.05 is ~3x the measured gap.
_SOBOLEV_RATE_TOL = 0.05


def _random_spectrum(key, n: int):
    """Eigenvalues ``u_k k^{−2β}`` with random ``β ∈ [0.3, 2]``, ``u_k ~ U[0.5, 1.5]``, scale."""
    k_beta, k_noise, k_scale = jax.random.split(key, 3)
    beta = jax.random.uniform(k_beta, minval=0.3, maxval=2.0)
    jitter = jax.random.uniform(k_noise, (n,), minval=0.5, maxval=1.5)
    scale = 10 ** jax.random.uniform(k_scale, minval=-2.0, maxval=1.0)
    return scale * jitter * jnp.arange(1, n + 1) ** (-2 * beta)


# ------------------------------------------------------------------------------ eq. (10)


def _monotonicity(key, n: int):
    lam = _random_spectrum(key, n)
    radii = jnp.geomspace(1e-4, 1e2, _RADII) * jnp.sqrt(jnp.max(lam))
    complexity = local_rademacher_complexity(lam, radii)
    scaled = complexity / radii**2
    return jnp.stack(
        [
            jnp.min(radii - complexity) / jnp.max(radii),  # R̂ ≤ ϱ
            jnp.min(jnp.mean(lam) - complexity**2) / jnp.mean(lam),  # R̂² ≤ tr K/N
            jnp.min(jnp.diff(complexity)) / jnp.max(complexity),  # non-decreasing
            jnp.min(-jnp.diff(scaled)) / jnp.max(scaled),  # R̂/ϱ² non-increasing
        ]
    )


def check_rademacher_monotone(key, scale: str) -> ClaimResult:
    """R̂_K(ϱ) ≤ ϱ, R̂_K² ≤ tr K/N, R̂_K non-decreasing and R̂_K/ϱ² non-increasing (eq. (10))."""
    check_choice("check_rademacher_monotone", "scale", scale, SCALES)
    n = _SPECTRUM_SIZE[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        margins = np.asarray(vmap_instances(lambda k: _monotonicity(k, n), keys))
    return compare(
        margins,
        0.0,
        relation="lower_bound",
        atol=1e-14,
        num_instances=_INSTANCES,
        notes=f"random spectra u_k·k^{{−2β}} (β ~ U[0.3, 2], u_k ~ U[0.5, 1.5], N = {n}), "
        f"{_RADII} radii over 6 decades around λ̂_max^{{1/2}}; measured = the smallest "
        "normalised slack of each of the four facts per instance (≥ 0 holds; round-off "
        "atol 1e-14).",
    )


# ------------------------------------------------------------------------------ eq. (11)


def _fixed_point(key, n: int):
    k_spec, k_sigma, k_ch = jax.random.split(key, 3)
    lam = _random_spectrum(k_spec, n)
    sigma = jax.random.uniform(k_sigma, minval=0.1, maxval=2.0)
    c_h = jax.random.uniform(k_ch, minval=0.2, maxval=5.0)
    c = es.critical_radius_coefficient(sigma, c_h)
    rho = es.empirical_critical_radius(lam, sigma, c_h)
    residual = jnp.abs(local_rademacher_complexity(lam, rho) / (c * rho**2) - 1)
    below = rho * (1 - 1e-6)  # just below the root the inequality must fail
    fails_below = local_rademacher_complexity(lam, below) / (c * below**2) - 1
    more_noise = es.empirical_critical_radius(lam, 1.5 * sigma, c_h)  # ϱ̂ ↑ in σ
    better_init = es.empirical_critical_radius(lam, sigma, c_h / 1.5)  # ϱ̂ ↑ as C_H ↓
    return {
        "residual": residual,
        "fails_below": fails_below,
        "sigma_monotone": more_noise / rho - 1,
        "c_h_monotone": better_init / rho - 1,
    }


def check_critical_radius(key, scale: str) -> ClaimResult:
    """Bisection ϱ̂ is the smallest root of R̂_K(ϱ) = ϱ²C_H/(2eσ); ϱ̂ ↑ in σ, ↓ in C_H."""
    check_choice("check_critical_radius", "scale", scale, SCALES)
    n = _SPECTRUM_SIZE[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        out = {
            k: np.asarray(v) for k, v in vmap_instances(lambda k: _fixed_point(k, n), keys).items()
        }
    root = compare(
        out["residual"], _TOL_FIXED_POINT, relation="upper_bound", num_instances=_INSTANCES
    )
    smallest = compare(out["fails_below"], 0.0, relation="lower_bound", num_instances=_INSTANCES)
    monotone = compare(
        np.concatenate([out["sigma_monotone"], out["c_h_monotone"]]),
        0.0,
        relation="lower_bound",
        num_instances=_INSTANCES,
    )
    return combine_results(
        root,
        smallest,
        monotone,
        notes=f"random spectra (N = {n}), σ ~ U[0.1, 2], C_H ~ U[0.2, 5], corrected exponent. "
        f"Fixed-point residual |R̂(ϱ̂)/(cϱ̂²) − 1| max {out['residual'].max():.1e} "
        f"(tolerance {_TOL_FIXED_POINT:g}); R̂ > cϱ² at ϱ̂(1 − 10⁻⁶) in every instance (min "
        f"relative excess {out['fails_below'].min():.1e}); ϱ̂ grows by ≥ "
        f"{out['sigma_monotone'].min():.3f} (σ × 1.5) and ≥ {out['c_h_monotone'].min():.3f} "
        "(C_H / 1.5).",
    )


def _rescaling(key, n: int, exponent: int):
    """ϱ̂ and T̂ for (σ, C_H) vs the rescaled unit-ball problem (σ/C_H, 1)."""
    k_spec, k_sigma, k_ch = jax.random.split(key, 3)
    lam = _random_spectrum(k_spec, n)
    alpha = 1 / jnp.max(lam)
    sigma = jax.random.uniform(k_sigma, minval=0.1, maxval=2.0)
    c_h = jax.random.uniform(k_ch, minval=2.0, maxval=5.0)
    rho = es.empirical_critical_radius(lam, sigma, c_h, c_h_exponent=exponent)
    rho_unit = es.empirical_critical_radius(lam, sigma / c_h, 1.0, c_h_exponent=exponent)
    t_hat = stopping_time_constant_step(rho, alpha)
    t_unit = stopping_time_constant_step(rho_unit, alpha)
    return jnp.stack([jnp.abs(rho / rho_unit - 1), jnp.abs(t_hat - t_unit)])


def _check_exponent(key, scale: str, exponent: int) -> ClaimResult:
    n = _SPECTRUM_SIZE[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        out = np.asarray(vmap_instances(lambda k: _rescaling(k, n, exponent), keys))
    result = compare(out[:, 0], 1e-9, relation="upper_bound", num_instances=_INSTANCES)
    differ = int(np.sum(out[:, 1] > 0))
    return ClaimResult(
        holds=result.holds and differ == 0,
        measured=result.measured,
        reference=result.reference,
        margins=np.minimum(result.margins, np.where(out[:, 1] > 0, -out[:, 1], np.inf)),
        num_instances=_INSTANCES,
        notes=f"C_H^{exponent} in eq. (11). Dividing f and Y by C_H (C_H ~ U[2, 5]) gives the "
        "unit-ball problem with noise σ/C_H, on which GD's iterates are the original ones "
        "divided by C_H, so a consistent rule must pick the same ϱ̂ and T̂. Measured: "
        f"|ϱ̂(σ, C_H)/ϱ̂(σ/C_H, 1) − 1| per instance, range [{out[:, 0].min():.2e}, "
        f"{out[:, 0].max():.2e}] (tolerance 1e-9); T̂ differs in {differ}/{_INSTANCES} "
        f"instances (N = {n}, α = 1/λ̂_max).",
    )


def check_c_h_exponent_printed(key, scale: str) -> ClaimResult:
    """Eq. (11) as printed (C_H²) is not invariant under rescaling f by C_H (refuted)."""
    check_choice("check_c_h_exponent_printed", "scale", scale, SCALES)
    return _check_exponent(key, scale, es.PRINTED_C_H_EXPONENT)


def check_c_h_exponent_corrected(key, scale: str) -> ClaimResult:
    """Eq. (11) with C_H to the first power is invariant under rescaling f by C_H."""
    check_choice("check_c_h_exponent_corrected", "scale", scale, SCALES)
    return _check_exponent(key, scale, es.CORRECTED_C_H_EXPONENT)


# ------------------------------------------------------------------ stopping time T̂


def _stopping_times(key, n: int, horizon: int):
    k_spec, k_sigma, k_alpha = jax.random.split(key, 3)
    lam = _random_spectrum(k_spec, n)
    sigma = jax.random.uniform(k_sigma, minval=0.05, maxval=1.0)
    alpha = jax.random.uniform(k_alpha, minval=0.2, maxval=1.0) / jnp.max(lam)
    # non-increasing steps with a floor α/2, so η_t ≥ αt/2 reaches ϱ̂⁻² ≤ α·horizon in 2·horizon
    schedule = alpha * jnp.maximum(1 / jnp.sqrt(1 + jnp.arange(2 * horizon) / 20), 0.5)
    c_hs = jnp.array([0.5, 1.0, 2.0])
    rule = jax.vmap(lambda c: es.raskutti_stopping_time(lam, jnp.full(horizon, alpha), sigma, c))(
        c_hs
    )
    radius = jax.vmap(lambda c: es.empirical_critical_radius(lam, sigma, c))(c_hs)
    closed = stopping_time_constant_step(radius, alpha)
    decreasing = stopping_time(lam, schedule, es.critical_radius_coefficient(sigma, 1.0))
    eta = jnp.cumsum(schedule)
    decreasing_closed = jnp.sum(eta <= radius[1] ** -2)
    return {
        "rule": jnp.concatenate([rule, decreasing[None]]),
        "closed": jnp.concatenate([closed, decreasing_closed[None]]),
        "c_h_monotone": jnp.diff(rule),
        "fired": (jnp.max(rule) < horizon) & (decreasing < 2 * horizon),
    }


def check_stopping_time(key, scale: str) -> ClaimResult:
    """Rule T̂ = ⌊1/(αϱ̂²)⌋ (constant α), = max{t: η_t ≤ ϱ̂⁻²} (any schedule); T̂ ↑ in C_H."""
    check_choice("check_stopping_time", "scale", scale, SCALES)
    n = _SPECTRUM_SIZE[scale]
    horizon = 20_000
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        out = {
            k: np.asarray(v)
            for k, v in map_instances(
                lambda k: _stopping_times(k, n, horizon), keys, batch_size=4
            ).items()
        }
    if not out["fired"].all():
        raise RuntimeError("check_stopping_time: the rule did not fire within the horizon.")
    equal = compare(out["rule"], out["closed"], relation="equal", num_instances=_INSTANCES)
    monotone = compare(out["c_h_monotone"], 0.0, relation="lower_bound", num_instances=_INSTANCES)
    return combine_results(
        equal,
        monotone,
        notes=f"random spectra (N = {n}), σ ~ U[0.05, 1], α ~ U[0.2, 1]/λ̂_max; the rule "
        "R̂_K(η_t^{-1/2}) > C_H/(2eσ η_t) evaluated step by step (no radius) for C_H ∈ "
        "{0.5, 1, 2}, and for the schedule α_t = α·max{(1 + t/20)^{-1/2}, 1/2} with C_H = 1 "
        f"(horizons {horizon} and {2 * horizon}, never reached); T̂ ranges "
        f"{out['rule'].min()}..{out['rule'].max()}; all equal the closed forms exactly. "
        "T̂ is non-decreasing in C_H in every instance (Sec 6.1: a better init stops earlier).",
    )


# ------------------------------------------------------------------------ eq. (36)

_DRIFT_SLOPES = (0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)


def _optimal_stopping(key, n: int, horizon: int):
    """T̂_op with drift bounds g(τ) = c·η_τ vs the continuous minimiser √(C/c) of C/η + cη."""
    k_spec, k_sigma, k_const = jax.random.split(key, 3)
    lam = _random_spectrum(k_spec, n)
    sigma = jax.random.uniform(k_sigma, minval=0.05, maxval=1.0)
    constant = jax.random.uniform(k_const, minval=0.1, maxval=10.0)
    alpha = 1 / jnp.max(lam)
    steps = jnp.full(horizon, alpha)
    t_max = es.raskutti_stopping_time(lam, steps, sigma)
    eta = alpha * jnp.arange(1, horizon + 1)

    def t_op(slope):
        return es.optimal_stopping_time(steps, constant, slope * eta, t_max)

    def oracle(slope):  # C/(ατ) + cατ is convex in τ: best integer next to τ* = √(C/c)/α
        star = jnp.sqrt(constant / jnp.maximum(slope, 1e-300)) / alpha
        low = jnp.clip(jnp.floor(star), 1, jnp.maximum(t_max, 1))
        high = jnp.clip(jnp.ceil(star), 1, jnp.maximum(t_max, 1))

        def objective(t):
            return constant / (alpha * t) + slope * alpha * t

        best = jnp.where(objective(high) < objective(low), high, low)
        return jnp.where(slope > 0, best, jnp.maximum(t_max, 1))

    slopes = jnp.asarray(_DRIFT_SLOPES)
    return {
        "t_op": jax.vmap(t_op)(slopes),
        "oracle": jax.vmap(oracle)(slopes),
        "t_max": t_max,
    }


def check_optimal_stopping_time(key, scale: str) -> ClaimResult:
    """T̂_op = argmin_{τ ≤ T̂_max} C/η_τ + g(τ): ≤ T̂_max, = T̂_max without drift, ↓ in the drift."""
    check_choice("check_optimal_stopping_time", "scale", scale, SCALES)
    n = _SPECTRUM_SIZE[scale]
    horizon = 20_000
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        out = {
            k: np.asarray(v)
            for k, v in map_instances(
                lambda k: _optimal_stopping(k, n, horizon), keys, batch_size=20
            ).items()
        }
    if np.any(out["t_max"] >= horizon):
        raise RuntimeError("check_optimal_stopping_time: T̂_max reached the horizon.")
    t_op = out["t_op"]
    exact = compare(t_op, out["oracle"], relation="equal", num_instances=_INSTANCES)
    below_max = compare(
        t_op,
        np.maximum(out["t_max"], 1)[:, None],
        relation="upper_bound",
        num_instances=_INSTANCES,
    )
    monotone = compare(
        -np.diff(t_op, axis=1), 0.0, relation="lower_bound", num_instances=_INSTANCES
    )
    return combine_results(
        exact,
        below_max,
        monotone,
        notes=f"random spectra (N = {n}), σ ~ U[0.05, 1], C ~ U[0.1, 10], α = 1/λ̂_max, "
        f"T̂_max from the rule; drift bounds g(τ) = c·η_τ, c ∈ {_DRIFT_SLOPES}. T̂_op equals "
        "the integer minimiser of the convex C/(ατ) + cατ next to √(C/c)/α (clipped to "
        "[1, T̂_max]; T̂_max itself when c = 0) in every instance, never exceeds T̂_max and "
        "does not increase with c (Sec 6.1: kernel drift favours fewer iterations). T̂_max "
        f"ranges {out['t_max'].min()}..{out['t_max'].max()}; T̂_op at c = 1: "
        f"{t_op[:, -1].min()}..{t_op[:, -1].max()}.",
    )


# ------------------------------------------------------------------------ eq. (30)


POWER_LAW = Simulation(
    "early_stopping.eq30.power_law",
    es.simulate_power_law_rates,
    {"quick": es.PowerLawRateSetting(top=10**6), "full": es.PowerLawRateSetting(top=10**7)},
    x64=True,
)
#: |fitted slope − (−2β/(2β+1))| over N ∈ [top/100, top]. The local slope converges like
#: 1/k* with k* = N^{1/(2β+1)} eigenvalues above ϱ̂² (discreteness of the spectrum at k* and
#: its truncation at k = N), slowest for β near 1/2; no closed form for the gap is derived.
RATE_TOL = Tolerance(
    "chosen",
    0.02,
    "the pre-asymptotic gap of the local slope at N ≤ 10^7 (it shrinks with N: the second "
    "part of the check)",
    observed="largest gap over β ∈ {0.6, …, 2}: 0.0138 (β = 0.6) for N ∈ [10^4, 10^6], "
    "0.009 for N ∈ [10^5, 10^7] (31% and 55% headroom)",
)


def check_power_law_rate(run: es.PowerLawRates):
    """λ̂_k = k^{−2β} exactly: slope of log ϱ̂_N² vs log N → −2β/(2β+1) (eq. (30))."""
    slopes, early, theory = (np.asarray(a) for a in (run.slopes, run.slopes_early, run.theory))
    rate = compare_v2(slopes, theory, relation="equal", atol=RATE_TOL.value, tolerance=RATE_TOL)
    # the gap shrinks from the earlier window: the slope converges to the rate
    converging = compare_v2(np.abs(early - theory), np.abs(slopes - theory), relation="lower_bound")
    return all_of(
        rate,
        converging,
        diagnostics={
            "β": np.asarray(run.betas),
            "slope (late window)": slopes,
            "slope (window 10× earlier)": early,
            "−2β/(2β+1)": theory,
        },
        notes="σ = 1, C_H = 1; 5 geometric N per window; first part: the late-window slope "
        "within the tolerance of −2β/(2β+1); second part: its gap below the earlier window's.",
    )


# ------------------------------------------------------------------ Sobolev benchmark


def _sobolev_draws(key, scale: str):
    sizes, per_size = _SOBOLEV[scale]
    out = {}
    for index, n in enumerate(sizes):
        keys = jax.random.split(jax.random.fold_in(key, index), per_size)
        draws = map_instances(
            lambda k, n=n: es.sobolev_benchmark(k, n, holdout_fraction=None, max_steps=1),
            keys,
            batch_size=10,
        )
        out[n] = jax.tree.map(np.asarray, draws)
    return sizes, per_size, out


def check_sobolev_guarantee(key, scale: str) -> ClaimResult:
    """Sobolev kernel: ‖f_T̂ − f*‖²_N ≤ 12 C_H² ϱ̂² in every draw; the bound decays as N^{−2/3}."""
    check_choice("check_sobolev_guarantee", "scale", scale, SCALES)
    with jax.enable_x64(True):
        sizes, per_size, out = _sobolev_draws(key, scale)
        error = np.concatenate([out[n].stopping_rule for n in sizes])
        bound = np.concatenate([out[n].guarantee for n in sizes])
        mean_bound = np.array([out[n].guarantee.mean() for n in sizes])
        mean_error = np.array([out[n].stopping_rule.mean() for n in sizes])
        x = jnp.asarray(sizes, float)
        bound_slope = float(log_log_slope(x, jnp.asarray(mean_bound))[0])
        error_slope = float(log_log_slope(x, jnp.asarray(mean_error))[0])
    guarantee = compare(error, bound, relation="upper_bound")  # one draw per instance
    rate = compare([bound_slope], [-2 / 3], relation="equal", atol=_SOBOLEV_RATE_TOL)
    return combine_results(
        guarantee,
        rate,
        notes=f"𝕂 = 1 + min(x, x'), f* = |x − 1/2| − 1/4 (C_H = ‖f*‖_H = √(17/16)), σ = "
        f"{es.SOBOLEV_NOISE_STD}, α = min(1, 1/λ̂_max), N ∈ {sizes}, {per_size} draws each. "
        f"Largest error/bound ratio {np.max(error / bound):.3f} (slack ≥ "
        f"{np.min(bound / error):.0f}x). Slope of the mean bound 12C_H²ϱ̂² vs N: "
        f"{bound_slope:.3f} (theory −2/3, tolerance {_SOBOLEV_RATE_TOL}); slope of the "
        f"mean error at T̂ (not asserted; pre-asymptotic at these N): {error_slope:.3f}.",
    )


CLAIMS = (
    Claim(
        id="early_stopping.eq10.rademacher_monotone",
        paper=f"{_PAPER}, eq. (10); Raskutti et al. 2014, eq. (6)",
        statement="R̂_K(ϱ) ≤ ϱ, R̂_K(ϱ)² ≤ tr(K)/N, R̂_K non-decreasing, R̂_K(ϱ)/ϱ² non-increasing.",
        check=check_rademacher_monotone,
    ),
    Claim(
        id="early_stopping.eq11.critical_radius",
        paper=f"{_PAPER}, eq. (11) (corrected exponent)",
        statement="The bisection ϱ̂ is the smallest ϱ with R̂_K(ϱ) ≤ ϱ²C_H/(2eσ); ϱ̂ "
        "increases with σ and decreases with C_H.",
        check=check_critical_radius,
    ),
    Claim(
        id="early_stopping.eq11.c_h_exponent_printed",
        paper=f"{_PAPER}, eq. (11) as printed",
        statement="The rule R̂_K(ϱ) ≤ ϱ²C_H²/(2eσ) is invariant under rescaling f − f_PT "
        "and Y − f_PT by 1/C_H (σ → σ/C_H, C_H → 1).",
        check=check_c_h_exponent_printed,
        expect="refuted",
    ),
    Claim(
        id="early_stopping.eq11.c_h_exponent_corrected",
        paper=f"{_PAPER}, eq. (11) corrected; Raskutti et al. 2014, eq. (8) on a C_H-ball",
        statement="The rule R̂_K(ϱ) ≤ ϱ²C_H/(2eσ) is invariant under that rescaling: "
        "same ϱ̂ and T̂ as the unit-ball rule with noise σ/C_H.",
        check=check_c_h_exponent_corrected,
    ),
    Claim(
        id="early_stopping.stopping_rule.closed_form",
        paper=f"{_PAPER}, Sec 3.5, App. B.1, Sec 6.1; Raskutti et al. 2014, eq. (7)",
        statement="T̂ = argmin{t: R̂_K(η_t^{-1/2}) > C_H/(2eσ η_t)} − 1 equals "
        "max{t: η_t ≤ ϱ̂⁻²} (= ⌊1/(αϱ̂²)⌋ for constant α) and is non-decreasing in C_H.",
        check=check_stopping_time,
    ),
    Claim(
        id="early_stopping.eq36.optimal_stopping_time",
        paper=f"{_PAPER}, eqs. (35)–(36), Sec 6.1 (argmin, not eq. (26)'s 'maximizing')",
        statement="T̂_op = argmin_{τ ≤ T̂_max} C/η_τ + g(τ) for a non-decreasing drift bound g: "
        "T̂_op = T̂_max when g ≡ 0, T̂_op ≤ T̂_max, and T̂_op does not increase as g steepens.",
        check=check_optimal_stopping_time,
    ),
    ClaimV2(
        id="early_stopping.eq30.power_law_rate",
        paper=f"{_PAPER}, eqs. (29)–(30)",
        statement="For λ̂_k = k^{−2β} the critical radius obeys ϱ̂_N² ≍ N^{−2β/(2β+1)}: the "
        "fitted slope of log ϱ̂_N² in log N is within 0.02 of −2β/(2β+1) over N ∈ [top/100, "
        "top] (top = 10^6 quick, 10^7 full), and closer than over the window 10× earlier.",
        kind="rate",
        reading=derived(
            "eq. (30) prints the error rate O(N_2^{-2β/(2β+1)}) under the decay (29); the "
            "project checks that the bound's own quantity ϱ̂_N² (the guarantee is 12ϱ̂_N²) "
            "attains that rate on exact power-law spectra"
        ),
        uses=POWER_LAW,
        check=check_power_law_rate,
        min_instances=5,
    ),
    Claim(
        id="early_stopping.raskutti_thm1.sobolev_guarantee",
        paper="Raskutti et al. 2014, Thm 1 and Sec 4 (cited in Sun & Raskutti 2026, Sec 6.2); 22",
        statement="First-order Sobolev kernel, f* = |x − 1/2| − 1/4: ‖f_T̂ − f*‖²_N ≤ "
        "12C_H²ϱ̂² in every draw, and the bound decays as N^{−2/3}.",
        check=check_sobolev_guarantee,
        experiment="early_stopping/sobolev_stopping_rule",
    ),
)
