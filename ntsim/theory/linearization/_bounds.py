r"""Thms 2–4 of Rahimi Afzal et al. (2025): distance to ``θ_0``, linearisation gap, the r-ball.

Notation: ``r_0 = ‖f_{θ_0}(x*) − y*‖`` (the initial residual norm), ``L = Lip(f)``,
``L_∇ = Lip(∇f)`` on a ball around ``θ_0``, ``Λ_t = ∫_0^t λ_s ds``.

Errata of the printed statements, implemented as pairs:

* Thm 2's statement has ``‖f_{θ_t}(x*) − y*‖``; the proof gives ``r_0 = ‖y(0) − y*‖``
  (:func:`thm2_bound` vs :func:`thm2_bound_printed`);
* Thm 4's statement writes ``R̃(θ_0) = r_0²`` where its derivation has ``r_0``
  (:func:`thm4_lambda_o` vs :func:`thm4_lambda_o_printed`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike
from ntsim._validation import check_nonnegative, check_positive

__all__ = [
    "thm2_bound",
    "thm2_bound_constant",
    "thm2_bound_printed",
    "thm2_integral",
    "thm3_b",
    "thm3_bound",
    "thm4_lambda_o",
    "thm4_lambda_o_printed",
    "thm4_simplified_bound",
    "thm4_stay_time",
]


def _one_minus_exp_over(lam: Array, t: Array) -> Array:
    """``(1 − e^{−λt})/λ`` with its ``λ → 0`` limit ``t`` (``expm1`` for accuracy)."""
    zero = lam == 0
    safe = jnp.where(zero, 1.0, lam)
    return jnp.where(zero, t, -jnp.expm1(-safe * t) / safe)


def thm2_integral(strengths: ArrayLike, learning_rate: ArrayLike) -> Array:
    r"""``I_k = ∫_0^{t_k} e^{−(Λ_{t_k} − Λ_s)} ds`` at ``t_k = kη``, ``k = 0..K``, exactly.

    ``λ_s`` is piecewise constant (``λ_s = strengths[j]`` on ``[jη, (j+1)η)``, the step's
    ``λ_t``), so ``I_{k+1} = e^{−λ_kη} I_k + (1 − e^{−λ_kη})/λ_k`` (Rahimi Afzal et al. 2025,
    Thm 2's integrating factor). The split-step GD distance obeys the same recursion with
    ``(1 − λ_kη) ≤ e^{−λ_kη}`` in place of the exponential, so the bound covers GD exactly.

    Returns:
      ``(K + 1,)`` with ``I_0 = 0``.
    """
    check_nonnegative("thm2_integral", "strengths", strengths)
    check_positive("thm2_integral", "learning_rate", learning_rate)
    lam = jnp.asarray(strengths)
    if lam.ndim != 1:
        raise ValueError(
            f"thm2_integral: strengths must be 1-D (one λ_t per step), got {lam.shape}."
        )
    eta = jnp.asarray(learning_rate, lam.dtype)

    def step(integral, lam_k):
        new = jnp.exp(-lam_k * eta) * integral + _one_minus_exp_over(lam_k, eta)
        return new, new

    _, rest = jax.lax.scan(step, jnp.zeros((), lam.dtype), lam)
    return jnp.concatenate([jnp.zeros((1,), lam.dtype), rest])


def thm2_bound(lip_f: ArrayLike, residual0: ArrayLike, integral: ArrayLike) -> Array:
    r"""Thm 2 (corrected): ``‖θ_t − θ_0‖ ≤ 2 Lip(f) ‖y(0) − y*‖ ∫_0^t e^{−(Λ_t − Λ_s)} ds``.

    Rahimi Afzal et al. (2025), Thm 2, with the proof's ``‖y(0) − y*‖`` (the statement's
    ``‖f_θt(x*) − y*‖`` is an erratum).
    The proof uses only ``‖J_{θ_s}‖ ≤ Lip(f)`` along the path and ``‖y(s) − y*‖ ≤ r_0``;
    pass the path maxima where monotonicity (Thm 1) is not guaranteed.
    """
    return 2 * jnp.asarray(lip_f) * jnp.asarray(residual0) * jnp.asarray(integral)


def thm2_bound_printed(lip_f: ArrayLike, residual_t: ArrayLike, integral: ArrayLike) -> Array:
    r"""Thm 2 as printed: ``2 Lip(f) ‖f_{θ_t}(x*) − y*‖ ∫_0^t e^{−(Λ_t − Λ_s)} ds``.

    The current residual ``‖y(t) − y*‖`` in place of ``r_0``: it tends to 0 as the model
    fits the data, while ``‖θ_t − θ_0‖`` does not, so the printed bound fails at late times.
    """
    return 2 * jnp.asarray(lip_f) * jnp.asarray(residual_t) * jnp.asarray(integral)


def thm2_bound_constant(
    lip_f: ArrayLike, residual0: ArrayLike, proximal: ArrayLike, t: ArrayLike
) -> Array:
    r"""Thm 2 for constant ``λ``: ``2L r_0 (1 − e^{−λt})/λ`` (``2L r_0 t`` at ``λ = 0``).

    Its plateau is ``2Lr_0/λ`` (Rahimi Afzal et al. 2025, Thm 2, corollaries).
    """
    lam = jnp.asarray(proximal)
    return 2 * jnp.asarray(lip_f) * jnp.asarray(residual0) * _one_minus_exp_over(lam, t)


def thm3_b(lip_f: ArrayLike, lip_grad: ArrayLike, residual0: ArrayLike, proximal: ArrayLike):
    r"""``b = 2Lip(f)² r_0((4/λ)Lip(∇f) r_0 + 1)`` (Rahimi Afzal et al. 2025, Thm 3)."""
    lip_f, lip_grad, r0 = (jnp.asarray(a) for a in (lip_f, lip_grad, residual0))
    return 2 * lip_f**2 * r0 * (4 / jnp.asarray(proximal) * lip_grad * r0 + 1)


def thm3_bound(
    lip_f: ArrayLike,
    lip_grad: ArrayLike,
    residual0: ArrayLike,
    proximal: ArrayLike,
    t: ArrayLike,
) -> Array:
    r"""Thm 3: ``‖f_{θ_t}(x*) − f̄_{θ̄_t}(x*)‖ ≤ b(t − (1 − e^{−λt})/λ)``.

    Rahimi Afzal et al. (2025), Thm 3 (constant ``λ``; an empirical check, since the proof
    drops the linear model's proximal term). Evaluated stably as
    ``b·t·h(λt)`` with ``h(z) = 1 − (1 − e^{−z})/z``; at ``λ = 0`` it is the finite limit
    ``4 L² L_∇ r_0² t²``.
    """
    check_nonnegative("thm3_bound", "proximal", proximal)
    check_nonnegative("thm3_bound", "t", t)
    lip_f, lip_grad, r0 = (jnp.asarray(a) for a in (lip_f, lip_grad, residual0))
    lam, t = jnp.asarray(proximal), jnp.asarray(t)
    zero = lam == 0
    safe = jnp.where(zero, 1.0, lam)
    z = safe * t
    small = z < 1e-4
    z_safe = jnp.where(small, 1.0, z)
    h = jnp.where(small, z / 2 - z**2 / 6, 1 + jnp.expm1(-z_safe) / z_safe)
    general = thm3_b(lip_f, lip_grad, r0, safe) * t * h
    limit = 4 * lip_f**2 * lip_grad * r0**2 * t**2
    return jnp.where(zero, limit, general)


def thm4_lambda_o(residual0: ArrayLike, lip_f: ArrayLike, radius: ArrayLike) -> Array:
    r"""Thm 4's threshold ``λ_o = 2‖f_{θ_0}(x*) − y*‖ Lip(f)/r`` (as derived).

    For ``λ ≥ λ_o`` the constant-``λ`` flow stays in the ``r``-ball (Thm 2 plateau ``≤ r``).
    """
    check_positive("thm4_lambda_o", "radius", radius)
    return 2 * jnp.asarray(residual0) * jnp.asarray(lip_f) / jnp.asarray(radius)


def thm4_lambda_o_printed(loss0: ArrayLike, lip_f: ArrayLike, radius: ArrayLike) -> Array:
    r"""Thm 4's threshold as printed: ``λ_o = 2R̃(θ_0) Lip(f)/r`` with ``R̃(θ_0) = r_0²``.

    Smaller than :func:`thm4_lambda_o` when ``r_0 < 1``: containment can then fail.
    """
    check_positive("thm4_lambda_o_printed", "radius", radius)
    return 2 * jnp.asarray(loss0) * jnp.asarray(lip_f) / jnp.asarray(radius)


def thm4_stay_time(proximal: ArrayLike, lambda_o: ArrayLike) -> Array:
    r"""Guaranteed time in the ball for ``λ < λ_o``: ``(1/λ) ln(1/(1 − λ/λ_o))``.

    ``+∞`` when ``λ ≥ λ_o``; ``r/(2Lr_0) = 1/λ_o`` at ``λ = 0`` (the ``λ → 0`` limit)
    (Rahimi Afzal et al. 2025, Thm 4).
    """
    check_nonnegative("thm4_stay_time", "proximal", proximal)
    check_positive("thm4_stay_time", "lambda_o", lambda_o)
    lam, lam_o = jnp.asarray(proximal), jnp.asarray(lambda_o)
    ratio = lam / lam_o
    inside = ratio < 1
    zero = lam == 0
    safe_lam = jnp.where(zero, 1.0, lam)
    finite = -jnp.log1p(-jnp.where(inside, ratio, 0.0)) / safe_lam
    return jnp.where(inside, jnp.where(zero, 1 / lam_o, finite), jnp.inf)


def thm4_simplified_bound(
    lip_f: ArrayLike, lip_grad: ArrayLike, residual0: ArrayLike, radius: ArrayLike, t: ArrayLike
) -> Array:
    r"""Thm 4 (``λ ≥ λ_o``): ``‖f_{θ_t}(x*) − f̄_{θ̄_t}(x*)‖ ≤ 2L r_0(2r L_∇ + L)·t``."""
    lip_f, lip_grad, r0 = (jnp.asarray(a) for a in (lip_f, lip_grad, residual0))
    return 2 * lip_f * r0 * (2 * jnp.asarray(radius) * lip_grad + lip_f) * jnp.asarray(t)
