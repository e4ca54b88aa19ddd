"""Claims of Shachaf et al. 2021, Sec 5 (deep linear networks): Thms 5.2 and 5.3.

Thm 5.4 (random projections, Σ = I) is in :mod:`._random_projection`, Thm 5.5 (frozen first
layer) and Fig 3 in :mod:`._freezing`, Fig 2 in :mod:`._scale_and_depth`.

Every check runs in float64 inside ``with jax.enable_x64(True):`` and maps over instances
with :func:`ntsim.claims._base.vmap_instances` (``jit(vmap)``); only static sizes (depth,
``n``, step size) are looped in Python. Layer-wise GD is :func:`ntsim.core.gradient_descent` on
``mse_loss(deep_linear(widths).apply, x, y, loss_scale=1/n)`` (the paper's ``(1/n)‖·‖²``)
from the exactly 0-balanced rank-one construction
:func:`ntsim.core.balanced_deep_linear_params` (hidden widths ``d``). Task instances:
``‖θ_S‖ = 1`` and ``θ_T = αθ_S + ξ`` with ``α`` log-uniform and an independent Gaussian
``ξ``, so ``c_∞ = ‖P_∥θ_T‖/‖P_∥θ_S‖`` falls on both sides of 1.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare, vmap_instances
from ntsim.core import (
    Record,
    balanced_deep_linear_params,
    check_finite,
    covariance,
    deep_linear,
    end_to_end_vector,
    gaussian_inputs,
    gradient_descent,
    mse_loss,
    random_orthogonal,
)
from ntsim.theory.linear_teachers import (
    aligned_risk_depth1,
    deep_fine_tuned_limit,
    deep_limit_scale,
    deep_risk,
    end_to_end_preconditioner,
    fine_tuned_linear,
    null_space_projector,
)

__all__ = ["CLAIMS"]

_PAPER = "Shachaf et al. 2021"

# Root equation: (d, sample sizes n, instances per n).
_ROOT = {"quick": (20, (2, 5, 10, 15), 50), "full": (100, (5, 25, 50, 90), 50)}
_ROOT_DEPTHS = (1.0, 2.0, 3.0, 5.0, 10.0, 1000.0)
_ROOT_GRID = 2000  # log-spaced points on which the sign changes of h are counted
# Tolerances: the bisection returns b to float64 round-off (64 halvings, see _deep.py), so
# |h(b)|/S² and |b − b_(L=2)|/b are a few eps·(B/S)²; 1e-12 leaves > 100x slack. L = 1
# against γ of Thm 4.1: same QR, ~eps·cond(X) ≤ 1e-13.
_TOL_ROOT = 1e-12
# Large-L rate [derived here]: expanding h in ε = 1/L around r = c_∞ gives
# c_L/c_∞ − 1 = −ε·(S²/C²)·log c_∞ + O(ε²); the claim allows twice the first-order term.
_LARGE_L = 1000.0

# GD vs eq. (5): (d, n, instances per depth, depths, step sizes, flow time T = η·steps).
_GD = {
    "quick": (12, 4, 4, (2, 3, 5), (0.02, 0.01, 0.005), 30.0),
    "full": (16, 4, 40, (2, 3, 5), (0.01, 0.005, 0.0025), 30.0),
}
# η is limited by stability (Hessian ∝ L‖β‖^{2−2/L}·2λ_max(XᵀX)/n): at d = 16 one instance
# in 630 did not converge at η = 0.02, so the full scale uses half the steps of quick.
# GD is a first-order discretisation of the flow, so ‖β_GD − β_(5)‖ = K·η + O(η²): a slope
# of 1 in log-log. Over a factor 4 in η the O(η²) term (relative size ~ η·K'/K ≲ 0.15 here)
# moves the fitted slope by ≲ 0.2; like diffrax's order test we accept |slope − 1| ≤ 0.25.
_SLOPE_BAND = 0.25
# "Train loss → 0": final loss relative to the initial loss (converged to round-off).
_TOL_LOSS = 1e-20

# P_⊥W_1(t) = P_⊥W_1(0): (d, n, instances per (depth, η), steps); every step recorded.
_NULL = {"quick": (12, 4, 8, 200), "full": (30, 10, 25, 1000)}
_NULL_ETAS = (0.005, 0.02, 0.05)
# Each update adds round-off ~eps·‖ΔW_1‖ to the null-space part; after 1000 steps ≲ 1e-13.
_TOL_NULL = 1e-11

# Approximately balanced pretraining: (d, n, instances, pretrain steps, fine-tune steps).
_APPROX = {"quick": (8, 2, 4, 2500, 2500), "full": (10, 3, 200, 6000, 6000)}
_SIGMAS = (0.1, 0.03, 0.01)
_TOL_TRAINED = 1e-10  # both phases must reach (near) zero train loss for eq. (5) to apply
_APPROX_DEPTH = 3

# Thm 5.3: (d, n, instances).
# Full scale d = 300 (not the notes' 1000): 200 dense Haar Σ of size 1000 cost ~150 s.
_ALIGNED = {"quick": (100, 10, 200), "full": (300, 30, 200)}
_ALIGNED_DEPTHS = (1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 20.0, 50.0)
# R(β_∞) = ‖P_⊥(θ_T − c_∞θ_S)‖²_Σ with θ_T − c_∞θ_S = 0 up to round-off ~eps·‖θ_T‖:
# R/‖θ_T‖² ≲ 1e-30; identities to 1e-10 relative.
_TOL_ZERO = 1e-24
_TOL_IDENTITY = 1e-10


def _tasks(key, n: int, d: int, *, spectrum_range=(0.2, 2.0)) -> dict:
    """Σ = V diag(λ) Vᵀ (Haar V, λ ~ U[range]), X ~ N(0, Σ)^n, ‖θ_S‖ = 1, θ_T = αθ_S + ξ."""
    k_spec, k_basis, k_x, k_s, k_a, k_t = jax.random.split(key, 6)
    spectrum = jax.random.uniform(k_spec, (d,), minval=spectrum_range[0], maxval=spectrum_range[1])
    spectrum = jnp.sort(spectrum)[::-1]
    basis = random_orthogonal(k_basis, d)
    theta_s = jax.random.normal(k_s, (d,))
    theta_s = theta_s / jnp.linalg.norm(theta_s)
    alpha = jnp.exp(jax.random.uniform(k_a, (), minval=jnp.log(0.2), maxval=jnp.log(5.0)))
    noise = 0.5 * jax.random.normal(k_t, (d,)) / jnp.sqrt(d)
    return {
        "sigma": covariance(spectrum, basis),
        "x": gaussian_inputs(k_x, n, spectrum, basis),
        "theta_s": theta_s,
        "theta_t": alpha * theta_s + noise,
        "alpha": alpha,
    }


def _norms(inst):
    """``(A, C, B, S)`` = ``(‖P_⊥θ_S‖, ‖P_∥θ_S‖, ‖P_∥θ_T‖, ‖θ_S‖)`` by an SVD route."""
    x, ts, tt = inst["x"], inst["theta_s"], inst["theta_t"]
    vt = jnp.linalg.svd(x, full_matrices=False)[2]  # row-space basis, independent of the QR
    c, b = jnp.linalg.norm(vt @ ts), jnp.linalg.norm(vt @ tt)
    return jnp.linalg.norm(ts - vt.T @ (vt @ ts)), c, b, jnp.linalg.norm(ts)


# ------------------------------------------------------------------ Thm 5.2: root equation


def _root_terms(inst):
    a, c, b_row, s = _norms(inst)
    c_inf = b_row / c
    depths = jnp.asarray(_ROOT_DEPTHS)
    sol = jax.vmap(lambda L: deep_limit_scale(a, c, b_row, L))(depths)
    p = 2.0 * (depths - 1.0) / depths
    b = sol.norm
    resid = jnp.abs(b**2 - (b / s) ** p * a**2 - b_row**2) / s**2
    lo, hi = s * jnp.minimum(1.0, c_inf), s * jnp.maximum(1.0, c_inf)
    bracket = jnp.maximum(lo - b, b - hi) / s  # ≤ 0 inside the bracket
    # Sign changes of h on a log grid spanning [lo/4, 4·hi]: exactly one root.
    grid = jnp.exp(jnp.linspace(jnp.log(lo / 4), jnp.log(4 * hi), _ROOT_GRID))
    h = grid[None, :] ** 2 - (grid[None, :] / s) ** p[:, None] * a**2 - b_row**2
    changes = jnp.sum(jnp.sign(h[:, 1:]) != jnp.sign(h[:, :-1]), axis=1)
    frac = (sol.coefficient[1:] - 1.0) / (c_inf - 1.0)  # ∈ (0, 1) strictly, L ≥ 2
    between = jnp.minimum(frac, 1.0 - frac)
    rate = 2.0 * (s / c) ** 2 * jnp.abs(jnp.log(c_inf)) * c_inf / _LARGE_L
    large = jnp.abs(sol.coefficient[-1] - c_inf)
    closed_l2 = (a**2 / s + jnp.sqrt(a**4 / s**2 + 4 * b_row**2)) / 2
    gamma = fine_tuned_linear(inst["x"], inst["theta_s"], inst["theta_t"])
    beta1 = deep_fine_tuned_limit(inst["x"], inst["theta_s"], inst["theta_t"], 1.0)
    return {
        "resid": resid,
        "bracket": bracket,
        "changes": changes,
        "between": between,
        "large": large,
        "rate": rate,
        "l2": jnp.abs(b[1] - closed_l2) / closed_l2,
        "l1": jnp.linalg.norm(beta1 - gamma) / jnp.linalg.norm(gamma),
    }


def check_root_equation(key, scale: str) -> ClaimResult:
    """Root of h(b): residual, bracket, uniqueness, 1 < c_L < c_∞, L → ∞, L = 1 and L = 2."""
    check_choice("check_root_equation", "scale", scale, SCALES)
    d, ns, per_n = _ROOT[scale]
    with jax.enable_x64(True):
        outs = []
        for j, n in enumerate(ns):
            keys = jax.random.split(jax.random.fold_in(key, j), per_n)
            insts = vmap_instances(lambda k, n=n: _tasks(k, n, d), keys)
            outs.append(vmap_instances(_root_terms, insts))
        t = {k: np.concatenate([np.asarray(o[k]) for o in outs]) for k in outs[0]}
    count = len(ns) * per_n
    parts = [
        compare(t["resid"], _TOL_ROOT, relation="upper_bound", num_instances=count),
        compare(t["bracket"], 0.0, relation="upper_bound", atol=_TOL_ROOT),
        compare(t["changes"], 1.0, relation="equal"),
        compare(t["between"], 0.0, relation="lower_bound"),
        compare(t["large"], t["rate"], relation="upper_bound"),
        compare(t["l2"], _TOL_ROOT, relation="upper_bound"),
        compare(t["l1"], _TOL_ROOT, relation="upper_bound"),
    ]
    strict = bool(np.all(t["between"] > 0))
    ratio = t["large"] / t["rate"]
    notes = (
        f"d = {d}, n ∈ {ns}, {per_n} instances each ({count}); depths {_ROOT_DEPTHS}. "
        f"max |h(b)|/S² = {t['resid'].max():.1e} (tol {_TOL_ROOT:g}); bracket "
        f"[S·min(1,c_∞), S·max(1,c_∞)] worst excess {t['bracket'].max():.1e}·S; sign changes "
        f"of h on a {_ROOT_GRID}-point log grid over [lo/4, 4hi]: all = 1 "
        f"({bool(np.all(t['changes'] == 1))}); min over L ≥ 2 of min(f, 1 − f), "
        f"f = (c_L − 1)/(c_∞ − 1): {t['between'].min():.2e} (> 0 strictly: {strict}); "
        f"|c_1000 − c_∞| / [2(S/C)²|log c_∞|c_∞/1000] max {ratio.max():.2f} (first-order "
        f"rate, derived); L = 2 closed form max rel. error {t['l2'].max():.1e}; L = 1 vs γ "
        f"(Thm 4.1) max rel. error {t['l1'].max():.1e}."
    )
    result = combine_results(*parts, notes=notes)
    return result if strict else dataclasses.replace(result, holds=False)  # strictly between


# ---------------------------------------------------------------- Thm 5.2: GD vs eq. (5)


def _gd_instance(key, d: int, n: int, depth: int, *, alpha: float | None = 1.7) -> dict:
    """Σ = I task with θ_T = 1.7θ_S + ξ (notes' example) plus the balanced unit vectors v_j.

    A fixed α keeps ‖β‖ ≤ ~2, so the GD stability limit (Hessian ∝ L‖β‖^{2−2/L}) is the same
    for every instance and one step-size grid fits all.
    """
    inst = _tasks(key, n, d, spectrum_range=(1.0, 1.0))
    if alpha is not None:
        inst["theta_t"] = inst["theta_t"] + (alpha - inst["alpha"]) * inst["theta_s"]
        inst["alpha"] = jnp.asarray(alpha, inst["theta_s"].dtype)
    keys = jax.random.split(jax.random.fold_in(key, 1), depth - 1)
    inst["v"] = [jax.random.normal(k, (d,)) for k in keys]
    return inst


def _gd_setup(inst, depth: int):
    d = inst["x"].shape[1]
    n = inst["x"].shape[0]
    widths = (d,) * (depth - 1) + (1,)
    params0 = balanced_deep_linear_params(inst["theta_s"], widths, inst["v"])
    loss = mse_loss(
        deep_linear(widths).apply, inst["x"], inst["x"] @ inst["theta_t"], loss_scale=1.0 / n
    )
    return params0, loss


def _gd_error(inst, depth: int, eta, steps: int):
    params0, loss = _gd_setup(inst, depth)
    run = gradient_descent(loss, params0, learning_rate=eta, num_steps=steps, throw=False)
    ref = deep_fine_tuned_limit(inst["x"], inst["theta_s"], inst["theta_t"], float(depth))
    err = jnp.linalg.norm(end_to_end_vector(run.params) - ref) / jnp.linalg.norm(ref)
    return run, err, loss(run.params) / loss(params0)


def check_gd_converges(key, scale: str) -> ClaimResult:
    """Layer-wise GD from exactly 0-balanced weights → eq. (5) with error ∝ η (slope 1)."""
    check_choice("check_gd_converges", "scale", scale, SCALES)
    d, n, per_depth, depths, etas, flow_time = _GD[scale]
    steps = round(flow_time / min(etas))  # every η runs ≥ flow time T (one compile per L)
    slopes, losses, errors = [], [], {}
    with jax.enable_x64(True):
        for depth in depths:
            keys = jax.random.split(jax.random.fold_in(key, depth), per_depth)
            insts = vmap_instances(lambda k, depth=depth: _gd_instance(k, d, n, depth), keys)

            def over_etas(inst, depth=depth):
                fn = lambda eta: _gd_error(inst, depth, eta, steps)  # noqa: E731
                return jax.vmap(fn)(jnp.asarray(etas))

            run, err, loss = vmap_instances(over_etas, insts)
            check_finite(run, where="check_gd_converges")
            errs = np.asarray(err)  # (instances, etas)
            losses.append(np.asarray(loss).ravel())
            errors[depth] = errs
            slopes.append(np.polyfit(np.log(etas), np.log(errs).T, 1)[0])
    slopes, losses = np.concatenate(slopes), np.concatenate(losses)
    parts = [
        compare(slopes, 1.0, relation="equal", atol=_SLOPE_BAND),
        compare(losses, _TOL_LOSS, relation="upper_bound"),
    ]
    per = "; ".join(
        f"L={L}: median error {' → '.join(f'{v:.1e}' for v in np.median(e, 0))}"
        for L, e in errors.items()
    )
    notes = (
        f"Σ = I, d = {d}, n = {n}, θ_T = 1.7θ_S + ξ, widths d, {per_depth} instances per depth "
        f"L ∈ {depths}; GD {steps} steps (flow time ≥ {flow_time:g}) at η ∈ {etas}. Error = "
        f"‖β_GD − β_(5)‖/‖β_(5)‖: {per}. Per-instance log-log slope of error vs η: min "
        f"{slopes.min():.3f}, median {np.median(slopes):.3f}, max {slopes.max():.3f} (pass "
        f"|slope − 1| ≤ {_SLOPE_BAND}: first-order discretisation of the flow, O(η²) bends the "
        f"slope ≲ 0.2 over 4x in η); final/initial train loss max {losses.max():.1e} "
        f"(tol {_TOL_LOSS:g})."
    )
    return combine_results(*parts, notes=notes)


# ----------------------------------------------- Thm 5.2: end-to-end preconditioned GD

# (d, n, instances per depth, depths, step sizes, flow time); notes check 15 (d = 30, L = 4).
_E2E = {
    "quick": (12, 4, 8, (4,), (0.02, 0.01, 0.005), 20.0),
    "full": (30, 8, 40, (2, 4), (0.004, 0.002, 0.001), 20.0),
}
_E2E_RECORDS = 40  # trajectory points compared between the two discretisations


def _e2e_terms(inst, depth: int, eta, steps: int):
    """Layer-wise GD and end-to-end preconditioned GD from β(0) = θ_S, recorded together."""
    params0, loss = _gd_setup(inst, depth)
    x, y, n = inst["x"], inst["x"] @ inst["theta_t"], inst["x"].shape[0]
    beta_loss = lambda beta: jnp.sum((x @ beta - y) ** 2) / n  # noqa: E731  same (1/n)‖·‖²
    every = max(steps // _E2E_RECORDS, 1)
    layers = gradient_descent(loss, params0, learning_rate=eta, num_steps=steps, throw=False,
                              record=Record(every, lambda p, _: end_to_end_vector(p)))  # fmt: skip
    optimizer = optax.chain(end_to_end_preconditioner(depth), optax.sgd(eta))
    e2e = gradient_descent(beta_loss, inst["theta_s"], optimizer=optimizer, num_steps=steps,
                           record=Record(every, lambda b, _: b), throw=False)  # fmt: skip
    ref = deep_fine_tuned_limit(x, inst["theta_s"], inst["theta_t"], float(depth))
    scale = jnp.linalg.norm(ref)
    gap = jnp.max(jnp.linalg.norm(layers.records - e2e.records, axis=-1)) / scale
    return (layers, e2e), {
        "gap": gap,
        "error": jnp.linalg.norm(e2e.params - ref) / scale,
        "loss": beta_loss(e2e.params) / beta_loss(inst["theta_s"]),
    }


def check_end_to_end(key, scale: str) -> ClaimResult:
    """End-to-end preconditioned GD tracks layer-wise GD to O(η) and converges to eq. (5)."""
    check_choice("check_end_to_end", "scale", scale, SCALES)
    d, n, per_depth, depths, etas, flow_time = _E2E[scale]
    terms = []
    with jax.enable_x64(True):
        for depth in depths:
            keys = jax.random.split(jax.random.fold_in(key, depth), per_depth)
            insts = vmap_instances(lambda k, depth=depth: _gd_instance(k, d, n, depth), keys)
            per_eta = []
            for eta in etas:  # steps ∝ 1/η: records at the same flow times for every η
                steps = round(flow_time / eta)
                fn = lambda i, depth=depth, eta=eta, steps=steps: _e2e_terms(i, depth, eta, steps)  # noqa: E731
                runs, out = vmap_instances(fn, insts)
                for run in runs:  # (layer-wise, end-to-end)
                    check_finite(run, where="check_end_to_end")
                per_eta.append(out)
            terms.append({k: np.stack([np.asarray(o[k]) for o in per_eta], 1) for k in per_eta[0]})
    gap = np.concatenate([t["gap"] for t in terms])
    error = np.concatenate([t["error"] for t in terms])
    loss = np.concatenate([t["loss"] for t in terms]).ravel()
    log_eta = np.log(etas)
    gap_slope = np.polyfit(log_eta, np.log(gap).T, 1)[0]
    # The limit's O(η) coefficient can nearly cancel in a single instance (then O(η²) sets a
    # tiny error with any slope), so the rate is fitted to the median over instances, and
    # every instance must satisfy the explicit first-order bound error ≤ η.
    error_slope = np.polyfit(log_eta, np.log(np.median(error, 0)), 1)[0]
    parts = [
        compare(gap_slope, 1.0, relation="equal", atol=_SLOPE_BAND),
        compare(np.asarray([error_slope]), 1.0, relation="equal", atol=_SLOPE_BAND),
        compare(error, np.broadcast_to(np.asarray(etas), error.shape), relation="upper_bound"),
        compare(loss, _TOL_LOSS, relation="upper_bound"),
    ]
    medians = lambda a: " → ".join(f"{v:.1e}" for v in np.median(a, 0))  # noqa: E731
    notes = (
        f"Σ = I, d = {d}, n = {n}, θ_T = 1.7θ_S + ξ, L ∈ {depths}, {per_depth} instances per "
        f"depth, η ∈ {etas}, flow time {flow_time:g} (T/η steps, {_E2E_RECORDS} records at the "
        f"same flow times for every η). End-to-end GD "
        f"β ← β − η‖β‖^(2−2/L)(∇ + (L−1)⟨∇, β̂⟩β̂) from β(0) = θ_S vs layer-wise GD from the "
        f"balanced rank-one weights (same η, same loss (1/n)‖Xβ − y‖²). Trajectory gap max_t "
        f"‖β_layers(t) − β_e2e(t)‖/‖β_(5)‖, median per η: {medians(gap)}; log-log slope vs η "
        f"min {gap_slope.min():.3f}, max {gap_slope.max():.3f}. Final error of end-to-end GD "
        f"to eq. (5), median per η: {medians(error)}, slope of the median {error_slope:.3f} "
        f"(pass |slope − 1| ≤ {_SLOPE_BAND}: both are first-order discretisations of one "
        f"flow); max error/η over instances {np.max(error / np.asarray(etas)):.3f} (≤ 1). "
        f"Final/initial train loss max {loss.max():.1e}."
    )
    return combine_results(*parts, notes=notes)


# ------------------------------------------------------------- Thm 5.2: P_⊥W_1 invariance


def check_null_space_first_layer(key, scale: str) -> ClaimResult:
    """Layer-wise GD (any η) keeps P_⊥W_1(t) = P_⊥W_1(0) at every step (notes, [derived])."""
    check_choice("check_null_space_first_layer", "scale", scale, SCALES)
    d, n, per, steps = _NULL[scale]
    drifts = []
    with jax.enable_x64(True):
        for depth in (2, 3, 5):
            keys = jax.random.split(jax.random.fold_in(key, depth), per)
            insts = vmap_instances(lambda k, depth=depth: _gd_instance(k, d, n, depth), keys)

            def drift(inst, eta, depth=depth):
                params0, loss = _gd_setup(inst, depth)
                p_perp = null_space_projector(inst["x"])
                w0 = params0["layers"][0]
                rec = lambda p, t: jnp.linalg.norm(p_perp @ (p["layers"][0] - w0))  # noqa: E731
                run = gradient_descent(
                    loss, params0, learning_rate=eta, num_steps=steps,
                    record=Record(1, rec), throw=False,
                )  # fmt: skip
                return run, jnp.max(run.records) / jnp.linalg.norm(w0)

            etas = jnp.asarray(_NULL_ETAS)
            over = lambda i, drift=drift, etas=etas: jax.vmap(lambda e: drift(i, e))(etas)  # noqa: E731
            run, dr = vmap_instances(over, insts)
            check_finite(run, where="check_null_space_first_layer")
            drifts.append(np.asarray(dr).ravel())
    drifts = np.concatenate(drifts)
    return compare(
        drifts,
        _TOL_NULL,
        relation="upper_bound",
        notes=f"d = {d}, n = {n}, L ∈ (2, 3, 5), η ∈ {_NULL_ETAS}, {per} instances each "
        f"({drifts.size} runs), {steps} steps, every step recorded; measured "
        f"max_t ‖P_⊥(W_1(t) − W_1(0))‖_F/‖W_1(0)‖_F, worst {drifts.max():.1e} vs "
        f"{_TOL_NULL:g} (per-step round-off eps·‖ΔW_1‖ accumulated).",
    )


# -------------------------------------------------- Thm 5.2: approximately balanced init


def _approx_error(key, d: int, n: int, sigma0: float, pre: int, ft: int):
    k_task, k_src, k_init = jax.random.split(key, 3)
    inst = _tasks(k_task, n, d, spectrum_range=(1.0, 1.0))
    # α fixed at 1.7 as in _gd_instance: with α up to 5 the fixed η = 0.0125 is beyond the
    # GD stability limit ∝ 1/(L‖β‖^{2−2/L}λ_max) for some instances (they never converge).
    inst["theta_t"] = inst["theta_t"] + (1.7 - inst["alpha"]) * inst["theta_s"]
    x_src = jax.random.normal(k_src, (3 * d, d))  # n_S = 3d source samples
    widths = (d,) * (_APPROX_DEPTH - 1) + (1,)
    model = deep_linear(widths, init_scale=sigma0)
    params = model.init(k_init, x_src[0])
    pre_loss = mse_loss(model.apply, x_src, x_src @ inst["theta_s"], loss_scale=1 / (3 * d))
    pre_run = gradient_descent(pre_loss, params, learning_rate=0.05, num_steps=pre, throw=False)
    beta_s = end_to_end_vector(pre_run.params)  # β(0) after pretraining (≈ θ_S)
    ft_loss = mse_loss(model.apply, inst["x"], inst["x"] @ inst["theta_t"], loss_scale=1 / n)
    ft_run = gradient_descent(ft_loss, pre_run.params, learning_rate=0.0125, num_steps=ft,
                              throw=False)  # fmt: skip
    ref = deep_fine_tuned_limit(inst["x"], beta_s, inst["theta_t"], float(_APPROX_DEPTH))
    err = jnp.linalg.norm(end_to_end_vector(ft_run.params) - ref) / jnp.linalg.norm(ref)
    return (pre_run, ft_run), err, jnp.maximum(pre_loss(pre_run.params), ft_loss(ft_run.params))


def check_approximately_balanced(key, scale: str) -> ClaimResult:
    """Pretraining from N(0, σ₀²) then fine-tuning: error to eq. (5) falls as σ₀ falls."""
    check_choice("check_approximately_balanced", "scale", scale, SCALES)
    d, n, count, pre, ft = _APPROX[scale]
    means, medians, losses = [], [], []
    with jax.enable_x64(True):
        keys = jax.random.split(key, count)
        for sigma0 in _SIGMAS:
            fn = lambda k, s=sigma0: _approx_error(k, d, n, s, pre, ft)  # noqa: E731
            runs, err, loss = vmap_instances(fn, keys)
            for r in runs:
                check_finite(r, where="check_approximately_balanced")
            means.append(float(np.mean(err)))
            medians.append(float(np.median(err)))
            losses.append(float(np.max(loss)))
    means = np.asarray(means)
    converged = compare(np.asarray(losses), _TOL_TRAINED, relation="upper_bound")
    res = compare(
        means[1:],
        means[:-1],
        relation="upper_bound",
        num_instances=count,
        notes=f"d = {d}, L = {_APPROX_DEPTH}, widths d, n_S = 3d, n = {n}, θ_T = 1.7θ_S + ξ, "
        f"{count} instances "
        f"(same tasks and init directions for every σ₀); pretrain {pre} GD steps η = 0.05, "
        f"fine-tune {ft} steps η = 0.0125; eq. (5) evaluated with the pretrained β(0). "
        f"Mean relative error to (5) at σ₀ = {_SIGMAS}: "
        f"{', '.join(f'{m:.2e}' for m in means)} (medians "
        f"{', '.join(f'{m:.2e}' for m in medians)}); measured = mean error at the next "
        f"smaller σ₀, reference = at the larger one (must decrease). Max train loss after "
        f"either phase {max(losses):.1e} (≤ {_TOL_TRAINED:g}). The σ₀ = 0.01 error also holds "
        f"the O(η) GD floor.",
    )
    return combine_results(res, converged, notes=res.notes)


# ------------------------------------------------------------------------------- Thm 5.3


def _aligned_terms(inst):
    x, ts, sigma, alpha = inst["x"], inst["theta_s"], inst["sigma"], inst["alpha"]
    tt = alpha * ts
    risks = jax.vmap(lambda L: deep_risk(x, ts, tt, sigma, L))(jnp.asarray(_ALIGNED_DEPTHS))
    a, c, b_row, _ = _norms({**inst, "theta_t": tt})
    coeff = jax.vmap(lambda L: deep_limit_scale(a, c, b_row, L).coefficient)(
        jnp.asarray(_ALIGNED_DEPTHS)
    )
    u = null_space_projector(x) @ ts
    formula = (alpha - coeff) ** 2 * (u @ sigma @ u)
    return {
        "inf": deep_risk(x, ts, tt, sigma, jnp.inf) / (tt @ sigma @ tt),
        "eq8": aligned_risk_depth1(alpha, x, tt, sigma),
        "risks": risks,
        "formula": formula,
    }


def check_aligned(key, scale: str) -> ClaimResult:
    """θ_T = αθ_S: R(β_∞) = 0; L = 1 is eq. (8); R(β_L) = (α − c_L)²‖Σ^½P_⊥θ_S‖² ↓ in L."""
    check_choice("check_aligned", "scale", scale, SCALES)
    d, n, count = _ALIGNED[scale]
    with jax.enable_x64(True):
        insts = vmap_instances(lambda k: _tasks(k, n, d), jax.random.split(key, count))
        t = {k: np.asarray(v) for k, v in vmap_instances(_aligned_terms, insts).items()}
    risks = t["risks"]
    step = risks[:, :-1] - risks[:, 1:]  # > 0: decreasing in L
    parts = [
        compare(t["inf"], _TOL_ZERO, relation="upper_bound", num_instances=count),
        compare(risks[:, 0], t["eq8"], relation="equal", rtol=_TOL_IDENTITY),
        compare(risks, t["formula"], relation="equal", rtol=_TOL_IDENTITY),
        compare(step / risks[:, :-1], 0.0, relation="lower_bound"),
    ]
    strict = bool(np.all(step > 0))
    notes = (
        f"Σ random (λ ∈ [0.2, 2], Haar basis), d = {d}, n = {n}, {count} instances, α "
        f"log-uniform in [0.2, 5], θ_T = αθ_S. max R(β_∞)/θ_TᵀΣθ_T = {t['inf'].max():.1e} "
        f"(tol {_TOL_ZERO:g}); L = 1 vs eq. (8) max rel. error "
        f"{np.max(np.abs(risks[:, 0] - t['eq8']) / t['eq8']):.1e}; R(β_L) vs (α − c_L)²"
        f"‖Σ^½P_⊥θ_S‖² max rel. error {np.max(np.abs(risks - t['formula']) / t['formula']):.1e}"
        f" (tol {_TOL_IDENTITY:g}); L ∈ {_ALIGNED_DEPTHS}: smallest relative decrease "
        f"between consecutive depths {np.min(step / risks[:, :-1]):.2e} (strict: {strict}); "
        f"R(β_50)/R(γ) median {np.median(risks[:, -1] / risks[:, 0]):.3f}."
    )
    result = combine_results(*parts, notes=notes)
    return result if strict else dataclasses.replace(result, holds=False)  # strictly between


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="linear_teachers.thm5_2.root_equation",
        paper=f"{_PAPER}, Thm 5.2, eqs. (5)–(6); notes Sec 1b",
        statement="b = ‖β_L‖ is the unique root of h(b) = b² − (b/S)^{2(L−1)/L}A² − B² in "
        "[S·min(1,c_∞), S·max(1,c_∞)], 1 < c_L < c_∞ (or reversed), c_L → c_∞, L = 1 gives γ, "
        "L = 2 has the closed form",
        check=check_root_equation,
    ),
    Claim(
        id="linear_teachers.thm5_2.gd_converges",
        paper=f"{_PAPER}, Thm 5.2, eq. (5)",
        statement="Layer-wise GD from exactly 0-balanced weights (β(0) = θ_S) reaches zero "
        "train loss and eq. (5) up to an error linear in the step size (log-log slope ≈ 1)",
        check=check_gd_converges,
    ),
    Claim(
        id="linear_teachers.thm5_2.null_space_first_layer",
        paper=f"{_PAPER}, Thm 5.2 (proof idea); notes Sec 1b",
        statement="Layer-wise GD with any step size keeps P_⊥W_1(t) = P_⊥W_1(0) at every step",
        check=check_null_space_first_layer,
    ),
    Claim(
        id="linear_teachers.thm5_2.approximately_balanced",
        paper=f"{_PAPER}, Thm 5.2 and Sec 5 (near-zero init ⇒ 0-balanced)",
        statement="Pretraining from N(0, σ₀²) init then fine-tuning: the error to eq. (5) "
        "decreases as σ₀ decreases (σ₀ ∈ {0.1, 0.03, 0.01})",
        check=check_approximately_balanced,
    ),
    Claim(
        id="linear_teachers.thm5_2.end_to_end",
        paper=f"{_PAPER}, Thm 5.2 (the end-to-end flow of Arora et al. 2018); notes check 15",
        statement="End-to-end preconditioned GD β ← β − η‖β‖^(2−2/L)(∇ + (L−1)⟨∇, β̂⟩β̂) tracks "
        "layer-wise GD from balanced weights up to O(η) and converges to eq. (5) up to O(η)",
        check=check_end_to_end,
    ),
    Claim(
        id="linear_teachers.thm5_3.aligned",
        paper=f"{_PAPER}, Thm 5.3, eqs. (6), (8)",
        statement="θ_T = αθ_S: R(β_∞) = 0, R(γ) = ((α−1)/α)²‖Σ^½P_⊥θ_T‖², and R(β_L) = "
        "(α − c_L)²‖Σ^½P_⊥θ_S‖² decreases in L",
        check=check_aligned,
    ),
)
