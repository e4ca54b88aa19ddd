"""Search spaces of the stability claims (Fu, So & Collier 2023): Thm 2.2 and the lemmas of
App. A.1, A.2 and A.5, and the max of eq. (6).

Every space evaluates the claim's statement with the public functions of
:mod:`ntsim.theory.stability` its simulation uses. The maps carry the hypotheses: Hessians
``AAᵀ`` (PSD; positive definite almost surely), step sizes ``η = sigmoid(s)·c/β`` with ``β``
measured on the instance (``c = 1`` or ``2`` as the lemma needs), ``B ≥ 0`` as a square,
``λ, γ > 0`` through ``exp``. Labels ``y = +1``: a label ``−1`` is the same loss at ``−x``, so
a free ``x`` already covers it. The tolerances are the claims' own round-off tolerances.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim.falsify._search import SearchSpace
from ntsim.theory import stability as st

__all__ = ["SPACES"]

#: The claims' round-off tolerance (relative; ``ROUND_OFF`` of the stability claims):
#: float64 on O(1) values, equality cases attainable (the top eigenvector, ``t = 1``, …).
ROUND_OFF = 1e-12

# Sizes (ours; the claims draw d = 5, n = 10 quadratics, 8-sample logistic means, R⁴/R³ points).
_D = 3  # dimension of the quadratic and logistic instances
_N = 4  # samples of a quadratic training set (Thm 2.2, Lemma A.1.1)
_N_MEAN = 8  # samples of the mean logistic loss (Lemma A.5.1, as the claim)
_T_RATE = 30  # GD steps of Lemma A.1.1
_T_CERT = 20  # GD steps of the Thm 2.2 certificate
_T_SUP = 100  # GD steps over which sup_T‖w_T − w^i_T‖ is taken (any T: the bound is ∀T)


def _psd(a):
    """``AAᵀ/d`` over the last two axes: PSD, positive definite almost surely."""
    return a @ jnp.swapaxes(a, -1, -2) / a.shape[-1]


def _eig(h):
    return jnp.linalg.eigvalsh(h)


def _max_ratio(lhs, rhs):
    """``(lhs_k, rhs_k)`` at the ``k`` of the largest ``lhs_k/rhs_k`` (a "for every t" bound)."""
    k = jnp.argmax(lhs / rhs)
    return lhs[k], rhs[k]


# ---------------------------------------------------------------- Lemma A.1.1 (GD rate)


def _quadratic_set(params):
    """``H_j = A_jA_jᵀ/d`` (n samples), ``w_*`` and ``w_0`` free."""
    return st.QuadraticInstance(_psd(params["a"]), params["w_star"], params["w0"])


def _a1_1_instance(params):
    inst = _quadratic_set(params)
    eig = _eig(inst.hessians.mean(axis=0))  # the objective's μ and β, as the claim
    eta = jax.nn.sigmoid(params["s"][0]) / eig[-1]  # 0 < η < 1/β
    return {**inst._asdict(), "mu": eig[0], "beta": eig[-1], "eta": eta}


def _a1_1_sides(i):
    inst = st.QuadraticInstance(i["hessians"], i["w_star"], i["w0"])
    traj = st.loo_trajectory(inst, 0, learning_rate=i["eta"], num_steps=_T_RATE)
    radius = jnp.linalg.norm(i["w0"] - i["w_star"])
    t = jnp.arange(1, _T_RATE + 1)  # t = 0 is equality by definition (both sides R)
    return _max_ratio(traj.error[1:], st.lemma_a1_1_rate(t, i["eta"], i["mu"], radius))


_A1_1 = SearchSpace(
    claim_id="stability.lemma_a1_1.quadratic",
    parameters={"a": (_N, _D, _D), "w_star": (_D,), "w0": (_D,), "s": (1,)},
    to_instance=_a1_1_instance,
    sides=_a1_1_sides,
    description=f"Lemma A.1.1: ‖w_t − w_*‖ ≤ (1 − ημ)^{{t/2}}‖w_0 − w_*‖ for t = 1..{_T_RATE}, "
    f"GD on the mean of {_N} quadratics H_j = A_jA_jᵀ/d (d = {_D}), μ, β of the mean Hessian, "
    "η = sigmoid(s)/β",
    tolerance=ROUND_OFF,
)


# ------------------------------------------------- Lemmas A.1.2, A.1.3, A.5.1 (pointwise)


def _quadratic_loss(i):
    return lambda w: st.quadratic_loss(w, i["hessian"], i["a"]) + i["c"]


def _logistic_loss(i):
    x = i["x"]
    if x.ndim == 1:
        return lambda w: st.logistic_sample_loss(w, x, 1.0)
    return lambda w: jnp.mean(jax.vmap(st.logistic_sample_loss, (None, 0, None))(w, x, 1.0))


def _quadratic_point(params, step_factor):
    """``f = ½(w − a)ᵀH(w − a) + c``, ``H = AAᵀ/d``, ``c = p²`` (reaches 0), ``β = λ_max(H)``;
    ``η = sigmoid(s)·step_factor/β``."""
    hessian = _psd(params["h"])
    beta = _eig(hessian)[-1]
    return {
        "hessian": hessian, "a": params["a"], "c": params["c"][0] ** 2, "beta": beta,
        "u": params["u"], "v": params["v"],
        "eta": jax.nn.sigmoid(params["s"][0]) * step_factor / beta,
    }  # fmt: skip


def _logistic_point(params, step_factor):
    """Logistic loss of one sample (``x`` of shape ``(d,)``) or the mean over rows of ``x``,
    ``β = σ_max(X)²/(4n)`` (:func:`~ntsim.theory.stability.logistic_smoothness`)."""
    beta = st.logistic_smoothness(params["x"])
    return {
        "x": params["x"], "beta": beta, "u": params["u"], "v": params["v"],
        "eta": jax.nn.sigmoid(params["s"][0]) * step_factor / beta,
    }  # fmt: skip


def _a1_2_sides(loss):
    return lambda i: tuple(st.lemma_a1_2_sides(loss(i), i["u"], i["v"], i["eta"]))


def _a1_3_sides(loss):
    return lambda i: tuple(st.lemma_a1_3_sides(loss(i), i["u"], i["beta"]))


def _a5_1_sides(loss):
    return lambda i: tuple(st.lemma_a5_1_sides(loss(i), i["u"], i["eta"]))


_QUAD_PARAMS = {"h": (_D, _D), "a": (_D,), "c": (1,), "u": (_D,), "v": (_D,), "s": (1,)}
_QUAD_DOMAIN = f"f = ½(w − a)ᵀH(w − a) + c, H = AAᵀ/d (d = {_D}), c = p² ≥ 0, β = λ_max(H)"


def _pointwise(claim_id, family, step_factor, sides, description):
    if family == "quadratic":
        parameters, to_instance = _QUAD_PARAMS, lambda p: _quadratic_point(p, step_factor)
        loss, domain = _quadratic_loss, _QUAD_DOMAIN
    else:
        shape = (_N_MEAN, _D) if claim_id.startswith("stability.lemma_a5_1") else (_D,)
        parameters = {"x": shape, "u": (_D,), "v": (_D,), "s": (1,)}
        to_instance, loss = (lambda p: _logistic_point(p, step_factor)), _logistic_loss
        domain = f"ℓ(xᵀw), x ∈ R^{_D}, β = ‖x‖²/4"
        if len(shape) == 2:
            domain = f"mean of ℓ(x_jᵀw) over X ∈ R^{{{_N_MEAN}×{_D}}}, β = σ_max(X)²/(4n)"
    return SearchSpace(
        claim_id=claim_id,
        parameters=parameters,
        to_instance=to_instance,
        sides=sides(loss),
        description=f"{description}; {domain}",
        tolerance=ROUND_OFF,
    )


_TWO_OVER_BETA = "η = sigmoid(s)·2/β"
_ONE_OVER_BETA = "η = sigmoid(s)/β"
_POINTWISE = (
    _pointwise("stability.lemma_a1_2.quadratic", "quadratic", 2.0, _a1_2_sides,
               f"Lemma A.1.2: ‖(u − η∇f(u)) − (v − η∇f(v))‖ ≤ ‖u − v‖, {_TWO_OVER_BETA}"),
    _pointwise("stability.lemma_a1_2.logistic", "logistic", 2.0, _a1_2_sides,
               f"Lemma A.1.2: ‖(u − η∇f(u)) − (v − η∇f(v))‖ ≤ ‖u − v‖, {_TWO_OVER_BETA}"),
    _pointwise("stability.lemma_a1_3.quadratic", "quadratic", 1.0, _a1_3_sides,
               "Lemma A.1.3: ‖∇f(u)‖² ≤ 2βf(u)"),
    _pointwise("stability.lemma_a1_3.logistic", "logistic", 1.0, _a1_3_sides,
               "Lemma A.1.3: ‖∇f(u)‖² ≤ 2βf(u)"),
    _pointwise("stability.lemma_a5_1.quadratic", "quadratic", 1.0, _a5_1_sides,
               f"Lemma A.5.1: f(u − η∇f(u)) ≤ f(u) − (η/2)‖∇f(u)‖², {_ONE_OVER_BETA}"),
    _pointwise("stability.lemma_a5_1.logistic", "logistic", 1.0, _a5_1_sides,
               f"Lemma A.5.1: f(u − η∇f(u)) ≤ f(u) − (η/2)‖∇f(u)‖², {_ONE_OVER_BETA}"),
)  # fmt: skip


# ------------------------------------------------------------------- Thm 2.2 (eq. (3))


def _unit_start(hessians, radius=1.0):
    """``w_* = 0``, ``w_0 = R·e₁``: no loss of generality, the ``H_j`` are free (a rotation
    of the instance moves ``w_0 − w_*`` anywhere) and the Thm 2.2 ratios are invariant
    under ``R``, except where ``R`` is fixed by the claim. Also needed: the distance
    ``‖w_0 − w^i_0‖ = 0`` that :func:`~ntsim.theory.stability.loo_trajectory` records has a
    NaN gradient in ``w_0``, so ``w_0`` must not depend on the parameters."""
    e1 = jnp.zeros(hessians.shape[-1], hessians.dtype).at[0].set(radius)
    return {"hessians": hessians, "w_star": jnp.zeros_like(e1), "w0": e1}


def _loo_instance(params):
    """``n`` quadratics ``H_j = A_jA_jᵀ/d``; ``μ = min_j λ_min(H_j)``, ``β = max_j λ_max(H_j)``
    (the extreme curvatures of the samples, as the claim's instances), ``η = 1/β``; the
    left-out sample is the first (the ``H_j`` are free, so any ``i``); ``w_0 − w_* = e₁``."""
    hessians = _psd(params["a"])
    eig = _eig(hessians)
    return {**_unit_start(hessians), "mu": jnp.min(eig[:, 0]), "beta": jnp.max(eig[:, -1])}


def _loo(i, num_steps):
    inst = st.QuadraticInstance(i["hessians"], i["w_star"], i["w0"])
    return st.loo_trajectory(inst, 0, learning_rate=1.0 / i["beta"], num_steps=num_steps)


def _certificate_sides(i):
    traj = _loo(i, _T_CERT)
    # t = 1 is equality for every instance (‖Δ_1‖ = (η/n)‖H_i(w_0 − w_*)‖ = certificate_1):
    # the search looks at t ≥ 2, where equality needs the other samples' curvature to vanish.
    return _max_ratio(traj.distance[2:], traj.certificate[2:])


def _corrected_sides(i):
    traj = _loo(i, _T_SUP)
    radius = jnp.linalg.norm(i["w0"] - i["w_star"])
    lipschitz = st.path_lipschitz_constant(i["hessians"], radius)  # L = max_j λ_max(H_j)·R
    n = i["hessians"].shape[0]
    return traj.distance.max(), st.thm2_2_bound_corrected(n, i["mu"], i["beta"], lipschitz,
                                                           radius)  # fmt: skip


_LOO_PARAMS = {"a": (_N, _D, _D)}
_LOO_DOMAIN = (f"n = {_N} quadratics H_j = A_jA_jᵀ/d (d = {_D}), w_0 − w_* = e₁, μ/β the "
               "extreme curvatures, η = 1/β, i = 1")  # fmt: skip

# The printed eq. (3) at the claim's small radius (bound_printed_radius): μ = 0.9, β = 1,
# n = 10, R = 1e-3, L = βR; sample spectra in [μ, β] through H = μI + (β − μ)C(I + C)⁻¹,
# C = AAᵀ/d. Then sup_T‖Δ_T‖ ∈ [(μ/β)R/n, R/(n μ/β)] (one step; the certificate with the
# contraction 1 − μ/β): the ratio to eq. (3) is pinned in closed form.
PRINTED_RADIUS = {"mu": 0.9, "beta": 1.0, "n": 10, "radius": 1e-3}
_T_PRINTED = 30  # (1 − μ/β)^30 = 1e-30: the sup is long reached


def _printed_radius_instance(params):
    p = PRINTED_RADIUS
    c = _psd(params["a"])
    eye = jnp.eye(_D, dtype=c.dtype)
    hessians = p["mu"] * eye + (p["beta"] - p["mu"]) * c @ jnp.linalg.inv(eye + c)
    return _unit_start(0.5 * (hessians + jnp.swapaxes(hessians, -1, -2)), p["radius"])


def _printed_radius_sides(i):
    p = PRINTED_RADIUS
    inst = st.QuadraticInstance(i["hessians"], i["w_star"], i["w0"])
    traj = st.loo_trajectory(inst, 0, learning_rate=1.0 / p["beta"], num_steps=_T_PRINTED)
    bound = st.thm2_2_bound_printed(p["n"], p["mu"], p["beta"], p["beta"] * p["radius"],
                                    p["radius"])  # fmt: skip
    return traj.distance.max(), bound


_THM2_2 = (
    SearchSpace(
        claim_id="stability.thm2_2.certificate",
        parameters=_LOO_PARAMS,
        to_instance=_loo_instance,
        sides=_certificate_sides,
        description="Thm 2.2, steps P1–P2: ‖w_t − w^i_t‖ ≤ (η/n)Σ_{s<t}‖∇f(w_s, z_i)‖ for "
        f"t = 2..{_T_CERT} (t = 1 is equality on every instance); {_LOO_DOMAIN}",
        tolerance=ROUND_OFF,
    ),
    SearchSpace(
        claim_id="stability.thm2_2.bound_corrected",
        parameters=_LOO_PARAMS,
        to_instance=_loo_instance,
        sides=_corrected_sides,
        description=f"Thm 2.2 corrected: max_{{t ≤ {_T_SUP}}}‖w_t − w^i_t‖ ≤ √(2LR/β)/(n(1 − "
        f"(1 − μ/β)^{{1/4}})), L = max_j λ_max(H_j)·R; {_LOO_DOMAIN}",
        tolerance=ROUND_OFF,
    ),
    SearchSpace(
        claim_id="stability.thm2_2.bound_printed_radius",
        parameters={"a": (PRINTED_RADIUS["n"], _D, _D)},
        to_instance=_printed_radius_instance,
        sides=_printed_radius_sides,
        description="eq. (3) as printed (refuted): sup_T‖w_T − w^i_T‖ ≤ √(2L)R/β/(n((1 − "
        "μ/β)^{-1/4} − 1)), L = βR, at μ = 0.9, β = 1, n = 10, R = 1e-3; sample spectra in "
        f"[μ, β] (H = μI + (β − μ)C(I + C)⁻¹, C = AAᵀ/d, d = {_D}), w_0 − w_* = R·e₁, η = 1/β",
    ),
)


# -------------------------------------------------- Lemmas A.2.1, A.2.2 and eq. (6)'s max


def _a2_1_sides(i):
    return tuple(st.lemma_a2_1_sides(i["a"], i["b"]))


def _a2_2_sides(i):
    s = st.lemma_a2_2_sides(i["v1"], i["b1"][0], i["v2"], i["b2"][0], i["x"], 1.0)
    return s.lhs, s.rhs


def _max_terms_instance(params):
    """``n = 1 + e^p`` (``n ≥ 1``), ``λ = e^p``, ``B = p²`` (reaches 0), ``γ = e^p``."""
    return {"n": 1.0 + jnp.exp(params["n"][0]), "lam": jnp.exp(params["lam"][0]),
            "radius": params["radius"][0] ** 2, "margin": jnp.exp(params["margin"][0])}  # fmt: skip


def _max_terms_sides(i):
    first, second = st.lemma_a2_5_terms(i["n"], i["lam"], i["radius"], i["margin"])
    return first, second


_LEMMAS_A2 = (
    SearchSpace(
        claim_id="stability.lemma_a2_1.normalization_lipschitz",
        parameters={"a": (4,), "b": (4,)},
        to_instance=lambda p: p,
        sides=_a2_1_sides,
        description="Lemma A.2.1: ‖a/‖a‖ − b/‖b‖‖ ≤ 2‖a − b‖/max(‖a‖, ‖b‖); a, b ∈ R⁴ free",
        tolerance=ROUND_OFF,
    ),
    SearchSpace(
        claim_id="stability.lemma_a2_2.hinge_difference",
        parameters={"v1": (3,), "b1": (1,), "v2": (3,), "b2": (1,), "x": (3,)},
        to_instance=lambda p: p,
        sides=_a2_2_sides,
        description="Lemma A.2.2: |f(v₁,b₁) − f(v₂,b₂)| ≤ max(1 + ‖v₁‖‖x‖ + |b₁|, 1 + "
        "‖v₂‖‖x‖ + |b₂|, ‖v₁ − v₂‖‖x‖ + |b₁| + |b₂|), f(v, b) = max(0, 1 − (vᵀx − b)); "
        "v₁, v₂, x ∈ R³, b₁, b₂ free (y = +1)",
        tolerance=ROUND_OFF,
    ),
    SearchSpace(
        claim_id="stability.max_simplification.identity",
        part="order",
        parameters={"n": (1,), "lam": (1,), "radius": (1,), "margin": (1,)},
        to_instance=_max_terms_instance,
        sides=_max_terms_sides,
        description="eq. (6)'s max equals its second argument iff √(2(1 + B/γ)/(λn)) ≤ "
        "(B + √(B² + 8nλ(1 + B/γ)))/(2nλ) (the claim's order part; the identity's error is "
        "round-off, which a gradient cannot follow); n ≥ 1, λ, γ > 0, B ≥ 0",
        tolerance=ROUND_OFF,
    ),
)


# --------------------------------------- the step-size condition of Thm 2.4 (Lemma A.5.1)

_N_HEAD, _D_HEAD, _T_HEAD = 6, 2, 10
#: Labels of the head-tuning datasets: half +1, half −1.
_HEAD_LABELS = (1.0,) * (_N_HEAD // 2) + (-1.0,) * (_N_HEAD - _N_HEAD // 2)


def _head_instance(params):
    """Separable by construction: ``y_i x_{i1} = 0.1 + softplus(p_i) ≥ 0.1`` (the hyperplane
    ``x₁ = 0``), the other coordinates free; ``η = sigmoid(s)·2/β_F``, ``β_F = σ_max²(X̃)/(4n)``
    measured by :func:`~ntsim.theory.stability.head_tuning_step_size`.

    :func:`~ntsim.theory.stability.head_tuning_gd` runs ``fori_loop`` with traced lengths,
    which reverse mode cannot differentiate: search this space with ``--method random``."""
    x = jnp.asarray(params["x"])
    y = jnp.asarray(_HEAD_LABELS, x.dtype)
    x = x.at[:, 0].set(y * (0.1 + jax.nn.softplus(x[:, 0])))
    eta = jax.nn.sigmoid(params["s"][0]) * 2.0 * st.head_tuning_step_size(x)
    return {"x": x, "y": y, "eta": eta}


def _head_descent_sides(i):
    run = st.head_tuning_gd(
        i["x"],
        i["y"],
        jnp.zeros((1, _D_HEAD + 1), i["x"].dtype),
        learning_rate=i["eta"],
        record_steps=tuple(range(_T_HEAD + 1)),
    )
    loss = run.loss[:, 0]
    return _max_ratio(loss[1:], loss[:-1])


_HEAD = SearchSpace(
    claim_id="stability.lr.descent_below_two_over_beta",
    parameters={"x": (_N_HEAD, _D_HEAD), "s": (1,)},
    to_instance=_head_instance,
    sides=_head_descent_sides,
    description=f"Thm 2.4's step size: head-tuning GD from w_0 = 0 with η = sigmoid(s)·2/β_F "
    f"decreases the mean logistic loss at every step, L_{{t+1}} ≤ L_t for t < {_T_HEAD}; "
    f"n = {_N_HEAD} points in R^{_D_HEAD}, separable by construction (random search: "
    "head_tuning_gd's loop cannot be reverse-differentiated)",
    tolerance=ROUND_OFF,
    method="random",
)


SPACES: tuple[SearchSpace, ...] = (_A1_1, *_POINTWISE, *_THM2_2, *_LEMMAS_A2, _HEAD)
