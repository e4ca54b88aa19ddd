"""Search spaces of the linearization claims (Rahimi Afzal et al. 2025).

Each space evaluates the claim's statement with the public functions of
:mod:`ntsim.theory.linearization` (and :mod:`ntsim.core`) that the claim's simulation and
check use; the map carries the theorem's hypotheses:

* spectral claims (Thms 5–7): kernels ``K = AAᵀ/n`` (positive definite almost surely),
  ``S = BBᵀ/n`` (PSD), ridge ``σ = e^z > 0``; where a theorem needs ``η < 1``,
  ``S`` is rescaled so that ``η = ‖K^{-1/2}SK^{-1/2}‖`` is a sigmoid (``η`` is homogeneous
  of degree 1 in ``S``, so this is a map, not a penalty);
* Lemma 1 and NTK additivity: the claims' tanh MLPs at free parameters and inputs;
* Thms 2 and 4 on linear models ``f = Φθ`` (the claims' linear families, where ``Lip(f) =
  ‖Φ‖`` is exact): constant ``λ = e^z``, split-step GD with ``η`` a sigmoid times the
  stability limit ``min(1/λ_max(ΦΦᵀ), 1/λ)`` measured on the instance (below it every
  residual eigen-coordinate satisfies ``|r_k,i| ≤ |r_0,i|``, the proof's monotonicity).

Skipped (not differentiable, or not the claim's own path at a search's cost): the KRR
reduction and its printed ridge (the claim's path is a diffrax flow to ``e^{-40}`` of
convergence at rtol = atol = 1e-10), Thm 3, Thm 4's exit time and simplified bound (their
``Lip(∇f)`` and ``Lip(f)`` are Algorithm 1's sampled maxima over a ball), and the trend
and rate claims (not bounds).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from ntsim.core import empirical_ntk_fn, linear, mlp
from ntsim.falsify._search import SearchSpace
from ntsim.theory import linearization as lz

__all__ = ["SPACES"]

# ---------------------------------------------------------------- Thms 5–7 (spectral)

#: Kernel size of the spectral spaces (ours; the claims use 40 × 40 kernels).
_N = 6
#: The spectral claims' round-off: float64 eigenvalues, an exact inequality (relative).
SPECTRAL_ROUND_OFF = 1e-10


def _psd(a):
    return a @ a.T / a.shape[0]


def _thm5_instance(params):
    """``K = AAᵀ/n``, targets ``y*`` and pretrained outputs ``f_θ0`` free, ``σ = e^z``."""
    return {"kernel": _psd(params["a"]), "y": params["y"], "f0": params["f0"],
            "sigma": jnp.exp(2.0 * params["log_sigma"][0])}  # fmt: skip


def _thm5(instance):
    return lz.thm5_bounds(instance["kernel"], instance["y"] - instance["f0"], instance["sigma"])


def _thm5_printed(instance):
    return lz.thm5_bounds_printed(
        instance["kernel"], instance["y"], instance["f0"], instance["sigma"]
    )


def _thm5_run(instance) -> lz.Thm5Run:
    """One instance as the claims' simulation output (a batch of one kernel)."""
    residual = jnp.linalg.norm(instance["y"] - instance["f0"]) / jnp.linalg.norm(instance["y"])
    return lz.Thm5Run(
        kernel=instance["kernel"][None], y=instance["y"][None], f0=instance["f0"][None],
        sigma=jnp.reshape(instance["sigma"], (1,)), epsilon=residual,
    )  # fmt: skip


#: Where each Thm 5 space's statement sits in its claim's check: ``check_thm5`` is
#: ``all_of(upper, lower)``, ``check_thm5_printed`` ``all_of(all_of(upper, lower), mechanism)``
#: (the mechanism part is not a statement these spaces search).
_THM5_PARTS = {
    ("linearization.thm5.bounds", "upper"): (0,),
    ("linearization.thm5.bounds", "lower"): (1,),
    ("linearization.thm5.bounds_printed", "upper"): (0, 0),
    ("linearization.thm5.bounds_printed", "lower"): (0, 1),
}


def _thm5_space(claim_id, part, sides, description, tolerance):
    return SearchSpace(
        as_run=_thm5_run,
        replay_part=_THM5_PARTS[claim_id, part],
        claim_id=claim_id,
        part=part,
        parameters={"a": (_N, _N), "y": (_N,), "f0": (_N,), "log_sigma": (1,)},
        to_instance=_thm5_instance,
        sides=sides,
        description=description,
        tolerance=tolerance,
    )


def _with_eta(kernel, extra0, eta):
    """``S`` rescaled so that ``‖K^{-1/2}SK^{-1/2}‖ = eta`` (degree-1 homogeneous)."""
    return extra0 * eta / lz.perturbation_size(kernel, extra0)


def _thm67_instance(params, *, eta_below_one: bool):
    """``K = AAᵀ/n`` (≻ 0 a.s.), ``S = BBᵀ/n`` (⪰ 0), ``y`` free, ``σ = e^z``; with
    ``eta_below_one`` ``S`` is rescaled to ``η = sigmoid(·) < 1`` (Thm 7's hypothesis)."""
    kernel = _psd(params["a"])
    extra = _psd(params["b"])
    if eta_below_one:
        extra = _with_eta(kernel, extra, jax.nn.sigmoid(params["eta"][0]))
    return {"kernel": kernel, "extra": extra, "y": params["y"],
            "sigma": jnp.exp(2.0 * params["log_sigma"][0])}  # fmt: skip


#: Thms 6–7 need K ≻ 0 (η = ‖K^{-1/2}SK^{-1/2}‖). In float64 an eigenvalue carries an error
#: ~1e-16·λ_max(K), so the ratios of per-index bounds are decided to the spaces' round-off
#: tolerance (1e-10) only while κ(K) ≤ 1e5 (error ≤ 2e-11 relative to λ_min); a search that
#: drives K towards singular (it did, to κ ≈ 5e13, where the ratio is round-off over round-off)
#: leaves the hypothesis as float64 can check it.
MAX_KERNEL_CONDITION = 1e5


def _kernel_well_conditioned(instance):
    evals = jnp.linalg.eigvalsh(instance["kernel"])
    return evals[-1] <= MAX_KERNEL_CONDITION * evals[0]


def _thm67_space(claim_id, part, sides, description, *, eta_below_one, tolerance):
    return SearchSpace(
        claim_id=claim_id,
        part=part,
        parameters={"a": (_N, _N), "b": (_N, _N), "eta": (1,), "y": (_N,), "log_sigma": (1,)},
        to_instance=lambda p: _thm67_instance(p, eta_below_one=eta_below_one),
        sides=sides,
        description=description,
        feasible=_kernel_well_conditioned,
        tolerance=tolerance,
    )


def _thm6_upper(instance):
    """``max_i λ_i(K + S)/((1 + η)λ_i(K))``: the worst index of Thm 6's upper bound."""
    t6 = lz.thm6_bounds(instance["kernel"], instance["extra"])
    return jnp.max(t6.value / t6.upper), jnp.asarray(1.0, t6.value.dtype)


def _thm6_lower(instance):
    """``max_i (1 − η)λ_i(K)/λ_i(K + S)`` (``η < 1``: for ``η ≥ 1`` the lower bound is ≤ 0)."""
    t6 = lz.thm6_bounds(instance["kernel"], instance["extra"])
    return jnp.max(t6.lower / t6.value), jnp.asarray(1.0, t6.value.dtype)


def _thm7(instance):
    bounds, _ = lz.thm7_bounds(instance["kernel"], instance["extra"], instance["y"],
                               instance["sigma"])  # fmt: skip
    return bounds


def _thm7_step(instance, printed):
    return lz.thm7_step_bounds(instance["kernel"], instance["extra"], instance["y"],
                               instance["sigma"], printed=printed)  # fmt: skip


# ------------------------------------------------------- Lemma 1, NTK additivity (networks)

#: Network sizes of the search (ours; the claims use n = 5 or 16, width 8 or 64).
_NET_N, _NET_D, _NET_WIDTH = 3, 2, 4
#: Lemma 1's round-off (``ROUND_OFF_BOUND`` of the linearization claims).
BOUND_ROUND_OFF = 1e-9
#: The additivity identities' tolerance (``ROUND_OFF`` of the linearization claims).
IDENTITY_ROUND_OFF = 1e-11


def _unravel(model):
    template = model.init(jax.random.PRNGKey(0), jnp.zeros((_NET_D,)))
    flat, unravel = ravel_pytree(template)
    return flat.size, unravel


_LEMMA1_MODEL = lz.instance_model(_NET_WIDTH)
_LEMMA1_P, _LEMMA1_UNRAVEL = _unravel(_LEMMA1_MODEL)


def _lemma1_instance(params):
    """Two free parameter vectors of the claim's tanh MLP (NTK parameterisation) and free
    inputs: Lemma 1 holds for any pair (the claim draws pairs on an r-sphere around θ_0)."""
    return {"theta_a": params["theta_a"], "theta_b": params["theta_b"], "x": params["x"]}


def _lemma1_sides(instance):
    apply = _LEMMA1_MODEL.apply
    jac_a = lz.flat_jacobian(apply, _LEMMA1_UNRAVEL(instance["theta_a"]), instance["x"])
    jac_b = lz.flat_jacobian(apply, _LEMMA1_UNRAVEL(instance["theta_b"]), instance["x"])
    pair = lz.lemma1_pair(jac_a, jac_b)
    return pair.kernel_gap, pair.bound


#: The 2-hidden-layer tanh MLP of ``simulate_kernel_blocks`` (ntsim.core.mlp, same arguments).
_BLOCKS_MODEL = mlp((_NET_WIDTH, _NET_WIDTH), activation="tanh", parameterization="ntk",
                    b_std=0.3)  # fmt: skip
_BLOCKS_P, _BLOCKS_UNRAVEL = _unravel(_BLOCKS_MODEL)
#: Floor of the identity's error (it is exactly 0 at some instances; log 0 is not finite).
_ERROR_FLOOR = 1e-300


def _relative_error(a, b):
    return jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(b))


def _additivity_sides(instance):
    """The three identities of ``check_ntk_additivity``, worst relative error (to max|K|)."""
    apply = _BLOCKS_MODEL.apply
    params, x = _BLOCKS_UNRAVEL(instance["theta"]), instance["x"]
    full = empirical_ntk_fn(apply)(x, None, params)
    jac = lz.flat_jacobian(apply, params, x)
    block_sum = sum(jax.tree.leaves(lz.block_kernels(apply, params, x)))
    first = lz.peft_model(apply, params, "layer0")
    head = lz.peft_model(apply, params, "head")
    union_apply, union0 = lz.subset_model(apply, params, [("layers", 0), ("layers", 2)])
    union = empirical_ntk_fn(union_apply)(x, None, union0)
    k_first = empirical_ntk_fn(first.apply)(x, None, first.params0)
    k_head = empirical_ntk_fn(head.apply)(x, None, head.params0)
    err = jnp.maximum(
        jnp.maximum(_relative_error(block_sum, full), _relative_error(full, jac @ jac.T)),
        _relative_error(union, k_first + k_head),
    )
    return jnp.maximum(err, _ERROR_FLOOR), jnp.asarray(IDENTITY_ROUND_OFF, err.dtype)


# --------------------------------------------------------------- Thms 2 and 4 (linear GD)

#: Linear instances ``Φ ∈ R^{n×p}`` (the claims use n = 5, p = 4n) and GD steps.
_LIN_N, _LIN_P, _LIN_STEPS = 3, 8, 40


def _gd_instance(params, lam):
    """``Φ`` (scaled by 1/√p), ``θ_0``, ``y*`` free; ``η = sigmoid·min(1/λ_max(ΦΦᵀ), 1/λ)``."""
    phi = params["phi"] / math.sqrt(_LIN_P)
    mu_max = jnp.linalg.eigvalsh(phi @ phi.T)[-1]
    limit = jnp.minimum(1 / mu_max, 1 / lam)
    return {"phi": phi, "theta0": params["theta0"], "y": params["y"], "proximal": lam,
            "learning_rate": jax.nn.sigmoid(params["eta"][0]) * limit}  # fmt: skip


def _gd_run(instance):
    return lz.finetune(
        linear().apply, {"w": instance["theta0"]}, instance["phi"], instance["y"],
        proximal=instance["proximal"], learning_rate=instance["learning_rate"],
        num_steps=_LIN_STEPS,
    )  # fmt: skip


def _thm2_instance(params):
    return _gd_instance(params, jnp.exp(params["log_lambda"][0]))


def _thm2_sides(instance, printed: bool):
    """``max_{k ≥ 1} ‖θ_k − θ_0‖/bound_k`` with ``Lip(f)`` the path max of ``‖J‖_op`` and the
    integral from the logged ``λ_s`` (as ``check_thm2_corrected`` / ``_printed``)."""
    run = _gd_run(instance)
    residual = jnp.linalg.norm(run.train - instance["y"], axis=1)
    integral = lz.thm2_integral(run.strengths, instance["learning_rate"])
    lip = jnp.max(run.jac_norm)
    if printed:
        bound = lz.thm2_bound_printed(lip, residual, integral)
    else:
        bound = lz.thm2_bound(lip, residual[0], integral)
    ratio = jnp.max(run.distance[1:] / bound[1:])
    return ratio, jnp.asarray(1.0, ratio.dtype)


def _thm4_instance(params, printed: bool):
    """Radius ``r = e^ρ``, ``λ = λ_o(1 + e^z) ≥ λ_o`` with ``Lip(f) = ‖Φ‖`` exact."""
    phi = params["phi"] / math.sqrt(_LIN_P)
    lip = lz.spectral_norm(phi)
    r0 = jnp.linalg.norm(phi @ params["theta0"] - params["y"])
    radius = jnp.exp(params["log_radius"][0])
    if printed:
        lam_o = lz.thm4_lambda_o_printed(r0**2, lip, radius)
    else:
        lam_o = lz.thm4_lambda_o(r0, lip, radius)
    instance = _gd_instance(params, lam_o * (1 + jnp.exp(params["log_lambda"][0])))
    return instance | {"radius": radius}


def _thm4_sides(instance):
    run = _gd_run(instance)
    ratio = jnp.max(run.distance) / instance["radius"]
    return ratio, jnp.asarray(1.0, ratio.dtype)


def _linear_space(claim_id, to_instance, sides, description, *, radius=False, part=""):
    parameters = {"phi": (_LIN_N, _LIN_P), "theta0": (_LIN_P,), "y": (_LIN_N,),
                  "log_lambda": (1,), "eta": (1,)}  # fmt: skip
    if radius:
        parameters["log_radius"] = (1,)
    return SearchSpace(
        claim_id=claim_id,
        part=part,
        parameters=parameters,
        to_instance=to_instance,
        sides=sides,
        description=description,
        tolerance=BOUND_ROUND_OFF,
    )


# ------------------------------------------------------------------------------ the spaces

_K = f"K = AAᵀ/n ∈ R^{{{_N}×{_N}}}, σ = e^z"
_KS = f"{_K} with κ(K) ≤ 1e5, S = BBᵀ/n"
_LIN = (
    f"f = Φθ, Φ ∈ R^{{{_LIN_N}×{_LIN_P}}}, θ_0, y* free, {_LIN_STEPS} split steps, "
    "η = sigmoid·min(1/λ_max(ΦΦᵀ), 1/λ)"
)

SPACES: tuple[SearchSpace, ...] = (
    _thm5_space(
        "linearization.thm5.bounds", "upper",
        lambda i: (_thm5(i).value, _thm5(i).upper),
        f"Thm 5 upper: ‖σ(K + σI)^-1ỹ‖² ≤ (σ‖ỹ‖/(σ + λ_min(K)))², ỹ = y* − f_θ0; {_K}, "
        "y*, f_θ0 free (attained for ỹ along λ_min's eigenvector)",
        SPECTRAL_ROUND_OFF,
    ),
    _thm5_space(
        "linearization.thm5.bounds", "lower",
        lambda i: (_thm5(i).lower, _thm5(i).value),
        f"Thm 5 lower: (σ‖ỹ‖/(σ + λ_max(K)))² ≤ ‖σ(K + σI)^-1ỹ‖²; {_K}, y*, f_θ0 free "
        "(attained for ỹ along λ_max's eigenvector)",
        SPECTRAL_ROUND_OFF,
    ),
    _thm5_space(
        "linearization.thm5.bounds_printed", "lower",
        lambda i: (_thm5_printed(i).lower, _thm5_printed(i).value),
        f"Thm 5 as printed, lower: (σ‖y*‖/(σ + λ_max(K)))² ≤ ‖σ(K + σI)^-1(y* − f_θ0)‖² "
        f"(refuted reading: unbounded as f_θ0 → y*); {_K}, y*, f_θ0 free",
        SPECTRAL_ROUND_OFF,
    ),
    _thm5_space(
        "linearization.thm5.bounds_printed", "upper",
        lambda i: (_thm5_printed(i).value, _thm5_printed(i).upper),
        f"Thm 5 as printed, upper: ‖σ(K + σI)^-1(y* − f_θ0)‖² ≤ (σ‖y*‖/(σ + λ_min(K)))² "
        f"(fails when ‖y* − f_θ0‖ > ‖y*‖); {_K}, y*, f_θ0 free",
        SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm6.eigen_stability", "upper", _thm6_upper,
        f"Thm 6 upper: λ_i(K + S) ≤ (1 + η)λ_i(K) ∀i, η = ‖K^-1/2SK^-1/2‖; {_KS} free "
        "(attained for S = cK)",
        eta_below_one=False, tolerance=SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm6.eigen_stability", "lower", _thm6_lower,
        f"Thm 6 lower: (1 − η)λ_i(K) ≤ λ_i(K + S) ∀i; {_KS} rescaled to η = sigmoid < 1 "
        "(for η ≥ 1 the bound is ≤ 0); approached as S → 0. For S ⪰ 0 Weyl gives "
        "λ_i(K + S) ≥ λ_i(K) whatever η: this part tests the eigenvalue pairing, not η",
        eta_below_one=True, tolerance=SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm7.ratio_bound", "upper",
        lambda i: (_thm7(i).value, _thm7(i).upper),
        f"Thm 7 upper: (R(K+S)/R(K))^1/2 ≤ aq, a = κ(K + σI)/(1 − η)², q = λ_max(K+S+σI)/"
        f"λ_max(K+σI); {_KS} rescaled to η = sigmoid < 1, y free",
        eta_below_one=True, tolerance=SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm7.ratio_bound", "lower",
        lambda i: (_thm7(i).lower, _thm7(i).value),
        f"Thm 7 lower: q/a ≤ (R(K+S)/R(K))^1/2; {_KS} rescaled to η = sigmoid < 1, y free",
        eta_below_one=True, tolerance=SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm7.step_printed", "printed",
        lambda i: (_thm7_step(i, True).value, _thm7_step(i, True).upper),
        f"Thm 7 proof step as printed: R(K+S)^1/2 ≤ σ‖y‖κ/((1−η)λ_min(K+σI)); {_KS} "
        "rescaled to η = sigmoid < 1, y free",
        eta_below_one=True, tolerance=SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm7.step_printed", "upper",
        lambda i: (_thm7_step(i, False).value, _thm7_step(i, False).upper),
        f"Thm 7 proof step, λ_max denominator: R(K+S)^1/2 ≤ σ‖y‖κ/((1−η)λ_max(K+σI)); {_KS} "
        "rescaled to η = sigmoid < 1, y free (approached as η → 0, y along λ_min(K))",
        eta_below_one=True, tolerance=SPECTRAL_ROUND_OFF,
    ),
    _thm67_space(
        "linearization.thm7.step_printed", "lower",
        lambda i: (_thm7_step(i, False).lower, _thm7_step(i, False).value),
        f"Thm 7 proof step, lower: σ‖y‖/((1+η)λ_max(K+σI)) ≤ R(K+S)^1/2; {_KS} rescaled "
        "to η = sigmoid < 1, y free (approached as η → 0, y along λ_max(K))",
        eta_below_one=True, tolerance=SPECTRAL_ROUND_OFF,
    ),
    SearchSpace(
        claim_id="linearization.lemma1.kernel_lipschitz",
        parameters={"theta_a": (_LEMMA1_P,), "theta_b": (_LEMMA1_P,), "x": (_NET_N, _NET_D)},
        to_instance=_lemma1_instance,
        sides=_lemma1_sides,
        description=f"Lemma 1: ‖k_a − k_b‖ ≤ (‖J_a‖ + ‖J_b‖)‖J_a − J_b‖ (spectral norms); "
        f"Dense({_NET_WIDTH}) → tanh → Dense(1), θ_a, θ_b, X ∈ R^{{{_NET_N}×{_NET_D}}} free",
        tolerance=BOUND_ROUND_OFF,
    ),
    SearchSpace(
        claim_id="linearization.ntk.additivity",
        parameters={"theta": (_BLOCKS_P,), "x": (_NET_N, _NET_D)},
        to_instance=lambda p: dict(p),
        sides=_additivity_sides,
        description=f"Σ per-block NTKs = NTK = JJᵀ and K(layer 0 ∪ head) = K(layer 0) + "
        f"K(head): (max relative error, {IDENTITY_ROUND_OFF:g}); 2-hidden-layer tanh MLP "
        f"(width {_NET_WIDTH}), θ, X ∈ R^{{{_NET_N}×{_NET_D}}} free",
    ),
    _linear_space(
        "linearization.thm2.bound_corrected", _thm2_instance,
        lambda i: _thm2_sides(i, printed=False),
        f"Thm 2 (proof's r_0): ‖θ_k − θ_0‖ ≤ 2Lip(f)‖y(0) − y*‖∫e^-(Λt−Λs)ds, max over "
        f"steps; {_LIN}, λ = e^z (attained at step 1 with r_0 along Φ's top direction)",
    ),
    _linear_space(
        "linearization.thm2.bound_printed", _thm2_instance,
        lambda i: _thm2_sides(i, printed=True),
        f"Thm 2 as printed (‖f_θt(x*) − y*‖): max over steps of distance/bound; {_LIN}, λ = e^z",
    ),
    _linear_space(
        "linearization.thm4.containment", lambda p: _thm4_instance(p, printed=False),
        _thm4_sides,
        f"Thm 4: λ ≥ λ_o = 2‖f_θ0(x*) − y*‖Lip(f)/r ⇒ max_k ‖θ_k − θ_0‖ ≤ r; {_LIN}, "
        "r = e^ρ, λ = λ_o(1 + e^z), Lip(f) = ‖Φ‖",
        radius=True,
    ),
    _linear_space(
        "linearization.thm4.containment_printed", lambda p: _thm4_instance(p, printed=True),
        _thm4_sides,
        f"Thm 4 with R̃(θ_0) in λ_o (refuted reading): λ ≥ 2R̃(θ_0)Lip(f)/r ⇒ max_k "
        f"‖θ_k − θ_0‖ ≤ r; {_LIN}, r = e^ρ, λ = λ_o(1 + e^z), Lip(f) = ‖Φ‖",
        radius=True,
    ),
)  # fmt: skip
