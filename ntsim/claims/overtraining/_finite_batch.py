"""Claims of Springer et al. 2025, App A.3: finite-batch and real-checkpoint fine-tuning.

Lemmas A.15–A.20 compare three fine-tuning dynamics (eqs. 10–11, ``λ = 0``) from checkpoint
``n``: ``W^n(k)`` from the *real* checkpoint (pretrained by gradient flow from ``e^{−τ}I``)
with minibatches ``Σ_k = X_kᵀX_k/m``; ``W̄^n(k)`` from the *ideal* checkpoint (eqs. 7–8)
with the same minibatches; ``Ŵ^n(k)`` from the ideal checkpoint with ``m = ∞`` (``Σ_k = I``).
All three are stepped together on shared batches by
:func:`ntsim.theory.overtraining.finetune_step`, and every bound is evaluated with the
quantities its proof uses, measured on the run:

* ``ε`` — the event of Lemma A.14, ``‖Σ_k − I‖_op ≤ ε`` for the steps so far (measured);
* ``exp(−Cτ)`` — the real-vs-ideal checkpoint gap ``max_j ‖W_j^n(0)Q − W̄_j^n(0)‖_op``
  (``C`` is not given; the hidden-layer symmetry ``(W1Q, QᵀW2)`` is fixed by the Procrustes
  fit ``Q``, under which GD is equivariant, so this changes no trajectory's product);
* ``Γ = max(σ^pre_1, max_i σ^ft_i)`` (eq. 12).

The lemmas' hypotheses (A.8 ``4η(λ + 2)Γ < 1``; ``ε < 1/(4(1 + 32ηΓ)^K)``) are met by the
step size ``η = 1/(320Γ)``, ``K = 20`` steps and batches of ``m = 16 000`` (``d = 4``); the
notes report how often the ``ε`` condition held. Lemma A.22 is not checked: Assumption
A.21(4) asks ``m ≳ (1 + 32ηΓ)^{2K}d/ε²`` with ``ε < min_n|σ^pre_n − σ^ft_n|²/(4000dΓ²)``,
i.e. ``m ≳ 10¹¹`` batches at ``d = 4`` — beyond any simulation; its conclusion is a
consequence of A.20 and Lemma A.11 (checked by ``overtraining.lemma_a11.fixed_point``).

All four claims read one simulation: they share ``key_id`` and a per-process cache.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, cached_per_key, compare, vmap_instances
from ntsim.claims.overtraining._common import (
    PAPER,
    haar_pair,
    ideal_checkpoints,
    random_geometric_spectrum,
    real_checkpoints,
    sorted_uniform,
)
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

# (d, instances, τ range, save points, spectrum ratio range, batch m, steps K)
_SETTING = {
    "quick": (3, 32, (12.0, 13.0), 160, (0.45, 0.6), 4000, 10),
    "full": (4, 200, (15.0, 16.0), 240, (0.45, 0.6), 16_000, 20),
}
_ETA_GAMMA = 1 / 320  # ηΓ: 16ηΓ = 0.05, 32ηΓ = 0.1 per step; A.8 needs ηΓ < 1/8
_KEY_ID = "overtraining.lemma_a20.finite_batch_runs"


def _op(a):
    return jnp.linalg.norm(a, 2)


def _pair_gap(w, w_other):
    return jnp.maximum(_op(w[0] - w_other[0]), _op(w[1] - w_other[1]))


def _instance(key, d, taus, points, ratios, batch, steps):
    k_s, k_ft, k_uv, k_tau, k_n, k_batch = jax.random.split(key, 6)
    spectrum = random_geometric_spectrum(k_s, d, ratios)
    spectrum_ft = sorted_uniform(k_ft, d, 0.5, 4.0)
    u, v = haar_pair(k_uv, d)
    tau = jax.random.uniform(k_tau, minval=taus[0], maxval=taus[1])
    n = jax.random.randint(k_n, (), 1, d)  # a checkpoint with learned and unlearned modes
    gamma = jnp.maximum(spectrum[0], spectrum_ft.max())
    eta = _ETA_GAMMA / gamma
    a_ft = ot.task_matrix(spectrum_ft, u, v)

    real = real_checkpoints(spectrum, u, v, tau, points)
    w1_bar, w2_bar = (w[n] for w in ideal_checkpoints(spectrum, u, v))
    w1, w2 = real["w1"][n], real["w2"][n]
    p, _, rt = jnp.linalg.svd(w1.T @ w1_bar)
    q = p @ rt  # Procrustes: the hidden-unit basis of the real checkpoint that fits W̄1
    w1, w2 = w1 @ q, q.T @ w2
    gap0 = _pair_gap((w1, w2), (w1_bar, w2_bar))

    def step(state, k):
        real, ideal, infinite = state
        x = jax.random.normal(k, (batch, d), a_ft.dtype)
        cov = x.T @ x / batch

        def move(w, c):  # θ_0 is irrelevant at λ = 0
            return ot.finetune_step(*w, a_ft, w[0] @ w[1], learning_rate=eta, cov=c)

        one_step = _pair_gap(move(ideal, cov), move(ideal, None))  # A.15: same start
        real, ideal, infinite = move(real, cov), move(ideal, cov), move(infinite, None)
        norms = jnp.max(jnp.asarray([_op(w) for pair in (real, ideal, infinite) for w in pair]))
        record = {
            "batch_error": _op(cov - jnp.eye(d)),
            "one_step": one_step,
            "finite_vs_infinite": _pair_gap(ideal, infinite),
            "real_vs_ideal": _pair_gap(real, ideal),
            "real_vs_infinite": _pair_gap(real, infinite),
            "max_norm": norms,
        }
        return (real, ideal, infinite), record

    start = ((w1, w2), (w1_bar, w2_bar), (w1_bar, w2_bar))
    _, records = jax.lax.scan(step, start, jax.random.split(k_batch, steps))
    return {**records, "gap0": gap0, "gamma": gamma, "eta": eta}


@cached_per_key(maxsize=4)
def _runs(key, scale: str) -> dict:
    d, count, taus, points, ratios, batch, steps = _SETTING[scale]
    with jax.enable_x64(True):
        out = vmap_instances(
            lambda k: _instance(k, d, taus, points, ratios, batch, steps),
            jax.random.split(key, count),
        )
        out = {name: np.asarray(value) for name, value in out.items()}
    eta_gamma = (out["eta"] * out["gamma"])[:, None]
    k = np.arange(1, steps + 1)[None, :]
    eps = np.maximum.accumulate(out["batch_error"], axis=1)  # the event up to step k
    sqrt_gamma = np.sqrt(out["gamma"])[:, None]
    out["bound_one_step"] = 32 * eta_gamma * out["batch_error"] * sqrt_gamma
    out["bound_finite_vs_infinite"] = ((1 + 16 * eta_gamma) ** k - 1) * 2 * eps * sqrt_gamma
    out["bound_real_vs_ideal"] = (1 + 32 * eta_gamma) ** k * out["gap0"][:, None]
    out["bound_real_vs_infinite"] = (
        out["bound_real_vs_ideal"] + 2 * (1 + 16 * eta_gamma) ** k * sqrt_gamma * eps
    )
    out["hypothesis"] = eps[:, -1] < 1 / (4 * (1 + 32 * eta_gamma[:, 0]) ** steps)
    out["setting"] = (d, count, batch, steps)
    return out


def _setting_notes(out) -> str:
    d, count, batch, steps = out["setting"]
    return (
        f"d = {d}, {count} instances (random σ^pre geometric, σ^ft ~ U[0.5, 4], Haar U, V, "
        f"checkpoint n ~ U{{1..d−1}}, τ as in the real-checkpoint claims), λ = 0, "
        f"η = 1/(320Γ), K = {steps} steps, batches m = {batch}; ε (max ‖Σ_k − I‖_op) ∈ "
        f"[{out['batch_error'].max(1).min():.3f}, {out['batch_error'].max(1).max():.3f}], "
        f"hypothesis ε < 1/(4(1 + 32ηΓ)^K) met in {out['hypothesis'].mean():.0%} of "
        f"instances; real-vs-ideal checkpoint gap (for exp(−Cτ)) ∈ "
        f"[{out['gap0'].min():.1e}, {out['gap0'].max():.1e}]"
    )


def _check(key, scale: str, name: str, lemma: str) -> ClaimResult:
    check_choice(f"check_{lemma}", "scale", scale, SCALES)
    out = _runs(key, scale)
    measured, bound = out[name], out[f"bound_{name}"]
    ratio = measured / bound
    return compare(
        ratio.max(axis=1),
        1.0,
        relation="upper_bound",
        num_instances=ratio.shape[0],
        notes=f"measured: max over steps k of ‖·‖_op / bound per instance (max "
        f"{ratio.max():.2g}, median {np.median(ratio.max(axis=1)):.2g}); "
        + _setting_notes(out)
        + ".",
    )


def check_one_step(key, scale: str) -> ClaimResult:
    """Lemma A.15: one step from the same ``W``, finite vs infinite batch, ≤ 32ηε_kΓ^{3/2}."""
    return _check(key, scale, "one_step", "one_step")


def check_finite_vs_infinite(key, scale: str) -> ClaimResult:
    """Lemma A.17: ``‖Ŵ(k) − W̄(k)‖_op ≤ ((1 + 16ηΓ)^k − 1)·2εΓ^{1/2}`` (ideal init)."""
    return _check(key, scale, "finite_vs_infinite", "finite_vs_infinite")


def check_real_vs_ideal(key, scale: str) -> ClaimResult:
    """Lemma A.19: ``‖W^n(k) − W̄^n(k)‖_op ≤ (1 + 32ηΓ)^k·‖W^n(0) − W̄^n(0)‖_op``."""
    return _check(key, scale, "real_vs_ideal", "real_vs_ideal")


def check_three_dynamics(key, scale: str) -> ClaimResult:
    """Lemma A.20: real finite-batch vs ideal infinite-batch, and all stay well-conditioned."""
    check_choice("check_three_dynamics", "scale", scale, SCALES)
    out = _runs(key, scale)
    bound = _check(key, scale, "real_vs_infinite", "three_dynamics")
    conditioning = out["max_norm"].max(axis=1) / (2 * np.sqrt(out["gamma"]))
    return compare(
        np.concatenate([bound.measured, conditioning]),
        1.0,
        relation="upper_bound",
        num_instances=bound.num_instances,
        notes=bound.notes[:-1] + f"; then max_k ‖W‖_op/(2√Γ) of all three dynamics "
        f"('well-conditioned', max {conditioning.max():.2f}).",
    )


def _claim(aspect: str, lemma: str, statement: str, check) -> Claim:
    return Claim(
        id=f"overtraining.{lemma}.{aspect}",
        paper=f"{PAPER}, Lemma A.{lemma.removeprefix('lemma_a')} (App A.3)",
        statement=statement,
        check=check,
        key_id=_KEY_ID,
    )


CLAIMS: tuple[Claim, ...] = (
    _claim(
        "one_step_batch_gap",
        "lemma_a15",
        "One fine-tuning step from the same W with a minibatch vs m = ∞ differs by "
        "≤ 32ηεΓ^{3/2} in operator norm",
        check_one_step,
    ),
    _claim(
        "finite_vs_infinite_batch",
        "lemma_a17",
        "From the ideal checkpoint, minibatch and m = ∞ fine-tuning stay within "
        "((1 + 16ηΓ)^k − 1)·2εΓ^{1/2}",
        check_finite_vs_infinite,
    ),
    _claim(
        "real_vs_ideal_growth",
        "lemma_a19",
        "Fine-tuning from the real and the ideal checkpoint on the same batches: the gap grows "
        "at most like (1 + 32ηΓ)^k times the checkpoint gap",
        check_real_vs_ideal,
    ),
    _claim(
        "three_dynamics",
        "lemma_a20",
        "Real minibatch vs ideal m = ∞ fine-tuning: ≤ (1 + 32ηΓ)^k e^{−Cτ} + "
        "2(1 + 16ηΓ)^k Γ^{1/2}ε, all dynamics well-conditioned (‖W‖_op ≤ 2√Γ)",
        check_three_dynamics,
    ),
)
