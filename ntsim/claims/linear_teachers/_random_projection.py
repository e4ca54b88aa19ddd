"""Claims of Shachaf et al. 2021, Thm 5.4 (Σ = I): random-projection bounds (9), (10).

The printed bound (9) with ``ζ = ε‖θ_T‖`` is refuted (a first-order cross term of eq. (7)
is not covered) and registered with ``expect="refuted"`` beside its corrected twin; the
exact scale invariance / 2-homogeneity of ``R(β_∞)`` are checked to round-off. Float64
inside ``with jax.enable_x64(True):``; instances vmapped with
:func:`ntsim.claims._base.vmap_instances`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare
from ntsim.theory.linear_teachers import (
    deep_risk,
    random_projection_bounds,
    unit_pair_at_distance,
)

__all__ = ["CLAIMS"]

_PAPER = "Shachaf et al. 2021"
# Exact identities (invariances) to 1e-10 relative in float64.
_TOL_IDENTITY = 1e-10

# Thm 5.4: (d, n, instances per (‖θ̂_T − θ̂_S‖, ‖θ_T‖) pair).
_PROJ = {"quick": (200, 20, 50), "full": (1000, 100, 50)}
_ANGLES = (0.1, 0.5)
_TARGET_NORMS = (1.0, 10.0)
_SCALES_S = (0.1, 10.0)
# The printed (9) fails in ~5% of draws at ‖θ̂_T − θ̂_S‖ ∈ {0.5, 1} (seeds 0–2: 9–19 of 200
# at quick scale), so its counterexample reproduces for any key; at 0.1 it rarely fails.
_REFUTE_ANGLES = (0.5, 1.0)


# ------------------------------------------------------------------------------- Thm 5.4


def _projection_instance(key, d: int, n: int, angle: float, norm_t: float) -> dict:
    """Σ = I, X ~ N(0, I)^n, ‖θ_S‖ = 1, ‖θ_T‖ = norm_t, ‖θ̂_T − θ̂_S‖ = angle exactly."""
    k_x, k_s, k_p = jax.random.split(key, 3)
    unit_s, unit_t = unit_pair_at_distance(k_s, k_p, d, angle)
    return {"x": jax.random.normal(k_x, (n, d)), "theta_s": unit_s, "theta_t": norm_t * unit_t}


def _projection_terms(inst):
    x, ts, tt = inst["x"], inst["theta_s"], inst["theta_t"]
    eye = jnp.eye(x.shape[1])
    bounds = random_projection_bounds(x, ts, tt)
    r_inf = deep_risk(x, ts, tt, eye, jnp.inf)
    r_lin = deep_risk(x, ts, tt, eye, 1.0)
    frac = (x.shape[1] - x.shape[0]) / x.shape[1]
    lead = frac * jnp.sum(tt**2) * jnp.sum((tt / jnp.linalg.norm(tt) - ts) ** 2)
    return {
        "r_inf": r_inf,
        "r_lin": r_lin,
        "eq9": bounds.eq9,
        "eq10": bounds.eq10,
        "eq9c": bounds.eq9_corrected,
        "eps": bounds.epsilon,
        "ratio": r_inf / lead,
        "src": jnp.stack([deep_risk(x, s * ts, tt, eye, jnp.inf) for s in _SCALES_S]),
        "tgt": jnp.stack([deep_risk(x, ts, s * tt, eye, jnp.inf) for s in _SCALES_S]),
    }


def _projection_runs(key, scale, angles=_ANGLES):
    """All (angle, ‖θ_T‖) groups in one ``jit(vmap)`` (angle and norm are traced)."""
    d, n, per = _PROJ[scale]
    grid = np.array([(a, nt) for a in angles for nt in _TARGET_NORMS]).repeat(per, axis=0)
    keys = jax.random.split(key, grid.shape[0])

    def one(k, a, nt):
        return _projection_terms(_projection_instance(k, d, n, a, nt))

    out = jax.jit(jax.vmap(one))(keys, jnp.asarray(grid[:, 0]), jnp.asarray(grid[:, 1]))
    return {k: np.asarray(v) for k, v in out.items()}, (d, n, per)


def _projection_notes(t, d, n, per, angles=_ANGLES) -> str:
    return (
        f"Σ = I, d = {d}, n = {n}, ‖θ̂_T − θ̂_S‖ ∈ {angles} × ‖θ_T‖ ∈ {_TARGET_NORMS}, {per} "
        f"instances each. ε measured = smallest ε making Vershynin Lemma 5.3.2 two-sided for "
        f"P_⊥ and P_∥ on θ_T − θ_S, θ̂_T − θ̂_S, θ̂_S, θ̂_T: range "
        f"[{t['eps'].min():.3f}, {t['eps'].max():.3f}]. "
        f"R(β_∞)/[((d−n)/d)‖θ_T‖²‖θ̂_T−θ̂_S‖²] ∈ [{t['ratio'].min():.3f}, "
        f"{t['ratio'].max():.3f}], median {np.median(t['ratio']):.3f}. "
    )


def check_bound9_printed(key, scale: str) -> ClaimResult:
    """Printed (9) with ζ = ε‖θ_T‖ and the measured ε, draw by draw: refuted."""
    check_choice("check_bound9_printed", "scale", scale, SCALES)
    with jax.enable_x64(True):
        t, (d, n, per) = _projection_runs(key, scale, _REFUTE_ANGLES)
    ratio = t["r_inf"] / t["eq9"]
    bad = ratio > 1
    return compare(
        t["r_inf"],
        t["eq9"],
        relation="upper_bound",
        notes=_projection_notes(t, d, n, per, _REFUTE_ANGLES)
        + f"Printed (9), ζ = ε‖θ_T‖: max R(β_∞)/(9) = {ratio.max():.3f}; violated in "
        f"{bad.sum()} of {bad.size} draws, at ‖θ̂_T − θ̂_S‖ ∈ "
        f"{sorted({_REFUTE_ANGLES[i // (2 * per)] for i in np.flatnonzero(bad)})}. Cause: "
        f"the cross term 2(1 − ρ)⟨P_⊥(θ̂_T − θ̂_S), θ̂_S⟩‖θ_T‖² of eq. (7), ρ = ‖P_∥θ̂_T‖/‖P_∥θ̂_S‖, "
        f"is first order in ‖θ̂_T − θ̂_S‖ and not covered by the additive ζ² = ε²‖θ_T‖².",
    )


def check_random_projection_bounds(key, scale: str) -> ClaimResult:
    """Σ = I, Gaussian X: R(β_∞) ≤ corrected (9) and R(γ) ≤ (10) with the measured ε."""
    check_choice("check_random_projection_bounds", "scale", scale, SCALES)
    with jax.enable_x64(True):
        t, (d, n, per) = _projection_runs(key, scale)
    parts = [
        compare(t["r_inf"], t["eq9c"], relation="upper_bound", num_instances=t["eps"].size),
        compare(t["r_lin"], t["eq10"], relation="upper_bound"),
    ]
    notes = _projection_notes(t, d, n, per) + (
        f"Corrected (9) ((d−n)/d)·4(1+ε)²/(1−ε)²‖θ_T‖²‖θ̂_T−θ̂_S‖² (derived, holds for every "
        f"draw given ε < 1): max R(β_∞)/bound = {np.max(t['r_inf'] / t['eq9c']):.3f}; max "
        f"R(γ)/(10) = {np.max(t['r_lin'] / t['eq10']):.3f} ((10) is the lemma itself applied "
        f"to θ_T − θ_S, so it holds by the definition of the measured ε)."
    )
    return combine_results(*parts, notes=notes)


def check_scale_invariance(key, scale: str) -> ClaimResult:
    """R(β_∞) is invariant under θ_S → sθ_S and 2-homogeneous under θ_T → sθ_T."""
    check_choice("check_scale_invariance", "scale", scale, SCALES)
    with jax.enable_x64(True):
        t, (d, n, per) = _projection_runs(key, scale)
    base = t["r_inf"][:, None]
    s2 = np.asarray(_SCALES_S)[None, :] ** 2
    parts = [
        compare(t["src"], np.broadcast_to(base, t["src"].shape), relation="equal",
                rtol=_TOL_IDENTITY, num_instances=base.size),
        compare(t["tgt"], s2 * base, relation="equal", rtol=_TOL_IDENTITY),
    ]  # fmt: skip
    notes = (
        f"Σ = I, d = {d}, n = {n}, {base.size} instances (Thm 5.4 grid), s ∈ {_SCALES_S}; max "
        f"rel. change under θ_S → sθ_S {np.max(np.abs(t['src'] - base) / base):.1e}, max rel. "
        f"deviation of R(sθ_T)/s² from R {np.max(np.abs(t['tgt'] - s2 * base) / (s2 * base)):.1e}"
        f" (tol {_TOL_IDENTITY:g}: float64 round-off)."
    )
    return combine_results(*parts, notes=notes)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="linear_teachers.thm5_4.bound9_printed",
        paper=f"{_PAPER}, Thm 5.4, eq. (9)",
        statement="Σ = I, Gaussian X: R(β_∞) ≤ ((d−n)/d)(1+ε)²‖θ_T‖²‖θ̂_T−θ̂_S‖² + "
        "((d−n)/d)ζ² with ζ = ε‖θ_T‖ and ε the measured random-projection deviation, "
        "for every draw",
        check=check_bound9_printed,
        expect="refuted",
    ),
    Claim(
        id="linear_teachers.thm5_4.bounds",
        paper=f"{_PAPER}, Thm 5.4, eqs. (9) corrected, (10)",
        statement="Σ = I, Gaussian X, measured ε < 1: R(β_∞) ≤ ((d−n)/d)·4(1+ε)²/(1−ε)²·"
        "‖θ_T‖²‖θ̂_T−θ̂_S‖² and R(γ) ≤ ((d−n)/d)(1+ε)²‖θ_T−θ_S‖²",
        check=check_random_projection_bounds,
    ),
    Claim(
        id="linear_teachers.thm5_4.scale_invariance",
        paper=f"{_PAPER}, Thm 5.4 and eq. (7)",
        statement="R(β_∞) is unchanged by θ_S → sθ_S and scales as s² under θ_T → sθ_T",
        check=check_scale_invariance,
    ),
)
