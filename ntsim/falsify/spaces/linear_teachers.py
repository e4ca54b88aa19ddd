"""Search spaces of the linear-teacher claims (Shachaf et al. 2021): Thm 4.2 and Thm 5.4."""

from __future__ import annotations

import jax.numpy as jnp

from ntsim.core import two_layer_relu_hinf
from ntsim.falsify._search import SearchSpace
from ntsim.theory import linear_teachers as lt

__all__ = ["SPACES"]

# Thm 5.4 of Shachaf et al. 2021 (Σ = I): sizes of the search (ours; the claim's quick
# simulation uses d = 200, n = 20 Gaussian draws).
_D, _N = 12, 4
#: Largest measured ε the Thm 5.4 spaces admit (corrected (9) needs ε < 1).
THM5_4_MAX_EPSILON = 0.9
#: Round-off of the claim's float64 risks and bounds (relative): (10) is attained exactly.
THM5_4_ROUND_OFF = 1e-9


def _thm5_4_instance(params):
    """``X`` free, ``θ_S`` on the unit sphere (Thm 5.4 has ‖θ_S‖ = 1), ``θ_T`` free."""
    theta_s = params["theta_s"] / jnp.linalg.norm(params["theta_s"])
    return {"x": params["x"], "theta_s": theta_s, "theta_t": params["theta_t"]}


def _thm5_4_parts(instance):
    x, theta_s, theta_t = instance["x"], instance["theta_s"], instance["theta_t"]
    eye = jnp.eye(x.shape[1], dtype=x.dtype)
    bounds = lt.random_projection_bounds(x, theta_s, theta_t)
    risk_deep = lt.deep_risk(x, theta_s, theta_t, eye, jnp.inf)
    risk_linear = lt.deep_risk(x, theta_s, theta_t, eye, 1.0)
    return bounds, risk_deep, risk_linear


def _thm5_4_feasible(instance):
    bounds, _, _ = _thm5_4_parts(instance)
    return bounds.epsilon < THM5_4_MAX_EPSILON


def _thm5_4_run(instance) -> lt.RandomProjectionRun:
    """One instance as the claims' simulation output: the single "Gaussian draw" and the
    "constructed instance" are both ``instance``, so each Thm 5.4 check decides on it."""
    x, theta_s, theta_t = instance["x"], instance["theta_s"], instance["theta_t"]
    bounds, risk_deep, risk_linear = _thm5_4_parts(instance)
    terms = {
        "risk_deep": risk_deep, "risk_linear": risk_linear, "epsilon": bounds.epsilon,
        "zeta": bounds.zeta, "eq9": bounds.eq9, "eq10": bounds.eq10,
        "eq9_corrected": bounds.eq9_corrected,
    }  # fmt: skip
    one = {name: jnp.reshape(value, (1,)) for name, value in terms.items()}
    theta_t_unit = theta_t / jnp.linalg.norm(theta_t)
    return lt.RandomProjectionRun(
        distance=jnp.reshape(jnp.linalg.norm(theta_t_unit - theta_s), (1,)),
        target_norm=jnp.reshape(jnp.linalg.norm(theta_t), (1,)),
        **one,
        risk_source_rescaled=jnp.reshape(risk_deep, (1, 1)),
        risk_target_rescaled=jnp.reshape(risk_deep, (1, 1)),
        rescalings=jnp.ones((1,), x.dtype),
        constructed=one,
        d=x.shape[1],
        n=x.shape[0],
    )


def _thm5_4_space(claim_id: str, sides, description: str) -> SearchSpace:
    return SearchSpace(
        as_run=_thm5_4_run,
        claim_id=claim_id,
        parameters={"x": (_N, _D), "theta_s": (_D,), "theta_t": (_D,)},
        to_instance=_thm5_4_instance,
        sides=sides,
        description=description,
        feasible=_thm5_4_feasible,
        tolerance=THM5_4_ROUND_OFF,
    )


def _sides_corrected(instance):
    bounds, risk_deep, _ = _thm5_4_parts(instance)
    return risk_deep, bounds.eq9_corrected


def _sides_printed(instance):
    bounds, risk_deep, _ = _thm5_4_parts(instance)
    return risk_deep, bounds.eq9


def _sides_eq10(instance):
    bounds, _, risk_linear = _thm5_4_parts(instance)
    return risk_linear, bounds.eq10


# Thm 4.2's deterministic steps (constant-free, with the realised ĝ = ‖Σ̃ − Σ‖): they hold
# for every X and Σ, so the search roams both. Sizes ours; n < d.
_D42, _N42 = 8, 3
#: The claim's round-off on these ratios (float64 eigh/QR on O(1) values): a ratio within it
#: of 1 is an equality case (R ≤ ĝ‖P_⊥v‖² is attained when P_⊥v is a top eigenvector of Σ − Σ̃).
THM4_2_ROUND_OFF = 1e-10


def _thm4_2_instance(params):
    """``X`` free, ``Σ = AAᵀ/d`` (PSD, positive definite almost surely), tasks free."""
    a = params["a"]
    return {"x": params["x"], "sigma": a @ a.T / a.shape[0],
            "theta_s": params["theta_s"], "theta_t": params["theta_t"]}  # fmt: skip


def _thm4_2_space(part: str, sides, description: str) -> SearchSpace:
    return SearchSpace(
        claim_id="linear_teachers.thm4_2.deterministic",
        part=part,
        parameters={
            "x": (_N42, _D42),
            "a": (_D42, _D42),
            "theta_s": (_D42,),
            "theta_t": (_D42,),
        },  # fmt: skip
        to_instance=_thm4_2_instance,
        sides=sides,
        description=description,
        tolerance=THM4_2_ROUND_OFF,
    )


def _sides_thm4_2(instance):
    args = (instance["x"], instance["theta_s"], instance["theta_t"], instance["sigma"])
    risk = lt.risk_thm4_1(*args)
    return risk, jnp.min(lt.bound_thm4_2_deterministic(*args))


def _sides_null_space(instance):
    args = (instance["x"], instance["theta_s"], instance["theta_t"], instance["sigma"])
    return lt.risk_thm4_1(*args), lt.risk_null_space_bound(*args)


# Sec 6 (two-layer ReLU, H^∞ of its ref. [31]): unit-norm inputs by normalisation (the
# section's assumption), n < d so that XXᵀ is non-singular (Assumption 3.1). Sizes ours.
_D6, _N6 = 6, 4
#: The claims' round-off on these ratios (float64 eigvalsh/Cholesky on O(1) values).
SEC6_ROUND_OFF = 1e-10


def _sec6_instance(params):
    x = params["x"] / jnp.linalg.norm(params["x"], axis=1, keepdims=True)
    return {"x": x, "u": params["u"], "theta_s": params["theta_s"],
            "theta_t": params["theta_t"]}  # fmt: skip


def _sides_psd(instance):
    """uᵀ(XXᵀ/4)u ≤ uᵀH^∞u for every u: H^∞ ⪰ XXᵀ/4 as a ratio of quadratic forms."""
    x, u = instance["x"], instance["u"]
    return (u @ x) @ (u @ x) / 4.0, u @ two_layer_relu_hinf(x) @ u


def _sides_cor6_2(bound):
    def sides(instance):
        x, ts, tt = instance["x"], instance["theta_s"], instance["theta_t"]
        norm = lt.hinf_norm(two_layer_relu_hinf(x), x @ (tt - ts))
        rhs = (
            lt.hinf_norm_bound_cor6_2(ts, tt)
            if bound == "printed"
            else (lt.hinf_norm_bound_derived(x, ts, tt))
        )
        return norm, rhs

    return sides


def _sec6_space(claim_id: str, sides, description: str) -> SearchSpace:
    return SearchSpace(
        claim_id=claim_id,
        parameters={"x": (_N6, _D6), "u": (_N6,), "theta_s": (_D6,), "theta_t": (_D6,)},
        to_instance=_sec6_instance,
        sides=sides,
        description=f"{description}; X ∈ R^{{{_N6}×{_D6}}} with unit rows, tasks free",
        tolerance=SEC6_ROUND_OFF,
    )


_EPS_DOMAIN = (
    f"X ∈ R^{{{_N}×{_D}}}, ‖θ_S‖ = 1, θ_T free, measured ε < {THM5_4_MAX_EPSILON} (a cap we "
    "chose inside the theorem's ε < 1, where the corrected bound blows up as 1/(1 − ε)²)"
)

SPACES: tuple[SearchSpace, ...] = (
        _sec6_space(
            "linear_teachers.cor6_2.hinf_dominates_gram", _sides_psd,
            "H^∞ ⪰ XXᵀ/4: uᵀ(XXᵀ/4)u ≤ uᵀH^∞u for every u",
        ),
        _sec6_space(
            "linear_teachers.cor6_2.bound", _sides_cor6_2("printed"),
            "Cor. 6.2: √(ỹᵀ(H^∞)⁻¹ỹ) ≤ 3‖θ_T − θ_S‖ with ỹ = X(θ_T − θ_S)",
        ),
        _sec6_space(
            "linear_teachers.cor6_2.derived_bound", _sides_cor6_2("derived"),
            "√(ỹᵀ(H^∞)⁻¹ỹ) ≤ 2‖P_∥(θ_T − θ_S)‖ (derived from H^∞ ⪰ XXᵀ/4)",
        ),
        _thm4_2_space(
            "eq3", _sides_thm4_2,
            f"R(γ) ≤ min_m 2ĝ³‖P_≤m v‖²/λ_m² + 2ĝ‖P_>m v‖² (eq. (3) with the realised ĝ); "
            f"X ∈ R^{{{_N42}×{_D42}}}, Σ = AAᵀ/d, θ_S, θ_T free",
        ),
        _thm4_2_space(
            "null_space", _sides_null_space,
            f"R(γ) ≤ ĝ‖P_⊥v‖² (a step of Thm 4.2's proof); X ∈ R^{{{_N42}×{_D42}}}, "
            "Σ = AAᵀ/d, θ_S, θ_T free",
        ),
        _thm5_4_space(
            "linear_teachers.thm5_4.bounds", _sides_corrected,
            f"R(β_∞) ≤ corrected (9) = ((d−n)/d)·4(1+ε)²/(1−ε)²·‖θ_T‖²‖Δ‖²; {_EPS_DOMAIN}",
        ),
        _thm5_4_space(
            "linear_teachers.thm5_4.bound9_printed", _sides_printed,
            f"R(β_∞) ≤ printed (9) with ζ = ε‖θ_T‖ (refuted: the search measures by how much); "
            f"{_EPS_DOMAIN}",
        ),
        _thm5_4_space(
            "linear_teachers.thm5_4.bound10_measured", _sides_eq10,
            f"R(γ) ≤ (10) with the measured ε (true by definition: a control for the search); "
            f"{_EPS_DOMAIN}",
        ),
    )  # fmt: skip
