r"""KRR reduction and spectral results of Rahimi Afzal et al. (2025): KRR, Thms 5–7.

**KRR reduction** ("fine-tuning can be defined as RKHS"). The linearised model
``f̄_θ = f_{θ_0} + J_0(θ − θ_0)`` trained by the flow ``θ̇ = −∇(c‖f̄_θ(x*) − y*‖²) − λ(θ − θ_0)``
converges to kernel ridge regression on the *residual* targets ``ỹ = y* − f_{θ_0}(x*)``
with ridge ``σ = λ/(2c)``: ``σ = λ/2`` for the summed loss (``c = 1``), ``σ = nλ/2`` for the
mean loss (``c = 1/n``). The slides print ``σ = λ/2`` with the mean loss and ``y*`` for
``ỹ`` (no ``f_{θ_0}`` offset): :func:`ridge_from_proximal` takes the convention explicitly,
:func:`ridge_from_proximal_printed` is the literal slide.

Closed forms (summed loss, constant ``λ``; derived here, not printed): with ``r(t) = y(t) − y*``,

.. math::

   r(t) &= [I - 2K(2K + λI)^{-1}(I - e^{-(2K+λI)t})]\, r_0, \qquad r(∞) = σ(K + σI)^{-1} r_0,\\
   \bar θ_∞ - θ_0 &= J_0ᵀ(K + σI)^{-1} ỹ, \qquad
   ‖\bar θ_∞ - θ_0‖^2 = ỹᵀ(K + σI)^{-1}K(K + σI)^{-1}ỹ .

**Thm 5** ``(σ‖ỹ‖/(σ + λ_max))² ≤ R = ‖σ(K + σI)^{-1}ỹ‖² ≤ (σ‖ỹ‖/(σ + λ_min))²``.
**Thm 6** ``(1 − η)λ_i(K) ≤ λ_i(K + S) ≤ (1 + η)λ_i(K)``, ``η = ‖K^{−1/2}SK^{−1/2}‖``
(and ``λ_i(K + S) ≥ λ_i(K)`` since ``S ⪰ 0``).
**Thm 7** ``q/a ≤ (R(K + S)/R(K))^{1/2} ≤ a q`` with ``q = λ_max(K+S+σI)/λ_max(K+σI)``,
``a = c/(1 − η)²``, ``κ(K + σI) ≤ c``, ``η < 1``. The slide's proof prints ``λ_min`` in the
last denominator of the bound on ``R(K + S)^{1/2}`` (:func:`thm7_step_bounds`, ``printed``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ntsim._checks import require_finite, require_psd_spectrum
from ntsim._types import Array, ArrayLike
from ntsim._validation import _is_concrete, check_choice, check_nonnegative, check_positive_int

__all__ = [
    "RIDGE_CONVENTIONS",
    "SpectralBounds",
    "krr_train_risk",
    "perturbation_size",
    "residual_path",
    "ridge_from_proximal",
    "ridge_from_proximal_printed",
    "thm5_bounds",
    "thm5_bounds_printed",
    "thm6_bounds",
    "thm7_bounds",
    "thm7_step_bounds",
    "weight_distance_limit",
]

#: Loss normalisations accepted by :func:`ridge_from_proximal`.
RIDGE_CONVENTIONS = ("sum", "mean")


def ridge_from_proximal(proximal: ArrayLike, *, convention: str, num_examples: int) -> Array:
    """``σ = λ/(2c)``: ``λ/2`` for ``R̃ = Σ(f − y)²`` (``"sum"``), ``nλ/2`` for ``(1/n)Σ``.

    The KRR ridge that the linearised flow with proximal ``λ`` converges to (module doc).

    Examples:
      >>> float(ridge_from_proximal(2.0, convention="mean", num_examples=10))
      10.0
    """
    check_choice("ridge_from_proximal", "convention", convention, RIDGE_CONVENTIONS)
    n = check_positive_int("ridge_from_proximal", "num_examples", num_examples)
    lam = jnp.asarray(proximal)
    return lam / 2 if convention == "sum" else n * lam / 2


def ridge_from_proximal_printed(proximal: ArrayLike) -> Array:
    """The slides' ``σ = λ/2`` (stated with the ``(1/n)`` mean loss; correct only for the sum)."""
    return jnp.asarray(proximal) / 2


def _eigh(kernel: ArrayLike, where: str = "linearization") -> tuple[Array, Array]:
    """Eigenpairs of the kernel, eigenvalues clipped at 0 after a PSD check.

    The checks run on concrete kernels only: these closed forms are evaluated inside the
    falsifier's gradient search (``ntsim.falsify``), where a check per step would sit in
    the search's inner loop; a traced caller validates its kernels at its own entry.
    """
    k = jnp.asarray(kernel)
    if k.ndim == 2 and k.shape[0] == k.shape[1] and _is_concrete(k):
        require_finite(where, "kernel", k)
        if not np.allclose(np.asarray(k), np.asarray(k).T, rtol=1e-6, atol=0):
            raise ValueError("linearization: kernel must be symmetric (K = JJᵀ).")
    if k.ndim != 2 or k.shape[0] != k.shape[1]:
        raise ValueError(f"linearization: kernel must be a square (n, n) matrix, got {k.shape}.")
    evals, evecs = jnp.linalg.eigh((k + k.T) / 2)
    if _is_concrete(evals):
        fix = " A kernel JJᵀ is PSD: check how it was built."
        require_psd_spectrum(where, "kernel", evals, fix=fix)
    return jnp.maximum(evals, 0), evecs


def residual_path(
    kernel: ArrayLike, residual0: ArrayLike, proximal: ArrayLike, times: ArrayLike
) -> Array:
    r"""``r(t) = [I − 2K(2K + λI)^{−1}(I − e^{−(2K+λI)t})] r_0`` for each ``t`` (derived).

    The residual ``f̄_{θ̄_t}(x*) − y*`` of the linearised model under the flow
    ``θ̇ = −∇R̃ − λ(θ − θ_0)`` (summed loss, constant ``λ``), eigenmode by eigenmode:
    mode ``μ_i`` goes from ``r_{0,i}`` to ``r_{0,i}·σ/(μ_i + σ)``, ``σ = λ/2``, monotonically.

    Returns:
      ``(T, n)`` for 1-D ``times`` (``(n,)`` for a scalar).
    """
    check_nonnegative("residual_path", "proximal", proximal)
    check_nonnegative("residual_path", "times", times)
    evals, evecs = _eigh(kernel, "residual_path")
    lam = jnp.asarray(proximal, evals.dtype)
    t = jnp.asarray(times, evals.dtype)
    rate = 2 * evals + lam
    zero = rate == 0
    safe = jnp.where(zero, 1.0, rate)
    # 2μ/(2μ + λ)(1 − e^{−(2μ+λ)t}); the factor vanishes for μ = 0 (then rate = λ or 0).
    factor = jnp.where(zero, 0.0, 2 * evals / safe) * -jnp.expm1(-rate * t[..., None])
    coeff = evecs.T @ jnp.asarray(residual0, evals.dtype)
    return ((1 - factor) * coeff) @ evecs.T


def weight_distance_limit(kernel: ArrayLike, targets: ArrayLike, ridge: ArrayLike) -> Array:
    r"""``‖θ̄_∞ − θ_0‖ = (ỹᵀ(K + σI)^{−1}K(K + σI)^{−1}ỹ)^{1/2}`` (derived; decreasing in σ)."""
    check_nonnegative("weight_distance_limit", "ridge", ridge)
    evals, evecs = _eigh(kernel, "weight_distance_limit")
    coeff = evecs.T @ jnp.asarray(targets, evals.dtype)
    sigma = jnp.asarray(ridge, evals.dtype)
    return jnp.sqrt(jnp.sum(evals * coeff**2 / (evals + sigma) ** 2))


def krr_train_risk(kernel: ArrayLike, targets: ArrayLike, ridge: ArrayLike) -> Array:
    r"""``R = ‖(I − K(K + σI)^{−1})ỹ‖² = ‖σ(K + σI)^{−1}ỹ‖²`` (Thm 5's risk, summed)."""
    check_nonnegative("krr_train_risk", "ridge", ridge)
    evals, evecs = _eigh(kernel, "krr_train_risk")
    if jnp.shape(targets) != evals.shape:
        raise ValueError(
            f"krr_train_risk: targets must have shape {evals.shape} to match the kernel, got "
            f"{jnp.shape(targets)}."
        )
    coeff = evecs.T @ jnp.asarray(targets, evals.dtype)
    sigma = jnp.asarray(ridge, evals.dtype)
    return jnp.sum((sigma * coeff / (evals + sigma)) ** 2)


class SpectralBounds(NamedTuple):
    """A two-sided bound ``lower ≤ value ≤ upper``."""

    lower: Array
    value: Array
    upper: Array


def thm5_bounds(kernel: ArrayLike, targets: ArrayLike, ridge: ArrayLike) -> SpectralBounds:
    r"""Thm 5: ``(σ‖ỹ‖/(σ + λ_max))² ≤ R ≤ (σ‖ỹ‖/(σ + λ_min))²`` with ``R`` the KRR risk.

    Rahimi Afzal et al. (2025), Thm 5, read with the residual targets ``ỹ`` and the summed
    risk (erratum: the proof's ``1/n`` is dropped, ``y*`` means ``ỹ``).
    """
    check_nonnegative("thm5_bounds", "ridge", ridge)
    evals, _ = _eigh(kernel, "thm5_bounds")
    norm = jnp.linalg.norm(jnp.asarray(targets, evals.dtype))
    sigma = jnp.asarray(ridge, evals.dtype)
    risk = krr_train_risk(kernel, targets, ridge)
    return SpectralBounds(
        (sigma * norm / (sigma + evals[-1])) ** 2, risk, (sigma * norm / (sigma + evals[0])) ** 2
    )


def thm5_bounds_printed(
    kernel: ArrayLike, targets: ArrayLike, f0: ArrayLike, ridge: ArrayLike
) -> SpectralBounds:
    r"""Thm 5 as printed: bounds with ``‖y*‖`` for the risk of the fine-tuned linear model.

    The value is the training risk ``‖f̄_∞(x*) − y*‖² = ‖σ(K + σI)^{−1}(y* − f_{θ_0}(x*))‖²``;
    the bounds use ``‖y*‖`` (slides) instead of ``‖y* − f_{θ_0}(x*)‖``. Wrong whenever the
    pretrained outputs ``f0`` are not 0.
    """
    evals, _ = _eigh(kernel)
    y = jnp.asarray(targets, evals.dtype)
    residual = y - jnp.asarray(f0, evals.dtype)
    sigma = jnp.asarray(ridge, evals.dtype)
    norm = jnp.linalg.norm(y)
    risk = krr_train_risk(kernel, residual, ridge)
    return SpectralBounds(
        (sigma * norm / (sigma + evals[-1])) ** 2, risk, (sigma * norm / (sigma + evals[0])) ** 2
    )


def perturbation_size(kernel: ArrayLike, extra: ArrayLike) -> Array:
    r"""``η = ‖K^{−1/2} S K^{−1/2}‖`` (Thm 6; ``K ≻ 0`` needed, ``S ⪰ 0``)."""
    evals, evecs = _eigh(kernel)
    if _is_concrete(evals) and not float(np.asarray(evals)[0]) > 0:
        raise ValueError(
            "perturbation_size: kernel must be positive definite (η = ‖K^{-1/2}SK^{-1/2}‖ "
            f"needs K ≻ 0), got smallest eigenvalue {float(np.asarray(evals)[0]):.3g}."
        )
    inv_sqrt = evecs * (1 / jnp.sqrt(evals))
    m = inv_sqrt.T @ jnp.asarray(extra, evals.dtype) @ inv_sqrt
    return jnp.max(jnp.abs(jnp.linalg.eigvalsh((m + m.T) / 2)))


class Thm6Bounds(NamedTuple):
    """Thm 6 for every eigenvalue index ``i`` (ascending order)."""

    lower: Array  # (1 − η) λ_i(K)
    value: Array  # λ_i(K + S)
    upper: Array  # (1 + η) λ_i(K)
    base: Array  # λ_i(K)
    eta: Array


def thm6_bounds(kernel: ArrayLike, extra: ArrayLike) -> Thm6Bounds:
    r"""Thm 6: ``(1 − η)λ_i(K) ≤ λ_i(K + S) ≤ (1 + η)λ_i(K)`` (Rahimi Afzal et al. 2025)."""
    k = jnp.asarray(kernel)
    s = jnp.asarray(extra, k.dtype)
    if s.shape != k.shape:
        raise ValueError(
            f"thm6_bounds: extra must have the kernel's shape {k.shape}, got {s.shape}."
        )
    base = jnp.linalg.eigvalsh((k + k.T) / 2)
    value = jnp.linalg.eigvalsh((k + s + (k + s).T) / 2)
    eta = perturbation_size(k, s)
    return Thm6Bounds((1 - eta) * base, value, (1 + eta) * base, base, eta)


def thm7_bounds(kernel: ArrayLike, extra: ArrayLike, targets: ArrayLike, ridge: ArrayLike):
    r"""Thm 7: ``q/a ≤ (R(K+S)/R(K))^{1/2} ≤ a q`` with ``c = κ(K + σI)``, ``a = c/(1 − η)²``.

    Rahimi Afzal et al. (2025), Thm 7 (valid for ``η < 1``; the bounds are returned for any
    ``η`` and are meaningless for ``η ≥ 1``). Also returns ``η``.

    Returns:
      bounds (SpectralBounds): ``q/a ≤ (R(K+S)/R(K))^{1/2} ≤ a q`` as ``(lower, value, upper)``.
      eta (Array): ``η = ‖K^{−1/2} S K^{−1/2}‖`` (:func:`perturbation_size`).
    """
    k = jnp.asarray(kernel)
    s = jnp.asarray(extra, k.dtype)
    sigma = jnp.asarray(ridge, k.dtype)
    evals_k = jnp.linalg.eigvalsh((k + k.T) / 2)
    evals_ks = jnp.linalg.eigvalsh((k + s + (k + s).T) / 2)
    eta = perturbation_size(k, s)
    c = (evals_k[-1] + sigma) / (jnp.maximum(evals_k[0], 0) + sigma)
    a = c / (1 - eta) ** 2
    q = (evals_ks[-1] + sigma) / (evals_k[-1] + sigma)
    ratio = jnp.sqrt(krr_train_risk(k + s, targets, ridge) / krr_train_risk(k, targets, ridge))
    return SpectralBounds(q / a, ratio, a * q), eta


def thm7_step_bounds(
    kernel: ArrayLike, extra: ArrayLike, targets: ArrayLike, ridge: ArrayLike, *, printed: bool
) -> SpectralBounds:
    r"""The proof's bound on ``R(θ∪θ̂)^{1/2}`` (the risk with ``K + S``):

    .. math:: \frac{σ‖ỹ‖}{(1 + η)λ_{max}(K + σI)} ≤ R(θ∪\hat θ)^{1/2}
       ≤ \frac{σ‖ỹ‖κ}{(1 - η)λ_{max}(K + σI)}

    with ``κ = κ(K + σI)``; ``printed=True`` puts the slide's ``λ_min(K + σI)`` in the last
    denominator (a weaker, still valid, upper bound).
    """
    k = jnp.asarray(kernel)
    s = jnp.asarray(extra, k.dtype)
    sigma = jnp.asarray(ridge, k.dtype)
    evals_k = jnp.linalg.eigvalsh((k + k.T) / 2)
    eta = perturbation_size(k, s)
    lam_max, lam_min = evals_k[-1] + sigma, jnp.maximum(evals_k[0], 0) + sigma
    kappa = lam_max / lam_min
    norm = jnp.linalg.norm(jnp.asarray(targets, k.dtype))
    value = jnp.sqrt(krr_train_risk(k + s, targets, ridge))
    upper_den = lam_min if printed else lam_max
    return SpectralBounds(
        sigma * norm / ((1 + eta) * lam_max), value, sigma * norm * kappa / ((1 - eta) * upper_den)
    )
