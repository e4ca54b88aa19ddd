"""Finite-batch and real-checkpoint fine-tuning (Springer et al. 2025, App A.3, Lemmas A.15–A.20).

Three fine-tuning dynamics (eqs. 10–11, ``λ = 0``) from checkpoint ``n``, stepped together
on shared batches by :func:`~ntsim.theory.overtraining.finetune_step`: ``W^n(k)`` from the
*real* checkpoint (gradient flow from ``e^{−τ}I``) with minibatch covariances
``Σ_k = X_kᵀX_k/m``; ``W̄^n(k)`` from the *ideal* checkpoint (eqs. 7–8) with the same
minibatches; ``Ŵ^n(k)`` from the ideal checkpoint with ``m = ∞`` (``Σ_k = I``). The bounds
are evaluated with the quantities their proofs use, measured on the run: ``ε`` (the event
of Lemma A.14, ``‖Σ_k − I‖_op ≤ ε`` up to step ``k``), ``exp(−Cτ)`` (the checkpoint gap
``max_j ‖W_j^n(0)Q − W̄_j^n(0)‖_op``, ``C`` not given; ``Q`` the Procrustes fit, under which
GD is equivariant) and ``Γ = max(σ^pre_1, max σ^ft)`` (eq. 12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.theory.overtraining._finetuning import finetune_step
from ntsim.theory.overtraining._instances import (
    haar_pair,
    ideal_checkpoints,
    random_geometric_spectrum,
    sorted_uniform,
)
from ntsim.theory.overtraining._pretraining import task_matrix
from ntsim.theory.overtraining._pretraining_runs import _real_checkpoints

__all__ = [
    "FiniteBatchRun",
    "FiniteBatchSetting",
    "lemma_a15_bound",
    "lemma_a16_growth",
    "lemma_a17_bound",
    "lemma_a18_growth",
    "lemma_a19_bound",
    "lemma_a20_bound",
    "simulate_finite_batch",
]


def lemma_a15_bound(eta: ArrayLike, gamma: ArrayLike, eps: ArrayLike) -> Array:
    """Lemma A.15: one step from the same ``W``, batch vs ``m = ∞``: ``32ηεΓ^{3/2}``."""
    return 32 * eta * eps * jnp.asarray(gamma) ** 1.5


def lemma_a16_growth(eta: ArrayLike, gamma: ArrayLike) -> Array:
    """Lemma A.16: one ``m = ∞`` step from two ideal-init parameters grows their gap by at
    most ``1 + 16ηΓ``; with Lemma A.15 the proof of A.17 gets ``ε_{k+1} ≤ (1 + 16ηΓ)ε_k +
    32ηϵΓ^{3/2}``."""
    return 1 + 16 * eta * jnp.asarray(gamma)


def lemma_a18_growth(eta: ArrayLike, gamma: ArrayLike) -> Array:
    """Lemma A.18: one step on the same minibatch from two parameters grows their gap by at
    most ``1 + 32ηΓ``."""
    return 1 + 32 * eta * jnp.asarray(gamma)


def lemma_a17_bound(eta: ArrayLike, gamma: ArrayLike, eps: ArrayLike, k: ArrayLike) -> Array:
    """Lemma A.17 (the proof's recursion): ``((1 + 16ηΓ)^k − 1)·2εΓ^{1/2}``.

    The lemma prints ``2(1 + 16ηΓ)^k εΓ^{1/2}``; this is that minus ``2εΓ^{1/2}``, exact at
    ``k = 0`` (both dynamics start equal) and implying the printed bound.
    """
    return ((1 + 16 * eta * gamma) ** k - 1) * 2 * eps * jnp.sqrt(gamma)


def lemma_a19_bound(eta: ArrayLike, gamma: ArrayLike, gap0: ArrayLike, k: ArrayLike) -> Array:
    """Lemma A.19: ``(1 + 32ηΓ)^k · ‖W^n(0) − W̄^n(0)‖_op`` (real vs ideal, same batches)."""
    return (1 + 32 * eta * gamma) ** k * gap0


def lemma_a20_bound(
    eta: ArrayLike, gamma: ArrayLike, gap0: ArrayLike, eps: ArrayLike, k: ArrayLike
) -> Array:
    """Lemma A.20: ``(1 + 32ηΓ)^k e^{−Cτ} + 2(1 + 16ηΓ)^k Γ^{1/2} ε`` (real minibatch vs ideal
    ``m = ∞``), with ``e^{−Cτ}`` the measured checkpoint gap."""
    return (
        lemma_a19_bound(eta, gamma, gap0, k)
        + 2 * (1 + 16 * eta * gamma) ** k * jnp.sqrt(gamma) * eps
    )


@dataclass(frozen=True)
class FiniteBatchSetting:
    """Sizes (the paper gives none): ``η = eta_gamma/Γ``; A.8 needs ``ηΓ < 1/8``.

    Instances: ``σ^pre`` geometric (``σ_1 ~ U[2, 4]``, ``r ~ U[ratios]``), ``σ^ft ~`` sorted
    ``U[0.5, 4]``, Haar ``U, V``, ``τ ~ U[tau]``, checkpoint ``n ~ U{1..d−1}``.
    """

    d: int = 3
    instances: int = 32
    tau: tuple[float, float] = (12.0, 13.0)
    points: int = 160
    ratios: tuple[float, float] = (0.45, 0.6)
    batch: int = 4000
    steps: int = 10
    eta_gamma: float = 1 / 320

    def __post_init__(self):
        check_int_fields(self, ("d", "instances", "batch", "steps"))
        check_int_fields(self, ("points",), minimum=2)
        if self.d < 2:
            raise ValueError("FiniteBatchSetting: d must be >= 2 (a checkpoint 0 < n < d).")
        if not 0 < self.eta_gamma < 1 / 8:
            raise ValueError("FiniteBatchSetting: Assumption A.8 needs 0 < ηΓ < 1/8.")


class FiniteBatchRun(NamedTuple):
    """Per instance and step ``k = 1..K`` (operator norms, max over the two factors)."""

    batch_error: Array  # (instances, K): ‖Σ_k − I‖_op
    one_step: Array  # (instances, K): one step from W̄(k−1), batch vs m = ∞ (Lemma A.15)
    finite_vs_infinite: Array  # (instances, K): W̄(k) vs Ŵ(k) (Lemma A.17)
    real_vs_ideal: Array  # (instances, K): W(k) vs W̄(k) (Lemma A.19)
    real_vs_infinite: Array  # (instances, K): W(k) vs Ŵ(k) (Lemma A.20)
    infinite_step: Array  # (instances, K): one m = ∞ step from W̄(k−1) and Ŵ(k−1) (A.16)
    max_norm: Array  # (instances, K): largest ‖·‖_op of the six factors
    gap0: Array  # (instances,): checkpoint gap after the Procrustes fit
    rebase_error: Array  # (instances,): ‖W1Q·QᵀW2 − W1W2‖_op/‖W1W2‖_op (0 to round-off)
    gamma: Array  # (instances,) Γ
    eta: Array  # (instances,) η
    d: Array  # (instances,) int: the dimension (the same for all)
    batch: Array  # (instances,) int: the batch size m (the same for all)


def _op(a):
    return jnp.linalg.norm(a, 2)


def _pair_gap(w, w_other):
    return jnp.maximum(_op(w[0] - w_other[0]), _op(w[1] - w_other[1]))


def simulate_finite_batch(key: PRNGKey, setting: FiniteBatchSetting) -> FiniteBatchRun:
    """The three dynamics of App A.3 on shared Gaussian batches (module doc)."""
    check_setting_type("simulate_finite_batch", setting, FiniteBatchSetting)
    check_key("simulate_finite_batch", key)
    s = setting
    d = s.d

    def one(k):
        k_s, k_ft, k_uv, k_tau, k_n, k_batch = jax.random.split(k, 6)
        spectrum = random_geometric_spectrum(k_s, d, s.ratios)
        spectrum_ft = sorted_uniform(k_ft, d, 0.5, 4.0)
        u, v = haar_pair(k_uv, d)
        tau = jax.random.uniform(k_tau, minval=s.tau[0], maxval=s.tau[1])
        n = jax.random.randint(k_n, (), 1, d)
        gamma = jnp.maximum(spectrum[0], spectrum_ft.max())
        eta = s.eta_gamma / gamma
        a_ft = task_matrix(spectrum_ft, u, v)
        w1s, w2s, _, _ = _real_checkpoints(spectrum, u, v, tau, s.points)
        w1_bar, w2_bar = (w[n] for w in ideal_checkpoints(spectrum, u, v))
        w1, w2 = w1s[n], w2s[n]
        p, _, rt = jnp.linalg.svd(w1.T @ w1_bar)
        q = p @ rt  # the hidden-unit basis of the real checkpoint that fits W̄1
        product = w1 @ w2
        w1, w2 = w1 @ q, q.T @ w2
        rebase_error = _op(w1 @ w2 - product) / _op(product)  # Q is a symmetry of the model
        gap0 = _pair_gap((w1, w2), (w1_bar, w2_bar))

        def step(state, kk):
            real, ideal, infinite = state
            x = jax.random.normal(kk, (s.batch, d), a_ft.dtype)
            cov = x.T @ x / s.batch

            def move(w, c):  # θ_0 is irrelevant at λ = 0
                return finetune_step(*w, a_ft, w[0] @ w[1], learning_rate=eta, cov=c)

            one_step = _pair_gap(move(ideal, cov), move(ideal, None))
            infinite_step = _pair_gap(move(ideal, None), move(infinite, None))
            real, ideal, infinite = move(real, cov), move(ideal, cov), move(infinite, None)
            norms = jnp.max(jnp.asarray([_op(w) for pair in (real, ideal, infinite) for w in pair]))
            record = (
                _op(cov - jnp.eye(d)), one_step, _pair_gap(ideal, infinite),
                _pair_gap(real, ideal), _pair_gap(real, infinite), infinite_step, norms,
            )  # fmt: skip
            return (real, ideal, infinite), record

        start = ((w1, w2), (w1_bar, w2_bar), (w1_bar, w2_bar))
        _, records = jax.lax.scan(step, start, jax.random.split(k_batch, s.steps))
        return (*records, gap0, rebase_error, gamma, eta, jnp.asarray(d), jnp.asarray(s.batch))

    return FiniteBatchRun(*jax.vmap(one)(jax.random.split(key, s.instances)))
