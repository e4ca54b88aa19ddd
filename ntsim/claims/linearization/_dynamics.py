"""Claims on the regularised dynamics: split step, Lemma 3, Thm 1 (Rahimi Afzal et al. 2025).

All checks run in float64 (``jax.enable_x64`` context) and vmap one compiled function over
200 random instances (:mod:`._common`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, compare, vmap_instances
from ntsim.claims.linearization._common import INSTANCES, PAPER, instance, model
from ntsim.core import proximal_combined_step, proximal_split_step
from ntsim.theory import linearization as lz

__all__ = ["CLAIMS"]

# (n, d, width) of the instances.
_SIZES = {"quick": (5, 3, 8), "full": (16, 4, 64)}
# Steps of the coarsest run in the Lemma-3 check (then 2x and 4x as many, η/2 and η/4).
_LEMMA3_STEPS = {"quick": 20, "full": 50}
# Steps of the selective runs (Thm 1 monotonicity).
_SELECTIVE_STEPS = {"quick": 150, "full": 1000}

# Float64 identities between two evaluations of the same algebra: round-off ~1e-15
# relative; 1e-11 leaves 1e4 slack and still catches any wrong factor.
_TOL_IDENTITY = 1e-11
# Thm 1 identity: the JVP and the explicit-Jacobian formula sum ≤ 64·p products of O(1)
# numbers; relative round-off ~1e-13. 1e-9 is loose by 1e4 and tight against any real error.
_TOL_THM1 = 1e-9
# Lemma 3: the fitted order of ‖θ_GD(T) − θ(T)‖ in η over η, η/2, η/4 (first order: 1). The
# O(η²) remainder at ημ_max ≤ 0.1 moves the slope by ≲ 0.05; 0.15 leaves margin.
_ORDER_TOL = 0.15
# Thm 1 (selective): per-step increases of ‖y − y*‖ are O(η²) in discrete time; with
# ημ_max = 0.1 none were seen beyond round-off. 1e-10·r_0 is round-off slack only.
_MONOTONE_RTOL = 1e-10


def _sizes(scale):
    return _SIZES[scale]


# -------------------------------------------------------------------------- split step


def _split_errors(key):
    ka, kb, kc, ke, kl = jax.random.split(key, 5)
    shapes = {"w": (4, 3), "b": (3,)}
    tree = lambda k: {  # noqa: E731
        name: jax.random.normal(jax.random.fold_in(k, i), s)
        for i, (name, s) in enumerate(shapes.items())
    }
    params, grads, params0 = tree(ka), tree(kb), tree(kc)
    eta = jax.random.uniform(ke, minval=0.01, maxval=0.5)
    lam = jax.random.uniform(kl, maxval=1.0) / eta  # λη ∈ [0, 1]
    mid, new = proximal_split_step(params, grads, params0, learning_rate=eta, proximal=lam)
    combined = proximal_combined_step(params, grads, params0, learning_rate=eta, proximal=lam)
    flat = lambda t: ravel_pytree(t)[0]  # noqa: E731
    th, g, th0 = flat(params), flat(grads), flat(params0)
    expanded = (1 - lam * eta) * th - eta * (1 - lam * eta) * g + lam * eta * th0
    scale = jnp.max(jnp.abs(expanded)) + 1.0
    errors = jnp.stack(
        [
            jnp.max(jnp.abs(flat(mid) - (th - eta * g))),
            jnp.max(jnp.abs(flat(new) - expanded)),
            jnp.max(jnp.abs(flat(combined) - expanded)),
        ]
    )
    return jnp.max(errors) / scale


def check_split_step(key, scale: str) -> ClaimResult:
    """Split step = combined form θ0 + (1 − λη)(θ − θ0 − η∇R̃ᵀ) = (1−λη)θ − η(1−λη)∇R̃ᵀ + ληθ0."""
    check_choice("check_split_step", "scale", scale, SCALES)
    with jax.enable_x64(True):
        errors = np.asarray(vmap_instances(_split_errors, jax.random.split(key, INSTANCES)))
    return compare(
        errors,
        _TOL_IDENTITY,
        relation="upper_bound",
        notes="Random pytrees θ, g, θ_0; η ~ U[0.01, 0.5], λη ~ U[0, 1]. Measured: max-abs "
        "difference (relative to 1 + max|θ'|) between the split step, the combined form and the "
        f"expanded form; worst {errors.max():.1e} vs {_TOL_IDENTITY:g} (float64 round-off).",
    )


# ---------------------------------------------------------------------------- Lemma 3


def _lemma3_order(key, n, d, width, steps):
    inst = instance(key, n=n, d=d, width=width)
    apply = model(width).apply
    t_end = 2.0 / inst.mu_max  # ημ_max = 2/steps ≤ 0.1
    lam = jax.random.uniform(jax.random.fold_in(key, 5), maxval=2.0) * inst.mu_max
    flow = lz.flow_path(
        apply, inst.params0, inst.x, inst.y, proximal=lam, times=jnp.stack([0.0 * t_end, t_end])
    )
    target = ravel_pytree(jax.tree.map(lambda a: a[-1], flow))[0]
    gaps = []
    for factor in (1, 2, 4):
        run = lz.finetune(
            apply,
            inst.params0,
            inst.x,
            inst.y,
            proximal=lam,
            learning_rate=t_end / (steps * factor),
            num_steps=steps * factor,
            record_every=steps * factor,
        )
        gaps.append(jnp.linalg.norm(ravel_pytree(run.params)[0] - target))
    gaps = jnp.stack(gaps)
    log_eta = jnp.log(jnp.array([1.0, 0.5, 0.25]))
    slope = jnp.polyfit(log_eta, jnp.log(gaps), 1)[0]
    return slope, gaps[0] / gaps[1]


def check_lemma3_order(key, scale: str) -> ClaimResult:
    """Split-step GD → the flow θ̇ = −∇R̃ᵀ − λ(θ − θ0) with an O(η) gap (Lemma 3)."""
    check_choice("check_lemma3_order", "scale", scale, SCALES)
    n, d, width = _sizes(scale)
    steps = _LEMMA3_STEPS[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, INSTANCES)
        slope, ratio = (
            np.asarray(a)
            for a in vmap_instances(lambda k: _lemma3_order(k, n, d, width, steps), keys)
        )
    return compare(
        slope,
        1.0,
        relation="equal",
        atol=_ORDER_TOL,
        notes=f"tanh MLP width {width}, n = {n}, d = {d}; λ ~ U[0, 2]·λ_max(K); T = 2/λ_max(K); "
        f"GD with {steps}, {2 * steps}, {4 * steps} steps vs diffrax Tsit5 (rtol = atol = 1e-10). "
        f"Measured: fitted order of ‖θ_GD(T) − θ(T)‖ in η (1 = O(η)), range "
        f"[{slope.min():.3f}, {slope.max():.3f}]; gap(η)/gap(η/2) in [{ratio.min():.3f}, "
        f"{ratio.max():.3f}] (≈ 2). Tolerance ±{_ORDER_TOL}.",
    )


# ------------------------------------------------------------------------------ Thm 1


def _thm1_errors(key, n, d, width):
    inst = instance(key, n=n, d=d, width=width)
    apply = model(width).apply
    flat0, unravel = ravel_pytree(inst.params0)
    k_dir, k_lam = jax.random.split(jax.random.fold_in(key, 3))
    theta = unravel(flat0 + 0.5 * jax.random.normal(k_dir, flat0.shape) / jnp.sqrt(flat0.size))
    lam = 10 ** jax.random.uniform(k_lam, minval=-2.0, maxval=1.0)
    ident = lz.thm1_identity(apply, theta, inst.params0, inst.x, inst.y, lam)
    scale = jnp.abs(ident.kernel_term) + jnp.abs(0.5 * lam * ident.inner)
    dy_scale = jnp.max(jnp.abs(ident.dy_formula))
    return jnp.maximum(
        jnp.abs(ident.lhs - ident.rhs) / scale,
        jnp.max(jnp.abs(ident.dy_jvp - ident.dy_formula)) / dy_scale,
    )


def check_thm1_identity(key, scale: str) -> ClaimResult:
    """½ d/dt‖y − y*‖² = −2(y−y*)ᵀk(y−y*) − (λ/2)∇R̃(θ − θ0) and dy/dt = −(2k(y−y*) + λJ(θ−θ0))."""
    check_choice("check_thm1_identity", "scale", scale, SCALES)
    n, d, width = _sizes(scale)
    with jax.enable_x64(True):
        keys = jax.random.split(key, INSTANCES)
        errors = np.asarray(vmap_instances(lambda k: _thm1_errors(k, n, d, width), keys))
    return compare(
        errors,
        _TOL_THM1,
        relation="upper_bound",
        notes=f"tanh MLP width {width}, n = {n}; θ = θ_0 + 0.5·v/√p, λ log-uniform on [1e-2, 10]. "
        "Measured: relative error between a JVP of θ ↦ f_θ(x*) along θ̇ and the explicit-Jacobian "
        f"formulas (both identities); worst {errors.max():.1e} vs {_TOL_THM1:g}.",
    )


def _selective_run(key, n, d, width, steps):
    inst = instance(key, n=n, d=d, width=width)
    apply = model(width).apply
    lam = (
        10 ** jax.random.uniform(jax.random.fold_in(key, 4), minval=-1.0, maxval=1.0) * inst.mu_max
    )
    eta = jnp.minimum(0.1 / inst.mu_max, 0.5 / lam)
    run = lz.finetune(
        apply,
        inst.params0,
        inst.x,
        inst.y,
        proximal=lam,
        learning_rate=eta,
        num_steps=steps,
        selective=True,
    )
    residual = jnp.linalg.norm(run.train - inst.y, axis=1)
    increase = jnp.max(jnp.diff(residual)) / residual[0]
    early_negative = jnp.mean(run.inner[1 : steps // 10] < 0)
    return increase, run.fraction_regularised, early_negative, run.first_nonfinite_step


def check_thm1_selective_monotone(key, scale: str) -> ClaimResult:
    """Selective λ_t (switched on iff ∇R̃·(θ_t − θ0) ≥ 0): ‖f_θt(x*) − y*‖ is non-increasing."""
    check_choice("check_thm1_selective_monotone", "scale", scale, SCALES)
    n, d, width = _sizes(scale)
    steps = _SELECTIVE_STEPS[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, INSTANCES)
        increase, fraction, early, bad = (
            np.asarray(a)
            for a in vmap_instances(lambda k: _selective_run(k, n, d, width, steps), keys)
        )
    if np.any(bad >= 0):
        raise FloatingPointError("check_thm1_selective_monotone: a run diverged.")
    return compare(
        increase,
        0.0,
        relation="upper_bound",
        atol=_MONOTONE_RTOL,
        notes=f"tanh MLP width {width}, n = {n}; λ log-uniform on [0.1, 10]·λ_max(K), η = "
        f"min(0.1/λ_max(K), 0.5/λ), {steps} split steps, λ_t from the pre-step point. Measured: "
        f"max per-step increase of ‖y − y*‖ relative to r_0 (worst {increase.max():.1e}). "
        f"Fraction of steps regularised: mean {fraction.mean():.4f}, max {fraction.max():.4f} "
        f"(the first step at θ_0 has ∇R̃·0 = 0 ≥ 0); ∇R̃·(θ_t − θ_0) < 0 in "
        f"{100 * early.mean():.1f}% of the early steps (notes: near θ_0, u ≈ −t∇R̃ᵀ).",
    )


CLAIMS = (
    Claim(
        id="linearization.split_step.combined_form",
        paper=f"{PAPER}, split step and its combined form; notes check 1",
        statement="θ̃ = θ − η∇R̃ᵀ, θ' = θ̃ − λη(θ̃ − θ0) equals θ0 + (1 − λη)(θ − θ0 − η∇R̃ᵀ) = "
        "(1−λη)θ − η(1−λη)∇R̃ᵀ + ληθ0.",
        check=check_split_step,
    ),
    Claim(
        id="linearization.lemma3.gd_to_flow_order",
        paper=f"{PAPER}, Lemma 3; notes check 2",
        statement="As η → 0 the split step tends to θ̇ = −∇R̃(θ)ᵀ − λ(θ − θ0), with ‖θ_GD(T) − "
        "θ(T)‖ = O(η) (halving η halves the gap).",
        check=check_lemma3_order,
        experiment="linearization/theory_bounds",
    ),
    Claim(
        id="linearization.thm1.identity",
        paper=f"{PAPER}, Thm 1 (proof identities); notes check 3",
        statement="Along θ̇ = −∇R̃ᵀ − λ(θ−θ0): dy/dt = −(2k_θ(y−y*) + λJ_θ(θ−θ0)) and "
        "½d/dt‖y−y*‖² = −2(y−y*)ᵀk_θ(y−y*) − (λ/2)∇R̃(θ)(θ−θ0).",
        check=check_thm1_identity,
    ),
    Claim(
        id="linearization.thm1.selective_monotone",
        paper=f"{PAPER}, Thm 1 (selective regularisation); notes checks 4, 5",
        statement="With λ_t = λ iff ∇R̃(θ_t)(θ_t − θ0) ≥ 0 (else 0), the training error "
        "‖f_θt(x*) − y*‖ is non-increasing.",
        check=check_thm1_selective_monotone,
        experiment="linearization/theory_bounds",
    ),
)
