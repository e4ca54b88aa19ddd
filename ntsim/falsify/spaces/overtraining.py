"""Search spaces of the overtraining claims (Springer et al. 2025, two-layer linear theory).

Each space maps unconstrained arrays onto the domain of one claim's statement and evaluates
it with the public functions of :mod:`ntsim.theory.overtraining` the claim's simulation
uses. Shared maps: spectra are positive and decreasing through a cumulative ``exp`` (the
paper's ordering; :func:`_spectrum`), ``U, V`` orthogonal by QR, step sizes below their
limits (A.8, Lemma A.28's hypothesis) through a sigmoid, "well-conditioned" factors
(App A.3: ``‖W_i‖_op ≤ 2√Γ``) by rescaling, misalignment (Def 4.5) by construction.

A bound ``m ≥ 0`` (or ``m ≤ 0``) that the claim decides with an absolute tolerance ``atol``
on a scale ``S`` is searched as ``lhs = S − m`` against ``rhs = S`` (or ``S + m`` against
``S``): the ratio is ``1 − m/S`` and ``tolerance = atol`` is exactly the claim's acceptance.

Lemma A.28's spaces keep the claim's absolute excess: its supremum 0 is also approached as
``η → 0`` (both sides → ``|x_0 − σ*|``), so "equality to round-off" there is that limit;
the growth lemmas (A.16, A.18) are searched as a rate for the same reason (:func:`_rate_sides`).

Sizes are ours (small, so a 32 × 500 search takes seconds to a minute): ``d = 3``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim.falsify._search import SearchSpace
from ntsim.theory import overtraining as ot

__all__ = ["SPACES"]

_D = 3
#: Floor added to an identity's error so that an exact 0 stays a finite log-ratio.
_FLOOR = 1e-30


# ---------------------------------------------------------------- shared maps


def _spectrum(p, low: float, high: float):
    """Positive decreasing spectrum: ``σ_1 ∈ (low, high)`` by a sigmoid, ``σ_{i+1} = σ_i e^{−s_i}``
    with ``s_i = softplus(p_i) ≥ 0`` (a cumulative exp)."""
    first = low + (high - low) * jax.nn.sigmoid(p[0])
    decay = jnp.concatenate([jnp.zeros(1, p.dtype), jnp.cumsum(jax.nn.softplus(p[1:]))])
    return first * jnp.exp(-decay)


def _orthogonal(m):
    """Orthogonal factor of QR (signs fixed by ``diag R > 0``): Haar for Gaussian ``m``."""
    q, r = jnp.linalg.qr(m)
    return q * jnp.sign(jnp.diagonal(r))[None, :]


def _op(a):
    return jnp.linalg.norm(a, 2)


def _gamma(pre, ft):
    """``Γ = max{σ^pre_1, max σ^ft}`` (eq. 12)."""
    return jnp.maximum(pre[0], jnp.max(ft))


def _well_conditioned(w, s, gamma):
    """``w`` rescaled to operator norm ``2√Γ·sigmoid(s) < 2√Γ`` (App A.3's well-conditioned)."""
    return w * (2 * jnp.sqrt(gamma) * jax.nn.sigmoid(s) / _op(w))


def _pair_gap(w, w_other):
    return jnp.maximum(_op(w[0] - w_other[0]), _op(w[1] - w_other[1]))


# ---------------------------------------------------------------- Lemma A.28: contraction

#: The claim's round-off (absolute, float64 scalar steps on O(1) values; SCALAR_ROUND_OFF).
A28_ROUND_OFF = 1e-13
#: Steps of the scalar recursion per instance (the claim's quick scale runs 400).
A28_STEPS = 200
#: The shift ``S`` of the ratio ``(S + m)/S``: above the largest possible ``−m`` (spectra are
#: in (0.05, 3), so ``|x_0 − σ*| < √3``); the claim's absolute round-off is then the ratio's.
A28_SCALE = 2.0


def _a28_instance(p):
    """``σ^pre, σ^ft ∈ (0.05, 3)`` (the claim's range), ``λ = softplus ≥ 0`` and ``η`` a sigmoid
    fraction of the largest step Lemma A.28's hypothesis allows."""
    pre = 0.05 + 2.95 * jax.nn.sigmoid(p["pre"][0])
    ft = 0.05 + 2.95 * jax.nn.sigmoid(p["ft"][0])
    reg = jax.nn.softplus(p["reg"][0])
    big = 2 * jnp.maximum(pre, ft) + reg + reg * jnp.sqrt(pre / ft)
    eta = jax.nn.sigmoid(p["eta"][0]) / ((reg + 2) * big)
    return {"pre": pre, "ft": ft, "reg": reg, "learning_rate": eta}


def _a28_feasible(i):
    return ot.contraction_condition(i["pre"], i["ft"], i["learning_rate"], i["reg"])


def _a28_trajectory(i):
    return ot.mode_trajectory(i["pre"], i["ft"], learning_rate=i["learning_rate"], reg=i["reg"],
                              num_steps=A28_STEPS)  # fmt: skip


def _a28_excess(i, fixed_point):
    """``max_{k≥1} |x_k − σ*| − ρ^k|x_0 − σ*|`` (≤ 0 under the lemma)."""
    x = _a28_trajectory(i)
    star = jnp.sqrt(fixed_point(i["pre"], i["ft"], i["reg"]))
    rate = ot.contraction_rate(i["pre"], i["ft"], i["learning_rate"])
    k = jnp.arange(x.shape[0])
    return jnp.max((jnp.abs(x - star) - rate**k * jnp.abs(x[0] - star))[1:])


def _sides_a28_distance(i):
    return A28_SCALE + _a28_excess(i, ot.fixed_point), jnp.asarray(A28_SCALE)


def _sides_a28_printed(i):
    return A28_SCALE + _a28_excess(i, ot.fixed_point_printed), jnp.asarray(A28_SCALE)


def _sides_a28_interval(i):
    """Distance of ``x_k`` (k ≥ 1) outside ``[√min, √max]`` (≤ 0 under the lemma)."""
    x = _a28_trajectory(i)[1:]
    lo = jnp.sqrt(jnp.minimum(i["pre"], i["ft"]))
    hi = jnp.sqrt(jnp.maximum(i["pre"], i["ft"]))
    return A28_SCALE + jnp.max(jnp.maximum(lo - x, x - hi)), jnp.asarray(A28_SCALE)


def _a28_space(claim_id, part, sides, description, tolerance=A28_ROUND_OFF / A28_SCALE):
    return SearchSpace(
        claim_id=claim_id, part=part,
        parameters={"pre": (1,), "ft": (1,), "reg": (1,), "eta": (1,)},
        to_instance=_a28_instance, sides=sides, description=description,
        feasible=_a28_feasible, tolerance=tolerance,
    )  # fmt: skip


# ---------------------------------------------------------------- Prop 4.3: increments

#: The claim's round-off (relative to σ_1² + 1; ROUND_OFF of the perturbation claims).
PERTURBATION_ROUND_OFF = 1e-10


def _prop4_3_instance(p):
    """``σ^pre`` positive decreasing with ``σ_1 ∈ (0.05, 4)`` (the claim's range), Haar-like
    ``U, V`` (QR), and ``2dγ²`` log-uniform-like in ``[σ_d/3, 3σ_1]`` through a sigmoid (the
    claim's γ range, where its round-off scale ``σ_1² + 1`` applies)."""
    spectrum = _spectrum(p["spectrum"], 0.05, 4.0)
    lo, hi = jnp.log(spectrum[-1] / 3), jnp.log(3 * spectrum[0])
    level = jnp.exp(lo + (hi - lo) * jax.nn.sigmoid(p["gamma"][0]))
    return {"spectrum": spectrum, "u": _orthogonal(p["u"]), "v": _orthogonal(p["v"]),
            "gamma": jnp.sqrt(level / (2 * _D))}  # fmt: skip


def _sides_prop4_3(i):
    """``max_n |ΔL̃(n) − (2dγ² − σ_n)σ_n|/(σ_1² + 1)`` (matrix route) against the round-off."""
    spectrum, gamma = i["spectrum"], i["gamma"]
    a_pre = ot.task_matrix(spectrum, i["u"], i["v"])
    w1s, w2s = ot.ideal_checkpoints(spectrum, i["u"], i["v"])
    losses = jax.vmap(ot.expected_perturbed_loss, in_axes=(0, 0, None, None))(
        w1s, w2s, a_pre, gamma)  # fmt: skip
    error = jnp.max(jnp.abs(jnp.diff(losses) - ot.perturbed_increments(spectrum, gamma)))
    return error / (spectrum[0] ** 2 + 1) + _FLOOR, jnp.asarray(PERTURBATION_ROUND_OFF)


# ---------------------------------------------------------------- Prop D.1: Hessian trace


def _hessian_trace_autodiff(w1, w2, a):
    """``Tr jax.hessian(‖W1W2 − A‖²)`` over the flattened ``(W1, W2)``: the claim's route."""
    d = w1.shape[0]

    def loss(p):
        return jnp.sum(jnp.square(p[: d * d].reshape(d, d) @ p[d * d :].reshape(d, d) - a))

    return jnp.trace(jax.hessian(loss)(jnp.concatenate([w1.ravel(), w2.ravel()])))


def _sides_hessian_trace(i):
    """Relative error of ``2d(‖W1‖² + ‖W2‖²)`` against the autodiff trace."""
    autodiff = _hessian_trace_autodiff(i["w1"], i["w2"], i["a"])
    identity = ot.hessian_trace(i["w1"], i["w2"])
    return jnp.abs(autodiff - identity) / identity + _FLOOR, jnp.asarray(PERTURBATION_ROUND_OFF)


# ---------------------------------------------------------------- fine-tuning (A.7, eq. 11)

#: The fine-tuning claims' round-off (ROUND_OFF: float64, K ≤ 1000 GD steps, /Γ).
FINETUNING_ROUND_OFF = 1e-10
#: Steps and record interval of the Lemma A.7 space (the claim's quick scale).
A7_STEPS, A7_RECORD = 200, 50
#: Minibatch size of the eq. (11) space (the claim's quick scale).
EQ11_BATCH = 8


def _two_spectra(p):
    """``σ^pre, σ^ft`` positive decreasing, ``σ_1 ∈ (0.1, 3)`` (the claims' range)."""
    return _spectrum(p["pre"], 0.1, 3.0), _spectrum(p["ft"], 0.1, 3.0)


def _ideal_instance(p, pre, ft):
    """The ideal-dynamics instance on spectra ``pre``, ``ft``: Haar-like ``U, V``,
    ``λ = softplus`` and ``η`` a sigmoid fraction of A.8's limit ``1/(4(λ + 2)Γ)``."""
    reg = jax.nn.softplus(p["reg"][0])
    eta = jax.nn.sigmoid(p["eta"][0]) / (4 * (reg + 2) * _gamma(pre, ft))
    return {"pre": pre, "ft": ft, "u": _orthogonal(p["u"]), "v": _orthogonal(p["v"]),
            "reg": reg, "learning_rate": eta}  # fmt: skip


def _a7_instance(p):
    """Decreasing spectra (the setting's: unsorted ``σ^ft`` makes the ideal dynamics a
    saddle), the rest as :func:`_ideal_instance`."""
    pre, ft = _two_spectra(p)
    return _ideal_instance(p, pre, ft)


def _sides_a7(i):
    """``max_{n, recorded k, ij} |UᵀθV − diag(1(i ≤ n)x_k²)|/Γ`` against the round-off."""
    pre, ft, u, v, reg, eta = (i[k] for k in ("pre", "ft", "u", "v", "reg", "learning_rate"))
    thetas, _, _ = ot.finetune_ideal_checkpoints(
        pre, ft, u, v, learning_rate=eta, reg=reg, num_steps=A7_STEPS, record_every=A7_RECORD
    )
    modes = jax.vmap(jax.vmap(ot.mode_matrix, in_axes=(0, None, None)),
                     in_axes=(0, None, None))(thetas, u, v)  # (n, R, d, d)  # fmt: skip
    x = ot.mode_trajectory(pre, ft, learning_rate=eta, reg=reg, num_steps=A7_STEPS)[::A7_RECORD]
    learned = jnp.arange(_D)[None, :] < jnp.arange(_D + 1)[:, None]  # (n, i)
    expected = jax.vmap(lambda m: jax.vmap(jnp.diag)(jnp.where(m, x**2, 0.0)))(learned)
    error = jnp.max(jnp.abs(modes - expected)) / _gamma(pre, ft)
    return error + _FLOOR, jnp.asarray(FINETUNING_ROUND_OFF)


def _eq11_instance(p):
    """The claim's instance: decreasing spectra, Haar-like ``U, V``, ``λ = softplus``, η at
    the simulation's ``0.8/(4(λ + 2)Γ)`` (:func:`~ntsim.theory.overtraining.a8_learning_rate`),
    and two free minibatches ``X_1, X_2 ∈ R^{m×d}`` (any batch is a Gaussian draw)."""
    pre, ft = _two_spectra(p)
    reg = jax.nn.softplus(p["reg"][0])
    eta, _ = ot.a8_learning_rate(pre, ft, reg)
    return {"pre": pre, "ft": ft, "u": _orthogonal(p["u"]), "v": _orthogonal(p["v"]),
            "reg": reg, "learning_rate": eta, "x": p["x"]}  # fmt: skip


def _sides_eq11(i):
    """Two eq. (10)–(11) steps (:func:`~ntsim.theory.overtraining.finetune_step` with the
    batch covariances) from every ideal checkpoint ``n ≥ 1`` against two GD steps by
    ``jax.grad`` of eq. (9)'s minibatch loss: max deviation over the reference's total move."""
    pre, ft, u, v, reg, eta, xs = (i[k] for k in ("pre", "ft", "u", "v", "reg",
                                                  "learning_rate", "x"))  # fmt: skip
    a_ft = ot.task_matrix(ft, u, v)

    def at(n):
        w1, w2 = ot.ideal_checkpoint(pre, n, u, v)
        anchor = w1 @ w2

        def loss(w, x):
            theta = w[0] @ w[1]
            fit = jnp.mean(jnp.sum(((theta - a_ft) @ x.T) ** 2, axis=0))
            return fit + reg * jnp.sum((theta - anchor) ** 2)

        reference, stepped = (w1, w2), (w1, w2)
        for x in xs:
            g = jax.grad(loss)(reference, x)
            reference = tuple(w - eta * gw for w, gw in zip(reference, g, strict=True))
            stepped = ot.finetune_step(*stepped, a_ft, anchor, learning_rate=eta, reg=reg,
                                       cov=x.T @ x / x.shape[0])  # fmt: skip
        moved = jnp.maximum(
            *(jnp.max(jnp.abs(r - w)) for r, w in zip(reference, (w1, w2), strict=True))
        )
        off = jnp.maximum(
            *(jnp.max(jnp.abs(a - b)) for a, b in zip(stepped, reference, strict=True))
        )
        return off / moved

    error = jnp.max(jax.vmap(at)(jnp.arange(1, _D + 1)))
    return error + _FLOOR, jnp.asarray(FINETUNING_ROUND_OFF)


# ---------------------------------------------------------------- Thm 4.6: Δ_pre monotone

#: The claim's round-off on O(Γ²) losses (EXACT_ZERO): Δ_pre(1) − Δ_pre(0) = 0 is attained
#: when ``σ^ft_1 = σ^pre_1`` (Def 4.5's (α, 1)-misalignment leaves mode 1 free).
THM4_6_ROUND_OFF = 1e-12
#: Fine-tuning steps (the claim's quick scale).
THM4_6_STEPS = 400


def _thm4_6_instance(p):
    """Thm 4.6's hypotheses by construction: ``σ^ft`` positive decreasing; ``σ^pre_1`` free in
    ``(0.1, 3)`` and ``σ^pre_i = cummin_j≤i σ^ft_j/(1 + softplus(q_j))`` for ``i > 1``, so
    ``σ^pre`` decreases and ``σ^ft_i > σ^pre_i`` for ``i > 1`` ((α, 1)-misaligned, α > 1);
    η a sigmoid fraction of A.21(2)'s ``1/(4(λ + 2)Γ)`` (λ0 → λ, as the claim)."""
    ft = _spectrum(p["ft"], 0.1, 3.0)
    first = 0.1 + 2.9 * jax.nn.sigmoid(p["pre"][0])
    raw = jnp.concatenate([first[None], ft[1:] / (1 + jax.nn.softplus(p["pre"][1:]))])
    pre = jax.lax.cummin(raw)
    return _ideal_instance(p, pre, ft)


def _sides_thm4_6(i):
    """``(Γ² − min_n [Δ_pre(n) − Δ_pre(n−1)], Γ²)``: above 1 iff an increment is negative."""
    pre, ft, u, v, reg, eta = (i[k] for k in ("pre", "ft", "u", "v", "reg", "learning_rate"))
    _, pre_loss, _ = ot.finetune_ideal_checkpoints(pre, ft, u, v, learning_rate=eta, reg=reg,
                                                   num_steps=THM4_6_STEPS)  # fmt: skip
    initial = jnp.concatenate([jnp.cumsum((pre**2)[::-1])[::-1], jnp.zeros(1, pre.dtype)])
    increments = jnp.diff(pre_loss - initial)
    scale = jnp.maximum(pre[0], ft[0]) ** 2
    return scale - jnp.min(increments), scale


# ---------------------------------------------------------------- App A.3: Lemmas A.15–A.18

#: Minibatch size of the Lemma A.15 space (any ``m ≥ d``; the covariance is measured).
A15_BATCH = 8


def _factors_ft(p):
    """Spectra (``σ_1 ∈ (0.5, 4)``, the claim's range), Haar-like ``U, V``, ``A^ft``, ``Γ``."""
    pre = _spectrum(p["pre"], 0.5, 4.0)
    ft = _spectrum(p["ft"], 0.5, 4.0)
    u, v = _orthogonal(p["u"]), _orthogonal(p["v"])
    return ot.task_matrix(ft, u, v), _gamma(pre, ft)


def _a15_instance(p):
    """Lemma A.15's domain at λ = 0: any well-conditioned ``(W1, W2)``, ``A^ft = UΣ^ftVᵀ``,
    η a sigmoid fraction of A.8's ``1/(8Γ)``, a free batch ``X`` (``Σ_k = XᵀX/m``)."""
    a_ft, gamma = _factors_ft(p)
    w1 = _well_conditioned(p["w1"], p["scale"][0], gamma)
    w2 = _well_conditioned(p["w2"], p["scale"][1], gamma)
    eta = jax.nn.sigmoid(p["eta"][0]) / (8 * gamma)
    cov = p["x"].T @ p["x"] / p["x"].shape[0]
    return {"w1": w1, "w2": w2, "a_ft": a_ft, "gamma": gamma, "learning_rate": eta, "cov": cov}


def _sides_a15(i):
    """``‖Ŵ(k+1) − W̄(k+1)‖_op`` (one step, batch vs ``m = ∞``) against ``32ηεΓ^{3/2}`` with
    the measured ``ε = ‖Σ_k − I‖_op``."""
    w = (i["w1"], i["w2"])
    eta, gamma, cov = i["learning_rate"], i["gamma"], i["cov"]

    def move(c):
        return ot.finetune_step(*w, i["a_ft"], w[0] @ w[1], learning_rate=eta, cov=c)

    eps = _op(cov - jnp.eye(cov.shape[0], dtype=cov.dtype))
    return _pair_gap(move(cov), move(None)), ot.lemma_a15_bound(eta, gamma, eps)


def _growth_instance(p):
    """Lemmas A.16/A.18's domain at λ = 0: two well-conditioned parameters ``W, W'``,
    ``A^ft``, η below A.8's ``1/(8Γ)``, and a shared covariance ``Σ = I + E`` with
    ``‖E‖_op < 1/(4(1 + 16ηΓ))`` (the event of Lemma A.14 with the lemmas' ε condition at
    ``K = 1``; A.16 is the ``m = ∞`` case)."""
    a_ft, gamma = _factors_ft(p)
    w = tuple(_well_conditioned(p[k], p["scale"][j], gamma)
              for j, k in enumerate(("w1", "w2", "w1b", "w2b")))  # fmt: skip
    eta = jax.nn.sigmoid(p["eta"][0]) / (8 * gamma)
    sym = p["e"] + p["e"].T
    limit = 1 / (4 * (1 + 16 * eta * gamma))
    cov = jnp.eye(_D, dtype=sym.dtype) + limit * jax.nn.sigmoid(p["eta"][1]) * sym / _op(sym)
    return {"w1": w[0], "w2": w[1], "w1b": w[2], "w2b": w[3], "a_ft": a_ft, "gamma": gamma,
            "learning_rate": eta, "cov": cov}  # fmt: skip


def _growth(i, cov):
    w, wb = (i["w1"], i["w2"]), (i["w1b"], i["w2b"])

    def move(pair):
        return ot.finetune_step(*pair, i["a_ft"], pair[0] @ pair[1],
                                learning_rate=i["learning_rate"], cov=cov)  # fmt: skip

    return _pair_gap(move(w), move(wb)) / _pair_gap(w, wb)


#: Shift of the growth lemmas' rate ``r = (growth − 1)/(cηΓ)`` (``c`` = 16 or 32): the ratio
#: ``(GROWTH_SHIFT + r)/(GROWTH_SHIFT + 1)`` is above 1 iff ``growth > 1 + cηΓ``, and positive
#: while ``growth > 1 − GROWTH_SHIFT·cηΓ`` (the gradient's Lipschitz bound keeps it there).
GROWTH_SHIFT = 4.0


def _rate_sides(growth, allowed):
    """``growth ≤ 1 + allowed`` as ``(GROWTH_SHIFT + (growth − 1)/allowed, GROWTH_SHIFT + 1)``.

    The claim's own ratio ``growth/(1 + cηΓ)`` tends to 1 from below as ``η → 0`` whatever
    the rate of growth (both sides → 1), so a search of it only drives η to 0; the rate
    ``(growth − 1)/(cηΓ)`` is the same statement without that degenerate limit."""
    return GROWTH_SHIFT + (growth - 1) / allowed, jnp.asarray(GROWTH_SHIFT + 1)


def _sides_a16(i):
    allowed = ot.lemma_a16_growth(i["learning_rate"], i["gamma"]) - 1
    return _rate_sides(_growth(i, None), allowed)


def _sides_a18(i):
    allowed = ot.lemma_a18_growth(i["learning_rate"], i["gamma"]) - 1
    return _rate_sides(_growth(i, i["cov"]), allowed)


_A3_PARAMS = {"pre": (_D,), "ft": (_D,), "u": (_D, _D), "v": (_D, _D)}
_FT_PARAMS = {"pre": (_D,), "ft": (_D,), "u": (_D, _D), "v": (_D, _D), "reg": (1,),
              "eta": (1,)}  # fmt: skip

#: Lemmas A.16 and A.18: two well-conditioned factor pairs W, W', their scales, the step and
#: the minibatch covariance error.
_GROWTH_PARAMS = {
    **_A3_PARAMS,
    "w1": (_D, _D),
    "w2": (_D, _D),
    "w1b": (_D, _D),
    "w2b": (_D, _D),
    "scale": (4,),
    "eta": (2,),
    "e": (_D, _D),
}

SPACES: tuple[SearchSpace, ...] = (
    _a28_space(
        "overtraining.lemma_a28.contraction",
        "distance",
        _sides_a28_distance,
        "Lemma A.28 (corrected σ*): max_(k≥1) |x_k − σ*| − ρ^k|x_0 − σ*| ≤ 0, searched as "
        f"(S + excess)/S, S = {A28_SCALE}; σ ∈ (0.05, 3), λ ≥ 0, η below the hypothesis' limit",
    ),
    _a28_space(
        "overtraining.lemma_a28.contraction",
        "interval",
        _sides_a28_interval,
        "Lemma A.28: x_k stays in [√min{σ^pre, σ^ft}, √max{…}] (distance outside ≤ 0), searched "
        f"as (S + distance)/S, S = {A28_SCALE}; same domain",
    ),
    _a28_space(
        "overtraining.lemma_a28.contraction_printed",
        "",
        _sides_a28_printed,
        "Lemma A.28 as printed (σ*² = (σ^pre + λσ^ft)/(1+λ), refuted): the same excess; the "
        "search measures by how much; same domain",
    ),
    SearchSpace(
        claim_id="overtraining.prop4_3.increment",
        parameters={"spectrum": (_D,), "u": (_D, _D), "v": (_D, _D), "gamma": (1,)},
        to_instance=_prop4_3_instance,
        sides=_sides_prop4_3,
        description="Prop 4.3 / Lemma A.4: L̃(n) − L̃(n−1) = (2dγ² − σ_n)σ_n at the ideal "
        "checkpoints (matrix route, eq. 13 via expected_perturbed_loss), error/(σ_1² + 1) "
        f"against {PERTURBATION_ROUND_OFF:g}; σ_1 ∈ (0.05, 4), 2dγ² ∈ [σ_d/3, 3σ_1]",
    ),
    SearchSpace(
        claim_id="overtraining.prop_d1.hessian_trace",
        parameters={"w1": (_D, _D), "w2": (_D, _D), "a": (_D, _D)},
        to_instance=lambda p: dict(p),
        sides=_sides_hessian_trace,
        description="Prop D.1 (two-layer loss): Tr∇²‖W1W2 − A‖² (jax.hessian) = 2d(‖W1‖² + "
        f"‖W2‖²), relative error against {PERTURBATION_ROUND_OFF:g}; W1, W2, A free",
    ),
    SearchSpace(
        claim_id="overtraining.lemma_a7.per_mode_recursion",
        parameters=_FT_PARAMS,
        to_instance=_a7_instance,
        sides=_sides_a7,
        description="Lemma A.7 (eqs. 16–18, corrected f): ideal-init GD (m = ∞, "
        f"K = {A7_STEPS}) keeps UᵀθV = diag(1(i ≤ n)x_k²), max error/Γ against "
        f"{FINETUNING_ROUND_OFF:g}; decreasing spectra, λ ≥ 0, η below A.8",
    ),
    SearchSpace(
        claim_id="overtraining.eq11.minibatch_gradient",
        parameters={**_FT_PARAMS, "x": (2, EQ11_BATCH, _D)},
        to_instance=_eq11_instance,
        sides=_sides_eq11,
        description="eqs. (9)–(11) (corrected W2 update): two finetune steps = two GD steps of "
        f"the minibatch loss, relative deviation against {FINETUNING_ROUND_OFF:g}; decreasing "
        f"spectra, λ ≥ 0, η at 0.8 of A.8, free batches of {EQ11_BATCH}, every n ≥ 1",
    ),
    SearchSpace(
        claim_id="overtraining.thm4_6.progressive_sensitivity",
        parameters=_FT_PARAMS,
        to_instance=_thm4_6_instance,
        sides=_sides_thm4_6,
        description="Thm 4.6: Δ_pre(n) − Δ_pre(n−1) ≥ 0 (GD on the matrices, m = ∞, "
        f"K = {THM4_6_STEPS}), searched as (Γ² − min increment)/Γ²; (α, 1)-misaligned "
        "decreasing spectra, λ ≥ 0, 4η(λ + 2)Γ < 1",
        tolerance=THM4_6_ROUND_OFF,
    ),
    SearchSpace(
        claim_id="overtraining.lemma_a15.one_step_batch_gap",
        parameters={
            **_A3_PARAMS,
            "w1": (_D, _D),
            "w2": (_D, _D),
            "scale": (2,),
            "eta": (1,),
            "x": (A15_BATCH, _D),
        },  # fmt: skip
        to_instance=_a15_instance,
        sides=_sides_a15,
        description="Lemma A.15 (λ = 0): ‖Ŵ(k+1) − W̄(k+1)‖_op ≤ 32ηεΓ^(3/2), ε = ‖Σ_k − I‖_op "
        "measured; well-conditioned W (‖W_i‖_op ≤ 2√Γ), ηΓ < 1/8, free batch",
    ),
    SearchSpace(
        claim_id="overtraining.lemma_a16_a18.per_step_growth",
        part="a16",
        parameters=_GROWTH_PARAMS,
        to_instance=_growth_instance,
        sides=_sides_a16,
        description="Lemma A.16 (λ = 0, m = ∞): one step grows max_i ‖W_i − W_i'‖_op by at most "
        "1 + 16ηΓ, searched as the rate r = (growth − 1)/(16ηΓ) ≤ 1, ratio (4 + r)/5; any two "
        "well-conditioned W, W' (‖·‖_op ≤ 2√Γ), ηΓ < 1/8",
    ),
    SearchSpace(
        claim_id="overtraining.lemma_a16_a18.per_step_growth",
        part="a18",
        parameters=_GROWTH_PARAMS,
        to_instance=_growth_instance,
        sides=_sides_a18,
        description="Lemma A.18 (λ = 0, shared minibatch): one step grows the gap by at most "
        "1 + 32ηΓ, searched as the rate r = (growth − 1)/(32ηΓ) ≤ 1, ratio (4 + r)/5; "
        "well-conditioned W, W', ηΓ < 1/8, ‖Σ_k − I‖_op < 1/(4(1 + 16ηΓ))",
    ),
)
