"""Gaussian parameter perturbation and sharpness (Springer et al. 2025, Sec 4.2, App A.2, App D).

``θ̃ = (W1 + Z1)(W2 + Z2)`` with ``Z1, Z2`` i.i.d. ``N(0, γ²)`` entries; ``L̃_pre = E L_pre(θ̃)``
(eq. 13). Checkpoints are indexed ``n = 0..d`` (``n`` features learned; ``n = 0`` is the
zero model the small init approximates).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_ndim, check_nonnegative, check_positive_int

__all__ = [
    "assumption_a2_bound",
    "expected_perturbed_loss",
    "gaussian_inflection",
    "hessian_trace",
    "ideal_hessian_traces",
    "ideal_perturbed_losses",
    "inflection_point",
    "lemma_a6_gap_bound",
    "monte_carlo_perturbed_loss",
    "perturbed_increments",
]


def _square(where: str, name: str, w) -> Array:
    w = jnp.asarray(w)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"{where}: {name} must be a square (d, d) matrix, got shape {w.shape}.")
    return w


def expected_perturbed_loss(w1: ArrayLike, w2: ArrayLike, a: ArrayLike, gamma: ArrayLike) -> Array:
    r"""Exact ``E‖(W1 + Z1)(W2 + Z2) − A‖_F²`` for any ``W1, W2`` (proof of Lemma A.6, via A.5).

    .. math:: \|W_1W_2 - A\|_F^2 + d\gamma^2(\|W_1\|_F^2 + \|W_2\|_F^2) + d^3\gamma^4

    (cross terms have mean 0; ``E‖Z1 M‖² = dγ²‖M‖²`` is Lemma A.5; ``E‖Z1Z2‖² = d³γ⁴``).
    The middle term equals ``½γ² Tr∇²L_pre`` (:func:`hessian_trace`, Prop D.1); the last is
    the non-quadratic part.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(expected_perturbed_loss(jnp.eye(2), jnp.eye(2), jnp.eye(2), 0.5))
      2.5
    """
    w1 = _square("expected_perturbed_loss", "w1", w1)
    w2 = _square("expected_perturbed_loss", "w2", w2)
    check_nonnegative("expected_perturbed_loss", "gamma", gamma)
    d = w1.shape[0]
    g2 = jnp.square(jnp.asarray(gamma, dtype=w1.dtype))
    base = jnp.sum(jnp.square(w1 @ w2 - jnp.asarray(a)))
    return base + d * g2 * (jnp.sum(w1**2) + jnp.sum(w2**2)) + d**3 * g2**2


def monte_carlo_perturbed_loss(
    key: PRNGKey,
    w1: ArrayLike,
    w2: ArrayLike,
    a: ArrayLike,
    gamma: ArrayLike,
    *,
    num_samples: int,
) -> tuple[Array, Array]:
    """Monte Carlo ``E L_pre((W1 + Z1)(W2 + Z2))`` over ``num_samples`` draws: ``(mean, s.e.)``.

    The independent oracle for :func:`expected_perturbed_loss` (eq. 13 sampled directly).
    """
    w1 = _square("monte_carlo_perturbed_loss", "w1", w1)
    w2 = _square("monte_carlo_perturbed_loss", "w2", w2)
    num_samples = check_positive_int("monte_carlo_perturbed_loss", "num_samples", num_samples)
    if num_samples < 2:
        raise ValueError("monte_carlo_perturbed_loss: num_samples must be >= 2 for a s.e.")

    def one(k):
        k1, k2 = jax.random.split(k)
        z1 = gamma * jax.random.normal(k1, w1.shape, w1.dtype)
        z2 = gamma * jax.random.normal(k2, w2.shape, w2.dtype)
        return jnp.sum(jnp.square((w1 + z1) @ (w2 + z2) - a))

    losses = jax.vmap(one)(jax.random.split(key, num_samples))
    return losses.mean(), losses.std(ddof=1) / jnp.sqrt(num_samples)


def ideal_perturbed_losses(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    r"""``L̃_pre(n)`` at the ideal checkpoints ``n = 0..d`` (notes §1.3, from Lemma A.4).

    .. math:: \tilde L(n) = \sum_{i>n}\sigma_i^2 + 2d\gamma^2\sum_{i\le n}\sigma_i + d^3\gamma^4

    Examples:
      >>> import jax.numpy as jnp
      >>> ideal_perturbed_losses(jnp.array([2.0, 1.0]), 0.5).tolist()  # 2dγ² = 1 = σ_2
      [5.5, 3.5, 3.5]
    """
    spectrum = jnp.asarray(spectrum)
    check_ndim("ideal_perturbed_losses", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    g2 = jnp.square(jnp.asarray(gamma, dtype=spectrum.dtype))
    zero = jnp.zeros((1,), spectrum.dtype)
    learned = jnp.concatenate([zero, jnp.cumsum(spectrum)])
    tail = jnp.concatenate([jnp.cumsum(spectrum[::-1] ** 2)[::-1], zero])
    return tail + 2 * d * g2 * learned + d**3 * g2**2


def perturbed_increments(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    """``L̃(n) − L̃(n−1) = (2dγ² − σ_n)σ_n``, ``n = 1..d`` (Prop 4.3 / Lemma A.4).

    The paper states ``≥``; at the ideal checkpoints it is an equality (notes §1.3).
    """
    spectrum = jnp.asarray(spectrum)
    check_ndim("perturbed_increments", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    return (2 * d * jnp.square(jnp.asarray(gamma, spectrum.dtype)) - spectrum) * spectrum


def inflection_point(losses: ArrayLike) -> Array:
    """Definition 4.2: the smallest ``r`` with ``L(r) < L(r + 1)``; ``len − 1`` if there is none.

    ``losses[n]`` is the loss after the modification of checkpoint ``n`` (``n = 0..d``).
    Works on the last axis and under ``jit``/``vmap``.

    Examples:
      >>> import jax.numpy as jnp
      >>> int(inflection_point(jnp.array([5.0, 3.0, 4.0, 6.0]))), int(inflection_point(jnp.ones(3)))
      (1, 2)
    """
    losses = jnp.asarray(losses)
    up = losses[..., 1:] > losses[..., :-1]
    last = losses.shape[-1] - 1
    return jnp.where(jnp.any(up, axis=-1), jnp.argmax(up, axis=-1), last)


def gaussian_inflection(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    """Predicted inflection (Thm 4.4 with Prop 4.3): ``min{n : 2dγ² > σ_n} − 1``; ``d`` if none.

    Examples:
      >>> import jax.numpy as jnp
      >>> int(gaussian_inflection(jnp.array([4.0, 2.0, 1.0]), 0.5))  # 2dγ² = 1.5
      2
    """
    spectrum = jnp.asarray(spectrum)
    d = spectrum.shape[0]
    above = 2 * d * jnp.square(jnp.asarray(gamma, spectrum.dtype)) > spectrum
    return jnp.where(jnp.any(above), jnp.argmax(above), d)


def assumption_a2_bound(spectrum: ArrayLike, gamma: ArrayLike) -> Array:
    """Right side of Assumption A.2: ``exp(−Cτ)`` must be below this.

    ``min{σ_1/2, 1/4, σ_d² / (16 d σ_1 (2σ_1 + γ²))}``. ``C`` is not given by the paper, so
    the assumption cannot be checked directly; :func:`lemma_a6_gap_bound` is what it buys.
    """
    s = jnp.asarray(spectrum)
    d = s.shape[0]
    g2 = jnp.square(jnp.asarray(gamma, s.dtype))
    return jnp.minimum(jnp.minimum(s[0] / 2, 0.25), s[-1] ** 2 / (16 * d * s[0] * (2 * s[0] + g2)))


def lemma_a6_gap_bound(spectrum: ArrayLike) -> Array:
    """Lemma A.6: ``|L̃(θ^n(0)) − L̃(θ̄^n(0))| ≤ σ_d²/2`` (real vs ideal checkpoint, under A.2)."""
    s = jnp.asarray(spectrum)
    return s[-1] ** 2 / 2


def hessian_trace(w1: ArrayLike, w2: ArrayLike) -> Array:
    """``Tr ∇²_{W1,W2} ‖W1W2 − A‖² = 2d(‖W1‖_F² + ‖W2‖_F²)`` (notes §2, [derived]; any ``A``).

    The Hessian block in ``W1`` is ``2(W2W2ᵀ ⊗ I_d)`` (trace ``2d‖W2‖²``), in ``W2`` it is
    ``2(I_d ⊗ W1ᵀW1)`` (trace ``2d‖W1‖²``). With Prop D.1, ``½γ² Tr H`` is the quadratic part
    of the Gaussian sensitivity (:func:`expected_perturbed_loss`).

    Examples:
      >>> import jax.numpy as jnp
      >>> float(hessian_trace(jnp.eye(3), 2 * jnp.eye(3)))
      90.0
    """
    w1 = _square("hessian_trace", "w1", w1)
    w2 = _square("hessian_trace", "w2", w2)
    return 2 * w1.shape[0] * (jnp.sum(w1**2) + jnp.sum(w2**2))


def ideal_hessian_traces(spectrum: ArrayLike) -> Array:
    """``Tr H = 4d Σ_{i≤n} σ_i`` at the ideal checkpoints ``n = 0..d`` ("progressive sharpening").

    Examples:
      >>> import jax.numpy as jnp
      >>> ideal_hessian_traces(jnp.array([2.0, 1.0])).tolist()
      [0.0, 16.0, 24.0]
    """
    spectrum = jnp.asarray(spectrum)
    check_ndim("ideal_hessian_traces", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    return 4 * d * jnp.concatenate([jnp.zeros((1,), spectrum.dtype), jnp.cumsum(spectrum)])
