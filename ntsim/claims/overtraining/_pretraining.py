"""Claims on pretraining by gradient flow (Springer et al. 2025, Thm 4.1 / A.1, Lemma A.6).

All checks run in float64 (``with jax.enable_x64(True):``), solve the gradient flow of
eqs. 5–6 with diffrax (:func:`ntsim.theory.overtraining.pretrain_gradient_flow`) vmapped
over random instances (spectra, ``U, V``, ``τ``), and compile once per scale.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare, vmap_instances
from ntsim.claims.overtraining._common import (
    PAPER,
    haar_pair,
    ideal_checkpoints,
    procrustes_distance,
    random_geometric_spectrum,
    real_checkpoints,
    sorted_uniform,
)
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

_EXPERIMENT = "overtraining/fig_incremental_learning"

# Aligned init: (d, instances, τ range). τ moderate: the logistic needs no plateau.
_ALIGNED = {"quick": (4, 200, (3.0, 8.0)), "full": (10, 200, (3.0, 12.0))}
# Tsit5 at rtol 1e-10 / atol 1e-12: the error relative to σ_1 measured ≤ 8e-6 at the
# default rtol 1e-8 (d = 10, τ ≤ 12), so ~1e-7 here; 1e-6 leaves ≥ 10x slack.
_TOL_ALIGNED = 1e-6
# Identity init: (d, instances, τ range, save points, spectrum ratio range). The flow is
# stiff: it runs to ≈ 3·(2τ)/(4σ_d) with steps ≲ 1/σ_1, so ≈ r^(1−d) steps; at d = 10 the
# ratio r ≥ 0.55 keeps that below ~1e4.
_IDENTITY = {
    "quick": (4, 16, (15.0, 16.0), 160, (0.45, 0.6)),
    "full": (10, 200, (20.0, 21.0), 400, (0.55, 0.65)),
}
# ‖θ(t_n) − UΣ_{:n}Vᵀ‖_F/σ_1 measured ≤ 1.6e-3 at τ = 15 (d = 6) and ≤ 6e-5 at τ = 20
# (d = 10), i.e. ≈ exp(−0.64τ); the tolerance 1.5·exp(−0.4τ) is ≥ 10x above both. Factors
# carry the square root (a mode of size a has factor entries √a): tolerance √(1.5·exp(−0.4τ)).
_TOL_FACTOR, _TOL_RATE = 1.5, 0.4
# L_pre may rise between saved times by solver error only (rtol 1e-8 on O(σ_1) values).
_TOL_MONOTONE = 1e-7
# Lemma A.6: τ values reported (the claim holds at the last, the paper's "τ large"). The
# bound σ_d²/2 shrinks like r^(2(d−1)): at d = 10 the gap/bound ratio measured 2 at τ = 20
# (24% of instances violate) and decays ≈ exp(−0.64τ), hence τ = 26 at full scale.
_GAP_TAUS = {"quick": (8.0, 12.0, 16.0), "full": (10.0, 18.0, 26.0)}
_GAP_GAMMAS = (0.02, 0.05, 0.1)


# --------------------------------------------------------------- per-mode logistic (aligned)


def _aligned_instance(key, d, tau_range):
    k_s, k_uv, k_tau = jax.random.split(key, 3)
    spectrum = sorted_uniform(k_s, d, 0.2, 4.0)
    u, v = haar_pair(k_uv, d)
    tau = jax.random.uniform(k_tau, minval=tau_range[0], maxval=tau_range[1])
    # save at t = 0 and where every mode is 1%, 50% and 99% learned
    times = jnp.concatenate(
        [ot.checkpoint_times(spectrum, tau, factor=c) for c in (1 / 99, 1.0, 99.0)]
    )
    times = jnp.concatenate([jnp.zeros(1), jnp.sort(times)])
    w1, w2 = ot.pretrain_gradient_flow(
        ot.task_matrix(spectrum, u, v), ot.aligned_init(u, v, tau), times, rtol=1e-10, atol=1e-12
    )
    modes = jax.vmap(ot.mode_matrix, in_axes=(0, None, None))(w1 @ w2, u, v)
    closed = jax.vmap(jnp.diag)(ot.logistic_modes(spectrum, tau, times))
    return jnp.max(jnp.abs(modes - closed)) / spectrum[0]


def check_logistic_closed_form(key, scale: str) -> ClaimResult:
    """Aligned-init gradient flow (diffrax) vs ``a_i(t) = σ_i/(1 + (σ_i/a_0 − 1)e^{−4σ_i t})``."""
    check_choice("check_logistic_closed_form", "scale", scale, SCALES)
    d, count, tau_range = _ALIGNED[scale]
    with jax.enable_x64(True):
        errors = np.asarray(
            vmap_instances(
                lambda k: _aligned_instance(k, d, tau_range), jax.random.split(key, count)
            )
        )
    return compare(
        errors,
        _TOL_ALIGNED,
        relation="upper_bound",
        notes=f"max_t,ij |UᵀθV − diag(a(t))|/σ_1 (off-diagonals included: they must stay 0); "
        f"d = {d}, {count} instances, σ ~ sorted U[0.2, 4], τ ~ U{tau_range}, Haar U, V; times "
        f"0 and where each mode is 1%, 50%, 99% learned; max {errors.max():.1e} vs tolerance "
        f"{_TOL_ALIGNED:g} (Tsit5, rtol 1e-10).",
    )


# ------------------------------------------------------ incremental learning (identity init)


def _identity_instance(key, d, tau_range, points, ratios):
    k_s, k_uv, k_tau = jax.random.split(key, 3)
    spectrum = random_geometric_spectrum(k_s, d, ratios)
    u, v = haar_pair(k_uv, d)
    tau = jax.random.uniform(k_tau, minval=tau_range[0], maxval=tau_range[1])
    real = real_checkpoints(spectrum, u, v, tau, points)
    w1_bar, w2_bar = ideal_checkpoints(spectrum, u, v)
    rotated = jax.vmap(procrustes_distance)(real["w1"], real["w2"], w1_bar, w2_bar)
    literal = jnp.maximum(
        jnp.linalg.norm(real["w1"] - w1_bar, axis=(1, 2)),
        jnp.linalg.norm(real["w2"] - w2_bar, axis=(1, 2)),
    )
    return {
        "theta": real["distance"] / spectrum[0],
        "rotated": rotated / jnp.sqrt(spectrum[0]),
        "literal": literal / jnp.sqrt(spectrum[0]),
        "ordered": jnp.min(jnp.diff(real["index"])),
        "monotone": real["max_loss_increase"] / spectrum[0] ** 2,
        "tolerance": _TOL_FACTOR * jnp.exp(-_TOL_RATE * tau),
    }


def _identity_runs(key, scale):
    d, count, tau_range, points, ratios = _IDENTITY[scale]
    with jax.enable_x64(True):
        out = vmap_instances(
            lambda k: _identity_instance(k, d, tau_range, points, ratios),
            jax.random.split(key, count),
        )
        return {name: np.asarray(value) for name, value in out.items()}, (d, count, tau_range)


def check_incremental_learning(key, scale: str) -> ClaimResult:
    """Thm 4.1: ``∃ t_1 < … < t_d``, ``θ(t_n) ≈ UΣ_{:n}Vᵀ``; factors ≈ ideal up to a rotation."""
    check_choice("check_incremental_learning", "scale", scale, SCALES)
    out, (d, count, tau_range) = _identity_runs(key, scale)
    tol = out["tolerance"][:, None]
    theta = compare(out["theta"], tol, relation="upper_bound", num_instances=count)
    rotated = compare(out["rotated"], np.sqrt(tol), relation="upper_bound", num_instances=count)
    ordered = compare(out["ordered"], 1.0, relation="lower_bound", num_instances=count)
    monotone = compare(out["monotone"], 0.0, relation="upper_bound", atol=_TOL_MONOTONE)
    return combine_results(
        theta,
        rotated,
        ordered,
        monotone,
        notes=f"gradient flow from W1 = W2 = e^(−τ)I, Haar U ≠ V, σ_i = σ_1 r^(i−1) (σ_1 ~ "
        f"U[2, 4], r ~ U{_IDENTITY[scale][4]}), τ ~ U{tau_range}, d = {d}, {count} instances; "
        f"t_n = the saved time nearest to UΣ_(:n)Vᵀ on a {_IDENTITY[scale][3]}-point log grid. "
        f"measured: "
        f"‖θ(t_n) − UΣ_(:n)Vᵀ‖_F/σ_1 (max {out['theta'].max():.1e}), min_Q ‖(W1Q, QᵀW2) − "
        f"(W̄1, W̄2)‖/√σ_1 (max {out['rotated'].max():.1e}) against 1.5·exp(−0.4τ) "
        f"(≥ {out['tolerance'].min():.1e}) and its square root (a mode of size a has factors of "
        f"size √a); grid indices strictly increasing (min step "
        f"{out['ordered'].min()}); max rise of L_pre between saves "
        f"{out['monotone'].max():.1e}·σ_1². Without the rotation Q the factors are far from "
        f"the ideal ones (max {out['literal'].max():.2f}; claim thm4_1.factor_alignment_printed).",
    )


def check_factor_alignment_printed(key, scale: str) -> ClaimResult:
    """Thm A.1 as printed: ``‖W1(t_n) − U(Σ^{pre,n})^{1/2}‖_F ≤ exp(−Cτ)`` (identity init)."""
    check_choice("check_factor_alignment_printed", "scale", scale, SCALES)
    out, (d, count, tau_range) = _identity_runs(key, scale)
    result = compare(
        out["literal"][:, 1:],
        out["tolerance"][:, None],
        relation="upper_bound",
        num_instances=count,
    )
    return ClaimResult(
        **{**result.__dict__, "notes": f"Refuted: measured max(‖W1(t_n) − W̄1‖_F, ‖W2(t_n) − "
           f"W̄2‖_F)/√σ_1 for n ≥ 1 ranges over [{out['literal'][:, 1:].min():.2f}, "
           f"{out['literal'].max():.2f}] against the same tolerance as the corrected claim "
           f"(≥ {np.sqrt(out['tolerance']).min():.1e}) while the products match to "
           f"{out['theta'].max():.1e}. With W1(0) = W2(0) = e^(−τ)I the hidden unit of mode n "
           "points along ≈ (u_n + v_n)/‖u_n + v_n‖ (the growing direction of the linearised "
           "flow), not along e_n, so W1(t_n) ≈ U(Σ^(pre,n))^(1/2)Q for an orthogonal Q ≠ I; "
           f"up to Q the statement holds (thm4_1.incremental_learning). d = {d}, {count} "
           f"instances, τ ~ U{tau_range}."},
    )  # fmt: skip


# -------------------------------------------------------------- Lemma A.6: real vs ideal


def _gap_instance(key, d, taus, points, ratios):
    k_s, k_uv = jax.random.split(key)
    spectrum = random_geometric_spectrum(k_s, d, ratios)
    u, v = haar_pair(k_uv, d)
    a_pre = ot.task_matrix(spectrum, u, v)
    w1_bar, w2_bar = ideal_checkpoints(spectrum, u, v)
    gammas = jnp.asarray(_GAP_GAMMAS)

    def gaps_at(tau):
        real = real_checkpoints(spectrum, u, v, tau, points)

        def perturbed(w1s, w2s):  # (γ, n)
            per_n = jax.vmap(ot.expected_perturbed_loss, in_axes=(0, 0, None, None))
            return jax.vmap(lambda g: per_n(w1s, w2s, a_pre, g))(gammas)

        return jnp.abs(perturbed(real["w1"], real["w2"]) - perturbed(w1_bar, w2_bar))

    gaps = jax.vmap(gaps_at)(jnp.asarray(taus))  # (τ, γ, n)
    return {"gaps": gaps, "bound": ot.lemma_a6_gap_bound(spectrum)}


def check_real_vs_ideal_gap(key, scale: str) -> ClaimResult:
    """Lemma A.6: ``|L̃(θ^n(0)) − L̃(θ̄^n(0))| ≤ σ_d²/2`` once τ is large enough (A.2)."""
    check_choice("check_real_vs_ideal_gap", "scale", scale, SCALES)
    d, count, _, points, ratios = _IDENTITY[scale]
    taus = _GAP_TAUS[scale]
    with jax.enable_x64(True):
        out = vmap_instances(
            lambda k: _gap_instance(k, d, taus, points, ratios), jax.random.split(key, count)
        )
        gaps, bound = np.asarray(out["gaps"]), np.asarray(out["bound"])
    ratio = gaps.max(axis=(2,)) / bound[:, None, None]  # (instances, τ, γ): gap / bound
    per_tau = ", ".join(
        f"τ = {t:g}: max gap/bound {ratio[:, i].max():.2g}, violated in "
        f"{np.mean(np.any(ratio[:, i] > 1, axis=1)):.0%} of instances"
        for i, t in enumerate(taus)
    )
    return compare(
        gaps[:, -1].max(axis=-1),
        bound[:, None],
        relation="upper_bound",
        num_instances=count,
        notes=f"measured: max_n |L̃_real − L̃_ideal| per γ ∈ {_GAP_GAMMAS} at τ = {taus[-1]:g} "
        f"(the claim); bound σ_d²/2 ∈ [{bound.min():.1e}, {bound.max():.1e}]. Real checkpoints "
        f"as in thm4_1.incremental_learning; d = {d}, {count} instances, σ_i = σ_1 r^(i−1), "
        f"r ~ U{ratios}. Where the lemma's τ condition (Assumption A.2, constant C unknown) is "
        f"not met the bound fails — {per_tau}.",
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.thm4_1.logistic_closed_form",
        paper=f"{PAPER}, Sec 4.1, eqs. 5–6 (Saxe et al. closed form; notes §1.2)",
        statement="From the aligned init W1 = e^(−τ)U, W2 = e^(−τ)Vᵀ the gradient flow keeps "
        "UᵀθV diagonal with a_i(t) = σ_i/(1 + (σ_i e^(2τ) − 1)e^(−4σ_i t))",
        check=check_logistic_closed_form,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_1.incremental_learning",
        paper=f"{PAPER}, Thm 4.1 / A.1",
        statement="Gradient flow from W1 = W2 = e^(−τ)I passes through θ(t_n) ≈ UΣ^pre_(:n)Vᵀ at "
        "increasing t_1 < … < t_d (error ≤ 1.5e^(−0.4τ)σ_1), with factors equal to the ideal "
        "ones up to a hidden-layer rotation, and L_pre non-increasing",
        check=check_incremental_learning,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_1.factor_alignment_printed",
        paper=f"{PAPER}, Thm A.1 (as printed)",
        statement="‖W1(t_n) − U(Σ^(pre,n))^(1/2)‖_F, ‖W2(t_n) − (Σ^(pre,n))^(1/2)Vᵀ‖_F ≤ "
        "exp(−Cτ) for the identity init with U ≠ V",
        check=check_factor_alignment_printed,
        expect="refuted",
    ),
    Claim(
        id="overtraining.lemma_a6.real_vs_ideal_gap",
        paper=f"{PAPER}, Lemma A.6 (under Assumption A.2)",
        statement="For τ large the perturbed loss of real and ideal checkpoints differ by at "
        "most (σ^pre_d)²/2",
        check=check_real_vs_ideal_gap,
        experiment="overtraining/fig_perturbation_inflection",
    ),
)
