"""Claims on the model and the pretraining loss after fine-tuning (Springer et al. 2025, Thms 4.6,
4.7, Lemmas A.23–A.27).

Float64. Post-fine-tuning losses come from GD on the matrices (m = ∞) from every ideal
checkpoint ``n = 0..d`` (:func:`~ntsim.theory.overtraining.finetune_ideal_checkpoints`);
the inflection is Def 4.2 on those losses. Spectra are strictly decreasing for both tasks,
as the paper assumes: with an unsorted ``σ^ft`` a learned hidden unit ``j`` is a saddle that
swaps to an unlearned mode ``i`` whenever ``σ^ft_i > σ^ft_j + λσ^pre_j`` (linearisation of
eqs. 16–17 around the ideal dynamics; found here), and round-off alone triggers the swap.

The last claim shows the caveat of the notes: from *real* checkpoints (gradient flow from
``e^{−τ}I``) a long fine-tuning run learns the unlearned modes too and the effect vanishes.
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
    real_checkpoints,
    sorted_uniform,
)
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

_EXPERIMENT = "overtraining/fig_finetuning_inflection"
_A8_FRACTION = 0.8  # η = 0.8/(4(λ_max+2)Γ): Assumption A.8 with 20% margin

# Thm 4.6: (d, instances, steps K)
_SENSITIVITY = {"quick": (4, 64, 400), "full": (10, 200, 1500)}
# Thm 4.7.1: (d, instances, steps); the ratio σ^ft/σ^pre avoids (1.8, 2.2) so that the sign
# of each increment is decided well before K (the mode has moved ≥ 10% past 2σ^pre).
_THRESHOLD = {"quick": (4, 64, 600), "full": (10, 200, 1500)}
_RATIO_GAP = (1.8, 2.2)
# Thm 4.7.2: (d, instances, steps) and the λ grid; one η for all λ (that of the largest).
_REGULARISATION = {"quick": (5, 40, 1500), "full": (8, 200, 3000)}
_REGS = (0.0, 0.5, 1.0, 2.0, 4.0)
# Caveat: (d, seeds, τ, save points); config R spectra (notes §7); η = 0.01 (notes §1.4).
# d ≥ 6 so that config R has an inflection (σ^ft_n > 2σ^pre_n first at n = 6, r = 5).
_CAVEAT = {"quick": (7, 8, 20.0, 160), "full": (10, 200, 20.0, 600)}
_CAVEAT_ETA, _CAVEAT_SHORT, _CAVEAT_LONG = 0.01, 100, 3000  # ηK = 1 and ηK = 30
_CAVEAT_BATCH = 200  # m for the finite-batch runs (notes check 21)
# Erased: every post-FT L_pre(n), n ≥ 1, within 5% of ‖A^ft − A^pre‖², while the ideal
# curve spans ≈ 100% of it (20x more); measured ≤ 2.7% at d = 10 (some seeds keep a mode
# that pretraining had suppressed below e^(−2τ) still rising at ηK = 30). Tracked: at ηK = 1
# real and ideal curves agree within 2% of the curve's range (measured 1.6% at τ = 15,
# ≤ 0.4% at τ = 20).
_ERASED_RTOL, _TRACK_RTOL = 0.05, 0.02


def _ideal_curves(pre, ft, u, v, regs, steps):
    """Post-FT (pretraining, ID, initial) losses for each λ in ``regs``: ``(len(regs), d+1)``."""
    eta = _A8_FRACTION / (4 * (max(regs) + 2) * jnp.maximum(pre[0], ft[0]))

    def at(reg):
        _, pre_loss, id_loss = ot.finetune_ideal_checkpoints(
            pre, ft, u, v, learning_rate=eta, reg=reg, num_steps=steps
        )
        return pre_loss, id_loss

    return jax.vmap(at)(jnp.asarray(regs)), eta


# ------------------------------------------------------------ Thm 4.6: progressive sensitivity


def _sensitivity_instance(key, d, steps):
    """(α, 1)-misaligned decreasing spectra: σ^pre_i = σ^ft_i/(α g_i), g_i ≥ 1 increasing."""
    k_f, k_a, k_g, k_uv, k_r, k_1 = jax.random.split(key, 6)
    ft = sorted_uniform(k_f, d, 0.3, 3.0)
    alpha = jax.random.uniform(k_a, minval=1.2, maxval=3.0)
    g = 1 + jnp.cumsum(jax.random.uniform(k_g, (d,), maxval=0.3))
    pre = ft / (alpha * g)
    pre = pre.at[0].set(ft[0] * jax.random.uniform(k_1, minval=0.5, maxval=1.5))  # free i = 1
    pre = jnp.sort(pre)[::-1]
    u, v = haar_pair(k_uv, d)
    reg = jax.random.uniform(k_r, minval=0.0, maxval=2.0)
    (pre_loss, _), eta = _ideal_curves(pre, ft, u, v, (reg,), steps)
    initial = jnp.concatenate([jnp.cumsum((pre**2)[::-1])[::-1], jnp.zeros(1)])
    delta = pre_loss[0] - initial  # Δ_pre(n), n = 0..d
    closed = ot.post_finetuning_losses(ot.fixed_point(pre, ft, reg), pre, ft)[0] - initial
    x = ot.mode_trajectory(pre, ft, learning_rate=eta, reg=reg, num_steps=steps)[-1]
    at_k = ot.post_finetuning_losses(x**2, pre, ft)[0] - initial
    gap = jnp.abs(pre - ft)
    lam0 = reg  # the theorem needs λ < λ0; λ0 → λ gives the strongest bound
    thm_bound = gap**2 / (1 + reg) ** 2 - 3 * jax.lax.cummin(gap**2) / (5 * (lam0 + 1) ** 2)
    scale = jnp.maximum(pre[0], ft[0]) ** 2
    return {
        "increments": jnp.diff(delta) / scale,
        "delta0": delta[0] / scale,
        "vs_k_steps": jnp.max(jnp.abs(delta - at_k)) / scale,
        "vs_converged": jnp.max(jnp.abs(delta - closed)) / scale,
        "thm_margin": (jnp.diff(delta) - thm_bound) / scale,
        "strict": jnp.min(jnp.diff(delta) * (1 + reg) ** 2 / gap**2),  # 1 once converged
    }


def check_progressive_sensitivity(key, scale: str) -> ClaimResult:
    """Thm 4.6 / A.24: ``Δ_pre(n) ≥ 0`` and non-decreasing in ``n`` under misalignment."""
    check_choice("check_progressive_sensitivity", "scale", scale, SCALES)
    d, count, steps = _SENSITIVITY[scale]
    with jax.enable_x64(True):
        out = vmap_instances(
            lambda k: _sensitivity_instance(k, d, steps), jax.random.split(key, count)
        )
        out = {name: np.asarray(value) for name, value in out.items()}
    return combine_results(
        compare(out["increments"], 0.0, relation="lower_bound", num_instances=count),
        compare(out["delta0"], 0.0, relation="equal", atol=1e-12, num_instances=count),
        compare(out["vs_k_steps"], 1e-10, relation="upper_bound", num_instances=count),
        compare(out["thm_margin"], 0.0, relation="lower_bound", atol=1e-12, num_instances=count),
        notes=f"measured (relative to Γ²): Δ_pre(n) − Δ_pre(n−1) from GD on the matrices (≥ 0; "
        f"min {out['increments'].min():.2e}), Δ_pre(0) = 0, |Δ_pre − per-mode recursion at K| "
        f"(≤ 1e-10; max {out['vs_k_steps'].max():.1e}), and A.24's increment bound with λ0 → λ "
        f"(≥ 0; min margin {out['thm_margin'].min():.2e}); d = {d}, {count} instances, "
        f"(α, 1)-misaligned decreasing spectra (α ~ U[1.2, 3]), λ ~ U[0, 2], K = {steps}, m = ∞. "
        f"Distance to the converged closed form Σ_(i≤n)((σ^ft_i − σ^pre_i)/(1+λ))²: max "
        f"{out['vs_converged'].max():.1e}·Γ²; increments·(1+λ)²/(σ^ft_n − σ^pre_n)² ∈ "
        f"[{out['strict'].min():.6f}, {out['strict'].max():.6f}] (1 at convergence: strict).",
    )


# --------------------------------------------------------- Thm 4.7.1: misalignment threshold


def _threshold_instance(key, d, steps):
    k_p, k_r, k_uv = jax.random.split(key, 3)
    pre = sorted_uniform(k_p, d, 0.3, 1.0)
    # ratios increasing in n (misalignment grows for late features), avoiding the gap at 2
    lo, hi = _RATIO_GAP
    raw = jnp.sort(jax.random.uniform(k_r, (d,), minval=0.3, maxval=5.0 - (hi - lo)))
    ratio = jnp.where(raw < lo, raw, raw + (hi - lo))
    ft = pre * ratio
    # σ^ft must decrease too: keep the paper's ordering by flattening σ^pre's decay
    ft = jnp.minimum(ft, jnp.concatenate([jnp.full(1, jnp.inf), ft[:-1] * 0.999]))
    ft = jax.lax.cummin(ft)
    u, v = haar_pair(k_uv, d)
    (pre_loss, _), _ = _ideal_curves(pre, ft, u, v, (0.0,), steps)
    increments = jnp.diff(pre_loss[0]) / jnp.maximum(pre[0], ft[0]) ** 2
    sign = jnp.sign(ft - 2 * pre)
    strong = ft > 4 * pre  # (4, r)-misaligned modes: increment ≥ 8(σ^pre_n)² at convergence
    return increments * sign, ft / pre, jnp.where(strong, increments, jnp.inf), strong


def check_misalignment_threshold(key, scale: str) -> ClaimResult:
    """Thm 4.7.1 / A.26 at λ = 0: ``L_pre(n) > L_pre(n−1)`` iff ``σ^ft_n > 2σ^pre_n``."""
    check_choice("check_misalignment_threshold", "scale", scale, SCALES)
    d, count, steps = _THRESHOLD[scale]
    with jax.enable_x64(True):
        signed, ratio, strong_inc, strong = map(
            np.asarray,
            vmap_instances(
                lambda k: _threshold_instance(k, d, steps), jax.random.split(key, count)
            ),
        )
    kept = (ratio <= _RATIO_GAP[0]) | (ratio >= _RATIO_GAP[1])  # ordering may move a ratio
    return compare(
        signed[kept],
        0.0,
        relation="lower_bound",
        num_instances=count,
        notes=f"measured: (L_pre(θ^n(K)) − L_pre(θ^(n−1)(K)))·sign(σ^ft_n − 2σ^pre_n)/Γ² from "
        f"GD on the matrices, λ = 0, m = ∞, K = {steps} (must be > 0: the sign flips exactly at "
        f"σ^ft_n = 2σ^pre_n; min {signed[kept].min():.2e}); d = {d}, {count} instances, "
        f"σ^pre ~ sorted U[0.3, 1], ratios σ^ft/σ^pre sorted in [0.3, 5] outside "
        f"{_RATIO_GAP} ({kept.sum()} of {kept.size} modes; the rest moved into the gap when "
        f"σ^ft was made decreasing). (4, r)-misaligned modes ({strong.sum()}): all increase, "
        f"min increment {strong_inc[strong].min():.3f}·Γ² (Thm 4.7.1; A.26's ≥ 8(σ^pre_n)² "
        "holds at convergence).",
    )


# --------------------------------------------- Thm 4.7.2: regularisation and the inflection


def _regularisation_instance(key, d, steps):
    """σ^pre decays fast, σ^ft slowly (config R-like): misalignment grows with n."""
    k_p, k_pr, k_f, k_fr, k_uv = jax.random.split(key, 5)
    pre = jax.random.uniform(k_p, minval=2.0, maxval=4.0) * jax.random.uniform(
        k_pr, minval=0.45, maxval=0.65
    ) ** jnp.arange(d)
    ft = jax.random.uniform(k_f, minval=0.5, maxval=1.5) * jax.random.uniform(
        k_fr, minval=0.85, maxval=0.97
    ) ** jnp.arange(d)
    u, v = haar_pair(k_uv, d)
    (pre_loss, id_loss), _ = _ideal_curves(pre, ft, u, v, _REGS, steps)
    inflection = ot.inflection_point(pre_loss)  # (λ,)
    closed = jax.vmap(
        lambda reg: ot.inflection_point(
            ot.post_finetuning_losses(ot.fixed_point(pre, ft, reg), pre, ft)[0]
        )
    )(jnp.asarray(_REGS))
    return inflection, closed, id_loss[:, -1] / jnp.maximum(pre[0], ft[0]) ** 2


def _regularisation_runs(key, scale):
    d, count, steps = _REGULARISATION[scale]
    with jax.enable_x64(True):
        out = vmap_instances(
            lambda k: _regularisation_instance(k, d, steps), jax.random.split(key, count)
        )
    return [np.asarray(o) for o in out], (d, count, steps)


def check_regularisation_delays_inflection(key, scale: str) -> ClaimResult:
    """Thm 4.7.2 (corrected): larger λ ⇒ later (or equal) inflection and larger ID loss."""
    check_choice("check_regularisation_delays_inflection", "scale", scale, SCALES)
    (inflection, closed, id_loss), (d, count, steps) = _regularisation_runs(key, scale)
    later = np.diff(inflection, axis=1)
    costs = np.diff(id_loss, axis=1)
    moved = np.mean(np.any(later > 0, axis=1))
    return combine_results(
        compare(later, 0.0, relation="lower_bound", num_instances=count),
        compare(costs, 0.0, relation="lower_bound", num_instances=count),
        compare(inflection, closed, relation="equal", num_instances=count),
        notes=f"measured: r(λ_(j+1)) − r(λ_j) (≥ 0) over λ ∈ {_REGS}, r from Def 4.2 on the GD "
        f"post-FT L_pre(n), n = 0..{d}; ID loss ‖θ^d(K) − A^ft‖²/Γ² increments in λ (> 0; min "
        f"{costs.min():.2e}); r equals the converged closed form's; {count} instances with "
        f"σ^pre = σ_1 r^(i−1) (σ_1 ~ U[2, 4], r ~ U[0.45, 0.65]) and σ^ft = c q^(i−1) (c ~ "
        f"U[0.5, 1.5], q ~ U[0.85, 0.97]); K = {steps}, m = ∞, one η = 0.8/(4·6Γ). The "
        f"inflection moved later for {moved:.0%} of instances (range of r: "
        f"{inflection.min()}..{inflection.max()}).",
    )


def check_regularisation_printed(key, scale: str) -> ClaimResult:
    """Thm A.25 / Lemma A.27 as printed: ``λ1 > λ2 ⇒ r_{λ1} ≤ r_{λ2}`` (earlier inflection)."""
    check_choice("check_regularisation_printed", "scale", scale, SCALES)
    (inflection, _, _), (d, count, steps) = _regularisation_runs(key, scale)
    later = np.diff(inflection, axis=1)
    result = compare(later, 0.0, relation="upper_bound", num_instances=count)
    i = int(np.argmax(later.max(axis=1)))
    return ClaimResult(
        **{**result.__dict__, "notes": f"Refuted: the inflection moves strictly later with λ "
           f"in {np.mean(np.any(later > 0, axis=1)):.0%} of {count} instances (d = {d}, "
           f"K = {steps}); e.g. instance {i}: r(λ) = {inflection[i].tolist()} for λ ∈ "
           f"{_REGS}. The proof of A.27 shows 'increase under λ1 ⇒ increase under λ2', i.e. "
           "r_λ1 ≥ r_λ2, which is also the main text's Thm 4.7.2."},
    )  # fmt: skip


# ------------------------------------------------- caveat: long fine-tuning erases the effect


def _caveat_instance(key, d, tau, points):
    k_uv, k_b = jax.random.split(key)
    pre = ot.geometric_spectrum(d, 4.0, 0.6)  # notes §7 config R
    ft = ot.geometric_spectrum(d, 1.0, 0.95)
    u, v = haar_pair(k_uv, d)
    a_pre, a_ft = ot.task_matrix(pre, u, v), ot.task_matrix(ft, u, v)
    real = real_checkpoints(pre, u, v, tau, points)

    def curve(w1s, w2s, steps, batch):
        def one(w1, w2):
            res = ot.finetune(
                w1, w2, a_ft, learning_rate=_CAVEAT_ETA, num_steps=steps, batch_size=batch,
                key=k_b,
            )  # fmt: skip
            return ot.pretraining_loss(res.w1, res.w2, a_pre)

        return jax.vmap(one)(w1s, w2s)

    ideal = jax.vmap(lambda n: ot.ideal_checkpoint(pre, n, u, v))(jnp.arange(d + 1))
    return {
        "real_long": curve(real["w1"], real["w2"], _CAVEAT_LONG, None),
        "real_short": curve(real["w1"], real["w2"], _CAVEAT_SHORT, None),
        "real_short_batch": curve(real["w1"], real["w2"], _CAVEAT_SHORT, _CAVEAT_BATCH),
        "ideal_short": curve(*ideal, _CAVEAT_SHORT, None),
        "ideal_long": curve(*ideal, _CAVEAT_LONG, None),
        "distance": jnp.sum((a_ft - a_pre) ** 2),
    }


def check_long_finetuning_erases(key, scale: str) -> ClaimResult:
    """Notes §1.4 caveat: from real checkpoints ηK = 30 sends every ``n`` to ``‖A^ft − A^pre‖²``."""
    check_choice("check_long_finetuning_erases", "scale", scale, SCALES)
    d, seeds, tau, points = _CAVEAT[scale]
    with jax.enable_x64(True):
        out = vmap_instances(
            lambda k: _caveat_instance(k, d, tau, points), jax.random.split(key, seeds)
        )
        out = {name: np.asarray(value) for name, value in out.items()}
    dist = out["distance"][:, None]
    span = np.ptp(out["ideal_short"], axis=1, keepdims=True)
    r_ideal = np.asarray(ot.inflection_point(out["ideal_short"]))
    r_real = np.asarray(ot.inflection_point(out["real_short"]))
    r_batch = np.asarray(ot.inflection_point(out["real_short_batch"]))
    # n ≥ 1: checkpoint 0 is the init e^{−τ}I itself, i.e. training A^ft from scratch, whose
    # slowest mode can still be rising at ηK = 30 (reported below).
    erased = compare(
        out["real_long"][:, 1:], dist, relation="equal", rtol=_ERASED_RTOL, num_instances=seeds
    )
    tracked = compare(
        np.abs(out["real_short"] - out["ideal_short"]) / span,
        _TRACK_RTOL,
        relation="upper_bound",
        num_instances=seeds,
    )
    same_r = compare(np.stack([r_real, r_batch]), r_ideal, relation="equal", num_instances=seeds)
    ideal_long_span = np.ptp(out["ideal_long"], axis=1) / out["distance"]
    deviation = np.abs(out["real_long"] / dist - 1)
    return combine_results(
        erased,
        tracked,
        same_r,
        notes=f"config R (σ^pre = 4·0.6^(i−1), σ^ft = 0.95^(i−1)), d = {d}, {seeds} seeds of "
        f"(U, V), real checkpoints from gradient flow at τ = {tau:g}, η = {_CAVEAT_ETA}, λ = 0. "
        f"ηK = 30: real-checkpoint L_pre(n) within {_ERASED_RTOL:.0%} of ‖A^ft − A^pre‖² for "
        f"every n ≥ 1 (max rel. dev. {deviation[:, 1:].max():.1e}; n = 0, training A^ft from "
        f"e^(−τ)I: {deviation[:, 0].max():.1e}), while the "
        f"ideal init still spans {ideal_long_span.min():.0%}..{ideal_long_span.max():.0%} of "
        f"it. ηK = 1: real vs ideal curves differ by ≤ "
        f"{np.max(np.abs(out['real_short'] - out['ideal_short']) / span):.1e} of the curve's "
        f"range (tolerance {_TRACK_RTOL}) and the inflection (ideal r = "
        f"{sorted(set(r_ideal.tolist()))}) is the same from real checkpoints with m = ∞ and "
        f"m = {_CAVEAT_BATCH}. Experiments therefore use the ideal init or ηK ≈ 1.",
    )


# ------------------------------------------------- Lemma A.23: the converged fine-tuned model

# (d, instances); K is A.10's sufficient count for the instance that needs the most steps
_A23 = {"quick": (4, 64), "full": (8, 200)}
_A23_TAU = 20.0  # real checkpoints: as far into the plateau as float64 gradient flow allows
_A23_POINTS = {"quick": 160, "full": 600}


def _a23_setting(key, d):
    """Spectra with a clear gap, Γ (eq. 12), λ < λ0, A.21's ε and A.8's η for one instance."""
    k_p, k_f, k_uv, k_r = jax.random.split(key, 4)
    pre, ft = sorted_uniform(k_p, d, 0.3, 3.0), sorted_uniform(k_f, d, 0.3, 3.0)
    u, v = haar_pair(k_uv, d)
    reg = jax.random.uniform(k_r, minval=0.0, maxval=1.0)
    reg0 = 1.01 * reg + 1e-3  # λ < λ0 (A.21(1)); λ0 close to λ gives the strongest bound
    gamma = jnp.maximum(pre[0], jnp.max(ft))
    gap2 = jnp.abs(pre - ft) ** 2
    eps = 0.99 * jnp.min(gap2) / (4000 * d * (reg0 + 1) ** 2 * gamma**2)  # A.21
    eta = _A8_FRACTION / (4 * (reg0 + 2) * gamma)  # A.21(2)
    steps = jnp.log(100 * gamma / eps) / (eta * jnp.min(jnp.minimum(pre, ft)))  # A.10
    return pre, ft, u, v, reg, reg0, gamma, eta, eps, steps


def _a23_instance(key, d, steps, points):
    pre, ft, u, v, reg, reg0, gamma, eta, _, _ = _a23_setting(key, d)
    a_ft = ot.task_matrix(ft, u, v)
    target = ot.fixed_point(pre, ft, reg)
    n_all = jnp.arange(d + 1)
    # A.23's right-hand side at checkpoint n: min over i ≤ n (n = 0: nothing learned, +inf)
    cummin = jax.lax.cummin(jnp.abs(pre - ft) ** 2)
    bound = jnp.concatenate([jnp.full(1, jnp.inf), cummin]) / (500 * (reg0 + 1) ** 2 * gamma)

    def distance(w1, w2, n):
        modes = ot.mode_matrix(w1 @ w2, u, v)
        wanted = jnp.diag(jnp.where(jnp.arange(d) < n, target, 0.0))
        return jnp.linalg.norm(modes - wanted)

    def run(w1, w2, n):
        res = ot.finetune(w1, w2, a_ft, learning_rate=eta, reg=reg, num_steps=steps)
        return distance(res.w1, res.w2, n)

    ideal = ideal_checkpoints(pre, u, v)
    real = real_checkpoints(pre, u, v, _A23_TAU, points)
    return {
        "ideal": jax.vmap(run)(*ideal, n_all),
        "real": jax.vmap(run)(real["w1"], real["w2"], n_all),
        "bound": bound,
    }


def check_converged_model(key, scale: str) -> ClaimResult:
    """Lemma A.23 (m = ∞): ``‖Uᵀθ^n(K)V − diag(target_{:n})‖_F`` within its bound."""
    check_choice("check_converged_model", "scale", scale, SCALES)
    d, count = _A23[scale]
    keys = jax.random.split(key, count)
    with jax.enable_x64(True):
        *_, gamma, eta, eps, need = jax.vmap(lambda k: _a23_setting(k, d))(keys)
        steps = int(np.ceil(np.max(np.asarray(need))))
        gamma, eta, eps = np.asarray(gamma), np.asarray(eta), np.asarray(eps)
        # A.21(5): e^(−Cτ) ≤ Γ^(1/2)ε/(1+32ηΓ)^K, i.e. Cτ ≥ this
        c_tau = steps * np.log1p(32 * eta * gamma) - np.log(np.sqrt(gamma) * eps)
        out = vmap_instances(lambda k: _a23_instance(k, d, steps, _A23_POINTS[scale]), keys)
        out = {name: np.asarray(value) for name, value in out.items()}
    bound = out["bound"][:, 1:]
    ideal_ratio, real_ratio = out["ideal"][:, 1:] / bound, out["real"][:, 1:] / bound
    eta_k = eta * steps
    return compare(
        out["ideal"][:, 1:],
        bound,
        relation="upper_bound",
        num_instances=count,
        notes=f"measured: ‖Uᵀθ^n(K)V − diag((σ^ft_i + λσ^pre_i)/(1+λ), i ≤ n; 0 else)‖_F after "
        f"K = {steps} GD steps (m = ∞) from the ideal checkpoints n = 1..d, against A.23's "
        f"min_(i≤n)|σ^pre_i − σ^ft_i|²/(500(λ0+1)²Γ); ε at A.21's limit, η at A.8 with 20% "
        f"margin, K = max over instances of A.10's log(100Γ/ε)/(η min σ) (ηK = "
        f"{eta_k.min():.0f}..{eta_k.max():.0f}); d = {d}, {count} instances (σ^pre, σ^ft ~ "
        f"sorted U[0.3, 3], λ ~ U[0, 1], λ0 = 1.01λ + 0.001). Measured/bound: max "
        f"{ideal_ratio.max():.1e}. Outside A.21: from *real* checkpoints (gradient flow from "
        f"e^(−τ)I, τ = {_A23_TAU:g}) the same K lets the unlearned modes grow back (the "
        f"caveat claim) and the bound holds in {np.mean(real_ratio <= 1):.0%} of the "
        f"(instance, n) pairs (max measured/bound {real_ratio.max():.1e}): A.21(5) asks "
        f"e^(−Cτ) ≤ Γ^(1/2)ε/(1+32ηΓ)^K, i.e. Cτ ≥ {c_tau.min():.0f}..{c_tau.max():.0f} for "
        "this K (float64 underflows below e^(−745)): like A.22, the real-checkpoint half of "
        "A.23 is not simulable in its stated regime.",
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.thm4_6.progressive_sensitivity",
        paper=f"{PAPER}, Thm 4.6 / A.24",
        statement="Under (α, 1)-misalignment (α > 1), Δ_pre(n) = L_pre(θ^n(K)) − L_pre(θ^n(0)) "
        "is ≥ 0 and non-decreasing in n, with A.24's increment bound",
        check=check_progressive_sensitivity,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_7.misalignment_threshold",
        paper=f"{PAPER}, Thm 4.7 part 1 / A.25.1, Lemma A.26",
        statement="At λ = 0 the post-FT pretraining loss rises at checkpoint n iff σ^ft_n > "
        "2σ^pre_n (sharp threshold; (4, r)-misalignment ⇒ increasing for n > r)",
        check=check_misalignment_threshold,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_7.regularisation_delays_inflection",
        paper=f"{PAPER}, Thm 4.7 part 2 (main text), proof of Lemma A.27",
        statement="Larger λ gives a later (or equal) inflection of the post-FT pretraining loss "
        "and a strictly larger ID loss ‖θ^n(K) − A^ft‖²",
        check=check_regularisation_delays_inflection,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="overtraining.thm4_7.regularisation_printed",
        paper=f"{PAPER}, Thm A.25 part 2 / Lemma A.27 (as printed)",
        statement="λ1 > λ2 ⇒ r_λ1 ≤ r_λ2 (larger λ gives an earlier or equal inflection)",
        check=check_regularisation_printed,
        expect="refuted",
    ),
    Claim(
        id="overtraining.lemma_a23.converged_model",
        paper=f"{PAPER}, Lemma A.23 under Assumption A.21 (m = ∞, ideal init)",
        statement="After K ≥ A.10's steps, ‖Uᵀθ^n(K)V − diag((σ^ft + λσ^pre)_{:n}/(1+λ))‖_F ≤ "
        "min_(i≤n)|σ^pre_i − σ^ft_i|²/(500(λ0+1)²Γ) for every checkpoint n",
        check=check_converged_model,
    ),
    Claim(
        id="overtraining.caveat.long_finetuning_erases",
        paper=f"{PAPER}, Assumption A.21(3, 5); notes §1.4 simulation caveat",
        statement="From real checkpoints, long fine-tuning (ηK = 30) drives L_pre(θ^n(K)) to "
        "‖A^ft − A^pre‖² for every n; at ηK = 1 real and ideal curves agree (m = ∞ and 200)",
        check=check_long_finetuning_erases,
        experiment="overtraining/fig_finetuning_inflection",
    ),
)
