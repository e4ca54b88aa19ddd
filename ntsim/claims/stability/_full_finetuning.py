"""Claims of Fu, So & Collier 2023, Sec 2.2 (full fine-tuning): Thm 2.2 and its lemmas.

The quadratic (Taylor) model of :mod:`ntsim.theory.stability._full_finetuning`: per-sample
Hessians ``H_j = Q_j diag(λ_j) Q_jᵀ`` with Haar ``Q_j`` and ``λ_j ∈ [μ, β]`` (extremes
pinned to ``μ`` and ``β``), ``d = 5``, ``β = 1``, ``w_0 = w_* + R·u``; GD with ``η = 1/β`` on
``S`` and on ``S^i`` (1/n convention) from the same ``w_0``, left-out index ``i`` uniform.
``L = max_j λ_max(H_j)·R = βR``, the Lipschitz constant on ``B(w_*, R)`` (theory module doc).

Every check runs in float64 inside ``with jax.enable_x64(True):``, vmaps over all instances
(and over ``μ/β``, ``n``, ``R`` as traced axes), so each claim compiles once. Tolerances:
identities that hold with equality somewhere (the certificate at ``t = 1``, Lemma A.1.3 on
the top eigenvector) are checked to ``1e-12`` relative (float64 round-off of a few d×d
products is ~1e-15).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare
from ntsim.theory import stability as ff

__all__ = ["CLAIMS"]

_PAPER = "Fu et al. 2023"
_EXPERIMENT = "stability/thm2_2_bound_variants"
_D = 5  # parameter dimension of the quadratic model (the statements are dimension-free)
_STEPS = {"quick": 300, "full": 600}  # (1 − μ/β)^T ≤ 0.95^300 ≈ 2e-7: the sup is long past
_ROUND_OFF = 1e-12  # relative slack for identities that are tight somewhere (module doc)
_GRID = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 0.95, 0.99, 1.0)  # μ/β, incl. μ = β
_NEAR_ONE = (0.9, 0.95, 0.97, 0.98, 0.99, 1.0)  # μ/β where the printed bound fails
# (sample sizes, instances per (μ/β, n) cell); ≥ 200 instances at both scales.
_CERT = {"quick": ((10, 40), 10), "full": ((10, 50, 200), 35)}
_PRINTED_N = 10  # the notes' regression setting: n = 10, R = 1
_PER_RATIO = {"quick": 100, "full": 250}
_NS_SCALING = (25, 50, 100, 200, 400)  # issue: slope ≈ −1 over n ∈ {25, …, 400}
_SLOPE_TOL = 0.05  # Δ = c/n + O(1/n²): measured −0.997 (full); fit s.e. ≈ 0.01 (quick)
_RADII = (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)
_CURVATURE_SCALES = (0.125, 0.25, 0.5, 0.75, 1.0)  # H_j → c·H_j, i.e. L = cβR
_Z_MIN = 3.0  # paired-difference z-score required for "increases" (one-sided 0.13%)
_INSTANCES = {"quick": 200, "full": 1000}


def _grid(key, ratios, ns, per_cell: int, scale: str, *, radius=1.0) -> dict[str, np.ndarray]:
    """:func:`ff.simulate_loo_stability_grid` in float64, flattened to ``(cells, per_cell)``."""
    with jax.enable_x64(True):
        out = ff.simulate_loo_stability_grid(
            key, mu_over_beta=ratios, num_samples=ns, radius=radius, d=_D,
            num_steps=_STEPS[scale], instances=per_cell,
        )  # fmt: skip
    return {name: v.reshape(-1, per_cell) for name, v in out.items()}


# -------------------------------------------------------------- Thm 2.2: the valid parts


def check_certificate(key, scale: str) -> ClaimResult:
    """P1–P2: ‖w_t − w^i_t‖ ≤ (η/n)Σ_{s<t}‖∇f(w_s, z_i)‖ at every t, on every instance."""
    check_choice("check_certificate", "scale", scale, SCALES)
    ns, per = _CERT[scale]
    out = _grid(key, np.asarray(_GRID)[:, None], np.asarray(ns)[None, :], per, scale)
    gap = out["max_certificate_gap"].ravel()  # max_t (Δ_t − C_t); R = 1, so relative
    return compare(
        gap,
        0.0,
        relation="upper_bound",
        atol=_ROUND_OFF,
        notes=f"measured = max_t (‖w_t − w^i_t‖ − certificate_t), R = 1, over μ/β ∈ {_GRID}, "
        f"n ∈ {ns}, {per} instances each, {_STEPS[scale]} steps; worst {gap.max():.1e} "
        f"(equality at t = 1, so round-off decides the sign; atol {_ROUND_OFF:g}).",
    )


def check_bound_corrected(key, scale: str) -> ClaimResult:
    """sup_T‖Δ_T‖ ≤ full certificate ≤ √(2LR/β)/(n(1 − q^{1/4})) on every instance."""
    check_choice("check_bound_corrected", "scale", scale, SCALES)
    ns, per = _CERT[scale]
    out = _grid(key, np.asarray(_GRID)[:, None], np.asarray(ns)[None, :], per, scale)
    bound = out["bound_corrected"]
    sup = compare(out["sup_distance"] / bound, 1.0, relation="upper_bound", atol=_ROUND_OFF)
    cert = compare(out["certificate"] / bound, 1.0, relation="upper_bound", atol=_ROUND_OFF)
    ratio = (out["sup_distance"] / bound).reshape(len(_GRID), -1).max(axis=1)
    per_ratio = ", ".join(f"{r:g}: {v:.3f}" for r, v in zip(_GRID, ratio, strict=True))
    return combine_results(
        sup,
        cert,
        notes=f"measured = sup_T‖Δ_T‖/bound and certificate/bound (≤ 1), L = βR, R = 1, "
        f"n ∈ {ns}, {per} instances per (μ/β, n). Worst sup/bound per μ/β: {per_ratio}. "
        "At μ = β the ratio is 1/√2: the bound with L = βR/2 (all step P3 needs) is attained "
        "(sup = R/n).",
    )


# ----------------------------------------------------------- Thm 2.2: the printed bound


def _violation_rates(out, ratios, bound: str) -> str:
    rates = (out["sup_distance"] > out[bound]).mean(axis=1)
    return ", ".join(f"{r:g}: {v:.0%}" for r, v in zip(ratios, rates, strict=True))


def _printed_failure_threshold() -> float:
    """μ/β above which eq. (3) (L = βR, R = β) is below (μ/β)R/n ≤ ‖Δ_1‖: fails everywhere."""
    ratios = np.linspace(0.9, 1.0, 100_001)
    root = (1 - ratios) ** 0.25
    return float(ratios[np.argmax(np.sqrt(2) * root / (1 - root) < ratios)])


def check_bound_printed(key, scale: str) -> ClaimResult:
    """eq. (3) vs sup_T‖Δ_T‖ for μ/β near 1 (n = 10, R = 1): expected violated (refuted)."""
    check_choice("check_bound_printed", "scale", scale, SCALES)
    per = _PER_RATIO[scale]
    out = _grid(key, _NEAR_ONE, _PRINTED_N, per, scale)
    with jax.enable_x64(True):
        analytic = float(ff.loo_distance_isotropic(_PRINTED_N, 1.0, 1.0, 1))  # R/n
    simulated = out["sup_distance"][-1]  # μ = β: all H_j = βI up to round-off
    keep = [_NEAR_ONE.index(0.99), _NEAR_ONE.index(1.0)]
    return compare(
        out["sup_distance"][keep],
        out["bound_printed"][keep],
        relation="upper_bound",
        notes=f"n = {_PRINTED_N}, R = β = 1 (main-text and proof versions coincide), L = βR, "
        f"{per} instances per μ/β. Counterexample μ = β: printed bound 0, analytic sup R/n = "
        f"{analytic:g}, simulated max |sup − R/n| = {np.abs(simulated - analytic).max():.1e}. "
        f"At μ/β = 0.99 the bound is {out['bound_printed'][-2, 0]:.4f} < R/n. Violation rate "
        f"of eq. (3) by μ/β: {_violation_rates(out, _NEAR_ONE, 'bound_printed')}; of the "
        f"corrected bound: {_violation_rates(out, _NEAR_ONE, 'bound_corrected')}. Since "
        f"‖Δ_1‖ = (η/n)‖H_i(w_0 − w_*)‖ ≥ (μ/β)R/n, eq. (3) fails on every instance once "
        f"μ/β > {_printed_failure_threshold():.4f}.",
    )


def check_bound_printed_generic(key, scale: str) -> ClaimResult:
    """eq. (3) holds on every instance for μ/β ≤ 0.95 (n = 10, R = β = 1, L = βR)."""
    check_choice("check_bound_printed_generic", "scale", scale, SCALES)
    ratios = _GRID[:-2] + (0.97,)
    per = _PER_RATIO[scale] // 2
    out = _grid(key, ratios, _PRINTED_N, per, scale)
    worst = (out["sup_distance"] / out["bound_printed"]).max(axis=1)
    per_ratio = ", ".join(f"{r:g}: {v:.3f}" for r, v in zip(ratios, worst, strict=True))
    return compare(
        out["sup_distance"],
        out["bound_printed"],
        relation="upper_bound",
        notes=f"n = {_PRINTED_N}, R = β = 1 (where the main-text and proof versions agree), "
        f"L = βR, {per} instances per μ/β. Worst sup/printed by μ/β: {per_ratio}. The slack "
        f"is {1 / worst[0]:.0f}x at μ/β = {ratios[0]} and shrinks to ≈ 1 at μ/β = 0.97; from μ/β ≈ "
        f"{_printed_failure_threshold():.3f} on it fails on every instance (claim "
        "stability.thm2_2.bound_printed). With L = βR/2 the crossing moves to μ/β = 15/16. "
        "Outside R = β the main-text version scales as R^{3/2} and fails for small R "
        "(stability.thm2_2.bound_printed_radius).",
    )


def check_bound_printed_radius(key, scale: str) -> ClaimResult:
    """eq. (3) ∝ R^{3/2} (L = βR) vs sup‖Δ‖ ∝ R: violated at R = 1e-3, μ/β = 0.5 (refuted)."""
    check_choice("check_bound_printed_radius", "scale", scale, SCALES)
    radii = (1e-1, 1e-2, 1e-3)
    per = _INSTANCES[scale]
    out = _grid(key, 0.5, _PRINTED_N, per, scale, radius=np.asarray(radii))
    return compare(
        out["sup_distance"][-1],
        out["bound_printed"][-1],
        relation="upper_bound",
        num_instances=per,
        notes=f"μ/β = 0.5, β = 1, n = {_PRINTED_N}, L = βR (the Lipschitz constant on "
        f"B(w_*, R)), {per} instances per R. Main-text eq. (3) is √(2L)R/β/(…) ∝ R^{{3/2}}, "
        f"the measured sup is exactly linear in R, so eq. (3) fails for small R/β at any "
        f"μ/β. Violation rate by R ∈ {radii}: "
        f"{_violation_rates(out, radii, 'bound_printed')} (main text); "
        f"{_violation_rates(out, radii, 'bound_proof')} (proof version, ∝ R); "
        f"{_violation_rates(out, radii, 'bound_corrected')} (corrected).",
    )


# -------------------------------------------------------------------- Thm 2.2: scaling


def check_scaling_n(key, scale: str) -> ClaimResult:
    """Mean sup_T‖Δ_T‖ ∝ n^{−1}: log–log slope over n ∈ {25, …, 400} within ±0.05 of −1."""
    check_choice("check_scaling_n", "scale", scale, SCALES)
    per = _INSTANCES[scale] // len(_NS_SCALING)
    out = _grid(key, 0.5, np.asarray(_NS_SCALING), per, scale)
    sup = out["sup_distance"]
    mean = sup.mean(axis=1)
    log_n, log_mean = np.log(_NS_SCALING), np.log(mean)
    (slope, intercept), cov = np.polyfit(log_n, log_mean, 1, cov="unscaled")
    rel_se = sup.std(axis=1, ddof=1) / np.sqrt(per) / mean  # s.e. of each log mean
    slope_se = float(np.sqrt(np.sum(rel_se**2 * (log_n - log_n.mean()) ** 2)))
    slope_se /= float(np.sum((log_n - log_n.mean()) ** 2))
    return compare(
        [slope],
        -1.0,
        relation="equal",
        atol=_SLOPE_TOL,
        num_instances=sup.size,
        notes=f"μ/β = 0.5, R = 1, {per} instances per n ∈ {_NS_SCALING}; n·mean sup = "
        f"{np.round(mean * np.asarray(_NS_SCALING), 4).tolist()}; fitted slope {slope:.4f} ± "
        f"{slope_se:.4f} (s.e.), tolerance ±{_SLOPE_TOL} (the O(1/n²) correction at n = 25 "
        "is ~1%). The corrected bound is exactly ∝ 1/n (L = βR does not depend on n).",
    )


def check_scaling_r(key, scale: str) -> ClaimResult:
    """sup_T‖Δ_T‖ is exactly linear in R = ‖w_0 − w_*‖ (same H_j, w_*, direction)."""
    check_choice("check_scaling_r", "scale", scale, SCALES)
    per = _INSTANCES[scale]
    keys = jax.random.split(key, per)

    def one(k):
        return jax.vmap(
            lambda r: ff.simulate_loo_stability(
                k, _PRINTED_N, _D, mu_over_beta=0.5, radius=r, num_steps=_STEPS[scale]
            )
        )(jnp.asarray(_RADII))

    with jax.enable_x64(True):
        out = {k: np.asarray(v) for k, v in jax.jit(jax.vmap(one))(keys).items()}
    per_unit = out["sup_distance"] / np.asarray(_RADII)  # (per, radii)
    reference = per_unit[:, _RADII.index(1.0)][:, None]
    exponent = np.polyfit(np.log(_RADII), np.log(out["bound_printed"][0]), 1)[0]
    return compare(
        per_unit,
        np.broadcast_to(reference, per_unit.shape),
        relation="equal",
        rtol=1e-10,
        num_instances=per,
        notes=f"μ/β = 0.5, n = {_PRINTED_N}, R ∈ {_RADII} on the same {per} instances; "
        f"measured sup/R vs sup/R at R = 1, rtol 1e-10 (Δ_T is linear in w_0 − w_*, so "
        f"equal up to round-off; worst {np.abs(per_unit / reference - 1).max():.1e}). With "
        f"L = βR the corrected and proof bounds are ∝ R; the main-text eq. (3) has fitted "
        f"exponent {exponent:.3f} (3/2).",
    )


def check_scaling_lipschitz(key, scale: str) -> ClaimResult:
    """H_j → cH_j (L = cβR), η = 1/β fixed: mean sup‖Δ‖ increases with c; η = 1/(cβ): invariant."""
    check_choice("check_scaling_lipschitz", "scale", scale, SCALES)
    per = _INSTANCES[scale]

    def one(k, c, retuned):
        inst = ff.quadratic_instance(k, _PRINTED_N, _D, mu=0.5 * c, beta=c, radius=1.0)
        eta = jnp.where(retuned, 1.0 / c, 1.0)
        traj = ff.loo_trajectory(inst, 0, learning_rate=eta, num_steps=_STEPS[scale])
        return traj.distance.max()

    over_c = jax.vmap(jax.vmap(one, (None, 0, None)), (0, None, None))
    with jax.enable_x64(True):
        keys, scales = jax.random.split(key, per), jnp.asarray(_CURVATURE_SCALES)
        fixed = np.asarray(jax.jit(over_c)(keys, scales, False))  # (per, scales)
        retuned = np.asarray(jax.jit(over_c)(keys, scales, True))
    diffs = np.diff(fixed, axis=1)
    z = diffs.mean(axis=0) / (diffs.std(axis=0, ddof=1) / np.sqrt(per))
    increases = compare(z, _Z_MIN, relation="lower_bound", num_instances=per)
    invariant = compare(retuned, retuned[:, -1:], relation="equal", rtol=1e-10, num_instances=per)
    return combine_results(
        increases,
        invariant,
        notes=f"μ/β = 0.5 at c = 1, n = {_PRINTED_N}, R = 1, c ∈ {_CURVATURE_SCALES}, {per} "
        f"instances (paired). η = 1/β fixed: n·mean sup = "
        f"{np.round(fixed.mean(axis=0) * _PRINTED_N, 4).tolist()}, paired z of consecutive "
        f"increases {np.round(z, 1).tolist()} (≥ {_Z_MIN}). η = 1/(cβ) retuned: the path is "
        f"unchanged (worst rel. change {np.abs(retuned / retuned[:, -1:] - 1).max():.1e}), "
        "so only L/β matters. The corrected bound with μ_c = cμ, L = cβR grows as c falls "
        "(the contraction slows): it does not explain the measured decrease.",
    )


# ---------------------------------------------------------------------------- lemmas


def _random_points(key, count, shape, spread):
    """Points with norms spread over decades (log-uniform scale in [1e-2, 1e2]·spread)."""
    k_dir, k_scale = jax.random.split(key)
    scale = spread * 10.0 ** jax.random.uniform(k_scale, (count,), minval=-2, maxval=2)
    return jax.random.normal(k_dir, (count, *shape)) * scale.reshape((count,) + (1,) * len(shape))


def _quadratic_loss_family(key, count):
    """``count`` per-sample quadratics ``½(w − a)ᵀH(w − a) + c`` (``c ≥ 0``, half ``c = 0``)."""
    k_inst, k_c, k_ratio = jax.random.split(key, 3)
    ratios = jax.random.uniform(k_ratio, (count,), minval=0.01, maxval=1.0)
    insts = jax.vmap(lambda k, r: ff.quadratic_instance(k, 1, _D, mu=r, beta=1.0, radius=1.0))(
        jax.random.split(k_inst, count), ratios
    )
    offset = jnp.where(jnp.arange(count) % 2 == 0, 0.0, jax.random.exponential(k_c, (count,)))
    return insts.hessians[:, 0], insts.w_star, offset


def _logistic_family(key, count, n=1):
    """``count`` logistic losses on ``n`` samples ``x ~ N(0, s²I)``, ``y = ±1`` (s log-uniform)."""
    k_x, k_y = jax.random.split(key)
    x = _random_points(k_x, count, (n, _D), 1.0)
    y = jnp.where(jax.random.bernoulli(k_y, 0.5, (count, n)), 1.0, -1.0)
    return x, y


def _logistic_mean(x, y):
    return lambda w: jnp.mean(jax.vmap(ff.logistic_sample_loss, (None, 0, 0))(w, x, y))


def _lemma_result(sides, scale_ref, what: str, count: int) -> ClaimResult:
    lhs, rhs = (np.asarray(s) for s in sides)
    gap = (lhs - rhs) / np.asarray(scale_ref)
    return compare(
        gap,
        0.0,
        relation="upper_bound",
        atol=_ROUND_OFF,
        num_instances=count,
        notes=f"{what}; measured = (lhs − rhs)/scale ≤ {_ROUND_OFF:g}; worst {gap.max():.2e}, "
        f"median slack {np.median(-gap):.2e}; {count} random instances (float64).",
    )


def _lemma_check(family: str, lemma: str):
    """``check(key, scale)`` for ``lemma`` ∈ {a1_2, a1_3, a5_1} on the quadratic/logistic family."""

    def check(key, scale: str) -> ClaimResult:
        check_choice(f"check_lemma_{lemma}_{family}", "scale", scale, SCALES)
        count = _INSTANCES[scale]
        k_fam, k_u, k_v, k_eta = jax.random.split(key, 4)
        with jax.enable_x64(True):
            if family == "quadratic":
                hessian, a, c = _quadratic_loss_family(k_fam, count)
                beta = jnp.linalg.eigvalsh(hessian)[:, -1]
                losses = (hessian, a, c)
                make = lambda h, a, c: lambda w: ff.quadratic_loss(w, h, a) + c
            else:
                n = 1 if lemma != "a5_1" else 8  # A.5.1 on the mean loss over n samples
                x, y = _logistic_family(k_fam, count, n)
                beta = jax.vmap(ff.logistic_smoothness)(x)
                losses = (x, y)
                make = _logistic_mean
            u = _random_points(k_u, count, (_D,), 1.0 if family == "logistic" else 0.3)
            v = _random_points(k_v, count, (_D,), 1.0)
            # η uniform in (0, η_max], a quarter of the instances at η_max exactly
            frac = jax.random.uniform(k_eta, (count,), minval=1e-3, maxval=1.0)
            frac = jnp.where(jnp.arange(count) % 4 == 0, 1.0, frac)
            if lemma == "a1_2":
                eta_max, what = 2.0, "‖(u − η∇f(u)) − (v − η∇f(v))‖ ≤ ‖u − v‖, η ∈ (0, 2/β]"
                fn = lambda ls, u, v, eta: ff.lemma_a1_2_sides(make(*ls), u, v, eta)
                args = (losses, u, v, frac * eta_max / beta)
            elif lemma == "a1_3":
                what = "‖∇f(w)‖² ≤ 2βf(w)"
                fn = lambda ls, w, b: ff.lemma_a1_3_sides(make(*ls), w, b)
                args = (losses, u, beta)
            else:
                what = "f(w − η∇f(w)) ≤ f(w) − (η/2)‖∇f(w)‖², η ∈ (0, 1/β]"
                fn = lambda ls, w, eta: ff.lemma_a5_1_sides(make(*ls), w, eta)
                args = (losses, u, frac / beta)
            sides = jax.jit(jax.vmap(fn))(*args)
            ref = jnp.maximum(jnp.abs(sides.rhs), jnp.abs(sides.lhs))
            ref = jnp.maximum(ref, jnp.finfo(ref.dtype).tiny)  # both sides underflow to 0
        smooth = "β = λ_max(H)" if family == "quadratic" else "β = σ_max(X)²/(4n)"
        return _lemma_result(sides, ref, f"{what}; {family}, {smooth}", count)

    return check


def check_lemma_a1_1(key, scale: str) -> ClaimResult:
    """‖w_t − w_*‖ ≤ (1 − ημ)^{t/2}R along GD on (1/n)Σ_j f(·, z_j), η ∈ (0, 1/β], all t."""
    check_choice("check_lemma_a1_1", "scale", scale, SCALES)
    count, steps = _INSTANCES[scale], _STEPS[scale] // 3
    k_inst, k_ratio, k_eta = jax.random.split(key, 3)

    def one(k, ratio, frac):
        inst = ff.quadratic_instance(k, _PRINTED_N, _D, mu=ratio, beta=1.0, radius=1.0)
        eig = jnp.linalg.eigvalsh(inst.hessians.mean(axis=0))  # objective's μ and β
        eta = frac / eig[-1]
        traj = ff.loo_trajectory(inst, 0, learning_rate=eta, num_steps=steps)
        bound = ff.lemma_a1_1_rate(jnp.arange(steps + 1), eta, eig[0], 1.0)
        # the bound underflows to 0 for ημ ≈ 1 after ~100 steps; the error (≤ bound²) first
        return jnp.max(jnp.where(bound > 0, (traj.error - bound) / bound, traj.error))

    with jax.enable_x64(True):
        ratios = jax.random.uniform(k_ratio, (count,), minval=0.01, maxval=1.0)
        frac = jax.random.uniform(k_eta, (count,), minval=1e-2, maxval=1.0)
        frac = jnp.where(jnp.arange(count) % 4 == 0, 1.0, frac)  # η = 1/β on a quarter
        gap = np.asarray(jax.jit(jax.vmap(one))(jax.random.split(k_inst, count), ratios, frac))
    return compare(
        gap,
        0.0,
        relation="upper_bound",
        atol=_ROUND_OFF,
        notes=f"GD on the mean quadratic (1/n)Σ_j f(·, z_j), n = {_PRINTED_N}, μ, β its extreme "
        f"curvatures, μ/β of the samples U[0.01, 1], η = frac/β, frac ∈ U[0.01, 1] (1 on a "
        f"quarter), {steps} steps; measured = max_t (‖w_t − w_*‖ − bound_t)/bound_t; worst "
        f"{gap.max():.2e} (quadratics contract by (1 − ημ)^t, the lemma's square root).",
    )


def check_step_size_condition(key, scale: str) -> ClaimResult:
    """η = 2.2/β > 2/β: GD on the mean quadratic increases the loss (no descent), every instance."""
    check_choice("check_step_size_condition", "scale", scale, SCALES)
    count, steps = _INSTANCES[scale], 200

    def one(k):
        inst = ff.quadratic_instance(k, _PRINTED_N, _D, mu=0.5, beta=1.0, radius=1.0)
        beta = jnp.linalg.eigvalsh(inst.hessians.mean(axis=0))[-1]
        traj = ff.loo_trajectory(inst, 0, learning_rate=2.2 / beta, num_steps=steps)
        return jnp.log(traj.error[-1] / traj.error[0])

    with jax.enable_x64(True):
        growth = np.asarray(jax.jit(jax.vmap(one))(jax.random.split(key, count)))
    return compare(
        growth,
        0.0,
        relation="lower_bound",
        notes=f"η = 2.2/β_F (β_F = λ_max of the mean Hessian), n = {_PRINTED_N}, {steps} steps; "
        f"measured = log(‖w_T − w_*‖/‖w_0 − w_*‖) > 0 (divergence along the top eigenvector, "
        f"|1 − ηβ_F| = 1.2); min {growth.min():.1f}. Complements A.5.1: the step-size condition "
        "is needed (notes §7, check 22).",
    )


def _claim(aspect: str, result: str, statement: str, check, **kw) -> Claim:
    return Claim(
        id=f"stability.{aspect}",
        paper=f"{_PAPER}, {result}",
        statement=statement,
        check=check,
        **kw,
    )


_THM = "Thm 2.2, eq. (3) and App. A.1"
CLAIMS: tuple[Claim, ...] = (
    _claim("thm2_2.certificate", _THM, "‖w_t − w^i_t‖ ≤ (η/n)Σ_{s<t}‖∇f(w_s, z_i)‖ for every t "
           "(steps P1–P2 of the proof), quadratic model, η = 1/β", check_certificate),
    _claim("thm2_2.bound_corrected", _THM, "sup_T‖w_T − w^i_T‖ ≤ √(2LR/β)/(n(1 − (1 − μ/β)^{1/4})) "
           "(off-by-one fixed), L = βR, all μ/β ∈ (0, 1]", check_bound_corrected,
           experiment=_EXPERIMENT),
    _claim("thm2_2.bound_printed", _THM, "eq. (3) as printed fails near μ = β: it is 0 at μ = β "
           "where sup‖Δ‖ = R/n (n = 10, R = 1), and below sup‖Δ‖ at μ/β = 0.99",
           check_bound_printed, expect="refuted", experiment=_EXPERIMENT),
    _claim("thm2_2.bound_printed_generic", _THM, "eq. (3) (R = β = 1, L = βR) holds on every "
           "instance for μ/β ≤ 0.97", check_bound_printed_generic, experiment=_EXPERIMENT),
    _claim("thm2_2.bound_printed_radius", _THM, "main-text eq. (3) ∝ R^{3/2} (L = βR) is below "
           "the measured sup‖Δ‖ ∝ R for small R (R = 1e-3, μ/β = 0.5)",
           check_bound_printed_radius, expect="refuted"),
    _claim("thm2_2.scaling_n", f"{_PAPER}, Thm 2.2 (Sec 2.2 discussion)", "mean sup_T‖Δ_T‖ "
           "∝ 1/n: log–log slope −1 ± 0.05 over n ∈ {25, …, 400}", check_scaling_n,
           experiment=_EXPERIMENT),
    _claim("thm2_2.scaling_r", f"{_PAPER}, Thm 2.2; Sec 4.3.4", "sup_T‖Δ_T‖ is exactly linear "
           "in R = ‖w_0 − w_*‖ (the quadratic model's Δ_T is linear in w_0 − w_*)",
           check_scaling_r),
    _claim("thm2_2.scaling_lipschitz", f"{_PAPER}, Thm 2.2 (Sec 2.2 discussion)", "smaller L "
           "(H_j → cH_j, η fixed) gives smaller mean sup‖Δ‖; with η = 1/(cβ) it is unchanged",
           check_scaling_lipschitz),
    _claim("lemma_a1_1.quadratic", "Lemma A.1.1", "GD with 0 < η ≤ 1/β on a μ-strongly convex "
           "β-smooth quadratic: ‖w_t − w_*‖² ≤ (1 − ημ)^t‖w_0 − w_*‖²", check_lemma_a1_1),
    _claim("lemma_a1_2.quadratic", "Lemma A.1.2", "GD steps on a convex β-smooth quadratic are "
           "non-expansive for 0 < η ≤ 2/β", _lemma_check("quadratic", "a1_2")),
    _claim("lemma_a1_2.logistic", "Lemma A.1.2", "GD steps on the logistic loss (β = ‖x‖²/4) "
           "are non-expansive for 0 < η ≤ 2/β", _lemma_check("logistic", "a1_2")),
    _claim("lemma_a1_3.quadratic", "Lemma A.1.3", "‖∇f‖² ≤ 2βf for non-negative quadratics",
           _lemma_check("quadratic", "a1_3")),
    _claim("lemma_a1_3.logistic", "Lemma A.1.3", "‖∇f‖² ≤ 2βf for the logistic loss, β = ‖x‖²/4",
           _lemma_check("logistic", "a1_3")),
    _claim("lemma_a5_1.quadratic", "Lemma A.5.1", "f(w − η∇f) ≤ f(w) − (η/2)‖∇f‖² for "
           "quadratics, 0 < η ≤ 1/β", _lemma_check("quadratic", "a5_1")),
    _claim("lemma_a5_1.logistic", "Lemma A.5.1", "f(w − η∇f) ≤ f(w) − (η/2)‖∇f‖² for the mean "
           "logistic loss, β = σ_max(X)²/(4n), 0 < η ≤ 1/β", _lemma_check("logistic", "a5_1")),
    _claim("lemma_a5_1.step_size", "Lemma A.5.1; Sec 2.3 discussion", "η > 2/β: GD on a "
           "quadratic diverges (loss increases) on every instance", check_step_size_condition),
)  # fmt: skip
