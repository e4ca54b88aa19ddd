"""Search spaces of the early-stopping claims (Sun & Raskutti 2026).

Kernel facts searched over the spectrum: eq. (10)'s local Rademacher facts, eq. (11)'s root,
eq. (35)'s bias and variance bounds, the Sec 6.2 shrinkage sandwich (corrected ``λ = 1/η_τ``
and printed ``λ = η_τ``); task vectors in the linearised model searched over Jacobians,
initial functions and targets: Cor 1's negation gap (corrected and printed negation) and
Cor 2's kernel cosine (generic and orthogonal tasks).

The maps carry the hypotheses: spectra ``λ̂_1 ≥ λ̂_2 ≥ … > 0`` through a cumulative exp
(:func:`_spectrum`), kernels ``𝕂 = AAᵀ``, step sizes ``α ≤ 1/λ̂_max`` through a sigmoid of
the measured ``λ̂_max``, integer step counts ``τ ≥ 1`` by rounding with a straight-through
gradient (the instance's ``τ`` is an integer; the gradient is that of the continuous ``τ``).
Sizes are ours and small (the claims' quick simulations use ``N`` = 12–50).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim.core import local_rademacher_complexity
from ntsim.falsify._search import SearchSpace
from ntsim.theory import early_stopping as es

__all__ = ["SPACES"]

_CLAIM = "early_stopping."

# ----------------------------------------------------------------------------- the maps

#: Eigenvalues of the spectral spaces (eqs. (10), (11), Sec 6.2).
_N_SPECTRUM = 16
#: Largest step count of the step-count spaces (the sandwich's simulation draws τ ≤ 1e6).
MAX_STEPS = 1e6


def _spectrum(raw, *, at_most_one: bool = False):
    """``λ̂_1 ≥ λ̂_2 ≥ … > 0``: ``log λ̂_k = log λ̂_1 − Σ_{j<k} exp(raw_j)`` (cumulative exp).

    ``log λ̂_1 = raw_0`` (free), or ``−softplus(raw_0)`` for ``λ̂_1 ≤ 1`` (a kernel bounded
    by 1, as in the sandwich's simulation).
    """
    top = -jax.nn.softplus(raw[0]) if at_most_one else raw[0]
    drops = jnp.concatenate([jnp.zeros(1, raw.dtype), jnp.cumsum(jnp.exp(raw[1:]))])
    return jnp.exp(top - drops)


def _steps(raw):
    """Integer ``τ ∈ [1, MAX_STEPS]``: ``round(MAX_STEPS^{sigmoid(raw)})``, straight-through."""
    tau = MAX_STEPS ** jax.nn.sigmoid(raw)
    return jax.lax.stop_gradient(jnp.round(tau)) + (tau - jax.lax.stop_gradient(tau))


def _step_size(raw, lam_max):
    """``α = sigmoid(raw)/λ̂_max ∈ (0, 1/λ̂_max)``: the hypothesis ``αλ̂_max ≤ 1``."""
    return jax.nn.sigmoid(raw) / lam_max


# ------------------------------------------------------------------------------ eq. (10)

#: The eq. (10) claim's round-off (float64 differences of O(1) normalised numbers), here on
#: ratios: R̂_K(ϱ) = ϱ once ϱ² ≤ λ̂_min and R̂_K² = tr K/N once ϱ² ≥ λ̂_max are attained.
EQ10_ROUND_OFF = 1e-14


#: Offset of ``log ϱ_1``: random starts put ``ϱ_1²`` (≈ e⁻⁸) inside the random spectrum
#: (λ̂_1 ≈ 1 down to ≈ e⁻¹⁵), away from both equality cases, so the search has to find them.
_LOG_RADIUS_OFFSET = -4.0


def _eq10_instance(params):
    """Spectrum by cumulative exp; radii ``ϱ_1 = e^{r − 4}`` and ``ϱ_2 = ϱ_1·exp(e^s)``."""
    rho = jnp.exp(params["log_radius"][0] + _LOG_RADIUS_OFFSET)
    return {
        "eigenvalues": _spectrum(params["spectrum"]),
        "radius": rho,
        "radius_2": rho * jnp.exp(jnp.exp(params["log_gap"][0])),
    }


def _complexity(instance, name="radius"):
    return local_rademacher_complexity(instance["eigenvalues"], instance[name])


def _eq10_space(part: str, sides, description: str) -> SearchSpace:
    return SearchSpace(
        claim_id=_CLAIM + "eq10.rademacher_monotone",
        part=part,
        parameters={"spectrum": (_N_SPECTRUM,), "log_radius": (1,), "log_gap": (1,)},
        to_instance=_eq10_instance,
        sides=sides,
        description=description + f"; N = {_N_SPECTRUM}, λ̂ decreasing > 0, ϱ_1 < ϱ_2 free",
        tolerance=EQ10_ROUND_OFF,
    )


_EQ10 = "eq. (10), R̂_K(ϱ)² = (1/N)Σ min{λ̂_i, ϱ²}"

EQ10_SPACES = (
    _eq10_space(
        "radius", lambda i: (_complexity(i), i["radius"]),
        f"R̂_K(ϱ) ≤ ϱ ({_EQ10}; equality once ϱ² ≤ λ̂_min)",
    ),
    _eq10_space(
        "trace", lambda i: (_complexity(i) ** 2, jnp.mean(i["eigenvalues"])),
        f"R̂_K(ϱ)² ≤ tr K/N ({_EQ10}; equality once ϱ² ≥ λ̂_max)",
    ),
    _eq10_space(
        "monotone", lambda i: (_complexity(i), _complexity(i, "radius_2")),
        f"R̂_K(ϱ_1) ≤ R̂_K(ϱ_2) for ϱ_1 < ϱ_2 ({_EQ10}; equality once ϱ_1² ≥ λ̂_max)",
    ),
    _eq10_space(
        "scaled",
        lambda i: (_complexity(i, "radius_2") / i["radius_2"] ** 2,
                   _complexity(i) / i["radius"] ** 2),
        f"R̂_K(ϱ_2)/ϱ_2² ≤ R̂_K(ϱ_1)/ϱ_1² for ϱ_1 < ϱ_2 ({_EQ10}; strict, sup 1 as ϱ_2 → ϱ_1)",
    ),
)  # fmt: skip

# ------------------------------------------------------------------------------ eq. (11)

#: The eq. (11) claim's tolerance on the bisection residual |R̂_K(ϱ̂)/(cϱ̂²) − 1|.
EQ11_FIXED_POINT = 1e-10


def _eq11_instance(params):
    """Spectrum by cumulative exp; ``σ = e^s``, ``C_H = e^c`` (the claim: σ ∈ [0.1, 2], C_H ∈
    [0.2, 5]; the root is defined for every ``σ, C_H > 0``)."""
    return {
        "eigenvalues": _spectrum(params["spectrum"]),
        "noise_std": jnp.exp(params["log_sigma"][0]),
        "rkhs_distance": jnp.exp(params["log_c_h"][0]),
    }


def _eq11_sides(instance):
    lam, sigma, c_h = instance["eigenvalues"], instance["noise_std"], instance["rkhs_distance"]
    c = es.critical_radius_coefficient(sigma, c_h)
    rho = es.empirical_critical_radius(lam, sigma, c_h)
    residual = jnp.abs(local_rademacher_complexity(lam, rho) / (c * rho**2) - 1)
    return residual, jnp.asarray(EQ11_FIXED_POINT, residual.dtype)


EQ11_SPACE = SearchSpace(
    claim_id=_CLAIM + "eq11.critical_radius",
    part="residual",
    parameters={"spectrum": (_N_SPECTRUM,), "log_sigma": (1,), "log_c_h": (1,)},
    to_instance=_eq11_instance,
    sides=_eq11_sides,
    description="|R̂_K(ϱ̂)/(ϱ̂²C_H/(2eσ)) − 1| ≤ 1e-10 for the bisection root ϱ̂ of eq. (11) "
    f"(corrected exponent); N = {_N_SPECTRUM}, λ̂ decreasing > 0, σ, C_H > 0 free (the "
    "gradient through the bisection is that of its bracket, not the implicit one)",
)

# ------------------------------------------------------------------------------ eq. (35)

_N_KERNEL = 6
#: The eq. (35) claim's round-off (relative to the bound): E V_τ ≤ σ²η_τR̂_K(η_τ^{−1/2})² is
#: attained on eigenvalues with αλ̂ = 1 and approached as τ → ∞; B²_τ's bound as τ → ∞.
EQ35_ROUND_OFF = 1e-12


def _eq35_instance(params):
    """``𝕂 = AAᵀ`` (PSD, full rank a.s.), ``K = 𝕂/N``, ``Δ* = 𝕂a`` (in the RKHS span, the
    claim's Assumption 4.1 setting), ``α = sigmoid(u)/λ̂_max``, integer ``τ ∈ [1, 1e6]``,
    ``σ = e^s``."""
    gram = params["a"] @ params["a"].T
    kernel = gram / _N_KERNEL
    lam = jnp.maximum(jnp.linalg.eigvalsh(kernel), 0)
    alpha = _step_size(params["step"][0], lam[-1])
    return {
        "gram": gram,
        "coef": params["coef"],
        "step_size": alpha,
        "steps": _steps(params["steps"][0]),
        "noise_std": jnp.exp(params["log_sigma"][0]),
    }


def _eq35_bias(instance):
    gram, coef, alpha, tau = (instance[k] for k in ("gram", "coef", "step_size", "steps"))
    bias = es.squared_bias(gram / _N_KERNEL, gram @ coef, alpha, tau)
    return bias, es.bias_bound(coef @ gram @ coef, alpha * tau)


def _eq35_variance(instance):
    gram, alpha, tau, sigma = (instance[k] for k in ("gram", "step_size", "steps", "noise_std"))
    lam = jnp.maximum(jnp.linalg.eigvalsh(gram / _N_KERNEL), 0)
    return es.expected_variance(lam, alpha, tau, sigma), es.variance_bound(lam, alpha * tau, sigma)


def _eq35_space(part: str, sides, description: str) -> SearchSpace:
    return SearchSpace(
        claim_id=_CLAIM + "eq35.bias_variance_bounds",
        part=part,
        parameters={
            "a": (_N_KERNEL, _N_KERNEL),
            "coef": (_N_KERNEL,),
            "step": (1,),
            "steps": (1,),
            "log_sigma": (1,),
        },
        to_instance=_eq35_instance,
        sides=sides,
        description=description + f"; 𝕂 = AAᵀ ({_N_KERNEL}×{_N_KERNEL}), K = 𝕂/N, "
        "αλ̂_max ≤ 1, integer τ ∈ [1, 1e6]",
        tolerance=EQ35_ROUND_OFF,
    )


EQ35_SPACES = (
    _eq35_space(
        "bias", _eq35_bias,
        "B²_τ = (1/N)‖(I − αK)^τΔ*‖² ≤ ‖Δ*‖²_H/(2eη_τ) with Δ* = 𝕂a, ‖Δ*‖²_H = aᵀ𝕂a "
        "(eq. (35); sup 1 as τ → ∞ with αλ̂ = 1/(2τ))",
    ),
    _eq35_space(
        "variance", _eq35_variance,
        "E V_τ = (σ²/N)Σ(1 − (1 − αλ̂_i)^τ)² ≤ σ²η_τR̂_K(η_τ^{−1/2})² (eq. (35); equality "
        "when every αλ̂_i = 1)",
    ),
)  # fmt: skip

# ---------------------------------------------------------------------- Sec 6.2, eq. (27)

#: The sandwich claims' round-off (float64 differences of shrinkages in [0, 1]); the upper
#: side s_GD ≤ 2 s_KRR is attained at αλ̂ = 1, τ = 1 (s_GD = 1, s_KRR = 1/2).
SANDWICH_ROUND_OFF = 1e-13
_N_SANDWICH = 8


def _sandwich_instance(params):
    """``λ̂_1 ≤ 1`` decreasing (the simulation's ``λ̂ ∈ [1e-6, 1]``), ``α = sigmoid(u)/λ̂_1``,
    integer ``τ ∈ [1, 1e6]`` (the simulation's range)."""
    lam = _spectrum(params["spectrum"], at_most_one=True)
    return {
        "eigenvalues": lam,
        "step_size": _step_size(params["step"][0], lam[0]),
        "steps": _steps(params["steps"]),
    }


def _shrinkages(instance, printed):
    return es.shrinkage_sandwich(
        instance["eigenvalues"], instance["step_size"], instance["steps"], printed=printed
    )


def _lower(instance, printed=False):
    pair = _shrinkages(instance, printed)
    return jnp.max(pair.krr / pair.gd), jnp.ones((), pair.gd.dtype)


def _upper(instance, printed=False):
    pair = _shrinkages(instance, printed)
    return jnp.max(pair.gd / (2 * pair.krr)), jnp.ones((), pair.gd.dtype)


def _both(instance):
    pair = _shrinkages(instance, True)
    worst = jnp.maximum(jnp.max(pair.krr / pair.gd), jnp.max(pair.gd / (2 * pair.krr)))
    return worst, jnp.ones((), pair.gd.dtype)


def _sandwich_space(claim: str, part: str, sides, description: str) -> SearchSpace:
    return SearchSpace(
        claim_id=_CLAIM + claim,
        part=part,
        parameters={"spectrum": (_N_SANDWICH,), "step": (1,), "steps": (1,)},
        to_instance=_sandwich_instance,
        sides=sides,
        description=description + f"; N = {_N_SANDWICH}, 1 ≥ λ̂ decreasing > 0, αλ̂_max ≤ 1, "
        "integer τ ∈ [1, 1e6]; the worst eigenvalue",
        tolerance=SANDWICH_ROUND_OFF,
    )


_S = "s_GD = 1 − (1 − αλ̂)^τ, s_KRR(λ) = λ̂/(λ̂ + λ)"

SANDWICH_SPACES = (
    _sandwich_space(
        "sec6_2.ridge_sandwich_corrected", "lower", _lower,
        f"s_KRR(1/η_τ) ≤ s_GD (Sec 6.2, eq. (27) with λ = 1/η_τ; {_S}; sup 1 as η_τλ̂ → 0)",
    ),
    _sandwich_space(
        "sec6_2.ridge_sandwich_corrected", "upper", _upper,
        f"s_GD ≤ 2 s_KRR(1/η_τ) (Sec 6.2, eq. (27) with λ = 1/η_τ; {_S}; equality at "
        "αλ̂ = 1, τ = 1)",
    ),
    _sandwich_space(
        "sec6_2.ridge_sandwich_printed", "", _both,
        f"s_KRR(η_τ) ≤ s_GD ≤ 2 s_KRR(η_τ) (Sec 6.2, below eq. (27), printed λ = εT̂ = η_τ; "
        f"{_S}; refuted: the search measures by how much)",
    ),
)  # fmt: skip

# ------------------------------------------------------------------------ Cors 1 and 2

_P, _N_TASK, _N_TEST = 8, 3, 4
#: GD steps producing each task vector (the claims' quick simulation: 60; static).
TASK_STEPS = 20
#: Cor 1's claims compare with rtol 1e-9 (float64, ≤ 400 GD steps) and atol 1e-13.
COR1_RTOL, COR1_ATOL = 1e-9, 1e-13
#: Cor 2's claims: atol 1e-10 on the kernel cosine, 1e-12 on a vanishing cosine.
COR2_KERNEL_ATOL, COR2_ZERO_ATOL = 1e-10, 1e-12


def _task_step(raw, jacobian):
    """``ε = sigmoid(u)·N/g_max``: ``εg_max/N ≤ 1`` (the claims use ``εg_max/N = 1``)."""
    n = jacobian.shape[0]
    return jax.nn.sigmoid(raw) / jnp.linalg.eigvalsh(jacobian @ jacobian.T / n)[-1]


def _cor1_instance(params):
    """Free ``J`` (train), ``J_test``, ``f_PT`` and targets on both; ``τ`` from
    :func:`~ntsim.theory.early_stopping.gd_task_vector` (``TASK_STEPS`` steps)."""
    j = params["jacobian"]
    eps = _task_step(params["step"][0], j)
    tau = es.gd_task_vector(j, params["f_pt"], params["y"], eps, TASK_STEPS)
    return {
        "jacobian_test": params["jacobian_test"],
        "f_pt_test": params["f_pt_test"],
        "y_test": params["y_test"],
        "tau": tau,
    }


def _cor1_sides(instance, negation):
    jt, ft, yt, tau = (instance[k] for k in ("jacobian_test", "f_pt_test", "y_test", "tau"))
    measured = es.linearised_mse(jt, ft, yt, negation(tau)) - es.linearised_mse(jt, ft, yt, tau)
    formula = es.negation_gap(jt, ft, yt, tau)
    return jnp.abs(measured - formula), COR1_RTOL * jnp.abs(formula) + COR1_ATOL


def _cor1_space(claim: str, negation, description: str) -> SearchSpace:
    return SearchSpace(
        claim_id=_CLAIM + claim,
        parameters={
            "jacobian": (_N_TASK, _P),
            "f_pt": (_N_TASK,),
            "y": (_N_TASK,),
            "step": (1,),
            "jacobian_test": (_N_TEST, _P),
            "f_pt_test": (_N_TEST,),
            "y_test": (_N_TEST,),
        },
        to_instance=_cor1_instance,
        sides=lambda i: _cor1_sides(i, negation),
        description=description + f"; |measured − (104)| ≤ 1e-9|(104)| + 1e-13; J ∈ "
        f"R^{{{_N_TASK}×{_P}}}, J_test ∈ R^{{{_N_TEST}×{_P}}}, f_PT, Y free, τ after "
        f"{TASK_STEPS} GD steps with εg_max/N ≤ 1",
    )


COR1_SPACES = (
    _cor1_space(
        "cor1.negation_gap_corrected", lambda tau: -tau,
        "MSE(θ_PT − τ) − MSE(θ_FT) = (4/N_test)(Y − f_PT)ᵀJ_testτ (Cor 1, eqs. (103)–(104), "
        "θ_neg = θ_PT − τ; a sanity control)",
    ),
    _cor1_space(
        "cor1.negation_gap_printed", lambda tau: tau - tau,
        "MSE(θ_FT − τ) − MSE(θ_FT) = (4/N_test)(Y − f_PT)ᵀJ_testτ (Cor 1, eq. (23)'s printed "
        "θ_neg = θ_FT − τ in (104); refuted: the search measures by how much)",
    ),
)  # fmt: skip


def _cor2_instance(params):
    """Free Jacobians, ``f_PT`` and targets of two tasks; each ``τ_i`` scanned by GD and its
    coefficients ``c_i`` in closed form (the claim's two computations)."""
    out = {}
    for i in ("1", "2"):
        j, f, y = params["jacobian_" + i], params["f_pt_" + i], params["y_" + i]
        eps = _task_step(params["step_" + i][0], j)
        out["jacobian_" + i] = j
        out["tau_" + i] = es.gd_task_vector(j, f, y, eps, TASK_STEPS)
        out["c_" + i] = es.task_vector_coefficients(j @ j.T, f - y, step_size=eps,
                                                    steps=TASK_STEPS)  # fmt: skip
    return out


def _cor2_orthogonal_instance(params):
    """Task rows in orthogonal subspaces (Assumption 5.1, ``J_1J_2ᵀ = 0``): ``J_i = A_iU_iᵀ``
    with ``[U_1, U_2]`` orthonormal from a QR of a free ``P×P`` matrix."""
    q, _ = jnp.linalg.qr(params["basis"])
    half = _P // 2
    return _cor2_instance({
        **params,
        "jacobian_1": params["coords_1"] @ q[:, :half].T,
        "jacobian_2": params["coords_2"] @ q[:, half:].T,
    })  # fmt: skip


def _cosine(instance):
    t1, t2 = instance["tau_1"], instance["tau_2"]
    return t1 @ t2 / (jnp.linalg.norm(t1) * jnp.linalg.norm(t2))


def _cor2_kernel_sides(instance):
    j1, j2 = instance["jacobian_1"], instance["jacobian_2"]
    kernel = es.task_vector_cosine(j1 @ j1.T, j1 @ j2.T, j2 @ j2.T, instance["c_1"],
                                   instance["c_2"])  # fmt: skip
    return jnp.abs(_cosine(instance) - kernel), jnp.asarray(COR2_KERNEL_ATOL, kernel.dtype)


def _cor2_zero_sides(instance):
    cosine = jnp.abs(_cosine(instance))
    return cosine, jnp.asarray(COR2_ZERO_ATOL, cosine.dtype)


_TASKS = {
    "f_pt_1": (_N_TASK,), "y_1": (_N_TASK,), "step_1": (1,),
    "f_pt_2": (_N_TASK,), "y_2": (_N_TASK,), "step_2": (1,),
}  # fmt: skip

COR2_SPACES = (
    SearchSpace(
        claim_id=_CLAIM + "cor2.cross_kernel_cosine",
        part="cosine",
        parameters={"jacobian_1": (_N_TASK, _P), "jacobian_2": (_N_TASK, _P), **_TASKS},
        to_instance=_cor2_instance,
        sides=_cor2_kernel_sides,
        description="|cos(τ_1, τ_2) − c_1ᵀG_12c_2/(‖J_1ᵀc_1‖‖J_2ᵀc_2‖)| ≤ 1e-10 (Cor 2, eqs. "
        f"(107)–(108)); J_1, J_2 ∈ R^{{{_N_TASK}×{_P}}}, f_PT, Y free, τ_i after {TASK_STEPS} "
        "GD steps with εg_max/N ≤ 1",
    ),
    SearchSpace(
        claim_id=_CLAIM + "cor2.orthogonal_addition",
        part="cosine",
        parameters={
            "basis": (_P, _P),
            "coords_1": (_N_TASK, _P // 2),
            "coords_2": (_N_TASK, _P // 2),
            **_TASKS,
        },
        to_instance=_cor2_orthogonal_instance,
        sides=_cor2_zero_sides,
        description="|cos(τ_1, τ_2)| ≤ 1e-12 under J_1J_2ᵀ = 0 (Cor 2, eq. (109), Assumption "
        f"5.1); rows of J_i ∈ R^{{{_N_TASK}×{_P}}} in orthogonal {_P // 2}-dim subspaces, "
        f"f_PT, Y free, τ_i after {TASK_STEPS} GD steps",
    ),
)

SPACES: tuple[SearchSpace, ...] = (
    *EQ10_SPACES,
    EQ11_SPACE,
    *EQ35_SPACES,
    *SANDWICH_SPACES,
    *COR1_SPACES,
    *COR2_SPACES,
)
